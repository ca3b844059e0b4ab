//! Crowd foot IK on the CPU: soles on the ground, feet aligned, knees limited, pelvis never
//! raised, holes/cliffs/walls/zero weights keep FK, bad input flagged, reproducible.

mod common;

use common::crowd::*;
use common::Rng;
use crowd_ik::bvh::{BipedSettings, Clip};
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::*;
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::{ChainError, IkError};

fn solve(
    rig: &FootRig,
    ground: &Ground,
    chars: &[CharacterInput],
    hits: &[GroundHit],
    poses: &[JointPose],
) -> (Vec<JointPose>, Vec<FootResult>) {
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); chars.len()];
    FootIkJob { rig, ground, characters: chars, hits, poses_in: poses, poses_out: &mut out, results: &mut res }
        .run()
        .unwrap();
    (out, res)
}

#[test]
fn planted_feet_land_on_the_ground_aligned_within_the_limits() {
    let mut rng = Rng(70);
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 2000);
    let (out, res) = solve(&rig, &ground, &chars, &[], &poses);
    let (mut before, mut after, mut reached) = (0.0_f32, 0.0_f32, 0);
    for (c, ch) in chars.iter().enumerate() {
        let r = &res[c];
        assert!(r.pelvis[0] >= 0.0 && r.pelvis[0] <= rig.max_pelvis_drop + 1e-6, "pelvis drop {}", r.pelvis[0]);
        let pose_in = &poses[c * 12..(c + 1) * 12];
        let pose_out = &out[c * 12..(c + 1) * 12];
        // The pelvis never rises above FK (world up).
        assert!(ch.to_world(pose_out[PELVIS].position()).y <= ch.to_world(pose_in[PELVIS].position()).y + 1e-5);
        for (l, leg) in [LEFT, RIGHT].iter().enumerate() {
            assert!(r.status[l] & foot::HIT != 0, "flat-enough hills always hit");
            before = before.max(r.sole_before[l].abs());
            if r.status[l] & foot::REACHED != 0 {
                reached += 1;
                let scale = ch.root_ws[3];
                assert!(r.sole_after[l].abs() <= 1e-3 * LEG_LENGTH * scale, "sole {} off the ground", r.sole_after[l]);
                after = after.max(r.sole_after[l].abs());
                // Foot up axis within the max angle of the ground normal.
                let ankle_ws = ch.to_world(pose_out[leg[2]].position());
                let (_, n) = hf.sample(ankle_ws.x, ankle_ws.z).unwrap();
                let up = Quat::from_array(ch.root_rotation) * (pose_out[leg[2]].rotation() * Vec3::Y);
                assert!(up.angle_between(n) <= 30f32.to_radians() + 1e-4);
            }
            // Knee limits hold.
            let angle = (pose_out[leg[0]].position() - pose_out[leg[1]].position())
                .angle_between(pose_out[leg[2]].position() - pose_out[leg[1]].position());
            assert!(angle >= 0.1 - 1e-4 && angle <= 175f32.to_radians() + 1e-4, "knee {angle}");
            // Bones keep their length.
            for k in 0..3 {
                let b0 = pose_in[leg[k]].position().distance(pose_in[leg[k + 1]].position());
                let b1 = pose_out[leg[k]].position().distance(pose_out[leg[k + 1]].position());
                assert!((b0 - b1).abs() <= 1e-5 * b0.max(0.1));
            }
        }
    }
    assert!(reached > 3000, "most feet reach: {reached}");
    eprintln!("max |sole height| before {before:.4}, after {after:.2e} (reached feet)");
    assert!(before > 0.05, "the hills really displace the FK feet");
}

