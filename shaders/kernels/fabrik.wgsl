// Fixed-iteration FABRIK kernel: the WGSL twin of src/cpu/fabrik.rs (FabrikMode::Fixed).
//
// A template over the joint count: build.rs compiles one variant per `N` in
// 2..=MAX_FABRIK_JOINTS (prepending `const N: u32 = ..;`) and expands every `for` loop
// marked `// unroll` (bounds constant in N) into one block per step with its index a
// constant (`let k = 3u;`). Every per-joint array is then indexed by constants and lives in
// registers: indexed by a loop counter it would be per-lane memory (lavapipe: ~3x slower;
// real GPUs: local memory). The host dispatches the variant of each joint count present in
// a batch (`fabrik`, which skips other chains) and `fabrik_joint_count_error` for chains
// whose count has no variant.
//
// Output slots past a chain's joint count must read as zero, as on the CPU. Zeroing all of
// them every frame would be most of the kernel's memory traffic for short chains (4 joints:
// 576 of 784 bytes), so each record's `status.w` says how many joints it holds and a kernel
// zeroes only the slots the record's previous contents had past the new count. Output
// buffers start zeroed (wgpu) and only these kernels write them, so a record always holds
// exactly `status.w` joints.

#import records
#import chain
#import fabrik_chain

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<FabrikChain>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// FK pose of the first n joints, zeros after (as the CPU's SolvedChain::default()).
fn write_fk(i: u32, n: u32, err: u32) {
    clear_past(i, n);
    for (var k = 0u; k < n; k++) {
        solved[i].positions_ms[k] = finite_point(chains[i].joints_ms[k]);
        solved[i].rotations_ms[k] = finite_rotation(chains[i].rotations_ms[k]);
        solved[i].corrections[k] = Q_IDENTITY;
    }
    solved[i].status = vec4<u32>(0u, err, 0u, n);
}

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    // The record's N joints and settings, each field read once (not the whole record: its
    // 16 joint slots are 512 of its 560 bytes).
    // A mirrored chain is solved as its unmirrored twin and its solved pose reflected back
    // (option MIRRORED).
    let mirrored = has_option(chains[i].mode, OPT_MIRRORED);
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    // unroll
    for (var k = 0u; k < N; k++) {
        fk[k] = mirror_point(chains[i].joints_ms[k], mirrored);
        rot[k] = mirror_rotation(chains[i].rotations_ms[k], mirrored);
    }
    let target_ms = mirror_point(chains[i].target_ms, mirrored);
    let params = chains[i].params;
    let mode = chains[i].mode;
    let checked = check_joints(&fk, &rot);
    if (checked != 0u) {
        return checked;
    }
    let settings = check_settings(target_ms, params, mode, OPT_FABRIK);
    if (settings != 0u) {
        return settings;
    }
    let iters = iterations(mode);
    let tip_precision = precision_of(params); // `precision` is reserved in WGSL
    // Setup: bone lengths and FK directions.
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
    let weight = target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }

    var p: array<vec3<f32>, N>;
    // unroll
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
    }
    let eps2 = 1e-12 * total * total;
    var flags = 0u;
    if (c >= total) {
        // Out of reach: lay the chain straight toward the target.
        let d = (target_pos - base) / c;
        // unroll
        for (var k = 0u; k < N - 1u; k++) {
            p[k + 1u] = p[k] + d * len[k];
        }
        flags = flags | INFO_OUT_OF_REACH;
    } else {
        for (var it = 0u; it < iters; it++) {
            backward_pass(&p, target_pos, &len, &dir_fk, eps2);
            // Forward: root back on the base, walk to the tip.
            p[0] = base;
            // unroll
            for (var k = 0u; k < N - 1u; k++) {
                let dir = normalize_or(p[k + 1u] - p[k], dir_fk[k], eps2);
                p[k + 1u] = p[k] + dir * len[k];
            }
        }
    }
    let reached = length(p[N - 1u] - target_pos) <= tip_precision;

    // Rotations, down the chain: each bone's shortest arc from its FK direction to its new
    // one as seen in its parent's corrected frame is its relative delta; then finish.
    var rel: array<vec4<f32>, N>;
    var parent = Q_IDENTITY;
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        let new_dir = normalize_or(p[k + 1u] - p[k], dir_fk[k], eps2);
        rel[k] = rotation_arc(dir_fk[k], quat_rotate(quat_conj(parent), new_dir));
        parent = quat_mul(parent, rel[k]);
    }
    // The end joint has no bone; it keeps its model-space rotation when asked.
    rel[N - 1u] = select(Q_IDENTITY, quat_conj(parent), has_option(mode, OPT_KEEP_END_ROTATION));
    write_solved(i, &fk, &rot, &rel, weight, reached, flags, mirrored);
    return 0u;
}

// Solves the chains of this variant's joint count N; other chains are left to their own
// variant.
@compute @workgroup_size(WORKGROUP_SIZE)
fn fabrik(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count || joint_count(chains[i].mode) != N) {
        return;
    }
    let err = solve(i);
    if (err != 0u) {
        write_fk(i, N, err);
    }
}

// Chains whose joint count has no variant (outside 2..=MAX_FABRIK_JOINTS): FK pose of the
// joints there are (at most MAX_FABRIK_JOINTS) and ERR_JOINT_COUNT.
@compute @workgroup_size(WORKGROUP_SIZE)
fn fabrik_joint_count_error(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let n = joint_count(chains[i].mode);
    if (n < 2u || n > MAX_FABRIK_JOINTS) {
        write_fk(i, min(n, MAX_FABRIK_JOINTS), ERR_JOINT_COUNT);
    }
}
