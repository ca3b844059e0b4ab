//! The SoA batch paths behind the CPU jobs (every [`CpuPath`] this CPU has: AVX-512, AVX2)
//! against the scalar reference solvers: every record **bit for bit** the scalar one
//! (status words, FK fallbacks, positions, rotations, corrections), over random chains of
//! every mode with ~10 % degenerate ones, at every batch length around the lane counts. The
//! lanes repeat the scalar code's operations in its order, glam's SSE2 quaternion product,
//! dot product and normalisation included (glam's default on x86-64). The largest position
//! and angle differences are still measured and printed (0 when the records are equal), so
//! a change that breaks the equality reports how far apart the paths went.

mod common;

use std::f32::consts::{FRAC_PI_2, PI};

use common::*;
use crowd_ik::cpu::{three_bone, two_bone, CpuPath, FabrikCorrectionsJob, FabrikMode, TwoBoneCorrectionsJob};
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;
use crowd_ik_tools::workload;

/// The SIMD paths this CPU runs (printed, so a log shows what was tested).
fn simd_paths() -> Vec<CpuPath> {
    let paths: Vec<CpuPath> = CpuPath::ALL.into_iter().filter(|p| *p != CpuPath::Scalar && p.is_available()).collect();
    eprintln!("SIMD paths on this CPU: {paths:?}");
    paths
}

/// Largest position difference (× limb length) and rotation/correction angle (rad) of a
/// batch result on `path` from the scalar one; panics on any record that is not bit for bit
/// the scalar one.
fn compare_two_bone(chains: &[TwoBoneChain], path: CpuPath) -> (f32, f32) {
    let mut batch = vec![TwoBoneSolved::default(); chains.len()];
    TwoBoneJob::new(chains, &mut batch).with_path(path).run().unwrap();
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for (i, (c, b)) in chains.iter().zip(&batch).enumerate() {
        let mut s = TwoBoneSolved::default();
        two_bone(c, &mut s);
        assert_eq!(b.status, s.status, "chain {i}: {c:?}");
        assert!(
            bytemuck::bytes_of(b) == bytemuck::bytes_of(&s),
            "{path}: two-bone chain {i} is not bit for bit the scalar result: {c:?}"
        );
        if s.error().is_some() || c.limb.weight() <= 0.0 {
            assert_eq!(b, &s, "fallback of chain {i} differs");
            continue;
        }
        let length = c.joint(0).distance(c.joint(1)) + c.joint(1).distance(c.joint(2));
        for j in 0..3 {
            assert!(b.positions_ms[j][3] == 1.0 && b.corrections[j][3] >= -1e-6, "chain {i} joint {j}: {b:?} vs {s:?}");
            pos = pos.max(b.position(j).distance(s.position(j)) / length);
            rot = rot.max(quat_angle(b.rotation(j), s.rotation(j))).max(quat_angle(b.correction(j), s.correction(j)));
        }
    }
    (pos, rot)
}

