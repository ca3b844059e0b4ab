//! Deterministic benchmark workloads, so every benchmark (criterion, `examples/bench`, your
//! own) measures the same inputs: leg-like chains with about 10 % unreachable or
//! near-singular targets (too far, too close, nearly straight limbs).

use crowd_ik::glam::{Quat, Vec3};

use crowd_ik::records::{FabrikChain, LimbBuilder, ThreeBoneChain, TwoBoneChain};

/// SplitMix64: tiny deterministic generator for workloads.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    /// Uniform unit vector.
    pub fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            let l2 = v.length_squared();
            if l2 > 0.01 && l2 <= 1.0 {
                return v / l2.sqrt();
            }
        }
    }
    /// A random rotation (a random axis, an angle in `[−3.1, 3.1)`).
    pub fn quat(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.range(-3.1, 3.1))
    }
}

fn leg(rng: &mut Rng) -> ([Vec3; 3], [Quat; 3], Vec3) {
    let hip = Vec3::new(rng.range(-0.2, 0.2), rng.range(0.85, 1.0), rng.range(-0.1, 0.1));
    let thigh = rng.range(0.38, 0.46);
    let shin = rng.range(0.38, 0.46);
    let bend = rng.range(0.05, 0.9);
    let knee = hip + Vec3::new(0.0, -thigh * (bend * 0.5).cos(), thigh * (bend * 0.5).sin());
    let ankle = knee + Vec3::new(0.0, -shin * (bend * 0.5).cos(), -shin * (bend * 0.5).sin());
    let r = [Quat::from_rotation_x(-0.3 * bend), Quat::from_rotation_x(0.4 * bend), Quat::IDENTITY];
    // Knee forward (+Z), leg down: hinge −X in model space, expressed in the knee's frame.
    (([hip, knee, ankle]), r, r[1].conjugate() * -Vec3::X)
}

fn target_for(rng: &mut Rng, start: Vec3, end: Vec3, length: f32, i: usize) -> Vec3 {
    match i % 20 {
        0 => start + rng.unit() * length * rng.range(1.1, 2.0), // too far
        1 => start + rng.unit() * length * 0.01,                // too close
        _ => end + Vec3::new(rng.range(-0.1, 0.1), rng.range(-0.15, 0.25), rng.range(-0.1, 0.1)),
    }
}

/// `n` two-bone legs with pole directions and knee limits, about 10 % out of reach.
#[must_use]
pub fn two_bone(n: usize, seed: u64) -> Vec<TwoBoneChain> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let (j, r, axis) = leg(&mut rng);
            let length = j[0].distance(j[1]) + j[1].distance(j[2]);
            let target = target_for(&mut rng, j[0], j[2], length, i);
            TwoBoneChain::new(j, r, target)
                .with_mid_axis(axis)
                .with_pole_direction(Vec3::new(rng.range(-0.2, 0.2), 0.0, 1.0))
                .with_knee_limits(0.05, 3.05)
        })
        .collect()
}

/// `n` quadruped hind legs (pseudo three-bone), blend ratio 0.5, about 10 % out of reach.
#[must_use]
pub fn three_bone(n: usize, seed: u64) -> Vec<ThreeBoneChain> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let (j, r, axis) = leg(&mut rng);
            let hoof = j[2] + Vec3::new(0.0, -0.15, 0.05);
            let length = j[0].distance(j[1]) + j[1].distance(j[2]) + j[2].distance(hoof);
            let target = target_for(&mut rng, j[0], hoof, length, i);
            ThreeBoneChain::new([j[0], j[1], j[2], hoof], [r[0], r[1], r[2], Quat::IDENTITY], target)
                .with_mid_axis(axis)
                .with_pole_direction(Vec3::Z)
                .with_blend(0.5)
        })
        .collect()
}

