//! Procedural terrain for demos, benchmarks and tests.

use crowd_ik::crowd::Heightfield;
use crowd_ik::glam::Vec2;

/// Rolling hills with bumps (wavelengths from ~6 m to ~90 m): a sum of sines,
/// deterministic, about `amplitude` high.
#[must_use]
pub fn hills(origin: Vec2, cell: f32, nx: usize, nz: usize, amplitude: f32) -> Heightfield {
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
    Heightfield { origin, cell, nx, nz, heights }
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
