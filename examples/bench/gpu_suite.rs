//! `--gpu-suite`: every GPU row of the performance goals in one run, for a machine with a
//! real GPU and a few minutes on it.
//!
//! Rows: two-bone, pseudo three-bone and FABRIK 8×16 at 1 M and 4 M chains; constrained
//! FABRIK, CCD, damped least squares, look-at and the multi-effector tree; the crowd foot-IK
//! frame (stateless and with foot placement) at 10 k, 100 k and 1 M characters, Cesium Man
//! (glTF) with placement at 100 k; the skinning palette from the solved poses at each crowd
//! size; a plain storage-buffer copy kernel as the adapter's achievable bandwidth. Each row
//! gives device time (timestamp queries, min and median), the CPU cost to encode and
//! submit, the wall time GPU-resident and end to end (upload, dispatch, readback), the bytes
//! the kernel moves and the bandwidth that makes against the copy kernel's. The GPU's results
//! are compared with the CPU twin's on the same inputs first: a row whose status words differ
//! in more than 0.1 % of records is an error, not a figure. A row that fails (say, a buffer
//! over this adapter's limits) is written down with its error and the suite goes on.
//!
//! `--tiny` runs every row at a few thousand records (CI runs it on lavapipe so the suite
//! keeps working); `--budget-s` (default 200) skips the rows left once that much wall time
//! has passed.

use std::io::Write;
use std::time::Instant;

use crowd_ik::cpu::palette::{inverse_bind, palette_world};
use crowd_ik::cpu::Chain;
use crowd_ik::crowd::{CharacterInput, FootResult, JointPose};
use crowd_ik::glam::Mat4;
use crowd_ik::gpu::{CrowdSolver, GpuChain, GpuContext, GpuSolver, PaletteBuilder};
use crowd_ik::prelude::*;
use crowd_ik::wgpu;
use crowd_ik_tools::workload;

use crate::{cpu_job, status_mismatches, CrowdScene, Res};

/// Record counts of one suite.
struct Sizes {
    /// Two-bone, three-bone, FABRIK 8×16.
    chains: &'static [usize],
    /// Constrained FABRIK 8×16, CCD 8×16, look-at.
    limited: usize,
    /// Damped least squares 8×32 (reachable targets), the 20-joint tree (damped least
    /// squares on trees: a sixteenth of it).
    heavy: usize,
    /// Crowd characters (stateless, placement, palette).
    characters: &'static [usize],
    /// Cesium Man with foot placement.
    gltf: usize,
    /// Bytes copied by the bandwidth kernel (each way).
    copy_bytes: u64,
    /// Timed dispatches per row.
    runs: usize,
}

const FULL: Sizes = Sizes {
    chains: &[1 << 20, 4 << 20],
    limited: 1 << 20,
    heavy: 1 << 18,
    characters: &[10_000, 100_000, 1_000_000],
    gltf: 100_000,
    copy_bytes: 1 << 30,
    runs: 10,
};

const TINY: Sizes = Sizes {
    chains: &[4096],
    limited: 1024,
    heavy: 256,
    characters: &[256, 1024],
    gltf: 256,
    copy_bytes: 8 << 20,
    runs: 3,
};

/// One row of the suite.
#[derive(Default)]
struct SuiteRow {
    workload: String,
    records: usize,
    /// Bytes the kernel reads and writes per record.
    bytes_in: usize,
    bytes_out: usize,
    /// Device ms of each timed dispatch (empty without timestamp queries).
    device_ms: Vec<f64>,
    /// GPU-resident: wall ms from submit to completion (min), CPU µs to encode and submit (min).
    wall_ms: f64,
    submit_us: f64,
    /// Upload, dispatch and readback (min of a few), NaN where not measured.
    end_to_end_ms: f64,
    /// The CPU twin on all threads, once (the reference the GPU is checked against).
    cpu_all_ms: f64,
    /// Records whose status words (reached, error, info) differ from the CPU's; the other
    /// fields are held to the tests' tolerances, not here (palette: the max abs difference
    /// of its matrices instead).
    mismatches: usize,
    max_abs_diff: Option<f32>,
    error: Option<String>,
}

impl SuiteRow {
    fn failed(workload: &str, records: usize, error: String) -> Self {
        SuiteRow { workload: workload.into(), records, error: Some(error), ..SuiteRow::default() }
    }

