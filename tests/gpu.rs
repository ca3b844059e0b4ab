//! GPU kernels against the CPU reference, on every run of the test suite (lavapipe in CI).
//!
//! Contract: on random batches with ~10 % degenerate chains, GPU joint positions within
//! `1e-4 ×` chain length of the CPU, rotations and corrections within `1e-3` rad, identical
//! `reached` flags, error codes and info bits, zero NaN.

mod common;

use common::gpu::{assert_matches, solver};
use common::*;
use crowd_ik::gpu::{GpuError, GpuSolver, Kind};
use crowd_ik::prelude::*;
use crowd_ik::MAX_FABRIK_JOINTS;

const SIZES: [usize; 5] = [1, 63, 64, 65, 100_003];

fn two_bone_length(c: &TwoBoneChain) -> f32 {
    c.joint(0).distance(c.joint(1)) + c.joint(1).distance(c.joint(2))
}

fn three_bone_length(c: &ThreeBoneChain) -> f32 {
    (0..3).map(|i| c.joint(i).distance(c.joint(i + 1))).sum()
}

fn fabrik_length(c: &FabrikChain) -> f32 {
    let n = c.joint_count().clamp(1, MAX_FABRIK_JOINTS);
    (0..n - 1).map(|i| c.joint(i).distance(c.joint(i + 1))).sum::<f32>().max(1e-3)
}

fn check_two_bone(gpu: &mut GpuSolver, chains: &[TwoBoneChain], what: &str) -> Vec<TwoBoneSolved> {
    let mut cpu = vec![TwoBoneSolved::default(); chains.len()];
    TwoBoneJob::new(chains, &mut cpu).run_par().unwrap();
    let mut out = vec![TwoBoneSolved::default(); chains.len()];
    gpu.solve(chains, &mut out).unwrap();
    assert_matches(what, &cpu, &out, |i| two_bone_length(&chains[i]), |i| format!("{:?}", chains[i]));
    out
}

/// Solves `chains` on the CPU and the GPU, asserts they match, returns the GPU's results.
fn check_fabrik(gpu: &mut GpuSolver, chains: &[FabrikChain], what: &str) -> Vec<FabrikSolved> {
    let mut cpu = vec![FabrikSolved::default(); chains.len()];
    FabrikJob::new(chains, &mut cpu).run_par().unwrap();
    let mut out = vec![FabrikSolved::default(); chains.len()];
    gpu.solve(chains, &mut out).unwrap();
    assert_matches(what, &cpu, &out, |i| fabrik_length(&chains[i]), |i| format!("{:?}", chains[i]));
    out
}

#[test]
fn two_bone_kernel_matches_cpu() {
    let Some(mut gpu) = solver() else { return };
    for n in SIZES {
        let mut rng = Rng(1000 + n as u64);
        let chains: Vec<TwoBoneChain> = (0..n).map(|_| random_two_bone(&mut rng)).collect();
        check_two_bone(&mut gpu, &chains, &format!("two_bone N={n}"));
    }
}

/// Nearly straight limbs bent a little sideways to a hinge in the bones' plane (solved about
/// the bones' own axis) match the CPU.
#[test]
fn nearly_straight_limbs_bent_sideways_to_their_hinge_match_cpu() {
    use crowd_ik::glam::{Quat, Vec3};
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(2026);
    let chains: Vec<TwoBoneChain> = (0..4096)
        .map(|_| {
            let t = rng.range(0.001, 0.19);
            let axis = Vec3::new(rng.range(-1.0, 1.0), 0.0, rng.range(-1.0, 1.0)).normalize();
            let target = Vec3::new(rng.range(-1.0, 1.0), rng.range(0.2, 1.9), rng.range(-1.0, 1.0));
            // The bend toward the hinge itself: the bones' plane holds it.
            let end = Vec3::Y + axis * t.sin() + Vec3::Y * t.cos();
            TwoBoneChain::new([Vec3::ZERO, Vec3::Y, end], [Quat::IDENTITY; 3], target).with_mid_axis(axis)
        })
        .collect();
    let out = check_two_bone(&mut gpu, &chains, "two_bone bent sideways");
    assert!(out.iter().all(|o| o.error().is_none()));
}

