//! Chain records shared byte-for-byte by the CPU reference and the WGSL kernels.
//!
//! Keep in sync with `shaders/shared/records.wgsl`: every struct here has a WGSL twin with the same
//! name and member order. Only 16-byte members (`[f32; 4]`, `[u32; 4]`) are used, so the
//! WGSL storage layout has no padding surprises; scalars ride in the `.w` of a vector.
//! Field offsets are asserted at compile time below, and `tests/layout.rs` checks them
//! against the WGSL structs parsed by naga.
//!
//! Conventions: right-handed, Y up, quaternions `(x, y, z, w)`. `_ms` = model space (the
//! character's space, as produced by the animation system's local-to-model pass). Rotations
//! are pure unit quaternions: a rig with scaled or mirrored parents passes its model-space
//! rotations with scale removed (as ozz-animation's matrix decomposition does) and its
//! positions, target and pole as they are.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

/// Most joints a FABRIK chain may have (the fixed size of [`FabrikChain`]).
pub const MAX_FABRIK_JOINTS: usize = crate::constants::MAX_FABRIK_JOINTS as usize;

/// How the plane the limb bends in is chosen (two-bone and pseudo three-bone).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoleMode {
    /// Keep the plane of the FK pose: the start joint only turns the shortest way that puts
    /// the end effector on the target (the usual choice when correcting motion).
    FkPlane = crate::constants::POLE_FK_PLANE,
    /// `pole` is a model-space position the mid joint (knee) points toward
    /// (Unity's bend goal, Unreal's pole "Location").
    Position = crate::constants::POLE_POSITION,
    /// `pole` is a model-space direction the mid joint points toward
    /// (ozz-animation's `pole_vector`, Unreal's pole "Direction").
    Direction = crate::constants::POLE_DIRECTION,
    /// `pole` is the north axis `N` of the history-independent zero-plane map (the normal of
    /// the setup solver plane, model space) and the swivel angle turns the bend plane about
    /// the start→target axis from that zero plane (3ds Max HI solver; docs/ALGORITHMS.md, "Swivel angle").
    Swivel = crate::constants::POLE_SWIVEL,
}

impl PoleMode {
    /// Decodes a raw mode value; `None` for values no solver knows.
    #[must_use]
    pub fn from_u32(v: u32) -> Option<Self> {
        [Self::FkPlane, Self::Position, Self::Direction, Self::Swivel].into_iter().find(|m| *m as u32 == v)
    }
}

/// Which way the mid joint (knee, elbow) bends about its hinge axis `mid_axis`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BendMode {
    /// Always bend positively about `mid_axis` (ozz-animation): a knee bent backwards in the
    /// FK pose is flipped to the valid side; a straight FK limb bends the valid way.
    Hinge = crate::constants::BEND_HINGE,
    /// Keep the side the FK pose was bent to; a perfectly straight FK limb has no side and
    /// bends positively about `mid_axis`, as in [`BendMode::Hinge`].
    KeepFk = crate::constants::BEND_KEEP_FK,
    /// Always bend negatively about `mid_axis` (the mirror of [`BendMode::Hinge`]).
    Reversed = crate::constants::BEND_REVERSED,
}

impl BendMode {
    /// Decodes a raw mode value; `None` for values no solver knows.
    #[must_use]
    pub fn from_u32(v: u32) -> Option<Self> {
        [Self::Hinge, Self::KeepFk, Self::Reversed].into_iter().find(|m| *m as u32 == v)
    }
}

