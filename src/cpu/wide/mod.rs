//! SoA batch paths (x86-64 with AVX2): the CPU solvers over [`L`] = 8 chains at once, one
//! AVX lane per chain.
//!
//! The scalar solvers (`cpu::two_bone`, ...) are the reference and the GPU kernels' twins;
//! the functions here are the same math, stage for stage and in the same operation order,
//! written over lanes ([`F`], [`V3`], [`Q`]): each line is one vector instruction, and
//! branches become selects (every lane computes every case and keeps its own). Rust never
//! contracts `a * b + c` into an FMA, so each lane rounds like the scalar code wherever the
//! operation order is the same.
//!
//! Records move in and out through 8×8 transposes of their 32-bit words ([`load_words`],
//! [`store_words`]), so a group of chains costs a few shuffles rather than one scalar load
//! per field and chain.
//!
//! Lanes that are invalid, untouched (weight ≤ 0) or hit any error path are solved again
//! by the scalar solver, so error codes, FK fallbacks and info bits come from one place.
//! `tests/wide.rs` holds the batch path to the scalar one: same status words, positions and
//! rotations within float rounding. CPUs without AVX2 (and other architectures) run the
//! scalar solver chain by chain.
//!
//! Soundness: every intrinsic here needs AVX2. The lane types can only be made by
//! functions marked `#[target_feature(enable = "avx2")]`, which can only be called once
//! AVX2 has been detected ([`available`]); so wherever a lane value exists, AVX2 is there,
//! and the operator impls (which cannot carry `target_feature`) rely on that.

pub(crate) mod fabrik;
pub(crate) mod two_bone;

use std::arch::x86_64::*;

use super::math::sin_cos_poly;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

/// AVX registers per lane value: each operation issues `H` independent instructions, so
/// the long dependency chains of one group (divisions, square roots) overlap.
const H: usize = 2;
/// Chains per group (lanes).
pub(crate) const L: usize = 8 * H;

/// Whether this CPU runs the batch paths (AVX2; detected once, then cached by std).
#[inline]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// One `f32` per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F([__m256; H]);

/// One flag per lane (all bits set or clear).
#[derive(Clone, Copy, Debug)]
pub(crate) struct M([__m256; H]);

/// One `u32` per lane (info bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct U([__m256i; H]);

/// Runs an AVX2 intrinsic expression inside an operator impl.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: a lane value exists, so AVX2 is available (see the module docs).
        unsafe { $e }
    };
}

/// Applies an expression to each of the `H` registers (`|h|` names the index).
macro_rules! each {
    (|$h:ident| $e:expr) => {
        std::array::from_fn(|$h| avx!($e))
    };
}

macro_rules! bin_op {
    ($tr:ident, $f:ident, $intr:ident) => {
        impl $tr for F {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: F) -> F {
                F(each!(|h| $intr(self.0[h], o.0[h])))
            }
        }
        impl $tr<f32> for F {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: f32) -> F {
                F(each!(|h| $intr(self.0[h], _mm256_set1_ps(o))))
            }
        }
        impl $tr<F> for f32 {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: F) -> F {
                F(each!(|h| $intr(_mm256_set1_ps(self), o.0[h])))
            }
        }
    };
}
bin_op!(Add, add, _mm256_add_ps);
bin_op!(Sub, sub, _mm256_sub_ps);
bin_op!(Mul, mul, _mm256_mul_ps);
bin_op!(Div, div, _mm256_div_ps);

impl Neg for F {
    type Output = F;
    #[inline(always)]
    fn neg(self) -> F {
        F(each!(|h| _mm256_xor_ps(self.0[h], _mm256_set1_ps(-0.0))))
    }
}

/// Anything a comparison takes as its right-hand side.
pub(crate) trait IntoF: Copy {
    fn into_f(self, like: F) -> F;
}
impl IntoF for F {
    #[inline(always)]
    fn into_f(self, _: F) -> F {
        self
    }
}
impl IntoF for f32 {
    #[inline(always)]
    fn into_f(self, _: F) -> F {
        F(each!(|_h| _mm256_set1_ps(self)))
    }
}

macro_rules! cmp {
    ($($name:ident $pred:ident),*) => {$(
        /// Lane-wise comparison with Rust's semantics for NaN.
        #[inline(always)]
        pub fn $name(self, o: impl IntoF) -> M {
            {
            let o = o.into_f(self);
            M(each!(|h| _mm256_cmp_ps::<$pred>(self.0[h], o.0[h])))
        }
        }
    )*};
}

