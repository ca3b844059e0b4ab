//! Renders a crowd walking over lit hills, headless (works on lavapipe), from the skinning
//! palette the crate writes on the GPU, and saves `crowd.png`.
//!
//! `cargo run --release --example render -- [--characters 1000] [--frames 30] [--compare]
//!     [--out crowd.png] [--character path.glb [--clip NAME] [--scale S] | --boxes]`
//!
//! The walkers are Khronos' Cesium Man (its own mesh, skin and walk clip, from
//! `tests/data/gltf/`), your glTF character with `--character`, or the procedural box walker
//! with `--boxes`. Every frame is one encoder and one submit: upload this frame's characters
//! and FK poses, foot IK, skinning palette, render. Nothing is read back until the final
//! image. `--compare` renders the same frame with IK off (left) beside IK on (right).
//!
//! `--closeup` shows one walker up close, from the side, over a slope and over stairs, IK
//! off beside IK on and foot placement across frames, into `closeup.png` (same character
//! flags).
//!
//! `--steps` shows foot placement across frames up close: one walker climbing stairs (18 cm
//! steps, its root set from the ground under it), six frames side by side, the stateless
//! solve above and foot placement below (blue shoes: the soles), into `steps.png`, and a plot
//! of the pelvis height and the left sole's height over time in both modes into `steps.svg`.

use crowd_ik::crowd::Ground;
use crowd_ik::glam::{Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::character::{flag_value, Walkers};
use crowd_ik_tools::image::png;
use crowd_ik_tools::preview::{Camera, Preview};

mod closeup;
mod steps;

/// Square `tile × tile` RGBA images laid out in rows (each row a list of tiles, left to
/// right): the joined image's width, height and bytes.
pub fn stitch(rows: &[Vec<Vec<u8>>], tile: u32) -> (u32, u32, Vec<u8>) {
    let tile = tile as usize;
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let (w, h) = (tile * columns, tile * rows.len());
    let mut rgba = vec![0u8; w * h * 4];
    for (row, images) in rows.iter().enumerate() {
        for (col, image) in images.iter().enumerate() {
            for y in 0..tile {
                let src = &image[y * tile * 4..(y + 1) * tile * 4];
                let at = ((row * tile + y) * w + col * tile) * 4;
                rgba[at..at + src.len()].copy_from_slice(src);
            }
        }
    }
    (w as u32, h as u32, rgba)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    crowd_ik_tools::quiet_headless_gpu();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--steps") {
        return steps::render();
    }
    if args.iter().any(|a| a == "--closeup") {
        return closeup::render(&args);
    }
    let value = |flag: &str| flag_value(&args, flag);
    let n: usize = value("--characters").map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let frames: usize = value("--frames").map(|s| s.parse()).transpose()?.unwrap_or(30);
    let out = value("--out").unwrap_or_else(|| "crowd.png".into());
    let compare = args.iter().any(|a| a == "--compare");

    let own = GpuSolver::new_default()?;
    let (device, queue) = (own.device(), own.queue());
    println!("adapter: {}", own.adapter_info().map_or("?".into(), |i| i.name.clone()));
    // Hills plus short bumps (slopes up to ~25°), so planted feet visibly need IK.
    let mut terrain = crowd_ik_tools::terrain::hills(Vec2::new(-60.0, -60.0), 0.25, 481, 481, 1.2);
    for j in 0..terrain.nz {
        for i in 0..terrain.nx {
            let (x, z) = (terrain.origin.x + i as f32 * terrain.cell, terrain.origin.y + j as f32 * terrain.cell);
            terrain.heights[j * terrain.nx + i] += 0.12 * (2.1 * x).sin() * (1.7 * z + 0.5).cos();
        }
    }
    let ground = Ground::Heightfield(terrain.clone());
    let half = 12.0;
    let mut crowd = Walkers::from_args(&args, n, half)?;
    let rig = crowd.rig().clone();
    let mut ik = CrowdSolver::new(device, queue, &rig, &ground)?;
    let (mesh, inverse_bind) = crowd.mesh();
    let mut palette_ik = PaletteBuilder::new(device, queue, &inverse_bind)?;
    let mut palette_fk = PaletteBuilder::new(device, queue, &inverse_bind)?;
    let (width, height) = (960, 540);
    let preview = Preview::with_mesh(
        device,
        queue,
        (width, height, crowd_ik_tools::preview::FORMAT),
        &terrain,
        (Vec2::splat(-half - 8.0), Vec2::splat(half + 8.0), 0.25),
        &mesh,
        rig.joint_count(),
    )?;
    // Close on the front rows: feet on the bumps are easy to see.
    let camera = Camera::perspective(
        Vec3::new(0.0, 1.8, half + 3.0),
        Vec3::new(0.0, 0.2, half - 3.0),
        0.75,
        width as f32 / height as f32,
    );

    let (mut chars, mut poses) = (Vec::new(), Vec::new());
    let mut images = Vec::new();
    for frame in 0..frames {
        crowd.step(1.0 / 30.0);
        crowd.frame(&terrain, &mut chars, &mut poses);
        ik.upload(&chars, &poses, &[])?;
        let last = frame + 1 == frames;
        let passes: &[bool] = if last && compare { &[false, true] } else { &[true] };
        for &ik_on in passes {
            let mut encoder = device.create_command_encoder(&Default::default());
            ik.encode(&mut encoder);
            let roots = ik.characters_buffer().expect("uploaded");
            let palette = if ik_on {
                palette_ik.encode(&mut encoder, ik.pose_output().expect("uploaded"), n)?
            } else {
                palette_fk.encode(&mut encoder, ik.pose_input().expect("uploaded"), n)?
            };
            preview.encode(&mut encoder, &camera, palette, roots, n as u32);
            queue.submit([encoder.finish()]);
            if last {
                images.push(preview.read_rgba()?);
            }
        }
    }
    let (w, rgba) = if images.len() == 2 {
        let row = width as usize * 4;
        let mut joined = Vec::with_capacity(images[0].len() * 2);
        for y in 0..height as usize {
            joined.extend_from_slice(&images[0][y * row..(y + 1) * row]);
            joined.extend_from_slice(&images[1][y * row..(y + 1) * row]);
        }
        (width * 2, joined)
    } else {
        (width, images.pop().expect("one image"))
    };
    std::fs::write(&out, png(w, height, &rgba))?;
    println!(
        "{n} characters, {frames} frames; wrote {out} ({w}x{height}){}",
        if compare { ": IK off (left), IK on (right)" } else { "" }
    );
    Ok(())
}
