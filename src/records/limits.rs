//! Joint limits and the chain records that carry them: [`ConstrainedFabrikChain`] and
//! [`CcdChain`].
//!
//! A limit is stated in the joint's *rest frame*: the joint's local rotation `L` (its model
//! rotation seen from its parent's model rotation, `L = P⁻¹ · R`) is compared with a rest
//! local rotation `rest` (typically the bind pose's), and the deviation `D = rest⁻¹ · L` is
//! what the limit constrains. The joint's bone (joint `i` → joint `i+1`) in the joint's own
//! frame is the twist axis `b`; `D` splits into a swing (which moves the bone) and a twist
//! about `b` (which rolls it), as in Unity's character joints and PhysX's spherical joints.
//!
//! - **Hinge** (knee, elbow, finger): the bone may only turn about `axis` (joint frame,
//!   made perpendicular to the bone), by an angle in `[range.x, range.y]` radians. The bone
//!   direction is projected on the hinge's plane and the angle clamped; the twist is zero.
//! - **Cone** (hip, shoulder, neck): the swing's rotation vector `w` (angle × axis, in the
//!   plane perpendicular to the bone) stays inside the ellipse
//!   `(w·u / range.x)² + (w·v / range.y)² ≤ 1`, with `u` = `axis` made perpendicular to the
//!   bone and `v = b × u`: `range.x` is the largest swing *about* `axis`, `range.y` about
//!   the perpendicular axis (equal for a circular cone, where `axis` may be anything). A
//!   swing outside is scaled back onto the boundary along its own direction.
//! - **Twist** (forearm, spine, neck): the twist angle stays in `[range.z, range.w]`.
//!
//! A joint can have a cone and a twist limit together; a hinge excludes both (it fixes the
//! twist). The last joint of a chain has no bone and takes no limit. Angles are in radians,
//! ranges within `[-π, π]`; an angle outside a range is moved to the nearer bound (around
//! the circle).

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::{mirror_rotation, option, FabrikChain, Options, MAX_FABRIK_JOINTS};
use crate::constants as c;

/// The kind bits of one joint's limit ([`ChainLimits::kinds`]).
pub mod limit {
    /// Hinge about `axis`, angle in `[range.x, range.y]`.
    pub const HINGE: u32 = crate::constants::LIMIT_HINGE;
    /// Swing cone (elliptical) about the bone: half-angles `range.x` (about `axis`) and
    /// `range.y` (about the perpendicular axis).
    pub const CONE: u32 = crate::constants::LIMIT_CONE;
    /// Twist about the bone in `[range.z, range.w]`.
    pub const TWIST: u32 = crate::constants::LIMIT_TWIST;
}

/// One joint's limit: its rest frame, axis and angles (see the module docs). 48 bytes.
/// Keep in sync with `JointLimit` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct JointLimit {
    /// The rest local rotation (relative to the parent joint's model rotation; for the
    /// chain's first joint, to [`ChainLimits::parent_ms`]): where every angle is zero.
    pub rest: [f32; 4],
    /// `xyz` = the hinge axis or the cone's first axis, in the joint's own frame at rest:
    /// a direction of any length (only its part perpendicular to the bone counts). A hinge,
    /// and a cone of two different half-angles, need it at least 0.01 rad (0.57°) off the bone
    /// (else [`ChainError::DegenerateMidAxis`](crate::ChainError::DegenerateMidAxis)); a
    /// circular cone ignores it. `w` unused.
    pub axis: [f32; 4],
    /// Hinge: `x..y` = min, max angle. Cone: `x`, `y` = half-angles, each in `[1e-3, π]`
    /// ([`crate::constants::LIMIT_MIN_CONE`]). Twist: `z..w` = min,
    /// max angle. Radians.
    pub range: [f32; 4],
}
assert_layout!(JointLimit, 48, rest == 0, axis == 16, range == 32);

/// The limits of `N` joints: a chain's ([`ChainLimits`], 16 joints) or a joint tree's
/// ([`TreeLimits`], 32). Keep in sync with `ChainLimits` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits<const N: usize> {
    /// The model rotation of the chain's parent (the joint above its first joint, e.g. the
    /// pelvis for a leg): the first joint's limit is stated relative to it. Identity = the
    /// model frame.
    pub parent_ms: [f32; 4],
    /// Four [`limit`] bits per joint: joint `i` in bits `4·(i % 8) ..` of `kinds[i / 8]`.
    /// Zero = unlimited. Words past the joints (`kinds[2..4]` of a chain's) are reserved (0).
    pub kinds: [u32; 4],
    /// Per joint; read only where the joint's kind bits are set.
    pub joints: [JointLimit; N],
}
// SAFETY: `Limits<N>` is `repr(C)` and made only of `[f32; 4]`/`[u32; 4]` arrays and
// `JointLimit`s (themselves `[f32; 4]` arrays), so it has no padding and every bit pattern
// is valid, for every `N`.
unsafe impl<const N: usize> Zeroable for Limits<N> {}
// SAFETY: see above.
unsafe impl<const N: usize> Pod for Limits<N> {}

