//! Multi-effector FABRIK (`MultiFabrikChain`): reachable targets are reached on a humanoid
//! upper body and a quadruped, the pose rebuilt from the local corrections is the solved
//! pose, branches without effectors ride along rigidly, weights, errors, and the GPU kernel
//! against its CPU twin.
// `!(x <= tol)` is deliberate: a NaN difference must fail.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use common::gpu::{assert_matches, contract_distance, mismatches, one_ulp_sensitivity, solver};
use common::*;
use crowd_ik::cpu::{multi_fabrik, multi_fabrik_with_mode, validate_multi_fabrik, CpuPath, FabrikMode};
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::prelude::*;

/// A skeleton: each joint's parent and its offset in the parent's frame.
struct Skeleton {
    parents: Vec<usize>,
    offsets: Vec<Vec3>,
    effectors: Vec<usize>,
}

/// Pelvis, spine, chest, neck, head, and two arms (clavicle, upper arm, forearm, hand)
/// off the chest: 13 joints, effectors on both hands and the head
/// (`crowd_ik_tools::workload::upper_body_tree`'s skeleton).
fn upper_body() -> Skeleton {
    let t = crowd_ik_tools::workload::upper_body_tree();
    Skeleton { parents: t.parents, offsets: t.offsets, effectors: vec![8, 12, 4] }
}

/// The benchmark's quadruped tree (`crowd_ik_tools::workload::quadruped_tree`): hips,
/// three spine joints and four 4-joint legs off the hips and the chest, 20 joints, an
/// effector on each hoof.
fn quadruped() -> Skeleton {
    let (parents, offsets, effectors) = crowd_ik_tools::workload::quadruped_tree();
    Skeleton { parents, offsets, effectors }
}

/// Model-space pose of `s` from local rotations.
fn pose(s: &Skeleton, root: Vec3, root_rot: Quat, locals: &[Quat]) -> (Vec<Vec3>, Vec<Quat>) {
    let (mut p, mut r) = (vec![root], vec![(root_rot * locals[0]).normalize()]);
    for (j, local) in locals.iter().enumerate().skip(1) {
        let par = s.parents[j];
        p.push(p[par] + r[par] * s.offsets[j]);
        r.push((r[par] * *local).normalize());
    }
    (p, r)
}

fn random_locals(rng: &mut Rng, n: usize, spread: f32) -> Vec<Quat> {
    (0..n).map(|_| Quat::from_axis_angle(rng.unit(), rng.range(0.0, spread))).collect()
}

/// A tree in a random FK pose whose targets are the effectors of another random pose
/// with the same root (reachable by construction), `iterations` iterations.
fn reachable(rng: &mut Rng, s: &Skeleton, iterations: u32) -> MultiFabrikChain {
    let n = s.parents.len();
    let (root, root_rot) = (rng.unit(), rng.quat());
    let fk_locals = random_locals(rng, n, 0.6);
    let mut goal_locals = random_locals(rng, n, 0.9);
    goal_locals[0] = fk_locals[0];
    let (p, r) = pose(s, root, root_rot, &fk_locals);
    let (goal, _) = pose(s, root, root_rot, &goal_locals);
    let mut c = MultiFabrikChain::new(&p, &r, &s.parents, iterations);
    for &e in &s.effectors {
        c = c.with_effector(e, goal[e], 1.0);
    }
    c
}

fn total_length(c: &MultiFabrikChain) -> f32 {
    (1..c.joint_count().min(32))
        .filter(|&j| c.parent(j) < j)
        .map(|j| Vec3::from_slice(&c.joints_ms[j][..3]).distance(Vec3::from_slice(&c.joints_ms[c.parent(j)][..3])))
        .sum()
}

fn worst_effector(c: &MultiFabrikChain, s: &MultiFabrikSolved) -> f32 {
    (0..c.effector_count()).map(|e| s.position(c.effectors[e] as usize).distance(c.target(e))).fold(0.0, f32::max)
}

fn solve(c: &MultiFabrikChain) -> MultiFabrikSolved {
    let mut s = MultiFabrikSolved::default();
    multi_fabrik(c, &mut s);
    s
}

