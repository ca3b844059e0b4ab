//! Two-bone IK behaviour, one test per behaviour (ozz-animation's `ik_two_bone_job_tests`
//! plus this crate's extensions), each under ozz's parent transforms where it applies.

mod common;

use common::*;
use crowd_ik::cpu::two_bone;
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;
use std::f32::consts::{FRAC_PI_2, PI};

fn solve(c: &TwoBoneChain) -> TwoBoneSolved {
    let mut s = TwoBoneSolved::default();
    two_bone(c, &mut s);
    s
}

/// ozz's test chain: start (0,0,0), mid (0,1,0), end (1,1,0), hinge +Z.
fn ozz_chain(target: Vec3) -> TwoBoneChain {
    TwoBoneChain::new([Vec3::ZERO, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)], [Quat::IDENTITY; 3], target)
}

type PoleSetter = Box<dyn Fn(TwoBoneChain) -> TwoBoneChain>;

fn pole_modes(j: &[Vec3; 3], hinge: Vec3) -> Vec<(&'static str, PoleSetter)> {
    let knee_side = (j[1] - j[0]).normalize();
    let p0 = j[0];
    vec![
        ("fk plane", Box::new(|c: TwoBoneChain| c.with_fk_plane())),
        ("pole position", Box::new(move |c: TwoBoneChain| c.with_pole_position(p0 + knee_side + hinge * 0.3))),
        ("pole direction", Box::new(move |c: TwoBoneChain| c.with_pole_direction(knee_side - hinge * 0.2))),
        ("swivel", Box::new(move |c: TwoBoneChain| c.with_swivel(hinge, 0.7))),
        ("twist", Box::new(|c: TwoBoneChain| c.with_twist(0.4))),
    ]
}

#[test]
fn reaches_reachable_targets_under_every_parent_and_pole_mode() {
    let mut rng = Rng(1);
    let mut worst = 0.0_f32;
    for (name, m, t) in parents() {
        for _ in 0..200 {
            let (j, _, _) = random_limb(&mut rng);
            let hinge = (j[2] - j[1]).cross(j[0] - j[1]).normalize(); // correct-bend hinge
            let (jt, hinge_t) = transform_limb(m, t, j, hinge);
            // Picked after the parent: a non-uniform scale changes the bones unevenly.
            let target_t = reachable_target(&mut rng, &jt);
            let length = jt[0].distance(jt[1]) + jt[1].distance(jt[2]);
            for (mode, with) in pole_modes(&jt, hinge_t) {
                let chain = with(TwoBoneChain::new(jt, [Quat::IDENTITY; 3], target_t).with_mid_axis(hinge_t));
                let s = solve(&chain);
                if s.error() == Some(ChainError::PoleOnAxis) {
                    continue;
                }
                let err = s.position(2).distance(target_t) / length;
                worst = worst.max(err);
                assert!(err <= 1e-5, "{name}/{mode}: end {} target {target_t} err {err}", s.position(2));
                assert!(s.reached(), "{name}/{mode}: not reached");
                for (k, (p, q)) in [(0, 1), (1, 2)].into_iter().enumerate() {
                    let before = jt[p].distance(jt[q]);
                    let after = s.position(p).distance(s.position(q));
                    assert!((after - before).abs() <= 1e-5 * before, "{name}/{mode}: bone {k} {before} -> {after}");
                }
            }
        }
    }
    println!("worst relative end-effector error: {worst:e}");
}

#[test]
fn ozz_chain_reaches_and_keeps_fk_plane() {
    let s = solve(&ozz_chain(Vec3::new(0.0, 1.4, 0.0)));
    assert!(s.reached());
    assert!(s.position(2).distance(Vec3::new(0.0, 1.4, 0.0)) < 1e-6);
    // FK plane is z = 0 and the knee stays in it.
    assert!(s.position(1).z.abs() < 1e-6);
}

