//! A glTF character's walk for scenes: its contact floor, 0/1 foot weights from the sole's
//! height, the speed its root needs when the clip walks in place, a crowd of it, and the
//! demos' choice between it and the procedural walker ([`Walkers`]).

use crowd_ik::cpu::clip_sample::sample_clip;
use crowd_ik::cpu::palette::inverse_bind;
use crowd_ik::crowd::{CharacterInput, FootRig, Heightfield, JointPose};
use crowd_ik::glam::{Mat4, Quat, Vec2, Vec3};
use crowd_ik::gltf::{BakedClip, GltfScene, RootMotion};

use crate::preview::SkinMesh;
use crate::scene::{biped_boxes, biped_rig, walk_pose, WalkingCrowd};

/// The glTF humanoid the demos walk by default: Khronos' Cesium Man (CC-BY 4.0, see
/// `tests/data/gltf/LICENSES.md` of crowd-ik).
pub const CESIUM_MAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/gltf/CesiumMan.glb");

/// Colour the demos draw glTF characters in (lit).
pub const CHARACTER_COLOR: [f32; 4] = [0.85, 0.55, 0.3, 1.0];

/// 0/1 foot weights as animation events deliver them: 1 while leg `l`'s FK sole (the ankle
/// less the rig's foot height, model space) is within 3 cm of `floor`.
#[must_use]
pub fn contact_weights(rig: &FootRig, pose: &[JointPose], floor: f32) -> [f32; 2] {
    [0, 1].map(|l| {
        let leg = &rig.legs[l];
        f32::from(pose[leg.joints[2]].position().y - leg.foot_height - floor <= 0.03)
    })
}

/// The clip's model-space poses, one per baked frame.
#[must_use]
pub fn frames(clip: &BakedClip) -> Vec<Vec<JointPose>> {
    let mut model = vec![JointPose::default(); clip.parents.len()];
    (0..clip.frames)
        .map(|f| {
            sample_clip(&clip.local, &clip.parents, clip.frame_time, f as f32 * clip.frame_time, &mut model);
            model.clone()
        })
        .collect()
}

/// The vertices of `mesh` bound at least half to the joints `foot` marks (e.g.
/// `GltfSkeleton::below(ankle)`), skinned by `matrices` (model space).
#[must_use]
pub fn skinned_foot(mesh: &crowd_ik::gltf::SkinnedMesh, matrices: &[Mat4], foot: &[bool]) -> Vec<Vec3> {
    mesh.positions
        .iter()
        .zip(mesh.joints.iter().zip(&mesh.weights))
        .filter(|(_, (j, w))| {
            (0..4).filter(|&k| foot.get(usize::from(j[k])).copied().unwrap_or(false)).map(|k| w[k]).sum::<f32>() >= 0.5
        })
        .map(|(v, (j, w))| (0..4).map(|k| matrices[usize::from(j[k])].transform_point3(Vec3::from(*v)) * w[k]).sum())
        .collect()
}

/// How far the lowest vertex of a skinned foot ([`skinned_foot`]) of `character` stands
/// above the heightfield under it (world units; negative: below; `f32::MAX` without any).
#[must_use]
pub fn skinned_foot_gap(
    mesh: &crowd_ik::gltf::SkinnedMesh,
    matrices: &[Mat4],
    foot: &[bool],
    character: &CharacterInput,
    ground: &Heightfield,
) -> f32 {
    skinned_foot(mesh, matrices, foot)
        .into_iter()
        .map(|v| character.to_world(v))
        .filter_map(|p| ground.sample(p.x, p.z).map(|(y, _)| p.y - y))
        .fold(f32::MAX, f32::min)
}

/// The floor the clip walks on: a low percentile (10 %) of its sole heights, model space.
#[must_use]
pub fn floor(rig: &FootRig, frames: &[Vec<JointPose>]) -> f32 {
    let mut soles: Vec<f32> =
        frames.iter().flat_map(|p| rig.legs.iter().map(move |l| p[l.joints[2]].position().y - l.foot_height)).collect();
    soles.sort_by(f32::total_cmp);
    soles.get(soles.len() / 10).copied().unwrap_or(0.0)
}

/// The forward (+z) speed a clip that walks in place needs from its root: a planted foot
/// moves backwards in model space at the walking speed, so the mean backward speed of the
/// toes of the feet in contact ([`contact_weights`]) is it. Model units per second.
#[must_use]
pub fn in_place_speed(rig: &FootRig, frames: &[Vec<JointPose>], frame_time: f32, floor: f32) -> f32 {
    let mut speeds = Vec::new();
    for w in frames.windows(2) {
        for (leg, c) in rig.legs.iter().zip(contact_weights(rig, &w[1], floor)) {
            if c == 1.0 {
                let toe = leg.joints[3];
                speeds.push((w[0][toe].position().z - w[1][toe].position().z) / frame_time);
            }
        }
    }
    if speeds.is_empty() {
        0.0
    } else {
        speeds.iter().sum::<f32>() / speeds.len() as f32
    }
}

