//! glTF 2.0 characters (feature `gltf`, on by default): every skin as a [`GltfSkeleton`],
//! every animation as a [`GltfClip`], and the skinned meshes for drawing.
//!
//! A skeleton's joint hierarchy runs through intermediate non-joint nodes (their transforms
//! are folded into the joint below them), and the transforms of the nodes above the skin
//! (an exporter's armature node: a 0.01 unit scale, a Z-up → Y-up turn) are folded into its
//! top joints, so model space is the scene's space. Joint poses are positions and rotations
//! ([`JointPose`]): a joint's uniform scale scales the bones below it; a negative scale (a
//! mirrored limb, a mirrored character) is carried as the handedness of the joints below it
//! (their rigid poses stay proper rotations, and [`GltfSkeleton::palette_inverse_bind`]
//! puts the reflection back for skinning); a non-uniform scale is refused with an error
//! naming the joint.
//!
//! Clips sample LINEAR (slerp for rotations), STEP and CUBICSPLINE channels at any time
//! ([`GltfClip::sample`]), or bake to the crate's uniform clip format
//! ([`GltfClip::bake`], what `cpu::clip_sample::sample_clip` and the GPU's
//! `ClipPoseSource` play), with root motion kept or extracted.
//!
//! Everything read from the file is checked before use: accessor ranges against their
//! buffers (counts are capped by the bytes behind them before anything is allocated),
//! joint and node indices, finite values. Bad input is an [`IkError::Parse`] naming the
//! problem, never a panic.

use std::path::Path;

use glam::{Mat4, Quat, Vec3};

use crate::crowd::{find_legs, BipedSettings, FootRig, FoundLegs, JointPose, LegKind, NONE};
use crate::error::IkError;

/// A local transform: translation, rotation, scale (glTF's TRS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    /// Translation.
    pub translation: Vec3,
    /// Rotation.
    pub rotation: Quat,
    /// Scale.
    pub scale: Vec3,
}

impl Trs {
    /// The identity transform.
    pub const IDENTITY: Trs = Trs { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    fn matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    fn from_matrix(m: Mat4) -> Trs {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        Trs { translation, rotation: rotation.normalize(), scale }
    }

    fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// One skin: joints with names, parents (parents first) and rest transforms.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfSkeleton {
    /// The skin's name, if it has one.
    pub name: Option<String>,
    /// Joint names (a joint without a name is called `joint<i>`).
    pub names: Vec<String>,
    /// Each joint's parent joint, `None` for a top joint; parents come first.
    pub parents: Vec<Option<usize>>,
    /// Each joint's rest transform relative to its parent joint (non-joint nodes between
    /// them folded in); a top joint's is relative to the scene (the nodes above it folded
    /// in).
    pub rest: Vec<Trs>,
    /// Each joint's inverse bind matrix (identity where the file gives none).
    pub inverse_bind: Vec<Mat4>,
    /// The node of each joint in the file (what animation channels target).
    pub nodes: Vec<usize>,
    /// For each joint, the transform of the non-joint nodes between it and its parent (or
    /// the scene): applied before the joint's own, also when the joint is animated.
    between: Vec<Mat4>,
    /// Those nodes (their transforms are fixed at load).
    folded: Vec<usize>,
}

impl GltfSkeleton {
    /// Index of the joint named `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Which joints are `joint` or hang below it ([`crate::crowd::joints_below`]).
    #[must_use]
    pub fn below(&self, joint: usize) -> Vec<bool> {
        crate::crowd::joints_below(&self.parents, joint)
    }

    /// Number of joints.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// `true` for a skin without joints.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The rest pose in model space.
    ///
    /// # Errors
    /// [`IkError::Parse`] for a joint with a non-uniform scale.
    pub fn rest_pose(&self) -> Result<Vec<JointPose>, IkError> {
        Ok(self.model_pose(&self.rest)?.into_iter().map(|m| m.pose).collect())
    }

    /// The inverse bind matrices to give the crate's skinning palette
    /// ([`crate::gpu::palette::PaletteBuilder`], [`crate::cpu::palette::palette`]) so that
    /// it skins this skin's meshes ([`SkinnedMesh`], vertices as the file stores them) the
    /// way glTF does: glTF's joint matrix is the joint's global transform (rotation,
    /// translation and the scale it inherits, e.g. an exporter's 0.01) times the file's
    /// inverse bind matrix, while a [`JointPose`] carries no scale; each matrix here is the
    /// joint's rest scale (and, below a negative scale, the reflection diag(−1, 1, 1))
    /// times the file's inverse bind matrix, so rigid pose × it is glTF's joint matrix
    /// exactly. The bind pose need not be the rest pose. A clip that animates a joint's
    /// scale is drawn with the rest scale and handedness (poses carry neither).
    ///
    /// # Errors
    /// [`IkError::Parse`] for a rest pose with a non-uniform scale.
    pub fn palette_inverse_bind(&self) -> Result<Vec<Mat4>, IkError> {
        let rest = self.model_pose(&self.rest)?;
        Ok(rest
            .iter()
            .zip(&self.inverse_bind)
            .map(|(m, ib)| {
                let sign = if m.mirrored { -1.0 } else { 1.0 };
                Mat4::from_scale(Vec3::new(sign * m.scale, m.scale, m.scale)) * *ib
            })
            .collect())
    }

