//! The lane types of one instruction set, written once over its register table
//! (`regs.rs`: `avx2/regs.rs` or `avx512/regs.rs`, one intrinsic per entry).
//!
//! One lane value is `H` = 2 registers, so each operation issues two independent
//! instructions and the long dependency chains of one group (divisions, square roots)
//! overlap. [`F`] holds one `f32` per lane, [`M`] one flag per lane, [`U`] one `u32` per
//! lane (info bits); records move through 4×4 transposes of 16-byte fields
//! ([`load_block`], [`store_block`]); [`run`] is the `target_feature` entry point.
//! Everything above this file (`lanes.rs`, the kernels) is shared by the instantiations
//! too. See `wide/mod.rs` for soundness.

use std::arch::x86_64::__m128;
use std::mem::MaybeUninit;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

use super::lanes::Kernel;
use super::regs::{self, Q, W};
use std::arch::x86_64::{_CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ};

/// Registers per lane value.
const H: usize = 2;
/// Chains per group (lanes).
pub(crate) const L: usize = W * H;

/// Whether this CPU runs this path (detected once, then cached by std).
#[inline]
pub(crate) fn available() -> bool {
    regs::available()
}

/// One `f32` per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F([regs::R; H]);

/// One flag per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct M([regs::K; H]);

/// One `u32` per lane (info bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct U([regs::I; H]);

/// `+ − × ÷` of [`F`] from the table's entries, with `f32` on either side.
macro_rules! arithmetic {
    ($($tr:ident $f:ident),*) => {$(
        impl $tr for F {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: F) -> F {
                F(each!(|h| regs::$f(self.0[h], o.0[h])))
            }
        }
        impl $tr<f32> for F {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: f32) -> F {
                F(each!(|h| regs::$f(self.0[h], regs::set1(o))))
            }
        }
        impl $tr<F> for f32 {
            type Output = F;
            #[inline(always)]
            fn $f(self, o: F) -> F {
                F(each!(|h| regs::$f(regs::set1(self), o.0[h])))
            }
        }
    )*};
}
arithmetic!(Add add, Sub sub, Mul mul, Div div);

/// Lane-wise comparisons of [`F`] (inside its `impl`), one predicate each.
macro_rules! comparisons {
    ($($name:ident $pred:ident),*) => {$(
        /// Lane-wise comparison with Rust's semantics for NaN.
        #[inline(always)]
        pub fn $name(self, o: impl IntoF) -> M {
            let o = o.into_f();
            M(each!(|h| regs::cmp::<$pred>(self.0[h], o.0[h])))
        }
    )*};
}

/// Anything a comparison, `min` or `max` takes as its right-hand side.
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

impl Neg for F {
    type Output = F;
    #[inline(always)]
    fn neg(self) -> F {
        F(each!(|h| regs::neg(self.0[h])))
    }
}

impl F {
    /// Every lane `x`.
    #[inline(always)]
    pub fn splat(x: f32) -> F {
        F([regs::set1(x); H])
    }
    #[inline(always)]
    pub fn sqrt(self) -> F {
        F(each!(|h| regs::sqrt(self.0[h])))
    }
    #[inline(always)]
    pub fn abs(self) -> F {
        F(each!(|h| regs::abs(self.0[h])))
    }
    #[inline(always)]
    pub fn floor(self) -> F {
        F(each!(|h| regs::floor(self.0[h])))
    }
    /// `if a < b { a } else { b }` per lane (equals `f32::min` on non-NaN lanes).
    #[inline(always)]
    pub fn min(self, o: impl IntoF) -> F {
        let o = o.into_f();
        F(each!(|h| regs::min(self.0[h], o.0[h])))
    }
    /// `if a > b { a } else { b }` per lane (equals `f32::max` on non-NaN lanes).
    #[inline(always)]
    pub fn max(self, o: impl IntoF) -> F {
        let o = o.into_f();
        F(each!(|h| regs::max(self.0[h], o.0[h])))
    }
    comparisons!(lt _CMP_LT_OQ, le _CMP_LE_OQ, gt _CMP_GT_OQ, ge _CMP_GE_OQ, ne_ _CMP_NEQ_UQ);
    /// The lanes as an array.
    #[cfg(test)]
    #[inline(always)]
    pub fn to_array(self) -> [f32; L] {
        let mut out = [0.0_f32; L];
        for (h, chunk) in out.chunks_exact_mut(W).enumerate() {
            regs::store(self.0[h], chunk.try_into().expect("W floats"));
        }
        out
    }
    /// Lanes from an array.
    #[cfg(test)]
    #[inline(always)]
    pub fn from_array(a: [f32; L]) -> F {
        F(each!(|h| regs::load(a[W * h..W * (h + 1)].try_into().expect("W floats"))))
    }
    /// Lanes whose word, read as `u32`, equals `v`.
    #[inline(always)]
    pub fn word_eq(self, v: u32) -> M {
        M(each!(|h| regs::int_eq(regs::to_int(self.0[h]), v)))
    }
    /// Lanes whose word, read as `u32`, has no bit of `mask` set.
    #[inline(always)]
    pub fn word_clear(self, mask: u32) -> M {
        M(each!(|h| regs::int_clear(regs::to_int(self.0[h]), mask)))
    }
}

