//! Procedural scenes for examples, benchmarks and first tries without assets: a biped
//! skeleton and its foot-IK rig, a walk cycle, and a crowd wandering over a heightfield.

use crowd_ik::glam::{Quat, Vec2, Vec3};

use crate::workload::Rng;
use crowd_ik::crowd::{CharacterInput, FootAlign, FootRig, Heightfield, JointPose, KneePole, LegKind, LegRig};

/// Joint names of [`biped_parents`].
pub const BIPED_JOINTS: [&str; 12] =
    ["root", "pelvis", "spine", "head", "l_hip", "l_knee", "l_ankle", "l_toe", "r_hip", "r_knee", "r_ankle", "r_toe"];
/// Thigh and shin length.
pub const BONE: f32 = 0.42;
/// Ankle height above the sole.
pub const FOOT_HEIGHT: f32 = 0.08;
const HIP_WIDTH: f32 = 0.1;

/// Parents of the biped's 12 joints (root, pelvis, spine, head, then left and right hip,
/// knee, ankle, toe).
#[must_use]
pub fn biped_parents() -> Vec<Option<usize>> {
    vec![None, Some(0), Some(1), Some(2), Some(1), Some(4), Some(5), Some(6), Some(1), Some(8), Some(9), Some(10)]
}

/// The biped's foot-IK rig: two-bone legs, knee hinge −X (knees point +Z), foot up +Y,
/// knee limits 5°–175°, feet align to slopes up to 35°, pelvis drops up to 0.35.
#[must_use]
pub fn biped_rig() -> FootRig {
    let leg = |first: usize| LegRig {
        kind: LegKind::TwoBone,
        joints: [first, first + 1, first + 2, first + 3],
        foot_height: FOOT_HEIGHT,
        heel_length: 0.0,
        toe_length: 0.0,
        toe_forward: Vec3::ZERO,
        knee_axis: -Vec3::X,
        knee_limits: Some((5f32.to_radians(), 175f32.to_radians())),
        max_foot_angle: 35f32.to_radians(),
        foot_up: Vec3::Y,
        knee_pole: KneePole::FkKnee,
        align: FootAlign::default(),
    };
    FootRig {
        parents: biped_parents(),
        pelvis: 1,
        legs: vec![leg(4), leg(8)],
        max_pelvis_drop: 0.35,
        max_step_up: 0.5,
        max_step_down: 0.6,
        placement: None,
        sole_measure: Default::default(),
    }
}

/// Seconds per walk cycle.
pub const CYCLE: f32 = 1.1;
/// Distance a foot travels relative to the hips during one stance.
pub const STRIDE: f32 = 0.45;
/// Root speed of the walk.
pub const SPEED: f32 = 2.0 * STRIDE / CYCLE;

/// The biped's model-space pose at walk phase `phase` (radians; the left foot is in
/// stance for `phase mod 2π ∈ [0, π)`, the right half a cycle later), with the soles of
/// standing feet at model `y = 0`, and each foot's contact weight (1 in stance, 0 in swing,
/// smooth at heel-strike and toe-off).
#[must_use]
pub fn walk_pose(phase: f32) -> (Vec<JointPose>, [f32; 2]) {
    let hip_height = 0.86 + 0.02 * (2.0 * phase).cos();
    let mut pose = vec![JointPose::new(Vec3::ZERO, Quat::IDENTITY); 12];
    let pelvis = Vec3::new(0.0, hip_height + 0.03, 0.0);
    pose[1] = JointPose::new(pelvis, Quat::IDENTITY);
    pose[2] = JointPose::new(pelvis + Vec3::Y * 0.25, Quat::IDENTITY);
    pose[3] = JointPose::new(pelvis + Vec3::Y * 0.65, Quat::IDENTITY);
    let mut weights = [0.0; 2];
    for (side, (first, x, offset)) in
        [(4, HIP_WIDTH, 0.0), (8, -HIP_WIDTH, std::f32::consts::PI)].into_iter().enumerate()
    {
        let p = phase + offset;
        let (s, c) = p.sin_cos();
        let lift = 0.12 * (-s).max(0.0);
        let hip = Vec3::new(x, hip_height, 0.0);
        let ankle = Vec3::new(x, FOOT_HEIGHT + lift, 0.5 * STRIDE * c);
        // Knee: the two circles' intersection on the +Z side (knees point forward).
        let to_ankle = ankle - hip;
        let d = to_ankle.length().min(2.0 * BONE * 0.999);
        let dir = to_ankle.normalize();
        let m = d * 0.5;
        let r = (BONE * BONE - m * m).max(0.0).sqrt();
        let side_dir = Vec3::new(0.0, dir.z, -dir.y); // ⟂ dir in the YZ plane, +Z for a leg pointing down
        let knee = hip + dir * m + side_dir * r;
        let ankle = hip + dir * d;
        let thigh = Quat::from_rotation_arc(Vec3::NEG_Y, (knee - hip).normalize());
        let shin = Quat::from_rotation_arc(Vec3::NEG_Y, (ankle - knee).normalize());
        pose[first] = JointPose::new(hip, thigh);
        pose[first + 1] = JointPose::new(knee, shin);
        pose[first + 2] = JointPose::new(ankle, Quat::IDENTITY);
        pose[first + 3] = JointPose::new(ankle + Vec3::new(0.0, -FOOT_HEIGHT, 0.12), Quat::IDENTITY);
        weights[side] = (s / 0.25).clamp(0.0, 1.0);
    }
    (pose, weights)
}