    fn device_min(&self) -> Option<f64> {
        self.device_ms.iter().copied().reduce(f64::min)
    }

    fn device_median(&self) -> Option<f64> {
        let mut v = self.device_ms.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    }

    /// GB/s of bytes read and written at the best device time.
    fn bandwidth_gbs(&self) -> Option<f64> {
        let bytes = (self.bytes_in + self.bytes_out) as f64 * self.records as f64;
        self.device_min().filter(|d| *d > 0.0).map(|d| bytes / (d * 1e-3) / 1e9)
    }

    fn json(&self, copy_gbs: Option<f64>) -> String {
        // Five decimals, or five significant digits for what is smaller than 0.01 (a palette's
        // largest difference, 7.6e-6, would otherwise be written as 0.00001).
        let num = |v: Option<f64>| {
            v.filter(|v| v.is_finite()).map_or("null".into(), |v| {
                if v != 0.0 && v.abs() < 0.01 {
                    format!("{v:.4e}")
                } else {
                    format!("{v:.5}")
                }
            })
        };
        let text = |v: &Option<String>| v.as_deref().map_or("null".into(), json_string);
        format!(
            "{{\"workload\": \"{}\", \"records\": {}, \"bytes_in\": {}, \"bytes_out\": {}, \"device_ms_min\": {}, \"device_ms_median\": {}, \"ns_per_record\": {}, \"bandwidth_gbs\": {}, \"of_copy_bandwidth\": {}, \"resident_wall_ms\": {}, \"submit_us\": {}, \"end_to_end_ms\": {}, \"cpu_all_threads_ms\": {}, \"status_mismatches\": {}, \"max_abs_diff\": {}, \"error\": {}}}",
            self.workload,
            self.records,
            self.bytes_in,
            self.bytes_out,
            num(self.device_min()),
            num(self.device_median()),
            num(self.device_min().map(|d| d * 1e6 / self.records.max(1) as f64)),
            num(self.bandwidth_gbs()),
            num(self.bandwidth_gbs().zip(copy_gbs).map(|(b, c)| b / c)),
            num(Some(self.wall_ms)),
            num(Some(self.submit_us)),
            num(Some(self.end_to_end_ms)),
            num(Some(self.cpu_all_ms)),
            self.mismatches,
            num(self.max_abs_diff.map(f64::from)),
            text(&self.error),
        )
    }

    /// One line of the Markdown table.
    fn table_line(&self, copy_gbs: Option<f64>) -> String {
        let cell =
            |v: Option<f64>, digits: usize| v.filter(|v| v.is_finite()).map_or("-".into(), |v| format!("{v:.digits$}"));
        if let Some(e) = &self.error {
            return format!("| {} | {} | error: {e} |||||||||", self.workload, self.records);
        }
        format!(
            "| {} | {} | {} + {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            self.workload,
            self.records,
            self.bytes_in,
            self.bytes_out,
            cell(self.device_min(), 3),
            cell(self.device_median(), 3),
            cell(self.device_min().map(|d| d * 1e6 / self.records.max(1) as f64), 2),
            cell(self.bandwidth_gbs(), 1),
            cell(self.bandwidth_gbs().zip(copy_gbs).map(|(b, c)| 100.0 * b / c), 0),
            cell(Some(self.wall_ms), 3),
            cell(Some(self.submit_us), 1),
            cell(Some(self.end_to_end_ms), 2),
            cell(Some(self.cpu_all_ms), 2),
            match self.max_abs_diff {
                Some(d) => format!("max diff {d:.1e}"),
                None if self.cpu_all_ms.is_nan() => "-".into(),
                None => format!("{} differ", self.mismatches),
            },
        )
    }
}

/// `s` as a JSON string (quotes inside turned into apostrophes, backslashes escaped).
fn json_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "'"))
}

const TABLE_HEAD: &str = "| workload | records | bytes in + out | device ms min / median | ns per record | GB/s | % of copy | resident wall ms | submit µs | end-to-end ms | CPU all threads ms | GPU = CPU |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";