#[test]
fn three_bone_kernel_matches_cpu() {
    let Some(mut gpu) = solver() else { return };
    for n in SIZES {
        let mut rng = Rng(2000 + n as u64);
        let chains: Vec<ThreeBoneChain> = (0..n).map(|_| random_three_bone(&mut rng)).collect();
        let mut cpu = vec![ThreeBoneSolved::default(); n];
        ThreeBoneJob::new(&chains, &mut cpu).run_par().unwrap();
        let mut out = vec![ThreeBoneSolved::default(); n];
        gpu.solve(&chains, &mut out).unwrap();
        assert_matches(
            &format!("three_bone N={n}"),
            &cpu,
            &out,
            |i| three_bone_length(&chains[i]),
            |i| format!("{:?}", chains[i]),
        );
    }
}

#[test]
fn fabrik_kernel_matches_cpu() {
    let Some(mut gpu) = solver() else { return };
    for n in SIZES {
        let mut rng = Rng(3000 + n as u64);
        let chains: Vec<FabrikChain> = (0..n)
            .map(|_| {
                let iterations = 1 + rng.below(16);
                random_fabrik(&mut rng, iterations)
            })
            .collect();
        check_fabrik(&mut gpu, &chains, &format!("fabrik N={n}"));
    }
}

/// FABRIK runs one kernel variant per joint count (and one for counts with none): every
/// count in one batch, interleaved with counts outside 2..=MAX_FABRIK_JOINTS, then a batch
/// of one count on the same solver.
#[test]
fn partial_weights_of_half_turn_corrections_match_cpu() {
    // The way a partial weight turns a (near) half-turn correction is the hemisphere rule's,
    // in the kernels as on the CPU (see tests/wide.rs).
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(4200);
    let two: Vec<TwoBoneChain> = (0..20_000).map(|k| reversed_two_bone(&mut rng, [0.0, 1e-6][k % 2])).collect();
    check_two_bone(&mut gpu, &two, "two-bone half turns at partial weight");
    let three: Vec<ThreeBoneChain> = (0..20_000).map(|k| reversed_three_bone(&mut rng, [0.0, 1e-6][k % 2])).collect();
    let mut cpu = vec![ThreeBoneSolved::default(); three.len()];
    ThreeBoneJob::new(&three, &mut cpu).run_par().unwrap();
    let mut out = vec![ThreeBoneSolved::default(); three.len()];
    gpu.solve(&three, &mut out).unwrap();
    assert_matches(
        "three-bone half turns at partial weight",
        &cpu,
        &out,
        |i| three_bone_length(&three[i]),
        |i| format!("{:?}", three[i]),
    );
}

#[test]
fn folded_fabrik_chains_match_cpu() {
    // Bones that flip direction (chains bent 90° and 135° reaching out): the rotations are
    // rebuilt down the chain in the kernel as on the CPU.
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(4100);
    let chains: Vec<FabrikChain> = (0..6000)
        .map(|k| {
            let bend = [std::f32::consts::FRAC_PI_2, 0.75 * std::f32::consts::PI][k % 2];
            folded_fabrik(&mut rng, 2 + k % 15, bend, 16).0
        })
        .collect();
    check_fabrik(&mut gpu, &chains, "folded fabrik");
    // Exactly 180° (the roll of a bone left within ~1e-6 rad of reversed is rounding, see
    // tests/wide.rs): same status words and positions as the CPU, and no bone rolls.
    let exact: Vec<FabrikChain> =
        (0..6000).map(|k| folded_fabrik(&mut rng, 2 + k % 15, std::f32::consts::PI, 16).0).collect();
    let mut cpu = vec![FabrikSolved::default(); exact.len()];
    FabrikJob::new(&exact, &mut cpu).run_par().unwrap();
    let mut out = vec![FabrikSolved::default(); exact.len()];
    gpu.solve(&exact, &mut out).unwrap();
    for ((c, s), g) in exact.iter().zip(&cpu).zip(&out) {
        assert_eq!(g.status, s.status, "{c:?}");
        let length = fabrik_length(c);
        for j in 0..c.joint_count() {
            assert!(g.position(j).distance(s.position(j)) <= 1e-4 * length, "joint {j}: {c:?}");
        }
        assert!(fabrik_roll(c, g) < 1e-4, "a bone rolls on the GPU: {c:?}");
    }
}