#[test]
fn pole_direction_puts_the_knee_on_the_pole_side() {
    let target = Vec3::new(1.0, 1.0, 0.0) * 0.9;
    for pole in [Vec3::Y, Vec3::Z, -Vec3::Z, Vec3::new(-1.0, 1.0, 0.3), -Vec3::Y] {
        let s = solve(&ozz_chain(target).with_pole_direction(pole));
        assert!(s.reached());
        let d = target.normalize();
        let knee_side = s.position(1) - d * s.position(1).dot(d);
        let pole_side = pole - d * pole.dot(d);
        assert!(knee_side.normalize().dot(pole_side.normalize()) > 1.0 - 1e-5, "pole {pole}: knee {}", s.position(1));
    }
}

#[test]
fn pole_position_is_relative_to_the_start_joint() {
    let offset = Vec3::new(5.0, 0.0, 0.0);
    let base = ozz_chain(Vec3::new(0.9, 0.9, 0.0)).with_pole_direction(Vec3::Z);
    let moved = TwoBoneChain::new(
        [offset, Vec3::Y + offset, Vec3::new(1.0, 1.0, 0.0) + offset],
        [Quat::IDENTITY; 3],
        Vec3::new(0.9, 0.9, 0.0) + offset,
    )
    .with_pole_position(offset + Vec3::Z * 3.0);
    let (a, b) = (solve(&base), solve(&moved));
    assert!((a.position(1) + offset).distance(b.position(1)) < 1e-5);
}

#[test]
fn twist_turns_the_knee_about_the_target_axis() {
    let target = Vec3::new(0.8, 0.8, 0.0);
    let plain = solve(&ozz_chain(target));
    let twisted = solve(&ozz_chain(target).with_twist(FRAC_PI_2));
    assert!(twisted.position(2).distance(target) < 1e-6, "twist keeps the end on the target");
    let d = target.normalize();
    let expected = Quat::from_axis_angle(d, FRAC_PI_2) * plain.position(1);
    assert!(twisted.position(1).distance(expected) < 1e-5, "{} vs {expected}", twisted.position(1));
}

#[test]
fn soften_eases_far_targets_and_reports_not_reached() {
    // Chain length 2, soften 0.8: targets beyond 1.6 are eased, never fully stretched.
    let mut previous = 0.0;
    for dist in [1.0_f32, 1.5, 1.61, 1.8, 2.0, 3.0, 10.0] {
        let target = Vec3::new(1.0, 1.0, 0.0).normalize() * dist;
        let s = solve(&ozz_chain(target).with_soften(0.8));
        let reach = s.position(2).length();
        assert!(reach < 2.0, "soften never reaches full extension: {reach}");
        assert!(reach >= previous, "reach grows with distance");
        previous = reach;
        assert_eq!(s.reached(), dist <= 1.6, "dist {dist}");
        if dist <= 1.6 {
            assert!((reach - dist).abs() < 1e-5);
        } else {
            assert!(s.info() & info::SOFTENED != 0);
        }
    }
}

#[test]
fn weight_zero_is_untouched_and_partial_weight_is_between() {
    let target = Vec3::new(0.3, 1.2, 0.5);
    let fk = ozz_chain(target).with_weight(0.0);
    let s0 = solve(&fk);
    assert!(!s0.reached());
    for i in 0..3 {
        assert_eq!(s0.correction(i), Quat::IDENTITY);
        assert_eq!(s0.position(i), fk.joint(i));
    }
    let s1 = solve(&ozz_chain(target));
    let half = solve(&ozz_chain(target).with_weight(0.5));
    assert!(!half.reached(), "weight < 1 never reports reached");
    let full_angle = quat_angle(s1.correction(0), Quat::IDENTITY);
    let half_angle = quat_angle(half.correction(0), Quat::IDENTITY);
    assert!(half_angle > 0.1 * full_angle && half_angle < 0.9 * full_angle);
    assert!(s1.corrections.iter().all(|q| q[3] >= 0.0), "corrections have w >= 0");
}

