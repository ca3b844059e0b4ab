//! Joint limits: constrained FABRIK and CCD, on the CPU and on the GPU (lavapipe in CI), and damped
//! least squares (CPU, with its f64 reference).
//!
//! The limits are checked from the solved rotations alone, by an independent statement of
//! each limit (`violation`): no solved joint may be outside its limit by more than 1e-4 rad.
// `!(x <= tol)` is deliberate: a NaN must fail.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use common::gpu::{assert_matches, outside_contract_ill_conditioned, solver};
use common::limited::{length, random_limited, reachable_chains, worst_violation};
use common::{quat_angle, reflect, Rng};
use crowd_ik::cpu::{CpuPath, FabrikMode};
use crowd_ik::glam::{DQuat, DVec3, Quat, Vec3};
use crowd_ik::prelude::*;
use crowd_ik::records::limit;
use crowd_ik_tools::limits::violation;

const PI: f32 = std::f32::consts::PI;
const SIZES: [usize; 5] = [1, 63, 64, 65, 100_003];

/// The scalar reference (the GPU kernel's twin), on all cores.
fn solve_cpu(chains: &[ConstrainedFabrikChain], mode: FabrikMode) -> Vec<FabrikSolved> {
    solve_cpu_on(chains, mode, CpuPath::Scalar)
}

fn solve_cpu_on(chains: &[ConstrainedFabrikChain], mode: FabrikMode, path: CpuPath) -> Vec<FabrikSolved> {
    let mut out = vec![FabrikSolved::default(); chains.len()];
    ConstrainedFabrikJob::new(chains, &mut out).with_options(mode).with_path(path).run_par().unwrap();
    out
}

fn ccd_chains(chains: &[ConstrainedFabrikChain], max_step: f32, root_first: bool) -> Vec<CcdChain> {
    chains
        .iter()
        .map(|c| CcdChain::new(c.chain, c.limits).with_max_step(max_step).with_root_first(root_first))
        .collect()
}

/// The scalar reference (the GPU kernel's twin), on all cores.
fn solve_ccd(chains: &[CcdChain], mode: FabrikMode) -> Vec<FabrikSolved> {
    solve_ccd_on(chains, mode, CpuPath::Scalar)
}

fn solve_ccd_on(chains: &[CcdChain], mode: FabrikMode, path: CpuPath) -> Vec<FabrikSolved> {
    let mut out = vec![FabrikSolved::default(); chains.len()];
    CcdJob::new(chains, &mut out).with_options(mode).with_path(path).run_par().unwrap();
    out
}

fn as_limited(c: &CcdChain) -> ConstrainedFabrikChain {
    ConstrainedFabrikChain::new(c.chain, c.limits)
}

#[test]
fn limits_hold_on_random_chains_on_the_cpu() {
    let mut rng = Rng(17);
    let chains: Vec<_> = (0..20_000).map(|_| random_limited(&mut rng, 8)).collect();
    let out = solve_cpu(&chains, FabrikMode::Fixed);
    let worst = chains.iter().zip(&out).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
    eprintln!("constrained FABRIK, 20 000 random chains: worst limit violation {worst:e} rad");
    assert!(worst <= 1e-4, "a joint is {worst} rad outside its limit");
    let ccd = ccd_chains(&chains, 0.3, false);
    let out = solve_ccd(&ccd, FabrikMode::Fixed);
    let worst = ccd.iter().zip(&out).map(|(c, s)| worst_violation(&as_limited(c), s)).fold(0.0, f32::max);
    eprintln!("CCD, 20 000 random chains: worst limit violation {worst:e} rad");
    assert!(worst <= 1e-4, "a CCD joint is {worst} rad outside its limit");
    // Every output finite, every error flagged rather than panicking.
    assert!(out.iter().all(|s| s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite())));
}

/// Targets the chain reaches within its limits: the tip of a random pose inside the
/// limits. Reports the share reached and the tip error for constrained FABRIK and CCD in both
/// sweep orders, and holds each to a regression floor below its measured share.
#[test]
fn targets_reachable_within_the_limits_are_reached() {
    let chains = reachable_chains();
    let fabrik = solve_cpu(&chains, FabrikMode::Fixed);
    let ccd = solve_ccd(&ccd_chains(&chains, 0.0, false), FabrikMode::Fixed);
    let ccd_root_first = solve_ccd(&ccd_chains(&chains, 0.0, true), FabrikMode::Fixed);
    let mut shares = Vec::new();
    for (name, out) in [("constrained FABRIK", &fabrik), ("CCD", &ccd), ("CCD root first", &ccd_root_first)] {
        let mut errors: Vec<f32> = chains
            .iter()
            .zip(out)
            .map(|(c, s)| {
                let tip = s.position(c.chain.joint_count() - 1);
                tip.distance(Vec3::from_slice(&c.chain.target_ms[..3])) / length(&c.chain)
            })
            .collect();
        errors.sort_by(f32::total_cmp);
        let reached = out.iter().filter(|s| s.reached()).count();
        let share = reached as f32 / chains.len() as f32;
        eprintln!(
            "{name}, 64 iterations: {reached}/{} reachable targets reached ({:.1} %), tip error / length: median {:e}, 90th percentile {:e}, worst {:e}",
            chains.len(),
            100.0 * share,
            errors[errors.len() / 2],
            errors[errors.len() * 9 / 10],
            errors[errors.len() - 1]
        );
        assert!(chains.iter().zip(out).all(|(c, s)| worst_violation(c, s) <= 1e-4));
        shares.push(share);
    }
    // Regression floors, set from the figures printed above (2026-11-23; root first
    // 2026-11-24): no solver reaches every reachable target in 64 iterations yet (see the
    // docs/joint-limits.md).
    assert!(shares[0] >= 0.2 && shares[1] >= 0.3 && shares[2] >= 0.5, "reached shares fell: {shares:?}");
}

