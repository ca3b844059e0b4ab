//! The render-world step: foot IK, the palette and the copies into Bevy's skin buffer, on
//! Bevy's device.

use std::sync::Arc;
use std::time::Instant;

use bevy::asset::AssetId;
use bevy::ecs::system::SystemParam;
use bevy::log::{error, info};
use bevy::math::Mat4;
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::pbr::SkinUniforms;
use bevy::prelude::*;
use bevy::render::renderer::{PendingCommandBuffers, RenderAdapterInfo, RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;

use crowd_ik::crowd::NONE;
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::gpu::pose_source::ClipPoseSource;
use crowd_ik::gpu::GpuContext;

use crate::extract::{ExtractedCrowd, ExtractedRig};
use crate::{CrowdIk, CrowdIkDiagnostics, CrowdRig, GpuClip, PoseSource, TIMING_PERIOD};

/// The plugin's GPU state in the render world, built on Bevy's `RenderDevice`: per rig a
/// solver, its palette builder and its pose source.
#[derive(Resource, Default)]
pub struct CrowdIkGpu {
    rigs: Vec<Option<GpuState>>,
}

struct GpuState {
    context: GpuContext,
    solver: CrowdSolver,
    palette: Option<(AssetId<SkinnedMeshInverseBindposes>, PaletteBuilder)>,
    clip: Option<(Arc<GpuClip>, Vec<f32>, ClipPoseSource)>,
    entities: Vec<MainEntity>,
    /// Each character's first matrix in Bevy's skin buffer, this frame.
    offsets: Vec<u32>,
    placement: bool,
    timed: bool,
}

impl CrowdIkGpu {
    /// The device the solvers run on (Bevy's `RenderDevice`), once the first frame built one.
    #[must_use]
    pub fn device(&self) -> Option<&crate::crowd_ik::wgpu::Device> {
        self.rigs.iter().flatten().next().map(|s| s.context.device())
    }

    /// Rig `rig`'s crowd solver (e.g. its `pose_output` for tools), once built.
    #[must_use]
    pub fn solver(&self, rig: usize) -> Option<&CrowdSolver> {
        self.rigs.get(rig)?.as_ref().map(|s| &s.solver)
    }

    /// Rig `rig`'s characters of the last frame, in solver order.
    #[must_use]
    pub fn entities(&self, rig: usize) -> &[MainEntity] {
        self.rigs.get(rig).and_then(Option::as_ref).map_or(&[], |s| &s.entities)
    }
}

/// Bevy's device, queue and adapter.
#[derive(SystemParam)]
pub(crate) struct Renderer<'w> {
    device: Res<'w, RenderDevice>,
    queue: Res<'w, RenderQueue>,
    adapter: Option<Res<'w, RenderAdapterInfo>>,
}

pub(crate) fn solve_crowd(
    renderer: Renderer,
    crowd: Res<ExtractedCrowd>,
    skins: Option<Res<SkinUniforms>>,
    mut pending: ResMut<PendingCommandBuffers>,
    mut gpu: ResMut<CrowdIkGpu>,
    diagnostics: Res<CrowdIkDiagnostics>,
) {
    let Ok(mut report) = diagnostics.0.lock() else { return };
    // The IK pass's GPU time of an earlier, submitted frame (a blocking read, every
    // TIMING_PERIOD frames), outside the timed CPU work.
    let timing = crowd.settings.as_ref().is_some_and(|s| s.gpu_timing && s.enabled);
    if timing && report.frames > 0 && report.frames.is_multiple_of(TIMING_PERIOD) {
        let times: Vec<f64> = gpu
            .rigs
            .iter()
            .flatten()
            .filter(|s| s.timed)
            .filter_map(|s| s.solver.device_time_ms().ok().flatten())
            .collect();
        report.ik_gpu_ms = (!times.is_empty()).then(|| times.iter().sum());
    }
    let start = Instant::now();
    let (written, errors) = match skins {
        Some(skins) => {
            let mut frame =
                Frame { device: &renderer.device, queue: &renderer.queue, skins: &skins, pending: &mut pending };
            solve(&mut frame, &crowd, &mut gpu)
        }
        None => (0, vec!["Bevy's skinning (PbrPlugin's SkinUniforms) is missing".to_string()]),
    };
    report.skipped.clone_from(&crowd.skipped);
    report.extract_ms = crowd.extract_ms;
    report.characters = written;
    report.frames += 1;
    if errors.is_empty() {
        report.last_error = None;
    } else {
        let e = errors.join("; ");
        if report.last_error.as_deref() != Some(e.as_str()) {
            error!("crowd IK: {e}");
        }
        report.last_error = Some(e);
    }
    if let (true, Some(info)) = (report.adapter.is_empty(), renderer.adapter) {
        report.adapter.clone_from(&info.name);
    }
    report.render_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// What a rig's frame records into.
struct Frame<'a> {
    device: &'a RenderDevice,
    queue: &'a RenderQueue,
    skins: &'a SkinUniforms,
    pending: &'a mut PendingCommandBuffers,
}

