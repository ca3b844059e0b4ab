//! GPU plumbing (wgpu): the solver object, its persistent buffers, dispatch and readback.
//!
//! [`GpuSolver`] is built from a caller's `&wgpu::Device` and `&wgpu::Queue` (a renderer
//! passes its own) or by [`GpuSolver::new_default`], which makes its own device. Inputs are
//! uploaded into persistent storage buffers that only grow; [`GpuSolver::encode`] records all
//! dispatches of a frame into the caller's encoder (one compute pass); results stay on the GPU
//! ([`GpuSolver::outputs`]) and readback ([`GpuSolver::read`], [`GpuSolver::solve`]) is a
//! convenience for tests and tools.
//!
//! Batches larger than one storage binding (`max_storage_buffer_binding_size`, 128 MiB by
//! default) are split into segments, each its own buffer pair, bind group and dispatch;
//! within a segment a 2-D dispatch covers more than 65 535 workgroups. Both are invisible to
//! the caller except through [`GpuSolver::outputs`], which lists the segments.

pub mod crowd;
pub mod palette;
pub mod pose_source;
pub mod preview;
pub mod shaders;
pub mod timer;

use std::fmt;
use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};

use crate::cpu::Chain;
use crate::records::{FabrikChain, ThreeBoneChain, TwoBoneChain, MAX_FABRIK_JOINTS};

/// Per-dispatch parameters. Keep in sync with `DispatchParams` in `shaders/records.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct DispatchParams {
    pub count: u32,
    pub groups_x: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// Errors from the GPU path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// No adapter was found (or none matched `WGPU_ADAPTER_NAME`).
    NoAdapter(String),
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// wgpu reported a validation error.
    Validation(String),
    /// The GPU ran out of memory.
    OutOfMemory(String),
    /// The device was lost; make a new solver.
    DeviceLost(String),
    /// Reading results back failed.
    Readback(String),
    /// The batch is larger than the solver accepts.
    BatchTooLarge {
        /// Chains asked for.
        chains: usize,
        /// Most chains accepted.
        max: usize,
    },
    /// The rig, ground or frame given is invalid (see the wrapped error).
    Input(crate::IkError),
    /// The output slice does not have one entry per uploaded chain.
    LengthMismatch {
        /// Chains uploaded.
        chains: usize,
        /// Output slots given.
        outputs: usize,
    },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoAdapter(m) => write!(f, "no GPU adapter: {m}"),
            Self::RequestDevice(m) => write!(f, "could not create a GPU device: {m}"),
            Self::Validation(m) => write!(f, "wgpu validation error: {m}"),
            Self::OutOfMemory(m) => write!(f, "GPU out of memory: {m}"),
            Self::DeviceLost(m) => write!(f, "GPU device lost: {m}"),
            Self::Readback(m) => write!(f, "GPU readback failed: {m}"),
            Self::BatchTooLarge { chains, max } => write!(f, "batch of {chains} chains exceeds the maximum of {max}"),
            Self::LengthMismatch { chains, outputs } => {
                write!(f, "{chains} chains uploaded but {outputs} output slots")
            }
            Self::Input(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GpuError {}

/// Most chains of one kind per batch (indices are `u32` on the GPU).
pub const MAX_CHAINS: usize = 1 << 31;

/// The three kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `shaders/two_bone.wgsl`.
    TwoBone = 0,
    /// `shaders/three_bone.wgsl`.
    ThreeBone = 1,
    /// `shaders/fabrik.wgsl` (fixed iterations).
    Fabrik = 2,
}

impl Kind {
    /// All kinds, in dispatch order.
    pub const ALL: [Kind; 3] = [Kind::TwoBone, Kind::ThreeBone, Kind::Fabrik];

