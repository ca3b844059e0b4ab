//! AVX-512's register table: what one `__m512` register does for the shared lane code
//! (`wide/isa.rs`). Masks live in `__mmask16` mask registers, and with 32 vector registers
//! far less of a solve spills to the stack than with AVX2's 16. Every entry is one
//! intrinsic (or a short fixed sequence); nothing here knows about chains or records.

use std::arch::x86_64::*;

use super::lanes::Kernel;

/// A register of 16 `f32`.
pub(crate) type R = __m512;
/// A register of 16 `u32`.
pub(crate) type I = __m512i;
/// One flag per lane of a register (a mask register).
pub(crate) type K = __mmask16;

/// Lanes per register.
pub(crate) const W: usize = 16;
/// 128-bit quarters (four `f32`) per register.
pub(crate) const Q: usize = W / 4;

/// Whether this CPU has AVX-512F (detected once, then cached by std).
#[inline]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

/// Every group of the batch, compiled with AVX-512F (the kernel is inlined into it).
#[target_feature(enable = "avx512f")]
pub(crate) fn groups<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    super::lanes::each_group::<K>(chains, out);
}

#[inline(always)]
pub(crate) fn set1(x: f32) -> R {
    avx!(_mm512_set1_ps(x))
}
#[inline(always)]
pub(crate) fn add(a: R, b: R) -> R {
    avx!(_mm512_add_ps(a, b))
}
#[inline(always)]
pub(crate) fn sub(a: R, b: R) -> R {
    avx!(_mm512_sub_ps(a, b))
}
#[inline(always)]
pub(crate) fn mul(a: R, b: R) -> R {
    avx!(_mm512_mul_ps(a, b))
}
#[inline(always)]
pub(crate) fn div(a: R, b: R) -> R {
    avx!(_mm512_div_ps(a, b))
}
#[inline(always)]
pub(crate) fn neg(a: R) -> R {
    avx!(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(i32::MIN))))
}
#[inline(always)]
pub(crate) fn sqrt(a: R) -> R {
    avx!(_mm512_sqrt_ps(a))
}
#[inline(always)]
pub(crate) fn abs(a: R) -> R {
    avx!(_mm512_abs_ps(a))
}
#[inline(always)]
pub(crate) fn floor(a: R) -> R {
    avx!(_mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a))
}
#[inline(always)]
pub(crate) fn min(a: R, b: R) -> R {
    avx!(_mm512_min_ps(a, b))
}
#[inline(always)]
pub(crate) fn max(a: R, b: R) -> R {
    avx!(_mm512_max_ps(a, b))
}
/// Lane-wise comparison with predicate `P` (`_CMP_*`).
#[inline(always)]
pub(crate) fn cmp<const P: i32>(a: R, b: R) -> K {
    avx!(_mm512_cmp_ps_mask::<P>(a, b))
}
/// `a` where `m` is set, `b` elsewhere.
#[inline(always)]
pub(crate) fn blend(m: K, a: R, b: R) -> R {
    avx!(_mm512_mask_blend_ps(m, b, a))
}
#[inline(always)]
pub(crate) fn to_int(a: R) -> I {
    avx!(_mm512_castps_si512(a))
}
#[inline(always)]
pub(crate) fn from_int(a: I) -> R {
    avx!(_mm512_castsi512_ps(a))
}
#[inline(always)]
pub(crate) fn int_zero() -> I {
    avx!(_mm512_setzero_si512())
}
/// Lanes equal to `v`.
#[inline(always)]
pub(crate) fn int_eq(a: I, v: u32) -> K {
    avx!(_mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(v as i32)))
}
/// Lanes with no bit of `mask` set.
#[inline(always)]
pub(crate) fn int_clear(a: I, mask: u32) -> K {
    avx!(_mm512_testn_epi32_mask(a, _mm512_set1_epi32(mask as i32)))
}
/// The lane-wise larger of `a` and `b` as unsigned integers.
#[inline(always)]
pub(crate) fn int_max(a: I, b: I) -> I {
    avx!(_mm512_max_epu32(a, b))
}
/// Lanes no larger than `v` as unsigned integers.
#[inline(always)]
pub(crate) fn int_le(a: I, v: u32) -> K {
    avx!(_mm512_cmple_epu32_mask(a, _mm512_set1_epi32(v as i32)))
}
/// `a | bit` in the lanes of `m`.
#[inline(always)]
pub(crate) fn int_set(a: I, m: K, bit: u32) -> I {
    avx!(_mm512_mask_or_epi32(a, m, a, _mm512_set1_epi32(bit as i32)))
}
/// 1 in the lanes of `m`, 0 elsewhere.
#[inline(always)]
pub(crate) fn mask_ones(m: K) -> I {
    avx!(_mm512_maskz_set1_epi32(m, 1))
}
#[inline(always)]
pub(crate) fn mask_splat(b: bool) -> K {
    if b {
        u16::MAX
    } else {
        0
    }
}
/// Bit `i` = lane `i`.
#[inline(always)]
pub(crate) fn mask_bits(m: K) -> u32 {
    u32::from(m)
}
#[inline(always)]
pub(crate) fn mask_and(a: K, b: K) -> K {
    a & b
}
#[inline(always)]
pub(crate) fn mask_or(a: K, b: K) -> K {
    a | b
}
#[inline(always)]
pub(crate) fn mask_not(a: K) -> K {
    !a
}
/// `a` where `m` is set, `b` elsewhere.
#[inline(always)]
pub(crate) fn mask_select(m: K, a: K, b: K) -> K {
    (m & a) | (!m & b)
}
#[inline(always)]
pub(crate) fn unpacklo(a: R, b: R) -> R {
    avx!(_mm512_unpacklo_ps(a, b))
}
#[inline(always)]
pub(crate) fn unpackhi(a: R, b: R) -> R {
    avx!(_mm512_unpackhi_ps(a, b))
}
/// The 64-bit halves of each 128-bit quarter interleaved (`unpacklo_pd`/`unpackhi_pd`).
#[inline(always)]
pub(crate) fn unpack64(a: R, b: R, hi: bool) -> R {
    let (a, b) = (avx!(_mm512_castps_pd(a)), avx!(_mm512_castps_pd(b)));
    avx!(_mm512_castpd_ps(if hi { _mm512_unpackhi_pd(a, b) } else { _mm512_unpacklo_pd(a, b) }))
}
/// A register from its 128-bit quarters (a cast, then `vinsertf32x4`).
#[inline(always)]
pub(crate) fn from_quarters(q: [__m128; Q]) -> R {
    let r = avx!(_mm512_castps128_ps512(q[0]));
    let r = avx!(_mm512_insertf32x4::<1>(r, q[1]));
    let r = avx!(_mm512_insertf32x4::<2>(r, q[2]));
    avx!(_mm512_insertf32x4::<3>(r, q[3]))
}
/// The register's 128-bit quarters (a cast, then `vextractf32x4`).
#[inline(always)]
pub(crate) fn quarters(r: R) -> [__m128; Q] {
    [
        avx!(_mm512_castps512_ps128(r)),
        avx!(_mm512_extractf32x4_ps::<1>(r)),
        avx!(_mm512_extractf32x4_ps::<2>(r)),
        avx!(_mm512_extractf32x4_ps::<3>(r)),
    ]
}
/// A register from `W` floats.
#[cfg(test)]
#[inline(always)]
pub(crate) fn load(a: &[f32; W]) -> R {
    avx!(_mm512_loadu_ps(a.as_ptr()))
}
/// The register's `W` floats.
#[cfg(test)]
#[inline(always)]
pub(crate) fn store(r: R, out: &mut [f32; W]) {
    avx!(_mm512_storeu_ps(out.as_mut_ptr(), r))
}
