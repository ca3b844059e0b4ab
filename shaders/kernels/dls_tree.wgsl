// Damped least squares on a limited joint tree (up to 32 joints, 4 effectors with optional
// orientations, a root that may move within a box): the WGSL twin of src/cpu/dls_tree.rs
// and src/cpu/dls/tree.rs (read them side by side). One invocation per tree. J Jᵀ (up to
// 24 × 24: 8 blocks of 3 rows, an effector's position and orientation) is built joint by
// joint without J and solved by an unrolled block Cholesky, so each iteration runs loops
// over joints only: about 6 passes per joint. Lavapipe ends every loop of an invocation
// once they total 65 535 passes (docs/gpu.md); a tree whose loops were ended early is
// flagged ERR_DEVICE_LOOP_LIMIT with its FK pose, never returned cut short.

#import records
#import math
#import limits
#import tree
#import dls_joint

const WORKGROUP_SIZE: u32 = 64u;

// Pipeline-overridable: this variant solves the trees with orientation targets (true) or
// those without any (false: every orientation weight ±0; half the rows, their code gone;
// the host dispatches the variants its records need, src/gpu/kinds.rs).
override ORIENTATIONS: bool = true;

// Whether block x of the residual's rows exists in this variant (its orientation blocks
// only with ORIENTATIONS).
fn block_exists(x: u32) -> bool {
    return ORIENTATIONS || x % 2u == 0u;
}

// The tree's state (cpu::dls TreePose).
struct TreePose {
    q: array<vec3<f32>, T>,
    local: array<vec4<f32>, T>,
    rot: array<vec4<f32>, T>,
    p: array<vec3<f32>, T>,
    t: vec3<f32>,
}

// The tree as the descent reads it (cpu::dls Shape) and the goal (cpu::dls TreeGoal).
var<private> joints: array<Joint, T>;
var<private> offset: array<vec3<f32>, T>;
var<private> moves: array<u32, T>;
var<private> n_joints: u32;
var<private> m_eff: u32;
var<private> eff: array<u32, 4>;
var<private> moved_by: array<u32, 4>;
var<private> turned_by: array<u32, 4>;
var<private> root_fk: vec3<f32>;
var<private> parent_ms: vec4<f32>;
var<private> reach: vec3<f32>;
var<private> g_target: array<vec3<f32>, 4>;
var<private> g_orient: array<vec4<f32>, 4>;
var<private> g_wo: array<f32, 4>;
var<private> g_sw: array<f32, 4>;
var<private> g_d: array<f32, T>;
var<private> g_dt: f32;

// The weighted residual in blocks of three rows (block 2k: effector k's position, block
// 2k + 1: its orientation; zero where there is none) into `e`; returns its length and the
// largest effector error (cpu::dls tree_residual).
fn tree_residual(pose: ptr<private, TreePose>, e: ptr<function, array<vec3<f32>, 8>>) -> vec2<f32> {
    var sum = 0.0;
    var worst = 0.0;
    // unroll
    for (var k = 0u; k < 4u; k++) {
        (*e)[2u * k] = vec3<f32>(0.0);
        (*e)[2u * k + 1u] = vec3<f32>(0.0);
        if (k < m_eff) {
            let j = eff[k];
            let dp = g_target[k] - (*pose).p[j];
            var e2 = dot(dp, dp);
            let sw = g_sw[k];
            (*e)[2u * k] = dp * sw;
            if (ORIENTATIONS && g_wo[k] > 0.0) {
                var dq = quat_mul(g_orient[k], quat_conj((*pose).rot[j]));
                if (dq.w < 0.0) {
                    dq = -dq;
                }
                let v = dq.xyz;
                let l = length(v);
                var eo = vec3<f32>(0.0);
                if (l > 0.0) {
                    eo = v * (g_wo[k] * 2.0 * atan2_poly(l, dq.w) / l);
                }
                e2 += dot(eo, eo);
                (*e)[2u * k + 1u] = eo * sw;
            }
            sum += e2 * sw * sw;
            worst = max(worst, e2);
        }
    }
    return vec2<f32>(sqrt(sum), sqrt(worst));
}

