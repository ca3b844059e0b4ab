// Crowd foot-IK records, shared byte for byte with the CPU twin (src/crowd/records.rs):
// read by shaders/foot_ik.wgsl and src/cpu/foot_ik.rs alike, and by the preview renderer.
// tests/layout.rs checks every layout with naga.

#import records

struct CharacterInput {
    root_ws: vec4<f32>,       // translation; w = uniform scale (negative: mirrored across model x)
    root_rotation: vec4<f32>,
    foot_weights: vec4<f32>,
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
    mode: vec4<u32>,          // kind, option bits, knee pole rule (0 FK knee, 1 FK plane, 2 direction)
    knee_axis: vec4<f32>,     // w = foot height
    limits: vec4<f32>,        // cos θmin, cos θmax, cos/sin max foot angle
    foot_up: vec4<f32>,       // w = three-bone blend
    pole: vec4<f32>,          // model-space knee pole direction (rule 2)
}

struct SolverRig {
    header: vec4<u32>,        // joint count, pelvis, leg count, ground mode
    grid: vec4<u32>,
    ground: vec4<f32>,        // origin x, origin z, cell
    params: vec4<f32>,        // max drop, max step up, max step down
    legs: array<SolverLeg, MAX_LEGS>,
}
