//! WGSL sources. `skin.wgsl` is prepended to each pipeline's own shader so the draw and the
//! capture pipelines compile the same `skin()` function.

/// `skin.wgsl`: the shared `skin()` function, prepended to every pipeline's shader.
pub const SKIN_WGSL: &str = include_str!("../../shaders/skin.wgsl");
/// `capture.wgsl`: the compute pipeline that skins vertices into a buffer for readback.
pub const CAPTURE_WGSL: &str = include_str!("../../shaders/capture.wgsl");
/// `render.wgsl`: the skinning vertex shaders, the CPU-skinned vertex entry point, the lit
/// fragment shader and the draw-path capture fragment shader.
pub const RENDER_WGSL: &str = include_str!("../../shaders/render.wgsl");

/// Shader module made of `skin.wgsl` followed by `body`.
pub fn module_with_skin(device: &wgpu::Device, label: &str, body: &str) -> wgpu::ShaderModule {
    let source = format!("{SKIN_WGSL}\n{body}");
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// Pipeline-overridable constants selecting the influence-set count (skin.wgsl).
pub fn influence_constants(sets: u32) -> [(&'static str, f64); 1] {
    [("INFLUENCE_SETS", sets as f64)]
}
