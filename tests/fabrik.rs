//! FABRIK behaviour (docs/ALGORITHMS.md, "FABRIK").

mod common;

use common::*;
use crowd_ik::cpu::{fabrik, fabrik_with_mode, CpuPath, FabrikMode};
use crowd_ik::glam::{DVec3, Quat, Vec3};
use crowd_ik::prelude::*;
use crowd_ik::MAX_FABRIK_JOINTS;

fn random_chain(rng: &mut Rng, n: usize) -> (Vec<Vec3>, Vec<Quat>, f32) {
    let mut j = vec![Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 1.0), rng.range(-1.0, 1.0))];
    let mut dir = rng.unit();
    let mut length = 0.0;
    for _ in 1..n {
        dir = (dir + rng.unit() * 0.6).normalize();
        let l = rng.range(0.1, 0.5);
        length += l;
        j.push(*j.last().unwrap() + dir * l);
    }
    let r = (0..n).map(|_| rng.quat()).collect();
    (j, r, length)
}

fn solve(c: &FabrikChain, mode: FabrikMode) -> FabrikSolved {
    let mut s = FabrikSolved::default();
    fabrik_with_mode(c, mode, &mut s);
    s
}

#[test]
fn converges_on_reachable_targets_and_keeps_bone_lengths() {
    let mut rng = Rng(31);
    let mut reached = 0;
    for n in [2usize, 3, 4, 8, 16] {
        for _ in 0..100 {
            let (j, r, length) = random_chain(&mut rng, n);
            // Closer than the longest bone minus the rest is out of reach too.
            let longest = (0..n - 1).map(|i| j[i].distance(j[i + 1])).fold(0.0, f32::max);
            let min_reach = (2.0 * longest - length).max(0.0);
            let target = j[0] + rng.unit() * rng.range(min_reach + 0.05 * length, 0.9 * length);
            let chain = FabrikChain::new(&j, &r, target, 256).with_precision(1e-5 * length);
            let s = solve(&chain, FabrikMode::Converge);
            assert_eq!(s.error(), None);
            for i in 0..n - 1 {
                let before = j[i].distance(j[i + 1]);
                let after = s.position(i).distance(s.position(i + 1));
                assert!((after - before).abs() <= 1e-5 * before, "n {n} bone {i}: {before} -> {after}");
            }
            assert_eq!(s.position(0), j[0], "fixed base");
            let err = s.position(n - 1).distance(target);
            // `reached` is judged on the solver's positions; the output is rebuilt from the
            // rotations, which moves the tip by rounding only.
            let precision = 1e-5 * length;
            if (err - precision).abs() > 1e-6 * length {
                assert_eq!(s.reached(), err <= precision, "err {err} precision {precision}");
            }
            reached += usize::from(s.reached());
            if n > 2 {
                assert!(err <= 1e-3 * length, "n {n}: tip error {err}");
            }
        }
    }
    assert!(reached > 350, "reached {reached} of 400 multi-bone chains");
}

#[test]
fn unreachable_targets_lay_the_chain_straight() {
    let mut rng = Rng(32);
    let (j, r, length) = random_chain(&mut rng, 6);
    let target = j[0] + Vec3::new(1.0, 2.0, 0.5).normalize() * length * 1.5;
    let s = solve(&FabrikChain::new(&j, &r, target, 8), FabrikMode::Fixed);
    assert!(!s.reached() && s.info() & info::OUT_OF_REACH != 0);
    let d = (target - j[0]).normalize();
    for i in 0..5 {
        assert!((s.position(i + 1) - s.position(i)).normalize().dot(d) > 1.0 - 1e-6);
    }
}

/// Textbook FABRIK positions (docs/ALGORITHMS.md, "FABRIK") in f64, written independently of the crate.
fn reference_positions(j: &[Vec3], target: Vec3, k: u32) -> Vec<Vec3> {
    let n = j.len();
    let j: Vec<DVec3> = j.iter().map(|p| p.as_dvec3()).collect();
    let target = target.as_dvec3();
    let len: Vec<f64> = (0..n - 1).map(|i| j[i].distance(j[i + 1])).collect();
    let mut p = j.clone();
    for _ in 0..k {
        p[n - 1] = target;
        for i in (0..n - 1).rev() {
            p[i] = p[i + 1] + (p[i] - p[i + 1]).normalize() * len[i];
        }
        p[0] = j[0];
        for i in 0..n - 1 {
            p[i + 1] = p[i] + (p[i + 1] - p[i]).normalize() * len[i];
        }
    }
    p.iter().map(|p| p.as_vec3()).collect()
}