#[test]
fn knee_limits_hold_whatever_the_bone_ratio() {
    let mut rng = Rng(7);
    let (min, max) = (0.6_f32, 170.0_f32.to_radians());
    for _ in 0..2000 {
        let (j, r, axis) = random_limb(&mut rng);
        let target = j[0] + rng.unit() * rng.range(0.0, 1.5) * (j[0].distance(j[1]) + j[1].distance(j[2]));
        let s = solve(&TwoBoneChain::new(j, r, target).with_mid_axis(axis).with_knee_limits(min, max));
        if s.error().is_some() {
            continue;
        }
        let angle = inner_angle(s.position(0), s.position(1), s.position(2));
        assert!(angle >= min - 1e-4 && angle <= max + 1e-4, "inner angle {angle} outside [{min}, {max}]");
    }
}

#[test]
fn the_knee_never_bends_backwards_about_its_hinge() {
    let mut rng = Rng(11);
    for i in 0..2000 {
        let (j, r, axis) = random_limb(&mut rng);
        let target = j[0] + rng.unit() * rng.range(0.1, 1.2) * (j[0].distance(j[1]) + j[1].distance(j[2]));
        // Half the FK poses are bent backwards (the hinge points the other way).
        let axis = if i % 2 == 0 { axis } else { -axis };
        let s = solve(&TwoBoneChain::new(j, r, target).with_mid_axis(axis).with_pole_direction(rng.unit()));
        if s.error().is_some() {
            continue;
        }
        let hinge = s.rotation(1) * axis;
        let u = s.position(1) - s.position(0);
        let v = s.position(2) - s.position(1);
        let side = u.cross(hinge).dot(v) / (u.length() * v.length());
        assert!(side >= -1e-4, "bent backwards: {side}");
    }
}

#[test]
fn bend_modes_choose_the_side() {
    // FK knee bent backwards about +Z: (1,1,0) end with hinge -Z.
    let target = Vec3::new(0.9, 0.9, 0.0);
    let chain = ozz_chain(target).with_mid_axis(-Vec3::Z);
    let hinge_side = |s: &TwoBoneSolved| {
        let u = s.position(1) - s.position(0);
        let v = s.position(2) - s.position(1);
        u.cross(-Vec3::Z).dot(v).signum()
    };
    assert_eq!(hinge_side(&solve(&chain.with_bend(BendMode::Hinge))), 1.0);
    assert_eq!(hinge_side(&solve(&chain.with_bend(BendMode::KeepFk))), -1.0);
    assert_eq!(hinge_side(&solve(&chain.with_bend(BendMode::Reversed))), -1.0);
    // A straight FK limb bends the hinge's way in Hinge and KeepFk modes.
    let straight = TwoBoneChain::new([Vec3::ZERO, Vec3::Y, Vec3::Y * 2.0], [Quat::IDENTITY; 3], Vec3::Y * 1.5);
    for bend in [BendMode::Hinge, BendMode::KeepFk] {
        let s = solve(&straight.with_bend(bend));
        assert!(s.reached());
        assert!(s.position(1).x < -0.1, "{bend:?}: knee {}", s.position(1)); // cross(+Z, +Y) = -X
    }
}

/// A FK pose bent against the mid axis is reported (`info::AGAINST_HINGE`) in the modes that
/// bend the limb the hinge's way regardless of the pose; a straight or slightly
/// hyperextended limb is not, nor is anything in `KeepFk` mode. The SIMD batch paths and the
/// GPU kernel report the same bits (their twin tests compare status words on random limbs).
#[test]
fn a_pose_bent_against_the_hinge_is_reported() {
    let flagged = |c: &TwoBoneChain| solve(c).info() & info::AGAINST_HINGE != 0;
    let target = Vec3::new(0.9, 0.9, 0.0);
    // ozz's chain bends the +Z hinge's way (90°).
    for (axis, hinge, keep, reversed) in [(Vec3::Z, false, false, true), (-Vec3::Z, true, false, false)] {
        let chain = ozz_chain(target).with_mid_axis(axis);
        assert_eq!(flagged(&chain.with_bend(BendMode::Hinge)), hinge, "{axis} Hinge");
        assert_eq!(flagged(&chain.with_bend(BendMode::KeepFk)), keep, "{axis} KeepFk");
        assert_eq!(flagged(&chain.with_bend(BendMode::Reversed)), reversed, "{axis} Reversed");
    }
    // Hyperextended by `deg` about the +Z hinge (the end swings toward -X), under a random
    // parent rotation: flagged past ~11.5° only.
    let mut rng = Rng(17);
    for (deg, expected) in [(0.0_f32, false), (5.0, false), (10.0, false), (13.0, true), (60.0, true)] {
        let q = rng.quat();
        let back = Quat::from_rotation_z(deg.to_radians()) * Vec3::Y;
        let j = [Vec3::ZERO, Vec3::Y, Vec3::Y + back].map(|p| q * p);
        let chain = TwoBoneChain::new(j, [q; 3], q * Vec3::new(0.5, 1.2, 0.0)).with_mid_axis(Vec3::Z);
        assert_eq!(flagged(&chain), expected, "hyperextended by {deg}°");
        let s = solve(&chain);
        assert!(s.error().is_none() && s.reached(), "{deg}°: still solved");
    }
}

