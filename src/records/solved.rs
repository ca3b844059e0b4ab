//! The solved records every chain solver writes.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

use super::{v3, MAX_FABRIK_JOINTS};

/// The solved pose of an `N`-joint chain.
///
/// Keep in sync with `TwoBoneSolved` (`N` = 3), `ThreeBoneSolved` (4) and `FabrikSolved`
/// (16) in `shaders/shared/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolvedChain<const N: usize> {
    /// Corrected model-space joint positions (`.w` = 1).
    pub positions_ms: [[f32; 4]; N],
    /// Corrected model-space joint rotations.
    pub rotations_ms: [[f32; 4]; N],
    /// Local-space corrections, `w ≥ 0`: multiply each onto the joint's local rotation
    /// (`local = local * correction`, as ozz-animation's IK jobs do) to get the same pose.
    pub corrections: [[f32; 4]; N],
    /// `x` = reached (0/1), `y` = [`crate::ChainError`] code (0 = solved), `z` = [`info`](crate::records::info)
    /// bits, `w` = joints written: the chain's joint count (two-bone 3, three-bone 4,
    /// FABRIK its `mode.x`, at most 16). Every slot past it is zero.
    pub status: [u32; 4],
}
// SAFETY: `SolvedChain<N>` is `repr(C)` and made only of `[f32; 4]`/`[u32; 4]` arrays, so it
// has no padding and every bit pattern is valid, for every `N`.
unsafe impl<const N: usize> Zeroable for SolvedChain<N> {}
// SAFETY: see above.
unsafe impl<const N: usize> Pod for SolvedChain<N> {}

/// Solved two-bone limb: start, mid, end.
pub type TwoBoneSolved = SolvedChain<3>;
/// Solved pseudo three-bone limb: j0..j3.
pub type ThreeBoneSolved = SolvedChain<4>;
/// Solved FABRIK chain (entries past the joint count are zero).
pub type FabrikSolved = SolvedChain<MAX_FABRIK_JOINTS>;
assert_layout!(TwoBoneSolved, 160, positions_ms == 0, rotations_ms == 48, corrections == 96, status == 144);
assert_layout!(ThreeBoneSolved, 208, positions_ms == 0, rotations_ms == 64, corrections == 128, status == 192);
assert_layout!(FabrikSolved, 784, positions_ms == 0, rotations_ms == 256, corrections == 512, status == 768);

/// The accessors of the corrections and the status words, shared by [`SolvedChain`] and
/// [`Corrections`].
macro_rules! corrections_and_status {
    () => {
        /// Local-space correction of joint `i` (`local = local * correction`).
        #[must_use]
        pub fn correction(&self, i: usize) -> Quat {
            Quat::from_array(self.corrections[i])
        }
        /// Whether the end effector reached the target (see each solver's contract).
        #[must_use]
        pub fn reached(&self) -> bool {
            self.status[0] != 0
        }
        /// The reason this chain fell back to its FK pose, if it did.
        #[must_use]
        pub fn error(&self) -> Option<crate::error::ChainError> {
            crate::error::ChainError::from_code(self.status[1])
        }
        /// [`info`](crate::records::info) bits: what the solver had to do (softened, limited,
        /// stretched, ...).
        #[must_use]
        pub fn info(&self) -> u32 {
            self.status[2]
        }
    };
}

impl<const N: usize> Default for SolvedChain<N> {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl<const N: usize> SolvedChain<N> {
    /// Corrected model-space position of joint `i`.
    #[must_use]
    pub fn position(&self, i: usize) -> Vec3 {
        v3(self.positions_ms[i])
    }
    /// Corrected model-space rotation of joint `i`.
    #[must_use]
    pub fn rotation(&self, i: usize) -> Quat {
        Quat::from_array(self.rotations_ms[i])
    }
    corrections_and_status!();
    /// How many joints this record holds (`status.w`): joints `0..joints_written()` carry
    /// the pose, every slot after them is zero. The chain's joint count (for a FABRIK chain
    /// whose count is out of range, the FK joints there are, at most 16); 0 for a record no
    /// solver wrote.
    #[must_use]
    pub fn joints_written(&self) -> usize {
        self.status[3] as usize
    }
}

/// The local corrections of an `N`-joint chain and its status, alone: the output of a job
/// that asks for nothing else ([`crate::cpu::CorrectionsJob`]), for callers that
/// apply IK as local rotation deltas onto their own pose (`local = local * correction`, as
/// ozz-animation's IK jobs do) and need neither model-space positions nor rotations. The
/// same bits as the `corrections` and `status` of the full [`SolvedChain`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corrections<const N: usize> {
    /// Local-space corrections, `w ≥ 0` (see [`SolvedChain::corrections`]).
    pub corrections: [[f32; 4]; N],
    /// Reached, error code, info bits, joints written (see [`SolvedChain::status`]).
    pub status: [u32; 4],
}
// SAFETY: `Corrections<N>` is `repr(C)` and made only of `[f32; 4]`/`[u32; 4]` arrays: no
// padding, every bit pattern valid, for every `N`.
unsafe impl<const N: usize> Zeroable for Corrections<N> {}
// SAFETY: see above.
unsafe impl<const N: usize> Pod for Corrections<N> {}

/// A two-bone limb's local corrections and status: 64 bytes, against 160 for
/// [`TwoBoneSolved`].
pub type TwoBoneCorrections = Corrections<3>;
assert_layout!(TwoBoneCorrections, 64, corrections == 0, status == 48);

/// A FABRIK chain's local corrections and status: 272 bytes, against 784 for
/// [`FabrikSolved`]; slots past the chain's joint count are zero.
pub type FabrikCorrections = Corrections<MAX_FABRIK_JOINTS>;
assert_layout!(FabrikCorrections, 272, corrections == 0, status == 256);

impl<const N: usize> Default for Corrections<N> {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl<const N: usize> Corrections<N> {
    /// The corrections and status of a full solved record.
    #[must_use]
    pub fn of(solved: &SolvedChain<N>) -> Self {
        Self { corrections: solved.corrections, status: solved.status }
    }
    corrections_and_status!();
}
