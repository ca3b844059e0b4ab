//! Characters from spawned scenes: a glTF file spawned the usual way (`WorldAssetRoot`,
//! its clips played by Bevy's `AnimationPlayer`) becomes a crowd character without
//! hand-written joint lists.
//!
//! Put [`CrowdIkScene`] on the scene's root entity. Once the scene has spawned and its
//! assets have loaded, [`attach_scenes`] finds every skinned mesh under it, builds a foot-IK
//! rig once per skeleton (per inverse-bind-pose asset) from the joints' names
//! (`crowd_ik::crowd::find_legs`: Mixamo, Unreal, Unity/VRM, Rigify, CMU, or by shape; four
//! legs are a quadruped's, its hind legs pseudo three-bone) and the bind pose, reads each foot's sole off the mesh (`FootRig::fit_soles`), adds the rig to
//! [`CrowdIk`] with [`PoseSource::Joints`], and gives the mesh entity a [`CrowdIkCharacter`]
//! and [`AutoFootWeights`]. A skeleton whose legs cannot be found gets
//! [`CrowdIkRefused`], with the reason, and a warning.

use std::collections::HashMap;

use bevy::asset::{AssetId, Assets};
use bevy::log::warn;
use bevy::math::{Mat4, Vec3};
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::{Mesh, Mesh3d, VertexAttributeValues};
use bevy::prelude::*;

use crowd_ik::crowd::{find_legs, BipedSettings, FootPlacement, FootRig, JointPose, LegKind, LegRig};

use crate::{CrowdIk, CrowdIkCharacter, PoseSource};

/// Marks the root of a spawned scene whose skinned meshes become crowd characters
/// ([`attach_scenes`]).
#[derive(Component, Clone, Debug)]
pub struct CrowdIkScene {
    /// Settings of the rigs built for it. Here `up` and `forward` are *world* directions
    /// (+Y and +Z by default): each rig gets them in its skin's model space, so a Z-up
    /// export under a turned node needs nothing. The forward only breaks ties (a leg whose
    /// bind pose is straight bends its knee toward the toes).
    pub settings: BipedSettings,
    /// Foot placement across frames for its rigs (on by default: with weights from the
    /// animation, [`AutoFootWeights`], it blends feet in and out instead of popping).
    pub placement: Option<FootPlacement>,
    /// Weights from the animated pose: a foot weighs 1 while its sole is within this many
    /// world units of the floor the bind pose stands on, else 0 ([`AutoFootWeights`]);
    /// `None` leaves [`CrowdIkCharacter::foot_weights`] to the app.
    pub contact_band: Option<f32>,
}

impl Default for CrowdIkScene {
    fn default() -> Self {
        Self { settings: BipedSettings::default(), placement: Some(FootPlacement::default()), contact_band: Some(0.03) }
    }
}

/// A skinned mesh under a [`CrowdIkScene`] the plugin could not make a character, and why.
#[derive(Component, Clone, Debug)]
pub struct CrowdIkRefused(pub String);

/// Foot weights read off the FK pose each frame (in the extract step, for
/// [`PoseSource::Joints`]): leg `l` weighs 1 while its sole (the ankle less the rig's foot
/// height, along `up`) is within `band` of `floor`, else 0 — the 0/1 contact events most
/// animation systems deliver, here from the pose itself. Model space, model units.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct AutoFootWeights {
    /// The model's up axis (unit).
    pub up: Vec3,
    /// Height of the floor along `up`: where the bind pose's soles are.
    pub floor: f32,
    /// Contact band above the floor.
    pub band: f32,
}

impl AutoFootWeights {
    /// The weights of `rig`'s legs for one character's model-space `pose`, whose root has
    /// uniform `scale` (world units per model unit).
    #[must_use]
    pub fn weights(&self, rig: &FootRig, pose: &[JointPose], scale: f32) -> [f32; 4] {
        let mut w = [0.0; 4];
        for (l, leg) in rig.legs.iter().enumerate().take(4) {
            let Some(sole) = sole_height(leg, pose, self.up, scale) else { continue };
            w[l] = f32::from(sole - self.floor <= self.band);
        }
        w
    }
}

/// Height along `up` of a leg's sole in a model-space pose: the ankle less the foot height
/// (two-bone), the hoof tip (pseudo three-bone). `scale`: world units per model unit.
fn sole_height(leg: &LegRig, pose: &[JointPose], up: Vec3, scale: f32) -> Option<f32> {
    let three = matches!(leg.kind, LegKind::PseudoThreeBone { .. });
    let joint = pose.get(if three { leg.joints[3] } else { leg.joints[2] })?;
    Some(joint.position().dot(up) - leg.foot_height / scale.max(f32::MIN_POSITIVE))
}

