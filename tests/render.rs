//! The renderer path on lavapipe: foot IK → skinning palette → rendered crowd, with no
//! readback in the frame. Checks the image, its determinism, IK on vs off, the rendered soles
//! against the terrain, and the GPU palette against its CPU twin.

mod common;

use common::gpu::in_ci;
use crowd_ik::cpu::foot_ik::FootIkJob;
use crowd_ik::cpu::palette::{inverse_bind, palette};
use crowd_ik::crowd::*;
use crowd_ik::glam::{Mat4, Quat, Vec2, Vec3};
use crowd_ik::gpu::adapter_from_env;
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik_tools::preview::{Camera, Preview};
use crowd_ik_tools::scene::{biped_boxes, biped_rig, walk_pose, FOOT_HEIGHT};

const W: u32 = 400;
const H: u32 = 400;

fn device() -> Option<(wgpu::Device, wgpu::Queue)> {
    match adapter_from_env() {
        Ok(a) => Some(pollster::block_on(a.request_device(&wgpu::DeviceDescriptor::default())).expect("device")),
        Err(e) if in_ci() => panic!("CI=true but no GPU adapter: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: no GPU adapter ({e})");
            None
        }
    }
}

/// A slope rising toward +Z (0.3 m per m) and one biped standing on it, both feet planted.
fn scene() -> (Heightfield, Vec<CharacterInput>, Vec<JointPose>) {
    let heights = (0..41 * 41).map(|k| 0.3 * (-5.0 + (k / 41) as f32 * 0.25)).collect();
    let slope = Heightfield::new(Vec2::splat(-5.0), 0.25, 41, 41, heights).unwrap();
    let (pose, _) = walk_pose(0.0); // left foot forward, right foot back, both on the ground
    let chars = vec![CharacterInput::new(Vec3::ZERO, Quat::IDENTITY).with_foot_weights([1.0, 1.0, 0.0, 0.0])];
    (slope, chars, pose)
}

/// The scene's frame solved by the CPU twin: terrain, FK pose, corrected pose, result.
fn cpu_frame() -> (Heightfield, Vec<JointPose>, Vec<JointPose>, FootResult) {
    let (slope, chars, pose) = scene();
    let rig = biped_rig();
    let ground = Ground::Heightfield(slope.clone());
    let mut out = vec![JointPose::default(); 12];
    let mut res = vec![FootResult::default(); 1];
    FootIkJob {
        rig: &rig,
        ground: &ground,
        characters: &chars,
        hits: &[],
        poses_in: &pose,
        poses_out: &mut out,
        results: &mut res,
    }
    .run()
    .unwrap();
    (slope, pose, out, res[0])
}

fn is_shoe(px: &[u8]) -> bool {
    px[2] > 200 && px[0] < 60 && px[1] < 90
}

/// Renders the scene with IK on or off; returns the image and the palette.
fn render(device: &wgpu::Device, queue: &wgpu::Queue, ik_on: bool) -> (Vec<u8>, Vec<Mat4>, Camera) {
    let (slope, chars, pose) = scene();
    let rig = biped_rig();
    let mut ik = CrowdSolver::new(device, queue, &rig, &Ground::Heightfield(slope.clone())).unwrap();
    let (bind, _) = walk_pose(0.0);
    let mut builder = PaletteBuilder::new(device, queue, &inverse_bind(&bind)).unwrap();
    let preview =
        Preview::new(device, queue, W, H, &slope, (Vec2::splat(-3.0), Vec2::splat(3.0), 0.25), &biped_boxes(&bind), 12)
            .unwrap();
    // Orthographic side view from +X, ~6° above the slope's edge so the slope is a strip
    // (seen exactly edge-on it would be a line and rasterise to nothing).
    let camera = Camera::orthographic(Vec3::new(10.0, 1.3, 0.0), Vec3::new(0.0, 0.3, 0.0), 0.7, 1.0);
    ik.upload(&chars, &pose, &[]).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    ik.encode(&mut encoder);
    let source = if ik_on { ik.pose_output() } else { ik.pose_input() }.unwrap();
    let pal = builder.encode(&mut encoder, source, 1).unwrap();
    preview.encode(&mut encoder, &camera, pal, ik.characters_buffer().unwrap(), 1);
    queue.submit([encoder.finish()]);
    let image = preview.read_rgba().unwrap();
    let mut matrices = vec![Mat4::IDENTITY; 12];
    builder.read(&mut matrices).unwrap();
    (image, matrices, camera)
}

