//! The extract step: each frame's characters, gathered from the main world.

use std::collections::HashSet;
use std::time::Instant;

use bevy::asset::{AssetId, Assets};
use bevy::camera::visibility::ViewVisibility;
use bevy::ecs::system::SystemParam;
use bevy::log::warn;
use bevy::math::Mat4;
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::prelude::*;
use bevy::render::sync_world::MainEntity;
use bevy::render::Extract;

use crowd_ik::crowd::{CharacterInput, Ground, GroundHit, JointPose};

use crate::{CrowdIk, CrowdIkCharacter, FootGroundHits, PoseSource};

/// One frame's crowd, gathered in the extract schedule (render world).
#[derive(Resource, Default)]
pub struct ExtractedCrowd {
    pub(crate) settings: Option<CrowdIk>,
    pub(crate) settings_changed: bool,
    pub(crate) entities: Vec<MainEntity>,
    pub(crate) characters: Vec<CharacterInput>,
    pub(crate) offsets: Vec<f32>,
    pub(crate) resets: Vec<bool>,
    pub(crate) poses: Vec<JointPose>,
    pub(crate) hits: Vec<GroundHit>,
    pub(crate) inverse_bind: Option<(AssetId<SkinnedMeshInverseBindposes>, Vec<Mat4>)>,
    pub(crate) time: f32,
    pub(crate) dt: f32,
    pub(crate) skipped: Vec<(Entity, String)>,
    pub(crate) extract_ms: f64,
}

/// What the extract step reads of each character.
pub(crate) type CharacterData = (
    Entity,
    &'static CrowdIkCharacter,
    &'static SkinnedMesh,
    &'static GlobalTransform,
    Option<&'static ViewVisibility>,
    Option<&'static FootGroundHits>,
);

/// Queries of the extract step.
#[derive(SystemParam)]
pub(crate) struct CrowdQueries<'w, 's> {
    pub(crate) characters: Extract<'w, 's, Query<'static, 'static, CharacterData>>,
    pub(crate) joints: Extract<'w, 's, Query<'static, 'static, &'static GlobalTransform>>,
    pub(crate) bindposes: Extract<'w, 's, Res<'static, Assets<SkinnedMeshInverseBindposes>>>,
}

pub(crate) fn extract_crowd(
    settings: Extract<Option<Res<CrowdIk>>>,
    time: Extract<Res<Time>>,
    queries: CrowdQueries,
    mut crowd: ResMut<ExtractedCrowd>,
    mut warned: Local<HashSet<(Entity, u8)>>,
) {
    let start = Instant::now();
    let crowd = &mut *crowd;
    crowd.entities.clear();
    crowd.characters.clear();
    crowd.offsets.clear();
    crowd.resets.clear();
    crowd.poses.clear();
    crowd.hits.clear();
    crowd.skipped.clear();
    let Some(settings) = settings.as_ref() else {
        crowd.settings_changed = crowd.settings.take().is_some();
        return;
    };
    // Rebuild the GPU state only for a new rig, ground or pose source; `enabled` and
    // `gpu_timing` are read every frame.
    crowd.settings_changed = match crowd.settings.as_mut() {
        Some(known) if settings.is_changed() => {
            let rebuild = !known.same_solver(settings);
            *known = CrowdIk::clone(settings);
            rebuild
        }
        Some(_) => false,
        None => {
            crowd.settings = Some(CrowdIk::clone(settings));
            true
        }
    };
    crowd.time = time.elapsed_secs_wrapped();
    crowd.dt = time.delta_secs();
    let joint_count = settings.rig.joint_count();
    let joints_mode = matches!(settings.poses, PoseSource::Joints);
    let hits_mode = matches!(settings.ground, Ground::Hits);
    let mut skip = |crowd: &mut ExtractedCrowd, entity: Entity, code: u8, why: String| {
        if warned.insert((entity, code)) {
            warn!("crowd IK: character {entity} skipped: {why}");
        }
        crowd.skipped.push((entity, why));
    };
    for (entity, character, skin, root, visibility, hits) in &queries.characters {
        if visibility.is_some_and(|v| !v.get()) {
            continue; // Bevy allocates no joint matrices for hidden skins
        }
        if skin.joints.len() != joint_count {
            let why = format!("its skin has {} joints, the crowd rig {joint_count}", skin.joints.len());
            skip(crowd, entity, 0, why);
            continue;
        }
        let id = skin.inverse_bindposes.id();
        match &crowd.inverse_bind {
            Some((known, _)) if *known == id => {}
            Some(_) if !crowd.entities.is_empty() => {
                skip(crowd, entity, 1, "its inverse bind poses differ from the crowd's (one rig per plugin)".into());
                continue;
            }
            _ => match queries.bindposes.get(id) {
                Some(ibp) if ibp.len() == joint_count => crowd.inverse_bind = Some((id, ibp.to_vec())),
                Some(ibp) => {
                    let why = format!("{} inverse bind poses for {joint_count} joints", ibp.len());
                    skip(crowd, entity, 2, why);
                    continue;
                }
                None => continue, // the asset is still loading
            },
        }
        let (scale, rotation, translation) = root.to_scale_rotation_translation();
        let uniform = (scale.x.abs() - scale.y.abs()).abs() <= 1e-3 * scale.x.abs()
            && (scale.x.abs() - scale.z.abs()).abs() <= 1e-3 * scale.x.abs();
        if !uniform || !translation.is_finite() || !rotation.is_finite() {
            skip(crowd, entity, 3, format!("its root transform is not a finite uniform scale ({scale})"));
            continue;
        }
        let mirrored = root.affine().matrix3.determinant() < 0.0;
        let input = CharacterInput::new(translation, rotation)
            .with_scale(scale.x.abs())
            .with_mirrored(mirrored)
            .with_foot_weights(character.foot_weights);
        if joints_mode {
            // Model space = the character root's frame: root⁻¹ × joint global.
            let to_model = root.affine().inverse();
            let start = crowd.poses.len();
            for &joint in &skin.joints {
                let Ok(global) = queries.joints.get(joint) else { break };
                let m = to_model * global.affine();
                let (_, r, t) = m.to_scale_rotation_translation();
                crowd.poses.push(JointPose::new(t, r.normalize()));
            }
            if crowd.poses.len() != start + joint_count {
                crowd.poses.truncate(start);
                skip(crowd, entity, 4, "a joint entity has no GlobalTransform (despawned?)".into());
                continue;
            }
        }
        if hits_mode {
            let Some(hits) = hits else {
                skip(crowd, entity, 5, "Ground::Hits needs its FootGroundHits component".into());
                continue;
            };
            crowd.hits.extend_from_slice(&hits.0);
        }
        crowd.entities.push(MainEntity::from(entity));
        crowd.characters.push(input);
        crowd.offsets.push(character.clip_offset);
        crowd.resets.push(character.reset);
    }
    crowd.extract_ms = start.elapsed().as_secs_f64() * 1e3;
}
