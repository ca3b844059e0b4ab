//! AVX2's register table: what one `__m256` register does for the shared lane code
//! (`wide/isa.rs`). Masks are all-ones/all-zeros vectors. Every entry is one intrinsic
//! (or a short fixed sequence); nothing here knows about chains or records.

use std::arch::x86_64::*;

use super::lanes::Kernel;

/// A register of 8 `f32`.
pub(crate) type R = __m256;
/// A register of 8 `u32`.
pub(crate) type I = __m256i;
/// One flag per lane of a register (all bits of the lane set or clear).
pub(crate) type K = __m256;

/// Lanes per register.
pub(crate) const W: usize = 8;
/// 128-bit quarters (four `f32`) per register.
pub(crate) const Q: usize = W / 4;

/// Whether this CPU has AVX2 (detected once, then cached by std).
#[inline]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Every group of the batch, compiled with AVX2 (the kernel is inlined into it).
#[target_feature(enable = "avx2")]
pub(crate) fn groups<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    super::lanes::each_group::<K>(chains, out);
}

#[inline(always)]
pub(crate) fn set1(x: f32) -> R {
    avx!(_mm256_set1_ps(x))
}
#[inline(always)]
pub(crate) fn add(a: R, b: R) -> R {
    avx!(_mm256_add_ps(a, b))
}
#[inline(always)]
pub(crate) fn sub(a: R, b: R) -> R {
    avx!(_mm256_sub_ps(a, b))
}
#[inline(always)]
pub(crate) fn mul(a: R, b: R) -> R {
    avx!(_mm256_mul_ps(a, b))
}
#[inline(always)]
pub(crate) fn div(a: R, b: R) -> R {
    avx!(_mm256_div_ps(a, b))
}
#[inline(always)]
pub(crate) fn neg(a: R) -> R {
    avx!(_mm256_xor_ps(a, _mm256_set1_ps(-0.0)))
}
#[inline(always)]
pub(crate) fn sqrt(a: R) -> R {
    avx!(_mm256_sqrt_ps(a))
}
#[inline(always)]
pub(crate) fn abs(a: R) -> R {
    avx!(_mm256_andnot_ps(_mm256_set1_ps(-0.0), a))
}
#[inline(always)]
pub(crate) fn floor(a: R) -> R {
    avx!(_mm256_floor_ps(a))
}
#[inline(always)]
pub(crate) fn min(a: R, b: R) -> R {
    avx!(_mm256_min_ps(a, b))
}
#[inline(always)]
pub(crate) fn max(a: R, b: R) -> R {
    avx!(_mm256_max_ps(a, b))
}
/// Lane-wise comparison with predicate `P` (`_CMP_*`).
#[inline(always)]
pub(crate) fn cmp<const P: i32>(a: R, b: R) -> K {
    avx!(_mm256_cmp_ps::<P>(a, b))
}
/// `a` where `m` is set, `b` elsewhere.
#[inline(always)]
pub(crate) fn blend(m: K, a: R, b: R) -> R {
    avx!(_mm256_blendv_ps(b, a, m))
}
#[inline(always)]
pub(crate) fn to_int(a: R) -> I {
    avx!(_mm256_castps_si256(a))
}
#[inline(always)]
pub(crate) fn from_int(a: I) -> R {
    avx!(_mm256_castsi256_ps(a))
}
#[inline(always)]
pub(crate) fn int_zero() -> I {
    avx!(_mm256_setzero_si256())
}
/// Lanes equal to `v`.
#[inline(always)]
pub(crate) fn int_eq(a: I, v: u32) -> K {
    avx!(_mm256_castsi256_ps(_mm256_cmpeq_epi32(a, _mm256_set1_epi32(v as i32))))
}
/// Lanes with no bit of `mask` set.
#[inline(always)]
pub(crate) fn int_clear(a: I, mask: u32) -> K {
    avx!(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
        _mm256_and_si256(a, _mm256_set1_epi32(mask as i32)),
        _mm256_setzero_si256()
    )))
}
/// The lane-wise larger of `a` and `b` as unsigned integers.
#[inline(always)]
pub(crate) fn int_max(a: I, b: I) -> I {
    avx!(_mm256_max_epu32(a, b))
}
/// Lanes no larger than `v` as unsigned integers.
#[inline(always)]
pub(crate) fn int_le(a: I, v: u32) -> K {
    avx!(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_min_epu32(a, _mm256_set1_epi32(v as i32)), a)))
}
/// `a | bit` in the lanes of `m`.
#[inline(always)]
pub(crate) fn int_set(a: I, m: K, bit: u32) -> I {
    avx!(_mm256_or_si256(a, _mm256_and_si256(_mm256_castps_si256(m), _mm256_set1_epi32(bit as i32))))
}
/// 1 in the lanes of `m`, 0 elsewhere.
#[inline(always)]
pub(crate) fn mask_ones(m: K) -> I {
    avx!(_mm256_and_si256(_mm256_castps_si256(m), _mm256_set1_epi32(1)))
}
#[inline(always)]
pub(crate) fn mask_splat(b: bool) -> K {
    avx!(_mm256_castsi256_ps(_mm256_set1_epi32(-i32::from(b))))
}
/// Bit `i` = lane `i`.
#[inline(always)]
pub(crate) fn mask_bits(m: K) -> u32 {
    avx!(_mm256_movemask_ps(m)) as u32
}
#[inline(always)]
pub(crate) fn mask_and(a: K, b: K) -> K {
    avx!(_mm256_and_ps(a, b))
}
#[inline(always)]
pub(crate) fn mask_or(a: K, b: K) -> K {
    avx!(_mm256_or_ps(a, b))
}
#[inline(always)]
pub(crate) fn mask_not(a: K) -> K {
    avx!(_mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))))
}
/// `a` where `m` is set, `b` elsewhere.
#[inline(always)]
pub(crate) fn mask_select(m: K, a: K, b: K) -> K {
    avx!(_mm256_blendv_ps(b, a, m))
}
#[inline(always)]
pub(crate) fn unpacklo(a: R, b: R) -> R {
    avx!(_mm256_unpacklo_ps(a, b))
}
#[inline(always)]
pub(crate) fn unpackhi(a: R, b: R) -> R {
    avx!(_mm256_unpackhi_ps(a, b))
}
/// The 64-bit halves of each 128-bit quarter interleaved (`unpacklo_pd`/`unpackhi_pd`).
#[inline(always)]
pub(crate) fn unpack64(a: R, b: R, hi: bool) -> R {
    let (a, b) = (avx!(_mm256_castps_pd(a)), avx!(_mm256_castps_pd(b)));
    avx!(_mm256_castpd_ps(if hi { _mm256_unpackhi_pd(a, b) } else { _mm256_unpacklo_pd(a, b) }))
}
/// A register from its 128-bit quarters (a cast, then `vinsertf128`).
#[inline(always)]
pub(crate) fn from_quarters(q: [__m128; Q]) -> R {
    avx!(_mm256_insertf128_ps::<1>(_mm256_castps128_ps256(q[0]), q[1]))
}
/// The register's 128-bit quarters (a cast, then `vextractf128`).
#[inline(always)]
pub(crate) fn quarters(r: R) -> [__m128; Q] {
    [avx!(_mm256_castps256_ps128(r)), avx!(_mm256_extractf128_ps::<1>(r))]
}
/// A register from `W` floats.
#[cfg(test)]
#[inline(always)]
pub(crate) fn load(a: &[f32; W]) -> R {
    avx!(_mm256_loadu_ps(a.as_ptr()))
}
/// The register's `W` floats.
#[cfg(test)]
#[inline(always)]
pub(crate) fn store(r: R, out: &mut [f32; W]) {
    avx!(_mm256_storeu_ps(out.as_mut_ptr(), r))
}
