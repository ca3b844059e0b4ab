//! CCD (cyclic coordinate descent) with per-visit step caps and total joint limits: the CPU
//! twin of `shaders/kernels/ccd.wgsl`.
//!
//! Each iteration visits the joints from the tip's parent to the root (or root first,
//! [`option::ROOT_FIRST`]); a visit turns the joint by the shortest arc that points
//! joint→tip at joint→target, caps that turn at `params.y` radians (Unreal's per-joint
//! rotation limit), and then moves the joint's whole local rotation into its limit
//! (hinge, cone, twist; [`crate::records::ChainLimits`]), so the limits hold whatever the
//! iteration count, unlike a per-iteration cap alone. The joints below turn with it.
//! The solution is CCD's own rotations: a visit turns a joint about the axis
//! perpendicular to joint→tip and joint→target, which may roll the bones below about
//! themselves; a twist limit bounds that.

use glam::{Quat, Vec3};

use super::chain::{finish_rotations, write_fk};
use super::constrained_fabrik::{check_limited, checked, solve_limited};
use super::fabrik::FabrikMode;
use super::limits::{limit_rotation, Limit};
use super::math::{rotation_arc, sin_cos};
use crate::error::ChainError;
use crate::records::{option, v3, CcdChain, FabrikSolved, Options, MAX_FABRIK_JOINTS};

/// The option bits a CCD chain may set.
pub(crate) const OPTIONS: u32 = option::CCD;

/// Solves one CCD chain with exactly [`FabrikChain::iterations`](crate::records::FabrikChain::iterations) (what the GPU kernel runs); an
/// invalid chain gets a flagged FK fallback.
pub fn ccd(chain: &CcdChain, out: &mut FabrikSolved) {
    ccd_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`ccd`] with an explicit mode: [`FabrikMode::Converge`] stops after the iteration that
/// brings the tip within the precision (`params.x`) of the target.
pub fn ccd_with_mode(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) {
    solve_limited(chain, out, |c, o| solve(c, mode, o));
}

/// Checks one CCD chain the way [`ccd`] does: a mirrored chain ([`option::MIRRORED`]) as
/// its unmirrored twin, the chain the solver checks and solves.
pub fn validate_ccd(chain: &CcdChain) -> Result<(), ChainError> {
    check_step(&check_limited(chain, OPTIONS)?)
}

pub(crate) fn check_step(chain: &CcdChain) -> Result<(), ChainError> {
    if chain.max_step() >= 0.0 {
        Ok(())
    } else {
        Err(ChainError::InvalidParameter)
    }
}

/// A chain's per-visit cap, prepared once: the cosine and sine of half of `max_step`. A
/// turn `r` (`w ≥ 0`, so its angle is at most π) turns by more than `max_step` exactly when
/// `r.w` (the cosine of its half angle) is under `cos`; no cap (`max_step` 0, or π and
/// more, which no turn exceeds) sets `cos` to −2, under every `w`. No `atan2` and no sine
/// per visit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cap {
    pub cos: f32,
    pub sin: f32,
}

impl Cap {
    /// The cap of `max_step` radians (`≥ 0`; 0 = none).
    pub(crate) fn new(max_step: f32) -> Cap {
        if max_step > 0.0 && max_step < std::f32::consts::PI {
            let (sin, cos) = sin_cos(max_step * 0.5);
            Cap { cos, sin }
        } else {
            Cap { cos: -2.0, sin: 0.0 }
        }
    }
}

/// `r` (`w ≥ 0`) with its angle capped (the turn by the cap's angle about `r`'s axis:
/// `quat_from_axis_angle(axis, max_step)`, bit for bit).
#[inline]
pub(crate) fn cap_turn(r: Quat, cap: Cap) -> Quat {
    let v = Vec3::new(r.x, r.y, r.z);
    let s = v.length();
    if s > 0.0 && r.w < cap.cos {
        let a = v * (1.0 / s);
        return Quat::from_xyzw(a.x * cap.sin, a.y * cap.sin, a.z * cap.sin, cap.cos);
    }
    r
}

