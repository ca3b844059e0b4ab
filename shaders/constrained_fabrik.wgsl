// Constrained FABRIK kernel (joint limits): the WGSL twin of src/cpu/constrained_fabrik.rs
// (FabrikMode::Fixed). Built per joint count like shaders/fabrik.wgsl (see its header), but
// its loops are not unrolled yet: with the limit math inlined into every joint, unrolled
// variants took minutes to compile on lavapipe (a later step: unroll cheaply).
//
// Each iteration: the free backward pass, then the limited forward pass (limits.wgsl's
// forward_joint): the last forward pass's rotations are the solution, so the limits hold
// whatever the iteration count; zero iterations project the FK pose onto the limits.

#import records
#import chain
#import limits
#import fabrik_chain

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<ConstrainedFabrikChain>;
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
    let settings = check_settings(target_ms, params, mode, OPT_KEEP_END_ROTATION | OPT_MIRRORED);
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
    // The limits (cpu::limits::setup_limits, same order).
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
    let weight = target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }

    var p: array<vec3<f32>, N>;
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
    }
    let eps2 = 1e-12 * total * total;
    var rel: array<vec4<f32>, N>;
    var delta = Q_IDENTITY;
    let iterations = mode.y;
    for (var it = 0u; it < max(iterations, 1u); it++) {
        if (it < iterations) {
            // Backward, free: tip on the target, walk to the root.
            p[N - 1u] = target_pos;
                    for (var k = N - 1u; k > 0u; k--) {
                let b = k - 1u;
                let dir = normalize_or(p[b] - p[b + 1u], -dir_fk[b], eps2);
                p[b] = p[b + 1u] + dir * len[b];
            }
        }
        // Forward, limited: root back on the base, each bone into its limit.
        p[0] = base;
        delta = Q_IDENTITY;
        var parent = parent_ms;
            for (var k = 0u; k < N - 1u; k++) {
            let want = normalize_or(p[k + 1u] - p[k], quat_rotate(delta, dir_fk[k]), eps2);
            let f = forward_joint(delta, parent, rot[k], dir_fk[k], want, lim[k]);
            p[k + 1u] = p[k] + quat_rotate(f.delta, dir_fk[k]) * len[k];
            rel[k] = f.rel;
            delta = f.delta;
            parent = f.rotation;
        }
    }
    let reached = length(p[N - 1u] - target_pos) <= params.x;
    let flags = select(0u, INFO_OUT_OF_REACH, c >= total);

    var walk = Walk(Q_IDENTITY, base);
    for (var k = 0u; k < N - 1u; k++) {
        let bone = fk[k + 1u].xyz - fk[k].xyz;
        write_joint(i, k, finish_joint(&walk, rot[k], rel[k], weight, bone, 1.0), mirrored);
    }
    var rel_end = Q_IDENTITY;
    if ((mode.z & OPT_KEEP_END_ROTATION) != 0u) {
        rel_end = quat_conj(delta);
    }
    write_joint(i, N - 1u, finish_joint(&walk, rot[N - 1u], rel_end, weight, vec3<f32>(0.0), 1.0), mirrored);
    clear_past(i, N);
    solved[i].status = vec4<u32>(select(0u, 1u, reached && weight >= 1.0), 0u, flags, N);
    return 0u;
}

// Solves the chains of this variant's joint count N.
@compute @workgroup_size(WORKGROUP_SIZE)
fn constrained_fabrik(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
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
fn constrained_fabrik_joint_count_error(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let n = chains[i].chain.mode.x;
    if (n < 2u || n > MAX_FABRIK_JOINTS) {
        write_fk(i, min(n, MAX_FABRIK_JOINTS), ERR_JOINT_COUNT);
    }
}
