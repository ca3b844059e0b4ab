//! Foot placement on the GPU against its CPU twin (lavapipe in CI): a crowd walking over
//! hills for hundreds of frames, each twin evolving its own state, compared every frame
//! within the kernels' contract (positions within 1e-4 × leg length, rotations within
//! 1e-3 rad, identical status bits), with resets, despawns and spawns on the way.

mod common;

use common::gpu::state_devices;
use common::quat_angle;
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::*;
use crowd_ik::glam::Vec2;
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::GpuError;
use crowd_ik::IkError;
use crowd_ik_tools::scene::{biped_rig, WalkingCrowd};

const LEG: f32 = 2.0 * crowd_ik_tools::scene::BONE;

/// The worst differences of one frame; panics past the contract.
#[derive(Default, Debug)]
struct Worst {
    position: f32,
    rotation: f32,
    pelvis: f32,
    /// Model units per world unit where the characters are scaled (joint positions are
    /// compared in model units against 1e-4 × the leg in them); 0 for 1.
    model_units: f32,
}

#[allow(clippy::too_many_arguments)]
fn compare_frame(
    frame: usize,
    n: usize,
    chars: &[CharacterInput],
    cpu: (&[JointPose], &[FootResult], &[CharacterState]),
    gpu: (&[JointPose], &[FootResult], &[CharacterState]),
    worst: &mut Worst,
) {
    for c in 0..chars.len() {
        let ctx = || format!("frame {frame}, character {c}\ncpu {:?}\ngpu {:?}", cpu.1[c], gpu.1[c]);
        assert_eq!(cpu.1[c].status, gpu.1[c].status, "{}", ctx());
        assert_eq!(cpu.2[c].flags, gpu.2[c].flags, "{}", ctx());
        let dp = (cpu.1[c].pelvis[0] - gpu.1[c].pelvis[0]).abs();
        worst.pelvis = worst.pelvis.max(dp);
        assert!(dp <= 1e-4 * LEG, "pelvis {dp:e}\n{}", ctx());
        for j in 0..n {
            let (p, q) = (cpu.0[c * n + j], gpu.0[c * n + j]);
            assert!(q.position_ms.iter().chain(&q.rotation_ms).all(|x| x.is_finite()), "{}", ctx());
            let d = p.position().distance(q.position());
            let r = quat_angle(p.rotation(), q.rotation());
            worst.position = worst.position.max(d);
            worst.rotation = worst.rotation.max(r);
            let units = if worst.model_units > 0.0 { worst.model_units } else { 1.0 };
            assert!(d <= 1e-4 * LEG * units && r <= 1e-3, "joint {j}: {d:e} model units, {r:e} rad\n{}", ctx());
        }
    }
}

/// One frame on both twins from their own states (the CPU's in `states`, the GPU's in its
/// buffer), compared within the contract; returns the CPU's poses and results.
#[allow(clippy::too_many_arguments)]
fn frame_both(
    gpu: &mut CrowdSolver,
    (rig, ground, hits): (&FootRig, &Ground, &[GroundHit]),
    chars: &[CharacterInput],
    poses: &[JointPose],
    states: &mut [CharacterState],
    dt: f32,
    frame: usize,
    worst: &mut Worst,
) -> (Vec<JointPose>, Vec<FootResult>) {
    let n = rig.joint_count();
    let mut cpu_out = vec![JointPose::default(); poses.len()];
    let mut cpu_res = vec![FootResult::default(); chars.len()];
    let mut job = FootIkJob::new(rig, ground, chars, poses, &mut cpu_out, &mut cpu_res);
    job.hits = hits;
    job.run_frame_par(states, dt).unwrap();
    gpu.set_frame_time(dt).unwrap();
    let mut gpu_out = vec![JointPose::default(); poses.len()];
    let mut gpu_res = vec![FootResult::default(); chars.len()];
    gpu.solve(chars, poses, hits, &mut gpu_out, &mut gpu_res).unwrap();
    let mut gpu_states = vec![CharacterState::default(); chars.len()];
    gpu.read_states(&mut gpu_states).unwrap();
    compare_frame(frame, n, chars, (&cpu_out, &cpu_res, states), (&gpu_out, &gpu_res, &gpu_states), worst);
    (cpu_out, cpu_res)
}

#[test]
fn foot_placement_on_the_gpu_follows_its_cpu_twin_for_300_frames() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        foot_placement_on_the_gpu_follows_its_cpu_twin_for_300_frames_on(&device, &queue);
    }
}

