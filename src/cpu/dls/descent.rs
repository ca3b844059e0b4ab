// The descent itself, written once over the precision's types (`F`, `V3`, `Q`, `M3`) and
// its `sin_cos_`, `atan2_`, `axis_angle` and `PI_`: included by `mod.rs` for `f32` (the
// solver, with the kernels' own sin/cos/atan2) and `f64` (the reference).

/// The chain's state: per joint its coordinates (`q`: hinge angle in `x`; ball swing `x, y`
/// and twist `z`) or, for a free joint, its local rotation; and the pose they give (model
/// rotations, joint positions).
#[derive(Clone, Copy)]
pub(crate) struct Pose {
    pub q: [V3; MAX_FABRIK_JOINTS],
    pub local: [Q; MAX_FABRIK_JOINTS],
    pub rot: [Q; MAX_FABRIK_JOINTS],
    pub p: [V3; MAX_FABRIK_JOINTS],
}

/// What the solve aims at: the end's position `target`; with `w > 0` also the model
/// rotation `orient` of the last joint that turns (so the end, which follows it, ends with
/// the record's orientation), an angle of one radian counting as `w` of distance; and per
/// joint the scale `d = 1 − stiffness` of its coordinates (its steps scale by `d²`).
#[derive(Clone, Copy)]
pub(crate) struct Goal {
    pub target: V3,
    pub orient: Q,
    pub w: F,
    pub d: [F; MAX_FABRIK_JOINTS],
    /// The least error any pose has: how far the target lies beyond the chain's reach.
    pub floor: F,
}

/// The residual: the end's offset to the target and, with an orientation, `w` times the
/// rotation vector that turns the last moving joint onto its target rotation.
pub(crate) fn residual(pose: &Pose, goal: &Goal, n: usize) -> (V3, V3) {
    let e_p = goal.target - pose.p[n - 1];
    if goal.w <= 0.0 {
        return (e_p, V3::ZERO);
    }
    let q = goal.orient * pose.rot[n - 2].conjugate();
    let q = if q.w < 0.0 { -q } else { q };
    let v = V3::new(q.x, q.y, q.z);
    let s = v.length();
    let e_o = if s > 0.0 { v * (goal.w * 2.0 * atan2_(s, q.w) / s) } else { V3::ZERO };
    (e_p, e_o)
}

/// The residual's length: `√(|e_p|² + |e_o|²)`.
pub(crate) fn error_of(pose: &Pose, goal: &Goal, n: usize) -> F {
    let (e_p, e_o) = residual(pose, goal, n);
    (e_p.length_squared() + e_o.length_squared()).sqrt()
}

/// The whole solve from the FK pose's local rotations `local` (the first joint's relative to
/// `parent`), the chain's root at `root`: the FK pose moved into the limits, then up to
/// `starts` starts, each `iterations` steps of [`descend`], until one ends within
/// `precision` (a joint of stiffness `s` starts each start `1 − s` of the way from its FK
/// coordinates to the spread ones).
/// Returns the closest end and its error ([`error_of`]).
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(crate) fn run(
    joints: &[Joint],
    local: &[Q],
    parent: Q,
    root: V3,
    goal: &Goal,
    damping: F,
    (starts, iterations, precision, converge): (u32, u32, F, bool),
    n: usize,
) -> (Pose, F) {
    let mut pose = Pose {
        q: [V3::ZERO; MAX_FABRIK_JOINTS],
        local: [Q::IDENTITY; MAX_FABRIK_JOINTS],
        rot: [Q::IDENTITY; MAX_FABRIK_JOINTS],
        p: [V3::ZERO; MAX_FABRIK_JOINTS],
    };
    pose.p[0] = root;
    for i in 0..n - 1 {
        // The FK pose's coordinates, moved into the limits (a pose outside them is no start).
        pose.local[i] = local[i];
        pose.q[i] = project(&joints[i], coordinates(&joints[i], joints[i].rest.conjugate() * local[i]));
    }
    let base = pose;
    let mut best = pose;
    let mut best_err = F::INFINITY;
    for seed in 0..starts {
        // No start can end closer than `floor`: one within the precision of it ends the solve.
        if best_err <= precision + goal.floor {
            break;
        }
        let mut start = base;
        if seed > 0 {
            for i in 0..n - 1 {
                // A stiff joint starts only part of the way from its FK coordinates.
                let d = goal.d[i];
                let to = spread(&joints[i], seed as F, i as F);
                start.q[i] = if d >= 1.0 {
                    to
                } else if d > 0.0 {
                    base.q[i] + (to - base.q[i]) * d
                } else {
                    base.q[i]
                };
            }
        }
        forward(&mut start, joints, parent, n);
        let (end, err) = descend(start, joints, parent, goal, damping, iterations, precision, converge, n);
        // A later start is kept only when clearly closer: starts that end equally close
        // (the closest poses of an unreachable target) keep the first.
        if err < best_err * (1.0 - START_MARGIN) {
            (best, best_err) = (end, err);
        }
    }
    (best, best_err)
}

