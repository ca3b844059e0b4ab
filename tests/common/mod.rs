//! Shared test fixtures: a deterministic RNG, random chains (with a share of degenerate
//! ones), ozz-animation's parent transforms, and the independent statement of each
//! solver's `reached` contract.
#![allow(dead_code)]

pub mod crowd;
pub mod gpu;
pub mod limited;

use crowd_ik::glam::{Mat3, Quat, Vec3};
use crowd_ik::prelude::*;

/// SplitMix64: small, deterministic, good enough for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f()
    }
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % u64::from(n)) as u32
    }
    pub fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            if v.length_squared() > 0.01 && v.length_squared() <= 1.0 {
                return v.normalize();
            }
        }
    }
    pub fn quat(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.range(-3.1, 3.1))
    }
}

/// A leg-like chain: random bone lengths, a knee bent by a random angle about a hinge that
/// is perpendicular to both bones, random model rotations consistent with that hinge
/// (`r1 * mid_axis` = model hinge).
pub fn random_limb(rng: &mut Rng) -> ([Vec3; 3], [Quat; 3], Vec3) {
    let a = rng.range(0.2, 1.0);
    let b = rng.range(0.2, 1.0);
    let p0 = Vec3::new(rng.range(-1.0, 1.0), rng.range(0.5, 1.5), rng.range(-1.0, 1.0));
    let dir = rng.unit();
    let hinge = dir.any_orthonormal_vector();
    let bend = rng.range(0.05, 2.8); // exterior angle
    let p1 = p0 + dir * a;
    let p2 = p1 + Quat::from_axis_angle(hinge, bend) * dir * b;
    let r1 = rng.quat();
    let mid_axis = r1.conjugate() * hinge;
    ([p0, p1, p2], [rng.quat(), r1, rng.quat()], mid_axis)
}

/// A random reachable (|a − b| < c < a + b) target for a limb, with a margin.
pub fn reachable_target(rng: &mut Rng, j: &[Vec3; 3]) -> Vec3 {
    let a = j[0].distance(j[1]);
    let b = j[1].distance(j[2]);
    let c = rng.range((a - b).abs() + 0.02 * (a + b), 0.98 * (a + b));
    j[0] + rng.unit() * c
}

/// ozz-animation's test parents: identity, translated, rotated, uniform scale, non-uniform
/// scale, mirrored (and a combination). Linear part and translation.
pub fn parents() -> Vec<(&'static str, Mat3, Vec3)> {
    let rot = Mat3::from_quat(Quat::from_euler(crowd_ik::glam::EulerRot::XYZ, 0.4, -1.1, 2.3));
    vec![
        ("identity", Mat3::IDENTITY, Vec3::ZERO),
        ("translated", Mat3::IDENTITY, Vec3::new(1.5, -2.0, 3.0)),
        ("rotated", rot, Vec3::ZERO),
        ("uniform scale", Mat3::from_diagonal(Vec3::splat(2.5)), Vec3::ZERO),
        ("non-uniform scale", Mat3::from_diagonal(Vec3::new(0.5, 2.0, 1.3)), Vec3::ZERO),
        ("mirrored", Mat3::from_diagonal(Vec3::new(-1.0, 1.0, 1.0)), Vec3::ZERO),
        ("all", rot * Mat3::from_diagonal(Vec3::new(-1.2, 0.7, 1.6)), Vec3::new(-0.5, 1.0, 0.25)),
    ]
}

/// Applies an affine parent to a limb given by its joints and model hinge: positions and
/// target as points, the hinge as a normal (cofactor, sign kept so the bend sense is the
/// same). Rotations become identity and the hinge is passed in model space.
pub fn transform_limb(m: Mat3, t: Vec3, joints: [Vec3; 3], hinge_ms: Vec3) -> ([Vec3; 3], Vec3) {
    let j = joints.map(|p| m * p + t);
    let normal = m.inverse().transpose() * hinge_ms * m.determinant().signum();
    (j, normal.normalize())
}

/// Inner angle at the mid joint of a solved limb.
pub fn inner_angle(p0: Vec3, p1: Vec3, p2: Vec3) -> f32 {
    (p0 - p1).angle_between(p2 - p1)
}

