//! Two-bone IK over [`L`] chains at once: the SoA batch twin of `cpu::two_bone` (and of
//! `cpu::limb::solve_limb`, `cpu::chain::finish_chain`), line for line.

use super::isa::{F, L, M, U};
use super::lanes::{
    all_in_range, any_orthonormal, assume_init, assume_init_slice_mut, each_lane, finish_chain_into, is_unit_quat,
    load_words_at, mirror_words, normalize_or, quat_from_axis_angle, quat_from_axis_cos_sin, reject, rotation_arc,
    sin_cos, words, Kernel, Q, V3,
};
use crate::cpu::limb::{
    AGAINST_HINGE, MAX_ANGLE, MIN_CHAIN_LENGTH, MIN_HINGE, ON_ROOT, POLE_ON_AXIS2, STRAIGHT, ZERO_BONE,
};

use crate::cpu::two_bone::{two_bone, two_bone_corrections};
use crate::records::{info, option, BendMode, PoleMode, TwoBoneChain, TwoBoneCorrections, TwoBoneSolved};

/// The two-bone [`Kernel`].
pub(crate) struct TwoBone;

/// `LimbSettings` over lanes, with the modes decoded into masks.
pub(crate) struct Limb {
    pub target: V3,
    pub weight: F,
    pub pole: V3,
    pub swivel_angle: F,
    pub mid_axis: V3,
    pub twist: F,
    pub soften: F,
    pub max_stretch: F,
    pub cos_min: F,
    pub cos_max: F,
    pub fk_plane: M,
    pub pole_position: M,
    pub swivel: M,
    pub bend_keep: M,
    pub bend_reversed: M,
    pub limits: M,
    pub keep_end: M,
    /// Lanes whose settings pass `check_limb_settings` (given finite values).
    pub valid: M,
}

impl Limb {
    /// The `LimbSettings` at word `w` of transposed records (20 words: target, pole,
    /// mid axis, params, mode).
    #[inline(always)]
    pub fn at(words: &[F], w: usize) -> Limb {
        let target = V3::at(words, w);
        let pole = V3::at(words, w + 4);
        let mid_axis = V3::at(words, w + 8);
        let (soften, max_stretch, cos_min, cos_max) = (words[w + 12], words[w + 13], words[w + 14], words[w + 15]);
        let (pole_mode, bend, options) = (words[w + 16], words[w + 17], words[w + 18]);
        let limits = !options.word_clear(option::KNEE_LIMITS);
        let swivel = pole_mode.word_eq(PoleMode::Swivel as u32);
        let (swivel_angle, twist) = (words[w + 7], words[w + 11]);
        let modes_ok = pole_mode.word_clear(!3)
            & bend.word_clear(!3)
            & !bend.word_eq(3)
            & options.word_clear(!option::LIMB)
            & words[w + 19].word_eq(0); // reserved
        let valid = modes_ok
            & soften.ge(0.0)
            & soften.le(1.0)
            & max_stretch.ge(1.0)
            & !(limits & !(cos_min.le(1.0) & cos_max.ge(-1.0) & cos_max.le(cos_min)))
            & !(swivel & pole.length_squared().lt(crate::constants::MIN_AXIS_LENGTH2))
            & !(swivel & !swivel_angle.abs().le(MAX_ANGLE))
            & twist.abs().le(MAX_ANGLE)
            & mid_axis.length_squared().gt(1e-12);
        Limb {
            target,
            weight: words[w + 3],
            pole,
            swivel_angle,
            mid_axis,
            twist,
            soften,
            max_stretch,
            cos_min,
            cos_max,
            fk_plane: pole_mode.word_eq(PoleMode::FkPlane as u32),
            pole_position: pole_mode.word_eq(PoleMode::Position as u32),
            swivel,
            bend_keep: bend.word_eq(BendMode::KeepFk as u32),
            bend_reversed: bend.word_eq(BendMode::Reversed as u32),
            limits,
            keep_end: !options.word_clear(option::KEEP_END_ROTATION),
            valid,
        }
    }
}

/// `cpu::limb::LimbSolution` over lanes, plus the lanes that hit an error path.
pub(crate) struct LimbLanes {
    pub e0: Q,
    pub e1: Q,
    pub scale: F,
    pub reached: M,
    pub info: U,
    pub failed: M,
}

