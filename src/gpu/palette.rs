//! Skinning palettes on the GPU: model-space joint matrix × inverse bind matrix, per
//! character and joint, written into a buffer a renderer binds in its vertex shader
//! (the twin of [`crate::cpu::palette::palette`]); or in world space, with each character's
//! root transform in front ([`PaletteBuilder::encode_world`], the twin of
//! [`crate::cpu::palette::palette_world`]), for renderers that skin in world space.

use glam::Mat4;

use super::buffers::{
    compute_pipeline, dispatch_size, map_read, staging_buffer, storage_buffer, uniform_buffer, DispatchParams,
};
use super::context::{GpuContext, PassTimer};
use super::error::GpuError;
use super::shaders;
use crate::crowd::{CharacterInput, JointPose};

/// Builds a skinning palette from a pose buffer (`JointPose` per joint, character-major,
/// e.g. [`super::crowd::CrowdSolver::pose_output`]) inside the caller's encoder.
///
/// The palette is `array<mat4x4<f32>>` with `characters × joints` entries, character-major,
/// column-major matrices, usage `STORAGE | VERTEX | COPY_SRC`. One builder makes one palette
/// per frame (its dispatch parameters are written by the queue before the submit): use two
/// builders for two palettes in the same frame (e.g. IK on and IK off).
pub struct PaletteBuilder {
    context: GpuContext,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    inverse_bind: wgpu::Buffer,
    params: wgpu::Buffer,
    joints: usize,
    palette: Option<(wgpu::Buffer, usize)>,
    bound: Option<(wgpu::Buffer, wgpu::BindGroup)>,
    /// The world-space entry point, built on first use.
    world: Option<(wgpu::ComputePipeline, wgpu::BindGroupLayout)>,
    bound_world: Option<([wgpu::Buffer; 2], wgpu::BindGroup)>,
    /// The scatter entry point, built on first use, its offsets buffer (capacity in
    /// characters) and bind group.
    scatter: Option<(wgpu::ComputePipeline, wgpu::BindGroupLayout)>,
    scatter_offsets: Option<(wgpu::Buffer, usize)>,
    bound_scatter: Option<([wgpu::Buffer; 4], wgpu::BindGroup)>,
    count: usize,
    staging: Option<wgpu::Buffer>,
    timer: PassTimer,
}

