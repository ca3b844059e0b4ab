//! Damped least squares ([`DlsChain`]): arms reaching a hand position and orientation inside
//! their limits, stiff joints, every bad goal flagged per chain, and GPU = CPU on random
//! limited chains with corrupted records among them.

mod common;

use common::gpu::{contract_distance, mismatches, one_ulp_sensitivity, solver};
use common::limited::{length, random_limited, worst_violation};
use common::{quat_angle, Rng};
use crowd_ik::cpu::{dls, dls_with_mode, validate_dls, FabrikMode};
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;
use crowd_ik::records::MAX_DLS_STARTS;
use crowd_ik_tools::workload;

const SIZES: [usize; 5] = [1, 63, 64, 65, 100_003];

/// A 7-degree-of-freedom arm with a hand position and orientation target inside its limits
/// (`crowd_ik_tools::workload::dls_arm`, the bench's arms), from a seed drawn from `rng`.
fn random_arm(rng: &mut Rng, iterations: u32) -> DlsChain {
    workload::dls_arm(&mut workload::Rng::new(rng.next_u64()), iterations)
}

fn limited(c: &DlsChain) -> ConstrainedFabrikChain {
    ConstrainedFabrikChain::new(c.chain, c.limits)
}

fn solve(c: &DlsChain) -> FabrikSolved {
    let mut s = FabrikSolved::default();
    dls(c, &mut s);
    s
}

/// The hand's position and rotation errors of a solved arm: distance / length and radians.
fn hand_errors(c: &DlsChain, s: &FabrikSolved) -> (f32, f32) {
    let n = c.chain.joint_count();
    let target = Vec3::from_slice(&c.chain.target_ms[..3]);
    let p = s.position(n - 1).distance(target) / length(&c.chain);
    let a = quat_angle(s.rotation(n - 1), Quat::from_array(c.goal.orientation_ms));
    (p, a)
}

/// Arms with hand position and orientation targets inside their limits (2 000, seed 31): in
/// 32 iterations per start at least 99 % end within the precision (the hand within
/// 1e-4 × length of its target and 0.2 × its angle within it), the limits hold to 1e-4 rad,
/// and the `f64` reference run the same way ends with the same error within 1e-3 × length.
#[test]
fn arms_reach_hand_position_and_orientation() {
    let mut rng = Rng(31);
    let arms: Vec<_> = (0..2_000).map(|_| random_arm(&mut rng, 32)).collect();
    let out: Vec<_> = arms.iter().map(solve).collect();
    let reached = out.iter().filter(|s| s.reached()).count();
    let mut errors: Vec<(f32, f32)> = arms.iter().zip(&out).map(|(c, s)| hand_errors(c, s)).collect();
    let within = errors.iter().filter(|e| e.0 <= 1e-4 && e.1 <= 1e-3).count();
    let worst = arms.iter().zip(&out).map(|(c, s)| worst_violation(&limited(c), s)).fold(0.0, f32::max);
    errors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let twin = arms
        .iter()
        .zip(&out)
        .step_by(10)
        .map(|(c, s)| {
            let (p, a) = hand_errors(c, s);
            let ours = (p * length(&c.chain)).hypot(0.2 * a);
            let (_, reference) = crowd_ik::cpu::dls::reference(c, 8, 32).unwrap();
            (ours - reference as f32).abs() / length(&c.chain)
        })
        .fold(0.0, f32::max);
    eprintln!(
        "damped least squares, {} arms, hand position and orientation, 8 starts of 32 iterations: {reached} reached ({:.1} %), {within} within 1e-4 × length and 1e-3 rad; position error / length median {:e}, worst {:e}; worst limit violation {worst:e} rad; the f64 reference's error within {twin:e} × length",
        arms.len(),
        100.0 * reached as f32 / arms.len() as f32,
        errors[errors.len() / 2].0,
        errors[errors.len() - 1].0,
    );
    assert!(reached * 100 >= arms.len() * 99, "reached {reached}");
    assert!(within * 100 >= arms.len() * 99, "within {within}");
    assert!(worst <= 1e-4, "a joint is {worst} rad outside its limit");
    assert!(twin <= 1e-3, "{twin}");
}

