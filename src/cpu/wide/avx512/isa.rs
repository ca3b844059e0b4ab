//! AVX-512 lanes: one lane value is `H` = 2 `__m512` registers (32 chains per group), masks
//! are `__mmask16` mask registers, records move through 16×16 transposes. With 32 vector
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
        let mut out = [0; H];
        for $h in 0..H {
            out[$h] = $e;
        }
        out
    }};
}

/// Runs an AVX-512 intrinsic expression (a lane value exists, so AVX-512F is available).
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: only reached from `run`, after AVX-512F was detected (see `wide/mod.rs`).
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
                F(each!(|h| $intr(self.0[h], _mm512_set1_ps(o))))
            }
        }
        impl $tr<F> for f32 {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: F) -> F {
                F(each!(|h| $intr(_mm512_set1_ps(self), o.0[h])))
            }
        }
    };
}
bin_op!(Add, add, _mm512_add_ps);
bin_op!(Sub, sub, _mm512_sub_ps);
bin_op!(Mul, mul, _mm512_mul_ps);
bin_op!(Div, div, _mm512_div_ps);

impl Neg for F {
    type Output = F;
    #[inline(always)]
    fn neg(self) -> F {
        F(each!(|h| _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(self.0[h]), _mm512_set1_epi32(i32::MIN)))))
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
            M(each!(|h| _mm512_cmp_ps_mask::<$pred>(self.0[h], o.0[h])))
        }
    )*};
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
    /// `self · a + b`, fused (one rounding).
    #[inline(always)]
    pub fn mul_add(self, a: F, b: F) -> F {
        F(each!(|h| _mm512_fmadd_ps(self.0[h], a.0[h], b.0[h])))
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
    cmp!(lt _CMP_LT_OQ, le _CMP_LE_OQ, gt _CMP_GT_OQ, ge _CMP_GE_OQ, ne_ _CMP_NEQ_UQ);
    /// The lanes as an array.
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

/// Transposes a 16×16 block in place: `r[j]` lane `i` becomes `r[i]` lane `j` (64 shuffles).
#[inline(always)]
fn transpose16(r: &mut [__m512; 16]) {
    // SAFETY: only reached from `run`, after AVX-512F was detected.
    unsafe {
        // Rows in pairs: t[4g + 2p + hi] = unpack{lo,hi}(r[4g + 2p], r[4g + 2p + 1]).
        let mut t = [_mm512_setzero_ps(); 16];
        for k in (0..16).step_by(2) {
            t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
            t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
        }
        // u[4g + e], 128-bit lane k = rows 4g..4g+4 of word 4k + e.
        let mut u = [_mm512_setzero_ps(); 16];
        for g in 0..4 {
            for p in 0..2 {
                let (a, b) = (t[4 * g + p], t[4 * g + 2 + p]);
                u[4 * g + 2 * p] = _mm512_shuffle_ps::<0x44>(a, b);
                u[4 * g + 2 * p + 1] = _mm512_shuffle_ps::<0xEE>(a, b);
            }
        }
        // v[8s + 4o + e]: 128-bit lanes (o = 0: 0 and 2, o = 1: 1 and 3) of row groups 2s, 2s + 1.
        let mut v = [_mm512_setzero_ps(); 16];
        for s in 0..2 {
            for e in 0..4 {
                let (a, b) = (u[8 * s + e], u[8 * s + 4 + e]);
                v[8 * s + e] = _mm512_shuffle_f32x4::<0x88>(a, b);
                v[8 * s + 4 + e] = _mm512_shuffle_f32x4::<0xDD>(a, b);
            }
        }
        // Word 4k + e: k = 0, 2 from v[e], v[8 + e]; k = 1, 3 from v[4 + e], v[12 + e].
        for o in 0..2 {
            for e in 0..4 {
                let (a, b) = (v[4 * o + e], v[8 + 4 * o + e]);
                r[4 * o + e] = _mm512_shuffle_f32x4::<0x88>(a, b);
                r[8 + 4 * o + e] = _mm512_shuffle_f32x4::<0xDD>(a, b);
            }
        }
    }
}

/// Words per transpose block.
pub(crate) const BLOCK: usize = 16;

/// Words `w..w + 16` of [`L`] records, transposed into `out[..16]`: lane `i` of word `k`
/// = word `w + k` of `src[i]` (the range inside the record). Written in place, so the
/// words go from the shuffles straight to their slots.
#[inline(always)]
pub(crate) fn load_block<T: bytemuck::Pod>(src: &[T; L], w: usize, out: &mut [MaybeUninit<F>]) {
    for h in 0..H {
        let mut rows = [avx!(_mm512_setzero_ps()); 16];
        for (i, row) in rows.iter_mut().enumerate() {
            let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[16 * h + i]));
            let chunk: &[f32; 16] = words[w..w + 16].try_into().expect("16 words");
            // SAFETY: `chunk` is 16 readable f32 (unaligned loads are allowed).
            *row = avx!(_mm512_loadu_ps(chunk.as_ptr()));
        }
        transpose16(&mut rows);
        for (o, col) in out[..BLOCK].iter_mut().zip(rows) {
            // SAFETY: `o` is written (all `H` registers) by the loop over `h`.
            unsafe { (*o.as_mut_ptr()).0[h] = col };
        }
    }
}

/// Stores `words[0..16]` to words `w..w + 16` of each record: word `w + k` of `dst[i]` =
/// `words[k]` lane `i` (the range inside the record).
#[inline(always)]
pub(crate) fn store_block<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], w: usize) {
    for h in 0..H {
        let mut cols = [avx!(_mm512_setzero_ps()); 16];
        for (c, word) in cols.iter_mut().zip(words) {
            *c = word.0[h];
        }
        transpose16(&mut cols);
        for (i, row) in cols.into_iter().enumerate() {
            let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[16 * h + i]));
            let chunk: &mut [f32; 16] = (&mut out[w..w + 16]).try_into().expect("16 words");
            // SAFETY: `chunk` is 16 writable f32 (unaligned stores are allowed).
            avx!(_mm512_storeu_ps(chunk.as_mut_ptr(), row));
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
