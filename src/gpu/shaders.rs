//! WGSL sources. Every pipeline's shader is its own file with `skin.wgsl` prepended, and
//! before that the palette source (`palette_storage.wgsl` or `palette_uniform.wgsl`, with its
//! sizes), so the draw and the capture pipelines compile the same `skin()` function and the
//! two skinning paths differ only in where the palette comes from.

use super::palette_source::PaletteSource;
use super::shader_types::UNIFORM_MORPH_SLOTS;

/// `skin.wgsl`: the shared `skin()` function, prepended to every pipeline's shader.
pub const SKIN_WGSL: &str = include_str!("../../shaders/skin.wgsl");
/// `palette_storage.wgsl`: the storage-buffer palette source.
pub const PALETTE_STORAGE_WGSL: &str = include_str!("../../shaders/palette_storage.wgsl");
/// `palette_uniform.wgsl`: the uniform palette source (needs `PALETTE_SIZE` and `MORPH_SLOTS`).
pub const PALETTE_UNIFORM_WGSL: &str = include_str!("../../shaders/palette_uniform.wgsl");
/// `capture.wgsl`: the compute pipeline that skins vertices into a buffer for readback.
pub const CAPTURE_WGSL: &str = include_str!("../../shaders/capture.wgsl");
/// `view.wgsl`: the view uniform and the sRGB encoding, prepended to every shader that draws
/// to a view (as `skin.wgsl` is to every skinning one).
pub const VIEW_WGSL: &str = include_str!("../../shaders/view.wgsl");
/// `render.wgsl` after `view.wgsl`: the skinning vertex shaders, the CPU-skinned vertex entry
/// point, the lit fragment shader and the draw-path capture fragment shader.
pub const RENDER_WGSL: &str = concat!(
    include_str!("../../shaders/view.wgsl"),
    "\n",
    include_str!("../../shaders/render.wgsl")
);
/// `overlay.wgsl` after `view.wgsl`: unlit lines and triangles (grid, skeleton, targets).
pub const OVERLAY_WGSL: &str = concat!(
    include_str!("../../shaders/view.wgsl"),
    "\n",
    include_str!("../../shaders/overlay.wgsl")
);

/// The WGSL of a pipeline: palette source, `skin.wgsl`, then `body`.
pub fn source(body: &str, palette: PaletteSource) -> String {
    match palette {
        PaletteSource::Storage => format!("{PALETTE_STORAGE_WGSL}\n{SKIN_WGSL}\n{body}"),
        PaletteSource::Uniform { bones } => format!(
            "const PALETTE_SIZE: u32 = {bones}u;\nconst MORPH_SLOTS: u32 = \
             {UNIFORM_MORPH_SLOTS}u;\n{PALETTE_UNIFORM_WGSL}\n{SKIN_WGSL}\n{body}"
        ),
    }
}

/// Shader module of [`source`].
pub fn module_with_skin(
    device: &wgpu::Device,
    label: &str,
    body: &str,
    palette: PaletteSource,
) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source(body, palette).into()),
    })
}
