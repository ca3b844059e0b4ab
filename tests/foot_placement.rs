//! Foot placement across frames (CPU twin): locked feet, the pelvis on stairs, frame-rate
//! independence, lifecycle and bad input. The GPU kernel against this twin is in
//! `tests/gpu_placement.rs`.

mod common;

use common::crowd::CMU_SCALE;
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::*;
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::IkError;
use crowd_ik_tools::scene::{biped_rig, walk_pose, CYCLE, SPEED};
use crowd_ik_tools::terrain::stairs;

/// One character's solved frame, in world space.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    pelvis: Vec3,
    ankle: [Vec3; 2],
    fk_ankle: [Vec3; 2],
    /// The point a locked foot holds (`LegPlacement::pivot`): its ankle, its ball, or its
    /// sole's heel or ball (`held_end` 1 and 2, as the state has it; 0 for the others).
    held: [Vec3; 2],
    held_end: [u8; 2],
    locked: [bool; 2],
    reached: [bool; 2],
    sole_after: [f32; 2],
    hit: [bool; 2],
}

/// Runs frames of the CPU twin over one crowd, keeping the states.
struct Sim {
    rig: FootRig,
    ground: Ground,
    states: Vec<CharacterState>,
}

impl Sim {
    fn new(rig: FootRig, ground: Ground, n: usize) -> Self {
        Sim { rig, ground, states: vec![CharacterState::default(); n] }
    }

    fn frame(&mut self, chars: &[CharacterInput], poses: &[JointPose], dt: f32) -> (Vec<JointPose>, Vec<FootResult>) {
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        let mut job = FootIkJob::new(&self.rig, &self.ground, chars, poses, &mut out, &mut res);
        if self.rig.placement.is_some() { job.run_frame(&mut self.states, dt) } else { job.run() }.unwrap();
        (out, res)
    }

    /// Solves and summarises character `c`'s frame (a biped: pelvis 1, ankles 6 and 10).
    fn sample(
        &self,
        c: usize,
        chars: &[CharacterInput],
        poses: &[JointPose],
        out: &[JointPose],
        r: &FootResult,
    ) -> Sample {
        let n = self.rig.joint_count();
        let ch = &chars[c];
        let (p, o) = (&poses[c * n..(c + 1) * n], &out[c * n..(c + 1) * n]);
        let ankles: Vec<usize> = self.rig.legs.iter().map(|l| l.joints[2]).collect();
        let pivot = |l: usize| self.rig.placement.map_or(LockPivot::Foot, |p| p.legs[l].pivot);
        let heel = |l: usize| self.states[c].flags & (1 << (crowd_ik::constants::STATE_HEEL_SHIFT as usize + l)) != 0;
        let held_end = [0, 1].map(|l| match pivot(l) {
            LockPivot::Sole => 1 + u8::from(!heel(l)),
            _ => 0,
        });
        let held = [0, 1].map(|l| match pivot(l) {
            LockPivot::Foot => o[ankles[l]].position(),
            LockPivot::Ball => o[self.rig.legs[l].joints[3]].position(),
            LockPivot::Sole => common::crowd::sole_points(&self.rig, o, l)[usize::from(held_end[l] - 1)],
        });
        Sample {
            held: held.map(|p| ch.to_world(p)),
            held_end,
            pelvis: ch.to_world(o[self.rig.pelvis].position()),
            ankle: [ch.to_world(o[ankles[0]].position()), ch.to_world(o[ankles[1]].position())],
            fk_ankle: [ch.to_world(p[ankles[0]].position()), ch.to_world(p[ankles[1]].position())],
            locked: [r.status[0] & foot::LOCKED != 0, r.status[1] & foot::LOCKED != 0],
            reached: [r.status[0] & foot::REACHED != 0, r.status[1] & foot::REACHED != 0],
            sole_after: [r.sole_after[0], r.sole_after[1]],
            hit: [r.status[0] & foot::HIT != 0, r.status[1] & foot::HIT != 0],
        }
    }
}

fn placement_rig(plant: PlantDetection) -> FootRig {
    let mut p = FootPlacement::default();
    for leg in &mut p.legs {
        leg.plant = plant;
    }
    biped_rig().with_placement(Some(p))
}

/// A walker of the procedural walk cycle heading along +z from `start`, its root at the
/// ground under it (as a game snaps it), at time `t`.
fn walker(ground: &Heightfield, start: Vec2, heading: f32, t: f32) -> (CharacterInput, Vec<JointPose>) {
    walker_with(ground, start, heading, t, false)
}

