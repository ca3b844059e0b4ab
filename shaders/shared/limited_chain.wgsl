// The stages the limited-chain kernels share (constrained_fabrik, ccd, dls): reading and
// checking a record (its FabrikChain, then its ChainLimits), the finish from model
// rotations, the FK fallback and the joint-count error entry point. A template stage like
// fabrik_chain (it uses the variant's `const N`); it declares the bindings and workgroup
// size the kernels share, the records' through limited_binding (which the dls kernel
// replaces with dls_binding: its records hold a LimitedChain's fields and more). The CPU
// twin is cpu::constrained_fabrik::checked.

#import records
#import chain
#import limits
#import fabrik_chain
#import limited_binding

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// A record read and checked: `err` = its error code (0: solvable).
struct Loaded {
    err: u32,
    mirrored: bool,
    target_ms: vec4<f32>,
    params: vec4<f32>,
    mode: vec4<u32>,
    parent_ms: vec4<f32>,
    total: f32,
}

// Reads chain i's N joints (unmirrored), checks them, its settings (`options`: the option
// bits the solver knows), its bones and its limits, in the CPU's order, and prepares the
// limits of joints 0..N-1 (the last joint's slot is unlimited).
fn load_limited(i: u32, options: u32, fk: ptr<function, array<vec4<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, len: ptr<function, array<f32, N>>, dir_fk: ptr<function, array<vec3<f32>, N>>, lim: ptr<function, array<Limit, N>>) -> Loaded {
    var l: Loaded;
    l.mirrored = has_option(chains[i].chain.mode, OPT_MIRRORED);
    for (var k = 0u; k < N; k++) {
        (*fk)[k] = mirror_point(chains[i].chain.joints_ms[k], l.mirrored);
        (*rot)[k] = mirror_rotation(chains[i].chain.rotations_ms[k], l.mirrored);
        (*lim)[k] = no_limit();
    }
    l.target_ms = mirror_point(chains[i].chain.target_ms, l.mirrored);
    l.params = chains[i].chain.params;
    l.mode = chains[i].chain.mode;
    l.err = check_joints(fk, rot);
    if (l.err == 0u) {
        l.err = check_settings(l.target_ms, l.params, l.mode, options);
    }
    if (l.err != 0u) {
        return l;
    }
    l.total = measure_bones(fk, len, dir_fk);
    if (l.total < 0.0) {
        l.err = ERR_ZERO_LENGTH_BONE;
        return l;
    }
    if (!(length(l.target_ms.xyz - (*fk)[0].xyz) > ON_ROOT * l.total)) {
        l.err = ERR_TARGET_ON_ROOT;
        return l;
    }
    let kinds = chains[i].limits.kinds;
    l.parent_ms = mirror_rotation(chains[i].limits.parent_ms, l.mirrored);
    if (!kinds_valid(kinds, N)) {
        l.err = ERR_INVALID_PARAMETER;
    } else if (!finite4(l.parent_ms)) {
        l.err = ERR_NON_FINITE;
    } else if (!is_unit_quat(l.parent_ms)) {
        l.err = ERR_NOT_NORMALIZED;
    }
    for (var k = 0u; k < N - 1u && l.err == 0u; k++) {
        let kind = limit_kind(kinds, k);
        if (kind != 0u) {
            var parent_fk = l.parent_ms;
            if (k > 0u) {
                parent_fk = (*rot)[k - 1u];
            }
            let s = setup_limit(kind, chains[i].limits.joints[k], (*rot)[k], (*dir_fk)[k], parent_fk);
            l.err = s.err;
            (*lim)[k] = s.limit;
        }
    }
    return l;
}

// Finishes a chain solved as model rotations `cur` (its FK positions `fk`, rotations `rot`;
// cpu::chain::finish_rotations): relative deltas D_k = R'_k · R_k⁻¹, E_k = D_(k-1)⁻¹ · D_k,
// the end joint keeping its model rotation with OPT_KEEP_END_ROTATION; flagged out of
// reach when the target is as far as the chain is long.
fn finish_rotations(i: u32, fk: ptr<function, array<vec4<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, cur: ptr<function, array<vec4<f32>, N>>, l: Loaded, reached: bool) {
    let flags = select(0u, INFO_OUT_OF_REACH, length(l.target_ms.xyz - (*fk)[0].xyz) >= l.total);
    var rel: array<vec4<f32>, N>;
    var parent_delta = Q_IDENTITY;
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        let delta = normalize(quat_mul((*cur)[k], quat_conj((*rot)[k])));
        rel[k] = normalize(quat_mul(quat_conj(parent_delta), delta));
        parent_delta = delta;
    }
    rel[N - 1u] = select(Q_IDENTITY, quat_conj(parent_delta), has_option(l.mode, OPT_KEEP_END_ROTATION));
    write_solved(i, fk, rot, &rel, l.target_ms.w, reached, flags, l.mirrored);
}

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

// The record this invocation of a limited kernel's variant solves: its index, or NO_RECORD
// when the invocation is past the batch or the record belongs to another variant (another
// joint count, or `variant_bit` set other than `variant` says).
const NO_RECORD: u32 = 0xffffffffu;
fn variant_record(wg: vec3<u32>, li: u32, variant_bit: u32, variant: bool) -> u32 {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return NO_RECORD;
    }
    let mode = chains[i].chain.mode;
    if (joint_count(mode) != N || has_option(mode, variant_bit) != variant) {
        return NO_RECORD;
    }
    return i;
}

// A solve's end: an error code gets the flagged FK fallback.
fn fallback_on_error(i: u32, err: u32) {
    if (err != 0u) {
        write_fk(i, N, err);
    }
}

// Chains whose joint count has no variant (outside 2..=MAX_FABRIK_JOINTS): FK pose of the
// joints there are and ERR_JOINT_COUNT.
@compute @workgroup_size(WORKGROUP_SIZE)
fn limited_joint_count_error(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let n = joint_count(chains[i].chain.mode);
    if (n < 2u || n > MAX_FABRIK_JOINTS) {
        write_fk(i, min(n, MAX_FABRIK_JOINTS), ERR_JOINT_COUNT);
    }
}
