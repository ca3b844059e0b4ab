//! A GPU pose source for callers without an animation system: samples a motion clip per
//! character, each with its own time offset, into model space on the GPU (the twin of
//! [`crate::cpu::clip_sample::sample_clip`]), so a whole crowd frame stays on the GPU. Feed
//! [`ClipPoseSource::poses`] to [`super::crowd::CrowdSolver::set_pose_source`].

use bytemuck::{Pod, Zeroable};

use super::buffers::{compute_pipeline, dispatch_size, storage_buffer, uniform_buffer};
use super::context::GpuContext;
use super::error::GpuError;
use super::shaders;
use crate::bvh::Clip;
use crate::crowd::{JointPose, NONE};

/// Per-dispatch parameters of the clip sampler (a uniform). Keep in sync with `ClipParams`
/// in `shaders/kernels/clip_sample.wgsl` (`tests/layout.rs` checks it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ClipParams {
    /// Characters.
    pub count: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// Joints per character.
    pub joints: u32,
    /// Frames in the clip.
    pub frames: u32,
    /// Seconds into the clip (each character adds its offset).
    pub time: f32,
    /// Seconds per frame.
    pub frame_time: f32,
    /// Always 0.
    pub reserved0: f32,
    /// Always 0.
    pub reserved1: f32,
}

/// Samples one looping clip for a whole crowd on the GPU.
pub struct ClipPoseSource {
    context: GpuContext,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    clip_buf: wgpu::Buffer,
    parents_buf: wgpu::Buffer,
    offsets_buf: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    params_buf: wgpu::Buffer,
    poses: wgpu::Buffer,
    params: ClipParams,
    groups: [u32; 2],
}

