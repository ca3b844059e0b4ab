#![no_main]
//! The loaders on raw bytes: BVH text, `.npy` and raw f32 heightfields. Checks: no panic,
//! no allocation a header merely asks for (they are capped and checked), and a loaded
//! heightfield samples to finite heights and unit normals.

use crowd_ik::bvh::Clip;
use crowd_ik::crowd::Heightfield;
use glam::Vec2;
use libfuzzer_sys::fuzz_target;

fn probe(h: &Heightfield) {
    for i in 0..16 {
        let (x, z) = (i as f32 * 0.37 - 3.0, i as f32 * -0.53 + 2.0);
        if let Some((y, n)) = h.sample(x, z) {
            assert!(y.is_finite() && (n.length() - 1.0).abs() < 1e-3, "sample ({x}, {z}) = {y}, {n}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(clip) = Clip::parse(&String::from_utf8_lossy(data)) {
        let frames = clip.frames();
        if frames > 0 && clip.skeleton.len() < 4096 {
            let _ = clip.model_pose(frames - 1, 1.0);
        }
    }
    if let Ok(h) = Heightfield::from_npy(data, Vec2::ZERO, 0.5) {
        probe(&h);
    }
    if let Some((dims, rest)) = data.split_first_chunk::<2>() {
        let (nx, nz) = (usize::from(dims[0]), usize::from(dims[1]));
        if let Ok(h) = Heightfield::from_raw_f32(rest, nx, nz, Vec2::new(-1.0, -1.0), 0.25) {
            probe(&h);
        }
    }
});
