//! AVX2 lanes: one lane value is `H` = 2 `__m256` registers (16 chains per group), masks
//! are all-ones/all-zeros vectors, records move through 4×4 transposes of 16-byte fields.
//!
//! Only the primitives live here ([`F`], [`M`], [`U`], selects, transposes and the
//! `target_feature` entry point [`run`]); everything above them (`lanes.rs`, the kernels)
//! is shared with the AVX-512 instantiation. See `wide/mod.rs` for soundness.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

use super::lanes::Kernel;

/// AVX registers per lane value: each operation issues `H` independent instructions, so
/// the long dependency chains of one group (divisions, square roots) overlap.
const H: usize = 2;
/// Chains per group (lanes).
pub(crate) const L: usize = 8 * H;

/// Whether this CPU runs this path (detected once, then cached by std).
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

lane_arithmetic!(set1: _mm256_set1_ps, Add add _mm256_add_ps, Sub sub _mm256_sub_ps, Mul mul _mm256_mul_ps, Div div _mm256_div_ps);

impl Neg for F {
    type Output = F;
    #[inline(always)]
    fn neg(self) -> F {
        F(each!(|h| _mm256_xor_ps(self.0[h], _mm256_set1_ps(-0.0))))
    }
}

impl F {
    /// Every lane `x`.
    #[inline(always)]
    pub fn splat(x: f32) -> F {
        F([avx!(_mm256_set1_ps(x)); H])
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
        let o = o.into_f();
        F(each!(|h| _mm256_min_ps(self.0[h], o.0[h])))
    }
    /// `if a > b { a } else { b }` per lane (equals `f32::max` on non-NaN lanes).
    #[inline(always)]
    pub fn max(self, o: impl IntoF) -> F {
        let o = o.into_f();
        F(each!(|h| _mm256_max_ps(self.0[h], o.0[h])))
    }
    lane_comparisons!(_mm256_cmp_ps: lt _CMP_LT_OQ, le _CMP_LE_OQ, gt _CMP_GT_OQ, ge _CMP_GE_OQ, ne_ _CMP_NEQ_UQ);
    /// The lanes as an array.
    #[cfg(test)]
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
    #[inline(always)]
    pub fn from_array(a: [f32; L]) -> F {
        // SAFETY: 8 readable f32 per register.
        F(crate::cpu::wide::build(|h| unsafe { _mm256_loadu_ps(a[8 * h..].as_ptr()) }))
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
    #[inline(always)]
    pub fn splat(b: bool) -> M {
        M([avx!(_mm256_castsi256_ps(_mm256_set1_epi32(-i32::from(b)))); H])
    }
    /// Bit `i` = lane `i`.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        (0..H).fold(0, |bits, h| bits | (avx!(_mm256_movemask_ps(self.0[h])) as u32) << (8 * h))
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
    #[inline(always)]
    pub fn zero() -> U {
        U([avx!(_mm256_setzero_si256()); H])
    }
    /// Sets `bit` in the lanes of `m`.
    #[inline(always)]
    pub fn set(&mut self, m: M, bit: u32) {
        self.0 = each!(|h| _mm256_or_si256(
            self.0[h],
            _mm256_and_si256(_mm256_castps_si256(m.0[h]), _mm256_set1_epi32(bit as i32))
        ));
    }
    /// Words reinterpreted from the lanes of an [`F`].
    #[inline(always)]
    pub fn from_word(f: F) -> U {
        U(each!(|h| _mm256_castps_si256(f.0[h])))
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
    F(each!(|h| _mm256_blendv_ps(b.0[h], a.0[h], m.0[h])))
}

/// `a` where `m` is set, `b` elsewhere (one mask).
#[inline(always)]
pub(crate) fn select_m(m: M, a: M, b: M) -> M {
    M(each!(|h| _mm256_blendv_ps(b.0[h], a.0[h], m.0[h])))
}

/// Words per load/store block: one 16-byte field (`[f32; 4]`) of every record.
pub(crate) const BLOCK: usize = 4;

/// Words `w..w + 4` of [`L`] records, transposed into `out[..4]`: lane `i` of word `k` =
/// word `w + k` of `src[i]`. Each register gathers two records' fields in its 128-bit
/// halves (register `k`, half `j` = record `4j + k`; a load and a `vinsertf128` from
/// memory), then one 4×4 transpose inside the halves (8 shuffles) puts word `k` of records
/// `0..8` in order; an 8×8 transpose costs 12 shuffles per 4 words.
#[inline(always)]
pub(crate) fn load_block<T: bytemuck::Pod>(src: &[T; L], w: usize, out: &mut [MaybeUninit<F>]) {
    let field = |i: usize| -> __m128 {
        let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[i]));
        let chunk: &[f32; 4] = words[w..w + 4].try_into().expect("4 words");
        // SAFETY: `chunk` is 4 readable f32 (unaligned loads are allowed).
        avx!(_mm_loadu_ps(chunk.as_ptr()))
    };
    for h in 0..H {
        let base = 8 * h;
        let mut r = [avx!(_mm256_setzero_ps()); 4];
        for (k, reg) in r.iter_mut().enumerate() {
            let v = avx!(_mm256_castps128_ps256(field(base + k)));
            *reg = avx!(_mm256_insertf128_ps::<1>(v, field(base + 4 + k)));
        }
        let t0 = avx!(_mm256_unpacklo_ps(r[0], r[1]));
        let t1 = avx!(_mm256_unpackhi_ps(r[0], r[1]));
        let t2 = avx!(_mm256_unpacklo_ps(r[2], r[3]));
        let t3 = avx!(_mm256_unpackhi_ps(r[2], r[3]));
        let pd = |a: __m256, b: __m256, hi: bool| -> __m256 {
            let (a, b) = (avx!(_mm256_castps_pd(a)), avx!(_mm256_castps_pd(b)));
            avx!(_mm256_castpd_ps(if hi { _mm256_unpackhi_pd(a, b) } else { _mm256_unpacklo_pd(a, b) }))
        };
        let cols = [pd(t0, t2, false), pd(t0, t2, true), pd(t1, t3, false), pd(t1, t3, true)];
        for (o, col) in out[..BLOCK].iter_mut().zip(cols) {
            // SAFETY: `o` is written (all `H` registers) by the loop over `h`.
            unsafe { (*o.as_mut_ptr()).0[h] = col };
        }
    }
}

