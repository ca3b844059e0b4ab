//! Motion-clip sampling to model space, per character: the CPU twin of
//! `shaders/kernels/clip_sample.wgsl` (the crate's GPU pose source).

use glam::Quat;

use crate::crowd::{JointPose, NONE};
use crate::records::v3;

/// Samples a looping clip at `time` seconds into model space.
///
/// `local` holds the clip's local joint transforms, frame-major (`frames × joints`,
/// translation in `position_ms`, rotation in `rotation_ms`); `parents` uses
/// [`crate::crowd::NONE`] for roots, parents first. Between frames translations lerp and
/// rotations nlerp (shorter arc).
pub fn sample_clip(local: &[JointPose], parents: &[u32], frame_time: f32, time: f32, out: &mut [JointPose]) {
    let joints = parents.len();
    let frames = (local.len() / joints.max(1)).max(1);
    let f = time / frame_time;
    let f = f - (f / frames as f32).floor() * frames as f32; // [0, frames)
    let i0 = (f.floor() as usize).min(frames - 1);
    let i1 = (i0 + 1) % frames;
    let a = f - i0 as f32;
    for j in 0..joints {
        let (p, q) = (local[i0 * joints + j], local[i1 * joints + j]);
        let t = v3(p.position_ms).lerp(v3(q.position_ms), a);
        let (r0, r1) = (p.rotation(), q.rotation());
        let r1 = if r0.dot(r1) < 0.0 { -r1 } else { r1 };
        let r = Quat::from_vec4(glam::Vec4::from(r0).lerp(glam::Vec4::from(r1), a)).normalize();
        out[j] = if parents[j] == NONE {
            JointPose::new(t, r)
        } else {
            let parent = out[parents[j] as usize];
            JointPose::new(parent.position() + parent.rotation() * t, (parent.rotation() * r).normalize())
        };
    }
}
