//! AVX-512 lanes: one lane value is `H` = 2 `__m512` registers (32 chains per group), masks
//! are `__mmask16` mask registers, records move through 4×4 transposes of 16-byte fields. With 32 vector
//! registers far less of a solve spills to the stack than with AVX2's 16.
//!
//! Only the primitives live here; `lanes.rs` and the kernels are shared with the AVX2
//! instantiation. See `wide/mod.rs` for soundness.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

use super::lanes::Kernel;

/// Registers per lane value: two, so the long dependency chains (square root, division)
/// of one group overlap (FABRIK 8×16: 500 → 376 ns per chain; two-bone unchanged).
const H: usize = 2;
/// Chains per group (lanes).
pub(crate) const L: usize = 16 * H;

/// Whether this CPU runs this path (AVX-512F; detected once, then cached by std).
#[inline]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

/// One `f32` per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F([__m512; H]);

/// One flag per lane (a mask register).
#[derive(Clone, Copy, Debug)]
pub(crate) struct M([__mmask16; H]);

/// One `u32` per lane (info bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct U([__m512i; H]);

/// One mask per register (plain `u16` operations).
macro_rules! each_mask {
    (|$h:ident| $e:expr) => {{
        const _: () = assert!(H == 2, "`each_mask!` is written out for two registers per value");
        [
            {
                let $h = 0;
                $e
            },
            {
                let $h = 1;
                $e
            },
        ]
    }};
}

lane_arithmetic!(set1: _mm512_set1_ps, Add add _mm512_add_ps, Sub sub _mm512_sub_ps, Mul mul _mm512_mul_ps, Div div _mm512_div_ps);

impl Neg for F {
    type Output = F;
    #[inline(always)]
    fn neg(self) -> F {
        F(each!(|h| _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(self.0[h]), _mm512_set1_epi32(i32::MIN)))))
    }
}

impl F {
    /// Every lane `x`.
    #[inline(always)]
    pub fn splat(x: f32) -> F {
        F([avx!(_mm512_set1_ps(x)); H])
    }
    #[inline(always)]
    pub fn sqrt(self) -> F {
        F(each!(|h| _mm512_sqrt_ps(self.0[h])))
    }
    #[inline(always)]
    pub fn abs(self) -> F {
        F(each!(|h| _mm512_abs_ps(self.0[h])))
    }
    #[inline(always)]
    pub fn floor(self) -> F {
        F(each!(|h| _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0[h])))
    }
    /// `if a < b { a } else { b }` per lane (equals `f32::min` on non-NaN lanes).
    #[inline(always)]
    pub fn min(self, o: impl IntoF) -> F {
        let o = o.into_f();
        F(each!(|h| _mm512_min_ps(self.0[h], o.0[h])))
    }
    /// `if a > b { a } else { b }` per lane (equals `f32::max` on non-NaN lanes).
    #[inline(always)]
    pub fn max(self, o: impl IntoF) -> F {
        let o = o.into_f();
        F(each!(|h| _mm512_max_ps(self.0[h], o.0[h])))
    }
    lane_comparisons!(_mm512_cmp_ps_mask: lt _CMP_LT_OQ, le _CMP_LE_OQ, gt _CMP_GT_OQ, ge _CMP_GE_OQ, ne_ _CMP_NEQ_UQ);
    /// The lanes as an array.
    #[cfg(test)]
    #[inline(always)]
    pub fn to_array(self) -> [f32; L] {
        let mut out = [0.0_f32; L];
        for h in 0..H {
            // SAFETY: 16 writable f32 (and AVX-512F is available: a lane value exists).
            unsafe { _mm512_storeu_ps(out[16 * h..].as_mut_ptr(), self.0[h]) };
        }
        out
    }
    /// Lanes from an array.
    #[cfg(test)]
    #[inline(always)]
    pub fn from_array(a: [f32; L]) -> F {
        // SAFETY: 16 readable f32 per register.
        F(crate::cpu::wide::build(|h| unsafe { _mm512_loadu_ps(a[16 * h..].as_ptr()) }))
    }
    /// The lanes' 32-bit words as integers.
    #[inline(always)]
    fn bits(self) -> [__m512i; H] {
        each!(|h| _mm512_castps_si512(self.0[h]))
    }
    /// Lanes whose word, read as `u32`, equals `v`.
    #[inline(always)]
    pub fn word_eq(self, v: u32) -> M {
        let b = self.bits();
        M(each!(|h| _mm512_cmpeq_epi32_mask(b[h], _mm512_set1_epi32(v as i32))))
    }
    /// Lanes whose word, read as `u32`, has no bit of `mask` set.
    #[inline(always)]
    pub fn word_clear(self, mask: u32) -> M {
        let b = self.bits();
        M(each!(|h| _mm512_testn_epi32_mask(b[h], _mm512_set1_epi32(mask as i32))))
    }
    /// Words reinterpreted from integers.
    #[inline(always)]
    fn from_bits(b: [__m512i; H]) -> F {
        F(each!(|h| _mm512_castsi512_ps(b[h])))
    }
}

