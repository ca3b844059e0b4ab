//! Crowd look-at over [`L`] records at once: the SoA batch twin of `cpu::look_at` (and of
//! `cpu::aim`'s axes, aim and roll), stage for stage.
//!
//! A group's records share their joint count, parents and option bits (a batch that mixes
//! them is grouped by those first), so the walk down the joints is one path for every lane;
//! which joints are limited may differ lane by lane (a select). The record's checks run in
//! lanes too; a lane that fails one, or hits an error while solving (the target on a joint,
//! the up target on an aimed axis), or has no weight, is solved again by the scalar solver,
//! so error codes and FK fallbacks come from one place.

use super::isa::store_block;
use super::isa::{F, L, M, U};
use super::lanes::{
    assume_init, assume_init_slice_mut, each_lane, finite, flush_subnormal, in_range, is_unit_quat, load_words_at,
    mirror_words, nlerp_identity, quat_from_axis_cos_sin, rotation_arc, sin_cos, words, Fields, Kernel, Records, Q, V3,
};
use super::limits::{atan2, clamp_angle};
use crate::constants::{MIN_AXIS_LENGTH2, PI};
use crate::cpu::look_at::look_at;
use crate::records::{info, option, LookAtChain, LookAtSolved, Options, MAX_LOOK_AT_JOINTS, NO_PARENT};

/// The look-at [`Kernel`].
pub(crate) struct LookAt;

/// Words of a record.
const RECORD: usize = 112;
/// Where each field starts, in words.
const JOINTS: usize = 0;
const ROTATIONS: usize = 16;
const FORWARD: usize = 32;
const UP: usize = 48;
const REST: usize = 64;
const LIMITS: usize = 80;
const PARENT: usize = 96;
const TARGET: usize = 100;
const UP_TARGET: usize = 104;
const MODE: usize = 108;

const _: () =
    assert!(size_of::<LookAtChain>() == 4 * RECORD && size_of::<LookAtSolved>() == 4 * (12 * MAX_LOOK_AT_JOINTS + 4));

impl Kernel for LookAt {
    type Chain = LookAtChain;
    type Solved = LookAtSolved;
    #[inline(always)]
    fn group(c: &[LookAtChain; L], out: &mut [LookAtSolved; L]) {
        let first = &c[0];
        let lanes_ok = if group_shape_ok(first) { solve_group(c, out, first.mode) } else { M::splat(false) };
        each_lane((!lanes_ok).bits(), |i| look_at(&c[i], &mut out[i]));
    }
    fn scalar(c: &LookAtChain, out: &mut LookAtSolved) {
        look_at(c, out);
    }
}

/// Whether a group shaped like `first` (joint count, parents, option bits) can run in lanes:
/// 1 to 4 joints, known option bits, each parent before its child or outside the record.
/// (The lanes check the rest of each record for themselves.)
fn group_shape_ok(first: &LookAtChain) -> bool {
    let n = first.joint_count();
    (1..=MAX_LOOK_AT_JOINTS).contains(&n)
        && first.options() & !option::LOOK_AT == 0
        && (0..n).all(|i| {
            let p = (first.mode[1] >> (8 * i)) & 0xff;
            p == NO_PARENT || (p as usize) < i
        })
}

/// A joint's aim axes over lanes (`cpu::aim::Axes`).
#[derive(Clone, Copy)]
struct Axes {
    f: V3,
    u: V3,
    s: V3,
}