/// Characters scattered over a square, each walking the clip along its heading, turning
/// back at the edges, its root at the ground height under it.
pub struct GltfCrowd {
    /// The rig the solver gets (lengths in world units).
    pub rig: FootRig,
    /// The same rig in the file's units, for reading contacts off the clip.
    file_rig: FootRig,
    clip: BakedClip,
    floor: f32,
    speed: f32,
    scale: f32,
    positions: Vec<Vec2>,
    headings: Vec<f32>,
    times: Vec<f32>,
    half_extent: f32,
    /// The character's skinned meshes (those of its skin), for drawing.
    pub mesh: SkinMesh,
    /// The palette's inverse bind matrices for [`GltfCrowd::mesh`]
    /// ([`crowd_ik::gltf::GltfSkeleton::palette_inverse_bind`]).
    pub inverse_bind: Vec<Mat4>,
}

impl GltfCrowd {
    /// `n` characters of the glTF file at `path` (its first skin; the clip named `clip`, or
    /// its first), scattered over `[-half_extent, half_extent]²`; `scale` = world units per
    /// file unit. Prints what it loaded.
    ///
    /// # Errors
    /// The file cannot be loaded, has no skin or animation, no clip of that name, or no rig.
    pub fn load(
        path: &str,
        clip: Option<&str>,
        scale: f32,
        n: usize,
        half_extent: f32,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let scene = GltfScene::load(path)?;
        let skeleton = scene.skins.first().ok_or("the file has no skin")?;
        let anim = match clip {
            Some(name) => scene.clip(name).ok_or_else(|| {
                let names: Vec<&str> = scene.clips.iter().map(|c| c.name.as_str()).collect();
                format!("no clip named {name:?} (the file has {names:?})")
            })?,
            None => scene.clips.first().ok_or("the file has no animation")?,
        };
        let settings = crowd_ik::crowd::BipedSettings::default();
        let rig = scene.foot_rig(0, settings, scale)?;
        let file_rig = scene.foot_rig(0, settings, 1.0)?;
        let clip = anim.bake(skeleton, 60.0, RootMotion::Extract)?;
        let frames = frames(&clip);
        let floor = floor(&file_rig, &frames);
        let speed = in_place_speed(&file_rig, &frames, clip.frame_time, floor);
        println!(
            "character: {}, clip {:?} ({:.2} s), {} joints, legs {:?}, walking {:.2} m/s",
            std::path::Path::new(path).file_name().map_or(path.into(), |f| f.to_string_lossy()),
            anim.name,
            anim.duration,
            skeleton.len(),
            rig.legs.iter().map(|l| l.joints.map(|j| skeleton.names[j].as_str())).collect::<Vec<_>>(),
            speed * scale
        );
        let mesh = scene
            .meshes
            .iter()
            .filter(|m| m.skin == 0)
            .fold(SkinMesh::default(), |all, m| all.merged(&SkinMesh::from_gltf(m, CHARACTER_COLOR)));
        let inverse_bind = skeleton.palette_inverse_bind()?;
        let mut rng = crate::workload::Rng::new(7);
        Ok(Self {
            mesh,
            inverse_bind,
            rig,
            file_rig,
            clip,
            floor,
            speed,
            scale,
            positions: (0..n)
                .map(|_| Vec2::new(rng.range(-half_extent, half_extent), rng.range(-half_extent, half_extent)))
                .collect(),
            headings: (0..n).map(|_| rng.range(-std::f32::consts::PI, std::f32::consts::PI)).collect(),
            times: (0..n).map(|_| rng.range(0.0, 10.0)).collect(),
            half_extent,
        })
    }

    /// Puts character `i` at `position` (world XZ), facing `heading` (radians about +Y, 0 =
    /// +Z), `time` seconds into its clip.
    pub fn set_walker(&mut self, i: usize, position: Vec2, heading: f32, time: f32) {
        self.positions[i] = position;
        self.headings[i] = heading;
        self.times[i] = time;
    }

    /// The character's height in world units: its highest joint above its lowest in the
    /// clip's first frame.
    #[must_use]
    pub fn height(&self) -> f32 {
        let mut pose = vec![JointPose::default(); self.clip.parents.len()];
        sample_clip(&self.clip.local, &self.clip.parents, self.clip.frame_time, 0.0, &mut pose);
        let ys = pose.iter().map(|p| p.position().y);
        (ys.clone().fold(f32::MIN, f32::max) - ys.fold(f32::MAX, f32::min)) * self.scale
    }

