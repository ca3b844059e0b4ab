//! Foot placement across frames: the settings ([`FootPlacement`], [`LegPlacement`]) and the
//! per-character state both twins evolve ([`CharacterState`]).
//!
//! A rig with `placement: None` is solved frame by frame from scratch (stateless); with
//! `Some(settings)` every frame also reads and writes one [`CharacterState`] per character,
//! advanced by the frame time: springs on the pelvis and on the ground under each foot,
//! weights blended over time, feet locked where they are planted (docs/ALGORITHMS.md,
//! "Foot placement across frames").

use bytemuck::{Pod, Zeroable};

use super::MAX_LEGS;
use crate::constants as c;
use crate::error::IkError;

/// How a foot is detected as planted (and then locked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlantDetection {
    /// Never lock this foot.
    Off,
    /// From the animation: the FK contact point's world speed below `enter` (world units per
    /// second) plants the foot, above `exit` (> `enter`) lifts it; in between it keeps its
    /// state (hysteresis, no chatter).
    Speed {
        /// Speed below which a foot plants.
        enter: f32,
        /// Speed above which a planted foot lifts.
        exit: f32,
    },
    /// From the caller: a foot is planted while its input weight is 1.
    Weights,
}

/// What a locked foot holds in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockPivot {
    /// The whole foot: its contact point (the ankle's target) and its yaw. The animation's
    /// heel strike and toe off then roll the sole about the held ankle, so the sole's
    /// contact with the ground slides (millimetres to centimetres per plant, the more the
    /// further the heel reaches behind the ankle).
    Foot,
    /// The ball (the toe joint): the foot keeps its animated tilt relative to the ground, so
    /// the heel lifts as the animation rolls onto the ball, and the ball stays put. For
    /// two-bone legs; a pseudo three-bone leg locks its tip either way.
    Ball,
    /// The end of the sole on the ground (two-bone legs): the heel while a heel strike rolls
    /// the foot down, the ball as it rolls up to a toe off, held where it touched, with the
    /// foot's yaw; the lock passes from one end to the other as the foot rolls through flat
    /// (where both touch, so nothing moves). The ankle swings about that point with the
    /// animation's roll, as a real foot does, instead of the sole swinging about a held
    /// ankle. The default. A pseudo three-bone leg locks its tip either way.
    #[default]
    Sole,
}

/// One leg's foot-placement settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegPlacement {
    /// When the foot locks.
    pub plant: PlantDetection,
    /// What a locked foot holds.
    pub pivot: LockPivot,
    /// A locked foot is released when its locked contact point is farther than this from
    /// where the unlocked solve would put it (world units, horizontal).
    pub release_distance: f32,
    /// After a release the foot blends from where it was locked to the unlocked solve over
    /// this time (seconds, smoothstep).
    pub release_time: f32,
}

impl Default for LegPlacement {
    fn default() -> Self {
        Self {
            plant: PlantDetection::Speed { enter: 0.15, exit: 0.4 },
            pivot: LockPivot::default(),
            release_distance: 0.15,
            release_time: 0.2,
        }
    }
}

