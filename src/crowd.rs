//! Crowd foot IK: the rig, the crowd and the ground (ALGORITHMS.md §6).
//!
//! Records here are shared with `shaders/foot_ik.wgsl` (keep in sync; `tests/layout.rs`
//! checks them). World space is Y-up; a character's model space maps to world by its root:
//! `world = root_rotation · (model · scale) + root_translation`.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec2, Vec3};

use crate::records::v3;
use crate::IkError;

/// Most legs per rig.
pub const MAX_LEGS: usize = 4;
/// Most joints per skeleton.
pub const MAX_SKELETON_JOINTS: usize = 1024;
/// "No parent" / "no role" in the GPU joint table.
pub const NONE: u32 = u32::MAX;

/// One joint of a model-space pose (as an animation system's local-to-model pass writes it).
/// 32 bytes. Keep in sync with `JointPose` in `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct JointPose {
    /// Model-space position (`.w` = 1).
    pub position_ms: [f32; 4],
    /// Model-space rotation.
    pub rotation_ms: [f32; 4],
}

impl JointPose {
    /// A joint pose from a position and a rotation.
    #[must_use]
    pub fn new(position_ms: Vec3, rotation_ms: Quat) -> Self {
        Self { position_ms: position_ms.extend(1.0).to_array(), rotation_ms: rotation_ms.to_array() }
    }
    /// Model-space position.
    #[must_use]
    pub fn position(&self) -> Vec3 {
        v3(self.position_ms)
    }
    /// Model-space rotation.
    #[must_use]
    pub fn rotation(&self) -> Quat {
        Quat::from_array(self.rotation_ms)
    }
}

/// One character of the crowd this frame. 48 bytes.
/// Keep in sync with `CharacterInput` in `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CharacterInput {
    /// World translation of the character's root; `.w` = uniform scale (> 0).
    pub root_ws: [f32; 4],
    /// World rotation of the root.
    pub root_rotation: [f32; 4],
    /// Weight per leg (rig order): 0 = keep FK (a lifted foot), 1 = full IK.
    pub foot_weights: [f32; 4],
}

impl CharacterInput {
    /// A character at `translation` with `rotation`, scale 1, every foot weight 1.
    #[must_use]
    pub fn new(translation: Vec3, rotation: Quat) -> Self {
        Self { root_ws: translation.extend(1.0).to_array(), root_rotation: rotation.to_array(), foot_weights: [1.0; 4] }
    }
    /// Sets the per-leg weights.
    #[must_use]
    pub fn with_foot_weights(mut self, weights: [f32; 4]) -> Self {
        self.foot_weights = weights;
        self
    }
    /// Sets the uniform scale.
    #[must_use]
    pub fn with_scale(mut self, scale: f32) -> Self {
        self.root_ws[3] = scale;
        self
    }
    /// Model space → world space.
    #[must_use]
    pub fn to_world(&self, p_ms: Vec3) -> Vec3 {
        Quat::from_array(self.root_rotation) * (p_ms * self.root_ws[3]) + v3(self.root_ws)
    }
}

/// A ground hit the caller found with its own physics ray cast, one per character and leg
/// (`characters × MAX_LEGS`, leg-major within a character). 32 bytes.
/// Keep in sync with `GroundHit` in `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GroundHit {
    /// World-space hit point; `.w` = 1 for a hit, 0 for none.
    pub point_ws: [f32; 4],
    /// World-space ground normal (unit, pointing up).
    pub normal_ws: [f32; 4],
}

impl GroundHit {
    /// A hit at `point` with `normal`.
    #[must_use]
    pub fn hit(point: Vec3, normal: Vec3) -> Self {
        Self { point_ws: point.extend(1.0).to_array(), normal_ws: normal.extend(0.0).to_array() }
    }
    /// No ground under that foot.
    #[must_use]
    pub fn miss() -> Self {
        Self::default()
    }
}

