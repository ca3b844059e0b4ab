//! The foot-IK kernel against its CPU twin (lavapipe in CI), within the kernels' tolerance
//! contract: positions within 1e-4 × leg length, rotations within 1e-3 rad, identical
//! status bits, no NaN.

mod common;

use common::crowd::*;
use common::gpu::device;
use common::quat_angle;
use common::Rng;
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::*;
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::GpuError;

/// Solves on both paths and compares.
fn compare(
    what: &str,
    rig: &FootRig,
    ground: &Ground,
    chars: &[CharacterInput],
    hits: &[GroundHit],
    poses: &[JointPose],
    leg_length: f32,
) -> Option<Vec<FootResult>> {
    let (device, queue) = device()?;
    let mut cpu_out = vec![JointPose::default(); poses.len()];
    let mut cpu_res = vec![FootResult::default(); chars.len()];
    FootIkJob { rig, ground, characters: chars, hits, poses_in: poses, poses_out: &mut cpu_out, results: &mut cpu_res }
        .run_par()
        .unwrap();
    let mut gpu = CrowdSolver::new(&device, &queue, rig, ground).unwrap();
    let mut gpu_out = vec![JointPose::default(); poses.len()];
    let mut gpu_res = vec![FootResult::default(); chars.len()];
    gpu.solve(chars, poses, hits, &mut gpu_out, &mut gpu_res).unwrap();
    let n = rig.joint_count();
    let (mut dp, mut dr) = (0.0_f32, 0.0_f32);
    // How many characters are outside the contract, printed before the first one fails.
    let outside = (0..chars.len())
        .filter(|&c| {
            cpu_res[c].status != gpu_res[c].status
                || (0..n).any(|j| {
                    let (p, q) = (cpu_out[c * n + j], gpu_out[c * n + j]);
                    !(p.position().distance(q.position()) / leg_length <= 1e-4
                        && quat_angle(p.rotation(), q.rotation()) <= 1e-3)
                })
        })
        .count();
    if outside > 0 {
        eprintln!("{what}: {outside} of {} characters outside the contract", chars.len());
    }
    for c in 0..chars.len() {
        let (a, b) = (&cpu_res[c], &gpu_res[c]);
        let ctx = || format!("{what}: character {c}\ninput {:?}\ncpu {a:?}\ngpu {b:?}", chars[c]);
        assert_eq!(a.status, b.status, "{}", ctx());
        let s = chars[c].root_ws[3].abs().max(1e-3);
        assert!((a.pelvis[0] - b.pelvis[0]).abs() <= 1e-4 * leg_length * s, "{}", ctx());
        for l in 0..4 {
            assert!((a.sole_after[l] - b.sole_after[l]).abs() <= 1e-4 * leg_length * s, "{}", ctx());
            assert!((a.sole_before[l] - b.sole_before[l]).abs() <= 1e-4 * leg_length * s, "{}", ctx());
        }
        for j in 0..n {
            let (p, q) = (cpu_out[c * n + j], gpu_out[c * n + j]);
            assert!(q.position_ms.iter().chain(&q.rotation_ms).all(|x| x.is_finite()), "{}", ctx());
            let d = p.position().distance(q.position()) / leg_length;
            let r = quat_angle(p.rotation(), q.rotation());
            dp = dp.max(d);
            dr = dr.max(r);
            assert!(d <= 1e-4 && r <= 1e-3, "joint {j}: {d:e} x leg, {r:e} rad\n{}", ctx());
        }
    }
    eprintln!("{what}: {} characters, worst {dp:e} x leg length, {dr:e} rad", chars.len());
    Some(gpu_res)
}

/// Hills with holes (NaN), a cliff and a wall higher than a hip.
fn rough_hills() -> Heightfield {
    let mut hf = hills();
    for j in 0..hf.nz {
        for i in 0..hf.nx {
            let (x, z) = (hf.origin.x + i as f32 * hf.cell, hf.origin.y + j as f32 * hf.cell);
            let k = j * hf.nx + i;
            if (x - 10.0).abs() < 1.0 && z.abs() < 30.0 {
                hf.heights[k] = f32::NAN; // a ditch of holes
            } else if (x + 10.0).abs() < 1.0 {
                hf.heights[k] -= 4.0; // a cliff
            } else if (z - 10.0).abs() < 0.6 {
                hf.heights[k] += 1.5; // a wall above the hips
            }
        }
    }
    hf
}

