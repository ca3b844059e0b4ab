//! Joint limits (hinge, swing cone, twist) and the limited forward step shared by
//! constrained FABRIK and CCD: the CPU twin of `shaders/shared/limits.wgsl`.
//!
//! Every limit acts on a joint's deviation from its rest local rotation,
//! `D = rest⁻¹ · P⁻¹ · R` (`P` its parent's model rotation, `R` its own), with the joint's
//! bone `b` (in its own frame) as the twist axis; see [`crate::records::ChainLimits`].

use glam::{Quat, Vec3};

use super::math::{
    any_orthonormal, atan2, finite4, is_unit_quat, normalize_or, quat_from_axis_angle, reject, rotation_arc,
};
use crate::constants::{LIMIT_AXIS2, LIMIT_CONE, LIMIT_HINGE, LIMIT_MIN_CONE, LIMIT_TWIST, PI};
use crate::error::ChainError;
use crate::records::{v3, ChainLimits, JointLimit, Limits};

/// One joint's limit, prepared for solving: its axes made perpendicular to its bone.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limit {
    /// [`crate::records::limit`] bits; 0 = unlimited.
    pub kind: u32,
    pub rest: Quat,
    /// `rest⁻¹ · P_fk⁻¹` (`P_fk` the parent's FK model rotation, the chain's parent rotation
    /// for the first joint): with it a forward pass finds the deviation from the joint's
    /// relative delta alone ([`forward_joint`]).
    pub frame: Quat,
    /// The bone's direction in the joint's frame (the twist axis).
    pub bone: Vec3,
    /// Hinge axis or the cone's first axis, unit, perpendicular to `bone`.
    pub u: Vec3,
    pub range: [f32; 4],
}

/// `a` wrapped into `[−π, π]`.
#[inline]
fn wrap(a: f32) -> f32 {
    a - (2.0 * PI) * (a * (0.5 / PI)).round()
}

/// `a` (in `[−π, π]`) moved into `[lo, hi]`: itself inside, else the nearer bound around
/// the circle (the lower one on a tie).
#[inline]
pub(crate) fn clamp_angle(a: f32, lo: f32, hi: f32) -> f32 {
    if a >= lo && a <= hi {
        return a;
    }
    if wrap(a - lo).abs() <= wrap(a - hi).abs() {
        lo
    } else {
        hi
    }
}

/// Checks and prepares the limits of a chain's first `n` joints (`rotations_ms` and
/// `dir_fk` their FK model rotations and unit bone directions), in the kernels' order.
pub(crate) fn setup_limits(
    limits: &ChainLimits,
    rotations_ms: &[[f32; 4]],
    dir_fk: &[Vec3],
    n: usize,
    out: &mut [Limit],
) -> Result<(), ChainError> {
    check_kinds_and_parent(limits, |i| i + 1 < n)?;
    for i in 0..n.saturating_sub(1) {
        let parent_fk = if i == 0 { limits.parent_ms } else { rotations_ms[i - 1] };
        out[i] = setup_joint_limit(limits.kind(i), &limits.joints[i], rotations_ms[i], dir_fk[i], parent_fk)?;
    }
    Ok(())
}

/// The checks every set of limits takes before its joints': the kind bits
/// ([`crate::records::kinds_valid`], `has_bone(i)` = joint `i` has a bone to limit), then the
/// parent's rotation finite and unit.
pub(crate) fn check_kinds_and_parent<const N: usize>(
    limits: &Limits<N>,
    has_bone: impl Fn(usize) -> bool,
) -> Result<(), ChainError> {
    if !crate::records::kinds_valid(limits, has_bone) {
        return Err(ChainError::InvalidParameter);
    }
    if !finite4(limits.parent_ms) {
        return Err(ChainError::NonFinite);
    }
    if !is_unit_quat(Quat::from_array(limits.parent_ms)) {
        return Err(ChainError::NotNormalized);
    }
    Ok(())
}

/// Checks and prepares one joint's limit of kind bits `kind` (0: none), the joint's FK
/// model rotation `rotation`, its unit bone direction `dir` (model space) and its parent's
/// FK model rotation `parent_fk`.
pub(crate) fn setup_joint_limit(
    kind: u32,
    j: &JointLimit,
    rotation: [f32; 4],
    dir: Vec3,
    parent_fk: [f32; 4],
) -> Result<Limit, ChainError> {
    if kind == 0 {
        return Ok(Limit::default());
    }
    if !finite4(j.rest) || !finite4(j.axis) || !finite4(j.range) {
        return Err(ChainError::NonFinite);
    }
    let rest = Quat::from_array(j.rest);
    if !is_unit_quat(rest) {
        return Err(ChainError::NotNormalized);
    }
    let r = j.range;
    let angle = |a: f32| (-PI..=PI).contains(&a);
    let ok = (kind & LIMIT_HINGE == 0 || (angle(r[0]) && angle(r[1]) && r[0] <= r[1]))
        && (kind & LIMIT_CONE == 0 || (r[0] >= LIMIT_MIN_CONE && r[0] <= PI && r[1] >= LIMIT_MIN_CONE && r[1] <= PI))
        && (kind & LIMIT_TWIST == 0 || (angle(r[2]) && angle(r[3]) && r[2] <= r[3]));
    if !ok {
        return Err(ChainError::InvalidParameter);
    }
    // The bone in the joint's own frame.
    let bone = (Quat::from_array(rotation).conjugate() * dir).normalize();
    // The axis as a direction, whatever its length (scaled by its largest component
    // first, so a huge one neither overflows nor cancels): its part off the bone. A
    // hinge, and a cone of two different half-angles, need that part.
    let a = v3(j.axis);
    let m = a.abs().max_element();
    let dir = if m > 0.0 { normalize_or(a / m, Vec3::ZERO, 0.0) } else { Vec3::ZERO };
    let perp = reject(dir, bone);
    let needs_axis = kind & LIMIT_HINGE != 0 || (kind & LIMIT_CONE != 0 && r[0] != r[1]);
    if needs_axis && !(perp.length_squared() > LIMIT_AXIS2) {
        return Err(ChainError::DegenerateMidAxis);
    }
    let u = normalize_or(perp, any_orthonormal(bone), LIMIT_AXIS2);
    let frame = rest.conjugate() * Quat::from_array(parent_fk).conjugate();
    Ok(Limit { kind, rest, frame, bone, u, range: r })
}

