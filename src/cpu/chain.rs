//! Stages shared by every solver: the CPU twin of `shaders/shared/chain.wgsl`.
//!
//! A solver produces, per joint `i`, the *relative* model-space delta `E_i` that joint `i`
//! adds on top of its parent's delta: the total model-space delta is
//! `D_i = D_{i-1} · E_i` (`D_{-1}` = identity) and the new model rotation is `D_i · r_i`.
//! [`finish_chain`] then applies the weight (ozz's nlerp of each local correction from
//! identity, which equals the nlerp of `E_i` since conjugation preserves it), writes the
//! local corrections `c_i = r_i⁻¹ E_i r_i`, and rebuilds the model-space pose from them, so
//! positions, rotations and corrections always agree.

use glam::{Quat, Vec3};

use super::math::{finite4, finite_point, finite_rotation, in_range, is_unit_quat, nlerp_identity};
use crate::error::ChainError;
use crate::records::{p4, v3, SolvedChain};

/// Writes the FK pose of the first `n` joints (non-finite values replaced by the origin /
/// identity, so output is always finite), identity corrections, `reached = false`, the
/// error code `error` (0 for "untouched", e.g. weight ≤ 0) and the info bits `info`.
pub(crate) fn write_fk<const N: usize>(
    joints_ms: &[[f32; 4]],
    rotations_ms: &[[f32; 4]],
    n: usize,
    error: u32,
    info: u32,
    out: &mut SolvedChain<N>,
) {
    *out = SolvedChain::default();
    for i in 0..n.min(N) {
        out.positions_ms[i] = finite_point(joints_ms[i]);
        out.rotations_ms[i] = finite_rotation(rotations_ms[i]);
        out.corrections[i] = Quat::IDENTITY.to_array();
    }
    out.status = [0, error, info, n.min(N) as u32];
}

/// The fallback and mirroring contract every chain solver shares: `solve` runs on the chain,
/// or on `unmirrored`, its unmirrored twin, when the chain is mirrored ([`option::MIRRORED`];
/// the solution is then reflected back); a chain `solve` rejects gets its own FK pose of
/// `n` joints and the error's code.
///
/// [`option::MIRRORED`]: crate::records::option::MIRRORED
pub(crate) fn solve_or_fk<C, const N: usize>(
    chain: &C,
    unmirrored: Option<C>,
    (joints_ms, rotations_ms): (&[[f32; 4]], &[[f32; 4]]),
    n: usize,
    out: &mut SolvedChain<N>,
    solve: impl FnOnce(&C, &mut SolvedChain<N>) -> Result<(), ChainError>,
) {
    let result = solve(unmirrored.as_ref().unwrap_or(chain), out);
    match result {
        Err(e) => write_fk(joints_ms, rotations_ms, n, e.code(), 0, out),
        Ok(()) if unmirrored.is_some() => out.mirror(n),
        Ok(()) => {}
    }
}

/// Checks that the first `n` joints are finite, their rotations unit quaternions and their
/// positions within ±`MAX_COORDINATE`, in that order.
pub(crate) fn check_joints(joints_ms: &[[f32; 4]], rotations_ms: &[[f32; 4]], n: usize) -> Result<(), ChainError> {
    for i in 0..n {
        if !finite4(joints_ms[i]) || !finite4(rotations_ms[i]) {
            return Err(ChainError::NonFinite);
        }
    }
    for r in &rotations_ms[..n] {
        if !is_unit_quat(Quat::from_array(*r)) {
            return Err(ChainError::NotNormalized);
        }
    }
    if !joints_ms[..n].iter().all(|p| in_range(*p)) {
        return Err(ChainError::OutOfRange);
    }
    Ok(())
}

/// Running state of [`finish_joint`] down a chain: the weighted total delta of the parent
/// and the new position of the current joint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walk {
    pub delta: Quat,
    pub pos: Vec3,
}

