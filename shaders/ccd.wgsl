// CCD kernel with per-visit caps and total joint limits: the WGSL twin of src/cpu/ccd.rs
// (fixed iterations). Built per joint count like shaders/fabrik.wgsl (see its header), its
// loops not unrolled (see shaders/constrained_fabrik.wgsl).

#import records
#import chain
#import limits
#import fabrik_chain

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<CcdChain>;
@group(0) @binding(1) var<storage, read_write> solved: array<FabrikSolved>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// FK pose of the first n joints, zeros after.
fn write_fk(i: u32, n: u32, err: u32) {
    clear_past(i, n);
    for (var k = 0u; k < n; k++) {
        solved[i].positions_ms[k] = finite_point(chains[i].chain.joints_ms[k]);
        solved[i].rotations_ms[k] = finite_rotation(chains[i].chain.rotations_ms[k]);
        solved[i].corrections[k] = Q_IDENTITY;
    }
    solved[i].status = vec4<u32>(0u, err, 0u, n);
}

// `r` (w ≥ 0) with its angle capped at `max_step` radians (0: no cap); cpu::ccd::cap_turn.
fn cap_turn(r: vec4<f32>, max_step: f32) -> vec4<f32> {
    let s = length(r.xyz);
    if (max_step > 0.0 && s > 0.0 && 2.0 * atan2_poly(s, r.w) > max_step) {
        return quat_from_axis_angle(r.xyz * (1.0 / s), max_step);
    }
    return r;
}

// The state of one chain's sweep.
struct Sweep {
    target_pos: vec3<f32>,
    parent_ms: vec4<f32>,
    max_step: f32,
    eps2: f32,
}