/// The two-bone `reached` contract stated independently of the solver, or `None` when the
/// input sits within `1e-4` (relative) of a boundary where rounding decides.
pub fn two_bone_reach_contract(c: &TwoBoneChain) -> Option<bool> {
    let l = &c.limb;
    let target = l.target() - c.rotation(2) * Vec3::from_slice(&c.effector_offset[..3]);
    let a = c.joint(0).distance(c.joint(1));
    let b = c.joint(1).distance(c.joint(2));
    let d = c.joint(0).distance(target);
    let [soften, stretch, cos_min, cos_max] = l.params;
    let s = if stretch > 1.0 { stretch } else { 1.0 };
    let far = if stretch > 1.0 && d > a + b { (a + b) * s } else { (a + b) * soften };
    let near = (a - b).abs();
    let eps = 1e-4 * (a + b);
    let mut edges = vec![far, near];
    let mut ok = d <= far && d > near;
    if l.mode[2] & option::KNEE_LIMITS != 0 {
        let (lo, hi) = if stretch > 1.0 && d > a + b && d <= (a + b) * s {
            let k = d / (a + b);
            (k * k, k * k)
        } else {
            (1.0, 1.0)
        };
        let c_min = ((a * a + b * b - 2.0 * a * b * cos_min) * lo).max(0.0).sqrt();
        let c_max = ((a * a + b * b - 2.0 * a * b * cos_max) * hi).max(0.0).sqrt();
        edges.push(c_min);
        edges.push(c_max);
        ok &= d >= c_min && d <= c_max;
    }
    if edges.iter().any(|e| (d - e).abs() < eps) {
        return None;
    }
    Some(ok && l.weight() >= 1.0)
}

/// Applies local corrections down a chain the way a caller would (`local = local * c`) and
/// returns the new model rotations: checks that corrections and model output agree.
pub fn apply_corrections(fk: &[Quat], corrections: &[Quat]) -> Vec<Quat> {
    let mut out = Vec::with_capacity(fk.len());
    let mut parent_fk = Quat::IDENTITY;
    let mut parent_new = Quat::IDENTITY;
    for (r, c) in fk.iter().zip(corrections) {
        let local = parent_fk.conjugate() * *r;
        let new = parent_new * local * *c;
        out.push(new);
        parent_fk = *r;
        parent_new = new;
    }
    out
}

/// Angle between two rotations, sign-insensitive and accurate near zero
/// (`2·atan2(|xyz|, |w|)` of the relative rotation, not `acos` of a dot product).
pub fn quat_angle(a: Quat, b: Quat) -> f32 {
    let r = a.conjugate() * b;
    2.0 * r.xyz().length().atan2(r.w.abs())
}

/// A random two-bone chain over every pole mode, bend mode and parameter, with about 10 %
/// degenerate chains (straight limbs, unreachable and too-close targets, poles on the limb
/// axis, zero weight, non-finite input, zero-length bones, target on the root).
pub fn random_two_bone(rng: &mut Rng) -> TwoBoneChain {
    let (mut j, r, axis) = random_limb(rng);
    let length = j[0].distance(j[1]) + j[1].distance(j[2]);
    let mut target = j[0] + rng.unit() * rng.range(0.0, 1.3) * length;
    let degenerate = rng.below(10) == 0;
    let kind = if degenerate { rng.below(8) } else { 99 };
    if kind == 0 {
        // Straight limb.
        j[2] = j[1] + (j[1] - j[0]).normalize() * j[1].distance(j[2]);
    }
    if kind == 1 {
        target = j[0] + rng.unit() * length * rng.range(1.5, 4.0); // far out of reach
    }
    if kind == 2 {
        target = j[0] + rng.unit() * length * 1e-3; // too close
    }
    let mut c = TwoBoneChain::new(j, r, target).with_mid_axis(axis);
    c = match rng.below(4) {
        0 => c.with_fk_plane(),
        1 => c.with_pole_position(j[0] + rng.unit() * rng.range(0.2, 2.0)),
        2 => c.with_pole_direction(rng.unit()),
        _ => c.with_swivel(rng.unit(), rng.range(-3.0, 3.0)),
    };
    c = c.with_bend([BendMode::Hinge, BendMode::KeepFk, BendMode::Reversed][rng.below(3) as usize]);
    if rng.below(3) == 0 {
        c = c.with_twist(rng.range(-1.0, 1.0));
    }
    if rng.below(3) == 0 {
        c = c.with_soften(rng.range(0.5, 1.0));
    }
    if rng.below(4) == 0 {
        c = c.with_stretch(rng.range(1.0, 1.5));
    }
    if rng.below(3) == 0 {
        let lo = rng.range(0.0, 1.0);
        c = c.with_knee_limits(lo, rng.range(lo + 0.2, std::f32::consts::PI));
    }
    if rng.below(4) == 0 {
        c = c.with_effector_offset(rng.unit() * 0.05);
    }
    c = c.with_keep_end_rotation(rng.below(2) == 0);
    c = c.with_weight(match rng.below(6) {
        0 => rng.range(0.0, 1.0),
        1 => 1.5,
        _ => 1.0,
    });
    match kind {
        3 => c = c.with_pole_direction(target - j[0]), // pole on the limb axis
        4 => c = c.with_weight(0.0),
        5 => {
            let bad = [f32::NAN, f32::INFINITY][rng.below(2) as usize];
            if rng.below(2) == 0 {
                c.limb.target_ms[rng.below(3) as usize] = bad;
            } else {
                c.joints_ms[rng.below(3) as usize][rng.below(3) as usize] = bad;
                // the fallback must not pass it on
            }
        }
        6 => c.joints_ms[2] = c.joints_ms[1], // zero-length bone
        7 => c = c.with_target(j[0]),         // target on the root
        _ => {}
    }
    c
}

