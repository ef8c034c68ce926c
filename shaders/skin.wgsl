// skin.wgsl — the one skinning function shared by the draw shader (render.wgsl) and the
// capture compute shader (capture.wgsl), so GPU readback tests exactly the drawing code.
// Prepended to both by src/gpu/shaders.rs, after the palette source: palette_storage.wgsl
// (the frame palette in a storage buffer) or palette_uniform.wgsl (a K-matrix uniform array per
// draw, for adapters without vertex-stage storage buffers). The source defines
// palette_matrix(j), morph_weight(k), morph_delta(i), joint_node(j) and vertex_error(v); it is
// the only difference between the two paths.
//
// The draw's skinning options (DrawParams.skin_mode, normal_mode, renormalize) and morph
// target count are compiled into each pipeline as the constants SKIN_MODE, NORMAL_MODE,
// RENORMALIZE and MORPH_TARGETS
// (src/gpu/variants.rs `SkinVariant`: software rasterisers run every side of a branch, and
// lavapipe recompiles a shader per draw and frame when its branches hang on uniforms it can
// inline), so skin() branches on no uniform. Three blends (src/skin/modes.rs,
// the CPU twins in src/skin/cpu.rs and src/skin/dqs.rs):
// - LBS, the gradient palette: M = Σ w_k palette_matrix(j_k), p' = M p;
// - DQS (Kavan et al. 2008): the draw's palette entries hold packed dual quaternion joints
//   (src/skin/dqs.rs `pack`): real and dual quaternions blended in the hemisphere of the
//   largest weight and normalised, the symmetric scale/shear S blended linearly,
//   p' = R (S p) + t;
// - stitch (Woodland): the largest weight's joint alone (first slot on ties), weight 1.
// Normals (NORMAL_MODE): exact = sign(det A) cof(A) n, the inverse-transpose of the
// blend's linear part A up to scale; blend3x3 = A n. Renormalised unless
// RENORMALIZE is false. Tangents: A t re-orthogonalised against the unit normal and
// unit (as given by the blend when RENORMALIZE is false), handedness kept. Morph
// targets are applied first.

const SKIN_LBS: u32 = 0u;
const SKIN_DQS: u32 = 1u;
const SKIN_STITCH: u32 = 2u;
const NORMALS_EXACT: u32 = 0u;

// Influence sets per vertex: 1 (JOINTS_0/WEIGHTS_0, 4 influences) or 2 (adds JOINTS_1/WEIGHTS_1).
// Set per pipeline by src/gpu/{render,capture}.rs.
override INFLUENCE_SETS: u32 = 1u;
// How the draw's joints and weights are stored (src/gpu/influence_packing.rs): 8-, 16- or
// 32-bit joint indices, 8- or 16-bit normalized or 32-bit float weights. The vertex path reads them
// through its vertex formats; the shaders that load them from storage (capture.wgsl
// `load_influences()`) unpack them by these.
override JOINT_BITS: u32 = 32u;
override WEIGHT_BITS: u32 = 32u;
// The draw's skinning options, from DrawParams (every pipeline calling skin() is made per
// draw's options: src/gpu/variants.rs `SkinVariant`). The blend: SKIN_LBS, SKIN_DQS or
// SKIN_STITCH.
override SKIN_MODE: u32 = 0u;
// NORMALS_EXACT, or 1 for blend3x3.
override NORMAL_MODE: u32 = 0u;
// Unit normals and tangents (false: as the blend leaves them).
override RENORMALIZE: bool = true;
// The draw's morph targets (DrawParams.morph_target_count).
override MORPH_TARGETS: u32 = 0u;

