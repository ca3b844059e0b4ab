//! The two-bone limb core shared by two-bone and pseudo three-bone IK: the CPU twin of
//! `shaders/shared/limb.wgsl`.
//!
//! Stages (ozz-animation's, extended), one function each, with the same names in every twin
//! (`shaders/shared/limb.wgsl`, `cpu/wide/two_bone.rs`): `limb_setup` (bones, target axis, hinge)
//! → `limb_reach` (stretch, soften, knee limits, `reached`) → `limb_mid_joint` (law of
//! cosines, trig-free) → `limb_start_joint` (aim, bend plane from the pole mode, twist).
//! Everything is in model space (`_ms` is implied); the result is the relative deltas `E0`
//! (start) and `E1` (mid) that the chain's finishing stage ([`super::chain`]) weights and
//! writes out. See docs/ALGORITHMS.md, "Two-bone IK".

use glam::{Quat, Vec3};

use super::math::{
    any_orthonormal, finite4, in_range, nlerp, normalize_or, quat_from_axis_angle, quat_from_axis_cos_sin, reject,
    rotation_arc, sin_cos,
};
use crate::error::ChainError;
use crate::records::{info, option, v3, BendMode, LimbSettings, Options, PoleMode};

pub(crate) use crate::constants::{
    AGAINST_HINGE, MAX_ANGLE, MIN_CHAIN_LENGTH, MIN_HINGE, ON_ROOT, POLE_ON_AXIS2, STRAIGHT, ZERO_BONE,
};

/// Result of the limb core.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LimbSolution {
    /// Relative delta of the start joint (= its total delta).
    pub e0: Quat,
    /// Relative delta of the mid joint (on top of `e0`).
    pub e1: Quat,
    /// Stretch scale of both bones (1 = none).
    pub scale: f32,
    /// The effective target was reached (before weighting).
    pub reached: bool,
    /// [`info`] bits.
    pub info: u32,
}

/// Range and finiteness checks of the settings alone (no geometry).
pub(crate) fn check_limb_settings(l: &LimbSettings) -> Result<(), ChainError> {
    if !(finite4(l.target_ms) && finite4(l.pole_ms) && finite4(l.mid_axis) && finite4(l.params)) {
        return Err(ChainError::NonFinite);
    }
    if !(in_range(l.target_ms) && in_range(l.pole_ms) && in_range(l.mid_axis)) {
        return Err(ChainError::OutOfRange);
    }
    let [soften, stretch, cos_min, cos_max] = l.params;
    let limits = l.has_option(option::KNEE_LIMITS);
    let bad = l.pole_mode().is_none()
        || l.bend_mode().is_none()
        || l.options() & !option::LIMB != 0
        || l.reserved() != 0
        || !(0.0..=1.0).contains(&soften)
        || stretch < 1.0
        || (limits && !(cos_min <= 1.0 && cos_max >= -1.0 && cos_max <= cos_min))
        || (l.pole_mode() == Some(PoleMode::Swivel)
            && (!(v3(l.pole_ms).length_squared() >= crate::constants::MIN_AXIS_LENGTH2)
                || !(l.pole_ms[3].abs() <= MAX_ANGLE)))
        || !(l.mid_axis[3].abs() <= MAX_ANGLE);
    if bad {
        return Err(ChainError::InvalidParameter);
    }
    if v3(l.mid_axis).length_squared() <= 1e-12 {
        return Err(ChainError::DegenerateMidAxis);
    }
    Ok(())
}

/// Solves the limb `p0 → p1 → p2` for the end joint to reach `target` (already corrected
/// for any end-effector offset). `r1` is the mid joint's FK model rotation (for `mid_axis`).
/// Settings must have passed [`check_limb_settings`].
///
/// The stages, as in ozz-animation's `IKTwoBoneJob` and with the same names in
/// `shaders/shared/limb.wgsl` and the SIMD twin `cpu/wide/two_bone.rs`: [`limb_setup`] →
/// [`limb_reach`] → [`limb_mid_joint`] → [`limb_start_joint`]; weighting and the output
/// records are the chain's finishing stage (`cpu/chain.rs`).
pub(crate) fn solve_limb(
    p0: Vec3,
    p1: Vec3,
    p2: Vec3,
    r1: Quat,
    target: Vec3,
    l: &LimbSettings,
) -> Result<LimbSolution, ChainError> {
    let s = limb_setup(p0, p1, p2, r1, target, l)?;
    let mut reach = limb_reach(&s, l);
    let e1 = limb_mid_joint(&s, &reach);
    let e0 = limb_start_joint(&s, p0, e1, l, &mut reach.info)?;
    Ok(LimbSolution { e0, e1, scale: reach.scale, reached: reach.reached, info: reach.info })
}

