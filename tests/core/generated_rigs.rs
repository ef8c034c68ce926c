//! Generated rigs (src/rigs.rs) against an independent engine: each rig of a matrix covering
//! 1–8 influences, float/unorm8/unorm16 weights, u8/u16 joints, 2–40 joints, 0 or 3 morph
//! targets together with the skin, and non-uniform scale on/off is exported to a .glb,
//! re-imported, and dumped by us (CPU path, and GPU path when an adapter exists) and by the
//! three.js r187 runner (tools/oracle/three_dump.mjs) at t = 0, four irregular mid times and
//! the end of each animation (and at rest). The required bound is 1e-4 of the bounding-box
//! diagonal; both engines compute in f32 from the same f32 file data, so, as in
//! tests/core/oracle.rs, we require 5e-6 of the oracle dump's diagonal for positions and 2e-5 for
//! normals. Without node or tools/oracle/node_modules/three the oracle test fails in CI and
//! prints a loud SKIP elsewhere (`npm ci --prefix tools/oracle` installs it).
//!
//! Also: the generator is deterministic (same options → identical .glb bytes), every vertex
//! really uses up to `max_influences` joints, and the rest pose reproduces `B · POSITION`
//! (B = the skinned-mesh node's rest world matrix, recomputed here in f64 from the nodes' TRS).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::rigs::{RigOptions, generate_rig};
use glam::{DMat4, DVec3};
use skinview::anim::Interpolation;
use skinview::io::dump::{Dump, diff};
use skinview::io::gltf_export::{ExportOptions, JointEncoding, WeightEncoding, export_glb};
use skinview::scene::Scene;

const ORACLE_TOLERANCE_REL: f64 = 5e-6;
const NORMAL_TOLERANCE: f64 = 2e-5;
/// Rest pose vs B · POSITION (f64), relative to the diagonal.
const REST_TOLERANCE_REL: f64 = 1e-5;
/// Irregular sample points inside each clip, as fractions of its duration.
const MID_FRACTIONS: [f32; 4] = [0.137, 0.3829, 0.6154, 0.8731];

struct Case {
    name: &'static str,
    rig: RigOptions,
    joints: JointEncoding,
    weights: WeightEncoding,
}

fn rig(
    seed: u64,
    joints: usize,
    max_influences: usize,
    morph_targets: usize,
    verts_per_ring: usize,
    non_uniform_scale: bool,
) -> RigOptions {
    RigOptions {
        seed,
        joints,
        max_influences,
        morph_targets,
        verts_per_ring,
        non_uniform_scale,
    }
}

/// The rig matrix: influences 1..=8, every weight and joint type, 2–40 joints, morph 0/3,
/// non-uniform scale on/off.
fn cases() -> Vec<Case> {
    use JointEncoding::*;
    use WeightEncoding::*;
    vec![
        Case {
            name: "i1_j3_f32_u8",
            rig: rig(101, 3, 1, 0, 8, false),
            joints: U8,
            weights: F32,
        },
        Case {
            name: "i2_j5_un8_u16_m3",
            rig: rig(102, 5, 2, 3, 12, true),
            joints: U16,
            weights: Unorm8,
        },
        Case {
            name: "i3_j8_un16_u8",
            rig: rig(103, 8, 3, 0, 10, true),
            joints: U8,
            weights: Unorm16,
        },
        Case {
            name: "i4_j12_f32_u16_m3",
            rig: rig(104, 12, 4, 3, 16, true),
            joints: U16,
            weights: F32,
        },
        Case {
            name: "i5_j17_un16_u16",
            rig: rig(105, 17, 5, 0, 12, false),
            joints: U16,
            weights: Unorm16,
        },
        Case {
            name: "i6_j24_un8_u8_m3",
            rig: rig(106, 24, 6, 3, 10, true),
            joints: U8,
            weights: Unorm8,
        },
        Case {
            name: "i7_j9_f32_u8_m3",
            rig: rig(107, 9, 7, 3, 7, false),
            joints: U8,
            weights: F32,
        },
        Case {
            name: "i8_j40_f32_u8_m3",
            rig: rig(108, 40, 8, 3, 12, true),
            joints: U8,
            weights: F32,
        },
        Case {
            name: "i8_j30_un8_u16",
            rig: rig(109, 30, 8, 0, 8, false),
            joints: U16,
            weights: Unorm8,
        },
        Case {
            name: "i8_j20_un16_u16_m3",
            rig: rig(110, 20, 8, 3, 6, true),
            joints: U16,
            weights: Unorm16,
        },
        Case {
            name: "i4_j2_un16_u8_m3",
            rig: rig(111, 2, 4, 3, 16, true),
            joints: U8,
            weights: Unorm16,
        },
    ]
}