/// A random pseudo three-bone chain (hind-leg-like) with every option and ~10 % degenerate.
pub fn random_three_bone(rng: &mut Rng) -> ThreeBoneChain {
    let (j, r, axis) = random_limb(rng);
    let tip = j[2]
        + Quat::from_axis_angle(rng.unit(), rng.range(-1.0, 1.0)) * (j[2] - j[1]).normalize() * rng.range(0.1, 0.4);
    let rots = [r[0], r[1], r[2], rng.quat()];
    let length = j[0].distance(j[1]) + j[1].distance(j[2]) + j[2].distance(tip);
    let target = j[0] + rng.unit() * rng.range(0.2, 1.2) * length;
    let two = random_two_bone(rng); // borrow its settings (modes, limits, degenerate cases)
    let mut c = ThreeBoneChain::new([j[0], j[1], j[2], tip], rots, target).with_mid_axis(axis);
    c.limb.mode = two.limb.mode;
    c.limb.params = two.limb.params;
    c.limb.pole_ms = two.limb.pole_ms;
    c.limb.mid_axis[3] = two.limb.mid_axis[3];
    c.limb.target_ms[3] = two.limb.target_ms[3];
    if c.limb.mode[0] == PoleMode::Position as u32 {
        c.limb.pole_ms = (j[0] + rng.unit()).extend(0.0).to_array();
    }
    if !two.limb.target_ms.iter().all(|x| x.is_finite()) {
        c.limb.target_ms[1] = f32::NAN;
    }
    c = c.with_blend(if rng.below(4) == 0 { 1.0 } else { rng.f() }).with_copy_mid_rotation(rng.below(2) == 0);
    c.limb.mode[2] &= !option::KEEP_END_ROTATION;
    c
}

/// A random FABRIK chain of 2..=16 joints with ~10 % degenerate ones.
pub fn random_fabrik(rng: &mut Rng, iterations: u32) -> FabrikChain {
    let (j, r, length) = random_fabrik_pose(rng);
    let target = j[0] + rng.unit() * rng.range(0.05, 1.3) * length;
    let mut c = FabrikChain::new(&j, &r, target, iterations).with_keep_end_rotation(rng.below(2) == 0);
    if rng.below(6) == 0 {
        c = c.with_weight(rng.range(0.0, 1.0));
    }
    if rng.below(10) == 0 {
        match rng.below(5) {
            0 => c.target_ms[0] = f32::NAN,
            1 => c.joints_ms[1] = c.joints_ms[0],
            2 => c.target_ms = (j[0] + rng.unit() * length * 5.0).extend(1.0).to_array(),
            3 => c.target_ms = j[0].extend(1.0).to_array(),
            _ => c = c.with_weight(0.0),
        }
    }
    c
}