/// Bones keep their lengths, and the pose rebuilt from the local corrections (what a
/// skinning pass applying them sees) is the pose returned.
fn assert_consistent(c: &MultiFabrikChain, s: &MultiFabrikSolved) {
    let n = c.joint_count();
    let fk_p = |j: usize| Vec3::from_slice(&c.joints_ms[j][..3]);
    let fk_r = |j: usize| Quat::from_array(c.rotations_ms[j]);
    assert_eq!(s.joints_written(), n);
    assert!(s.position(0).distance(fk_p(0)) < 1e-6, "the root moved");
    for j in 1..n {
        let par = c.parent(j);
        let (fk_len, len) = (fk_p(j).distance(fk_p(par)), s.position(j).distance(s.position(par)));
        assert!((fk_len - len).abs() < 1e-5, "bone {j}: {fk_len} -> {len}");
        let rebuilt = s.rotation(par) * (fk_r(par).conjugate() * fk_r(j)) * s.correction(j);
        assert!(quat_angle(rebuilt, s.rotation(j)) < 2e-5, "joint {j}");
        let offset = s.rotation(par) * (fk_r(par).conjugate() * (fk_p(j) - fk_p(par)));
        assert!((s.position(par) + offset).distance(s.position(j)) < 1e-5, "joint {j}");
    }
    for j in 0..n {
        assert!(s.correction(j).w >= 0.0);
    }
}

#[test]
fn reachable_targets_are_reached_on_a_humanoid_and_a_quadruped() {
    for (name, skel, keep_root, floor) in [
        ("upper body", upper_body(), false, 0.9),
        ("quadruped", quadruped(), false, 0.75),
        ("quadruped, root rotation kept", quadruped(), true, 0.95),
    ] {
        let mut rng = Rng(11);
        let (mut reached, mut errors) = (0, vec![]);
        let trials = 2000;
        for _ in 0..trials {
            let c = reachable(&mut rng, &skel, 64).with_precision(1e-3).with_keep_root_rotation(keep_root);
            let s = solve(&c);
            assert_eq!(s.error(), None);
            assert_consistent(&c, &s);
            if keep_root {
                assert!(quat_angle(s.correction(0), Quat::IDENTITY) < 1e-6, "the root turned");
            }
            let err = worst_effector(&c, &s) / total_length(&c);
            errors.push(err);
            if s.reached() {
                reached += 1;
                assert!(worst_effector(&c, &s) <= 1e-3);
            }
        }
        errors.sort_by(f32::total_cmp);
        let share = reached as f32 / trials as f32;
        eprintln!(
            "{name}: {:.1} % reached within 1e-3 after 64 iterations; worst effector error / total length: median {:e}, 90th percentile {:e}, max {:e}",
            100.0 * share,
            errors[trials / 2],
            errors[trials * 9 / 10],
            errors[trials - 1]
        );
        assert!(share >= floor, "{name}: only {share} reached");
    }
}

#[test]
fn a_plain_chain_with_one_effector_reaches_like_fabrik() {
    let mut rng = Rng(12);
    for _ in 0..500 {
        let n = 2 + rng.below(10) as usize;
        let skel = Skeleton {
            parents: (0..n).map(|j| j.saturating_sub(1)).collect(),
            offsets: (0..n).map(|j| if j == 0 { Vec3::ZERO } else { rng.unit() * rng.range(0.1, 0.5) }).collect(),
            effectors: vec![n - 1],
        };
        let c = reachable(&mut rng, &skel, 64);
        let s = solve(&c);
        assert_consistent(&c, &s);
        // The same chain as a FabrikChain.
        let joints: Vec<Vec3> = (0..n).map(|j| Vec3::from_slice(&c.joints_ms[j][..3])).collect();
        let rots: Vec<Quat> = (0..n).map(|j| Quat::from_array(c.rotations_ms[j])).collect();
        let f = FabrikChain::new(&joints, &rots, c.target(0), 64);
        let mut fs = FabrikSolved::default();
        crowd_ik::cpu::fabrik(&f, &mut fs);
        let (ours, theirs) = (worst_effector(&c, &s), fs.position(n - 1).distance(c.target(0)));
        assert!(ours <= theirs.max(1e-5) * 1.5 + 1e-5, "n {n}: {ours} vs FABRIK {theirs}");
        // One active child: the relative turn of each joint has no twist about its bone.
        for j in 0..n - 1 {
            let bone = rots[j].conjugate() * (joints[j + 1] - joints[j]);
            let corr = s.correction(j);
            let twist = Vec3::new(corr.x, corr.y, corr.z).dot(bone.normalize());
            assert!(twist.abs() < 1e-5, "joint {j}: twist {twist}");
        }
    }
}

