//! The chain kernels [`GpuSolver`](super::GpuSolver) runs: [`Kind`], the records that have one
//! ([`GpuChain`]) and the per-joint-count variants of FABRIK, and [`OutputSegment`].

use super::shaders;
use crate::records::{
    CcdChain, ConstrainedFabrikChain, DlsChain, DlsTree, FabrikChain, LookAtChain, MultiFabrikChain, ThreeBoneChain,
    TwoBoneChain, MAX_FABRIK_JOINTS,
};
use crate::records::{ChainRecord, Options};

/// The chain kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `shaders/kernels/two_bone.wgsl`.
    TwoBone = 0,
    /// `shaders/kernels/three_bone.wgsl`.
    ThreeBone = 1,
    /// `shaders/kernels/fabrik.wgsl` (fixed iterations).
    Fabrik = 2,
    /// `shaders/kernels/constrained_fabrik.wgsl` (joint limits, fixed iterations).
    ConstrainedFabrik = 3,
    /// `shaders/kernels/ccd.wgsl` (fixed iterations).
    Ccd = 4,
    /// `shaders/kernels/look_at.wgsl` (crowd look-at).
    LookAt = 5,
    /// `shaders/kernels/multi_fabrik.wgsl` (multi-effector FABRIK on a joint tree).
    MultiFabrik = 6,
    /// `shaders/kernels/dls.wgsl` (damped least squares with joint limits, fixed iterations
    /// per start).
    Dls = 7,
    /// `shaders/kernels/dls_tree.wgsl` (damped least squares on a limited joint tree, up to
    /// the record's iterations per start, ending as the CPU twin does). Two pipelines: trees
    /// with orientation targets and trees without.
    DlsTree = 8,
}

