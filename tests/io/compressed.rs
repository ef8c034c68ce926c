//! Compressed glTF in: `EXT_meshopt_compression` and `KHR_meshopt_compression`
//! decoded, against gltfpack's own uncompressed output of the same model (made at test time,
//! `tests/common/gltfpack.rs`). The meshopt codecs are lossless, so a compressed file
//! (`-c`) decodes to exactly the quantised file gltfpack writes without compression: same
//! vertices, indices, weights, and the same skinned result at every key. The filters of
//! `-cc` (octahedral normals, quaternion rotations, exponential floats) re-quantise; their
//! result stays within the filter's precision. Broken compressed views are refused naming
//! the view and what is wrong; Draco is refused with advice.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use std::path::{Path, PathBuf};

use skinview::Scene;
use skinview::diff::{DiffOptions, Differ, Times};

use skinview::compare::run::{Source, sample_frames};
use skinview::gpu::GpuContext;

use crate::common::{self, glb, gltfpack, gltfpack_model};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-compressed-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn load(path: &Path) -> Scene {
    skinview::io::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The models checked: skinned samples of every kind (one and many meshes, several clips,
/// morph targets with skinning, 8 influences in 8-bit weights).
const MODELS: [&str; 5] = [
    "CesiumMan",
    "Fox",
    "RiggedFigure",
    "RiggedSimple",
    "rig_seed4_8inf_morph_ubyte",
];

/// Triangles, each rotated to start at its smallest index (winding kept), sorted.
fn triangles(indices: &[u32]) -> Vec<[u32; 3]> {
    let mut t: Vec<[u32; 3]> = indices
        .chunks_exact(3)
        .map(|c| {
            let k = (0..3).min_by_key(|&i| c[i]).unwrap();
            [c[k], c[(k + 1) % 3], c[(k + 2) % 3]]
        })
        .collect();
    t.sort_unstable();
    t
}

/// `diff` of two scenes at both files' key times.
fn diff_at_keys(a: &Scene, b: &Scene) -> skinview::diff::Diff {
    let options = DiffOptions {
        times: Times::Keys,
        ..DiffOptions::default()
    };
    Differ::new(a, b, options).unwrap().run(|_, _| {}).unwrap()
}

fn same_geometry(a: &Scene, b: &Scene, what: &str) {
    assert_eq!(a.draws.len(), b.draws.len(), "{what}: draws");
    for (da, db) in a.draws.iter().zip(&b.draws) {
        let (pa, pb) = (a.primitive(da), b.primitive(db));
        assert_eq!(pa.positions, pb.positions, "{what}: positions");
        assert_eq!(pa.normals, pb.normals, "{what}: normals");
        assert_eq!(pa.uvs, pb.uvs, "{what}: uvs");
        // The index codec stores triangles rotated (same winding): compare them as sets.
        assert_eq!(
            triangles(&pa.indices),
            triangles(&pb.indices),
            "{what}: triangles"
        );
        assert_eq!(pa.skin_weights, pb.skin_weights, "{what}: weights");
        assert_eq!(
            pa.morph_targets.len(),
            pb.morph_targets.len(),
            "{what}: targets"
        );
    }
    assert_eq!(a.skins.len(), b.skins.len(), "{what}: skins");
    for (sa, sb) in a.skins.iter().zip(&b.skins) {
        assert_eq!(
            sa.joint_from_bind, sb.joint_from_bind,
            "{what}: inverse binds"
        );
    }
    assert_eq!(a.animations.len(), b.animations.len(), "{what}: clips");
}

/// `-c` (EXT) and `-c -ce khr` (KHR) decode to exactly gltfpack's uncompressed quantised
/// file: the same arrays, and zero distance at every key of every clip.
#[test]
fn meshopt_compressed_files_decode_to_the_uncompressed_file() {
    for stem in MODELS {
        let model = common::model(stem);
        let dir = scratch(stem);
        let plain = load(&gltfpack::pack(&model, &dir, "plain.glb", &[]));
        for (name, flags) in [
            ("ext.glb", &["-c"][..]),
            ("khr.glb", &["-c", "-ce", "khr"][..]),
        ] {
            let path = gltfpack::pack(&model, &dir, name, flags);
            let json = glb::json_of(&std::fs::read(&path).unwrap());
            let ext = if flags.len() > 1 {
                "KHR_meshopt_compression"
            } else {
                "EXT_meshopt_compression"
            };
            assert!(
                json["extensionsRequired"]
                    .as_array()
                    .is_some_and(|e| e.iter().any(|x| x == ext)),
                "{stem} {name}: gltfpack did not compress ({ext} not required)"
            );
            let packed = load(&path);
            let what = format!("{stem} {name}");
            same_geometry(&plain, &packed, &what);
            let report = diff_at_keys(&plain, &packed);
            let worst = report.worst.as_ref().map_or(0.0, |w| w.1.distance);
            println!(
                "{what}: {} clip(s), largest distance {worst:e}",
                report.clips.len()
            );
            assert_eq!(worst, 0.0, "{what}: {report}");
            assert!(report.passed, "{what}: {report}");
        }
    }
}

/// `-cc` adds the filters: octahedral normals and quaternion rotations at 12 bits (the
/// filter's reconstruction of the fourth component rounds differently from a plain 16-bit
/// store), so the skinned result moves, within what 12-bit rotations allow: per joint of the
/// chain an angle of at most 2·|Δq| with |Δq| ≤ 2·√3·(half a step of 1/2047 over ±1/√2),
/// over a lever arm of at most the diagonal.
#[test]
fn filtered_files_stay_within_the_filters_precision() {
    for stem in MODELS {
        let model = common::model(stem);
        let dir = scratch(&format!("{stem}-cc"));
        let plain = load(&gltfpack::pack(&model, &dir, "plain.glb", &[]));
        let packed = load(&gltfpack::pack(&model, &dir, "cc.glb", &["-cc"]));
        let depth = plain.depths().into_iter().max().unwrap_or(0) as f64 + 1.0;
        let half_step = std::f64::consts::FRAC_1_SQRT_2 / 2047.0 / 2.0;
        let angle = 2.0 * 2.0 * 3f64.sqrt() * half_step;
        // Two sides quantised: twice the angle per joint.
        let bound = 2.0 * depth * angle;
        let report = diff_at_keys(&plain, &packed);
        let worst = report.worst.as_ref().map_or(0.0, |w| w.1.distance_rel);
        println!("{stem} -cc: largest {worst:.3e} of the diagonal, bound {bound:.3e}");
        assert!(worst <= bound, "{stem}: {report}");
        assert_eq!(
            report.vertices.a_unmatched + report.vertices.b_unmatched,
            0,
            "{report}"
        );
    }
}

/// A rounding allowance for comparing two evaluations of the same pose whose f32 operations
/// run in different orders (gltfpack folds the position dequantisation into the inverse bind
/// matrices; a chain of up to ~30 joints rounds each product by about 2.4e-7): 1e-6 of the
/// diagonal, several times what that adds up to.
const F32_ORDER_REL: f64 = 1e-6;

/// gltfpack's default output against its source, at both files' key times: the distance is
/// bounded by what gltfpack changes. Its animation resampling (30 Hz), track collapsing,
/// 16-bit rotations and 8-bit weights are applied to the source by a model written from
/// gltfpack's code (`tests/common/gltfpack_model.rs`); the model's distance to the source is
/// the resampling, rotation and weight term, computed from the source clip. What the model
/// leaves out, the 14-bit positions, is bounded by √3/2 · E / (2^14 − 1) times the largest
/// skinning-matrix norm. So the decoded file is within the modelled file's position bound,
/// and within the sum of both terms of its source (triangle inequality over the same
/// vertex pairs and times), on the CPU and on the GPU (whose distance to the CPU reference
/// at the same times adds).
#[test]
fn gltfpack_default_output_stays_within_its_derived_bound() {
    let ctx = common::gpu();
    for stem in ["CesiumMan", "Fox", "RiggedFigure", "RiggedSimple"] {
        let model = common::model(stem);
        let dir = scratch(&format!("{stem}-default"));
        let source = load(&model);
        let packed = load(&gltfpack::pack(&model, &dir, "default.glb", &[]));
        let modelled = gltfpack_model::apply_lossy_steps(&source, &model);
        same_clip_shapes(&modelled, &packed, stem);
        let position = gltfpack_model::position_bound(&source, gltfpack_model::POSITION_BITS);

        let to_model = diff_at_keys(&modelled, &packed);
        let diagonal = to_model.diagonal;
        let slack = F32_ORDER_REL * diagonal;
        let model_worst = worst_distance(&to_model);
        let modelled_term = worst_distance(&diff_at_keys(&source, &modelled));
        let to_source = diff_at_keys(&source, &packed);
        let worst = worst_distance(&to_source);
        let bound = modelled_term + position + slack;
        let gpu = ctx.map_or(0.0, |ctx| gpu_distance(ctx, &source, &packed));
        println!(
            "{stem}: to its source {:.3e} (GPU + {:.1e}) of the diagonal, bound {:.3e} = \
             resampling, rotations and weights {:.3e} + positions {:.3e}; to the model {:.3e}",
            worst / diagonal,
            gpu / diagonal,
            bound / diagonal,
            modelled_term / diagonal,
            position / diagonal,
            model_worst / diagonal,
        );
        assert!(
            model_worst <= position + slack,
            "{stem} vs its model: {to_model}"
        );
        assert!(worst <= bound, "{stem}: {to_source}");
        assert!(
            worst + gpu <= bound,
            "{stem} on the GPU: {gpu:e} more than the CPU"
        );
        assert_eq!(
            to_source.vertices.a_unmatched + to_source.vertices.b_unmatched,
            0,
            "{to_source}"
        );
        if stem == "CesiumMan" {
            // Its 24 fps keys resampled at 30 Hz: the resampling term is most of the bound,
            // so a decoder that ignored the animation's changes could not pass.
            assert!(modelled_term > 10.0 * position, "{stem}: {modelled_term:e}");
        }
    }
}

/// The same clips, each with the same number of channels and keys per channel (gltfpack
/// renumbers nodes, so the key counts are compared as sorted lists).
fn same_clip_shapes(modelled: &Scene, packed: &Scene, stem: &str) {
    let shape = |scene: &Scene| -> Vec<Vec<usize>> {
        scene
            .animations
            .iter()
            .map(|clip| {
                let mut keys: Vec<usize> = clip
                    .channels
                    .iter()
                    .map(|c| c.sampler.times_s.len())
                    .collect();
                keys.sort_unstable();
                keys
            })
            .collect()
    };
    assert_eq!(
        shape(modelled),
        shape(packed),
        "{stem}: channels and keys per clip"
    );
}

fn worst_distance(report: &skinview::diff::Diff) -> f64 {
    report.worst.as_ref().map_or(0.0, |w| w.1.distance)
}

/// The largest distance between `packed`'s GPU-skinned and CPU-skinned vertices at every
/// key time of its clips and of the source's (the times `diff_at_keys` compares).
fn gpu_distance(ctx: &GpuContext, source: &Scene, packed: &Scene) -> f64 {
    let draws = packed.deformed_draw_indices();
    let mut largest = 0.0f64;
    for (a, clip) in packed.animations.iter().enumerate() {
        let mut times: Vec<f32> = clip
            .channels
            .iter()
            .chain(&source.animations[a].channels)
            .flat_map(|c| c.sampler.times_s.iter().copied())
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        let cpu = sample_frames(None, packed, Some(a), &times, &draws, Source::CPU, None).unwrap();
        let gpu = sample_frames(
            Some(ctx),
            packed,
            Some(a),
            &times,
            &draws,
            common::GPU,
            None,
        )
        .unwrap();
        for (c, g) in cpu.iter().flatten().zip(gpu.iter().flatten()) {
            for (p, q) in c.positions.iter().zip(&g.positions) {
                largest = largest.max(p.distance(*q) as f64);
            }
        }
    }
    largest
}

/// Broken compressed views: the error names the view's extension field and what is wrong.
#[test]
fn broken_compressed_views_are_refused_by_name() {
    let model = common::model("CesiumMan");
    let dir = scratch("broken");
    let bytes = std::fs::read(gltfpack::pack(&model, &dir, "ext.glb", &["-c"])).unwrap();
    let json = glb::json_of(&bytes);
    let view = json["bufferViews"]
        .as_array()
        .unwrap()
        .iter()
        .position(|v| v["extensions"]["EXT_meshopt_compression"]["mode"] == "ATTRIBUTES")
        .unwrap();
    let field = format!("bufferViews[{view}].extensions.EXT_meshopt_compression");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "count off the view",
            glb::edit_json(&bytes, |j| {
                let c =
                    &mut j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"]["count"];
                *c = (c.as_u64().unwrap() + 1).into();
            }),
            "is not the view's byteLength",
        ),
        (
            "compressed bytes past the buffer",
            glb::edit_json(&bytes, |j| {
                j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"]["byteOffset"] =
                    (1u64 << 40).into();
            }),
            "outside the buffer",
        ),
        (
            "an unknown mode",
            glb::edit_json(&bytes, |j| {
                j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"]["mode"] =
                    "VERTICES".into();
            }),
            "mode \"VERTICES\"",
        ),
        (
            "a filter the stride cannot take",
            glb::edit_json(&bytes, |j| {
                j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"]["filter"] =
                    "QUATERNION".into();
            }),
            "filter \"QUATERNION\"",
        ),
        (
            "a view's stride unlike the extension's",
            glb::edit_json(&bytes, |j| {
                let stride =
                    j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"]["byteStride"]
                        .as_u64()
                        .unwrap();
                j["bufferViews"][view]["byteStride"] = (stride + 4).into();
            }),
            "is not the view's byteStride",
        ),
        (
            "version 1 of the vertex codec under the EXT name",
            {
                let (j, mut bin) = glb::split(&bytes);
                let ext = &j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"];
                bin[ext["byteOffset"].as_u64().unwrap_or(0) as usize] = 0xa1;
                glb::pack(&j, &bin)
            },
            "version 1",
        ),
        (
            "garbage instead of the codec's data",
            {
                let (j, mut bin) = glb::split(&bytes);
                let ext = &j["bufferViews"][view]["extensions"]["EXT_meshopt_compression"];
                let at = ext["byteOffset"].as_u64().unwrap_or(0) as usize;
                let len = ext["byteLength"].as_u64().unwrap() as usize;
                // The header byte (codec version 0) kept; the data after it garbage.
                bin[at + 1..at + len].fill(0xff);
                glb::pack(&j, &bin)
            },
            "does not decode",
        ),
    ];
    for (what, file, expect) in cases {
        let path = dir.join("broken.glb");
        std::fs::write(&path, &file).unwrap();
        let err = skinview::io::load(&path)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        println!("{what}: {err}");
        assert!(
            err.contains("broken.glb") && err.contains(&field) && err.contains(expect),
            "{what}: {err}"
        );
    }
}