#[test]
fn corrections_applied_to_local_pose_reproduce_model_output() {
    let mut rng = Rng(3);
    for _ in 0..500 {
        let (j, r, axis) = random_limb(&mut rng);
        let chain = TwoBoneChain::new(j, r, reachable_target(&mut rng, &j))
            .with_mid_axis(axis)
            .with_weight(rng.range(0.2, 1.2))
            .with_keep_end_rotation(rng.below(2) == 0);
        let s = solve(&chain);
        let rebuilt = apply_corrections(&r, &[s.correction(0), s.correction(1), s.correction(2)]);
        for (i, q) in rebuilt.iter().enumerate() {
            assert!(quat_angle(*q, s.rotation(i)) < 1e-3, "joint {i}");
        }
        // Bones follow their rotations.
        for i in 0..2 {
            let fk_bone = r[i].conjugate() * (j[i + 1] - j[i]);
            let new_bone = s.position(i + 1) - s.position(i);
            assert!((s.rotation(i) * fk_bone).distance(new_bone) < 1e-4);
        }
    }
}

#[test]
fn effector_offset_puts_the_contact_point_on_the_target() {
    let mut rng = Rng(5);
    for _ in 0..300 {
        let (j, r, axis) = random_limb(&mut rng);
        let offset = rng.unit() * 0.1;
        let contact_target = reachable_target(&mut rng, &j) + r[2] * offset;
        let chain = TwoBoneChain::new(j, r, contact_target)
            .with_mid_axis(axis)
            .with_effector_offset(offset)
            .with_keep_end_rotation(true);
        let s = solve(&chain);
        let contact = s.position(2) + s.rotation(2) * offset;
        assert!(contact.distance(contact_target) < 2e-5, "{contact} vs {contact_target}");
        assert!(quat_angle(s.rotation(2), r[2]) < 1e-4, "end keeps its FK rotation");
    }
}

#[test]
fn stretch_reaches_far_targets_up_to_the_max_scale() {
    let chain = |d: f32| ozz_chain(Vec3::new(1.0, 1.0, 0.0).normalize() * d).with_stretch(1.2);
    let s = solve(&chain(2.2));
    assert!(s.reached() && s.info() & info::STRETCHED != 0);
    assert!((s.position(2).length() - 2.2).abs() < 1e-5);
    assert!((s.position(1).length() - 1.1).abs() < 1e-5, "bones scale together");
    let far = solve(&chain(3.0));
    assert!(!far.reached());
    assert!((far.position(2).length() - 2.4).abs() < 1e-5);
}

