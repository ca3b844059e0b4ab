//! CPU against GPU against the peer, side by side, on the same inputs.
//!
//! `cargo run --release --example bench -- [--quick] [--sizes 1k,4k,16k,64k,256k,1m,4m]
//!     [--workloads two,three,fabrik4x8,fabrik4x16,fabrik8x8,fabrik8x16,limited8x16,ccd8x16,dls8x32,dlsreach8x32,arm,tree20x8,lookat,mixed,crowd,placement,gltf,gltf-placement]
//!     (limited, aligned, ccd and dls take `reach` after the kind: targets the limits let the chains reach)
//!     [--cpu-path auto|scalar|avx2|avx512] [--cpu-only] [--json bench.json]`
//! `cargo run --release --example bench -- --gpu-suite [--tiny] [--budget-s 200] [--json gpu-suite.json]`
//!
//! Prints one table and writes `bench.json`. `--help` prints the flags. Every workload has ~10 % unreachable or
//! near-singular targets (`crowd_ik_tools::workload`). Times are the best of several runs.

use std::time::Instant;

use std::sync::OnceLock;

use crowd_ik::cpu::{BatchJob, Chain, CpuPath, FabrikMode};
use crowd_ik::crowd::{CharacterInput, FootResult, Ground, JointPose};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::{GpuChain, GpuSolver, Kind};
use crowd_ik::prelude::*;
use crowd_ik::wgpu;
use crowd_ik_tools::scene::WalkingCrowd;
use crowd_ik_tools::workload;

mod gpu_suite;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const HELP: &str = "\
CPU against GPU against the peer (rebirth-ik), side by side, on the same inputs.

usage: cargo run --release --example bench -- [flags]

  --quick              sizes 1k,16k,64k (default 1k,4k,16k,64k,256k,1m)
  --sizes LIST         chain counts, e.g. 1k,64k,1m,4m
  --workloads LIST     any of two,three,fabrik4x8,fabrik4x16,fabrik8x8,fabrik8x16,limited8x16,ccd8x16,dls8x32,dlsreach8x32,arm,upper,quadruped,tree20x8,lookat,mixed,crowd,placement,
                       gltf,gltf-placement
                       (fabrikJxK: J joints, K iterations; limitedJxK: constrained FABRIK
                       (alignedJxK: with option::ALIGN_HINGES) and
                       ccdJxK: CCD, both with joint limits on every joint; tree20xK:
                       multi-effector FABRIK on a 20-joint quadruped with 4 hooves; arm: damped
                       least squares on 7-degree-of-freedom arms with hand position and
                       orientation targets, and k's Jacobian solver beside it; upper,
                       quadruped: damped least squares on a 13-joint upper body (hands and head
                       with orientations) and a 20-joint quadruped (four hooves, a pelvis that
                       moves), limits on every joint, targets the limits allow;
                       lookat:
                       neck, head and eyes with limits and an up target; crowd/placement: the
                       box-rig walkers over hills, gltf/gltf-placement: the same with Cesium
                       Man, a glTF character (tests/data/gltf); default all)
  --cpu-path PATH      auto|scalar|avx2|avx512: the CPU batch path of every CPU column
  --cpu-only           CPU columns and the peer only; no GPU adapter is opened
  --json FILE          where to write the rows (default bench.json)
  --gpu-suite          every GPU row of the performance goals instead (two-bone, three-bone
                       and FABRIK 8x16 at 1M and 4M chains, the limited solvers, look-at, the
                       tree, crowd foot IK and foot placement at 10k/100k/1M characters, the
                       skinning palette, a copy kernel for the adapter's bandwidth); writes
                       gpu-suite.json (or --json FILE) and a Markdown table
  --tiny               with --gpu-suite: a few thousand records per row (CI, lavapipe)
  --budget-s S         with --gpu-suite: skip the rows left after S seconds (default 200)
  --help               this text

Every workload has ~10 % unreachable or near-singular targets. Times are the best of several
runs. GPU results are compared with the CPU's before any GPU time is printed.
";

/// The instruction set of every CPU chain column (`--cpu-path`; default: the best this CPU has).
static CPU_PATH: OnceLock<CpuPath> = OnceLock::new();

/// A CPU batch job on the chosen path.
fn cpu_job<'a, C: Chain>(chains: &'a [C], out: &'a mut [C::Solved]) -> BatchJob<'a, C> {
    BatchJob::new(chains, out).with_path(*CPU_PATH.get().unwrap_or(&CpuPath::Auto))
}

/// Best time in ms of `f` over runs adding up to ~0.3 s (at least 2, at most 20).
fn best(mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    f()?; // warm-up
    let (mut best, mut total) = (f64::INFINITY, 0.0);
    for i in 0..20 {
        let t = Instant::now();
        f()?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        best = best.min(ms);
        total += ms;
        if i >= 1 && total > 300.0 {
            break;
        }
    }
    Ok(best)
}

#[derive(Default, Clone)]
struct Row {
    workload: String,
    n: usize,
    cpu1: f64,
    cpu_all: f64,
    gpu_device: Option<f64>,
    gpu_e2e: f64,
    gpu_submit_us: f64,
    gpu_resident: f64,
    peer: Option<(String, f64, f32)>,
}

impl Row {
    fn json(&self) -> String {
        let opt = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or("null".into(), |v| format!("{v:.4}"));
        let peer = self.peer.as_ref().map_or("null".into(), |(name, ms, diff)| {
            let diff = if diff.is_finite() { format!("{diff:e}") } else { "null".into() };
            format!("{{\"name\": \"{name}\", \"ms\": {ms:.4}, \"max_diff\": {diff}}}")
        });
        format!(
            "{{\"workload\": \"{}\", \"chains\": {}, \"cpu_one_thread_ms\": {:.4}, \"cpu_all_threads_ms\": {:.4}, \"gpu_device_ms\": {}, \"gpu_end_to_end_ms\": {}, \"gpu_resident_submit_us\": {}, \"gpu_resident_wall_ms\": {}, \"peer\": {}}}",
            self.workload, self.n, self.cpu1, self.cpu_all, opt(self.gpu_device), opt(Some(self.gpu_e2e)), opt(Some(self.gpu_submit_us)), opt(Some(self.gpu_resident)), peer
        )
    }
}

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim().to_lowercase();
    let (num, mul) = if let Some(n) = s.strip_suffix('k') {
        (n, 1024)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 1024 * 1024)
    } else {
        (&s[..], 1)
    };
    num.parse::<usize>().ok().map(|n| n * mul)
}