impl F {
    /// Every lane `x`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn splat(x: f32) -> F {
        F([_mm256_set1_ps(x); H])
    }
    #[inline(always)]
    pub fn sqrt(self) -> F {
        F(each!(|h| _mm256_sqrt_ps(self.0[h])))
    }
    #[inline(always)]
    pub fn abs(self) -> F {
        F(each!(|h| _mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0[h])))
    }
    #[inline(always)]
    pub fn floor(self) -> F {
        F(each!(|h| _mm256_floor_ps(self.0[h])))
    }
    /// `if a < b { a } else { b }` per lane (equals `f32::min` on non-NaN lanes).
    #[inline(always)]
    pub fn min(self, o: impl IntoF) -> F {
        let o = o.into_f(self);
        F(each!(|h| _mm256_min_ps(self.0[h], o.0[h])))
    }
    /// `if a > b { a } else { b }` per lane (equals `f32::max` on non-NaN lanes).
    #[inline(always)]
    pub fn max(self, o: impl IntoF) -> F {
        let o = o.into_f(self);
        F(each!(|h| _mm256_max_ps(self.0[h], o.0[h])))
    }
    cmp!(lt _CMP_LT_OQ, le _CMP_LE_OQ, gt _CMP_GT_OQ, ge _CMP_GE_OQ, ne_ _CMP_NEQ_UQ);
    /// The lanes as an array.
    #[inline(always)]
    pub fn to_array(self) -> [f32; L] {
        let mut out = [0.0_f32; L];
        for h in 0..H {
            // SAFETY: 8 writable f32 (and AVX2 is available: a lane value exists).
            unsafe { _mm256_storeu_ps(out[8 * h..].as_mut_ptr(), self.0[h]) };
        }
        out
    }
    /// Lanes from an array.
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn from_array(a: [f32; L]) -> F {
        // SAFETY: 8 readable f32 per register.
        F(std::array::from_fn(|h| unsafe { _mm256_loadu_ps(a[8 * h..].as_ptr()) }))
    }
    /// The lanes' 32-bit words as integers.
    #[inline(always)]
    fn bits(self) -> [__m256i; H] {
        each!(|h| _mm256_castps_si256(self.0[h]))
    }
    /// Lanes whose word, read as `u32`, equals `v`.
    #[inline(always)]
    pub fn word_eq(self, v: u32) -> M {
        let b = self.bits();
        M(each!(|h| _mm256_castsi256_ps(_mm256_cmpeq_epi32(b[h], _mm256_set1_epi32(v as i32)))))
    }
    /// Lanes whose word, read as `u32`, has no bit of `mask` set.
    #[inline(always)]
    pub fn word_clear(self, mask: u32) -> M {
        let b = self.bits();
        M(each!(|h| _mm256_castsi256_ps(_mm256_cmpeq_epi32(
            _mm256_and_si256(b[h], _mm256_set1_epi32(mask as i32)),
            _mm256_setzero_si256()
        ))))
    }
    /// Words reinterpreted from integers.
    #[inline(always)]
    fn from_bits(b: [__m256i; H]) -> F {
        F(each!(|h| _mm256_castsi256_ps(b[h])))
    }
}

impl M {
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn splat(b: bool) -> M {
        M([_mm256_castsi256_ps(_mm256_set1_epi32(-i32::from(b))); H])
    }
    /// Bit `i` = lane `i`.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        (0..H).fold(0, |bits, h| bits | (avx!(_mm256_movemask_ps(self.0[h])) as u32) << (8 * h))
    }
    #[inline(always)]
    pub fn any(self) -> bool {
        self.bits() != 0
    }
    /// `a` where set, `b` elsewhere.
    #[inline(always)]
    pub fn sel<T: Select>(self, a: T, b: T) -> T {
        T::select(self, a, b)
    }
    /// 1 where set, 0 elsewhere, as `u32` words.
    #[inline(always)]
    pub fn as_u32_word(self) -> F {
        F::from_bits(each!(|h| _mm256_and_si256(_mm256_castps_si256(self.0[h]), _mm256_set1_epi32(1))))
    }
}

impl BitAnd for M {
    type Output = M;
    #[inline(always)]
    fn bitand(self, o: M) -> M {
        M(each!(|h| _mm256_and_ps(self.0[h], o.0[h])))
    }
}
impl BitOr for M {
    type Output = M;
    #[inline(always)]
    fn bitor(self, o: M) -> M {
        M(each!(|h| _mm256_or_ps(self.0[h], o.0[h])))
    }
}
impl Not for M {
    type Output = M;
    #[inline(always)]
    fn not(self) -> M {
        M(each!(|h| _mm256_xor_ps(self.0[h], _mm256_castsi256_ps(_mm256_set1_epi32(-1)))))
    }
}

