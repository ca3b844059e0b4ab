//! The foot-IK rig: which joints form the pelvis and legs, and the settings of each leg.

use bytemuck::Zeroable;
use glam::Vec3;

use super::ground::Ground;
use super::placement::FootPlacement;
use super::records::{JointPose, SolverLeg, SolverRig};
use super::{MAX_LEGS, MAX_SKELETON_JOINTS, NONE};
use crate::error::IkError;

/// How a leg is solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LegKind {
    /// Hip, knee, ankle two-bone IK; the ankle is placed foot-height above the ground and the
    /// foot aligned to the ground normal (bipeds).
    TwoBone,
    /// Hip, knee, hock, hoof-tip pseudo three-bone IK; the tip (`toe`) is placed foot-height
    /// above the ground (quadruped hind legs). `blend` is the hock's blend ratio
    /// (0 = follow the limb, 1 = keep FK).
    PseudoThreeBone {
        /// Hock blend ratio in [0, 1].
        blend: f32,
    },
}

/// How a leg's knee pole (the side the knee points to) is chosen each frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum KneePole {
    /// Toward the FK knee: the knee's offset from the FK hip→ankle line, so the knee keeps
    /// pointing where the animation pointed it; a straight FK leg keeps its FK plane.
    #[default]
    FkKnee,
    /// Keep the FK bend plane: the hip turns the shortest way (`PoleMode::FkPlane`).
    FkPlane,
    /// Toward a fixed direction in the character's model space (e.g. forward, +Z).
    Direction(Vec3),
}

/// One leg of a rig.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegRig {
    /// Two-bone or pseudo three-bone.
    pub kind: LegKind,
    /// Joint indices in the skeleton: hip (thigh start), knee, ankle (hock), toe (hoof tip).
    /// A two-bone leg whose foot has no toe joint (a quadruped's front leg ending at the
    /// paw) gives its ankle as its toe: its sole is a point, `foot_height` under the ankle.
    pub joints: [usize; 4],
    /// Height of the reference joint above the sole: the ankle (two-bone) or the toe tip
    /// (pseudo three-bone).
    pub foot_height: f32,
    /// Two-bone legs: how far the sole reaches behind the point under the ankle (world
    /// units, ≥ 0). The sole the foot rests on runs from the heel (under the ankle, this
    /// much further back) to the ball (the toe joint brought down to the sole,
    /// [`LegRig::toe_length`] further forward); what touches the ground first when the
    /// foot is rolled (a heel strike, a toe off) is its end. 0 for a rig from a skeleton
    /// alone; a glTF character's mesh gives it (`GltfScene::foot_rig`).
    pub heel_length: f32,
    /// Two-bone legs: how far the sole reaches past the ball, the toe joint (world units,
    /// ≥ 0): a shoe's tip beyond its last joint. See [`LegRig::heel_length`].
    pub toe_length: f32,
    /// Two-bone legs: the direction in which the sole runs on past the ball, in the toe
    /// joint's own frame (any length; zero = straight on with the foot). The part of a
    /// shoe past its toe joint bends with the toes: at a toe off the foot pitches up about
    /// the ball while the toes stay flat, and a sole straight with the foot would put its
    /// tip `toe_length · sin(pitch)` into the ground (the foot then floats by as much).
    /// [`FootRig::from_joints`] sets it to the rest pose's forward along the sole (the toe
    /// joint's direction from the ankle, across the foot's up axis), so an unflexed toe
    /// continues the sole straight; it only matters where `toe_length` > 0.
    pub toe_forward: Vec3,
    /// Knee hinge axis in the knee's local space (see `LimbSettings::mid_axis`).
    pub knee_axis: Vec3,
    /// Knee inner-angle limits `[min, max]` radians, if any.
    pub knee_limits: Option<(f32, f32)>,
    /// Most the foot may turn to align with the ground (radians): the ground's tilt
    /// ([`FootAlign::KeepRoll`]) or the sole's turn to the normal ([`FootAlign::Flat`]).
    pub max_foot_angle: f32,
    /// The foot's up axis in the ankle's local space (two-bone legs): the normal of the
    /// sole as the character stands (see [`FootAlign`]).
    pub foot_up: Vec3,
    /// How the knee pole is chosen.
    pub knee_pole: KneePole,
    /// How a two-bone foot meets the ground.
    pub align: FootAlign,
}