/// Option bits stored in `mode[2]` of a chain record.
pub mod option {
    /// Knee limits (`params.z`, `params.w` = cos θmin, cos θmax) are on.
    pub const KNEE_LIMITS: u32 = crate::constants::OPT_KNEE_LIMITS;
    /// The last joint keeps its FK model-space rotation instead of following its parent
    /// (ozz-animation's default is to follow). Makes an end-effector offset exact.
    pub const KEEP_END_ROTATION: u32 = crate::constants::OPT_KEEP_END_ROTATION;
    /// Pseudo three-bone only: blend the third joint toward the second joint's new
    /// orientation itself rather than toward "new second joint × recorded local rotation".
    pub const COPY_MID_ROTATION: u32 = crate::constants::OPT_COPY_MID_ROTATION;
    /// The chain is mirrored: its joints' model matrices have a negative determinant (a
    /// negative scale somewhere above them, as in rigs built by mirroring one side), and
    /// `rotations_ms` are their rotation parts with the reflection taken as a negative x
    /// scale, `M = T · R · diag(−sx, sy, sz)` (glam's `Mat4::to_scale_rotation_translation`;
    /// see [`crate::records::mirrored_rotation`]). The chain is solved as its unmirrored
    /// twin (the reflection `x → −x` applied to every model-space point and direction,
    /// rotations conjugated by it, both exact), and the results are reflected back: the
    /// local corrections are the unmirrored twin's, and joint-local inputs (`mid_axis`,
    /// twist and swivel angles, the end-effector offset) mean what they mean on it.
    pub const MIRRORED: u32 = crate::constants::OPT_MIRRORED;
    /// CCD only ([`crate::records::CcdChain`]): visit the joints from the root to the tip's
    /// parent in each iteration instead of from the tip's parent to the root.
    pub const ROOT_FIRST: u32 = crate::constants::OPT_ROOT_FIRST;
    /// Constrained FABRIK only ([`crate::records::ConstrainedFabrikChain::with_align_hinges`]):
    /// in each forward pass, the joint above a hinge turns about its own bone so that the
    /// hinge can bend the next bone toward where the backward pass put the joint after it.
    /// Without it a hinge bends only in the plane the FK pose gave it (the forward pass never
    /// rolls a bone), and an arm whose elbow is a hinge cannot reach out of that plane.
    pub const ALIGN_HINGES: u32 = crate::constants::OPT_ALIGN_HINGES;
    /// Look-at only ([`crate::records::LookAtChain::with_up_target`]): roll each joint's
    /// `up` axis toward the record's `up_target_ms`.
    pub const UP_TARGET: u32 = crate::constants::OPT_UP_TARGET;
    /// Look-at only ([`crate::records::LookAtChain::with_shortest_arc`]): build each aim as
    /// the shortest arc from the current forward axis (the aim job's `AimMethod::ShortestArc`)
    /// instead of yaw then pitch in the joint's frame.
    pub const SHORTEST_ARC: u32 = crate::constants::OPT_SHORTEST_ARC;
    /// Multi-effector FABRIK only ([`crate::records::MultiFabrikChain::with_keep_root_rotation`]):
    /// the root keeps its FK rotation (a pelvis the animation drives); only the joints below
    /// it turn.
    pub const KEEP_ROOT_ROTATION: u32 = crate::constants::OPT_KEEP_ROOT_ROTATION;

    /// The bits a limb (two-bone, pseudo three-bone) knows: `KNEE_LIMITS`,
    /// `KEEP_END_ROTATION`, `COPY_MID_ROTATION`, `MIRRORED`. Each set below is the same for
    /// its chain kind: any other bit set in a record's option word is
    /// [`crate::ChainError::InvalidParameter`].
    pub const LIMB: u32 = crate::constants::OPT_LIMB;
    /// The bits a FABRIK chain knows: `KEEP_END_ROTATION`, `MIRRORED`.
    pub const FABRIK: u32 = crate::constants::OPT_FABRIK;
    /// The bits a constrained FABRIK chain knows: [`FABRIK`]'s and `ALIGN_HINGES`.
    pub const CONSTRAINED_FABRIK: u32 = crate::constants::OPT_CONSTRAINED_FABRIK;
    /// The bits a CCD chain knows: [`FABRIK`]'s and `ROOT_FIRST`.
    pub const CCD: u32 = crate::constants::OPT_CCD;
    /// The bits a look-at record knows: `UP_TARGET`, `SHORTEST_ARC`, `MIRRORED`.
    pub const LOOK_AT: u32 = crate::constants::OPT_LOOK_AT;
    /// The bits a multi-effector FABRIK tree knows: `KEEP_ROOT_ROTATION`.
    pub const MULTI_FABRIK: u32 = crate::constants::OPT_MULTI_FABRIK;
    /// The limb's bits, [`LIMB`] (the name it had before the other kinds' sets).
    #[deprecated(since = "0.1.0", note = "use `option::LIMB` (or the set of the chain kind)")]
    pub const ALL: u32 = LIMB;
}