    /// Model-space poses (each joint's rigid part, its accumulated uniform scale and
    /// whether its global transform mirrors) from local transforms, one per joint.
    ///
    /// A joint's global transform is `rigid · s · F^m`, `F` = diag(−1, 1, 1) (the
    /// reflection of a negative determinant taken as a negative x scale, glam's and
    /// `records::mirrored_rotation`'s convention), `m` its handedness. A reflection above
    /// a joint is carried down to it: `F · T · R · S = (F T F)(F R F)(F S)`, a reflected
    /// translation and a conjugated rotation, a proper rotation again; the signs of a
    /// scale split into a half turn (two negative axes) and at most one `F`.
    fn model_pose(&self, local: &[Trs]) -> Result<Vec<ModelJoint>, IkError> {
        let mut out: Vec<ModelJoint> = Vec::with_capacity(self.len());
        for (j, trs) in local.iter().enumerate() {
            // Most joints hang straight from their parent joint: no matrix round trip (and
            // its rounding) for them.
            let own =
                if self.between[j] == Mat4::IDENTITY { *trs } else { Trs::from_matrix(self.between[j] * trs.matrix()) };
            let (scale, signs) = uniform_scale(own.scale).ok_or_else(|| self.scale_error(j))?;
            let joint = match self.parents[j] {
                Some(p) => {
                    let parent = out[p];
                    let (t, r, signs) = if parent.mirrored {
                        (reflect(own.translation), reflect_rotation(own.rotation), signs * Vec3::new(-1.0, 1.0, 1.0))
                    } else {
                        (own.translation, own.rotation, signs)
                    };
                    let (turn, mirrored) = split_signs(signs);
                    let pr = parent.pose.rotation();
                    let position = parent.pose.position() + pr * (t * parent.scale);
                    ModelJoint {
                        pose: JointPose::new(position, (pr * r * turn).normalize()),
                        scale: parent.scale * scale,
                        mirrored,
                    }
                }
                None => {
                    let (turn, mirrored) = split_signs(signs);
                    ModelJoint {
                        pose: JointPose::new(own.translation, (own.rotation * turn).normalize()),
                        scale,
                        mirrored,
                    }
                }
            };
            if !(joint.pose.position().is_finite() && joint.pose.rotation().is_finite() && joint.scale.is_finite()) {
                return Err(IkError::Parse(format!(
                    "joint {:?}: its pose is not finite (values too large)",
                    self.names[j]
                )));
            }
            out.push(joint);
        }
        Ok(out)
    }

    /// The skeleton's legs ([`find_legs`]: by joint names in the common conventions,
    /// else by the rest pose's shape).
    ///
    /// # Errors
    /// [`IkError::InvalidRig`] naming the joint and what is wrong; [`IkError::Parse`] for a
    /// rest pose with a non-uniform scale.
    pub fn find_legs(&self, up: Vec3) -> Result<FoundLegs, IkError> {
        find_legs(&self.names, &self.parents, &self.rest_pose()?, up)
    }

    /// A biped [`FootRig`] on the skeleton's rest pose: its legs found by
    /// [`GltfSkeleton::find_legs`], two-bone. `scale` is the characters' scale
    /// (`CharacterInput::with_scale`: world units per file unit, 0.01 for a character in
    /// centimetres, 1 for one in metres): the rig's lengths (foot heights), like the
    /// settings', are in world units, the poses in the file's.
    ///
    /// # Errors
    /// As [`GltfSkeleton::find_legs`], and [`IkError::InvalidRig`] when the rig does not
    /// validate.
    pub fn foot_rig(&self, s: BipedSettings, scale: f32) -> Result<FootRig, IkError> {
        let found = self.find_legs(s.up)?;
        let legs: Vec<([usize; 4], LegKind)> = found.legs.iter().map(|l| (*l, LegKind::TwoBone)).collect();
        FootRig::from_joints(&self.parents, &self.rest_pose_scaled(scale)?, found.pelvis, &legs, s)
    }

    /// A quadruped [`FootRig`] in one call: the legs [`GltfSkeleton::find_legs`] finds,
    /// hind legs pseudo three-bone (blend 0.5: the hock follows the stifle halfway, as a
    /// digitigrade leg does) and front legs two-bone. Of four legs, the two whose hips are
    /// furthest back along `s.forward` are the hind ones (the Fox's front legs, named as
    /// arms and ending at the paw, are two-bone legs with a point foot); two legs found are
    /// both hind. [`GltfScene::quadruped_rig`] also takes the feet's heights from the mesh.
    /// `scale` as [`GltfSkeleton::foot_rig`].
    ///
    /// # Errors
    /// As [`GltfSkeleton::foot_rig`].
    pub fn quadruped_rig(&self, s: BipedSettings, scale: f32) -> Result<FootRig, IkError> {
        let found = self.find_legs(s.up)?;
        let rest = self.rest_pose_scaled(scale)?;
        FootRig::from_joints(&self.parents, &rest, found.pelvis, &found.quadruped(&rest, s.forward), s)
    }

    /// The rest pose with its positions times `scale` (world units, for a rig).
    fn rest_pose_scaled(&self, scale: f32) -> Result<Vec<JointPose>, IkError> {
        Ok(self.rest_pose()?.iter().map(|p| JointPose::new(p.position() * scale, p.rotation())).collect())
    }

    fn scale_error(&self, j: usize) -> IkError {
        IkError::Parse(format!(
            "joint {:?}: a non-uniform scale (squashed or stretched bones are not supported; \
             a uniform scale, negative or not, is)",
            self.names[j]
        ))
    }
}

/// One joint in model space: its rigid pose, the uniform scale it inherits, and whether its
/// global transform mirrors (see `GltfSkeleton::model_pose`).
#[derive(Clone, Copy, Debug)]
struct ModelJoint {
    pose: JointPose,
    scale: f32,
    mirrored: bool,
}

/// A joint's scale as one positive factor and its signs, if its magnitudes are uniform
/// (within 1e-3) and not zero.
fn uniform_scale(s: Vec3) -> Option<(f32, Vec3)> {
    let a = s.abs();
    let (lo, hi) = (a.min_element(), a.max_element());
    (lo > 0.0 && hi <= lo * 1.001 && hi.is_finite()).then(|| ((a.x + a.y + a.z) / 3.0, s.signum()))
}

/// Signs of a scale as a half turn (two negative axes are a rotation) and at most one
/// reflection `F` = diag(−1, 1, 1): `diag(signs) = turn · F^mirrored`.
fn split_signs(signs: Vec3) -> (Quat, bool) {
    let mirrored = signs.x * signs.y * signs.z < 0.0;
    // The rest once F is taken out: diag(±1) with an even number of −1s.
    let rest = if mirrored { signs * Vec3::new(-1.0, 1.0, 1.0) } else { signs };
    let turn = match (rest.x < 0.0, rest.y < 0.0, rest.z < 0.0) {
        (false, true, true) => Quat::from_xyzw(1.0, 0.0, 0.0, 0.0),
        (true, false, true) => Quat::from_xyzw(0.0, 1.0, 0.0, 0.0),
        (true, true, false) => Quat::from_xyzw(0.0, 0.0, 1.0, 0.0),
        _ => Quat::IDENTITY,
    };
    (turn, mirrored)
}

/// `F · t`, F = diag(−1, 1, 1).
fn reflect(t: Vec3) -> Vec3 {
    Vec3::new(-t.x, t.y, t.z)
}

/// `F · R · F` as a quaternion: the rotation seen in a mirror (the axis reflected, the
/// angle reversed).
fn reflect_rotation(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

/// How one animated property changes between keyframes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Linear (slerp for rotations).
    Linear,
    /// The keyframe's value until the next.
    Step,
    /// Cubic Hermite spline with in and out tangents.
    CubicSpline,
}

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
}

