//! Crowd look-at (`LookAtChain`): aims exactly where nothing holds it back, yaw/pitch limits
//! hold, trees of joints (neck, head, eyes) compose, the up-vector constraint, weights,
//! errors, mirroring, and the GPU kernel against its CPU twin.
// `!(x <= tol)` is deliberate: a NaN difference must fail.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use common::gpu::{assert_matches, solver};
use common::*;
use crowd_ik::cpu::{look_at, validate_look_at, CpuPath};
use crowd_ik::glam::{DVec3, Quat, Vec3};
use crowd_ik::prelude::*;

/// A random look-at record: 1 to 4 joints, each parented to an earlier one or outside,
/// random local axes and weights, limits on about half the joints (rest near the FK pose),
/// up targets and shortest arcs on some, about 5 % degenerate (target on a joint, zero
/// weight, up target on the aim axis).
fn random_look_at(rng: &mut Rng) -> LookAtChain {
    let n = 1 + rng.below(4) as usize;
    let base = Vec3::new(rng.range(-2.0, 2.0), rng.range(0.5, 2.0), rng.range(-2.0, 2.0));
    let parent_ms = rng.quat();
    let target = base + rng.unit() * rng.range(0.3, 6.0);
    let mut rec = LookAtChain::new(target).with_parent(parent_ms);
    let mut pos = vec![];
    let mut rot = vec![];
    for i in 0..n {
        let parent = if i == 0 || rng.below(5) == 0 { None } else { Some(rng.below(i as u32) as usize) };
        let (pp, pr) = parent.map_or((base, parent_ms), |p| (pos[p], rot[p]));
        let p = if parent.is_none() && i > 0 {
            base + rng.unit() * 0.1
        } else {
            pp + pr * (rng.unit() * rng.range(0.03, 0.3))
        };
        let r = (pr * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.6))).normalize();
        let forward = rng.unit();
        let up = forward.any_orthonormal_vector();
        let up = Quat::from_axis_angle(forward, rng.range(-3.0, 3.0)) * up;
        let weight = if rng.below(3) == 0 { rng.range(0.2, 1.0) } else { 1.0 };
        rec = rec.with_joint(parent, p, r, forward, up, weight);
        if rng.below(2) == 0 {
            let rest = (pr.conjugate() * r * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.3))).normalize();
            let yaw = [rng.range(-2.5, 0.0), rng.range(0.0, 2.5)];
            let pitch = [rng.range(-1.5, 0.0), rng.range(0.0, 1.5)];
            rec = rec.with_limits(i, rest, yaw, pitch);
        }
        pos.push(p);
        rot.push(r);
    }
    if rng.below(2) == 0 {
        rec = rec.with_up_target(Some(base + rng.unit() * 3.0));
    }
    rec = rec.with_shortest_arc(rng.below(3) == 0);
    match rng.below(40) {
        0 => rec.target_ms[..3].copy_from_slice(&pos[n - 1].to_array()),
        1 => rec = rec.with_weight(0.0),
        2 => rec = rec.with_weight(0.5),
        3 => rec = rec.with_up_target(Some(pos[0] + (target - pos[0]) * 2.0)),
        _ => {}
    }
    rec
}

fn solve(rec: &LookAtChain) -> LookAtSolved {
    let mut s = LookAtSolved::default();
    look_at(rec, &mut s);
    s
}

/// Joint `i`'s solved rest frame: its parent's solved model rotation (or the record's
/// parent) times its rest rotation.
fn rest_frame(rec: &LookAtChain, s: &LookAtSolved, i: usize) -> Quat {
    let parent = rec.parent(i).map_or(Quat::from_array(rec.parent_ms), |p| s.rotation(p));
    parent * Quat::from_array(rec.rest[i])
}

