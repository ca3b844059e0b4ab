// The two-bone limb core: the WGSL twin of src/cpu/limb.rs (read them side by side).

// Thresholds (ZERO_BONE, ON_ROOT, ...) come from `constants` (src/constants.rs).

#import records
#import math

struct LimbSolution {
    e0: vec4<f32>,
    e1: vec4<f32>,
    scale: f32,
    reached: bool,
    info: u32,
    err: u32,       // 0 = solved, else a ChainError code (the CPU's Err)
}

fn limb_error(err: u32) -> LimbSolution {
    return LimbSolution(Q_IDENTITY, Q_IDENTITY, 1.0, false, 0u, err);
}

// One joint of a limb's pose checked, ranked as the CPU checks the whole pose (any
// non-finite value first, then any rotation off unit length, then any position out of
// range): `worst` is the error of the joints before, and the higher rank is returned.
fn pose_error(worst: u32, p: vec4<f32>, r: vec4<f32>) -> u32 {
    if (worst == ERR_NON_FINITE || !finite4(p) || !finite4(r)) {
        return ERR_NON_FINITE;
    }
    if (worst == ERR_NOT_NORMALIZED || !is_unit_quat(r)) {
        return ERR_NOT_NORMALIZED;
    }
    if (worst == ERR_OUT_OF_RANGE || !in_range(p)) {
        return ERR_OUT_OF_RANGE;
    }
    return 0u;
}

fn check_limb_settings(l: LimbSettings) -> u32 {
    if (!(finite4(l.target_ms) && finite4(l.pole_ms) && finite4(l.mid_axis) && finite4(l.params))) {
        return ERR_NON_FINITE;
    }
    if (!(in_range(l.target_ms) && in_range(l.pole_ms) && in_range(l.mid_axis))) {
        return ERR_OUT_OF_RANGE;
    }
    let soften = l.params.x;
    let stretch = l.params.y;
    let cos_min = l.params.z;
    let cos_max = l.params.w;
    let limits = has_option(l.mode, OPT_KNEE_LIMITS);
    let bad = pole_mode(l.mode) > POLE_SWIVEL
        || bend_mode(l.mode) > BEND_REVERSED
        || !only_options(l.mode, OPT_LIMB)
        || l.mode.w != 0u // reserved
        || !(soften >= 0.0 && soften <= 1.0)
        || stretch < 1.0
        || (limits && !(cos_min <= 1.0 && cos_max >= -1.0 && cos_max <= cos_min))
        || (pole_mode(l.mode) == POLE_SWIVEL && (!(dot(l.pole_ms.xyz, l.pole_ms.xyz) >= MIN_AXIS_LENGTH2) || !(abs(l.pole_ms.w) <= MAX_ANGLE)))
        || !(abs(l.mid_axis.w) <= MAX_ANGLE);
    if (bad) {
        return ERR_INVALID_PARAMETER;
    }
    if (dot(l.mid_axis.xyz, l.mid_axis.xyz) <= 1e-12) {
        return ERR_DEGENERATE_MID_AXIS;
    }
    return 0u;
}

// The stages as in src/cpu/limb.rs (same names): limb_setup -> limb_reach ->
// limb_mid_joint -> limb_start_joint; weighting is the chain's finishing stage (chain.wgsl).
fn solve_limb(p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, r1: vec4<f32>, target_pos: vec3<f32>, l: LimbSettings) -> LimbSolution {
    let s = limb_setup(p0, p1, p2, r1, target_pos, l);
    if (s.err != 0u) {
        return limb_error(s.err);
    }
    let reach = limb_reach(s, l);
    let e1 = limb_mid_joint(s, reach);
    let start = limb_start_joint(s, p0, e1, l);
    if (start.err != 0u) {
        return limb_error(start.err);
    }
    return LimbSolution(start.e0, e1, reach.scale, reach.reached, reach.info | start.info, 0u);
}

