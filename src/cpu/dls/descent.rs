// The descent itself, written once over the precision's types (`F`, `V3`, `Q`, `M3`) and
// its `sin_cos_`, `atan2_`, `axis_angle` and `PI_`: included by `mod.rs` for `f32` (the
// solver, with the kernels' own sin/cos/atan2) and `f64` (the reference).

/// How a joint turns: freely (no limit: its local rotation, turned by world rotation
/// vectors), about its hinge (one angle), or as a ball (a swing `w` — its rotation vector in
/// the plane across the bone, on the limit's axes `u` and `v = b × u` — then a twist `τ`
/// about the bone): the coordinates the limits bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) enum Dof {
    #[default]
    Free,
    Hinge,
    Ball,
}

/// The chain's state: per joint its coordinates (`q`: hinge angle in `x`; ball swing `x, y`
/// and twist `z`) or, for a free joint, its local rotation; and the pose they give (model
/// rotations, joint positions).
#[derive(Clone, Copy)]
pub(super) struct Pose {
    pub q: [V3; MAX_FABRIK_JOINTS],
    pub local: [Q; MAX_FABRIK_JOINTS],
    pub rot: [Q; MAX_FABRIK_JOINTS],
    pub p: [V3; MAX_FABRIK_JOINTS],
}

/// What the solve reads of each joint.
#[derive(Clone, Copy, Default)]
pub(super) struct Joint {
    pub dof: Dof,
    /// The limit ([`crate::records::limit`] bits; 0 = none), its rest local rotation, the
    /// bone's direction in the joint's frame `b` (the twist axis), the hinge or cone axis `u`
    /// (unit, across `b`), `v = b × u`, and its angles.
    pub kind: u32,
    pub rest: Q,
    pub b: V3,
    pub u: V3,
    pub v: V3,
    pub range: [F; 4],
    /// The bone in the joint's frame (not unit).
    pub bone: V3,
}

/// The whole solve from the FK pose's local rotations `local` (the first joint's relative to
/// `parent`), the chain's root at `root`: the FK pose moved into the limits, then up to
/// `starts` starts, each `iterations` steps of [`descend`], until one ends within
/// `precision`. Returns the closest end and its tip's distance to `target`.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(super) fn run(
    joints: &[Joint],
    local: &[Q],
    parent: Q,
    root: V3,
    target: V3,
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
    forward(&mut pose, joints, parent, n);
    let mut best = pose;
    let mut best_err = F::INFINITY;
    for seed in 0..starts {
        if best_err <= precision {
            break;
        }
        let mut start = pose;
        if seed > 0 {
            for i in 0..n - 1 {
                start.q[i] = spread(&joints[i], seed as F, i as F);
            }
            forward(&mut start, joints, parent, n);
        }
        let (end, err) = descend(start, joints, parent, target, damping, iterations, precision, converge, n);
        if err < best_err {
            (best, best_err) = (end, err);
        }
    }
    (best, best_err)
}

/// Start `k`'s coordinates of joint `i`, inside its limits: each coordinate at a share of
/// its range from two golden-ratio sequences over `k` and `i` (spread over the range, the
/// same on both twins); a swing within 0.7 of its cone (or of a radian without one).
pub(super) fn spread(j: &Joint, k: F, i: F) -> V3 {
    let (kind, r) = (j.kind, j.range);
    let f = (k * 0.618_034 + i * 0.381_966).fract();
    let g = (k * 0.414_214 + i * 0.732_051).fract();
    match j.dof {
        Dof::Free => V3::ZERO,
        Dof::Hinge => V3::new(r[0] + (r[1] - r[0]) * f, 0.0, 0.0),
        Dof::Ball => {
            let (a, b) = if kind & LIMIT_CONE != 0 { (r[0], r[1]) } else { (1.0, 1.0) };
            let tau = if kind & LIMIT_TWIST != 0 { r[2] + (r[3] - r[2]) * g } else { 0.0 };
            V3::new(a * (2.0 * f - 1.0) * 0.7, b * (2.0 * g - 1.0) * 0.7, tau)
        }
    }
}

