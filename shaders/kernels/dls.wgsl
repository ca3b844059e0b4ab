// Damped least squares (Levenberg–Marquardt with adaptive damping) on a limited chain with
// an optional orientation target and per-joint stiffness: the WGSL twin of src/cpu/dls/
// (mod.rs and descent.rs, read them side by side; up to the record's iterations per start,
// a start ending within the precision or after DLS_STALL dropped steps). Built per
// joint count like shaders/kernels/fabrik.wgsl: the per-joint loops are unrolled, so every
// per-joint array is indexed by constants. One invocation per chain; J Jᵀ is built without
// J (3 × 3 blocks) and solved by Cholesky.

#import records
#import chain
#import limits
#import fabrik_chain
#import limited_chain
#import dls_joint

// The chain's state (cpu::dls Pose): coordinates, local rotations of free joints, model
// rotations and joint positions.
struct Pose {
    q: array<vec3<f32>, N>,
    local: array<vec4<f32>, N>,
    rot: array<vec4<f32>, N>,
    p: array<vec3<f32>, N>,
}

// The goal (cpu::dls Goal) and the joints, for the invocation's chain.
var<private> joints: array<Joint, N>;
var<private> goal_target: vec3<f32>;
var<private> goal_orient: vec4<f32>;
var<private> goal_w: f32;
var<private> goal_d: array<f32, N>;
var<private> parent_ms: vec4<f32>;

// The residual's two parts (cpu::dls residual).
struct Residual {
    e_p: vec3<f32>,
    e_o: vec3<f32>,
}

fn residual(pose: ptr<function, Pose>) -> Residual {
    let e_p = goal_target - (*pose).p[N - 1u];
    if (goal_w <= 0.0) {
        return Residual(e_p, vec3<f32>(0.0));
    }
    var q = quat_mul(goal_orient, quat_conj((*pose).rot[N - 2u]));
    if (q.w < 0.0) {
        q = -q;
    }
    let v = q.xyz;
    let s = length(v);
    var e_o = vec3<f32>(0.0);
    if (s > 0.0) {
        e_o = v * (goal_w * 2.0 * atan2_poly(s, q.w) / s);
    }
    return Residual(e_p, e_o);
}

fn error_of(pose: ptr<function, Pose>) -> f32 {
    let r = residual(pose);
    return sqrt(dot(r.e_p, r.e_p) + dot(r.e_o, r.e_o));
}

// The pose the coordinates give (cpu::dls forward).
fn forward(pose: ptr<function, Pose>) {
    var parent = parent_ms;
    // unroll
    for (var i = 0u; i < N - 1u; i++) {
        let j = joints[i];
        let r = normalize(quat_mul(parent, local_of(j, (*pose).q[i], (*pose).local[i])));
        (*pose).rot[i] = r;
        (*pose).p[i + 1u] = (*pose).p[i] + quat_rotate(r, j.bone);
        parent = r;
    }
}

// The world axes joint i's coordinates turn it about (cpu::dls axes).
fn axes(pose: ptr<function, Pose>, i: u32) -> Axes {
    var parent = parent_ms;
    if (i > 0u) {
        parent = (*pose).rot[max(i, 1u) - 1u];
    }
    return joint_axes(joints[i], parent, (*pose).rot[i], (*pose).q[i]);
}

// A⁻¹ e for a symmetric positive definite A (Cholesky; cpu::dls solve_spd).
fn solve_spd(a: mat3x3<f32>, e: vec3<f32>) -> vec3<f32> {
    let l00 = sqrt(a[0][0]);
    let l10 = a[1][0] / l00;
    let l20 = a[2][0] / l00;
    let l11 = sqrt(a[1][1] - l10 * l10);
    let l21 = (a[2][1] - l20 * l10) / l11;
    let l22 = sqrt(a[2][2] - l20 * l20 - l21 * l21);
    let z0 = e.x / l00;
    let z1 = (e.y - l10 * z0) / l11;
    let z2 = (e.z - l20 * z0 - l21 * z1) / l22;
    let y2 = z2 / l22;
    let y1 = (z1 - l21 * y2) / l11;
    let y0 = (z0 - l10 * y1 - l20 * y2) / l00;
    return vec3<f32>(y0, y1, y2);
}

