//! FBX import against the glTF it was made from: Blender 3.4 converted the shared models
//! (scripts/make-fbx-test-data.sh), and each FBX must skin to the same world-space vertices
//! as its source — on the CPU and, on the GPU, to its own CPU reference. Compared at the
//! source's key times: there Blender keeps the source's value exactly (it puts key t on
//! frame t × 24 and bakes whole frames), while between keys it interpolates quaternions its
//! own way. Also: `export` of an FBX, the conventions (units, axes, influences, morph
//! targets, clips) and broken files.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code

use crate::common;

use skinview::compare::{CompareOptions, compare};
use skinview::diff::{Diff, DiffOptions, Differ, Times};
use skinview::io::ModelSource;
use skinview::scene::Scene;

/// Distances within this share of the diagonal are "the same vertices" (the required bound;
/// measured: 3e-7 to 1.3e-6, the f32 round trip through Blender).
const EXACT_REL: f64 = 1e-4;

fn load(path: &std::path::Path) -> Scene {
    ModelSource::File(path.to_path_buf()).load().unwrap().scene
}

/// `fbx` against `source` at the source's key times.
fn diff(fbx: &Scene, source: &Scene) -> Diff {
    let options = DiffOptions {
        times: Times::KeysOfB,
        ..Default::default()
    };
    Differ::new(fbx, source, options)
        .unwrap()
        .run(|_, _| {})
        .unwrap()
}

/// A clip Blender cannot carry over exactly: the source's clip name, the looser bound (share
/// of the diagonal) and why.
type Loose = (&'static str, f64, &'static str);

/// The models Blender carries over exactly, and the clips it cannot.
const MODELS: [(&str, &[Loose]); 5] = [
    ("CesiumMan", &[]),
    ("RiggedFigure", &[]),
    ("RiggedSimple", &[]),
    ("SimpleSkin", &[]),
    (
        "Fox",
        &[(
            "Run",
            2e-2,
            "keys every 0.048 s, off Blender's 24 fps grid: Blender bakes whole frames, so the \
             FBX interpolates its own resampling there (measured 1.3e-2)",
        )],
    ),
];

#[test]
fn fbx_from_blender_skins_like_its_source() {
    for (stem, loose) in MODELS {
        let fbx = load(&common::fbx::converted(stem));
        let source = load(&common::model(stem));
        let d = diff(&fbx, &source);
        let v = &d.vertices;
        assert_eq!(
            (v.a_unmatched, v.b_unmatched),
            (0, 0),
            "{stem}: vertices left unpaired {}",
            d.paired_where()
        );
        assert!(
            d.clips_only_in_b.is_empty(),
            "{stem}: clips of the source missing from the FBX: {:?}",
            d.clips_only_in_b
        );
        assert_eq!(
            d.clips.len(),
            source.animations.len(),
            "{stem}: clips compared"
        );
        if stem == "Fox" {
            // Blender's `root|Run_root` is the source's `Run`, found by name, not by order
            // (the stacks come out sorted: Run, Survey, Walk; the source has Survey first).
            for c in &d.clips {
                assert_eq!(c.matched_by, Some(skinview::diff::MatchedBy::ActionName));
                assert_eq!(skinview::diff::names::action_name(&c.name), c.b_name);
            }
        }
        for c in &d.clips {
            let bound = loose
                .iter()
                .find(|(name, ..)| *name == c.b_name)
                .map_or(EXACT_REL, |l| l.1);
            println!(
                "{stem} {:?} ({}): {} frames, largest {:.2e} of the diagonal (bound {bound:.0e})",
                c.name, c.b_name, c.frames, c.max_rel
            );
            assert!(
                c.max_rel <= bound,
                "{stem} clip {:?}: {:.3e} of the diagonal, over {bound:e}",
                c.name,
                c.max_rel
            );
        }
        // The weights and bind matrices came through: no joint is named (where every joint
        // is matched; SimpleSkin's source joints are unnamed and Blender names them `Node_1`).
        let all_matched = d.joints.unmatched_a.is_empty() && d.joints.unmatched_b.is_empty();
        assert!(
            !all_matched || d.joints.changed.is_empty(),
            "{stem}: joints differ: {:?}",
            d.joints.changed
        );
    }
}

