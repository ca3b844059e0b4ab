//! Constrained FABRIK: FABRIK with joint limits (hinge, swing cone, twist), the CPU twin of
//! `shaders/kernels/constrained_fabrik.wgsl`.
//!
//! Each iteration runs the usual free backward pass (tip on the target, walk to the root)
//! and then a *limited* forward pass: from the root down, each bone turns toward the
//! direction the backward pass left it (shortest arc in its parent's already final frame,
//! so no roll), and that rotation is moved into the joint's limit before the next bone is
//! placed. The rotations of the last forward pass are the solution, so the limits hold at
//! the end whatever the iteration count; zero iterations project the FK pose onto the
//! limits.

use glam::{Quat, Vec3};

use super::chain::{finish_chain, solve_or_fk, write_fk};
use super::fabrik::{backward_pass, setup_chain, FabrikMode};
use super::limits::{forward_joint, limit_relative, setup_limits, Limit};
use super::math::{normalize_or, quat_from_axis_cos_sin};
use crate::constants::LIMIT_HINGE;
use crate::error::ChainError;
use crate::records::{
    info, option, v3, CcdChain, ChainLimits, ConstrainedFabrikChain, DlsChain, FabrikChain, FabrikSolved, Options,
    MAX_FABRIK_JOINTS,
};

/// The option bits a constrained chain may set.
pub(crate) const OPTIONS: u32 = option::CONSTRAINED_FABRIK;

/// Solves one constrained chain in [`FabrikMode::Fixed`] mode; an invalid chain gets a
/// flagged FK fallback. Same contract as [`super::fabrik()`], plus: at weight 1 every joint
/// ends inside its limit.
pub fn constrained_fabrik(chain: &ConstrainedFabrikChain, out: &mut FabrikSolved) {
    constrained_fabrik_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`constrained_fabrik`] with an explicit [`FabrikMode`].
pub fn constrained_fabrik_with_mode(chain: &ConstrainedFabrikChain, mode: FabrikMode, out: &mut FabrikSolved) {
    solve_limited(chain, out, |c, o| solve(c, mode, o));
}

/// Checks one constrained chain the way [`constrained_fabrik`] does (a mirrored chain as
/// its unmirrored twin, the chain the solver checks and solves).
pub fn validate_constrained_fabrik(chain: &ConstrainedFabrikChain) -> Result<(), ChainError> {
    check_limited(chain, OPTIONS).map(|_| ())
}

/// A chain record with limits: constrained FABRIK's and CCD's, which share their entry
/// logic (mirroring, checks, FK fallback).
pub(crate) trait LimitedRecord: Copy + Options {
    /// The chain: joints, target, settings.
    fn fabrik_chain(&self) -> &FabrikChain;
    /// Its limits.
    fn limits(&self) -> &ChainLimits;
    /// The unmirrored twin a mirrored record is solved as.
    fn unmirrored_twin(&self) -> Self;
}

macro_rules! limited_record {
    ($($record:ty),*) => {$(
        impl LimitedRecord for $record {
            fn fabrik_chain(&self) -> &FabrikChain {
                &self.chain
            }
            fn limits(&self) -> &ChainLimits {
                &self.limits
            }
            fn unmirrored_twin(&self) -> Self {
                self.unmirrored()
            }
        }
    )*};
}
limited_record!(ConstrainedFabrikChain, CcdChain, DlsChain);

/// Solves a limited record with `solve`: a mirrored record as its unmirrored twin (the
/// results reflected back), an invalid one as a flagged FK fallback.
pub(crate) fn solve_limited<C: LimitedRecord>(
    chain: &C,
    out: &mut FabrikSolved,
    solve: impl FnOnce(&C, &mut FabrikSolved) -> Result<(), ChainError>,
) {
    let twin = chain.has_option(option::MIRRORED).then(|| chain.unmirrored_twin());
    let c = chain.fabrik_chain();
    let n = c.joint_count().min(MAX_FABRIK_JOINTS);
    solve_or_fk(chain, twin, (&c.joints_ms[..], &c.rotations_ms[..]), n, out, solve);
}

