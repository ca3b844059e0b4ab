//! SoA batch paths (x86-64): the CPU solvers over a group of chains at once, one SIMD lane
//! per chain: 16 chains in AVX2 registers or 32 in AVX-512 registers.
//!
//! The scalar solvers (`cpu::two_bone`, ...) are the reference and the GPU kernels' twins;
//! the functions here are the same math, stage for stage and in the same operation order,
//! written over lanes (`F`, `V3`, `Q`): each line is one vector instruction, and branches
//! become selects (every lane computes every case and keeps its own). Rust never contracts
//! `a * b + c` into an FMA, so each lane rounds like the scalar code wherever the operation
//! order is the same; where the scalar code calls glam, the lanes follow glam's SSE2 code
//! (its quaternion product, 4-vector dot product and normalisation: glam's default on
//! x86-64), and they make every product the scalar code makes, identities included. So
//! every lane is bit for bit the scalar result.
//!
//! One source, two instruction sets: `isa.rs` (the lane types `F`/`M`/`U`, selects,
//! transposes, and `run`, the entry point), `lanes.rs` (vectors, quaternions, helpers,
//! record loads/stores, the group loop), `limits.rs` (joint limits over lanes) and the
//! kernels `two_bone.rs`, `three_bone.rs`, `fabrik.rs`, `constrained_fabrik.rs`, `look_at.rs`,
//! `multi_fabrik.rs` and
//! `ccd.rs` are compiled twice, once in [`avx2`] and once in [`avx512`]. What differs
//! between the two is a register table, `avx2/regs.rs` and `avx512/regs.rs`: one
//! intrinsic per entry (add, compare, blend, mask and, 128-bit inserts...), the register
//! width, and the `target_feature` function that runs a batch. Everything from `isa.rs` up
//! is `#[inline(always)]` down to the table's intrinsics, so each instantiation is one
//! function per kernel compiled for its instruction set. No kernel holds a closure: one
//! the compiler does not inline is a function of its own without the instruction set, and
//! its intrinsics become calls (arrays are built with loops).
//!
//! Records move in and out by 16-byte fields (`[f32; 4]`): each register gathers the field
//! of several records in its 128-bit lanes, then a 4×4 transpose inside the lanes (8
//! shuffles per register set) turns them into one lane value per word; stores run it
//! backwards. A group of chains costs a few shuffles rather than one scalar load per word.
//!
//! Solved chains leave by the same fields: `finish_chain` hands each one to a sink
//! (`lanes::Fields`), which transposes it straight into the output records
//! (`lanes::Records`), with no transposed copy of the solved records in between.
//!
//! Lanes that are invalid, untouched (weight ≤ 0) or hit any error path are solved again
//! by the scalar solver, so error codes, FK fallbacks and info bits come from one place.
//! `tests/wide.rs` and `tests/limits.rs` hold every path to the scalar one, record for
//! record and byte for byte.
//!
//! Soundness: every intrinsic needs the instruction set of its register table. Lane values are
//! only made by code in this module, and this module is entered only through the batch
//! functions below, which call an `isa::run` that checks the CPU first (`available()`,
//! `is_x86_feature_detected!`) and then enters a `#[target_feature]` function. So wherever
//! a lane value exists the instruction set is there, and the operators and helpers (which
//! cannot carry `target_feature` and stay generic over the instruction set) rely on that.

use super::ccd::ccd_with_mode;
use super::constrained_fabrik::constrained_fabrik_with_mode;
use super::fabrik::{fabrik_corrections, fabrik_with_mode, FabrikMode};
use super::look_at::look_at;
use super::multi_fabrik::multi_fabrik_with_mode;
use super::three_bone::three_bone;
use super::two_bone::two_bone;
use super::CpuPath;
use crate::records::{
    option, CcdChain, ConstrainedFabrikChain, FabrikChain, FabrikCorrections, FabrikSolved, LookAtChain, LookAtSolved,
    MultiFabrikChain, MultiFabrikSolved, Options, ThreeBoneChain, ThreeBoneSolved, TwoBoneChain, TwoBoneSolved,
};

/// Runs an intrinsic expression inside a register table (`regs.rs`) or `isa.rs`.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: lane code is only reached from an `isa::run`, after its instruction set
        // was detected (see the module docs).
        unsafe { $e }
    };
}

