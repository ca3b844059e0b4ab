//! The lane layer shared by every instruction set: 3-vectors and quaternions over lanes,
//! the math helpers of `cpu::math` and the finishing stage of `cpu::chain` over lanes,
//! record loads and stores in transpose blocks, and the group loop. Built on the
//! primitives of the instantiating module's `isa` ([`F`], [`M`], [`U`]); see `wide/mod.rs`.
//!
//! About 610 lines with its tests, over the crate's ~500-line guide on purpose: it is the
//! lane twin of `cpu::math` and `cpu::chain` together, and it is compiled once per
//! instruction set (a `#[path]` module in `wide/mod.rs`), so every lane helper a kernel
//! needs sits in one module.

use std::mem::MaybeUninit;
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::isa::{load_block, select_f, select_m, store_block, BLOCK, F, L, M, U};
use crate::constants::{HALF_TURN_W, HEMISPHERE_X, HEMISPHERE_Y, HEMISPHERE_Z};
use crate::cpu::math::sin_cos_poly;
use crate::records::{FabrikCorrections, FabrikSolved, MAX_FABRIK_JOINTS};

impl M {
    #[inline(always)]
    pub fn any(self) -> bool {
        self.bits() != 0
    }
    /// Every lane set.
    #[inline(always)]
    pub fn all(self) -> bool {
        self.bits() == u32::MAX >> (32 - L)
    }
    /// `a` where set, `b` elsewhere.
    #[inline(always)]
    pub fn sel<T: Select>(self, a: T, b: T) -> T {
        T::select(self, a, b)
    }
}

