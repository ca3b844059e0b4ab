//! Crowd foot IK's ground and foot geometry, shared by the stateless frame (`foot_ik.rs`) and
//! foot placement (`foot_placement.rs`), which both import it (never the other way): the
//! CPU twin of `shaders/shared/foot_ground.wgsl`. Ground queries (heightfield or caller
//! hits, inside the step window), the sole measured along its length (`SolePoints`,
//! `sole_gap`) and its own normal (`sole_ground`), the foot's turn to the ground
//! (`align_foot`, `align_up`), where the sole goes (`sole_target`), the leg's reach, and the
//! character's root transform (`Root`).
use glam::{Quat, Vec3};

use super::math::{any_orthonormal, finite4, normalize_or, quat_from_axis_cos_sin, reject, rotation_arc};
use crate::constants::{
    LEG_ALIGN_FLAT, MAX_WORLD_COORDINATE, MIN_NORMAL_LENGTH2, SOLE_BUMP_HIGH, SOLE_BUMP_LOW, SOLE_CROSSINGS,
    SOLE_POINTS,
};
use crate::crowd::{
    heightfield_height, sample_heightfield, CharacterInput, GroundHit, JointPose, SolverLeg, SolverRig, MAX_LEGS,
};
use crate::records::{option, v3};

/// What the kernel needs of the ground.
pub(crate) struct GroundData<'a> {
    pub heights: &'a [f32],
    pub hits: &'a [GroundHit],
}

/// `x`, `y` and `z` within `±MAX_WORLD_COORDINATE`.
#[inline]
pub(crate) fn in_world(v: [f32; 4]) -> bool {
    v[..3].iter().all(|x| x.abs() <= MAX_WORLD_COORDINATE)
}

/// Ground under leg `leg` of a character at world `(x, z)`: `(point, normal)`.
#[inline]
pub(crate) fn ground_query(
    rig: &SolverRig,
    g: &GroundData,
    hits: &[GroundHit],
    leg: usize,
    x: f32,
    z: f32,
) -> Option<(Vec3, Vec3)> {
    if rig.ground_mode() == 0 {
        let (h, n) = sample_heightfield(
            g.heights,
            [rig.grid_x(), rig.grid_z()],
            [rig.origin_x(), rig.origin_z(), rig.cell()],
            x,
            z,
        )?;
        return Some((Vec3::new(x, h, z), n));
    }
    let hit = hits[leg];
    let usable = finite4(hit.point_ws) && finite4(hit.normal_ws) && hit.point_ws[3] > 0.5;
    if !(usable && in_world(hit.point_ws) && in_world(hit.normal_ws)) {
        return None;
    }
    let n = v3(hit.normal_ws);
    if !(n.length_squared() >= MIN_NORMAL_LENGTH2 && n.y > crate::constants::MIN_GROUND_NORMAL_Y * n.length()) {
        return None; // not ground: a wall, an overhang, or a normal too short to normalise
    }
    Some((v3(hit.point_ws), n.normalize()))
}

/// Height of the ground at `(x, z)` for reporting sole errors: the heightfield where it has
/// a sample, else the plane of the foot's hit.
#[inline]
pub(crate) fn ground_height(rig: &SolverRig, g: &GroundData, point: Vec3, normal: Vec3, x: f32, z: f32) -> f32 {
    if rig.ground_mode() == 0 {
        if let Some(h) = heightfield_height(
            g.heights,
            [rig.grid_x(), rig.grid_z()],
            [rig.origin_x(), rig.origin_z(), rig.cell()],
            x,
            z,
        ) {
            return h;
        }
    }
    point.y - (normal.x * (x - point.x) + normal.z * (z - point.z)) / normal.y
}

/// A two-bone foot's sole (world): the heel, the ball and the tip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sole {
    /// `h` down the foot's up axis from the ankle and `reach[0]` further back.
    pub heel: Vec3,
    /// The toe joint brought down to the sole plane.
    pub ball: Vec3,
    /// `reach[1]` past the ball along the toe's own direction (a shoe's front bends with
    /// its toe joint), or straight on with the foot.
    pub tip: Vec3,
}