/// Applies an expression to each of the `H` (= 2) registers of a lane value (`|h|` names
/// the index). Written out rather than looped: the kernels hold thousands of these, and as
/// two-iteration loops they cost LLVM's loop passes (loop rotation above all) most of the
/// crate's build time before being unrolled to this same code.
macro_rules! each {
    (|$h:ident| $e:expr) => {{
        const _: () = assert!(H == 2, "`each!` is written out for two registers per value");
        [
            {
                let $h = 0;
                $e
            },
            {
                let $h = 1;
                $e
            },
        ]
    }};
}

/// The AVX2 instantiation (16 chains per group in two `__m256` per value).
#[allow(clippy::duplicate_mod)] // the shared sources, compiled once per instruction set
pub(crate) mod avx2 {
    #[path = "../ccd.rs"]
    pub(crate) mod ccd;
    #[path = "../constrained_fabrik.rs"]
    pub(crate) mod constrained_fabrik;
    #[path = "../fabrik.rs"]
    pub(crate) mod fabrik;
    #[path = "../isa.rs"]
    pub(crate) mod isa;
    #[path = "../lanes.rs"]
    pub(crate) mod lanes;
    #[path = "../limits.rs"]
    pub(crate) mod limits;
    #[path = "../look_at.rs"]
    pub(crate) mod look_at;
    #[path = "../multi_fabrik.rs"]
    pub(crate) mod multi_fabrik;
    pub(crate) mod regs;
    #[path = "../three_bone.rs"]
    pub(crate) mod three_bone;
    #[path = "../two_bone.rs"]
    pub(crate) mod two_bone;
}

/// The AVX-512 instantiation (32 chains per group in two `__m512` per value, masks in
/// mask registers, 32 vector registers).
#[allow(clippy::duplicate_mod)] // the shared sources, compiled once per instruction set
pub(crate) mod avx512 {
    #[path = "../ccd.rs"]
    pub(crate) mod ccd;
    #[path = "../constrained_fabrik.rs"]
    pub(crate) mod constrained_fabrik;
    #[path = "../fabrik.rs"]
    pub(crate) mod fabrik;
    #[path = "../isa.rs"]
    pub(crate) mod isa;
    #[path = "../lanes.rs"]
    pub(crate) mod lanes;
    #[path = "../limits.rs"]
    pub(crate) mod limits;
    #[path = "../look_at.rs"]
    pub(crate) mod look_at;
    #[path = "../multi_fabrik.rs"]
    pub(crate) mod multi_fabrik;
    pub(crate) mod regs;
    #[path = "../three_bone.rs"]
    pub(crate) mod three_bone;
    #[path = "../two_bone.rs"]
    pub(crate) mod two_bone;
}

/// Whether this CPU has the instruction set of `path` (`Scalar`: always).
pub(crate) fn available(path: CpuPath) -> bool {
    match path {
        CpuPath::Avx512 => avx512::isa::available(),
        CpuPath::Avx2 => avx2::isa::available(),
        CpuPath::Scalar | CpuPath::Auto => true,
    }
}

/// Solves `chains` into `out` (same length) on `path` (resolved: not `Auto`) with the
/// instantiation of the path (`avx512`, `avx2`), or chain by chain with `scalar` where the
/// path has none or the CPU lacks it.
fn batch<C, S>(
    chains: &[C],
    path: CpuPath,
    out: &mut [S],
    avx512: impl FnOnce(&[C], &mut [S]) -> bool,
    avx2: impl FnOnce(&[C], &mut [S]) -> bool,
    scalar: impl Fn(&C, &mut S),
) {
    debug_assert_eq!(chains.len(), out.len());
    let done = match path {
        CpuPath::Avx512 => avx512(chains, out),
        CpuPath::Avx2 => avx2(chains, out),
        CpuPath::Scalar | CpuPath::Auto => false,
    };
    if !done {
        for (c, o) in chains.iter().zip(out) {
            scalar(c, o);
        }
    }
}

/// The batch path behind [`crate::cpu::TwoBoneJob`] (see [`batch`]): same contract and
/// results as calling [`two_bone`] on each chain, bit for bit.
pub(crate) fn two_bone_batch(chains: &[TwoBoneChain], path: CpuPath, out: &mut [TwoBoneSolved]) {
    let avx512 = avx512::isa::run::<avx512::two_bone::TwoBone>;
    batch(chains, path, out, avx512, avx2::isa::run::<avx2::two_bone::TwoBone>, two_bone);
}

