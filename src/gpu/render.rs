//! Offscreen render pipeline: the skinning vertex shader (shaders/render.wgsl entry points
//! `vs_skin4` / `vs_skin8`, both calling the shared `skin()`) and a lit fragment shader,
//! into a 4x multisampled sRGB target that is resolved and read back as RGBA8.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::context::GpuContext;
use super::scene_buffers::{FRAME_UNIFORM_SIZE, GpuScene};
use super::shaders::{RENDER_WGSL, influence_constants, module_with_skin};
use crate::error::{Error, Result};
use crate::image::Rgba8;
use crate::scene::Topology;

/// Mirrors `FrameUniform` in shaders/render.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct FrameUniform {
    pub clip_from_world: [[f32; 4]; 4],
    pub light_dir: [f32; 4],
    pub eye_position: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<FrameUniform>() as u64 == FRAME_UNIFORM_SIZE);

const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// 4x MSAA: supported by every WebGPU adapter for these formats.
const SAMPLES: u32 = 4;
/// Vertical field of view of the framing camera.
const FOV_Y_RAD: f32 = 0.6;

#[derive(Clone, Copy, Debug)]
pub struct RenderSettings {
    pub width: u32,
    pub height: u32,
    /// Background (linear RGB).
    pub clear: [f64; 3],
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            width: 640,
            height: 480,
            clear: [0.045, 0.05, 0.06],
        }
    }
}

/// A camera that frames an axis-aligned box from the front-right, slightly above.
pub fn framing_camera(min: Vec3, max: Vec3, aspect: f32) -> (Mat4, Vec3) {
    let center = (min + max) * 0.5;
    let radius = ((max - min).length() * 0.5).max(1e-4);
    let dir = Vec3::new(0.45, 0.3, 1.0).normalize();
    let fov = if aspect < 1.0 {
        2.0 * ((FOV_Y_RAD * 0.5).tan() * aspect).atan()
    } else {
        FOV_Y_RAD
    };
    let distance = radius / (fov * 0.5).sin() * 1.05;
    let eye = center + dir * distance;
    let view = glam::camera::rh::view::look_at_mat4(eye, center, Vec3::Y);
    // wgpu clip space: NDC z in [0, 1], y up (glam calls it "directx").
    let proj = glam::camera::rh::proj::directx::perspective(
        FOV_Y_RAD,
        aspect,
        (distance - radius * 1.5).max(distance * 0.01),
        distance + radius * 1.5,
    );
    (proj * view, eye)
}

pub struct Renderer {
    /// [topology][influence sets - 1]
    pipelines: Vec<[wgpu::RenderPipeline; 2]>,
}

fn topology_slot(t: Topology) -> usize {
    match t {
        Topology::Triangles => 0,
        Topology::Lines => 1,
        Topology::Points => 2,
    }
}