/// Yaw and pitch (f64) of the model direction `d` in joint `i`'s rest frame.
fn yaw_pitch(rec: &LookAtChain, s: &LookAtSolved, i: usize, d: Vec3) -> (f64, f64) {
    let f = Vec3::from_slice(&rec.forward[i][..3]).normalize();
    let u = Vec3::from_slice(&rec.up[i][..3]);
    let u = (u - f * f.dot(u)).normalize();
    let local = rest_frame(rec, s, i).conjugate() * d;
    let (f, u, l) = (f.as_dvec3(), u.as_dvec3(), local.as_dvec3());
    let s_axis = f.cross(u);
    let (x, y, z) = (l.dot(f), l.dot(u), l.dot(s_axis));
    ((-z).atan2(x), y.atan2((x * x + z * z).sqrt()))
}

/// How far (radians) `(yaw, pitch)` is outside joint `i`'s limits (0 inside; the yaw
/// distance around the circle).
fn outside(rec: &LookAtChain, i: usize, (yaw, pitch): (f64, f64)) -> f64 {
    let l = rec.limits[i].map(f64::from);
    let wrap = |a: f64| (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    let dy = if yaw >= l[0] && yaw <= l[1] { 0.0 } else { wrap(yaw - l[0]).abs().min(wrap(yaw - l[1]).abs()) };
    let dp = (l[2] - pitch).max(pitch - l[3]).max(0.0);
    dy.max(dp)
}

fn forward_ms(rec: &LookAtChain, s: &LookAtSolved, i: usize) -> Vec3 {
    s.rotation(i) * Vec3::from_slice(&rec.forward[i][..3]).normalize()
}

/// Angle between two directions, accurate near zero.
fn angle(a: Vec3, b: Vec3) -> f32 {
    a.cross(b).length().atan2(a.dot(b))
}

fn full_weight(rec: &LookAtChain, i: usize) -> bool {
    rec.forward[i][3] * rec.target_ms[3] >= 1.0
}

#[test]
fn a_single_unlimited_joint_is_the_aim_job() {
    let mut rng = Rng(1);
    for _ in 0..2000 {
        let joint = rng.unit();
        let rot = rng.quat();
        let target = joint + rng.unit() * rng.range(0.1, 3.0);
        let forward = rng.unit();
        let up = Quat::from_axis_angle(forward, rng.range(-3.0, 3.0)) * forward.any_orthonormal_vector();
        let up_target = (rng.below(2) == 0).then(|| joint + rng.unit() * 2.0);
        let weight = [1.0, 0.5, 0.0][rng.below(3) as usize];
        for method in [AimMethod::YawPitch, AimMethod::ShortestArc] {
            let job =
                AimJob { forward, up, method, up_target_ms: up_target, weight, ..AimJob::new(joint, rot, target) };
            let rec = LookAtChain::new(target)
                .with_joint(None, joint, rot, forward, up, 1.0)
                .with_up_target(up_target)
                .with_shortest_arc(method == AimMethod::ShortestArc)
                .with_weight(weight);
            let s = solve(&rec);
            match job.run() {
                Ok(a) => {
                    assert_eq!(s.error(), None);
                    assert!(quat_angle(a.rotation_ms, s.rotation(0)) < 2e-6, "{method:?}");
                    assert!(quat_angle(a.correction, s.correction(0)) < 2e-6);
                    assert!(s.correction(0).w >= 0.0);
                    assert_eq!(s.reached(), weight >= 1.0);
                }
                Err(e) => assert_eq!(s.error(), Some(e)),
            }
        }
    }
}

#[test]
fn neck_head_and_eyes_compose_and_the_full_weight_joints_look_exactly_at_the_target() {
    let mut rng = Rng(2);
    for _ in 0..1000 {
        let body = rng.quat();
        let neck = Vec3::new(rng.range(-1.0, 1.0), 1.5, rng.range(-1.0, 1.0));
        let head = neck + body * Vec3::new(0.0, 0.12, 0.02);
        let (eye_l, eye_r) = (head + body * Vec3::new(0.03, 0.08, 0.09), head + body * Vec3::new(-0.03, 0.08, 0.09));
        let r = |rng: &mut Rng| (body * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.3))).normalize();
        let rots = [r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng)];
        // Forward +Z, up +Y in every joint (a common rig convention).
        let target = head + rng.unit() * rng.range(0.5, 5.0);
        let neck_weight = rng.range(0.1, 0.7);
        let rec = LookAtChain::new(target)
            .with_joint(None, neck, rots[0], Vec3::Z, Vec3::Y, neck_weight)
            .with_joint(Some(0), head, rots[1], Vec3::Z, Vec3::Y, 1.0)
            .with_joint(Some(1), eye_l, rots[2], Vec3::Z, Vec3::Y, 1.0)
            .with_joint(Some(1), eye_r, rots[3], Vec3::Z, Vec3::Y, 1.0);
        let s = solve(&rec);
        assert_eq!(s.error(), None);
        assert!(s.reached());
        assert_eq!(s.joints_written(), 4);
        // Head and both eyes look exactly at the target from where they end up.
        for i in 1..4 {
            let to = (target - s.position(i)).normalize();
            let off = angle(forward_ms(&rec, &s, i), to);
            assert!(off < 2e-6, "joint {i}: {off} rad off");
        }
        // The pose rebuilt from the local corrections, parent by parent, is the model
        // pose the record returns (what a skinning pass that applies corrections sees).
        let fk_pos = [neck, head, eye_l, eye_r];
        for i in 0..4 {
            let (new, pos) = match rec.parent(i) {
                None => (rots[i] * s.correction(i), fk_pos[i]),
                Some(p) => {
                    let carried = s.rotation(p) * rots[p].conjugate();
                    (
                        s.rotation(p) * (rots[p].conjugate() * rots[i]) * s.correction(i),
                        s.position(p) + carried * (fk_pos[i] - fk_pos[p]),
                    )
                }
            };
            assert!(quat_angle(new, s.rotation(i)) < 1e-5, "joint {i}");
            assert!(pos.distance(s.position(i)) < 1e-5, "joint {i}");
        }
        // The neck carried part of the turn: between none and all of the head's.
        let neck_turn = quat_angle(s.correction(0), Quat::IDENTITY);
        let alone = solve(&LookAtChain::new(target).with_joint(None, neck, rots[0], Vec3::Z, Vec3::Y, 1.0));
        assert!(neck_turn <= quat_angle(alone.correction(0), Quat::IDENTITY) + 1e-5);
    }
}

