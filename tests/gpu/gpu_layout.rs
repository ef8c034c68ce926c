//! Every Rust struct mirrored in WGSL has the WGSL struct's size and member offsets, read
//! from the shaders themselves with naga (wgpu's shader compiler): a field added, reordered or
//! re-typed on one side only fails here, before any GPU runs. Also: the draw pipeline's vertex
//! layout matches the shader's vertex inputs (locations and types).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use std::mem::{offset_of, size_of};

use skinview::gpu::shader_types::BonePaletteLayout;
use skinview::gpu::shader_types::CaptureVertex;
use skinview::gpu::shaders::{CAPTURE_WGSL, RENDER_WGSL, source};
use skinview::gpu::{DrawParams, InfluencePacking, PaletteSource, VertexLayout, ViewUniform};
use wgpu::naga;

fn module_for(body: &str, palette: PaletteSource) -> naga::Module {
    let source = source(body, palette);
    let m = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    // And it validates (types, uniform layout rules, bindings).
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&m)
    .unwrap_or_else(|e| panic!("{palette:?}: {}", e.emit_to_string(&source)));
    m
}

fn module(body: &str) -> naga::Module {
    module_for(body, PaletteSource::Storage)
}

/// (size, member name → offset) of WGSL struct `name`.
fn wgsl_struct(m: &naga::Module, name: &str) -> (u32, Vec<(String, u32)>) {
    for (_, t) in m.types.iter() {
        if t.name.as_deref() == Some(name)
            && let naga::TypeInner::Struct { members, span } = &t.inner
        {
            let offsets = members
                .iter()
                .map(|mb| (mb.name.clone().unwrap_or_default(), mb.offset))
                .collect();
            return (*span, offsets);
        }
    }
    panic!("no struct {name} in the shader")
}

fn check(name: &str, wgsl: (u32, Vec<(String, u32)>), rust_size: usize, rust: &[(&str, usize)]) {
    let (size, members) = wgsl;
    assert_eq!(
        size as usize, rust_size,
        "{name}: WGSL size {size}, Rust {rust_size}"
    );
    assert_eq!(
        members.len(),
        rust.len(),
        "{name}: member count {members:?} vs {rust:?}"
    );
    for ((wname, woff), (rname, roff)) in members.iter().zip(rust) {
        assert_eq!(
            *woff as usize, *roff,
            "{name}: WGSL {wname} at {woff}, Rust {rname} at {roff}"
        );
    }
}

#[test]
fn draw_params_matches_skin_wgsl() {
    for body in [RENDER_WGSL, CAPTURE_WGSL] {
        let m = module(body);
        check(
            "DrawParams",
            wgsl_struct(&m, "DrawParams"),
            size_of::<DrawParams>(),
            &[
                ("base_color", offset_of!(DrawParams, base_color)),
                ("palette_base", offset_of!(DrawParams, palette_base)),
                ("vertex_count", offset_of!(DrawParams, vertex_count)),
                (
                    "morph_target_count",
                    offset_of!(DrawParams, morph_target_count),
                ),
                (
                    "morph_weight_base",
                    offset_of!(DrawParams, morph_weight_base),
                ),
                ("has_normals", offset_of!(DrawParams, has_normals)),
                ("has_tangents", offset_of!(DrawParams, has_tangents)),
                ("first_vertex", offset_of!(DrawParams, first_vertex)),
                ("skin_mode", offset_of!(DrawParams, skin_mode)),
                ("normal_mode", offset_of!(DrawParams, normal_mode)),
                ("renormalize", offset_of!(DrawParams, renormalize)),
                (
                    "instance_palette_rows",
                    offset_of!(DrawParams, instance_palette_rows),
                ),
                (
                    "instance_vertex_stride",
                    offset_of!(DrawParams, instance_vertex_stride),
                ),
                ("palette_row_base", offset_of!(DrawParams, palette_row_base)),
                ("_pad0", offset_of!(DrawParams, _pad)),
                ("_pad1", offset_of!(DrawParams, _pad) + 4),
                ("_pad2", offset_of!(DrawParams, _pad) + 8),
            ],
        );
    }
}

#[test]
fn capture_vertex_matches_capture_wgsl() {
    let m = module(CAPTURE_WGSL);
    check(
        "CaptureVertex",
        wgsl_struct(&m, "CaptureVertex"),
        size_of::<CaptureVertex>(),
        &[
            ("position", offset_of!(CaptureVertex, position)),
            ("normal", offset_of!(CaptureVertex, normal)),
            ("tangent", offset_of!(CaptureVertex, tangent)),
        ],
    );
}

