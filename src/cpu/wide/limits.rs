//! Joint limits over lanes: the lane twin of `cpu::limits` (the deviation moved into a
//! hinge, cone or twist limit, the forward step's and CCD's forms of it) with the polynomial
//! `atan2` and the angle clamp it needs, and the per-lane prepared record the limited
//! kernels transpose. Every lane evaluates its limit branch-free: the hinge's or the twist's
//! angle (one `atan2`, clamp and rebuild, the inputs chosen per lane as
//! `shaders/shared/limits.wgsl` does; the same operations on the same values as the scalar
//! branches), then the cone; a group whose lanes are all hinges, or have no cone, skips
//! what none of them needs.

use glam::Vec3;

use super::isa::{F, L, M, U};
use super::lanes::{
    assume_init_slice, each_lane, finish_chain, load_words_at, quat_from_axis_angle, store_fabrik_solved, words, Q, V3,
};
use crate::constants::{LIMIT_CONE, LIMIT_HINGE, LIMIT_TWIST, PI};
use crate::cpu::constrained_fabrik::checked;
use crate::cpu::fabrik::MAX_FABRIK_ITERATIONS;
use crate::cpu::limits::Limit;
use crate::records::{option, ChainLimits, FabrikChain, FabrikSolved, MAX_FABRIK_JOINTS};

/// One joint's limit over lanes (`cpu::limits::Limit`, its kind as masks).
#[derive(Clone, Copy)]
pub(crate) struct LaneLimit {
    /// Lanes with any limit on this joint.
    pub limited: M,
    pub hinge: M,
    pub twist: M,
    pub cone: M,
    pub rest: Q,
    pub frame: Q,
    pub bone: V3,
    pub u: V3,
    pub range: [F; 4],
}

/// Words per joint of a lane's prepared record ([`pack_joint`]): the limit's frame (4),
/// rest (4), bone and kind bits (4), `u` and the bone length (4), range (4), FK bone
/// direction and a pad (4).
pub(crate) const PREP: usize = 24;

/// Packs joint `j`'s prepared limit `l`, bone length and FK bone direction (the scalar
/// `checked`'s results) into a lane's prepared record `w`, for the transpose.
fn pack_joint(w: &mut [f32], j: usize, l: &Limit, len: f32, dir_fk: Vec3) {
    let at = PREP * j;
    w[at..at + 4].copy_from_slice(&l.frame.to_array());
    w[at + 4..at + 8].copy_from_slice(&l.rest.to_array());
    w[at + 8..at + 11].copy_from_slice(&l.bone.to_array());
    w[at + 11] = f32::from_bits(l.kind);
    w[at + 12..at + 15].copy_from_slice(&l.u.to_array());
    w[at + 15] = len;
    w[at + 16..at + 20].copy_from_slice(&l.range);
    w[at + 20..at + 23].copy_from_slice(&dir_fk.to_array());
}

/// Joint `j`'s limit in the transposed prepared records.
#[inline(always)]
fn lane_limit(pw: &[F], j: usize) -> LaneLimit {
    let at = PREP * j;
    let kind = pw[at + 11];
    LaneLimit {
        limited: !kind.word_eq(0),
        hinge: kind.word_eq(LIMIT_HINGE),
        twist: !kind.word_clear(LIMIT_TWIST),
        cone: !kind.word_clear(LIMIT_CONE),
        frame: Q::at(pw, at),
        rest: Q::at(pw, at + 4),
        bone: V3::at(pw, at + 8),
        u: V3::at(pw, at + 12),
        range: [pw[at + 16], pw[at + 17], pw[at + 18], pw[at + 19]],
    }
}

/// A limited solver over lanes (constrained FABRIK, CCD): its records, its scalar solver,
/// and its group for a capacity of `N` joints.
pub(crate) trait Limited {
    type Chain: bytemuck::Pod;
    /// The record's chain.
    fn chain(c: &Self::Chain) -> &FabrikChain;
    /// The scalar solver ([`FabrikMode::Fixed`]).
    fn scalar(c: &Self::Chain, out: &mut FabrikSolved);
    /// Prepares chain `c` for the lanes of a group led by `first` (chains of `n` joints,
    /// `iterations` iterations, lane arrays of capacity `cap`) into its prepared record `w`
    /// ([`prepare_lane`], plus the kernel's own words); `false` sends it to the scalar solver.
    fn prepare(c: &Self::Chain, first: &Self::Chain, n: usize, cap: usize, iterations: u32, w: &mut [f32]) -> bool;
    /// Solves a group of chains of `n ≤ N` joints in lanes from their prepared records (`W`
    /// = `4N` words of N joints, `S` = `12N + 4` words of N solved joints and the status,
    /// `P` = `PREP·N + 4` words of a prepared record); the lanes not prepared compute garbage
    /// that the scalar solver overwrites.
    fn solve<const N: usize, const W: usize, const S: usize, const P: usize>(
        c: &[Self::Chain; L],
        prep: &[[f32; P]; L],
        out: &mut [FabrikSolved; L],
        n: usize,
        iterations: u32,
    );
}

