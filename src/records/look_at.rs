//! The look-at record: a small tree of joints (spine, neck, head, eyes) that turn toward one
//! point of interest, solved per character by `shaders/kernels/look_at.wgsl` and its CPU twin
//! `cpu::look_at`.
//!
//! Each joint aims its own `forward` axis (in its local frame) from its own position at the
//! target, in record order, after its parent in the record has turned: a neck with weight
//! 0.3 followed by a head with weight 1 leaves the head pointing exactly at the target with
//! the neck carrying part of the turn (ozz-animation's look-at sample distributes the turn
//! the same way); two eyes whose parent is the head then converge on the target. The
//! roll about the new forward axis is the aim construction's (yaw then pitch in the joint's
//! frame, or the shortest arc), or, with
//! an up target, the one that points the joint's `up` axis toward it (the up-vector
//! constraint).
//!
//! **Limits** are yaw and pitch about the joint's *rest frame*: the parent's current model
//! rotation times the rest local rotation `rest` (as for [`crate::records::JointLimit`]). In
//! that frame, with `f` = forward, `u` = up and `s = f × u`, the direction to the target has
//! yaw `atan2(−d·s, d·f)` (turning about `u`, positive from `f` toward `−s`) and pitch
//! `atan2(d·u, |d − (d·u)u|)` (positive toward `u`). Outside `[yaw_min, yaw_max] ×
//! [pitch_min, pitch_max]` each angle is moved to its nearer bound (yaw around the circle)
//! and the joint aims along the clamped direction instead, flagged [`info::LIMITED`](super::info::LIMITED).

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::{mirror_joints, mirror_point, mirror_rotation, option, p4, v3, Options};
use crate::constants as c;

/// Most joints one look-at record holds.
pub const MAX_LOOK_AT_JOINTS: usize = c::MAX_LOOK_AT_JOINTS as usize;

/// "No parent in this record" in [`LookAtChain::mode`]`.y`: the joint's parent is outside the
/// record (its model rotation is [`LookAtChain::parent_ms`]).
pub const NO_PARENT: u32 = c::LOOK_AT_NO_PARENT;

/// A look-at record (see the module docs). 448 bytes. Keep in sync with `LookAtChain` in
/// `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct LookAtChain {
    /// FK model-space joint positions (`.w` unused); entries past the joint count ignored.
    pub joints_ms: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// FK model-space joint rotations.
    pub rotations_ms: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// `xyz` = the joint's forward axis (local, non-zero), `w` = the joint's weight (0..1):
    /// how much of its own aim it applies.
    pub forward: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// `xyz` = the joint's up axis (local, non-zero, perpendicular to `forward` within
    /// 1e-3 of a right angle), `w` unused.
    pub up: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// Rest local rotation of each limited joint, relative to its parent's model rotation:
    /// where yaw and pitch are zero.
    pub rest: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// Limits of each limited joint, radians: `x..y` = yaw min, max (within `[−π, π]`),
    /// `z..w` = pitch min, max (within `[−π/2, π/2]`).
    pub limits: [[f32; 4]; MAX_LOOK_AT_JOINTS],
    /// Model rotation of the parent of every joint whose parent is outside the record
    /// (e.g. the chest under a neck); only limits use it.
    pub parent_ms: [f32; 4],
    /// Model-space point to look at; `.w` = the record's weight, multiplied onto every
    /// joint's own. A subnormal weight leaves the FK pose, as 0 does.
    pub target_ms: [f32; 4],
    /// Model-space point the `up` axes turn toward (with [`option::UP_TARGET`](super::option::UP_TARGET)).
    pub up_target_ms: [f32; 4],
    /// `x` = joint count (1..=4), `y` = each joint's parent in the record, 8 bits per joint
    /// (joint `i` in bits `8i..8i+8`; a parent comes before its children, [`NO_PARENT`] =
    /// outside the record), `z` = option bits ([`option::UP_TARGET`](super::option::UP_TARGET),
    /// [`option::SHORTEST_ARC`](super::option::SHORTEST_ARC), [`option::MIRRORED`](super::option::MIRRORED)), `w` = bit
    /// `i` set: joint `i` is limited.
    pub mode: [u32; 4],
}
assert_layout!(
    LookAtChain,
    448,
    joints_ms == 0,
    rotations_ms == 64,
    forward == 128,
    up == 192,
    rest == 256,
    limits == 320,
    parent_ms == 384,
    target_ms == 400,
    up_target_ms == 416,
    mode == 432
);

/// The solved look-at record: joints `0..n` as the record lists them.
pub type LookAtSolved = super::SolvedChain<MAX_LOOK_AT_JOINTS>;

impl LookAtChain {
    /// [`option::UP_TARGET`](super::option::UP_TARGET), by its former name.
    #[deprecated(since = "0.1.0", note = "use `option::UP_TARGET`")]
    pub const UP_TARGET: u32 = c::OPT_UP_TARGET;
    /// [`option::SHORTEST_ARC`](super::option::SHORTEST_ARC), by its former name.
    #[deprecated(since = "0.1.0", note = "use `option::SHORTEST_ARC`")]
    pub const SHORTEST_ARC: u32 = c::OPT_SHORTEST_ARC;
    /// [`option::LOOK_AT`](super::option::LOOK_AT), by its former name.
    #[deprecated(since = "0.1.0", note = "use `option::LOOK_AT`")]
    pub const OPTIONS: u32 = c::OPT_LOOK_AT;