fn tdot(m: mat3x3<f32>, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(m[0], v), dot(m[1], v), dot(m[2], v));
}

// The block solve of [P C; Cᵀ O] [y_p; y_o] = [e_p; e_o] (cpu::dls solve_blocks).
fn solve_blocks(p: mat3x3<f32>, c: mat3x3<f32>, o: mat3x3<f32>, r: Residual) -> Residual {
    let x0 = solve_spd(p, c[0]);
    let x1 = solve_spd(p, c[1]);
    let x2 = solve_spd(p, c[2]);
    let s = mat3x3<f32>(o[0] - tdot(c, x0), o[1] - tdot(c, x1), o[2] - tdot(c, x2));
    let rhs = r.e_o - vec3<f32>(dot(x0, r.e_p), dot(x1, r.e_p), dot(x2, r.e_p));
    let y_o = solve_spd(s, rhs);
    let cy = c[0] * y_o.x + c[1] * y_o.y + c[2] * y_o.z;
    return Residual(solve_spd(p, r.e_p - cy), y_o);
}

// The bounds a step holds (cpu::dls hold_bounds): per joint, bit k = coordinate k held;
// `rim` a swing's direction along its cone's rim (zero: free).
struct Bounds {
    held: array<u32, N>,
    rim: array<vec3<f32>, N>,
}

// The damped least-squares step toward the goal, per joint (cpu::dls solve_step).
fn solve_step(pose: ptr<function, Pose>, lambda: f32, bounds: ptr<function, Bounds>, delta: ptr<function, array<vec3<f32>, N>>) {
    let tip = (*pose).p[N - 1u];
    let res = residual(pose);
    let w = goal_w;
    let orient = w > 0.0;
    var cols: array<Axes, N>;
    var axs: array<Axes, N>;
    let damp = diagonal(lambda * lambda);
    var p = damp;
    var c = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    var o = damp;
    // unroll
    for (var i = 0u; i < N - 1u; i++) {
        let r = tip - (*pose).p[i];
        let j = joints[i];
        let d2 = goal_d[i] * goal_d[i];
        cols[i] = Axes(array<vec3<f32>, 3>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)));
        axs[i] = cols[i];
        if (d2 != 0.0 && j.dof == DOF_FREE) {
            p += (diagonal(dot(r, r)) - outer(r, r)) * d2;
            if (orient) {
                c += cross_matrix(r) * (-w * d2);
                o += diagonal(w * w * d2);
            }
        } else if (d2 != 0.0) {
            var ax = axes(pose, i);
            let rim = (*bounds).rim[i];
            if (any(rim != vec3<f32>(0.0))) {
                ax.a[0] = ax.a[0] * rim.x + ax.a[1] * rim.y;
                ax.a[1] = vec3<f32>(0.0);
            }
            let held = (*bounds).held[i];
            // unroll
            for (var k = 0u; k < 3u; k++) {
                if ((held & (1u << k)) != 0u) {
                    ax.a[k] = vec3<f32>(0.0);
                }
                let col = cross(ax.a[k], r);
                p += outer(col, col) * d2;
                if (orient) {
                    c += outer(col, ax.a[k] * w) * d2;
                    o += outer(ax.a[k] * w, ax.a[k] * w) * d2;
                }
                cols[i].a[k] = col;
            }
            axs[i] = ax;
        }
    }
    var y = Residual(solve_spd(p, res.e_p), vec3<f32>(0.0));
    if (orient) {
        y = solve_blocks(p, c, o, res);
    }
    // unroll
    for (var i = 0u; i < N - 1u; i++) {
        let d2 = goal_d[i] * goal_d[i];
        let r = tip - (*pose).p[i];
        let cl = cols[i].a;
        let ax = axs[i].a;
        var s = vec3<f32>(dot(cl[0], y.e_p), dot(cl[1], y.e_p), dot(cl[2], y.e_p));
        if (orient) {
            s += vec3<f32>(dot(ax[0], y.e_o), dot(ax[1], y.e_o), dot(ax[2], y.e_o)) * w;
        }
        s = s * d2;
        let rim = (*bounds).rim[i];
        if (any(rim != vec3<f32>(0.0))) {
            s = vec3<f32>(rim.x * s.x, rim.y * s.x, s.z);
        }
        if (joints[i].dof == DOF_FREE) {
            s = (cross(r, y.e_p) + y.e_o * w) * d2;
        }
        (*delta)[i] = select(s, vec3<f32>(0.0), d2 == 0.0);
    }
}

