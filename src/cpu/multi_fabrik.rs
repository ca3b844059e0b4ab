//! Multi-effector FABRIK on a joint tree (Aristidou and Lasenby, "FABRIK: a fast, iterative
//! solver for the inverse kinematics problem", 2011, section on multiple end effectors):
//! the CPU twin of `shaders/kernels/multi_fabrik.wgsl`.
//!
//! Each iteration:
//! - **Backward** (tips to root, reverse record order): an effector joint goes to its
//!   target; every other joint on a path to an effector goes to the weighted centroid of
//!   the positions its active children ask for (each child's new position pulled back
//!   toward the joint's current one by the bone's length; for a sub-base, whose bones turn
//!   together, the child's new position minus its bone as the sub-base's current turn
//!   holds it), weighted by the total effector weight below each child. A joint that is itself an effector and has effectors below
//!   averages its target with them.
//! - **Forward** (root to tips, record order): the root stays at its FK position; each
//!   joint turns rigidly (its children keep their FK offsets in its frame) by the rotation
//!   that best points its active children's bones at their backward positions: the
//!   shortest arc between the weighted sums of the bones, then, with two or more active
//!   children, the twist about that sum that best aligns each bone (exact least squares
//!   for the twist, faded out where the bones lie along the axis and the fit is rounding
//!   noise). With one active child this is plain FABRIK's forward step. Joints on
//!   no path to an effector, and effectors with nothing below, keep their parent's turn;
//!   with `KEEP_ROOT_ROTATION` the root keeps its FK rotation.
//!
//! The rotations come out of the forward pass itself, so positions, rotations and local
//! corrections agree exactly, and no bone gains roll about its own axis where it has one
//! active child.

use glam::{Quat, Vec3};

use super::chain::{check_joints, solve_or_fk, write_fk};
use super::fabrik::{FabrikMode, MAX_FABRIK_ITERATIONS};
use super::limb::MIN_CHAIN_LENGTH;
use super::math::{
    atan2, finite4, flush_subnormal, in_range, nlerp_identity, normalize_or, quat_from_axis_angle, rotation_arc,
};
use crate::constants as c;
use crate::error::ChainError;
use crate::records::{option, p4, v3, MultiFabrikChain, MultiFabrikSolved, Options, MAX_EFFECTORS, MAX_TREE_JOINTS};

pub(crate) const NONE: usize = c::NONE as usize;

/// Where a sub-base's twist fit fades out: the fitted sums' magnitude relative to the
/// bones' weighted squared lengths (see [`fitted_twist`]).
pub(crate) const TWIST_FADE: f32 = 3e-3;

/// The least-squares twist about `axis` from its sums `(cos, sin)` (proportional to the
/// cosine and sine of the angle), faded out where the sums are too small to define it:
/// the angle is scaled by `m² / (m² + TWIST_FADE²)`, `m = |(cos, sin)| / scale`. Where the
/// bones lie along the axis the sums vanish and the angle is rounding noise; faded, the
/// twist goes to zero continuously and one ulp of input moves it by ~1e-5 rad at most.
#[inline]
fn fitted_twist(axis: Vec3, cos: f32, sin: f32, scale: f32) -> Quat {
    let m2 = (cos * cos + sin * sin) / (scale * scale);
    let fade = m2 / (m2 + TWIST_FADE * TWIST_FADE);
    quat_from_axis_angle(axis, atan2(sin, cos) * fade)
}

/// Solves one tree in [`FabrikMode::Fixed`] mode; an invalid tree gets a flagged FK
/// fallback. `reached` = every effector within `params.x` of its target (or within the
/// float resolution of the tree's coordinates, `1e-6 × (|root| + total length)`, when that
/// is coarser) and weight ≥ 1.
pub fn multi_fabrik(chain: &MultiFabrikChain, out: &mut MultiFabrikSolved) {
    multi_fabrik_with_mode(chain, FabrikMode::Fixed, out);
}

/// [`multi_fabrik`] with an explicit [`FabrikMode`] (converge: stop once every effector
/// is within the precision or the error stops changing).
pub fn multi_fabrik_with_mode(chain: &MultiFabrikChain, mode: FabrikMode, out: &mut MultiFabrikSolved) {
    let n = chain.joint_count().min(MAX_TREE_JOINTS);
    solve_or_fk(chain, None, (&chain.joints_ms, &chain.rotations_ms), n, out, |c, o| solve(c, mode, o));
}

