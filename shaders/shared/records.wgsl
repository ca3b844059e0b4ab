// Chain records shared with the CPU, byte for byte.
// Keep in sync with src/records.rs (tests/layout.rs checks every layout with naga).
// Status codes, option and info bits come from `constants` (generated from src/constants.rs).

#import constants

// The packed words of a chain record by name, as the Rust records' accessors name them.
// Every chain's `mode` word: x = joint count (a limb: pole mode), y = iterations (a limb:
// bend mode), z = option bits, w = reserved or kind-specific; `params.x` = precision (a
// limb: soften).
fn joint_count(mode: vec4<u32>) -> u32 {
    return mode.x;
}
fn iterations(mode: vec4<u32>) -> u32 {
    return mode.y;
}
fn pole_mode(mode: vec4<u32>) -> u32 {
    return mode.x;
}
fn bend_mode(mode: vec4<u32>) -> u32 {
    return mode.y;
}
// Whether any bit of `bits` is set in the option word.
fn has_option(mode: vec4<u32>, bits: u32) -> bool {
    return (mode.z & bits) != 0u;
}
// Whether the option word has no bit outside `known` (a chain kind's OPT_* set).
fn only_options(mode: vec4<u32>, known: u32) -> bool {
    return (mode.z & ~known) == 0u;
}
fn precision_of(params: vec4<f32>) -> f32 {
    return params.x;
}

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

// One joint's limit (src/records/limits.rs).
struct JointLimit {
    rest: vec4<f32>,        // rest local rotation
    axis: vec4<f32>,        // xyz = hinge axis / cone's first axis (joint frame)
    range: vec4<f32>,       // hinge min, max | cone half-angles; twist min, max
}

struct ChainLimits {
    parent_ms: vec4<f32>,   // the chain parent's model rotation
    kinds: vec4<u32>,       // 4 LIMIT_* bits per joint: joint i in kinds[i / 8] >> 4 (i % 8)
    joints: array<JointLimit, 16>,
}

// A chain with limits: the layout of both ConstrainedFabrikChain and CcdChain
// (src/records/limits.rs); for CCD, chain.params.y = most one visit turns a joint (0: no cap).
struct LimitedChain {
    chain: FabrikChain,
    limits: ChainLimits,
}

// What a damped-least-squares chain asks for beyond a position (src/records/dls.rs).
struct DlsGoal {
    orientation_ms: vec4<f32>, // the last joint's target model rotation
    settings: vec4<f32>,       // x = orientation weight (length per radian; 0 = none)
    starts: vec4<u32>,         // x = starting poses, 1..=MAX_DLS_STARTS
    stiffness: array<vec4<f32>, 4>, // joint k's in stiffness[k / 4][k % 4]
}

// A limited chain solved by damped least squares (src/records/dls.rs).
struct DlsChain {
    chain: FabrikChain,
    limits: ChainLimits,
    goal: DlsGoal,
}

// A look-at record (src/records/look_at.rs).
struct LookAtChain {
    joints_ms: array<vec4<f32>, 4>,
    rotations_ms: array<vec4<f32>, 4>,
    forward: array<vec4<f32>, 4>,   // xyz = local forward axis, w = joint weight
    up: array<vec4<f32>, 4>,        // xyz = local up axis
    rest: array<vec4<f32>, 4>,      // rest local rotations (limited joints)
    limits: array<vec4<f32>, 4>,    // yaw min, max, pitch min, max
    parent_ms: vec4<f32>,           // model rotation of the outside parent
    target_ms: vec4<f32>,           // w = weight
    up_target_ms: vec4<f32>,
    mode: vec4<u32>,                // joint count, parents (8 bits each), option bits, limited joints
}

// A multi-effector FABRIK tree (src/records/multi_fabrik.rs).
struct MultiFabrikChain {
    joints_ms: array<vec4<f32>, 32>,
    rotations_ms: array<vec4<f32>, 32>,
    targets_ms: array<vec4<f32>, 4>,  // w = effector weight
    parents: array<vec4<u32>, 2>,     // 8 bits per joint
    effectors: vec4<u32>,             // the joint of each effector
    params: vec4<f32>,                // precision, weight, 0, 0
    mode: vec4<u32>,                  // joint count, iterations, option bits (0), effector count
}

// The limits of a joint tree's joints (src/records/limits.rs, TreeLimits): a ChainLimits of
// 32 joints, every word of `kinds` in use.
struct TreeLimits {
    parent_ms: vec4<f32>,
    kinds: vec4<u32>,
    joints: array<JointLimit, 32>,
}

// What a damped-least-squares tree asks for beyond its effectors' positions
// (src/records/dls.rs, DlsTreeGoal).
struct DlsTreeGoal {
    orientations_ms: array<vec4<f32>, 4>, // per effector, its target model rotation
    orientation_weights: vec4<f32>,       // per effector (length per radian; 0 = none)
    root_translation: vec4<f32>,          // xyz = the root's box half-extents, w = its stiffness
    starts: vec4<u32>,                    // x = starting poses, 1..=MAX_DLS_STARTS
    stiffness: array<vec4<f32>, 8>,       // joint k's in stiffness[k / 4][k % 4]
}

// A limited joint tree solved by damped least squares (src/records/dls.rs, DlsTree).
struct DlsTree {
    tree: MultiFabrikChain,
    limits: TreeLimits,
    goal: DlsTreeGoal,
}

struct MultiFabrikSolved {
    positions_ms: array<vec4<f32>, 32>,
    rotations_ms: array<vec4<f32>, 32>,
    corrections: array<vec4<f32>, 32>,
    status: vec4<u32>,
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

// The solved look-at record has the same layout as a three-bone one (four joints).
alias LookAtSolved = ThreeBoneSolved;

struct FabrikSolved {
    positions_ms: array<vec4<f32>, 16>,
    rotations_ms: array<vec4<f32>, 16>,
    corrections: array<vec4<f32>, 16>,
    status: vec4<u32>,
}

// One joint of a model-space pose. Keep in sync with JointPose in src/crowd/records.rs.
struct JointPose {
    position_ms: vec4<f32>,
    rotation_ms: vec4<f32>,
}

// Per-dispatch parameters. Keep in sync with DispatchParams in src/gpu/buffers.rs.
struct DispatchParams {
    count: u32,     // records in this segment
    groups_x: u32,  // workgroups along x of the 2-D dispatch
    joints: u32,    // joints per character (palette); 0 for the chain kernels
    reserved: u32,  // 0
}