// The pose the coordinates give, root first (cpu::dls tree_forward).
fn tree_forward(pose: ptr<private, TreePose>) {
    for (var i = 0u; i < n_joints; i++) {
        var par = parent_ms;
        var at = root_fk + (*pose).t;
        if (i > 0u) {
            let pi = parent[i];
            par = (*pose).rot[pi];
            at = (*pose).p[pi] + quat_rotate((*pose).rot[pi], offset[i]);
        }
        var local = (*pose).local[i];
        if (moves[i] != 0u) {
            local = local_of(joints[i], (*pose).q[i], (*pose).local[i]);
        }
        (*pose).rot[i] = normalize(quat_mul(par, local));
        (*pose).p[i] = at;
    }
}

// The bounds a step holds: per joint, bit k = coordinate k held, and a swing's direction
// along its cone's rim (zero: free); the root translation's held axes (bits).
struct TreeBounds {
    held: array<u32, T>,
    rim: array<vec3<f32>, T>,
    held_t: u32,
}

// The poses of a solve (cpu::dls tree_run's): the FK pose moved into the limits, the start
// being descended, the step it tries, the best end so far; and the step's bounds. Private
// rather than function variables: lavapipe compiles a function variable indexed by a joint
// many times slower.
var<private> base_pose: TreePose;
var<private> cur_pose: TreePose;
var<private> next_pose: TreePose;
var<private> best_pose: TreePose;
var<private> step_bounds: TreeBounds;
// Each joint's prepared limit.
var<private> tree_limits: array<Limit, T>;

// The world axes of joint i's coordinates, a swing on its cone's rim moved along it and
// the held coordinates zeroed (zero: it takes no part; cpu::dls tree_step). Found again
// wherever needed: on lavapipe that is cheaper than keeping them per joint.
fn step_axes(pose: ptr<private, TreePose>, i: u32, bounds: ptr<private, TreeBounds>) -> Axes {
    var par = parent_ms;
    if (i > 0u) {
        par = (*pose).rot[parent[i]];
    }
    var ax = joint_axes(joints[i], par, (*pose).rot[i], (*pose).q[i]);
    let rim = (*bounds).rim[i];
    if (any(rim != vec3<f32>(0.0))) {
        ax.a[0] = ax.a[0] * rim.x + ax.a[1] * rim.y;
        ax.a[1] = vec3<f32>(0.0);
    }
    let held = (*bounds).held[i];
    // unroll
    for (var k = 0u; k < 3u; k++) {
        if (((held >> k) & 1u) != 0u) {
            ax.a[k] = vec3<f32>(0.0);
        }
    }
    return ax;
}

// Joint i's part in each effector's rows: per effector k, `u` = its position less the
// joint's, `a` = √w where the joint moves it (else 0) and `b` = √w · wo where it turns its
// orientation (else 0). The column of a coordinate turning the joint about the world axis
// `ax` is then `a · ax × u` in k's position rows and `b · ax` in its orientation rows
// (cpu::dls tree_column).
struct Reach {
    u: array<vec3<f32>, 4>,
    a: vec4<f32>,
    b: vec4<f32>,
}

fn joint_reach(pose: ptr<private, TreePose>, i: u32) -> Reach {
    var r: Reach;
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < m_eff) {
            r.u[k] = (*pose).p[eff[k]] - (*pose).p[i];
            if (((moved_by[k] >> i) & 1u) != 0u) {
                r.a[k] = g_sw[k];
            }
            if (ORIENTATIONS && ((turned_by[k] >> i) & 1u) != 0u) {
                r.b[k] = g_sw[k] * g_wo[k];
            }
        }
    }
    return r;
}

