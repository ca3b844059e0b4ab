//! Crowd fixtures: a small procedural biped, hilly ground, random crowds.

use super::Rng;
use crowd_ik::bvh::to_model;
use crowd_ik::crowd::*;
use crowd_ik::glam::{Quat, Vec2, Vec3};

pub const PELVIS: usize = 1;
pub const LEFT: [usize; 4] = [4, 5, 6, 7];
pub const RIGHT: [usize; 4] = [8, 9, 10, 11];
pub const FOOT_HEIGHT: f32 = 0.08;
pub const LEG_LENGTH: f32 = 0.84;

/// Root, pelvis, spine, head, then left and right hip, knee, ankle, toe.
pub fn biped_parents() -> Vec<Option<usize>> {
    vec![None, Some(0), Some(1), Some(2), Some(1), Some(4), Some(5), Some(6), Some(1), Some(8), Some(9), Some(10)]
}

fn rest_offsets() -> Vec<Vec3> {
    vec![
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
    ]
}

pub fn biped_rig() -> FootRig {
    let leg = |joints| LegRig {
        kind: LegKind::TwoBone,
        joints,
        foot_height: FOOT_HEIGHT,
        heel_length: 0.0,
        toe_length: 0.0,
        toe_forward: Vec3::ZERO,
        knee_axis: -Vec3::X,
        knee_limits: Some((0.1, 175f32.to_radians())),
        max_foot_angle: 30f32.to_radians(),
        foot_up: Vec3::Y,
        knee_pole: KneePole::FkKnee,
        align: FootAlign::default(),
    };
    FootRig {
        parents: biped_parents(),
        pelvis: PELVIS,
        legs: vec![leg(LEFT), leg(RIGHT)],
        max_pelvis_drop: 0.35,
        max_step_up: 0.5,
        max_step_down: 0.6,
        placement: None,
        sole_measure: Default::default(),
    }
}

/// A random standing/walking FK pose: hips swing, knees bend (forward), ankles flex. The
/// soles of the rest pose are at model y = 0.
pub fn random_pose(rng: &mut Rng) -> Vec<JointPose> {
    let offsets = rest_offsets();
    let mut local: Vec<(Vec3, Quat)> = offsets.iter().map(|o| (*o, Quat::IDENTITY)).collect();
    for side in [LEFT, RIGHT] {
        let hip = rng.range(-0.35, 0.35);
        let knee = rng.range(0.0, 0.6);
        local[side[0]].1 = Quat::from_rotation_x(-hip);
        local[side[1]].1 = Quat::from_rotation_x(knee);
        local[side[2]].1 = Quat::from_rotation_x(rng.range(-0.3, 0.3) + hip - knee);
    }
    to_model(&biped_parents(), &local)
}

/// The caller's "ray casts" for `Ground::Hits`: the heightfield under each FK ankle of the
/// biped fixture (`characters × MAX_LEGS`, misses for legs 2 and 3 and off the grid).
pub fn hits_under_ankles(hf: &Heightfield, chars: &[CharacterInput], poses: &[JointPose]) -> Vec<GroundHit> {
    let mut hits = Vec::with_capacity(chars.len() * MAX_LEGS);
    for (c, ch) in chars.iter().enumerate() {
        for l in 0..MAX_LEGS {
            let hit = [LEFT, RIGHT].get(l).and_then(|leg| {
                let a = ch.to_world(poses[c * 12 + leg[2]].position());
                hf.sample(a.x, a.z).map(|(h, n)| GroundHit::hit(Vec3::new(a.x, h, a.z), n))
            });
            hits.push(hit.unwrap_or_else(GroundHit::miss));
        }
    }
    hits
}

pub fn hills() -> Heightfield {
    crowd_ik_tools::terrain::hills(Vec2::new(-60.0, -60.0), 0.5, 241, 241, 0.6)
}

/// `n` characters standing at random places on `ground`, random heading and scale, their
/// root at the ground height.
pub fn random_crowd(rng: &mut Rng, ground: &Heightfield, n: usize) -> (Vec<CharacterInput>, Vec<JointPose>) {
    let mut chars = Vec::with_capacity(n);
    let mut poses = Vec::with_capacity(n * 12);
    for _ in 0..n {
        let (x, z) = (rng.range(-50.0, 50.0), rng.range(-50.0, 50.0));
        let y = ground.sample(x, z).map_or(0.0, |(h, _)| h);
        let scale = rng.range(0.9, 1.1);
        chars.push(
            CharacterInput::new(Vec3::new(x, y, z), Quat::from_rotation_y(rng.range(-3.1, 3.1))).with_scale(scale),
        );
        poses.extend(random_pose(rng));
    }
    (chars, poses)
}