/// `cpu::limb::solve_limb` over lanes, stage for stage (the same stage names).
#[inline(always)]
pub(crate) fn solve_limb(p0: V3, p1: V3, p2: V3, r1: Q, target: V3, l: &Limb) -> LimbLanes {
    let s = limb_setup(p0, p1, p2, r1, target, l);
    let mut reach = limb_reach(&s, l);
    let e1 = limb_mid_joint(&s, &reach);
    let mut failed = s.failed;
    let e0 = limb_start_joint(&s, p0, e1, l, &mut reach.info, &mut failed);
    LimbLanes { e0, e1, scale: reach.scale, reached: reach.reached, info: reach.info, failed }
}

/// `cpu::limb::LimbSetup` over lanes, plus the lanes that hit an error path.
pub(crate) struct LimbSetup {
    u: V3,
    v: V3,
    a: F,
    b: F,
    limb_len: F,
    c: F,
    d: V3,
    h: V3,
    flip: M,
    against: M,
    failed: M,
}

/// `cpu::limb::limb_setup` over lanes: bones, target axis, hinge.
#[inline(always)]
pub(crate) fn limb_setup(p0: V3, p1: V3, p2: V3, r1: Q, target: V3, l: &Limb) -> LimbSetup {
    let u = p1 - p0;
    let v = p2 - p1;
    let a = u.length();
    let b = v.length();
    let limb_len = a + b;
    let mut failed = !(a.gt(ZERO_BONE * limb_len) & b.gt(ZERO_BONE * limb_len) & limb_len.ge(MIN_CHAIN_LENGTH));
    let st = target - p0;
    let c = st.length();
    failed = failed | !c.gt(ON_ROOT * limb_len);
    let d = st * (1.0 / c);

    let u_dir = u * (1.0 / a);
    let h_hinge = reject(r1.rotate(l.mid_axis.normalize()), u_dir);
    let v_perp = reject(v, u_dir);
    let v_perp_len2 = v_perp.length_squared();
    let bent = v_perp_len2.gt(1e-12 * b * b);
    let inv_perp = 1.0 / v_perp_len2.sqrt();
    let mut h = bent.sel(reject(h_hinge, v_perp * inv_perp), h_hinge);
    let mut h_len = h.length();
    // The bones' plane holds the hinge of a nearly straight limb: the bones' own axis
    // (`cpu::limb::limb_setup`). Rare: only worked out when a lane needs it.
    let maybe = bent & !h_len.gt(MIN_HINGE) & v_perp_len2.lt(AGAINST_HINGE * AGAINST_HINGE * b * b);
    if maybe.any() {
        let sideways = maybe & h_hinge.length().gt(MIN_HINGE);
        h = sideways.sel(v_perp.cross(u_dir) * inv_perp, h);
        h_len = h.length();
    }
    failed = failed | !h_len.gt(MIN_HINGE);
    h = h * (1.0 / h_len);
    let straight_eps = STRAIGHT * a * b;
    let side = u.cross(h).dot(v);
    let flip_fk = side.lt(-straight_eps);
    let flip_reversed = (-side).lt(-straight_eps);
    h = ((l.bend_keep & flip_fk) | l.bend_reversed).sel(-h, h);
    let flip = l.bend_keep.sel(M::splat(false), l.bend_reversed.sel(flip_reversed, flip_fk));
    let against_eps = AGAINST_HINGE * a * b;
    let against = !l.bend_keep & l.bend_reversed.sel(side.gt(against_eps), side.lt(-against_eps));
    LimbSetup { u, v, a, b, limb_len, c, d, h, flip, against, failed }
}

/// `cpu::limb::LimbReach` over lanes.
pub(crate) struct LimbReach {
    scale: F,
    one_plus: F,
    one_minus: F,
    reached: M,
    info: U,
}