// What limb_setup finds: the bones, the target axis and the hinge.
struct LimbSetup {
    u: vec3<f32>,       // start -> mid bone
    v: vec3<f32>,       // mid -> end bone
    a: f32,             // |u|
    b: f32,             // |v|
    limb_len: f32,
    c: f32,             // |target - start|
    d: vec3<f32>,       // unit start -> target
    h: vec3<f32>,       // unit hinge axis, perpendicular to both bones
    flip: bool,         // the FK limb is bent backwards relative to h
    against: bool,      // ... by more than AGAINST_HINGE (sine): INFO_AGAINST_HINGE
    err: u32,           // 0, or the ChainError code (the CPU's Err)
}

fn setup_error(err: u32) -> LimbSetup {
    var s: LimbSetup;
    s.err = err;
    return s;
}

// Setup: bones, target axis, hinge.
fn limb_setup(p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, r1: vec4<f32>, target_pos: vec3<f32>, l: LimbSettings) -> LimbSetup {
    let u = p1 - p0;
    let v = p2 - p1;
    let a = length(u);
    let b = length(v);
    let limb_len = a + b;
    if (!(a > ZERO_BONE * limb_len && b > ZERO_BONE * limb_len && limb_len >= MIN_CHAIN_LENGTH)) {
        return setup_error(ERR_ZERO_LENGTH_BONE);
    }
    let st = target_pos - p0;
    let c = length(st);
    if (!(c > ON_ROOT * limb_len)) {
        return setup_error(ERR_TARGET_ON_ROOT);
    }
    let d = st * (1.0 / c);

    let u_dir = u * (1.0 / a);
    let h_hinge = reject(quat_rotate(r1, normalize(l.mid_axis.xyz)), u_dir);
    var h = h_hinge;
    let v_perp = reject(v, u_dir);
    let v_perp_len2 = dot(v_perp, v_perp);
    let bent = v_perp_len2 > 1e-12 * b * b;
    if (bent) {
        h = reject(h, v_perp * (1.0 / sqrt(v_perp_len2)));
    }
    var h_len = length(h);
    let nearly_straight = v_perp_len2 < AGAINST_HINGE * AGAINST_HINGE * b * b;
    if (bent && nearly_straight && !(h_len > MIN_HINGE) && length(h_hinge) > MIN_HINGE) {
        // The bones' plane holds the hinge, the mid joint bent by less than ~11.5°: bend
        // about the bones' own axis, the way the pose bends them (cpu::limb::limb_setup).
        h = cross(v_perp, u_dir) * (1.0 / sqrt(v_perp_len2));
        h_len = length(h);
    }
    if (!(h_len > MIN_HINGE)) {
        return setup_error(ERR_DEGENERATE_MID_AXIS);
    }
    h = h * (1.0 / h_len);
    let straight_eps = STRAIGHT * a * b;
    let against_eps = AGAINST_HINGE * a * b;
    let side = dot(cross(u, h), v);
    var flip = side < -straight_eps;
    var against = side < -against_eps;
    if (bend_mode(l.mode) == BEND_KEEP_FK) {
        if (flip) {
            h = -h;
            flip = false;
        }
        against = false;
    } else if (bend_mode(l.mode) == BEND_REVERSED) {
        h = -h;
        flip = dot(cross(u, h), v) < -straight_eps;
        against = side > against_eps;
    }
    return LimbSetup(u, v, a, b, limb_len, c, d, h, flip, against, 0u);
}

// What limb_reach decides: the stretch and the solved inner angle as 1 +- cos C.
struct LimbReach {
    scale: f32,
    one_plus: f32,
    one_minus: f32,
    reached: bool,
    info: u32,
}

