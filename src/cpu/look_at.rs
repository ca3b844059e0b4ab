//! Crowd look-at: aims a small tree of joints (spine, neck, head, eyes) at a point, with
//! yaw/pitch limits about each joint's rest frame and the up-vector constraint. The CPU twin
//! of `shaders/kernels/look_at.wgsl`; see [`LookAtChain`] for the contract.
//!
//! Joints are solved in record order. Joint `i` first follows its parent's turn (its FK
//! position and rotation carried by the parent's total model-space delta), then aims its
//! forward axis at the target, along the clamped direction when its limits hold it back,
//! rolls toward the up target when asked, and applies its weight (nlerp of the local
//! correction from identity, as ozz-animation's `IKAimJob`).

use glam::{Quat, Vec3};

use super::aim::{aim_in_axes, roll_toward, target_direction, Axes};
use super::chain::{check_joints, solve_or_fk, write_fk};
use super::limits::clamp_angle;
use super::math::atan2;
use super::math::{finite4, flush_subnormal, in_range, is_unit_quat, nlerp_identity, sin_cos};
use crate::constants as c;
use crate::error::ChainError;
use crate::records::{info, option, p4, v3, LookAtChain, LookAtSolved, Options, MAX_LOOK_AT_JOINTS, NO_PARENT};

/// Solves one look-at record; an invalid record gets a flagged FK fallback (every joint
/// its FK pose, identity corrections, the error's code).
pub fn look_at(chain: &LookAtChain, out: &mut LookAtSolved) {
    let twin = chain.has_option(option::MIRRORED).then(|| chain.unmirrored());
    let n = chain.joint_count().min(MAX_LOOK_AT_JOINTS);
    solve_or_fk(chain, twin, (&chain.joints_ms, &chain.rotations_ms), n, out, solve);
}

/// Checks one look-at record the way [`look_at`] does. Rules, in order: 1 to 4 joints
/// ([`ChainError::JointCount`]); joints finite, unit rotations, within range; target,
/// parent rotation, up target (when used), axes, weights, rest rotations and limits of
/// limited joints finite ([`ChainError::NonFinite`]); the parent and rest rotations unit
/// ([`ChainError::NotNormalized`]); target, up target and axes within ±`MAX_COORDINATE`
/// ([`ChainError::OutOfRange`]); known option bits, limit bits only on existing joints,
/// parents before their children, forward and up non-zero and perpendicular, limits ordered
/// within `[−π, π]` (yaw) and `[−π/2, π/2]` (pitch) ([`ChainError::InvalidParameter`]).
/// The target on a joint ([`ChainError::TargetOnRoot`]) or an up target on a joint's aimed
/// axis ([`ChainError::PoleOnAxis`]) are found while solving.
pub fn validate_look_at(chain: &LookAtChain) -> Result<(), ChainError> {
    let twin = if chain.has_option(option::MIRRORED) { chain.unmirrored() } else { *chain };
    let mut out = LookAtSolved::default();
    solve(&twin, &mut out)
}

/// The record's checks (see [`validate_look_at`]); returns the joint count and each
/// joint's axes.
fn check(ch: &LookAtChain) -> Result<(usize, [Axes; MAX_LOOK_AT_JOINTS]), ChainError> {
    let n = ch.joint_count();
    if n == 0 || n > MAX_LOOK_AT_JOINTS {
        return Err(ChainError::JointCount);
    }
    check_joints(&ch.joints_ms, &ch.rotations_ms, n)?;
    let up_target = ch.has_option(option::UP_TARGET);
    let limited = |i: usize| ch.is_limited(i);
    let mut finite = finite4(ch.target_ms) && finite4(ch.parent_ms) && (!up_target || finite4(ch.up_target_ms));
    for i in 0..n {
        finite &= finite4(ch.forward[i]) && finite4(ch.up[i]);
        finite &= !limited(i) || (finite4(ch.rest[i]) && finite4(ch.limits[i]));
    }
    if !finite {
        return Err(ChainError::NonFinite);
    }
    let mut unit = is_unit_quat(Quat::from_array(ch.parent_ms));
    for i in 0..n {
        unit &= !limited(i) || is_unit_quat(Quat::from_array(ch.rest[i]));
    }
    if !unit {
        return Err(ChainError::NotNormalized);
    }
    let axes_in_range = (0..n).all(|i| in_range(ch.forward[i]) && in_range(ch.up[i]));
    if !in_range(ch.target_ms) || (up_target && !in_range(ch.up_target_ms)) || !axes_in_range {
        return Err(ChainError::OutOfRange);
    }
    if ch.options() & !option::LOOK_AT != 0 || ch.limits_past(n) != 0 {
        return Err(ChainError::InvalidParameter);
    }
    let mut axes = [Axes { f: Vec3::X, u: Vec3::Y, s: Vec3::Z }; MAX_LOOK_AT_JOINTS];
    for (i, axes) in axes.iter_mut().enumerate().take(n) {
        let p = parent_slot(ch, i);
        if p != NO_PARENT as usize && p >= i {
            return Err(ChainError::InvalidParameter);
        }
        *axes = Axes::new(v3(ch.forward[i]), v3(ch.up[i])).ok_or(ChainError::InvalidParameter)?;
        // Subnormal bounds read as 0, as a GPU flushing them does.
        let l = ch.limits[i].map(flush_subnormal);
        let ordered = -c::PI <= l[0] && l[0] <= l[1] && l[1] <= c::PI;
        let ordered = ordered && -0.5 * c::PI <= l[2] && l[2] <= l[3] && l[3] <= 0.5 * c::PI;
        if limited(i) && !ordered {
            return Err(ChainError::InvalidParameter);
        }
    }
    Ok((n, axes))
}

