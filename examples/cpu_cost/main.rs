//! `K` crowd foot-IK frames of the CPU twin on one thread and nothing else, for instruction
//! counts under valgrind: the difference between two runs with different `K` is the cost
//! of `K` frames (see `BENCHMARKS.md`). The CPU sibling of `frame_cost`.
//!
//! `cargo run --release --example cpu_cost -- stateless|placement CHARACTERS K`
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::{CharacterInput, CharacterState, FootResult, Ground, JointPose};
use crowd_ik_tools::scene::WalkingCrowd;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, n, k] = args.as_slice() else {
        return Err("usage: cpu_cost stateless|placement CHARACTERS FRAMES".into());
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
    let mut out: Vec<JointPose> = Vec::new();
    let mut res = vec![FootResult::default(); n];
    let mut states = vec![CharacterState::default(); n];
    let mut checksum = 0.0f64;
    // Two frames first (every state resets on the first), then `k` more.
    for _ in 0..2 + k {
        walkers.frame(&terrain, &mut chars, &mut poses);
        out.resize(poses.len(), JointPose::default());
        let mut job = FootIkJob::new(&rig, &ground, &chars, &poses, &mut out, &mut res);
        if placement {
            job.run_frame(&mut states, dt)?;
        } else {
            job.run()?;
        }
        walkers.step(dt);
        checksum += f64::from(res.iter().map(|r| r.pelvis[0]).sum::<f32>());
    }
    println!("{k} frames of {n} characters ({mode}); pelvis checksum {checksum:.6}");
    Ok(())
}
