//! Pseudo three-bone IK (ALGORITHMS.md §3, seed 000): the CPU twin of
//! `shaders/three_bone.wgsl`.

use glam::Quat;

use super::chain::{check_joints, finish_chain, relative, write_fk};
use super::limb::{check_limb_settings, solve_limb, ZERO_BONE};
use super::math::{finite4, nlerp};
use crate::records::{option, v3, ThreeBoneChain, ThreeBoneSolved};
use crate::ChainError;

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
    if let Err(e) = solve(chain, out) {
        write_fk(&chain.joints_ms, &chain.rotations_ms, 4, e.code(), 0, out);
    }
}

/// Checks one chain the way [`three_bone`] does, without keeping the result.
pub fn validate_three_bone(chain: &ThreeBoneChain) -> Result<(), ChainError> {
    let mut scratch = ThreeBoneSolved::default();
    solve(chain, &mut scratch)
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
    let offset = p[3] - p[2];
    let limb_len = (p[1] - p[0]).length() + (p[2] - p[1]).length() + offset.length();
    if !(offset.length() > ZERO_BONE * limb_len) {
        return Err(ChainError::ZeroLengthBone);
    }
    let target = v3(l.target_ms);
    let local2 = r[1].conjugate() * r[2]; // (1)
    let mut sol = solve_limb(p[0], p[1], p[2], r[1], target - offset, l)?; // (2)-(4)
    let weight = l.target_ms[3];
    if weight <= 0.0 {
        write_fk(&chain.joints_ms, &chain.rotations_ms, 4, 0, 0, out);
        return Ok(());
    }
    let mut d2 = Quat::IDENTITY;
    if ratio < 1.0 {
        let r1_new = sol.e0 * sol.e1 * r[1];
        let follow = if l.mode[2] & option::COPY_MID_ROTATION != 0 { r1_new } else { r1_new * local2 }; // (5)
        let r2_new = nlerp(follow, r[2], ratio); // (6)
        d2 = r2_new * r[2].conjugate();
        sol = solve_limb(p[0], p[1], p[2], r[1], target - d2 * offset, l)?; // (7)
    }
    let d1 = sol.e0 * sol.e1;
    let rel = [sol.e0, sol.e1, relative(d1, d2), Quat::IDENTITY];
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
