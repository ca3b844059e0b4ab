#![no_main]
//! FABRIK (fixed iterations, capped at 64 so a run stays fast) on raw records (see the
//! crate's `src/lib.rs` for what is checked).

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut chains: Vec<FabrikChain> = crowd_ik_fuzz::records(data);
    for c in &mut chains {
        c.mode[1] = c.mode[1].min(64);
    }
    crowd_ik_fuzz::check(&chains, |c, path, out| {
        FabrikJob::new(c, out).with_path(path).run().expect("equal lengths");
    });
});
