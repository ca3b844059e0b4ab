// Aim constructions shared by the look-at kernel: the WGSL twin of the helpers at the end of
// src/cpu/aim.rs (Axes, target_direction, aim_in_axes, roll_toward; read them side by side).

#import math

// A joint's aim axes in its local frame: f = forward, u = up, s = f × u (cpu::aim::Axes).
struct Axes {
    f: vec3<f32>,
    u: vec3<f32>,
    s: vec3<f32>,
    ok: bool,
}

fn axes_new(forward: vec3<f32>, up: vec3<f32>) -> Axes {
    var a: Axes;
    let f2 = dot(forward, forward);
    let u2 = dot(up, up);
    if (!(f2 > 1e-12 && u2 > 1e-12)) {
        a.ok = false;
        return a;
    }
    let f = forward / sqrt(f2);
    let u = up / sqrt(u2);
    let c = dot(f, u);
    if (abs(c) > 1e-3) {
        a.ok = false;
        return a;
    }
    a.f = f;
    a.u = normalize(u - f * c);
    a.s = cross(f, a.u);
    a.ok = true;
    return a;
}

fn axes_coords(a: Axes, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(v, a.f), dot(v, a.u), dot(v, a.s));
}

fn axes_vector(a: Axes, p: vec3<f32>) -> vec3<f32> {
    return a.f * p.x + a.u * p.y + a.s * p.z;
}

fn axes_rotation(a: Axes, q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(axes_vector(a, q.xyz), q.w);
}

// target − joint, w = 1; w = 0 when the target is on the joint or closer than 1e-12
// (cpu::aim::target_direction).
fn target_direction(joint: vec3<f32>, target_pos: vec3<f32>) -> vec4<f32> {
    let d = target_pos - joint;
    let ok = length(d) > 1e-6 * max(length(target_pos) + length(joint), 1e-30) && dot(d, d) >= MIN_AXIS_LENGTH2;
    return vec4<f32>(d, select(0.0, 1.0, ok));
}

fn aim_in_axes(p: vec3<f32>, shortest_arc: bool) -> vec4<f32> {
    let p_len = length(p);
    if (shortest_arc) {
        return rotation_arc(vec3<f32>(1.0, 0.0, 0.0), p / p_len);
    }
    let xy = sqrt(p.x * p.x + p.y * p.y);
    var cy = 1.0;
    var sy = 0.0;
    if (xy > 1e-7 * p_len) {
        cy = p.x / xy;
        sy = p.y / xy;
    }
    let yaw = quat_from_axis_cos_sin(vec3<f32>(0.0, 0.0, 1.0), cy, sy);
    let pitch = quat_from_axis_cos_sin(vec3<f32>(0.0, 1.0, 0.0), xy / p_len, -p.z / p_len);
    return quat_mul(yaw, pitch);
}

// `aim` followed by the roll that points the up axis toward up_dir; ok = false when
// up_dir lies on the aimed axis or is shorter than 1e-12 (cpu::aim::roll_toward).
struct Roll {
    q: vec4<f32>,
    ok: bool,
}

fn roll_toward(a: Axes, rotation_ms: vec4<f32>, aim: vec4<f32>, up_dir: vec3<f32>) -> Roll {
    let q = axes_coords(a, quat_rotate(quat_conj(quat_mul(rotation_ms, aim)), up_dir));
    let yz = sqrt(q.y * q.y + q.z * q.z);
    if (!(yz > 1e-3 * length(q) && dot(up_dir, up_dir) >= MIN_AXIS_LENGTH2)) {
        return Roll(aim, false);
    }
    return Roll(quat_mul(aim, quat_from_axis_cos_sin(a.f, q.y / yz, q.z / yz)), true);
}