/// Damped least squares on targets the limits may keep out of reach (random targets within
/// 1.3 × the chain's length): its `f64` reference, run the same way (8 starts of 32 steps),
/// ends as far from the target as the solver, within 1e-3 × length (the closest pose to an
/// unreachable target is seldom one pose, so distances are compared); against the reference's least-squares
/// optimum (16 starts of 200 steps) the figures are printed (how many tips end farther than
/// 1e-3 × length from it, and the worst).
#[test]
fn damped_least_squares_and_its_f64_reference() {
    let mut rng = Rng(23);
    let mut chains = Vec::new();
    while chains.len() < 500 {
        let c = random_limited(&mut rng, 32);
        if c.chain.target_ms[3] == 1.0 && crowd_ik::cpu::validate_constrained_fabrik(&c).is_ok() {
            chains.push(DlsChain::new(c.chain, c.limits));
        }
    }
    let (mut twin, mut worst_gap, mut farther, mut out_of_reach) = (0.0f32, f32::NEG_INFINITY, 0, 0);
    for c in &chains {
        let n = c.chain.joint_count();
        let target = Vec3::from_slice(&c.chain.target_ms[..3]);
        let len = length(&c.chain);
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::dls::dls(c, &mut s);
        let (same, _) = crowd_ik::cpu::dls::reference(c, 8, 32).unwrap();
        let ours = s.position(n - 1).distance(target);
        twin = twin.max((ours - same[n - 1].distance(target.as_dvec3()) as f32).abs() / len);
        let (optimum, _) = crowd_ik::cpu::dls::reference(c, 16, 200).unwrap();
        let best = optimum[n - 1].distance(target.as_dvec3()) as f32;
        let gap = (ours - best) / len;
        out_of_reach += usize::from(best > 1e-4 * len);
        farther += usize::from(gap > 1e-3);
        worst_gap = worst_gap.max(gap);
    }
    eprintln!(
        "damped least squares, {} chains ({out_of_reach} out of reach), 8 starts of 32 steps: the f64 reference run the same way as far from the target within {twin:e} × length; against the optimum (16 starts of 200 steps) {farther} end farther than 1e-3 × length, the worst {worst_gap:e} × length",
        chains.len()
    );
    assert!(out_of_reach > 100, "the targets test what they should");
    assert!(twin <= 1e-3, "{twin}");
}

/// Damped least squares (Levenberg–Marquardt, limits as bounds on each joint's coordinates,
/// eight starts): the same reachable targets as above, 99 % within 1e-4 × the chain's length in
/// 32 iterations per start, the limits holding to 1e-4 rad; and on the random chains of the
/// limits test (corrupted records among them) every output finite, every limit held.
#[test]
fn damped_least_squares_reaches_limited_targets() {
    let chains = reachable_chains();
    let solve = |c: &ConstrainedFabrikChain, iterations: u32| {
        let mut d = DlsChain::new(c.chain, c.limits);
        d.chain.mode[1] = iterations;
        d.chain.params[0] = 1e-4 * length(&c.chain);
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::dls::dls(&d, &mut s);
        s
    };
    for iterations in [16, 32] {
        let out: Vec<_> = chains.iter().map(|c| solve(c, iterations)).collect();
        let reached = out.iter().filter(|s| s.reached()).count();
        let share = reached as f32 / chains.len() as f32;
        let worst = chains.iter().zip(&out).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
        eprintln!(
            "damped least squares, {iterations} iterations per start: {reached}/{} reachable targets reached ({:.1} %), worst limit violation {worst:e} rad",
            chains.len(),
            100.0 * share
        );
        assert!(worst <= 1e-4, "a joint is {worst} rad outside its limit");
        if iterations == 32 {
            assert!(share >= 0.99, "reached {share}");
        }
    }
    let mut rng = Rng(17);
    let random: Vec<_> = (0..2_000).map(|_| random_limited(&mut rng, 8)).collect();
    let out: Vec<_> = random.iter().map(|c| solve(c, 8)).collect();
    let worst = random.iter().zip(&out).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
    assert!(worst <= 1e-4, "a joint is {worst} rad outside its limit");
    assert!(out.iter().all(|s| s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite())));
    assert!(out.iter().any(|s| s.error().is_some()), "the corrupted records are flagged");
}

/// CCD's two sweep orders without limits, on random targets within 95 % of the reach:
/// reports the share each reaches in 64 iterations (root first converges faster; docs/joint-limits.md).
#[test]
fn ccd_sweep_orders_without_limits() {
    let mut rng = Rng(6);
    let mut chains = Vec::new();
    while chains.len() < 2_000 {
        let mut c = random_limited(&mut rng, 64);
        if c.chain.target_ms[3] != 1.0 || crowd_ik::cpu::validate_constrained_fabrik(&c).is_err() {
            continue;
        }
        let reach = rng.range(0.1, 0.95) * length(&c.chain);
        c.chain.target_ms = (c.chain.joint(0) + rng.unit() * reach).extend(1.0).to_array();
        c.limits = ChainLimits::default();
        chains.push(c);
    }
    let mut shares = Vec::new();
    for root_first in [false, true] {
        let out = solve_ccd(&ccd_chains(&chains, 0.0, root_first), FabrikMode::Fixed);
        let share = out.iter().filter(|s| s.reached()).count() as f32 / chains.len() as f32;
        eprintln!("CCD without limits, root first {root_first}, 64 iterations: {:.1} % reached", 100.0 * share);
        shares.push(share);
    }
    // Regression floors below the shares measured on 2026-11-24 (79 %, 89 %).
    assert!(shares[0] >= 0.75 && shares[1] >= 0.85, "{shares:?}");
}

