//! Two-bone IK: the CPU twin of `shaders/kernels/two_bone.wgsl`.

use glam::Quat;

use super::chain::{check_joints, finish_chain, relative, solve_or_fk, write_fk};
use super::limb::{check_limb_settings, solve_limb};
use super::math::{finite4, in_range};
use crate::error::ChainError;
use crate::records::{option, v3, Options, TwoBoneChain, TwoBoneCorrections, TwoBoneSolved};

/// Solves one two-bone chain into `out`. Never fails: an invalid chain gets its FK pose,
/// identity corrections, `reached = false` and its [`ChainError`] code.
///
/// Contract (ozz-animation's `IKTwoBoneJob`, extended): weight ≤ 0 leaves the FK pose
/// untouched (`reached = false`); the end effector (end joint plus `effector_offset`) is put
/// on the target when `|a − b| < c ≤ soften·(a + b)` (`c` = start→target distance, bones
/// `a`, `b`, stretched by up to `max_stretch` first) and the knee limits allow it, and
/// `reached` is true exactly then and when weight ≥ 1.
pub fn two_bone(chain: &TwoBoneChain, out: &mut TwoBoneSolved) {
    // A mirrored chain is solved as its unmirrored twin, and its results reflected back
    // (option::MIRRORED); a fallback is the chain's own FK pose.
    let twin = chain.limb.mirrored().then(|| chain.unmirrored());
    solve_or_fk(chain, twin, (&chain.joints_ms, &chain.rotations_ms), 3, out, solve);
}

/// [`two_bone`] writing only the local corrections and the status (the same bits as the
/// full record's): see [`TwoBoneCorrectionsJob`](super::TwoBoneCorrectionsJob).
pub fn two_bone_corrections(chain: &TwoBoneChain, out: &mut TwoBoneCorrections) {
    let mut full = TwoBoneSolved::default();
    two_bone(chain, &mut full);
    *out = TwoBoneCorrections::of(&full);
}

/// Checks one chain the way [`two_bone`] does, without solving it.
pub fn validate_two_bone(chain: &TwoBoneChain) -> Result<(), ChainError> {
    let mut scratch = TwoBoneSolved::default();
    if chain.limb.mirrored() {
        solve(&chain.unmirrored(), &mut scratch)
    } else {
        solve(chain, &mut scratch)
    }
}

fn solve(chain: &TwoBoneChain, out: &mut TwoBoneSolved) -> Result<(), ChainError> {
    let l = &chain.limb;
    check_joints(&chain.joints_ms, &chain.rotations_ms, 3)?;
    if !finite4(chain.effector_offset) {
        return Err(ChainError::NonFinite);
    }
    if !in_range(chain.effector_offset) {
        return Err(ChainError::OutOfRange);
    }
    check_limb_settings(l)?;
    let weight = l.target_ms[3];
    let r = chain.rotations_ms.map(Quat::from_array);
    // End-effector offset: put the contact point, not the end joint, on the target.
    let target = v3(l.target_ms) - r[2] * v3(chain.effector_offset);
    let sol = solve_limb(v3(chain.joints_ms[0]), v3(chain.joints_ms[1]), v3(chain.joints_ms[2]), r[1], target, l)?;
    if weight <= 0.0 {
        write_fk(&chain.joints_ms, &chain.rotations_ms, 3, 0, 0, out);
        return Ok(());
    }
    let d1 = sol.e0 * sol.e1;
    let d2 = if l.has_option(option::KEEP_END_ROTATION) { Quat::IDENTITY } else { d1 };
    let rel = [sol.e0, sol.e1, relative(d1, d2)];
    finish_chain(
        &chain.joints_ms,
        &chain.rotations_ms,
        &rel,
        &[sol.scale, sol.scale],
        3,
        weight,
        sol.reached,
        sol.info,
        out,
    );
    Ok(())
}