impl Renderer {
    pub fn new(ctx: &GpuContext, gpu: &GpuScene) -> Result<Renderer> {
        let device = &ctx.device;
        let module = module_with_skin(device, "render.wgsl", RENDER_WGSL);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render"),
            bind_group_layouts: &[Some(&gpu.frame_layout), Some(&gpu.draw_layout)],
            immediate_size: 0,
        });
        let position_attr = [wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x3,
            offset: 0,
            shader_location: 0,
        }];
        let normal_attr = [wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x3,
            offset: 0,
            shader_location: 1,
        }];
        let make = |topology: wgpu::PrimitiveTopology, sets: u32| {
            let stride = 16 * sets as u64;
            let joint_attrs: Vec<wgpu::VertexAttribute> = (0..sets)
                .map(|s| wgpu::VertexAttribute {
                    format: wgpu::VertexFormat::Uint32x4,
                    offset: 16 * s as u64,
                    shader_location: 3 + 2 * s,
                })
                .collect();
            let weight_attrs: Vec<wgpu::VertexAttribute> = (0..sets)
                .map(|s| wgpu::VertexAttribute {
                    format: wgpu::VertexFormat::Float32x4,
                    offset: 16 * s as u64,
                    shader_location: 4 + 2 * s,
                })
                .collect();
            let tangent_attr = [wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 0,
                shader_location: 2,
            }];
            let buffers = [
                Some(wgpu::VertexBufferLayout {
                    array_stride: 12,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &position_attr,
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: 12,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &normal_attr,
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: 16,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &tangent_attr,
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &joint_attrs,
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &weight_attrs,
                }),
            ];
            let constants = influence_constants(sets);
            let options = wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            };
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("render"),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(if sets == 2 { "vs_skin8" } else { "vs_skin4" }),
                    compilation_options: options.clone(),
                    buffers: &buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    // Two-sided: mirrored (negative-determinant) nodes flip the winding and
                    // skinned draws can mirror per vertex; the fragment shader faces normals
                    // towards the viewer instead of culling.
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState {
                    count: SAMPLES,
                    ..Default::default()
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_main"),
                    compilation_options: options,
                    targets: &[Some(wgpu::ColorTargetState {
                        format: COLOR_FORMAT,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let pipelines = [
            wgpu::PrimitiveTopology::TriangleList,
            wgpu::PrimitiveTopology::LineList,
            wgpu::PrimitiveTopology::PointList,
        ]
        .into_iter()
        .map(|t| [make(t, 1), make(t, 2)])
        .collect();
        ctx.check()?;
        Ok(Renderer { pipelines })
    }

    /// Draw every draw of `gpu` (palette already updated) framed on `[min, max]`.
    pub fn render(
        &self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        bounds: (Vec3, Vec3),
        settings: &RenderSettings,
    ) -> Result<Rgba8> {
        let (w, h) = (settings.width, settings.height);
        let max_dim = ctx.device.limits().max_texture_dimension_2d;
        if w == 0 || h == 0 || w > max_dim || h > max_dim {
            return Err(Error::Usage(format!(
                "render size {w}x{h} must be between 1 and {max_dim}"
            )));
        }
        let (clip_from_world, eye) = framing_camera(bounds.0, bounds.1, w as f32 / h as f32);
        let light = Vec3::new(0.4, 0.8, 0.6).normalize();
        let uniform = FrameUniform {
            clip_from_world: clip_from_world.to_cols_array_2d(),
            light_dir: light.extend(0.0).to_array(),
            eye_position: eye.extend(1.0).to_array(),
        };
        ctx.queue
            .write_buffer(&gpu.frame_uniform, 0, bytemuck::bytes_of(&uniform));
        let device = &ctx.device;
        let size = wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        };
        let tex = |label, format, samples, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let msaa = tex(
            "msaa color",
            COLOR_FORMAT,
            SAMPLES,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let resolve = tex(
            "color",
            COLOR_FORMAT,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let depth = tex(
            "depth",
            DEPTH_FORMAT,
            SAMPLES,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let (msaa_view, resolve_view, depth_view) = (
            msaa.create_view(&Default::default()),
            resolve.create_view(&Default::default()),
            depth.create_view(&Default::default()),
        );
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("render"),
        });
        {
            let [r, g, b] = settings.clear;
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("render"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &msaa_view,
                    depth_slice: None,
                    resolve_target: Some(&resolve_view),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                        store: wgpu::StoreOp::Discard,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &gpu.frame_bind_group, &[]);
            for d in &gpu.draws {
                if d.index_count == 0 {
                    continue;
                }
                pass.set_pipeline(
                    &self.pipelines[topology_slot(d.topology)]
                        [(d.influence_sets.clamp(1, 2) - 1) as usize],
                );
                pass.set_bind_group(1, &d.bind_group, &[]);
                pass.set_vertex_buffer(0, d.positions.slice(..));
                pass.set_vertex_buffer(1, d.normals.slice(..));
                pass.set_vertex_buffer(2, d.tangents.slice(..));
                pass.set_vertex_buffer(3, d.joints.slice(..));
                pass.set_vertex_buffer(4, d.weights.slice(..));
                pass.set_index_buffer(d.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..d.index_count, 0, 0..1);
            }
        }
        // Rows padded to COPY_BYTES_PER_ROW_ALIGNMENT for the texture→buffer copy.
        let row = w * 4;
        let padded =
            row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("render readback"),
            size: padded as u64 * h as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &resolve,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(h),
                },
            },
            size,
        );
        ctx.queue.submit([enc.finish()]);
        let bytes = ctx.map_read(&staging)?;
        let mut pixels = Vec::with_capacity((row * h) as usize);
        for y in 0..h as usize {
            pixels
                .extend_from_slice(&bytes[y * padded as usize..y * padded as usize + row as usize]);
        }
        Ok(Rgba8 {
            width: w,
            height: h,
            pixels,
        })
    }
}
