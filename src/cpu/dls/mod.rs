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

use glam::{DQuat, DVec3, Quat, Vec3};

use super::chain::finish_rotations;
use super::constrained_fabrik::{checked, solve_limited};
use super::fabrik::FabrikMode;
use super::limits::Limit;
use crate::constants::LIMIT_HINGE;
use crate::error::ChainError;
use crate::records::{option, v3, CcdChain, FabrikSolved, MAX_FABRIK_JOINTS};

/// The solver: `f32`, with the kernels' own sin/cos/atan2 (the GPU twin's arithmetic).
mod single {
    use crate::constants::{LIMIT_CONE, LIMIT_TWIST};
    use crate::records::MAX_FABRIK_JOINTS;
    type F = f32;
    type V3 = glam::Vec3;
    type Q = glam::Quat;
    type M3 = glam::Mat3;
    const PI_: F = crate::constants::PI;
    use crate::cpu::math::{atan2 as atan2_, quat_from_axis_angle as axis_angle, sin_cos as sin_cos_};
    include!("descent.rs");
}

/// The reference: the same descent in `f64` with the standard library's trigonometry.
mod double {
    use crate::constants::{LIMIT_CONE, LIMIT_TWIST};
    use crate::records::MAX_FABRIK_JOINTS;
    type F = f64;
    type V3 = glam::DVec3;
    type Q = glam::DQuat;
    type M3 = glam::DMat3;
    const PI_: F = std::f64::consts::PI;
    fn atan2_(y: F, x: F) -> F {
        y.atan2(x)
    }
    fn sin_cos_(x: F) -> (F, F) {
        x.sin_cos()
    }
    fn axis_angle(axis: V3, angle: F) -> Q {
        Q::from_axis_angle(axis, angle)
    }
    include!("descent.rs");
}

/// The option bits a damped-least-squares chain may set.
pub(crate) const OPTIONS: u32 = option::FABRIK;

/// The damping at the start, as a share of the chain's length.
const DAMPING_START: f32 = 0.1;

/// How many starts: the FK pose moved into the limits, then poses spread inside the limits
/// (`spread`); each runs the chain's iterations until one ends within the precision, and
/// the closest end is kept (limits make the problem non-convex: a start can end in a pose
/// from which no small step comes closer).
const STARTS: u32 = 8;

/// Solves one limited chain by damped least squares with exactly
/// [`FabrikChain::iterations`](crate::records::FabrikChain::iterations); an invalid chain
/// gets a flagged FK fallback.
pub fn dls(chain: &CcdChain, out: &mut FabrikSolved) {
    solve_limited(chain, out, |c, o| solve(c, FabrikMode::Fixed, o));
}

/// A joint's limit and bone, as the descent reads them.
macro_rules! joint_of {
    ($m:ident, $l:expr, $bone:expr, $to_q:expr, $to_v:expr, $to_f:expr) => {{
        let l: &Limit = $l;
        $m::Joint {
            dof: match l.kind {
                0 => $m::Dof::Free,
                LIMIT_HINGE => $m::Dof::Hinge,
                _ => $m::Dof::Ball,
            },
            kind: l.kind,
            rest: $to_q(l.rest),
            b: $to_v(l.bone),
            u: $to_v(l.u),
            v: $to_v(l.bone.cross(l.u)),
            range: l.range.map($to_f),
            bone: $to_v($bone),
        }
    }};
}

/// The checked chain's joints (limits and bones) and FK local rotations.
struct Prepared {
    n: usize,
    total: f32,
    limits: [Limit; MAX_FABRIK_JOINTS],
    bone: [Vec3; MAX_FABRIK_JOINTS],
    local: [Quat; MAX_FABRIK_JOINTS],
    fk: [Quat; MAX_FABRIK_JOINTS],
}

fn prepare(chain: &CcdChain) -> Result<Prepared, ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    let ch = &chain.chain;
    let mut p = Prepared {
        n: s.n,
        total: s.total,
        limits,
        bone: [Vec3::ZERO; MAX_FABRIK_JOINTS],
        local: [Quat::IDENTITY; MAX_FABRIK_JOINTS],
        fk: [Quat::IDENTITY; MAX_FABRIK_JOINTS],
    };
    let mut parent = Quat::from_array(chain.limits.parent_ms);
    for i in 0..s.n {
        p.fk[i] = Quat::from_array(ch.rotations_ms[i]);
        if i + 1 < s.n {
            p.bone[i] = p.fk[i].conjugate() * (v3(ch.joints_ms[i + 1]) - v3(ch.joints_ms[i]));
            p.local[i] = (parent.conjugate() * p.fk[i]).normalize();
            parent = p.fk[i];
        }
    }
    Ok(p)
}

#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
fn solve(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let s = prepare(chain)?;
    let (n, total) = (s.n, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        super::chain::write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let target = v3(ch.target_ms);
    let joints: [single::Joint; MAX_FABRIK_JOINTS] =
        std::array::from_fn(|i| joint_of!(single, &s.limits[i], s.bone[i], |q| q, |v| v, |x| x));
    let (pose, err) = single::run(
        &joints,
        &s.local,
        Quat::from_array(chain.limits.parent_ms),
        v3(ch.joints_ms[0]),
        target,
        DAMPING_START * total,
        (STARTS, ch.iterations(), precision, mode == FabrikMode::Converge),
        n,
    );
    finish_rotations(ch, &pose.rot, &s.fk, n, total, err <= precision, out);
    Ok(())
}

/// The `f64` reference of [`dls`]: the same descent in double precision, `starts` starts of
/// `iterations` steps each (none stopping early), from the chain as it is checked (an
/// unmirrored chain). Returns the joints' positions, or the chain's error.
pub fn reference(chain: &CcdChain, starts: u32, iterations: u32) -> Result<Vec<DVec3>, ChainError> {
    let s = prepare(chain)?;
    let ch = &chain.chain;
    let joints: [double::Joint; MAX_FABRIK_JOINTS] = std::array::from_fn(|i| {
        joint_of!(double, &s.limits[i], s.bone[i], |q: Quat| q.as_dquat(), |v: Vec3| v.as_dvec3(), f64::from)
    });
    let local: [DQuat; MAX_FABRIK_JOINTS] = s.local.map(|q| q.as_dquat().normalize());
    let (pose, _) = double::run(
        &joints,
        &local,
        Quat::from_array(chain.limits.parent_ms).as_dquat().normalize(),
        v3(ch.joints_ms[0]).as_dvec3(),
        v3(ch.target_ms).as_dvec3(),
        f64::from(DAMPING_START * s.total),
        (starts.max(1), iterations, 0.0, false),
        s.n,
    );
    Ok(pose.p[..s.n].to_vec())
}