/// Foot placement across frames: the temporal settings of a [`FootRig`](super::FootRig).
/// Times in seconds, distances in world units. The defaults suit a human walking at 30 to
/// 120 Hz:
///
/// | setting | meaning | unit | default | in engines |
/// | --- | --- | --- | --- | --- |
/// | `pelvis_half_life` | half-life of the pelvis offset's critically damped spring (0: none; else ≥ 1e-4) | s | 0.08 | Unreal FootPlacement `PelvisSettings.LinearStiffness`/`LinearDamping` |
/// | `pelvis_max_speed` | most the pelvis offset changes per second (faster only for a leg's reach, flagged) | m/s | 1.0 | Final IK Grounder `pelvisSpeed` |
/// | `pelvis_max_rise` | most the pelvis sits above FK (while a root snap is held) | m | 0.25 | Unreal `PelvisSettings.MaxOffset` (up) |
/// | `root_snap_speed` | a root moving vertically faster than this beyond its last velocity snapped: hold the jump | m/s | 1.0 | Unreal `PelvisSettings.ActorMovementCompensationMode` |
/// | `ground_half_life` | half-life of the ground springs (normal, height) and of a swing foot's lift (0: none; else ≥ 1e-4) | s | 0.06 | Unreal `InterpolationSettings.FloorLinearStiffness`/`FloorAngularStiffness` |
/// | `ground_tolerance` | most any part of a swinging foot may be below the ground (a planted one: none) | m | 0.005 | Unreal `PlantSettings.DistanceToGround` |
/// | `swing_lookahead` | how far ahead (at the FK foot's speed) a swinging foot looks for rising ground | s | 0.15 | Final IK Grounder `prediction` |
/// | `weight_blend_time` | time a foot weight takes to blend from 0 to 1 | s | 0.15 | Unity Animation Rigging constraint `weight` damping |
/// | `plant_speed_half_life` | half-life of the filter on the foot speed that `Speed` plant detection reads (0: one frame's) | s | 0.02 | Unreal FootPlacement `PlantSettings.SpeedThreshold` reads a smoothed speed |
/// | `max_reach` | release a lock when the leg would stretch past this fraction of its reach | — | 0.995 | Unreal `PlantSettings.MaxExtensionRatio` |
/// | `legs[l].plant` | `Speed { enter, exit }`, `Weights` or `Off` | m/s | `Speed { 0.15, 0.4 }` | Unreal `PlantSettings.SpeedThreshold`/`UnalignmentSpeedThreshold` |
/// | `legs[l].pivot` | `Foot` (contact point and heading) or `Ball` (heel lifts) | — | `Foot` | Unreal `PlantSettings.LockType` |
/// | `legs[l].release_distance` | release a lock farther than this from the unlocked solve | m | 0.15 | Unreal `PlantSettings.UnplantRadius` |
/// | `legs[l].release_time` | blend from the locked to the unlocked solution after a release | s | 0.2 | Unreal `InterpolationSettings.UnplantLinearStiffness` |
///
/// The plant speeds suit motion capture whose planted feet are nearly still (CMU: 0.15/0.4
/// m/s); animation whose stance foot slides (procedural walks) wants faster ones, e.g.
/// `Speed { enter: 0.5, exit: 0.8 }`, or [`PlantDetection::Weights`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootPlacement {
    /// Half-life of the pelvis offset's critically damped spring (0 = no smoothing).
    pub pelvis_half_life: f32,
    /// Most the pelvis offset changes per second (world units/s), on the output: only where
    /// its bounds (a leg's reach to its target, `max_pelvis_drop`, `pelvis_max_rise`) need
    /// a faster move does it move faster, and the frame is flagged
    /// [`foot::PELVIS_FAST`](super::foot::PELVIS_FAST). What was output is what the
    /// spring continues from, so a bound letting go never makes the pelvis jump back.
    pub pelvis_max_speed: f32,
    /// Most the pelvis may sit above FK (world units): a root that snaps up a step leaves the
    /// pelvis where it was, up to this much above FK, while its spring catches up.
    pub pelvis_max_rise: f32,
    /// A root that moves vertically more than this (world units/s) beyond where its last
    /// frame's vertical velocity carries it has snapped (a caller setting it from the
    /// ground under the hips, a step edge, a teleport): the jump is held (the character
    /// stays where its continuous motion puts it) and fades with the pelvis spring. The
    /// velocity carried is the root's own, within 0.9 of this speed, so continuous root
    /// motion passes through at once: a slope, a ramp, a hill's crest (speed changing by
    /// less than this per frame), a steady climb up to 1.9 times this speed; a faster
    /// climb is held in part, as snaps. The first frame after a reset takes the root as
    /// still.
    pub root_snap_speed: f32,
    /// Half-life of the springs on the ground plane (normal and height) under each foot.
    pub ground_half_life: f32,
    /// Most a smoothed ground may lag below the real one under a foot (world units): rising
    /// ground is followed at once past it, so no foot sinks deeper.
    pub ground_tolerance: f32,
    /// How far ahead (seconds, at the FK foot's speed) a swinging foot looks for ground that
    /// rises under it: a step edge lifts the foot smoothly (by the ground spring) before it
    /// gets there, rather than at once when it would go through the riser.
    pub swing_lookahead: f32,
    /// Time a foot weight takes to blend from 0 to 1 (linear; 0 = at once).
    pub weight_blend_time: f32,
    /// Half-life of the filter on each foot's animated velocity that
    /// [`PlantDetection::Speed`] reads (0 = the last frame's motion alone; else ≥ 1e-4 s).
    /// A velocity measured over one frame holds the animation's jitter (motion capture's
    /// feet tremble by millimetres at 120 Hz, a metre per second over 8 ms) and the frame
    /// rate's own sampling; filtered over a fixed time it is the same at every frame rate,
    /// so a foot plants at the same moment at 30 and at 120 Hz. Where the filtered speed
    /// crosses a threshold inside a frame, the lock is placed, or the release's fade
    /// started, at that moment, not at the frame's end.
    pub plant_speed_half_life: f32,
    /// A locked foot is released when its leg would stretch past this fraction of its reach
    /// (hip to target over the knee-limited leg length).
    pub max_reach: f32,
    /// Per leg (rig order; unused entries ignored).
    pub legs: [LegPlacement; MAX_LEGS],
}

