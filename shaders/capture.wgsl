// capture.wgsl — compute "capture" of skinned vertices for readback: loads each vertex from
// storage buffers, calls the shared skin() (skin.wgsl, prepended) and stores the result.
// Pipeline: src/gpu/capture.rs.

// Mirrors `CaptureVertex` in src/gpu/capture.rs (keep field order in sync).
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
// Skinned position, normal, tangent per vertex.
@group(2) @binding(3) var<storage, read_write> out_vertices: array<CaptureVertex>;

// 64 threads: a multiple of every vendor's SIMD width (32/64) and lavapipe's 8-wide lanes.
@compute @workgroup_size(64)
fn capture(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    if (v >= draw.vertex_count) {
        return;
    }
    var input: SkinInput;
    let vertex = in_vertices[v];
    input.position = vertex.position.xyz;
    input.normal = vertex.normal.xyz;
    input.tangent = vertex.tangent;
    input.joints0 = in_joints[INFLUENCE_SETS * v];
    input.weights0 = in_weights[INFLUENCE_SETS * v];
    input.joints1 = vec4<u32>(0u);
    input.weights1 = vec4<f32>(0.0);
    if (INFLUENCE_SETS > 1u) {
        input.joints1 = in_joints[INFLUENCE_SETS * v + 1u];
        input.weights1 = in_weights[INFLUENCE_SETS * v + 1u];
    }
    let s = skin(v, input);
    out_vertices[v] = CaptureVertex(vec4<f32>(s.position, 1.0), vec4<f32>(s.normal, 0.0), s.tangent);
}
