//! Walkers on hills in a Bevy window, their feet planted by crowd-ik on Bevy's own GPU.
//!
//! ```sh
//! cargo +nightly run --release --ignore-rust-version --features window --example bevy_crowd -- [characters] [--joints | --animation | --gltf PATH [--clip N] [--scale S]] [--frames N]
//! ```
//!
//! `I` toggles IK, `T` the IK pass's GPU timing; the overlay shows frames per second, frame
//! time, the plugin's CPU time (extract + render world) and the IK pass's GPU time.
//! By default every walker plays the procedural walk through the GPU clip sampler (nothing
//! per joint on the CPU). `--animation` plays it with Bevy's own `AnimationPlayer` (an
//! `AnimationClip` on the joint entities) and `--joints` with a plain system writing the
//! joints' `Transform`s; in both the plugin reads the joints' `GlobalTransform`s
//! (`PoseSource::Joints`). `--gltf PATH` makes the crowd of a glTF character instead,
//! spawned the usual way (`WorldAssetRoot`, its clip `N` played by the `AnimationPlayer` its
//! scene comes with) and marked `CrowdIkScene`: the plugin finds its joints and builds its
//! rig; e.g. `--gltf ../../tests/data/gltf/Fox.glb --clip 1 --scale 0.01` (a file whose
//! textures are PNG; JPEG textures need Bevy's `jpeg` feature). `--frames N` quits after N
//! frames and prints the averages.

use std::f32::consts::{PI, TAU};
use std::sync::Arc;

use bevy::animation::{animated_field, AnimatedBy, AnimationTargetId};
use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::render::view::Tonemapping;

use bevy_crowd_ik::crowd_ik::crowd::{Ground, Heightfield, JointPose};
use bevy_crowd_ik::mesh::{box_mesh, heightfield_mesh, inverse_bindposes, local_transforms, spawn_skinned, SkinnedBox};
use bevy_crowd_ik::{CrowdIk, CrowdIkCharacter, CrowdIkDiagnostics, CrowdIkPlugin, CrowdIkScene, GpuClip, PoseSource};
use crowd_ik_tools::scene::{biped_boxes, biped_parents, biped_rig, walk_pose, CYCLE, SPEED};
use crowd_ik_tools::terrain::hills;

/// Half the side of the square the crowd walks on.
const HALF: f32 = 30.0;
/// Frames of the walk clip per cycle.
const CLIP_FRAMES: usize = 33;

/// Who animates the walkers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Animate {
    /// The crate's GPU clip sampler.
    GpuClip,
    /// A system writing the joint entities' transforms.
    System,
    /// Bevy's `AnimationPlayer`.
    Player,
    /// A glTF character's own clip, by Bevy's `AnimationPlayer`.
    Gltf,
}

/// `--gltf`: the file (in the asset folder), its clip, scale and the root speed its clip
/// needs.
#[derive(Resource, Clone)]
struct GltfCharacter {
    file: String,
    clip: usize,
    scale: f32,
    speed: f32,
}

impl GltfCharacter {
    /// From the command line: the asset folder (the file's) and the character.
    fn from_args(args: &[String]) -> Option<(String, Self)> {
        let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
        let path = std::fs::canonicalize(value("--gltf")?).expect("--gltf: no such file");
        let clip = value("--clip").and_then(|s| s.parse().ok()).unwrap_or(0);
        let scale = value("--scale").and_then(|s| s.parse().ok()).unwrap_or(1.0);
        // The root speed its walk needs when the clip walks in place, read with crowd-ik's
        // own loader (0 for a clip that moves its root itself).
        let scene = bevy_crowd_ik::crowd_ik::gltf::GltfScene::load(&path).expect("a glTF file crowd-ik reads");
        let speed = (|| {
            use crowd_ik_tools::character::{floor, frames, in_place_speed};
            let rig = scene.foot_rig(0, Default::default(), 1.0).ok()?;
            let extract = bevy_crowd_ik::crowd_ik::gltf::RootMotion::Extract;
            let baked = scene.clips.get(clip)?.bake(&scene.skins[0], 60.0, extract).ok()?;
            let poses = frames(&baked);
            Some(in_place_speed(&rig, &poses, baked.frame_time, floor(&rig, &poses)).max(0.0) * scale)
        })()
        .unwrap_or(0.0);
        let folder = path.parent().expect("a folder").to_string_lossy().into_owned();
        let file = path.file_name().expect("a file").to_string_lossy().into_owned();
        Some((folder, Self { file, clip, scale, speed }))
    }
}

