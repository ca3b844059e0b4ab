//! A BVH (Biovision hierarchy) loader: skeleton, channels and frames, and model-space poses
//! per frame, so real motion capture (e.g. the CMU clips in Debian's `assimp-testmodels`)
//! can drive the crowd.

use glam::{Quat, Vec3};

use crate::crowd::{FootAlign, FootRig, JointPose, KneePole, LegKind, LegRig};
use crate::error::IkError;

/// One animated channel of a joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Translation along X, Y, Z.
    Position(usize),
    /// Rotation in degrees about X, Y, Z.
    Rotation(usize),
}

/// A joint hierarchy with rest offsets.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// Joint names (End Sites are not joints).
    pub names: Vec<String>,
    /// Parent of each joint, parents first.
    pub parents: Vec<Option<usize>>,
    /// Offset of each joint from its parent in the rest pose (file units).
    pub offsets: Vec<Vec3>,
    /// Channels of each joint, in file order.
    pub channels: Vec<Vec<Channel>>,
}

/// A skeleton and its frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The hierarchy.
    pub skeleton: Skeleton,
    /// Seconds per frame.
    pub frame_time: f32,
    /// Channel values, `frames × channel count`, in file order.
    pub values: Vec<f32>,
    /// Channel count per frame.
    pub channel_count: usize,
}

impl Skeleton {
    /// Index of the joint named `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Number of joints.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// `true` for a skeleton without joints.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The rest pose in model space (all rotations identity), offsets scaled by `scale`.
    #[must_use]
    pub fn rest_pose(&self, scale: f32) -> Vec<JointPose> {
        let mut out: Vec<JointPose> = Vec::with_capacity(self.len());
        for j in 0..self.len() {
            let p = self.parents[j].map_or(Vec3::ZERO, |p| out[p].position()) + self.offsets[j] * scale;
            out.push(JointPose::new(p, Quat::IDENTITY));
        }
        out
    }
}