/// How a two-bone foot meets sloped ground.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FootAlign {
    /// The animated foot turned by the ground's tilt (the turn taking the world's up, as the
    /// character's model space sees it, to the ground normal; whatever way the model space
    /// is turned): the animation's own pitch and roll are kept relative to the
    /// ground, so a foot in heel strike or toe off keeps it on a slope, and a foot flat as
    /// the character stands (its sole normal `foot_up` along the character's up) lands flat.
    /// Then the foot is moved so the lower of heel and ball touches the ground under it.
    #[default]
    KeepRoll,
    /// The sole laid flat on the ground: the foot's up axis (`foot_up`) turned onto the
    /// ground normal, whatever the animation's pitch and roll.
    Flat,
}

/// Which joints form the legs and pelvis of a skeleton, and the foot-IK settings.
#[derive(Clone, Debug, PartialEq)]
pub struct FootRig {
    /// Parent of every joint (`None` for roots), parents before children.
    pub parents: Vec<Option<usize>>,
    /// The pelvis joint: lowered as a whole with everything below it.
    pub pelvis: usize,
    /// One to [`MAX_LEGS`] legs; their joints must descend from the pelvis.
    pub legs: Vec<LegRig>,
    /// Most the pelvis may drop (world units).
    pub max_pelvis_drop: f32,
    /// The ground ray starts this far above the foot: higher ground is ignored (a wall,
    /// ground above the hip).
    pub max_step_up: f32,
    /// ...and ends this far below it: deeper ground is ignored (a cliff, a hole).
    pub max_step_down: f32,
    /// Foot placement across frames (springs, locked feet; see [`FootPlacement`]), or `None`
    /// for a stateless solve of every frame from scratch.
    pub placement: Option<FootPlacement>,
    /// How often the ground under a two-bone foot is measured on a heightfield.
    pub sole_measure: SoleMeasure,
}

/// How often the ground under a two-bone foot is measured on a heightfield: once under the
/// animated foot, or again under the foot turned to that first measure, where its heel and
/// ball will be. Across a crease the second measure keeps both ends on the ground (creased
/// terrain at 4 m of relief: 2.9 mm at worst against 9.3 measured once); it costs the
/// stateless frame a quarter to a third more on the CPU and a sixth more on lavapipe
/// (BENCHMARKS.md).
/// Flat ground is measured once either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SoleMeasure {
    /// Measured again under the turned foot (the default).
    #[default]
    Twice,
    /// Measured once, under the animated foot: cheaper, and off by what the turn moves the
    /// heel and ball across a crease.
    Once,
}

fn rig_error(msg: impl Into<String>) -> IkError {
    IkError::InvalidRig(msg.into())
}

