// The foot-placement state buffer of the foot_ik kernel, as 32-bit words (every device).
// Per character the first 2 + 10 · LEGS vec4s of its CharacterState (the rig's legs only);
// load_state and store_state in shaders/shared/foot_placement.wgsl read and write it one vec4 at a
// time through these functions. shaders/shared/foot_state_wide.wgsl is the same buffer as 64-bit
// words, for devices with SHADER_INT64 (src/gpu/crowd.rs picks the variant).
#import foot_ground

@group(0) @binding(7) var<storage, read_write> states: array<vec4<u32>>;

// The vec4 at index i.
fn state_get(i: u32) -> vec4<u32> {
    return states[i];
}

fn state_set(i: u32, v: vec4<u32>) {
    states[i] = v;
}

// Clears the flags of the character whose head (root, flags) is the vec4 at index i.
fn state_clear_flags(i: u32) {
    states[i].z = 0u;
}
