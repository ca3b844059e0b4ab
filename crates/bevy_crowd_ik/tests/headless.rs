//! A headless Bevy 0.20 app (no window; a camera renders into an image) on whatever adapter
//! Bevy finds (lavapipe in CI): crowd characters on hills, a few frames, then Bevy's own
//! skin buffer is read back (in the test only) and the skinned soles are compared with the
//! ground. IK on puts them on it; IK off leaves them where the animation put them.

use std::sync::Arc;

use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore};
use bevy::math::{Mat4, Vec2, Vec3};
use bevy::pbr::SkinUniforms;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat, TextureUsages};
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::RenderApp;
use bevy::window::ExitCondition;

use bevy_crowd_ik::crowd_ik::crowd::{Ground, Heightfield, JointPose};
use bevy_crowd_ik::crowd_ik::wgpu;
use bevy_crowd_ik::mesh::{bone_boxes, box_mesh, inverse_bindposes, local_transforms, spawn_skinned};
use bevy_crowd_ik::{
    CrowdIk, CrowdIkCharacter, CrowdIkDiagnostics, CrowdIkGpu, CrowdIkPlugin, CrowdIkSystems, GpuClip, PoseSource,
};
use crowd_ik_tools::scene::{biped_parents, biped_rig, walk_pose, FOOT_HEIGHT};
use crowd_ik_tools::terrain::hills;

const ANKLES: [usize; 2] = [6, 10];
/// Characters per side of the test crowd's grid.
const SIDE: usize = 4;

fn ground() -> Heightfield {
    hills(Vec2::new(-8.0, -8.0), 0.25, 65, 65, 0.5)
}

fn bind() -> Vec<JointPose> {
    walk_pose(0.0).0 // both feet down, soles at model y = 0
}

/// Root positions: a grid over the hills, each root 4 cm above the ground under it (the
/// height a root-motion controller would give on flat ground).
fn roots(ground: &Heightfield) -> Vec<Transform> {
    let mut out = Vec::new();
    for i in 0..SIDE {
        for j in 0..SIDE {
            let (x, z) = (-5.0 + 3.3 * i as f32, -5.0 + 3.3 * j as f32);
            let y = ground.sample(x, z).expect("on the field").0 + 0.04;
            out.push(Transform::from_xyz(x, y, z).with_rotation(Quat::from_rotation_y(0.7 * (i + 2 * j) as f32)));
        }
    }
    out
}

fn clip() -> GpuClip {
    let local: Vec<JointPose> =
        local_transforms(&bind(), &biped_parents()).iter().map(|t| JointPose::new(t.translation, t.rotation)).collect();
    GpuClip { local: [local.clone(), local].concat(), parents: biped_parents(), frame_time: 1.0 / 30.0 }
}

fn app(poses: PoseSource, enabled: bool) -> App {
    app_on(Ground::Heightfield(ground()), poses, enabled)
}

fn app_on(ground: Ground, poses: PoseSource, enabled: bool) -> App {
    quiet_mesa();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() })
            .disable::<bevy::log::LogPlugin>(),
    )
    .add_plugins(CrowdIkPlugin);
    let mut settings = CrowdIk::new(biped_rig(), ground, poses);
    settings.enabled = enabled;
    app.insert_resource(settings)
        .init_resource::<SeenDiagnostics>()
        .add_systems(Startup, setup)
        .add_systems(Last, see_diagnostics.after(CrowdIkSystems::Diagnostics));
    app.finish();
    app.cleanup();
    app
}

/// Mesa wants a runtime dir (the README's test command runs with one; keep it quiet here
/// too).
fn quiet_mesa() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("bevy-crowd-ik-xdg-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        // SAFETY: set before Bevy starts any thread.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", dir) };
    }
}

/// A camera rendering into a 256 × 256 image (no window): Bevy skins only what a view sees.
fn spawn_camera(commands: &mut Commands, images: &mut Assets<Image>, at: Transform) {
    let mut target = Image::new_fill(
        Extent3d { width: 256, height: 256, depth_or_array_layers: 1 },
        TextureDimension::D2,
        &[0; 4],
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::default(),
    );
    target.texture_descriptor.usage |= TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_SRC;
    commands.spawn((Camera3d::default(), RenderTarget::Image(images.add(target).into()), at));
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut images: ResMut<Assets<Image>>,
    mut bindposes: ResMut<Assets<bevy::mesh::skinning::SkinnedMeshInverseBindposes>>,
) {
    spawn_camera(&mut commands, &mut images, Transform::from_xyz(0.0, 18.0, 16.0).looking_at(Vec3::ZERO, Vec3::Y));
    let bind = bind();
    let mesh = meshes.add(box_mesh(&bone_boxes(&bind, &biped_parents(), 0.04)));
    let material = materials.add(StandardMaterial::default());
    let ibp = bindposes.add(inverse_bindposes(&bind));
    for (k, root) in roots(&ground()).into_iter().enumerate() {
        let character = CrowdIkCharacter { clip_offset: 0.1 * k as f32, ..default() };
        let extra = (Mesh3d(mesh.clone()), MeshMaterial3d(material.clone()), character);
        spawn_skinned(&mut commands, root, &bind, &biped_parents(), ibp.clone(), extra);
    }
}

