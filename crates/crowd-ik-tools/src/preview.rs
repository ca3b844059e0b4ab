//! A minimal headless crowd renderer (works on lavapipe): a lit heightfield and characters
//! drawn as one box per bone or as their own skinned mesh (a glTF character's), skinned
//! through a skinning palette
//! ([`crowd_ik::gpu::PaletteBuilder`]). It shows how a renderer consumes the crate's GPU
//! outputs, and lets tests check rendered feet against the terrain. Shader:
//! `shaders/preview.wgsl` of this crate, after crowd-ik's `crowd` module ([`preview_wgsl`];
//! `tests/layout.rs` of crowd-ik validates it).

use crowd_ik::crowd::{Heightfield, JointPose};
use crowd_ik::glam::{Mat4, Vec2, Vec3};
use crowd_ik::gpu::buffers::{map_read, staging_buffer};
use crowd_ik::gpu::{ErrorScopes, GpuError};
use crowd_ik::wgpu;

/// Colour format of the preview target (bytes come back as RGBA8).
pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// A box rigidly bound to one joint, from `from` to `to` (bind/model space) with a square
/// cross-section of `half_width`. `color.a` = 1 lit, 0 flat (unlit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneBox {
    /// The joint whose palette matrix moves the box.
    pub joint: usize,
    /// One end, bind space.
    pub from: Vec3,
    /// The other end, bind space.
    pub to: Vec3,
    /// Half the box's width.
    pub half_width: f32,
    /// RGB and lit (1) / flat (0).
    pub color: [f32; 4],
}

/// One box per bone (parent joint → joint), bound to the parent joint.
#[must_use]
pub fn bone_boxes(bind: &[JointPose], parents: &[Option<usize>], half_width: f32, color: [f32; 4]) -> Vec<BoneBox> {
    parents
        .iter()
        .enumerate()
        .filter_map(|(j, p)| p.map(|p| (p, j)))
        .filter(|&(p, j)| bind[p].position().distance(bind[j].position()) > 1e-4)
        .map(|(p, j)| BoneBox { joint: p, from: bind[p].position(), to: bind[j].position(), half_width, color })
        .collect()
}

/// View-projection and light of a preview.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World → clip.
    pub view_proj: Mat4,
    /// Direction toward the light (world).
    pub light_dir: Vec3,
}

impl Camera {
    /// A perspective camera at `eye` looking at `target` (Y up), `fov_y` radians.
    #[must_use]
    pub fn perspective(eye: Vec3, target: Vec3, fov_y: f32, aspect: f32) -> Self {
        let view = crowd_ik::glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
        Self {
            view_proj: crowd_ik::glam::camera::rh::proj::directx::perspective(fov_y, aspect, 0.05, 500.0) * view,
            light_dir: Vec3::new(0.4, 1.0, 0.3).normalize(),
        }
    }
    /// An orthographic camera at `eye` looking at `target`, `half_height` world units from
    /// the centre to the top of the image.
    #[must_use]
    pub fn orthographic(eye: Vec3, target: Vec3, half_height: f32, aspect: f32) -> Self {
        let view = crowd_ik::glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
        let (w, h) = (half_height * aspect, half_height);
        Self {
            view_proj: crowd_ik::glam::camera::rh::proj::directx::orthographic(-w, w, -h, h, 0.05, 500.0) * view,
            light_dir: Vec3::new(0.4, 1.0, 0.3).normalize(),
        }
    }
    /// Pixel `(column, row)` of a world point in a `width × height` image (row 0 at the top).
    #[must_use]
    pub fn pixel(&self, p: Vec3, width: u32, height: u32) -> Vec2 {
        let c = self.view_proj.project_point3(p);
        Vec2::new((c.x * 0.5 + 0.5) * width as f32, (0.5 - c.y * 0.5) * height as f32)
    }
}

/// The preview renderer's WGSL: crowd-ik's `crowd` module (the records it reads), then this
/// crate's `shaders/preview.wgsl`.
#[must_use]
pub fn preview_wgsl() -> String {
    format!("{}\n{}", crowd_ik::gpu::shaders::CROWD_WGSL, include_str!("../shaders/preview.wgsl"))
}

/// The camera as the preview shader reads it (a uniform). Keep in sync with `Camera` in
/// `shaders/preview.wgsl` (crowd-ik's `tests/layout.rs` checks it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CameraUniform {
    /// World → clip, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Direction toward the light (world); `w` = 0.
    pub light_dir: [f32; 4],
    /// `x` = joints per character; `yzw` = 0.
    pub joints: [u32; 4],
}

