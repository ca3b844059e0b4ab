// Vector and quaternion helpers: the WGSL twin of src/cpu/math.rs (read them side by side).
// Quaternions are vec4<f32>(x, y, z, w).

#import constants

const Q_IDENTITY: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

// True when no lane is NaN or ±inf (exponent bits not all ones). Bit test, because WGSL
// compilers may assume floats are finite and fold `x != x` away.
fn finite4(a: vec4<f32>) -> bool {
    let e = bitcast<vec4<u32>>(a) & vec4<u32>(0x7f800000u);
    return all(e != vec4<u32>(0x7f800000u));
}

// Fallbacks never pass NaN or inf on (src/cpu/math.rs).
fn finite_point(p: vec4<f32>) -> vec4<f32> {
    if (finite4(p)) {
        return vec4<f32>(p.xyz, 1.0);
    }
    return vec4<f32>(0.0, 0.0, 0.0, 1.0);
}

fn finite_rotation(q: vec4<f32>) -> vec4<f32> {
    if (finite4(q)) {
        return q;
    }
    return Q_IDENTITY;
}

// x, or 0 when it is subnormal (cpu::math::flush_subnormal; 1.17549435e-38 = f32::MIN_POSITIVE).
fn flush_subnormal(x: f32) -> f32 {
    return select(x, 0.0, abs(x) < 1.17549435e-38);
}

// flush_subnormal per component.
fn flush_subnormal4(v: vec4<f32>) -> vec4<f32> {
    return select(v, vec4<f32>(0.0), abs(v) < vec4<f32>(1.17549435e-38));
}

fn is_unit_quat(q: vec4<f32>) -> bool {
    return abs(dot(q, q) - 1.0) <= UNIT_QUAT_TOLERANCE;
}

// x, y, z within ±MAX_COORDINATE (cpu::math::in_range; w not looked at).
fn in_range(a: vec4<f32>) -> bool {
    return all(abs(a.xyz) <= vec3<f32>(MAX_COORDINATE));
}

fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

fn quat_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

// glam's Quat * Vec3.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let b = q.xyz;
    return v * (q.w * q.w - dot(b, b)) + b * (dot(v, b) * 2.0) + cross(b, v) * (q.w * 2.0);
}

fn reject(v: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    return v - n * dot(v, n);
}

fn normalize_or(v: vec3<f32>, fallback: vec3<f32>, min_len2: f32) -> vec3<f32> {
    let len2 = dot(v, v);
    if (len2 > min_len2) {
        return v * (1.0 / sqrt(len2));
    }
    return fallback;
}

fn any_orthonormal(v: vec3<f32>) -> vec3<f32> {
    let sign = select(-1.0, 1.0, v.z >= 0.0);
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    return vec3<f32>(b, sign + v.y * v.y * a, -v.y);
}

// Shortest arc between unit vectors; see rotation_arc in src/cpu/math.rs for the branches.
fn rotation_arc(v_from: vec3<f32>, v_to: vec3<f32>) -> vec4<f32> {
    let half = v_from + v_to;
    let half2 = dot(half, half);
    if (half2 < 1e-12) {
        return vec4<f32>(any_orthonormal(v_from), 0.0);
    }
    // from × to, with the small second factor (see cpu::math::rotation_arc).
    let small = select(half, v_to - v_from, half2 >= 2.0);
    return normalize(vec4<f32>(cross(v_from, small), 0.5 * half2));
}

// Rotation about unit `axis` by the angle with cosine and sine proportional to (c, s).
fn quat_from_axis_cos_sin(axis: vec3<f32>, c: f32, s: f32) -> vec4<f32> {
    let r2 = c * c + s * s;
    if (r2 <= 0.0) {
        return Q_IDENTITY;
    }
    // (axis·s, r + c) and (axis·(r − c), s) are proportional to the half-angle quaternion.
    let r = sqrt(r2);
    var q: vec4<f32>;
    if (c >= 0.0) {
        q = vec4<f32>(axis * s, r + c);
    } else {
        q = vec4<f32>(axis * (r - c), s);
    }
    return normalize(q);
}

// (sin x, cos x): range reduction to [-π/2, π/2] and Taylor polynomials (src/cpu/math.rs).
fn sin_cos(x: f32) -> vec2<f32> {
    let TAU = 6.2831855;
    let PI = 3.1415927;
    let HALF_PI = 1.5707964;
    let k = floor(x * (1.0 / TAU) + 0.5);
    // Cody–Waite: k·TAU_HI is exact, so a fused multiply-add rounds as the CPU's two steps.
    var r = (x - k * TAU_HI) - k * TAU_LO;
    var cos_sign = 1.0;
    if (r > HALF_PI) {
        r = PI - r;
        cos_sign = -1.0;
    } else if (r < -HALF_PI) {
        r = -PI - r;
        cos_sign = -1.0;
    }
    let r2 = r * r;
    let s = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0 + r2 * (-1.0 / 39916800.0 + r2 * (1.0 / 6227020800.0)))))));
    let c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 + r2 * (-1.0 / 3628800.0 + r2 * (1.0 / 479001600.0 + r2 * (-1.0 / 87178291200.0)))))));
    return vec2<f32>(s, c * cos_sign);
}

// atan2(y, x) in [-π, π] (cpu::math::atan2; (0, 0) gives 0): range reductions and a Taylor
// polynomial, so both twins agree to rounding (WGSL's atan2 promises no accuracy).
fn atan2_poly(y: f32, x: f32) -> f32 {
    let ax = abs(x);
    let ay = abs(y);
    let hi = max(ax, ay);
    if (hi == 0.0) {
        return 0.0;
    }
    let a = min(ax, ay) / hi;
    let big = a > 0.2679492;
    var r = a;
    if (big) {
        r = (a - 0.57735026) / (1.0 + a * 0.57735026);
    }
    let r2 = r * r;
    var t = r * (1.0 + r2 * (-1.0 / 3.0 + r2 * (1.0 / 5.0 + r2 * (-1.0 / 7.0 + r2 * (1.0 / 9.0 + r2 * (-1.0 / 11.0 + r2 * (1.0 / 13.0)))))));
    if (big) {
        t += PI / 6.0;
    }
    if (ay > ax) {
        t = PI / 2.0 - t;
    }
    if (x < 0.0) {
        t = PI - t;
    }
    return select(t, -t, y < 0.0);
}

fn quat_from_axis_angle(axis: vec3<f32>, angle: f32) -> vec4<f32> {
    let sc = sin_cos(angle * 0.5);
    return vec4<f32>(axis * sc.x, sc.y);
}

// The hemisphere rule of cpu::math::flip_hemisphere: the sign of w, or within HALF_TURN_W
// of a half turn the side of the fixed HEMISPHERE direction.
fn fix_w(q: vec4<f32>) -> vec4<f32> {
    let side = HEMISPHERE_X * q.x + HEMISPHERE_Y * q.y + HEMISPHERE_Z * q.z;
    let flip = select((side < 0.0), (q.w < 0.0), (abs(q.w) > HALF_TURN_W));
    return select(q, -q, flip);
}

fn nlerp_identity(q_in: vec4<f32>, weight: f32) -> vec4<f32> {
    let q = fix_w(q_in);
    if (weight >= 1.0) {
        return q;
    }
    let w = max(weight, 0.0);
    return normalize(mix(Q_IDENTITY, q, w));
}

fn nlerp(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    let b = select(b_in, -b_in, dot(a, b_in) < 0.0);
    return normalize(mix(a, b, t));
}