impl M {
    #[inline(always)]
    pub fn splat(b: bool) -> M {
        M([if b { u16::MAX } else { 0 }; H])
    }
    /// Bit `i` = lane `i`.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        (0..H).fold(0, |bits, h| bits | u32::from(self.0[h]) << (16 * h))
    }
    /// 1 where set, 0 elsewhere, as `u32` words.
    #[inline(always)]
    pub fn as_u32_word(self) -> F {
        F::from_bits(each!(|h| _mm512_maskz_set1_epi32(self.0[h], 1)))
    }
}

impl BitAnd for M {
    type Output = M;
    #[inline(always)]
    fn bitand(self, o: M) -> M {
        M(each_mask!(|h| self.0[h] & o.0[h]))
    }
}
impl BitOr for M {
    type Output = M;
    #[inline(always)]
    fn bitor(self, o: M) -> M {
        M(each_mask!(|h| self.0[h] | o.0[h]))
    }
}
impl Not for M {
    type Output = M;
    #[inline(always)]
    fn not(self) -> M {
        M(each_mask!(|h| !self.0[h]))
    }
}

impl U {
    #[inline(always)]
    pub fn zero() -> U {
        U([avx!(_mm512_setzero_si512()); H])
    }
    /// Sets `bit` in the lanes of `m`.
    #[inline(always)]
    pub fn set(&mut self, m: M, bit: u32) {
        self.0 = each!(|h| _mm512_mask_or_epi32(self.0[h], m.0[h], self.0[h], _mm512_set1_epi32(bit as i32)));
    }
    /// Words reinterpreted from the lanes of an [`F`].
    #[inline(always)]
    pub fn from_word(f: F) -> U {
        U(each!(|h| _mm512_castps_si512(f.0[h])))
    }
    /// The words as lanes of an [`F`] (for storing).
    #[inline(always)]
    pub fn as_word(self) -> F {
        F::from_bits(self.0)
    }
}

/// `a` where `m` is set, `b` elsewhere (one lane value).
#[inline(always)]
pub(crate) fn select_f(m: M, a: F, b: F) -> F {
    F(each!(|h| _mm512_mask_blend_ps(m.0[h], b.0[h], a.0[h])))
}

/// `a` where `m` is set, `b` elsewhere (one mask).
#[inline(always)]
pub(crate) fn select_m(m: M, a: M, b: M) -> M {
    M(each_mask!(|h| (m.0[h] & a.0[h]) | (!m.0[h] & b.0[h])))
}

/// Words per load/store block: one 16-byte field (`[f32; 4]`) of every record.
pub(crate) const BLOCK: usize = 4;

