//! The limb settings shared by the two-bone and pseudo three-bone records, and the builder
//! methods both chain kinds get from them.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::{option, v3, BendMode, Options, PoleMode};

/// Settings shared by the two-bone and pseudo three-bone limbs: target, bend plane, hinge,
/// limits and weight. 80 bytes. Keep in sync with `LimbSettings` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct LimbSettings {
    /// Model-space target of the end effector; `.w` = weight (≤ 0 untouched, ≥ 1 full).
    pub target_ms: [f32; 4],
    /// Pole position, pole direction or zero-plane north axis (see [`PoleMode`]), model
    /// space; `.w` = swivel angle in radians (used by [`PoleMode::Swivel`]).
    pub pole_ms: [f32; 4],
    /// Hinge axis of the mid joint in the mid joint's local space (ozz's `mid_axis`);
    /// `.w` = twist angle in radians about the start→target axis (ozz's `twist_angle`).
    pub mid_axis: [f32; 4],
    /// `x` = soften in `[0, 1]` (1 = off), `y` = max stretch scale (1 = off),
    /// `z` = cos θmin, `w` = cos θmax (knee inner-angle limits, used with
    /// [`option::KNEE_LIMITS`]).
    pub params: [f32; 4],
    /// `x` = [`PoleMode`], `y` = [`BendMode`], `z` = [`option`] bits, `w` = reserved (0).
    pub mode: [u32; 4],
}
assert_layout!(LimbSettings, 80, target_ms == 0, pole_ms == 16, mid_axis == 32, params == 48, mode == 64);

impl LimbSettings {
    /// Settings with ozz-animation's defaults: weight 1, soften 1, no stretch, no twist,
    /// `mid_axis` = +Z, bend plane from the FK pose, hinge bend, no knee limits.
    #[must_use]
    pub fn new(target_ms: Vec3) -> Self {
        Self {
            target_ms: target_ms.extend(1.0).to_array(),
            pole_ms: [0.0; 4],
            mid_axis: [0.0, 0.0, 1.0, 0.0],
            params: [1.0, 1.0, 1.0, -1.0],
            mode: [PoleMode::FkPlane as u32, BendMode::Hinge as u32, 0, 0],
        }
    }
    /// Model-space target.
    #[inline]
    #[must_use]
    pub fn target(&self) -> Vec3 {
        v3(self.target_ms)
    }
    /// Blend weight toward the IK solution.
    #[inline]
    #[must_use]
    pub fn weight(&self) -> f32 {
        self.target_ms[3]
    }
    /// Pole mode, if the raw value is valid.
    #[inline]
    #[must_use]
    pub fn pole_mode(&self) -> Option<PoleMode> {
        PoleMode::from_u32(self.mode[0])
    }
    /// Bend mode, if the raw value is valid.
    #[inline]
    #[must_use]
    pub fn bend_mode(&self) -> Option<BendMode> {
        BendMode::from_u32(self.mode[1])
    }
    /// Soften (`params.x`, in `[0, 1]`; 1 = off).
    #[inline]
    #[must_use]
    pub fn soften(&self) -> f32 {
        self.params[0]
    }
    /// Max stretch scale (`params.y`; 1 = off).
    #[inline]
    #[must_use]
    pub fn max_stretch(&self) -> f32 {
        self.params[1]
    }
    /// The knee's inner-angle limits as cosines `(cos θmin, cos θmax)` (`params.zw`, used
    /// with [`option::KNEE_LIMITS`]).
    #[inline]
    #[must_use]
    pub fn knee_cos_limits(&self) -> (f32, f32) {
        (self.params[2], self.params[3])
    }
    /// The reserved word (`mode.w`; 0 in a valid record).
    #[inline]
    #[must_use]
    pub fn reserved(&self) -> u32 {
        self.mode[3]
    }
}

/// Builder methods shared by every chain that carries [`LimbSettings`].
pub trait LimbBuilder: Sized {
    /// The chain's limb settings.
    fn limb_mut(&mut self) -> &mut LimbSettings;