impl FootRig {
    /// Checks the rig. Rules: 1 to 1024 joints, parents before children; 1 to 4 legs; every
    /// leg joint in range, each descending from the previous (hip from the pelvis); knee axis
    /// and foot up non-zero and finite; foot height in `[0, 1e6]`; `0 ≤ θmin ≤ θmax ≤ π`; max
    /// foot angle in `[0, π]`; blend in `[0, 1]`; max pelvis drop, max step up and down in
    /// `[0, 1e6]` ([`crate::constants::MAX_RIG_SETTING`]); the placement settings
    /// ([`FootPlacement::validate`]).
    pub fn validate(&self) -> Result<(), IkError> {
        let n = self.parents.len();
        if n == 0 || n > MAX_SKELETON_JOINTS {
            return Err(rig_error(format!("{n} joints; 1 to {MAX_SKELETON_JOINTS} supported")));
        }
        for (j, p) in self.parents.iter().enumerate() {
            if let Some(p) = p {
                if *p >= j {
                    return Err(rig_error(format!("joint {j} has parent {p}: parents must come first")));
                }
            }
        }
        if self.pelvis >= n {
            return Err(rig_error(format!("pelvis {} out of range", self.pelvis)));
        }
        if self.legs.is_empty() || self.legs.len() > MAX_LEGS {
            return Err(rig_error(format!("{} legs; 1 to {MAX_LEGS} supported", self.legs.len())));
        }
        if let Some(p) = &self.placement {
            p.validate()?;
        }
        // Distances within MAX_RIG_SETTING: a foot a kilometre high is no foot, and past
        // ~1e19 their squares overflow f32.
        let finite = |x: f32| (0.0..=crate::constants::MAX_RIG_SETTING).contains(&x);
        if !(finite(self.max_pelvis_drop) && finite(self.max_step_up) && finite(self.max_step_down)) {
            return Err(rig_error("max pelvis drop and step limits must be in [0, 1e6]"));
        }
        for (l, leg) in self.legs.iter().enumerate() {
            let mut above = self.pelvis;
            for (k, &j) in leg.joints.iter().enumerate() {
                if j >= n {
                    return Err(rig_error(format!("leg {l}: joint {j} out of range")));
                }
                let point_foot = k == 3 && j == above && leg.kind == LegKind::TwoBone;
                if !point_foot && (!self.descends(j, above) || j == above) {
                    return Err(rig_error(format!("leg {l}: joint {j} does not descend from joint {above}")));
                }
                above = j;
            }
            let axis_ok = |v: Vec3| v.is_finite() && v.length_squared() > 1e-12;
            if !axis_ok(leg.knee_axis) || !axis_ok(leg.foot_up) {
                return Err(rig_error(format!("leg {l}: knee axis and foot up must be non-zero")));
            }
            if let KneePole::Direction(d) = leg.knee_pole {
                if !axis_ok(d) {
                    return Err(rig_error(format!("leg {l}: knee pole direction must be non-zero and finite")));
                }
            }
            if !finite(leg.foot_height) || !(0.0..=std::f32::consts::PI).contains(&leg.max_foot_angle) {
                return Err(rig_error(format!("leg {l}: foot height in [0, 1e6] and max foot angle in [0, π]")));
            }
            if !(finite(leg.heel_length) && finite(leg.toe_length)) {
                return Err(rig_error(format!("leg {l}: heel and toe lengths in [0, 1e6]")));
            }
            if !(leg.toe_forward.is_finite()
                && (leg.toe_forward == Vec3::ZERO || leg.toe_forward.length_squared() > 1e-12))
            {
                return Err(rig_error(format!("leg {l}: toe forward must be zero or a finite, non-zero direction")));
            }
            if let Some((lo, hi)) = leg.knee_limits {
                if !(0.0 <= lo && lo <= hi && hi <= std::f32::consts::PI) {
                    return Err(rig_error(format!("leg {l}: knee limits need 0 ≤ min ≤ max ≤ π")));
                }
            }
            if let LegKind::PseudoThreeBone { blend } = leg.kind {
                if !(0.0..=1.0).contains(&blend) {
                    return Err(rig_error(format!("leg {l}: blend must be in [0, 1]")));
                }
            }
        }
        Ok(())
    }

    /// The rig with foot placement across frames (`Some`) or stateless (`None`).
    #[must_use]
    pub fn with_placement(mut self, placement: Option<FootPlacement>) -> Self {
        self.placement = placement;
        self
    }

    /// The rig measuring the ground under its two-bone feet once or twice ([`SoleMeasure`]).
    #[must_use]
    pub fn with_sole_measure(mut self, measure: SoleMeasure) -> Self {
        self.sole_measure = measure;
        self
    }