#[test]
fn limits_hold_and_a_target_inside_them_is_looked_at_exactly() {
    let mut rng = Rng(3);
    let (mut worst, mut inside, mut clamped, mut checked) = (0.0_f64, 0, 0, 0);
    for _ in 0..20_000 {
        let rec = random_look_at(&mut rng);
        let s = solve(&rec);
        assert!(s.positions_ms.iter().chain(&s.rotations_ms).chain(&s.corrections).flatten().all(|x| x.is_finite()));
        if s.error().is_some() || rec.target_ms[3] <= 0.0 {
            continue;
        }
        let mut any_limited = false;
        for i in 0..rec.joint_count() {
            if rec.mode[3] >> i & 1 == 0 || !full_weight(&rec, i) {
                continue;
            }
            checked += 1;
            let f = forward_ms(&rec, &s, i);
            let past = outside(&rec, i, yaw_pitch(&rec, &s, i, f));
            worst = worst.max(past);
            assert!(past <= 1e-4, "joint {i} is {past} rad outside its limits: {rec:?}");
            let to = rec.target() - s.position(i);
            let wanted = outside(&rec, i, yaw_pitch(&rec, &s, i, to.normalize()));
            if wanted <= 1e-6 {
                // Inside its limits: the joint looks exactly at the target.
                inside += 1;
                let off = angle(f, to);
                assert!(off < 2e-6, "joint {i}: inside its limits but {off} rad off the target");
            } else {
                clamped += 1;
                any_limited = true;
            }
        }
        if any_limited {
            assert_ne!(s.info() & info::LIMITED, 0);
            assert!(!s.reached());
        }
    }
    eprintln!(
        "limited joints at full weight: {checked}, inside {inside}, clamped {clamped}; worst {worst:e} rad outside"
    );
    assert!(inside > 1000 && clamped > 1000, "the sample must cover both sides");
}

