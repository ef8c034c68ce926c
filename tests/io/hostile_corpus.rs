//! The hostile corpus: malformed, lying, huge and hostile inputs generated here
//! (nothing large is committed), each run through every command under a 2 GB address-space
//! limit (`ulimit -v`) and a time limit. Every run must end with exit code 0 or 2 — never a
//! panic (101), an abort or a kill, never a timeout —, a failure must name the file, and the
//! input files must be byte-identical afterwards (outputs go to a folder of their own).
//! `SKINVIEW_CORPUS_DIR=DIR cargo test --test io hostile_corpus` keeps the corpus in `DIR/in`
//! (and the outputs in `DIR/out`) to look at or to feed another tool (see `tests/hostile/`).
#![cfg(all(unix, feature = "cli"))]
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Address space each run may use (KiB for `ulimit -v`): 2 GB, far above any legitimate run
/// here and far below what an unbounded read or allocation asks for.
const MEMORY_KIB: u64 = 2_000_000;
/// Wall time each run may take (the slowest legitimate run here is a GPU comparison of a
/// small model: about a second on lavapipe).
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// An edit of a glTF document.
type Edit = Box<dyn Fn(&mut Value)>;

fn simple_skin() -> Value {
    let src = common::shared_dir().join("models/SimpleSkin/SimpleSkin.gltf");
    serde_json::from_slice(&std::fs::read(src).unwrap()).unwrap()
}

/// The corpus: (file name, bytes), plus a few made on disk by `make_special`.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut c = broken_files();
    for (name, edit) in hostile_edits().into_iter().chain(spec_rule_edits()) {
        let mut d = simple_skin();
        edit(&mut d);
        c.push((name.into(), serde_json::to_vec(&d).unwrap()));
    }
    c.push(("deep-chain.gltf".into(), deep_chain()));
    c.extend(fbx_files());
    c
}

/// FBX files: Blender's cut short, and the tests' ASCII arm with hostile values, a 20,000-deep
/// chain of nodes, a vertex with 100 influences and a clip to 1e8 s.
fn fbx_files() -> Vec<(String, Vec<u8>)> {
    use common::fbx::AsciiArm;
    let blender = std::fs::read(common::fbx::converted("RiggedSimple")).unwrap();
    let arm = AsciiArm::default().text();
    let edit = |from: &str, to: &str| {
        assert!(arm.contains(from), "the arm has {from:?}");
        arm.replacen(from, to, 1).into_bytes()
    };
    let mut deep = String::new();
    let mut links = String::new();
    for i in 0..20_000u32 {
        deep.push_str(&format!(
            "\tModel: {}, \"Model::n{i}\", \"Null\" {{\n\t}}\n",
            1000 + i
        ));
        let parent = if i == 0 { 301 } else { 999 + i };
        links.push_str(&format!("\tC: \"OO\",{},{parent}\n", 1000 + i));
    }
    let deep = arm
        .replacen("Objects:  {\n", &format!("Objects:  {{\n{deep}"), 1)
        .replacen(
            "Connections:  {\n",
            &format!("Connections:  {{\n{links}"),
            1,
        );
    // 100 clusters on `Upper`, each weighing vertex 0 by 0.01.
    let mut crowd = String::new();
    let mut crowd_links = String::new();
    for k in 0..100u32 {
        crowd.push_str(&format!(
            "\tDeformer: {}, \"SubDeformer::c{k}\", \"Cluster\" {{\n\t\tIndexes: *1 {{\n\t\t\ta: 0\n\t\t}}\n\
             \t\tWeights: *1 {{\n\t\t\ta: 0.01\n\t\t}}\n\t}}\n",
            3000 + k
        ));
        crowd_links.push_str(&format!(
            "\tC: \"OO\",{},400\n\tC: \"OO\",300,{}\n",
            3000 + k,
            3000 + k
        ));
    }
    let crowd = arm
        .replacen("Objects:  {\n", &format!("Objects:  {{\n{crowd}"), 1)
        .replacen(
            "Connections:  {\n",
            &format!("Connections:  {{\n{crowd_links}"),
            1,
        );
    let long = AsciiArm {
        clip_end_s: 1e8,
        ..Default::default()
    };
    vec![
        (
            "truncated.fbx".into(),
            blender[..blender.len() / 2].to_vec(),
        ),
        ("empty.fbx".into(), Vec::new()),
        (
            "not-fbx.fbx".into(),
            b"; FBX 7.4.0 project file\nObjects: {".to_vec(),
        ),
        (
            "nan-position.fbx".into(),
            edit("a: 0,-1,-1,0,1", "a: nan,-1,-1,0,1"),
        ),
        (
            "bad-polygon-index.fbx".into(),
            edit("a: 0,1,5,-5", "a: 0,1,5000,-5"),
        ),
        ("nan-key.fbx".into(), edit("a: 0,90", "a: 0,nan")),
        ("deep-chain.fbx".into(), deep.into_bytes()),
        ("100-influences.fbx".into(), crowd.into_bytes()),
        ("long-clip.fbx".into(), long.text().into_bytes()),
    ]
}