/// A two-bone foot's sole ([`Sole`]) from the ankle, the toe joint (`toe_off` from the
/// ankle), the foot's up axis `up`, the foot height `h`, the reach behind and past the
/// joints ([`SolverLeg::sole_reach`]: where a shoe reaches past its joints; zero for a
/// skeleton alone) and `toe_dir`, the toe's direction past the ball (world; zero: straight
/// on with the foot).
#[inline]
pub(crate) fn sole_ends(ankle: Vec3, toe_off: Vec3, up: Vec3, h: f32, reach: [f32; 2], toe_dir: Vec3) -> Sole {
    let under = ankle - up * h;
    let forward = reject(toe_off, up);
    let ball = under + forward;
    if reach == [0.0, 0.0] {
        return Sole { heel: under, ball, tip: ball }; // a rig from a skeleton alone
    }
    let dir = normalize_or(forward, Vec3::ZERO, 1e-12);
    let past = normalize_or(toe_dir, dir, 1e-12);
    Sole { heel: under - dir * reach[0], ball, tip: ball + past * reach[1] }
}

/// Height above the ground of a two-bone foot's sole: of its lowest point from the heel
/// to the tip ([`sole_ends`]), each against the ground under it ([`sole_gap`]).
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
#[inline]
pub(crate) fn sole_height(
    rig: &SolverRig,
    g: &GroundData,
    point: Vec3,
    normal: Vec3,
    ankle: Vec3,
    toe: Vec3,
    up: Vec3,
    (h, reach, toe_dir): (f32, [f32; 2], Vec3),
) -> f32 {
    sole_gap(rig, g, point, normal, &sole_ends(ankle, toe - ankle, up, h, reach, toe_dir))
}

/// Where a sole is measured between heel and ball on a heightfield, as fractions of the way
/// from heel to ball, in order ([`SolePoints::next`]): where the segment crosses the grid's
/// lines (where bilinear ground bends, so a crease or ridge under the foot is found exactly)
/// and midway between each two of those points (where a cell's twist bulges most), or
/// [`SOLE_POINTS`] evenly spaced when it crosses more than [`SOLE_CROSSINGS`] lines. None on
/// caller hits (a plane).
pub(crate) struct SolePoints {
    /// Heel and ball in grid units along x (`u`) and z (`v`).
    u: [f32; 2],
    v: [f32; 2],
    /// The first grid line crossed from the heel along x and z, and the step to the next.
    first: [f32; 2],
    step: [f32; 2],
    /// Lines crossed along x and z.
    cu: u32,
    cv: u32,
    /// How many points.
    pub count: u32,
    even: bool,
    /// The walk: lines passed along x and z, the last crossing, points given.
    iu: u32,
    iv: u32,
    prev: f32,
    k: u32,
}

impl SolePoints {
    #[inline]
    pub(crate) fn new(rig: &SolverRig, heel: Vec3, ball: Vec3) -> Self {
        let cell = rig.cell();
        let u = [(heel.x - rig.origin_x()) / cell, (ball.x - rig.origin_x()) / cell];
        let v = [(heel.z - rig.origin_z()) / cell, (ball.z - rig.origin_z()) / cell];
        // Lines crossed: those in (heel, ball], from the heel's side.
        let axis = |a: [f32; 2]| {
            let (f0, f1) = (a[0].floor(), a[1].floor());
            if a[1] >= a[0] {
                (f0 + 1.0, 1.0, f1 - f0)
            } else {
                (f0, -1.0, f0 - f1)
            }
        };
        let ((first_u, step_u, cu), (first_v, step_v, cv)) = (axis(u), axis(v));
        let mut out = SolePoints {
            u,
            v,
            first: [first_u, first_v],
            step: [step_u, step_v],
            cu: 0,
            cv: 0,
            count: 0,
            even: false,
            iu: 0,
            iv: 0,
            prev: 0.0,
            k: 0,
        };
        if rig.ground_mode() != 0 {
            return out;
        }
        if !(cu + cv <= SOLE_CROSSINGS as f32) {
            (out.count, out.even) = (SOLE_POINTS, true);
        } else {
            (out.cu, out.cv) = (cu as u32, cv as u32);
            out.count = 2 * (out.cu + out.cv) + 1;
        }
        out
    }