/// `n` FABRIK chains (tails, tentacles) of `joints` joints running `iterations` fixed
/// iterations, about 10 % out of reach.
#[must_use]
pub fn fabrik(n: usize, joints: usize, iterations: u32, seed: u64) -> Vec<FabrikChain> {
    let mut rng = Rng::new(seed);
    let rotations = vec![Quat::IDENTITY; joints];
    (0..n)
        .map(|i| {
            let mut p = vec![Vec3::new(rng.range(-0.2, 0.2), 1.0, 0.0)];
            let mut dir = Vec3::NEG_Z;
            for _ in 1..joints {
                dir = (dir + rng.unit() * 0.3).normalize();
                p.push(*p.last().unwrap() + dir * rng.range(0.08, 0.12));
            }
            let length: f32 = p.windows(2).map(|w| w[0].distance(w[1])).sum();
            let target = target_for(&mut rng, p[0], p[joints - 1], length, i);
            FabrikChain::new(&p, &rotations, target, iterations)
        })
        .collect()
}

/// [`fabrik`]'s chains with joint limits (rest = the FK pose): even joints a swing cone of
/// 0.8 × 0.5 rad and a twist range of ±0.5 rad, odd joints a hinge about model X (across the
/// chain) within ±1.2 rad; the last joint unlimited. The benchmark of limited FABRIK and CCD.
pub fn limited(n: usize, joints: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::ConstrainedFabrikChain> {
    let rest = vec![Quat::IDENTITY; joints];
    let mut limits = crowd_ik::ChainLimits::default().with_rest_from_pose(Quat::IDENTITY, &rest);
    for i in 0..joints - 1 {
        limits = if i % 2 == 0 {
            limits.with_cone(i, Quat::IDENTITY, Vec3::X, [0.8, 0.5], Some([-0.5, 0.5]))
        } else {
            limits.with_hinge(i, Quat::IDENTITY, Vec3::X, -1.2, 1.2)
        };
    }
    fabrik(n, joints, iterations, seed).into_iter().map(|c| crowd_ik::ConstrainedFabrikChain::new(c, limits)).collect()
}

/// [`limited`]'s chains with targets their limits let them reach: where a pose inside the
/// limits puts the tip (two constrained-FABRIK iterations toward a random target within the
/// chain's length), precision 1e-4 × length. The reach benchmark of the limited solvers.
#[must_use]
pub fn limited_reachable(n: usize, joints: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::ConstrainedFabrikChain> {
    let mut rng = Rng::new(seed ^ 0x5eed);
    limited(n, joints, iterations, seed)
        .into_iter()
        .map(|mut c| {
            let len: f32 = (0..joints - 1).map(|i| c.chain.joint(i).distance(c.chain.joint(i + 1))).sum();
            let mut posed = c;
            posed.chain.target_ms = (c.chain.joint(0) + rng.unit() * len * rng.range(0.3, 1.0)).extend(1.0).to_array();
            posed.chain.mode[1] = 2;
            let mut s = crowd_ik::FabrikSolved::default();
            crowd_ik::cpu::constrained_fabrik(&posed, &mut s);
            c.chain.target_ms = s.position(joints - 1).extend(1.0).to_array();
            c.chain.params[0] = 1e-4 * len;
            c
        })
        .collect()
}

/// The crowd foot-IK frame of the benchmarks (`examples/bench`, `examples/frame_cost`):
/// 200 m of hills (0.5 m cells) and the biped rig; with `placement`, foot placement across
/// frames on, plants detected by the FK foot's speed (0.5 m/s in, 0.8 m/s out). Walkers:
/// [`crate::scene::WalkingCrowd::new`]`(n, 90.0, 1)`.
pub fn crowd_frame(placement: bool) -> (crowd_ik::crowd::Heightfield, crowd_ik::crowd::FootRig) {
    use crowd_ik::crowd::{FootPlacement, PlantDetection};
    let terrain = crate::terrain::hills(crowd_ik::glam::Vec2::new(-100.0, -100.0), 0.5, 401, 401, 0.8);
    let mut rig = crate::scene::biped_rig();
    if placement {
        let mut p = FootPlacement::default();
        for leg in &mut p.legs {
            leg.plant = PlantDetection::Speed { enter: 0.5, exit: 0.8 };
        }
        rig = rig.with_placement(Some(p));
    }
    (terrain, rig)
}

/// The setup of the instruction-count examples (`examples/frame_cost`, `examples/cpu_cost`):
/// the arguments `stateless|placement CHARACTERS FRAMES` and the bench's crowd frame
/// ([`crowd_frame`]) with its walkers at their first frame.
pub struct CostRun {
    /// Foot placement across frames (`placement`) or the stateless frame.
    pub placement: bool,
    /// Characters.
    pub n: usize,
    /// Frames to run after the first ones.
    pub k: usize,
    /// The terrain.
    pub terrain: crowd_ik::crowd::Heightfield,
    /// The same terrain as the solvers' ground.
    pub ground: crowd_ik::crowd::Ground,
    /// The biped rig, with foot placement or without.
    pub rig: crowd_ik::crowd::FootRig,
    /// The walkers.
    pub walkers: crate::scene::WalkingCrowd,
    /// The walkers' characters at the current frame.
    pub chars: Vec<crowd_ik::crowd::CharacterInput>,
    /// Their FK poses at the current frame.
    pub poses: Vec<crowd_ik::crowd::JointPose>,
}

impl CostRun {
    /// Reads `stateless|placement CHARACTERS FRAMES [once] [ankle]` from the command line
    /// (`program` names the usage line) and builds the scene: `once` measures the ground
    /// under each foot once (`SoleMeasure::Once`), `ankle` locks the ankle
    /// (`LockPivot::Foot`) rather than the sole's lower end.
    ///
    /// # Errors
    /// A usage message when the arguments are not those.
    pub fn from_args(program: &str) -> Result<Self, String> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let usage = || format!("usage: {program} stateless|placement CHARACTERS FRAMES [once] [ankle]");
        let [mode, n, k, options @ ..] = args.as_slice() else { return Err(usage()) };
        if options.iter().any(|o| o != "once" && o != "ankle") {
            return Err(usage());
        }
        let (once, ankle) = (options.iter().any(|o| o == "once"), options.iter().any(|o| o == "ankle"));
        let placement = match mode.as_str() {
            "stateless" => false,
            "placement" => true,
            _ => return Err(format!("unknown mode {mode}; {}", usage())),
        };
        let (Ok(n), Ok(k)) = (n.parse(), k.parse()) else { return Err(usage()) };
        let (terrain, mut rig) = crowd_frame(placement);
        if once {
            rig = rig.with_sole_measure(crowd_ik::crowd::SoleMeasure::Once);
        }
        if let (true, Some(mut p)) = (ankle, rig.placement) {
            for leg in &mut p.legs {
                leg.pivot = crowd_ik::crowd::LockPivot::Foot;
            }
            rig = rig.with_placement(Some(p));
        }
        let ground = crowd_ik::crowd::Ground::Heightfield(terrain.clone());
        let walkers = crate::scene::WalkingCrowd::new(n, 90.0, 1);
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        walkers.frame(&terrain, &mut chars, &mut poses);
        Ok(CostRun { placement, n, k, terrain, ground, rig, walkers, chars, poses })
    }

    /// The walkers `dt` seconds on: their characters and poses for the next frame.
    pub fn step(&mut self, dt: f32) {
        self.walkers.step(dt);
        self.walkers.frame(&self.terrain, &mut self.chars, &mut self.poses);
    }
}

/// A quadruped as a joint tree: hips (root), three spine joints, and four legs of four
/// joints (hip offset, knee, hock, hoof) off the hips and the chest. Parents and offsets
/// in the parent's frame (model axes: +Y up, +Z forward); effectors on the four hooves.
#[must_use]
pub fn quadruped_tree() -> (Vec<usize>, Vec<Vec3>, Vec<usize>) {
    let mut parents = vec![0, 0, 1, 2];
    let mut offsets = vec![Vec3::ZERO, Vec3::Z * 0.3, Vec3::Z * 0.3, Vec3::Z * 0.2];
    let mut hooves = vec![];
    for (root, side) in [(0, 1.0), (0, -1.0), (3, 1.0), (3, -1.0)] {
        let first = parents.len();
        parents.extend([root, first, first + 1, first + 2]);
        offsets.extend([
            Vec3::new(0.15 * side, -0.05, 0.0),
            Vec3::NEG_Y * 0.3,
            Vec3::new(0.0, -0.3, 0.05),
            Vec3::NEG_Y * 0.2,
        ]);
        hooves.push(first + 3);
    }
    (parents, offsets, hooves)
}

/// `n` quadruped trees ([`quadruped_tree`]) in random poses (every joint turned up to
/// 0.5 rad), each hoof pulled toward a point near it (within 10 cm; one tree in 10 has a
/// hoof target out of reach), `iterations` fixed iterations. The multi-effector benchmark.
#[must_use]
pub fn multi_fabrik(n: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::MultiFabrikChain> {
    let mut rng = Rng::new(seed);
    let (parents, offsets, hooves) = quadruped_tree();
    (0..n)
        .map(|i| {
            let root = Vec3::new(rng.range(-50.0, 50.0), 0.9, rng.range(-50.0, 50.0));
            let (mut p, mut r) = (vec![root], vec![Quat::from_rotation_y(rng.range(-3.0, 3.0))]);
            for j in 1..parents.len() {
                let par = parents[j];
                p.push(p[par] + r[par] * offsets[j]);
                r.push((r[par] * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.5))).normalize());
            }
            let mut c = crowd_ik::MultiFabrikChain::new(&p, &r, &parents, iterations);
            for (k, &h) in hooves.iter().enumerate() {
                let target = if i % 10 == 0 && k == 0 {
                    root + rng.unit() * 3.0
                } else {
                    p[h] + rng.unit() * rng.range(0.0, 0.1)
                };
                c = c.with_effector(h, target, 1.0);
            }
            c
        })
        .collect()
}

