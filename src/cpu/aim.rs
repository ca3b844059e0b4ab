//! One-bone (aim) IK with the three constructions of docs/ALGORITHMS.md ("Aim") and the up-vector
//! (roll) constraint.

use glam::{Mat3, Quat, Vec3};

use super::math::{is_unit_quat, nlerp_identity, quat_from_axis_cos_sin, rotation_arc};
use crate::ChainError;

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
    /// the target not on the joint; the up target not on the aimed forward axis.
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
        let f = self.forward.try_normalize().ok_or(ChainError::InvalidParameter)?;
        let u = self.up.try_normalize().ok_or(ChainError::InvalidParameter)?;
        if f.dot(u).abs() > 1e-3 {
            return Err(ChainError::InvalidParameter);
        }
        let u = (u - f * f.dot(u)).normalize();
        // Joint basis: X = forward, Y = up, Z = forward × up (the yaw/pitch frame).
        let basis = Quat::from_mat3(&Mat3::from_cols(f, u, f.cross(u)));
        let frame = self.rotation_ms * basis;
        let p = frame.conjugate() * (self.target_ms - self.joint_ms);
        let p_len = p.length();
        if !(p_len > 1e-6 * (self.target_ms.length() + self.joint_ms.length()).max(1e-30)) {
            return Err(ChainError::TargetOnRoot);
        }
        let xy = (p.x * p.x + p.y * p.y).sqrt();
        let mut aim = match self.method {
            AimMethod::YawPitch => {
                // Straight along ±Z the yaw is undefined: 0 by definition.
                let (cy, sy) = if xy > 1e-7 * p_len { (p.x / xy, p.y / xy) } else { (1.0, 0.0) };
                let yaw = quat_from_axis_cos_sin(Vec3::Z, cy, sy);
                // Pitch about +Y by −asin(z/|p|) so +X rises toward +Z.
                let pitch = quat_from_axis_cos_sin(Vec3::Y, xy / p_len, -p.z / p_len);
                yaw * pitch
            }
            AimMethod::CrossProduct => {
                let x = p / p_len;
                let y = if xy > 1e-7 * p_len { Vec3::Z.cross(x).normalize() } else { Vec3::Y };
                Quat::from_mat3(&Mat3::from_cols(x, y, x.cross(y))).normalize()
            }
            AimMethod::ShortestArc => rotation_arc(Vec3::X, p / p_len),
        };
        if let Some(up_target) = self.up_target_ms {
            // Roll about the new forward axis: cos r = y/√(y²+z²), sin r = z/√(y²+z²).
            let q = (frame * aim).conjugate() * (up_target - self.joint_ms);
            let yz = (q.y * q.y + q.z * q.z).sqrt();
            if !(yz > 1e-4 * q.length()) {
                return Err(ChainError::PoleOnAxis);
            }
            aim *= quat_from_axis_cos_sin(Vec3::X, q.y / yz, q.z / yz);
        }
        let correction = nlerp_identity(basis * aim * basis.conjugate(), self.weight);
        let correction = if self.weight <= 0.0 { Quat::IDENTITY } else { correction };
        Ok(AimResult { rotation_ms: (self.rotation_ms * correction).normalize(), correction })
    }
}
