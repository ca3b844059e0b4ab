//! Damped least squares on a limited joint tree ([`DlsTree`]): full-body IK with up to 4
//! effectors (position, optional orientation), per-joint limits and stiffness, and a root
//! that may move within a box.
//!
//! The descent is [`crate::cpu::dls()`]'s (Levenberg–Marquardt with adaptive damping, the
//! limits enforced after every step with an active set, several starting poses), over a
//! tree: `J Jᵀ` has a block of 3 rows per effector position and 3 per orientation (up to
//! 24 × 24), built coordinate by coordinate without `J` (a coordinate turning about the
//! world axis `a` at joint `p` adds `a × (e − p)` to the rows of each effector `e` below
//! it and `a` to the orientation rows of each effector it turns, each weighted), and
//! solved by Cholesky. The root's translation adds the model axes to every effector's
//! position rows; it is clamped to its box like a limit. Written once for `f32` (the
//! solver) and `f64` ([`dls_tree_reference`]).

use glam::{DVec3, Quat, Vec3};

use super::chain::solve_or_fk;
use super::dls::{double, joint_double, joint_single, single, TREE_DAMPING_START};
use super::limits::{check_kinds_and_parent, setup_joint_limit, Limit};
use super::math::{finite4, in_range, is_unit_quat};
use super::multi_fabrik::{reach_tolerance, setup, write_tree, Tree, NONE};
use crate::error::ChainError;
use crate::records::{
    option, v3, DlsTree, MultiFabrikSolved, Options, TreeLimits, MAX_DLS_STARTS, MAX_ORIENTATION_WEIGHT,
    MAX_TREE_JOINTS,
};

const TJ: usize = MAX_TREE_JOINTS;

/// Solves one tree by damped least squares, each start running up to the tree's
/// iterations and ending once every effector is within the precision (or four steps in a
/// row came no closer); an invalid tree gets a flagged FK fallback. `reached` = every
/// effector within the precision (or within the float resolution of the tree's
/// coordinates, `1e-6 × (|root| + total length)`, when that is coarser) and weight ≥ 1.
pub fn dls_tree(tree: &DlsTree, out: &mut MultiFabrikSolved) {
    let ch = &tree.tree;
    let n = ch.joint_count().min(TJ);
    solve_or_fk(tree, None, (&ch.joints_ms, &ch.rotations_ms), n, out, solve);
}

/// Checks one tree the way [`dls_tree`] does: the tree as for multi-effector FABRIK
/// ([`super::validate_multi_fabrik`]); then its limits: known kind bits, a hinge alone, no
/// limit on a joint without children ([`ChainError::InvalidParameter`]), the parent
/// rotation finite and unit, and each limit as for a chain's joint; then its goal: every
/// number finite ([`ChainError::NonFinite`]); orientation weights in
/// `[0, MAX_ORIENTATION_WEIGHT]` and 0 past the
/// effector count, the root's half-extents `≥ 0` and within range, its stiffness and every
/// joint's in `[0, 1]`, starts within `1..=MAX_DLS_STARTS` and the reserved words zero
/// ([`ChainError::InvalidParameter`]); an orientation in use a unit quaternion
/// ([`ChainError::NotNormalized`]).
pub fn validate_dls_tree(tree: &DlsTree) -> Result<(), ChainError> {
    prepare(tree).map(|_| ())
}

/// The checked tree, its prepared limits, and what the descent reads.
struct Prepared {
    t: Tree,
    limits: [Limit; TJ],
    /// Each joint's first child's offset in the joint's frame (its bone), FK local
    /// rotations and FK model rotations.
    bone: [Vec3; TJ],
    local: [Quat; TJ],
    fk: [Quat; TJ],
    shape: single::Shape,
    goal: single::TreeGoal,
}

/// A tree's limits checked and prepared (see [`validate_dls_tree`]).
#[allow(clippy::needless_range_loop)]
fn setup_tree_limits(
    l: &TreeLimits,
    ch: &crate::records::MultiFabrikChain,
    t: &Tree,
) -> Result<[Limit; TJ], ChainError> {
    let mut out = [Limit::default(); TJ];
    check_kinds_and_parent(l, |i| i < t.n && t.first_child[i] != NONE)?;
    for i in 0..t.n {
        let fc = t.first_child[i];
        if fc == NONE {
            continue;
        }
        let dir = t.bone[fc] / t.len[fc];
        let parent_fk = if i == 0 { l.parent_ms } else { ch.rotations_ms[t.parent[i]] };
        out[i] = setup_joint_limit(l.kind(i), &l.joints[i], ch.rotations_ms[i], dir, parent_fk)?;
    }
    Ok(out)
}

