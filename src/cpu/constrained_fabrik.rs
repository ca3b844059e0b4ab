//! Constrained FABRIK: FABRIK with joint limits (hinge, swing cone, twist), the CPU twin of
//! `shaders/constrained_fabrik.wgsl`.
//!
//! Each iteration runs the usual free backward pass (tip on the target, walk to the root)
//! and then a *limited* forward pass: from the root down, each bone turns toward the
//! direction the backward pass left it (shortest arc in its parent's already final frame,
//! so no roll), and that rotation is moved into the joint's limit before the next bone is
//! placed. The rotations of the last forward pass are the solution, so the limits hold at
//! the end whatever the iteration count; zero iterations project the FK pose onto the
//! limits.

use glam::{Quat, Vec3};

use super::chain::{finish_chain, solve_or_fk, write_fk};
use super::fabrik::{backward_pass, setup_chain, FabrikMode};
use super::limits::{forward_joint, setup_limits, Limit};
use super::math::normalize_or;
use crate::records::{
    info, option, v3, ChainLimits, ConstrainedFabrikChain, FabrikChain, FabrikSolved, MAX_FABRIK_JOINTS,
};
use crate::ChainError;

/// The option bits a constrained chain may set.
const OPTIONS: u32 = option::KEEP_END_ROTATION | option::MIRRORED;

/// Solves one constrained chain in [`FabrikMode::Fixed`] mode; an invalid chain gets a
/// flagged FK fallback. Same contract as [`super::fabrik()`], plus: at weight 1 every joint
/// ends inside its limit.
pub fn constrained_fabrik(chain: &ConstrainedFabrikChain, out: &mut FabrikSolved) {
    constrained_fabrik_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`constrained_fabrik`] with an explicit [`FabrikMode`].
pub fn constrained_fabrik_with_mode(chain: &ConstrainedFabrikChain, mode: FabrikMode, out: &mut FabrikSolved) {
    let twin = (chain.chain.mode[2] & option::MIRRORED != 0).then(|| chain.unmirrored());
    let n = chain.chain.joint_count().min(MAX_FABRIK_JOINTS);
    let joints = (&chain.chain.joints_ms[..], &chain.chain.rotations_ms[..]);
    solve_or_fk(chain, twin, joints, n, out, |c, o| solve(c, mode, o));
}

/// Checks one constrained chain the way [`constrained_fabrik`] does.
pub fn validate_constrained_fabrik(chain: &ConstrainedFabrikChain) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    checked(&chain.chain, &chain.limits, OPTIONS, &mut limits).map(|_| ())
}

/// The chain's checks and then its limits' (shared with CCD).
pub(crate) fn checked(
    chain: &FabrikChain,
    chain_limits: &ChainLimits,
    options: u32,
    limits: &mut [Limit; MAX_FABRIK_JOINTS],
) -> Result<super::fabrik::Setup, ChainError> {
    let s = setup_chain(chain, options)?;
    setup_limits(chain_limits, &chain.rotations_ms, &s.dir_fk, s.n, limits)?;
    Ok(s)
}

fn solve(chain: &ConstrainedFabrikChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    let (n, len, dir_fk, total) = (s.n, s.len, s.dir_fk, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.params[0];
    let base = v3(ch.joints_ms[0]);
    let target = v3(ch.target_ms);
    let mut fk = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut p = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    for i in 0..n {
        fk[i] = Quat::from_array(ch.rotations_ms[i]);
        p[i] = v3(ch.joints_ms[i]);
    }
    let eps2 = 1e-12 * total * total;
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let iterations = ch.mode[1];
    let mut prev_err = f32::INFINITY;
    let mut delta = Quat::IDENTITY;
    for it in 0..iterations.max(1) {
        if it < iterations {
            backward_pass(&mut p, target, &len, &dir_fk, n, eps2);
        }
        delta = forward(&mut p, &mut rel, base, &fk, &dir_fk, &len, &limits, n, eps2);
        if mode == FabrikMode::Converge {
            let err = (p[n - 1] - target).length();
            if err <= precision || (prev_err - err).abs() < 1e-7 * total {
                break;
            }
            prev_err = err;
        }
    }
    let reached = (p[n - 1] - target).length() <= precision;
    let flags = if (target - base).length() >= total { info::OUT_OF_REACH } else { 0 };
    rel[n - 1] = if ch.mode[2] & option::KEEP_END_ROTATION != 0 { delta.conjugate() } else { Quat::IDENTITY };
    finish_chain(&ch.joints_ms, &ch.rotations_ms, &rel, &[1.0; MAX_FABRIK_JOINTS], n, weight, reached, flags, out);
    Ok(())
}

/// The limited forward pass: root back on `base`, each bone toward where `p` has it, into
/// its limit; writes the new positions into `p` and the relative deltas into `rel`.
/// Returns the last bone's total delta.
#[allow(clippy::too_many_arguments)] // the per-chain arrays of the kernel's forward loop
pub(crate) fn forward(
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    rel: &mut [Quat; MAX_FABRIK_JOINTS],
    base: Vec3,
    fk: &[Quat; MAX_FABRIK_JOINTS],
    dir_fk: &[Vec3; MAX_FABRIK_JOINTS],
    len: &[f32; MAX_FABRIK_JOINTS],
    limits: &[Limit; MAX_FABRIK_JOINTS],
    n: usize,
    eps2: f32,
) -> Quat {
    p[0] = base;
    let mut delta = Quat::IDENTITY;
    for i in 0..n - 1 {
        let want = normalize_or(p[i + 1] - p[i], delta * dir_fk[i], eps2);
        let (d, e) = forward_joint(delta, fk[i], dir_fk[i], want, &limits[i]);
        p[i + 1] = p[i] + (d * dir_fk[i]) * len[i];
        rel[i] = e;
        delta = d;
    }
    delta
}