/// A group of a limited solver: its lane arrays sized for the group's joint count (4, 8
/// or 16 joints); a joint or iteration count out of range goes to the scalar solver (its
/// error).
#[inline(always)]
pub(crate) fn limited_group<K: Limited>(c: &[K::Chain; L], out: &mut [FabrikSolved; L]) {
    const J: usize = MAX_FABRIK_JOINTS;
    let chain = K::chain(&c[0]);
    let (n, iterations) = (chain.joint_count(), chain.iterations());
    if !(2..=J).contains(&n) || iterations > MAX_FABRIK_ITERATIONS {
        for (ci, o) in c.iter().zip(out.iter_mut()) {
            K::scalar(ci, o);
        }
        return;
    }
    match n {
        2..=4 => group_of::<K, 4, 16, 52, { PREP * 4 + 4 }>(c, out, n, iterations),
        5..=8 => group_of::<K, 8, 32, 100, { PREP * 8 + 4 }>(c, out, n, iterations),
        _ => group_of::<K, J, { 4 * J }, { 12 * J + 4 }, { PREP * J + 4 }>(c, out, n, iterations),
    }
}

/// [`limited_group`] for chains of `n ≤ N` joints: each lane prepared by the scalar code
/// ([`Limited::prepare`]), the prepared lanes solved together, the others by the scalar
/// solver.
#[inline(always)]
fn group_of<K: Limited, const N: usize, const W: usize, const S: usize, const P: usize>(
    c: &[K::Chain; L],
    out: &mut [FabrikSolved; L],
    n: usize,
    iterations: u32,
) {
    const { assert!(W == 4 * N && S == 12 * N + 4 && P == PREP * N + 4 && N <= MAX_FABRIK_JOINTS) };
    debug_assert!((2..=N).contains(&n));
    let mut prep = [[0.0_f32; P]; L];
    let mut lanes = 0u32; // the lanes solved here
    for (lane, ci) in c.iter().enumerate() {
        if K::prepare(ci, &c[0], n, N, iterations, &mut prep[lane]) {
            lanes |= 1 << lane;
        }
    }
    if lanes != 0 {
        K::solve::<N, W, S, P>(c, &prep, out, n, iterations);
    }
    each_lane(!lanes & (u32::MAX >> (32 - L)), |i| K::scalar(&c[i], &mut out[i]));
}

/// The finishing stage of a limited group: the relative deltas `rel` of joints `0..n − 1`,
/// the end joint's `end` where the record keeps its end rotation (the identity elsewhere),
/// weighted, the pose rebuilt and stored with the status (`cpu::chain::finish_chain`).
#[inline(always)]
pub(crate) fn finish_limited<const N: usize, const S: usize>(
    g: &LimitedGroup<N>,
    rel: &[Q; N],
    end: Q,
    n: usize,
    reached: M,
    flags: U,
    out: &mut [FabrikSolved; L],
) {
    let mut deltas = [None; N];
    for i in 0..n - 1 {
        deltas[i] = Some((rel[i], M::splat(false)));
    }
    let keep_end = !g.tail[10].word_clear(option::KEEP_END_ROTATION);
    if keep_end.any() {
        deltas[n - 1] = Some((end, !keep_end));
    }
    let weight = g.tail[3];
    let mut solved = words::<S>();
    finish_chain(
        &g.fk_p[..n],
        &g.fk[..n],
        &deltas[..n],
        N,
        &[F::splat(1.0); N],
        weight,
        reached,
        flags,
        &mut solved[..],
    );
    // SAFETY: finish_chain wrote the words of the n joints and the status.
    unsafe { store_fabrik_solved(&solved, N, n, out) };
}

/// Prepares one lane of a limited kernel: the scalar checks and limits of `chain` and
/// `limits` (`options` the option bits its solver knows), packed into the lane's prepared
/// record `w` (its joints, then the chain's total length at word `PREP·cap`). `false` (the
/// lane goes to the scalar solver) for a chain that fails a check, has another joint count
/// than `n`, or weight ≤ 0.
pub(crate) fn prepare_lane(
    chain: &FabrikChain,
    limits: &ChainLimits,
    options: u32,
    n: usize,
    cap: usize,
    w: &mut [f32],
) -> bool {
    let mut prepared = [Limit::default(); MAX_FABRIK_JOINTS];
    let Ok(s) = checked(chain, limits, options, &mut prepared) else { return false };
    if s.n != n || !(chain.target_ms[3] > 0.0) {
        return false;
    }
    for (j, l) in prepared[..n].iter().enumerate() {
        pack_joint(w, j, l, s.len[j], s.dir_fk[j]);
    }
    w[PREP * cap] = s.total;
    true
}