impl Clip {
    /// Parses BVH text.
    pub fn parse(text: &str) -> Result<Self, IkError> {
        let bad = |m: String| IkError::Parse(format!("bvh: {m}"));
        let mut tokens = text.split_whitespace().peekable();
        let expect =
            |want: &str, tokens: &mut std::iter::Peekable<std::str::SplitWhitespace<'_>>| -> Result<(), IkError> {
                match tokens.next() {
                    Some(t) if t.eq_ignore_ascii_case(want) => Ok(()),
                    other => Err(IkError::Parse(format!("bvh: expected {want}, found {other:?}"))),
                }
            };
        expect("HIERARCHY", &mut tokens)?;
        let mut sk = Skeleton { names: vec![], parents: vec![], offsets: vec![], channels: vec![] };
        let mut stack: Vec<Option<usize>> = vec![]; // None = an End Site block
        let num = |t: Option<&str>| -> Result<f32, IkError> {
            t.and_then(|t| t.parse().ok()).ok_or_else(|| IkError::Parse(format!("bvh: expected a number, found {t:?}")))
        };
        loop {
            let Some(tok) = tokens.next() else { return Err(bad("unexpected end of hierarchy".into())) };
            match tok {
                "ROOT" | "JOINT" => {
                    let name = tokens.next().ok_or_else(|| bad("joint without a name".into()))?.to_string();
                    let parent = stack.last().copied().flatten();
                    if tok == "JOINT" && parent.is_none() {
                        return Err(bad(format!("joint {name} outside a joint")));
                    }
                    expect("{", &mut tokens)?;
                    sk.names.push(name);
                    sk.parents.push(parent);
                    sk.offsets.push(Vec3::ZERO);
                    sk.channels.push(vec![]);
                    stack.push(Some(sk.names.len() - 1));
                }
                "End" => {
                    expect("Site", &mut tokens)?;
                    expect("{", &mut tokens)?;
                    stack.push(None);
                }
                "OFFSET" => {
                    let v = Vec3::new(num(tokens.next())?, num(tokens.next())?, num(tokens.next())?);
                    if let Some(Some(j)) = stack.last() {
                        sk.offsets[*j] = v;
                    }
                }
                "CHANNELS" => {
                    let n = num(tokens.next())? as usize;
                    let Some(Some(j)) = stack.last().copied() else {
                        return Err(bad("CHANNELS outside a joint".into()));
                    };
                    for _ in 0..n {
                        let c = tokens.next().ok_or_else(|| bad("missing channel".into()))?;
                        let axis = match c.chars().next().map(|c| c.to_ascii_uppercase()) {
                            Some('X') => 0,
                            Some('Y') => 1,
                            Some('Z') => 2,
                            _ => return Err(bad(format!("unknown channel {c}"))),
                        };
                        let ch = if c[1..].eq_ignore_ascii_case("position") {
                            Channel::Position(axis)
                        } else if c[1..].eq_ignore_ascii_case("rotation") {
                            Channel::Rotation(axis)
                        } else {
                            return Err(bad(format!("unknown channel {c}")));
                        };
                        sk.channels[j].push(ch);
                    }
                }
                "}" => {
                    stack.pop().ok_or_else(|| bad("unbalanced }".into()))?;
                    if stack.is_empty() && tokens.peek().is_some_and(|t| t.eq_ignore_ascii_case("MOTION")) {
                        break;
                    }
                }
                other => return Err(bad(format!("unexpected token {other}"))),
            }
        }
        expect("MOTION", &mut tokens)?;
        expect("Frames:", &mut tokens)?;
        let frames = num(tokens.next())?;
        // A count, and no larger than the values that can follow it (checked below).
        if !(frames >= 0.0 && frames.fract() == 0.0 && frames < u32::MAX as f32) {
            return Err(bad(format!("Frames: {frames} is not a frame count")));
        }
        let frames = frames as usize;
        expect("Frame", &mut tokens)?;
        expect("Time:", &mut tokens)?;
        let frame_time = num(tokens.next())?;
        let channel_count: usize = sk.channels.iter().map(Vec::len).sum();
        let values = tokens
            .map(|t| t.parse::<f32>().map_err(|_| bad(format!("bad value {t}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let wanted = frames.checked_mul(channel_count).filter(|&w| w <= values.len());
        let Some(wanted) = wanted else {
            return Err(bad(format!("{} values for {frames} frames of {channel_count} channels", values.len())));
        };
        if sk.names.is_empty() || !(frame_time > 0.0) {
            return Err(bad("no joints or no frame time".into()));
        }
        Ok(Self { skeleton: sk, frame_time, values: values[..wanted].to_vec(), channel_count })
    }

    /// Reads and parses a BVH file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Self, IkError> {
        let text = std::fs::read_to_string(path.as_ref())
            .map_err(|e| IkError::Parse(format!("{}: {e}", path.as_ref().display())))?;
        Self::parse(&text)
    }

    /// Number of frames.
    #[must_use]
    pub fn frames(&self) -> usize {
        self.values.len() / self.channel_count.max(1)
    }

    /// Local translations and rotations of every joint at frame `frame` (clamped),
    /// translations scaled by `scale`. Rotation channels compose in file order
    /// (`Zrotation Yrotation Xrotation` = `Rz · Ry · Rx`).
    #[must_use]
    pub fn local_pose(&self, frame: usize, scale: f32) -> Vec<(Vec3, Quat)> {
        let frame = frame.min(self.frames().saturating_sub(1));
        let mut values = self.values[frame * self.channel_count..].iter();
        let sk = &self.skeleton;
        (0..sk.len())
            .map(|j| {
                let mut t = sk.offsets[j];
                let mut r = Quat::IDENTITY;
                for c in &sk.channels[j] {
                    let v = *values.next().unwrap_or(&0.0);
                    match *c {
                        Channel::Position(a) => t[a] += v,
                        Channel::Rotation(a) => r *= Quat::from_axis_angle(Vec3::AXES[a], v.to_radians()),
                    }
                }
                (t * scale, r)
            })
            .collect()
    }

    /// The model-space pose at frame `frame`.
    #[must_use]
    pub fn model_pose(&self, frame: usize, scale: f32) -> Vec<JointPose> {
        to_model(&self.skeleton.parents, &self.local_pose(frame, scale))
    }

    /// The model-space pose at time `t` seconds (looping), interpolating frames (lerp of
    /// translations, nlerp of rotations, in local space) with
    /// [`crate::cpu::clip_sample::sample_clip`], the CPU twin of the GPU pose source.
    #[must_use]
    pub fn sample(&self, t: f32, scale: f32) -> Vec<JointPose> {
        let frames = self.frames().max(1);
        let f = (t / self.frame_time).rem_euclid(frames as f32);
        let i = (f.floor() as usize).min(frames - 1);
        let two: Vec<JointPose> = [i, (i + 1) % frames]
            .iter()
            .flat_map(|&k| self.local_pose(k, scale).into_iter().map(|(t, r)| JointPose::new(t, r)))
            .collect();
        let parents: Vec<u32> =
            self.skeleton.parents.iter().map(|p| p.map_or(crate::crowd::NONE, |p| p as u32)).collect();
        let mut out = vec![JointPose::default(); self.skeleton.len()];
        crate::cpu::clip_sample::sample_clip(
            &two,
            &parents,
            self.frame_time,
            (f - i as f32) * self.frame_time,
            &mut out,
        );
        out
    }
}

/// Local → model space, parents first.
#[must_use]
pub fn to_model(parents: &[Option<usize>], local: &[(Vec3, Quat)]) -> Vec<JointPose> {
    let mut out: Vec<JointPose> = Vec::with_capacity(local.len());
    for (j, (t, r)) in local.iter().enumerate() {
        let pose = match parents[j] {
            Some(p) => {
                let (pp, pr) = (out[p].position(), out[p].rotation());
                JointPose::new(pp + pr * *t, (pr * *r).normalize())
            }
            None => JointPose::new(*t, *r),
        };
        out.push(pose);
    }
    out
}

/// Settings for [`FootRig::biped`].
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
    /// A biped rig from joint names: `pelvis` and, per leg, `[hip, knee, ankle, toe]` (e.g.
    /// CMU's `LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase`): [`FootRig::from_names`] with
    /// two-bone legs.
    pub fn biped(
        skeleton: &Skeleton,
        pelvis: &str,
        legs: &[[&str; 4]],
        scale: f32,
        s: BipedSettings,
    ) -> Result<Self, IkError> {
        let legs: Vec<([&str; 4], LegKind)> = legs.iter().map(|names| (*names, LegKind::TwoBone)).collect();
        Self::from_names(skeleton, pelvis, &legs, scale, s)
    }

    /// A rig from joint names of a loaded skeleton: `pelvis` and, per leg,
    /// `[hip, knee, ankle, toe]` with its kind (two-bone, or pseudo three-bone for a
    /// quadruped hind leg: hip, stifle, hock, hoof tip). From the rest pose (at `scale`) it
    /// derives the knee hinge, in the knee's frame: from the leg's own bend where the rest
    /// pose bends it (more than ~6°: `(hip − knee) × (ankle − knee)`, so a quadruped's
    /// elbows and stifles, which bend opposite ways, each get the side they bend to), else
    /// `forward × up` (a straight rest leg, as in most human skeletons); the foot's up axis (in the ankle's
    /// frame) and the foot height (two-bone: ankle above toe along `up`; pseudo three-bone:
    /// 0, the hoof tip is the sole). Knee poles follow the FK knee.
    pub fn from_names(
        skeleton: &Skeleton,
        pelvis: &str,
        legs: &[([&str; 4], LegKind)],
        scale: f32,
        s: BipedSettings,
    ) -> Result<Self, IkError> {
        let find = |n: &str| skeleton.find(n).ok_or_else(|| IkError::InvalidRig(format!("no joint named {n:?}")));
        let rest = skeleton.rest_pose(scale);
        let hinge = s.forward.cross(s.up).normalize();
        let mut rig_legs = Vec::new();
        for (names, kind) in legs {
            let joints = [find(names[0])?, find(names[1])?, find(names[2])?, find(names[3])?];
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
            rig_legs.push(LegRig {
                kind: *kind,
                joints,
                foot_height,
                knee_axis: rest[joints[1]].rotation().conjugate() * leg_hinge,
                knee_limits: s.knee_limits,
                max_foot_angle: s.max_foot_angle,
                foot_up: rest[joints[2]].rotation().conjugate() * s.up,
                knee_pole: KneePole::FkKnee,
                align: FootAlign::default(),
            });
        }
        let rig = Self {
            parents: skeleton.parents.clone(),
            pelvis: find(pelvis)?,
            legs: rig_legs,
            max_pelvis_drop: s.max_pelvis_drop,
            max_step_up: s.max_step_up,
            max_step_down: s.max_step_down,
            placement: None,
        };
        rig.validate()?;
        Ok(rig)
    }
}