    /// An empty record looking at `target_ms` with weight 1 and identity parent rotation; add
    /// joints with [`LookAtChain::with_joint`].
    #[must_use]
    pub fn new(target_ms: Vec3) -> Self {
        let mut r = Self::zeroed();
        r.target_ms = target_ms.extend(1.0).to_array();
        r.parent_ms = Quat::IDENTITY.to_array();
        r.rest = [Quat::IDENTITY.to_array(); MAX_LOOK_AT_JOINTS];
        r.mode[1] = u32::MAX; // every joint: no parent in the record
        r
    }

    /// Adds a joint (index = the joint count before the call; at most
    /// [`MAX_LOOK_AT_JOINTS`], further joints are ignored): its parent in the record
    /// (`None`: outside), FK model-space position and rotation, local forward and up axes,
    /// and its weight.
    #[must_use]
    pub fn with_joint(
        mut self,
        parent: Option<usize>,
        position_ms: Vec3,
        rotation_ms: Quat,
        forward: Vec3,
        up: Vec3,
        weight: f32,
    ) -> Self {
        let i = self.mode[0] as usize;
        if i >= MAX_LOOK_AT_JOINTS {
            return self;
        }
        self.joints_ms[i] = p4(position_ms);
        self.rotations_ms[i] = rotation_ms.to_array();
        self.forward[i] = forward.extend(weight).to_array();
        self.up[i] = up.extend(0.0).to_array();
        let p = parent.map_or(NO_PARENT, |p| p.min(0xfe) as u32);
        self.mode[1] = (self.mode[1] & !(0xff << (8 * i))) | (p << (8 * i));
        self.mode[0] += 1;
        self
    }

    /// Limits joint `i` to yaw `[yaw[0], yaw[1]]` and pitch `[pitch[0], pitch[1]]` radians
    /// about its rest frame (`rest`: the rest local rotation, relative to its parent).
    #[must_use]
    pub fn with_limits(mut self, i: usize, rest: Quat, yaw: [f32; 2], pitch: [f32; 2]) -> Self {
        if i < MAX_LOOK_AT_JOINTS {
            self.rest[i] = rest.to_array();
            self.limits[i] = [yaw[0], yaw[1], pitch[0], pitch[1]];
            self.mode[3] |= 1 << i;
        }
        self
    }

    /// The model rotation of the record's outside parent (for limits of its root joints).
    #[must_use]
    pub fn with_parent(mut self, parent_ms: Quat) -> Self {
        self.parent_ms = parent_ms.to_array();
        self
    }

    /// Sets each limited joint's rest rotation to its current FK local rotation, so its
    /// limits read "this far from where the animation holds it".
    #[must_use]
    pub fn with_rest_from_pose(mut self) -> Self {
        for i in 0..self.joint_count().min(MAX_LOOK_AT_JOINTS) {
            let parent = match self.parent(i) {
                Some(p) if p < i => Quat::from_array(self.rotations_ms[p]),
                _ => Quat::from_array(self.parent_ms),
            };
            self.rest[i] = (parent.conjugate() * Quat::from_array(self.rotations_ms[i])).normalize().to_array();
        }
        self
    }

    /// Rolls every joint's `up` axis toward `up_target_ms` (`None`: no roll constraint).
    #[must_use]
    pub fn with_up_target(mut self, up_target_ms: Option<Vec3>) -> Self {
        match up_target_ms {
            Some(u) => {
                self.up_target_ms = p4(u);
                self.with_option(option::UP_TARGET, true)
            }
            None => self.with_option(option::UP_TARGET, false),
        }
    }

    /// Builds the aims as shortest arcs (`true`) or yaw then pitch (`false`, the default).
    #[must_use]
    pub fn with_shortest_arc(self, on: bool) -> Self {
        self.with_option(option::SHORTEST_ARC, on)
    }

    /// The record's weight (multiplied onto every joint's).
    #[must_use]
    pub fn with_weight(mut self, weight: f32) -> Self {
        self.target_ms[3] = weight;
        self
    }

    /// Joints in the record (`mode.x`).
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.mode[0] as usize
    }

    /// Whether joint `i` is limited (bit `i` of `mode.w`).
    #[inline]
    #[must_use]
    pub fn is_limited(&self, i: usize) -> bool {
        self.mode[3] >> (i % 32) & 1 != 0
    }

    /// The limited-joint bits past the first `n` joints (`mode.w >> n`, `n` ≤
    /// [`MAX_LOOK_AT_JOINTS`]; 0 in a valid record).
    #[inline]
    #[must_use]
    pub(crate) fn limits_past(&self, n: usize) -> u32 {
        self.mode[3] >> n
    }

    /// Joint `i`'s parent in the record, `None` if outside.
    #[inline]
    #[must_use]
    pub fn parent(&self, i: usize) -> Option<usize> {
        let p = (self.mode[1] >> (8 * (i % 4))) & 0xff;
        (p != NO_PARENT).then_some(p as usize)
    }

    /// Target position.
    #[inline]
    #[must_use]
    pub fn target(&self) -> Vec3 {
        v3(self.target_ms)
    }

    /// The unmirrored twin a mirrored record is solved as: positions, targets reflected,
    /// rotations conjugated; local axes, rest rotations and limits mean what they mean on
    /// the twin.
    pub(crate) fn unmirrored(&self) -> Self {
        let mut r = *self;
        mirror_joints(&mut r.joints_ms, &mut r.rotations_ms);
        mirror_rotation(&mut r.parent_ms);
        mirror_point(&mut r.target_ms);
        mirror_point(&mut r.up_target_ms);
        r
    }
}
