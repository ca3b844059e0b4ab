//! The SoA batch path behind the CPU jobs against the scalar reference solvers: same status
//! words (reached, error code, info bits) for every chain, FK fallbacks bit for bit, and
//! positions / rotations / corrections within float rounding, over random chains of every
//! mode with ~10 % degenerate ones, at every batch length around the lane count.

mod common;

use common::*;
use crowd_ik::cpu::two_bone;
use crowd_ik::prelude::*;
use crowd_ik::workload;

/// Largest position difference (× limb length) and rotation/correction angle (rad) of a
/// batch result from the scalar one; panics on any status difference.
fn compare_two_bone(chains: &[TwoBoneChain]) -> (f32, f32) {
    let mut batch = vec![TwoBoneSolved::default(); chains.len()];
    TwoBoneJob::new(chains, &mut batch).run().unwrap();
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for (i, (c, b)) in chains.iter().zip(&batch).enumerate() {
        let mut s = TwoBoneSolved::default();
        two_bone(c, &mut s);
        assert_eq!(b.status, s.status, "chain {i}: {c:?}");
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
    let (pos, rot) = compare_two_bone(&chains);
    eprintln!("random: positions {pos:e} x length, rotations {rot:e} rad");
    assert!(pos <= 1e-5 && rot <= 1e-4, "positions {pos:e} x length, rotations {rot:e} rad");
    let bench = workload::two_bone(20_000, 1);
    let (pos, rot) = compare_two_bone(&bench);
    eprintln!("workload: positions {pos:e} x length, rotations {rot:e} rad");
    assert!(pos <= 1e-5 && rot <= 1e-4, "positions {pos:e} x length, rotations {rot:e} rad");
}

#[test]
fn two_bone_batch_of_every_length_around_the_lane_count() {
    let mut rng = Rng(11);
    let chains: Vec<TwoBoneChain> = (0..40).map(|_| random_two_bone(&mut rng)).collect();
    for n in 0..=chains.len() {
        compare_two_bone(&chains[..n]);
    }
}

#[test]
fn a_bad_chain_does_not_change_its_lane_neighbours() {
    let good = workload::two_bone(16, 3);
    let mut batch = vec![TwoBoneSolved::default(); 16];
    TwoBoneJob::new(&good, &mut batch).run().unwrap();
    for bad in [f32::NAN, f32::INFINITY] {
        for victim in [0, 5, 15] {
            let mut chains = good.clone();
            chains[victim].limb.target_ms[1] = bad;
            let mut out = vec![TwoBoneSolved::default(); 16];
            let summary = TwoBoneJob::new(&chains, &mut out).run().unwrap();
            assert_eq!(summary.first_fallback, Some((victim, ChainError::NonFinite)));
            for i in (0..16).filter(|&i| i != victim) {
                assert_eq!(out[i], batch[i], "neighbour {i} of {victim} changed");
            }
        }
    }
}

/// Largest position difference (× chain length) and rotation/correction angle of the FABRIK
/// batch result from the scalar one; panics on any status difference.
fn compare_fabrik(chains: &[FabrikChain]) -> (f32, f32) {
    let mut batch = vec![FabrikSolved::default(); chains.len()];
    FabrikJob::new(chains, &mut batch).run().unwrap();
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for (i, (c, b)) in chains.iter().zip(&batch).enumerate() {
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::fabrik(c, &mut s);
        assert_eq!(b.status, s.status, "chain {i}: {c:?}");
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
            let (pos, rot) = compare_fabrik(&chains);
            worst = (worst.0.max(pos), worst.1.max(rot));
        }
    }
    eprintln!("fabrik: positions {:e} x length, rotations {:e} rad", worst.0, worst.1);
    assert!(worst.0 <= 1e-5 && worst.1 <= 1e-4, "{worst:?}");
    // Mixed joint counts in one group: the odd ones out go through the scalar solver.
    let mixed: Vec<FabrikChain> = (0..2000).map(|_| random_fabrik(&mut rng, 8)).collect();
    let (pos, rot) = compare_fabrik(&mixed);
    assert!(pos <= 1e-5 && rot <= 1e-4, "mixed: {pos:e} {rot:e}");
    for (joints, iterations) in [(4, 8), (8, 16)] {
        let (pos, rot) = compare_fabrik(&workload::fabrik(4000, joints, iterations, 3));
        assert!(pos <= 1e-5 && rot <= 1e-4, "workload {joints}x{iterations}: {pos:e} {rot:e}");
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
    let mut two_out = vec![TwoBoneSolved::default(); two.len()];
    TwoBoneJob::new(&two, &mut two_out).run().unwrap();
    let mut fab_out = vec![FabrikSolved::default(); fab.len()];
    FabrikJob::new(&fab, &mut fab_out).run().unwrap();
    for i in 0..two.len() {
        let mut alone = [TwoBoneSolved::default()];
        TwoBoneJob::new(&two[i..=i], &mut alone).run().unwrap();
        assert_eq!(alone[0], two_out[i], "two-bone chain {i}");
        let mut alone = [FabrikSolved::default()];
        FabrikJob::new(&fab[i..=i], &mut alone).run().unwrap();
        assert_eq!(alone[0], fab_out[i], "FABRIK chain {i} (mixed joint and iteration counts)");
    }
    // Reversed order: same result per chain, bit for bit.
    let rev: Vec<FabrikChain> = fab.iter().rev().copied().collect();
    let mut rev_out = vec![FabrikSolved::default(); rev.len()];
    FabrikJob::new(&rev, &mut rev_out).run().unwrap();
    assert!(rev_out.iter().rev().eq(fab_out.iter()));
}