#[test]
fn fabrik_variants_per_joint_count_and_bad_counts_match_cpu() {
    let Some(mut gpu) = solver() else { return };
    assert_eq!(gpu.prepared(Kind::Fabrik), Vec::<usize>::new(), "FABRIK is built on demand");
    gpu.prepare_fabrik([4, 8, 0]).unwrap();
    assert_eq!(gpu.prepared(Kind::Fabrik), vec![0, 4, 8]);
    // Every kind can be built ahead of time; the one-pipeline kinds ignore the counts.
    gpu.prepare(Kind::LookAt, []).unwrap();
    gpu.prepare(Kind::MultiFabrik, [3]).unwrap();
    gpu.prepare(Kind::Ccd, [2, 99]).unwrap();
    assert_eq!(gpu.prepared(Kind::LookAt), vec![0]);
    assert_eq!(gpu.prepared(Kind::MultiFabrik), vec![0]);
    assert_eq!(gpu.prepared(Kind::Ccd), vec![0, 2]);
    // The option pipelines: CCD root first, constrained FABRIK with aligned hinges.
    gpu.prepare_with_options(Kind::Ccd, [3], option::ROOT_FIRST).unwrap();
    gpu.prepare_with_options(Kind::ConstrainedFabrik, [2], option::ALIGN_HINGES | option::KEEP_END_ROTATION).unwrap();
    gpu.prepare_with_options(Kind::Fabrik, [2], option::ROOT_FIRST).unwrap();
    let with_option = MAX_FABRIK_JOINTS + 1;
    assert_eq!(gpu.prepared(Kind::Ccd), vec![0, 2, 3 + with_option]);
    assert_eq!(gpu.prepared(Kind::ConstrainedFabrik), vec![2 + with_option]);
    assert_eq!(gpu.prepared(Kind::Fabrik), vec![0, 2, 4, 8], "FABRIK has no option variants");
    assert_eq!(gpu.prepared(Kind::TwoBone), vec![0], "two-bone is built with the solver");
    let mut rng = Rng(3500);
    let mut chains: Vec<FabrikChain> = (0..3000)
        .map(|_| {
            let iterations = 1 + rng.below(16);
            random_fabrik(&mut rng, iterations)
        })
        .collect();
    for (i, bad) in [0u32, 1, 17, u32::MAX].into_iter().cycle().take(40).enumerate() {
        chains[i * 71].mode[0] = bad;
    }
    let counts: std::collections::BTreeSet<u32> = chains.iter().map(|c| c.mode[0]).collect();
    assert!((2..=MAX_FABRIK_JOINTS as u32).all(|n| counts.contains(&n)), "every joint count present");
    let out = check_fabrik(&mut gpu, &chains, "fabrik every count");
    let bad: Vec<usize> = (0..out.len()).filter(|&i| out[i].status[1] == ChainError::JointCount as u32).collect();
    assert_eq!(bad, (0..40).map(|i| i * 71).collect::<Vec<_>>(), "exactly the chains with a bad count");

    let four: Vec<FabrikChain> = crowd_ik_tools::workload::fabrik(500, 4, 8, 11);
    check_fabrik(&mut gpu, &four, "fabrik 4 joints after a mixed batch");
}