#[test]
fn rendered_soles_rest_on_the_terrain_with_ik_and_not_without() {
    let Some((device, queue)) = device() else { return };
    let (on, _, camera) = render(&device, &queue, true);
    let (on_again, _, _) = render(&device, &queue, true);
    let (off, _, _) = render(&device, &queue, false);
    assert_eq!(on, on_again, "rendering is deterministic");
    if let Ok(dir) = std::env::var("CROWD_IK_SAVE_RENDERS") {
        std::fs::write(format!("{dir}/render_ik_on.png"), crowd_ik_tools::image::png(W, H, &on)).unwrap();
        std::fs::write(format!("{dir}/render_ik_off.png"), crowd_ik_tools::image::png(W, H, &off)).unwrap();
    }
    let shoes = on.chunks(4).filter(|p| is_shoe(p)).count();
    let body = on.chunks(4).filter(|p| !is_shoe(p) && f32::from(p[0]) > 2.5 * f32::from(p[2]) && p[0] > p[1]).count();
    let terrain = on.chunks(4).filter(|p| p[1] >= p[0] && p[1] > p[2]).count();
    assert!(shoes > 100 && body > 500 && terrain > 10_000, "shoes {shoes}, body {body}, terrain {terrain}");
    // Where the feet are, the two images differ.
    let differing = on.chunks(4).zip(off.chunks(4)).filter(|(a, b)| a != b).count();
    assert!(differing > 200, "IK on and off differ in {differing} pixels");

    // Expected sole rows: solve the same frame on the CPU twin, project the ground under the
    // middle of each shoe's sole, compare with the lowest shoe pixel in that column.
    let (slope, pose, out, res) = cpu_frame();
    let (bind, _) = walk_pose(0.0);
    let lowest_shoe_row =
        |image: &[u8], column: u32| (0..H).rev().find(|&y| is_shoe(&image[((y * W + column) * 4) as usize..]));
    let mut off_error = 0.0_f32;
    for (leg, ankle) in [(0, 6usize), (1, 10usize)] {
        assert!(res.status[leg] & foot::REACHED != 0);
        for (image, solved, errors) in [(&on, &out, None), (&off, &pose, Some(&mut off_error))] {
            let local = bind[ankle].position() + Vec3::new(0.0, -FOOT_HEIGHT, 0.05) - bind[ankle].position();
            let sole_mid =
                solved[ankle].position() + solved[ankle].rotation() * (bind[ankle].rotation().conjugate() * local);
            let ground_y = slope.sample(sole_mid.x, sole_mid.z).unwrap().0;
            let expected = camera.pixel(Vec3::new(sole_mid.x, ground_y, sole_mid.z), W, H);
            let column = expected.x.round() as u32;
            // The lowest shoe pixel row covers the sole's edge: within 3 px of the ground. A
            // shoe hidden in that column is buried in the terrain: infinitely wrong.
            let error =
                lowest_shoe_row(image, column).map_or(f32::INFINITY, |row| (row as f32 + 0.5 - expected.y).abs());
            match errors {
                None => {
                    eprintln!("leg {leg}: rendered sole {error:.2} px from the ground row");
                    assert!(error <= 3.0, "leg {leg}: sole {error} px from the ground row {}", expected.y)
                }
                Some(e) => *e = e.max(error),
            }
        }
    }
    assert!(off_error > 6.0, "without IK a foot is visibly off the slope: {off_error} px");
}

