//! GPU side (wgpu): device setup and shared bind group layouts, scene upload, the camera
//! uniform, the render pipeline (any target), the offscreen target with readback, the compute
//! capture and the draw-path capture. Every pipeline calls the one WGSL `skin()` in
//! `shaders/skin.wgsl`. Depends on the core modules only.

pub mod camera;
pub mod capture;
pub mod context;
pub mod draw_capture;
pub mod layouts;
pub mod readback;
pub mod render;
pub mod scene_buffers;
pub mod shaders;
pub mod target;

pub use camera::{Camera, ViewUniform};
pub use capture::Capture;
pub use context::GpuContext;
pub use draw_capture::DrawCapture;
pub use readback::{CapturePath, GpuReadback};
pub use render::{Renderer, Skinning, Target, VertexLayout};
pub use scene_buffers::{DrawParams, GPU_MAX_INFLUENCES, GpuScene};
pub use target::OffscreenTarget;