/// A random FABRIK pose: 2 to 16 joints, each bone turning a little from the one before,
/// random FK rotations. Returns the joints, the rotations and the chain's length.
pub fn random_fabrik_pose(rng: &mut Rng) -> (Vec<Vec3>, Vec<Quat>, f32) {
    let n = 2 + rng.below(15) as usize;
    let mut j = vec![Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 1.0), rng.range(-1.0, 1.0))];
    let mut dir = rng.unit();
    let mut length = 0.0;
    for _ in 1..n {
        dir = (dir + rng.unit() * 0.6).normalize();
        let l = rng.range(0.05, 0.4);
        length += l;
        j.push(*j.last().unwrap() + dir * l);
    }
    let r: Vec<Quat> = (0..n).map(|_| rng.quat()).collect();
    (j, r, length)
}

/// A FABRIK chain folded back on itself: every bone turns by `bend` (radians; 90° and 180°
/// are the cases that matter) from the one before, in a random plane, with random FK
/// rotations, and a target "straight out": along the first bone, against it or anywhere,
/// at 0.7, 0.999 or 1.5 × the chain's length. Returns the chain and its length.
pub fn folded_fabrik(rng: &mut Rng, n: usize, bend: f32, iterations: u32) -> (FabrikChain, f32) {
    let mut j = vec![Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 1.0), rng.range(-1.0, 1.0))];
    let first = rng.unit();
    let mut dir = first;
    let mut length = 0.0;
    for i in 1..n {
        if i > 1 {
            let axis = dir.cross(rng.unit()).normalize();
            dir = (Quat::from_axis_angle(axis, bend) * dir).normalize();
        }
        let l = rng.range(0.1, 0.4);
        length += l;
        j.push(*j.last().unwrap() + dir * l);
    }
    let r: Vec<Quat> = (0..n).map(|_| rng.quat()).collect();
    let toward = match rng.below(3) {
        0 => first,
        1 => -first,
        _ => rng.unit(),
    };
    let reach = [0.7, 0.999, 1.5][rng.below(3) as usize];
    let c =
        FabrikChain::new(&j, &r, j[0] + toward * reach * length, iterations).with_keep_end_rotation(rng.below(2) == 0);
    (c, length)
}

/// The largest roll component of any bone's local correction in a solved FABRIK chain: the
/// part of the correction's vector along the bone's joint-local FK direction (0 for a pure
/// swing; `sin` of half the roll otherwise).
pub fn fabrik_roll(c: &FabrikChain, s: &FabrikSolved) -> f32 {
    let n = c.joint_count();
    (0..n - 1)
        .map(|i| {
            let axis = (c.rotation(i).conjugate() * (c.joint(i + 1) - c.joint(i))).normalize();
            let q = s.correction(i);
            Vec3::new(q.x, q.y, q.z).dot(axis).abs()
        })
        .fold(0.0, f32::max)
}

/// A two-bone chain whose target is the end joint mirrored through the start joint (the
/// start joint must turn by a half turn, up to `tilt` radians), at a partial weight: the
/// chains where the way a partial weight turns rests on the hemisphere rule, not on the
/// sign of a `w` that rounding leaves at ±0.
pub fn reversed_two_bone(rng: &mut Rng, tilt: f32) -> TwoBoneChain {
    let (j, r, axis) = random_limb(rng);
    let turn = Quat::from_axis_angle(rng.unit(), rng.range(0.0, tilt));
    let target = j[0] - turn * (j[2] - j[0]);
    TwoBoneChain::new(j, r, target).with_mid_axis(axis).with_weight(rng.range(0.2, 0.8))
}

/// [`reversed_two_bone`] for the pseudo three-bone solver (its tip mirrored through the
/// start joint), blend 0.
pub fn reversed_three_bone(rng: &mut Rng, tilt: f32) -> ThreeBoneChain {
    let (j, r, axis) = random_limb(rng);
    let tip = j[2] + (j[2] - j[1]).normalize() * rng.range(0.1, 0.4);
    let turn = Quat::from_axis_angle(rng.unit(), rng.range(0.0, tilt));
    let target = j[0] - turn * (tip - j[0]);
    ThreeBoneChain::new([j[0], j[1], j[2], tip], [r[0], r[1], r[2], rng.quat()], target)
        .with_mid_axis(axis)
        .with_blend(0.0)
        .with_weight(rng.range(0.2, 0.8))
}