// One visit of joint j (cpu::ccd::visit).
fn visit(j: u32, p: ptr<function, array<vec3<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, lim: ptr<function, array<Limit, N>>, s: Sweep) {
    let to_tip = (*p)[N - 1u] - (*p)[j];
    let to_target = s.target_pos - (*p)[j];
    let l_tip = dot(to_tip, to_tip);
    let l_target = dot(to_target, to_target);
    if (!(l_tip > s.eps2 && l_target > s.eps2)) {
        return;
    }
    let r = cap_turn(rotation_arc(to_tip / sqrt(l_tip), to_target / sqrt(l_target)), s.max_step);
    var new_rot = normalize(quat_mul(r, (*rot)[j]));
    if ((*lim)[j].kind != 0u) {
        var parent = s.parent_ms;
        if (j > 0u) {
            parent = (*rot)[j - 1u];
        }
        new_rot = limit_rotation(parent, new_rot, (*lim)[j]);
    }
    let turn = normalize(quat_mul(new_rot, quat_conj((*rot)[j])));
    (*rot)[j] = new_rot;
    for (var k = 1u; k < N; k++) {
        if (k > j) {
            (*p)[k] = (*p)[j] + quat_rotate(turn, (*p)[k] - (*p)[j]);
            (*rot)[k] = normalize(quat_mul(turn, (*rot)[k]));
        }
    }
}

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    let mirrored = (chains[i].chain.mode.z & OPT_MIRRORED) != 0u;
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    for (var k = 0u; k < N; k++) {
        fk[k] = mirror_point(chains[i].chain.joints_ms[k], mirrored);
        rot[k] = mirror_rotation(chains[i].chain.rotations_ms[k], mirrored);
    }
    let target_ms = mirror_point(chains[i].chain.target_ms, mirrored);
    let params = chains[i].chain.params;
    let mode = chains[i].chain.mode;
    let checked = check_joints(&fk, &rot);
    if (checked != 0u) {
        return checked;
    }
    let settings = check_settings(target_ms, params, mode, OPT_KEEP_END_ROTATION | OPT_MIRRORED | OPT_ROOT_FIRST);
    if (settings != 0u) {
        return settings;
    }
    var len: array<f32, N>;
    var dir_fk: array<vec3<f32>, N>;
    let total = measure_bones(&fk, &len, &dir_fk);
    if (total < 0.0) {
        return ERR_ZERO_LENGTH_BONE;
    }
    let base = fk[0].xyz;
    let target_pos = target_ms.xyz;
    let c = length(target_pos - base);
    if (!(c > ON_ROOT * total)) {
        return ERR_TARGET_ON_ROOT;
    }
    let kinds = chains[i].limits.kinds;
    if (!kinds_valid(kinds, N)) {
        return ERR_INVALID_PARAMETER;
    }
    let parent_ms = mirror_rotation(chains[i].limits.parent_ms, mirrored);
    if (!finite4(parent_ms)) {
        return ERR_NON_FINITE;
    }
    if (!is_unit_quat(parent_ms)) {
        return ERR_NOT_NORMALIZED;
    }
    var lim: array<Limit, N>;
    for (var k = 0u; k < N; k++) {
        lim[k] = no_limit();
    }
    for (var k = 0u; k < N - 1u; k++) {
        let kind = limit_kind(kinds, k);
        var s = LimitSetup(no_limit(), 0u);
        if (kind != 0u) {
            s = setup_limit(kind, chains[i].limits.joints[k], rot[k], dir_fk[k]);
        }
        if (s.err != 0u) {
            return s.err;
        }
        lim[k] = s.limit;
    }
    if (!(params.y >= 0.0)) {
        return ERR_INVALID_PARAMETER;
    }
    let weight = target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }

    var p: array<vec3<f32>, N>;
    var cur: array<vec4<f32>, N>;
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
        cur[k] = rot[k];
    }
    let sweep = Sweep(target_pos, parent_ms, params.y, 1e-12 * total * total);
    let root_first = (mode.z & OPT_ROOT_FIRST) != 0u;
    for (var it = 0u; it < mode.y; it++) {
        if (root_first) {
                    for (var j = 0u; j < N - 1u; j++) {
                visit(j, &p, &cur, &lim, sweep);
            }
        } else {
                    for (var k = N - 1u; k > 0u; k--) {
                visit(k - 1u, &p, &cur, &lim, sweep);
            }
        }
    }
    let reached = length(p[N - 1u] - target_pos) <= params.x;
    let flags = select(0u, INFO_OUT_OF_REACH, c >= total);

    // Relative deltas from CCD's rotations, then finish.
    var walk = Walk(Q_IDENTITY, base);
    var parent_delta = Q_IDENTITY;
    for (var k = 0u; k < N - 1u; k++) {
        let delta = normalize(quat_mul(cur[k], quat_conj(rot[k])));
        let rel = normalize(quat_mul(quat_conj(parent_delta), delta));
        parent_delta = delta;
        let bone = fk[k + 1u].xyz - fk[k].xyz;
        write_joint(i, k, finish_joint(&walk, rot[k], rel, weight, bone, 1.0), mirrored);
    }
    var rel_end = Q_IDENTITY;
    if ((mode.z & OPT_KEEP_END_ROTATION) != 0u) {
        rel_end = quat_conj(parent_delta);
    }
    write_joint(i, N - 1u, finish_joint(&walk, rot[N - 1u], rel_end, weight, vec3<f32>(0.0), 1.0), mirrored);
    clear_past(i, N);
    solved[i].status = vec4<u32>(select(0u, 1u, reached && weight >= 1.0), 0u, flags, N);
    return 0u;
}

// Solves the chains of this variant's joint count N.
@compute @workgroup_size(WORKGROUP_SIZE)
fn ccd(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count || chains[i].chain.mode.x != N) {
        return;
    }
    let err = solve(i);
    if (err != 0u) {
        write_fk(i, N, err);
    }
}

// Chains whose joint count has no variant: FK pose and ERR_JOINT_COUNT.
@compute @workgroup_size(WORKGROUP_SIZE)
fn ccd_joint_count_error(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let n = chains[i].chain.mode.x;
    if (n < 2u || n > MAX_FABRIK_JOINTS) {
        write_fk(i, min(n, MAX_FABRIK_JOINTS), ERR_JOINT_COUNT);
    }
}