/// The limits of a chain's joints (16). 800 bytes.
pub type ChainLimits = Limits<MAX_FABRIK_JOINTS>;
/// The limits of a joint tree's joints (32, [`crate::records::DlsTree`]). 1 568 bytes.
pub type TreeLimits = Limits<{ c::MAX_TREE_JOINTS as usize }>;
assert_layout!(ChainLimits, 800, parent_ms == 0, kinds == 16, joints == 32);
assert_layout!(TreeLimits, 1568, parent_ms == 0, kinds == 16, joints == 32);

impl<const N: usize> Default for Limits<N> {
    fn default() -> Self {
        Self { parent_ms: Quat::IDENTITY.to_array(), ..Self::zeroed() }
    }
}

impl<const N: usize> Limits<N> {
    /// The kind bits of joint `i` (0 past the last joint).
    #[must_use]
    pub fn kind(&self, i: usize) -> u32 {
        if i >= N {
            return 0;
        }
        (self.kinds[i / 8] >> (4 * (i % 8))) & 0xf
    }
    /// Whether any joint is limited.
    #[must_use]
    pub fn any(&self) -> bool {
        self.kinds[..N.div_ceil(8)].iter().any(|&k| k != 0)
    }
    /// Sets the parent's model rotation.
    #[must_use]
    pub fn with_parent(mut self, parent_ms: Quat) -> Self {
        self.parent_ms = parent_ms.to_array();
        self
    }
    /// Sets joint `i`'s limit: `kind` ([`limit`] bits), rest local rotation, axis, range.
    /// Ignored for `i ≥ N`.
    #[must_use]
    pub fn with_joint(mut self, i: usize, kind: u32, rest: Quat, axis: Vec3, range: [f32; 4]) -> Self {
        if i < N {
            let shift = 4 * (i % 8);
            self.kinds[i / 8] = (self.kinds[i / 8] & !(0xf << shift)) | ((kind & 0xf) << shift);
            self.joints[i] = JointLimit { rest: rest.to_array(), axis: axis.extend(0.0).to_array(), range };
        }
        self
    }
    /// A hinge on joint `i`: turns only about `axis` (joint frame), `min ..= max` radians.
    #[must_use]
    pub fn with_hinge(self, i: usize, rest: Quat, axis: Vec3, min: f32, max: f32) -> Self {
        self.with_joint(i, limit::HINGE, rest, axis, [min, max, 0.0, 0.0])
    }
    /// A swing cone on joint `i` (half-angles about `axis` and about the perpendicular
    /// axis) and, when `twist` is given, a twist range.
    #[must_use]
    pub fn with_cone(self, i: usize, rest: Quat, axis: Vec3, half_angles: [f32; 2], twist: Option<[f32; 2]>) -> Self {
        let (kind, [lo, hi]) = match twist {
            Some(t) => (limit::CONE | limit::TWIST, t),
            None => (limit::CONE, [0.0, 0.0]),
        };
        self.with_joint(i, kind, rest, axis, [half_angles[0], half_angles[1], lo, hi])
    }
    /// A twist range on joint `i` alone.
    #[must_use]
    pub fn with_twist(self, i: usize, rest: Quat, min: f32, max: f32) -> Self {
        self.with_joint(i, limit::TWIST, rest, Vec3::ZERO, [0.0, 0.0, min, max])
    }
    /// The rest local rotations read from a pose (model rotations of the chain's joints and
    /// of its parent), for every limited joint: angles are then measured from that pose.
    /// For a chain (each joint's parent the joint before it); see
    /// [`Limits::with_rest_from_tree_pose`] for a tree.
    #[must_use]
    pub fn with_rest_from_pose(mut self, parent_ms: Quat, rotations_ms: &[Quat]) -> Self {
        self.parent_ms = parent_ms.to_array();
        let mut parent = parent_ms;
        for (i, r) in rotations_ms.iter().enumerate().take(N) {
            self.joints[i].rest = (parent.conjugate() * *r).normalize().to_array();
            parent = *r;
        }
        self
    }
    /// [`Limits::with_rest_from_pose`] for a joint tree: joint `i`'s rest is its rotation
    /// relative to joint `parents[i]`'s (joint 0's relative to `parent_ms`).
    #[must_use]
    pub fn with_rest_from_tree_pose(mut self, parent_ms: Quat, rotations_ms: &[Quat], parents: &[usize]) -> Self {
        self.parent_ms = parent_ms.to_array();
        for (i, r) in rotations_ms.iter().enumerate().take(N) {
            let parent = if i == 0 { parent_ms } else { rotations_ms[parents[i]] };
            self.joints[i].rest = (parent.conjugate() * *r).normalize().to_array();
        }
        self
    }
}