/// Reads every solved character's joint matrices back from Bevy's skin buffer (test only).
/// The buffer is `STORAGE | COPY_DST` (no `COPY_SRC`), so a small compute pass copies each
/// character's matrices out of it.
fn skin_matrices(app: &mut App, rig: usize) -> Vec<(Entity, Vec<Mat4>)> {
    const COPY: &str = "
        @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
        @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            if id.x < arrayLength(&dst) { dst[id.x] = src[id.x]; }
        }";
    let joints = app.world().resource::<CrowdIk>().rigs[rig].rig.joint_count();
    let world = app.sub_app_mut(RenderApp).world_mut();
    let device = world.resource::<RenderDevice>().wgpu_device().clone();
    let queue: wgpu::Queue = (**world.resource::<RenderQueue>()).clone();
    let skins = world.resource::<SkinUniforms>();
    let gpu = world.resource::<CrowdIkGpu>();
    let bytes = (joints * 64) as u64;
    let stride = bytes.next_multiple_of(256); // the storage binding offset alignment
    let entities = gpu.entities(rig).to_vec();
    let total = stride * entities.len() as u64;
    let scope = bevy_crowd_ik::crowd_ik::gpu::context::ErrorScopes::push(&device);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("skin readback"),
        source: wgpu::ShaderSource::Wgsl(COPY.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("skin readback"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let copied = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skin copy"),
        size: total,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skin readback"),
        size: total,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    let mut found = Vec::new();
    for (i, e) in entities.iter().enumerate() {
        let offset = skins.skin_byte_offset(*e).expect("Bevy allocated the visible character's skin");
        fn binding(buffer: &wgpu::Buffer, offset: u64, bytes: u64) -> wgpu::BindingResource<'_> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(bytes) })
        }
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: binding(&skins.current_buffer, u64::from(offset.byte_offset), bytes),
                },
                wgpu::BindGroupEntry { binding: 1, resource: binding(&copied, i as u64 * stride, bytes) },
            ],
        });
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((joints * 4).div_ceil(64) as u32, 1, 1);
        drop(pass);
        found.push(e.id());
    }
    encoder.copy_buffer_to_buffer(&copied, 0, &readback, 0, total);
    queue.submit([encoder.finish()]);
    scope.pop().expect("the test's readback is valid");
    let per = stride as usize / 64;
    let mut matrices = vec![Mat4::IDENTITY; entities.len() * per];
    bevy_crowd_ik::crowd_ik::gpu::buffers::map_read(&device, &readback, bytemuck::cast_slice_mut(&mut matrices))
        .expect("readback");
    found.into_iter().enumerate().map(|(i, e)| (e, matrices[i * per..i * per + joints].to_vec())).collect()
}

/// Worst distance of a skinned sole (the point `FOOT_HEIGHT` under each ankle in the bind
/// pose, moved by the ankle's joint matrix) from the ground below it, per character.
fn sole_errors(matrices: &[(Entity, Vec<Mat4>)]) -> Vec<f32> {
    sole_errors_of(matrices, &bind(), FOOT_HEIGHT)
}

fn sole_errors_of(matrices: &[(Entity, Vec<Mat4>)], bind: &[JointPose], foot_height: f32) -> Vec<f32> {
    let ground = ground();
    matrices
        .iter()
        .map(|(_, m)| {
            ANKLES
                .iter()
                .map(|&a| {
                    let sole = m[a].transform_point3(bind[a].position() - Vec3::Y * foot_height);
                    (sole.y - ground.sample(sole.x, sole.z).expect("on the field").0).abs()
                })
                .fold(0.0, f32::max)
        })
        .collect()
}

/// The crate's CPU twin of the whole frame (foot IK on the bind pose, world palette) for the
/// characters read back, against Bevy's skin buffer: within the CPU–GPU contract
/// (1e-4 × leg length in position, 1e-3 in the rotation columns).
fn assert_matches_cpu_twin(app: &App, matrices: &[(Entity, Vec<Mat4>)], enabled: bool) {
    use bevy_crowd_ik::crowd_ik::cpu::palette::palette_world;
    use bevy_crowd_ik::crowd_ik::cpu::FootIkJob;
    use bevy_crowd_ik::crowd_ik::crowd::{CharacterInput, FootResult};
    let bind = bind();
    let joints = bind.len();
    let characters: Vec<CharacterInput> = matrices
        .iter()
        .map(|(e, _)| {
            let (_, r, t) = app.world().get::<GlobalTransform>(*e).expect("root").to_scale_rotation_translation();
            CharacterInput::new(t, r)
        })
        .collect();
    // The FK pose the plugin read: each joint's GlobalTransform in its root's frame (the
    // bind pose unless something animates the joints).
    let fk: Vec<JointPose> = matrices.iter().flat_map(|(e, _)| fk_from_world(app, *e)).collect();
    let mut solved = fk.clone();
    let mut results = vec![FootResult::default(); characters.len()];
    let (rig, ground) = (biped_rig(), Ground::Heightfield(ground()));
    if enabled {
        FootIkJob::new(&rig, &ground, &characters, &fk, &mut solved, &mut results).run().expect("cpu twin");
    }
    let mut cpu = vec![Mat4::IDENTITY; fk.len()];
    palette_world(&solved, &characters, &bevy_crowd_ik::crowd_ik::cpu::palette::inverse_bind(&bind), &mut cpu);
    let leg = 2.0 * crowd_ik_tools::scene::BONE;
    for (c, (e, m)) in matrices.iter().enumerate() {
        for j in 0..joints {
            let (g, w) = (m[j], cpu[c * joints + j]);
            let rot = (0..3).map(|k| (g.col(k) - w.col(k)).abs().max_element()).fold(0.0, f32::max);
            let pos = (g.col(3) - w.col(3)).abs().max_element();
            assert!(rot <= 1e-3 && pos <= 1e-4 * leg, "{e} joint {j}: Bevy's skin {g} vs the CPU twin {w}");
        }
    }
}