/// [`walker`], with foot weights that switch over 0.2 s (smoothstep of the stance phase)
/// rather than the walk's 44 ms, for comparing frame rates on the same input signal.
fn walker_with(
    ground: &Heightfield,
    start: Vec2,
    heading: f32,
    t: f32,
    smooth: bool,
) -> (CharacterInput, Vec<JointPose>) {
    let phase = t / CYCLE * std::f32::consts::TAU;
    let dir = Vec2::new(heading.sin(), heading.cos());
    let p = start + dir * SPEED * t;
    let y = ground.sample(p.x, p.y).map_or(0.0, |(y, _)| y);
    let (pose, mut w) = walk_pose(phase);
    if smooth {
        for (side, w) in w.iter_mut().enumerate() {
            let s = (phase + side as f32 * std::f32::consts::PI).sin();
            let x = ((s + 0.3) / 0.6).clamp(0.0, 1.0);
            *w = x * x * (3.0 - 2.0 * x);
        }
    }
    let ch = CharacterInput::new(Vec3::new(p.x, y, p.y), Quat::from_rotation_y(heading))
        .with_foot_weights([w[0], w[1], 0.0, 0.0]);
    (ch, pose)
}

/// Flat ground at height 0.
fn flat() -> Heightfield {
    Heightfield::new(Vec2::new(-20.0, -20.0), 0.5, 81, 81, vec![0.0; 81 * 81]).unwrap()
}

#[test]
fn stateless_rigs_refuse_states_and_placement_rigs_need_them() {
    let hf = crowd_ik_tools::terrain::hills(Vec2::new(-30.0, -30.0), 0.25, 241, 241, 0.25);
    let ground = Ground::Heightfield(hf.clone());
    let (ch, pose) = walker(&hf, Vec2::new(0.0, 0.0), 0.3, 0.4);
    let chars = vec![ch; 3];
    let poses: Vec<JointPose> = (0..3).flat_map(|_| pose.clone()).collect();
    let stateless = biped_rig();
    let run = |rig: &FootRig, states: Option<&mut Vec<CharacterState>>| {
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        let mut job = FootIkJob::new(rig, &ground, &chars, &poses, &mut out, &mut res);
        let r = match states {
            Some(s) => job.run_frame(s, 1.0 / 60.0),
            None => job.run(),
        };
        r.map(|()| (out, res))
    };
    // Placement off: run() solves; run_frame is a mistake (states and a frame time it would
    // ignore), refused, and the states are left alone.
    let mut states = vec![CharacterState::default(); 3];
    states[1].pelvis[0] = 0.25;
    let before = states.clone();
    run(&stateless, None).unwrap();
    assert_eq!(run(&stateless, Some(&mut states)).unwrap_err(), IkError::StateNotUsed);
    assert_eq!(states, before);
    // Placement on: run() is refused, run_frame checks the state count and the frame time.
    let temporal = placement_rig(PlantDetection::Weights);
    assert_eq!(run(&temporal, None).unwrap_err(), IkError::StateRequired);
    let mut short = vec![CharacterState::default(); 2];
    assert!(matches!(run(&temporal, Some(&mut short)), Err(IkError::FrameMismatch(_))));
    let mut states = vec![CharacterState::default(); 3];
    for dt in [f32::NAN, f32::INFINITY, -1.0, (-0.0f32).next_down()] {
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        let err = FootIkJob::new(&temporal, &ground, &chars, &poses, &mut out, &mut res)
            .run_frame(&mut states, dt)
            .unwrap_err();
        assert!(matches!(err, IkError::InvalidFrameTime(_)), "{dt}: {err:?}");
    }
    assert!(states.iter().all(|s| !s.is_valid()), "a refused frame leaves the states alone");
    // A first frame resets every state to its solve (flagged), which is the stateless solve
    // with weights clamped to [0, 1] and a swing foot held at its FK height.
    let (_, res) = run(&temporal, Some(&mut states)).unwrap();
    assert!(res.iter().all(|r| r.status[0] & foot::RESET != 0 && r.status[1] & foot::RESET != 0));
    assert!(states.iter().all(CharacterState::is_valid));
    let (_, res) = run(&temporal, Some(&mut states)).unwrap();
    assert!(res.iter().all(|r| r.status[0] & foot::RESET == 0));
}

/// Per plant (a span of frames a foot is locked): the held point's horizontal drift from
/// where it locked (a sole pivot's from where each end took the lock: as the foot rolls
/// through flat the lock passes from the heel to the ball, both on the ground), and the FK
/// foot's over the same span.
#[derive(Default, Debug)]
struct Plants {
    count: usize,
    drift_sum: f64,
    drift_max: f32,
    fk_sum: f64,
    fk_max: f32,
}

/// One frame of one foot's track: whether it is locked, which end of the sole it holds
/// (`Sample::held_end`), the solved point and the FK contact (world).
type Step = (bool, u8, Vec3, Vec3);

