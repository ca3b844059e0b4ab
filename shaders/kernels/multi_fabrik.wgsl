// Multi-effector FABRIK on a joint tree (up to 32 joints, 4 effectors): the WGSL twin of
// src/cpu/multi_fabrik.rs (read them side by side). Fixed iterations; loops over joints
// are not unrolled (a joint's parent and children are found through index tables).

#import records
#import chain

const WORKGROUP_SIZE: u32 = 64u;
const T: u32 = 32u;     // MAX_TREE_JOINTS
const TWIST_FADE: f32 = 3e-3;   // cpu::multi_fabrik::TWIST_FADE

// cpu::multi_fabrik::fitted_twist.
fn fitted_twist(axis: vec3<f32>, cs: f32, sn: f32, scale: f32) -> vec4<f32> {
    let m2 = (cs * cs + sn * sn) / (scale * scale);
    let fade = m2 / (m2 + TWIST_FADE * TWIST_FADE);
    return quat_from_axis_angle(axis, atan2_poly(sn, cs) * fade);
}

@group(0) @binding(0) var<storage, read> chains: array<MultiFabrikChain>;
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
        solved[i].positions_ms[k] = finite_point(chains[i].joints_ms[k]);
        solved[i].rotations_ms[k] = finite_rotation(chains[i].rotations_ms[k]);
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

