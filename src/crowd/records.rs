//! The crowd's records, shared byte for byte by the CPU foot-IK job and the WGSL kernel
//! (`shaders/shared/crowd.wgsl`; `tests/layout.rs` checks every layout with naga).

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::MAX_LEGS;
use crate::records::v3;

/// One joint of a model-space pose (as an animation system's local-to-model pass writes it).
/// 32 bytes. Keep in sync with `JointPose` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct JointPose {
    /// Model-space position (`.w` = 1).
    pub position_ms: [f32; 4],
    /// Model-space rotation.
    pub rotation_ms: [f32; 4],
}

impl JointPose {
    /// A joint pose from a position and a rotation.
    #[must_use]
    pub fn new(position_ms: Vec3, rotation_ms: Quat) -> Self {
        Self { position_ms: position_ms.extend(1.0).to_array(), rotation_ms: rotation_ms.to_array() }
    }
    /// Model-space position.
    #[must_use]
    pub fn position(&self) -> Vec3 {
        v3(self.position_ms)
    }
    /// Model-space rotation.
    #[must_use]
    pub fn rotation(&self) -> Quat {
        Quat::from_array(self.rotation_ms)
    }
}

/// One character of the crowd this frame. 64 bytes.
/// Keep in sync with `CharacterInput` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CharacterInput {
    /// World translation of the character's root (each coordinate within
    /// ±[`MAX_WORLD_COORDINATE`](crate::constants::MAX_WORLD_COORDINATE)); `.w` = uniform
    /// scale, its magnitude in `[1e-4, 1e4]`
    /// ([`MIN_CHARACTER_SCALE`](crate::constants::MIN_CHARACTER_SCALE),
    /// [`MAX_CHARACTER_SCALE`](crate::constants::MAX_CHARACTER_SCALE)); outside either, the
    /// character gets `InvalidParameter`. A **negative** scale mirrors the character across
    /// its own x axis (model `x → −x`, the left/right mirror of a rig built by mirroring one
    /// side): `world = rotation · (mirror(model) · |scale|) + translation`
    /// ([`CharacterInput::with_mirrored`]).
    pub root_ws: [f32; 4],
    /// World rotation of the root.
    pub root_rotation: [f32; 4],
    /// Weight per leg (rig order): 0 = keep FK (a lifted foot), 1 = full IK. A subnormal
    /// weight is 0.
    pub foot_weights: [f32; 4],
    /// Per leg, when the weight took its value this frame, as seconds before the frame's
    /// end, where the caller knows it (an animation event's time inside the frame): foot
    /// placement starts the weight's blend, and a lock or release the weight causes, at that
    /// moment, so 30 and 120 Hz agree. A value outside `[0, dt]` (the default, −1; NaN) is not
    /// known: a 0/1 flip is then placed where the FK foot's height crossed the heights
    /// earlier flips crossed (weights made from the foot's height above the floor, as contact
    /// events from motion capture are), any other step at the frame's middle; a subnormal
    /// one is 0 (the frame's end). Read by foot placement only
    /// ([`CharacterInput::with_foot_event_times`]).
    pub foot_event_times: [f32; 4],
}

impl CharacterInput {
    /// A character at `translation` with `rotation`, scale 1, every foot weight 1.
    #[must_use]
    pub fn new(translation: Vec3, rotation: Quat) -> Self {
        Self {
            root_ws: translation.extend(1.0).to_array(),
            root_rotation: rotation.to_array(),
            foot_weights: [1.0; 4],
            foot_event_times: [-1.0; 4],
        }
    }
    /// Sets when each leg's weight took its value this frame (seconds before the frame's
    /// end; outside `[0, dt]` = not known): e.g. a foot-down event at clip time `e` in a frame
    /// that advanced the clip from `t − dt` to `t` happened `t − e` before its end.
    #[must_use]
    pub fn with_foot_event_times(mut self, times: [f32; 4]) -> Self {
        self.foot_event_times = times;
        self
    }
    /// Sets the per-leg weights.
    #[must_use]
    pub fn with_foot_weights(mut self, weights: [f32; 4]) -> Self {
        self.foot_weights = weights;
        self
    }
    /// Sets the uniform scale.
    #[must_use]
    pub fn with_scale(mut self, scale: f32) -> Self {
        self.root_ws[3] = scale;
        self
    }
    /// Mirrors the character across its own x axis (or not): the sign of the scale.
    #[must_use]
    pub fn with_mirrored(mut self, mirrored: bool) -> Self {
        self.root_ws[3] = if mirrored { -self.root_ws[3].abs() } else { self.root_ws[3].abs() };
        self
    }
    /// Whether the character is mirrored (a negative scale).
    #[must_use]
    pub fn mirrored(&self) -> bool {
        self.root_ws[3] < 0.0
    }
    /// Model space → world space.
    #[must_use]
    pub fn to_world(&self, p_ms: Vec3) -> Vec3 {
        let s = self.root_ws[3];
        let m = if s < 0.0 { Vec3::new(-p_ms.x, p_ms.y, p_ms.z) } else { p_ms };
        Quat::from_array(self.root_rotation) * (m * s.abs()) + v3(self.root_ws)
    }
}