fn foot_placement_on_the_gpu_follows_its_cpu_twin_for_300_frames_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let ground = Ground::Heightfield(hf.clone());
    let mut placement = FootPlacement::default();
    placement.legs[1].pivot = LockPivot::Ball;
    for leg in &mut placement.legs {
        leg.plant = PlantDetection::Speed { enter: 0.5, exit: 0.8 };
    }
    let rig = biped_rig().with_placement(Some(placement));
    let n = rig.joint_count();
    let total = 11_000;
    let mut crowd = WalkingCrowd::new(total, 90.0, 3);
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut alive: Vec<usize> = (0..10_000).collect();
    let mut states = vec![CharacterState::default(); alive.len()];
    let (mut all_chars, mut all_poses) = (Vec::new(), Vec::new());
    let mut worst = Worst::default();
    let mut locked = 0usize;
    let dt = 1.0 / 60.0;
    for frame in 0..300 {
        // Lifecycle: despawn every ninth character at frame 100, spawn 1000 at frame 150,
        // reset (teleport) the first 50 at frame 200.
        let map: Option<Vec<Option<usize>>> = match frame {
            100 => {
                let kept: Vec<usize> = (0..alive.len()).filter(|&i| !alive[i].is_multiple_of(9)).collect();
                alive = kept.iter().map(|&i| alive[i]).collect();
                Some(kept.into_iter().map(Some).collect())
            }
            150 => {
                let old = alive.len();
                alive.extend(10_000..total);
                Some((0..alive.len()).map(|i| (i < old).then_some(i)).collect())
            }
            _ => None,
        };
        if let Some(map) = map {
            states = remap_states(&states, &map);
            gpu.remap_states(&map).unwrap();
        }
        if frame == 200 {
            let reset: Vec<usize> = (0..50).collect();
            for &c in &reset {
                states[c] = CharacterState::default();
            }
            gpu.reset_states(&reset);
        }
        crowd.step(dt);
        crowd.frame(&hf, &mut all_chars, &mut all_poses);
        let chars: Vec<CharacterInput> = alive.iter().map(|&k| all_chars[k]).collect();
        let poses: Vec<JointPose> = alive.iter().flat_map(|&k| all_poses[k * n..(k + 1) * n].to_vec()).collect();
        let (_, cpu_res) =
            frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        let resets = cpu_res.iter().filter(|r| r.status[0] & foot::RESET != 0).count();
        let expected = match frame {
            0 => chars.len(),
            150 => 1000,
            200 => 50,
            _ => 0,
        };
        assert_eq!(resets, expected, "frame {frame}: characters reset");
        locked += cpu_res.iter().map(|r| (r.status[0] & foot::LOCKED != 0) as usize).sum::<usize>();
    }
    eprintln!(
        "300 frames, 10 000 → 8 888 → 9 888 characters: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; {locked} locked left-foot frames",
        worst.position, worst.rotation, worst.pelvis
    );
    assert!(locked > 300 * 1000, "feet lock: {locked}");
}

/// Characters whose model space is not Y-up (each root turned every which way, its poses
/// turned back): foot placement on the GPU follows its CPU twin for 90 frames of a walk.
#[test]
fn turned_model_spaces_follow_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        turned_model_spaces_follow_the_cpu_twin_on(&device, &queue);
    }
}

fn turned_model_spaces_follow_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::glam::{EulerRot, Quat};
    let (hf, ground, rig) = small_scene();
    let mut crowd = WalkingCrowd::new(64, 15.0, 5);
    let turns: Vec<Quat> = (0..64)
        .map(|c| Quat::from_euler(EulerRot::XYZ, 0.7 * c as f32, 1.3 * c as f32 + 0.2, 0.4 * c as f32 - 1.0))
        .collect();
    let n = rig.joint_count();
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); 64];
    let mut worst = Worst::default();
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    for f in 0..90 {
        crowd.step(1.0 / 60.0);
        crowd.frame(&hf, &mut chars, &mut poses);
        for (c, ch) in chars.iter_mut().enumerate() {
            for p in &mut poses[c * n..(c + 1) * n] {
                *p = JointPose::new(turns[c] * p.position(), turns[c] * p.rotation());
            }
            ch.root_rotation = (Quat::from_array(ch.root_rotation) * turns[c].conjugate()).to_array();
        }
        frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, 1.0 / 60.0, f, &mut worst);
    }
    eprintln!("turned model spaces, 90 frames × 64: {worst:?}");
}

/// Small hills and the biped with default foot placement.
fn small_scene() -> (Heightfield, Ground, FootRig) {
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-20.0, -20.0), 0.5, 81, 81, 0.3);
    (hf.clone(), Ground::Heightfield(hf), biped_rig().with_placement(Some(FootPlacement::default())))
}

#[test]
fn bad_frame_times_and_states_are_refused_or_reset() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        bad_frame_times_and_states_are_refused_or_reset_on(&device, &queue);
    }
}

