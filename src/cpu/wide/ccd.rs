//! Fixed-iteration CCD over [`L`] chains at once: the SoA batch twin of `cpu::ccd` (its
//! `solve` in [`FabrikMode::Fixed`], both sweep orders), stage for stage. A group's chains
//! share one joint count, iteration count and sweep order (a batch that mixes them is
//! grouped first).
//!
//! As in `constrained_fabrik.rs`, each lane's checks, limits and cap are prepared by the
//! scalar code once per chain and transposed; the sweeps run in lanes with the limits
//! branch-free (`limits.rs`). Mirrored, invalid or untouched (weight ≤ 0) chains go to the
//! scalar solver.

use super::isa::{F, L, M, U};
use super::lanes::{rotation_arc, Kernel, Q, V3};
use super::limits::{
    finish_limited, limit_rotation, limited_group, load_limited, prepare_lane, LaneLimit, Limited, PREP,
};
use crate::cpu::ccd::{ccd_with_mode, check_step, Cap, OPTIONS};
use crate::cpu::fabrik::FabrikMode;
use crate::records::{info, option, CcdChain, FabrikChain, FabrikSolved, Options};

/// The CCD [`Kernel`].
pub(crate) struct Ccd;

impl Kernel for Ccd {
    type Chain = CcdChain;
    type Solved = FabrikSolved;
    #[inline(always)]
    fn group(c: &[CcdChain; L], out: &mut [FabrikSolved; L]) {
        limited_group::<Self>(c, out);
    }
    fn scalar(c: &CcdChain, out: &mut FabrikSolved) {
        <Self as Limited>::scalar(c, out);
    }
}

impl Limited for Ccd {
    type Chain = CcdChain;
    #[inline(always)]
    fn chain(c: &CcdChain) -> &FabrikChain {
        &c.chain
    }
    #[inline(always)]
    fn scalar(c: &CcdChain, out: &mut FabrikSolved) {
        ccd_with_mode(c, FabrikMode::Fixed, out);
    }
    /// The prepared record's last words: the total length, then the cap's cosine and sine;
    /// a group shares its sweep order.
    #[inline(always)]
    fn prepare(c: &CcdChain, first: &CcdChain, n: usize, cap: usize, iterations: u32, w: &mut [f32]) -> bool {
        let ch = &c.chain;
        let ready = !ch.has_option(option::MIRRORED)
            && ch.has_option(option::ROOT_FIRST) == first.has_option(option::ROOT_FIRST)
            && ch.iterations() == iterations
            && check_step(c).is_ok()
            && prepare_lane(ch, &c.limits, OPTIONS, n, cap, w);
        if ready {
            let turn = Cap::new(c.max_step());
            w[PREP * cap + 1..PREP * cap + 4].copy_from_slice(&[turn.cos, turn.sin, 0.0]);
        }
        ready
    }
    /// [`Limited::solve`]: the sweeps in the group's order, then the finishing.
    #[inline(always)]
    fn solve<const N: usize, const W: usize, const S: usize, const P: usize>(
        c: &[CcdChain; L],
        prep: &[[f32; P]; L],
        out: &mut [FabrikSolved; L],
        n: usize,
        iterations: u32,
    ) {
        let root_first = c[0].chain.has_option(option::ROOT_FIRST);
        let g = load_limited::<_, N, W, P>(c, prep, n);
        let (fk_p, fk, lim) = (&g.fk_p, &g.fk, &g.lim);
        let total = g.extra[0];
        let target = V3::at(&g.tail, 0);
        let precision = g.tail[4];
        let s = Sweep {
            target,
            parent_ms: Q::at(&g.tail, 12),
            cap_cos: g.extra[1],
            cap_sin: g.extra[2],
            eps2: 1e-12 * total * total,
            project: iterations == 0,
        };
        let mut p = *fk_p;
        let mut rot = *fk;
        for _ in 0..iterations.max(1) {
            if root_first {
                sweep_root_first(&mut p, &mut rot, lim, &s, n);
            } else {
                sweep_tip_first(&mut p, &mut rot, lim, &s, n);
            }
        }
        let reached = (p[n - 1] - target).length().le(precision);
        let mut flags = U::zero();
        flags.set((target - fk_p[0]).length().ge(total), info::OUT_OF_REACH);
        // Relative deltas from CCD's rotations: D_i = R'_i · R_i⁻¹, E_i = D_{i−1}⁻¹ · D_i.
        let mut rel = [Q::identity(); N];
        let mut parent_delta = Q::identity();
        for i in 0..n - 1 {
            let delta = rot[i].mul(fk[i].conjugate()).normalize();
            rel[i] = parent_delta.conjugate().mul(delta).normalize();
            parent_delta = delta;
        }
        finish_limited::<N, S>(&g, &rel, parent_delta.conjugate(), n, reached, flags, out);
    }
}