/// The goal's checks of [`validate_dls_tree`], in its order.
fn check_tree_goal(tree: &DlsTree, m: usize) -> Result<(), ChainError> {
    let g = &tree.goal;
    let finite = g.orientations_ms.iter().all(|q| finite4(*q))
        && finite4(g.orientation_weights)
        && finite4(g.root_translation)
        && g.stiffness.iter().all(|s| s.is_finite());
    if !finite {
        return Err(ChainError::NonFinite);
    }
    let w = g.orientation_weights;
    let t = g.root_translation;
    let invalid = w.iter().any(|&x| !(0.0..=MAX_ORIENTATION_WEIGHT).contains(&x))
        || w[m..].iter().any(|&x| x != 0.0)
        || !(t[0] >= 0.0 && t[1] >= 0.0 && t[2] >= 0.0 && (0.0..=1.0).contains(&t[3]))
        || !in_range(t)
        || g.starts[1..] != [0; 3]
        || !(1..=MAX_DLS_STARTS).contains(&g.starts[0])
        || !g.stiffness.iter().all(|s| (0.0..=1.0).contains(s));
    if invalid {
        return Err(ChainError::InvalidParameter);
    }
    if (0..m).any(|e| w[e] > 0.0 && !is_unit_quat(Quat::from_array(g.orientations_ms[e]))) {
        return Err(ChainError::NotNormalized);
    }
    Ok(())
}

#[allow(clippy::needless_range_loop)] // one index over the per-joint arrays, as in a kernel
fn prepare(tree: &DlsTree) -> Result<Prepared, ChainError> {
    let ch = &tree.tree;
    let t = setup(ch)?;
    let limits = setup_tree_limits(&tree.limits, ch, &t)?;
    let m = ch.effector_count();
    check_tree_goal(tree, m)?;
    let n = t.n;
    let keep_root = ch.has_option(option::KEEP_ROOT_ROTATION);
    let fk: [Quat; TJ] =
        std::array::from_fn(|i| if i < n { Quat::from_array(ch.rotations_ms[i]) } else { Quat::IDENTITY });
    let parent_ms = Quat::from_array(tree.limits.parent_ms);
    let mut p = Prepared {
        t,
        limits,
        bone: [Vec3::ZERO; TJ],
        local: [Quat::IDENTITY; TJ],
        fk,
        shape: single::Shape {
            n,
            parent: [0; TJ],
            offset: [Vec3::ZERO; TJ],
            moves: [false; TJ],
            m,
            eff: [0; 4],
            moved_by: [0; 4],
            turned_by: [0; 4],
            row: [0; 4],
            rows: 0,
            root: v3(ch.joints_ms[0]),
            parent_ms,
            reach: v3(tree.goal.root_translation),
        },
        goal: single::TreeGoal {
            target: [Vec3::ZERO; 4],
            orient: [Quat::IDENTITY; 4],
            wo: [0.0; 4],
            sw: [0.0; 4],
            d: tree.goal.stiffness.map(|s| 1.0 - s),
            dt: 1.0 - tree.goal.root_translation[3],
        },
    };
    let (t, s, g) = (&p.t, &mut p.shape, &mut p.goal);
    for i in 0..n {
        let parent_rot = if i == 0 { parent_ms } else { fk[t.parent[i]] };
        p.local[i] = (parent_rot.conjugate() * fk[i]).normalize();
        if i > 0 {
            s.parent[i] = t.parent[i];
            s.offset[i] = fk[t.parent[i]].conjugate() * t.bone[i];
        }
        // A joint turns when a child of it leads to an effector.
        let mut child = t.first_child[i];
        while child != NONE {
            s.moves[i] |= t.below[child] > 0.0;
            child = t.next_sibling[child];
        }
    }
    // Each joint's bone: its first child's offset (set once the children were visited).
    for i in 0..n {
        let fc = t.first_child[i];
        if fc != NONE {
            p.bone[i] = s.offset[fc];
        }
    }
    if keep_root {
        s.moves[0] = false;
    }
    let heaviest = (0..m).map(|e| ch.targets_ms[e][3]).fold(0.0, f32::max);
    let mut row = 0;
    for e in 0..m {
        let j = ch.effectors[e] as usize;
        s.eff[e] = j;
        s.row[e] = row;
        g.target[e] = v3(ch.targets_ms[e]);
        g.sw[e] = (ch.targets_ms[e][3] / heaviest).sqrt();
        let wo = tree.goal.orientation_weights[e];
        if wo > 0.0 {
            g.wo[e] = wo;
            g.orient[e] = Quat::from_array(tree.goal.orientations_ms[e]);
        }
        row += if wo > 0.0 { 6 } else { 3 };
        let mut a = t.parent[j];
        let mut bits = 0u32;
        loop {
            if s.moves[a] {
                bits |= 1 << a;
            }
            if a == 0 {
                break;
            }
            a = t.parent[a];
        }
        s.moved_by[e] = bits;
        s.turned_by[e] = bits | (u32::from(s.moves[j]) << j);
    }
    s.rows = row;
    Ok(p)
}