/// A ground hit the caller found with its own physics ray cast, one per character and leg
/// (`characters × MAX_LEGS`, leg-major within a character). 32 bytes.
/// Keep in sync with `GroundHit` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GroundHit {
    /// World-space hit point; `.w` = 1 for a hit, 0 for none.
    pub point_ws: [f32; 4],
    /// World-space ground normal (unit, pointing up).
    pub normal_ws: [f32; 4],
}

impl GroundHit {
    /// A hit at `point` with `normal`.
    #[must_use]
    pub fn hit(point: Vec3, normal: Vec3) -> Self {
        Self { point_ws: point.extend(1.0).to_array(), normal_ws: normal.extend(0.0).to_array() }
    }
    /// No ground under that foot.
    #[must_use]
    pub fn miss() -> Self {
        Self::default()
    }
}

/// Per-character result of a foot-IK frame. 64 bytes.
/// Keep in sync with `FootResult` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FootResult {
    /// `x` = pelvis drop in world units (downward; ≥ 0 when stateless; with foot placement
    /// negative while the pelvis is held above FK after a root snap), `y` = with foot
    /// placement the stateless drop its spring follows (else 0), `z` = with foot placement
    /// the root snap taken this frame (world up: how far the root jumped beyond its
    /// continuous motion, which the pelvis holds and fades; else 0), `w` = 0.
    pub pelvis: [f32; 4],
    /// Per leg: height of the FK sole above the ground (world units; negative = below).
    /// (A two-bone foot's sole is reported at its two contact points, the lower of heel and
    /// ball, each measured against the ground under it; a pseudo three-bone leg's at its
    /// tip. The solve itself keeps the whole sole from heel to ball on or above the ground,
    /// measured between them too where a heightfield creases. With foot placement on a
    /// heightfield, a foot locked the frame before is measured over the ground under its
    /// lock, its FK sole turned to the locked heading: how high the animation holds the
    /// foot above where it stands.)
    pub sole_before: [f32; 4],
    /// Per leg: height of the solved sole above the ground, measured as `sole_before`.
    pub sole_after: [f32; 4],
    /// Per leg: [`foot`] bits, and a [`crate::ChainError`] code in bits 8..16.
    pub status: [u32; 4],
}

impl FootResult {
    /// The error code of leg `leg` (0 = none).
    #[must_use]
    pub fn error(&self, leg: usize) -> Option<crate::error::ChainError> {
        crate::error::ChainError::from_code((self.status[leg] >> 8) & 0xff)
    }
}