/// A FABRIK kernel zeroes only the output slots a record held past its new joint count
/// (`status.w`): the same slots solved frame after frame with counts that shrink, grow,
/// fall back (bad count, weight 0) and change kernel variant always read exactly as the
/// CPU's, zeros past the count included.
#[test]
fn fabrik_slots_past_the_joint_count_are_zero_when_counts_change() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(3600);
    let n = 1000;
    let base: Vec<FabrikChain> = (0..n).map(|_| random_fabrik(&mut rng, 6)).collect();
    // Frame by frame, chain i gets count(frame, i).
    let frames: [fn(usize) -> u32; 5] =
        [|_| 16, |i| [2, 4, 0, 16, 9][i % 5], |i| [17, 3, 16, 1, 2][i % 5], |i| [5, 16, 8, 2, u32::MAX][i % 5], |_| 3];
    for (f, count) in frames.iter().enumerate() {
        let chains: Vec<FabrikChain> = base
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut c = *c;
                c.mode[0] = count(i);
                if (2..=MAX_FABRIK_JOINTS as u32).contains(&c.mode[0]) {
                    // Joints up to the count along the random chain's first bone, zigzagging.
                    let (a, b) = (c.joints_ms[0], c.joints_ms[1]);
                    for k in 0..c.mode[0] as usize {
                        c.joints_ms[k] = std::array::from_fn(|w| a[w] + (b[w] - a[w]) * k as f32 * 0.5);
                        c.joints_ms[k][1] += (k % 2) as f32 * 0.1;
                        c.rotations_ms[k] = [0.0, 0.0, 0.0, 1.0];
                    }
                }
                if i % 7 == 0 {
                    c.target_ms[3] = 0.0; // untouched: FK pose of its joints
                }
                c
            })
            .collect();
        let what = format!("fabrik frame {f}");
        let out = check_fabrik(&mut gpu, &chains, &what);
        for (i, o) in out.iter().enumerate() {
            assert_eq!(o.joints_written(), (count(i) as usize).min(MAX_FABRIK_JOINTS), "{what}, chain {i}");
        }
    }
}

#[test]
fn mixed_frame_in_one_encoder_equals_each_kind_alone() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(4000);
    let two: Vec<TwoBoneChain> = (0..5000).map(|_| random_two_bone(&mut rng)).collect();
    let three: Vec<ThreeBoneChain> = (0..3000).map(|_| random_three_bone(&mut rng)).collect();
    let fab: Vec<FabrikChain> = (0..1000).map(|_| random_fabrik(&mut rng, 8)).collect();
    // Each alone.
    let mut two_alone = vec![TwoBoneSolved::default(); two.len()];
    let mut three_alone = vec![ThreeBoneSolved::default(); three.len()];
    let mut fab_alone = vec![FabrikSolved::default(); fab.len()];
    gpu.solve(&two, &mut two_alone).unwrap();
    gpu.solve(&three, &mut three_alone).unwrap();
    gpu.solve(&fab, &mut fab_alone).unwrap();
    // All three in one encoder, one submit, as a renderer would.
    gpu.upload(&two).unwrap();
    gpu.upload(&three).unwrap();
    gpu.upload(&fab).unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder);
    gpu.queue().submit([encoder.finish()]);
    let mut two_mixed = vec![TwoBoneSolved::default(); two.len()];
    let mut three_mixed = vec![ThreeBoneSolved::default(); three.len()];
    let mut fab_mixed = vec![FabrikSolved::default(); fab.len()];
    gpu.read::<TwoBoneChain>(&mut two_mixed).unwrap();
    gpu.read::<ThreeBoneChain>(&mut three_mixed).unwrap();
    gpu.read::<FabrikChain>(&mut fab_mixed).unwrap();
    assert_eq!(bytemuck::cast_slice::<_, u8>(&two_alone), bytemuck::cast_slice::<_, u8>(&two_mixed));
    assert_eq!(bytemuck::cast_slice::<_, u8>(&three_alone), bytemuck::cast_slice::<_, u8>(&three_mixed));
    assert_eq!(bytemuck::cast_slice::<_, u8>(&fab_alone), bytemuck::cast_slice::<_, u8>(&fab_mixed));
}