    /// `true` when `j` is `ancestor` or below it.
    fn descends(&self, mut j: usize, ancestor: usize) -> bool {
        loop {
            if j == ancestor {
                return true;
            }
            match self.parents[j] {
                Some(p) => j = p,
                None => return false,
            }
        }
    }

    /// Number of joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// The joint table the kernel reads: parents (`NONE` for roots) then roles
    /// (`leg * 4 + slot`, `NONE` for joints IK does not turn).
    #[must_use]
    pub fn joint_table(&self) -> Vec<u32> {
        let n = self.parents.len();
        let mut t: Vec<u32> = self.parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
        t.extend(std::iter::repeat_n(NONE, n));
        for (l, leg) in self.legs.iter().enumerate() {
            for (slot, &j) in leg.joints.iter().enumerate().take(3) {
                t[n + j] = (l * 4 + slot) as u32;
            }
        }
        t
    }

    /// Sets each two-bone leg's sole (`foot_up`) from how the character stands in a clip
    /// rather than from its bind pose: over `poses` (the clip's model-space FK poses, one
    /// every `dt` seconds), the frames where that foot is still and planted — its ankle
    /// at most 1 cm (model units × `scale`) above its floor level (the 10th percentile of
    /// its heights over the clip along `up`, the model's up axis) and moving slower than
    /// 0.1 m/s — give the ankle rotations a
    /// standing foot has, and `foot_up` becomes the model up seen from the ankle, averaged
    /// over the half of them closest to their mean (so heel strikes and toe offs, low and
    /// slow too, do not tilt it). With [`FootAlign::KeepRoll`] a foot posed as it stands then lands flat
    /// (heel and ball on flat ground alike), while heel strikes and toe offs keep their
    /// roll. Returns, per leg, how many frames were used (a leg with none keeps its
    /// `foot_up`; pseudo three-bone legs have no sole and are skipped).
    pub fn calibrate_soles(&mut self, poses: &[Vec<JointPose>], dt: f32, scale: f32, up: Vec3) -> Vec<usize> {
        let up = up.normalize_or(Vec3::Y);
        let mut used = vec![0; self.legs.len()];
        for (l, leg) in self.legs.iter_mut().enumerate() {
            if leg.kind != LegKind::TwoBone {
                continue;
            }
            let ankle = leg.joints[2];
            let valid = |p: &Vec<JointPose>| p.len() > ankle && p[ankle].position().is_finite();
            // The floor level of the ankle: a low percentile of its heights (the lowest is
            // often an outlier: a bind pose in the first frame, a stumble).
            let mut heights: Vec<f32> =
                poses.iter().filter(|p| valid(p)).map(|p| p[ankle].position().dot(up)).collect();
            if heights.is_empty() {
                continue;
            }
            heights.sort_by(f32::total_cmp);
            let lowest = heights[heights.len() / 10];
            let mut ups = Vec::new();
            for w in poses.windows(2) {
                if !(valid(&w[0]) && valid(&w[1])) {
                    continue;
                }
                let (a, b) = (w[0][ankle], w[1][ankle]);
                let low = (b.position().dot(up) - lowest) * scale <= 0.01;
                let still = dt > 0.0 && (b.position() - a.position()).length() * scale / dt < 0.1;
                let q = b.rotation();
                if low && still && q.is_finite() && q.is_normalized() {
                    ups.push(q.conjugate() * up);
                }
            }
            // The standing sole: the mean of the half of those frames closest to their mean
            // (a low, slow ankle also comes with heel strikes and toe offs, which would tilt
            // a plain mean).
            let Some(mean) = ups.iter().sum::<Vec3>().try_normalize() else { continue };
            ups.sort_by(|a, b| b.dot(mean).total_cmp(&a.dot(mean)));
            ups.truncate(ups.len().div_ceil(2));
            used[l] = ups.len();
            if let Some(foot_up) = ups.iter().sum::<Vec3>().try_normalize() {
                leg.foot_up = foot_up;
            }
        }
        used
    }

