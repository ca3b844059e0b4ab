// Constants shared by the CPU solvers and the WGSL kernels: the one place each is written.
//
// The crate reads this file as `crate::constants` (each entry a `pub const`); `build.rs`
// includes the same file and generates the WGSL module `constants` from it, which a shader
// pulls in with `#import constants`. So a value changed here changes on both sides, and no
// shader declares any of these by hand (`tests/layout.rs` checks that no shader does).
//
// Only `u32` and `f32` entries, each `NAME: type = value;` where the value may use the
// entries above it. Plain `//` comments only at the top: build.rs `include!`s this file.

shared_constants! {
    /// `ChainError::NonFinite`: a position, rotation, target, pole or parameter is NaN or ±inf.
    ERR_NON_FINITE: u32 = 1;
    /// `ChainError::ZeroLengthBone`.
    ERR_ZERO_LENGTH_BONE: u32 = 2;
    /// `ChainError::TargetOnRoot`.
    ERR_TARGET_ON_ROOT: u32 = 3;
    /// `ChainError::PoleOnAxis`.
    ERR_POLE_ON_AXIS: u32 = 4;
    /// `ChainError::DegenerateMidAxis`.
    ERR_DEGENERATE_MID_AXIS: u32 = 5;
    /// `ChainError::InvalidParameter`.
    ERR_INVALID_PARAMETER: u32 = 6;
    /// `ChainError::JointCount`.
    ERR_JOINT_COUNT: u32 = 7;
    /// `ChainError::NotNormalized`.
    ERR_NOT_NORMALIZED: u32 = 8;
    /// `ChainError::OutOfRange`.
    ERR_OUT_OF_RANGE: u32 = 9;
    /// `ChainError::DeviceLoopLimit` (GPU kernels only).
    ERR_DEVICE_LOOP_LIMIT: u32 = 10;

    /// `records::PoleMode::FkPlane` (a limb's `mode.x`).
    POLE_FK_PLANE: u32 = 0;
    /// `records::PoleMode::Position`.
    POLE_POSITION: u32 = 1;
    /// `records::PoleMode::Direction`.
    POLE_DIRECTION: u32 = 2;
    /// `records::PoleMode::Swivel`.
    POLE_SWIVEL: u32 = 3;
    /// `records::BendMode::Hinge` (a limb's `mode.y`).
    BEND_HINGE: u32 = 0;
    /// `records::BendMode::KeepFk`.
    BEND_KEEP_FK: u32 = 1;
    /// `records::BendMode::Reversed`.
    BEND_REVERSED: u32 = 2;

    /// `records::option::KNEE_LIMITS`.
    OPT_KNEE_LIMITS: u32 = 1;
    /// `SolverLeg::mode[1]`: the foot aligns its sole flat to the ground
    /// (`crowd::FootAlign::Flat`); without it the ground's tilt turns the animated foot.
    LEG_ALIGN_FLAT: u32 = 32;
    /// `records::option::KEEP_END_ROTATION`.
    OPT_KEEP_END_ROTATION: u32 = 2;
    /// `records::option::COPY_MID_ROTATION`.
    OPT_COPY_MID_ROTATION: u32 = 4;
    /// `records::option::MIRRORED`.
    OPT_MIRRORED: u32 = 8;
    /// CCD only: sweep the joints from the root to the tip's parent (default: tip first).
    OPT_ROOT_FIRST: u32 = 16;
    /// Look-at only: roll each joint's up axis toward the record's up target.
    OPT_UP_TARGET: u32 = 32;
    /// Look-at only: build each aim as the shortest arc from the current forward axis.
    OPT_SHORTEST_ARC: u32 = 64;
    /// Multi-effector FABRIK only: the root keeps its FK rotation (a pelvis the animation
    /// drives); only the joints below it turn.
    OPT_KEEP_ROOT_ROTATION: u32 = 128;
    /// Constrained FABRIK only: before a hinge joint, turn its parent about its own bone so
    /// the hinge can bend toward where the backward pass left the next joint.
    OPT_ALIGN_HINGES: u32 = 256;
    /// `records::option::LIMB`: the option bits a limb (two-bone, pseudo three-bone) knows.
    OPT_LIMB: u32 = OPT_KNEE_LIMITS | OPT_KEEP_END_ROTATION | OPT_COPY_MID_ROTATION | OPT_MIRRORED;
    /// `records::option::FABRIK`: the option bits a FABRIK chain knows.
    OPT_FABRIK: u32 = OPT_KEEP_END_ROTATION | OPT_MIRRORED;
    /// `records::option::CONSTRAINED_FABRIK`.
    OPT_CONSTRAINED_FABRIK: u32 = OPT_FABRIK | OPT_ALIGN_HINGES;
    /// `records::option::CCD`.
    OPT_CCD: u32 = OPT_FABRIK | OPT_ROOT_FIRST;
    /// `records::option::LOOK_AT`.
    OPT_LOOK_AT: u32 = OPT_UP_TARGET | OPT_SHORTEST_ARC | OPT_MIRRORED;
    /// `records::option::MULTI_FABRIK`.
    OPT_MULTI_FABRIK: u32 = OPT_KEEP_ROOT_ROTATION;
    /// Most joints in a look-at record.
    MAX_LOOK_AT_JOINTS: u32 = 4;
    /// Most joints in a multi-effector FABRIK tree.
    MAX_TREE_JOINTS: u32 = 32;
    /// A tree bone shorter than this fraction of the tree's total length is degenerate
    /// (`ChainError::ZeroLengthBone`): one bone 1e4 times longer than another leaves the
    /// short one's direction to f32 rounding of the long one's end (more than 1e-3 rad).
    MIN_TREE_BONE: f32 = 1e-4;
    /// Least effector weight of a multi-effector FABRIK tree (`ChainError::InvalidParameter`
    /// below): subnormal weights are flushed to zero on GPUs and would turn an effector off
    /// on one twin only.
    MIN_EFFECTOR_WEIGHT: f32 = 1e-6;
    /// Largest effector weight (the weighted sums stay far from f32 overflow).
    MAX_EFFECTOR_WEIGHT: f32 = 1e6;
    /// Largest orientation weight of a damped-least-squares goal, length per radian
    /// (`ChainError::InvalidParameter` above): the squared, weighted residual stays far from
    /// f32 overflow.
    MAX_ORIENTATION_WEIGHT: f32 = 1e6;
    /// Most end effectors of a multi-effector FABRIK tree.
    MAX_EFFECTORS: u32 = 4;
    /// Most starting poses of a damped-least-squares chain (`DlsGoal::starts`).
    MAX_DLS_STARTS: u32 = 8;
    /// The damping at the start of a damped-least-squares solve, as a share of the chain's
    /// length; it stays within [1e-4, 1e3] × this.
    DLS_DAMPING_START: f32 = 0.1;
    /// The least damping of a damped-least-squares solve, as a share of its start.
    DLS_DAMPING_MIN: f32 = 1e-4;
    /// The least damping of a damped-least-squares step, as a share of the error: a chain
    /// stretched toward an unreachable target (its Jacobian near singular) would turn
    /// rounding into steps under a smaller one.
    DLS_ERROR_DAMPING: f32 = 0.3;
    /// Steps in a row that came no closer after which a damped-least-squares start ends.
    DLS_STALL: u32 = 4;
    /// How much closer (a share of the error) a later start must end to be kept.
    DLS_START_MARGIN: f32 = 1e-4;
    /// How much closer (a share of the error) a step must come to be taken.
    DLS_STEP_MARGIN: f32 = 1e-5;
    /// A look-at joint's parent index meaning "outside the record".
    LOOK_AT_NO_PARENT: u32 = 255;

    /// A joint limit's kind bit (`ChainLimits::kinds`, four bits per joint): hinge.
    LIMIT_HINGE: u32 = 1;
    /// Kind bit: swing cone.
    LIMIT_CONE: u32 = 2;
    /// Kind bit: twist range.
    LIMIT_TWIST: u32 = 4;
    /// Least squared length of a (unit) limit axis's part perpendicular to the bone: the
    /// axis at least 0.01 rad (0.57°) off the bone. Closer, f32 rounding moves the hinge's
    /// or the elliptical cone's frame by more than the limits' 1e-4 rad contract.
    LIMIT_AXIS2: f32 = 1e-4;
    /// Least half-angle of a swing cone (radians; `ChainError::InvalidParameter` below). A
    /// thinner ellipse turns f32 rounding across it into more than the limits' 1e-4 rad
    /// contract along it (a swing on the rim of a 1e-5 rad wide cone, off its axis by one
    /// rounding, is 1e-4 rad outside); a joint that must not swing one way is a hinge.
    LIMIT_MIN_CONE: f32 = 1e-3;
    /// π (angle ranges are within `[−π, π]`).
    PI: f32 = std::f32::consts::PI;

    /// `records::info::SOFTENED`.
    INFO_SOFTENED: u32 = 1;
    /// `records::info::KNEE_LIMITED`.
    INFO_KNEE_LIMITED: u32 = 2;
    /// `records::info::STRETCHED`.
    INFO_STRETCHED: u32 = 4;
    /// `records::info::OUT_OF_REACH`.
    INFO_OUT_OF_REACH: u32 = 8;
    /// `records::info::SWIVEL_FALLBACK`.
    INFO_SWIVEL_FALLBACK: u32 = 16;
    /// `records::info::LIMITED`.
    INFO_LIMITED: u32 = 32;
    /// `records::info::AGAINST_HINGE`.
    INFO_AGAINST_HINGE: u32 = 64;
    /// Sine of the FK bend against a limb's hinge past which `INFO_AGAINST_HINGE` is set
    /// (about 11.5°: beyond a real knee's hyperextension, well within a walk's knee bend).
    AGAINST_HINGE: f32 = 0.2;

    /// Most joints in a FABRIK chain record.
    MAX_FABRIK_JOINTS: u32 = 16;
    /// Most fixed FABRIK iterations a record may ask for.
    MAX_FABRIK_ITERATIONS: u32 = 4096;

    /// A bone shorter than this fraction of the chain's total length is "zero length".
    ZERO_BONE: f32 = 1e-6;
    /// Shortest chain (sum of its bones, model units) a solver takes; shorter is
    /// `ChainError::ZeroLengthBone`. Squares and products of a shorter chain's lengths reach
    /// the subnormal range, where the paths (and GPUs that flush subnormals) part ways.
    MIN_CHAIN_LENGTH: f32 = 1e-6;
    /// A target closer to the start joint than this fraction of the chain length is "on the root".
    ON_ROOT: f32 = 1e-5;
    /// Squared sine of the smallest angle between a pole and the start→target axis.
    POLE_ON_AXIS2: f32 = 1e-8;
    /// Smallest length of the hinge axis once made perpendicular to both bones (unit input).
    MIN_HINGE: f32 = 1e-3;
    /// Sine of the bend below which a limb counts as straight when picking its bend side.
    STRAIGHT: f32 = 1e-6;
    /// Largest swivel or twist angle accepted, in radians (±1e4, about 1 600 turns): past it
    /// `ChainError::InvalidParameter`. Angles are reduced to one turn by `x − k·2π` in f32
    /// (`TAU_HI`, `TAU_LO`), within ~1e-6 rad of the exact reduction of the f32 angle up to
    /// here; the f32 angle itself loses the turn altogether beyond ~2²⁴.
    MAX_ANGLE: f32 = 1e4;
    /// A swivel axis whose squared length is below this (an axis shorter than 1e-12) is zero
    /// (`InvalidParameter`): far above the subnormal squares that GPUs may flush to zero, so
    /// the CPU and the GPU cannot disagree on whether a tiny axis is zero.
    MIN_AXIS_LENGTH2: f32 = 1e-24;
    /// 2π in two parts for the reduction of an angle to one turn (Cody–Waite):
    /// `x − k·TAU_HI − k·TAU_LO`. `TAU_HI` has 8 significant bits, so `k·TAU_HI` is exact for
    /// every `k` an angle within `MAX_ANGLE` gives, and a GPU that fuses the multiply into
    /// the subtraction (NVIDIA does) rounds as the CPU does.
    TAU_HI: f32 = 6.28125;
    /// `2π − TAU_HI`.
    TAU_LO: f32 = 0.001_935_307_2;
    /// Largest `|x|`, `|y|`, `|z|` of any joint position, target, pole, hinge axis or
    /// end-effector offset a chain record may hold, in model units; past it
    /// `ChainError::OutOfRange`. Squares and products of such values stay far from f32
    /// overflow (a 1e20 target used to overflow `|t − j0|²` and lose its direction).
    MAX_COORDINATE: f32 = 1e9;
    /// `| |q|² − 1 |` above this is a non-unit rotation (`ChainError::NotNormalized`).
    UNIT_QUAT_TOLERANCE: f32 = 1e-3;
    /// A correction whose `|w|` is at most this (within ~0.01° of a half turn) is weighted
    /// from the hemisphere its axis picks (`HEMISPHERE_X/Y/Z`), not from the sign of a `w`
    /// that rounding leaves at ±0: the way a partial weight turns is then the same on
    /// every path.
    HALF_TURN_W: f32 = 1e-4;
    /// The fixed direction `(0.36, 0.48, 0.8)` (unit; no rig axis nor axis diagonal is
    /// perpendicular to it) whose side the vector part of a near half turn is put on.
    HEMISPHERE_X: f32 = 0.36;
    /// See `HEMISPHERE_X`.
    HEMISPHERE_Y: f32 = 0.48;
    /// See `HEMISPHERE_X`.
    HEMISPHERE_Z: f32 = 0.8;

    /// Most legs of a foot-IK rig.
    MAX_LEGS: u32 = 4;
    /// "No joint" / "no parent" in joint tables.
    NONE: u32 = 0xffff_ffff;
    /// `crowd::foot::HIT`: ground was found under the foot within the step window.
    FOOT_HIT: u32 = 1;
    /// `crowd::foot::SOLVED`: IK was applied to the leg.
    FOOT_SOLVED: u32 = 2;
    /// `crowd::foot::REACHED`: the leg reached its target.
    FOOT_REACHED: u32 = 4;
    /// `crowd::foot::ANGLE_LIMITED`: the foot's tilt was clamped to the max foot angle.
    FOOT_ANGLE_LIMITED: u32 = 8;
    /// `crowd::foot::KNEE_LIMITED`: the knee limits clamped the leg.
    FOOT_KNEE_LIMITED: u32 = 16;
    /// `crowd::foot::LOCKED`: foot placement holds the foot at its locked contact point.
    FOOT_LOCKED: u32 = 32;
    /// `crowd::foot::RESET`: foot placement reset this character's state this frame (spawn,
    /// explicit reset, a frame longer than `MAX_FRAME_TIME`, or a non-finite state).
    FOOT_RESET: u32 = 64;
    /// `crowd::foot::AGAINST_HINGE`: the leg's FK pose bends against its knee hinge.
    FOOT_AGAINST_HINGE: u32 = 128;
    /// `crowd::foot::PELVIS_FAST`: the pelvis moved faster than its max speed, for its bounds.
    FOOT_PELVIS_FAST: u32 = 65536;
    /// `crowd::foot::UNDER_GROUND`: the FK foot was under a heightfield by more than the
    /// step-up window; placed on it anyway.
    FOOT_UNDER_GROUND: u32 = 131072;
    /// ln 2, for springs given by their half-life (`y = 2 ln 2 / half-life`).
    LN_2: f32 = std::f32::consts::LN_2;
    /// Longest frame foot placement integrates (seconds): a longer one (a hitch) resets
    /// every character's state to this frame's solve, flagged `FOOT_RESET`.
    MAX_FRAME_TIME: f32 = 0.25;
    /// `CharacterState::flags` bit: the state holds a frame (zero: reset on next use).
    STATE_VALID: u32 = 1;
    /// `CharacterState::flags`: bit `STATE_LOCKED_SHIFT + leg` = that foot is locked.
    STATE_LOCKED_SHIFT: u32 = 4;
    /// `CharacterState::flags`: bit `STATE_PLANTED_SHIFT + leg` = the plant detector's
    /// hysteresis state of that foot.
    STATE_PLANTED_SHIFT: u32 = 8;
    /// `CharacterState::flags`: bit `STATE_RELEASED_SHIFT + leg` = that foot's lock was
    /// released while it was still planted (by distance or reach): no new lock until the
    /// release has faded or the plant ends.
    STATE_RELEASED_SHIFT: u32 = 12;
    /// `CharacterState::flags`: bit `STATE_HEEL_SHIFT + leg` = that foot's sole pivot is its
    /// heel (else its ball; `crowd::LockPivot::Sole`).
    STATE_HEEL_SHIFT: u32 = 16;
    /// `CharacterState::flags`: bit `STATE_MOTION_SHIFT + leg` = that foot's
    /// `LegState::motion` holds a filtered velocity (zero: the next frame's motion starts it).
    STATE_MOTION_SHIFT: u32 = 20;
    /// A leg's knee pole rule (`SolverLeg::pole_rule`): toward the FK knee
    /// (`crowd::KneePole::FkKnee`).
    KNEE_POLE_FK_KNEE: u32 = 0;
    /// Knee pole rule: keep the FK plane (`crowd::KneePole::FkPlane`).
    KNEE_POLE_FK_PLANE: u32 = 1;
    /// Knee pole rule: a fixed model-space direction (`crowd::KneePole::Direction`).
    KNEE_POLE_DIRECTION: u32 = 2;
    /// Plant detection of a leg (`SolverLeg::mode[3]` low byte): never lock.
    PLANT_OFF: u32 = 0;
    /// Plant detection: the FK contact point's world speed, with hysteresis.
    PLANT_SPEED: u32 = 1;
    /// Plant detection: the caller's foot weight (planted while it is 1).
    PLANT_WEIGHTS: u32 = 2;
    /// `SolverLeg::mode[3]` bit: lock the ball (toe joint) instead of the whole foot, the
    /// foot keeping its animated tilt so the heel can lift.
    PIVOT_BALL: u32 = 256;
    /// `SolverLeg::mode[3]` bit: lock the end of the sole on the ground (heel or ball,
    /// passed from one to the other as the foot rolls through flat).
    PIVOT_SOLE: u32 = 512;
    /// Smallest and largest character scale (`CharacterInput::root_ws.w`) foot IK accepts;
    /// outside, the character gets `ChainError::InvalidParameter` (model space is world
    /// space divided by the scale: a denormal scale made every joint below the pelvis inf).
    MIN_CHARACTER_SCALE: f32 = 1e-4;
    /// See `MIN_CHARACTER_SCALE`.
    MAX_CHARACTER_SCALE: f32 = 1e4;
    /// Largest world coordinate foot IK accepts, in world units: a root translation past it
    /// is `ChainError::InvalidParameter`, a caller hit past it is no ground (squares of the
    /// distances involved stay far from f32 overflow).
    MAX_WORLD_COORDINATE: f32 = 1e9;
    /// Most grid lines a two-bone foot's sole may cross on a heightfield for it to be
    /// measured where it crosses them (and midway between); crossing more, it is measured at
    /// `SOLE_POINTS` evenly spaced points.
    SOLE_CROSSINGS: u32 = 4;
    /// Most points between heel and ball at which a sole is measured on a heightfield
    /// (`2 × SOLE_CROSSINGS + 1`).
    SOLE_POINTS: u32 = 2 * SOLE_CROSSINGS + 1;
    /// Ground bulging above the chord from heel to ball by up to this fraction of the sole's
    /// length is gentle: the sole takes the chord's slope (both ends touch or stand equally
    /// high).
    SOLE_BUMP_LOW: f32 = 0.1;
    /// Ground bulging above the chord by this fraction of the sole's length or more is a
    /// step: the sole lies flat on it (the ground's upper hull); blended smoothly between.
    SOLE_BUMP_HIGH: f32 = 0.3;
    /// A two-bone foot turned to the ground whose heel and tip moved less than this (world
    /// units, horizontally) from where the ground under it was first measured keeps that
    /// measure (flat ground: the turn moves nothing) instead of measuring again; the
    /// measure again is blended in over moves of one to two times this, so the normal is
    /// continuous in where the foot stands.
    SOLE_SETTLE_MIN: f32 = 1e-4;
    /// A sole pivot (`LockPivot::Sole`) passes from the end of the sole it holds to the other
    /// only once the other is nearer the ground under it (lower along the ground normal where
    /// the leg found no ground) by more than this fraction of the heel-to-ball length (0.06°
    /// of pitch): a foot flat on the ground keeps its pivot rather than let rounding choose
    /// (the two twins round differently).
    SOLE_PIVOT_MARGIN: f32 = 1e-3;
    /// Bisection steps placing a foot's lift-off inside its frame, where its speed crossed
    /// the plant's exit threshold on the parabola through the last three frames' speeds (to
    /// 2⁻¹⁶ of a frame).
    CROSSING_STEPS: u32 = 16;
    /// A heightfield's slope across a cell edge blends into the neighbouring cell's within
    /// this fraction of a cell of the edge (half of each on it): the normal is continuous,
    /// exact (the bilinear patch's) everywhere else, and points a rounding apart (the two
    /// twins' feet) get normals a rounding apart.
    HEIGHTFIELD_EDGE_BAND: f32 = 1e-3;
    /// Ground whose normal has `y` at or below this fraction of its length is a wall: no hit.
    MIN_GROUND_NORMAL_Y: f32 = 1e-3;
    /// A caller hit's normal whose squared length is below this cannot be normalised in f32
    /// (its square underflows): no ground.
    MIN_NORMAL_LENGTH2: f32 = 1e-30;
    /// Shortest frame foot placement integrates (seconds): a shorter one, subnormal frame
    /// times included, is a frame in which no time passed (a GPU that flushes subnormals
    /// sees 0 as well).
    MIN_FRAME_TIME: f32 = 1e-6;
    /// Largest sum of the magnitudes of a `CharacterState`'s values (its rig's legs): past
    /// it (or NaN, inf) the state is garbage and resets its character. The crate writes
    /// world coordinates within `MAX_WORLD_COORDINATE`, so a valid state of four legs sums
    /// to under ~5.2e10.
    MAX_STATE_MAGNITUDE: f32 = 1e11;
    /// Largest magnitude of a leg state's heading words (a unit heading while locked, a
    /// release angle in `[−π, π]` otherwise): past it the state resets.
    MAX_STATE_HEADING: f32 = 4.0;
    /// Shortest spring half-life foot placement accepts (seconds; 0 = no smoothing): a
    /// shorter one's rate overflows the spring's arithmetic in f32.
    MIN_HALF_LIFE: f32 = 1e-4;
    /// Largest distance (world units), speed (per second) or time (seconds) a foot rig's
    /// settings may hold: foot heights, the pelvis and step limits, tolerances, speeds,
    /// half-lives. Past it `IkError::InvalidRig`.
    MAX_RIG_SETTING: f32 = 1e6;
    /// Fastest a spring's goal may move (world units or radians per second): a goal that
    /// jumps farther in one frame is a discontinuity, followed as a step (the spring does
    /// not extrapolate a velocity of 1e15 from a teleport over a microsecond).
    MAX_GOAL_SPEED: f32 = 1e4;
}