/// The generated rigs have non-uniformly scaled joints (Blender's bones cannot hold the
/// shear a non-uniform parent scale gives a rotated child), CUBICSPLINE and off-grid key
/// times, and a second animated object whose actions Blender's exporter also applies to the
/// armature (extra clips `armature|anim_0_mesh_parent`). Checked: every joint, influence
/// (8 and 6 per vertex: more than 4 kept), morph target and weight came through; at the first
/// key (the bind pose) the skin is within 1e-2 of the diagonal (measured 1.4e-3 to 5.0e-3,
/// the lost shear).
#[test]
fn fbx_rigs_keep_joints_influences_and_morph_targets() {
    for stem in [
        "rig_seed1",
        "rig_seed4_8inf_morph_ubyte",
        "rig_seed5_40j_6inf_ushort",
    ] {
        let fbx = load(&common::fbx::converted(stem));
        let source = load(&common::model(stem));
        assert_eq!(fbx.joint_count(), source.joint_count(), "{stem}: joints");
        assert_eq!(
            fbx.max_influences(),
            source.max_influences(),
            "{stem}: influences"
        );
        let targets = |s: &Scene| {
            s.meshes
                .iter()
                .map(|m| m.morph_target_count())
                .sum::<usize>()
        };
        assert_eq!(targets(&fbx), targets(&source), "{stem}: morph targets");
        let options = DiffOptions {
            times: Times::Keys,
            match_radius_rel: 1e-2,
            ..Default::default()
        };
        let mut differ = Differ::new(&fbx, &source, options).unwrap();
        let clip = differ.clips()[0];
        let first = differ.frame(Some(clip), 0.0).unwrap();
        let rel = first.max / differ.pairing().diagonal;
        println!("{stem}: at the first key {rel:.2e} of the diagonal");
        assert!(
            rel <= 1e-2,
            "{stem}: {rel:.3e} of the diagonal at the bind pose"
        );
        let d = differ.run(|_, _| {}).unwrap();
        assert_eq!(
            d.vertices.a_unmatched + d.vertices.b_unmatched,
            0,
            "{stem}: pairing"
        );
        for j in &d.joints.changed {
            assert!(
                j.weight_max_difference <= 1e-3,
                "{stem} joint {}: weights differ by {}",
                j.name,
                j.weight_max_difference
            );
        }
    }
}

/// The FBX's GPU skinning (every path) agrees with its CPU reference, as every glTF must.
#[test]
fn fbx_gpu_matches_cpu_reference() {
    let Some(ctx) = common::gpu() else { return };
    for stem in ["CesiumMan", "Fox", "rig_seed4_8inf_morph_ubyte"] {
        let scene = load(&common::fbx::converted(stem));
        let anims: Vec<Option<usize>> = (0..scene.animations.len()).map(Some).collect();
        let options = CompareOptions {
            frames: 5,
            ..Default::default()
        };
        let cmp = compare(ctx, &scene, &anims, &options, |_, _| {}).unwrap();
        let worst = cmp
            .anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_error)
            .fold(0.0, f64::max);
        println!(
            "{stem}.fbx: GPU vs CPU {:.2e} of the diagonal",
            worst / cmp.diagonal
        );
        assert!(
            cmp.passed,
            "{stem}.fbx: GPU and CPU disagree: {:.3e}",
            worst / cmp.diagonal
        );
    }
}

/// Blender writes centimetres (UnitScaleFactor 100) with Z-up objects turned to Y-up; the
/// import is in metres and +Y up (the first test's distances of 1e-6 of the diagonal say so),
/// with no joint carrying the conversion as a scale, and clip names and times as written.
#[test]
fn fbx_units_axes_and_clips_are_gltfs() {
    let fbx = load(&common::fbx::converted("CesiumMan"));
    let source = load(&common::model("CesiumMan"));
    // No joint carries the unit conversion as a scale.
    for &j in &fbx.skins[0].joints {
        let s = fbx.nodes[j].rest.scale;
        assert!(
            (s - glam::Vec3::ONE).abs().max_element() < 1e-4,
            "joint scale {s}"
        );
    }
    let names: Vec<_> = load(&common::fbx::converted("Fox"))
        .animations
        .iter()
        .map(|a| a.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names.len(), 3, "Fox's three stacks: {names:?}");
    assert!(names.iter().any(|n| n == "root|Survey_root"), "{names:?}");
    // The source's first key is at 1/24 s; the FBX keeps it there (clip end 2 s, as the source).
    assert!((fbx.animations[0].duration_s() - source.animations[0].duration_s()).abs() < 1e-4);
}