/// One animated property of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The node it animates.
    pub node: usize,
    /// The property.
    pub property: Property,
    /// How values change between keyframes.
    pub interpolation: Interpolation,
    /// Keyframe times (seconds, increasing).
    pub times: Vec<f32>,
    /// Values, 3 or 4 floats per keyframe (× 3 for CUBICSPLINE: in tangent, value, out
    /// tangent).
    pub values: Vec<f32>,
}

/// What [`GltfClip::bake`] does with the root's horizontal motion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RootMotion {
    /// The clip moves the character as the file does.
    #[default]
    Keep,
    /// The top joint's horizontal (model x, z) motion is taken out, so the clip plays in
    /// place; [`BakedClip::root_motion`] holds what was taken, for the caller's root.
    Extract,
}

/// One animation.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfClip {
    /// The animation's name (`animation<i>` when it has none).
    pub name: String,
    /// Seconds from the first keyframe to the last of all channels.
    pub duration: f32,
    /// The channels (translation, rotation and scale; morph weights are left out).
    pub channels: Vec<Channel>,
}

/// A clip baked to uniform frames of local poses: what the crate's clip samplers play
/// (`cpu::clip_sample::sample_clip`, `gpu::ClipPoseSource::new`). Each joint's local
/// translation already carries the scale of the joints above it, so model space follows
/// from positions and rotations alone.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedClip {
    /// Local poses, `frames × joints`, frame-major.
    pub local: Vec<JointPose>,
    /// Each joint's parent ([`crate::crowd::NONE`] for a top joint), parents first.
    pub parents: Vec<u32>,
    /// Seconds per frame.
    pub frame_time: f32,
    /// Frames.
    pub frames: usize,
    /// With [`RootMotion::Extract`], the horizontal motion taken out of each frame (model
    /// space, relative to frame 0); empty with [`RootMotion::Keep`].
    pub root_motion: Vec<Vec3>,
}

impl BakedClip {
    /// The parents as `Option`s, the form `gpu::ClipPoseSource::new` takes (the CPU
    /// sampler reads [`BakedClip::parents`]).
    #[must_use]
    pub fn joint_parents(&self) -> Vec<Option<usize>> {
        self.parents.iter().map(|&p| (p != NONE).then_some(p as usize)).collect()
    }
}

impl GltfClip {
    /// The channels animate only joints and nodes outside `skeleton`: a channel on a node
    /// between its joints or above them (whose transforms are folded in at load) is an
    /// error naming the node. Channels on other skins' joints or on meshes are ignored.
    ///
    /// # Errors
    /// [`IkError::Parse`] naming the node.
    pub fn check_channels(&self, skeleton: &GltfSkeleton) -> Result<(), IkError> {
        match self.channels.iter().find(|c| skeleton.folded.contains(&c.node)) {
            Some(c) => Err(IkError::Parse(format!(
                "animation {:?} animates node {}, which sits between or above the joints of skin {:?}: \
                 only joints may be animated",
                self.name, c.node, skeleton.name
            ))),
            None => Ok(()),
        }
    }

    /// Local transforms of `skeleton`'s joints at `time` seconds (clamped to the clip):
    /// the rest transform where a property is not animated. Channels on nodes that are not
    /// the skeleton's joints are left out (see [`GltfClip::check_channels`]).
    #[must_use]
    pub fn sample_local(&self, skeleton: &GltfSkeleton, time: f32) -> Vec<Trs> {
        let mut local = skeleton.rest.clone();
        for ch in &self.channels {
            let Some(j) = skeleton.nodes.iter().position(|&n| n == ch.node) else { continue };
            let v = ch.sample(time);
            match ch.property {
                Property::Translation => local[j].translation = Vec3::new(v[0], v[1], v[2]),
                Property::Rotation => local[j].rotation = Quat::from_array(v).normalize(),
                Property::Scale => local[j].scale = Vec3::new(v[0], v[1], v[2]),
            }
        }
        local
    }

    /// Model-space poses of `skeleton` at `time` seconds.
    ///
    /// # Errors
    /// [`IkError::Parse`] for a channel that animates a node between or above the joints,
    /// or a joint whose scale becomes non-uniform.
    pub fn sample(&self, skeleton: &GltfSkeleton, time: f32) -> Result<Vec<JointPose>, IkError> {
        self.check_channels(skeleton)?;
        Ok(skeleton.model_pose(&self.sample_local(skeleton, time))?.into_iter().map(|m| m.pose).collect())
    }