// The coordinates the step would push out of their limits: held, or moved along the rim
// (cpu::dls hold_bounds). Returns whether any was.
fn hold_bounds(pose: ptr<function, Pose>, delta: ptr<function, array<vec3<f32>, N>>, bounds: ptr<function, Bounds>) -> bool {
    var any_held = false;
    // unroll
    for (var i = 0u; i < N - 1u; i++) {
        let h = hold_joint(joints[i], (*pose).q[i], (*delta)[i]);
        (*bounds).held[i] |= h.held;
        if (h.moved) {
            if (h.rim_set) {
                (*bounds).rim[i] = h.rim;
            }
            any_held = true;
        }
    }
    return any_held;
}

// Levenberg–Marquardt from `pose`: up to `iterations` steps, ending within the precision
// or after DLS_STALL steps in a row that came no closer (cpu::dls descend). Returns the
// error of the pose it leaves in `pose`.
fn descend(pose: ptr<function, Pose>, lambda_start: f32, iterations: u32, precision_: f32) -> f32 {
    var err = error_of(pose);
    var lambda = lambda_start;
    let lambda_min = lambda * DLS_DAMPING_MIN;
    let lambda_max = lambda * 1e3;
    var delta: array<vec3<f32>, N>;
    var rejected = 0u;
    for (var it = 0u; it < iterations && rejected < DLS_STALL && !(err <= precision_); it++) {
        var bounds: Bounds;
        // The damping is at least a share of the error (cpu::dls descend).
        let damping = max(lambda, err * DLS_ERROR_DAMPING);
        for (var round_ = 0u; round_ < 2u; round_++) {
            solve_step(pose, damping, &bounds, &delta);
            if (round_ == 0u && !hold_bounds(pose, &delta, &bounds)) {
                break;
            }
        }
        var next = *pose;
        // unroll
        for (var i = 0u; i < N - 1u; i++) {
            if (joints[i].dof == DOF_FREE) {
                let w = delta[i];
                let angle = length(w);
                if (angle > 0.0) {
                    var p = parent_ms;
                    if (i > 0u) {
                        p = (*pose).rot[max(i, 1u) - 1u];
                    }
                    let turn = quat_from_axis_angle(w / angle, angle);
                    next.local[i] = normalize(quat_mul(quat_mul(quat_mul(quat_conj(p), turn), p), (*pose).local[i]));
                }
            } else {
                next.q[i] = project(joints[i], (*pose).q[i] + delta[i]);
            }
        }
        forward(&next);
        let next_err = error_of(&next);
        if (next_err < err * (1.0 - DLS_STEP_MARGIN)) {
            *pose = next;
            err = next_err;
            lambda = max(lambda * 0.5, lambda_min);
            rejected = 0u;
        } else {
            lambda = min(lambda * 3.0, lambda_max);
            rejected += 1u;
        }
    }
    return err;
}

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    var len: array<f32, N>;
    var dir_fk: array<vec3<f32>, N>;
    var lim: array<Limit, N>;
    let l = load_limited(i, OPT_FABRIK, &fk, &rot, &len, &dir_fk, &lim);
    if (l.err != 0u) {
        return l.err;
    }
    let err = check_goal(i, l);
    if (err != 0u) {
        return err;
    }
    let weight = l.target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }
    let g = chains[i].goal;
    parent_ms = l.parent_ms;
    goal_target = l.target_ms.xyz;
    goal_w = g.settings.x;
    let target_rot = mirror_rotation(g.orientation_ms, l.mirrored);
    goal_orient = normalize(quat_mul(quat_mul(target_rot, quat_conj(rot[N - 1u])), rot[N - 2u]));
    // The joints and the FK pose's local rotations (cpu::dls prepare, joint_of).
    var pose: Pose;
    pose.p[0] = fk[0].xyz;
    var parent = l.parent_ms;
    // unroll
    for (var k = 0u; k < N - 1u; k++) {
        let lk = lim[k];
        var dof = DOF_BALL;
        if (lk.kind == 0u) {
            dof = DOF_FREE;
        } else if (lk.kind == LIMIT_HINGE) {
            dof = DOF_HINGE;
        }
        let bone = quat_rotate(quat_conj(rot[k]), fk[k + 1u].xyz - fk[k].xyz);
        joints[k] = Joint(dof, lk.kind, lk.rest, lk.bone, lk.u, cross(lk.bone, lk.u), lk.range, bone);
        goal_d[k] = 1.0 - g.stiffness[k / 4u][k % 4u];
        let local = normalize(quat_mul(quat_conj(parent), rot[k]));
        parent = rot[k];
        pose.local[k] = local;
        pose.q[k] = project(joints[k], coordinates(joints[k], quat_mul(quat_conj(lk.rest), local)));
    }
    // The starts (cpu::dls run).
    let lambda = DLS_DAMPING_START * l.total;
    let precision_ = l.params.x;
    var best = pose;
    var best_err = 3.4028235e38;
    // No start ends closer than `floor` (how far the target lies beyond the reach).
    let floor = max(length(l.target_ms.xyz - fk[0].xyz) - l.total, 0.0);
    for (var seed = 0u; seed < g.starts.x && !(best_err <= precision_ + floor); seed++) {
        var start = pose;
        if (seed > 0u) {
            // unroll
            for (var k = 0u; k < N - 1u; k++) {
                let d = goal_d[k];
                let to = spread(joints[k], f32(seed), f32(k));
                if (d >= 1.0) {
                    start.q[k] = to;
                } else if (d > 0.0) {
                    start.q[k] = pose.q[k] + (to - pose.q[k]) * d;
                }
            }
        }
        forward(&start);
        let e = descend(&start, lambda, iterations(l.mode), precision_);
        if (e < best_err * (1.0 - DLS_START_MARGIN)) {
            best = start;
            best_err = e;
        }
    }
    var cur = best.rot;
    finish_rotations(i, &fk, &rot, &cur, l, best_err <= precision_);
    return 0u;
}

