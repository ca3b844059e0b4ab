//! What every chain fuzz target checks, on records made from the fuzzer's raw bytes:
//!
//! - no panic on any path;
//! - finite output (positions, rotations, corrections) for every record;
//! - every SIMD path this CPU has gives the scalar path's error code (`status[1]`);
//! - a chain solves the same, bit for bit, alone and among the other records of the input
//!   (neighbour independence), on every path.
//!
//! Positions and the reached/info bits are compared between paths only by
//! [`check_bit_exact`], for the solvers whose SIMD paths promise the scalar path's bits
//! for every record (the limited solvers; multi-effector FABRIK and look-at run the scalar
//! solver on every path). Two-bone, three-bone and FABRIK use [`check`]: arbitrary bytes
//! make valid chains of any conditioning (see `tests/raw_bytes.rs`, which compares them for
//! ordinary chains on stable Rust in CI).

use crowd_ik::cpu::CpuPath;
use crowd_ik::SolvedChain;

/// The records in `data` (whole records only; at most 64), copied out of the byte buffer
/// so they are aligned.
pub fn records<T: bytemuck::Pod>(data: &[u8]) -> Vec<T> {
    data.chunks_exact(size_of::<T>()).take(64).map(bytemuck::pod_read_unaligned).collect()
}

/// Every CPU path this machine runs.
pub fn paths() -> Vec<CpuPath> {
    CpuPath::ALL.into_iter().filter(|p| p.is_available()).collect()
}

/// Runs `solve(chains, path, out)` on every path and checks the contract above; returns the
/// scalar path's outputs.
pub fn check<C: Copy, const N: usize>(
    chains: &[C],
    solve: impl Fn(&[C], CpuPath, &mut [SolvedChain<N>]),
) -> Vec<SolvedChain<N>> {
    check_paths(chains, solve, false)
}

/// [`check`], plus: every SIMD path's output equal to the scalar path's bit for bit (the
/// solvers whose CPU jobs run in SIMD lanes promise it for every record).
pub fn check_bit_exact<C: Copy, const N: usize>(
    chains: &[C],
    solve: impl Fn(&[C], CpuPath, &mut [SolvedChain<N>]),
) -> Vec<SolvedChain<N>> {
    check_paths(chains, solve, true)
}

fn check_paths<C: Copy, const N: usize>(
    chains: &[C],
    solve: impl Fn(&[C], CpuPath, &mut [SolvedChain<N>]),
    bit_exact: bool,
) -> Vec<SolvedChain<N>> {
    if chains.is_empty() {
        return Vec::new();
    }
    let mut scalar = vec![SolvedChain::<N>::default(); chains.len()];
    solve(chains, CpuPath::Scalar, &mut scalar);
    for path in paths() {
        let mut out = vec![SolvedChain::<N>::default(); chains.len()];
        solve(chains, path, &mut out);
        for (i, (o, s)) in out.iter().zip(&scalar).enumerate() {
            let finite = o.positions_ms.iter().chain(&o.rotations_ms).chain(&o.corrections).flatten();
            assert!(finite.into_iter().all(|x| x.is_finite()), "{path}: chain {i} has non-finite output");
            assert_eq!(o.status[1], s.status[1], "{path}: chain {i} error code");
            if bit_exact {
                assert_eq!(
                    bytemuck::bytes_of(o),
                    bytemuck::bytes_of(s),
                    "{path}: chain {i} differs from the scalar path"
                );
            }
            let mut alone = [SolvedChain::<N>::default()];
            solve(&chains[i..=i], path, &mut alone);
            assert_eq!(
                bytemuck::bytes_of(&alone[0]),
                bytemuck::bytes_of(o),
                "{path}: chain {i} depends on its neighbours"
            );
        }
    }
    scalar
}

/// `validate(record)` gives the solver's verdict (`status[1]`) for every record.
pub fn check_verdicts<C, const N: usize>(
    records: &[C],
    solved: &[SolvedChain<N>],
    validate: impl Fn(&C) -> Result<(), crowd_ik::ChainError>,
) {
    for (i, (r, s)) in records.iter().zip(solved).enumerate() {
        assert_eq!(code(validate(r)), s.status[1], "record {i}: validate() is not the solver's verdict");
    }
}

/// At weight 1 every joint of every solved, unmirrored limited chain is within 1e-4 rad of
/// its limit (`crowd_ik_tools::limits::violation`), whatever the iteration count.
pub fn check_limits(chains: &[crowd_ik::ConstrainedFabrikChain], solved: &[crowd_ik::FabrikSolved]) {
    use crowd_ik::records::option;
    for (i, (c, s)) in chains.iter().zip(solved).enumerate() {
        if s.status[1] == 0 && c.chain.target_ms[3] >= 1.0 && c.chain.mode[2] & option::MIRRORED == 0 {
            for k in 0..c.chain.joint_count() - 1 {
                let v = crowd_ik_tools::limits::violation(c, s, k);
                assert!(v <= 1e-4, "chain {i}, joint {k}: {v} rad outside its limit");
            }
        }
    }
}

/// The error code a `validate` result stands for (0 = valid).
pub fn code(r: Result<(), crowd_ik::ChainError>) -> u32 {
    r.err().map_or(0, |e| e.code())
}
