//! Mirrored rigs (`option::MIRRORED`): a chain whose model matrices have a negative
//! determinant, decomposed with the reflection as a negative x scale
//! (`records::mirrored_rotation`, glam's convention), solves to the same local
//! corrections as its unmirrored twin, for every pole mode and parent transform, on every
//! CPU path (the GPU against the CPU: tests/gpu.rs).

mod common;

use common::*;
use crowd_ik::cpu::CpuPath;
use crowd_ik::glam::{Mat4, Quat, Vec3};
use crowd_ik::prelude::*;
use crowd_ik::records::{mirrored_rotation, MirroredJoint};

/// Parent transforms above the chain.
fn parents() -> Vec<(&'static str, Mat4)> {
    vec![
        ("identity", Mat4::IDENTITY),
        ("translation", Mat4::from_translation(Vec3::new(1.0, 2.0, -3.0))),
        ("rotation", Mat4::from_quat(Quat::from_axis_angle(Vec3::new(0.3, 1.0, -0.2).normalize(), 1.1))),
        ("uniform scale 2", Mat4::from_scale(Vec3::splat(2.0))),
        ("non-uniform scale", Mat4::from_scale(Vec3::new(2.0, 1.0, 0.5))),
        ("negative scale x", Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0))),
        ("uniform scale -3", Mat4::from_scale(Vec3::splat(-3.0))),
    ]
}

/// Mirrors applied above everything (at the root).
fn mirrors() -> Vec<(&'static str, Mat4)> {
    vec![
        ("scale (-1, 1, 1)", Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0))),
        ("scale (1, -1, 1)", Mat4::from_scale(Vec3::new(1.0, -1.0, 1.0))),
        ("uniform -3", Mat4::from_scale(Vec3::splat(-3.0))),
    ]
}

/// A leg's local bind transforms (hip, knee, ankle, toe) with random bends.
fn leg(rng: &mut Rng) -> [Mat4; 4] {
    let bend = |rng: &mut Rng, lo: f32, hi: f32| Quat::from_axis_angle(Vec3::X, rng.range(lo, hi));
    [
        Mat4::from_rotation_translation(Quat::from_axis_angle(rng.unit(), 0.4), Vec3::new(0.1, 1.0, 0.0)),
        Mat4::from_rotation_translation(bend(rng, 0.2, 1.2), Vec3::new(0.0, -0.45, 0.0)),
        Mat4::from_rotation_translation(bend(rng, -0.5, 0.2), Vec3::new(0.0, -0.42, 0.02)),
        Mat4::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, -0.06, 0.14)),
    ]
}

/// Model matrices of the leg's joints under `world`.
fn model(world: Mat4, local: &[Mat4; 4]) -> [Mat4; 4] {
    let mut out = [Mat4::IDENTITY; 4];
    let mut m = world;
    for (o, l) in out.iter_mut().zip(local) {
        m *= *l;
        *o = m;
    }
    out
}

/// Joints and rotations from model matrices, and whether they are mirrored.
fn decompose<const N: usize>(m: &[Mat4]) -> ([Vec3; N], [Quat; N], bool) {
    let d: Vec<MirroredJoint> = m[..N].iter().map(|m| mirrored_rotation(*m)).collect();
    assert!(d.iter().all(|x| x.mirrored == d[0].mirrored), "a chain is mirrored as a whole");
    (std::array::from_fn(|i| d[i].position), std::array::from_fn(|i| d[i].rotation), d[0].mirrored)
}

/// Pole mode `mode` (FK plane, position, direction, swivel) with its point or direction
/// given in the chain's parent frame and carried to model space by `world`.
fn pole<C: LimbBuilder>(c: C, mode: u32, world: Mat4) -> C {
    match mode {
        0 => c.with_fk_plane(),
        1 => c.with_pole_position(world.transform_point3(Vec3::new(0.3, 0.6, 1.0))),
        2 => c.with_pole_direction(world.transform_vector3(Vec3::new(0.1, 0.0, 1.0))),
        _ => c.with_swivel(world.transform_vector3(Vec3::new(0.0, 0.2, 1.0)), 0.4),
    }
}

