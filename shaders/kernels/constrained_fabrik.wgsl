// Constrained FABRIK kernel (joint limits): the WGSL twin of src/cpu/constrained_fabrik.rs
// (FabrikMode::Fixed). Built per joint count like shaders/kernels/fabrik.wgsl (see its header), its
// forward pass unrolled, so every per-joint array is indexed by constants (indexed by the
// loop counter, lavapipe read and wrote them lane by lane: 22 % of this kernel's time). A
// 16-joint variant takes seconds to compile on lavapipe; pipelines are built per joint
// count on first use (or by GpuSolver::prepare).
//
// Each iteration: the free backward pass, then the limited forward pass (limits.wgsl's
// forward_joint): the last forward pass's rotations are the solution, so the limits hold
// whatever the iteration count; zero iterations project the FK pose onto the limits.

#import records
#import chain
#import limits
#import fabrik_chain
#import limited_chain

// Pipeline-overridable: this variant solves the chains with option ALIGN_HINGES (the host
// builds each joint count's variant twice; src/gpu/kinds.rs, variant_constants). A constant
// here, so the other variant carries no alignment code (lavapipe would run it masked).
override ALIGN: bool = false;


// Joint k turned about its own bone so that its child's hinge can point the child's bone
// along `toward` (cpu::constrained_fabrik::align_hinge; read them side by side). `f` = joint
// k's deltas, `fk` = its FK model rotation.
fn align_hinge(parent_delta: vec4<f32>, f: Forward, fk: vec4<f32>, bone: vec3<f32>, toward: vec3<f32>, limit: Limit, child: Limit) -> Forward {
    let axis = quat_rotate(f.delta, quat_rotate(quat_conj(child.frame), child.u));
    let across = axis - bone * dot(axis, bone);
    let a = dot(axis, bone) * dot(bone, toward);
    let b = dot(across, toward);
    let c = dot(cross(bone, across), toward);
    let r2 = b * b + c * c;
    if (!(r2 > 1e-12)) {
        return f;
    }
    let r = sqrt(r2);
    let cb = b / r;
    let sb = c / r;
    let cg = clamp(-a / r, -1.0, 1.0);
    let sg = sqrt(max(1.0 - cg * cg, 0.0));
    let c1 = cb * cg - sb * sg;
    let s1 = sb * cg + cb * sg;
    let c2 = cb * cg + sb * sg;
    let s2 = sb * cg - cb * sg;
    var cs = vec2<f32>(c2, s2);
    if (c1 >= c2) {
        cs = vec2<f32>(c1, s1);
    }
    let turned = quat_mul(quat_conj(parent_delta), quat_mul(quat_from_axis_cos_sin(bone, cs.x, cs.y), f.delta));
    var rel = normalize(turned);
    if (limit.kind != 0u) {
        rel = limit_relative(turned, fk, limit);
    }
    return Forward(normalize(quat_mul(parent_delta, rel)), rel);
}

// Solves chain i, whose joint count is N. Returns its error code (0: solved).
fn solve(i: u32) -> u32 {
    var fk: array<vec4<f32>, N>;
    var rot: array<vec4<f32>, N>;
    var len: array<f32, N>;
    var dir_fk: array<vec3<f32>, N>;
    var lim: array<Limit, N>;
    let l = load_limited(i, OPT_CONSTRAINED_FABRIK, &fk, &rot, &len, &dir_fk, &lim);
    if (l.err != 0u) {
        return l.err;
    }
    let weight = l.target_ms.w;
    if (weight <= 0.0) {
        write_fk(i, N, 0u);
        return 0u;
    }
    let base = fk[0].xyz;
    let target_pos = l.target_ms.xyz;
    var p: array<vec3<f32>, N>;
    for (var k = 0u; k < N; k++) {
        p[k] = fk[k].xyz;
    }
    let eps2 = 1e-12 * l.total * l.total;
    var rel: array<vec4<f32>, N>;
    var delta = Q_IDENTITY;
    let iters = iterations(l.mode);
    for (var it = 0u; it < max(iters, 1u); it++) {
        if (it < iters) {
            backward_pass(&p, target_pos, &len, &dir_fk, eps2);
        }
        // Forward, limited: root back on the base, each bone into its limit.
        p[0] = base;
        delta = Q_IDENTITY;
        // unroll
        for (var k = 0u; k < N - 1u; k++) {
            let want = normalize_or(p[k + 1u] - p[k], quat_rotate(delta, dir_fk[k]), eps2);
            var f = forward_joint(delta, rot[k], dir_fk[k], want, lim[k]);
            if (ALIGN && k + 2u < N && lim[min(k + 1u, N - 1u)].kind == LIMIT_HINGE) {
                let bone = normalize(quat_rotate(f.delta, dir_fk[k]));
                let toward = normalize_or(p[min(k + 2u, N - 1u)] - (p[k] + bone * len[k]), bone, eps2);
                f = align_hinge(delta, f, rot[k], bone, toward, lim[k], lim[min(k + 1u, N - 1u)]);
            }
            p[k + 1u] = p[k] + quat_rotate(f.delta, dir_fk[k]) * len[k];
            rel[k] = f.rel;
            delta = f.delta;
        }
    }
    let reached = length(p[N - 1u] - target_pos) <= l.params.x;
    let flags = select(0u, INFO_OUT_OF_REACH, length(target_pos - base) >= l.total);
    rel[N - 1u] = select(Q_IDENTITY, quat_conj(delta), has_option(l.mode, OPT_KEEP_END_ROTATION));
    write_solved(i, &fk, &rot, &rel, weight, reached, flags, l.mirrored);
    return 0u;
}

// Solves the chains of this variant's joint count N.
@compute @workgroup_size(WORKGROUP_SIZE)
fn constrained_fabrik(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = variant_record(wg, li, OPT_ALIGN_HINGES, ALIGN);
    if (i != NO_RECORD) {
        fallback_on_error(i, solve(i));
    }
}
