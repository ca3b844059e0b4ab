//! CPU solver throughput on the shared workloads (`crowd_ik_tools::workload`), one thread and all
//! threads, and two-bone and FABRIK one thread on every CPU path this CPU has (`CpuPath`).
//! `cargo bench --bench cpu_solvers`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use crowd_ik::cpu::CpuPath;
use crowd_ik::prelude::*;
use crowd_ik_tools::workload;

const N: usize = 16 * 1024;

fn two_bone(c: &mut Criterion) {
    let chains = workload::two_bone(N, 1);
    let mut out = vec![TwoBoneSolved::default(); N];
    let mut g = c.benchmark_group("two_bone");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("one_thread", N), |b| b.iter(|| TwoBoneJob::new(&chains, &mut out).run()));
    g.bench_function(BenchmarkId::new("all_threads", N), |b| b.iter(|| TwoBoneJob::new(&chains, &mut out).run_par()));
    for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
        g.bench_function(BenchmarkId::new(format!("one_thread_{path}"), N), |b| {
            b.iter(|| TwoBoneJob::new(&chains, &mut out).with_path(path).run())
        });
    }
    g.finish();
}

fn three_bone(c: &mut Criterion) {
    let chains = workload::three_bone(N, 2);
    let mut out = vec![ThreeBoneSolved::default(); N];
    let mut g = c.benchmark_group("three_bone");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("one_thread", N), |b| b.iter(|| ThreeBoneJob::new(&chains, &mut out).run()));
    g.bench_function(BenchmarkId::new("all_threads", N), |b| b.iter(|| ThreeBoneJob::new(&chains, &mut out).run_par()));
    g.finish();
}

fn fabrik(c: &mut Criterion) {
    let mut g = c.benchmark_group("fabrik");
    for (joints, iterations) in [(4, 8), (8, 16)] {
        let n = N / 4;
        let chains = workload::fabrik(n, joints, iterations, 3);
        let mut out = vec![FabrikSolved::default(); n];
        g.throughput(Throughput::Elements(n as u64));
        let id = format!("{joints}x{iterations}");
        g.bench_function(BenchmarkId::new("one_thread", &id), |b| b.iter(|| FabrikJob::new(&chains, &mut out).run()));
        g.bench_function(BenchmarkId::new("all_threads", &id), |b| {
            b.iter(|| FabrikJob::new(&chains, &mut out).run_par())
        });
        for path in CpuPath::ALL.into_iter().filter(|p| p.is_available()) {
            g.bench_function(BenchmarkId::new(format!("one_thread_{path}"), &id), |b| {
                b.iter(|| FabrikJob::new(&chains, &mut out).with_path(path).run())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, two_bone, three_bone, fabrik);
criterion_main!(benches);
