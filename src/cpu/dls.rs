//! Damped least squares (Levenberg–Marquardt with adaptive damping) on a limited chain: the
//! Jacobian family of IK (Unreal's full-body IK, every robotics IK library), here on the
//! limited-chain record CCD and constrained FABRIK solve ([`CcdChain`]).
//!
//! Each iteration linearises the tip's position in every joint's rotation, `J`, and takes
//! the damped least-squares step `Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ e` toward the target (`e` the tip's
//! error). `J Jᵀ` is 3 × 3 and built without `J`: a ball joint at `p` adds
//! `|r|² I − r rᵀ` (`r` = tip − `p`), a hinge about `a` adds `(a × r)(a × r)ᵀ`; the step of a
//! ball joint is then `r × y` and of a hinge `a ((a × r) · y)` with `y` the solve's
//! result. The step is taken root to tip, each joint's new rotation moved into its limit
//! (so the limits hold after every iteration), and kept only if the tip came closer: then
//! `λ` halves, else the step is dropped and `λ` triples (Levenberg–Marquardt's trust
//! region). An unreachable target ends at the pose closest to it without oscillating (a
//! step that does not improve is never taken).

use glam::{Mat3, Quat, Vec3};

use super::chain::finish_chain;
use super::constrained_fabrik::{checked, solve_limited};
use super::fabrik::FabrikMode;
use super::limits::Limit;
use super::math::{atan2, quat_from_axis_angle, sin_cos};
use crate::constants::{LIMIT_CONE, LIMIT_HINGE, LIMIT_TWIST, PI};
use crate::error::ChainError;
use crate::records::{info, option, v3, CcdChain, FabrikSolved, Options, MAX_FABRIK_JOINTS};

/// The option bits a damped-least-squares chain may set.
pub(crate) const OPTIONS: u32 = option::FABRIK;

/// The damping at the start, as a share of the chain's length.
const DAMPING_START: f32 = 0.1;

/// How many starts: the FK pose moved into the limits, then poses spread inside the limits
/// ([`spread`]); each runs the chain's iterations until one ends within the precision, and
/// the closest end is kept (limits make the problem non-convex: a start can end in a pose
/// from which no small step comes closer).
const STARTS: u32 = 8;

/// Solves one limited chain by damped least squares with exactly
/// [`FabrikChain::iterations`](crate::records::FabrikChain::iterations); an invalid chain
/// gets a flagged FK fallback.
pub fn dls(chain: &CcdChain, out: &mut FabrikSolved) {
    solve_limited(chain, out, |c, o| solve(c, FabrikMode::Fixed, o));
}

/// How a joint turns: freely (no limit: its local rotation, turned by world rotation
/// vectors), about its hinge (one angle), or as a ball (a swing `w` — its rotation vector in
/// the plane across the bone, on the limit's axes `u` and `v = b × u` — then a twist `τ`
/// about the bone): the coordinates the limits bound.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dof {
    Free,
    Hinge,
    Ball,
}

/// The chain's state: per joint its coordinates (`q`: hinge angle in `x`; ball swing `x, y`
/// and twist `z`) or, for a free joint, its local rotation; and the pose they give (model
/// rotations, joint positions).
#[derive(Clone, Copy)]
struct Pose {
    q: [Vec3; MAX_FABRIK_JOINTS],
    local: [Quat; MAX_FABRIK_JOINTS],
    rot: [Quat; MAX_FABRIK_JOINTS],
    p: [Vec3; MAX_FABRIK_JOINTS],
}

/// What the solve reads of each joint.
#[derive(Clone, Copy, Default)]
struct Joint {
    dof: Option<Dof>,
    limit: Limit,
    /// `v = b × u`.
    v: Vec3,
    /// The bone in the joint's frame (not unit).
    bone: Vec3,
}

impl Joint {
    fn dof(&self) -> Dof {
        self.dof.unwrap_or(Dof::Free)
    }
}