fn bad_frame_times_and_states_are_refused_or_reset_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    let (hf, ground, rig) = small_scene();
    let crowd = WalkingCrowd::new(64, 15.0, 5);
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    crowd.frame(&hf, &mut chars, &mut poses);
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    for dt in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.01] {
        assert!(matches!(gpu.set_frame_time(dt), Err(GpuError::Input(IkError::InvalidFrameTime(_)))), "{dt}");
    }
    let mut states = vec![CharacterState::default(); chars.len()];
    let run = |gpu: &mut CrowdSolver, chars: &[CharacterInput], states: &mut Vec<CharacterState>, dt: f32| {
        frame_both(gpu, (&rig, &ground, &[]), chars, &poses, states, dt, 0, &mut Worst::default())
    };
    for dt in [1.0 / 60.0, 0.0, 1.0 / 60.0, 1.0 / 60.0] {
        let (_, res) = run(&mut gpu, &chars, &mut states, dt);
        assert!(res.iter().all(|r| r.status[0] & foot::RESET == 0) || !states.is_empty());
    }
    // A hitch of 2 s: every character resets, flagged; nothing is NaN.
    let (out, res) = run(&mut gpu, &chars, &mut states, 2.0);
    assert!(res.iter().all(|r| r.status[0] & foot::RESET != 0 && r.status[1] & foot::RESET != 0));
    assert!(out.iter().all(|p| p.position_ms.iter().chain(&p.rotation_ms).all(|x| x.is_finite())));
    let (_, res) = run(&mut gpu, &chars, &mut states, 1.0 / 60.0);
    assert!(res.iter().all(|r| r.status[0] & foot::RESET == 0));
    // A character whose input turns NaN is flagged and its state reset; its neighbours run
    // on untouched; when its input is good again it resets and runs.
    let mut bad = chars.clone();
    bad[5].root_ws[1] = f32::NAN;
    let before = states.clone();
    let (out, res) = run(&mut gpu, &bad, &mut states, 1.0 / 60.0);
    assert_eq!(res[5].error(0), Some(crowd_ik::ChainError::NonFinite));
    assert!(!states[5].is_valid());
    assert!(out.iter().all(|p| p.position_ms.iter().chain(&p.rotation_ms).all(|x| x.is_finite())));
    assert!(states.iter().zip(&before).enumerate().all(|(c, (a, b))| c == 5 || a.is_valid() && b.is_valid()));
    let (_, res) = run(&mut gpu, &chars, &mut states, 1.0 / 60.0);
    assert!(res[5].status[0] & foot::RESET != 0 && res[4].status[0] & foot::RESET == 0);
    // A state with NaN in it (memory corruption, a bad copy): that character resets, flagged.
    states[7].legs[0].plane[3] = f32::NAN;
    let mut gpu_states = vec![CharacterState::default(); chars.len()];
    gpu.read_states(&mut gpu_states).unwrap();
    gpu_states[7].legs[0].plane[3] = f32::NAN;
    gpu.write_states(0, &gpu_states).unwrap();
    assert!(gpu.write_states(1, &gpu_states).is_err());
    let (_, res) = run(&mut gpu, &chars, &mut states, 1.0 / 60.0);
    assert!(res[7].status[0] & foot::RESET != 0 && res[6].status[0] & foot::RESET == 0);
}

/// The crowd grows past the buffers' capacity between frames: the buffers grow, every
/// character keeps its state (no reset), the new ones start from a reset; the twin agrees.
/// Segments of 64 characters (one binding each) are forced, so states are bound at offsets.
#[test]
fn growing_crowds_keep_every_state() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        growing_crowds_keep_every_state_on(&device, &queue);
    }
}

fn growing_crowds_keep_every_state_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    let (hf, ground, rig) = small_scene();
    let n = rig.joint_count();
    let mut crowd = WalkingCrowd::new(200, 15.0, 9);
    let (mut all_chars, mut all_poses) = (Vec::new(), Vec::new());
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    gpu.set_max_segment_characters(64);
    let mut states: Vec<CharacterState> = Vec::new();
    let dt = 1.0 / 60.0;
    for (frame, count) in [50usize, 50, 50, 200, 200].into_iter().enumerate() {
        crowd.step(dt);
        crowd.frame(&hf, &mut all_chars, &mut all_poses);
        let chars = &all_chars[..count];
        let poses = &all_poses[..count * n];
        states.resize(count, CharacterState::default()); // the CPU twin's crowd grows too
        let (_, res) =
            frame_both(&mut gpu, (&rig, &ground, &[]), chars, poses, &mut states, dt, frame, &mut Worst::default());
        let resets: Vec<bool> = res.iter().map(|r| r.status[0] & foot::RESET != 0).collect();
        match frame {
            0 => assert!(resets.iter().all(|&r| r)),
            3 => {
                assert!(resets[..50].iter().all(|&r| !r), "the first 50 kept their state as the buffers grew");
                assert!(resets[50..].iter().all(|&r| r), "the new ones start from a reset");
            }
            _ => assert!(resets.iter().all(|&r| !r)),
        }
    }
}

/// Every kind of leg with foot placement on caller hits: quadrupeds (pseudo three-bone hind
/// legs, two-bone front legs, one of them pivoting about the ball) trotting over hills with
/// gait weights (plants from the weights), hits that miss for a while, mirrored and scaled
/// characters, resets: the GPU follows its CPU twin every frame.
#[test]
fn quadrupeds_on_caller_hits_follow_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        quadrupeds_on_caller_hits_follow_the_cpu_twin_on(&device, &queue);
    }
}

