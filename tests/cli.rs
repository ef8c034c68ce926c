//! The `skinview` binary end to end: help, info, dump (CPU vs GPU), compare exit codes,
//! render, and clear errors on bad input.

mod common;

use std::process::Command;

use skinview::io::dump::{diff, Dump};

fn skinview(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skinview"));
    cmd.args(args);
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join("skinview-cli-xdg");
        let _ = std::fs::create_dir_all(&dir);
        cmd.env("XDG_RUNTIME_DIR", dir);
    }
    cmd.output().expect("run skinview")
}

fn text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("skinview-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn help_lists_every_command() {
    let o = skinview(&["--help"]);
    assert!(o.status.success());
    let t = text(&o);
    for c in ["info", "render", "compare", "dump", "built-in"] {
        assert!(t.contains(c), "--help does not mention {c}:\n{t}");
    }
    for c in ["render", "compare", "dump"] {
        let o = skinview(&[c, "--help"]);
        assert!(o.status.success(), "{c} --help failed");
    }
}

#[test]
fn info_reports_skins_animations_and_repairs() {
    let o = skinview(&["info"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("2 joints") && t.contains("bend") && t.contains("LINEAR"), "{t}");
    let fox = common::model("Fox");
    let o = skinview(&["info", fox.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("24 joints") && t.contains("Survey") && t.contains("1728 vertices"), "{t}");
    // SimpleSkin's rotation keys are not unit length: the repair is reported.
    let o = skinview(&["info", common::model("SimpleSkin").to_str().unwrap()]);
    let t = text(&o);
    assert!(t.contains("repaired") && t.contains("normalised"), "{t}");
}

#[test]
fn dump_cpu_and_gpu_agree_and_follow_the_format() {
    if common::gpu().is_none() {
        return;
    }
    let model = common::model("rig_seed4_8inf_morph_ubyte");
    let (c, g) = (tmp("cpu.json"), tmp("gpu.json"));
    for (path, out) in [("cpu", &c), ("gpu", &g)] {
        let o = skinview(&["dump", model.to_str().unwrap(), "--anim", "1", "--time", "0", "--time", "0.7", "--path", path, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let (dc, dg) = (Dump::read(&c).unwrap(), Dump::read(&g).unwrap());
    assert_eq!(dc.times, vec![0.0, 0.7f32 as f64]);
    assert_eq!(dc.anim, Some(1));
    assert_eq!(dc.meshes.len(), 1);
    assert_eq!(dc.meshes[0].positions_by_time[0].len(), dc.meshes[0].vertex_count * 3);
    let d = diff(&dc, &dg).unwrap();
    assert!(d.max_position < 1e-5 * dc.diagonal(), "CPU/GPU dumps differ by {}", d.max_position);
    // Normals are unit length.
    for n in dc.meshes[0].normals_by_time.as_ref().unwrap()[1].chunks_exact(3) {
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-5);
    }
}

#[test]
fn compare_passes_and_reports_reduction_cost() {
    if common::gpu().is_none() {
        return;
    }
    let o = skinview(&["compare", "--frames", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("PASS"));
    let model = common::model("rig_seed5_40j_6inf_ushort");
    let json = tmp("cmp.json");
    let o = skinview(&["compare", model.to_str().unwrap(), "--frames", "3", "--max-influences", "4", "--json", json.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("reducing to 4 influences costs") && t.contains("vertices lost weight"), "{t}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["max_influences"], 4);
    assert!(v["anims"][0]["reduction_cost"][0]["max_error"].as_f64().unwrap() > 0.0);
}

#[test]
fn render_writes_a_png_of_the_requested_size() {
    if common::gpu().is_none() {
        return;
    }
    let out = tmp("arm.png");
    let o = skinview(&["render", "--size", "200x120", "--time", "1.5", "--path", "cpu", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let img = skinview::io::image::Rgba8::read_png(&out).unwrap();
    assert_eq!((img.width, img.height), (200, 120));
}

#[test]
fn bad_input_gives_a_clear_error_and_exit_code_2() {
    let bogus = tmp("not_a_model.glb");
    std::fs::write(&bogus, b"definitely not glTF").unwrap();
    let o = skinview(&["info", bogus.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("not_a_model.glb") && t.contains("not a valid glTF"), "{t}");
    let o = skinview(&["info", "/nonexistent/model.glb"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("/nonexistent/model.glb"));
    let o = skinview(&["dump", "--anim", "7", "--time", "0", "--out", tmp("x.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--anim 7"), "{}", text(&o));
    let o = skinview(&["render", "--size", "banana", "--out", tmp("x.png").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!text(&o).contains("panicked"));
}

/// `assets/woodland_arm.glb` is generated by our own code: a fresh export must equal it
/// byte for byte (regenerate with `cargo run -- export --out assets/woodland_arm.glb`).
#[test]
fn assets_are_regenerable() {
    let out = tmp("arm.glb");
    let o = skinview(&["export", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let fresh = std::fs::read(&out).unwrap();
    let committed = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/woodland_arm.glb")).unwrap();
    assert!(fresh == committed, "assets/woodland_arm.glb is stale: run `cargo run -- export --out assets/woodland_arm.glb`");
    // And it round-trips: the exported file skins like the built-in scene.
    let a = skinview::builtin::woodland_arm().unwrap();
    let b = skinview::io::load(&out).unwrap();
    let times = [0.0, 0.77, 2.0];
    let da = skinview::harness::dump(&a, Some(0), &times, skinview::harness::SkinPath::Cpu, None, None).unwrap();
    let db = skinview::harness::dump(&b, Some(0), &times, skinview::harness::SkinPath::Cpu, None, None).unwrap();
    let d = diff(&da, &db).unwrap();
    assert!(d.max_position < 1e-6, "round trip moved vertices by {}", d.max_position);
}