impl Plants {
    /// Adds the plants in one foot's track.
    fn add(&mut self, track: &[Step]) {
        let horizontal = |a: Vec3, b: Vec3| Vec2::new(a.x - b.x, a.z - b.z).length();
        let mut start: Option<(u8, Vec3, Vec3)> = None;
        let (mut drift, mut fk) = (0.0f32, 0.0f32);
        for &(locked, end, p, q) in track.iter().chain(std::iter::once(&(false, 0, Vec3::ZERO, Vec3::ZERO))) {
            match (locked, start) {
                (true, None) => start = Some((end, p, q)),
                (true, Some((e0, p0, q0))) => {
                    if end != e0 {
                        start = Some((end, p, q0));
                    } else {
                        drift = drift.max(horizontal(p, p0));
                    }
                    fk = fk.max(horizontal(q, q0));
                }
                (false, Some(_)) => {
                    self.count += 1;
                    self.drift_sum += f64::from(drift);
                    self.drift_max = self.drift_max.max(drift);
                    self.fk_sum += f64::from(fk);
                    self.fk_max = self.fk_max.max(fk);
                    (start, drift, fk) = (None, 0.0, 0.0);
                }
                (false, None) => {}
            }
        }
    }

    fn report(&self, what: &str) {
        let n = self.count.max(1) as f64;
        eprintln!(
            "{what}: {} plants, locked contact drift mean {:.2e} m max {:.2e} m; the animation alone drifts mean {:.3} m max {:.3} m",
            self.count,
            self.drift_sum / n,
            self.drift_max,
            self.fk_sum / n,
            self.fk_max
        );
    }
}

/// `n` walkers of the procedural walk for `seconds` at `hz`, on `hf`; one track per foot.
fn walk_tracks(rig: FootRig, hf: &Heightfield, n: usize, seconds: f32, hz: f32) -> Vec<Vec<Step>> {
    let mut sim = Sim::new(rig, Ground::Heightfield(hf.clone()), n);
    let mut tracks = vec![Vec::new(); 2 * n];
    let frames = (seconds * hz).round() as usize;
    for f in 0..=frames {
        let t = f as f32 / hz;
        let (chars, poses): (Vec<_>, Vec<_>) = (0..n)
            .map(|c| walker(hf, Vec2::new(-3.0 + c as f32, -6.0), 0.2 * c as f32 - 0.5, t + 0.13 * c as f32))
            .unzip();
        let poses: Vec<JointPose> = poses.concat();
        let (out, res) = sim.frame(&chars, &poses, 1.0 / hz);
        for c in 0..n {
            let s = sim.sample(c, &chars, &poses, &out, &res[c]);
            for l in 0..2 {
                tracks[2 * c + l].push((s.locked[l], s.held_end[l], s.held[l], s.fk_ankle[l]));
            }
        }
    }
    tracks
}

#[test]
fn locked_feet_stay_where_they_planted_while_the_animation_slides() {
    let hills = crowd_ik_tools::terrain::hills(Vec2::new(-20.0, -20.0), 0.25, 161, 161, 0.5);
    for (ground_name, hf) in [("flat", flat()), ("hills", hills)] {
        for ((plant_name, plant), pivot) in
            [("weights", PlantDetection::Weights), ("speed", PlantDetection::Speed { enter: 0.5, exit: 0.8 })]
                .into_iter()
                .flat_map(|p| [LockPivot::Sole, LockPivot::Foot].map(|pivot| (p, pivot)))
        {
            let mut rig = placement_rig(plant);
            for leg in &mut rig.placement.as_mut().unwrap().legs {
                leg.pivot = pivot;
            }
            let mut plants = Plants::default();
            for track in walk_tracks(rig, &hf, 8, 4.0, 60.0) {
                plants.add(&track);
            }
            plants
                .report(&format!("procedural walk, {ground_name}, plant detection from {plant_name}, {pivot:?} pivot"));
            assert!(plants.count >= 8 * 2 * 2, "{plants:?}");
            assert!(plants.drift_max <= 1e-3, "{plants:?}");
            assert!(plants.fk_sum / plants.count as f64 > 0.01, "the animation slides: {plants:?}");
        }
    }
}

const CMU: &str = "/usr/share/assimp/models/BVH/01_01.bvh";

