//! The GPU path (wgpu): every kernel of `shaders/kernels/` behind an object that keeps its buffers
//! and pipelines across frames.
//!
//! | file | what |
//! | --- | --- |
//! | [`context`] | [`GpuContext`]: device, queue, device-lost flag, limits, error scopes, timers; [`adapter_from_env`] |
//! | [`chain_solver`] | [`GpuSolver`]: batches of every chain kind ([`Kind::ALL`]) |
//! | [`kinds`] | [`Kind`] of chain kernel, [`GpuChain`] records, [`OutputSegment`] |
//! | [`crowd`] | [`CrowdSolver`]: crowd foot IK, one dispatch for the whole crowd |
//! | `crowd_state` | its foot-placement state: frame time, resets, remapping, reading back |
//! | [`palette`] | [`PaletteBuilder`]: skinning matrices from solved poses |
//! | [`pose_source`] | [`ClipPoseSource`]: FK poses sampled from a clip on the GPU |
//! | [`buffers`] | buffer, pipeline and dispatch helpers shared by all of them |
//! | [`error`] | [`GpuError`] |
//! | [`timer`] | [`timer::GpuTimer`]: device time of a pass from timestamp queries |
//! | [`shaders`] | the WGSL, assembled and validated by `build.rs` |
//!
//! Every object is built from a [`GpuContext`] (or from the caller's `&wgpu::Device` and
//! `&wgpu::Queue`, which makes one): a renderer passes its own device, and results stay on
//! the GPU for its passes to bind. Readback (`read`, `solve`) is a convenience for tests and
//! tools. Batches larger than one storage binding are split into segments, each its own
//! bind group and dispatch; within a segment a 2-D dispatch covers more than 65 535
//! workgroups. Both are invisible to the caller except through the output accessors.

pub mod buffers;
pub mod chain_solver;
pub mod context;
pub mod crowd;
mod crowd_state;
pub mod error;
pub mod kinds;
pub mod palette;
pub mod pose_source;
pub mod shaders;
pub mod timer;

pub use chain_solver::{GpuSolver, MAX_CHAINS};
pub use context::{adapter_from_env, ErrorScopes, GpuContext};
pub use crowd::CrowdSolver;
pub use error::GpuError;
pub use kinds::{GpuChain, Kind, OutputSegment};
pub use palette::PaletteBuilder;
pub use pose_source::ClipPoseSource;
