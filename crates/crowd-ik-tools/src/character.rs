//! A glTF character's walk for scenes: its contact floor, 0/1 foot weights from the sole's
//! height, the speed its root needs when the clip walks in place, and a crowd of it.

use crowd_ik::cpu::clip_sample::sample_clip;
use crowd_ik::crowd::{CharacterInput, FootRig, Heightfield, JointPose};
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::gltf::{BakedClip, GltfScene, RootMotion};

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
        let rig = skeleton.foot_rig(settings, scale)?;
        let file_rig = skeleton.foot_rig(settings, 1.0)?;
        let clip = anim.bake(skeleton, 60.0, RootMotion::Extract)?;
        let frames = frames(&clip);
        let floor = floor(&file_rig, &frames);
        let speed = in_place_speed(&file_rig, &frames, clip.frame_time, floor);
        println!(
            "character: {path}, clip {:?} ({:.2} s), {} joints, legs {:?}, walking {:.2} m/s",
            anim.name,
            anim.duration,
            skeleton.len(),
            rig.legs.iter().map(|l| l.joints.map(|j| skeleton.names[j].as_str())).collect::<Vec<_>>(),
            speed * scale
        );
        let mut rng = crate::workload::Rng::new(7);
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

    /// Advances the crowd by `dt` seconds.
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
