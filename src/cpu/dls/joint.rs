// What every damped-least-squares descent reads of a joint, written once over the
// precision's types (`F`, `V3`, `Q`, `M3`) and its `sin_cos_`, `atan2_`, `axis_angle` and
// `PI_`: the coordinates a joint's limits bound, moved into them, spread over them, their
// world axes; and the small dense solves. Included by `mod.rs` for `f32` and `f64` with
// the chain's descent (`descent.rs`) and the tree's (`tree.rs`).

/// How a joint turns: freely (no limit: its local rotation, turned by world rotation
/// vectors), about its hinge (one angle), or as a ball (a swing `w` — its rotation vector in
/// the plane across the bone, on the limit's axes `u` and `v = b × u` — then a twist `τ`
/// about the bone): the coordinates the limits bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum Dof {
    #[default]
    Free,
    Hinge,
    Ball,
}

/// What the solve reads of each joint.
#[derive(Clone, Copy, Default)]
pub(crate) struct Joint {
    pub dof: Dof,
    /// The limit ([`crate::records::limit`] bits; 0 = none), its rest local rotation, the
    /// bone's direction in the joint's frame `b` (the twist axis), the hinge or cone axis `u`
    /// (unit, across `b`), `v = b × u`, and its angles.
    pub kind: u32,
    pub rest: Q,
    pub b: V3,
    pub u: V3,
    pub v: V3,
    pub range: [F; 4],
    /// The bone in the joint's frame (not unit).
    pub bone: V3,
}

/// How much closer a later start must end to be kept, and a step must come to be taken, as
/// shares of the error: ends and steps within rounding of each other (an unreachable
/// target's closest poses, drifting along the poses that keep the end where it is) are not
/// told apart by rounding, so both twins keep the same one.
pub(crate) const START_MARGIN: F = crate::constants::DLS_START_MARGIN as F;
pub(crate) const STEP_MARGIN: F = crate::constants::DLS_STEP_MARGIN as F;
/// Steps in a row that came no closer after which a start ends.
pub(crate) const STALL: u32 = crate::constants::DLS_STALL;
/// The least damping as a share of the error.
pub(crate) const ERROR_DAMPING: F = crate::constants::DLS_ERROR_DAMPING as F;

/// Start `k`'s coordinates of joint `i`, inside its limits: each coordinate at a share of
/// its range from two golden-ratio sequences over `k` and `i` (spread over the range, the
/// same on both twins); a swing within 0.7 of its cone (or of a radian without one).
pub(crate) fn spread(j: &Joint, k: F, i: F) -> V3 {
    let (kind, r) = (j.kind, j.range);
    let f = (k * 0.618_034 + i * 0.381_966).fract();
    let g = (k * 0.414_214 + i * 0.732_051).fract();
    match j.dof {
        Dof::Free => V3::ZERO,
        Dof::Hinge => V3::new(r[0] + (r[1] - r[0]) * f, 0.0, 0.0),
        Dof::Ball => {
            let (a, b) = if kind & LIMIT_CONE != 0 { (r[0], r[1]) } else { (1.0, 1.0) };
            let tau = if kind & LIMIT_TWIST != 0 { r[2] + (r[3] - r[2]) * g } else { 0.0 };
            V3::new(a * (2.0 * f - 1.0) * 0.7, b * (2.0 * g - 1.0) * 0.7, tau)
        }
    }
}

/// A joint's coordinates of the deviation `d` from its rest (see [`Dof`]).
pub(crate) fn coordinates(j: &Joint, d: Q) -> V3 {
    let d = if d.w < 0.0 { -d } else { d };
    let (b, u) = (j.b, j.u);
    match j.dof {
        Dof::Free => V3::ZERO,
        Dof::Hinge => {
            let s = d * b;
            let (y, x) = (s.dot(u.cross(b)), s.dot(b));
            V3::new(if x * x + y * y > 1e-12 { atan2_(y, x) } else { 0.0 }, 0.0, 0.0)
        }
        Dof::Ball => {
            let along = V3::new(d.x, d.y, d.z).dot(b);
            let t = Q::from_xyzw(b.x * along, b.y * along, b.z * along, d.w);
            let twist = if t.length_squared() > 1e-12 { t.normalize() } else { Q::IDENTITY };
            let tau = 2.0 * atan2_(V3::new(twist.x, twist.y, twist.z).dot(b), twist.w);
            let swing = d * twist.conjugate();
            let sv = V3::new(swing.x, swing.y, swing.z);
            let sl = sv.length();
            let w = if sl > 0.0 { sv * (2.0 * atan2_(sl, swing.w) / sl) } else { V3::ZERO };
            V3::new(w.dot(u), w.dot(j.v), tau)
        }
    }
}

/// Coordinates moved into the joint's limits: a hinge's angle and a twist clamped, a swing
/// outside its cone scaled back onto the rim (as `limit_deviation` does); a swing or twist
/// without a limit kept within half a turn.
pub(crate) fn project(j: &Joint, q: V3) -> V3 {
    let (kind, r) = (j.kind, j.range);
    match j.dof {
        Dof::Free => q,
        Dof::Hinge => V3::new(q.x.clamp(r[0], r[1]), 0.0, 0.0),
        Dof::Ball => {
            let tau = if kind & LIMIT_TWIST != 0 {
                q.z.clamp(r[2], r[3])
            } else {
                q.z - (2.0 * PI_) * (q.z * (0.5 / PI_)).round()
            };
            let (mut wu, mut wv) = (q.x, q.y);
            let e = if kind & LIMIT_CONE != 0 {
                (wu / r[0]) * (wu / r[0]) + (wv / r[1]) * (wv / r[1])
            } else {
                (wu * wu + wv * wv) / (PI_ * PI_)
            };
            if e > 1.0 {
                let k = 1.0 / e.sqrt();
                (wu, wv) = (wu * k, wv * k);
            }
            V3::new(wu, wv, tau)
        }
    }
}