// Mirrors `DrawParams` in src/gpu/shader_types.rs (keep field order and padding in sync).
struct DrawParams {
    base_color: vec4<f32>,
    // First palette entry of the draw within a character's palette (joint_node()).
    palette_base: u32,
    vertex_count: u32,
    // The pipeline's MORPH_TARGETS (read as the constant).
    morph_target_count: u32,
    morph_weight_base: u32,
    has_normals: u32,
    has_tangents: u32,
    // First vertex of this draw in scene-wide per-vertex buffers (CPU upload, errors).
    first_vertex: u32,
    // SKIN_LBS, SKIN_DQS or SKIN_STITCH: what the draw's pipelines are made with as SKIN_MODE
    // (the shader reads the constant, not this field).
    skin_mode: u32,
    // NORMALS_EXACT, or 1 for blend3x3: the pipeline's NORMAL_MODE (read as the constant).
    normal_mode: u32,
    // 1: unit normals; 0: as the blend leaves them: the pipeline's RENORMALIZE (read as the
    // constant).
    renormalize: u32,
    // Storage path: vec4 rows from one instance's palette block to the next, in the form the
    // draw skins with (MATRIX_ROWS or DQS_ROWS an entry; the DQS forms follow every instance's
    // matrices).
    instance_palette_rows: u32,
    // Crowds: vertices from one instance's copy to the next in the compute-skinned buffer.
    instance_vertex_stride: u32,
    // Storage path: the vec4 row of the draw's first entry in instance 0's block, in the form
    // it skins with.
    palette_row_base: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};
@group(1) @binding(0) var<uniform> draw: DrawParams;

// The palette block of the instance being skinned, in vec4 rows: an entry point that draws or
// skins a crowd sets it (instance × draw.instance_palette_rows) before calling skin(); 0
// otherwise. Read by the storage palette source's palette_matrix().
var<private> palette_instance_base: u32 = 0u;

// The draw skin() skins and its palette source reads (palette_matrix, morph_weight): every
// entry point that calls skin() sets it first, from its draw's uniform (`skin_draw = draw`)
// or, in the compute-skinning pass, from the scene's table of draws (one dispatch skins every
// draw of a batch, capture.wgsl `skin_vertices`).
var<private> skin_draw: DrawParams;
// Storage palette source: where the draw's morph deltas start in the bound delta array (the
// compute-skinning pass binds a batch's deltas, draw after draw); 0 otherwise.
var<private> morph_delta_base: u32 = 0u;

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

// The stitching joint: the largest weight's, first slot on ties.
fn stitch_joint(input: SkinInput) -> u32 {
    var best_j = input.joints0.x;
    var best_w = input.weights0.x;
    for (var k = 1u; k < 4u; k = k + 1u) {
        if (input.weights0[k] > best_w) {
            best_w = input.weights0[k];
            best_j = input.joints0[k];
        }
    }
    if (INFLUENCE_SETS > 1u) {
        for (var k = 0u; k < 4u; k = k + 1u) {
            if (input.weights1[k] > best_w) {
                best_w = input.weights1[k];
                best_j = input.joints1[k];
            }
        }
    }
    return best_j;
}

// A blended dual quaternion transform. Mirrors `DqBlend` in src/skin/dqs.rs.
struct DqBlend {
    real: vec4<f32>,
    dual: vec4<f32>,
    s: mat3x3<f32>,
};

// Symmetric scale/shear of a packed DQS joint: (xx, yy, zz, xy) in column 2, (xz, yz) in
// column 3 (src/skin/dqs.rs `pack`).
fn dq_scale_shear(m: mat4x4<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(
        vec3<f32>(m[2].x, m[2].w, m[3].x),
        vec3<f32>(m[2].w, m[2].y, m[3].y),
        vec3<f32>(m[3].x, m[3].y, m[2].z),
    );
}

fn dq_add(b: DqBlend, j: u32, w: f32, pivot: vec4<f32>) -> DqBlend {
    let m = palette_matrix(j);
    var ws = w;
    if (dot(m[0], pivot) < 0.0) {
        ws = -w;
    }
    var out: DqBlend;
    out.real = b.real + m[0] * ws;
    out.dual = b.dual + m[1] * ws;
    out.s = b.s + dq_scale_shear(m) * w;
    return out;
}

