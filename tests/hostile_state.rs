//! Foot IK and foot placement against hostile states, frame times, ground and rigs: every
//! class of input that once gave a panic, NaN or inf output. Each test runs the CPU twin
//! (the GPU twin of the same inputs is in `tests/gpu_placement.rs`,
//! `hostile_inputs_match_the_cpu_twin`).

mod common;

use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::*;
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::IkError;
use crowd_ik_tools::scene::{biped_rig, walk_pose};

fn placement_rig() -> FootRig {
    biped_rig().with_placement(Some(FootPlacement::default()))
}

fn flat(size: usize) -> Ground {
    let half = (size - 1) as f32 * 0.5;
    Ground::Heightfield(Heightfield::new(Vec2::splat(-half), 1.0, size, size, vec![0.0; size * size]).unwrap())
}

/// Every float of the poses and results finite.
fn finite(out: &[JointPose], res: &[FootResult]) -> bool {
    let p = bytemuck::cast_slice::<_, f32>(out).iter();
    let r = res.iter().flat_map(|r| r.pelvis.iter().chain(&r.sole_before).chain(&r.sole_after));
    p.chain(r).all(|x| x.is_finite())
}

fn state_finite(s: &CharacterState) -> bool {
    bytemuck::cast_slice::<_, f32>(std::slice::from_ref(s)).iter().all(|x| x.is_finite())
}

/// One walker at the origin, in its walk pose at `phase`.
fn walker(phase: f32, weights: [f32; 4]) -> (Vec<CharacterInput>, Vec<JointPose>) {
    let (pose, _) = walk_pose(phase);
    (vec![CharacterInput::new(Vec3::ZERO, Quat::IDENTITY).with_foot_weights(weights)], pose)
}

/// One frame of `rig` from `states`: with foot placement `run_frame`, else the stateless
/// frame (`states` and `dt` unused).
fn run(
    rig: &FootRig,
    ground: &Ground,
    hits: &[GroundHit],
    chars: &[CharacterInput],
    poses: &[JointPose],
    states: &mut [CharacterState],
    dt: f32,
) -> (Vec<JointPose>, Vec<FootResult>) {
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); chars.len()];
    let mut job = FootIkJob::new(rig, ground, chars, poses, &mut out, &mut res);
    job.hits = hits;
    if rig.placement.is_some() {
        job.run_frame(states, dt).unwrap();
    } else {
        job.run().unwrap();
    }
    (out, res)
}

/// A valid state after a few ordinary frames over flat ground.
fn settled(rig: &FootRig, ground: &Ground) -> CharacterState {
    let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    let mut states = vec![CharacterState::default()];
    for _ in 0..5 {
        run(rig, ground, &[], &chars, &poses, &mut states, 1.0 / 60.0);
    }
    assert!(states[0].is_valid());
    states[0]
}

/// States that are finite but that the crate could never have written: each resets the
/// character (flagged), and the frame's output is finite.
#[test]
fn finite_but_absurd_states_reset() {
    let rig = placement_rig();
    let ground = flat(9);
    let good = settled(&rig, &ground);
    let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    let mut cases: Vec<(&str, CharacterState)> = Vec::new();
    let mut s = good;
    s.root[1] = -1e38;
    cases.push(("pelvis goal -1e38", s));
    let mut s = good;
    s.root[0] = -1e38;
    cases.push(("root height -1e38", s));
    let mut s = good;
    s.pelvis[2] = 3e38;
    cases.push(("held snap 3e38", s));
    let mut s = good;
    s.legs[0].lift[0] = 1e30;
    cases.push(("lift 1e30", s));
    let mut s = good;
    s.legs[1].plane_velocity[3] = -1e37;
    cases.push(("plane velocity -1e37", s));
    let mut s = good;
    s.legs[0].heading[0] = 1e6;
    cases.push(("release heading 1e6 rad", s));
    let mut s = good;
    s.flags |= 0xffff_0000;
    cases.push(("unknown flag bits", s));
    for (name, state) in cases {
        for dt in [0.0, 1.0 / 120.0, 1.0 / 60.0, 0.2] {
            let mut states = vec![state];
            let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, dt);
            assert!(finite(&out, &res), "{name}, dt {dt}: non-finite output");
            assert!(state_finite(&states[0]), "{name}, dt {dt}: non-finite state");
            assert!(res[0].status[0] & foot::RESET != 0, "{name}, dt {dt}: not reset");
        }
    }
}