    fn name(self) -> &'static str {
        match self {
            Kind::TwoBone => "two_bone",
            Kind::ThreeBone => "three_bone",
            Kind::Fabrik => "fabrik",
        }
    }

    fn workgroup(self) -> u32 {
        match self {
            Kind::TwoBone => shaders::TWO_BONE_WORKGROUP_SIZE[0],
            Kind::ThreeBone => shaders::THREE_BONE_WORKGROUP_SIZE[0],
            Kind::Fabrik => shaders::FABRIK_WORKGROUP_SIZE[0],
        }
    }

    /// Number of kernel variants (see [`GpuChain::variant`]).
    fn variants(self) -> usize {
        match self {
            Kind::TwoBone | Kind::ThreeBone => 1,
            Kind::Fabrik => MAX_FABRIK_JOINTS + 1,
        }
    }

    /// WGSL source and entry point of variant `v`.
    fn variant_source(self, v: usize) -> (&'static str, &'static str) {
        match (self, v) {
            (Kind::TwoBone, _) => (shaders::TWO_BONE_WGSL, shaders::TWO_BONE_ENTRY),
            (Kind::ThreeBone, _) => (shaders::THREE_BONE_WGSL, shaders::THREE_BONE_ENTRY),
            // Any variant's module holds the error entry point; the smallest will do.
            (Kind::Fabrik, 0) => (shaders::FABRIK_WGSL[0].1, "fabrik_joint_count_error"),
            (Kind::Fabrik, n) => {
                let (joints, source) = shaders::FABRIK_WGSL[n - 2];
                debug_assert_eq!(joints as usize, n);
                (source, shaders::FABRIK_ENTRY)
            }
        }
    }
}

/// A chain record with a GPU kernel.
pub trait GpuChain: Chain {
    /// Its kernel.
    const KIND: Kind;

    /// The variant of the kernel that solves this chain. FABRIK is compiled once per joint
    /// count (variant `n` for `n` in `2..=MAX_FABRIK_JOINTS`, so every per-joint array is
    /// indexed by constants) plus variant 0, which writes [`crate::IkError`]'s joint-count
    /// error for any other count; the other kinds have only variant 0.
    fn variant(&self) -> usize {
        0
    }
}
impl GpuChain for TwoBoneChain {
    const KIND: Kind = Kind::TwoBone;
}
impl GpuChain for ThreeBoneChain {
    const KIND: Kind = Kind::ThreeBone;
}
impl GpuChain for FabrikChain {
    const KIND: Kind = Kind::Fabrik;

    fn variant(&self) -> usize {
        fabrik_variant(self.mode[0] as usize)
    }
}

/// The FABRIK variant of a joint count: itself where one is compiled, else 0 (the error kernel).
fn fabrik_variant(joints: usize) -> usize {
    if (2..=MAX_FABRIK_JOINTS).contains(&joints) {
        joints
    } else {
        0
    }
}

/// One segment of a kind's output on the GPU: chains `first .. first + count` of the last
/// upload, as an array of solved records (`TwoBoneSolved`, ...) at offset 0 of `buffer`.
#[derive(Clone, Copy, Debug)]
pub struct OutputSegment<'a> {
    /// Storage buffer holding the solved records (usage `STORAGE | COPY_SRC`). Bind it
    /// read-only: the kernels read each record's `status.w` (joints written) back to zero
    /// only the slots that need it, so they must be the only writers.
    pub buffer: &'a wgpu::Buffer,
    /// Index of the segment's first chain in the uploaded batch.
    pub first: usize,
    /// Chains in this segment.
    pub count: usize,
}

struct Segment {
    input: wgpu::Buffer,
    output: wgpu::Buffer,
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    staging: Option<wgpu::Buffer>,
    capacity: usize,
    count: usize,
    groups: [u32; 2],
}

struct KindState {
    /// Per variant ([`GpuChain::variant`]), built when first needed.
    pipelines: Vec<Option<wgpu::ComputePipeline>>,
    /// Bit `v`: the last upload has chains of variant `v`.
    needed: u32,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    workgroup: u32,
    in_size: u64,
    out_size: u64,
    segments: Vec<Segment>,
    count: usize,
}