#[derive(Resource)]
struct Options {
    frames: Option<u64>,
    animate: Animate,
}

#[derive(Resource)]
struct Terrain(Heightfield);

#[derive(Component)]
struct Walker {
    position: Vec2,
    heading: f32,
}

impl Walker {
    /// Walks `distance` along the heading, turning back at the field's edges; the root
    /// transform on the ground there, facing the heading, scaled by `scale`.
    fn advance(&mut self, distance: f32, terrain: &Heightfield, scale: f32) -> Transform {
        self.position += Vec2::new(self.heading.sin(), self.heading.cos()) * distance;
        if self.position.x.abs() > HALF || self.position.y.abs() > HALF {
            self.heading += PI;
            self.position = self.position.clamp(Vec2::splat(-HALF), Vec2::splat(HALF));
        }
        let y = terrain.sample(self.position.x, self.position.y).map_or(0.0, |(y, _)| y);
        Transform::from_xyz(self.position.x, y, self.position.y)
            .with_rotation(Quat::from_rotation_y(self.heading))
            .with_scale(Vec3::splat(scale))
    }
}

#[derive(Component)]
struct Overlay;

#[derive(Resource, Default)]
struct Stats {
    frames: u64,
    frame_ms: f64,
    plugin_ms: f64,
    sum_frame_ms: f64,
    sum_plugin_ms: f64,
    sum_extract_ms: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1000);
    let frames = args.iter().position(|a| a == "--frames").and_then(|i| args.get(i + 1)?.parse().ok());
    let gltf = GltfCharacter::from_args(&args);
    let animate = if gltf.is_some() {
        Animate::Gltf
    } else if args.iter().any(|a| a == "--animation") {
        Animate::Player
    } else if args.iter().any(|a| a == "--joints") {
        Animate::System
    } else {
        Animate::GpuClip
    };
    let terrain = hills(Vec2::splat(-HALF - 2.0), 0.5, 129, 129, 0.6);
    let poses = if animate != Animate::GpuClip {
        PoseSource::Joints
    } else {
        // The procedural walk as a looping clip of local transforms.
        let local = (0..CLIP_FRAMES)
            .flat_map(|k| {
                let pose = walk_pose(TAU * k as f32 / CLIP_FRAMES as f32).0;
                local_transforms(&pose, &biped_parents()).into_iter().map(|t| JointPose::new(t.translation, t.rotation))
            })
            .collect();
        PoseSource::Clip(Arc::new(GpuClip { local, parents: biped_parents(), frame_time: CYCLE / CLIP_FRAMES as f32 }))
    };
    let ground = Ground::Heightfield(terrain.clone());
    // A glTF crowd's rig is built by the plugin when its scene has spawned.
    let mut settings =
        if gltf.is_some() { CrowdIk::with_ground(ground) } else { CrowdIk::new(biped_rig(), ground, poses) };
    settings.gpu_timing = true;
    let folder = gltf.as_ref().map_or_else(|| "assets".to_string(), |(folder, _)| folder.clone());
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "crowd-ik in Bevy".into(),
                    resolution: (960, 540).into(),
                    ..default()
                }),
                ..default()
            })
            .set(AssetPlugin { file_path: folder, ..default() }),
    );
    if let Some((_, character)) = gltf {
        app.insert_resource(character).add_systems(Update, (walk_scenes, play_clips));
    }
    app.add_plugins(CrowdIkPlugin)
        .insert_resource(settings)
        .insert_resource(Terrain(terrain))
        .insert_resource(Options { frames, animate })
        .init_resource::<Stats>()
        .add_systems(
            Startup,
            move |commands: Commands,
                  assets: SetupAssets,
                  terrain: Res<Terrain>,
                  server: Res<AssetServer>,
                  gltf: Option<Res<GltfCharacter>>| {
                match gltf {
                    Some(gltf) => setup_gltf(commands, assets, terrain, &server, &gltf, count),
                    None => setup(commands, assets, terrain, animate, count),
                }
            },
        )
        .add_systems(Update, (walk, animate_joints, keys, overlay, quit))
        .run();
}