#[test]
fn swivel_zero_keeps_a_goal_in_the_setup_plane_in_that_plane() {
    // Setup plane z = 0, north +Z (the hinge). Goals in the plane keep the chain in it.
    for angle in [0.3_f32, 1.0, 2.0, -0.7] {
        let target = Vec3::new(angle.cos(), angle.sin(), 0.0) * 1.3;
        let s = solve(&ozz_chain(target).with_swivel(Vec3::Z, 0.0));
        assert!(s.position(1).z.abs() < 1e-5 && s.reached(), "goal {target}: knee {}", s.position(1));
        // The swivel angle turns the plane about the goal axis by that angle.
        let turned = solve(&ozz_chain(target).with_swivel(Vec3::Z, 0.5));
        let d = target.normalize();
        let expected = Quat::from_axis_angle(d, 0.5) * s.position(1);
        assert!(turned.position(1).distance(expected) < 1e-5);
    }
    // At the singular point (goal along the north axis) the fixed fallback is used and flagged.
    let s = solve(&ozz_chain(Vec3::Z * 1.3).with_swivel(Vec3::Z, 0.0));
    assert!(s.reached() && s.info() & info::SWIVEL_FALLBACK != 0);
}

#[test]
fn swivel_is_history_independent_along_a_closed_goal_path() {
    // A goal circling the start and coming back gives the same pose it started with.
    let path: Vec<Vec3> = (0..=64)
        .map(|k| {
            let t = k as f32 / 64.0 * 2.0 * PI;
            Vec3::new(t.cos(), 0.3 * (2.0 * t).sin(), t.sin() * 0.8) * 1.2
        })
        .collect();
    let first = solve(&ozz_chain(path[0]).with_swivel(Vec3::Z, 0.2));
    for p in &path {
        let _ = solve(&ozz_chain(*p).with_swivel(Vec3::Z, 0.2));
    }
    let again = solve(&ozz_chain(path[0]).with_swivel(Vec3::Z, 0.2));
    assert_eq!(bytemuck::bytes_of(&first), bytemuck::bytes_of(&again));
    // And the closing point (equal to the first up to f32 rounding of cos/sin 2π) is close.
    let closing = solve(&ozz_chain(path[64]).with_swivel(Vec3::Z, 0.2));
    assert!(closing.position(1).distance(first.position(1)) < 1e-5);
}

#[test]
fn bad_input_is_an_error_at_the_boundary_and_a_flagged_fallback_in_a_batch() {
    let good = ozz_chain(Vec3::new(0.5, 1.2, 0.0));
    let mut nan = good;
    nan.limb.target_ms[0] = f32::NAN;
    let mut inf = good;
    inf.joints_ms[1][2] = f32::INFINITY;
    let mut zero_bone = good;
    zero_bone.joints_ms[1] = zero_bone.joints_ms[0];
    let on_root = good.with_target(Vec3::ZERO);
    let pole_on_axis = good.with_pole_direction(Vec3::new(0.5, 1.2, 0.0));
    let pole_pos_on_axis = good.with_pole_position(Vec3::new(1.0, 2.4, 0.0));
    let mut bad_quat = good;
    bad_quat.rotations_ms[0] = [0.0, 0.0, 0.0, 2.0];
    let bad_soften = good.with_soften(1.5);
    let bad_limits = good.with_knee_limits(2.0, 1.0);
    let axis_in_plane = good.with_mid_axis(Vec3::X);
    let mut bad_mode = good;
    bad_mode.limb.mode[0] = 9;
    let cases = [
        (nan, ChainError::NonFinite),
        (inf, ChainError::NonFinite),
        (zero_bone, ChainError::ZeroLengthBone),
        (on_root, ChainError::TargetOnRoot),
        (pole_on_axis, ChainError::PoleOnAxis),
        (pole_pos_on_axis, ChainError::PoleOnAxis),
        (bad_quat, ChainError::NotNormalized),
        (bad_soften, ChainError::InvalidParameter),
        (bad_limits, ChainError::InvalidParameter),
        (axis_in_plane, ChainError::DegenerateMidAxis),
        (bad_mode, ChainError::InvalidParameter),
    ];
    // The same chain with good neighbours, through the same batch path (which equals the
    // scalar `solve` to float rounding, tests/wide.rs).
    let mut clean = [TwoBoneSolved::default(); 3];
    TwoBoneJob::new(&[good; 3], &mut clean).run().unwrap();
    let expected_good = clean[0];
    for (bad, error) in cases {
        assert_eq!(crowd_ik::cpu::validate_two_bone(&bad), Err(error));
        let batch = [good, bad, good];
        let mut out = [TwoBoneSolved::default(); 3];
        assert_eq!(TwoBoneJob::new(&batch, &mut out).validate(), Err(IkError::InvalidChain { index: 1, error }));
        let summary = TwoBoneJob::new(&batch, &mut out).run().unwrap();
        assert_eq!(summary.fallbacks, 1);
        assert_eq!(summary.first_fallback, Some((1, error)));
        assert_eq!(out[1].error(), Some(error));
        assert!(!out[1].reached());
        for i in 0..3 {
            assert_eq!(out[1].correction(i), Quat::IDENTITY);
            let fk = bad.joints_ms[i];
            let expected = if fk.iter().all(|x| x.is_finite()) { fk[..3].to_vec() } else { vec![0.0; 3] };
            assert_eq!(out[1].positions_ms[i][..3], expected[..], "{error:?}: FK pose kept, non-finite values zeroed");
            assert!(out[1].positions_ms.iter().chain(&out[1].rotations_ms).flatten().all(|x| x.is_finite()));
        }
        assert_eq!(out[0], expected_good, "neighbours untouched");
        assert_eq!(out[2], expected_good, "neighbours untouched");
    }
}