impl Default for FootPlacement {
    fn default() -> Self {
        Self {
            pelvis_half_life: 0.08,
            pelvis_max_speed: 1.0,
            pelvis_max_rise: 0.25,
            root_snap_speed: 1.0,
            ground_half_life: 0.06,
            ground_tolerance: 0.005,
            swing_lookahead: 0.15,
            weight_blend_time: 0.15,
            plant_speed_half_life: 0.02,
            max_reach: 0.995,
            legs: [LegPlacement::default(); MAX_LEGS],
        }
    }
}

impl FootPlacement {
    /// Checks the settings: every time, speed and distance in `[0, MAX_RIG_SETTING]`
    /// ([`crate::constants::MAX_RIG_SETTING`], 1e6), each half-life 0 (no smoothing) or at
    /// least [`crate::constants::MIN_HALF_LIFE`] (1e-4 s: a shorter one overflows the spring
    /// in f32), max reach in `(0, 1]`, plant speeds `0 ≤ enter ≤ exit`.
    pub fn validate(&self) -> Result<(), IkError> {
        let ok = |x: f32| (0.0..=c::MAX_RIG_SETTING).contains(&x);
        let bad = |m: &str| Err(IkError::InvalidRig(format!("foot placement: {m}")));
        let all = [
            self.pelvis_half_life,
            self.pelvis_max_speed,
            self.pelvis_max_rise,
            self.root_snap_speed,
            self.ground_half_life,
            self.ground_tolerance,
            self.swing_lookahead,
            self.weight_blend_time,
            self.plant_speed_half_life,
        ];
        if !all.iter().all(|x| ok(*x)) {
            return bad("half-lives, speeds, distances and times must be in [0, 1e6]");
        }
        for half_life in [self.pelvis_half_life, self.ground_half_life, self.plant_speed_half_life] {
            if half_life != 0.0 && half_life < c::MIN_HALF_LIFE {
                return bad("a half-life must be 0 (no smoothing) or at least 1e-4 s");
            }
        }
        if !(self.max_reach > 0.0 && self.max_reach <= 1.0) {
            return bad("max reach must be in (0, 1]");
        }
        for (l, leg) in self.legs.iter().enumerate() {
            if !(ok(leg.release_distance) && ok(leg.release_time)) {
                return bad(&format!("leg {l}: release distance and time must be in [0, 1e6]"));
            }
            if let PlantDetection::Speed { enter, exit } = leg.plant {
                if !(ok(enter) && ok(exit) && enter <= exit) {
                    return bad(&format!("leg {l}: plant speeds need 0 ≤ enter ≤ exit ≤ 1e6"));
                }
            }
        }
        Ok(())
    }

    /// The leg's packed settings: `lock` = enter speed, exit speed, release distance,
    /// release time; `mode` = plant detection | pivot bit.
    pub(crate) fn pack_leg(&self, l: usize) -> ([f32; 4], u32) {
        let leg = &self.legs[l];
        let (plant, enter, exit) = match leg.plant {
            PlantDetection::Off => (c::PLANT_OFF, 0.0, 0.0),
            PlantDetection::Speed { enter, exit } => (c::PLANT_SPEED, enter, exit),
            PlantDetection::Weights => (c::PLANT_WEIGHTS, 0.0, 0.0),
        };
        let pivot = match leg.pivot {
            LockPivot::Foot => 0,
            LockPivot::Ball => c::PIVOT_BALL,
            LockPivot::Sole => c::PIVOT_SOLE,
        };
        ([enter, exit, leg.release_distance, leg.release_time], plant | pivot)
    }
}