// Reach: stretch, soften, knee limits.
fn limb_reach(s: LimbSetup, l: LimbSettings) -> LimbReach {
    let a = s.a;
    let b = s.b;
    let limb_len = s.limb_len;
    let c = s.c;
    let soften = l.params.x;
    let max_stretch = l.params.y;
    let cos_min = l.params.z;
    let cos_max = l.params.w;
    var info = select(0u, INFO_AGAINST_HINGE, s.against);
    var reached = true;
    var scale = 1.0;
    var stretched_to_target = false;
    if (max_stretch > 1.0 && c > limb_len) {
        info = info | INFO_STRETCHED;
        if (c <= limb_len * max_stretch) {
            scale = c / limb_len;
            stretched_to_target = true;
        } else {
            scale = max_stretch;
        }
    }
    let a_s = a * scale;
    let b_s = b * scale;
    let chain_s = a_s + b_s;
    // Reach `cs` and its slack `chain_s - cs` kept apart (see src/cpu/limb.rs).
    var cs = c;
    var slack = chain_s - c;
    if (stretched_to_target) {
        slack = 0.0;
    } else {
        let da = chain_s * soften;
        let ds = chain_s - da;
        if (c > da) {
            reached = false;
            if (c > chain_s) {
                info = info | INFO_OUT_OF_REACH;
            }
            if (ds > 0.0) {
                let alpha = (c - da) / ds;
                let op = alpha + 3.0;
                let op2 = op * op;
                let ratio = 81.0 / (op2 * op2);
                cs = da + ds - ds * ratio;
                slack = ds * ratio;
                info = info | INFO_SOFTENED;
            }
        }
    }
    let diff = abs(a_s - b_s);
    if (!(c > diff)) {
        reached = false;
        info = info | INFO_OUT_OF_REACH;
    }
    // 1 + cos C and 1 - cos C of the solved inner angle C.
    let two_ab = 2.0 * a_s * b_s;
    var one_plus = slack * (chain_s + cs) / two_ab;
    var one_minus = (cs - diff) * (cs + diff) / two_ab;
    if (has_option(l.mode, OPT_KNEE_LIMITS)) {
        let sum2 = a_s * a_s + b_s * b_s;
        let c_min = sqrt(max(sum2 - two_ab * cos_min, 0.0));
        let c_max = sqrt(max(sum2 - two_ab * cos_max, 0.0));
        // θmin = 0 / θmax = π bound nothing (cpu::limb::limb_reach).
        if (cos_min < 1.0 && cs < c_min) {
            one_plus = 1.0 + cos_min;
            one_minus = 1.0 - cos_min;
            reached = false;
            info = info | INFO_KNEE_LIMITED;
        } else if (cos_max > -1.0 && cs > c_max) {
            one_plus = 1.0 + cos_max;
            one_minus = 1.0 - cos_max;
            reached = false;
            info = info | INFO_KNEE_LIMITED;
        }
    }
    return LimbReach(scale, clamp(one_plus, 0.0, 2.0), clamp(one_minus, 0.0, 2.0), reached, info);
}

// Mid joint: E1 from (cos, sin) pairs, no acos, no cancellation.
fn limb_mid_joint(s: LimbSetup, r: LimbReach) -> vec4<f32> {
    let one_plus = r.one_plus;
    let one_minus = r.one_minus;
    let cos_new = 0.5 * (one_plus - one_minus);
    let sin_new = sqrt(one_plus * one_minus);
    let ab = s.a * s.b;
    let cos_old = clamp(-dot(s.u, s.v) / ab, -1.0, 1.0);
    var sin_old = min(length(cross(s.u, s.v)) / ab, 1.0);
    if (s.flip) {
        sin_old = -sin_old;
    }
    let cos_phi = cos_new * cos_old + sin_new * sin_old;
    let sin_phi = sin_new * cos_old - cos_new * sin_old;
    return quat_from_axis_cos_sin(s.h, cos_phi, sin_phi);
}

// What limb_start_joint returns: E0, info bits it set, or an error.
struct LimbStart {
    e0: vec4<f32>,
    info: u32,
    err: u32,
}

