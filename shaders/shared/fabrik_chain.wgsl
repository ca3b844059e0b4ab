// The stages the per-joint-count chain kernels share (fabrik, constrained_fabrik, ccd):
// reading and checking a FabrikChain's N joints and settings, and clearing the output slots
// past them. A template stage: only kernels built per joint count import it, and build.rs
// puts each variant's `const N` in front (and a stand-in N when it validates this module
// alone). It declares the output binding all three share. The CPU twin is
// cpu::fabrik::setup_chain.

#import records
#import chain

@group(0) @binding(1) var<storage, read_write> solved: array<FabrikSolved>;

// Zeroes the slots from joint n up to the joints the record held before (its status.w;
// see the top of shaders/kernels/fabrik.wgsl). Call before writing the record's new status.
fn clear_past(i: u32, n: u32) {
    let held = min(solved[i].status.w, MAX_FABRIK_JOINTS);
    for (var k = n; k < held; k++) {
        solved[i].positions_ms[k] = vec4<f32>(0.0);
        solved[i].rotations_ms[k] = vec4<f32>(0.0);
        solved[i].corrections[k] = vec4<f32>(0.0);
    }
}

// The checks of the joints (finite, unit rotations, in range), in the CPU's order; 0 = fine.
fn check_joints(fk: ptr<function, array<vec4<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>) -> u32 {
    // unroll
    for (var k = 0u; k < N; k++) {
        if (!finite4((*fk)[k]) || !finite4((*rot)[k])) {
            return ERR_NON_FINITE;
        }
    }
    // unroll
    for (var k = 0u; k < N; k++) {
        if (!is_unit_quat((*rot)[k])) {
            return ERR_NOT_NORMALIZED;
        }
    }
    // unroll
    for (var k = 0u; k < N; k++) {
        if (!in_range((*fk)[k])) {
            return ERR_OUT_OF_RANGE;
        }
    }
    return 0u;
}

// The checks of the target and settings; `options` = the option bits the solver knows.
fn check_settings(target_ms: vec4<f32>, params: vec4<f32>, mode: vec4<u32>, options: u32) -> u32 {
    if (!finite4(target_ms) || !finite4(params)) {
        return ERR_NON_FINITE;
    }
    if (!in_range(target_ms)) {
        return ERR_OUT_OF_RANGE;
    }
    if (iterations(mode) > MAX_FABRIK_ITERATIONS || params.x < 0.0 || !only_options(mode, options) || mode.w != 0u) {
        return ERR_INVALID_PARAMETER;
    }
    return 0u;
}

// Bone lengths and FK directions; returns the chain's length, or -1 when a bone is too
// short (ERR_ZERO_LENGTH_BONE).
fn measure_bones(fk: ptr<function, array<vec4<f32>, N>>, len: ptr<function, array<f32, N>>, dir_fk: ptr<function, array<vec3<f32>, N>>) -> f32 {
    var total = 0.0;
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        let bone = (*fk)[k + 1u].xyz - (*fk)[k].xyz;
        (*len)[k] = length(bone);
        (*dir_fk)[k] = bone / (*len)[k];
        total += (*len)[k];
    }
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        if (!((*len)[k] > ZERO_BONE * total && total >= MIN_CHAIN_LENGTH)) {
            return -1.0;
        }
    }
    return total;
}

// Writes joint k of record i (reflected back when the chain is mirrored).
fn write_joint(i: u32, k: u32, j: JointOut, mirrored: bool) {
    solved[i].positions_ms[k] = mirror_point(j.position, mirrored);
    solved[i].rotations_ms[k] = mirror_rotation(j.rotation, mirrored);
    solved[i].corrections[k] = j.correction;
}

// The free backward pass: tip on the target, each joint pulled toward the one below it at
// its bone's length (cpu::fabrik::backward_pass).
fn backward_pass(p: ptr<function, array<vec3<f32>, N>>, target_pos: vec3<f32>, len: ptr<function, array<f32, N>>, dir_fk: ptr<function, array<vec3<f32>, N>>, eps2: f32) {
    (*p)[N - 1u] = target_pos;
    // unroll
    for (var k = N - 1u; k > 0u; k--) {
        let b = k - 1u;
        let dir = normalize_or((*p)[b] - (*p)[b + 1u], -(*dir_fk)[b], eps2);
        (*p)[b] = (*p)[b + 1u] + dir * (*len)[b];
    }
}

// The finishing stage from every joint's relative delta (`rel[N - 1]` = the end joint's),
// then the status (cpu::chain::finish_chain with unit bone scales).
fn write_solved(i: u32, fk: ptr<function, array<vec4<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, rel: ptr<function, array<vec4<f32>, N>>, weight: f32, reached: bool, flags: u32, mirrored: bool) {
    var walk = Walk(Q_IDENTITY, (*fk)[0].xyz);
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        let bone = (*fk)[k + 1u].xyz - (*fk)[k].xyz;
        write_joint(i, k, finish_joint(&walk, (*rot)[k], (*rel)[k], weight, bone, 1.0), mirrored);
    }
    write_joint(i, N - 1u, finish_joint(&walk, (*rot)[N - 1u], (*rel)[N - 1u], weight, vec3<f32>(0.0), 1.0), mirrored);
    clear_past(i, N);
    solved[i].status = vec4<u32>(select(0u, 1u, reached && weight >= 1.0), 0u, flags, N);
}
