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