/// An arm: a shoulder with a swing cone (86° about any axis) and a twist range (±86°), an
/// elbow hinge bending one way (0..143°) and a wrist, in a random FK pose (elbow bent 10–90°)
/// under a random parent rotation, with a target where a random pose inside the limits puts
/// the wrist (solver-independent), `iterations` iterations, precision 1e-4 × length.
fn random_arm(rng: &mut Rng, iterations: u32) -> ConstrainedFabrikChain {
    let q = rng.quat();
    let (upper, fore) = (rng.range(0.2, 0.35), rng.range(0.2, 0.3));
    let bend = rng.range(10f32, 90.0).to_radians();
    let s = Vec3::new(rng.range(-1.0, 1.0), 1.4, rng.range(-1.0, 1.0));
    let fore_fk = Vec3::new(bend.cos(), 0.0, bend.sin());
    let j = [s, s + q * Vec3::X * upper, s + q * (Vec3::X * upper + fore_fk * fore)];
    let r = [q; 3];
    let parent = q;
    // Hinge about -Y in the elbow's frame: bending toward +Z is the valid way.
    let limits = ChainLimits::default()
        .with_rest_from_pose(parent, &r)
        .with_cone(0, Quat::IDENTITY, Vec3::Y, [1.5, 1.5], Some([-1.5, 1.5]))
        .with_hinge(1, Quat::IDENTITY, -Vec3::Y, 0.0, 2.5);
    // A pose inside the limits: D0 = swing · twist (swing within the cone), D1 a hinge angle.
    let t = rng.range(0.0, std::f32::consts::TAU);
    let swing = Quat::from_scaled_axis((Vec3::Y * t.cos() + Vec3::Z * t.sin()) * 1.5 * rng.range(0.0, 1.0).sqrt());
    let r0 = parent * swing * Quat::from_axis_angle(Vec3::X, rng.range(-1.5, 1.5));
    let r1 = r0 * Quat::from_axis_angle(-Vec3::Y, rng.range(0.0, 2.5));
    let target = s + r0 * Vec3::X * upper + r1 * fore_fk * fore;
    let chain = FabrikChain::new(&j, &r, target, iterations).with_precision(1e-4 * (upper + fore));
    ConstrainedFabrikChain::new(chain, limits)
}

/// Constrained FABRIK on arms (a cone-and-twist shoulder, a one-way elbow hinge) with
/// `option::ALIGN_HINGES`: reports the share of targets inside the limits reached in 16
/// iterations with and without it, and CCD's; the limits hold either way.
#[test]
fn aligned_hinges_let_arms_reach() {
    let mut rng = Rng(12);
    let arms: Vec<_> = (0..2_000).map(|_| random_arm(&mut rng, 16)).collect();
    let aligned: Vec<_> = arms.iter().map(|c| c.with_align_hinges(true)).collect();
    let plain = solve_cpu(&arms, FabrikMode::Fixed);
    let with = solve_cpu(&aligned, FabrikMode::Fixed);
    let ccd = solve_ccd(&ccd_chains(&arms, 0.0, false), FabrikMode::Fixed);
    let share = |out: &[FabrikSolved]| out.iter().filter(|s| s.reached()).count() as f32 / out.len() as f32;
    let (a, b, c) = (share(&plain), share(&with), share(&ccd));
    eprintln!(
        "arms, 16 iterations: constrained FABRIK reaches {:.1} %, with aligned hinges {:.1} %, CCD {:.1} %",
        100.0 * a,
        100.0 * b,
        100.0 * c
    );
    for (chains, out) in [(&arms, &plain), (&aligned, &with)] {
        let worst = chains.iter().zip(out.iter()).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
        assert!(worst <= 1e-4, "a joint is {worst} rad outside its limit");
    }
    // Regression floors below the shares measured on 2026-11-24.
    assert!(b >= 0.4 && b > a + 0.3, "aligned hinges reach {b}, plain {a}");
    // Random chains with every kind of limit keep their limits with the option too.
    let mut rng = Rng(13);
    let random: Vec<_> = (0..5_000).map(|_| random_limited(&mut rng, 8).with_align_hinges(true)).collect();
    let out = solve_cpu(&random, FabrikMode::Fixed);
    let worst = random.iter().zip(&out).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
    assert!(worst <= 1e-4, "a random chain's joint is {worst} rad outside its limit with aligned hinges");
}

/// Reference cases: a straight chain reaching straight out gets identity corrections; a
/// planar three-bone chain whose last joint is locked straight and whose middle joint
/// bends one way is a two-bone limb with one answer (law of cosines); a one-bone chain
/// reaches a target inside its cone exactly and stops on the cone's rim for one outside.
#[test]
fn reference_cases() {
    // Straight out.
    let j: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.0, 0.0, 0.3 * i as f32)).collect();
    let r = vec![Quat::IDENTITY; 5];
    let limits = (0..4).fold(ChainLimits::default().with_rest_from_pose(Quat::IDENTITY, &r), |l, i| {
        l.with_cone(i, Quat::IDENTITY, Vec3::X, [0.5, 0.8], Some([-0.2, 0.2]))
    });
    let c = ConstrainedFabrikChain::new(FabrikChain::new(&j, &r, Vec3::new(0.0, 0.0, 1.5), 10), limits);
    let mut s = FabrikSolved::default();
    crowd_ik::cpu::constrained_fabrik(&c, &mut s);
    for k in 0..5 {
        assert!(quat_angle(s.correction(k), Quat::IDENTITY) < 1e-6, "joint {k}: {:?}", s.correction(k));
    }
    assert!(s.position(4).distance(Vec3::new(0.0, 0.0, 1.2)) < 1e-6);

    // Planar: bones 0.5, 0.3, 0.2 along +X; joint 2 locked straight (hinge [0, 0]), joint 1
    // bends only one way about +Z.
    let j = [Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.8, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)];
    let r = [Quat::IDENTITY; 4];
    let target = Vec3::new(0.4, 0.5, 0.0);
    let limits = ChainLimits::default()
        .with_hinge(0, Quat::IDENTITY, Vec3::Z, -PI, PI)
        .with_hinge(1, Quat::IDENTITY, Vec3::Z, 0.0, PI)
        .with_hinge(2, Quat::IDENTITY, Vec3::Z, 0.0, 0.0);
    let c = ConstrainedFabrikChain::new(FabrikChain::new(&j, &r, target, 64).with_precision(1e-6), limits);
    let mut s = FabrikSolved::default();
    crowd_ik::cpu::constrained_fabrik(&c, &mut s);
    eprintln!("planar reference, constrained FABRIK: elbow {:?}, tip {:?}", s.position(1), s.position(3));
    crowd_ik::cpu::ccd_with_mode(&CcdChain::new(c.chain, c.limits), FabrikMode::Converge, &mut s);
    let (a, b, d) = (0.5f32, 0.5f32, target.length());
    // The elbow: angle at the root between the target and the upper bone, bending
    // counter-clockwise (positive about +Z) at joint 1 puts the elbow clockwise of the
    // target line.
    let alpha = ((a * a + d * d - b * b) / (2.0 * a * d)).acos();
    let elbow = Quat::from_rotation_z(-alpha) * (target / d) * a;
    eprintln!("planar reference, CCD: elbow {:?} (expected {elbow:?}), tip {:?}", s.position(1), s.position(3));
    assert!(s.position(3).distance(target) < 1e-4);
    assert!(s.position(1).distance(elbow) < 1e-3, "elbow {:?}, expected {elbow:?}", s.position(1));

    // One bone, a cone of 0.5 rad about its rest direction +X.
    let j = [Vec3::ZERO, Vec3::X];
    let r = [Quat::IDENTITY; 2];
    let limits = ChainLimits::default().with_cone(0, Quat::IDENTITY, Vec3::Y, [0.5, 0.5], None);
    let inside = Quat::from_rotation_z(0.4) * Vec3::X;
    let c = ConstrainedFabrikChain::new(FabrikChain::new(&j, &r, inside, 4).with_precision(1e-6), limits);
    crowd_ik::cpu::constrained_fabrik(&c, &mut s);
    assert!(s.position(1).distance(inside) < 1e-6 && s.reached(), "{:?}", s.position(1));
    let outside_dir = Quat::from_rotation_z(0.9) * Vec3::X;
    let c = ConstrainedFabrikChain::new(FabrikChain::new(&j, &r, outside_dir, 4), limits);
    crowd_ik::cpu::constrained_fabrik(&c, &mut s);
    let rim = Quat::from_rotation_z(0.5) * Vec3::X;
    assert!(s.position(1).distance(rim) < 1e-5, "{:?}, rim {rim:?}", s.position(1));
}

