// Joint limits (hinge, swing cone, twist) and the limited forward step shared by
// constrained FABRIK and CCD: the WGSL twin of src/cpu/limits.rs (read them side by side).

#import records
#import math

// One joint's limit, prepared (cpu::limits::Limit).
struct Limit {
    kind: u32,
    rest: vec4<f32>,
    // rest⁻¹ · parent_fk⁻¹ (Limit::frame; see forward_joint).
    frame: vec4<f32>,
    bone: vec3<f32>,
    u: vec3<f32>,
    range: vec4<f32>,
}

// A prepared limit, or the error code of the first check it fails (limit_error).
struct LimitSetup {
    limit: Limit,
    err: u32,
}

fn no_limit() -> Limit {
    return Limit(0u, Q_IDENTITY, Q_IDENTITY, vec3<f32>(0.0), vec3<f32>(0.0), vec4<f32>(0.0));
}

fn wrap_angle(a: f32) -> f32 {
    return a - (2.0 * PI) * round(a * (0.5 / PI));
}

fn clamp_angle(a: f32, lo: f32, hi: f32) -> f32 {
    if (a >= lo && a <= hi) {
        return a;
    }
    return select(hi, lo, abs(wrap_angle(a - lo)) <= abs(wrap_angle(a - hi)));
}

// Kind bits of joint k.
fn limit_kind(kinds: vec4<u32>, k: u32) -> u32 {
    return (kinds[k / 8u] >> (4u * (k % 8u))) & 0xfu;
}

// The kind bits of a chain of n joints are valid (records::kinds_valid).
fn kinds_valid(kinds: vec4<u32>, n: u32) -> bool {
    if ((kinds.z | kinds.w) != 0u) {
        return false;
    }
    for (var k = 0u; k < MAX_FABRIK_JOINTS; k++) {
        let kind = limit_kind(kinds, k);
        let known = (kind & ~(LIMIT_HINGE | LIMIT_CONE | LIMIT_TWIST)) == 0u;
        let hinge_alone = (kind & LIMIT_HINGE) == 0u || kind == LIMIT_HINGE;
        if (!known || !hinge_alone || (kind != 0u && k + 1u >= n)) {
            return false;
        }
    }
    return true;
}

fn in_angles(a: f32) -> bool {
    return a >= -PI && a <= PI;
}

// Checks and prepares one joint's limit (cpu::limits::setup_limits), `rot` its FK model
// rotation, `dir_fk` its FK bone direction and `parent_fk` its parent's FK model rotation
// (the chain's parent rotation for the first joint).
fn setup_limit(kind: u32, j: JointLimit, rot: vec4<f32>, dir_fk: vec3<f32>, parent_fk: vec4<f32>) -> LimitSetup {
    var s: LimitSetup;
    s.limit = no_limit();
    s.err = 0u;
    if (kind == 0u) {
        return s;
    }
    if (!finite4(j.rest) || !finite4(j.axis) || !finite4(j.range)) {
        s.err = ERR_NON_FINITE;
        return s;
    }
    if (!is_unit_quat(j.rest)) {
        s.err = ERR_NOT_NORMALIZED;
        return s;
    }
    let r = j.range;
    let ok = ((kind & LIMIT_HINGE) == 0u || (in_angles(r.x) && in_angles(r.y) && r.x <= r.y))
        && ((kind & LIMIT_CONE) == 0u || (r.x >= LIMIT_MIN_CONE && r.x <= PI && r.y >= LIMIT_MIN_CONE && r.y <= PI))
        && ((kind & LIMIT_TWIST) == 0u || (in_angles(r.z) && in_angles(r.w) && r.z <= r.w));
    if (!ok) {
        s.err = ERR_INVALID_PARAMETER;
        return s;
    }
    let bone = normalize(quat_rotate(quat_conj(rot), dir_fk));
    // The axis as a direction, whatever its length (scaled by its largest component first):
    // its part off the bone; a hinge and an elliptical cone need it (src/cpu/limits.rs).
    let a = j.axis.xyz;
    let m = max(max(abs(a.x), abs(a.y)), abs(a.z));
    var dir = vec3<f32>(0.0);
    if (m > 0.0) {
        dir = normalize_or(a / m, vec3<f32>(0.0), 0.0);
    }
    let perp = reject(dir, bone);
    let needs_axis = (kind & LIMIT_HINGE) != 0u || ((kind & LIMIT_CONE) != 0u && r.x != r.y);
    if (needs_axis && !(dot(perp, perp) > LIMIT_AXIS2)) {
        s.err = ERR_DEGENERATE_MID_AXIS;
        return s;
    }
    let frame = quat_mul(quat_conj(j.rest), quat_conj(parent_fk));
    s.limit = Limit(kind, j.rest, frame, bone, normalize_or(perp, any_orthonormal(bone), LIMIT_AXIS2), r);
    return s;
}

