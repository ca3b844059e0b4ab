// The records binding of the kernels on trees (shaders/shared/tree.wgsl): an array of
// MultiFabrikChain and the accessors tree.wgsl reads it through. The dls_tree kernel is built
// with dls_tree_binding in its place (build.rs, SWAPS).

#import records

@group(0) @binding(0) var<storage, read> chains: array<MultiFabrikChain>;

fn tree_joint(i: u32, k: u32) -> vec4<f32> {
    return chains[i].joints_ms[k];
}
fn tree_rotation(i: u32, k: u32) -> vec4<f32> {
    return chains[i].rotations_ms[k];
}
fn tree_target(i: u32, e: u32) -> vec4<f32> {
    return chains[i].targets_ms[e];
}
fn tree_effector(i: u32, e: u32) -> u32 {
    return chains[i].effectors[e];
}
fn tree_parents(i: u32, w: u32) -> vec4<u32> {
    return chains[i].parents[w];
}
fn tree_params(i: u32) -> vec4<f32> {
    return chains[i].params;
}
fn tree_mode(i: u32) -> vec4<u32> {
    return chains[i].mode;
}