/// `cpu::limb::limb_reach` over lanes: stretch, soften, knee limits.
#[inline(always)]
pub(crate) fn limb_reach(s: &LimbSetup, l: &Limb) -> LimbReach {
    let (a, b, limb_len, c) = (s.a, s.b, s.limb_len, s.c);
    let one = F::splat(1.0);
    let mut info = U::zero();
    info.set(s.against, info::AGAINST_HINGE);
    let stretch = l.max_stretch.gt(1.0) & c.gt(limb_len);
    info.set(stretch, info::STRETCHED);
    let to_target = stretch & c.le(limb_len * l.max_stretch);
    let scale = to_target.sel(c / limb_len, stretch.sel(l.max_stretch, one));
    let a_s = a * scale;
    let b_s = b * scale;
    let chain_s = a_s + b_s;
    let da = chain_s * l.soften;
    let ds = chain_s - da;
    let over = !to_target & c.gt(da);
    let mut reached = !over;
    info.set(over & c.gt(chain_s), info::OUT_OF_REACH);
    let eased = over & ds.gt(0.0);
    let alpha = (c - da) / ds;
    let op = alpha + 3.0;
    let op2 = op * op;
    let ratio = 81.0 / (op2 * op2);
    let cs = eased.sel(da + ds - ds * ratio, c);
    let slack = to_target.sel(F::splat(0.0), eased.sel(ds * ratio, chain_s - c));
    info.set(eased, info::SOFTENED);
    let diff = (a_s - b_s).abs();
    let folded = !c.gt(diff);
    reached = reached & !folded;
    info.set(folded, info::OUT_OF_REACH);
    let two_ab = 2.0 * a_s * b_s;
    let mut one_plus = slack * (chain_s + cs) / two_ab;
    let mut one_minus = (cs - diff) * (cs + diff) / two_ab;
    if l.limits.any() {
        let sum2 = a_s * a_s + b_s * b_s;
        let c_min = (sum2 - two_ab * l.cos_min).max(0.0).sqrt();
        let c_max = (sum2 - two_ab * l.cos_max).max(0.0).sqrt();
        // θmin = 0 / θmax = π bound nothing (cpu::limb::limb_reach).
        let below = l.limits & l.cos_min.lt(1.0) & cs.lt(c_min);
        let above = l.limits & !below & l.cos_max.gt(-1.0) & cs.gt(c_max);
        one_plus = below.sel(1.0 + l.cos_min, above.sel(1.0 + l.cos_max, one_plus));
        one_minus = below.sel(1.0 - l.cos_min, above.sel(1.0 - l.cos_max, one_minus));
        reached = reached & !(below | above);
        info.set(below | above, info::KNEE_LIMITED);
    }
    LimbReach { scale, one_plus: one_plus.max(0.0).min(2.0), one_minus: one_minus.max(0.0).min(2.0), reached, info }
}

/// `cpu::limb::limb_mid_joint` over lanes.
#[inline(always)]
pub(crate) fn limb_mid_joint(s: &LimbSetup, r: &LimbReach) -> Q {
    let (u, v) = (s.u, s.v);
    let (one_plus, one_minus) = (r.one_plus, r.one_minus);
    let cos_new = 0.5 * (one_plus - one_minus);
    let sin_new = (one_plus * one_minus).sqrt();
    let ab = s.a * s.b;
    let cos_old = (-u.dot(v) / ab).max(-1.0).min(1.0);
    let sin_old = (u.cross(v).length() / ab).min(1.0);
    let sin_old = s.flip.sel(-sin_old, sin_old);
    let cos_phi = cos_new * cos_old + sin_new * sin_old;
    let sin_phi = sin_new * cos_old - cos_new * sin_old;
    quat_from_axis_cos_sin(s.h, cos_phi, sin_phi)
}

/// `cpu::limb::limb_start_joint` over lanes; lanes whose pole lies on the axis join `failed`.
#[inline(always)]
pub(crate) fn limb_start_joint(s: &LimbSetup, p0: V3, e1: Q, l: &Limb, info: &mut U, failed: &mut M) -> Q {
    let d = s.d;
    let e = s.u + e1.rotate(s.v);
    let e_dir = normalize_or(e, d, 1e-12 * s.limb_len * s.limb_len);
    let aim = rotation_arc(e_dir, d);
    let k_now = aim.rotate(s.h).cross(d);
    let dir = l.pole_position.sel(l.pole - p0, l.pole);
    let mut k_want = reject(dir, d);
    *failed = *failed | (!l.fk_plane & !l.swivel & !k_want.length_squared().gt(POLE_ON_AXIS2 * dir.length_squared()));
    if l.swivel.any() {
        let north = l.pole.normalize();
        let n0 = reject(north, d);
        let singular = !n0.length_squared().gt(POLE_ON_AXIS2);
        let n0 = singular.sel(reject(any_orthonormal(north), d), n0);
        info.set(l.swivel & singular, info::SWIVEL_FALLBACK);
        let k0 = n0.normalize().cross(d);
        let (s, c) = sin_cos(l.swivel_angle);
        k_want = l.swivel.sel(k0 * c + d.cross(k0) * s, k_want);
    }
    let plane = quat_from_axis_cos_sin(d, k_now.dot(k_want), d.dot(k_now.cross(k_want)));
    let plane = l.fk_plane.sel(Q::identity(), plane);
    let mut start = plane.mul(aim);
    let twisted = l.twist.ne_(0.0);
    if twisted.any() {
        start = twisted.sel(quat_from_axis_angle(d, l.twist).mul(plane).mul(aim), start);
    }
    start
}