/// `c` solved in a batch of 40 copies on every CPU path this machine has (one result per
/// path).
fn on_every_path<C: Copy, S: Default + Copy>(c: C, solve: impl Fn(&[C], CpuPath, &mut [S])) -> Vec<S> {
    CpuPath::ALL
        .into_iter()
        .filter(|p| p.is_available())
        .map(|path| {
            let batch = vec![c; 40];
            let mut out = vec![S::default(); batch.len()];
            solve(&batch, path, &mut out);
            out[17]
        })
        .collect()
}

fn corrections<const N: usize>(s: &crowd_ik::SolvedChain<N>) -> [Quat; N] {
    std::array::from_fn(|i| s.correction(i))
}

fn worst(a: &[Quat], b: &[Quat]) -> f32 {
    a.iter().zip(b).map(|(a, b)| quat_angle(*a, *b)).fold(0.0, f32::max)
}

#[test]
fn mirrored_two_bone_chains_get_their_unmirrored_twins_corrections() {
    let mut rng = Rng(15);
    let mut largest = 0.0_f32;
    let mut without_flag = 0.0_f32;
    for (pname, parent) in parents() {
        for (mname, mirror) in mirrors() {
            for mode in 0..4 {
                for _ in 0..8 {
                    let local = leg(&mut rng);
                    let target_local = Vec3::new(rng.range(-0.2, 0.2), rng.range(0.2, 0.5), rng.range(-0.1, 0.3));
                    let twist = rng.range(-0.5, 0.5);
                    let offset = Vec3::new(0.0, -0.05, 0.1);
                    let solve_in = |world: Mat4, flag: Option<bool>| {
                        let (j, r, mirrored) = decompose::<3>(&model(world, &local));
                        // The offset is in model units: a scaling mirror scales it too.
                        let units = world.determinant().abs().cbrt() / parent.determinant().abs().cbrt();
                        let c = TwoBoneChain::new(j, r, world.transform_point3(target_local))
                            .with_mid_axis(Vec3::X)
                            .with_twist(twist)
                            .with_effector_offset(offset * units)
                            .with_knee_limits(0.05, 3.0)
                            .with_mirrored(flag.unwrap_or(mirrored));
                        on_every_path(pole(c, mode, world), |b, path, out: &mut [TwoBoneSolved]| {
                            TwoBoneJob::new(b, out).with_path(path).run().unwrap();
                        })
                    };
                    let plain = solve_in(parent, None);
                    let mirrored = solve_in(mirror * parent, None);
                    for (p, m) in plain.iter().zip(&mirrored) {
                        assert_eq!(p.status, m.status, "{pname} / {mname} / pole mode {mode}");
                        let diff = worst(&corrections(p), &corrections(m));
                        largest = largest.max(diff);
                        assert!(diff < 1e-4, "{pname} / {mname} / pole mode {mode}: corrections differ by {diff} rad");
                    }
                    // Without the flag, the reflection reads as a reversed hinge.
                    let unflagged = solve_in(mirror * parent, Some(false));
                    without_flag = without_flag.max(worst(&corrections(&plain[0]), &corrections(&unflagged[0])));
                }
            }
        }
    }
    eprintln!(
        "two-bone: mirrored vs unmirrored corrections within {largest:e} rad; unflagged up to {without_flag} rad"
    );
    assert!(without_flag > 0.5, "the unflagged mirrored chains should show the defect");
}

