// Crowd foot IK, one invocation per character: the WGSL twin of src/cpu/foot_ik.rs.

#import crowd
#import limb
#import foot_ground
#import foot_state
#import foot_placement

const WORKGROUP_SIZE: u32 = 64u;

// Foot placement on (the rig has placement settings; SolverRig.grid.z is 1): set when the
// pipeline is made (src/gpu/crowd.rs), so a stateless rig's pipeline has none of the
// temporal code.
override PLACEMENT: bool = false;

fn check_character(c: u32, base: u32, n: u32) -> u32 {
    let ch = characters[c];
    if (!(finite4(ch.root_ws) && finite4(ch.root_rotation) && finite4(ch.foot_weights))) {
        return ERR_NON_FINITE;
    }
    let s = abs(ch.root_ws.w); // negative: a mirrored character
    if (!(s >= MIN_CHARACTER_SCALE && s <= MAX_CHARACTER_SCALE && in_world(ch.root_ws.xyz))) {
        return ERR_INVALID_PARAMETER;
    }
    if (!is_unit_quat(ch.root_rotation)) {
        return ERR_NOT_NORMALIZED;
    }
    // One pass over the pose, each joint read once; a non-finite joint anywhere wins over a
    // non-unit rotation anywhere (the CPU checks them in two passes, in that order).
    var non_finite = false;
    var not_unit = false;
    var outside = false;
    for (var j = 0u; j < n; j++) {
        let p = pose_in[base + j];
        non_finite = non_finite || !(finite4(p.position_ms) && finite4(p.rotation_ms));
        not_unit = not_unit || !is_unit_quat(p.rotation_ms);
        outside = outside || !in_world(p.position_ms.xyz);
    }
    if (non_finite) {
        return ERR_NON_FINITE;
    }
    if (outside) {
        return ERR_OUT_OF_RANGE;
    }
    if (not_unit) {
        return ERR_NOT_NORMALIZED;
    }
    return 0u;
}

// Weighted deltas of hip, knee, ankle per leg (leg * 3 + k), shared by the stages below
// (see `res` in shaders/shared/foot_ground.wgsl for why they are per-invocation variables).
var<private> rel: array<vec4<f32>, 12>;

// The stages as in src/cpu/foot_ik.rs (same names): find_ground -> drop_pelvis ->
// solve_legs (align_foot for the feet) -> write_pose -> measure_soles; with foot placement
// (shaders/shared/foot_placement.wgsl) begin_placement first, place_feet and spring_pelvis instead
// of the stateless targets and drop_pelvis, end_placement last.
fn solve_character(c: u32) {
    let n = rig_joint_count();
    let temporal = PLACEMENT;
    let base = c * n;
    res.pelvis = vec4<f32>(0.0);
    res.sole_before = vec4<f32>(0.0);
    res.sole_after = vec4<f32>(0.0);
    res.status = vec4<u32>(0u);
    let err = check_character(c, base, n);
    if (err != 0u) {
        for (var j = 0u; j < n; j++) {
            pose_out[base + j] = JointPose(finite_point(pose_in[base + j].position_ms), finite_rotation(pose_in[base + j].rotation_ms));
        }
        for (var l = 0u; l < LEGS; l++) {
            res.status[l] = err << 8u;
        }
        results[c] = res;
        if (temporal) {
            forget_state(c); // reset when the character is valid again
        }
        return;
    }
    // Subnormal foot weights and event times are 0 on every adapter (cpu::foot_ik::foot_ik).
    var ch = characters[c];
    ch.foot_weights = flush_subnormal4(ch.foot_weights);
    ch.foot_event_times = flush_subnormal4(ch.foot_event_times);
    let root = Root(ch.root_ws.xyz, abs(ch.root_ws.w), ch.root_rotation, select(1.0, -1.0, ch.root_ws.w < 0.0));
    if (!temporal) {
        find_ground(c, base, ch, root, false);
        let drop_ms = drop_pelvis(root);
        solve_legs(base, ch.foot_weights, root, drop_ms);
        write_pose(base, drop_ms);
        measure_soles(base, root);
        results[c] = res;
        return;
    }
    pl_c = c;
    begin_placement(ch, root);
    find_ground(c, base, ch, root, true);
    // The character where a root snap left it: its FK feet, hips and the pelvis goal.
    let held = Root(root.t + vec3<f32>(0.0, pl_held.x, 0.0), root.s, root.q, root.m);
    place_feet(base, ch, held);
    let drop_ms = spring_pelvis(root);
    solve_legs(base, vec4<f32>(1.0), root, drop_ms);
    write_pose(base, drop_ms);
    measure_soles(base, root);
    end_placement();
    results[c] = res;
}