/// A chain record's option word ([`option`] bits), by name: what the `with_*` builders set
/// and the solvers read. Every chain record has one (`mode[2]` of its chain or limb).
pub trait Options: Sized {
    /// The option word.
    fn options(&self) -> u32;
    /// The option word, to change it.
    fn options_mut(&mut self) -> &mut u32;
    /// Whether any bit of `bits` is set.
    #[inline]
    #[must_use]
    fn has_option(&self, bits: u32) -> bool {
        self.options() & bits != 0
    }
    /// The record with `bits` set (`on`) or cleared.
    #[inline]
    #[must_use]
    fn with_option(mut self, bits: u32, on: bool) -> Self {
        let word = self.options_mut();
        *word = if on { *word | bits } else { *word & !bits };
        self
    }
}

/// `Options` for records whose option word is `$($path).+` (`mode[2]` somewhere inside).
macro_rules! option_word {
    ($($record:ty => $($path:ident).+;)*) => {$(
        impl Options for $record {
            #[inline]
            fn options(&self) -> u32 {
                self.$($path).+[2]
            }
            #[inline]
            fn options_mut(&mut self) -> &mut u32 {
                &mut self.$($path).+[2]
            }
        }
    )*};
}
option_word! {
    LimbSettings => mode;
    TwoBoneChain => limb.mode;
    ThreeBoneChain => limb.mode;
    FabrikChain => mode;
    ConstrainedFabrikChain => chain.mode;
    CcdChain => chain.mode;
    DlsChain => chain.mode;
    LookAtChain => mode;
    MultiFabrikChain => mode;
    DlsTree => tree.mode;
}

/// Informational bits in `status[2]` of a solved record: what the solver had to do.
pub mod info {
    /// The target was further than `soften × chain length` and was eased (ozz's soften).
    pub const SOFTENED: u32 = crate::constants::INFO_SOFTENED;
    /// The solved reach was clamped by the knee limits.
    pub const KNEE_LIMITED: u32 = crate::constants::INFO_KNEE_LIMITED;
    /// The bones were stretched toward the target.
    pub const STRETCHED: u32 = crate::constants::INFO_STRETCHED;
    /// The target is out of reach: too far, or closer than the bones can fold.
    pub const OUT_OF_REACH: u32 = crate::constants::INFO_OUT_OF_REACH;
    /// The zero-plane map was at its singular point (start→target axis along the north
    /// axis) and used its fixed fallback axis.
    pub const SWIVEL_FALLBACK: u32 = crate::constants::INFO_SWIVEL_FALLBACK;
    /// A joint limit held the answer back from the target (look-at: a joint's yaw or pitch
    /// was clamped).
    pub const LIMITED: u32 = crate::constants::INFO_LIMITED;
    /// Two-bone and pseudo three-bone limbs in [`super::BendMode::Hinge`] or
    /// [`super::BendMode::Reversed`]: the FK pose bends the mid joint *against* its hinge
    /// (`mid_axis`) by more than ~11.5° (sine 0.2), and the solver bent it the hinge's way,
    /// i.e. turned the limb about itself to face the pole. Meant as a diagnostic: on a
    /// knee or elbow that bends every frame it almost always means the mid axis has the
    /// wrong sign (the crate's convention, ozz's: `(start − mid) × (end − mid)` points along
    /// the hinge for a valid bend); a straight or slightly hyperextended limb never sets it.
    /// [`super::BendMode::KeepFk`] never sets it.
    pub const AGAINST_HINGE: u32 = crate::constants::INFO_AGAINST_HINGE;
}

