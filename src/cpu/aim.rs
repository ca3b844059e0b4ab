//! One-bone (aim) IK with the three constructions of docs/ALGORITHMS.md ("Aim") and the up-vector
//! (roll) constraint.

use glam::{Mat3, Quat, Vec3};

use super::math::{is_unit_quat, nlerp_identity, quat_from_axis_cos_sin, rotation_arc};
use crate::error::ChainError;

/// How the aim rotation is built. All three point the forward axis at the target; they
/// differ only in roll, and an up target (roll constraint) makes all three agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AimMethod {
    /// Yaw about the joint's third axis, then pitch about its up axis, from trigonometric
    /// ratios of the target in joint space No `acos`/`atan`.
    #[default]
    YawPitch,
    /// New forward axis toward the target, the up axis re-orthogonalised against the old
    /// third axis. Same result as [`AimMethod::YawPitch`].
    CrossProduct,
    /// Shortest arc from the current forward direction to the target direction
    /// (Unity's `FromToRotation`), pre-multiplied. Same forward axis, different roll.
    ShortestArc,
}

/// Turns one joint so that its `forward` axis points at a target, optionally rolling it so
/// its `up` axis points toward an up target (ozz-animation's `IKAimJob` contract:
/// corrections are local, weight nlerps from identity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimJob {
    /// Model-space joint position.
    pub joint_ms: Vec3,
    /// Model-space joint rotation (unit).
    pub rotation_ms: Quat,
    /// Model-space point to aim at.
    pub target_ms: Vec3,
    /// The joint's forward axis, local space (default +X).
    pub forward: Vec3,
    /// The joint's up axis, local space, perpendicular to `forward` (default +Y). Choose
    /// the `±Y`/`±Z` of the classic up-vector constraint by passing that axis here.
    pub up: Vec3,
    /// Model-space point the up axis should point toward after aiming (roll constraint).
    pub up_target_ms: Option<Vec3>,
    /// Construction of the aim rotation.
    pub method: AimMethod,
    /// ≤ 0 untouched, ≥ 1 full, nlerp in between.
    pub weight: f32,
}

/// Output of [`AimJob::run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimResult {
    /// New model-space rotation.
    pub rotation_ms: Quat,
    /// Local correction (`local = local * correction`), `w ≥ 0`.
    pub correction: Quat,
}

impl AimJob {
    /// An aim job with forward +X, up +Y, no up target, [`AimMethod::YawPitch`], weight 1.
    #[must_use]
    pub fn new(joint_ms: Vec3, rotation_ms: Quat, target_ms: Vec3) -> Self {
        Self {
            joint_ms,
            rotation_ms,
            target_ms,
            forward: Vec3::X,
            up: Vec3::Y,
            up_target_ms: None,
            method: AimMethod::YawPitch,
            weight: 1.0,
        }
    }

    /// Checks the job. Rules: every input finite; `rotation_ms` a unit quaternion;
    /// `forward` and `up` non-zero and perpendicular (|cos| ≤ 1e-3 after normalising);
    /// the target not on the joint; the up target not within 1e-3 rad of the aimed forward
    /// axis (closer, the roll is ill-conditioned: float rounding of the inputs alone turns
    /// it by more than 1e-4 rad).
    pub fn validate(&self) -> Result<(), ChainError> {
        self.solve().map(|_| ())
    }

    /// Validates, then solves.
    pub fn run(&self) -> Result<AimResult, ChainError> {
        self.solve()
    }

    fn solve(&self) -> Result<AimResult, ChainError> {
        let finite = self.joint_ms.is_finite()
            && self.rotation_ms.is_finite()
            && self.target_ms.is_finite()
            && self.forward.is_finite()
            && self.up.is_finite()
            && self.up_target_ms.is_none_or(Vec3::is_finite)
            && self.weight.is_finite();
        if !finite {
            return Err(ChainError::NonFinite);
        }
        if !is_unit_quat(self.rotation_ms) {
            return Err(ChainError::NotNormalized);
        }
        let axes = Axes::new(self.forward, self.up).ok_or(ChainError::InvalidParameter)?;
        let dir = target_direction(self.joint_ms, self.target_ms).ok_or(ChainError::TargetOnRoot)?;
        let p = axes.coords(self.rotation_ms.conjugate() * dir);
        let mut aim = match self.method {
            AimMethod::YawPitch => aim_in_axes(p, false),
            AimMethod::ShortestArc => aim_in_axes(p, true),
            AimMethod::CrossProduct => {
                let p_len = p.length();
                let xy = (p.x * p.x + p.y * p.y).sqrt();
                let x = p / p_len;
                let y = if xy > 1e-7 * p_len { Vec3::Z.cross(x).normalize() } else { Vec3::Y };
                Quat::from_mat3(&Mat3::from_cols(x, y, x.cross(y))).normalize()
            }
        };
        aim = axes.rotation(aim);
        if let Some(up_target) = self.up_target_ms {
            aim = roll_toward(axes, self.rotation_ms, aim, up_target - self.joint_ms).ok_or(ChainError::PoleOnAxis)?;
        }
        let correction = if self.weight <= 0.0 { Quat::IDENTITY } else { nlerp_identity(aim, self.weight) };
        Ok(AimResult { rotation_ms: (self.rotation_ms * correction).normalize(), correction })
    }
}