fn solve(chain: &CcdChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    check_step(chain)?;
    let (n, total) = (s.n, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let max_step = ch.params[1]; // `CcdChain::max_step`
    let root_first = ch.has_option(option::ROOT_FIRST);
    let target = v3(ch.target_ms);
    let parent_ms = Quat::from_array(chain.limits.parent_ms);
    let mut fk = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut rot = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut p = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    for i in 0..n {
        fk[i] = Quat::from_array(ch.rotations_ms[i]);
        rot[i] = fk[i];
        p[i] = v3(ch.joints_ms[i]);
    }
    let eps2 = 1e-12 * total * total;
    // Zero iterations project the FK pose onto the limits: one sweep that turns no joint
    // toward the target and only moves each into its limit.
    let project = ch.iterations() == 0;
    let sweep = Sweep { target, parent_ms, cap: Cap::new(max_step), eps2, project };
    for _ in 0..ch.iterations().max(1) {
        if root_first {
            sweep_root_first(&mut p, &mut rot, &limits, &sweep, n);
        } else {
            sweep_tip_first(&mut p, &mut rot, &limits, &sweep, n);
        }
        if mode == FabrikMode::Converge && (p[n - 1] - target).length() <= precision {
            break;
        }
    }
    let reached = (p[n - 1] - target).length() <= precision;
    finish_rotations(ch, &rot, &fk, n, total, reached, out);
    Ok(())
}

/// What every visit of one chain's sweeps shares.
struct Sweep {
    target: Vec3,
    parent_ms: Quat,
    cap: Cap,
    eps2: f32,
    /// Only move each joint into its limit (zero iterations).
    project: bool,
}

/// One visit of a joint at `pivot` whose model rotation is `current` (its parent's:
/// `parent`), the chain's tip being at `tip`: the turn that points pivot→tip at
/// pivot→target, capped, then the joint's rotation moved into its limit. Returns the
/// joint's new rotation and the turn it made. When the tip or the target is on the pivot
/// (or the sweep only projects) there is no turn toward the target, but the joint is still
/// moved into its limit, so the limits hold after every sweep whatever the geometry.
#[inline(always)]
fn visit(pivot: Vec3, tip: Vec3, current: Quat, parent: Quat, limit: &Limit, s: &Sweep) -> (Quat, Quat) {
    let to_tip = tip - pivot;
    let to_target = s.target - pivot;
    let (l_tip, l_target) = (to_tip.length_squared(), to_target.length_squared());
    let moves = !s.project && l_tip > s.eps2 && l_target > s.eps2;
    if !moves && limit.kind == 0 {
        return (current, Quat::IDENTITY);
    }
    let mut new = current;
    if moves {
        let r = cap_turn(rotation_arc(to_tip / l_tip.sqrt(), to_target / l_target.sqrt()), s.cap);
        new = (r * current).normalize();
    }
    if limit.kind != 0 {
        new = limit_rotation(parent, new, limit);
    }
    (new, (new * current.conjugate()).normalize())
}

/// One sweep from the tip's parent to the root, in O(n): a visit turns every joint below
/// it rigidly, and no later visit of the sweep looks at those joints except through the
/// tip, so the sweep tracks only the tip and then places the joints once, root first: joint
/// `k` ends turned by `C_{k−1} = turn_0 · … · turn_{k−1}` about the joint above it.
#[inline]
fn sweep_tip_first(
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    rot: &mut [Quat; MAX_FABRIK_JOINTS],
    limits: &[Limit; MAX_FABRIK_JOINTS],
    s: &Sweep,
    n: usize,
) {
    let mut turn = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut tip = p[n - 1];
    for j in (0..n - 1).rev() {
        let parent = if j == 0 { s.parent_ms } else { rot[j - 1] };
        let (new, t) = visit(p[j], tip, rot[j], parent, &limits[j], s);
        rot[j] = new;
        turn[j] = t;
        tip = p[j] + t * (tip - p[j]);
    }
    // Place the joints: C accumulates the turns above each joint. It stays off the
    // normalisations (each turn is unit, a product of at most n of them is unit to rounding):
    // a normalise per joint would put a square root and a division on the loop's critical path.
    let mut c = turn[0];
    let mut above_old = p[0];
    for k in 1..n {
        let old = p[k];
        p[k] = p[k - 1] + c * (old - above_old);
        rot[k] = (c * rot[k]).normalize();
        above_old = old;
        c *= turn[k];
    }
}

/// One sweep from the root to the tip's parent, in O(n): the joints below the visited one
/// have all turned rigidly by the composite `C` of the turns so far, so each is placed when
/// the sweep reaches it (and the tip is `C` applied to its old offset).
/// `C` stays off the normalisations, as in [`sweep_tip_first`].
#[inline]
fn sweep_root_first(
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    rot: &mut [Quat; MAX_FABRIK_JOINTS],
    limits: &[Limit; MAX_FABRIK_JOINTS],
    s: &Sweep,
    n: usize,
) {
    let mut c = Quat::IDENTITY;
    let mut above_old = p[0];
    let tip_old = p[n - 1];
    for j in 0..n - 1 {
        let old = p[j];
        if j > 0 {
            p[j] = p[j - 1] + c * (old - above_old);
        }
        let current = (c * rot[j]).normalize();
        let tip = p[j] + c * (tip_old - old);
        let parent = if j == 0 { s.parent_ms } else { rot[j - 1] };
        let (new, t) = visit(p[j], tip, current, parent, &limits[j], s);
        rot[j] = new;
        c = t * c;
        above_old = old;
    }
    p[n - 1] = p[n - 2] + c * (tip_old - above_old);
    rot[n - 1] = (c * rot[n - 1]).normalize();
}