impl Kind {
    /// All kinds, in dispatch order.
    pub const ALL: [Kind; 9] = [
        Kind::TwoBone,
        Kind::ThreeBone,
        Kind::Fabrik,
        Kind::ConstrainedFabrik,
        Kind::Ccd,
        Kind::LookAt,
        Kind::MultiFabrik,
        Kind::Dls,
        Kind::DlsTree,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::TwoBone => "two_bone",
            Kind::ThreeBone => "three_bone",
            Kind::Fabrik => "fabrik",
            Kind::ConstrainedFabrik => "constrained_fabrik",
            Kind::Ccd => "ccd",
            Kind::LookAt => "look_at",
            Kind::MultiFabrik => "multi_fabrik",
            Kind::Dls => "dls",
            Kind::DlsTree => "dls_tree",
        }
    }

    pub(crate) fn workgroup(self) -> u32 {
        match self {
            Kind::TwoBone => shaders::TWO_BONE_WORKGROUP_SIZE[0],
            Kind::ThreeBone => shaders::THREE_BONE_WORKGROUP_SIZE[0],
            Kind::Fabrik => shaders::FABRIK_WORKGROUP_SIZE[0],
            Kind::ConstrainedFabrik => shaders::CONSTRAINED_FABRIK_WORKGROUP_SIZE[0],
            Kind::Ccd => shaders::CCD_WORKGROUP_SIZE[0],
            Kind::LookAt => shaders::LOOK_AT_WORKGROUP_SIZE[0],
            Kind::MultiFabrik => shaders::MULTI_FABRIK_WORKGROUP_SIZE[0],
            Kind::Dls => shaders::DLS_WORKGROUP_SIZE[0],
            Kind::DlsTree => shaders::DLS_TREE_WORKGROUP_SIZE[0],
        }
    }

    /// Number of kernel variants (see [`GpuChain::variant`]).
    pub(crate) fn variants(self) -> usize {
        match self {
            Kind::TwoBone | Kind::ThreeBone | Kind::LookAt | Kind::MultiFabrik => 1,
            // With and without orientation targets; see `variant_constants`.
            Kind::DlsTree => 2,
            Kind::Fabrik | Kind::Dls => MAX_FABRIK_JOINTS + 1,
            // Per joint count, without and with `option::ALIGN_HINGES` (constrained FABRIK)
            // or `option::ROOT_FIRST` (CCD); see `variant_constants`.
            Kind::ConstrainedFabrik | Kind::Ccd => 2 * (MAX_FABRIK_JOINTS + 1),
        }
    }

    /// Whether the kind's pipelines are built per joint count (FABRIK, constrained FABRIK,
    /// CCD, damped least squares on chains); the others have a fixed set (one pipeline, or
    /// damped least squares on trees' two).
    pub(crate) fn built_per_joint_count(self) -> bool {
        matches!(self, Kind::Fabrik | Kind::ConstrainedFabrik | Kind::Ccd | Kind::Dls)
    }

    /// Values for the `override` constants of variant `v`: constrained FABRIK's variants past
    /// `MAX_FABRIK_JOINTS` are its joint-count variants with `ALIGN = true` (chains with
    /// `option::ALIGN_HINGES`), CCD's with `ROOT_FIRST = true` (`option::ROOT_FIRST`):
    /// lavapipe runs both sides of every branch under a mask, so an option's code lives only
    /// in the pipelines of the chains that ask for it. Damped least squares on trees: variant
    /// 1 (`ORIENTATIONS = false`) solves the trees without orientation targets, with half the
    /// rows.
    pub(crate) fn variant_constants(self, v: usize) -> &'static [(&'static str, f64)] {
        match self {
            Kind::DlsTree if v == 1 => &[("ORIENTATIONS", 0.0)],
            Kind::ConstrainedFabrik if v > MAX_FABRIK_JOINTS => &[("ALIGN", 1.0)],
            Kind::Ccd if v > MAX_FABRIK_JOINTS => &[("ROOT_FIRST", 1.0)],
            _ => &[],
        }
    }

    /// The variant that solves a chain of `joints` joints with the option bits `options`:
    /// the kinds with one pipeline 0; FABRIK its joint count (0 for a count without one);
    /// constrained FABRIK and CCD the same, plus `MAX_FABRIK_JOINTS + 1` with
    /// `option::ALIGN_HINGES` or `option::ROOT_FIRST` respectively.
    pub(crate) fn variant_of(self, joints: usize, options: u32) -> usize {
        use crate::records::option;
        let v = fabrik_variant(joints);
        let option_bit = match self {
            Kind::ConstrainedFabrik => option::ALIGN_HINGES,
            Kind::Ccd => option::ROOT_FIRST,
            Kind::Fabrik | Kind::Dls => 0,
            Kind::TwoBone | Kind::ThreeBone | Kind::LookAt | Kind::MultiFabrik | Kind::DlsTree => return 0,
        };
        if v != 0 && options & option_bit != 0 {
            v + MAX_FABRIK_JOINTS + 1
        } else {
            v
        }
    }

    /// WGSL source and entry point of variant `v`.
    pub(crate) fn variant_source(self, v: usize) -> (&'static str, &'static str) {
        match (self, v) {
            (Kind::TwoBone, _) => (shaders::TWO_BONE_WGSL, shaders::TWO_BONE_ENTRY),
            (Kind::ThreeBone, _) => (shaders::THREE_BONE_WGSL, shaders::THREE_BONE_ENTRY),
            (Kind::LookAt, _) => (shaders::LOOK_AT_WGSL, shaders::LOOK_AT_ENTRY),
            (Kind::MultiFabrik, _) => (shaders::MULTI_FABRIK_WGSL, shaders::MULTI_FABRIK_ENTRY),
            (Kind::DlsTree, _) => (shaders::DLS_TREE_WGSL, shaders::DLS_TREE_ENTRY),
            (Kind::Fabrik, v) => {
                per_joint_count(&shaders::FABRIK_WGSL, shaders::FABRIK_ENTRY, "fabrik_joint_count_error", v)
            }
            (Kind::ConstrainedFabrik, v) => per_joint_count(
                &shaders::CONSTRAINED_FABRIK_WGSL,
                shaders::CONSTRAINED_FABRIK_ENTRY,
                "limited_joint_count_error",
                v % (MAX_FABRIK_JOINTS + 1),
            ),
            (Kind::Ccd, v) => per_joint_count(
                &shaders::CCD_WGSL,
                shaders::CCD_ENTRY,
                "limited_joint_count_error",
                v % (MAX_FABRIK_JOINTS + 1),
            ),
            (Kind::Dls, v) => per_joint_count(&shaders::DLS_WGSL, shaders::DLS_ENTRY, "limited_joint_count_error", v),
        }
    }
}