#[test]
fn reference_cases() {
    let deg = |d: f32| d.to_radians();
    // Forward +X, up +Y at the origin; limits yaw ±60°, pitch −30°..45°.
    let rec = |target: Vec3| {
        LookAtChain::new(target).with_joint(None, Vec3::ZERO, Quat::IDENTITY, Vec3::X, Vec3::Y, 1.0).with_limits(
            0,
            Quat::IDENTITY,
            [deg(-60.0), deg(60.0)],
            [deg(-30.0), deg(45.0)],
        )
    };
    let dir = |yaw: f32, pitch: f32| Vec3::new(pitch.cos() * yaw.cos(), pitch.sin(), -pitch.cos() * yaw.sin());
    // Yaw 80° (turning about +Y toward −Z) stops at 60°, pitch kept.
    for (yaw, pitch, want) in [
        (80.0, 0.0, (60.0, 0.0)),
        (-100.0, 10.0, (-60.0, 10.0)),
        (30.0, 80.0, (30.0, 45.0)),
        (0.0, -50.0, (0.0, -30.0)),
        (20.0, 20.0, (20.0, 20.0)),
        (179.0, 0.0, (60.0, 0.0)),
        (-179.0, 0.0, (-60.0, 0.0)),
    ] {
        let s = solve(&rec(dir(deg(yaw), deg(pitch)) * 2.0));
        let f = s.rotation(0) * Vec3::X;
        let expect = dir(deg(want.0), deg(want.1));
        assert!(f.distance(expect) < 2e-6, "yaw {yaw} pitch {pitch}: {f} vs {expect}");
        assert_eq!(s.info() & info::LIMITED != 0, want != (yaw, pitch));
        assert_eq!(s.reached(), want == (yaw, pitch));
    }
    // Straight ahead: identity.
    let s = solve(&rec(Vec3::X * 3.0));
    assert!(quat_angle(s.correction(0), Quat::IDENTITY) < 1e-6);
    // The rest frame turns the limits: rest yawed by 90° about +Y accepts a target at yaw 120°.
    let turned = rec(dir(deg(120.0), 0.0)).with_limits(
        0,
        Quat::from_rotation_y(deg(90.0)),
        [deg(-60.0), deg(60.0)],
        [deg(-30.0), deg(45.0)],
    );
    let s = solve(&turned);
    assert!((s.rotation(0) * Vec3::X).distance(dir(deg(120.0), 0.0)) < 2e-6);
    assert_eq!(s.info() & info::LIMITED, 0);
    // The up-vector constraint: the up axis rolls toward the up target.
    let s = solve(&rec(dir(deg(20.0), deg(10.0)) * 2.0).with_up_target(Some(Vec3::new(0.0, 0.0, -5.0))));
    let (f, u) = (s.rotation(0) * Vec3::X, s.rotation(0) * Vec3::Y);
    let want = Vec3::NEG_Z - f * f.dot(Vec3::NEG_Z);
    assert!(u.dot(want.normalize()) > 1.0 - 1e-6, "{u} vs {want}");
    assert!(f.distance(dir(deg(20.0), deg(10.0))) < 2e-6);
}

#[test]
fn weights_blend_from_the_fk_pose() {
    let base =
        LookAtChain::new(Vec3::new(0.0, 1.0, 1.0)).with_joint(None, Vec3::ZERO, Quat::IDENTITY, Vec3::X, Vec3::Y, 1.0);
    let zero = solve(&base.with_weight(0.0));
    assert_eq!(zero.correction(0), Quat::IDENTITY);
    assert_eq!(zero.rotation(0), Quat::IDENTITY);
    assert!(!zero.reached());
    let full = quat_angle(solve(&base).correction(0), Quat::IDENTITY);
    let half = quat_angle(solve(&base.with_weight(0.5)).correction(0), Quat::IDENTITY);
    assert!(half > 0.3 * full && half < 0.7 * full);
    assert!(!solve(&base.with_weight(0.5)).reached());
    // A joint's own weight multiplies the record's.
    let mut own = base;
    own.forward[0][3] = 0.5;
    assert!((quat_angle(solve(&own).correction(0), Quat::IDENTITY) - half).abs() < 1e-6);
}

