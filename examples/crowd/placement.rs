//! `crowd --placement`: the stateless solve and foot placement across frames, side by side on
//! terraced hills (a module of examples/crowd).

use crowd_ik::crowd::{foot, FootResult, Ground, Heightfield, JointPose};
use crowd_ik::glam::{Vec2, Vec3};
use crowd_ik::prelude::*;
use crowd_ik_tools::scene::{biped_rig, WalkingCrowd};

/// What one mode did over the run.
#[derive(Default)]
struct Stats {
    plants: usize,
    drift_sum: f64,
    drift_max: f32,
    pelvis_speed: f32,
    pelvis_jerk: f32,
    deepest: f32,
    cpu_ms: f64,
    gpu_ms: f64,
}

/// Per character: the last three pelvis heights, and per foot the stance start and drift.
#[derive(Clone, Default)]
struct Track {
    pelvis: Vec<f32>,
    stance: [Option<(Vec3, f32)>; 2],
}

impl Stats {
    fn add(&mut self, chars: &[CharacterInput], out: &[JointPose], res: &[FootResult], tracks: &mut [Track], dt: f32) {
        let n = out.len() / chars.len();
        for (c, ch) in chars.iter().enumerate() {
            let pose = &out[c * n..(c + 1) * n];
            let t = &mut tracks[c];
            t.pelvis.push(ch.to_world(pose[1].position()).y);
            if t.pelvis.len() > 4 {
                t.pelvis.remove(0);
            }
            if let [a, b, c2, d] = t.pelvis[..] {
                let v = (d - c2) / dt;
                self.pelvis_speed = self.pelvis_speed.max(v.abs());
                let jerk = (d - 3.0 * c2 + 3.0 * b - a) / (dt * dt * dt);
                self.pelvis_jerk = self.pelvis_jerk.max(jerk.abs());
            }
            for (l, ankle) in [6usize, 10].into_iter().enumerate() {
                if res[c].status[l] & foot::HIT != 0 {
                    self.deepest = self.deepest.min(res[c].sole_after[l]);
                }
                let p = ch.to_world(pose[ankle].position());
                // A plant: the span the walk cycle holds the foot down (weight 1).
                match (ch.foot_weights[l] >= 1.0, t.stance[l]) {
                    (true, None) => t.stance[l] = Some((p, 0.0)),
                    (true, Some((p0, d))) => {
                        t.stance[l] = Some((p0, d.max(Vec2::new(p.x - p0.x, p.z - p0.z).length())));
                    }
                    (false, Some((_, d))) => {
                        self.plants += 1;
                        self.drift_sum += f64::from(d);
                        self.drift_max = self.drift_max.max(d);
                        t.stance[l] = None;
                    }
                    (false, None) => {}
                }
            }
        }
    }
}

pub fn compare(n: usize, frames: usize) -> Result<(), Box<dyn std::error::Error>> {
    let dt = 1.0 / 60.0;
    let terrain: Heightfield = crowd_ik_tools::terrain::terraces(Vec2::new(-20.0, -20.0), 0.05, 801, 801, 0.9, 0.18);
    let ground = Ground::Heightfield(terrain.clone());
    let stateless = biped_rig();
    let mut settings = FootPlacement::default();
    for leg in &mut settings.legs {
        leg.plant = PlantDetection::Weights; // the walk cycle says which foot is down
    }
    let temporal = biped_rig().with_placement(Some(settings));
    println!(
        "crowd-ik: {n} walkers on terraced hills (18 cm steps on every contour, roots snapped to the ground), {frames} frames at 60 Hz"
    );
    let mut gpu = match GpuContext::new_default() {
        Ok(context) => {
            let info = context.adapter_info().cloned().expect("own device");
            println!(
                "GPU: {} ({:?}): foot placement on the GPU, checked against its CPU twin",
                info.name, info.device_type
            );
            let mut a = CrowdSolver::with_context(&context, &stateless, &ground)?;
            let mut b = CrowdSolver::with_context(&context, &temporal, &ground)?;
            a.enable_timestamps();
            b.enable_timestamps();
            Some((a, b))
        }
        Err(e) => {
            println!("{e}: CPU twin only");
            None
        }
    };
    let joints = stateless.joint_count();
    let mut crowd = WalkingCrowd::new(n, 18.0, 7);
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    let mut states = vec![CharacterState::default(); n];
    let (mut out, mut res) = (vec![JointPose::default(); n * joints], vec![FootResult::default(); n]);
    let (mut gpu_out, mut gpu_res) = (out.clone(), res.clone());
    let mut stats = [Stats { deepest: 0.0, ..Stats::default() }, Stats { deepest: 0.0, ..Stats::default() }];
    let mut tracks = [vec![Track::default(); n], vec![Track::default(); n]];
    let mut worst = 0.0f32;
    for _ in 0..frames {
        crowd.step(dt);
        crowd.frame(&terrain, &mut chars, &mut poses);
        for (mode, rig) in [&stateless, &temporal].into_iter().enumerate() {
            let t = std::time::Instant::now();
            let mut job = FootIkJob::new(rig, &ground, &chars, &poses, &mut out, &mut res);
            if mode == 0 {
                job.run_par()?;
            } else {
                job.run_frame_par(&mut states, dt)?;
            }
            stats[mode].cpu_ms += t.elapsed().as_secs_f64() * 1e3;
            stats[mode].add(&chars, &out, &res, &mut tracks[mode], dt);
            if let Some((a, b)) = gpu.as_mut() {
                let solver = if mode == 0 { a } else { b };
                solver.set_frame_time(dt)?;
                solver.solve(&chars, &poses, &[], &mut gpu_out, &mut gpu_res)?;
                stats[mode].gpu_ms += solver.device_time_ms()?.unwrap_or(f64::NAN);
                let w =
                    out.iter().zip(&gpu_out).map(|(p, q)| p.position().distance(q.position())).fold(0.0f32, f32::max);
                worst = worst.max(w);
            }
        }
    }
    let f = frames as f64;
    println!("{:<34} {:>14} {:>14}", "", "stateless", "foot placement");
    let row = |name: &str, a: String, b: String| println!("{name:<34} {a:>14} {b:>14}");
    let [s, p] = &stats;
    let mean = |s: &Stats| s.drift_sum / s.plants.max(1) as f64;
    row("plants", s.plants.to_string(), p.plants.to_string());
    row("foot sliding per plant, mean (m)", format!("{:.2e}", mean(s)), format!("{:.2e}", mean(p)));
    row("foot sliding per plant, max (m)", format!("{:.2e}", s.drift_max), format!("{:.2e}", p.drift_max));
    row("pelvis vertical speed, max (m/s)", format!("{:.2}", s.pelvis_speed), format!("{:.2}", p.pelvis_speed));
    row("pelvis vertical jerk, max (m/s³)", format!("{:.0}", s.pelvis_jerk), format!("{:.0}", p.pelvis_jerk));
    row("deepest foot point (m)", format!("{:.3}", s.deepest), format!("{:.3}", p.deepest));
    row("CPU twin, all threads (ms/frame)", format!("{:.2}", s.cpu_ms / f), format!("{:.2}", p.cpu_ms / f));
    if gpu.is_some() {
        row("GPU device time (ms/frame)", format!("{:.2}", s.gpu_ms / f), format!("{:.2}", p.gpu_ms / f));
        println!("GPU = CPU twin: worst joint difference {worst:.1e} m (both modes, every frame)");
        assert!(worst < 1e-4, "GPU and CPU twin disagree by {worst} m");
    }
    Ok(())
}
