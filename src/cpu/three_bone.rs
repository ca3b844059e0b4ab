//! Pseudo three-bone IK (docs/ALGORITHMS.md, "Pseudo three-bone IK"): the CPU twin of
//! `shaders/kernels/three_bone.wgsl`.

use glam::Quat;

use super::chain::{check_joints, finish_chain, solve_or_fk, write_fk};
use super::limb::{check_limb_settings, solve_three_bone_core};
use super::math::finite4;
use crate::error::ChainError;
use crate::records::{option, v3, Options, ThreeBoneChain, ThreeBoneSolved};

/// Solves one pseudo three-bone chain into `out`; an invalid chain gets a flagged FK
/// fallback, as in [`super::two_bone()`].
///
/// Steps: (1) record j2's local rotation under j1; (2) record the offset j2→j3;
/// (3) two-bone target = target − offset; (4) two-bone IK on j0, j1 (j2 is the effector);
/// (5) rebuild j2's orientation from the new j1 and the recorded local rotation (or copy the
/// new j1 orientation, [`option::COPY_MID_ROTATION`]); (6) blend it toward j2's FK
/// orientation by the blend ratio (0 = follow, 1 = FK); (7) below 1, redo (2)–(4) with the
/// blended orientation so the tip lands on the target again. j3 follows j2.
/// `reached` is the two-bone contract of the last pass, for the tip.
pub fn three_bone(chain: &ThreeBoneChain, out: &mut ThreeBoneSolved) {
    // A mirrored chain is solved as its unmirrored twin, and its results reflected back
    // (option::MIRRORED); a fallback is the chain's own FK pose.
    let twin = chain.limb.mirrored().then(|| chain.unmirrored());
    solve_or_fk(chain, twin, (&chain.joints_ms, &chain.rotations_ms), 4, out, solve);
}

/// Checks one chain the way [`three_bone`] does, without keeping the result.
pub fn validate_three_bone(chain: &ThreeBoneChain) -> Result<(), ChainError> {
    let mut scratch = ThreeBoneSolved::default();
    if chain.limb.mirrored() {
        solve(&chain.unmirrored(), &mut scratch)
    } else {
        solve(chain, &mut scratch)
    }
}

fn solve(chain: &ThreeBoneChain, out: &mut ThreeBoneSolved) -> Result<(), ChainError> {
    let l = &chain.limb;
    check_joints(&chain.joints_ms, &chain.rotations_ms, 4)?;
    if !finite4(chain.blend) {
        return Err(ChainError::NonFinite);
    }
    check_limb_settings(l)?;
    let ratio = chain.blend[0];
    if !(0.0..=1.0).contains(&ratio) {
        return Err(ChainError::InvalidParameter);
    }
    let p = chain.joints_ms.map(v3);
    let r = chain.rotations_ms.map(Quat::from_array);
    let copy_mid = l.has_option(option::COPY_MID_ROTATION);
    let sol = solve_three_bone_core(p, r, v3(l.target_ms), ratio, copy_mid, l)?;
    let weight = l.target_ms[3];
    if weight <= 0.0 {
        write_fk(&chain.joints_ms, &chain.rotations_ms, 4, 0, 0, out);
        return Ok(());
    }
    let rel = [sol.e[0], sol.e[1], sol.e[2], Quat::IDENTITY];
    finish_chain(
        &chain.joints_ms,
        &chain.rotations_ms,
        &rel,
        &[sol.scale, sol.scale, 1.0],
        4,
        weight,
        sol.reached,
        sol.info,
        out,
    );
    Ok(())
}