/// One leg of a [`CharacterState`]. 160 bytes. Keep in sync with `LegState` in
/// `shaders/shared/crowd.wgsl`.
///
/// A value needed only while the foot is locked shares its place with one needed only while
/// it is not (the locked point and the release offset, the locked heading and the heading
/// offset of the release): the GPU reads and writes every byte of the state every frame,
/// so a narrower record is a cheaper frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LegState {
    /// The ground spring: normal `xyz` (world, before normalising; zero = no ground
    /// remembered), `w` = the smoothed ground height at `lift[2..4]`.
    pub plane: [f32; 4],
    /// The ground spring's velocities (per second).
    pub plane_velocity: [f32; 4],
    /// The ground spring's goals last frame (the real ground's normal and height): each
    /// spring follows its goal as moving linearly over the frame, so frame rates agree.
    pub plane_goal: [f32; 4],
    /// `xyz`: while the foot is locked, the locked contact point (world); while it is not,
    /// the contact offset from the unlocked solve kept at the last release (world; it fades
    /// out over the release time). `w`: while the foot is locked, how far it settled below
    /// the height carried along the ground plane last frame (a release this frame starts
    /// from the height the lock would have now); while it is not, seconds since the last
    /// release.
    pub lock: [f32; 4],
    /// Last frame's FK contact point (world), `w` = the blended foot weight.
    pub fk: [f32; 4],
    /// `xy`: while the foot is locked, its locked heading (its forward direction projected on
    /// the ground, as world `x, z`); while it is not, `x` = the heading offset at the last
    /// release (radians about world up) and `y` = 0. `z` = the lift spring's goal last
    /// frame, `w` = the input foot weight last frame (the blend follows it as moving
    /// linearly).
    pub heading: [f32; 4],
    /// `x` = how far the foot is lifted above its target so no part of it is below the
    /// ground (a spring), `y` = its velocity, `zw` = the world `x, z` where the smoothed
    /// ground height was taken.
    pub lift: [f32; 4],
    /// `xyz` = the FK contact point's velocity (world units/s) filtered over
    /// `plant_speed_half_life`, what [`PlantDetection::Speed`] reads (the flag bit
    /// `STATE_MOTION_SHIFT + leg` says whether it holds one); `w` = the top of the range of
    /// contact heights 0/1 weight flips crossed (see `free_heading`).
    pub motion: [f32; 4],
    /// `xyz` = last frame's contact point of the unlocked solve (world: the ground target's
    /// ankle, ball, or sole pivot), what an event inside a frame is backed off along (a
    /// lock taken, or a release made, `since` seconds before the frame's end, where that
    /// point was then); `w` = its horizontal speed over last frame (world units/s; negative:
    /// unknown), so the back-off follows a point speeding up or slowing down.
    pub free: [f32; 4],
    /// `xy` = last frame's heading of the unlocked solve (world `x, z`, unit; zero:
    /// unknown), what an event's heading is turned back along; `z` = the filtered speed of
    /// `motion` a frame before last (negative: unknown), which places a lift-off on the
    /// speed's curve; `w` = the bottom of the range of FK contact heights above the root
    /// that the input weight's 0/1 flips were seen crossing (its top in `motion[3]`; bottom
    /// above top: none yet), which places a flip without an event time inside its frame.
    pub free_heading: [f32; 4],
}

/// One character's foot-placement state, read and written every frame by both twins (the
/// GPU keeps it in its own buffer across frames). 672 bytes. All zero (`default()`) = no
/// state: the next frame resets it to that frame's solve. Keep in sync with
/// `CharacterState` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CharacterState {
    /// `x` = the pelvis offset's spring (world up, relative to the held character; negative
    /// = dropped), `y` = its velocity, `z` = the root snap still held (world up: how far the
    /// character is from where the root put it), `w` = its velocity.
    pub pelvis: [f32; 4],
    /// `[0]` = the root's world height last frame, `[1]` = the pelvis spring's goal last
    /// frame.
    pub root: [f32; 2],
    /// `STATE_VALID`, locked feet (bit `4 + leg`), planted feet (bit `8 + leg`), feet whose
    /// lock was released while they stayed planted and that wait for the release's fade
    /// before locking again (bit `12 + leg`), feet whose sole pivot
    /// ([`LockPivot::Sole`]) is the heel rather than the ball (bit `16 + leg`), feet whose
    /// `motion` holds a filtered velocity (bit `20 + leg`).
    pub flags: u32,
    /// The root's continuous vertical velocity last frame (world units/s; a root snap is not
    /// part of it): a snap is told from a slope by how much this changes in one frame.
    pub root_velocity: f32,
    /// Per leg.
    pub legs: [LegState; MAX_LEGS],
}