/// A joint's aim axes in its local frame: `f` = forward, `u` = up (made exactly
/// perpendicular), `s = f × u`. The aim constructions work in these coordinates
/// (`x` along `f`, `y` along `u`, `z` along `s`); `shaders/shared/aim.wgsl` is the twin.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Axes {
    pub f: Vec3,
    pub u: Vec3,
    pub s: Vec3,
}

impl Axes {
    /// The axes of `forward`/`up`; `None` when either is (nearly) zero or they are not
    /// perpendicular within 1e-3 (cosine, once normalised).
    pub(crate) fn new(forward: Vec3, up: Vec3) -> Option<Self> {
        let (f2, u2) = (forward.length_squared(), up.length_squared());
        if !(f2 > 1e-12 && u2 > 1e-12) {
            return None;
        }
        let f = forward / f2.sqrt();
        let u = up / u2.sqrt();
        let c = f.dot(u);
        if c.abs() > 1e-3 {
            return None;
        }
        let u = (u - f * c).normalize();
        Some(Self { f, u, s: f.cross(u) })
    }

    /// A local vector in axis coordinates.
    #[inline]
    pub(crate) fn coords(self, v: Vec3) -> Vec3 {
        Vec3::new(v.dot(self.f), v.dot(self.u), v.dot(self.s))
    }

    /// Axis coordinates back to a local vector.
    #[inline]
    pub(crate) fn vector(self, p: Vec3) -> Vec3 {
        self.f * p.x + self.u * p.y + self.s * p.z
    }

    /// A rotation written in axis coordinates, as a local rotation (`B·q·B⁻¹`).
    #[inline]
    pub(crate) fn rotation(self, q: Quat) -> Quat {
        let v = self.vector(Vec3::new(q.x, q.y, q.z));
        Quat::from_xyzw(v.x, v.y, v.z, q.w)
    }
}

/// `target − joint`, or `None` when the target is on the joint: closer than 1e-6 of the
/// larger of their distances from the origin, or than 1e-12 in all
/// ([`MIN_AXIS_LENGTH2`](crate::constants::MIN_AXIS_LENGTH2): a shorter difference has
/// subnormal squares, which GPUs may flush to zero).
#[inline]
pub(crate) fn target_direction(joint: Vec3, target: Vec3) -> Option<Vec3> {
    let d = target - joint;
    (d.length() > 1e-6 * (target.length() + joint.length()).max(1e-30)
        && d.length_squared() >= crate::constants::MIN_AXIS_LENGTH2)
        .then_some(d)
}

/// The rotation, in axis coordinates, that turns `x` toward `p` (non-zero): yaw about `z`
/// then pitch about `y` from trigonometric ratios (no roll about the new forward axis
/// relative to the joint's frame), or the shortest arc.
#[inline]
pub(crate) fn aim_in_axes(p: Vec3, shortest_arc: bool) -> Quat {
    let p_len = p.length();
    if shortest_arc {
        return rotation_arc(Vec3::X, p / p_len);
    }
    let xy = (p.x * p.x + p.y * p.y).sqrt();
    // Straight along ±z the yaw is undefined: 0 by definition.
    let (cy, sy) = if xy > 1e-7 * p_len { (p.x / xy, p.y / xy) } else { (1.0, 0.0) };
    let yaw = quat_from_axis_cos_sin(Vec3::Z, cy, sy);
    // Pitch about +y by −asin(z/|p|) so +x rises toward +z.
    let pitch = quat_from_axis_cos_sin(Vec3::Y, xy / p_len, -p.z / p_len);
    yaw * pitch
}

/// `aim` (local) followed by the roll about the new forward axis that points the up axis
/// toward `up_dir` (model-space direction from the joint); `None` when `up_dir` is within
/// 1e-3 rad (sine) of the aimed forward axis or shorter than 1e-12 (as in
/// [`target_direction`]).
#[inline]
pub(crate) fn roll_toward(axes: Axes, rotation_ms: Quat, aim: Quat, up_dir: Vec3) -> Option<Quat> {
    let q = axes.coords((rotation_ms * aim).conjugate() * up_dir);
    let yz = (q.y * q.y + q.z * q.z).sqrt();
    if !(yz > 1e-3 * q.length() && up_dir.length_squared() >= crate::constants::MIN_AXIS_LENGTH2) {
        return None;
    }
    Some(aim * quat_from_axis_cos_sin(axes.f, q.y / yz, q.z / yz))
}
