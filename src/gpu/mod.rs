//! GPU side (wgpu): device setup and shared bind group layouts, scene upload, the camera
//! uniform, the render pipeline (any target), the overlay pipeline (grid, skeleton), the
//! offscreen target with readback, the capture shader, compute skinning (a pass that skins
//! into a buffer the renderer draws) and the draw-path capture. Every
//! pipeline calls the one WGSL `skin()` in `shaders/skin.wgsl`, which reads its palette from a
//! storage buffer or, for adapters without vertex-stage storage buffers, from a per-draw
//! uniform array ([`PaletteSource`]). Depends on the core modules only.

pub mod camera;
pub mod capture;
pub mod compute_skin;
pub mod context;
pub mod draw_capture;
pub mod layouts;
pub mod overlay;
pub mod palette_source;
pub mod readback;
pub mod render;
pub mod scene_buffers;
pub mod shaders;
pub mod target;
pub mod variants;

pub use camera::{CPU_GPU_ERROR_LOG10_MIN, Camera, ColorMode, MODE_ERROR_LOG10_MIN, ViewUniform};
pub use capture::{AsyncCapture, Capture};
pub use compute_skin::ComputeSkinning;
pub use context::GpuContext;
pub use draw_capture::{AsyncDrawCapture, DrawCapture};
pub use overlay::{Overlay, OverlayGeometry};
pub use palette_source::{
    DEFAULT_UNIFORM_BONES, PaletteSource, UNIFORM_MORPH_SLOTS, check_source, choose_source,
    max_uniform_bones,
};
pub use readback::{CapturePath, GpuReadback};
pub use render::{DrawOptions, Renderer, Skinning, Target, VertexLayout};
pub use scene_buffers::{DrawParams, GPU_MAX_INFLUENCES, GpuScene, MAX_INSTANCES};
pub use target::OffscreenTarget;
