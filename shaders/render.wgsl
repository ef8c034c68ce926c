// render.wgsl — the skinning vertex shader (4- and 8-influence entry points, both calling the
// shared skin() from skin.wgsl, prepended), the entry point that draws CPU-skinned vertices,
// a lit fragment shader, and the fragment shader of the draw-path capture.
// Pipelines: src/gpu/render.rs (draw) and src/gpu/draw_capture.rs (readback of this very
// vertex stage).

// Mirrors `ViewUniform` in src/gpu/camera.rs (keep field order and padding in sync).
struct ViewUniform {
    clip_from_world: mat4x4<f32>,
    // Direction towards the key light (world space), w unused.
    light_dir: vec4<f32>,
    eye_position: vec4<f32>,
    // Draw-path capture: (texels per row, rows); (0, 0) for a normal draw.
    capture_size: vec2<u32>,
    _pad: vec2<u32>,
};
@group(2) @binding(0) var<uniform> view: ViewUniform;

struct VsIn4 {
    @builtin(vertex_index) vertex_index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
};

struct VsIn8 {
    @builtin(vertex_index) vertex_index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
    @location(5) joints1: vec4<u32>,
    @location(6) weights1: vec4<f32>,
};

// Already skinned on the CPU (world space), from GpuScene's upload buffer.
struct VsCpu {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
};

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
};

fn finish(vertex_index: u32, position: vec3<f32>, normal: vec3<f32>) -> VsOut {
    var o: VsOut;
    o.world_position = position;
    o.normal = normal;
    if (view.capture_size.x == 0u) {
        o.clip = view.clip_from_world * vec4<f32>(position, 1.0);
    } else {
        // Draw-path capture: one point per vertex, on texel (i % width, i / width) of a
        // float target, so the readback sees exactly what this vertex stage output.
        let size = vec2<f32>(view.capture_size);
        let texel = vec2<f32>(
            f32(vertex_index % view.capture_size.x),
            f32(vertex_index / view.capture_size.x),
        ) + vec2<f32>(0.5);
        let ndc = vec2<f32>(texel.x / size.x * 2.0 - 1.0, 1.0 - texel.y / size.y * 2.0);
        o.clip = vec4<f32>(ndc, 0.5, 1.0);
    }
    return o;
}

@vertex
fn vs_skin4(v: VsIn4) -> VsOut {
    var i: SkinInput;
    i.position = v.position;
    i.normal = v.normal;
    i.tangent = v.tangent;
    i.joints0 = v.joints0;
    i.weights0 = v.weights0;
    i.joints1 = vec4<u32>(0u);
    i.weights1 = vec4<f32>(0.0);
    let s = skin(v.vertex_index, i);
    return finish(v.vertex_index, s.position, s.normal);
}

@vertex
fn vs_skin8(v: VsIn8) -> VsOut {
    var i: SkinInput;
    i.position = v.position;
    i.normal = v.normal;
    i.tangent = v.tangent;
    i.joints0 = v.joints0;
    i.weights0 = v.weights0;
    i.joints1 = v.joints1;
    i.weights1 = v.weights1;
    let s = skin(v.vertex_index, i);
    return finish(v.vertex_index, s.position, s.normal);
}

@vertex
fn vs_cpu(@builtin(vertex_index) vertex_index: u32, v: VsCpu) -> VsOut {
    return finish(vertex_index, v.position, v.normal);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = in.normal;
    if (draw.has_normals == 0u || dot(n, n) < 1e-12) {
        // Flat normal from screen-space derivatives when the mesh has none.
        n = cross(dpdx(in.world_position), dpdy(in.world_position));
    }
    n = normalize(n);
    let to_eye = normalize(view.eye_position.xyz - in.world_position);
    // Two-sided lighting: face the normal towards the viewer (open meshes, mirrored nodes).
    if (dot(n, to_eye) < 0.0) {
        n = -n;
    }
    let l = normalize(view.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let fill = max(dot(n, to_eye), 0.0);
    let h = normalize(l + to_eye);
    let spec = pow(max(dot(n, h), 0.0), 32.0) * 0.15;
    let albedo = draw.base_color.rgb;
    let c = albedo * (0.18 + 0.62 * diffuse + 0.25 * fill) + vec3<f32>(spec);
    return vec4<f32>(c, 1.0);
}

struct CaptureOut {
    @location(0) position: vec4<f32>,
    @location(1) normal: vec4<f32>,
};

// Draw-path capture: what the vertex stage output for this point's vertex.
@fragment
fn fs_capture(in: VsOut) -> CaptureOut {
    var o: CaptureOut;
    o.position = vec4<f32>(in.world_position, 1.0);
    o.normal = vec4<f32>(in.normal, 0.0);
    return o;
}