#[test]
fn two_bone_batch_matches_scalar_on_random_chains() {
    let mut rng = Rng(7);
    let chains: Vec<TwoBoneChain> = (0..20_000).map(|_| random_two_bone(&mut rng)).collect();
    let bench = workload::two_bone(20_000, 1);
    for path in simd_paths() {
        let (pos, rot) = compare_two_bone(&chains, path);
        eprintln!("{path} random: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-5 && rot <= 1e-4, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
        let (pos, rot) = compare_two_bone(&bench, path);
        eprintln!("{path} workload: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-5 && rot <= 1e-4, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
    }
}

/// The corrections-only job (`TwoBoneCorrectionsJob`) writes, on every path and at every
/// batch length around the lane counts, exactly the `corrections` and `status` of the full
/// scalar solve (mirrored, invalid, zero-weight and offset chains among them), and its
/// summary is the full job's.
#[test]
fn corrections_only_two_bone_is_the_full_solves_corrections_bit_for_bit() {
    let mut rng = Rng(23);
    let mut chains: Vec<TwoBoneChain> = (0..5_000).map(|_| random_two_bone(&mut rng)).collect();
    chains.extend(workload::two_bone(3_000, 4));
    for (k, c) in chains.iter_mut().enumerate().step_by(7) {
        *c = c.with_mirrored(k % 2 == 0);
    }
    let full: Vec<TwoBoneSolved> = chains
        .iter()
        .map(|c| {
            let mut s = TwoBoneSolved::default();
            two_bone(c, &mut s);
            s
        })
        .collect();
    let mut full_job = vec![TwoBoneSolved::default(); chains.len()];
    let full_summary = TwoBoneJob::new(&chains, &mut full_job).run().unwrap();
    let mut paths = simd_paths();
    paths.push(CpuPath::Scalar);
    for path in paths {
        for n in (0..=72).chain([chains.len()]) {
            let mut out = vec![TwoBoneCorrections::default(); n];
            let summary = TwoBoneCorrectionsJob::new(&chains[..n], &mut out).with_path(path).run().unwrap();
            for (i, (o, f)) in out.iter().zip(&full).enumerate() {
                assert!(
                    bytemuck::bytes_of(o) == bytemuck::bytes_of(&TwoBoneCorrections::of(f)),
                    "{path}: chain {i} of {n}: {o:?} vs {f:?}"
                );
            }
            if n == chains.len() {
                assert_eq!(summary, full_summary, "{path}");
                let mut par = vec![TwoBoneCorrections::default(); n];
                TwoBoneCorrectionsJob::new(&chains, &mut par).with_path(path).run_par().unwrap();
                assert!(par == out, "{path}: run_par differs from run");
            }
        }
    }
    let mut short = vec![TwoBoneCorrections::default(); 3];
    assert!(TwoBoneCorrectionsJob::new(&chains[..4], &mut short).run().is_err(), "a length mismatch is an error");
}

/// The FABRIK corrections-only job (`FabrikCorrectionsJob`) writes, on every path, at every
/// batch length around the lane counts and in both modes, exactly the `corrections` and
/// `status` of the full scalar solve (slots past the joint count zero; mixed joint and
/// iteration counts, mirrored, invalid and zero-weight chains among them), and its summary is
/// the full job's.
#[test]
fn corrections_only_fabrik_is_the_full_solves_corrections_bit_for_bit() {
    let mut rng = Rng(29);
    let mut chains: Vec<FabrikChain> = (0..3_000).map(|k| random_fabrik(&mut rng, [0, 1, 8, 16][k % 4])).collect();
    chains.extend(workload::fabrik(2_000, 8, 16, 3));
    for (k, c) in chains.iter_mut().enumerate().step_by(5) {
        *c = c.with_mirrored(k % 2 == 0);
    }
    let mut paths = simd_paths();
    paths.push(CpuPath::Scalar);
    for mode in [FabrikMode::Fixed, FabrikMode::Converge] {
        let full: Vec<FabrikSolved> = chains
            .iter()
            .map(|c| {
                let mut s = FabrikSolved::default();
                crowd_ik::cpu::fabrik_with_mode(c, mode, &mut s);
                s
            })
            .collect();
        let mut full_job = vec![FabrikSolved::default(); chains.len()];
        let full_summary = FabrikJob::new(&chains, &mut full_job).with_options(mode).run().unwrap();
        for &path in &paths {
            for n in (0..=72).chain([chains.len()]) {
                let mut out = vec![FabrikCorrections::default(); n];
                let summary =
                    FabrikCorrectionsJob::new(&chains[..n], &mut out).with_options(mode).with_path(path).run().unwrap();
                for (i, (o, f)) in out.iter().zip(&full).enumerate() {
                    assert!(
                        bytemuck::bytes_of(o) == bytemuck::bytes_of(&FabrikCorrections::of(f)),
                        "{path} {mode:?}: chain {i} of {n}: {o:?} vs {f:?}"
                    );
                }
                if n == chains.len() {
                    assert_eq!(summary, full_summary, "{path}");
                    let mut par = vec![FabrikCorrections::default(); n];
                    FabrikCorrectionsJob::new(&chains, &mut par).with_options(mode).with_path(path).run_par().unwrap();
                    assert!(par == out, "{path}: run_par differs from run");
                }
            }
        }
    }
    let mut short = vec![FabrikCorrections::default(); 3];
    assert!(FabrikCorrectionsJob::new(&chains[..4], &mut short).run().is_err(), "a length mismatch is an error");
}

#[test]
fn two_bone_batch_of_every_length_around_the_lane_count() {
    let mut rng = Rng(11);
    let chains: Vec<TwoBoneChain> = (0..72).map(|_| random_two_bone(&mut rng)).collect();
    for path in simd_paths() {
        for n in 0..=chains.len() {
            compare_two_bone(&chains[..n], path);
        }
    }
}

/// Every word of the record, one at a time, set to what no check lets through and what
/// only some do (NaN, infinities, beyond the coordinate bound, huge, subnormal, odd mode
/// bits): each lane still bit for bit the scalar solve, whichever check catches it.
#[test]
fn every_word_of_a_two_bone_record_corrupted_is_the_scalar_result() {
    let good = workload::two_bone(48, 5);
    let specials: [u32; 12] = [
        f32::NAN.to_bits(),
        f32::INFINITY.to_bits(),
        f32::NEG_INFINITY.to_bits(),
        2e9_f32.to_bits(),
        (-2e9_f32).to_bits(),
        1e30_f32.to_bits(),
        1.5_f32.to_bits(),
        (-0.0_f32).to_bits(),
        1,
        3,
        0x80,
        0xffff_ffff,
    ];
    let words = std::mem::size_of::<TwoBoneChain>() / 4;
    for path in simd_paths() {
        for (k, &bits) in specials.iter().enumerate() {
            let mut chains = good.clone();
            // Each chain a different word, so one group holds many kinds of damage.
            for (i, c) in chains.iter_mut().enumerate() {
                let w: &mut [u32] = bytemuck::cast_slice_mut(std::slice::from_mut(c));
                w[(i + 5 * k) % words] = bits;
            }
            compare_two_bone(&chains, path);
        }
    }
}

#[test]
fn a_bad_chain_does_not_change_its_lane_neighbours() {
    let good = workload::two_bone(32, 3);
    for path in simd_paths() {
        let mut batch = vec![TwoBoneSolved::default(); 32];
        TwoBoneJob::new(&good, &mut batch).with_path(path).run().unwrap();
        for bad in [f32::NAN, f32::INFINITY] {
            for victim in [0, 5, 15, 16, 31] {
                let mut chains = good.clone();
                chains[victim].limb.target_ms[1] = bad;
                let mut out = vec![TwoBoneSolved::default(); 32];
                let summary = TwoBoneJob::new(&chains, &mut out).with_path(path).run().unwrap();
                assert_eq!(summary.first_fallback, Some((victim, ChainError::NonFinite)));
                for i in (0..32).filter(|&i| i != victim) {
                    assert_eq!(out[i], batch[i], "{path}: neighbour {i} of {victim} changed");
                }
            }
        }
    }
}

/// Largest position difference (× chain length) and rotation/correction angle of the pseudo
/// three-bone batch result on `path` from the scalar one; panics on any record that is not
/// bit for bit the scalar one.
fn compare_three_bone(chains: &[ThreeBoneChain], path: CpuPath) -> (f32, f32) {
    let mut batch = vec![ThreeBoneSolved::default(); chains.len()];
    ThreeBoneJob::new(chains, &mut batch).with_path(path).run().unwrap();
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for (i, (c, b)) in chains.iter().zip(&batch).enumerate() {
        let mut s = ThreeBoneSolved::default();
        three_bone(c, &mut s);
        assert_eq!(b.status, s.status, "chain {i}: {c:?}");
        assert!(
            bytemuck::bytes_of(b) == bytemuck::bytes_of(&s),
            "{path}: three-bone chain {i} is not bit for bit the scalar result: {c:?}"
        );
        if s.error().is_some() || c.limb.weight() <= 0.0 {
            assert_eq!(b, &s, "fallback of chain {i} differs");
            continue;
        }
        let length: f32 = (0..3)
            .map(|j| c.joints_ms[j])
            .zip(1..4)
            .map(|(a, k)| {
                crowd_ik::glam::Vec3::from_slice(&a[..3])
                    .distance(crowd_ik::glam::Vec3::from_slice(&c.joints_ms[k][..3]))
            })
            .sum();
        for j in 0..4 {
            pos = pos.max(b.position(j).distance(s.position(j)) / length);
            rot = rot.max(quat_angle(b.rotation(j), s.rotation(j))).max(quat_angle(b.correction(j), s.correction(j)));
        }
    }
    (pos, rot)
}

/// Pseudo three-bone: bit for bit the scalar solver (`compare_three_bone`), on random
/// chains and the benchmark workload.
#[test]
fn three_bone_batch_matches_scalar_on_random_chains() {
    let mut rng = Rng(13);
    let chains: Vec<ThreeBoneChain> = (0..20_000).map(|_| random_three_bone(&mut rng)).collect();
    let bench = workload::three_bone(20_000, 2);
    for path in simd_paths() {
        let (pos, rot) = compare_three_bone(&chains, path);
        eprintln!("{path} three-bone random: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-4 && rot <= 1e-3, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
        let (pos, rot) = compare_three_bone(&bench, path);
        eprintln!("{path} three-bone workload: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-4 && rot <= 1e-3, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
        for n in 0..=72 {
            compare_three_bone(&chains[..n], path);
        }
        // Alone, among neighbours and reversed: bit for bit.
        let few = &chains[..300];
        let mut all = vec![ThreeBoneSolved::default(); few.len()];
        ThreeBoneJob::new(few, &mut all).with_path(path).run().unwrap();
        for (i, c) in few.iter().enumerate() {
            let mut alone = [ThreeBoneSolved::default()];
            ThreeBoneJob::new(std::slice::from_ref(c), &mut alone).with_path(path).run().unwrap();
            assert_eq!(alone[0], all[i], "{path}: three-bone chain {i}");
        }
        let rev: Vec<ThreeBoneChain> = few.iter().rev().copied().collect();
        let mut rev_out = vec![ThreeBoneSolved::default(); rev.len()];
        ThreeBoneJob::new(&rev, &mut rev_out).with_path(path).run().unwrap();
        assert!(rev_out.iter().rev().eq(all.iter()), "{path}");
    }
}

/// Largest position difference (× chain length) and rotation/correction angle of the FABRIK
/// batch result on `path` from the scalar one; panics on any record that is not bit for bit
/// the scalar one.
fn compare_fabrik(chains: &[FabrikChain], path: CpuPath) -> (f32, f32) {
    let mut batch = vec![FabrikSolved::default(); chains.len()];
    FabrikJob::new(chains, &mut batch).with_path(path).run().unwrap();
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for (i, (c, b)) in chains.iter().zip(&batch).enumerate() {
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::fabrik(c, &mut s);
        assert_eq!(b.status, s.status, "chain {i}: {c:?}");
        assert!(
            bytemuck::bytes_of(b) == bytemuck::bytes_of(&s),
            "{path}: FABRIK chain {i} is not bit for bit the scalar result: {c:?}"
        );
        let n = c.joint_count();
        if s.error().is_some() || c.target_ms[3] <= 0.0 {
            assert_eq!(b, &s, "fallback of chain {i} differs");
            continue;
        }
        let length: f32 = (0..n - 1).map(|j| c.joint(j).distance(c.joint(j + 1))).sum();
        for j in 0..n {
            pos = pos.max(b.position(j).distance(s.position(j)) / length);
            rot = rot.max(quat_angle(b.rotation(j), s.rotation(j))).max(quat_angle(b.correction(j), s.correction(j)));
        }
        for j in n..crowd_ik::MAX_FABRIK_JOINTS {
            assert!(b.positions_ms[j] == [0.0; 4] && b.rotations_ms[j] == [0.0; 4] && b.corrections[j] == [0.0; 4]);
        }
    }
    (pos, rot)
}

#[test]
fn fabrik_batch_matches_scalar_for_every_joint_count() {
    for path in simd_paths() {
        let mut rng = Rng(5);
        let mut worst = (0.0_f32, 0.0_f32);
        for n in [2, 3, 4, 5, 8, 9, 15, 16] {
            for iterations in [0, 1, 8, 16] {
                let mut chains = Vec::new();
                while chains.len() < 300 {
                    let c = random_fabrik(&mut rng, iterations);
                    if c.joint_count() == n {
                        chains.push(c);
                    }
                }
                let (pos, rot) = compare_fabrik(&chains, path);
                worst = (worst.0.max(pos), worst.1.max(rot));
            }
        }
        eprintln!("{path} fabrik: positions {:e} x length, rotations {:e} rad", worst.0, worst.1);
        assert!(worst.0 <= 1e-5 && worst.1 <= 1e-4, "{path}: {worst:?}");
        // Mixed joint counts in one group: the odd ones out go through the scalar solver.
        let mixed: Vec<FabrikChain> = (0..2000).map(|_| random_fabrik(&mut rng, 8)).collect();
        let (pos, rot) = compare_fabrik(&mixed, path);
        assert!(pos <= 1e-5 && rot <= 1e-4, "{path} mixed: {pos:e} {rot:e}");
        // Chains folded back on themselves (90° and 135° bends) that reach out:
        // bones flip direction, and the rotations are rebuilt down the chain on every path.
        let folded: Vec<FabrikChain> =
            (0..3000).map(|k| folded_fabrik(&mut rng, 2 + k % 15, [FRAC_PI_2, 0.75 * PI][k % 2], 16).0).collect();
        let (pos, rot) = compare_fabrik(&folded, path);
        assert!(pos <= 1e-5 && rot <= 1e-4, "{path} folded: {pos:e} {rot:e}");
        // Exactly 180°: a bone can end within ~1e-6 rad of reversed in its parent's frame,
        // where which perpendicular axis the half turn takes (so the roll about the bone)
        // is rounding; every path still lands the same positions and gives no bone roll.
        let exact: Vec<FabrikChain> = (0..3000).map(|k| folded_fabrik(&mut rng, 2 + k % 15, PI, 16).0).collect();
        let mut out = vec![FabrikSolved::default(); exact.len()];
        FabrikJob::new(&exact, &mut out).with_path(path).run().unwrap();
        for (c, b) in exact.iter().zip(&out) {
            let mut s = FabrikSolved::default();
            crowd_ik::cpu::fabrik(c, &mut s);
            assert_eq!(b.status, s.status, "{c:?}");
            let length: f32 = (0..c.joint_count() - 1).map(|j| c.joint(j).distance(c.joint(j + 1))).sum();
            for j in 0..c.joint_count() {
                assert!(b.position(j).distance(s.position(j)) <= 1e-5 * length, "{path} joint {j}: {c:?}");
            }
            assert!(fabrik_roll(c, b) < 1e-5, "{path}: a bone rolls: {c:?}");
        }
        for (joints, iterations) in [(4, 8), (8, 16)] {
            let (pos, rot) = compare_fabrik(&workload::fabrik(4000, joints, iterations, 3), path);
            assert!(pos <= 1e-5 && rot <= 1e-4, "{path} workload {joints}x{iterations}: {pos:e} {rot:e}");
        }
    }
}

#[test]
fn a_chain_solves_the_same_alone_or_among_any_neighbours() {
    let mut rng = Rng(21);
    let two: Vec<TwoBoneChain> = (0..500).map(|_| random_two_bone(&mut rng)).collect();
    let fab: Vec<FabrikChain> = (0..500)
        .map(|_| {
            let iterations = 1 + rng.below(3) * 7;
            random_fabrik(&mut rng, iterations)
        })
        .collect();
    for path in simd_paths() {
        let mut two_out = vec![TwoBoneSolved::default(); two.len()];
        TwoBoneJob::new(&two, &mut two_out).with_path(path).run().unwrap();
        let mut fab_out = vec![FabrikSolved::default(); fab.len()];
        FabrikJob::new(&fab, &mut fab_out).with_path(path).run().unwrap();
        for i in 0..two.len() {
            let mut alone = [TwoBoneSolved::default()];
            TwoBoneJob::new(&two[i..=i], &mut alone).with_path(path).run().unwrap();
            assert_eq!(alone[0], two_out[i], "{path}: two-bone chain {i}");
            let mut alone = [FabrikSolved::default()];
            FabrikJob::new(&fab[i..=i], &mut alone).with_path(path).run().unwrap();
            assert_eq!(alone[0], fab_out[i], "{path}: FABRIK chain {i} (mixed joint and iteration counts)");
        }
        // Reversed order: same result per chain, bit for bit.
        let rev: Vec<FabrikChain> = fab.iter().rev().copied().collect();
        let mut rev_out = vec![FabrikSolved::default(); rev.len()];
        FabrikJob::new(&rev, &mut rev_out).with_path(path).run().unwrap();
        assert!(rev_out.iter().rev().eq(fab_out.iter()), "{path}");
    }
}

#[test]
fn cpu_paths_resolve_and_report_what_this_cpu_lacks() {
    assert_eq!(CpuPath::Auto.resolve().unwrap(), CpuPath::best());
    assert!(CpuPath::Scalar.is_available() && CpuPath::best().is_available());
    for path in [CpuPath::Auto, CpuPath::Scalar, CpuPath::Avx2, CpuPath::Avx512] {
        assert_eq!(path.name().parse::<CpuPath>().unwrap(), path);
    }
    assert!(matches!("sse".parse::<CpuPath>(), Err(IkError::Parse(_))));
    let chains = workload::two_bone(40, 9);
    let mut scalar = vec![TwoBoneSolved::default(); chains.len()];
    TwoBoneJob::new(&chains, &mut scalar).with_path(CpuPath::Scalar).run().unwrap();
    for path in CpuPath::ALL {
        let mut out = vec![TwoBoneSolved::default(); chains.len()];
        let result = TwoBoneJob::new(&chains, &mut out).with_path(path).run_par();
        if path.is_available() {
            assert_eq!(result.unwrap().chains, 40);
            assert!(out.iter().zip(&scalar).all(|(a, b)| a.status == b.status));
        } else {
            assert!(matches!(result, Err(IkError::CpuPathUnavailable(p)) if p == path), "{path}");
            assert!(out.iter().all(|o| *o == TwoBoneSolved::default()), "{path}: nothing written");
        }
    }
}

/// Chains whose correction at full weight is a half turn (targets mirrored through the
/// start joint, exactly or within 1e-6 rad), solved at partial weight: which way the weight
/// turns is decided by the hemisphere rule (constants::HALF_TURN_W), the same on every
/// path, where the sign of `w` is rounding.
#[test]
fn partial_weights_of_half_turn_corrections_turn_the_same_way_on_every_path() {
    let mut rng = Rng(77);
    let two: Vec<TwoBoneChain> = (0..20_000).map(|k| reversed_two_bone(&mut rng, [0.0, 1e-6][k % 2])).collect();
    let three: Vec<ThreeBoneChain> = (0..20_000).map(|k| reversed_three_bone(&mut rng, [0.0, 1e-6][k % 2])).collect();
    for path in simd_paths() {
        let (pos, rot) = compare_two_bone(&two, path);
        eprintln!("{path} two-bone half turns at partial weight: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-5 && rot <= 1e-4, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
        let (pos, rot) = compare_three_bone(&three, path);
        eprintln!("{path} three-bone half turns at partial weight: positions {pos:e} x length, rotations {rot:e} rad");
        assert!(pos <= 1e-4 && rot <= 1e-3, "{path}: positions {pos:e} x length, rotations {rot:e} rad");
    }
}

/// `option::MIRRORED` on every CPU path: a random chain reflected (`x → −x`) and flagged
/// mirrored solves to the original's solution reflected, exactly (the reflection is exact
/// and the mirrored chain is solved as its unmirrored twin, which is the original).
#[test]
fn mirrored_chains_are_their_reflected_twins_exactly_on_every_path() {
    let mut rng = Rng(88);
    let two: Vec<TwoBoneChain> = (0..3000).map(|_| random_two_bone(&mut rng)).collect();
    let three: Vec<ThreeBoneChain> = (0..3000).map(|_| random_three_bone(&mut rng)).collect();
    let fab: Vec<FabrikChain> = (0..3000).map(|_| random_fabrik(&mut rng, 8)).collect();
    let two_m: Vec<TwoBoneChain> = two.iter().map(mirrored_two_bone).collect();
    let three_m: Vec<ThreeBoneChain> = three.iter().map(mirrored_three_bone).collect();
    let fab_m: Vec<FabrikChain> = fab.iter().map(mirrored_fabrik).collect();
    for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        let (mut a, mut b) = (vec![TwoBoneSolved::default(); two.len()], vec![TwoBoneSolved::default(); two.len()]);
        TwoBoneJob::new(&two, &mut a).with_path(path).run().unwrap();
        TwoBoneJob::new(&two_m, &mut b).with_path(path).run().unwrap();
        for i in 0..two.len() {
            assert_eq!(b[i], reflect_solved(&a[i], 3), "{path} two-bone {i}: {:?}", two[i]);
        }
        let (mut a, mut b) =
            (vec![ThreeBoneSolved::default(); three.len()], vec![ThreeBoneSolved::default(); three.len()]);
        ThreeBoneJob::new(&three, &mut a).with_path(path).run().unwrap();
        ThreeBoneJob::new(&three_m, &mut b).with_path(path).run().unwrap();
        for i in 0..three.len() {
            assert_eq!(b[i], reflect_solved(&a[i], 4), "{path} three-bone {i}: {:?}", three[i]);
        }
        let (mut a, mut b) = (vec![FabrikSolved::default(); fab.len()], vec![FabrikSolved::default(); fab.len()]);
        FabrikJob::new(&fab, &mut a).with_path(path).run().unwrap();
        FabrikJob::new(&fab_m, &mut b).with_path(path).run().unwrap();
        for i in 0..fab.len() {
            let n = fab[i].joint_count().min(crowd_ik::MAX_FABRIK_JOINTS);
            assert_eq!(b[i], reflect_solved(&a[i], n), "{path} fabrik {i}: {:?}", fab[i]);
        }
    }
}

/// The SIMD paths keep a group's lanes on the stack ("The CPU batch path" in docs/solvers.md
/// states how much): every batch job of every path runs on a thread with a 512 KiB stack
/// (chains of 16 joints, the largest lane arrays), so a regression in the frame size shows
/// here as a crash rather than in a user's engine thread.
#[test]
fn every_path_runs_on_a_512_kib_thread_stack() {
    for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let two = workload::two_bone(100, 1);
                TwoBoneJob::new(&two, &mut vec![TwoBoneSolved::default(); two.len()]).with_path(path).run().unwrap();
                let three = workload::three_bone(100, 2);
                ThreeBoneJob::new(&three, &mut vec![ThreeBoneSolved::default(); three.len()])
                    .with_path(path)
                    .run()
                    .unwrap();
                // A 32-joint tree (the multi-effector path's largest lane arrays).
                let joints: Vec<Vec3> = (0..32).map(|j| Vec3::new(0.1 * j as f32, 1.0, 0.0)).collect();
                let parents: Vec<usize> = (0..32).map(|j: usize| j.saturating_sub(1)).collect();
                let tree = MultiFabrikChain::new(&joints, &[Quat::IDENTITY; 32], &parents, 4)
                    .with_effector(31, Vec3::new(2.0, 2.0, 0.5), 1.0)
                    .with_effector(15, Vec3::new(1.0, 1.5, 0.2), 1.0);
                let trees = vec![tree; 100];
                let mut out = vec![MultiFabrikSolved::default(); trees.len()];
                MultiFabrikJob::new(&trees, &mut out).with_path(path).run().unwrap();
                assert!(out.iter().all(|o| o.error().is_none()));
                let look = workload::look_at(100, 4);
                LookAtJob::new(&look, &mut vec![LookAtSolved::default(); look.len()]).with_path(path).run().unwrap();
                let fabrik = workload::fabrik(100, 16, 4, 3);
                let mut out = vec![FabrikSolved::default(); fabrik.len()];
                FabrikJob::new(&fabrik, &mut out).with_path(path).run().unwrap();
                let limited = workload::limited(100, 16, 4, 3);
                ConstrainedFabrikJob::new(&limited, &mut out).with_path(path).run().unwrap();
                let ccd: Vec<CcdChain> = limited.iter().map(|c| CcdChain::new(c.chain, c.limits)).collect();
                CcdJob::new(&ccd, &mut out).with_path(path).run().unwrap();
            })
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("{path}: a batch job failed on a 512 KiB stack"));
    }
}