fn solve(tree: &DlsTree, out: &mut MultiFabrikSolved) -> Result<(), ChainError> {
    let p = prepare(tree)?;
    let ch = &tree.tree;
    let (n, total) = (p.t.n, p.t.total);
    let weight = ch.weight();
    if weight <= 0.0 {
        super::chain::write_fk(&ch.joints_ms, &ch.rotations_ms, n, 0, 0, out);
        return Ok(());
    }
    let root = v3(ch.joints_ms[0]);
    let tolerance = reach_tolerance(ch.precision(), root, total);
    let joints: [single::Joint; TJ] = std::array::from_fn(|i| joint_single(&p.limits[i], p.bone[i]));
    let (pose, _, worst) = single::tree_run(
        &joints,
        &p.local,
        &p.shape,
        &p.goal,
        TREE_DAMPING_START * total,
        (tree.goal.starts[0], ch.iterations(), tolerance, true),
    );
    let d: [Quat; TJ] = std::array::from_fn(|i| (pose.rot[i] * p.fk[i].conjugate()).normalize());
    write_tree(ch, &p.t, &d, root + pose.t * weight, weight, out);
    let reached = weight >= 1.0 && worst <= tolerance;
    out.status = [u32::from(reached), 0, 0, n as u32];
    Ok(())
}

/// The `f64` reference of [`dls_tree`]: the same descent in double precision, `starts`
/// starts of `iterations` steps each (none stopping early; the record's own starts and
/// iterations are not used). Returns the joints' positions and the error of the closest
/// end (the weighted residual's length, each effector's weight relative to the heaviest),
/// or the tree's error.
pub fn dls_tree_reference(tree: &DlsTree, starts: u32, iterations: u32) -> Result<(Vec<DVec3>, f64), ChainError> {
    let p = prepare(tree)?;
    let joints: [double::Joint; TJ] = std::array::from_fn(|i| joint_double(&p.limits[i], p.bone[i]));
    let (s, g) = (&p.shape, &p.goal);
    let shape = double::Shape {
        n: s.n,
        parent: s.parent,
        offset: s.offset.map(|v| v.as_dvec3()),
        moves: s.moves,
        m: s.m,
        eff: s.eff,
        moved_by: s.moved_by,
        turned_by: s.turned_by,
        row: s.row,
        rows: s.rows,
        root: s.root.as_dvec3(),
        parent_ms: s.parent_ms.as_dquat().normalize(),
        reach: s.reach.as_dvec3(),
    };
    let goal = double::TreeGoal {
        target: g.target.map(|v| v.as_dvec3()),
        orient: g.orient.map(|q| q.as_dquat().normalize()),
        wo: g.wo.map(f64::from),
        sw: g.sw.map(f64::from),
        d: g.d.map(f64::from),
        dt: f64::from(g.dt),
    };
    let local = p.local.map(|q| q.as_dquat().normalize());
    let (pose, err, _) = double::tree_run(
        &joints,
        &local,
        &shape,
        &goal,
        f64::from(TREE_DAMPING_START * p.t.total),
        (starts.max(1), iterations, 0.0, false),
    );
    Ok((pose.p[..s.n].to_vec(), err))
}
