//! The CPU reference path (glam). Every GPU kernel in `shaders/kernels/` has its twin here with the
//! same name (`shaders/kernels/<name>.wgsl` ↔ `<name>.rs`), plus the stages they share (`math`,
//! `chain`, `limb`, `limits`, `aim`). The batch jobs below run them over slices, on one
//! thread or on all (rayon), with no per-chain allocation. On x86-64 CPUs with AVX-512 or
//! AVX2 the jobs that have one run an SoA batch path (`wide`, 16 or 32 chains per group, one
//! SIMD lane per chain; see [`CpuPath`]), bit for bit the scalar solvers here (held so by
//! `tests/wide.rs`), which stay the reference.

pub mod aim;
pub mod ccd;
pub(crate) mod chain;
pub mod clip_sample;
pub mod constrained_fabrik;
pub mod dls;
pub mod dls_tree;
pub mod fabrik;
pub(crate) mod foot_ground;
pub mod foot_ik;
mod foot_ik_job;
pub(crate) mod foot_placement;
pub(crate) mod limb;
pub(crate) mod limits;
pub mod look_at;
pub(crate) mod math;
pub mod multi_fabrik;
pub mod palette;
pub mod three_bone;
pub mod two_bone;
#[cfg(target_arch = "x86_64")]
mod wide;

use rayon::prelude::*;

pub use crate::cpu_path::CpuPath;
use crate::error::{ChainError, IkError};
use crate::records::{
    CcdChain, ChainRecord, ConstrainedFabrikChain, DlsChain, DlsTree, FabrikChain, FabrikCorrections, FabrikSolved,
    LookAtChain, LookAtSolved, MultiFabrikChain, MultiFabrikSolved, ThreeBoneChain, ThreeBoneSolved, TwoBoneChain,
    TwoBoneCorrections, TwoBoneSolved,
};
pub use aim::{AimJob, AimMethod, AimResult};
pub use ccd::{ccd, ccd_with_mode, validate_ccd};
pub use constrained_fabrik::{constrained_fabrik, constrained_fabrik_with_mode, validate_constrained_fabrik};
pub use dls::{dls, dls_with_mode, validate_dls};
pub use dls_tree::{dls_tree, validate_dls_tree};
pub use fabrik::{fabrik, fabrik_corrections, fabrik_with_mode, validate_fabrik, FabrikMode, MAX_FABRIK_ITERATIONS};
pub use foot_ik::FootIkJob;
pub use look_at::{look_at, validate_look_at};
pub use multi_fabrik::{multi_fabrik, multi_fabrik_with_mode, validate_multi_fabrik};
pub use three_bone::{three_bone, validate_three_bone};
pub use two_bone::{two_bone, two_bone_corrections, validate_two_bone};

/// A chain record that a CPU solver knows how to solve (its solved record:
/// [`ChainRecord::Solved`]).
pub trait Chain: ChainRecord {
    /// Per-batch options (FABRIK's [`FabrikMode`]; `()` for the others).
    type Options: Copy + Default + Send + Sync;
    /// Solves one chain; never fails (invalid chains get a flagged FK fallback).
    fn solve(&self, options: Self::Options, out: &mut Self::Solved);
    /// Solves a slice of chains into `out` (same length) on `path` (resolved: available and
    /// not [`CpuPath::Auto`]). The default solves them one by one; on x86-64 the kinds with
    /// an SoA batch path override it (the same bits as one by one).
    fn solve_batch(chains: &[Self], options: Self::Options, path: CpuPath, out: &mut [Self::Solved]) {
        let _ = path;
        for (c, o) in chains.iter().zip(out) {
            c.solve(options, o);
        }
    }
    /// Checks one chain exactly as `solve` would.
    fn validate(&self) -> Result<(), ChainError>;
    /// Reads `(reached, error code)` back from a solved record.
    fn outcome(solved: &Self::Solved) -> (bool, u32);
}