#[test]
fn fixed_mode_runs_exactly_k_iterations() {
    let mut rng = Rng(33);
    let mut worst = 0.0_f32;
    for _ in 0..50 {
        let (j, r, length) = random_chain(&mut rng, 8);
        let target = j[0] + rng.unit() * 0.6 * length;
        for k in 0..12 {
            let chain = FabrikChain::new(&j, &r, target, k);
            let s = solve(&chain, FabrikMode::Fixed);
            let reference = reference_positions(&j, target, k);
            for (i, p) in reference.iter().enumerate() {
                worst = worst.max(s.position(i).distance(*p) / length);
                assert!(s.position(i).distance(*p) < 1e-5 * length, "k {k} joint {i}: {} vs {p}", s.position(i));
            }
            // The default entry point is the fixed mode.
            let mut default = FabrikSolved::default();
            fabrik(&chain, &mut default);
            assert_eq!(default, s);
        }
    }
    println!("worst relative deviation from the f64 reference: {worst:e}");
}

#[test]
fn rotations_turn_each_bone_onto_its_new_direction() {
    let mut rng = Rng(34);
    for _ in 0..100 {
        let (j, r, length) = random_chain(&mut rng, 5);
        let target = j[0] + rng.unit() * 0.7 * length;
        for keep in [false, true] {
            let s = solve(&FabrikChain::new(&j, &r, target, 16).with_keep_end_rotation(keep), FabrikMode::Fixed);
            for i in 0..4 {
                let local_bone = r[i].conjugate() * (j[i + 1] - j[i]);
                let new_bone = s.position(i + 1) - s.position(i);
                assert!((s.rotation(i) * local_bone).distance(new_bone) < 1e-5);
            }
            if keep {
                assert!(quat_angle(s.rotation(4), r[4]) < 1e-5);
            }
            let rebuilt = apply_corrections(&r, &(0..5).map(|i| s.correction(i)).collect::<Vec<_>>());
            for (i, q) in rebuilt.iter().enumerate() {
                assert!(quat_angle(*q, s.rotation(i)) < 1e-4);
            }
        }
    }
}

#[test]
fn bad_input_falls_back_and_flags() {
    let mut rng = Rng(35);
    let (j, r, _) = random_chain(&mut rng, 4);
    let good = FabrikChain::new(&j, &r, j[0] + Vec3::Y * 0.3, 8);
    let seventeen: Vec<Vec3> = (0..17).map(|i| Vec3::X * i as f32).collect();
    let too_many = FabrikChain::new(&seventeen, &[Quat::IDENTITY; 17], Vec3::Y, 8);
    let one = FabrikChain::new(&j[..1], &r[..1], Vec3::Y, 8);
    let mut zero_bone = good;
    zero_bone.joints_ms[2] = zero_bone.joints_ms[1];
    let on_root = FabrikChain::new(&j, &r, j[0], 8);
    let mut nan = good;
    nan.target_ms[1] = f32::NAN;
    let too_long = good.with_iterations(100_000);
    for (bad, error) in [
        (too_many, ChainError::JointCount),
        (one, ChainError::JointCount),
        (zero_bone, ChainError::ZeroLengthBone),
        (on_root, ChainError::TargetOnRoot),
        (nan, ChainError::NonFinite),
        (too_long, ChainError::InvalidParameter),
    ] {
        assert_eq!(crowd_ik::cpu::validate_fabrik(&bad), Err(error));
        let batch = [good, bad, good];
        let mut out = [FabrikSolved::default(); 3];
        let summary = FabrikJob::new(&batch, &mut out).run().unwrap();
        assert_eq!(summary.first_fallback, Some((1, error)));
        assert!(out[1].positions_ms.iter().flatten().all(|x| x.is_finite()));
        assert_eq!(out[0], out[2], "neighbours untouched");
    }
}