/// A quadruped: root, body (the "pelvis"), hind legs hip–stifle–hock–hoof (pseudo
/// three-bone), front legs shoulder–elbow–wrist–toe (two-bone). Hinges are taken from the
/// rest geometry so the FK bends are on the valid side: `(hip − knee) × (ankle − knee)`, the
/// side for which `(knee − hip) × hinge · (ankle − knee) ≥ 0` (ozz's convention, see
/// `LimbSettings::mid_axis`). The opposite sign declares every FK bend backwards: the
/// solver then bends each knee the hinge's way and rolls the limb half a turn to face the
/// pole, which lands the joints where they should be but twists the bones, and a pseudo
/// three-bone leg whose hock follows that twist folds sideways (the fixture had it so until
/// 2026-11-24).
pub fn quadruped() -> (FootRig, Vec<JointPose>) {
    let mut parents = vec![None, Some(0)];
    let mut pos = vec![Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0)];
    let hind = |x: f32| {
        [Vec3::new(x, 0.95, -0.4), Vec3::new(x, 0.62, -0.22), Vec3::new(x, 0.32, -0.5), Vec3::new(x, 0.02, -0.44)]
    };
    let front =
        |x: f32| [Vec3::new(x, 0.95, 0.45), Vec3::new(x, 0.6, 0.35), Vec3::new(x, 0.25, 0.42), Vec3::new(x, 0.03, 0.5)];
    let mut legs = Vec::new();
    for (chain, three) in [(hind(0.15), true), (hind(-0.15), true), (front(0.15), false), (front(-0.15), false)] {
        let first = pos.len();
        for (k, p) in chain.iter().enumerate() {
            parents.push(Some(if k == 0 { 1 } else { pos.len() - 1 }));
            pos.push(*p);
        }
        let hinge = (chain[0] - chain[1]).cross(chain[2] - chain[1]).normalize();
        legs.push(LegRig {
            kind: if three { LegKind::PseudoThreeBone { blend: 0.5 } } else { LegKind::TwoBone },
            joints: [first, first + 1, first + 2, first + 3],
            foot_height: if three { 0.02 } else { 0.03 },
            heel_length: 0.0,
            toe_length: 0.0,
            toe_forward: Vec3::ZERO,
            knee_axis: hinge,
            knee_limits: Some((0.1, 3.0)),
            max_foot_angle: 0.5,
            foot_up: Vec3::Y,
            knee_pole: KneePole::FkKnee,
            align: FootAlign::default(),
        });
    }
    let rig = FootRig {
        parents,
        pelvis: 1,
        legs,
        max_pelvis_drop: 0.3,
        max_step_up: 0.4,
        max_step_down: 0.5,
        placement: None,
        sole_measure: Default::default(),
    };
    let pose = pos.iter().map(|p| JointPose::new(*p, Quat::IDENTITY)).collect();
    (rig, pose)
}

/// `n` copies of `pose` (one rig's FK pose) standing on `hf` at random places and headings
/// within ±50 m: the characters and their poses, character-major.
pub fn scattered(
    rng: &mut Rng,
    hf: &Heightfield,
    pose: &[JointPose],
    n: usize,
) -> (Vec<CharacterInput>, Vec<JointPose>) {
    let mut chars = Vec::with_capacity(n);
    let mut poses = Vec::with_capacity(n * pose.len());
    for _ in 0..n {
        let (x, z) = (rng.range(-50.0, 50.0), rng.range(-50.0, 50.0));
        let y = hf.sample(x, z).unwrap().0;
        chars.push(CharacterInput::new(Vec3::new(x, y, z), Quat::from_rotation_y(rng.range(-3.0, 3.0))));
        poses.extend(pose.iter().copied());
    }
    (chars, poses)
}

/// A plane sloping `degrees` along x (and a gentle cross slope along z), as a heightfield.
pub fn slope(degrees: f32) -> Heightfield {
    let (nx, nz, cell) = (121, 121, 1.0);
    let origin = Vec2::new(-60.0, -60.0);
    let k = degrees.to_radians().tan();
    Heightfield::from_fn(origin, cell, nx, nz, |x, z| x * k + z * 0.05).expect("valid slope")
}

/// CMU units to metres.
pub const CMU_SCALE: f32 = 0.0254 / 0.45;