    /// The next point (call `count` times), as the fraction of the way from heel to ball.
    #[inline]
    pub(crate) fn next(&mut self) -> f32 {
        self.k += 1;
        if self.even {
            return self.k as f32 / (SOLE_POINTS + 1) as f32;
        }
        // The next line crossed (a line crossed lies strictly between the ends' grid
        // coordinates, so they differ), or the ball after the last.
        let tu = if self.iu < self.cu {
            (self.first[0] + self.step[0] * self.iu as f32 - self.u[0]) / (self.u[1] - self.u[0])
        } else {
            1.0
        };
        let tv = if self.iv < self.cv {
            (self.first[1] + self.step[1] * self.iv as f32 - self.v[0]) / (self.v[1] - self.v[0])
        } else {
            1.0
        };
        let t = tu.min(tv);
        if self.k % 2 == 1 {
            return 0.5 * (self.prev + t);
        }
        if self.iu < self.cu && (self.iv >= self.cv || tu <= tv) {
            self.iu += 1;
        } else {
            self.iv += 1;
        }
        self.prev = t;
        t
    }
}

/// The toe's direction past the ball (model space) for the toe joint's rotation; zero for a
/// leg whose sole does not reach past the ball (its packed `toe` is zero).
#[inline]
pub(crate) fn toe_dir_ms(leg: &SolverLeg, toe_rotation: Quat) -> Vec3 {
    let forward = leg.toe_forward();
    if forward == Vec3::ZERO {
        Vec3::ZERO
    } else {
        toe_rotation * forward
    }
}

/// A model-space toe direction turned by `turn`, in world space (zero stays zero).
#[inline]
pub(crate) fn toe_dir_ws(root: &Root, turn: Quat, toe_dir_ms: Vec3) -> Vec3 {
    if toe_dir_ms == Vec3::ZERO {
        Vec3::ZERO
    } else {
        root.dir_to_world(turn * toe_dir_ms)
    }
}

/// Height of world point `p` above the ground under it ([`ground_height`]).
#[inline]
pub(crate) fn above(rig: &SolverRig, g: &GroundData, point: Vec3, normal: Vec3, p: Vec3) -> f32 {
    p.y - ground_height(rig, g, point, normal, p.x, p.z)
}

/// Height above the ground of the lowest point of a sole: the rigid part from heel to ball
/// and the part past the ball to the tip, each segment's ends and the [`SolePoints`]
/// between them against the ground under them ([`ground_height`]).
#[inline]
pub(crate) fn sole_gap(rig: &SolverRig, g: &GroundData, point: Vec3, normal: Vec3, sole: &Sole) -> f32 {
    let Sole { heel, ball, tip } = *sole;
    let gap = segment_gap(rig, g, point, normal, heel, ball);
    if tip != ball {
        gap.min(segment_gap(rig, g, point, normal, ball, tip))
    } else {
        gap
    }
}

/// Height above the ground of the lowest point of the straight segment `a → b` (world):
/// its ends and the [`SolePoints`] between them.
#[inline]
fn segment_gap(rig: &SolverRig, g: &GroundData, point: Vec3, normal: Vec3, a: Vec3, b: Vec3) -> f32 {
    let above = |p: Vec3| above(rig, g, point, normal, p);
    let mut gap = above(a).min(above(b));
    let mut points = SolePoints::new(rig, a, b);
    for _ in 0..points.count {
        gap = gap.min(above(a + (b - a) * points.next()));
    }
    gap
}