fn dq_blend(input: SkinInput) -> DqBlend {
    let pivot = palette_matrix(stitch_joint(input))[0];
    var b: DqBlend;
    b.real = vec4<f32>(0.0);
    b.dual = vec4<f32>(0.0);
    b.s = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    for (var k = 0u; k < 4u; k = k + 1u) {
        b = dq_add(b, input.joints0[k], input.weights0[k], pivot);
    }
    if (INFLUENCE_SETS > 1u) {
        for (var k = 0u; k < 4u; k = k + 1u) {
            b = dq_add(b, input.joints1[k], input.weights1[k], pivot);
        }
    }
    let len = length(b.real);
    if (len > 0.0) {
        b.real = b.real / len;
        b.dual = b.dual / len;
    } else {
        b.real = vec4<f32>(0.0);
        b.dual = vec4<f32>(0.0);
    }
    return b;
}

// v rotated by the unit quaternion q: v + w c + u × c with c = 2 u × v.
fn dq_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let c = cross(q.xyz, v) * 2.0;
    return v + c * q.w + cross(q.xyz, c);
}

fn dq_translation(b: DqBlend) -> vec3<f32> {
    return (b.dual.xyz * b.real.w - b.real.xyz * b.dual.w + cross(b.real.xyz, b.dual.xyz)) * 2.0;
}

// sign(det A) cof(A) n (exact) or A n (blend3x3), for the columns x, y, z of A.
fn linear_normal(x: vec3<f32>, y: vec3<f32>, z: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    if (NORMAL_MODE != NORMALS_EXACT) {
        return x * n.x + y * n.y + z * n.z;
    }
    let c0 = cross(y, z);
    let c1 = cross(z, x);
    let c2 = cross(x, y);
    var nn = c0 * n.x + c1 * n.y + c2 * n.z;
    if (dot(x, c0) < 0.0) {
        nn = -nn;
    }
    return nn;
}

fn skin(vertex_index: u32, input: SkinInput) -> SkinOutput {
    // Morph targets (blend shapes) before skinning.
    var p = input.position;
    var n = input.normal;
    var t = input.tangent.xyz;
    for (var k = 0u; k < MORPH_TARGETS; k = k + 1u) {
        let w = morph_weight(k);
        if (w != 0.0) {
            let at = (k * skin_draw.vertex_count + vertex_index) * 3u;
            p = p + morph_delta(at).xyz * w;
            n = n + morph_delta(at + 1u).xyz * w;
            t = t + morph_delta(at + 2u).xyz * w;
        }
    }
    var out: SkinOutput;
    var nn: vec3<f32>;
    var tt: vec3<f32>;
    if (SKIN_MODE == SKIN_DQS) {
        let b = dq_blend(input);
        out.position = dq_rotate(b.real, b.s * p) + dq_translation(b);
        nn = dq_rotate(b.real, linear_normal(b.s[0], b.s[1], b.s[2], n));
        tt = dq_rotate(b.real, b.s * t);
    } else {
        var m: mat4x4<f32>;
        if (SKIN_MODE == SKIN_STITCH) {
            m = palette_matrix(stitch_joint(input));
        } else {
            m = weighted_joints(input.joints0, input.weights0);
            if (INFLUENCE_SETS > 1u) {
                m = m + weighted_joints(input.joints1, input.weights1);
            }
        }
        out.position = (m * vec4<f32>(p, 1.0)).xyz;
        let x = m[0].xyz;
        let y = m[1].xyz;
        let z = m[2].xyz;
        nn = linear_normal(x, y, z, n);
        tt = x * t.x + y * t.y + z * t.z;
    }
    let nlen = length(nn);
    let unit_n = select(vec3<f32>(0.0), nn / nlen, nlen > 0.0);
    out.normal = select(nn, unit_n, RENORMALIZE);
    if (!RENORMALIZE) {
        out.tangent = vec4<f32>(tt, input.tangent.w);
        return out;
    }
    if (nlen > 0.0) {
        tt = tt - unit_n * dot(unit_n, tt);
    }
    let tlen = length(tt);
    out.tangent = vec4<f32>(select(vec3<f32>(0.0), tt / tlen, tlen > 0.0), input.tangent.w);
    return out;
}