/// The assets `setup` adds to.
#[derive(bevy::ecs::system::SystemParam)]
struct SetupAssets<'w> {
    meshes: ResMut<'w, Assets<Mesh>>,
    materials: ResMut<'w, Assets<StandardMaterial>>,
    bindposes: ResMut<'w, Assets<bevy::mesh::skinning::SkinnedMeshInverseBindposes>>,
    clips: ResMut<'w, Assets<AnimationClip>>,
    graphs: ResMut<'w, Assets<AnimationGraph>>,
}

/// The name of joint `j` (its animation target).
fn joint_name(j: usize) -> Name {
    Name::new(format!("joint {j}"))
}

/// The procedural walk as a Bevy animation clip: each joint's local translation and
/// rotation, keyed at every clip frame (a closed loop).
fn walk_clip() -> AnimationClip {
    let parents = biped_parents();
    let keys: Vec<(f32, Vec<Transform>)> = (0..=CLIP_FRAMES)
        .map(|k| {
            let pose = walk_pose(TAU * k as f32 / CLIP_FRAMES as f32).0;
            (k as f32 * CYCLE / CLIP_FRAMES as f32, local_transforms(&pose, &parents))
        })
        .collect();
    let mut clip = AnimationClip::default();
    for j in 0..parents.len() {
        let id = AnimationTargetId::from_name(&joint_name(j));
        let translations = keys.iter().map(|(t, p)| (*t, p[j].translation));
        let rotations = keys.iter().map(|(t, p)| (*t, p[j].rotation));
        clip.add_curve_to_target(
            id,
            AnimatableCurve::new(
                animated_field!(Transform::translation),
                AnimatableKeyframeCurve::new(translations).expect("keys"),
            ),
        );
        clip.add_curve_to_target(
            id,
            AnimatableCurve::new(
                animated_field!(Transform::rotation),
                AnimatableKeyframeCurve::new(rotations).expect("keys"),
            ),
        );
    }
    clip
}

/// Camera, light, terrain and overlay.
fn setup_scene(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
    terrain: &Heightfield,
) {
    commands.spawn((
        Camera3d::default(),
        Tonemapping::Reinhard,
        // The whole field in view: every walker has a skin (Bevy allocates none for hidden ones).
        Transform::from_xyz(0.0, 42.0, 52.0).looking_at(Vec3::new(0.0, 0.0, 2.0), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight { illuminance: 8000.0, shadow_maps_enabled: false, ..default() },
        Transform::from_xyz(4.0, 10.0, 6.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Mesh3d(meshes.add(heightfield_mesh(terrain))),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgb(0.35, 0.5, 0.3),
            perceptual_roughness: 0.9,
            ..default()
        })),
    ));
    commands.spawn((
        Text::new(""),
        Node { position_type: PositionType::Absolute, top: px(8.0), left: px(8.0), ..default() },
        Overlay,
    ));
}

/// `--gltf`: the character spawned as its file's scene, `count` times, each a walker.
fn setup_gltf(
    mut commands: Commands,
    assets: SetupAssets,
    terrain: Res<Terrain>,
    server: &AssetServer,
    gltf: &GltfCharacter,
    count: usize,
) {
    let SetupAssets { mut meshes, mut materials, .. } = assets;
    setup_scene(&mut commands, &mut meshes, &mut materials, &terrain.0);
    let scene = server.load(bevy::gltf::GltfAssetLabel::Scene(0).from_asset(gltf.file.clone()));
    let mut rng = crowd_ik_tools::workload::Rng::new(7);
    for _ in 0..count {
        let position = Vec2::new(rng.range(-HALF, HALF), rng.range(-HALF, HALF));
        let heading = rng.range(-PI, PI);
        commands.spawn((
            bevy::world_serialization::WorldAssetRoot(scene.clone()),
            Transform::from_scale(Vec3::splat(gltf.scale)),
            Walker { position, heading },
            CrowdIkScene::default(),
        ));
    }
}

