// GPU pose source: one invocation per character samples a looping motion clip at
// time + its offset and writes model-space joints. The WGSL twin of src/cpu/clip_sample.rs.

#import records
#import math

const WORKGROUP_SIZE: u32 = 64u;

// Keep in sync with ClipParams in src/gpu/pose_source.rs.
struct ClipParams {
    count: u32,         // characters
    groups_x: u32,
    joints: u32,
    frames: u32,
    time: f32,          // seconds
    frame_time: f32,
    reserved0: f32,     // 0
    reserved1: f32,     // 0
}

@group(0) @binding(0) var<storage, read> clip_local: array<JointPose>;   // frames × joints, local
@group(0) @binding(1) var<storage, read> parents: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<f32>;            // per character, seconds
@group(0) @binding(3) var<storage, read_write> poses: array<JointPose>;  // characters × joints, model
@group(0) @binding(4) var<uniform> params: ClipParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn clip_sample(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let c = (wg.y * params.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (c >= params.count) {
        return;
    }
    let joints = params.joints;
    let frames = params.frames;
    let time = params.time + offsets[c];
    var f = time / params.frame_time;
    f = f - floor(f / f32(frames)) * f32(frames);
    let i0 = min(u32(floor(f)), frames - 1u);
    let i1 = (i0 + 1u) % frames;
    let a = f - f32(i0);
    let base = c * joints;
    for (var j = 0u; j < joints; j++) {
        let p = clip_local[i0 * joints + j];
        let q = clip_local[i1 * joints + j];
        let t = mix(p.position_ms.xyz, q.position_ms.xyz, a);
        let r = nlerp(p.rotation_ms, q.rotation_ms, a);
        if (parents[j] == NONE) {
            poses[base + j] = JointPose(vec4<f32>(t, 1.0), r);
        } else {
            let parent = poses[base + parents[j]];
            poses[base + j] = JointPose(vec4<f32>(parent.position_ms.xyz + quat_rotate(parent.rotation_ms, t), 1.0),
                normalize(quat_mul(parent.rotation_ms, r)));
        }
    }
}
