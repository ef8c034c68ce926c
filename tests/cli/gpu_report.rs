//! `scripts/gpu-report.sh` as CI runs it: `--quick --allow-software` on the adapter
//! the tests have (lavapipe here), with the binary the tests built, so the script the GPU
//! machine runs never rots; its `report.json` read back against the schema
//! (`skinview::view::gpu_report::GpuReport`, unknown fields refused) with no empty rows; and
//! the merge's own checks (an empty row, a failed step, `--strict`).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skinview::view::crowd::CrowdReport;
use skinview::view::gpu_report::{GpuReport, SCHEMA};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_skinview")
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-gpu-report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Run the script with the test data's models and the test binary.
fn script(args: &[&str]) -> Output {
    let shared = common::shared_dir();
    let models = format!(
        "{}:{}",
        shared.join("models").display(),
        shared.join("rigs").display()
    );
    let mut cmd = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-report.sh"));
    cmd.args(args)
        .env("SKINVIEW_BIN", bin())
        .env("SKINVIEW_MODELS", models);
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join("skinview-cli-xdg");
        let _ = std::fs::create_dir_all(&dir);
        cmd.env("XDG_RUNTIME_DIR", dir);
    }
    cmd.output().expect("run scripts/gpu-report.sh")
}

fn read_report(dir: &Path) -> GpuReport {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("report.json off its schema: {e}"))
}

