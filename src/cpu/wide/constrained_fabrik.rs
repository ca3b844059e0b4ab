//! Fixed-iteration constrained FABRIK over [`L`] chains at once: the SoA batch twin of
//! `cpu::constrained_fabrik` (its `solve` in [`FabrikMode::Fixed`]), stage for stage. A
//! group's chains share one joint count and iteration count (a batch that mixes them is
//! grouped by both first).
//!
//! Each lane's checks and limits are prepared by the scalar code (`checked`, once per
//! chain), packed into a per-lane record and transposed like the chain's own words; the
//! iterations (the free backward pass, the limited forward pass) run in lanes, the limits
//! branch-free (`limits.rs`). Lanes with `MIRRORED` or `ALIGN_HINGES`, invalid or
//! untouched (weight ≤ 0) chains go to the scalar solver.

use super::isa::{L, U};
use super::lanes::{normalize_or, rotation_arc, Kernel, Q, V3};
use super::limits::{finish_limited, limit_relative, limited_group, load_limited, prepare_lane, Limited};
use crate::cpu::constrained_fabrik::{constrained_fabrik_with_mode, OPTIONS};
use crate::cpu::fabrik::FabrikMode;
use crate::records::{info, option, ConstrainedFabrikChain, FabrikChain, FabrikSolved, Options};

/// The constrained FABRIK [`Kernel`].
pub(crate) struct ConstrainedFabrik;

impl Kernel for ConstrainedFabrik {
    type Chain = ConstrainedFabrikChain;
    type Solved = FabrikSolved;
    #[inline(always)]
    fn group(c: &[ConstrainedFabrikChain; L], out: &mut [FabrikSolved; L]) {
        limited_group::<Self>(c, out);
    }
    fn scalar(c: &ConstrainedFabrikChain, out: &mut FabrikSolved) {
        <Self as Limited>::scalar(c, out);
    }
}

impl Limited for ConstrainedFabrik {
    type Chain = ConstrainedFabrikChain;
    #[inline(always)]
    fn chain(c: &ConstrainedFabrikChain) -> &FabrikChain {
        &c.chain
    }
    #[inline(always)]
    fn scalar(c: &ConstrainedFabrikChain, out: &mut FabrikSolved) {
        constrained_fabrik_with_mode(c, FabrikMode::Fixed, out);
    }
    #[inline(always)]
    fn prepare(
        c: &ConstrainedFabrikChain,
        _first: &ConstrainedFabrikChain,
        n: usize,
        cap: usize,
        iterations: u32,
        w: &mut [f32],
    ) -> bool {
        let ch = &c.chain;
        !ch.has_option(option::MIRRORED | option::ALIGN_HINGES)
            && ch.iterations() == iterations
            && prepare_lane(ch, &c.limits, OPTIONS, n, cap, w)
    }
    /// [`Limited::solve`]: the free backward pass, the limited forward pass, the finishing.
    #[inline(always)]
    fn solve<const N: usize, const W: usize, const S: usize, const P: usize>(
        c: &[ConstrainedFabrikChain; L],
        prep: &[[f32; P]; L],
        out: &mut [FabrikSolved; L],
        n: usize,
        iterations: u32,
    ) {
        let g = load_limited::<_, N, W, P>(c, prep, n);
        let (fk, r, lim, len, dir_fk) = (&g.fk_p, &g.fk, &g.lim, &g.len, &g.dir_fk);
        let total = g.extra[0];
        let target = V3::at(&g.tail, 0);
        let precision = g.tail[4];
        let base = fk[0];
        let eps2 = 1e-12 * total * total;

        // --- solve(): the free backward pass, then the limited forward pass. ---
        let mut p = *fk;
        let mut rel = [Q::identity(); N];
        let mut delta = Q::identity();
        for it in 0..iterations.max(1) {
            if it < iterations {
                p[n - 1] = target;
                for i in (0..n - 1).rev() {
                    let dir = normalize_or(p[i] - p[i + 1], -dir_fk[i], eps2);
                    p[i] = p[i + 1] + dir * len[i];
                }
            }
            p[0] = base;
            delta = Q::identity();
            for i in 0..n - 1 {
                let want = normalize_or(p[i + 1] - p[i], delta.rotate(dir_fk[i]), eps2);
                let free = rotation_arc(dir_fk[i], delta.conjugate().rotate(want));
                let l = &lim[i];
                let (d, e) = if l.limited.any() {
                    let e = limit_relative(free, r[i], l);
                    (l.limited.sel(delta.mul(e).normalize(), delta.mul(free)), l.limited.sel(e, free))
                } else {
                    (delta.mul(free), free)
                };
                p[i + 1] = p[i] + d.rotate(dir_fk[i]) * len[i];
                rel[i] = e;
                delta = d;
            }
        }
        let reached = (p[n - 1] - target).length().le(precision);
        let mut flags = U::zero();
        flags.set((target - base).length().ge(total), info::OUT_OF_REACH);
        finish_limited::<N, S>(&g, &rel, delta.conjugate(), n, reached, flags, out);
    }
}
