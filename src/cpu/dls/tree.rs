// The descent on a joint tree ([`crate::records::DlsTree`]), written once over the
// precision's types like `descent.rs` (the chain's), with the joints of `joint.rs`: up to
// 4 effectors, each a position and an optional orientation, and a root that may move
// within a box.

/// Joints of a tree.
const TJ: usize = crate::records::MAX_TREE_JOINTS;
/// Most rows of a tree's residual: 4 effectors, each a position and an orientation.
pub(crate) const ROWS: usize = 24;

/// The tree's state: per joint its coordinates (as [`Pose`]'s) or, for a free joint, its
/// local rotation; the root's translation from its FK position; and the pose they give.
#[derive(Clone, Copy)]
pub(crate) struct TreePose {
    pub q: [V3; TJ],
    pub local: [Q; TJ],
    pub rot: [Q; TJ],
    pub p: [V3; TJ],
    pub t: V3,
}

/// The tree as the descent reads it.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub n: usize,
    pub parent: [usize; TJ],
    /// Each joint's offset from its parent, in the parent's frame.
    pub offset: [V3; TJ],
    /// Whether the joint turns: it has a child on a path to an effector (and is not a root
    /// whose rotation is kept). The others keep their FK local rotation.
    pub moves: [bool; TJ],
    /// The effectors: their joints, the joints that move each (its ancestors that turn, as
    /// bits), the joints that turn each (those and the effector itself when it turns), and
    /// the first row of each in the residual (3 rows, 6 with an orientation).
    pub m: usize,
    pub eff: [usize; 4],
    pub moved_by: [u32; 4],
    pub turned_by: [u32; 4],
    pub row: [usize; 4],
    pub rows: usize,
    /// The root's FK position, its parent's model rotation, and how far it may move along
    /// each model axis (0: it stays).
    pub root: V3,
    pub parent_ms: Q,
    pub reach: V3,
}

/// What the tree's solve aims at: per effector its target position, its target rotation
/// and that rotation's weight (length per radian; 0 = none), and the square root of its
/// weight relative to the heaviest effector's; per joint the scale `1 − stiffness` of its
/// coordinates, and that of the root's translation.
#[derive(Clone, Copy)]
pub(crate) struct TreeGoal {
    pub target: [V3; 4],
    pub orient: [Q; 4],
    pub wo: [F; 4],
    pub sw: [F; 4],
    pub d: [F; TJ],
    pub dt: F,
}

/// The weighted residual (rows per effector: `√w (target − p)`, then with an orientation
/// `√w · wo ·` the rotation vector onto its target rotation) into `e`; returns its length
/// (what the descent minimises) and the largest effector error (`√(|Δp|² + (wo·θ)²)`,
/// what the precision judges).
pub(crate) fn tree_residual(pose: &TreePose, s: &Shape, g: &TreeGoal, e: &mut [F; ROWS]) -> (F, F) {
    let (mut sum, mut worst) = (0.0, 0.0);
    for k in 0..s.m {
        let (j, r) = (s.eff[k], s.row[k]);
        let dp = g.target[k] - pose.p[j];
        let mut e2 = dp.length_squared();
        let sw = g.sw[k];
        (e[r], e[r + 1], e[r + 2]) = (dp.x * sw, dp.y * sw, dp.z * sw);
        if g.wo[k] > 0.0 {
            let q = g.orient[k] * pose.rot[j].conjugate();
            let q = if q.w < 0.0 { -q } else { q };
            let v = V3::new(q.x, q.y, q.z);
            let l = v.length();
            let eo = if l > 0.0 { v * (g.wo[k] * 2.0 * atan2_(l, q.w) / l) } else { V3::ZERO };
            e2 += eo.length_squared();
            (e[r + 3], e[r + 4], e[r + 5]) = (eo.x * sw, eo.y * sw, eo.z * sw);
        }
        sum += e2 * sw * sw;
        if e2 > worst {
            worst = e2;
        }
    }
    (sum.sqrt(), worst.sqrt())
}

