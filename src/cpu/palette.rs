//! Skinning palette: the CPU twin of `shaders/palette.wgsl`.

use glam::{Mat4, Quat};

use super::math::{finite_point, finite_rotation};
use crate::crowd::JointPose;
use crate::records::v3;

/// Writes `palette[c·J + j] = model matrix of joint j of character c × inverse_bind[j]`
/// (column-major `mat4x4<f32>`, model space), for `poses.len() / J` characters.
/// Non-finite poses become the identity transform (as every fallback does).
pub fn palette(poses: &[JointPose], inverse_bind: &[Mat4], palette: &mut [Mat4]) {
    let joints = inverse_bind.len();
    for (i, (p, out)) in poses.iter().zip(palette.iter_mut()).enumerate() {
        let rotation = Quat::from_array(finite_rotation(p.rotation_ms));
        let model = Mat4::from_rotation_translation(rotation, v3(finite_point(p.position_ms)));
        *out = model * inverse_bind[i % joints];
    }
}

/// Inverse bind matrices of a bind (rest) pose in model space.
#[must_use]
pub fn inverse_bind(bind_pose: &[JointPose]) -> Vec<Mat4> {
    bind_pose.iter().map(|p| Mat4::from_rotation_translation(p.rotation(), p.position()).inverse()).collect()
}