/// Per-character result of a foot-IK frame. 64 bytes.
/// Keep in sync with `FootResult` in `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FootResult {
    /// `x` = pelvis drop in world units (≥ 0, downward), `yzw` = 0.
    pub pelvis: [f32; 4],
    /// Per leg: height of the FK sole above the ground (world units; negative = below).
    pub sole_before: [f32; 4],
    /// Per leg: height of the solved sole above the ground.
    pub sole_after: [f32; 4],
    /// Per leg: [`foot`] bits, and a [`crate::ChainError`] code in bits 8..16.
    pub status: [u32; 4],
}

impl FootResult {
    /// The error code of leg `leg` (0 = none).
    #[must_use]
    pub fn error(&self, leg: usize) -> Option<crate::ChainError> {
        crate::ChainError::from_code((self.status[leg] >> 8) & 0xff)
    }
}

/// Per-leg status bits in [`FootResult::status`].
pub mod foot {
    /// Ground was found under the foot within the step window.
    pub const HIT: u32 = 1;
    /// IK was applied (hit, weight > 0, no error).
    pub const SOLVED: u32 = 2;
    /// The target was reached (two-bone/three-bone contract, weight ≥ 1).
    pub const REACHED: u32 = 4;
    /// The foot's alignment to the ground was clamped to the max foot angle.
    pub const ANGLE_LIMITED: u32 = 8;
    /// The knee limits clamped the leg.
    pub const KNEE_LIMITED: u32 = 16;
}

/// How a leg is solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LegKind {
    /// Hip, knee, ankle two-bone IK; the ankle is placed foot-height above the ground and the
    /// foot aligned to the ground normal (bipeds).
    TwoBone,
    /// Hip, knee, hock, hoof-tip pseudo three-bone IK; the tip (`toe`) is placed foot-height
    /// above the ground (quadruped hind legs). `blend` is the hock's blend ratio
    /// (0 = follow the limb, 1 = keep FK).
    PseudoThreeBone {
        /// Hock blend ratio in [0, 1].
        blend: f32,
    },
}

/// How a leg's knee pole (the side the knee points to) is chosen each frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum KneePole {
    /// Toward the FK knee: the knee's offset from the FK hip→ankle line, so the knee keeps
    /// pointing where the animation pointed it; a straight FK leg keeps its FK plane.
    #[default]
    FkKnee,
    /// Keep the FK bend plane: the hip turns the shortest way (`PoleMode::FkPlane`).
    FkPlane,
    /// Toward a fixed direction in the character's model space (e.g. forward, +Z).
    Direction(Vec3),
}

/// One leg of a rig.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegRig {
    /// Two-bone or pseudo three-bone.
    pub kind: LegKind,
    /// Joint indices in the skeleton: hip (thigh start), knee, ankle (hock), toe (hoof tip).
    pub joints: [usize; 4],
    /// Height of the reference joint above the sole: the ankle (two-bone) or the toe tip
    /// (pseudo three-bone).
    pub foot_height: f32,
    /// Knee hinge axis in the knee's local space (see `LimbSettings::mid_axis`).
    pub knee_axis: Vec3,
    /// Knee inner-angle limits `[min, max]` radians, if any.
    pub knee_limits: Option<(f32, f32)>,
    /// Most the foot may turn to align with the ground normal (radians).
    pub max_foot_angle: f32,
    /// The foot's up axis in the ankle's local space (two-bone legs).
    pub foot_up: Vec3,
    /// How the knee pole is chosen.
    pub knee_pole: KneePole,
}

