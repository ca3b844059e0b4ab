#![no_main]
//! Look-at on raw records. Checks (see `src/lib.rs`): no panic, finite output, every path's
//! output the scalar path's bit for bit, each record the same alone as among its
//! neighbours; `validate()` = the solver's verdict.

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let records: Vec<LookAtChain> = crowd_ik_fuzz::records(data);
    let out = crowd_ik_fuzz::check_bit_exact(&records, |r, path, out| {
        LookAtJob::new(r, out).with_path(path).run().expect("equal lengths");
    });
    crowd_ik_fuzz::check_verdicts(&records, &out, crowd_ik::cpu::validate_look_at);
});