/// A hinge-limited chain never bends backwards: every hinge angle stays in `[0, 2.5]`.
#[test]
fn a_hinge_limited_chain_never_bends_backwards() {
    let mut rng = Rng(99);
    let n = 6;
    let j: Vec<Vec3> = (0..n).map(|i| Vec3::new(0.0, -0.25 * i as f32, 0.0)).collect();
    let r = vec![Quat::IDENTITY; n];
    let limits = (1..n - 1)
        .fold(ChainLimits::default().with_cone(0, Quat::IDENTITY, Vec3::X, [1.2, 1.2], None), |l, i| {
            l.with_hinge(i, Quat::IDENTITY, Vec3::X, 0.0, 2.5)
        });
    for solver in ["fabrik", "ccd"] {
        let mut worst: f32 = 0.0;
        for _ in 0..2_000 {
            let target = j[0] + rng.unit() * rng.range(0.1, 1.4);
            let c = ConstrainedFabrikChain::new(FabrikChain::new(&j, &r, target, 16), limits);
            let mut s = FabrikSolved::default();
            if solver == "fabrik" {
                crowd_ik::cpu::constrained_fabrik(&c, &mut s);
            } else {
                crowd_ik::cpu::ccd(&CcdChain::new(c.chain, c.limits), &mut s);
            }
            for i in 1..n - 1 {
                let local = s.rotation(i - 1).conjugate() * s.rotation(i);
                let (axis, angle) = local.to_axis_angle();
                let signed = if axis.dot(Vec3::X) < 0.0 { -angle } else { angle };
                let signed = if signed > PI { signed - 2.0 * PI } else { signed };
                worst = worst.min(signed);
                assert!((-1e-4..=2.5 + 1e-4).contains(&signed), "{solver}: joint {i} bent to {signed}");
            }
        }
        eprintln!("{solver}: smallest hinge angle over 2 000 targets {worst:e} rad");
    }
}

/// CCD without limits against an independent f64 implementation on small chains, in both
/// sweep orders (the reference moves every joint below a visited one at each visit).
#[test]
fn ccd_matches_an_f64_reference() {
    let mut rng = Rng(3);
    let mut worst: f32 = 0.0;
    for case in 0..500 {
        let n = 3 + (case % 3);
        let mut j = vec![Vec3::ZERO];
        for _ in 1..n {
            j.push(*j.last().unwrap() + (Vec3::Y + rng.unit() * 0.5).normalize() * rng.range(0.2, 0.5));
        }
        let r: Vec<Quat> = (0..n).map(|_| rng.quat()).collect();
        let target = rng.unit() * rng.range(0.2, 0.9);
        let step = [0.0, 0.2][case % 2];
        let root_first = case % 4 >= 2;
        let chain = CcdChain::new(FabrikChain::new(&j, &r, target, 6), ChainLimits::default())
            .with_max_step(step)
            .with_root_first(root_first);
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::ccd(&chain, &mut s);
        // f64 reference.
        let mut p: Vec<DVec3> = j.iter().map(|v| v.as_dvec3()).collect();
        let t = target.as_dvec3();
        for _ in 0..6 {
            for visit in 0..n - 1 {
                let jj = if root_first { visit } else { n - 2 - visit };
                let a = (p[n - 1] - p[jj]).normalize();
                let b = (t - p[jj]).normalize();
                let mut q = DQuat::from_rotation_arc(a, b);
                let (axis, angle) = q.to_axis_angle();
                if step > 0.0 && angle > f64::from(step) {
                    q = DQuat::from_axis_angle(axis, f64::from(step));
                }
                for k in jj + 1..n {
                    p[k] = p[jj] + q * (p[k] - p[jj]);
                }
            }
        }
        let len = common::chain_length(j.iter().copied());
        for (k, pk) in p.iter().enumerate() {
            let d = (s.position(k).as_dvec3() - *pk).length() as f32 / len;
            worst = worst.max(d);
        }
    }
    eprintln!("CCD against the f64 reference: worst joint difference {worst:e} x length");
    assert!(worst <= 1e-4, "{worst}");
}