/// Moves a walker at `position` `distance` along its `heading` (radians about +Y, 0 = +Z),
/// turning it back where it leaves `[-half_extent, half_extent]²`.
pub fn wander(position: &mut Vec2, heading: &mut f32, distance: f32, half_extent: f32) {
    *position += Vec2::new(heading.sin(), heading.cos()) * distance;
    if position.x.abs() > half_extent || position.y.abs() > half_extent {
        *heading += std::f32::consts::PI;
        *position = position.clamp(Vec2::splat(-half_extent), Vec2::splat(half_extent));
    }
}

/// A crowd wandering over a heightfield: each character walks straight at [`SPEED`] along
/// its heading, turning back at the edges, its root at the ground height under it.
#[derive(Clone, Debug)]
pub struct WalkingCrowd {
    positions: Vec<Vec2>,
    headings: Vec<f32>,
    phases: Vec<f32>,
    half_extent: f32,
}

impl WalkingCrowd {
    /// `n` characters scattered over `[-half_extent, half_extent]²`.
    #[must_use]
    pub fn new(n: usize, half_extent: f32, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        Self {
            positions: (0..n)
                .map(|_| Vec2::new(rng.range(-half_extent, half_extent), rng.range(-half_extent, half_extent)))
                .collect(),
            headings: (0..n).map(|_| rng.range(-std::f32::consts::PI, std::f32::consts::PI)).collect(),
            phases: (0..n).map(|_| rng.range(0.0, std::f32::consts::TAU)).collect(),
            half_extent,
        }
    }

    /// Number of characters.
    #[must_use]
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// `true` for an empty crowd.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Advances the crowd by `dt` seconds.
    pub fn step(&mut self, dt: f32) {
        for ((p, h), ph) in self.positions.iter_mut().zip(&mut self.headings).zip(&mut self.phases) {
            wander(p, h, SPEED * dt, self.half_extent);
            *ph = (*ph + dt / CYCLE * std::f32::consts::TAU).rem_euclid(std::f32::consts::TAU);
        }
    }

    /// This frame's characters (root on the ground, foot weights from the walk cycle) and
    /// FK poses, written into the given vectors (cleared first).
    pub fn frame(&self, ground: &Heightfield, characters: &mut Vec<CharacterInput>, poses: &mut Vec<JointPose>) {
        characters.clear();
        poses.clear();
        for ((p, h), ph) in self.positions.iter().zip(&self.headings).zip(&self.phases) {
            let y = ground.sample(p.x, p.y).map_or(0.0, |(y, _)| y);
            let (pose, w) = walk_pose(*ph);
            characters.push(
                CharacterInput::new(Vec3::new(p.x, y, p.y), Quat::from_rotation_y(*h))
                    .with_foot_weights([w[0], w[1], 0.0, 0.0]),
            );
            poses.extend(pose);
        }
    }
}

/// Boxes to draw the biped with the preview renderer: one per bone, a head, and flat blue
/// (unlit) shoes under both ankles whose soles sit exactly at the foot height, so planted
/// feet show as blue on the ground. `bind` is the bind pose (e.g. `walk_pose(0.0).0`).
#[must_use]
pub fn biped_boxes(bind: &[JointPose]) -> Vec<crate::preview::BoneBox> {
    use crate::preview::{bone_boxes, BoneBox};
    let mut boxes = bone_boxes(bind, &biped_parents(), 0.045, [0.85, 0.45, 0.2, 1.0]);
    boxes.retain(|b| b.joint != 6 && b.joint != 10); // ankle → toe: replaced by shoes
    let head = bind[3].position();
    boxes.push(BoneBox {
        joint: 3,
        from: head,
        to: head + Vec3::Y * 0.22,
        half_width: 0.1,
        color: [0.95, 0.8, 0.6, 1.0],
    });
    for ankle in [6usize, 10] {
        let a = bind[ankle].position();
        let sole = a - Vec3::Y * (FOOT_HEIGHT - SHOE_HALF_WIDTH);
        boxes.push(BoneBox {
            joint: ankle,
            from: sole - Vec3::Z * 0.06,
            to: sole + Vec3::Z * 0.16,
            half_width: SHOE_HALF_WIDTH,
            color: SHOE_COLOR,
        });
    }
    boxes
}

/// Half the thickness of the preview shoes.
pub const SHOE_HALF_WIDTH: f32 = 0.03;
/// The shoes' flat colour (unlit): RGB (0.1, 0.2, 1.0).
pub const SHOE_COLOR: [f32; 4] = [0.1, 0.2, 1.0, 0.0];
