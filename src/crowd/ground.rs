//! The ground under the crowd: a heightfield (with its `.npy` and raw loaders) or hits the
//! caller supplies, and the heightfield sampling both foot-IK twins use.

use glam::{Vec2, Vec3};

use crate::error::IkError;

/// The ground under the crowd.
#[derive(Clone, Debug, PartialEq)]
pub enum Ground {
    /// A heightfield sampled bilinearly (kept in a GPU buffer).
    Heightfield(Heightfield),
    /// Hits the caller supplies per character and leg each frame ([`GroundHit`](super::GroundHit)).
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
    /// `cell` in `[1e-6, 1e9]` (finer cells make slopes of 1e9-unit steps overflow f32), origin finite, finite heights within ±1e9
    /// ([`crate::constants::MAX_WORLD_COORDINATE`]). Non-finite heights are allowed (holes).
    pub fn new(origin: Vec2, cell: f32, nx: usize, nz: usize, heights: Vec<f32>) -> Result<Self, IkError> {
        let h = Self { origin, cell, nx, nz, heights };
        h.validate()?;
        Ok(h)
    }

    /// A heightfield sampled from a function of world `x, z` at every grid point (`nx` by
    /// `nz` samples, `cell` apart, from `origin`), with the rules of [`Heightfield::new`].
    ///
    /// ```
    /// use crowd_ik::crowd::Heightfield;
    /// use crowd_ik::glam::Vec2;
    /// // 100 × 100 m of rolling hills, a sample every 0.5 m.
    /// let hills = Heightfield::from_fn(Vec2::new(-50.0, -50.0), 0.5, 201, 201, |x, z| 0.3 * (0.4 * x).sin() * (0.3 * z).cos())?;
    /// assert_eq!(hills.sample(0.0, 0.0).map(|(y, _)| y), Some(0.0));
    /// # Ok::<(), crowd_ik::IkError>(())
    /// ```
    pub fn from_fn(
        origin: Vec2,
        cell: f32,
        nx: usize,
        nz: usize,
        height: impl Fn(f32, f32) -> f32,
    ) -> Result<Self, IkError> {
        let heights = (0..nz)
            .flat_map(|j| (0..nx).map(move |i| (i, j)))
            .map(|(i, j)| height(origin.x + i as f32 * cell, origin.y + j as f32 * cell))
            .collect();
        Self::new(origin, cell, nx, nz, heights)
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
        if !(self.cell >= 1e-6 && self.cell <= 1e9 && self.origin.is_finite()) {
            return bad("cell size must be in [1e-6, 1e9] and the origin finite".into());
        }
        if self.nx > u32::MAX as usize / self.nz.max(1) {
            return bad("too many samples".into());
        }
        let limit = crate::constants::MAX_WORLD_COORDINATE;
        // Run on every job over the whole grid, so one branch-free pass first: a height is
        // finite and past the limit when its magnitude's bits lie between the limit's and
        // infinity's (NaN's lie above), one unsigned compare per height.
        let (past, span) = (limit.to_bits() + 1, f32::INFINITY.to_bits() - (limit.to_bits() + 1));
        let any = self
            .heights
            .iter()
            .fold(0u32, |any, h| any | u32::from((h.to_bits() & 0x7fff_ffff).wrapping_sub(past) < span));
        if any != 0 {
            if let Some(i) = self.heights.iter().position(|h| h.is_finite() && h.abs() > limit) {
                return bad(format!(
                    "height {} at sample {i} is past ±1e9 (holes are NaN or infinite)",
                    self.heights[i]
                ));
            }
        }
        Ok(())
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
        // Checked: a header may ask for any shape; only what the data holds is accepted.
        let count = nx.checked_mul(nz).filter(|c| c.checked_mul(width).is_some_and(|b| b <= data.len()));
        let Some(count) = count else { return Err(bad("the shape asks for more data than the file holds")) };
        let heights = data
            .chunks_exact(width)
            .take(count)
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
        if nx.checked_mul(nz).and_then(|c| c.checked_mul(4)) != Some(bytes.len()) {
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
    /// The CPU twin of `sample_heightfield` in `shaders/kernels/foot_ik.wgsl`.
    #[must_use]
    pub fn sample(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        sample_heightfield(
            &self.heights,
            [self.nx as u32, self.nz as u32],
            [self.origin.x, self.origin.y, self.cell],
            x,
            z,
        )
    }
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// The CPU twin of `sample_heightfield` in `shaders/kernels/foot_ik.wgsl`: bilinear height and the bilinear patch's exact unit normal at world `(x, z)` (within `HEIGHTFIELD_EDGE_BAND` of a cell of a cell edge, blended with the neighbour's: continuous); `None`
/// outside the grid or when a corner is not finite (a hole). `grid` = samples along X and Z,
/// `ground` = origin X, origin Z, cell size.
#[must_use]
#[inline]
pub fn sample_heightfield(heights: &[f32], grid: [u32; 2], ground: [f32; 3], x: f32, z: f32) -> Option<(f32, Vec3)> {
    let c = heightfield_cell(heights, grid, ground, x, z)?;
    let (nx, nz) = (grid[0], grid[1]);
    let at = |i: u32, j: u32| heights[(j * nx + i) as usize];
    // The slope across a cell edge jumps; within `HEIGHTFIELD_EDGE_BAND` of a cell of the
    // edge it blends into the neighbour's (half of each on the edge), so the normal is
    // continuous and two points a rounding apart never see different cells' slopes.
    let band = crate::constants::HEIGHTFIELD_EDGE_BAND;
    let mut dhdx = (c.h10 - c.h00) * (1.0 - c.fz) + (c.h11 - c.h01) * c.fz;
    if c.fx < band && c.i > 0 {
        let (a, b) = (at(c.i - 1, c.j), at(c.i - 1, c.j + 1));
        let other = (c.h00 - a) * (1.0 - c.fz) + (c.h01 - b) * c.fz;
        if other.is_finite() {
            dhdx = other + (dhdx - other) * (0.5 + 0.5 * c.fx / band);
        }
    } else if c.fx > 1.0 - band && c.i + 2 < nx {
        let (a, b) = (at(c.i + 2, c.j), at(c.i + 2, c.j + 1));
        let other = (a - c.h10) * (1.0 - c.fz) + (b - c.h11) * c.fz;
        if other.is_finite() {
            dhdx = other + (dhdx - other) * (0.5 + 0.5 * (1.0 - c.fx) / band);
        }
    }
    let mut dhdz = (c.h01 - c.h00) * (1.0 - c.fx) + (c.h11 - c.h10) * c.fx;
    if c.fz < band && c.j > 0 {
        let (a, b) = (at(c.i, c.j - 1), at(c.i + 1, c.j - 1));
        let other = (c.h00 - a) * (1.0 - c.fx) + (c.h10 - b) * c.fx;
        if other.is_finite() {
            dhdz = other + (dhdz - other) * (0.5 + 0.5 * c.fz / band);
        }
    } else if c.fz > 1.0 - band && c.j + 2 < nz {
        let (a, b) = (at(c.i, c.j + 2), at(c.i + 1, c.j + 2));
        let other = (a - c.h01) * (1.0 - c.fx) + (b - c.h11) * c.fx;
        if other.is_finite() {
            dhdz = other + (dhdz - other) * (0.5 + 0.5 * (1.0 - c.fz) / band);
        }
    }
    Some((c.height(), Vec3::new(-dhdx / ground[2], 1.0, -dhdz / ground[2]).normalize()))
}

#[doc(hidden)] // kernel plumbing: the packed form both twins read
/// The height of [`sample_heightfield`] alone (no normal): what measuring a sole point
/// needs. Same arithmetic, same bits.
#[must_use]
#[inline]
pub fn heightfield_height(heights: &[f32], grid: [u32; 2], ground: [f32; 3], x: f32, z: f32) -> Option<f32> {
    heightfield_cell(heights, grid, ground, x, z).map(|c| c.height())
}

/// The four corner heights of the cell under `(x, z)` and the position inside it.
struct Cell {
    i: u32,
    j: u32,
    h00: f32,
    h10: f32,
    h01: f32,
    h11: f32,
    fx: f32,
    fz: f32,
}

impl Cell {
    #[inline]
    fn height(&self) -> f32 {
        let h0 = self.h00 + (self.h10 - self.h00) * self.fx;
        let h1 = self.h01 + (self.h11 - self.h01) * self.fx;
        h0 + (h1 - h0) * self.fz
    }
}

#[inline]
fn heightfield_cell(heights: &[f32], grid: [u32; 2], ground: [f32; 3], x: f32, z: f32) -> Option<Cell> {
    let (nx, nz) = (grid[0], grid[1]);
    let u = (x - ground[0]) / ground[2];
    let v = (z - ground[1]) / ground[2];
    if !(u >= 0.0 && v >= 0.0 && u <= (nx - 1) as f32 && v <= (nz - 1) as f32) {
        return None;
    }
    // u, v ≥ 0 here, where truncation is floor (and no libm call on baseline x86-64).
    let i = (u as u32).min(nx - 2);
    let j = (v as u32).min(nz - 2);
    let at = |i: u32, j: u32| heights[(j * nx + i) as usize];
    let c = Cell {
        i,
        j,
        h00: at(i, j),
        h10: at(i + 1, j),
        h01: at(i, j + 1),
        h11: at(i + 1, j + 1),
        fx: u - i as f32,
        fz: v - j as f32,
    };
    (c.h00.is_finite() && c.h10.is_finite() && c.h01.is_finite() && c.h11.is_finite()).then_some(c)
}