#[test]
fn lifted_feet_holes_cliffs_and_walls_keep_their_fk_pose() {
    let rig = biped_rig();
    let mut hf = crowd_ik_tools::terrain::hills(Vec2::new(-5.0, -5.0), 0.25, 41, 41, 0.0); // flat at 0
    let pose = random_pose(&mut Rng(71));
    let place = |x: f32| CharacterInput::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY);
    // Hole under x ≈ 2.1 (left foot of a character at x = 2), cliff far below x ≈ -1.9,
    // a wall higher than the hip at x ≈ 0.1.
    let set = |hf: &mut Heightfield, x: f32, h: f32| {
        for j in 0..41 {
            for i in 0..41 {
                let xi = -5.0 + i as f32 * 0.25;
                if (xi - x).abs() < 0.2 {
                    hf.heights[j * 41 + i] = h;
                }
            }
        }
    };
    set(&mut hf, 2.1, f32::NAN);
    set(&mut hf, -1.9, -5.0);
    set(&mut hf, 0.1, 2.0);
    let ground = Ground::Heightfield(hf);
    let chars = [place(2.0), place(-2.0), place(0.0), place(4.0).with_foot_weights([0.0, 1.0, 1.0, 1.0])];
    let poses: Vec<JointPose> = (0..4).flat_map(|_| pose.clone()).collect();
    let (out, res) = solve(&rig, &ground, &chars, &[], &poses);
    for (c, why) in ["hole", "cliff", "wall above the hip", "weight 0"].iter().enumerate() {
        assert_eq!(res[c].status[0] & foot::SOLVED, 0, "{why}: left foot untouched");
        if *why != "weight 0" {
            assert_eq!(res[c].status[0] & foot::HIT, 0, "{why}: no hit");
        }
        for k in 1..4 {
            let (fk, ik) = (poses[c * 12 + LEFT[k]].position(), out[c * 12 + LEFT[k]].position());
            // The leg only follows the pelvis drop (if the other foot needed one).
            assert!((ik - fk - Vec3::new(0.0, -res[c].pelvis[0], 0.0)).length() < 1e-5, "{why}: joint {k}");
        }
        assert!(out.iter().all(|p| p.position_ms.iter().chain(&p.rotation_ms).all(|x| x.is_finite())));
    }
}

#[test]
fn bad_characters_are_flagged_and_keep_fk_without_touching_neighbours() {
    let mut rng = Rng(72);
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    let (mut chars, mut poses) = random_crowd(&mut rng, &hf, 4);
    let (good_out, good_res) = solve(&rig, &ground, &chars, &[], &poses);
    chars[1].root_ws[0] = f32::NAN;
    poses[2 * 12 + 5].rotation_ms = [0.0, 0.0, 0.0, 2.0];
    let (out, res) = solve(&rig, &ground, &chars, &[], &poses);
    assert_eq!(res[1].error(0), Some(ChainError::NonFinite));
    assert_eq!(res[2].error(1), Some(ChainError::NotNormalized));
    assert_eq!(out[12..36], poses[12..36], "flagged characters keep their FK pose");
    assert_eq!(out[..12], good_out[..12]);
    assert_eq!(out[36..], good_out[36..]);
    assert_eq!(res[0], good_res[0]);
    assert_eq!(res[3], good_res[3]);
}

#[test]
fn caller_hits_give_the_same_result_as_the_heightfield() {
    let mut rng = Rng(73);
    let hf = hills();
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 300);
    let (out_hf, res_hf) = solve(&rig, &Ground::Heightfield(hf.clone()), &chars, &[], &poses);
    // The caller's "ray casts": the same heightfield, under each FK ankle.
    let hits = hits_under_ankles(&hf, &chars, &poses);
    let (out_hits, res_hits) = solve(&rig, &Ground::Hits, &chars, &hits, &poses);
    // A hit is a point and a normal: the foot's ground is that plane. The heightfield is
    // the terrain itself: heel and ball each read the height under them. The two differ by
    // how far the terrain leaves its tangent plane within a foot's length (the hills: a few
    // millimetres at most).
    let bend = terrain_departure(&hf, &chars, &poses);
    let mut worst = 0.0_f32;
    for (a, b) in out_hf.iter().zip(&out_hits) {
        worst = worst.max(a.position().distance(b.position()));
    }
    eprintln!("heightfield vs caller hits: poses within {worst:.2e} m; terrain departs from its tangent planes by up to {bend:.2e} m under the feet");
    assert!(worst <= 2.0 * bend + 1e-5, "{worst} vs {bend}");
    for (a, b) in res_hf.iter().zip(&res_hits) {
        assert_eq!(a.status, b.status);
        assert!((a.pelvis[0] - b.pelvis[0]).abs() <= 2.0 * bend + 1e-6);
    }
}

/// How far the terrain under each FK foot's ball departs from the tangent plane at the
/// point under its ankle (the most a plane can misplace a foot there).
fn terrain_departure(hf: &Heightfield, chars: &[CharacterInput], poses: &[JointPose]) -> f32 {
    let mut worst = 0.0_f32;
    for (c, ch) in chars.iter().enumerate() {
        for leg in [LEFT, RIGHT] {
            let ankle = ch.to_world(poses[c * 12 + leg[2]].position());
            let toe = ch.to_world(poses[c * 12 + leg[3]].position());
            let (Some((h0, n)), Some((h1, _))) = (hf.sample(ankle.x, ankle.z), hf.sample(toe.x, toe.z)) else {
                continue;
            };
            let plane = h0 - (n.x * (toe.x - ankle.x) + n.z * (toe.z - ankle.z)) / n.y;
            worst = worst.max((h1 - plane).abs());
        }
    }
    worst
}

