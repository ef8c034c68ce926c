//! The render pipeline: the skinning vertex shader (shaders/render.wgsl entry points
//! `vs_skin4` / `vs_skin8`, both calling the shared `skin()`), the entry point that draws
//! CPU-skinned vertices (`vs_cpu`), and a lit fragment shader, built for any [`Target`] (a
//! window surface, an offscreen texture, an egui viewport). [`Renderer::draw`] records into a
//! render pass the caller owns; `target.rs` has the offscreen target and its readback.

use super::camera::Camera;
use super::context::GpuContext;
use super::scene_buffers::{CPU_VERTEX_STRIDE, GpuDraw, GpuScene};
use super::shaders::{RENDER_WGSL, influence_constants, module_with_skin};
use crate::error::Result;
use crate::scene::Topology;

/// What a renderer draws into: colour format, MSAA sample count and depth format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Colour attachment format (e.g. a surface's `Bgra8UnormSrgb`).
    pub format: wgpu::TextureFormat,
    /// MSAA samples (1 or 4: 4 is supported by every WebGPU adapter for these formats).
    pub samples: u32,
    /// Depth attachment format, when the pass has one.
    pub depth: Option<wgpu::TextureFormat>,
}

impl Target {
    /// What `skinview render` and the golden images use: sRGB RGBA8, 4× MSAA, 32-bit depth.
    pub const OFFSCREEN: Target = Target {
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        samples: 4,
        depth: Some(wgpu::TextureFormat::Depth32Float),
    };
}

/// Which skinning a draw shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Skinning {
    /// The WGSL vertex shader skins from the palette.
    Gpu,
    /// The CPU reference, uploaded with [`GpuScene::upload_skinned`].
    Cpu,
}

/// One vertex buffer slot: its stride and attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexSlot {
    /// Bytes from one vertex to the next.
    pub stride: u64,
    /// Attributes read from this buffer.
    pub attributes: Vec<wgpu::VertexAttribute>,
}

/// The vertex fetch of a draw pipeline: slot `i` is vertex buffer `i`. The draw and the
/// draw-path capture build their pipelines from the same description, so reading the capture
/// back tests the draw's layout too (tests plant faults in a copy of it).
#[derive(Clone, Debug, PartialEq)]
pub struct VertexLayout {
    /// Vertex buffer slots, in binding order.
    pub slots: Vec<VertexSlot>,
}

fn attribute(
    format: wgpu::VertexFormat,
    offset: u64,
    shader_location: u32,
) -> wgpu::VertexAttribute {
    wgpu::VertexAttribute {
        format,
        offset,
        shader_location,
    }
}

impl VertexLayout {
    /// GPU skinning with `sets` influence sets (1: 4 influences, 2: 8): positions (location
    /// 0), normals (1), tangents (2) in their own buffers, then the joint sets (3, 5) and the
    /// weight sets (4, 6), one buffer each with all sets of a vertex side by side. Matches
    /// `VsIn4` / `VsIn8` in render.wgsl and the buffers of `GpuDraw`.
    pub fn skinned(sets: u32) -> VertexLayout {
        use wgpu::VertexFormat as F;
        let stride = 16 * sets as u64;
        VertexLayout {
            slots: vec![
                VertexSlot {
                    stride: 12,
                    attributes: vec![attribute(F::Float32x3, 0, 0)],
                },
                VertexSlot {
                    stride: 12,
                    attributes: vec![attribute(F::Float32x3, 0, 1)],
                },
                VertexSlot {
                    stride: 16,
                    attributes: vec![attribute(F::Float32x4, 0, 2)],
                },
                VertexSlot {
                    stride,
                    attributes: (0..sets)
                        .map(|s| attribute(F::Uint32x4, 16 * s as u64, 3 + 2 * s))
                        .collect(),
                },
                VertexSlot {
                    stride,
                    attributes: (0..sets)
                        .map(|s| attribute(F::Float32x4, 16 * s as u64, 4 + 2 * s))
                        .collect(),
                },
            ],
        }
    }

    /// CPU-skinned vertices: position (location 0) and normal (1) interleaved in the scene's
    /// upload buffer. Matches `VsCpu` in render.wgsl.
    pub fn cpu_skinned() -> VertexLayout {
        use wgpu::VertexFormat as F;
        VertexLayout {
            slots: vec![VertexSlot {
                stride: CPU_VERTEX_STRIDE,
                attributes: vec![
                    attribute(F::Float32x3, 0, 0),
                    attribute(F::Float32x3, 12, 1),
                ],
            }],
        }
    }

    /// The layouts wgpu takes.
    pub fn buffers(&self) -> Vec<Option<wgpu::VertexBufferLayout<'_>>> {
        self.slots
            .iter()
            .map(|s| {
                Some(wgpu::VertexBufferLayout {
                    array_stride: s.stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &s.attributes,
                })
            })
            .collect()
    }
}

/// The vertex entry point of GPU skinning with `sets` influence sets.
pub fn skinned_entry_point(sets: u32) -> &'static str {
    if sets >= 2 { "vs_skin8" } else { "vs_skin4" }
}