/// Per-lane choice between two values.
pub(crate) trait Select: Copy {
    fn select(m: M, a: Self, b: Self) -> Self;
}
impl Select for F {
    #[inline(always)]
    fn select(m: M, a: F, b: F) -> F {
        select_f(m, a, b)
    }
}
impl Select for M {
    #[inline(always)]
    fn select(m: M, a: M, b: M) -> M {
        select_m(m, a, b)
    }
}
impl Select for U {
    #[inline(always)]
    fn select(m: M, a: U, b: U) -> U {
        U::from_word(select_f(m, a.as_word(), b.as_word()))
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
    pub fn put_point(self, words: &mut [MaybeUninit<F>], w: usize, one: F) {
        put(words, w, &[self.x, self.y, self.z, one]);
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
/// glam's `Vec3 / f32`: each component divided (not multiplied by a reciprocal).
impl Div<F> for V3 {
    type Output = V3;
    #[inline(always)]
    fn div(self, s: F) -> V3 {
        V3 { x: self.x / s, y: self.y / s, z: self.z / s }
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
    #[inline(always)]
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
    pub fn put(self, words: &mut [MaybeUninit<F>], w: usize) {
        put(words, w, &[self.x, self.y, self.z, self.w]);
    }
    #[inline(always)]
    pub fn from_v3(v: V3, w: F) -> Q {
        Q { x: v.x, y: v.y, z: v.z, w }
    }
    /// glam's `Vec4::dot` on x86-64 (SSE2): `(x·x' + z·z') + (y·y' + w·w')`.
    #[inline(always)]
    pub fn dot(self, o: Q) -> F {
        (self.x * o.x + self.z * o.z) + (self.y * o.y + self.w * o.w)
    }
    #[inline(always)]
    pub fn conjugate(self) -> Q {
        Q { x: -self.x, y: -self.y, z: -self.z, w: self.w }
    }
    #[inline(always)]
    pub fn neg(self) -> Q {
        Q { x: -self.x, y: -self.y, z: -self.z, w: -self.w }
    }
    /// `self / |self|` (glam's `Quat::normalize` on x86-64: each component divided).
    #[inline(always)]
    pub fn normalize(self) -> Q {
        let l = self.dot(self).sqrt();
        Q { x: self.x / l, y: self.y / l, z: self.z / l, w: self.w / l }
    }
    /// Hamilton product `self · o`, in the grouping of glam's `Quat * Quat` on x86-64
    /// (SSE2, after RTM's `quat_mul`), so each lane rounds like the scalar solvers.
    #[inline(always)]
    pub fn mul(self, o: Q) -> Q {
        let (x0, y0, z0, w0) = (self.x, self.y, self.z, self.w);
        let (x1, y1, z1, w1) = (o.x, o.y, o.z, o.w);
        Q {
            x: (x0 * w1 + w0 * x1) + (y0 * z1 - z0 * y1),
            y: (w0 * y1 - x0 * z1) + (z0 * x1 + y0 * w1),
            z: (x0 * y1 + w0 * z1) + (z0 * w1 - y0 * x1),
            w: (w0 * w1 - x0 * x1) + (-(z0 * z1) - y0 * y1),
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
#[inline(always)]
pub(crate) fn any_orthonormal(v: V3) -> V3 {
    let sign = v.z.ge(0.0).sel(F::splat(1.0), F::splat(-1.0));
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    V3 { x: b, y: sign + v.y * v.y * a, z: -v.y }
}

/// `cpu::math::rotation_arc` over lanes.
#[inline(always)]
pub(crate) fn rotation_arc(from: V3, to: V3) -> Q {
    let half = from + to;
    let half2 = half.length_squared();
    let general = Q::from_v3(from.cross(half2.ge(2.0).sel(to - from, half)), 0.5 * half2).normalize();
    let singular = half2.lt(1e-12);
    if singular.any() {
        return singular.sel(Q::from_v3(any_orthonormal(from), F::splat(0.0)), general);
    }
    general
}

/// `cpu::math::quat_from_axis_cos_sin` over lanes.
#[inline(always)]
pub(crate) fn quat_from_axis_cos_sin(axis: V3, c: F, s: F) -> Q {
    let r2 = c * c + s * s;
    let r = r2.sqrt();
    let q = c.ge(0.0).sel(Q::from_v3(axis * s, r + c), Q::from_v3(axis * (r - c), s));
    r2.le(0.0).sel(Q::identity(), q.normalize())
}

/// `cpu::math::sin_cos` over lanes.
#[inline(always)]
pub(crate) fn sin_cos(x: F) -> (F, F) {
    const TAU: f32 = std::f32::consts::TAU;
    const PI: f32 = std::f32::consts::PI;
    const HALF_PI: f32 = std::f32::consts::FRAC_PI_2;
    let k = (x * (1.0 / TAU) + 0.5).floor();
    let r = (x - k * crate::constants::TAU_HI) - k * crate::constants::TAU_LO;
    let hi = r.gt(HALF_PI);
    let lo = r.lt(-HALF_PI);
    let r = hi.sel(PI - r, lo.sel(-PI - r, r));
    let cos_sign = (hi | lo).sel(F::splat(-1.0), F::splat(1.0));
    let (s, c) = sin_cos_poly(r);
    (s, c * cos_sign)
}

/// `cpu::math::quat_from_axis_angle` over lanes.
#[inline(always)]
pub(crate) fn quat_from_axis_angle(axis: V3, angle: F) -> Q {
    let (s, c) = sin_cos(angle * 0.5);
    Q::from_v3(axis * s, c)
}

/// `cpu::math::nlerp_identity` over lanes.
#[inline(always)]
pub(crate) fn nlerp_identity(q: Q, weight: F) -> Q {
    // cpu::math::flip_hemisphere
    let side = HEMISPHERE_X * q.x + HEMISPHERE_Y * q.y + HEMISPHERE_Z * q.z;
    let flip = q.w.abs().gt(HALF_TURN_W).sel(q.w.lt(0.0), side.lt(0.0));
    let q = flip.sel(q.neg(), q);
    let full = weight.ge(1.0);
    if full.all() {
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
/// rotations `r`, relative deltas `rel` and stretch `scale[i]` of bone `i` (`p[i] → p[i+1]`).
/// A delta is `Some((q, id))`: `q`, except the exact identity in the lanes of `id` (what the
/// scalar code's weighting makes of an identity delta); or `None`: the identity in every
/// lane (no weighting to compute). Writes positions, rotations and corrections of the `n` joints and
/// the status into `out`, the words of a `SolvedChain<cap>` (`12·cap + 4`; the words of
/// joints past `n` are left alone).
#[inline(always)]
#[allow(clippy::too_many_arguments)] // mirrors finish_chain
pub(crate) fn finish_chain(
    p: &[V3],
    r: &[Q],
    rel: &[Option<(Q, M)>],
    cap: usize,
    scale: &[F],
    weight: F,
    reached: M,
    info: U,
    out: &mut (impl Fields + ?Sized),
) {
    let n = p.len();
    let one = F::splat(1.0);
    let mut delta = Q::identity();
    let mut pos = p[0];
    let w01 = weight.max(0.0).min(1.0);
    for j in 0..n {
        out.field(4 * j, [pos.x, pos.y, pos.z, one]);
        // Every product as the scalar code makes it, identities included (`r⁻¹ · r` is not
        // the exact identity, `identity · e` turns a −0 into +0), so each lane is bit for
        // bit the scalar result.
        let e = match rel[j] {
            Some((rel, id)) => id.sel(Q::identity(), nlerp_identity(rel, weight)),
            None => Q::identity(),
        };
        delta = delta.mul(e);
        let c = r[j].conjugate().mul(e).mul(r[j]);
        out.field(4 * (2 * cap + j), [c.x, c.y, c.z, c.w]);
        let m = delta.mul(r[j]).normalize();
        out.field(4 * (cap + j), [m.x, m.y, m.z, m.w]);
        if j + 1 < n {
            pos = pos + delta.rotate(p[j + 1] - p[j]) * (1.0 + (scale[j] - 1.0) * w01);
        }
    }
    let zero = F::splat(0.0);
    let written = F::splat(f32::from_bits(n as u32)); // a u32 word: joints written
    let status = [(reached & weight.ge(1.0)).as_u32_word(), zero, info.as_word(), written];
    out.field(12 * cap, status);
}

/// [`finish_chain`] straight into the records `out` ([`Records`]: the words from `from` on,
/// at `w − from`), the reflection back of `mirrored` lanes compiled into a second copy
/// taken only by groups that have one.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // finish_chain's, with the records
pub(crate) fn finish_chain_into<T: bytemuck::Pod>(
    out: &mut [T; L],
    from: usize,
    mirrored: M,
    p: &[V3],
    r: &[Q],
    rel: &[Option<(Q, M)>],
    cap: usize,
    scale: &[F],
    (weight, reached, info): (F, M, U),
) {
    if mirrored.any() {
        let mut records = Records::<T, true> { out, from, cap, mirrored };
        finish_chain(p, r, rel, cap, scale, weight, reached, info, &mut records);
    } else {
        let mut records = Records::<T, false> { out, from, cap, mirrored };
        finish_chain(p, r, rel, cap, scale, weight, reached, info, &mut records);
    }
}

/// Where [`finish_chain`] puts a solved chain's words, one 16-byte field (4 words) at a
/// time, at word `w` of a `SolvedChain<cap>`.
pub(crate) trait Fields {
    /// Takes words `w..w + 4`.
    fn field(&mut self, w: usize, v: [F; 4]);
}

/// Transposed words, in place.
impl Fields for [MaybeUninit<F>] {
    #[inline(always)]
    fn field(&mut self, w: usize, v: [F; 4]) {
        put(self, w, &v);
    }
}

/// Straight into [`L`] records (a 4×4 transpose per field, no transposed copy between):
/// the fields from word `from` on, at word `w − from` of each record (a record that keeps
/// the corrections and the status alone drops the rest, and the compiler the work that
/// made it); with `MIRROR`, reflected back in the `mirrored` lanes first (points at words
/// `0..4·cap`, rotations at `4·cap..8·cap`, as [`mirror_words`]).
pub(crate) struct Records<'a, T, const MIRROR: bool> {
    pub out: &'a mut [T; L],
    pub from: usize,
    pub cap: usize,
    pub mirrored: M,
}

impl<T: bytemuck::Pod, const MIRROR: bool> Fields for Records<'_, T, MIRROR> {
    #[inline(always)]
    fn field(&mut self, w: usize, mut v: [F; 4]) {
        if w < self.from {
            return;
        }
        if MIRROR {
            let m = self.mirrored;
            if w < 4 * self.cap {
                v[0] = m.sel(-v[0], v[0]);
            } else if w < 8 * self.cap {
                v[1] = m.sel(-v[1], v[1]);
                v[2] = m.sel(-v[2], v[2]);
            }
        }
        store_block(&v, self.out, w - self.from);
    }
}

/// Stores the words `finish_chain` wrote for `n` joints packed for capacity `cap`
/// (positions `0..4·cap`, rotations, corrections, then the status) into the [`L`]
/// [`FabrikSolved`] records, whose slots past `n` are zeroed.
///
/// # Safety
/// `finish_chain` must have written words `4j..4j + 4` of each region for every joint
/// `j < n`, and the status words.
#[inline(always)]
pub(crate) unsafe fn store_fabrik_solved(solved: &[MaybeUninit<F>], cap: usize, n: usize, out: &mut [FabrikSolved; L]) {
    const J: usize = MAX_FABRIK_JOINTS;
    let nw = 4 * n;
    for k in 0..3 {
        let (from, region) = (k * 4 * cap, k * 4 * J);
        // SAFETY: the caller's promise.
        store_words_at(unsafe { assume_init_slice(&solved[from..from + nw]) }, out, region);
        zero_words(out, region + nw, region + 4 * J);
    }
    // SAFETY: the caller's promise.
    store_words_at(unsafe { assume_init_slice(&solved[12 * cap..12 * cap + 4]) }, out, 12 * J);
}

/// Stores the corrections and the status of the words `finish_chain` wrote for `n` joints
/// packed for capacity `cap` (see [`store_fabrik_solved`]) into the [`L`]
/// [`FabrikCorrections`] records, whose slots past `n` are zeroed.
///
/// # Safety
/// As for [`store_fabrik_solved`] (the corrections region and the status).
#[inline(always)]
pub(crate) unsafe fn store_fabrik_corrections(
    solved: &[MaybeUninit<F>],
    cap: usize,
    n: usize,
    out: &mut [FabrikCorrections; L],
) {
    const J: usize = MAX_FABRIK_JOINTS;
    let nw = 4 * n;
    // SAFETY: the caller's promise.
    store_words_at(unsafe { assume_init_slice(&solved[8 * cap..8 * cap + nw]) }, out, 0);
    zero_words(out, nw, 4 * J);
    // SAFETY: the caller's promise.
    store_words_at(unsafe { assume_init_slice(&solved[12 * cap..12 * cap + 4]) }, out, 4 * J);
}

/// Zeroes words `from..to` (whole 16-byte slots) of every record, one 16-byte store each.
#[inline(always)]
fn zero_words<T: bytemuck::Pod>(out: &mut [T; L], from: usize, to: usize) {
    // Zero as a value the compiler cannot see: it turns a loop of stores of a known zero
    // (or a `fill`) into a `memset` call per record and region.
    let zero = std::hint::black_box(avx!(std::arch::x86_64::_mm_setzero_ps()));
    for o in out.iter_mut() {
        let w: &mut [f32] = bytemuck::cast_slice_mut(std::slice::from_mut(o));
        for slot in w[from..to].chunks_exact_mut(4) {
            // SAFETY: `slot` is 4 writable f32 (unaligned stores are allowed).
            avx!(std::arch::x86_64::_mm_storeu_ps(slot.as_mut_ptr(), zero));
        }
    }
}

/// Calls `solve(i)` for every lane `i` whose bit is set in `bits` (the lanes the scalar
/// solver redoes).
#[inline(always)]
pub(crate) fn each_lane(mut bits: u32, mut solve: impl FnMut(usize)) {
    while bits != 0 {
        solve(bits.trailing_zeros() as usize);
        bits &= bits - 1;
    }
}

/// Lanes whose `|q|² − 1| ≤ 1e-3` (`cpu::math::is_unit_quat`).
#[inline(always)]
pub(crate) fn is_unit_quat(q: Q) -> M {
    (q.dot(q) - 1.0).abs().le(crate::constants::UNIT_QUAT_TOLERANCE)
}

/// Lanes whose words are all finite as `f32` and within ±`MAX_COORDINATE`: the largest
/// `|x|` is (a NaN fails the comparison). Mode words are small integers, i.e. tiny
/// subnormals; any other bit pattern, and any word past the bound that the scalar solver
/// would accept (a weight of 1e10), only sends the lane to the scalar path, which decides
/// for itself: the lanes never solve a chain the scalar path would reject.
#[inline(always)]
pub(crate) fn all_in_range(words: &[F]) -> M {
    // The same test as `|w| ≤ MAX_COORDINATE` word by word, in two instructions per word
    // rather than three: a non-negative `f32`'s bits order as the value does, and every
    // NaN's and infinity's bits order above the bound's.
    let mut top = U::zero();
    for &w in words {
        top = top.max(U::from_word(w.abs()));
    }
    top.le(crate::constants::MAX_COORDINATE.to_bits())
}

/// Lanes whose word is finite.
#[inline(always)]
pub(crate) fn finite(x: F) -> M {
    x.abs().le(f32::MAX)
}

/// Lanes whose point at word `w` is within ±`crate::constants::MAX_COORDINATE` (`cpu::math::in_range`).
#[inline(always)]
pub(crate) fn in_range(words: &[F], w: usize) -> M {
    words[w].abs().le(crate::constants::MAX_COORDINATE)
        & words[w + 1].abs().le(crate::constants::MAX_COORDINATE)
        & words[w + 2].abs().le(crate::constants::MAX_COORDINATE)
}

/// `cpu::math::flush_subnormal` over lanes.
#[inline(always)]
pub(crate) fn flush_subnormal(x: F) -> F {
    x.abs().lt(f32::MIN_POSITIVE).sel(F::splat(0.0), x)
}

/// Words of a record being built in lanes, each written once before it is stored.
pub(crate) type Words<const W: usize> = [MaybeUninit<F>; W];

/// Uninitialised [`Words`] (no zero-fill: every word is written before use).
#[inline(always)]
pub(crate) fn words<const W: usize>() -> Words<W> {
    [const { MaybeUninit::uninit() }; W]
}

/// Writes `v` to words `w..w + v.len()`.
#[inline(always)]
pub(crate) fn put(out: &mut [MaybeUninit<F>], w: usize, v: &[F]) {
    for (o, &x) in out[w..w + v.len()].iter_mut().zip(v) {
        o.write(x);
    }
}

/// The words, all written, viewed in place (no copy).
///
/// # Safety
/// Every word of `out` must have been written.
#[inline(always)]
pub(crate) unsafe fn assume_init<const W: usize>(out: &Words<W>) -> &[F; W] {
    // SAFETY: the caller wrote every word; `MaybeUninit<F>` has `F`'s layout.
    unsafe { &*(&raw const *out).cast::<[F; W]>() }
}

/// [`assume_init`] for part of a [`Words`] (e.g. the words of the joints a chain has).
///
/// # Safety
/// Every word of `out` must have been written.
#[inline(always)]
pub(crate) unsafe fn assume_init_slice(out: &[MaybeUninit<F>]) -> &[F] {
    // SAFETY: the caller wrote every word; `MaybeUninit<F>` has `F`'s layout.
    unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<F>(), out.len()) }
}

/// [`assume_init_slice`], writable.
///
/// # Safety
/// Every word of `out` must have been written.
#[inline(always)]
pub(crate) unsafe fn assume_init_slice_mut(out: &mut [MaybeUninit<F>]) -> &mut [F] {
    // SAFETY: the caller wrote every word; `MaybeUninit<F>` has `F`'s layout.
    unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<F>(), out.len()) }
}

/// The reflection of [`crate::records::option::MIRRORED`] in the lanes of `m`, in place:
/// the x word of each point starting at a word of `points`, the y and z words of each
/// rotation starting at a word of `rotations` negated (exact, as the scalar
/// `records::mirror_point` / `mirror_rotation`). Run on a chain's words before the solve
/// (its unmirrored twin) and on the solved words after it.
#[inline(always)]
pub(crate) fn mirror_words(
    words: &mut [F],
    m: M,
    points: impl IntoIterator<Item = usize>,
    rotations: impl IntoIterator<Item = usize>,
) {
    for p in points {
        words[p] = m.sel(-words[p], words[p]);
    }
    for r in rotations {
        for k in [r + 1, r + 2] {
            words[k] = m.sel(-words[k], words[k]);
        }
    }
}

/// The `W` 32-bit words of [`L`] records, transposed into `out` and viewed in place:
/// word `w` lane `i` = word `w` of `src[i]`. `T` must be exactly `W` words. (The kernels
/// load with [`load_words_at`], which leaves the words writable for `mirror_words`.)
#[cfg(test)]
#[inline(always)]
pub(crate) fn load_words<'a, T: bytemuck::Pod, const W: usize>(src: &[T; L], out: &'a mut Words<W>) -> &'a [F; W] {
    assert!(size_of::<T>() == 4 * W);
    load_words_at(src, 0, out);
    // SAFETY: `load_words_at` wrote all `W` words.
    unsafe { assume_init(out) }
}

/// Words `at..at + out.len()` of [`L`] records, transposed into `out` (the range inside the
/// record, whole [`BLOCK`]s: every record field is 16 bytes).
#[inline(always)]
pub(crate) fn load_words_at<T: bytemuck::Pod>(src: &[T; L], at: usize, out: &mut [MaybeUninit<F>]) {
    assert!(out.len().is_multiple_of(BLOCK) && 4 * (at + out.len()) <= size_of::<T>());
    for b in (0..out.len()).step_by(BLOCK) {
        load_block(src, at + b, &mut out[b..]);
    }
}

/// Stores transposed words back: word `w` of `dst[i]` = `words[w]` lane `i`. `T` must be
/// exactly `words.len()` words.
#[inline(always)]
pub(crate) fn store_words<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L]) {
    assert!(size_of::<T>() == 4 * words.len());
    store_words_at(words, dst, 0);
}

