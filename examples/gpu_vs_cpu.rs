//! Solves the same batch on the GPU and on the CPU and prints the adapter, the largest
//! CPU–GPU difference and both timings.
//!
//! `cargo run --release --example gpu_vs_cpu -- [chains]` (default 262 144 per kind; FABRIK
//! a quarter of that, the limited chains and joint trees a sixteenth, the trees solved by
//! damped least squares a sixty-fourth), and crowd foot IK on a
//! real rig: a sixteenth as many Cesium Men (a glTF character, 19 joints) walking its clip
//! over hills, one stateless frame.

use std::time::{Duration, Instant};

use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::cpu::{BatchJob, Chain};
use crowd_ik::crowd::{FootResult, Ground, JointPose};
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::{GpuChain, GpuSolver};
use crowd_ik::{wgpu, SolvedChain};
use crowd_ik_tools::character::{GltfCrowd, CESIUM_MAN};
use crowd_ik_tools::workload;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    crowd_ik_tools::quiet_headless_gpu();
    let n: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(256 * 1024);
    let mut gpu = GpuSolver::new_default()?;
    let info = gpu.adapter_info().cloned().expect("own device");
    println!("adapter: {} ({:?}, {:?}, driver {})", info.name, info.device_type, info.backend, info.driver_info);
    println!("{n} chains per kind; times are the best of 3 runs\n");
    println!(
        "{:<14} {:>12} {:>12} {:>14} {:>12} {:>16} {:>14}",
        "kind", "CPU 1 thread", "CPU all", "GPU end-to-end", "GPU solve", "max pos diff", "max rot diff"
    );
    compare("two-bone", &mut gpu, &workload::two_bone(n, 1))?;
    compare("three-bone", &mut gpu, &workload::three_bone(n, 2))?;
    compare("fabrik 8x16", &mut gpu, &workload::fabrik(n / 4, 8, 16, 3))?;
    let limited = workload::limited(n / 16, 8, 16, 3);
    compare("limited 8x16", &mut gpu, &limited)?;
    let ccd: Vec<crowd_ik::CcdChain> = limited.iter().map(|c| crowd_ik::CcdChain::new(c.chain, c.limits)).collect();
    compare("ccd 8x16", &mut gpu, &ccd)?;
    let reachable = workload::limited_reachable(n / 16, 8, 32, 3);
    let dls: Vec<crowd_ik::DlsChain> = reachable.iter().map(|c| crowd_ik::DlsChain::new(c.chain, c.limits)).collect();
    compare("dls reach 8x32", &mut gpu, &dls)?;
    compare("tree 20x8", &mut gpu, &workload::multi_fabrik(n / 16, 8, 4))?;
    compare("dls upper 13", &mut gpu, &workload::dls_upper_bodies((n / 64).max(1), 32, 7))?;
    compare("dls quad 20", &mut gpu, &workload::dls_quadrupeds((n / 64).max(1), 32, 8))?;
    compare("look-at 4", &mut gpu, &workload::look_at(n, 5))?;
    feet(&gpu, (n / 16).max(1))?;
    println!(
        "\nGPU end-to-end = upload + dispatch + readback; GPU solve = dispatch and wait, inputs already on the GPU."
    );
    Ok(())
}

/// One stateless crowd foot-IK frame of `n` Cesium Men on both paths.
fn feet(gpu: &GpuSolver, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let terrain = crowd_ik_tools::terrain::hills(Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let walkers = GltfCrowd::load(CESIUM_MAN, None, 1.0, n, 90.0)?;
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    walkers.frame(&terrain, &mut chars, &mut poses);
    let ground = Ground::Heightfield(terrain);
    let rig = &walkers.rig;
    let mut cpu = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); n];
    let one = best(|| Ok(FootIkJob::new(rig, &ground, &chars, &poses, &mut cpu, &mut res).run()?))?;
    let all = best(|| Ok(FootIkJob::new(rig, &ground, &chars, &poses, &mut cpu, &mut res).run_par()?))?;
    let mut solver = CrowdSolver::with_context(gpu.context(), rig, &ground)?;
    let mut out = cpu.clone();
    let end_to_end = best(|| Ok(solver.solve(&chars, &poses, &[], &mut out, &mut res)?))?;
    let solve_only = best(|| {
        let mut encoder = solver.device().create_command_encoder(&Default::default());
        solver.encode(&mut encoder);
        solver.queue().submit([encoder.finish()]);
        solver.device().poll(wgpu::PollType::wait_indefinitely())?;
        Ok(())
    })?;
    let (mut dp, mut dr) = (0.0_f32, 0.0_f32);
    for (c, g) in cpu.iter().zip(&out) {
        dp = dp.max(c.position().distance(g.position()));
        let r = c.rotation().conjugate() * g.rotation();
        dr = dr.max(2.0 * r.xyz().length().atan2(r.w.abs()));
    }
    row(&format!("feet {n}"), [one, all, end_to_end, solve_only], dp, dr);
    Ok(())
}

/// One row of the table: timings, then the largest position and rotation differences.
fn row(name: &str, [one, all, end_to_end, solve_only]: [Duration; 4], dp: f32, dr: f32) {
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
    println!(
        "{name:<14} {:>12} {:>12} {:>14} {:>12} {:>16} {:>14}",
        ms(one),
        ms(all),
        ms(end_to_end),
        ms(solve_only),
        format!("{dp:.2e}"),
        format!("{dr:.2e} rad")
    );
}

fn best<F: FnMut() -> Result<(), Box<dyn std::error::Error>>>(
    mut f: F,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed());
    }
    Ok(best)
}

fn compare<C, const N: usize>(name: &str, gpu: &mut GpuSolver, chains: &[C]) -> Result<(), Box<dyn std::error::Error>>
where
    C: GpuChain<Solved = SolvedChain<N>> + Chain,
    C::Options: Default,
{
    let mut cpu = vec![SolvedChain::<N>::default(); chains.len()];
    let one = best(|| Ok(BatchJob::<C>::new(chains, &mut cpu).run().map(|_| ())?))?;
    let all = best(|| Ok(BatchJob::<C>::new(chains, &mut cpu).run_par().map(|_| ())?))?;
    let mut out = vec![SolvedChain::<N>::default(); chains.len()];
    let end_to_end = best(|| Ok(gpu.solve(chains, &mut out)?))?;
    let solve_only = best(|| {
        gpu.dispatch(&[C::KIND])?;
        gpu.device().poll(wgpu::PollType::wait_indefinitely())?;
        Ok(())
    })?;
    let (mut dp, mut dr) = (0.0_f32, 0.0_f32);
    for (c, g) in cpu.iter().zip(&out) {
        for k in 0..N {
            dp = dp.max(Vec3::from_slice(&c.positions_ms[k][..3]).distance(Vec3::from_slice(&g.positions_ms[k][..3])));
            let (a, b) = (Quat::from_array(c.rotations_ms[k]), Quat::from_array(g.rotations_ms[k]));
            if a.length_squared() > 0.0 {
                let r = a.conjugate() * b;
                dr = dr.max(2.0 * r.xyz().length().atan2(r.w.abs()));
            }
        }
    }
    row(name, [one, all, end_to_end, solve_only], dp, dr);
    Ok(())
}