#[test]
fn branches_without_effectors_ride_along_and_weights_blend() {
    let skel = upper_body();
    let mut rng = Rng(13);
    for _ in 0..200 {
        // Only the left hand has an effector: the head and the right arm keep their local
        // rotations (identity corrections).
        let mut c = reachable(&mut rng, &skel, 32);
        c.mode[3] = 1;
        let s = solve(&c);
        assert_consistent(&c, &s);
        for j in [3, 4, 9, 10, 11, 12] {
            assert!(quat_angle(s.correction(j), Quat::IDENTITY) < 1e-6, "joint {j}");
        }
        // Weight 0: the FK pose; 0.5: between.
        let zero = solve(&c.with_weight(0.0));
        for j in 0..c.joint_count() {
            assert_eq!(zero.position(j), Vec3::from_slice(&c.joints_ms[j][..3]));
            assert_eq!(zero.correction(j), Quat::IDENTITY);
        }
        let half = solve(&c.with_weight(0.5));
        assert!(!half.reached());
        for j in 0..c.joint_count() {
            let (h, f) = (quat_angle(half.correction(j), Quat::IDENTITY), quat_angle(s.correction(j), Quat::IDENTITY));
            assert!(h <= f * 0.5 + 1e-4 && h >= f * 0.5 - 1e-4 - 0.1 * f, "joint {j}: {h} vs {f}");
        }
    }
}

#[test]
fn converge_mode_stops_early_with_the_same_answer_quality() {
    let skel = quadruped();
    let mut rng = Rng(14);
    for _ in 0..200 {
        let c = reachable(&mut rng, &skel, 256).with_precision(1e-4);
        let fixed = solve(&c);
        let mut conv = MultiFabrikSolved::default();
        multi_fabrik_with_mode(&c, FabrikMode::Converge, &mut conv);
        assert_consistent(&c, &conv);
        if fixed.reached() {
            assert!(conv.reached() || worst_effector(&c, &conv) <= 2e-4);
        }
    }
}

#[test]
fn bad_trees_are_reported_and_fall_back_to_fk() {
    let skel = upper_body();
    let mut rng = Rng(15);
    let ok = reachable(&mut rng, &skel, 8);
    assert_eq!(validate_multi_fabrik(&ok), Ok(()));
    type Mutation = Box<dyn Fn(&mut MultiFabrikChain)>;
    let cases: Vec<(Mutation, ChainError)> = vec![
        (Box::new(|c| c.mode[0] = 1), ChainError::JointCount),
        (Box::new(|c| c.mode[0] = 33), ChainError::JointCount),
        (Box::new(|c| c.joints_ms[3][0] = f32::NAN), ChainError::NonFinite),
        (Box::new(|c| c.rotations_ms[2] = [0.0, 0.0, 0.0, 3.0]), ChainError::NotNormalized),
        (Box::new(|c| c.joints_ms[1][2] = 2e9), ChainError::OutOfRange),
        (Box::new(|c| c.targets_ms[1][1] = f32::INFINITY), ChainError::NonFinite),
        (Box::new(|c| c.params[0] = f32::NAN), ChainError::NonFinite),
        (Box::new(|c| c.targets_ms[0][0] = -3e9), ChainError::OutOfRange),
        (Box::new(|c| c.mode[3] = 0), ChainError::InvalidParameter),
        (Box::new(|c| c.mode[3] = 5), ChainError::InvalidParameter),
        (Box::new(|c| c.mode[1] = 5000), ChainError::InvalidParameter),
        (Box::new(|c| c.mode[2] = 8), ChainError::InvalidParameter),
        (Box::new(|c| c.params[0] = -1.0), ChainError::InvalidParameter),
        (Box::new(|c| c.params[3] = 1.0), ChainError::InvalidParameter),
        (Box::new(|c| c.set_parent(5, 7)), ChainError::InvalidParameter),
        (Box::new(|c| c.effectors[1] = 0), ChainError::InvalidParameter),
        (Box::new(|c| c.effectors[1] = 40), ChainError::InvalidParameter),
        (Box::new(|c| c.effectors[1] = c.effectors[0]), ChainError::InvalidParameter),
        (Box::new(|c| c.targets_ms[2][3] = 0.0), ChainError::InvalidParameter),
        (Box::new(|c| c.joints_ms[4] = c.joints_ms[3]), ChainError::ZeroLengthBone),
    ];
    for (f, error) in &cases {
        let mut c = ok;
        f(&mut c);
        assert_eq!(validate_multi_fabrik(&c), Err(*error), "{c:?}");
        let s = solve(&c);
        assert_eq!(s.error(), Some(*error));
        assert_eq!(s.joints_written(), c.joint_count().min(32));
        assert!(s.positions_ms.iter().chain(&s.rotations_ms).chain(&s.corrections).flatten().all(|x| x.is_finite()));
    }
    // A bad tree in a batch leaves its neighbours alone.
    let mut bad = ok;
    bad.joints_ms[3][0] = f32::NAN;
    let batch = [ok, bad, ok];
    let mut out = [MultiFabrikSolved::default(); 3];
    let summary = MultiFabrikJob::new(&batch, &mut out).run().unwrap();
    assert_eq!(summary.first_fallback, Some((1, ChainError::NonFinite)));
    assert_eq!(out[0], solve(&ok));
    assert_eq!(out[2], solve(&ok));
}

