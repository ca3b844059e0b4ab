//! Raw-bytes property tests: valid chains with random words overwritten by arbitrary bits
//! (NaN and inf patterns, huge and tiny finite values, denormals, integers in the reserved
//! and mode words), cast straight into the records as a caller's buffer would be. Every
//! path must give the scalar reference's error code and finite output; the chains left
//! uncorrupted (ordinary, tiny or huge) must also match the scalar status words bit for
//! bit and its results within the twins' contract (`1e-4 ×` length, `1e-3` rad). A
//! corrupted chain that is still valid can be absurdly conditioned (an 8e5-unit bone
//! folded back to reach a target 1 unit from its root, where one ulp of its coordinates,
//! 0.06, is more than the margin of its `reached` test), so for those the reached and info
//! bits, positions and rotations are rounding, and only the error code and finiteness are
//! compared.

mod common;

use common::Rng;
use common::*;
use crowd_ik::cpu::CpuPath;
use crowd_ik::prelude::*;
use proptest::prelude::*;

fn finite_out<const N: usize>(s: &crowd_ik::SolvedChain<N>) -> bool {
    s.positions_ms.iter().chain(&s.rotations_ms).chain(&s.corrections).flatten().all(|x| x.is_finite())
}

fn simd_paths() -> Vec<CpuPath> {
    CpuPath::ALL.into_iter().filter(|p| *p != CpuPath::Scalar && p.is_available()).collect()
}

/// Largest position (× `scale`) and rotation difference between two solved chains.
fn diff<const N: usize>(
    a: &crowd_ik::SolvedChain<N>,
    b: &crowd_ik::SolvedChain<N>,
    n: usize,
    scale: f32,
) -> (f32, f32) {
    let (mut pos, mut rot) = (0.0_f32, 0.0_f32);
    for j in 0..n {
        pos = pos.max(a.position(j).distance(b.position(j)) / scale);
        rot = rot.max(quat_angle(a.rotation(j), b.rotation(j)));
    }
    (pos, rot)
}