/// Bit patterns that break naive float code.
pub const NASTY: [u32; 16] = [
    0x7fc0_0000, // NaN
    0xffc0_0001, // negative NaN with payload
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7f7f_ffff, // f32::MAX
    0x6081_8000, // ~7.5e19
    0x60ad_78ec, // 1e20
    0x5d5e_0b6b, // 1e18
    0x0000_0001, // smallest denormal
    0x0080_0000, // smallest normal
    0x2725_3a0d, // ~2.3e-15
    0x1f80_0000, // ~5.4e-20
    0x8000_0000, // -0
    0x0000_0003, // small integer (mode words)
    0xffff_ffff, // all ones
    0x3f80_0000, // 1.0
];

/// Overwrites `count` random words of `record` with nasty or random bits or scaled copies.
pub fn corrupt<T: bytemuck::Pod>(rng: &mut Rng, record: &mut T, count: u32) {
    let words: &mut [u32] = bytemuck::cast_slice_mut(std::slice::from_mut(record));
    for _ in 0..count {
        let i = rng.below(words.len() as u32) as usize;
        words[i] = match rng.below(4) {
            0 => NASTY[rng.below(NASTY.len() as u32) as usize],
            1 => rng.next_u64() as u32,
            2 => (f32::from_bits(words[i]) * [1e12, 1e-12, -1.0, 1e20][rng.below(4) as usize]).to_bits(),
            _ => [0, 1, 2, 3, 4, 5][rng.below(6) as usize],
        };
    }
}

/// Scales the chain's positions (joints, target, pole position, end-effector offset: the
/// first `points` 16-byte fields, and those listed in `more`) by one of 1e-15, 1e-20, 1e8:
/// tiny and huge but otherwise ordinary chains.
pub fn rescale<T: bytemuck::Pod>(rng: &mut Rng, record: &mut T, points: usize, more: &[usize]) {
    let k = [1e-15_f32, 1e-20, 1e8][rng.below(3) as usize];
    let fields: &mut [[f32; 4]] = bytemuck::cast_slice_mut(std::slice::from_mut(record));
    for f in (0..points).chain(more.iter().copied()) {
        for x in &mut fields[f][..3] {
            *x *= k;
        }
    }
}

/// The sum of the distances between consecutive `joints` (the length the twins' position
/// contract is stated in), at least 1e-30 so a collapsed chain still divides; non-finite
/// distances are left out.
pub fn chain_length(joints: impl IntoIterator<Item = Vec3>) -> f32 {
    let joints: Vec<Vec3> = joints.into_iter().collect();
    joints.windows(2).map(|w| w[0].distance(w[1])).filter(|d| d.is_finite()).sum::<f32>().max(1e-30)
}

/// The reflection `x → −x` of a record's model-space fields (`points`: field indices whose
/// x is negated; `rotations`: field indices whose y and z are), as `option::MIRRORED`
/// applies it. A chain reflected this way and flagged mirrored is its original's exact
/// mirror image: its solution must be the original's, reflected, bit for bit.
pub fn reflect<T: bytemuck::Pod>(record: &T, points: &[usize], rotations: &[usize]) -> T {
    let mut r = *record;
    let fields: &mut [[f32; 4]] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut r));
    for &p in points {
        fields[p][0] = -fields[p][0];
    }
    for &q in rotations {
        fields[q][1] = -fields[q][1];
        fields[q][2] = -fields[q][2];
    }
    r
}

/// [`reflect`] of a two-bone chain (joints, target, pole; rotations), flagged mirrored.
pub fn mirrored_two_bone(c: &TwoBoneChain) -> TwoBoneChain {
    let mut m = reflect(c, &[0, 1, 2, 6, 7], &[3, 4, 5]);
    m.limb.mode[2] ^= option::MIRRORED;
    m
}

/// [`reflect`] of a pseudo three-bone chain, flagged mirrored.
pub fn mirrored_three_bone(c: &ThreeBoneChain) -> ThreeBoneChain {
    let mut m = reflect(c, &[0, 1, 2, 3, 8, 9], &[4, 5, 6, 7]);
    m.limb.mode[2] ^= option::MIRRORED;
    m
}