impl ClipPoseSource {
    /// A source for `offsets.len()` characters (seconds added to the frame time for each)
    /// from the clip's local transforms (`frames × joints`, frame-major), its parents
    /// (parents first) and seconds per frame.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        local: &[JointPose],
        parents: &[Option<usize>],
        frame_time: f32,
        offsets: &[f32],
    ) -> Result<Self, GpuError> {
        Self::with_context(&GpuContext::new(device, queue), local, parents, frame_time, offsets)
    }

    /// [`ClipPoseSource::new`] on a shared context.
    pub fn with_context(
        context: &GpuContext,
        local: &[JointPose],
        parents: &[Option<usize>],
        frame_time: f32,
        offsets: &[f32],
    ) -> Result<Self, GpuError> {
        let (device, queue) = (context.device(), context.queue());
        let joints = parents.len();
        let bad = |m: &str| Err(GpuError::Input(crate::error::IkError::Parse(format!("clip: {m}"))));
        if joints == 0 || local.is_empty() || !local.len().is_multiple_of(joints) || !(frame_time > 0.0) {
            return bad("needs joints, whole frames and a positive frame time");
        }
        if parents.iter().enumerate().any(|(j, p)| p.is_some_and(|p| p >= j)) {
            return bad("parents must come first");
        }
        check_offsets(offsets)?;
        let scope = context.error_scopes();
        let (pipeline, layout) =
            compute_pipeline(device, "clip_sample", shaders::CLIP_SAMPLE_WGSL, shaders::CLIP_SAMPLE_ENTRY);
        let storage = |label, bytes: &[u8]| {
            let b = storage_buffer(device, label, bytes.len() as u64, wgpu::BufferUsages::empty());
            queue.write_buffer(&b, 0, bytes);
            b
        };
        let parents_u32: Vec<u32> = parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
        let clip_buf = storage("clip frames", bytemuck::cast_slice(local));
        let parents_buf = storage("clip parents", bytemuck::cast_slice(&parents_u32));
        let params_buf = uniform_buffer(device, "clip params", std::mem::size_of::<ClipParams>() as u64);
        let params = ClipParams {
            count: 0,
            groups_x: 0,
            joints: joints as u32,
            frames: (local.len() / joints) as u32,
            time: 0.0,
            frame_time,
            reserved0: 0.0,
            reserved1: 0.0,
        };
        let (offsets_buf, poses, bind_group) =
            Self::make_buffers(context, &layout, &clip_buf, &parents_buf, &params_buf, offsets.len(), joints);
        scope.pop()?;
        let mut source = Self {
            context: context.clone(),
            pipeline,
            layout,
            clip_buf,
            parents_buf,
            offsets_buf,
            bind_group,
            params_buf,
            poses,
            params,
            groups: [0, 0],
        };
        source.set_offsets(offsets)?;
        Ok(source)
    }

    /// Offsets and poses buffers for `capacity` characters and their bind group.
    fn make_buffers(
        context: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        clip_buf: &wgpu::Buffer,
        parents_buf: &wgpu::Buffer,
        params_buf: &wgpu::Buffer,
        capacity: usize,
        joints: usize,
    ) -> (wgpu::Buffer, wgpu::Buffer, wgpu::BindGroup) {
        let device = context.device();
        let offsets_buf =
            storage_buffer(device, "clip offsets", (capacity.max(1) * 4) as u64, wgpu::BufferUsages::COPY_DST);
        let poses = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("clip poses"),
            size: ((capacity * joints * std::mem::size_of::<JointPose>()) as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("clip_sample"),
            layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: clip_buf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: parents_buf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: offsets_buf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: poses.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 4, resource: params_buf.as_entire_binding() },
            ],
        });
        (offsets_buf, poses, bind_group)
    }

    /// Characters the current buffers hold.
    fn capacity(&self) -> usize {
        (self.offsets_buf.size() / 4) as usize
    }

    /// A new crowd: one time offset (seconds) per character, e.g. after spawns and despawns.
    /// Rewrites the offsets in place; only a crowd larger than any before re-creates the
    /// buffers, and then [`ClipPoseSource::poses`] is a new buffer (returns `true`: hand it to
    /// [`super::crowd::CrowdSolver::set_pose_source`] again). Offsets must be finite.
    pub fn set_offsets(&mut self, offsets: &[f32]) -> Result<bool, GpuError> {
        check_offsets(offsets)?;
        let grown = offsets.len() > self.capacity();
        if grown {
            let capacity = offsets.len().next_power_of_two();
            let scope = self.context.error_scopes();
            (self.offsets_buf, self.poses, self.bind_group) = Self::make_buffers(
                &self.context,
                &self.layout,
                &self.clip_buf,
                &self.parents_buf,
                &self.params_buf,
                capacity,
                self.params.joints as usize,
            );
            scope.pop()?;
        }
        if !offsets.is_empty() {
            self.context.queue().write_buffer(&self.offsets_buf, 0, bytemuck::cast_slice(offsets));
        }
        self.groups = dispatch_size(
            offsets.len(),
            shaders::CLIP_SAMPLE_WORKGROUP_SIZE[0],
            self.context.max_workgroups_per_dimension(),
        );
        self.params.count = offsets.len() as u32;
        self.params.groups_x = self.groups[0];
        Ok(grown)
    }

    /// Characters sampled per frame.
    #[must_use]
    pub fn characters(&self) -> usize {
        self.params.count as usize
    }

    /// A source playing a BVH clip (translations scaled by `scale`).
    pub fn from_clip(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        clip: &Clip,
        scale: f32,
        offsets: &[f32],
    ) -> Result<Self, GpuError> {
        let local: Vec<JointPose> = (0..clip.frames())
            .flat_map(|f| clip.local_pose(f, scale).into_iter().map(|(t, r)| JointPose::new(t, r)))
            .collect();
        Self::new(device, queue, &local, &clip.skeleton.parents, clip.frame_time, offsets)
    }

    /// Records sampling every character at `time + offset` seconds into `encoder`.
    pub fn encode(&mut self, encoder: &mut wgpu::CommandEncoder, time: f32) {
        self.params.time = time;
        self.context.queue().write_buffer(&self.params_buf, 0, bytemuck::bytes_of(&self.params));
        if self.params.count == 0 {
            return;
        }
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("clip_sample"), timestamp_writes: None });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.groups[0], self.groups[1], 1);
    }

    /// The sampled model-space poses (`JointPose` per joint, character-major; sized for the
    /// largest crowd so far).
    #[must_use]
    pub fn poses(&self) -> &wgpu::Buffer {
        &self.poses
    }
}

/// Offsets must be finite (a NaN would poison every joint of its character).
fn check_offsets(offsets: &[f32]) -> Result<(), GpuError> {
    match offsets.iter().position(|o| !o.is_finite()) {
        Some(i) => Err(GpuError::Input(crate::error::IkError::Parse(format!("clip: offset {i} is not finite")))),
        None => Ok(()),
    }
}
