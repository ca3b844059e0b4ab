//! The device every GPU object of the crate runs on: [`GpuContext`] holds the device, its
//! queue, the device-lost flag and the limits, and makes error scopes and timers.
//!
//! [`crate::gpu::GpuSolver`], [`crate::gpu::CrowdSolver`], [`crate::gpu::PaletteBuilder`]
//! and [`crate::gpu::ClipPoseSource`] each embed one. Build one context per device and hand
//! it to every object ([`GpuSolver::with_context`](crate::gpu::GpuSolver::with_context) and
//! the like): they then share one device-lost flag (wgpu keeps a single device-lost callback
//! per device, so contexts made separately for the same device would replace each other's).

use std::sync::{Arc, Mutex};

use super::error::GpuError;
use super::timer::GpuTimer;

/// A device, its queue and what every GPU object of the crate needs to know about them.
/// Cheap to clone (the wgpu handles and the lost flag are shared).
#[derive(Clone)]
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    lost: LostFlag,
    limits: wgpu::Limits,
    adapter: Option<wgpu::AdapterInfo>,
}

impl GpuContext {
    /// A context on the caller's device and queue (a renderer passes its own). Installs the
    /// device-lost callback.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        Self {
            device: device.clone(),
            queue: queue.clone(),
            lost: LostFlag::install(device),
            limits: device.limits(),
            adapter: None,
        }
    }

    /// A context on a device of its own: adapter from [`adapter_from_env`], the adapter's
    /// largest buffer and binding sizes (fewer segments), timestamp queries when available,
    /// and on a CPU adapter (lavapipe) `SHADER_INT64` when available, which
    /// [`CrowdSolver`](crate::gpu::CrowdSolver) uses to move foot-placement state in 64-bit
    /// words (same results, less work there).
    pub fn new_default() -> Result<Self, GpuError> {
        let adapter = adapter_from_env()?;
        let info = adapter.get_info();
        let supported = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: supported.max_storage_buffer_binding_size,
            max_buffer_size: supported.max_buffer_size,
            ..wgpu::Limits::default()
        };
        let mut features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        if info.device_type == wgpu::DeviceType::Cpu {
            // A software device (lavapipe) moves foot placement's state faster as 64-bit
            // words (CrowdSolver); GPUs keep the 32-bit kernel they were measured with.
            features |= adapter.features() & wgpu::Features::SHADER_INT64;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("crowd-ik"),
            required_features: features,
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let mut context = Self::new(&device, &queue);
        context.adapter = Some(info);
        Ok(context)
    }

    /// The device.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device's limits (read once, when the context was made).
    #[must_use]
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The adapter, when the context made its own device ([`GpuContext::new_default`]).
    #[must_use]
    pub fn adapter_info(&self) -> Option<&wgpu::AdapterInfo> {
        self.adapter.as_ref()
    }

    /// Most workgroups per dispatch dimension on this device.
    #[must_use]
    pub fn max_workgroups_per_dimension(&self) -> u32 {
        self.limits.max_compute_workgroups_per_dimension
    }

    /// Bytes one storage binding may span on this device (and one buffer may hold).
    #[must_use]
    pub fn max_binding_bytes(&self) -> u64 {
        self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size)
    }

    /// `Err(GpuError::DeviceLost)` once wgpu has reported the device lost.
    pub fn check_lost(&self) -> Result<(), GpuError> {
        self.lost.check()
    }

    /// Opens validation and out-of-memory error scopes around the wgpu calls that follow;
    /// [`ErrorScopes::pop`] turns what they caught into a [`GpuError`].
    #[must_use]
    pub fn error_scopes(&self) -> ErrorScopes {
        ErrorScopes::push(&self.device)
    }

    /// A pass timer, or `None` when the device lacks `Features::TIMESTAMP_QUERY`.
    #[must_use]
    pub fn timer(&self) -> Option<GpuTimer> {
        GpuTimer::new(&self.device, &self.queue)
    }

    /// Records `record` into a new encoder and submits it, inside error scopes.
    pub fn submit(&self, label: &str, record: impl FnOnce(&mut wgpu::CommandEncoder)) -> Result<(), GpuError> {
        self.check_lost()?;
        let scope = self.error_scopes();
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        record(&mut encoder);
        self.queue.submit([encoder.finish()]);
        scope.pop()
    }
}

/// Picks an adapter honouring `WGPU_ADAPTER_NAME` (substring, case-insensitive),
/// `WGPU_BACKEND` and `WGPU_POWER_PREF`, as wgpu's examples do, but returns an error rather
/// than panicking when nothing matches.
pub fn adapter_from_env() -> Result<wgpu::Adapter, GpuError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    if let Ok(name) = std::env::var("WGPU_ADAPTER_NAME") {
        let wanted = name.to_lowercase();
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
            .ok_or_else(|| GpuError::NoAdapter(format!("none matches WGPU_ADAPTER_NAME={name:?}; found {names:?}")));
    }
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::from_env().unwrap_or(wgpu::PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
        apply_limit_buckets: false,
    }))
    .map_err(|e| GpuError::NoAdapter(e.to_string()))
}

/// Remembers that the device was lost (wgpu reports it through a callback).
#[derive(Clone)]
struct LostFlag(Arc<Mutex<Option<String>>>);

impl LostFlag {
    fn install(device: &wgpu::Device) -> Self {
        let flag = Self(Arc::new(Mutex::new(None)));
        let inner = Arc::clone(&flag.0);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut l) = inner.lock() {
                *l = Some(format!("{reason:?}: {message}"));
            }
        });
        flag
    }

    fn check(&self) -> Result<(), GpuError> {
        match self.0.lock() {
            Ok(l) => l.clone().map_or(Ok(()), |m| Err(GpuError::DeviceLost(m))),
            Err(_) => Err(GpuError::DeviceLost("device-lost flag poisoned".into())),
        }
    }
}

/// Validation and out-of-memory error scopes around a block of wgpu calls.
pub struct ErrorScopes {
    oom: wgpu::ErrorScopeGuard,
    validation: wgpu::ErrorScopeGuard,
}

impl ErrorScopes {
    /// Opens both scopes on `device`.
    #[must_use]
    pub fn push(device: &wgpu::Device) -> Self {
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        Self { oom, validation }
    }

    /// Closes both scopes: out of memory wins over a validation error.
    pub fn pop(self) -> Result<(), GpuError> {
        let validation = pollster::block_on(self.validation.pop());
        let oom = pollster::block_on(self.oom.pop());
        if let Some(e) = oom {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        if let Some(e) = validation {
            return Err(GpuError::Validation(e.to_string()));
        }
        Ok(())
    }
}

/// An optional timer on a compute pass: what each GPU object holds to time its own passes.
#[derive(Default)]
pub(crate) struct PassTimer(Option<GpuTimer>);

impl PassTimer {
    /// Turns timing on when the device can; returns whether it is on.
    pub(crate) fn enable(&mut self, context: &GpuContext) -> bool {
        if self.0.is_none() {
            self.0 = context.timer();
        }
        self.0.is_some()
    }

    /// The timestamp writes for the timed pass, when timing is on.
    pub(crate) fn writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.0.as_ref().map(GpuTimer::writes)
    }

    /// Records the resolve after the timed pass, when timing is on.
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(t) = &self.0 {
            t.resolve(encoder);
        }
    }

    /// Blocking: device time of the last submitted timed pass, in milliseconds.
    pub(crate) fn read_ms(&self, context: &GpuContext) -> Result<Option<f64>, GpuError> {
        self.0.as_ref().map(|t| t.read_ms(context.device())).transpose()
    }
}
