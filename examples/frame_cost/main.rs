//! `K` crowd foot-IK frames on the GPU and nothing else, for instruction counts of the
//! kernel under valgrind (lavapipe's JIT code included): the difference between two runs
//! with different `K` is the cost of `K` frames (see `BENCHMARKS.md`).
//!
//! `cargo run --release --example frame_cost -- stateless|placement CHARACTERS K [once] [ankle]`
//! (as `cpu_cost`)
use crowd_ik::crowd::{FootResult, JointPose};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::workload::CostRun;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    crowd_ik_tools::quiet_headless_gpu();
    // The bench's crowd workload: walkers over hills, plants detected by speed.
    let mut run = CostRun::from_args("frame_cost")?;
    let dt = 1.0 / 60.0;
    let mut out = vec![JointPose::default(); run.poses.len()];
    let mut res = vec![FootResult::default(); run.n];
    let own = GpuSolver::new_default()?;
    let mut gpu = CrowdSolver::with_context(own.context(), &run.rig, &run.ground)?;
    gpu.set_frame_time(dt)?;
    // A first frame (every state resets), then the timed frames go on from this one.
    gpu.solve(&run.chars, &run.poses, &[], &mut out, &mut res)?;
    run.step(dt);
    gpu.solve(&run.chars, &run.poses, &[], &mut out, &mut res)?;
    let t = std::time::Instant::now();
    for _ in 0..run.k {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder);
        gpu.queue().submit([encoder.finish()]);
        gpu.device().poll(crowd_ik::wgpu::PollType::wait_indefinitely())?;
    }
    println!("{:.3} ms per frame (wall)", t.elapsed().as_secs_f64() * 1e3 / run.k.max(1) as f64);
    Ok(())
}
