// Crowd look-at kernel: a small tree of joints (spine, neck, head, eyes) per record turns
// toward one point, with yaw/pitch limits about each joint's rest frame and the up-vector
// constraint. The WGSL twin of src/cpu/look_at.rs (read them side by side).

#import records
#import chain
#import limits
#import aim

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<LookAtChain>;
@group(0) @binding(1) var<storage, read_write> solved: array<LookAtSolved>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// The record's joint count clamped to the record (cpu::look_at::look_at's n).
fn joints_of(c: LookAtChain) -> u32 {
    return min(joint_count(c.mode), MAX_LOOK_AT_JOINTS);
}

fn write_fk(i: u32, n: u32, err: u32) {
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            solved[i].positions_ms[k] = finite_point(chains[i].joints_ms[k]);
            solved[i].rotations_ms[k] = finite_rotation(chains[i].rotations_ms[k]);
            solved[i].corrections[k] = Q_IDENTITY;
        } else {
            solved[i].positions_ms[k] = vec4<f32>(0.0);
            solved[i].rotations_ms[k] = vec4<f32>(0.0);
            solved[i].corrections[k] = vec4<f32>(0.0);
        }
    }
    solved[i].status = vec4<u32>(0u, err, 0u, n);
}

fn parent_slot(c: LookAtChain, k: u32) -> u32 {
    return (c.mode.y >> (8u * k)) & 0xffu;
}

fn limited(c: LookAtChain, k: u32) -> bool {
    return ((c.mode.w >> k) & 1u) != 0u;
}

// The record's checks (cpu::look_at::check), in the same order; 0 when it passes.
fn check(c: LookAtChain, n: u32) -> u32 {
    if (n == 0u || joint_count(c.mode) > MAX_LOOK_AT_JOINTS) {
        return ERR_JOINT_COUNT;
    }
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n && (!finite4(c.joints_ms[k]) || !finite4(c.rotations_ms[k]))) {
            return ERR_NON_FINITE;
        }
    }
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n && !is_unit_quat(c.rotations_ms[k])) {
            return ERR_NOT_NORMALIZED;
        }
    }
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n && !in_range(c.joints_ms[k])) {
            return ERR_OUT_OF_RANGE;
        }
    }
    let up_target = has_option(c.mode, OPT_UP_TARGET);
    var finite = finite4(c.target_ms) && finite4(c.parent_ms) && (!up_target || finite4(c.up_target_ms));
    var unit = is_unit_quat(c.parent_ms);
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            finite = finite && finite4(c.forward[k]) && finite4(c.up[k]);
            if (limited(c, k)) {
                finite = finite && finite4(c.rest[k]) && finite4(c.limits[k]);
                unit = unit && is_unit_quat(c.rest[k]);
            }
        }
    }
    if (!finite) {
        return ERR_NON_FINITE;
    }
    if (!unit) {
        return ERR_NOT_NORMALIZED;
    }
    var axes_in_range = true;
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            axes_in_range = axes_in_range && in_range(c.forward[k]) && in_range(c.up[k]);
        }
    }
    if (!in_range(c.target_ms) || (up_target && !in_range(c.up_target_ms)) || !axes_in_range) {
        return ERR_OUT_OF_RANGE;
    }
    if (!only_options(c.mode, OPT_LOOK_AT) || (c.mode.w >> n) != 0u) {
        return ERR_INVALID_PARAMETER;
    }
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            let p = parent_slot(c, k);
            if (p != LOOK_AT_NO_PARENT && p >= k) {
                return ERR_INVALID_PARAMETER;
            }
            if (!axes_new(c.forward[k].xyz, c.up[k].xyz).ok) {
                return ERR_INVALID_PARAMETER;
            }
            // Subnormal bounds read as 0 on every adapter (cpu::math::flush_subnormal).
            let l = flush_subnormal4(c.limits[k]);
            let ordered = -PI <= l.x && l.x <= l.y && l.y <= PI && -0.5 * PI <= l.z && l.z <= l.w && l.w <= 0.5 * PI;
            if (limited(c, k) && !ordered) {
                return ERR_INVALID_PARAMETER;
            }
        }
    }
    return 0u;
}

// `d` with its yaw and pitch moved into the limits `l`; w = 1 when clamped
// (cpu::look_at::clamp_yaw_pitch).
fn clamp_yaw_pitch(d: vec3<f32>, l: vec4<f32>) -> vec4<f32> {
    let h = sqrt(d.x * d.x + d.z * d.z);
    let yaw = atan2_poly(-d.z, d.x);
    let pitch = atan2_poly(d.y, h);
    let yc = clamp_angle(yaw, l.x, l.y);
    let pc = min(max(pitch, l.z), l.w);
    if (yc == yaw && pc == pitch) {
        return vec4<f32>(d, 0.0);
    }
    let y = sin_cos(yc);
    let p = sin_cos(pc);
    return vec4<f32>(p.y * y.y, p.x, -p.y * y.x, 1.0);
}