/// The checks of this file for one batch: `solve` on the scalar path and every SIMD path;
/// `joints(c)` is the chain's joint positions (for its length and the joints compared).
fn agree_on_every_path<C: std::fmt::Debug, const N: usize>(
    chains: &[C],
    corrupted: &[bool],
    solve: impl Fn(&[C], CpuPath, &mut [crowd_ik::SolvedChain<N>]),
    joints: impl Fn(&C) -> Vec<crowd_ik::glam::Vec3>,
) -> Result<(), TestCaseError> {
    let mut scalar = vec![crowd_ik::SolvedChain::<N>::default(); chains.len()];
    solve(chains, CpuPath::Scalar, &mut scalar);
    for (c, s) in chains.iter().zip(&scalar) {
        prop_assert!(finite_out(s), "non-finite output for {:?}: {:?}", c, s);
    }
    for path in simd_paths() {
        let mut out = vec![crowd_ik::SolvedChain::<N>::default(); chains.len()];
        solve(chains, path, &mut out);
        for (((c, s), o), &bad) in chains.iter().zip(&scalar).zip(&out).zip(corrupted) {
            if bad {
                prop_assert_eq!(o.status[1], s.status[1], "{} error code of {:?}", path, c);
            } else {
                prop_assert_eq!(o.status, s.status, "{} status of {:?}", path, c);
            }
            let j = joints(c);
            let (pos, rot) = diff(s, o, j.len(), chain_length(j));
            prop_assert!(finite_out(o), "{} non-finite output for {:?}", path, c);
            prop_assert!(bad || (pos <= 1e-4 && rot <= 1e-3), "{} differs ({:e}, {:e}) on {:?}", path, pos, rot, c);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn two_bone_raw_records_agree_on_every_path(seed in any::<u64>()) {
        // Fields rescaled: joints, target, pole, offset.
        let (chains, corrupted) = raw_records(&mut Rng(seed), 256, random_two_bone, 3, &[6, 7, 11]);
        agree_on_every_path(&chains, &corrupted, |c, path, out| {
            TwoBoneJob::new(c, out).with_path(path).run().unwrap();
        }, |c| (0..3).map(|j| c.joint(j)).collect())?;
    }

    #[test]
    fn three_bone_raw_records_agree_on_every_path(seed in any::<u64>()) {
        // Fields rescaled: joints, target, pole.
        let (chains, corrupted) = raw_records(&mut Rng(seed), 256, random_three_bone, 4, &[8, 9]);
        agree_on_every_path(&chains, &corrupted, |c, path, out| {
            ThreeBoneJob::new(c, out).with_path(path).run().unwrap();
        }, |c| (0..4).map(|j| c.joint(j)).collect())?;
    }

    #[test]
    fn fabrik_raw_records_agree_on_every_path(seed in any::<u64>()) {
        // Fields rescaled: joints, target.
        let (chains, corrupted) = raw_records(&mut Rng(seed), 256, |rng| random_fabrik(rng, 8), 16, &[32]);
        agree_on_every_path(&chains, &corrupted, |c, path, out| {
            FabrikJob::new(c, out).with_path(path).run().unwrap();
        }, |c| (0..c.joint_count().min(crowd_ik::MAX_FABRIK_JOINTS)).map(|j| c.joint(j)).collect())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Foot placement over frames on raw bytes, as the `foot_placement` fuzz target does:
    /// walkers settled for a few frames, then their states, caller hits, poses and
    /// characters with words overwritten by arbitrary bits, and frame times drawn from 0,
    /// subnormal, tiny, ordinary, a hitch, huge, NaN, inf, negative and arbitrary bits.
    /// `crowd_ik_tools::hostile::check_frame`: a refused frame changes no state; otherwise
    /// every value finite, serial = parallel, and each character the same alone as among
    /// the others (a garbage state resets its character alone).
    #[test]
    fn foot_placement_survives_raw_states_frame_times_and_hits(seed in any::<u64>()) {
        use crowd_ik::crowd::*;
        use crowd_ik_tools::hostile::{check_frame, frame_time, Frame};
        let mut rng = Rng(seed);
        let mut placement = FootPlacement::default();
        for leg in &mut placement.legs {
            leg.plant = if rng.below(2) == 0 { PlantDetection::Weights } else { PlantDetection::Speed { enter: 0.5, exit: 0.8 } };
        }
        let rig = crowd_ik_tools::scene::biped_rig().with_placement(Some(placement));
        let hf = crowd_ik_tools::terrain::hills(crowd_ik::glam::Vec2::new(-20.0, -20.0), 0.5, 81, 81, 0.3);
        let crowd = crowd_ik_tools::scene::WalkingCrowd::new(6, 8.0, seed);
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        crowd.frame(&hf, &mut chars, &mut poses);
        let n = rig.joint_count();
        let use_hits = rng.below(2) == 0;
        let mut hits = Vec::new();
        if use_hits {
            for (c, ch) in chars.iter().enumerate() {
                for l in 0..MAX_LEGS {
                    let joint = rig.legs.get(l).map_or(0, |leg| leg.joints[2]);
                    let p = ch.to_world(poses[c * n + joint].position());
                    hits.push(hf.sample(p.x, p.z).map_or(GroundHit::miss(), |(h, nrm)| GroundHit::hit(crowd_ik::glam::Vec3::new(p.x, h, p.z), nrm)));
                }
            }
        }
        let ground = if use_hits { Ground::Hits } else { Ground::Heightfield(hf.clone()) };
        let mut states = vec![CharacterState::default(); chars.len()];
        {
            let frame = Frame { rig: &rig, ground: &ground, characters: &chars, poses: &poses, hits: &hits };
            for _ in 0..3 {
                check_frame(&frame, &mut states, 1.0 / 60.0);
            }
        }
        for s in &mut states {
            let count = rng.below(4);
            corrupt(&mut rng, s, count);
        }
        for h in &mut hits {
            if rng.below(4) == 0 {
                corrupt(&mut rng, h, 1);
            }
        }
        for (c, ch) in chars.iter_mut().enumerate() {
            if rng.below(4) == 0 {
                corrupt(&mut rng, ch, 1);
            }
            if rng.below(4) == 0 {
                let j = c * n + rng.below(n as u32) as usize;
                corrupt(&mut rng, &mut poses[j], 1);
            }
        }
        let frame = Frame { rig: &rig, ground: &ground, characters: &chars, poses: &poses, hits: &hits };
        for _ in 0..4 {
            check_frame(&frame, &mut states, frame_time(rng.below(256) as u8));
        }
    }
}
