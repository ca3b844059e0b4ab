//! AVX2 lanes: one lane value is `H` = 2 `__m256` registers (16 chains per group), masks
//! are all-ones/all-zeros vectors, records move through 8×8 transposes.
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

/// Runs an AVX2 intrinsic expression (a lane value exists, so AVX2 is available).
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: only reached from `run`, after AVX2 was detected (see `wide/mod.rs`).
        unsafe { $e }
    };
}

/// Applies an expression to each of the `H` registers (`|h|` names the index).
macro_rules! each {
    (|$h:ident| $e:expr) => {{
        // SAFETY: all-zero bits are a valid register value; each is overwritten below.
        let mut out = [unsafe { std::mem::zeroed() }; H];
        for $h in 0..H {
            out[$h] = avx!($e);
        }
        out
    }};
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
    fn into_f(self) -> F;
}
impl IntoF for F {
    #[inline(always)]
    fn into_f(self) -> F {
        self
    }
}
impl IntoF for f32 {
    #[inline(always)]
    fn into_f(self) -> F {
        F::splat(self)
    }
}

macro_rules! cmp {
    ($($name:ident $pred:ident),*) => {$(
        /// Lane-wise comparison with Rust's semantics for NaN.
        #[inline(always)]
        pub fn $name(self, o: impl IntoF) -> M {
            let o = o.into_f();
            M(each!(|h| _mm256_cmp_ps::<$pred>(self.0[h], o.0[h])))
        }
    )*};
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
    /// `self · a + b` (two roundings: AVX2 is not assumed to have FMA).
    #[inline(always)]
    pub fn mul_add(self, a: F, b: F) -> F {
        self * a + b
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

/// Transposes an 8×8 block: `r[j]` lane `i` becomes `out[i]` lane `j`.
#[inline(always)]
fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    // SAFETY: only reached from `run`, after the instruction set was detected.
    unsafe {
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
}

/// Words per transpose block.
pub(crate) const BLOCK: usize = 8;

/// Words `w..w + 8` of [`L`] records, transposed into `out[..8]`: lane `i` of word `k`
/// = word `w + k` of `src[i]` (the range inside the record). Written in place, so the
/// words go from the shuffles straight to their slots.
#[inline(always)]
pub(crate) fn load_block<T: bytemuck::Pod>(src: &[T; L], w: usize, out: &mut [MaybeUninit<F>]) {
    for h in 0..H {
        let mut rows = [avx!(_mm256_setzero_ps()); 8];
        for (i, row) in rows.iter_mut().enumerate() {
            let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[8 * h + i]));
            let chunk: &[f32; 8] = words[w..w + 8].try_into().expect("8 words");
            // SAFETY: `chunk` is 8 readable f32 (unaligned loads are allowed).
            *row = avx!(_mm256_loadu_ps(chunk.as_ptr()));
        }
        let cols = transpose8(rows);
        for (o, col) in out[..BLOCK].iter_mut().zip(cols) {
            // SAFETY: `o` is written (all `H` registers) by the loop over `h`.
            unsafe { (*o.as_mut_ptr()).0[h] = col };
        }
    }
}

/// Stores `words[0..8]` to words `w..w + 8` of each record: word `w + k` of `dst[i]` =
/// `words[k]` lane `i` (the range inside the record).
#[inline(always)]
pub(crate) fn store_block<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], w: usize) {
    for h in 0..H {
        let mut cols = [avx!(_mm256_setzero_ps()); 8];
        for (c, word) in cols.iter_mut().zip(words) {
            *c = word.0[h];
        }
        for (i, row) in transpose8(cols).into_iter().enumerate() {
            let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[8 * h + i]));
            let chunk: &mut [f32; 8] = (&mut out[w..w + 8]).try_into().expect("8 words");
            // SAFETY: `chunk` is 8 writable f32 (unaligned stores are allowed).
            avx!(_mm256_storeu_ps(chunk.as_mut_ptr(), row));
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
