//! # crowd-ik
//!
//! Batched inverse kinematics for whole crowds: two-bone, pseudo three-bone and
//! fixed-iteration FABRIK over slices of plain-old-data chain records, with a CPU reference
//! path (glam, optionally on all cores) that the WGSL kernels mirror, crowd foot IK, and the
//! pieces a wgpu renderer needs to keep everything on the GPU.
//!
//! | module | what |
//! | --- | --- |
//! | [`records`] | chain and solved records, byte-for-byte the GPU layout |
//! | [`cpu`] | the CPU reference solvers and batch jobs (twins of the WGSL kernels), aim, foot IK, palette, clip sampling |
//! | [`gpu`] | `GpuSolver` (chain kernels), `crowd::CrowdSolver` (foot IK), `palette::PaletteBuilder`, `pose_source::ClipPoseSource`, `preview::Preview`, timestamps |
//! | [`crowd`] | foot-IK rig, crowd, ground (heightfield, caller hits) and result records |
//! | [`bvh`] | BVH skeleton and motion loader |
//! | [`scene`], [`workload`] | procedural biped, walk cycle and crowd; deterministic benchmark inputs |
//!
//! ```
//! use crowd_ik::prelude::*;
//! use glam::{Quat, Vec3};
//!
//! // A leg: hip, knee, ankle (model space); the knee points forward (+Z), so its hinge is −X.
//! let joints = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 0.55, 0.05), Vec3::new(0.0, 0.1, 0.0)];
//! let chain = TwoBoneChain::new(joints, [Quat::IDENTITY; 3], Vec3::new(0.1, 0.3, 0.1))
//!     .with_pole_direction(Vec3::Z)
//!     .with_mid_axis(-Vec3::X);
//! let chains = vec![chain; 4];
//! let mut solved = vec![TwoBoneSolved::default(); chains.len()];
//! let summary = TwoBoneJob::new(&chains, &mut solved).run()?;
//! assert_eq!(summary.reached, 4);
//! assert!((solved[0].position(2) - Vec3::new(0.1, 0.3, 0.1)).length() < 1e-5);
//! # Ok::<(), crowd_ik::IkError>(())
//! ```
//!
//! See `README.md` for the data layout, every parameter and the tolerance contract.

#![warn(missing_docs)]
// `!(x > eps)` is deliberate throughout the solvers: NaN must fail a check, and the WGSL
// twins read the same way.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod bvh;
pub mod cpu;
pub mod crowd;
mod error;
pub mod gpu;
pub mod records;
pub mod scene;
pub mod workload;

pub use error::{ChainError, IkError};
pub use records::{
    BendMode, FabrikChain, FabrikSolved, LimbBuilder, LimbSettings, PoleMode, SolvedChain, ThreeBoneChain,
    ThreeBoneSolved, TwoBoneChain, TwoBoneSolved, MAX_FABRIK_JOINTS,
};
/// The wgpu this crate is built against, re-exported so callers use the same version.
pub use wgpu;

/// Everything a caller usually needs.
pub mod prelude {
    pub use crate::cpu::{AimJob, AimMethod, BatchJob, BatchSummary, FabrikJob, FabrikMode, ThreeBoneJob, TwoBoneJob};
    pub use crate::records::{info, option};
    pub use crate::{
        BendMode, ChainError, FabrikChain, FabrikSolved, IkError, LimbBuilder, PoleMode, ThreeBoneChain,
        ThreeBoneSolved, TwoBoneChain, TwoBoneSolved,
    };
}

/// The README's code samples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