/// One frame in the render world: every rig; returns the characters written and the rigs'
/// errors (a rig with an error skips the frame, the others go on).
fn solve(frame: &mut Frame, crowd: &ExtractedCrowd, gpu: &mut CrowdIkGpu) -> (usize, Vec<String>) {
    let Some(settings) = crowd.settings.as_ref() else {
        gpu.rigs.clear();
        return (0, Vec::new());
    };
    gpu.rigs.resize_with(settings.rigs.len(), || None);
    let (mut written, mut errors) = (0, Vec::new());
    for (i, ((rig, extracted), state)) in settings.rigs.iter().zip(&crowd.rigs).zip(&mut gpu.rigs).enumerate() {
        if crowd.rebuild.get(i).copied().unwrap_or(true) && state.take().is_some() {
            info!("crowd IK: rig {i} or the ground changed, rebuilding its solver");
        }
        match solve_rig(frame, settings, rig, extracted, crowd, state) {
            Ok(n) => written += n,
            Err(e) => errors.push(format!("rig {i}: frame skipped: {e}")),
        }
    }
    (written, errors)
}

/// One rig's frame; returns the characters written.
fn solve_rig(
    frame: &mut Frame,
    settings: &CrowdIk,
    rig: &CrowdRig,
    crowd: &ExtractedRig,
    shared: &ExtractedCrowd,
    slot: &mut Option<GpuState>,
) -> Result<usize, String> {
    if slot.is_none() {
        let context = GpuContext::new(frame.device.wgpu_device(), frame.queue);
        let solver = CrowdSolver::with_context(&context, &rig.rig, &settings.ground).map_err(|e| e.to_string())?;
        *slot = Some(GpuState {
            context,
            solver,
            palette: None,
            clip: None,
            entities: Vec::new(),
            offsets: Vec::new(),
            placement: rig.rig.placement.is_some(),
            timed: false,
        });
    }
    let state = slot.as_mut().expect("built above");
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
    match &rig.poses {
        PoseSource::Joints => {
            if state.clip.take().is_some() {
                state.solver.set_pose_source(None);
            }
        }
        PoseSource::Clip(clip) => match &mut state.clip {
            Some((known, offsets, source)) if Arc::ptr_eq(known, clip) => {
                // A changed crowd rewrites the offsets in place (new buffers only when it grows).
                if *offsets != crowd.offsets {
                    if source.set_offsets(&crowd.offsets).map_err(|e| e.to_string())? {
                        state.solver.set_pose_source(Some(source.poses()));
                    }
                    offsets.clone_from(&crowd.offsets);
                }
            }
            _ => {
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
        },
    }
    // Foot placement: survivors keep their state, newcomers and `reset` ones start fresh.
    if state.placement {
        if state.entities != crowd.entities {
            let old: std::collections::HashMap<MainEntity, usize> =
                state.entities.iter().enumerate().map(|(i, e)| (*e, i)).collect();
            let map: Vec<Option<usize>> = crowd.entities.iter().map(|e| old.get(e).copied()).collect();
            state.solver.remap_states(&map).map_err(|e| e.to_string())?;
        }
        state.solver.reset_states(&crowd.resets);
        state.solver.set_frame_time(shared.dt).map_err(|e| e.to_string())?;
    }
    state.entities.clone_from(&crowd.entities);
    state.solver.upload(&crowd.characters, &crowd.poses, &crowd.hits).map_err(|e| e.to_string())?;

    // Validation or memory errors of this frame's recording come back as an error (the
    // frame is reported skipped) instead of reaching Bevy's uncaptured-error handler.
    let scope = state.context.error_scopes();
    let mut encoder =
        frame.device.create_command_encoder(&crowd_ik::wgpu::CommandEncoderDescriptor { label: Some("crowd ik") });
    let fk = match &mut state.clip {
        Some((_, _, source)) => {
            source.encode(&mut encoder, shared.time);
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
    // Each character's first matrix in Bevy's skin buffer (NONE: no allocation, e.g. hidden).
    state.offsets.clear();
    state.offsets.extend(crowd.entities.iter().map(|e| frame.skins.skin_index(*e).unwrap_or(NONE)));
    let written = state.offsets.iter().filter(|o| **o != NONE).count();
    let target = &frame.skins.current_buffer;
    if target.usage().contains(crowd_ik::wgpu::BufferUsages::STORAGE) && !settings.copy_per_character {
        // One dispatch writes the world-space matrices straight into Bevy's buffer.
        builder
            .encode_world_scatter(&mut encoder, &poses, &roots, &state.offsets, target)
            .map_err(|e| e.to_string())?;
    } else {
        // Uniform-buffer skinning (no storage buffers, e.g. WebGL 2): palette, then a copy
        // per character.
        let palette = builder.encode_world(&mut encoder, &poses, &roots, n).map_err(|e| e.to_string())?;
        let joint_bytes = (inverse_bind.len() * std::mem::size_of::<Mat4>()) as u64;
        for (i, &first) in state.offsets.iter().enumerate() {
            let dst = u64::from(first) * std::mem::size_of::<Mat4>() as u64;
            if first != NONE && dst + joint_bytes <= target.size() {
                encoder.copy_buffer_to_buffer(palette, i as u64 * joint_bytes, target, dst, joint_bytes);
            }
        }
    }
    scope.pop().map_err(|e| e.to_string())?;
    // Submitted with Bevy's frame, before its passes (Bevy finishes pending encoders in
    // order, after the skin buffer's own upload).
    frame.pending.push_encoder(encoder, "crowd ik");
    Ok(written)
}
