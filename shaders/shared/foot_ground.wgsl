// Crowd foot IK's inputs, ground and foot geometry: the bindings and per-invocation values
// of the foot-IK kernel (the rig, the frame, the character's result and ground) and the
// stages both the stateless frame (shaders/kernels/foot_ik.wgsl) and foot placement
// (shaders/shared/foot_placement.wgsl) use, which both import it (never the other way).
// The WGSL twin of src/cpu/foot_ground.rs.

#import crowd
#import math

// The rig's leg count (SolverRig.header.z), also set with the pipeline: every stage's loop
// over legs is written out as calls with constant leg indices (`if (LEGS > k)`, folded when
// the pipeline is made), so the per-leg arrays below stay in registers rather than memory
// indexed at run time (lavapipe ran the foot-placement kernel ~7 % faster for it).
override LEGS: u32 = 4u;

// What each leg is, also from the rig: bit 8·l set when leg l is a pseudo three-bone leg
// (SolverLeg.mode.x), bit 8·l + 1 when it pivots about the ball (PIVOT_BALL), bit 8·l + 2
// when a two-bone leg locks the end of its sole on the ground (PIVOT_SOLE); and whether
// the ground comes from per-foot hits (SolverRig.header.w). With the legs written out these
// fold, so a biped's kernel has no hoof code and a heightfield's no hit code.
override LEG_KINDS: u32 = 0u;
override GROUND_HITS: bool = false;

fn three_bone(l: u32) -> bool {
    return ((LEG_KINDS >> (8u * l)) & 1u) != 0u;
}

fn ball_pivot(l: u32) -> bool {
    return ((LEG_KINDS >> (8u * l)) & 2u) != 0u;
}

fn sole_pivot(l: u32) -> bool {
    return ((LEG_KINDS >> (8u * l)) & 4u) != 0u;
}

// Read-only storage rather than uniform: lavapipe specialises shaders on small uniform
// buffers' contents, which cost this kernel ~75 ms per dispatch there.
// The rig, this frame's time and the joint table share one buffer (the kernel binds eight
// storage buffers, WebGPU's default limit per stage). The frame time lives in storage, not
// in the uniform: lavapipe specialises on uniform contents, and dt changes every frame.
struct RigBuffer {
    rig: SolverRig,
    frame: FrameInput,
    joint_table: array<u32>,  // parents, then roles
}

@group(0) @binding(0) var<storage, read> rb: RigBuffer;

// The rig and the frame, read from `rb` once at the top of the kernel, outside any branch or
// loop, and used from these copies everywhere else. Mesa's llvmpipe (lavapipe) loads a
// storage-buffer value the whole SIMD batch shares with one scalar load only where no branch
// or loop masks the invocations; inside one (every stage of this kernel) it loads it lane by
// lane, and the rig's settings are read in nearly every stage: the copies made the stateless
// crowd frame ~5 % and the foot-placement frame ~8 % faster there (BENCHMARKS.md).
var<private> rig: SolverRig;
var<private> frame: FrameInput;
@group(0) @binding(1) var<storage, read> characters: array<CharacterInput>;
@group(0) @binding(2) var<storage, read> pose_in: array<JointPose>;
@group(0) @binding(3) var<storage, read_write> pose_out: array<JointPose>;
@group(0) @binding(4) var<storage, read_write> results: array<FootResult>;
@group(0) @binding(5) var<storage, read> heights: array<f32>;
@group(0) @binding(6) var<storage, read> hits: array<GroundHit>;
// Foot placement's state buffer, binding 7: shaders/shared/foot_state.wgsl.
@group(0) @binding(8) var<uniform> dispatch: DispatchParams;