fn quadrupeds_on_caller_hits_follow_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use common::crowd::quadruped;
    let hf = common::crowd::hills();
    let (rig, pose) = quadruped();
    let mut placement = FootPlacement::default();
    for leg in &mut placement.legs {
        leg.plant = PlantDetection::Weights;
    }
    placement.legs[3].pivot = LockPivot::Ball;
    let rig = rig.with_placement(Some(placement));
    let count = 1500;
    let mut rng = common::Rng(93);
    let starts: Vec<(crowd_ik::glam::Vec3, f32, f32)> = (0..count)
        .map(|k| {
            let p = crowd_ik::glam::Vec3::new(rng.range(-45.0, 45.0), 0.0, rng.range(-45.0, 45.0));
            (p, rng.range(-3.1, 3.1), if k % 7 == 3 { -rng.range(0.9, 1.1) } else { rng.range(0.9, 1.1) })
        })
        .collect();
    let poses: Vec<JointPose> = (0..count).flat_map(|_| pose.iter().copied()).collect();
    let mut gpu = CrowdSolver::new(device, queue, &rig, &Ground::Hits).unwrap();
    let mut states = vec![CharacterState::default(); count];
    let mut worst = Worst::default();
    let (mut locked, mut missed) = ([0usize; MAX_LEGS], 0usize);
    let dt = 1.0 / 60.0;
    for frame in 0..120 {
        let t = frame as f32 * dt;
        let chars: Vec<CharacterInput> = starts
            .iter()
            .enumerate()
            .map(|(c, &(p, yaw, scale))| {
                let q = crowd_ik::glam::Quat::from_rotation_y(yaw);
                let mut at = p + q * crowd_ik::glam::Vec3::Z * (1.2 * t);
                at.y = hf.sample(at.x, at.z).map_or(0.0, |(h, _)| h);
                // A trot: diagonal pairs planted half of each 0.6 s cycle.
                let phase = |l: usize| (t / 0.6 + (c % 5) as f32 * 0.13 + [0.0, 0.5, 0.5, 0.0][l]).fract();
                let weights = [0, 1, 2, 3].map(|l| if phase(l) < 0.55 { 1.0 } else { 0.0 });
                CharacterInput::new(at, q).with_scale(scale.abs()).with_mirrored(scale < 0.0).with_foot_weights(weights)
            })
            .collect();
        let hits: Vec<GroundHit> = chars
            .iter()
            .enumerate()
            .flat_map(|(c, ch)| {
                let (rig, pose, hf) = (&rig, &pose, &hf);
                (0..MAX_LEGS).map(move |l| {
                    let leg = rig.legs.get(l)?;
                    let reference = leg.joints[if matches!(leg.kind, LegKind::PseudoThreeBone { .. }) { 3 } else { 2 }];
                    let a = ch.to_world(pose[reference].position());
                    hf.sample(a.x, a.z)
                        .map(|(h, n)| GroundHit::hit(crowd_ik::glam::Vec3::new(a.x, h, a.z), n))
                        .filter(|_| !((30..40).contains(&frame) && c % 13 == 3))
                })
            })
            .map(|h| h.unwrap_or_else(GroundHit::miss))
            .collect();
        missed += hits.iter().filter(|h| h.point_ws[3] <= 0.5).count();
        if frame == 70 {
            let reset: Vec<usize> = (0..count).step_by(17).collect();
            for &c in &reset {
                states[c] = CharacterState::default();
            }
            gpu.reset_states(&reset);
        }
        let (_, cpu_res) =
            frame_both(&mut gpu, (&rig, &Ground::Hits, &hits), &chars, &poses, &mut states, dt, frame, &mut worst);
        for r in &cpu_res {
            for (l, k) in locked.iter_mut().enumerate() {
                *k += usize::from(r.status[l] & foot::LOCKED != 0);
            }
        }
    }
    eprintln!(
        "120 frames, {count} quadrupeds on hits: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; locked frames per leg {locked:?}",
        worst.position, worst.rotation, worst.pelvis
    );
    assert!(locked.iter().all(|&k| k > 120 * count / 5), "every kind of leg locks: {locked:?}");
    assert!(missed > 10 * (count / 13) * 4, "hits missed for a while: {missed}");
}

/// The kernel that moves the state as 64-bit words (devices with `SHADER_INT64`) gives the
/// 32-bit kernel's poses, results and states bit for bit, frame after frame.
#[test]
fn both_state_word_sizes_give_the_same_bits() {
    let devices = state_devices();
    let [(d32, q32, _), (d64, q64, _)] = devices.as_slice() else { return };
    let (hf, ground, rig) = small_scene();
    let n = rig.joint_count();
    let mut crowd = WalkingCrowd::new(300, 15.0, 11);
    let mut narrow = CrowdSolver::new(d32, q32, &rig, &ground).unwrap();
    let mut wide = CrowdSolver::new(d64, q64, &rig, &ground).unwrap();
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    let dt = 1.0 / 60.0;
    narrow.set_frame_time(dt).unwrap();
    wide.set_frame_time(dt).unwrap();
    for frame in 0..60 {
        crowd.step(dt);
        crowd.frame(&hf, &mut chars, &mut poses);
        let mut out = [vec![JointPose::default(); chars.len() * n], vec![JointPose::default(); chars.len() * n]];
        let mut res = [vec![FootResult::default(); chars.len()], vec![FootResult::default(); chars.len()]];
        let mut states = [vec![CharacterState::default(); chars.len()], vec![CharacterState::default(); chars.len()]];
        for (k, gpu) in [&mut narrow, &mut wide].into_iter().enumerate() {
            gpu.solve(&chars, &poses, &[], &mut out[k], &mut res[k]).unwrap();
            gpu.read_states(&mut states[k]).unwrap();
        }
        let bytes = |k: usize| {
            (
                bytemuck::cast_slice::<JointPose, u8>(&out[k]).to_vec(),
                bytemuck::cast_slice::<FootResult, u8>(&res[k]).to_vec(),
                bytemuck::cast_slice::<CharacterState, u8>(&states[k]).to_vec(),
            )
        };
        assert!(bytes(0) == bytes(1), "frame {frame}: the two kernels differ");
    }
}

