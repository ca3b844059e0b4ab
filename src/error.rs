//! Errors: per-chain status codes (also written by the GPU kernels) and API errors.

use std::fmt;

use crate::constants as c;

/// Why one chain could not be solved. Inside a batch such a chain gets a flagged fallback:
/// its FK pose, identity corrections, `reached = false` and this code in `status[1]`; no
/// other chain is affected. At the API boundary `validate()` reports it as
/// [`IkError::InvalidChain`].
///
/// The codes are shared with the WGSL kernels (`ERR_*` in [`crate::constants`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChainError {
    /// A position, rotation, target, pole or parameter is NaN or infinite.
    NonFinite = c::ERR_NON_FINITE,
    /// A bone is shorter than `1e-6` of the chain's length (`1e-4` of a joint tree's total
    /// length, [`crate::constants::MIN_TREE_BONE`]), or the whole chain is shorter than
    /// `1e-6` model units ([`crate::constants::MIN_CHAIN_LENGTH`]: below it the squares of
    /// its lengths reach the subnormal range, where paths and GPUs that flush subnormals
    /// part ways).
    ZeroLengthBone = c::ERR_ZERO_LENGTH_BONE,
    /// The target is on the start joint (closer than `1e-5 ×` chain length): no direction.
    TargetOnRoot = c::ERR_TARGET_ON_ROOT,
    /// The pole position or direction lies within 1e-4 rad of the start→target axis (or is
    /// zero): no bend plane. For an aim, the up target lies within 1e-3 rad of the aimed
    /// axis.
    PoleOnAxis = c::ERR_POLE_ON_AXIS,
    /// The hinge axis (`mid_axis`) is zero, lies along the first bone, or lies in the plane
    /// of bones bent more than ~11.5° (sine [`crate::constants::AGAINST_HINGE`]; a limb
    /// bent less in such a plane, a nearly straight knee the pose twists, is bent about
    /// the bones' own axis); a joint limit's axis closer than 0.01 rad to its bone
    /// ([`crate::constants::LIMIT_AXIS2`]) for a hinge or an elliptical cone.
    DegenerateMidAxis = c::ERR_DEGENERATE_MID_AXIS,
    /// A parameter is out of range: unknown mode or option bit, soften outside `[0, 1]`,
    /// stretch below 1, knee limits not `0 ≤ θmin ≤ θmax ≤ π`, zero north axis, a swivel axis
    /// shorter than 1e-12 ([`crate::constants::MIN_AXIS_LENGTH2`]), a swivel
    /// (in `Swivel` mode) or twist angle beyond ±1e4 rad ([`crate::constants::MAX_ANGLE`]:
    /// the f32 reduction to one turn loses the angle past ~2²⁴), a three-bone blend outside
    /// `[0, 1]`, negative precision, more than 4096 FABRIK iterations, or a non-zero
    /// reserved word (`mode[3]` of a limb or a FABRIK chain: a record written for a later
    /// version is refused rather than half understood).
    InvalidParameter = c::ERR_INVALID_PARAMETER,
    /// A FABRIK chain (constrained FABRIK and CCD included) has fewer than 2 or more than 16
    /// joints, a joint tree (multi-effector FABRIK) fewer than 2 or more than 32, a look-at
    /// record fewer than 1 or more than 4.
    JointCount = c::ERR_JOINT_COUNT,
    /// A rotation is not a unit quaternion (`| |q|² − 1 | > 1e-3`).
    NotNormalized = c::ERR_NOT_NORMALIZED,
    /// A joint position, target, pole, hinge axis or end-effector offset has a coordinate
    /// beyond ±1e9 ([`crate::constants::MAX_COORDINATE`]): finite, but past what f32
    /// arithmetic on its squares can solve.
    OutOfRange = c::ERR_OUT_OF_RANGE,
    /// GPU only: the device ended the kernel's loops before the record was solved. Mesa's
    /// software Vulkan driver (lavapipe) ends every loop of an invocation once all its loops
    /// together have run 65 535 times; the kernels on trees (multi-effector FABRIK, damped
    /// least squares), whose loops over a tree's joints do not unroll, see it and flag the
    /// record with its FK pose instead of returning a pose cut short (see the GPU guide).
    /// The CPU twins never return it.
    DeviceLoopLimit = c::ERR_DEVICE_LOOP_LIMIT,
}

