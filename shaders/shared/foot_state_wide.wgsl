// The foot-placement state buffer of the foot_ik kernel as 64-bit words: the same bytes as
// shaders/shared/foot_state.wgsl (little-endian: word 2k in the low half of 64-bit word k), for
// devices with SHADER_INT64. Mesa's lavapipe reads and writes a storage buffer at a
// per-invocation address one component and one SIMD lane at a time, so a vec4 moved as two
// 64-bit components instead of four 32-bit ones halves that work (BENCHMARKS.md); the values
// are the same bit for bit.
#import foot_ground

@group(0) @binding(7) var<storage, read_write> states: array<vec2<u64>>;

fn state_get(i: u32) -> vec4<u32> {
    let v = states[i];
    return vec4<u32>(u32(v.x & 0xfffffffflu), u32(v.x >> 32u), u32(v.y & 0xfffffffflu), u32(v.y >> 32u));
}

fn state_set(i: u32, v: vec4<u32>) {
    states[i] = vec2<u64>(u64(v.x) | (u64(v.y) << 32u), u64(v.z) | (u64(v.w) << 32u));
}

// Clears the flags (and the reserved word after them, always 0).
fn state_clear_flags(i: u32) {
    states[i].y = 0lu;
}
