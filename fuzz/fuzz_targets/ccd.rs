#![no_main]
//! CCD on raw records (iterations capped at 64 so a run stays fast). Checks
//! (see `src/lib.rs`): no panic, finite output, SIMD = scalar bit for bit, each chain the
//! same alone as among its neighbours; `validate()` = the solver's verdict; at weight 1 the
//! limits hold (within 1e-4 rad) whatever the iteration count, zero included.

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut chains: Vec<CcdChain> = crowd_ik_fuzz::records(data);
    for c in &mut chains {
        c.chain.mode[1] = c.chain.mode[1].min(64);
    }
    let out = crowd_ik_fuzz::check_bit_exact(&chains, |c, path, out| {
        CcdJob::new(c, out).with_path(path).run().expect("equal lengths");
    });
    crowd_ik_fuzz::check_verdicts(&chains, &out, crowd_ik::cpu::validate_ccd);
    let limited: Vec<ConstrainedFabrikChain> =
        chains.iter().map(|c| ConstrainedFabrikChain::new(c.chain, c.limits)).collect();
    crowd_ik_fuzz::check_limits(&limited, &out);
});