/// A character's joints in its root's frame, as the main world holds them.
fn fk_from_world(app: &App, character: Entity) -> Vec<JointPose> {
    let world = app.world();
    let root = world.get::<GlobalTransform>(character).expect("root").affine().inverse();
    let skin = world.get::<bevy::mesh::skinning::SkinnedMesh>(character).expect("skin");
    skin.joints
        .iter()
        .map(|j| {
            let (_, r, t) =
                (root * world.get::<GlobalTransform>(*j).expect("joint").affine()).to_scale_rotation_translation();
            JointPose::new(t, r.normalize())
        })
        .collect()
}

/// The plugin's diagnostics as an app system ordered after [`CrowdIkSystems::Diagnostics`]
/// reads them.
#[derive(Resource, Default)]
struct SeenDiagnostics {
    characters: Option<f64>,
    skipped: Option<f64>,
    render_ms: Option<f64>,
}

fn see_diagnostics(store: Res<DiagnosticsStore>, mut seen: ResMut<SeenDiagnostics>) {
    let value = |path: &DiagnosticPath| store.get_measurement(path).map(|m| m.value);
    seen.characters = value(&CrowdIkDiagnostics::CHARACTERS);
    seen.skipped = value(&CrowdIkDiagnostics::SKIPPED);
    seen.render_ms = value(&CrowdIkDiagnostics::RENDER_MS);
}

fn run(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.update();
    }
}

#[test]
fn ik_puts_bevy_skinned_soles_on_the_ground() {
    for poses in [PoseSource::Joints, PoseSource::Clip(Arc::new(clip()))] {
        let name = format!("{poses:?}").chars().take(6).collect::<String>();
        let mut on = app(poses.clone(), true);
        run(&mut on, 4);
        let report = on.world().resource::<CrowdIkDiagnostics>().report();
        assert_eq!(report.characters, SIDE * SIDE, "{name}: {report:?}");
        // The same figures as Bevy diagnostics, read by a system ordered after the plugin's.
        let seen = on.world().resource::<SeenDiagnostics>();
        assert_eq!(seen.characters, Some((SIDE * SIDE) as f64), "{name}: {report:?}");
        assert_eq!(seen.skipped, Some(0.0), "{name}: {report:?}");
        assert!(seen.render_ms.is_some_and(|ms| ms >= 0.0), "{name}: {report:?}");
        assert!(report.skipped.is_empty() && report.last_error.is_none(), "{name}: {report:?}");
        let matrices = skin_matrices(&mut on, 0);
        assert_matches_cpu_twin(&on, &matrices, true);
        let errors = sole_errors(&matrices);
        assert_eq!(errors.len(), SIDE * SIDE);
        let worst = errors.iter().copied().fold(0.0, f32::max);
        println!("{name}: IK on, worst sole {:.2} mm above/below the ground", worst * 1e3);
        assert!(worst < 2e-3, "{name}: IK on leaves a sole {worst} m off the ground: {errors:?}");

        let mut off = app(poses, false);
        run(&mut off, 4);
        let matrices = skin_matrices(&mut off, 0);
        assert_matches_cpu_twin(&off, &matrices, false);
        let errors = sole_errors(&matrices);
        assert_eq!(errors.len(), SIDE * SIDE);
        let best = errors.iter().copied().fold(f32::INFINITY, f32::min);
        println!("{name}: IK off, every character has a sole at least {:.1} mm off the ground", best * 1e3);
        assert!(best > 0.02, "{name}: without IK a character already stands on the hills: {errors:?}");
    }
}

fn report(app: &App) -> bevy_crowd_ik::CrowdIkReport {
    app.world().resource::<CrowdIkDiagnostics>().report()
}

fn worst_sole(app: &mut App) -> f32 {
    sole_errors(&skin_matrices(app, 0)).into_iter().fold(0.0, f32::max)
}