/// The ground under a two-bone foot whose sole runs from `heel` to `ball` (world) on a
/// heightfield: the height above it of the lower of heel and ball (what
/// [`FootResult::sole_before`] reports), and the normal the foot aligns to. The reference is the normals under the ankle (`n`), heel and ball averaged as
/// slopes, each weighted by `n.y⁸` (continuous, and a riser between two steps' samples
/// weighs nothing beside the steps). Its slope along the foot is then replaced: on gentle
/// ground by the chord's from the ground under the heel to the ground under the ball (heel
/// and ball both touch in a valley or across a crease; over a low ridge both stand as high
/// as it makes them), and where a step rises under the sole by the slope of the ground's
/// upper hull from the end a sole of the reference slope would touch (a foot over a step
/// edge stands flat on the step). The reference where a point is off the grid or the foot
/// has no length along the ground.
#[inline]
pub(crate) fn sole_ground(rig: &SolverRig, g: &GroundData, gp: Vec3, n: Vec3, heel: Vec3, ball: Vec3) -> (f32, Vec3) {
    let grid = ([rig.grid_x(), rig.grid_z()], [rig.origin_x(), rig.origin_z(), rig.cell()]);
    let d = Vec3::new(ball.x - heel.x, 0.0, ball.z - heel.z);
    let len = d.length();
    let mut found = true;
    let mut gap = f32::INFINITY;
    // Heel and ball first: their heights, and their normals in the reference slope (world
    // x, z), each weighted by `n.y⁸`.
    let flat_weight = |n: Vec3| {
        let y2 = n.y * n.y;
        let y4 = y2 * y2;
        y4 * y4
    };
    let mut sum_w = flat_weight(n);
    let (mut sum_x, mut sum_z) = (sum_w * (-n.x / n.y), sum_w * (-n.z / n.y));
    let mut y_end = [0.0f32; 2];
    for (e, p) in [heel, ball].into_iter().enumerate() {
        y_end[e] = match sample_heightfield(g.heights, grid.0, grid.1, p.x, p.z) {
            Some((h, hn)) => {
                let w = flat_weight(hn);
                sum_w += w;
                sum_x += w * (-hn.x / hn.y);
                sum_z += w * (-hn.z / hn.y);
                h
            }
            None => {
                found = false;
                ground_height(rig, g, gp, n, p.x, p.z)
            }
        };
        gap = gap.min(p.y - y_end[e]);
    }
    let [y0, y1] = y_end;
    let (gx, gz) = (sum_x / sum_w, sum_z / sum_w);
    let reference = Vec3::new(-gx, 1.0, -gz).normalize();
    if !(len > 1e-6) {
        return (gap, reference);
    }
    let u = d / len;
    let slope = gx * u.x + gz * u.z;
    let chord = (y1 - y0) / len;
    // Then the points between, in one pass: how far the ground bulges above the chord; the
    // point a line of the reference slope touches from above (0 heel, 1 ball, 2 between);
    // and the ground's upper hull edge from either end (over points at least a tenth of the
    // foot away, so height rounding stays small in a slope; each end the other's point).
    let mut bump = 0.0f32;
    let (mut best, mut v) = (y0, 0);
    if y1 - slope * len > best {
        (best, v) = (y1 - slope * len, 1);
    }
    let near = 0.1 * len;
    let (mut from_heel, mut from_ball) = (chord, chord);
    let mut points = SolePoints::new(rig, heel, ball);
    for _ in 0..points.count {
        let t = points.next();
        let p = heel + (ball - heel) * t;
        let y = heightfield_height(g.heights, grid.0, grid.1, p.x, p.z).unwrap_or_else(|| {
            found = false;
            ground_height(rig, g, gp, n, p.x, p.z)
        });
        let s = t * len;
        bump = bump.max(y - (y0 + chord * s));
        if y - slope * s > best {
            (best, v) = (y - slope * s, 2);
        }
        if s > near {
            from_heel = from_heel.max((y - y0) / s);
        }
        if s < len - near {
            from_ball = from_ball.min((y1 - y) / (len - s));
        }
    }
    if !found {
        return (gap, reference);
    }
    // The hull's slope: between heel and ball (a hilltop, a step's edge) the reference
    // itself; at an end the hull edge from that end. Gentle ground (within `SOLE_BUMP_LOW`
    // × the foot's length of the chord): the chord's slope, so heel and ball both touch (in a
    // valley or across a crease) or stand equally high over a low ridge. A step under the
    // sole (past `SOLE_BUMP_HIGH`): the hull's, the foot flat on the step. Blended smoothly.
    let hull = match v {
        0 => from_heel,
        1 => from_ball,
        _ => slope,
    };
    let k = ((bump / len - SOLE_BUMP_LOW) / (SOLE_BUMP_HIGH - SOLE_BUMP_LOW)).clamp(0.0, 1.0);
    let pick = chord + (hull - chord) * (k * k * (3.0 - 2.0 * k));
    let change = pick - slope;
    (gap, Vec3::new(-(gx + change * u.x), 1.0, -(gz + change * u.z)).normalize())
}