    /// Sets each two-bone leg's sole from the character's mesh rather than its joints: a
    /// skeleton alone puts the sole at the toe joint's height, from under the ankle to the
    /// toe joint, but a shoe's sole is usually below its joints and reaches behind the ankle
    /// and past the last toe joint, and those ends are what touch the ground first in a
    /// heel strike or a toe off. `rest` is the rest pose (model space, the file's units) and
    /// `mesh` the vertices posed in it (model space: positions, four joints and weights
    /// each). From the foot's vertices (those bound at least half to the ankle or joints
    /// below it): `foot_height` becomes the ankle's height above the lowest of them along
    /// `up`; `heel_length` and `toe_length` how far the sole's vertices (within a quarter of
    /// that height of the lowest) reach behind the ankle and past the toe joint along the
    /// foot's forward (the toe joint's direction from the ankle, across `up`). Lengths in
    /// world units: model units × `scale`. Returns per leg how many vertices were used (a leg
    /// with none, or a pseudo three-bone leg, keeps its values).
    pub fn fit_soles(
        &mut self,
        rest: &[JointPose],
        (positions, joints, weights): (&[Vec3], &[[u16; 4]], &[[f32; 4]]),
        up: Vec3,
        scale: f32,
    ) -> Vec<usize> {
        let up = up.normalize_or(Vec3::Y);
        let mut used = vec![0; self.legs.len()];
        let n = self.parents.len();
        for (l, leg) in self.legs.iter_mut().enumerate() {
            if leg.kind != LegKind::TwoBone || rest.len() != n {
                continue;
            }
            let foot = joints_below(&self.parents, leg.joints[2]);
            let [ankle, toe] = [rest[leg.joints[2]].position(), rest[leg.joints[3]].position()];
            let on_foot = |j: &[u16; 4], w: &[f32; 4]| -> f32 {
                (0..4).filter(|&k| foot.get(usize::from(j[k])).copied().unwrap_or(false)).map(|k| w[k]).sum()
            };
            let points: Vec<Vec3> = positions
                .iter()
                .zip(joints.iter().zip(weights))
                .filter(|(p, (j, w))| p.is_finite() && on_foot(j, w) >= 0.5)
                .map(|(p, _)| *p - ankle)
                .collect();
            let lowest = points.iter().map(|v| v.dot(up)).fold(f32::INFINITY, f32::min);
            let height = -lowest * scale;
            if !(height.is_finite() && (0.0..=crate::constants::MAX_RIG_SETTING).contains(&height)) {
                continue;
            }
            used[l] = points.len();
            leg.foot_height = height;
            let toe_off = toe - ankle;
            let reach = toe_off - up * toe_off.dot(up);
            let Some(forward) = reach.try_normalize() else { continue };
            let sole = points.iter().filter(|v| v.dot(up) <= lowest * 0.75).map(|v| v.dot(forward));
            let (back, front) = sole.fold((0.0_f32, f32::MIN), |(b, f), x| (b.min(x), f.max(x)));
            let fits = |x: f32| x.is_finite() && x <= crate::constants::MAX_RIG_SETTING;
            if fits(-back * scale) && fits((front - reach.length()) * scale) {
                leg.heel_length = -back * scale;
                leg.toe_length = ((front - reach.length()) * scale).max(0.0);
            }
        }
        used
    }