/// The solver lives on Bevy's device (its buffers are usable in Bevy's command encoders; a
/// buffer of a second device is not), characters that do not fit the rig are skipped and
/// named while the rest are solved, and despawns, broken skeletons and a rig swapped at run
/// time leave the other characters on the ground.
#[test]
fn plugin_runs_on_bevys_device_and_survives_bad_characters() {
    let mut app = app(PoseSource::Joints, true);
    run(&mut app, 2);
    // A character whose skeleton does not match the rig: 5 joints.
    let short: Vec<Entity> = (0..5).map(|_| app.world_mut().spawn(Transform::default()).id()).collect();
    let short_ibp = app
        .world_mut()
        .resource_mut::<Assets<bevy::mesh::skinning::SkinnedMeshInverseBindposes>>()
        .add(bevy::mesh::skinning::SkinnedMeshInverseBindposes::from(vec![Mat4::IDENTITY; 5]));
    let misfit = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 1.0, 0.0),
            bevy::mesh::skinning::SkinnedMesh { inverse_bindposes: short_ibp, joints: short },
            CrowdIkCharacter::default(),
        ))
        .id();
    run(&mut app, 2);
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE, "{r:?}");
    assert!(
        r.skipped.iter().any(|(e, why)| *e == misfit && why.contains("5 joints")),
        "the misfit is named: {:?}",
        r.skipped
    );
    assert!(worst_sole(&mut app) < 2e-3);

    // Bevy's device: the solver's buffers are used in a command buffer of Bevy's device and
    // queue without a validation error (wgpu rejects another device's buffer: a validation
    // error for a sibling device, a panic for one from another instance).
    {
        use bevy_crowd_ik::crowd_ik::gpu::context::ErrorScopes;
        let world = app.sub_app_mut(RenderApp).world_mut();
        let device = world.resource::<RenderDevice>().wgpu_device().clone();
        let queue: wgpu::Queue = (**world.resource::<RenderQueue>()).clone();
        let gpu = world.resource::<CrowdIkGpu>();
        assert!(gpu.device().is_some());
        let ours = gpu.solver(0).and_then(|s| s.pose_output()).expect("solved").clone();
        let copy_with_bevy = |source: &wgpu::Buffer| {
            let scope = ErrorScopes::push(&device);
            let dst = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 256,
                usage: wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(source, 0, &dst, 0, 256);
            queue.submit([encoder.finish()]);
            scope.pop()
        };
        copy_with_bevy(&ours).expect("the solver's buffers belong to Bevy's device");
    }

    // Despawn a character (its joints go with it) and break another's skeleton.
    let characters: Vec<Entity> = app.world_mut().query_filtered::<Entity, With<Mesh3d>>().iter(app.world()).collect();
    app.world_mut().despawn(characters[0]);
    let broken = characters[1];
    let joint = app.world().get::<bevy::mesh::skinning::SkinnedMesh>(broken).expect("skin").joints[7];
    app.world_mut().despawn(joint);
    run(&mut app, 2);
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE - 2, "{r:?}");
    assert!(r.skipped.iter().any(|(e, why)| *e == broken && why.contains("joint")), "{:?}", r.skipped);
    assert!(worst_sole(&mut app) < 2e-3);

    // A rig changed at run time (foot placement on): rebuilt, survivors solved.
    app.world_mut().resource_mut::<CrowdIk>().rigs[0].rig =
        biped_rig().with_placement(Some(bevy_crowd_ik::crowd_ik::crowd::FootPlacement::default()));
    run(&mut app, 6);
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE - 2, "{r:?}");
    assert!(r.last_error.is_none(), "{r:?}");
    let worst = worst_sole(&mut app);
    println!("foot placement on: worst sole {:.2} mm", worst * 1e3);
    assert!(worst < 5e-3, "{worst}");
    // The copy path (uniform-buffer skinning's): the same matrices as the scatter.
    let scattered = skin_matrices(&mut app, 0);
    app.world_mut().resource_mut::<CrowdIk>().copy_per_character = true;
    run(&mut app, 1);
    let copied = skin_matrices(&mut app, 0);
    assert_eq!(copied.len(), scattered.len());
    for ((e, a), (f, b)) in scattered.iter().zip(&copied) {
        assert_eq!(e, f);
        let apart = a
            .iter()
            .zip(b)
            .map(|(x, y)| (*x - *y).abs().to_cols_array().into_iter().fold(0.0, f32::max))
            .fold(0.0, f32::max);
        assert!(apart < 1e-3, "{e}: copied matrices {apart} from the scattered ones");
    }
    assert!(worst_sole(&mut app) < 5e-3);
    // Toggling IK does not rebuild anything and skins the FK pose.
    app.world_mut().resource_mut::<CrowdIk>().enabled = false;
    run(&mut app, 2);
    assert!(worst_sole(&mut app) > 0.02);
}

/// The app's own raycasts: a hit under each FK ankle (the heightfield's height and normal
/// there), as a physics engine would return them.
fn raycast_feet(mut commands: Commands, characters: Query<(Entity, &GlobalTransform), With<CrowdIkCharacter>>) {
    use bevy_crowd_ik::crowd_ik::crowd::GroundHit;
    let (ground, bind) = (ground(), bind());
    for (entity, root) in &characters {
        let mut hits = [GroundHit::miss(); 4];
        for (leg, &ankle) in ANKLES.iter().enumerate() {
            let p = root.transform_point(bind[ankle].position());
            let (h, n) = ground.sample(p.x, p.z).expect("on the field");
            hits[leg] = GroundHit::hit(Vec3::new(p.x, h, p.z), n);
        }
        commands.entity(entity).insert(bevy_crowd_ik::FootGroundHits(hits));
    }
}