/// A view without the extension pointing at the fallback buffer (which has no data) is refused
/// naming the view; so is an extension taking its bytes from the fallback buffer.
#[test]
fn the_fallback_buffer_is_only_for_compressed_views() {
    // CesiumMan: its texture's view stays plain.
    let model = common::model("CesiumMan");
    let dir = scratch("fallback");
    let bytes = std::fs::read(gltfpack::pack(&model, &dir, "ext.glb", &["-c"])).unwrap();
    let json = glb::json_of(&bytes);
    let fallback = json["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .position(|b| b["extensions"]["EXT_meshopt_compression"]["fallback"] == true)
        .unwrap();
    let views = json["bufferViews"].as_array().unwrap();
    let plain = views
        .iter()
        .position(|v| v.get("extensions").is_none())
        .expect("gltfpack leaves the image's view plain");
    let compressed = views
        .iter()
        .position(|v| v.get("extensions").is_some())
        .unwrap();
    let path = dir.join("broken.glb");
    for (edit, field) in [
        (
            glb::edit_json(&bytes, |j| {
                // Inside the fallback buffer's declared length, so only the fallback rule
                // is broken.
                j["bufferViews"][plain]["buffer"] = fallback.into();
                j["bufferViews"][plain]["byteOffset"] = 0.into();
                j["bufferViews"][plain]["byteLength"] = 4.into();
            }),
            format!("bufferViews[{plain}].buffer"),
        ),
        (
            glb::edit_json(&bytes, |j| {
                j["bufferViews"][compressed]["extensions"]["EXT_meshopt_compression"]["buffer"] =
                    fallback.into();
            }),
            format!("bufferViews[{compressed}].extensions.EXT_meshopt_compression.buffer"),
        ),
    ] {
        std::fs::write(&path, edit).unwrap();
        let err = skinview::io::load(&path)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        println!("{err}");
        assert!(err.contains(&field) && err.contains("fallback"), "{err}");
    }
}

/// A file that requires Draco is refused with what to do instead.
#[test]
fn draco_is_refused_with_advice() {
    let model = common::model("RiggedSimple");
    let bytes = glb::edit_json(&std::fs::read(&model).unwrap(), |j| {
        j["extensionsUsed"] = serde_json::json!(["KHR_draco_mesh_compression"]);
        j["extensionsRequired"] = serde_json::json!(["KHR_draco_mesh_compression"]);
    });
    let dir = scratch("draco");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("draco.glb");
    std::fs::write(&path, bytes).unwrap();
    let err = skinview::io::load(&path)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("extensionsRequired[0]")
            && err.contains("gltfpack")
            && err.contains("meshopt"),
        "{err}"
    );
}