/// Stores transposed words to words `at..at + words.len()` of each record (the range inside
/// the record, whole [`BLOCK`]s).
#[inline(always)]
pub(crate) fn store_words_at<T: bytemuck::Pod>(words: &[F], dst: &mut [T; L], at: usize) {
    assert!(words.len().is_multiple_of(BLOCK) && 4 * (at + words.len()) <= size_of::<T>());
    for b in (0..words.len()).step_by(BLOCK) {
        store_block(&words[b..b + BLOCK], dst, at + b);
    }
}

/// A solver over one group of [`L`] chains.
pub(crate) trait Kernel {
    type Chain: bytemuck::Pod;
    type Solved: bytemuck::Pod;
    /// Solves `c` into `out`. Must be `#[inline(always)]`: it is compiled into the
    /// `target_feature` entry point of `isa::run`, its only caller.
    fn group(c: &[Self::Chain; L], out: &mut [Self::Solved; L]);
    /// The scalar solver the group stands for (bit for bit the same result), for the few
    /// chains left over after the last whole group ([`each_group`]).
    fn scalar(c: &Self::Chain, out: &mut Self::Solved);
    /// Whether the batch runs two groups at a time through [`Kernel::group2`] (else one
    /// at a time through [`Kernel::group`]).
    const PAIRED: bool = false;
    /// Solves two groups (`c` into `out`, `c2` into `out2`), bit for bit as two
    /// [`Kernel::group`] calls; used when [`Kernel::PAIRED`]. A kernel whose lanes wait on
    /// a long chain of dependent operations (FABRIK: a square root and a division per
    /// joint, each joint waiting on the last) interleaves the two groups so the core
    /// overlaps their chains. Must be `#[inline(always)]` like `group`.
    #[inline(always)]
    fn group2(c: &[Self::Chain; L], c2: &[Self::Chain; L], out: &mut [Self::Solved; L], out2: &mut [Self::Solved; L]) {
        Self::group(c, out);
        Self::group(c2, out2);
    }
}