impl U {
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn zero() -> U {
        U([_mm256_setzero_si256(); H])
    }
    /// Sets `bit` in the lanes of `m`.
    #[inline(always)]
    pub fn set(&mut self, m: M, bit: u32) {
        self.0 = each!(|h| _mm256_or_si256(
            self.0[h],
            _mm256_and_si256(_mm256_castps_si256(m.0[h]), _mm256_set1_epi32(bit as i32))
        ));
    }
    /// The words as lanes of an [`F`] (for storing).
    #[inline(always)]
    pub fn as_word(self) -> F {
        F::from_bits(self.0)
    }
}

/// Per-lane choice between two values.
pub(crate) trait Select: Copy {
    fn select(m: M, a: Self, b: Self) -> Self;
}
impl Select for F {
    #[inline(always)]
    fn select(m: M, a: F, b: F) -> F {
        F(each!(|h| _mm256_blendv_ps(b.0[h], a.0[h], m.0[h])))
    }
}
impl Select for M {
    #[inline(always)]
    fn select(m: M, a: M, b: M) -> M {
        M(each!(|h| _mm256_blendv_ps(b.0[h], a.0[h], m.0[h])))
    }
}
impl Select for V3 {
    #[inline(always)]
    fn select(m: M, a: V3, b: V3) -> V3 {
        V3 { x: m.sel(a.x, b.x), y: m.sel(a.y, b.y), z: m.sel(a.z, b.z) }
    }
}
impl Select for Q {
    #[inline(always)]
    fn select(m: M, a: Q, b: Q) -> Q {
        Q { x: m.sel(a.x, b.x), y: m.sel(a.y, b.y), z: m.sel(a.z, b.z), w: m.sel(a.w, b.w) }
    }
}

/// A 3-vector per lane (glam's `Vec3` operation order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct V3 {
    pub x: F,
    pub y: F,
    pub z: F,
}