/// What every visit of one group's sweeps shares (`cpu::ccd::Sweep` over lanes).
struct Sweep {
    target: V3,
    parent_ms: Q,
    /// The cap's cosine and sine (`cpu::ccd::Cap`).
    cap_cos: F,
    cap_sin: F,
    eps2: F,
    /// Only move each joint into its limit (zero iterations; the group shares its count).
    project: bool,
}

/// `cpu::ccd::cap_turn` over lanes.
#[inline(always)]
fn cap_turn(r: Q, s: &Sweep) -> Q {
    let v = V3 { x: r.x, y: r.y, z: r.z };
    let len = v.length();
    let a = v * (1.0 / len);
    let capped = Q { x: a.x * s.cap_sin, y: a.y * s.cap_sin, z: a.z * s.cap_sin, w: s.cap_cos };
    (len.gt(0.0) & r.w.lt(s.cap_cos)).sel(capped, r)
}

/// `cpu::ccd::visit` over lanes: the joint's new rotation and the turn it made.
#[inline(always)]
fn visit(pivot: V3, tip: V3, current: Q, parent: Q, limit: &LaneLimit, s: &Sweep) -> (Q, Q) {
    let to_tip = tip - pivot;
    let to_target = s.target - pivot;
    let (l_tip, l_target) = (to_tip.length_squared(), to_target.length_squared());
    let moves = M::splat(!s.project) & l_tip.gt(s.eps2) & l_target.gt(s.eps2);
    let r = cap_turn(rotation_arc(to_tip / l_tip.sqrt(), to_target / l_target.sqrt()), s);
    let mut new = moves.sel(r.mul(current).normalize(), current);
    if limit.limited.any() {
        new = limit.limited.sel(limit_rotation(parent, new, limit), new);
    }
    let turn = new.mul(current.conjugate()).normalize();
    // A joint that does not turn toward the target is still moved into its limit.
    let changes = moves | limit.limited;
    (changes.sel(new, current), changes.sel(turn, Q::identity()))
}

/// `cpu::ccd::sweep_tip_first` over lanes.
#[inline(always)]
fn sweep_tip_first<const N: usize>(p: &mut [V3; N], rot: &mut [Q; N], lim: &[LaneLimit; N], s: &Sweep, n: usize) {
    let mut turn = [Q::identity(); N];
    let mut tip = p[n - 1];
    for j in (0..n - 1).rev() {
        let parent = if j == 0 { s.parent_ms } else { rot[j - 1] };
        let (new, t) = visit(p[j], tip, rot[j], parent, &lim[j], s);
        rot[j] = new;
        turn[j] = t;
        tip = p[j] + t.rotate(tip - p[j]);
    }
    let mut c = turn[0];
    let mut above_old = p[0];
    for k in 1..n {
        let old = p[k];
        p[k] = p[k - 1] + c.rotate(old - above_old);
        rot[k] = c.mul(rot[k]).normalize();
        above_old = old;
        c = c.mul(turn[k]);
    }
}

/// `cpu::ccd::sweep_root_first` over lanes.
#[inline(always)]
fn sweep_root_first<const N: usize>(p: &mut [V3; N], rot: &mut [Q; N], lim: &[LaneLimit; N], s: &Sweep, n: usize) {
    let mut c = Q::identity();
    let mut above_old = p[0];
    let tip_old = p[n - 1];
    for j in 0..n - 1 {
        let old = p[j];
        if j > 0 {
            p[j] = p[j - 1] + c.rotate(old - above_old);
        }
        let current = c.mul(rot[j]).normalize();
        let tip = p[j] + c.rotate(tip_old - old);
        let parent = if j == 0 { s.parent_ms } else { rot[j - 1] };
        let (new, t) = visit(p[j], tip, current, parent, &lim[j], s);
        rot[j] = new;
        c = t.mul(c);
        above_old = old;
    }
    p[n - 1] = p[n - 2] + c.rotate(tip_old - above_old);
    rot[n - 1] = c.mul(rot[n - 1]).normalize();
}