/// The quick run: every crowd row (two models × 1 and 4 instances × storage and uniform) and
/// every comparison (two models × three paths) is there, within the schema, with figures in
/// every row: vertices, frames, times, the compute figures on the storage palette (none on
/// the uniform), CesiumMan's four copies split over two buffers, both dispatch orders timed,
/// every comparison passed; the markdown has its tables. A software adapter without
/// --allow-software is refused with words, and so is a bad option.
#[test]
fn quick_report_on_the_test_adapter_fits_its_schema() {
    let Some(ctx) = common::gpu() else { return };
    let out = fresh_dir("quick");
    let o = script(&["--quick", "--allow-software", out.to_str().unwrap()]);
    let text = common::output_text(&o);
    println!("{text}");
    assert!(o.status.success(), "{text}");
    let report = read_report(&out);
    assert_eq!(report.schema, SCHEMA);
    assert_eq!(report.problems(), Vec::<String>::new());
    assert_eq!(report.adapter, ctx.describe());
    assert_eq!(report.crowd.len(), 8, "2 models x 2 counts x 2 palettes");
    assert_eq!(report.compare.len(), 6, "2 models x 3 paths");
    assert_eq!(report.steps.len(), 14);
    for row in &report.crowd {
        let r = &row.run;
        assert!(
            r.vertices_per_frame > 0 && r.vertex_wall_ms.is_some_and(|ms| ms > 0.0),
            "{}",
            row.file
        );
        assert_eq!(
            r.vertices_per_frame,
            r.vertices_per_instance as u64 * r.instances as u64
        );
        assert!(
            row.derived
                .vertex_path_vertices_per_s
                .is_some_and(|v| v > 0.0),
            "{}",
            row.file
        );
        if r.palette == "storage" {
            assert!(r.compute_wall_ms.unwrap() > 0.0, "{}", row.file);
            assert_eq!(r.skin_alone.len(), 2, "{}", row.file);
            assert!(
                row.derived.compute_vertices_per_s.unwrap() > 0.0,
                "{}",
                row.file
            );
            let split = r.model.starts_with("CesiumMan") && r.instances == 4;
            assert_eq!(r.compute_buffers, if split { 2 } else { 1 }, "{}", row.file);
        } else {
            assert_eq!(r.palette, "uniform K=64", "{}", row.file);
            assert!(
                r.compute_wall_ms.is_none() && r.skin_alone.is_empty(),
                "{}",
                row.file
            );
        }
        // No floor for a software adapter: nothing to divide by, so nothing claimed.
        assert!(row.derived.fraction_of_floor.is_none(), "{}", row.file);
    }
    for path in ["vertex", "compute"] {
        assert!(report.compare.iter().any(|c| c.skinning == path));
    }
    assert!(
        report
            .compare
            .iter()
            .any(|c| c.palette.starts_with("uniform"))
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for heading in [
        "## Storage palette",
        "## Storage against uniform",
        "## Correctness",
    ] {
        assert!(md.contains(heading), "{md}");
    }

    if ctx.info.device_type == wgpu::DeviceType::Cpu {
        let o = script(&["--quick", fresh_dir("refused").to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
        assert!(
            common::output_text(&o).contains("--allow-software"),
            "{}",
            common::output_text(&o)
        );
    }
    let o = script(&[
        "--quick",
        "--frobnicate",
        fresh_dir("bad").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
}

/// A run past its deadline keeps what it measured: with a one-second deadline the steps that
/// would start after it are logged as skipped, the report is still written from the rows that
/// were written (every finished step's, none of a skipped one's; each step listed), and the
/// script exits 1.
#[test]
fn a_run_cut_off_by_its_deadline_keeps_its_rows() {
    let Some(_) = common::gpu() else { return };
    let out = fresh_dir("deadline");
    let o = script(&[
        "--quick",
        "--allow-software",
        "--deadline",
        "1",
        out.to_str().unwrap(),
    ]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let report = read_report(&out);
    assert_eq!(
        report.steps.len(),
        14,
        "every step logged: {:?}",
        report.steps
    );
    let skipped = report
        .steps
        .iter()
        .filter(|s| s.status == "skipped (deadline)")
        .count();
    assert!(skipped >= 1, "{:?}", report.steps);
    // Every step that finished has its row; every row comes from a step that started (one
    // cut off by its time limit may have written its row just before).
    let rows: Vec<&str> = report
        .crowd
        .iter()
        .map(|r| r.file.as_str())
        .chain(report.compare.iter().map(|r| r.file.as_str()))
        .collect();
    for step in &report.steps {
        let file = format!("{}.json", step.name);
        if step.ok() {
            assert!(rows.contains(&file.as_str()), "{file} missing: {rows:?}");
        } else if step.status == "skipped (deadline)" {
            assert!(
                !rows.contains(&file.as_str()),
                "{file} was skipped: {rows:?}"
            );
        }
    }
    assert!(
        report
            .problems()
            .iter()
            .any(|p| p.contains("skipped (deadline)"))
    );
}

/// The merge refuses what a finished run must not have: a row with no time, a failed step, a
/// row off the schema (each named, the rest merged, and `--strict` exits 1), an output folder
/// that is the rows folder.
#[test]
fn merge_names_empty_rows_and_failed_steps() {
    let Some(_) = common::gpu() else { return };
    let rows = fresh_dir("rows");
    std::fs::create_dir_all(&rows).unwrap();
    let model = common::model("CesiumMan");
    let row = rows.join("crowd-storage-CesiumMan-00002.json");
    let o = Command::new(bin())
        .args([
            "bench",
            "--gpu",
            model.to_str().unwrap(),
            "--instances",
            "2",
        ])
        .args([
            "--frames",
            "1",
            "--size",
            "64x64",
            "--json",
            row.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = fresh_dir("merged");
    let merge = |strict: bool| {
        let mut cmd = Command::new(bin());
        cmd.args([
            "gpu-report",
            rows.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        if strict {
            cmd.arg("--strict");
        }
        cmd.output().unwrap()
    };
    // One good crowd row and no comparison: named, and --strict fails on it.
    let o = merge(true);
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    assert!(common::output_text(&o).contains("no comparison rows"));
    assert_eq!(read_report(&out).crowd.len(), 1);
    // An emptied row and a failed step.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&row).unwrap()).unwrap();
    v["vertex_wall_ms"] = serde_json::json!(0.0);
    std::fs::write(&row, serde_json::to_string(&v).unwrap()).unwrap();
    std::fs::write(
        rows.join("steps.tsv"),
        "crowd-x\tok\t1.0\ncompare-y\tfailed (exit 1)\t0.5\n",
    )
    .unwrap();
    let o = merge(false);
    assert!(
        o.status.success(),
        "without --strict the report is written anyway"
    );
    let problems = read_report(&out).problems();
    assert!(
        problems.iter().any(|p| p.contains("empty row")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("compare-y: failed")),
        "{problems:?}"
    );
    // A field the schema does not know: that row is refused by name, the rest still merged.
    v["surprise"] = serde_json::json!(1);
    std::fs::write(&row, serde_json::to_string(&v).unwrap()).unwrap();
    std::fs::copy(
        out.join("report.json"),
        rows.join("compare-not-a-comparison.json"),
    )
    .unwrap();
    let o = merge(true);
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    let report = read_report(&out);
    assert!(report.crowd.is_empty() && report.steps.len() == 2);
    assert_eq!(report.rejected.len(), 2, "{:?}", report.rejected);
    assert!(
        report.rejected.iter().any(|r| r.contains("surprise")),
        "{:?}",
        report.rejected
    );
    assert!(
        std::fs::read_to_string(out.join("report.md"))
            .unwrap()
            .contains("surprise")
    );
    let o = Command::new(bin())
        .args([
            "gpu-report",
            rows.to_str().unwrap(),
            "--out",
            rows.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
}

/// A row measured on the H200 (2026-11-27, 256 CesiumMen): the skinning pass's stamps say
/// 0.027 ms while its submission took 0.18–0.38 ms. That is submission overhead, not stamps
/// that miss the work: the stamps are the figure read, and the faster order is the one they
/// say. The same row from lavapipe's driver (known to stamp without the work) reads the wall.
#[test]
fn submission_overhead_on_a_real_gpu_is_not_read_as_stamps_missing_work() {
    let row = r#"{"model":"CesiumMan.glb","adapter":"NVIDIA H200 (Vulkan, discrete GPU, driver NVIDIA 580.159.04)",
        "backend":"Vulkan","driver":"NVIDIA 580.159.04","timing":"timestamp_queries","palette":"storage",
        "draws":1,"instances":256,"vertices_per_instance":3273,"vertices_per_frame":837888,"frames":4,
        "size":[1280,720],"palette_entries":19,"palette_upload_bytes":311296,"palette_upload_ms":0.396493,
        "animation_ms":0.504894,"vertex_draw_ms":5.603456,"vertex_wall_ms":6.423998,"compute_skin_ms":0.027264,
        "compute_draw_ms":4.777472,"compute_wall_ms":5.342164,"compute_buffers":1,"dispatch_order":"instance-outer",
        "skin_alone":[{"order":"instance-outer","skin_ms":0.027264,"wall_ms":0.18297},
                      {"order":"instance-inner","skin_ms":0.028,"wall_ms":0.376095}]}"#;
    let real: CrowdReport = serde_json::from_str(row).unwrap();
    assert!(!real.compute_timestamps_suspect());
    let alone: Vec<f64> = real.skin_alone.iter().map(|a| real.alone_ms(a)).collect();
    assert_eq!(alone, [0.027264, 0.028]);
    assert_eq!(real.faster_order().unwrap().name(), "instance-outer");
    // 837,888 vertices in 0.027264 ms.
    let rate = real.alone_vertices_per_s(&real.skin_alone[0]);
    assert!((rate / 30.73e9 - 1.0).abs() < 1e-3, "{rate}");

    let lavapipe: CrowdReport =
        serde_json::from_str(&row.replace("NVIDIA 580.159.04", "llvmpipe (LLVM 15.0.6, 256 bits)"))
            .unwrap();
    assert!(lavapipe.compute_timestamps_suspect());
    assert_eq!(lavapipe.alone_ms(&lavapipe.skin_alone[1]), 0.376095);
}
