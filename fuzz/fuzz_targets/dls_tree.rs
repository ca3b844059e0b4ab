#![no_main]
//! Damped least squares on raw joint-tree records (iterations capped at 8 and starts at 2,
//! so a run stays fast). Checks (see `src/lib.rs`): no panic, finite output, every path's
//! output the scalar path's bit for bit (the job runs the scalar solver on every path),
//! each tree the same alone as among its neighbours; `validate()` = the solver's verdict.

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut trees: Vec<DlsTree> = crowd_ik_fuzz::records(data);
    for t in &mut trees {
        t.tree.mode[1] = t.tree.mode[1].min(8);
        t.goal.starts[0] = t.goal.starts[0].min(2);
    }
    let out = crowd_ik_fuzz::check_bit_exact(&trees, |t, path, out| {
        DlsTreeJob::new(t, out).with_path(path).run().expect("equal lengths");
    });
    crowd_ik_fuzz::check_verdicts(&trees, &out, crowd_ik::cpu::validate_dls_tree);
});