impl Chain for TwoBoneChain {
    type Options = ();
    fn solve(&self, (): (), out: &mut TwoBoneSolved) {
        two_bone(self, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], (): (), path: CpuPath, out: &mut [TwoBoneSolved]) {
        wide::two_bone_batch(chains, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_two_bone(self)
    }
    fn outcome(s: &TwoBoneSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for ThreeBoneChain {
    type Options = ();
    fn solve(&self, (): (), out: &mut ThreeBoneSolved) {
        three_bone(self, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], (): (), path: CpuPath, out: &mut [ThreeBoneSolved]) {
        wide::three_bone_batch(chains, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_three_bone(self)
    }
    fn outcome(s: &ThreeBoneSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for FabrikChain {
    type Options = FabrikMode;
    fn solve(&self, mode: FabrikMode, out: &mut FabrikSolved) {
        fabrik_with_mode(self, mode, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], mode: FabrikMode, path: CpuPath, out: &mut [FabrikSolved]) {
        wide::fabrik_batch(chains, mode, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_fabrik(self)
    }
    fn outcome(s: &FabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for ConstrainedFabrikChain {
    type Options = FabrikMode;
    fn solve(&self, mode: FabrikMode, out: &mut FabrikSolved) {
        constrained_fabrik_with_mode(self, mode, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], mode: FabrikMode, path: CpuPath, out: &mut [FabrikSolved]) {
        wide::constrained_fabrik_batch(chains, mode, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_constrained_fabrik(self)
    }
    fn outcome(s: &FabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for CcdChain {
    type Options = FabrikMode;
    fn solve(&self, mode: FabrikMode, out: &mut FabrikSolved) {
        ccd_with_mode(self, mode, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], mode: FabrikMode, path: CpuPath, out: &mut [FabrikSolved]) {
        wide::ccd_batch(chains, mode, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_ccd(self)
    }
    fn outcome(s: &FabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for DlsChain {
    type Options = FabrikMode;
    fn solve(&self, mode: FabrikMode, out: &mut FabrikSolved) {
        dls_with_mode(self, mode, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_dls(self)
    }
    fn outcome(s: &FabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for DlsTree {
    type Options = FabrikMode;
    fn solve(&self, _mode: FabrikMode, out: &mut MultiFabrikSolved) {
        dls_tree(self, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_dls_tree(self)
    }
    fn outcome(s: &MultiFabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for MultiFabrikChain {
    type Options = FabrikMode;
    fn solve(&self, mode: FabrikMode, out: &mut MultiFabrikSolved) {
        multi_fabrik_with_mode(self, mode, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], mode: FabrikMode, path: CpuPath, out: &mut [MultiFabrikSolved]) {
        wide::multi_fabrik_batch(chains, mode, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_multi_fabrik(self)
    }
    fn outcome(s: &MultiFabrikSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

impl Chain for LookAtChain {
    type Options = ();
    fn solve(&self, (): (), out: &mut LookAtSolved) {
        look_at(self, out);
    }
    #[cfg(target_arch = "x86_64")]
    fn solve_batch(chains: &[Self], (): (), path: CpuPath, out: &mut [LookAtSolved]) {
        wide::look_at_batch(chains, path, out);
    }
    fn validate(&self) -> Result<(), ChainError> {
        validate_look_at(self)
    }
    fn outcome(s: &LookAtSolved) -> (bool, u32) {
        (s.reached(), s.status[1])
    }
}

/// What each path can do on this CPU (the enum itself sits below every layer, so errors can
/// name it).
impl CpuPath {
    /// Whether this CPU can run the path (`Auto` and `Scalar`: always).
    #[must_use]
    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return wide::available(self);
        #[cfg(not(target_arch = "x86_64"))]
        return matches!(self, CpuPath::Auto | CpuPath::Scalar);
    }

    /// The fastest path this CPU can run.
    #[must_use]
    pub fn best() -> CpuPath {
        Self::ALL.into_iter().find(|p| p.is_available()).unwrap_or(CpuPath::Scalar)
    }

    /// `Auto` as [`CpuPath::best`], any other path as itself if this CPU can run it.
    ///
    /// # Errors
    /// [`IkError::CpuPathUnavailable`] when it cannot.
    pub fn resolve(self) -> Result<CpuPath, IkError> {
        match self {
            CpuPath::Auto => Ok(Self::best()),
            p if p.is_available() => Ok(p),
            p => Err(IkError::CpuPathUnavailable(p)),
        }
    }
}

impl std::str::FromStr for CpuPath {
    type Err = IkError;
    fn from_str(s: &str) -> Result<Self, IkError> {
        [CpuPath::Auto, CpuPath::Scalar, CpuPath::Avx2, CpuPath::Avx512]
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| IkError::Parse(format!("unknown CPU path {s:?} (auto, scalar, avx2, avx512)")))
    }
}

/// What a batch run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Chains in the batch.
    pub chains: usize,
    /// Chains whose target was reached.
    pub reached: usize,
    /// Chains that fell back to their FK pose because they were invalid.
    pub fallbacks: usize,
    /// The first invalid chain and why.
    pub first_fallback: Option<(usize, ChainError)>,
}

impl BatchSummary {
    /// Tallies solved records.
    #[must_use]
    pub fn of<C: Chain>(solved: &[C::Solved]) -> Self {
        Self::from_outcomes(solved.iter().map(C::outcome))
    }

    /// Tallies `(reached, error code)` per chain, in batch order.
    fn from_outcomes(outcomes: impl ExactSizeIterator<Item = (bool, u32)>) -> Self {
        let mut s = Self { chains: outcomes.len(), ..Self::default() };
        for (i, (reached, code)) in outcomes.enumerate() {
            s.reached += usize::from(reached);
            if let Some(e) = ChainError::from_code(code) {
                s.fallbacks += 1;
                s.first_fallback.get_or_insert((i, e));
            }
        }
        s
    }
}

/// A batch of chains of one kind and the slots for their results: ozz-animation's job
/// contract over slices. `validate()` is strict (any invalid chain is an error);
/// `run()`/`run_par()` only reject a malformed batch and give each invalid chain a flagged
/// FK fallback so one bad chain never stops or corrupts its neighbours.
pub struct BatchJob<'a, C: Chain> {
    /// Input chains.
    pub chains: &'a [C],
    /// One output slot per chain.
    pub solved: &'a mut [C::Solved],
    /// Kind-specific options.
    pub options: C::Options,
    /// The instruction set to run on (default [`CpuPath::Auto`]: the fastest available).
    pub path: CpuPath,
}

/// Batch of two-bone chains.
pub type TwoBoneJob<'a> = BatchJob<'a, TwoBoneChain>;
/// Batch of pseudo three-bone chains.
pub type ThreeBoneJob<'a> = BatchJob<'a, ThreeBoneChain>;
/// Batch of FABRIK chains.
pub type FabrikJob<'a> = BatchJob<'a, FabrikChain>;
/// Batch constrained FABRIK (joint limits).
pub type ConstrainedFabrikJob<'a> = BatchJob<'a, ConstrainedFabrikChain>;
/// Batch CCD.
pub type CcdJob<'a> = BatchJob<'a, CcdChain>;
/// Batch damped least squares (joint limits, orientation targets).
pub type DlsJob<'a> = BatchJob<'a, DlsChain>;
/// Batch damped least squares on joint trees (full-body IK: limits, up to 4 effectors with
/// orientations, a root that may move); both [`FabrikMode`]s solve alike.
pub type DlsTreeJob<'a> = BatchJob<'a, DlsTree>;
/// Batch multi-effector FABRIK (`FabrikMode::Fixed` on AVX-512/AVX2 CPUs in SIMD lanes, bit
/// for bit the scalar solver; a batch that mixes tree shapes is grouped by shape first).
pub type MultiFabrikJob<'a> = BatchJob<'a, MultiFabrikChain>;
/// Batch crowd look-at (on AVX-512/AVX2 CPUs in SIMD lanes, bit for bit the scalar
/// [`look_at()`]; a batch that mixes record shapes is grouped by shape first).
pub type LookAtJob<'a> = BatchJob<'a, LookAtChain>;

/// Chains per rayon task: big enough to amortise scheduling, small enough to balance.
const PAR_CHUNK: usize = 1024;

/// A kind of chain that can be solved for its local corrections alone
/// ([`CorrectionsJob`]): two-bone limbs and FABRIK chains.
pub trait CorrectionsChain: Chain {
    /// The corrections-only output record ([`crate::records::Corrections`]).
    type Corrections: bytemuck::Pod + Send;
    /// Solves a slice of chains into `out` (same length) on `path` (resolved): the same bits
    /// as the full solve's corrections and status, chain by chain.
    fn solve_corrections(chains: &[Self], options: Self::Options, path: CpuPath, out: &mut [Self::Corrections]);
    /// Reads `(reached, error code)` back from a corrections record.
    fn corrections_outcome(out: &Self::Corrections) -> (bool, u32);
}

impl CorrectionsChain for TwoBoneChain {
    type Corrections = TwoBoneCorrections;
    fn solve_corrections(chains: &[Self], (): (), path: CpuPath, out: &mut [TwoBoneCorrections]) {
        #[cfg(target_arch = "x86_64")]
        wide::two_bone_corrections_batch(chains, path, out);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = path;
            for (c, o) in chains.iter().zip(out) {
                two_bone_corrections(c, o);
            }
        }
    }
    fn corrections_outcome(o: &TwoBoneCorrections) -> (bool, u32) {
        (o.reached(), o.status[1])
    }
}

impl CorrectionsChain for FabrikChain {
    type Corrections = FabrikCorrections;
    fn solve_corrections(chains: &[Self], mode: FabrikMode, path: CpuPath, out: &mut [FabrikCorrections]) {
        #[cfg(target_arch = "x86_64")]
        wide::fabrik_corrections_batch(chains, mode, path, out);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = path;
            for (c, o) in chains.iter().zip(out) {
                fabrik_corrections(c, mode, o);
            }
        }
    }
    fn corrections_outcome(o: &FabrikCorrections) -> (bool, u32) {
        (o.reached(), o.status[1])
    }
}

/// Chains solved for their local corrections alone: writes a
/// [`crate::records::Corrections`] per chain (the corrections and the status: 64 bytes for
/// a two-bone limb instead of [`TwoBoneSolved`]'s 160, 272 for a FABRIK chain instead of
/// [`FabrikSolved`]'s 784), and on the SIMD paths computes nothing else. For callers that
/// put IK onto their own local pose (`local = local * correction`); the same bits as the
/// full job's `corrections` and `status` on every [`CpuPath`].
pub struct CorrectionsJob<'a, C: CorrectionsChain> {
    /// Input chains.
    pub chains: &'a [C],
    /// One output slot per chain.
    pub out: &'a mut [C::Corrections],
    /// Per-batch options (FABRIK's [`FabrikMode`]).
    pub options: C::Options,
    /// The instruction set to run on (default [`CpuPath::Auto`]).
    pub path: CpuPath,
}

/// Two-bone limbs solved for their local corrections alone ([`CorrectionsJob`]):
/// [`TwoBoneCorrections`], 64 bytes per chain.
pub type TwoBoneCorrectionsJob<'a> = CorrectionsJob<'a, TwoBoneChain>;
/// FABRIK chains solved for their local corrections alone ([`CorrectionsJob`]):
/// [`FabrikCorrections`], 272 bytes per chain.
pub type FabrikCorrectionsJob<'a> = CorrectionsJob<'a, FabrikChain>;

impl<'a, C: CorrectionsChain> CorrectionsJob<'a, C> {
    /// A job over `chains` writing to `out`, with default options.
    pub fn new(chains: &'a [C], out: &'a mut [C::Corrections]) -> Self {
        Self { chains, out, options: C::Options::default(), path: CpuPath::Auto }
    }

    /// The same job with `options`.
    #[must_use]
    pub fn with_options(mut self, options: C::Options) -> Self {
        self.options = options;
        self
    }

    /// The same job on `path`.
    #[must_use]
    pub fn with_path(mut self, path: CpuPath) -> Self {
        self.path = path;
        self
    }

    /// Solves every chain on the calling thread. Errors only for a length mismatch or a
    /// [`CpuPath`] this CPU cannot run.
    pub fn run(&mut self) -> Result<BatchSummary, IkError> {
        let path = self.check()?;
        C::solve_corrections(self.chains, self.options, path, self.out);
        Ok(self.summary())
    }

    /// Solves every chain on all cores (rayon); the same results as [`Self::run`].
    pub fn run_par(&mut self) -> Result<BatchSummary, IkError> {
        let path = self.check()?;
        let options = self.options;
        self.chains
            .par_chunks(PAR_CHUNK)
            .zip(self.out.par_chunks_mut(PAR_CHUNK))
            .for_each(|(cs, outs)| C::solve_corrections(cs, options, path, outs));
        Ok(self.summary())
    }

    fn check(&self) -> Result<CpuPath, IkError> {
        if self.chains.len() != self.out.len() {
            return Err(IkError::LengthMismatch { chains: self.chains.len(), outputs: self.out.len() });
        }
        self.path.resolve()
    }

    fn summary(&self) -> BatchSummary {
        BatchSummary::from_outcomes(self.out.iter().map(C::corrections_outcome))
    }
}

impl<'a, C: Chain> BatchJob<'a, C> {
    /// A job over `chains` writing to `solved`, with default options.
    pub fn new(chains: &'a [C], solved: &'a mut [C::Solved]) -> Self {
        Self { chains, solved, options: C::Options::default(), path: CpuPath::Auto }
    }

    /// The same job with `options`.
    #[must_use]
    pub fn with_options(mut self, options: C::Options) -> Self {
        self.options = options;
        self
    }

    /// The same job on `path` (see [`CpuPath`]; every path gives the same results, bit for
    /// bit).
    #[must_use]
    pub fn with_path(mut self, path: CpuPath) -> Self {
        self.path = path;
        self
    }

    /// Checks the batch and every chain. Rules: `solved.len() == chains.len()`; every
    /// chain passes its solver's checks (see [`ChainError`] for the list). Returns the first
    /// failure.
    pub fn validate(&self) -> Result<(), IkError> {
        self.check_lengths()?;
        for (index, c) in self.chains.iter().enumerate() {
            c.validate().map_err(|error| IkError::InvalidChain { index, error })?;
        }
        Ok(())
    }

    /// Solves every chain on the calling thread. Errors only for a malformed batch or a
    /// [`CpuPath`] this CPU cannot run.
    pub fn run(&mut self) -> Result<BatchSummary, IkError> {
        self.check_lengths()?;
        let path = self.path.resolve()?;
        C::solve_batch(self.chains, self.options, path, self.solved);
        Ok(BatchSummary::of::<C>(self.solved))
    }

    /// Solves every chain on all cores (rayon). Same results as [`BatchJob::run`], bit for bit.
    pub fn run_par(&mut self) -> Result<BatchSummary, IkError> {
        self.check_lengths()?;
        let (options, path) = (self.options, self.path.resolve()?);
        self.chains
            .par_chunks(PAR_CHUNK)
            .zip(self.solved.par_chunks_mut(PAR_CHUNK))
            .for_each(|(cs, outs)| C::solve_batch(cs, options, path, outs));
        Ok(BatchSummary::of::<C>(self.solved))
    }

    fn check_lengths(&self) -> Result<(), IkError> {
        if self.chains.len() == self.solved.len() {
            Ok(())
        } else {
            Err(IkError::LengthMismatch { chains: self.chains.len(), outputs: self.solved.len() })
        }
    }
}