    /// Advances the crowd by `dt` seconds.
    pub fn step(&mut self, dt: f32) {
        for ((p, h), t) in self.positions.iter_mut().zip(&mut self.headings).zip(&mut self.times) {
            crate::scene::wander(p, h, self.speed * self.scale * dt, self.half_extent);
            *t += dt;
        }
    }

    /// This frame's characters (root on the ground, 0/1 foot weights from the clip) and FK
    /// poses, written into the given vectors (cleared first).
    pub fn frame(&self, ground: &Heightfield, characters: &mut Vec<CharacterInput>, poses: &mut Vec<JointPose>) {
        characters.clear();
        poses.clear();
        let n = self.clip.parents.len();
        for ((p, h), t) in self.positions.iter().zip(&self.headings).zip(&self.times) {
            // Sampled straight into this character's slots.
            let start = poses.len();
            poses.resize(start + n, JointPose::default());
            let pose = &mut poses[start..];
            crowd_ik::cpu::clip_sample::sample_clip(
                &self.clip.local,
                &self.clip.parents,
                self.clip.frame_time,
                *t,
                pose,
            );
            let w = contact_weights(&self.file_rig, pose, self.floor);
            let y = ground.sample(p.x, p.y).map_or(0.0, |(y, _)| y);
            let root = Vec3::new(p.x, y - self.floor * self.scale, p.y);
            characters.push(
                CharacterInput::new(root, Quat::from_rotation_y(*h))
                    .with_scale(self.scale)
                    .with_foot_weights([w[0], w[1], 0.0, 0.0]),
            );
        }
    }
}

/// Who walks in a demo: the procedural box walker or a glTF character's crowd.
#[allow(clippy::large_enum_variant)] // one per run
pub enum Walkers {
    /// The procedural biped ([`crate::scene`]) and its rig.
    Boxes(WalkingCrowd, FootRig),
    /// A glTF character.
    Gltf(GltfCrowd),
}

impl Walkers {
    /// `n` walkers over `[-half_extent, half_extent]²` as the command line asks:
    /// `--boxes` for the procedural walker, `--character path.glb [--clip NAME] [--scale S]`
    /// for a glTF character, else [`CESIUM_MAN`].
    ///
    /// # Errors
    /// As [`GltfCrowd::load`]; a `--scale` that is not a number.
    pub fn from_args(args: &[String], n: usize, half_extent: f32) -> Result<Self, Box<dyn std::error::Error>> {
        if args.iter().any(|a| a == "--boxes") {
            return Ok(Walkers::Boxes(WalkingCrowd::new(n, half_extent, 1), biped_rig()));
        }
        let path = flag_value(args, "--character").unwrap_or_else(|| CESIUM_MAN.into());
        let scale = flag_value(args, "--scale").map(|s| s.parse()).transpose()?.unwrap_or(1.0);
        Ok(Walkers::Gltf(GltfCrowd::load(&path, flag_value(args, "--clip").as_deref(), scale, n, half_extent)?))
    }

    /// The flags [`Walkers::from_args`] reads a value after.
    pub const VALUE_FLAGS: [&'static str; 3] = ["--character", "--clip", "--scale"];

    /// The rig the solver gets.
    #[must_use]
    pub fn rig(&self) -> &FootRig {
        match self {
            Walkers::Boxes(_, rig) => rig,
            Walkers::Gltf(c) => &c.rig,
        }
    }

    /// Advances the walkers by `dt` seconds.
    pub fn step(&mut self, dt: f32) {
        match self {
            Walkers::Boxes(c, _) => c.step(dt),
            Walkers::Gltf(c) => c.step(dt),
        }
    }

    /// This frame's characters and FK poses (the vectors are cleared first).
    pub fn frame(&self, ground: &Heightfield, chars: &mut Vec<CharacterInput>, poses: &mut Vec<JointPose>) {
        match self {
            Walkers::Boxes(c, _) => c.frame(ground, chars, poses),
            Walkers::Gltf(c) => c.frame(ground, chars, poses),
        }
    }

    /// The mesh to draw each walker with and the palette's inverse bind matrices for it.
    #[must_use]
    pub fn mesh(&self) -> (SkinMesh, Vec<Mat4>) {
        match self {
            Walkers::Boxes(..) => {
                let (bind, _) = walk_pose(0.0);
                (SkinMesh::from_boxes(&biped_boxes(&bind)), inverse_bind(&bind))
            }
            Walkers::Gltf(c) => (c.mesh.clone(), c.inverse_bind.clone()),
        }
    }

    /// World units per model unit (`CharacterInput::with_scale`).
    #[must_use]
    pub fn scale(&self) -> f32 {
        match self {
            Walkers::Boxes(..) => 1.0,
            Walkers::Gltf(c) => c.scale,
        }
    }
}

/// The value after `flag` on a command line.
#[must_use]
pub fn flag_value(args: &[String], flag: &str) -> Option<String> {
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned()
}