/// Chains whose status words (the last 16 bytes of a solved record or `FootResult`:
/// reached, error, info, joints written / per-foot bits) differ between CPU and GPU.
fn status_mismatches<S: bytemuck::Pod>(cpu: &[S], gpu: &[S]) -> usize {
    let tail = |s: &S| -> [u8; 16] { bytemuck::bytes_of(s)[size_of::<S>() - 16..].try_into().expect("16 bytes") };
    cpu.iter().zip(gpu).filter(|(c, g)| tail(c) != tail(g)).count()
}

/// Refuses to report the timing of a GPU kernel whose results are not the CPU's: the tests
/// hold every status word identical; a benchmark workload allows a handful of `reached`
/// flips at the precision boundary (printed), a broken kernel fails the run.
fn check_gpu<S: bytemuck::Pod>(what: &str, cpu: &[S], gpu: &[S]) -> Res<()> {
    let bad = status_mismatches(cpu, gpu);
    if bad * 1000 > cpu.len() {
        return Err(format!("{what}: GPU status differs from the CPU's in {bad} of {} chains", cpu.len()).into());
    }
    if bad > 0 {
        eprintln!("  note: {what}: GPU status differs from the CPU's in {bad} of {} chains", cpu.len());
    }
    Ok(())
}

impl Row {
    /// A row with the CPU columns only (`--cpu-only`).
    fn cpu_only(workload: &str, n: usize, cpu1: f64, cpu_all: f64) -> Self {
        let nan = f64::NAN;
        Row {
            workload: workload.into(),
            n,
            cpu1,
            cpu_all,
            gpu_e2e: nan,
            gpu_submit_us: nan,
            gpu_resident: nan,
            ..Row::default()
        }
    }
}

/// CPU and GPU timings of one kind of chain.
fn chains<C>(name: &str, gpu: Option<&mut GpuSolver>, chains: &[C]) -> Res<Row>
where
    C: GpuChain + Chain,
    C::Solved: Default + Clone,
{
    let n = chains.len();
    let mut out = vec![C::Solved::default(); n];
    let cpu1 = best(|| Ok(cpu_job::<C>(chains, &mut out).run().map(|_| ())?))?;
    let cpu_all = best(|| Ok(cpu_job::<C>(chains, &mut out).run_par().map(|_| ())?))?;
    let Some(gpu) = gpu else { return Ok(Row::cpu_only(name, n, cpu1, cpu_all)) };
    let cpu_out = out.clone();
    let gpu_e2e = best(|| Ok(gpu.solve(chains, &mut out)?))?;
    check_gpu(name, &cpu_out, &out)?;
    let (submit, resident, device) = resident(gpu, &[C::KIND])?;
    Ok(Row {
        workload: name.into(),
        n,
        cpu1,
        cpu_all,
        gpu_device: device,
        gpu_e2e,
        gpu_submit_us: submit,
        gpu_resident: resident,
        peer: None,
    })
}

/// Inputs already on the GPU: CPU µs to encode and submit, wall ms to completion, device ms.
fn resident(gpu: &mut GpuSolver, kinds: &[Kind]) -> Res<(f64, f64, Option<f64>)> {
    let mut submit = f64::INFINITY;
    let wall = best(|| {
        let t = Instant::now();
        gpu.dispatch(kinds)?;
        submit = submit.min(t.elapsed().as_secs_f64() * 1e6);
        gpu.device().poll(wgpu::PollType::wait_indefinitely())?;
        Ok(())
    })?;
    Ok((submit, wall, gpu.device_time_ms()?))
}

fn to_rebirth(v: crowd_ik::glam::Vec3) -> rebirth_ik::Vec3 {
    rebirth_ik::Vec3 { x: v.x, y: v.y, z: v.z }
}

fn from_rebirth(v: rebirth_ik::Vec3) -> crowd_ik::glam::Vec3 {
    crowd_ik::glam::Vec3::new(v.x, v.y, v.z)
}