/// Which joints form the legs and pelvis of a skeleton, and the foot-IK settings.
#[derive(Clone, Debug, PartialEq)]
pub struct FootRig {
    /// Parent of every joint (`None` for roots), parents before children.
    pub parents: Vec<Option<usize>>,
    /// The pelvis joint: lowered as a whole with everything below it.
    pub pelvis: usize,
    /// One to [`MAX_LEGS`] legs; their joints must descend from the pelvis.
    pub legs: Vec<LegRig>,
    /// Most the pelvis may drop (world units).
    pub max_pelvis_drop: f32,
    /// The ground ray starts this far above the foot: higher ground is ignored (a wall,
    /// ground above the hip).
    pub max_step_up: f32,
    /// ...and ends this far below it: deeper ground is ignored (a cliff, a hole).
    pub max_step_down: f32,
}

fn rig_error(msg: impl Into<String>) -> IkError {
    IkError::InvalidRig(msg.into())
}

impl FootRig {
    /// Checks the rig. Rules: 1 to 1024 joints, parents before children; 1 to 4 legs; every
    /// leg joint in range, each descending from the previous (hip from the pelvis); knee axis
    /// and foot up non-zero and finite; foot height ≥ 0; `0 ≤ θmin ≤ θmax ≤ π`; max foot angle
    /// in `[0, π]`; blend in `[0, 1]`; max pelvis drop, max step up and down ≥ 0 and finite.
    pub fn validate(&self) -> Result<(), IkError> {
        let n = self.parents.len();
        if n == 0 || n > MAX_SKELETON_JOINTS {
            return Err(rig_error(format!("{n} joints; 1 to {MAX_SKELETON_JOINTS} supported")));
        }
        for (j, p) in self.parents.iter().enumerate() {
            if let Some(p) = p {
                if *p >= j {
                    return Err(rig_error(format!("joint {j} has parent {p}: parents must come first")));
                }
            }
        }
        if self.pelvis >= n {
            return Err(rig_error(format!("pelvis {} out of range", self.pelvis)));
        }
        if self.legs.is_empty() || self.legs.len() > MAX_LEGS {
            return Err(rig_error(format!("{} legs; 1 to {MAX_LEGS} supported", self.legs.len())));
        }
        let finite = |x: f32| x.is_finite() && x >= 0.0;
        if !(finite(self.max_pelvis_drop) && finite(self.max_step_up) && finite(self.max_step_down)) {
            return Err(rig_error("max pelvis drop and step limits must be finite and ≥ 0"));
        }
        for (l, leg) in self.legs.iter().enumerate() {
            let mut above = self.pelvis;
            for &j in &leg.joints {
                if j >= n {
                    return Err(rig_error(format!("leg {l}: joint {j} out of range")));
                }
                if !self.descends(j, above) || j == above {
                    return Err(rig_error(format!("leg {l}: joint {j} does not descend from joint {above}")));
                }
                above = j;
            }
            let axis_ok = |v: Vec3| v.is_finite() && v.length_squared() > 1e-12;
            if !axis_ok(leg.knee_axis) || !axis_ok(leg.foot_up) {
                return Err(rig_error(format!("leg {l}: knee axis and foot up must be non-zero")));
            }
            if let KneePole::Direction(d) = leg.knee_pole {
                if !axis_ok(d) {
                    return Err(rig_error(format!("leg {l}: knee pole direction must be non-zero and finite")));
                }
            }
            if !finite(leg.foot_height) || !(0.0..=std::f32::consts::PI).contains(&leg.max_foot_angle) {
                return Err(rig_error(format!("leg {l}: foot height ≥ 0 and max foot angle in [0, π]")));
            }
            if let Some((lo, hi)) = leg.knee_limits {
                if !(0.0 <= lo && lo <= hi && hi <= std::f32::consts::PI) {
                    return Err(rig_error(format!("leg {l}: knee limits need 0 ≤ min ≤ max ≤ π")));
                }
            }
            if let LegKind::PseudoThreeBone { blend } = leg.kind {
                if !(0.0..=1.0).contains(&blend) {
                    return Err(rig_error(format!("leg {l}: blend must be in [0, 1]")));
                }
            }
        }
        Ok(())
    }

