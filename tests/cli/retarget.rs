//! `skinview retarget` end to end: the built-in humanoid's clips onto a renamed, re-bound,
//! larger character written by the test; the output keeps the target's clips, adds the new
//! ones (a colliding name gets a suffix), imports back with them and passes the Khronos
//! glTF-Validator (so does the throw written with its feet locked); the map it saves gives
//! the same file when given back; refusals name what is wrong.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use std::path::{Path, PathBuf};
use std::process::Command;

use skinview::io::gltf_export::{ExportOptions, write_glb};

use crate::common::retarget::{A_POSE_RAD, ARMS, humanoid, mixamo, rebind, turn_rest};
use crate::common::{output_text, validator};

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skinview"))
        .arg("retarget")
        .args(args)
        .output()
        .unwrap()
}

/// A folder of the test `tag`'s own (the tests run in parallel and write files of one name).
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-retarget-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The target: the humanoid re-bound in an A-pose, renamed the Mixamo way, 1.15 times as
/// large, with one clip of its own named "walk".
fn target(dir: &Path) -> PathBuf {
    let mut scene = mixamo(rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD)), 1.15);
    let mut own = humanoid().animations.remove(0);
    own.channels.clear();
    own.name = Some("walk".into());
    // A clip of its own: the first bone held (a channel of one key).
    own.channels.push(skinview::anim::Channel {
        node: 0,
        path: skinview::anim::Path::Rotation,
        sampler: skinview::anim::Sampler {
            interpolation: skinview::anim::Interpolation::Linear,
            times_s: vec![0.0],
            values: scene.nodes[0].rest.rotation.to_array().to_vec(),
            components: 4,
            is_rotation: true,
        },
    });
    scene.animations.push(own);
    let path = dir.join("mixamo.glb");
    write_glb(&scene, &ExportOptions::default(), &path).unwrap();
    path
}

#[test]
fn the_humanoid_onto_a_renamed_larger_character() {
    let dir = scratch("onto");
    let target = target(&dir);
    let (out, json, map) = (
        dir.join("out.glb"),
        dir.join("r.json"),
        dir.join("map.toml"),
    );
    let o = run(&[
        "builtin:humanoid".as_ref(),
        target.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
        "--save-map".as_ref(),
        map.as_os_str(),
    ]);
    let text = output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("18 bones mapped") && text.contains("height ratio 1.150"),
        "{text}"
    );
    let scene = skinview::io::load(&out).unwrap();
    let names: Vec<_> = scene
        .animations
        .iter()
        .map(|a| a.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["walk", "walk-2", "run", "throw"], "{text}");
    // Every clip of the source was carried: 13, 13 and 4 channels on 18 bones (each mapped
    // bone gets its rotation and translation).
    assert!(
        scene.animations[1..].iter().all(|a| a.channels.len() == 36),
        "{names:?}"
    );
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["map"].as_array().unwrap().len(), 18);
    assert_eq!(report["clips"].as_array().unwrap().len(), 3);
    assert!(
        report["unmapped"].as_array().unwrap().is_empty(),
        "{report}"
    );
    let feet = &report["clips"][0]["readouts"]["effectors"];
    assert_eq!(feet.as_array().unwrap().len(), 4, "{report}");
    // The throw alone with its feet locked (the legs sampled).
    let locked = dir.join("locked.glb");
    let o = run(&[
        "builtin:humanoid".as_ref(),
        target.as_os_str(),
        "--out".as_ref(),
        locked.as_os_str(),
        "--clips".as_ref(),
        "throw".as_ref(),
        "--foot-lock".as_ref(),
    ]);
    let text = output_text(&o);
    assert!(o.status.success() && text.contains("sampled"), "{text}");
    let v = validator::validate(&[out.clone(), locked]);
    for r in &v {
        assert_eq!(r.errors, 0, "{}: {:?}", r.file.display(), r.messages);
    }
    // The saved map given back makes the same file.
    let again = dir.join("again.glb");
    let o = run(&[
        "builtin:humanoid".as_ref(),
        target.as_os_str(),
        "--out".as_ref(),
        again.as_os_str(),
        "--map".as_ref(),
        map.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
}

#[test]
fn refusals_name_what_is_wrong() {
    let dir = scratch("refusals");
    let target = target(&dir);
    let cases: [(Vec<&std::ffi::OsStr>, &str); 4] = [
        (
            vec![
                "builtin:humanoid".as_ref(),
                target.as_os_str(),
                "--out".as_ref(),
                target.as_os_str(),
            ],
            "mixamo.glb",
        ),
        (
            vec![
                "builtin:humanoid".as_ref(),
                target.as_os_str(),
                "--out".as_ref(),
                "x.gltf".as_ref(),
            ],
            "FILE.glb",
        ),
        (
            vec![
                "builtin:humanoid".as_ref(),
                target.as_os_str(),
                "--out".as_ref(),
                "x.glb".as_ref(),
                "--clips".as_ref(),
                "swim".as_ref(),
            ],
            "swim",
        ),
        (
            vec![
                "builtin:arm".as_ref(),
                target.as_os_str(),
                "--out".as_ref(),
                "x.glb".as_ref(),
            ],
            "--map",
        ),
    ];
    for (args, needle) in cases {
        let o = run(&args);
        let text = output_text(&o);
        assert!(!o.status.success(), "{args:?}: {text}");
        assert!(text.contains(needle), "{args:?}: {text}");
    }
    let bad_map = dir.join("bad.toml");
    std::fs::write(&bad_map, "[bones]\n\"mixamorig:LeftWing\" = \"l_hand\"\n").unwrap();
    let o = run(&[
        "builtin:humanoid".as_ref(),
        target.as_os_str(),
        "--out".as_ref(),
        dir.join("y.glb").as_os_str(),
        "--map".as_ref(),
        bad_map.as_os_str(),
    ]);
    let text = output_text(&o);
    assert!(
        !o.status.success() && text.contains("bad.toml") && text.contains("LeftWing"),
        "{text}"
    );
}

/// CesiumMan's clip retargeted onto CesiumMan without clips: `skinview diff` pairs the one
/// clip with the original's and finds every vertex where the original puts it (within 1e-5 of
/// the diagonal, `--tolerance`).
#[test]
fn a_model_onto_itself_passes_diff() {
    let dir = scratch("self");
    let original = crate::common::model("CesiumMan");
    let mut bare = skinview::io::gltf_import::import_file(&original).unwrap();
    bare.animations.clear();
    let target = dir.join("cesium-bare.glb");
    write_glb(&bare, &ExportOptions::default(), &target).unwrap();
    let out = dir.join("cesium-again.glb");
    let o = run(&[
        original.as_os_str(),
        target.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    let diff = Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args([
            "diff".as_ref(),
            original.as_os_str(),
            out.as_os_str(),
            "--tolerance".as_ref(),
            "1e-5".as_ref(),
        ])
        .output()
        .unwrap();
    let text = output_text(&diff);
    assert!(diff.status.success() && text.contains("PASS"), "{text}");
    assert!(!text.contains("clip only in"), "the clips pair: {text}");
}