/// Knee and end of a two-bone limb in f64 (law of cosines, knee toward `pole`), the
/// reference both libraries are measured against.
fn reference_two_bone(
    p0: crowd_ik::glam::Vec3,
    p1: crowd_ik::glam::Vec3,
    p2: crowd_ik::glam::Vec3,
    target: crowd_ik::glam::Vec3,
    pole: crowd_ik::glam::Vec3,
) -> (crowd_ik::glam::DVec3, crowd_ik::glam::DVec3) {
    let (p0, p1, p2, t, pole) = (p0.as_dvec3(), p1.as_dvec3(), p2.as_dvec3(), target.as_dvec3(), pole.as_dvec3());
    let (a, b) = (p0.distance(p1), p1.distance(p2));
    let c_raw = p0.distance(t);
    let d = (t - p0) / c_raw;
    let c = c_raw.clamp((a - b).abs(), a + b);
    let m = (a * a + c * c - b * b) / (2.0 * c);
    let r = (a * a - m * m).max(0.0).sqrt();
    let side = (pole - p0) - d * (pole - p0).dot(d);
    let knee = p0 + d * m + side.normalize() * r;
    (knee, p0 + d * c)
}

/// rebirth-ik's `two_bone` on the same legs (no knee limits, pole as a point: its features).
/// Returns our time (full records), ours writing the local corrections alone
/// (`TwoBoneCorrectionsJob`), theirs, and each one's worst position error against the f64
/// reference.
fn peer_two_bone(n: usize) -> Res<(f64, f64, f64, f32, f32)> {
    let legs: Vec<TwoBoneChain> = workload::two_bone(n, 1)
        .into_iter()
        .map(|mut c| {
            c.limb.mode[2] &= !option::KNEE_LIMITS;
            let pole = c.joint(0) + crowd_ik::glam::Vec3::from_slice(&c.limb.pole_ms[..3]);
            c.with_pole_position(pole)
        })
        .collect();
    let mut ours = vec![TwoBoneSolved::default(); n];
    let ours_ms = best(|| Ok(cpu_job(&legs, &mut ours).run().map(|_| ())?))?;
    let mut corrections = vec![TwoBoneCorrections::default(); n];
    let path = *CPU_PATH.get().unwrap_or(&CpuPath::Auto);
    let corrections_ms = best(|| {
        Ok(crowd_ik::cpu::TwoBoneCorrectionsJob::new(&legs, &mut corrections).with_path(path).run().map(|_| ())?)
    })?;
    let mut theirs = vec![(rebirth_ik::Vec3::ZERO, rebirth_ik::Vec3::ZERO); n];
    let peer_ms = best(|| {
        for (c, out) in legs.iter().zip(&mut theirs) {
            *out = rebirth_ik::two_bone(
                to_rebirth(c.joint(0)),
                to_rebirth(c.joint(1)),
                to_rebirth(c.joint(2)),
                to_rebirth(c.limb.target()),
                Some(to_rebirth(crowd_ik::glam::Vec3::from_slice(&c.limb.pole_ms[..3]))),
            );
        }
        Ok(())
    })?;
    let (mut ours_err, mut theirs_err) = (0.0_f64, 0.0_f64);
    for ((c, o), (m, t)) in legs.iter().zip(&ours).zip(&theirs) {
        let pole = crowd_ik::glam::Vec3::from_slice(&c.limb.pole_ms[..3]);
        let (knee, end) = reference_two_bone(c.joint(0), c.joint(1), c.joint(2), c.limb.target(), pole);
        ours_err = ours_err.max(o.position(1).as_dvec3().distance(knee)).max(o.position(2).as_dvec3().distance(end));
        theirs_err =
            theirs_err.max(from_rebirth(*m).as_dvec3().distance(knee)).max(from_rebirth(*t).as_dvec3().distance(end));
    }
    Ok((ours_ms, corrections_ms, peer_ms, ours_err as f32, theirs_err as f32))
}

/// rebirth-ik's `solve_chain` (one thread) and `solve_chains_par` on the same FABRIK chains,
/// stopping at the same precision; max tip difference from ours (fixed iterations).
fn peer_fabrik(chains: &[FabrikChain]) -> Res<(f64, f64, f32)> {
    let bufs: Vec<rebirth_ik::ChainBuf> = chains
        .iter()
        .map(|c| {
            rebirth_ik::ChainBuf::new(
                (0..c.joint_count()).map(|i| to_rebirth(c.joint(i))).collect(),
                to_rebirth(crowd_ik::glam::Vec3::from_slice(&c.target_ms[..3])),
            )
        })
        .collect();
    let iterations = chains[0].mode[1];
    let tolerance = chains[0].params[0];
    let mut work = bufs.clone();
    let one = best(|| {
        work.clone_from(&bufs);
        for b in &mut work {
            rebirth_ik::solve_chain(&mut b.positions, &b.lengths, b.target, iterations, tolerance);
        }
        Ok(())
    })?;
    let all = best(|| {
        work.clone_from(&bufs);
        rebirth_ik::solve_chains_par(&mut work, iterations, tolerance);
        Ok(())
    })?;
    let mut ours = vec![FabrikSolved::default(); chains.len()];
    cpu_job(chains, &mut ours).run_par()?;
    let diff = ours
        .iter()
        .zip(&work)
        .zip(chains)
        .map(|((o, b), c)| o.position(c.joint_count() - 1).distance(from_rebirth(*b.positions.last().unwrap())))
        .fold(0.0_f32, f32::max);
    Ok((one, all, diff))
}

