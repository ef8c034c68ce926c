//! The overlay pipeline (shaders/overlay.wgsl): unlit coloured lines and triangles in world
//! space — the ground grid, the skeleton (bones and joint axes), IK targets, the lines from a
//! picked vertex to its bones. Geometry is built on the CPU each frame into an
//! [`OverlayGeometry`] (vectors reused, no allocation once grown) and uploaded into one vertex
//! buffer that grows when needed.
//!
//! Four pipelines: lines and triangles, each depth-tested (grid) or always in front ("x-ray",
//! like Blender's bones "In Front"). Triangles are alpha-blended so bones can be translucent.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::camera::Camera;
use super::context::GpuContext;
use super::render::Target;
use super::shaders::OVERLAY_WGSL;
use crate::error::Result;
use crate::math::box_corners;

/// One overlay vertex. Matches `VsIn` of shaders/overlay.wgsl (locations 0 and 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct OverlayVertex {
    /// World position.
    pub position: [f32; 3],
    /// Linear RGBA (alpha blends triangles).
    pub color: [f32; 4],
}

/// Lines of a [`OverlayGeometry::circle`]: round at any size a view shows it.
pub const CIRCLE_SEGMENTS: usize = 48;

/// Overlay geometry of one frame, in four lists by pipeline.
#[derive(Clone, Debug, Default)]
pub struct OverlayGeometry {
    /// Line segments (vertex pairs), depth-tested.
    pub lines: Vec<OverlayVertex>,
    /// Line segments always in front.
    pub lines_front: Vec<OverlayVertex>,
    /// Triangles, depth-tested.
    pub triangles: Vec<OverlayVertex>,
    /// Triangles always in front.
    pub triangles_front: Vec<OverlayVertex>,
}

impl OverlayGeometry {
    /// Empty every list, keeping the capacity.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.lines_front.clear();
        self.triangles.clear();
        self.triangles_front.clear();
    }

    /// A line segment.
    pub fn line(&mut self, a: Vec3, b: Vec3, color: [f32; 4], front: bool) {
        let list = if front {
            &mut self.lines_front
        } else {
            &mut self.lines
        };
        list.push(OverlayVertex {
            position: a.to_array(),
            color,
        });
        list.push(OverlayVertex {
            position: b.to_array(),
            color,
        });
    }

    /// A triangle.
    pub fn triangle(&mut self, p: [Vec3; 3], color: [f32; 4], front: bool) {
        let list = if front {
            &mut self.triangles_front
        } else {
            &mut self.triangles
        };
        for q in p {
            list.push(OverlayVertex {
                position: q.to_array(),
                color,
            });
        }
    }

    /// The twelve edges of the box `[min, max]`.
    pub fn wire_box(&mut self, min: Vec3, max: Vec3, color: [f32; 4], front: bool) {
        let corner = box_corners((min, max));
        // Corners one bit apart share an edge.
        for i in 0..8 {
            for bit in [1, 2, 4] {
                if i & bit == 0 {
                    self.line(corner[i], corner[i | bit], color, front);
                }
            }
        }
    }

    /// A circle of `radius` round `centre` in the plane across `normal` (a unit vector), as
    /// [`CIRCLE_SEGMENTS`] lines.
    pub fn circle(
        &mut self,
        centre: Vec3,
        normal: Vec3,
        radius: f32,
        color: [f32; 4],
        front: bool,
    ) {
        let u = normal.any_orthonormal_vector() * radius;
        let v = normal.cross(u);
        let point = |k: usize| {
            let a = std::f32::consts::TAU * k as f32 / CIRCLE_SEGMENTS as f32;
            centre + u * a.cos() + v * a.sin()
        };
        for k in 0..CIRCLE_SEGMENTS {
            self.line(point(k), point(k + 1), color, front);
        }
    }

    /// Add everything in `other`.
    pub fn append(&mut self, other: &OverlayGeometry) {
        self.lines.extend_from_slice(&other.lines);
        self.lines_front.extend_from_slice(&other.lines_front);
        self.triangles.extend_from_slice(&other.triangles);
        self.triangles_front
            .extend_from_slice(&other.triangles_front);
    }

    fn len(&self) -> usize {
        self.lines.len()
            + self.lines_front.len()
            + self.triangles.len()
            + self.triangles_front.len()
    }
}