/// What [`limb_setup`] finds: the bones, the target axis and the hinge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LimbSetup {
    /// Start → mid bone.
    u: Vec3,
    /// Mid → end bone.
    v: Vec3,
    /// `|u|`, `|v|` and their sum.
    a: f32,
    b: f32,
    limb_len: f32,
    /// Distance start → target, and the unit direction.
    c: f32,
    d: Vec3,
    /// Unit hinge axis (model space), perpendicular to both bones.
    h: Vec3,
    /// The FK limb is bent backwards relative to `h`.
    flip: bool,
    /// ... by more than `AGAINST_HINGE` (sine): [`info::AGAINST_HINGE`].
    against: bool,
}

/// Setup: bones, target axis, hinge. Errors: zero-length bone, target on the start joint,
/// hinge in the plane of the bones.
#[inline]
pub(crate) fn limb_setup(
    p0: Vec3,
    p1: Vec3,
    p2: Vec3,
    r1: Quat,
    target: Vec3,
    l: &LimbSettings,
) -> Result<LimbSetup, ChainError> {
    let u = p1 - p0;
    let v = p2 - p1;
    let a = u.length();
    let b = v.length();
    let limb_len = a + b;
    if !(a > ZERO_BONE * limb_len && b > ZERO_BONE * limb_len && limb_len >= MIN_CHAIN_LENGTH) {
        return Err(ChainError::ZeroLengthBone);
    }
    let st = target - p0;
    let c = st.length();
    if !(c > ON_ROOT * limb_len) {
        return Err(ChainError::TargetOnRoot);
    }
    let d = st * (1.0 / c);

    // Hinge in model space, made perpendicular to both bones so the knee turns in the
    // bones' plane (exact reach); a true hinge is unchanged.
    let u_dir = u * (1.0 / a);
    let h_hinge = reject(r1 * v3(l.mid_axis).normalize(), u_dir);
    let mut h = h_hinge;
    let v_perp = reject(v, u_dir);
    let v_perp_len2 = v_perp.length_squared();
    let bent = v_perp_len2 > 1e-12 * b * b;
    if bent {
        h = reject(h, v_perp * (1.0 / v_perp_len2.sqrt()));
    }
    let mut h_len = h.length();
    let nearly_straight = v_perp_len2 < AGAINST_HINGE * AGAINST_HINGE * b * b;
    if bent && nearly_straight && !(h_len > MIN_HINGE) && h_hinge.length() > MIN_HINGE {
        // The bones' plane holds the hinge, and the pose bends the mid joint by less than
        // ~11.5° (a nearly straight knee the animation bends sideways to its hinge): bend
        // about the bones' own axis, the way the pose bends them. A limb bent further in a
        // plane that holds its hinge is an error (the axis is wrong).
        h = v_perp.cross(u_dir) * (1.0 / v_perp_len2.sqrt());
        h_len = h.length();
    }
    if !(h_len > MIN_HINGE) {
        return Err(ChainError::DegenerateMidAxis);
    }
    h *= 1.0 / h_len;
    // Bent backwards relative to the hinge (ozz: cross(start_mid, mid_axis)·mid_end < 0).
    // Within 1e-6 rad of straight counts as straight (not flipped): there the sign is
    // rounding noise and CPU and GPU would disagree.
    let straight_eps = STRAIGHT * a * b;
    let against_eps = AGAINST_HINGE * a * b;
    let side = u.cross(h).dot(v);
    let mut flip = side < -straight_eps;
    let mut against = side < -against_eps;
    match l.bend_mode() {
        Some(BendMode::KeepFk) => {
            if flip {
                h = -h;
                flip = false;
            }
            against = false;
        }
        Some(BendMode::Reversed) => {
            h = -h;
            flip = u.cross(h).dot(v) < -straight_eps;
            against = side > against_eps;
        }
        Some(BendMode::Hinge) | None => {}
    }
    Ok(LimbSetup { u, v, a, b, limb_len, c, d, h, flip, against })
}

/// What [`limb_reach`] decides: the stretch and the solved inner angle as `1 ± cos C`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LimbReach {
    scale: f32,
    one_plus: f32,
    one_minus: f32,
    reached: bool,
    info: u32,
}

