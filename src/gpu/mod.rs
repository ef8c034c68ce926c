//! GPU side (wgpu): device setup and shared bind group layouts, scene upload, the camera
//! uniform, the render pipeline (any target), the overlay pipeline (grid, skeleton), the
//! offscreen target with readback, the compute capture and the draw-path capture. Every pipeline calls the one WGSL `skin()` in
//! `shaders/skin.wgsl`. Depends on the core modules only.

pub mod camera;
pub mod capture;
pub mod context;
pub mod draw_capture;
pub mod layouts;
pub mod overlay;
pub mod readback;
pub mod render;
pub mod scene_buffers;
pub mod shaders;
pub mod target;

pub use camera::{Camera, ColorMode, ViewUniform};
pub use capture::{AsyncCapture, Capture};
pub use context::GpuContext;
pub use draw_capture::DrawCapture;
pub use overlay::{Overlay, OverlayGeometry};
pub use readback::{CapturePath, GpuReadback};
pub use render::{DrawOptions, Renderer, Skinning, Target, VertexLayout};
pub use scene_buffers::{DrawParams, GPU_MAX_INFLUENCES, GpuScene, vertex_errors};
pub use target::OffscreenTarget;