#[test]
fn mismatched_slices_are_an_error() {
    let chains = [ozz_chain(Vec3::ONE); 3];
    let mut out = [TwoBoneSolved::default(); 2];
    assert_eq!(TwoBoneJob::new(&chains, &mut out).run(), Err(IkError::LengthMismatch { chains: 3, outputs: 2 }));
    let mut none: [TwoBoneSolved; 0] = [];
    let summary = TwoBoneJob::new(&[], &mut none).run().unwrap();
    assert_eq!(summary.chains, 0, "an empty batch is a no-op");
}

#[test]
fn target_too_close_folds_the_knee_and_is_not_reached() {
    let chain = TwoBoneChain::new([Vec3::ZERO, Vec3::Y, Vec3::new(0.5, 1.0, 0.0)], [Quat::IDENTITY; 3], Vec3::X * 0.2);
    let s = solve(&chain);
    assert!(!s.reached() && s.info() & info::OUT_OF_REACH != 0);
    assert!(s.positions_ms.iter().flatten().all(|x| x.is_finite()));
    // Folded as far as it goes: the end lies at |a − b| from the start, toward the target.
    assert!((s.position(2).length() - 0.5).abs() < 1e-5);
}

/// Swivel and twist angles past ±`MAX_ANGLE` (1e4 rad) are `InvalidParameter` on every CPU
/// path, never NaN "reached" (their reduction to one turn loses the angle); up to the limit
/// they solve to finite output.
#[test]
fn huge_swivel_and_twist_angles_are_invalid_never_nan() {
    use crowd_ik::constants::MAX_ANGLE;
    let good = ozz_chain(Vec3::new(0.5, 1.2, 0.0));
    let swivel = |a: f32| good.with_swivel(Vec3::Z, a);
    let twist = |a: f32| good.with_twist(a);
    for angle in [MAX_ANGLE, -MAX_ANGLE, 9_999.5, 123.25] {
        for chain in [swivel(angle), twist(angle)] {
            let out = solve(&chain);
            assert_eq!(out.error(), None, "{angle}");
            assert!(out.positions_ms.iter().chain(&out.rotations_ms).flatten().all(|x| x.is_finite()), "{angle}");
        }
    }
    // A huge swivel in a mode that ignores `pole_ms.w` is not an error.
    let mut direction = good.with_pole_direction(Vec3::Z);
    direction.limb.pole_ms[3] = 1e20;
    assert_eq!(crowd_ik::cpu::validate_two_bone(&direction), Ok(()));
    for angle in [1.0001e4, -2e4, 1e12, -1e18, 1e20, f32::MAX, -f32::MAX] {
        for chain in [swivel(angle), twist(angle)] {
            assert_eq!(crowd_ik::cpu::validate_two_bone(&chain), Err(ChainError::InvalidParameter), "{angle}");
            for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
                let batch = vec![chain; 40];
                let mut out = vec![TwoBoneSolved::default(); batch.len()];
                TwoBoneJob::new(&batch, &mut out).with_path(path).run().unwrap();
                for o in &out {
                    assert_eq!(o.error(), Some(ChainError::InvalidParameter), "{angle} on {path}");
                    assert!(!o.reached());
                    assert!(o.positions_ms.iter().chain(&o.rotations_ms).flatten().all(|x| x.is_finite()));
                }
            }
        }
    }
}