/// `Ground::Hits`: the app supplies a hit per foot (component `FootGroundHits`); a character
/// without one is skipped and named; with them the soles land on the hit planes.
#[test]
fn ground_hits_from_the_app_put_the_soles_on_the_ground() {
    let mut app = app_on(Ground::Hits, PoseSource::Joints, true);
    run(&mut app, 1);
    let r = report(&app);
    assert!(r.skipped.len() == SIDE * SIDE && r.skipped.iter().all(|(_, why)| why.contains("FootGroundHits")), "{r:?}");
    app.add_systems(Update, raycast_feet);
    run(&mut app, 3);
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE, "{r:?}");
    let worst = worst_sole(&mut app);
    println!("Ground::Hits: worst sole {:.2} mm", worst * 1e3);
    assert!(worst < 3e-3, "{worst}");
}

/// The child of the two-rig test: the biped at three quarters of the size, foot height too.
const CHILD: f32 = 0.75;

fn child_bind() -> Vec<JointPose> {
    bind().iter().map(|p| JointPose::new(p.position() * CHILD, p.rotation())).collect()
}

fn child_rig() -> bevy_crowd_ik::crowd_ik::crowd::FootRig {
    let mut rig = biped_rig();
    for leg in &mut rig.legs {
        leg.foot_height *= CHILD;
    }
    rig
}

fn spawn_children(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut bindposes: ResMut<Assets<bevy::mesh::skinning::SkinnedMeshInverseBindposes>>,
) {
    let bind = child_bind();
    let mesh = meshes.add(box_mesh(&bone_boxes(&bind, &biped_parents(), 0.03)));
    let ibp = bindposes.add(inverse_bindposes(&bind));
    let ground = ground();
    for (k, (x, z)) in [(-3.4, -1.7), (-0.1, 1.6), (3.2, -1.6), (1.6, 3.2), (0.0, 0.0)].into_iter().enumerate() {
        let y = ground.sample(x, z).expect("on the field").0 + 0.03;
        let root = Transform::from_xyz(x, y, z).with_rotation(Quat::from_rotation_y(k as f32));
        // The last one names a rig the crowd does not have.
        let character = CrowdIkCharacter { rig: if k == 4 { 7 } else { 1 }, ..default() };
        spawn_skinned(&mut commands, root, &bind, &biped_parents(), ibp.clone(), (Mesh3d(mesh.clone()), character));
    }
}

/// Two skeletons in one crowd (adults on rig 0, children on rig 1, each its own solver,
/// inverse bind poses and foot height): every sole of both on the ground; a character naming
/// a rig the crowd lacks is skipped and named.
#[test]
fn two_rigs_in_one_crowd() {
    let mut app = app(PoseSource::Joints, true);
    let child = app.world_mut().resource_mut::<CrowdIk>().add_rig(child_rig(), PoseSource::Joints);
    assert_eq!(child, 1);
    app.add_systems(Startup, spawn_children);
    run(&mut app, 4);
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE + 4, "{r:?}");
    assert!(r.skipped.len() == 1 && r.skipped[0].1.contains("rig 7"), "{:?}", r.skipped);
    let adults = sole_errors(&skin_matrices(&mut app, 0));
    let children = sole_errors_of(&skin_matrices(&mut app, 1), &child_bind(), FOOT_HEIGHT * CHILD);
    assert_eq!((adults.len(), children.len()), (SIDE * SIDE, 4));
    let worst = adults.iter().chain(&children).copied().fold(0.0, f32::max);
    println!(
        "two rigs: worst sole {:.2} mm (children {:?} mm)",
        worst * 1e3,
        children.iter().map(|e| e * 1e3).collect::<Vec<_>>()
    );
    assert!(worst < 2e-3, "adults {adults:?}, children {children:?}");
}

/// Bevy's own animation drives the crowd: an `AnimationClip` (the pelvis dips 6 cm and comes
/// back every second) played by an `AnimationPlayer` per character on its joint entities.
fn animate_with_bevy(
    mut commands: Commands,
    characters: Query<(Entity, &bevy::mesh::skinning::SkinnedMesh), With<CrowdIkCharacter>>,
    mut clips: ResMut<Assets<AnimationClip>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
) {
    use bevy::animation::{animated_field, AnimatedBy, AnimationTargetId};
    let name = |j: usize| Name::new(format!("joint {j}"));
    let mut clip = AnimationClip::default();
    for (j, local) in local_transforms(&bind(), &biped_parents()).iter().enumerate() {
        let dip = if j == 1 { Vec3::Y * 0.06 } else { Vec3::ZERO };
        let keys = [(0.0, local.translation), (0.5, local.translation - dip), (1.0, local.translation)];
        clip.add_curve_to_target(
            AnimationTargetId::from_name(&name(j)),
            AnimatableCurve::new(
                animated_field!(Transform::translation),
                AnimatableKeyframeCurve::new(keys).expect("keys"),
            ),
        );
    }
    let (graph, node) = AnimationGraph::from_clip(clips.add(clip));
    let graph = graphs.add(graph);
    for (k, (character, skin)) in characters.iter().enumerate() {
        for (j, joint) in skin.joints.iter().enumerate() {
            commands.entity(*joint).insert((AnimationTargetId::from_name(&name(j)), AnimatedBy(character)));
        }
        let mut player = AnimationPlayer::default();
        player.play(node).repeat().seek_to(0.2 + 0.02 * k as f32);
        commands.entity(character).insert((player, AnimationGraphHandle(graph.clone())));
    }
}

