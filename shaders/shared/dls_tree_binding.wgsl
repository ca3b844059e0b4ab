// The records binding of the dls_tree kernel, in place of tree_binding (build.rs, SWAPS): an
// array of DlsTree, whose `tree` is a MultiFabrikChain, read through the same accessors.

#import records

@group(0) @binding(0) var<storage, read> chains: array<DlsTree>;

fn tree_joint(i: u32, k: u32) -> vec4<f32> {
    return chains[i].tree.joints_ms[k];
}
fn tree_rotation(i: u32, k: u32) -> vec4<f32> {
    return chains[i].tree.rotations_ms[k];
}
fn tree_target(i: u32, e: u32) -> vec4<f32> {
    return chains[i].tree.targets_ms[e];
}
fn tree_effector(i: u32, e: u32) -> u32 {
    return chains[i].tree.effectors[e];
}
fn tree_parents(i: u32, w: u32) -> vec4<u32> {
    return chains[i].tree.parents[w];
}
fn tree_params(i: u32) -> vec4<f32> {
    return chains[i].tree.params;
}
fn tree_mode(i: u32) -> vec4<u32> {
    return chains[i].tree.mode;
}
