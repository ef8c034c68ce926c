//! `skinview diff`: a file against itself is zero everywhere; a planted 1 cm move of
//! one joint's inverse bind matrix is found, named and measured (the displacement it must make
//! is computed here from the joint's rest transform); gltfpack's copies of the shared models
//! stay within the bound their flags imply (positions quantised to N bits over the mesh's
//! extent), with a coarser quantisation measurably worse; reports, pictures and refusals.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use std::path::{Path, PathBuf};
use std::process::Command;

use skinview::diff::{DiffOptions, Differ, MatchMethod, Times};
use skinview::frame::FrameState;

use crate::common::{self, glb, gltfpack, gltfpack_model};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_skinview")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-diff-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn diff(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(bin()).arg("diff").args(args).output().unwrap()
}

/// Every shared model and rig against itself: paired by index, every vertex one to one,
/// distance 0 at every frame, no joint named.
#[test]
fn every_model_against_itself_is_zero() {
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        let report = Differ::new(&scene, &scene, DiffOptions::default())
            .unwrap()
            .run(|_, _| {})
            .unwrap();
        let name = path.display();
        assert!(report.passed, "{name}: {report}");
        assert_eq!(report.vertices.method, MatchMethod::Index, "{name}");
        assert_eq!(
            report.vertices.one_to_one, report.vertices.a_vertices,
            "{name}"
        );
        assert!(report.joints.changed.is_empty(), "{name}: {report}");
        for c in &report.clips {
            assert_eq!(c.max_rel, 0.0, "{name} {}", c.name);
            assert!(c.frames >= 1);
        }
    }
}