/// Levenberg–Marquardt from `pose`: `iterations` steps (or until within `precision` with
/// `converge`). Returns the pose and its tip's distance to the target.
#[allow(clippy::too_many_arguments)]
pub(super) fn descend(
    mut pose: Pose,
    joints: &[Joint],
    parent_ms: Q,
    target: V3,
    mut lambda: F,
    iterations: u32,
    precision: F,
    converge: bool,
    n: usize,
) -> (Pose, F) {
    let mut err = pose.p[n - 1].distance(target);
    let mut delta = [V3::ZERO; MAX_FABRIK_JOINTS];
    let (lambda_min, lambda_max) = (lambda * 1e-4, lambda * 1e3);
    for _ in 0..iterations {
        if converge && err <= precision {
            break;
        }
        // The step; the coordinates at a bound it would push out of are held there (a
        // cone's swing slides along its rim) and the step taken again without them.
        let mut held = [[false; 3]; MAX_FABRIK_JOINTS];
        let mut rim = [V3::ZERO; MAX_FABRIK_JOINTS];
        solve_step(&pose, joints, parent_ms, target, lambda, &held, &rim, n, &mut delta);
        if hold_bounds(&pose, joints, &delta, n, &mut held, &mut rim) {
            solve_step(&pose, joints, parent_ms, target, lambda, &held, &rim, n, &mut delta);
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
        let next_err = next.p[n - 1].distance(target);
        // The damping stays within [1e-4, 1e3] × its start (A stays positive definite).
        if next_err < err {
            (pose, err) = (next, next_err);
            lambda = (lambda * 0.5).max(lambda_min);
        } else {
            lambda = (lambda * 3.0).min(lambda_max);
        }
    }
    (pose, err)
}

/// A joint's coordinates of the deviation `d` from its rest (see [`Dof`]).
pub(super) fn coordinates(j: &Joint, d: Q) -> V3 {
    let d = if d.w < 0.0 { -d } else { d };
    let (b, u) = (j.b, j.u);
    match j.dof {
        Dof::Free => V3::ZERO,
        Dof::Hinge => {
            let s = d * b;
            let (y, x) = (s.dot(u.cross(b)), s.dot(b));
            V3::new(if x * x + y * y > 1e-12 { atan2_(y, x) } else { 0.0 }, 0.0, 0.0)
        }
        Dof::Ball => {
            let along = V3::new(d.x, d.y, d.z).dot(b);
            let t = Q::from_xyzw(b.x * along, b.y * along, b.z * along, d.w);
            let twist = if t.length_squared() > 1e-12 { t.normalize() } else { Q::IDENTITY };
            let tau = 2.0 * atan2_(V3::new(twist.x, twist.y, twist.z).dot(b), twist.w);
            let swing = d * twist.conjugate();
            let sv = V3::new(swing.x, swing.y, swing.z);
            let sl = sv.length();
            let w = if sl > 0.0 { sv * (2.0 * atan2_(sl, swing.w) / sl) } else { V3::ZERO };
            V3::new(w.dot(u), w.dot(j.v), tau)
        }
    }
}

/// Coordinates moved into the joint's limits: a hinge's angle and a twist clamped, a swing
/// outside its cone scaled back onto the rim (as `limit_deviation` does); a swing or twist
/// without a limit kept within half a turn.
pub(super) fn project(j: &Joint, q: V3) -> V3 {
    let (kind, r) = (j.kind, j.range);
    match j.dof {
        Dof::Free => q,
        Dof::Hinge => V3::new(q.x.clamp(r[0], r[1]), 0.0, 0.0),
        Dof::Ball => {
            let tau = if kind & LIMIT_TWIST != 0 {
                q.z.clamp(r[2], r[3])
            } else {
                q.z - (2.0 * PI_) * (q.z * (0.5 / PI_)).round()
            };
            let (mut wu, mut wv) = (q.x, q.y);
            let e = if kind & LIMIT_CONE != 0 {
                (wu / r[0]) * (wu / r[0]) + (wv / r[1]) * (wv / r[1])
            } else {
                (wu * wu + wv * wv) / (PI_ * PI_)
            };
            if e > 1.0 {
                let k = 1.0 / e.sqrt();
                (wu, wv) = (wu * k, wv * k);
            }
            V3::new(wu, wv, tau)
        }
    }
}

/// The pose the coordinates give: model rotations and joint positions, root to tip.
#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
pub(super) fn forward(pose: &mut Pose, joints: &[Joint], parent_ms: Q, n: usize) {
    let mut parent = parent_ms;
    for i in 0..n - 1 {
        let j = &joints[i];
        let q = pose.q[i];
        let local = match j.dof {
            Dof::Free => pose.local[i],
            Dof::Hinge => j.rest * axis_angle(j.u, q.x),
            Dof::Ball => {
                let w = j.u * q.x + j.v * q.y;
                let angle = w.length();
                let swing = if angle > 0.0 { axis_angle(w / angle, angle) } else { Q::IDENTITY };
                j.rest * swing * axis_angle(j.b, q.z)
            }
        };
        let r = (parent * local).normalize();
        pose.rot[i] = r;
        pose.p[i + 1] = pose.p[i] + r * j.bone;
        parent = r;
    }
}

/// The world axes a joint's coordinates turn it about: a hinge's axis; a ball's swing axes
/// (the swing's rotation vector `w` in its parent's rest frame, through the rotation's left
/// Jacobian) and its bone; a free joint's world axes.
fn axes(pose: &Pose, j: &Joint, i: usize, parent_ms: Q) -> [V3; 3] {
    let parent = if i == 0 { parent_ms } else { pose.rot[i - 1] };
    match j.dof {
        Dof::Free => [V3::X, V3::Y, V3::Z],
        Dof::Hinge => [parent * (j.rest * j.u), V3::ZERO, V3::ZERO],
        Dof::Ball => {
            let frame = parent * j.rest;
            let w = j.u * pose.q[i].x + j.v * pose.q[i].y;
            // J_l(w)·x = x + (1 − cos θ)/θ² · w × x + (θ − sin θ)/θ³ · w × (w × x), the
            // first factor as ½ (sin(θ/2) / (θ/2))², the second by its series for small θ
            // (no cancellation either way).
            let t2 = w.length_squared();
            let t = t2.sqrt();
            let (a, b) = if t > 0.1 {
                let (half_sin, _) = sin_cos_(0.5 * t);
                let (sin, _) = sin_cos_(t);
                let h = half_sin / (0.5 * t);
                (0.5 * h * h, (t - sin) / (t2 * t))
            } else {
                (
                    0.5 - t2 * (1.0 / 24.0) + t2 * t2 * (1.0 / 720.0),
                    1.0 / 6.0 - t2 * (1.0 / 120.0) + t2 * t2 * (1.0 / 5040.0),
                )
            };
            let jl = |x: V3| x + w.cross(x) * a + w.cross(w.cross(x)) * b;
            [frame * jl(j.u), frame * jl(j.v), pose.rot[i] * j.b]
        }
    }
}

/// The damped least-squares step toward `target`, per joint: the change of its coordinates
/// (a free joint: a world rotation vector). Coordinates `held` take no part; a swing on its
/// cone's rim (`rim`: the rim's direction in the swing's coordinates) moves along it only.
#[allow(clippy::too_many_arguments)]
fn solve_step(
    pose: &Pose,
    joints: &[Joint],
    parent_ms: Q,
    target: V3,
    lambda: F,
    held: &[[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &[V3; MAX_FABRIK_JOINTS],
    n: usize,
    delta: &mut [V3; MAX_FABRIK_JOINTS],
) {
    let tip = pose.p[n - 1];
    let e = target - tip;
    // The columns of J (axis × r) for every coordinate that moves, summed as J Jᵀ.
    let mut cols = [[V3::ZERO; 3]; MAX_FABRIK_JOINTS];
    let mut a = M3::from_diagonal(V3::splat(lambda * lambda));
    for i in 0..n - 1 {
        let r = tip - pose.p[i];
        let j = &joints[i];
        if j.dof == Dof::Free {
            a += M3::from_diagonal(V3::splat(r.length_squared())) - outer(r, r);
            continue;
        }
        let ax = axes(pose, j, i, parent_ms);
        let mut c = [ax[0].cross(r), ax[1].cross(r), ax[2].cross(r)];
        if rim[i] != V3::ZERO {
            // Along the rim: one swing column, the other none.
            c[0] = c[0] * rim[i].x + c[1] * rim[i].y;
            c[1] = V3::ZERO;
        }
        for k in 0..3 {
            if held[i][k] {
                c[k] = V3::ZERO;
            }
            a += outer(c[k], c[k]);
        }
        cols[i] = c;
    }
    let y = solve_spd(a, e);
    for i in 0..n - 1 {
        let r = tip - pose.p[i];
        delta[i] = match joints[i].dof {
            Dof::Free => r.cross(y),
            _ => {
                let c = cols[i];
                let d = V3::new(c[0].dot(y), c[1].dot(y), c[2].dot(y));
                if rim[i] != V3::ZERO {
                    V3::new(rim[i].x * d.x, rim[i].y * d.x, d.z)
                } else {
                    d
                }
            }
        };
    }
}

/// The coordinates the step `delta` would push out of their limits (a hinge angle or twist
/// at a bound, a swing on its cone's rim moving outward): held, or moved along the rim.
/// Returns whether any was.
fn hold_bounds(
    pose: &Pose,
    joints: &[Joint],
    delta: &[V3; MAX_FABRIK_JOINTS],
    n: usize,
    held: &mut [[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &mut [V3; MAX_FABRIK_JOINTS],
) -> bool {
    const AT: F = 1e-5;
    let mut any = false;
    for i in 0..n - 1 {
        let j = &joints[i];
        let (kind, r, q, d) = (j.kind, j.range, pose.q[i], delta[i]);
        match j.dof {
            Dof::Free => {}
            Dof::Hinge => {
                if (q.x <= r[0] + AT && d.x < 0.0) || (q.x >= r[1] - AT && d.x > 0.0) {
                    held[i][0] = true;
                    any = true;
                }
            }
            Dof::Ball => {
                if kind & LIMIT_TWIST != 0 && ((q.z <= r[2] + AT && d.z < 0.0) || (q.z >= r[3] - AT && d.z > 0.0)) {
                    held[i][2] = true;
                    any = true;
                }
                if kind & LIMIT_CONE != 0 {
                    let e = (q.x / r[0]) * (q.x / r[0]) + (q.y / r[1]) * (q.y / r[1]);
                    let normal = V3::new(q.x / (r[0] * r[0]), q.y / (r[1] * r[1]), 0.0);
                    if e >= 1.0 - AT && normal.x * d.x + normal.y * d.y > 0.0 {
                        rim[i] = V3::new(-normal.y, normal.x, 0.0).normalize_or_zero();
                        any = true;
                    }
                }
            }
        }
    }
    any
}

/// `A⁻¹ e` for a symmetric positive definite `A` (Cholesky).
fn solve_spd(a: M3, e: V3) -> V3 {
    let (a00, a01, a02, a11, a12, a22) = (a.x_axis.x, a.y_axis.x, a.z_axis.x, a.y_axis.y, a.z_axis.y, a.z_axis.z);
    let l00 = a00.sqrt();
    let (l10, l20) = (a01 / l00, a02 / l00);
    let l11 = (a11 - l10 * l10).sqrt();
    let l21 = (a12 - l20 * l10) / l11;
    let l22 = (a22 - l20 * l20 - l21 * l21).sqrt();
    let z0 = e.x / l00;
    let z1 = (e.y - l10 * z0) / l11;
    let z2 = (e.z - l20 * z0 - l21 * z1) / l22;
    let y2 = z2 / l22;
    let y1 = (z1 - l21 * y2) / l11;
    let y0 = (z0 - l10 * y1 - l20 * y2) / l00;
    V3::new(y0, y1, y2)
}

/// `u vᵀ`.
fn outer(u: V3, v: V3) -> M3 {
    M3::from_cols(u * v.x, u * v.y, u * v.z)
}