/// Runs `runs` GPU-resident frames, each `record`ed into a new encoder, submitted and
/// waited for; `device` reads the device time of the last one.
fn time_resident(
    row: &mut SuiteRow,
    context: &GpuContext,
    runs: usize,
    mut record: impl FnMut(&mut wgpu::CommandEncoder) -> Res<()>,
    mut device: impl FnMut() -> Res<Option<f64>>,
) -> Res<()> {
    let mut submit = || submit(context, &mut record);
    submit()?; // warm-up
    context.device().poll(wgpu::PollType::wait_indefinitely())?;
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let t = Instant::now();
        submit()?;
        cpu = cpu.min(t.elapsed().as_secs_f64() * 1e6);
        context.device().poll(wgpu::PollType::wait_indefinitely())?;
        wall = wall.min(t.elapsed().as_secs_f64() * 1e3);
        if let Some(ms) = device()? {
            row.device_ms.push(ms);
        }
    }
    (row.wall_ms, row.submit_us) = (wall, cpu);
    Ok(())
}

/// Records into a new encoder with `record` and submits it, as a renderer's frame does.
fn submit(context: &GpuContext, mut record: impl FnMut(&mut wgpu::CommandEncoder) -> Res<()>) -> Res<()> {
    let mut encoder = context.device().create_command_encoder(&Default::default());
    record(&mut encoder)?;
    context.queue().submit([encoder.finish()]);
    Ok(())
}

/// Min wall ms of `f` over `runs` runs.
fn min_ms(runs: usize, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(best)
}

/// A chain kind: the CPU twin on all threads, the GPU checked against it, then timed.
fn chain_row<C>(context: &GpuContext, name: &str, chains: &[C], runs: usize) -> Res<SuiteRow>
where
    C: GpuChain + Chain,
    C::Solved: Default + Clone,
{
    let n = chains.len();
    let mut row = SuiteRow {
        workload: name.into(),
        records: n,
        bytes_in: size_of::<C>(),
        bytes_out: size_of::<C::Solved>(),
        ..SuiteRow::default()
    };
    let mut cpu = vec![C::Solved::default(); n];
    row.cpu_all_ms = min_ms(1, || Ok(cpu_job(chains, &mut cpu).run_par().map(|_| ())?))?;
    let mut gpu = GpuSolver::with_context(context)?;
    gpu.enable_timestamps();
    let mut out = vec![C::Solved::default(); n];
    gpu.solve(chains, &mut out)?;
    row.mismatches = status_mismatches(&cpu, &out);
    if row.mismatches * 1000 > n {
        return Err(format!("GPU status differs from the CPU's in {} of {n} records", row.mismatches).into());
    }
    drop(cpu);
    row.end_to_end_ms = min_ms(runs.min(3), || Ok(gpu.solve(chains, &mut out)?))?;
    let encode = |encoder: &mut wgpu::CommandEncoder| {
        gpu.encode(encoder);
        Ok(())
    };
    time_resident(&mut row, context, runs, encode, || Ok(gpu.device_time_ms()?))?;
    Ok(row)
}

