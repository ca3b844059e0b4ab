//! GPU test helpers: get a solver (a failure in CI, a loud skip elsewhere) and compare GPU
//! results with the CPU reference under the tolerance contract.
// `!(x <= tol)` is deliberate: a NaN difference must fail.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::gpu::GpuSolver;
use crowd_ik::SolvedChain;

/// `true` when the environment says we are in CI (`CI` set to anything but "", "0", "false").
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A solver on its own device. In CI a missing adapter fails the test; elsewhere the test
/// prints why it did not run and returns early.
pub fn solver() -> Option<GpuSolver> {
    match GpuSolver::new_default() {
        Ok(s) => {
            if let Some(info) = s.adapter_info() {
                eprintln!("GPU adapter: {} ({:?}, {:?})", info.name, info.device_type, info.backend);
            }
            Some(s)
        }
        Err(e) if in_ci() => panic!("CI=true but no GPU adapter (install mesa-vulkan-drivers for lavapipe): {e}"),
        Err(e) => {
            eprintln!("SKIPPED: no GPU adapter ({e}); install mesa-vulkan-drivers; with CI=true this is a failure");
            None
        }
    }
}

/// Worst differences between a CPU and a GPU batch.
#[derive(Debug, Default)]
pub struct Diff {
    pub position: f32, // relative to chain length
    pub rotation: f32, // radians
    pub worst_chain: usize,
}

fn quat_angle(a: Quat, b: Quat) -> f32 {
    let r = a.conjugate() * b;
    2.0 * r.xyz().length().atan2(r.w.abs())
}

/// Compares CPU and GPU results: positions within `1e-4 × length(i)`, rotations and
/// corrections within `1e-3` rad, identical status words (joints written included), slots
/// past the joints written exactly zero on both sides, no NaN anywhere. On failure
/// panics with the worst chain's input (`describe(i)`) and both outputs.
pub fn assert_matches<const N: usize>(
    what: &str,
    cpu: &[SolvedChain<N>],
    gpu: &[SolvedChain<N>],
    length: impl Fn(usize) -> f32,
    describe: impl Fn(usize) -> String,
) -> Diff {
    assert_eq!(cpu.len(), gpu.len());
    let mut diff = Diff::default();
    let mut failure: Option<(usize, String)> = None;
    let mut outside = 0;
    for (i, (c, g)) in cpu.iter().zip(gpu).enumerate() {
        let l = length(i).max(1e-6);
        let mut bad = Vec::new();
        if !g.positions_ms.iter().chain(&g.rotations_ms).chain(&g.corrections).flatten().all(|x| x.is_finite()) {
            bad.push("non-finite GPU output".to_string());
        }
        if c.status != g.status {
            bad.push(format!("status cpu {:?} gpu {:?}", c.status, g.status));
        }
        // Slots past the joints written are exactly zero on both sides.
        for k in c.joints_written().min(N)..N {
            if [
                c.positions_ms[k],
                c.rotations_ms[k],
                c.corrections[k],
                g.positions_ms[k],
                g.rotations_ms[k],
                g.corrections[k],
            ]
            .iter()
            .flatten()
            .any(|x| x.to_bits() != 0)
            {
                bad.push(format!("slot {k} past the {} joints written is not zero", c.joints_written()));
            }
        }
        for k in 0..N {
            let dp = Vec3::from_slice(&c.positions_ms[k][..3]).distance(Vec3::from_slice(&g.positions_ms[k][..3])) / l;
            let (qc, qg) = (Quat::from_array(c.rotations_ms[k]), Quat::from_array(g.rotations_ms[k]));
            let (cc, cg) = (Quat::from_array(c.corrections[k]), Quat::from_array(g.corrections[k]));
            let zero = qc.length_squared() == 0.0 && qg.length_squared() == 0.0;
            let dr = if zero { 0.0 } else { quat_angle(qc, qg).max(quat_angle(cc, cg)) };
            if dp > diff.position || dr > diff.rotation {
                diff.worst_chain = i;
            }
            diff.position = diff.position.max(dp);
            diff.rotation = diff.rotation.max(dr);
            if !(dp <= 1e-4) {
                bad.push(format!("joint {k} position off by {dp:e} x length"));
            }
            if !(dr <= 1e-3) {
                bad.push(format!("joint {k} rotation off by {dr:e} rad"));
            }
        }
        outside += usize::from(!bad.is_empty());
        if !bad.is_empty() && failure.is_none() {
            failure = Some((i, bad.join("; ")));
        }
    }
    if let Some((i, why)) = failure {
        panic!(
            "{what}: GPU differs from CPU at chain {i} ({outside} of {} chains outside the contract): {why}\ninput: {}\ncpu: {:?}\ngpu: {:?}\nworst over the batch: {diff:?}",
            cpu.len(),
            describe(i),
            cpu[i],
            gpu[i]
        );
    }
    eprintln!(
        "{what}: {} chains, worst position diff {:e} x length, worst rotation diff {:e} rad",
        cpu.len(),
        diff.position,
        diff.rotation
    );
    diff
}

