// render.wgsl (after view.wgsl, palette source and skin.wgsl) — the draw: vertex entry points for 4 and 8 influences (both calling the
// shared skin() from skin.wgsl, prepended with a palette source), colour modes (material, weights of one bone, bone
// colours, CPU-vs-GPU error heatmap), a lit fragment shader, the wireframe's, and the fragment
// shader of the draw-path capture.
// Pipelines: src/gpu/render.rs (draw, wireframe, CPU-skinned view) and
// src/gpu/draw_capture.rs (readback of this very vertex stage).

@group(2) @binding(0) var<uniform> view: ViewUniform;

@group(1) @binding(2) var base_color_texture: texture_2d<f32>;
@group(1) @binding(3) var base_color_sampler: sampler;

// True for the pipelines that draw CPU-skinned vertices (src/gpu/render.rs): position and
// normal arrive already skinned (world space) and skin() is skipped.
override CPU_SKINNED: bool = false;
// Clip-space depth pulled towards the eye (fraction of w): wireframe lines over their faces.
override DEPTH_PULL: f32 = 0.0;
// The target stores what it is given (not an sRGB format): encode linear colour as sRGB.
override ENCODE_SRGB: bool = false;
// The draw-path capture's pipelines (src/gpu/draw_capture.rs): each vertex on its own texel,
// CAPTURE_WIDTH texels a row (a constant: `i % width` is a mask, not a division per vertex).
override CAPTURE: bool = false;
override CAPTURE_WIDTH: u32 = 1u;
// ViewUniform.color_mode, compiled in (src/gpu/variants.rs: software rasterisers run every
// side of a branch, so one pipeline for all modes made each vertex pay for every mode).
override COLOR_MODE: u32 = 0u;

fn output(linear: vec3<f32>) -> vec4<f32> {
    if (ENCODE_SRGB) {
        return vec4<f32>(encode_srgb(linear), 1.0);
    }
    return vec4<f32>(linear, 1.0);
}

struct VsIn4 {
    @builtin(vertex_index) vertex_index: u32,
    @builtin(instance_index) instance_index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
    @location(7) uv: vec2<f32>,
    @location(8) color: vec4<f32>,
};

struct VsIn8 {
    @builtin(vertex_index) vertex_index: u32,
    @builtin(instance_index) instance_index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) joints0: vec4<u32>,
    @location(4) weights0: vec4<f32>,
    @location(5) joints1: vec4<u32>,
    @location(6) weights1: vec4<f32>,
    @location(7) uv: vec2<f32>,
    @location(8) color: vec4<f32>,
};

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    // Material mode: vertex colour × base colour factor; other modes: the mode's colour.
    @location(3) tint: vec4<f32>,
};

// Blender's weight ramp, t in [0, 1]: blue 0, cyan 0.25, green 0.5, yellow 0.75, red 1.
// Mirrored in src/view/legend.rs (heat), which paints the legends: keep the two the same.
fn heat(t_in: f32) -> vec3<f32> {
    let t = clamp(t_in, 0.0, 1.0) * 4.0;
    var stops = array<vec3<f32>, 5>(
        vec3<f32>(0.0, 0.0, 1.0),
        vec3<f32>(0.0, 1.0, 1.0),
        vec3<f32>(0.0, 1.0, 0.0),
        vec3<f32>(1.0, 1.0, 0.0),
        vec3<f32>(1.0, 0.0, 0.0),
    );
    let i = min(u32(t), 3u);
    return mix(stops[i], stops[i + 1u], t - f32(i));
}