impl V3 {
    /// Words `w..w + 3` of a transposed record.
    #[inline(always)]
    pub fn at(words: &[F], w: usize) -> V3 {
        V3 { x: words[w], y: words[w + 1], z: words[w + 2] }
    }
    #[inline(always)]
    pub fn dot(self, o: V3) -> F {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    #[inline(always)]
    pub fn cross(self, o: V3) -> V3 {
        V3 { x: self.y * o.z - o.y * self.z, y: self.z * o.x - o.z * self.x, z: self.x * o.y - o.x * self.y }
    }
    #[inline(always)]
    pub fn length_squared(self) -> F {
        self.dot(self)
    }
    #[inline(always)]
    pub fn length(self) -> F {
        self.dot(self).sqrt()
    }
    /// glam's `normalize`: `self * (1 / |self|)`.
    #[inline(always)]
    pub fn normalize(self) -> V3 {
        self * (1.0 / self.length())
    }
    /// Writes `(x, y, z, 1)` to words `w..w + 4` of a record being transposed out.
    #[inline(always)]
    pub fn put_point(self, words: &mut [F], w: usize, one: F) {
        words[w..w + 4].copy_from_slice(&[self.x, self.y, self.z, one]);
    }
}

impl Add for V3 {
    type Output = V3;
    #[inline(always)]
    fn add(self, o: V3) -> V3 {
        V3 { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}
impl Sub for V3 {
    type Output = V3;
    #[inline(always)]
    fn sub(self, o: V3) -> V3 {
        V3 { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}
impl Mul<F> for V3 {
    type Output = V3;
    #[inline(always)]
    fn mul(self, s: F) -> V3 {
        V3 { x: self.x * s, y: self.y * s, z: self.z * s }
    }
}
impl Neg for V3 {
    type Output = V3;
    #[inline(always)]
    fn neg(self) -> V3 {
        V3 { x: -self.x, y: -self.y, z: -self.z }
    }
}

/// A quaternion per lane (`x, y, z, w`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Q {
    pub x: F,
    pub y: F,
    pub z: F,
    pub w: F,
}

impl Q {
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn identity() -> Q {
        let (zero, one) = (F::splat(0.0), F::splat(1.0));
        Q { x: zero, y: zero, z: zero, w: one }
    }
    /// Words `w..w + 4` of a transposed record.
    #[inline(always)]
    pub fn at(words: &[F], w: usize) -> Q {
        Q { x: words[w], y: words[w + 1], z: words[w + 2], w: words[w + 3] }
    }
    /// Writes the quaternion to words `w..w + 4` of a record being transposed out.
    #[inline(always)]
    pub fn put(self, words: &mut [F], w: usize) {
        words[w..w + 4].copy_from_slice(&[self.x, self.y, self.z, self.w]);
    }
    #[inline(always)]
    pub fn from_v3(v: V3, w: F) -> Q {
        Q { x: v.x, y: v.y, z: v.z, w }
    }
    #[inline(always)]
    pub fn dot(self, o: Q) -> F {
        self.x * o.x + self.y * o.y + self.z * o.z + self.w * o.w
    }
    #[inline(always)]
    pub fn conjugate(self) -> Q {
        Q { x: -self.x, y: -self.y, z: -self.z, w: self.w }
    }
    #[inline(always)]
    pub fn neg(self) -> Q {
        Q { x: -self.x, y: -self.y, z: -self.z, w: -self.w }
    }
    /// `self * (1 / |self|)`.
    #[inline(always)]
    pub fn normalize(self) -> Q {
        let r = 1.0 / self.dot(self).sqrt();
        Q { x: self.x * r, y: self.y * r, z: self.z * r, w: self.w * r }
    }
    /// Hamilton product `self · o`.
    #[inline(always)]
    pub fn mul(self, o: Q) -> Q {
        let (x0, y0, z0, w0) = (self.x, self.y, self.z, self.w);
        let (x1, y1, z1, w1) = (o.x, o.y, o.z, o.w);
        Q {
            x: w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
            y: w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
            z: w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1,
            w: w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
        }
    }
    /// Rotates `v` (glam's formula).
    #[inline(always)]
    pub fn rotate(self, v: V3) -> V3 {
        let b = V3 { x: self.x, y: self.y, z: self.z };
        let w = self.w;
        let b2 = b.dot(b);
        v * (w * w - b2) + b * (v.dot(b) * 2.0) + b.cross(v) * (w * 2.0)
    }
}

/// `cpu::math::reject` over lanes.
#[inline(always)]
pub(crate) fn reject(v: V3, n: V3) -> V3 {
    v - n * v.dot(n)
}

/// `cpu::math::normalize_or` over lanes.
#[inline(always)]
pub(crate) fn normalize_or(v: V3, fallback: V3, min_len2: F) -> V3 {
    let len2 = v.length_squared();
    len2.gt(min_len2).sel(v * (1.0 / len2.sqrt()), fallback)
}

/// `cpu::math::any_orthonormal` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn any_orthonormal(v: V3) -> V3 {
    let sign = v.z.ge(0.0).sel(F::splat(1.0), F::splat(-1.0));
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    V3 { x: b, y: sign + v.y * v.y * a, z: -v.y }
}

/// `cpu::math::rotation_arc` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn rotation_arc(from: V3, to: V3) -> Q {
    let half = from + to;
    let half2 = half.length_squared();
    let general = Q::from_v3(from.cross(to), 0.5 * half2).normalize();
    let singular = half2.lt(1e-12);
    if singular.any() {
        return singular.sel(Q::from_v3(any_orthonormal(from), F::splat(0.0)), general);
    }
    general
}

/// `cpu::math::quat_from_axis_cos_sin` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn quat_from_axis_cos_sin(axis: V3, c: F, s: F) -> Q {
    let r2 = c * c + s * s;
    let r = r2.sqrt();
    let q = c.ge(0.0).sel(Q::from_v3(axis * s, r + c), Q::from_v3(axis * (r - c), s));
    r2.le(0.0).sel(Q::identity(), q.normalize())
}

/// `cpu::math::sin_cos` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn sin_cos(x: F) -> (F, F) {
    const TAU: f32 = std::f32::consts::TAU;
    const PI: f32 = std::f32::consts::PI;
    const HALF_PI: f32 = std::f32::consts::FRAC_PI_2;
    let k = (x * (1.0 / TAU) + 0.5).floor();
    let r = x - k * TAU;
    let hi = r.gt(HALF_PI);
    let lo = r.lt(-HALF_PI);
    let r = hi.sel(PI - r, lo.sel(-PI - r, r));
    let cos_sign = (hi | lo).sel(F::splat(-1.0), F::splat(1.0));
    let (s, c) = sin_cos_poly(r);
    (s, c * cos_sign)
}