// Start joint: aim, then the bend plane, then twist.
fn limb_start_joint(s: LimbSetup, p0: vec3<f32>, e1: vec4<f32>, l: LimbSettings) -> LimbStart {
    let d = s.d;
    let e = s.u + quat_rotate(e1, s.v);
    let e_dir = normalize_or(e, d, 1e-12 * s.limb_len * s.limb_len);
    let aim = rotation_arc(e_dir, d);
    let k_now = cross(quat_rotate(aim, s.h), d);
    let pole = l.pole_ms.xyz;
    var info = 0u;
    var plane = Q_IDENTITY;
    if (pole_mode(l.mode) == POLE_POSITION || pole_mode(l.mode) == POLE_DIRECTION) {
        var dir = pole;
        if (pole_mode(l.mode) == POLE_POSITION) {
            dir = pole - p0;
        }
        let k = reject(dir, d);
        if (!(dot(k, k) > POLE_ON_AXIS2 * dot(dir, dir))) {
            return LimbStart(Q_IDENTITY, 0u, ERR_POLE_ON_AXIS);
        }
        plane = quat_from_axis_cos_sin(d, dot(k_now, k), dot(d, cross(k_now, k)));
    } else if (pole_mode(l.mode) == POLE_SWIVEL) {
        let north = normalize(pole);
        var n0 = reject(north, d);
        if (!(dot(n0, n0) > POLE_ON_AXIS2)) {
            n0 = reject(any_orthonormal(north), d);
            info = INFO_SWIVEL_FALLBACK;
        }
        let k0 = cross(normalize(n0), d);
        let sc = sin_cos(l.pole_ms.w);
        let k = k0 * sc.y + cross(d, k0) * sc.x;
        plane = quat_from_axis_cos_sin(d, dot(k_now, k), dot(d, cross(k_now, k)));
    }
    let twist = l.mid_axis.w;
    var start = quat_mul(plane, aim);
    if (twist != 0.0) {
        start = quat_mul(quat_from_axis_angle(d, twist), start);
    }
    return LimbStart(start, info, 0u);
}

// Result of the pseudo three-bone core (see src/cpu/limb.rs).
struct ThreeBoneSolution {
    e0: vec4<f32>,
    e1: vec4<f32>,
    e2: vec4<f32>,
    scale: f32,
    reached: bool,
    info: u32,
    err: u32,
}

fn solve_three_bone_core(p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, p3: vec3<f32>, r1: vec4<f32>, r2: vec4<f32>, target_pos: vec3<f32>, ratio: f32, copy_mid: bool, l: LimbSettings) -> ThreeBoneSolution {
    var out = ThreeBoneSolution(Q_IDENTITY, Q_IDENTITY, Q_IDENTITY, 1.0, false, 0u, 0u);
    let offset = p3 - p2;
    let limb_len = length(p1 - p0) + length(p2 - p1) + length(offset);
    if (!(length(offset) > ZERO_BONE * limb_len)) {
        out.err = ERR_ZERO_LENGTH_BONE;
        return out;
    }
    let local2 = quat_mul(quat_conj(r1), r2); // (1)
    var sol = solve_limb(p0, p1, p2, r1, target_pos - offset, l); // (2)-(4)
    if (sol.err != 0u) {
        out.err = sol.err;
        return out;
    }
    var d2 = Q_IDENTITY;
    if (ratio < 1.0) {
        let r1_new = quat_mul(quat_mul(sol.e0, sol.e1), r1);
        var follow = quat_mul(r1_new, local2); // (5)
        if (copy_mid) {
            follow = r1_new;
        }
        let r2_new = nlerp(follow, r2, ratio); // (6)
        d2 = quat_mul(r2_new, quat_conj(r2));
        sol = solve_limb(p0, p1, p2, r1, target_pos - quat_rotate(d2, offset), l); // (7)
        if (sol.err != 0u) {
            out.err = sol.err;
            return out;
        }
    }
    let d1 = quat_mul(sol.e0, sol.e1);
    out.e0 = sol.e0;
    out.e1 = sol.e1;
    out.e2 = quat_mul(quat_conj(d1), d2);
    out.scale = sol.scale;
    out.reached = sol.reached;
    out.info = sol.info;
    return out;
}