/// `n` look-at records for a crowd: neck (weight 0.4), head and two eyes (forward +Z, up
/// +Y), every joint limited (neck and head ±70° yaw, −40°..+50° pitch; eyes ±35°, ±25°;
/// rest = the FK pose), rolled toward an up target above the head; the point of interest
/// anywhere within 10 m, so about half the heads hit a limit.
#[must_use]
pub fn look_at(n: usize, seed: u64) -> Vec<crowd_ik::LookAtChain> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let body = Quat::from_rotation_y(rng.range(-3.0, 3.0));
            let neck = Vec3::new(rng.range(-50.0, 50.0), 1.5, rng.range(-50.0, 50.0));
            let r = |rng: &mut Rng| (body * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 0.2))).normalize();
            let (rn, rh, rl, rr) = (r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng));
            let head = neck + rn * Vec3::new(0.0, 0.12, 0.02);
            let eye_l = head + rh * Vec3::new(0.03, 0.08, 0.09);
            let eye_r = head + rh * Vec3::new(-0.03, 0.08, 0.09);
            let target = neck + rng.unit() * rng.range(0.5, 10.0);
            let (big_yaw, big_pitch) = ([-1.22, 1.22], [-0.7, 0.87]);
            let (eye_yaw, eye_pitch) = ([-0.61, 0.61], [-0.44, 0.44]);
            crowd_ik::LookAtChain::new(target)
                .with_parent(body)
                .with_joint(None, neck, rn, Vec3::Z, Vec3::Y, 0.4)
                .with_joint(Some(0), head, rh, Vec3::Z, Vec3::Y, 1.0)
                .with_joint(Some(1), eye_l, rl, Vec3::Z, Vec3::Y, 1.0)
                .with_joint(Some(1), eye_r, rr, Vec3::Z, Vec3::Y, 1.0)
                .with_limits(0, Quat::IDENTITY, big_yaw, big_pitch)
                .with_limits(1, Quat::IDENTITY, big_yaw, big_pitch)
                .with_limits(2, Quat::IDENTITY, eye_yaw, eye_pitch)
                .with_limits(3, Quat::IDENTITY, eye_yaw, eye_pitch)
                .with_rest_from_pose()
                .with_up_target(Some(head + Vec3::Y * 10.0))
        })
        .collect()
}