/// Rigs built from scenes, by the inverse-bind-pose asset of their skin.
#[derive(Resource, Default)]
pub struct SceneRigs(pub HashMap<AssetId<SkinnedMeshInverseBindposes>, (usize, AutoFootWeights)>);

/// What [`attach_scenes`] reads.
type SkinData = (Entity, &'static SkinnedMesh, &'static GlobalTransform, Option<&'static Mesh3d>);

/// Makes the skinned meshes under each [`CrowdIkScene`] crowd characters (see the module
/// documentation). Runs in `PostUpdate` after transform propagation; a mesh whose assets
/// are still loading is tried again next frame, and a root whose meshes are all done gets
/// [`SceneAttached`].
#[allow(clippy::too_many_arguments)]
pub fn attach_scenes(
    mut commands: Commands,
    scenes: Query<(Entity, &CrowdIkScene), Without<SceneAttached>>,
    children: Query<&Children>,
    skins: Query<SkinData, (Without<CrowdIkCharacter>, Without<CrowdIkRefused>)>,
    any_skin: Query<(), With<SkinnedMesh>>,
    names: Query<&Name>,
    parents: Query<&ChildOf>,
    bindposes: Res<Assets<SkinnedMeshInverseBindposes>>,
    meshes: Res<Assets<Mesh>>,
    crowd: Option<ResMut<CrowdIk>>,
    mut rigs: ResMut<SceneRigs>,
) {
    let Some(mut crowd) = crowd else { return };
    for (scene_root, scene) in &scenes {
        // Once every skinned mesh under the root is a character (or refused), the root is
        // marked and not searched again.
        let (mut found, mut waiting) = (false, false);
        for entity in children.iter_descendants(scene_root) {
            found |= any_skin.contains(entity);
            let Ok((entity, skin, root, mesh)) = skins.get(entity) else { continue };
            let Some(ibp) = bindposes.get(&skin.inverse_bindposes) else {
                waiting = true;
                continue;
            };
            let id = skin.inverse_bindposes.id();
            let (scale, rotation, _) = root.to_scale_rotation_translation();
            let scale = scale.x.abs();
            let known = rigs.0.get(&id).copied();
            let (rig, auto) = match known {
                Some(known) => known,
                None => {
                    let vertices = mesh.and_then(|m| meshes.get(&m.0));
                    if mesh.is_some() && vertices.is_none() {
                        waiting = true; // the mesh is still loading
                        continue;
                    }
                    let built = build_rig(skin, ibp, vertices, rotation, scale, scene, &names, &parents);
                    match built {
                        Ok((rig, auto)) => {
                            let index = crowd.add_rig(rig, PoseSource::Joints);
                            rigs.0.insert(id, (index, auto));
                            (index, auto)
                        }
                        Err(why) => {
                            warn!("crowd IK: skinned mesh {entity} is not a crowd character: {why}");
                            commands.entity(entity).insert(CrowdIkRefused(why));
                            continue;
                        }
                    }
                }
            };
            let mut e = commands.entity(entity);
            e.insert(CrowdIkCharacter { rig, ..Default::default() });
            if let Some(band) = scene.contact_band {
                e.insert(AutoFootWeights { band: band / scale.max(f32::MIN_POSITIVE), ..auto });
            }
        }
        if found && !waiting {
            commands.entity(scene_root).insert(SceneAttached);
        }
    }
}

/// Marks a [`CrowdIkScene`] root whose skinned meshes are all characters or refused:
/// [`attach_scenes`] does not search it again. Remove it to have the scene searched again
/// (e.g. after spawning more skinned meshes under it).
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct SceneAttached;

/// The rig of one skin: joints named from their entities, parents through the hierarchy
/// (non-joint nodes between joints skipped), the bind pose from the inverse bind poses
/// (model space: the skinned mesh's), legs by name or shape, soles from the mesh.
#[allow(clippy::too_many_arguments)]
fn build_rig(
    skin: &SkinnedMesh,
    ibp: &SkinnedMeshInverseBindposes,
    mesh: Option<&Mesh>,
    root_rotation: Quat,
    scale: f32,
    scene: &CrowdIkScene,
    names: &Query<&Name>,
    parents: &Query<&ChildOf>,
) -> Result<(FootRig, AutoFootWeights), String> {
    let n = skin.joints.len();
    if ibp.len() != n {
        return Err(format!("{} inverse bind poses for {n} joints", ibp.len()));
    }
    let index: HashMap<Entity, usize> = skin.joints.iter().enumerate().map(|(i, e)| (*e, i)).collect();
    let joint_names: Vec<String> = skin
        .joints
        .iter()
        .enumerate()
        .map(|(i, e)| names.get(*e).map_or(format!("joint{i}"), |n| n.to_string()))
        .collect();
    let mut joint_parents = Vec::with_capacity(n);
    for (i, &joint) in skin.joints.iter().enumerate() {
        let mut up = parents.get(joint).ok().map(ChildOf::parent);
        while let Some(p) = up {
            if index.contains_key(&p) {
                break;
            }
            up = parents.get(p).ok().map(ChildOf::parent);
        }
        let parent = up.map(|p| index[&p]);
        if parent.is_some_and(|p| p >= i) {
            return Err(format!(
                "joint {:?} comes before its parent {:?} in the skin (the rig needs parents first)",
                joint_names[i],
                joint_names[parent.unwrap_or(0)]
            ));
        }
        joint_parents.push(parent);
    }
    let bind: Vec<JointPose> = ibp
        .iter()
        .map(|m: &Mat4| {
            let (_, r, t) = m.inverse().to_scale_rotation_translation();
            JointPose::new(t, r.normalize())
        })
        .collect();
    if bind.iter().any(|p| !(p.position().is_finite() && p.rotation().is_finite())) {
        return Err("an inverse bind pose is not invertible".into());
    }
    let to_model = root_rotation.inverse();
    let up = (to_model * scene.settings.up).normalize_or(Vec3::Y);
    let found = find_legs(&joint_names, &joint_parents, &bind, up).map_err(|e| e.to_string())?;
    // Forward: where the toes point in the bind pose (across up), else the settings'.
    let toes: Vec3 = found.legs.iter().map(|l| bind[l[3]].position() - bind[l[2]].position()).sum();
    let forward = (toes - up * toes.dot(up))
        .try_normalize()
        .unwrap_or_else(|| (to_model * scene.settings.forward).normalize_or(Vec3::Z));
    let settings = BipedSettings { up, forward, ..scene.settings };
    let rest: Vec<JointPose> = bind.iter().map(|p| JointPose::new(p.position() * scale, p.rotation())).collect();
    // Four legs: a quadruped's, the hind ones pseudo three-bone (`FoundLegs::quadruped`).
    let legs: Vec<([usize; 4], LegKind)> = if found.legs.len() == 4 {
        found.quadruped(&rest, forward)
    } else {
        found.legs.iter().map(|l| (*l, LegKind::TwoBone)).collect()
    };
    let mut rig =
        FootRig::from_joints(&joint_parents, &rest, found.pelvis, &legs, settings).map_err(|e| e.to_string())?;
    if let Some(mesh) = mesh {
        if let Some((positions, joints, weights)) = skin_attributes(mesh) {
            rig.fit_soles(&bind, (&positions, &joints, &weights), up, scale);
        }
    }
    let floor = rig.legs.iter().filter_map(|l| sole_height(l, &bind, up, scale)).fold(f32::INFINITY, f32::min);
    let rig = rig.with_placement(scene.placement);
    rig.validate().map_err(|e| e.to_string())?;
    Ok((rig, AutoFootWeights { up, floor, band: 0.0 }))
}

/// A mesh's positions, joint indices and weights (bind space).
type SkinAttributes = (Vec<Vec3>, Vec<[u16; 4]>, Vec<[f32; 4]>);

/// A mesh's skin attributes, if it has all three.
fn skin_attributes(mesh: &Mesh) -> Option<SkinAttributes> {
    let Some(VertexAttributeValues::Float32x3(p)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION) else { return None };
    let j: Vec<[u16; 4]> = match mesh.attribute(Mesh::ATTRIBUTE_JOINT_INDEX)? {
        VertexAttributeValues::Uint16x4(j) => j.clone(),
        VertexAttributeValues::Uint8x4(j) => j.iter().map(|j| j.map(u16::from)).collect(),
        _ => return None,
    };
    let Some(VertexAttributeValues::Float32x4(w)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT) else { return None };
    Some((p.iter().map(|p| Vec3::from(*p)).collect(), j, w.clone()))
}