/// Checks one tree the way [`multi_fabrik`] does. Rules, in order: 2 to 32 joints
/// ([`ChainError::JointCount`]); joints finite, unit rotations, within range; targets and
/// parameters finite ([`ChainError::NonFinite`]) and targets within range
/// ([`ChainError::OutOfRange`]); 1 to 4 effectors on distinct non-root joints with weights
/// in `[1e-6, 1e6]`, parents before children, iterations ≤ 4096, precision ≥ 0, unknown option bits and
/// `params.zw` zero ([`ChainError::InvalidParameter`]); every bone longer than 1e-4 of the
/// tree's total length ([`ChainError::ZeroLengthBone`]; `MIN_TREE_BONE`).
pub fn validate_multi_fabrik(chain: &MultiFabrikChain) -> Result<(), ChainError> {
    setup(chain).map(|_| ())
}

/// What the checks establish about the tree (the SIMD path takes its shape from it too).
pub(crate) struct Tree {
    pub n: usize,
    pub parent: [usize; MAX_TREE_JOINTS],
    /// FK offset of each joint from its parent (zero for the root).
    pub bone: [Vec3; MAX_TREE_JOINTS],
    pub len: [f32; MAX_TREE_JOINTS],
    /// Total effector weight at and below each joint (0: on no path to an effector).
    pub below: [f32; MAX_TREE_JOINTS],
    /// The effector on each joint, `NONE` if none.
    pub effector: [usize; MAX_TREE_JOINTS],
    /// Children on a path to an effector, per joint (2 or more: a sub-base).
    pub active: [u32; MAX_TREE_JOINTS],
    pub first_child: [usize; MAX_TREE_JOINTS],
    pub next_sibling: [usize; MAX_TREE_JOINTS],
    pub total: f32,
}

/// The record's checks (see [`validate_multi_fabrik`]) and its tree.
pub(crate) fn setup(ch: &MultiFabrikChain) -> Result<Tree, ChainError> {
    let n = ch.joint_count();
    if !(2..=MAX_TREE_JOINTS).contains(&n) {
        return Err(ChainError::JointCount);
    }
    check_joints(&ch.joints_ms, &ch.rotations_ms, n)?;
    let m = ch.effector_count().min(MAX_EFFECTORS);
    if !finite4(ch.params) || !ch.targets_ms[..m].iter().all(|t| finite4(*t)) {
        return Err(ChainError::NonFinite);
    }
    if !ch.targets_ms[..m].iter().all(|t| in_range(*t)) {
        return Err(ChainError::OutOfRange);
    }
    let mut t = Tree {
        n,
        parent: [NONE; MAX_TREE_JOINTS],
        bone: [Vec3::ZERO; MAX_TREE_JOINTS],
        len: [0.0; MAX_TREE_JOINTS],
        below: [0.0; MAX_TREE_JOINTS],
        effector: [NONE; MAX_TREE_JOINTS],
        active: [0; MAX_TREE_JOINTS],
        first_child: [NONE; MAX_TREE_JOINTS],
        next_sibling: [NONE; MAX_TREE_JOINTS],
        total: 0.0,
    };
    let bad_settings = ch.effector_count() == 0
        || ch.effector_count() > MAX_EFFECTORS
        || ch.iterations() > MAX_FABRIK_ITERATIONS
        || ch.options() & !option::MULTI_FABRIK != 0
        || !(flush_subnormal(ch.precision()) >= 0.0)
        || ch.reserved_params().map(flush_subnormal) != [0.0; 2];
    if bad_settings {
        return Err(ChainError::InvalidParameter);
    }
    for j in 1..n {
        let p = ch.parent(j);
        if p >= j {
            return Err(ChainError::InvalidParameter);
        }
        t.parent[j] = p;
    }
    for e in 0..m {
        let j = ch.effectors[e] as usize;
        let w = ch.targets_ms[e][3];
        let weight_ok = (c::MIN_EFFECTOR_WEIGHT..=c::MAX_EFFECTOR_WEIGHT).contains(&w);
        if j == 0 || j >= n || t.effector[j] != NONE || !weight_ok {
            return Err(ChainError::InvalidParameter);
        }
        t.effector[j] = e;
    }
    // Children lists (in record order) and the effector weight below each joint.
    for j in (1..n).rev() {
        let p = t.parent[j];
        t.next_sibling[j] = t.first_child[p];
        t.first_child[p] = j;
    }
    for j in (0..n).rev() {
        if t.effector[j] != NONE {
            t.below[j] += ch.targets_ms[t.effector[j]][3];
        }
        if j > 0 {
            let w = t.below[j];
            t.below[t.parent[j]] += w;
            t.active[t.parent[j]] += u32::from(w > 0.0);
        }
    }
    for j in 1..n {
        t.bone[j] = v3(ch.joints_ms[j]) - v3(ch.joints_ms[t.parent[j]]);
        t.len[j] = t.bone[j].length();
        t.total += t.len[j];
    }
    for j in 1..n {
        if !(t.len[j] > c::MIN_TREE_BONE * t.total && t.total >= MIN_CHAIN_LENGTH) {
            return Err(ChainError::ZeroLengthBone);
        }
    }
    Ok(t)
}