#[test]
fn bad_records_are_reported_and_fall_back_to_fk() {
    let ok = LookAtChain::new(Vec3::new(1.0, 1.0, 0.0))
        .with_joint(None, Vec3::ZERO, Quat::IDENTITY, Vec3::X, Vec3::Y, 1.0)
        .with_joint(Some(0), Vec3::Y * 0.1, Quat::IDENTITY, Vec3::X, Vec3::Y, 1.0)
        .with_limits(1, Quat::IDENTITY, [-1.0, 1.0], [-0.5, 0.5]);
    assert_eq!(validate_look_at(&ok), Ok(()));
    let mut cases: Vec<(LookAtChain, ChainError)> = vec![];
    let mut push = |f: &dyn Fn(&mut LookAtChain), e: ChainError| {
        let mut r = ok;
        f(&mut r);
        cases.push((r, e));
    };
    push(&|r| r.mode[0] = 0, ChainError::JointCount);
    push(&|r| r.mode[0] = 5, ChainError::JointCount);
    push(&|r| r.joints_ms[1][1] = f32::NAN, ChainError::NonFinite);
    push(&|r| r.rotations_ms[0] = [0.0, 0.0, 0.0, 2.0], ChainError::NotNormalized);
    push(&|r| r.joints_ms[0][0] = 1e10, ChainError::OutOfRange);
    push(&|r| r.target_ms[2] = f32::INFINITY, ChainError::NonFinite);
    push(&|r| r.target_ms[3] = f32::NAN, ChainError::NonFinite);
    push(&|r| r.forward[1][3] = f32::NAN, ChainError::NonFinite);
    push(&|r| r.limits[1][0] = f32::NAN, ChainError::NonFinite);
    push(&|r| r.rest[1] = [0.0, 0.0, 0.0, 0.5], ChainError::NotNormalized);
    push(&|r| r.parent_ms = [0.0; 4], ChainError::NotNormalized);
    push(&|r| r.target_ms[0] = -2e9, ChainError::OutOfRange);
    push(&|r| r.mode[2] = 1, ChainError::InvalidParameter);
    push(&|r| r.mode[3] = 4, ChainError::InvalidParameter);
    push(&|r| r.mode[1] = 0xffff_0101, ChainError::InvalidParameter); // joint 1 its own parent
    push(&|r| r.mode[1] = 0xffff_01ff, ChainError::InvalidParameter); // joint 0 parented to 1
    push(&|r| r.up[0] = [1.0, 0.1, 0.0, 0.0], ChainError::InvalidParameter);
    push(&|r| r.forward[1] = [0.0, 0.0, 0.0, 1.0], ChainError::InvalidParameter);
    push(&|r| r.limits[1] = [1.0, -1.0, 0.0, 0.0], ChainError::InvalidParameter);
    push(&|r| r.limits[1] = [-1.0, 1.0, -2.0, 0.0], ChainError::InvalidParameter);
    push(&|r| r.limits[1] = [-4.0, 1.0, 0.0, 0.0], ChainError::InvalidParameter);
    push(&|r| r.target_ms[..3].copy_from_slice(&[0.0, 0.0, 0.0]), ChainError::TargetOnRoot);
    push(&|r| *r = r.with_up_target(Some(Vec3::new(2.0, 2.0, 0.0))), ChainError::PoleOnAxis);
    push(&|r| *r = r.with_up_target(Some(Vec3::new(0.0, f32::NAN, 0.0))), ChainError::NonFinite);
    for (rec, error) in &cases {
        assert_eq!(validate_look_at(rec), Err(*error), "{rec:?}");
        let s = solve(rec);
        assert_eq!(s.error(), Some(*error));
        let n = rec.joint_count().min(4);
        assert_eq!(s.joints_written(), n);
        for k in 0..n {
            assert_eq!(s.correction(k), Quat::IDENTITY);
        }
        assert!(s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite()));
    }
    // A bad record in a batch leaves its neighbours alone.
    let batch = [ok, cases[2].0, ok];
    let mut out = [LookAtSolved::default(); 3];
    let summary = LookAtJob::new(&batch, &mut out).run().unwrap();
    assert_eq!(summary.fallbacks, 1);
    assert_eq!(summary.first_fallback, Some((1, ChainError::NonFinite)));
    assert_eq!(out[0], solve(&ok));
    assert_eq!(out[2], solve(&ok));
    assert!(LookAtJob::new(&batch, &mut out[..2]).run().is_err());
}