/// The arm of a [`workload::dls_arm`] record as a `k` serial chain (f64): the shoulder and
/// the wrist as three revolute joints each (k's joints have one degree of freedom and no cone
/// limits, so these are unlimited), the elbow a revolute joint with the record's hinge range,
/// and the hand a fixed link; all joints at 0 give the record's FK pose. Also the hand's
/// target pose.
fn k_arm(c: &DlsChain) -> (k::SerialChain<f64>, k::Isometry3<f64>) {
    use crowd_ik::glam::{DQuat, DVec3};
    use k::nalgebra as na;
    let j = |i: usize| c.chain.joint(i).as_dvec3();
    let q = crowd_ik::glam::Quat::from_array(c.chain.rotations_ms[0]).as_dquat();
    let local = |v: DVec3| q.conjugate() * v;
    let v3 = |v: DVec3| na::Vector3::new(v.x, v.y, v.z);
    let quat = |r: DQuat| na::UnitQuaternion::from_quaternion(na::Quaternion::new(r.w, r.x, r.y, r.z));
    let fore = local(j(2) - j(1)).normalize();
    let node = |at: DVec3, axis: Option<DVec3>, range: Option<[f32; 2]>| {
        let joint = match axis {
            Some(a) => k::JointType::Rotational { axis: na::Unit::new_normalize(v3(a)) },
            None => k::JointType::Fixed,
        };
        k::NodeBuilder::new()
            .translation(na::Translation3::from(v3(at)))
            .joint_type(joint)
            .limits(range.map(|[lo, hi]| k::joint::Range::new(f64::from(lo), f64::from(hi))))
            .into_node()
    };
    let root = k::NodeBuilder::new()
        .translation(na::Translation3::from(v3(j(0))))
        .rotation(quat(q))
        .joint_type(k::JointType::Rotational { axis: na::Vector3::y_axis() })
        .into_node();
    let nodes = [
        root,
        node(DVec3::ZERO, Some(DVec3::Z), None),
        node(DVec3::ZERO, Some(DVec3::X), None),
        node(local(j(1) - j(0)), Some(-DVec3::Y), Some(workload::arm_limits::ELBOW)),
        node(local(j(2) - j(1)), Some(DVec3::Y), None),
        node(DVec3::ZERO, Some(fore.cross(DVec3::Y)), None),
        node(DVec3::ZERO, Some(fore), None),
        node(local(j(3) - j(2)), None, None),
    ];
    for pair in nodes.windows(2) {
        pair[1].set_parent(&pair[0]);
    }
    let t = crowd_ik::glam::Vec3::from_slice(&c.chain.target_ms[..3]).as_dvec3();
    let r = crowd_ik::glam::Quat::from_array(c.goal.orientation_ms).as_dquat();
    (k::SerialChain::from_end(&nodes[7]), k::Isometry3::from_parts(na::Translation3::from(v3(t)), quat(r)))
}

/// `k`'s `JacobianIkSolver` (f64, an SVD pseudo-inverse step, joint ranges clamped) beside
/// damped least squares on the same arms, one thread each: k with as many iterations as our
/// starts × iterations allow, stopping at our precision (1e-4 × length, 1e-3 rad). Returns our
/// time and share within the precision, then k's.
fn peer_k_arms(arms: &[DlsChain]) -> Res<(f64, f32, f64, f32)> {
    let within = |c: &DlsChain, p: crowd_ik::glam::DVec3, r: crowd_ik::glam::DQuat| {
        let len: f64 = (0..3).map(|i| c.chain.joint(i).as_dvec3().distance(c.chain.joint(i + 1).as_dvec3())).sum();
        let t = crowd_ik::glam::Vec3::from_slice(&c.chain.target_ms[..3]).as_dvec3();
        let goal = crowd_ik::glam::Quat::from_array(c.goal.orientation_ms).as_dquat();
        p.distance(t) <= 1e-4 * len && r.normalize().angle_between(goal.normalize()) <= 1e-3
    };
    let mut ours = vec![FabrikSolved::default(); arms.len()];
    let ours_ms = best(|| Ok(cpu_job(arms, &mut ours).run().map(|_| ())?))?;
    let ours_within =
        arms.iter().zip(&ours).filter(|(c, s)| within(c, s.position(3).as_dvec3(), s.rotation(3).as_dquat())).count();
    let models: Vec<_> = arms.iter().map(k_arm).collect();
    let starts = arms.iter().map(|c| c.goal.starts[0]).max().unwrap_or(1) as usize;
    let theirs_ms = best(|| {
        for ((arm, target), c) in models.iter().zip(arms) {
            arm.set_joint_positions_clamped(&[0.0; 7]);
            let precision = f64::from(c.chain.params[0]);
            let solver = k::JacobianIkSolver::new(precision, 1e-3, 0.5, starts * c.chain.iterations() as usize);
            // An arm k does not bring within the precision is put back at its start (k's
            // contract): counted below as not reached.
            let _ = k::InverseKinematicsSolver::solve(&solver, arm, target);
        }
        Ok(())
    })?;
    let theirs_within = arms
        .iter()
        .zip(&models)
        .filter(|(c, (arm, _))| {
            let end = arm.end_transform();
            let (p, r) = (end.translation.vector, end.rotation);
            let p = crowd_ik::glam::DVec3::new(p.x, p.y, p.z);
            within(c, p, crowd_ik::glam::DQuat::from_xyzw(r.i, r.j, r.k, r.w))
        })
        .count();
    let share = |k: usize| k as f32 / arms.len() as f32;
    Ok((ours_ms, share(ours_within), theirs_ms, share(theirs_within)))
}

