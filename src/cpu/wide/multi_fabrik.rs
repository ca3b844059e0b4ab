//! Fixed-iteration multi-effector FABRIK over [`L`] trees at once: the SoA batch twin of
//! `cpu::multi_fabrik` (its `solve` in [`FabrikMode::Fixed`](crate::cpu::FabrikMode)),
//! stage for stage.
//!
//! A group's trees share their shape: joint count, parents, effector joints, iterations and
//! option bits (a batch that mixes shapes is grouped by them first), so the walks over the
//! tree (children lists, sub-bases, the joints on paths to effectors) are one path for
//! every lane. The shape comes from the scalar checks (`setup`) of one tree per group; each
//! lane's own checks, bones, lengths and effector weights, the iterations and the finishing
//! run in lanes. Invalid or untouched (weight ≤ 0) trees, and trees of another shape, go to
//! the scalar solver.

use super::isa::{F, L, M};
use super::lanes::{
    assume_init_slice, each_lane, finite, flush_subnormal, in_range, is_unit_quat, load_words_at, nlerp_identity,
    normalize_or, put, quat_from_axis_angle, rotation_arc, store_words, words, Kernel, Q, V3,
};
use super::limits::atan2;
use crate::constants::{MAX_EFFECTOR_WEIGHT, MIN_EFFECTOR_WEIGHT, MIN_TREE_BONE};
use crate::cpu::limb::MIN_CHAIN_LENGTH;
use crate::cpu::multi_fabrik::{multi_fabrik, setup, Tree, NONE, TWIST_FADE};
use crate::records::{option, MultiFabrikChain, MultiFabrikSolved, MAX_EFFECTORS, MAX_TREE_JOINTS};

/// The multi-effector FABRIK [`Kernel`].
pub(crate) struct MultiFabrik;

/// Words of a solved tree: positions, rotations and corrections of `MAX_TREE_JOINTS` joints,
/// then the status.
const SOLVED: usize = 12 * MAX_TREE_JOINTS + 4;
const _: () = assert!(size_of::<MultiFabrikSolved>() == 4 * SOLVED);
/// Where the record's fields start, in words.
const ROTATIONS: usize = 4 * MAX_TREE_JOINTS;
const TARGETS: usize = 8 * MAX_TREE_JOINTS;
const PARAMS: usize = TARGETS + 4 * MAX_EFFECTORS + 12;

impl Kernel for MultiFabrik {
    type Chain = MultiFabrikChain;
    type Solved = MultiFabrikSolved;
    #[inline(always)]
    fn group(c: &[MultiFabrikChain; L], out: &mut [MultiFabrikSolved; L]) {
        let lanes = match c[0].joint_count() {
            2..=8 => group_of::<8>(c, out),
            9..=16 => group_of::<16>(c, out),
            17..=MAX_TREE_JOINTS => group_of::<MAX_TREE_JOINTS>(c, out),
            _ => 0,
        };
        each_lane(!lanes & (u32::MAX >> (32 - L)), |i| multi_fabrik(&c[i], &mut out[i]));
    }
    fn scalar(c: &MultiFabrikChain, out: &mut MultiFabrikSolved) {
        multi_fabrik(c, out);
    }
}

/// A group of trees of at most `N` joints: the shape from the scalar checks of the first
/// tree that passes them, each lane's checks, bones and effector weights in lanes, the
/// lanes that pass solved together. Returns the lanes solved here.
#[inline(always)]
fn group_of<const N: usize>(c: &[MultiFabrikChain; L], out: &mut [MultiFabrikSolved; L]) -> u32 {
    const { assert!(N <= MAX_TREE_JOINTS && N.is_multiple_of(4)) };
    let first = &c[0];
    let same =
        |ci: &MultiFabrikChain| ci.mode == first.mode && ci.parents == first.parents && ci.effectors == first.effectors;
    let Some(t) = c.iter().filter(|ci| same(ci)).find_map(|ci| setup(ci).ok()) else { return 0 };
    if t.n > N {
        return 0;
    }
    solve::<N>(c, out, &t).bits()
}

/// `cpu::multi_fabrik::fitted_twist` over lanes.
#[inline(always)]
fn fitted_twist(axis: V3, cos: F, sin: F, scale: F) -> Q {
    let m2 = (cos * cos + sin * sin) / (scale * scale);
    let fade = m2 / (m2 + TWIST_FADE * TWIST_FADE);
    quat_from_axis_angle(axis, atan2(sin, cos) * fade)
}

/// The children of joint `j` in the shape `t` (record order).
#[inline(always)]
fn children(t: &Tree, j: usize) -> impl Iterator<Item = usize> + '_ {
    let real = |c: usize| (c != NONE).then_some(c);
    std::iter::successors(real(t.first_child[j]), move |&c| real(t.next_sibling[c]))
}