#[test]
fn gpu_palette_equals_the_cpu_twin() {
    let Some((device, queue)) = device() else { return };
    let (_, gpu_palette, _) = render(&device, &queue, true);
    let (_, _, out, _) = cpu_frame();
    let (bind, _) = walk_pose(0.0);
    let mut cpu_palette = vec![Mat4::IDENTITY; 12];
    palette(&out, &inverse_bind(&bind), &mut cpu_palette);
    for (j, (a, b)) in cpu_palette.iter().zip(&gpu_palette).enumerate() {
        let (ta, tb) = (a.w_axis.truncate(), b.w_axis.truncate());
        assert!(ta.distance(tb) <= 1e-4 * 0.84, "joint {j}: translation {ta} vs {tb}");
        for c in 0..3 {
            assert!((a.col(c) - b.col(c)).abs().max_element() <= 1e-3, "joint {j}: rotation column {c}");
        }
    }
}

/// The world-space palette (renderers that skin in world space, e.g. Bevy): the GPU equals
/// its CPU twin for characters moved, turned, scaled and mirrored, and a vertex skinned with
/// it lands where the model-space palette puts it, carried into the world by the character.
#[test]
fn gpu_world_palette_equals_the_cpu_twin_and_carries_each_character_into_the_world() {
    use crowd_ik::cpu::palette::palette_world;
    use crowd_ik::wgpu::util::DeviceExt;
    let Some((device, queue)) = device() else { return };
    let (bind, _) = walk_pose(0.0);
    let ib = inverse_bind(&bind);
    let joints = ib.len();
    let mut rng = common::Rng(31);
    let characters: Vec<CharacterInput> = (0..37)
        .map(|c| {
            let ch = CharacterInput::new(rng.unit() * 40.0, rng.quat()).with_scale(rng.range(0.5, 2.0));
            ch.with_mirrored(c % 3 == 0)
        })
        .collect();
    let poses: Vec<JointPose> = (0..characters.len())
        .flat_map(|_| {
            let (pose, _) = walk_pose(rng.range(0.0, 1.0));
            pose.into_iter()
        })
        .collect();
    let pose_buf = device.create_buffer_init(&crowd_ik::wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&poses),
        usage: crowd_ik::wgpu::BufferUsages::STORAGE,
    });
    let char_buf = device.create_buffer_init(&crowd_ik::wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&characters),
        usage: crowd_ik::wgpu::BufferUsages::STORAGE,
    });
    let mut builder = PaletteBuilder::new(&device, &queue, &ib).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    builder.encode_world(&mut encoder, &pose_buf, &char_buf, characters.len()).unwrap();
    queue.submit([encoder.finish()]);
    let mut gpu = vec![Mat4::IDENTITY; poses.len()];
    builder.read(&mut gpu).unwrap();
    let mut cpu = vec![Mat4::IDENTITY; poses.len()];
    palette_world(&poses, &characters, &ib, &mut cpu);
    let mut model = vec![Mat4::IDENTITY; poses.len()];
    palette(&poses, &ib, &mut model);
    for (i, ((g, c), m)) in gpu.iter().zip(&cpu).zip(&model).enumerate() {
        let ch = &characters[i / joints];
        // Positions are tens of metres out: 1e-5 relative.
        let tol = 1e-5 * (1.0 + Vec3::from_slice(&ch.root_ws[..3]).length());
        for col in 0..4 {
            assert!((g.col(col) - c.col(col)).abs().max_element() <= tol, "entry {i} column {col}: {g} vs {c}");
        }
        // A bind-pose vertex near joint i % joints.
        let v = bind[i % joints].position() + Vec3::new(0.02, -0.03, 0.05);
        let world = c.transform_point3(v);
        let want = ch.to_world(m.transform_point3(v));
        assert!(world.distance(want) <= tol, "entry {i}: {world} vs {want}");
    }
    // A buffer too small for the characters is an error, not a read past its end.
    let mut encoder = device.create_command_encoder(&Default::default());
    assert!(builder.encode_world(&mut encoder, &pose_buf, &char_buf, characters.len() + 1).is_err());
}