#[test]
fn extreme_coordinates_are_out_of_range_never_a_silent_wrong_answer() {
    use crowd_ik::constants::MAX_COORDINATE;
    let good = ozz_chain(Vec3::new(0.5, 1.2, 0.0));
    let with = |f: &dyn Fn(&mut TwoBoneChain)| {
        let mut c = good;
        f(&mut c);
        c
    };
    let cases: Vec<(&str, TwoBoneChain, Option<ChainError>)> = vec![
        ("target 1e20", good.with_target(Vec3::new(1e20, 0.0, 0.0)), Some(ChainError::OutOfRange)),
        ("target -3e38", good.with_target(Vec3::new(0.0, -3e38, 1.0)), Some(ChainError::OutOfRange)),
        (
            "target just past",
            good.with_target(Vec3::new(0.0, 0.0, 1.01 * MAX_COORDINATE)),
            Some(ChainError::OutOfRange),
        ),
        ("pole position 1e30", good.with_pole_position(Vec3::new(1e30, 1.0, 0.0)), Some(ChainError::OutOfRange)),
        ("pole direction 1e12", good.with_pole_direction(Vec3::new(0.0, 0.0, 1e12)), Some(ChainError::OutOfRange)),
        ("hinge 1e19", good.with_mid_axis(Vec3::new(0.0, 0.0, 1e19)), Some(ChainError::OutOfRange)),
        ("offset f32::MAX", good.with_effector_offset(Vec3::new(0.0, 0.0, f32::MAX)), Some(ChainError::OutOfRange)),
        ("joint 1e10", with(&|c| c.joints_ms[1][1] = 1e10), Some(ChainError::OutOfRange)),
        ("reserved word", with(&|c| c.limb.mode[3] = 1), Some(ChainError::InvalidParameter)),
        // In range, however far: solved, out of reach, straight toward the target.
        ("target 9e8", good.with_target(Vec3::new(9e8, 3e8, -1e8)), None),
        ("pole direction 1e8", good.with_pole_direction(Vec3::new(0.0, 0.0, 1e8)), None),
    ];
    for (what, chain, expected) in cases {
        assert_eq!(crowd_ik::cpu::validate_two_bone(&chain).err(), expected, "{what}");
        for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
            let batch = vec![chain; 40];
            let mut out = vec![TwoBoneSolved::default(); batch.len()];
            TwoBoneJob::new(&batch, &mut out).with_path(path).run().unwrap();
            for o in &out {
                assert_eq!(o.error(), expected, "{what} on {path}");
                assert!(o.positions_ms.iter().chain(&o.rotations_ms).flatten().all(|x| x.is_finite()), "{what}");
                if expected.is_none() && what.starts_with("target") {
                    let toward = (chain.limb.target() - chain.joint(0)).normalize();
                    let reach = (o.position(2) - o.position(0)).normalize();
                    assert!(reach.dot(toward) > 0.9999, "{what} on {path}: reaches {reach}, not {toward}");
                    assert!(!o.reached());
                }
            }
        }
    }
}

