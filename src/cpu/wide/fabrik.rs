//! Fixed-iteration FABRIK over [`L`] chains at once: the SoA batch twin of `cpu::fabrik`
//! (its `setup` and `solve`), line for line. A group's chains share one joint count and
//! iteration count (a batch that mixes them is grouped by both first).

use super::isa::{F, L, M, U};
use super::lanes::{
    all_in_range, assume_init_slice, assume_init_slice_mut, each_lane, finish_chain, is_unit_quat, load_words_at,
    mirror_words, normalize_or, rotation_arc, store_fabrik_corrections, store_fabrik_solved, words, Kernel, Q, V3,
};
use crate::cpu::fabrik::{fabrik_corrections, fabrik_with_mode, FabrikMode, MAX_FABRIK_ITERATIONS};
use crate::cpu::limb::{MIN_CHAIN_LENGTH, ON_ROOT, ZERO_BONE};
use crate::records::{info, option, FabrikChain, FabrikCorrections, FabrikSolved, MAX_FABRIK_JOINTS};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

const J: usize = MAX_FABRIK_JOINTS;

/// What a FABRIK group writes per chain: the full [`FabrikSolved`] record, or the
/// corrections and status alone ([`FabrikCorrections`]).
pub(crate) trait FabrikOut: bytemuck::Pod {
    /// Whether the record holds model-space positions and rotations (reflected back for
    /// mirrored lanes); corrections are local and need no reflecting.
    const MODEL_SPACE: bool;
    /// Stores the solved words of `n` joints packed for capacity `cap`.
    ///
    /// # Safety
    /// As for [`store_fabrik_solved`].
    unsafe fn store(solved: &[MaybeUninit<F>], cap: usize, n: usize, out: &mut [Self; L]);
    /// The scalar solver, for the lanes it redoes.
    fn scalar(c: &FabrikChain, out: &mut Self);
}

impl FabrikOut for FabrikSolved {
    const MODEL_SPACE: bool = true;
    #[inline(always)]
    unsafe fn store(solved: &[MaybeUninit<F>], cap: usize, n: usize, out: &mut [Self; L]) {
        // SAFETY: the caller's promise.
        unsafe { store_fabrik_solved(solved, cap, n, out) }
    }
    fn scalar(c: &FabrikChain, out: &mut Self) {
        fabrik_with_mode(c, FabrikMode::Fixed, out);
    }
}

impl FabrikOut for FabrikCorrections {
    const MODEL_SPACE: bool = false;
    #[inline(always)]
    unsafe fn store(solved: &[MaybeUninit<F>], cap: usize, n: usize, out: &mut [Self; L]) {
        // SAFETY: the caller's promise.
        unsafe { store_fabrik_corrections(solved, cap, n, out) }
    }
    fn scalar(c: &FabrikChain, out: &mut Self) {
        fabrik_corrections(c, FabrikMode::Fixed, out);
    }
}

/// The FABRIK [`Kernel`], writing `O` per chain (`FabrikJob`: the full record;
/// `FabrikCorrectionsJob`: the corrections alone, so the compiler drops the positions and
/// rotations nothing stores).
pub(crate) struct Fabrik<O = FabrikSolved>(PhantomData<O>);

impl<O: FabrikOut> Kernel for Fabrik<O> {
    type Chain = FabrikChain;
    type Solved = O;
    #[inline(always)]
    fn group(c: &[FabrikChain; L], out: &mut [O; L]) {
        group(c, out);
    }
    fn scalar(c: &FabrikChain, out: &mut O) {
        O::scalar(c, out);
    }
    const PAIRED: bool = true;
    #[inline(always)]
    fn group2(c: &[FabrikChain; L], c2: &[FabrikChain; L], out: &mut [O; L], out2: &mut [O; L]) {
        group2(c, c2, out, out2);
    }
}

#[inline(always)]
fn group<O: FabrikOut>(c: &[FabrikChain; L], out: &mut [O; L]) {
    let n = c[0].joint_count();
    let iterations = c[0].iterations();
    if !(2..=J).contains(&n) || iterations > MAX_FABRIK_ITERATIONS {
        for (ci, o) in c.iter().zip(out.iter_mut()) {
            O::scalar(ci, o);
        }
        return;
    }
    // Lane arrays sized for the group's joint count (4, 8 or 16 joints), so short chains
    // do not initialise, copy and store the lane values of 16 joints.
    match n {
        2..=4 => group_of::<O, 4, 16, 52>(c, out, n, iterations),
        5..=8 => group_of::<O, 8, 32, 100>(c, out, n, iterations),
        _ => group_of::<O, J, { 4 * J }, { 12 * J + 4 }>(c, out, n, iterations),
    }
}

