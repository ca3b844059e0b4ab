// Preview renderer (crates/crowd-ik-tools/src/preview.rs): a lit heightfield and characters drawn as one box
// per bone or as their own mesh, skinned through the palette written by crowd-ik's palette kernel.
// This is a render shader, not a solver kernel: it has no CPU twin. It doubles as the
// reference for the skinning snippet in docs/renderer.md. `preview::preview_wgsl()` puts
// crowd-ik's `crowd` module (`crowd_ik::gpu::shaders::CROWD_WGSL`) before it.

// Keep in sync with CameraUniform in crates/crowd-ik-tools/src/preview.rs (tests/layout.rs).
struct Camera {
    view_proj: mat4x4<f32>,
    light_dir: vec4<f32>,       // xyz toward the light; w = 0
    joints: vec4<u32>,          // x = joints per character; yzw = 0
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> palette: array<mat4x4<f32>>;   // characters × joints
@group(0) @binding(2) var<storage, read> characters: array<CharacterInput>;

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) color: vec4<f32>,   // a = 1 lit, 0 flat
}

fn shade(v: VertexOut) -> vec4<f32> {
    let lambert = max(dot(normalize(v.normal), camera.light_dir.xyz), 0.0);
    let lit = v.color.rgb * (0.3 + 0.7 * lambert);
    return vec4<f32>(mix(v.color.rgb, lit, v.color.a), 1.0);
}

@vertex
fn vs_terrain(@location(0) position: vec3<f32>, @location(1) normal: vec3<f32>) -> VertexOut {
    var out: VertexOut;
    out.clip = camera.view_proj * vec4<f32>(position, 1.0);
    out.normal = normal;
    let t = clamp(position.y * 0.5 + 0.5, 0.0, 1.0);
    out.color = vec4<f32>(mix(vec3<f32>(0.25, 0.45, 0.2), vec3<f32>(0.55, 0.5, 0.35), t), 1.0);
    return out;
}

fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let b = q.xyz;
    return v * (q.w * q.w - dot(b, b)) + b * (dot(v, b) * 2.0) + cross(b, v) * (q.w * 2.0);
}

// Linear blend skinning over four joints (a box: one joint, weight 1);
// world = root · Σ weight · palette · bind position.
@vertex
fn vs_character(
    @location(0) position: vec3<f32>,   // bind space
    @location(1) normal: vec3<f32>,
    @location(2) joint: vec4<u32>,
    @location(3) weight: vec4<f32>,
    @location(4) color: vec4<f32>,
    @builtin(instance_index) character: u32,
) -> VertexOut {
    let first = character * camera.joints.x;
    let skin = palette[first + joint.x] * weight.x + palette[first + joint.y] * weight.y
        + palette[first + joint.z] * weight.z + palette[first + joint.w] * weight.w;
    let model = (skin * vec4<f32>(position, 1.0)).xyz;
    let model_normal = (skin * vec4<f32>(normal, 0.0)).xyz;
    let root = characters[character];
    // A negative scale mirrors the character across its own x axis (CharacterInput).
    let m = vec3<f32>(select(1.0, -1.0, root.root_ws.w < 0.0), 1.0, 1.0);
    let world = quat_rotate(root.root_rotation, model * m * abs(root.root_ws.w)) + root.root_ws.xyz;
    var out: VertexOut;
    out.clip = camera.view_proj * vec4<f32>(world, 1.0);
    out.normal = quat_rotate(root.root_rotation, model_normal * m);
    out.color = color;
    return out;
}

@fragment
fn fs_main(v: VertexOut) -> @location(0) vec4<f32> {
    return shade(v);
}
