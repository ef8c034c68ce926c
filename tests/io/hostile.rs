//! Hostile input and resource safety, on files generated here in a
//! temporary folder from the shared SimpleSkin sample: a GLB whose header lies about its
//! length, buffers that point at devices, outside the model's folder (absolute, `..`, a
//! symlink out), that are shorter than their `byteLength` or declare an absurd one, a buffer
//! without `byteLength`, an external image outside the folder; and every writing command
//! refusing to write over its own input (same path, another spelling, a hard link), leaving
//! it byte-identical.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skinview::io::gltf_import::import_file_with;
use skinview::io::{ImportOptions, ModelSource};

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skinview-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// SimpleSkin.gltf with its buffers written as `buffer{i}.bin` beside `dir/model.gltf` (each
/// `uri` then names its file): the JSON to edit, and the buffers' bytes.
fn external_simple_skin(dir: &Path) -> (Value, Vec<Vec<u8>>) {
    let src = common::shared_dir().join("models/SimpleSkin/SimpleSkin.gltf");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(src).unwrap()).unwrap();
    let mut blobs = Vec::new();
    for (i, b) in doc["buffers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let uri = b["uri"].as_str().unwrap();
        let data = base64_decode(uri.split_once(";base64,").unwrap().1);
        std::fs::write(dir.join(format!("buffer{i}.bin")), &data).unwrap();
        b["uri"] = json!(format!("buffer{i}.bin"));
        blobs.push(data);
    }
    (doc, blobs)
}

fn write_model(dir: &Path, doc: &Value) -> PathBuf {
    let p = dir.join("model.gltf");
    std::fs::write(&p, serde_json::to_vec(doc).unwrap()).unwrap();
    p
}

/// The error text of importing `path` (which must fail).
fn import_error(path: &Path, options: ImportOptions) -> String {
    match import_file_with(path, options) {
        Ok(_) => panic!("{} imported", path.display()),
        Err(e) => e.to_string(),
    }
}