impl PaletteBuilder {
    /// A builder for a skeleton with these inverse bind matrices (one per joint; see
    /// [`crate::cpu::palette::inverse_bind`]).
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, inverse_bind: &[Mat4]) -> Result<Self, GpuError> {
        Self::with_context(&GpuContext::new(device, queue), inverse_bind)
    }

    /// [`PaletteBuilder::new`] on a shared context.
    pub fn with_context(context: &GpuContext, inverse_bind: &[Mat4]) -> Result<Self, GpuError> {
        let (device, queue) = (context.device(), context.queue());
        if inverse_bind.is_empty() || !inverse_bind.iter().all(|m| m.is_finite()) {
            return Err(GpuError::Input(crate::error::IkError::InvalidRig(
                "inverse bind matrices must be non-empty and finite".into(),
            )));
        }
        let scope = context.error_scopes();
        let (pipeline, layout) = compute_pipeline(device, "palette", shaders::PALETTE_WGSL, shaders::PALETTE_ENTRY);
        let inverse_bind_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("inverse bind"),
            size: std::mem::size_of_val(inverse_bind) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&inverse_bind_buf, 0, bytemuck::cast_slice(inverse_bind));
        let params = uniform_buffer(device, "palette dispatch", std::mem::size_of::<DispatchParams>() as u64);
        scope.pop()?;
        Ok(Self {
            context: context.clone(),
            pipeline,
            layout,
            inverse_bind: inverse_bind_buf,
            params,
            joints: inverse_bind.len(),
            palette: None,
            bound: None,
            world: None,
            bound_world: None,
            scatter: None,
            scatter_offsets: None,
            bound_scatter: None,
            count: 0,
            staging: None,
            timer: PassTimer::default(),
        })
    }

    /// Records the palette of `characters` characters from `poses` into `encoder` (one
    /// compute pass) and returns the palette buffer. The buffer is re-created only when the
    /// crowd grows.
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        poses: &wgpu::Buffer,
        characters: usize,
    ) -> Result<&wgpu::Buffer, GpuError> {
        self.encode_with(encoder, poses, None, characters)
    }

    /// [`PaletteBuilder::encode`] in world space: each character's matrices get its root
    /// transform in front (`root_inputs`: its `CharacterInput` records, e.g.
    /// [`super::crowd::CrowdSolver::characters_buffer`]; translation, rotation, uniform scale,
    /// a mirror for a negative scale). These are the joint matrices of renderers that skin
    /// in world space, as Bevy does (`joint global transform × inverse bind pose`).
    pub fn encode_world(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        poses: &wgpu::Buffer,
        root_inputs: &wgpu::Buffer,
        characters: usize,
    ) -> Result<&wgpu::Buffer, GpuError> {
        if root_inputs.size() < (characters * std::mem::size_of::<CharacterInput>()) as u64 {
            return Err(GpuError::Input(crate::error::IkError::FrameMismatch(format!(
                "character buffer of {} bytes for {characters} characters",
                root_inputs.size()
            ))));
        }
        self.encode_with(encoder, poses, Some(root_inputs), characters)
    }

    /// [`PaletteBuilder::encode_world`] written straight into a renderer's own joint-matrix
    /// buffer `dst` (usage `STORAGE`, `array<mat4x4<f32>>`): character `c`'s matrices go to
    /// `dst[offsets[c] + j]`, e.g. Bevy's skin buffer, where every skinned mesh has its own
    /// offset. One dispatch, no copies; [`crate::crowd::NONE`] skips a character (no
    /// allocation there), matrices past the end of `dst` are not written, entries no
    /// character covers keep their values. CPU twin:
    /// [`crate::cpu::palette::palette_world_scatter`].
    pub fn encode_world_scatter(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        poses: &wgpu::Buffer,
        root_inputs: &wgpu::Buffer,
        offsets: &[u32],
        dst: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let characters = offsets.len();
        let entries = characters * self.joints;
        let mismatch = |m: String| Err(GpuError::Input(crate::error::IkError::FrameMismatch(m)));
        if poses.size() < (entries * std::mem::size_of::<JointPose>()) as u64 {
            return mismatch(format!("pose buffer of {} bytes for {characters} characters", poses.size()));
        }
        if root_inputs.size() < (characters * std::mem::size_of::<CharacterInput>()) as u64 {
            return mismatch(format!("character buffer of {} bytes for {characters} characters", root_inputs.size()));
        }
        if !dst.usage().contains(wgpu::BufferUsages::STORAGE) || dst.size() < 64 {
            return mismatch("the destination must be a STORAGE buffer of matrices".into());
        }
        if dst.size() > self.context.max_binding_bytes() {
            return mismatch(format!("a destination of {} bytes is over the storage binding limit", dst.size()));
        }
        let scope = self.context.error_scopes();
        let device = self.context.device();
        if self.scatter_offsets.as_ref().is_none_or(|(_, cap)| *cap < characters.max(1)) {
            let cap = characters.max(1).next_power_of_two();
            let buffer =
                storage_buffer(device, "palette scatter offsets", (cap * 4) as u64, wgpu::BufferUsages::empty());
            self.scatter_offsets = Some((buffer, cap));
        }
        let (offsets_buf, _) = self.scatter_offsets.as_ref().expect("just made");
        if characters > 0 {
            self.context.queue().write_buffer(offsets_buf, 0, bytemuck::cast_slice(offsets));
        }
        let (pipeline, layout) = self.scatter.get_or_insert_with(|| {
            compute_pipeline(device, "palette world scatter", shaders::PALETTE_WGSL, "palette_world_scatter")
        });
        let key = [poses.clone(), root_inputs.clone(), offsets_buf.clone(), dst.clone()];
        if self.bound_scatter.as_ref().is_none_or(|(k, _)| *k != key) {
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("palette world scatter"),
                layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: poses.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: self.inverse_bind.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: self.params.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: root_inputs.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: offsets_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 6, resource: dst.as_entire_binding() },
                ],
            });
            self.bound_scatter = Some((key, bind_group));
        }
        let groups =
            dispatch_size(entries, shaders::PALETTE_WORKGROUP_SIZE[0], self.context.max_workgroups_per_dimension());
        let params = DispatchParams { joints: self.joints as u32, ..DispatchParams::new(entries, groups) };
        self.context.queue().write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        if entries > 0 {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("palette scatter"),
                    timestamp_writes: self.timer.writes(),
                });
                pass.set_pipeline(&*pipeline);
                pass.set_bind_group(0, &self.bound_scatter.as_ref().expect("just bound").1, &[]);
                pass.dispatch_workgroups(groups[0], groups[1], 1);
            }
            self.timer.resolve(encoder);
        }
        scope.pop()
    }

    fn encode_with(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        poses: &wgpu::Buffer,
        root_inputs: Option<&wgpu::Buffer>,
        characters: usize,
    ) -> Result<&wgpu::Buffer, GpuError> {
        let entries = characters * self.joints;
        if poses.size() < (entries * std::mem::size_of::<JointPose>()) as u64 {
            return Err(GpuError::Input(crate::error::IkError::FrameMismatch(format!(
                "pose buffer of {} bytes for {characters} characters",
                poses.size()
            ))));
        }
        let scope = self.context.error_scopes();
        let device = self.context.device();
        if self.palette.as_ref().is_none_or(|(_, cap)| *cap < entries.max(1)) {
            let cap = entries.max(1).next_power_of_two();
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("skinning palette"),
                size: (cap * 64) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            self.palette = Some((buffer, cap));
            self.bound = None;
            self.bound_world = None;
        }
        let (palette, _) = self.palette.as_ref().expect("just made");
        let base = [
            wgpu::BindGroupEntry { binding: 0, resource: poses.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: self.inverse_bind.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: palette.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 3, resource: self.params.as_entire_binding() },
        ];
        let (pipeline, bind_group) = match root_inputs {
            None => {
                if self.bound.as_ref().is_none_or(|(b, _)| b != poses) {
                    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("palette"),
                        layout: &self.layout,
                        entries: &base,
                    });
                    self.bound = Some((poses.clone(), bind_group));
                }
                (&self.pipeline, &self.bound.as_ref().expect("just bound").1)
            }
            Some(roots) => {
                let (pipeline, layout) = self.world.get_or_insert_with(|| {
                    compute_pipeline(device, "palette world", shaders::PALETTE_WGSL, "palette_world")
                });
                if self.bound_world.as_ref().is_none_or(|([p, r], _)| p != poses || r != roots) {
                    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("palette world"),
                        layout,
                        entries: &[
                            base[0].clone(),
                            base[1].clone(),
                            base[2].clone(),
                            base[3].clone(),
                            wgpu::BindGroupEntry { binding: 4, resource: roots.as_entire_binding() },
                        ],
                    });
                    self.bound_world = Some(([poses.clone(), roots.clone()], bind_group));
                }
                (&*pipeline, &self.bound_world.as_ref().expect("just bound").1)
            }
        };
        let groups =
            dispatch_size(entries, shaders::PALETTE_WORKGROUP_SIZE[0], self.context.max_workgroups_per_dimension());
        let params = DispatchParams { joints: self.joints as u32, ..DispatchParams::new(entries, groups) };
        self.context.queue().write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        if entries > 0 {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("palette"),
                    timestamp_writes: self.timer.writes(),
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(groups[0], groups[1], 1);
            }
            self.timer.resolve(encoder);
        }
        self.count = characters;
        scope.pop()?;
        Ok(&self.palette.as_ref().expect("made above").0)
    }

    /// Times every palette pass with timestamp queries from now on, when the device has
    /// `Features::TIMESTAMP_QUERY` ([`GpuContext::new_default`] asks for it). Returns whether
    /// timing is on. Read the time with [`PaletteBuilder::device_time_ms`].
    pub fn enable_timestamps(&mut self) -> bool {
        self.timer.enable(&self.context)
    }

    /// Blocking: device time of the last submitted palette pass, in milliseconds, when
    /// timing is on.
    pub fn device_time_ms(&self) -> Result<Option<f64>, GpuError> {
        self.timer.read_ms(&self.context)
    }

    /// The palette buffer of the last [`PaletteBuilder::encode`].
    #[must_use]
    pub fn palette(&self) -> Option<&wgpu::Buffer> {
        self.palette.as_ref().map(|(b, _)| b)
    }

    /// Joints per character.
    #[must_use]
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// Blocking, for tests and tools: reads the last submitted palette back.
    pub fn read(&mut self, out: &mut [Mat4]) -> Result<(), GpuError> {
        let entries = self.count * self.joints;
        if out.len() != entries {
            return Err(GpuError::LengthMismatch { chains: entries, outputs: out.len() });
        }
        let Some((palette, cap)) = self.palette.as_ref().filter(|_| entries > 0) else { return Ok(()) };
        if self.staging.as_ref().is_none_or(|s| s.size() < (entries * 64) as u64) {
            self.staging = Some(staging_buffer(self.context.device(), (*cap * 64) as u64));
        }
        let staging = self.staging.as_ref().expect("just made");
        self.context.submit("palette readback", |encoder| {
            encoder.copy_buffer_to_buffer(palette, 0, staging, 0, (entries * 64) as u64);
        })?;
        map_read(self.context.device(), staging, bytemuck::cast_slice_mut(out))
    }
}
