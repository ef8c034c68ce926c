// skin.wgsl — the one skinning function shared by the draw shader (render.wgsl) and the
// capture compute shader (capture.wgsl), so GPU readback tests exactly the drawing code.
// Prepended to both by src/gpu/shaders.rs, after the palette source: palette_storage.wgsl
// (the frame palette in a storage buffer) or palette_uniform.wgsl (a K-matrix uniform array per
// draw, for adapters without vertex-stage storage buffers). The source defines
// palette_matrix(j), morph_weight(k), morph_delta(i), joint_node(j) and vertex_error(v); it is
// the only difference between the two paths.
//
// Linear blend skinning with the gradient palette (seed 002 §3): M = Σ w_k palette_matrix(j_k),
// p' = M p, n' = normalize(sign(det M3) cof(M3) n) (inverse-transpose up to scale),
// t' = orthogonalize(M3 t, n') with handedness kept. Morph targets are applied first.

// Influence sets per vertex: 1 (JOINTS_0/WEIGHTS_0, 4 influences) or 2 (adds JOINTS_1/WEIGHTS_1).
// Set per pipeline by src/gpu/{render,capture}.rs.
override INFLUENCE_SETS: u32 = 1u;

// Mirrors `DrawParams` in src/gpu/scene_buffers.rs (keep field order and padding in sync).
struct DrawParams {
    base_color: vec4<f32>,
    palette_base: u32,
    vertex_count: u32,
    morph_target_count: u32,
    morph_weight_base: u32,
    has_normals: u32,
    has_tangents: u32,
    // First vertex of this draw in scene-wide per-vertex buffers (CPU upload, errors).
    first_vertex: u32,
    _pad0: u32,
};
@group(1) @binding(0) var<uniform> draw: DrawParams;

struct SkinInput {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
    joints0: vec4<u32>,
    weights0: vec4<f32>,
    joints1: vec4<u32>,
    weights1: vec4<f32>,
};

struct SkinOutput {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
};

fn weighted_joints(j: vec4<u32>, w: vec4<f32>) -> mat4x4<f32> {
    return palette_matrix(j.x) * w.x + palette_matrix(j.y) * w.y + palette_matrix(j.z) * w.z
        + palette_matrix(j.w) * w.w;
}

fn skin(vertex_index: u32, input: SkinInput) -> SkinOutput {
    // Morph targets (blend shapes) before skinning.
    var p = input.position;
    var n = input.normal;
    var t = input.tangent.xyz;
    for (var k = 0u; k < draw.morph_target_count; k = k + 1u) {
        let w = morph_weight(k);
        if (w != 0.0) {
            let at = (k * draw.vertex_count + vertex_index) * 3u;
            p = p + morph_delta(at).xyz * w;
            n = n + morph_delta(at + 1u).xyz * w;
            t = t + morph_delta(at + 2u).xyz * w;
        }
    }
    var m = weighted_joints(input.joints0, input.weights0);
    if (INFLUENCE_SETS > 1u) {
        m = m + weighted_joints(input.joints1, input.weights1);
    }
    var out: SkinOutput;
    out.position = (m * vec4<f32>(p, 1.0)).xyz;
    let x = m[0].xyz;
    let y = m[1].xyz;
    let z = m[2].xyz;
    let c0 = cross(y, z);
    let c1 = cross(z, x);
    let c2 = cross(x, y);
    let det = dot(x, c0);
    var nn = c0 * n.x + c1 * n.y + c2 * n.z;
    if (det < 0.0) {
        nn = -nn;
    }
    let nlen = length(nn);
    out.normal = select(vec3<f32>(0.0), nn / nlen, nlen > 0.0);
    var tt = x * t.x + y * t.y + z * t.z;
    if (nlen > 0.0) {
        tt = tt - out.normal * dot(out.normal, tt);
    }
    let tlen = length(tt);
    out.tangent = vec4<f32>(select(vec3<f32>(0.0), tt / tlen, tlen > 0.0), input.tangent.w);
    return out;
}