fn main() -> Res<()> {
    crowd_ik_tools::quiet_headless_gpu();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return Ok(());
    }
    let cpu_only = args.iter().any(|a| a == "--cpu-only");
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    if args.iter().any(|a| a == "--gpu-suite") {
        let tiny = args.iter().any(|a| a == "--tiny");
        let json = value("--json").unwrap_or_else(|| "gpu-suite.json".into());
        let budget = value("--budget-s").map_or(Ok(200.0), |b| b.parse::<f64>())?;
        return gpu_suite::run(tiny, &json, budget);
    }
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let quick = args.iter().any(|a| a == "--quick");
    let sizes: Vec<usize> =
        value("--sizes").map(|s| s.split(',').filter_map(parse_size).collect()).unwrap_or_else(|| {
            if quick {
                vec![1024, 16 * 1024, 64 * 1024]
            } else {
                [1, 4, 16, 64, 256, 1024].map(|k| k * 1024).to_vec()
            }
        });
    let all =
        "two,three,fabrik4x8,fabrik4x16,fabrik8x8,fabrik8x16,limited8x16,ccd8x16,dls8x32,dlsreach8x32,arm,upper,quadruped,tree20x8,lookat,mixed,crowd,placement,gltf,gltf-placement";
    let workloads: Vec<String> =
        value("--workloads").unwrap_or_else(|| all.into()).split(',').map(String::from).collect();
    let json_path = value("--json").unwrap_or_else(|| "bench.json".into());
    let cpu_path = value("--cpu-path").map_or(Ok(CpuPath::Auto), |p| p.parse::<CpuPath>())?.resolve()?;
    CPU_PATH.set(cpu_path).expect("set once");

    let mut gpu = if cpu_only { None } else { Some(GpuSolver::new_default()?) };
    let threads = rayon::current_num_threads();
    let adapter = match gpu.as_mut() {
        Some(gpu) => {
            let timed = gpu.enable_timestamps();
            let info = gpu.adapter_info().cloned().expect("own device");
            println!(
                "adapter: {} ({:?}, {:?}), timestamps: {timed}; CPU: {threads} threads, {cpu_path} path",
                info.name, info.device_type, info.backend
            );
            (info.name, format!("{:?}", info.device_type), format!("{:?}", info.backend))
        }
        None => {
            println!("GPU: off (--cpu-only); CPU: {threads} threads, {cpu_path} path");
            ("none".into(), "none".into(), "none".into())
        }
    };
    println!(
        "{:<12} {:>8} {:>11} {:>11} {:>11} {:>11} {:>10} {:>11} {:>12} {:>12}",
        "workload",
        "chains",
        "CPU 1 ms",
        "CPU all ms",
        "GPU dev ms",
        "GPU e2e ms",
        "submit µs",
        "resident ms",
        "CPU Mch/s",
        "GPU Mch/s"
    );
    let mut rows = Vec::new();
    for w in &workloads {
        let first_row = rows.len();
        for &n in &sizes {
            let row = match w.as_str() {
                "two" => chains("two-bone", gpu.as_mut(), &workload::two_bone(n, 1))?,
                "three" => chains("three-bone", gpu.as_mut(), &workload::three_bone(n, 2))?,
                "mixed" => mixed(gpu.as_mut(), n)?,
                "crowd" | "placement" | "gltf" | "gltf-placement" => match crowd(gpu.as_ref(), n, w) {
                    Ok(row) => row,
                    Err(e) => {
                        println!("{:<12} {n:>8} skipped: {e}", w);
                        continue;
                    }
                },
                "lookat" => chains("look-at 4", gpu.as_mut(), &workload::look_at(n, 5))?,
                "arm" => chains("dls arm", gpu.as_mut(), &workload::dls_arms(n, 32, 6))?,
                "upper" => chains("dls upper 13", gpu.as_mut(), &workload::dls_upper_bodies(n, 32, 7))?,
                "quadruped" => chains("dls quad 20", gpu.as_mut(), &workload::dls_quadrupeds(n, 32, 8))?,
                f if f.starts_with("tree20x") => {
                    let it = f["tree20x".len()..].parse()?;
                    chains(&format!("tree 20x{it}"), gpu.as_mut(), &workload::multi_fabrik(n, it, 4))?
                }
                f if f.starts_with("limited")
                    || f.starts_with("aligned")
                    || f.starts_with("ccd")
                    || f.starts_with("dls") =>
                {
                    // `reach` after the kind: targets the limits let the chains reach.
                    let (f, reach) = match f.split_once("reach") {
                        Some((a, b)) => (format!("{a}{b}"), true),
                        None => (f.to_string(), false),
                    };
                    let (kind, rest) = f.split_at(if f.starts_with("ccd") || f.starts_with("dls") { 3 } else { 7 });
                    let (j, it) = rest.split_once('x').ok_or("limitedJxK, alignedJxK, ccdJxK or dlsJxK")?;
                    let (j, it): (usize, u32) = (j.parse()?, it.parse()?);
                    let limited =
                        if reach { workload::limited_reachable(n, j, it, 3) } else { workload::limited(n, j, it, 3) };
                    let kind = if reach { format!("{kind} reach") } else { kind.to_string() };
                    let kind = kind.as_str();
                    if kind.starts_with("dls") {
                        let dls: Vec<DlsChain> = limited.iter().map(|c| DlsChain::new(c.chain, c.limits)).collect();
                        chains(&format!("{kind} {j}x{it}"), gpu.as_mut(), &dls)?
                    } else if kind.starts_with("ccd") {
                        let ccd: Vec<CcdChain> = limited.iter().map(|c| CcdChain::new(c.chain, c.limits)).collect();
                        chains(&format!("{kind} {j}x{it}"), gpu.as_mut(), &ccd)?
                    } else if kind.starts_with("aligned") {
                        let aligned: Vec<_> = limited.iter().map(|c| c.with_align_hinges(true)).collect();
                        chains(&format!("{kind} {j}x{it}"), gpu.as_mut(), &aligned)?
                    } else {
                        chains(&format!("{kind} {j}x{it}"), gpu.as_mut(), &limited)?
                    }
                }
                f if f.starts_with("fabrik") => {
                    let (j, it) = f[6..].split_once('x').ok_or("fabrikJxK")?;
                    chains(&format!("fabrik {j}x{it}"), gpu.as_mut(), &workload::fabrik(n, j.parse()?, it.parse()?, 3))?
                }
                other => return Err(format!("unknown workload {other}").into()),
            };
            let gpu_ms = row.gpu_device.unwrap_or(row.gpu_resident);
            // A column that was not measured (`--cpu-only`, no timestamps) prints as "-".
            let cell = |v: f64, digits: usize| if v.is_finite() { format!("{v:.digits$}") } else { "-".into() };
            println!(
                "{:<12} {:>8} {:>11.3} {:>11.3} {:>11} {:>11} {:>10} {:>11} {:>12.2} {:>12}",
                row.workload,
                row.n,
                row.cpu1,
                row.cpu_all,
                row.gpu_device.map_or("-".into(), |d| cell(d, 3)),
                cell(row.gpu_e2e, 3),
                cell(row.gpu_submit_us, 1),
                cell(row.gpu_resident, 3),
                row.n as f64 / row.cpu_all / 1e3,
                cell(row.n as f64 / gpu_ms / 1e3, 2)
            );
            rows.push(row);
        }
        if cpu_only {
            continue;
        }
        match rows[first_row..].iter().find(|r: &&Row| r.gpu_e2e < r.cpu_all) {
            Some(r) => println!("{:<12} GPU end-to-end beats CPU all threads from {} chains", r.workload, r.n),
            None => println!("{w:<12} GPU end-to-end does not beat CPU all threads at these sizes"),
        }
    }

    // The peer, on the same inputs.
    let peer_n = *sizes.iter().find(|&&s| s >= 16 * 1024).unwrap_or(&sizes[0]);
    println!("\npeer: rebirth-ik 0.1 on the same inputs, {peer_n} chains");
    let (ours_ms, corrections_ms, peer_ms, ours_err, theirs_err) = peer_two_bone(peer_n)?;
    println!(
        "  two-bone, 1 thread: crowd-ik {:.1} ns/chain (positions, rotations, local corrections, reached), {:.1} ns/chain writing local corrections alone, vs rebirth-ik two_bone {:.1} ns/chain (positions)",
        ours_ms * 1e6 / peer_n as f64,
        corrections_ms * 1e6 / peer_n as f64,
        peer_ms * 1e6 / peer_n as f64
    );
    println!("    worst position error against an f64 law-of-cosines reference: crowd-ik {ours_err:.2e} m, rebirth-ik {theirs_err:.2e} m");
    for (workload, ms) in [("peer two-bone", ours_ms), ("peer two-bone, corrections only", corrections_ms)] {
        rows.push(Row {
            workload: workload.into(),
            n: peer_n,
            cpu1: ms,
            peer: Some(("rebirth-ik two_bone".into(), peer_ms, theirs_err)),
            ..Row::default()
        });
    }
    let fab = workload::fabrik(peer_n, 8, 16, 3);
    let (one, all, diff) = peer_fabrik(&fab)?;
    let mut ours = vec![FabrikSolved::default(); peer_n];
    let ours_one = best(|| Ok(cpu_job(&fab, &mut ours).with_options(FabrikMode::Fixed).run().map(|_| ())?))?;
    let mut corrections = vec![FabrikCorrections::default(); peer_n];
    let path = *CPU_PATH.get().unwrap_or(&CpuPath::Auto);
    let corrections_one = best(|| {
        Ok(crowd_ik::cpu::FabrikCorrectionsJob::new(&fab, &mut corrections).with_path(path).run().map(|_| ())?)
    })?;
    println!(
        "  FABRIK 8x16, 1 thread: crowd-ik {:.0} ns/chain (16 fixed iterations + rotations), {:.0} ns/chain writing local corrections alone, vs rebirth-ik solve_chain {:.0} ns/chain (early exit); all threads: solve_chains_par {:.0} ns/chain; max tip difference {diff:.2e}",
        ours_one * 1e6 / peer_n as f64,
        corrections_one * 1e6 / peer_n as f64,
        one * 1e6 / peer_n as f64,
        all * 1e6 / peer_n as f64
    );
    for (workload, ms) in [("peer fabrik 8x16", ours_one), ("peer fabrik 8x16, corrections only", corrections_one)] {
        rows.push(Row {
            workload: workload.into(),
            n: peer_n,
            cpu1: ms,
            peer: Some(("rebirth-ik solve_chain".into(), one, diff)),
            ..Row::default()
        });
    }

    if workloads.iter().any(|w| w == "arm") {
        let arms = workload::dls_arms(peer_n.min(2_000), 32, 6);
        let (ours_ms, ours, theirs_ms, theirs) = peer_k_arms(&arms)?;
        println!("\npeer: k 0.32 (Jacobian IK) on the same {} arms (hand position and orientation)", arms.len());
        println!(
            "  damped least squares, 1 thread: {:.2} µs/arm, {:.1} % within 1e-4 × length and 1e-3 rad; k JacobianIkSolver (f64): {:.2} µs/arm, {:.1} %",
            ours_ms * 1e3 / arms.len() as f64,
            100.0 * ours,
            theirs_ms * 1e3 / arms.len() as f64,
            100.0 * theirs
        );
        rows.push(Row {
            workload: "peer dls arm".into(),
            n: arms.len(),
            cpu1: ours_ms,
            peer: Some((
                format!("k JacobianIkSolver (within the precision: ours {ours:.4}, k {theirs:.4})"),
                theirs_ms,
                f32::NAN,
            )),
            ..Row::default()
        });
    }
    let json = format!(
        "{{\"adapter\": \"{}\", \"device_type\": \"{}\", \"backend\": \"{}\", \"cpu_threads\": {threads}, \"cpu_path\": \"{cpu_path}\", \"rows\": [\n  {}\n]}}\n",
        adapter.0,
        adapter.1,
        adapter.2,
        rows.iter().map(Row::json).collect::<Vec<_>>().join(",\n  ")
    );
    std::fs::write(&json_path, json)?;
    println!("\nwrote {json_path}");
    Ok(())
}

