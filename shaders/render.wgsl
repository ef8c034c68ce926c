// render.wgsl — the skinning vertex shader (4- and 8-influence entry points, both calling the
// shared skin() from skin.wgsl, prepended) and a lit fragment shader.
// Pipeline: src/gpu/render.rs.

// Mirrors `FrameUniform` in src/gpu/render.rs.
struct FrameUniform {
    clip_from_world: mat4x4<f32>,
    // Direction towards the key light (world space), w unused.
    light_dir: vec4<f32>,
    eye_position: vec4<f32>,
};
@group(0) @binding(2) var<uniform> frame: FrameUniform;

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

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
};

fn finish(s: SkinOutput) -> VsOut {
    var o: VsOut;
    o.clip = frame.clip_from_world * vec4<f32>(s.position, 1.0);
    o.world_position = s.position;
    o.normal = s.normal;
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
    return finish(skin(v.vertex_index, i));
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
    return finish(skin(v.vertex_index, i));
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = in.normal;
    if (draw.has_normals == 0u || dot(n, n) < 1e-12) {
        // Flat normal from screen-space derivatives when the mesh has none.
        n = cross(dpdx(in.world_position), dpdy(in.world_position));
    }
    n = normalize(n);
    let to_eye = normalize(frame.eye_position.xyz - in.world_position);
    // Two-sided lighting: face the normal towards the viewer (open meshes, mirrored nodes).
    if (dot(n, to_eye) < 0.0) {
        n = -n;
    }
    let l = normalize(frame.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let fill = max(dot(n, to_eye), 0.0);
    let h = normalize(l + to_eye);
    let spec = pow(max(dot(n, h), 0.0), 32.0) * 0.15;
    let albedo = draw.base_color.rgb;
    let c = albedo * (0.18 + 0.62 * diffuse + 0.25 * fill) + vec3<f32>(spec);
    return vec4<f32>(c, 1.0);
}