impl Kernel for TwoBone {
    type Chain = TwoBoneChain;
    type Solved = TwoBoneSolved;
    #[inline(always)]
    fn group(c: &[TwoBoneChain; L], out: &mut [TwoBoneSolved; L]) {
        // `finish_chain` writes all 12·3 + 4 words of the three joints: every word of `out`.
        let lanes_ok = solve_group(c, 0, out);
        each_lane((!lanes_ok).bits(), |i| two_bone(&c[i], &mut out[i]));
    }
    fn scalar(c: &TwoBoneChain, out: &mut TwoBoneSolved) {
        two_bone(c, out);
    }
}

/// The corrections-only two-bone [`Kernel`] (`TwoBoneCorrectionsJob`): the same solve,
/// storing the corrections and status alone, so the compiler drops the model-space positions
/// and rotations nothing reads. Corrections are local and need no reflecting back for
/// mirrored lanes.
pub(crate) struct TwoBoneCorrectionsKernel;

impl Kernel for TwoBoneCorrectionsKernel {
    type Chain = TwoBoneChain;
    type Solved = TwoBoneCorrections;
    #[inline(always)]
    fn group(c: &[TwoBoneChain; L], out: &mut [TwoBoneCorrections; L]) {
        // Words 24..40 of the solved chain are the corrections and the status,
        // `TwoBoneCorrections`' layout (reflecting back touches neither).
        let lanes_ok = solve_group(c, 24, out);
        each_lane((!lanes_ok).bits(), |i| two_bone_corrections(&c[i], &mut out[i]));
    }
    fn scalar(c: &TwoBoneChain, out: &mut TwoBoneCorrections) {
        two_bone_corrections(c, out);
    }
}

/// Solves a group into `out`: the solved chain's words (positions 0..12, rotations 12..24,
/// corrections 24..36, status 36..40) from word `from` on, at word `w − from` of each record
/// ([`Records`]); returns the lanes the SIMD solve stands for (the rest are redone by the
/// scalar solver).
#[inline(always)]
fn solve_group<T: bytemuck::Pod>(c: &[TwoBoneChain; L], from: usize, out: &mut [T; L]) -> M {
    let mut buf = words::<48>();
    load_words_at(c, 0, &mut buf);
    // Mirrored lanes are solved as their unmirrored twins (option::MIRRORED): joints,
    // target and pole reflected, rotations conjugated; the solved words are reflected back.
    // SAFETY: all 48 words were loaded just above.
    let mirrored = !unsafe { assume_init(&buf) }[42].word_clear(option::MIRRORED);
    if mirrored.any() {
        // SAFETY: as above.
        mirror_words(unsafe { assume_init_slice_mut(&mut buf) }, mirrored, [0, 4, 8, 24, 28], [12, 16, 20]);
    }
    // SAFETY: as above.
    let w = unsafe { assume_init(&buf) };
    let p = [V3::at(w, 0), V3::at(w, 4), V3::at(w, 8)];
    let r = [Q::at(w, 12), Q::at(w, 16), Q::at(w, 20)];
    let l = Limb::at(w, 24);
    let offset = V3::at(w, 44);

    // A zero offset leaves the target as it is (skipped when no lane has an offset).
    let offset_lanes = offset.x.ne_(0.0) | offset.y.ne_(0.0) | offset.z.ne_(0.0);
    let target = if offset_lanes.any() { offset_lanes.sel(l.target - r[2].rotate(offset), l.target) } else { l.target };
    let sol = solve_limb(p[0], p[1], p[2], r[1], target, &l);
    // The end joint keeps its FK model rotation (relative delta d1⁻¹ · identity) or follows
    // the limb (d1⁻¹ · d1: the identity up to rounding), as the scalar solver computes them.
    let d1 = sol.e0.mul(sol.e1);
    let rel2 = d1.conjugate().mul(l.keep_end.sel(Q::identity(), d1));
    let none = M::splat(false);
    let rel = [Some((sol.e0, none)), Some((sol.e1, none)), Some((rel2, none))];
    finish_chain_into(out, from, mirrored, &p, &r, &rel, 3, &[sol.scale; 2], (l.weight, sol.reached, sol.info));
    // Checked last, from the words still in `buf`: nothing to keep in registers across the
    // solve (the lanes that fail are solved again by the scalar solver either way). The
    // rotations (words 12..24) and the mode words (40..44) need no range check: a unit
    // quaternion's words are within ±1.0005, and `valid` takes only small integers as modes.
    let in_range = all_in_range(&w[..12]) & all_in_range(&w[24..40]) & all_in_range(&w[44..]);
    let eligible = in_range & l.valid & is_unit_quat(r[0]) & is_unit_quat(r[1]) & is_unit_quat(r[2]) & l.weight.gt(0.0);
    eligible & !sol.failed
}