/// The backward pass: new positions `q` of the joints on paths to effectors, from the
/// current positions `p` and total deltas `d`. A child asks its parent to move to where
/// the bone between them reaches back from the child's new position: along the line to the
/// parent's current position (FABRIK), or, for a sub-base (two or more active children,
/// whose bones turn together), by the bone as the sub-base's current turn holds it.
fn backward(
    t: &Tree,
    ch: &MultiFabrikChain,
    p: &[Vec3; MAX_TREE_JOINTS],
    d: &[Quat; MAX_TREE_JOINTS],
    q: &mut [Vec3; MAX_TREE_JOINTS],
    eps2: f32,
) {
    let mut acc = [Vec3::ZERO; MAX_TREE_JOINTS];
    let mut wacc = [0.0_f32; MAX_TREE_JOINTS];
    for j in (1..t.n).rev() {
        if t.below[j] <= 0.0 {
            continue;
        }
        let (mut sum, mut ws) = (acc[j], wacc[j]);
        if t.effector[j] != NONE {
            let target = ch.targets_ms[t.effector[j]];
            sum += v3(target) * target[3];
            ws += target[3];
        }
        q[j] = sum / ws;
        let par = t.parent[j];
        let ask = if t.active[par] > 1 {
            q[j] - d[par] * t.bone[j]
        } else {
            let now = normalize_or(p[par] - p[j], -t.bone[j] / t.len[j], eps2);
            q[j] + normalize_or(p[par] - q[j], now, eps2) * t.len[j]
        };
        acc[par] += ask * t.below[j];
        wacc[par] += t.below[j];
    }
}

/// The forward pass: each joint's total model-space delta `d` and position `p`, root first.
fn forward(
    t: &Tree,
    keep_root: bool,
    q: &[Vec3; MAX_TREE_JOINTS],
    p: &mut [Vec3; MAX_TREE_JOINTS],
    d: &mut [Quat; MAX_TREE_JOINTS],
    eps2: f32,
) {
    for j in 0..t.n {
        let d_par = if j == 0 { Quat::IDENTITY } else { d[t.parent[j]] };
        // Weighted sums of the active children's bones, as they are and as wanted.
        let (mut a, mut b, mut active, mut first) = (Vec3::ZERO, Vec3::ZERO, 0, NONE);
        let mut c = t.first_child[j];
        while c != NONE {
            if t.below[c] > 0.0 {
                let now = d_par * t.bone[c];
                let want = normalize_or(q[c] - p[j], now / t.len[c], eps2) * t.len[c];
                a += now * t.below[c];
                b += want * t.below[c];
                active += 1;
                if first == NONE {
                    first = c;
                }
            }
            c = t.next_sibling[c];
        }
        let mut dj = d_par;
        if active > 0 && !(j == 0 && keep_root) {
            if !(a.length_squared() > eps2 && b.length_squared() > eps2) {
                // The bones cancel out (e.g. two opposite legs): steer by the first one.
                a = d_par * t.bone[first];
                b = normalize_or(q[first] - p[j], a / t.len[first], eps2) * t.len[first];
            }
            let axis = b.normalize();
            let swing = rotation_arc(a.normalize(), axis);
            dj = swing * d_par;
            if active > 1 {
                let (mut cos, mut sin, mut scale) = (0.0, 0.0, 0.0);
                let mut c = t.first_child[j];
                while c != NONE {
                    if t.below[c] > 0.0 {
                        let now = dj * t.bone[c];
                        let want = normalize_or(q[c] - p[j], now / t.len[c], eps2) * t.len[c];
                        let (u, v) = (now - axis * now.dot(axis), want - axis * want.dot(axis));
                        cos += u.dot(v) * t.below[c];
                        sin += u.cross(v).dot(axis) * t.below[c];
                        scale += t.len[c] * t.len[c] * t.below[c];
                    }
                    c = t.next_sibling[c];
                }
                dj = fitted_twist(axis, cos, sin, scale) * dj;
            }
            dj = dj.normalize();
        }
        d[j] = dj;
        let mut c = t.first_child[j];
        while c != NONE {
            p[c] = p[j] + dj * t.bone[c];
            c = t.next_sibling[c];
        }
    }
}

