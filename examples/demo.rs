//! Solves a small batch of each solver on the CPU (two-bone, pseudo three-bone, FABRIK,
//! constrained FABRIK, CCD, multi-effector FABRIK, look-at) and prints what happened.
//!
//! `cargo run --release --example demo`

use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;

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

    // --- Joint limits: the same tail with hinges (±40°) and swing cones (30° x 20°), solved
    // by constrained FABRIK (as is, and with its hinges aligned), and by CCD (at most 0.3
    // rad per joint per visit), tip first (Unreal's order) and root first. ---
    let mut limits = ChainLimits::default().with_rest_from_pose(Quat::IDENTITY, &rotations);
    for i in 0..7 {
        limits = if i % 2 == 0 {
            limits.with_hinge(i, Quat::IDENTITY, Vec3::X, -0.7, 0.7)
        } else {
            limits.with_cone(i, Quat::IDENTITY, Vec3::X, [0.52, 0.35], None)
        };
    }
    let constrained: Vec<ConstrainedFabrikChain> =
        tails.iter().map(|c| ConstrainedFabrikChain::new(*c, limits)).collect();
    let ccd: Vec<CcdChain> = tails.iter().map(|c| CcdChain::new(*c, limits).with_max_step(0.3)).collect();
    let mut solved_c = vec![FabrikSolved::default(); tails.len()];
    let ccd_root_first: Vec<CcdChain> = ccd.iter().map(|c| c.with_root_first(true)).collect();
    let mut solved_d = vec![FabrikSolved::default(); tails.len()];
    let mut solved_e = vec![FabrikSolved::default(); tails.len()];
    println!("constrained fabrik: {:?}", ConstrainedFabrikJob::new(&constrained, &mut solved_c).run()?);
    println!("ccd: {:?}", CcdJob::new(&ccd, &mut solved_d).run()?);
    println!("ccd, root first: {:?}", CcdJob::new(&ccd_root_first, &mut solved_e).run()?);
    let aligned: Vec<ConstrainedFabrikChain> = constrained.iter().map(|c| c.with_align_hinges(true)).collect();
    let mut solved_f = vec![FabrikSolved::default(); tails.len()];
    println!("constrained fabrik, aligned hinges: {:?}", ConstrainedFabrikJob::new(&aligned, &mut solved_f).run()?);
    for ((((c, a), b), e), f) in tails.iter().zip(&solved_c).zip(&solved_d).zip(&solved_e).zip(&solved_f) {
        let target = Vec3::from_slice(&c.target_ms[..3]);
        let bend = |s: &FabrikSolved| (0..7).map(|k| quat_angle(s.correction(k))).fold(0.0_f32, f32::max).to_degrees();
        println!(
            "  target {:.2?}: constrained tip error {:.3} (largest joint turn {:.1} deg), aligned hinges {:.3} ({:.1} deg), CCD {:.3} ({:.1} deg), root first {:.3} ({:.1} deg)",
            c.target_ms[..3].to_vec(),
            a.position(7).distance(target),
            bend(a),
            f.position(7).distance(target),
            bend(f),
            b.position(7).distance(target),
            bend(b),
            e.position(7).distance(target),
            bend(e)
        );
    }

    // --- Multi-effector FABRIK: a chest with two arms reaching for two points and a head. ---
    let parents = [0, 0, 1, 2, 2, 4, 5, 2, 7, 8];
    let offsets = [
        Vec3::ZERO,
        Vec3::Y * 0.2,
        Vec3::Y * 0.2,
        Vec3::Y * 0.25,
        Vec3::new(0.2, 0.15, 0.0),
        Vec3::X * 0.3,
        Vec3::X * 0.25,
        Vec3::new(-0.2, 0.15, 0.0),
        Vec3::NEG_X * 0.3,
        Vec3::NEG_X * 0.25,
    ];
    let mut joints = vec![Vec3::new(0.0, 1.0, 0.0)];
    for j in 1..parents.len() {
        joints.push(joints[parents[j]] + offsets[j]);
    }
    let tree = MultiFabrikChain::new(&joints, &[Quat::IDENTITY; 10], &parents, 32)
        .with_effector(6, Vec3::new(0.5, 1.2, 0.4), 1.0)
        .with_effector(9, Vec3::new(-0.3, 1.6, 0.3), 1.0)
        .with_effector(3, Vec3::new(0.0, 1.6, 0.15), 0.5)
        .with_precision(1e-3);
    let mut solved_t = [MultiFabrikSolved::default()];
    println!("multi-effector fabrik: {:?}", MultiFabrikJob::new(&[tree], &mut solved_t).run()?);
    for e in 0..tree.effector_count() {
        let j = tree.effectors[e] as usize;
        println!("  effector on joint {j}: error {:.4} m", solved_t[0].position(j).distance(tree.target(e)));
    }

    // --- Look-at: neck (weight 0.4), head and two eyes turning toward a point, with limits. ---
    let (neck, head) = (Vec3::new(0.0, 1.5, 0.0), Vec3::new(0.0, 1.62, 0.02));
    let heads: Vec<LookAtChain> = [Vec3::new(1.0, 1.6, 2.0), Vec3::new(-2.0, 1.0, -1.0)]
        .iter()
        .map(|&target| {
            LookAtChain::new(target)
                .with_joint(None, neck, Quat::IDENTITY, Vec3::Z, Vec3::Y, 0.4)
                .with_joint(Some(0), head, Quat::IDENTITY, Vec3::Z, Vec3::Y, 1.0)
                .with_joint(Some(1), head + Vec3::new(0.03, 0.08, 0.09), Quat::IDENTITY, Vec3::Z, Vec3::Y, 1.0)
                .with_joint(Some(1), head + Vec3::new(-0.03, 0.08, 0.09), Quat::IDENTITY, Vec3::Z, Vec3::Y, 1.0)
                .with_limits(1, Quat::IDENTITY, [-1.2, 1.2], [-0.6, 0.8])
                .with_up_target(Some(head + Vec3::Y * 10.0))
        })
        .collect();
    let mut solved_l = vec![LookAtSolved::default(); heads.len()];
    println!("look-at: {:?}", LookAtJob::new(&heads, &mut solved_l).run()?);
    for (c, s) in heads.iter().zip(&solved_l) {
        let dir = s.rotation(1) * Vec3::Z;
        println!(
            "  target {:.1?}: neck and head turned {:.1} deg, a limit hit {}, reached {}",
            c.target().to_array(),
            quat_angle(s.correction(0) * s.correction(1)).to_degrees(),
            s.info() & info::LIMITED != 0,
            s.reached() && dir.is_finite()
        );
    }
    Ok(())
}

/// A rotation's angle, radians.
fn quat_angle(q: Quat) -> f32 {
    2.0 * q.xyz().length().atan2(q.w.abs())
}