#[test]
fn same_inputs_bit_identical_and_all_threads_equal_one() {
    let mut rng = Rng(74);
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 1000);
    let (a, ra) = solve(&rig, &ground, &chars, &[], &poses);
    let _ = solve(&rig, &ground, &chars[500..], &[], &poses[500 * 12..]);
    let mut b = vec![JointPose::default(); poses.len()];
    let mut rb = vec![FootResult::default(); chars.len()];
    FootIkJob {
        rig: &rig,
        ground: &ground,
        characters: &chars,
        hits: &[],
        poses_in: &poses,
        poses_out: &mut b,
        results: &mut rb,
    }
    .run_par()
    .unwrap();
    assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
    assert_eq!(ra, rb);
}

#[test]
fn rigs_heightfields_and_frames_are_validated() {
    let mut rig = biped_rig();
    rig.legs[0].joints[1] = 9; // the right knee under the left hip
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    let mut rig = biped_rig();
    rig.parents[2] = Some(5);
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    let mut rig = biped_rig();
    rig.legs[1].knee_limits = Some((2.0, 1.0));
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    assert!(matches!(Heightfield::new(Vec2::ZERO, 0.0, 4, 4, vec![0.0; 16]), Err(IkError::InvalidHeightfield(_))));
    assert!(matches!(Heightfield::new(Vec2::ZERO, 1.0, 4, 4, vec![0.0; 15]), Err(IkError::InvalidHeightfield(_))));
    let rig = biped_rig();
    let ground = Ground::Heightfield(hills());
    let chars = [CharacterInput::new(Vec3::ZERO, Quat::IDENTITY)];
    let mut out = vec![JointPose::default(); 11];
    let mut res = [FootResult::default()];
    let job = FootIkJob {
        rig: &rig,
        ground: &ground,
        characters: &chars,
        hits: &[],
        poses_in: &[JointPose::default(); 12],
        poses_out: &mut out,
        results: &mut res,
    };
    assert!(matches!(job.validate(), Err(IkError::FrameMismatch(_))));
}

#[test]
fn heightfields_load_from_npy_and_raw() {
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(1.0, 2.0), 0.5, 7, 5, 1.0);
    let back = Heightfield::from_npy(&hf.to_npy(), hf.origin, hf.cell).unwrap();
    assert_eq!(back, hf);
    let raw: Vec<u8> = hf.heights.iter().flat_map(|h| h.to_le_bytes()).collect();
    assert_eq!(Heightfield::from_raw_f32(&raw, 7, 5, hf.origin, hf.cell).unwrap(), hf);
    assert!(Heightfield::from_npy(b"not numpy", Vec2::ZERO, 1.0).is_err());
    // Bilinear sampling: exact at samples, normal of a plane is the plane's normal.
    let plane = Heightfield::new(Vec2::ZERO, 1.0, 3, 3, (0..9).map(|k| 0.5 * (k % 3) as f32).collect()).unwrap();
    let (h, n) = plane.sample(1.5, 0.7).unwrap();
    assert!((h - 0.75).abs() < 1e-6 && n.distance(Vec3::new(-0.5, 1.0, 0.0).normalize()) < 1e-6);
    assert!(plane.sample(-0.1, 0.5).is_none() && plane.sample(2.5, f32::NAN).is_none());
}

const CMU: &str = "/usr/share/assimp/models/BVH/01_01.bvh";
const CMU_SCALE: f32 = 0.0254 / 0.45; // CMU units → metres

