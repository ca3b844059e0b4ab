//! Crowd foot IK inside Bevy 0.20, on Bevy's own wgpu device.
//!
//! Characters are Bevy entities with a [`SkinnedMesh`] and a [`CrowdIkCharacter`]; the rig,
//! the ground and the source of the FK pose are the resource [`CrowdIk`]. Every frame the
//! plugin gathers the characters' root transforms and foot weights in Bevy's extract
//! schedule and, in the render world right after Bevy has uploaded its joint matrices
//! (`prepare_skins`), records into one command buffer on Bevy's `RenderDevice`:
//!
//! 1. the FK pose: either the crate's GPU clip sampler ([`PoseSource::Clip`], nothing per
//!    joint on the CPU) or the joint entities' `GlobalTransform`s ([`PoseSource::Joints`]:
//!    Bevy's `AnimationPlayer` or any system that moves the joints; uploaded per joint);
//! 2. crowd foot IK (`crowd_ik::gpu::crowd::CrowdSolver`, one dispatch);
//! 3. the world-space skinning palette (`joint global transform × inverse bind pose`,
//!    `PaletteBuilder::encode_world`), copied over each character's joint matrices in
//!    Bevy's skin buffer (`SkinUniforms::current_buffer`).
//!
//! Bevy's own skinned-mesh shaders then draw the solved pose. Nothing is read back.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_crowd_ik::{CrowdIk, CrowdIkCharacter, CrowdIkPlugin, PoseSource};
//! # fn rig() -> crowd_ik::crowd::FootRig { unimplemented!() }
//! # fn hills() -> crowd_ik::crowd::Heightfield { unimplemented!() }
//! App::new()
//!     .add_plugins((DefaultPlugins, CrowdIkPlugin))
//!     .insert_resource(CrowdIk::new(rig(), crowd_ik::crowd::Ground::Heightfield(hills()), PoseSource::Joints))
//!     .run();
//! // ... and spawn each character's skinned mesh with `CrowdIkCharacter::default()`.
//! ```

#![warn(missing_docs)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bevy::asset::{AssetId, Assets};
use bevy::camera::visibility::ViewVisibility;
use bevy::ecs::system::SystemParam;
use bevy::log::{error, info, warn};
use bevy::math::Mat4;
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::pbr::{prepare_skins, SkinUniforms};
use bevy::prelude::*;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::{Extract, ExtractSchedule, Render, RenderApp, RenderSystems};

use crowd_ik::crowd::{CharacterInput, FootRig, Ground, GroundHit, JointPose, MAX_LEGS};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::gpu::pose_source::ClipPoseSource;
use crowd_ik::gpu::GpuContext;

pub use crowd_ik;

pub mod mesh;

/// Where each character's FK pose comes from.
#[derive(Clone, Debug)]
pub enum PoseSource {
    /// The joint entities' `GlobalTransform`s, as Bevy's animation (or any system moving the
    /// joints) left them: read in the extract schedule and uploaded, one [`JointPose`] per
    /// joint and character (CPU work grows with the joints).
    Joints,
    /// A looping clip sampled on the GPU per character at `elapsed time + clip_offset`
    /// ([`CrowdIkCharacter::clip_offset`]); the CPU does nothing per joint. The joint
    /// entities are not moved: the clip reaches only the skinned meshes.
    Clip(Arc<GpuClip>),
}

/// A clip for [`PoseSource::Clip`]: local joint transforms, `frames × joints` (frame-major),
/// in the order of the characters' `SkinnedMesh::joints`.
#[derive(Clone, Debug)]
pub struct GpuClip {
    /// Local translation and rotation of every joint at every frame (`JointPose` fields hold
    /// the local values here).
    pub local: Vec<JointPose>,
    /// Parent of each joint (parents first).
    pub parents: Vec<Option<usize>>,
    /// Seconds per frame.
    pub frame_time: f32,
}

