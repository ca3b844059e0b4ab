//! The multi-effector FABRIK record: a small joint tree (up to 32 joints) with up to 4 end
//! effectors, e.g. a spine with two arms and a head, or a quadruped's spine with four legs.
//! Solved by `shaders/kernels/multi_fabrik.wgsl` and its CPU twin `cpu::multi_fabrik`.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::{option, p4, v3, Options, SolvedChain};
use crate::constants as c;

/// Most joints in a multi-effector FABRIK record.
pub const MAX_TREE_JOINTS: usize = c::MAX_TREE_JOINTS as usize;
/// Most end effectors in a multi-effector FABRIK record.
pub const MAX_EFFECTORS: usize = c::MAX_EFFECTORS as usize;

/// A joint tree solved by multi-effector FABRIK. 1 168 bytes. Keep in sync with
/// `MultiFabrikChain` in `shaders/shared/records.wgsl`.
///
/// Joint 0 is the root (fixed at its FK position); every other joint names a parent with
/// a smaller index, so parents come before their children. Each effector is a joint (not
/// the root) with a target and a weight; joints on no path from the root to an effector
/// are carried rigidly by their parents.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MultiFabrikChain {
    /// FK model-space joint positions; entries past the joint count are ignored.
    pub joints_ms: [[f32; 4]; MAX_TREE_JOINTS],
    /// FK model-space joint rotations.
    pub rotations_ms: [[f32; 4]; MAX_TREE_JOINTS],
    /// Each effector's target (`xyz`) and weight (`w` in `[1e-6, 1e6]`: its pull where
    /// sub-chains meet, relative to the other effectors').
    pub targets_ms: [[f32; 4]; MAX_EFFECTORS],
    /// Each joint's parent, 8 bits per joint: joint `i` in word `i / 16`, lane `(i / 4) % 4`,
    /// bits `8 (i % 4)..`. Joint 0's entry is ignored.
    pub parents: [[u32; 4]; 2],
    /// The joint each effector drives (`mode.w` of them are used).
    pub effectors: [u32; 4],
    /// `x` = precision (every effector within it of its target = reached; the CPU's
    /// converge mode stops there), `y` = weight (0..1, nlerp of every correction from
    /// identity), `zw` = 0.
    pub params: [f32; 4],
    /// `x` = joint count (2..=32), `y` = iterations (≤ 4096), `z` = option bits
    /// ([`option::KEEP_ROOT_ROTATION`]), `w` = effector count (1..=4).
    pub mode: [u32; 4],
}
assert_layout!(
    MultiFabrikChain,
    1168,
    joints_ms == 0,
    rotations_ms == 512,
    targets_ms == 1024,
    parents == 1088,
    effectors == 1120,
    params == 1136,
    mode == 1152
);

/// The solved tree: joints `0..n` in record order.
pub type MultiFabrikSolved = SolvedChain<MAX_TREE_JOINTS>;
assert_layout!(MultiFabrikSolved, 1552, positions_ms == 0, rotations_ms == 512, corrections == 1024, status == 1536);

impl MultiFabrikChain {
    /// [`option::KEEP_ROOT_ROTATION`], by its former name.
    #[deprecated(since = "0.1.0", note = "use `option::KEEP_ROOT_ROTATION`")]
    pub const KEEP_ROOT_ROTATION: u32 = c::OPT_KEEP_ROOT_ROTATION;

    /// A tree from its FK joints (positions, rotations, parents: `parents[0]` is ignored)
    /// with no effectors, `iterations` iterations, precision 1e-4, weight 1. Joints past
    /// [`MAX_TREE_JOINTS`] are dropped (the count is kept, so the record reports
    /// [`crate::ChainError::JointCount`]).
    #[must_use]
    pub fn new(joints_ms: &[Vec3], rotations_ms: &[Quat], parents: &[usize], iterations: u32) -> Self {
        let mut r = Self::zeroed();
        for (i, ((p, q), &parent)) in joints_ms.iter().zip(rotations_ms).zip(parents).enumerate().take(MAX_TREE_JOINTS)
        {
            r.joints_ms[i] = p4(*p);
            r.rotations_ms[i] = q.to_array();
            r.set_parent(i, parent);
        }
        r.params = [1e-4, 1.0, 0.0, 0.0];
        r.mode = [joints_ms.len() as u32, iterations, 0, 0];
        r
    }

    /// Adds an effector on joint `joint` pulled toward `target_ms` with `weight` (at most
    /// [`MAX_EFFECTORS`]; more are ignored).
    #[must_use]
    pub fn with_effector(mut self, joint: usize, target_ms: Vec3, weight: f32) -> Self {
        let e = self.mode[3] as usize;
        if e < MAX_EFFECTORS {
            self.effectors[e] = joint as u32;
            self.targets_ms[e] = target_ms.extend(weight).to_array();
            self.mode[3] += 1;
        }
        self
    }

    /// The record's weight (nlerp of every correction from identity).
    #[must_use]
    pub fn with_weight(mut self, weight: f32) -> Self {
        self.params[1] = weight;
        self
    }

    /// Keeps the root's FK rotation ([`option::KEEP_ROOT_ROTATION`]: a pelvis or hips the
    /// animation drives; only the joints below it turn) or lets the solver turn it (the
    /// default). A quadruped whose hind legs hang from the root then cannot swing its hips
    /// away from their targets to follow the spine.
    #[must_use]
    pub fn with_keep_root_rotation(self, keep: bool) -> Self {
        self.with_option(option::KEEP_ROOT_ROTATION, keep)
    }

    /// The precision `reached` is judged by.
    #[must_use]
    pub fn with_precision(mut self, precision: f32) -> Self {
        self.params[0] = precision;
        self
    }

    /// Joint `i`'s parent index (meaningless for joint 0).
    #[inline]
    #[must_use]
    pub fn parent(&self, i: usize) -> usize {
        ((self.parents[i / 16][(i / 4) % 4] >> (8 * (i % 4))) & 0xff) as usize
    }

    /// Sets joint `i`'s parent (`i < MAX_TREE_JOINTS`, `parent < 256`).
    pub fn set_parent(&mut self, i: usize, parent: usize) {
        let w = &mut self.parents[i / 16][(i / 4) % 4];
        let shift = 8 * (i % 4);
        *w = (*w & !(0xff << shift)) | (((parent as u32) & 0xff) << shift);
    }

    /// Joints in the tree (`mode.x`).
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

    /// The record's weight (`params.y`).
    #[inline]
    #[must_use]
    pub fn weight(&self) -> f32 {
        self.params[1]
    }

    /// The reserved parameters (`params.zw`; 0 in a valid record).
    #[inline]
    #[must_use]
    pub(crate) fn reserved_params(&self) -> [f32; 2] {
        [self.params[2], self.params[3]]
    }

    /// Effectors (`mode.w`).
    #[inline]
    #[must_use]
    pub fn effector_count(&self) -> usize {
        self.mode[3] as usize
    }

    /// Effector `e`'s target.
    #[inline]
    #[must_use]
    pub fn target(&self, e: usize) -> Vec3 {
        v3(self.targets_ms[e])
    }
}
