// The records binding of the dls kernel, in place of limited_binding (build.rs, SWAPS): an
// array of DlsChain, whose `chain` and `limits` are a LimitedChain's, so the limited-chain
// stages read them unchanged.

#import records

@group(0) @binding(0) var<storage, read> chains: array<DlsChain>;