/// The crowd frame of `name` (crowd, placement, gltf-placement) for `n` characters, and the
/// world-space skinning palette from its solved poses (`palette`).
fn crowd_rows(context: &GpuContext, name: &str, n: usize, runs: usize, palette: bool) -> Res<Vec<SuiteRow>> {
    let scene = CrowdScene::new(n, name)?;
    let joints = scene.joints();
    let (mut out, mut res) = (vec![JointPose::default(); scene.poses.len()], vec![FootResult::default(); n]);
    let mut states = vec![CharacterState::default(); n];
    let mut row = SuiteRow {
        workload: format!("{name} ({joints} joints)"),
        records: n,
        bytes_in: size_of::<CharacterInput>() + joints * size_of::<JointPose>(),
        bytes_out: joints * size_of::<JointPose>() + size_of::<FootResult>(),
        ..SuiteRow::default()
    };
    if scene.placement {
        // The per-character state is read and written every frame: on the GPU its head and
        // the rig's legs alone (a biped's 320 bytes of 608).
        let legs = scene.rig.legs.len();
        let leg = size_of::<crowd_ik::crowd::LegState>();
        let state = size_of::<CharacterState>() - (crowd_ik::crowd::MAX_LEGS - legs) * leg;
        row.bytes_in += state;
        row.bytes_out += state;
    }
    scene.cpu_frame(true, &mut states, &mut out, &mut res, true)?;
    row.cpu_all_ms = min_ms(1, || scene.cpu_frame(false, &mut states, &mut out, &mut res, true))?;
    let cpu_res = res.clone();
    let mut gpu = CrowdSolver::with_context(context, &scene.rig, &scene.ground)?;
    gpu.enable_timestamps();
    gpu.set_frame_time(scene.dt)?;
    gpu.solve(&scene.first.0, &scene.first.1, &[], &mut out, &mut res)?;
    gpu.solve(&scene.chars, &scene.poses, &[], &mut out, &mut res)?;
    row.mismatches = status_mismatches(&cpu_res, &res);
    if row.mismatches * 1000 > n {
        return Err(format!("GPU status differs from the CPU's in {} of {n} characters", row.mismatches).into());
    }
    row.end_to_end_ms = min_ms(runs.min(3), || Ok(gpu.solve(&scene.chars, &scene.poses, &[], &mut out, &mut res)?))?;
    let encode = |encoder: &mut wgpu::CommandEncoder| {
        gpu.encode(encoder);
        Ok(())
    };
    time_resident(&mut row, context, runs, encode, || Ok(gpu.device_time_ms()?))?;
    let mut rows = vec![row];
    if palette {
        rows.push(match palette_row(context, &mut gpu, &scene, runs) {
            Ok(row) => row,
            Err(e) => SuiteRow::failed("palette", n, e.to_string()),
        });
    }
    Ok(rows)
}

/// The world-space skinning palette of the crowd's solved poses (already on the GPU),
/// checked against the CPU twin on the same poses.
fn palette_row(context: &GpuContext, gpu: &mut CrowdSolver, scene: &CrowdScene, runs: usize) -> Res<SuiteRow> {
    let (n, joints) = (scene.chars.len(), scene.joints());
    let mut row = SuiteRow {
        workload: format!("palette, world space ({joints} joints)"),
        records: n,
        bytes_in: joints * size_of::<JointPose>() + size_of::<CharacterInput>(),
        bytes_out: joints * size_of::<Mat4>(),
        ..SuiteRow::default()
    };
    // The last timed frame left its poses on the GPU; read them so the CPU twin sees the same.
    let mut poses = vec![JointPose::default(); n * joints];
    let mut results = vec![FootResult::default(); n];
    gpu.read(&mut poses, &mut results)?;
    let inverse = inverse_bind(&scene.first.1[..joints]);
    let mut builder = PaletteBuilder::with_context(context, &inverse)?;
    builder.enable_timestamps();
    let (pose_buf, chars_buf) = (
        gpu.pose_output().ok_or("no pose output")?.clone(),
        gpu.characters_buffer().ok_or("no character buffer")?.clone(),
    );
    submit(context, |encoder| {
        builder.encode_world(encoder, &pose_buf, &chars_buf, n)?;
        Ok(())
    })?;
    let mut gpu_palette = vec![Mat4::ZERO; n * joints];
    builder.read(&mut gpu_palette)?;
    let mut cpu_palette = vec![Mat4::ZERO; n * joints];
    let t = Instant::now();
    palette_world(&poses, &scene.chars, &inverse, &mut cpu_palette);
    row.cpu_all_ms = t.elapsed().as_secs_f64() * 1e3; // one thread: the twin has no parallel form
    let diff = cpu_palette
        .iter()
        .zip(&gpu_palette)
        .map(|(a, b)| (*a - *b).abs().to_cols_array().into_iter().fold(0.0_f32, f32::max))
        .fold(0.0_f32, |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) });
    row.max_abs_diff = Some(diff);
    if diff > 1e-3 {
        return Err(format!("GPU palette differs from the CPU's by {diff:e}").into());
    }
    // Both closures use the builder: encode (mutable) and read the timer.
    let builder = std::cell::RefCell::new(builder);
    let encode = |encoder: &mut wgpu::CommandEncoder| {
        builder.borrow_mut().encode_world(encoder, &pose_buf, &chars_buf, n)?;
        Ok(())
    };
    time_resident(&mut row, context, runs, encode, || Ok(builder.borrow().device_time_ms()?))?;
    row.end_to_end_ms = f64::NAN;
    Ok(row)
}