impl CharacterState {
    /// Whether the state holds a frame (else the next frame resets it).
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.flags & c::STATE_VALID != 0
    }
    /// Whether leg `leg`'s foot is locked.
    #[must_use]
    pub fn locked(&self, leg: usize) -> bool {
        self.flags & (1 << (c::STATE_LOCKED_SHIFT as usize + leg)) != 0
    }
    /// The pelvis offset from FK (world up; negative = dropped below FK): the spring's
    /// value plus the root snap still held.
    #[must_use]
    pub fn pelvis_offset(&self) -> f32 {
        self.pelvis[0] + self.pelvis[2]
    }
}

/// Keeps each surviving character's state when a crowd changes: `new[i] = old[map[i]]`,
/// `None` (a spawned character) = reset. The CPU twin of
/// `gpu::CrowdSolver::remap_states`.
#[must_use]
pub fn remap_states(old: &[CharacterState], map: &[Option<usize>]) -> Vec<CharacterState> {
    map.iter().map(|m| m.and_then(|i| old.get(i).copied()).unwrap_or_default()).collect()
}

/// Checks a frame time: finite and ≥ 0 (0: no time passed; above
/// [`MAX_FRAME_TIME`](crate::constants::MAX_FRAME_TIME): every character resets).
pub(crate) fn check_frame_time(dt: f32) -> Result<(), IkError> {
    if dt.is_finite() && dt >= 0.0 {
        Ok(())
    } else {
        Err(IkError::InvalidFrameTime(dt.to_string()))
    }
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// This frame's time for foot placement, as both twins read it: the frame time and each
/// spring's decay over it, `e^{−y·dt}` with `y = 2 ln 2 / half-life`, computed once per
/// frame on the host (so the twins use the same bits). 16 bytes. Keep in sync with
/// `FrameInput` in `shaders/shared/crowd.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FrameInput {
    /// Seconds since the last frame.
    pub dt: f32,
    /// The pelvis spring's decay over the frame (1 for `dt` = 0).
    pub pelvis_decay: f32,
    /// The ground springs' decay over the frame.
    pub ground_decay: f32,
    /// The plant-speed filter's decay over the frame, `2^{−dt/half-life}` (0 for no
    /// filtering).
    pub plant_decay: f32,
}

impl FrameInput {
    /// The frame of `dt` seconds for these settings. A frame shorter than
    /// [`MIN_FRAME_TIME`](crate::constants::MIN_FRAME_TIME) (1e-6 s; subnormal times
    /// included) is a frame in which no time passed: `dt` = 0.
    #[must_use]
    pub fn new(placement: &FootPlacement, dt: f32) -> Self {
        let dt = if dt < c::MIN_FRAME_TIME { 0.0 } else { dt };
        // No smoothing (rate 0) gives 1, which no spring then reads.
        let decay = |half_life: f32| (-spring_rate(half_life) * dt).exp();
        Self {
            dt,
            pelvis_decay: decay(placement.pelvis_half_life),
            ground_decay: decay(placement.ground_half_life),
            plant_decay: if placement.plant_speed_half_life > 0.0 {
                (-c::LN_2 / placement.plant_speed_half_life * dt).exp()
            } else {
                0.0
            },
        }
    }
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// A critically damped spring's rate for a half-life: `y = 2 ln 2 / half-life` (0 for a
/// half-life ≤ 0: no smoothing).
#[must_use]
pub fn spring_rate(half_life: f32) -> f32 {
    if half_life > 0.0 {
        2.0 * c::LN_2 / half_life
    } else {
        0.0
    }
}

const _: () = assert!(std::mem::size_of::<FrameInput>() == 16);
const _: () = assert!(std::mem::size_of::<LegState>() == 160);
const _: () = assert!(std::mem::size_of::<CharacterState>() == 672);