macro_rules! assert_layout {
    ($t:ty, $size:expr, $($field:ident == $off:expr),+ $(,)?) => {
        const _: () = assert!(core::mem::size_of::<$t>() == $size, concat!("size of ", stringify!($t), " does not match WGSL"));
        const _: () = assert!(core::mem::align_of::<$t>() <= 16);
        $(const _: () = assert!(
            core::mem::offset_of!($t, $field) == $off,
            concat!(stringify!($t), ".", stringify!($field), " does not match WGSL")
        );)+
    };
}

mod dls;
mod limb;
mod limits;
mod look_at;
mod multi_fabrik;
mod solved;

pub use dls::{DlsChain, DlsGoal, DlsTree, DlsTreeGoal, MAX_DLS_STARTS, MAX_ORIENTATION_WEIGHT};
pub use limb::{LimbBuilder, LimbSettings};
pub(crate) use limits::kinds_valid;
pub use limits::{limit, CcdChain, ChainLimits, ConstrainedFabrikChain, JointLimit, Limits, TreeLimits};
pub use look_at::{LookAtChain, LookAtSolved, MAX_LOOK_AT_JOINTS, NO_PARENT};
pub use multi_fabrik::{MultiFabrikChain, MultiFabrikSolved, MAX_EFFECTORS, MAX_TREE_JOINTS};
pub use solved::{
    Corrections, FabrikCorrections, FabrikSolved, SolvedChain, ThreeBoneSolved, TwoBoneCorrections, TwoBoneSolved,
};

/// A two-bone limb (hip–knee–ankle, shoulder–elbow–wrist) and its IK settings. 192 bytes.
/// Keep in sync with `TwoBoneChain` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct TwoBoneChain {
    /// FK model-space positions of start, mid and end joints (`.w` unused).
    pub joints_ms: [[f32; 4]; 3],
    /// FK model-space rotations of start, mid and end joints.
    pub rotations_ms: [[f32; 4]; 3],
    /// Target, bend plane, hinge, limits, weight.
    pub limb: LimbSettings,
    /// End-effector offset: the contact point (e.g. the sole) relative to the end joint, in
    /// the end joint's local space. IK puts the contact point on the target, assuming the end
    /// joint keeps its FK orientation ([`option::KEEP_END_ROTATION`] makes that exact).
    pub effector_offset: [f32; 4],
}
assert_layout!(TwoBoneChain, 192, joints_ms == 0, rotations_ms == 48, limb == 96, effector_offset == 176);

/// A pseudo three-bone limb (quadruped leg: hip, knee, hock, hoof tip) and its settings.
/// 224 bytes. Keep in sync with `ThreeBoneChain` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ThreeBoneChain {
    /// FK model-space positions of j0..j3 (`.w` unused). j3 is the tip that reaches.
    pub joints_ms: [[f32; 4]; 4],
    /// FK model-space rotations of j0..j3.
    pub rotations_ms: [[f32; 4]; 4],
    /// Target (for the tip j3), bend plane, hinge of j1, limits, weight.
    pub limb: LimbSettings,
    /// `x` = blend ratio of the third joint's orientation: 0 = follow the limb,
    /// 1 = keep its FK orientation (docs/ALGORITHMS.md, "Pseudo three-bone IK"). `yzw` unused.
    pub blend: [f32; 4],
}
assert_layout!(ThreeBoneChain, 224, joints_ms == 0, rotations_ms == 64, limb == 128, blend == 208);

/// A FABRIK chain of 2 to [`MAX_FABRIK_JOINTS`] joints with a fixed base. 560 bytes.
/// Keep in sync with `FabrikChain` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct FabrikChain {
    /// FK model-space joint positions; entries past `mode[0]` are ignored.
    pub joints_ms: [[f32; 4]; MAX_FABRIK_JOINTS],
    /// FK model-space joint rotations; entries past `mode[0]` are ignored.
    pub rotations_ms: [[f32; 4]; MAX_FABRIK_JOINTS],
    /// Target of the last joint; `.w` = weight.
    pub target_ms: [f32; 4],
    /// `x` = precision: `reached` when the tip ends within this distance of the target (and
    /// the CPU's converge mode stops there). `yzw` unused.
    pub params: [f32; 4],
    /// `x` = joint count, `y` = iterations, `z` = [`option`] bits
    /// ([`option::KEEP_END_ROTATION`]), `w` = reserved (0).
    pub mode: [u32; 4],
}
assert_layout!(FabrikChain, 560, joints_ms == 0, rotations_ms == 256, target_ms == 512, params == 528, mode == 544);