/// Checks and solves a group of trees of the shape `t` into `out`: returns the lanes that
/// pass the checks (the others get garbage, which the scalar solver overwrites).
#[inline(always)]
fn solve<const N: usize>(c: &[MultiFabrikChain; L], out: &mut [MultiFabrikSolved; L], t: &Tree) -> M {
    let n = t.n;
    let first = &c[0];
    let nw = 4 * n;
    let mut jw = words::<{ 4 * MAX_TREE_JOINTS }>();
    let mut rw = words::<{ 4 * MAX_TREE_JOINTS }>();
    let mut tail = words::<{ 4 * MAX_EFFECTORS + 20 }>();
    load_words_at(c, 0, &mut jw[..nw]);
    load_words_at(c, ROTATIONS, &mut rw[..nw]);
    load_words_at(c, TARGETS, &mut tail);
    // SAFETY: the words of the joints, and every word from the targets on, were loaded above.
    let (jw, rw, tail) =
        unsafe { (assume_init_slice(&jw[..nw]), assume_init_slice(&rw[..nw]), assume_init_slice(&tail)) };
    let zero = F::splat(0.0);
    let origin = V3 { x: zero, y: zero, z: zero };
    // Loops rather than `build`: its closures, where not inlined, would be functions
    // without the instruction set (every lane operation a call).
    let (mut target, mut target_w) = ([origin; MAX_EFFECTORS], [zero; MAX_EFFECTORS]);
    for e in 0..MAX_EFFECTORS {
        target[e] = V3::at(tail, 4 * e);
        target_w[e] = tail[4 * e + 3];
    }
    let p0 = PARAMS - TARGETS;
    let params = [tail[p0], tail[p0 + 1], tail[p0 + 2], tail[p0 + 3]];
    let (precision, weight) = (params[0], params[1]);

    // --- setup(): the checks the shape leaves open, lane by lane, then the bones and the
    // effector weight below each joint (the scalar code's operations in its order). A point
    // within range is finite, and so is a unit quaternion or a weight within its bounds. ---
    let mut ok = M::splat(true);
    // The shape's words: parents and effector joints (words 16..28 from the targets on), the
    // mode (32..36; the parameters sit between).
    let shape = first.parents.as_flattened().iter().chain(&first.effectors).enumerate();
    for (k, &word) in shape.chain(first.mode.iter().enumerate().map(|(k, w)| (k + 16, w))) {
        ok = ok & tail[4 * MAX_EFFECTORS + k].word_eq(word);
    }
    for j in 0..n {
        ok = ok & in_range(jw, 4 * j) & finite(jw[4 * j + 3]) & is_unit_quat(Q::at(rw, 4 * j));
    }
    for (e, w) in target_w.iter().enumerate().take(first.effector_count()) {
        ok = ok & in_range(tail, 4 * e) & w.ge(MIN_EFFECTOR_WEIGHT) & w.le(MAX_EFFECTOR_WEIGHT);
    }
    ok = ok & finite(precision) & flush_subnormal(precision).ge(0.0) & finite(weight) & weight.gt(0.0);
    ok = ok & !flush_subnormal(params[2]).ne_(0.0) & !flush_subnormal(params[3]).ne_(0.0);
    let mut bone = [origin; N];
    let mut len = [zero; N];
    let mut total = zero;
    for j in 1..n {
        bone[j] = V3::at(jw, 4 * j) - V3::at(jw, 4 * t.parent[j]);
        len[j] = bone[j].length();
        total = total + len[j];
    }
    for &l in &len[1..n] {
        ok = ok & l.gt(MIN_TREE_BONE * total) & total.ge(MIN_CHAIN_LENGTH);
    }
    let mut below = [zero; N];
    for j in (0..n).rev() {
        if t.effector[j] != NONE {
            below[j] = below[j] + target_w[t.effector[j]];
        }
        if j > 0 {
            below[t.parent[j]] = below[t.parent[j]] + below[j];
        }
    }
    let on_path = |j: usize| t.below[j] > 0.0;
    let keep_root = first.mode[2] & option::KEEP_ROOT_ROTATION != 0;
    let eps2 = 1e-12 * total * total;

    let mut p = [origin; N];
    for (j, pj) in p.iter_mut().enumerate().take(n) {
        *pj = V3::at(jw, 4 * j);
    }
    let mut q = p;
    let mut d = [Q::identity(); N];
    for _ in 0..first.iterations() {
        // --- backward(): tips to root. ---
        let mut acc = [origin; N];
        let mut wacc = [zero; N];
        for j in (1..n).rev() {
            if !on_path(j) {
                continue;
            }
            let (mut sum, mut ws) = (acc[j], wacc[j]);
            if t.effector[j] != NONE {
                let e = t.effector[j];
                sum = sum + target[e] * target_w[e];
                ws = ws + target_w[e];
            }
            q[j] = sum / ws;
            let par = t.parent[j];
            let ask = if t.active[par] > 1 {
                q[j] - d[par].rotate(bone[j])
            } else {
                let now = normalize_or(p[par] - p[j], -bone[j] / len[j], eps2);
                q[j] + normalize_or(p[par] - q[j], now, eps2) * len[j]
            };
            acc[par] = acc[par] + ask * below[j];
            wacc[par] = wacc[par] + below[j];
        }
        // --- forward(): root to tips. ---
        for j in 0..n {
            let d_par = if j == 0 { Q::identity() } else { d[t.parent[j]] };
            let (mut a, mut b, mut active, mut first_active) = (origin, origin, 0, NONE);
            for ch in children(t, j).filter(|&ch| on_path(ch)) {
                let now = d_par.rotate(bone[ch]);
                let want = normalize_or(q[ch] - p[j], now / len[ch], eps2) * len[ch];
                a = a + now * below[ch];
                b = b + want * below[ch];
                active += 1;
                if first_active == NONE {
                    first_active = ch;
                }
            }
            let mut dj = d_par;
            if active > 0 && !(j == 0 && keep_root) {
                let cancel = !(a.length_squared().gt(eps2) & b.length_squared().gt(eps2));
                if cancel.any() {
                    // The bones cancel out: steer by the first one.
                    let f = first_active;
                    let a1 = d_par.rotate(bone[f]);
                    let b1 = normalize_or(q[f] - p[j], a1 / len[f], eps2) * len[f];
                    a = cancel.sel(a1, a);
                    b = cancel.sel(b1, b);
                }
                let axis = b.normalize();
                let swing = rotation_arc(a.normalize(), axis);
                dj = swing.mul(d_par);
                if active > 1 {
                    let (mut cos, mut sin, mut scale) = (zero, zero, zero);
                    for ch in children(t, j).filter(|&ch| on_path(ch)) {
                        let now = dj.rotate(bone[ch]);
                        let want = normalize_or(q[ch] - p[j], now / len[ch], eps2) * len[ch];
                        let (u, v) = (now - axis * now.dot(axis), want - axis * want.dot(axis));
                        cos = cos + u.dot(v) * below[ch];
                        sin = sin + u.cross(v).dot(axis) * below[ch];
                        scale = scale + len[ch] * len[ch] * below[ch];
                    }
                    dj = fitted_twist(axis, cos, sin, scale).mul(dj);
                }
                dj = dj.normalize();
            }
            d[j] = dj;
            for ch in children(t, j) {
                p[ch] = p[j] + dj.rotate(bone[ch]);
            }
        }
    }

    // --- Finishing: every relative delta weighted, the pose rebuilt from them. ---
    let mut solved = words::<SOLVED>();
    let mut dw = [Q::identity(); N];
    let mut pw = [origin; N];
    for j in 0..n {
        let (d_par, dw_par, here) = if j == 0 {
            (Q::identity(), Q::identity(), V3::at(jw, 0))
        } else {
            let par = t.parent[j];
            (d[par], dw[par], pw[par] + dw[par].rotate(bone[j]))
        };
        let e = nlerp_identity(d_par.conjugate().mul(d[j]), weight);
        dw[j] = dw_par.mul(e);
        pw[j] = here;
        let r = Q::at(rw, 4 * j);
        here.put_point(&mut solved, 4 * j, F::splat(1.0));
        dw[j].mul(r).normalize().put(&mut solved, 4 * (MAX_TREE_JOINTS + j));
        r.conjugate().mul(e).mul(r).put(&mut solved, 4 * (2 * MAX_TREE_JOINTS + j));
    }
    for j in n..MAX_TREE_JOINTS {
        for region in 0..3 {
            put(&mut solved, 4 * (region * MAX_TREE_JOINTS + j), &[zero; 4]);
        }
    }
    let mut error = zero;
    for j in (0..n).filter(|&j| t.effector[j] != NONE) {
        error = error.max((pw[j] - target[t.effector[j]]).length());
    }
    let tolerance = precision.max(1e-6 * (pw[0].length() + total));
    let reached: M = weight.ge(1.0) & error.le(tolerance);
    let count = F::splat(f32::from_bits(n as u32)); // a u32 word: joints written
    put(&mut solved, 12 * MAX_TREE_JOINTS, &[reached.as_u32_word(), zero, zero, count]);
    // SAFETY: every word was written above.
    store_words(unsafe { assume_init_slice(&solved) }, out);
    ok
}