/// The FK pose from Bevy's `AnimationPlayer` (`PoseSource::Joints`): the plugin solves the
/// animated pose (pelvis lowered by the clip, not the bind pose) exactly as the CPU twin does
/// on the joints' `GlobalTransform`s, and the soles land on the ground.
#[test]
fn bevys_animation_player_drives_the_fk_pose() {
    let mut app = app(PoseSource::Joints, true);
    app.add_systems(Startup, animate_with_bevy.after(setup));
    // Frames until the clip has lowered the pelvis by a centimetre (frames of a debug build
    // on lavapipe take tens of milliseconds).
    let bind = bind();
    let dip = |app: &App, e: Entity| bind[1].position().y - fk_from_world(app, e)[1].position().y;
    for _ in 0..200 {
        run(&mut app, 1);
        let first = app.sub_app(RenderApp).world().resource::<CrowdIkGpu>().entities(0).first().map(|e| e.id());
        if first.is_some_and(|e| dip(&app, e) > 0.01) {
            break;
        }
    }
    let r = report(&app);
    assert_eq!(r.characters, SIDE * SIDE, "{r:?}");
    let matrices = skin_matrices(&mut app, 0);
    // The animation is live: every pelvis is below its bind height.
    for (e, _) in &matrices {
        assert!(dip(&app, *e) > 5e-3, "{e}: the pelvis is {} m below the bind pose", dip(&app, *e));
    }
    assert_matches_cpu_twin(&app, &matrices, true);
    let worst = sole_errors(&matrices).into_iter().fold(0.0, f32::max);
    println!("AnimationPlayer: worst sole {:.2} mm", worst * 1e3);
    assert!(worst < 2e-3, "{worst}");
}

/// Characters of a glTF file spawned as scenes, in a grid on the hills.
const GLTF_SIDE: usize = 2;

fn gltf_app(enabled: bool) -> App {
    quiet_mesa();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() })
            .set(AssetPlugin { file_path: untextured_cesium_man(), ..default() })
            .disable::<bevy::log::LogPlugin>(),
    )
    .add_plugins(CrowdIkPlugin);
    let mut settings = CrowdIk::with_ground(Ground::Heightfield(ground()));
    settings.enabled = enabled;
    // Every frame 1/60 s, whatever the machine's speed: the walk and foot placement advance
    // the same per frame.
    app.insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(std::time::Duration::from_secs_f64(1.0 / 60.0)))
        .insert_resource(settings)
        .insert_resource(WalkSpeed(cesium_man_speed()))
        .add_systems(Startup, spawn_gltf_crowd)
        .add_systems(Update, (play_gltf_walk, walk_roots));
    app.finish();
    app.cleanup();
    app
}

/// A folder holding `CesiumMan.glb` without its texture (a JPEG: this test's Bevy has no
/// JPEG decoder, and the texture plays no part in IK).
fn untextured_cesium_man() -> String {
    untextured("CesiumMan.glb")
}

/// A folder holding the test character `name` (a GLB of `tests/data/gltf`) without its
/// textures: images, textures, samplers and materials taken out of its JSON, the binary
/// chunk as it is.
fn untextured(name: &str) -> String {
    let bytes = std::fs::read(format!("{}/../../tests/data/gltf/{name}", env!("CARGO_MANIFEST_DIR"))).expect("file");
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().expect("header")) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_len]).expect("json");
    let root = json.as_object_mut().expect("object");
    for key in ["images", "textures", "samplers", "materials"] {
        root.remove(key);
    }
    for mesh in root.get_mut("meshes").and_then(|m| m.as_array_mut()).into_iter().flatten() {
        for prim in mesh["primitives"].as_array_mut().into_iter().flatten() {
            prim.as_object_mut().expect("primitive").remove("material");
        }
    }
    let mut text = serde_json::to_vec(&json).expect("json");
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let bin = &bytes[20 + json_len..];
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + text.len() + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(bin);
    let dir = std::env::temp_dir().join(format!("bevy-crowd-ik-gltf-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join(name), out).expect("write");
    dir.to_string_lossy().into_owned()
}

/// A camera and Cesium Man spawned as a glTF scene, the usual way, on the hills: nothing
/// but `CrowdIkScene` says it is a crowd character.
fn spawn_gltf_crowd(mut commands: Commands, assets: Res<AssetServer>, mut images: ResMut<Assets<Image>>) {
    spawn_camera(&mut commands, &mut images, Transform::from_xyz(0.0, 8.0, 8.0).looking_at(Vec3::ZERO, Vec3::Y));
    let ground = ground();
    let scene = assets.load(GltfAssetLabel::Scene(0).from_asset("CesiumMan.glb"));
    for i in 0..GLTF_SIDE {
        for j in 0..GLTF_SIDE {
            let (x, z) = (-1.6 + 3.2 * i as f32, -1.6 + 3.2 * j as f32);
            let y = ground.sample(x, z).expect("on the field").0;
            commands.spawn((
                WorldAssetRoot(scene.clone()),
                Transform::from_xyz(x, y, z).with_rotation(Quat::from_rotation_y(0.9 * (i + 2 * j) as f32)),
                bevy_crowd_ik::CrowdIkScene::default(),
            ));
        }
    }
}

/// The speed Cesium Man's walk (which walks in place) needs from its root: the crate's own
/// loader and `crowd_ik_tools::character::in_place_speed`.
fn cesium_man_speed() -> f32 {
    use crowd_ik_tools::character::{floor, frames, in_place_speed};
    let scene = bevy_crowd_ik::crowd_ik::gltf::GltfScene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/gltf/CesiumMan.glb"
    ))
    .expect("file");
    let rig = scene.foot_rig(0, Default::default(), 1.0).expect("rig");
    let clip =
        scene.clips[0].bake(&scene.skins[0], 60.0, bevy_crowd_ik::crowd_ik::gltf::RootMotion::Extract).expect("clip");
    let poses = frames(&clip);
    in_place_speed(&rig, &poses, clip.frame_time, floor(&rig, &poses))
}