impl TwoBoneChain {
    /// A two-bone chain from its FK model-space joints and rotations (start, mid, end) and a
    /// target, with [`LimbSettings::new`]'s defaults and no end-effector offset.
    #[must_use]
    pub fn new(joints_ms: [Vec3; 3], rotations_ms: [Quat; 3], target_ms: Vec3) -> Self {
        Self {
            joints_ms: joints_ms.map(p4),
            rotations_ms: rotations_ms.map(|q| q.to_array()),
            limb: LimbSettings::new(target_ms),
            effector_offset: [0.0; 4],
        }
    }
    /// Sets the end-effector offset (contact point relative to the end joint, end-joint
    /// local space).
    #[must_use]
    pub fn with_effector_offset(mut self, offset_local: Vec3) -> Self {
        self.effector_offset = offset_local.extend(0.0).to_array();
        self
    }
    /// FK model-space position of joint `i` (0 = start, 1 = mid, 2 = end).
    #[inline]
    #[must_use]
    pub fn joint(&self, i: usize) -> Vec3 {
        v3(self.joints_ms[i])
    }
    /// FK model-space rotation of joint `i`.
    #[inline]
    #[must_use]
    pub fn rotation(&self, i: usize) -> Quat {
        Quat::from_array(self.rotations_ms[i])
    }
}

impl LimbBuilder for TwoBoneChain {
    fn limb_mut(&mut self) -> &mut LimbSettings {
        &mut self.limb
    }
}

impl ThreeBoneChain {
    /// A pseudo three-bone chain from its FK model-space joints and rotations (j0..j3) and
    /// a target for the tip j3, with [`LimbSettings::new`]'s defaults and blend ratio 1
    /// (the third joint keeps its FK orientation).
    #[must_use]
    pub fn new(joints_ms: [Vec3; 4], rotations_ms: [Quat; 4], target_ms: Vec3) -> Self {
        Self {
            joints_ms: joints_ms.map(p4),
            rotations_ms: rotations_ms.map(|q| q.to_array()),
            limb: LimbSettings::new(target_ms),
            blend: [1.0, 0.0, 0.0, 0.0],
        }
    }
    /// Blend ratio of the third joint's orientation: 0 = follow the limb, 1 = keep FK.
    #[must_use]
    pub fn with_blend(mut self, ratio: f32) -> Self {
        self.blend[0] = ratio;
        self
    }
    /// Blend toward the second joint's new orientation itself (`true`) or toward the new
    /// second joint times the recorded local rotation (`false`, the default).
    #[must_use]
    pub fn with_copy_mid_rotation(self, copy: bool) -> Self {
        self.with_option(option::COPY_MID_ROTATION, copy)
    }
    /// FK model-space position of joint `i`.
    #[inline]
    #[must_use]
    pub fn joint(&self, i: usize) -> Vec3 {
        v3(self.joints_ms[i])
    }
    /// FK model-space rotation of joint `i`.
    #[inline]
    #[must_use]
    pub fn rotation(&self, i: usize) -> Quat {
        Quat::from_array(self.rotations_ms[i])
    }
}

impl LimbBuilder for ThreeBoneChain {
    fn limb_mut(&mut self) -> &mut LimbSettings {
        &mut self.limb
    }
}