/// The record a solver checks and solves (a mirrored record's unmirrored twin), its chain
/// and limits checked with the option bits the solver knows (`options`).
pub(crate) fn check_limited<C: LimitedRecord>(chain: &C, options: u32) -> Result<C, ChainError> {
    let twin = if chain.has_option(option::MIRRORED) { chain.unmirrored_twin() } else { *chain };
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    checked(twin.fabrik_chain(), twin.limits(), options, &mut limits)?;
    Ok(twin)
}

/// The chain's checks and then its limits' (shared with CCD).
pub(crate) fn checked(
    chain: &FabrikChain,
    chain_limits: &ChainLimits,
    options: u32,
    limits: &mut [Limit; MAX_FABRIK_JOINTS],
) -> Result<super::fabrik::Setup, ChainError> {
    let s = setup_chain(chain, options)?;
    setup_limits(chain_limits, &chain.rotations_ms, &s.dir_fk, s.n, limits)?;
    Ok(s)
}

fn solve(chain: &ConstrainedFabrikChain, mode: FabrikMode, out: &mut FabrikSolved) -> Result<(), ChainError> {
    let mut limits = [Limit::default(); MAX_FABRIK_JOINTS];
    let s = checked(&chain.chain, &chain.limits, OPTIONS, &mut limits)?;
    let (n, len, dir_fk, total) = (s.n, s.len, s.dir_fk, s.total);
    let ch = &chain.chain;
    let weight = ch.target_ms[3];
    if weight <= 0.0 {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let base = v3(ch.joints_ms[0]);
    let target = v3(ch.target_ms);
    let mut fk = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let mut p = [Vec3::ZERO; MAX_FABRIK_JOINTS];
    for i in 0..n {
        fk[i] = Quat::from_array(ch.rotations_ms[i]);
        p[i] = v3(ch.joints_ms[i]);
    }
    let eps2 = 1e-12 * total * total;
    let mut rel = [Quat::IDENTITY; MAX_FABRIK_JOINTS];
    let iterations = ch.iterations();
    let align = ch.has_option(option::ALIGN_HINGES);
    let mut prev_err = f32::INFINITY;
    let mut delta = Quat::IDENTITY;
    for it in 0..iterations.max(1) {
        if it < iterations {
            backward_pass(&mut p, target, &len, &dir_fk, n, eps2);
        }
        delta = forward(&mut p, &mut rel, base, &fk, &dir_fk, &len, &limits, align, n, eps2);
        if mode == FabrikMode::Converge {
            let err = (p[n - 1] - target).length();
            if err <= precision || (prev_err - err).abs() < 1e-7 * total {
                break;
            }
            prev_err = err;
        }
    }
    let reached = (p[n - 1] - target).length() <= precision;
    let flags = if (target - base).length() >= total { info::OUT_OF_REACH } else { 0 };
    rel[n - 1] = if ch.has_option(option::KEEP_END_ROTATION) { delta.conjugate() } else { Quat::IDENTITY };
    finish_chain(&ch.joints_ms, &ch.rotations_ms, &rel, &[1.0; MAX_FABRIK_JOINTS], n, weight, reached, flags, out);
    Ok(())
}

/// The limited forward pass: root back on `base`, each bone toward where `p` has it, into
/// its limit; writes the new positions into `p` and the relative deltas into `rel`.
/// Returns the last bone's total delta.
#[allow(clippy::too_many_arguments)] // the per-chain arrays of the kernel's forward loop
pub(crate) fn forward(
    p: &mut [Vec3; MAX_FABRIK_JOINTS],
    rel: &mut [Quat; MAX_FABRIK_JOINTS],
    base: Vec3,
    fk: &[Quat; MAX_FABRIK_JOINTS],
    dir_fk: &[Vec3; MAX_FABRIK_JOINTS],
    len: &[f32; MAX_FABRIK_JOINTS],
    limits: &[Limit; MAX_FABRIK_JOINTS],
    align: bool,
    n: usize,
    eps2: f32,
) -> Quat {
    p[0] = base;
    let mut delta = Quat::IDENTITY;
    for i in 0..n - 1 {
        let want = normalize_or(p[i + 1] - p[i], delta * dir_fk[i], eps2);
        let (mut d, mut e) = forward_joint(delta, fk[i], dir_fk[i], want, &limits[i]);
        if align && i + 2 < n && limits[i + 1].kind == LIMIT_HINGE {
            let bone = (d * dir_fk[i]).normalize();
            let toward = normalize_or(p[i + 2] - (p[i] + bone * len[i]), bone, eps2);
            (d, e) = align_hinge(delta, d, e, fk[i], bone, toward, &limits[i], &limits[i + 1]);
        }
        p[i + 1] = p[i] + (d * dir_fk[i]) * len[i];
        rel[i] = e;
        delta = d;
    }
    delta
}

/// Turns joint `i` about its own bone so that its child's hinge can point the child's bone
/// along `toward` (model space, unit): the hinge axis, carried by joint `i`'s frame, is made
/// perpendicular to `toward` by the smallest such turn, or turned as near to that as a turn
/// about the bone can. Without it a hinge only ever bends in the plane the shortest arcs
/// left it in, and a chain of hinges cannot reach out of that plane (the forward pass
/// never rolls a bone). The turn then goes through joint `i`'s own limit (a twist range
/// bounds it, a hinge undoes it). `parent_delta` = the parent's total delta, `(delta, rel)`
/// = joint `i`'s total and relative delta, `bone` its bone's model direction (unit).
/// Returns the new `(delta, rel)`.
#[allow(clippy::too_many_arguments)] // one joint of the forward loop
#[inline]
pub(crate) fn align_hinge(
    parent_delta: Quat,
    delta: Quat,
    rel: Quat,
    fk: Quat,
    bone: Vec3,
    toward: Vec3,
    limit: &Limit,
    child: &Limit,
) -> (Quat, Quat) {
    // The child's hinge axis in model space: D · frame⁻¹ · u (its parent's model rotation is
    // D · R_fk, and R_fk · rest = frame⁻¹).
    let axis = delta * (child.frame.conjugate() * child.u);
    let across = axis - bone * axis.dot(bone);
    // axis(φ)·toward = a + b cos φ + c sin φ for a turn φ about the bone.
    let a = axis.dot(bone) * bone.dot(toward);
    let b = across.dot(toward);
    let c = bone.cross(across).dot(toward);
    let r2 = b * b + c * c;
    if !(r2 > 1e-12) {
        return (delta, rel);
    }
    // φ = β ± γ with (cos β, sin β) = (b, c) / r and cos γ = −a / r (clamped: the nearest
    // the turn gets when no φ makes the axis perpendicular); the smaller turn.
    let r = r2.sqrt();
    let (cb, sb) = (b / r, c / r);
    let cg = (-a / r).clamp(-1.0, 1.0);
    let sg = (1.0 - cg * cg).max(0.0).sqrt();
    let (c1, s1) = (cb * cg - sb * sg, sb * cg + cb * sg);
    let (c2, s2) = (cb * cg + sb * sg, sb * cg - cb * sg);
    let (cos, sin) = if c1 >= c2 { (c1, s1) } else { (c2, s2) };
    let turned = parent_delta.conjugate() * (quat_from_axis_cos_sin(bone, cos, sin) * delta);
    let rel = if limit.kind != 0 { limit_relative(turned, fk, limit) } else { turned.normalize() };
    ((parent_delta * rel).normalize(), rel)
}