// The goal's checks (cpu::dls check_goal), in its order.
fn check_goal(i: u32, l: Loaded) -> u32 {
    let g = chains[i].goal;
    var stiffness = vec2<bool>(true);
    for (var k = 0u; k < 4u; k++) {
        check_stiffness(g.stiffness[k], &stiffness);
    }
    let stiff_ok = stiffness.y;
    if (!(finite4(g.orientation_ms) && finite4(g.settings) && stiffness.x)) {
        return ERR_NON_FINITE;
    }
    let w = g.settings.x;
    let invalid = !(w >= 0.0 && w <= MAX_ORIENTATION_WEIGHT) || any(g.settings.yzw != vec3<f32>(0.0)) || any(g.starts.yzw != vec3<u32>(0u))
        || g.starts.x < 1u || g.starts.x > MAX_DLS_STARTS || !stiff_ok
        || (w > 0.0 && has_option(l.mode, OPT_KEEP_END_ROTATION));
    if (invalid) {
        return ERR_INVALID_PARAMETER;
    }
    if (w > 0.0 && !is_unit_quat(g.orientation_ms)) {
        return ERR_NOT_NORMALIZED;
    }
    return 0u;
}

// Solves the chains of this variant's joint count N.
@compute @workgroup_size(WORKGROUP_SIZE)
fn dls(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = variant_record(wg, li, 0u, false);
    if (i != NO_RECORD) {
        fallback_on_error(i, solve(i));
    }
}