/// 80 % two-bone, 15 % three-bone, 5 % FABRIK 8x16, solved together in one pass.
fn mixed(gpu: Option<&mut GpuSolver>, n: usize) -> Res<Row> {
    let two = workload::two_bone(n * 80 / 100, 1);
    let three = workload::three_bone(n * 15 / 100, 2);
    let fab = workload::fabrik(n - two.len() - three.len(), 8, 16, 3);
    let mut o2 = vec![TwoBoneSolved::default(); two.len()];
    let mut o3 = vec![ThreeBoneSolved::default(); three.len()];
    let mut of = vec![FabrikSolved::default(); fab.len()];
    let cpu1 = best(|| {
        cpu_job(&two, &mut o2).run()?;
        cpu_job(&three, &mut o3).run()?;
        cpu_job(&fab, &mut of).run()?;
        Ok(())
    })?;
    let cpu_all = best(|| {
        cpu_job(&two, &mut o2).run_par()?;
        cpu_job(&three, &mut o3).run_par()?;
        cpu_job(&fab, &mut of).run_par()?;
        Ok(())
    })?;
    let Some(gpu) = gpu else { return Ok(Row::cpu_only("mixed", n, cpu1, cpu_all)) };
    let cpu_out = (o2.clone(), o3.clone(), of.clone());
    let gpu_e2e = best(|| {
        gpu.upload(&two)?;
        gpu.upload(&three)?;
        gpu.upload(&fab)?;
        gpu.dispatch(&Kind::ALL)?;
        gpu.read::<TwoBoneChain>(&mut o2)?;
        gpu.read::<ThreeBoneChain>(&mut o3)?;
        gpu.read::<FabrikChain>(&mut of)?;
        Ok(())
    })?;
    check_gpu("mixed two-bone", &cpu_out.0, &o2)?;
    check_gpu("mixed three-bone", &cpu_out.1, &o3)?;
    check_gpu("mixed fabrik", &cpu_out.2, &of)?;
    let (submit, resident_ms, device) = resident(gpu, &Kind::ALL)?;
    Ok(Row {
        workload: "mixed".into(),
        n,
        cpu1,
        cpu_all,
        gpu_device: device,
        gpu_e2e,
        gpu_submit_us: submit,
        gpu_resident: resident_ms,
        peer: None,
    })
}

