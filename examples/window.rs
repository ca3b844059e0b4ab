//! The walking crowd in an interactive window: foot IK, skinning palette and drawing, all on
//! the GPU, every frame. Orbit: drag with the left mouse button; zoom: wheel; `I` toggles IK.
//!
//! `cargo run --release --features window --example window -- [characters] [--frames N]`
//! (`--frames N` closes after N frames, e.g. for a smoke test under Xvfb).

use std::sync::Arc;
use std::time::Instant;

use crowd_ik::cpu::palette::inverse_bind;
use crowd_ik::crowd::{Ground, Heightfield};
use crowd_ik::glam::{Vec2, Vec3};
use crowd_ik::gpu::crowd::CrowdSolver;
use crowd_ik::gpu::palette::PaletteBuilder;
use crowd_ik::wgpu;
use crowd_ik_tools::preview::{Camera, Preview};
use crowd_ik_tools::scene::{biped_boxes, biped_rig, walk_pose, WalkingCrowd};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

const HALF: f32 = 12.0;

struct Gpu {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    device: wgpu::Device,
    queue: wgpu::Queue,
    ik: CrowdSolver,
    palette_ik: PaletteBuilder,
    palette_fk: PaletteBuilder,
    preview: Preview,
}

struct App {
    characters: usize,
    max_frames: Option<usize>,
    frames: usize,
    gpu: Option<Gpu>,
    terrain: Heightfield,
    crowd: WalkingCrowd,
    yaw: f32,
    pitch: f32,
    distance: f32,
    dragging: bool,
    last_cursor: Option<Vec2>,
    ik_on: bool,
    started: Instant,
}

fn preview(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &wgpu::SurfaceConfiguration,
    terrain: &Heightfield,
) -> Preview {
    let (bind, _) = walk_pose(0.0);
    Preview::with_format(
        device,
        queue,
        (config.width, config.height, config.format),
        terrain,
        (Vec2::splat(-HALF - 8.0), Vec2::splat(HALF + 8.0), 0.25),
        &biped_boxes(&bind),
        12,
    )
    .expect("preview")
}

impl App {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<Gpu, Box<dyn std::error::Error>> {
        let window = Arc::new(
            event_loop.create_window(Window::default_attributes().with_title("crowd-ik: foot IK for a whole crowd"))?,
        );
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let surface = instance.create_surface(window.clone())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: Some(&surface),
            apply_limit_buckets: false,
        }))?;
        println!("adapter: {}", adapter.get_info().name);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))?;
        let size = window.inner_size();
        let config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .ok_or("surface not supported")?;
        surface.configure(&device, &config);
        let rig = biped_rig();
        let ik = CrowdSolver::new(&device, &queue, &rig, &Ground::Heightfield(self.terrain.clone()))?;
        let (bind, _) = walk_pose(0.0);
        let palette_ik = PaletteBuilder::new(&device, &queue, &inverse_bind(&bind))?;
        let palette_fk = PaletteBuilder::new(&device, &queue, &inverse_bind(&bind))?;
        let preview = preview(&device, &queue, &config, &self.terrain);
        Ok(Gpu { window, surface, config, device, queue, ik, palette_ik, palette_fk, preview })
    }

    fn redraw(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let Some(gpu) = self.gpu.as_mut() else { return Ok(()) };
        self.crowd.step(1.0 / 60.0);
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        self.crowd.frame(&self.terrain, &mut chars, &mut poses);
        gpu.ik.upload(&chars, &poses, &[])?;
        let frame = match gpu.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                gpu.surface.configure(&gpu.device, &gpu.config);
                return Ok(());
            }
            _ => return Ok(()),
        };
        let view = frame.texture.create_view(&Default::default());
        let eye = Vec3::new(self.yaw.sin() * self.pitch.cos(), self.pitch.sin(), self.yaw.cos() * self.pitch.cos())
            * self.distance;
        let aspect = gpu.config.width as f32 / gpu.config.height as f32;
        let camera = Camera::perspective(eye + Vec3::Y, Vec3::Y * 0.5, 0.8, aspect);
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        gpu.ik.encode(&mut encoder);
        let n = chars.len();
        let palette = if self.ik_on {
            gpu.palette_ik.encode(&mut encoder, gpu.ik.pose_output().expect("uploaded"), n)?
        } else {
            gpu.palette_fk.encode(&mut encoder, gpu.ik.pose_input().expect("uploaded"), n)?
        };
        gpu.preview.encode_into(
            &mut encoder,
            &camera,
            palette,
            gpu.ik.characters_buffer().expect("uploaded"),
            n as u32,
            &view,
        );
        gpu.queue.submit([encoder.finish()]);
        gpu.queue.present(frame);
        self.frames += 1;
        if self.frames.is_multiple_of(120) {
            println!(
                "{} frames, {:.1} fps, IK {}",
                self.frames,
                self.frames as f64 / self.started.elapsed().as_secs_f64(),
                if self.ik_on { "on" } else { "off" }
            );
        }
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gpu.is_none() {
            match self.init(event_loop) {
                Ok(gpu) => self.gpu = Some(gpu),
                Err(e) => {
                    eprintln!("cannot open the window: {e}");
                    event_loop.exit();
                }
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                if let Some(gpu) = self.gpu.as_mut() {
                    gpu.config.width = size.width;
                    gpu.config.height = size.height;
                    gpu.surface.configure(&gpu.device, &gpu.config);
                    gpu.preview = preview(&gpu.device, &gpu.queue, &gpu.config, &self.terrain);
                }
            }
            WindowEvent::MouseInput { state, button: MouseButton::Left, .. } => {
                self.dragging = state == ElementState::Pressed
            }
            WindowEvent::CursorMoved { position, .. } => {
                let p = Vec2::new(position.x as f32, position.y as f32);
                if let (true, Some(last)) = (self.dragging, self.last_cursor) {
                    self.yaw -= (p.x - last.x) * 0.005;
                    self.pitch = (self.pitch + (p.y - last.y) * 0.005).clamp(0.05, 1.4);
                }
                self.last_cursor = Some(p);
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.distance = (self.distance * (1.0 - 0.1 * steps)).clamp(2.0, 80.0);
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => match event.logical_key
            {
                Key::Character(c) if c.eq_ignore_ascii_case("i") => self.ik_on = !self.ik_on,
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                _ => {}
            },
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw() {
                    eprintln!("frame failed: {e}");
                    event_loop.exit();
                }
                if self.max_frames.is_some_and(|m| self.frames >= m) {
                    println!("{} frames rendered, {} characters", self.frames, self.characters);
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(gpu) = &self.gpu {
            gpu.window.request_redraw();
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    crowd_ik_tools::quiet_headless_gpu();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let characters = args.first().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let max_frames =
        args.iter().position(|a| a == "--frames").and_then(|i| args.get(i + 1)).and_then(|s| s.parse().ok());
    let event_loop = EventLoop::new()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        characters,
        max_frames,
        frames: 0,
        gpu: None,
        terrain: crowd_ik_tools::terrain::hills(Vec2::new(-60.0, -60.0), 0.25, 481, 481, 1.2),
        crowd: WalkingCrowd::new(characters, HALF, 7),
        yaw: 0.3,
        pitch: 0.35,
        distance: 22.0,
        dragging: false,
        last_cursor: None,
        ik_on: true,
        started: Instant::now(),
    };
    event_loop.run_app(&mut app)?;
    Ok(())
}
