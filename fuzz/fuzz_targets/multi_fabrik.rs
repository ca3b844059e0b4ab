#![no_main]
//! Multi-effector FABRIK on raw records (iterations capped at 32 so a run stays fast).
//! Checks (see `src/lib.rs`): no panic, finite output, every path's output the scalar
//! path's bit for bit, each tree the same alone as among its neighbours; `validate()` = the
//! solver's verdict.

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut trees: Vec<MultiFabrikChain> = crowd_ik_fuzz::records(data);
    for t in &mut trees {
        t.mode[1] = t.mode[1].min(32);
    }
    let out = crowd_ik_fuzz::check_bit_exact(&trees, |t, path, out| {
        MultiFabrikJob::new(t, out).with_path(path).run().expect("equal lengths");
    });
    crowd_ik_fuzz::check_verdicts(&trees, &out, crowd_ik::cpu::validate_multi_fabrik);
});