// Named reads of the rig's packed words (SolverRig in src/crowd/records.rs has the same
// names as methods).
fn rig_joint_count() -> u32 { return rig.header.x; }
fn rig_pelvis() -> u32 { return rig.header.y; }
fn rig_leg_count() -> u32 { return rig.header.z; }
fn rig_ground_mode() -> u32 { return rig.header.w; }
fn rig_grid_x() -> u32 { return rig.grid.x; }
fn rig_grid_z() -> u32 { return rig.grid.y; }
fn rig_placement() -> u32 { return rig.grid.z; }
fn rig_sole_once() -> u32 { return rig.grid.w; }
fn rig_origin_x() -> f32 { return rig.ground.x; }
fn rig_origin_z() -> f32 { return rig.ground.y; }
fn rig_cell() -> f32 { return rig.ground.z; }
fn rig_max_pelvis_drop() -> f32 { return rig.params.x; }
fn rig_max_step_up() -> f32 { return rig.params.y; }
fn rig_max_step_down() -> f32 { return rig.params.z; }
fn rig_swing_lookahead() -> f32 { return rig.params.w; }
fn rig_pelvis_half_life() -> f32 { return rig.springs.x; }
fn rig_pelvis_max_speed() -> f32 { return rig.springs.y; }
fn rig_pelvis_max_rise() -> f32 { return rig.springs.z; }
fn rig_ground_half_life() -> f32 { return rig.springs.w; }
fn rig_ground_tolerance() -> f32 { return rig.blend.x; }
fn rig_weight_blend_time() -> f32 { return rig.blend.y; }
fn rig_max_reach() -> f32 { return rig.blend.z; }
fn rig_root_snap_speed() -> f32 { return rig.blend.w; }
// A leg's packed `mode` word by name (SolverLeg's accessors).
fn leg_options(mode: vec4<u32>) -> u32 { return mode.y; }
fn leg_pole_rule(mode: vec4<u32>) -> u32 { return mode.z; }
fn leg_plant_detection(mode: vec4<u32>) -> u32 { return mode.w & 0xffu; }

struct Ground {
    found: bool,
    point: vec3<f32>,
    normal: vec3<f32>,
}

struct HeightSample {
    found: bool,
    height: f32,
    normal: vec3<f32>,
}

fn sample_heightfield(x: f32, z: f32) -> HeightSample {
    var out = HeightSample(false, 0.0, vec3<f32>(0.0, 1.0, 0.0));
    let nx = rig_grid_x();
    let nz = rig_grid_z();
    let u = (x - rig_origin_x()) / rig_cell();
    let v = (z - rig_origin_z()) / rig_cell();
    if (!(u >= 0.0 && v >= 0.0 && u <= f32(nx - 1u) && v <= f32(nz - 1u))) {
        return out;
    }
    let i = min(u32(u), nx - 2u); // u, v >= 0: truncation is floor
    let j = min(u32(v), nz - 2u);
    let fx = u - f32(i);
    let fz = v - f32(j);
    let h00 = heights[j * nx + i];
    let h10 = heights[j * nx + i + 1u];
    let h01 = heights[(j + 1u) * nx + i];
    let h11 = heights[(j + 1u) * nx + i + 1u];
    if (!finite4(vec4<f32>(h00, h10, h01, h11))) {
        return out;
    }
    let h0 = h00 + (h10 - h00) * fx;
    let h1 = h01 + (h11 - h01) * fx;
    out.found = true;
    out.height = h0 + (h1 - h0) * fz;
    // Within HEIGHTFIELD_EDGE_BAND of a cell of an edge the slope across it blends into the
    // neighbour's (continuous; src/crowd/ground.rs).
    let band = HEIGHTFIELD_EDGE_BAND;
    var dhdx = (h10 - h00) * (1.0 - fz) + (h11 - h01) * fz;
    var dhdz = (h01 - h00) * (1.0 - fx) + (h11 - h10) * fx;
    // One test for both axes (lanes seldom take the branch).
    if (min(min(fx, 1.0 - fx), min(fz, 1.0 - fz)) < band) {
        if (fx < band && i > 0u) {
            let other = (h00 - heights[j * nx + i - 1u]) * (1.0 - fz) + (h01 - heights[(j + 1u) * nx + i - 1u]) * fz;
            if (finite4(vec4<f32>(other))) {
                dhdx = other + (dhdx - other) * (0.5 + 0.5 * fx / band);
            }
        } else if (fx > 1.0 - band && i + 2u < nx) {
            let other = (heights[j * nx + i + 2u] - h10) * (1.0 - fz) + (heights[(j + 1u) * nx + i + 2u] - h11) * fz;
            if (finite4(vec4<f32>(other))) {
                dhdx = other + (dhdx - other) * (0.5 + 0.5 * (1.0 - fx) / band);
            }
        }
        if (fz < band && j > 0u) {
            let other = (h00 - heights[(j - 1u) * nx + i]) * (1.0 - fx) + (h10 - heights[(j - 1u) * nx + i + 1u]) * fx;
            if (finite4(vec4<f32>(other))) {
                dhdz = other + (dhdz - other) * (0.5 + 0.5 * fz / band);
            }
        } else if (fz > 1.0 - band && j + 2u < nz) {
            let other = (heights[(j + 2u) * nx + i] - h01) * (1.0 - fx) + (heights[(j + 2u) * nx + i + 1u] - h11) * fx;
            if (finite4(vec4<f32>(other))) {
                dhdz = other + (dhdz - other) * (0.5 + 0.5 * (1.0 - fz) / band);
            }
        }
    }
    out.normal = normalize(vec3<f32>(-dhdx / rig_cell(), 1.0, -dhdz / rig_cell()));
    return out;
}