/// A random tree for the GPU comparison: one of the two skeletons or a random tree of 2
/// to 32 joints with 1 to 4 effectors, reachable or random targets, random weights.
fn random_tree(rng: &mut Rng) -> MultiFabrikChain {
    let skel = match rng.below(3) {
        0 => upper_body(),
        1 => quadruped(),
        _ => {
            let n = 2 + rng.below(31) as usize;
            let parents: Vec<usize> = (0..n).map(|j| if j == 0 { 0 } else { rng.below(j as u32) as usize }).collect();
            let offsets = (0..n).map(|j| if j == 0 { Vec3::ZERO } else { rng.unit() * rng.range(0.05, 0.4) }).collect();
            let m = 1 + rng.below(4.min(n as u32 - 1)) as usize;
            let mut effectors: Vec<usize> = vec![];
            while effectors.len() < m {
                let e = 1 + rng.below(n as u32 - 1) as usize;
                if !effectors.contains(&e) {
                    effectors.push(e);
                }
            }
            Skeleton { parents, offsets, effectors }
        }
    };
    let iterations = [0, 1, 4, 8][rng.below(4) as usize];
    let mut c = reachable(rng, &skel, iterations);
    for e in 0..c.effector_count() {
        if rng.below(4) == 0 {
            c.targets_ms[e] = (Vec3::from_slice(&c.joints_ms[0][..3]) + rng.unit() * rng.range(0.0, 3.0))
                .extend(rng.range(0.2, 2.0))
                .to_array();
        }
    }
    let c = c.with_keep_root_rotation(rng.below(4) == 0);
    match rng.below(10) {
        0 => c.with_weight(rng.range(-0.5, 1.0)),
        _ => c,
    }
}