impl FabrikChain {
    /// A FABRIK chain from its FK model-space joints and rotations (equal lengths, 2 to
    /// [`MAX_FABRIK_JOINTS`]; longer input is recorded as a joint count the solver rejects)
    /// and a target, running `iterations` fixed iterations, weight 1, precision
    /// `1e-4 × chain length`, last joint following its parent.
    #[must_use]
    pub fn new(joints_ms: &[Vec3], rotations_ms: &[Quat], target_ms: Vec3, iterations: u32) -> Self {
        let mut c = Self::zeroed();
        let n = joints_ms.len().min(rotations_ms.len());
        for i in 0..n.min(MAX_FABRIK_JOINTS) {
            c.joints_ms[i] = p4(joints_ms[i]);
            c.rotations_ms[i] = rotations_ms[i].to_array();
        }
        let length: f32 = joints_ms.windows(2).map(|w| w[0].distance(w[1])).sum();
        c.target_ms = target_ms.extend(1.0).to_array();
        c.params = [1e-4 * length, 0.0, 0.0, 0.0];
        c.mode = [u32::try_from(joints_ms.len().max(rotations_ms.len())).unwrap_or(u32::MAX), iterations, 0, 0];
        c
    }
    /// Number of joints (`mode.x`).
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.mode[0] as usize
    }
    /// Iterations (`mode.y`).
    #[inline]
    #[must_use]
    pub fn iterations(&self) -> u32 {
        self.mode[1]
    }
    /// The precision `reached` is judged by (`params.x`).
    #[inline]
    #[must_use]
    pub fn precision(&self) -> f32 {
        self.params[0]
    }
    /// Blend weight toward the IK solution (`target_ms.w`).
    #[inline]
    #[must_use]
    pub fn weight(&self) -> f32 {
        self.target_ms[3]
    }
    /// Model-space target.
    #[inline]
    #[must_use]
    pub fn target(&self) -> Vec3 {
        v3(self.target_ms)
    }
    /// The reserved word (`mode.w`; 0 in a valid record).
    #[inline]
    #[must_use]
    pub fn reserved(&self) -> u32 {
        self.mode[3]
    }
    /// Sets the weight (≤ 0 untouched, ≥ 1 full).
    #[must_use]
    pub fn with_weight(mut self, weight: f32) -> Self {
        self.target_ms[3] = weight;
        self
    }
    /// Sets the precision: the tip distance under which the target counts as reached.
    #[must_use]
    pub fn with_precision(mut self, precision: f32) -> Self {
        self.params[0] = precision;
        self
    }
    /// Sets the iteration count.
    #[must_use]
    pub fn with_iterations(mut self, iterations: u32) -> Self {
        self.mode[1] = iterations;
        self
    }
    /// Marks the chain as mirrored ([`option::MIRRORED`]).
    #[must_use]
    pub fn with_mirrored(self, mirrored: bool) -> Self {
        self.with_option(option::MIRRORED, mirrored)
    }
    /// Makes the last joint keep its FK model-space rotation instead of following its parent.
    #[must_use]
    pub fn with_keep_end_rotation(self, keep: bool) -> Self {
        self.with_option(option::KEEP_END_ROTATION, keep)
    }
    /// FK model-space position of joint `i`.
    #[inline]
    #[must_use]
    pub fn joint(&self, i: usize) -> Vec3 {
        v3(self.joints_ms[i])
    }
    /// FK model-space rotation of joint `i`.
    #[inline]
    #[must_use]
    pub fn rotation(&self, i: usize) -> Quat {
        Quat::from_array(self.rotations_ms[i])
    }
}

#[inline]
pub(crate) fn v3(a: [f32; 4]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

#[inline]
pub(crate) fn p4(v: Vec3) -> [f32; 4] {
    [v.x, v.y, v.z, 1.0]
}

/// A joint's model matrix decomposed the way [`option::MIRRORED`] expects
/// ([`mirrored_rotation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MirroredJoint {
    /// The joint's model-space position (the matrix's translation).
    pub position: Vec3,
    /// Its model rotation `R` (the reflection, if any, taken out as a negative x scale).
    pub rotation: Quat,
    /// Whether the matrix reflects (negative determinant): the chain gets
    /// [`option::MIRRORED`].
    pub mirrored: bool,
}

/// Position, rotation and handedness of a joint's model matrix, decomposed the way
/// [`option::MIRRORED`] expects: `m = T · R · diag(sx, sy, sz)` with the reflection of a
/// negative determinant taken as a negative `sx` (glam's `to_scale_rotation_translation`
/// convention). A chain whose joints are `mirrored` gets [`option::MIRRORED`] (a chain is
/// mirrored as a whole: a negative scale between two of its joints is not supported).
#[must_use]
pub fn mirrored_rotation(m: glam::Mat4) -> MirroredJoint {
    let (_, rotation, position) = m.to_scale_rotation_translation();
    MirroredJoint { position, rotation, mirrored: m.determinant() < 0.0 }
}