/// One crowd foot-IK workload (`name`: crowd, placement, gltf, gltf-placement): `n` walking
/// bipeds over hills, the box rig or Cesium Man (a glTF character); with placement, foot
/// placement across frames on (state read and written every frame, dt = 1/60 s). Holds a
/// first frame (every state resets) and the frame after it.
pub struct CrowdScene {
    pub placement: bool,
    pub rig: crowd_ik::crowd::FootRig,
    pub ground: Ground,
    pub first: (Vec<CharacterInput>, Vec<JointPose>),
    pub chars: Vec<CharacterInput>,
    pub poses: Vec<JointPose>,
    pub dt: f32,
}

impl CrowdScene {
    pub fn new(n: usize, name: &str) -> Res<Self> {
        let placement = name.ends_with("placement");
        let (terrain, box_rig) = workload::crowd_frame(placement);
        let dt = 1.0 / 60.0;
        let (mut chars, mut poses): (Vec<CharacterInput>, Vec<JointPose>) = (Vec::new(), Vec::new());
        let (rig, first) = if name.starts_with("gltf") {
            // The source tree's copy, or one under the working directory (a binary run on
            // another machine from the repository's root).
            let built = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gltf/CesiumMan.glb");
            let path = if std::path::Path::new(built).exists() { built } else { "tests/data/gltf/CesiumMan.glb" };
            let mut walkers = crowd_ik_tools::character::GltfCrowd::load(path, None, 1.0, n, 90.0)?;
            walkers.frame(&terrain, &mut chars, &mut poses);
            let first = (chars.clone(), poses.clone());
            walkers.step(dt);
            walkers.frame(&terrain, &mut chars, &mut poses);
            (walkers.rig.clone().with_placement(box_rig.placement), first)
        } else {
            let mut walkers = WalkingCrowd::new(n, 90.0, 1);
            walkers.frame(&terrain, &mut chars, &mut poses);
            let first = (chars.clone(), poses.clone());
            walkers.step(dt);
            walkers.frame(&terrain, &mut chars, &mut poses);
            (box_rig, first)
        };
        Ok(CrowdScene { placement, rig, ground: Ground::Heightfield(terrain), first, chars, poses, dt })
    }