/// `export FILE.fbx --out FILE.glb` converts: the glTF skins as the FBX does, exactly.
#[test]
fn export_converts_fbx_to_glb() {
    let dir = std::env::temp_dir().join("skinview-fbx-export");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for stem in ["CesiumMan", "rig_seed4_8inf_morph_ubyte"] {
        let fbx_path = common::fbx::converted(stem);
        let out = dir.join(format!("{stem}.glb"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
            .arg("export")
            .arg(&fbx_path)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::output_text(&o));
        let fbx = load(&fbx_path);
        let glb = load(&out);
        assert_eq!(glb.animations.len(), fbx.animations.len());
        let options = DiffOptions {
            times: Times::Keys,
            ..Default::default()
        };
        let d = Differ::new(&glb, &fbx, options)
            .unwrap()
            .run(|_, _| {})
            .unwrap();
        assert_eq!(
            d.vertices.method,
            skinview::diff::MatchMethod::Index,
            "{stem}: same vertices"
        );
        let worst = d.clips.iter().map(|c| c.max_rel).fold(0.0, f64::max);
        assert!(
            worst <= 1e-6,
            "{stem}: the export moves vertices by {worst:.3e}"
        );
    }
}

/// Broken files are errors naming the file and what ufbx found.
#[test]
fn broken_fbx_files_are_named_errors() {
    let good = std::fs::read(common::fbx::converted("RiggedSimple")).unwrap();
    let cases: [(&str, Vec<u8>); 4] = [
        ("empty", Vec::new()),
        ("garbage", b"this is not an FBX file at all".repeat(10)),
        ("truncated", good[..good.len() / 3].to_vec()),
        ("header only", good[..27].to_vec()),
    ];
    for (what, bytes) in cases {
        let err = skinview::io::fbx::import_slice(&bytes, "broken.fbx")
            .err()
            .unwrap_or_else(|| panic!("{what}: imported"));
        let text = err.to_string();
        println!("{what}: {text}");
        assert!(text.starts_with("broken.fbx: "), "{what}: {text}");
    }
}

/// Hostile values in an otherwise good file (the tests' ASCII arm, edited): each is an
/// error naming the file and the FBX element, or a reported repair; never a panic or NaN
/// vertices.
#[test]
fn hostile_fbx_values_are_named_errors_or_reported_repairs() {
    use common::fbx::AsciiArm;
    let good = AsciiArm::default().text();
    let edit = |from: &str, to: &str| {
        assert!(good.contains(from), "the template has {from:?}");
        good.replacen(from, to, 1)
    };
    let errors = [
        (
            "NaN position",
            edit("a: 0,-1,-1,0,1", "a: nan,-1,-1,0,1"),
            "Geometry \"Tube\": vertex position 0",
        ),
        (
            "infinite position",
            edit("a: 0,-1,-1,0,1", "a: 1e400,-1,-1,0,1"),
            "Geometry \"Tube\": vertex position 0",
        ),
        (
            "NaN rest",
            edit("\"A\",10,0,0", "\"A\",nan,0,0"),
            "Model \"Lower\": rest transform",
        ),
        (
            "NaN key",
            edit("a: 0,90", "a: 0,nan"),
            "AnimationStack \"Bend\": Model \"Lower\" has a key at",
        ),
        (
            "bad polygon index",
            edit("a: 0,1,5,-5", "a: 0,1,5000,-5"),
            "an index out of range",
        ),
    ];
    for (what, text, expect) in errors {
        let err = skinview::io::fbx::import_slice(text.as_bytes(), "arm.fbx")
            .err()
            .unwrap_or_else(|| panic!("{what}: imported"))
            .to_string();
        println!("{what}: {err}");
        assert!(
            err.starts_with("arm.fbx: ") && err.contains(expect),
            "{what}: {err}"
        );
    }
    // A cluster naming vertex 8000 of 20: ufbx drops the weight, the vertex's weights are
    // renormalised and the repair reported.
    let scene = skinview::io::fbx::import_slice(
        edit("a: 8,9,10,11", "a: 8000,9,10,11").as_bytes(),
        "arm.fbx",
    )
    .unwrap();
    let notes: Vec<String> = scene
        .report
        .notes
        .iter()
        .map(|n| n.message.clone())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("1 of 20 vertices had weights not summing to 1")),
        "{notes:?}"
    );
    // A clip to 1e8 s bakes to a bounded number of keys.
    let long = AsciiArm {
        clip_end_s: 1e8,
        ..Default::default()
    };
    let scene = skinview::io::fbx::import_slice(long.text().as_bytes(), "arm.fbx").unwrap();
    let keys: usize = scene.animations[0]
        .channels
        .iter()
        .map(|c| c.sampler.times_s.len())
        .sum();
    assert!(
        keys <= 2 * skinview::io::fbx::MAX_SEGMENTS_PER_KEY + 2,
        "{keys} keys"
    );
}

