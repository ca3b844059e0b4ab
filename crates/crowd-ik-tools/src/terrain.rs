//! Procedural terrain for demos, benchmarks and tests.

use crowd_ik::crowd::Heightfield;
use glam::Vec2;

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