/// A joint of stiffness 1 keeps its FK rotation (the arms' FK poses are inside their limits):
/// its correction is the identity. Toward targets the elbow and the wrist reach alone (where
/// the solve with the shoulder held put the hand, up to 4 cm from its FK place; position
/// only), a shoulder of stiffness 0.9 turns less than half as far as a free one (median
/// over 500 arms), and as many targets are reached.
#[test]
fn stiff_joints_stay() {
    let mut rng = Rng(32);
    let mut turned = [Vec::new(), Vec::new()];
    let mut reached = [0, 0];
    for _ in 0..500 {
        let mut c = random_arm(&mut rng, 32).with_orientation_target(Quat::IDENTITY, 0.0);
        let end = c.chain.joint(3) + rng.unit() * 0.04;
        c.chain.target_ms = end.extend(1.0).to_array();
        let held = solve(&c.with_stiffness(0, 1.0));
        assert!(held.error().is_none());
        assert!(quat_angle(held.correction(0), Quat::IDENTITY) <= 1e-5, "{:?}", held.correction(0));
        // A target the arm reaches with its shoulder held.
        c.chain.target_ms = held.position(3).extend(1.0).to_array();
        for (k, s) in [0.0, 0.9].into_iter().enumerate() {
            let out = solve(&c.with_stiffness(0, s));
            turned[k].push(quat_angle(out.correction(0), Quat::IDENTITY));
            reached[k] += usize::from(out.reached());
        }
    }
    for t in &mut turned {
        t.sort_by(f32::total_cmp);
    }
    let (free, stiff) = (turned[0][250], turned[1][250]);
    eprintln!(
        "shoulder turn toward targets the elbow and wrist reach, median over 500 arms: stiffness 0 {free} rad ({} reached), 0.9 {stiff} rad ({} reached)",
        reached[0], reached[1]
    );
    assert!(stiff < 0.5 * free, "{stiff} vs {free}");
    assert!(reached[1] + 5 >= reached[0], "{reached:?}");
}

/// Every bad goal is its chain's error, on the CPU and the GPU alike, and the chains beside
/// it solve as they do alone.
#[test]
fn bad_goals_are_reported() {
    let mut rng = Rng(33);
    let good = random_arm(&mut rng, 16);
    let bad: Vec<(DlsChain, ChainError)> = vec![
        (good.with_orientation_target(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0), 0.2), ChainError::NonFinite),
        (good.with_orientation_target(Quat::IDENTITY, f32::INFINITY), ChainError::NonFinite),
        (good.with_stiffness(15, f32::NAN), ChainError::NonFinite),
        (good.with_orientation_target(Quat::IDENTITY, -1.0), ChainError::InvalidParameter),
        (good.with_orientation_target(Quat::IDENTITY, 2e6), ChainError::InvalidParameter),
        (good.with_starts(0), ChainError::InvalidParameter),
        (good.with_starts(MAX_DLS_STARTS + 1), ChainError::InvalidParameter),
        (good.with_stiffness(1, 1.5), ChainError::InvalidParameter),
        (good.with_stiffness(2, -0.1), ChainError::InvalidParameter),
        (good.with_option(option::KEEP_END_ROTATION, true), ChainError::InvalidParameter),
        (
            {
                let mut c = good;
                c.goal.settings[2] = 1.0;
                c
            },
            ChainError::InvalidParameter,
        ),
        (
            {
                let mut c = good;
                c.goal.starts[1] = 1;
                c
            },
            ChainError::InvalidParameter,
        ),
        (good.with_orientation_target(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), 0.2), ChainError::NotNormalized),
        (good.with_option(option::ROOT_FIRST, true), ChainError::InvalidParameter),
    ];
    // A non-unit orientation with weight 0 is not read.
    let unread = good.with_orientation_target(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), 0.0);
    assert_eq!(validate_dls(&unread), Ok(()));
    assert_eq!(validate_dls(&good), Ok(()));
    for (c, e) in &bad {
        assert_eq!(validate_dls(c), Err(*e), "{:?}", c.goal);
        assert_eq!(solve(c).error(), Some(*e));
    }
    // Good and bad interleaved: each bad one flagged, each good one as alone.
    let mut batch = Vec::new();
    for (c, _) in &bad {
        batch.push(random_arm(&mut rng, 16));
        batch.push(*c);
    }
    batch.push(random_arm(&mut rng, 16));
    let cpu: Vec<_> = batch.iter().map(solve).collect();
    for (k, (_, e)) in bad.iter().enumerate() {
        assert_eq!(cpu[2 * k + 1].error(), Some(*e));
        assert!(cpu[2 * k + 1].positions_ms.iter().flatten().all(|x| x.is_finite()));
    }
    let Some(mut gpu) = solver() else { return };
    let mut out = vec![FabrikSolved::default(); batch.len()];
    gpu.solve(&batch, &mut out).unwrap();
    let goods: Vec<DlsChain> = batch.iter().step_by(2).copied().collect();
    let mut alone = vec![FabrikSolved::default(); goods.len()];
    gpu.solve(&goods, &mut alone).unwrap();
    for (k, s) in out.iter().enumerate() {
        assert_eq!(s.status[1], cpu[k].status[1], "chain {k}: GPU error code");
        if k % 2 == 0 {
            assert_eq!(*s, alone[k / 2], "chain {k} solves as alone");
        }
    }
}