    /// `true` when `j` is `ancestor` or below it.
    fn descends(&self, mut j: usize, ancestor: usize) -> bool {
        loop {
            if j == ancestor {
                return true;
            }
            match self.parents[j] {
                Some(p) => j = p,
                None => return false,
            }
        }
    }

    /// Number of joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// The joint table the kernel reads: parents (`NONE` for roots) then roles
    /// (`leg * 4 + slot`, `NONE` for joints IK does not turn).
    #[must_use]
    pub fn joint_table(&self) -> Vec<u32> {
        let n = self.parents.len();
        let mut t: Vec<u32> = self.parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
        t.extend(std::iter::repeat_n(NONE, n));
        for (l, leg) in self.legs.iter().enumerate() {
            for (slot, &j) in leg.joints.iter().enumerate().take(3) {
                t[n + j] = (l * 4 + slot) as u32;
            }
        }
        t
    }

    /// The GPU rig record for this rig and ground.
    #[must_use]
    pub fn gpu_rig(&self, ground: &Ground) -> RigRecord {
        let mut r = RigRecord::zeroed();
        let (mode, grid, origin) = match ground {
            Ground::Heightfield(h) => (0, [h.nx as u32, h.nz as u32], [h.origin.x, h.origin.y, h.cell]),
            Ground::Hits => (1, [0, 0], [0.0, 0.0, 1.0]),
        };
        r.header = [self.parents.len() as u32, self.pelvis as u32, self.legs.len() as u32, mode];
        r.grid = [grid[0], grid[1], 0, 0];
        r.ground = [origin[0], origin[1], origin[2], 0.0];
        r.params = [self.max_pelvis_drop, self.max_step_up, self.max_step_down, 0.0];
        for (l, leg) in self.legs.iter().enumerate() {
            let (kind, blend) = match leg.kind {
                LegKind::TwoBone => (0, 1.0),
                LegKind::PseudoThreeBone { blend } => (1, blend),
            };
            let (limits, cos_min, cos_max) = match leg.knee_limits {
                Some((lo, hi)) => (crate::records::option::KNEE_LIMITS, lo.cos(), hi.cos()),
                None => (0, 1.0, -1.0),
            };
            let j = leg.joints.map(|j| j as u32);
            let (pole_rule, pole) = match leg.knee_pole {
                KneePole::FkKnee => (0, Vec3::ZERO),
                KneePole::FkPlane => (1, Vec3::ZERO),
                KneePole::Direction(d) => (2, d.normalize()),
            };
            r.legs[l] = LegRecord {
                joints: j,
                mode: [kind, limits, pole_rule, 0],
                knee_axis: leg.knee_axis.normalize().extend(leg.foot_height).to_array(),
                limits: [cos_min, cos_max, leg.max_foot_angle.cos(), leg.max_foot_angle.sin()],
                foot_up: leg.foot_up.normalize().extend(blend).to_array(),
                pole: pole.extend(0.0).to_array(),
            };
        }
        r
    }
}

/// One leg of [`RigRecord`]. 96 bytes. Keep in sync with `LegRecord` in
/// `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LegRecord {
    /// Hip, knee, ankle, toe joint indices.
    pub joints: [u32; 4],
    /// Kind (0 two-bone, 1 pseudo three-bone), option bits (knee limits), knee pole rule
    /// (0 FK knee, 1 FK plane, 2 direction), 0.
    pub mode: [u32; 4],
    /// Knee-local hinge axis (unit); `.w` = foot height.
    pub knee_axis: [f32; 4],
    /// cos θmin, cos θmax, cos and sin of the max foot angle.
    pub limits: [f32; 4],
    /// Ankle-local foot up axis (unit); `.w` = three-bone blend ratio.
    pub foot_up: [f32; 4],
    /// Model-space knee pole direction for rule 2 (unit), else zero.
    pub pole: [f32; 4],
}