// x, y and z within +-MAX_WORLD_COORDINATE.
fn in_world(v: vec3<f32>) -> bool {
    return all(abs(v) <= vec3<f32>(MAX_WORLD_COORDINATE));
}

fn ground_query(c: u32, leg: u32, x: f32, z: f32) -> Ground {
    var out = Ground(false, vec3<f32>(0.0), vec3<f32>(0.0, 1.0, 0.0));
    if (!GROUND_HITS) {
        let s = sample_heightfield(x, z);
        out.found = s.found;
        out.point = vec3<f32>(x, s.height, z);
        out.normal = s.normal;
        return out;
    }
    let hit = hits[c * MAX_LEGS + leg];
    let usable = finite4(hit.point_ws) && finite4(hit.normal_ws) && hit.point_ws.w > 0.5;
    if (!(usable && in_world(hit.point_ws.xyz) && in_world(hit.normal_ws.xyz))) {
        return out;
    }
    let n = hit.normal_ws.xyz;
    if (!(dot(n, n) >= MIN_NORMAL_LENGTH2 && n.y > MIN_GROUND_NORMAL_Y * length(n))) {
        return out;
    }
    out.found = true;
    out.point = hit.point_ws.xyz;
    out.normal = normalize(n);
    return out;
}

fn ground_height(point: vec3<f32>, normal: vec3<f32>, x: f32, z: f32) -> f32 {
    if (!GROUND_HITS) {
        let s = sample_heightfield(x, z);
        if (s.found) {
            return s.height;
        }
    }
    return point.y - (normal.x * (x - point.x) + normal.z * (z - point.z)) / normal.y;
}

// A two-bone foot's sole (world): the heel, h down the foot's up axis from the ankle and
// reach.x further back; the ball, the toe joint (toe_off from the ankle) brought down to the
// sole plane; the tip, reach.y past the ball along the toe's own direction toe_dir (a
// shoe's front bends with its toe joint; zero: straight on with the foot). SolverLeg.sole:
// where a shoe reaches past its joints. src/cpu/foot_ground.rs.
struct Sole {
    heel: vec3<f32>,
    ball: vec3<f32>,
    tip: vec3<f32>,
}