const COPY_WGSL: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 256u;
    if i < arrayLength(&dst) {
        dst[i] = src[i];
    }
}
";

/// A plain storage-buffer copy (16 bytes per invocation) of `bytes`: the bandwidth a kernel
/// on this adapter can reach through the same bindings as the solvers.
fn copy_row(context: &GpuContext, bytes: u64, runs: usize) -> Res<SuiteRow> {
    let bytes = bytes.min(context.max_binding_bytes()) / 16 * 16;
    let device = context.device();
    let scopes = context.error_scopes();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("bandwidth copy"),
        source: wgpu::ShaderSource::Wgsl(COPY_WGSL.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("bandwidth copy"),
        layout: None,
        module: &module,
        entry_point: Some("copy"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffer = |label| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (buffer("bandwidth src"), buffer("bandwidth dst"));
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("bandwidth copy"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: src.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: dst.as_entire_binding() },
        ],
    });
    scopes.pop()?;
    let timer = context.timer();
    let groups = (bytes / 16).div_ceil(256) as u32;
    let x = groups.min(context.max_workgroups_per_dimension());
    let y = groups.div_ceil(x);
    let mut row = SuiteRow {
        workload: "storage copy (bandwidth reference)".into(),
        records: (bytes / 16) as usize,
        bytes_in: 16,
        bytes_out: 16,
        end_to_end_ms: f64::NAN,
        cpu_all_ms: f64::NAN,
        ..SuiteRow::default()
    };
    time_resident(
        &mut row,
        context,
        runs,
        |encoder| {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bandwidth copy"),
                    timestamp_writes: timer.as_ref().map(|t| t.writes()),
                });
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            if let Some(t) = &timer {
                t.resolve(encoder);
            }
            Ok(())
        },
        || Ok(timer.as_ref().map(|t| t.read_ms(device)).transpose()?),
    )?;
    Ok(row)
}

/// One row of the suite to run: its name and records (for a skipped row's line) and the
/// work.
type Step<'a> = (String, usize, Box<dyn FnOnce() -> Res<Vec<SuiteRow>> + 'a>);

/// A [`chain_row`] step over the chains `make` builds (built when the step runs).
fn chain_step<'a, C>(
    context: &'a GpuContext,
    name: &'a str,
    n: usize,
    runs: usize,
    make: impl FnOnce() -> Vec<C> + 'a,
) -> Step<'a>
where
    C: GpuChain + Chain,
    C::Solved: Default + Clone,
{
    (name.into(), n, Box::new(move || Ok(vec![chain_row(context, name, &make(), runs)?])))
}

/// Two-bone, three-bone and FABRIK 8×16 at `n` chains.
fn analytic_steps(context: &GpuContext, n: usize, runs: usize) -> [Step<'_>; 3] {
    [
        chain_step(context, "two-bone", n, runs, move || workload::two_bone(n, 1)),
        chain_step(context, "three-bone", n, runs, move || workload::three_bone(n, 2)),
        chain_step(context, "fabrik 8x16", n, runs, move || workload::fabrik(n, 8, 16, 3)),
    ]
}

