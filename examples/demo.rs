//! Solves a small batch of each chain kind on the CPU and prints what happened.
//!
//! `cargo run --release --example demo`

use crowd_ik::prelude::*;
use glam::{Quat, Vec3};

fn main() -> Result<(), IkError> {
    // --- Two-bone: eight legs stepping onto ground of different heights. ---
    let hip = Vec3::new(0.1, 0.95, 0.0);
    let knee = Vec3::new(0.1, 0.52, 0.06);
    let ankle = Vec3::new(0.1, 0.1, 0.0);
    let legs: Vec<TwoBoneChain> = (0..8)
        .map(|i| {
            let ground = -0.15 + 0.05 * i as f32;
            let mut c = TwoBoneChain::new([hip, knee, ankle], [Quat::IDENTITY; 3], Vec3::new(0.1, 0.1 + ground, 0.05))
                .with_mid_axis(-Vec3::X) // knee hinge: the knee bends forward (+Z) about local −X
                .with_pole_direction(Vec3::Z) // knee points forward
                .with_knee_limits(5f32.to_radians(), 175f32.to_radians())
                .with_keep_end_rotation(true);
            if i == 7 {
                c = c.with_target(hip); // bad input: target on the hip
            }
            c
        })
        .collect();
    let mut solved = vec![TwoBoneSolved::default(); legs.len()];
    let summary = TwoBoneJob::new(&legs, &mut solved).run_par()?;
    println!("two-bone: {summary:?}");
    for (i, (c, s)) in legs.iter().zip(&solved).enumerate() {
        println!(
            "  leg {i}: target y {:+.3} -> ankle {:.3?} knee angle {:6.1} deg reached {} {}",
            c.limb.target().y,
            s.position(2).to_array(),
            (s.position(0) - s.position(1)).angle_between(s.position(2) - s.position(1)).to_degrees(),
            s.reached(),
            s.error().map(|e| format!("fallback: {e}")).unwrap_or_default()
        );
    }

    // --- Pseudo three-bone: a quadruped hind leg reaching with its hoof. ---
    let joints =
        [Vec3::new(0.0, 1.2, 0.0), Vec3::new(0.0, 0.8, 0.25), Vec3::new(0.0, 0.45, -0.05), Vec3::new(0.0, 0.05, 0.02)];
    let hind: Vec<ThreeBoneChain> = [0.0, 0.5, 1.0]
        .iter()
        .map(|&ratio| {
            ThreeBoneChain::new(joints, [Quat::IDENTITY; 4], Vec3::new(0.05, 0.2, 0.15))
                .with_mid_axis(-Vec3::X)
                .with_blend(ratio)
        })
        .collect();
    let mut solved3 = vec![ThreeBoneSolved::default(); hind.len()];
    println!("three-bone: {:?}", ThreeBoneJob::new(&hind, &mut solved3).run()?);
    for (c, s) in hind.iter().zip(&solved3) {
        println!(
            "  blend {:.1}: hoof {:.3?} hock turned {:5.1} deg from FK, reached {}",
            c.blend[0],
            s.position(3).to_array(),
            s.rotation(2).angle_between(c.rotation(2)).to_degrees(),
            s.reached()
        );
    }

    // --- FABRIK: a 8-joint tail reaching, 16 fixed iterations. ---
    let tail: Vec<Vec3> = (0..8).map(|i| Vec3::new(0.0, 1.0, -0.15 * i as f32)).collect();
    let rotations = [Quat::IDENTITY; 8];
    let tails: Vec<FabrikChain> = [Vec3::new(0.5, 1.2, -0.6), Vec3::new(-0.3, 0.4, -0.5), Vec3::new(0.0, 1.0, -3.0)]
        .iter()
        .map(|&t| FabrikChain::new(&tail, &rotations, t, 16))
        .collect();
    let mut solved_f = vec![FabrikSolved::default(); tails.len()];
    println!("fabrik: {:?}", FabrikJob::new(&tails, &mut solved_f).run()?);
    for (c, s) in tails.iter().zip(&solved_f) {
        println!(
            "  target {:.2?}: tip {:.3?} error {:.2e} reached {} out of reach {}",
            c.target_ms[..3].to_vec(),
            s.position(7).to_array(),
            s.position(7).distance(Vec3::from_slice(&c.target_ms[..3])),
            s.reached(),
            s.info() & info::OUT_OF_REACH != 0
        );
    }
    Ok(())
}