// Ground: the ground under each FK foot inside the step window, the FK sole height above
// it, and (stateless) the weighted drop each foot needs. With foot placement the targets
// are left to place_feet. On a heightfield a two-bone foot's normal is sole_ground's: the
// sole's own slope over the ground under it (src/cpu/foot_ik.rs).
fn find_ground(c: u32, base: u32, ch: CharacterInput, root: Root, temporal: bool) {
    for (var l = 0u; l < MAX_LEGS; l++) {
        ground.hit[l] = false;
        ground.aimed[l] = false;
        ground.point[l] = vec3<f32>(0.0);
        ground.normal[l] = vec3<f32>(0.0, 1.0, 0.0);
        ground.aim[l] = vec3<f32>(0.0);
        ground.turn[l] = Q_IDENTITY;
        ground.limited[l] = false;
    }
    ground.drop = 0.0;
    if (LEGS > 0u) { find_leg(c, base, ch, root, temporal, 0u); }
    if (LEGS > 1u) { find_leg(c, base, ch, root, temporal, 1u); }
    if (LEGS > 2u) { find_leg(c, base, ch, root, temporal, 2u); }
    if (LEGS > 3u) { find_leg(c, base, ch, root, temporal, 3u); }
}

// find_ground for leg l (which first reads the leg's FK joints for every stage).
fn find_leg(c: u32, base: u32, ch: CharacterInput, root: Root, temporal: bool, l: u32) {
    let step_up = rig_max_step_up();
    let step_down = rig_max_step_down();
    let leg = rig.legs[l];
    let three = three_bone(l);
    load_leg_fk(base, leg, l);
    let ref_ws = to_world(root, reference_fk(l));
    let h = leg.knee_axis.w;
    let g = ground_query(c, l, ref_ws.x, ref_ws.z);
    // A heightfield has no overhangs: ground above the step-up window means the foot is
    // inside the terrain (flagged). It stands on that ground where the hip is above it;
    // ground above the hip is a wall, and the foot keeps its FK pose.
    let under = g.found && !(g.point.y <= ref_ws.y + step_up) && !GROUND_HITS;
    if (under) {
        res.status[l] = res.status[l] | FOOT_UNDER_GROUND;
        if (!(g.point.y < to_world(root, legs_fk[l].hip).y)) {
            return;
        }
    }
    if (!(g.found && (under || g.point.y <= ref_ws.y + step_up) && g.point.y >= ref_ws.y - step_down)) {
        return;
    }
    ground.hit[l] = true;
    res.status[l] = res.status[l] | FOOT_HIT;
    let up_ms = quat_rotate(legs_fk[l].ankle_rotation, leg.foot_up.xyz);
    let toe_ws = to_world(root, legs_fk[l].toe);
    let toe_dir = dir_to_world(root, legs_fk[l].toe_dir);
    ground.point[l] = g.point;
    var gn = g.normal;
    if (!GROUND_HITS && !three) {
        // The heel and tip (and the sole between them) sampled once for both the FK sole
        // height and the normal the foot aligns to (sole_ground).
        let up = dir_to_world(root, up_ms);
        let ends = sole_ends(ref_ws, toe_ws - ref_ws, up, h, leg.sole.xy, toe_dir);
        // A locked foot's sole measured where the lock holds it (one sole_ground either
        // way: lanes that differ run one call), and so its FK sole height over the ground
        // there.
        var at = ends;
        let locked = temporal && !pl_snap && (st.flags & state_bit(STATE_LOCKED_SHIFT, l)) != 0u;
        if (locked) {
            at = locked_sole(l, ends, ref_ws, toe_ws);
        }
        let sole = sole_ground(g.point, g.normal, at.heel, at.tip);
        res.sole_before[l] = sole.gap;
        if (any(at.tip != at.ball)) {
            res.sole_before[l] = min(sole.gap, above(g.point, g.normal, at.ball));
        }
        gn = sole.normal;
        // Measured again where the foot will stand: turned to that normal about its ankle,
        // the ankle over the ground point along the normal (or where the lock holds it, spun
        // about the normal to the locked heading as the lock holds it); a ball-pivot foot,
        // or one the turn moves by less than SOLE_SETTLE_MIN, keeps the first normal
        // (src/cpu/foot_ik.rs).
        if (!ball_pivot(l) && rig_sole_once() == 0u) {
            let turn = align_foot(leg, legs_fk[l].ankle_rotation, normalize(dir_to_model(root, sole.normal)), model_up(root));
            var anchor = g.point + sole.normal * h;
            if (locked) {
                anchor = ref_ws;
            }
            let toe_off = legs_fk[l].toe - legs_fk[l].ankle;
            var turned = turned_sole(root, anchor, turn.q, up_ms, toe_off, h, leg.sole.xy, legs_fk[l].toe_dir);
            if (locked) {
                turned = locked_turned_sole(l, turned, ref_ws, dir_to_world(root, quat_rotate(turn.q, toe_off)), sole.normal);
            }
            let moved = max(abs(turned.heel - at.heel).xz, abs(turned.tip - at.tip).xz);
            // Blended in over a move of one to two SOLE_SETTLE_MIN (continuous).
            let s = min((max(moved.x, moved.y) - SOLE_SETTLE_MIN) / SOLE_SETTLE_MIN, 1.0);
            if (s > 0.0) {
                let again = sole_ground(g.point, g.normal, turned.heel, turned.tip).normal;
                if (s < 1.0) {
                    gn = normalize(gn + (again - gn) * s);
                } else {
                    gn = again;
                }
            }
        }
    } else if (three) {
        let sole = ref_ws - vec3<f32>(0.0, 1.0, 0.0) * h;
        res.sole_before[l] = sole.y - ground_height(g.point, g.normal, sole.x, sole.z);
    } else {
        res.sole_before[l] = sole_height(g.point, g.normal, ref_ws, toe_ws, dir_to_world(root, up_ms), h, leg.sole.xy, toe_dir);
    }
    ground.normal[l] = gn;
    if (temporal) {
        return;
    }
    // A lifted foot (weight <= 0) keeps its FK pose and asks nothing of the pelvis.
    let w = ch.foot_weights[l];
    if (!(w > 0.0)) {
        return;
    }
    ground.aimed[l] = true;
    var target_ws = g.point + gn * h;
    if (!three) {
        // The whole sole on the ground: the lowest point of the sole, of the foot turned as
        // align_foot will turn it to the sole's normal, touches the ground under it (see
        // src/cpu/foot_ik.rs).
        let turn = align_foot(leg, legs_fk[l].ankle_rotation, normalize(dir_to_model(root, gn)), model_up(root));
        ground.turn[l] = turn.q;
        ground.limited[l] = turn.limited;
        let toe_off = legs_fk[l].toe - legs_fk[l].ankle;
        target_ws = sole_target(root, g.point, gn, turn.q, up_ms, toe_off, h, leg.sole.xy, legs_fk[l].toe_dir);
    }
    ground.aim[l] = target_ws;
    var need = ref_ws.y - target_ws.y;
    if (!three) {
        let hip_ws = to_world(root, legs_fk[l].hip);
        need = max(need, reach_drop(leg_reach(l, leg, root.s), hip_ws, target_ws));
    }
    ground.drop = max(ground.drop, need * min(w, 1.0));
}