/// A zeroed state marked valid is a state the crate could have written only for a
/// character at the origin with nothing remembered: it must give finite output at any
/// frame time, with ordinary weights.
#[test]
fn zeroed_valid_state_is_finite() {
    let rig = placement_rig();
    let ground = flat(9);
    for weights in [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]] {
        for dt in [1.0 / 120.0, 1.0 / 60.0, 1.0 / 30.0] {
            let (chars, poses) = walker(0.3, weights);
            let mut states = vec![CharacterState { flags: 1, ..CharacterState::default() }];
            for _ in 0..3 {
                let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, dt);
                assert!(finite(&out, &res), "weights {weights:?} dt {dt}: non-finite output");
                assert!(state_finite(&states[0]));
            }
        }
    }
}

/// A reset writes a clean state: no stray flag bits survive (no locked foot on a leg the
/// rig lacks).
#[test]
fn reset_clears_every_flag() {
    let rig = placement_rig();
    let ground = flat(9);
    let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    let mut states = vec![CharacterState { flags: 0xffff_fff0, ..CharacterState::default() }];
    run(&rig, &ground, &[], &chars, &poses, &mut states, 1.0 / 60.0);
    assert!(!states[0].locked(2) && !states[0].locked(3), "flags {:#x}", states[0].flags);
    assert_eq!(states[0].flags & !0x3ff, 0, "flags {:#x}", states[0].flags);
}

/// Half-lives too small to integrate in f32 are refused by `validate`; 0 (off) is fine.
#[test]
fn tiny_half_lives_are_refused() {
    for hl in [1e-6, 1e-30, f32::MIN_POSITIVE] {
        let p = FootPlacement { pelvis_half_life: hl, ..FootPlacement::default() };
        assert!(p.validate().is_err(), "pelvis half-life {hl}");
        let p = FootPlacement { ground_half_life: hl, ..FootPlacement::default() };
        assert!(p.validate().is_err(), "ground half-life {hl}");
    }
    for hl in [0.0, 1e-4, 0.08, 10.0] {
        assert!(FootPlacement { pelvis_half_life: hl, ..FootPlacement::default() }.validate().is_ok(), "{hl}");
    }
}

/// The smallest accepted half-life with a root snap and absurd held snaps: finite, no panic.
#[test]
fn smallest_half_life_with_root_snaps_is_finite() {
    let p = FootPlacement { pelvis_half_life: 1e-4, ground_half_life: 1e-4, ..FootPlacement::default() };
    let rig = biped_rig().with_placement(Some(p));
    let ground = flat(9);
    let (mut chars, poses) = walker(0.0, [1.0, 0.0, 0.0, 0.0]);
    let mut states = vec![CharacterState::default()];
    for (f, dt) in [1.0 / 60.0, 1e-6, 1.0 / 60.0, 0.25, 1.0 / 240.0, 1e-5].into_iter().enumerate() {
        chars[0].root_ws[1] = if f % 2 == 0 { 0.0 } else { 0.3 };
        chars[0].foot_weights[0] = (f % 2) as f32;
        let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, dt);
        assert!(finite(&out, &res), "frame {f}: non-finite output");
        assert!(state_finite(&states[0]), "frame {f}: non-finite state");
    }
}

/// Frame times below a microsecond (subnormals included) are no time at all: the same
/// frame as `dt = 0`, bit for bit.
#[test]
fn subnormal_frame_times_are_zero() {
    let rig = placement_rig();
    let ground = flat(9);
    let start = settled(&rig, &ground);
    let (mut chars, poses) = walker(0.2, [0.0, 1.0, 0.0, 0.0]);
    chars[0].root_ws[1] = 0.3; // a root step
    let mut zero = vec![start];
    let reference = run(&rig, &ground, &[], &chars, &poses, &mut zero, 0.0);
    assert!(finite(&reference.0, &reference.1));
    for dt in [1e-45, f32::MIN_POSITIVE, 1e-30, 1e-7, 9.9e-7] {
        let mut states = vec![start];
        let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, dt);
        assert!(finite(&out, &res), "dt {dt:e}");
        assert_eq!(bytemuck::cast_slice::<_, u8>(&out), bytemuck::cast_slice::<_, u8>(&reference.0), "dt {dt:e}");
        assert_eq!(states[0], zero[0], "dt {dt:e}");
    }
}

/// A caller hit whose normal cannot be normalised (finite, pointing up, but so short its
/// square underflows) is no ground, stateless and with foot placement.
#[test]
fn tiny_hit_normals_are_no_ground() {
    let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    for normal in [Vec3::new(0.0, 1.18e-38, 0.0), Vec3::new(1e-30, 1e-25, 0.0), Vec3::new(0.0, 1e-20, 0.0)] {
        let mut hits = vec![GroundHit::miss(); MAX_LEGS];
        hits[0] = GroundHit::hit(Vec3::new(0.1, 0.0, 0.0), normal);
        hits[1] = GroundHit::hit(Vec3::new(-0.1, 0.0, 0.0), Vec3::Y);
        for rig in [biped_rig(), placement_rig()] {
            let mut states = vec![CharacterState::default()];
            let (out, res) = run(&rig, &Ground::Hits, &hits, &chars, &poses, &mut states, 1.0 / 60.0);
            assert!(finite(&out, &res), "normal {normal}: non-finite output");
            assert!(state_finite(&states[0]));
            assert_eq!(res[0].status[0] & foot::HIT, 0, "normal {normal} counted as ground");
            assert_ne!(res[0].status[1] & foot::HIT, 0);
        }
    }
}

