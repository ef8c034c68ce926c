//! The web page's choices that need no browser (`skinview::viewer::page`): its URL parameters,
//! which dropped file is the model, and which files a `.gltf` names. The page itself runs in
//! Chromium in tests/web.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use serde_json::json;
use skinview::viewer::page::{Backend, PageParams, external_uris, model_among, no_model};
use skinview::viewer::state::ViewMode;

#[test]
fn page_url_parameters_parse_and_bad_ones_say_what_they_take() {
    let p = PageParams::parse("").unwrap();
    assert_eq!(p.model, "builtin:humanoid");
    assert_eq!(p.backend, Backend::Auto);
    assert_eq!(p.mode, ViewMode::Gpu);
    assert_eq!((p.time_s, p.paused, p.size), (None, false, None));
    let p = PageParams::parse(
        "?model=%2Fmodels%2FFox%20one.glb&backend=webgl2&view=diff&time=1.5&paused=1&size=640x480",
    )
    .unwrap();
    assert_eq!(p.model, "/models/Fox one.glb");
    assert_eq!(p.backend, Backend::WebGl2);
    assert_eq!(p.mode, ViewMode::Diff);
    assert_eq!(
        (p.time_s, p.paused, p.size),
        (Some(1.5), true, Some((640, 480)))
    );
    assert_eq!(
        PageParams::parse("backend=webgpu&view=split").unwrap().mode,
        ViewMode::SideBySide
    );
    for (query, says) in [
        (
            "backend=vulkan",
            "backend=vulkan: expected webgpu, webgl2 or auto",
        ),
        ("view=3d", "view=3d: expected gpu, cpu, split or diff"),
        ("time=-1", "time=-1: expected a time in seconds, 0 or more"),
        ("time=abc", "time=abc: expected a time in seconds"),
        ("size=10x10", "size=10x10: expected WIDTHxHEIGHT"),
        ("size=640", "size=640: expected WIDTHxHEIGHT"),
        ("colour=red", "unknown parameter `colour`"),
    ] {
        let e = PageParams::parse(query).unwrap_err().to_string();
        assert!(e.contains(says), "{query}: {e}");
    }
}

#[test]
fn the_model_among_dropped_files_and_the_message_when_none_is() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        model_among(&names(&["a.bin", "tex.png", "Fox.GLTF"])).as_deref(),
        Some("Fox.GLTF")
    );
    assert_eq!(
        model_among(&names(&["x.rig.json", "y.glb", "z.gltf"])).as_deref(),
        Some("y.glb"),
        "a .glb first, then a .gltf, then a native rig"
    );
    assert_eq!(model_among(&names(&["a.bin", "b.png"])), None);
    let e = no_model(&names(&["a.bin", "b.png"])).to_string();
    assert!(
        e.contains("no model among the files given (a.bin, b.png)"),
        "{e}"
    );
    let e = no_model(&names(&["walk.fbx"])).to_string();
    assert!(e.contains("walk.fbx: this format is not read"), "{e}");
}

#[test]
fn a_gltf_names_its_external_buffers_and_images_once() {
    let gltf = json!({
        "buffers": [{ "uri": "a.bin", "byteLength": 4 }, { "uri": "data:application/octet-stream;base64,AAAA", "byteLength": 3 }, { "uri": "a.bin", "byteLength": 4 }],
        "images": [{ "uri": "tex/skin%20map.png" }, { "bufferView": 0 }],
    });
    let uris = external_uris(&serde_json::to_vec(&gltf).unwrap());
    assert_eq!(uris, ["a.bin", "tex/skin%20map.png"]);
    assert!(external_uris(b"not json").is_empty());
}