fn export_options(c: &Case) -> ExportOptions {
    ExportOptions {
        joints: c.joints,
        weights: c.weights,
        write_inverse_bind_matrices: true,
    }
}

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-genrigs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/oracle/three_dump.mjs")
}

/// Why the three.js runner cannot run here, if it cannot.
fn oracle_missing() -> Option<String> {
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return Some(format!(
                "`node --version` failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Err(e) => return Some(format!("node not found: {e}")),
    }
    let three =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/oracle/node_modules/three/package.json");
    if !three.is_file() {
        return Some(format!(
            "{} missing (run `npm ci --prefix tools/oracle`)",
            three.display()
        ));
    }
    None
}

/// Whether the three.js runner can run; in CI its absence fails the test, locally it is a
/// loud skip.
fn oracle_available(test: &str) -> bool {
    match oracle_missing() {
        None => true,
        Some(why) if common::in_ci() => panic!("CI=true and the three.js oracle cannot run: {why}"),
        Some(why) => {
            eprintln!("\n!!!!!!!!!! SKIPPING {test}: {why} !!!!!!!!!!\n");
            false
        }
    }
}

/// Dump of `glb` by the three.js runner.
fn oracle_dump(glb: &Path, anim: Option<usize>, times: &[f32], out: &Path) -> Dump {
    let mut cmd = Command::new("node");
    cmd.arg(oracle_script())
        .arg(glb)
        .arg("--anim")
        .arg(anim.map_or("none".to_string(), |a| a.to_string()));
    for &t in times {
        // The f32 time exactly, as a decimal of its f64 value.
        cmd.arg("--time").arg((t as f64).to_string());
    }
    cmd.arg("--out").arg(out);
    let o = cmd.output().expect("run node");
    assert!(
        o.status.success(),
        "three_dump failed on {} (anim {anim:?}):\n{}",
        glb.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out).expect("oracle output")).expect("oracle json");
    if let Some(w) = json["warnings"].as_array().filter(|w| !w.is_empty()) {
        println!(
            "  three_dump warnings for {} anim {anim:?}: {w:?}",
            glb.display()
        );
    }
    Dump::read(out).expect("oracle dump")
}

/// t = 0, irregular mid times and the end of animation `anim`, nudged off STEP key times
/// (where "the key before" is a matter of rounding, not of skinning).
fn sample_times(scene: &Scene, anim: usize) -> Vec<f32> {
    let a = &scene.animations[anim];
    let duration = a.duration_s();
    let step_keys: Vec<f32> = a
        .channels
        .iter()
        .filter(|c| c.sampler.interpolation == Interpolation::Step)
        .flat_map(|c| c.sampler.times_s.iter().copied())
        .collect();
    let mut times = vec![0.0];
    for f in MID_FRACTIONS {
        let mut t = duration * f;
        while step_keys.iter().any(|&k| (k - t).abs() < 1e-3) {
            t += 2.5e-3;
        }
        times.push(t);
    }
    times.push(duration);
    times
}

fn interpolation_summary(scene: &Scene, anim: usize) -> String {
    let a = &scene.animations[anim];
    let count = |i: Interpolation| {
        a.channels
            .iter()
            .filter(|c| c.sampler.interpolation == i)
            .count()
    };
    format!(
        "{}ch L{}/S{}/C{}",
        a.channels.len(),
        count(Interpolation::Linear),
        count(Interpolation::Step),
        count(Interpolation::CubicSpline)
    )
}