/// Levenberg–Marquardt from `pose`: up to `iterations` steps, ending after `STALL` steps in
/// a row that came no closer (or within `precision` with `converge`). Returns the pose and
/// its error ([`error_of`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn descend(
    mut pose: Pose,
    joints: &[Joint],
    parent_ms: Q,
    goal: &Goal,
    mut lambda: F,
    iterations: u32,
    precision: F,
    converge: bool,
    n: usize,
) -> (Pose, F) {
    let mut err = error_of(&pose, goal, n);
    let mut delta = [V3::ZERO; MAX_FABRIK_JOINTS];
    let (lambda_min, lambda_max) = (lambda * crate::constants::DLS_DAMPING_MIN as F, lambda * 1e3);
    let mut rejected = 0;
    for _ in 0..iterations {
        // A start ends within the precision (with `converge`), or once `STALL` steps in a row
        // came no closer (the damping 3⁴ times up: a minimum the start cannot leave).
        if (converge && err <= precision) || rejected >= STALL {
            break;
        }
        // The step; the coordinates at a bound it would push out of are held there (a
        // cone's swing slides along its rim) and the step taken again without them.
        let mut held = [[false; 3]; MAX_FABRIK_JOINTS];
        let mut rim = [V3::ZERO; MAX_FABRIK_JOINTS];
        // The damping is at least a share of the error (λ² ∝ |e|², as Yamashita and
        // Fukushima's Levenberg–Marquardt): it vanishes as a reachable target is reached,
        // and stays up where an unreachable one keeps the error (a chain stretched toward
        // it has a near-singular Jacobian, and a small λ would turn rounding into steps).
        let damping = lambda.max(err * ERROR_DAMPING);
        for pass in 0..2 {
            solve_step(&pose, joints, parent_ms, goal, damping, &held, &rim, n, &mut delta);
            if pass == 0 && !hold_bounds(&pose, joints, &delta, n, &mut held, &mut rim) {
                break;
            }
        }
        let mut next = pose;
        for i in 0..n - 1 {
            match joints[i].dof {
                Dof::Free => {
                    let w = delta[i];
                    let angle = w.length();
                    if angle > 0.0 {
                        // The world turn seen from the parent: L' = P⁻¹ · exp(ω) · P · L.
                        let p = if i == 0 { parent_ms } else { pose.rot[i - 1] };
                        let turn = axis_angle(w / angle, angle);
                        next.local[i] = (p.conjugate() * turn * p * pose.local[i]).normalize();
                    }
                }
                _ => next.q[i] = project(&joints[i], pose.q[i] + delta[i]),
            }
        }
        forward(&mut next, joints, parent_ms, n);
        let next_err = error_of(&next, goal, n);
        // The damping stays within [1e-4, 1e3] × its start (A stays positive definite).
        if next_err < err * (1.0 - STEP_MARGIN) {
            (pose, err) = (next, next_err);
            lambda = (lambda * 0.5).max(lambda_min);
            rejected = 0;
        } else {
            lambda = (lambda * 3.0).min(lambda_max);
            rejected += 1;
        }
    }
    (pose, err)
}

/// The pose the coordinates give: model rotations and joint positions, root to tip.
#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
pub(crate) fn forward(pose: &mut Pose, joints: &[Joint], parent_ms: Q, n: usize) {
    let mut parent = parent_ms;
    for i in 0..n - 1 {
        let j = &joints[i];
        let r = (parent * local_of(j, pose.q[i], pose.local[i])).normalize();
        pose.rot[i] = r;
        pose.p[i + 1] = pose.p[i] + r * j.bone;
        parent = r;
    }
}