fn drop_pelvis(root: Root) -> vec3<f32> {
    let drop = clamp(ground.drop, 0.0, rig_max_pelvis_drop());
    res.pelvis.x = drop;
    return dir_to_model(root, vec3<f32>(0.0, -drop, 0.0)) / root.s;
}

// Legs: leg IK per leg with ground and weight (two-bone with its foot aligned, or pseudo
// three-bone), the knee pole from the rig's rule.
fn solve_legs(base: u32, weights: vec4<f32>, root: Root, drop_ms: vec3<f32>) {
    for (var k = 0u; k < 12u; k++) {
        rel[k] = Q_IDENTITY;
    }
    if (LEGS > 0u) { solve_leg(base, weights, root, drop_ms, 0u); }
    if (LEGS > 1u) { solve_leg(base, weights, root, drop_ms, 1u); }
    if (LEGS > 2u) { solve_leg(base, weights, root, drop_ms, 2u); }
    if (LEGS > 3u) { solve_leg(base, weights, root, drop_ms, 3u); }
}

// solve_legs for leg l.
fn solve_leg(base: u32, weights: vec4<f32>, root: Root, drop_ms: vec3<f32>, l: u32) {
    let w = weights[l];
    if (!ground.aimed[l]) {
        return;
    }
    let leg = rig.legs[l];
    let three = three_bone(l);
    let p0 = legs_fk[l].hip + drop_ms;
    let p1 = legs_fk[l].knee + drop_ms;
    let p2 = legs_fk[l].ankle + drop_ms;
    let p3 = legs_fk[l].toe + drop_ms;
    let target_ms = to_model(root, ground.aim[l]);
    // Knee pole: toward the FK knee (a straight FK leg keeps its FK plane), the FK plane,
    // or a fixed model-space direction.
    let knee_dir = reject(p1 - p0, normalize_or(p2 - p0, vec3<f32>(0.0, 1.0, 0.0), 0.0));
    var pole_mode = POLE_FK_PLANE;
    var pole = vec3<f32>(0.0);
    let rule = leg_pole_rule(leg.mode);
    if (rule == KNEE_POLE_FK_KNEE && dot(knee_dir, knee_dir) > 1e-6 * dot(p1 - p0, p1 - p0)) {
        pole_mode = POLE_DIRECTION;
        pole = knee_dir;
    } else if (rule == KNEE_POLE_DIRECTION) {
        pole_mode = POLE_DIRECTION;
        pole = leg.pole.xyz;
    }
    var limb: LimbSettings;
    limb.target_ms = vec4<f32>(target_ms, w);
    limb.pole_ms = vec4<f32>(pole, 0.0);
    limb.mid_axis = vec4<f32>(leg.knee_axis.xyz, 0.0);
    limb.params = vec4<f32>(1.0, 1.0, leg.limits.x, leg.limits.y);
    limb.mode = vec4<u32>(pole_mode, BEND_HINGE, leg_options(leg.mode) & OPT_KNEE_LIMITS, 0u);
    var e = array<vec4<f32>, 3>(Q_IDENTITY, Q_IDENTITY, Q_IDENTITY);
    var reached = false;
    var info = 0u;
    var leg_err = 0u;
    if (three) {
        let sol = solve_three_bone_core(p0, p1, p2, p3, legs_fk[l].knee_rotation, legs_fk[l].ankle_rotation, target_ms,
            leg.foot_up.w, false, limb);
        leg_err = sol.err;
        e = array<vec4<f32>, 3>(sol.e0, sol.e1, sol.e2);
        reached = sol.reached;
        info = sol.info;
    } else {
        let sol = solve_limb(p0, p1, p2, legs_fk[l].knee_rotation, target_ms, limb);
        leg_err = sol.err;
        if (sol.err == 0u) {
            if (ground.limited[l]) {
                res.status[l] = res.status[l] | FOOT_ANGLE_LIMITED;
            }
            let d1 = quat_mul(sol.e0, sol.e1);
            e = array<vec4<f32>, 3>(sol.e0, sol.e1, quat_mul(quat_conj(d1), ground.turn[l]));
            reached = sol.reached;
            info = sol.info;
        }
    }
    if (leg_err == 0u) {
        for (var k = 0u; k < 3u; k++) {
            rel[l * 3u + k] = nlerp_identity(e[k], w);
        }
        res.status[l] = res.status[l] | FOOT_SOLVED;
        if (reached && w >= 1.0) {
            res.status[l] = res.status[l] | FOOT_REACHED;
        }
        if ((info & INFO_KNEE_LIMITED) != 0u) {
            res.status[l] = res.status[l] | FOOT_KNEE_LIMITED;
        }
        if ((info & INFO_AGAINST_HINGE) != 0u) {
            res.status[l] = res.status[l] | FOOT_AGAINST_HINGE;
        }
    } else {
        res.status[l] = (res.status[l] & ~FOOT_ANGLE_LIMITED) | (leg_err << 8u);
    }
}