/// The rig as the foot-IK kernel reads it (a read-only storage buffer). 448 bytes.
/// Keep in sync with `RigRecord` in `shaders/foot_ik.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct RigRecord {
    /// Joint count, pelvis, leg count, ground mode (0 heightfield, 1 caller hits).
    pub header: [u32; 4],
    /// Heightfield samples along x and z, 0, 0.
    pub grid: [u32; 4],
    /// Heightfield origin x, origin z, cell size, 0.
    pub ground: [f32; 4],
    /// Max pelvis drop, max step up, max step down, 0.
    pub params: [f32; 4],
    /// The legs (unused entries zero).
    pub legs: [LegRecord; MAX_LEGS],
}

const _: () = assert!(std::mem::size_of::<JointPose>() == 32);
const _: () = assert!(std::mem::size_of::<CharacterInput>() == 48);
const _: () = assert!(std::mem::size_of::<GroundHit>() == 32);
const _: () = assert!(std::mem::size_of::<FootResult>() == 64);
const _: () = assert!(std::mem::size_of::<LegRecord>() == 96);
const _: () = assert!(std::mem::size_of::<RigRecord>() == 448);
const _: () = assert!(std::mem::offset_of!(RigRecord, legs) == 64);

/// The ground under the crowd.
#[derive(Clone, Debug, PartialEq)]
pub enum Ground {
    /// A heightfield sampled bilinearly (kept in a GPU buffer).
    Heightfield(Heightfield),
    /// Hits the caller supplies per character and leg each frame ([`GroundHit`]).
    Hits,
}

/// A regular grid of heights over the XZ plane, sampled bilinearly with the exact normal of
/// the bilinear patch. Non-finite heights are holes (no ground there).
#[derive(Clone, Debug, PartialEq)]
pub struct Heightfield {
    /// World X and Z of sample (0, 0).
    pub origin: Vec2,
    /// Distance between samples.
    pub cell: f32,
    /// Samples along X.
    pub nx: usize,
    /// Samples along Z.
    pub nz: usize,
    /// Heights, row-major: sample (i, j) at `heights[j * nx + i]`, world X = origin.x + i·cell.
    pub heights: Vec<f32>,
}

impl Heightfield {
    /// A heightfield from its parts. Rules: `nx, nz ≥ 2`, `heights.len() == nx·nz`,
    /// `cell > 0` and finite, origin finite. Non-finite heights are allowed (holes).
    pub fn new(origin: Vec2, cell: f32, nx: usize, nz: usize, heights: Vec<f32>) -> Result<Self, IkError> {
        let h = Self { origin, cell, nx, nz, heights };
        h.validate()?;
        Ok(h)
    }

    /// Checks the rules of [`Heightfield::new`].
    pub fn validate(&self) -> Result<(), IkError> {
        let bad = |m: String| Err(IkError::InvalidHeightfield(m));
        if self.nx < 2 || self.nz < 2 {
            return bad(format!("{}x{} samples; at least 2x2", self.nx, self.nz));
        }
        if self.heights.len() != self.nx * self.nz {
            return bad(format!("{} heights for {}x{} samples", self.heights.len(), self.nx, self.nz));
        }
        if !(self.cell > 0.0 && self.cell.is_finite() && self.origin.is_finite()) {
            return bad("cell size must be > 0 and the origin finite".into());
        }
        if self.nx > u32::MAX as usize / self.nz.max(1) {
            return bad("too many samples".into());
        }
        Ok(())
    }