// Jᵀ y restricted to joint i, as the vector w with (Jᵀ y) of axis `ax` = ax · w.
fn joint_gradient(r: Reach, y: ptr<function, array<vec3<f32>, 8>>) -> vec3<f32> {
    var w = vec3<f32>(0.0);
    // unroll
    for (var k = 0u; k < 4u; k++) {
        w += cross(r.u[k], (*y)[2u * k]) * r.a[k];
        if (ORIENTATIONS) {
            w += (*y)[2u * k + 1u] * r.b[k];
        }
    }
    return w;
}

// Where block (x, y), y ≤ x, of the lower triangle is kept.
fn tri(x: u32, y: u32) -> u32 {
    return x * (x + 1u) / 2u + y;
}

// The blocks that hold rows of the residual (bit x: an effector's position, or its
// orientation when it has one).
fn blocks_used() -> u32 {
    var used = 0u;
    // unroll
    for (var k = 0u; k < 4u; k++) {
        if (k < m_eff) {
            used |= select(1u, 3u, g_wo[k] > 0.0) << (2u * k);
        }
    }
    return used;
}


// L with L Lᵀ = s (Cholesky of a symmetric positive definite 3 × 3).
fn cholesky3(s: mat3x3<f32>) -> mat3x3<f32> {
    let l00 = sqrt(s[0][0]);
    let l10 = s[0][1] / l00;
    let l20 = s[0][2] / l00;
    let l11 = sqrt(s[1][1] - l10 * l10);
    let l21 = (s[1][2] - l20 * l10) / l11;
    let l22 = sqrt(s[2][2] - l20 * l20 - l21 * l21);
    return mat3x3<f32>(vec3<f32>(l00, l10, l20), vec3<f32>(0.0, l11, l21), vec3<f32>(0.0, 0.0, l22));
}

// L⁻¹ v for a lower triangular L.
fn lower_solve(l: mat3x3<f32>, v: vec3<f32>) -> vec3<f32> {
    let z0 = v.x / l[0][0];
    let z1 = (v.y - l[0][1] * z0) / l[1][1];
    let z2 = (v.z - l[0][2] * z0 - l[1][2] * z1) / l[2][2];
    return vec3<f32>(z0, z1, z2);
}

// L⁻ᵀ v for a lower triangular L.
fn upper_solve(l: mat3x3<f32>, v: vec3<f32>) -> vec3<f32> {
    let y2 = v.z / l[2][2];
    let y1 = (v.y - l[1][2] * y2) / l[1][1];
    let y0 = (v.x - l[0][1] * y1 - l[0][2] * y2) / l[0][0];
    return vec3<f32>(y0, y1, y2);
}

// t L⁻ᵀ for a lower triangular L.
fn right_solve(t: mat3x3<f32>, l: mat3x3<f32>) -> mat3x3<f32> {
    let tt = transpose(t);
    return transpose(mat3x3<f32>(lower_solve(l, tt[0]), lower_solve(l, tt[1]), lower_solve(l, tt[2])));
}