impl M {
    #[inline(always)]
    pub fn splat(b: bool) -> M {
        M([regs::mask_splat(b); H])
    }
    /// Bit `i` = lane `i`.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        (0..H).fold(0, |bits, h| bits | regs::mask_bits(self.0[h]) << (W * h))
    }
    /// 1 where set, 0 elsewhere, as `u32` words.
    #[inline(always)]
    pub fn as_u32_word(self) -> F {
        F(each!(|h| regs::from_int(regs::mask_ones(self.0[h]))))
    }
}

impl BitAnd for M {
    type Output = M;
    #[inline(always)]
    fn bitand(self, o: M) -> M {
        M(each!(|h| regs::mask_and(self.0[h], o.0[h])))
    }
}
impl BitOr for M {
    type Output = M;
    #[inline(always)]
    fn bitor(self, o: M) -> M {
        M(each!(|h| regs::mask_or(self.0[h], o.0[h])))
    }
}
impl Not for M {
    type Output = M;
    #[inline(always)]
    fn not(self) -> M {
        M(each!(|h| regs::mask_not(self.0[h])))
    }
}

impl U {
    #[inline(always)]
    pub fn zero() -> U {
        U([regs::int_zero(); H])
    }
    /// Sets `bit` in the lanes of `m`.
    #[inline(always)]
    pub fn set(&mut self, m: M, bit: u32) {
        self.0 = each!(|h| regs::int_set(self.0[h], m.0[h], bit));
    }
    /// Words reinterpreted from the lanes of an [`F`].
    #[inline(always)]
    pub fn from_word(f: F) -> U {
        U(each!(|h| regs::to_int(f.0[h])))
    }
    /// The lane-wise larger as unsigned integers.
    #[inline(always)]
    pub fn max(self, o: U) -> U {
        U(each!(|h| regs::int_max(self.0[h], o.0[h])))
    }
    /// Lanes no larger than `v` as unsigned integers.
    #[inline(always)]
    pub fn le(self, v: u32) -> M {
        M(each!(|h| regs::int_le(self.0[h], v)))
    }
    /// The words as lanes of an [`F`] (for storing).
    #[inline(always)]
    pub fn as_word(self) -> F {
        F(each!(|h| regs::from_int(self.0[h])))
    }
}

/// `a` where `m` is set, `b` elsewhere (one lane value).
#[inline(always)]
pub(crate) fn select_f(m: M, a: F, b: F) -> F {
    F(each!(|h| regs::blend(m.0[h], a.0[h], b.0[h])))
}

/// `a` where `m` is set, `b` elsewhere (one mask).
#[inline(always)]
pub(crate) fn select_m(m: M, a: M, b: M) -> M {
    M(each!(|h| regs::mask_select(m.0[h], a.0[h], b.0[h])))
}

/// Words per load/store block: one 16-byte field (`[f32; 4]`) of every record.
pub(crate) const BLOCK: usize = 4;

