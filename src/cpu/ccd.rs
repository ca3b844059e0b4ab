//! CCD (cyclic coordinate descent) with per-visit step caps and total joint limits: the CPU
//! twin of `shaders/ccd.wgsl`.
//!
//! Each iteration visits the joints from the tip's parent to the root (or root first,
//! [`option::ROOT_FIRST`]); a visit turns the joint by the shortest arc that points
//! joint→tip at joint→target, caps that turn at `params.y` radians (Unreal's per-joint
//! rotation limit), and then moves the joint's whole local rotation into its limit
//! (hinge, cone, twist; [`crate::records::ChainLimits`]), so the limits hold whatever the
//! iteration count, unlike a per-iteration cap alone. The joints below turn with it.
//! The solution is CCD's own rotations: a visit turns a joint about the axis
//! perpendicular to joint→tip and joint→target, which may roll the bones below about
//! themselves; a twist limit bounds that.

use glam::{Quat, Vec3};

use super::chain::{finish_chain, solve_or_fk, write_fk};
use super::constrained_fabrik::checked;
use super::fabrik::FabrikMode;
use super::limits::{limit_rotation, Limit};
use super::math::{atan2, quat_from_axis_angle, rotation_arc};
use crate::records::{info, option, v3, CcdChain, FabrikSolved, MAX_FABRIK_JOINTS};
use crate::ChainError;

/// The option bits a CCD chain may set.
const OPTIONS: u32 = option::KEEP_END_ROTATION | option::MIRRORED | option::ROOT_FIRST;

/// Solves one CCD chain with exactly `mode[1]` iterations (what the GPU kernel runs); an
/// invalid chain gets a flagged FK fallback.
pub fn ccd(chain: &CcdChain, out: &mut FabrikSolved) {
    ccd_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`ccd`] with an explicit mode: [`FabrikMode::Converge`] stops after the iteration that
/// brings the tip within the precision (`params.x`) of the target.
pub fn ccd_with_mode(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) {
    let twin = (chain.chain.mode[2] & option::MIRRORED != 0).then(|| chain.unmirrored());
    let n = chain.chain.joint_count().min(MAX_FABRIK_JOINTS);
    let joints = (&chain.chain.joints_ms[..], &chain.chain.rotations_ms[..]);
    solve_or_fk(chain, twin, joints, n, out, |c, o| solve(c, mode, o));
}

/// Checks one CCD chain the way [`ccd`] does.
pub fn validate_ccd(chain: &CcdChain) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    check_step(chain)
}

fn check_step(chain: &CcdChain) -> Result<(), ChainError> {
    if chain.chain.params[1] >= 0.0 {
        Ok(())
    } else {
        Err(ChainError::InvalidParameter)
    }
}

/// `r` (`w ≥ 0`) with its angle capped at `max_step` radians (0 = no cap).
#[inline]
pub(crate) fn cap_turn(r: Quat, max_step: f32) -> Quat {
    let v = Vec3::new(r.x, r.y, r.z);
    let s = v.length();
    if max_step > 0.0 && s > 0.0 && 2.0 * atan2(s, r.w) > max_step {
        return quat_from_axis_angle(v * (1.0 / s), max_step);
    }
    r
}

fn solve(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    check_step(chain)?;
    let (n, total) = (s.n, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.params[0];
    let max_step = ch.params[1];
    let root_first = ch.mode[2] & option::ROOT_FIRST != 0;
    let target = v3(ch.target_ms);
    let parent_ms = Quat::from_array(chain.limits.parent_ms);
    let mut fk = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut rot = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut p = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    for i in 0..n {
        fk[i] = Quat::from_array(ch.rotations_ms[i]);
        rot[i] = fk[i];
        p[i] = v3(ch.joints_ms[i]);
    }
    let eps2 = 1e-12 * total * total;
    for _ in 0..ch.mode[1] {
        for step in 0..n - 1 {
            let j = if root_first { step } else { n - 2 - step };
            visit(j, &mut p, &mut rot, target, parent_ms, &limits, max_step, n, eps2);
        }
        if mode == FabrikMode::Converge && (p[n - 1] - target).length() <= precision {
            break;
        }
    }
    let reached = (p[n - 1] - target).length() <= precision;
    let flags = if (target - v3(ch.joints_ms[0])).length() >= total { info::OUT_OF_REACH } else { 0 };
    // Relative deltas from CCD's rotations: D_i = R'_i · R_i⁻¹, E_i = D_{i−1}⁻¹ · D_i.
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut parent_delta = Quat::IDENTITY;
    for i in 0..n - 1 {
        let delta = (rot[i] * fk[i].conjugate()).normalize();
        rel[i] = (parent_delta.conjugate() * delta).normalize();
        parent_delta = delta;
    }
    rel[n - 1] = if ch.mode[2] & option::KEEP_END_ROTATION != 0 { parent_delta.conjugate() } else { Quat::IDENTITY };
    finish_chain(&ch.joints_ms, &ch.rotations_ms, &rel, &[1.0; MAX_FABRIK_JOINTS], n, weight, reached, flags, out);
    Ok(())
}

/// One visit of joint `j`: turn it so joint→tip points at joint→target (capped, then
/// limited), carrying the joints below along.
#[allow(clippy::too_many_arguments)] // the per-chain arrays of the kernel's sweep
#[inline]
fn visit(
    j: usize,
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    rot: &mut [Quat; MAX_FABRIK_JOINTS],
    target: Vec3,
    parent_ms: Quat,
    limits: &[Limit; MAX_FABRIK_JOINTS],
    max_step: f32,
    n: usize,
    eps2: f32,
) {
    let to_tip = p[n - 1] - p[j];
    let to_target = target - p[j];
    let (l_tip, l_target) = (to_tip.length_squared(), to_target.length_squared());
    if !(l_tip > eps2 && l_target > eps2) {
        return;
    }
    let r = cap_turn(rotation_arc(to_tip / l_tip.sqrt(), to_target / l_target.sqrt()), max_step);
    let mut new = (r * rot[j]).normalize();
    if limits[j].kind != 0 {
        let parent = if j == 0 { parent_ms } else { rot[j - 1] };
        new = limit_rotation(parent, new, &limits[j]);
    }
    let turn = (new * rot[j].conjugate()).normalize();
    rot[j] = new;
    for k in j + 1..n {
        p[k] = p[j] + turn * (p[k] - p[j]);
        rot[k] = (turn * rot[k]).normalize();
    }
}
