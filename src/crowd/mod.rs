//! Crowd foot IK: the rig, the crowd and the ground (docs/ALGORITHMS.md, "Crowd foot IK").
//!
//! | file | what |
//! | --- | --- |
//! | [`rig`] | [`FootRig`], [`LegRig`]: which joints are the pelvis and legs, and each leg's settings |
//! | [`ground`] | [`Ground`], [`Heightfield`] (sampling, `.npy` and raw loaders), [`GroundHit`] from the caller |
//! | [`placement`] | [`FootPlacement`]: foot placement across frames, and the [`CharacterState`] it keeps per character |
//! | [`records`] | the records both twins read: [`CharacterInput`], [`JointPose`], [`FootResult`] (and the packed rig the kernels read) |
//!
//! This module depends on none of the solvers: `cpu::foot_ik` and `gpu::crowd` read it.
//! World space is Y-up; a character's model space maps to world by its root:
//! `world = root_rotation · (model · scale) + root_translation`.

pub mod detect;
pub mod ground;
pub mod placement;
pub mod records;
pub mod rig;

pub use detect::{find_legs, split_name, FoundLegs, Side};
pub use ground::{heightfield_height, sample_heightfield, Ground, Heightfield};
pub use placement::{
    remap_states, spring_rate, CharacterState, FootPlacement, FrameInput, LegPlacement, LegState, LockPivot,
    PlantDetection,
};
pub use records::{foot, CharacterInput, FootResult, GroundHit, JointPose, SolverLeg, SolverRig};
pub use rig::{joints_below, BipedSettings, FootAlign, FootRig, KneePole, LegKind, LegRig, SoleMeasure};

/// Most legs per rig.
pub const MAX_LEGS: usize = crate::constants::MAX_LEGS as usize;
/// Most joints per skeleton.
pub const MAX_SKELETON_JOINTS: usize = 1024;
/// "No parent" / "no role" in the GPU joint table.
pub const NONE: u32 = crate::constants::NONE;
