//! Base colour textures and vertex colours, from glTF files built here byte by byte: COLOR_0
//! as normalised bytes (RGBA) and as floats (RGB); TEXCOORD_0; images from a buffer view, a
//! `data:` URI and a file beside the model; a broken image is a reported repair and the
//! material draws untextured; and the render shows vertex colour × texture × factor.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code

use crate::common;

use serde_json::{Value, json};
use skinview::character::CharacterSetup;
use skinview::image::Rgba8;
use skinview::view::ViewOptions;

/// A 2x2 image: green, blue / white, black (sRGB bytes).
fn image() -> Rgba8 {
    Rgba8 {
        width: 2,
        height: 2,
        pixels: vec![
            0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255,
        ],
    }
}

fn png() -> Vec<u8> {
    skinview::io::png::encode(&image(), &[]).unwrap()
}

/// One triangle facing +Z with UVs all on texel (0, 0) (green) and the given COLOR_0
/// accessor data; `images` is the glTF `images` array (buffer view 3 holds the PNG when used).
fn gltf(colors: (&[u8], &str, &str, bool), images: Value) -> Vec<u8> {
    let positions: [f32; 9] = [-1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0, 1.0, 0.0];
    let uvs: [f32; 6] = [0.1, 0.1, 0.2, 0.1, 0.1, 0.2];
    let mut bin = Vec::new();
    bin.extend_from_slice(bytemuck::cast_slice(&positions));
    bin.extend_from_slice(bytemuck::cast_slice(&uvs));
    let color_offset = bin.len();
    bin.extend_from_slice(colors.0);
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let png_offset = bin.len();
    let png = png();
    bin.extend_from_slice(&png);
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let (component_type, ty, normalized) = (colors.1, colors.2, colors.3);
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "TEXCOORD_0": 1, "COLOR_0": 2},
            "material": 0
        }]}],
        "materials": [{"pbrMetallicRoughness": {
            "baseColorFactor": [1.0, 1.0, 1.0, 1.0],
            "baseColorTexture": {"index": 0}
        }}],
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"magFilter": 9728, "minFilter": 9728}],
        "images": images,
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": color_offset, "byteLength": colors.0.len()},
            {"buffer": 0, "byteOffset": png_offset, "byteLength": png.len()}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": 2, "componentType": component_type.parse::<u32>().unwrap(),
             "count": 3, "type": ty, "normalized": normalized}
        ]
    });
    common::glb::pack(&json, &bin)
}

const RED_UNORM8: [u8; 12] = [255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255];

fn import(bytes: &[u8], path: &std::path::Path) -> skinview::Scene {
    skinview::io::gltf_import::import_slice(bytes, path).unwrap()
}

#[test]
fn colors_uvs_and_a_buffer_view_texture_are_imported() {
    let bytes = gltf(
        (&RED_UNORM8, "5121", "VEC4", true),
        json!([{"bufferView": 3, "mimeType": "image/png"}]),
    );
    let scene = import(&bytes, std::path::Path::new("view.glb"));
    let prim = &scene.meshes[0].primitives[0];
    let colors = prim.colors.as_ref().unwrap();
    assert_eq!(colors, &vec![glam::Vec4::new(1.0, 0.0, 0.0, 1.0); 3]);
    assert_eq!(prim.uvs.as_ref().unwrap()[1], glam::Vec2::new(0.2, 0.1));
    assert_eq!(prim.base_color_texture, Some(0));
    assert_eq!(scene.textures[0].image, image());
    assert!(!scene.textures[0].mag_linear && !scene.textures[0].min_linear);
    // Float RGB colours: alpha 1.
    let rgb: Vec<u8> = [0.5f32, 0.25, 1.0]
        .repeat(3)
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let bytes = gltf(
        (&rgb, "5126", "VEC3", false),
        json!([{"bufferView": 3, "mimeType": "image/png"}]),
    );
    let scene = import(&bytes, std::path::Path::new("rgb.glb"));
    assert_eq!(
        scene.meshes[0].primitives[0].colors.as_ref().unwrap()[2],
        glam::Vec4::new(0.5, 0.25, 1.0, 1.0)
    );
}

#[test]
fn data_uri_and_external_images_are_read_and_broken_ones_reported() {
    use base64::encode;
    let uri = format!("data:image/png;base64,{}", encode(png()));
    let bytes = gltf((&RED_UNORM8, "5121", "VEC4", true), json!([{"uri": uri}]));
    let scene = import(&bytes, std::path::Path::new("datauri.glb"));
    assert_eq!(scene.textures[0].image, image());
    // A file beside the model.
    let dir = std::env::temp_dir().join(format!("skinview-tex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tex.png"), png()).unwrap();
    let bytes = gltf(
        (&RED_UNORM8, "5121", "VEC4", true),
        json!([{"uri": "tex.png"}]),
    );
    let model = dir.join("external.glb");
    std::fs::write(&model, &bytes).unwrap();
    let scene = skinview::io::load(&model).unwrap();
    assert_eq!(scene.textures[0].image, image());
    // Broken: not an image, and a missing file. Reported, the model still loads untextured.
    for images in [
        json!([{"uri": format!("data:image/png;base64,{}", encode(b"not a png"))}]),
        json!([{"uri": "missing.png"}]),
    ] {
        let bytes = gltf((&RED_UNORM8, "5121", "VEC4", true), images);
        std::fs::write(&model, &bytes).unwrap();
        let scene = skinview::io::load(&model).unwrap();
        assert!(scene.textures.is_empty());
        assert_eq!(scene.meshes[0].primitives[0].base_color_texture, None);
        let note = scene
            .report
            .notes
            .iter()
            .find(|n| n.field == "images[0]")
            .expect("a note on images[0]");
        assert!(
            note.repaired && note.message.contains("untextured"),
            "{}",
            note.message
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The render multiplies vertex colour, texture and factor: a red vertex colour over the green
/// texel is black; white vertex colour over it is green.
#[test]
fn the_render_shows_vertex_colour_times_texture() {
    let Some(ctx) = common::gpu() else { return };
    let centre = |colors: &[u8]| {
        let bytes = gltf(
            (colors, "5121", "VEC4", true),
            json!([{"bufferView": 3, "mimeType": "image/png"}]),
        );
        let scene = import(&bytes, std::path::Path::new("tri.glb"));
        let mut c = CharacterSetup::clip(None).build(&scene).unwrap();
        c.update(0.0, 0.0).unwrap();
        let img =
            skinview::view::render_character(ctx, &c, &ViewOptions::default(), 64, 64).unwrap();
        let i = (40 * 64 + 32) * 4;
        [img.pixels[i], img.pixels[i + 1], img.pixels[i + 2]]
    };
    let white = [255u8; 12];
    let green = centre(&white);
    let black = centre(&RED_UNORM8);
    println!("white × green texel: {green:?}; red × green texel: {black:?}");
    assert!(
        green[1] > 120 && green[0] < 60 && green[2] < 60,
        "{green:?}"
    );
    assert!(black.iter().all(|&c| c < 60), "{black:?}");
}