    /// The clip at about `fps` uniform frames, as local poses for the crate's clip
    /// samplers, which loop: `round(duration × fps)` frames from time 0, `frame_time` =
    /// duration / frames, so one loop lasts the clip's duration and its last frame blends
    /// into its first, as a looping clip (walk, run) does.
    ///
    /// # Errors
    /// [`IkError::Parse`] for `fps` not finite and positive, a clip over 100 000 frames, a
    /// channel that animates a node between or above the skeleton's joints, or a joint
    /// whose scale becomes non-uniform.
    pub fn bake(&self, skeleton: &GltfSkeleton, fps: f32, root_motion: RootMotion) -> Result<BakedClip, IkError> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(IkError::Parse(format!("bake: frames per second {fps} must be finite and positive")));
        }
        let frames = (self.duration * fps).round().max(1.0);
        if frames > 100_000.0 {
            return Err(IkError::Parse(format!("bake: {frames} frames (at most 100000)")));
        }
        self.check_channels(skeleton)?;
        let frames = frames as usize;
        let frame_time = if self.duration > 0.0 { self.duration / frames as f32 } else { 1.0 / fps };
        let n = skeleton.len();
        let mut local = Vec::with_capacity(frames * n);
        let mut taken = Vec::new();
        let mut start = None;
        for f in 0..frames {
            let t = f as f32 * frame_time;
            let model = skeleton.model_pose(&self.sample_local(skeleton, t))?;
            // Joint 0 is a top joint (parents come first): its horizontal motion is the
            // root motion, taken from every top joint alike.
            let p0 = model[0].pose.position();
            let moved = match root_motion {
                RootMotion::Keep => Vec3::ZERO,
                RootMotion::Extract => {
                    let s = *start.get_or_insert(p0);
                    let moved = Vec3::new(p0.x - s.x, 0.0, p0.z - s.z);
                    taken.push(moved);
                    moved
                }
            };
            for j in 0..n {
                let pose = model[j].pose;
                local.push(match skeleton.parents[j] {
                    Some(pj) => {
                        let pp = model[pj].pose;
                        let inv = pp.rotation().conjugate();
                        JointPose::new(inv * (pose.position() - pp.position()), (inv * pose.rotation()).normalize())
                    }
                    None => JointPose::new(pose.position() - moved, pose.rotation()),
                });
            }
        }
        let parents = skeleton.parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
        Ok(BakedClip { local, parents, frame_time, frames, root_motion: taken })
    }
}

impl Channel {
    /// Floats per value.
    fn width(&self) -> usize {
        if self.property == Property::Rotation {
            4
        } else {
            3
        }
    }

    /// The value at `time` (clamped to the keyframes).
    fn sample(&self, time: f32) -> [f32; 4] {
        let w = self.width();
        let keys = self.times.len();
        let stride = if self.interpolation == Interpolation::CubicSpline { 3 * w } else { w };
        let at = |k: usize, part: usize| -> [f32; 4] {
            let o = k * stride + part * w;
            let mut v = [0.0; 4];
            v[..w].copy_from_slice(&self.values[o..o + w]);
            v
        };
        let value_part = usize::from(self.interpolation == Interpolation::CubicSpline);
        if keys == 1 || time <= self.times[0] {
            return at(0, value_part);
        }
        if time >= self.times[keys - 1] {
            return at(keys - 1, value_part);
        }
        let k = self.times.partition_point(|&t| t <= time).clamp(1, keys - 1) - 1;
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let dt = t1 - t0;
        let u = if dt > 0.0 { ((time - t0) / dt).clamp(0.0, 1.0) } else { 0.0 };
        match self.interpolation {
            Interpolation::Step => at(k, 0),
            Interpolation::Linear if w == 4 => {
                Quat::from_array(at(k, 0)).slerp(Quat::from_array(at(k + 1, 0)), u).to_array()
            }
            Interpolation::Linear => {
                let (a, b) = (at(k, 0), at(k + 1, 0));
                [0, 1, 2, 3].map(|i| a[i] + (b[i] - a[i]) * u)
            }
            Interpolation::CubicSpline => {
                // glTF's Hermite spline: value, out tangent of k; in tangent, value of k + 1;
                // tangents scaled by the keyframe interval.
                let (p0, m0, m1, p1) = (at(k, 1), at(k, 2), at(k + 1, 0), at(k + 1, 1));
                let (u2, u3) = (u * u, u * u * u);
                let h = [2.0 * u3 - 3.0 * u2 + 1.0, u3 - 2.0 * u2 + u, -2.0 * u3 + 3.0 * u2, u3 - u2];
                let v = [0, 1, 2, 3].map(|i| h[0] * p0[i] + h[1] * dt * m0[i] + h[2] * p1[i] + h[3] * dt * m1[i]);
                if w == 4 {
                    Quat::from_array(v).normalize().to_array()
                } else {
                    v
                }
            }
        }
    }
}

/// A skinned mesh (all its primitives in one vertex list), for drawing with a skinning
/// palette.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    /// The mesh's name.
    pub name: Option<String>,
    /// The skin it is bound to (an index into [`GltfScene::skins`]).
    pub skin: usize,
    /// Bind-pose positions.
    pub positions: Vec<[f32; 3]>,
    /// Bind-pose normals (zero where the file has none).
    pub normals: Vec<[f32; 3]>,
    /// Four joints per vertex (indices into the skin's joints).
    pub joints: Vec<[u16; 4]>,
    /// Four weights per vertex (summing to 1).
    pub weights: Vec<[f32; 4]>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

/// What a glTF file holds for characters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GltfScene {
    /// Every skin.
    pub skins: Vec<GltfSkeleton>,
    /// Every animation.
    pub clips: Vec<GltfClip>,
    /// Every skinned mesh.
    pub meshes: Vec<SkinnedMesh>,
}