// A⁻¹ b into `b` for the symmetric positive definite A of 8 × 8 blocks of 3 × 3 given by its
// lower triangle (block Cholesky in place; the scalar Cholesky of cpu::dls cholesky_solve,
// rows taken three at a time), over the blocks in `used` (the others have zero right sides
// and no entries off the diagonal: they solve to zero, and are skipped). Unrolled: no loop passes (docs/gpu.md, the loop limit).
fn block_cholesky_solve(a: ptr<function, array<mat3x3<f32>, 36>>, b: ptr<function, array<vec3<f32>, 8>>, used: u32) {
    // unroll
    for (var x = 0u; x < 8u; x++) {
        if (block_exists(x) && ((used >> x) & 1u) != 0u) {
            var s = (*a)[tri(x, x)];
            // unroll
            for (var k = 0u; k < x; k++) {
                if (block_exists(k)) {
                    s -= (*a)[tri(x, k)] * transpose((*a)[tri(x, k)]);
                }
            }
            let l = cholesky3(s);
            (*a)[tri(x, x)] = l;
            // unroll
            for (var y = x + 1u; y < 8u; y++) {
                if (block_exists(y) && ((used >> y) & 1u) != 0u) {
                    var t = (*a)[tri(y, x)];
                    // unroll
                    for (var k = 0u; k < x; k++) {
                        if (block_exists(k)) {
                            t -= (*a)[tri(y, k)] * transpose((*a)[tri(x, k)]);
                        }
                    }
                    (*a)[tri(y, x)] = right_solve(t, l);
                }
            }
        }
    }
    // unroll
    for (var x = 0u; x < 8u; x++) {
        if (block_exists(x) && ((used >> x) & 1u) != 0u) {
            var v = (*b)[x];
            // unroll
            for (var k = 0u; k < x; k++) {
                if (block_exists(k)) {
                    v -= (*a)[tri(x, k)] * (*b)[k];
                }
            }
            (*b)[x] = lower_solve((*a)[tri(x, x)], v);
        }
    }
    // unroll
    for (var x = 7u; x >= 0u; x--) {
        if (block_exists(x) && ((used >> x) & 1u) != 0u) {
            var v = (*b)[x];
            // unroll
            for (var k = x + 1u; k < 8u; k++) {
                if (block_exists(k)) {
                    v -= transpose((*a)[tri(k, x)]) * (*b)[k];
                }
            }
            (*b)[x] = upper_solve((*a)[tri(x, x)], v);
        }
    }
}

// The root translation's axes a step may move it along (1: free; cpu::dls tree_step).
fn translation_mask(bounds: ptr<private, TreeBounds>) -> vec3<f32> {
    var mask = vec3<f32>(0.0);
    // unroll
    for (var k = 0u; k < 3u; k++) {
        if (reach[k] > 0.0 && (((*bounds).held_t >> k) & 1u) == 0u && g_dt > 0.0) {
            mask[k] = 1.0;
        }
    }
    return mask;
}

// Each turning joint's coordinate change (cpu::dls tree_step).
var<private> delta: array<vec3<f32>, T>;

// N Uᵀ for U = [u]× (row r of N U is row r of N crossed with u; Uᵀ = −U).
fn times_cross_t(n: mat3x3<f32>, u: vec3<f32>) -> mat3x3<f32> {
    let t = transpose(n);
    return transpose(mat3x3<f32>(cross(u, t[0]), cross(u, t[1]), cross(u, t[2])));
}