#[test]
fn batches_split_across_storage_segments_and_2d_dispatches() {
    let Some(mut gpu) = solver() else { return };
    // 100 chains per segment and at most 3 workgroups per dimension: a 10 007-chain batch
    // takes 101 segments, each a 2-D dispatch.
    gpu.set_max_segment_bytes(100 * std::mem::size_of::<TwoBoneChain>() as u64);
    gpu.set_max_workgroups_per_dimension(1);
    assert_eq!(gpu.chains_per_segment(Kind::TwoBone), 100);
    let mut rng = Rng(5000);
    let chains: Vec<TwoBoneChain> = (0..10_007).map(|_| random_two_bone(&mut rng)).collect();
    check_two_bone(&mut gpu, &chains, "two_bone split");
    let segments: Vec<_> = gpu.outputs(Kind::TwoBone).collect();
    assert_eq!(segments.len(), 101);
    assert_eq!(segments.iter().map(|s| s.count).sum::<usize>(), chains.len());
    assert_eq!(segments[100].first, 10_000);
    // A smaller batch next frame reuses the same buffers.
    let first_buffer = segments[0].buffer.clone();
    check_two_bone(&mut gpu, &chains[..250], "two_bone split, smaller");
    assert_eq!(gpu.outputs(Kind::TwoBone).count(), 3);
    assert_eq!(gpu.outputs(Kind::TwoBone).next().unwrap().buffer, &first_buffer);
}

#[test]
fn four_million_chains_on_a_device_with_default_limits() {
    // The caller's device, created with wgpu's default limits (128 MiB storage bindings).
    let Some(own) = solver() else { return };
    let adapter = crowd_ik::gpu::adapter_from_env().unwrap();
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("default-limits device");
    drop(own);
    let mut gpu = GpuSolver::new(&device, &queue).unwrap();
    let n = 4 * 1024 * 1024;
    let chains = crowd_ik_tools::workload::two_bone(n, 7);
    assert!(gpu.chains_per_segment(Kind::TwoBone) < n, "this batch must be split");
    check_two_bone(&mut gpu, &chains, "two_bone 4M, default limits");
    assert!(gpu.outputs(Kind::TwoBone).count() > 1);
}

#[test]
fn empty_batches_are_a_no_op_and_mismatches_are_errors() {
    let Some(mut gpu) = solver() else { return };
    let mut none: [TwoBoneSolved; 0] = [];
    gpu.solve::<TwoBoneChain>(&[], &mut none).unwrap();
    assert_eq!(gpu.outputs(Kind::TwoBone).count(), 0);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder); // nothing uploaded at all for two kinds: still valid
    gpu.queue().submit([encoder.finish()]);
    let chains = crowd_ik_tools::workload::two_bone(10, 1);
    let mut short = vec![TwoBoneSolved::default(); 9];
    assert_eq!(gpu.solve(&chains, &mut short), Err(GpuError::LengthMismatch { chains: 10, outputs: 9 }));
    gpu.upload(&chains).unwrap();
    assert_eq!(gpu.read::<TwoBoneChain>(&mut short), Err(GpuError::LengthMismatch { chains: 10, outputs: 9 }));
}