/// Debian's CMU clips with their root motion, the root kept on the ground under the hips:
/// per foot, a [`Step`] every frame: the held point (`Sample::held`), or with `ankles` the
/// solved ankle.
fn cmu_tracks(path: &str, hf: &Heightfield, hz: f32, placement: FootPlacement, ankles: bool) -> Option<Vec<Vec<Step>>> {
    let (clip, rig, floor) = common::crowd::cmu_biped(path)?;
    let rig = rig.with_placement(Some(placement));
    let seconds = clip.frames() as f32 / 120.0;
    let frames = (seconds * hz) as usize;
    let mut sim = Sim::new(rig.clone(), Ground::Heightfield(hf.clone()), 1);
    let mut tracks = vec![Vec::new(); 2];
    for f in 0..frames {
        let pose = clip.sample(f as f32 / hz, CMU_SCALE);
        let hips = pose[rig.pelvis].position();
        let y = hf.sample(hips.x, hips.z).map_or(0.0, |(y, _)| y) - floor;
        let weights = [0, 1].map(|l| {
            let leg = &rig.legs[l];
            let sole = pose[leg.joints[2]].position().y - leg.foot_height - floor;
            (1.0 - (sole - 0.03) / 0.03).clamp(0.0, 1.0)
        });
        let chars = [CharacterInput::new(Vec3::new(0.0, y, 0.0), Quat::IDENTITY)
            .with_foot_weights([weights[0], weights[1], 0.0, 0.0])];
        let (out, res) = sim.frame(&chars, &pose, 1.0 / hz);
        let s = sim.sample(0, &chars, &pose, &out, &res[0]);
        for (l, track) in tracks.iter_mut().enumerate() {
            track.push(if ankles {
                (s.locked[l], 0, s.ankle[l], s.fk_ankle[l])
            } else {
                (s.locked[l], s.held_end[l], s.held[l], s.fk_ankle[l])
            });
        }
    }
    Some(tracks)
}

#[test]
fn locked_feet_hold_on_motion_capture_too() {
    let hills = crowd_ik_tools::terrain::hills(Vec2::new(-30.0, -30.0), 0.25, 241, 241, 0.25);
    for path in [CMU, "/usr/share/assimp/models/BVH/01_03.bvh"] {
        for ((ground_name, hf), pivot) in [("flat", flat()), ("hills", hills.clone())]
            .into_iter()
            .flat_map(|g| [LockPivot::Sole, LockPivot::Foot].map(|pivot| (g.clone(), pivot)))
        {
            let mut placement = FootPlacement::default();
            for leg in &mut placement.legs {
                leg.pivot = pivot;
            }
            let Some(tracks) = cmu_tracks(path, &hf, 60.0, placement, false) else { return };
            let mut plants = Plants::default();
            for t in &tracks {
                plants.add(t);
            }
            let name = path.rsplit('/').next().unwrap();
            plants.report(&format!("CMU {name}, {ground_name}, plant detection from speed, {pivot:?} pivot"));
            assert!(plants.count >= 4, "{plants:?}");
            assert!(plants.drift_max <= 1e-3, "{plants:?}");
        }
    }
}

/// Up and down a staircase: the worst per-frame jumps, speeds and penetration.
#[derive(Debug, Default)]
struct Stairs {
    pelvis_jump: f32,
    pelvis_speed: f32,
    pelvis_accel: f32,
    foot_jump: f32,
    fk_foot_jump: f32,
    below: f32,
    locked_frames: usize,
    /// Planted foot-frames (input weight 1, ground found) whose leg did not reach its target.
    unreached: usize,
}

fn walk_stairs(rig: FootRig, hz: f32) -> Stairs {
    let hf = stairs(10, 0.18, 0.3);
    let n = 3;
    let mut sim = Sim::new(rig, Ground::Heightfield(hf.clone()), n);
    let frames = (10.0 * hz) as usize;
    let mut out_stats = Stairs::default();
    let mut last: Vec<Option<Sample>> = vec![None; n];
    let mut last_speed = vec![0.0f32; n];
    for f in 0..frames {
        let t = f as f32 / hz;
        let (chars, poses): (Vec<_>, Vec<_>) =
            (0..n).map(|c| walker(&hf, Vec2::new(-0.3 + 0.3 * c as f32, -1.5), 0.0, t + 0.37 * c as f32)).unzip();
        let poses: Vec<JointPose> = poses.concat();
        let (out, res) = sim.frame(&chars, &poses, 1.0 / hz);
        for c in 0..n {
            let s = sim.sample(c, &chars, &poses, &out, &res[c]);
            for l in 0..2 {
                if s.hit[l] {
                    out_stats.below = out_stats.below.min(s.sole_after[l]);
                    out_stats.unreached += usize::from(chars[c].foot_weights[l] >= 1.0 && !s.reached[l]);
                }
                out_stats.locked_frames += usize::from(s.locked[l]);
            }
            if let Some(p) = last[c] {
                let jump = (s.pelvis.y - p.pelvis.y).abs();
                let speed = (s.pelvis.y - p.pelvis.y) * hz;
                out_stats.pelvis_jump = out_stats.pelvis_jump.max(jump);
                out_stats.pelvis_speed = out_stats.pelvis_speed.max(speed.abs());
                if f > 1 {
                    out_stats.pelvis_accel = out_stats.pelvis_accel.max(((speed - last_speed[c]) * hz).abs());
                }
                last_speed[c] = speed;
                for l in 0..2 {
                    out_stats.foot_jump = out_stats.foot_jump.max((s.ankle[l] - p.ankle[l]).length());
                    out_stats.fk_foot_jump = out_stats.fk_foot_jump.max((s.fk_ankle[l] - p.fk_ankle[l]).length());
                }
            }
            last[c] = Some(s);
        }
    }
    out_stats
}