/// Overlay pipelines for one [`Target`] kind, and the vertex buffer they draw from.
pub struct Overlay {
    /// `[lines, lines in front, triangles, triangles in front]`.
    pipelines: [wgpu::RenderPipeline; 4],
    buffer: wgpu::Buffer,
    capacity: u64,
    /// Vertex ranges of the four lists in `buffer`.
    ranges: [std::ops::Range<u32>; 4],
    scratch: Vec<OverlayVertex>,
}

impl Overlay {
    /// Pipelines for `target`.
    pub fn new(ctx: &GpuContext, target: Target) -> Result<Overlay> {
        let device = &ctx.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("overlay.wgsl"),
            source: wgpu::ShaderSource::Wgsl(OVERLAY_WGSL.into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("overlay"),
            bind_group_layouts: &[Some(&ctx.layouts.view)],
            immediate_size: 0,
        });
        let attributes = [
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x3,
                offset: 0,
                shader_location: 0,
            },
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 12,
                shader_location: 1,
            },
        ];
        let constants = [(
            "ENCODE_SRGB",
            f64::from(u8::from(super::render::stores_encoded_srgb(target.format))),
        )];
        let make = |topology, front: bool| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("overlay"),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_overlay"),
                    compilation_options: Default::default(),
                    buffers: &[Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<OverlayVertex>() as u64,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: &attributes,
                    })],
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: target.depth.map(|format| wgpu::DepthStencilState {
                    format,
                    depth_write_enabled: Some(false),
                    depth_compare: Some(if front {
                        wgpu::CompareFunction::Always
                    } else {
                        wgpu::CompareFunction::LessEqual
                    }),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState {
                    count: target.samples,
                    ..Default::default()
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_overlay"),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    targets: &[Some(wgpu::ColorTargetState {
                        format: target.format,
                        blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        use wgpu::PrimitiveTopology::{LineList, TriangleList};
        let pipelines = [
            make(LineList, false),
            make(LineList, true),
            make(TriangleList, false),
            make(TriangleList, true),
        ];
        let capacity = 1024;
        let buffer = Self::buffer(ctx, capacity);
        ctx.check()?;
        Ok(Overlay {
            pipelines,
            buffer,
            capacity,
            ranges: [0..0, 0..0, 0..0, 0..0],
            scratch: Vec::new(),
        })
    }

    fn buffer(ctx: &GpuContext, vertices: u64) -> wgpu::Buffer {
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("overlay vertices"),
            size: vertices * std::mem::size_of::<OverlayVertex>() as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Upload this frame's geometry (one write; the buffer doubles when it is too small).
    pub fn upload(&mut self, ctx: &GpuContext, g: &OverlayGeometry) {
        let n = g.len() as u64;
        if n > self.capacity {
            self.capacity = n.next_power_of_two();
            self.buffer = Self::buffer(ctx, self.capacity);
        }
        self.scratch.clear();
        let mut start = 0u32;
        for (i, list) in [&g.lines, &g.lines_front, &g.triangles, &g.triangles_front]
            .into_iter()
            .enumerate()
        {
            self.scratch.extend_from_slice(list);
            let end = start + list.len() as u32;
            self.ranges[i] = start..end;
            start = end;
        }
        if !self.scratch.is_empty() {
            ctx.queue
                .write_buffer(&self.buffer, 0, bytemuck::cast_slice(&self.scratch));
        }
    }

    /// Record the uploaded geometry: depth-tested lists first, then the ones in front.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, camera: &Camera) {
        pass.set_bind_group(0, camera.bind_group(), &[]);
        pass.set_vertex_buffer(0, self.buffer.slice(..));
        for i in [0, 2, 1, 3] {
            if !self.ranges[i].is_empty() {
                pass.set_pipeline(&self.pipelines[i]);
                pass.draw(self.ranges[i].clone(), 0..1);
            }
        }
    }
}