impl Axes {
    /// `cpu::aim::Axes::new`: the axes and the lanes where they are valid.
    #[inline(always)]
    fn new(forward: V3, up: V3) -> (Axes, M) {
        let (f2, u2) = (forward.length_squared(), up.length_squared());
        let mut ok = f2.gt(1e-12) & u2.gt(1e-12);
        let f = forward / f2.sqrt();
        let u = up / u2.sqrt();
        let c = f.dot(u);
        ok = ok & c.abs().le(1e-3);
        let u = (u - f * c).normalize();
        (Axes { f, u, s: f.cross(u) }, ok)
    }
    /// A local vector in axis coordinates.
    #[inline(always)]
    fn coords(self, v: V3) -> V3 {
        V3 { x: v.dot(self.f), y: v.dot(self.u), z: v.dot(self.s) }
    }
    /// Axis coordinates back to a local vector.
    #[inline(always)]
    fn vector(self, p: V3) -> V3 {
        self.f * p.x + self.u * p.y + self.s * p.z
    }
    /// A rotation written in axis coordinates, as a local rotation.
    #[inline(always)]
    fn rotation(self, q: Q) -> Q {
        Q::from_v3(self.vector(V3 { x: q.x, y: q.y, z: q.z }), q.w)
    }
}

/// The unit axis `(x, y, z)` in every lane.
#[inline(always)]
fn axis(x: f32, y: f32, z: f32) -> V3 {
    V3 { x: F::splat(x), y: F::splat(y), z: F::splat(z) }
}

/// `cpu::aim::target_direction` over lanes (`target_len` = `|target|`): `target − joint`
/// and the lanes where the target is off the joint.
#[inline(always)]
fn target_direction(joint: V3, target: V3, target_len: F) -> (V3, M) {
    let d = target - joint;
    let ok = d.length().gt(1e-6 * (target_len + joint.length()).max(1e-30)) & d.length_squared().ge(MIN_AXIS_LENGTH2);
    (d, ok)
}

/// `cpu::look_at::clamp_yaw_pitch` over lanes: the direction moved into the limits `l`
/// and the lanes where it moved.
#[inline(always)]
fn clamp_yaw_pitch(d: V3, l: [F; 4]) -> (V3, M) {
    let h = (d.x * d.x + d.z * d.z).sqrt();
    let yaw = atan2(-d.z, d.x);
    let pitch = atan2(d.y, h);
    let yc = clamp_angle(yaw, l[0], l[1]);
    let pc = pitch.max(l[2]).min(l[3]);
    let hit = yc.ne_(yaw) | pc.ne_(pitch);
    if !hit.any() {
        return (d, hit);
    }
    let (sy, cy) = sin_cos(yc);
    let (sp, cp) = sin_cos(pc);
    (hit.sel(V3 { x: cp * cy, y: sp, z: -cp * sy }, d), hit)
}

/// `cpu::aim::aim_in_axes` over lanes (`shortest_arc` is the group's).
#[inline(always)]
fn aim_in_axes(p: V3, shortest_arc: bool) -> Q {
    let p_len = p.length();
    if shortest_arc {
        return rotation_arc(axis(1.0, 0.0, 0.0), p / p_len);
    }
    let xy = (p.x * p.x + p.y * p.y).sqrt();
    let tilted = xy.gt(1e-7 * p_len);
    let (cy, sy) = (tilted.sel(p.x / xy, F::splat(1.0)), tilted.sel(p.y / xy, F::splat(0.0)));
    let yaw = quat_from_axis_cos_sin(axis(0.0, 0.0, 1.0), cy, sy);
    let pitch = quat_from_axis_cos_sin(axis(0.0, 1.0, 0.0), xy / p_len, -p.z / p_len);
    yaw.mul(pitch)
}

/// `cpu::aim::roll_toward` over lanes: the rolled aim and the lanes where the up target is
/// off the aimed axis.
#[inline(always)]
fn roll_toward(axes: Axes, rotation_ms: Q, aim: Q, up_dir: V3) -> (Q, M) {
    let q = axes.coords(rotation_ms.mul(aim).conjugate().rotate(up_dir));
    let yz = (q.y * q.y + q.z * q.z).sqrt();
    let ok = yz.gt(1e-3 * q.length()) & up_dir.length_squared().ge(MIN_AXIS_LENGTH2);
    (aim.mul(quat_from_axis_cos_sin(axes.f, q.y / yz, q.z / yz)), ok)
}

