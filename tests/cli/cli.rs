//! The `skinview` binary end to end: help, info, dump (CPU vs GPU), compare exit codes,
//! render, and clear errors on bad input.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::process::Command;

use skinview::io::dump::{Dump, diff};

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
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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
    // The subcommands listed under "Commands:" (first word of each indented line).
    let listed: Vec<String> = t
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    for c in [
        "info",
        "render",
        "compare",
        "dump",
        "export",
        "bench",
        "partition",
    ] {
        assert!(
            listed.iter().any(|x| x == c),
            "--help does not list {c}: {listed:?}"
        );
        let o = skinview(&[c, "--help"]);
        let h = text(&o);
        assert!(
            o.status.success() && h.contains("[MODEL]") && h.contains("builtin:humanoid"),
            "{c} --help:\n{h}"
        );
    }
    assert!(t.contains("built-in"), "{t}");
}

#[test]
fn info_reports_skins_animations_and_repairs() {
    let o = skinview(&["info"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("2 joints") && t.contains("bend") && t.contains("LINEAR"),
        "{t}"
    );
    let fox = common::model("Fox");
    let o = skinview(&["info", fox.to_str().unwrap()]);
    let t = text(&o);
    assert!(
        o.status.success()
            && t.contains("24 joints")
            && t.contains("Survey")
            && t.contains("1728 vertices"),
        "{t}"
    );
    // SimpleSkin's rotation keys are not unit length: the repair is reported.
    let o = skinview(&["info", common::model("SimpleSkin").to_str().unwrap()]);
    let t = text(&o);
    assert!(t.contains("repaired") && t.contains("normalised"), "{t}");
}

/// A scene of many skeletons (RecursiveSkeletons: 840 joints in 84 skins) prints a cut joint
/// list whose shown and counted joints add up to the skins' joints; `--all` lists every one,
/// as the JSON does.
#[test]
fn info_cuts_long_lists_and_all_lists_every_joint() {
    let model = common::model("RecursiveSkeletons");
    let json = tmp("recursive-info.json");
    let o = skinview(&["info", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let cut = text(&o);
    let o = skinview(&[
        "info",
        model.to_str().unwrap(),
        "--all",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let all = text(&o);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let skins = report["skins"].as_array().unwrap();
    let joints: usize = skins
        .iter()
        .map(|s| s["joints"].as_array().unwrap().len())
        .sum();
    let joint_lines = |t: &str| t.lines().filter(|l| l.starts_with("    joint ")).count();
    assert_eq!(joint_lines(&all), joints, "{all}");
    // The cut list: its joint lines, plus the joints counted on the "... more" lines.
    let counted: usize = cut
        .lines()
        .filter(|l| l.trim_start().starts_with("... "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            // "... 3 more joints" or "... 74 more skins, 740 joints (...)".
            let i = words.iter().position(|w| w.starts_with("joint")).unwrap();
            let n = if words[i - 1] == "more" { i - 2 } else { i - 1 };
            words[n].parse::<usize>().unwrap()
        })
        .sum();
    let shown = joint_lines(&cut);
    assert!(shown > 0 && shown < joints, "{shown} of {joints}:\n{cut}");
    assert_eq!(shown + counted, joints, "{cut}");
    assert!(
        cut.lines().count() <= 2 * skinview::info::LIST_LINES + 40 && cut.contains("--all"),
        "{cut}"
    );
    let help = text(&skinview(&["info", "--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("after {} lines", skinview::info::LIST_LINES)),
        "info --help states the cut: {help}"
    );
}

#[test]
fn dump_cpu_and_gpu_agree_and_follow_the_format() {
    if common::gpu().is_none() {
        return;
    }
    let model = common::model("rig_seed4_8inf_morph_ubyte");
    let (c, g) = (tmp("cpu.json"), tmp("gpu.json"));
    for (path, out) in [("cpu", &c), ("gpu", &g)] {
        let o = skinview(&[
            "dump",
            model.to_str().unwrap(),
            "--anim",
            "1",
            "--time",
            "0",
            "--time",
            "0.7",
            "--path",
            path,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let (dc, dg) = (Dump::read(&c).unwrap(), Dump::read(&g).unwrap());
    assert_eq!(dc.times, vec![0.0, 0.7f32 as f64]);
    assert_eq!(dc.anim, Some(1));
    assert_eq!(dc.meshes.len(), 1);
    assert_eq!(
        dc.meshes[0].positions_by_time[0].len(),
        dc.meshes[0].vertex_count * 3
    );
    let d = diff(&dc, &dg).unwrap();
    assert!(
        d.max_position < 1e-5 * dc.diagonal(),
        "CPU/GPU dumps differ by {}",
        d.max_position
    );
    // Normals are unit length.
    for n in dc.meshes[0].normals_by_time.as_ref().unwrap()[1].chunks_exact(3) {
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-5);
    }
}

/// `compare --tolerance` sets the verdict: under the worst error the JSON reports, exit 1;
/// at it, exit 0. A tolerance outside [0, 1] is a usage error naming the flag, before the GPU.
#[test]
fn compare_tolerance_sets_the_verdict() {
    for bad in ["-1", "NaN", "2"] {
        let o = skinview(&["compare", "--tolerance", bad]);
        let t = text(&o);
        assert!(
            o.status.code() == Some(2) && t.contains("--tolerance") && !t.contains("panicked"),
            "{bad}: {t}"
        );
    }
    if common::gpu().is_none() {
        return;
    }
    let json = tmp("cmp-tolerance.json");
    let run = |tolerance: f64| {
        let o = skinview(&[
            "compare",
            "--frames",
            "4",
            "--tolerance",
            &tolerance.to_string(),
            "--json",
            json.to_str().unwrap(),
        ]);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (o, v)
    };
    fn max_errors(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Object(m) => {
                out.extend(m.get("max_error").and_then(|e| e.as_f64()));
                m.values().for_each(|x| max_errors(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| max_errors(x, out)),
            _ => {}
        }
    }
    let (o, v) = run(1e-3);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(v["tolerance_rel"], 1e-3);
    let mut errors = Vec::new();
    max_errors(&v["anims"], &mut errors);
    let worst_rel =
        errors.iter().fold(0.0, |a: f64, &b| a.max(b)) / v["diagonal"].as_f64().unwrap();
    for (tolerance, pass) in [
        (worst_rel * 1.01, true),
        (worst_rel * 0.5, worst_rel == 0.0),
    ] {
        let (o, v) = run(tolerance);
        assert_eq!(o.status.success(), pass, "{tolerance:e}: {}", text(&o));
        assert_eq!(v["passed"], pass);
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
    let o = skinview(&[
        "compare",
        model.to_str().unwrap(),
        "--frames",
        "3",
        "--max-influences",
        "4",
        "--json",
        json.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("reducing to 4 influences costs") && t.contains("vertices lost weight"),
        "{t}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["max_influences"], 4);
    // One summary line first: the worst position error over every animation, draw and frame
    // (the JSON's largest), where and when.
    let worst = v["anims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["draws"].as_array().unwrap())
        .map(|d| d["max_error"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let line = t
        .lines()
        .find(|l| l.starts_with("worst over every draw and frame: "))
        .unwrap_or_else(|| panic!("no summary line: {t}"));
    assert!(
        line.contains(&format!("GPU-CPU {worst:.3e}")),
        "{line} vs {worst:e}"
    );
    let summary_at = t.find("worst over every draw").unwrap();
    assert!(
        t.find("GPU-CPU max").is_none_or(|table| summary_at < table),
        "{t}"
    );
    // Both capture paths by default, each reported, and the two against each other.
    assert_eq!(v["captures"], serde_json::json!(["compute", "draw"]));
    let anim = &v["anims"][0];
    assert_eq!(anim["captures"].as_array().unwrap().len(), 2);
    assert!(anim["draw_vs_compute"][0]["max_error"].as_f64().unwrap() >= 0.0);
    assert!(t.contains("draw vs capture shader"), "{t}");
    // One path alone: no cross comparison (`compute`: the old spelling of `shader`, kept as a
    // hidden alias; JSON keeps its names).
    for (capture, name) in [
        ("draw", "draw"),
        ("shader", "compute"),
        ("compute", "compute"),
    ] {
        let o = skinview(&[
            "compare",
            "--frames",
            "2",
            "--capture",
            capture,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(
            o.status.success() && text(&o).contains("PASS"),
            "{}",
            text(&o)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["captures"], serde_json::json!([name]));
        assert!(v["anims"][0]["draw_vs_compute"].is_null());
    }
    assert!(
        v["anims"][0]["reduction_cost"][0]["max_error"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn render_writes_a_png_of_the_requested_size() {
    if common::gpu().is_none() {
        return;
    }
    let out = tmp("arm.png");
    let o = skinview(&[
        "render",
        "--size",
        "200x120",
        "--time",
        "1.5",
        "--path",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let img = skinview::io::png::read(&out).unwrap();
    assert_eq!((img.width, img.height), (200, 120));
}

#[test]
fn bad_input_gives_a_clear_error_and_exit_code_2() {
    let bogus = tmp("not_a_model.glb");
    std::fs::write(&bogus, b"definitely not glTF").unwrap();
    let o = skinview(&["info", bogus.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("not_a_model.glb") && t.contains("not a valid glTF"),
        "{t}"
    );
    let o = skinview(&["info", "/nonexistent/model.glb"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("/nonexistent/model.glb"));
    let o = skinview(&[
        "dump",
        "--anim",
        "7",
        "--time",
        "0",
        "--out",
        tmp("x.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--anim 7"), "{}", text(&o));
    let o = skinview(&[
        "render",
        "--size",
        "banana",
        "--out",
        tmp("x.png").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!text(&o).contains("panicked"));
    // Argument rules: K >= 1, --demo only for the humanoid, export only .glb / .rig.json.
    let o = skinview(&["compare", "--max-influences", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // A negative count or share is judged as a value (the range is said), not taken for a
    // flag; numbers are judged before any file is read.
    for (args, says) in [
        (&["view", "--crowd", "-3"][..], "-3 is not in 1..=65536"),
        (&["check", "--jobs", "0", "."][..], "0 is not in 1..=256"),
        (
            &["bench", "--crowd", "4", "--threads", "-1"][..],
            "-1 is not in 1..=256",
        ),
        (
            &[
                "diff",
                "--tolerance",
                "-1",
                "missing-a.glb",
                "missing-b.glb",
            ][..],
            "tolerance -1",
        ),
    ] {
        let o = skinview(args);
        let t = text(&o);
        assert!(
            o.status.code() == Some(2) && t.contains(says),
            "{args:?}: {t}"
        );
    }
    let o = skinview(&[
        "render",
        "builtin:arm",
        "--demo",
        "--out",
        tmp("x.png").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--demo"), "{}", text(&o));
    let o = skinview(&[
        "render",
        "--demo",
        "--time",
        "inf",
        "--out",
        tmp("x.png").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = skinview(&["export", "--out", tmp("x.gltf").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains(".glb"), "{}", text(&o));
    // Times must be finite, with or without an animation.
    for anim in ["0", "none"] {
        let o = skinview(&[
            "dump",
            "--anim",
            anim,
            "--time",
            "nan",
            "--out",
            tmp("x.json").to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("--time"), "{}", text(&o));
    }
    let o = skinview(&["info", "builtin:dragon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("builtin:humanoid"), "{}", text(&o));
}

/// `SKINVIEW_SKIN_KERNEL` picks the CPU skinning kernel where this CPU runs it (the bench
/// report names the kernel used); a name it does not know, or a kernel this CPU lacks, is
/// said on stderr and the fastest kernel is used.
#[test]
fn skin_kernel_follows_the_environment() {
    use skinview::skin::simd::Kernel;
    let bench = |kernel: &str| {
        let json = tmp(&format!("bench-{kernel}.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skinview"));
        cmd.args(["bench", "--frames", "3", "--json", json.to_str().unwrap()])
            .env("SKINVIEW_SKIN_KERNEL", kernel);
        if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
            cmd.env("XDG_RUNTIME_DIR", std::env::temp_dir());
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (v["cpu_kernel"].as_str().unwrap().to_string(), text(&o))
    };
    for k in Kernel::ALL {
        let (used, out) = bench(k.name());
        if k.is_available() {
            assert_eq!(used, k.name(), "{out}");
            assert!(!out.contains("warning"), "{out}");
            assert!(
                out.contains(&format!("skinning kernel {}", k.name())),
                "{out}"
            );
        } else {
            assert_eq!(used, Kernel::fastest().name(), "{out}");
            assert!(out.contains("cannot run"), "{out}");
        }
    }
    let (used, out) = bench("avx9000");
    assert_eq!(used, Kernel::fastest().name(), "{out}");
    assert!(
        out.contains("warning: SKINVIEW_SKIN_KERNEL=\"avx9000\" is not one of"),
        "{out}"
    );
}

/// `bench` times every stage of the built-in humanoid and writes the documented JSON.
#[test]
fn bench_reports_every_stage_as_json() {
    let json = tmp("bench.json");
    let o = skinview(&["bench", "--frames", "20", "--json", json.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for stage in [
        "sample motion",
        "layer",
        "ik",
        "bone links",
        "palette",
        "skin",
        "renormalise normals",
        "frame",
        "animation stage as a whole",
    ] {
        assert!(t.contains(stage), "bench output lacks {stage}:\n{t}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["model"], "humanoid");
    assert!(v["joints"].as_u64().unwrap() >= 18 && v["vertices"].as_u64().unwrap() > 1000);
    let stages = v["stages_us"].as_object().unwrap();
    let mut sum = 0.0;
    for k in [
        "sample", "layer", "ik", "links", "palette", "skin", "normals",
    ] {
        let x = stages[k]
            .as_f64()
            .unwrap_or_else(|| panic!("stages_us.{k} missing"));
        assert!(x >= 0.0 && x.is_finite(), "{k}: {x}");
        sum += x;
    }
    // The humanoid demo really runs IK and links (a zero would mean a skipped stage).
    assert!(stages["ik"].as_f64().unwrap() > 0.0 && stages["links"].as_f64().unwrap() > 0.0);
    // The median frame is near the sum of the stage medians (same frames, different medians).
    let frame = v["frame_us"].as_f64().unwrap();
    assert!(
        frame > 0.0 && frame < 3.0 * sum && frame > sum / 3.0,
        "frame {frame} vs stage sum {sum}"
    );
    // The stage timed as a whole is the frame without skinning: below the whole frame, above
    // a third of its own stages' medians.
    let stage = v["stage_us"].as_f64().unwrap();
    let animation: f64 = ["sample", "layer", "ik", "links", "palette"]
        .iter()
        .map(|k| stages[*k].as_f64().unwrap())
        .sum();
    assert!(
        stage > animation / 3.0 && stage < frame,
        "stage {stage} vs its stages {animation} and the frame {frame}"
    );
    // Any native rig with command-line layers, a fade, IK and links.
    let rig = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/humanoid.rig.json");
    let o = skinview(&[
        "bench",
        rig.to_str().unwrap(),
        "--layer",
        "walk:!spine",
        "--layer",
        "run:!spine",
        "--layer",
        "throw:spine",
        "--fade",
        "0:1:0.1:0.2",
        "--ik",
        "r_hand:3:-0.3,1.3,0.3",
        "--links",
        "--frames",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(
        o.status.success()
            && t.contains("3 motion layers")
            && t.contains("1 IK effector")
            && t.contains("of which 16 bone links"),
        "{t}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["stages_us"]["ik"].as_f64().unwrap() > 0.0);
    // IK on a glTF model (Fox's front foot); bone links there are refused (rule 8).
    let fox = common::model("Fox");
    let o = skinview(&[
        "bench",
        fox.to_str().unwrap(),
        "--ik",
        "b_LeftFoot02_018:3:0.1,0.05,0.3",
        "--frames",
        "2",
    ]);
    assert!(o.status.success(), "IK on a glTF model: {}", text(&o));
    assert!(text(&o).contains("1 IK effector"), "{}", text(&o));
    let o = skinview(&["bench", fox.to_str().unwrap(), "--links", "--frames", "2"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "links on a glTF file: {}",
        text(&o)
    );
    assert!(
        text(&o).contains("--links needs a native rig"),
        "{}",
        text(&o)
    );
    // A glTF model: one layer, no IK, still every field.
    let o = skinview(&[
        "bench",
        common::model("RiggedFigure").to_str().unwrap(),
        "--frames",
        "10",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Native rigs go through every command like glTF files do.
#[test]
fn native_rigs_work_in_every_command() {
    let rig = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/humanoid.rig.json");
    let rig = rig.to_str().unwrap();
    for model in [rig, "builtin:humanoid"] {
        let o = skinview(&["info", model]);
        let t = text(&o);
        assert!(
            o.status.success() && t.contains("18 joints") && t.contains("throw"),
            "{t}"
        );
        let out = tmp("h.json");
        let o = skinview(&[
            "dump",
            model,
            "--anim",
            "2",
            "--time",
            "0.5",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(Dump::read(&out).unwrap().meshes.len(), 1);
        if common::gpu().is_some() {
            let o = skinview(&["compare", model, "--frames", "3"]);
            assert!(
                o.status.success() && text(&o).contains("PASS"),
                "{}",
                text(&o)
            );
            let png = tmp("h.png");
            let o = skinview(&[
                "render",
                model,
                "--size",
                "64x64",
                "--out",
                png.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", text(&o));
        }
    }
}

/// Every generated file in `assets/` is what our code writes today, byte for byte
/// (regenerate with `cargo run -- export MODEL --out assets/FILE`).
#[test]
fn assets_are_regenerable() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    for (model, file) in [
        ("builtin:arm", "woodland_arm.glb"),
        ("builtin:arm", "woodland_arm.rig.json"),
        ("builtin:humanoid", "humanoid.glb"),
        ("builtin:humanoid", "humanoid.rig.json"),
    ] {
        let out = tmp(file);
        let o = skinview(&["export", model, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        let fresh = std::fs::read(&out).unwrap();
        let committed = std::fs::read(assets.join(file)).unwrap();
        assert!(
            fresh == committed,
            "assets/{file} is stale: run `cargo run -- export {model} --out assets/{file}`"
        );
    }
    // And the glTF round-trips: the exported arm skins like the built-in scene.
    let a = skinview::builtin::woodland_arm().unwrap();
    let b = skinview::io::load(&assets.join("woodland_arm.glb")).unwrap();
    let times = [0.0, 0.77, 2.0];
    let da = common::dump(&a, Some(0), &times, common::Source::CPU, None, None).unwrap();
    let db = common::dump(&b, Some(0), &times, common::Source::CPU, None, None).unwrap();
    let d = diff(&da, &db).unwrap();
    assert!(
        d.max_position < 1e-6,
        "round trip moved vertices by {}",
        d.max_position
    );
}

/// `partition` prints a row per skinned primitive and K and writes its JSON keys;
/// `render --color submesh` draws the split; the flags refuse what makes no sense.
#[test]
fn partition_reports_stats_and_render_shows_the_split() {
    let cesium = common::model("CesiumMan");
    let json = tmp("partition.json");
    let o = skinview(&[
        "partition",
        cesium.to_str().unwrap(),
        "--max-bones",
        "8,16",
        "--frames",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("Cesium_Man") && t.contains("submeshes"), "{t}");
    let rows: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for key in [
        "mesh",
        "primitive",
        "k",
        "submeshes",
        "lower_bound",
        "vertices_in",
        "vertices_out",
        "triangles",
        "max_bones_used",
        "dropped_influences",
        "acmr_in",
        "acmr_out",
        "time_ms",
    ] {
        assert!(rows[0].get(key).is_some(), "no {key} in {}", rows[0]);
    }
    // CesiumMan: 3273 vertices, 4672 triangles (the shared README); K=8 needs 6 submeshes
    // (the exact minimum), K=16 two.
    assert_eq!(rows[0]["k"], 8);
    assert_eq!(rows[0]["vertices_in"], 3273);
    assert_eq!(rows[0]["triangles"], 4672);
    assert_eq!(rows[0]["submeshes"], 6);
    assert_eq!(rows[1]["submeshes"], 2);
    assert!(rows[0]["max_bones_used"].as_u64().unwrap() <= 8);
    assert_eq!(rows[0]["dropped_influences"], 0);
    assert_eq!(rows[0]["max_error"], 0.0);
    // A rig with 8 influences at K=4 drops some and says what that costs.
    let rig = common::model("rig_seed4_8inf_morph_ubyte");
    let o = skinview(&["partition", rig.to_str().unwrap(), "--max-bones", "4"]);
    assert!(o.status.success(), "{}", text(&o));
    let row = text(&o).lines().last().unwrap().to_string();
    let dropped: usize = row.split_whitespace().nth(11).unwrap().parse().unwrap();
    assert!(dropped > 0, "{row}");
    // Bad budgets and combinations.
    for (args, says) in [
        (vec!["partition", "--max-bones", "3"], "3"),
        (vec!["partition"], "--max-bones"),
        (
            vec!["render", "--color", "submesh", "--out", "x.png"],
            "--max-bones",
        ),
        (
            vec![
                "render",
                "--palette",
                "storage",
                "--max-bones",
                "8",
                "--out",
                "x.png",
            ],
            "--color submesh",
        ),
        (
            vec![
                "render",
                "--demo",
                "--color",
                "submesh",
                "--max-bones",
                "8",
                "--out",
                "x.png",
            ],
            "animation stage",
        ),
    ] {
        let o = skinview(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    let png = tmp("submesh.png");
    let o = skinview(&[
        "render",
        cesium.to_str().unwrap(),
        "--color",
        "submesh",
        "--max-bones",
        "8",
        "--size",
        "64x64",
        "--out",
        png.to_str().unwrap(),
    ]);
    if common::gpu().is_some() {
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("6 submeshes"), "{}", text(&o));
        let img = skinview::io::png::read(&png).unwrap();
        assert_eq!((img.width, img.height), (64, 64));
    }
}

/// `--palette uniform --max-bones K` on compare, dump and render: the partitioned draws match
/// the CPU reference (on Vulkan and on GL), the dump equals the CPU's within tolerance, the
/// render is written; contradictory flags are refused.
#[test]
fn uniform_palette_on_compare_dump_and_render() {
    let cesium = common::model("CesiumMan");
    let m = cesium.to_str().unwrap();
    for (args, says) in [
        (
            vec!["compare", m, "--palette", "storage", "--max-bones", "8"],
            "--max-bones",
        ),
        (
            vec![
                "dump",
                m,
                "--time",
                "0",
                "--palette",
                "uniform",
                "--out",
                "x.json",
            ],
            "--skin vertex",
        ),
    ] {
        let o = skinview(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    if common::gpu().is_none() {
        return;
    }
    let o = skinview(&[
        "compare",
        m,
        "--palette",
        "uniform",
        "--max-bones",
        "8",
        "--frames",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("uniform array of 8 matrices") && t.contains("6 submesh draws"),
        "{t}"
    );
    // The capture shader reads the storage palette: refused on the uniform path.
    let o = skinview(&["compare", m, "--max-bones", "8", "--capture", "shader"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("--capture draw"), "{}", text(&o));
    // GL (llvmpipe) runs the same shaders through naga's GLSL output.
    let mut gl = Command::new(env!("CARGO_BIN_EXE_skinview"));
    gl.args(["compare", m, "--max-bones", "12", "--frames", "3"])
        .env("WGPU_BACKEND", "gl");
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        gl.env("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    let o = gl.output().unwrap();
    assert!(o.status.success(), "WGPU_BACKEND=gl: {}", text(&o));
    assert!(text(&o).contains("OpenGL"), "not on GL: {}", text(&o));
    // dump --path gpu on the uniform palette equals the CPU reference's dump.
    let (cpu, gpu) = (tmp("uniform-cpu.json"), tmp("uniform-gpu.json"));
    let o = skinview(&["dump", m, "--time", "0.7", "--out", cpu.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = skinview(&[
        "dump",
        m,
        "--time",
        "0.7",
        "--path",
        "gpu",
        "--palette",
        "uniform",
        "--max-bones",
        "12",
        "--out",
        gpu.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (Dump::read(&cpu).unwrap(), Dump::read(&gpu).unwrap());
    let d = diff(&a, &b).unwrap();
    assert!(
        d.max_position < 1e-5 * a.diagonal() && d.max_normal < 1e-4,
        "{d:?}"
    );
    let png = tmp("uniform.png");
    let o = skinview(&[
        "render",
        m,
        "--palette",
        "uniform",
        "--size",
        "64x64",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("uniform array of 64 matrices"),
        "{}",
        text(&o)
    );
    if let Err(e) = skinview::io::png::read(&png) {
        panic!("{} is not a PNG: {e}", png.display());
    }
}

/// `skinview weights` on a glTF file: regenerated, smoothed, rogue-free weights written to a
/// new .glb that imports with the same vertices and joints, weights summing to 1; the input
/// is refused as output; nothing to do is a usage error.
#[test]
fn weights_command_rewrites_a_gltf_skin() {
    let exe = env!("CARGO_BIN_EXE_skinview");
    let model = common::shared_dir().join("models/CesiumMan/CesiumMan.glb");
    let dir = std::env::temp_dir().join(format!("skinview-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("regen.glb");
    let o = std::process::Command::new(exe)
        .args([
            "weights",
            model.to_str().unwrap(),
            "--regenerate",
            "--rogue",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("vertices changed")
            && text.contains("smoothed:")
            && text.contains("rogue removal:"),
        "{text}"
    );
    let load = |p: &std::path::Path| {
        skinview::io::ModelSource::File(p.to_path_buf())
            .load_with(Default::default())
            .unwrap()
            .scene
    };
    let (a, b) = (load(&model), load(&out));
    let (pa, pb) = (&a.meshes[0].primitives[0], &b.meshes[0].primitives[0]);
    assert_eq!(pa.positions, pb.positions);
    let wb = pb.skin_weights.as_ref().unwrap();
    assert_ne!(
        pa.skin_weights.as_ref().unwrap(),
        wb,
        "weights were rewritten"
    );
    for (v, w) in wb.weights.chunks_exact(wb.width).enumerate() {
        let sum: f32 = w.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "vertex {v}: {w:?}");
    }
    // The input is never the output; nothing to do says so.
    let o = std::process::Command::new(exe)
        .args([
            "weights",
            model.to_str().unwrap(),
            "--smooth",
            "--out",
            model.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = std::process::Command::new(exe)
        .args(["weights", "builtin:humanoid", "--out"])
        .arg(dir.join("x.glb"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--regenerate"));
    // A native rig goes through the scene writer.
    let o = std::process::Command::new(exe)
        .args([
            "weights",
            "builtin:humanoid",
            "--distance",
            "--smooth",
            "--out",
        ])
        .arg(dir.join("h.glb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        load(&dir.join("h.glb")).meshes[0].primitives[0]
            .skin_weights
            .is_some()
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `render --color error --against MODE`: the twisted arm's LBS and DQS differ at the elbow
/// (warm colours there, blue at the ends); a mode against itself is blue everywhere; the flag
/// without the error colours is a usage error.
#[test]
fn render_colors_the_difference_between_two_modes() {
    let heat = |against: &str| {
        let out = tmp(&format!("error_against_{against}.png"));
        let o = skinview(&[
            "render",
            "builtin:arm",
            "--anim",
            "twist",
            "--time",
            "10",
            "--color",
            "error",
            "--against",
            against,
            "--size",
            "320x200",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let img = skinview::io::png::read(&out).unwrap();
        // Above the legend (its bar spans the colours; it takes the bottom 60 rows).
        let above = &img.pixels[..(img.width * (img.height - 62) * 4) as usize];
        let warm = above
            .chunks_exact(4)
            .filter(|p| p[0] > 180 && p[2] < 100)
            .count();
        let blue = above
            .chunks_exact(4)
            .filter(|p| p[2] > 180 && p[0] < 60 && p[1] < 60)
            .count();
        (warm, blue, text(&o))
    };
    let (warm, blue, said) = heat("dqs");
    assert!(
        warm > 200 && blue > 2000,
        "warm {warm}, blue {blue}: {said}"
    );
    assert!(
        said.contains("lbs vs dqs: largest vertex distance"),
        "{said}"
    );
    let (warm, blue, said) = heat("lbs");
    assert!(warm == 0 && blue > 2000, "warm {warm}, blue {blue}: {said}");
    let o = skinview(&[
        "render",
        "--against",
        "dqs",
        "--out",
        tmp("x.png").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// The streamed dump writes exactly what serialising the whole [`Dump`] writes: names that
/// need escaping, a primitive without normals, several times.
#[test]
fn streamed_dump_is_the_serialised_dump() {
    use skinview::compare::{Sampling, run::Source, sample_frames_with};
    use skinview::io::dump::DumpWriter;
    let mut scene = skinview::builtin::woodland_arm().unwrap();
    let d = *scene.deformed_draws().next().unwrap();
    scene.nodes[d.node].name = Some("a \"quoted\" name\\".into());
    let mut no_normals = scene.clone();
    no_normals.meshes[d.mesh].primitives[d.primitive].normals = None;
    for scene in [scene, no_normals] {
        let times = [0.0f32, 0.37, 1.5];
        let draws = scene.deformed_draw_indices();
        let sampling = Sampling {
            source: Source::CPU,
            max_influences: None,
            skin: Default::default(),
        };
        let frames = sample_frames_with(None, &scene, Some(0), &times, &draws, &sampling).unwrap();
        let want = serde_json::to_string(&Dump::new(&scene, Some(0), &times, &frames)).unwrap();
        let out = tmp("streamed.json");
        let mut w = DumpWriter::create(&out, &scene, Some(0), &times).unwrap();
        for f in &frames {
            w.push(f).unwrap();
        }
        w.finish().unwrap();
        let got = std::fs::read_to_string(&out).unwrap();
        assert_eq!(got, want);
        // No spill folder of this output is left beside it (other tests write theirs here).
        let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(".streamed.json.") && name.ends_with(".parts")
            })
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// `peak memory N MB` from a command's output.
fn peak_memory_mb(o: &std::process::Output) -> f64 {
    let t = text(o);
    t.lines()
        .find_map(|l| l.strip_prefix("peak memory "))
        .and_then(|v| v.trim_end_matches(" MB").parse().ok())
        .unwrap_or_else(|| panic!("no peak memory in: {t}"))
}

/// `compare` and `dump` keep memory flat in the number of frames: on a 38,400-vertex arm,
/// doubling the frames (compare: 50 → 100, both capture paths; dump: 20 → 40 times) adds
/// under 32 MB and 16 MB to the peak, where keeping the frames would add about 140 MB and
/// 37 MB. (On lavapipe the draw capture's peak still creeps up by ~10 MB a doubling: the
/// driver's memory for each draw, released when the capture renews its pipelines.)
#[test]
fn compare_and_dump_memory_stays_flat_in_frames() {
    let params = skinview::builtin::ArmParams {
        rings: 400,
        ring_vertices: 96,
        ..Default::default()
    };
    let scene = skinview::builtin::woodland_arm_with(&params).unwrap();
    let vertices: usize = scene
        .deformed_draws()
        .map(|d| scene.primitive(d).vertex_count())
        .sum();
    assert!(vertices >= 30_000, "{vertices}");
    let model = tmp("big_arm.glb");
    skinview::io::gltf_export::write_glb(&scene, &Default::default(), &model).unwrap();
    let model = model.to_str().unwrap();
    // Allowed growth: allocator and driver noise, far below what keeping frames would cost.
    const FLAT_COMPARE_MB: f64 = 32.0;
    const FLAT_DUMP_MB: f64 = 16.0;
    let compare = |frames: &str| {
        let o = skinview(&["compare", model, "--frames", frames, "--capture", "both"]);
        assert!(o.status.success(), "{}", text(&o));
        peak_memory_mb(&o)
    };
    let (a, b) = (compare("50"), compare("100"));
    println!("compare peak: 50 frames {a:.1} MB, 100 frames {b:.1} MB");
    assert!(b - a < FLAT_COMPARE_MB, "compare: {a} MB -> {b} MB");
    let dump = |times: usize| {
        let out = tmp(&format!("big_dump_{times}.json"));
        let mut args: Vec<String> = vec![
            "dump".into(),
            model.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        for i in 0..times {
            args.push("--time".into());
            args.push(format!("{}", i as f32 * 0.05));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = skinview(&args);
        assert!(o.status.success(), "{}", text(&o));
        let d = Dump::read(&out).unwrap();
        assert_eq!(d.times.len(), times);
        assert_eq!(d.meshes[0].positions_by_time.len(), times);
        let _ = std::fs::remove_file(&out);
        peak_memory_mb(&o)
    };
    let (a, b) = (dump(20), dump(40));
    println!("dump peak: 20 times {a:.1} MB, 40 times {b:.1} MB");
    assert!(b - a < FLAT_DUMP_MB, "dump: {a} MB -> {b} MB");
}

/// A native rig with a muscle bone (weights that do not sum to 1), one vertex of it giving the
/// muscle's parent a negative weight: the GPU skins it as the CPU reference does in every
/// mode (the readback comparison passes on both captures), `export` refuses `.glb` naming
/// the vertex and writes `.rig.json`.
#[test]
fn muscle_rig_compares_and_exports() {
    let mut rig = common::rigs::biceps_rig();
    let mesh = rig.mesh.as_mut().unwrap();
    let last = mesh.weights.len() - 1;
    mesh.weights[last].push((2, 0.3));
    let path = tmp("biceps.rig.json");
    std::fs::write(&path, skinview::io::rig_json::to_string(&rig)).unwrap();
    let model = path.to_str().unwrap();
    let glb = tmp("biceps.glb");
    let o = skinview(&["export", model, "--out", glb.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("negative weight") && text(&o).contains(".rig.json"),
        "{}",
        text(&o)
    );
    assert!(!glb.exists());
    let back = tmp("biceps_back.rig.json");
    let o = skinview(&["export", model, "--out", back.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    if common::gpu().is_none() {
        return;
    }
    // `--mode`: the old spelling of `--blend`, kept as a hidden alias.
    for (flag, mode) in [("--blend", "lbs"), ("--blend", "dqs"), ("--mode", "stitch")] {
        let o = skinview(&["compare", model, "--frames", "4", flag, mode]);
        assert!(o.status.success(), "{mode}: {}", text(&o));
        assert!(text(&o).contains("PASS"), "{mode}: {}", text(&o));
    }
}

/// `weights` starts from what the importer read: a vertex whose weights are all zero is bound
/// to its first joint on import, and the report says so before the tools' own lines.
#[test]
fn weights_reports_what_the_importer_repaired() {
    let model = common::shared_dir().join("models/CesiumMan/CesiumMan.glb");
    let glb = std::fs::read(&model).unwrap();
    let json = common::glb::json_of(&glb);
    let weights = common::glb::accessor_at(&json, "/meshes/0/primitives/0/attributes/WEIGHTS_0");
    let size = common::glb::element_offset(&json, weights, 0, 0).1;
    let mut patched = glb.clone();
    for c in 0..4 {
        patched = common::glb::patch(&patched, weights, 0, c, &vec![0u8; size]);
    }
    let input = tmp("zero_weight.glb");
    std::fs::write(&input, &patched).unwrap();
    let out = tmp("zero_weight_smoothed.glb");
    let o = skinview(&[
        "weights",
        input.to_str().unwrap(),
        "--smooth",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("repaired on import before the weight tools ran")
            && t.contains("meshes[0].primitives[0].attributes.WEIGHTS_0"),
        "{t}"
    );
    assert!(t.find("repaired on import") < t.find("smoothed:"), "{t}");
}

/// `--skinning compute` on compare, render and bench: compare reads the compute-skinning path
/// back as drawn and passes (with `--capture`, beside the vertex-shader path's captures);
/// render draws the same picture as the vertex shader (bit-identical on lavapipe, where the
/// threshold was set: at most 2 levels in 0.1% of pixels elsewhere); the uniform palette
/// refuses it with words; `bench --gpu` times a crowd and writes its JSON and picture, and its
/// crowd flags without --gpu are refused.
#[test]
fn compute_skinning_on_compare_render_and_bench() {
    if common::gpu().is_none() {
        return;
    }
    let model = common::model("CesiumMan");
    let model = model.to_str().unwrap();
    let json = tmp("compute_skinning.json");
    let o = skinview(&[
        "compare",
        model,
        "--frames",
        "3",
        "--skinning",
        "compute",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        o.status.success() && text(&o).contains("PASS"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("captures: compute pass"), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["captures"], serde_json::json!(["compute_skinning"]));
    let o = skinview(&[
        "compare",
        model,
        "--frames",
        "2",
        "--skinning",
        "compute",
        "--capture",
        "draw",
        "--blend",
        "dqs",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        v["captures"],
        serde_json::json!(["draw", "compute_skinning"])
    );
    let o = skinview(&[
        "compare",
        model,
        "--skinning",
        "compute",
        "--palette",
        "uniform",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--skin compute reads the storage palette"),
        "{}",
        text(&o)
    );
    // The same picture from both GPU paths.
    let (a, b) = (tmp("vertex.png"), tmp("compute.png"));
    for (skinning, out) in [("vertex", &a), ("compute", &b)] {
        let o = skinview(&[
            "render",
            model,
            "--size",
            "160x120",
            "--skinning",
            skinning,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        if skinning == "compute" {
            assert!(text(&o).contains("GPU (compute pass)"), "{}", text(&o));
        }
    }
    let (a, b) = (
        skinview::io::png::read(&a).unwrap(),
        skinview::io::png::read(&b).unwrap(),
    );
    let differing = a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > 2))
        .count();
    assert!(
        differing * 1000 <= a.pixels.len() / 4,
        "{differing} pixels differ between the vertex-shader and compute paths"
    );
    // The crowd benchmark.
    let (json, png) = (tmp("crowd.json"), tmp("crowd.png"));
    let o = skinview(&[
        "bench",
        model,
        "--gpu",
        "--instances",
        "3",
        "--frames",
        "2",
        "--size",
        "160x120",
        "--json",
        json.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("vertex-shader path") && t.contains("compute path") && t.contains("timing:"),
        "{t}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["instances"], 3);
    assert_eq!(v["vertices_per_frame"], 3 * 3273);
    assert!(v["compute_wall_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(skinview::io::png::read(&png).unwrap().width, 160);
    for flags in [
        &["--palette", "uniform"][..],
        &["--max-buffer-bytes", "4096"],
    ] {
        let o = skinview(&[&["bench"][..], flags].concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", text(&o));
        assert!(text(&o).contains("add --gpu"), "{}", text(&o));
    }
}

/// Bones without names on the command line: `--bone` takes a joint's label (`node N`), its
/// node index N or `nodes[N]`, and draws the same picture for each; `info` lists every skin's
/// joints and writes them with `--json`; an unknown bone names `info` in the error.
#[test]
fn unnamed_bones_by_label_index_and_info() {
    let model = common::shared_dir().join("models/SimpleSkin/SimpleSkin.gltf");
    let m = model.to_str().unwrap();
    let json = tmp("simpleskin_info.json");
    let o = skinview(&["info", m, "--json", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("joint 1: node"), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "skinview-info/1");
    let joint = &v["skins"][0]["joints"][1];
    assert_eq!(joint["named"], false, "{joint}");
    let node = joint["node"].as_u64().unwrap();
    assert_eq!(joint["label"], format!("node {node}"));
    assert_eq!(
        v["skins"][0]["joints"].as_array().unwrap().len() as u64,
        v["joints"].as_u64().unwrap()
    );
    if common::gpu().is_none() {
        return;
    }
    let mut images = Vec::new();
    for (k, bone) in [
        format!("node {node}"),
        node.to_string(),
        format!("nodes[{node}]"),
    ]
    .iter()
    .enumerate()
    {
        let png = tmp(&format!("simpleskin_bone{k}.png"));
        let o = skinview(&[
            "render",
            m,
            "--color",
            "weights",
            "--bone",
            bone,
            "--size",
            "48x48",
            "--out",
            png.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{bone}: {}", text(&o));
        images.push(skinview::io::png::read(&png).unwrap());
    }
    assert!(
        images.windows(2).all(|w| w[0] == w[1]),
        "one bone, three names"
    );
    let o = skinview(&[
        "render", m, "--color", "weights", "--bone", "node 99", "--out", "x.png",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("skinview info"), "{}", text(&o));
}

/// `render --skeleton=STYLE` draws each style (different pictures, an unknown style refused
/// with the list) and `--frame-clip` keeps one camera over the clip: two times of CesiumMan's
/// walk framed over the clip cover less than the 85 % a frame framed alone covers, and the
/// figure stays the same height (one camera, a walk keeps its height).
#[test]
fn render_skeleton_styles_and_clip_framing() {
    let Some(_) = common::gpu() else { return };
    let render = |extra: &[&str], name: &str| {
        let out = tmp(name);
        let mut args = vec!["render", "builtin:arm", "--time", "2", "--size", "160x120"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = skinview(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        skinview::io::png::read(&out).unwrap()
    };
    let plain = render(&[], "plain.png");
    let mut seen = vec![plain.pixels.clone()];
    for style in ["--skeleton", "--skeleton=stick", "--skeleton=spheres"] {
        let img = render(&[style], "styled.png");
        assert!(
            !seen.contains(&img.pixels),
            "{style} drew the same picture as another"
        );
        seen.push(img.pixels);
    }
    let o = skinview(&[
        "render",
        "--skeleton=cube",
        "--out",
        tmp("x.png").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("spheres"), "{}", text(&o));
    // Clip framing.
    let cesium = common::model("CesiumMan");
    let height_of = |extra: &[&str], t: &str| {
        let out = tmp("clip.png");
        let mut args = vec![
            "render",
            cesium.to_str().unwrap(),
            "--time",
            t,
            "--size",
            "200x200",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = skinview(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let img = skinview::io::png::read(&out).unwrap();
        let bg = img.pixels[0..3].to_vec();
        let rows: Vec<usize> = (0..200)
            .filter(|y| {
                (0..200).any(|x| {
                    let p = &img.pixels[(y * 200 + x) * 4..][..3];
                    p.iter().zip(&bg).any(|(a, b)| a.abs_diff(*b) > 4)
                })
            })
            .collect();
        rows.last().unwrap() - rows.first().unwrap() + 1
    };
    let alone = height_of(&[], "0.5");
    let (a, b) = (
        height_of(&["--frame-clip"], "0.5"),
        height_of(&["--frame-clip"], "1.5"),
    );
    assert!((160..=180).contains(&alone), "alone: {alone} of 200 rows");
    assert!(
        a <= alone && b <= alone,
        "clip framing {a}, {b} vs alone {alone}"
    );
    assert!(a.abs_diff(b) <= 6, "one camera: heights {a} and {b}");
}

/// Colour legends in `render` images: the weights ramp (unlit, fully saturated colours no lit
/// surface has, blue to red) in a strip of its own under the picture (a full-width separator
/// row above it, so it never covers the model), the image the size asked for; the split
/// view's halves labelled in light text.
#[test]
fn render_images_carry_their_legend_and_labels() {
    let Some(_) = common::gpu() else { return };
    let out = tmp("legend.png");
    let cesium = common::model("CesiumMan");
    let (w, h) = (480usize, 360usize);
    let o = skinview(&[
        "render",
        cesium.to_str().unwrap(),
        "--color",
        "weights",
        "--bone",
        "Skeleton_arm_joint_L__3_",
        "--split",
        "--size",
        "480x360",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let img = skinview::io::png::read(&out).unwrap();
    assert_eq!((img.width, img.height), (w as u32, h as u32));
    let px = |x: usize, y: usize| &img.pixels[(y * w + x) * 4..][..3];
    // The strip's separator: a row of its colour (`SEPARATOR` in src/cli/annotate.rs) from
    // edge to edge.
    let separator = (0..h)
        .find(|&y| (0..w).all(|x| px(x, y) == [70, 72, 80]))
        .expect("no separator row above a legend strip");
    // The bar: a row of at least 120 fully saturated, bright pixels (no lit surface is),
    // blue at its left end and red at its right, under the separator.
    let vivid = |p: &[u8]| p.iter().max().unwrap() >= &235 && p.iter().min().unwrap() <= &20;
    let bar = (separator + 1..h).find_map(|y| {
        let xs: Vec<usize> = (0..w / 2).filter(|&x| vivid(px(x, y))).collect();
        (xs.len() >= 120).then(|| (y, xs[0], *xs.last().unwrap()))
    });
    let (y, left, right) = bar.expect("no colour bar in the strip under the picture");
    assert!(
        px(left, y)[2] >= 235 && px(left, y)[0] <= 20,
        "{:?}",
        px(left, y)
    );
    assert!(
        px(right, y)[0] >= 235 && px(right, y)[2] <= 20,
        "{:?}",
        px(right, y)
    );
    // Labels: light text in each half's top-left corner.
    for x0 in [0, w / 2 + 2] {
        let light = (2..22)
            .flat_map(|y| (x0..x0 + 100).map(move |x| (x, y)))
            .filter(|&(x, y)| px(x, y).iter().all(|&c| c > 150))
            .count();
        assert!(light > 20, "no label at x {x0}: {light} light pixels");
    }
}

/// Every kind of legend `render` paints, as golden images (looked at when committed): the
/// weights ramp with the split view's labels, bone swatches, the submesh swatches, the
/// |GPU − CPU| ramp and the mode-against-mode ramp.
#[test]
fn render_legends_match_golden_images() {
    use crate::common::golden::check_golden_png;
    let Some(ctx) = common::gpu() else { return };
    let cesium = common::model("CesiumMan");
    let fox = common::model("Fox");
    let (cesium, fox) = (cesium.to_str().unwrap(), fox.to_str().unwrap());
    let cases: [(&str, Vec<&str>); 5] = [
        (
            "legend_weights_split",
            vec![
                cesium,
                "--color",
                "weights",
                "--bone",
                "Skeleton_arm_joint_L__3_",
                "--split",
            ],
        ),
        ("legend_bones", vec![fox, "--color", "bones", "--anim", "1"]),
        (
            "legend_submesh",
            vec![cesium, "--color", "submesh", "--max-bones", "8"],
        ),
        ("legend_gpu_error", vec![cesium, "--color", "error"]),
        (
            "legend_against_dqs",
            vec![
                "builtin:arm",
                "--anim",
                "twist",
                "--color",
                "error",
                "--against",
                "dqs",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (name, args) in cases {
        let out = tmp(&format!("{name}.png"));
        let mut all = vec!["render"];
        all.extend(&args);
        all.extend([
            "--time",
            "1",
            "--size",
            "400x300",
            "--out",
            out.to_str().unwrap(),
        ]);
        let o = skinview(&all);
        assert!(o.status.success(), "{name}: {}", text(&o));
        failures.extend(check_golden_png(name, &out, &ctx.describe()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `weights --distance` on CesiumMan prints how far each bone's weights moved and warns where
/// a bone took weight far from where it had any (distance weights reach across the body).
#[test]
fn weights_report_per_bone_changes_and_warnings() {
    let out = tmp("cesium_distance.glb");
    let o = skinview(&[
        "weights",
        common::model("CesiumMan").to_str().unwrap(),
        "--distance",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("weight change per bone (largest, mean"), "{t}");
    assert!(
        t.contains("warning: bone") && t.contains("more than a bone length"),
        "{t}"
    );
}

/// A reader that stops early (`skinview info MODEL | head -1`) ends the program quietly, as it
/// ends other command-line tools: no panic about a broken pipe.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args([
            "info",
            common::model("RecursiveSkeletons").to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's reading end is closed here (dropped), with more still to come: the report is
    // 67 KB, more than a pipe holds (64 KiB on Linux), so the program is still writing.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

/// Who skins is one flag family, `--skin cpu|vertex|compute`, on render, dump and compare, and
/// the old spellings keep working: `--path gpu|cpu` (gpu = vertex) and `--skinning`. Each
/// spelling gives the same output as the other (dumps within the comparison tolerance of each
/// other, renders identical), a wrong name lists the names the library gives, and the CPU is
/// refused where only the GPU skins.
#[test]
fn skin_flag_family_and_its_old_spellings() {
    if common::gpu().is_none() {
        return;
    }
    let model = common::model("RiggedSimple");
    let m = model.to_str().unwrap();
    let dump = |name: &str, flags: &[&str]| {
        let out = tmp(&format!("skin-{name}.json"));
        let mut args = vec!["dump", m, "--time", "0.5"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = skinview(&args);
        assert!(o.status.success(), "{flags:?}: {}", text(&o));
        Dump::read(&out).unwrap()
    };
    let cpu = dump("cpu", &[]);
    for (name, flags) in [
        ("skin-cpu", &["--skin", "cpu"][..]),
        ("path-cpu", &["--path", "cpu"]),
        ("skin-vertex", &["--skin", "vertex"]),
        ("path-gpu", &["--path", "gpu"]),
        (
            "skin-vertex-draw",
            &["--skin", "vertex", "--capture", "draw"],
        ),
        ("skin-compute", &["--skin", "compute"]),
        (
            "capture-compute-pass",
            &["--path", "gpu", "--capture", "compute-pass"],
        ),
    ] {
        let other = dump(name, flags);
        let d = diff(&cpu, &other).unwrap();
        assert!(d.max_position < 1e-5 * cpu.diagonal(), "{flags:?}: {d:?}");
    }
    // `--capture compute-pass` (its spelling before --skin) reads compute skinning.
    let (compute, old) = (
        dump("c1", &["--skin", "compute"]),
        dump("c2", &["--path", "gpu", "--capture", "compute-pass"]),
    );
    assert_eq!(diff(&compute, &old).unwrap().max_position, 0.0);
    let o = skinview(&[
        "dump",
        m,
        "--skin",
        "compute",
        "--capture",
        "draw",
        "--out",
        "x.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // The same picture from each spelling of the same choice.
    let render = |name: &str, flags: &[&str]| {
        let out = tmp(&format!("skin-{name}.png"));
        let mut args = vec!["render", m, "--size", "96x72"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = skinview(&args);
        assert!(o.status.success(), "{flags:?}: {}", text(&o));
        skinview::io::png::read(&out).unwrap()
    };
    // (Compared whole: a difference would print megabytes of pixels.)
    let same = render("r-skin-cpu", &["--skin", "cpu"]) == render("r-path-cpu", &["--path", "cpu"]);
    assert!(same, "render --skin cpu and --path cpu differ");
    let same = render("r-skin-compute", &["--skin", "compute"])
        == render("r-skinning", &["--path", "gpu", "--skinning", "compute"]);
    assert!(
        same,
        "render --skin compute and --path gpu --skinning compute differ"
    );
    // A wrong name is refused with the library's names; the CPU where only the GPU skins.
    let o = skinview(&["render", m, "--skin", "gpu-ish", "--out", "x.png"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    for name in ["vertex", "compute", "cpu"] {
        assert!(text(&o).contains(name), "{}", text(&o));
    }
    let o = skinview(&["compare", m, "--frames", "1", "--skin", "cpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--skin cpu"), "{}", text(&o));
    let o = skinview(&["compare", m, "--frames", "1", "--skinning", "compute"]);
    assert!(o.status.success(), "{}", text(&o));
    // bench: --skin vertex|compute times that GPU path alone (and implies --gpu); cpu is the
    // CPU stages, which --gpu contradicts; --instances is --crowd's old name.
    let bench = |flags: &[&str]| {
        let mut args = vec!["bench", m, "--frames", "2"];
        args.extend_from_slice(flags);
        skinview(&args)
    };
    let o = bench(&["--skin", "compute", "--crowd", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("vertex-shader path: not timed"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("compute path ("), "{}", text(&o));
    let o = bench(&["--skin", "vertex", "--instances", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 x "), "{}", text(&o));
    assert!(text(&o).contains("compute path: not timed"), "{}", text(&o));
    let o = bench(&["--skin", "cpu"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("vertex-shader path"), "{}", text(&o));
    let o = bench(&["--skin", "cpu", "--gpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--skin cpu"), "{}", text(&o));
}

/// `bench --crowd N` without `--gpu` times the crowd's CPU stage on --threads threads and on
/// one, and writes rows whose counts follow from the workload: ozz's 64-joint rig (64 palette
/// entries a character, every character evaluated), a model's clips; wrong combinations are
/// usage errors.
#[test]
fn bench_crowd_times_the_cpu_stage_as_json() {
    let json = tmp("crowd.json");
    let j = json.to_str().unwrap();
    let o = skinview(&[
        "bench",
        "--crowd",
        "9",
        "--workload",
        "ozz",
        "--threads",
        "2",
        "--frames",
        "60",
        "--json",
        j,
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let threads: Vec<u64> = rows
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [2, 1], "{t}");
    for r in &rows {
        assert_eq!(r["model"], "ozz_workload_64");
        assert_eq!(r["characters"], 9);
        assert_eq!(r["palette_entries"], 64);
        assert_eq!(r["evaluations"], 9);
        // 48 bytes a matrix: the three rows the GPU reads.
        assert_eq!(r["upload_bytes_per_frame"], 9 * 64 * 48);
        assert_eq!(r["palette_writes_per_frame"], 1);
        let (us, ns) = (
            r["stage_us_per_frame"].as_f64().unwrap(),
            r["ns_per_character"].as_f64().unwrap(),
        );
        assert!(us > 0.0 && (ns - us * 1e3 / 9.0).abs() < 1e-6 * ns, "{r}");
        assert!(r["min_us_per_frame"].as_f64().unwrap() <= us);
        assert!(r["max_us_per_frame"].as_f64().unwrap() >= us);
        assert!(r["bound_us_per_frame"].as_f64().unwrap() > 0.0, "{r}");
    }
    // A model: Fox's three clips cycling over the crowd.
    let fox = common::model("Fox");
    let o = skinview(&[
        "bench",
        fox.to_str().unwrap(),
        "--crowd",
        "6",
        "--threads",
        "1",
        "--frames",
        "1",
        "--json",
        j,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.len(), 1, "one thread asked: one row");
    assert_eq!(rows[0]["characters"], 6);
    for (args, says) in [
        (&["bench", "--threads", "2"][..], "--crowd N without --gpu"),
        (
            &["bench", "--workload", "ozz"][..],
            "--crowd N without --gpu",
        ),
        (
            &[
                "bench",
                fox.to_str().unwrap(),
                "--crowd",
                "4",
                "--workload",
                "ozz",
            ][..],
            "give no MODEL",
        ),
        (
            &["bench", "--crowd", "4", "--out", "x.png"][..],
            "add --gpu",
        ),
        (&["bench", "--crowd", "0"][..], "0"),
    ] {
        let o = skinview(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
}

/// `render --crowd N` writes a still of the crowd at the asked size, and refuses the flags a
/// crowd does not draw.
#[test]
fn render_crowd_writes_a_still() {
    let png = tmp("crowd.png");
    let p = png.to_str().unwrap();
    let fox = common::model("Fox");
    let f = fox.to_str().unwrap();
    let o = skinview(&[
        "render", f, "--crowd", "5", "--time", "0.5", "--size", "120x90", "--out", p,
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("a crowd of 5 (5 in view)"), "{t}");
    let img = skinview::io::png::read(&png).unwrap();
    assert_eq!((img.width, img.height), (120, 90));
    // Without a MODEL the crowd is of the humanoid (as `view --crowd`), not of the arm.
    let o = skinview(&["render", "--crowd", "3", "--size", "80x60", "--out", p]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("humanoid: a crowd of 3"), "{}", text(&o));
    for extra in [
        &["--split"][..],
        &["--color", "weights"],
        &["--skin", "cpu"],
        &["--skeleton"],
    ] {
        let o = skinview(&[&["render", f, "--crowd", "5", "--out", p][..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(
            text(&o).contains("--crowd draws a field"),
            "{extra:?}: {}",
            text(&o)
        );
    }
}

/// `view --crowd N` refuses, before any window opens, a crowd size out of range and the flags
/// that show one character (a comparison, its skeleton, one bone's weights, another view).
#[test]
fn view_crowd_refuses_what_a_crowd_does_not_show() {
    let fox = common::model("Fox");
    let f = fox.to_str().unwrap();
    for (extra, says) in [
        (&["--show", "split"][..], "--crowd does not take --show"),
        (
            &["--compare-with", f],
            "--crowd does not take --compare-with",
        ),
        (&["--skeleton"], "--crowd does not take --skeleton"),
        (
            &["--color", "weights"],
            "--crowd does not take --color weights",
        ),
        (&["--bone", "b_Hip_01"], "--crowd does not take --bone"),
    ] {
        let o = skinview(&[&["view", f, "--crowd", "10"][..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{extra:?}: {}", text(&o));
    }
    for n in ["0", "65537", "many"] {
        let o = skinview(&["view", f, "--crowd", n]);
        assert_eq!(o.status.code(), Some(2), "{n}: {}", text(&o));
        assert!(text(&o).contains("--crowd"), "{n}: {}", text(&o));
    }
}

/// `view --anim` and `--bone` are checked before a window opens: an unknown clip lists the
/// model's clips, a mistyped bone suggests the closest names.
#[test]
fn view_refuses_an_unknown_clip_or_bone_with_the_names_it_has() {
    let fox = common::model("Fox");
    let f = fox.to_str().unwrap();
    // Refused with exit 2: its words.
    let refused = |args: &[&str]| {
        let o = skinview(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        text(&o)
    };
    let words = refused(&["view", f, "--anim", "Sprint"]);
    for name in ["--anim Sprint", "Survey", "Walk", "Run"] {
        assert!(words.contains(name), "{name}: {words}");
    }
    // A name in the wrong case gets the model's own spelling, from --anim and from a
    // --layer's MOTION; an index out of range gets no guess.
    let words = refused(&["view", f, "--anim", "walk"]);
    assert!(words.contains("did you mean \"Walk\""), "{words}");
    let layered = std::env::temp_dir().join("skinview-layer-typo.png");
    let layer = |motion: &str| {
        let out = layered.to_str().unwrap();
        refused(&[
            "render",
            "builtin:humanoid",
            "--layer",
            motion,
            "--out",
            out,
        ])
    };
    let words = layer("Walk");
    assert!(words.contains("did you mean \"walk\""), "{words}");
    let words = layer("7");
    assert!(!words.contains("did you mean"), "{words}");
    // --color takes render's names; the error colours come with --show diff, and a native
    // rig is drawn whole (no split to colour).
    let words = refused(&["view", f, "--color", "error"]);
    assert!(words.contains("--show diff"), "{words}");
    let words = refused(&["view", "builtin:humanoid", "--color", "submesh"]);
    assert!(words.contains("drawn whole"), "{words}");
    let words = refused(&["view", f, "--bone", "b_head_5"]);
    assert!(words.contains("did you mean \"b_Head_05\""), "{words}");
    // Hiding bones asks for the skeleton, in both commands.
    let out = std::env::temp_dir().join("skinview-hide-bones.png");
    for args in [vec!["view"], vec!["render", "--out", out.to_str().unwrap()]] {
        let o = skinview(&[&args[..], &[f, "--hide-unweighted-bones"]].concat());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("add --skeleton"),
            "{args:?}: {}",
            text(&o)
        );
        assert!(!out.exists(), "nothing written");
    }
}

/// `--help` is wrapped at word boundaries to the terminal (`COLUMNS`): at 80 columns every
/// line fits (or is one word), and the words are exactly those of the same help at 120 columns,
/// so no word was cut or joined; a continued row keeps its second column.
#[test]
fn help_wraps_at_word_boundaries() {
    let help = |args: &[&str], columns: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(args)
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    for args in [&["--help"][..], &["render", "--help"], &["check", "--help"]] {
        let narrow = help(args, "80");
        let wide = help(args, "120");
        for line in narrow.lines() {
            assert!(
                line.chars().count() <= 80 || !line.trim().contains(' '),
                "{args:?}: {line:?}"
            );
        }
        let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&narrow), words(&wide), "{args:?}");
        assert!(
            narrow.lines().count() > wide.lines().count(),
            "{args:?}: nothing wrapped"
        );
    }
    let top = help(&["--help"], "80");
    let row = top
        .lines()
        .position(|l| l.starts_with("  partition"))
        .unwrap();
    let next = top.lines().nth(row + 1).unwrap();
    assert!(
        next.starts_with(&" ".repeat(14)) && !next.starts_with(&" ".repeat(15)),
        "{next:?}"
    );
    // A usage error still goes to standard error with clap's exit code.
    let o = skinview(&["render", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bogus"));
}
