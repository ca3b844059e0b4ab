//! The main demo: a crowd walking over hills, feet planted by foot IK every frame, on the
//! GPU and checked against its CPU twin (CPU twin only when no GPU adapter is found).
//!
//! `cargo run --release --example crowd -- [characters] [frames] [--per-frame]`
//! (default 10 000 characters, 10 frames)
//!
//! Prints which adapter ran, how far the planted feet's soles were from the ground before
//! and after IK, and the time per frame of the CPU twin (all threads) and of the GPU.
//! `--per-frame` adds one row per frame. The crowd is of Khronos' Cesium Man (a glTF
//! humanoid with its own walk clip, `tests/data/gltf/CesiumMan.glb`);
//! `--character path.glb [--clip NAME] [--scale S]` makes it of your own glTF character
//! (`--scale 0.01` for one in centimetres), `--boxes` of the procedural box walker.
//!
//! `cargo run --release --example crowd -- --placement [characters] [frames]` (default 2 000
//! characters, 240 frames at 60 Hz) compares the stateless solve with foot placement across
//! frames, side by side, on terraced hills (18 cm steps along every contour, the roots set
//! from the ground under them, so they snap at every edge): foot sliding per plant, the
//! pelvis's vertical speed and jerk, the deepest point of any foot, and time per frame.

use std::time::Instant;

mod placement;

use crowd_ik::crowd::{foot, FootResult, Ground, JointPose};
use crowd_ik::glam::Vec2;
use crowd_ik::prelude::*;
use crowd_ik_tools::character::Walkers;

/// Sole height above the ground of planted feet (walk-cycle weight 1), before and after IK.
#[derive(Default)]
struct Contact {
    feet: usize,
    sum_before: f64,
    max_before: f32,
    sum_after: f64,
    max_after: f32,
    /// Planted feet whose leg fell back to FK (an error code in its status), by code.
    fallbacks: std::collections::BTreeMap<String, usize>,
}