/// One joint of the finishing stage: weights its relative delta `rel` (nlerp from identity),
/// returns `(position, rotation, correction)` and advances `walk` along the FK bone `bone`
/// (zero for the last joint) scaled by `1 + (scale − 1)·weight`.
#[inline]
pub(crate) fn finish_joint(
    walk: &mut Walk,
    r: Quat,
    rel: Quat,
    weight: f32,
    bone: Vec3,
    scale: f32,
) -> (Vec3, Quat, Quat) {
    let e = nlerp_identity(rel, weight);
    walk.delta *= e;
    let position = walk.pos;
    let rotation = (walk.delta * r).normalize();
    let correction = r.conjugate() * e * r;
    walk.pos += (walk.delta * bone) * (1.0 + (scale - 1.0) * weight.clamp(0.0, 1.0));
    (position, rotation, correction)
}

/// Applies `weight` to the relative deltas `rel[0..n]`, writes corrections, rotations and
/// positions of the first `n` joints and the status. Bone `i` (joint `i` → `i+1`) is
/// scaled by `1 + (bone_scale[i] − 1) · weight` (stretch).
#[allow(clippy::too_many_arguments)] // mirrors the WGSL kernels' finishing loops
pub(crate) fn finish_chain<const N: usize>(
    joints_ms: &[[f32; 4]],
    rotations_ms: &[[f32; 4]],
    rel: &[Quat],
    bone_scale: &[f32],
    n: usize,
    weight: f32,
    reached: bool,
    info: u32,
    out: &mut SolvedChain<N>,
) {
    if n < N {
        *out = SolvedChain::default(); // joints past n read as zero
    }
    let mut walk = Walk { delta: Quat::IDENTITY, pos: v3(joints_ms[0]) };
    for i in 0..n {
        let (bone, scale) =
            if i + 1 < n { (v3(joints_ms[i + 1]) - v3(joints_ms[i]), bone_scale[i]) } else { (Vec3::ZERO, 1.0) };
        let (p, r, c) = finish_joint(&mut walk, Quat::from_array(rotations_ms[i]), rel[i], weight, bone, scale);
        out.positions_ms[i] = p4(p);
        out.rotations_ms[i] = r.to_array();
        out.corrections[i] = c.to_array();
    }
    out.status = [u32::from(reached && weight >= 1.0), 0, info, n as u32];
}

/// Total delta → relative delta: `E_i = D_{i-1}⁻¹ D_i`.
#[inline]
pub(crate) fn relative(parent_total: Quat, total: Quat) -> Quat {
    parent_total.conjugate() * total
}

/// Finishes a chain solved as model rotations `rot` (its FK rotations `fk`): the relative
/// deltas `D_i = R'_i · R_i⁻¹`, `E_i = D_{i−1}⁻¹ · D_i` (the end joint keeping its model
/// rotation with [`option::KEEP_END_ROTATION`](crate::records::option::KEEP_END_ROTATION)),
/// reached as given, flagged out of reach when the target is farther than the chain's
/// length `total`. What CCD and damped least squares share.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_rotations(
    ch: &crate::records::FabrikChain,
    rot: &[Quat],
    fk: &[Quat],
    n: usize,
    total: f32,
    reached: bool,
    out: &mut crate::records::FabrikSolved,
) {
    use crate::records::{info, option, Options, MAX_FABRIK_JOINTS};
    let flags = if (v3(ch.target_ms) - v3(ch.joints_ms[0])).length() >= total { info::OUT_OF_REACH } else { 0 };
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut parent_delta = Quat::IDENTITY;
    for i in 0..n - 1 {
        let delta = (rot[i] * fk[i].conjugate()).normalize();
        rel[i] = relative(parent_delta, delta).normalize();
        parent_delta = delta;
    }
    rel[n - 1] = if ch.has_option(option::KEEP_END_ROTATION) { parent_delta.conjugate() } else { Quat::IDENTITY };
    let weight = ch.target_ms[3];
    finish_chain(&ch.joints_ms, &ch.rotations_ms, &rel, &[1.0; MAX_FABRIK_JOINTS], n, weight, reached, flags, out);
}