/// Stores `words[0..4]` to words `w..w + 4` of each record: word `w + k` of `dst[i]` =
/// `words[k]` lane `i`. The inverse of [`load_block`]: a 4×4 transpose inside the halves,
/// then each half stored straight to its record.
#[inline(always)]
pub(crate) fn store_block<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], w: usize) {
    for h in 0..H {
        let base = 8 * h;
        let (x, y, z, q) = (words[0].0[h], words[1].0[h], words[2].0[h], words[3].0[h]);
        let t0 = avx!(_mm256_unpacklo_ps(x, y));
        let t1 = avx!(_mm256_unpackhi_ps(x, y));
        let t2 = avx!(_mm256_unpacklo_ps(z, q));
        let t3 = avx!(_mm256_unpackhi_ps(z, q));
        let pd = |a: __m256, b: __m256, hi: bool| -> __m256 {
            let (a, b) = (avx!(_mm256_castps_pd(a)), avx!(_mm256_castps_pd(b)));
            avx!(_mm256_castpd_ps(if hi { _mm256_unpackhi_pd(a, b) } else { _mm256_unpacklo_pd(a, b) }))
        };
        // Register k, half j = the four words of record 4j + k.
        let regs = [pd(t0, t2, false), pd(t0, t2, true), pd(t1, t3, false), pd(t1, t3, true)];
        for (k, reg) in regs.into_iter().enumerate() {
            let halves = [avx!(_mm256_castps256_ps128(reg)), avx!(_mm256_extractf128_ps::<1>(reg))];
            for (j, half) in halves.into_iter().enumerate() {
                let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[base + 4 * j + k]));
                let chunk: &mut [f32; 4] = (&mut out[w..w + 4]).try_into().expect("4 words");
                // SAFETY: `chunk` is 4 writable f32 (unaligned stores are allowed).
                avx!(_mm_storeu_ps(chunk.as_mut_ptr(), half));
            }
        }
    }
}

/// Runs `K` over `chains` in groups of [`L`]; `false` (nothing done) when the CPU has no
/// AVX2.
pub(crate) fn run<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: AVX2 is available (checked just above).
    unsafe { groups::<K>(chains, out) };
    true
}

/// Every group of the batch, compiled with AVX2 (the kernel is inlined into it).
#[target_feature(enable = "avx2")]
fn groups<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    super::lanes::each_group::<K>(chains, out);
}