/// The limits of the arms of [`dls_arm`], in the frame of the arm's FK rotation `q` (the
/// upper arm along +X): the shoulder's swing cone about +Y/+Z and its twist about +X, the
/// elbow's hinge (about −Y, bending toward +Z) and the wrist's elliptical cone (about +Y
/// and the forearm × +Y) and twist about the forearm. Radians.
pub mod arm_limits {
    /// The shoulder's swing cone half-angle (both axes).
    pub const SHOULDER_SWING: f32 = 1.5;
    /// The shoulder's twist range, ±.
    pub const SHOULDER_TWIST: f32 = 1.5;
    /// The elbow hinge's range, from the FK pose.
    pub const ELBOW: [f32; 2] = [0.0, 2.5];
    /// The wrist cone's half-angles about +Y and about the forearm × +Y.
    pub const WRIST_SWING: [f32; 2] = [1.2, 0.5];
    /// The wrist's twist range, ±.
    pub const WRIST_TWIST: f32 = 1.0;
}

/// A 7-degree-of-freedom arm as a damped-least-squares record: a shoulder with a swing cone
/// (86°) and a twist range (±86°), an elbow hinge bending one way (0..143°), a wrist with an
/// elliptical cone (69° × 29°) and a twist range (±57°), and the hand's end (four joints);
/// a random FK pose (the elbow bent 10–90°) under a random rotation, with a target where a
/// random pose inside the limits puts the hand's end, that pose's hand rotation as the
/// orientation target (weight 0.2 m per radian), precision 1e-4 × length, `iterations` per
/// start. Every target is reachable within the limits.
pub fn dls_arm(rng: &mut Rng, iterations: u32) -> crowd_ik::DlsChain {
    use arm_limits::{ELBOW, SHOULDER_SWING, SHOULDER_TWIST, WRIST_SWING, WRIST_TWIST};
    let q = rng.quat();
    let (upper, fore, hand) = (rng.range(0.2, 0.35), rng.range(0.2, 0.3), rng.range(0.07, 0.1));
    let bend = rng.range(10f32, 90.0).to_radians();
    let s = Vec3::new(rng.range(-1.0, 1.0), 1.4, rng.range(-1.0, 1.0));
    let fore_fk = Vec3::new(bend.cos(), 0.0, bend.sin());
    let j1 = s + q * Vec3::X * upper;
    let j2 = j1 + q * fore_fk * fore;
    let j = [s, j1, j2, j2 + q * fore_fk * hand];
    let r = [q; 4];
    let limits = crowd_ik::ChainLimits::default()
        .with_rest_from_pose(q, &r)
        .with_cone(0, Quat::IDENTITY, Vec3::Y, [SHOULDER_SWING; 2], Some([-SHOULDER_TWIST, SHOULDER_TWIST]))
        .with_hinge(1, Quat::IDENTITY, -Vec3::Y, ELBOW[0], ELBOW[1])
        .with_cone(2, Quat::IDENTITY, Vec3::Y, WRIST_SWING, Some([-WRIST_TWIST, WRIST_TWIST]));
    // A pose inside the limits.
    let t = rng.range(0.0, std::f32::consts::TAU);
    let swing =
        Quat::from_scaled_axis((Vec3::Y * t.cos() + Vec3::Z * t.sin()) * SHOULDER_SWING * rng.range(0.0, 1.0).sqrt());
    let r0 = q * swing * Quat::from_axis_angle(Vec3::X, rng.range(-SHOULDER_TWIST, SHOULDER_TWIST));
    let r1 = r0 * Quat::from_axis_angle(-Vec3::Y, rng.range(ELBOW[0], ELBOW[1]));
    let (u, v) = (Vec3::Y, fore_fk.cross(Vec3::Y));
    let t = rng.range(0.0, std::f32::consts::TAU);
    let k = rng.range(0.0, 1.0).sqrt();
    let wrist = Quat::from_scaled_axis(u * (WRIST_SWING[0] * k * t.cos()) + v * (WRIST_SWING[1] * k * t.sin()));
    let r2 = r1 * wrist * Quat::from_axis_angle(fore_fk, rng.range(-WRIST_TWIST, WRIST_TWIST));
    let target = s + r0 * Vec3::X * upper + r1 * fore_fk * fore + r2 * fore_fk * hand;
    let len = upper + fore + hand;
    let chain = FabrikChain::new(&j, &r, target, iterations).with_precision(1e-4 * len);
    crowd_ik::DlsChain::new(chain, limits).with_orientation_target(r2, 0.2)
}

