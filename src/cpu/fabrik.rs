//! FABRIK (docs/ALGORITHMS.md, "FABRIK"): the CPU twin of `shaders/kernels/fabrik.wgsl`.

use glam::{Quat, Vec3};

use super::chain::{check_joints, finish_chain, solve_or_fk, write_fk};
use super::limb::{MIN_CHAIN_LENGTH, ON_ROOT, ZERO_BONE};
use super::math::{finite4, in_range, normalize_or, rotation_arc};
use crate::error::ChainError;
use crate::records::{info, option, v3, FabrikChain, FabrikCorrections, FabrikSolved, Options, MAX_FABRIK_JOINTS};

/// Most iterations a chain may ask for.
pub const MAX_FABRIK_ITERATIONS: u32 = crate::constants::MAX_FABRIK_ITERATIONS;

/// How many iterations FABRIK runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FabrikMode {
    /// Exactly [`FabrikChain::iterations`], no early exit: identical work per chain, what the GPU
    /// kernel runs, and what makes CPU and GPU results comparable.
    #[default]
    Fixed,
    /// At most [`FabrikChain::iterations`], stopping once the tip is within the precision of the
    /// target or the error stops changing (by less than `1e-7 ×` chain length). CPU only.
    Converge,
}

/// Solves one FABRIK chain in [`FabrikMode::Fixed`] mode; an invalid chain gets a flagged
/// FK fallback.
///
/// Contract: fixed base; a target at or beyond the chain's length lays the chain straight
/// toward it; otherwise backward/forward iterations; then the rotations are rebuilt down
/// the chain: each bone's relative delta is the shortest arc from its FK direction to its
/// new one as seen in its parent's corrected frame, so no bone gains roll about its own
/// axis, also where a bone flips direction (folded chains). The last joint follows its
/// parent, or keeps its FK model rotation with [`option::KEEP_END_ROTATION`]. `reached` =
/// tip within `params.x` (precision) of the target and weight ≥ 1. A joint that lands on
/// its neighbour keeps its FK bone direction.
pub fn fabrik(chain: &FabrikChain, out: &mut FabrikSolved) {
    fabrik_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`fabrik`] with an explicit [`FabrikMode`].
pub fn fabrik_with_mode(chain: &FabrikChain, mode: FabrikMode, out: &mut FabrikSolved) {
    // A mirrored chain is solved as its unmirrored twin, and its results reflected back
    // (option::MIRRORED); a fallback is the chain's own FK pose.
    let twin = chain.has_option(option::MIRRORED).then(|| chain.unmirrored());
    let n = chain.joint_count().min(MAX_FABRIK_JOINTS);
    solve_or_fk(chain, twin, (&chain.joints_ms, &chain.rotations_ms), n, out, |c, o| solve(c, mode, o));
}

/// [`fabrik_with_mode`] writing only the local corrections and the status (the same bits
/// as the full record's): see [`FabrikCorrectionsJob`](super::FabrikCorrectionsJob).
pub fn fabrik_corrections(chain: &FabrikChain, mode: FabrikMode, out: &mut FabrikCorrections) {
    let mut full = FabrikSolved::default();
    fabrik_with_mode(chain, mode, &mut full);
    *out = FabrikCorrections::of(&full);
}

/// Checks one chain the way [`fabrik`] does, without keeping the result.
pub fn validate_fabrik(chain: &FabrikChain) -> Result<(), ChainError> {
    setup(chain).map(|_| ())
}

/// What the checks establish: joint count, bone lengths and FK directions, total length.
pub(crate) struct Setup {
    pub n: usize,
    pub len: [f32; MAX_FABRIK_JOINTS],
    pub dir_fk: [Vec3; MAX_FABRIK_JOINTS],
    pub total: f32,
}

/// Every check, in the kernel's order; the stage `validate_fabrik` and `solve` share.
fn setup(chain: &FabrikChain) -> Result<Setup, ChainError> {
    setup_chain(chain, option::FABRIK)
}

