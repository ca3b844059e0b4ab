//! Damped least squares (Levenberg–Marquardt with adaptive damping) on a limited chain
//! ([`DlsChain`]): the Jacobian family of IK (Unreal's full-body IK, every robotics IK
//! library); the CPU twin of `shaders/kernels/dls.wgsl`.
//!
//! The unknowns are the coordinates the limits bound: a hinge's angle; a ball joint's swing
//! (its rotation vector on the limit's two axes across the bone) and twist; an unlimited
//! joint turns by world rotation vectors. Each iteration linearises the end's position
//! (and, with an orientation target, the last joint's rotation) in every coordinate, `J`,
//! and takes the damped least-squares step `Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ e` toward the goal (`e`
//! the residual). `J Jᵀ` is 3 × 3 (6 × 6 with an orientation, solved by 3 × 3 blocks) and
//! built without `J`: a coordinate turning about the world axis `a` at `p` adds
//! `(a × r)(a × r)ᵀ` (`r` = end − `p`), an unlimited joint `|r|² I − r rᵀ`; its step is then
//! `(a × r) · y`. A stiff joint's columns are scaled by `1 − stiffness`.
//!
//! Every step is moved into the limits (a hinge angle or twist clamped, a swing scaled back
//! into its cone), so the limits hold after every iteration; a coordinate at a bound the
//! step pushes against is held there (a cone's swing slides along its rim) and the step
//! solved again without it (an active set). A step is kept only if the residual shrank:
//! then `λ` halves, else it is dropped and `λ` triples (Levenberg–Marquardt's trust
//! region), so an unreachable target ends at the closest pose without oscillating. Limits
//! make the problem non-convex, so a solve tries up to [`MAX_DLS_STARTS`] starting poses
//! (the FK pose first, then poses spread over the limits) until one ends within the
//! precision, and keeps the closest end.
//!
//! The descent is written once and compiled in `f32` with the kernels' own sine, cosine
//! and arc tangent (the solver: the GPU's arithmetic) and in `f64` ([`reference()`]).

use glam::{DQuat, DVec3, Quat, Vec3};

use super::chain::finish_rotations;
use super::constrained_fabrik::{check_limited, checked, solve_limited};
use super::fabrik::FabrikMode;
use super::limits::Limit;
use super::math::{finite4, is_unit_quat};
use crate::constants::LIMIT_HINGE;
use crate::error::ChainError;
use crate::records::{
    option, v3, DlsChain, FabrikSolved, Options, MAX_DLS_STARTS, MAX_FABRIK_JOINTS, MAX_ORIENTATION_WEIGHT,
};

/// The solver: `f32`, with the kernels' own sin/cos/atan2 (the GPU twin's arithmetic).
pub(crate) mod single {
    use crate::constants::{LIMIT_CONE, LIMIT_TWIST};
    use crate::records::MAX_FABRIK_JOINTS;
    type F = f32;
    type V3 = glam::Vec3;
    type Q = glam::Quat;
    type M3 = glam::Mat3;
    const PI_: F = crate::constants::PI;
    use crate::cpu::math::{atan2 as atan2_, quat_from_axis_angle as axis_angle, sin_cos as sin_cos_};
    include!("joint.rs");
    include!("descent.rs");
    include!("tree.rs");
}

/// The reference: the same descent in `f64` with the standard library's trigonometry.
pub(crate) mod double {
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
    include!("joint.rs");
    include!("descent.rs");
    include!("tree.rs");
}

/// The option bits a damped-least-squares chain may set.
pub(crate) const OPTIONS: u32 = option::FABRIK;

/// The damping at the start, as a share of the chain's length.
const DAMPING_START: f32 = crate::constants::DLS_DAMPING_START;

/// Solves one chain by damped least squares, each start running up to
/// [`FabrikChain::iterations`](crate::records::FabrikChain::iterations), ending once within
/// the precision or when four steps in a row came no closer (what the GPU kernel runs); an
/// invalid chain gets a flagged FK fallback.
pub fn dls(chain: &DlsChain, out: &mut FabrikSolved) {
    solve_limited(chain, out, solve);
}

/// [`dls`] for the batch jobs' [`FabrikMode`]: both modes solve alike (a start always ends
/// within the precision, on the GPU too), so the mode changes nothing.
pub fn dls_with_mode(chain: &DlsChain, _mode: FabrikMode, out: &mut FabrikSolved) {
    dls(chain, out);
}

/// Checks one chain the way [`dls`] does (a mirrored chain as its unmirrored twin): the
/// chain and its limits as for CCD, then its goal: every number finite (else
/// [`ChainError::NonFinite`]); the orientation weight in `[0, MAX_ORIENTATION_WEIGHT]`, the
/// reserved fields zero, the starts within `1..=MAX_DLS_STARTS`, every stiffness in
/// `[0, 1]`, and no orientation
/// target on a chain whose end keeps its FK rotation ([`option::KEEP_END_ROTATION`]) (else
/// [`ChainError::InvalidParameter`]); an orientation in use (weight > 0) a unit quaternion
/// (else [`ChainError::NotNormalized`]).
pub fn validate_dls(chain: &DlsChain) -> Result<(), ChainError> {
    check_goal(&check_limited(chain, OPTIONS)?)
}