fn solve(i: u32) -> u32 {
    var c = chains[i];
    let mirrored = has_option(c.mode, OPT_MIRRORED);
    // unroll
    for (var k = 0u; k < 4u; k++) {
        c.joints_ms[k] = mirror_point(c.joints_ms[k], mirrored);
        c.rotations_ms[k] = mirror_rotation(c.rotations_ms[k], mirrored);
    }
    c.parent_ms = mirror_rotation(c.parent_ms, mirrored);
    c.target_ms = mirror_point(c.target_ms, mirrored);
    c.up_target_ms = mirror_point(c.up_target_ms, mirrored);
    let n = joints_of(c);
    let err = check(c, n);
    if (err != 0u) {
        return err;
    }
    let weight = c.target_ms.w;
    if (!(flush_subnormal(weight) > 0.0)) {
        write_fk(i, n, 0u);
        return 0u;
    }
    let target_pos = c.target_ms.xyz;
    let up_target = has_option(c.mode, OPT_UP_TARGET);
    let shortest_arc = has_option(c.mode, OPT_SHORTEST_ARC);
    var pos: array<vec3<f32>, 4>;
    var rot: array<vec4<f32>, 4>;
    var delta: array<vec4<f32>, 4>;
    var corr: array<vec4<f32>, 4>;
    var flags = 0u;
    var full = false;
    var held = false;
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            let fk = c.rotations_ms[k];
            let p = parent_slot(c, k);
            var parent_delta = Q_IDENTITY;
            var parent_rot = c.parent_ms;
            var here = c.joints_ms[k].xyz;
            var r = fk;
            if (p != LOOK_AT_NO_PARENT) {
                parent_delta = delta[p];
                parent_rot = rot[p];
                here = pos[p] + quat_rotate(delta[p], c.joints_ms[k].xyz - c.joints_ms[p].xyz);
                r = normalize(quat_mul(delta[p], fk));
            }
            let to_target = target_direction(here, target_pos);
            if (to_target.w == 0.0) {
                return ERR_TARGET_ON_ROOT;
            }
            var dir = to_target.xyz;
            let a = axes_new(c.forward[k].xyz, c.up[k].xyz);
            var clamped = false;
            if (limited(c, k)) {
                let rest = quat_mul(parent_rot, c.rest[k]);
                let d = clamp_yaw_pitch(axes_coords(a, quat_rotate(quat_conj(rest), dir)), c.limits[k]);
                if (d.w != 0.0) {
                    dir = quat_rotate(rest, axes_vector(a, d.xyz));
                    clamped = true;
                    flags |= INFO_LIMITED;
                }
            }
            var aim = axes_rotation(a, aim_in_axes(axes_coords(a, quat_rotate(quat_conj(r), dir)), shortest_arc));
            if (up_target) {
                let rolled = roll_toward(a, r, aim, c.up_target_ms.xyz - here);
                if (!rolled.ok) {
                    return ERR_POLE_ON_AXIS;
                }
                aim = rolled.q;
            }
            let w = c.forward[k].w * weight;
            var correction = Q_IDENTITY;
            if (w > 0.0) {
                correction = nlerp_identity(aim, w);
            }
            if (w >= 1.0) {
                full = true;
                held = held || clamped;
            }
            rot[k] = normalize(quat_mul(r, correction));
            delta[k] = normalize(quat_mul(parent_delta, quat_mul(quat_mul(fk, correction), quat_conj(fk))));
            pos[k] = here;
            corr[k] = correction;
        }
    }
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < n) {
            solved[i].positions_ms[k] = mirror_point(vec4<f32>(pos[k], 1.0), mirrored);
            solved[i].rotations_ms[k] = mirror_rotation(rot[k], mirrored);
            solved[i].corrections[k] = corr[k];
        } else {
            solved[i].positions_ms[k] = vec4<f32>(0.0);
            solved[i].rotations_ms[k] = vec4<f32>(0.0);
            solved[i].corrections[k] = vec4<f32>(0.0);
        }
    }
    solved[i].status = vec4<u32>(select(0u, 1u, weight >= 1.0 && full && !held), 0u, flags, n);
    return 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn look_at(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let err = solve(i);
    if (err != 0u) {
        write_fk(i, joints_of(chains[i]), err);
    }
}