// Pose: the corrected pose, parents first: the pelvis drops, everything below follows,
// leg joints turn by their deltas.
fn write_pose(base: u32, drop_ms: vec3<f32>) {
    let n = rig_joint_count();
    let pelvis = rig_pelvis();
    for (var j = 0u; j < n; j++) {
        let fk = pose_in[base + j];
        let parent = rb.joint_table[j];
        let role = rb.joint_table[n + j];
        var e = Q_IDENTITY;
        if (role != NONE) {
            e = rel[(role / 4u) * 3u + (role % 4u)];
        }
        var pos: vec3<f32>;
        var delta: vec4<f32>;
        if (j == pelvis) {
            pos = fk.position_ms.xyz + drop_ms;
            delta = e;
        } else if (parent == NONE) {
            pos = fk.position_ms.xyz;
            delta = e;
        } else {
            let parent_out = pose_out[base + parent];
            let parent_in = pose_in[base + parent];
            let dp = quat_mul(parent_out.rotation_ms, quat_conj(parent_in.rotation_ms));
            pos = parent_out.position_ms.xyz + quat_rotate(dp, fk.position_ms.xyz - parent_in.position_ms.xyz);
            delta = quat_mul(dp, e);
        }
        pose_out[base + j] = JointPose(vec4<f32>(pos, 1.0), normalize(quat_mul(delta, fk.rotation_ms)));
    }
}

