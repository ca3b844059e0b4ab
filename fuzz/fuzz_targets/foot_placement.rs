#![no_main]
//! Foot placement over several frames on raw bytes: arbitrary per-character state bytes,
//! frame times (0, subnormal, tiny, ordinary, a hitch, huge, NaN, inf, negative, or any
//! bits), characters, FK poses and caller hits, over a heightfield or the hits, for the
//! procedural biped with plant detection by speed or by weights. Checks
//! (`crowd_ik_tools::hostile::check_frame`): no panic; a bad frame time is refused and
//! changes no state; otherwise every pose, result and state value is finite; serial =
//! parallel bit for bit; and every character solves the same alone as among the others (a
//! garbage state resets its character alone).

use crowd_ik::crowd::*;
use crowd_ik_tools::{hostile, scene};
use glam::Vec2;
use libfuzzer_sys::fuzz_target;

/// Takes up to `out`'s size in bytes from the front of `data`.
fn fill<T: bytemuck::Pod>(data: &mut &[u8], out: &mut [T]) {
    let take = data.len().min(std::mem::size_of_val(out));
    bytemuck::cast_slice_mut::<_, u8>(out)[..take].copy_from_slice(&data[..take]);
    *data = &data[take..];
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, mut data)) = data.split_first() else { return };
    let count = 1 + usize::from(head & 3);
    let use_hits = head & 4 != 0;
    let frames = 1 + usize::from((head >> 3) & 3);
    let placement = hostile::fuzz_placement(head);
    let rig = scene::biped_rig().with_placement(Some(placement));
    let (rest, _) = scene::walk_pose(0.0);
    let mut states = vec![CharacterState::default(); count];
    fill(&mut data, &mut states);
    let mut frame_times = [0u8; 4];
    fill(&mut data, &mut frame_times);
    let mut characters: Vec<CharacterInput> = (0..count)
        .map(|c| CharacterInput::new(glam::Vec3::new(c as f32 * 0.7 - 1.0, 0.0, 0.3), glam::Quat::IDENTITY))
        .collect();
    fill(&mut data, &mut characters);
    let mut poses_in: Vec<JointPose> = (0..count).flat_map(|_| rest.iter().copied()).collect();
    fill(&mut data, &mut poses_in);
    let heights: Vec<f32> = (0..64).map(|i| ((i % 8) as f32 * 0.7).sin() * 0.2 + (i / 8) as f32 * 0.05).collect();
    let hf = Heightfield::new(Vec2::new(-4.0, -4.0), 1.0, 8, 8, heights).expect("fixed heightfield");
    let (ground, mut hits) = if use_hits {
        let mut hits = vec![GroundHit::miss(); count * MAX_LEGS];
        for (i, h) in hits.iter_mut().enumerate() {
            *h = GroundHit::hit(glam::Vec3::new(i as f32 * 0.1, -0.02, 0.0), glam::Vec3::Y);
        }
        (Ground::Hits, hits)
    } else {
        (Ground::Heightfield(hf), Vec::new())
    };
    fill(&mut data, &mut hits);

    let frame = hostile::Frame { rig: &rig, ground: &ground, characters: &characters, poses: &poses_in, hits: &hits };
    for &t in frame_times.iter().take(frames) {
        hostile::check_frame(&frame, &mut states, hostile::frame_time(t));
    }
});
