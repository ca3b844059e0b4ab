use crowd_ik::prelude::*;
use crowd_ik::workload;
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(4096);
    let reps: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(200);
    let chains = workload::two_bone(n, 1);
    let mut out = vec![TwoBoneSolved::default(); n];
    let mut batch = f64::MAX;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        TwoBoneJob::new(&chains, &mut out).run().unwrap();
        batch = batch.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    for (j, it) in [(4, 8), (8, 16)] {
        let fc = workload::fabrik(n, j, it, 3);
        let mut fo = vec![FabrikSolved::default(); n];
        let mut best = f64::MAX;
        for _ in 0..reps / 10 {
            let t = std::time::Instant::now();
            FabrikJob::new(&fc, &mut fo).run().unwrap();
            best = best.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        }
        println!("fabrik {j}x{it}: {best:.1} ns/chain");
    }
    if std::env::args().nth(3).is_some() {
        println!("batch {batch:.1} ns/chain");
        return;
    }
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for (c, o) in chains.iter().zip(out.iter_mut()) {
            crowd_ik::cpu::two_bone(c, o);
        }
    }
    let scalar = t.elapsed().as_secs_f64() * 1e9 / (n * reps) as f64;
    println!("batch {batch:.1} ns/chain, scalar {scalar:.1} ns/chain");
}
#[allow(dead_code)]
fn fab() {}
