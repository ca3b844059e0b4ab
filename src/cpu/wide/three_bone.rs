//! Pseudo three-bone IK over [`L`] chains at once: the SoA batch twin of `cpu::three_bone`
//! (and of `cpu::limb::solve_three_bone_core`), line for line.

use super::isa::{F, L, M};
use super::lanes::{
    all_in_range, assume_init, assume_init_slice_mut, each_lane, finish_chain_into, is_unit_quat, load_words_at,
    mirror_words, words, Kernel, Q, V3,
};
use super::two_bone::{solve_limb, Limb};
use crate::cpu::limb::ZERO_BONE;
use crate::cpu::three_bone::three_bone;
use crate::records::{option, ThreeBoneChain, ThreeBoneSolved};

/// The pseudo three-bone [`Kernel`].
pub(crate) struct ThreeBone;

impl Kernel for ThreeBone {
    type Chain = ThreeBoneChain;
    type Solved = ThreeBoneSolved;
    #[inline(always)]
    fn group(c: &[ThreeBoneChain; L], out: &mut [ThreeBoneSolved; L]) {
        group(c, out);
    }
    fn scalar(c: &ThreeBoneChain, out: &mut ThreeBoneSolved) {
        three_bone(c, out);
    }
}

/// `cpu::math::nlerp` over lanes: `a` to `b` (on `a`'s hemisphere) by `t`, normalised.
#[inline(always)]
fn nlerp(a: Q, b: Q, t: F) -> Q {
    let b = a.dot(b).lt(0.0).sel(b.neg(), b);
    Q { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t, z: a.z + (b.z - a.z) * t, w: a.w + (b.w - a.w) * t }
        .normalize()
}

#[inline(always)]
fn group(c: &[ThreeBoneChain; L], out: &mut [ThreeBoneSolved; L]) {
    // Words: joints 0..16, rotations 16..32, limb 32..52, blend 52..56.
    let mut buf = words::<56>();
    load_words_at(c, 0, &mut buf);
    // Mirrored lanes: as in `two_bone.rs`.
    // SAFETY: all 56 words were loaded just above.
    let mirrored = !unsafe { assume_init(&buf) }[50].word_clear(option::MIRRORED);
    if mirrored.any() {
        // SAFETY: as above.
        mirror_words(unsafe { assume_init_slice_mut(&mut buf) }, mirrored, [0, 4, 8, 12, 32, 36], [16, 20, 24, 28]);
    }
    // SAFETY: as above.
    let w = unsafe { assume_init(&buf) };
    let p = [V3::at(w, 0), V3::at(w, 4), V3::at(w, 8), V3::at(w, 12)];
    let r = [Q::at(w, 16), Q::at(w, 20), Q::at(w, 24), Q::at(w, 28)];
    let l = Limb::at(w, 32);
    let ratio = w[52];
    let mut eligible = all_in_range(w) & l.valid & ratio.ge(0.0) & ratio.le(1.0) & l.weight.gt(0.0);
    for q in r {
        eligible = eligible & is_unit_quat(q);
    }
    let copy_mid = !w[50].word_clear(option::COPY_MID_ROTATION);

    // --- solve_three_bone_core ---
    let offset = p[3] - p[2];
    let offset_len = offset.length();
    let limb_len = (p[1] - p[0]).length() + (p[2] - p[1]).length() + offset_len;
    let mut failed = !offset_len.gt(ZERO_BONE * limb_len);
    let local2 = r[1].conjugate().mul(r[2]); // (1)
    let mut sol = solve_limb(p[0], p[1], p[2], r[1], l.target - offset, &l); // (2)-(4)
    failed = failed | sol.failed;
    let mut d2 = Q::identity();
    let blended = ratio.lt(1.0);
    if blended.any() {
        let r1_new = sol.e0.mul(sol.e1).mul(r[1]);
        let follow = copy_mid.sel(r1_new, r1_new.mul(local2)); // (5)
        let r2_new = nlerp(follow, r[2], ratio); // (6)
        d2 = blended.sel(r2_new.mul(r[2].conjugate()), d2);
        let again = solve_limb(p[0], p[1], p[2], r[1], l.target - d2.rotate(offset), &l); // (7)
        failed = failed | (blended & again.failed);
        sol.e0 = blended.sel(again.e0, sol.e0);
        sol.e1 = blended.sel(again.e1, sol.e1);
        sol.scale = blended.sel(again.scale, sol.scale);
        sol.reached = blended.sel(again.reached, sol.reached);
        sol.info = blended.sel(again.info, sol.info);
    }
    let d1 = sol.e0.mul(sol.e1);
    let none = M::splat(false);
    let rel = [Some((sol.e0, none)), Some((sol.e1, none)), Some((d1.conjugate().mul(d2), none)), None];
    let one = F::splat(1.0);
    let scale = [sol.scale, sol.scale, one];
    // `finish_chain` writes all 12·4 + 4 words of the four joints: every word of `out`.
    finish_chain_into(out, 0, mirrored, &p, &r, &rel, 4, &scale, (l.weight, sol.reached, sol.info));
    each_lane((!(eligible & !failed)).bits(), |i| three_bone(&c[i], &mut out[i]));
}