/// Files broken as files: cut short, lying lengths, empty, noise, not glTF at all.
fn broken_files() -> Vec<(String, Vec<u8>)> {
    let mut c: Vec<(String, Vec<u8>)> = Vec::new();
    let glb = std::fs::read(common::model("CesiumMan")).unwrap();
    c.push(("truncated.glb".into(), glb[..glb.len() / 2].to_vec()));
    let mut lying = glb.clone();
    lying[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    c.push(("lying-length.glb".into(), lying));
    let mut chunk = glb.clone();
    chunk[12..16].copy_from_slice(&u32::MAX.to_le_bytes()); // JSON chunk length
    c.push(("lying-chunk.glb".into(), chunk));
    c.push(("empty.glb".into(), Vec::new()));
    c.push(("header-only.glb".into(), glb[..12].to_vec()));
    c.push((
        "noise.gltf".into(),
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect(),
    ));
    c.push(("not-gltf.gltf".into(), b"{}".to_vec()));
    c.push((
        "garbage.rig.json".into(),
        b"{\"format\": 7, \"bones\": [".to_vec(),
    ));
    c
}

/// Edits of SimpleSkin that point outside the model, ask for huge amounts, loop, overflow or
/// index out of range.
fn hostile_edits() -> Vec<(&'static str, Edit)> {
    vec![
        (
            "dev-zero.gltf",
            Box::new(|d| d["buffers"][0]["uri"] = json!("/dev/zero")),
        ),
        (
            "traversal.gltf",
            Box::new(|d| d["buffers"][0]["uri"] = json!("../../../../../../etc/passwd")),
        ),
        (
            "huge-bytelength.gltf",
            Box::new(|d| d["buffers"][0]["byteLength"] = json!(1u64 << 62)),
        ),
        (
            "huge-count.gltf",
            Box::new(|d| d["accessors"][1]["count"] = json!(1u64 << 62)),
        ),
        (
            "cycle.gltf",
            Box::new(|d| d["nodes"][2]["children"] = json!([1])),
        ),
        (
            "self-parent.gltf",
            Box::new(|d| d["nodes"][0]["children"] = json!([0])),
        ),
        (
            "huge-ibm.gltf",
            Box::new(|d| d["nodes"][1]["scale"] = json!([3e38, 3e38, 3e38])),
        ),
        (
            "inf-translation.gltf",
            Box::new(|d| d["nodes"][0]["translation"] = json!([1e39, 0, 0])),
        ),
        (
            "joint-out-of-range.gltf",
            Box::new(|d| d["skins"][0]["joints"] = json!([0, 99999])),
        ),
        (
            "view-past-buffer.gltf",
            Box::new(|d| d["bufferViews"][1]["byteOffset"] = json!(1u64 << 40)),
        ),
        (
            "image-no-source.gltf",
            Box::new(|d| d["images"] = json!([{}])),
        ),
        (
            "stride-17.gltf",
            Box::new(|d| d["bufferViews"][2]["byteStride"] = json!(17)),
        ),
        (
            "no-bytelength.gltf",
            Box::new(|d| {
                d["buffers"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("byteLength");
            }),
        ),
        (
            "anim-node-out-of-range.gltf",
            Box::new(|d| d["animations"][0]["channels"][0]["target"]["node"] = json!(1_000_000)),
        ),
        (
            "lying-max.gltf",
            Box::new(|d| d["accessors"][5]["max"] = json!([1.2e38])),
        ),
    ]
}

/// The specification's document rules and schema, each broken once on SimpleSkin.
fn spec_rule_edits() -> Vec<(&'static str, Edit)> {
    vec![
        (
            "matrix-and-trs.gltf",
            Box::new(|d| {
                d["nodes"][2]["matrix"] = json!([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])
            }),
        ),
        (
            "requires-draco.gltf",
            Box::new(|d| {
                d["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
                d["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
            }),
        ),
        (
            "meshopt-used.gltf",
            Box::new(|d| d["extensionsUsed"] = json!(["EXT_meshopt_compression"])),
        ),
        (
            "version-3.gltf",
            Box::new(|d| d["asset"]["version"] = json!("3.0")),
        ),
        (
            "skin-without-mesh.gltf",
            Box::new(|d| d["nodes"][1]["skin"] = json!(0)),
        ),
        (
            "joint-twice.gltf",
            Box::new(|d| d["skins"][0]["joints"] = json!([1, 1])),
        ),
        (
            "channel-twice.gltf",
            Box::new(|d| {
                let ch = d["animations"][0]["channels"][0].clone();
                d["animations"][0]["channels"]
                    .as_array_mut()
                    .unwrap()
                    .push(ch);
            }),
        ),
        (
            "child-as-scene-root.gltf",
            Box::new(|d| d["scenes"][0]["nodes"] = json!([0, 1, 2])),
        ),
        (
            "string-count.gltf",
            Box::new(|d| d["accessors"][1]["count"] = json!("ten")),
        ),
        (
            "negative-count.gltf",
            Box::new(|d| d["accessors"][1]["count"] = json!(-5)),
        ),
        (
            "bad-component-type.gltf",
            Box::new(|d| d["accessors"][2]["componentType"] = json!(5130)),
        ),
        (
            "joints-vec3.gltf",
            Box::new(|d| d["accessors"][2]["type"] = json!("VEC3")),
        ),
        (
            "bad-base64.gltf",
            Box::new(|d| {
                d["buffers"][1]["uri"] = json!("data:application/octet-stream;base64,@@@@")
            }),
        ),
        (
            "missing-file.gltf",
            Box::new(|d| d["buffers"][1]["uri"] = json!("nowhere.bin")),
        ),
        (
            "sparse-out-of-range.gltf",
            Box::new(|d| {
                d["accessors"][1]["sparse"] = json!({ "count": 1,
                    "indices": { "bufferView": 0, "componentType": 5123 },
                    "values": { "bufferView": 1 } })
            }),
        ),
        (
            "morph-count-mismatch.gltf",
            Box::new(|d| {
                let mut second = d["meshes"][0]["primitives"][0].clone();
                second["targets"] = json!([{ "POSITION": 1 }]);
                d["meshes"][0]["primitives"]
                    .as_array_mut()
                    .unwrap()
                    .push(second);
            }),
        ),
        (
            "huge-sampler.gltf",
            Box::new(|d| d["accessors"][5]["count"] = json!(1u64 << 40)),
        ),
    ]
}

/// SimpleSkin with a deep chain: 20,000 nodes, each the child of the previous.
fn deep_chain() -> Vec<u8> {
    let mut d = simple_skin();
    let base = d["nodes"].as_array().unwrap().len();
    let mut nodes = d["nodes"].as_array().unwrap().clone();
    for i in 0..20_000 {
        let mut n = json!({ "translation": [0.0, 0.001, 0.0] });
        if i + 1 < 20_000 {
            n["children"] = json!([base + i + 1]);
        }
        nodes.push(n);
    }
    d["nodes"] = Value::Array(nodes);
    d["scenes"][0]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!(base));
    serde_json::to_vec(&d).unwrap()
}

/// Every command, writing into `out`.
fn commands(model: &str, out: &Path) -> Vec<Vec<String>> {
    let o = |name: &str| out.join(name).to_str().unwrap().to_string();
    let m = model.to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    vec![
        [s(&["info"]), vec![m.clone()]].concat(),
        [
            s(&["dump"]),
            vec![m.clone()],
            s(&["--time", "0.5", "--out"]),
            vec![o("d.json")],
        ]
        .concat(),
        [
            s(&["render"]),
            vec![m.clone()],
            s(&["--size", "64x64", "--out"]),
            vec![o("r.png")],
        ]
        .concat(),
        [s(&["compare"]), vec![m.clone()], s(&["--frames", "2"])].concat(),
        [
            s(&["export"]),
            vec![m.clone()],
            s(&["--out"]),
            vec![o("e.glb")],
        ]
        .concat(),
        [s(&["bench"]), vec![m.clone()], s(&["--frames", "2"])].concat(),
        [s(&["partition"]), vec![m], s(&["--max-bones", "8"])].concat(),
    ]
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_command_on_every_hostile_input_ends_cleanly() {
    if common::gpu().is_none() {
        return; // render and compare need the adapter (in CI its absence fails elsewhere)
    }
    // SKINVIEW_CORPUS_DIR keeps the corpus (and the outputs) for a look or another tool.
    let keep = std::env::var_os("SKINVIEW_CORPUS_DIR").map(PathBuf::from);
    let root = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("skinview-corpus-{}", std::process::id()))
    });
    let (inputs, out) = (root.join("in"), root.join("out"));
    // Only the two folders this test makes are replaced (never the rest of a kept folder).
    let _ = std::fs::remove_dir_all(&inputs);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(inputs.join("sub")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    // The SimpleSkin cases keep their data: URIs; cases are one folder down so `..` leaves it.
    let mut names = Vec::new();
    for (name, bytes) in corpus() {
        std::fs::write(inputs.join("sub").join(&name), bytes).unwrap();
        names.push(format!("sub/{name}"));
    }
    // Not files: a folder named like a model, a FIFO.
    std::fs::create_dir_all(inputs.join("sub/folder.glb")).unwrap();
    names.push("sub/folder.glb".into());
    let fifo = inputs.join("sub/fifo.glb");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        names.push("sub/fifo.glb".into());
    }
    let before = snapshot(&inputs.join("sub"));
    let mut failures = Vec::new();
    let (mut ok, mut refused) = (0, 0);
    let mut succeeded = Vec::new();
    for name in &names {
        let model = inputs.join(name);
        for args in commands(model.to_str().unwrap(), &out) {
            let line = format!("ulimit -v {MEMORY_KIB}; exec \"$0\" \"$@\"");
            let started = Instant::now();
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(&line)
                .arg(env!("CARGO_BIN_EXE_skinview"))
                .args(&args)
                .env("XDG_RUNTIME_DIR", &out)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break Some(s);
                }
                if started.elapsed() > TIME_LIMIT {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            let o = child.wait_with_output().unwrap();
            let text = common::output_text(&o);
            let label = format!("{} {name}", args[0]);
            match status.and_then(|s| s.code()) {
                None => failures.push(format!("{label}: killed or timed out\n{text}")),
                Some(0) => {
                    ok += 1;
                    succeeded.push(label);
                }
                Some(2) => {
                    refused += 1;
                    let file = Path::new(name).file_name().unwrap().to_str().unwrap();
                    // `FILE: FIELD: what is wrong`.
                    let names_field = text.lines().any(|l| {
                        l.split_once(&format!("{file}: "))
                            .and_then(|(_, rest)| rest.split_once(": "))
                            .is_some_and(|(field, _)| !field.is_empty())
                    });
                    if !names_field {
                        failures.push(format!(
                            "{label}: the message does not name the file and the field:\n{text}"
                        ));
                    }
                }
                Some(c) => failures.push(format!("{label}: exit {c}\n{text}")),
            }
        }
    }
    let after = snapshot(&inputs.join("sub"));
    assert!(before == after, "an input file changed");
    println!(
        "{} inputs x 7 commands: {ok} succeeded, {refused} refused with a message",
        names.len()
    );
    println!("succeeded: {}", succeeded.join(", "));
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&root);
    }
}