/// Imports `path`; a refusal fails the test with the importer's message.
fn import_ok(path: &Path, options: ImportOptions) {
    if let Err(e) = import_file_with(path, options) {
        panic!("{} refused: {e}", path.display());
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|&c| c != b'=') {
        acc = (acc << 6) | T.iter().position(|&t| t == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[test]
fn external_buffers_load_inside_the_folder() {
    let dir = scratch("ok");
    let (doc, _) = external_simple_skin(&dir);
    let path = write_model(&dir, &doc);
    let (scene, files) = import_file_with(&path, ImportOptions::default()).unwrap();
    assert_eq!(scene.draws.len(), 1);
    // The model and each buffer file, canonical, the model first.
    assert_eq!(files[0], path.canonicalize().unwrap());
    assert_eq!(files.len(), 1 + doc["buffers"].as_array().unwrap().len());
}

#[test]
fn uris_outside_the_folder_are_refused_unless_allowed() {
    let dir = scratch("outside");
    let inner = dir.join("model");
    std::fs::create_dir_all(&inner).unwrap();
    let (mut doc, _) = external_simple_skin(&inner);
    // The first buffer moved one folder up and named with `..`.
    std::fs::rename(inner.join("buffer0.bin"), dir.join("buffer0.bin")).unwrap();
    doc["buffers"][0]["uri"] = json!("../buffer0.bin");
    let path = write_model(&inner, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("model.gltf") && e.contains("buffers[0].uri") && e.contains("outside"),
        "{e}"
    );
    let allow = ImportOptions {
        allow_external_uris: true,
    };
    import_ok(&path, allow);
    // An absolute path, and a symlink inside the folder leading out.
    doc["buffers"][0]["uri"] = json!(dir.join("buffer0.bin").to_str().unwrap());
    let path = write_model(&inner, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("buffers[0].uri") && e.contains("absolute path"),
        "{e}"
    );
    // A hidden file inside the folder (`.ssh/id_rsa` in a model saved in $HOME).
    std::fs::create_dir_all(inner.join(".secret")).unwrap();
    std::fs::copy(dir.join("buffer0.bin"), inner.join(".secret/key.bin")).unwrap();
    doc["buffers"][0]["uri"] = json!(".secret/key.bin");
    let path = write_model(&inner, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(e.contains("buffers[0].uri") && e.contains("hidden"), "{e}");
    import_ok(&path, allow);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("buffer0.bin"), inner.join("link.bin")).unwrap();
        doc["buffers"][0]["uri"] = json!("link.bin");
        let path = write_model(&inner, &doc);
        let e = import_error(&path, ImportOptions::default());
        assert!(e.contains("buffers[0].uri") && e.contains("outside"), "{e}");
    }
    // Schemes are not paths.
    doc["buffers"][0]["uri"] = json!("https://example.com/buffer0.bin");
    let path = write_model(&inner, &doc);
    let e = import_error(&path, allow);
    assert!(e.contains("only relative file paths"), "{e}");
}

#[test]
fn devices_and_folders_are_never_read() {
    let dir = scratch("devices");
    let (mut doc, _) = external_simple_skin(&dir);
    let allow = ImportOptions {
        allow_external_uris: true,
    };
    #[cfg(unix)]
    {
        // /dev/zero would fill memory if read whole; it is not a regular file.
        doc["buffers"][0]["uri"] = json!("/dev/zero");
        let path = write_model(&dir, &doc);
        let e = import_error(&path, allow);
        assert!(
            e.contains("buffers[0].uri") && e.contains("not a regular file"),
            "{e}"
        );
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.bin")).unwrap();
        doc["buffers"][0]["uri"] = json!("zero.bin");
        let path = write_model(&dir, &doc);
        let e = import_error(&path, allow);
        assert!(
            e.contains("not a regular file") || e.contains("outside"),
            "{e}"
        );
    }
    std::fs::create_dir_all(dir.join("folder.bin")).unwrap();
    doc["buffers"][0]["uri"] = json!("folder.bin");
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(e.contains("not a regular file"), "{e}");
    // The model itself: a folder named like one.
    std::fs::create_dir_all(dir.join("fake.glb")).unwrap();
    let e = ModelSource::File(dir.join("fake.glb"))
        .load()
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::create_dir_all(dir.join("fake.rig.json")).unwrap();
    let e = ModelSource::File(dir.join("fake.rig.json"))
        .load()
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn byte_lengths_are_checked_before_reading() {
    let dir = scratch("lengths");
    let (mut doc, blobs) = external_simple_skin(&dir);
    // Longer than the file: truncated buffer, with both sizes.
    let real = blobs[0].len();
    doc["buffers"][0]["byteLength"] = json!(real + 100);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("buffers[0].uri") && e.contains("truncated") && e.contains(&real.to_string()),
        "{e}"
    );
    // Absurd: refused before any allocation.
    doc["buffers"][0]["byteLength"] = json!(1u64 << 40);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("buffers[0].byteLength") || e.contains("read up to"),
        "{e}"
    );
    // Missing: the glTF schema requires it.
    doc["buffers"][0]
        .as_object_mut()
        .unwrap()
        .remove("byteLength");
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(e.contains("byteLength"), "{e}");
    // Only the declared bytes are read from a longer file (a 1 MiB tail is ignored).
    let (mut doc, blobs) = external_simple_skin(&dir);
    let mut long = blobs[0].clone();
    long.extend(std::iter::repeat_n(0xAB, 1 << 20));
    std::fs::write(dir.join("buffer0.bin"), &long).unwrap();
    doc["buffers"][0]["byteLength"] = json!(blobs[0].len());
    let path = write_model(&dir, &doc);
    import_ok(&path, ImportOptions::default());
}

#[test]
fn glb_header_length_must_match_the_file() {
    let dir = scratch("glb");
    let src = std::fs::read(common::model("SimpleSkin")).unwrap();
    assert!(src.starts_with(b"glTF"));
    // Padded (header shorter than the file) and truncated (longer).
    let mut padded = src.clone();
    padded.extend([0u8; 64]);
    let truncated = src[..src.len() - 8].to_vec();
    for (name, bytes) in [("padded.glb", padded), ("truncated.glb", truncated)] {
        let p = dir.join(name);
        std::fs::write(&p, &bytes).unwrap();
        let e = import_error(&p, ImportOptions::default());
        assert!(
            e.contains(name) && e.contains("GLB header length"),
            "{name}: {e}"
        );
    }
    let ok = dir.join("ok.glb");
    std::fs::write(&ok, &src).unwrap();
    import_ok(&ok, ImportOptions::default());
}

/// Every writing command refuses to write over its input, under any name, and the input
/// stays byte-identical.
#[cfg(feature = "cli")]
#[test]
fn no_command_writes_over_its_input() {
    let dir = scratch("overwrite");
    let model = dir.join("m.glb");
    let original = std::fs::read(common::model("CesiumMan")).unwrap();
    std::fs::write(&model, &original).unwrap();
    std::fs::hard_link(&model, dir.join("hard.glb")).unwrap();
    let m = model.to_str().unwrap();
    let other_spelling = format!("{}/./m.glb", dir.display());
    let hard = dir.join("hard.glb");
    let hard = hard.to_str().unwrap();
    // render writes images only (.png, .jpg): its target is the model under an image name.
    std::fs::hard_link(&model, dir.join("hard.png")).unwrap();
    let hard_png = dir.join("hard.png");
    let hard_png = hard_png.to_str().unwrap();
    for target in [m, other_spelling.as_str(), hard] {
        for args in [
            vec!["export", m, "--out", target],
            vec!["render", m, "--out", hard_png],
            vec!["dump", m, "--time", "0", "--out", target],
            vec!["compare", m, "--frames", "2", "--json", target],
            vec!["partition", m, "--max-bones", "8", "--json", target],
            vec!["bench", m, "--frames", "2", "--json", target],
        ] {
            let (text, _) = refused(&args, &dir);
            assert!(
                text.contains("which is never overwritten"),
                "{args:?}: {text}"
            );
            assert!(
                std::fs::read(&model).unwrap() == original,
                "{args:?} changed its input"
            );
        }
    }
}

/// `skinview ARGS` (runtime folder `dir`), asserted to exit 2 (refused): its stderr and stdout.
#[cfg(feature = "cli")]
fn refused(args: &[&str], dir: &Path) -> (String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(args)
        .env("XDG_RUNTIME_DIR", dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
    (text, String::from_utf8_lossy(&o.stdout).to_string())
}

/// Two outputs naming one file (under two spellings too), or an output in a folder that does
/// not exist, are refused before any work (`optimize`, `diff`, `export`, `check`, `bench`):
/// exit 2 with the file named, and nothing written.
#[cfg(feature = "cli")]
#[test]
fn outputs_are_checked_before_the_work() {
    let dir = scratch("outputs");
    let model = common::model("CesiumMan");
    let m = model.to_str().unwrap();
    let out = dir.join("o.glb");
    let o = out.to_str().unwrap();
    let again = format!("{}/./o.glb", dir.display());
    let missing = dir.join("no-such-folder/r.json");
    let missing = missing.to_str().unwrap();
    let cases: [(Vec<&str>, &str); 7] = [
        (
            vec!["optimize", m, "--out", o, "--json", o],
            "named as two outputs",
        ),
        (
            vec!["optimize", m, "--out", o, "--json", &again],
            "named as two outputs",
        ),
        (
            vec!["optimize", m, "--out", o, "--json", missing],
            "does not exist",
        ),
        (
            vec!["diff", m, m, "--json", o, "--plot", o],
            "named as two outputs",
        ),
        (vec!["export", m, "--out", missing], "does not exist"),
        (
            vec!["check", m, "--json", o, "--junit", &again],
            "named as two outputs",
        ),
        (
            vec!["bench", m, "--frames", "2", "--json", missing],
            "does not exist",
        ),
    ];
    for (args, expect) in cases {
        let (text, stdout) = refused(&args, &dir);
        assert!(text.contains(expect), "{args:?}: {text}");
        assert!(stdout.is_empty(), "{args:?}: worked first");
        assert!(!out.exists(), "{args:?} wrote {o}");
    }
}

/// Flag values: negative times are values (`--time -1` clamps to the clip's start, as glTF
/// players do), sizes and counts out of range are refused by name before any work, and
/// `--allow-external-uris` is what lets a model reach outside its folder.
#[cfg(feature = "cli")]
#[test]
fn flag_values_are_bounded_and_external_uris_are_opt_in() {
    use std::process::Command;
    let dir = scratch("flags");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(args)
            .env("XDG_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        let text = common::output_text(&o);
        (o.status.code(), text)
    };
    let (neg, zero) = (dir.join("neg.json"), dir.join("zero.json"));
    for (t, out) in [("-.5", &neg), ("-1", &neg), ("0", &zero)] {
        let (code, text) = run(&["dump", "--time", t, "--out", out.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{text}");
    }
    let (a, b) = (
        skinview::io::dump::Dump::read(&neg).unwrap(),
        skinview::io::dump::Dump::read(&zero).unwrap(),
    );
    assert_eq!(a.meshes[0].positions_by_time, b.meshes[0].positions_by_time);
    // A dump of 25,000 frames of CesiumMan (491M values, about 6 GB of JSON) is refused
    // before any work.
    let cesium = common::model("CesiumMan");
    let mut args = vec!["dump".to_string(), cesium.to_str().unwrap().to_string()];
    for _ in 0..25_000 {
        args.push("--time=1".into());
    }
    args.extend(["--out".into(), neg.to_str().unwrap().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, text) = run(&args);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--time: 25000 times") && text.contains("at most"),
        "{text}"
    );
    let png = dir.join("x.png");
    let png = png.to_str().unwrap();
    let budgets = vec!["8"; 65].join(",");
    for (args, says) in [
        (
            vec!["render", "--size", "16384x16384", "--out", png],
            "--size",
        ),
        (vec!["render", "--size", "0x10", "--out", png], "--size"),
        (
            vec!["render", "--size", "8192x8192", "--out", png],
            "--size",
        ),
        (vec!["compare", "--frames", "0"], "--frames"),
        (vec!["compare", "--frames", "1000000000"], "--frames"),
        (vec!["bench", "--frames", "1000000000"], "--frames"),
        (vec!["partition", "--max-bones", &budgets], "--max-bones"),
        // Negative values reach the flag's own check (named), not "unexpected argument".
        (vec!["compare", "--frames", "-1"], "--frames"),
        (vec!["partition", "--max-bones", "-3"], "--max-bones"),
        (vec!["render", "--size", "-5x10", "--out", png], "--size"),
        (
            vec![
                "dump",
                "--max-influences",
                "-1",
                "--time",
                "0",
                "--out",
                png,
            ],
            "--max-influences",
        ),
        (vec!["render", "--anim", "-1", "--out", png], "--anim"),
        (vec!["render", "--time", "-inf", "--out", png], "--time"),
        (
            vec!["render", "--size", "4096x4096", "--out", png],
            "--size",
        ),
    ] {
        let (code, text) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }
    assert!(
        !Path::new(png).exists(),
        "a refused render wrote its output"
    );
    // A buffer one folder up: refused, named; followed with the flag.
    let inner = dir.join("model");
    std::fs::create_dir_all(&inner).unwrap();
    let (mut doc, _) = external_simple_skin(&inner);
    std::fs::rename(inner.join("buffer1.bin"), dir.join("buffer1.bin")).unwrap();
    doc["buffers"][1]["uri"] = json!("../buffer1.bin");
    let model = write_model(&inner, &doc);
    let m = model.to_str().unwrap();
    let (code, text) = run(&["info", m]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("model.gltf") && text.contains("buffers[1].uri"),
        "{text}"
    );
    let (code, text) = run(&["info", m, "--allow-external-uris"]);
    assert_eq!(code, Some(0), "{text}");
}

/// Found by the mutation fuzzer (tests/io/mutation_fuzz.rs, seed 777): an image with neither
/// `uri` nor `bufferView` made the gltf crate panic; with a `bufferView` but no `mimeType` too.
#[test]
fn images_without_a_source_are_errors() {
    let dir = scratch("images");
    let (mut doc, _) = external_simple_skin(&dir);
    doc["images"] = json!([{}]);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("images[0]") && e.contains("neither uri nor bufferView"),
        "{e}"
    );
    doc["images"] = json!([{ "bufferView": 0 }]);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(e.contains("images[0].mimeType"), "{e}");
}

/// Finite inputs near f32's limit (an inverse bind matrix of 3e38) overflow while skinning:
/// sampling frames (what `dump` writes) is an error naming the model, the draw, the vertex
/// and the time, on the CPU and on the GPU — never `null` positions and success.
#[test]
fn overflowing_skinning_is_an_error_not_null() {
    use skinview::compare::run::{Source, sample_frames};
    let mut scene = skinview::io::load(&common::model("SimpleSkin")).unwrap();
    for m in &mut scene.skins[0].joint_from_bind {
        *m = glam::Mat4::from_cols_array(&[3e38; 16]);
    }
    let draws = scene.deformed_draw_indices();
    let e = sample_frames(None, &scene, Some(0), &[0.5], &draws, Source::CPU, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("SimpleSkin") && e.contains("draws[") && e.contains("overflow"),
        "{e}"
    );
    if let Some(ctx) = common::gpu() {
        let gpu = Source::gpu(skinview::gpu::CapturePath::Draw);
        let e = sample_frames(Some(ctx), &scene, Some(0), &[0.5], &draws, gpu, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("draws[") && e.contains("overflow"), "{e}");
    }
}

/// Structural rules the importer checks once, citing the glTF rule: a byteStride that is not a
/// multiple of the component size, and primitives of one mesh with different morph-target
/// counts (they share the mesh's weights).
#[test]
fn structural_rules_name_the_field_and_the_rule() {
    let dir = scratch("structure");
    let (mut doc, _) = external_simple_skin(&dir);
    doc["bufferViews"][2]["byteStride"] = json!(17);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("bufferViews[2].byteStride") && e.contains("multiple of 4"),
        "{e}"
    );
    let (mut doc, _) = external_simple_skin(&dir);
    let mut second = doc["meshes"][0]["primitives"][0].clone();
    second["targets"] = json!([{ "POSITION": 1 }]);
    doc["meshes"][0]["primitives"]
        .as_array_mut()
        .unwrap()
        .push(second);
    let path = write_model(&dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("meshes[0].primitives[0].targets") && e.contains("same number of targets"),
        "{e}"
    );
}

/// A glTF document edit that breaks one specification rule.
type SpecEdit = fn(&mut Value);

/// Each document rule broken once: the edit, the field the error names and the rule's
/// section (or the schema's words for what the field allows).
fn spec_rule_cases() -> Vec<(SpecEdit, &'static str, &'static str)> {
    vec![
        (
            |d| d["asset"]["version"] = json!("1.0"),
            "asset.version",
            "§3.2",
        ),
        (
            |d| d["asset"]["minVersion"] = json!("2.1"),
            "asset.minVersion",
            "§3.2",
        ),
        (
            |d| {
                d["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
                d["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
            },
            "extensionsRequired[0]",
            "§3.12",
        ),
        (
            |d| d["extensionsRequired"] = json!(["KHR_mesh_quantization"]),
            "extensionsRequired[0]",
            "extensionsUsed",
        ),
        (
            |d| d["bufferViews"][1]["byteLength"] = json!(1000),
            "bufferViews[1]",
            "§3.6.2",
        ),
        (
            |d| d["bufferViews"][2]["byteStride"] = json!(18),
            "bufferViews[2].byteStride",
            "multiple of 4",
        ),
        (
            |d| d["nodes"][2]["matrix"] = json!([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
            "nodes[2].matrix",
            "§3.5.3",
        ),
        (
            |d| d["nodes"][1]["skin"] = json!(0),
            "nodes[1].skin",
            "§3.7.3",
        ),
        (
            |d| d["skins"][0]["joints"] = json!([1, 1]),
            "skins[0].joints[1]",
            "unique",
        ),
        (
            |d| d["nodes"][0]["weights"] = json!([0.5]),
            "nodes[0].weights",
            "§3.7.2.2",
        ),
        (
            |d| d["meshes"][0]["weights"] = json!([0.5]),
            "meshes[0].weights",
            "§3.7.2.2",
        ),
        (
            |d| d["scenes"][0]["nodes"] = json!([0, 1, 2]),
            "scenes[0].nodes[2]",
            "§3.5.2",
        ),
        (
            |d| {
                let ch = d["animations"][0]["channels"][0].clone();
                d["animations"][0]["channels"]
                    .as_array_mut()
                    .unwrap()
                    .push(ch);
            },
            "animations[0].channels[0].target",
            "§3.11",
        ),
        (
            |d| d["animations"][0]["channels"][0]["target"]["path"] = json!("weights"),
            "animations[0].channels[0].target.path",
            "§3.11",
        ),
        (
            |d| d["samplers"] = json!([{ "magFilter": 1234 }]),
            "samplers[0].magFilter",
            "9729 (LINEAR)",
        ),
        (
            |d| d["accessors"][0]["componentType"] = json!(9999),
            "accessors[0].componentType",
            "5126 (float)",
        ),
        (
            |d| d["nodes"][0]["mesh"] = json!(7),
            "nodes[0].mesh",
            "§3.3",
        ),
        (
            |d| d["meshes"][0]["primitives"] = json!([]),
            "meshes[0].primitives",
            "at least one",
        ),
        (
            |d| {
                d["accessors"][1]["componentType"] = json!(5122);
                d["accessors"][1]["normalized"] = json!(true);
            },
            "meshes[0].primitives[0].attributes.POSITION",
            "§3.7.2.1",
        ),
        (
            |d| {
                d["cameras"] = json!([{ "type": "perspective",
                        "perspective": { "yfov": 0.0, "znear": 0.1 } }])
            },
            "cameras[0].perspective.yfov",
            "§3.10",
        ),
        (
            |d| {
                d["cameras"] = json!([{ "type": "orthographic",
                        "perspective": { "yfov": 0.7, "znear": 0.1 } }])
            },
            "cameras[0].type",
            "no orthographic object",
        ),
        (
            |d| d["nodes"][1]["children"] = json!([2, 2]),
            "nodes[1].children",
            "listed twice",
        ),
        (
            |d| d["nodes"][2]["children"] = json!([2]),
            "nodes[2].children",
            "§3.5.2",
        ),
        (
            // The mesh's index data (0, 1, 3, 0, ...) as sparse indices: not increasing.
            |d| {
                d["accessors"][1]["sparse"] = json!({ "count": 4,
                        "indices": { "bufferView": 0, "componentType": 5123 },
                        "values": { "bufferView": 1 } })
            },
            "sparse.indices[3]",
            "strictly increase",
        ),
    ]
}

/// Each document rule of the glTF 2.0 specification the importer checks, broken once on
/// SimpleSkin: the error names the file, the field and the rule's section; the schema's own
/// verdicts say what the field allows. Required extensions: KHR_mesh_quantization is read,
/// appearance-only ones load with a warning, others are refused.
#[test]
fn every_spec_rule_names_the_file_the_field_and_the_section() {
    let dir = scratch("spec");
    for (edit, field, rule) in spec_rule_cases() {
        let (mut doc, _) = external_simple_skin(&dir);
        edit(&mut doc);
        let path = write_model(&dir, &doc);
        let e = import_error(&path, ImportOptions::default());
        assert!(
            e.starts_with("model.gltf: ") && e.contains(field) && e.contains(rule),
            "expected {field} and {rule:?} in: {e}"
        );
    }
    readable_required_extensions_load_with_a_note(&dir);
    contradicting_position_bounds_are_reported(&dir);
    an_accessor_without_a_buffer_view_is_zeros(&dir);
}

/// Required extensions skinview reads, or that only change appearance, load: only the
/// appearance-only one is noted.
fn readable_required_extensions_load_with_a_note(dir: &Path) {
    let (mut doc, _) = external_simple_skin(dir);
    doc["extensionsUsed"] = json!(["KHR_texture_transform", "KHR_materials_unlit"]);
    doc["extensionsRequired"] = json!(["KHR_texture_transform", "KHR_materials_unlit"]);
    let path = write_model(dir, &doc);
    let scene = import_file_with(&path, ImportOptions::default()).unwrap().0;
    let notes: Vec<&str> = scene
        .report
        .notes
        .iter()
        .map(|n| n.field.as_str())
        .filter(|f| f.starts_with("extensions"))
        .collect();
    assert_eq!(
        notes,
        vec!["extensionsRequired[1]"],
        "{:?}",
        scene.report.notes
    );
}

/// POSITION bounds that contradict the data are an error naming the bound and the attribute
/// (the Khronos glTF-Validator's ACCESSOR_MAX_MISMATCH).
fn contradicting_position_bounds_are_reported(dir: &Path) {
    let (mut doc, _) = external_simple_skin(dir);
    doc["accessors"][1]["max"] = json!([0.5, 9.0, 0.0]);
    let path = write_model(dir, &doc);
    let e = import_error(&path, ImportOptions::default());
    assert!(
        e.contains("accessors[1].max[1]") && e.contains("POSITION") && e.contains("§3.6.2.5"),
        "{e}"
    );
}

/// An accessor without a bufferView is zeros (§3.6.2.3), not an error: a morph target that
/// moves nothing.
fn an_accessor_without_a_buffer_view_is_zeros(dir: &Path) {
    let (mut doc, _) = external_simple_skin(dir);
    let n = doc["accessors"][1]["count"].clone();
    doc["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "componentType": 5126, "count": n, "type": "VEC3" }));
    doc["meshes"][0]["primitives"][0]["targets"] = json!([{ "POSITION": 7 }]);
    let path = write_model(dir, &doc);
    let zeros = import_file_with(&path, ImportOptions::default()).unwrap().0;
    let target = &zeros.meshes[0].primitives[0].morph_targets[0];
    assert!(
        target
            .positions
            .as_ref()
            .unwrap()
            .iter()
            .all(|p| *p == glam::Vec3::ZERO)
    );
}

/// Reading, validating and converting a native rig is linear in its bones: a chain of 2N
/// bones (each with a one-key track) takes at most 2.1× the work of a chain of N (a quadratic
/// step, such as the duplicate-name check that once compared every pair, takes 4×). The work
/// is counted in the loops ([`skinview::weights::Work`]: validation, both conversions and the
/// scene builder), not timed: a shared 2-core machine's clock cannot tell 2× from 4×.
/// BENCHMARKS.md ("Import scaling in bones") has the wall times.
#[test]
fn native_rig_work_grows_linearly_in_bones() {
    use skinview::builtin::Builtin;
    use skinview::io::rig_json;
    use skinview::rig::WeberRig;
    use skinview::weights::Work;
    let arm = Builtin::Arm.rig().unwrap();
    let chain = |n: usize| {
        let mut rig = arm.clone();
        let template = arm.bones[1].clone();
        rig.bones.truncate(1);
        for i in 1..n {
            let mut b = template.clone();
            b.name = format!("b{i}");
            b.parent = Some(i - 1);
            b.links = None;
            rig.bones.push(b);
        }
        rig.mesh = None;
        let mut motion = arm.motions[0].clone();
        let track = motion.tracks[0].clone();
        motion.tracks = (1..n)
            .map(|i| {
                let mut t = track.clone();
                t.bone = format!("b{i}");
                t
            })
            .collect();
        rig.motions = vec![motion];
        rig_json::to_string(&rig)
    };
    let work = |n: usize| {
        let rig = rig_json::parse(&chain(n), "chain.rig.json").unwrap();
        let mut work = Work::default();
        let rs = rig.to_scene_counted(&mut work).unwrap();
        let back = WeberRig::from_scene_counted(&rs, "chain", &mut work).unwrap();
        assert_eq!(back.bones.len(), n);
        assert_eq!(work.vertex_bone, 0, "no mesh, so no vertex–bone pairs");
        work.steps
    };
    let (a, b) = (work(5_000), work(10_000));
    println!(
        "5k bones {a} steps, 10k bones {b} steps: x{:.3}",
        b as f64 / a as f64
    );
    // Every bone is visited at least once by each of the three stages.
    assert!(a >= 3 * 5_000, "5k bones counted {a} steps");
    assert!(
        b as f64 / a as f64 <= 2.1,
        "doubling the bones took x{:.3} the work",
        b as f64 / a as f64
    );
}

/// The commands that skin refuse an overflowing skin by name (a joint scaled by 3e38), exit 2;
/// `info` and `export`, which do not skin, still work.
#[cfg(feature = "cli")]
#[test]
fn commands_that_skin_refuse_an_overflowing_skin() {
    use std::process::Command;
    let dir = scratch("overflow-cli");
    let (mut doc, _) = external_simple_skin(&dir);
    doc["nodes"][1]["scale"] = json!([3e38, 3e38, 3e38]);
    let path = write_model(&dir, &doc);
    let m = path.to_str().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (json, png) = (out("d.json"), out("r.png"));
    for (args, code) in [
        (vec!["bench", m, "--frames", "2"], 2),
        (vec!["dump", m, "--time", "0.5", "--out", json.as_str()], 2),
        (vec!["info", m], 0),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(&args)
            .env("XDG_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        let text = common::output_text(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {text}");
        if code == 2 {
            assert!(
                text.contains("model.gltf") && text.contains("overflow"),
                "{text}"
            );
        }
    }
    if common::gpu().is_some() {
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(["render", m, "--size", "64x64", "--out", png.as_str()])
            .env("XDG_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
        assert!(!Path::new(&png).exists());
    }
}

/// An output named by the user that is not a regular file — a pipe, a folder — is refused,
/// never replaced by the temporary file's rename (as root that would replace `/dev/null`).
#[cfg(all(unix, feature = "cli"))]
#[test]
fn outputs_that_are_not_regular_files_are_refused_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    use std::process::Command;
    let dir = scratch("special-out");
    let fifo = dir.join("out.glb");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let folder = dir.join("folder.png");
    std::fs::create_dir(&folder).unwrap();
    let model = common::model("RiggedSimple");
    for (out, args) in [
        (&fifo, vec!["dump", "--time", "0", "--out"]),
        (&fifo, vec!["export", "--out"]),
        (&folder, vec!["render", "--size", "32x32", "--out"]),
    ] {
        let mut all = vec![args[0], model.to_str().unwrap()];
        all.extend(&args[1..]);
        all.push(out.to_str().unwrap());
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(&all)
            .env("XDG_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        let text = common::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {text}");
        assert!(text.contains("not a regular file"), "{all:?}: {text}");
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::metadata(&folder).unwrap().is_dir());
}

/// Animation times near f32's limit: a clip of 1.2e38 s is compared and partitioned (frame
/// times never overflow), and key times from -3e38 s (whose span would overflow f32) are an
/// import error naming the sampler, never a silent first-key pose.
#[cfg(feature = "cli")]
#[test]
fn animation_times_near_the_float_limit() {
    use std::process::Command;
    let dir = scratch("huge-times");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(args)
            .env("XDG_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        (o.status.code(), common::output_text(&o))
    };
    // SimpleSkin's clip: the times accessor is the first 48 bytes of buffer 3.
    let times_at = |blob: &mut Vec<u8>, k: usize, t: f32| {
        blob[k * 4..k * 4 + 4].copy_from_slice(&t.to_le_bytes());
    };
    let (mut doc, mut blobs) = external_simple_skin(&dir);
    times_at(&mut blobs[3], 11, 1.2e38);
    doc["accessors"][5]["max"] = json!([1.2e38]);
    std::fs::write(dir.join("buffer3.bin"), &blobs[3]).unwrap();
    let long = write_model(&dir, &doc);
    let long = long.to_str().unwrap();
    if common::gpu().is_some() {
        let (code, text) = run(&["compare", long, "--frames", "4"]);
        assert_eq!(code, Some(0), "{text}");
    }
    let (code, text) = run(&["partition", long, "--max-bones", "4", "--frames", "4"]);
    assert_eq!(code, Some(0), "{text}");
    times_at(&mut blobs[3], 0, -3e38);
    times_at(&mut blobs[3], 11, 3e38);
    doc["accessors"][5]["min"] = json!([-3e38]);
    doc["accessors"][5]["max"] = json!([3e38]);
    std::fs::write(dir.join("buffer3.bin"), &blobs[3]).unwrap();
    let span = write_model(&dir, &doc);
    let out = dir.join("d.json");
    let (code, text) = run(&[
        "dump",
        span.to_str().unwrap(),
        "--time",
        "2.9e38",
        "--out",
        out.to_str().unwrap(),
    ]);
    // A span that overflows f32 needs a negative start, which glTF forbids (the Khronos
    // glTF-Validator's ACCESSOR_ANIMATION_INPUT_NEGATIVE): refused before any arithmetic.
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("model.gltf: animations[0].samplers[0].input") && text.contains("before 0"),
        "{text}"
    );
}

/// Control characters from a file (a terminal escape in a URI) are shown escaped in error
/// messages, never sent to the terminal.
#[cfg(feature = "cli")]
#[test]
fn messages_escape_control_characters_from_files() {
    let dir = scratch("escapes");
    let (mut doc, _) = external_simple_skin(&dir);
    doc["buffers"][1]["uri"] = json!("evil\u{1b}[2Jname.bin");
    let path = write_model(&dir, &doc);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(["info", path.to_str().unwrap()])
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains('\u{1b}'), "raw escape in: {err:?}");
    assert!(err.contains("\\u{1b}"), "{err:?}");
}

/// A GLB with a second BIN chunk is refused (the gltf crate would read the first and drop the
/// second silently); an unknown chunk type after the BIN chunk is ignored, as the format asks.
#[test]
fn glb_chunks_beyond_the_format_are_named() {
    let dir = scratch("chunks");
    let glb = std::fs::read(common::model("RiggedSimple")).unwrap();
    let with_chunk = |kind: &[u8; 4]| {
        let mut g = glb.clone();
        g.extend_from_slice(&8u32.to_le_bytes());
        g.extend_from_slice(kind);
        g.extend_from_slice(&[0u8; 8]);
        let total = g.len() as u32;
        g[8..12].copy_from_slice(&total.to_le_bytes());
        g
    };
    let two = dir.join("two_bin.glb");
    std::fs::write(&two, with_chunk(b"BIN\0")).unwrap();
    let e = import_error(&two, ImportOptions::default());
    assert!(
        e.contains("two_bin.glb: GLB chunks") && e.contains("a second BIN chunk"),
        "{e}"
    );
    let extra = dir.join("extra.glb");
    std::fs::write(&extra, with_chunk(b"XTRA")).unwrap();
    import_ok(&extra, ImportOptions::default());
}
