//! `render --steps`: one walker climbing stairs, stateless above, foot placement below, and
//! a plot of both (a module of examples/render).

use crowd_ik::cpu::palette::inverse_bind;
use crowd_ik::crowd::{CharacterInput, FootPlacement, FootResult, Ground, JointPose, PlantDetection};
use crowd_ik::glam::{Quat, Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::gpu::GpuSolver;
use crowd_ik_tools::image::png;
use crowd_ik_tools::preview::{Camera, Preview};
use crowd_ik_tools::scene::{biped_boxes, biped_rig, walk_pose, CYCLE, FOOT_HEIGHT, SPEED};
use plotters::prelude::*;

/// Frames per second of the run.
const HZ: f32 = 60.0;
/// Tile size and the frames shown (60 Hz frame numbers, crossing the first steps).
const TILE: u32 = 320;
const SHOWN: [usize; 6] = [150, 162, 174, 186, 198, 210];

pub fn render() -> Result<(), Box<dyn std::error::Error>> {
    let own = GpuSolver::new_default()?;
    let (device, queue) = (own.device(), own.queue());
    println!("adapter: {}", own.adapter_info().map_or("?".into(), |i| i.name.clone()));
    let terrain = crowd_ik_tools::terrain::stairs(10, 0.18, 0.3);
    let ground = Ground::Heightfield(terrain.clone());
    let stateless = biped_rig();
    let mut settings = FootPlacement::default();
    for leg in &mut settings.legs {
        leg.plant = PlantDetection::Weights;
    }
    let temporal = biped_rig().with_placement(Some(settings));
    let mut solvers =
        [CrowdSolver::new(device, queue, &stateless, &ground)?, CrowdSolver::new(device, queue, &temporal, &ground)?];
    let (bind, _) = walk_pose(0.0);
    let mut palettes = [
        PaletteBuilder::new(device, queue, &inverse_bind(&bind))?,
        PaletteBuilder::new(device, queue, &inverse_bind(&bind))?,
    ];
    let preview = Preview::new(
        device,
        queue,
        TILE,
        TILE,
        &terrain,
        (Vec2::new(-1.0, -2.0), Vec2::new(1.0, 8.0), 0.02),
        &biped_boxes(&bind),
        stateless.joint_count(),
    )?;
    let n = stateless.joint_count();
    let mut tiles: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    // Per mode and frame: time, pelvis height, left sole height; and the ground under the
    // left foot.
    let mut series: [Vec<(f32, f32, f32)>; 2] = [Vec::new(), Vec::new()];
    let mut ground_under = Vec::new();
    let frames = *SHOWN.last().expect("frames") + 60;
    for f in 0..frames {
        let t = f as f32 / HZ;
        let phase = t / CYCLE * std::f32::consts::TAU;
        let z = -1.5 + SPEED * t;
        let y = terrain.sample(0.1, z).map_or(0.0, |(y, _)| y); // the root snaps to the ground
        let (pose, w) = walk_pose(phase);
        let chars =
            [CharacterInput::new(Vec3::new(0.1, y, z), Quat::IDENTITY).with_foot_weights([w[0], w[1], 0.0, 0.0])];
        let mut out = vec![JointPose::default(); n];
        let mut res = [FootResult::default()];
        for (mode, solver) in solvers.iter_mut().enumerate() {
            solver.set_frame_time(1.0 / HZ)?;
            solver.solve(&chars, &pose, &[], &mut out, &mut res)?;
            let pelvis = chars[0].to_world(out[1].position()).y;
            let sole = chars[0].to_world(out[6].position()).y - FOOT_HEIGHT;
            series[mode].push((t, pelvis, sole));
            if mode == 0 {
                let ankle = chars[0].to_world(out[6].position());
                ground_under.push((t, terrain.sample(ankle.x, ankle.z).map_or(0.0, |(h, _)| h)));
            }
            if SHOWN.contains(&f) {
                // A side view that follows the walker.
                let camera = Camera::orthographic(Vec3::new(4.0, y + 0.9, z), Vec3::new(0.0, y + 0.75, z), 1.05, 1.0);
                let mut encoder = device.create_command_encoder(&Default::default());
                let palette = palettes[mode].encode(&mut encoder, solver.pose_output().expect("solved"), 1)?;
                preview.encode(&mut encoder, &camera, palette, solver.characters_buffer().expect("solved"), 1);
                queue.submit([encoder.finish()]);
                tiles[mode].push(preview.read_rgba()?);
            }
        }
    }
    // The strip: stateless above, foot placement below.
    let (w, h, rgba) = super::stitch(&tiles, TILE);
    std::fs::write("steps.png", png(w, h, &rgba))?;
    plot(&series, &ground_under, "steps.svg")?;
    println!(
        "wrote steps.png ({w}x{h}: frames {SHOWN:?} at 60 Hz, stateless above, foot placement below) and steps.svg (pelvis and left sole height over time)"
    );
    Ok(())
}

/// Pelvis height and left sole height over time, both modes, and the ground under the foot.
fn plot(
    series: &[Vec<(f32, f32, f32)>; 2],
    ground: &[(f32, f32)],
    path: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let t_max = series[0].last().map_or(1.0, |s| s.0);
    let y_max = series.iter().flatten().map(|s| s.1).fold(0.0f32, f32::max) + 0.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("Climbing 18 cm steps, root snapped to the ground: stateless vs foot placement", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0f32..t_max, -0.05f32..y_max)?;
    chart.configure_mesh().x_desc("time (s)").y_desc("height (m)").draw()?;
    let styles = [(RED, "stateless"), (BLUE, "foot placement")];
    for (mode, (color, name)) in styles.into_iter().enumerate() {
        let s = &series[mode];
        chart
            .draw_series(LineSeries::new(s.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))?
            .label(format!("pelvis, {name}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(LineSeries::new(s.iter().map(|p| (p.0, p.2)), color.mix(0.6).stroke_width(1)))?
            .label(format!("left sole, {name}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.mix(0.6)));
    }
    chart
        .draw_series(LineSeries::new(ground.iter().copied(), BLACK.mix(0.4)))?
        .label("ground under the left foot")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