// The damped least-squares step of a tree (cpu::dls tree_step): each turning joint's
// coordinate change into `delta`, the root's translation returned; `e` is the pose's
// residual. J Jᵀ is built per joint from the 3 × 3 `M = d² Σ ax axᵀ` of its axes: with
// `U = [u]×` per effector, position against position adds `a a' U M U'ᵀ`, position against
// orientation `−a b' U M`, orientation against orientation `b b' M` (Reach): the CPU's
// column by column sums in another order, and an iteration's only loops are over joints.
fn tree_step(pose: ptr<private, TreePose>, e: ptr<function, array<vec3<f32>, 8>>, lambda_in: f32, bounds: ptr<private, TreeBounds>) -> vec3<f32> {
    var a: array<mat3x3<f32>, 36>;
    // |Jᵀe|² (for the damping's floor): per joint wᵀ M w with w = joint_gradient(e).
    var g2 = 0.0;
    for (var i = 0u; i < n_joints; i++) {
        let d2 = g_d[i] * g_d[i];
        if (moves[i] == 0u || d2 == 0.0) {
            continue;
        }
        let ax = step_axes(pose, i, bounds);
        let m = (outer(ax.a[0], ax.a[0]) + outer(ax.a[1], ax.a[1]) + outer(ax.a[2], ax.a[2])) * d2;
        let r = joint_reach(pose, i);
        // U M per effector (its columns: u × M's).
        var um: array<mat3x3<f32>, 4>;
        // unroll
        for (var k = 0u; k < 4u; k++) {
            um[k] = mat3x3<f32>(cross(r.u[k], m[0]), cross(r.u[k], m[1]), cross(r.u[k], m[2]));
        }
        // unroll
        for (var k = 0u; k < 4u; k++) {
            // unroll
            for (var l = 0u; l <= k; l++) {
                a[tri(2u * k, 2u * l)] += times_cross_t(um[k], r.u[l]) * (r.a[k] * r.a[l]);
                if (ORIENTATIONS) {
                    a[tri(2u * k + 1u, 2u * l)] -= transpose(um[l]) * (r.b[k] * r.a[l]);
                    a[tri(2u * k + 1u, 2u * l + 1u)] += m * (r.b[k] * r.b[l]);
                }
            }
            // unroll
            for (var l = 0u; l < k; l++) {
                if (ORIENTATIONS) {
                    a[tri(2u * k, 2u * l + 1u)] -= um[k] * (r.a[k] * r.b[l]);
                }
            }
        }
        let w = joint_gradient(r, e);
        g2 += dot(w, m * w);
    }
    // The root's translation: its column along model axis k is √w in row k of every
    // effector's position block.
    let dt2 = g_dt * g_dt;
    let tmask = translation_mask(bounds);
    let dm = mat3x3<f32>(vec3<f32>(tmask.x, 0.0, 0.0), vec3<f32>(0.0, tmask.y, 0.0), vec3<f32>(0.0, 0.0, tmask.z)) * dt2;
    var te = vec3<f32>(0.0);
    // unroll
    for (var x = 0u; x < 4u; x++) {
        if (x < m_eff) {
            te += (*e)[2u * x] * g_sw[x];
            // unroll
            for (var y = 0u; y <= x; y++) {
                a[tri(2u * x, 2u * y)] += dm * (g_sw[x] * g_sw[y]);
            }
        }
    }
    g2 += dot(te * te, tmask) * dt2;
    var e2 = 0.0;
    // unroll
    for (var x = 0u; x < 8u; x++) {
        e2 += dot((*e)[x], (*e)[x]);
    }
    let el = sqrt(e2);
    var floor_ = 0.0;
    if (el > 0.0) {
        floor_ = DLS_ERROR_DAMPING * min(el, sqrt(g2) / el);
    }
    let lambda = max(lambda_in, floor_);
    let used = blocks_used();
    var y = *e;
    // unroll
    for (var x = 0u; x < 8u; x++) {
        a[tri(x, x)] += diagonal(lambda * lambda);
    }
    block_cholesky_solve(&a, &y, used);
    for (var i = 0u; i < n_joints; i++) {
        let d2 = g_d[i] * g_d[i];
        delta[i] = vec3<f32>(0.0);
        if (moves[i] == 0u || d2 == 0.0) {
            continue;
        }
        let ax = step_axes(pose, i, bounds);
        let w = joint_gradient(joint_reach(pose, i), &y);
        var v = vec3<f32>(dot(ax.a[0], w), dot(ax.a[1], w), dot(ax.a[2], w)) * d2;
        let rim = (*bounds).rim[i];
        if (joints[i].dof != DOF_FREE && any(rim != vec3<f32>(0.0))) {
            v = vec3<f32>(rim.x * v.x, rim.y * v.x, v.z);
        }
        delta[i] = v;
    }
    var ty = vec3<f32>(0.0);
    // unroll
    for (var x = 0u; x < 4u; x++) {
        if (x < m_eff) {
            ty += y[2u * x] * g_sw[x];
        }
    }
    return ty * tmask * dt2;
}