/// `--gltf`: each scene's walk, started where its `AnimationPlayer` appears, at a random
/// time.
fn play_clips(
    mut commands: Commands,
    mut players: Query<(Entity, &mut AnimationPlayer), Added<AnimationPlayer>>,
    server: Res<AssetServer>,
    gltf: Res<GltfCharacter>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut rng: Local<Option<crowd_ik_tools::workload::Rng>>,
) {
    let rng = rng.get_or_insert_with(|| crowd_ik_tools::workload::Rng::new(11));
    for (entity, mut player) in &mut players {
        let clip = server.load(bevy::gltf::GltfAssetLabel::Animation(gltf.clip).from_asset(gltf.file.clone()));
        let (graph, node) = AnimationGraph::from_clip(clip);
        player.play(node).repeat().seek_to(rng.range(0.0, 2.0));
        commands.entity(entity).insert(AnimationGraphHandle(graphs.add(graph)));
    }
}

/// `--gltf`: root motion for the scenes at the speed their clip needs, turning back at the
/// edges, the root on the ground under it (the plugin weights the feet from the pose).
fn walk_scenes(
    time: Res<Time>,
    terrain: Res<Terrain>,
    gltf: Res<GltfCharacter>,
    mut walkers: Query<(&mut Walker, &mut Transform), With<CrowdIkScene>>,
) {
    let dt = time.delta_secs();
    for (mut w, mut transform) in &mut walkers {
        *transform = w.advance(gltf.speed * dt, &terrain.0, gltf.scale);
    }
}

fn setup(mut commands: Commands, assets: SetupAssets, terrain: Res<Terrain>, animate: Animate, count: usize) {
    let SetupAssets { mut meshes, mut materials, mut bindposes, mut clips, mut graphs } = assets;
    setup_scene(&mut commands, &mut meshes, &mut materials, &terrain.0);
    let bind = walk_pose(0.0).0;
    let boxes: Vec<SkinnedBox> = biped_boxes(&bind)
        .into_iter()
        .map(|b| SkinnedBox { joint: b.joint, from: b.from, to: b.to, half_width: b.half_width })
        .collect();
    let mesh = meshes.add(box_mesh(&boxes));
    let material = materials.add(StandardMaterial { base_color: Color::srgb(0.85, 0.45, 0.2), ..default() });
    let ibp = bindposes.add(inverse_bindposes(&bind));
    let player = (animate == Animate::Player).then(|| {
        let (graph, node) = AnimationGraph::from_clip(clips.add(walk_clip()));
        (graphs.add(graph), node)
    });
    let mut rng = crowd_ik_tools::workload::Rng::new(7);
    for _ in 0..count {
        let position = Vec2::new(rng.range(-HALF, HALF), rng.range(-HALF, HALF));
        let heading = rng.range(-PI, PI);
        let character = CrowdIkCharacter { clip_offset: rng.range(0.0, CYCLE), ..default() };
        let extra = (Mesh3d(mesh.clone()), MeshMaterial3d(material.clone()), character, Walker { position, heading });
        let offset = character.clip_offset;
        let (walker, joints) =
            spawn_skinned(&mut commands, Transform::IDENTITY, &bind, &biped_parents(), ibp.clone(), extra);
        if let Some((graph, node)) = &player {
            for (j, joint) in joints.into_iter().enumerate() {
                commands.entity(joint).insert((
                    joint_name(j),
                    AnimationTargetId::from_name(&joint_name(j)),
                    AnimatedBy(walker),
                ));
            }
            let mut player = AnimationPlayer::default();
            player.play(*node).repeat().seek_to(offset);
            commands.entity(walker).insert((player, AnimationGraphHandle(graph.clone())));
        }
    }
}

/// Root motion along each walker's heading, turning back at the edges; the root on the
/// ground under it, the foot weights from the walk phase.
fn walk(
    time: Res<Time>,
    terrain: Res<Terrain>,
    mut walkers: Query<(&mut Walker, &mut Transform, &mut CrowdIkCharacter)>,
) {
    let dt = time.delta_secs();
    let t = time.elapsed_secs_wrapped();
    for (mut w, mut transform, mut character) in &mut walkers {
        *transform = w.advance(SPEED * dt, &terrain.0, 1.0);
        let phase = TAU * ((t + character.clip_offset) / CYCLE).fract();
        let weight = |p: f32| (p.sin() / 0.25).clamp(0.0, 1.0);
        character.foot_weights = [weight(phase), weight(phase + PI), 0.0, 0.0];
    }
}