/// Random limited chains as damped-least-squares records: a third with an orientation
/// target for the end (a random rotation, weight 0.1 × length), a fifth with random joint
/// stiffness, 1 to 8 starts, and one in twelve with a corrupted goal besides the corrupted
/// chains of `random_limited`.
fn random_dls(rng: &mut Rng, iterations: u32) -> DlsChain {
    let c = random_limited(rng, iterations);
    let mut d = DlsChain::new(c.chain, c.limits).with_starts(1 + rng.below(MAX_DLS_STARTS));
    if rng.below(3) == 0 && !d.has_option(option::KEEP_END_ROTATION) {
        d = d.with_orientation_target(rng.quat(), 0.1 * length(&c.chain));
    }
    if rng.below(5) == 0 {
        for i in 0..d.chain.joint_count().min(16) {
            d = d.with_stiffness(i, [0.0, 0.5, 0.9, 1.0][rng.below(4) as usize]);
        }
    }
    if rng.below(12) == 0 {
        match rng.below(4) {
            0 => d.goal.orientation_ms[0] = f32::NAN,
            1 => d.goal.stiffness[3] = 7.0,
            2 => d.goal.starts[0] = 0,
            _ => d = d.with_orientation_target(Quat::from_xyzw(0.5, 0.0, 0.0, 0.5), 1.0),
        }
    }
    d
}

