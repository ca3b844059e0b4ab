//! Procedural terrain for demos, benchmarks and tests.

use crowd_ik::crowd::Heightfield;
use crowd_ik::glam::Vec2;

/// Rolling hills with bumps (wavelengths from ~6 m to ~90 m): a sum of sines,
/// deterministic, about `amplitude` high.
#[must_use]
pub fn hills(origin: Vec2, cell: f32, nx: usize, nz: usize, amplitude: f32) -> Heightfield {
    Heightfield::from_fn(origin, cell, nx, nz, |x, z| {
        let h = 0.5 * (x * 0.23).sin() * (z * 0.17).cos()
            + 0.3 * (x * 0.071 + z * 0.113).sin()
            + 0.2 * (z * 0.41 - x * 0.05).cos()
            + 0.12 * (x * 1.1 + 0.3).sin() * (z * 0.9).cos();
        amplitude * h
    })
    .expect("hills: a valid grid")
}

/// [`hills`] cut into terraces `rise` high (each height rounded down to a multiple of
/// `rise`): every contour a step, so a crowd wandering over it crosses step edges at every
/// angle, its roots snapping up and down by `rise`. Keep `cell` small (a few cm) for sharp
/// risers.
#[must_use]
pub fn terraces(origin: Vec2, cell: f32, nx: usize, nz: usize, amplitude: f32, rise: f32) -> Heightfield {
    let mut hf = hills(origin, cell, nx, nz, amplitude);
    for h in &mut hf.heights {
        *h = (*h / rise).floor() * rise;
    }
    hf
}

/// A staircase along +z sampled every 2 cm, 2 m wide (x in `[-1, 1]`), from z = −2: flat
/// until z = 0, `steps` steps of `rise` up (each `run` deep), a 1 m landing, as many down,
/// flat again to z = 18.
#[must_use]
pub fn stairs(steps: usize, rise: f32, run: f32) -> Heightfield {
    let cell = 0.02;
    let (nx, nz) = (101, 1001);
    let origin = Vec2::new(-1.0, -2.0);
    let top = steps as f32 * run;
    let landing = 1.0;
    let mut heights = Vec::with_capacity(nx * nz);
    for j in 0..nz {
        let z = origin.y + j as f32 * cell;
        let up = (z / run).floor().clamp(0.0, steps as f32);
        let down = ((z - top - landing) / run).floor().clamp(-1.0, steps as f32) + 1.0;
        let h = (up - down).max(0.0) * rise;
        heights.extend(std::iter::repeat_n(h, nx));
    }
    Heightfield { origin, cell, nx, nz, heights }
}

/// A Terragen terrain file (`.ter`: a square or rectangular grid of 16-bit heights, as
/// Terragen writes it and assimp's test models ship it), its `nx × nz` heights laid on
/// `cell`-metre cells from `origin` and scaled so they span `relief` metres (lowest 0).
/// Heights are the file's own (`base + elevation × scale / 65536`); only their spacing and
/// range are the caller's, so one real terrain gives ground at any feature size.
pub fn terragen(bytes: &[u8], origin: Vec2, cell: f32, relief: f32) -> Result<Heightfield, String> {
    let word = |at: usize| bytes.get(at..at + 4).map(|b| [b[0], b[1], b[2], b[3]]);
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if bytes.get(..16) != Some(b"TERRAGENTERRAIN ".as_slice()) {
        return Err("not a Terragen terrain file".into());
    }
    let (mut at, mut size, mut xpts, mut ypts) = (16, None, None, None);
    loop {
        let tag = word(at).ok_or("the file ends before ALTW")?;
        match &tag {
            b"SIZE" => size = u16_at(at + 4),
            b"XPTS" => xpts = u16_at(at + 4),
            b"YPTS" => ypts = u16_at(at + 4),
            b"SCAL" => at += 8, // 12 bytes of scale: the caller's cell and relief stand
            b"CRAD" | b"CRVM" => {}
            b"ALTW" => break,
            _ => return Err(format!("unknown chunk {:?}", String::from_utf8_lossy(&tag))),
        }
        at += 8;
    }
    let size = usize::from(size.ok_or("no SIZE")?);
    let nx = xpts.map_or(size + 1, usize::from);
    let nz = ypts.map_or(size + 1, usize::from);
    let scale = f32::from(i16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
    let base = f32::from(i16::from_le_bytes([bytes[at + 6], bytes[at + 7]]));
    let data = bytes.get(at + 8..at + 8 + 2 * nx * nz).ok_or("the file holds fewer heights than its size")?;
    let raw: Vec<f32> =
        data.chunks_exact(2).map(|b| base + f32::from(i16::from_le_bytes([b[0], b[1]])) * scale / 65536.0).collect();
    let (lo, hi) = raw.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    if hi <= lo {
        return Err("a flat terrain has no relief to scale".into());
    }
    let heights = raw.iter().map(|h| (h - lo) / (hi - lo) * relief).collect();
    Heightfield::new(origin, cell, nx, nz, heights).map_err(|e| e.to_string())
}