/// Bind a GPU-skinned draw's vertex buffers in [`VertexLayout::skinned`]'s slot order.
pub fn set_skinned_vertex_buffers(pass: &mut wgpu::RenderPass<'_>, d: &GpuDraw) {
    pass.set_vertex_buffer(0, d.positions.slice(..));
    pass.set_vertex_buffer(1, d.normals.slice(..));
    pass.set_vertex_buffer(2, d.tangents.slice(..));
    pass.set_vertex_buffer(3, d.joints.slice(..));
    pass.set_vertex_buffer(4, d.weights.slice(..));
}

/// Influence-set variant of a draw: 0 (4 influences) or 1 (8).
pub(crate) fn sets_slot(d: &GpuDraw) -> usize {
    (d.influence_sets.clamp(1, 2) - 1) as usize
}

fn topology_slot(t: Topology) -> usize {
    match t {
        Topology::Triangles => 0,
        Topology::Lines => 1,
        Topology::Points => 2,
    }
}

const TOPOLOGIES: [wgpu::PrimitiveTopology; 3] = [
    wgpu::PrimitiveTopology::TriangleList,
    wgpu::PrimitiveTopology::LineList,
    wgpu::PrimitiveTopology::PointList,
];

/// Draws scenes into passes of one [`Target`] kind.
pub struct Renderer {
    target: Target,
    /// GPU skinning: `[topology][influence sets - 1]`.
    skinned: Vec<[wgpu::RenderPipeline; 2]>,
    /// CPU-skinned vertices: `[topology]`.
    cpu: Vec<wgpu::RenderPipeline>,
}

impl Renderer {
    /// Pipelines for `target` on `ctx`'s device.
    pub fn new(ctx: &GpuContext, target: Target) -> Result<Renderer> {
        let device = &ctx.device;
        let module = module_with_skin(device, "render.wgsl", RENDER_WGSL);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render"),
            bind_group_layouts: &[
                Some(&ctx.layouts.frame),
                Some(&ctx.layouts.draw),
                Some(&ctx.layouts.view),
            ],
            immediate_size: 0,
        });
        let make = |topology, sets: u32, vertex: &VertexLayout, entry| {
            let constants = influence_constants(sets);
            let options = wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            };
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(entry),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: options.clone(),
                    buffers: &vertex.buffers(),
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    // Two-sided: mirrored (negative-determinant) nodes flip the winding and
                    // skinned draws can mirror per vertex; the fragment shader faces normals
                    // towards the viewer instead of culling.
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: target.depth.map(|format| wgpu::DepthStencilState {
                    format,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState {
                    count: target.samples,
                    ..Default::default()
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_main"),
                    compilation_options: options,
                    targets: &[Some(wgpu::ColorTargetState {
                        format: target.format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let skinned = TOPOLOGIES
            .into_iter()
            .map(|t| {
                [1, 2].map(|sets| {
                    make(
                        t,
                        sets,
                        &VertexLayout::skinned(sets),
                        skinned_entry_point(sets),
                    )
                })
            })
            .collect();
        let cpu_layout = VertexLayout::cpu_skinned();
        let cpu = TOPOLOGIES
            .into_iter()
            .map(|t| make(t, 1, &cpu_layout, "vs_cpu"))
            .collect();
        ctx.check()?;
        Ok(Renderer {
            target,
            skinned,
            cpu,
        })
    }

    /// The target kind the pipelines were built for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Record every draw of `scene`, skinned on the GPU from the palette last written by
    /// [`GpuScene::update`], seen through `camera`.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, camera: &Camera, scene: &GpuScene) {
        self.draw_skinning(pass, camera, scene, Skinning::Gpu);
    }

    /// Record every draw of `scene` with the chosen skinning. [`Skinning::Cpu`] draws what
    /// [`GpuScene::upload_skinned`] uploaded last (nothing before the first upload).
    pub fn draw_skinning(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        camera: &Camera,
        scene: &GpuScene,
        skinning: Skinning,
    ) {
        let cpu_vertices = match skinning {
            Skinning::Gpu => None,
            Skinning::Cpu => match scene.cpu_vertices() {
                Some(b) => Some(b),
                None => return,
            },
        };
        pass.set_bind_group(0, &scene.frame_bind_group, &[]);
        pass.set_bind_group(2, camera.bind_group(), &[]);
        for d in &scene.draws {
            if d.index_count == 0 || d.vertex_count == 0 {
                continue;
            }
            let t = topology_slot(d.topology);
            match cpu_vertices {
                None => {
                    pass.set_pipeline(&self.skinned[t][sets_slot(d)]);
                    set_skinned_vertex_buffers(pass, d);
                }
                Some(buffer) => {
                    pass.set_pipeline(&self.cpu[t]);
                    let start = d.cpu_first_vertex * CPU_VERTEX_STRIDE;
                    let end = start + d.vertex_count as u64 * CPU_VERTEX_STRIDE;
                    pass.set_vertex_buffer(0, buffer.slice(start..end));
                }
            }
            pass.set_bind_group(1, &d.bind_group, &[]);
            pass.set_index_buffer(d.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..d.index_count, 0, 0..1);
        }
    }
}
