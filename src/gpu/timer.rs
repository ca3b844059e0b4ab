//! GPU device time of a compute pass from timestamp queries (adapters with
//! `Features::TIMESTAMP_QUERY`), for benchmarks.

use super::buffers::{map_read, staging_buffer};
use super::error::GpuError;

/// Two timestamps around a compute pass, resolved into a buffer and read back on demand.
pub struct GpuTimer {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f32,
}

impl GpuTimer {
    /// A timer, or `None` when the device lacks `TIMESTAMP_QUERY`.
    #[must_use]
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Self> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("crowd-ik timer"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd-ik timer resolve"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Self { query_set, resolve, readback: staging_buffer(device, 16), period_ns: queue.get_timestamp_period() })
    }

    /// The timestamp writes to put on the timed compute pass.
    #[must_use]
    pub fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    /// Records the resolve of both timestamps; call after the timed pass ends.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.query_set, 0..2, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, 16);
    }

    /// Blocking: milliseconds between the two timestamps of the last submitted timed pass.
    pub fn read_ms(&self, device: &wgpu::Device) -> Result<f64, GpuError> {
        let mut bytes = [0u8; 16];
        map_read(device, &self.readback, &mut bytes)?;
        let t: [u64; 2] = bytemuck::cast(bytes);
        Ok(t[1].saturating_sub(t[0]) as f64 * f64::from(self.period_ns) * 1e-6)
    }
}
