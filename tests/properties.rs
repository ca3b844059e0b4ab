//! Property tests over random chains with ~10 % degenerate ones: never NaN or inf out for
//! finite input, `reached` exactly as the contract says, history independence, and
//! one-thread / all-threads equality.

mod common;

use common::*;
use crowd_ik::cpu::{fabrik, three_bone, two_bone};
use crowd_ik::prelude::*;
use proptest::prelude::*;

fn all_finite<const N: usize>(s: &crowd_ik::SolvedChain<N>) -> bool {
    s.positions_ms.iter().chain(&s.rotations_ms).chain(&s.corrections).flatten().all(|x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn two_bone_is_finite_and_keeps_its_reach_contract(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        for _ in 0..200 {
            let c = random_two_bone(&mut rng);
            let mut s = TwoBoneSolved::default();
            two_bone(&c, &mut s);
            prop_assert!(all_finite(&s), "non-finite output for {c:?}");
            // Its mirror image, flagged mirrored, solves to its solution reflected.
            let mut m = TwoBoneSolved::default();
            two_bone(&mirrored_two_bone(&c), &mut m);
            prop_assert_eq!(m, reflect_solved(&s, 3), "mirrored twin of {:?}", c);
            match crowd_ik::cpu::validate_two_bone(&c) {
                Err(e) => {
                    prop_assert_eq!(s.error(), Some(e));
                    prop_assert!(!s.reached());
                }
                Ok(()) => {
                    prop_assert_eq!(s.error(), None);
                    if let Some(expected) = two_bone_reach_contract(&c) {
                        prop_assert_eq!(s.reached(), expected, "contract broken for {:?} -> {:?}", c, s);
                    }
                    if s.reached() {
                        let length = c.joint(0).distance(c.joint(1)) + c.joint(1).distance(c.joint(2));
                        let contact = s.position(2) + s.rotation(2) * crowd_ik::glam::Vec3::from_slice(&c.effector_offset[..3]);
                        let expected_contact = if c.limb.mode[2] & option::KEEP_END_ROTATION != 0 {
                            c.limb.target()
                        } else {
                            // The offset rotates with the end joint: only the end joint is exact.
                            c.limb.target() - c.rotation(2) * crowd_ik::glam::Vec3::from_slice(&c.effector_offset[..3]) + s.rotation(2) * crowd_ik::glam::Vec3::from_slice(&c.effector_offset[..3])
                        };
                        prop_assert!(contact.distance(expected_contact) <= 2e-5 * length * c.limb.params[1].max(1.0));
                    }
                }
            }
        }
    }

    #[test]
    fn three_bone_and_fabrik_are_finite(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        for _ in 0..100 {
            let c = random_three_bone(&mut rng);
            let mut s = ThreeBoneSolved::default();
            three_bone(&c, &mut s);
            prop_assert!(all_finite(&s), "non-finite output for {c:?}");
            prop_assert_eq!(s.error(), crowd_ik::cpu::validate_three_bone(&c).err());
            let mut m = ThreeBoneSolved::default();
            three_bone(&mirrored_three_bone(&c), &mut m);
            prop_assert_eq!(m, reflect_solved(&s, 4), "mirrored twin of {:?}", c);
            let f = random_fabrik(&mut rng, 8);
            let mut fs = FabrikSolved::default();
            fabrik(&f, &mut fs);
            prop_assert!(all_finite(&fs), "non-finite output for {f:?}");
            prop_assert_eq!(fs.error(), crowd_ik::cpu::validate_fabrik(&f).err());
            let mut m = FabrikSolved::default();
            fabrik(&mirrored_fabrik(&f), &mut m);
            prop_assert_eq!(m, reflect_solved(&fs, f.joint_count().min(crowd_ik::MAX_FABRIK_JOINTS)), "mirrored twin of {:?}", f);
            // Folded back on itself (any bend up to a half turn): finite, and every bone's
            // correction is a swing (no roll about the bone).
            let n = 2 + rng.below(15) as usize;
            let bend = rng.range(0.0, std::f32::consts::PI);
            let (f, _) = folded_fabrik(&mut rng, n, bend, 8);
            fabrik(&f, &mut fs);
            prop_assert!(all_finite(&fs), "non-finite output for {f:?}");
            prop_assert_eq!(fs.error(), None);
            for i in 0..n - 1 {
                let axis = (f.rotation(i).conjugate() * (f.joint(i + 1) - f.joint(i))).normalize();
                let c = fs.correction(i);
                prop_assert!(crowd_ik::glam::Vec3::new(c.x, c.y, c.z).dot(axis).abs() < 1e-4, "bone {} rolls: {:?}", i, f);
            }
        }
    }

    #[test]
    fn results_do_not_depend_on_what_was_solved_before(seed in any::<u64>()) {
        // Solve a batch, then the same batch reversed and interleaved with other chains:
        // every chain's output is bit-identical.
        let mut rng = Rng(seed);
        let chains: Vec<TwoBoneChain> = (0..300).map(|_| random_two_bone(&mut rng)).collect();
        let mut a = vec![TwoBoneSolved::default(); chains.len()];
        TwoBoneJob::new(&chains, &mut a).run().unwrap();
        let mut mixed: Vec<TwoBoneChain> = chains.iter().rev().flat_map(|c| [random_two_bone(&mut rng), *c]).collect();
        mixed.reverse();
        let mut b = vec![TwoBoneSolved::default(); mixed.len()];
        TwoBoneJob::new(&mixed, &mut b).run_par().unwrap();
        for (i, s) in a.iter().enumerate() {
            prop_assert_eq!(bytemuck::bytes_of(s), bytemuck::bytes_of(&b[2 * i]));
        }
    }
}

#[test]
fn all_threads_equal_one_thread_bit_for_bit() {
    let mut rng = Rng(99);
    let two: Vec<TwoBoneChain> = (0..5000).map(|_| random_two_bone(&mut rng)).collect();
    let three: Vec<ThreeBoneChain> = (0..3000).map(|_| random_three_bone(&mut rng)).collect();
    let fab: Vec<FabrikChain> = (0..3000).map(|_| random_fabrik(&mut rng, 16)).collect();
    let (mut a, mut b) = (vec![TwoBoneSolved::default(); two.len()], vec![TwoBoneSolved::default(); two.len()]);
    let sa = TwoBoneJob::new(&two, &mut a).run().unwrap();
    let sb = TwoBoneJob::new(&two, &mut b).run_par().unwrap();
    assert_eq!(sa, sb);
    assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
    assert!(sa.fallbacks > 100 && sa.reached > 1000, "{sa:?}");
    let (mut a, mut b) = (vec![ThreeBoneSolved::default(); three.len()], vec![ThreeBoneSolved::default(); three.len()]);
    ThreeBoneJob::new(&three, &mut a).run().unwrap();
    ThreeBoneJob::new(&three, &mut b).run_par().unwrap();
    assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
    let (mut a, mut b) = (vec![FabrikSolved::default(); fab.len()], vec![FabrikSolved::default(); fab.len()]);
    FabrikJob::new(&fab, &mut a).run().unwrap();
    FabrikJob::new(&fab, &mut b).run_par().unwrap();
    assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
}