/// `cpu::math::quat_from_axis_angle` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn quat_from_axis_angle(axis: V3, angle: F) -> Q {
    let (s, c) = sin_cos(angle * 0.5);
    Q::from_v3(axis * s, c)
}

/// `cpu::math::nlerp_identity` over lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn nlerp_identity(q: Q, weight: F) -> Q {
    let q = q.w.lt(0.0).sel(q.neg(), q);
    let full = weight.ge(1.0);
    if full.bits() == u32::MAX >> (32 - L) {
        return q;
    }
    let w = weight.max(0.0);
    let id = Q::identity();
    let l = Q {
        x: id.x + (q.x - id.x) * w,
        y: id.y + (q.y - id.y) * w,
        z: id.z + (q.z - id.z) * w,
        w: id.w + (q.w - id.w) * w,
    };
    full.sel(q, l.normalize())
}

/// `cpu::chain::finish_chain` over lanes for the joints `p` (`n` = `p.len()`) with FK
/// rotations `r`, relative deltas `rel` and one stretch `scale` for every bone (bone `i`
/// = `p[i] → p[i+1]`). Writes positions, rotations and corrections of the `n` joints and
/// the status into `out`, the words of a `SolvedChain<cap>` (`12·cap + 4`; the words of
/// joints past `n` are left alone).
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::too_many_arguments)] // mirrors finish_chain
pub(crate) fn finish_chain(
    p: &[V3],
    r: &[Q],
    rel: &[Q],
    cap: usize,
    scale: F,
    weight: F,
    reached: M,
    info: U,
    out: &mut [F],
) {
    let n = p.len();
    let one = F::splat(1.0);
    let mut delta = Q::identity();
    let mut pos = p[0];
    let grow = 1.0 + (scale - 1.0) * weight.max(0.0).min(1.0);
    for j in 0..n {
        let e = nlerp_identity(rel[j], weight);
        delta = delta.mul(e);
        pos.put_point(out, 4 * j, one);
        delta.mul(r[j]).normalize().put(out, 4 * (cap + j));
        r[j].conjugate().mul(e).mul(r[j]).put(out, 4 * (2 * cap + j));
        if j + 1 < n {
            pos = pos + delta.rotate(p[j + 1] - p[j]) * grow;
        }
    }
    let zero = F::splat(0.0);
    let status = [(reached & weight.ge(1.0)).as_u32_word(), zero, info.as_word(), zero];
    out[12 * cap..12 * cap + 4].copy_from_slice(&status);
}

/// Lanes whose `|q|² − 1| ≤ 1e-3` (`cpu::math::is_unit_quat`).
#[inline(always)]
pub(crate) fn is_unit_quat(q: Q) -> M {
    (q.dot(q) - 1.0).abs().le(1e-3)
}

/// Lanes whose words are all finite as `f32`: `Σ x·0` is 0 exactly then. (Mode words are
/// small integers, i.e. finite subnormals; any other bit pattern only sends a lane to the
/// scalar path, which decides for itself.)
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn all_finite(words: &[F]) -> M {
    let zero = F::splat(0.0);
    let mut acc = zero;
    for &w in words {
        acc = acc + w * 0.0;
    }
    acc.ge(zero) & acc.le(zero)
}

/// Transposes an 8×8 block: `r[j]` lane `i` becomes `out[i]` lane `j`.
#[target_feature(enable = "avx2")]
#[inline]
fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ]
}

/// The `W` 32-bit words of [`L`] records, transposed: `out[w]` lane `i` = word `w` of
/// `src[i]`. `W` must be a multiple of 8 and `T` exactly `W` words.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn load_words<T: bytemuck::Pod, const W: usize>(src: &[T; L]) -> [F; W] {
    assert!(size_of::<T>() == 4 * W);
    let mut out = [F::splat(0.0); W];
    load_words_at(src, 0, &mut out);
    out
}

/// Words `at..at + out.len()` of [`L`] records, transposed into `out` (`out.len()` a
/// multiple of 8, the range inside the record).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn load_words_at<T: bytemuck::Pod>(src: &[T; L], at: usize, out: &mut [F]) {
    assert!(out.len().is_multiple_of(8) && 4 * (at + out.len()) <= size_of::<T>());
    for block in 0..out.len() / 8 {
        let w = at + 8 * block;
        for h in 0..H {
            let rows: [__m256; 8] = std::array::from_fn(|i| {
                let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[8 * h + i]));
                let chunk: &[f32; 8] = words[w..w + 8].try_into().expect("8 words");
                // SAFETY: `chunk` is 8 readable f32 (unaligned loads are allowed).
                unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
            });
            for (k, col) in transpose8(rows).into_iter().enumerate() {
                out[8 * block + k].0[h] = col;
            }
        }
    }
}