#[test]
fn on_stairs_the_pelvis_and_feet_do_not_pop() {
    let hz = 60.0;
    let stateless = walk_stairs(biped_rig(), hz);
    let temporal = walk_stairs(placement_rig(PlantDetection::Weights), hz);
    eprintln!("stairs (10 steps of 18 cm, up and down, root on the ground under the hips, {hz} Hz):");
    eprintln!("  stateless: {stateless:?}");
    eprintln!("  temporal:  {temporal:?}");
    let p = FootPlacement::default();
    assert!(temporal.locked_frames > 100);
    // The walk bobs the hips ±2 cm twice a cycle (0.23 m/s); the spring moves the pelvis at
    // most its max speed, a root moving slower than the snap speed passes through, and the
    // reach cap may add what a leg reaching down a step needs at once.
    assert!(temporal.pelvis_speed <= 0.25 + p.pelvis_max_speed + p.root_snap_speed, "{temporal:?}");
    assert!(temporal.pelvis_speed < stateless.pelvis_speed / 3.0, "{temporal:?}");
    assert!(temporal.pelvis_accel < stateless.pelvis_accel / 5.0, "{temporal:?}");
    assert!(temporal.foot_jump < stateless.foot_jump / 2.0, "{temporal:?}");
    // No part of any foot, planted or swinging, heel or ball, deeper than the tolerance.
    assert!(temporal.below >= -p.ground_tolerance - 1e-5, "{temporal:?}");
    assert!(stateless.below < -0.1, "the stateless solve drags lifted feet into the steps: {stateless:?}");
    // The spring never leaves a planted leg short where the stateless solve reaches.
    assert!(temporal.unreached <= stateless.unreached, "{temporal:?}");
}

/// Pelvis and ankle world positions of walkers at `hz`, sampled every 1/30 s.
fn trajectories(rig: &FootRig, hf: &Heightfield, hz: f32, seconds: f32) -> Vec<[Vec3; 3]> {
    let n = 4;
    let mut sim = Sim::new(rig.clone(), Ground::Heightfield(hf.clone()), n);
    let frames = (seconds * hz).round() as usize;
    let every = (hz / 30.0).round() as usize;
    let mut out = Vec::new();
    for f in 0..=frames {
        let t = f as f32 / hz;
        let (chars, poses): (Vec<_>, Vec<_>) = (0..n)
            .map(|c| {
                // On the stairs (2 m wide) the whole way: no walker steps off their side.
                walker_with(hf, Vec2::new(-0.6 + 0.3 * c as f32, -1.5), 0.03 * c as f32, t + 0.29 * c as f32, true)
            })
            .unzip();
        let poses: Vec<JointPose> = poses.concat();
        let (pose_out, res) = sim.frame(&chars, &poses, 1.0 / hz);
        if f % every == 0 {
            for (c, r) in res.iter().enumerate() {
                let s = sim.sample(c, &chars, &poses, &pose_out, r);
                out.push([s.pelvis, s.ankle[0], s.ankle[1]]);
            }
        }
    }
    out
}

fn worst_difference(a: &[[Vec3; 3]], b: &[[Vec3; 3]]) -> (f32, f32) {
    assert_eq!(a.len(), b.len());
    let (mut pelvis, mut feet) = (0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        pelvis = pelvis.max(x[0].distance(y[0]));
        feet = feet.max(x[1].distance(y[1])).max(x[2].distance(y[2]));
    }
    (pelvis, feet)
}

