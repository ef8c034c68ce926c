// capture.wgsl — skinning in a compute pass, two entry points sharing the influence loader,
// both calling the shared skin() (skin.wgsl, prepended):
// - `capture`: every vertex of a draw (of each crowd instance) skinned into a record for
//   readback (position, normal, tangent). Pipeline: src/gpu/capture.rs.
// - `skin_vertices`: the compute-skinning path, as Unreal's and Godot's: each vertex of a draw
//   (and of each crowd instance) skinned once per frame into the scene's skinned vertex
//   buffer, which a plain vertex shader then draws (render.wgsl with CPU_SKINNED), so several
//   passes share one skinning. Pipeline: src/gpu/compute_skin.rs.

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
// INFLUENCE_SETS vec4 per vertex.
@group(2) @binding(1) var<storage, read> in_joints: array<vec4<u32>>;
@group(2) @binding(2) var<storage, read> in_weights: array<vec4<f32>>;
// `capture`: skinned position, normal, tangent per vertex.
@group(2) @binding(3) var<storage, read_write> out_vertices: array<CaptureVertex>;
// `skin_vertices` reads the draw's own vertex buffers (POSITION, NORMAL: 3 floats a vertex)
// rather than the capture's 48-byte records: 56 bytes in and 24 out a vertex.
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

// Joints and weights of vertex v (the vertex itself is loaded by the entry point).
fn load_influences(v: u32) -> SkinInput {
    var input: SkinInput;
    input.joints0 = in_joints[INFLUENCE_SETS * v];
    input.weights0 = in_weights[INFLUENCE_SETS * v];
    input.joints1 = vec4<u32>(0u);
    input.weights1 = vec4<f32>(0.0);
    if (INFLUENCE_SETS > 1u) {
        input.joints1 = in_joints[INFLUENCE_SETS * v + 1u];
        input.weights1 = in_weights[INFLUENCE_SETS * v + 1u];
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
    palette_instance_base = id.y * draw.instance_palette_stride;
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

// Dispatch order of `skin_vertices` (src/gpu/compute_skin.rs `DispatchOrder`): false = the
// instance is the outer index (workgroup z; one instance's vertices, then the next's), true =
// the instance is the inner one (workgroup x: neighbouring workgroups skin the same 64
// vertices for consecutive instances, so the mesh data is read from cache).
override INSTANCE_INNER: bool = false;

// Grid (instance outer): x × y workgroups cover the draw's vertices (y > 1 only past the
// adapter's workgroups-per-dimension limit), z is the instance. Instance inner: x is the
// instance, y × z cover the vertices. Each thread writes its vertex's six floats itself: staging
// a workgroup's outputs in workgroup memory to write them coalesced ran 10–20 % slower on an
// H200 (BENCHMARKS.md).
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
    let v = block * WORKGROUP + lane;
    if (v >= draw.vertex_count) {
        return;
    }
    palette_instance_base = (chunk.instance_base + instance) * draw.instance_palette_stride;
    var input = load_influences(v);
    input.position = vec3<f32>(in_positions[3u * v], in_positions[3u * v + 1u], in_positions[3u * v + 2u]);
    input.normal = vec3<f32>(in_normals[3u * v], in_normals[3u * v + 1u], in_normals[3u * v + 2u]);
    // No tangent: the plain vertex shader does not read one (skin() still returns it).
    input.tangent = vec4<f32>(0.0);
    let s = skin(v, input);
    let o = (instance * draw.instance_vertex_stride + draw.first_vertex + v) * 6u;
    skinned[o] = s.position.x;
    skinned[o + 1u] = s.position.y;
    skinned[o + 2u] = s.position.z;
    skinned[o + 3u] = s.normal.x;
    skinned[o + 4u] = s.normal.y;
    skinned[o + 5u] = s.normal.z;
}
