// Multi-effector FABRIK on a joint tree (up to 32 joints, 4 effectors): the WGSL twin of
// src/cpu/multi_fabrik.rs (read them side by side). Fixed iterations; loops over joints
// are not unrolled (a joint's parent and children are found through index tables).

#import records
#import chain
#import tree

const WORKGROUP_SIZE: u32 = 64u;
const TWIST_FADE: f32 = 3e-3;   // cpu::multi_fabrik::TWIST_FADE

// cpu::multi_fabrik::fitted_twist.
fn fitted_twist(axis: vec3<f32>, cs: f32, sn: f32, scale: f32) -> vec4<f32> {
    let m2 = (cs * cs + sn * sn) / (scale * scale);
    let fade = m2 / (m2 + TWIST_FADE * TWIST_FADE);
    return quat_from_axis_angle(axis, atan2_poly(sn, cs) * fade);
}

var<private> p: array<vec3<f32>, T>;

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
    let written = write_tree(i, n, chains[i].joints_ms[0].xyz, weight);
    if (!written.complete) {
        return ERR_DEVICE_LOOP_LIMIT;
    }
    let worst = written.worst;
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
    fallback_on_error(i, solve(i));
}