/// Variant `v` of a kernel built per joint count: `v` joints, or 0 for the error entry
/// point (any variant's module holds it; the smallest will do).
fn per_joint_count(
    variants: &'static [(u32, &'static str)],
    entry: &'static str,
    error_entry: &'static str,
    v: usize,
) -> (&'static str, &'static str) {
    if v == 0 {
        return (variants[0].1, error_entry);
    }
    let (joints, source) = variants[v - 2];
    debug_assert_eq!(joints as usize, v);
    (source, entry)
}

/// A chain record with a GPU kernel.
pub trait GpuChain: ChainRecord {
    /// Its kernel.
    const KIND: Kind;

    /// The variant of the kernel that solves this chain. FABRIK is compiled once per joint
    /// count (variant `n` for `n` in `2..=MAX_FABRIK_JOINTS`, so every per-joint array is
    /// indexed by constants) plus variant 0, which writes [`crate::IkError`]'s joint-count
    /// error for any other count; the other kinds have only variant 0.
    fn variant(&self) -> usize {
        0
    }
}
impl GpuChain for TwoBoneChain {
    const KIND: Kind = Kind::TwoBone;
}
impl GpuChain for ThreeBoneChain {
    const KIND: Kind = Kind::ThreeBone;
}
impl GpuChain for LookAtChain {
    const KIND: Kind = Kind::LookAt;
}
impl GpuChain for MultiFabrikChain {
    const KIND: Kind = Kind::MultiFabrik;
}
impl GpuChain for DlsTree {
    const KIND: Kind = Kind::DlsTree;

    /// 1 for a tree without orientation targets (every orientation weight `±0`, compared by
    /// bits as the kernel does, so a subnormal weight a GPU would flush still counts), else 0.
    fn variant(&self) -> usize {
        usize::from(self.goal.orientation_weights.iter().all(|w| w.to_bits() & 0x7fff_ffff == 0))
    }
}
impl GpuChain for FabrikChain {
    const KIND: Kind = Kind::Fabrik;

    fn variant(&self) -> usize {
        fabrik_variant(self.joint_count())
    }
}

impl GpuChain for ConstrainedFabrikChain {
    const KIND: Kind = Kind::ConstrainedFabrik;

    fn variant(&self) -> usize {
        Kind::ConstrainedFabrik.variant_of(self.chain.joint_count(), self.options())
    }
}
impl GpuChain for DlsChain {
    const KIND: Kind = Kind::Dls;

    fn variant(&self) -> usize {
        Kind::Dls.variant_of(self.chain.joint_count(), self.options())
    }
}
impl GpuChain for CcdChain {
    const KIND: Kind = Kind::Ccd;

    fn variant(&self) -> usize {
        Kind::Ccd.variant_of(self.chain.joint_count(), self.options())
    }
}

/// The FABRIK variant of a joint count: itself where one is compiled, else 0 (the error kernel).
pub(crate) fn fabrik_variant(joints: usize) -> usize {
    if (2..=MAX_FABRIK_JOINTS).contains(&joints) {
        joints
    } else {
        0
    }
}

/// One segment of a kind's output on the GPU: chains `first .. first + count` of the last
/// upload, as an array of solved records (`TwoBoneSolved`, ...) at offset 0 of `buffer`.
#[derive(Clone, Copy, Debug)]
pub struct OutputSegment<'a> {
    /// Storage buffer holding the solved records (usage `STORAGE | COPY_SRC`). Bind it
    /// read-only: the kernels read each record's `status.w` (joints written) back to zero
    /// only the slots that need it, so they must be the only writers.
    pub buffer: &'a wgpu::Buffer,
    /// Index of the segment's first chain in the uploaded batch.
    pub first: usize,
    /// Chains in this segment.
    pub count: usize,
}