#[test]
fn biped_crowds_match_the_cpu() {
    let hf = rough_hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    for n in [1, 65, 10_000] {
        let mut rng = Rng(80 + n as u64);
        let (mut chars, poses) = random_crowd(&mut rng, &hf, n);
        for (k, c) in chars.iter_mut().enumerate() {
            if k % 7 == 3 {
                c.foot_weights = [0.0, 0.5, 1.0, 1.0];
            }
        }
        let Some(res) = compare(&format!("biped N={n}"), &rig, &ground, &chars, &[], &poses, LEG_LENGTH) else {
            return;
        };
        if n == 10_000 {
            let missed = res.iter().filter(|r| r.status[0] & foot::HIT == 0).count();
            assert!(missed > 100, "the holes, cliff and wall are under some feet: {missed}");
        }
    }
}

#[test]
fn angle_limited_feet_on_steep_slopes_match_the_cpu() {
    // Slopes steeper than the feet can tilt: the whole sole on the ground, lowest point
    // first, in the kernel as on the CPU.
    let rig = biped_rig();
    for degrees in [46.0_f32, 60.0] {
        let hf = slope(degrees);
        let ground = Ground::Heightfield(hf.clone());
        let mut rng = Rng(95 + degrees as u64);
        let (chars, poses) = random_crowd(&mut rng, &hf, 2000);
        let Some(res) = compare(&format!("{degrees}° slope"), &rig, &ground, &chars, &[], &poses, LEG_LENGTH) else {
            return;
        };
        let limited = res.iter().filter(|r| r.status[0] & foot::ANGLE_LIMITED != 0).count();
        assert!(limited > 300, "{degrees}°: only {limited} angle-limited left feet");
    }
}

#[test]
fn mirrored_characters_match_the_cpu() {
    // Every other character mirrored (a negative scale): the kernel reflects its root as
    // the CPU twin does.
    let hf = rough_hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    let mut rng = Rng(97);
    let (mut chars, poses) = random_crowd(&mut rng, &hf, 4000);
    for (k, c) in chars.iter_mut().enumerate() {
        *c = c.with_mirrored(k % 2 == 0);
    }
    let Some(res) = compare("mirrored bipeds", &rig, &ground, &chars, &[], &poses, LEG_LENGTH) else { return };
    let solved = res.iter().step_by(2).filter(|r| r.status[0] & foot::SOLVED != 0).count();
    assert!(solved > 1000, "mirrored characters are solved: {solved}");
}

#[test]
fn characters_whose_model_space_is_not_y_up_match_the_cpu() {
    // Z-up exports under a turned root (and roots tilted every which way): the ground's tilt
    // is measured from the world's up as each model sees it, in both twins (foot placement:
    // tests/gpu_placement.rs).
    let hf = rough_hills();
    let ground = Ground::Heightfield(hf.clone());
    let mut rng = Rng(98);
    let (mut chars, mut poses) = random_crowd(&mut rng, &hf, 2000);
    let joints = poses.len() / chars.len();
    for (c, ch) in chars.iter_mut().enumerate() {
        let turn = Quat::from_euler(
            crowd_ik::glam::EulerRot::XYZ,
            rng.range(-3.1, 3.1),
            rng.range(-3.1, 3.1),
            rng.range(-3.1, 3.1),
        );
        for p in &mut poses[c * joints..(c + 1) * joints] {
            *p = JointPose::new(turn * p.position(), turn * p.rotation());
        }
        ch.root_rotation = (Quat::from_array(ch.root_rotation) * turn.conjugate()).to_array();
    }
    let Some(res) = compare("turned model spaces", &biped_rig(), &ground, &chars, &[], &poses, LEG_LENGTH) else {
        return;
    };
    let solved = res.iter().filter(|r| r.status[0] & foot::SOLVED != 0).count();
    assert!(solved > 1000, "turned characters are solved: {solved}");
}

