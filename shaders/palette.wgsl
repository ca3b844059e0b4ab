// Skinning palette: one invocation per (character, joint) writes
// palette = model-space joint matrix × inverse bind matrix. The WGSL twin of src/cpu/palette.rs.

#import records
#import math

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> poses: array<JointPose>;              // characters × joints
@group(0) @binding(1) var<storage, read> inverse_bind: array<mat4x4<f32>>;     // joints
@group(0) @binding(2) var<storage, read_write> palette: array<mat4x4<f32>>;    // characters × joints
@group(0) @binding(3) var<uniform> dispatch: DispatchParams;                   // joints = per character

// Rotation and translation as a column-major matrix (glam's Mat4::from_rotation_translation).
fn rotation_translation(q: vec4<f32>, t: vec3<f32>) -> mat4x4<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat4x4<f32>(
        vec4<f32>(1.0 - (yy + zz), xy + wz, xz - wy, 0.0),
        vec4<f32>(xy - wz, 1.0 - (xx + zz), yz + wx, 0.0),
        vec4<f32>(xz + wy, yz - wx, 1.0 - (xx + yy), 0.0),
        vec4<f32>(t, 1.0),
    );
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let joint = i % dispatch.joints;
    let p = poses[i];
    palette[i] = rotation_translation(finite_rotation(p.rotation_ms), finite_point(p.position_ms).xyz) * inverse_bind[joint];
}
