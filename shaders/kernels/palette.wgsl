// Skinning palette: one invocation per (character, joint) writes
// palette = model-space joint matrix × inverse bind matrix (entry palette_main), or with the
// character's root transform in front, world space (entry palette_world: the joint matrices
// of renderers that skin in world space, e.g. Bevy), or those world-space matrices written
// straight into a renderer's own joint buffer at a per-character offset (entry
// palette_world_scatter: Bevy's skin buffer). The WGSL twin of src/cpu/palette.rs.

#import records
#import math
#import crowd

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> poses: array<JointPose>;              // characters × joints
@group(0) @binding(1) var<storage, read> inverse_bind: array<mat4x4<f32>>;     // joints
@group(0) @binding(2) var<storage, read_write> palette: array<mat4x4<f32>>;    // characters × joints
@group(0) @binding(3) var<uniform> dispatch: DispatchParams;                   // joints = per character
@group(0) @binding(4) var<storage, read> characters: array<CharacterInput>;    // palette_world*
@group(0) @binding(5) var<storage, read> scatter_offsets: array<u32>;          // per character: first matrix in scatter_dst (NONE: skip)
@group(0) @binding(6) var<storage, read_write> scatter_dst: array<mat4x4<f32>>; // the renderer's joint matrices

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

// Model matrix of joint pose p (non-finite: identity parts, as every fallback).
fn joint_matrix(p: JointPose) -> mat4x4<f32> {
    return rotation_translation(finite_rotation(p.rotation_ms), finite_point(p.position_ms).xyz);
}

// Model → world of a character (CharacterInput::world_matrix): translation, rotation, the
// uniform scale, and for a negative scale the mirror x → −x. Non-finite parts: identity.
fn root_matrix(ch: CharacterInput) -> mat4x4<f32> {
    let t = finite_point(vec4<f32>(ch.root_ws.xyz, 1.0)).xyz;
    var s = ch.root_ws.w;
    if (!finite4(vec4<f32>(s)) || s == 0.0) {
        s = 1.0;
    }
    let m = rotation_translation(finite_rotation(ch.root_rotation), t);
    let a = abs(s);
    return mat4x4<f32>(m[0] * (a * sign(s)), m[1] * a, m[2] * a, m[3]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette_world(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let joint = i % dispatch.joints;
    palette[i] = root_matrix(characters[i / dispatch.joints]) * (joint_matrix(poses[i]) * inverse_bind[joint]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette_world_scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let c = i / dispatch.joints;
    let joint = i % dispatch.joints;
    let first = scatter_offsets[c];
    if (first == NONE || first >= arrayLength(&scatter_dst) || joint >= arrayLength(&scatter_dst) - first) {
        return;
    }
    scatter_dst[first + joint] = root_matrix(characters[c]) * (joint_matrix(poses[i]) * inverse_bind[joint]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let joint = i % dispatch.joints;
    palette[i] = joint_matrix(poses[i]) * inverse_bind[joint];
}