#[test]
fn caller_hits_and_bad_characters_match_the_cpu() {
    let mut rng = Rng(90);
    let hf = hills();
    let rig = biped_rig();
    let (mut chars, mut poses) = random_crowd(&mut rng, &hf, 500);
    // Caller hits: the heightfield under each ankle, raised 0–10 cm, and none at all for
    // every eleventh character.
    let mut hits = hits_under_ankles(&hf, &chars, &poses);
    for (k, hit) in hits.iter_mut().enumerate() {
        let c = k / MAX_LEGS;
        if c % 11 == 5 {
            *hit = GroundHit::miss();
        } else {
            hit.point_ws[1] += 0.05 * (c % 3) as f32;
        }
    }
    chars[7].root_ws[1] = f32::INFINITY;
    chars[8].root_ws[3] = 0.0;
    poses[9 * 12 + 3].position_ms[0] = f32::NAN;
    // A non-unit rotation before a NaN joint: the NaN wins, as on the CPU; alone: NotNormalized.
    poses[10 * 12 + 2].rotation_ms = [0.0, 0.0, 0.0, 2.0];
    poses[10 * 12 + 5].position_ms[1] = f32::NAN;
    poses[11 * 12 + 4].rotation_ms = [0.0, 0.0, 0.0, 2.0];
    let Some(res) = compare("biped, caller hits", &rig, &Ground::Hits, &chars, &hits, &poses, LEG_LENGTH) else {
        return;
    };
    assert!(res[7].error(0).is_some() && res[8].error(0).is_some() && res[9].error(0).is_some());
    assert_eq!(res[10].error(0), Some(crowd_ik::ChainError::NonFinite));
    assert_eq!(res[11].error(0), Some(crowd_ik::ChainError::NotNormalized));
}

#[test]
fn quadrupeds_with_pseudo_three_bone_hind_legs_match_the_cpu() {
    let (rig, pose) = quadruped();
    rig.validate().unwrap();
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let (chars, poses) = scattered(&mut Rng(91), &hf, &pose, 2000);
    let Some(res) = compare("quadruped", &rig, &ground, &chars, &[], &poses, 0.95) else { return };
    let reached =
        res.iter().flat_map(|r| r.status[..2].iter().zip(&r.sole_after[..2])).filter(|(s, _)| **s & foot::REACHED != 0);
    let mut count = 0;
    for (_, sole) in reached {
        count += 1;
        assert!(sole.abs() <= 1e-3 * 0.95, "hoof {sole} off the ground");
    }
    assert!(count > 3000, "hind hooves reached: {count}");
    assert!(res.iter().all(|r| r.status.iter().all(|s| s & foot::AGAINST_HINGE == 0)), "hinges fit the bends");
    // The front legs' hinges given the wrong sign (the hind legs' way): every front leg is
    // flagged on the GPU as on the CPU, and no hind leg.
    let mut wrong = rig.clone();
    for leg in &mut wrong.legs[2..] {
        leg.knee_axis = -leg.knee_axis;
    }
    let Some(res) = compare("quadruped, front hinges reversed", &wrong, &ground, &chars, &[], &poses, 0.95) else {
        return;
    };
    for r in &res {
        let flagged = r.status.map(|s| s & foot::AGAINST_HINGE != 0);
        assert_eq!(flagged, [false, false, true, true], "{r:?}");
    }
}

#[test]
fn crowd_solver_rejects_bad_frames() {
    let Some((device, queue)) = device() else { return };
    let rig = biped_rig();
    let ground = Ground::Heightfield(crowd_ik_tools::terrain::hills(Vec2::ZERO, 1.0, 8, 8, 1.0));
    let mut gpu = CrowdSolver::new(&device, &queue, &rig, &ground).unwrap();
    let chars = [CharacterInput::new(Vec3::ZERO, Quat::IDENTITY)];
    assert!(matches!(gpu.upload(&chars, &[JointPose::default(); 11], &[]), Err(GpuError::Input(_))));
    assert!(matches!(
        gpu.upload(&chars, &[JointPose::default(); 12], &[GroundHit::miss(); 4]),
        Err(GpuError::Input(_))
    ));
    let mut bad = rig.clone();
    bad.pelvis = 99;
    assert!(matches!(CrowdSolver::new(&device, &queue, &bad, &ground), Err(GpuError::Input(_))));
    // An empty crowd is a no-op.
    gpu.solve(&[], &[], &[], &mut [], &mut []).unwrap();
}

