// capture.wgsl — skinning in a compute pass, two entry points sharing the influence loader,
// both calling the shared skin() (skin.wgsl, prepended):
// - `capture`: every vertex of a draw (of each crowd instance) skinned into a record for
//   readback (position, normal, tangent). Pipeline: src/gpu/capture.rs.
// - `skin_vertices`: the compute-skinning path, as Unreal's and Godot's: each vertex of every
//   draw of a batch (and of each crowd instance) skinned once per frame, in one dispatch, into
//   the scene's skinned vertex buffer, which a plain vertex shader then draws (render.wgsl
//   with CPU_SKINNED), so several passes share one skinning. Pipeline: src/gpu/compute_skin.rs.

// Mirrors `CaptureVertex` in src/gpu/shader_types.rs (keep field order in sync).
struct CaptureVertex {
    // w = 1
    position: vec4<f32>,
    // w = 0
    normal: vec4<f32>,
    // w = handedness
    tangent: vec4<f32>,
};

@group(2) @binding(0) var<storage, read> in_vertices: array<CaptureVertex>;
// INFLUENCE_SETS sets of four joints and four weights per vertex, packed as JOINT_BITS and
// WEIGHT_BITS say (skin.wgsl), read as words.
@group(2) @binding(1) var<storage, read> in_joints: array<u32>;
@group(2) @binding(2) var<storage, read> in_weights: array<u32>;
// `capture`: skinned position, normal, tangent per vertex.
@group(2) @binding(3) var<storage, read_write> out_vertices: array<CaptureVertex>;
// `skin_vertices` reads its batch's copies of the draws' vertex buffers (POSITION, NORMAL: 3
// floats a vertex; joints and weights as packed), draw after draw, rather than the capture's
// 48-byte records: 24 bytes and the packed influences in (8 for u8
// joints and unorm8 weights, 32 for u32 and f32), 24 out a vertex.
@group(2) @binding(5) var<storage, read> in_positions: array<f32>;
@group(2) @binding(6) var<storage, read> in_normals: array<f32>;
// `skin_vertices`: the scene-wide skinned vertex buffer, CPU_VERTEX_STRIDE (24) bytes a
// vertex: position xyz, normal xyz (src/gpu/shader_types.rs; the layout VertexLayout::
// cpu_skinned reads). Instance i's copy starts draw.instance_vertex_stride vertices after
// instance i - 1's, within one output buffer (a crowd may need several: SkinChunk below).
@group(2) @binding(4) var<storage, read_write> skinned: array<f32>;

// 64 threads: a multiple of every vendor's SIMD width (32/64) and lavapipe's 8-wide lanes.
// Must match WORKGROUP_SIZE in src/gpu/shader_types.rs.
const WORKGROUP: u32 = 64u;

// Four joint indices of set s (0 or 1) of vertex v: four u8 a word, two u16, or one u32.
fn load_joints(v: u32, s: u32) -> vec4<u32> {
    let at = INFLUENCE_SETS * v + s;
    if (JOINT_BITS == 8u) {
        let a = in_joints[at];
        return vec4<u32>(a & 0xffu, (a >> 8u) & 0xffu, (a >> 16u) & 0xffu, a >> 24u);
    }
    if (JOINT_BITS == 16u) {
        let a = in_joints[2u * at];
        let b = in_joints[2u * at + 1u];
        return vec4<u32>(a & 0xffffu, a >> 16u, b & 0xffffu, b >> 16u);
    }
    return vec4<u32>(in_joints[4u * at], in_joints[4u * at + 1u], in_joints[4u * at + 2u],
        in_joints[4u * at + 3u]);
}

// Four weights of set s (0 or 1) of vertex v: four unorm8 a word, two unorm16, or one f32.
fn load_weights(v: u32, s: u32) -> vec4<f32> {
    let at = INFLUENCE_SETS * v + s;
    if (WEIGHT_BITS == 8u) {
        return unpack4x8unorm(in_weights[at]);
    }
    if (WEIGHT_BITS == 16u) {
        return vec4<f32>(unpack2x16unorm(in_weights[2u * at]),
            unpack2x16unorm(in_weights[2u * at + 1u]));
    }
    return bitcast<vec4<f32>>(vec4<u32>(in_weights[4u * at], in_weights[4u * at + 1u],
        in_weights[4u * at + 2u], in_weights[4u * at + 3u]));
}

// Joints and weights of vertex v (the vertex itself is loaded by the entry point).
fn load_influences(v: u32) -> SkinInput {
    var input: SkinInput;
    input.joints0 = load_joints(v, 0u);
    input.weights0 = load_weights(v, 0u);
    input.joints1 = vec4<u32>(0u);
    input.weights1 = vec4<f32>(0.0);
    if (INFLUENCE_SETS > 1u) {
        input.joints1 = load_joints(v, 1u);
        input.weights1 = load_weights(v, 1u);
    }
    return input;
}

