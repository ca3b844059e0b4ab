//! # crowd-ik-tools
//!
//! What the examples, benchmarks and tests of `crowd-ik` share, kept out of the IK library
//! so its public surface is the IK alone:
//!
//! | module | what |
//! | --- | --- |
//! | [`scene`] | a procedural biped, its foot-IK rig, a walk cycle, a crowd wandering over hills |
//! | [`terrain`] | procedural rolling hills as a [`crowd_ik::crowd::Heightfield`] |
//! | [`workload`] | deterministic random chains for benchmarks and tests |
//! | [`limits`] | an independent statement of joint limits, to check solved chains against |
//! | [`hostile`] | the properties a foot-placement frame keeps on any input (fuzzing, property tests) |
//! | [`preview`] | a headless wgpu renderer of a terrain and a skinned crowd (works on lavapipe) |
//! | [`image`] | PNG output (the `png` crate) |

#![warn(missing_docs)]

pub mod hostile;
pub mod image;
pub mod limits;
pub mod preview;
pub mod scene;
pub mod terrain;
pub mod workload;