/// Two groups of one joint count and iteration count, their iterations interleaved (each
/// joint's square root and division wait on the joint before: two independent chains keep
/// the core busy); bit for bit two [`group`] calls. Groups that differ go one by one.
#[inline(always)]
fn group2<O: FabrikOut>(c: &[FabrikChain; L], c2: &[FabrikChain; L], out: &mut [O; L], out2: &mut [O; L]) {
    let (n, iterations) = (c[0].joint_count(), c[0].iterations());
    let same = (c2[0].joint_count(), c2[0].iterations()) == (n, iterations);
    if !same || !(2..=J).contains(&n) || iterations > MAX_FABRIK_ITERATIONS {
        group(c, out);
        group(c2, out2);
        return;
    }
    match n {
        2..=4 => pair_of::<O, 4, 16, 52>([c, c2], [out, out2], n, iterations),
        5..=8 => pair_of::<O, 8, 32, 100>([c, c2], [out, out2], n, iterations),
        _ => pair_of::<O, J, { 4 * J }, { 12 * J + 4 }>([c, c2], [out, out2], n, iterations),
    }
}

/// [`group_of`] for two groups, their iterations interleaved.
#[inline(always)]
fn pair_of<O: FabrikOut, const N: usize, const W: usize, const S: usize>(
    c: [&[FabrikChain; L]; 2],
    out: [&mut [O; L]; 2],
    n: usize,
    iterations: u32,
) {
    const { assert!(W == 4 * N && S == 12 * N + 4 && N <= J) };
    let g = [load::<N, W>(c[0], n), load::<N, W>(c[1], n)];
    let s = [setup(&g[0], n, iterations), setup(&g[1], n, iterations)];
    let [(p0, info0, reached0), (p1, info1, reached1)] = solve([&g[0], &g[1]], [&s[0], &s[1]], n, iterations);
    let [out0, out1] = out;
    finish::<O, N, S>(&g[0], &s[0], &p0, info0, reached0, n, out0);
    finish::<O, N, S>(&g[1], &s[1], &p1, info1, reached1, n, out1);
    for k in 0..2 {
        let o = if k == 0 { &mut *out0 } else { &mut *out1 };
        each_lane((!s[k].solve).bits(), |i| O::scalar(&c[k][i], &mut o[i]));
    }
}

/// A group's records as lanes, for capacity `N` (joints past the group's `n` are zero).
struct Lanes<const N: usize> {
    fk: [V3; N],
    r: [Q; N],
    target: V3,
    weight: F,
    precision: F,
    /// The record's `mode` words: joint count, iterations, options, reserved.
    mode: [F; 4],
    /// Lanes whose chains are mirrored (reflected on load; solved words reflected back).
    mirrored: M,
    /// Lanes whose every loaded word is finite and within range.
    in_range: M,
}

/// Bone lengths and FK directions, and which lanes pass every check (`setup()`).
struct Setup<const N: usize> {
    len: [F; N],
    dir_fk: [V3; N],
    total: F,
    /// Base to target.
    c_len: F,
    solve: M,
}

/// [`group`] for chains of `n ≤ N` joints, `N` the capacity of the lane arrays (`W` =
/// `4N` words of N joints, `S` = `12N + 4` words of N solved joints and the status): load,
/// `setup()`, `solve()`, finish, as the scalar solver's stages.
#[inline(always)]
fn group_of<O: FabrikOut, const N: usize, const W: usize, const S: usize>(
    c: &[FabrikChain; L],
    out: &mut [O; L],
    n: usize,
    iterations: u32,
) {
    const { assert!(W == 4 * N && S == 12 * N + 4 && N <= J) };
    debug_assert!((2..=N).contains(&n));
    let g = load::<N, W>(c, n);
    let s = setup(&g, n, iterations);
    let [(p, info, reached)] = solve([&g], [&s], n, iterations);
    finish::<O, N, S>(&g, &s, &p, info, reached, n, out);
    each_lane((!s.solve).bits(), |i| O::scalar(&c[i], &mut out[i]));
}

