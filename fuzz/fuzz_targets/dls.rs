#![no_main]
//! Damped least squares on raw records (iterations capped at 16, so a run stays fast).
//! Checks (see `src/lib.rs`): no panic, finite output, each chain the same alone as among
//! its neighbours; `validate()` = the solver's verdict; at weight 1 the limits hold (within
//! 1e-4 rad) whatever the iteration count, zero included.

use crowd_ik::prelude::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut chains: Vec<DlsChain> = crowd_ik_fuzz::records(data);
    for c in &mut chains {
        c.chain.mode[1] = c.chain.mode[1].min(16);
    }
    let out = crowd_ik_fuzz::check_bit_exact(&chains, |c, path, out| {
        DlsJob::new(c, out).with_path(path).run().expect("equal lengths");
    });
    crowd_ik_fuzz::check_verdicts(&chains, &out, crowd_ik::cpu::validate_dls);
    let limited: Vec<ConstrainedFabrikChain> =
        chains.iter().map(|c| ConstrainedFabrikChain::new(c.chain, c.limits)).collect();
    crowd_ik_fuzz::check_limits(&limited, &out);
});