#[test]
fn fixed_knee_pole_directions_match_the_cpu() {
    let mut rng = Rng(92);
    let hf = hills();
    let mut rig = biped_rig();
    rig.legs[0].knee_pole = KneePole::Direction(Vec3::new(0.3, 0.0, 1.0));
    rig.legs[1].knee_pole = KneePole::FkPlane;
    let (chars, poses) = random_crowd(&mut rng, &hf, 2000);
    compare("biped, knee pole rules", &rig, &Ground::Heightfield(hf), &chars, &[], &poses, LEG_LENGTH);
}

/// A frame that never leaves the GPU: the crate's pose source samples a clip per character,
/// foot IK reads it through `set_pose_source`; equal to the CPU twin on CPU-sampled poses.
#[test]
fn poses_from_a_gpu_buffer_feed_foot_ik() {
    use crowd_ik::cpu::clip_sample::sample_clip;
    use crowd_ik::gpu::pose_source::ClipPoseSource;
    use crowd_ik_tools::scene::{biped_parents, walk_pose};
    let Some((device, queue)) = device() else { return };
    let parents = biped_parents();
    // The walk cycle as a 32-frame clip of local transforms.
    let local: Vec<JointPose> = (0..32)
        .flat_map(|f| -> Vec<JointPose> {
            let (model, _) = walk_pose(f as f32 / 32.0 * std::f32::consts::TAU);
            (0..12)
                .map(|j| {
                    let p = parents[j].map_or(JointPose::new(Vec3::ZERO, Quat::IDENTITY), |p| model[p]);
                    JointPose::new(
                        p.rotation().conjugate() * (model[j].position() - p.position()),
                        p.rotation().conjugate() * model[j].rotation(),
                    )
                })
                .collect()
        })
        .collect();
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    let mut rng = Rng(93);
    let (chars, _) = random_crowd(&mut rng, &hf, 500);
    let offsets: Vec<f32> = (0..chars.len()).map(|c| c as f32 * 0.041).collect();
    let mut source = ClipPoseSource::new(&device, &queue, &local, &parents, 1.0 / 30.0, &offsets).unwrap();
    let mut ik = CrowdSolver::new(&device, &queue, &rig, &ground).unwrap();
    ik.set_pose_source(Some(source.poses()));
    ik.upload(&chars, &[], &[]).unwrap();
    let time = 0.4;
    let mut encoder = device.create_command_encoder(&Default::default());
    source.encode(&mut encoder, time);
    ik.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let mut gpu_out = vec![JointPose::default(); chars.len() * 12];
    let mut gpu_res = vec![FootResult::default(); chars.len()];
    ik.read(&mut gpu_out, &mut gpu_res).unwrap();
    // CPU: the same clip sampled by the twin, then foot IK.
    let table: Vec<u32> = parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
    let mut poses = vec![JointPose::default(); chars.len() * 12];
    for (c, chunk) in poses.chunks_mut(12).enumerate() {
        sample_clip(&local, &table, 1.0 / 30.0, time + offsets[c], chunk);
    }
    let mut cpu_out = vec![JointPose::default(); poses.len()];
    let mut cpu_res = vec![FootResult::default(); chars.len()];
    FootIkJob {
        rig: &rig,
        ground: &ground,
        characters: &chars,
        hits: &[],
        poses_in: &poses,
        poses_out: &mut cpu_out,
        results: &mut cpu_res,
    }
    .run()
    .unwrap();
    for (a, b) in cpu_res.iter().zip(&gpu_res) {
        assert_eq!(a.status, b.status);
    }
    let worst = cpu_out.iter().zip(&gpu_out).map(|(a, b)| a.position().distance(b.position())).fold(0.0_f32, f32::max);
    assert!(worst <= 1e-4 * LEG_LENGTH, "worst {worst}");
    assert!(gpu_res.iter().any(|r| r.status[0] & foot::SOLVED != 0));
}

#[test]
fn wgpu_validation_errors_come_back_as_results() {
    let Some((device, queue)) = device() else { return };
    let rig = biped_rig();
    let mut ik = CrowdSolver::new(&device, &queue, &rig, &Ground::Heightfield(hills())).unwrap();
    // A pose source the kernel cannot bind: no STORAGE usage.
    let bad = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 12 * 32,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ik.set_pose_source(Some(&bad));
    let chars = [CharacterInput::new(Vec3::ZERO, Quat::IDENTITY)];
    assert!(matches!(ik.upload(&chars, &[], &[]), Err(GpuError::Validation(_))));
}

