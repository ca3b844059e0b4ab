//! [`GpuSolver`]: the chain kernels (every [`Kind`]) on the GPU, their
//! persistent buffers, dispatch and readback.
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

use crate::records::ChainRecord;
use crate::records::{
    CcdChain, ConstrainedFabrikChain, DlsChain, DlsTree, FabrikChain, LookAtChain, MultiFabrikChain, ThreeBoneChain,
    TwoBoneChain,
};

use super::buffers::{dispatch_size, map_read, staging_buffer, uniform_buffer, DispatchParams};
use super::context::{GpuContext, PassTimer};
use super::error::GpuError;
use super::kinds::{GpuChain, Kind, OutputSegment};

/// Most chains of one kind per batch (indices are `u32` on the GPU).
pub const MAX_CHAINS: usize = 1 << 31;

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
    needed: u64,
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
    context: GpuContext,
    kinds: [KindState; Kind::ALL.len()],
    segment_bytes: u64,
    max_groups: u32,
    timer: PassTimer,
}

impl GpuSolver {
    /// A solver on its own device ([`GpuContext::new_default`]: adapter from
    /// [`super::adapter_from_env`], the adapter's largest buffer and binding sizes, timestamp
    /// queries when available).
    pub fn new_default() -> Result<Self, GpuError> {
        Self::with_context(&GpuContext::new_default()?)
    }