#[test]
fn validate_reports_the_same_error_as_run_when_a_chain_has_several() {
    let mut rng = Rng(36);
    let (j, r, _) = random_chain(&mut rng, 4);
    // Too many iterations and a zero-length bone: the iteration check comes first.
    let mut c = FabrikChain::new(&j, &r, j[0] + Vec3::Y * 0.3, 100_000);
    c.joints_ms[2] = c.joints_ms[1];
    let mut out = FabrikSolved::default();
    fabrik(&c, &mut out);
    assert_eq!(crowd_ik::cpu::validate_fabrik(&c), Err(ChainError::InvalidParameter));
    assert_eq!(out.error(), Some(ChainError::InvalidParameter));
}

/// Every solved record says how many joints it holds (`status.w`, `joints_written`) and
/// every slot past them is zero, on every CPU path, whatever the output buffer held
/// before (here: NaN) and whatever the chain (counts 2..=16, bad counts, errors, weight 0).
#[test]
fn records_hold_their_joint_count_and_zeros_past_it_on_every_path() {
    let mut rng = Rng(77);
    let mut chains: Vec<FabrikChain> = (0..400).map(|_| random_fabrik(&mut rng, 8)).collect();
    for (i, bad) in [0u32, 1, 17, u32::MAX].into_iter().enumerate() {
        chains[i * 13].mode[0] = bad;
    }
    let garbage = FabrikSolved {
        positions_ms: [[f32::NAN; 4]; MAX_FABRIK_JOINTS],
        rotations_ms: [[f32::NAN; 4]; MAX_FABRIK_JOINTS],
        corrections: [[f32::NAN; 4]; MAX_FABRIK_JOINTS],
        status: [7, 7, 7, 7],
    };
    for path in crowd_ik::cpu::CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        let mut out = vec![garbage; chains.len()];
        FabrikJob::new(&chains, &mut out).with_path(path).run().unwrap();
        for (i, (c, o)) in chains.iter().zip(&out).enumerate() {
            let n = (c.mode[0] as usize).min(MAX_FABRIK_JOINTS);
            assert_eq!(o.joints_written(), n, "{path}, chain {i}");
            for k in n..MAX_FABRIK_JOINTS {
                let slot = [o.positions_ms[k], o.rotations_ms[k], o.corrections[k]];
                assert!(slot.iter().flatten().all(|x| x.to_bits() == 0), "{path}, chain {i}, slot {k}: {slot:?}");
            }
        }
    }
    // Two-bone and three-bone records hold 3 and 4 joints, solved or not.
    let two = crowd_ik_tools::workload::two_bone(64, 5);
    let mut out = vec![TwoBoneSolved::default(); two.len()];
    TwoBoneJob::new(&two, &mut out).run().unwrap();
    assert!(out.iter().all(|o| o.joints_written() == 3));
    let three = crowd_ik_tools::workload::three_bone(64, 5);
    let mut out = vec![ThreeBoneSolved::default(); three.len()];
    ThreeBoneJob::new(&three, &mut out).run().unwrap();
    assert!(out.iter().all(|o| o.joints_written() == 4));
}

/// How much of a local correction `c` is roll about the bone whose joint-local direction is
/// `axis`: the component of `c`'s vector part along the bone (`sin` of half the twist of a
/// twist-only rotation; 0 for a pure swing, whose rotation axis is perpendicular to the
/// bone, however large the swing, half turns included).
fn roll_about(c: Quat, axis: Vec3) -> f32 {
    Vec3::new(c.x, c.y, c.z).dot(axis).abs()
}

