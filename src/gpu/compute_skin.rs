//! Compute-skinning pipeline: the `skin_vertices` entry point of shaders/capture.wgsl (with
//! shaders/skin.wgsl prepended) skins every vertex of every draw once per frame, and of every
//! instance of a crowd, into the scene's skinned vertex buffer (position and normal,
//! [`CPU_VERTEX_STRIDE`] bytes a vertex, the layout the CPU-skinned view already draws). The
//! renderer then draws that buffer with a plain vertex shader ([`super::Skinning::Compute`]),
//! as Unreal's and Godot's compute skinning do, so a depth pre-pass, shadow passes and the
//! colour pass share one skinning instead of each running the vertex-shader blend.
//!
//! It shares the capture's shader on purpose: the influence loader and `skin()` are the
//! capture's, so the compute capture (read back in every comparison) checks most of this path's
//! code too, and the draw-path capture reads the drawn buffer back
//! ([`super::CapturePath::ComputeSkinning`]).
//!
//! Cost: one dispatch per draw (64-thread workgroups, instances along z); reads 56 bytes a
//! vertex from the draw's own vertex buffers (position and normal 12 each, joints as
//! `vec4<u32>` 16, weights 16; `../shared/notes/gpu-anchor.md` counts 48 with u16 joints) and
//! writes 24. Limits: the skinned
//! buffer (instances × vertices × 24 bytes) must fit one storage binding; a draw may have up to
//! 64 × the adapter's workgroups per dimension² vertices; storage palette path only.

use super::capture::WORKGROUP_SIZE;
use super::context::GpuContext;
use super::palette_source::PaletteSource;
use super::scene_buffers::{CPU_VERTEX_STRIDE, GpuScene};
use super::shaders::{CAPTURE_WGSL, influence_constants, module_with_skin};
use crate::error::{Error, Result};

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The compute-skinning pass of one [`GpuScene`] and the buffer it writes.
pub struct ComputeSkinning {
    /// Index 0: 4 influences, 1: 8 influences.
    pipelines: [wgpu::ComputePipeline; 2],
    bind_groups: Vec<wgpu::BindGroup>,
    output: wgpu::Buffer,
    instances: u32,
    /// Workgroups per dimension the adapter allows.
    max_groups: u32,
}

impl ComputeSkinning {
    /// Pipelines, bind groups and the skinned vertex buffer (every instance) of `gpu`.
    pub(crate) fn new(ctx: &GpuContext, gpu: &GpuScene) -> Result<ComputeSkinning> {
        if !ctx.compute_capture() || gpu.source != PaletteSource::Storage {
            return Err(Error::Gpu(format!(
                "compute skinning needs compute shaders and the storage palette; {} on {} \
                 skins in the vertex shader only",
                gpu.source.describe(),
                ctx.info.name
            )));
        }
        let instances = gpu.instances();
        let limits = ctx.device.limits();
        let bytes = instances as u64 * gpu.vertex_total().max(1) as u64 * CPU_VERTEX_STRIDE;
        let max = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if bytes > max {
            return Err(Error::Gpu(format!(
                "compute skinning: {instances} instance(s) of {} vertices need a {bytes}-byte \
                 skinned vertex buffer; this adapter binds at most {max} bytes",
                gpu.vertex_total()
            )));
        }
        let max_groups = limits.max_compute_workgroups_per_dimension;
        if instances > max_groups {
            return Err(Error::Gpu(format!(
                "compute skinning: {instances} instances exceed this adapter's {max_groups} \
                 workgroups per dimension"
            )));
        }
        let groups = ctx.layouts.of(PaletteSource::Storage)?;
        let device = &ctx.device;
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let io_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("compute skinning io"),
            entries: &[
                storage(1, true),
                storage(2, true),
                storage(4, false),
                storage(5, true),
                storage(6, true),
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("compute skinning"),
            bind_group_layouts: &[Some(&groups.frame), Some(&groups.draw), Some(&io_layout)],
            immediate_size: 0,
        });
        let module = module_with_skin(
            device,
            "capture.wgsl (compute skinning)",
            CAPTURE_WGSL,
            PaletteSource::Storage,
        );
        let make = |sets: u32| {
            let constants = influence_constants(sets);
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("compute skinning"),
                layout: Some(&layout),
                module: &module,
                entry_point: Some("skin_vertices"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        let pipelines = [make(1), make(2)];
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("compute-skinned vertices"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::VERTEX
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut bind_groups = Vec::with_capacity(gpu.draws.len());
        for d in &gpu.draws {
            bind_groups.push(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("compute skinning io"),
                layout: &io_layout,
                entries: &[
                    entry(1, &d.joints),
                    entry(2, &d.weights),
                    entry(4, &output),
                    entry(5, &d.positions),
                    entry(6, &d.normals),
                ],
            }));
        }
        ctx.check()?;
        Ok(ComputeSkinning {
            pipelines,
            bind_groups,
            output,
            instances,
            max_groups,
        })
    }

    /// The skinned vertex buffer: per instance, every draw's vertices from its
    /// `cpu_first_vertex`, [`CPU_VERTEX_STRIDE`] bytes each.
    pub fn output(&self) -> &wgpu::Buffer {
        &self.output
    }

    /// Instances the buffer holds.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// Record the dispatches that skin every draw of `gpu` (every instance) with the palette
    /// last written, into a compute pass the caller owns.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, gpu: &GpuScene) {
        pass.set_bind_group(0, &gpu.frame_bind_group, &[]);
        for (d, bind_group) in gpu.draws.iter().zip(&self.bind_groups) {
            if d.vertex_count == 0 {
                continue;
            }
            let groups = d.vertex_count.div_ceil(WORKGROUP_SIZE);
            let x = groups.min(self.max_groups.max(1));
            pass.set_pipeline(&self.pipelines[super::render::sets_slot(d)]);
            pass.set_bind_group(1, &d.bind_group, &[]);
            pass.set_bind_group(2, bind_group, &[]);
            pass.dispatch_workgroups(x, groups.div_ceil(x), self.instances);
        }
    }
}
