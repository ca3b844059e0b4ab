//! Crowd foot IK on the GPU: one dispatch for the whole crowd, poses in and out of GPU
//! buffers (the twin of [`crate::cpu::foot_ik::FootIkJob`]).

use super::buffers::{
    compute_pipeline_with, dispatch_size, map_read, staging_buffer, storage_buffer as storage, uniform_buffer,
    DispatchParams,
};
use super::context::{GpuContext, PassTimer};
use super::error::GpuError;
use super::shaders;
use crate::crowd::{
    CharacterInput, CharacterState, FootResult, FootRig, FrameInput, Ground, GroundHit, JointPose, LegState, SolverRig,
    MAX_LEGS,
};

/// The foot-IK pipeline's constants for a packed rig: one pipeline per rig, so that what the
/// rig does not use is compiled out of it. `PLACEMENT`: foot placement on (a stateless rig
/// runs the stateless kernel at its own speed); `LEGS`: the leg count (the kernel's loops
/// over legs are written out for exactly these legs); `LEG_KINDS`: per leg (8 bits each)
/// pseudo three-bone (bit 0), ball pivot (bit 1) and a two-bone leg's sole pivot (bit 2);
/// `GROUND_HITS`: per-foot hits rather than a heightfield.
fn kernel_constants(rig: &SolverRig) -> [(&'static str, f64); 4] {
    let legs = rig.leg_count() as usize;
    let kinds = rig.legs[..legs].iter().enumerate().fold(0u32, |k, (l, leg)| {
        let three = u32::from(leg.is_three_bone());
        let ball = u32::from(leg.pivots_on_ball());
        let sole = u32::from(leg.pivots_on_sole());
        k | (three | ball << 1 | sole << 2) << (8 * l)
    });
    [
        ("PLACEMENT", f64::from(rig.placement())),
        ("LEGS", legs as f64),
        ("LEG_KINDS", f64::from(kinds)),
        ("GROUND_HITS", f64::from(rig.ground_mode())),
    ]
}

/// Byte offsets in the rig buffer: the rig, this frame's [`FrameInput`], the joint table.
pub(super) const FRAME_OFFSET: u64 = std::mem::size_of::<SolverRig>() as u64;
const TABLE_OFFSET: u64 = FRAME_OFFSET + std::mem::size_of::<FrameInput>() as u64;

/// The foot-IK kernel for this device: with `SHADER_INT64`, the variant that moves the
/// foot-placement state as 64-bit words (`shaders/shared/foot_state_wide.wgsl`: the same bytes and
/// the same results, bit for bit; half the per-lane work on lavapipe, BENCHMARKS.md).
fn foot_ik_source(device: &wgpu::Device) -> &'static str {
    if device.features().contains(wgpu::Features::SHADER_INT64) {
        shaders::FOOT_IK_WIDE_STATE_WGSL
    } else {
        shaders::FOOT_IK_WGSL
    }
}

/// Bytes of one character's foot-placement state in the GPU buffer for a rig of `legs`
/// legs: the head of its [`CharacterState`] (pelvis, root, flags) and the rig's legs only,
/// i.e. the first `32 + 160 × legs` bytes of the record (a biped's 352 of 672: the kernel's
/// state traffic, the largest part of foot placement's cost, is what it reads).
pub(super) fn state_bytes(legs: usize) -> u64 {
    (std::mem::size_of::<CharacterState>() - (MAX_LEGS - legs) * std::mem::size_of::<LegState>()) as u64
}

/// Rounds the characters one storage binding holds (the largest per-character array
/// decides) down to a multiple of 16, which keeps every segment offset 256-byte aligned.
fn segment_size(max_binding: u64, per_character: [u64; 5]) -> usize {
    let fit = per_character.iter().filter(|b| **b > 0).map(|b| (max_binding / b) as usize).min().unwrap_or(0);
    (fit / 16 * 16).max(16)
}

