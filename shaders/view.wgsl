// view.wgsl — what every shader that draws to a view shares, prepended to render.wgsl and
// overlay.wgsl (src/gpu/shaders.rs) the way skin.wgsl is: the view uniform's layout (each
// shader binds it at its own group) and the sRGB encoding of a colour.

// Mirrors `ViewUniform` in src/gpu/shader_types.rs (keep field order and padding in sync;
// tests/gpu/gpu_layout.rs checks them).
struct ViewUniform {
    clip_from_world: mat4x4<f32>,
    // Direction towards the key light (world space), w unused.
    light_dir: vec4<f32>,
    eye_position: vec4<f32>,
    // Draw-path capture (the CAPTURE pipelines): (texels per row, read as CAPTURE_WIDTH, and
    // rows); (0, 0) otherwise.
    capture_size: vec2<u32>,
    // 0 material, 1 weights of `selected_node`, 2 bone colours, 3 per-vertex error heatmap:
    // what the renderer makes the draw's pipeline with as COLOR_MODE (the shader reads the
    // constant, not this field).
    color_mode: u32,
    // Node whose weights mode 1 shows (u32 max: none).
    selected_node: u32,
    // Mode 3: per-vertex errors are multiplied by this (1 / model diagonal) before mapping.
    error_scale: f32,
    // Mode 3: log10 of the scaled error shown blue; four decades up is red.
    error_log10_min: f32,
    _pad0: u32,
    _pad1: u32,
};

// Linear colour to sRGB-encoded values (IEC 61966-2-1), for targets that store what they are
// given (not an sRGB format). Negative inputs encode as 0. The CPU's copy for pictures painted
// without a shader is `crate::image::linear_to_srgb`.
fn encode_srgb(linear: vec3<f32>) -> vec3<f32> {
    let c = max(linear, vec3<f32>(0.0));
    let hi = 1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - vec3<f32>(0.055);
    return select(hi, c * 12.92, c <= vec3<f32>(0.0031308));
}