/// [`reflect`] of a FABRIK chain, flagged mirrored.
pub fn mirrored_fabrik(c: &FabrikChain) -> FabrikChain {
    let points: Vec<usize> = (0..16).chain([32]).collect();
    let rotations: Vec<usize> = (16..32).collect();
    let mut m = reflect(c, &points, &rotations);
    m.mode[2] ^= option::MIRRORED;
    m
}

/// A solved chain reflected: positions' x and rotations' y, z negated for the first `n`
/// joints (compare with `==`: a fallback's origin for a non-finite joint is +0 on one side
/// and −0 on the other).
pub fn reflect_solved<const N: usize>(s: &crowd_ik::SolvedChain<N>, n: usize) -> crowd_ik::SolvedChain<N> {
    let mut r = *s;
    for j in 0..n.min(N) {
        r.positions_ms[j][0] = -r.positions_ms[j][0];
        r.rotations_ms[j][1] = -r.rotations_ms[j][1];
        r.rotations_ms[j][2] = -r.rotations_ms[j][2];
    }
    r
}

/// `n` records from `make`, one in 8 rescaled ([`rescale`] with `points`/`more`), 0–3
/// words of each [`corrupt`]ed; returns them and which were corrupted.
pub fn raw_records<C: bytemuck::Pod>(
    rng: &mut Rng,
    n: usize,
    make: impl Fn(&mut Rng) -> C,
    points: usize,
    more: &[usize],
) -> (Vec<C>, Vec<bool>) {
    (0..n)
        .map(|_| {
            let mut c = make(rng);
            if rng.below(8) == 0 {
                rescale(rng, &mut c, points, more);
            }
            let k = rng.below(4);
            corrupt(rng, &mut c, k);
            (c, k > 0)
        })
        .unzip()
}

/// Runs `f` with this thread's SSE unit flushing subnormal results and inputs to zero
/// (MXCSR FTZ and DAZ), as GPUs may (NVIDIA's Vulkan driver does): the CPU twin under it
/// shows on any x86-64 machine what such a GPU makes of records whose squares or products
/// reach the subnormal range. `None` on other architectures.
pub fn with_flush_to_zero<R>(f: impl FnOnce() -> R) -> Option<R> {
    #[cfg(target_arch = "x86_64")]
    {
        fn get() -> u32 {
            let mut csr = 0u32;
            // SAFETY: stmxcsr stores the 32-bit MXCSR to the given address.
            unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack)) };
            csr
        }
        fn set(csr: u32) {
            // SAFETY: ldmxcsr loads MXCSR; only the FTZ (bit 15) and DAZ (bit 6) modes change.
            unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack)) };
        }
        let old = get();
        set(old | 0x8040);
        let r = f();
        set(old);
        Some(r)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        None
    }
}

/// Every CPU path this machine has (printed) against the scalar results `scalar` of
/// `records`, record for record and **bit for bit**: the whole batch (grouped however the
/// path groups it), then every `step`-th record alone.
pub fn assert_every_path_is_scalar<C>(what: &str, records: &[C], options: C::Options, scalar: &[C::Solved], step: usize)
where
    C: crowd_ik::cpu::Chain + std::fmt::Debug,
    C::Solved: std::fmt::Debug,
{
    let paths: Vec<CpuPath> = CpuPath::ALL.into_iter().filter(|p| p.is_available()).collect();
    eprintln!("{what}: paths on this CPU: {paths:?}");
    for path in paths {
        let mut out = vec![C::Solved::default(); records.len()];
        BatchJob::new(records, &mut out).with_options(options).with_path(path).run().unwrap();
        for (i, (a, b)) in out.iter().zip(scalar).enumerate() {
            assert!(
                bytemuck::bytes_of(a) == bytemuck::bytes_of(b),
                "{path}: {what} {i} is not bit for bit the scalar result:\n{a:?}\n{b:?}\n{:?}",
                records[i]
            );
        }
        for i in (0..records.len()).step_by(step) {
            let mut alone = [C::Solved::default()];
            BatchJob::new(&records[i..=i], &mut alone).with_options(options).with_path(path).run().unwrap();
            assert!(bytemuck::bytes_of(&alone[0]) == bytemuck::bytes_of(&scalar[i]), "{path}: {what} {i} alone");
        }
    }
}