#[test]
fn mirrored_three_bone_and_fabrik_chains_get_their_unmirrored_twins_corrections() {
    let mut rng = Rng(16);
    let mut largest = (0.0_f32, 0.0_f32);
    for (pname, parent) in parents() {
        for (mname, mirror) in mirrors() {
            for _ in 0..12 {
                let local = leg(&mut rng);
                let target_local = Vec3::new(rng.range(-0.2, 0.2), rng.range(0.1, 0.4), rng.range(-0.1, 0.3));
                let blend = rng.f();
                let weight = rng.range(0.3, 1.0);
                let three = |world: Mat4| {
                    let (j, r, mirrored) = decompose::<4>(&model(world, &local));
                    let c = ThreeBoneChain::new(j, r, world.transform_point3(target_local))
                        .with_mid_axis(Vec3::X)
                        .with_blend(blend)
                        .with_weight(weight)
                        .with_mirrored(mirrored);
                    on_every_path(c, |b, path, out: &mut [ThreeBoneSolved]| {
                        ThreeBoneJob::new(b, out).with_path(path).run().unwrap();
                    })
                };
                for (p, m) in three(parent).iter().zip(&three(mirror * parent)) {
                    assert_eq!(p.status, m.status, "three-bone {pname} / {mname}");
                    let diff = worst(&corrections(p), &corrections(m));
                    largest.0 = largest.0.max(diff);
                    assert!(diff < 1e-4, "three-bone {pname} / {mname}: corrections differ by {diff} rad");
                }
                let fabrik = |world: Mat4| {
                    let (j, r, mirrored) = decompose::<4>(&model(world, &local));
                    let c = FabrikChain::new(&j, &r, world.transform_point3(target_local), 16)
                        .with_weight(weight)
                        .with_mirrored(mirrored);
                    on_every_path(c, |b, path, out: &mut [FabrikSolved]| {
                        FabrikJob::new(b, out).with_path(path).run().unwrap();
                    })
                };
                for (p, m) in fabrik(parent).iter().zip(&fabrik(mirror * parent)) {
                    assert_eq!(p.status, m.status, "fabrik {pname} / {mname}");
                    let diff = worst(&corrections(p)[..4], &corrections(m)[..4]);
                    largest.1 = largest.1.max(diff);
                    assert!(diff < 1e-4, "fabrik {pname} / {mname}: corrections differ by {diff} rad");
                }
            }
        }
    }
    eprintln!(
        "mirrored vs unmirrored corrections: three-bone within {:e} rad, FABRIK within {:e} rad",
        largest.0, largest.1
    );
}

#[test]
fn a_mirrored_chain_solved_and_reflected_back_lands_on_its_target() {
    // Positions and rotations come back in the mirrored chain's own model space: the
    // effector reaches the (mirrored) target, and rotations match the corrections.
    let mut rng = Rng(17);
    for _ in 0..200 {
        let local = leg(&mut rng);
        let world = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)) * Mat4::from_quat(rng.quat());
        let (j, r, mirrored) = decompose::<3>(&model(world, &local));
        assert!(mirrored);
        let target = world.transform_point3(Vec3::new(rng.range(-0.2, 0.2), rng.range(0.3, 0.5), rng.range(0.0, 0.2)));
        let c = TwoBoneChain::new(j, r, target).with_mid_axis(Vec3::X).with_mirrored(true);
        let mut s = TwoBoneSolved::default();
        crowd_ik::cpu::two_bone(&c, &mut s);
        assert_eq!(s.error(), None);
        assert!(s.reached(), "{c:?}");
        assert!(s.position(2).distance(target) < 1e-5, "{} vs {target}", s.position(2));
        assert!(s.position(0).distance(j[0]) < 1e-6);
        // The root's new model matrix is `M·C` (C its local correction): with `M = R·P·S`
        // its rotation part is `R·(P·C·P)`.
        let c0 = s.correction(0);
        let reflected = Quat::from_xyzw(c0.x, -c0.y, -c0.z, c0.w);
        assert!(quat_angle(s.rotation(0), r[0] * reflected) < 1e-5, "{:?}", s.rotation(0));
    }
}