#[test]
fn gpu_results_are_reproducible_whatever_ran_before() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(6000);
    let chains: Vec<TwoBoneChain> = (0..2000).map(|_| random_two_bone(&mut rng)).collect();
    let mut a = vec![TwoBoneSolved::default(); chains.len()];
    gpu.solve(&chains, &mut a).unwrap();
    let other: Vec<TwoBoneChain> = (0..3000).map(|_| random_two_bone(&mut rng)).collect();
    let mut junk = vec![TwoBoneSolved::default(); other.len()];
    gpu.solve(&other, &mut junk).unwrap();
    let mut b = vec![TwoBoneSolved::default(); chains.len()];
    gpu.solve(&chains, &mut b).unwrap();
    assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
}

/// Huge swivel and twist angles: the GPU flags the same chains `InvalidParameter` as the
/// CPU (the kernel's `check_limb_settings` has the same `MAX_ANGLE` rule), with finite
/// output, and solves those at the limit like the CPU; three-bone too.
#[test]
fn huge_swivel_and_twist_angles_match_cpu() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(77);
    let angles = [0.5, 9_999.0, 1e4, -1e4, 1.0001e4, 1e12, -1e18, f32::MAX];
    let mut chains = Vec::new();
    let mut three = Vec::new();
    for (i, &a) in angles.iter().cycle().take(200).enumerate() {
        let c = random_two_bone(&mut rng);
        let north = crowd_ik::glam::Vec3::new(0.3, 0.2, 1.0);
        chains.push(if i % 2 == 0 { c.with_swivel(north, a) } else { c.with_twist(a) });
        let t = random_three_bone(&mut rng);
        three.push(if i % 2 == 0 { t.with_swivel(north, a) } else { t.with_twist(a) });
    }
    check_two_bone(&mut gpu, &chains, "two_bone huge angles");
    let mut cpu = vec![ThreeBoneSolved::default(); three.len()];
    ThreeBoneJob::new(&three, &mut cpu).run_par().unwrap();
    let mut out = vec![ThreeBoneSolved::default(); three.len()];
    gpu.solve(&three, &mut out).unwrap();
    assert_matches(
        "three_bone huge angles",
        &cpu,
        &out,
        |i| three_bone_length(&three[i]),
        |i| format!("{:?}", three[i]),
    );
    let invalid = out.iter().filter(|o| o.error() == Some(ChainError::InvalidParameter)).count();
    assert!(invalid >= 50, "only {invalid} chains flagged");
}

/// GPU against CPU on raw records: the CPU's status words bit for bit, finite output, and
/// positions within `1e-4 ×` the chain's length (`joints(c)`: its joint positions).
fn raw_records_match<C, const N: usize>(
    gpu: &mut GpuSolver,
    chains: &[C],
    cpu_solve: impl Fn(&[C], &mut [crowd_ik::SolvedChain<N>]),
    joints: impl Fn(&C) -> Vec<crowd_ik::glam::Vec3>,
) where
    C: crowd_ik::gpu::GpuChain<Solved = crowd_ik::SolvedChain<N>> + std::fmt::Debug,
{
    let mut cpu = vec![crowd_ik::SolvedChain::<N>::default(); chains.len()];
    cpu_solve(chains, &mut cpu);
    let mut out = vec![crowd_ik::SolvedChain::<N>::default(); chains.len()];
    gpu.solve(chains, &mut out).unwrap();
    for ((c, s), g) in chains.iter().zip(&cpu).zip(&out) {
        assert_eq!(g.status, s.status, "{c:?}");
        let j = joints(c);
        let scale = chain_length(j.iter().copied());
        for k in 0..N {
            assert!(g.positions_ms[k].iter().chain(&g.rotations_ms[k]).all(|x| x.is_finite()), "{c:?}");
            if k < j.len() {
                assert!(g.position(k).distance(s.position(k)) <= 1e-4 * scale, "joint {k}: {c:?}");
            }
        }
    }
}