/// Prefetches `bytes` from `p` into L2 (a hint: no effect on results, never faults). Into
/// L2 rather than L1: a group asks for tens of lines at once, more than L1's miss buffers
/// hold, and on a 2-core AMD EPYC VM bursts of `prefetcht0` cost more than they saved.
#[inline(always)]
fn prefetch<T>(p: *const T, bytes: usize) {
    let base = p.cast::<i8>();
    for offset in (0..bytes).step_by(64) {
        // SAFETY: a prefetch never faults (SSE, always on x86-64).
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(base.wrapping_add(offset)) };
    }
}

/// Runs `K` over `chains` in groups of [`L`]. The chains left over after the last whole
/// group run in a group padded with copies of its first chain (their results are dropped),
/// or, when they fill no more than an eighth of a group (a batch of one chain, the tail of a
/// large batch), on the scalar solver: a group costs what 3 to 7 scalar solves cost, so a
/// group of one chain would cost several times that chain alone. Both give the same bits,
/// so every chain's result is independent of where it sits in the batch.
#[inline(always)]
pub(crate) fn each_group<K: Kernel>(chains: &[K::Chain], out: &mut [K::Solved]) {
    debug_assert_eq!(chains.len(), out.len());
    // Large batches stream from memory, and a store that misses the cache waits for the
    // line to be read first: ask for the input records and the output lines two groups
    // ahead (into L2, see `prefetch`), a group's worth before each group (a kernel that
    // pairs its groups: a pair's worth before each pair). 1 M two-bone chains on AVX2:
    // 98 → 74 ns each with this against a pair's worth into L1 (BENCHMARKS.md).
    const AHEAD: usize = 2;
    let out_base = out.as_ptr();
    let out_len = out.len();
    let step = if K::PAIRED { 2 * L } else { L };
    // Whole steps (a group, or a pair through `Kernel::group2`), then the last full group
    // a pair left over, then the padded rest.
    let mut steps = chains.chunks_exact(step);
    let mut step_outs = out.chunks_exact_mut(step);
    for (g, (c, o)) in (&mut steps).zip(&mut step_outs).enumerate() {
        let next = g * step + AHEAD * L;
        if next + step <= out_len {
            // SAFETY: in bounds (checked above); only used as a prefetch address.
            prefetch(unsafe { out_base.add(next) }, step * size_of::<K::Solved>());
            // SAFETY: as above (`chains` and `out` have one length).
            prefetch(unsafe { chains.as_ptr().add(next) }, step * size_of::<K::Chain>());
        }
        if K::PAIRED {
            let ((c, c2), (o, o2)) = (c.split_at(L), o.split_at_mut(L));
            K::group2(
                c.try_into().expect("chunk of L"),
                c2.try_into().expect("chunk of L"),
                o.try_into().expect("chunk of L"),
                o2.try_into().expect("chunk of L"),
            );
        } else {
            K::group(c.try_into().expect("chunk of L"), o.try_into().expect("chunk of L"));
        }
    }
    let mut cs = steps.remainder().chunks_exact(L);
    let mut os = step_outs.into_remainder().chunks_exact_mut(L);
    for (c, o) in (&mut cs).zip(&mut os) {
        K::group(c.try_into().expect("chunk of L"), o.try_into().expect("chunk of L"));
    }
    let (rest, rest_out) = (cs.remainder(), os.into_remainder());
    if 8 * rest.len() <= L {
        for (c, o) in rest.iter().zip(rest_out) {
            K::scalar(c, o);
        }
    } else if let Some(&first) = rest.first() {
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
        if !super::super::isa::available() {
            return;
        }
        let src: [[f32; 48]; L] = std::array::from_fn(|i| std::array::from_fn(|w| (i * 100 + w) as f32));
        let mut buf = words::<48>();
        let words = load_words(&src, &mut buf);
        for (w, word) in words.iter().enumerate() {
            assert_eq!(word.to_array(), std::array::from_fn(|i| (i * 100 + w) as f32));
        }
        let mut back = [[0.0_f32; 48]; L];
        store_words(words, &mut back);
        assert_eq!(back, src);
        // Sub-ranges, at an offset that is not a field boundary too.
        let mut part = [MaybeUninit::new(F::splat(0.0)); 12];
        load_words_at(&src, 30, &mut part);
        // SAFETY: initialised above.
        let part = unsafe { assume_init(&part) };
        for (k, word) in part.iter().enumerate() {
            assert_eq!(word.to_array(), std::array::from_fn(|i| (i * 100 + 30 + k) as f32));
        }
        let mut back = [[-1.0_f32; 48]; L];
        store_words_at(&words[..20], &mut back, 0);
        store_words_at(&words[44..], &mut back, 44);
        for (b, s) in back.iter().zip(&src) {
            assert_eq!(b[..20], s[..20]);
            assert!(b[20..44].iter().all(|&x| x == -1.0));
            assert_eq!(b[44..], s[44..]);
        }

        let x: [f32; L] = std::array::from_fn(|i| i as f32 * 1.7 - 6.0);
        let (s, c) = sin_cos(F::from_array(x));
        let (sl, cl) = (s.to_array(), c.to_array());
        for i in 0..L {
            assert_eq!((sl[i], cl[i]), crate::cpu::math::sin_cos(x[i]));
        }
    }

    #[test]
    fn all_in_range_is_the_scalar_bound_word_by_word() {
        if !super::super::isa::available() {
            return;
        }
        let m = crate::constants::MAX_COORDINATE;
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            m,
            -m,
            f32::from_bits(m.to_bits() + 1),
            -f32::from_bits(m.to_bits() + 1),
            f32::from_bits(m.to_bits() - 1),
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fff_ffff),
            f32::from_bits(0xffff_ffff),
            f32::from_bits(3), // a mode word
            f32::MIN_POSITIVE,
            f32::MAX,
        ];
        // Lane i: three ordinary words and special[(i + k) % len] at word k (or none).
        for start in 0..special.len() {
            let rows: [[f32; 4]; L] = std::array::from_fn(|i| {
                let k = (start + i) % (special.len() + 1);
                let mut r = [0.5, -2.0, 7.0, 1e3];
                if let Some(&x) = special.get(k) {
                    r[i % 4] = x;
                }
                r
            });
            let words: [F; 4] = std::array::from_fn(|w| F::from_array(std::array::from_fn(|i| rows[i][w])));
            let got = all_in_range(&words).bits();
            for (i, r) in rows.iter().enumerate() {
                let want = r.iter().all(|x| x.abs() <= m);
                assert_eq!(got >> i & 1 == 1, want, "lane {i}: {r:?}");
            }
        }
        assert_eq!(all_in_range(&[]).bits(), M::splat(true).bits());
    }

    #[test]
    fn partial_weights_of_half_turns_turn_the_scalar_way() {
        // w at ±0 and around ±HALF_TURN_W, axes on both sides of the hemisphere direction:
        // the lanes pick the scalar hemisphere (same signs, equal to rounding).
        if !super::super::isa::available() {
            return;
        }
        let ws = [0.0, -0.0, 1e-9, -1e-9, 9e-5, -9e-5, 1.1e-4, -1.1e-4, 0.3, -0.3];
        let axes = [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, -0.6, 0.8], [0.8, 0.0, -0.6], [-0.8, 0.6, 0.0]];
        let mut qs = Vec::new();
        for w in ws {
            for a in axes {
                let s = (1.0_f32 - w * w).sqrt();
                qs.push(glam::Quat::from_xyzw(a[0] * s, a[1] * s, a[2] * s, w));
            }
        }
        for chunk in qs.chunks(L) {
            let lane =
                |k: usize| -> [f32; L] { std::array::from_fn(|i| chunk.get(i).map_or(0.0, |q| q.to_array()[k])) };
            let q = Q {
                x: F::from_array(lane(0)),
                y: F::from_array(lane(1)),
                z: F::from_array(lane(2)),
                w: F::from_array(lane(3)),
            };
            for weight in [0.25_f32, 0.5, 1.0] {
                let out = nlerp_identity(q, F::splat(weight));
                let (x, y, z, w) = (out.x.to_array(), out.y.to_array(), out.z.to_array(), out.w.to_array());
                for (i, q) in chunk.iter().enumerate() {
                    let want = crate::cpu::math::nlerp_identity(*q, weight);
                    let got = glam::Quat::from_xyzw(x[i], y[i], z[i], w[i]);
                    assert!((got - want).length() < 1e-6, "{q} at weight {weight}: {got} against {want}");
                }
            }
        }
        // And the rule itself: ±q give the same weighted rotation near a half turn (off
        // the tie, the plane perpendicular to the hemisphere direction).
        for q in &qs {
            let (a, b) = (crate::cpu::math::nlerp_identity(*q, 0.5), crate::cpu::math::nlerp_identity(-*q, 0.5));
            let side = q.x * 0.36 + q.y * 0.48 + q.z * 0.8;
            if q.w.abs() <= 1e-8 && side.abs() > 1e-6 {
                assert_eq!(a, b, "{q}");
            }
        }
    }
}