// Colour `i` of a qualitative palette (Kelly's colours of maximum contrast, linear RGB), every
// other round half-way to white. Mirrors QUALITATIVE and qualitative() in src/image.rs: keep
// the two the same.
fn qualitative(i: u32) -> vec3<f32> {
    var colors = array<vec3<f32>, 17>(
        vec3<f32>(0.8963, 0.5457, 0.0000), // #F3C300
        vec3<f32>(0.2423, 0.0931, 0.2874), // #875692
        vec3<f32>(0.8963, 0.2307, 0.0000), // #F38400
        vec3<f32>(0.3564, 0.5906, 0.8796), // #A1CAF1
        vec3<f32>(0.5149, 0.0000, 0.0319), // #BE0032
        vec3<f32>(0.5395, 0.4452, 0.2159), // #C2B280
        vec3<f32>(0.0000, 0.2462, 0.0931), // #008856
        vec3<f32>(0.7913, 0.2747, 0.4125), // #E68FAC
        vec3<f32>(0.0000, 0.1356, 0.3763), // #0067A5
        vec3<f32>(0.9473, 0.2918, 0.1912), // #F99379
        vec3<f32>(0.1170, 0.0762, 0.3095), // #604E97
        vec3<f32>(0.9216, 0.3813, 0.0000), // #F6A600
        vec3<f32>(0.4508, 0.0578, 0.1500), // #B3446C
        vec3<f32>(0.7157, 0.6514, 0.0000), // #DCD300
        vec3<f32>(0.2462, 0.0262, 0.0086), // #882D17
        vec3<f32>(0.2664, 0.4678, 0.0000), // #8DB600
        vec3<f32>(0.7605, 0.0976, 0.0160), // #E25822
    );
    let c = colors[i % 17u];
    return select(c, mix(c, vec3<f32>(1.0), 0.5), (i / 17u) % 2u == 1u);
}

// A bone's colour: its node's colour in the qualitative palette (neighbours in the hierarchy's
// depth-first order differ in hue). Mirrored by bone_color in src/view/legend.rs.
fn bone_color(node: u32) -> vec3<f32> {
    return qualitative(node);
}

fn mode_color(joints: vec4<u32>, weights: vec4<f32>, acc: vec4<f32>) -> vec4<f32> {
    var out = acc;
    for (var k = 0u; k < 4u; k = k + 1u) {
        let node = joint_node(joints[k]);
        if (COLOR_MODE == 1u) {
            out.x = out.x + select(0.0, weights[k], node == view.selected_node);
        } else {
            out = out + vec4<f32>(bone_color(node) * weights[k], weights[k]);
        }
    }
    return out;
}

fn finish_color(acc: vec4<f32>, vertex_index: u32, vertex_color: vec4<f32>) -> vec4<f32> {
    switch COLOR_MODE {
        case 1u: {
            // Blender's weight paint: blue = 0, red = 1.
            return vec4<f32>(heat(acc.x), 1.0);
        }
        case 2u: {
            return vec4<f32>(acc.rgb / max(acc.w, 1e-6), 1.0);
        }
        case 3u: {
            // log10 of the error relative to the model's diagonal over four decades from
            // error_log10_min (blue) to red; CPU vs GPU: 1e-8 blue, 1e-5 (the comparison's
            // tolerance) orange, 1e-4 red.
            let e = vertex_error(vertex_index) * view.error_scale;
            // A negative value marks a vertex with no partner in the other file (NO_PARTNER in
            // src/diff/pairing.rs; errors are never negative): grey, off the ramp.
            if (e < 0.0) {
                return vec4<f32>(0.25, 0.25, 0.25, 1.0);
            }
            let decades = log2(max(e, 1e-30)) * 0.30103 - view.error_log10_min;
            return vec4<f32>(heat(decades / 4.0), 1.0);
        }
        default: {
            return vertex_color * draw.base_color;
        }
    }
}

fn finish(vertex_index: u32, instance_index: u32, position: vec3<f32>, normal: vec3<f32>,
          uv: vec2<f32>, tint: vec4<f32>) -> VsOut {
    var o: VsOut;
    o.world_position = position;
    o.normal = normal;
    o.uv = uv;
    o.tint = tint;
    if (!CAPTURE) {
        o.clip = view.clip_from_world * vec4<f32>(position, 1.0);
        o.clip.z = o.clip.z - DEPTH_PULL * o.clip.w;
        return o;
    }
    // Draw-path capture: one point per vertex, on texel (i % width, i / width) of a float
    // target, so the readback sees exactly what this vertex stage output; a crowd's instances
    // follow one another (i = instance × vertex count + vertex).
    let size = vec2<f32>(f32(CAPTURE_WIDTH), max(f32(view.capture_size.y), 1.0));
    let i = instance_index * draw.vertex_count + vertex_index;
    let texel = vec2<f32>(f32(i % CAPTURE_WIDTH), f32(i / CAPTURE_WIDTH)) + vec2<f32>(0.5);
    let ndc = vec2<f32>(texel.x / size.x * 2.0 - 1.0, 1.0 - texel.y / size.y * 2.0);
    o.clip = vec4<f32>(ndc, 0.5, 1.0);
    return o;
}