/// A CMU clip (Debian's assimp-testmodels) with its biped rig (hips, and the legs down to
/// the toe bases) and its floor: a low percentile (10 %) of the sole heights, model space.
/// `None` (a loud skip) when the clip is not installed, a failure in CI.
pub fn cmu_biped(path: &str) -> Option<(crowd_ik::bvh::Clip, FootRig, f32)> {
    use crowd_ik::bvh::{BipedSettings, Clip};
    let Ok(clip) = Clip::load(path) else {
        assert!(!super::gpu::in_ci(), "CI=true but {path} is missing: install assimp-testmodels");
        eprintln!("SKIPPED: {path} not found (apt-get install assimp-testmodels)");
        return None;
    };
    let rig = FootRig::biped(
        &clip.skeleton,
        "Hips",
        &[["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"], ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"]],
        CMU_SCALE,
        BipedSettings::default(),
    )
    .unwrap();
    let mut soles: Vec<f32> = (0..clip.frames())
        .step_by(10)
        .flat_map(|f| {
            let p = clip.model_pose(f, CMU_SCALE);
            rig.legs.iter().map(move |l| p[l.joints[2]].position().y - l.foot_height).collect::<Vec<_>>()
        })
        .collect();
    soles.sort_by(f32::total_cmp);
    let floor = soles[soles.len() / 10];
    Some((clip, rig, floor))
}

/// A real terrain at foot scale: the Terragen test terrain Debian's assimp-testmodels ships
/// (257 × 257 heights, not made by this crate), laid on 0.29 m cells (74 m square, centred
/// on the origin) and scaled to `relief` metres: bilinear, so piecewise planar with creases
/// along every grid line, a few of them under every foot. `None` (a loud skip) when it is
/// not installed, a failure in CI.
pub fn real_terrain(relief: f32) -> Option<Heightfield> {
    const PATH: &str = "/usr/share/assimp/models/TER/RealisticTerrain.ter";
    let Ok(bytes) = std::fs::read(PATH) else {
        assert!(!super::gpu::in_ci(), "CI=true but {PATH} is missing: install assimp-testmodels");
        eprintln!("SKIPPED: {PATH} not found (apt-get install assimp-testmodels)");
        return None;
    };
    let half = 0.29 * 256.0 / 2.0;
    Some(crowd_ik_tools::terrain::terragen(&bytes, Vec2::new(-half, -half), 0.29, relief).unwrap())
}

/// 0/1 foot weights as animation events deliver them (the sole within 3 cm of the floor).
#[allow(unused_imports)] // not every test that includes these helpers uses it
pub use crowd_ik_tools::character::contact_weights;

/// Heel, ball and tip of a two-bone foot's sole as the rig defines it (`heel_length`
/// behind the point under the ankle, `toe_length` past the ball along `toe_forward`), model
/// space.
#[allow(dead_code)] // not every test that includes these helpers uses it
pub fn sole_points(rig: &FootRig, pose: &[JointPose], l: usize) -> [Vec3; 3] {
    let leg = &rig.legs[l];
    let (ankle, toe) = (pose[leg.joints[2]], pose[leg.joints[3]]);
    let up = (ankle.rotation() * leg.foot_up).normalize();
    let under = ankle.position() - up * leg.foot_height;
    let off = toe.position() - ankle.position();
    let forward = off - up * off.dot(up);
    let dir = forward.normalize_or_zero();
    let past = (toe.rotation() * leg.toe_forward).try_normalize().unwrap_or(dir);
    let ball = under + forward;
    [under - dir * leg.heel_length, ball, ball + past * leg.toe_length]
}

/// Thigh plus shin of the rig's first leg in `pose` (model units).
pub fn leg_length(rig: &FootRig, pose: &[JointPose]) -> f32 {
    let j = rig.legs[0].joints;
    (pose[j[1]].position() - pose[j[0]].position()).length() + (pose[j[2]].position() - pose[j[1]].position()).length()
}

/// Cesium Man (`tests/data/gltf/CesiumMan.glb`, a real glTF character; see its
/// LICENSES.md): its walk baked at 120 frames per second, its rig found by shape (soles
/// from its mesh), its floor
/// and the speed its walk needs from the root (the clip walks in place:
/// `crowd_ik_tools::character`).
pub fn cesium_man() -> (crowd_ik::gltf::GltfSkeleton, crowd_ik::gltf::BakedClip, FootRig, f32, f32) {
    use crowd_ik::gltf::{GltfScene, RootMotion};
    use crowd_ik_tools::character;
    let scene = GltfScene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gltf/CesiumMan.glb")).unwrap();
    let sk = scene.skins[0].clone();
    let baked = scene.clips[0].bake(&sk, 120.0, RootMotion::Keep).unwrap();
    // The sole from the mesh: the shoe's bottom, heel and tip (GltfScene::foot_rig).
    let rig = scene.foot_rig(0, crowd_ik::crowd::BipedSettings::default(), 1.0).unwrap();
    let frames = character::frames(&baked);
    let floor = character::floor(&rig, &frames);
    let speed = character::in_place_speed(&rig, &frames, baked.frame_time, floor);
    (sk, baked, rig, floor, speed)
}