/// `n` arms of [`dls_arm`] from `seed`.
#[must_use]
pub fn dls_arms(n: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::DlsChain> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| dls_arm(&mut rng, iterations)).collect()
}

/// A joint tree with a limit on every joint that has children, in a neutral pose where every
/// joint's rotation is the identity (model axes: +Y up, +Z forward, +X the character's
/// left), for damped least squares on trees ([`crowd_ik::DlsTree`]).
#[derive(Clone, Debug)]
pub struct LimitedTree {
    /// Each joint's parent (joint 0's ignored).
    pub parents: Vec<usize>,
    /// Each joint's offset from its parent in the neutral pose.
    pub offsets: Vec<Vec3>,
    /// Each joint's limit: [`crowd_ik::records::limit`] bits (0 = none), axis, range; the
    /// rest is the neutral pose.
    pub limits: Vec<(u32, Vec3, [f32; 4])>,
    /// The effectors' joints and their orientation weights (0 = position only).
    pub effectors: Vec<(usize, f32)>,
    /// How far the root may move along each axis (zero = it stays).
    pub root_reach: Vec3,
    /// How far the root turns in a random pose (radians; it has no limit).
    pub root_turn: f32,
    /// Whether the root keeps its rotation ([`crowd_ik::records::option::KEEP_ROOT_ROTATION`]).
    pub keep_root: bool,
}

