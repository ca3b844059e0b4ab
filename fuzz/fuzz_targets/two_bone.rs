#![no_main]
//! Two-bone IK on raw records (see the crate's `src/lib.rs` for what is checked).

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let chains: Vec<TwoBoneChain> = crowd_ik_fuzz::records(data);
    crowd_ik_fuzz::check(&chains, |c, path, out| {
        TwoBoneJob::new(c, out).with_path(path).run().expect("equal lengths");
    });
});
