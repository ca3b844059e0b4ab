//! Vector and quaternion helpers: the CPU twin of `shaders/shared/math.wgsl`.
//!
//! Every function here has a WGSL function of the same name, written to read line for line
//! alike; singular branches are copied from glam (`Quat::from_rotation_arc`,
//! `Vec3::any_orthonormal_vector`) so that CPU and GPU take the same branch on degenerate
//! chains. Change both files together.

use std::ops::{Add, Mul};

use glam::{Quat, Vec3};

use crate::constants::{HALF_TURN_W, HEMISPHERE_X, HEMISPHERE_Y, HEMISPHERE_Z, MAX_COORDINATE, TAU_HI, TAU_LO};

/// `x`, `y`, `z` within ±[`MAX_COORDINATE`] (`w` not looked at; NaN is out of range).
#[inline]
pub(crate) fn in_range(a: [f32; 4]) -> bool {
    a[0].abs() <= MAX_COORDINATE && a[1].abs() <= MAX_COORDINATE && a[2].abs() <= MAX_COORDINATE
}

/// `true` when all four lanes are finite.
#[inline]
pub(crate) fn finite4(a: [f32; 4]) -> bool {
    a.iter().all(|x| x.is_finite())
}

/// `p` when all four lanes are finite, else the origin `(0, 0, 0, 1)`: fallbacks never
/// pass NaN or inf on.
#[inline]
pub(crate) fn finite_point(p: [f32; 4]) -> [f32; 4] {
    if finite4(p) {
        [p[0], p[1], p[2], 1.0]
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// `q` when all four lanes are finite, else the identity rotation.
#[inline]
pub(crate) fn finite_rotation(q: [f32; 4]) -> [f32; 4] {
    if finite4(q) {
        q
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// `x`, or 0 when it is subnormal: what a GPU that flushes subnormals reads, so a check
/// made on it decides alike on every path (`math.wgsl` is the twin).
#[inline]
pub(crate) fn flush_subnormal(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE {
        0.0
    } else {
        x
    }
}

/// `true` when `| |q|² − 1 | ≤ 1e-3`.
#[inline]
pub(crate) fn is_unit_quat(q: Quat) -> bool {
    (q.length_squared() - 1.0).abs() <= crate::constants::UNIT_QUAT_TOLERANCE
}

/// Component of `v` perpendicular to the unit vector `n`.
#[inline]
pub(crate) fn reject(v: Vec3, n: Vec3) -> Vec3 {
    v - n * v.dot(n)
}

/// `v / |v|`, or `fallback` when `|v|² ≤ min_len2`.
#[inline]
pub(crate) fn normalize_or(v: Vec3, fallback: Vec3, min_len2: f32) -> Vec3 {
    let len2 = v.length_squared();
    if len2 > min_len2 {
        v * (1.0 / len2.sqrt())
    } else {
        fallback
    }
}

/// glam's `Vec3::any_orthonormal_vector` (Pixar's branchless basis), with the sign of
/// `z` taken as `+1` for `z ≥ 0` (WGSL's `sign(0)` is 0, Rust's `signum(-0.0)` is −1).
#[inline]
pub(crate) fn any_orthonormal(v: Vec3) -> Vec3 {
    let sign = if v.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    Vec3::new(b, sign + v.y * v.y * a, -v.y)
}

/// Shortest-arc rotation between unit vectors: glam's `Quat::from_rotation_arc` with its
/// half-turn branch (a half turn about [`any_orthonormal`]`(from)`, written as the exact
/// `(axis, 0)`) and a better-conditioned general branch:
///
/// - `w = 1 + from·to` is computed as `½|from + to|²` (equal for unit vectors). Near a half
///   turn `1 + dot` cancels catastrophically (angle error ~6e-8/δ rad at 180° − δ); the
///   vector sum does not, and FABRIK bones routinely flip by nearly 180°.
/// - glam's identity branch (`dot > 1 − 2ε`) throws away every rotation below ~6.9e-4 rad
///   (2e-4 of position on a 0.3 bone). It is not needed: at `from = to` the general branch
///   gives `(0, 0, 0, 2)`, exactly the identity once normalised.
/// - The half-turn branch is taken only where the general one is singular:
///   `|from + to| < 1e-6` (within 1e-6 rad of a half turn).
/// - The axis `from × to` is computed as `from × (to − from)` when the angle is below a
///   quarter turn and as `from × (from + to)` above (equal, since `from × from = 0`): the
///   second factor is then the small one, so the cross product does not cancel. Taken
///   directly, `from × to` of nearly opposite vectors has an absolute error of ~1e-7, which
///   at 1e-4 rad from a half turn tilts the axis by ~1e-3 out of the plane of the two
///   vectors: a roll about the bone the arc is meant to swing.
#[inline]
pub(crate) fn rotation_arc(from: Vec3, to: Vec3) -> Quat {
    let half = from + to;
    let half2 = half.length_squared();
    if half2 < 1e-12 {
        let axis = any_orthonormal(from);
        Quat::from_xyzw(axis.x, axis.y, axis.z, 0.0)
    } else {
        let c = if half2 >= 2.0 { from.cross(to - from) } else { from.cross(half) };
        Quat::from_xyzw(c.x, c.y, c.z, 0.5 * half2).normalize()
    }
}

/// Rotation about the unit `axis` by the angle whose cosine and sine are proportional to
/// `(c, s)`; trig-free and accurate at every angle (no `sqrt(1 − c²)` cancellation):
/// `(axis·s, 1 + c)` for `c ≥ 0`, `(axis·(1 − c), s)` otherwise, normalised.
/// `(0, 0)` gives the identity.
#[inline]
pub(crate) fn quat_from_axis_cos_sin(axis: Vec3, c: f32, s: f32) -> Quat {
    let r2 = c * c + s * s;
    if r2 <= 0.0 {
        return Quat::IDENTITY;
    }
    // With r = |(c, s)|: (axis·s, r + c) and (axis·(r − c), s) are both proportional to the
    // half-angle quaternion, so (c, s) needs no normalising of its own.
    let r = r2.sqrt();
    let q = if c >= 0.0 { (axis * s).extend(r + c) } else { (axis * (r - c)).extend(s) };
    Quat::from_vec4(q.normalize())
}

/// `(sin x, cos x)` from one range reduction to `[−π/2, π/2]` and Taylor polynomials to
/// the 13th/14th power (error < 1e-9 there). WGSL only promises `2⁻¹¹` absolute error for
/// its built-in `sin`/`cos`; both twins use this polynomial so they agree to rounding.
#[inline]
pub(crate) fn sin_cos(x: f32) -> (f32, f32) {
    const TAU: f32 = std::f32::consts::TAU;
    const PI: f32 = std::f32::consts::PI;
    const HALF_PI: f32 = std::f32::consts::FRAC_PI_2;
    let k = (x * (1.0 / TAU) + 0.5).floor();
    let mut r = (x - k * TAU_HI) - k * TAU_LO; // [−π, π]
    let mut cos_sign = 1.0;
    if r > HALF_PI {
        r = PI - r;
        cos_sign = -1.0;
    } else if r < -HALF_PI {
        r = -PI - r;
        cos_sign = -1.0;
    }
    let (s, c) = sin_cos_poly(r);
    (s, c * cos_sign)
}

/// The Taylor polynomials of [`sin_cos`] on `[−π/2, π/2]`, written once for every lane type
/// (`f32` here, the AVX lanes of `cpu::wide`), so each twin evaluates the same coefficients
/// in the same order.
#[inline(always)]
pub(crate) fn sin_cos_poly<T>(r: T) -> (T, T)
where
    T: Copy + Mul<Output = T> + Mul<f32, Output = T>,
    f32: Add<T, Output = T>,
{
    let r2 = r * r;
    let s = r
        * (1.0
            + r2 * (-1.0 / 6.0
                + r2 * (1.0 / 120.0
                    + r2 * (-1.0 / 5040.0
                        + r2 * (1.0 / 362_880.0 + r2 * (-1.0 / 39_916_800.0 + r2 * (1.0 / 6_227_020_800.0)))))));
    let c = 1.0
        + r2 * (-0.5
            + r2 * (1.0 / 24.0
                + r2 * (-1.0 / 720.0
                    + r2 * (1.0 / 40_320.0
                        + r2 * (-1.0 / 3_628_800.0 + r2 * (1.0 / 479_001_600.0 + r2 * (-1.0 / 87_178_291_200.0)))))));
    (s, c)
}

/// `atan2(y, x)` in `[−π, π]` from one division, two range reductions and a Taylor
/// polynomial (error < 1e-7 rad); `(0, 0)` gives 0. WGSL's built-in `atan2` has no
/// promised accuracy, so both twins use this one and agree to rounding.
#[inline]
pub(crate) fn atan2(y: f32, x: f32) -> f32 {
    const PI: f32 = std::f32::consts::PI;
    const TAN_PI_12: f32 = 0.267_949_2;
    const INV_SQRT3: f32 = 0.577_350_26;
    let (ax, ay) = (x.abs(), y.abs());
    let hi = ax.max(ay);
    if hi == 0.0 {
        return 0.0;
    }
    // a = tan of the angle in [0, π/4], reduced again below tan(π/12).
    let a = ax.min(ay) / hi;
    let big = a > TAN_PI_12;
    let r = if big { (a - INV_SQRT3) / (1.0 + a * INV_SQRT3) } else { a };
    let r2 = r * r;
    let mut t = r
        * (1.0
            + r2 * (-1.0 / 3.0
                + r2 * (1.0 / 5.0 + r2 * (-1.0 / 7.0 + r2 * (1.0 / 9.0 + r2 * (-1.0 / 11.0 + r2 * (1.0 / 13.0)))))));
    if big {
        t += PI / 6.0;
    }
    if ay > ax {
        t = PI / 2.0 - t;
    }
    if x < 0.0 {
        t = PI - t;
    }
    if y < 0.0 {
        -t
    } else {
        t
    }
}

/// Rotation about the unit `axis` by `angle` radians (glam's `Quat::from_axis_angle`, with
/// [`sin_cos`]).
#[inline]
pub(crate) fn quat_from_axis_angle(axis: Vec3, angle: f32) -> Quat {
    let (s, c) = sin_cos(angle * 0.5);
    Quat::from_xyzw(axis.x * s, axis.y * s, axis.z * s, c)
}

/// The same rotation with `w ≥ 0` (required to nlerp from identity the short way).
#[inline]
pub(crate) fn fix_w(q: Quat) -> Quat {
    if flip_hemisphere(q) {
        -q
    } else {
        q
    }
}

/// Whether [`fix_w`] negates `q`: `w < 0`, or within [`HALF_TURN_W`] of a half turn, the
/// vector part on the negative side of the fixed `HEMISPHERE` direction. Either sign is
/// the same rotation; the choice only decides which way a partial weight turns, and near a
/// half turn the sign of `w` is rounding (it differed between the scalar and SIMD paths).
#[inline]
pub(crate) fn flip_hemisphere(q: Quat) -> bool {
    if q.w.abs() > HALF_TURN_W {
        q.w < 0.0
    } else {
        HEMISPHERE_X * q.x + HEMISPHERE_Y * q.y + HEMISPHERE_Z * q.z < 0.0
    }
}

/// ozz-animation's weighting of a correction: `w`-fixed `q` at `weight ≥ 1`, otherwise the
/// normalised lerp from identity to it by `max(weight, 0)`.
#[inline]
pub(crate) fn nlerp_identity(q: Quat, weight: f32) -> Quat {
    let q = fix_w(q);
    if weight >= 1.0 {
        return q;
    }
    let w = weight.max(0.0);
    let l = Quat::IDENTITY.lerp_raw(q, w);
    l.normalize()
}

/// Normalised lerp from `a` to `b` along the shorter arc.
#[inline]
pub(crate) fn nlerp(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    a.lerp_raw(b, t).normalize()
}

/// Plain component lerp of two quaternions (no normalisation); kept as a trait so the call
/// sites read like the WGSL `mix`.
trait LerpRaw {
    fn lerp_raw(self, other: Self, t: f32) -> Self;
}

impl LerpRaw for Quat {
    #[inline]
    fn lerp_raw(self, other: Self, t: f32) -> Self {
        Quat::from_vec4(glam::Vec4::from(self) + (glam::Vec4::from(other) - glam::Vec4::from(self)) * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_arc_matches_glam_including_singular_branches() {
        let cases = [
            (Vec3::X, Vec3::Y),
            (Vec3::X, Vec3::X),
            (Vec3::X, -Vec3::X),
            (Vec3::new(0.3, -0.4, 0.866).normalize(), Vec3::new(-0.1, 0.9, 0.2).normalize()),
            (Vec3::Z, -Vec3::Z),
            (-Vec3::Z, Vec3::Z),
        ];
        for (from, to) in cases {
            let ours = rotation_arc(from, to);
            let glam = Quat::from_rotation_arc(from, to);
            assert!((ours * from - to).length() < 1e-6, "{from} -> {to}: {ours}");
            assert!(ours.dot(glam).abs() > 1.0 - 1e-5, "{ours} vs glam {glam}");
        }
        // Small and near-half-turn angles stay exact, where glam's thresholds snap.
        for angle in [1e-5_f32, 1e-4, 5e-4, std::f32::consts::PI - 1e-3, std::f32::consts::PI - 1e-5] {
            let to = Quat::from_axis_angle(Vec3::Z, angle) * Vec3::X;
            let ours = rotation_arc(Vec3::X, to);
            assert!(
                (ours * Vec3::X - to).length() < 2e-7 * angle.max(1.0),
                "angle {angle}: {}",
                (ours * Vec3::X - to).length()
            );
        }
    }

    #[test]
    fn axis_cos_sin_is_accurate_at_small_and_half_turn_angles() {
        for angle in [0.0_f32, 1e-6, 1e-4, 0.3, 1.5, 3.0, std::f32::consts::PI - 1e-5, std::f32::consts::PI, -2.0, 5.0]
        {
            let q = quat_from_axis_cos_sin(Vec3::Y, angle.cos() * 2.0, angle.sin() * 2.0);
            let r = Quat::from_axis_angle(Vec3::Y, angle);
            assert!(q.dot(r).abs() > 1.0 - 1e-6, "angle {angle}: {q} vs {r}");
        }
        assert_eq!(quat_from_axis_cos_sin(Vec3::Y, 0.0, 0.0), Quat::IDENTITY);
    }

    #[test]
    fn sin_cos_is_accurate() {
        let mut worst = 0.0_f64;
        for i in -20_000..=20_000 {
            let x = i as f32 * 1e-3;
            let (s, c) = sin_cos(x);
            let xd = f64::from(x);
            worst = worst.max((f64::from(s) - xd.sin()).abs()).max((f64::from(c) - xd.cos()).abs());
        }
        assert!(worst < 1e-6, "worst {worst:e}");
    }

    #[test]
    fn any_orthonormal_is_orthonormal() {
        for v in [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::Z, Vec3::new(0.6, 0.0, -0.8)] {
            let o = any_orthonormal(v);
            assert!(o.dot(v).abs() < 1e-6 && (o.length() - 1.0).abs() < 1e-6, "{v} -> {o}");
        }
    }

    #[test]
    fn nlerp_identity_weights() {
        let q = Quat::from_axis_angle(Vec3::X, 1.0);
        assert_eq!(nlerp_identity(q, 1.0), q);
        assert!(nlerp_identity(q, 0.0).dot(Quat::IDENTITY) > 1.0 - 1e-7);
        assert!(nlerp_identity(-q, 2.0).w >= 0.0);
    }
}