/// Bad limits get their error codes (CPU = GPU is checked by the batch tests).
#[test]
fn bad_limits_are_reported() {
    let j = [Vec3::ZERO, Vec3::Y, Vec3::Y * 2.0, Vec3::Y * 3.0];
    let r = [Quat::IDENTITY; 4];
    let base = FabrikChain::new(&j, &r, Vec3::new(1.0, 1.0, 0.0), 8);
    let ok = ChainLimits::default();
    let cases: Vec<(ChainLimits, ChainError)> = vec![
        (ok.with_hinge(1, Quat::IDENTITY, Vec3::Y, 0.0, 1.0), ChainError::DegenerateMidAxis),
        (ok.with_hinge(1, Quat::IDENTITY, Vec3::X, 1.0, 0.0), ChainError::InvalidParameter),
        (ok.with_hinge(1, Quat::IDENTITY, Vec3::X, -4.0, 0.0), ChainError::InvalidParameter),
        (ok.with_cone(1, Quat::IDENTITY, Vec3::X, [0.0, 1.0], None), ChainError::InvalidParameter),
        // A cone thinner than 1e-3 rad one way: rounding across it is more than the contract
        // along it (found by the dls fuzz target: 7.6e-6 rad).
        (ok.with_cone(1, Quat::IDENTITY, Vec3::X, [0.8, 7.6e-6], None), ChainError::InvalidParameter),
        (ok.with_cone(1, Quat::IDENTITY, Vec3::X, [9e-4, 0.5], None), ChainError::InvalidParameter),
        (ok.with_twist(3, Quat::IDENTITY, -1.0, 1.0), ChainError::InvalidParameter),
        (
            ok.with_joint(1, limit::HINGE | limit::TWIST, Quat::IDENTITY, Vec3::X, [0.0; 4]),
            ChainError::InvalidParameter,
        ),
        (ok.with_twist(1, Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), -1.0, 1.0), ChainError::NotNormalized),
        (ok.with_twist(1, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0), -1.0, 1.0), ChainError::NonFinite),
        (ok.with_parent(Quat::from_xyzw(0.0, 0.0, 0.0, 0.5)), ChainError::NotNormalized),
        // An elliptical cone needs an axis off the bone, whatever its length (a huge axis
        // nearly along the bone once left each path its own rounding of the cancellation).
        (ok.with_cone(1, Quat::IDENTITY, Vec3::Y, [0.8, 0.5], None), ChainError::DegenerateMidAxis),
        // A hinge axis 0.12° off its bone: f32 rounding alone moves its frame past the 1e-4
        // rad contract (found by the constrained_fabrik fuzz target).
        (ok.with_hinge(1, Quat::IDENTITY, Vec3::new(2e-3, 1.0, 0.0), -1.2, 1.2), ChainError::DegenerateMidAxis),
        (
            ok.with_cone(1, Quat::IDENTITY, Vec3::new(1.0, 1.66e35, 0.0), [0.8, 0.5], Some([0.5, 0.5])),
            ChainError::DegenerateMidAxis,
        ),
    ];
    for (limits, error) in cases {
        let c = ConstrainedFabrikChain::new(base, limits);
        assert_eq!(crowd_ik::cpu::validate_constrained_fabrik(&c), Err(error), "{limits:?}");
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::constrained_fabrik(&c, &mut s);
        assert_eq!(s.error(), Some(error));
        assert!(s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite()));
        assert_eq!(crowd_ik::cpu::validate_ccd(&CcdChain::new(base, limits)), Err(error));
    }
    let c = CcdChain::new(base, ok).with_max_step(-0.1);
    assert_eq!(crowd_ik::cpu::validate_ccd(&c), Err(ChainError::InvalidParameter));
}

/// A limit's axis is a direction: any finite length gives the unit axis's solve on every
/// path (scalar, SIMD, GPU), and a circular cone takes any axis, along the bone included.
#[test]
fn limit_axes_are_directions_of_any_length() {
    let mut rng = Rng(91);
    let unit: Vec<ConstrainedFabrikChain> = (0..64).map(|_| random_limited(&mut rng, 8)).collect();
    let scaled = |k: f32| -> Vec<ConstrainedFabrikChain> {
        unit.iter()
            .map(|c| {
                let mut c = *c;
                for j in &mut c.limits.joints {
                    for a in &mut j.axis[..3] {
                        *a *= k;
                    }
                }
                c
            })
            .collect()
    };
    let reference = solve_cpu_on(&unit, FabrikMode::Fixed, CpuPath::Scalar);
    for k in [1e35f32, 3.0, 1e-30] {
        let chains = scaled(k);
        for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
            let out = solve_cpu_on(&chains, FabrikMode::Fixed, path);
            for (i, (o, r)) in out.iter().zip(&reference).enumerate() {
                assert_eq!(o.status[1], r.status[1], "axis × {k}, {path}, chain {i}");
                let d = (0..12).map(|j| o.position(j).distance(r.position(j))).fold(0.0, f32::max);
                assert!(d <= 1e-5 * length(&chains[i].chain), "axis × {k}, {path}, chain {i}: {d}");
            }
        }
        if let Some(mut gpu) = solver() {
            let mut out = vec![FabrikSolved::default(); chains.len()];
            gpu.solve(&chains, &mut out).unwrap();
            for (i, (o, r)) in out.iter().zip(&reference).enumerate() {
                assert_eq!(o.status[1], r.status[1], "axis × {k}, GPU, chain {i}");
            }
        }
    }
    // A circular cone along the bone: solved, within its cone.
    let j = [Vec3::ZERO, Vec3::Y, Vec3::Y * 2.0, Vec3::Y * 3.0];
    let c = ConstrainedFabrikChain::new(
        FabrikChain::new(&j, &[Quat::IDENTITY; 4], Vec3::new(1.5, 1.5, 0.0), 16),
        ChainLimits::default().with_cone(1, Quat::IDENTITY, Vec3::Y * 1e30, [0.4, 0.4], None),
    );
    assert_eq!(crowd_ik::cpu::validate_constrained_fabrik(&c), Ok(()));
    let mut s = FabrikSolved::default();
    crowd_ik::cpu::constrained_fabrik(&c, &mut s);
    assert_eq!(s.error(), None);
    assert!(crowd_ik_tools::limits::violation(&c, &s, 1) <= 1e-4);
}