/// The goal's checks of [`validate_dls`], in its order.
pub(crate) fn check_goal(chain: &DlsChain) -> Result<(), ChainError> {
    let g = &chain.goal;
    let stiffness_finite = g.stiffness.iter().all(|s| s.is_finite());
    if !finite4(g.orientation_ms) || !finite4(g.settings) || !stiffness_finite {
        return Err(ChainError::NonFinite);
    }
    let w = g.settings[0];
    let invalid = !(0.0..=MAX_ORIENTATION_WEIGHT).contains(&w)
        || g.settings[1..] != [0.0; 3]
        || g.starts[1..] != [0; 3]
        || !(1..=MAX_DLS_STARTS).contains(&g.starts[0])
        || !g.stiffness.iter().all(|s| (0.0..=1.0).contains(s))
        || (w > 0.0 && chain.has_option(option::KEEP_END_ROTATION));
    if invalid {
        return Err(ChainError::InvalidParameter);
    }
    if w > 0.0 && !is_unit_quat(Quat::from_array(g.orientation_ms)) {
        return Err(ChainError::NotNormalized);
    }
    Ok(())
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
    /// The target rotation of the last joint that turns (`T · L⁻¹`, `L` the end's FK local
    /// rotation) and the joints' coordinate scales (`1 − stiffness`).
    orient: Quat,
    d: [f32; MAX_FABRIK_JOINTS],
    limits: [Limit; MAX_FABRIK_JOINTS],
    bone: [Vec3; MAX_FABRIK_JOINTS],
    local: [Quat; MAX_FABRIK_JOINTS],
    fk: [Quat; MAX_FABRIK_JOINTS],
}

fn prepare(chain: &DlsChain) -> Result<Prepared, ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    check_goal(chain)?;
    let ch = &chain.chain;
    let (fk_end, fk_last) = (Quat::from_array(ch.rotations_ms[s.n - 1]), Quat::from_array(ch.rotations_ms[s.n - 2]));
    let orient = (Quat::from_array(chain.goal.orientation_ms) * fk_end.conjugate() * fk_last).normalize();
    let mut p = Prepared {
        n: s.n,
        total: s.total,
        orient,
        d: chain.goal.stiffness.map(|x| 1.0 - x),
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
fn solve(chain: &DlsChain, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let s = prepare(chain)?;
    let (n, total) = (s.n, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        super::chain::write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let joints: [single::Joint; MAX_FABRIK_JOINTS] =
        std::array::from_fn(|i| joint_of!(single, &s.limits[i], s.bone[i], |q| q, |v| v, |x| x));
    let floor = ((v3(ch.target_ms) - v3(ch.joints_ms[0])).length() - total).max(0.0);
    let goal =
        single::Goal { target: v3(ch.target_ms), orient: s.orient, w: chain.orientation_weight(), d: s.d, floor };
    let (pose, err) = single::run(
        &joints,
        &s.local,
        Quat::from_array(chain.limits.parent_ms),
        v3(ch.joints_ms[0]),
        &goal,
        DAMPING_START * total,
        (chain.goal.starts[0], ch.iterations(), precision, true),
        n,
    );
    finish_rotations(ch, &pose.rot, &s.fk, n, total, err <= precision, out);
    Ok(())
}

/// The `f64` reference of [`dls`]: the same descent in double precision, `starts` starts of
/// `iterations` steps each (none stopping early; the record's own starts and iterations are
/// not used), from the chain as it is checked (an unmirrored chain). Returns the joints'
/// positions and the error of the closest end, or the chain's error.
pub fn reference(chain: &DlsChain, starts: u32, iterations: u32) -> Result<(Vec<DVec3>, f64), ChainError> {
    let s = prepare(chain)?;
    let ch = &chain.chain;
    let joints: [double::Joint; MAX_FABRIK_JOINTS] = std::array::from_fn(|i| {
        joint_of!(double, &s.limits[i], s.bone[i], |q: Quat| q.as_dquat(), |v: Vec3| v.as_dvec3(), f64::from)
    });
    let local: [DQuat; MAX_FABRIK_JOINTS] = s.local.map(|q| q.as_dquat().normalize());
    let goal = double::Goal {
        target: v3(ch.target_ms).as_dvec3(),
        orient: s.orient.as_dquat().normalize(),
        w: f64::from(chain.orientation_weight()),
        d: s.d.map(f64::from),
        floor: 0.0,
    };
    let (pose, err) = double::run(
        &joints,
        &local,
        Quat::from_array(chain.limits.parent_ms).as_dquat().normalize(),
        v3(ch.joints_ms[0]).as_dvec3(),
        &goal,
        f64::from(DAMPING_START * s.total),
        (starts.max(1), iterations, 0.0, false),
        s.n,
    );
    Ok((pose.p[..s.n].to_vec(), err))
}

/// A joint's limit and bone as the `f32` descent reads them (the tree's solver).
pub(crate) fn joint_single(l: &Limit, bone: Vec3) -> single::Joint {
    joint_of!(single, l, bone, |q| q, |v| v, |x| x)
}

/// A joint's limit and bone as the `f64` descent reads them (the tree's reference).
pub(crate) fn joint_double(l: &Limit, bone: Vec3) -> double::Joint {
    joint_of!(double, l, bone, |q: Quat| q.as_dquat(), |v: Vec3| v.as_dvec3(), f64::from)
}

/// The damping at the start of a tree's descent, as a share of its length.
pub(crate) const TREE_DAMPING_START: f32 = DAMPING_START;