/// Crowds larger than one storage binding are split into segments (offset bindings into one
/// buffer per array, one dispatch each), invisible to the caller: forced here with small
/// segments, in both ground modes and with an external pose buffer.
#[test]
fn crowds_split_across_storage_bindings() {
    let Some((device, queue)) = device() else { return };
    let mut rng = Rng(94);
    let hf = hills();
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 1000);
    let hits = hits_under_ankles(&hf, &chars, &poses);
    for (ground, hits) in [(Ground::Heightfield(hf.clone()), &[][..]), (Ground::Hits, &hits[..])] {
        let mut cpu_out = vec![JointPose::default(); poses.len()];
        let mut cpu_res = vec![FootResult::default(); chars.len()];
        FootIkJob {
            rig: &rig,
            ground: &ground,
            characters: &chars,
            hits,
            poses_in: &poses,
            poses_out: &mut cpu_out,
            results: &mut cpu_res,
        }
        .run()
        .unwrap();
        let mut gpu = CrowdSolver::new(&device, &queue, &rig, &ground).unwrap();
        gpu.set_max_segment_characters(50);
        assert_eq!(gpu.segment_characters(), 48);
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        gpu.solve(&chars, &poses, hits, &mut out, &mut res).unwrap();
        for (a, b) in cpu_res.iter().zip(&res) {
            assert_eq!(a.status, b.status);
        }
        let worst = cpu_out.iter().zip(&out).map(|(a, b)| a.position().distance(b.position())).fold(0.0_f32, f32::max);
        assert!(worst <= 1e-4 * LEG_LENGTH, "worst {worst}");
        // The same frame with the FK poses in the caller's own buffer.
        let source = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: std::mem::size_of_val(&poses[..]) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&source, 0, bytemuck::cast_slice(&poses));
        gpu.set_pose_source(Some(&source));
        let mut out2 = vec![JointPose::default(); poses.len()];
        gpu.solve(&chars, &[], hits, &mut out2, &mut res).unwrap();
        assert_eq!(out, out2, "an external pose buffer gives the same frame");
    }
}

/// Extreme character scales, far roots and far caller hits: the kernel flags the same
/// characters and ignores the same hits as the CPU twin, with finite output.
#[test]
fn extreme_scales_and_far_hits_match_the_cpu() {
    let mut rng = Rng(405);
    let hf = hills();
    let rig = biped_rig();
    let (mut chars, poses) = random_crowd(&mut rng, &hf, 64);
    let mut hits = hits_under_ankles(&hf, &chars, &poses);
    let scales = [1e-44, f32::MIN_POSITIVE, 9.9e-5, 1e-4, 1e4, 1.01e4, 1e30];
    for (k, s) in scales.iter().enumerate() {
        chars[k].root_ws[3] = *s;
    }
    chars[20].root_ws[0] = -1e38;
    chars[21].root_ws[2] = 1.01e9;
    hits[30 * MAX_LEGS].point_ws[0] = -1e38;
    hits[31 * MAX_LEGS + 1].normal_ws[1] = f32::MAX;
    hits[32 * MAX_LEGS].point_ws[1] = 2e9;
    let Some(res) =
        compare("biped, extreme scales and far hits", &rig, &Ground::Hits, &chars, &hits, &poses, LEG_LENGTH)
    else {
        return;
    };
    for k in [0, 1, 2, 5, 6, 20, 21] {
        assert_eq!(res[k].error(0), Some(crowd_ik::ChainError::InvalidParameter), "character {k}");
    }
    for k in [3, 4] {
        assert_eq!(res[k].error(0), None, "character {k}: the limits solve");
    }
    assert_eq!(res[30].status[0] & foot::HIT, 0);
    assert_eq!(res[31].status[1] & foot::HIT, 0);
    assert_eq!(res[32].status[0] & foot::HIT, 0);
}

