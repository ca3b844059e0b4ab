//! `K` crowd foot-IK frames of the CPU twin on one thread and nothing else, for instruction
//! counts under valgrind: the difference between two runs with different `K` is the cost
//! of `K` frames (see `BENCHMARKS.md`). The CPU sibling of `frame_cost`.
//!
//! `cargo run --release --example cpu_cost -- stateless|placement CHARACTERS K [once] [ankle]`
//! (`once`: the rig measures the ground under each foot once, `SoleMeasure::Once`; `sole`:
//! locks hold the sole's lower end, `LockPivot::Sole`)
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::{CharacterState, FootResult, JointPose};
use crowd_ik_tools::workload::CostRun;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let mut run = CostRun::from_args("cpu_cost")?;
    let dt = 1.0 / 60.0;
    let mut out = vec![JointPose::default(); run.poses.len()];
    let mut res = vec![FootResult::default(); run.n];
    let mut states = vec![CharacterState::default(); run.n];
    let mut checksum = 0.0f64;
    // Two frames first (every state resets on the first), then `k` more.
    for _ in 0..2 + run.k {
        out.resize(run.poses.len(), JointPose::default());
        let mut job = FootIkJob::new(&run.rig, &run.ground, &run.chars, &run.poses, &mut out, &mut res);
        if run.placement {
            job.run_frame(&mut states, dt)?;
        } else {
            job.run()?;
        }
        run.step(dt);
        checksum += f64::from(res.iter().map(|r| r.pelvis[0]).sum::<f32>());
    }
    println!("{} frames of {} characters; pelvis checksum {checksum:.6}", run.k, run.n);
    Ok(())
}
