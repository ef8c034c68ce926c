//! Models from files held in memory (the web page's dropped, picked or fetched files,
//! `ModelSource::Memory`): the same import as from disk, under the same rules — buffers and
//! images come only from the files given, each at most `MAX_FILE_BYTES`, and a missing or short
//! file is an error naming the field.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use skinview::io::{FileSet, ModelSource};

use crate::common;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skinview-memory-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// CesiumMan as a `.gltf` with its buffer and its texture as separate files: (json, bin, png).
fn cesium_in_three_files() -> (Value, Vec<u8>, Vec<u8>) {
    let (mut j, bin) = common::glb::split(&std::fs::read(common::model("CesiumMan")).unwrap());
    let iv = j["images"][0]["bufferView"].as_u64().unwrap() as usize;
    let view = &j["bufferViews"][iv];
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let png = bin[start..start + view["byteLength"].as_u64().unwrap() as usize].to_vec();
    j["buffers"][0]["uri"] = json!("cesium.bin");
    j["images"][0] = json!({ "uri": "textures/skin%20map.png" });
    (j, bin, png)
}

fn memory(main: &str, files: &[(&str, &[u8])]) -> ModelSource {
    let mut set = FileSet::new();
    for (name, bytes) in files {
        set.add(name, bytes.to_vec()).unwrap();
    }
    ModelSource::Memory {
        main: main.into(),
        set: Arc::new(set),
    }
}

/// The same three files read from a folder and from memory give the same scene (vertices,
/// joints, animation, texture pixels); files dropped without their folder are found by name.
#[test]
fn files_in_memory_import_as_the_same_files_on_disk() {
    let (j, bin, png) = cesium_in_three_files();
    let gltf = serde_json::to_vec(&j).unwrap();
    let dir = scratch("same");
    std::fs::create_dir_all(dir.join("textures")).unwrap();
    std::fs::write(dir.join("cesium.gltf"), &gltf).unwrap();
    std::fs::write(dir.join("cesium.bin"), &bin).unwrap();
    std::fs::write(dir.join("textures/skin map.png"), &png).unwrap();
    let disk = ModelSource::File(dir.join("cesium.gltf")).load().unwrap();
    for png_name in ["textures/skin map.png", "skin map.png"] {
        let source = memory(
            "cesium.gltf",
            &[
                ("cesium.gltf", &gltf),
                ("cesium.bin", &bin),
                (png_name, &png),
            ],
        );
        assert!(!source.is_native());
        assert_eq!(source.label(), "cesium.gltf");
        let m = source.load().unwrap();
        let (a, b) = (&disk.scene, &m.scene);
        assert_eq!(
            format!("{:?}", a.meshes),
            format!("{:?}", b.meshes),
            "{png_name}"
        );
        assert_eq!(format!("{:?}", a.nodes), format!("{:?}", b.nodes));
        assert_eq!(format!("{:?}", a.skins), format!("{:?}", b.skins));
        assert_eq!(a.animations.len(), b.animations.len());
        assert_eq!(b.textures.len(), 1);
        assert!(a.textures[0].image.pixels == b.textures[0].image.pixels);
        let read: Vec<String> = m.files.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(read, ["cesium.gltf", "cesium.bin", png_name], "files read");
    }
}