impl GltfScene {
    /// Loads a `.gltf` (buffers embedded as data URIs or in files beside it) or `.glb`.
    ///
    /// # Errors
    /// [`IkError::Parse`] for a file that cannot be read and for every malformed part, naming it.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, IkError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| IkError::Parse(format!("{}: {e}", path.display())))?;
        Self::from_slice(&bytes, path.parent())
    }

    /// Loads glTF or GLB bytes; `base` is the folder relative buffer URIs are read from
    /// (`None`: only embedded buffers).
    ///
    /// # Errors
    /// Every malformed part as [`IkError::Parse`] naming it.
    pub fn from_slice(bytes: &[u8], base: Option<&Path>) -> Result<Self, IkError> {
        // glTF 1.0 (a GLB of version 1, or JSON whose asset says 1.x) fails with a message
        // about its layout; say what it is.
        let v1 = || {
            let glb_v1 = bytes.len() >= 8 && &bytes[..4] == b"glTF" && bytes[4..8] == 1u32.to_le_bytes();
            glb_v1
                || std::str::from_utf8(bytes).is_ok_and(|t| {
                    t.split("\"version\"")
                        .skip(1)
                        .any(|rest| rest.trim_start_matches([' ', ':', '\t', '\n', '\r']).starts_with("\"1."))
                })
        };
        let fail = |e: String| {
            if v1() {
                IkError::Parse(format!("glTF 1.0 is not supported, only glTF 2.0 ({e})"))
            } else {
                IkError::Parse(format!("glTF: {e}"))
            }
        };
        let unchecked = ::gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| fail(e.to_string()))?;
        // The `gltf` crate's validation indexes a primitive's POSITION accessor without a
        // bounds check (it panics on one past the end): indices and enums are checked first.
        let json = unchecked.document.as_json();
        check_enums(json).and_then(|()| check_indices(json)).map_err(|e| match e {
            IkError::Parse(m) if v1() => fail(m),
            e => e,
        })?;
        let blob = unchecked.blob;
        let document = ::gltf::Document::from_json(unchecked.document.into_json()).map_err(|e| fail(e.to_string()))?;
        let gltf = ::gltf::Gltf { document, blob };
        let buffers = read_buffers(&gltf, base)?;
        let doc = &gltf.document;
        let parents = node_parents(doc)?;
        let mut skins = Vec::new();
        for skin in doc.skins() {
            skins.push(read_skin(doc, &skin, &parents, &buffers)?);
        }
        let mut clips = Vec::new();
        for (i, anim) in doc.animations().enumerate() {
            clips.push(read_clip(i, &anim, &buffers)?);
        }
        let mut meshes = Vec::new();
        for node in doc.nodes() {
            if let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) {
                meshes.push(read_mesh(&mesh, skin.index(), &skins[skin.index()], &buffers)?);
            }
        }
        Ok(Self { skins, clips, meshes })
    }

    /// The clip named `name`.
    #[must_use]
    pub fn clip(&self, name: &str) -> Option<&GltfClip> {
        self.clips.iter().find(|c| c.name == name)
    }

    /// [`GltfSkeleton::foot_rig`] of skin `skin`, with each two-bone leg's sole where its
    /// mesh has it. A skeleton alone puts the sole at the toe joint's height, from under
    /// the ankle to the toe joint, but a shoe's sole is usually below its joints (Cesium
    /// Man's by 2 cm) and reaches behind the ankle and past the last toe joint, and those
    /// ends are what touch the ground first in a heel strike or a toe off. From the foot's
    /// vertices (those bound at least half to the ankle or joints below it) in the rest
    /// pose, skinned by every mesh of this skin: `foot_height` becomes the ankle's height
    /// above the lowest of them; `heel_length` and `toe_length` how far the sole's
    /// vertices (within a quarter of that height of the lowest) reach behind the ankle and
    /// past the toe joint, along the foot's forward (the toe joint's direction from the
    /// ankle, flattened). A leg whose foot has no such vertex keeps the skeleton's values.
    /// Heights along `s.up`, lengths in world units (`scale` as
    /// [`GltfSkeleton::foot_rig`]).
    ///
    /// # Errors
    /// As [`GltfSkeleton::foot_rig`]; [`IkError::InvalidRig`] for a skin index out of range.
    pub fn foot_rig(&self, skin: usize, s: BipedSettings, scale: f32) -> Result<FootRig, IkError> {
        let sk = self.skin(skin)?;
        self.with_mesh_soles(skin, sk.foot_rig(s, scale)?, s.up, scale)
    }

    /// [`GltfSkeleton::quadruped_rig`] of skin `skin`, each two-bone leg's sole from its
    /// mesh as [`GltfScene::foot_rig`] does (a front leg without a toe joint gets the
    /// height of its paw's bottom under the wrist).
    ///
    /// # Errors
    /// As [`GltfScene::foot_rig`].
    pub fn quadruped_rig(&self, skin: usize, s: BipedSettings, scale: f32) -> Result<FootRig, IkError> {
        let sk = self.skin(skin)?;
        self.with_mesh_soles(skin, sk.quadruped_rig(s, scale)?, s.up, scale)
    }

    fn skin(&self, skin: usize) -> Result<&GltfSkeleton, IkError> {
        self.skins
            .get(skin)
            .ok_or_else(|| IkError::InvalidRig(format!("skin {skin}: the file has {} skins", self.skins.len())))
    }

    /// `rig` with its two-bone soles fitted to skin `skin`'s meshes in the rest pose.
    fn with_mesh_soles(&self, skin: usize, mut rig: FootRig, up: Vec3, scale: f32) -> Result<FootRig, IkError> {
        let sk = &self.skins[skin];
        let rest = sk.rest_pose()?;
        let mut palette = vec![Mat4::IDENTITY; sk.len()];
        crate::cpu::palette::palette(&rest, &sk.palette_inverse_bind()?, &mut palette);
        // Every mesh of this skin, skinned in the rest pose.
        let (mut positions, mut joints, mut weights) = (Vec::new(), Vec::new(), Vec::new());
        for mesh in self.meshes.iter().filter(|m| m.skin == skin) {
            for (p, (j, w)) in mesh.positions.iter().zip(mesh.joints.iter().zip(&mesh.weights)) {
                let v: Vec3 = (0..4).map(|k| palette[usize::from(j[k])].transform_point3(Vec3::from(*p)) * w[k]).sum();
                positions.push(v);
                joints.push(*j);
                weights.push(*w);
            }
        }
        rig.fit_soles(&rest, (&positions, &joints, &weights), up, scale);
        Ok(rig)
    }
}