/// Joint `i`'s parent byte (`NO_PARENT` = outside the record).
#[inline]
fn parent_slot(ch: &LookAtChain, i: usize) -> usize {
    ((ch.mode[1] >> (8 * i)) & 0xff) as usize
}

/// `d` (axis coordinates, non-zero) with its yaw in `[l.x, l.y]` and its pitch in
/// `[l.z, l.w]`: itself when inside, else the unit direction of the clamped angles, and
/// whether it was clamped.
#[inline]
pub(crate) fn clamp_yaw_pitch(d: Vec3, l: [f32; 4]) -> (Vec3, bool) {
    let h = (d.x * d.x + d.z * d.z).sqrt();
    let yaw = atan2(-d.z, d.x);
    let pitch = atan2(d.y, h);
    let yc = clamp_angle(yaw, l[0], l[1]);
    let pc = pitch.max(l[2]).min(l[3]);
    if yc == yaw && pc == pitch {
        return (d, false);
    }
    let (sy, cy) = sin_cos(yc);
    let (sp, cp) = sin_cos(pc);
    (Vec3::new(cp * cy, sp, -cp * sy), true)
}

fn solve(ch: &LookAtChain, out: &mut LookAtSolved) -> Result<(), ChainError> {
    let (n, axes) = check(ch)?;
    let weight = ch.target_ms[3];
    if !(flush_subnormal(weight) > 0.0) {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let target = v3(ch.target_ms);
    let up_target = ch.has_option(option::UP_TARGET).then(|| v3(ch.up_target_ms));
    let shortest_arc = ch.has_option(option::SHORTEST_ARC);
    let parent_ms = Quat::from_array(ch.parent_ms);
    let mut pos = [Vec3::ZERO; MAX_LOOK_AT_JOINTS];
    let mut rot = [Quat::IDENTITY; MAX_LOOK_AT_JOINTS];
    let mut delta = [Quat::IDENTITY; MAX_LOOK_AT_JOINTS];
    let (mut flags, mut full, mut held) = (0, false, false);
    *out = LookAtSolved::default();
    for i in 0..n {
        let fk = Quat::from_array(ch.rotations_ms[i]);
        let p = parent_slot(ch, i);
        let (parent_delta, parent_rot, here, r) = if p == NO_PARENT as usize {
            (Quat::IDENTITY, parent_ms, v3(ch.joints_ms[i]), fk)
        } else {
            let bone = v3(ch.joints_ms[i]) - v3(ch.joints_ms[p]);
            (delta[p], rot[p], pos[p] + delta[p] * bone, (delta[p] * fk).normalize())
        };
        let mut dir = target_direction(here, target).ok_or(ChainError::TargetOnRoot)?;
        let a = axes[i];
        let mut clamped = false;
        if ch.is_limited(i) {
            let rest = parent_rot * Quat::from_array(ch.rest[i]);
            let (d, hit) = clamp_yaw_pitch(a.coords(rest.conjugate() * dir), ch.limits[i]);
            if hit {
                dir = rest * a.vector(d);
                clamped = true;
                flags |= info::LIMITED;
            }
        }
        let mut aim = a.rotation(aim_in_axes(a.coords(r.conjugate() * dir), shortest_arc));
        if let Some(u) = up_target {
            aim = roll_toward(a, r, aim, u - here).ok_or(ChainError::PoleOnAxis)?;
        }
        let w = ch.forward[i][3] * weight;
        let correction = if w <= 0.0 { Quat::IDENTITY } else { nlerp_identity(aim, w) };
        if w >= 1.0 {
            full = true;
            held |= clamped;
        }
        rot[i] = (r * correction).normalize();
        delta[i] = (parent_delta * (fk * correction * fk.conjugate())).normalize();
        pos[i] = here;
        out.positions_ms[i] = p4(here);
        out.rotations_ms[i] = rot[i].to_array();
        out.corrections[i] = correction.to_array();
    }
    out.status = [u32::from(weight >= 1.0 && full && !held), 0, flags, n as u32];
    Ok(())
}
