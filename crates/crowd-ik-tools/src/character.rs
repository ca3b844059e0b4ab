//! A glTF character's walk for scenes: its contact floor, 0/1 foot weights from the sole's
//! height, and the speed its root needs when the clip walks in place.

use crowd_ik::cpu::clip_sample::sample_clip;
use crowd_ik::crowd::{FootRig, JointPose};
use crowd_ik::gltf::BakedClip;

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