#[test]
fn skin_chunk_and_batch_draw_match_capture_wgsl() {
    use skinview::gpu::shader_types::SkinChunk;
    let m = module(CAPTURE_WGSL);
    check(
        "SkinChunk",
        wgsl_struct(&m, "SkinChunk"),
        size_of::<SkinChunk>(),
        &[
            ("instance_base", offset_of!(SkinChunk, instance_base)),
            ("_pad0", offset_of!(SkinChunk, _pad0)),
            ("_pad1", offset_of!(SkinChunk, _pad1)),
            ("_pad2", offset_of!(SkinChunk, _pad2)),
        ],
    );
    use skinview::gpu::shader_types::BatchDraw;
    check(
        "BatchDraw",
        wgsl_struct(&m, "BatchDraw"),
        size_of::<BatchDraw>(),
        &[
            ("draw", offset_of!(BatchDraw, draw)),
            ("first_vertex", offset_of!(BatchDraw, first_vertex)),
            ("first_block", offset_of!(BatchDraw, first_block)),
            ("_pad", offset_of!(BatchDraw, _pad)),
        ],
    );
}

/// The view uniform and the sRGB encoding are written once, in view.wgsl: no other shader
/// file declares them, and both shaders that draw to a view are built on it (so the overlay
/// binds the very struct the render pipeline does).
#[test]
fn view_wgsl_is_the_one_home_of_the_view_uniform_and_srgb_encoding() {
    use skinview::gpu::shaders::{OVERLAY_WGSL, VIEW_WGSL};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "shaders/: {files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let declares = [
            text.contains("struct ViewUniform"),
            text.contains("0.0031308"),
        ];
        let home = f.file_name().is_some_and(|n| n == "view.wgsl");
        assert_eq!(
            declares,
            [home, home],
            "{}: the view uniform and sRGB encoding belong in view.wgsl only",
            f.display()
        );
    }
    for body in [RENDER_WGSL, OVERLAY_WGSL] {
        assert!(body.starts_with(VIEW_WGSL));
    }
    let overlay = naga::front::wgsl::parse_str(OVERLAY_WGSL).unwrap();
    let render = module(RENDER_WGSL);
    assert_eq!(
        wgsl_struct(&overlay, "ViewUniform"),
        wgsl_struct(&render, "ViewUniform")
    );
}

/// The CPU's sRGB encoding (clear colours, legends) agrees with the shaders' `encode_srgb`:
/// both are IEC 61966-2-1, checked at the linear segment, the knee and the power segment
/// against the standard's formula written out here.
#[test]
fn cpu_srgb_encoding_is_the_standard_curve() {
    for c in [0.0, 0.001, 0.003_130_8, 0.01, 0.18, 0.5, 1.0] {
        let expected = if c <= 0.003_130_8 {
            12.92 * c
        } else {
            1.055 * f64::powf(c, 1.0 / 2.4) - 0.055
        };
        assert!((skinview::image::linear_to_srgb(c) - expected).abs() < 1e-12);
    }
    // The two segments meet at the knee (continuity within the standard's rounding).
    let knee = 0.003_130_8;
    assert!((12.92 * knee - (1.055 * f64::powf(knee, 1.0 / 2.4) - 0.055)).abs() < 1e-6);
}

#[test]
fn view_uniform_matches_render_wgsl() {
    let m = module(RENDER_WGSL);
    check(
        "ViewUniform",
        wgsl_struct(&m, "ViewUniform"),
        size_of::<ViewUniform>(),
        &[
            ("clip_from_world", offset_of!(ViewUniform, clip_from_world)),
            ("light_dir", offset_of!(ViewUniform, light_dir)),
            ("eye_position", offset_of!(ViewUniform, eye_position)),
            ("capture_size", offset_of!(ViewUniform, capture_size)),
            ("color_mode", offset_of!(ViewUniform, color_mode)),
            ("selected_node", offset_of!(ViewUniform, selected_node)),
            ("error_scale", offset_of!(ViewUniform, error_scale)),
            ("error_log10_min", offset_of!(ViewUniform, error_log10_min)),
            ("_pad[0]", offset_of!(ViewUniform, _pad)),
            ("_pad[1]", offset_of!(ViewUniform, _pad) + 4),
        ],
    );
}