/// The pose the coordinates give, root first (a parent always comes before its children).
#[allow(clippy::needless_range_loop)]
pub(crate) fn tree_forward(pose: &mut TreePose, joints: &[Joint], s: &Shape) {
    for i in 0..s.n {
        let (parent, at) = if i == 0 {
            (s.parent_ms, s.root + pose.t)
        } else {
            let p = s.parent[i];
            (pose.rot[p], pose.p[p] + pose.rot[p] * s.offset[i])
        };
        let local = if s.moves[i] { local_of(&joints[i], pose.q[i], pose.local[i]) } else { pose.local[i] };
        pose.rot[i] = (parent * local).normalize();
        pose.p[i] = at;
    }
}

/// The whole solve of a tree (as [`run`] for a chain): the FK pose's turning joints moved
/// into their limits, then up to `starts` starts of [`tree_descend`] until one ends with
/// every effector within `precision`. Returns the closest end, its error and its largest
/// effector error.
#[allow(clippy::needless_range_loop)]
pub(crate) fn tree_run(
    joints: &[Joint],
    local: &[Q; TJ],
    s: &Shape,
    goal: &TreeGoal,
    damping: F,
    (starts, iterations, precision, converge): (u32, u32, F, bool),
) -> (TreePose, F, F) {
    let mut pose =
        TreePose { q: [V3::ZERO; TJ], local: *local, rot: [Q::IDENTITY; TJ], p: [V3::ZERO; TJ], t: V3::ZERO };
    for i in 0..s.n {
        if s.moves[i] {
            pose.q[i] = project(&joints[i], coordinates(&joints[i], joints[i].rest.conjugate() * local[i]));
        }
    }
    let base = pose;
    let (mut best, mut best_err, mut best_worst) = (pose, F::INFINITY, F::INFINITY);
    for seed in 0..starts {
        if best_worst <= precision {
            break;
        }
        let mut start = base;
        if seed > 0 {
            for i in 0..s.n {
                let d = goal.d[i];
                if !s.moves[i] || d <= 0.0 {
                    continue;
                }
                let to = spread(&joints[i], seed as F, i as F);
                start.q[i] = if d >= 1.0 { to } else { base.q[i] + (to - base.q[i]) * d };
            }
        }
        tree_forward(&mut start, joints, s);
        let (end, err, worst) = tree_descend(start, joints, s, goal, damping, iterations, precision, converge);
        if err < best_err * (1.0 - START_MARGIN) {
            (best, best_err, best_worst) = (end, err, worst);
        }
    }
    (best, best_err, best_worst)
}