/// A group of limited chains in lanes (records that start with a `FabrikChain`, then a
/// `ChainLimits`), for joints `0..n` of capacity `N`.
pub(crate) struct LimitedGroup<const N: usize> {
    /// FK positions and model rotations.
    pub fk_p: [V3; N],
    pub fk: [Q; N],
    /// The prepared limits, bone lengths and FK bone directions.
    pub lim: [LaneLimit; N],
    pub len: [F; N],
    pub dir_fk: [V3; N],
    /// Record words 128..144: target, params, mode, the limits' parent rotation.
    pub tail: [F; 16],
    /// The prepared records' last 4 words (the total length, then the kernel's own).
    pub extra: [F; 4],
}

/// Loads a group of limited chains `c` and their prepared records `prep` into lanes (`W` =
/// `4N`, `P` = `PREP·N + 4`).
#[inline(always)]
pub(crate) fn load_limited<T: bytemuck::Pod, const N: usize, const W: usize, const P: usize>(
    c: &[T; L],
    prep: &[[f32; P]; L],
    n: usize,
) -> LimitedGroup<N> {
    const { assert!(W == 4 * N && P == PREP * N + 4) };
    // Record words: joints 0..64, rotations 64..128, target 128..132, params 132..136,
    // mode 136..140, then the limits (their parent rotation at 140).
    let nw = 4 * n;
    let zero = F::splat(0.0);
    let mut jw = words::<W>();
    let mut rw = words::<W>();
    let mut tail = words::<16>();
    let mut pw = words::<P>();
    load_words_at(c, 0, &mut jw[..nw]);
    load_words_at(c, 64, &mut rw[..nw]);
    load_words_at(c, 128, &mut tail);
    load_words_at(prep, 0, &mut pw);
    // SAFETY: the words of the n joints, all of `tail` and all of `pw` were loaded above.
    let (jw, rw, tail, pw) = unsafe {
        (assume_init_slice(&jw[..nw]), assume_init_slice(&rw[..nw]), assume_init_slice(&tail), assume_init_slice(&pw))
    };
    // Loops rather than `build`: its closures, where not inlined, would be functions
    // without the instruction set (every intrinsic a call).
    let v0 = V3 { x: zero, y: zero, z: zero };
    let (mut fk_p, mut fk) = ([v0; N], [Q::identity(); N]);
    for j in 0..n {
        fk_p[j] = V3::at(jw, 4 * j);
        fk[j] = Q::at(rw, 4 * j);
    }
    let mut lim = [lane_limit(pw, 0); N];
    let (mut len, mut dir_fk) = ([zero; N], [v0; N]);
    for j in 0..N {
        lim[j] = lane_limit(pw, j);
        len[j] = pw[PREP * j + 15];
        dir_fk[j] = V3::at(pw, PREP * j + 20);
    }
    let mut tail_w = [zero; 16];
    tail_w.copy_from_slice(tail);
    let mut extra = [zero; 4];
    extra.copy_from_slice(&pw[PREP * N..PREP * N + 4]);
    LimitedGroup { fk_p, fk, lim, len, dir_fk, tail: tail_w, extra }
}

/// `f32::round` over lanes (halves away from zero; exact: `|x| − floor(|x|)` is).
#[inline(always)]
fn round(x: F) -> F {
    let ax = x.abs();
    let f = ax.floor();
    let r = (ax - f).ge(0.5).sel(f + 1.0, f);
    x.lt(0.0).sel(-r, r)
}

/// `cpu::math::atan2` over lanes.
#[inline(always)]
pub(crate) fn atan2(y: F, x: F) -> F {
    const TAN_PI_12: f32 = 0.267_949_2;
    const INV_SQRT3: f32 = 0.577_350_26;
    let (ax, ay) = (x.abs(), y.abs());
    let hi = ax.max(ay);
    let a = ax.min(ay) / hi;
    let big = a.gt(TAN_PI_12);
    let r = big.sel((a - INV_SQRT3) / (1.0 + a * INV_SQRT3), a);
    let r2 = r * r;
    let t = r
        * (1.0
            + r2 * (-1.0 / 3.0
                + r2 * (1.0 / 5.0 + r2 * (-1.0 / 7.0 + r2 * (1.0 / 9.0 + r2 * (-1.0 / 11.0 + r2 * (1.0 / 13.0)))))));
    let t = big.sel(t + PI / 6.0, t);
    let t = ay.gt(ax).sel(PI / 2.0 - t, t);
    let t = x.lt(0.0).sel(PI - t, t);
    let t = y.lt(0.0).sel(-t, t);
    // `hi == 0` (`hi` is never negative; a NaN stays NaN as in the scalar code).
    hi.le(0.0).sel(F::splat(0.0), t)
}

