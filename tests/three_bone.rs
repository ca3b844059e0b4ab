//! Pseudo three-bone IK behaviour (docs/ALGORITHMS.md, "Pseudo three-bone IK").

mod common;

use common::*;
use crowd_ik::cpu::three_bone;
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;

fn solve(c: &ThreeBoneChain) -> ThreeBoneSolved {
    let mut s = ThreeBoneSolved::default();
    three_bone(c, &mut s);
    s
}

/// A quadruped hind leg: hip, knee, hock, hoof tip; random rotations; knee hinge model −X
/// (the knee points forward, +Z: cross(hip→knee, −X)·(knee→hock) > 0).
fn hind_leg(rng: &mut Rng) -> ([Vec3; 4], [Quat; 4], Vec3) {
    let j =
        [Vec3::new(0.0, 1.2, 0.0), Vec3::new(0.0, 0.8, 0.25), Vec3::new(0.0, 0.45, -0.05), Vec3::new(0.0, 0.05, 0.02)];
    let r = [rng.quat(), rng.quat(), rng.quat(), rng.quat()];
    let axis = r[1].conjugate() * -Vec3::X;
    (j, r, axis)
}

#[test]
fn the_tip_reaches_for_every_blend_ratio_and_both_variants() {
    let mut rng = Rng(21);
    let mut count = 0;
    for _ in 0..400 {
        let (j, r, axis) = hind_leg(&mut rng);
        let target = j[3] + Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.05, 0.3), rng.range(-0.2, 0.2));
        for ratio in [0.0, 0.3, 0.7, 1.0] {
            for copy in [false, true] {
                let chain = ThreeBoneChain::new(j, r, target)
                    .with_mid_axis(axis)
                    .with_blend(ratio)
                    .with_copy_mid_rotation(copy);
                let s = solve(&chain);
                assert_eq!(s.error(), None);
                if s.reached() {
                    count += 1;
                    let length = (0..3).map(|i| j[i].distance(j[i + 1])).sum::<f32>();
                    assert!(s.position(3).distance(target) <= 1e-5 * length, "ratio {ratio} copy {copy}");
                }
                for i in 0..3 {
                    let before = j[i].distance(j[i + 1]);
                    let after = s.position(i).distance(s.position(i + 1));
                    assert!((after - before).abs() <= 1e-5 * before);
                }
            }
        }
    }
    assert!(count > 2000, "most targets are reachable: {count}");
}

#[test]
fn ratio_one_keeps_the_third_joint_fk_orientation() {
    let mut rng = Rng(22);
    let (j, r, axis) = hind_leg(&mut rng);
    let s = solve(&ThreeBoneChain::new(j, r, j[3] + Vec3::new(0.05, 0.15, 0.1)).with_mid_axis(axis).with_blend(1.0));
    assert!(s.reached());
    assert!(quat_angle(s.rotation(2), r[2]) < 1e-5);
}

#[test]
fn ratio_zero_keeps_the_local_rotation_under_the_second_joint() {
    let mut rng = Rng(23);
    let (j, r, axis) = hind_leg(&mut rng);
    let target = j[3] + Vec3::new(0.05, 0.15, 0.1);
    let s = solve(&ThreeBoneChain::new(j, r, target).with_mid_axis(axis).with_blend(0.0));
    assert!(s.reached());
    // The second pass moves j1 a little, so the local rotation is kept up to that move.
    let local_fk = r[1].conjugate() * r[2];
    let local_new = s.rotation(1).conjugate() * s.rotation(2);
    assert!(quat_angle(local_fk, local_new) < 0.2, "{}", quat_angle(local_fk, local_new));
    // The copy variant blends toward j1's new orientation itself.
    let c = solve(&ThreeBoneChain::new(j, r, target).with_mid_axis(axis).with_blend(0.0).with_copy_mid_rotation(true));
    assert!(c.reached());
    assert!(quat_angle(c.rotation(1), c.rotation(2)) < 0.2);
}

#[test]
fn corrections_reproduce_the_model_pose() {
    let mut rng = Rng(24);
    for _ in 0..200 {
        let (j, r, axis) = hind_leg(&mut rng);
        let target = j[3] + Vec3::new(rng.range(-0.2, 0.2), rng.range(0.0, 0.3), rng.range(-0.2, 0.2));
        let chain =
            ThreeBoneChain::new(j, r, target).with_mid_axis(axis).with_blend(rng.f()).with_weight(rng.range(0.3, 1.0));
        let s = solve(&chain);
        let rebuilt = apply_corrections(&r, &(0..4).map(|i| s.correction(i)).collect::<Vec<_>>());
        for (i, q) in rebuilt.iter().enumerate() {
            assert!(quat_angle(*q, s.rotation(i)) < 1e-4, "joint {i}");
        }
    }
}

#[test]
fn bad_input_falls_back_and_flags() {
    let mut rng = Rng(25);
    let (j, r, axis) = hind_leg(&mut rng);
    let good = ThreeBoneChain::new(j, r, j[3] + Vec3::Y * 0.1).with_mid_axis(axis);
    let mut zero_tip = good;
    zero_tip.joints_ms[3] = zero_tip.joints_ms[2];
    let bad_ratio = good.with_blend(1.5);
    let mut nan = good;
    nan.blend[0] = f32::NAN;
    for (bad, error) in [
        (zero_tip, ChainError::ZeroLengthBone),
        (bad_ratio, ChainError::InvalidParameter),
        (nan, ChainError::NonFinite),
    ] {
        assert_eq!(crowd_ik::cpu::validate_three_bone(&bad), Err(error));
        let s = solve(&bad);
        assert_eq!(s.error(), Some(error));
        assert!(!s.reached());
        assert_eq!(s.positions_ms[3][..3], bad.joints_ms[3][..3]);
    }
}