// Levenberg–Marquardt on a tree from `pose` (cpu::dls tree_descend); returns its error and
// largest effector error, leaving the pose in `pose`.
fn tree_descend(pose: ptr<private, TreePose>, lambda_start: f32, iterations_: u32, precision_: f32) -> vec2<f32> {
    var e: array<vec3<f32>, 8>;
    var res = tree_residual(pose, &e);
    var lambda = lambda_start;
    let lambda_min = lambda * DLS_DAMPING_MIN;
    let lambda_max = lambda * 1e3;
    var rejected = 0u;
    for (var it = 0u; it < iterations_ && rejected < DLS_STALL && !(res.y <= precision_); it++) {
        // The step, and once more with the bounds it pushed against held (one call site:
        // the step is most of the kernel's code, and lavapipe compiles each call inlined).
        step_bounds = TreeBounds();
        let bounds = &step_bounds;
        var dt = vec3<f32>(0.0);
        var held_pass = false;
        loop {
            dt = tree_step(pose, &e, lambda, bounds);
            if (held_pass) {
                break;
            }
            held_pass = true;
            var any_held = false;
            for (var i = 0u; i < n_joints; i++) {
                if (moves[i] != 0u) {
                    let h = hold_joint(joints[i], (*pose).q[i], delta[i]);
                    (*bounds).held[i] |= h.held;
                    if (h.rim_set) {
                        (*bounds).rim[i] = h.rim;
                    }
                    any_held = any_held || h.moved;
                }
            }
            // unroll
            for (var k = 0u; k < 3u; k++) {
                let t = (*pose).t[k];
                let r = reach[k];
                if (r > 0.0 && ((t <= -r && dt[k] < 0.0) || (t >= r && dt[k] > 0.0))) {
                    (*bounds).held_t |= 1u << k;
                    any_held = true;
                }
            }
            if (!any_held) {
                break;
            }
        }
        next_pose = *pose;
        let next = &next_pose;
        for (var i = 0u; i < n_joints; i++) {
            if (moves[i] == 0u) {
                continue;
            }
            if (joints[i].dof == DOF_FREE) {
                let w = delta[i];
                let angle = length(w);
                if (angle > 0.0) {
                    var pr = parent_ms;
                    if (i > 0u) {
                        pr = (*pose).rot[parent[i]];
                    }
                    let turn = quat_from_axis_angle(w / angle, angle);
                    (*next).local[i] = normalize(quat_mul(quat_mul(quat_mul(quat_conj(pr), turn), pr), (*pose).local[i]));
                }
            } else {
                (*next).q[i] = project(joints[i], (*pose).q[i] + delta[i]);
            }
        }
        (*next).t = clamp((*pose).t + dt, -reach, reach);
        tree_forward(next);
        var e_next: array<vec3<f32>, 8>;
        let next_res = tree_residual(next, &e_next);
        if (next_res.x < res.x * (1.0 - DLS_STEP_MARGIN)) {
            *pose = *next;
            e = e_next;
            res = next_res;
            lambda = max(lambda * 0.5, lambda_min);
            rejected = 0u;
        } else {
            lambda = min(lambda * 3.0, lambda_max);
            rejected += 1u;
        }
    }
    return res;
}

fn stiffness_of(i: u32, k: u32) -> f32 {
    return chains[i].goal.stiffness[k / 4u][k % 4u];
}

// The limits' checks (cpu::dls_tree setup_tree_limits), in its order, the prepared limits
// into `lim`.
fn setup_tree_limits(i: u32, n: u32, lim: ptr<private, array<Limit, T>>) -> u32 {
    let l = chains[i].limits;
    for (var k = 0u; k < T; k++) {
        let kind = limit_kind(l.kinds, k);
        let ok = (kind & ~(LIMIT_HINGE | LIMIT_CONE | LIMIT_TWIST)) == 0u && ((kind & LIMIT_HINGE) == 0u || kind == LIMIT_HINGE);
        if (!ok || (kind != 0u && (k >= n || first_child[k] == NONE))) {
            return ERR_INVALID_PARAMETER;
        }
    }
    if (!finite4(l.parent_ms)) {
        return ERR_NON_FINITE;
    }
    if (!is_unit_quat(l.parent_ms)) {
        return ERR_NOT_NORMALIZED;
    }
    for (var k = 0u; k < n; k++) {
        (*lim)[k] = no_limit();
        let fc = first_child[k];
        if (fc == NONE) {
            continue;
        }
        var parent_fk = l.parent_ms;
        if (k > 0u) {
            parent_fk = tree_rotation(i, parent[k]);
        }
        let s = setup_limit(limit_kind(l.kinds, k), l.joints[k], tree_rotation(i, k), bone[fc] / len[fc], parent_fk);
        if (s.err != 0u) {
            return s.err;
        }
        (*lim)[k] = s.limit;
    }
    return 0u;
}