impl ChainError {
    /// Decodes a status code; `None` for 0 (solved) and unknown codes.
    #[must_use]
    pub fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            c::ERR_NON_FINITE => Self::NonFinite,
            c::ERR_ZERO_LENGTH_BONE => Self::ZeroLengthBone,
            c::ERR_TARGET_ON_ROOT => Self::TargetOnRoot,
            c::ERR_POLE_ON_AXIS => Self::PoleOnAxis,
            c::ERR_DEGENERATE_MID_AXIS => Self::DegenerateMidAxis,
            c::ERR_INVALID_PARAMETER => Self::InvalidParameter,
            c::ERR_JOINT_COUNT => Self::JointCount,
            c::ERR_NOT_NORMALIZED => Self::NotNormalized,
            c::ERR_OUT_OF_RANGE => Self::OutOfRange,
            c::ERR_DEVICE_LOOP_LIMIT => Self::DeviceLoopLimit,
            _ => return None,
        })
    }
    /// The code written to `status[1]`.
    #[must_use]
    pub fn code(self) -> u32 {
        self as u32
    }
}

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NonFinite => "a position, rotation, target, pole or parameter is NaN or infinite",
            Self::ZeroLengthBone => "a bone has zero length",
            Self::TargetOnRoot => "the target is on the start joint",
            Self::PoleOnAxis => "the pole lies on the start-to-target axis",
            Self::DegenerateMidAxis => "the mid joint's hinge axis lies in the plane of the bones",
            Self::InvalidParameter => "a parameter is out of range",
            Self::JointCount => "the joint count is out of range (FABRIK 2 to 16, joint trees 2 to 32, look-at 1 to 4)",
            Self::NotNormalized => "a rotation is not a unit quaternion",
            Self::OutOfRange => "a position, target, pole, axis or offset is beyond ±1e9",
            Self::DeviceLoopLimit => "the device ended the kernel's loops before the record was solved",
        })
    }
}

impl std::error::Error for ChainError {}

/// Errors returned at the API boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IkError {
    /// Chain `index` of the batch is invalid (strict `validate()` only; `run()` flags it).
    InvalidChain {
        /// Position of the chain in the input slice.
        index: usize,
        /// What is wrong with it.
        error: ChainError,
    },
    /// The output slice does not have one entry per input chain.
    LengthMismatch {
        /// Number of input chains.
        chains: usize,
        /// Number of output slots.
        outputs: usize,
    },
    /// The batch is larger than the solver accepts.
    BatchTooLarge {
        /// Chains asked for.
        chains: usize,
        /// Most chains accepted.
        max: usize,
    },
    /// A foot-IK rig breaks a rule of `FootRig::validate`.
    InvalidRig(String),
    /// A heightfield breaks a rule of `Heightfield::new`.
    InvalidHeightfield(String),
    /// Slices of a crowd frame disagree in length (characters, poses, outputs, hits).
    FrameMismatch(String),
    /// A file could not be parsed (BVH, .npy, raw heights).
    Parse(String),
    /// A CPU batch job asked for an instruction set this CPU does not have.
    CpuPathUnavailable(crate::cpu_path::CpuPath),
    /// A frame time that is NaN, infinite or negative (the value as written).
    InvalidFrameTime(String),
    /// A rig with foot placement was run without its per-character state
    /// (`FootIkJob::run_frame`, `CrowdSolver::set_frame_time`).
    StateRequired,
    /// A stateless rig (no foot placement) was run with per-character states and a frame
    /// time (`FootIkJob::run_frame`): they would be ignored; use `FootIkJob::run`.
    StateNotUsed,
}

impl fmt::Display for IkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidChain { index, error } => write!(f, "chain {index}: {error}"),
            Self::LengthMismatch { chains, outputs } => {
                write!(f, "{chains} chains but {outputs} output slots")
            }
            Self::BatchTooLarge { chains, max } => {
                write!(f, "batch of {chains} chains exceeds the maximum of {max}")
            }
            Self::InvalidRig(m) => write!(f, "invalid foot-IK rig: {m}"),
            Self::InvalidHeightfield(m) => write!(f, "invalid heightfield: {m}"),
            Self::FrameMismatch(m) => write!(f, "crowd frame slices disagree: {m}"),
            Self::Parse(m) => write!(f, "parse error: {m}"),
            Self::CpuPathUnavailable(p) => write!(f, "this CPU cannot run the {p} path"),
            Self::InvalidFrameTime(dt) => write!(f, "frame time {dt} s: it must be finite and ≥ 0"),
            Self::StateNotUsed => {
                write!(f, "this rig has no foot placement: it reads no state nor frame time (run it without them)")
            }
            Self::StateRequired => {
                write!(f, "this rig has foot placement: run frames with their time and per-character state")
            }
        }
    }
}

impl std::error::Error for IkError {}