/// The batch path behind [`crate::cpu::TwoBoneCorrectionsJob`]: the same bits as
/// [`crate::cpu::two_bone_corrections`] on each chain.
pub(crate) fn two_bone_corrections_batch(
    chains: &[TwoBoneChain],
    path: CpuPath,
    out: &mut [crate::records::TwoBoneCorrections],
) {
    let avx512 = avx512::isa::run::<avx512::two_bone::TwoBoneCorrectionsKernel>;
    let avx2 = avx2::isa::run::<avx2::two_bone::TwoBoneCorrectionsKernel>;
    batch(chains, path, out, avx512, avx2, crate::cpu::two_bone_corrections);
}

/// The batch path behind [`crate::cpu::ThreeBoneJob`] (see [`batch`]): same contract and
/// results as calling [`three_bone`] on each chain, bit for bit.
pub(crate) fn three_bone_batch(chains: &[ThreeBoneChain], path: CpuPath, out: &mut [ThreeBoneSolved]) {
    let avx512 = avx512::isa::run::<avx512::three_bone::ThreeBone>;
    batch(chains, path, out, avx512, avx2::isa::run::<avx2::three_bone::ThreeBone>, three_bone);
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::LookAtJob`], the same bits as [`look_at`] on each record. A group in lanes
/// shares its joint count, parents and option bits (`mode.xyz`); a batch that mixes them is
/// solved in groups of each (one index sort per batch), so a record's result never depends
/// on its neighbours.
pub(crate) fn look_at_batch(chains: &[LookAtChain], path: CpuPath, out: &mut [LookAtSolved]) {
    let runs = (
        avx512::isa::run::<avx512::look_at::LookAt> as Run<_, _>,
        avx2::isa::run::<avx2::look_at::LookAt> as Run<_, _>,
    );
    let key = |c: &LookAtChain| (c.mode[0], c.mode[1], c.mode[2]);
    iterative_batch(chains, FabrikMode::Fixed, path, out, runs, |c, _, o| look_at(c, o), key);
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::MultiFabrikJob`]. [`FabrikMode::Fixed`] runs in lanes, the same bits as
/// [`multi_fabrik_with_mode`] on each tree; a group shares its trees' shape (joint count,
/// iterations, options, parents, effector joints), and a batch that mixes shapes is solved in
/// groups of each (one index sort per batch). Any other mode runs tree by tree.
pub(crate) fn multi_fabrik_batch(
    chains: &[MultiFabrikChain],
    mode: FabrikMode,
    path: CpuPath,
    out: &mut [MultiFabrikSolved],
) {
    let runs = (
        avx512::isa::run::<avx512::multi_fabrik::MultiFabrik> as Run<_, _>,
        avx2::isa::run::<avx2::multi_fabrik::MultiFabrik> as Run<_, _>,
    );
    iterative_batch(chains, mode, path, out, runs, multi_fabrik_with_mode, |c| (c.mode, c.parents, c.effectors));
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::FabrikJob`]. [`FabrikMode::Fixed`] runs in lanes (same contract and
/// results as [`crate::cpu::fabrik`] on each chain, bit for bit);
/// [`FabrikMode::Converge`] stops each chain at its own iteration, so it runs chain by chain.
///
/// Lanes need one joint count and iteration count per group; a batch that mixes them is
/// solved in groups of equal `(joint count, iterations)` (one index sort per batch), so a
/// chain's result never depends on its neighbours.
pub(crate) fn fabrik_batch(chains: &[FabrikChain], mode: FabrikMode, path: CpuPath, out: &mut [FabrikSolved]) {
    let runs = (avx512::isa::run::<avx512::fabrik::Fabrik> as Run<_>, avx2::isa::run::<avx2::fabrik::Fabrik> as Run<_>);
    iterative_batch(chains, mode, path, out, runs, fabrik_with_mode, fabrik_key);
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::FabrikCorrectionsJob`], as [`fabrik_batch`] is FABRIK's, writing the same
/// bits as [`fabrik_corrections`] on each chain.
pub(crate) fn fabrik_corrections_batch(
    chains: &[FabrikChain],
    mode: FabrikMode,
    path: CpuPath,
    out: &mut [FabrikCorrections],
) {
    let runs = (
        avx512::isa::run::<avx512::fabrik::Fabrik<FabrikCorrections>> as Run<_, _>,
        avx2::isa::run::<avx2::fabrik::Fabrik<FabrikCorrections>> as Run<_, _>,
    );
    iterative_batch(chains, mode, path, out, runs, fabrik_corrections, fabrik_key);
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::ConstrainedFabrikJob`], as [`fabrik_batch`] is FABRIK's ([`FabrikMode::Fixed`]
/// in lanes, same contract and results as [`constrained_fabrik_with_mode`] on each chain,
/// bit for bit; [`FabrikMode::Converge`] chain by chain).
pub(crate) fn constrained_fabrik_batch(
    chains: &[ConstrainedFabrikChain],
    mode: FabrikMode,
    path: CpuPath,
    out: &mut [FabrikSolved],
) {
    let runs = (
        avx512::isa::run::<avx512::constrained_fabrik::ConstrainedFabrik> as Run<_>,
        avx2::isa::run::<avx2::constrained_fabrik::ConstrainedFabrik> as Run<_>,
    );
    iterative_batch(chains, mode, path, out, runs, constrained_fabrik_with_mode, |c| {
        (c.chain.mode[0], c.chain.iterations(), 0)
    });
}

/// Solves `chains` into `out` (same length) on `path` (resolved): the batch path behind
/// [`crate::cpu::CcdJob`], as [`fabrik_batch`] is FABRIK's ([`FabrikMode::Fixed`] in lanes,
/// same contract and results as [`ccd_with_mode`] on each chain, bit for bit;
/// [`FabrikMode::Converge`] chain by chain). Groups share their sweep order too.
pub(crate) fn ccd_batch(chains: &[CcdChain], mode: FabrikMode, path: CpuPath, out: &mut [FabrikSolved]) {
    let runs = (avx512::isa::run::<avx512::ccd::Ccd> as Run<_>, avx2::isa::run::<avx2::ccd::Ccd> as Run<_>);
    let key = |c: &CcdChain| (c.chain.mode[0], c.chain.iterations(), c.options() & option::ROOT_FIRST);
    iterative_batch(chains, mode, path, out, runs, ccd_with_mode, key);
}

/// The shape a FABRIK group shares: joint count and iterations.
fn fabrik_key(c: &FabrikChain) -> (u32, u32, u32) {
    (c.mode[0], c.iterations(), 0)
}

/// An instantiation's entry point over a batch (`isa::run`): `false` when the CPU lacks it.
type Run<C, S = FabrikSolved> = fn(&[C], &mut [S]) -> bool;

/// The batch path of a solver whose lanes need one shape per group (an iterative solver's
/// joint and iteration counts, a look-at record's joints and parents, a tree's shape):
/// [`FabrikMode::Fixed`] on `path` in lanes (`runs`: the AVX-512 and AVX2 instantiations),
/// grouped by `key` ([`grouped`]); any other mode or path chain by chain with `scalar`.
fn iterative_batch<C: Copy, S: Copy + Default, K: Ord>(
    chains: &[C],
    mode: FabrikMode,
    path: CpuPath,
    out: &mut [S],
    runs: (Run<C, S>, Run<C, S>),
    scalar: fn(&C, FabrikMode, &mut S),
    key: impl Fn(&C) -> K,
) {
    debug_assert_eq!(chains.len(), out.len());
    let run = match path {
        CpuPath::Avx512 if mode == FabrikMode::Fixed && avx512::isa::available() => runs.0,
        CpuPath::Avx2 if mode == FabrikMode::Fixed && avx2::isa::available() => runs.1,
        _ => {
            for (c, o) in chains.iter().zip(out) {
                scalar(c, mode, o);
            }
            return;
        }
    };
    grouped(chains, out, key, run);
}

/// Runs `run` over `chains` in groups of one `key` (joint count, iterations, sweep order): the whole
/// batch at once when it has one key, else one index sort and the groups of each key.
/// A chain's result never depends on its neighbours.
fn grouped<C: Copy, S: Copy + Default, K: Ord>(chains: &[C], out: &mut [S], key: impl Fn(&C) -> K, run: Run<C, S>) {
    if chains.first().is_none_or(|c0| chains.iter().all(|c| key(c) == key(c0))) {
        run(chains, out);
        return;
    }
    // Room for a group of either instantiation.
    const G: usize = avx512::isa::L;
    let mut order: Vec<usize> = (0..chains.len()).collect();
    order.sort_by_key(|&i| key(&chains[i]));
    for same in order.chunk_by(|&a, &b| key(&chains[a]) == key(&chains[b])) {
        for idx in same.chunks(G) {
            let mut cs = [chains[idx[0]]; G];
            let mut os = [S::default(); G];
            for (c, &i) in cs.iter_mut().zip(idx) {
                *c = chains[i];
            }
            run(&cs[..idx.len()], &mut os[..idx.len()]);
            for (o, &i) in os.iter().zip(idx) {
                out[i] = *o;
            }
        }
    }
}

const _: () = assert!(avx2::isa::L <= avx512::isa::L);