/// Solves foot IK for a whole crowd on the GPU, keeping its buffers across frames.
///
/// Per frame: [`CrowdSolver::upload`] the characters and their FK poses (or bind the
/// animation system's own pose buffer with [`CrowdSolver::set_pose_source`]), then
/// [`CrowdSolver::encode`] into the frame's encoder: one compute pass, one dispatch. The
/// corrected poses stay in [`CrowdSolver::pose_output`] (`JointPose` per joint,
/// character-major) for skinning; [`CrowdSolver::read`] reads them back for tools and tests.
///
/// With a rig that has foot placement ([`FootRig::placement`]), each character's
/// [`CharacterState`] lives in the solver's own buffer across frames, read and written by
/// the same dispatch: call [`CrowdSolver::set_frame_time`] every frame; reset spawned or
/// teleported characters with [`CrowdSolver::reset_states`] and keep survivors' states when
/// the crowd changes with [`CrowdSolver::remap_states`].
pub struct CrowdSolver {
    pub(super) context: GpuContext,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    joint_count: usize,
    hits_mode: bool,
    /// Bytes per character in the state buffer ([`state_bytes`]); 0 for a stateless rig.
    pub(super) state_bytes: u64,
    /// The rig's foot-placement settings (the frame's spring decays depend on them).
    pub(super) placement: Option<crate::crowd::FootPlacement>,
    pub(super) rig_buf: wgpu::Buffer,
    heights_buf: wgpu::Buffer,
    /// Bound in place of the state buffer by a stateless rig.
    no_state: wgpu::Buffer,
    pub(super) frame: Option<Frame>,
    external_poses: Option<wgpu::Buffer>,
    pub(super) count: usize,
    segment_characters: usize,
    timer: PassTimer,
}

/// One buffer per array for the whole crowd; each segment of at most
/// `segment_characters` characters binds its sub-ranges (≤ one storage binding) and gets its
/// own dispatch.
pub(super) struct Frame {
    pub(super) capacity: usize,
    characters: wgpu::Buffer,
    poses_in: wgpu::Buffer,
    poses_out: wgpu::Buffer,
    results: wgpu::Buffer,
    hits: wgpu::Buffer,
    /// Foot placement: one [`CharacterState`] per character, kept across frames.
    pub(super) states: Option<wgpu::Buffer>,
    segments: Vec<Option<Segment>>,
    staging: Option<wgpu::Buffer>,
}

struct Segment {
    bind_group: wgpu::BindGroup,
    params: wgpu::Buffer,
    pub(super) count: usize,
}

/// Bytes per character in each array the kernel binds: characters, poses, results, hits,
/// foot-placement states.
fn per_character(joints: usize, hits_mode: bool, state_bytes: u64) -> [u64; 5] {
    [
        std::mem::size_of::<CharacterInput>() as u64,
        (joints * std::mem::size_of::<JointPose>()) as u64,
        std::mem::size_of::<FootResult>() as u64,
        if hits_mode { (MAX_LEGS * std::mem::size_of::<GroundHit>()) as u64 } else { 0 },
        state_bytes,
    ]
}