/// The vertex buffers of the draw feed exactly the shader's vertex inputs: every location of
/// `VsIn4` / `VsIn8` is one attribute of matching type, for the GPU-skinned layouts and the
/// CPU-skinned ones that run the same entry points.
#[test]
fn vertex_layouts_match_the_vertex_inputs() {
    use naga::{ScalarKind, TypeInner, VectorSize};
    let m = module(RENDER_WGSL);
    let inputs = |name: &str| -> Vec<(u32, ScalarKind, u8)> {
        for (_, t) in m.types.iter() {
            if t.name.as_deref() == Some(name)
                && let TypeInner::Struct { members, .. } = &t.inner
            {
                return members
                    .iter()
                    .filter_map(|mb| match mb.binding {
                        Some(naga::Binding::Location { location, .. }) => {
                            match m.types[mb.ty].inner {
                                TypeInner::Vector { size, scalar } => {
                                    let n = match size {
                                        VectorSize::Bi => 2,
                                        VectorSize::Tri => 3,
                                        VectorSize::Quad => 4,
                                    };
                                    Some((location, scalar.kind, n))
                                }
                                ref other => panic!("{name}: location {location} is {other:?}"),
                            }
                        }
                        _ => None,
                    })
                    .collect();
            }
        }
        panic!("no struct {name}")
    };
    let attributes = |layout: &VertexLayout| -> Vec<(u32, ScalarKind, u8)> {
        let mut v: Vec<_> = layout
            .slots
            .iter()
            .flatten()
            .flat_map(|s| &s.attributes)
            .map(|a| {
                use wgpu::VertexFormat as F;
                let (kind, n) = match a.format {
                    F::Float32x2 => (ScalarKind::Float, 2),
                    F::Float32x3 => (ScalarKind::Float, 3),
                    F::Float32x4 => (ScalarKind::Float, 4),
                    F::Uint32x4 | F::Uint16x4 | F::Uint8x4 => (ScalarKind::Uint, 4),
                    F::Unorm8x4 | F::Unorm16x4 => (ScalarKind::Float, 4),
                    other => panic!("unexpected format {other:?}"),
                };
                (a.shader_location, kind, n)
            })
            .collect();
        v.sort_by_key(|a| a.0);
        v
    };
    use skinview::skin::weights::{JointEncoding, WeightEncoding};
    for joints in [Some(JointEncoding::U8), Some(JointEncoding::U16), None] {
        for weights in [
            WeightEncoding::Unorm8,
            WeightEncoding::Unorm16,
            WeightEncoding::F32,
        ] {
            let p = InfluencePacking { joints, weights };
            for (layout, name) in [
                (VertexLayout::skinned(1, p), "VsIn4"),
                (VertexLayout::skinned(2, p), "VsIn8"),
                (VertexLayout::cpu_skinned(1, p), "VsIn4"),
                (VertexLayout::cpu_skinned(2, p), "VsIn8"),
            ] {
                let mut want = inputs(name);
                want.sort_by_key(|a| a.0);
                assert_eq!(attributes(&layout), want, "{name}, {}", p.describe());
                // The joint and weight slots hold `sets` sets back to back.
                let sets = if name == "VsIn8" { 2 } else { 1 };
                let (j, w) = p.set_bytes();
                let stride = |i: usize| layout.slots[i].as_ref().map(|s| s.stride);
                assert_eq!((stride(3), stride(4)), (Some(j * sets), Some(w * sets)));
            }
        }
    }
}

/// The uniform path's `BonePalette` block has the offsets and size the Rust side writes, for
/// several K (the array sizes come from K), and both palette sources compile with every
/// pipeline body.
#[test]
fn bone_palette_matches_palette_uniform_wgsl() {
    for bones in [4u32, 5, 8, 12, 16, 24, 32, 64, 100] {
        let m = module_for(RENDER_WGSL, PaletteSource::Uniform { bones });
        let (size, members) = wgsl_struct(&m, "BonePalette");
        let l = BonePaletteLayout { bones };
        let at = |name: &str| members.iter().find(|(n, _)| n == name).unwrap().1 as u64;
        assert_eq!(at("matrices"), BonePaletteLayout::MATRICES, "K={bones}");
        assert_eq!(at("nodes"), l.nodes_offset(), "K={bones}");
        assert_eq!(at("morph_weights"), l.morph_offset(), "K={bones}");
        assert_eq!(size as u64, l.size(), "K={bones}");
    }
    module_for(CAPTURE_WGSL, PaletteSource::Storage);
    module_for(RENDER_WGSL, PaletteSource::Storage);
}