impl GpuClip {
    /// A BVH clip with its translations scaled by `scale`.
    #[must_use]
    pub fn from_bvh(clip: &crowd_ik::bvh::Clip, scale: f32) -> Self {
        let local = (0..clip.frames())
            .flat_map(|f| clip.local_pose(f, scale).into_iter().map(|(t, r)| JointPose::new(t, r)))
            .collect();
        Self { local, parents: clip.skeleton.parents.clone(), frame_time: clip.frame_time }
    }
}

/// The crowd's settings: the rig every character shares, the ground and the pose source.
/// Change it at run time and the plugin rebuilds its GPU state (foot-placement states are
/// reset).
#[derive(Resource, Clone, Debug)]
pub struct CrowdIk {
    /// The foot-IK rig; its joint indices are indices into each character's
    /// `SkinnedMesh::joints`, and a character whose skin has another joint count is skipped
    /// with a warning naming it.
    pub rig: FootRig,
    /// A heightfield, or [`Ground::Hits`] with each character's [`FootGroundHits`].
    pub ground: Ground,
    /// Where the FK pose comes from.
    pub poses: PoseSource,
    /// `false` skins the characters with the FK pose (IK off): the palette is still written
    /// by the plugin, so switching costs nothing and never pops a buffer.
    pub enabled: bool,
    /// Time the foot-IK pass with timestamp queries (when Bevy's device has
    /// `TIMESTAMP_QUERY`) and report it in [`CrowdIkReport::ik_gpu_ms`]. A diagnostic: the
    /// reading waits for the GPU once every [`TIMING_PERIOD`] frames.
    pub gpu_timing: bool,
}

/// Frames between two readings of the IK pass's GPU time ([`CrowdIk::gpu_timing`]).
pub const TIMING_PERIOD: u64 = 30;

impl CrowdIk {
    /// IK on.
    #[must_use]
    pub fn new(rig: FootRig, ground: Ground, poses: PoseSource) -> Self {
        Self { rig, ground, poses, enabled: true, gpu_timing: false }
    }