#[test]
fn generated_rigs_match_three_js() {
    if !oracle_available("generated_rigs_match_three_js") {
        return;
    }
    let ctx = common::gpu();
    let dir = work_dir();
    let mut failures = Vec::new();
    let mut worst = (0.0f64, 0.0f64);
    println!(
        "tolerances: position {ORACLE_TOLERANCE_REL:.0e} of the oracle diagonal, normal {NORMAL_TOLERANCE:.0e}; GPU: {}",
        ctx.map_or("none (skipped)".to_string(), |c| c.describe())
    );
    println!(
        "{:<20} {:>5} {:>5} {:>4} {:>20} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "rig", "verts", "joint", "infl", "anim", "diag", "cpu pos", "cpu nrm", "gpu pos", "gpu nrm"
    );
    for case in cases() {
        let scene =
            generate_rig(&case.rig).unwrap_or_else(|e| panic!("{}: generate: {e}", case.name));
        let bytes = export_glb(&scene, &export_options(&case))
            .unwrap_or_else(|e| panic!("{}: export: {e}", case.name));
        let path = dir.join(format!("{}.glb", case.name));
        std::fs::write(&path, &bytes).expect("write glb");
        let imported =
            skinview::io::load(&path).unwrap_or_else(|e| panic!("{}: import: {e}", case.name));
        let repairs: Vec<_> = imported
            .report
            .notes
            .iter()
            .filter(|n| n.repaired)
            .collect();
        assert!(
            repairs.is_empty(),
            "{}: the importer repaired a generated file: {repairs:?}",
            case.name
        );
        let infl = imported.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .map_or(0, |w| w.max_influences());
        let anims: Vec<Option<usize>> = std::iter::once(None)
            .chain((0..imported.animations.len()).map(Some))
            .collect();
        for anim in anims {
            let (times, label) = match anim {
                None => (vec![0.0], "rest".to_string()),
                Some(a) => (
                    sample_times(&imported, a),
                    format!("{a} {}", interpolation_summary(&imported, a)),
                ),
            };
            let out = dir.join(format!(
                "{}_{}.json",
                case.name,
                anim.map_or("rest".to_string(), |a| a.to_string())
            ));
            let oracle = oracle_dump(&path, anim, &times, &out);
            let diag = oracle.diagonal();
            let mut cols = Vec::new();
            let paths: Vec<common::Source> = if ctx.is_some() {
                vec![common::Source::CPU, common::GPU]
            } else {
                vec![common::Source::CPU]
            };
            for p in paths {
                let ours = common::dump(&imported, anim, &times, p, ctx, None)
                    .unwrap_or_else(|e| panic!("{}: dump {p:?}: {e}", case.name));
                let d = diff(&oracle, &ours).unwrap_or_else(|e| {
                    panic!("{} anim {anim:?} {p:?}: layout differs: {e}", case.name)
                });
                let rel = d.max_position / diag;
                worst = (worst.0.max(rel), worst.1.max(d.max_normal));
                cols.push(format!("{rel:>10.2e} {:>10.2e}", d.max_normal));
                // Written so that NaN fails.
                let within = rel <= ORACLE_TOLERANCE_REL && d.max_normal <= NORMAL_TOLERANCE;
                if !within {
                    let (_, ti, v) = d.worst;
                    failures.push(format!(
                        "{} anim {anim:?} {p:?}: position {rel:.3e} of diagonal (worst: t = {} s, vertex {v}), normal {:.3e}",
                        case.name, times[ti], d.max_normal
                    ));
                }
            }
            if ctx.is_none() {
                cols.push(format!("{:>10} {:>10}", "-", "-"));
            }
            println!(
                "{:<20} {:>5} {:>5} {:>4} {:>20} {:>9.3} {}",
                case.name,
                imported.meshes[0].primitives[0].vertex_count(),
                case.rig.joints,
                infl,
                label,
                diag,
                cols.join(" ")
            );
        }
    }
    println!(
        "worst: position {:.2e} of diagonal, normal {:.2e}",
        worst.0, worst.1
    );
    assert!(
        failures.is_empty(),
        "generated rigs differ from three.js:\n{}",
        failures.join("\n")
    );
}