/// Files cut short, a header alone, a future version, garbage after a header: each import
/// is an error naming the file and what is wrong, or loads with a warning saying so (a
/// binary file cut between records; an ASCII file cut between sections, which reads as the
/// smaller file it then is: a mesh in no node, or no mesh). Never silent.
#[test]
fn cut_and_forged_fbx_files_never_load_silently() {
    use skinview::io::fbx::import_slice;
    let binary = std::fs::read(common::fbx::converted("RiggedSimple")).unwrap();
    let ascii = common::fbx::AsciiArm::default().text().into_bytes();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for (kind, bytes) in [("binary", &binary), ("ascii", &ascii)] {
        let n = bytes.len();
        let mut cuts: Vec<usize> = (1..48).map(|k| n * k / 48).collect();
        cuts.extend([n - 98, n - 16, n - 1]);
        // (A cut of trailing whitespace alone leaves the whole file.)
        for cut in cuts
            .into_iter()
            .filter(|&c| !bytes[c..].iter().all(u8::is_ascii_whitespace))
        {
            cases.push((format!("{kind} cut at {cut} of {n}"), bytes[..cut].to_vec()));
        }
    }
    let mut future = binary[..27].to_vec();
    future[23..27].copy_from_slice(&99_000u32.to_le_bytes());
    future.extend(vec![0u8; 200]);
    cases.push(("version 99000".into(), future));
    let mut garbage = binary[..27].to_vec();
    garbage.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    cases.push(("header and garbage".into(), garbage));
    cases.push((
        "ASCII header comment alone".into(),
        b"; FBX 7.4.0 project file\n; nothing\n".to_vec(),
    ));
    for (what, bytes) in cases {
        match import_slice(&bytes, "cut.fbx") {
            Err(e) => {
                let text = e.to_string();
                assert!(text.starts_with("cut.fbx: "), "{what}: {text}");
                assert!(!text.contains("gives no detail"), "{what}: {text}");
            }
            Ok(scene) => {
                let warned = scene.report.notes.iter().any(|n| !n.repaired);
                assert!(warned, "{what}: loaded without a word");
                if what.starts_with("binary") {
                    let says = scene
                        .report
                        .notes
                        .iter()
                        .any(|n| n.message.contains("cut short"));
                    assert!(says, "{what}: {:?}", scene.report.notes);
                }
            }
        }
    }
    // The version is named; a file cut inside a record names the record.
    let mut future = binary[..27].to_vec();
    future[23..27].copy_from_slice(&99_000u32.to_le_bytes());
    future.extend(vec![0u8; 200]);
    let e = import_slice(&future, "v.fbx").unwrap_err().to_string();
    assert!(e.contains("99000"), "{e}");
    let e = import_slice(&binary[..binary.len() / 2], "half.fbx")
        .unwrap_err()
        .to_string();
    assert!(e.contains("record \"") && e.contains("cut short"), "{e}");
    // An ASCII file cut inside a block names the block and the line it opened at.
    let text = common::fbx::AsciiArm::default().text();
    let cut = text.find("PolygonVertexIndex").unwrap() + 30;
    let e = import_slice(&text.as_bytes()[..cut], "a.fbx")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line ") && e.contains("PolygonVertexIndex"),
        "{e}"
    );
}

/// A cluster listing vertices past the mesh's: ufbx drops them with their weights, and the
/// import says so for that cluster.
#[test]
fn cluster_indices_past_the_mesh_are_reported() {
    let text = common::fbx::AsciiArm::default().text();
    // The Upper cluster's first index (0) becomes 999 (the arm has 20 vertices).
    let at = text.find("SubDeformer::Upper").unwrap();
    let indexes = at + text[at..].find("a: ").unwrap() + 3;
    let edited = format!("{}999{}", &text[..indexes], &text[indexes + 1..]);
    let scene = skinview::io::fbx::import_slice(edited.as_bytes(), "arm.fbx").unwrap();
    let note = scene
        .report
        .notes
        .iter()
        .find(|n| n.field.contains("cluster 0"))
        .unwrap_or_else(|| panic!("{:?}", scene.report.notes));
    assert!(
        note.message.contains("1 of its") && note.message.contains("past"),
        "{note:?}"
    );
}

/// A file with no mesh (an FBX header comment alone) is an error with exit 2 for every
/// command that draws or skins, and `info` says it has none.
#[test]
fn commands_that_draw_or_skin_refuse_a_file_without_a_mesh() {
    let dir = std::env::temp_dir().join(format!("skinview-no-mesh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("empty.fbx");
    std::fs::write(&file, "; FBX 7.4.0 project file\n; nothing else\n").unwrap();
    let f = file.to_str().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (png, json) = (out("x.png"), out("x.json"));
    let commands: [Vec<&str>; 6] = [
        vec!["render", f, "--out", &png],
        vec!["dump", f, "--time", "0", "--out", &json],
        vec!["compare", f, "--frames", "1"],
        vec!["view", f, "--frames", "1"],
        vec!["bench", f, "--frames", "1"],
        vec!["diff", f, f],
    ];
    for args in commands {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
            .args(&args)
            .output()
            .unwrap();
        let text = common::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("empty.fbx") && text.contains("nothing to draw"),
            "{args:?}: {text}"
        );
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(["info", f])
        .output()
        .unwrap();
    assert!(
        common::output_text(&o).contains("no mesh"),
        "{}",
        common::output_text(&o)
    );
}
