// overlay.wgsl (after view.wgsl) — unlit coloured lines and triangles in world space: the ground grid, the
// skeleton (bones, joint axes), IK targets, picked-vertex lines. Pipeline: src/gpu/overlay.rs.

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
        return vec4<f32>(encode_srgb(in.color.rgb), in.color.a);
    }
    return in.color;
}