/// Every enumerated field the loader reads holds a value glTF defines (the `gltf` crate's
/// accessors panic on one that does not, and its validation lets some through).
fn check_enums(root: &::gltf::json::Root) -> Result<(), IkError> {
    use ::gltf::json::validation::Checked;
    fn valid<T>(c: &Checked<T>) -> bool {
        matches!(c, Checked::Valid(_))
    }
    for (a, anim) in root.animations.iter().enumerate() {
        if anim.channels.iter().any(|c| !valid(&c.target.path))
            || anim.samplers.iter().any(|s| !valid(&s.interpolation))
        {
            return Err(parse(format!("animation {a}: a channel path or interpolation glTF does not define")));
        }
    }
    for (i, acc) in root.accessors.iter().enumerate() {
        if !valid(&acc.component_type) || !valid(&acc.type_) {
            return Err(parse(format!("accessor {i}: a component type or element type glTF does not define")));
        }
    }
    for (m, mesh) in root.meshes.iter().enumerate() {
        if mesh.primitives.iter().any(|p| !valid(&p.mode) || p.attributes.keys().any(|k| !valid(k))) {
            return Err(parse(format!("mesh {m}: a primitive mode or attribute glTF does not define")));
        }
    }
    Ok(())
}

/// Every index the loader follows points at an item the file has (the `gltf` crate's
/// accessors panic on one that does not, and its validation lets some through).
fn check_indices(root: &::gltf::json::Root) -> Result<(), IkError> {
    let (nodes, accessors, meshes, skins) =
        (root.nodes.len(), root.accessors.len(), root.meshes.len(), root.skins.len());
    let fail = |what: String| Err(parse(format!("{what} points past the items the file has")));
    for (i, n) in root.nodes.iter().enumerate() {
        if n.children.iter().flatten().any(|c| c.value() >= nodes)
            || n.mesh.is_some_and(|m| m.value() >= meshes)
            || n.skin.is_some_and(|k| k.value() >= skins)
        {
            return fail(format!("node {i}: a child, mesh or skin"));
        }
    }
    for (i, k) in root.skins.iter().enumerate() {
        if k.joints.iter().any(|j| j.value() >= nodes)
            || k.inverse_bind_matrices.is_some_and(|a| a.value() >= accessors)
        {
            return fail(format!("skin {i}: a joint or its inverse bind matrices"));
        }
    }
    for (i, a) in root.animations.iter().enumerate() {
        let samplers = a.samplers.len();
        if a.channels.iter().any(|c| c.sampler.value() >= samplers || c.target.node.value() >= nodes)
            || a.samplers.iter().any(|s| s.input.value() >= accessors || s.output.value() >= accessors)
        {
            return fail(format!("animation {i}: a channel's sampler or node, or a sampler's accessor"));
        }
    }
    for (i, a) in root.accessors.iter().enumerate() {
        if a.buffer_view.is_some_and(|v| v.value() >= root.buffer_views.len()) {
            return fail(format!("accessor {i}: its buffer view"));
        }
    }
    for (i, v) in root.buffer_views.iter().enumerate() {
        if v.buffer.value() >= root.buffers.len() {
            return fail(format!("buffer view {i}: its buffer"));
        }
    }
    for (i, m) in root.meshes.iter().enumerate() {
        for p in &m.primitives {
            if p.attributes.values().any(|a| a.value() >= accessors)
                || p.indices.is_some_and(|a| a.value() >= accessors)
            {
                return fail(format!("mesh {i}: an attribute or its indices"));
            }
        }
    }
    Ok(())
}

fn parse(msg: impl Into<String>) -> IkError {
    IkError::Parse(msg.into())
}

/// The bytes of every buffer: GLB's binary chunk, data URIs (base64), files beside the
/// asset (relative paths inside `base` only).
fn read_buffers(gltf: &::gltf::Gltf, base: Option<&Path>) -> Result<Vec<Vec<u8>>, IkError> {
    let mut out = Vec::new();
    for b in gltf.document.buffers() {
        let data = match b.source() {
            ::gltf::buffer::Source::Bin => {
                gltf.blob.clone().ok_or_else(|| parse(format!("buffer {}: no binary chunk", b.index())))?
            }
            ::gltf::buffer::Source::Uri(uri) => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let (_, payload) = rest
                        .split_once(";base64,")
                        .ok_or_else(|| parse(format!("buffer {}: a data URI that is not base64", b.index())))?;
                    base64_decode(payload).ok_or_else(|| parse(format!("buffer {}: bad base64", b.index())))?
                } else {
                    let rel = Path::new(uri);
                    let safe = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
                    let dir = base.ok_or_else(|| {
                        parse(format!("buffer {}: {uri:?} is a file, and no folder was given", b.index()))
                    })?;
                    if !safe {
                        return Err(parse(format!("buffer {}: {uri:?} leaves the asset's folder", b.index())));
                    }
                    std::fs::read(dir.join(rel)).map_err(|e| parse(format!("buffer {} ({uri}): {e}", b.index())))?
                }
            }
        };
        if data.len() < b.length() {
            return Err(parse(format!("buffer {}: {} bytes, the file says {}", b.index(), data.len(), b.length())));
        }
        out.push(data);
    }
    Ok(out)
}

/// Standard base64 (padding optional); `None` on any other character.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes().take_while(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Each node's parent node; an error for a node with two parents or a cycle.
fn node_parents(doc: &::gltf::Document) -> Result<Vec<Option<usize>>, IkError> {
    let n = doc.nodes().len();
    let mut parents = vec![None; n];
    for node in doc.nodes() {
        for child in node.children() {
            if parents[child.index()].replace(node.index()).is_some() {
                return Err(parse(format!("node {} has two parents", child.index())));
            }
        }
    }
    for start in 0..n {
        let (mut at, mut steps) = (start, 0);
        while let Some(p) = parents[at] {
            at = p;
            steps += 1;
            if steps > n {
                return Err(parse(format!("node {start} is in a cycle of parents")));
            }
        }
    }
    Ok(parents)
}