/// The raw-bytes records of tests/raw_bytes.rs (random words overwritten by NaN, inf, huge,
/// tiny and integer bit patterns; whole chains scaled to 1e-15, 1e-20 or 1e8) through the
/// kernels: the CPU's status words bit for bit (error codes, reached, info bits), finite
/// output, and positions within `1e-4 ×` the chain's length.
#[test]
fn raw_records_match_cpu_status_for_status() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(4300);
    let (two, _) = raw_records(&mut rng, 4000, random_two_bone, 3, &[6, 7, 11]);
    raw_records_match(
        &mut gpu,
        &two,
        |c, o| {
            TwoBoneJob::new(c, o).run_par().unwrap();
        },
        |c| (0..3).map(|j| c.joint(j)).collect(),
    );
    let (three, _) = raw_records(&mut rng, 4000, random_three_bone, 4, &[8, 9]);
    raw_records_match(
        &mut gpu,
        &three,
        |c, o| {
            ThreeBoneJob::new(c, o).run_par().unwrap();
        },
        |c| (0..4).map(|j| c.joint(j)).collect(),
    );
    let (fab, _) = raw_records(&mut rng, 4000, |rng| random_fabrik(rng, 8), 16, &[32]);
    raw_records_match(
        &mut gpu,
        &fab,
        |c, o| {
            FabrikJob::new(c, o).run_par().unwrap();
        },
        |c| (0..c.joint_count().min(MAX_FABRIK_JOINTS)).map(|j| c.joint(j)).collect(),
    );
}

/// `option::MIRRORED` in the kernels: a random chain reflected (`x → −x`) and flagged
/// mirrored solves on the GPU to the GPU's solution of the original, reflected, exactly.
#[test]
fn mirrored_chains_are_their_reflected_twins_exactly() {
    let Some(mut gpu) = solver() else { return };
    let mut rng = Rng(4400);
    let two: Vec<TwoBoneChain> = (0..5000).map(|_| random_two_bone(&mut rng)).collect();
    let two_m: Vec<TwoBoneChain> = two.iter().map(mirrored_two_bone).collect();
    let (mut a, mut b) = (vec![TwoBoneSolved::default(); two.len()], vec![TwoBoneSolved::default(); two.len()]);
    gpu.solve(&two, &mut a).unwrap();
    gpu.solve(&two_m, &mut b).unwrap();
    for i in 0..two.len() {
        assert_eq!(b[i], reflect_solved(&a[i], 3), "two-bone {i}: {:?}", two[i]);
    }
    let three: Vec<ThreeBoneChain> = (0..5000).map(|_| random_three_bone(&mut rng)).collect();
    let three_m: Vec<ThreeBoneChain> = three.iter().map(mirrored_three_bone).collect();
    let (mut a, mut b) = (vec![ThreeBoneSolved::default(); three.len()], vec![ThreeBoneSolved::default(); three.len()]);
    gpu.solve(&three, &mut a).unwrap();
    gpu.solve(&three_m, &mut b).unwrap();
    for i in 0..three.len() {
        assert_eq!(b[i], reflect_solved(&a[i], 4), "three-bone {i}: {:?}", three[i]);
    }
    let fab: Vec<FabrikChain> = (0..5000).map(|_| random_fabrik(&mut rng, 8)).collect();
    let fab_m: Vec<FabrikChain> = fab.iter().map(mirrored_fabrik).collect();
    let (mut a, mut b) = (vec![FabrikSolved::default(); fab.len()], vec![FabrikSolved::default(); fab.len()]);
    gpu.solve(&fab, &mut a).unwrap();
    gpu.solve(&fab_m, &mut b).unwrap();
    for i in 0..fab.len() {
        let n = fab[i].joint_count().min(MAX_FABRIK_JOINTS);
        assert_eq!(b[i], reflect_solved(&a[i], n), "fabrik {i}: {:?}", fab[i]);
    }
    // And against the CPU, mirrored chains hold the twins' contract like any other.
    check_two_bone(&mut gpu, &two_m, "mirrored two-bone");
}
