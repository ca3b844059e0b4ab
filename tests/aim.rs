//! One-bone (aim) IK: the three constructions and the up-vector constraint.

mod common;

use common::*;
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;

#[test]
fn all_methods_point_the_forward_axis_at_the_target() {
    let mut rng = Rng(41);
    for _ in 0..500 {
        let joint = rng.unit();
        let rot = rng.quat();
        let target = joint + rng.unit() * rng.range(0.1, 3.0);
        let forward = rng.unit();
        let up = forward.any_orthonormal_vector();
        let mut results = vec![];
        for method in [AimMethod::YawPitch, AimMethod::CrossProduct, AimMethod::ShortestArc] {
            let job = AimJob { forward, up, method, ..AimJob::new(joint, rot, target) };
            let out = job.run().unwrap();
            let aimed = out.rotation_ms * forward;
            assert!(aimed.dot((target - joint).normalize()) > 1.0 - 1e-5, "{method:?}");
            assert!(quat_angle(rot * out.correction, out.rotation_ms) < 1e-5);
            results.push(out.rotation_ms);
        }
        // Yaw/pitch and cross products are the same construction.
        assert!(quat_angle(results[0], results[1]) < 1e-3, "{}", quat_angle(results[0], results[1]));
    }
}

#[test]
fn the_up_constraint_rolls_the_up_axis_toward_the_up_target_for_every_method() {
    let mut rng = Rng(42);
    for _ in 0..300 {
        let joint = rng.unit();
        let rot = rng.quat();
        let target = joint + rng.unit();
        let up_target = joint + rng.unit() * 2.0;
        // The classic ±Y / ±Z choices of up axis (forward +X).
        for up in [Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z] {
            let mut rotations = vec![];
            for method in [AimMethod::YawPitch, AimMethod::CrossProduct, AimMethod::ShortestArc] {
                let job = AimJob { up, method, up_target_ms: Some(up_target), ..AimJob::new(joint, rot, target) };
                let Ok(out) = job.run() else { continue };
                let f = out.rotation_ms * Vec3::X;
                let u = out.rotation_ms * up;
                let want = (up_target - joint) - f * (up_target - joint).dot(f);
                assert!(u.dot(want.normalize()) > 1.0 - 1e-4, "{method:?} up {up}");
                rotations.push(out.rotation_ms);
            }
            // With the roll fixed all constructions agree.
            for w in rotations.windows(2) {
                assert!(quat_angle(w[0], w[1]) < 2e-3);
            }
        }
    }
}

#[test]
fn weight_and_errors() {
    let job = AimJob::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(0.0, 1.0, 1.0));
    assert_eq!(AimJob { weight: 0.0, ..job }.run().unwrap().correction, Quat::IDENTITY);
    let half = AimJob { weight: 0.5, ..job }.run().unwrap();
    let full = job.run().unwrap();
    let (h, f) = (quat_angle(half.correction, Quat::IDENTITY), quat_angle(full.correction, Quat::IDENTITY));
    assert!(h > 0.3 * f && h < 0.7 * f);
    assert_eq!(AimJob { target_ms: Vec3::ZERO, ..job }.validate(), Err(ChainError::TargetOnRoot));
    assert_eq!(AimJob { target_ms: Vec3::NAN, ..job }.validate(), Err(ChainError::NonFinite));
    assert_eq!(AimJob { up: Vec3::X, ..job }.validate(), Err(ChainError::InvalidParameter));
    assert_eq!(AimJob { up_target_ms: Some(Vec3::new(0.0, 2.0, 2.0)), ..job }.validate(), Err(ChainError::PoleOnAxis));
    assert_eq!(
        AimJob { rotation_ms: Quat::from_xyzw(0.0, 0.0, 0.0, 3.0), ..job }.validate(),
        Err(ChainError::NotNormalized)
    );
}
