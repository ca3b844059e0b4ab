// Two-bone IK kernel: the WGSL twin of src/cpu/two_bone.rs. One invocation per chain.

#import records
#import chain
#import limb

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> chains: array<TwoBoneChain>;
@group(0) @binding(1) var<storage, read_write> solved: array<TwoBoneSolved>;
@group(0) @binding(2) var<uniform> dispatch: DispatchParams;

fn write_fk(i: u32, err: u32) {
    // unroll
    for (var k = 0u; k < 3u; k++) {
        solved[i].positions_ms[k] = finite_point(chains[i].joints_ms[k]);
        solved[i].rotations_ms[k] = finite_rotation(chains[i].rotations_ms[k]);
        solved[i].corrections[k] = Q_IDENTITY;
    }
    solved[i].status = vec4<u32>(0u, err, 0u, 3u);
}

// Returns 0 when solved (output written), else the ChainError code.
fn solve(i: u32) -> u32 {
    // The record, read once (every field of it is used). A mirrored chain is solved as its
    // unmirrored twin and its solved pose reflected back (option MIRRORED).
    var c = chains[i];
    let mirrored = has_option(c.limb.mode, OPT_MIRRORED);
    var err = 0u;
    // unroll
    for (var k = 0u; k < 3u; k++) {
        c.joints_ms[k] = mirror_point(c.joints_ms[k], mirrored);
        c.rotations_ms[k] = mirror_rotation(c.rotations_ms[k], mirrored);
        err = pose_error(err, c.joints_ms[k], c.rotations_ms[k]);
    }
    c.limb.target_ms = mirror_point(c.limb.target_ms, mirrored);
    c.limb.pole_ms = mirror_point(c.limb.pole_ms, mirrored);
    if (err != 0u) {
        return err;
    }
    if (!finite4(c.effector_offset)) {
        return ERR_NON_FINITE;
    }
    if (!in_range(c.effector_offset)) {
        return ERR_OUT_OF_RANGE;
    }
    let l = c.limb;
    let settings_err = check_limb_settings(l);
    if (settings_err != 0u) {
        return settings_err;
    }
    let weight = l.target_ms.w;
    let p0 = c.joints_ms[0].xyz;
    let p1 = c.joints_ms[1].xyz;
    let p2 = c.joints_ms[2].xyz;
    let r2 = c.rotations_ms[2];
    // End-effector offset: put the contact point, not the end joint, on the target.
    let target_pos = l.target_ms.xyz - quat_rotate(r2, c.effector_offset.xyz);
    let sol = solve_limb(p0, p1, p2, c.rotations_ms[1], target_pos, l);
    if (sol.err != 0u) {
        return sol.err;
    }
    if (weight <= 0.0) {
        write_fk(i, 0u);
        return 0u;
    }
    let d1 = quat_mul(sol.e0, sol.e1);
    var d2 = d1;
    if (has_option(l.mode, OPT_KEEP_END_ROTATION)) {
        d2 = Q_IDENTITY;
    }
    var rel = array<vec4<f32>, 3>(sol.e0, sol.e1, relative(d1, d2));
    let bones = array<vec3<f32>, 3>(p1 - p0, p2 - p1, vec3<f32>(0.0));
    var walk = Walk(Q_IDENTITY, p0);
    // unroll
    for (var k = 0u; k < 3u; k++) {
        let scale = select(1.0, sol.scale, k < 2u);
        let j = finish_joint(&walk, c.rotations_ms[k], rel[k], weight, bones[k], scale);
        solved[i].positions_ms[k] = mirror_point(j.position, mirrored);
        solved[i].rotations_ms[k] = mirror_rotation(j.rotation, mirrored);
        solved[i].corrections[k] = j.correction;
    }
    solved[i].status = vec4<u32>(select(0u, 1u, sol.reached && weight >= 1.0), 0u, sol.info, 3u);
    return 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn two_bone(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * dispatch.groups_x + wg.x) * WORKGROUP_SIZE + li;
    if (i >= dispatch.count) {
        return;
    }
    let err = solve(i);
    if (err != 0u) {
        write_fk(i, err);
    }
}
