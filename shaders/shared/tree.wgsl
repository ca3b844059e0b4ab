// A joint tree's records, checks and tables, shared by the kernels on trees:
// shaders/kernels/multi_fabrik.wgsl and dls_tree.wgsl (cpu::multi_fabrik setup, Tree,
// write_tree). The records are read through tree_binding's accessors (dls_tree is built with
// dls_tree_binding in its place: build.rs, SWAPS).

#import records
#import math
#import tree_binding

const T: u32 = 32u;     // MAX_TREE_JOINTS

@group(0) @binding(1) var<storage, read_write> solved: array<MultiFabrikSolved>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

// Zeroes the slots from n up to what this record held before (its status.w), so a
// record never carries a previous frame's joints past its count. Returns whether every
// pass ran (see ERR_DEVICE_LOOP_LIMIT).
fn clear_past_tree(i: u32, n: u32) -> bool {
    let held = min(solved[i].status.w, MAX_TREE_JOINTS);
    var cleared = 0u;
    for (var k = n; k < held; k++) {
        solved[i].positions_ms[k] = vec4<f32>(0.0);
        solved[i].rotations_ms[k] = vec4<f32>(0.0);
        solved[i].corrections[k] = vec4<f32>(0.0);
        cleared += 1u;
    }
    return held <= n || cleared == held - n;
}

fn write_fk(i: u32, n: u32, err: u32) {
    clear_past_tree(i, n);
    for (var k = 0u; k < n; k++) {
        solved[i].positions_ms[k] = finite_point(tree_joint(i, k));
        solved[i].rotations_ms[k] = finite_rotation(tree_rotation(i, k));
        solved[i].corrections[k] = Q_IDENTITY;
    }
    solved[i].status = vec4<u32>(0u, err, 0u, n);
}

// The FK fallback written without loops (every one of the 32 slots: the FK pose below n,
// zeros past it), for a record whose loops the device ended early (ERR_DEVICE_LOOP_LIMIT:
// lavapipe then ends every later loop after its first pass too; docs/gpu.md).
fn write_fk_unrolled(i: u32, n: u32, err: u32) {
    // unroll
    for (var k = 0u; k < 32u; k++) {
        if (k < n) {
            solved[i].positions_ms[k] = finite_point(tree_joint(i, k));
            solved[i].rotations_ms[k] = finite_rotation(tree_rotation(i, k));
            solved[i].corrections[k] = Q_IDENTITY;
        } else {
            solved[i].positions_ms[k] = vec4<f32>(0.0);
            solved[i].rotations_ms[k] = vec4<f32>(0.0);
            solved[i].corrections[k] = vec4<f32>(0.0);
        }
    }
    solved[i].status = vec4<u32>(0u, err, 0u, n);
}

// A tree solve's end (multi_fabrik, dls_tree): an error code gets the flagged FK fallback,
// written without loops when the device ended the loops early.
fn fallback_on_error(i: u32, err: u32) {
    let n = min(joint_count(tree_mode(i)), MAX_TREE_JOINTS);
    if (err == ERR_DEVICE_LOOP_LIMIT) {
        write_fk_unrolled(i, n, err);
    } else if (err != 0u) {
        write_fk(i, n, err);
    }
}

fn parent_of(i: u32, j: u32) -> u32 {
    return (tree_parents(i, j / 16u)[(j / 4u) % 4u] >> (8u * (j % 4u))) & 0xffu;
}

// The tree (cpu::multi_fabrik::Tree), per invocation.
var<private> parent: array<u32, T>;
var<private> bone: array<vec3<f32>, T>;
var<private> len: array<f32, T>;
var<private> below: array<f32, T>;
var<private> active_children: array<u32, T>;
var<private> effector: array<u32, T>;
var<private> first_child: array<u32, T>;
var<private> next_sibling: array<u32, T>;
// Each joint's total model-space delta, and positions (multi-effector FABRIK's backward
// targets; the positions write_tree writes).
var<private> q: array<vec3<f32>, T>;
var<private> d: array<vec4<f32>, T>;

