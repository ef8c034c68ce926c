//! The camera on the GPU: a `ViewUniform` buffer and its bind group (group 2 of the render
//! and draw-capture pipelines). One per viewport; set it before the pass that draws with it.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::context::GpuContext;
use crate::camera::OrbitCamera;

/// Mirrors `ViewUniform` in shaders/render.wgsl (same order and padding; the size is checked
/// against the WGSL struct by tests/gpu/gpu_layout.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ViewUniform {
    /// World → clip (wgpu clip space).
    pub clip_from_world: [[f32; 4]; 4],
    /// Direction towards the key light (world space), w unused.
    pub light_dir: [f32; 4],
    /// Eye position (world space), w = 1.
    pub eye_position: [f32; 4],
    /// Draw-path capture: texels per row and rows of the capture target. 0 for a normal
    /// draw; otherwise vertex `i` is drawn as a point on texel `(i % width, i / width)`.
    pub capture_size: [u32; 2],
    /// What the surface colour shows ([`ColorMode`] as `u32`).
    pub color_mode: u32,
    /// The node whose weights [`ColorMode::Weights`] shows ([`NO_NODE`]: none).
    pub selected_node: u32,
    /// [`ColorMode::Errors`]: per-vertex errors are multiplied by this (1 / model diagonal).
    pub error_scale: f32,
    /// [`ColorMode::Errors`]: log10 of the scaled error shown blue; four decades up is red
    /// ([`CPU_GPU_ERROR_LOG10_MIN`] or [`MODE_ERROR_LOG10_MIN`]).
    pub error_log10_min: f32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
}

/// Error heatmap floor for CPU vs GPU: 1e-8 of the diagonal blue, 1e-5 (the comparison's
/// tolerance) orange, 1e-4 red.
pub const CPU_GPU_ERROR_LOG10_MIN: f32 = -8.0;

/// Error heatmap floor for one skinning mode against another (differences of millimetres to
/// centimetres at a joint): 1e-5 of the diagonal blue, 1e-2 orange, 1e-1 red.
pub const MODE_ERROR_LOG10_MIN: f32 = -5.0;

/// `selected_node` when no node is selected.
pub const NO_NODE: u32 = u32::MAX;

/// What a draw's surface colour shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ColorMode {
    /// Base colour factor × base colour texture × vertex colour, lit.
    #[default]
    Material,
    /// The selected bone's weight on each vertex (blue 0 → red 1, as Blender's weight paint).
    Weights,
    /// Every bone its own colour, blended by weight (as Figure 10 of Weber, "Run-Time Skin
    /// Deformation", shows them).
    Bones,
    /// |GPU − CPU| per vertex relative to the model's diagonal, log scale: 1e-8 blue,
    /// 1e-5 (the comparison's tolerance) orange, 1e-4 and above red.
    Errors,
}

impl ColorMode {
    /// The value `render.wgsl` switches on.
    pub fn code(self) -> u32 {
        match self {
            ColorMode::Material => 0,
            ColorMode::Weights => 1,
            ColorMode::Bones => 2,
            ColorMode::Errors => 3,
        }
    }
}

/// The key light every view uses (world space, towards the light): above, front-right.
pub fn key_light() -> Vec3 {
    Vec3::new(0.4, 0.8, 0.6).normalize()
}

impl ViewUniform {
    /// A normal draw seen through `camera` at `aspect`.
    pub fn from_camera(camera: &OrbitCamera, aspect: f32) -> ViewUniform {
        ViewUniform::new(camera.clip_from_world(aspect), camera.eye())
    }

    /// A normal draw through `clip_from_world` from `eye`.
    pub fn new(clip_from_world: Mat4, eye: Vec3) -> ViewUniform {
        ViewUniform {
            clip_from_world: clip_from_world.to_cols_array_2d(),
            light_dir: key_light().extend(0.0).to_array(),
            eye_position: eye.extend(1.0).to_array(),
            capture_size: [0, 0],
            color_mode: ColorMode::Material.code(),
            selected_node: NO_NODE,
            error_scale: 1.0,
            error_log10_min: CPU_GPU_ERROR_LOG10_MIN,
            _pad: [0; 2],
        }
    }

    /// The same view showing `mode` (with `selected_node` for [`ColorMode::Weights`] and
    /// `error_scale` for [`ColorMode::Errors`]).
    pub fn with_mode(
        mut self,
        mode: ColorMode,
        selected_node: Option<usize>,
        error_scale: f32,
    ) -> Self {
        self.color_mode = mode.code();
        self.selected_node = selected_node.map_or(NO_NODE, |n| n.min(NO_NODE as usize - 1) as u32);
        self.error_scale = error_scale;
        self
    }

    /// The same view with the error heatmap starting (blue) at `log10_min`.
    pub fn with_error_floor(mut self, log10_min: f32) -> Self {
        self.error_log10_min = log10_min;
        self
    }
}

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
