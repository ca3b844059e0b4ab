//! Buffer, pipeline and dispatch helpers shared by every GPU object of the crate, public
//! for renderers that bind the crate's buffers in passes of their own.

use bytemuck::{Pod, Zeroable};

use super::error::GpuError;

/// Per-dispatch parameters (a uniform of every kernel). Keep in sync with `DispatchParams`
/// in `shaders/shared/records.wgsl` (`tests/layout.rs` checks it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DispatchParams {
    /// Records (chains, characters, palette entries) in this segment.
    pub count: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// Joints per character (the palette kernel); 0 for the others.
    pub joints: u32,
    /// Always 0.
    pub reserved: u32,
}

impl DispatchParams {
    /// Parameters of a dispatch over `count` records in `groups[0]` workgroups along x.
    #[must_use]
    pub fn new(count: usize, groups: [u32; 2]) -> Self {
        Self { count: count as u32, groups_x: groups[0], joints: 0, reserved: 0 }
    }
}

/// A compute pipeline from WGSL, its bind-group layout reflected from the shader (group 0):
/// bindings are written once, in the shader.
#[must_use]
pub fn compute_pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry: &str,
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    compute_pipeline_with(device, label, source, entry, &[])
}

/// [`compute_pipeline`] with values for the shader's `override` constants (each variant is
/// compiled with its dead branches removed).
#[must_use]
pub fn compute_pipeline_with(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry: &str,
    constants: &[(&str, f64)],
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
        cache: None,
    });
    let layout = pipeline.get_bind_group_layout(0);
    (pipeline, layout)
}

/// A `UNIFORM | COPY_DST` buffer of `size` bytes.
#[must_use]
pub fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Workgroups `[x, y]` of a 2-D dispatch covering `count` invocations: `x` at most `max`.
#[must_use]
pub fn dispatch_size(count: usize, workgroup: u32, max: u32) -> [u32; 2] {
    let groups = (count as u32).div_ceil(workgroup);
    let x = groups.min(max).max(1);
    [x, groups.div_ceil(x)]
}

/// Blocking: maps the first `dst.len()` bytes of `staging` (already copied to and submitted)
/// and copies them into `dst`.
pub fn map_read(device: &wgpu::Device, staging: &wgpu::Buffer, dst: &mut [u8]) -> Result<(), GpuError> {
    let slice = staging.slice(..dst.len() as u64);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
    rx.recv().map_err(|e| GpuError::Readback(e.to_string()))?.map_err(|e| GpuError::Readback(e.to_string()))?;
    {
        let view = slice.get_mapped_range().map_err(|e| GpuError::Readback(e.to_string()))?;
        dst.copy_from_slice(&view);
    }
    staging.unmap();
    Ok(())
}

/// A `MAP_READ | COPY_DST` buffer of `size` bytes.
#[must_use]
pub fn staging_buffer(device: &wgpu::Device, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd-ik staging"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A `STORAGE | COPY_DST | extra` buffer of `size` bytes (at least 16).
#[must_use]
pub fn storage_buffer(device: &wgpu::Device, label: &str, size: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
        mapped_at_creation: false,
    })
}