/// Fields of a `LookAtChain` as `[f32; 4]`: joints 0..4, rotations 4..8, forward 8..12,
/// up 12..16, rest 16..20, limits 20..24, parent 24, target 25, up target 26.
fn mirrored(rec: &LookAtChain) -> LookAtChain {
    let mut m = reflect(rec, &[0, 1, 2, 3, 25, 26], &[4, 5, 6, 7, 24]);
    m.mode[2] ^= option::MIRRORED;
    m
}

#[test]
fn mirrored_records_solve_as_their_twins() {
    let mut rng = Rng(5);
    for _ in 0..2000 {
        let rec = random_look_at(&mut rng);
        let (a, b) = (solve(&rec), solve(&mirrored(&rec)));
        assert_eq!(reflect_solved(&a, rec.joint_count()), b, "{rec:?}");
    }
}

const SIZES: [usize; 5] = [1, 63, 64, 65, 100_003];

/// Look-at batches of N ∈ {1, 63, 64, 65, 100 003} records, about 40 % of them with
/// corrupted words or rescaled positions and every seventh mirrored, solved by the CPU twin
/// and by `other`: positions within 1e-4 × the record's extent, rotations and corrections
/// within 1e-3 rad, equal status words.
fn matches_the_cpu_twin(what: &str, mut other: impl FnMut(&[LookAtChain], &mut [LookAtSolved])) {
    let mut rng = Rng(2026);
    for &size in &SIZES {
        let (records, _) = raw_records(&mut rng, size, random_look_at, 4, &[25, 26]);
        let records: Vec<LookAtChain> =
            records.into_iter().enumerate().map(|(i, r)| if i % 7 == 0 { mirrored(&r) } else { r }).collect();
        let mut cpu = vec![LookAtSolved::default(); size];
        LookAtJob::new(&records, &mut cpu).run().unwrap();
        let mut out = vec![LookAtSolved::default(); size];
        other(&records, &mut out);
        let extent = |i: usize| {
            let r = &records[i];
            let n = r.joint_count().min(4);
            chain_length((0..n).map(|k| Vec3::from_slice(&r.joints_ms[k][..3]))).max(1e-3)
        };
        assert_matches(&format!("{what} x{size}"), &cpu, &out, extent, |i| format!("{:?}", records[i]));
    }
}

/// GPU = CPU for look-at records (`matches_the_cpu_twin`).
#[test]
fn gpu_matches_cpu_for_look_at() {
    let Some(mut gpu) = solver() else { return };
    matches_the_cpu_twin("look-at", |records, out| gpu.solve(records, out).unwrap());
}

/// The CPU twin flushing subnormals, as NVIDIA's GPUs do, holds the GPU contract on the
/// same records.
#[test]
fn flushing_subnormals_changes_nothing_for_look_at() {
    if with_flush_to_zero(|| ()).is_none() {
        return;
    }
    matches_the_cpu_twin("look-at, subnormals flushed", |records, out| {
        with_flush_to_zero(|| LookAtJob::new(records, out).run().unwrap());
    });
}