/// The words of the group's `n` joints, target and settings as lanes, mirrored lanes
/// reflected (as in `two_bone.rs`: joints and target reflected, rotations conjugated).
#[inline(always)]
fn load<const N: usize, const W: usize>(c: &[FabrikChain; L], n: usize) -> Lanes<N> {
    // Record words: joints 0..64, rotations 64..128, target 128..132, params 132..136,
    // mode 136..140.
    let nw = 4 * n; // the words of n joints
    let zero = F::splat(0.0);
    // Only the words of the n joints are loaded (and read); lanes past n hold zeros.
    let mut jw = words::<W>();
    let mut rw = words::<W>();
    let mut tail = words::<16>();
    load_words_at(c, 0, &mut jw[..nw]);
    load_words_at(c, 64, &mut rw[..nw]);
    load_words_at(c, 128, &mut tail[..8]);
    load_words_at(c, 132, &mut tail[8..]);
    // SAFETY: the words of the n joints and all 16 words of `tail` were loaded just above.
    let mirrored = !unsafe { assume_init_slice(&tail) }[14].word_clear(option::MIRRORED);
    if mirrored.any() {
        // SAFETY: as above.
        unsafe {
            mirror_words(assume_init_slice_mut(&mut jw[..nw]), mirrored, (0..n).map(|j| 4 * j), []);
            mirror_words(assume_init_slice_mut(&mut rw[..nw]), mirrored, [], (0..n).map(|j| 4 * j));
            mirror_words(assume_init_slice_mut(&mut tail), mirrored, [0], []);
        }
    }
    // SAFETY: as above.
    let (jw, rw, tail) =
        unsafe { (assume_init_slice(&jw[..nw]), assume_init_slice(&rw[..nw]), assume_init_slice(&tail)) };
    // Loops rather than `build`: its closures, where not inlined, would be functions
    // without the instruction set (every intrinsic a call).
    let mut fk = [V3 { x: zero, y: zero, z: zero }; N];
    let mut r = [Q { x: zero, y: zero, z: zero, w: zero }; N];
    for j in 0..n {
        fk[j] = V3::at(jw, 4 * j);
        r[j] = Q::at(rw, 4 * j);
    }
    Lanes {
        fk,
        r,
        target: V3::at(tail, 0),
        weight: tail[3],
        precision: tail[4],
        mode: [tail[12], tail[13], tail[14], tail[15]],
        mirrored,
        in_range: all_in_range(jw) & all_in_range(rw) & all_in_range(&tail[..8]),
    }
}

/// `setup()`: every check, then bone lengths and FK directions.
#[inline(always)]
fn setup<const N: usize>(g: &Lanes<N>, n: usize, iterations: u32) -> Setup<N> {
    let [count, iters, options, reserved] = g.mode;
    let mut eligible = g.in_range
        & count.word_eq(n as u32)
        & iters.word_eq(iterations)
        & options.word_clear(!option::FABRIK)
        & reserved.word_eq(0)
        & g.precision.ge(0.0)
        & g.weight.gt(0.0);
    for q in &g.r[..n] {
        eligible = eligible & is_unit_quat(*q);
    }
    let zero = F::splat(0.0);
    let fk = &g.fk;
    let mut len = [zero; N];
    let mut dir_fk = [fk[0]; N];
    let mut total = zero;
    for i in 0..n - 1 {
        let bone = fk[i + 1] - fk[i];
        len[i] = bone.length();
        dir_fk[i] = bone / len[i];
        total = total + len[i];
    }
    let mut failed = M::splat(false);
    for l in &len[..n - 1] {
        failed = failed | !(l.gt(ZERO_BONE * total) & total.ge(MIN_CHAIN_LENGTH));
    }
    let c_len = (g.target - fk[0]).length();
    failed = failed | !c_len.gt(ON_ROOT * total);
    Setup { len, dir_fk, total, c_len, solve: eligible & !failed }
}

