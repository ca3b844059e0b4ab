// CCD kernel with per-visit caps and total joint limits: the WGSL twin of src/cpu/ccd.rs
// (fixed iterations). Built per joint count like shaders/kernels/fabrik.wgsl (see its header): its
// sweeps are unrolled, so every per-joint array is indexed by constants (indexed by a loop
// counter, lavapipe reads and writes them lane by lane). Built twice more per joint count:
// the sweep order is the override constant ROOT_FIRST, so a pipeline carries one sweep
// (lavapipe runs both sides of a branch under a mask).

#import records
#import chain
#import limits
#import fabrik_chain
#import limited_chain

// Pipeline-overridable: this variant solves the chains with option ROOT_FIRST (the host
// builds each joint count's variant twice; src/gpu/kinds.rs, variant_constants).
override ROOT_FIRST: bool = false;


// A chain's per-visit cap (cpu::ccd::Cap): the cosine and sine of half of `max_step`, the
// cosine −2 (under every w) without a cap (0, or π and more).
fn cap_of(max_step: f32) -> vec2<f32> {
    if (max_step > 0.0 && max_step < PI) {
        let sc = sin_cos(max_step * 0.5);
        return vec2<f32>(sc.y, sc.x);
    }
    return vec2<f32>(-2.0, 0.0);
}

// `r` (w ≥ 0) with its angle capped (cpu::ccd::cap_turn): its half angle's cosine r.w
// under the cap's.
fn cap_turn(r: vec4<f32>, cap: vec2<f32>) -> vec4<f32> {
    let s = length(r.xyz);
    if (s > 0.0 && r.w < cap.x) {
        return vec4<f32>(r.xyz * (1.0 / s) * cap.y, cap.x);
    }
    return r;
}

// The state of one chain's sweep.
struct Sweep {
    target_pos: vec3<f32>,
    parent_ms: vec4<f32>,
    cap: vec2<f32>,
    eps2: f32,
    project: bool, // only move each joint into its limit (zero iterations)
}

// The new rotation of a visited joint and the turn it made (cpu::ccd::visit's pair).
struct Visit {
    rotation: vec4<f32>,
    turn: vec4<f32>,
}

// One visit of the joint at `pivot` (cpu::ccd::visit): a joint that does not turn toward
// the target (tip or target on it, or a projecting sweep) is still moved into its limit.
fn visit(pivot: vec3<f32>, tip: vec3<f32>, current: vec4<f32>, parent: vec4<f32>, limit: Limit, s: Sweep) -> Visit {
    let to_tip = tip - pivot;
    let to_target = s.target_pos - pivot;
    let l_tip = dot(to_tip, to_tip);
    let l_target = dot(to_target, to_target);
    let moves = !s.project && l_tip > s.eps2 && l_target > s.eps2;
    if (!moves && limit.kind == 0u) {
        return Visit(current, Q_IDENTITY);
    }
    var new_rot = current;
    if (moves) {
        let r = cap_turn(rotation_arc(to_tip / sqrt(l_tip), to_target / sqrt(l_target)), s.cap);
        new_rot = normalize(quat_mul(r, current));
    }
    if (limit.kind != 0u) {
        new_rot = limit_rotation(parent, new_rot, limit);
    }
    return Visit(new_rot, normalize(quat_mul(new_rot, quat_conj(current))));
}