/// Solves batches of chains on the GPU, keeping buffers and pipelines across frames.
pub struct GpuSolver {
    device: wgpu::Device,
    queue: wgpu::Queue,
    kinds: [KindState; 3],
    segment_bytes: u64,
    max_groups: u32,
    lost: LostFlag,
    adapter: Option<wgpu::AdapterInfo>,
    timer: Option<timer::GpuTimer>,
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

impl GpuSolver {
    /// A solver on its own device: adapter from [`adapter_from_env`], the adapter's largest
    /// buffer and binding sizes (fewer segments), timestamp queries when available.
    pub fn new_default() -> Result<Self, GpuError> {
        let adapter = adapter_from_env()?;
        let info = adapter.get_info();
        let supported = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: supported.max_storage_buffer_binding_size,
            max_buffer_size: supported.max_buffer_size,
            ..wgpu::Limits::default()
        };
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("crowd-ik"),
            required_features: features,
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let mut solver = Self::new(&device, &queue)?;
        solver.adapter = Some(info);
        Ok(solver)
    }

    /// A solver on the caller's device and queue (a renderer passes its own). Builds the
    /// two-bone and three-bone pipelines; FABRIK's, one per joint count, are built by the
    /// first upload that needs them (or ahead of time by [`GpuSolver::prepare_fabrik`]).
    /// Buffers are made on the first upload.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self, GpuError> {
        let lost = LostFlag::install(device);
        let limits = device.limits();
        let scope = ErrorScopes::push(device);
        let mut kinds = Kind::ALL.map(|kind| {
            let layout = chain_bind_group_layout(device, kind.name());
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(kind.name()),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let (in_size, out_size) = match kind {
                Kind::TwoBone => sizes::<TwoBoneChain>(),
                Kind::ThreeBone => sizes::<ThreeBoneChain>(),
                Kind::Fabrik => sizes::<FabrikChain>(),
            };
            KindState {
                pipelines: vec![None; kind.variants()],
                needed: 0,
                layout,
                pipeline_layout,
                workgroup: kind.workgroup(),
                in_size,
                out_size,
                segments: Vec::new(),
                count: 0,
            }
        });
        for kind in [Kind::TwoBone, Kind::ThreeBone] {
            build_variants(device, kind, &mut kinds[kind as usize], 1);
        }
        scope.pop()?;
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            kinds,
            segment_bytes: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            max_groups: limits.max_compute_workgroups_per_dimension,
            lost,
            adapter: None,
            timer: None,
        })
    }

    /// Builds the FABRIK pipelines of these joint counts now, so the first frame that uses
    /// them does not pay for compiling them (a shader compile can take milliseconds to
    /// seconds, depending on the driver). Counts outside `2..=MAX_FABRIK_JOINTS` build the
    /// error kernel. Uploads build what they need anyway; this only moves the cost.
    pub fn prepare_fabrik(&mut self, joint_counts: impl IntoIterator<Item = usize>) -> Result<(), GpuError> {
        self.check_lost()?;
        let mask = joint_counts.into_iter().fold(0u32, |m, n| m | 1 << fabrik_variant(n));
        let scope = ErrorScopes::push(&self.device);
        build_variants(&self.device, Kind::Fabrik, &mut self.kinds[Kind::Fabrik as usize], mask);
        scope.pop()
    }

    /// Caps the bytes of one storage segment below the device's binding limit. Meant for
    /// tests of the splitting path on small batches; must be at least one record.
    pub fn set_max_segment_bytes(&mut self, bytes: u64) {
        let limits = self.device.limits();
        self.segment_bytes = bytes.min(limits.max_storage_buffer_binding_size).min(limits.max_buffer_size);
        for k in &mut self.kinds {
            k.segments.clear();
            k.count = 0;
        }
    }

    /// Caps workgroups per dispatch dimension below the device's limit (65 535 by default),
    /// so tests can exercise the 2-D dispatch on small batches. Takes effect on the next
    /// upload.
    pub fn set_max_workgroups_per_dimension(&mut self, groups: u32) {
        self.max_groups = groups.clamp(1, self.device.limits().max_compute_workgroups_per_dimension);
    }

    /// The device the solver runs on.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue the solver submits to.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter, when the solver made its own device.
    #[must_use]
    pub fn adapter_info(&self) -> Option<&wgpu::AdapterInfo> {
        self.adapter.as_ref()
    }

    /// Chains per segment for kind `kind` on this device.
    #[must_use]
    pub fn chains_per_segment(&self, kind: Kind) -> usize {
        let k = &self.kinds[kind as usize];
        (self.segment_bytes / k.in_size.max(k.out_size)) as usize
    }

    /// Uploads this frame's chains of one kind (replacing the previous upload of that kind).
    /// Buffers are reused; they are re-created only when the batch outgrows them. An empty
    /// slice is valid and makes that kind's dispatch a no-op.
    pub fn upload<C: GpuChain>(&mut self, chains: &[C]) -> Result<(), GpuError> {
        self.check_lost()?;
        if chains.len() > MAX_CHAINS {
            return Err(GpuError::BatchTooLarge { chains: chains.len(), max: MAX_CHAINS });
        }
        let per_segment = self.chains_per_segment(C::KIND);
        if per_segment == 0 {
            return Err(GpuError::BatchTooLarge { chains: chains.len(), max: 0 });
        }
        let scope = ErrorScopes::push(&self.device);
        let max_groups = self.max_groups;
        let device = &self.device;
        let queue = &self.queue;
        let k = &mut self.kinds[C::KIND as usize];
        k.needed = chains.iter().fold(0, |m, c| m | 1 << c.variant());
        build_variants(device, C::KIND, k, k.needed);
        let needed = chains.len().div_ceil(per_segment);
        for (s, part) in chains.chunks(per_segment).enumerate() {
            let fits = k.segments.get(s).is_some_and(|seg| seg.capacity >= part.len());
            if !fits {
                // Full segments get exactly their size; the last one rounds up so a growing
                // batch does not re-create it every frame.
                let capacity = part.len().next_power_of_two().max(256).min(per_segment);
                let seg = make_segment(device, k, C::KIND, capacity);
                if s < k.segments.len() {
                    k.segments[s] = seg;
                } else {
                    k.segments.push(seg);
                }
            }
            let seg = &mut k.segments[s];
            seg.count = part.len();
            seg.groups = dispatch_size(part.len(), k.workgroup, max_groups);
            queue.write_buffer(&seg.input, 0, bytemuck::cast_slice(part));
            let params = DispatchParams { count: part.len() as u32, groups_x: seg.groups[0], pad0: 0, pad1: 0 };
            queue.write_buffer(&seg.params, 0, bytemuck::bytes_of(&params));
        }
        for seg in k.segments.iter_mut().skip(needed) {
            seg.count = 0;
        }
        k.count = chains.len();
        scope.pop()
    }

    /// Records the dispatches of every uploaded kind into `encoder`: one compute pass, one
    /// dispatch per kind and storage segment (one per kind unless a batch exceeds a storage
    /// binding). No readback, no submit: results stay in [`GpuSolver::outputs`].
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_kinds(encoder, &Kind::ALL);
    }

    fn encode_kinds(&self, encoder: &mut wgpu::CommandEncoder, kinds: &[Kind]) {
        {
            let timestamp_writes = self.timer.as_ref().map(timer::GpuTimer::writes);
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("crowd-ik"), timestamp_writes });
            for &kind in kinds {
                let k = &self.kinds[kind as usize];
                // One dispatch per variant present (FABRIK: per joint count; each skips the
                // chains of the others) and storage segment.
                let present = k.pipelines.iter().enumerate().filter(|(v, _)| k.needed & 1 << v != 0);
                for pipeline in present.filter_map(|(_, p)| p.as_ref()) {
                    pass.set_pipeline(pipeline);
                    for seg in k.segments.iter().filter(|s| s.count > 0) {
                        pass.set_bind_group(0, &seg.bind_group, &[]);
                        pass.dispatch_workgroups(seg.groups[0], seg.groups[1], 1);
                    }
                }
            }
        }
        if let Some(t) = &self.timer {
            t.resolve(encoder);
        }
    }

    /// Times every encoded compute pass with timestamp queries from now on, when the device
    /// has `Features::TIMESTAMP_QUERY` ([`GpuSolver::new_default`] asks for it). Returns
    /// whether timing is on. Read the time with [`GpuSolver::device_time_ms`].
    pub fn enable_timestamps(&mut self) -> bool {
        if self.timer.is_none() {
            self.timer = timer::GpuTimer::new(&self.device, &self.queue);
        }
        self.timer.is_some()
    }

    /// Blocking: device time of the last submitted pass, in milliseconds, when timing is on.
    pub fn device_time_ms(&self) -> Result<Option<f64>, GpuError> {
        self.timer.as_ref().map(|t| t.read_ms(&self.device)).transpose()
    }

    /// The GPU output of the last upload of a kind, segment by segment, for binding in the
    /// caller's own passes.
    pub fn outputs(&self, kind: Kind) -> impl Iterator<Item = OutputSegment<'_>> {
        let k = &self.kinds[kind as usize];
        let mut first = 0;
        k.segments.iter().take_while(|s| s.count > 0).map(move |s| {
            let seg = OutputSegment { buffer: &s.output, first, count: s.count };
            first += s.count;
            seg
        })
    }

    /// Number of chains of a kind in the last upload.
    #[must_use]
    pub fn uploaded(&self, kind: Kind) -> usize {
        self.kinds[kind as usize].count
    }

    /// Blocking: reads back the solved records of one kind (after an `encode` + submit of
    /// the caller's, or after [`GpuSolver::dispatch`]).
    pub fn read<C: GpuChain>(&mut self, out: &mut [C::Solved]) -> Result<(), GpuError> {
        self.check_lost()?;
        let k = &self.kinds[C::KIND as usize];
        if out.len() != k.count {
            return Err(GpuError::LengthMismatch { chains: k.count, outputs: out.len() });
        }
        if out.is_empty() {
            return Ok(());
        }
        let scope = ErrorScopes::push(&self.device);
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("crowd-ik readback") });
        let out_size = k.out_size;
        let device = &self.device;
        let k = &mut self.kinds[C::KIND as usize];
        for seg in k.segments.iter_mut().filter(|s| s.count > 0) {
            let bytes = seg.count as u64 * out_size;
            if seg.staging.as_ref().is_none_or(|b| b.size() < bytes) {
                seg.staging = Some(staging_buffer(device, seg.capacity as u64 * out_size));
            }
            encoder.copy_buffer_to_buffer(&seg.output, 0, seg.staging.as_ref().expect("just made"), 0, bytes);
        }
        self.queue.submit([encoder.finish()]);
        scope.pop()?;
        let mut first = 0;
        for seg in k.segments.iter().filter(|s| s.count > 0) {
            let staging = seg.staging.as_ref().expect("made above");
            map_read(&self.device, staging, bytemuck::cast_slice_mut(&mut out[first..first + seg.count]))?;
            first += seg.count;
        }
        self.check_lost()
    }

    /// Encodes the dispatches of the given kinds into a new encoder and submits it.
    pub fn dispatch(&self, kinds: &[Kind]) -> Result<(), GpuError> {
        self.check_lost()?;
        let scope = ErrorScopes::push(&self.device);
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("crowd-ik") });
        self.encode_kinds(&mut encoder, kinds);
        self.queue.submit([encoder.finish()]);
        scope.pop()
    }

    /// Blocking convenience for tests and tools: uploads `chains`, dispatches their kernel,
    /// reads the results back into `out` (`out.len() == chains.len()`).
    pub fn solve<C: GpuChain>(&mut self, chains: &[C], out: &mut [C::Solved]) -> Result<(), GpuError> {
        if out.len() != chains.len() {
            return Err(GpuError::LengthMismatch { chains: chains.len(), outputs: out.len() });
        }
        self.upload(chains)?;
        self.dispatch(&[C::KIND])?;
        self.read::<C>(out)
    }

    fn check_lost(&self) -> Result<(), GpuError> {
        self.lost.check()
    }
}