/// The SIMD batch paths (AVX-512, AVX2, whichever this CPU has) against the scalar solver,
/// tree for tree and **bit for bit**: random trees of every shape (about 40 % with corrupted
/// words or rescaled positions) in one mixed batch (grouped by shape), quadrupeds of one
/// shape filling whole groups (every eighth with another weight, some untouched or
/// unreachable), one by one, and on all threads; converge mode tree by tree.
#[test]
fn every_cpu_path_is_the_scalar_solver_bit_for_bit() {
    let mut rng = Rng(41);
    let (mut trees, _) = raw_records(&mut rng, 3000, random_tree, 32, &[64, 65, 66, 67]);
    let quad = quadruped();
    for k in 0..2000 {
        let mut c = reachable(&mut rng, &quad, 8).with_keep_root_rotation(k % 3 == 0);
        if k % 8 == 0 {
            c = c.with_weight([0.0, 0.5, 1.5, -1.0][k / 8 % 4]);
        }
        if k % 5 == 0 {
            c.targets_ms[1][0] += 5.0; // out of reach
        }
        trees.push(c);
    }
    let scalar: Vec<MultiFabrikSolved> = trees.iter().map(solve).collect();
    assert_every_path_is_scalar("tree", &trees, FabrikMode::Fixed, &scalar, 53);
    for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        let quads = &trees[3000..];
        let mut out = vec![MultiFabrikSolved::default(); quads.len()];
        MultiFabrikJob::new(quads, &mut out).with_path(path).run_par().unwrap();
        assert!(out.iter().zip(&scalar[3000..]).all(|(a, b)| bytemuck::bytes_of(a) == bytemuck::bytes_of(b)), "{path}");
        let mut out = vec![MultiFabrikSolved::default(); 300];
        MultiFabrikJob::new(&trees[..300], &mut out).with_options(FabrikMode::Converge).with_path(path).run().unwrap();
        for (c, o) in trees[..300].iter().zip(&out) {
            let mut s = MultiFabrikSolved::default();
            multi_fabrik_with_mode(c, FabrikMode::Converge, &mut s);
            assert_eq!(bytemuck::bytes_of(o), bytemuck::bytes_of(&s), "{path} converge");
        }
    }
}

const SIZES: [usize; 5] = [1, 63, 64, 65, 100_003];

/// The GPU test's batches: N ∈ {1, 63, 64, 65, 100 003} random trees, about 40 % of them with
/// corrupted words or rescaled positions, each with the CPU twin's solve.
fn batches() -> impl Iterator<Item = (Vec<MultiFabrikChain>, Vec<MultiFabrikSolved>)> {
    let mut rng = Rng(2027);
    SIZES.iter().map(move |&size| {
        let (trees, _) = raw_records(&mut rng, size, random_tree, 32, &[64, 65, 66, 67]);
        let mut cpu = vec![MultiFabrikSolved::default(); size];
        MultiFabrikJob::new(&trees, &mut cpu).run().unwrap();
        (trees, cpu)
    })
}

/// GPU = CPU for multi-effector trees on N ∈ {1, 63, 64, 65, 100 003}, about 40 % of them
/// with corrupted words or rescaled positions: positions within 1e-4 × the tree's total
/// length, rotations and corrections within 1e-3 rad, equal status words.
#[test]
fn gpu_matches_cpu_for_multi_effector_fabrik() {
    let Some(mut gpu) = solver() else { return };
    for (trees, cpu) in batches() {
        let size = trees.len();
        let mut out = vec![MultiFabrikSolved::default(); size];
        gpu.solve(&trees, &mut out).unwrap();
        let len = |i: usize| total_length(&trees[i]).max(1e-6);
        let what = format!("multi-effector FABRIK x{size}");
        assert!(cpu.iter().zip(&out).all(|(c, g)| c.status[1] == g.status[1]), "{what}: an error code differs");
        assert!(out.iter().all(|s| s.positions_ms.iter().chain(&s.rotations_ms).flatten().all(|x| x.is_finite())));
        if size < 1000 {
            assert_matches(&what, &cpu, &out, len, |i| format!("{:?}", trees[i]));
        } else {
            let bad = mismatches(&cpu, &out, len);
            eprintln!("{what}: {} of {size} trees outside the contract: {:?}", bad.len(), &bad[..bad.len().min(8)]);
            assert!(bad.len() * 1_000 < size, "{what}: {} trees outside the contract", bad.len());
            // Every one of them is ill-conditioned: one ulp of one of its targets moves the
            // CPU answer by at least a tenth of what separates the twins.
            let sensitivity = |i: usize| {
                (0..4)
                    .map(|e| {
                        let solve = |t: [f32; 4]| {
                            let mut tree = trees[i];
                            tree.targets_ms[e] = t;
                            let mut one = [MultiFabrikSolved::default()];
                            MultiFabrikJob::new(&[tree], &mut one).run().unwrap();
                            one[0]
                        };
                        one_ulp_sensitivity(&cpu[i], trees[i].targets_ms[e], len(i), solve)
                    })
                    .fold(0.0, f32::max)
            };
            let mut least = f32::INFINITY;
            for &i in &bad {
                let apart = contract_distance(&cpu[i], &out[i], len(i));
                let moved = sensitivity(i);
                assert!(
                    moved >= 0.1 * apart,
                    "{what}: tree {i} is {apart} contract units apart but one ulp moves the CPU by only {moved}"
                );
                least = least.min(moved / apart);
            }
            let mut typical: Vec<f32> =
                (0..size).step_by(size / 600).filter(|&i| cpu[i].status[1] == 0).map(sensitivity).collect();
            typical.sort_by(f32::total_cmp);
            let median = typical[typical.len() / 2];
            assert!(median <= 0.01, "{what}: a typical tree moves by {median} of the contract for one ulp");
            eprintln!(
                "{what}: each tree outside the contract moves by ≥ {least:.2} of the gap for one ulp of a target (a typical valid tree: {median:.1e} of the contract)"
            );
        }
    }
}

