//! A crowd walking over hills, feet planted by foot IK every frame, on the GPU and the CPU.
//!
//! `cargo run --release --example crowd -- [characters] [frames]` (default 10 000, 10)
//!
//! Prints per frame: characters, feet solved, sole-to-ground error of planted feet before
//! and after IK (mean and max), the pelvis drop range, and CPU (all threads) vs GPU time.

use std::time::Instant;

use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::{foot, FootResult, Ground, JointPose};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::scene::{biped_rig, WalkingCrowd};
use glam::Vec2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10_000);
    let frames: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10);
    let terrain = crowd_ik_tools::terrain::hills(Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let ground = Ground::Heightfield(terrain.clone());
    let rig = biped_rig();
    let mut crowd = WalkingCrowd::new(n, 90.0, 1);

    let own = GpuSolver::new_default()?; // adapter from WGPU_ADAPTER_NAME / WGPU_BACKEND
    let info = own.adapter_info().cloned().expect("own device");
    let mut gpu = CrowdSolver::new(own.device(), own.queue(), &rig, &ground)?;
    println!(
        "adapter: {} ({:?}); {n} characters, {} joints each, hills ±0.8 m",
        info.name,
        info.device_type,
        rig.joint_count()
    );
    println!(
        "{:>5} {:>7} {:>6} {:>21} {:>21} {:>15} {:>9} {:>9} {:>9}",
        "frame",
        "chars",
        "feet",
        "before mean/max (m)",
        "after mean/max (m)",
        "pelvis drop (m)",
        "CPU ms",
        "GPU ms",
        "GPU e2e"
    );
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    let mut cpu_out = vec![JointPose::default(); n * rig.joint_count()];
    let mut cpu_res = vec![FootResult::default(); n];
    let mut gpu_out = cpu_out.clone();
    let mut gpu_res = cpu_res.clone();
    for frame in 0..frames {
        crowd.step(1.0 / 30.0);
        crowd.frame(&terrain, &mut chars, &mut poses);

        let t = Instant::now();
        FootIkJob {
            rig: &rig,
            ground: &ground,
            characters: &chars,
            hits: &[],
            poses_in: &poses,
            poses_out: &mut cpu_out,
            results: &mut cpu_res,
        }
        .run_par()?;
        let cpu_ms = t.elapsed().as_secs_f64() * 1e3;

        // GPU: upload, one dispatch, wait (the renderer's path has no wait and no readback).
        let t = Instant::now();
        gpu.upload(&chars, &poses, &[])?;
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder);
        gpu.queue().submit([encoder.finish()]);
        gpu.device().poll(crowd_ik::wgpu::PollType::wait_indefinitely())?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3;
        gpu.read(&mut gpu_out, &mut gpu_res)?;
        let e2e_ms = t.elapsed().as_secs_f64() * 1e3;

        let (mut feet, mut planted, mut sum_b, mut max_b, mut sum_a, mut max_a) =
            (0, 0, 0.0_f64, 0.0_f32, 0.0_f64, 0.0_f32);
        let (mut drop_lo, mut drop_hi) = (f32::INFINITY, 0.0_f32);
        for (c, r) in gpu_res.iter().enumerate() {
            drop_lo = drop_lo.min(r.pelvis[0]);
            drop_hi = drop_hi.max(r.pelvis[0]);
            for l in 0..2 {
                feet += usize::from(r.status[l] & foot::SOLVED != 0);
                if r.status[l] & foot::HIT != 0 && chars[c].foot_weights[l] >= 1.0 {
                    planted += 1;
                    sum_b += f64::from(r.sole_before[l].abs());
                    max_b = max_b.max(r.sole_before[l].abs());
                    sum_a += f64::from(r.sole_after[l].abs());
                    max_a = max_a.max(r.sole_after[l].abs());
                }
            }
        }
        let planted_f = planted.max(1) as f64;
        println!(
            "{frame:>5} {n:>7} {feet:>6} {:>10.4}/{:<10.4} {:>10.1e}/{:<10.1e} {drop_lo:>6.3}–{drop_hi:<6.3} {cpu_ms:>9.2} {gpu_ms:>9.2} {e2e_ms:>9.2}",
            sum_b / planted_f,
            max_b,
            sum_a / planted_f,
            max_a
        );
        // Keep the two paths honest: the GPU frame equals the CPU twin.
        let worst =
            cpu_out.iter().zip(&gpu_out).map(|(a, b)| a.position().distance(b.position())).fold(0.0_f32, f32::max);
        assert!(worst < 1e-4, "GPU and CPU disagree by {worst} m");
    }
    println!("\n'before/after': |sole height above ground| of planted feet (walk-cycle weight 1) on the GPU result.");
    println!("'GPU ms': upload + dispatch + wait; 'GPU e2e': plus readback. CPU: all threads.");
    Ok(())
}