/// A humanoid upper body: pelvis (root, kept), spine, chest, neck and head, and two arms of
/// clavicle, shoulder, elbow and hand off the chest: 13 joints (the multi-effector tests'
/// skeleton). Spine and chest cones of 20° with ±20° twist, a neck of 40° × 29° with ±57°,
/// clavicles of 17° with ±11°, shoulders of 75° with ±69° twist, elbows hinged one way
/// (0–138°). Effectors: both hands and the head, each with an orientation (0.1 m per
/// radian).
#[must_use]
pub fn upper_body_tree() -> LimitedTree {
    use crowd_ik::records::limit::{CONE, HINGE, TWIST};
    let ball = |cone: [f32; 2], twist: f32, axis: Vec3| (CONE | TWIST, axis, [cone[0], cone[1], -twist, twist]);
    let mut parents = vec![0, 0, 1, 2, 3];
    let mut offsets = vec![Vec3::ZERO, Vec3::Y * 0.15, Vec3::Y * 0.15, Vec3::Y * 0.2, Vec3::Y * 0.1];
    let mut limits = vec![
        (0, Vec3::ZERO, [0.0; 4]),
        ball([0.35, 0.35], 0.35, Vec3::X),
        ball([0.35, 0.35], 0.35, Vec3::X),
        ball([0.7, 0.5], 1.0, Vec3::X),
        (0, Vec3::ZERO, [0.0; 4]),
    ];
    for side in [1.0, -1.0] {
        let first = parents.len();
        parents.extend([2, first, first + 1, first + 2]);
        offsets.extend([
            Vec3::new(0.05 * side, 0.15, 0.0),
            Vec3::X * 0.15 * side,
            Vec3::X * 0.28 * side,
            Vec3::X * 0.25 * side,
        ]);
        limits.extend([
            ball([0.3, 0.3], 0.2, Vec3::Y),
            ball([1.3, 1.3], 1.2, Vec3::Y),
            (HINGE, -Vec3::Y * side, [0.0, 2.4, 0.0, 0.0]),
            (0, Vec3::ZERO, [0.0; 4]),
        ]);
    }
    LimitedTree {
        parents,
        offsets,
        limits,
        effectors: vec![(8, 0.1), (12, 0.1), (4, 0.1)],
        root_reach: Vec3::ZERO,
        root_turn: 0.0,
        keep_root: true,
    }
}