// One sweep from the tip's parent to the root in O(N), tracking only the tip, then placing
// the joints root first (cpu::ccd::sweep_tip_first).
fn sweep_tip_first(p: ptr<function, array<vec3<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, lim: ptr<function, array<Limit, N>>, s: Sweep) {
    var turn: array<vec4<f32>, N>;
    turn[N - 1u] = Q_IDENTITY;
    var tip = (*p)[N - 1u];
    // unroll
    for (var step = 0u; step < N - 1u; step++) {
        let j = N - 2u - step;
        var parent = s.parent_ms;
        if (j > 0u) {
            parent = (*rot)[max(j, 1u) - 1u];
        }
        let v = visit((*p)[j], tip, (*rot)[j], parent, (*lim)[j], s);
        (*rot)[j] = v.rotation;
        turn[j] = v.turn;
        tip = (*p)[j] + quat_rotate(v.turn, tip - (*p)[j]);
    }
    // The composite stays off the normalisations: each turn is unit, and a product of at
    // most N of them is unit to rounding.
    var c = turn[0];
    var above_old = (*p)[0];
    // unroll
    for (var k = 1u; k < N; k++) {
        let old = (*p)[k];
        (*p)[k] = (*p)[k - 1u] + quat_rotate(c, old - above_old);
        (*rot)[k] = normalize(quat_mul(c, (*rot)[k]));
        above_old = old;
        c = quat_mul(c, turn[k]);
    }
}

// One sweep from the root to the tip's parent in O(N), each joint placed when the sweep
// reaches it (cpu::ccd::sweep_root_first); the composite stays off the normalisations.
fn sweep_root_first(p: ptr<function, array<vec3<f32>, N>>, rot: ptr<function, array<vec4<f32>, N>>, lim: ptr<function, array<Limit, N>>, s: Sweep) {
    var c = Q_IDENTITY;
    var above_old = (*p)[0];
    let tip_old = (*p)[N - 1u];
    // unroll
    for (var j = 0u; j < N - 1u; j++) {
        let old = (*p)[j];
        if (j > 0u) {
            (*p)[j] = (*p)[max(j, 1u) - 1u] + quat_rotate(c, old - above_old);
        }
        let current = normalize(quat_mul(c, (*rot)[j]));
        let tip = (*p)[j] + quat_rotate(c, tip_old - old);
        var parent = s.parent_ms;
        if (j > 0u) {
            parent = (*rot)[max(j, 1u) - 1u];
        }
        let v = visit((*p)[j], tip, current, parent, (*lim)[j], s);
        (*rot)[j] = v.rotation;
        c = quat_mul(v.turn, c);
        above_old = old;
    }
    (*p)[N - 1u] = (*p)[N - 2u] + quat_rotate(c, tip_old - above_old);
    (*rot)[N - 1u] = normalize(quat_mul(c, (*rot)[N - 1u]));
}

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    var len: array<f32, N>;
    var dir_fk: array<vec3<f32>, N>;
    var lim: array<Limit, N>;
    let l = load_limited(i, OPT_CCD, &fk, &rot, &len, &dir_fk, &lim);
    if (l.err != 0u) {
        return l.err;
    }
    if (!(l.params.y >= 0.0)) {
        return ERR_INVALID_PARAMETER;
    }
    let weight = l.target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }
    let target_pos = l.target_ms.xyz;
    let params = l.params;
    let mode = l.mode;
    var p: array<vec3<f32>, N>;
    var cur: array<vec4<f32>, N>;
    // unroll
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
        cur[k] = rot[k];
    }
    // Zero iterations project the FK pose onto the limits (one sweep that only limits).
    let sweep = Sweep(target_pos, l.parent_ms, cap_of(params.y), 1e-12 * l.total * l.total, iterations(mode) == 0u);
    for (var it = 0u; it < max(iterations(mode), 1u); it++) {
        if (ROOT_FIRST) {
            sweep_root_first(&p, &cur, &lim, sweep);
        } else {
            sweep_tip_first(&p, &cur, &lim, sweep);
        }
    }
    finish_rotations(i, &fk, &rot, &cur, l, length(p[N - 1u] - target_pos) <= params.x);
    return 0u;
}

// Solves the chains of this variant's joint count N.
@compute @workgroup_size(WORKGROUP_SIZE)
fn ccd(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = variant_record(wg, li, OPT_ROOT_FIRST, ROOT_FIRST);
    if (i != NO_RECORD) {
        fallback_on_error(i, solve(i));
    }
}
