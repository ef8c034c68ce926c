//! The web page's choices that need no browser (`skinview::viewer::page`): its URL parameters,
//! which dropped file is the model, and which files a `.gltf` names. The page itself runs in
//! Chromium in tests/web.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use serde_json::json;
use skinview::viewer::page::{
    Backend, MAX_PAGE_BYTES, MAX_PAGE_FILES, PageBudget, PageParams, check_given, external_uris,
    fetched_inside, model_among, no_model,
};
use skinview::viewer::state::ViewMode;

#[test]
fn page_url_parameters_parse_and_bad_ones_say_what_they_take() {
    let p = PageParams::parse("").unwrap();
    assert_eq!(p.model, "builtin:humanoid");
    assert_eq!(p.backend, Backend::Auto);
    assert_eq!(p.mode, ViewMode::Gpu);
    assert_eq!(
        (p.time_s, p.paused, p.size, p.crowd),
        (None, false, None, None)
    );
    assert_eq!(PageParams::parse("crowd=500").unwrap().crowd, Some(500));
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
        ("crow=5", "unknown parameter `crow` (model, backend"),
        ("crow=5", "did you mean \"crowd\"?"),
        (
            "backend=webgl",
            "expected webgpu, webgl2 or auto; did you mean \"webgl2\"",
        ),
        ("view=spilt", "did you mean \"split\"?"),
        (
            "crowd=0",
            "crowd=0: expected a number of characters, 1 to 65536",
        ),
        ("crowd=lots", "crowd=lots: expected a number of characters"),
        (
            "crowd=70000",
            "crowd=70000: expected a number of characters",
        ),
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
    // The page reads FBX (ufbx built for wasm32): after glTF, before a native rig.
    assert_eq!(
        model_among(&names(&["walk.fbx", "x.rig.json"])).as_deref(),
        Some("walk.fbx")
    );
    let e = no_model(&names(&["walk.obj"])).to_string();
    assert!(e.contains("walk.obj: this format is not read"), "{e}");
}

#[test]
fn a_gltf_names_its_external_files_once_and_nothing_outside_its_folder() {
    let gltf = |buffers: serde_json::Value| {
        serde_json::to_vec(&json!({ "buffers": buffers, "images": [{ "uri": "tex/skin%20map.png" }, { "bufferView": 0 }] })).unwrap()
    };
    let uris = external_uris(
        "m.gltf",
        &gltf(json!([{ "uri": "a.bin" }, { "uri": "data:application/octet-stream;base64,AAAA" }, { "uri": "a.bin" }])),
    )
    .unwrap();
    let expected = [
        ("buffers[0].uri", "a.bin"),
        ("images[0].uri", "tex/skin%20map.png"),
    ];
    let got: Vec<(&str, &str)> = uris.iter().map(|(f, u)| (f.as_str(), u.as_str())).collect();
    assert_eq!(got, expected);
    assert!(external_uris("m.gltf", b"not json").unwrap().is_empty());
    // The page fetches nothing the importer would not read from a folder.
    for (uri, says) in [
        ("../secret.bin", "leaves the model's folder"),
        ("/etc/passwd", "absolute path or names a hidden file"),
        (".git/config", "absolute path or names a hidden file"),
        (
            "//evil.example/a.bin",
            "absolute path or names a hidden file",
        ),
        ("https://evil.example/a.bin", "only relative file paths"),
    ] {
        let e = external_uris("m.gltf", &gltf(json!([{ "uri": uri }])))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("m.gltf") && e.contains("buffers[0].uri") && e.contains(says),
            "{uri}: {e}"
        );
    }
    let many: Vec<serde_json::Value> = (0..=MAX_PAGE_FILES)
        .map(|i| json!({ "uri": format!("b{i}.bin") }))
        .collect();
    let e = external_uris("m.gltf", &gltf(json!(many)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("more than {} external files", MAX_PAGE_FILES - 1)),
        "{e}"
    );
}

/// What the browser would fetch, judged as a URL path: inside the model's folder, no hidden
/// part, no query (the escapes a file-path check misses: `\\`, `%2e%2e`, dropped newlines).
#[test]
fn the_page_fetches_only_inside_the_models_folder() {
    let m = "/models/CesiumMan/CesiumMan.gltf";
    assert!(fetched_inside(m, "/models/CesiumMan/CesiumMan.bin", "", ""));
    assert!(fetched_inside(
        m,
        "/models/CesiumMan/tex/skin%20map.png",
        "",
        ""
    ));
    for (fetched, search) in [
        ("/models/x.bin", ""), // `a\..\..\x.bin` as the browser reads it
        ("/models/CesiumMan/%2e%2e/x.bin", ""), // kept escaped in the path
        ("/models/CesiumMan/.git/config", ""),
        ("/models/CesiumMan/%2Egit/config", ""),
        ("/models/CesiumMan//x.bin", ""),
        ("/models/CesiumMan/a.bin", "?%ff"),
        ("/other/CesiumMan/a.bin", ""),
    ] {
        assert!(!fetched_inside(m, fetched, search, ""), "{fetched}{search}");
    }
    assert!(!fetched_inside(m, "/models/CesiumMan/a.bin", "", "#x"));
    assert!(
        !fetched_inside("model.gltf", "/a.bin", "", ""),
        "no folder: nothing"
    );
}

#[test]
fn files_given_are_checked_before_any_is_read() {
    let files = |sizes: &[u64]| -> Vec<(String, u64)> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (format!("f{i}.bin"), n))
            .collect()
    };
    if let Err(e) = check_given(&files(&[10, 20])) {
        panic!("two small files refused: {e}");
    }
    let e = check_given(&files(&vec![1; MAX_PAGE_FILES + 1]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{} files given at once", MAX_PAGE_FILES + 1)),
        "{e}"
    );
    let half = MAX_PAGE_BYTES / 2 + 1;
    let e = check_given(&files(&[half, half])).unwrap_err().to_string();
    assert!(
        e.starts_with("f1.bin") && e.contains("bytes the page reads at once"),
        "{e}"
    );
    let file_limit = skinview::io::files::MAX_FILE_BYTES;
    let e = check_given(&files(&[file_limit + 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("f0.bin") && e.contains("more than the"), "{e}");
    // The budget counts what was read: a check does not spend.
    let mut budget = PageBudget::default();
    budget.check("a", MAX_PAGE_BYTES).unwrap();
    budget.check("a", MAX_PAGE_BYTES).unwrap();
    budget.spend("a", MAX_PAGE_BYTES - 5).unwrap();
    if let Err(e) = budget.check("b", 5) {
        panic!("the last 5 bytes of the budget refused: {e}");
    }
    assert!(
        budget.check("b", 6).is_err(),
        "6 bytes past a budget of 5 left"
    );
}