/// The command on CesiumMan against itself: exit 0, the JSON in its schema.
#[test]
fn command_writes_its_json_and_passes_a_file_against_itself() {
    let model = common::model("CesiumMan");
    let dir = scratch("self");
    let json = dir.join("d.json");
    let out = diff(&[
        model.as_os_str(),
        model.as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", common::output_text(&out));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "skinview-diff/1");
    assert_eq!(v["passed"], true);
    for key in [
        "diagonal",
        "tolerance_rel",
        "times",
        "fps",
        "vertices",
        "joints",
        "clips",
        "worst",
    ] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    let clip = &v["clips"][0];
    assert_eq!(
        clip["frames"].as_u64().unwrap() as usize,
        clip["series"].as_array().unwrap().len()
    );
    // Output over an input is refused.
    let out = diff(&[
        model.as_os_str(),
        model.as_os_str(),
        "--json".as_ref(),
        model.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", common::output_text(&out));
}

/// One joint's inverse bind matrix moved 1 cm (its translation, in joint space): the command
/// fails, names that joint first and alone, and measures the move: every vertex it binds moves
/// by model_from_joint · (0.01, 0, 0) at rest, computed here from the joint's rest transform.
#[test]
fn a_planted_bind_move_is_found_and_named() {
    let model = common::model("CesiumMan");
    let dir = scratch("planted");
    let joint = 3; // a neck joint: moves the head
    let (planted, node) = glb::planted_bind_move(&model, joint, 0.01, &dir);
    let scene = skinview::io::load(&model).unwrap();
    let name = scene.node_label(node);
    let mut rest = FrameState::new(&scene);
    rest.evaluate(&scene, None, 0.0).unwrap();
    let expected = rest.model_from_node[node]
        .transform_vector3(glam::Vec3::new(0.01, 0.0, 0.0))
        .length() as f64;

    let (json_out, render, plot) = (
        dir.join("d.json"),
        dir.join("worst.png"),
        dir.join("plot.png"),
    );
    let out = diff(&[
        model.as_os_str(),
        planted.as_os_str(),
        "--json".as_ref(),
        json_out.as_os_str(),
        "--render".as_ref(),
        render.as_os_str(),
        "--plot".as_ref(),
        plot.as_os_str(),
        "--size".as_ref(),
        "320x240".as_ref(),
    ]);
    let text = common::output_text(&out);
    println!("{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json_out).unwrap()).unwrap();
    let changed = v["joints"]["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{v}");
    assert_eq!(changed[0]["name"], name.as_str());
    let diagonal = v["diagonal"].as_f64().unwrap();
    let bind = changed[0]["bind_distance_rel"].as_f64().unwrap() * diagonal;
    assert!(
        (bind / expected - 1.0).abs() < 1e-3,
        "bind move {bind} m, expected {expected} m"
    );
    // The vertices move by at most the whole move (weights under 1 move them less).
    let worst = v["worst"][1]["distance"].as_f64().unwrap();
    assert!(
        worst > 0.5 * expected && worst <= expected * (1.0 + 1e-3),
        "{worst} vs {expected}"
    );
    assert!(text.contains(&format!("joint {name}")), "{text}");
    // The pictures: a render the size asked for, with heat on the model; a plot.
    for (png, (w, h)) in [(&render, (320, 240)), (&plot, (0, 0))] {
        let img = skinview::io::png::read(png).unwrap();
        if w > 0 {
            assert_eq!((img.width, img.height), (w, h));
        }
        assert!(img.width > 100 && img.height > 100);
    }
    let img = skinview::io::png::read(&render).unwrap();
    let hot = img
        .pixels
        .chunks_exact(4)
        .filter(|p| p[0] > 150 && p[2] < 100)
        .count();
    assert!(hot > 20, "no red or yellow heat on the render ({hot} px)");
}

/// gltfpack's copies against gltfpack's unquantised copy (`-noq`: the same resampled clips,
/// vertex order and merges, positions as floats) at its key times: the positions quantised to
/// N bits over the mesh's largest extent E move a vertex by at most √3/2 · E / (2^N − 1) in
/// bind space, times the largest scale of a skinning matrix (its Frobenius norm bounds it;
/// `gltfpack_model::position_bound`), so the rest-pose offset stays under that; 10 bits give
/// a rest-pose offset more than 4 times the default 14 bits' (16 expected). At gltfpack's key times the clips add
/// nothing (its rotations and translations quantise the same with and without `-noq`), so the
/// largest distance over the clips stays under the same bound. Every vertex is matched, no
/// joint named.
#[test]
fn gltfpack_copies_stay_within_their_quantisation_bound() {
    for stem in ["CesiumMan", "Fox", "RiggedFigure", "RiggedSimple"] {
        let model = common::model(stem);
        let dir = scratch(stem);
        let reference_path = gltfpack::pack(&model, &dir, "noq.glb", &["-noq"]);
        let reference = skinview::io::load(&reference_path).unwrap();
        let mut rest_offsets = Vec::new();
        for (name, flags, bits) in [
            ("default.glb", &[][..], 14),
            ("vp10.glb", &["-vp", "10"][..], 10),
            ("c.glb", &["-c"][..], 14),
            ("kn.glb", &["-kn", "-km"][..], 14),
        ] {
            let packed = skinview::io::load(&gltfpack::pack(&model, &dir, name, flags)).unwrap();
            let options = DiffOptions {
                times: Times::KeysOfB,
                ..DiffOptions::default()
            };
            let mut differ = Differ::new(&reference, &packed, options).unwrap();
            let report = differ.run(|_, _| {}).unwrap();
            let diagonal = report.diagonal;
            let bound = gltfpack_model::position_bound(&reference, bits);
            let rest = report.vertices.worst_rest_distance;
            println!(
                "{stem} {name}: rest offset {:.3e} (bound {:.3e}), largest over the clips {:.3e} \
                 of the diagonal",
                rest / diagonal,
                bound / diagonal,
                report.worst.as_ref().map_or(0.0, |w| w.1.distance_rel)
            );
            assert!(rest <= bound, "{stem} {name}: {report}");
            // gltfpack keeps the clips' keys as -noq has them: over the clips too.
            let largest = report.worst.as_ref().map_or(0.0, |w| w.1.distance);
            assert!(largest <= bound, "{stem} {name}: {report}");
            assert_eq!(
                report.vertices.a_unmatched + report.vertices.b_unmatched,
                0,
                "{report}"
            );
            assert!(report.joints.changed.is_empty(), "{stem} {name}: {report}");
            if name == "default.glb" || name == "vp10.glb" {
                rest_offsets.push(rest);
            }
        }
        assert!(
            rest_offsets[1] > 4.0 * rest_offsets[0],
            "{stem}: 10-bit positions should move vertices more than 14-bit ones: {rest_offsets:?}"
        );
    }
}

/// CesiumMan against a copy of itself whose positions lie on a 9-bit grid over each mesh's box
/// (what `optimize --quantize-mesh` may write) and whose vertices are listed in a shuffled
/// order, paired by position: every vertex of the source is paired, one to one, with its own
/// copy or with one the source has at the same position with the same texture coordinates
/// (checked on the source's values, so seam copies and neighbours the grid moved past each other
/// must pair by their texture coordinates). With the texture coordinates left out, positions
/// alone pair a hundred or more seam copies crosswise: what the coordinates fix.
#[test]
fn seams_and_a_coarse_grid_pair_by_texture_coordinates() {
    use skinview::diff::matching::{VertexSet, match_by_position};
    use skinview::diff::pairing::vertex_set;
    use skinview::frame::skin_pose;

    let source = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut grid = source.clone();
    for prim in grid.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        let (lo, hi) = prim.positions.iter().fold(
            (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let step = (hi - lo).max_element() / 511.0;
        for p in &mut prim.positions {
            *p = lo + ((*p - lo) / step).round() * step;
        }
    }
    let set_a = vertex_set(&source, &skin_pose(&source, None, 0.0, None).unwrap());
    let mut set_b = vertex_set(&grid, &skin_pose(&grid, None, 0.0, None).unwrap());
    let mut order: Vec<usize> = (0..set_b.positions.len()).collect();
    common::rng::XorShift64Star::from_state(0x5eed_0009).shuffle(&mut order);
    let pick = |v: &[u32]| order.iter().map(|&i| v[i]).collect::<Vec<u32>>();
    set_b = VertexSet {
        positions: order.iter().map(|&i| set_b.positions[i]).collect(),
        uvs: order.iter().map(|&i| set_b.uvs[i]).collect(),
        draw: pick(&set_b.draw),
        vertex: pick(&set_b.vertex),
        per_draw: set_b.per_draw.clone(),
    };
    let diagonal = Differ::new(&source, &source, DiffOptions::default())
        .unwrap()
        .run(|_, _| {})
        .unwrap()
        .diagonal;
    let radius = (2e-3 * diagonal) as f32;
    // The source's position and texture coordinates of a set's entry.
    let of = |set: &VertexSet, i: u32| {
        let (d, v) = (
            set.draw[i as usize] as usize,
            set.vertex[i as usize] as usize,
        );
        let prim = source.primitive(&source.draws[d]);
        (d, prim.positions[v], prim.uvs.as_ref().unwrap()[v])
    };
    let crosswise = |a: &VertexSet, b: &VertexSet| {
        let m = match_by_position(a, b, radius);
        assert_eq!(m.stats.one_to_one, a.positions.len(), "{:?}", m.stats);
        (m.pairs.iter())
            .filter(|&&(ia, ib)| of(a, ia) != of(b, ib))
            .count()
    };
    assert!(set_a.uvs.iter().all(|uv| uv.is_finite()));
    assert_eq!(crosswise(&set_a, &set_b), 0);
    let blind = |s: &VertexSet| VertexSet {
        uvs: vec![glam::Vec2::NAN; s.uvs.len()],
        ..s.clone()
    };
    let without = crosswise(&blind(&set_a), &blind(&set_b));
    println!("{without} pairs crosswise without texture coordinates");
    assert!(
        without >= 100,
        "{without} crosswise without texture coordinates"
    );
}

/// A key time of 1e30 s (finite, so the importer takes it): comparing at 30 frames a second
/// would take 3e31 frames. The command says so before making any (no allocation first, no
/// panic), and exit 2; at the key times it compares.
#[test]
fn a_far_key_time_is_refused_before_any_frame_is_made() {
    let model = common::model("RiggedSimple");
    let bytes = std::fs::read(&model).unwrap();
    let json = glb::json_of(&bytes);
    let input = glb::accessor_at(&json, "/animations/0/samplers/0/input");
    let last = json["accessors"][input]["count"].as_u64().unwrap() as usize - 1;
    let far = glb::patch(&bytes, input, last, 0, &1e30f32.to_le_bytes());
    let dir = scratch("far");
    let path = dir.join("far.glb");
    // The accessor's max must follow (the importer checks it against the data).
    let far = glb::edit_json(&far, |j| {
        j["accessors"][input]["max"] = serde_json::json!([1e30])
    });
    std::fs::write(&path, far).unwrap();
    let out = diff(&[path.as_os_str(), path.as_os_str()]);
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("frames") && text.contains("limit"), "{text}");
    let out = diff(&[
        path.as_os_str(),
        path.as_os_str(),
        "--times".as_ref(),
        "keys".as_ref(),
    ]);
    assert!(out.status.success(), "{}", common::output_text(&out));
}

/// Unknown files and bad options: exit 2 with words.
#[test]
fn bad_arguments_are_refused_with_words() {
    let model = common::model("RiggedSimple");
    let missing = Path::new("/nonexistent/x.glb");
    let out = diff(&[model.as_os_str(), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", common::output_text(&out));
    assert!(common::output_text(&out).contains("x.glb"));
    let out = diff(&[
        model.as_os_str(),
        model.as_os_str(),
        "--fps".as_ref(),
        "0".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", common::output_text(&out));
    assert!(
        common::output_text(&out).contains("fps"),
        "{}",
        common::output_text(&out)
    );
}

/// Two different characters (CesiumMan, the Fox): no vertex pairs, so each clip line says so
/// instead of a distance of 0, the clips left over are paired by order with B's name shown,
/// and the run fails.
#[test]
fn different_characters_report_no_pairs_not_zero() {
    let (a, b) = (common::model("CesiumMan"), common::model("Fox"));
    let out = diff(&[a.as_os_str(), b.as_os_str()]);
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // CesiumMan's one clip is unnamed; the Fox's first is "Survey".
    assert!(
        text.contains("clip \"animation 0\" (B: \"Survey\", paired by order): no vertex paired"),
        "{text}"
    );
    assert!(!text.contains("largest 0.000e0"), "{text}");
    assert!(text.contains("FAIL: 3273 vertices of A"), "{text}");
}

/// `render --compare-with`: the model beside a copy with one joint's inverse bind matrix
/// moved 1 cm (computed here from the joint's rest transform, as above): at the rest pose the
/// largest distance printed is at most that move and more than half of it, and both halves of
/// the picture show heat; a file against itself is 0 everywhere with no heat; a file of another
/// character, and the flags it cannot take, are refused with exit 2 and words.
#[test]
fn render_compare_with_shows_a_planted_move_on_both_halves() {
    if common::gpu().is_none() {
        return;
    }
    let model = common::model("CesiumMan");
    let dir = scratch("compare-with");
    let joint = 3;
    let (planted, node) = glb::planted_bind_move(&model, joint, 0.01, &dir);
    let scene = skinview::io::load(&model).unwrap();
    let mut rest = FrameState::new(&scene);
    rest.evaluate(&scene, None, 0.0).unwrap();
    let expected = rest.model_from_node[node]
        .transform_vector3(glam::Vec3::new(0.01, 0.0, 0.0))
        .length() as f64;
    let render = |other: &Path, extra: &[&str], out: &Path| {
        Command::new(bin())
            .arg("render")
            .arg(&model)
            .arg("--compare-with")
            .arg(other)
            .args(["--size", "321x200"])
            .args(extra)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let largest = |text: &str| -> f64 {
        let after = text.split("largest distance ").nth(1).unwrap();
        after.split_whitespace().next().unwrap().parse().unwrap()
    };
    // Heat (red or yellow) in each half of the picture, above the legend (its bar is
    // coloured; it takes the bottom 56 px).
    let hot_in_halves = |png: &Path| -> [usize; 2] {
        let img = skinview::io::png::read(png).unwrap();
        assert_eq!((img.width, img.height), (321, 200));
        let mut hot = [0; 2];
        for (i, p) in img.pixels.chunks_exact(4).enumerate() {
            let (x, y) = (i as u32 % img.width, i as u32 / img.width);
            if y < 200 - 64 && p[0] > 150 && p[2] < 100 {
                hot[usize::from(x >= 161)] += 1;
            }
        }
        hot
    };

    let moved = dir.join("moved.png");
    let out = render(&planted, &["--anim", "none"], &moved);
    let text = common::output_text(&out);
    println!("{text}");
    assert!(out.status.success(), "{text}");
    let d = largest(&text);
    assert!(
        d > 0.5 * expected && d <= expected * (1.0 + 1e-3),
        "{d} vs {expected}"
    );
    let hot = hot_in_halves(&moved);
    assert!(hot[0] > 20 && hot[1] > 20, "heat in each half: {hot:?}");

    let same = dir.join("same.png");
    let out = render(&model, &["--time", "0.7"], &same);
    let text = common::output_text(&out);
    assert!(out.status.success(), "{text}");
    assert_eq!(largest(&text), 0.0, "{text}");
    assert_eq!(hot_in_halves(&same), [0, 0]);

    let refused = [
        (
            common::model("Fox"),
            vec![],
            "not a copy of the same character",
        ),
        (planted.clone(), vec!["--split"], "--split"),
        (planted.clone(), vec!["--color", "weights"], "--color"),
        (planted.clone(), vec!["--max-bones", "16"], "--max-bones"),
    ];
    for (other, extra, says) in refused {
        let out = render(&other, &extra, &dir.join("refused.png"));
        let text = common::output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {text}");
        assert!(text.contains(says), "{extra:?}: {text}");
    }
    let out = Command::new(bin())
        .arg("render")
        .arg(&model)
        .arg("--compare-with")
        .arg(&planted)
        .args(["--size", "1x1", "--out"])
        .arg(dir.join("refused.png"))
        .output()
        .unwrap();
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--size 1x1") && text.contains("two halves"),
        "{text}"
    );
    assert!(!dir.join("refused.png").exists());
}
