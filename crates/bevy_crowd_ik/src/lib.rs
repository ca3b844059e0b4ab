//! Crowd foot IK inside Bevy 0.20, on Bevy's own wgpu device.
//!
//! Characters are Bevy entities with a `SkinnedMesh` and a [`CrowdIkCharacter`]; the rigs
//! (one per kind of skeleton, each with its FK pose source) and the ground are the resource
//! [`CrowdIk`]. Every frame the plugin gathers the characters' root transforms and foot
//! weights in Bevy's extract schedule and, in the render world right after Bevy has
//! uploaded its joint matrices (`prepare_skins`), records per rig on Bevy's `RenderDevice`:
//!
//! 1. the FK pose: either the crate's GPU clip sampler ([`PoseSource::Clip`], nothing per
//!    joint on the CPU) or the joint entities' `GlobalTransform`s ([`PoseSource::Joints`]:
//!    Bevy's `AnimationPlayer` or any system that moves the joints; uploaded per joint);
//! 2. crowd foot IK (`crowd_ik::gpu::crowd::CrowdSolver`, one dispatch);
//! 3. the world-space joint matrices (`joint global transform × inverse bind pose`),
//!    written straight over each character's matrices in Bevy's skin buffer
//!    (`SkinUniforms::current_buffer`) by one dispatch (`PaletteBuilder::encode_world_scatter`).
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

use std::sync::{Arc, Mutex};

use bevy::diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy::log::warn;
use bevy::pbr::prepare_skins;
use bevy::prelude::*;
use bevy::render::{ExtractSchedule, Render, RenderApp, RenderSystems};

use crowd_ik::crowd::{FootRig, Ground, GroundHit, JointPose, MAX_LEGS};

pub use crowd_ik;
pub use extract::ExtractedCrowd;
pub use render::CrowdIkGpu;

mod extract;
pub mod mesh;
mod render;
pub mod scene;

pub use scene::{AutoFootWeights, CrowdIkRefused, CrowdIkScene};

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

/// One kind of character in the crowd (a skeleton: adult, child, ...): its foot-IK rig and
/// where its FK pose comes from. Characters name it by index
/// ([`CrowdIkCharacter::rig`]); each rig gets its own solver and palette on the GPU.
#[derive(Clone, Debug)]
pub struct CrowdRig {
    /// The foot-IK rig; its joint indices are indices into each character's
    /// `SkinnedMesh::joints`. A character whose skin has another joint count, or inverse
    /// bind poses other than the rig's first character's, is skipped with a warning
    /// naming it.
    pub rig: FootRig,
    /// Where the FK pose comes from.
    pub poses: PoseSource,
}