#[test]
fn generator_is_deterministic() {
    for case in cases() {
        let a = export_glb(
            &generate_rig(&case.rig).expect("generate"),
            &export_options(&case),
        )
        .expect("export");
        let b = export_glb(
            &generate_rig(&case.rig).expect("generate"),
            &export_options(&case),
        )
        .expect("export");
        assert!(
            a == b,
            "{}: two exports of the same options differ",
            case.name
        );
        let other = RigOptions {
            seed: case.rig.seed + 1000,
            ..case.rig.clone()
        };
        let c = export_glb(
            &generate_rig(&other).expect("generate"),
            &export_options(&case),
        )
        .expect("export");
        assert!(a != c, "{}: another seed gave the same file", case.name);
    }
}

#[test]
fn rejects_out_of_range_options() {
    let ok = RigOptions::default();
    if let Err(e) = generate_rig(&ok) {
        panic!("the default options refused: {e}");
    }
    for bad in [
        RigOptions {
            joints: 1,
            ..ok.clone()
        },
        RigOptions {
            joints: 65,
            ..ok.clone()
        },
        RigOptions {
            max_influences: 0,
            ..ok.clone()
        },
        RigOptions {
            max_influences: 9,
            ..ok.clone()
        },
        RigOptions {
            morph_targets: 5,
            ..ok.clone()
        },
        RigOptions {
            verts_per_ring: 2,
            ..ok.clone()
        },
    ] {
        assert!(generate_rig(&bad).is_err(), "{bad:?} accepted");
    }
}

/// Every vertex keeps `min(max_influences, joints)` non-zero weights in the scene and in
/// float / unorm16 files; unorm8 may round the smallest to 0 (reported, checked ≥ 1).
#[test]
fn vertices_use_max_influences() {
    let dir = work_dir();
    for case in cases() {
        let scene = generate_rig(&case.rig).expect("generate");
        let want = case.rig.max_influences.min(case.rig.joints);
        let w = scene.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .expect("weights");
        let min_used = w
            .weights
            .chunks_exact(w.width)
            .map(|v| v.iter().filter(|&&x| x != 0.0).count())
            .min()
            .unwrap_or(0);
        assert_eq!(
            (w.max_influences(), min_used),
            (want, want),
            "{}: influences per vertex (max, min)",
            case.name
        );
        for (j, x) in w.joints.iter().zip(&w.weights) {
            assert!(
                *x >= 0.0 && (*j as usize) < case.rig.joints,
                "{}: bad influence ({j}, {x})",
                case.name
            );
        }
        for v in w.weights.chunks_exact(w.width) {
            let s: f64 = v.iter().map(|&x| x as f64).sum();
            assert!((s - 1.0).abs() < 1e-6, "{}: weights sum to {s}", case.name);
        }
        let path = dir.join(format!("{}_infl.glb", case.name));
        std::fs::write(
            &path,
            export_glb(&scene, &export_options(&case)).expect("export"),
        )
        .expect("write");
        let imported = skinview::io::load(&path).expect("import");
        let got = imported.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .expect("weights")
            .max_influences();
        println!(
            "{:<20} {:?}: max influences used {got} (wanted {want})",
            case.name, case.weights
        );
        if case.weights == WeightEncoding::Unorm8 {
            assert!(
                got >= 1 && got <= want,
                "{}: {got} influences after unorm8",
                case.name
            );
        } else {
            assert_eq!(
                got, want,
                "{}: max influences after export/import",
                case.name
            );
        }
    }
}

/// Rest world matrix of node `i` in f64 from the scene's TRS (independent of our pose code).
fn rest_world_f64(scene: &Scene, i: usize) -> DMat4 {
    let n = &scene.nodes[i];
    let r = n.rest.rotation.as_dquat().normalize();
    let local = n.matrix.map(|m| m.as_dmat4()).unwrap_or_else(|| {
        DMat4::from_scale_rotation_translation(
            n.rest.scale.as_dvec3(),
            r,
            n.rest.translation.as_dvec3(),
        )
    });
    match n.parent {
        Some(p) => rest_world_f64(scene, p) * local,
        None => local,
    }
}