/// The damped least-squares step toward the goal, per joint: the change of its coordinates
/// (a free joint: a world rotation vector). Coordinates `held` take no part; a swing on its
/// cone's rim (`rim`: the rim's direction in the swing's coordinates) moves along it only.
///
/// `J Jᵀ + λ² I` is built from each coordinate's columns, its world axis `a` giving the
/// position's `a × r` and the orientation's `w a`, scaled by the joint's `d`: the position
/// block `P`, the coupling `C` and the orientation block `O` (3 × 3 each), solved by blocks
/// (`P` alone without an orientation).
#[allow(clippy::too_many_arguments)]
fn solve_step(
    pose: &Pose,
    joints: &[Joint],
    parent_ms: Q,
    goal: &Goal,
    lambda: F,
    held: &[[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &[V3; MAX_FABRIK_JOINTS],
    n: usize,
    delta: &mut [V3; MAX_FABRIK_JOINTS],
) {
    let tip = pose.p[n - 1];
    let (e_p, e_o) = residual(pose, goal, n);
    let w = goal.w;
    let orient = w > 0.0;
    // The position columns (axis × r) and the axes of every coordinate that moves.
    let mut cols = [[V3::ZERO; 3]; MAX_FABRIK_JOINTS];
    let mut axs = [[V3::ZERO; 3]; MAX_FABRIK_JOINTS];
    let damp = M3::from_diagonal(V3::splat(lambda * lambda));
    let (mut p, mut c, mut o) = (damp, M3::ZERO, damp);
    for i in 0..n - 1 {
        let r = tip - pose.p[i];
        let j = &joints[i];
        let d2 = goal.d[i] * goal.d[i];
        if d2 == 0.0 {
            continue;
        }
        if j.dof == Dof::Free {
            p += (M3::from_diagonal(V3::splat(r.length_squared())) - outer(r, r)) * d2;
            if orient {
                // Σ (e_k × r)(w e_k)ᵀ = −w [r]ₓ; Σ (w e_k)(w e_k)ᵀ = w² I.
                c += cross_matrix(r) * (-w * d2);
                o += M3::from_diagonal(V3::splat(w * w * d2));
            }
            continue;
        }
        let parent = if i == 0 { parent_ms } else { pose.rot[i - 1] };
        let mut ax = axes(j, parent, pose.rot[i], pose.q[i]);
        if rim[i] != V3::ZERO {
            // Along the rim: one swing axis, the other none.
            ax[0] = ax[0] * rim[i].x + ax[1] * rim[i].y;
            ax[1] = V3::ZERO;
        }
        for k in 0..3 {
            if held[i][k] {
                ax[k] = V3::ZERO;
            }
            let col = ax[k].cross(r);
            p += outer(col, col) * d2;
            if orient {
                c += outer(col, ax[k] * w) * d2;
                o += outer(ax[k] * w, ax[k] * w) * d2;
            }
            cols[i][k] = col;
        }
        axs[i] = ax;
    }
    let (y_p, y_o) = if orient { solve_blocks(p, c, o, e_p, e_o) } else { (solve_spd(p, e_p), V3::ZERO) };
    for i in 0..n - 1 {
        let d2 = goal.d[i] * goal.d[i];
        let r = tip - pose.p[i];
        delta[i] = match joints[i].dof {
            _ if d2 == 0.0 => V3::ZERO,
            Dof::Free => (r.cross(y_p) + y_o * w) * d2,
            _ => {
                let (cl, ax) = (cols[i], axs[i]);
                let mut s = V3::new(cl[0].dot(y_p), cl[1].dot(y_p), cl[2].dot(y_p));
                if orient {
                    s += V3::new(ax[0].dot(y_o), ax[1].dot(y_o), ax[2].dot(y_o)) * w;
                }
                let s = s * d2;
                if rim[i] != V3::ZERO {
                    V3::new(rim[i].x * s.x, rim[i].y * s.x, s.z)
                } else {
                    s
                }
            }
        };
    }
}

/// The block solve of `[P C; Cᵀ O] [y_p; y_o] = [e_p; e_o]` (symmetric positive
/// definite): `X = P⁻¹ C`, the Schur complement `S = O − Cᵀ X`, `y_o = S⁻¹ (e_o − Xᵀ e_p)`,
/// `y_p = P⁻¹ (e_p − C y_o)`.
fn solve_blocks(p: M3, c: M3, o: M3, e_p: V3, e_o: V3) -> (V3, V3) {
    let x = [solve_spd(p, c.x_axis), solve_spd(p, c.y_axis), solve_spd(p, c.z_axis)];
    let tdot = |m: M3, v: V3| V3::new(m.x_axis.dot(v), m.y_axis.dot(v), m.z_axis.dot(v));
    let s = M3::from_cols(o.x_axis - tdot(c, x[0]), o.y_axis - tdot(c, x[1]), o.z_axis - tdot(c, x[2]));
    let rhs = e_o - V3::new(x[0].dot(e_p), x[1].dot(e_p), x[2].dot(e_p));
    let y_o = solve_spd(s, rhs);
    let cy = c.x_axis * y_o.x + c.y_axis * y_o.y + c.z_axis * y_o.z;
    (solve_spd(p, e_p - cy), y_o)
}

/// The coordinates the step `delta` would push out of their limits (see [`hold_joint`]).
/// Returns whether any was.
fn hold_bounds(
    pose: &Pose,
    joints: &[Joint],
    delta: &[V3; MAX_FABRIK_JOINTS],
    n: usize,
    held: &mut [[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &mut [V3; MAX_FABRIK_JOINTS],
) -> bool {
    let mut any = false;
    for i in 0..n - 1 {
        any |= hold_joint(&joints[i], pose.q[i], delta[i], &mut held[i], &mut rim[i]);
    }
    any
}