// The goal's checks (cpu::dls_tree check_tree_goal), in its order.
fn check_tree_goal(i: u32, m: u32) -> u32 {
    let g = chains[i].goal;
    var finite = finite4(g.orientation_weights) && finite4(g.root_translation);
    for (var e = 0u; e < 4u; e++) {
        finite = finite && finite4(g.orientations_ms[e]);
    }
    var stiffness = vec2<bool>(true);
    for (var k = 0u; k < 8u; k++) {
        check_stiffness(g.stiffness[k], &stiffness);
    }
    let stiff_ok = stiffness.y;
    if (!(finite && stiffness.x)) {
        return ERR_NON_FINITE;
    }
    let w = g.orientation_weights;
    let t = g.root_translation;
    var unused = false;
    for (var e = m; e < 4u; e++) {
        unused = unused || w[e] != 0.0;
    }
    let invalid = any(w < vec4<f32>(0.0)) || any(w > vec4<f32>(MAX_ORIENTATION_WEIGHT)) || unused
        || !(t.x >= 0.0 && t.y >= 0.0 && t.z >= 0.0 && t.w >= 0.0 && t.w <= 1.0)
        || !in_range(t) || any(g.starts.yzw != vec3<u32>(0u))
        || g.starts.x < 1u || g.starts.x > MAX_DLS_STARTS || !stiff_ok;
    if (invalid) {
        return ERR_INVALID_PARAMETER;
    }
    for (var e = 0u; e < m; e++) {
        if (w[e] > 0.0 && !is_unit_quat(g.orientations_ms[e])) {
            return ERR_NOT_NORMALIZED;
        }
    }
    return 0u;
}