    /// The packed rig both foot-IK twins read, for this rig and ground.
    #[doc(hidden)] // kernel plumbing
    #[must_use]
    pub fn solver_rig(&self, ground: &Ground) -> SolverRig {
        let mut r = SolverRig::zeroed();
        let (mode, grid, origin) = match ground {
            Ground::Heightfield(h) => (0, [h.nx as u32, h.nz as u32], [h.origin.x, h.origin.y, h.cell]),
            Ground::Hits => (1, [0, 0], [0.0, 0.0, 1.0]),
        };
        r.header = [self.parents.len() as u32, self.pelvis as u32, self.legs.len() as u32, mode];
        r.grid =
            [grid[0], grid[1], u32::from(self.placement.is_some()), u32::from(self.sole_measure == SoleMeasure::Once)];
        r.ground = [origin[0], origin[1], origin[2], 0.0];
        r.params = [self.max_pelvis_drop, self.max_step_up, self.max_step_down, 0.0];
        if let Some(p) = &self.placement {
            r.springs = [p.pelvis_half_life, p.pelvis_max_speed, p.pelvis_max_rise, p.ground_half_life];
            r.params[3] = p.swing_lookahead;
            r.blend = [p.ground_tolerance, p.weight_blend_time, p.max_reach, p.root_snap_speed];
        }
        for (l, leg) in self.legs.iter().enumerate() {
            let (kind, blend) = match leg.kind {
                LegKind::TwoBone => (0, 1.0),
                LegKind::PseudoThreeBone { blend } => (1, blend),
            };
            let (mut limits, cos_min, cos_max) = match leg.knee_limits {
                Some((lo, hi)) => (crate::records::option::KNEE_LIMITS, lo.cos(), hi.cos()),
                None => (0, 1.0, -1.0),
            };
            if leg.align == FootAlign::Flat {
                limits |= crate::constants::LEG_ALIGN_FLAT;
            }
            let j = leg.joints.map(|j| j as u32);
            let (pole_rule, pole) = match leg.knee_pole {
                KneePole::FkKnee => (crate::constants::KNEE_POLE_FK_KNEE, Vec3::ZERO),
                KneePole::FkPlane => (crate::constants::KNEE_POLE_FK_PLANE, Vec3::ZERO),
                KneePole::Direction(d) => (crate::constants::KNEE_POLE_DIRECTION, d.normalize()),
            };
            let (lock, placement) = self.placement.map_or(([0.0; 4], 0), |p| p.pack_leg(l));
            r.legs[l] = SolverLeg {
                joints: j,
                mode: [kind, limits, pole_rule, placement],
                lock,
                knee_axis: leg.knee_axis.normalize().extend(leg.foot_height).to_array(),
                limits: [cos_min, cos_max, leg.max_foot_angle.cos(), leg.max_foot_angle.sin()],
                foot_up: leg.foot_up.normalize().extend(blend).to_array(),
                pole: pole.extend(0.0).to_array(),
                sole: [leg.heel_length, leg.toe_length, 0.0, 0.0],
                // Zero where the sole does not reach past the ball: the kernels skip it.
                toe: if leg.toe_length > 0.0 { leg.toe_forward.normalize_or_zero() } else { Vec3::ZERO }
                    .extend(0.0)
                    .to_array(),
            };
        }
        r
    }
}

/// Which joints are `joint` or hang below it, for a skeleton whose `parents` come first (one
/// pass): a foot's joints from its ankle, say.
#[must_use]
pub fn joints_below(parents: &[Option<usize>], joint: usize) -> Vec<bool> {
    let mut mask = vec![false; parents.len()];
    for j in 0..parents.len() {
        mask[j] = j == joint || parents[j].is_some_and(|p| p < j && mask[p]);
    }
    mask
}

/// Settings for the rigs built from a skeleton ([`FootRig::from_joints`], and through it
/// `FootRig::biped`, `from_names`, `detect_bvh` and the glTF loader's `foot_rig`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BipedSettings {
    /// The character's forward direction in model space (CMU: +Z).
    pub forward: Vec3,
    /// Up in model space (+Y).
    pub up: Vec3,
    /// Knee limits (radians).
    pub knee_limits: Option<(f32, f32)>,
    /// Max foot angle (radians).
    pub max_foot_angle: f32,
    /// Max pelvis drop (world units).
    pub max_pelvis_drop: f32,
    /// Ground window above the foot (world units).
    pub max_step_up: f32,
    /// Ground window below the foot (world units).
    pub max_step_down: f32,
}