    /// A solver on the caller's device and queue (a renderer passes its own). Same as
    /// [`GpuSolver::with_context`] on a new [`GpuContext`]; prefer that one when several of
    /// the crate's GPU objects share a device.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self, GpuError> {
        Self::with_context(&GpuContext::new(device, queue))
    }

    /// A solver on a shared context. Builds the two-bone and three-bone pipelines; FABRIK's,
    /// one per joint count, are built by the first upload that needs them (or ahead of time
    /// by [`GpuSolver::prepare`]). Buffers are made on the first upload.
    pub fn with_context(context: &GpuContext) -> Result<Self, GpuError> {
        let device = context.device();
        let scope = context.error_scopes();
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
                Kind::ConstrainedFabrik => sizes::<ConstrainedFabrikChain>(),
                Kind::Ccd => sizes::<CcdChain>(),
                Kind::LookAt => sizes::<LookAtChain>(),
                Kind::MultiFabrik => sizes::<MultiFabrikChain>(),
                Kind::Dls => sizes::<DlsChain>(),
                Kind::DlsTree => sizes::<DlsTree>(),
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
            context: context.clone(),
            kinds,
            segment_bytes: context.max_binding_bytes(),
            max_groups: context.max_workgroups_per_dimension(),
            timer: PassTimer::default(),
        })
    }

    /// Builds the FABRIK pipelines of these joint counts now, so the first frame that uses
    /// them does not pay for compiling them (a shader compile can take milliseconds to
    /// seconds, depending on the driver). Counts outside `2..=MAX_FABRIK_JOINTS` build the
    /// error kernel. Uploads build what they need anyway; this only moves the cost.
    /// Same as [`GpuSolver::prepare`]`(Kind::Fabrik, joint_counts)`.
    pub fn prepare_fabrik(&mut self, joint_counts: impl IntoIterator<Item = usize>) -> Result<(), GpuError> {
        self.prepare(Kind::Fabrik, joint_counts)
    }

    /// Builds the pipelines of `kind` now (at load time), so no frame pays for compiling
    /// them: for the kinds built per joint count (FABRIK, constrained FABRIK, CCD) the
    /// variants of these joint counts (a count outside `2..=MAX_FABRIK_JOINTS` builds the
    /// error kernel), for the others their pipelines (`joint_counts` is ignored). The
    /// limited kernels' variants take seconds each to compile on lavapipe. Chains with
    /// `option::ALIGN_HINGES` (constrained FABRIK) or `option::ROOT_FIRST` (CCD) have
    /// pipelines of their own: [`GpuSolver::prepare_with_options`].
    pub fn prepare(&mut self, kind: Kind, joint_counts: impl IntoIterator<Item = usize>) -> Result<(), GpuError> {
        self.prepare_with_options(kind, joint_counts, 0)
    }

    /// [`GpuSolver::prepare`] for chains whose option bits (`mode[2]`) are `options`:
    /// constrained FABRIK builds its `option::ALIGN_HINGES` variants when that bit is set,
    /// CCD its `option::ROOT_FIRST` ones (each option's code lives only in the pipelines of
    /// the chains that ask for it); other bits and kinds change nothing.
    pub fn prepare_with_options(
        &mut self,
        kind: Kind,
        joint_counts: impl IntoIterator<Item = usize>,
        options: u32,
    ) -> Result<(), GpuError> {
        self.context.check_lost()?;
        let mask = if kind.built_per_joint_count() {
            joint_counts.into_iter().fold(0u64, |m, n| m | 1 << kind.variant_of(n, options))
        } else {
            (1u64 << kind.variants()) - 1
        };
        let scope = self.context.error_scopes();
        build_variants(self.context.device(), kind, &mut self.kinds[kind as usize], mask);
        scope.pop()
    }

    /// The variants of `kind` whose pipelines are built: joint counts for the kinds built
    /// per joint count (0 = the error kernel; the pipelines of constrained FABRIK's chains
    /// with `option::ALIGN_HINGES` and of CCD's with `option::ROOT_FIRST` are their joint
    /// count plus `MAX_FABRIK_JOINTS + 1`), `[0]` for the others once built.
    #[must_use]
    pub fn prepared(&self, kind: Kind) -> Vec<usize> {
        let k = &self.kinds[kind as usize];
        (0..k.pipelines.len()).filter(|&v| k.pipelines[v].is_some()).collect()
    }

    /// Caps the bytes of one storage segment below the device's binding limit. Meant for
    /// tests of the splitting path on small batches; must be at least one record.
    pub fn set_max_segment_bytes(&mut self, bytes: u64) {
        self.segment_bytes = bytes.min(self.context.max_binding_bytes());
        for k in &mut self.kinds {
            k.segments.clear();
            k.count = 0;
        }
    }

    /// Caps workgroups per dispatch dimension below the device's limit (65 535 by default),
    /// so tests can exercise the 2-D dispatch on small batches. Takes effect on the next
    /// upload.
    pub fn set_max_workgroups_per_dimension(&mut self, groups: u32) {
        self.max_groups = groups.clamp(1, self.context.max_workgroups_per_dimension());
    }

    /// The context (device, queue) the solver runs on.
    #[must_use]
    pub fn context(&self) -> &GpuContext {
        &self.context
    }

    /// The device the solver runs on.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        self.context.device()
    }

    /// The queue the solver submits to.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        self.context.queue()
    }

    /// The adapter, when the solver made its own device.
    #[must_use]
    pub fn adapter_info(&self) -> Option<&wgpu::AdapterInfo> {
        self.context.adapter_info()
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
        self.context.check_lost()?;
        if chains.len() > MAX_CHAINS {
            return Err(GpuError::BatchTooLarge { chains: chains.len(), max: MAX_CHAINS });
        }
        let per_segment = self.chains_per_segment(C::KIND);
        if per_segment == 0 {
            return Err(GpuError::BatchTooLarge { chains: chains.len(), max: 0 });
        }
        let scope = self.context.error_scopes();
        let max_groups = self.max_groups;
        let device = self.context.device();
        let queue = self.context.queue();
        let k = &mut self.kinds[C::KIND as usize];
        k.needed = chains.iter().fold(0u64, |m, c| m | 1 << c.variant());
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
            let params = DispatchParams::new(part.len(), seg.groups);
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
            let timestamp_writes = self.timer.writes();
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
        self.timer.resolve(encoder);
    }

    /// Times every encoded compute pass with timestamp queries from now on, when the device
    /// has `Features::TIMESTAMP_QUERY` ([`GpuSolver::new_default`] asks for it). Returns
    /// whether timing is on. Read the time with [`GpuSolver::device_time_ms`].
    pub fn enable_timestamps(&mut self) -> bool {
        self.timer.enable(&self.context)
    }

    /// Blocking: device time of the last submitted pass, in milliseconds, when timing is on.
    pub fn device_time_ms(&self) -> Result<Option<f64>, GpuError> {
        self.timer.read_ms(&self.context)
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
        self.context.check_lost()?;
        let k = &self.kinds[C::KIND as usize];
        if out.len() != k.count {
            return Err(GpuError::LengthMismatch { chains: k.count, outputs: out.len() });
        }
        if out.is_empty() {
            return Ok(());
        }
        let scope = self.context.error_scopes();
        let device = self.context.device();
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("crowd-ik readback") });
        let out_size = k.out_size;
        let k = &mut self.kinds[C::KIND as usize];
        for seg in k.segments.iter_mut().filter(|s| s.count > 0) {
            let bytes = seg.count as u64 * out_size;
            if seg.staging.as_ref().is_none_or(|b| b.size() < bytes) {
                seg.staging = Some(staging_buffer(device, seg.capacity as u64 * out_size));
            }
            encoder.copy_buffer_to_buffer(&seg.output, 0, seg.staging.as_ref().expect("just made"), 0, bytes);
        }
        self.context.queue().submit([encoder.finish()]);
        scope.pop()?;
        let mut first = 0;
        for seg in k.segments.iter().filter(|s| s.count > 0) {
            let staging = seg.staging.as_ref().expect("made above");
            map_read(self.context.device(), staging, bytemuck::cast_slice_mut(&mut out[first..first + seg.count]))?;
            first += seg.count;
        }
        self.context.check_lost()
    }

    /// Encodes the dispatches of the given kinds into a new encoder and submits it.
    pub fn dispatch(&self, kinds: &[Kind]) -> Result<(), GpuError> {
        self.context.submit("crowd-ik", |encoder| self.encode_kinds(encoder, kinds))
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
fn build_variants(device: &wgpu::Device, kind: Kind, k: &mut KindState, mask: u64) {
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
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: kind.variant_constants(v),
                ..Default::default()
            },
            cache: None,
        }));
    }
}

fn sizes<C: ChainRecord>() -> (u64, u64) {
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