/// A foot at the edge of a heightfield (one foot over a 2×2 field, the other off it, soles
/// hanging over the edge): finite sole heights, stateless and with foot placement.
#[test]
fn feet_at_the_edge_of_a_heightfield_are_finite() {
    let fields = [(0.25, [0.0, 0.02, 0.01, 0.03]), (1e-6, [0.0, 1e9, -1e9, 0.0]), (0.1, [1e9, -1e9, -1e9, 1e9])];
    let places = [(-0.12, 0.0), (0.0, -0.5), (0.05, 0.45), (0.2, 0.2), (-0.3, 0.1), (0.1, 0.0), (-0.1, 0.0)];
    for ((x, z), (cell, heights)) in places.into_iter().flat_map(|p| fields.map(|f| (p, f))) {
        let ground = Ground::Heightfield(Heightfield::new(Vec2::new(x, z), cell, 2, 2, heights.to_vec()).unwrap());
        for rig in [biped_rig(), placement_rig()] {
            let (chars, poses) = walker(0.1, [1.0, 1.0, 0.0, 0.0]);
            let mut states = vec![CharacterState::default()];
            for _ in 0..3 {
                let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, 1.0 / 60.0);
                assert!(finite(&out, &res), "field at ({x}, {z}): {:?}", res[0]);
                assert!(state_finite(&states[0]));
            }
        }
    }
}

/// FK pose coordinates past the coordinate range are the character's error, as roots are.
#[test]
fn huge_pose_coordinates_are_out_of_range() {
    let rig = placement_rig();
    let ground = flat(9);
    let (chars, mut poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    poses[5].position_ms[1] = 3.4e38; // a knee
    let mut states = vec![settled(&rig, &ground)];
    let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, 1.0 / 60.0);
    assert!(finite(&out, &res));
    assert_eq!(res[0].status[0] >> 8, crowd_ik::ChainError::OutOfRange.code());
    assert!(!states[0].is_valid());
}

/// Rig lengths, step windows and heightfield heights past what f32 can solve with are
/// refused.
#[test]
fn absurd_rigs_and_heightfields_are_refused() {
    let mut rig = biped_rig();
    rig.legs[0].foot_height = 3.4e38;
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    let mut rig = biped_rig();
    rig.max_step_down = 1e38;
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    let mut rig = biped_rig();
    rig.max_pelvis_drop = 1e20;
    assert!(matches!(rig.validate(), Err(IkError::InvalidRig(_))));
    let p = FootPlacement { pelvis_max_rise: 1e30, ..FootPlacement::default() };
    assert!(p.validate().is_err());
    let h = Heightfield::new(Vec2::ZERO, 1.0, 2, 2, vec![0.0, 1e38, 0.0, f32::NAN]);
    assert!(matches!(h, Err(IkError::InvalidHeightfield(_))));
    // Holes (NaN, inf) stay allowed.
    assert!(Heightfield::new(Vec2::ZERO, 1.0, 2, 2, vec![0.0, f32::INFINITY, 0.0, f32::NAN]).is_ok());
    // The limit itself and every kind of hole pass, anything finite past ±1e9 anywhere in a
    // large grid does not.
    let limit = crowd_ik::constants::MAX_WORLD_COORDINATE;
    let holes = [limit, -limit, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, 0.0, -0.0];
    assert!(Heightfield::new(Vec2::ZERO, 1.0, 4, 2, holes.to_vec()).is_ok());
    for bad in [f32::from_bits(limit.to_bits() + 1), -f32::from_bits(limit.to_bits() + 1), f32::MAX, -f32::MAX] {
        for at in [0, 777, 1023] {
            let mut heights = vec![0.5; 1024];
            heights[at] = bad;
            let h = Heightfield::new(Vec2::ZERO, 1.0, 32, 32, heights);
            assert!(matches!(h, Err(IkError::InvalidHeightfield(_))), "{bad} at {at}: {h:?}");
        }
    }
}

/// A stateless rig handed states and a frame time is a mistake, as a placement rig without
/// states is.
#[test]
fn stateless_rig_with_states_is_an_error() {
    let rig = biped_rig();
    let ground = flat(9);
    let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default()];
    let mut states = vec![CharacterState::default()];
    let r = FootIkJob::new(&rig, &ground, &chars, &poses, &mut out, &mut res).run_frame(&mut states, 1.0 / 60.0);
    assert!(matches!(r, Err(IkError::StateNotUsed)), "{r:?}");
}

