//! # crowd-ik
//!
//! Batched inverse kinematics for whole crowds over slices of plain-old-data chain records
//! (every chain kind is listed in [`gpu::Kind::ALL`]), with a CPU reference path (glam,
//! optionally on all cores) that the WGSL kernels mirror, crowd foot IK with foot placement
//! across frames, and the pieces a wgpu renderer needs to keep everything on the GPU.
//!
//! | module | what |
//! | --- | --- |
//! | [`records`] | chain and solved records, byte-for-byte the GPU layout |
//! | [`constants`] | status codes, option/info bits and thresholds, shared with the WGSL kernels |
//! | [`cpu`] | the CPU reference solvers and batch jobs (twins of the WGSL kernels), aim, foot IK ([`cpu::FootIkJob`]), palette, clip sampling, [`cpu::CpuPath`] |
//! | [`gpu`] | [`gpu::GpuContext`], [`gpu::GpuSolver`] (chain kernels), [`gpu::CrowdSolver`] (foot IK), [`gpu::PaletteBuilder`], [`gpu::ClipPoseSource`], timestamps |
//! | [`crowd`] | foot-IK rig, ground (heightfield and its loaders, caller hits) and the records both twins read |
//! | [`bvh`] | BVH skeleton and motion loader |
//!
//! Everything a caller usually needs, CPU and GPU, is in [`prelude`]. The algorithms, their
//! parameters and conventions are described in `docs/ALGORITHMS.md`.
//!
//! ```
//! use crowd_ik::prelude::*;
//! use crowd_ik::glam::{Quat, Vec3};
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
//! The guides in the repository's `docs/` folder cover each solver and its parameters, the
//! GPU side and the CPU–GPU tolerance contract, crowd foot IK and foot placement, renderer
//! and Bevy integration and bad input; `docs/ALGORITHMS.md` gives the math and its sources.

#![warn(missing_docs)]
// Without the `gpu` feature the crate-level docs still name the GPU side.
#![cfg_attr(not(feature = "gpu"), allow(rustdoc::broken_intra_doc_links))]
// `!(x > eps)` is deliberate throughout the solvers: NaN must fail a check, and the WGSL
// twins read the same way.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// Declares each entry of `src/constants.rs` as a documented `pub const` (build.rs reads
/// the same file to generate the WGSL module `constants`).
macro_rules! shared_constants {
    ($( $(#[$meta:meta])* $name:ident : $ty:ty = $value:expr; )*) => {
        $( $(#[$meta])* pub const $name: $ty = $value; )*
    };
}

pub mod bvh;
/// Constants shared by the CPU solvers and the WGSL kernels (status codes, option and info
/// bits, thresholds, limits), written once in `src/constants.rs`: `build.rs` generates the
/// kernels' `constants` module from the same file.
pub mod constants;
pub mod cpu;
mod cpu_path;
pub mod crowd;
mod error;
#[cfg(feature = "gltf")]
pub mod gltf;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod records;

pub use error::{ChainError, IkError};
pub use records::{
    BendMode, CcdChain, ChainLimits, ConstrainedFabrikChain, Corrections, DlsChain, DlsTree, FabrikChain,
    FabrikCorrections, FabrikSolved, LimbBuilder, LimbSettings, LookAtChain, LookAtSolved, MultiFabrikChain,
    MultiFabrikSolved, PoleMode, SolvedChain, ThreeBoneChain, ThreeBoneSolved, TreeLimits, TwoBoneChain,
    TwoBoneCorrections, TwoBoneSolved, MAX_FABRIK_JOINTS,
};
/// The wgpu this crate is built against, re-exported so callers use the same version.
#[cfg(feature = "gpu")]
pub use wgpu;

/// The glam this crate's API speaks (`Vec3`, `Quat`, ...), re-exported so callers use the
/// same version: 0.34 with the feature `glam-0-34` (the default), 0.33 with `glam-0-33`
/// (Bevy 0.20's, whose `Vec3` and `Quat` then go straight into this API). With both on,
/// 0.33 wins. Every module of the crate names it `glam`.
#[cfg(feature = "glam-0-33")]
pub extern crate glam033 as glam;
/// The glam this crate's API speaks (see the `glam-0-33` variant of this item).
#[cfg(all(feature = "glam-0-34", not(feature = "glam-0-33")))]
pub extern crate glam034 as glam;
#[cfg(not(any(feature = "glam-0-33", feature = "glam-0-34")))]
compile_error!("crowd-ik needs a glam: enable the feature `glam-0-34` (default) or `glam-0-33`");

/// Everything a caller usually needs.
pub mod prelude {
    pub use crate::cpu::{
        AimJob, AimMethod, BatchJob, BatchSummary, CcdJob, ConstrainedFabrikJob, CpuPath, DlsJob, DlsTreeJob,
        FabrikJob, FabrikMode, FootIkJob, LookAtJob, MultiFabrikJob, ThreeBoneJob, TwoBoneJob,
    };
    pub use crate::crowd::{
        CharacterInput, CharacterState, FootPlacement, FootResult, FootRig, Ground, GroundHit, Heightfield, JointPose,
        LegPlacement, LockPivot, PlantDetection, SoleMeasure,
    };
    #[cfg(feature = "gpu")]
    pub use crate::gpu::{ClipPoseSource, CrowdSolver, GpuContext, GpuError, GpuSolver, PaletteBuilder};
    pub use crate::records::{info, option, Options};
    pub use crate::{
        BendMode, CcdChain, ChainError, ChainLimits, ConstrainedFabrikChain, DlsChain, DlsTree, FabrikChain,
        FabrikCorrections, FabrikSolved, IkError, LimbBuilder, LookAtChain, LookAtSolved, MultiFabrikChain,
        MultiFabrikSolved, PoleMode, ThreeBoneChain, ThreeBoneSolved, TreeLimits, TwoBoneChain, TwoBoneCorrections,
        TwoBoneSolved,
    };
}

/// The code samples of the README and the guides, compiled and run as doctests so they
/// stay true.
#[cfg(doctest)]
mod guides {
    macro_rules! guide {
        ($name:ident, $path:literal) => {
            #[doc = include_str!($path)]
            pub struct $name;
        };
    }
    guide!(Readme, "../README.md");
    guide!(Solvers, "../docs/solvers.md");
    guide!(JointLimits, "../docs/joint-limits.md");
    guide!(Dls, "../docs/dls.md");
    guide!(MultiEffector, "../docs/multi-effector.md");
    guide!(LookAt, "../docs/look-at.md");
    guide!(Gpu, "../docs/gpu.md");
    guide!(FootIk, "../docs/foot-ik.md");
    guide!(FootPlacement, "../docs/foot-placement.md");
    guide!(Renderer, "../docs/renderer.md");
    guide!(Bevy, "../docs/bevy.md");
    guide!(BadInput, "../docs/bad-input.md");
    #[cfg(feature = "gltf")]
    guide!(Gltf, "../docs/gltf.md");
}