/// Records whose GPU result is outside the contract (positions within 1e-4 × `length(i)`,
/// rotations and corrections within 1e-3 rad) or whose status differs: for batches where
/// a known share is allowed outside it (a known gap, stated where it is used).
pub fn mismatches<const N: usize>(
    cpu: &[SolvedChain<N>],
    gpu: &[SolvedChain<N>],
    length: impl Fn(usize) -> f32,
) -> Vec<usize> {
    (0..cpu.len())
        .filter(|&i| {
            let (c, g) = (&cpu[i], &gpu[i]);
            c.status != g.status
                || (0..c.joints_written().min(N)).any(|k| {
                    !(c.position(k).distance(g.position(k)) <= 1e-4 * length(i))
                        || !(quat_angle(c.rotation(k), g.rotation(k)) <= 1e-3)
                        || !(quat_angle(c.correction(k), g.correction(k)) <= 1e-3)
                })
        })
        .collect()
}

/// How far apart two answers for one record are, in units of the CPU–GPU contract: the
/// worst over joints of position distance / (1e-4 × `length`), rotation and correction angle
/// / 1e-3 rad. Above 1: outside the contract.
pub fn contract_distance<const N: usize>(a: &SolvedChain<N>, b: &SolvedChain<N>, length: f32) -> f32 {
    (0..a.joints_written().min(N))
        .map(|k| {
            let p = a.position(k).distance(b.position(k)) / (1e-4 * length);
            let r = quat_angle(a.rotation(k), b.rotation(k)) / 1e-3;
            let c = quat_angle(a.correction(k), b.correction(k)) / 1e-3;
            p.max(r).max(c)
        })
        .fold(0.0, f32::max)
}

/// The record's own conditioning: how far (in contract units, [`contract_distance`]) its CPU
/// answer moves when one coordinate of its target moves by one ulp (six solves, ± each
/// axis). A well-conditioned record moves by ~1e-3 of the contract; one that moves by a
/// sizeable share of it cannot be held to it by any f32 implementation, since the GPU's
/// rounding differs from the CPU's by more than one ulp of one input.
pub fn one_ulp_sensitivity<const N: usize>(
    cpu: &SolvedChain<N>,
    target: [f32; 4],
    length: f32,
    solve: impl Fn([f32; 4]) -> SolvedChain<N>,
) -> f32 {
    let mut worst = 0.0f32;
    for axis in 0..3 {
        for up in [true, false] {
            let mut t = target;
            let x = t[axis];
            t[axis] = if up == (x >= 0.0) {
                f32::from_bits(x.to_bits() + 1)
            } else if x == 0.0 {
                -f32::from_bits(1)
            } else {
                f32::from_bits(x.to_bits() - 1)
            };
            worst = worst.max(contract_distance(cpu, &solve(t), length));
        }
    }
    worst
}