/// One vertex of a character mesh, bind space, linearly blended over four joints.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SkinVertex {
    /// Position, bind space (the space the palette's inverse bind matrices map from).
    pub position: [f32; 3],
    /// Normal, bind space (need not be unit length).
    pub normal: [f32; 3],
    /// Four joints (indices into a character's joints).
    pub joints: [u32; 4],
    /// Their weights (summing to 1).
    pub weights: [f32; 4],
    /// RGB and lit (1) / flat (0).
    pub color: [f32; 4],
}

/// A character mesh for [`Preview::with_mesh`]: skinned triangles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinMesh {
    /// Vertices.
    pub vertices: Vec<SkinVertex>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

impl SkinMesh {
    /// Boxes rigidly bound to their joints ([`BoneBox`]).
    #[must_use]
    pub fn from_boxes(boxes: &[BoneBox]) -> Self {
        let (vertices, indices) = box_mesh(boxes);
        Self { vertices, indices }
    }

    /// A glTF skinned mesh in one colour, for a palette built with
    /// [`crowd_ik::gltf::GltfSkeleton::palette_inverse_bind`].
    #[must_use]
    pub fn from_gltf(mesh: &crowd_ik::gltf::SkinnedMesh, color: [f32; 4]) -> Self {
        let vertices = mesh
            .positions
            .iter()
            .zip(&mesh.normals)
            .zip(mesh.joints.iter().zip(&mesh.weights))
            .map(|((p, n), (j, w))| SkinVertex {
                position: *p,
                normal: *n,
                joints: j.map(u32::from),
                weights: *w,
                color,
            })
            .collect();
        Self { vertices, indices: mesh.indices.clone() }
    }

    /// This mesh and `other` as one.
    #[must_use]
    pub fn merged(mut self, other: &SkinMesh) -> Self {
        let base = self.vertices.len() as u32;
        self.vertices.extend_from_slice(&other.vertices);
        self.indices.extend(other.indices.iter().map(|i| i + base));
        self
    }
}

/// Headless renderer of a terrain and a crowd of boxed skeletons.
pub struct Preview {
    device: wgpu::Device,
    queue: wgpu::Queue,
    width: u32,
    height: u32,
    color: wgpu::Texture,
    depth: wgpu::Texture,
    readback: wgpu::Buffer,
    camera: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    terrain_pipeline: wgpu::RenderPipeline,
    character_pipeline: wgpu::RenderPipeline,
    terrain: (wgpu::Buffer, wgpu::Buffer, u32),
    mesh: (wgpu::Buffer, wgpu::Buffer, u32),
    joints: u32,
    /// Bind group of the last (palette, roots) pair: re-made only when those buffers change.
    bound: std::sync::Mutex<Option<(wgpu::Buffer, wgpu::Buffer, wgpu::BindGroup)>>,
}

fn buffer_with(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    bytes: &[u8],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let b = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (bytes.len() as u64).max(16).next_multiple_of(4),
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&b, 0, bytes);
    b
}