/// Debian's CMU clip over hills: foot-ground error before and after IK.
#[test]
fn cmu_motion_capture_over_hills() {
    let Ok(clip) = Clip::load(CMU) else {
        assert!(!common::gpu::in_ci(), "CI=true but {CMU} is missing: install assimp-testmodels");
        eprintln!("SKIPPED: {CMU} not found (apt-get install assimp-testmodels)");
        return;
    };
    let sk = &clip.skeleton;
    assert_eq!(sk.len(), 31);
    let rig = FootRig::biped(
        sk,
        "Hips",
        &[["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"], ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"]],
        CMU_SCALE,
        BipedSettings::default(),
    )
    .unwrap();
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-30.0, -30.0), 0.25, 241, 241, 0.25);
    let ground = Ground::Heightfield(hf.clone());
    // The clip's floor: a low percentile of the sole heights (ankle less foot height), robust
    // to the odd tilted foot.
    let frames: Vec<usize> = (0..clip.frames()).step_by(10).collect();
    let mut soles: Vec<f32> = frames
        .iter()
        .flat_map(|&f| {
            let p = clip.model_pose(f, CMU_SCALE);
            rig.legs.iter().map(move |l| p[l.joints[2]].position().y - l.foot_height).collect::<Vec<_>>()
        })
        .collect();
    soles.sort_by(f32::total_cmp);
    let floor = soles[soles.len() / 10];
    let n = rig.joint_count();
    let mut chars = Vec::new();
    let mut poses = Vec::new();
    for (k, &f) in frames.iter().enumerate() {
        let pose = clip.model_pose(f, CMU_SCALE);
        let x = -20.0 + (k % 40) as f32;
        let z = -20.0 + (k / 40) as f32 * 2.0;
        // Planted feet (sole within 3 cm of the clip floor) get weight 1.
        let weights = [0, 1].map(|l| {
            let leg = &rig.legs[l];
            let sole = pose[leg.joints[2]].position().y - leg.foot_height - floor;
            if sole < 0.03 {
                1.0
            } else {
                0.0
            }
        });
        let y = hf.sample(x, z).unwrap().0 - floor;
        chars.push(
            CharacterInput::new(Vec3::new(x, y, z), Quat::IDENTITY)
                .with_foot_weights([weights[0], weights[1], 0.0, 0.0]),
        );
        poses.extend(pose);
    }
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); chars.len()];
    FootIkJob {
        rig: &rig,
        ground: &ground,
        characters: &chars,
        hits: &[],
        poses_in: &poses,
        poses_out: &mut out,
        results: &mut res,
    }
    .run_par()
    .unwrap();
    // The rig's knee hinges (from the rest pose) fit the captured knees' bends.
    assert!(
        res.iter().all(|r| r.status.iter().all(|s| s & foot::AGAINST_HINGE == 0)),
        "a knee bends against its hinge"
    );
    let (mut before, mut after, mut count) = (0.0_f32, 0.0_f32, 0);
    for (c, r) in res.iter().enumerate() {
        for l in 0..2 {
            if r.status[l] & foot::REACHED != 0 {
                before += r.sole_before[l].abs();
                after += r.sole_after[l].abs();
                count += 1;
                assert!(r.sole_after[l].abs() < 1e-3 * 0.9, "character {c} leg {l}: {}", r.sole_after[l]);
            }
        }
        assert!(out[c * n..(c + 1) * n].iter().all(|p| p.position_ms.iter().all(|x| x.is_finite())));
    }
    let mut hist = std::collections::BTreeMap::new();
    for (c, r) in res.iter().enumerate() {
        for l in 0..2 {
            *hist.entry((chars[c].foot_weights[l] as u32, r.status[l])).or_insert(0) += 1;
        }
    }
    eprintln!(
        "(weight, status) histogram: {hist:?}; drops {:?}",
        res.iter().take(8).map(|r| r.pelvis[0]).collect::<Vec<_>>()
    );
    assert!(count > frames.len() / 2, "planted feet reached: {count}");
    let (before, after) = (before / count as f32, after / count as f32);
    eprintln!(
        "CMU 01_01 over hills, {count} planted feet: mean |sole height| before {before:.4} m, after {after:.2e} m"
    );
    assert!(before > 0.02 && after < 1e-4, "before {before} after {after}");
}

#[test]
fn knee_pole_rules_choose_where_the_knee_points() {
    let mut rng = Rng(75);
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let (chars, poses) = random_crowd(&mut rng, &hf, 300);
    for rule in [KneePole::FkKnee, KneePole::FkPlane, KneePole::Direction(Vec3::new(1.0, 0.0, 1.0))] {
        let mut rig = biped_rig();
        for leg in &mut rig.legs {
            leg.knee_pole = rule;
        }
        let (out, res) = solve(&rig, &ground, &chars, &[], &poses);
        let mut reached = 0;
        for (c, r) in res.iter().enumerate() {
            for (l, leg) in [LEFT, RIGHT].iter().enumerate() {
                if r.status[l] & foot::REACHED == 0 {
                    continue;
                }
                reached += 1;
                let p = |j: usize| out[c * 12 + j].position();
                let axis = (p(leg[2]) - p(leg[0])).normalize();
                let knee_side = (p(leg[1]) - p(leg[0])) - axis * (p(leg[1]) - p(leg[0])).dot(axis);
                match rule {
                    KneePole::Direction(d) => {
                        let want = d - axis * d.dot(axis);
                        assert!(knee_side.normalize().dot(want.normalize()) > 0.999, "knee toward the pole direction");
                    }
                    KneePole::FkKnee => {
                        // The FK knee's offset from the FK hip→ankle line, seen across the new
                        // axis: the pole (for a bent FK leg; a straight one keeps its plane).
                        let fk = |j: usize| poses[c * 12 + j].position();
                        let fk_axis = (fk(leg[2]) - fk(leg[0])).normalize();
                        let fk_offset = (fk(leg[1]) - fk(leg[0])) - fk_axis * (fk(leg[1]) - fk(leg[0])).dot(fk_axis);
                        let want = fk_offset - axis * fk_offset.dot(axis);
                        if fk_offset.length() > 0.05 * 0.42 && want.length() > 1e-3 {
                            assert!(knee_side.normalize().dot(want.normalize()) > 0.999, "knee toward the FK knee");
                        }
                    }
                    KneePole::FkPlane => {}
                }
            }
        }
        assert!(reached > 400, "{rule:?}: {reached} feet reached");
    }
    let mut bad = biped_rig();
    bad.legs[0].knee_pole = KneePole::Direction(Vec3::ZERO);
    assert!(matches!(bad.validate(), Err(IkError::InvalidRig(_))));
}

