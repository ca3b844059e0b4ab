//! Meshes and entities for characters without art: a skinned mesh of boxes built from a
//! skeleton's bind pose (e.g. a BVH skeleton), its joint entities, and a heightfield mesh.

use bevy::asset::RenderAssetUsages;
use bevy::math::{Mat4, Quat, Vec3};
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::{Indices, Mesh, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;

use crowd_ik::crowd::{Heightfield, JointPose};

/// A box between two bind-space points, moved rigidly by one joint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedBox {
    /// The joint (index into the skin's joints) that moves the box.
    pub joint: usize,
    /// One end, bind (model) space.
    pub from: Vec3,
    /// The other end, bind space.
    pub to: Vec3,
    /// Half the box's width.
    pub half_width: f32,
}

/// One box per bone (parent joint → joint) of a bind pose, moved by the parent joint.
#[must_use]
pub fn bone_boxes(bind: &[JointPose], parents: &[Option<usize>], half_width: f32) -> Vec<SkinnedBox> {
    parents
        .iter()
        .enumerate()
        .filter_map(|(j, p)| p.map(|p| (p, j)))
        .filter(|&(p, j)| bind[p].position().distance(bind[j].position()) > 1e-4)
        .map(|(p, j)| SkinnedBox { joint: p, from: bind[p].position(), to: bind[j].position(), half_width })
        .collect()
}

/// A rigidly skinned mesh of boxes (positions, normals, joint indices and weights).
#[must_use]
pub fn box_mesh(boxes: &[SkinnedBox]) -> Mesh {
    let (mut positions, mut normals, mut joints, mut indices) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for b in boxes {
        let axis = b.to - b.from;
        let length = axis.length().max(1e-6);
        let rotation = Quat::from_rotation_arc(Vec3::Y, axis / length);
        let center = (b.from + b.to) * 0.5;
        let half = Vec3::new(b.half_width, length * 0.5, b.half_width);
        // Six faces, four vertices each, outward normals.
        for (n, u, v) in [
            (Vec3::X, Vec3::Y, Vec3::Z),
            (Vec3::NEG_X, Vec3::Z, Vec3::Y),
            (Vec3::Y, Vec3::Z, Vec3::X),
            (Vec3::NEG_Y, Vec3::X, Vec3::Z),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (Vec3::NEG_Z, Vec3::Y, Vec3::X),
        ] {
            let base = positions.len() as u32;
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let local = (n + u * su + v * sv) * half;
                positions.push((center + rotation * local).to_array());
                normals.push((rotation * n).to_array());
                joints.push([b.joint as u16, 0, 0, 0]);
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    let weights = vec![[1.0f32, 0.0, 0.0, 0.0]; positions.len()];
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_INDEX, VertexAttributeValues::Uint16x4(joints))
        .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, weights)
        .with_inserted_indices(Indices::U32(indices))
}

/// The inverse bind matrices of a model-space bind pose.
#[must_use]
pub fn inverse_bindposes(bind: &[JointPose]) -> SkinnedMeshInverseBindposes {
    let matrices: Vec<Mat4> = crowd_ik::cpu::palette::inverse_bind(bind);
    SkinnedMeshInverseBindposes::from(matrices)
}

/// Each joint's local transform (relative to its parent; the root's relative to the
/// character) of a model-space pose.
#[must_use]
pub fn local_transforms(pose: &[JointPose], parents: &[Option<usize>]) -> Vec<Transform> {
    parents
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let (pos, rot) = (pose[j].position(), pose[j].rotation());
            match p {
                Some(p) => {
                    let inv = pose[*p].rotation().inverse();
                    Transform::from_translation(inv * (pos - pose[*p].position())).with_rotation(inv * rot)
                }
                None => Transform::from_translation(pos).with_rotation(rot),
            }
        })
        .collect()
}

/// Spawns a skinned character: the mesh entity at `root` with `extra` components, and one
/// child entity per joint (hierarchy from `parents`, local transforms of `bind`); returns the
/// mesh entity and its joints, in the skeleton's order (that of `SkinnedMesh::joints`).
pub fn spawn_skinned(
    commands: &mut Commands,
    root: Transform,
    bind: &[JointPose],
    parents: &[Option<usize>],
    inverse_bindposes: Handle<SkinnedMeshInverseBindposes>,
    extra: impl Bundle,
) -> (Entity, Vec<Entity>) {
    let character = commands.spawn((root, extra)).id();
    let locals = local_transforms(bind, parents);
    let mut joints: Vec<Entity> = Vec::with_capacity(parents.len());
    for (j, p) in parents.iter().enumerate() {
        let parent = p.map_or(character, |p| joints[p]);
        joints.push(commands.spawn((locals[j], ChildOf(parent))).id());
    }
    commands.entity(character).insert(SkinnedMesh { inverse_bindposes, joints: joints.clone() });
    (character, joints)
}

/// A triangle mesh of a heightfield (holes left out), with smooth normals.
#[must_use]
pub fn heightfield_mesh(ground: &Heightfield) -> Mesh {
    let (nx, nz) = (ground.nx, ground.nz);
    let at = |i: usize, j: usize| {
        let h = ground.heights[j * nx + i];
        Vec3::new(ground.origin.x + i as f32 * ground.cell, h, ground.origin.y + j as f32 * ground.cell)
    };
    let mut positions = Vec::with_capacity(nx * nz);
    let mut normals = Vec::with_capacity(nx * nz);
    for j in 0..nz {
        for i in 0..nx {
            let p = at(i, j);
            positions.push(if p.is_finite() { p.to_array() } else { [p.x, 0.0, p.z] });
            let n = ground.sample(p.x, p.z).map_or(Vec3::Y, |(_, n)| n);
            normals.push(n.to_array());
        }
    }
    let mut indices = Vec::new();
    for j in 0..nz - 1 {
        for i in 0..nx - 1 {
            let q = [j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i];
            if q.iter().any(|&k| !ground.heights[k].is_finite()) {
                continue;
            }
            let q = q.map(|k| k as u32);
            indices.extend_from_slice(&[q[0], q[2], q[1], q[0], q[3], q[2]]);
        }
    }
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_indices(Indices::U32(indices))
}
