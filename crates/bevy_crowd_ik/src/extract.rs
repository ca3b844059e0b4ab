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

use crate::{AutoFootWeights, CrowdIk, CrowdIkCharacter, FootGroundHits, PoseSource};

/// One frame's crowd, gathered in the extract schedule (render world).
#[derive(Resource, Default)]
pub struct ExtractedCrowd {
    pub(crate) settings: Option<CrowdIk>,
    /// Per rig: its GPU state must be rebuilt (new rig, pose source or ground).
    pub(crate) rebuild: Vec<bool>,
    pub(crate) rigs: Vec<ExtractedRig>,
    pub(crate) time: f32,
    pub(crate) dt: f32,
    pub(crate) skipped: Vec<(Entity, String)>,
    pub(crate) extract_ms: f64,
}

/// One rig's characters this frame.
#[derive(Default)]
pub(crate) struct ExtractedRig {
    pub(crate) entities: Vec<MainEntity>,
    pub(crate) characters: Vec<CharacterInput>,
    pub(crate) offsets: Vec<f32>,
    /// Indices (in `entities`) of the characters whose foot-placement state resets.
    pub(crate) resets: Vec<usize>,
    pub(crate) poses: Vec<JointPose>,
    pub(crate) hits: Vec<GroundHit>,
    /// The rig's inverse bind poses (those of its first character's skin).
    pub(crate) inverse_bind: Option<(AssetId<SkinnedMeshInverseBindposes>, Vec<Mat4>)>,
}

impl ExtractedRig {
    fn clear(&mut self) {
        self.entities.clear();
        self.characters.clear();
        self.offsets.clear();
        self.resets.clear();
        self.poses.clear();
        self.hits.clear();
    }
}

/// What the extract step reads of each character.
pub(crate) type CharacterData = (
    Entity,
    &'static CrowdIkCharacter,
    &'static SkinnedMesh,
    &'static GlobalTransform,
    Option<&'static ViewVisibility>,
    Option<&'static FootGroundHits>,
    Option<&'static AutoFootWeights>,
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
    crowd.skipped.clear();
    let Some(settings) = settings.as_ref() else {
        crowd.settings = None;
        crowd.rigs.clear();
        return;
    };
    // Rebuild a rig's GPU state only for a new rig, pose source or ground; `enabled` and
    // `gpu_timing` and `copy_per_character` are read every frame.
    let rigs = settings.rigs.len();
    crowd.rebuild.clear();
    match crowd.settings.as_mut() {
        Some(known) if settings.is_changed() => {
            let ground = known.ground != settings.ground;
            crowd.rebuild.extend(
                settings
                    .rigs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ground || known.rigs.get(i).is_none_or(|k| !k.same_solver(r))),
            );
            *known = CrowdIk::clone(settings);
        }
        Some(_) => crowd.rebuild.resize(rigs, false),
        None => {
            crowd.settings = Some(CrowdIk::clone(settings));
            crowd.rebuild.resize(rigs, true);
        }
    }
    crowd.rigs.resize_with(rigs, ExtractedRig::default);
    for (rig, rebuild) in crowd.rigs.iter_mut().zip(&crowd.rebuild) {
        rig.clear();
        if *rebuild {
            rig.inverse_bind = None;
        }
    }
    crowd.time = time.elapsed_secs_wrapped();
    crowd.dt = time.delta_secs();
    let hits_mode = matches!(settings.ground, Ground::Hits);
    let skipped = &mut crowd.skipped;
    let mut skip = |entity: Entity, code: u8, why: String| {
        if warned.insert((entity, code)) {
            warn!("crowd IK: character {entity} skipped: {why}");
        }
        skipped.push((entity, why));
    };
    for (entity, character, skin, root, visibility, hits, auto) in &queries.characters {
        if visibility.is_some_and(|v| !v.get()) {
            continue; // Bevy allocates no joint matrices for hidden skins
        }
        let (Some(rig), Some(out)) = (settings.rigs.get(character.rig), crowd.rigs.get_mut(character.rig)) else {
            skip(entity, 6, format!("it names rig {}, the crowd has {rigs}", character.rig));
            continue;
        };
        let joint_count = rig.rig.joint_count();
        if skin.joints.len() != joint_count {
            let why = format!("its skin has {} joints, its rig {joint_count}", skin.joints.len());
            skip(entity, 0, why);
            continue;
        }
        let id = skin.inverse_bindposes.id();
        match &out.inverse_bind {
            Some((known, _)) if *known == id => {}
            Some(_) if !out.entities.is_empty() => {
                skip(
                    entity,
                    1,
                    format!("its inverse bind poses differ from those of rig {}'s other characters", character.rig),
                );
                continue;
            }
            _ => match queries.bindposes.get(id) {
                // Rigid: the joint poses carry no scale or reflection (they are taken out
                // of the joints' transforms below), so neither may the inverse binds.
                Some(ibp) if ibp.len() == joint_count => {
                    out.inverse_bind = Some((id, crowd_ik::cpu::palette::rigid_inverse_bind(ibp)));
                }
                Some(ibp) => {
                    let why = format!("{} inverse bind poses for {joint_count} joints", ibp.len());
                    skip(entity, 2, why);
                    continue;
                }
                None => continue, // the asset is still loading
            },
        }
        let (scale, rotation, translation) = root.to_scale_rotation_translation();
        let uniform = (scale.x.abs() - scale.y.abs()).abs() <= 1e-3 * scale.x.abs()
            && (scale.x.abs() - scale.z.abs()).abs() <= 1e-3 * scale.x.abs();
        if !uniform || !translation.is_finite() || !rotation.is_finite() {
            skip(entity, 3, format!("its root transform is not a finite uniform scale ({scale})"));
            continue;
        }
        let mirrored = root.affine().matrix3.determinant() < 0.0;
        let mut input = CharacterInput::new(translation, rotation)
            .with_scale(scale.x.abs())
            .with_mirrored(mirrored)
            .with_foot_weights(character.foot_weights)
            .with_foot_event_times(character.foot_event_times);
        if matches!(rig.poses, PoseSource::Joints) {
            // Model space = the character root's frame: root⁻¹ × joint global.
            let to_model = root.affine().inverse();
            let start = out.poses.len();
            for &joint in &skin.joints {
                let Ok(global) = queries.joints.get(joint) else { break };
                let m = to_model * global.affine();
                let (_, r, t) = m.to_scale_rotation_translation();
                out.poses.push(JointPose::new(t, r.normalize()));
            }
            if out.poses.len() != start + joint_count {
                out.poses.truncate(start);
                skip(entity, 4, "a joint entity has no GlobalTransform (despawned?)".into());
                continue;
            }
            if let Some(auto) = auto {
                input = input.with_foot_weights(auto.weights(&rig.rig, &out.poses[start..], scale.x.abs()));
            }
        }
        if hits_mode {
            let Some(hits) = hits else {
                if matches!(rig.poses, PoseSource::Joints) {
                    out.poses.truncate(out.poses.len() - joint_count);
                }
                skip(entity, 5, "Ground::Hits needs its FootGroundHits component".into());
                continue;
            };
            out.hits.extend_from_slice(&hits.0);
        }
        out.entities.push(MainEntity::from(entity));
        out.characters.push(input);
        out.offsets.push(character.clip_offset);
        if character.reset {
            out.resets.push(out.entities.len() - 1);
        }
    }
    crowd.extract_ms = start.elapsed().as_secs_f64() * 1e3;
}