/// Hostile states, frame times, poses and caller hits (`tests/hostile_state.rs` runs the
/// CPU twin alone): the GPU gives the CPU twin's status bits, state flags and poses, every
/// value finite, and a garbage state resets its character alone. The states are written to
/// both twins as they are (no value is fixed up on the way).
#[test]
fn hostile_inputs_match_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        hostile_inputs_match_the_cpu_twin_on(&device, &queue);
    }
}

fn hostile_inputs_match_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    let (hf, _, rig) = small_scene();
    let crowd = WalkingCrowd::new(64, 15.0, 9);
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    crowd.frame(&hf, &mut chars, &mut poses);
    let n = rig.joint_count();
    // Caller hits: the heightfield under each FK foot; character 3's left foot gets a
    // normal too short to normalise, character 4's a subnormal one.
    let mut hits = vec![GroundHit::miss(); chars.len() * MAX_LEGS];
    for (c, ch) in chars.iter().enumerate() {
        for (l, leg) in rig.legs.iter().enumerate() {
            let p = ch.to_world(poses[c * n + leg.joints[2]].position());
            if let Some((h, normal)) = hf.sample(p.x, p.z) {
                hits[c * MAX_LEGS + l] = GroundHit::hit(crowd_ik::glam::Vec3::new(p.x, h, p.z), normal);
            }
        }
    }
    hits[3 * MAX_LEGS].normal_ws = [0.0, 1.18e-38, 0.0, 0.0];
    hits[4 * MAX_LEGS].normal_ws = [1e-30, 1e-25, 0.0, 0.0];
    // Character 9's knee far outside the coordinate range.
    poses[9 * n + 5].position_ms[1] = 3.4e38;
    let ground = Ground::Hits;
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); chars.len()];
    let mut worst = Worst::default();
    for f in 0..4 {
        frame_both(&mut gpu, (&rig, &ground, &hits), &chars, &poses, &mut states, 1.0 / 60.0, f, &mut worst);
    }
    // Garbage a character's state by state: each resets that character alone, flagged.
    type Garble = fn(&mut CharacterState);
    let hostile: [(usize, Garble); 8] = [
        (10, |s| s.root[1] = -1e38),
        (11, |s| s.root[0] = -1e38),
        (12, |s| s.pelvis[2] = 3e38),
        (13, |s| s.legs[0].lift[0] = 1e30),
        (14, |s| s.legs[1].plane_velocity[3] = -1e37),
        (15, |s| s.legs[0].heading[0] = 1e6),
        (16, |s| s.flags |= 0xffff_fff0),
        (17, |s| *s = CharacterState { flags: 1, ..CharacterState::default() }),
    ];
    for (c, garble) in hostile {
        garble(&mut states[c]);
    }
    gpu.write_states(0, &states).unwrap();
    for (f, dt) in [1.0 / 120.0, 1e-45, f32::MIN_POSITIVE, 9e-7, 1.0 / 60.0, 0.0, 1.0 / 30.0].into_iter().enumerate() {
        let (_, res) =
            frame_both(&mut gpu, (&rig, &ground, &hits), &chars, &poses, &mut states, dt, 10 + f, &mut worst);
        if f == 0 {
            for (c, _) in hostile.iter().take(7) {
                assert!(res[*c].status[0] & foot::RESET != 0, "character {c} not reset");
            }
            assert!(res[18].status[0] & foot::RESET == 0 && res[9].error(0).is_some());
            assert_eq!(res[3].status[0] & foot::HIT, 0);
            assert_eq!(res[4].status[0] & foot::HIT, 0);
        }
    }
    assert!(!states[16].locked(2) && !states[16].locked(3));
    eprintln!("hostile inputs: worst {worst:?}");
}

/// Walkers up and down stairs (the root at the ground under the hips, so it snaps at every
/// riser) with 0/1 foot weights, plus characters whose roots are under the terrain: the
/// root snap told by the change of vertical speed, the pelvis speed limit with its
/// `PELVIS_FAST` flag, planted soles on the ground and `UNDER_GROUND` feet, and the weights'
/// event times (given inside the frame, given out of it, not given), on both twins.
#[test]
fn stairs_snaps_and_feet_under_the_ground_match_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        stairs_snaps_and_feet_under_the_ground_match_the_cpu_twin_on(&device, &queue);
    }
}