/// Reach: stretch, soften (ozz's `SoftenTarget`), knee limits; the solved inner angle `C`
/// at the mid joint as `1 + cos C` and `1 − cos C`.
#[inline]
pub(crate) fn limb_reach(s: &LimbSetup, l: &LimbSettings) -> LimbReach {
    let LimbSetup { a, b, limb_len, c, .. } = *s;
    let (soften, max_stretch) = (l.soften(), l.max_stretch());
    let (cos_min, cos_max) = l.knee_cos_limits();
    let mut info = if s.against { info::AGAINST_HINGE } else { 0 };
    let mut reached = true;
    let mut scale = 1.0;
    let mut stretched_to_target = false;
    if max_stretch > 1.0 && c > limb_len {
        info |= info::STRETCHED;
        if c <= limb_len * max_stretch {
            scale = c / limb_len;
            stretched_to_target = true;
        } else {
            scale = max_stretch;
        }
    }
    let a_s = a * scale;
    let b_s = b * scale;
    let chain_s = a_s + b_s;
    // The solved reach `cs` and its slack `chain_s − cs`, kept apart: near full extension
    // `cos C = (a²+b²−cs²)/2ab` cancels catastrophically (√ε of angle per ulp of cs), so the
    // knee angle is built from `1 ± cos C` in product form, with the slack known exactly
    // where the solver chose it (soften, stretch, knee limit).
    let mut cs = c;
    let mut slack = chain_s - c;
    if stretched_to_target {
        slack = 0.0; // stretched exactly to the target: straight
    } else {
        let da = chain_s * soften;
        let ds = chain_s - da;
        if c > da {
            reached = false;
            if c > chain_s {
                info |= info::OUT_OF_REACH;
            }
            if ds > 0.0 {
                // ozz: ease with 1 − (3 / (α + 3))⁴.
                let alpha = (c - da) / ds;
                let op = alpha + 3.0;
                let op2 = op * op;
                let ratio = 81.0 / (op2 * op2);
                cs = da + ds - ds * ratio;
                slack = ds * ratio;
                info |= info::SOFTENED;
            }
        }
    }
    let diff = (a_s - b_s).abs();
    if !(c > diff) {
        reached = false;
        info |= info::OUT_OF_REACH;
    }
    // 1 + cos C and 1 − cos C of the solved inner angle C.
    let two_ab = 2.0 * a_s * b_s;
    let mut one_plus = slack * (chain_s + cs) / two_ab;
    let mut one_minus = (cs - diff) * (cs + diff) / two_ab;
    if l.has_option(option::KNEE_LIMITS) {
        let sum2 = a_s * a_s + b_s * b_s;
        let c_min = (sum2 - two_ab * cos_min).max(0.0).sqrt();
        let c_max = (sum2 - two_ab * cos_max).max(0.0).sqrt();
        // θmin = 0 and θmax = π bound nothing: a fold to 0 or a straight (stretched) limb
        // lands on them exactly, where rounding alone would say "limited".
        if cos_min < 1.0 && cs < c_min {
            one_plus = 1.0 + cos_min;
            one_minus = 1.0 - cos_min;
            reached = false;
            info |= info::KNEE_LIMITED;
        } else if cos_max > -1.0 && cs > c_max {
            one_plus = 1.0 + cos_max;
            one_minus = 1.0 - cos_max;
            reached = false;
            info |= info::KNEE_LIMITED;
        }
    }
    LimbReach { scale, one_plus: one_plus.clamp(0.0, 2.0), one_minus: one_minus.clamp(0.0, 2.0), reached, info }
}

/// Mid joint (ozz's `ComputeMidJoint`): the delta `E1` turning the FK inner angle (signed
/// by the bend side) to the solved one about the hinge, from (cos, sin) pairs: no acos, no
/// cancellation.
#[inline]
pub(crate) fn limb_mid_joint(s: &LimbSetup, r: &LimbReach) -> Quat {
    let LimbSetup { u, v, a, b, h, flip, .. } = *s;
    let (one_plus, one_minus) = (r.one_plus, r.one_minus);
    let cos_new = 0.5 * (one_plus - one_minus);
    let sin_new = (one_plus * one_minus).sqrt();
    let ab = a * b;
    let cos_old = (-u.dot(v) / ab).clamp(-1.0, 1.0);
    let sin_old = (u.cross(v).length() / ab).min(1.0);
    let sin_old = if flip { -sin_old } else { sin_old };
    let cos_phi = cos_new * cos_old + sin_new * sin_old;
    let sin_phi = sin_new * cos_old - cos_new * sin_old;
    quat_from_axis_cos_sin(h, cos_phi, sin_phi)
}