/// The local rotation joint `j`'s coordinates `q` give (a free joint's is `free`, its
/// local rotation).
pub(crate) fn local_of(j: &Joint, q: V3, free: Q) -> Q {
    match j.dof {
        Dof::Free => free,
        Dof::Hinge => j.rest * axis_angle(j.u, q.x),
        Dof::Ball => {
            let w = j.u * q.x + j.v * q.y;
            let angle = w.length();
            let swing = if angle > 0.0 { axis_angle(w / angle, angle) } else { Q::IDENTITY };
            j.rest * swing * axis_angle(j.b, q.z)
        }
    }
}

/// The world axes a joint's coordinates turn it about: a hinge's axis; a ball's swing axes
/// (the swing's rotation vector `w` in its parent's rest frame, through the rotation's left
/// Jacobian) and its bone; a free joint's world axes. `parent`: the parent's model
/// rotation; `rot`, `q`: the joint's own and its coordinates.
pub(crate) fn axes(j: &Joint, parent: Q, rot: Q, q: V3) -> [V3; 3] {
    match j.dof {
        Dof::Free => [V3::X, V3::Y, V3::Z],
        Dof::Hinge => [parent * (j.rest * j.u), V3::ZERO, V3::ZERO],
        Dof::Ball => {
            let frame = parent * j.rest;
            let w = j.u * q.x + j.v * q.y;
            // J_l(w)·x = x + (1 − cos θ)/θ² · w × x + (θ − sin θ)/θ³ · w × (w × x), the
            // first factor as ½ (sin(θ/2) / (θ/2))², the second by its series for small θ
            // (no cancellation either way).
            let t2 = w.length_squared();
            let t = t2.sqrt();
            let (a, b) = if t > 0.1 {
                let (half_sin, _) = sin_cos_(0.5 * t);
                let (sin, _) = sin_cos_(t);
                let h = half_sin / (0.5 * t);
                (0.5 * h * h, (t - sin) / (t2 * t))
            } else {
                (
                    0.5 - t2 * (1.0 / 24.0) + t2 * t2 * (1.0 / 720.0),
                    1.0 / 6.0 - t2 * (1.0 / 120.0) + t2 * t2 * (1.0 / 5040.0),
                )
            };
            let jl = |x: V3| x + w.cross(x) * a + w.cross(w.cross(x)) * b;
            [frame * jl(j.u), frame * jl(j.v), rot * j.b]
        }
    }
}

/// The coordinates `q` of joint `j` that the step `d` would push out of their limits (a
/// hinge angle or twist at a bound, a swing on its cone's rim moving outward): held, or
/// moved along the rim (`rim`: the rim's direction in the swing's coordinates). Returns
/// whether any was.
pub(crate) fn hold_joint(j: &Joint, q: V3, d: V3, held: &mut [bool; 3], rim: &mut V3) -> bool {
    const AT: F = 1e-5;
    let (kind, r) = (j.kind, j.range);
    let mut any = false;
    match j.dof {
        Dof::Free => {}
        Dof::Hinge => {
            if (q.x <= r[0] + AT && d.x < 0.0) || (q.x >= r[1] - AT && d.x > 0.0) {
                held[0] = true;
                any = true;
            }
        }
        Dof::Ball => {
            if kind & LIMIT_TWIST != 0 && ((q.z <= r[2] + AT && d.z < 0.0) || (q.z >= r[3] - AT && d.z > 0.0)) {
                held[2] = true;
                any = true;
            }
            if kind & LIMIT_CONE != 0 {
                let e = (q.x / r[0]) * (q.x / r[0]) + (q.y / r[1]) * (q.y / r[1]);
                let normal = V3::new(q.x / (r[0] * r[0]), q.y / (r[1] * r[1]), 0.0);
                if e >= 1.0 - AT && normal.x * d.x + normal.y * d.y > 0.0 {
                    *rim = V3::new(-normal.y, normal.x, 0.0).normalize_or_zero();
                    any = true;
                }
            }
        }
    }
    any
}

/// `[v]ₓ`, the matrix of `x ↦ v × x`.
fn cross_matrix(v: V3) -> M3 {
    M3::from_cols(V3::new(0.0, v.z, -v.y), V3::new(-v.z, 0.0, v.x), V3::new(v.y, -v.x, 0.0))
}

/// `A⁻¹ e` for a symmetric positive definite `A` (Cholesky).
fn solve_spd(a: M3, e: V3) -> V3 {
    let (a00, a01, a02, a11, a12, a22) = (a.x_axis.x, a.y_axis.x, a.z_axis.x, a.y_axis.y, a.z_axis.y, a.z_axis.z);
    let l00 = a00.sqrt();
    let (l10, l20) = (a01 / l00, a02 / l00);
    let l11 = (a11 - l10 * l10).sqrt();
    let l21 = (a12 - l20 * l10) / l11;
    let l22 = (a22 - l20 * l20 - l21 * l21).sqrt();
    let z0 = e.x / l00;
    let z1 = (e.y - l10 * z0) / l11;
    let z2 = (e.z - l20 * z0 - l21 * z1) / l22;
    let y2 = z2 / l22;
    let y1 = (z1 - l21 * y2) / l11;
    let y0 = (z0 - l10 * y1 - l20 * y2) / l00;
    V3::new(y0, y1, y2)
}

/// `u vᵀ`.
fn outer(u: V3, v: V3) -> M3 {
    M3::from_cols(u * v.x, u * v.y, u * v.z)
}