    /// Joints per character.
    pub fn joints(&self) -> usize {
        self.poses.len() / self.chars.len().max(1)
    }

    /// One CPU frame (the first one with `first`), on one thread or all of them.
    pub fn cpu_frame(
        &self,
        first: bool,
        states: &mut [CharacterState],
        out: &mut [JointPose],
        res: &mut [FootResult],
        par: bool,
    ) -> Res<()> {
        let (chars, poses) = if first { (&self.first.0, &self.first.1) } else { (&self.chars, &self.poses) };
        let mut j = crowd_ik::cpu::foot_ik::FootIkJob {
            rig: &self.rig,
            ground: &self.ground,
            characters: chars,
            hits: &[],
            poses_in: poses,
            poses_out: out,
            results: res,
        };
        match (self.placement, par) {
            (false, false) => j.run()?,
            (false, true) => j.run_par()?,
            (true, false) => j.run_frame(states, self.dt)?,
            (true, true) => j.run_frame_par(states, self.dt)?,
        }
        Ok(())
    }
}

/// The crowd foot-IK frame (`name`: crowd, placement, gltf, gltf-placement, see
/// [`CrowdScene`]): CPU and GPU timings.
fn crowd(own: Option<&GpuSolver>, n: usize, name: &str) -> Res<Row> {
    let scene = CrowdScene::new(n, name)?;
    let (rig, ground, dt) = (&scene.rig, &scene.ground, scene.dt);
    let (chars, poses, first_chars, first_poses) = (&scene.chars, &scene.poses, &scene.first.0, &scene.first.1);
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); n];
    let mut states = vec![CharacterState::default(); n];
    // A first frame (every state resets), then this frame from those states: the GPU is
    // checked against these two; timed frames then go on from the states they leave.
    scene.cpu_frame(true, &mut states, &mut out, &mut res, true)?;
    scene.cpu_frame(false, &mut states, &mut out, &mut res, true)?;
    let cpu_res = res.clone();
    let cpu1 = best(|| scene.cpu_frame(false, &mut states, &mut out, &mut res, false))?;
    let cpu_all = best(|| scene.cpu_frame(false, &mut states, &mut out, &mut res, true))?;
    let Some(own) = own else { return Ok(Row::cpu_only(name, n, cpu1, cpu_all)) };
    let mut gpu = CrowdSolver::with_context(own.context(), rig, ground)?;
    gpu.enable_timestamps();
    gpu.set_frame_time(dt)?;
    gpu.solve(first_chars, first_poses, &[], &mut out, &mut res)?;
    gpu.solve(chars, poses, &[], &mut out, &mut res)?;
    check_gpu(name, &cpu_res, &res)?;
    let gpu_e2e = best(|| Ok(gpu.solve(chars, poses, &[], &mut out, &mut res)?))?;
    let mut submit = f64::INFINITY;
    let resident = best(|| {
        let t = Instant::now();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder);
        gpu.queue().submit([encoder.finish()]);
        submit = submit.min(t.elapsed().as_secs_f64() * 1e6);
        gpu.device().poll(wgpu::PollType::wait_indefinitely())?;
        Ok(())
    })?;
    Ok(Row {
        workload: name.into(),
        n,
        cpu1,
        cpu_all,
        gpu_device: gpu.device_time_ms()?,
        gpu_e2e,
        gpu_submit_us: submit,
        gpu_resident: resident,
        peer: None,
    })
}