fn parent_of(i: u32, j: u32) -> u32 {
    return (chains[i].parents[j / 16u][(j / 4u) % 4u] >> (8u * (j % 4u))) & 0xffu;
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
var<private> p: array<vec3<f32>, T>;
var<private> q: array<vec3<f32>, T>;
var<private> d: array<vec4<f32>, T>;

// The checks and the tree's tables (cpu::multi_fabrik::setup), in the CPU's order; returns
// the error code (0 = fine) and leaves the total length in `total`.
fn setup(i: u32, n: u32, total: ptr<function, f32>) -> u32 {
    if (n < 2u || n > MAX_TREE_JOINTS) {
        return ERR_JOINT_COUNT;
    }
    for (var k = 0u; k < n; k++) {
        if (!finite4(chains[i].joints_ms[k]) || !finite4(chains[i].rotations_ms[k])) {
            return ERR_NON_FINITE;
        }
    }
    for (var k = 0u; k < n; k++) {
        if (!is_unit_quat(chains[i].rotations_ms[k])) {
            return ERR_NOT_NORMALIZED;
        }
    }
    for (var k = 0u; k < n; k++) {
        if (!in_range(chains[i].joints_ms[k])) {
            return ERR_OUT_OF_RANGE;
        }
    }
    let mode = chains[i].mode;
    let params = chains[i].params;
    let m = min(mode.w, MAX_EFFECTORS);
    var finite = finite4(params);
    var ranged = true;
    for (var e = 0u; e < m; e++) {
        finite = finite && finite4(chains[i].targets_ms[e]);
        ranged = ranged && in_range(chains[i].targets_ms[e]);
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
        let j = chains[i].effectors[e];
        if (j == 0u || j >= n) {
            return ERR_INVALID_PARAMETER;
        }
        let w = chains[i].targets_ms[e].w;
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
            below[j] += chains[i].targets_ms[effector[j]].w;
        }
        if (j > 0u) {
            below[parent[j]] += below[j];
            active_children[parent[j]] += select(0u, 1u, below[j] > 0.0);
        }
    }
    var sum = 0.0;
    for (var j = 1u; j < n; j++) {
        bone[j] = chains[i].joints_ms[j].xyz - chains[i].joints_ms[parent[j]].xyz;
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

// cpu::multi_fabrik::backward.
fn backward(i: u32, n: u32, eps2: f32) {
    var acc: array<vec3<f32>, T>;
    var wacc: array<f32, T>;
    for (var j = n - 1u; j >= 1u; j--) {
        if (below[j] <= 0.0) {
            continue;
        }
        var sum = acc[j];
        var ws = wacc[j];
        if (effector[j] != NONE) {
            let target_e = chains[i].targets_ms[effector[j]];
            sum += target_e.xyz * target_e.w;
            ws += target_e.w;
        }
        q[j] = sum / ws;
        let par = parent[j];
        var ask: vec3<f32>;
        if (active_children[par] > 1u) {
            ask = q[j] - quat_rotate(d[par], bone[j]);
        } else {
            let now = normalize_or(p[par] - p[j], -bone[j] / len[j], eps2);
            ask = q[j] + normalize_or(p[par] - q[j], now, eps2) * len[j];
        }
        acc[par] += ask * below[j];
        wacc[par] += below[j];
    }
}

// cpu::multi_fabrik::forward.
fn forward(n: u32, keep_root: bool, eps2: f32) {
    for (var j = 0u; j < n; j++) {
        var d_par = Q_IDENTITY;
        if (j > 0u) {
            d_par = d[parent[j]];
        }
        var a = vec3<f32>(0.0);
        var b = vec3<f32>(0.0);
        var n_active = 0u;
        var first = NONE;
        var c = first_child[j];
        while (c != NONE) {
            if (below[c] > 0.0) {
                let now = quat_rotate(d_par, bone[c]);
                let want = normalize_or(q[c] - p[j], now / len[c], eps2) * len[c];
                a += now * below[c];
                b += want * below[c];
                n_active += 1u;
                if (first == NONE) {
                    first = c;
                }
            }
            c = next_sibling[c];
        }
        var dj = d_par;
        if (n_active > 0u && !(j == 0u && keep_root)) {
            if (!(dot(a, a) > eps2 && dot(b, b) > eps2)) {
                a = quat_rotate(d_par, bone[first]);
                b = normalize_or(q[first] - p[j], a / len[first], eps2) * len[first];
            }
            let axis = normalize(b);
            let swing = rotation_arc(normalize(a), axis);
            dj = quat_mul(swing, d_par);
            if (n_active > 1u) {
                var cs = 0.0;
                var sn = 0.0;
                var scale = 0.0;
                var k = first_child[j];
                while (k != NONE) {
                    if (below[k] > 0.0) {
                        let now = quat_rotate(dj, bone[k]);
                        let want = normalize_or(q[k] - p[j], now / len[k], eps2) * len[k];
                        let u = now - axis * dot(now, axis);
                        let v = want - axis * dot(want, axis);
                        cs += dot(u, v) * below[k];
                        sn += dot(cross(u, v), axis) * below[k];
                        scale += len[k] * len[k] * below[k];
                    }
                    k = next_sibling[k];
                }
                dj = quat_mul(fitted_twist(axis, cs, sn, scale), dj);
            }
            dj = normalize(dj);
        }
        d[j] = dj;
        var k = first_child[j];
        while (k != NONE) {
            p[k] = p[j] + quat_rotate(dj, bone[k]);
            k = next_sibling[k];
        }
    }
}

fn solve(i: u32) -> u32 {
    let n = joint_count(chains[i].mode);
    var total = 0.0;
    let err = setup(i, n, &total);
    if (err != 0u) {
        return err;
    }
    let weight = chains[i].params.y;
    if (weight <= 0.0) {
        write_fk(i, n, 0u);
        return 0u;
    }
    let tolerance = chains[i].params.x;
    let eps2 = 1e-12 * total * total;
    for (var j = 0u; j < n; j++) {
        p[j] = chains[i].joints_ms[j].xyz;
        q[j] = p[j];
        d[j] = Q_IDENTITY;
    }
    let iters = iterations(chains[i].mode);
    // Every loop counts its passes: one the device ended early (lavapipe's loop limit) is
    // flagged rather than returned cut short.
    var done = 0u;
    for (var it = 0u; it < iters; it++) {
        backward(i, n, eps2);
        forward(n, has_option(chains[i].mode, OPT_KEEP_ROOT_ROTATION), eps2);
        done += 1u;
    }
    if (done != iters) {
        return ERR_DEVICE_LOOP_LIMIT;
    }
    // Finishing (weights, pose rebuilt from the deltas); dw and pw reuse q and an array.
    if (!clear_past_tree(i, n)) {
        return ERR_DEVICE_LOOP_LIMIT;
    }
    var dw: array<vec4<f32>, T>;
    var worst = 0.0;
    var written = 0u;
    for (var j = 0u; j < n; j++) {
        written += 1u;
        var d_par = Q_IDENTITY;
        var dw_par = Q_IDENTITY;
        var here = chains[i].joints_ms[0].xyz;
        if (j > 0u) {
            let par = parent[j];
            d_par = d[par];
            dw_par = dw[par];
            here = q[par] + quat_rotate(dw[par], bone[j]);
        }
        let e = nlerp_identity(quat_mul(quat_conj(d_par), d[j]), weight);
        dw[j] = quat_mul(dw_par, e);
        q[j] = here;
        let r = chains[i].rotations_ms[j];
        solved[i].positions_ms[j] = vec4<f32>(here, 1.0);
        solved[i].rotations_ms[j] = normalize(quat_mul(dw[j], r));
        solved[i].corrections[j] = quat_mul(quat_mul(quat_conj(r), e), r);
        if (effector[j] != NONE) {
            worst = max(worst, distance(here, chains[i].targets_ms[effector[j]].xyz));
        }
    }
    if (written != n) {
        return ERR_DEVICE_LOOP_LIMIT;
    }
    // cpu::multi_fabrik::reach_tolerance.
    let reach = max(tolerance, 1e-6 * (length(chains[i].joints_ms[0].xyz) + total));
    let reached = weight >= 1.0 && worst <= reach;
    solved[i].status = vec4<u32>(select(0u, 1u, reached), 0u, 0u, n);
    return 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn multi_fabrik(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let err = solve(i);
    let n = min(joint_count(chains[i].mode), MAX_TREE_JOINTS);
    if (err == ERR_DEVICE_LOOP_LIMIT) {
        write_fk_unrolled(i, n, err);
    } else if (err != 0u) {
        write_fk(i, n, err);
    }
}