/// A FABRIK chain with joint limits, solved by constrained FABRIK (the limits applied in
/// every forward pass; `shaders/kernels/constrained_fabrik.wgsl`). 1 360 bytes. Keep in sync with
/// `LimitedChain` in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ConstrainedFabrikChain {
    /// The chain, as for unconstrained FABRIK ([`FabrikChain`]).
    pub chain: FabrikChain,
    /// Its limits.
    pub limits: ChainLimits,
}
assert_layout!(ConstrainedFabrikChain, 1360, chain == 0, limits == 560);

/// A chain solved by CCD (cyclic coordinate descent; `shaders/kernels/ccd.wgsl`). 1 360 bytes.
/// Keep in sync with `LimitedChain` in `shaders/shared/records.wgsl`.
///
/// `chain.params`: `x` = precision (reached within it; the CPU's converge mode stops
/// there), `y` = the most one joint turns per visit, radians (Unreal's "Rotation Limit
/// Per Joints"; 0 = no cap), `zw` unused. `chain.mode.z` may also hold
/// [`option::ROOT_FIRST`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CcdChain {
    /// The chain: joints, target, precision, iterations, options.
    pub chain: FabrikChain,
    /// Total limits per joint, which hold whatever the iteration count.
    pub limits: ChainLimits,
}
assert_layout!(CcdChain, 1360, chain == 0, limits == 560);

impl ConstrainedFabrikChain {
    /// A constrained chain from an unconstrained one and its limits.
    #[must_use]
    pub fn new(chain: FabrikChain, limits: ChainLimits) -> Self {
        Self { chain, limits }
    }
    /// Turns the joint above each hinge about its bone so the hinge can reach out of its FK
    /// plane ([`option::ALIGN_HINGES`]); for chains with hinges (arms, legs).
    #[must_use]
    pub fn with_align_hinges(self, align: bool) -> Self {
        self.with_option(option::ALIGN_HINGES, align)
    }
    /// The unmirrored twin a mirrored chain is solved as (see [`option::MIRRORED`]): the
    /// chain reflected, the parent's rotation conjugated; the joint-local limits mean what
    /// they mean on the twin.
    pub(crate) fn unmirrored(&self) -> Self {
        Self { chain: self.chain.unmirrored(), limits: self.limits.unmirrored() }
    }
}

impl CcdChain {
    /// A CCD chain from a chain (joints, target, iterations, precision) and its limits; no
    /// per-visit cap, tip first.
    #[must_use]
    pub fn new(chain: FabrikChain, limits: ChainLimits) -> Self {
        Self { chain, limits }
    }
    /// Caps how far one joint turns per visit (radians; 0 = no cap).
    #[must_use]
    pub fn with_max_step(mut self, radians: f32) -> Self {
        self.chain.params[1] = radians;
        self
    }
    /// Sweeps from the root to the tip's parent instead of tip first.
    #[must_use]
    pub fn with_root_first(self, root_first: bool) -> Self {
        self.with_option(option::ROOT_FIRST, root_first)
    }
    /// The most one joint turns per visit (`chain.params.y`, radians; 0 = no cap).
    #[inline]
    #[must_use]
    pub fn max_step(&self) -> f32 {
        self.chain.params[1]
    }
    /// See [`ConstrainedFabrikChain::unmirrored`].
    pub(crate) fn unmirrored(&self) -> Self {
        Self { chain: self.chain.unmirrored(), limits: self.limits.unmirrored() }
    }
}

impl<const N: usize> Limits<N> {
    pub(super) fn unmirrored(&self) -> Self {
        let mut l = *self;
        mirror_rotation(&mut l.parent_ms);
        l
    }
}

/// The kind bits of every joint, checked: `false` for unknown bits, a hinge with anything
/// else, a limit on a joint without a bone (`has_bone(i)` false: a chain's last joint, a
/// tree's leaves), or reserved words set (those past the `N` joints).
pub(crate) fn kinds_valid<const N: usize>(limits: &Limits<N>, has_bone: impl Fn(usize) -> bool) -> bool {
    if limits.kinds[N.div_ceil(8)..].iter().any(|&k| k != 0) {
        return false;
    }
    (0..N).all(|i| {
        let k = limits.kind(i);
        let known = k & !(c::LIMIT_HINGE | c::LIMIT_CONE | c::LIMIT_TWIST) == 0;
        let hinge_alone = k & c::LIMIT_HINGE == 0 || k == c::LIMIT_HINGE;
        known && hinge_alone && (k == 0 || has_bone(i))
    })
}