/// Per-leg status bits in [`FootResult::status`].
pub mod foot {
    /// Ground was found under the foot within the step window.
    pub const HIT: u32 = crate::constants::FOOT_HIT;
    /// IK was applied (hit, weight > 0, no error).
    pub const SOLVED: u32 = crate::constants::FOOT_SOLVED;
    /// The target was reached (two-bone/three-bone contract, weight ≥ 1).
    pub const REACHED: u32 = crate::constants::FOOT_REACHED;
    /// The foot's alignment to the ground was clamped to the max foot angle.
    pub const ANGLE_LIMITED: u32 = crate::constants::FOOT_ANGLE_LIMITED;
    /// The knee limits clamped the leg.
    pub const KNEE_LIMITED: u32 = crate::constants::FOOT_KNEE_LIMITED;
    /// Foot placement holds the foot at its locked contact point.
    pub const LOCKED: u32 = crate::constants::FOOT_LOCKED;
    /// Foot placement reset the character's state this frame (set on every leg).
    pub const RESET: u32 = crate::constants::FOOT_RESET;
    /// The leg's FK pose bends its knee against the rig's knee hinge by more than ~11.5°
    /// (`crate::records::info::AGAINST_HINGE`): the solver bent the knee the hinge's way and
    /// rolled the limb half a turn. On a walking rig this means the leg's `knee_axis` has the
    /// wrong sign (e.g. a quadruped's front legs given the hind legs' hinge).
    pub const AGAINST_HINGE: u32 = crate::constants::FOOT_AGAINST_HINGE;
    /// Foot placement: the pelvis moved faster than `pelvis_max_speed` this frame, because
    /// its bounds needed it (a leg's reach to its target, `max_pelvis_drop`,
    /// `pelvis_max_rise`): a foot reaches its target rather than the pelvis keeping its
    /// speed. Set on every leg (a character-wide condition).
    pub const PELVIS_FAST: u32 = crate::constants::FOOT_PELVIS_FAST;
    /// The FK foot was under a heightfield by more than `max_step_up`: a heightfield has no
    /// overhangs, so the foot is inside the terrain. Where that ground is below the hip the
    /// foot stands on it ([`HIT`] set); ground above the hip is a wall, and the foot keeps
    /// its FK pose (no [`HIT`]). Caller hits keep the step-up window.
    pub const UNDER_GROUND: u32 = crate::constants::FOOT_UNDER_GROUND;
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// One leg of [`SolverRig`]. 128 bytes. Keep in sync with `SolverLeg` in
/// `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SolverLeg {
    /// Hip, knee, ankle, toe joint indices.
    pub joints: [u32; 4],
    /// Kind (0 two-bone, 1 pseudo three-bone), option bits (knee limits), knee pole rule
    /// (0 FK knee, 1 FK plane, 2 direction), foot placement (plant detection `PLANT_*` |
    /// `PIVOT_BALL`; 0 without placement).
    pub mode: [u32; 4],
    /// Knee-local hinge axis (unit); `.w` = foot height.
    pub knee_axis: [f32; 4],
    /// cos θmin, cos θmax, cos and sin of the max foot angle.
    pub limits: [f32; 4],
    /// Ankle-local foot up axis (unit); `.w` = three-bone blend ratio.
    pub foot_up: [f32; 4],
    /// Model-space knee pole direction for rule 2 (unit), else zero.
    pub pole: [f32; 4],
    /// Foot placement: plant enter speed, exit speed, release distance, release time.
    pub lock: [f32; 4],
    /// Two-bone legs: how far the sole reaches behind the point under the ankle and past
    /// the ball (world units); 0, 0.
    pub sole: [f32; 4],
    /// Two-bone legs: the direction of the sole past the ball in the toe joint's frame
    /// (unit; zero = straight with the foot), 0.
    pub toe: [f32; 4],
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// The packed rig both foot-IK twins read: the WGSL kernel from a read-only storage buffer,
/// the CPU job from memory. 672 bytes. Keep in sync with `SolverRig` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct SolverRig {
    /// Joint count, pelvis, leg count, ground mode (0 heightfield, 1 caller hits).
    pub header: [u32; 4],
    /// Heightfield samples along x and z, foot placement on (1) or off (0), the ground under a
    /// two-bone foot measured once (1) or twice (0).
    pub grid: [u32; 4],
    /// Heightfield origin x, origin z, cell size, 0.
    pub ground: [f32; 4],
    /// Max pelvis drop, max step up, max step down, foot placement swing lookahead.
    pub params: [f32; 4],
    /// Foot placement: pelvis half-life, pelvis max speed, pelvis max rise, ground half-life.
    pub springs: [f32; 4],
    /// Foot placement: ground tolerance, weight blend time, max reach, root snap speed.
    pub blend: [f32; 4],
    /// The legs (unused entries zero).
    pub legs: [SolverLeg; MAX_LEGS],
}

