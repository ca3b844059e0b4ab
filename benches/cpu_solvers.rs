//! CPU solver throughput on the shared workloads (`crowd_ik_tools::workload`), one thread and all
//! threads, and two-bone and FABRIK one thread on every CPU path this CPU has (`CpuPath`);
//! the toolbox group: constrained FABRIK, CCD, damped least squares (reachable targets), a
//! multi-effector tree and look-at.
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

/// The IK toolbox beyond legs: constrained FABRIK and CCD 8x16, the 20-joint quadruped tree
/// (multi-effector FABRIK, 8 iterations), damped least squares on the 13-joint upper body
/// and the 20-joint quadruped (8 starts of 32 iterations at most) and 4-joint look-at
/// records, one thread and all.
fn toolbox(c: &mut Criterion) {
    fn both<C: crowd_ik::cpu::Chain>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        id: &str,
        chains: &[C],
    ) {
        let mut out = vec![C::Solved::default(); chains.len()];
        g.throughput(Throughput::Elements(chains.len() as u64));
        g.bench_function(BenchmarkId::new("one_thread", id), |b| b.iter(|| BatchJob::new(chains, &mut out).run()));
        g.bench_function(BenchmarkId::new("all_threads", id), |b| b.iter(|| BatchJob::new(chains, &mut out).run_par()));
    }
    let mut g = c.benchmark_group("toolbox");
    let limited = workload::limited(N / 16, 8, 16, 3);
    both(&mut g, "constrained_fabrik_8x16", &limited);
    let ccd: Vec<CcdChain> = limited.iter().map(|l| CcdChain::new(l.chain, l.limits)).collect();
    both(&mut g, "ccd_8x16", &ccd);
    let reachable = workload::limited_reachable(N / 16, 8, 32, 3);
    let dls: Vec<DlsChain> = reachable.iter().map(|l| DlsChain::new(l.chain, l.limits)).collect();
    both(&mut g, "dls_reach_8x32", &dls);
    both(&mut g, "tree_20x8", &workload::multi_fabrik(N / 16, 8, 4));
    both(&mut g, "dls_upper_13", &workload::dls_upper_bodies(N / 64, 32, 7));
    both(&mut g, "dls_quad_20", &workload::dls_quadrupeds(N / 64, 32, 8));
    both(&mut g, "look_at_4", &workload::look_at(N, 5));
    g.finish();
}

criterion_group!(benches, two_bone, three_bone, fabrik, toolbox);
criterion_main!(benches);