/// A leg's reach: `c_max = √(a² + b² − 2ab·cos θmax)` (or `a + b` without knee limits),
/// world units.
#[inline]
pub(crate) fn leg_reach(pose: &[JointPose], leg: &SolverLeg, s: f32) -> f32 {
    let p = |k: usize| pose[leg.joints[k] as usize].position();
    let a = (p(1) - p(0)).length() * s;
    let b = (p(2) - p(1)).length() * s;
    let cos_max = if leg.options() & option::KNEE_LIMITS != 0 { leg.cos_max() } else { -1.0 };
    (a * a + b * b - 2.0 * a * b * cos_max).max(0.0).sqrt()
}

/// How far the hip must drop (world up) for `target_ws` to come within a leg of this
/// `reach` ([`leg_reach`]; less 1e-4 so the solve stays inside the knee limit); at most the
/// hip's height above the target.
#[inline]
pub(crate) fn reach_drop(reach: f32, hip_ws: Vec3, target_ws: Vec3) -> f32 {
    let c_max = reach * (1.0 - 1e-4);
    let v = target_ws - hip_ws;
    let horizontal2 = v.x * v.x + v.z * v.z;
    if c_max * c_max > horizontal2 {
        -v.y - (c_max * c_max - horizontal2).sqrt()
    } else {
        -v.y
    }
}

/// The joint placed on the ground: the ankle (two-bone) or the hoof tip (pseudo three-bone).
#[inline]
pub(crate) fn reference_joint(leg: &SolverLeg) -> usize {
    (if leg.is_three_bone() { leg.toe() } else { leg.ankle() }) as usize
}

/// A character's root: `world = q · (mirror(model) · s) + t`, `mirror` negating x for a
/// mirrored character (`m = −1`, a negative scale in [`CharacterInput`]), `s = |scale|`.
#[derive(Clone, Copy)]
pub(crate) struct Root {
    pub t: Vec3,
    pub s: f32,
    pub q: Quat,
    pub m: f32,
}

impl Root {
    #[inline]
    pub(crate) fn new(ch: &CharacterInput) -> Self {
        let scale = ch.root_ws[3];
        let m = if scale < 0.0 { -1.0 } else { 1.0 };
        Root { t: v3(ch.root_ws), s: scale.abs(), q: Quat::from_array(ch.root_rotation), m }
    }
    #[inline]
    pub(crate) fn mirror(self, v: Vec3) -> Vec3 {
        Vec3::new(v.x * self.m, v.y, v.z)
    }
    /// A model-space direction in world space (unscaled).
    #[inline]
    pub(crate) fn dir_to_world(self, v_ms: Vec3) -> Vec3 {
        self.q * self.mirror(v_ms)
    }
    /// A world-space direction in model space (unscaled).
    #[inline]
    pub(crate) fn dir_to_model(self, v_ws: Vec3) -> Vec3 {
        self.mirror(self.q.conjugate() * v_ws)
    }
    /// The world's up (+Y) in model space: where the ground's tilt is measured from.
    #[inline]
    pub(crate) fn model_up(self) -> Vec3 {
        self.dir_to_model(Vec3::Y)
    }
    #[inline]
    pub(crate) fn to_world(self, p_ms: Vec3) -> Vec3 {
        self.dir_to_world(p_ms * self.s) + self.t
    }
    #[inline]
    pub(crate) fn to_model(self, p_ws: Vec3) -> Vec3 {
        self.dir_to_model(p_ws - self.t) / self.s
    }
}

/// What [`find_ground`] finds under each foot.
pub(crate) struct FeetGround {
    pub hit: [bool; MAX_LEGS],
    /// The leg has a target to solve toward (stateless: ground and weight > 0; with foot
    /// placement: every leg).
    pub aimed: [bool; MAX_LEGS],
    pub point: [Vec3; MAX_LEGS],
    pub normal: [Vec3; MAX_LEGS],
    /// Where the reference joint goes (world): the foot height above the ground point along
    /// the normal, then (two-bone) raised or lowered so the lowest sole point of the aligned
    /// foot is on the ground.
    pub target: [Vec3; MAX_LEGS],
    /// The foot's turn ([`align_foot`], model space) and whether the max angle clamped it.
    pub turn: [Quat; MAX_LEGS],
    pub limited: [bool; MAX_LEGS],
    /// The largest weighted drop any foot needs (before the pelvis limit).
    pub drop: f32,
}