fn sole_ends(ankle: vec3<f32>, toe_off: vec3<f32>, up: vec3<f32>, h: f32, reach: vec2<f32>, toe_dir: vec3<f32>) -> Sole {
    let under = ankle - up * h;
    let forward = reject(toe_off, up);
    let ball = under + forward;
    if (all(reach == vec2<f32>(0.0))) {
        return Sole(under, ball, ball); // a rig from a skeleton alone
    }
    let dir = normalize_or(forward, vec3<f32>(0.0), 1e-12);
    let past = normalize_or(toe_dir, dir, 1e-12);
    return Sole(under - dir * reach.x, ball, ball + past * reach.y);
}

// Height above the ground of a two-bone foot's sole: of its lowest point from the heel to
// the tip (sole_ends).
fn sole_height(point: vec3<f32>, normal: vec3<f32>, ankle: vec3<f32>, toe: vec3<f32>, up: vec3<f32>, h: f32, reach: vec2<f32>, toe_dir: vec3<f32>) -> f32 {
    return sole_gap(point, normal, sole_ends(ankle, toe - ankle, up, h, reach, toe_dir));
}

// The toe's direction past the ball (model space) for the toe joint's rotation; zero for a
// leg whose sole does not reach past the ball (src/cpu/foot_ground.rs).
fn toe_dir_ms(leg: SolverLeg, toe_rotation: vec4<f32>) -> vec3<f32> {
    if (all(leg.toe.xyz == vec3<f32>(0.0))) {
        return vec3<f32>(0.0);
    }
    return quat_rotate(toe_rotation, leg.toe.xyz);
}

// A model-space toe direction turned by `turn`, in world space (zero stays zero).
fn toe_dir_ws(root: Root, turn: vec4<f32>, dir_ms: vec3<f32>) -> vec3<f32> {
    if (all(dir_ms == vec3<f32>(0.0))) {
        return vec3<f32>(0.0);
    }
    return dir_to_world(root, quat_rotate(turn, dir_ms));
}

// Height of world point p above the ground under it.
fn above(point: vec3<f32>, normal: vec3<f32>, p: vec3<f32>) -> f32 {
    return p.y - ground_height(point, normal, p.x, p.z);
}

// Where a sole is measured between heel and ball on a heightfield (src/cpu/foot_ik.rs,
// SolePoints), in order from the heel: where it crosses the grid's lines and midway between
// each two of those points, or SOLE_POINTS evenly spaced when it crosses more than
// SOLE_CROSSINGS lines; none on caller hits. The walk's state is in the struct.
struct SolePoints {
    u: vec2<f32>,
    v: vec2<f32>,
    first: vec2<f32>,
    step: vec2<f32>,
    cu: u32,
    cv: u32,
    count: u32,
    even: bool,
    iu: u32,
    iv: u32,
    prev: f32,
    k: u32,
}

fn sole_points(heel: vec3<f32>, ball: vec3<f32>) -> SolePoints {
    let cell = rig_cell();
    let u = vec2<f32>((heel.x - rig_origin_x()) / cell, (ball.x - rig_origin_x()) / cell);
    let v = vec2<f32>((heel.z - rig_origin_z()) / cell, (ball.z - rig_origin_z()) / cell);
    // Lines crossed: those in (heel, ball], from the heel's side.
    let fu = floor(u);
    let fv = floor(v);
    var first = vec2<f32>(fu.x + 1.0, fv.x + 1.0);
    var step = vec2<f32>(1.0, 1.0);
    var cu = fu.y - fu.x;
    var cv = fv.y - fv.x;
    if (!(u.y >= u.x)) {
        first.x = fu.x;
        step.x = -1.0;
        cu = fu.x - fu.y;
    }
    if (!(v.y >= v.x)) {
        first.y = fv.x;
        step.y = -1.0;
        cv = fv.x - fv.y;
    }
    var out = SolePoints(u, v, first, step, 0u, 0u, 0u, false, 0u, 0u, 0.0, 0u);
    if (GROUND_HITS) {
        return out;
    }
    if (!(cu + cv <= f32(SOLE_CROSSINGS))) {
        out.count = SOLE_POINTS;
        out.even = true;
    } else {
        out.cu = u32(cu);
        out.cv = u32(cv);
        out.count = 2u * (out.cu + out.cv) + 1u;
    }
    return out;
}