    /// Whether `other` needs the same GPU state (rig, ground and pose source).
    fn same_solver(&self, other: &Self) -> bool {
        let same_poses = match (&self.poses, &other.poses) {
            (PoseSource::Joints, PoseSource::Joints) => true,
            (PoseSource::Clip(a), PoseSource::Clip(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_poses && self.rig == other.rig && self.ground == other.ground
    }
}

/// Marks a skinned mesh entity as a crowd character. The entity's `GlobalTransform` is the
/// character's root (translation, rotation, uniform scale; a negative determinant mirrors
/// it), the frame its joints' model-space pose is measured in.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct CrowdIkCharacter {
    /// Weight per leg (rig order): 0 = FK (a lifted foot), 1 = full IK.
    pub foot_weights: [f32; 4],
    /// Seconds added to the clip time ([`PoseSource::Clip`]).
    pub clip_offset: f32,
    /// Set for one frame to reset the character's foot-placement state (a teleport); the
    /// plugin clears it.
    pub reset: bool,
}

impl Default for CrowdIkCharacter {
    fn default() -> Self {
        Self { foot_weights: [1.0; 4], clip_offset: 0.0, reset: false }
    }
}

/// Ground hits under each leg for [`Ground::Hits`] (the app's raycasts), rig order.
#[derive(Component, Clone, Copy, Debug)]
pub struct FootGroundHits(pub [GroundHit; MAX_LEGS]);

/// What the plugin did last frame, shared between the main and the render world.
#[derive(Clone, Debug, Default)]
pub struct CrowdIkReport {
    /// Characters solved and written into Bevy's skin buffer.
    pub characters: usize,
    /// Characters skipped (skeleton mismatch, hidden, bad transform), with the reason.
    pub skipped: Vec<(Entity, String)>,
    /// CPU time of the extract step (gathering characters), milliseconds.
    pub extract_ms: f64,
    /// CPU time of the render-world step (uploads, recording, submit), milliseconds.
    pub render_ms: f64,
    /// Frames solved since start.
    pub frames: u64,
    /// The last GPU error, if any (the frame was skipped).
    pub last_error: Option<String>,
    /// Name of the adapter the solver runs on (Bevy's).
    pub adapter: String,
    /// Device time of the foot-IK pass (ms), with [`CrowdIk::gpu_timing`].
    pub ik_gpu_ms: Option<f64>,
}

/// [`CrowdIkReport`] of the last frame, readable from the main world.
#[derive(Resource, Clone, Default)]
pub struct CrowdIkDiagnostics(pub Arc<Mutex<CrowdIkReport>>);

impl CrowdIkDiagnostics {
    /// A copy of the last report.
    #[must_use]
    pub fn report(&self) -> CrowdIkReport {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// The plugin: extract and render-world systems, on Bevy's device. Needs Bevy's render and
/// PBR plugins (skinning), e.g. `DefaultPlugins`.
pub struct CrowdIkPlugin;

impl Plugin for CrowdIkPlugin {
    fn build(&self, app: &mut App) {
        let diagnostics = CrowdIkDiagnostics::default();
        app.insert_resource(diagnostics.clone()).add_systems(First, clear_resets);
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            warn!("CrowdIkPlugin: no render app (add it after Bevy's RenderPlugin); crowd IK is off");
            return;
        };
        render_app
            .insert_resource(diagnostics)
            .init_resource::<ExtractedCrowd>()
            .init_resource::<CrowdIkGpu>()
            .add_systems(ExtractSchedule, extract_crowd)
            .add_systems(Render, solve_crowd.in_set(RenderSystems::PrepareResources).after(prepare_skins));
    }
}

/// Clears [`CrowdIkCharacter::reset`] at the start of the frame after the one that extracted it.
fn clear_resets(mut characters: Query<&mut CrowdIkCharacter>) {
    for mut c in &mut characters {
        if c.reset {
            c.reset = false;
        }
    }
}

/// One frame's crowd, gathered in the extract schedule (render world).
#[derive(Resource, Default)]
pub struct ExtractedCrowd {
    settings: Option<CrowdIk>,
    settings_changed: bool,
    entities: Vec<MainEntity>,
    characters: Vec<CharacterInput>,
    offsets: Vec<f32>,
    resets: Vec<bool>,
    poses: Vec<JointPose>,
    hits: Vec<GroundHit>,
    inverse_bind: Option<(AssetId<SkinnedMeshInverseBindposes>, Vec<Mat4>)>,
    time: f32,
    dt: f32,
    skipped: Vec<(Entity, String)>,
    extract_ms: f64,
}

/// What the extract step reads of each character.
type CharacterData = (
    Entity,
    &'static CrowdIkCharacter,
    &'static SkinnedMesh,
    &'static GlobalTransform,
    Option<&'static ViewVisibility>,
    Option<&'static FootGroundHits>,
);

/// Queries of the extract step.
#[derive(SystemParam)]
struct CrowdQueries<'w, 's> {
    characters: Extract<'w, 's, Query<'static, 'static, CharacterData>>,
    joints: Extract<'w, 's, Query<'static, 'static, &'static GlobalTransform>>,
    bindposes: Extract<'w, 's, Res<'static, Assets<SkinnedMeshInverseBindposes>>>,
}

fn extract_crowd(
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

/// The plugin's GPU state in the render world, built on Bevy's `RenderDevice`.
#[derive(Resource, Default)]
pub struct CrowdIkGpu {
    state: Option<GpuState>,
}

struct GpuState {
    context: GpuContext,
    solver: CrowdSolver,
    palette: Option<(AssetId<SkinnedMeshInverseBindposes>, PaletteBuilder)>,
    clip: Option<(Arc<GpuClip>, Vec<f32>, ClipPoseSource)>,
    entities: Vec<MainEntity>,
    placement: bool,
    timed: bool,
}

impl CrowdIkGpu {
    /// The device the solver runs on (Bevy's `RenderDevice`), once the first frame built it.
    #[must_use]
    pub fn device(&self) -> Option<&crate::crowd_ik::wgpu::Device> {
        self.state.as_ref().map(|s| s.context.device())
    }

    /// The crowd solver (e.g. its `pose_output` for tools), once built.
    #[must_use]
    pub fn solver(&self) -> Option<&CrowdSolver> {
        self.state.as_ref().map(|s| &s.solver)
    }

    /// The world-space palette of the last frame (`characters × joints` matrices in the
    /// order of the last frame's characters), once built.
    #[must_use]
    pub fn palette(&self) -> Option<&crate::crowd_ik::wgpu::Buffer> {
        self.state.as_ref().and_then(|s| s.palette.as_ref()).and_then(|(_, p)| p.palette())
    }

    /// The characters of the last frame, in palette order.
    #[must_use]
    pub fn entities(&self) -> &[MainEntity] {
        self.state.as_ref().map_or(&[], |s| &s.entities)
    }
}

fn solve_crowd(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    crowd: Res<ExtractedCrowd>,
    skins: Option<Res<SkinUniforms>>,
    mut gpu: ResMut<CrowdIkGpu>,
    diagnostics: Res<CrowdIkDiagnostics>,
) {
    let start = Instant::now();
    let result = match skins {
        Some(skins) => solve(&device, &queue, &crowd, &skins, &mut gpu),
        None => Err("Bevy's skinning (PbrPlugin's SkinUniforms) is missing".into()),
    };
    let Ok(mut report) = diagnostics.0.lock() else { return };
    let timing = crowd.settings.as_ref().is_some_and(|s| s.gpu_timing && s.enabled);
    if let (true, Some(state)) =
        (timing && result.is_ok() && report.frames.is_multiple_of(TIMING_PERIOD), gpu.state.as_ref())
    {
        if state.timed {
            report.ik_gpu_ms = state.solver.device_time_ms().ok().flatten();
        }
    }
    report.skipped.clone_from(&crowd.skipped);
    report.extract_ms = crowd.extract_ms;
    match result {
        Ok(n) => {
            report.characters = n;
            report.frames += 1;
        }
        Err(e) => {
            if report.last_error.as_deref() != Some(e.as_str()) {
                error!("crowd IK: frame skipped: {e}");
            }
            report.characters = 0;
            report.last_error = Some(e);
        }
    }
    if let Some(s) = gpu.state.as_ref() {
        if report.adapter.is_empty() {
            report.adapter = s.context.adapter_info().map_or_else(|| "Bevy's device".into(), |i| i.name.clone());
        }
    }
    report.render_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// One frame in the render world; returns the characters written.
fn solve(
    device: &RenderDevice,
    queue: &RenderQueue,
    crowd: &ExtractedCrowd,
    skins: &SkinUniforms,
    gpu: &mut CrowdIkGpu,
) -> Result<usize, String> {
    let Some(settings) = crowd.settings.as_ref() else {
        gpu.state = None;
        return Ok(0);
    };
    if crowd.settings_changed || gpu.state.is_none() {
        if gpu.state.is_some() {
            info!("crowd IK: settings changed, rebuilding the solver");
        }
        let context = GpuContext::new(device.wgpu_device(), queue);
        let solver = CrowdSolver::with_context(&context, &settings.rig, &settings.ground).map_err(|e| e.to_string())?;
        gpu.state = Some(GpuState {
            context,
            solver,
            palette: None,
            clip: None,
            entities: Vec::new(),
            placement: settings.rig.placement.is_some(),
            timed: false,
        });
    }
    let state = gpu.state.as_mut().expect("built above");
    if settings.gpu_timing && !state.timed {
        state.timed = state.solver.enable_timestamps();
    }
    let n = crowd.entities.len();
    let Some((bind_id, inverse_bind)) = crowd.inverse_bind.as_ref() else { return Ok(0) };
    if n == 0 {
        state.entities.clear();
        return Ok(0);
    }
    if state.palette.as_ref().is_none_or(|(id, _)| id != bind_id) {
        let builder = PaletteBuilder::with_context(&state.context, inverse_bind).map_err(|e| e.to_string())?;
        state.palette = Some((*bind_id, builder));
    }
    // The FK pose source.
    match &settings.poses {
        PoseSource::Joints => {
            if state.clip.take().is_some() {
                state.solver.set_pose_source(None);
            }
        }
        PoseSource::Clip(clip) => {
            let stale =
                state.clip.as_ref().is_none_or(|(c, offsets, _)| !Arc::ptr_eq(c, clip) || *offsets != crowd.offsets);
            if stale {
                let source = ClipPoseSource::with_context(
                    &state.context,
                    &clip.local,
                    &clip.parents,
                    clip.frame_time,
                    &crowd.offsets,
                )
                .map_err(|e| e.to_string())?;
                state.solver.set_pose_source(Some(source.poses()));
                state.clip = Some((clip.clone(), crowd.offsets.clone(), source));
            }
        }
    }
    // Foot placement: survivors keep their state, newcomers and `reset` ones start fresh.
    if state.placement {
        if state.entities != crowd.entities {
            let old: std::collections::HashMap<MainEntity, usize> =
                state.entities.iter().enumerate().map(|(i, e)| (*e, i)).collect();
            let map: Vec<Option<usize>> = crowd.entities.iter().map(|e| old.get(e).copied()).collect();
            state.solver.remap_states(&map).map_err(|e| e.to_string())?;
        }
        let resets: Vec<usize> = crowd.resets.iter().enumerate().filter(|(_, r)| **r).map(|(i, _)| i).collect();
        state.solver.reset_states(&resets);
        state.solver.set_frame_time(crowd.dt).map_err(|e| e.to_string())?;
    }
    state.entities.clone_from(&crowd.entities);
    state.solver.upload(&crowd.characters, &crowd.poses, &crowd.hits).map_err(|e| e.to_string())?;

    // Validation or memory errors of this frame's recording come back as an error (the
    // frame is reported skipped) instead of reaching Bevy's uncaptured-error handler.
    let scope = state.context.error_scopes();
    let mut encoder =
        device.create_command_encoder(&crowd_ik::wgpu::CommandEncoderDescriptor { label: Some("crowd ik") });
    let fk = match &mut state.clip {
        Some((_, _, source)) => {
            source.encode(&mut encoder, crowd.time);
            source.poses().clone()
        }
        None => state.solver.pose_input().ok_or("no pose buffer")?.clone(),
    };
    let poses = if settings.enabled {
        state.solver.encode(&mut encoder);
        state.solver.pose_output().ok_or("no pose output")?.clone()
    } else {
        fk
    };
    let roots = state.solver.characters_buffer().ok_or("no character buffer")?.clone();
    let (_, builder) = state.palette.as_mut().expect("built above");
    let palette = builder.encode_world(&mut encoder, &poses, &roots, n).map_err(|e| e.to_string())?;
    // Over each character's joint matrices in Bevy's skin buffer.
    let joint_bytes = (inverse_bind.len() * std::mem::size_of::<Mat4>()) as u64;
    let target = &skins.current_buffer;
    let mut written = 0;
    for (i, entity) in crowd.entities.iter().enumerate() {
        let Some(offset) = skins.skin_byte_offset(*entity) else { continue };
        let dst = u64::from(offset.byte_offset);
        if dst + joint_bytes > target.size() {
            continue;
        }
        encoder.copy_buffer_to_buffer(palette, i as u64 * joint_bytes, target, dst, joint_bytes);
        written += 1;
    }
    queue.submit([encoder.finish()]);
    scope.pop().map_err(|e| e.to_string())?;
    Ok(written)
}