/// The largest distance of an effector from its target.
fn effector_error(t: &Tree, ch: &MultiFabrikChain, p: &[Vec3; MAX_TREE_JOINTS]) -> f32 {
    (0..t.n)
        .filter(|&j| t.effector[j] != NONE)
        .map(|j| p[j].distance(v3(ch.targets_ms[t.effector[j]])))
        .fold(0.0, f32::max)
}

/// What `reached` is judged by: the precision, or the float resolution of the tree's
/// coordinates where that is coarser (`1e-6 × (|root| + total length)`), so both twins
/// agree on a tree far from the origin or scaled up.
#[inline]
pub(crate) fn reach_tolerance(precision: f32, root: Vec3, total: f32) -> f32 {
    precision.max(1e-6 * (root.length() + total))
}

fn solve(ch: &MultiFabrikChain, mode: FabrikMode, out: &mut MultiFabrikSolved) -> Result<(), ChainError> {
    let t = setup(ch)?;
    let n = t.n;
    let weight = ch.weight();
    if weight <= 0.0 {
        write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let precision = ch.precision();
    let eps2 = 1e-12 * t.total * t.total;
    let mut p = [Vec3::ZERO; MAX_TREE_JOINTS];
    for (j, pj) in p.iter_mut().enumerate().take(n) {
        *pj = v3(ch.joints_ms[j]);
    }
    let mut q = p;
    let mut d = [Quat::IDENTITY; MAX_TREE_JOINTS];
    let mut last = f32::INFINITY;
    for _ in 0..ch.iterations() {
        backward(&t, ch, &p, &d, &mut q, eps2);
        forward(&t, ch.has_option(option::KEEP_ROOT_ROTATION), &q, &mut p, &mut d, eps2);
        if mode == FabrikMode::Converge {
            let err = effector_error(&t, ch, &p);
            if err <= precision || (last - err).abs() < 1e-7 * t.total {
                break;
            }
            last = err;
        }
    }
    let pw = write_tree(ch, &t, &d, v3(ch.joints_ms[0]), weight, out);
    let reached = weight >= 1.0 && effector_error(&t, ch, &pw) <= reach_tolerance(precision, pw[0], t.total);
    out.status = [u32::from(reached), 0, 0, n as u32];
    Ok(())
}

/// Writes a solved tree: every joint's relative delta (from its total model-space delta
/// `d`) weighted by `weight`, the pose rebuilt from them with the root at `root`
/// (positions, rotations, local corrections). Returns the positions written; the status is
/// left for the caller.
pub(crate) fn write_tree(
    ch: &MultiFabrikChain,
    t: &Tree,
    d: &[Quat; MAX_TREE_JOINTS],
    root: Vec3,
    weight: f32,
    out: &mut MultiFabrikSolved,
) -> [Vec3; MAX_TREE_JOINTS] {
    *out = MultiFabrikSolved::default();
    let fk = |j: usize| Quat::from_array(ch.rotations_ms[j]);
    let mut dw = [Quat::IDENTITY; MAX_TREE_JOINTS];
    let mut pw = [Vec3::ZERO; MAX_TREE_JOINTS];
    for j in 0..t.n {
        let (d_par, dw_par, here) = if j == 0 {
            (Quat::IDENTITY, Quat::IDENTITY, root)
        } else {
            let par = t.parent[j];
            (d[par], dw[par], pw[par] + dw[par] * t.bone[j])
        };
        let e = nlerp_identity(d_par.conjugate() * d[j], weight);
        dw[j] = dw_par * e;
        pw[j] = here;
        let r = fk(j);
        out.positions_ms[j] = p4(here);
        out.rotations_ms[j] = (dw[j] * r).normalize().to_array();
        out.corrections[j] = (r.conjugate() * e * r).to_array();
    }
    pw
}