fn stairs_snaps_and_feet_under_the_ground_match_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::glam::{Quat, Vec3};
    use crowd_ik_tools::scene::{walk_pose, CYCLE, SPEED};
    let hf = crowd_ik_tools::terrain::stairs(10, 0.17, 0.28);
    let ground = Ground::Heightfield(hf.clone());
    let mut placement = FootPlacement::default();
    for leg in &mut placement.legs {
        leg.plant = PlantDetection::Speed { enter: 0.5, exit: 0.8 };
    }
    let rig = biped_rig().with_placement(Some(placement));
    let count = 48;
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); count];
    let mut worst = Worst::default();
    let (mut snaps, mut fast, mut under) = (0, 0, 0);
    let dt = 1.0 / 60.0;
    for frame in 0..240 {
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        for c in 0..count {
            let t = frame as f32 * dt + 0.11 * c as f32;
            let (pose, w) = walk_pose(t / CYCLE * std::f32::consts::TAU);
            let x = -0.8 + 1.6 * (c % 8) as f32 / 7.0;
            let root = Vec3::new(x, 0.0, -1.5 + SPEED * t);
            let hips = root + pose[rig.pelvis].position();
            let mut y = hf.sample(hips.x, hips.z).map_or(0.0, |(y, _)| y);
            if c % 12 == 5 {
                y -= 0.9; // under the stairs
            }
            let weights = w.map(|w| if w >= 0.5 { 1.0 } else { 0.0 });
            // Event times given (within the frame, and past it or NaN: not known) or not.
            let k = (frame * 7 + c * 3) % 5;
            let events = match c % 3 {
                1 => [k as f32 / 4.0 * dt, (4 - k) as f32 / 4.0 * dt, 0.0, 0.0],
                2 => [f32::NAN, 2.0 * dt, -0.5, dt],
                _ => [-1.0; 4],
            };
            chars.push(
                CharacterInput::new(root + Vec3::Y * y, Quat::IDENTITY)
                    .with_foot_weights([weights[0], weights[1], 0.0, 0.0])
                    .with_foot_event_times(events),
            );
            poses.extend(pose);
        }
        let (_, res) = frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        for r in &res {
            snaps += usize::from(r.pelvis[2] != 0.0);
            fast += usize::from(r.status[0] & foot::PELVIS_FAST != 0);
            under += (0..2).filter(|&l| r.status[l] & foot::UNDER_GROUND != 0).count();
        }
    }
    eprintln!(
        "stairs, 240 frames × {count}: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; {snaps} root snaps, {fast} PELVIS_FAST frames, {under} UNDER_GROUND feet",
        worst.position, worst.rotation, worst.pelvis
    );
    assert!(snaps > 100 && fast > 0 && under > 100, "the scene exercises every path");
}

/// CMU motion capture over real terrain (the Terragen test terrain at 4 m relief on 0.29 m
/// bilinear cells: creases under every foot, slopes past the foot's angle limit), soles
/// calibrated from the clip, 0/1 weights, locks by speed: the kernel follows its CPU twin
/// frame by frame within the contract.
/// `rig` with foot placement locking feet by speed (the advice for motion capture).
/// Locks by speed, leg 0 holding its ankle (`LockPivot::Foot`), leg 1 the end of its sole
/// on the ground (the default).
fn with_speed_locks(rig: FootRig) -> FootRig {
    let mut placement = FootPlacement::default();
    for leg in &mut placement.legs {
        leg.plant = PlantDetection::Speed { enter: 0.5, exit: 0.8 };
    }
    placement.legs[0].pivot = LockPivot::Foot;
    rig.with_placement(Some(placement))
}

/// `count` characters at random places within ±`half` m, random headings and clip time
/// offsets in `[0, t0)` s.
fn scattered_starts(
    seed: u64,
    count: usize,
    half: f32,
    t0: f32,
) -> Vec<(crowd_ik::glam::Vec3, crowd_ik::glam::Quat, f32)> {
    use crowd_ik::glam::{Quat, Vec3};
    let mut rng = common::Rng(seed);
    (0..count)
        .map(|_| {
            let at = Vec3::new(rng.range(-half, half), 0.0, rng.range(-half, half));
            (at, Quat::from_rotation_y(rng.range(-std::f32::consts::PI, std::f32::consts::PI)), rng.range(0.0, t0))
        })
        .collect()
}

#[test]
fn motion_capture_over_real_terrain_matches_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        motion_capture_over_real_terrain_matches_the_cpu_twin_on(&device, &queue);
    }
}

fn motion_capture_over_real_terrain_matches_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::glam::Vec3;
    let Some(hf) = common::crowd::real_terrain(4.0) else { return };
    let hf = if std::env::var("FLATDBG").is_ok() {
        Heightfield::new(hf.origin, hf.cell, hf.nx, hf.nz, vec![0.0; hf.nx * hf.nz]).unwrap()
    } else {
        hf
    };
    let Some((clip, rig, floor)) = common::crowd::cmu_biped("/usr/share/assimp/models/BVH/01_01.bvh") else {
        return;
    };
    let scale = common::crowd::CMU_SCALE;
    let clip_poses: Vec<Vec<JointPose>> = (0..clip.frames()).map(|f| clip.model_pose(f, scale)).collect();
    let mut rig = rig;
    rig.calibrate_soles(&clip_poses, clip.frame_time, 1.0, Vec3::Y);
    let rig = with_speed_locks(rig);
    let ground = Ground::Heightfield(hf.clone());
    let count = 64;
    let starts = scattered_starts(31, count, 30.0, 4.0);
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); count];
    let mut worst = Worst::default();
    let (mut locked, mut limited) = (0, 0);
    let dt = 1.0 / 60.0;
    for frame in 0..120 {
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        for &(at, heading, t0) in &starts {
            let pose = clip.sample(t0 + frame as f32 * dt, scale);
            let w = common::crowd::contact_weights(&rig, &pose, floor);
            let root = at + Vec3::Y * -floor;
            let hips = root + heading * pose[rig.pelvis].position();
            let y = hf.sample(hips.x, hips.z).map_or(0.0, |(y, _)| y);
            chars.push(CharacterInput::new(root + Vec3::Y * y, heading).with_foot_weights([w[0], w[1], 0.0, 0.0]));
            poses.extend(pose);
        }
        let (_, res) = frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        for r in &res {
            locked += (0..2).filter(|&l| r.status[l] & foot::LOCKED != 0).count();
            limited += (0..2).filter(|&l| r.status[l] & foot::ANGLE_LIMITED != 0).count();
        }
    }
    eprintln!(
        "CMU 01_01 over real terrain (4 m relief), 120 frames × {count}: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; {locked} locked and {limited} angle-limited foot-frames",
        worst.position, worst.rotation, worst.pelvis
    );
    assert!(locked > 1000 && limited > 50, "the scene exercises locks and angle limits");
}