impl SolverLeg {
    // Named reads of the packed words, as the kernel's helpers name them.
    /// A pseudo three-bone leg (`kind() == 1`).
    #[inline]
    #[must_use]
    pub fn is_three_bone(&self) -> bool {
        self.mode[0] == 1
    }
    /// Foot placement locks the ball (`PIVOT_BALL`).
    #[inline]
    #[must_use]
    pub fn pivots_on_ball(&self) -> bool {
        self.mode[3] & crate::constants::PIVOT_BALL != 0
    }
    /// Foot placement locks the end of the sole on the ground (`PIVOT_SOLE`, on a two-bone
    /// leg that does not pivot on its ball: a pseudo three-bone leg locks its tip either way).
    #[inline]
    #[must_use]
    pub fn pivots_on_sole(&self) -> bool {
        self.mode[3] & crate::constants::PIVOT_SOLE != 0 && !self.is_three_bone() && !self.pivots_on_ball()
    }
    /// Foot placement's plant detection (`PLANT_*`).
    #[inline]
    #[must_use]
    pub fn plant_detection(&self) -> u32 {
        self.mode[3] & 0xff
    }
    /// How far the sole reaches behind the point under the ankle and past the ball (world
    /// units; `LegRig::heel_length`, `LegRig::toe_length`).
    #[inline]
    #[must_use]
    pub fn sole_reach(&self) -> [f32; 2] {
        [self.sole[0], self.sole[1]]
    }
    /// Two-bone legs: the direction of the sole past the ball in the toe joint's frame (zero:
    /// straight with the foot; `LegRig::toe_forward`).
    #[inline]
    #[must_use]
    pub fn toe_forward(&self) -> Vec3 {
        Vec3::new(self.toe[0], self.toe[1], self.toe[2])
    }
    /// Hip joint.
    #[inline]
    #[must_use]
    pub fn hip(&self) -> u32 {
        self.joints[0]
    }
    /// Knee joint.
    #[inline]
    #[must_use]
    pub fn knee(&self) -> u32 {
        self.joints[1]
    }
    /// Ankle joint.
    #[inline]
    #[must_use]
    pub fn ankle(&self) -> u32 {
        self.joints[2]
    }
    /// Toe joint.
    #[inline]
    #[must_use]
    pub fn toe(&self) -> u32 {
        self.joints[3]
    }
    /// 0: two-bone, 1: pseudo three-bone.
    #[inline]
    #[must_use]
    pub fn kind(&self) -> u32 {
        self.mode[0]
    }
    /// Option bits (knee limits, `LEG_ALIGN_FLAT`).
    #[inline]
    #[must_use]
    pub fn options(&self) -> u32 {
        self.mode[1]
    }
    /// Knee pole rule: `KNEE_POLE_FK_KNEE`, `KNEE_POLE_FK_PLANE` or `KNEE_POLE_DIRECTION`
    /// (`crate::constants`).
    #[inline]
    #[must_use]
    pub fn pole_rule(&self) -> u32 {
        self.mode[2]
    }
    /// Foot placement: plant detection `PLANT_*` | `PIVOT_BALL`.
    #[inline]
    #[must_use]
    pub fn placement_mode(&self) -> u32 {
        self.mode[3]
    }
    /// Ankle height above the sole.
    #[inline]
    #[must_use]
    pub fn foot_height(&self) -> f32 {
        self.knee_axis[3]
    }
    /// cos θmin of the knee.
    #[inline]
    #[must_use]
    pub fn cos_min(&self) -> f32 {
        self.limits[0]
    }
    /// cos θmax of the knee.
    #[inline]
    #[must_use]
    pub fn cos_max(&self) -> f32 {
        self.limits[1]
    }
    /// cos of the max foot angle.
    #[inline]
    #[must_use]
    pub fn cos_max_foot_angle(&self) -> f32 {
        self.limits[2]
    }
    /// sin of the max foot angle.
    #[inline]
    #[must_use]
    pub fn sin_max_foot_angle(&self) -> f32 {
        self.limits[3]
    }
    /// Pseudo three-bone blend ratio.
    #[inline]
    #[must_use]
    pub fn blend_ratio(&self) -> f32 {
        self.foot_up[3]
    }
    /// Foot placement: plant enter speed.
    #[inline]
    #[must_use]
    pub fn plant_enter(&self) -> f32 {
        self.lock[0]
    }
    /// Foot placement: plant exit speed.
    #[inline]
    #[must_use]
    pub fn plant_exit(&self) -> f32 {
        self.lock[1]
    }
    /// Foot placement: release distance.
    #[inline]
    #[must_use]
    pub fn release_distance(&self) -> f32 {
        self.lock[2]
    }
    /// Foot placement: release time (s).
    #[inline]
    #[must_use]
    pub fn release_time(&self) -> f32 {
        self.lock[3]
    }
}