impl CrowdRig {
    /// Whether `other` needs the same GPU state.
    fn same_solver(&self, other: &Self) -> bool {
        let same_poses = match (&self.poses, &other.poses) {
            (PoseSource::Joints, PoseSource::Joints) => true,
            (PoseSource::Clip(a), PoseSource::Clip(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_poses && self.rig == other.rig
    }
}

/// The crowd's settings: its rigs, the ground, IK on or off. Change a rig or the ground at
/// run time and the plugin rebuilds that GPU state (foot-placement states start over).
#[derive(Resource, Clone, Debug)]
pub struct CrowdIk {
    /// The rigs characters name by index ([`CrowdIkCharacter::rig`]).
    pub rigs: Vec<CrowdRig>,
    /// A heightfield, or [`Ground::Hits`] with each character's [`FootGroundHits`].
    pub ground: Ground,
    /// `false` skins the characters with the FK pose (IK off): the matrices are still written
    /// by the plugin, so switching costs nothing and never pops a buffer.
    pub enabled: bool,
    /// Time the foot-IK passes with timestamp queries (when Bevy's device has
    /// `TIMESTAMP_QUERY`) and report them in [`CrowdIkReport::ik_gpu_ms`]. A diagnostic: the
    /// reading waits for the GPU once every [`TIMING_PERIOD`] frames.
    pub gpu_timing: bool,
    /// Write each character's matrices with a palette and one buffer copy per character
    /// instead of the one scatter dispatch. Automatic (and needed) where Bevy skins from
    /// uniform buffers (no storage buffers, e.g. WebGL 2); elsewhere only slower.
    pub copy_per_character: bool,
}

/// Frames between two readings of the IK pass's GPU time ([`CrowdIk::gpu_timing`]).
pub const TIMING_PERIOD: u64 = 30;

impl CrowdIk {
    /// A crowd of one rig (index 0), IK on.
    #[must_use]
    pub fn new(rig: FootRig, ground: Ground, poses: PoseSource) -> Self {
        Self {
            rigs: vec![CrowdRig { rig, poses }],
            ground,
            enabled: true,
            gpu_timing: false,
            copy_per_character: false,
        }
    }

    /// A crowd on `ground` with no rigs yet, IK on: for characters from spawned scenes
    /// ([`CrowdIkScene`]), whose rigs the plugin adds as their skeletons appear.
    #[must_use]
    pub fn with_ground(ground: Ground) -> Self {
        Self { rigs: Vec::new(), ground, enabled: true, gpu_timing: false, copy_per_character: false }
    }

    /// Adds a rig and returns its index (for [`CrowdIkCharacter::rig`]).
    pub fn add_rig(&mut self, rig: FootRig, poses: PoseSource) -> usize {
        self.rigs.push(CrowdRig { rig, poses });
        self.rigs.len() - 1
    }
}

/// Marks a skinned mesh entity as a crowd character. The entity's `GlobalTransform` is the
/// character's root (translation, rotation, uniform scale; a negative determinant mirrors
/// it), the frame its joints' model-space pose is measured in.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct CrowdIkCharacter {
    /// Index of its rig in [`CrowdIk::rigs`].
    pub rig: usize,
    /// Weight per leg (rig order): 0 = FK (a lifted foot), 1 = full IK.
    pub foot_weights: [f32; 4],
    /// Per leg, when the weight took its value this frame, as seconds before the frame's
    /// end (an animation event's time inside the frame); outside `[0, dt]` (the default, −1)
    /// = not known. Foot placement starts the weight's blend, and a lock or release it
    /// causes, then (`CharacterInput::foot_event_times`).
    pub foot_event_times: [f32; 4],
    /// Seconds added to the clip time ([`PoseSource::Clip`]).
    pub clip_offset: f32,
    /// Set for one frame to reset the character's foot-placement state (a teleport); the
    /// plugin clears it.
    pub reset: bool,
}

impl Default for CrowdIkCharacter {
    fn default() -> Self {
        Self { rig: 0, foot_weights: [1.0; 4], foot_event_times: [-1.0; 4], clip_offset: 0.0, reset: false }
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
    /// Device time of the foot-IK passes (ms, all rigs), with [`CrowdIk::gpu_timing`].
    pub ik_gpu_ms: Option<f64>,
}

/// [`CrowdIkReport`] of the last frame, readable from the main world. Its figures are also
/// Bevy diagnostics (in `DiagnosticsStore`, under the paths below), updated every frame in
/// [`CrowdIkSystems::Diagnostics`].
#[derive(Resource, Clone, Default)]
pub struct CrowdIkDiagnostics(pub Arc<Mutex<CrowdIkReport>>);

impl CrowdIkDiagnostics {
    /// Characters solved last frame.
    pub const CHARACTERS: DiagnosticPath = DiagnosticPath::const_new("crowd_ik/characters");
    /// Characters skipped last frame.
    pub const SKIPPED: DiagnosticPath = DiagnosticPath::const_new("crowd_ik/skipped");
    /// CPU time of the extract step, milliseconds.
    pub const EXTRACT_MS: DiagnosticPath = DiagnosticPath::const_new("crowd_ik/extract_ms");
    /// CPU time of the render-world step, milliseconds.
    pub const RENDER_MS: DiagnosticPath = DiagnosticPath::const_new("crowd_ik/render_ms");
    /// Device time of the foot-IK passes, milliseconds (with [`CrowdIk::gpu_timing`]).
    pub const IK_GPU_MS: DiagnosticPath = DiagnosticPath::const_new("crowd_ik/ik_gpu_ms");

    /// A copy of the last report.
    #[must_use]
    pub fn report(&self) -> CrowdIkReport {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// The plugin's systems, to order an app's own systems against.
///
/// A frame runs them in this order: [`ClearResets`](Self::ClearResets) (main world, `First`),
/// the app's `Update` and Bevy's animation and transform propagation (`PostUpdate`),
/// [`AttachScenes`](Self::AttachScenes) (`PostUpdate`, after propagation), then
/// [`Diagnostics`](Self::Diagnostics) (main world, `Last`); [`Extract`](Self::Extract)
/// (Bevy's `ExtractSchedule`: reads the characters' `GlobalTransform`s, so after transform
/// propagation); [`Solve`](Self::Solve) (render world, in `RenderSystems::PrepareResources`
/// after Bevy's `prepare_skins`, so the IK overwrites the joint matrices Bevy has just
/// uploaded). A system that sets foot weights, ground hits or a reset runs in `Update` (or
/// anywhere before `Last`); one that reads last frame's report runs after
/// [`Diagnostics`](Self::Diagnostics).
#[derive(bevy::ecs::schedule::SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrowdIkSystems {
    /// Clears the reset requests the last frame extracted (`First`).
    ClearResets,
    /// Makes the skinned meshes of spawned [`CrowdIkScene`]s characters (`PostUpdate`,
    /// after transform propagation).
    AttachScenes,
    /// Gathers the characters (`ExtractSchedule`).
    Extract,
    /// Records pose, foot IK and the skinning matrices on Bevy's device (`Render`).
    Solve,
    /// Publishes the last report as Bevy diagnostics (`Last`).
    Diagnostics,
}

/// The plugin: extract and render-world systems, on Bevy's device, in [`CrowdIkSystems`].
/// Needs Bevy's render and PBR plugins (skinning), e.g. `DefaultPlugins`.
pub struct CrowdIkPlugin;

impl Plugin for CrowdIkPlugin {
    fn build(&self, app: &mut App) {
        let diagnostics = CrowdIkDiagnostics::default();
        app.insert_resource(diagnostics.clone())
            .register_diagnostic(Diagnostic::new(CrowdIkDiagnostics::CHARACTERS))
            .register_diagnostic(Diagnostic::new(CrowdIkDiagnostics::SKIPPED))
            .register_diagnostic(Diagnostic::new(CrowdIkDiagnostics::EXTRACT_MS).with_suffix(" ms"))
            .register_diagnostic(Diagnostic::new(CrowdIkDiagnostics::RENDER_MS).with_suffix(" ms"))
            .register_diagnostic(Diagnostic::new(CrowdIkDiagnostics::IK_GPU_MS).with_suffix(" ms"))
            .init_resource::<scene::SceneRigs>()
            .add_systems(First, clear_resets.in_set(CrowdIkSystems::ClearResets))
            .add_systems(
                PostUpdate,
                scene::attach_scenes
                    .in_set(CrowdIkSystems::AttachScenes)
                    .after(bevy::transform::TransformSystems::Propagate),
            )
            .add_systems(Last, publish_diagnostics.in_set(CrowdIkSystems::Diagnostics));
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            warn!("CrowdIkPlugin: no render app (add it after Bevy's RenderPlugin); crowd IK is off");
            return;
        };
        render_app
            .insert_resource(diagnostics)
            .init_resource::<ExtractedCrowd>()
            .init_resource::<CrowdIkGpu>()
            .add_systems(ExtractSchedule, extract::extract_crowd.in_set(CrowdIkSystems::Extract))
            .add_systems(
                Render,
                render::solve_crowd
                    .in_set(CrowdIkSystems::Solve)
                    .in_set(RenderSystems::PrepareResources)
                    .after(prepare_skins),
            );
    }
}

/// The last report's figures as Bevy diagnostics (none before the first solved frame).
fn publish_diagnostics(shared: Res<CrowdIkDiagnostics>, mut diagnostics: Diagnostics) {
    let Ok(report) = shared.0.lock() else { return };
    if report.frames == 0 {
        return;
    }
    diagnostics.add_measurement(&CrowdIkDiagnostics::CHARACTERS, || report.characters as f64);
    diagnostics.add_measurement(&CrowdIkDiagnostics::SKIPPED, || report.skipped.len() as f64);
    diagnostics.add_measurement(&CrowdIkDiagnostics::EXTRACT_MS, || report.extract_ms);
    diagnostics.add_measurement(&CrowdIkDiagnostics::RENDER_MS, || report.render_ms);
    if let Some(ms) = report.ik_gpu_ms {
        diagnostics.add_measurement(&CrowdIkDiagnostics::IK_GPU_MS, || ms);
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