/// The deviation `d` (from rest) moved into the limit: a hinge keeps the bone's angle
/// about its axis (clamped) and nothing else; a cone scales a swing outside its ellipse back
/// onto it; a twist range clamps the twist. Inside the limit `d` comes back unchanged.
pub(crate) fn limit_deviation(d: Quat, l: &Limit) -> Quat {
    let d = if d.w < 0.0 { -d } else { d };
    let b = l.bone;
    let r = l.range;
    if l.kind == LIMIT_HINGE {
        // rot(u, θ)·b = cos θ·b + sin θ·(u × b): the bone's angle about the hinge.
        let s = d * b;
        let (y, x) = (s.dot(l.u.cross(b)), s.dot(b));
        // The bone along the hinge axis has no angle about it: take 0 (atan2(0, 0) is not
        // defined in WGSL).
        let theta = if x * x + y * y > 1e-12 { atan2(y, x) } else { 0.0 };
        return quat_from_axis_angle(l.u, clamp_angle(theta, r[0], r[1]));
    }
    // Swing-twist about the bone: d = swing · twist.
    let along = Vec3::new(d.x, d.y, d.z).dot(b);
    let t = Quat::from_xyzw(b.x * along, b.y * along, b.z * along, d.w);
    let mut twist = if t.length_squared() > 1e-12 { t.normalize() } else { Quat::IDENTITY };
    let mut swing = d * twist.conjugate();
    if l.kind & LIMIT_TWIST != 0 {
        let tau = 2.0 * atan2(Vec3::new(twist.x, twist.y, twist.z).dot(b), twist.w);
        let clamped = clamp_angle(tau, r[2], r[3]);
        if clamped != tau {
            twist = quat_from_axis_angle(b, clamped);
        }
    }
    if l.kind & LIMIT_CONE != 0 {
        let v = Vec3::new(swing.x, swing.y, swing.z);
        let sl = v.length();
        if sl > 0.0 {
            let phi = 2.0 * atan2(sl, swing.w.abs());
            let a = v * (1.0 / sl);
            let wu = phi * a.dot(l.u) / r[0];
            let wv = phi * a.dot(b.cross(l.u)) / r[1];
            let e = wu * wu + wv * wv;
            if e > 1.0 {
                let a = if swing.w < 0.0 { -a } else { a };
                swing = quat_from_axis_angle(a, phi / e.sqrt());
            }
        }
    }
    swing * twist
}

/// A joint's candidate model rotation `candidate` moved into its limit, its parent's
/// model rotation being `parent`.
#[inline]
pub(crate) fn limit_rotation(parent: Quat, candidate: Quat, l: &Limit) -> Quat {
    let local_rest = l.rest.conjugate() * (parent.conjugate() * candidate);
    (parent * (l.rest * limit_deviation(local_rest, l))).normalize()
}

/// One joint of a limited forward pass (root to tip). `parent_delta` = the parent's total
/// delta `D` (identity for the first joint), `fk` = the joint's FK model rotation, `dir_fk`
/// its FK bone direction, `want` the direction its bone should take (model space, unit).
/// The bone turns by the shortest arc as seen in the parent's frame (no roll), then into its
/// limit. Returns the joint's total delta and its relative delta `D_parent⁻¹ · D`.
///
/// The parent's model rotation is `D_parent · P_fk`, so the deviation from rest of a joint
/// whose relative delta is `E` is `rest⁻¹ · P_fk⁻¹ · E · R_fk = frame · E · R_fk`: the
/// limit needs neither the parent's rotation nor the joint's, and the limited deviation `L`
/// gives back `E = frame⁻¹ · L · R_fk⁻¹`.
#[inline]
pub(crate) fn forward_joint(parent_delta: Quat, fk: Quat, dir_fk: Vec3, want: Vec3, l: &Limit) -> (Quat, Quat) {
    let rel = rotation_arc(dir_fk, parent_delta.conjugate() * want);
    if l.kind == 0 {
        return (parent_delta * rel, rel);
    }
    let rel = limit_relative(rel, fk, l);
    ((parent_delta * rel).normalize(), rel)
}

/// A joint's relative delta `rel` (its FK model rotation `fk`) moved into its limit `l`
/// (`kind != 0`): the deviation `frame · rel · fk` limited, and turned back into a relative
/// delta (see [`forward_joint`]).
#[inline]
pub(crate) fn limit_relative(rel: Quat, fk: Quat, l: &Limit) -> Quat {
    let limited = limit_deviation(l.frame * rel * fk, l);
    (l.frame.conjugate() * limited * fk.conjugate()).normalize()
}
