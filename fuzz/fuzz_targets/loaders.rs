#![no_main]
//! The loaders on raw bytes: BVH text, `.npy` and raw f32 heightfields, glTF/GLB. Checks:
//! no panic, no allocation a header merely asks for (they are capped and checked), a
//! loaded heightfield samples to finite heights and unit normals, and a loaded glTF
//! samples, bakes and finds (or refuses) its rig without panicking.

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

fn gltf(data: &[u8]) {
    let Ok(scene) = crowd_ik::gltf::GltfScene::from_slice(data, None) else { return };
    for sk in &scene.skins {
        let _ = sk.foot_rig(crowd_ik::crowd::BipedSettings::default(), 1.0);
        for clip in &scene.clips {
            for t in [0.0, 0.5 * clip.duration, clip.duration] {
                if let Ok(pose) = clip.sample(sk, t) {
                    assert_eq!(pose.len(), sk.len());
                }
            }
            if clip.duration < 10.0 && sk.len() < 256 {
                let _ = clip.bake(sk, 10.0, crowd_ik::gltf::RootMotion::Extract);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    gltf(data);
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
