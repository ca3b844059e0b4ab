//! What every chain fuzz target checks, on records made from the fuzzer's raw bytes:
//!
//! - no panic on any path;
//! - finite output (positions, rotations, corrections) for every record;
//! - every SIMD path this CPU has gives the scalar path's error code (`status[1]`);
//! - a chain solves the same, bit for bit, alone and among the other records of the input
//!   (neighbour independence), on every path.
//!
//! Positions and the reached/info bits are not compared between paths here: arbitrary
//! bytes make valid chains of any conditioning (see `tests/raw_bytes.rs`, which compares
//! them for ordinary chains on stable Rust in CI).

use crowd_ik::cpu::CpuPath;
use crowd_ik::SolvedChain;

/// The records in `data` (whole records only; at most 64), copied out of the byte buffer
/// so they are aligned.
pub fn records<T: bytemuck::Pod>(data: &[u8]) -> Vec<T> {
    data.chunks_exact(size_of::<T>()).take(64).map(bytemuck::pod_read_unaligned).collect()
}

/// Every CPU path this machine runs.
pub fn paths() -> Vec<CpuPath> {
    CpuPath::ALL.into_iter().filter(|p| p.is_available()).collect()
}

/// Runs `solve(chains, path, out)` on every path and checks the contract above.
pub fn check<C: Copy, const N: usize>(chains: &[C], solve: impl Fn(&[C], CpuPath, &mut [SolvedChain<N>])) {
    if chains.is_empty() {
        return;
    }
    let mut scalar = vec![SolvedChain::<N>::default(); chains.len()];
    solve(chains, CpuPath::Scalar, &mut scalar);
    for path in paths() {
        let mut out = vec![SolvedChain::<N>::default(); chains.len()];
        solve(chains, path, &mut out);
        for (i, (o, s)) in out.iter().zip(&scalar).enumerate() {
            let finite = o.positions_ms.iter().chain(&o.rotations_ms).chain(&o.corrections).flatten();
            assert!(finite.into_iter().all(|x| x.is_finite()), "{path}: chain {i} has non-finite output");
            assert_eq!(o.status[1], s.status[1], "{path}: chain {i} error code");
            let mut alone = [SolvedChain::<N>::default()];
            solve(&chains[i..=i], path, &mut alone);
            assert_eq!(
                bytemuck::bytes_of(&alone[0]),
                bytemuck::bytes_of(o),
                "{path}: chain {i} depends on its neighbours"
            );
        }
    }
}

/// [`check`], plus: every SIMD path's output equal to the scalar path's bit for bit (the
/// solvers whose CPU jobs run in SIMD lanes promise it for every record).
pub fn check_bit_exact<C: Copy, const N: usize>(chains: &[C], solve: impl Fn(&[C], CpuPath, &mut [SolvedChain<N>])) {
    check(chains, &solve);
    let mut scalar = vec![SolvedChain::<N>::default(); chains.len()];
    solve(chains, CpuPath::Scalar, &mut scalar);
    for path in paths() {
        let mut out = vec![SolvedChain::<N>::default(); chains.len()];
        solve(chains, path, &mut out);
        for (i, (o, s)) in out.iter().zip(&scalar).enumerate() {
            assert_eq!(bytemuck::bytes_of(o), bytemuck::bytes_of(s), "{path}: chain {i} differs from the scalar path");
        }
    }
}

/// The error code a `validate` result stands for (0 = valid).
pub fn code(r: Result<(), crowd_ik::ChainError>) -> u32 {
    r.err().map_or(0, |e| e.code())
}

/// How far (radians) joint `i` of a solved limited chain is outside its limit, stated
/// independently of the solver from the solved model rotations (as `tests/limits.rs` does):
/// the deviation `D = rest⁻¹ · parent⁻¹ · R`; a hinge allows only turns about its axis
/// within its range; a cone bounds the swing by its ellipse; a twist range bounds the twist.
/// The twist is not checked within ~2° of a half-turn swing, where it is undefined.
pub fn limit_violation(
    c: &crowd_ik::prelude::ConstrainedFabrikChain,
    s: &crowd_ik::prelude::FabrikSolved,
    i: usize,
) -> f32 {
    use crowd_ik::records::limit;
    use glam::{Quat, Vec3};
    const PI: f32 = std::f32::consts::PI;
    let outside = |a: f32, lo: f32, hi: f32| {
        if a >= lo && a <= hi {
            return 0.0;
        }
        let wrap = |x: f32| (x + PI).rem_euclid(2.0 * PI) - PI;
        wrap(a - lo).abs().min(wrap(a - hi).abs())
    };
    let angle = |a: Quat, b: Quat| {
        let d = (a.conjugate() * b).normalize();
        2.0 * d.xyz().length().atan2(d.w.abs())
    };
    let kind = c.limits.kind(i);
    if kind == 0 {
        return 0.0;
    }
    let l = &c.limits.joints[i];
    let parent = if i == 0 { Quat::from_array(c.limits.parent_ms) } else { s.rotation(i - 1) };
    let d = Quat::from_array(l.rest).conjugate() * parent.conjugate() * s.rotation(i);
    let bone = (c.chain.rotation(i).conjugate() * (c.chain.joint(i + 1) - c.chain.joint(i))).normalize();
    let axis = Vec3::from_slice(&l.axis[..3]);
    let u = (axis - bone * axis.dot(bone)).try_normalize().unwrap_or_else(|| bone.any_orthonormal_vector());
    let r = l.range;
    if kind == limit::HINGE {
        let dir = d * bone;
        let theta = dir.dot(u.cross(bone)).atan2(dir.dot(bone));
        let clamped = theta.clamp(r[0], r[1]);
        return angle(d, Quat::from_axis_angle(u, theta)) + outside(theta, r[0], r[1]).min((theta - clamped).abs());
    }
    let d = if d.w < 0.0 { -d } else { d };
    let t = (bone * d.xyz().dot(bone)).extend(d.w);
    let twist = if t.length_squared() > 1e-12 { Quat::from_vec4(t.normalize()) } else { Quat::IDENTITY };
    let swing = d * twist.conjugate();
    let mut worst: f32 = 0.0;
    if kind & limit::TWIST != 0 && t.length() > 0.02 {
        let tau = 2.0 * twist.xyz().dot(bone).atan2(twist.w);
        worst = worst.max(outside(tau, r[2], r[3]));
    }
    if kind & limit::CONE != 0 {
        let (axis, phi) = swing.to_axis_angle();
        let phi = if phi > PI { 2.0 * PI - phi } else { phi };
        let (a, b) = (axis.dot(u) / r[0], axis.dot(bone.cross(u)) / r[1]);
        worst = worst.max(phi - 1.0 / (a * a + b * b).sqrt());
    }
    worst
}