    /// Rolling hills with bumps (wavelengths from ~6 m to ~90 m): a sum of sines,
    /// deterministic, about `amplitude` high.
    #[must_use]
    pub fn hills(origin: Vec2, cell: f32, nx: usize, nz: usize, amplitude: f32) -> Self {
        let mut heights = Vec::with_capacity(nx * nz);
        for j in 0..nz {
            for i in 0..nx {
                let (x, z) = (origin.x + i as f32 * cell, origin.y + j as f32 * cell);
                let h = 0.5 * (x * 0.23).sin() * (z * 0.17).cos()
                    + 0.3 * (x * 0.071 + z * 0.113).sin()
                    + 0.2 * (z * 0.41 - x * 0.05).cos()
                    + 0.12 * (x * 1.1 + 0.3).sin() * (z * 0.9).cos();
                heights.push(amplitude * h);
            }
        }
        Self { origin, cell, nx, nz, heights }
    }

    /// Loads a `.npy` file holding a 2-D little-endian `float32` (`<f4`) or `float64` (`<f8`)
    /// array in C order, shape `(nz, nx)`.
    pub fn from_npy(bytes: &[u8], origin: Vec2, cell: f32) -> Result<Self, IkError> {
        let bad = |m: &str| IkError::Parse(format!("npy: {m}"));
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err(bad("not a .npy file"));
        }
        let (header_len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
            _ => return Err(bad("unsupported version")),
        };
        let header = bytes.get(start..start + header_len).ok_or_else(|| bad("truncated header"))?;
        let header = std::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
        let field = |key: &str| -> Option<&str> {
            let at = header.find(key)? + key.len();
            let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
            Some(rest)
        };
        let descr = field("'descr'").ok_or_else(|| bad("no descr"))?;
        let width = if descr.starts_with("'<f4'") {
            4
        } else if descr.starts_with("'<f8'") {
            8
        } else {
            return Err(bad("only little-endian float32/float64 supported"));
        };
        if field("'fortran_order'").is_some_and(|f| f.starts_with("True")) {
            return Err(bad("Fortran order not supported"));
        }
        let shape = field("'shape'").ok_or_else(|| bad("no shape"))?;
        let inner = shape.strip_prefix('(').and_then(|s| s.split(')').next()).ok_or_else(|| bad("bad shape"))?;
        let dims: Vec<usize> = inner
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse())
            .collect::<Result<_, _>>()
            .map_err(|_| bad("bad shape"))?;
        let [nz, nx] = dims[..] else { return Err(bad("expected a 2-D array")) };
        let data = &bytes[start + header_len..];
        if data.len() < nx * nz * width {
            return Err(bad("truncated data"));
        }
        let heights = data
            .chunks_exact(width)
            .take(nx * nz)
            .map(|c| {
                if width == 4 {
                    f32::from_le_bytes([c[0], c[1], c[2], c[3]])
                } else {
                    f64::from_le_bytes(c.try_into().unwrap()) as f32
                }
            })
            .collect();
        Self::new(origin, cell, nx, nz, heights)
    }

    /// Loads a raw grid of little-endian `f32`, `nx × nz`, row-major (rows along X).
    pub fn from_raw_f32(bytes: &[u8], nx: usize, nz: usize, origin: Vec2, cell: f32) -> Result<Self, IkError> {
        if bytes.len() != nx * nz * 4 {
            return Err(IkError::Parse(format!("raw heightfield: {} bytes for {nx}x{nz} f32", bytes.len())));
        }
        let heights = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        Self::new(origin, cell, nx, nz, heights)
    }

    /// Writes the heightfield as a `.npy` file (`<f4`, shape `(nz, nx)`).
    #[must_use]
    pub fn to_npy(&self) -> Vec<u8> {
        let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", self.nz, self.nx);
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        for h in &self.heights {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out
    }

    /// Height and unit normal at world `(x, z)`, or `None` outside the grid or over a hole.
    /// The CPU twin of `sample_heightfield` in `shaders/foot_ik.wgsl`.
    #[must_use]
    pub fn sample(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        crate::cpu::foot_ik::sample_heightfield(
            &self.heights,
            [self.nx as u32, self.nz as u32],
            [self.origin.x, self.origin.y, self.cell],
            x,
            z,
        )
    }
}
