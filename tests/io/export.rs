//! `export` of glTF input: the output starts from the input document, so everything the file
//! had is still there (checked here against the input JSON and bytes, independently of the
//! exporter's own "dropped" report), external files are embedded, and only the joint and
//! weight encodings asked for change (checked element by element against the input).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skinview::io::ImportOptions;
use skinview::io::gltf_export::{JointEncoding, WeightEncoding};
use skinview::io::gltf_repack::{RepackOptions, repack_file};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skinview-export-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// JSON equality as glTF means it: numbers equal as f32 (the document's precision), and a
/// property may be left out when its value is glTF's default.
fn same_json(a: &Value, b: &Value, path: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if x as f32 == y as f32 {
                Ok(())
            } else {
                Err(format!("{path}: {x} became {y}"))
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = format!("{path}.{k}");
                match y.get(k) {
                    Some(w) => same_json(v, w, &p)?,
                    None => {
                        // The writers leave out what restates the schema's default.
                        let default = matches!(v, Value::Bool(false)) || is_spec_default(k, v);
                        if !default {
                            return Err(format!("{p} dropped"));
                        }
                    }
                }
            }
            if let Some((k, v)) = y
                .iter()
                .find(|(k, v)| !x.contains_key(*k) && !is_spec_default(k, v))
            {
                return Err(format!("{path}.{k} added as {v}"));
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Err(format!("{path}: {} elements became {}", x.len(), y.len()));
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                same_json(v, w, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{path}: {a} became {b}")),
    }
}

/// Values the glTF 2.0 schema gives as a property's default (a writer may spell them out).
fn is_spec_default(key: &str, v: &Value) -> bool {
    let v = v.clone();
    match key {
        "alphaMode" => v == "OPAQUE",
        "alphaCutoff" => v == 0.5,
        "doubleSided" | "normalized" => v == false,
        "emissiveFactor" => numbers(&v) == Some(vec![0.0; 3]),
        "baseColorFactor" => numbers(&v) == Some(vec![1.0; 4]),
        "translation" => numbers(&v) == Some(vec![0.0; 3]),
        "rotation" => numbers(&v) == Some(vec![0.0, 0.0, 0.0, 1.0]),
        "metallicFactor" | "roughnessFactor" | "strength" => v == 1.0,
        "scale" => v == 1.0 || numbers(&v) == Some(vec![1.0; 3]),
        "texCoord" | "byteOffset" => v == 0,
        "wrapS" | "wrapT" => v == 10497,
        "mode" => v == 4,
        "interpolation" => v == "LINEAR",
        _ => false,
    }
}

/// A JSON array of numbers as f64s (`0` and `0.0` alike), None for anything else.
fn numbers(v: &Value) -> Option<Vec<f64>> {
    v.as_array()?.iter().map(Value::as_f64).collect()
}

/// The bytes of buffer view `v` of a GLB's JSON and BIN chunk.
fn view_bytes<'a>(json: &Value, bin: &'a [u8], v: usize) -> &'a [u8] {
    let view = &json["bufferViews"][v];
    assert_eq!(
        view["buffer"], 0,
        "bufferViews[{v}] is not in the BIN chunk"
    );
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    &bin[start..start + view["byteLength"].as_u64().unwrap() as usize]
}

fn repack(
    input: &Path,
    out: &Path,
    options: RepackOptions,
) -> skinview::io::gltf_repack::RepackReport {
    repack_file(input, ImportOptions::default(), &options, out)
        .unwrap_or_else(|e| panic!("{}: {e}", input.display()))
}