#[test]
fn folded_chains_that_reach_out_get_no_roll_about_their_bones() {
    let mut rng = Rng(61);
    let mut worst = 0.0_f32;
    for bend in [std::f32::consts::FRAC_PI_2, std::f32::consts::PI, std::f32::consts::PI - 1e-3] {
        for _ in 0..300 {
            let n = 2 + rng.below(15) as usize;
            let (c, _) = folded_fabrik(&mut rng, n, bend, 16);
            let s = solve(&c, FabrikMode::Fixed);
            assert_eq!(s.error(), None, "{c:?}");
            let (j, r): (Vec<Vec3>, Vec<Quat>) = (0..n).map(|i| (c.joint(i), c.rotation(i))).unzip();
            for i in 0..n - 1 {
                // The bone lands on its new direction (positions and rotations agree) ...
                let local_bone = r[i].conjugate() * (j[i + 1] - j[i]);
                let new_bone = s.position(i + 1) - s.position(i);
                assert!((s.rotation(i) * local_bone).distance(new_bone) < 1e-5, "bone {i} of {c:?}");
                // ... by a swing only: no roll about its own axis.
                let twist = roll_about(s.correction(i), local_bone.normalize());
                worst = worst.max(twist);
                assert!(twist < 1e-5, "bend {bend}: bone {i} rolls (sin of half the roll {twist}): {c:?}");
            }
        }
    }
    eprintln!("folded chains: worst roll component {worst:e}");
}

#[test]
fn a_bone_that_keeps_its_place_under_its_parent_gets_the_identity() {
    // A straight chain thrown out of reach in any direction turns as one piece: only the
    // root bone's correction is not the identity. So does a chain bent by 90° whose root
    // flips by a half turn while the rest follows rigidly (the case where arcs taken in
    // model space gave the child a half turn of roll).
    let mut rng = Rng(62);
    for _ in 0..200 {
        let n = 2 + rng.below(15) as usize;
        let (mut c, length) = folded_fabrik(&mut rng, n, 0.0, 8);
        c.target_ms = (c.joint(0) + rng.unit() * 1.5 * length).extend(1.0).to_array();
        let s = solve(&c, FabrikMode::Fixed);
        // (The end joint keeps its FK model rotation when asked, so it is left out.)
        for i in 1..n - 1 {
            assert!(quat_angle(s.correction(i), Quat::IDENTITY) < 1e-5, "joint {i}: {:?}", s.correction(i));
        }
    }
    // Root along +X, child along +Y; the target straight out along −X flips the root bone
    // exactly (a half turn about Y) and the child must end along −X too.
    let j = [Vec3::ZERO, Vec3::X, Vec3::X + Vec3::Y];
    let r = [Quat::IDENTITY; 3];
    let s = solve(&FabrikChain::new(&j, &r, Vec3::new(-3.0, 0.0, 0.0), 8), FabrikMode::Fixed);
    assert!(s.position(2).distance(Vec3::new(-2.0, 0.0, 0.0)) < 1e-6, "{:?}", s.position(2));
    assert!(roll_about(s.correction(1), Vec3::Y) < 1e-6, "child rolls: {:?}", s.correction(1));
    assert!(roll_about(s.correction(0), Vec3::X) < 1e-6, "root rolls: {:?}", s.correction(0));
}

#[test]
fn extreme_targets_are_out_of_range_and_far_ones_keep_their_direction() {
    let j = [Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.5, 0.0), Vec3::new(2.5, 1.0, 0.3)];
    let r = [Quat::IDENTITY; 4];
    for (target, expected) in [
        (Vec3::new(1e20, 0.0, 0.0), Some(ChainError::OutOfRange)),
        (Vec3::new(0.0, -3e38, 0.0), Some(ChainError::OutOfRange)),
        (Vec3::new(-9e8, 1e8, 2e8), None),
        (Vec3::new(0.0, 0.0, 5e8), None),
    ] {
        let c = FabrikChain::new(&j, &r, target, 8);
        assert_eq!(crowd_ik::cpu::validate_fabrik(&c).err(), expected, "{target}");
        for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
            let batch = vec![c; 40];
            let mut out = vec![FabrikSolved::default(); batch.len()];
            FabrikJob::new(&batch, &mut out).with_path(path).run().unwrap();
            for o in &out {
                assert_eq!(o.error(), expected, "{target} on {path}");
                if expected.is_none() {
                    assert!(o.info() & info::OUT_OF_REACH != 0);
                    let reach = (o.position(3) - o.position(0)).normalize();
                    assert!(reach.dot(target.normalize()) > 0.9999, "{target} on {path}: {reach}");
                }
            }
        }
    }
    let mut reserved = FabrikChain::new(&j, &r, Vec3::new(1.0, 1.0, 1.0), 8);
    reserved.mode[3] = 7;
    assert_eq!(crowd_ik::cpu::validate_fabrik(&reserved), Err(ChainError::InvalidParameter));
}