/// [`setup`] with the option bits a solver knows (`options`): shared with constrained
/// FABRIK and CCD, whose records embed a [`FabrikChain`].
pub(crate) fn setup_chain(chain: &FabrikChain, options: u32) -> Result<Setup, ChainError> {
    let n = chain.joint_count();
    if !(2..=MAX_FABRIK_JOINTS).contains(&n) {
        return Err(ChainError::JointCount);
    }
    check_joints(&chain.joints_ms, &chain.rotations_ms, n)?;
    if !finite4(chain.target_ms) || !finite4(chain.params) {
        return Err(ChainError::NonFinite);
    }
    if !in_range(chain.target_ms) {
        return Err(ChainError::OutOfRange);
    }
    if chain.iterations() > MAX_FABRIK_ITERATIONS
        || chain.precision() < 0.0
        || chain.options() & !options != 0
        || chain.reserved() != 0
    {
        return Err(ChainError::InvalidParameter);
    }
    let mut s = Setup { n, len: [0.0; MAX_FABRIK_JOINTS], dir_fk: [Vec3::ZERO; MAX_FABRIK_JOINTS], total: 0.0 };
    for i in 0..n - 1 {
        let bone = v3(chain.joints_ms[i + 1]) - v3(chain.joints_ms[i]);
        s.len[i] = bone.length();
        s.dir_fk[i] = bone / s.len[i];
        s.total += s.len[i];
    }
    for l in &s.len[..n - 1] {
        if !(*l > ZERO_BONE * s.total && s.total >= MIN_CHAIN_LENGTH) {
            return Err(ChainError::ZeroLengthBone);
        }
    }
    let c = (v3(chain.target_ms) - v3(chain.joints_ms[0])).length();
    if !(c > ON_ROOT * s.total) {
        return Err(ChainError::TargetOnRoot);
    }
    Ok(s)
}

fn solve(chain: &FabrikChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let Setup { n, len, dir_fk, total } = setup(chain)?;
    let iterations = chain.iterations();
    let precision = chain.precision();
    let base = v3(chain.joints_ms[0]);
    let target = v3(chain.target_ms);
    let c = (target - base).length();
    let weight = chain.target_ms[3];
    if weight <= 0.0 {
        write_fk(&chain.joints_ms, &chain.rotations_ms, n, 0, 0, out);
        return Ok(());
    }

    let mut p = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    for (i, q) in p.iter_mut().enumerate().take(n) {
        *q = v3(chain.joints_ms[i]);
    }
    let eps2 = 1e-12 * total * total;
    let mut flags = 0;
    if c >= total {
        // Out of reach: lay the chain straight toward the target.
        let d = (target - base) / c;
        for i in 0..n - 1 {
            p[i + 1] = p[i] + d * len[i];
        }
        flags |= info::OUT_OF_REACH;
    } else {
        let mut prev_err = f32::INFINITY;
        for _ in 0..iterations {
            backward_pass(&mut p, target, &len, &dir_fk, n, eps2);
            // Forward: root back on the base, walk to the tip.
            p[0] = base;
            for i in 0..n - 1 {
                let dir = normalize_or(p[i + 1] - p[i], dir_fk[i], eps2);
                p[i + 1] = p[i] + dir * len[i];
            }
            if mode == FabrikMode::Converge {
                let err = (p[n - 1] - target).length();
                if err <= precision || (prev_err - err).abs() < 1e-7 * total {
                    break;
                }
                prev_err = err;
            }
        }
    }
    let reached = (p[n - 1] - target).length() <= precision;

    // Rotations, down the chain: bone i turns by the shortest arc from its FK direction to
    // its new direction as seen in its parent's already-corrected frame (`parent⁻¹ · new`),
    // which is its relative delta `E_i`; the parent's total delta then carries it on. A
    // bone that keeps its place relative to its parent gets the identity, so a chain that
    // unfolds or flips adds no roll about any bone's own axis (a shortest arc's axis is
    // perpendicular to the bone), and an exact half turn always turns about
    // `any_orthonormal` of the bone's FK direction.
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut parent = Quat::IDENTITY;
    for i in 0..n - 1 {
        let new_dir = normalize_or(p[i + 1] - p[i], dir_fk[i], eps2);
        rel[i] = rotation_arc(dir_fk[i], parent.conjugate() * new_dir);
        parent *= rel[i];
    }
    rel[n - 1] = if chain.has_option(option::KEEP_END_ROTATION) { parent.conjugate() } else { Quat::IDENTITY };
    finish_chain(
        &chain.joints_ms,
        &chain.rotations_ms,
        &rel,
        &[1.0; MAX_FABRIK_JOINTS],
        n,
        weight,
        reached,
        flags,
        out,
    );
    Ok(())
}

/// The free backward pass: tip on the target, each joint pulled toward the one below it at
/// its bone's length (a joint on its child keeps its FK bone direction). Shared with
/// constrained FABRIK; the twin of `backward_pass` in `shaders/shared/fabrik_chain.wgsl`.
#[inline]
pub(crate) fn backward_pass(
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    target: Vec3,
    len: &[f32; MAX_FABRIK_JOINTS],
    dir_fk: &[Vec3; MAX_FABRIK_JOINTS],
    n: usize,
    eps2: f32,
) {
    p[n - 1] = target;
    for i in (0..n - 1).rev() {
        let dir = normalize_or(p[i] - p[i + 1], -dir_fk[i], eps2);
        p[i] = p[i + 1] + dir * len[i];
    }
}