#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
fn solve(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    let (n, total) = (s.n, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        super::chain::write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let target = v3(ch.target_ms);
    let parent_ms = Quat::from_array(chain.limits.parent_ms);
    let mut joints = [Joint::default(); MAX_FABRIK_JOINTS];
    let mut fk = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut pose = Pose {
        q: [Vec3::ZERO; MAX_FABRIK_JOINTS],
        local: [Quat::IDENTITY; MAX_FABRIK_JOINTS],
        rot: [Quat::IDENTITY; MAX_FABRIK_JOINTS],
        p: [Vec3::ZERO; MAX_FABRIK_JOINTS],
    };
    pose.p[0] = v3(ch.joints_ms[0]);
    let mut parent = parent_ms;
    for i in 0..n {
        fk[i] = Quat::from_array(ch.rotations_ms[i]);
        if i + 1 == n {
            break;
        }
        let l = limits[i];
        let local = (parent.conjugate() * fk[i]).normalize();
        let dof = match l.kind {
            0 => Dof::Free,
            LIMIT_HINGE => Dof::Hinge,
            _ => Dof::Ball,
        };
        joints[i] = Joint {
            dof: Some(dof),
            limit: l,
            v: l.bone.cross(l.u),
            bone: fk[i].conjugate() * (v3(ch.joints_ms[i + 1]) - v3(ch.joints_ms[i])),
        };
        // The FK pose's coordinates, moved into the limits (a pose outside them is no start).
        let d = l.rest.conjugate() * local;
        pose.local[i] = local;
        pose.q[i] = project(&joints[i], coordinates(&joints[i], d));
        parent = fk[i];
    }
    forward(&mut pose, &joints, parent_ms, n);
    let iterations = ch.iterations();
    let mut best = pose;
    let mut best_err = f32::INFINITY;
    for seed in 0..STARTS {
        if best_err <= precision {
            break;
        }
        let mut start = pose;
        if seed > 0 {
            // Another start inside the limits: every coordinate at a fixed share of its range.
            for i in 0..n - 1 {
                start.q[i] = spread(&joints[i], seed as f32, i as f32);
            }
            forward(&mut start, &joints, parent_ms, n);
        }
        let (end, err) =
            descend(start, &joints, parent_ms, target, DAMPING_START * total, iterations, precision, mode, n);
        if err < best_err {
            (best, best_err) = (end, err);
        }
    }
    let (pose, err) = (best, best_err);
    let reached = err <= precision;
    let flags = if (target - v3(ch.joints_ms[0])).length() >= total { info::OUT_OF_REACH } else { 0 };
    // Relative deltas: D_i = R'_i · R_i⁻¹, E_i = D_{i−1}⁻¹ · D_i.
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut parent_delta = Quat::IDENTITY;
    for i in 0..n - 1 {
        let delta = (pose.rot[i] * fk[i].conjugate()).normalize();
        rel[i] = (parent_delta.conjugate() * delta).normalize();
        parent_delta = delta;
    }
    rel[n - 1] = if ch.has_option(option::KEEP_END_ROTATION) { parent_delta.conjugate() } else { Quat::IDENTITY };
    finish_chain(&ch.joints_ms, &ch.rotations_ms, &rel, &[1.0; MAX_FABRIK_JOINTS], n, weight, reached, flags, out);
    Ok(())
}

/// Start `k`'s coordinates of joint `i`, inside its limits: each coordinate at a share of
/// its range from two golden-ratio sequences over `k` and `i` (spread over the range, the
/// same on both twins); a swing within 0.7 of its cone (or of a radian without one).
fn spread(j: &Joint, k: f32, i: f32) -> Vec3 {
    let (kind, r) = (j.limit.kind, j.limit.range);
    let f = (k * 0.618_034 + i * 0.381_966).fract();
    let g = (k * 0.414_214 + i * 0.732_051).fract();
    match j.dof() {
        Dof::Free => Vec3::ZERO,
        Dof::Hinge => Vec3::new(r[0] + (r[1] - r[0]) * f, 0.0, 0.0),
        Dof::Ball => {
            let (a, b) = if kind & LIMIT_CONE != 0 { (r[0], r[1]) } else { (1.0, 1.0) };
            let tau = if kind & LIMIT_TWIST != 0 { r[2] + (r[3] - r[2]) * g } else { 0.0 };
            Vec3::new(a * (2.0 * f - 1.0) * 0.7, b * (2.0 * g - 1.0) * 0.7, tau)
        }
    }
}

/// Levenberg–Marquardt from `pose`: `iterations` steps (or until within `precision` in
/// converge mode). Returns the best pose and its tip's distance to the target.
#[allow(clippy::too_many_arguments)]
fn descend(
    mut pose: Pose,
    joints: &[Joint],
    parent_ms: Quat,
    target: Vec3,
    mut lambda: f32,
    iterations: u32,
    precision: f32,
    mode: FabrikMode,
    n: usize,
) -> (Pose, f32) {
    let mut err = pose.p[n - 1].distance(target);
    let mut delta = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    let (lambda_min, lambda_max) = (lambda * 1e-4, lambda * 1e3);
    for _ in 0..iterations {
        if mode == FabrikMode::Converge && err <= precision {
            break;
        }
        // The step; the coordinates at a bound it would push out of are held there (a
        // cone's swing slides along its rim) and the step taken again without them.
        let mut held = [[false; 3]; MAX_FABRIK_JOINTS];
        let mut rim = [Vec3::ZERO; MAX_FABRIK_JOINTS];
        solve_step(&pose, joints, parent_ms, target, lambda, &held, &rim, n, &mut delta);
        if hold_bounds(&pose, joints, &delta, n, &mut held, &mut rim) {
            solve_step(&pose, joints, parent_ms, target, lambda, &held, &rim, n, &mut delta);
        }
        let mut next = pose;
        for i in 0..n - 1 {
            match joints[i].dof() {
                Dof::Free => {
                    let w = delta[i];
                    let angle = w.length();
                    if angle > 0.0 {
                        // The world turn seen from the parent: L' = P⁻¹ · exp(ω) · P · L.
                        let p = if i == 0 { parent_ms } else { pose.rot[i - 1] };
                        let turn = quat_from_axis_angle(w / angle, angle);
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
fn coordinates(j: &Joint, d: Quat) -> Vec3 {
    let d = if d.w < 0.0 { -d } else { d };
    let (b, u) = (j.limit.bone, j.limit.u);
    match j.dof() {
        Dof::Free => Vec3::ZERO,
        Dof::Hinge => {
            let s = d * b;
            let (y, x) = (s.dot(u.cross(b)), s.dot(b));
            Vec3::new(if x * x + y * y > 1e-12 { atan2(y, x) } else { 0.0 }, 0.0, 0.0)
        }
        Dof::Ball => {
            let along = Vec3::new(d.x, d.y, d.z).dot(b);
            let t = Quat::from_xyzw(b.x * along, b.y * along, b.z * along, d.w);
            let twist = if t.length_squared() > 1e-12 { t.normalize() } else { Quat::IDENTITY };
            let tau = 2.0 * atan2(Vec3::new(twist.x, twist.y, twist.z).dot(b), twist.w);
            let swing = d * twist.conjugate();
            let sv = Vec3::new(swing.x, swing.y, swing.z);
            let sl = sv.length();
            let w = if sl > 0.0 { sv * (2.0 * atan2(sl, swing.w) / sl) } else { Vec3::ZERO };
            Vec3::new(w.dot(u), w.dot(j.v), tau)
        }
    }
}

/// Coordinates moved into the joint's limits: a hinge's angle and a twist clamped, a swing
/// outside its cone scaled back onto the rim (as `limit_deviation` does); a swing or twist
/// without a limit kept within half a turn.
fn project(j: &Joint, q: Vec3) -> Vec3 {
    let (kind, r) = (j.limit.kind, j.limit.range);
    match j.dof() {
        Dof::Free => q,
        Dof::Hinge => Vec3::new(q.x.clamp(r[0], r[1]), 0.0, 0.0),
        Dof::Ball => {
            let tau = if kind & LIMIT_TWIST != 0 {
                q.z.clamp(r[2], r[3])
            } else {
                q.z - (2.0 * PI) * (q.z * (0.5 / PI)).round()
            };
            let (mut wu, mut wv) = (q.x, q.y);
            let e = if kind & LIMIT_CONE != 0 {
                (wu / r[0]) * (wu / r[0]) + (wv / r[1]) * (wv / r[1])
            } else {
                (wu * wu + wv * wv) / (PI * PI)
            };
            if e > 1.0 {
                let k = 1.0 / e.sqrt();
                (wu, wv) = (wu * k, wv * k);
            }
            Vec3::new(wu, wv, tau)
        }
    }
}

/// The pose the coordinates give: model rotations and joint positions, root to tip.
#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
fn forward(pose: &mut Pose, joints: &[Joint], parent_ms: Quat, n: usize) {
    let mut parent = parent_ms;
    for i in 0..n - 1 {
        let j = &joints[i];
        let q = pose.q[i];
        let local = match j.dof() {
            Dof::Free => pose.local[i],
            Dof::Hinge => j.limit.rest * quat_from_axis_angle(j.limit.u, q.x),
            Dof::Ball => {
                let w = j.limit.u * q.x + j.v * q.y;
                let angle = w.length();
                let swing = if angle > 0.0 { quat_from_axis_angle(w / angle, angle) } else { Quat::IDENTITY };
                j.limit.rest * swing * quat_from_axis_angle(j.limit.bone, q.z)
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
fn axes(pose: &Pose, j: &Joint, i: usize, parent_ms: Quat) -> [Vec3; 3] {
    let parent = if i == 0 { parent_ms } else { pose.rot[i - 1] };
    match j.dof() {
        Dof::Free => [Vec3::X, Vec3::Y, Vec3::Z],
        Dof::Hinge => [parent * (j.limit.rest * j.limit.u), Vec3::ZERO, Vec3::ZERO],
        Dof::Ball => {
            let frame = parent * j.limit.rest;
            let w = j.limit.u * pose.q[i].x + j.v * pose.q[i].y;
            // J_l(w)·x = x + (1 − cos θ)/θ² · w × x + (θ − sin θ)/θ³ · w × (w × x), the
            // first factor as ½ (sin(θ/2) / (θ/2))², the second by its series for small θ
            // (no cancellation either way).
            let t2 = w.length_squared();
            let t = t2.sqrt();
            let (a, b) = if t > 0.1 {
                let (half_sin, _) = sin_cos(0.5 * t);
                let (sin, _) = sin_cos(t);
                let h = half_sin / (0.5 * t);
                (0.5 * h * h, (t - sin) / (t2 * t))
            } else {
                (
                    0.5 - t2 * (1.0 / 24.0) + t2 * t2 * (1.0 / 720.0),
                    1.0 / 6.0 - t2 * (1.0 / 120.0) + t2 * t2 * (1.0 / 5040.0),
                )
            };
            let jl = |x: Vec3| x + w.cross(x) * a + w.cross(w.cross(x)) * b;
            [frame * jl(j.limit.u), frame * jl(j.v), pose.rot[i] * j.limit.bone]
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
    parent_ms: Quat,
    target: Vec3,
    lambda: f32,
    held: &[[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &[Vec3; MAX_FABRIK_JOINTS],
    n: usize,
    delta: &mut [Vec3; MAX_FABRIK_JOINTS],
) {
    let tip = pose.p[n - 1];
    let e = target - tip;
    // The columns of J (axis × r) for every coordinate that moves, summed as J Jᵀ.
    let mut cols = [[Vec3::ZERO; 3]; MAX_FABRIK_JOINTS];
    let mut a = Mat3::from_diagonal(Vec3::splat(lambda * lambda));
    for i in 0..n - 1 {
        let r = tip - pose.p[i];
        let j = &joints[i];
        if j.dof() == Dof::Free {
            a += Mat3::from_diagonal(Vec3::splat(r.length_squared())) - outer(r, r);
            continue;
        }
        let ax = axes(pose, j, i, parent_ms);
        let mut c = [ax[0].cross(r), ax[1].cross(r), ax[2].cross(r)];
        if rim[i] != Vec3::ZERO {
            // Along the rim: one swing column, the other none.
            c[0] = c[0] * rim[i].x + c[1] * rim[i].y;
            c[1] = Vec3::ZERO;
        }
        for k in 0..3 {
            if held[i][k] {
                c[k] = Vec3::ZERO;
            }
            a += outer(c[k], c[k]);
        }
        cols[i] = c;
    }
    let y = solve_spd(a, e);
    for i in 0..n - 1 {
        let r = tip - pose.p[i];
        delta[i] = match joints[i].dof() {
            Dof::Free => r.cross(y),
            _ => {
                let c = cols[i];
                let d = Vec3::new(c[0].dot(y), c[1].dot(y), c[2].dot(y));
                if rim[i] != Vec3::ZERO {
                    Vec3::new(rim[i].x * d.x, rim[i].y * d.x, d.z)
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
    delta: &[Vec3; MAX_FABRIK_JOINTS],
    n: usize,
    held: &mut [[bool; 3]; MAX_FABRIK_JOINTS],
    rim: &mut [Vec3; MAX_FABRIK_JOINTS],
) -> bool {
    const AT: f32 = 1e-5;
    let mut any = false;
    for i in 0..n - 1 {
        let j = &joints[i];
        let (kind, r, q, d) = (j.limit.kind, j.limit.range, pose.q[i], delta[i]);
        match j.dof() {
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
                    let normal = Vec3::new(q.x / (r[0] * r[0]), q.y / (r[1] * r[1]), 0.0);
                    if e >= 1.0 - AT && normal.x * d.x + normal.y * d.y > 0.0 {
                        rim[i] = Vec3::new(-normal.y, normal.x, 0.0).normalize_or_zero();
                        any = true;
                    }
                }
            }
        }
    }
    any
}

/// `A⁻¹ e` for a symmetric positive definite `A` (Cholesky).
fn solve_spd(a: Mat3, e: Vec3) -> Vec3 {
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
    Vec3::new(y0, y1, y2)
}

/// `u vᵀ`.
fn outer(u: Vec3, v: Vec3) -> Mat3 {
    Mat3::from_cols(u * v.x, u * v.y, u * v.z)
}