// The sole height above the ground after IK, per leg with ground.
fn measure_soles(base: u32, root: Root) {
    if (LEGS > 0u) { measure_sole(base, root, 0u); }
    if (LEGS > 1u) { measure_sole(base, root, 1u); }
    if (LEGS > 2u) { measure_sole(base, root, 2u); }
    if (LEGS > 3u) { measure_sole(base, root, 3u); }
}

// measure_soles for leg l.
fn measure_sole(base: u32, root: Root, l: u32) {
    if (!ground.hit[l]) {
        return;
    }
    let leg = rig.legs[l];
    let three = three_bone(l);
    let ref_ws = to_world(root, pose_out[base + reference_joint(leg, l)].position_ms.xyz);
    let h = leg.knee_axis.w;
    if (three) {
        let sole = ref_ws - vec3<f32>(0.0, 1.0, 0.0) * h;
        res.sole_after[l] = sole.y - ground_height(ground.point[l], ground.normal[l], sole.x, sole.z);
    } else {
        let up = dir_to_world(root, quat_rotate(pose_out[base + leg.joints.z].rotation_ms, leg.foot_up.xyz));
        let toe = pose_out[base + leg.joints.w];
        let toe_dir = dir_to_world(root, toe_dir_ms(leg, toe.rotation_ms));
        let ends = sole_ends(ref_ws, to_world(root, toe.position_ms.xyz) - ref_ws, up, h, leg.sole.xy, toe_dir);
        let p = ground.point[l];
        let n = ground.normal[l];
        res.sole_after[l] = min(min(above(p, n, ends.heel), above(p, n, ends.ball)), above(p, n, ends.tip));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn foot_ik(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    rig = rb.rig; // before any branch: see `rig`
    frame = rb.frame;
    let c = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (c >= dispatch.count) {
        return;
    }
    solve_character(c);
}