#[derive(Resource)]
struct WalkSpeed(f32);

/// The app's character controller: each scene root walks along its heading at the clip's
/// speed, on the ground.
fn walk_roots(
    mut roots: Query<&mut Transform, With<bevy_crowd_ik::CrowdIkScene>>,
    time: Res<Time>,
    speed: Res<WalkSpeed>,
) {
    let ground = ground();
    for mut t in &mut roots {
        let step = t.rotation * Vec3::Z * speed.0 * time.delta_secs();
        t.translation += step;
        t.translation.y = ground.sample(t.translation.x, t.translation.z).map_or(t.translation.y, |(y, _)| y);
    }
}

/// The file's walk, played by the `AnimationPlayer` its scene spawns with.
fn play_gltf_walk(
    mut commands: Commands,
    mut players: Query<(Entity, &mut AnimationPlayer), Added<AnimationPlayer>>,
    assets: Res<AssetServer>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
) {
    for (k, (entity, mut player)) in players.iter_mut().enumerate() {
        let (graph, node) =
            AnimationGraph::from_clip(assets.load(GltfAssetLabel::Animation(0).from_asset("CesiumMan.glb")));
        player.play(node).repeat().seek_to(0.3 * k as f32);
        commands.entity(entity).insert(AnimationGraphHandle(graphs.add(graph)));
    }
}

/// For each character: the lowest point of each foot the pose plants ([`AutoFootWeights`]),
/// skinned by Bevy's skin buffer (world space), above the ground under it; by character and
/// leg.
fn planted_feet_gaps(app: &App, matrices: &[(Entity, Vec<Mat4>)]) -> Vec<((Entity, usize), f32)> {
    use bevy::mesh::VertexAttributeValues;
    let world = app.world();
    let crowd = world.resource::<CrowdIk>();
    let ground = ground();
    let mut gaps = Vec::new();
    for (e, m) in matrices {
        let character = world.get::<CrowdIkCharacter>(*e).expect("a character");
        let rig = &crowd.rigs[character.rig].rig;
        let auto = world.get::<bevy_crowd_ik::AutoFootWeights>(*e).expect("weights from the pose");
        let mesh = world.resource::<Assets<Mesh>>().get(&world.get::<Mesh3d>(*e).expect("mesh").0).expect("loaded");
        let Some(VertexAttributeValues::Float32x3(positions)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION) else {
            panic!("positions")
        };
        let Some(VertexAttributeValues::Uint16x4(joints)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_INDEX) else {
            panic!("joints")
        };
        let Some(VertexAttributeValues::Float32x4(weights)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT) else {
            panic!("weights")
        };
        let scale = world.get::<GlobalTransform>(*e).expect("root").to_scale_rotation_translation().0.x;
        let planted = auto.weights(rig, &fk_from_world(app, *e), scale);
        for (l, leg) in rig.legs.iter().enumerate() {
            if planted[l] < 1.0 {
                continue;
            }
            let foot = bevy_crowd_ik::crowd_ik::crowd::joints_below(&rig.parents, leg.joints[2]);
            let mut gap = f32::MAX;
            for (p, (j, w)) in positions.iter().zip(joints.iter().zip(weights)) {
                let on: f32 = (0..4).filter(|&k| foot[j[k] as usize]).map(|k| w[k]).sum();
                if on >= 0.5 {
                    let v: Vec3 = (0..4).map(|k| m[j[k] as usize].transform_point3(Vec3::from(*p)) * w[k]).sum();
                    gap = gap.min(v.y - ground.sample(v.x, v.z).expect("on the field").0);
                }
            }
            gaps.push(((*e, l), gap));
        }
    }
    gaps
}

