// palette_storage.wgsl — the palette source of the storage-buffer path (the default): the whole
// frame palette in one storage buffer, each draw indexing from DrawParams.palette_base. Read
// by skin() (skin.wgsl) and the colour modes (render.wgsl); bindings as in src/gpu/layouts.rs.

// Frame palette: model_from_bind of every skin joint, then one model_from_node per rigid draw
// (src/skin/palette.rs), each entry its top three rows (MATRIX_ROWS vec4s: LBS and stitching
// never read the last row): one such block per crowd instance (skin.wgsl's
// palette_instance_base), then every instance's block again in DQS form (DQS_ROWS vec4s an
// entry; DQS draws' palette_row_base points past the matrices). Sized to the scene, no joint
// cap; a crowd's palettes are written in one upload.
@group(0) @binding(0) var<storage, read> palette: array<vec4<f32>>;
// Rows of an entry. Mirror PALETTE_MATRIX_ROWS and PALETTE_DQS_ROWS in
// src/gpu/shader_types.rs.
const MATRIX_ROWS: u32 = 3u;
const DQS_ROWS: u32 = 4u;
// Morph weights of every draw for this frame, from DrawParams.morph_weight_base.
@group(0) @binding(1) var<storage, read> morph_weights: array<f32>;
// Node of each entry of one palette block (skin joints, then rigid draws): what bone a joint
// index means. Every block of the palette has this many entries, so entry p's node is
// joint_nodes[p % arrayLength] in any instance's block and either form.
@group(0) @binding(2) var<storage, read> joint_nodes: array<u32>;
// |GPU - CPU| of every vertex of the scene (model units), indexed by first_vertex + index.
@group(0) @binding(3) var<storage, read> vertex_errors: array<f32>;
// Morph deltas, [target][vertex][position, normal, tangent] as vec4 (w unused).
@group(1) @binding(1) var<storage, read> morph_deltas: array<vec4<f32>>;

// Entry j of the draw's palette in the form it skins with: a DQS draw's packed joint as its
// four columns, otherwise the matrix rebuilt from its three rows with (0, 0, 0, 1) below.
fn palette_matrix(j: u32) -> mat4x4<f32> {
    let first = palette_instance_base + skin_draw.palette_row_base;
    if (SKIN_MODE == SKIN_DQS) {
        let at = first + DQS_ROWS * j;
        return mat4x4<f32>(palette[at], palette[at + 1u], palette[at + 2u], palette[at + 3u]);
    }
    let at = first + MATRIX_ROWS * j;
    let x = palette[at];
    let y = palette[at + 1u];
    let z = palette[at + 2u];
    return mat4x4<f32>(
        vec4<f32>(x.x, y.x, z.x, 0.0),
        vec4<f32>(x.y, y.y, z.y, 0.0),
        vec4<f32>(x.z, y.z, z.z, 0.0),
        vec4<f32>(x.w, y.w, z.w, 1.0),
    );
}

fn morph_weight(k: u32) -> f32 {
    return morph_weights[skin_draw.morph_weight_base + k];
}

fn morph_delta(i: u32) -> vec4<f32> {
    return morph_deltas[morph_delta_base + i];
}

fn joint_node(j: u32) -> u32 {
    return joint_nodes[(draw.palette_base + j) % arrayLength(&joint_nodes)];
}

fn vertex_error(v: u32) -> f32 {
    return vertex_errors[draw.first_vertex + v];
}