impl SolverRig {
    // Named reads of the packed words, as the kernel's helpers name them.
    /// Joints per character.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> u32 {
        self.header[0]
    }
    /// The pelvis joint.
    #[inline]
    #[must_use]
    pub fn pelvis(&self) -> u32 {
        self.header[1]
    }
    /// Legs of the rig.
    #[inline]
    #[must_use]
    pub fn leg_count(&self) -> u32 {
        self.header[2]
    }
    /// 0: heightfield, 1: caller hits.
    #[inline]
    #[must_use]
    pub fn ground_mode(&self) -> u32 {
        self.header[3]
    }
    /// Heightfield samples along x.
    #[inline]
    #[must_use]
    pub fn grid_x(&self) -> u32 {
        self.grid[0]
    }
    /// Heightfield samples along z.
    #[inline]
    #[must_use]
    pub fn grid_z(&self) -> u32 {
        self.grid[1]
    }
    /// Foot placement on (1) or off (0).
    #[inline]
    #[must_use]
    pub fn placement(&self) -> u32 {
        self.grid[2]
    }
    /// The ground under a two-bone foot measured once (1) or twice (0; see
    /// [`crate::crowd::SoleMeasure`]).
    #[inline]
    #[must_use]
    pub fn sole_once(&self) -> u32 {
        self.grid[3]
    }
    /// Heightfield origin x.
    #[inline]
    #[must_use]
    pub fn origin_x(&self) -> f32 {
        self.ground[0]
    }
    /// Heightfield origin z.
    #[inline]
    #[must_use]
    pub fn origin_z(&self) -> f32 {
        self.ground[1]
    }
    /// Heightfield cell size.
    #[inline]
    #[must_use]
    pub fn cell(&self) -> f32 {
        self.ground[2]
    }
    /// Most the pelvis drops below FK.
    #[inline]
    #[must_use]
    pub fn max_pelvis_drop(&self) -> f32 {
        self.params[0]
    }
    /// Step window above the FK foot.
    #[inline]
    #[must_use]
    pub fn max_step_up(&self) -> f32 {
        self.params[1]
    }
    /// Step window below the FK foot.
    #[inline]
    #[must_use]
    pub fn max_step_down(&self) -> f32 {
        self.params[2]
    }
    /// Foot placement: swing look-ahead (s).
    #[inline]
    #[must_use]
    pub fn swing_lookahead(&self) -> f32 {
        self.params[3]
    }
    /// Foot placement: pelvis spring half-life (s).
    #[inline]
    #[must_use]
    pub fn pelvis_half_life(&self) -> f32 {
        self.springs[0]
    }
    /// Foot placement: pelvis max speed.
    #[inline]
    #[must_use]
    pub fn pelvis_max_speed(&self) -> f32 {
        self.springs[1]
    }
    /// Foot placement: pelvis max rise.
    #[inline]
    #[must_use]
    pub fn pelvis_max_rise(&self) -> f32 {
        self.springs[2]
    }
    /// Foot placement: ground spring half-life (s).
    #[inline]
    #[must_use]
    pub fn ground_half_life(&self) -> f32 {
        self.springs[3]
    }
    /// Foot placement: ground tolerance.
    #[inline]
    #[must_use]
    pub fn ground_tolerance(&self) -> f32 {
        self.blend[0]
    }
    /// Foot placement: weight blend time (s).
    #[inline]
    #[must_use]
    pub fn weight_blend_time(&self) -> f32 {
        self.blend[1]
    }
    /// Foot placement: max reach (fraction of the leg).
    #[inline]
    #[must_use]
    pub fn max_reach(&self) -> f32 {
        self.blend[2]
    }
    /// Foot placement: root snap speed.
    #[inline]
    #[must_use]
    pub fn root_snap_speed(&self) -> f32 {
        self.blend[3]
    }
}

const _: () = assert!(std::mem::size_of::<JointPose>() == 32);
const _: () = assert!(std::mem::size_of::<CharacterInput>() == 64);
const _: () = assert!(std::mem::size_of::<GroundHit>() == 32);
const _: () = assert!(std::mem::size_of::<FootResult>() == 64);
const _: () = assert!(std::mem::size_of::<SolverLeg>() == 144);
const _: () = assert!(std::mem::size_of::<SolverRig>() == 672);
const _: () = assert!(std::mem::offset_of!(SolverRig, legs) == 96);