/// Levenberg–Marquardt on a tree from `pose` (as [`descend`] for a chain): up to
/// `iterations` steps, ending after `STALL` steps in a row that came no closer (or with
/// every effector within `precision` with `converge`). Returns the pose, its error and its
/// largest effector error ([`tree_residual`]).
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(crate) fn tree_descend(
    mut pose: TreePose,
    joints: &[Joint],
    s: &Shape,
    goal: &TreeGoal,
    mut lambda: F,
    iterations: u32,
    precision: F,
    converge: bool,
) -> (TreePose, F, F) {
    let mut e = [0.0; ROWS];
    let (mut err, mut worst) = tree_residual(&pose, s, goal, &mut e);
    let mut delta = [V3::ZERO; TJ];
    let (lambda_min, lambda_max) = (lambda * crate::constants::DLS_DAMPING_MIN as F, lambda * 1e3);
    let mut rejected = 0;
    for _ in 0..iterations {
        if (converge && worst <= precision) || rejected >= STALL {
            break;
        }
        let mut held = [[false; 3]; TJ];
        let mut rim = [V3::ZERO; TJ];
        let mut held_t = [false; 3];
        let mut dt = V3::ZERO;
        for pass in 0..2 {
            tree_step(&pose, &e, joints, s, goal, lambda, (&held, &rim, &held_t), &mut delta, &mut dt);
            if pass == 1 {
                break;
            }
            let mut any = false;
            for i in 0..s.n {
                if s.moves[i] {
                    any |= hold_joint(&joints[i], pose.q[i], delta[i], &mut held[i], &mut rim[i]);
                }
            }
            for k in 0..3 {
                let (t, d, r) = (pose.t[k], dt[k], s.reach[k]);
                if r > 0.0 && ((t <= -r && d < 0.0) || (t >= r && d > 0.0)) {
                    held_t[k] = true;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        let mut next = pose;
        for i in 0..s.n {
            if !s.moves[i] {
                continue;
            }
            match joints[i].dof {
                Dof::Free => {
                    let w = delta[i];
                    let angle = w.length();
                    if angle > 0.0 {
                        let p = if i == 0 { s.parent_ms } else { pose.rot[s.parent[i]] };
                        let turn = axis_angle(w / angle, angle);
                        next.local[i] = (p.conjugate() * turn * p * pose.local[i]).normalize();
                    }
                }
                _ => next.q[i] = project(&joints[i], pose.q[i] + delta[i]),
            }
        }
        next.t = (pose.t + dt).clamp(-s.reach, s.reach);
        tree_forward(&mut next, joints, s);
        let mut e_next = [0.0; ROWS];
        let (next_err, next_worst) = tree_residual(&next, s, goal, &mut e_next);
        if next_err < err * (1.0 - STEP_MARGIN) {
            (pose, e, err, worst) = (next, e_next, next_err, next_worst);
            lambda = (lambda * 0.5).max(lambda_min);
            rejected = 0;
        } else {
            lambda = (lambda * 3.0).min(lambda_max);
            rejected += 1;
        }
    }
    (pose, err, worst)
}

/// The rows a coordinate turning joint `i` about the world axis `a` moves, into `col`
/// (zero elsewhere): per effector it moves, `√w · a × (p − pᵢ)`, and per effector it
/// turns (with an orientation), `√w · wo · a`. Returns the bits of the effectors touched.
fn tree_column(a: V3, i: usize, pose: &TreePose, s: &Shape, g: &TreeGoal, col: &mut [F; ROWS]) -> u32 {
    let mut touched = 0;
    for k in 0..s.m {
        let r = s.row[k];
        if s.moved_by[k] >> i & 1 != 0 {
            let c = a.cross(pose.p[s.eff[k]] - pose.p[i]) * g.sw[k];
            (col[r], col[r + 1], col[r + 2]) = (c.x, c.y, c.z);
            touched |= 1 << k;
        }
        if g.wo[k] > 0.0 && s.turned_by[k] >> i & 1 != 0 {
            let c = a * (g.sw[k] * g.wo[k]);
            (col[r + 3], col[r + 4], col[r + 5]) = (c.x, c.y, c.z);
            touched |= 1 << k;
        }
    }
    touched
}

/// `A += d² c cᵀ` on the lower triangle, over the rows of the effectors in `touched`.
fn add_column(a: &mut [[F; ROWS]; ROWS], c: &[F; ROWS], d2: F, touched: u32, s: &Shape) {
    let mut idx = [0usize; ROWS];
    let mut len = 0;
    for k in 0..s.m {
        if touched >> k & 1 != 0 {
            let end = if k + 1 < s.m { s.row[k + 1] } else { s.rows };
            for r in s.row[k]..end {
                idx[len] = r;
                len += 1;
            }
        }
    }
    for x in 0..len {
        let r = idx[x];
        let cr = c[r] * d2;
        for &cc in &idx[..=x] {
            a[r][cc] += cr * c[cc];
        }
    }
}

/// The damped least-squares step of a tree (as [`solve_step`] for a chain, with `J Jᵀ`
/// over every effector's rows, up to 24 × 24, solved by Cholesky): each turning joint's
/// coordinate change (`delta`) and the root's translation (`dt`); `e` is the pose's
/// residual ([`tree_residual`]).
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
fn tree_step(
    pose: &TreePose,
    e: &[F; ROWS],
    joints: &[Joint],
    s: &Shape,
    g: &TreeGoal,
    lambda: F,
    (held, rim, held_t): (&[[bool; 3]; TJ], &[V3; TJ], &[bool; 3]),
    delta: &mut [V3; TJ],
    dt: &mut V3,
) {
    let mut y = *e;
    let mut a = [[0.0; ROWS]; ROWS];
    let mut cols = [[[0.0; ROWS]; 3]; TJ];
    let mut axs = [[V3::ZERO; 3]; TJ];
    for i in 0..s.n {
        let d2 = g.d[i] * g.d[i];
        if !s.moves[i] || d2 == 0.0 {
            continue;
        }
        let parent = if i == 0 { s.parent_ms } else { pose.rot[s.parent[i]] };
        let mut ax = axes(&joints[i], parent, pose.rot[i], pose.q[i]);
        if rim[i] != V3::ZERO {
            ax[0] = ax[0] * rim[i].x + ax[1] * rim[i].y;
            ax[1] = V3::ZERO;
        }
        for k in 0..3 {
            if held[i][k] || ax[k] == V3::ZERO {
                ax[k] = V3::ZERO;
                continue;
            }
            let touched = tree_column(ax[k], i, pose, s, g, &mut cols[i][k]);
            add_column(&mut a, &cols[i][k], d2, touched, s);
        }
        axs[i] = ax;
    }
    let mut tcols = [[0.0; ROWS]; 3];
    let dt2 = g.dt * g.dt;
    for k in 0..3 {
        if s.reach[k] > 0.0 && !held_t[k] && dt2 > 0.0 {
            let mut touched = 0;
            for e in 0..s.m {
                tcols[k][s.row[e] + k] = g.sw[e];
                touched |= 1 << e;
            }
            add_column(&mut a, &tcols[k], dt2, touched, s);
        }
    }
    // The damping's floor: a share of the error `|e|` (as the chain's), or of `|Jᵀe| / |e|`
    // where that is smaller: it vanishes as a reachable target is reached (`e` → 0) and as
    // an unreachable one's closest pose is (the gradient `Jᵀe` → 0 there, while `e` stays),
    // so the descent keeps its pace on targets out of reach.
    let mut e2 = 0.0;
    for r in 0..s.rows {
        e2 += y[r] * y[r];
    }
    let mut g2 = 0.0;
    for i in 0..s.n {
        let d2 = g.d[i] * g.d[i];
        for k in 0..3 {
            let mut v = 0.0;
            for r in 0..s.rows {
                v += cols[i][k][r] * y[r];
            }
            g2 += v * v * d2;
        }
    }
    for k in 0..3 {
        let mut v = 0.0;
        for r in 0..s.rows {
            v += tcols[k][r] * y[r];
        }
        g2 += v * v * dt2;
    }
    let e = e2.sqrt();
    let floor = if e > 0.0 { ERROR_DAMPING * e.min(g2.sqrt() / e) } else { 0.0 };
    let lambda = lambda.max(floor);
    for r in 0..s.rows {
        a[r][r] += lambda * lambda;
    }
    cholesky_solve(&mut a, &mut y, s.rows);
    let dot = |c: &[F; ROWS]| {
        let mut sum = 0.0;
        for r in 0..s.rows {
            sum += c[r] * y[r];
        }
        sum
    };
    for i in 0..s.n {
        let d2 = g.d[i] * g.d[i];
        delta[i] = if !s.moves[i] || d2 == 0.0 {
            V3::ZERO
        } else {
            let c = &cols[i];
            let v = V3::new(dot(&c[0]), dot(&c[1]), dot(&c[2])) * d2;
            match joints[i].dof {
                // A free joint's axes are the model axes: its step is the world rotation vector.
                Dof::Free => v,
                _ if rim[i] != V3::ZERO => V3::new(rim[i].x * v.x, rim[i].y * v.x, v.z),
                _ => v,
            }
        };
    }
    *dt = V3::new(dot(&tcols[0]), dot(&tcols[1]), dot(&tcols[2])) * dt2;
}

/// `A⁻¹ b` into `b` for the symmetric positive definite `A` of size `m` given by its lower
/// triangle (Cholesky, in place).
#[allow(clippy::needless_range_loop)]
fn cholesky_solve(a: &mut [[F; ROWS]; ROWS], b: &mut [F; ROWS], m: usize) {
    for j in 0..m {
        let mut d = a[j][j];
        for k in 0..j {
            d -= a[j][k] * a[j][k];
        }
        let d = d.sqrt();
        a[j][j] = d;
        for i in j + 1..m {
            let mut v = a[i][j];
            for k in 0..j {
                v -= a[i][k] * a[j][k];
            }
            a[i][j] = v / d;
        }
    }
    for i in 0..m {
        let mut v = b[i];
        for k in 0..i {
            v -= a[i][k] * b[k];
        }
        b[i] = v / a[i][i];
    }
    for i in (0..m).rev() {
        let mut v = b[i];
        for k in i + 1..m {
            v -= a[k][i] * b[k];
        }
        b[i] = v / a[i][i];
    }
}