impl CrowdSolver {
    /// Builds the pipeline and uploads the rig and ground. The rig and heightfield are
    /// validated first.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, rig: &FootRig, ground: &Ground) -> Result<Self, GpuError> {
        Self::with_context(&GpuContext::new(device, queue), rig, ground)
    }

    /// [`CrowdSolver::new`] on a shared context.
    pub fn with_context(context: &GpuContext, rig: &FootRig, ground: &Ground) -> Result<Self, GpuError> {
        let (device, queue) = (context.device(), context.queue());
        rig.validate().map_err(GpuError::Input)?;
        if let Ground::Heightfield(h) = ground {
            h.validate().map_err(GpuError::Input)?;
        }
        let scope = context.error_scopes();
        let packed = rig.solver_rig(ground);
        let (pipeline, layout) = compute_pipeline_with(
            device,
            "foot_ik",
            foot_ik_source(device),
            shaders::FOOT_IK_ENTRY,
            &kernel_constants(&packed),
        );
        let table = rig.joint_table();
        let rig_buf =
            storage(device, "foot_ik rig", TABLE_OFFSET + (table.len() * 4) as u64, wgpu::BufferUsages::empty());
        queue.write_buffer(&rig_buf, 0, bytemuck::bytes_of(&packed));
        queue.write_buffer(&rig_buf, FRAME_OFFSET, bytemuck::bytes_of(&FrameInput::default()));
        queue.write_buffer(&rig_buf, TABLE_OFFSET, bytemuck::cast_slice(&table));
        let heights: &[f32] = match ground {
            Ground::Heightfield(h) => &h.heights,
            Ground::Hits => &[0.0; 4],
        };
        let heights_buf = storage(device, "foot_ik heights", (heights.len() * 4) as u64, wgpu::BufferUsages::empty());
        queue.write_buffer(&heights_buf, 0, bytemuck::cast_slice(heights));
        let no_state = storage(device, "foot_ik no state", 16, wgpu::BufferUsages::empty());
        let state_bytes = if rig.placement.is_some() { state_bytes(rig.legs.len()) } else { 0 };
        scope.pop()?;
        Ok(Self {
            context: context.clone(),
            pipeline,
            layout,
            joint_count: rig.joint_count(),
            hits_mode: matches!(ground, Ground::Hits),
            state_bytes,
            placement: rig.placement,
            rig_buf,
            heights_buf,
            no_state,
            frame: None,
            external_poses: None,
            count: 0,
            segment_characters: segment_size(
                context.max_binding_bytes(),
                per_character(rig.joint_count(), matches!(ground, Ground::Hits), state_bytes),
            ),
            timer: PassTimer::default(),
        })
    }

    /// Most characters per frame on this device: each array is one buffer of at most
    /// `max_buffer_size`; past one storage binding the crowd is split into segments.
    #[must_use]
    pub fn max_characters(&self) -> usize {
        per_character(self.joint_count, self.hits_mode, self.state_bytes)
            .iter()
            .filter(|b| **b > 0)
            .map(|b| (self.context.limits().max_buffer_size / b) as usize)
            .min()
            .unwrap_or(0)
    }

    /// Characters per segment (one storage binding each, one dispatch each).
    #[must_use]
    pub fn segment_characters(&self) -> usize {
        self.segment_characters
    }

    /// Caps the characters per segment (rounded down to a multiple of 16, at least 16), for
    /// tests of the splitting path on small crowds.
    pub fn set_max_segment_characters(&mut self, characters: usize) {
        self.segment_characters = self.segment_characters.min((characters / 16 * 16).max(16));
        self.rebuild_frame();
    }

    /// Reads the FK poses from the caller's GPU buffer (usage `STORAGE`, `JointPose` per
    /// joint, character-major) instead of uploaded ones, e.g. the output of an animation
    /// system's compute pass. `None` goes back to [`CrowdSolver::upload`]ed poses.
    pub fn set_pose_source(&mut self, buffer: Option<&wgpu::Buffer>) {
        self.external_poses = buffer.cloned();
        self.rebuild_frame(); // the bind groups change
    }

    /// Uploads this frame's characters, their FK poses (`characters × joint_count`, skipped
    /// with an external pose source: pass `&[]`) and, with [`Ground::Hits`], their ground
    /// hits (`characters × MAX_LEGS`; else `&[]`). Buffers are reused and grow only with the
    /// crowd.
    pub fn upload(
        &mut self,
        characters: &[CharacterInput],
        poses: &[JointPose],
        hits: &[GroundHit],
    ) -> Result<(), GpuError> {
        self.context.check_lost()?;
        let c = characters.len();
        let mismatch = |m: String| Err(GpuError::Input(crate::error::IkError::FrameMismatch(m)));
        let want_poses = if self.external_poses.is_some() { 0 } else { c * self.joint_count };
        if poses.len() != want_poses {
            return mismatch(format!("{c} characters need {want_poses} uploaded poses, got {}", poses.len()));
        }
        let want_hits = if self.hits_mode { c * MAX_LEGS } else { 0 };
        if hits.len() != want_hits {
            return mismatch(format!("{c} characters need {want_hits} ground hits, got {}", hits.len()));
        }
        if c > self.max_characters() {
            return Err(GpuError::BatchTooLarge { chains: c, max: self.max_characters() });
        }
        if let Some(ext) = &self.external_poses {
            if ext.size() < (c * self.joint_count * std::mem::size_of::<JointPose>()) as u64 {
                return mismatch(format!("the pose source holds {} bytes, {c} characters need more", ext.size()));
            }
        }
        let scope = self.context.error_scopes();
        let queue = self.context.queue();
        if self.frame.as_ref().is_none_or(|f| f.capacity < c) {
            let capacity = c.next_power_of_two().max(64).min(self.max_characters().max(1));
            let old = self.frame.take();
            let frame = self.make_frame(capacity, None);
            // Foot placement: every character keeps its state as the buffers grow.
            if let (Some(old), Some(new)) = (old.as_ref().and_then(|f| f.states.as_ref()), frame.states.as_ref()) {
                let bytes = old.size().min(new.size());
                self.context.submit("foot_ik states grow", |e| e.copy_buffer_to_buffer(old, 0, new, 0, bytes))?;
            }
            self.frame = Some(frame);
        }
        let frame = self.frame.as_ref().expect("just made");
        queue.write_buffer(&frame.characters, 0, bytemuck::cast_slice(characters));
        if self.external_poses.is_none() {
            queue.write_buffer(&frame.poses_in, 0, bytemuck::cast_slice(poses));
        }
        if self.hits_mode {
            queue.write_buffer(&frame.hits, 0, bytemuck::cast_slice(hits));
        }
        let max_groups = self.context.max_workgroups_per_dimension();
        let frame = self.frame.as_mut().expect("just made");
        for (k, seg) in frame.segments.iter_mut().enumerate() {
            let Some(seg) = seg else { continue };
            seg.count = c.saturating_sub(k * self.segment_characters).min(self.segment_characters);
            let groups = dispatch_size(seg.count, shaders::FOOT_IK_WORKGROUP_SIZE[0], max_groups);
            queue.write_buffer(&seg.params, 0, bytemuck::bytes_of(&DispatchParams::new(seg.count, groups)));
        }
        self.count = c;
        scope.pop()
    }

    /// The buffers for `capacity` characters; `states` reuses a state buffer (else a new,
    /// zeroed one: every character resets).
    pub(super) fn make_frame(&self, capacity: usize, states: Option<wgpu::Buffer>) -> Frame {
        let d = self.context.device();
        let states = (self.state_bytes > 0).then(|| {
            states.unwrap_or_else(|| {
                storage(d, "foot_ik states", capacity as u64 * self.state_bytes, wgpu::BufferUsages::COPY_SRC)
            })
        });
        let pose_bytes = (capacity * self.joint_count * std::mem::size_of::<JointPose>()) as u64;
        let characters = storage(
            d,
            "foot_ik characters",
            (capacity * std::mem::size_of::<CharacterInput>()) as u64,
            wgpu::BufferUsages::empty(),
        );
        let poses_in = storage(
            d,
            "foot_ik poses in",
            if self.external_poses.is_some() { 16 } else { pose_bytes },
            wgpu::BufferUsages::empty(),
        );
        let poses_out = storage(d, "foot_ik poses out", pose_bytes, wgpu::BufferUsages::COPY_SRC);
        let results = storage(
            d,
            "foot_ik results",
            (capacity * std::mem::size_of::<FootResult>()) as u64,
            wgpu::BufferUsages::COPY_SRC,
        );
        let hits_len = if self.hits_mode { capacity * MAX_LEGS } else { 1 };
        let hits = storage(
            d,
            "foot_ik hits",
            (hits_len * std::mem::size_of::<GroundHit>()) as u64,
            wgpu::BufferUsages::empty(),
        );
        let pose_source = self.external_poses.as_ref().unwrap_or(&poses_in);
        let [b_char, b_pose, b_result, b_hits, b_state] =
            per_character(self.joint_count, self.hits_mode, self.state_bytes);
        let seg = self.segment_characters;
        let source_characters =
            if self.external_poses.is_some() { (pose_source.size() / b_pose) as usize } else { capacity };
        fn range(buffer: &wgpu::Buffer, first: usize, count: usize, bytes: u64) -> wgpu::BufferBinding<'_> {
            wgpu::BufferBinding {
                buffer,
                offset: first as u64 * bytes,
                size: std::num::NonZeroU64::new(count as u64 * bytes),
            }
        }
        let segments = (0..capacity.div_ceil(seg))
            .map(|k| {
                let first = k * seg;
                let count = seg.min(capacity - first);
                let source_count = count.min(source_characters.saturating_sub(first));
                if source_count == 0 {
                    return None; // the external pose source does not reach this segment
                }
                let params = uniform_buffer(d, "foot_ik dispatch", std::mem::size_of::<DispatchParams>() as u64);
                let hits_binding = if self.hits_mode {
                    wgpu::BindingResource::Buffer(range(&hits, first, count, b_hits))
                } else {
                    hits.as_entire_binding()
                };
                let state_binding = match &states {
                    Some(states) => wgpu::BindingResource::Buffer(range(states, first, count, b_state)),
                    None => self.no_state.as_entire_binding(),
                };
                let bind_group = d.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("foot_ik"),
                    layout: &self.layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: self.rig_buf.as_entire_binding() },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::Buffer(range(&characters, first, count, b_char)),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Buffer(range(pose_source, first, source_count, b_pose)),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: wgpu::BindingResource::Buffer(range(&poses_out, first, count, b_pose)),
                        },
                        wgpu::BindGroupEntry {
                            binding: 4,
                            resource: wgpu::BindingResource::Buffer(range(&results, first, count, b_result)),
                        },
                        wgpu::BindGroupEntry { binding: 5, resource: self.heights_buf.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 6, resource: hits_binding },
                        wgpu::BindGroupEntry { binding: 7, resource: state_binding },
                        wgpu::BindGroupEntry { binding: 8, resource: params.as_entire_binding() },
                    ],
                });
                Some(Segment { bind_group, params, count: 0 })
            })
            .collect();
        Frame { capacity, characters, poses_in, poses_out, results, hits, states, segments, staging: None }
    }

    /// New buffers and bind groups at the same capacity, keeping the foot-placement states
    /// (the next [`CrowdSolver::upload`] fills the rest).
    fn rebuild_frame(&mut self) {
        if let Some(old) = self.frame.take() {
            self.frame = Some(self.make_frame(old.capacity, old.states));
        }
    }

    /// Records the frame's foot IK into `encoder`: one compute pass, one dispatch for the
    /// whole crowd. Nothing is read back.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        let Some(frame) = self.frame.as_ref().filter(|_| self.count > 0) else { return };
        {
            let timestamp_writes = self.timer.writes();
            let max_groups = self.context.max_workgroups_per_dimension();
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("foot_ik"), timestamp_writes });
            pass.set_pipeline(&self.pipeline);
            for seg in frame.segments.iter().flatten().filter(|s| s.count > 0) {
                let groups = dispatch_size(seg.count, shaders::FOOT_IK_WORKGROUP_SIZE[0], max_groups);
                pass.set_bind_group(0, &seg.bind_group, &[]);
                pass.dispatch_workgroups(groups[0], groups[1], 1);
            }
        }
        self.timer.resolve(encoder);
    }

    /// Times the foot-IK pass with timestamp queries from now on, when the device has
    /// `Features::TIMESTAMP_QUERY`. Returns whether timing is on.
    pub fn enable_timestamps(&mut self) -> bool {
        self.timer.enable(&self.context)
    }

    /// Blocking: device time of the last submitted foot-IK pass (ms), when timing is on.
    pub fn device_time_ms(&self) -> Result<Option<f64>, GpuError> {
        self.timer.read_ms(&self.context)
    }

    /// The corrected poses of the last frame (`JointPose` per joint, character-major), for
    /// the caller's passes (e.g. building a skinning palette). `None` before any upload.
    #[must_use]
    pub fn pose_output(&self) -> Option<&wgpu::Buffer> {
        self.frame.as_ref().map(|f| &f.poses_out)
    }

    /// The characters of the last upload (`CharacterInput` per character), e.g. for a
    /// renderer's per-instance root transforms.
    #[must_use]
    pub fn characters_buffer(&self) -> Option<&wgpu::Buffer> {
        self.frame.as_ref().map(|f| &f.characters)
    }

    /// The FK poses the kernel reads: the external pose source, or the uploaded poses.
    #[must_use]
    pub fn pose_input(&self) -> Option<&wgpu::Buffer> {
        self.external_poses.as_ref().or(self.frame.as_ref().map(|f| &f.poses_in))
    }

    /// The per-character [`FootResult`]s of the last frame.
    #[must_use]
    pub fn results_output(&self) -> Option<&wgpu::Buffer> {
        self.frame.as_ref().map(|f| &f.results)
    }

    /// Characters in the last upload.
    #[must_use]
    pub fn characters(&self) -> usize {
        self.count
    }

    /// The context (device, queue) the solver runs on.
    #[must_use]
    pub fn context(&self) -> &GpuContext {
        &self.context
    }

    /// The device.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        self.context.device()
    }

    /// The queue.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        self.context.queue()
    }

    /// Blocking: reads back the corrected poses and results of the last submitted frame.
    pub fn read(&mut self, poses: &mut [JointPose], results: &mut [FootResult]) -> Result<(), GpuError> {
        self.context.check_lost()?;
        let c = self.count;
        if poses.len() != c * self.joint_count || results.len() != c {
            return Err(GpuError::LengthMismatch { chains: c, outputs: results.len() });
        }
        let Some(frame) = self.frame.as_mut().filter(|_| c > 0) else { return Ok(()) };
        let pose_bytes = std::mem::size_of_val(poses) as u64;
        let result_bytes = std::mem::size_of_val(results) as u64;
        let need = pose_bytes + result_bytes;
        if frame.staging.as_ref().is_none_or(|s| s.size() < need) {
            let cap = (frame.capacity
                * (self.joint_count * std::mem::size_of::<JointPose>() + std::mem::size_of::<FootResult>()))
                as u64;
            frame.staging = Some(staging_buffer(self.context.device(), cap));
        }
        let frame = &*frame;
        let staging = frame.staging.as_ref().expect("just made");
        self.context.submit("foot_ik readback", |encoder| {
            encoder.copy_buffer_to_buffer(&frame.poses_out, 0, staging, 0, pose_bytes);
            encoder.copy_buffer_to_buffer(&frame.results, 0, staging, pose_bytes, result_bytes);
        })?;
        let mut bytes = vec![0u8; need as usize];
        map_read(self.context.device(), staging, &mut bytes)?;
        bytemuck::cast_slice_mut(poses).copy_from_slice(&bytes[..pose_bytes as usize]);
        bytemuck::cast_slice_mut(results).copy_from_slice(&bytes[pose_bytes as usize..]);
        self.context.check_lost()
    }

    /// Blocking convenience: upload, dispatch, submit, read back.
    pub fn solve(
        &mut self,
        characters: &[CharacterInput],
        poses: &[JointPose],
        hits: &[GroundHit],
        poses_out: &mut [JointPose],
        results: &mut [FootResult],
    ) -> Result<(), GpuError> {
        self.upload(characters, poses, hits)?;
        self.context.submit("foot_ik", |encoder| self.encode(encoder))?;
        self.read(poses_out, results)
    }
}
