//! The Rust side of every struct and constant the shaders share: each mirrors its WGSL
//! declaration (same order and padding; tests/gpu/gpu_layout.rs checks sizes and offsets
//! against the parsed WGSL), and each WGSL declaration names this file. The bottom of gpu/: it
//! imports nothing of the module, so every pipeline file can use it.
//!
//! | Rust | WGSL |
//! |---|---|
//! | [`DrawParams`] | `DrawParams`, shaders/skin.wgsl |
//! | [`ViewUniform`], [`ColorMode::code`] | `ViewUniform`, `COLOR_MODE`, shaders/view.wgsl |
//! | [`CaptureVertex`], [`SkinChunk`], [`BatchDraw`], [`WORKGROUP_SIZE`] | shaders/capture.wgsl |
//! | [`BonePaletteLayout`], [`UNIFORM_MORPH_SLOTS`] | `BonePalette`, shaders/palette_uniform.wgsl |
//! | [`CPU_VERTEX_STRIDE`] | the pre-skinned vertex buffer of shaders/render.wgsl and capture.wgsl |
//! | [`PALETTE_MATRIX_ROWS`], [`PALETTE_DQS_ROWS`] | `MATRIX_ROWS`, `DQS_ROWS`, shaders/palette_storage.wgsl |

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use crate::camera::OrbitCamera;
use crate::skin::{NormalMode, SkinOptions};

/// Per-draw parameters. Mirrors `DrawParams` in shaders/skin.wgsl (same order and padding;
/// the size is checked against the WGSL struct by tests/gpu/gpu_layout.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct DrawParams {
    /// Base colour factor (linear RGBA).
    pub base_color: [f32; 4],
    /// First palette entry of this draw's skin (or its one rigid matrix) within a character's
    /// palette (what `joint_node` indexes from).
    pub palette_base: u32,
    /// Vertices of the draw.
    pub vertex_count: u32,
    /// Morph targets of the draw's primitive.
    pub morph_target_count: u32,
    /// First morph weight of this draw in the frame's weight array.
    pub morph_weight_base: u32,
    /// 1 when the primitive has normals.
    pub has_normals: u32,
    /// 1 when the primitive has tangents.
    pub has_tangents: u32,
    /// First vertex of this draw in the scene-wide per-vertex buffers (CPU-skinned upload,
    /// per-vertex errors).
    pub first_vertex: u32,
    /// [`crate::skin::SkinMode::shader_code`]: 0 LBS, 1 DQS, 2 stitch.
    pub skin_mode: u32,
    /// 0 exact normals (inverse-transpose), 1 blend3x3.
    pub normal_mode: u32,
    /// 1: unit normals; 0: as the blend leaves them.
    pub renormalize: u32,
    /// Storage path: `vec4` rows from one instance's palette block to the next, in the form
    /// the draw skins with ([`PALETTE_MATRIX_ROWS`] or [`PALETTE_DQS_ROWS`] an entry; the DQS
    /// forms follow every instance's matrices).
    pub instance_palette_rows: u32,
    /// Crowds: vertices from one instance's copy to the next in the compute-skinned buffer
    /// (the scene's vertex total).
    pub instance_vertex_stride: u32,
    /// Storage path: the `vec4` row of the draw's first entry in instance 0's block, in the
    /// form it skins with.
    pub palette_row_base: u32,
    /// Pads the struct to a multiple of 16 bytes (a uniform's size).
    pub _pad: [u32; 3],
}

/// Storage palette: `vec4` rows of one matrix entry, its top three rows
/// ([`crate::skin::MatrixRows`]; mirrors `MATRIX_ROWS` in shaders/palette_storage.wgsl).
pub const PALETTE_MATRIX_ROWS: u32 = 3;

/// Storage palette: `vec4` rows of one packed DQS entry (14 floats: real and dual quaternions,
/// symmetric scale/shear; [`crate::skin::dqs::pack`]; mirrors `DQS_ROWS` in
/// shaders/palette_storage.wgsl).
pub const PALETTE_DQS_ROWS: u32 = 4;

impl DrawParams {
    /// Set the skinning fields from `options`.
    pub fn set_options(&mut self, options: SkinOptions) {
        self.skin_mode = options.mode.shader_code();
        self.normal_mode = match options.normals {
            NormalMode::Exact => 0,
            NormalMode::Blend3x3 => 1,
        };
        self.renormalize = options.renormalize as u32;
    }
}