/// Every shared model and rig, exported as it is: every JSON property but the buffer
/// layout is the input's, every buffer view holds the input's bytes, the exporter reports
/// nothing dropped, and the file imports to the same scene (positions, weights, animation
/// keys, texture pixels) bit for bit.
#[test]
fn export_keeps_every_model_as_it_was() {
    let dir = scratch("all");
    let mut inputs = common::all_models();
    // The published embedded .gltf variants too (several data: URI buffers, merged).
    for stem in ["SimpleSkin", "SimpleMorph"] {
        let g = common::model(stem).with_extension("gltf");
        if g.exists() {
            inputs.push(g);
        }
    }
    for input in inputs {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let before = std::fs::read(&input).unwrap();
        let out = dir.join(format!("{name}.out.glb"));
        let report = repack(&input, &out, RepackOptions::default());
        assert!(report.dropped.is_empty(), "{name}: {:?}", report.dropped);
        assert!(
            report.reencoded.is_empty(),
            "{name}: {:?}",
            report.reencoded
        );
        assert_eq!(
            std::fs::read(&input).unwrap(),
            before,
            "{name}: input changed"
        );
        let written = std::fs::read(&out).unwrap();
        assert_eq!(report.bytes, written.len());
        let (oj, obin) = common::glb::split(&written);
        let ij: Value = if name.ends_with(".glb") {
            common::glb::split(&before).0
        } else {
            serde_json::from_slice(&before).unwrap()
        };
        for (k, v) in ij.as_object().unwrap() {
            if k == "buffers" || k == "bufferViews" {
                continue;
            }
            same_json(v, &oj[k], k).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // Views: same count, lengths, strides and targets; bytes compared for GLB input
        // (one buffer: the BIN chunk).
        let (iv, ov) = (
            ij["bufferViews"].as_array().cloned().unwrap_or_default(),
            oj["bufferViews"].as_array().cloned().unwrap_or_default(),
        );
        assert_eq!(iv.len(), ov.len(), "{name}: buffer view count");
        for (i, (a, b)) in iv.iter().zip(&ov).enumerate() {
            for key in ["byteLength", "byteStride", "target", "name"] {
                assert_eq!(a.get(key), b.get(key), "{name}: bufferViews[{i}].{key}");
            }
        }
        if name.ends_with(".glb") {
            let (_, ibin) = common::glb::split(&before);
            for i in 0..iv.len() {
                assert!(
                    view_bytes(&ij, &ibin, i) == view_bytes(&oj, &obin, i),
                    "{name}: bufferViews[{i}] bytes differ"
                );
            }
        }
        assert!(oj["buffers"].as_array().is_none_or(|b| b.len() == 1));
        // The scene every command sees is the same.
        let a = skinview::io::load(&input).unwrap();
        let b = skinview::io::load(&out).unwrap();
        assert_eq!(a.nodes.len(), b.nodes.len(), "{name}");
        for (ma, mb) in a.meshes.iter().zip(&b.meshes) {
            for (pa, pb) in ma.primitives.iter().zip(&mb.primitives) {
                assert_eq!(pa.positions, pb.positions, "{name}");
                assert_eq!(pa.normals, pb.normals, "{name}");
                assert_eq!(pa.uvs, pb.uvs, "{name}");
                assert_eq!(pa.skin_weights, pb.skin_weights, "{name}");
                assert_eq!(pa.morph_targets.len(), pb.morph_targets.len(), "{name}");
                for (ta, tb) in pa.morph_targets.iter().zip(&pb.morph_targets) {
                    assert_eq!(ta.positions, tb.positions, "{name}");
                    assert_eq!(ta.normals, tb.normals, "{name}");
                }
            }
        }
        for (aa, ab) in a.animations.iter().zip(&b.animations) {
            for (ca, cb) in aa.channels.iter().zip(&ab.channels) {
                assert_eq!(ca.sampler.times_s, cb.sampler.times_s, "{name}");
                assert_eq!(ca.sampler.values, cb.sampler.values, "{name}");
            }
        }
        assert_eq!(a.textures.len(), b.textures.len(), "{name}");
        for (ta, tb) in a.textures.iter().zip(&b.textures) {
            assert!(
                ta.image.pixels == tb.image.pixels,
                "{name}: texture pixels differ"
            );
        }
    }
}

/// A `.gltf` with an external buffer and image, a camera, extras, a vendor extension, a
/// light and a texture transform: all kept, both files embedded (the image byte for byte,
/// with its MIME type), the input files untouched; what the glTF writer cannot keep (an
/// extension on `asset`) is reported by path.
#[test]
fn export_keeps_cameras_extras_extensions_and_embeds_external_files() {
    let dir = scratch("extras");
    let (mut j, bin) = common::glb::split(&std::fs::read(common::model("CesiumMan")).unwrap());
    // The texture's image as its own file.
    let iv = j["images"][0]["bufferView"].as_u64().unwrap() as usize;
    let png = view_bytes(&j, &bin, iv).to_vec();
    let mime = j["images"][0]["mimeType"].clone();
    assert!(png.starts_with(b"\x89PNG") || png.starts_with(&[0xFF, 0xD8]));
    // Named without an extension: the type comes from the bytes.
    std::fs::write(dir.join("skin.img"), &png).unwrap();
    std::fs::write(dir.join("cesium.bin"), &bin).unwrap();
    j["buffers"][0]["uri"] = json!("cesium.bin");
    j["images"][0] = json!({ "uri": "skin.img", "name": "skin", "extras": { "painter": "me" } });
    j["cameras"] = json!([{ "type": "perspective", "name": "cam",
        "perspective": { "yfov": 0.8, "znear": 0.1, "zfar": 100.0, "aspectRatio": 1.5 },
        "extras": { "lens": "35mm" } }]);
    j["nodes"][0]["camera"] = json!(0);
    j["nodes"][1]["extras"] = json!({ "rig": { "side": "L", "ids": [1, 2, 3] } });
    j["nodes"][1]["extensions"] = json!({ "VENDOR_node": { "a": [1, 2], "b": "x" } });
    j["materials"][0]["extras"] = json!({ "shader": "skin" });
    j["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] =
        json!({ "KHR_texture_transform": { "scale": [2.0, 2.0], "rotation": 0.5 } });
    j["extensions"] = json!({
        "KHR_lights_punctual": { "lights": [{ "type": "point", "color": [1.0, 0.5, 0.25] }] },
        "VENDOR_root": { "x": true } });
    j["extensionsUsed"] = json!([
        "KHR_lights_punctual",
        "KHR_texture_transform",
        "VENDOR_node",
        "VENDOR_root",
        "VENDOR_asset"
    ]);
    j["asset"]["extensions"] = json!({ "VENDOR_asset": { "v": 1 } });
    j["asset"]["extras"] = json!({ "pipeline": 7 });
    j["extras"] = json!({ "project": "skinview test" });
    let input = dir.join("cesium.gltf");
    std::fs::write(&input, serde_json::to_vec_pretty(&j).unwrap()).unwrap();
    let before: Vec<Vec<u8>> = ["cesium.gltf", "cesium.bin", "skin.img"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();

    let out = dir.join("out").join("cesium.glb");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let report = repack(&input, &out, RepackOptions::default());
    assert_eq!(
        report.embedded,
        vec![
            "buffers[0].uri \"cesium.bin\"".to_string(),
            "images[0].uri \"skin.img\"".to_string()
        ]
    );
    assert_eq!(
        report.dropped,
        vec!["asset.extensions.VENDOR_asset".to_string()]
    );
    for (f, b) in ["cesium.gltf", "cesium.bin", "skin.img"]
        .iter()
        .zip(&before)
    {
        assert!(std::fs::read(dir.join(f)).unwrap() == *b, "{f} changed");
    }
    let (o, obin) = common::glb::split(&std::fs::read(&out).unwrap());
    for pointer in [
        "/cameras",
        "/nodes/0/camera",
        "/nodes/1/extras",
        "/nodes/1/extensions",
        "/materials/0/extras",
        "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions",
        "/extensions",
        "/extensionsUsed",
        "/asset/extras",
        "/extras",
        "/images/0/name",
        "/images/0/extras",
        "/samplers",
        "/textures",
    ] {
        let (a, b) = (j.pointer(pointer).unwrap(), o.pointer(pointer));
        let b = b.unwrap_or_else(|| panic!("{pointer} missing"));
        same_json(a, b, pointer).unwrap();
    }
    let image = &o["images"][0];
    assert!(image.get("uri").is_none());
    assert_eq!(image["mimeType"], mime);
    let v = image["bufferView"].as_u64().unwrap() as usize;
    assert!(
        view_bytes(&o, &obin, v) == png.as_slice(),
        "embedded image differs"
    );
    // The embedded file reads back on its own, from anywhere.
    let moved = skinview::io::load(&out).unwrap();
    assert_eq!(moved.textures.len(), 1);
}

/// `--joints u8 --weights unorm8` (and unorm16, and back to float): each JOINTS/WEIGHTS
/// accessor of another type is re-encoded; every vertex's integers sum to exactly 255 or
/// 65535 over all its sets; each weight is within one step of the input's (normalised)
/// weight; joint indices are unchanged wherever the weight is not zero; other accessors
/// keep their bytes.
#[test]
fn export_reencodes_only_the_skin_types_asked_for() {
    let dir = scratch("reencode");
    for (stem, weights, total) in [
        ("CesiumMan", WeightEncoding::Unorm8, 255.0),
        ("rig_seed5_40j_6inf_ushort", WeightEncoding::Unorm8, 255.0),
        (
            "rig_seed4_8inf_morph_ubyte",
            WeightEncoding::Unorm16,
            65535.0,
        ),
    ] {
        let input = common::model(stem);
        let before = std::fs::read(&input).unwrap();
        let out = dir.join(format!("{stem}.glb"));
        let report = repack(
            &input,
            &out,
            RepackOptions {
                joints: Some(JointEncoding::U8),
                weights: Some(weights),
                rewrite_skin: false,
                rewrite_animations: false,
                ..Default::default()
            },
        );
        assert!(report.dropped.is_empty(), "{stem}: {:?}", report.dropped);
        assert!(!report.reencoded.is_empty(), "{stem}");
        let after = std::fs::read(&out).unwrap();
        let (ij, _) = common::glb::split(&before);
        let (oj, _) = common::glb::split(&after);
        let prim = "/meshes/0/primitives/0/attributes";
        let sets = (0..)
            .take_while(|s| ij.pointer(&format!("{prim}/JOINTS_{s}")).is_some())
            .count();
        let count =
            ij["accessors"][common::glb::accessor_at(&ij, &format!("{prim}/POSITION"))]["count"]
                .as_u64()
                .unwrap() as usize;
        for s in 0..sets {
            let wa = common::glb::accessor_at(&oj, &format!("{prim}/WEIGHTS_{s}"));
            let ja = common::glb::accessor_at(&oj, &format!("{prim}/JOINTS_{s}"));
            assert_eq!(oj["accessors"][wa]["normalized"], true, "{stem}");
            assert_eq!(oj["accessors"][ja]["componentType"], 5121, "{stem}");
        }
        // Input weights normalised per vertex (as the importer does) vs output integers.
        let read = |glb: &[u8], j: &Value, name: &str, s: usize, v: usize, c: usize| {
            let a = common::glb::accessor_at(j, &format!("{prim}/{name}_{s}"));
            let raw = common::glb::read_component(glb, a, v, c);
            match (name, j["accessors"][a]["componentType"].as_u64()) {
                ("WEIGHTS", Some(5121)) => raw / 255.0,
                ("WEIGHTS", Some(5123)) => raw / 65535.0,
                _ => raw,
            }
        };
        for v in (0..count).step_by(7) {
            let input_w: Vec<f64> = (0..sets)
                .flat_map(|s| (0..4).map(move |c| (s, c)))
                .map(|(s, c)| read(&before, &ij, "WEIGHTS", s, v, c))
                .collect();
            let sum: f64 = input_w.iter().sum();
            let mut ints = 0.0;
            for (k, (s, c)) in (0..sets)
                .flat_map(|s| (0..4).map(move |c| (s, c)))
                .enumerate()
            {
                let wa = common::glb::accessor_at(&oj, &format!("{prim}/WEIGHTS_{s}"));
                let q = common::glb::read_component(&after, wa, v, c);
                ints += q;
                let expect = input_w[k] / sum;
                assert!(
                    (q / total - expect).abs() <= 1.0 / total + 1e-9,
                    "{stem} vertex {v} slot {k}: {q}/{total} vs {expect}"
                );
                if input_w[k] > 0.0 {
                    assert_eq!(
                        read(&after, &oj, "JOINTS", s, v, c),
                        read(&before, &ij, "JOINTS", s, v, c),
                        "{stem} vertex {v} slot {k}: joint index"
                    );
                }
            }
            assert_eq!(
                ints, total,
                "{stem} vertex {v}: weights must sum to {total}"
            );
        }
        assert!(
            report.max_weight_change <= 1.0 / total as f32 + 1e-6,
            "{stem}"
        );
        // Untouched accessors keep their bytes.
        let pa = common::glb::accessor_at(&ij, &format!("{prim}/POSITION"));
        for e in (0..count).step_by(11) {
            assert_eq!(
                common::glb::read_component(&before, pa, e, 1),
                common::glb::read_component(&after, pa, e, 1)
            );
        }
        // And back to float: exactly the quantised values.
        let back = dir.join(format!("{stem}.f32.glb"));
        repack(
            &out,
            &back,
            RepackOptions {
                joints: None,
                weights: Some(WeightEncoding::F32),
                rewrite_skin: false,
                rewrite_animations: false,
                ..Default::default()
            },
        );
        let b = skinview::io::load(&back).unwrap();
        let q = skinview::io::load(&out).unwrap();
        assert_eq!(
            b.meshes[0].primitives[0].skin_weights,
            q.meshes[0].primitives[0].skin_weights
        );
    }
}

/// What export cannot keep is refused before anything is written, and an existing output
/// file is left as it was: buffers named by byte offset inside EXT_meshopt_compression, and
/// joint indices that do not fit the requested type.
#[test]
fn export_refuses_what_it_cannot_keep_and_leaves_the_output_alone() {
    let dir = scratch("refuse");
    let src = std::fs::read(common::model("RiggedSimple")).unwrap();
    let meshopt = dir.join("meshopt.glb");
    std::fs::write(
        &meshopt,
        common::glb::edit_json(&src, |j| {
            j["extensionsUsed"] = json!(["EXT_meshopt_compression"]);
        }),
    )
    .unwrap();
    let out = dir.join("out.glb");
    std::fs::write(&out, b"keep me").unwrap();
    // An external image whose bytes are no known format is not embedded under the type its
    // name suggests.
    let (mut j, bin) = common::glb::split(&std::fs::read(common::model("CesiumMan")).unwrap());
    std::fs::write(dir.join("fake.png"), b"GIF89a not really a png").unwrap();
    j["images"][0] = json!({ "uri": "fake.png" });
    let fake = dir.join("fake.glb");
    std::fs::write(&fake, common::glb::pack(&j, &bin)).unwrap();
    let e = repack_file(
        &fake,
        ImportOptions::default(),
        &RepackOptions::default(),
        &out,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("images[0].uri") && e.contains("by its bytes"),
        "{e}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    let e = repack_file(
        &meshopt,
        ImportOptions::default(),
        &RepackOptions::default(),
        &out,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("meshopt.glb") && e.contains("extensionsUsed") && e.contains("EXT_meshopt"),
        "{e}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    // 300 joints, vertex 0 bound to the last: does not fit u8 indices; the primitive's
    // field and the vertex are named, and the output stays as it was.
    let grown = common::glb::edit_json(&src, |j| {
        let first_new = j["nodes"].as_array().unwrap().len();
        for _ in 0..298 {
            j["nodes"].as_array_mut().unwrap().push(json!({}));
        }
        let mut joints = j["skins"][0]["joints"].as_array().unwrap().clone();
        joints.extend((first_new..first_new + 298).map(|n| json!(n)));
        // Under the first joint: a skin's joints have a common root (glTF 2.0 §3.7.3).
        let parent = joints[0].as_u64().unwrap() as usize;
        let node = j["nodes"][parent].as_object_mut().unwrap();
        let children = node.entry("children").or_insert_with(|| json!([]));
        let children = children.as_array_mut().unwrap();
        children.extend((first_new..first_new + 298).map(|n| json!(n)));
        // Vertex 0's joint becomes 299 below: the accessor's bounds would be wrong.
        let joints_0 = j["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"]
            .as_u64()
            .unwrap() as usize;
        let accessor = j["accessors"][joints_0].as_object_mut().unwrap();
        accessor.remove("min");
        accessor.remove("max");
        j["skins"][0]["joints"] = Value::Array(joints);
        j["skins"][0]
            .as_object_mut()
            .unwrap()
            .remove("inverseBindMatrices");
    });
    let (gj, _) = common::glb::split(&grown);
    let ja = common::glb::accessor_at(&gj, "/meshes/0/primitives/0/attributes/JOINTS_0");
    let wa = common::glb::accessor_at(&gj, "/meshes/0/primitives/0/attributes/WEIGHTS_0");
    assert!(common::glb::read_component(&grown, wa, 0, 0) > 0.0);
    let many = dir.join("many.glb");
    std::fs::write(
        &many,
        common::glb::patch(&grown, ja, 0, 0, &299u16.to_le_bytes()),
    )
    .unwrap();
    let u8_joints = RepackOptions {
        joints: Some(JointEncoding::U8),
        weights: None,
        rewrite_skin: false,
        rewrite_animations: false,
        ..Default::default()
    };
    let e = repack_file(&many, ImportOptions::default(), &u8_joints, &out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("many.glb")
            && e.contains("meshes[0].primitives[0].attributes.JOINTS_0")
            && e.contains("vertex 0")
            && e.contains("299"),
        "{e}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    // Kept as u16, the same file exports.
    repack(&many, &out, RepackOptions::default());
    assert_ne!(std::fs::read(&out).unwrap(), b"keep me");
}

/// The command prints what it kept, re-encoded and dropped, in words.
#[cfg(feature = "cli")]
#[test]
fn export_command_says_what_it_did() {
    let dir = scratch("cli");
    let out = dir.join("c.glb");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args([
            "export",
            common::model("CesiumMan").to_str().unwrap(),
            "--weights",
            "unorm8",
            "--out",
            out.to_str().unwrap(),
        ])
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    for expected in [
        "kept: nodes 22, meshes 1, skins 1, animations 1, materials 1, textures 1, images 1",
        "re-encoded: accessors[",
        "WEIGHTS_0): float -> unorm8",
        "largest weight change",
        "dropped: nothing",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

/// Every kind of file skinview writes passes the Khronos glTF-Validator with no error: `export`
/// of every shared model and rig (the repacker), with quantised joints and weights too, of the
/// native rigs and of every FBX test file (the glTF writer), and `weights --out`.
#[test]
fn every_written_file_passes_the_khronos_validator() {
    let dir = scratch("validator");
    let skinview = |args: &[&std::ffi::OsStr]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", common::output_text(&o));
    };
    let mut sources: Vec<PathBuf> = common::all_models();
    sources.extend(["builtin:arm", "builtin:humanoid"].map(PathBuf::from));
    let fbx_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fbx");
    let mut fbx: Vec<PathBuf> = std::fs::read_dir(&fbx_dir)
        .unwrap_or_else(|e| panic!("{}: {e}: run scripts/setup.sh --tests", fbx_dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fbx"))
        .collect();
    fbx.sort();
    assert!(fbx.len() >= 5, "FBX test files: {fbx:?}");
    sources.extend(fbx);
    let mut written = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let out = dir.join(format!("{i}.glb"));
        skinview(&[
            "export".as_ref(),
            source.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        written.push(out);
    }
    for (name, extra) in [
        ("u8", &["--joints", "u16", "--weights", "unorm8"][..]),
        ("u16", &["--weights", "unorm16"]),
    ] {
        let out = dir.join(format!("cesium-{name}.glb"));
        let model = common::model("CesiumMan");
        let mut args: Vec<&std::ffi::OsStr> = vec!["export".as_ref(), model.as_os_str()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        args.extend(["--out".as_ref(), out.as_os_str()]);
        skinview(&args);
        written.push(out);
    }
    for (name, flag) in [("RiggedSimple", "--regenerate"), ("CesiumMan", "--smooth")] {
        let out = dir.join(format!("weights-{name}.glb"));
        let model = common::model(name);
        let args = [
            "weights".as_ref(),
            model.as_os_str(),
            flag.as_ref(),
            "--out".as_ref(),
        ];
        skinview(&[&args[..], &[out.as_os_str()]].concat());
        written.push(out);
    }
    let reports = common::validator::validate(&written);
    let mut failed = Vec::new();
    for (r, source) in reports.iter().zip(
        sources.iter().map(|s| s.display().to_string()).chain(
            [
                "export --weights unorm8",
                "export --weights unorm16",
                "weights --regenerate",
                "weights --smooth",
            ]
            .map(String::from),
        ),
    ) {
        println!("{source}: {} errors, {} warnings", r.errors, r.warnings);
        if r.errors > 0 {
            failed.push(format!(
                "{source} -> {}: {:#?}",
                r.file.display(),
                r.messages
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "invalid glTF written:\n{}",
        failed.join("\n")
    );
}

/// The two repairs glTF requires of the writer, each checked by the validator against a file
/// that lacks it: an animation without channels (the validator rejects `channels: []`) is
/// written with one channel that holds a node still, its name and index kept; normals twice
/// as long as a unit and a zero one are written at unit length (the validator rejects
/// others).
#[test]
fn the_writer_repairs_what_gltf_forbids() {
    use skinview::anim::Animation;
    let dir = scratch("repairs");
    // Control: the validator rejects a clip without channels.
    let bad = dir.join("empty-clip.gltf");
    let text = r#"{"asset":{"version":"2.0"},"nodes":[{}],"scenes":[{"nodes":[0]}],
        "animations":[{"channels":[],"samplers":[]}]}"#;
    std::fs::write(&bad, text).unwrap();
    let control = common::validator::validate(std::slice::from_ref(&bad));
    assert!(control[0].errors > 0, "{control:?}");
    assert!(
        control[0]
            .messages
            .iter()
            .any(|m| m.contains("/animations/0")),
        "{control:?}"
    );

    let mut scene = skinview::io::load(&common::model("RiggedSimple")).unwrap();
    let clips = scene.animations.len();
    scene.animations.push(Animation {
        name: Some("still".into()),
        channels: Vec::new(),
    });
    let normals = scene.meshes[0].primitives[0].normals.as_mut().unwrap();
    for n in normals.iter_mut() {
        *n *= 2.0;
    }
    normals[0] = glam::Vec3::ZERO;
    let out = dir.join("repaired.glb");
    skinview::io::gltf_export::write_glb(&scene, &Default::default(), &out).unwrap();
    let report = common::validator::validate(std::slice::from_ref(&out));
    assert_eq!(report[0].errors, 0, "{report:?}");
    let back = skinview::io::load(&out).unwrap();
    assert_eq!(back.animations.len(), clips + 1);
    assert_eq!(back.animations[clips].name.as_deref(), Some("still"));
    let mut still = skinview::frame::FrameState::new(&back);
    still.evaluate(&back, Some(clips), 0.0).unwrap();
    let mut rest = skinview::frame::FrameState::new(&back);
    rest.evaluate(&back, None, 0.0).unwrap();
    assert_eq!(
        still.model_from_node, rest.model_from_node,
        "the still clip moves nothing"
    );
    let written = back.meshes[0].primitives[0].normals.as_ref().unwrap();
    assert!(
        written.iter().all(|n| (n.length() - 1.0).abs() < 1e-6),
        "unit normals"
    );
}

/// `compress` (EXT_meshopt_compression) is lossless on every shared model and rig: read back,
/// every vertex attribute, skin weight and morph delta is the input's bit for bit once the
/// reported vertex renumbering is undone (a vertex's influences as (joint, weight) pairs, in
/// whatever slots: one set of four may go largest weight first), every triangle is there (in
/// the cache's order, its corners perhaps rotated), the clips are unchanged; and the file is
/// smaller. Some model's influences do change slots (CesiumMan's).
#[test]
fn compression_gives_back_every_bit() {
    let dir = scratch("compress");
    let mut compressed_any = 0;
    let mut moved_slots = false;
    for input in common::all_models() {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let out = dir.join(format!("{name}.meshopt.glb"));
        let options = RepackOptions {
            compress: true,
            ..Default::default()
        };
        let report = repack(&input, &out, options);
        let (a, b) = (
            skinview::io::load(&input).unwrap(),
            skinview::io::load(&out).unwrap(),
        );
        let stats = report.compressed.unwrap();
        compressed_any += stats.views;
        assert!(
            stats.bytes_after < stats.bytes_before || stats.views == 0,
            "{name}"
        );
        for (mi, (ma, mb)) in a.meshes.iter().zip(&b.meshes).enumerate() {
            for (pi, (p, q)) in ma.primitives.iter().zip(&mb.primitives).enumerate() {
                let n = p.positions.len();
                let order = report
                    .vertex_orders
                    .iter()
                    .find(|o| (o.0, o.1) == (mi, pi))
                    .map_or_else(|| (0..n as u32).collect(), |o| o.2.clone());
                let at = |v: usize| order[v] as usize;
                let f = format!("{name} meshes[{mi}].primitives[{pi}]");
                for v in 0..n {
                    assert_eq!(p.positions[v], q.positions[at(v)], "{f} vertex {v}");
                    if let (Some(x), Some(y)) = (&p.normals, &q.normals) {
                        assert_eq!(x[v], y[at(v)], "{f} normal {v}");
                    }
                    if let (Some(x), Some(y)) = (&p.uvs, &q.uvs) {
                        assert_eq!(x[v], y[at(v)], "{f} uv {v}");
                    }
                    if let (Some(x), Some(y)) = (&p.skin_weights, &q.skin_weights) {
                        let (s, t) = (v * x.width, at(v) * y.width);
                        let pairs = |sw: &skinview::scene::SkinWeights, at: usize| {
                            let slots = sw.joints[at..at + sw.width].iter();
                            let weights = sw.weights[at..at + sw.width].iter();
                            let mut p: Vec<(u32, u32)> =
                                slots.zip(weights).map(|(&j, w)| (j, w.to_bits())).collect();
                            p.sort_unstable();
                            p
                        };
                        assert_eq!(pairs(x, s), pairs(y, t), "{f} influences {v}");
                        moved_slots |= x.joints[s..s + x.width] != y.joints[t..t + y.width];
                    }
                    for (ta, tb) in p.morph_targets.iter().zip(&q.morph_targets) {
                        if let (Some(x), Some(y)) = (&ta.positions, &tb.positions) {
                            assert_eq!(x[v], y[at(v)], "{f} morph delta {v}");
                        }
                    }
                }
                let triangles = |list: &[u32], map: &dyn Fn(u32) -> u32| {
                    let mut t: Vec<[u32; 3]> = list
                        .chunks_exact(3)
                        .map(|t| {
                            let t = [map(t[0]), map(t[1]), map(t[2])];
                            let k = (0..3).min_by_key(|&k| t[k]).unwrap();
                            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
                        })
                        .collect();
                    t.sort_unstable();
                    t
                };
                assert_eq!(
                    triangles(&p.indices, &|i| order[i as usize]),
                    triangles(&q.indices, &|i| i),
                    "{f} triangles"
                );
            }
        }
        for (x, y) in a.animations.iter().zip(&b.animations) {
            for (c, d) in x.channels.iter().zip(&y.channels) {
                assert_eq!(c.sampler.times_s, d.sampler.times_s, "{name}");
                assert_eq!(c.sampler.values, d.sampler.values, "{name}");
            }
        }
    }
    assert!(compressed_any > 0, "no view was compressed");
    assert!(moved_slots, "no influence changed slots");
}

/// `input` repacked to `out` with its mesh quantised (`bits`: position and texture coordinate
/// bits), compressed or not: the report, the position grid's step, and both files loaded.
fn quantised(
    input: &Path,
    out: &Path,
    (position_bits, uv_bits): (u32, u32),
    compress: bool,
) -> (
    skinview::io::gltf_repack::RepackReport,
    f32,
    skinview::scene::Scene,
    skinview::scene::Scene,
) {
    let options = RepackOptions {
        quantize_mesh: Some(skinview::io::gltf_quantize::MeshQuantization {
            position_bits,
            uv_bits,
        }),
        compress,
        ..Default::default()
    };
    let report = repack(input, out, options);
    let step = report.position_step.unwrap();
    let scenes = (
        skinview::io::load(input).unwrap(),
        skinview::io::load(out).unwrap(),
    );
    (report, step, scenes.0, scenes.1)
}

/// Quantised and compressed (positions on the grid, normals through the octahedral filter,
/// texture coordinates over their range): every normal read back is within 2° of the input's
/// (8-bit octahedral encoding: about 1°), every position within half a grid step of the
/// input's along each axis once the grid is undone, every texture coordinate (read through
/// the KHR_texture_transform the material gained) within half a 12-bit step of its range,
/// and the normals' view carries the filter.
#[test]
fn quantised_normals_and_positions_stay_close() {
    let dir = scratch("quantised");
    let input = common::model("CesiumMan");
    let out = dir.join("q.glb");
    let (report, step, a, b) = quantised(&input, &out, (14, 12), true);
    let (p, q) = (&a.meshes[0].primitives[0], &b.meshes[0].primitives[0]);
    let order = &report
        .vertex_orders
        .iter()
        .find(|o| (o.0, o.1) == (0, 0))
        .unwrap()
        .2;
    // The grid's corner: the smallest input coordinate per axis.
    let corner = p
        .positions
        .iter()
        .fold(glam::Vec3::splat(f32::MAX), |m, v| m.min(*v));
    let (na, nb) = (p.normals.as_ref().unwrap(), q.normals.as_ref().unwrap());
    let (ua, ub) = (p.uvs.as_ref().unwrap(), q.uvs.as_ref().unwrap());
    let lo = ua.iter().fold(glam::Vec2::MAX, |m, v| m.min(*v));
    let hi = ua.iter().fold(glam::Vec2::MIN, |m, v| m.max(*v));
    let uv_step = (hi - lo) / 4095.0;
    let mut worst_deg = 0f32;
    for v in 0..p.positions.len() {
        let w = order[v] as usize;
        let back = corner + q.positions[w] * step;
        let off = (back - p.positions[v]).abs().max_element();
        assert!(
            off <= 0.5 * step * 1.001,
            "vertex {v}: {off} off, step {step}"
        );
        let uv_off = (ua[v] - ub[w]).abs();
        assert!(
            uv_off.cmple(uv_step * 0.51 + 1e-6).all(),
            "vertex {v}: texture coordinate {uv_off} off, step {uv_step}"
        );
        let angle = na[v]
            .normalize()
            .angle_between(nb[w].normalize())
            .to_degrees();
        worst_deg = worst_deg.max(angle);
    }
    assert!(worst_deg <= 2.0, "a normal turned by {worst_deg}°");
    let doc = common::glb::json_of(&std::fs::read(&out).unwrap());
    let normal = doc["meshes"][0]["primitives"][0]["attributes"]["NORMAL"]
        .as_u64()
        .unwrap();
    let view = doc["accessors"][normal as usize]["bufferView"]
        .as_u64()
        .unwrap();
    assert_eq!(
        doc["bufferViews"][view as usize]["extensions"]["EXT_meshopt_compression"]["filter"],
        "OCTAHEDRAL"
    );
}

/// Rotation keys rounded as the quaternion filter gives them back (`optimize --compress`
/// rounds them so): over random seeded unit quaternions at every bit count the filter takes,
/// each is left as 16-bit codes, turned by no more than the filter's bound (its three
/// smallest components on a grid of 1/√2 over 2^(bits−1) − 1 steps, the largest rebuilt from
/// them, then 16-bit rounding; the turn is about twice the 4D distance), and rounding it again
/// changes nothing, so the writer's filter gives it back bit for bit.
#[test]
fn quaternion_filter_rounding_is_its_own_fixed_point() {
    use skinview::anim::snorm::snorm16_codes;
    use skinview::io::meshopt_encode::quaternion_filter_round;
    use skinview::optimize::quaternion_angle;
    let mut rng = common::rng::XorShift64(0x9e37_79b9_7f4a_7c15);
    for bits in 4..=16 {
        let steps = f64::from((1u32 << (bits - 1)) - 1);
        let xyz = 3f64.sqrt() * 0.5 * std::f64::consts::FRAC_1_SQRT_2 / steps;
        // |Δw| ≤ √3 |Δxyz| (w is the largest component); 16-bit rounding adds 1/32767.
        let bound = (2.1 * ((1.0 + 3f64.sqrt()) * xyz + 1.0 / 32767.0)) as f32;
        let mut unsettled = 0;
        for _ in 0..2000 {
            let q = glam::Quat::from_xyzw(
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
            )
            .normalize();
            let mut r = q.to_array();
            quaternion_filter_round(bits, &mut r);
            assert!(snorm16_codes(&r).is_some(), "{bits} bits: {r:?}");
            let turn = quaternion_angle(&q.to_array(), &r);
            assert!(
                turn <= bound,
                "{bits} bits: {q:?} turned by {turn} (bound {bound})"
            );
            let mut again = r;
            quaternion_filter_round(bits, &mut again);
            unsettled += usize::from(again != r);
        }
        assert_eq!(unsettled, 0, "{bits} bits: keys not settled");
    }
}

/// Translation and scale keys rounded as the exponent filter gives them back (`optimize
/// --compress`): over random seeded vectors spanning 12 orders of magnitude, at every
/// mantissa width, each component moves by at most 3 × 2^(1 − bits) of the key's largest
/// component (2^(1 − bits) for the first rounding, twice that again should the key settle one
/// exponent higher), and rounding again changes nothing.
#[test]
fn exponent_filter_rounding_is_its_own_fixed_point() {
    use skinview::io::meshopt_encode::exponent_filter_round;
    let mut rng = common::rng::XorShift64(0x2545_f491_4f6c_dd1d);
    for bits in 2..=24 {
        let mut unsettled = 0;
        for _ in 0..2000 {
            let scale = 10f32.powf(rng.next_f32() * 12.0 - 6.0);
            let v = [0; 3].map(|_| (rng.next_f32() - 0.5) * scale);
            let mut r = v;
            exponent_filter_round(bits, &mut r);
            let largest = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let bound = 3.0 * f64::from(largest) * 2f64.powi(1 - bits) * (1.0 + 1e-6);
            for (x, y) in v.iter().zip(&r) {
                let moved = f64::from(*x) - f64::from(*y);
                assert!(moved.abs() <= bound, "{bits} bits: {v:?} to {r:?}");
            }
            let mut again = r;
            exponent_filter_round(bits, &mut again);
            unsettled += usize::from(again.map(f32::to_bits) != r.map(f32::to_bits));
        }
        assert_eq!(unsettled, 0, "{bits} bits: keys not settled");
    }
}

/// A clip whose rotation keys went through the quaternion filter's rounding, and its
/// translations and scales through the exponent filter's, is written compressed with those
/// views through the filters and reads back bit for bit; keys rounded to plain 16-bit codes,
/// translations and scales as they were, read back bit for bit too (through a filter only
/// where it gives every key back), and so do rotations half filtered, half plain codes, the
/// filtered half in a view of its own that keeps the filter.
#[test]
fn filtered_keys_read_back_bit_for_bit() {
    use skinview::io::gltf_repack::repack_file_edited;
    use skinview::io::meshopt_encode::quaternion_filter_round;
    let dir = scratch("quaternion");
    let input = common::model("CesiumMan");
    let snorm = |v: &mut [f32]| {
        v.iter_mut()
            .for_each(|x| *x = skinview::anim::snorm::snorm16_round(*x));
    };
    let filter = |v: &mut [f32]| quaternion_filter_round(12, v);
    let exponent = |v: &mut [f32]| skinview::io::meshopt_encode::exponent_filter_round(16, v);
    let as_they_were = |_: &mut [f32]| {};
    type Round<'a> = &'a dyn Fn(&mut [f32]);
    // Every other rotation channel through the filter, the rest as plain codes: the view is
    // split so the filtered ones keep the filter.
    let calls = std::cell::Cell::new(0);
    let mixed = |v: &mut [f32]| {
        calls.set(calls.get() + 1);
        match calls.get() % 2 {
            0 => filter(v),
            _ => snorm(v),
        }
    };
    let roundings: [(Round, Round, Option<bool>); 3] = [
        (&filter, &exponent, Some(true)),
        (&snorm, &as_they_were, None),
        (&mixed, &exponent, Some(true)),
    ];
    for (i, (round, round_vectors, filtered)) in roundings.into_iter().enumerate() {
        let out = dir.join(format!("filtered-{i}.glb"));
        let options = RepackOptions {
            rewrite_animations: true,
            compress: true,
            ..Default::default()
        };
        let (_, edited) =
            repack_file_edited(&input, ImportOptions::default(), &options, &out, |s| {
                use skinview::anim::Path;
                for c in s.animations.iter_mut().flat_map(|a| &mut a.channels) {
                    match c.path {
                        Path::Rotation => round(&mut c.sampler.values),
                        Path::Translation | Path::Scale => round_vectors(&mut c.sampler.values),
                        Path::Weights => {}
                    }
                }
                Ok(s.animations.clone())
            })
            .unwrap();
        let doc = common::glb::json_of(&std::fs::read(&out).unwrap());
        let filters = common::glb::meshopt_filters(&doc);
        if let Some(f) = filtered {
            assert_eq!(filters.contains(&"QUATERNION"), f, "{filters:?}");
            assert_eq!(filters.contains(&"EXPONENTIAL"), f, "{filters:?}");
        }
        let back = skinview::io::load(&out).unwrap();
        for (x, y) in edited.iter().zip(&back.animations) {
            for (c, d) in x.channels.iter().zip(&y.channels) {
                assert_eq!(c.sampler.times_s, d.sampler.times_s);
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&c.sampler.values),
                    bits(&d.sampler.values),
                    "{filtered:?}"
                );
            }
        }
    }
}

/// The writers leave out what restates the schema's defaults (CesiumMan's 57 samplers say
/// `"interpolation": "LINEAR"`, its material `"alphaMode": "OPAQUE"`, its texture sampler
/// `"wrapS": 10497`) and write whole floats as integers; samplers of other interpolations
/// keep theirs (rig_seed2's STEP and CUBICSPLINE). That the files read back the same is
/// `export_keeps_every_model_as_it_was`'s check.
#[test]
fn writers_leave_out_schema_defaults() {
    let dir = scratch("defaults");
    let text = |json: &Value| serde_json::to_string(json).unwrap();
    let interpolations = |json: &Value| -> Vec<String> {
        let samplers = json["animations"].as_array().unwrap().iter();
        let samplers = samplers.flat_map(|a| a["samplers"].as_array().unwrap());
        samplers
            .map(|s| s["interpolation"].as_str().unwrap_or("LINEAR").to_string())
            .collect()
    };
    for (model, defaults) in [
        (
            common::model("CesiumMan"),
            &[
                r#""interpolation":"LINEAR""#,
                r#""alphaMode":"OPAQUE""#,
                r#""wrapS":10497"#,
            ][..],
        ),
        (common::shared_dir().join("rigs/rig_seed2.glb"), &[][..]),
    ] {
        let out = dir.join(model.file_name().unwrap());
        repack(&model, &out, RepackOptions::default());
        let (input, output) = (
            common::glb::json_of(&std::fs::read(&model).unwrap()),
            common::glb::json_of(&std::fs::read(&out).unwrap()),
        );
        for d in defaults {
            assert!(
                text(&input).contains(d),
                "{}: the input lacks {d}",
                model.display()
            );
            assert!(
                !text(&output).contains(d),
                "{}: {d} written",
                model.display()
            );
        }
        assert_eq!(
            interpolations(&input),
            interpolations(&output),
            "{}",
            model.display()
        );
        let mut whole = Vec::new();
        every_number(&output, &mut |n| {
            let whole_float = |x: f64| x.fract() == 0.0 && !(x == 0.0 && x.is_sign_negative());
            if n.is_f64() && n.as_f64().is_some_and(whole_float) {
                whole.push(n.to_string());
            }
        });
        assert!(
            whole.is_empty(),
            "{}: whole floats {whole:?}",
            model.display()
        );
    }
}

/// Call `f` on every number in `v`.
fn every_number(v: &Value, f: &mut impl FnMut(&serde_json::Number)) {
    match v {
        Value::Number(n) => f(n),
        Value::Array(a) => a.iter().for_each(|x| every_number(x, f)),
        Value::Object(o) => o.values().for_each(|x| every_number(x, f)),
        _ => {}
    }
}

/// Morph deltas of a quantised skinned mesh (rig_seed4: three targets with position and
/// normal deltas): each position delta read back (whole grid steps in shorts, times the
/// step) within half a step of the input's along each axis, each normal delta (normalised
/// bytes) within half of 1/127; the accessors are SHORT and normalised BYTE.
#[test]
fn quantised_morph_deltas_stay_within_half_a_step() {
    let dir = scratch("deltas");
    let input = common::shared_dir().join("rigs/rig_seed4_8inf_morph_ubyte.glb");
    let out = dir.join("deltas.glb");
    let (_, step, a, b) = quantised(&input, &out, (12, 16), false);
    let (p, q) = (&a.meshes[0].primitives[0], &b.meshes[0].primitives[0]);
    assert_eq!(p.morph_targets.len(), 3);
    for (t, (x, y)) in p.morph_targets.iter().zip(&q.morph_targets).enumerate() {
        let (dx, dy) = (x.positions.as_ref().unwrap(), y.positions.as_ref().unwrap());
        for (v, (d, e)) in dx.iter().zip(dy).enumerate() {
            let off = (*e * step - *d).abs().max_element();
            assert!(
                off <= 0.5 * step * 1.001,
                "target {t} vertex {v}: {off}, step {step}"
            );
        }
        let (nx, ny) = (x.normals.as_ref().unwrap(), y.normals.as_ref().unwrap());
        for (v, (d, e)) in nx.iter().zip(ny).enumerate() {
            let off = (*e - *d).abs().max_element();
            assert!(
                off <= 0.5 / 127.0 + 1e-6,
                "target {t} vertex {v}: normal delta {off} off"
            );
        }
    }
    let doc = common::glb::json_of(&std::fs::read(&out).unwrap());
    for target in doc["meshes"][0]["primitives"][0]["targets"]
        .as_array()
        .unwrap()
    {
        let accessor = |name: &str| &doc["accessors"][target[name].as_u64().unwrap() as usize];
        assert_eq!(accessor("POSITION")["componentType"], 5122);
        assert_eq!(accessor("NORMAL")["componentType"], 5120);
        assert_eq!(accessor("NORMAL")["normalized"], true);
    }
}

/// Morph weight keys rounded to 8-bit codes are written as normalised unsigned bytes, those
/// rounded to 16-bit codes as unsigned shorts, others as floats, by both writers (the repacker
/// of a glTF document, and the scene exporter FBX and native inputs take): MorphStressTest's
/// three clips, one rounding each, read back bit for bit.
#[test]
fn morph_weight_codes_read_back_bit_for_bit() {
    use skinview::anim::snorm::{unorm8_round, unorm16_round};
    use skinview::io::gltf_repack::repack_file_edited;
    let dir = scratch("weight-codes");
    let input = common::model("MorphStressTest");
    let round = |anims: &mut [skinview::anim::Animation]| {
        assert_eq!(anims.len(), 3);
        for (a, f) in anims
            .iter_mut()
            .zip([unorm8_round, unorm16_round, |v: f32| v])
        {
            for c in &mut a.channels {
                c.sampler.values.iter_mut().for_each(|v| *v = f(*v));
            }
        }
    };
    let expected = [5121, 5123, 5126];
    let out = dir.join("repacked.glb");
    let options = RepackOptions {
        rewrite_animations: true,
        ..Default::default()
    };
    let (_, edited) = repack_file_edited(&input, ImportOptions::default(), &options, &out, |s| {
        round(&mut s.animations);
        Ok(s.animations.clone())
    })
    .unwrap();
    let mut scene = skinview::io::load(&input).unwrap();
    round(&mut scene.animations);
    let exported = dir.join("exported.glb");
    let glb = skinview::io::gltf_export::export_glb(&scene, &Default::default()).unwrap();
    std::fs::write(&exported, glb).unwrap();
    for (file, clips) in [(&out, &edited), (&exported, &scene.animations)] {
        let doc = common::glb::json_of(&std::fs::read(file).unwrap());
        for (a, want) in doc["animations"].as_array().unwrap().iter().zip(expected) {
            for s in a["samplers"].as_array().unwrap() {
                let output = &doc["accessors"][s["output"].as_u64().unwrap() as usize];
                assert_eq!(
                    output["componentType"],
                    want,
                    "{}: {output}",
                    file.display()
                );
                assert_eq!(
                    output["normalized"].as_bool().unwrap_or(false),
                    want != 5126
                );
            }
        }
        let back = skinview::io::load(file).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (x, y) in clips.iter().zip(&back.animations) {
            for (c, d) in x.channels.iter().zip(&y.channels) {
                assert_eq!(
                    bits(&c.sampler.values),
                    bits(&d.sampler.values),
                    "{}",
                    file.display()
                );
            }
        }
    }
    for v in common::validator::validate(&[out, exported]) {
        assert_eq!(v.errors, 0, "{}: {:?}", v.file.display(), v.messages);
    }
}

/// Rigid meshes' positions go on a grid of their own, its dequantisation folded into the
/// transform of the node drawing it (MorphStressTest's and AnimatedMorphSphere's meshes are
/// drawn without a skin): every vertex, through its node's model matrix at rest, lands within
/// half a grid step (times the node's largest axis scale, along each axis) of the input's,
/// the POSITION accessors are unsigned shorts, and the file passes the validator. A node
/// with a child or a light (planted into AnimatedMorphCube) cannot take the grid: its mesh
/// keeps float positions, and the report names the node and why.
#[test]
fn rigid_meshes_take_their_grid_into_their_nodes() {
    use skinview::frame::FrameState;
    let dir = scratch("rigid-grid");
    for stem in ["MorphStressTest", "AnimatedMorphSphere"] {
        let out = dir.join(format!("{stem}.glb"));
        let (report, step, a, b) = quantised(&common::model(stem), &out, (12, 16), false);
        assert!(
            report
                .reencoded
                .iter()
                .any(|r| r.contains("folded into its transform")),
            "{stem}: {:?}",
            report.reencoded
        );
        let (mut fa, mut fb) = (FrameState::new(&a), FrameState::new(&b));
        fa.evaluate(&a, None, 0.0).unwrap();
        fb.evaluate(&b, None, 0.0).unwrap();
        assert_eq!(a.draws.len(), b.draws.len(), "{stem}");
        for (d, (da, db)) in a.draws.iter().zip(&b.draws).enumerate() {
            let (ma, mb) = (fa.model_from_node[da.node], fb.model_from_node[db.node]);
            let scale = [ma.x_axis, ma.y_axis, ma.z_axis]
                .iter()
                .map(|v| v.truncate().length())
                .fold(0.0, f32::max);
            let (p, q) = (&a.primitive(da).positions, &b.primitive(db).positions);
            assert_eq!(p.len(), q.len(), "{stem} draw {d}");
            for (v, (x, y)) in p.iter().zip(q).enumerate() {
                let (x, y) = (ma.transform_point3(*x), mb.transform_point3(*y));
                let off = (x - y).abs().max_element();
                let bound = 0.5 * step * scale * 3f32.sqrt() * 1.001 + 1e-6 * x.length();
                assert!(off <= bound, "{stem} draw {d} vertex {v}: {off} > {bound}");
            }
        }
        let doc = common::glb::json_of(&std::fs::read(&out).unwrap());
        for mesh in doc["meshes"].as_array().unwrap() {
            for prim in mesh["primitives"].as_array().unwrap() {
                let a = prim["attributes"]["POSITION"].as_u64().unwrap() as usize;
                assert_eq!(doc["accessors"][a]["componentType"], 5123, "{stem}");
            }
        }
        let v = common::validator::validate(std::slice::from_ref(&out));
        assert_eq!(v[0].errors, 0, "{stem}: {:?}", v[0].messages);
    }
    // A child under the mesh's node, or a light on it: the grid cannot go there.
    let cube = std::fs::read(common::model("AnimatedMorphCube")).unwrap();
    let with_child = |j: &mut Value| {
        let nodes = j["nodes"].as_array_mut().unwrap();
        let child = nodes.len();
        nodes.push(json!({"name": "planted child"}));
        let host = nodes.iter().position(|n| n.get("mesh").is_some()).unwrap();
        nodes[host]["children"] = json!([child]);
    };
    let with_light = |j: &mut Value| {
        j["extensionsUsed"] = json!(["KHR_lights_punctual"]);
        j["extensions"] = json!({"KHR_lights_punctual": {"lights": [{"type": "point"}]}});
        let nodes = j["nodes"].as_array_mut().unwrap();
        let host = nodes.iter().position(|n| n.get("mesh").is_some()).unwrap();
        nodes[host]["extensions"] = json!({"KHR_lights_punctual": {"light": 0}});
    };
    type Plant<'a> = &'a dyn Fn(&mut Value);
    let planted: [(&str, Plant, &str); 2] = [
        ("child", &with_child, "has children"),
        ("light", &with_light, "has extensions"),
    ];
    for (name, plant, why) in planted {
        let input = dir.join(format!("cube-with-{name}.glb"));
        std::fs::write(&input, common::glb::edit_json(&cube, plant)).unwrap();
        let options = RepackOptions {
            quantize_mesh: Some(skinview::io::gltf_quantize::MeshQuantization {
                position_bits: 12,
                uv_bits: 16,
            }),
            ..Default::default()
        };
        let report = repack(&input, &dir.join(format!("cube-{name}.glb")), options);
        assert!(
            (report.not_done.iter()).any(|n| n.contains("meshes[0] is rigid") && n.contains(why)),
            "{name}: {:?}",
            report.not_done
        );
        assert_eq!(report.position_step, None, "{name}");
    }
}
