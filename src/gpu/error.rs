//! Errors from the GPU path.

use std::fmt;

/// Errors from the GPU path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// No adapter was found (or none matched `WGPU_ADAPTER_NAME`).
    NoAdapter(String),
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// wgpu reported a validation error.
    Validation(String),
    /// The GPU ran out of memory.
    OutOfMemory(String),
    /// The device was lost; make a new solver.
    DeviceLost(String),
    /// Reading results back failed.
    Readback(String),
    /// The batch is larger than the solver accepts.
    BatchTooLarge {
        /// Chains asked for.
        chains: usize,
        /// Most chains accepted.
        max: usize,
    },
    /// The rig, ground or frame given is invalid (see the wrapped error).
    Input(crate::error::IkError),
    /// The output slice does not have one entry per uploaded chain.
    LengthMismatch {
        /// Chains uploaded.
        chains: usize,
        /// Output slots given.
        outputs: usize,
    },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoAdapter(m) => write!(f, "no GPU adapter: {m}"),
            Self::RequestDevice(m) => write!(f, "could not create a GPU device: {m}"),
            Self::Validation(m) => write!(f, "wgpu validation error: {m}"),
            Self::OutOfMemory(m) => write!(f, "GPU out of memory: {m}"),
            Self::DeviceLost(m) => write!(f, "GPU device lost: {m}"),
            Self::Readback(m) => write!(f, "GPU readback failed: {m}"),
            Self::BatchTooLarge { chains, max } => write!(f, "batch of {chains} chains exceeds the maximum of {max}"),
            Self::LengthMismatch { chains, outputs } => {
                write!(f, "{chains} chains uploaded but {outputs} output slots")
            }
            Self::Input(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GpuError {}