/// A knee hinge declared against the leg's bend is reported per leg (`foot::AGAINST_HINGE`):
/// the quadruped's front legs given the hind legs' hinge direction are flagged on every
/// solved leg, whatever the terrain and heading (the same for the hind legs' hinges given
/// the front legs' direction); the right hinges never are, nor is a leg that is not solved.
#[test]
fn knee_hinges_against_the_bend_are_flagged() {
    let (rig, pose) = quadruped();
    let hf = hills();
    let ground = Ground::Heightfield(hf.clone());
    let (chars, poses) = scattered(&mut Rng(93), &hf, &pose, 500);
    let (_, res) = solve(&rig, &ground, &chars, &[], &poses);
    assert!(res.iter().all(|r| r.status.iter().all(|s| s & foot::AGAINST_HINGE == 0)));
    for legs in [2..4, 0..2] {
        let mut wrong = rig.clone();
        for leg in &mut wrong.legs[legs.clone()] {
            leg.knee_axis = -leg.knee_axis;
        }
        let (_, res) = solve(&wrong, &ground, &chars, &[], &poses);
        for r in &res {
            for (l, s) in r.status.iter().enumerate() {
                let solved = s & foot::SOLVED != 0;
                assert_eq!(s & foot::AGAINST_HINGE != 0, solved && legs.contains(&l), "leg {l}: {r:?}");
            }
        }
        assert!(res.iter().filter(|r| r.status[legs.start] & foot::SOLVED != 0).count() > 400);
    }
}

#[test]
fn rigs_build_from_joint_names_for_quadrupeds_too() {
    use crowd_ik::bvh::Skeleton;
    let (rig, pose) = quadruped();
    let names: Vec<String> = [
        "root",
        "body",
        "hip_l",
        "stifle_l",
        "hock_l",
        "hoof_l",
        "hip_r",
        "stifle_r",
        "hock_r",
        "hoof_r",
        "shoulder_l",
        "elbow_l",
        "wrist_l",
        "toe_l",
        "shoulder_r",
        "elbow_r",
        "wrist_r",
        "toe_r",
    ]
    .map(String::from)
    .to_vec();
    let offsets = rig
        .parents
        .iter()
        .enumerate()
        .map(|(j, p)| pose[j].position() - p.map_or(Vec3::ZERO, |p| pose[p].position()))
        .collect();
    let skeleton = Skeleton { names, parents: rig.parents.clone(), offsets, channels: vec![vec![]; 18] };
    let built = FootRig::from_names(
        &skeleton,
        "body",
        &[
            (["hip_l", "stifle_l", "hock_l", "hoof_l"], LegKind::PseudoThreeBone { blend: 0.5 }),
            (["hip_r", "stifle_r", "hock_r", "hoof_r"], LegKind::PseudoThreeBone { blend: 0.5 }),
            (["shoulder_l", "elbow_l", "wrist_l", "toe_l"], LegKind::TwoBone),
            (["shoulder_r", "elbow_r", "wrist_r", "toe_r"], LegKind::TwoBone),
        ],
        1.0,
        BipedSettings { forward: Vec3::Z, ..BipedSettings::default() },
    )
    .unwrap();
    assert_eq!(built.pelvis, 1);
    for (a, b) in built.legs.iter().zip(&rig.legs) {
        assert_eq!((a.joints, a.kind), (b.joints, b.kind));
        // Each leg's hinge from its own rest bend (rest rotations are identity here): the
        // stifles and the elbows bend opposite ways, and each rest pose bends the valid way.
        assert!(a.knee_axis.distance(b.knee_axis) < 1e-5, "{:?} vs {:?}", a.knee_axis, b.knee_axis);
        let [hip, knee, ankle] = [0, 1, 2].map(|k| pose[a.joints[k]].position());
        assert!((knee - hip).cross(a.knee_axis).dot(ankle - knee) > 0.0);
    }
    assert!(built.legs[0].knee_axis.dot(built.legs[2].knee_axis) < -0.99, "hind and front legs bend opposite ways");
    assert_eq!(built.legs[0].foot_height, 0.0, "hoof tips are the sole");
    assert!(matches!(
        FootRig::from_names(
            &skeleton,
            "body",
            &[(["hip_l", "nope", "hock_l", "hoof_l"], LegKind::TwoBone)],
            1.0,
            BipedSettings::default()
        ),
        Err(IkError::InvalidRig(_))
    ));
}