// Workgroup y is the crowd instance (a compared frame of a batch: its palette block, its
// records after the previous instances'); one instance: y = 0.
@compute @workgroup_size(WORKGROUP)
fn capture(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    if (v >= draw.vertex_count) {
        return;
    }
    skin_draw = draw;
    palette_instance_base = id.y * draw.instance_palette_rows;
    var input = load_influences(v);
    let vertex = in_vertices[v];
    input.position = vertex.position.xyz;
    input.normal = vertex.normal.xyz;
    input.tangent = vertex.tangent;
    let s = skin(v, input);
    out_vertices[id.y * draw.vertex_count + v] =
        CaptureVertex(vec4<f32>(s.position, 1.0), vec4<f32>(s.normal, 0.0), s.tangent);
}

// Mirrors `SkinChunk` in src/gpu/shader_types.rs (keep in sync): the crowd instances one
// dispatch skins, the first of them, into the one output buffer bound as `skinned` (a crowd's
// copies are split over several buffers when they outgrow one storage binding).
struct SkinChunk {
    instance_base: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};
@group(2) @binding(7) var<uniform> chunk: SkinChunk;

// Mirrors `BatchDraw` in src/gpu/shader_types.rs (keep in sync): one draw of a batch, the
// draws `skin_vertices` skins in one dispatch (src/gpu/compute_skin.rs `Batch`).
struct BatchDraw {
    // The draw's index in the scene (into draw_params).
    draw: u32,
    // Its first vertex in the batch's inputs (positions, normals, joints, weights; its morph
    // deltas start MORPH_TARGETS × 3 × first_vertex deltas in).
    first_vertex: u32,
    // Its first 64-vertex block in the batch.
    first_block: u32,
    _pad: u32,
};
// Every draw's parameters (src/gpu/scene_buffers.rs `SceneBuffers::draw_params`), as its
// uniform holds them.
@group(2) @binding(8) var<storage, read> draw_params: array<DrawParams>;
@group(2) @binding(9) var<storage, read> batch_draws: array<BatchDraw>;
// Per 64-vertex block of the batch: its draw (an index into batch_draws). Each draw starts a
// block, so a workgroup skins one draw.
@group(2) @binding(10) var<storage, read> block_draws: array<u32>;

// Dispatch order of `skin_vertices` (src/gpu/compute_skin.rs `DispatchOrder`): false = the
// instance is the outer index (workgroup z; one instance's vertices, then the next's), true =
// the instance is the inner one (workgroup x: neighbouring workgroups skin the same 64
// vertices for consecutive instances, so the mesh data is read from cache).
override INSTANCE_INNER: bool = false;

// Grid (instance outer): x × y workgroups cover the batch's blocks (y > 1 only past the
// adapter's workgroups-per-dimension limit), z is the instance. Instance inner: x is the
// instance, y × z cover the blocks. A batch is every draw that shares the influence sets,
// packing and morph target count, so one dispatch skins them all; a draw whose skinning options
// differ from this pipeline's is left to the dispatch made with its own (its workgroups
// return at once). Each thread writes its vertex's six floats itself: staging a workgroup's
// outputs in workgroup memory to write them coalesced ran 10–20 % slower on an H200
// (BENCHMARKS.md).
@compute @workgroup_size(WORKGROUP)
fn skin_vertices(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    var instance: u32;
    var block: u32;
    if (INSTANCE_INNER) {
        instance = group.x;
        block = group.z * groups.y + group.y;
    } else {
        instance = group.z;
        block = group.y * groups.x + group.x;
    }
    if (block >= arrayLength(&block_draws)) {
        return;
    }
    let b = batch_draws[block_draws[block]];
    skin_draw = draw_params[b.draw];
    let options = vec3<u32>(skin_draw.skin_mode, skin_draw.normal_mode, skin_draw.renormalize);
    if (any(options != vec3<u32>(SKIN_MODE, NORMAL_MODE, u32(RENORMALIZE)))) {
        return;
    }
    let v = (block - b.first_block) * WORKGROUP + lane;
    if (v >= skin_draw.vertex_count) {
        return;
    }
    palette_instance_base = (chunk.instance_base + instance) * skin_draw.instance_palette_rows;
    morph_delta_base = MORPH_TARGETS * 3u * b.first_vertex;
    let at = b.first_vertex + v;
    var input = load_influences(at);
    input.position = vec3<f32>(in_positions[3u * at], in_positions[3u * at + 1u], in_positions[3u * at + 2u]);
    input.normal = vec3<f32>(in_normals[3u * at], in_normals[3u * at + 1u], in_normals[3u * at + 2u]);
    // No tangent: the plain vertex shader does not read one (skin() still returns it).
    input.tangent = vec4<f32>(0.0);
    let s = skin(v, input);
    let o = (instance * skin_draw.instance_vertex_stride + skin_draw.first_vertex + v) * 6u;
    skinned[o] = s.position.x;
    skinned[o + 1u] = s.position.y;
    skinned[o + 2u] = s.position.z;
    skinned[o + 3u] = s.normal.x;
    skinned[o + 4u] = s.normal.y;
    skinned[o + 5u] = s.normal.z;
}