/// A node's local transform, checked finite.
fn node_trs(node: &::gltf::Node) -> Result<Trs, IkError> {
    let trs = match node.transform() {
        ::gltf::scene::Transform::Matrix { matrix } => Trs::from_matrix(Mat4::from_cols_array_2d(&matrix)),
        ::gltf::scene::Transform::Decomposed { translation, rotation, scale } => Trs {
            translation: Vec3::from_array(translation),
            rotation: Quat::from_array(rotation).normalize(),
            scale: Vec3::from_array(scale),
        },
    };
    if trs.is_finite() {
        Ok(trs)
    } else {
        Err(parse(format!("node {} ({:?}): a transform that is not finite", node.index(), node.name())))
    }
}

fn read_skin(
    doc: &::gltf::Document,
    skin: &::gltf::Skin,
    parents: &[Option<usize>],
    buffers: &[Vec<u8>],
) -> Result<GltfSkeleton, IkError> {
    let nodes: Vec<::gltf::Node> = doc.nodes().collect();
    let joint_nodes: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    if joint_nodes.is_empty() {
        return Err(parse(format!("skin {}: no joints", skin.index())));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = joint_nodes.iter().find(|&&n| !seen.insert(n)) {
        return Err(parse(format!("skin {}: node {dup} is listed twice as a joint", skin.index())));
    }
    let joint_of = |node: usize| joint_nodes.iter().position(|&n| n == node);
    // Each joint's nearest joint ancestor and the transform of the nodes in between.
    let mut info = Vec::with_capacity(joint_nodes.len());
    for &node in &joint_nodes {
        let mut between = Mat4::IDENTITY;
        let mut folded = Vec::new();
        let mut at = parents[node];
        let parent = loop {
            match at {
                None => break None,
                Some(p) => {
                    if let Some(j) = joint_of(p) {
                        break Some(j);
                    }
                    between = node_trs(&nodes[p])?.matrix() * between;
                    folded.push(p);
                    at = parents[p];
                }
            }
        };
        info.push((parent, between, node_trs(&nodes[node])?, folded));
    }
    // Parents first: a depth order over the joint tree.
    let mut order = Vec::with_capacity(joint_nodes.len());
    let mut placed = vec![false; joint_nodes.len()];
    while order.len() < joint_nodes.len() {
        let before = order.len();
        for j in 0..joint_nodes.len() {
            if !placed[j] && info[j].0.is_none_or(|p| placed[p]) {
                placed[j] = true;
                order.push(j);
            }
        }
        if order.len() == before {
            return Err(parse(format!("skin {}: its joints' parents form a cycle", skin.index())));
        }
    }
    let new_index = {
        let mut m = vec![0; joint_nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            m[old] = new;
        }
        m
    };
    let ibm = match skin.inverse_bind_matrices() {
        Some(acc) => {
            let v = read_floats(&acc, buffers, 16, "inverse bind matrices")?;
            if v.len() < 16 * joint_nodes.len() {
                return Err(parse(format!("skin {}: fewer inverse bind matrices than joints", skin.index())));
            }
            (0..joint_nodes.len()).map(|j| Mat4::from_cols_slice(&v[16 * j..16 * j + 16])).collect()
        }
        None => vec![Mat4::IDENTITY; joint_nodes.len()],
    };
    let mut sk = GltfSkeleton {
        name: skin.name().map(String::from),
        names: Vec::new(),
        parents: Vec::new(),
        rest: Vec::new(),
        inverse_bind: Vec::new(),
        nodes: Vec::new(),
        between: Vec::new(),
        folded: Vec::new(),
    };
    for &old in &order {
        let node = joint_nodes[old];
        let (parent, between, trs, ref folded) = info[old];
        for &f in folded {
            if !sk.folded.contains(&f) {
                sk.folded.push(f);
            }
        }
        sk.names.push(nodes[node].name().map_or_else(|| format!("joint{old}"), String::from));
        sk.parents.push(parent.map(|p| new_index[p]));
        sk.rest.push(trs);
        let m: Mat4 = ibm[old];
        if !(m.is_finite() && m.determinant().abs() > 1e-12) {
            return Err(parse(format!(
                "skin {}: joint {:?} has a non-invertible inverse bind matrix",
                skin.index(),
                sk.names.last()
            )));
        }
        sk.inverse_bind.push(m);
        sk.nodes.push(node);
        sk.between.push(between);
    }
    sk.rest_pose()?;
    Ok(sk)
}

fn read_clip(i: usize, anim: &::gltf::Animation, buffers: &[Vec<u8>]) -> Result<GltfClip, IkError> {
    let name = anim.name().map_or_else(|| format!("animation{i}"), String::from);
    let mut channels = Vec::new();
    let mut duration: f32 = 0.0;
    for ch in anim.channels() {
        use ::gltf::animation::{Interpolation as I, Property as P};
        let property = match ch.target().property() {
            P::Translation => Property::Translation,
            P::Rotation => Property::Rotation,
            P::Scale => Property::Scale,
            P::MorphTargetWeights => continue,
        };
        let sampler = ch.sampler();
        let interpolation = match sampler.interpolation() {
            I::Linear => Interpolation::Linear,
            I::Step => Interpolation::Step,
            I::CubicSpline => Interpolation::CubicSpline,
        };
        let what = format!("animation {name:?}, channel {}", ch.index());
        let times = read_floats(&sampler.input(), buffers, 1, &what)?;
        let width = if property == Property::Rotation { 4 } else { 3 };
        let values = read_floats(&sampler.output(), buffers, width, &what)?;
        let per_key = if interpolation == Interpolation::CubicSpline { 3 * width } else { width };
        if times.is_empty() || values.len() != times.len() * per_key {
            return Err(parse(format!("{what}: {} keyframes but {} values", times.len(), values.len())));
        }
        if times.windows(2).any(|w| !(w[1] >= w[0])) || times.iter().any(|t| !t.is_finite() || *t < 0.0) {
            return Err(parse(format!("{what}: keyframe times that are not finite, non-negative and increasing")));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(parse(format!("{what}: values that are not finite")));
        }
        duration = duration.max(times[times.len() - 1]);
        channels.push(Channel { node: ch.target().node().index(), property, interpolation, times, values });
    }
    Ok(GltfClip { name, duration, channels })
}

fn read_mesh(
    mesh: &::gltf::Mesh,
    skin: usize,
    skeleton: &GltfSkeleton,
    buffers: &[Vec<u8>],
) -> Result<SkinnedMesh, IkError> {
    let mut out = SkinnedMesh { name: mesh.name().map(String::from), skin, ..SkinnedMesh::default() };
    for prim in mesh.primitives() {
        let what = format!("mesh {:?}, primitive {}", mesh.name(), prim.index());
        if prim.mode() != ::gltf::mesh::Mode::Triangles {
            continue;
        }
        let attr = |s: ::gltf::Semantic| prim.get(&s);
        let positions = attr(::gltf::Semantic::Positions).ok_or_else(|| parse(format!("{what}: no positions")))?;
        let positions = read_floats(&positions, buffers, 3, &what)?;
        let count = positions.len() / 3;
        let normals = match attr(::gltf::Semantic::Normals) {
            Some(a) => read_floats(&a, buffers, 3, &what)?,
            None => vec![0.0; 3 * count],
        };
        let joints = attr(::gltf::Semantic::Joints(0)).ok_or_else(|| parse(format!("{what}: no JOINTS_0")))?;
        let joints = read_floats(&joints, buffers, 4, &what)?;
        let weights = attr(::gltf::Semantic::Weights(0)).ok_or_else(|| parse(format!("{what}: no WEIGHTS_0")))?;
        let weights = read_floats(&weights, buffers, 4, &what)?;
        if normals.len() != 3 * count || joints.len() != 4 * count || weights.len() != 4 * count {
            return Err(parse(format!("{what}: attributes of different lengths")));
        }
        let base = u32::try_from(out.positions.len()).map_err(|_| parse(format!("{what}: too many vertices")))?;
        for v in 0..count {
            let j = [0, 1, 2, 3].map(|k| joints[4 * v + k]);
            if j.iter().any(|&x| x < 0.0 || x as usize >= skeleton.len()) {
                return Err(parse(format!("{what}: vertex {v} names a joint the skin does not have")));
            }
            let w = [0, 1, 2, 3].map(|k| weights[4 * v + k]);
            let sum: f32 = w.iter().sum();
            if !(sum > 0.0 && w.iter().all(|x| x.is_finite() && *x >= 0.0)) {
                return Err(parse(format!("{what}: vertex {v} has no usable weights")));
            }
            out.positions.push([positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]]);
            out.normals.push([normals[3 * v], normals[3 * v + 1], normals[3 * v + 2]]);
            out.joints.push(j.map(|x| x as u16));
            out.weights.push(w.map(|x| x / sum));
        }
        match prim.indices() {
            Some(acc) => {
                for i in read_floats(&acc, buffers, 1, &what)? {
                    let i = i as usize;
                    if i >= count {
                        return Err(parse(format!("{what}: index {i} past its {count} vertices")));
                    }
                    out.indices.push(base + i as u32);
                }
            }
            None => out.indices.extend((0..count as u32).map(|i| base + i)),
        }
    }
    Ok(out)
}