/// The world-space palette scattered into a renderer's own joint buffer (Bevy's skin buffer:
/// each skinned mesh at its own offset): equal to the CPU twin on every entry of the
/// destination, characters marked `NONE` and entries between allocations left as they were,
/// a character hanging past the end cut off; bad destinations are refused.
#[test]
fn gpu_palette_scatter_equals_the_cpu_twin_and_touches_only_its_slots() {
    use crowd_ik::cpu::palette::palette_world_scatter;
    use crowd_ik::wgpu::util::DeviceExt;
    let Some((device, queue)) = device() else { return };
    let (bind, _) = walk_pose(0.0);
    let ib = inverse_bind(&bind);
    let joints = ib.len() as u32;
    let mut rng = common::Rng(77);
    let n = 70;
    let characters: Vec<CharacterInput> = (0..n)
        .map(|c| {
            CharacterInput::new(rng.unit() * 20.0, rng.quat()).with_scale(rng.range(0.5, 2.0)).with_mirrored(c % 4 == 1)
        })
        .collect();
    let poses: Vec<JointPose> = (0..n).flat_map(|_| walk_pose(rng.range(0.0, 6.3)).0).collect();
    // Slots 16 matrices apart (Bevy allocates 4 at a time), in shuffled order; character 5
    // has no slot; the last one starts 3 matrices before the end.
    let slots = n as u32 + 1;
    let dst_len = (slots * 16) as usize;
    let mut offsets: Vec<u32> = (0..n as u32).map(|c| ((c * 37) % slots) * 16).collect();
    offsets[5] = NONE;
    offsets[n - 1] = dst_len as u32 - 3;
    let sentinel = Mat4::from_cols_array(&[7.0; 16]);
    let mut cpu = vec![sentinel; dst_len];
    palette_world_scatter(&poses, &characters, &ib, &offsets, &mut cpu);
    let buffer = |contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents, usage })
    };
    let pose_buf = buffer(bytemuck::cast_slice(&poses), wgpu::BufferUsages::STORAGE);
    let char_buf = buffer(bytemuck::cast_slice(&characters), wgpu::BufferUsages::STORAGE);
    let dst = buffer(
        bytemuck::cast_slice(&vec![sentinel; dst_len]),
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    );
    let mut builder = PaletteBuilder::new(&device, &queue, &ib).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    builder.encode_world_scatter(&mut encoder, &pose_buf, &char_buf, &offsets, &dst).unwrap();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: dst.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&dst, 0, &staging, 0, dst.size());
    queue.submit([encoder.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let gpu: Vec<Mat4> = bytemuck::cast_slice(&staging.slice(..).get_mapped_range().unwrap()).to_vec();
    let mut written = 0;
    for (k, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        if *c == sentinel {
            assert_eq!(*g, sentinel, "entry {k} belongs to no character and must keep its value");
            continue;
        }
        written += 1;
        let tol = 1e-5 * (1.0 + c.w_axis.truncate().length());
        for col in 0..4 {
            assert!((g.col(col) - c.col(col)).abs().max_element() <= tol, "entry {k} column {col}: {g} vs {c}");
        }
    }
    assert_eq!(written, (n as u32 - 2) * joints + 3, "every slotted matrix written once, the cut-off one in part");
    // Refused: a destination without STORAGE, offsets for more characters than poses.
    let not_storage = buffer(&[0; 256], wgpu::BufferUsages::COPY_SRC);
    let mut encoder = device.create_command_encoder(&Default::default());
    assert!(builder.encode_world_scatter(&mut encoder, &pose_buf, &char_buf, &offsets, &not_storage).is_err());
    let too_many = vec![0; n + 1];
    assert!(builder.encode_world_scatter(&mut encoder, &pose_buf, &char_buf, &too_many, &dst).is_err());
}

/// The GPU pose source samples a clip per character (own time offset) exactly like its CPU
/// twin, here on Debian's CMU clip when installed, else on the procedural walk.
#[test]
fn gpu_pose_source_matches_the_cpu_twin() {
    use crowd_ik::bvh::Clip;
    use crowd_ik::cpu::clip_sample::sample_clip;
    use crowd_ik::gpu::pose_source::ClipPoseSource;
    let Some((device, queue)) = device() else { return };
    let (local, parents, frame_time) = match Clip::load("/usr/share/assimp/models/BVH/01_01.bvh") {
        Ok(clip) => {
            let s = 0.0254 / 0.45;
            let local: Vec<JointPose> =
                (0..200).flat_map(|f| clip.local_pose(f, s).into_iter().map(|(t, r)| JointPose::new(t, r))).collect();
            (local, clip.skeleton.parents.clone(), clip.frame_time)
        }
        Err(_) => {
            assert!(!in_ci(), "CI=true but the CMU clip is missing: install assimp-testmodels");
            // Local transforms of the procedural walk (model = local for its flat hierarchy use).
            let parents = crowd_ik_tools::scene::biped_parents();
            let local: Vec<JointPose> = (0..32)
                .flat_map(|f| -> Vec<JointPose> {
                    let (model, _) = walk_pose(f as f32 / 32.0 * std::f32::consts::TAU);
                    let parents = &parents;
                    (0..12)
                        .map(move |j| {
                            let p = parents[j].map_or(JointPose::new(Vec3::ZERO, Quat::IDENTITY), |p| model[p]);
                            JointPose::new(
                                p.rotation().conjugate() * (model[j].position() - p.position()),
                                p.rotation().conjugate() * model[j].rotation(),
                            )
                        })
                        .collect()
                })
                .collect();
            (local, parents, 1.0 / 30.0)
        }
    };
    let joints = parents.len();
    let parents_u32: Vec<u32> = parents.iter().map(|p| p.map_or(NONE, |p| p as u32)).collect();
    let offsets: Vec<f32> = (0..257).map(|c| c as f32 * 0.0137).collect();
    let mut source = ClipPoseSource::new(&device, &queue, &local, &parents, frame_time, &offsets).unwrap();
    // The crowd changes: fewer characters (in place), then more than ever (buffers grow),
    // each time sampled like the CPU twin; a NaN offset is refused.
    let shrunk: Vec<f32> = (0..100).map(|c| 1.0 - c as f32 * 0.0071).collect();
    let grown: Vec<f32> = (0..600).map(|c| c as f32 * 0.0093).collect();
    let mut worst = 0.0_f32;
    for (round, (offsets, grows)) in [(&offsets, false), (&shrunk, false), (&grown, true)].into_iter().enumerate() {
        if round > 0 {
            assert_eq!(source.set_offsets(offsets).unwrap(), grows);
        }
        assert_eq!(source.characters(), offsets.len());
        let time = 0.731 + round as f32;
        let mut encoder = device.create_command_encoder(&Default::default());
        source.encode(&mut encoder, time);
        let bytes = (offsets.len() * joints * std::mem::size_of::<JointPose>()) as u64;
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(source.poses(), 0, &staging, 0, bytes);
        queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let gpu: Vec<JointPose> = bytemuck::cast_slice(&staging.slice(..).get_mapped_range().unwrap()).to_vec();
        let mut cpu = vec![JointPose::default(); joints];
        for (c, offset) in offsets.iter().enumerate() {
            sample_clip(&local, &parents_u32, frame_time, time + offset, &mut cpu);
            for j in 0..joints {
                let (a, b) = (cpu[j], gpu[c * joints + j]);
                worst = worst.max(a.position().distance(b.position()));
                assert!(a.position().distance(b.position()) <= 1e-4, "round {round} character {c} joint {j}");
                assert!(a.rotation().dot(b.rotation()).abs() >= 1.0 - 1e-6, "round {round} character {c} joint {j}");
            }
        }
    }
    assert!(source.set_offsets(&[0.0, f32::NAN]).is_err());
    let offsets = grown;
    eprintln!("clip sampling: {} characters × {joints} joints, worst GPU–CPU {worst:e} m", offsets.len());
}

/// A glTF character's own mesh, skinned by the GPU palette from the GPU's foot IK, stands on
/// the ground: for each foot the clip plants (0/1 weights), the lowest point of the skinned
/// foot (the vertices bound mostly to the ankle or below it) lies within 5 mm of the ground,
/// walking up a 0.3 slope, across it, and on flat ground — heel strikes and toe offs too,
/// whose shoe ends reach past the joints (`GltfScene::foot_rig` reads the sole off the
/// mesh); without IK the feet on the slope are buried or float by centimetres. Cesium Man,
/// every sixth frame of its walk at 60 Hz.
#[test]
fn a_gltf_characters_skinned_feet_rest_on_the_slope() {
    use crowd_ik::gltf::GltfScene;
    use crowd_ik_tools::character::{contact_weights, floor, frames, skinned_foot_gap};
    let Some((device, queue)) = device() else { return };
    let gltf = GltfScene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gltf/CesiumMan.glb")).unwrap();
    let (sk, mesh) = (&gltf.skins[0], &gltf.meshes[0]);
    let rig = gltf.foot_rig(0, BipedSettings::default(), 1.0).unwrap();
    let clip = gltf.clips[0].bake(sk, 60.0, crowd_ik::gltf::RootMotion::Extract).unwrap();
    let poses = frames(&clip);
    let floor = floor(&rig, &poses);
    let inverse_bind = sk.palette_inverse_bind().unwrap();
    let (slope, _, _) = scene();
    let flat = Heightfield::from_fn(Vec2::splat(-5.0), 0.25, 41, 41, |_, _| 0.0).unwrap();
    let mut builder = PaletteBuilder::new(&device, &queue, &inverse_bind).unwrap();
    let feet = [sk.below(rig.legs[0].joints[2]), sk.below(rig.legs[1].joints[2])];
    let joints = sk.len();
    let (mut worst_on, mut worst_off, mut planted) = (0.0_f32, 0.0_f32, 0);
    for (ground, heading) in [(&slope, 0.0_f32), (&slope, std::f32::consts::FRAC_PI_2), (&flat, 0.0)] {
        let mut ik = CrowdSolver::new(&device, &queue, &rig, &Ground::Heightfield(ground.clone())).unwrap();
        let on_slope = std::ptr::eq(ground, &slope);
        for f in (0..poses.len()).step_by(6) {
            let w = contact_weights(&rig, &poses[f], floor);
            let root = Vec3::new(0.0, ground.sample(0.0, 0.0).unwrap().0 - floor, 0.0);
            let chars =
                [CharacterInput::new(root, Quat::from_rotation_y(heading)).with_foot_weights([w[0], w[1], 0.0, 0.0])];
            let mut out = vec![JointPose::default(); joints];
            let mut res = [FootResult::default()];
            ik.solve(&chars, &poses[f], &[], &mut out, &mut res).unwrap();
            for ik_on in [true, false] {
                let mut encoder = device.create_command_encoder(&Default::default());
                let source = if ik_on { ik.pose_output() } else { ik.pose_input() }.unwrap();
                builder.encode(&mut encoder, source, 1).unwrap();
                queue.submit([encoder.finish()]);
                let mut matrices = vec![Mat4::IDENTITY; joints];
                builder.read(&mut matrices).unwrap();
                for l in 0..2 {
                    if w[l] < 1.0 {
                        continue;
                    }
                    // The lowest point of the skinned foot above the ground under it.
                    let gap = skinned_foot_gap(mesh, &matrices, &feet[l], &chars[0], ground);
                    if ik_on {
                        planted += 1;
                        worst_on = worst_on.max(gap.abs());
                    } else if on_slope {
                        worst_off = worst_off.max(gap.abs());
                    }
                }
            }
        }
    }
    eprintln!("{planted} planted feet: IK on worst {worst_on:.4} m; IK off on the slope worst {worst_off:.4} m");
    assert!(planted >= 30, "{planted}");
    assert!(worst_on <= 0.005, "a skinned planted foot {worst_on} m off the ground with IK");
    assert!(worst_off > 0.05, "without IK a planted foot is buried or floats: {worst_off} m");
}