/// A device and queue of their own, for the crowd solvers (adapter from `WGPU_ADAPTER_NAME`
/// / `WGPU_BACKEND`). In CI a missing adapter fails the test; elsewhere it is a loud skip.
pub fn device() -> Option<(wgpu::Device, wgpu::Queue)> {
    let adapter = match crowd_ik::gpu::adapter_from_env() {
        Ok(a) => a,
        Err(e) if in_ci() => panic!("CI=true but no GPU adapter: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: no GPU adapter ({e})");
            return None;
        }
    };
    eprintln!("GPU adapter: {}", adapter.get_info().name);
    Some(pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("device"))
}

/// The devices the foot-placement tests run on, each with a name: one without optional
/// features (the kernel that moves the state as 32-bit words) and, where the adapter has
/// `SHADER_INT64`, one with it (the 64-bit-word kernel, `shaders/shared/foot_state_wide.wgsl`). In
/// CI a CPU adapter (lavapipe) must offer the second: both kernels are tested there.
pub fn state_devices() -> Vec<(wgpu::Device, wgpu::Queue, &'static str)> {
    let Some((device, queue)) = device() else { return Vec::new() };
    let mut out = vec![(device, queue, "32-bit state words")];
    let adapter = crowd_ik::gpu::adapter_from_env().expect("the adapter found a moment ago");
    let info = adapter.get_info();
    if adapter.features().contains(wgpu::Features::SHADER_INT64) {
        let desc = wgpu::DeviceDescriptor { required_features: wgpu::Features::SHADER_INT64, ..Default::default() };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc)).expect("device");
        out.push((device, queue, "64-bit state words"));
    } else if in_ci() && info.device_type == wgpu::DeviceType::Cpu {
        panic!("CI=true: the CPU adapter {} lacks SHADER_INT64, the 64-bit state kernel is untested", info.name);
    } else {
        eprintln!("the adapter lacks SHADER_INT64: the 64-bit state kernel is not tested here");
    }
    out
}

/// GPU against CPU on a large batch (`targets` the chains' targets): fewer than 1 in 1 000
/// chains outside the contract, each of them ill-conditioned (one ulp of its target moves
/// the CPU's answer by at least a tenth of what separates the twins, where a typical chain
/// moves by ~1e-3 of the contract). `solve_at(i, t)`: the CPU answer for chain `i` with its
/// target moved to `t`.
pub fn outside_contract_ill_conditioned(
    what: &str,
    cpu: &[crowd_ik::FabrikSolved],
    out: &[crowd_ik::FabrikSolved],
    targets: &[[f32; 4]],
    len: impl Fn(usize) -> f32 + Copy,
    solve_at: impl Fn(usize, [f32; 4]) -> crowd_ik::FabrikSolved,
) {
    let size = cpu.len();
    let bad = mismatches(cpu, out, len);
    eprintln!("{what}: {} of {size} chains outside the contract: {:?}", bad.len(), &bad[..bad.len().min(8)]);
    assert!(bad.len() * 1_000 < size, "{what}: {} chains outside the contract", bad.len());
    let mut least = f32::INFINITY;
    for &i in &bad {
        let apart = contract_distance(&cpu[i], &out[i], len(i));
        let moved = one_ulp_sensitivity(&cpu[i], targets[i], len(i), |t| solve_at(i, t));
        assert!(
            cpu[i].status != out[i].status || moved >= 0.1 * apart,
            "{what}: chain {i} is {apart} contract units apart but one ulp moves the CPU by only {moved}"
        );
        least = least.min(moved / apart);
    }
    // Against a typical chain: the median one moves by a few thousandths.
    let mut typical: Vec<f32> = (0..size)
        .step_by(size / 300)
        .map(|i| one_ulp_sensitivity(&cpu[i], targets[i], len(i), |t| solve_at(i, t)))
        .collect();
    typical.sort_by(f32::total_cmp);
    let median = typical[typical.len() / 2];
    assert!(median <= 0.01, "{what}: a typical chain moves by {median} of the contract for one ulp");
    eprintln!(
        "{what}: each chain outside the contract moves by ≥ {least:.2} of the gap for one ulp of its target (a typical chain: {median:.1e} of the contract)"
    );
}