/// A compute pipeline from WGSL, its bind-group layout reflected from the shader (group 0):
/// bindings are written once, in the shader.
pub(crate) fn compute_pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry: &str,
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
        compilation_options: Default::default(),
        cache: None,
    });
    let layout = pipeline.get_bind_group_layout(0);
    (pipeline, layout)
}

/// The bind-group layout every chain kernel declares: chains (read-only storage), solved
/// records (read-write storage), dispatch parameters (uniform). Explicit rather than
/// reflected because FABRIK's variants share one bind group per segment.
fn chain_bind_group_layout(device: &wgpu::Device, label: &str) -> wgpu::BindGroupLayout {
    let entry =
        |binding, ty| wgpu::BindGroupLayoutEntry { binding, visibility: wgpu::ShaderStages::COMPUTE, ty, count: None };
    let storage = |read_only| wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only },
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    let uniform = wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[entry(0, storage(true)), entry(1, storage(false)), entry(2, uniform)],
    })
}

/// Builds the pipelines of `kind`'s variants in `mask` (bit `v`: variant `v`) not built yet.
fn build_variants(device: &wgpu::Device, kind: Kind, k: &mut KindState, mask: u32) {
    for (v, slot) in k.pipelines.iter_mut().enumerate() {
        if mask & 1 << v == 0 || slot.is_some() {
            continue;
        }
        let (source, entry) = kind.variant_source(v);
        let label = format!("{} variant {v}", kind.name());
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        *slot = Some(device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&k.pipeline_layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        }));
    }
}