/// A mirrored chain is solved as its unmirrored twin, reflected back: the same limits on a
/// chain and on its mirror image give mirror-image solutions.
#[test]
fn mirrored_limited_chains_solve_as_their_twins() {
    let mut rng = Rng(8);
    for _ in 0..500 {
        let c = random_limited(&mut rng, 8);
        // Fields of a ConstrainedFabrikChain as [f32; 4]: joints 0..16, rotations 16..32,
        // target 32, then the limits' parent rotation at 35.
        let points: Vec<usize> = (0..16).chain([32]).collect();
        let rotations: Vec<usize> = (16..32).chain([35]).collect();
        let mut m = reflect(&c, &points, &rotations);
        m.chain = m.chain.with_mirrored(true);
        let (mut a, mut b) = (FabrikSolved::default(), FabrikSolved::default());
        crowd_ik::cpu::constrained_fabrik(&c, &mut a);
        crowd_ik::cpu::constrained_fabrik(&m, &mut b);
        assert_eq!(a.status, b.status);
        for k in 0..a.joints_written() {
            let pa = a.position(k);
            assert_eq!(Vec3::new(-pa.x, pa.y, pa.z), b.position(k));
            assert_eq!(a.corrections[k], b.corrections[k]);
        }
    }
}

/// The SIMD batch paths of constrained FABRIK and CCD (every one this CPU has: AVX-512,
/// AVX2) against the scalar solvers on N ∈ {1, 63, 64, 65, 100 003} random limited chains
/// of every joint count (so every batch mixes groups; CCD with and without a cap, both
/// sweep orders; mirrored chains and aligned hinges, which take the scalar path, in the
/// same groups): **bit for bit** the scalar results, every word of every record. The lanes
/// repeat the scalar code's operations in its order, glam's quaternion product, dot product
/// and normalisation included (their SSE2 forms, glam's default on x86-64), so not even an
/// ill-conditioned chain can part; and the limits hold on the SIMD results.
#[test]
fn simd_paths_match_scalar_for_constrained_fabrik_and_ccd() {
    let paths: Vec<CpuPath> = CpuPath::ALL.into_iter().filter(|p| *p != CpuPath::Scalar && p.is_available()).collect();
    eprintln!("SIMD paths on this CPU: {paths:?}");
    let mut rng = Rng(2027);
    for (&size, solver) in SIZES.iter().flat_map(|s| [(s, "constrained FABRIK"), (s, "CCD")]) {
        let iterations = [8, 16][size % 2];
        let mut chains: Vec<_> = (0..size).map(|_| random_limited(&mut rng, iterations)).collect();
        for (i, c) in chains.iter_mut().enumerate() {
            match i % 23 {
                5 => c.chain = c.chain.with_mirrored(true),
                9 if solver != "CCD" => *c = c.with_align_hinges(true),
                _ => {}
            }
        }
        let ccd: Vec<CcdChain> = chains
            .iter()
            .enumerate()
            .map(|(i, c)| {
                CcdChain::new(c.chain, c.limits).with_max_step([0.0, 0.25][i % 2]).with_root_first(i % 3 == 0)
            })
            .collect();
        let solve = |path: CpuPath| {
            if solver == "CCD" {
                solve_ccd_on(&ccd, FabrikMode::Fixed, path)
            } else {
                solve_cpu_on(&chains, FabrikMode::Fixed, path)
            }
        };
        let cpu = solve(CpuPath::Scalar);
        for &path in &paths {
            let out = solve(path);
            let what = format!("{solver} on {path} x{size}");
            for (i, (c, s)) in cpu.iter().zip(&out).enumerate() {
                let (cw, sw): (&[u32], &[u32]) =
                    (bytemuck::cast_slice(bytemuck::bytes_of(c)), bytemuck::cast_slice(bytemuck::bytes_of(s)));
                let differ: Vec<(usize, f32, f32)> = (0..cw.len())
                    .filter(|&w| cw[w] != sw[w])
                    .map(|w| (w, f32::from_bits(cw[w]), f32::from_bits(sw[w])))
                    .collect();
                assert!(
                    differ.is_empty(),
                    "{what}: chain {i} differs from the scalar solver's in words {differ:?}; kinds {:?}",
                    chains[i].limits.kinds
                );
            }
            let worst = chains
                .iter()
                .zip(&out)
                // (`violation` reads a chain's limits unmirrored.)
                .filter(|(c, _)| c.chain.mode[2] & option::MIRRORED == 0)
                .map(|(c, s)| worst_violation(c, s))
                .fold(0.0, f32::max);
            assert!(worst <= 1e-4, "{what}: a joint is {worst} rad outside its limit");
            eprintln!("{what}: bit for bit the scalar results; limits hold within {worst:e} rad");
        }
    }
}

