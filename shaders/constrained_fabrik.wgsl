// Constrained FABRIK kernel (joint limits): the WGSL twin of src/cpu/constrained_fabrik.rs
// (FabrikMode::Fixed). Built per joint count like shaders/fabrik.wgsl (see its header), but
// its forward pass is not unrolled: with the limit math inlined into every joint, unrolled
// variants took minutes to compile on lavapipe.
//
// Each iteration: the free backward pass, then the limited forward pass (limits.wgsl's
// forward_joint): the last forward pass's rotations are the solution, so the limits hold
// whatever the iteration count; zero iterations project the FK pose onto the limits.

#import records
#import chain
#import limits
#import fabrik_chain
#import limited_chain

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<ConstrainedFabrikChain>;
@group(0) @binding(1) var<storage, read_write> solved: array<FabrikSolved>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    var len: array<f32, N>;
    var dir_fk: array<vec3<f32>, N>;
    var lim: array<Limit, N>;
    let l = load_limited(i, OPT_KEEP_END_ROTATION | OPT_MIRRORED, &fk, &rot, &len, &dir_fk, &lim);
    if (l.err != 0u) {
        return l.err;
    }
    let weight = l.target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }
    let base = fk[0].xyz;
    let target_pos = l.target_ms.xyz;
    var p: array<vec3<f32>, N>;
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
    }
    let eps2 = 1e-12 * l.total * l.total;
    var rel: array<vec4<f32>, N>;
    var delta = Q_IDENTITY;
    let iterations = l.mode.y;
    for (var it = 0u; it < max(iterations, 1u); it++) {
        if (it < iterations) {
            backward_pass(&p, target_pos, &len, &dir_fk, eps2);
        }
        // Forward, limited: root back on the base, each bone into its limit.
        p[0] = base;
        delta = Q_IDENTITY;
        var parent_fk = l.parent_ms;
        for (var k = 0u; k < N - 1u; k++) {
            let want = normalize_or(p[k + 1u] - p[k], quat_rotate(delta, dir_fk[k]), eps2);
            let f = forward_joint(delta, parent_fk, rot[k], dir_fk[k], want, lim[k]);
            parent_fk = rot[k];
            p[k + 1u] = p[k] + quat_rotate(f.delta, dir_fk[k]) * len[k];
            rel[k] = f.rel;
            delta = f.delta;
        }
    }
    let reached = length(p[N - 1u] - target_pos) <= l.params.x;
    let flags = select(0u, INFO_OUT_OF_REACH, length(target_pos - base) >= l.total);
    rel[N - 1u] = select(Q_IDENTITY, quat_conj(delta), (l.mode.z & OPT_KEEP_END_ROTATION) != 0u);
    write_solved(i, &fk, &rot, &rel, weight, reached, flags, l.mirrored);
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