/// The SIMD batch paths (AVX-512, AVX2, whichever this CPU has) against the scalar solver,
/// record for record and **bit for bit**: random records of every shape (1 to 4 joints,
/// every parent pattern, limits on some joints, up targets, shortest arcs), about 40 % with
/// corrupted words or rescaled positions, every seventh mirrored, some with subnormal
/// weights; in one batch (mixed shapes, grouped by shape), one by one, one rig's records
/// (the benchmark's, with a few changed), and in a batch of one shape on all threads.
#[test]
fn every_cpu_path_is_the_scalar_solver_bit_for_bit() {
    let mut rng = Rng(31);
    let (records, _) = raw_records(&mut rng, 20_000, random_look_at, 4, &[25, 26]);
    let records: Vec<LookAtChain> = records
        .into_iter()
        .enumerate()
        .map(|(i, r)| match i % 7 {
            0 => mirrored(&r),
            3 if i % 5 == 0 => r.with_weight(1e-40),
            _ => r,
        })
        .collect();
    let scalar: Vec<LookAtSolved> = records.iter().map(solve).collect();
    assert_every_path_is_scalar("look-at record", &records, (), &scalar, 97);
    for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        // One rig's records (the benchmark's: every record the same axes, limits and shape),
        // some with another weight, a corrupted word or a target on a joint.
        let mut rig = crowd_ik_tools::workload::look_at(4000, 9);
        for (k, r) in rig.iter_mut().enumerate() {
            match k % 11 {
                0 => r.target_ms[3] = 0.5,
                1 => r.forward[2][3] = 0.3,
                2 if k % 3 == 0 => r.forward[1][0] = f32::NAN,
                3 => r.target_ms[..3].copy_from_slice(&r.joints_ms[3][..3]),
                _ => {}
            }
        }
        let mut out = vec![LookAtSolved::default(); rig.len()];
        LookAtJob::new(&rig, &mut out).with_path(path).run().unwrap();
        for (r, o) in rig.iter().zip(&out) {
            assert_eq!(bytemuck::bytes_of(o), bytemuck::bytes_of(&solve(r)), "{path}: {r:?}");
        }
        let same: Vec<LookAtChain> = records.iter().filter(|r| r.mode[..3] == records[1].mode[..3]).copied().collect();
        let mut out = vec![LookAtSolved::default(); same.len()];
        LookAtJob::new(&same, &mut out).with_path(path).run_par().unwrap();
        for (r, o) in same.iter().zip(&out) {
            assert_eq!(bytemuck::bytes_of(o), bytemuck::bytes_of(&solve(r)), "{path}: {r:?}");
        }
    }
}

#[test]
fn f64_yaw_pitch_reference_agrees_with_the_solver_on_its_own_clamp() {
    // The polynomial atan2 and sin/cos the twins share against f64 trigonometry: a target
    // clamped on both angles ends exactly on the corner of the limits.
    let mut rng = Rng(6);
    for _ in 0..2000 {
        let yaw = [rng.range(-2.5, -0.1), rng.range(0.1, 2.5)];
        let pitch = [rng.range(-1.4, -0.1), rng.range(0.1, 1.4)];
        let rest = rng.quat();
        let rec = LookAtChain::new(Vec3::ZERO)
            .with_joint(None, Vec3::ZERO, rest, Vec3::X, Vec3::Y, 1.0)
            .with_limits(0, rest, yaw, pitch);
        let (ty, tp) = (f64::from(yaw[1]) + 0.3, f64::from(pitch[1]) + 0.05);
        let d = DVec3::new(tp.cos() * ty.cos(), tp.sin(), -tp.cos() * ty.sin());
        let mut rec = rec;
        rec.target_ms[..3].copy_from_slice(&(rest * d.as_vec3() * 2.0).to_array());
        let s = solve(&rec);
        let (y, p) = yaw_pitch(&rec, &s, 0, forward_ms(&rec, &s, 0));
        if ty < std::f64::consts::PI {
            assert!((y - f64::from(yaw[1])).abs() < 1e-5, "{y} vs {}", yaw[1]);
        }
        assert!((p - f64::from(pitch[1])).abs() < 1e-5, "{p} vs {}", pitch[1]);
    }
}