/// GPU = CPU for constrained FABRIK and CCD on N ∈ {1, 63, 64, 65, 100 003}, within the
/// contract (1e-4 × length, 1e-3 rad), and the limits hold on the GPU's results too.
///
/// Known gap: a limit clamp is not continuous (an angle past both bounds goes to the
/// nearer one; a swing at the ellipse's rim), so a rounding difference between the twins
/// can send a chain down another path, and 8 iterations carry that on; over 100 003
/// random chains 35 constrained-FABRIK chains (0.035 %) do (2026-11-24). Their count is
/// printed and must stay below 1 in 1 000 — a known gap of issue 17, not the contract.
/// Every chain's error code must agree and every GPU result must keep its limits.
#[test]
fn gpu_matches_cpu_for_constrained_fabrik_and_ccd() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(2026);
    for &size in &SIZES {
        let start = std::time::Instant::now();
        let chains: Vec<_> = (0..size).map(|_| random_limited(&mut rng, 8)).collect();
        let ccd = ccd_chains(&chains, [0.0, 0.25][size % 2], size % 3 == 0);
        let mut out = vec![FabrikSolved::default(); size];
        for solver in ["constrained FABRIK", "CCD"] {
            let cpu = if solver == "CCD" {
                solve_ccd(&ccd, FabrikMode::Fixed)
            } else {
                solve_cpu(&chains, FabrikMode::Fixed)
            };
            if solver == "CCD" {
                gpu.solve(&ccd, &mut out).unwrap();
            } else {
                gpu.solve(&chains, &mut out).unwrap();
            }
            let what = format!("{solver} x{size}");
            let len = |i: usize| length(&chains[i].chain);
            let (worst, at) = chains
                .iter()
                .zip(&out)
                .enumerate()
                .map(|(i, (c, s))| (worst_violation(c, s), i))
                .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
            let kinds: Vec<u32> = (0..16).map(|k| chains[at].limits.kind(k)).collect();
            let joint_worst: Vec<f32> =
                (0..chains[at].chain.joint_count() - 1).map(|k| violation(&chains[at], &out[at], k)).collect();
            assert!(worst <= 1e-4, "{what}: a GPU joint is {worst} rad outside its limit: chain {at}, kinds {kinds:?}, per joint {joint_worst:?}, limits {:?}", chains[at].limits.joints);
            assert!(out.iter().all(|s| s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite())));
            assert!(cpu.iter().zip(&out).all(|(c, g)| c.status[1] == g.status[1]), "{what}: an error code differs");
            if size < 1000 {
                assert_matches(&what, &cpu, &out, len, |i| format!("{:?}", chains[i]));
            } else {
                let solve_at = |i: usize, t: [f32; 4]| {
                    if solver == "CCD" {
                        let mut c = ccd[i];
                        c.chain.target_ms = t;
                        solve_ccd(&[c], FabrikMode::Fixed)[0]
                    } else {
                        let mut c = chains[i];
                        c.chain.target_ms = t;
                        solve_cpu(&[c], FabrikMode::Fixed)[0]
                    }
                };
                let targets: Vec<[f32; 4]> = chains.iter().map(|c| c.chain.target_ms).collect();
                outside_contract_ill_conditioned(&what, &cpu, &out, &targets, len, solve_at);
            }
            eprintln!("{what}: limits hold on the GPU within {worst:e} rad ({:.1} s)", start.elapsed().as_secs_f32());
        }
    }
}

/// GPU = CPU for constrained FABRIK with `option::ALIGN_HINGES` on arms, N ∈ {1, 63, 64, 65,
/// 100 003}, within the contract (on the large batch: the rule of
/// `outside_contract_ill_conditioned`), and the GPU's results keep their limits. The option
/// has pipelines of its own (`ALIGN` overridden); a third of the arms go without it, so each
/// batch runs both.
#[test]
fn gpu_matches_cpu_for_aligned_hinges() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(2027);
    for &size in &SIZES {
        // Every third arm without the option: one batch holds both pipelines' chains.
        let chains: Vec<_> = (0..size).map(|i| random_arm(&mut rng, 16).with_align_hinges(i % 3 != 0)).collect();
        let cpu = solve_cpu(&chains, FabrikMode::Fixed);
        let mut out = vec![FabrikSolved::default(); size];
        gpu.solve(&chains, &mut out).unwrap();
        let what = format!("aligned hinges x{size}");
        let len = |i: usize| length(&chains[i].chain);
        let worst = chains.iter().zip(&out).map(|(c, s)| worst_violation(c, s)).fold(0.0, f32::max);
        assert!(worst <= 1e-4, "{what}: a GPU joint is {worst} rad outside its limit");
        let reached = out.iter().filter(|s| s.reached()).count();
        eprintln!("{what}: {reached} reached on the GPU");
        if size < 1000 {
            assert_matches(&what, &cpu, &out, len, |i| format!("{:?}", chains[i]));
        } else {
            let targets: Vec<[f32; 4]> = chains.iter().map(|c| c.chain.target_ms).collect();
            let solve_at = |i: usize, t: [f32; 4]| {
                let mut c = chains[i];
                c.chain.target_ms = t;
                solve_cpu(&[c], FabrikMode::Fixed)[0]
            };
            outside_contract_ill_conditioned(&what, &cpu, &out, &targets, len, solve_at);
        }
    }
}

/// Random limited chains made hostile for CCD: targets on a joint, a last bone barely
/// longer than the zero-length threshold, mirrored chains (their twin's limits are what
/// hold), and FK poses outside the limits (rest frames turned away from FK).
fn hostile_ccd(rng: &mut Rng, iterations: u32) -> CcdChain {
    let mut c = random_limited(rng, iterations);
    let n = c.chain.joint_count();
    match rng.below(4) {
        0 => c.chain.target_ms = c.chain.joints_ms[rng.below(n as u32) as usize],
        1 => {
            // The last bone 2e-6 of the chain's length, along its FK direction.
            let (a, b) = (c.chain.joint(n - 2), c.chain.joint(n - 1));
            let len = length(&c.chain);
            let tip = a + (b - a).normalize() * len * 2e-6;
            c.chain.joints_ms[n - 1] = tip.extend(1.0).to_array();
        }
        _ => {}
    }
    if rng.below(3) == 0 {
        c.chain = c.chain.with_mirrored(true);
    }
    CcdChain::new(c.chain, c.limits).with_max_step([0.0, 0.3][rng.below(2) as usize]).with_root_first(rng.below(2) == 0)
}

/// The limits a mirrored chain's solution keeps are its unmirrored twin's: the violation of
/// a solved chain, measured on the twin for a mirrored one.
fn ccd_violation(c: &CcdChain, s: &FabrikSolved) -> f32 {
    let limited = as_limited(c);
    if c.chain.mode[2] & crowd_ik::records::option::MIRRORED == 0 {
        return worst_violation(&limited, s);
    }
    let points: Vec<usize> = (0..16).chain([32]).collect();
    let rotations: Vec<usize> = (16..32).chain([35]).collect();
    let mut twin = reflect(&limited, &points, &rotations);
    twin.chain = twin.chain.with_mirrored(false);
    let mut solved = *s;
    let n = c.chain.joint_count();
    for k in 0..n {
        let p = s.position(k);
        solved.positions_ms[k] = [-p.x, p.y, p.z, solved.positions_ms[k][3]];
        let q = s.rotation(k);
        solved.rotations_ms[k] = [q.x, -q.y, -q.z, q.w];
    }
    worst_violation(&twin, &solved)
}