    /// Sets the model-space target.
    #[must_use]
    fn with_target(mut self, target_ms: Vec3) -> Self {
        let w = self.limb_mut().target_ms[3];
        self.limb_mut().target_ms = target_ms.extend(w).to_array();
        self
    }
    /// Weight: ≤ 0 leaves the FK pose untouched, ≥ 1 applies the full solution,
    /// in between nlerps the local corrections from identity (ozz-animation).
    #[must_use]
    fn with_weight(mut self, weight: f32) -> Self {
        self.limb_mut().target_ms[3] = weight;
        self
    }
    /// The mid joint points toward this model-space position.
    #[must_use]
    fn with_pole_position(mut self, pole_ms: Vec3) -> Self {
        let l = self.limb_mut();
        l.pole_ms = pole_ms.extend(l.pole_ms[3]).to_array();
        l.mode[0] = PoleMode::Position as u32;
        self
    }
    /// The mid joint points along this model-space direction.
    #[must_use]
    fn with_pole_direction(mut self, dir_ms: Vec3) -> Self {
        let l = self.limb_mut();
        l.pole_ms = dir_ms.extend(l.pole_ms[3]).to_array();
        l.mode[0] = PoleMode::Direction as u32;
        self
    }
    /// Swivel angle (radians) about the start→target axis, measured from the zero plane of
    /// the history-independent map whose north axis is `north_ms` (the setup-pose solver
    /// plane's normal, usually the hinge axis in the setup pose, expressed in model space).
    #[must_use]
    fn with_swivel(mut self, north_ms: Vec3, angle: f32) -> Self {
        let l = self.limb_mut();
        l.pole_ms = north_ms.extend(angle).to_array();
        l.mode[0] = PoleMode::Swivel as u32;
        self
    }
    /// Keeps the FK bend plane (the default).
    #[must_use]
    fn with_fk_plane(mut self) -> Self {
        self.limb_mut().mode[0] = PoleMode::FkPlane as u32;
        self
    }
    /// Hinge axis of the mid joint, in the mid joint's local space.
    #[must_use]
    fn with_mid_axis(mut self, mid_axis_local: Vec3) -> Self {
        let l = self.limb_mut();
        l.mid_axis = mid_axis_local.extend(l.mid_axis[3]).to_array();
        self
    }
    /// Which way the mid joint bends about its hinge.
    #[must_use]
    fn with_bend(mut self, bend: BendMode) -> Self {
        self.limb_mut().mode[1] = bend as u32;
        self
    }
    /// Twist (radians) of the whole limb about the start→target axis (ozz's `twist_angle`).
    #[must_use]
    fn with_twist(mut self, angle: f32) -> Self {
        self.limb_mut().mid_axis[3] = angle;
        self
    }
    /// ozz-animation's soften ratio in `[0, 1]`: past `soften × chain length` the reach is
    /// eased so the limb never snaps straight. 1 turns it off.
    #[must_use]
    fn with_soften(mut self, soften: f32) -> Self {
        self.limb_mut().params[0] = soften;
        self
    }
    /// Lets the bones stretch up to `max_scale` (≥ 1) times their length toward a far target
    /// (Unreal's stretch). 1 turns it off.
    #[must_use]
    fn with_stretch(mut self, max_scale: f32) -> Self {
        self.limb_mut().params[1] = max_scale;
        self
    }
    /// Limits the mid joint's inner angle to `[min, max]` radians, `0 ≤ min ≤ max ≤ π`,
    /// by clamping the reach distance (docs/ALGORITHMS.md, "Two-bone IK"), exact whatever the bone ratio.
    #[must_use]
    fn with_knee_limits(mut self, min: f32, max: f32) -> Self {
        let l = self.limb_mut();
        l.params[2] = min.cos();
        l.params[3] = max.cos();
        *l = l.with_option(option::KNEE_LIMITS, true);
        self
    }
    /// Makes the last joint keep its FK model-space rotation (or follow its parent, the
    /// default, when `keep` is false).
    #[must_use]
    fn with_keep_end_rotation(mut self, keep: bool) -> Self {
        let l = self.limb_mut();
        *l = l.with_option(option::KEEP_END_ROTATION, keep);
        self
    }
    /// Marks the chain as mirrored ([`option::MIRRORED`]): its joints' model matrices
    /// have a negative determinant and `rotations_ms` hold their rotation parts with the
    /// reflection as a negative x scale ([`crate::records::mirrored_rotation`]).
    #[must_use]
    fn with_mirrored(mut self, mirrored: bool) -> Self {
        let l = self.limb_mut();
        *l = l.with_option(option::MIRRORED, mirrored);
        self
    }
}
