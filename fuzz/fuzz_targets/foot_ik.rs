#![no_main]
//! Crowd foot IK on raw bytes: characters, FK poses and caller ground hits of a fixed biped
//! rig, over a heightfield or the hits. Checks: no panic; a frame that validates solves
//! with finite poses and results; serial and parallel runs agree bit for bit.

use crowd_ik::bvh::to_model;
use crowd_ik::crowd::*;
use crowd_ik::prelude::*;
use glam::{Quat, Vec2, Vec3};
use libfuzzer_sys::fuzz_target;

/// Root, pelvis, spine, head, left and right hip, knee, ankle, toe.
fn rig() -> (FootRig, Vec<JointPose>) {
    let parents =
        vec![None, Some(0), Some(1), Some(2), Some(1), Some(4), Some(5), Some(6), Some(1), Some(8), Some(9), Some(10)];
    let offsets = [
        Vec3::ZERO,
        Vec3::new(0.0, 0.95, 0.0),
        Vec3::new(0.0, 0.25, 0.0),
        Vec3::new(0.0, 0.4, 0.0),
        Vec3::new(0.1, -0.03, 0.0),
        Vec3::new(0.0, -0.42, 0.0),
        Vec3::new(0.0, -0.42, 0.0),
        Vec3::new(0.0, -0.08, 0.12),
        Vec3::new(-0.1, -0.03, 0.0),
        Vec3::new(0.0, -0.42, 0.0),
        Vec3::new(0.0, -0.42, 0.0),
        Vec3::new(0.0, -0.08, 0.12),
    ];
    let rest = to_model(&parents, &offsets.iter().map(|o| (*o, Quat::IDENTITY)).collect::<Vec<_>>());
    let leg = |joints| LegRig {
        kind: LegKind::TwoBone,
        joints,
        foot_height: 0.08,
        knee_axis: -Vec3::X,
        knee_limits: Some((0.1, 175f32.to_radians())),
        max_foot_angle: 30f32.to_radians(),
        foot_up: Vec3::Y,
        knee_pole: KneePole::FkKnee,
    };
    let rig = FootRig {
        parents,
        pelvis: 1,
        legs: vec![leg([4, 5, 6, 7]), leg([8, 9, 10, 11])],
        max_pelvis_drop: 0.35,
        max_step_up: 0.5,
        max_step_down: 0.6,
    };
    (rig, rest)
}

fuzz_target!(|data: &[u8]| {
    let (rig, rest) = rig();
    let n = rig.joint_count();
    let Some((&head, data)) = data.split_first() else { return };
    // The first byte picks the ground and how many characters; the rest are their inputs,
    // then pose joints overwriting the rest pose, then ground hits.
    let count = 1 + usize::from(head & 7);
    let use_hits = head & 8 != 0;
    let chars_bytes = count * size_of::<CharacterInput>();
    let mut characters = vec![<CharacterInput as bytemuck::Zeroable>::zeroed(); count];
    let take = data.len().min(chars_bytes);
    bytemuck::cast_slice_mut::<_, u8>(&mut characters)[..take].copy_from_slice(&data[..take]);
    let data = &data[take..];
    let mut poses_in: Vec<JointPose> = (0..count).flat_map(|_| rest.iter().copied()).collect();
    let take = data.len().min(poses_in.len() * size_of::<JointPose>());
    bytemuck::cast_slice_mut::<_, u8>(&mut poses_in)[..take].copy_from_slice(&data[..take]);
    let data = &data[take..];
    let heights: Vec<f32> = (0..64).map(|i| ((i % 8) as f32 * 0.7).sin() * 0.2 + (i / 8) as f32 * 0.05).collect();
    let hf = Heightfield::new(Vec2::new(-4.0, -4.0), 1.0, 8, 8, heights).expect("fixed heightfield");
    let (ground, mut hits) = if use_hits {
        (Ground::Hits, vec![GroundHit::miss(); count * MAX_LEGS])
    } else {
        (Ground::Heightfield(hf), Vec::new())
    };
    let take = data.len().min(hits.len() * size_of::<GroundHit>());
    bytemuck::cast_slice_mut::<_, u8>(&mut hits)[..take].copy_from_slice(&data[..take]);

    let solve = |par: bool| {
        let mut poses_out = vec![JointPose::default(); count * n];
        let mut results = vec![FootResult::default(); count];
        let mut job = FootIkJob {
            rig: &rig,
            ground: &ground,
            characters: &characters,
            hits: &hits,
            poses_in: &poses_in,
            poses_out: &mut poses_out,
            results: &mut results,
        };
        if job.validate().is_err() {
            return None;
        }
        if par { job.run_par() } else { job.run() }.expect("validated");
        Some((poses_out, results))
    };
    let Some((poses, results)) = solve(false) else { return };
    for p in &poses {
        assert!(
            bytemuck::cast_slice::<_, f32>(std::slice::from_ref(p)).iter().all(|x| x.is_finite()),
            "non-finite pose"
        );
    }
    for r in &results {
        let heights = r.pelvis.iter().chain(&r.sole_before).chain(&r.sole_after);
        assert!(heights.into_iter().all(|x| !x.is_nan()), "NaN in a result: {r:?}");
    }
    let (poses_par, results_par) = solve(true).expect("validated once");
    assert_eq!(bytemuck::cast_slice::<_, u8>(&poses), bytemuck::cast_slice::<_, u8>(&poses_par));
    assert_eq!(bytemuck::cast_slice::<_, u8>(&results), bytemuck::cast_slice::<_, u8>(&results_par));
});