/// Cesium Man, a real glTF character (its rig found by shape, its walk baked from the
/// file), 64 of them walking over the real terrain at 1.5 m relief: the GPU within the
/// twin contract of its CPU twin, frame after frame, both state word sizes.
#[test]
fn a_gltf_character_over_real_terrain_matches_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        a_gltf_character_over_real_terrain_matches_the_cpu_twin_on(&device, &queue);
    }
}

fn a_gltf_character_over_real_terrain_matches_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::cpu::clip_sample::sample_clip;
    use crowd_ik::glam::Vec3;
    let Some(hf) = common::crowd::real_terrain(1.5) else { return };
    let (_, clip, rig, floor, speed) = common::crowd::cesium_man();
    let rig = with_speed_locks(rig);
    let ground = Ground::Heightfield(hf.clone());
    let count = 64;
    let starts = scattered_starts(47, count, 25.0, 2.0);
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); count];
    let mut worst = Worst::default();
    let mut locked = 0;
    let dt = 1.0 / 60.0;
    let mut pose = vec![JointPose::default(); clip.parents.len()];
    for frame in 0..120 {
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        let t = frame as f32 * dt;
        for &(at, heading, t0) in &starts {
            sample_clip(&clip.local, &clip.parents, clip.frame_time, t0 + t, &mut pose);
            let w = common::crowd::contact_weights(&rig, &pose, floor);
            let root = at + heading * Vec3::Z * speed * t + Vec3::Y * -floor;
            let hips = root + heading * pose[rig.pelvis].position();
            let y = hf.sample(hips.x, hips.z).map_or(0.0, |(y, _)| y);
            chars.push(CharacterInput::new(root + Vec3::Y * y, heading).with_foot_weights([w[0], w[1], 0.0, 0.0]));
            poses.extend_from_slice(&pose);
        }
        let (_, res) = frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        locked += res.iter().map(|r| (0..2).filter(|&l| r.status[l] & foot::LOCKED != 0).count()).sum::<usize>();
    }
    eprintln!(
        "Cesium Man over real terrain (1.5 m relief), 120 frames × {count}: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; {locked} locked foot-frames",
        worst.position, worst.rotation, worst.pelvis
    );
    assert!(locked > 2000, "the scene exercises locks: {locked}");
}

/// The glTF Fox on four legs (`GltfScene::quadruped_rig`: hind legs pseudo three-bone,
/// front legs two-bone with a point foot at the paw) walking over hills with foot placement
/// and locks by speed: the GPU follows the CPU twin within the contract, front feet locked
/// too.
#[test]
fn a_quadruped_with_point_feet_matches_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        a_quadruped_with_point_feet_matches_the_cpu_twin_on(&device, &queue);
    }
}

