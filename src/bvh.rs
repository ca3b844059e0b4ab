//! A BVH (Biovision hierarchy) loader: skeleton, channels and frames, and model-space poses
//! per frame, so real motion capture (e.g. the CMU clips in Debian's `assimp-testmodels`)
//! can drive the crowd.

use glam::{Quat, Vec3};

pub use crate::crowd::BipedSettings;
use crate::crowd::{find_legs, FootRig, JointPose, LegKind};
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
    /// `[hip, knee, ankle, toe]` with its kind ([`FootRig::from_joints`] on the skeleton's
    /// rest pose at `scale`).
    pub fn from_names(
        skeleton: &Skeleton,
        pelvis: &str,
        legs: &[([&str; 4], LegKind)],
        scale: f32,
        s: BipedSettings,
    ) -> Result<Self, IkError> {
        let find = |n: &str| skeleton.find(n).ok_or_else(|| IkError::InvalidRig(format!("no joint named {n:?}")));
        let mut joints = Vec::new();
        for (names, kind) in legs {
            joints.push(([find(names[0])?, find(names[1])?, find(names[2])?, find(names[3])?], *kind));
        }
        Self::from_joints(&skeleton.parents, &skeleton.rest_pose(scale), find(pelvis)?, &joints, s)
    }

    /// A biped rig found in the skeleton ([`find_legs`]: by joint names in the common
    /// conventions, else by its shape), two-bone legs, on the rest pose at `scale`.
    ///
    /// # Errors
    /// [`IkError::InvalidRig`] naming the joint and what is wrong.
    pub fn detect_bvh(skeleton: &Skeleton, scale: f32, s: BipedSettings) -> Result<Self, IkError> {
        let rest = skeleton.rest_pose(scale);
        let found = find_legs(&skeleton.names, &skeleton.parents, &rest, s.up)?;
        let legs: Vec<([usize; 4], LegKind)> = found.legs.iter().map(|l| (*l, LegKind::TwoBone)).collect();
        Self::from_joints(&skeleton.parents, &rest, found.pelvis, &legs, s)
    }
}