/// The reflection `x → −x` of a model-space point or direction (`w` kept): exact.
#[inline]
pub(crate) fn mirror_point(p: &mut [f32; 4]) {
    p[0] = -p[0];
}

/// A model rotation `R` conjugated by the reflection `x → −x`, `P·R·P` (`w` kept): exact.
#[inline]
pub(crate) fn mirror_rotation(q: &mut [f32; 4]) {
    q[1] = -q[1];
    q[2] = -q[2];
}

/// The unmirrored twin of a mirrored chain's joints and limb settings (see
/// [`option::MIRRORED`]): joint positions, target and pole reflected, rotations
/// conjugated; joint-local inputs (hinge, angles, offset) untouched.
pub(crate) fn mirror_joints(joints_ms: &mut [[f32; 4]], rotations_ms: &mut [[f32; 4]]) {
    joints_ms.iter_mut().for_each(mirror_point);
    rotations_ms.iter_mut().for_each(mirror_rotation);
}

impl LimbSettings {
    /// Reflects the model-space target and pole (see [`mirror_joints`]).
    pub(crate) fn mirror(&mut self) {
        mirror_point(&mut self.target_ms);
        mirror_point(&mut self.pole_ms);
    }
    /// Whether [`option::MIRRORED`] is set.
    #[inline]
    #[must_use]
    pub fn mirrored(&self) -> bool {
        self.has_option(option::MIRRORED)
    }
}

impl<const N: usize> SolvedChain<N> {
    /// Reflects the solved positions and rotations of the first `n` joints back to the
    /// mirrored chain (corrections are local: the unmirrored twin's are the mirrored
    /// chain's; slots past `n` stay zero).
    pub(crate) fn mirror(&mut self, n: usize) {
        let n = n.min(N);
        mirror_joints(&mut self.positions_ms[..n], &mut self.rotations_ms[..n]);
    }
}

impl TwoBoneChain {
    /// The unmirrored twin a mirrored chain is solved as (see [`option::MIRRORED`]).
    pub(crate) fn unmirrored(&self) -> Self {
        let mut c = *self;
        mirror_joints(&mut c.joints_ms, &mut c.rotations_ms);
        c.limb.mirror();
        c
    }
}

impl ThreeBoneChain {
    /// The unmirrored twin a mirrored chain is solved as (see [`option::MIRRORED`]).
    pub(crate) fn unmirrored(&self) -> Self {
        let mut c = *self;
        mirror_joints(&mut c.joints_ms, &mut c.rotations_ms);
        c.limb.mirror();
        c
    }
}

impl FabrikChain {
    /// The unmirrored twin a mirrored chain is solved as (see [`option::MIRRORED`]).
    pub(crate) fn unmirrored(&self) -> Self {
        let mut c = *self;
        mirror_joints(&mut c.joints_ms, &mut c.rotations_ms);
        mirror_point(&mut c.target_ms);
        c
    }
}

/// A chain record and the solved record every solver of it writes: the CPU's
/// [`Chain`](crate::cpu::Chain) and the GPU's `GpuChain` both build on it.
pub trait ChainRecord: Pod + Sync {
    /// The solved record it produces.
    type Solved: Pod + Send + Default;
}

macro_rules! chain_records {
    ($($chain:ty => $solved:ty),* $(,)?) => {
        $(impl ChainRecord for $chain {
            type Solved = $solved;
        })*
    };
}
chain_records! {
    TwoBoneChain => TwoBoneSolved,
    ThreeBoneChain => ThreeBoneSolved,
    FabrikChain => FabrikSolved,
    ConstrainedFabrikChain => FabrikSolved,
    CcdChain => FabrikSolved,
    DlsChain => FabrikSolved,
    MultiFabrikChain => MultiFabrikSolved,
    DlsTree => MultiFabrikSolved,
    LookAtChain => LookAtSolved,
}
