//! `--character path.glb [--clip NAME] [--scale S]`: the crowd made of a glTF character (its
//! rig found by joint names or shape, its clip baked; a clip that walks in place gets the
//! root speed its planted feet need). `--scale` turns the file's units into metres (0.01
//! for a character in centimetres).

use crowd_ik::crowd::{CharacterInput, FootRig, Heightfield, JointPose};
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::gltf::{BakedClip, GltfScene, RootMotion};
use crowd_ik_tools::character;

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
}

impl GltfCrowd {
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
        let rig = skeleton.foot_rig(settings, scale)?;
        let file_rig = skeleton.foot_rig(settings, 1.0)?;
        let clip = anim.bake(skeleton, 60.0, RootMotion::Extract)?;
        let frames = character::frames(&clip);
        let floor = character::floor(&file_rig, &frames);
        let speed = character::in_place_speed(&file_rig, &frames, clip.frame_time, floor);
        println!(
            "character: {path}, clip {:?} ({:.2} s), {} joints, legs {:?}, walking {:.2} m/s",
            anim.name,
            anim.duration,
            skeleton.len(),
            rig.legs.iter().map(|l| l.joints.map(|j| skeleton.names[j].as_str())).collect::<Vec<_>>(),
            speed * scale
        );
        let mut rng = crowd_ik_tools::workload::Rng::new(7);
        Ok(Self {
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

    pub fn step(&mut self, dt: f32) {
        for ((p, h), t) in self.positions.iter_mut().zip(&mut self.headings).zip(&mut self.times) {
            *p += Vec2::new(h.sin(), h.cos()) * self.speed * self.scale * dt;
            if p.x.abs() > self.half_extent || p.y.abs() > self.half_extent {
                *h += std::f32::consts::PI;
                *p = p.clamp(Vec2::splat(-self.half_extent), Vec2::splat(self.half_extent));
            }
            *t += dt;
        }
    }

    pub fn frame(&self, ground: &Heightfield, characters: &mut Vec<CharacterInput>, poses: &mut Vec<JointPose>) {
        characters.clear();
        poses.clear();
        let mut pose = vec![JointPose::default(); self.clip.parents.len()];
        for ((p, h), t) in self.positions.iter().zip(&self.headings).zip(&self.times) {
            crowd_ik::cpu::clip_sample::sample_clip(
                &self.clip.local,
                &self.clip.parents,
                self.clip.frame_time,
                *t,
                &mut pose,
            );
            let w = character::contact_weights(&self.file_rig, &pose, self.floor);
            let y = ground.sample(p.x, p.y).map_or(0.0, |(y, _)| y);
            let root = Vec3::new(p.x, y - self.floor * self.scale, p.y);
            characters.push(
                CharacterInput::new(root, Quat::from_rotation_y(*h))
                    .with_scale(self.scale)
                    .with_foot_weights([w[0], w[1], 0.0, 0.0]),
            );
            poses.extend_from_slice(&pose);
        }
    }
}