/// Solves a group of records shaped like `mode` into `out`: the lanes it stands for (the
/// rest are left to the scalar solver).
#[inline(always)]
fn solve_group(c: &[LookAtChain; L], out: &mut [LookAtSolved; L], mode: [u32; 4]) -> M {
    if mode[2] & option::MIRRORED != 0 {
        solve_group_as::<true>(c, out, mode)
    } else {
        solve_group_as::<false>(c, out, mode)
    }
}

/// [`solve_group`] for groups mirrored (`MIRRORED`) or not: the solved fields go straight
/// into the records ([`Records`]), reflected back when mirrored.
#[inline(always)]
fn solve_group_as<const MIRRORED: bool>(c: &[LookAtChain; L], out: &mut [LookAtSolved; L], mode: [u32; 4]) -> M {
    let n = mode[0] as usize;
    let up_target = mode[2] & option::UP_TARGET != 0;
    let shortest_arc = mode[2] & option::SHORTEST_ARC != 0;
    let mut buf = words::<RECORD>();
    load_words_at(c, 0, &mut buf);
    if MIRRORED {
        // Solved as the unmirrored twin (`LookAtChain::unmirrored`), reflected back below.
        // SAFETY: all the record's words were loaded just above.
        let w = unsafe { assume_init_slice_mut(&mut buf) };
        let points = [JOINTS, JOINTS + 4, JOINTS + 8, JOINTS + 12, TARGET, UP_TARGET];
        let rotations = [ROTATIONS, ROTATIONS + 4, ROTATIONS + 8, ROTATIONS + 12, PARENT];
        mirror_words(w, M::splat(true), points, rotations);
    }
    // SAFETY: as above.
    let w = unsafe { assume_init(&buf) };

    // --- check(): every rule of `cpu::look_at::check` this group's shape leaves open. ---
    let limited_bits = |i: usize| !w[MODE + 3].word_clear(1 << i);
    let mut ok = w[MODE].word_eq(mode[0]) & w[MODE + 1].word_eq(mode[1]) & w[MODE + 2].word_eq(mode[2]);
    ok = ok & w[MODE + 3].word_clear(!((1u32 << n) - 1));
    // A point within range is finite, and so is a unit quaternion or a limit within its
    // bounds (a NaN fails every comparison): only the words neither covers are tested for
    // being finite.
    ok = ok & in_range(w, TARGET) & finite(w[TARGET + 3]) & is_unit_quat(Q::at(w, PARENT));
    if up_target {
        ok = ok & in_range(w, UP_TARGET) & finite(w[UP_TARGET + 3]);
    }
    let mut axes = [Axes { f: axis(1.0, 0.0, 0.0), u: axis(0.0, 1.0, 0.0), s: axis(0.0, 0.0, 1.0) }; 4];
    for (i, a) in axes.iter_mut().enumerate().take(n) {
        let (j, r, f, u) = (JOINTS + 4 * i, ROTATIONS + 4 * i, FORWARD + 4 * i, UP + 4 * i);
        ok = ok & in_range(w, j) & finite(w[j + 3]) & is_unit_quat(Q::at(w, r));
        ok = ok & in_range(w, f) & finite(w[f + 3]) & in_range(w, u) & finite(w[u + 3]);
        let (axes_i, valid) = Axes::new(V3::at(w, f), V3::at(w, u));
        *a = axes_i;
        ok = ok & valid;
        let lim = LIMITS + 4 * i;
        let l = [
            flush_subnormal(w[lim]),
            flush_subnormal(w[lim + 1]),
            flush_subnormal(w[lim + 2]),
            flush_subnormal(w[lim + 3]),
        ];
        let ordered = l[0].ge(-PI) & l[0].le(l[1]) & l[1].le(PI);
        let ordered = ordered & l[2].ge(-0.5 * PI) & l[2].le(l[3]) & l[3].le(0.5 * PI);
        let limit_ok = is_unit_quat(Q::at(w, REST + 4 * i)) & ordered;
        ok = ok & (!limited_bits(i) | limit_ok);
    }
    let weight = w[TARGET + 3];
    ok = ok & flush_subnormal(weight).gt(0.0);

    // --- solve() ---
    let target = V3::at(w, TARGET);
    let target_len = target.length();
    let up_point = V3::at(w, UP_TARGET);
    let parent_ms = Q::at(w, PARENT);
    let zero = F::splat(0.0);
    let origin = V3 { x: zero, y: zero, z: zero };
    let mut pos = [origin; 4];
    let mut rot = [Q::identity(); 4];
    let mut delta = [Q::identity(); 4];
    let mut flags = U::zero();
    let (mut full, mut held) = (M::splat(false), M::splat(false));
    let one = F::splat(1.0);
    let mut solved = Records::<_, MIRRORED> { out, from: 0, cap: MAX_LOOK_AT_JOINTS, mirrored: M::splat(true) };
    for i in 0..n {
        let fk = Q::at(w, ROTATIONS + 4 * i);
        let p = ((mode[1] >> (8 * i)) & 0xff) as usize;
        let (parent_delta, parent_rot, here, r) = if p == NO_PARENT as usize {
            (Q::identity(), parent_ms, V3::at(w, JOINTS + 4 * i), fk)
        } else {
            let bone = V3::at(w, JOINTS + 4 * i) - V3::at(w, JOINTS + 4 * p);
            (delta[p], rot[p], pos[p] + delta[p].rotate(bone), delta[p].mul(fk).normalize())
        };
        let (mut dir, on_joint) = target_direction(here, target, target_len);
        ok = ok & on_joint;
        let a = axes[i];
        let mut clamped = M::splat(false);
        let limited = limited_bits(i);
        if limited.any() {
            let rest = parent_rot.mul(Q::at(w, REST + 4 * i));
            let lim = LIMITS + 4 * i;
            let l = [w[lim], w[lim + 1], w[lim + 2], w[lim + 3]];
            let (d, hit) = clamp_yaw_pitch(a.coords(rest.conjugate().rotate(dir)), l);
            clamped = limited & hit;
            if clamped.any() {
                dir = clamped.sel(rest.rotate(a.vector(d)), dir);
                flags.set(clamped, info::LIMITED);
            }
        }
        let mut aim = a.rotation(aim_in_axes(a.coords(r.conjugate().rotate(dir)), shortest_arc));
        if up_target {
            let (rolled, off_axis) = roll_toward(a, r, aim, up_point - here);
            ok = ok & off_axis;
            aim = rolled;
        }
        let wi = w[FORWARD + 4 * i + 3] * weight;
        let correction = wi.le(0.0).sel(Q::identity(), nlerp_identity(aim, wi));
        let whole = wi.ge(1.0);
        full = full | whole;
        held = held | (whole & clamped);
        rot[i] = r.mul(correction).normalize();
        // A joint's total delta carries its children (none: not needed).
        if (i + 1..n).any(|k| (mode[1] >> (8 * k)) & 0xff == i as u32) {
            delta[i] = parent_delta.mul(fk.mul(correction).mul(fk.conjugate())).normalize();
        }
        pos[i] = here;
        solved.field(4 * i, [here.x, here.y, here.z, one]);
        solved.field(16 + 4 * i, [rot[i].x, rot[i].y, rot[i].z, rot[i].w]);
        solved.field(32 + 4 * i, [correction.x, correction.y, correction.z, correction.w]);
    }
    for i in n..MAX_LOOK_AT_JOINTS {
        for region in [0, 16, 32] {
            // (Zero reflected is still zero up to its sign: stored as it is.)
            store_block(&[zero; 4], solved.out, region + 4 * i);
        }
    }
    let reached = weight.ge(1.0) & full & !held;
    let count = F::splat(f32::from_bits(n as u32)); // a u32 word: joints written
    solved.field(48, [reached.as_u32_word(), zero, flags.as_word(), count]);
    ok
}
