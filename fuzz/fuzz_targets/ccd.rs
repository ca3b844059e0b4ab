#![no_main]
//! CCD on raw records (iterations capped at 64 so a run stays fast). Checks
//! (see `src/lib.rs`): no panic, finite output, SIMD = scalar bit for bit, each chain the
//! same alone as among its neighbours; `validate()` = the solver's verdict; at weight 1 the
//! limits hold (within 1e-4 rad) whatever the iteration count, zero included.

use crowd_ik::prelude::*;
use crowd_ik::records::option;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut chains: Vec<CcdChain> = crowd_ik_fuzz::records(data);
    for c in &mut chains {
        c.chain.mode[1] = c.chain.mode[1].min(64);
    }
    crowd_ik_fuzz::check_bit_exact(&chains, |c, path, out| {
        CcdJob::new(c, out).with_path(path).run().expect("equal lengths");
    });
    let mut out = vec![FabrikSolved::default(); chains.len()];
    CcdJob::new(&chains, &mut out).run().expect("equal lengths");
    for (i, (c, s)) in chains.iter().zip(&out).enumerate() {
        let verdict = crowd_ik_fuzz::code(crowd_ik::cpu::validate_ccd(c));
        assert_eq!(verdict, s.status[1], "chain {i}: validate() is not the solver's verdict");
        if s.status[1] == 0 && c.chain.target_ms[3] >= 1.0 && c.chain.mode[2] & option::MIRRORED == 0 {
            for k in 0..c.chain.joint_count() - 1 {
                let limited = ConstrainedFabrikChain::new(c.chain, c.limits);
                let v = crowd_ik_tools::limits::violation(&limited, s, k);
                assert!(v <= 1e-4, "chain {i}, joint {k}: {v} rad outside its limit");
            }
        }
    }
});