/// The quadruped of [`quadruped_tree`] with limits: spine joints of 17° cones with ±11°
/// twist, hips of 34° × 23° with ±17° twist, knees and hocks hinged about the left axis
/// (−69°..+11° and −11°..+69°); a pelvis (the root, no limit) that turns and moves up to
/// 10 cm sideways and forward and 15 cm up or down. Effectors: the four hooves, positions
/// only.
#[must_use]
pub fn quadruped_limited_tree() -> LimitedTree {
    use crowd_ik::records::limit::{CONE, HINGE, TWIST};
    let (parents, offsets, hooves) = quadruped_tree();
    let mut limits = vec![(0, Vec3::ZERO, [0.0; 4]); parents.len()];
    for l in &mut limits[1..4] {
        *l = (CONE | TWIST, Vec3::X, [0.3, 0.3, -0.2, 0.2]);
    }
    for &h in &hooves {
        limits[h - 3] = (CONE | TWIST, Vec3::X, [0.6, 0.4, -0.3, 0.3]);
        limits[h - 2] = (HINGE, Vec3::X, [-1.2, 0.2, 0.0, 0.0]);
        limits[h - 1] = (HINGE, Vec3::X, [-0.2, 1.2, 0.0, 0.0]);
    }
    LimitedTree {
        parents,
        offsets,
        limits,
        effectors: hooves.iter().map(|&h| (h, 0.0)).collect(),
        root_reach: Vec3::new(0.1, 0.15, 0.1),
        root_turn: 0.3,
        keep_root: false,
    }
}

impl LimitedTree {
    /// Joint `i`'s bone in the neutral pose: the offset of its first (lowest-numbered) child.
    fn bone(&self, i: usize) -> Option<Vec3> {
        (i + 1..self.parents.len()).find(|&c| self.parents[c] == i).map(|c| self.offsets[c])
    }

    /// Local rotations inside the limits: each ball joint's swing within `share` of its
    /// cone and its twist within its range, each hinge within its range; the root turned up
    /// to `root_turn` (none if it keeps its rotation).
    pub fn random_locals(&self, rng: &mut Rng, share: f32) -> Vec<Quat> {
        use crowd_ik::records::limit::{CONE, HINGE};
        (0..self.parents.len())
            .map(|i| {
                let (kind, axis, r) = self.limits[i];
                if i == 0 {
                    let turn = if self.keep_root { 0.0 } else { self.root_turn };
                    return Quat::from_axis_angle(rng.unit(), rng.range(0.0, turn));
                }
                let Some(bone) = self.bone(i) else { return Quat::IDENTITY };
                let b = bone.normalize();
                let u = (axis - b * axis.dot(b)).normalize();
                if kind & HINGE != 0 {
                    return Quat::from_axis_angle(u, rng.range(r[0], r[1]));
                }
                if kind & CONE == 0 {
                    return Quat::IDENTITY;
                }
                let v = b.cross(u);
                let t = rng.range(0.0, std::f32::consts::TAU);
                let k = rng.range(0.0, 1.0).sqrt() * share;
                let swing = Quat::from_scaled_axis(u * (r[0] * k * t.cos()) + v * (r[1] * k * t.sin()));
                swing * Quat::from_axis_angle(b, rng.range(r[2], r[3]))
            })
            .collect()
    }