/// Character scales outside `[1e-4, 1e4]` and root translations past ±1e9 are
/// `InvalidParameter` for that character (FK pose kept, finite), caller hits past ±1e9 are no
/// ground; before, a denormal scale made every joint below the pelvis inf and a hit at
/// x = −1e38 gave inf sole heights. Neighbours are untouched, and the limits themselves solve.
#[test]
fn extreme_character_scales_and_far_hits_are_flagged_never_inf() {
    use crowd_ik::constants::{MAX_CHARACTER_SCALE, MAX_WORLD_COORDINATE, MIN_CHARACTER_SCALE};
    let mut rng = Rng(404);
    let hf = hills();
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 12);
    let hits = hits_under_ankles(&hf, &chars, &poses);
    let (clean_out, clean_res) = solve(&rig, &Ground::Hits, &chars, &hits, &poses);
    let finite = |out: &[JointPose], res: &[FootResult]| {
        out.iter().all(|p| p.position_ms.iter().chain(&p.rotation_ms).all(|x| x.is_finite()))
            && res.iter().all(|r| r.sole_before.iter().chain(&r.sole_after).chain(&r.pelvis).all(|x| x.is_finite()))
    };
    assert!(finite(&clean_out, &clean_res));
    // (A negative scale mirrors the character: its magnitude is what must be in range.)
    let bad_scales = [1e-44, f32::MIN_POSITIVE, 9.9e-5, 1.01e4, 1e30, 0.0, -0.0, -1e-44, -1e30];
    for scale in bad_scales {
        let mut c = chars.clone();
        c[3].root_ws[3] = scale;
        let (out, res) = solve(&rig, &Ground::Hits, &c, &hits, &poses);
        assert_eq!(res[3].error(0), Some(ChainError::InvalidParameter), "scale {scale}");
        assert!(finite(&out, &res), "scale {scale}");
        assert_eq!(out[3 * 12..4 * 12], poses[3 * 12..4 * 12], "scale {scale}: FK pose kept");
        assert_eq!(res[2], clean_res[2], "neighbours untouched");
        assert_eq!(res[4], clean_res[4], "neighbours untouched");
    }
    for x in [1.01e9, -1e38, f32::MAX] {
        let mut c = chars.clone();
        c[3].root_ws[0] = x;
        let (out, res) = solve(&rig, &Ground::Hits, &c, &hits, &poses);
        assert_eq!(res[3].error(0), Some(ChainError::InvalidParameter), "root x {x}");
        assert!(finite(&out, &res), "root x {x}");
    }
    for scale in [MIN_CHARACTER_SCALE, MAX_CHARACTER_SCALE] {
        let mut c = chars.clone();
        c[3].root_ws[3] = scale;
        let (out, res) = solve(&rig, &Ground::Hits, &c, &hits, &poses);
        assert_eq!(res[3].error(0), None, "scale {scale}");
        assert!(finite(&out, &res), "scale {scale}");
    }
    for x in [-1e38, 2.0 * MAX_WORLD_COORDINATE, f32::MAX] {
        let mut h = hits.clone();
        h[3 * MAX_LEGS].point_ws[0] = x;
        h[3 * MAX_LEGS + 1].normal_ws[2] = x;
        let (out, res) = solve(&rig, &Ground::Hits, &chars, &h, &poses);
        assert_eq!(res[3].status[0] & foot::HIT, 0, "hit at x = {x} is no ground");
        assert_eq!(res[3].status[1] & foot::HIT, 0, "normal z = {x} is no ground");
        assert!(finite(&out, &res), "hit at {x}");
        assert_eq!(res[2], clean_res[2], "neighbours untouched");
    }
}

