//! Writes seed corpora for the crate's fuzz targets (`fuzz/`): whole, ordinary records of
//! every option a solver has, so that libFuzzer starts from inputs the solvers take
//! seriously and mutates from there (from an empty corpus it does not grow inputs to a whole
//! chain record, which is over a kilobyte).
//!
//! ```text
//! cargo run --release -p crowd-ik-tools --example fuzz_seeds -- fuzz/corpus
//! cargo +nightly fuzz run -O ccd fuzz/corpus/ccd
//! ```

use crowd_ik::crowd::{CharacterInput, CharacterState, Ground, GroundHit, JointPose, MAX_LEGS};
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::{CcdChain, ConstrainedFabrikChain, DlsChain, DlsTree};
use crowd_ik_tools::{scene, terrain, workload};
use std::path::Path;

fn write(dir: &Path, target: &str, name: String, bytes: &[u8]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("corpus directory");
    std::fs::write(dir.join(name), bytes).expect("seed file");
}

/// `records` as seeds of 1, 2 and 4 records each.
fn seeds<T: bytemuck::Pod>(dir: &Path, target: &str, tag: &str, records: &[T]) {
    for (k, group) in [1, 2, 4].into_iter().enumerate() {
        for (i, chunk) in records.chunks(group).enumerate() {
            write(dir, target, format!("{tag}-{k}-{i}"), bytemuck::cast_slice(chunk));
        }
    }
}

/// Limited chains of every shape the limited solvers take: 3 to 12 joints, 0 to 16
/// iterations, mirrored or not, hinges aligned or not, weights below 1.
fn limited(seed: u64) -> Vec<ConstrainedFabrikChain> {
    let mut out = Vec::new();
    for (k, joints) in [3, 4, 6, 12].into_iter().enumerate() {
        for iterations in [0, 1, 4, 16] {
            for c in workload::limited(2, joints, iterations, seed + k as u64 * 31 + u64::from(iterations)) {
                let n = out.len();
                let mut chain = c.chain.with_mirrored(n % 3 == 1);
                if n % 5 == 2 {
                    chain = chain.with_weight(0.5);
                }
                out.push(ConstrainedFabrikChain::new(chain, c.limits).with_align_hinges(n % 2 == 0));
            }
        }
    }
    out
}

/// One foot-placement input as the `foot_placement` target reads it: a head byte, the
/// characters' states, four frame-time selectors, the characters, their poses and (when the
/// head asks for them) the caller hits; states taken from a walk over hills so the
/// fuzzer starts from states the crate writes.
fn placement_seed(head: u8, phase: f32, selectors: [u8; 4]) -> Vec<u8> {
    use crowd_ik::cpu::foot_ik::FootIkJob;
    use crowd_ik::crowd::FootResult;
    let count = 1 + usize::from(head & 3);
    let use_hits = head & 4 != 0;
    let placement = crowd_ik_tools::hostile::fuzz_placement(head);
    let rig = scene::biped_rig().with_placement(Some(placement));
    let ground = Ground::Heightfield(terrain::hills(Vec2::new(-4.0, -4.0), 0.5, 17, 17, 0.2));
    let mut states = vec![CharacterState::default(); count];
    let mut characters = Vec::new();
    let mut poses = Vec::new();
    for frame in 0..12 {
        characters.clear();
        poses.clear();
        for c in 0..count {
            let t = phase + frame as f32 / 60.0 + c as f32 * 0.3;
            let (pose, _) = scene::walk_pose(t);
            let root = Vec3::new(c as f32 * 0.7 - 1.0, 0.05 * (t * 3.0).sin(), 0.3 + t * 1.2);
            characters.push(CharacterInput::new(root, Quat::from_rotation_y(0.2 * c as f32)));
            poses.extend(pose);
        }
        let mut out = vec![JointPose::default(); poses.len()];
        let mut results = vec![FootResult::default(); count];
        FootIkJob::new(&rig, &ground, &characters, &poses, &mut out, &mut results)
            .run_frame(&mut states, 1.0 / 60.0)
            .expect("a walk over hills solves");
    }
    let mut bytes = vec![head];
    bytes.extend_from_slice(bytemuck::cast_slice(&states));
    bytes.extend_from_slice(&selectors);
    bytes.extend_from_slice(bytemuck::cast_slice(&characters));
    bytes.extend_from_slice(bytemuck::cast_slice(&poses));
    if use_hits {
        let hits: Vec<GroundHit> = (0..count * MAX_LEGS)
            .map(|i| GroundHit::hit(Vec3::new(i as f32 * 0.1, -0.02 + 0.01 * i as f32, 0.0), Vec3::new(0.1, 1.0, 0.0)))
            .collect();
        bytes.extend_from_slice(bytemuck::cast_slice(&hits));
    }
    bytes
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus".into());
    let dir = Path::new(&dir);

    seeds(dir, "two_bone", "walk", &workload::two_bone(16, 1));
    seeds(dir, "three_bone", "walk", &workload::three_bone(16, 2));
    seeds(dir, "fabrik", "tail", &workload::fabrik(16, 8, 8, 3));

    let chains = limited(4);
    seeds(dir, "constrained_fabrik", "limited", &chains);
    let ccd: Vec<CcdChain> = chains
        .iter()
        .enumerate()
        .map(|(i, c)| {
            CcdChain::new(c.chain, c.limits)
                .with_max_step(if i % 2 == 0 { 0.0 } else { 0.3 })
                .with_root_first(i % 3 == 0)
        })
        .collect();
    seeds(dir, "ccd", "limited", &ccd);
    let dls: Vec<DlsChain> = chains
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let d = DlsChain::new(c.chain, c.limits).with_starts(1 + i as u32 % 8).with_stiffness(0, 0.5);
            if i % 2 == 0 {
                d.with_orientation_target(Quat::from_rotation_y(0.3), 0.1)
            } else {
                d
            }
        })
        .collect();
    seeds(dir, "dls", "limited", &dls);
    seeds(dir, "multi_fabrik", "quadruped", &workload::multi_fabrik(16, 8, 5));
    let trees: Vec<DlsTree> = workload::dls_upper_bodies(8, 8, 7)
        .into_iter()
        .chain(workload::dls_quadrupeds(8, 8, 8))
        .enumerate()
        .map(|(i, t)| t.with_starts(1 + i as u32 % 2).with_stiffness(1, [0.0, 0.5][i % 2]))
        .collect();
    seeds(dir, "dls_tree", "bodies", &trees);
    seeds(dir, "look_at", "heads", &workload::look_at(16, 6));

    for head in 0..=255u8 {
        if head % 7 != 0 && head & 0b111 != 0b111 {
            continue;
        }
        let selectors = [4 + head % 3, 5, head % 16, 4];
        write(dir, "foot_placement", format!("walk-{head}"), &placement_seed(head, f32::from(head) * 0.05, selectors));
    }
    // The loaders: the real glTF characters the tests load.
    let gltf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/gltf");
    for name in ["CesiumMan.glb", "Fox.glb", "ik_helper_humanoid.gltf"] {
        write(dir, "loaders", name.to_string(), &std::fs::read(gltf.join(name)).expect("test data"));
    }
    println!("seed corpora written under {}", dir.display());
}