/// Bytes per vertex of the CPU-skinned upload and of the compute-skinned buffer: position
/// and normal, `vec3<f32>` each.
pub const CPU_VERTEX_STRIDE: u64 = 24;

/// Mirrors `ViewUniform` in shaders/view.wgsl (same order and padding; the size is checked
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

/// The colours a user starts a view in by name: `material`, `weights`, `bones`. The error
/// heatmap is not among them: it comes with a comparison (the viewer's `diff` layout, the
/// command line's error colours), which sets its scale.
impl crate::choice::Choice for ColorMode {
    const ALL: &'static [ColorMode] = &[ColorMode::Material, ColorMode::Weights, ColorMode::Bones];

    fn name(self) -> &'static str {
        match self {
            ColorMode::Material => "material",
            ColorMode::Weights => "weights",
            ColorMode::Bones => "bones",
            ColorMode::Errors => "errors",
        }
    }

    fn help(self) -> &'static str {
        match self {
            ColorMode::Material => "Base colour, texture and vertex colour",
            ColorMode::Weights => "The weights of the selected bone",
            ColorMode::Bones => "Every bone its own colour, blended by weight",
            ColorMode::Errors => "Per-vertex error heatmap",
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

/// One vertex record of the capture's input and output. Mirrors `CaptureVertex` in
/// shaders/capture.wgsl (the size and offsets are checked against it by tests/gpu/gpu_layout.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CaptureVertex {
    /// Position, w = 1.
    pub position: [f32; 4],
    /// Normal, w = 0.
    pub normal: [f32; 4],
    /// Tangent, w = handedness.
    pub tangent: [f32; 4],
}

/// Bytes per [`CaptureVertex`].
pub const RECORD_BYTES: u64 = std::mem::size_of::<CaptureVertex>() as u64;

/// Mirrors `SkinChunk` in shaders/capture.wgsl (keep in sync; checked by
/// tests/gpu/gpu_layout.rs): the first instance an output buffer holds, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[allow(missing_docs)] // padding
pub struct SkinChunk {
    /// The crowd instance whose copy starts the buffer.
    pub instance_base: u32,
    pub _pad0: u32,
    pub _pad1: u32,
    pub _pad2: u32,
}

/// Mirrors `BatchDraw` in shaders/capture.wgsl (keep in sync; checked by
/// tests/gpu/gpu_layout.rs): one draw of a compute-skinning batch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct BatchDraw {
    /// The draw's index in the scene.
    pub draw: u32,
    /// Its first vertex in the batch's inputs.
    pub first_vertex: u32,
    /// Its first [`WORKGROUP_SIZE`]-vertex block in the batch.
    pub first_block: u32,
    /// Pads the struct to 16 bytes.
    pub _pad: u32,
}

/// Threads per workgroup of the capture shader and the compute-skinning pass; mirrors
/// `@workgroup_size` in shaders/capture.wgsl.
pub const WORKGROUP_SIZE: u32 = 64;

/// Most morph targets one draw may have on the uniform path (its weights live in the draw's
/// uniform block, four per `vec4`; glTF files rarely exceed 8, MorphStressTest has 8).
pub const UNIFORM_MORPH_SLOTS: u32 = 64;

/// Byte layout of the uniform path's per-draw block (`BonePalette` in
/// shaders/palette_uniform.wgsl; checked against it by tests/gpu/gpu_layout.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BonePaletteLayout {
    /// K.
    pub bones: u32,
}

impl BonePaletteLayout {
    /// Offset of `matrices` (K `mat4x4<f32>`).
    pub const MATRICES: u64 = 0;

    /// Offset of `nodes` (one `u32` per matrix, four per `vec4<u32>`).
    pub fn nodes_offset(self) -> u64 {
        64 * self.bones as u64
    }

    /// Offset of `morph_weights` ([`UNIFORM_MORPH_SLOTS`] `f32`, four per `vec4<f32>`).
    pub fn morph_offset(self) -> u64 {
        self.nodes_offset() + 16 * self.bones.div_ceil(4) as u64
    }

    /// Size of the block.
    pub fn size(self) -> u64 {
        self.morph_offset() + 4 * UNIFORM_MORPH_SLOTS as u64
    }
}
