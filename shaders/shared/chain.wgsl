// Stages shared by every kernel: the WGSL twin of src/cpu/chain.rs.

#import math

// Running state of finish_joint down a chain.
struct Walk {
    delta: vec4<f32>,
    pos: vec3<f32>,
}

struct JointOut {
    position: vec4<f32>,
    rotation: vec4<f32>,
    correction: vec4<f32>,
}

// The reflection x → −x of option MIRRORED where `m` (records::mirror_point and
// mirror_rotation): a point or direction has its x negated, a rotation its y and z. Exact.
fn mirror_point(p: vec4<f32>, m: bool) -> vec4<f32> {
    return select(p, vec4<f32>(-p.x, p.yzw), m);
}

fn mirror_rotation(q: vec4<f32>, m: bool) -> vec4<f32> {
    return select(q, vec4<f32>(q.x, -q.yz, q.w), m);
}

// One joint of the finishing stage (see finish_joint in src/cpu/chain.rs).
fn finish_joint(walk: ptr<function, Walk>, r: vec4<f32>, rel: vec4<f32>, weight: f32, bone: vec3<f32>, scale: f32) -> JointOut {
    let e = nlerp_identity(rel, weight);
    (*walk).delta = quat_mul((*walk).delta, e);
    var out: JointOut;
    out.position = vec4<f32>((*walk).pos, 1.0);
    out.rotation = normalize(quat_mul((*walk).delta, r));
    out.correction = quat_mul(quat_mul(quat_conj(r), e), r);
    (*walk).pos = (*walk).pos + quat_rotate((*walk).delta, bone) * (1.0 + (scale - 1.0) * clamp(weight, 0.0, 1.0));
    return out;
}

fn relative(parent_total: vec4<f32>, total: vec4<f32>) -> vec4<f32> {
    return quat_mul(quat_conj(parent_total), total);
}