impl Contact {
    fn add(&mut self, characters: &[CharacterInput], results: &[FootResult]) {
        for (ch, r) in characters.iter().zip(results) {
            for l in 0..2 {
                if r.status[l] & foot::HIT != 0 && ch.foot_weights[l] >= 1.0 {
                    self.feet += 1;
                    self.sum_before += f64::from(r.sole_before[l].abs());
                    self.max_before = self.max_before.max(r.sole_before[l].abs());
                    self.sum_after += f64::from(r.sole_after[l].abs());
                    self.max_after = self.max_after.max(r.sole_after[l].abs());
                    if let Some(e) = r.error(l) {
                        *self.fallbacks.entry(format!("{e:?}")).or_default() += 1;
                    }
                }
            }
        }
    }
    fn means(&self) -> (f64, f64) {
        let n = self.feet.max(1) as f64;
        (self.sum_before / n, self.sum_after / n)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    crowd_ik_tools::quiet_headless_gpu();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_frame = args.iter().any(|a| a == "--per-frame");
    if args.iter().any(|a| a == "--placement") {
        let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
        let n: usize = numbers.next().map(|s| s.parse()).transpose()?.unwrap_or(2_000);
        let frames: usize = numbers.next().map(|s| s.parse()).transpose()?.unwrap_or(240).max(2);
        return placement::compare(n, frames);
    }
    let flag_values: Vec<usize> =
        Walkers::VALUE_FLAGS.iter().filter_map(|f| args.iter().position(|a| a == f).map(|i| i + 1)).collect();
    let mut numbers =
        args.iter().enumerate().filter(|(i, a)| !a.starts_with("--") && !flag_values.contains(i)).map(|(_, a)| a);
    let n: usize = numbers.next().map(|s| s.parse()).transpose()?.unwrap_or(10_000);
    let frames: usize = numbers.next().map(|s| s.parse()).transpose()?.unwrap_or(10).max(1);
    let terrain = crowd_ik_tools::terrain::hills(Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let ground = Ground::Heightfield(terrain.clone());
    let mut crowd = Walkers::from_args(&args, n, 90.0)?;
    let rig = crowd.rig().clone();
    let joints = rig.joint_count();

    println!("crowd-ik: foot IK for {n} characters ({joints} joints each) walking over hills, {frames} frames");
    // The GPU solver on a device of its own (adapter from WGPU_ADAPTER_NAME / WGPU_BACKEND).
    let mut gpu = match GpuContext::new_default() {
        Ok(context) => {
            let info = context.adapter_info().cloned().expect("own device");
            println!(
                "GPU: {} ({:?}, {:?}), checked against the CPU twin every frame",
                info.name, info.device_type, info.backend
            );
            Some(CrowdSolver::with_context(&context, &rig, &ground)?)
        }
        Err(e) => {
            println!("{e}: running the CPU twin only");
            None
        }
    };
    if per_frame {
        println!(
            "{:>5} {:>21} {:>21} {:>9} {:>9}",
            "frame", "before mean/max (m)", "after mean/max (m)", "CPU ms", "GPU ms"
        );
    }

    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    let mut cpu_out = vec![JointPose::default(); n * joints];
    let mut cpu_res = vec![FootResult::default(); n];
    let mut gpu_out = cpu_out.clone();
    let mut gpu_res = cpu_res.clone();
    let (mut contact, mut cpu_ms, mut gpu_ms, mut gpu_read_ms, mut worst) =
        (Contact::default(), 0.0, 0.0, 0.0, 0.0_f32);
    for frame in 0..frames {
        crowd.step(1.0 / 30.0);
        crowd.frame(&terrain, &mut chars, &mut poses);

        let t = Instant::now();
        FootIkJob::new(&rig, &ground, &chars, &poses, &mut cpu_out, &mut cpu_res).run_par()?;
        let cpu = t.elapsed().as_secs_f64() * 1e3;
        cpu_ms += cpu;

        let mut gpu_frame = f64::NAN;
        let results = if let Some(gpu) = gpu.as_mut() {
            // Upload, one dispatch, wait; the readback is only for this check (a renderer
            // binds `pose_output()` for skinning and reads nothing back).
            let t = Instant::now();
            gpu.upload(&chars, &poses, &[])?;
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            gpu.encode(&mut encoder);
            gpu.queue().submit([encoder.finish()]);
            gpu.device().poll(crowd_ik::wgpu::PollType::wait_indefinitely())?;
            gpu_frame = t.elapsed().as_secs_f64() * 1e3;
            gpu_ms += gpu_frame;
            gpu.read(&mut gpu_out, &mut gpu_res)?;
            gpu_read_ms += t.elapsed().as_secs_f64() * 1e3;
            let frame_worst =
                cpu_out.iter().zip(&gpu_out).map(|(a, b)| a.position().distance(b.position())).fold(0.0_f32, f32::max);
            // The twin contract: 1e-4 × the leg's length (model units: a character in
            // centimetres has its poses in centimetres).
            let j = rig.legs[0].joints;
            let leg = poses[j[1]].position().distance(poses[j[0]].position())
                + poses[j[2]].position().distance(poses[j[1]].position());
            assert!(frame_worst < 1e-4 * leg, "GPU and CPU disagree by {frame_worst} (leg {leg}, model units)");
            worst = worst.max(frame_worst);
            &gpu_res
        } else {
            &cpu_res
        };
        let mut this = Contact::default();
        this.add(&chars, results);
        contact.add(&chars, results);
        if per_frame {
            let (b, a) = this.means();
            println!(
                "{frame:>5} {b:>10.4}/{:<10.4} {a:>10.1e}/{:<10.1e} {cpu:>9.2} {gpu_frame:>9.2}",
                this.max_before, this.max_after
            );
        }
    }
    let (before, after) = contact.means();
    println!(
        "soles of planted feet ({} foot-frames), height above the ground:\n  before IK: mean {before:.4} m, max {:.4} m\n  after IK:  mean {after:.1e} m, max {:.1e} m",
        contact.feet, contact.max_before, contact.max_after
    );
    if contact.fallbacks.is_empty() {
        println!("  every planted leg solved (no fallback to FK)");
    } else {
        println!("  planted legs left on FK, flagged: {:?}", contact.fallbacks);
    }
    let f = frames as f64;
    let threads = rayon::current_num_threads();
    print!("time per frame: CPU twin {:.2} ms ({threads} threads)", cpu_ms / f);
    if gpu.is_some() {
        println!(
            ", GPU {:.2} ms (upload + dispatch + wait; {:.2} ms with readback)\nGPU = CPU twin: worst joint difference {worst:.1e} model units",
            gpu_ms / f,
            gpu_read_ms / f
        );
    } else {
        println!();
    }
    Ok(())
}