// Solves tree i. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    let n = joint_count(tree_mode(i));
    var total = 0.0;
    var err = setup(i, n, &total);
    if (err != 0u) {
        return err;
    }
    err = setup_tree_limits(i, n, &tree_limits);
    if (err != 0u) {
        return err;
    }
    let m = tree_mode(i).w;
    err = check_tree_goal(i, m);
    if (err != 0u) {
        return err;
    }
    let weight = tree_params(i).y;
    if (weight <= 0.0) {
        write_fk(i, n, 0u);
        return 0u;
    }
    // The tree as the descent reads it (cpu::dls_tree prepare).
    let g = chains[i].goal;
    n_joints = n;
    m_eff = m;
    root_fk = tree_joint(i, 0u).xyz;
    parent_ms = chains[i].limits.parent_ms;
    reach = g.root_translation.xyz;
    g_dt = 1.0 - g.root_translation.w;
    let pose = &base_pose;
    (*pose).t = vec3<f32>(0.0);
    for (var k = 0u; k < n; k++) {
        let rk = tree_rotation(i, k);
        var par = parent_ms;
        offset[k] = vec3<f32>(0.0);
        if (k > 0u) {
            par = tree_rotation(i, parent[k]);
            offset[k] = quat_rotate(quat_conj(par), bone[k]);
        }
        (*pose).local[k] = normalize(quat_mul(quat_conj(par), rk));
        g_d[k] = 1.0 - stiffness_of(i, k);
        var turns = false;
        var c = first_child[k];
        while (c != NONE) {
            turns = turns || below[c] > 0.0;
            c = next_sibling[c];
        }
        moves[k] = select(0u, 1u, turns);
    }
    if (has_option(tree_mode(i), OPT_KEEP_ROOT_ROTATION)) {
        moves[0] = 0u;
    }
    for (var k = 0u; k < n; k++) {
        let lk = tree_limits[k];
        var dof = DOF_BALL;
        if (lk.kind == 0u) {
            dof = DOF_FREE;
        } else if (lk.kind == LIMIT_HINGE) {
            dof = DOF_HINGE;
        }
        var b = vec3<f32>(0.0);
        if (first_child[k] != NONE) {
            b = offset[first_child[k]];
        }
        joints[k] = Joint(dof, lk.kind, lk.rest, lk.bone, lk.u, cross(lk.bone, lk.u), lk.range, b);
        (*pose).q[k] = vec3<f32>(0.0);
        if (moves[k] != 0u) {
            (*pose).q[k] = project(joints[k], coordinates(joints[k], quat_mul(quat_conj(lk.rest), (*pose).local[k])));
        }
    }
    var heaviest = 0.0;
    for (var e = 0u; e < m; e++) {
        heaviest = max(heaviest, tree_target(i, e).w);
    }
    for (var e = 0u; e < m; e++) {
        let j = tree_effector(i, e);
        eff[e] = j;
        g_target[e] = tree_target(i, e).xyz;
        g_sw[e] = sqrt(tree_target(i, e).w / heaviest);
        let wo = g.orientation_weights[e];
        g_wo[e] = 0.0;
        g_orient[e] = Q_IDENTITY;
        if (wo > 0.0) {
            g_wo[e] = wo;
            g_orient[e] = g.orientations_ms[e];
        }
        var a = parent[j];
        var bits = 0u;
        loop {
            if (moves[a] != 0u) {
                bits |= 1u << a;
            }
            if (a == 0u) {
                break;
            }
            a = parent[a];
        }
        moved_by[e] = bits;
        turned_by[e] = bits | (moves[j] << j);
    }
    // The starts (cpu::dls tree_run).
    let root = tree_joint(i, 0u).xyz;
    let tolerance = max(tree_params(i).x, 1e-6 * (length(root) + total));
    let lambda = DLS_DAMPING_START * total;
    best_pose = base_pose;
    var best_err = 3.4028235e38;
    var best_worst = 3.4028235e38;
    for (var seed = 0u; seed < g.starts.x && !(best_worst <= tolerance); seed++) {
        cur_pose = base_pose;
        if (seed > 0u) {
            for (var k = 0u; k < n; k++) {
                let dk = g_d[k];
                if (moves[k] == 0u || dk <= 0.0) {
                    continue;
                }
                let to = spread(joints[k], f32(seed), f32(k));
                if (dk >= 1.0) {
                    cur_pose.q[k] = to;
                } else {
                    cur_pose.q[k] = base_pose.q[k] + (to - base_pose.q[k]) * dk;
                }
            }
        }
        tree_forward(&cur_pose);
        let r = tree_descend(&cur_pose, lambda, iterations(tree_mode(i)), tolerance);
        if (r.x < best_err * (1.0 - DLS_START_MARGIN)) {
            best_pose = cur_pose;
            best_err = r.x;
            best_worst = r.y;
        }
    }
    for (var k = 0u; k < n; k++) {
        d[k] = normalize(quat_mul(best_pose.rot[k], quat_conj(tree_rotation(i, k))));
    }
    let written = write_tree(i, n, root + best_pose.t * weight, weight);
    if (!written.complete) {
        return ERR_DEVICE_LOOP_LIMIT;
    }
    let reached = weight >= 1.0 && best_worst <= tolerance;
    solved[i].status = vec4<u32>(select(0u, 1u, reached), 0u, 0u, n);
    return 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn dls_tree(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    // The other variant's tree (kinds.rs, GpuChain::variant: by bits, so a weight a GPU
    // would flush to zero still has its orientation).
    let w = bitcast<vec4<u32>>(chains[i].goal.orientation_weights) & vec4<u32>(0x7fffffffu);
    if (any(w != vec4<u32>(0u)) != ORIENTATIONS) {
        return;
    }
    fallback_on_error(i, solve(i));
}
