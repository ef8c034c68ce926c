//! Makes the test data a fresh clone needs when `../shared` is absent (`scripts/setup.sh`
//! runs it after downloading the Khronos sample models into `DIR/models`):
//! - `DIR/rigs/`: rigs from the project's own generator (`tests/common/rigs.rs`) with the
//!   options `../shared/rigs` lists (1–8 influences, STEP/LINEAR/CUBICSPLINE, non-uniform
//!   scale, morph + skin, u8/u16 joints, float/unorm weights);
//! - `DIR/oracle_ref/`: what the independent engine (three.js r187, `tools/oracle`) computes
//!   for every model and rig at t = 0, mid and end of each animation, in the `dump` layout.
//!
//! Usage: `cargo run --example make_test_data -- DIR` (Node.js and `tools/oracle`'s
//! node_modules must be installed; `scripts/setup.sh` does both).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    missing_docs
)]

#[allow(dead_code)]
#[path = "../tests/common/rigs.rs"]
mod rigs;
// The rig generator's random numbers (`rigs.rs` uses `super::rng`).
#[path = "../tests/common/rng.rs"]
mod rng;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use rigs::{RigOptions, generate_rig};
use skinview::io::gltf_export::{ExportOptions, JointEncoding, WeightEncoding, export_glb};

/// The rigs of `../shared/rigs/README.md`, by name and generator options.
fn rigs() -> Vec<(&'static str, RigOptions, JointEncoding, WeightEncoding)> {
    let base = RigOptions::default();
    vec![
        (
            "rig_seed1",
            RigOptions {
                seed: 1,
                ..base.clone()
            },
            JointEncoding::U16,
            WeightEncoding::F32,
        ),
        (
            "rig_seed2",
            RigOptions {
                seed: 2,
                ..base.clone()
            },
            JointEncoding::U16,
            WeightEncoding::F32,
        ),
        (
            "rig_seed3",
            RigOptions {
                seed: 3,
                ..base.clone()
            },
            JointEncoding::U16,
            WeightEncoding::F32,
        ),
        (
            "rig_seed4_8inf_morph_ubyte",
            RigOptions {
                seed: 4,
                max_influences: 8,
                morph_targets: 3,
                ..base.clone()
            },
            JointEncoding::U8,
            WeightEncoding::Unorm8,
        ),
        (
            "rig_seed5_40j_6inf_ushort",
            RigOptions {
                seed: 5,
                joints: 40,
                max_influences: 6,
                verts_per_ring: 12,
                ..base
            },
            JointEncoding::U16,
            WeightEncoding::Unorm16,
        ),
    ]
}

fn model_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for sub in ["models", "rigs"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let files: Vec<PathBuf> = if p.is_dir() {
                std::fs::read_dir(&p)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .collect()
            } else {
                vec![p]
            };
            v.extend(
                files
                    .into_iter()
                    .filter(|f| f.extension().is_some_and(|x| x == "glb" || x == "gltf")),
            );
        }
    }
    v.sort();
    v
}

fn run(dir: &Path) -> Result<(), String> {
    let rigs_dir = dir.join("rigs");
    std::fs::create_dir_all(&rigs_dir).map_err(|e| e.to_string())?;
    for (name, options, joints, weights) in rigs() {
        let scene = generate_rig(&options).map_err(|e| e.to_string())?;
        let bytes = export_glb(
            &scene,
            &ExportOptions {
                joints,
                weights,
                ..Default::default()
            },
        )
        .map_err(|e| e.to_string())?;
        skinview::io::output::write_file(&rigs_dir.join(format!("{name}.glb")), &bytes)
            .map_err(|e| e.to_string())?;
        println!(
            "rig {name}: {} vertices, {} joints",
            scene.vertex_count(),
            scene.joint_count()
        );
    }
    let oracle_dir = dir.join("oracle_ref");
    std::fs::create_dir_all(&oracle_dir).map_err(|e| e.to_string())?;
    let dump = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/oracle/three_dump.mjs");
    for model in model_files(dir) {
        let scene = skinview::io::load(&model).map_err(|e| e.to_string())?;
        let stem = model.file_stem().unwrap().to_string_lossy().to_string();
        let jobs: Vec<(String, Vec<f32>, String)> = if scene.animations.is_empty() {
            vec![("none".into(), vec![0.0], format!("{stem}_static.json"))]
        } else {
            (0..scene.animations.len())
                .map(|i| {
                    let d = scene.animations[i].duration_s();
                    (
                        i.to_string(),
                        vec![0.0, 0.5 * d, d],
                        format!("{stem}_anim{i}.json"),
                    )
                })
                .collect()
        };
        for (anim, times, file) in jobs {
            let mut cmd = Command::new("node");
            cmd.arg(&dump).arg(&model).args(["--anim", &anim]);
            for &t in &times {
                // The f32 time's exact value as a double: its shortest f32 decimal read as a
                // JS double lands slightly off, e.g. just before a STEP key at the clip's end.
                cmd.args(["--time", &f64::from(t).to_string()]);
            }
            let out = oracle_dir.join(&file);
            let status = cmd.arg("--out").arg(&out).status().map_err(|e| {
                format!("cannot run node ({e}); install Node.js (scripts/setup.sh does)")
            })?;
            if !status.success() {
                return Err(format!(
                    "three.js oracle failed on {} anim {anim}",
                    model.display()
                ));
            }
            println!("oracle {file}");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: cargo run --example make_test_data -- DIR");
        return ExitCode::from(2);
    };
    match run(Path::new(&dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("make_test_data: {e}");
            ExitCode::FAILURE
        }
    }
}