/// A glTF character's clip (Cesium Man, baked from the file) sampled on the GPU feeds foot
/// IK there: equal to the CPU twin on the same clip sampled on the CPU.
#[test]
fn a_gltf_clip_sampled_on_the_gpu_feeds_foot_ik() {
    use crowd_ik::cpu::clip_sample::sample_clip;
    use crowd_ik::gpu::pose_source::ClipPoseSource;
    let Some((device, queue)) = device() else { return };
    let (_, clip, rig, floor, _) = common::crowd::cesium_man();
    let n = clip.parents.len();
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let mut rng = Rng(17);
    let (mut chars, _) = random_crowd(&mut rng, &hf, 300);
    for ch in &mut chars {
        ch.root_ws[1] -= floor;
    }
    let offsets: Vec<f32> = (0..chars.len()).map(|c| c as f32 * 0.037).collect();
    let mut source =
        ClipPoseSource::new(&device, &queue, &clip.local, &clip.joint_parents(), clip.frame_time, &offsets).unwrap();
    let mut ik = CrowdSolver::new(&device, &queue, &rig, &ground).unwrap();
    ik.set_pose_source(Some(source.poses()));
    ik.upload(&chars, &[], &[]).unwrap();
    let time = 0.7;
    let mut encoder = device.create_command_encoder(&Default::default());
    source.encode(&mut encoder, time);
    ik.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let mut gpu_out = vec![JointPose::default(); chars.len() * n];
    let mut gpu_res = vec![FootResult::default(); chars.len()];
    ik.read(&mut gpu_out, &mut gpu_res).unwrap();
    let mut poses = vec![JointPose::default(); chars.len() * n];
    for (c, chunk) in poses.chunks_mut(n).enumerate() {
        sample_clip(&clip.local, &clip.parents, clip.frame_time, time + offsets[c], chunk);
    }
    let mut cpu_out = vec![JointPose::default(); poses.len()];
    let mut cpu_res = vec![FootResult::default(); chars.len()];
    FootIkJob::new(&rig, &ground, &chars, &poses, &mut cpu_out, &mut cpu_res).run().unwrap();
    for (a, b) in cpu_res.iter().zip(&gpu_res) {
        assert_eq!(a.status, b.status);
    }
    let leg = common::crowd::leg_length(&rig, &poses[..n]);
    let worst = cpu_out.iter().zip(&gpu_out).map(|(a, b)| a.position().distance(b.position())).fold(0.0_f32, f32::max);
    eprintln!("Cesium Man's clip sampled on the GPU, foot IK there: worst GPU − CPU {worst:.2e} m (leg {leg:.3} m)");
    assert!(worst <= 1e-4 * leg, "worst {worst}");
    assert!(gpu_res.iter().filter(|r| r.status[0] & foot::SOLVED != 0).count() > 100);
}

/// `SoleMeasure::Once` (the ground measured once, under each animated foot) on both twins
/// alike; on the CPU it moves feet on hills (up to 0.8 mm on smooth ones; up to 0.2 m where
/// a sole straddles the rough hills' cliffs, walls and holes), where the default measures
/// again under the turned foot, and none on flat ground, where both are one measure.
#[test]
fn a_sole_measured_once_matches_the_cpu() {
    let solve = |rig: &FootRig, ground: &Ground, chars: &[CharacterInput], poses: &[JointPose]| {
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        FootIkJob {
            rig,
            ground,
            characters: chars,
            hits: &[],
            poses_in: poses,
            poses_out: &mut out,
            results: &mut res,
        }
        .run()
        .unwrap();
        out
    };
    let twice = biped_rig();
    let once = biped_rig().with_sole_measure(SoleMeasure::Once);
    let flat = Heightfield::from_fn(Vec2::new(-60.0, -60.0), 1.0, 121, 121, |_, _| 0.0).unwrap();
    for (name, hf) in [("hills", hills()), ("rough hills", rough_hills()), ("flat", flat)] {
        let ground = Ground::Heightfield(hf.clone());
        let mut rng = Rng(131);
        let (chars, poses) = random_crowd(&mut rng, &hf, 2000);
        let (a, b) = (solve(&twice, &ground, &chars, &poses), solve(&once, &ground, &chars, &poses));
        let moved = a.iter().zip(&b).map(|(p, q)| p.position().distance(q.position())).fold(0.0f32, f32::max);
        eprintln!("{name}: measuring once moves a joint by up to {moved:e} m");
        if name == "flat" {
            assert_eq!(a, b, "flat ground is one measure either way");
        } else {
            assert!(moved > 1e-4, "the second measure moves feet on {name}: {moved}");
        }
        if compare(&format!("sole measured once, {name}"), &once, &ground, &chars, &[], &poses, LEG_LENGTH).is_none() {
            return;
        }
    }
}