/// Feet on slopes steeper than the foot can tilt (max foot angle 30°): flagged, and the
/// sole (heel to ball) rests on the ground with its lowest point, nothing below it, the
/// other end lifted by no more than the angle limit forces.
#[test]
fn feet_on_slopes_steeper_than_they_can_tilt_rest_on_their_lowest_sole_point() {
    let rig = biped_rig();
    for degrees in [35.0_f32, 46.0, 60.0] {
        let hf = slope(degrees);
        let ground = Ground::Heightfield(hf.clone());
        let mut rng = Rng(74 + degrees as u64);
        let (chars, poses) = random_crowd(&mut rng, &hf, 500);
        let (out, res) = solve(&rig, &ground, &chars, &[], &poses);
        let (mut limited, mut lowest, mut deepest, mut worst_excess) = (0, 0.0_f32, 0.0_f32, 0.0_f32);
        // What placing only the point under the ankle on the ground (the heel, as before the
        // whole sole was used) would have sunk the ball by.
        let mut heel_only = 0.0_f32;
        for (c, ch) in chars.iter().enumerate() {
            let pose = &out[c * 12..(c + 1) * 12];
            for (l, leg) in [LEFT, RIGHT].iter().enumerate() {
                let r = &res[c];
                if r.status[l] & foot::REACHED == 0 || r.status[l] & foot::ANGLE_LIMITED == 0 {
                    continue;
                }
                limited += 1;
                // Heel (under the ankle) and ball (the toe brought down to the sole).
                let up = Quat::from_array(ch.root_rotation) * (pose[leg[2]].rotation() * Vec3::Y);
                let ankle = ch.to_world(pose[leg[2]].position());
                let toe = ch.to_world(pose[leg[3]].position());
                let heel = ankle - up * FOOT_HEIGHT;
                let ball = heel + (toe - ankle - up * (toe - ankle).dot(up));
                let above = |p: Vec3| p.y - hf.sample(p.x, p.z).unwrap().0;
                let (a, b) = (above(heel), above(ball));
                lowest = lowest.max(a.min(b).abs());
                deepest = deepest.min(a.min(b));
                heel_only = heel_only.min(b - a);
                // On the ground to the precision of the coordinates (up to 100 m here): the
                // world's, and the grid's (a sole point between heel and ball is placed in
                // the grid to the rounding of its distance from the origin, times the slope).
                let from_origin = (heel.x - hf.origin.x).abs().max((heel.z - hf.origin.y).abs());
                let grid = from_origin * (1.0 + degrees.to_radians().tan());
                let ulps = 4.0 * f32::EPSILON * heel.abs().max_element().max(grid).max(1.0);
                assert!(a.min(b).abs() <= ulps, "{degrees}°: sole {} m off the ground", a.min(b));
                assert!((r.sole_after[l] - a.min(b)).abs() < 1e-5, "reported sole {} vs {}", r.sole_after[l], a.min(b));
                // The lifted end: the sole stays tilted from the ground by the angle between
                // the foot's up axis and the normal (the foot turns at most the max foot angle
                // from its FK orientation); its end rises by at most the sole's length times
                // the sine of that tilt, along the normal (÷ n.y measured vertically).
                let n = hf.sample(ankle.x, ankle.z).unwrap().1;
                let allowed = (heel - ball).length() * up.angle_between(n).sin() / n.y + 1e-5 + ulps;
                worst_excess = worst_excess.max(a.max(b) - allowed);
            }
        }
        eprintln!(
            "{degrees}° slope: {limited} angle-limited planted feet, lowest sole point within {lowest:.1e} m of the ground (deepest {deepest:.1e}), other end at most {worst_excess:.1e} m above what the tilt forces; the heel alone on the ground would sink the ball {:.1} mm",
            -heel_only * 1e3
        );
        assert!(limited > 100, "{degrees}°: only {limited} angle-limited feet");
        assert!(worst_excess <= 0.0, "{degrees}°: the lifted end floats {worst_excess} m more than the tilt forces");
    }
}

/// A mirrored character (negative scale: model `x → −x`) is the mirror image of its
/// unmirrored twin: on the mirrored terrain it gets the same model-space pose, results and
/// status (to the rounding of the mirrored heightfield's interpolation).
#[test]
fn mirrored_characters_are_the_mirror_images_of_their_twins() {
    let mut rng = Rng(76);
    let hf = hills();
    // The terrain mirrored across the world plane x = 0.
    let mirrored_hf = {
        let mut heights = hf.heights.clone();
        for row in heights.chunks_mut(hf.nx) {
            row.reverse();
        }
        let origin = Vec2::new(-(hf.origin.x + (hf.nx - 1) as f32 * hf.cell), hf.origin.y);
        Heightfield::new(origin, hf.cell, hf.nx, hf.nz, heights).unwrap()
    };
    let rig = biped_rig();
    let (chars, poses) = random_crowd(&mut rng, &hf, 1000);
    // world_B(p) = P·world_A(p): translation reflected, rotation conjugated, scale negated.
    let twins: Vec<CharacterInput> = chars
        .iter()
        .map(|c| {
            let mut m = *c;
            m.root_ws[0] = -m.root_ws[0];
            m.root_rotation[1] = -m.root_rotation[1];
            m.root_rotation[2] = -m.root_rotation[2];
            m.with_mirrored(true)
        })
        .collect();
    for (c, m) in chars.iter().zip(&twins) {
        let p = Vec3::new(0.3, 0.9, -0.2);
        let (a, b) = (c.to_world(p), m.to_world(p));
        assert!(Vec3::new(-a.x, a.y, a.z).distance(b) < 1e-5, "to_world mirrors");
    }
    let (out_a, res_a) = solve(&rig, &Ground::Heightfield(hf), &chars, &[], &poses);
    let (out_b, res_b) = solve(&rig, &Ground::Heightfield(mirrored_hf), &twins, &[], &poses);
    let mut worst = 0.0_f32;
    for (a, b) in out_a.iter().zip(&out_b) {
        worst = worst.max(a.position().distance(b.position()));
        assert!(a.rotation().dot(b.rotation()).abs() > 1.0 - 1e-6);
    }
    eprintln!("mirrored characters: model-space poses within {worst:.1e} m of their twins'");
    assert!(worst <= 2e-5, "{worst}");
    let mut solved = 0;
    for (a, b) in res_a.iter().zip(&res_b) {
        assert_eq!(a.status, b.status);
        assert!((a.pelvis[0] - b.pelvis[0]).abs() < 1e-5);
        for l in 0..2 {
            assert!((a.sole_after[l] - b.sole_after[l]).abs() < 1e-5, "{} vs {}", a.sole_after[l], b.sole_after[l]);
        }
        solved += usize::from(a.status[0] & foot::SOLVED != 0);
    }
    assert!(solved > 500, "{solved}");
}