/// Start joint (ozz's `ComputeStartJoint`): the delta `E0` that aims the new start→end
/// vector at the target, turns the bend plane about the target axis as the pole mode asks,
/// then adds the twist. Error: pole on the start→target axis. May set
/// [`info::SWIVEL_FALLBACK`].
#[inline]
pub(crate) fn limb_start_joint(
    s: &LimbSetup,
    p0: Vec3,
    e1: Quat,
    l: &LimbSettings,
    info: &mut u32,
) -> Result<Quat, ChainError> {
    let LimbSetup { u, v, limb_len, d, h, .. } = *s;
    let e = u + e1 * v;
    let e_dir = normalize_or(e, d, 1e-12 * limb_len * limb_len);
    let aim = rotation_arc(e_dir, d);
    // The knee lies on the side cross(hinge, d) of the axis.
    let k_now = (aim * h).cross(d); // h ⟂ both bones, so aim·h ⟂ d and |k_now| = 1
    let pole = v3(l.pole_ms);
    let k_want = match l.pole_mode() {
        Some(mode @ (PoleMode::Position | PoleMode::Direction)) => {
            let dir = if mode == PoleMode::Position { pole - p0 } else { pole };
            let k = reject(dir, d);
            if !(k.length_squared() > POLE_ON_AXIS2 * dir.length_squared()) {
                return Err(ChainError::PoleOnAxis);
            }
            Some(k)
        }
        Some(PoleMode::Swivel) => {
            let north = pole.normalize();
            let mut n0 = reject(north, d);
            if !(n0.length_squared() > POLE_ON_AXIS2) {
                n0 = reject(any_orthonormal(north), d);
                *info |= info::SWIVEL_FALLBACK;
            }
            let k0 = n0.normalize().cross(d);
            let (s, c) = sin_cos(l.pole_ms[3]);
            Some(k0 * c + d.cross(k0) * s)
        }
        Some(PoleMode::FkPlane) | None => None,
    };
    let plane = match k_want {
        Some(k) => quat_from_axis_cos_sin(d, k_now.dot(k), d.dot(k_now.cross(k))),
        None => Quat::IDENTITY,
    };
    let twist = l.mid_axis[3];
    Ok(if twist != 0.0 { quat_from_axis_angle(d, twist) * plane * aim } else { plane * aim })
}

/// Result of the pseudo three-bone core: relative deltas of j0, j1, j2 (j3 follows j2).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreeBoneSolution {
    pub e: [Quat; 3],
    pub scale: f32,
    pub reached: bool,
    pub info: u32,
}

/// The pseudo three-bone procedure (docs/ALGORITHMS.md, "Pseudo three-bone IK") on joints `p` with FK rotations `r`,
/// the tip `p[3]` reaching `target`; `ratio` blends j2 between following the limb (0) and
/// its FK orientation (1); `copy_mid` blends toward j1's new orientation itself.
pub(crate) fn solve_three_bone_core(
    p: [Vec3; 4],
    r: [Quat; 4],
    target: Vec3,
    ratio: f32,
    copy_mid: bool,
    l: &LimbSettings,
) -> Result<ThreeBoneSolution, ChainError> {
    let offset = p[3] - p[2];
    let limb_len = (p[1] - p[0]).length() + (p[2] - p[1]).length() + offset.length();
    if !(offset.length() > ZERO_BONE * limb_len) {
        return Err(ChainError::ZeroLengthBone);
    }
    let local2 = r[1].conjugate() * r[2]; // (1)
    let mut sol = solve_limb(p[0], p[1], p[2], r[1], target - offset, l)?; // (2)-(4)
    let mut d2 = Quat::IDENTITY;
    if ratio < 1.0 {
        let r1_new = sol.e0 * sol.e1 * r[1];
        let follow = if copy_mid { r1_new } else { r1_new * local2 }; // (5)
        let r2_new = nlerp(follow, r[2], ratio); // (6)
        d2 = r2_new * r[2].conjugate();
        sol = solve_limb(p[0], p[1], p[2], r[1], target - d2 * offset, l)?; // (7)
    }
    let d1 = sol.e0 * sol.e1;
    Ok(ThreeBoneSolution {
        e: [sol.e0, sol.e1, d1.conjugate() * d2],
        scale: sol.scale,
        reached: sol.reached,
        info: sol.info,
    })
}
