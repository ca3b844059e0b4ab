#![no_main]
//! Crowd foot IK on raw bytes: characters, FK poses and caller ground hits of a fixed biped
//! rig, over a heightfield or the hits. Checks: no panic; a frame that validates solves
//! with finite poses and results; serial and parallel runs agree bit for bit.

use crowd_ik::crowd::*;
use crowd_ik::prelude::FootIkJob;
use crowd_ik_tools::scene;
use glam::Vec2;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The procedural biped of the examples and benchmarks, in its first walk pose.
    let rig = scene::biped_rig();
    let (rest, _) = scene::walk_pose(0.0);
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
