// What every damped-least-squares kernel reads of a joint (the WGSL twin of
// src/cpu/dls/joint.rs): how it turns, its coordinates of a deviation, moved into its limits,
// spread over them, the local rotation they give, their world axes, and what a step does at
// their bounds. Shared by shaders/kernels/dls.wgsl (chains) and dls_tree.wgsl (trees).

#import records
#import math

// How a joint turns (cpu::dls Dof): freely (world rotation vectors on its local rotation),
// about its hinge (one angle), or as a ball (swing on the limit's axes, then twist).
const DOF_FREE: u32 = 0u;
const DOF_HINGE: u32 = 1u;
const DOF_BALL: u32 = 2u;

// What the solve reads of each joint (cpu::dls Joint).
struct Joint {
    dof: u32,
    kind: u32,
    rest: vec4<f32>,
    b: vec3<f32>,
    u: vec3<f32>,
    v: vec3<f32>,
    range: vec4<f32>,
    bone: vec3<f32>,
}

// A joint's coordinates of the deviation `d_in` from its rest (cpu::dls coordinates).
fn coordinates(j: Joint, d_in: vec4<f32>) -> vec3<f32> {
    let d = select(d_in, -d_in, d_in.w < 0.0);
    let b = j.b;
    let u = j.u;
    if (j.dof == DOF_HINGE) {
        let s = quat_rotate(d, b);
        let y = dot(s, cross(u, b));
        let x = dot(s, b);
        return vec3<f32>(select(0.0, atan2_poly(y, x), x * x + y * y > 1e-12), 0.0, 0.0);
    }
    if (j.dof == DOF_BALL) {
        let along = dot(d.xyz, b);
        let t = vec4<f32>(b * along, d.w);
        var twist = Q_IDENTITY;
        if (dot(t, t) > 1e-12) {
            twist = normalize(t);
        }
        let tau = 2.0 * atan2_poly(dot(twist.xyz, b), twist.w);
        let swing = quat_mul(d, quat_conj(twist));
        let sv = swing.xyz;
        let sl = length(sv);
        var w = vec3<f32>(0.0);
        if (sl > 0.0) {
            w = sv * (2.0 * atan2_poly(sl, swing.w) / sl);
        }
        return vec3<f32>(dot(w, u), dot(w, j.v), tau);
    }
    return vec3<f32>(0.0);
}

// Coordinates moved into the joint's limits (cpu::dls project).
fn project(j: Joint, q: vec3<f32>) -> vec3<f32> {
    let r = j.range;
    if (j.dof == DOF_HINGE) {
        return vec3<f32>(clamp(q.x, r.x, r.y), 0.0, 0.0);
    }
    if (j.dof == DOF_BALL) {
        var tau = q.z - (2.0 * PI) * round(q.z * (0.5 / PI));
        if ((j.kind & LIMIT_TWIST) != 0u) {
            tau = clamp(q.z, r.z, r.w);
        }
        var wu = q.x;
        var wv = q.y;
        var e = (wu * wu + wv * wv) / (PI * PI);
        if ((j.kind & LIMIT_CONE) != 0u) {
            e = (wu / r.x) * (wu / r.x) + (wv / r.y) * (wv / r.y);
        }
        if (e > 1.0) {
            let k = 1.0 / sqrt(e);
            wu = wu * k;
            wv = wv * k;
        }
        return vec3<f32>(wu, wv, tau);
    }
    return q;
}

// Start `k`'s coordinates of a joint `i` (cpu::dls spread).
fn spread(j: Joint, k: f32, i: f32) -> vec3<f32> {
    let r = j.range;
    let f = fract(k * 0.618034 + i * 0.381966);
    let g = fract(k * 0.414214 + i * 0.732051);
    if (j.dof == DOF_HINGE) {
        return vec3<f32>(r.x + (r.y - r.x) * f, 0.0, 0.0);
    }
    if (j.dof == DOF_BALL) {
        var a = 1.0;
        var b = 1.0;
        if ((j.kind & LIMIT_CONE) != 0u) {
            a = r.x;
            b = r.y;
        }
        var tau = 0.0;
        if ((j.kind & LIMIT_TWIST) != 0u) {
            tau = r.z + (r.w - r.z) * g;
        }
        return vec3<f32>(a * (2.0 * f - 1.0) * 0.7, b * (2.0 * g - 1.0) * 0.7, tau);
    }
    return vec3<f32>(0.0);
}

// The local rotation a joint's coordinates `q` give (a free joint's is `free`; cpu::dls
// local_of).
fn local_of(j: Joint, q: vec3<f32>, free: vec4<f32>) -> vec4<f32> {
    if (j.dof == DOF_HINGE) {
        return quat_mul(j.rest, quat_from_axis_angle(j.u, q.x));
    }
    if (j.dof == DOF_BALL) {
        let w = j.u * q.x + j.v * q.y;
        let angle = length(w);
        var swing = Q_IDENTITY;
        if (angle > 0.0) {
            swing = quat_from_axis_angle(w / angle, angle);
        }
        return quat_mul(quat_mul(j.rest, swing), quat_from_axis_angle(j.b, q.z));
    }
    return free;
}

