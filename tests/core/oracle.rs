//! `skinview dump` (CPU, GPU capture shader, GPU draw path) against an independent engine: every file in
//! ../shared/oracle_ref (three.js r187 output for the shared models and rigs).
//! The required bound is 1e-4 of the model's bounding-box diagonal. Both engines compute in
//! f32 from f32 data, so we hold ourselves to 5e-6 (measured on lavapipe, 2026-11-22: worst
//! 5.5e-7, RiggedFigure; SimpleSkin's oracle times fall on keys, where normalising its
//! non-unit rotation keys changes nothing).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use skinview::io::dump::{Dump, diff};

const ORACLE_TOLERANCE_REL: f64 = 5e-6;
/// Normals are unit vectors computed in f32 by both (measured worst 1.7e-6).
const NORMAL_TOLERANCE: f64 = 2e-5;

fn oracle_files() -> Vec<std::path::PathBuf> {
    let dir = common::shared_dir().join("oracle_ref");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("oracle_ref")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    // Every model and rig has its reference outputs.
    for m in common::all_models() {
        let stem = m.file_stem().unwrap().to_string_lossy().to_string();
        assert!(
            v.iter().any(|f| f
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{stem}_")))),
            "no oracle output for {stem} in {}",
            dir.display()
        );
    }
    v
}

// `!(x <= tol)` also catches NaN errors.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn check(path: common::Source) {
    let ctx = match path.skinning {
        skinview::gpu::Skinning::Cpu => None,
        _ => match common::gpu() {
            Some(c) => Some(c),
            None => return,
        },
    };
    let mut failures = Vec::new();
    for file in oracle_files() {
        let oracle = Dump::read(&file).expect("oracle json");
        let stem = oracle
            .model
            .trim_end_matches(".glb")
            .trim_end_matches(".gltf")
            .to_string();
        let scene = skinview::io::load(&common::model(&stem)).expect("load");
        let times: Vec<f32> = oracle.times.iter().map(|&t| t as f32).collect();
        let ours = common::dump(&scene, oracle.anim, &times, path, ctx, None).expect("dump");
        let d = diff(&oracle, &ours)
            .unwrap_or_else(|e| panic!("{}: layout differs: {e}", file.display()));
        let diag = oracle.diagonal();
        let rel = d.max_position / diag;
        println!(
            "{:<40} {:?}: max position error {:.2e} of diagonal, max normal error {:.2e}",
            file.file_name().unwrap().to_string_lossy(),
            path,
            rel,
            d.max_normal
        );
        if !(rel <= ORACLE_TOLERANCE_REL) || !(d.max_normal <= NORMAL_TOLERANCE) {
            failures.push(format!(
                "{}: position {rel:.3e} of diagonal (worst entry/time/vertex {:?}), normal {:.3e}",
                file.display(),
                d.worst,
                d.max_normal
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "differs from the independent engine:\n{}",
        failures.join("\n")
    );
}

#[test]
fn cpu_dump_matches_independent_engine() {
    check(common::Source::CPU);
}

#[test]
fn gpu_dump_matches_independent_engine() {
    check(common::GPU);
}

/// The draw's own vertex stage (read back point by point) against the independent engine.
#[test]
fn gpu_draw_path_matches_independent_engine() {
    check(common::Source::gpu(skinview::gpu::CapturePath::Draw));
}

/// The uniform palette path (each mesh partitioned into submeshes of at most 12 bones, where
/// no shared model or rig drops an influence) against the independent engine.
#[test]
fn gpu_uniform_palette_matches_independent_engine() {
    check(common::Source {
        palette: Some(skinview::gpu::PaletteSource::Uniform { bones: 12 }),
        ..common::Source::gpu(skinview::gpu::CapturePath::Draw)
    });
}