/// A `UNIFORM | COPY_DST` buffer of `size` bytes.
pub(crate) fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Workgroups `[x, y]` of a 2-D dispatch covering `count` invocations: `x` at most `max`.
pub(crate) fn dispatch_size(count: usize, workgroup: u32, max: u32) -> [u32; 2] {
    let groups = (count as u32).div_ceil(workgroup);
    let x = groups.min(max).max(1);
    [x, groups.div_ceil(x)]
}

/// Remembers that the device was lost (wgpu reports it through a callback).
#[derive(Clone)]
pub(crate) struct LostFlag(Arc<Mutex<Option<String>>>);

impl LostFlag {
    pub(crate) fn install(device: &wgpu::Device) -> Self {
        let flag = Self(Arc::new(Mutex::new(None)));
        let inner = Arc::clone(&flag.0);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut l) = inner.lock() {
                *l = Some(format!("{reason:?}: {message}"));
            }
        });
        flag
    }

    pub(crate) fn check(&self) -> Result<(), GpuError> {
        match self.0.lock() {
            Ok(l) => l.clone().map_or(Ok(()), |m| Err(GpuError::DeviceLost(m))),
            Err(_) => Err(GpuError::DeviceLost("device-lost flag poisoned".into())),
        }
    }
}

/// Blocking: maps the first `dst.len()` bytes of `staging` (already copied to and submitted)
/// and copies them into `dst`.
pub(crate) fn map_read(device: &wgpu::Device, staging: &wgpu::Buffer, dst: &mut [u8]) -> Result<(), GpuError> {
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
pub(crate) fn staging_buffer(device: &wgpu::Device, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd-ik staging"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn sizes<C: Chain>() -> (u64, u64) {
    (std::mem::size_of::<C>() as u64, std::mem::size_of::<C::Solved>() as u64)
}

fn make_segment(device: &wgpu::Device, k: &KindState, kind: Kind, capacity: usize) -> Segment {
    let name = kind.name();
    let input = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(name),
        size: capacity as u64 * k.in_size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(name),
        size: capacity as u64 * k.out_size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let params = uniform_buffer(device, name, std::mem::size_of::<DispatchParams>() as u64);
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(name),
        layout: &k.layout,
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: params.as_entire_binding() },
        ],
    });
    Segment { input, output, params, bind_group, staging: None, capacity, count: 0, groups: [0, 0] }
}

/// Validation and out-of-memory error scopes around a block of wgpu calls.
pub(crate) struct ErrorScopes {
    oom: wgpu::ErrorScopeGuard,
    validation: wgpu::ErrorScopeGuard,
}

impl ErrorScopes {
    pub(crate) fn push(device: &wgpu::Device) -> Self {
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        Self { oom, validation }
    }

    pub(crate) fn pop(self) -> Result<(), GpuError> {
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
