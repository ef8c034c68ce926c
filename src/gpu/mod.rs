//! GPU side (wgpu): device setup, scene upload, the capture (compute readback) pipeline and
//! the offscreen render pipeline. Both pipelines call the one WGSL `skin()` in
//! `shaders/skin.wgsl`. Depends on the core modules only.

pub mod capture;
pub mod context;
pub mod render;
pub mod scene_buffers;
pub mod shaders;

pub use capture::Capture;
pub use context::GpuContext;
pub use render::{RenderSettings, Renderer};
pub use scene_buffers::GpuScene;
