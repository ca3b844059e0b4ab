//! Random limited chains (constrained FABRIK, CCD and damped least squares share them):
//! the generator, reachable targets, a chain's length and its worst limit violation.

use super::Rng;
use crowd_ik::glam::Quat;
use crowd_ik::prelude::*;
use crowd_ik::MAX_FABRIK_JOINTS;
use crowd_ik_tools::limits::violation;

const PI: f32 = std::f32::consts::PI;

/// A random limited chain: 2..=16 joints, random FK rotations, a random parent rotation,
/// per joint no limit, a hinge, a cone (elliptical, with or without twist) or a twist
/// range, rest frames at the FK pose or away from it (then the FK pose is outside some
/// limits); targets within 1.3 × length, about 10 % degenerate or unreachable.
pub fn random_limited(rng: &mut Rng, iterations: u32) -> ConstrainedFabrikChain {
    let (j, r, length) = super::random_fabrik_pose(rng);
    let n = j.len();
    let target = j[0] + rng.unit() * rng.range(0.05, 1.3) * length;
    let mut chain = FabrikChain::new(&j, &r, target, iterations).with_keep_end_rotation(rng.below(2) == 0);
    if rng.below(8) == 0 {
        chain = chain.with_weight(rng.range(0.0, 1.0));
    }
    let parent = rng.quat();
    let mut limits = ChainLimits::default().with_rest_from_pose(parent, &r);
    for i in 0..n - 1 {
        let rest = if rng.below(3) == 0 {
            Quat::from_array(limits.joints[i].rest) * Quat::from_axis_angle(rng.unit(), rng.range(0.0, 1.0))
        } else {
            Quat::from_array(limits.joints[i].rest)
        };
        let bone = (r[i].conjugate() * (j[i + 1] - j[i])).normalize();
        let perp = (rng.unit() - bone * rng.unit().dot(bone)).normalize();
        limits = match rng.below(5) {
            0 => limits,
            1 => {
                let lo = rng.range(-PI, 1.0);
                limits.with_hinge(i, rest, bone.cross(perp), lo, rng.range(lo, PI))
            }
            2 => limits.with_cone(i, rest, perp, [rng.range(0.1, 1.5), rng.range(0.1, 1.5)], None),
            3 => {
                let lo = rng.range(-1.5, 0.3);
                limits.with_cone(
                    i,
                    rest,
                    perp,
                    [rng.range(0.1, 1.5), rng.range(0.1, 1.5)],
                    Some([lo, rng.range(lo, 1.5)]),
                )
            }
            _ => {
                let lo = rng.range(-1.5, 0.3);
                limits.with_twist(i, rest, lo, rng.range(lo, 1.5))
            }
        };
    }
    let mut c = ConstrainedFabrikChain::new(chain, limits);
    if rng.below(10) == 0 {
        match rng.below(6) {
            0 => c.chain.target_ms[0] = f32::NAN,
            1 => c.chain.joints_ms[1] = c.chain.joints_ms[0],
            2 => c.chain.target_ms = (j[0] + rng.unit() * length * 5.0).extend(1.0).to_array(),
            3 => c.chain.target_ms = j[0].extend(1.0).to_array(),
            4 => c.limits.joints[0].rest[1] = f32::INFINITY,
            _ => c.limits.kinds[0] |= 0x8,
        }
    }
    c
}

pub fn length(c: &FabrikChain) -> f32 {
    let n = c.joint_count().clamp(1, MAX_FABRIK_JOINTS);
    (0..n - 1).map(|i| c.joint(i).distance(c.joint(i + 1))).sum::<f32>().max(1e-3)
}

/// The worst limit violation of a solved chain (0 for an unsolved one).
pub fn worst_violation(c: &ConstrainedFabrikChain, s: &FabrikSolved) -> f32 {
    if s.error().is_some() || c.chain.target_ms[3] < 1.0 {
        return 0.0;
    }
    (0..c.chain.joint_count() - 1).map(|i| violation(c, s, i)).fold(0.0, f32::max)
}

/// 2 000 random limited chains (`random_limited`, seed 5) whose targets they reach within
/// their limits: the tip of a pose inside the limits (what two constrained-FABRIK iterations
/// toward a random target leave), 64 iterations each.
pub fn reachable_chains() -> Vec<ConstrainedFabrikChain> {
    let mut rng = Rng(5);
    let mut chains = Vec::new();
    while chains.len() < 2_000 {
        let c = random_limited(&mut rng, 0);
        if c.chain.target_ms[3] != 1.0 || crowd_ik::cpu::validate_constrained_fabrik(&c).is_err() {
            continue;
        }
        // A pose inside the limits: what a few iterations toward a random target leave.
        let n = c.chain.joint_count();
        let mut posed = c;
        posed.chain.target_ms = (c.chain.joint(0) + rng.unit() * length(&c.chain)).extend(1.0).to_array();
        posed.chain.mode[1] = 2;
        let mut s = FabrikSolved::default();
        crowd_ik::cpu::constrained_fabrik(&posed, &mut s);
        let tip = s.position(n - 1);
        if s.error().is_some() || tip.distance(c.chain.joint(0)) < 0.05 * length(&c.chain) {
            continue;
        }
        let mut reach = c;
        reach.chain.target_ms = tip.extend(1.0).to_array();
        reach.chain.mode[1] = 64;
        chains.push(reach);
    }
    chains
}
