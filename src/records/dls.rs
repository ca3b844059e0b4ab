//! [`DlsChain`]: a limited chain solved by damped least squares, with an optional
//! orientation target for its end and per-joint stiffness; [`DlsTree`]: a limited joint
//! tree with up to 4 effectors and a root that may move.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::{
    mirror_rotation, ChainLimits, FabrikChain, MultiFabrikChain, TreeLimits, MAX_EFFECTORS, MAX_FABRIK_JOINTS,
    MAX_TREE_JOINTS,
};
#[cfg(doc)]
use super::{option, MultiFabrikSolved};

/// The most starting poses a [`DlsChain`] may ask for ([`DlsGoal::starts`]).
pub const MAX_DLS_STARTS: u32 = crate::constants::MAX_DLS_STARTS;
/// Largest orientation weight of a damped-least-squares goal, length per radian (above it
/// the record is [`crate::ChainError::InvalidParameter`]): the squared, weighted residual
/// stays far from f32 overflow.
pub const MAX_ORIENTATION_WEIGHT: f32 = crate::constants::MAX_ORIENTATION_WEIGHT;

/// What a [`DlsChain`] asks for beyond a position: the end's orientation, how many starting
/// poses to try, and how stiff each joint is. 112 bytes. Keep in sync with `DlsGoal` in
/// `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DlsGoal {
    /// The model rotation the chain's last joint should end with (it follows its parent, as
    /// in every chain solver); a unit quaternion when `settings.x > 0`.
    pub orientation_ms: [f32; 4],
    /// `x` = the orientation's weight, in length per radian: an orientation error of one
    /// radian counts as far as the end being `x` away from its target (0 = position only;
    /// the bone's length or the hand's size is a good value; at most
    /// [`MAX_ORIENTATION_WEIGHT`]). `yzw` = 0.
    pub settings: [f32; 4],
    /// `x` = how many starting poses to try, 1 to [`MAX_DLS_STARTS`]: the FK pose moved
    /// into the limits first, then poses spread over the limits, each run for the chain's
    /// iterations until one ends within the precision; the closest end is kept. `yzw` = 0.
    pub starts: [u32; 4],
    /// Per joint, in `[0, 1]`: how much the joint resists turning away from where the
    /// solve has it (Unreal's per-bone rotation stiffness): its steps are scaled by
    /// `(1 − s)²`; 1 holds it at its FK pose (moved into its limit).
    pub stiffness: [f32; MAX_FABRIK_JOINTS],
}

impl Default for DlsGoal {
    fn default() -> Self {
        Self {
            orientation_ms: Quat::IDENTITY.to_array(),
            settings: [0.0; 4],
            starts: [MAX_DLS_STARTS, 0, 0, 0],
            stiffness: [0.0; MAX_FABRIK_JOINTS],
        }
    }
}

/// A chain with joint limits solved by damped least squares (Levenberg–Marquardt;
/// `shaders/kernels/dls.wgsl`, [`crate::cpu::dls()`]). 1 472 bytes. Keep in sync with
/// `DlsChain` in `shaders/shared/records.wgsl`.
///
/// `chain.params.x` = precision: a start ends when its error (the end's distance to the
/// target, with the orientation's weighted angle added in quadrature) is within it, and the
/// solved record counts as reached. `chain.mode.y` = iterations per start.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DlsChain {
    /// The chain: joints, target position and weight, precision, iterations, options.
    pub chain: FabrikChain,
    /// Total limits per joint, which hold whatever the iteration count.
    pub limits: ChainLimits,
    /// Orientation target, starts and stiffness.
    pub goal: DlsGoal,
}
assert_layout!(DlsChain, 1472, chain == 0, limits == 560, goal == 1360);
assert_layout!(DlsGoal, 112, orientation_ms == 0, settings == 16, starts == 32, stiffness == 48);

impl DlsChain {
    /// A chain from a chain (joints, target, iterations, precision) and its limits: position
    /// only, [`MAX_DLS_STARTS`] starts, no joint stiff.
    #[must_use]
    pub fn new(chain: FabrikChain, limits: ChainLimits) -> Self {
        Self { chain, limits, goal: DlsGoal::default() }
    }
    /// Asks the last joint to end with the model rotation `orientation`, an error of one
    /// radian weighing as much as `weight` of distance (0 = position only).
    #[must_use]
    pub fn with_orientation_target(mut self, orientation: Quat, weight: f32) -> Self {
        self.goal.orientation_ms = orientation.to_array();
        self.goal.settings[0] = weight;
        self
    }
    /// How many starting poses to try (1 to [`MAX_DLS_STARTS`]).
    #[must_use]
    pub fn with_starts(mut self, starts: u32) -> Self {
        self.goal.starts[0] = starts;
        self
    }
    /// Joint `i`'s stiffness in `[0, 1]` (see [`DlsGoal::stiffness`]).
    #[must_use]
    pub fn with_stiffness(mut self, i: usize, stiffness: f32) -> Self {
        self.goal.stiffness[i] = stiffness;
        self
    }
    /// The orientation's weight (`goal.settings.x`; 0 = position only).
    #[inline]
    #[must_use]
    pub fn orientation_weight(&self) -> f32 {
        self.goal.settings[0]
    }
    /// See [`super::ConstrainedFabrikChain::unmirrored`]; the orientation target is
    /// reflected with the chain.
    pub(crate) fn unmirrored(&self) -> Self {
        let mut goal = self.goal;
        mirror_rotation(&mut goal.orientation_ms);
        Self { chain: self.chain.unmirrored(), limits: self.limits.unmirrored(), goal }
    }
}