// The checks and the tree's tables (cpu::multi_fabrik::setup), in the CPU's order; returns
// the error code (0 = fine) and leaves the total length in `total`.
fn setup(i: u32, n: u32, total: ptr<function, f32>) -> u32 {
    if (n < 2u || n > MAX_TREE_JOINTS) {
        return ERR_JOINT_COUNT;
    }
    for (var k = 0u; k < n; k++) {
        if (!finite4(tree_joint(i, k)) || !finite4(tree_rotation(i, k))) {
            return ERR_NON_FINITE;
        }
    }
    for (var k = 0u; k < n; k++) {
        if (!is_unit_quat(tree_rotation(i, k))) {
            return ERR_NOT_NORMALIZED;
        }
    }
    for (var k = 0u; k < n; k++) {
        if (!in_range(tree_joint(i, k))) {
            return ERR_OUT_OF_RANGE;
        }
    }
    let mode = tree_mode(i);
    let params = tree_params(i);
    let m = min(mode.w, MAX_EFFECTORS);
    var finite = finite4(params);
    var ranged = true;
    for (var e = 0u; e < m; e++) {
        finite = finite && finite4(tree_target(i, e));
        ranged = ranged && in_range(tree_target(i, e));
    }
    if (!finite) {
        return ERR_NON_FINITE;
    }
    if (!ranged) {
        return ERR_OUT_OF_RANGE;
    }
    if (mode.w == 0u || mode.w > MAX_EFFECTORS || iterations(mode) > MAX_FABRIK_ITERATIONS || !only_options(mode, OPT_MULTI_FABRIK)
        || !(flush_subnormal(params.x) >= 0.0) || any(flush_subnormal4(params).zw != vec2<f32>(0.0))) {
        return ERR_INVALID_PARAMETER;
    }
    for (var k = 0u; k < T; k++) {
        parent[k] = NONE;
        effector[k] = NONE;
        first_child[k] = NONE;
        next_sibling[k] = NONE;
        below[k] = 0.0;
        active_children[k] = 0u;
        bone[k] = vec3<f32>(0.0);
        len[k] = 0.0;
    }
    for (var j = 1u; j < n; j++) {
        let pj = parent_of(i, j);
        if (pj >= j) {
            return ERR_INVALID_PARAMETER;
        }
        parent[j] = pj;
    }
    for (var e = 0u; e < m; e++) {
        let j = tree_effector(i, e);
        if (j == 0u || j >= n) {
            return ERR_INVALID_PARAMETER;
        }
        let w = tree_target(i, e).w;
        if (effector[j] != NONE || !(w >= MIN_EFFECTOR_WEIGHT && w <= MAX_EFFECTOR_WEIGHT)) {
            return ERR_INVALID_PARAMETER;
        }
        effector[j] = e;
    }
    for (var j = n - 1u; j >= 1u; j--) {
        let pj = parent[j];
        next_sibling[j] = first_child[pj];
        first_child[pj] = j;
    }
    for (var jj = 0u; jj < n; jj++) {
        let j = n - 1u - jj;
        if (effector[j] != NONE) {
            below[j] += tree_target(i, effector[j]).w;
        }
        if (j > 0u) {
            below[parent[j]] += below[j];
            active_children[parent[j]] += select(0u, 1u, below[j] > 0.0);
        }
    }
    var sum = 0.0;
    for (var j = 1u; j < n; j++) {
        bone[j] = tree_joint(i, j).xyz - tree_joint(i, parent[j]).xyz;
        len[j] = length(bone[j]);
        sum += len[j];
    }
    *total = sum;
    for (var j = 1u; j < n; j++) {
        if (!(len[j] > MIN_TREE_BONE * sum && sum >= MIN_CHAIN_LENGTH)) {
            return ERR_ZERO_LENGTH_BONE;
        }
    }
    return 0u;
}

// Writes a solved tree (cpu::multi_fabrik::write_tree): every joint's relative delta (from
// its total model-space delta `d`) weighted by `weight`, the pose rebuilt from them with the
// root at `root`; the positions written are left in `q`. Returns the largest distance of an
// effector from its target, and whether every loop pass ran (see ERR_DEVICE_LOOP_LIMIT).
struct Written {
    worst: f32,
    complete: bool,
}

fn write_tree(i: u32, n: u32, root: vec3<f32>, weight: f32) -> Written {
    let cleared = clear_past_tree(i, n);
    var dw: array<vec4<f32>, T>;
    var worst = 0.0;
    var written = 0u;
    for (var j = 0u; j < n; j++) {
        written += 1u;
        var d_par = Q_IDENTITY;
        var dw_par = Q_IDENTITY;
        var here = root;
        if (j > 0u) {
            let par = parent[j];
            d_par = d[par];
            dw_par = dw[par];
            here = q[par] + quat_rotate(dw[par], bone[j]);
        }
        let e = nlerp_identity(quat_mul(quat_conj(d_par), d[j]), weight);
        dw[j] = quat_mul(dw_par, e);
        q[j] = here;
        let r = tree_rotation(i, j);
        solved[i].positions_ms[j] = vec4<f32>(here, 1.0);
        solved[i].rotations_ms[j] = normalize(quat_mul(dw[j], r));
        solved[i].corrections[j] = quat_mul(quat_mul(quat_conj(r), e), r);
        if (effector[j] != NONE) {
            worst = max(worst, distance(here, tree_target(i, effector[j]).xyz));
        }
    }
    return Written(worst, cleared && written == n);
}

