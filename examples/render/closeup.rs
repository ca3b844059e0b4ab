//! `render --closeup`: one glTF walker up close, from the side, over a slope and over
//! stairs: IK off beside foot placement, frame after frame (a module of examples/render).

use crowd_ik::crowd::{FootPlacement, FootResult, Ground, Heightfield, JointPose};
use crowd_ik::glam::{Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::character::{flag_value, Walkers};
use crowd_ik_tools::image::png;
use crowd_ik_tools::preview::{Camera, Preview, FORMAT};

/// Frames per second of the run.
const HZ: f32 = 60.0;
/// Tile size, and the tiles per row.
const TILE: u32 = 300;
const COLUMNS: usize = 5;

/// Rows, top to bottom: slope IK off, slope foot placement, stairs IK off, stairs foot
/// placement; columns: frames 0.5 s apart.
pub fn render(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let own = GpuSolver::new_default()?;
    let (device, queue) = (own.device(), own.queue());
    println!("adapter: {}", own.adapter_info().map_or("?".into(), |i| i.name.clone()));
    let out = flag_value(args, "--out").unwrap_or_else(|| "closeup.png".into());
    let mut walker = match Walkers::from_args(args, 1, 50.0)? {
        Walkers::Gltf(c) => c,
        Walkers::Boxes(..) => return Err("--closeup draws a glTF character (--steps shows the box walker)".into()),
    };
    let height = walker.height();
    // A slope rising and falling along the walk (±0.35 m every 4 m: up to 29°), and stairs
    // (17 cm rise, 28 cm run).
    let slope = Heightfield::from_fn(Vec2::new(-1.0, -4.0), 0.02, 101, 1101, |_, z| {
        0.35 * (z * std::f32::consts::TAU / 4.0).sin()
    })?;
    let stairs = crowd_ik_tools::terrain::stairs(10, 0.17, 0.28);
    let (mesh, inverse_bind) = (walker.mesh.clone(), walker.inverse_bind.clone());
    let joints = walker.rig.joint_count();
    let mut rows: Vec<Vec<Vec<u8>>> = Vec::new();
    for (terrain, start) in [(&slope, -1.0_f32), (&stairs, -0.5)] {
        let ground = Ground::Heightfield(terrain.clone());
        let placement = walker.rig.clone().with_placement(Some(FootPlacement::default()));
        let mut solver = CrowdSolver::new(device, queue, &placement, &ground)?;
        solver.set_frame_time(1.0 / HZ)?;
        let mut palettes =
            [PaletteBuilder::new(device, queue, &inverse_bind)?, PaletteBuilder::new(device, queue, &inverse_bind)?];
        let preview = Preview::with_mesh(
            device,
            queue,
            (TILE, TILE, FORMAT),
            terrain,
            (Vec2::new(-1.0, -4.0), Vec2::new(1.0, 16.0), 0.02),
            &mesh,
            joints,
        )?;
        walker.set_walker(0, Vec2::new(0.0, start), 0.0, 0.0);
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        let (mut out, mut res) = (vec![JointPose::default(); joints], [FootResult::default()]);
        let mut tiles = [Vec::new(), Vec::new()];
        let every = (0.5 * HZ) as usize;
        for f in 0..=every * COLUMNS {
            walker.frame(terrain, &mut chars, &mut poses);
            solver.solve(&chars, &poses, &[], &mut out, &mut res)?;
            // Skip the first 0.5 s: the walker settles onto its feet.
            if f >= every && f % every == 0 {
                // A side view that follows the walker (walking to the right).
                let at = chars[0].to_world(Vec3::ZERO);
                // (The joints span less than the mesh: the head reaches above its joint.)
                let centre = Vec3::new(0.0, at.y + 0.5 * height, at.z);
                let mut camera = Camera::orthographic(centre + Vec3::new(-4.0, 0.6, 0.0), centre, 0.8 * height, 1.0);
                camera.light_dir = Vec3::new(-0.6, 1.0, 0.4).normalize();
                for (mode, tiles) in tiles.iter_mut().enumerate() {
                    let mut encoder = device.create_command_encoder(&Default::default());
                    let pose = if mode == 0 { solver.pose_input() } else { solver.pose_output() };
                    let palette = palettes[mode].encode(&mut encoder, pose.expect("solved"), 1)?;
                    preview.encode(&mut encoder, &camera, palette, solver.characters_buffer().expect("solved"), 1);
                    queue.submit([encoder.finish()]);
                    tiles.push(preview.read_rgba()?);
                }
            }
            walker.step(1.0 / HZ);
        }
        rows.extend(tiles);
    }
    let (w, h, rgba) = super::stitch(&rows, TILE);
    std::fs::write(&out, png(w, h, &rgba))?;
    println!(
        "wrote {out} ({w}x{h}): rows slope IK off, slope foot placement, stairs IK off, stairs foot placement; \
         columns 0.5 s apart at {HZ} Hz"
    );
    Ok(())
}