fn check_rest(name: &str, scene: &Scene) {
    let draw = scene.draws[0];
    assert!(draw.skin.is_some(), "{name}: the draw is skinned");
    let b = rest_world_f64(scene, draw.node);
    assert!(
        !b.abs_diff_eq(DMat4::IDENTITY, 1e-3),
        "{name}: the mesh node's world matrix should not be the identity"
    );
    let prim = scene.primitive(&draw);
    let expected: Vec<DVec3> = prim
        .positions
        .iter()
        .map(|p| b.transform_point3(p.as_dvec3()))
        .collect();
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in &expected {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    let diag = (hi - lo).length();
    // Rest pose, and t = 0 of each animation (its first keys are the rest values).
    let mut runs: Vec<Option<usize>> = vec![None];
    runs.extend((0..scene.animations.len()).map(Some));
    for anim in runs {
        let dump =
            common::dump(scene, anim, &[0.0], common::Source::CPU, None, None).expect("dump");
        let got = &dump.meshes[0].positions_by_time[0];
        let worst = expected
            .iter()
            .zip(got.chunks_exact(3))
            .map(|(e, g)| (DVec3::new(g[0] as f64, g[1] as f64, g[2] as f64) - *e).length())
            .fold(0.0, f64::max);
        println!(
            "{name:<24} anim {anim:?} t=0: max |skinned - B·POSITION| = {:.2e} of diagonal",
            worst / diag
        );
        assert!(
            worst <= REST_TOLERANCE_REL * diag,
            "{name} anim {anim:?}: rest pose is {:.3e} of the diagonal off B · POSITION",
            worst / diag
        );
    }
}

#[test]
fn rest_pose_is_mesh_node_world_times_position() {
    let dir = work_dir();
    for case in cases() {
        let scene = generate_rig(&case.rig).expect("generate");
        check_rest(case.name, &scene);
        let path = dir.join(format!("{}_rest.glb", case.name));
        std::fs::write(
            &path,
            export_glb(&scene, &export_options(&case)).expect("export"),
        )
        .expect("write");
        let imported = skinview::io::load(&path).expect("import");
        check_rest(&format!("{} (imported)", case.name), &imported);
    }
}

/// The built-in rigs exported to glTF open in three.js and skin the same there (glTF export
/// is there so that other tools open them), every animation at start, two mid times and end.
#[test]
fn exported_builtin_rigs_match_three_js() {
    if !oracle_available("exported_builtin_rigs_match_three_js") {
        return;
    }
    let dir = work_dir();
    for (name, scene) in [
        ("arm", skinview::builtin::woodland_arm().unwrap()),
        ("humanoid", skinview::builtin::humanoid().unwrap()),
    ] {
        let glb = dir.join(format!("builtin_{name}.glb"));
        skinview::io::gltf_export::write_glb(&scene, &ExportOptions::default(), &glb).unwrap();
        let back = skinview::io::load(&glb).unwrap();
        for anim in 0..back.animations.len() {
            let d = back.animations[anim].duration_s();
            let times = [0.0, d * 0.37, d * 0.71, d];
            let oracle = oracle_dump(
                &glb,
                Some(anim),
                &times,
                &dir.join(format!("builtin_{name}_{anim}.json")),
            );
            let ours =
                common::dump(&back, Some(anim), &times, common::Source::CPU, None, None).unwrap();
            let e = diff(&oracle, &ours).unwrap();
            let rel = e.max_position / oracle.diagonal();
            println!(
                "builtin {name} anim {anim}: {rel:.2e} of diagonal, normals {:.2e}",
                e.max_normal
            );
            assert!(
                rel <= ORACLE_TOLERANCE_REL && e.max_normal <= NORMAL_TOLERANCE,
                "builtin {name} anim {anim}: {rel:e} / {:e}",
                e.max_normal
            );
        }
    }
}
