//! [`CpuPath`], the instruction set a CPU batch job runs on: a name at the bottom of the
//! crate, so that errors can name it; what each path can do lives in `cpu`.

/// The instruction set a CPU batch job runs on. The SIMD paths solve a group of chains at
/// once (16 with AVX2, 32 with AVX-512), one lane per chain, with the same math and
/// operation order as the scalar solvers (which are the reference and the GPU kernels'
/// twins), so every path gives every chain the same bits (`tests/wide.rs`,
/// `tests/limits.rs`). Two-bone, pseudo three-bone, FABRIK, constrained FABRIK and CCD
/// ([`FabrikMode::Fixed`](crate::cpu::FabrikMode::Fixed)) have SIMD paths; the other solvers and
/// [`FabrikMode::Converge`](crate::cpu::FabrikMode::Converge) run the scalar solvers on every path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuPath {
    /// The fastest path this CPU has ([`CpuPath::best`](CpuPath::best)); the default.
    #[default]
    Auto,
    /// The scalar reference solvers, chain by chain (every CPU).
    Scalar,
    /// AVX2 (x86-64): 16 chains per group, two 256-bit registers per lane value.
    Avx2,
    /// AVX-512F (x86-64): 32 chains per group, two 512-bit registers per lane value, masks
    /// in mask registers.
    Avx512,
}

impl CpuPath {
    /// Every path, fastest first.
    pub const ALL: [CpuPath; 3] = [CpuPath::Avx512, CpuPath::Avx2, CpuPath::Scalar];

    /// The path's name as the `bench` example and [`std::str::FromStr`] spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CpuPath::Auto => "auto",
            CpuPath::Scalar => "scalar",
            CpuPath::Avx2 => "avx2",
            CpuPath::Avx512 => "avx512",
        }
    }
}

impl std::fmt::Display for CpuPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
