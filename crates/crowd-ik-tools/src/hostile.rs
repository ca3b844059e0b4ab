//! The properties every foot-placement frame keeps, whatever its inputs: what the fuzz
//! target `foot_placement` (`fuzz/`) and the raw-bytes property test
//! (`tests/raw_bytes.rs`) both check on states, frame times, characters, poses and hits
//! made from arbitrary bytes.

use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::{
    CharacterInput, CharacterState, FootPlacement, FootResult, FootRig, Ground, GroundHit, JointPose, LockPivot,
    PlantDetection, MAX_LEGS,
};

/// One frame of inputs.
pub struct Frame<'a> {
    /// The rig, with foot placement.
    pub rig: &'a FootRig,
    /// The ground.
    pub ground: &'a Ground,
    /// The characters.
    pub characters: &'a [CharacterInput],
    /// Their FK poses, character-major.
    pub poses: &'a [JointPose],
    /// Caller hits, `MAX_LEGS` per character (empty over a heightfield).
    pub hits: &'a [GroundHit],
}

fn finite<T: bytemuck::Pod>(v: &[T]) -> bool {
    bytemuck::cast_slice::<_, f32>(v).iter().all(|x| x.is_finite())
}

fn same<T: bytemuck::Pod>(a: &[T], b: &[T]) -> bool {
    bytemuck::cast_slice::<_, u8>(a) == bytemuck::cast_slice::<_, u8>(b)
}

fn solve(
    f: &Frame,
    states: &mut [CharacterState],
    range: std::ops::Range<usize>,
    dt: f32,
    par: bool,
) -> Result<(Vec<JointPose>, Vec<FootResult>), crowd_ik::IkError> {
    let n = f.rig.joint_count();
    let chars = &f.characters[range.clone()];
    let poses = &f.poses[range.start * n..range.end * n];
    let hits = if f.hits.is_empty() { &[][..] } else { &f.hits[range.start * MAX_LEGS..range.end * MAX_LEGS] };
    let mut out = vec![JointPose::default(); poses.len()];
    let mut results = vec![FootResult::default(); chars.len()];
    let mut job = FootIkJob::new(f.rig, f.ground, chars, poses, &mut out, &mut results);
    job.hits = hits;
    let r = if par { job.run_frame_par(states, dt) } else { job.run_frame(states, dt) };
    r.map(|()| (out, results))
}

/// Runs one frame of `f` from `states` (advanced in place) and panics unless: a refused
/// frame (a bad frame time) changes no state; otherwise every pose, result and state value
/// is finite, one thread and all cores agree bit for bit, and every character solves the
/// same alone (from its own state) as among the others. Returns whether the frame ran.
pub fn check_frame(f: &Frame, states: &mut [CharacterState], dt: f32) -> bool {
    let count = f.characters.len();
    let before = states.to_vec();
    let mut par_states = before.clone();
    let serial = solve(f, states, 0..count, dt, false);
    let parallel = solve(f, &mut par_states, 0..count, dt, true);
    let Ok((out, results)) = serial else {
        assert!(parallel.is_err(), "dt {dt}: refused on one thread only");
        assert!(same(states, &before), "dt {dt}: a refused frame changed a state");
        return false;
    };
    let (out_par, results_par) = parallel.expect("ran on one thread");
    assert!(finite(&out), "dt {dt}: non-finite pose");
    assert!(finite(&results), "dt {dt}: non-finite result");
    // The rig's values of each valid state (its flags are bits; the slots of legs the rig
    // lacks are never read nor written; a character with bad input keeps its state's values
    // but not its flags, so its next frame rewrites them).
    let legs = f.rig.legs.len();
    let values_finite = |s: &CharacterState| {
        !s.is_valid()
            || finite(&[s.pelvis]) && finite(&s.root) && s.legs[..legs].iter().all(|l| finite(std::slice::from_ref(l)))
    };
    for (c, s) in states.iter().enumerate() {
        assert!(values_finite(s), "dt {dt}: character {c}'s state is valid and not finite: {s:?}, {:?}", results[c]);
    }
    assert!(same(&out, &out_par) && same(&results, &results_par) && same(states, &par_states), "serial ≠ parallel");
    let n = f.rig.joint_count();
    for c in 0..count {
        let mut alone = [before[c]];
        let (o, r) = solve(f, &mut alone, c..c + 1, dt, false).expect("the batch ran");
        assert!(same(&o, &out[c * n..(c + 1) * n]), "dt {dt}: character {c}'s pose depends on its neighbours");
        assert!(same(&r, &results[c..=c]), "dt {dt}: character {c}'s result depends on its neighbours");
        assert!(same(&alone, &states[c..=c]), "dt {dt}: character {c}'s state depends on its neighbours");
    }
    true
}

/// The frame times the checks draw from: none, subnormal, under the shortest integrated,
/// ordinary rates, the longest integrated, a hitch, huge, NaN, infinite, negative; any
/// other selector gives arbitrary bits.
#[must_use]
pub fn frame_time(selector: u8) -> f32 {
    match selector % 16 {
        0 => 0.0,
        1 => 1e-45,
        2 => f32::MIN_POSITIVE,
        3 => 1e-7,
        4 => 1.0 / 120.0,
        5 => 1.0 / 60.0,
        6 => 1.0 / 30.0,
        7 => 0.25,
        8 => 0.3,
        9 => 1e30,
        10 => f32::NAN,
        11 => f32::INFINITY,
        12 => -0.01,
        _ => f32::from_bits(u32::from(selector).wrapping_mul(0x0101_0101) ^ 0x3c00_0000),
    }
}

/// The foot-placement settings a `foot_placement` fuzz input's head byte selects: plants
/// detected by weights (bit 5) or by speed (0.5 / 0.8 m/s), locks about the sole's lower
/// end (the default), or about the ball on even legs and the ankle on odd ones (bit 6), the
/// shortest accepted
/// half-lives (bit 7). Shared by the fuzz target and the seed generator
/// (`examples/fuzz_seeds.rs`), so seeds mean what the target reads.
#[must_use]
pub fn fuzz_placement(head: u8) -> FootPlacement {
    let mut placement = FootPlacement::default();
    for (l, leg) in placement.legs.iter_mut().enumerate() {
        leg.plant =
            if head & 32 != 0 { PlantDetection::Weights } else { PlantDetection::Speed { enter: 0.5, exit: 0.8 } };
        if head & 64 != 0 {
            leg.pivot = if l % 2 == 0 { LockPivot::Ball } else { LockPivot::Foot };
        }
    }
    if head & 128 != 0 {
        placement.pelvis_half_life = 1e-4; // the shortest accepted
        placement.ground_half_life = 1e-4;
    }
    placement
}
