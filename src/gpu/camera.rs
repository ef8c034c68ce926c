//! The camera on the GPU: a `ViewUniform` buffer and its bind group (group 2 of the render
//! and draw-capture pipelines). One per viewport; set it before the pass that draws with it.

use super::context::GpuContext;
use super::shader_types::{ColorMode, ViewUniform};

/// A view uniform buffer and its bind group.
pub struct Camera {
    buffer: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The colour mode last written: the renderer picks its pipelines by it (render.wgsl's
    /// `COLOR_MODE` constant, src/gpu/variants.rs).
    color_mode: std::sync::atomic::AtomicU32,
}

impl Camera {
    /// A camera on `ctx`'s device (contents set by [`Camera::set`]).
    pub fn new(ctx: &GpuContext) -> Camera {
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("view uniform"),
            size: std::mem::size_of::<ViewUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("view"),
            layout: &ctx.layouts.view,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });
        Camera {
            buffer,
            bind_group,
            color_mode: std::sync::atomic::AtomicU32::new(ColorMode::Material.code()),
        }
    }

    /// Write the view (takes effect for passes submitted after this call).
    pub fn set(&self, ctx: &GpuContext, view: &ViewUniform) {
        ctx.queue
            .write_buffer(&self.buffer, 0, bytemuck::bytes_of(view));
        self.color_mode
            .store(view.color_mode, std::sync::atomic::Ordering::Relaxed);
    }

    /// The colour mode of the view last written ([`ColorMode::code`]).
    pub fn color_mode(&self) -> u32 {
        self.color_mode.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Group 2 of the render and draw-capture pipelines.
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }
}
