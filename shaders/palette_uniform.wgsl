// palette_uniform.wgsl — the palette source of the uniform path, for adapters that cannot read
// storage buffers in the vertex stage (GL ES 3.0 / WebGL2 class; Ribeiro, "Mesh Skinning", §GPU
// Skinning: "a uniform array of 32–128 matrices"): each draw is a submesh of at most PALETTE_SIZE
// bones (the partitioner, src/partition/) and gets its own uniform palette, joints indexing it
// directly. Morph deltas and per-vertex errors come from textures (vertex-stage texture reads work
// there). src/gpu/shaders.rs prepends `const PALETTE_SIZE: u32` (K) and `const MORPH_SLOTS: u32`
// before this file. Bindings as in src/gpu/layouts.rs.

// Mirrors `BonePaletteLayout` in src/gpu/shader_types.rs (sizes from K; checked by
// tests/gpu_layout.rs).
struct BonePalette {
    // model_from_bind of the submesh's bones (its skin's joints, in order).
    matrices: array<mat4x4<f32>, PALETTE_SIZE>,
    // Node of each matrix, four per vec4 (uniform arrays have a 16-byte stride).
    nodes: array<vec4<u32>, (PALETTE_SIZE + 3u) / 4u>,
    // This frame's morph weights of the draw, four per vec4.
    morph_weights: array<vec4<f32>, MORPH_SLOTS / 4u>,
};
@group(1) @binding(4) var<uniform> bones: BonePalette;
// Morph deltas, [target][vertex][position, normal, tangent], one Rgba32Float texel each, row
// by row.
@group(1) @binding(1) var morph_texture: texture_2d<f32>;
// |GPU - CPU| of every vertex of the scene (model units), R32Float, row by row.
@group(0) @binding(0) var error_texture: texture_2d<f32>;

// Texel i of a texture filled row by row.
fn texel_at(i: u32, width: u32) -> vec2<u32> {
    return vec2<u32>(i % width, i / width);
}

fn palette_matrix(j: u32) -> mat4x4<f32> {
    return bones.matrices[min(j, PALETTE_SIZE - 1u)];
}

fn morph_weight(k: u32) -> f32 {
    let i = min(k, MORPH_SLOTS - 1u);
    return bones.morph_weights[i / 4u][i % 4u];
}

fn morph_delta(i: u32) -> vec4<f32> {
    return textureLoad(morph_texture, texel_at(i, textureDimensions(morph_texture).x), 0);
}

fn joint_node(j: u32) -> u32 {
    let i = min(j, PALETTE_SIZE - 1u);
    return bones.nodes[i / 4u][i % 4u];
}

fn vertex_error(v: u32) -> f32 {
    let i = draw.first_vertex + v;
    return textureLoad(error_texture, texel_at(i, textureDimensions(error_texture).x), 0).x;
}
