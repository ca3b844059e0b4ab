//! The kernels' WGSL, assembled and validated by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