/// A nearly straight limb that the pose bends a little sideways to its hinge (the bones'
/// plane holds the hinge: a knee the animation twists while nearly straight) solves about
/// the bones' own axis, reaching the target on every CPU path; bent further in such a
/// plane, its hinge is wrong and it stays an error.
#[test]
fn a_nearly_straight_limb_bent_sideways_to_its_hinge_solves() {
    for degrees in [0.5_f32, 2.0, 5.0, 10.0] {
        let t = degrees.to_radians();
        // Bones along +Y, the end bent toward +X; the hinge +X lies in their plane.
        let joints = [Vec3::ZERO, Vec3::Y, Vec3::Y + Vec3::new(t.sin(), t.cos(), 0.0)];
        let chain = TwoBoneChain::new(joints, [Quat::IDENTITY; 3], Vec3::new(0.3, 1.5, 0.4)).with_mid_axis(Vec3::X);
        assert_eq!(crowd_ik::cpu::validate_two_bone(&chain), Ok(()), "{degrees}°");
        let s = solve(&chain);
        assert!(s.error().is_none() && s.reached(), "{degrees}°: {:?}", s.error());
        assert!(s.position(2).distance(Vec3::new(0.3, 1.5, 0.4)) < 1e-5, "{degrees}°");
        // The batch (SIMD where the machine has it) solves it too.
        let mut out = [TwoBoneSolved::default(); 8];
        TwoBoneJob::new(&[chain; 8], &mut out).run().unwrap();
        assert!(out.iter().all(|o| o.error().is_none() && o.position(2).distance(s.position(2)) < 1e-5), "{degrees}°");
    }
    let t = 30f32.to_radians();
    let joints = [Vec3::ZERO, Vec3::Y, Vec3::Y + Vec3::new(t.sin(), t.cos(), 0.0)];
    let chain = TwoBoneChain::new(joints, [Quat::IDENTITY; 3], Vec3::new(0.3, 1.5, 0.4)).with_mid_axis(Vec3::X);
    assert_eq!(crowd_ik::cpu::validate_two_bone(&chain), Err(ChainError::DegenerateMidAxis));
}

/// A swivel of many turns is the swivel of its remainder within one turn: the f32 angle is
/// reduced with 2π in two parts (`TAU_HI`, `TAU_LO`) to ~1e-6 rad of the exact reduction
/// (one f32 `2π` was ~3e-4 rad off at 1e4 rad), and a GPU that fuses the multiply into the
/// subtraction rounds the same.
#[test]
fn many_turn_swivels_reduce_to_one_turn() {
    let good = ozz_chain(Vec3::new(0.5, 1.2, 0.0));
    let length = good.joint(0).distance(good.joint(1)) + good.joint(1).distance(good.joint(2));
    for angle in [9_999.5_f32, -7_777.25, 1_234.567_8, 10_000.0, -10_000.0] {
        let one_turn = f64::from(angle).rem_euclid(std::f64::consts::TAU) as f32;
        let (many, one) = (solve(&good.with_swivel(Vec3::Z, angle)), solve(&good.with_swivel(Vec3::Z, one_turn)));
        for j in 0..3 {
            let apart = many.position(j).distance(one.position(j)) / length;
            assert!(apart <= 3e-6, "{angle} rad: joint {j} {apart:e} x length from {one_turn} rad");
        }
    }
}

/// A swivel axis shorter than 1e-12 (`MIN_AXIS_LENGTH2`) is `InvalidParameter` on every CPU
/// path: its squares would be near the subnormals a GPU may flush to zero.
#[test]
fn a_vanishing_swivel_axis_is_invalid() {
    let good = ozz_chain(Vec3::new(0.5, 1.2, 0.0));
    for (axis, expected) in [
        (Vec3::new(1e-13, 0.0, 0.0), Err(ChainError::InvalidParameter)),
        (Vec3::new(3e-20, -2e-20, 1e-20), Err(ChainError::InvalidParameter)),
        (Vec3::ZERO, Err(ChainError::InvalidParameter)),
        (Vec3::new(0.0, 2e-12, 0.0), Ok(())),
    ] {
        let mut chain = good.with_swivel(Vec3::Z, 0.5);
        chain.limb.pole_ms[..3].copy_from_slice(&axis.to_array());
        assert_eq!(crowd_ik::cpu::validate_two_bone(&chain), expected, "{axis}");
        for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
            let batch = vec![chain; 40];
            let mut out = vec![TwoBoneSolved::default(); batch.len()];
            TwoBoneJob::new(&batch, &mut out).with_path(path).run().unwrap();
            assert!(out.iter().all(|o| o.error() == expected.err()), "{axis} on {path}");
        }
    }
}