// The next point of a sole (call count times), as the fraction of the way from heel to ball.
fn sole_next(p: ptr<function, SolePoints>) -> f32 {
    (*p).k += 1u;
    if ((*p).even) {
        return f32((*p).k) / f32(SOLE_POINTS + 1u);
    }
    var tu = 1.0;
    if ((*p).iu < (*p).cu) {
        tu = ((*p).first.x + (*p).step.x * f32((*p).iu) - (*p).u.x) / ((*p).u.y - (*p).u.x);
    }
    var tv = 1.0;
    if ((*p).iv < (*p).cv) {
        tv = ((*p).first.y + (*p).step.y * f32((*p).iv) - (*p).v.x) / ((*p).v.y - (*p).v.x);
    }
    let t = min(tu, tv);
    if ((*p).k % 2u == 1u) {
        return 0.5 * ((*p).prev + t);
    }
    if ((*p).iu < (*p).cu && ((*p).iv >= (*p).cv || tu <= tv)) {
        (*p).iu += 1u;
    } else {
        (*p).iv += 1u;
    }
    (*p).prev = t;
    return t;
}

// Height above the ground of the lowest point of a sole (world): the rigid part from heel
// to ball and the part past the ball to the tip, each segment's ends and the sole points
// between them (src/cpu/foot_ground.rs).
fn sole_gap(point: vec3<f32>, normal: vec3<f32>, sole: Sole) -> f32 {
    let gap = segment_gap(point, normal, sole.heel, sole.ball);
    if (any(sole.tip != sole.ball)) {
        return min(gap, segment_gap(point, normal, sole.ball, sole.tip));
    }
    return gap;
}