/// The CPU twin flushing subnormals (as NVIDIA's GPUs do) on the GPU test's trees: the same
/// status words, and the same results within the contract but for as few trees as the GPU
/// test allows.
#[test]
fn flushing_subnormals_changes_no_status_word_for_multi_effector_fabrik() {
    for (trees, cpu) in batches() {
        let size = trees.len();
        let mut ftz = vec![MultiFabrikSolved::default(); size];
        let Some(()) = with_flush_to_zero(|| {
            MultiFabrikJob::new(&trees, &mut ftz).run().unwrap();
        }) else {
            return;
        };
        let len = |i: usize| total_length(&trees[i]).max(1e-6);
        let what = format!("multi-effector FABRIK x{size}, subnormals flushed");
        for i in 0..size {
            assert_eq!(cpu[i].status, ftz[i].status, "{what}: tree {i}: {:?}", trees[i]);
        }
        let bad = mismatches(&cpu, &ftz, len);
        eprintln!("{what}: {} of {size} trees outside the contract", bad.len());
        assert!(bad.len() * 1_000 < size.max(1_000), "{what}: {} trees outside the contract", bad.len());
    }
}

/// Long runs on the GPU: a record whose loops the device ended early (lavapipe ends every
/// loop of an invocation once they have run 65 535 times together; docs/gpu.md) is flagged
/// `ChainError::DeviceLoopLimit` with its whole FK pose written over what the output buffer
/// held (the buffer first holds another batch's answers), never returned cut short; on a
/// device without the limit no record is flagged.
#[test]
fn long_runs_are_solved_or_flagged_never_cut_short() {
    let Some(mut gpu) = solver() else { return };
    let limited = gpu.adapter_info().is_some_and(|a| a.name.contains("llvmpipe"));
    let fk_tail = crowd_ik_tools::workload::multi_fabrik(64, 64, 9);
    for iterations in [64, 300, 2000] {
        let mut out = vec![MultiFabrikSolved::default(); fk_tail.len()];
        gpu.solve(&fk_tail, &mut out).unwrap();
        let trees = crowd_ik_tools::workload::multi_fabrik(64, iterations, 5);
        gpu.solve(&trees, &mut out).unwrap();
        let mut cpu = vec![MultiFabrikSolved::default(); trees.len()];
        MultiFabrikJob::new(&trees, &mut cpu).run().unwrap();
        let flagged = out.iter().filter(|s| s.error() == Some(ChainError::DeviceLoopLimit)).count();
        let worst = (0..trees.len())
            .filter(|&i| out[i].error().is_none())
            .map(|i| contract_distance(&cpu[i], &out[i], total_length(&trees[i])))
            .fold(0.0, f32::max);
        eprintln!(
            "{iterations} iterations: {flagged} of {} flagged, the others within {worst} contract units",
            trees.len()
        );
        for (c, s) in trees.iter().zip(&out) {
            if s.error() == Some(ChainError::DeviceLoopLimit) {
                assert!(limited, "a device without a loop limit flagged a record");
                for j in 0..32 {
                    let want = if j < c.joint_count() { c.joints_ms[j] } else { [0.0; 4] };
                    assert_eq!(s.positions_ms[j], want, "slot {j}");
                }
            } else {
                assert_eq!(s.error(), None);
            }
        }
        if iterations == 64 {
            assert_eq!(flagged, 0);
            assert!(worst <= 1.0);
        }
    }
}