/// Stores transposed words back: word `w` of `dst[i]` = `words[w]` lane `i`. `T` must be
/// exactly `words.len()` words.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn store_words<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L]) {
    assert!(size_of::<T>() == 4 * words.len());
    store_words_at(words, dst, 0);
}

/// Stores transposed words to words `at..at + words.len()` of each record (the range
/// inside the record); a last partial block is stored lane by lane.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn store_words_at<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], at: usize) {
    let n = words.len();
    assert!(4 * (at + n) <= size_of::<T>());
    let full = n / 8;
    for block in 0..full {
        let w = at + 8 * block;
        for h in 0..H {
            let cols = transpose8(std::array::from_fn(|k| words[8 * block + k].0[h]));
            for (i, row) in cols.into_iter().enumerate() {
                let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[8 * h + i]));
                let chunk: &mut [f32; 8] = (&mut out[w..w + 8]).try_into().expect("8 words");
                // SAFETY: `chunk` is 8 writable f32 (unaligned stores are allowed).
                unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), row) };
            }
        }
    }
    let rest = &words[full * 8..];
    if !rest.is_empty() {
        let mut lanes = [[0.0_f32; L]; 8];
        for (l, w) in lanes.iter_mut().zip(rest) {
            *l = w.to_array();
        }
        for (i, d) in dst.iter_mut().enumerate() {
            let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(d));
            for (k, o) in out[at + full * 8..at + n].iter_mut().enumerate() {
                *o = lanes[k][i];
            }
        }
    }
}

/// A solver over one group of [`L`] chains.
pub(crate) trait Kernel {
    type Chain: bytemuck::Pod;
    type Solved: bytemuck::Pod;
    /// Solves `c` into `out` (only ever called with AVX2 available).
    fn group(c: &[Self::Chain; L], out: &mut [Self::Solved; L]);
}

/// Runs `K` over `chains` in groups of [`L`]; `false` (nothing done) when the CPU has no
/// AVX2. The last group is padded with copies of its first chain (their results are
/// dropped), so every chain's result is independent of where it sits in the batch.
pub(crate) fn run<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: AVX2 is available (checked just above).
    unsafe { groups::<K>(chains, out) };
    true
}

#[target_feature(enable = "avx2")]
fn groups<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    let mut cs = chains.chunks_exact(L);
    let mut os = out.chunks_exact_mut(L);
    for (c, o) in (&mut cs).zip(&mut os) {
        K::group(c.try_into().expect("chunk of L"), o.try_into().expect("chunk of L"));
    }
    let (rest, rest_out) = (cs.remainder(), os.into_remainder());
    if let Some(&first) = rest.first() {
        let mut c = [first; L];
        c[..rest.len()].copy_from_slice(rest);
        let mut o = [rest_out[0]; L];
        K::group(&c, &mut o);
        rest_out.copy_from_slice(&o[..rest.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposes_round_trip_and_sin_cos_matches_scalar() {
        if !available() {
            return;
        }
        // SAFETY: AVX2 is available.
        unsafe { check() };
        #[target_feature(enable = "avx2")]
        fn check() {
            let src: [[f32; 16]; L] = std::array::from_fn(|i| std::array::from_fn(|w| (i * 100 + w) as f32));
            let words = load_words::<[f32; 16], 16>(&src);
            assert_eq!(words[5].to_array(), std::array::from_fn(|i| (i * 100 + 5) as f32));
            let mut back = [[0.0_f32; 16]; L];
            store_words(&words, &mut back);
            assert_eq!(back, src);
            let mut back12 = [[0.0_f32; 12]; L];
            store_words(&words[..12], &mut back12);
            assert!(back12.iter().zip(&src).all(|(b, s)| b[..] == s[..12]));

            let x: [f32; L] = std::array::from_fn(|i| i as f32 * 1.7 - 6.0);
            let (s, c) = sin_cos(F::from_array(x));
            let (sl, cl) = (s.to_array(), c.to_array());
            for i in 0..L {
                assert_eq!((sl[i], cl[i]), crate::cpu::math::sin_cos(x[i]));
            }
        }
    }
}