/// A state within the range check whose release time is negative (found by the
/// `foot_placement` fuzz target): the release fade stays in [0, 1], nothing overflows.
#[test]
fn negative_release_time_stays_finite() {
    let rig = placement_rig();
    let ground = flat(9);
    let mut state = settled(&rig, &ground);
    state.flags &= !0xf0; // no foot locked: `lock` holds release offsets
    state.legs[0].lock = [-4.316e8, -4.316e8, -2.762e10, -4.316e8];
    state.legs[1].lock = [8.653e8, 8.653e8, 8.653e8, 0.2];
    for dt in [0.0, 1.0 / 60.0] {
        let (chars, poses) = walker(0.0, [1.0, 1.0, 0.0, 0.0]);
        let mut states = vec![state];
        let (out, res) = run(&rig, &ground, &[], &chars, &poses, &mut states, dt);
        assert!(finite(&out, &res), "dt {dt}");
        assert!(state_finite(&states[0]), "dt {dt}: {:?}", states[0]);
    }
}

/// The CPU twin flushing subnormals to zero, as NVIDIA's GPUs do (`with_flush_to_zero`),
/// decides alike on subnormal inputs: frame times, foot weights, event times, caller hit
/// normals and state words, stateless and with foot placement. Status words and states are
/// equal and the poses within 1e-6 of each other.
#[test]
fn flushing_subnormals_changes_no_decision() {
    if common::with_flush_to_zero(|| ()).is_none() {
        return;
    }
    let ground = flat(9);
    let rig = placement_rig();
    let start = settled(&rig, &ground);
    let mut subnormal_state = start;
    subnormal_state.legs[0].lift[1] = 1e-40;
    subnormal_state.legs[1].plane_velocity[3] = -3e-39;
    subnormal_state.legs[0].lock[3] = 1e-44;
    let mut hits = [GroundHit::miss(); MAX_LEGS];
    hits[0] = GroundHit::hit(Vec3::new(0.1, 0.0, 0.0), Vec3::new(1e-39, 1.0, 0.0));
    hits[1] = GroundHit::hit(Vec3::new(-0.1, 1e-41, 0.0), Vec3::new(0.0, 1e-20, 0.0));
    // (what, foot weights, event times, caller hits, state, frame time)
    type Case<'a> = (&'a str, [f32; 4], [f32; 4], bool, CharacterState, f32);
    let cases: [Case; 6] = [
        ("frame time 1e-45", [0.0, 1.0, 0.0, 0.0], [-1.0; 4], false, start, 1e-45),
        ("frame time 1.2e-38", [0.0, 1.0, 0.0, 0.0], [-1.0; 4], false, start, f32::MIN_POSITIVE),
        ("subnormal weights", [1e-40, 1.0 - f32::EPSILON, 1e-45, 0.0], [-1.0; 4], false, start, 1.0 / 60.0),
        ("subnormal event times", [0.0, 1.0, 0.0, 0.0], [1e-42, 3e-39, -1.0, -1.0], false, start, 1.0 / 60.0),
        ("subnormal state words", [1.0, 1.0, 0.0, 0.0], [-1.0; 4], false, subnormal_state, 1.0 / 60.0),
        ("caller hits with subnormal words", [1.0, 1.0, 0.0, 0.0], [-1.0; 4], true, start, 1.0 / 60.0),
    ];
    for (name, weights, events, with_hits, state, dt) in cases {
        for rig in [biped_rig(), placement_rig()] {
            let (mut chars, poses) = walker(0.3, weights);
            chars[0] = chars[0].with_foot_event_times(events);
            chars[0].root_ws[1] = 1e-39;
            let (ground, hits) = if with_hits { (Ground::Hits, &hits[..]) } else { (ground.clone(), &[][..]) };
            let frame = |states: &mut [CharacterState]| run(&rig, &ground, hits, &chars, &poses, states, dt);
            let mut states = vec![state];
            let (out, res) = frame(&mut states);
            let mut flushed = vec![state];
            let (out_f, res_f) = common::with_flush_to_zero(|| frame(&mut flushed)).unwrap();
            let what = format!("{name}, {}", if rig.placement.is_some() { "foot placement" } else { "stateless" });
            assert!(finite(&out_f, &res_f), "{what}: non-finite output with subnormals flushed");
            assert_eq!(res[0].status, res_f[0].status, "{what}");
            assert_eq!(states[0].flags, flushed[0].flags, "{what}");
            let apart = bytemuck::cast_slice::<_, f32>(&out)
                .iter()
                .zip(bytemuck::cast_slice::<_, f32>(&out_f))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(apart <= 1e-6, "{what}: poses {apart} apart");
        }
    }
}