/// `--joints`: the walk on the CPU, written into the joint entities (as an animation
/// system would); the plugin reads their `GlobalTransform`s.
fn animate_joints(
    options: Res<Options>,
    time: Res<Time>,
    walkers: Query<(&CrowdIkCharacter, &bevy::mesh::skinning::SkinnedMesh)>,
    mut joints: Query<&mut Transform, Without<CrowdIkCharacter>>,
) {
    if options.animate != Animate::System {
        return;
    }
    let t = time.elapsed_secs_wrapped();
    for (character, skin) in &walkers {
        let phase = TAU * ((t + character.clip_offset) / CYCLE).fract();
        let locals = local_transforms(&walk_pose(phase).0, &biped_parents());
        for (joint, local) in skin.joints.iter().zip(locals) {
            if let Ok(mut transform) = joints.get_mut(*joint) {
                *transform = local;
            }
        }
    }
}

fn keys(input: Res<ButtonInput<KeyCode>>, mut settings: ResMut<CrowdIk>) {
    if input.just_pressed(KeyCode::KeyI) {
        settings.enabled = !settings.enabled;
    }
    if input.just_pressed(KeyCode::KeyT) {
        settings.gpu_timing = !settings.gpu_timing;
    }
}

fn overlay(
    time: Res<Time<Real>>,
    settings: Res<CrowdIk>,
    diagnostics: Res<CrowdIkDiagnostics>,
    mut stats: ResMut<Stats>,
    mut text: Query<&mut Text, With<Overlay>>,
) {
    let report = diagnostics.report();
    let frame_ms = f64::from(time.delta_secs()) * 1e3;
    let plugin_ms = report.extract_ms + report.render_ms;
    let s = &mut *stats;
    s.frames += 1;
    // Moving averages from frame 10 on (the first frames build pipelines and buffers).
    let warm = s.frames > 10;
    s.frame_ms = if warm { 0.95 * s.frame_ms + 0.05 * frame_ms } else { frame_ms };
    s.plugin_ms = if warm { 0.95 * s.plugin_ms + 0.05 * plugin_ms } else { plugin_ms };
    if s.frames > 10 {
        s.sum_frame_ms += frame_ms;
        s.sum_plugin_ms += plugin_ms;
        s.sum_extract_ms += report.extract_ms;
    }
    if !s.frames.is_multiple_of(10) {
        return;
    }
    let gpu = report.ik_gpu_ms.map_or_else(|| "off (T)".to_string(), |ms| format!("{ms:.3} ms"));
    let line = format!(
        "{} walkers, IK {} (I)\n{:.0} fps, {:.2} ms/frame\nplugin CPU {:.3} ms/frame\nIK pass GPU {gpu}\n{}",
        report.characters,
        if settings.enabled { "on" } else { "off" },
        1e3 / s.frame_ms.max(1e-3),
        s.frame_ms,
        s.plugin_ms,
        report.adapter,
    );
    for mut t in &mut text {
        t.0.clone_from(&line);
    }
}

fn quit(
    options: Res<Options>,
    stats: Res<Stats>,
    diagnostics: Res<CrowdIkDiagnostics>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(frames) = options.frames else { return };
    if stats.frames < frames {
        return;
    }
    let n = (stats.frames - 10).max(1) as f64;
    let report = diagnostics.report();
    println!(
        "{} walkers on {}: {:.2} ms/frame, plugin CPU {:.3} ms/frame (extract {:.3} + render world {:.3}; mean of {n} frames), IK pass GPU {}",
        report.characters,
        report.adapter,
        stats.sum_frame_ms / n,
        stats.sum_plugin_ms / n,
        stats.sum_extract_ms / n,
        (stats.sum_plugin_ms - stats.sum_extract_ms) / n,
        report.ik_gpu_ms.map_or("n/a".into(), |ms| format!("{ms:.3} ms")),
    );
    exit.write(AppExit::Success);
}
