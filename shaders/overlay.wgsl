// overlay.wgsl — unlit coloured lines and triangles in world space: the ground grid, the
// skeleton (bones, joint axes), IK targets, picked-vertex lines. Pipeline: src/gpu/overlay.rs.

// Mirrors `ViewUniform` in src/gpu/camera.rs (only the fields used here are read; the whole
// struct is declared so the binding has its size).
struct ViewUniform {
    clip_from_world: mat4x4<f32>,
    light_dir: vec4<f32>,
    eye_position: vec4<f32>,
    capture_size: vec2<u32>,
    color_mode: u32,
    selected_node: u32,
    error_scale: f32,
    // Mode 3: log10 of the scaled error shown blue; four decades up is red.
    error_log10_min: f32,
    _pad0: u32,
    _pad1: u32,
};
@group(0) @binding(0) var<uniform> view: ViewUniform;

struct VsIn {
    @location(0) position: vec3<f32>,
    @location(1) color: vec4<f32>,
};

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
};

@vertex
fn vs_overlay(v: VsIn) -> VsOut {
    var o: VsOut;
    o.clip = view.clip_from_world * vec4<f32>(v.position, 1.0);
    o.color = v.color;
    return o;
}

// The target stores what it is given (not an sRGB format): encode linear colour as sRGB.
override ENCODE_SRGB: bool = false;

@fragment
fn fs_overlay(in: VsOut) -> @location(0) vec4<f32> {
    if (ENCODE_SRGB) {
        let c = max(in.color.rgb, vec3<f32>(0.0));
        let hi = 1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - vec3<f32>(0.055);
        return vec4<f32>(select(hi, c * 12.92, c <= vec3<f32>(0.0031308)), in.color.a);
    }
    return in.color;
}
