// Chain records, status codes and option bits shared with the CPU.
// Keep in sync with src/records.rs and src/error.rs (tests/layout.rs checks the layouts).

struct LimbSettings {
    target_ms: vec4<f32>,   // w = weight
    pole_ms: vec4<f32>,     // w = swivel angle
    mid_axis: vec4<f32>,    // mid-joint local; w = twist angle
    params: vec4<f32>,      // soften, max stretch, cos θmin, cos θmax
    mode: vec4<u32>,        // pole mode, bend mode, option bits, reserved
}

struct TwoBoneChain {
    joints_ms: array<vec4<f32>, 3>,
    rotations_ms: array<vec4<f32>, 3>,
    limb: LimbSettings,
    effector_offset: vec4<f32>,
}

struct ThreeBoneChain {
    joints_ms: array<vec4<f32>, 4>,
    rotations_ms: array<vec4<f32>, 4>,
    limb: LimbSettings,
    blend: vec4<f32>,
}

struct FabrikChain {
    joints_ms: array<vec4<f32>, 16>,
    rotations_ms: array<vec4<f32>, 16>,
    target_ms: vec4<f32>,   // w = weight
    params: vec4<f32>,      // x = precision
    mode: vec4<u32>,        // joint count, iterations, option bits, reserved
}

struct TwoBoneSolved {
    positions_ms: array<vec4<f32>, 3>,
    rotations_ms: array<vec4<f32>, 3>,
    corrections: array<vec4<f32>, 3>,
    status: vec4<u32>,      // reached, error code, info bits, joints written
}

struct ThreeBoneSolved {
    positions_ms: array<vec4<f32>, 4>,
    rotations_ms: array<vec4<f32>, 4>,
    corrections: array<vec4<f32>, 4>,
    status: vec4<u32>,
}

struct FabrikSolved {
    positions_ms: array<vec4<f32>, 16>,
    rotations_ms: array<vec4<f32>, 16>,
    corrections: array<vec4<f32>, 16>,
    status: vec4<u32>,
}

// One joint of a model-space pose. Keep in sync with JointPose in src/crowd.rs.
struct JointPose {
    position_ms: vec4<f32>,
    rotation_ms: vec4<f32>,
}

// Per-dispatch parameters. Keep in sync with DispatchParams in src/gpu/mod.rs.
struct DispatchParams {
    count: u32,     // chains in this segment
    groups_x: u32,  // workgroups along x of the 2-D dispatch
    pad0: u32,
    pad1: u32,
}

// ChainError codes (src/error.rs).
const ERR_NON_FINITE: u32 = 1u;
const ERR_ZERO_LENGTH_BONE: u32 = 2u;
const ERR_TARGET_ON_ROOT: u32 = 3u;
const ERR_POLE_ON_AXIS: u32 = 4u;
const ERR_DEGENERATE_MID_AXIS: u32 = 5u;
const ERR_INVALID_PARAMETER: u32 = 6u;
const ERR_JOINT_COUNT: u32 = 7u;
const ERR_NOT_NORMALIZED: u32 = 8u;

// records::option bits.
const OPT_KNEE_LIMITS: u32 = 1u;
const OPT_KEEP_END_ROTATION: u32 = 2u;
const OPT_COPY_MID_ROTATION: u32 = 4u;
const OPT_ALL: u32 = 7u;

// records::info bits.
const INFO_SOFTENED: u32 = 1u;
const INFO_KNEE_LIMITED: u32 = 2u;
const INFO_STRETCHED: u32 = 4u;
const INFO_OUT_OF_REACH: u32 = 8u;
const INFO_SWIVEL_FALLBACK: u32 = 16u;

const MAX_FABRIK_JOINTS: u32 = 16u;
const MAX_FABRIK_ITERATIONS: u32 = 4096u;