/// The four registers' 4×4 transposes inside each 128-bit quarter (8 shuffles): quarter
/// `j` of output `k` = word `k` of quarter `j` of each input, in input order. Its own
/// inverse.
#[inline(always)]
fn transpose_quarters(r: [regs::R; 4]) -> [regs::R; 4] {
    let t0 = regs::unpacklo(r[0], r[1]);
    let t1 = regs::unpackhi(r[0], r[1]);
    let t2 = regs::unpacklo(r[2], r[3]);
    let t3 = regs::unpackhi(r[2], r[3]);
    [
        regs::unpack64(t0, t2, false),
        regs::unpack64(t0, t2, true),
        regs::unpack64(t1, t3, false),
        regs::unpack64(t1, t3, true),
    ]
}

/// Words `w..w + 4` of [`L`] records, transposed into `out[..4]`: lane `i` of word `k` =
/// word `w + k` of `src[i]`. Each register gathers the field of `W / 4` records in its
/// 128-bit quarters (register `k`, quarter `j` = record `4j + k`; a load, then inserts from
/// memory), then one 4×4 transpose inside the quarters (8 shuffles) puts word `k` of the
/// register's records in order (a full `W`×`W` transpose costs more shuffles per 4 words).
///
/// (No closures here: a closure is a function of its own, compiled without the instruction
/// set, and where the compiler does not inline it its intrinsics become calls.)
#[inline(always)]
pub(crate) fn load_block<T: bytemuck::Pod>(src: &[T; L], w: usize, out: &mut [MaybeUninit<F>]) {
    for h in 0..H {
        let base = W * h;
        let mut regs4 = [regs::set1(0.0); 4];
        for (k, r) in regs4.iter_mut().enumerate() {
            let mut q = [field(src, base + k, w); regs::Q];
            for (j, quarter) in q.iter_mut().enumerate().skip(1) {
                *quarter = field(src, base + 4 * j + k, w);
            }
            *r = regs::from_quarters(q);
        }
        for (o, col) in out[..BLOCK].iter_mut().zip(transpose_quarters(regs4)) {
            // SAFETY: `o` is written (all `H` registers) by the loop over `h`.
            unsafe { (*o.as_mut_ptr()).0[h] = col };
        }
    }
}

/// Words `w..w + 4` of record `i`.
#[inline(always)]
fn field<T: bytemuck::Pod>(src: &[T; L], i: usize, w: usize) -> __m128 {
    let words: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&src[i]));
    let chunk: &[f32; 4] = words[w..w + 4].try_into().expect("4 words");
    // SAFETY: `chunk` is 4 readable f32 (unaligned loads are allowed).
    avx!(std::arch::x86_64::_mm_loadu_ps(chunk.as_ptr()))
}

/// Stores `words[0..4]` to words `w..w + 4` of each record: word `w + k` of `dst[i]` =
/// `words[k]` lane `i`. The inverse of [`load_block`]: a 4×4 transpose inside the
/// quarters, then each quarter stored straight to its record.
#[inline(always)]
pub(crate) fn store_block<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], w: usize) {
    for h in 0..H {
        let base = W * h;
        // Register k, quarter j = the four words of record 4j + k.
        let regs4 = transpose_quarters([words[0].0[h], words[1].0[h], words[2].0[h], words[3].0[h]]);
        for (k, reg) in regs4.into_iter().enumerate() {
            for (j, quarter) in regs::quarters(reg).into_iter().enumerate() {
                let out: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut dst[base + 4 * j + k]));
                let chunk: &mut [f32; 4] = (&mut out[w..w + 4]).try_into().expect("4 words");
                // SAFETY: `chunk` is 4 writable f32 (unaligned stores are allowed).
                avx!(std::arch::x86_64::_mm_storeu_ps(chunk.as_mut_ptr(), quarter));
            }
        }
    }
}

/// Runs `K` over `chains` in groups of [`L`]; `false` (nothing done) when the CPU lacks
/// the instruction set.
pub(crate) fn run<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: the instruction set is available (checked just above).
    unsafe { regs::groups::<K>(chains, out) };
    true
}

const _: () = assert!(Q * 4 == W);