/// `cpu::limits::wrap` over lanes: `x` wrapped into `[−π, π]`.
#[inline(always)]
fn wrap(x: F) -> F {
    x - (2.0 * PI) * round(x * (0.5 / PI))
}

/// `cpu::limits::clamp_angle` over lanes.
#[inline(always)]
pub(crate) fn clamp_angle(a: F, lo: F, hi: F) -> F {
    let inside = a.ge(lo) & a.le(hi);
    let to_lo = wrap(a - lo).abs().le(wrap(a - hi).abs());
    inside.sel(a, to_lo.sel(lo, hi))
}

/// `cpu::limits::limit_deviation` over lanes: the same operations on the same values as
/// its branches (the hinge's and the twist's angle share one `atan2`, as in
/// `shaders/shared/limits.wgsl`; multiplying by 1.0 is exact).
#[inline(always)]
pub(crate) fn limit_deviation(d: Q, l: &LaneLimit) -> Q {
    let d = d.w.lt(0.0).sel(d.neg(), d);
    let (b, r) = (l.bone, l.range);
    // Hinge: the bone's angle about `u`.
    let s = d.rotate(b);
    let (hy, hx) = (s.dot(l.u.cross(b)), s.dot(b));
    let h = l.hinge;
    if h.all() {
        // Every lane a hinge (chains of one rig share their kinds): the same values
        // without the swing-twist split and the cone.
        let angle = (hx * hx + hy * hy).gt(1e-12).sel(atan2(hy, hx), F::splat(0.0));
        return quat_from_axis_angle(l.u, clamp_angle(angle, r[0], r[1]));
    }
    // Otherwise: swing-twist about the bone, d = swing · twist.
    let along = V3 { x: d.x, y: d.y, z: d.z }.dot(b);
    let t = Q { x: b.x * along, y: b.y * along, z: b.z * along, w: d.w };
    let twist = t.dot(t).gt(1e-12).sel(t.normalize(), Q::identity());
    let swing = d.mul(twist.conjugate());
    // The one angle about one axis: the hinge's, or the twist's.
    let y = h.sel(hy, V3 { x: twist.x, y: twist.y, z: twist.z }.dot(b));
    let x = h.sel(hx, twist.w);
    let scale = h.sel(F::splat(1.0), F::splat(2.0));
    let angle = (!h | (hx * hx + hy * hy).gt(1e-12)).sel(scale * atan2(y, x), F::splat(0.0));
    let clamped = clamp_angle(angle, h.sel(r[0], r[2]), h.sel(r[1], r[3]));
    let turned = quat_from_axis_angle(h.sel(l.u, b), clamped);
    let twist = (l.twist & clamped.ne_(angle)).sel(turned, twist);
    if !l.cone.any() {
        return h.sel(turned, swing.mul(twist));
    }
    // Cone: the swing's rotation vector scaled back onto the ellipse.
    let v = V3 { x: swing.x, y: swing.y, z: swing.z };
    let sl = v.length();
    let phi = 2.0 * atan2(sl, swing.w.abs());
    let a = v * (1.0 / sl);
    let wu = phi * a.dot(l.u) / r[0];
    let wv = phi * a.dot(b.cross(l.u)) / r[1];
    let e = wu * wu + wv * wv;
    let capped = quat_from_axis_angle(swing.w.lt(0.0).sel(-a, a), phi / e.sqrt());
    let swing = (l.cone & sl.gt(0.0) & e.gt(1.0)).sel(capped, swing);
    h.sel(turned, swing.mul(twist))
}

/// `cpu::limits::limit_relative` over lanes.
#[inline(always)]
pub(crate) fn limit_relative(rel: Q, fk: Q, l: &LaneLimit) -> Q {
    let limited = limit_deviation(l.frame.mul(rel).mul(fk), l);
    l.frame.conjugate().mul(limited).mul(fk.conjugate()).normalize()
}

/// `cpu::limits::limit_rotation` over lanes: a candidate model rotation moved into the
/// limit, the parent's model rotation being `parent`.
#[inline(always)]
pub(crate) fn limit_rotation(parent: Q, candidate: Q, l: &LaneLimit) -> Q {
    let local_rest = l.rest.conjugate().mul(parent.conjugate().mul(candidate));
    parent.mul(l.rest.mul(limit_deviation(local_rest, l))).normalize()
}