fn a_quadruped_with_point_feet_matches_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::cpu::clip_sample::sample_clip;
    use crowd_ik::glam::Vec3;
    use crowd_ik::gltf::{GltfScene, RootMotion};
    let scene = GltfScene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gltf/Fox.glb")).unwrap();
    let sk = &scene.skins[0];
    let scale = 0.01;
    let rig = with_speed_locks(scene.quadruped_rig(0, BipedSettings::default(), scale).unwrap());
    assert_eq!(rig.legs[2].joints[2], rig.legs[2].joints[3], "a front leg with a point foot");
    let clip = scene.clip("Walk").unwrap().bake(sk, 60.0, RootMotion::Extract).unwrap();
    let travelled = clip.root_motion.last().copied().unwrap_or(Vec3::ZERO);
    let speed = travelled.length() * scale / ((clip.frames - 1) as f32 * clip.frame_time);
    let heading_ms = travelled.normalize_or(Vec3::Z);
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-40.0, -40.0), 0.25, 321, 321, 0.4);
    let ground = Ground::Heightfield(hf.clone());
    // Soles in the file's units: hoof tips, paw bottoms (the wrist less the foot height).
    let sole = |pose: &[JointPose], l: usize| {
        let leg = &rig.legs[l];
        pose[leg.joints[3]].position().y - if leg.joints[2] == leg.joints[3] { leg.foot_height / scale } else { 0.0 }
    };
    let mut model = vec![JointPose::default(); sk.len()];
    let mut floor = [f32::INFINITY; 4];
    for f in 0..clip.frames {
        sample_clip(&clip.local, &clip.parents, clip.frame_time, f as f32 * clip.frame_time, &mut model);
        for (l, fl) in floor.iter_mut().enumerate() {
            *fl = fl.min(sole(&model, l));
        }
    }
    let count = 48;
    let starts = scattered_starts(53, count, 25.0, 1.0);
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); count];
    // The Fox's legs are about as long as the contract's leg, in centimetres.
    let mut worst = Worst { model_units: 1.0 / scale, ..Worst::default() };
    let mut locked = [0; 4];
    let dt = 1.0 / 60.0;
    for frame in 0..90 {
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        let t = frame as f32 * dt;
        for &(at, heading, t0) in &starts {
            let time = t0 + t;
            sample_clip(&clip.local, &clip.parents, clip.frame_time, time, &mut model);
            let w: [f32; 4] = std::array::from_fn(|l| f32::from(sole(&model, l) - floor[l] <= 3.0));
            let root = at + heading * heading_ms * speed * time;
            let y = hf.sample(root.x, root.z).map_or(0.0, |(y, _)| y);
            chars.push(
                CharacterInput::new(
                    root + Vec3::Y * (y - floor.iter().copied().fold(f32::INFINITY, f32::min) * scale),
                    heading,
                )
                .with_scale(scale)
                .with_foot_weights(w),
            );
            poses.extend_from_slice(&model);
        }
        let (out, res) = frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        assert!(out.iter().all(|p| p.position().is_finite() && p.rotation().is_finite()));
        for r in &res {
            for (l, n) in locked.iter_mut().enumerate() {
                *n += usize::from(r.status[l] & foot::LOCKED != 0);
            }
        }
    }
    eprintln!(
        "Fox (point front feet) on hills, 90 frames × {count}: worst GPU − CPU {:.2e} m, {:.2e} rad, pelvis {:.2e} m; locked foot-frames per leg {locked:?}",
        worst.position * scale, worst.rotation, worst.pelvis
    );
    assert!(locked.iter().all(|&n| n > 40) && locked[2] + locked[3] > 400, "every leg locks: {locked:?}");
}

/// Feet the animation drags while planted (weights held at 1, roots carried at 0.2–1.4 m/s
/// in every direction, locks by weight and by speed): locks let go at the release distance
/// and are not taken again before the release has faded, on both twins, every frame and
/// state bit alike.
#[test]
fn locks_released_while_planted_wait_for_their_fade_like_the_cpu_twin() {
    for (device, queue, words) in state_devices() {
        eprintln!("{words}");
        locks_released_while_planted_wait_for_their_fade_like_the_cpu_twin_on(&device, &queue);
    }
}

fn locks_released_while_planted_wait_for_their_fade_like_the_cpu_twin_on(device: &wgpu::Device, queue: &wgpu::Queue) {
    use crowd_ik::glam::{Quat, Vec3};
    use crowd_ik_tools::scene::walk_pose;
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-40.0, -40.0), 0.5, 161, 161, 0.3);
    let ground = Ground::Heightfield(hf.clone());
    let mut placement = FootPlacement::default();
    placement.legs[0].plant = PlantDetection::Weights;
    placement.legs[1].plant = PlantDetection::Speed { enter: 2.0, exit: 3.0 };
    placement.legs[1].pivot = LockPivot::Foot;
    let rig = biped_rig().with_placement(Some(placement));
    let count = 64;
    let mut gpu = CrowdSolver::new(device, queue, &rig, &ground).unwrap();
    let mut states = vec![CharacterState::default(); count];
    let mut worst = Worst::default();
    let (pose, _) = walk_pose(0.0);
    let poses: Vec<JointPose> = (0..count).flat_map(|_| pose.clone()).collect();
    let dt = 1.0 / 60.0;
    let (mut releases, mut waiting) = (0usize, 0usize);
    let mut was = vec![[false; 2]; count];
    for frame in 0..180 {
        let t = frame as f32 * dt;
        let chars: Vec<CharacterInput> = (0..count)
            .map(|c| {
                let (speed, dir) = (0.2 + 1.2 * c as f32 / count as f32, c as f32 * 2.4);
                let p = Vec2::new(dir.sin(), dir.cos()) * speed * t;
                let y = hf.sample(p.x, p.y).map_or(0.0, |(y, _)| y);
                CharacterInput::new(Vec3::new(p.x, y, p.y), Quat::from_rotation_y(dir))
                    .with_foot_weights([1.0, 1.0, 0.0, 0.0])
            })
            .collect();
        let (_, res) = frame_both(&mut gpu, (&rig, &ground, &[]), &chars, &poses, &mut states, dt, frame, &mut worst);
        for ((r, s), was) in res.iter().zip(&states).zip(&mut was) {
            for (l, was) in was.iter_mut().enumerate() {
                let locked = r.status[l] & foot::LOCKED != 0;
                releases += (*was && !locked) as usize;
                *was = locked;
                waiting += (s.flags & (1 << (crowd_ik::constants::STATE_RELEASED_SHIFT + l as u32)) != 0) as usize;
            }
        }
    }
    eprintln!(
        "180 frames of 64 dragged characters: {releases} releases, {waiting} leg frames waiting for a fade; \
         worst GPU − CPU {:.2e} m, {:.2e} rad",
        worst.position, worst.rotation
    );
    assert!(releases > 100 && waiting > 1000, "{releases} releases, {waiting} waiting");
}
