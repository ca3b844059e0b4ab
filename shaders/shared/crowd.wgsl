// Crowd foot-IK records, shared byte for byte with the CPU twin (src/crowd/records.rs):
// read by shaders/kernels/foot_ik.wgsl and src/cpu/foot_ik.rs alike, and by the preview renderer.
// tests/layout.rs checks every layout with naga.

#import records

struct CharacterInput {
    root_ws: vec4<f32>,       // translation; w = uniform scale (negative: mirrored across model x)
    root_rotation: vec4<f32>,
    foot_weights: vec4<f32>,
    foot_event_times: vec4<f32>, // per leg, when the weight took its value (s before the frame's end; outside [0, dt]: not known)
}

struct GroundHit {
    point_ws: vec4<f32>,      // w = 1 hit, 0 none
    normal_ws: vec4<f32>,
}

struct FootResult {
    pelvis: vec4<f32>,        // x = drop
    sole_before: vec4<f32>,
    sole_after: vec4<f32>,
    status: vec4<u32>,
}

struct SolverLeg {
    joints: vec4<u32>,        // hip, knee, ankle, toe
    mode: vec4<u32>,          // kind, option bits, knee pole rule (0 FK knee, 1 FK plane, 2 direction), PLANT_* | PIVOT_BALL
    knee_axis: vec4<f32>,     // w = foot height
    limits: vec4<f32>,        // cos θmin, cos θmax, cos/sin max foot angle
    foot_up: vec4<f32>,       // w = three-bone blend
    pole: vec4<f32>,          // model-space knee pole direction (rule 2)
    lock: vec4<f32>,          // foot placement: plant enter/exit speed, release distance/time
    sole: vec4<f32>,          // two-bone: the sole's reach behind the heel and past the ball; 0, 0
    toe: vec4<f32>,           // two-bone: the sole's direction past the ball, toe-local (zero: straight); 0
}

struct SolverRig {
    header: vec4<u32>,        // joint count, pelvis, leg count, ground mode
    grid: vec4<u32>,          // samples x, z; foot placement on (1); sole measured once (1)
    ground: vec4<f32>,        // origin x, origin z, cell
    params: vec4<f32>,        // max drop, max step up, max step down, swing lookahead
    springs: vec4<f32>,       // pelvis half-life, pelvis max speed, pelvis max rise, ground half-life
    blend: vec4<f32>,         // ground tolerance, weight blend time, max reach, root snap speed
    legs: array<SolverLeg, MAX_LEGS>,
}

// Foot placement state, one per character (src/crowd/placement.rs): keep in sync. A value
// needed only while a foot is locked shares its place with one needed only while it is not.
struct LegState {
    plane: vec4<f32>,         // ground spring: normal xyz (0: none), w = height at lift.zw
    plane_velocity: vec4<f32>,
    plane_goal: vec4<f32>,    // the ground springs' goals last frame (normal, height)
    lock: vec4<f32>,          // xyz: locked contact (world) / unlocked: offset at release; w = seconds since release
    fk: vec4<f32>,            // last FK contact xyz, w = blended weight
    heading: vec4<f32>,       // xy: locked heading (x, z) / unlocked: x = offset at release (radians); z = lift goal last frame, w = input weight last frame
    lift: vec4<f32>,          // lift above the target (spring), its velocity, where the height was taken (x, z)
    motion: vec4<f32>,        // xyz: the FK contact's velocity filtered over plant_speed_half_life (flag STATE_MOTION_SHIFT + leg: set); w = the top of the range of contact heights 0/1 weight flips crossed
    free: vec4<f32>,          // xyz: last frame's contact point of the unlocked solve (world); w = its horizontal speed (< 0: unknown)
    free_heading: vec4<f32>,  // xy: last frame's heading of the unlocked solve (world x, z; zero: unknown); z = the filtered speed a frame before last (< 0: unknown); w = the bottom of the range of contact heights 0/1 weight flips crossed (above motion.w: none)
}

struct CharacterState {
    pelvis: vec4<f32>,        // offset spring (world up), velocity, root snap held, velocity
    root: vec2<f32>,          // root height last frame, pelvis goal last frame
    flags: u32,               // STATE_VALID, locked (4 + leg), planted (8 + leg), released (12 + leg), heel pivot (16 + leg), motion set (20 + leg)
    root_velocity: f32,       // the root's continuous vertical velocity last frame
    legs: array<LegState, MAX_LEGS>,
}

// This frame, for foot placement (written with the rig; src/gpu/crowd.rs).
struct FrameInput {
    dt: f32,                  // seconds since the last frame (validated at the API)
    pelvis_decay: f32,        // exp(-y dt) of the pelvis spring, computed on the host
    ground_decay: f32,        // exp(-y dt) of the ground springs
    plant_decay: f32,         // 2^(-dt / half-life) of the plant-speed filter (0: none)
}