fn box_mesh(boxes: &[BoneBox]) -> (Vec<SkinVertex>, Vec<u32>) {
    let (mut v, mut idx) = (Vec::new(), Vec::new());
    for b in boxes {
        let axis = b.to - b.from;
        let d = axis.normalize_or(Vec3::Y);
        let (u, w) = d.any_orthonormal_pair();
        let (u, w) = (u * b.half_width, w * b.half_width);
        let corner = |s: f32, t: f32, end: bool| if end { b.to } else { b.from } + u * s + w * t;
        // Six faces: (normal, four corners counter-clockwise seen from outside).
        let faces = [
            (u, [corner(1.0, -1.0, false), corner(1.0, 1.0, false), corner(1.0, 1.0, true), corner(1.0, -1.0, true)]),
            (
                -u,
                [
                    corner(-1.0, 1.0, false),
                    corner(-1.0, -1.0, false),
                    corner(-1.0, -1.0, true),
                    corner(-1.0, 1.0, true),
                ],
            ),
            (w, [corner(1.0, 1.0, false), corner(-1.0, 1.0, false), corner(-1.0, 1.0, true), corner(1.0, 1.0, true)]),
            (
                -w,
                [
                    corner(-1.0, -1.0, false),
                    corner(1.0, -1.0, false),
                    corner(1.0, -1.0, true),
                    corner(-1.0, -1.0, true),
                ],
            ),
            (d, [corner(1.0, -1.0, true), corner(1.0, 1.0, true), corner(-1.0, 1.0, true), corner(-1.0, -1.0, true)]),
            (
                -d,
                [
                    corner(-1.0, -1.0, false),
                    corner(-1.0, 1.0, false),
                    corner(1.0, 1.0, false),
                    corner(1.0, -1.0, false),
                ],
            ),
        ];
        for (n, quad) in faces {
            let base = v.len() as u32;
            let n = n.normalize();
            for p in quad {
                v.push(SkinVertex {
                    position: p.to_array(),
                    normal: n.to_array(),
                    joints: [b.joint as u32, 0, 0, 0],
                    weights: [1.0, 0.0, 0.0, 0.0],
                    color: b.color,
                });
            }
            idx.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    (v, idx)
}

fn terrain_mesh(hf: &Heightfield, min: Vec2, max: Vec2, step: f32) -> (Vec<[f32; 6]>, Vec<u32>) {
    let nx = ((max.x - min.x) / step).ceil() as u32 + 1;
    let nz = ((max.y - min.y) / step).ceil() as u32 + 1;
    let mut v = Vec::with_capacity((nx * nz) as usize);
    for j in 0..nz {
        for i in 0..nx {
            let (x, z) = (min.x + i as f32 * step, min.y + j as f32 * step);
            let (h, n) = hf.sample(x, z).unwrap_or((0.0, Vec3::Y));
            v.push([x, h, z, n.x, n.y, n.z]);
        }
    }
    let mut idx = Vec::new();
    for j in 0..nz - 1 {
        for i in 0..nx - 1 {
            let a = j * nx + i;
            idx.extend([a, a + nx, a + 1, a + 1, a + nx, a + nx + 1]);
        }
    }
    (v, idx)
}

impl Preview {
    /// A `width × height` preview of `terrain` over the XZ rectangle `[min, max]` (sampled
    /// every `step`), drawing each character as `boxes` (bind space, `joints` joints), into
    /// its own [`FORMAT`] target that [`Preview::read_rgba`] reads back.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        width: u32,
        height: u32,
        terrain: &Heightfield,
        region: (Vec2, Vec2, f32),
        boxes: &[BoneBox],
        joints: usize,
    ) -> Result<Self, GpuError> {
        Self::with_format(device, queue, (width, height, FORMAT), terrain, region, boxes, joints)
    }

    /// As [`Preview::new`], drawing to targets of `format` (e.g. a window surface's, with
    /// [`Preview::encode_into`]).
    pub fn with_format(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        target: (u32, u32, wgpu::TextureFormat),
        terrain: &Heightfield,
        region: (Vec2, Vec2, f32),
        boxes: &[BoneBox],
        joints: usize,
    ) -> Result<Self, GpuError> {
        Self::with_mesh(device, queue, target, terrain, region, &SkinMesh::from_boxes(boxes), joints)
    }

    /// As [`Preview::with_format`], drawing each character as `mesh` (e.g. a glTF
    /// character's, [`SkinMesh::from_gltf`]), linear blend skinning over four joints per
    /// vertex.
    pub fn with_mesh(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        (width, height, format): (u32, u32, wgpu::TextureFormat),
        terrain: &Heightfield,
        region: (Vec2, Vec2, f32),
        mesh: &SkinMesh,
        joints: usize,
    ) -> Result<Self, GpuError> {
        let scope = ErrorScopes::push(device);
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("preview"),
            source: wgpu::ShaderSource::Wgsl(preview_wgsl().into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("preview"),
            entries: &[
                buffer_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT, wgpu::BufferBindingType::Uniform),
                buffer_entry(1, wgpu::ShaderStages::VERTEX, wgpu::BufferBindingType::Storage { read_only: true }),
                buffer_entry(2, wgpu::ShaderStages::VERTEX, wgpu::BufferBindingType::Storage { read_only: true }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("preview"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |entry: &str, buffers: &[Option<wgpu::VertexBufferLayout<'_>>]| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    buffers,
                },
                fragment: Some(wgpu::FragmentState {
                    module: &shader,
                    entry_point: Some("fs_main"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                primitive: wgpu::PrimitiveState { cull_mode: None, ..Default::default() },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                multiview_mask: None,
                cache: None,
            })
        };
        let terrain_pipeline = pipeline(
            "vs_terrain",
            &[Some(wgpu::VertexBufferLayout {
                array_stride: 24,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3],
            })],
        );
        let character_pipeline = pipeline(
            "vs_character",
            &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<SkinVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![
                    0 => Float32x3, 1 => Float32x3, 2 => Uint32x4, 3 => Float32x4, 4 => Float32x4
                ],
            })],
        );
        let texture = |format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some("preview target"),
                size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color = texture(format, wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC);
        let depth = texture(DEPTH, wgpu::TextureUsages::RENDER_ATTACHMENT);
        let readback = staging_buffer(device, u64::from(padded_row(width)) * u64::from(height));
        let camera = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("preview camera"),
            size: std::mem::size_of::<CameraUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (tv, ti) = terrain_mesh(terrain, region.0, region.1, region.2);
        // Vertex and index buffers of a triangle list, and its index count.
        let buffers = |what: &str, vertices: &[u8], indices: &[u32]| {
            (
                buffer_with(device, queue, &format!("{what} vertices"), vertices, wgpu::BufferUsages::VERTEX),
                buffer_with(
                    device,
                    queue,
                    &format!("{what} indices"),
                    bytemuck::cast_slice(indices),
                    wgpu::BufferUsages::INDEX,
                ),
                indices.len() as u32,
            )
        };
        let terrain = buffers("terrain", bytemuck::cast_slice(&tv), &ti);
        let mesh = buffers("character", bytemuck::cast_slice(&mesh.vertices), &mesh.indices);
        scope.pop()?;
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            width,
            height,
            color,
            depth,
            readback,
            camera,
            layout,
            terrain_pipeline,
            character_pipeline,
            terrain,
            mesh,
            joints: joints as u32,
            bound: std::sync::Mutex::new(None),
        })
    }

    /// Records a frame into `encoder`: terrain, then `characters` characters skinned by
    /// `palette` (from [`crowd_ik::gpu::PaletteBuilder`]) and placed by `roots` (the
    /// `CharacterInput` buffer), then the copy of the image to the readback buffer.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        palette: &wgpu::Buffer,
        roots: &wgpu::Buffer,
        characters: u32,
    ) {
        let color_view = self.color.create_view(&Default::default());
        self.encode_into(encoder, camera, palette, roots, characters, &color_view);
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.color,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded_row(self.width)),
                    rows_per_image: Some(self.height),
                },
            },
            wgpu::Extent3d { width: self.width, height: self.height, depth_or_array_layers: 1 },
        );
    }

    /// Records a frame into `target` (a view of the preview's size and format, e.g. a window
    /// surface texture), without the readback copy.
    pub fn encode_into(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        palette: &wgpu::Buffer,
        roots: &wgpu::Buffer,
        characters: u32,
        target: &wgpu::TextureView,
    ) {
        let uniform = CameraUniform {
            view_proj: camera.view_proj.to_cols_array_2d(),
            light_dir: camera.light_dir.extend(0.0).to_array(),
            joints: [self.joints, 0, 0, 0],
        };
        self.queue.write_buffer(&self.camera, 0, bytemuck::bytes_of(&uniform));
        let mut bound = self.bound.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if bound.as_ref().is_none_or(|(p, r, _)| p != palette || r != roots) {
            let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("preview"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: self.camera.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: palette.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: roots.as_entire_binding() },
                ],
            });
            *bound = Some((palette.clone(), roots.clone(), bind_group));
        }
        let bind_group = &bound.as_ref().expect("just bound").2;
        let depth_view = self.depth.create_view(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("preview"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.62, g: 0.76, b: 0.9, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &depth_view,
                    depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, bind_group, &[]);
            pass.set_pipeline(&self.terrain_pipeline);
            pass.set_vertex_buffer(0, self.terrain.0.slice(..));
            pass.set_index_buffer(self.terrain.1.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..self.terrain.2, 0, 0..1);
            if characters > 0 {
                pass.set_pipeline(&self.character_pipeline);
                pass.set_vertex_buffer(0, self.mesh.0.slice(..));
                pass.set_index_buffer(self.mesh.1.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..self.mesh.2, 0, 0..characters);
            }
        }
    }

    /// Blocking: the last submitted frame as tightly packed RGBA8 rows, top row first.
    pub fn read_rgba(&self) -> Result<Vec<u8>, GpuError> {
        let row = padded_row(self.width) as usize;
        let mut padded = vec![0u8; row * self.height as usize];
        map_read(&self.device, &self.readback, &mut padded)?;
        let w = self.width as usize * 4;
        Ok(padded.chunks(row).flat_map(|r| r[..w].iter().copied()).collect())
    }

    /// Image size.
    #[must_use]
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }
}

fn buffer_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    ty: wgpu::BufferBindingType,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
        count: None,
    }
}

fn padded_row(width: u32) -> u32 {
    (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
}