/// What the set does not hold is an error naming the field and what was given; a URL or a
/// short buffer is refused as from disk; a native rig reads from memory too.
#[test]
fn memory_import_reads_only_the_files_given() {
    let (j, bin, png) = cesium_in_three_files();
    let gltf = serde_json::to_vec(&j).unwrap();
    let missing = memory(
        "cesium.gltf",
        &[("cesium.gltf", &gltf), ("skin map.png", &png)],
    )
    .load()
    .unwrap_err()
    .to_string();
    assert!(
        missing.contains("buffers[0].uri")
            && missing.contains("\"cesium.bin\" was not given with the model")
            && missing.contains("given: cesium.gltf, skin map.png"),
        "{missing}"
    );
    let short = memory(
        "cesium.gltf",
        &[
            ("cesium.gltf", &gltf),
            ("cesium.bin", &bin[..100]),
            ("skin map.png", &png),
        ],
    )
    .load()
    .unwrap_err()
    .to_string();
    assert!(short.contains("truncated buffer"), "{short}");
    let mut url = j.clone();
    url["buffers"][0]["uri"] = json!("https://example.com/cesium.bin");
    let url = serde_json::to_vec(&url).unwrap();
    let e = memory(
        "cesium.gltf",
        &[("cesium.gltf", &url), ("cesium.bin", &bin)],
    )
    .load()
    .unwrap_err()
    .to_string();
    assert!(e.contains("only relative file paths"), "{e}");
    let none = memory("other.glb", &[("cesium.gltf", &gltf)])
        .load()
        .unwrap_err()
        .to_string();
    assert!(
        none.contains("other.glb") && none.contains("not among the files given"),
        "{none}"
    );

    // A native rig: the same rig as the built-in it was written from.
    let rig = skinview::builtin::Builtin::Arm.rig().unwrap();
    let text = skinview::io::rig_json::to_string(&rig);
    let source = memory("arm.rig.json", &[("arm.rig.json", text.as_bytes())]);
    assert!(source.is_native());
    let m = source.load().unwrap();
    let direct = rig.to_scene().unwrap().scene;
    assert_eq!(
        format!("{:?}", m.scene.nodes),
        format!("{:?}", direct.nodes)
    );
    assert_eq!(
        format!("{:?}", m.scene.meshes),
        format!("{:?}", direct.meshes)
    );
    assert!(m.rig.is_some());
    assert_eq!(
        m.files,
        [PathBuf::from("arm.rig.json")],
        "the file read is recorded"
    );
    let bad = memory("bad.rig.json", &[("bad.rig.json", b"{\"bones\": 3}")])
        .load()
        .unwrap_err()
        .to_string();
    assert!(bad.starts_with("bad.rig.json"), "{bad}");
}

/// URIs are judged as from a folder, and a file name given twice is not guessed between.
#[test]
fn memory_uris_follow_the_folder_rules() {
    let (mut j, bin, png) = cesium_in_three_files();
    for (uri, says) in [
        ("../cesium.bin", "leaves the model's folder"),
        ("/cesium.bin", "absolute path or names a hidden file"),
        (".cache/cesium.bin", "absolute path or names a hidden file"),
    ] {
        j["buffers"][0]["uri"] = json!(uri);
        let gltf = serde_json::to_vec(&j).unwrap();
        let e = memory(
            "cesium.gltf",
            &[
                ("cesium.gltf", &gltf),
                ("cesium.bin", &bin),
                ("skin map.png", &png),
            ],
        )
        .load()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("buffers[0].uri") && e.contains(says),
            "{uri}: {e}"
        );
    }
    j["buffers"][0]["uri"] = json!("cesium.bin");
    let gltf = serde_json::to_vec(&j).unwrap();
    // An image is repaired (drawn untextured, with a note), as an unreadable image on disk.
    let m = memory(
        "cesium.gltf",
        &[
            ("cesium.gltf", &gltf),
            ("cesium.bin", &bin),
            ("a/skin map.png", &png),
            ("b/skin map.png", &png),
        ],
    )
    .load()
    .unwrap();
    assert!(m.scene.textures.is_empty());
    let note = &m.scene.report.notes[0];
    assert_eq!(note.field, "images[0]");
    assert!(
        note.message
            .contains("could be any of a/skin map.png, b/skin map.png"),
        "{}",
        note.message
    );
}

/// A file over the size limit is refused before its bytes are read.
#[test]
fn file_set_checks_sizes_before_reading() {
    let limit = skinview::io::files::MAX_FILE_BYTES;
    if let Err(e) = FileSet::check_size("big.glb", limit) {
        panic!("a file of exactly the limit refused: {e}");
    }
    let e = FileSet::check_size("big.glb", limit + 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("big.glb") && e.contains("more than the"), "{e}");
    let mut set = FileSet::new();
    set.add("a.bin", vec![1, 2]).unwrap();
    set.add("a.bin", vec![3]).unwrap();
    assert_eq!(
        set.get("a.bin"),
        Some(&[3u8][..]),
        "a later file replaces the earlier"
    );
    assert_eq!(set.names().collect::<Vec<_>>(), ["a.bin"]);
}