// The deviation `d` from rest moved into the limit (cpu::limits::limit_deviation). The CPU
// takes one branch per kind; lavapipe would run every branch under a mask, so the hinge's
// angle about `u` and the twist's about the bone share one atan2_poly, clamp and rebuild
// here, their inputs chosen per kind (the same operations on the same values as the CPU's
// branches: multiplying by 1.0 is exact).
fn limit_deviation(d_in: vec4<f32>, l: Limit) -> vec4<f32> {
    let d = select(d_in, -d_in, d_in.w < 0.0);
    let b = l.bone;
    let r = l.range;
    let hinge = l.kind == LIMIT_HINGE;
    // Hinge: the bone's direction in the plane across `u`.
    let s = quat_rotate(d, b);
    let hy = dot(s, cross(l.u, b));
    let hx = dot(s, b);
    // Otherwise: the swing-twist split about the bone.
    let along = dot(d.xyz, b);
    let t = vec4<f32>(b * along, d.w);
    var twist = Q_IDENTITY;
    if (dot(t, t) > 1e-12) {
        twist = normalize(t);
    }
    var swing = quat_mul(d, quat_conj(twist));
    // The one angle about one axis: the hinge's, or the twist's.
    var y = dot(twist.xyz, b);
    var x = twist.w;
    var scale = 2.0;
    var axis = b;
    var bounds = r.zw;
    if (hinge) {
        y = hy;
        x = hx;
        scale = 1.0;
        axis = l.u;
        bounds = r.xy;
    }
    var angle = 0.0;
    if (!hinge || hx * hx + hy * hy > 1e-12) {
        angle = scale * atan2_poly(y, x);
    }
    let clamped = clamp_angle(angle, bounds.x, bounds.y);
    let turned = quat_from_axis_angle(axis, clamped);
    if (hinge) {
        return turned;
    }
    if ((l.kind & LIMIT_TWIST) != 0u && clamped != angle) {
        twist = turned;
    }
    if ((l.kind & LIMIT_CONE) != 0u) {
        let v = swing.xyz;
        let sl = length(v);
        if (sl > 0.0) {
            let phi = 2.0 * atan2_poly(sl, abs(swing.w));
            let a = v * (1.0 / sl);
            let wu = phi * dot(a, l.u) / r.x;
            let wv = phi * dot(a, cross(b, l.u)) / r.y;
            let e = wu * wu + wv * wv;
            if (e > 1.0) {
                swing = quat_from_axis_angle(select(a, -a, swing.w < 0.0), phi / sqrt(e));
            }
        }
    }
    return quat_mul(swing, twist);
}

// A candidate model rotation moved into the limit (cpu::limits::limit_rotation).
fn limit_rotation(parent: vec4<f32>, candidate: vec4<f32>, l: Limit) -> vec4<f32> {
    let local_rest = quat_mul(quat_conj(l.rest), quat_mul(quat_conj(parent), candidate));
    return normalize(quat_mul(parent, quat_mul(l.rest, limit_deviation(local_rest, l))));
}

// One joint of a limited forward pass (cpu::limits::forward_joint): the joint's total and
// relative deltas. The deviation from rest is frame · rel · fk with the per-joint constant
// frame = rest⁻¹ · parent_fk⁻¹ (Limit::frame), so the limit needs neither the parent's
// current rotation nor the joint's.
struct Forward {
    delta: vec4<f32>,
    rel: vec4<f32>,
}

fn forward_joint(parent_delta: vec4<f32>, fk: vec4<f32>, dir_fk: vec3<f32>, want: vec3<f32>, l: Limit) -> Forward {
    let rel = rotation_arc(dir_fk, quat_rotate(quat_conj(parent_delta), want));
    if (l.kind == 0u) {
        return Forward(quat_mul(parent_delta, rel), rel);
    }
    let e = limit_relative(rel, fk, l);
    return Forward(normalize(quat_mul(parent_delta, e)), e);
}

// A joint's relative delta moved into its limit (l.kind != 0; cpu::limits::limit_relative).
fn limit_relative(rel: vec4<f32>, fk: vec4<f32>, l: Limit) -> vec4<f32> {
    let limited = limit_deviation(quat_mul(quat_mul(l.frame, rel), fk), l);
    return normalize(quat_mul(quat_mul(quat_conj(l.frame), limited), quat_conj(fk)));
}