/// What a [`DlsTree`] asks for beyond its effectors' positions: each effector's
/// orientation, how far the root may move, how many starting poses to try, and how stiff
/// each joint is. 240 bytes. Keep in sync with `DlsTreeGoal` in
/// `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DlsTreeGoal {
    /// Per effector: the model rotation its joint should end with (a unit quaternion where
    /// its weight in `orientation_weights` is above 0).
    pub orientations_ms: [[f32; 4]; MAX_EFFECTORS],
    /// Per effector: the orientation's weight, length per radian (0 = position only; 0 for
    /// the effectors past the record's count; at most [`MAX_ORIENTATION_WEIGHT`]).
    pub orientation_weights: [f32; 4],
    /// `xyz`: how far the root may move from its FK position along each model axis (a box
    /// of these half-extents; 0 = it stays), `w`: the root translation's stiffness in
    /// `[0, 1]` (as a joint's: its steps scale by `(1 − w)²`).
    pub root_translation: [f32; 4],
    /// `x` = how many starting poses to try, 1 to [`MAX_DLS_STARTS`] (see
    /// [`DlsGoal::starts`]). `yzw` = 0.
    pub starts: [u32; 4],
    /// Per joint, in `[0, 1]`: see [`DlsGoal::stiffness`].
    pub stiffness: [f32; MAX_TREE_JOINTS],
}

impl Default for DlsTreeGoal {
    fn default() -> Self {
        Self {
            orientations_ms: [Quat::IDENTITY.to_array(); MAX_EFFECTORS],
            orientation_weights: [0.0; 4],
            root_translation: [0.0; 4],
            starts: [MAX_DLS_STARTS, 0, 0, 0],
            stiffness: [0.0; MAX_TREE_JOINTS],
        }
    }
}

/// A joint tree with joint limits solved by damped least squares: full-body IK (a spine
/// with arms and a head, a quadruped with four legs) with up to 4 effectors, each with a
/// position and an optional orientation target, and a root that may move within a box
/// ([`crate::cpu::dls_tree()`]). 2 976 bytes.
///
/// The tree is a [`MultiFabrikChain`] (joints, parents, effectors with their targets and
/// weights, precision, iterations, record weight, [`option::KEEP_ROOT_ROTATION`]); each
/// effector's weight (`targets_ms[e].w`) weighs its residual in the least squares. A joint
/// with children turns; its limit's twist axis (the bone of [`TreeLimits`]) points at its
/// first child (the lowest-numbered one). A joint without children carries no limit and
/// follows its parent. `tree.params.x` = precision: a start ends when every effector is
/// within it (its distance to its target, with its orientation's weighted angle added in
/// quadrature), and the solved record then counts as reached. `tree.mode.y` = iterations
/// per start. The solved record is a [`MultiFabrikSolved`]; with a root translation the
/// root's new position is `positions_ms[0]` (the corrections are rotations only).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DlsTree {
    /// The tree: joints, parents, effectors and targets, precision, iterations, weight.
    pub tree: MultiFabrikChain,
    /// Total limits per joint, which hold whatever the iteration count.
    pub limits: TreeLimits,
    /// Orientation targets, the root's translation, starts and stiffness.
    pub goal: DlsTreeGoal,
}
assert_layout!(DlsTree, 2976, tree == 0, limits == 1168, goal == 2736);
assert_layout!(
    DlsTreeGoal,
    240,
    orientations_ms == 0,
    orientation_weights == 64,
    root_translation == 80,
    starts == 96,
    stiffness == 112
);

impl DlsTree {
    /// A tree from a multi-effector record and its limits: positions only, the root fixed,
    /// [`MAX_DLS_STARTS`] starts, no joint stiff.
    #[must_use]
    pub fn new(tree: MultiFabrikChain, limits: TreeLimits) -> Self {
        Self { tree, limits, goal: DlsTreeGoal::default() }
    }
    /// Asks effector `e` (in the order the effectors were added) to end with the model
    /// rotation `orientation`, an error of one radian weighing as much as `weight` of
    /// distance (0 = position only). Ignored for `e ≥ MAX_EFFECTORS`.
    #[must_use]
    pub fn with_orientation_target(mut self, e: usize, orientation: Quat, weight: f32) -> Self {
        if e < MAX_EFFECTORS {
            self.goal.orientations_ms[e] = orientation.to_array();
            self.goal.orientation_weights[e] = weight;
        }
        self
    }
    /// Lets the root move from its FK position by up to `half_extents` along each model
    /// axis (a pelvis that may drop, shift or rise), with `stiffness` in `[0, 1]`.
    #[must_use]
    pub fn with_root_translation(mut self, half_extents: Vec3, stiffness: f32) -> Self {
        self.goal.root_translation = half_extents.extend(stiffness).to_array();
        self
    }
    /// How many starting poses to try (1 to [`MAX_DLS_STARTS`]).
    #[must_use]
    pub fn with_starts(mut self, starts: u32) -> Self {
        self.goal.starts[0] = starts;
        self
    }
    /// Joint `i`'s stiffness in `[0, 1]` (see [`DlsGoal::stiffness`]). Ignored for
    /// `i ≥ MAX_TREE_JOINTS`.
    #[must_use]
    pub fn with_stiffness(mut self, i: usize, stiffness: f32) -> Self {
        if i < MAX_TREE_JOINTS {
            self.goal.stiffness[i] = stiffness;
        }
        self
    }
}