/// CCD's limits hold after any number of iterations, zero included (the FK pose projected
/// onto the limits, as constrained FABRIK does), and whatever the geometry: a visit whose
/// tip or target is on its joint still moves the joint into its limit. Scalar, every SIMD
/// path and the GPU.
#[test]
fn ccd_limits_hold_at_zero_iterations_and_in_degenerate_visits() {
    let mut rng = Rng(3132);
    let paths: Vec<CpuPath> = CpuPath::ALL.into_iter().filter(|p| p.is_available()).collect();
    let mut gpu = solver();
    for iterations in [0, 1, 64] {
        let chains: Vec<CcdChain> = (0..4_000).map(|_| hostile_ccd(&mut rng, iterations)).collect();
        let scalar = solve_ccd(&chains, FabrikMode::Fixed);
        let mut checked = 0;
        for (i, (c, s)) in chains.iter().zip(&scalar).enumerate() {
            let worst = ccd_violation(c, s);
            assert!(worst <= 1e-4, "{iterations} iterations, chain {i}: {worst} rad outside a limit: {c:?}");
            checked += usize::from(s.error().is_none() && c.chain.target_ms[3] >= 1.0);
        }
        assert!(checked > 3_000, "{checked} chains solved at full weight");
        for &path in &paths {
            let out = solve_ccd_on(&chains, FabrikMode::Fixed, path);
            assert_eq!(bytemuck::cast_slice::<_, u8>(&out), bytemuck::cast_slice::<_, u8>(&scalar), "{path}");
        }
        if let Some(gpu) = gpu.as_mut() {
            let mut out = vec![FabrikSolved::default(); chains.len()];
            gpu.solve(&chains, &mut out).unwrap();
            for (i, (c, s)) in chains.iter().zip(&out).enumerate() {
                let worst = ccd_violation(c, s);
                assert!(worst <= 1e-4, "GPU, {iterations} iterations, chain {i}: {worst} rad outside a limit");
                assert_eq!(s.status[1], scalar[i].status[1], "GPU error code of chain {i}");
            }
        }
    }
}

/// The cases of the report: a twist range [0.5, 1] on a joint at twist 0 with zero
/// iterations; the target on that joint after 64 iterations; a three-joint mirrored
/// root-first chain with a 1e-6-unit last bone.
#[test]
fn ccd_reference_cases_keep_their_limits() {
    let j = [Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
    let r = [Quat::IDENTITY; 3];
    let limits = ChainLimits::default().with_twist(0, Quat::IDENTITY, 0.5, 1.0);
    for (iterations, target) in [(0, Vec3::new(1.0, 1.0, 0.0)), (64, j[1]), (64, j[2]), (8, Vec3::new(0.5, 1.5, 0.3))] {
        let chain = CcdChain::new(FabrikChain::new(&j, &r, target, iterations), limits);
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::ccd(&chain, &mut s);
        assert_eq!(s.error(), None);
        let v = violation(&as_limited(&chain), &s, 0);
        assert!(v <= 1e-4, "{iterations} iterations, target {target}: {v} rad outside the twist range");
    }
    let short = [Vec3::ZERO, Vec3::new(0.3, 0.9, 0.1), Vec3::new(0.3, 0.9 + 1e-6, 0.1)];
    let cone = ChainLimits::default()
        .with_cone(0, Quat::from_axis_angle(Vec3::X, 1.0), Vec3::Z, [0.2, 0.2], Some([0.3, 0.6]))
        .with_twist(1, Quat::from_axis_angle(Vec3::Y, 2.0), -0.2, 0.2);
    let chain = CcdChain::new(
        FabrikChain::new(&short, &[Quat::IDENTITY; 3], Vec3::new(-0.5, 0.4, 0.2), 16).with_mirrored(true),
        cone,
    )
    .with_root_first(true);
    let mut s = FabrikSolved::default();
    crowd_ik::cpu::ccd(&chain, &mut s);
    if s.error().is_none() {
        let v = ccd_violation(&chain, &s);
        assert!(v <= 1e-4, "mirrored root-first chain with a 1e-6 bone: {v} rad outside");
    }
}

/// `validate()` gives exactly the solver's verdict, for every record: random records of
/// every kind, a tenth corrupted, a third mirrored (hinge axes along the recorded bone or
/// along the twin's).
#[test]
fn validate_is_the_solvers_verdict() {
    let mut rng = Rng(3232);
    let code = |r: Result<(), crowd_ik::ChainError>| r.err().map_or(0, |e| e.code());
    for i in 0..20_000 {
        let mut c = random_limited(&mut rng, 4);
        if i % 3 == 0 {
            c.chain = c.chain.with_mirrored(true);
        }
        if i % 7 == 0 {
            // A hinge whose axis lies along the recorded first bone, or along its mirror.
            let n = c.chain.joint_count();
            let bone = (c.chain.rotation(0).conjugate() * (c.chain.joint(1) - c.chain.joint(0))).normalize();
            let axis = if i % 2 == 0 { bone } else { Vec3::new(-bone.x, bone.y, bone.z) };
            if n > 2 {
                c.limits = c.limits.with_hinge(0, Quat::from_array(c.limits.joints[0].rest), axis, -1.0, 1.0);
            }
        }
        if i % 11 == 0 {
            common::corrupt(&mut rng, &mut c, 2);
        }
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::constrained_fabrik(&c, &mut s);
        assert_eq!(code(crowd_ik::cpu::validate_constrained_fabrik(&c)), s.status[1], "constrained FABRIK {i}: {c:?}");
        let ccd = CcdChain::new(c.chain, c.limits).with_max_step([0.0, 0.2, -1.0][i % 3]);
        crowd_ik::cpu::ccd(&ccd, &mut s);
        assert_eq!(code(crowd_ik::cpu::validate_ccd(&ccd)), s.status[1], "CCD {i}: {ccd:?}");
    }
}
