//! GPU side (wgpu): device setup and shared bind group layouts, scene upload, the camera
//! uniform, the render pipeline (any target), the overlay pipeline (grid, skeleton), the
//! offscreen target with readback, the capture shader, compute skinning (a pass that skins
//! into a buffer the renderer draws) and the draw-path capture. Every
//! pipeline calls the one WGSL `skin()` in `shaders/skin.wgsl`, which reads its palette from a
//! storage buffer or, for adapters without vertex-stage storage buffers, from a per-draw
//! uniform array ([`PaletteSource`]). Depends on the core modules only.
//!
//! The files import one another downwards only (tests/architecture.rs checks that there is no
//! cycle), from the bottom up:
//! - `shader_types` (the Rust mirrors of WGSL structs and constants), `palette_source` and
//!   `skinning` (the choices: where the palette lives, who skins, what is read back),
//!   `influence_packing` (how a draw's joints and weights are stored);
//! - `layouts`, `context` (the device, and which palette source it runs), `shaders`;
//! - `scene_buffers` (the one-time upload), `scene_frame` (the per-frame writes), `variants`,
//!   `camera`;
//! - `compute_skin` (built from a scene's buffers), `scene` ([`GpuScene`]: the buffers with the
//!   compute pass beside them);
//! - the pipelines and readbacks: `render`, `capture`, `draw_capture`, `overlay`, `target`,
//!   `readback`.

pub mod camera;
pub mod capture;
pub mod compute_skin;
pub mod context;
pub mod draw_capture;
pub mod influence_packing;
pub mod layouts;
pub mod overlay;
pub mod palette_source;
pub mod readback;
pub mod render;
pub mod scene;
pub mod scene_buffers;
pub mod scene_frame;
pub mod shader_types;
pub mod shaders;
pub mod skinning;
pub mod target;
pub mod variants;

pub use camera::Camera;
pub use capture::{AsyncCapture, Capture};
pub use compute_skin::ComputeSkinning;
pub use context::{GpuContext, check_source, choose_source, max_uniform_bones};
pub use draw_capture::{AsyncDrawCapture, DrawCapture};
pub use influence_packing::InfluencePacking;
pub use overlay::{Overlay, OverlayGeometry};
pub use palette_source::{DEFAULT_UNIFORM_BONES, PaletteSource};
pub use readback::GpuReadback;
pub use render::{DrawOptions, Renderer, Target, VertexLayout};
pub use scene::GpuScene;
pub use scene_buffers::{FrameWrites, GPU_MAX_INFLUENCES, MAX_INSTANCES, PreSkinned, SceneBuffers};
pub use shader_types::{
    CPU_GPU_ERROR_LOG10_MIN, ColorMode, DrawParams, MODE_ERROR_LOG10_MIN, UNIFORM_MORPH_SLOTS,
    ViewUniform,
};
pub use skinning::{CapturePath, Skinning};
pub use target::OffscreenTarget;