/// Runs the suite (`tiny`: CI's sizes) and writes `json_path`.
pub fn run(tiny: bool, json_path: &str, budget_s: f64) -> Res<()> {
    let start = Instant::now();
    let sizes = if tiny { &TINY } else { &FULL };
    let own = GpuSolver::new_default()?;
    let context = own.context().clone();
    let info = context.adapter_info().cloned().ok_or("no adapter info")?;
    let timestamps = context.timer().is_some();
    let limits = context.limits();
    println!(
        "adapter: {} ({:?}, {:?}; driver {} {}), timestamps: {timestamps}, storage binding {} MiB, buffer {} MiB; CPU: {} threads",
        info.name,
        info.device_type,
        info.backend,
        info.driver,
        info.driver_info,
        limits.max_storage_buffer_binding_size >> 20,
        limits.max_buffer_size >> 20,
        rayon::current_num_threads()
    );
    println!("{TABLE_HEAD}");
    let mut rows: Vec<SuiteRow> = Vec::new();
    let mut copy_gbs = None;
    let runs = sizes.runs;
    let mut steps: Vec<Step> = Vec::new();
    let ctx = &context;
    steps.push(("storage copy".into(), 0, Box::new(move || Ok(vec![copy_row(ctx, sizes.copy_bytes, runs)?]))));
    // The smallest chain batches first, the largest last: the rows the budget may skip.
    steps.extend(analytic_steps(ctx, sizes.chains[0], runs));
    let (l, h) = (sizes.limited, sizes.heavy);
    steps.push(chain_step(ctx, "constrained fabrik 8x16", l, runs, move || workload::limited(l, 8, 16, 3)));
    steps.push(chain_step(ctx, "ccd 8x16", l, runs, move || {
        workload::limited(l, 8, 16, 3).iter().map(|c| CcdChain::new(c.chain, c.limits)).collect()
    }));
    steps.push(chain_step(ctx, "dls reach 8x32", h, runs, move || {
        workload::limited_reachable(h, 8, 32, 3).iter().map(|c| DlsChain::new(c.chain, c.limits)).collect()
    }));
    steps.push(chain_step(ctx, "look-at 4", l, runs, move || workload::look_at(l, 5)));
    steps.push(chain_step(ctx, "tree 20x8", h, runs, move || workload::multi_fabrik(h, 8, 4)));
    let t = (h / 16).max(16);
    steps.push(chain_step(ctx, "dls upper 13", t, runs, move || workload::dls_upper_bodies(t, 32, 7)));
    steps.push(chain_step(ctx, "dls quad 20", t, runs, move || workload::dls_quadrupeds(t, 32, 8)));
    for &n in sizes.characters {
        steps.push(("crowd".into(), n, Box::new(move || crowd_rows(ctx, "crowd", n, runs, true))));
        steps.push(("placement".into(), n, Box::new(move || crowd_rows(ctx, "placement", n, runs, false))));
    }
    let g = sizes.gltf;
    steps.push(("gltf-placement".into(), g, Box::new(move || crowd_rows(ctx, "gltf-placement", g, runs, false))));
    for &n in &sizes.chains[1..] {
        steps.extend(analytic_steps(ctx, n, runs));
    }

    for (name, n, step) in steps {
        if start.elapsed().as_secs_f64() > budget_s {
            let row = SuiteRow::failed(&name, n, format!("skipped: past the {budget_s} s budget"));
            println!("{}", row.table_line(copy_gbs));
            rows.push(row);
            continue;
        }
        // A row that fails, even by a panic (a wgpu validation error outside an error scope),
        // is written down and the suite goes on.
        let new_rows = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => vec![SuiteRow::failed(&name, n, e.to_string())],
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                vec![SuiteRow::failed(&name, n, format!("panicked: {}", what.unwrap_or_default()))]
            }
        };
        for row in new_rows {
            if row.workload.starts_with("storage copy") {
                copy_gbs = row.bandwidth_gbs();
            }
            println!("{}", row.table_line(copy_gbs));
            let _ = std::io::stdout().flush();
            rows.push(row);
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    let json = format!(
        "{{\"suite\": \"{}\", \"adapter\": {}, \"device_type\": \"{:?}\", \"backend\": \"{:?}\", \"driver\": {}, \"driver_info\": {}, \"timestamps\": {timestamps}, \"max_storage_binding_bytes\": {}, \"max_buffer_bytes\": {}, \"cpu_threads\": {}, \"copy_bandwidth_gbs\": {}, \"wall_s\": {wall_s:.1}, \"rows\": [\n  {}\n]}}\n",
        if tiny { "tiny" } else { "full" },
        json_string(&info.name),
        info.device_type,
        info.backend,
        json_string(&info.driver),
        json_string(&info.driver_info),
        limits.max_storage_buffer_binding_size,
        limits.max_buffer_size,
        rayon::current_num_threads(),
        copy_gbs.map_or("null".into(), |v| format!("{v:.2}")),
        rows.iter().map(|r| r.json(copy_gbs)).collect::<Vec<_>>().join(",\n  ")
    );
    std::fs::write(json_path, json)?;
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    println!("\n{} rows, {failed} failed or skipped, {wall_s:.1} s; wrote {json_path}", rows.len());
    if failed > 0 {
        return Err(format!("{failed} of {} rows failed or were skipped", rows.len()).into());
    }
    Ok(())
}