    /// The model-space pose of local rotations `locals`, the root at `root` under `body`.
    #[must_use]
    pub fn pose(&self, root: Vec3, body: Quat, locals: &[Quat]) -> (Vec<Vec3>, Vec<Quat>) {
        let (mut p, mut r) = (vec![root], vec![(body * locals[0]).normalize()]);
        for (j, local) in locals.iter().enumerate().skip(1) {
            let par = self.parents[j];
            p.push(p[par] + r[par] * self.offsets[j]);
            r.push((r[par] * *local).normalize());
        }
        (p, r)
    }

    /// The tree's limits with the body's rotation `body` as the root's parent.
    #[must_use]
    pub fn tree_limits(&self, body: Quat) -> crowd_ik::TreeLimits {
        let mut l = crowd_ik::TreeLimits::default().with_parent(body);
        for (i, &(kind, axis, range)) in self.limits.iter().enumerate() {
            if kind != 0 {
                l = l.with_joint(i, kind, Quat::IDENTITY, axis, range);
            }
        }
        l
    }

    /// A record: the tree in a random pose inside its limits under a random body rotation,
    /// each effector's target where another random pose inside the limits puts it (the
    /// root moved within its box and turned), with that pose's rotation as the
    /// orientation target where the effector has a weight; precision 1e-4 m, `iterations`
    /// per start. Every target is reachable within the limits.
    pub fn record(&self, rng: &mut Rng, iterations: u32) -> crowd_ik::DlsTree {
        let body = rng.quat();
        let root = Vec3::new(rng.range(-20.0, 20.0), rng.range(0.5, 1.5), rng.range(-20.0, 20.0));
        let fk_locals = self.random_locals(rng, 0.9);
        let goal_locals = self.random_locals(rng, 1.0);
        let (p, r) = self.pose(root, body, &fk_locals);
        let shift = self.root_reach * Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        let (gp, gr) = self.pose(root + shift, body, &goal_locals);
        let mut tree = crowd_ik::MultiFabrikChain::new(&p, &r, &self.parents, iterations)
            .with_precision(1e-4)
            .with_keep_root_rotation(self.keep_root);
        for &(e, _) in &self.effectors {
            tree = tree.with_effector(e, gp[e], 1.0);
        }
        let mut rec = crowd_ik::DlsTree::new(tree, self.tree_limits(body));
        for (k, &(e, w)) in self.effectors.iter().enumerate() {
            if w > 0.0 {
                rec = rec.with_orientation_target(k, gr[e], w);
            }
        }
        if self.root_reach != Vec3::ZERO {
            rec = rec.with_root_translation(self.root_reach, 0.0);
        }
        rec
    }
}

/// `n` upper bodies of [`upper_body_tree`] ([`LimitedTree::record`]) from `seed`.
#[must_use]
pub fn dls_upper_bodies(n: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::DlsTree> {
    let (tree, mut rng) = (upper_body_tree(), Rng::new(seed));
    (0..n).map(|_| tree.record(&mut rng, iterations)).collect()
}

/// `n` quadrupeds of [`quadruped_limited_tree`] ([`LimitedTree::record`]) from `seed`.
#[must_use]
pub fn dls_quadrupeds(n: usize, iterations: u32, seed: u64) -> Vec<crowd_ik::DlsTree> {
    let (tree, mut rng) = (quadruped_limited_tree(), Rng::new(seed));
    (0..n).map(|_| tree.record(&mut rng, iterations)).collect()
}