// Height above the ground of the lowest point of the straight segment a → b (world): its
// ends and the sole points between them.
fn segment_gap(point: vec3<f32>, normal: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> f32 {
    var gap = min(above(point, normal, a), above(point, normal, b));
    var points = sole_points(a, b);
    for (var k = 0u; k < points.count; k++) {
        let p = a + (b - a) * sole_next(&points);
        gap = min(gap, above(point, normal, p));
    }
    return gap;
}

// What sole_ground finds: the sole's lowest point above the ground, the normal to align to.
struct SoleGround {
    gap: f32,
    normal: vec3<f32>,
}

// A ground normal's weight in sole_ground's reference: n.y^8.
fn flat_weight(n: vec3<f32>) -> f32 {
    let y2 = n.y * n.y;
    let y4 = y2 * y2;
    return y4 * y4;
}

// The ground under a two-bone foot whose sole runs from heel to ball on a heightfield
// (src/cpu/foot_ik.rs): the normals under ankle, heel and ball averaged as slopes weighted
// by n.y^8, the slope along the foot replaced by the chord's from heel to ball on gentle
// ground (both touch) and by the ground's upper hull's where a step rises under the sole.
fn sole_ground(gp: vec3<f32>, n: vec3<f32>, heel: vec3<f32>, ball: vec3<f32>) -> SoleGround {
    let d = vec3<f32>(ball.x - heel.x, 0.0, ball.z - heel.z);
    let len = length(d);
    var found = true;
    // Heel and ball first: their heights, and their normals in the reference slope.
    var sum_w = flat_weight(n);
    var sum_x = sum_w * (-n.x / n.y);
    var sum_z = sum_w * (-n.z / n.y);
    var y_end = vec2<f32>(0.0);
    var gap = 3.40282347e38;
    // unroll
    for (var e = 0u; e < 2u; e++) {
        let p = select(ball, heel, e == 0u);
        let sample = sample_heightfield(p.x, p.z);
        var h = sample.height;
        if (sample.found) {
            let w = flat_weight(sample.normal);
            sum_w += w;
            sum_x += w * (-sample.normal.x / sample.normal.y);
            sum_z += w * (-sample.normal.z / sample.normal.y);
        } else {
            found = false;
            h = ground_height(gp, n, p.x, p.z);
        }
        y_end[e] = h;
        gap = min(gap, p.y - h);
    }
    let y0 = y_end.x;
    let y1 = y_end.y;
    let gx = sum_x / sum_w;
    let gz = sum_z / sum_w;
    let reference = normalize(vec3<f32>(-gx, 1.0, -gz));
    if (!(len > 1e-6)) {
        return SoleGround(gap, reference);
    }
    let u = d / len;
    let slope = gx * u.x + gz * u.z;
    let chord = (y1 - y0) / len;
    // Then the points between, in one pass: the bulge above the chord, the point a line of
    // the reference slope touches from above, the upper hull edge from either end.
    var bump = 0.0;
    var best = y0;
    var v = 0u;
    if (y1 - slope * len > best) {
        best = y1 - slope * len;
        v = 1u;
    }
    let near = 0.1 * len;
    var from_heel = chord;
    var from_ball = chord;
    var points = sole_points(heel, ball);
    for (var k = 0u; k < points.count; k++) {
        let t = sole_next(&points);
        let p = heel + (ball - heel) * t;
        let sample = sample_heightfield(p.x, p.z);
        var y = sample.height;
        if (!sample.found) {
            found = false;
            y = ground_height(gp, n, p.x, p.z);
        }
        let s = t * len;
        bump = max(bump, y - (y0 + chord * s));
        if (y - slope * s > best) {
            best = y - slope * s;
            v = 2u;
        }
        if (s > near) {
            from_heel = max(from_heel, (y - y0) / s);
        }
        if (s < len - near) {
            from_ball = min(from_ball, (y1 - y) / (len - s));
        }
    }
    if (!found) {
        return SoleGround(gap, reference);
    }
    // The hull's slope (the reference between heel and ball, else the edge from that end);
    // the chord's on gentle ground, the hull's over a step, blended.
    var hull = slope;
    if (v == 0u) {
        hull = from_heel;
    } else if (v == 1u) {
        hull = from_ball;
    }
    let b = clamp((bump / len - SOLE_BUMP_LOW) / (SOLE_BUMP_HIGH - SOLE_BUMP_LOW), 0.0, 1.0);
    let pick = chord + (hull - chord) * (b * b * (3.0 - 2.0 * b));
    let change = pick - slope;
    return SoleGround(gap, normalize(vec3<f32>(-(gx + change * u.x), 1.0, -(gz + change * u.z))));
}

// A leg's reach: sqrt(a² + b² − 2ab·cos θmax) (or a + b without knee limits), world units.
fn leg_reach(l: u32, leg: SolverLeg, s: f32) -> f32 {
    let p0 = legs_fk[l].hip;
    let p1 = legs_fk[l].knee;
    let p2 = legs_fk[l].ankle;
    let a = length(p1 - p0) * s;
    let b = length(p2 - p1) * s;
    var cos_max = -1.0;
    if ((leg_options(leg.mode) & OPT_KNEE_LIMITS) != 0u) {
        cos_max = leg.limits.y;
    }
    return sqrt(max(a * a + b * b - 2.0 * a * b * cos_max, 0.0));
}

// How far the pelvis must drop for a leg of this reach (leg_reach) to reach the target.
fn reach_drop(reach: f32, hip_ws: vec3<f32>, target_ws: vec3<f32>) -> f32 {
    let c_max = reach * (1.0 - 1e-4);
    let v = target_ws - hip_ws;
    let horizontal2 = v.x * v.x + v.z * v.z;
    if (c_max * c_max > horizontal2) {
        return -v.y - sqrt(c_max * c_max - horizontal2);
    }
    return -v.y;
}

// The FK joints of each leg (model space), read once from pose_in at the start of
// find_ground and used by every stage after it: lavapipe reads a storage buffer lane by
// lane, and repeated reads of the same joint are not merged (other buffers are written).
struct LegFk {
    hip: vec3<f32>,
    knee: vec3<f32>,
    knee_rotation: vec4<f32>,
    ankle: vec3<f32>,
    ankle_rotation: vec4<f32>,
    toe: vec3<f32>,
    toe_dir: vec3<f32>,       // the sole's direction past the ball (model space; zero: straight)
}
var<private> legs_fk: array<LegFk, MAX_LEGS>;

fn load_leg_fk(base: u32, leg: SolverLeg, l: u32) {
    let knee = pose_in[base + leg.joints.y];
    let ankle = pose_in[base + leg.joints.z];
    let toe = pose_in[base + leg.joints.w];
    legs_fk[l] = LegFk(pose_in[base + leg.joints.x].position_ms.xyz, knee.position_ms.xyz, knee.rotation_ms,
        ankle.position_ms.xyz, ankle.rotation_ms, toe.position_ms.xyz, toe_dir_ms(leg, toe.rotation_ms));
}

// The FK position of the joint placed on the ground (reference_joint).
fn reference_fk(l: u32) -> vec3<f32> {
    if (three_bone(l)) {
        return legs_fk[l].toe;
    }
    return legs_fk[l].ankle;
}

// The joint placed on the ground: the ankle (two-bone) or the hoof tip (pseudo three-bone).
fn reference_joint(leg: SolverLeg, l: u32) -> u32 {
    if (three_bone(l)) {
        return leg.joints.w;
    }
    return leg.joints.z;
}

// A character's root: world = q * (model * s) + t.
// world = q · (mirror(model) · s) + t; mirror negates x for a mirrored character (m = −1,
// a negative scale), s = |scale| (src/cpu/foot_ik.rs, Root).
struct Root {
    t: vec3<f32>,
    s: f32,
    q: vec4<f32>,
    m: f32,
}

fn mirror_x(root: Root, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(v.x * root.m, v.y, v.z);
}

fn dir_to_world(root: Root, v_ms: vec3<f32>) -> vec3<f32> {
    return quat_rotate(root.q, mirror_x(root, v_ms));
}

fn dir_to_model(root: Root, v_ws: vec3<f32>) -> vec3<f32> {
    return mirror_x(root, quat_rotate(quat_conj(root.q), v_ws));
}

// The world's up (+Y) in model space: where the ground's tilt is measured from.
fn model_up(root: Root) -> vec3<f32> {
    return dir_to_model(root, vec3<f32>(0.0, 1.0, 0.0));
}

fn to_world(root: Root, p_ms: vec3<f32>) -> vec3<f32> {
    return dir_to_world(root, p_ms * root.s) + root.t;
}

fn to_model(root: Root, p_ws: vec3<f32>) -> vec3<f32> {
    return dir_to_model(root, p_ws - root.t) / root.s;
}

// What find_ground finds under each foot.
struct FeetGround {
    hit: array<bool, MAX_LEGS>,
    aimed: array<bool, MAX_LEGS>, // a target to solve toward (stateless: hit and weight > 0; placement: every leg)
    point: array<vec3<f32>, MAX_LEGS>,
    normal: array<vec3<f32>, MAX_LEGS>,
    aim: array<vec3<f32>, MAX_LEGS>, // the reference joint's target (world; see src/cpu/foot_ik.rs)
    turn: array<vec4<f32>, MAX_LEGS>, // the foot's turn (align_foot, model space)
    limited: array<bool, MAX_LEGS>,  // whether the max foot angle clamped it
    drop: f32,          // the largest weighted drop any foot needs (before the pelvis limit)
}

// The character being solved, shared by the stages below (the CPU twin passes them as
// arguments). Per-invocation variables rather than values passed between functions: the
// arrays are indexed by leg, and copies of them (drivers inline every call) cost local
// memory traffic; lavapipe measured the stages about 40 % slower with by-value arrays.
var<private> res: FootResult;
var<private> ground: FeetGround;

// Where a two-bone foot's ankle goes so its whole sole rests on the ground: h along normal
// above the ground point, then moved vertically so the lowest point of the sole (sole_gap)
// of the foot turned by `turn` touches the ground under it (src/cpu/foot_ik.rs).
fn sole_target(root: Root, gp: vec3<f32>, normal: vec3<f32>, turn: vec4<f32>, up_ms: vec3<f32>, toe_off_ms: vec3<f32>, h: f32, reach: vec2<f32>, toe_dir_ms: vec3<f32>) -> vec3<f32> {
    var target_ws = gp + normal * h;
    target_ws.y -= sole_gap(gp, normal, turned_sole(root, target_ws, turn, up_ms, toe_off_ms, h, reach, toe_dir_ms));
    return target_ws;
}

// The sole (sole_ends, world) of a two-bone foot turned by `turn` with its ankle at ankle_ws
// (src/cpu/foot_ground.rs).
fn turned_sole(root: Root, ankle_ws: vec3<f32>, turn: vec4<f32>, up_ms: vec3<f32>, toe_off_ms: vec3<f32>, h: f32, reach: vec2<f32>, toe_dir_ms: vec3<f32>) -> Sole {
    let up = dir_to_world(root, quat_rotate(turn, up_ms));
    let toe_dir = toe_dir_ws(root, turn, toe_dir_ms);
    return sole_ends(ankle_ws, dir_to_world(root, quat_rotate(turn, toe_off_ms)) * root.s, up, h, reach, toe_dir);
}

// On a plane of unit normal, how far above it the lowest of heel, ball and tip of a
// two-bone foot turned by `turn` is with its ankle h along the normal above the plane's
// point (src/cpu/foot_ground.rs): what sole_target lowers it by on a plane, with no ground
// sampled.
fn plane_sole_gap(root: Root, normal: vec3<f32>, turn: vec4<f32>, up_ms: vec3<f32>, toe_off_ms: vec3<f32>, h: f32, reach: vec2<f32>, toe_dir_ms: vec3<f32>) -> f32 {
    let s = turned_sole(root, normal * h, turn, up_ms, toe_off_ms, h, reach, toe_dir_ms);
    return min(min(dot(s.heel, normal), dot(s.ball, normal)), dot(s.tip, normal)) / normal.y;
}

// A foot's turn and whether the max foot angle clamped it.
struct FootTurn {
    q: vec4<f32>,
    limited: bool,
}

// Feet: the model-space turn aligning the foot's up axis with the ground normal, within the
// leg's max foot angle, and whether that clamped it; `up` is the world's up in model space
// (model_up). Made by find_ground (which places the sole with it), applied by solve_legs
// (which flags FOOT_ANGLE_LIMITED).
fn align_foot(leg: SolverLeg, ankle: vec4<f32>, normal: vec3<f32>, up: vec3<f32>) -> FootTurn {
    if ((leg_options(leg.mode) & LEG_ALIGN_FLAT) != 0u) {
        return align_up(leg, quat_rotate(ankle, leg.foot_up.xyz), normal);
    }
    // The ground's tilt: the animated foot keeps its pitch and roll relative to it.
    return align_up(leg, up, normal);
}

// Whether the foot keeps the animation's pitch and roll (its heel measured by sole_target).
fn keeps_roll(leg: SolverLeg) -> bool {
    return (leg_options(leg.mode) & LEG_ALIGN_FLAT) == 0u;
}

// The model-space turn taking `up` to `normal` within the leg's max foot angle.
fn align_up(leg: SolverLeg, up: vec3<f32>, normal: vec3<f32>) -> FootTurn {
    if (dot(up, normal) >= leg.limits.z) {
        return FootTurn(rotation_arc(up, normal), false);
    }
    let axis = normalize_or(cross(up, normal), any_orthonormal(up), 1e-12);
    return FootTurn(quat_from_axis_cos_sin(axis, leg.limits.z, leg.limits.w), true);
}