/// A character whose model space is not Y-up (a Z-up export whose root turns it upright, as
/// Bevy's skinned-mesh entity of such a glTF file is) is solved as the same character
/// stored Y-up: the world poses agree within 1e-5 m and 1e-4 rad, stateless and with foot
/// placement, on hills, for feet keeping the animation's roll (the ground's tilt is measured
/// from the world's up as the model sees it, not from the model's +Y).
#[test]
fn a_z_up_model_space_is_solved_as_the_same_character_y_up() {
    let mut rng = Rng(41);
    let hf = hills();
    let (chars, poses) = random_crowd(&mut rng, &hf, 64);
    let to_z_up = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2); // model +Y → +Z
    let z_poses: Vec<JointPose> =
        poses.iter().map(|p| JointPose::new(to_z_up * p.position(), to_z_up * p.rotation())).collect();
    let z_chars: Vec<CharacterInput> = chars
        .iter()
        .map(|c| {
            let mut z = *c;
            z.root_rotation = (Quat::from_array(c.root_rotation) * to_z_up.conjugate()).to_array();
            z
        })
        .collect();
    let ground = Ground::Heightfield(hf);
    for placement in [None, Some(FootPlacement::default())] {
        let rig = biped_rig().with_placement(placement);
        let n = poses.len();
        let (mut y_out, mut z_out) = (vec![JointPose::default(); n], vec![JointPose::default(); n]);
        let (mut y_res, mut z_res) =
            (vec![FootResult::default(); chars.len()], vec![FootResult::default(); chars.len()]);
        let (mut y_states, mut z_states) =
            (vec![CharacterState::default(); chars.len()], vec![CharacterState::default(); chars.len()]);
        for _ in 0..if placement.is_some() { 20 } else { 1 } {
            let mut y = FootIkJob::new(&rig, &ground, &chars, &poses, &mut y_out, &mut y_res);
            let mut z = FootIkJob::new(&rig, &ground, &z_chars, &z_poses, &mut z_out, &mut z_res);
            if placement.is_some() {
                y.run_frame(&mut y_states, 1.0 / 60.0).unwrap();
                z.run_frame(&mut z_states, 1.0 / 60.0).unwrap();
            } else {
                y.run().unwrap();
                z.run().unwrap();
            }
        }
        let joints = n / chars.len();
        let (mut dp, mut dr) = (0.0_f32, 0.0_f32);
        for (i, (a, b)) in y_out.iter().zip(&z_out).enumerate() {
            let c = i / joints;
            dp = dp.max(chars[c].to_world(a.position()).distance(z_chars[c].to_world(b.position())));
            let (qa, qb) = (
                Quat::from_array(chars[c].root_rotation) * a.rotation(),
                Quat::from_array(z_chars[c].root_rotation) * b.rotation(),
            );
            let d = qa.conjugate() * qb;
            dr = dr.max(2.0 * d.xyz().length().atan2(d.w.abs()));
        }
        let tilted = y_res.iter().flat_map(|r| r.status[..2].iter()).filter(|s| *s & foot::REACHED != 0).count();
        eprintln!("placement {}: {tilted} feet placed, Z-up vs Y-up {dp:.1e} m, {dr:.1e} rad", placement.is_some());
        assert!(tilted > 50, "{tilted}");
        assert!(dp <= 1e-5 && dr <= 1e-4, "Z-up model space differs: {dp} m, {dr} rad");
    }
}