impl Default for BipedSettings {
    fn default() -> Self {
        Self {
            forward: Vec3::Z,
            up: Vec3::Y,
            knee_limits: Some((0.0, 175f32.to_radians())),
            max_foot_angle: 35f32.to_radians(),
            max_pelvis_drop: 0.4,
            max_step_up: 0.5,
            max_step_down: 0.6,
        }
    }
}

impl FootRig {
    /// A rig from a skeleton's joints: its parents, rest pose in model space, the pelvis
    /// and, per leg, `[hip, knee, ankle, toe]` with its kind. From the rest pose it derives
    /// the knee hinge, in the knee's frame: from the leg's own bend where the rest pose
    /// bends it (more than ~6°: `(hip − knee) × (ankle − knee)`, so a quadruped's elbows
    /// and stifles, which bend opposite ways, each get the side they bend to), else
    /// `forward × up` (a straight rest leg, as in most human skeletons); the foot's up axis
    /// (in the ankle's frame) and the foot height (two-bone: ankle above toe along `up`;
    /// pseudo three-bone: 0, the hoof tip is the sole). Knee poles follow the FK knee. No
    /// bone axis convention is assumed: the axes are read in each joint's own frame.
    ///
    /// # Errors
    /// [`IkError::InvalidRig`] when the rig does not validate ([`FootRig::validate`]).
    pub fn from_joints(
        parents: &[Option<usize>],
        rest: &[JointPose],
        pelvis: usize,
        legs: &[([usize; 4], LegKind)],
        s: BipedSettings,
    ) -> Result<Self, IkError> {
        if rest.len() != parents.len() || legs.iter().flat_map(|(j, _)| j).chain([&pelvis]).any(|&j| j >= rest.len()) {
            return Err(rig_error("joints out of range of the rest pose"));
        }
        let hinge = s.forward.cross(s.up).normalize();
        let mut rig_legs = Vec::new();
        for (joints, kind) in legs {
            let joints = *joints;
            let foot_height = match kind {
                LegKind::TwoBone => (rest[joints[2]].position() - rest[joints[3]].position()).dot(s.up).max(0.0),
                LegKind::PseudoThreeBone { .. } => 0.0,
            };
            // A hinge against the rest bend would count every FK bend as backwards: the
            // solver would bend the knee the hinge's way and roll the limb half a turn to face
            // the pole (joints in place, bones twisted).
            let [hip, knee, ankle] = [0, 1, 2].map(|k| rest[joints[k]].position());
            let bend = (hip - knee).cross(ankle - knee);
            let leg_hinge = if bend.length() > 0.1 * (hip - knee).length() * (ankle - knee).length() {
                bend.normalize()
            } else {
                hinge
            };
            // The sole past the ball runs on along the rest foot, seen from the toe joint.
            let toe_forward = match kind {
                LegKind::TwoBone if joints[3] != joints[2] => {
                    let reach = rest[joints[3]].position() - ankle;
                    let forward = (reach - s.up * reach.dot(s.up)).normalize_or_zero();
                    rest[joints[3]].rotation().conjugate() * forward
                }
                _ => Vec3::ZERO,
            };
            rig_legs.push(LegRig {
                kind: *kind,
                joints,
                foot_height,
                heel_length: 0.0,
                toe_length: 0.0,
                toe_forward,
                knee_axis: rest[joints[1]].rotation().conjugate() * leg_hinge,
                knee_limits: s.knee_limits,
                max_foot_angle: s.max_foot_angle,
                foot_up: rest[joints[2]].rotation().conjugate() * s.up,
                knee_pole: KneePole::FkKnee,
                align: FootAlign::default(),
            });
        }
        let rig = Self {
            parents: parents.to_vec(),
            pelvis,
            legs: rig_legs,
            max_pelvis_drop: s.max_pelvis_drop,
            max_step_up: s.max_step_up,
            max_step_down: s.max_step_down,
            placement: None,
            sole_measure: SoleMeasure::default(),
        };
        rig.validate()?;
        Ok(rig)
    }
}
