//! `K` crowd foot-IK frames on the GPU and nothing else, for instruction counts of the
//! kernel under valgrind (lavapipe's JIT code included): the difference between two runs
//! with different `K` is the cost of `K` frames (see `BENCHMARKS.md`).
//!
//! `cargo run --release --example frame_cost -- stateless|placement CHARACTERS K`
use crowd_ik::crowd::{CharacterInput, FootResult, Ground, JointPose};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::scene::WalkingCrowd;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    crowd_ik_tools::quiet_headless_gpu();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, n, k] = args.as_slice() else {
        return Err("usage: frame_cost stateless|placement CHARACTERS FRAMES".into());
    };
    let placement = match mode.as_str() {
        "stateless" => false,
        "placement" => true,
        _ => return Err(format!("unknown mode {mode}").into()),
    };
    let (n, k): (usize, usize) = (n.parse()?, k.parse()?);
    // The bench's crowd workload: walkers over hills, plants detected by speed.
    let (terrain, rig) = crowd_ik_tools::workload::crowd_frame(placement);
    let ground = Ground::Heightfield(terrain.clone());
    let dt = 1.0 / 60.0;
    let mut walkers = WalkingCrowd::new(n, 90.0, 1);
    let (mut chars, mut poses): (Vec<CharacterInput>, Vec<JointPose>) = (Vec::new(), Vec::new());
    walkers.frame(&terrain, &mut chars, &mut poses);
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); n];
    let own = GpuSolver::new_default()?;
    let mut gpu = CrowdSolver::with_context(own.context(), &rig, &ground)?;
    gpu.set_frame_time(dt)?;
    // A first frame (every state resets), then the timed frames go on from this one.
    gpu.solve(&chars, &poses, &[], &mut out, &mut res)?;
    walkers.step(dt);
    walkers.frame(&terrain, &mut chars, &mut poses);
    gpu.solve(&chars, &poses, &[], &mut out, &mut res)?;
    let t = std::time::Instant::now();
    for _ in 0..k {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder);
        gpu.queue().submit([encoder.finish()]);
        gpu.device().poll(crowd_ik::wgpu::PollType::wait_indefinitely())?;
    }
    println!("{:.3} ms per frame (wall)", t.elapsed().as_secs_f64() * 1e3 / k.max(1) as f64);
    Ok(())
}
