//! An independent statement of the joint limits of constrained FABRIK and CCD
//! (`crowd_ik::records::ChainLimits`), written from the limits' definitions rather than the
//! solvers' code: what the tests and the fuzz targets check solved chains against.

use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::{ConstrainedFabrikChain, FabrikSolved};
use crowd_ik::records::limit;

const PI: f32 = std::f32::consts::PI;

/// Angle between two rotations, sign-insensitive and accurate near zero.
fn quat_angle(a: Quat, b: Quat) -> f32 {
    let r = a.conjugate() * b;
    2.0 * r.xyz().length().atan2(r.w.abs())
}

/// `a` moved into `[lo, hi]` around the circle, as a distance (0 inside).
fn outside(a: f32, lo: f32, hi: f32) -> f32 {
    if a >= lo && a <= hi {
        return 0.0;
    }
    let wrap = |x: f32| (x + PI).rem_euclid(2.0 * PI) - PI;
    wrap(a - lo).abs().min(wrap(a - hi).abs())
}

/// How far (radians) joint `i` of a solved chain is outside its limit, from the solved model
/// rotations: the deviation `D = rest⁻¹ · parent⁻¹ · R`; a hinge allows only turns about its
/// axis within its range; a cone bounds the swing's angle by the ellipse in the swing
/// direction; a twist range bounds the twist about the bone.
pub fn violation(c: &ConstrainedFabrikChain, s: &FabrikSolved, i: usize) -> f32 {
    let kind = c.limits.kind(i);
    if kind == 0 {
        return 0.0;
    }
    let l = &c.limits.joints[i];
    let parent = if i == 0 { Quat::from_array(c.limits.parent_ms) } else { s.rotation(i - 1) };
    let d = Quat::from_array(l.rest).conjugate() * parent.conjugate() * s.rotation(i);
    let bone = (c.chain.rotation(i).conjugate() * (c.chain.joint(i + 1) - c.chain.joint(i))).normalize();
    // The axis as a direction (scaled first: any finite length); a circular cone, the only
    // limit that accepts one along the bone, does not depend on it.
    let axis = Vec3::from_slice(&l.axis[..3]);
    let axis = (axis / axis.abs().max_element()).normalize_or_zero();
    let u = (axis - bone * axis.dot(bone)).try_normalize().unwrap_or_else(|| bone.any_orthonormal_vector());
    let r = l.range;
    if kind == limit::HINGE {
        let dir = d * bone;
        let theta = dir.dot(u.cross(bone)).atan2(dir.dot(bone));
        let clamped = theta.clamp(r[0], r[1]);
        return quat_angle(d, Quat::from_axis_angle(u, theta))
            + outside(theta, r[0], r[1]).min((theta - clamped).abs());
    }
    let d = if d.w < 0.0 { -d } else { d };
    let t = (bone * d.xyz().dot(bone)).extend(d.w);
    let twist = if t.length_squared() > 1e-12 { Quat::from_vec4(t.normalize()) } else { Quat::IDENTITY };
    let swing = d * twist.conjugate();
    let mut worst: f32 = 0.0;
    // The twist is undefined at a swing of a half turn (`t` → 0) and ill-conditioned near
    // it (a rounding error ε moves it by ~ε/|t|): within ~2° of a half-turn swing it is not
    // checked.
    if kind & limit::TWIST != 0 && t.length() > 0.02 {
        let tau = 2.0 * twist.xyz().dot(bone).atan2(twist.w);
        worst = worst.max(outside(tau, r[2], r[3]));
    }
    if kind & limit::CONE != 0 {
        let (axis, phi) = swing.to_axis_angle();
        let phi = if phi > PI { 2.0 * PI - phi } else { phi };
        let (a, b) = (axis.dot(u) / r[0], axis.dot(bone.cross(u)) / r[1]);
        let max = 1.0 / (a * a + b * b).sqrt();
        worst = worst.max(phi - max);
    }
    worst
}