// The world axes a joint's coordinates turn it about (cpu::dls axes): `parent` its parent's
// model rotation, `rot` and `q` its own and its coordinates.
struct Axes {
    a: array<vec3<f32>, 3>,
}

fn joint_axes(j: Joint, parent: vec4<f32>, rot: vec4<f32>, q: vec3<f32>) -> Axes {
    if (j.dof == DOF_HINGE) {
        return Axes(array<vec3<f32>, 3>(quat_rotate(parent, quat_rotate(j.rest, j.u)), vec3<f32>(0.0), vec3<f32>(0.0)));
    }
    if (j.dof == DOF_BALL) {
        let frame = quat_mul(parent, j.rest);
        let w = j.u * q.x + j.v * q.y;
        let t2 = dot(w, w);
        let t = sqrt(t2);
        var a = 0.5 - t2 * (1.0 / 24.0) + t2 * t2 * (1.0 / 720.0);
        var b = 1.0 / 6.0 - t2 * (1.0 / 120.0) + t2 * t2 * (1.0 / 5040.0);
        if (t > 0.1) {
            let half_sin = sin_cos(0.5 * t).x;
            let sin = sin_cos(t).x;
            let h = half_sin / (0.5 * t);
            a = 0.5 * h * h;
            b = (t - sin) / (t2 * t);
        }
        let ju = j.u + cross(w, j.u) * a + cross(w, cross(w, j.u)) * b;
        let jv = j.v + cross(w, j.v) * a + cross(w, cross(w, j.v)) * b;
        return Axes(array<vec3<f32>, 3>(quat_rotate(frame, ju), quat_rotate(frame, jv), quat_rotate(rot, j.b)));
    }
    return Axes(array<vec3<f32>, 3>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0)));
}

// The stiffness checks of four joints, kept in `checks`: x = every one finite so far, y =
// every one within [0, 1] so far (cpu::dls check_goal, cpu::dls_tree check_tree_goal).
fn check_stiffness(s: vec4<f32>, checks: ptr<function, vec2<bool>>) {
    (*checks).x = (*checks).x && finite4(s);
    (*checks).y = (*checks).y && all(s >= vec4<f32>(0.0)) && all(s <= vec4<f32>(1.0));
}

// u vᵀ.
fn outer(u: vec3<f32>, v: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(u * v.x, u * v.y, u * v.z);
}

// x I.
fn diagonal(x: f32) -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(x, 0.0, 0.0), vec3<f32>(0.0, x, 0.0), vec3<f32>(0.0, 0.0, x));
}

// [v]×: [v]× a = v × a.
fn cross_matrix(v: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(0.0, v.z, -v.y), vec3<f32>(-v.z, 0.0, v.x), vec3<f32>(v.y, -v.x, 0.0));
}

// glam's normalize_or_zero: v / |v|, or zero where that is not finite.
fn normalize_or_zero(v: vec3<f32>) -> vec3<f32> {
    let rcp = 1.0 / length(v);
    let n = v * rcp;
    return select(vec3<f32>(0.0), n, rcp > 0.0 && rcp <= 3.4028235e38);
}

// What a step does at a joint's bounds (cpu::dls hold_joint): the coordinates held (bit
// k = coordinate k), a swing's direction along its cone's rim (set when `rim_set`), and
// whether any was held or moved along the rim.
struct Hold {
    held: u32,
    rim: vec3<f32>,
    rim_set: bool,
    moved: bool,
}

// The coordinates `q` of joint `j` that the step `d` would push out of their limits (a
// hinge angle or twist at a bound, a swing on its cone's rim moving outward): held, or
// moved along the rim (cpu::dls hold_joint).
fn hold_joint(j: Joint, q: vec3<f32>, d: vec3<f32>) -> Hold {
    let AT = 1e-5;
    let r = j.range;
    var h = Hold(0u, vec3<f32>(0.0), false, false);
    if (j.dof == DOF_HINGE) {
        if ((q.x <= r.x + AT && d.x < 0.0) || (q.x >= r.y - AT && d.x > 0.0)) {
            h.held |= 1u;
            h.moved = true;
        }
    } else if (j.dof == DOF_BALL) {
        if ((j.kind & LIMIT_TWIST) != 0u && ((q.z <= r.z + AT && d.z < 0.0) || (q.z >= r.w - AT && d.z > 0.0))) {
            h.held |= 4u;
            h.moved = true;
        }
        if ((j.kind & LIMIT_CONE) != 0u) {
            let e = (q.x / r.x) * (q.x / r.x) + (q.y / r.y) * (q.y / r.y);
            let normal = vec3<f32>(q.x / (r.x * r.x), q.y / (r.y * r.y), 0.0);
            if (e >= 1.0 - AT && normal.x * d.x + normal.y * d.y > 0.0) {
                h.rim = normalize_or_zero(vec3<f32>(-normal.y, normal.x, 0.0));
                h.rim_set = true;
                h.moved = true;
            }
        }
    }
    return h;
}