/// The same 4 s of walking (weights that switch over 0.2 s) at 30, 60 and 120 Hz, compared
/// every 1/30 s. Springs, weight blends and limits are exact for inputs that move linearly
/// over a frame; what is left is the input itself sampled at different times (a foot locks
/// in the first frame its plant is seen, a root snap lands in a different frame).
#[test]
fn thirty_sixty_and_a_hundred_twenty_hertz_agree() {
    let hills = crowd_ik_tools::terrain::hills(Vec2::new(-20.0, -20.0), 0.25, 161, 161, 0.5);
    let stairs = stairs(10, 0.18, 0.3);
    // (ground, plant detection, worst difference reached at 30 vs 120 Hz and 60 vs 120 Hz,
    // pelvis and feet, metres). On hills the input is smooth and 60 vs 120 Hz meets the
    // 2 mm aim; a lock lands in the first frame its plant is seen, so locks add the foot's
    // motion over a frame; on stairs the input itself is a step function (the root snaps,
    // the ground steps, a swinging foot sees an edge), each landing in a different frame (and
    // a root crossing part of a riser's 2 cm ramp within a frame passes as continuous motion
    // at one rate and is held as a snap at another).
    let cases = [
        ("hills, no locking", &hills, PlantDetection::Off, [4e-3, 2e-3]),
        ("hills, feet locked by weight", &hills, PlantDetection::Weights, [1.5e-2, 5e-3]),
        ("stairs, no locking", &stairs, PlantDetection::Off, [0.08, 0.045]),
        ("stairs, feet locked by weight", &stairs, PlantDetection::Weights, [0.12, 0.05]),
    ];
    let mut failed = Vec::new();
    for (name, hf, plant, [at30, at60]) in cases {
        let rig = placement_rig(plant);
        let at = |hz: f32| trajectories(&rig, hf, hz, 4.0);
        let (t30, t60, t120) = (at(30.0), at(60.0), at(120.0));
        let (p1, f1) = worst_difference(&t30, &t120);
        let (p2, f2) = worst_difference(&t60, &t120);
        eprintln!(
            "{name}, 4 s: 30 Hz vs 120 Hz: pelvis {p1:.2e} m, feet {f1:.2e} m; 60 Hz vs 120 Hz: pelvis {p2:.2e} m, feet {f2:.2e} m"
        );
        if !(p1.max(f1) <= at30 && p2.max(f2) <= at60) {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// `LockPivot::Ball`: a locked foot holds its ball (the toe joint) and keeps its animated
/// tilt, so the heel rises as the motion-captured foot rolls onto the ball.
#[test]
fn a_ball_pivot_holds_the_ball_and_lets_the_heel_rise() {
    let mut placement = FootPlacement::default();
    for leg in &mut placement.legs {
        leg.pivot = LockPivot::Ball;
    }
    let Some(tracks) = cmu_tracks(CMU, &flat(), 60.0, placement, false) else { return };
    let mut plants = Plants::default();
    let mut heel_rise = 0.0f32;
    for t in &tracks {
        plants.add(t);
    }
    // The ankle's rise over a plant, measured on the same run's ankle tracks.
    let Some(ankles) = cmu_tracks(CMU, &flat(), 60.0, placement, true) else { return };
    for track in &ankles {
        let mut start: Option<f32> = None;
        for &(locked, _, p, _) in track {
            match (locked, start) {
                (true, None) => start = Some(p.y),
                (true, Some(y0)) => heel_rise = heel_rise.max(p.y - y0),
                (false, _) => start = None,
            }
        }
    }
    plants.report("CMU 01_01, ball pivot: the ball");
    eprintln!("  the ankle rises up to {heel_rise:.3} m over a plant while the ball stays");
    assert!(plants.count >= 4 && plants.drift_max <= 1e-3, "{plants:?}");
    assert!(heel_rise > 0.02, "the heel lifts: {heel_rise}");
}

/// Every 1/30 s the ankles and whether they are locked; every frame whether they are locked.
type CarriedFeet = (Vec<([Vec3; 2], [bool; 2])>, Vec<[bool; 2]>);

/// A character standing in the walk's first pose, both weights 1, its root carried along +z
/// to `z(t)`: its feet move as the root does. Runs `seconds` at `hz` with locks by speed
/// (enter 0.5, exit 0.8 m/s; released by speed, not distance) and returns, every 1/30 s,
/// the ankles (world) and whether they are locked, and every frame's locked flags.
fn carried_feet(z: &dyn Fn(f32) -> f32, hz: f32, seconds: f32) -> CarriedFeet {
    let mut rig = placement_rig(PlantDetection::Speed { enter: 0.5, exit: 0.8 });
    for leg in &mut rig.placement.as_mut().unwrap().legs {
        leg.release_distance = 1.0;
    }
    let mut sim = Sim::new(rig, Ground::Heightfield(flat()), 1);
    let (pose, _) = walk_pose(0.0);
    let every = (hz / 30.0).round() as usize;
    let (mut sampled, mut frames) = (Vec::new(), Vec::new());
    for f in 0..=(seconds * hz).round() as usize {
        let t = f as f32 / hz;
        let chars =
            [CharacterInput::new(Vec3::new(0.0, 0.0, z(t)), Quat::IDENTITY).with_foot_weights([1.0, 1.0, 0.0, 0.0])];
        let (out, res) = sim.frame(&chars, &pose, 1.0 / hz);
        let s = sim.sample(0, &chars, &pose, &out, &res[0]);
        frames.push(s.locked);
        if f % every == 0 {
            sampled.push((s.ankle, s.locked));
        }
    }
    (sampled, frames)
}

/// A foot that slows to a stop plants at the moment its (filtered) speed crosses `enter`,
/// inside a frame, and one that speeds up is released at the moment it crosses `exit`: the
/// lock holds, and the release fades from, where the foot was then. So 30, 60 and 120 Hz lock
/// the same place (within 1.5 mm) and release the same way (within 5 mm), where one frame's
/// speed and a lock taken at the end of the frame that sees the crossing differ by 43.7 mm.
#[test]
fn a_lock_lands_where_the_speed_crossed_at_any_frame_rate() {
    // 1 m/s slowing to rest over 0.5 s, standing 0.5 s, then speeding up at 3 m/s².
    let z = |t: f32| {
        let stop = 0.25;
        if t < 0.5 {
            t - t * t
        } else if t < 1.0 {
            stop
        } else {
            stop + 1.5 * (t - 1.0) * (t - 1.0)
        }
    };
    let (r30, r60, r120) = (carried_feet(&z, 30.0, 1.4), carried_feet(&z, 60.0, 1.4), carried_feet(&z, 120.0, 1.4));
    let (mut worst, mut locked) = (0.0f32, 0.0f32);
    for (k, ((a, b), c)) in r30.0.iter().zip(&r60.0).zip(&r120.0).enumerate() {
        let mut d = 0.0f32;
        for l in 0..2 {
            d = d.max(a.0[l].distance(c.0[l])).max(b.0[l].distance(c.0[l]));
        }
        worst = worst.max(d);
        // Locked through the stand at every rate.
        let t = k as f32 / 30.0;
        if (0.4..=1.0).contains(&t) {
            assert!(a.1 == [true; 2] && b.1 == [true; 2] && c.1 == [true; 2], "{t}: {:?} {:?} {:?}", a.1, b.1, c.1);
            locked = locked.max(d);
        }
    }
    eprintln!(
        "a foot slowing to a stop and starting again: 30 and 60 Hz vs 120 Hz, locked ankles within {:.2} mm, all within {:.2} mm",
        locked * 1e3,
        worst * 1e3
    );
    assert!(locked < 1.5e-3 && worst < 5e-3, "{locked} {worst}");
    // The lock was released again once the root sped up.
    assert!(r120.0.last().unwrap().1 == [false; 2]);
}

/// A planted foot that trembles (motion capture's millimetres at 120 Hz: ±4 mm frame to
/// frame, a metre per second over a frame, above the exit speed) stays locked: plant
/// detection reads its speed filtered over `plant_speed_half_life`, not one frame's.
#[test]
fn a_trembling_planted_foot_stays_locked() {
    let tremble = |t: f32| {
        let f = (t * 120.0).round() as i32;
        if f % 2 == 0 {
            0.0
        } else {
            0.008
        }
    };
    let (sampled, frames) = carried_feet(&tremble, 120.0, 1.0);
    let first = frames.iter().position(|l| *l == [true; 2]).expect("the feet lock");
    assert!(first <= 2, "locked from the second frame on, not {first}");
    assert!(frames[first..].iter().all(|l| *l == [true; 2]), "a lock let go");
    let (start, end) = (sampled[1].0, sampled.last().unwrap().0);
    for l in 0..2 {
        assert!(start[l].distance(end[l]) < 1e-4, "the locked ankle moved {}", start[l].distance(end[l]));
    }
    // Read over one frame alone (half-life 0), the same tremble lets the lock go.
    let mut rig = placement_rig(PlantDetection::Speed { enter: 0.5, exit: 0.8 });
    rig.placement.as_mut().unwrap().plant_speed_half_life = 0.0;
    let mut sim = Sim::new(rig, Ground::Heightfield(flat()), 1);
    let (pose, _) = walk_pose(0.0);
    let mut released = false;
    for f in 0..120 {
        let chars = [CharacterInput::new(Vec3::new(0.0, 0.0, tremble(f as f32 / 120.0)), Quat::IDENTITY)
            .with_foot_weights([1.0, 1.0, 0.0, 0.0])];
        let (_, res) = sim.frame(&chars, &pose, 1.0 / 120.0);
        released |= f > 2 && res[0].status[0] & foot::LOCKED == 0;
    }
    assert!(released, "unfiltered, the tremble reads as a foot lifting");
}

/// The caller's event times (`CharacterInput::foot_event_times`): a weight that steps from 0
/// to 1 `e` seconds before the frame's end has blended `e / weight_blend_time` by then, and a
/// lock it takes holds the contact point where the animation had it `e` seconds before (the
/// root moving at 1 m/s: `e` metres behind). Without an event time the step counts from the
/// frame's middle.
#[test]
fn event_times_place_a_weight_step_inside_the_frame() {
    let rig = placement_rig(PlantDetection::Weights);
    let blend = rig.placement.unwrap().weight_blend_time;
    let (pose, _) = walk_pose(0.0);
    let dt = 1.0 / 30.0;
    // Three frames with the left weight 0, then one with it 1: the blended weight and the
    // locked point after it.
    let run = |event: f32| {
        let mut sim = Sim::new(rig.clone(), Ground::Heightfield(flat()), 1);
        let mut last = (0.0, Vec3::ZERO);
        for f in 0..4 {
            let w = if f == 3 { 1.0 } else { 0.0 };
            let ch = CharacterInput::new(Vec3::new(0.0, 0.0, f as f32 * dt), Quat::IDENTITY)
                .with_foot_weights([w, 1.0, 0.0, 0.0])
                .with_foot_event_times([event, -1.0, -1.0, -1.0]);
            sim.frame(&[ch], &pose, dt);
            let s = &sim.states[0];
            last = (s.legs[0].fk[3], Vec3::from_slice(&s.legs[0].lock[..3]));
        }
        assert!(sim.states[0].locked(0), "the weight locks the foot");
        last
    };
    let (at_end, lock_end) = run(0.0);
    let (quarter, lock_quarter) = run(0.25 * dt);
    let (start, lock_start) = run(dt);
    let (unknown, lock_unknown) = run(-1.0);
    assert!(at_end == 0.0, "{at_end}");
    assert!((quarter - 0.25 * dt / blend).abs() < 1e-6, "{quarter}");
    assert!((start - dt / blend).abs() < 1e-6, "{start}");
    // Unknown: a ramp centred in the frame, rate · dt long (the blend moves at its rate from
    // the ramp's start).
    let ramp = dt * dt / blend;
    assert!((unknown - (dt + ramp) / 2.0 / blend).abs() < 1e-6, "{unknown}");
    for (lock, e) in [(lock_quarter, 0.25 * dt), (lock_start, dt), (lock_unknown, 0.5 * dt)] {
        let back = lock_end - lock;
        assert!((back.z - e).abs() < 1e-5 && back.x.abs() < 1e-6, "{back} for {e}");
    }
}

/// A planted foot the animation drags along (its weight held at 1, the root carried at
/// 0.6 m/s, locks by weight): the lock holds until the foot is `release_distance` behind,
/// then blends back to the animation over `release_time` and only then locks again, a
/// step every `release_distance / speed + release_time` or so; it does not let go and
/// relock frame after frame at the release distance.
#[test]
fn a_lock_released_by_distance_steps_rather_than_chatters() {
    for hz in [30.0f32, 60.0, 120.0] {
        let rig = placement_rig(PlantDetection::Weights);
        let p = rig.placement.as_ref().unwrap().legs[0];
        let (distance, time) = (p.release_distance, p.release_time);
        let mut sim = Sim::new(rig, Ground::Heightfield(flat()), 1);
        let (pose, _) = walk_pose(0.0);
        let speed = 0.6;
        let seconds = 4.0;
        let (mut releases, mut was) = (0usize, [false; 2]);
        let mut locked_frames = 0usize;
        let mut held_at: [Option<Vec3>; 2] = [None; 2];
        let (mut worst_hold, mut farthest) = (0.0f32, 0.0f32);
        let frames = (seconds * hz).round() as usize;
        for f in 0..=frames {
            let t = f as f32 / hz;
            let chars = [CharacterInput::new(Vec3::new(0.0, 0.0, speed * t), Quat::IDENTITY)
                .with_foot_weights([1.0, 1.0, 0.0, 0.0])];
            let (out, res) = sim.frame(&chars, &pose, 1.0 / hz);
            let s = sim.sample(0, &chars, &pose, &out, &res[0]);
            for l in 0..2 {
                if was[l] && !s.locked[l] {
                    releases += 1;
                }
                if s.locked[l] {
                    locked_frames += 1;
                    let a = *held_at[l].get_or_insert(s.ankle[l]);
                    let d = a - s.ankle[l];
                    worst_hold = worst_hold.max(Vec2::new(d.x, d.z).length());
                } else {
                    held_at[l] = None;
                }
                let d = s.ankle[l] - s.fk_ankle[l];
                farthest = farthest.max(Vec2::new(d.x, d.z).length());
            }
            was = s.locked;
        }
        let cycle = distance / speed + time;
        let expected = 2.0 * seconds / cycle;
        eprintln!(
            "{hz} Hz: {releases} releases in {seconds} s (a step every {cycle:.3} s: {expected:.1}), \
             locked {:.0} % of leg frames, a held ankle moved ≤ {worst_hold:.2e} m, ≤ {farthest:.3} m behind",
            100.0 * locked_frames as f32 / (2 * (frames + 1)) as f32
        );
        assert!(releases as f32 <= expected + 2.0, "{releases} releases: the lock chatters");
        assert!(releases as f32 >= expected - 2.0, "{releases} releases, {expected:.1} expected");
        assert!(worst_hold <= 1e-4, "a held foot moved {worst_hold}");
        assert!(farthest <= distance + speed / hz + 1e-3, "{farthest} behind the animation");
    }
}