/// GPU = CPU for damped least squares on N ∈ {1, 63, 64, 65, 100 003} random limited chains
/// (`random_dls`: orientation targets, stiffness, starts, corrupted records): every error
/// code agrees, every output is finite, the GPU's results keep their limits, and fewer than
/// 1 in 1 000 chains are outside the contract (1e-4 × length, 1e-3 rad), each ending as close
/// to its target on both twins within 5e-2 × length (measured: 3.3e-2).
///
/// Known gap: the solve takes discrete decisions (a step kept or dropped, a bound held, a
/// start kept), so a rounding difference between the twins can send a chain down another
/// path; 99 of 100 003 do (2026-11-27), 81 of them proven ill-conditioned (one ulp of the
/// target moves the CPU's own answer by a tenth of the gap), all unreachable targets still
/// on their way after 8 iterations (the two twins' ends up to 3.3e-2 × length apart in
/// distance to the target).
#[test]
fn gpu_matches_cpu_for_damped_least_squares() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(2031);
    for &size in &SIZES {
        let start = std::time::Instant::now();
        let chains: Vec<_> = (0..size).map(|_| random_dls(&mut rng, 8)).collect();
        let mut cpu = vec![FabrikSolved::default(); size];
        DlsJob::new(&chains, &mut cpu).run_par().unwrap();
        let mut out = vec![FabrikSolved::default(); size];
        gpu.solve(&chains, &mut out).unwrap();
        let what = format!("damped least squares x{size}");
        let len = |i: usize| length(&chains[i].chain);
        let worst = chains.iter().zip(&out).map(|(c, s)| worst_violation(&limited(c), s)).fold(0.0, f32::max);
        assert!(worst <= 1e-4, "{what}: a GPU joint is {worst} rad outside its limit");
        assert!(out.iter().all(|s| s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite())));
        for (i, (c, g)) in cpu.iter().zip(&out).enumerate() {
            assert_eq!(c.status[1], g.status[1], "{what}: chain {i}'s error code differs: {:?}", chains[i].goal);
        }
        let bad = mismatches(&cpu, &out, len);
        let end_error = |i: usize, s: &FabrikSolved| {
            let n = chains[i].chain.joint_count();
            s.position(n - 1).distance(Vec3::from_slice(&chains[i].chain.target_ms[..3])) / len(i)
        };
        let (mut sensitive, mut closer) = (0, 0.0f32);
        for &i in &bad {
            let apart = contract_distance(&cpu[i], &out[i], len(i));
            let moved = one_ulp_sensitivity(&cpu[i], chains[i].chain.target_ms, len(i), |t| {
                let mut c = chains[i];
                c.chain.target_ms = t;
                let mut s = FabrikSolved::default();
                dls_with_mode(&c, FabrikMode::Fixed, &mut s);
                s
            });
            sensitive += usize::from(moved >= 0.1 * apart);
            closer = closer.max((end_error(i, &out[i]) - end_error(i, &cpu[i])).abs());
        }
        eprintln!(
            "{what}: {} of {size} chains outside the contract ({sensitive} of them moved by one ulp of the target by a tenth of the gap; their ends as close to the target within {closer:e} × length): {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
        assert!(bad.len() * 1000 < size.max(1000), "{what}: {} chains outside the contract", bad.len());
        assert!(closer <= 5e-2, "{what}: an end {closer} × length closer on one twin");
        let flagged = out.iter().filter(|s| s.error().is_some()).count();
        assert!(size < 1000 || flagged > size / 20, "{what}: the corrupted records are flagged ({flagged})");
        eprintln!("{what}: limits hold on the GPU within {worst:e} rad ({:.1} s)", start.elapsed().as_secs_f32());
    }
}

/// No limit cycle: on targets out of reach (500 random limited chains, targets 1.05 to 1.3 ×
/// their length away, one start), one more iteration after 1 000 moves no joint by more than
/// 1e-6 rad: the solve settles on its closest pose (a step is taken only when it comes
/// closer) rather than circling it. Settling is slow on long chains: after 200 iterations
/// 19 of the 500 still move (up to 0.03 rad per step, each step closer).
#[test]
fn unreachable_targets_settle() {
    let mut rng = Rng(34);
    let (mut worst, mut count) = (0.0f32, 0);
    while count < 500 {
        let c = random_limited(&mut rng, 1000);
        let len = length(&c.chain);
        let root = c.chain.joint(0);
        let mut d = DlsChain::new(c.chain, c.limits).with_starts(1);
        d.chain.target_ms = (root + rng.unit() * len * rng.range(1.05, 1.3)).extend(1.0).to_array();
        if validate_dls(&d).is_err() {
            continue;
        }
        count += 1;
        let a = solve(&d);
        d.chain.mode[1] = 1001;
        let b = solve(&d);
        let n = d.chain.joint_count();
        let t = Vec3::from_slice(&d.chain.target_ms[..3]);
        let mut w = 0.0f32;
        for k in 0..n {
            w = w.max(quat_angle(a.rotation(k), b.rotation(k)));
        }
        assert!(b.position(n - 1).distance(t) <= a.position(n - 1).distance(t));
        worst = worst.max(w);
    }
    eprintln!("500 unreachable targets: the 1 001st iteration moves a joint by at most {worst:e} rad");
    assert!(worst < 1e-6, "{worst}");
}