/// gltfpack stores texture coordinates quantised over their own range, with the range in the
/// base colour texture's `KHR_texture_transform`: read through it, every coordinate of its
/// output lies within a 12-bit step (gltfpack's default) of one of the input's, and every
/// input coordinate within a step of one of the output's.
#[test]
fn gltfpack_texture_coordinates_read_through_their_transform() {
    for stem in ["Fox", "CesiumMan"] {
        let model = common::model(stem);
        let dir = scratch(&format!("{stem}-uv"));
        let packed = gltfpack::pack(&model, &dir, "uv.glb", &[]);
        let json = glb::json_of(&std::fs::read(&packed).unwrap());
        assert!(
            json["extensionsUsed"]
                .as_array()
                .is_some_and(|e| e.iter().any(|x| x == "KHR_texture_transform")),
            "{stem}: gltfpack wrote no texture transform; the test needs one"
        );
        let (a, b) = (load(&model), load(&packed));
        let ua = a.meshes[0].primitives[0].uvs.clone().unwrap();
        let ub = b.meshes[0].primitives[0].uvs.clone().unwrap();
        let lo = ua.iter().fold(glam::Vec2::MAX, |m, v| m.min(*v));
        let hi = ua.iter().fold(glam::Vec2::MIN, |m, v| m.max(*v));
        // Half a step of 12 bits over the range, and the f32 arithmetic's slack.
        let step = (hi - lo).max_element() / 4095.0 * 0.51 + 1e-6;
        let nearest = |p: glam::Vec2, set: &[glam::Vec2]| {
            set.iter()
                .map(|q| (p - *q).abs().max_element())
                .fold(f32::MAX, f32::min)
        };
        for (from, to, what) in [(&ub, &ua, "output"), (&ua, &ub, "input")] {
            let worst = from.iter().map(|p| nearest(*p, to)).fold(0.0, f32::max);
            assert!(
                worst <= step,
                "{stem}: an {what} coordinate is {worst} from the other side's, step {step}"
            );
        }
    }
}
