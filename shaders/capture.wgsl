// capture.wgsl — compute "capture" of skinned vertices for readback: loads each vertex from
// storage buffers, calls the shared skin() (skin.wgsl, prepended) and stores the result.
// Pipeline: src/gpu/capture.rs.

// 3 vec4 per vertex: position (w=1), normal (w=0), tangent (w=handedness).
@group(2) @binding(0) var<storage, read> in_vertices: array<vec4<f32>>;
// INFLUENCE_SETS vec4 per vertex.
@group(2) @binding(1) var<storage, read> in_joints: array<vec4<u32>>;
@group(2) @binding(2) var<storage, read> in_weights: array<vec4<f32>>;
// 3 vec4 per vertex: skinned position, normal, tangent.
@group(2) @binding(3) var<storage, read_write> out_vertices: array<vec4<f32>>;

// 64 threads: a multiple of every vendor's SIMD width (32/64) and lavapipe's 8-wide lanes.
@compute @workgroup_size(64)
fn capture(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    if (v >= draw.vertex_count) {
        return;
    }
    var input: SkinInput;
    input.position = in_vertices[3u * v].xyz;
    input.normal = in_vertices[3u * v + 1u].xyz;
    input.tangent = in_vertices[3u * v + 2u];
    input.joints0 = in_joints[INFLUENCE_SETS * v];
    input.weights0 = in_weights[INFLUENCE_SETS * v];
    input.joints1 = vec4<u32>(0u);
    input.weights1 = vec4<f32>(0.0);
    if (INFLUENCE_SETS > 1u) {
        input.joints1 = in_joints[INFLUENCE_SETS * v + 1u];
        input.weights1 = in_weights[INFLUENCE_SETS * v + 1u];
    }
    let s = skin(v, input);
    out_vertices[3u * v] = vec4<f32>(s.position, 1.0);
    out_vertices[3u * v + 1u] = vec4<f32>(s.normal, 0.0);
    out_vertices[3u * v + 2u] = s.tangent;
}