/// A glTF file spawned the usual way (`WorldAssetRoot`, its walk played by the
/// `AnimationPlayer` the scene comes with) becomes a crowd character with no joint lists:
/// the plugin finds its skinned mesh and joints, builds the rig once for the four
/// characters (legs found by shape, soles read off the mesh), weights the feet from the
/// pose, and solves on Bevy's device. Bevy's skinned shoes of every planted foot rest on
/// the hills with IK on (2 mm on average, 4 mm at worst, toe offs included: the rig's sole
/// bends with the toes), and are centimetres off with it off.
#[test]
fn a_gltf_scene_spawned_the_usual_way_becomes_a_crowd_character() {
    let (mut worst, mut mean) = ([0.0_f32; 2], [0.0_f32; 2]);
    for (k, enabled) in [true, false].into_iter().enumerate() {
        let mut app = gltf_app(enabled);
        // Frames until the file has loaded and every character has been solved for 40
        // frames (foot placement blends feet in over 0.15 s).
        let mut solved = 0;
        for _ in 0..600 {
            run(&mut app, 1);
            if report(&app).characters == GLTF_SIDE * GLTF_SIDE {
                solved += 1;
                if solved == 40 {
                    break;
                }
            }
        }
        let r = report(&app);
        assert_eq!(r.characters, GLTF_SIDE * GLTF_SIDE, "{r:?}");
        assert_eq!(app.world().resource::<CrowdIk>().rigs.len(), 1, "one rig for one skeleton");
        // Six looks, 10 frames (1/6 s) apart as the walk moves on; a foot counts where it
        // was planted at the look before too, so foot placement has blended it in (0.15 s).
        let (mut gaps, mut before) = (Vec::new(), Vec::new());
        for _ in 0..6 {
            run(&mut app, 10);
            let matrices = skin_matrices(&mut app, 0);
            let now = planted_feet_gaps(&app, &matrices);
            gaps.extend(now.iter().filter(|(foot, _)| before.contains(foot)).map(|(_, g)| *g));
            before = now.into_iter().map(|(foot, _)| foot).collect();
        }
        assert!(gaps.len() >= 6, "planted feet: {gaps:?}");
        worst[k] = gaps.iter().fold(0.0_f32, |a, g| a.max(g.abs()));
        mean[k] = gaps.iter().map(|g| g.abs()).sum::<f32>() / gaps.len() as f32;
        println!(
            "glTF scene, IK {}: {} planted feet, shoes off the ground by {:.1} mm mean, {:.1} mm worst",
            ["on", "off"][k],
            gaps.len(),
            mean[k] * 1e3,
            worst[k] * 1e3
        );
    }
    assert!(
        mean[0] <= 0.002 && worst[0] <= 0.004,
        "IK on: planted shoes {} m off on average, {} m worst",
        mean[0],
        worst[0]
    );
    assert!(
        mean[1] >= 2.0 * mean[0] && worst[1] >= 0.02,
        "IK off: the hills put planted shoes centimetres off ({} m)",
        worst[1]
    );
}

/// A quadruped spawned as a scene (the glTF Fox, in centimetres under a 0.01 root): the
/// plugin finds its four legs — the hind ones by name as pseudo three-bone legs, the front
/// ones named as arms as two-bone legs whose foot is a point at the paw — builds the rig
/// once, and solves it; nothing is refused.
#[test]
fn a_quadruped_scene_becomes_a_four_legged_crowd_character() {
    use bevy_crowd_ik::crowd_ik::crowd::LegKind;
    quiet_mesa();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() })
            .set(AssetPlugin { file_path: untextured("Fox.glb"), ..default() })
            .disable::<bevy::log::LogPlugin>(),
    )
    .add_plugins(CrowdIkPlugin)
    .insert_resource(CrowdIk::with_ground(Ground::Heightfield(ground())))
    .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(std::time::Duration::from_secs_f64(1.0 / 60.0)))
    .add_systems(Startup, |mut commands: Commands, assets: Res<AssetServer>, mut images: ResMut<Assets<Image>>| {
        spawn_camera(&mut commands, &mut images, Transform::from_xyz(0.0, 4.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y));
        let y = ground().sample(0.0, 0.0).expect("on the field").0;
        commands.spawn((
            WorldAssetRoot(assets.load(GltfAssetLabel::Scene(0).from_asset("Fox.glb"))),
            Transform::from_xyz(0.0, y, 0.0).with_scale(Vec3::splat(0.01)),
            bevy_crowd_ik::CrowdIkScene::default(),
        ));
    });
    app.finish();
    app.cleanup();
    for _ in 0..600 {
        run(&mut app, 1);
        if report(&app).characters == 1 {
            break;
        }
    }
    run(&mut app, 10);
    let r = report(&app);
    assert_eq!(r.characters, 1, "{r:?}");
    let refused = app.world_mut().query::<&bevy_crowd_ik::CrowdIkRefused>().iter(app.world()).count();
    assert_eq!(refused, 0);
    let rigs = &app.world().resource::<CrowdIk>().rigs;
    assert_eq!(rigs.len(), 1);
    let legs = &rigs[0].rig.legs;
    let kinds: Vec<LegKind> = legs.iter().map(|l| l.kind).collect();
    let hind = LegKind::PseudoThreeBone { blend: 0.5 };
    assert_eq!(kinds, [hind, hind, LegKind::TwoBone, LegKind::TwoBone]);
    assert!(legs[2..].iter().all(|l| l.joints[2] == l.joints[3] && l.foot_height > 0.03), "{legs:?}");
}
