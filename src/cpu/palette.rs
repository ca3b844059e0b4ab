//! Skinning palette: the CPU twin of `shaders/kernels/palette.wgsl`.

use glam::{Mat4, Quat};

use super::math::{finite4, finite_point, finite_rotation};
use crate::crowd::{CharacterInput, JointPose};
use crate::records::v3;

/// Writes `palette[c·J + j] = model matrix of joint j of character c × inverse_bind[j]`
/// (column-major `mat4x4<f32>`, model space), for `poses.len() / J` characters.
/// Non-finite poses become the identity transform (as every fallback does).
pub fn palette(poses: &[JointPose], inverse_bind: &[Mat4], palette: &mut [Mat4]) {
    let joints = inverse_bind.len();
    for (i, (p, out)) in poses.iter().zip(palette.iter_mut()).enumerate() {
        *out = joint_matrix(p) * inverse_bind[i % joints];
    }
}

/// [`palette`] in world space: `palette[c·J + j] = world matrix of character c × model
/// matrix of joint j × inverse_bind[j]`, the joint matrices of renderers that skin in world
/// space (Bevy's `SkinUniforms`). The world matrix is the character's root transform
/// ([`CharacterInput::to_world`] as a matrix: translation, rotation, uniform scale, a mirror
/// for a negative scale; non-finite parts fall back to identity parts). `characters` holds
/// at least `poses.len() / J` records.
pub fn palette_world(poses: &[JointPose], characters: &[CharacterInput], inverse_bind: &[Mat4], palette: &mut [Mat4]) {
    let joints = inverse_bind.len();
    for (i, (p, out)) in poses.iter().zip(palette.iter_mut()).enumerate() {
        *out = root_matrix(&characters[i / joints]) * (joint_matrix(p) * inverse_bind[i % joints]);
    }
}

/// [`palette_world`] written straight into a renderer's joint buffer: character `c`'s
/// matrices go to `dst[offsets[c] + j]` (Bevy's skin buffer, where each skinned mesh has its
/// own offset); an offset of [`NONE`](crate::crowd::NONE) skips the character, and matrices
/// that would fall outside `dst` are not written. Entries of `dst` no character covers keep
/// their values.
pub fn palette_world_scatter(
    poses: &[JointPose],
    characters: &[CharacterInput],
    inverse_bind: &[Mat4],
    offsets: &[u32],
    dst: &mut [Mat4],
) {
    let joints = inverse_bind.len();
    for (i, p) in poses.iter().enumerate() {
        let (c, j) = (i / joints, i % joints);
        let first = offsets[c];
        if first == crate::crowd::NONE || first as usize >= dst.len() || j >= dst.len() - first as usize {
            continue;
        }
        dst[first as usize + j] = root_matrix(&characters[c]) * (joint_matrix(p) * inverse_bind[j]);
    }
}

/// Model matrix of one joint pose (non-finite parts: identity parts).
fn joint_matrix(p: &JointPose) -> Mat4 {
    let rotation = Quat::from_array(finite_rotation(p.rotation_ms));
    Mat4::from_rotation_translation(rotation, v3(finite_point(p.position_ms)))
}

/// A character's model → world matrix, as `shaders/kernels/palette.wgsl`'s `root_matrix`.
fn root_matrix(ch: &CharacterInput) -> Mat4 {
    let t = v3(finite_point([ch.root_ws[0], ch.root_ws[1], ch.root_ws[2], 1.0]));
    let s = ch.root_ws[3];
    let s = if !finite4([s; 4]) || s == 0.0 { 1.0 } else { s };
    let m = Mat4::from_rotation_translation(Quat::from_array(finite_rotation(ch.root_rotation)), t);
    let a = s.abs();
    Mat4::from_cols(m.x_axis * (a * s.signum()), m.y_axis * a, m.z_axis * a, m.w_axis)
}

/// Inverse bind matrices of a bind (rest) pose in model space.
#[must_use]
pub fn inverse_bind(bind_pose: &[JointPose]) -> Vec<Mat4> {
    bind_pose.iter().map(|p| Mat4::from_rotation_translation(p.rotation(), p.position()).inverse()).collect()
}

/// The inverse bind matrices to give the palette for a skin whose own inverse bind
/// matrices carry a scale or a reflection (an exporter's 0.01 unit scale, a mirrored limb
/// or character): the inverse of each bind matrix's rigid part (its rotation and
/// translation; a reflection taken out as a negative x scale, glam's convention, as the
/// joint poses of such a skin are). Rigid pose × it is the skin's own joint matrix
/// (global × inverse bind) exactly while each joint keeps the scale and handedness it was
/// bound with; for a rigid bind it is the matrix itself. A bind matrix that is not
/// invertible gives the identity.
#[must_use]
pub fn rigid_inverse_bind(inverse_bind: &[Mat4]) -> Vec<Mat4> {
    inverse_bind
        .iter()
        .map(|ib| {
            let (_, r, t) = ib.inverse().to_scale_rotation_translation();
            let m = Mat4::from_rotation_translation(r.normalize(), t).inverse();
            if m.is_finite() && ib.determinant().abs() > 1e-30 {
                m
            } else {
                Mat4::IDENTITY
            }
        })
        .collect()
}