@vertex
fn vs_skin4(v: VsIn4) -> VsOut {
    var acc = vec4<f32>(0.0);
    if (COLOR_MODE == 1u || COLOR_MODE == 2u) {
        acc = mode_color(v.joints0, v.weights0, acc);
    }
    let tint = finish_color(acc, v.vertex_index, v.color);
    if (CPU_SKINNED) {
        return finish(v.vertex_index, v.instance_index, v.position, v.normal, v.uv, tint);
    }
    var i: SkinInput;
    i.position = v.position;
    i.normal = v.normal;
    i.tangent = v.tangent;
    i.joints0 = v.joints0;
    i.weights0 = v.weights0;
    i.joints1 = vec4<u32>(0u);
    i.weights1 = vec4<f32>(0.0);
    skin_draw = draw;
    palette_instance_base = v.instance_index * draw.instance_palette_rows;
    let s = skin(v.vertex_index, i);
    return finish(v.vertex_index, v.instance_index, s.position, s.normal, v.uv, tint);
}

@vertex
fn vs_skin8(v: VsIn8) -> VsOut {
    var acc = vec4<f32>(0.0);
    if (COLOR_MODE == 1u || COLOR_MODE == 2u) {
        acc = mode_color(v.joints1, v.weights1, mode_color(v.joints0, v.weights0, acc));
    }
    let tint = finish_color(acc, v.vertex_index, v.color);
    if (CPU_SKINNED) {
        return finish(v.vertex_index, v.instance_index, v.position, v.normal, v.uv, tint);
    }
    var i: SkinInput;
    i.position = v.position;
    i.normal = v.normal;
    i.tangent = v.tangent;
    i.joints0 = v.joints0;
    i.weights0 = v.weights0;
    i.joints1 = v.joints1;
    i.weights1 = v.weights1;
    skin_draw = draw;
    palette_instance_base = v.instance_index * draw.instance_palette_rows;
    let s = skin(v.vertex_index, i);
    return finish(v.vertex_index, v.instance_index, s.position, s.normal, v.uv, tint);
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    // Flat normal from screen-space derivatives when the mesh has none (derivatives taken
    // outside any branch; chosen by select, not a branch on the draw's uniform:
    // src/gpu/variants.rs).
    let flat = cross(dpdx(in.world_position), dpdy(in.world_position));
    let none = draw.has_normals == 0u || dot(in.normal, in.normal) < 1e-12;
    var n = normalize(select(in.normal, flat, none));
    let to_eye = normalize(view.eye_position.xyz - in.world_position);
    // Two-sided lighting: face the normal towards the viewer (open meshes, mirrored nodes).
    if (dot(n, to_eye) < 0.0) {
        n = -n;
    }
    var albedo = in.tint.rgb;
    if (COLOR_MODE == 0u) {
        // sRGB texture: the sampler returns linear values. Untextured draws bind 1x1 white.
        albedo = albedo * textureSample(base_color_texture, base_color_sampler, in.uv).rgb;
    }
    let l = normalize(view.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let fill = max(dot(n, to_eye), 0.0);
    let h = normalize(l + to_eye);
    let spec = pow(max(dot(n, h), 0.0), 32.0) * 0.15;
    // Analysis modes keep their colours readable: more ambient, no highlight.
    let analysis = f32(COLOR_MODE != 0u);
    let c = albedo * (0.18 + 0.3 * analysis + (0.62 - 0.3 * analysis) * diffuse + 0.25 * fill)
        + vec3<f32>(spec * (1.0 - analysis));
    return output(c);
}

// Wireframe: dark lines over the shaded faces.
@fragment
fn fs_wire(in: VsOut) -> @location(0) vec4<f32> {
    return output(vec3<f32>(0.02, 0.025, 0.03));
}

struct CaptureOut {
    @location(0) position: vec4<u32>,
    @location(1) normal: vec4<u32>,
};

// Draw-path capture: what the vertex stage output for this point's vertex, as the bits of
// its floats (integer targets are renderable everywhere, float ones not on GL; and exact).
@fragment
fn fs_capture(in: VsOut) -> CaptureOut {
    var o: CaptureOut;
    o.position = bitcast<vec4<u32>>(vec4<f32>(in.world_position, 1.0));
    o.normal = bitcast<vec4<u32>>(vec4<f32>(in.normal, 0.0));
    return o;
}