/// Where a two-bone foot's ankle goes so its whole sole rests on the ground: `h` along
/// `normal` above the ground point `gp`, then, with the foot turned by `turn` (model space),
/// moved vertically so the lowest point of its sole ([`sole_gap`]: heel, ball and the
/// points between) touches the ground under it.
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
#[inline]
pub(crate) fn sole_target(
    rig: &SolverRig,
    g: &GroundData,
    root: &Root,
    gp: Vec3,
    normal: Vec3,
    turn: Quat,
    up_ms: Vec3,
    toe_off_ms: Vec3,
    (h, reach, toe_dir_ms): (f32, [f32; 2], Vec3),
) -> Vec3 {
    let mut target_ws = gp + normal * h;
    let sole = turned_sole(root, target_ws, turn, up_ms, toe_off_ms, (h, reach, toe_dir_ms));
    target_ws.y -= sole_gap(rig, g, gp, normal, &sole);
    target_ws
}

/// The sole ([`sole_ends`], world) of a two-bone foot turned by `turn` (model space) with
/// its ankle at `ankle_ws`: the FK foot's up axis `up_ms`, toe offset `toe_off_ms` and toe
/// direction `toe_dir_ms` (model space) turned and taken to the world.
#[inline]
pub(crate) fn turned_sole(
    root: &Root,
    ankle_ws: Vec3,
    turn: Quat,
    up_ms: Vec3,
    toe_off_ms: Vec3,
    (h, reach, toe_dir_ms): (f32, [f32; 2], Vec3),
) -> Sole {
    let up = root.dir_to_world(turn * up_ms);
    let toe_dir = toe_dir_ws(root, turn, toe_dir_ms);
    sole_ends(ankle_ws, root.dir_to_world(turn * toe_off_ms) * root.s, up, h, reach, toe_dir)
}

/// On a plane of unit `normal`, how far above it (vertically) the lowest of heel, ball and
/// tip of a two-bone foot turned by `turn` is when its ankle is `h` along the normal above the
/// plane's point: what [`sole_target`] lowers such a foot by on a plane, with no ground
/// sampled.
#[inline]
pub(crate) fn plane_sole_gap(
    root: &Root,
    normal: Vec3,
    turn: Quat,
    up_ms: Vec3,
    toe_off_ms: Vec3,
    (h, reach, toe_dir_ms): (f32, [f32; 2], Vec3),
) -> f32 {
    let s = turned_sole(root, normal * h, turn, up_ms, toe_off_ms, (h, reach, toe_dir_ms));
    s.heel.dot(normal).min(s.ball.dot(normal)).min(s.tip.dot(normal)) / normal.y
}

/// Feet: the model-space turn that aligns the foot's up axis (ankle rotation `ankle`) with
/// the ground `normal` (model space), within the leg's max foot angle, and whether that
/// clamped it. `up` is the world's up in model space ([`Root::model_up`]: +Y for a Y-up
/// character, whatever its heading; +Z for a Z-up export under a turned root). Made by
/// [`find_ground`] (which places the sole with it), applied by [`solve_legs`] (which flags
/// `ANGLE_LIMITED`).
#[inline]
pub(crate) fn align_foot(leg: &SolverLeg, ankle: Quat, normal: Vec3, up: Vec3) -> (Quat, bool) {
    if leg.options() & LEG_ALIGN_FLAT != 0 {
        align_up(leg, ankle * v3(leg.foot_up), normal)
    } else {
        // The ground's tilt: the animated foot keeps its pitch and roll relative to it.
        align_up(leg, up, normal)
    }
}

/// Whether the foot keeps the animation's pitch and roll (so its heel is not where an
/// aligned sole's would be, and [`sole_target`] measures it).
#[inline]
pub(crate) fn keeps_roll(leg: &SolverLeg) -> bool {
    leg.options() & LEG_ALIGN_FLAT == 0
}

/// The model-space turn taking `up` to `normal` within the leg's max foot angle, and whether
/// that clamped it.
#[inline]
pub(crate) fn align_up(leg: &SolverLeg, up: Vec3, normal: Vec3) -> (Quat, bool) {
    if up.dot(normal) >= leg.cos_max_foot_angle() {
        (rotation_arc(up, normal), false)
    } else {
        let axis = normalize_or(up.cross(normal), any_orthonormal(up), 1e-12);
        (quat_from_axis_cos_sin(axis, leg.cos_max_foot_angle(), leg.sin_max_foot_angle()), true)
    }
}
