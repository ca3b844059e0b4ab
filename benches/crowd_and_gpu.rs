//! Criterion benches of the crowd foot-IK frame (CPU one thread / all threads, GPU resident)
//! and of the chain kernels on the GPU with inputs already resident.
//! `cargo bench --bench crowd_and_gpu` (GPU groups are skipped, loudly, without an adapter).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::crowd::{FootResult, Ground, JointPose};
use crowd_ik::glam::Vec2;
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::{GpuSolver, Kind};
use crowd_ik::wgpu;
use crowd_ik_tools::scene::{biped_rig, WalkingCrowd};
use crowd_ik_tools::workload;

const CHARACTERS: usize = 10_000;

fn crowd(c: &mut Criterion) {
    let terrain = crowd_ik_tools::terrain::hills(Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let ground = Ground::Heightfield(terrain.clone());
    let rig = biped_rig();
    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    WalkingCrowd::new(CHARACTERS, 90.0, 1).frame(&terrain, &mut chars, &mut poses);
    let mut out = vec![JointPose::default(); poses.len()];
    let mut res = vec![FootResult::default(); CHARACTERS];
    let mut g = c.benchmark_group("crowd_foot_ik");
    g.throughput(Throughput::Elements(CHARACTERS as u64));
    g.bench_function("cpu_one_thread", |b| {
        b.iter(|| {
            FootIkJob {
                rig: &rig,
                ground: &ground,
                characters: &chars,
                hits: &[],
                poses_in: &poses,
                poses_out: &mut out,
                results: &mut res,
            }
            .run()
        })
    });
    g.bench_function("cpu_all_threads", |b| {
        b.iter(|| {
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
        })
    });
    match GpuSolver::new_default() {
        Ok(own) => {
            let mut gpu = CrowdSolver::new(own.device(), own.queue(), &rig, &ground).expect("crowd solver");
            gpu.upload(&chars, &poses, &[]).expect("upload");
            g.bench_function("gpu_resident", |b| {
                b.iter(|| {
                    let mut encoder = gpu.device().create_command_encoder(&Default::default());
                    gpu.encode(&mut encoder);
                    gpu.queue().submit([encoder.finish()]);
                    gpu.device().poll(wgpu::PollType::wait_indefinitely()).expect("poll");
                })
            });
        }
        Err(e) => eprintln!("SKIPPED crowd_foot_ik/gpu_resident: no GPU adapter ({e})"),
    }
    g.finish();
}

fn gpu_chains(c: &mut Criterion) {
    let mut gpu = match GpuSolver::new_default() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED gpu_chains: no GPU adapter ({e})");
            return;
        }
    };
    let n = 64 * 1024;
    gpu.upload(&workload::two_bone(n, 1)).expect("upload");
    gpu.upload(&workload::three_bone(n, 2)).expect("upload");
    gpu.upload(&workload::fabrik(n / 4, 8, 16, 3)).expect("upload");
    gpu.upload(&workload::dls_upper_bodies(n / 256, 32, 7)).expect("upload");
    let mut g = c.benchmark_group("gpu_resident");
    for (name, kind, count) in [
        ("two_bone", Kind::TwoBone, n),
        ("three_bone", Kind::ThreeBone, n),
        ("fabrik_8x16", Kind::Fabrik, n / 4),
        ("dls_upper_13", Kind::DlsTree, n / 256),
    ] {
        g.throughput(Throughput::Elements(count as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                gpu.dispatch(&[kind]).expect("dispatch");
                gpu.device().poll(wgpu::PollType::wait_indefinitely()).expect("poll");
            })
        });
    }
    g.finish();
}

criterion_group!(benches, crowd, gpu_chains);
criterion_main!(benches);