/// `solve()` of `G` groups: straight toward an out-of-reach target, else the iterations;
/// each group's solved joints, info bits and which lanes reached. The groups' steps are
/// interleaved joint by joint (each lane's operations and their order are the scalar
/// solver's, whatever `G`).
#[inline(always)]
fn solve<const N: usize, const G: usize>(
    g: [&Lanes<N>; G],
    s: [&Setup<N>; G],
    n: usize,
    iterations: u32,
) -> [([V3; N], U, M); G] {
    // Loops rather than `build`: its closures, where not inlined, would be functions
    // without the instruction set (every lane operation a call).
    let mut p = [g[0].fk; G];
    let mut eps2 = [F::splat(0.0); G];
    let mut straight = [M::splat(false); G];
    for k in 0..G {
        p[k] = g[k].fk;
        eps2[k] = 1e-12 * s[k].total * s[k].total;
        straight[k] = s[k].c_len.ge(s[k].total);
    }
    if (0..G).any(|k| (s[k].solve & !straight[k]).any()) {
        for _ in 0..iterations {
            for k in 0..G {
                p[k][n - 1] = g[k].target;
            }
            for i in (0..n - 1).rev() {
                for k in 0..G {
                    let dir = normalize_or(p[k][i] - p[k][i + 1], -s[k].dir_fk[i], eps2[k]);
                    p[k][i] = p[k][i + 1] + dir * s[k].len[i];
                }
            }
            for k in 0..G {
                p[k][0] = g[k].fk[0];
            }
            for i in 0..n - 1 {
                for k in 0..G {
                    let dir = normalize_or(p[k][i + 1] - p[k][i], s[k].dir_fk[i], eps2[k]);
                    p[k][i + 1] = p[k][i] + dir * s[k].len[i];
                }
            }
        }
    }
    // A loop rather than a `build` closure: a closure this large is not always inlined
    // into the `target_feature` entry point, and its lane operations then become calls.
    let mut info = [U::zero(); G];
    let mut reached = [M::splat(false); G];
    for k in 0..G {
        let (target, base, straight) = (g[k].target, g[k].fk[0], straight[k]);
        if (s[k].solve & straight).any() {
            let d = (target - base) / s[k].c_len;
            let mut q = base;
            for i in 0..n - 1 {
                let next = q + d * s[k].len[i];
                p[k][i + 1] = straight.sel(next, p[k][i + 1]);
                q = next;
            }
            info[k].set(straight, info::OUT_OF_REACH);
        }
        reached[k] = (p[k][n - 1] - target).length().le(g[k].precision);
    }
    let mut out = [(p[0], info[0], reached[0]); G];
    for k in 1..G {
        out[k] = (p[k], info[k], reached[k]);
    }
    out
}

/// The local corrections of the solved joints, then the solved records (mirrored lanes
/// reflected back).
#[inline(always)]
fn finish<O: FabrikOut, const N: usize, const S: usize>(
    g: &Lanes<N>,
    s: &Setup<N>,
    p: &[V3; N],
    info: U,
    reached: M,
    n: usize,
    out: &mut [O; L],
) {
    let eps2 = 1e-12 * s.total * s.total;
    let mut rel = [None; N];
    let mut parent = Q::identity();
    for i in 0..n - 1 {
        let new_dir = normalize_or(p[i + 1] - p[i], s.dir_fk[i], eps2);
        let rel_i = rotation_arc(s.dir_fk[i], parent.conjugate().rotate(new_dir));
        rel[i] = Some((rel_i, M::splat(false)));
        parent = parent.mul(rel_i);
    }
    let keep_end = !g.mode[2].word_clear(option::KEEP_END_ROTATION);
    if keep_end.any() {
        rel[n - 1] = Some((parent.conjugate(), !keep_end));
    }

    // Words of the solved joints, packed for capacity N: positions 0..4N, rotations
    // 4N..8N, corrections 8N..12N, status 12N..12N+4. FabrikSolved holds them at 0, 4J,
    // 8J and 12J; its slots past n are zero. Only the words finish_chain writes (joints
    // 0..n of each region and the status) are read back.
    let nw = 4 * n;
    let mut solved = words::<S>();
    finish_chain(&g.fk[..n], &g.r[..n], &rel[..n], N, &[F::splat(1.0); N], g.weight, reached, info, &mut solved[..]);
    if O::MODEL_SPACE && g.mirrored.any() {
        // SAFETY: finish_chain wrote words 4j..4j + 4 of each region for every joint j < n.
        let (positions, rest) = solved.split_at_mut(4 * N);
        unsafe {
            mirror_words(assume_init_slice_mut(&mut positions[..nw]), g.mirrored, (0..n).map(|j| 4 * j), []);
            mirror_words(assume_init_slice_mut(&mut rest[..nw]), g.mirrored, [], (0..n).map(|j| 4 * j));
        }
    }
    // SAFETY: finish_chain wrote the words of the n joints and the status.
    unsafe { O::store(&solved, N, n, out) };
}
