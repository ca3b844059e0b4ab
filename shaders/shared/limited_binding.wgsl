// The records binding of the limited-chain kernels (constrained_fabrik, ccd): an array of
// LimitedChain. The dls kernel is built with dls_binding in its place (build.rs, SWAPS).

#import records

@group(0) @binding(0) var<storage, read> chains: array<LimitedChain>;