/// An accessor's elements as floats (`width` components each; normalized integers mapped
/// to `[0, 1]` or `[−1, 1]`, plain integers as their values), checked against its buffer
/// before anything is allocated.
fn read_floats(acc: &::gltf::Accessor, buffers: &[Vec<u8>], width: usize, what: &str) -> Result<Vec<f32>, IkError> {
    use ::gltf::accessor::DataType as D;
    let fail = |m: &str| parse(format!("{what}: accessor {}: {m}", acc.index()));
    if acc.sparse().is_some() {
        return Err(fail("sparse accessors are not supported"));
    }
    let comps = acc.dimensions().multiplicity();
    if comps != width {
        return Err(fail(&format!("{comps} components, {width} expected")));
    }
    let size = match acc.data_type() {
        D::I8 | D::U8 => 1,
        D::I16 | D::U16 => 2,
        D::U32 | D::F32 => 4,
    };
    let count = acc.count();
    let Some(view) = acc.view() else {
        return Err(fail("no buffer view"));
    };
    let data = buffers.get(view.buffer().index()).ok_or_else(|| fail("no such buffer"))?;
    let elem = size * comps;
    let stride = view.stride().unwrap_or(elem);
    if stride < elem {
        return Err(fail("a stride shorter than its element"));
    }
    let start = view.offset().checked_add(acc.offset()).ok_or_else(|| fail("offset overflow"))?;
    let view_end = view.offset().checked_add(view.length()).ok_or_else(|| fail("view overflow"))?;
    let end = if count == 0 {
        start
    } else {
        (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(start))
            .and_then(|x| x.checked_add(elem))
            .ok_or_else(|| fail("a count past any buffer"))?
    };
    if end > view_end || view_end > data.len() {
        return Err(fail(&format!("{count} elements run past the {} bytes behind them", data.len())));
    }
    let norm = acc.normalized();
    let mut out = Vec::with_capacity(count * comps);
    for e in 0..count {
        let at = start + e * stride;
        for c in 0..comps {
            let b = &data[at + c * size..at + (c + 1) * size];
            let v = match acc.data_type() {
                D::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                D::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
                D::U16 => {
                    let x = f32::from(u16::from_le_bytes([b[0], b[1]]));
                    if norm {
                        x / 65535.0
                    } else {
                        x
                    }
                }
                D::I16 => {
                    let x = f32::from(i16::from_le_bytes([b[0], b[1]]));
                    if norm {
                        (x / 32767.0).max(-1.0)
                    } else {
                        x
                    }
                }
                D::U8 => {
                    let x = f32::from(b[0]);
                    if norm {
                        x / 255.0
                    } else {
                        x
                    }
                }
                D::I8 => {
                    let x = f32::from(b[0] as i8);
                    if norm {
                        (x / 127.0).max(-1.0)
                    } else {
                        x
                    }
                }
            };
            out.push(v);
        }
    }
    Ok(out)
}