/// Words `w..w + 4` of [`L`] records, transposed into `out[..4]`: lane `i` of word `k` =
/// word `w + k` of `src[i]`. Each register gathers four records' fields in its four
/// 128-bit lanes (register `k`, lane `j` = record `4j + k`; loads and `vinsertf32x4` from
/// memory), then one 4×4 transpose inside the 128-bit lanes (8 shuffles) puts word `k` of
/// records `0..16` in order. A full 16×16 transpose costs 16 shuffles per 4 words.
#[inline(always)]
pub(crate) fn load_block<T: bytemuck::Pod>(src: &[T; L], w: usize, out: &mut [MaybeUninit<F>]) {
    let field = |i: usize| -> __m128 {
        let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[i]));
        let chunk: &[f32; 4] = words[w..w + 4].try_into().expect("4 words");
        // SAFETY: `chunk` is 4 readable f32 (unaligned loads are allowed).
        avx!(_mm_loadu_ps(chunk.as_ptr()))
    };
    for h in 0..H {
        let base = 16 * h;
        let mut r = [avx!(_mm512_setzero_ps()); 4];
        for (k, reg) in r.iter_mut().enumerate() {
            let v = avx!(_mm512_castps128_ps512(field(base + k)));
            let v = avx!(_mm512_insertf32x4::<1>(v, field(base + 4 + k)));
            let v = avx!(_mm512_insertf32x4::<2>(v, field(base + 8 + k)));
            *reg = avx!(_mm512_insertf32x4::<3>(v, field(base + 12 + k)));
        }
        let t0 = avx!(_mm512_unpacklo_ps(r[0], r[1]));
        let t1 = avx!(_mm512_unpackhi_ps(r[0], r[1]));
        let t2 = avx!(_mm512_unpacklo_ps(r[2], r[3]));
        let t3 = avx!(_mm512_unpackhi_ps(r[2], r[3]));
        let pd = |a: __m512, b: __m512, hi: bool| -> __m512 {
            let (a, b) = (avx!(_mm512_castps_pd(a)), avx!(_mm512_castps_pd(b)));
            avx!(_mm512_castpd_ps(if hi { _mm512_unpackhi_pd(a, b) } else { _mm512_unpacklo_pd(a, b) }))
        };
        let cols = [pd(t0, t2, false), pd(t0, t2, true), pd(t1, t3, false), pd(t1, t3, true)];
        for (o, col) in out[..BLOCK].iter_mut().zip(cols) {
            // SAFETY: `o` is written (all `H` registers) by the loop over `h`.
            unsafe { (*o.as_mut_ptr()).0[h] = col };
        }
    }
}

/// Stores `words[0..4]` to words `w..w + 4` of each record: word `w + k` of `dst[i]` =
/// `words[k]` lane `i`. The inverse of [`load_block`]: a 4×4 transpose inside the 128-bit
/// lanes, then each lane stored straight to its record (`vextractf32x4` to memory).
#[inline(always)]
pub(crate) fn store_block<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], w: usize) {
    for h in 0..H {
        let base = 16 * h;
        let (x, y, z, q) = (words[0].0[h], words[1].0[h], words[2].0[h], words[3].0[h]);
        let t0 = avx!(_mm512_unpacklo_ps(x, y));
        let t1 = avx!(_mm512_unpackhi_ps(x, y));
        let t2 = avx!(_mm512_unpacklo_ps(z, q));
        let t3 = avx!(_mm512_unpackhi_ps(z, q));
        let pd = |a: __m512, b: __m512, hi: bool| -> __m512 {
            let (a, b) = (avx!(_mm512_castps_pd(a)), avx!(_mm512_castps_pd(b)));
            avx!(_mm512_castpd_ps(if hi { _mm512_unpackhi_pd(a, b) } else { _mm512_unpacklo_pd(a, b) }))
        };
        // Register k, 128-bit lane j = the four words of record 4j + k.
        let regs = [pd(t0, t2, false), pd(t0, t2, true), pd(t1, t3, false), pd(t1, t3, true)];
        for (k, reg) in regs.into_iter().enumerate() {
            let lanes = [
                avx!(_mm512_castps512_ps128(reg)),
                avx!(_mm512_extractf32x4_ps::<1>(reg)),
                avx!(_mm512_extractf32x4_ps::<2>(reg)),
                avx!(_mm512_extractf32x4_ps::<3>(reg)),
            ];
            for (j, lane) in lanes.into_iter().enumerate() {
                let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[base + 4 * j + k]));
                let chunk: &mut [f32; 4] = (&mut out[w..w + 4]).try_into().expect("4 words");
                // SAFETY: `chunk` is 4 writable f32 (unaligned stores are allowed).
                avx!(_mm_storeu_ps(chunk.as_mut_ptr(), lane));
            }
        }
    }
}

/// Runs `K` over `chains` in groups of [`L`]; `false` (nothing done) when the CPU has no
/// AVX-512F.
pub(crate) fn run<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: AVX-512F is available (checked just above).
    unsafe { groups::<K>(chains, out) };
    true
}

/// Every group of the batch, compiled with AVX-512F (the kernel is inlined into it).
#[target_feature(enable = "avx512f")]
fn groups<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    super::lanes::each_group::<K>(chains, out);
}
