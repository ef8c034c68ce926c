//! FBX curves between frames: cubic translation keys (auto and user tangents) become exact
//! CUBICSPLINE tracks, Euler rotation curves are sampled to within 1e-6 of the diagonal of
//! ufbx's own evaluation, a rotation past 180° between two keys plays its whole turn, and a
//! curve the segment cap cannot follow is reported with the error reached. Written as ASCII
//! FBX by the tests ([`common::fbx::AsciiArm`]), checked at times between frames.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code

use crate::common::fbx::{AsciiArm, Key, KeyKind};
use crate::fbx_conventions::check_against_ufbx_at;

use skinview::anim::{Interpolation, Path};
use skinview::scene::Scene;

/// The arm's frame rate (`TimeMode` 6: 30 fps).
const FPS: f64 = 30.0;

/// Times between frames: 0.37 of a frame after each of the first second's frames.
fn between_frames() -> impl Iterator<Item = f64> {
    (0..30).map(|k| (k as f64 + 0.37) / FPS)
}

fn import(arm: &AsciiArm) -> Scene {
    skinview::io::fbx::import_slice(arm.text().as_bytes(), "arm.fbx").unwrap()
}

/// Clip 0's sampler of `path` on the node named `node`.
fn sampler<'a>(scene: &'a Scene, node: &str, path: Path) -> &'a skinview::anim::Sampler {
    let k = scene
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(node))
        .unwrap();
    &scene.animations[0]
        .channels
        .iter()
        .find(|c| c.node == k && c.path == path)
        .unwrap_or_else(|| panic!("no {path:?} channel on {node}"))
        .sampler
}

/// ufbx's own evaluation of `node`'s local transform in the file's first stack at `time_s`.
fn ufbx_transform(arm: &AsciiArm, node: &str, time_s: f64) -> ufbx::Transform {
    let fbx = ufbx::load_memory(arm.text().as_bytes(), skinview::io::fbx::load_options()).unwrap();
    let n = fbx.find_node(node).unwrap();
    let stack = &fbx.anim_stacks[0];
    ufbx::evaluate_transform(&stack.anim, n, time_s)
}

/// An arm whose `Upper` moves along X on auto tangents and along Y on user tangents, keyed
/// at different times.
fn moving_arm() -> AsciiArm {
    AsciiArm {
        upper_translation: [
            vec![
                Key::new(0.0, 0.0, KeyKind::Auto),
                Key::new(0.3, 2.0, KeyKind::Auto),
                Key::new(1.0, 0.5, KeyKind::Auto),
            ],
            vec![
                Key::new(
                    0.0,
                    0.0,
                    KeyKind::User {
                        right: 3.0,
                        next_left: -1.0,
                    },
                ),
                Key::new(
                    0.5,
                    1.0,
                    KeyKind::User {
                        right: 0.5,
                        next_left: 2.0,
                    },
                ),
                Key::new(1.0, 0.0, KeyKind::Linear),
            ],
            Vec::new(),
        ],
        ..Default::default()
    }
}

/// A cubic translation becomes a CUBICSPLINE track keyed at the union of its curves' key
/// times, equal to ufbx's evaluation between frames to f32 precision (the frame-rate bake
/// it replaces was off by about 1e-3 here).
#[test]
fn cubic_translation_keys_become_an_exact_cubicspline() {
    let arm = moving_arm();
    let scene = import(&arm);
    let s = sampler(&scene, "Upper", Path::Translation);
    assert_eq!(s.interpolation, Interpolation::CubicSpline);
    assert_eq!(s.times_s, vec![0.0, 0.3, 0.5, 1.0]);
    // An f32 ulp of the largest coordinate the curves reach (2).
    let ulp = f64::from(2.0f32.next_up() - 2.0);
    let mut worst: f64 = 0.0;
    for t in between_frames() {
        let mut out = [0.0f32; 3];
        s.sample_binary_search(t as f32, &mut out);
        let theirs = ufbx_transform(&arm, "Upper", t as f32 as f64).translation;
        let theirs = [theirs.x, theirs.y, theirs.z];
        for i in 0..3 {
            worst = worst.max((f64::from(out[i]) - theirs[i]).abs() / ulp);
        }
    }
    println!("cubic translation: {worst:.2} ulp (of 2) from ufbx between frames");
    assert!(worst <= 4.0, "{worst} ulp from ufbx's evaluation");
}

/// Weighted tangents (handles longer or shorter than a third of the interval) cannot be a
/// CUBICSPLINE: the translation is sampled, and between frames it is within 1e-6 of the
/// arm's diagonal (or 4 ulp of the coordinate) of ufbx's evaluation, with nothing to report;
/// where the segment cap stops short (extreme handles), the repair says so with the error.
#[test]
fn weighted_tangents_are_sampled_to_the_tolerance() {
    let weighted = |right, next_left, right_weight, next_left_weight| KeyKind::Weighted {
        right,
        next_left,
        right_weight,
        next_left_weight,
    };
    // `Upper` moving along X on two weighted segments, handles of the given lengths.
    let weighted_arm = |[a, b, c, d]: [f64; 4]| AsciiArm {
        upper_translation: [
            vec![
                Key::new(0.0, 0.0, weighted(4.0, -2.0, a, b)),
                Key::new(0.6, 1.5, weighted(0.0, 1.0, c, d)),
                Key::new(1.0, 0.5, KeyKind::Linear),
            ],
            Vec::new(),
            Vec::new(),
        ],
        ..Default::default()
    };
    let arm = weighted_arm([0.4, 0.25, 0.3, 0.4]);
    let scene = import(&arm);
    assert!(scene.report.notes.is_empty(), "{:?}", scene.report.notes);
    let s = sampler(&scene, "Upper", Path::Translation);
    // The rest mesh's diagonal, as the importer's tolerance measures it.
    let points = scene
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .flat_map(|p| &p.positions);
    let (lo, hi) = points.fold(
        (glam::Vec3::INFINITY, glam::Vec3::NEG_INFINITY),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let diagonal = f64::from((hi - lo).length());
    assert!(diagonal > 0.0);
    let mut worst: f64 = 0.0;
    for t in between_frames() {
        let mut out = [0.0f32; 3];
        s.sample_binary_search(t as f32, &mut out);
        let theirs = ufbx_transform(&arm, "Upper", t as f32 as f64).translation;
        let x = theirs.x;
        let ulp = f64::from((x.abs() as f32).next_up() - x.abs() as f32);
        let bound = (1e-6 * diagonal).max(4.0 * ulp);
        worst = worst.max((f64::from(out[0]) - x).abs() / bound);
    }
    println!(
        "weighted tangents: {} keys, {}, {worst:.2} of the bound from ufbx",
        s.times_s.len(),
        s.interpolation.name()
    );
    assert!(
        worst <= 1.0,
        "{worst:.3} times the bound from ufbx's evaluation"
    );
    // Handles far from a third (0.6 and 0.15 of the interval) are not followed within the
    // cap: the import says so, with the error reached.
    let extreme = weighted_arm([0.6, 0.15, 0.1, 0.5]);
    let notes = import(&extreme).report.notes;
    let note = notes.first().expect("the cap's repair is reported");
    assert!(
        note.repaired
            && note
                .message
                .contains("Model \"Upper\": translation sampled to within")
            && note.message.contains("of the model's diagonal, not 1e-6"),
        "{notes:?}"
    );
}

/// A cubic Euler rotation (auto and user tangents) is sampled: between frames the rotation
/// is within 1e-6 rad of ufbx's (1e-6 of the diagonal a diagonal away), and the skinned arm
/// within 2e-6 of its diagonal of ufbx's skinning (f32 skinning adds its own ~2e-7).
#[test]
fn cubic_rotation_keys_are_sampled_to_the_tolerance() {
    let arm = AsciiArm {
        bend: vec![
            Key::new(0.0, 0.0, KeyKind::Auto),
            Key::new(0.4, 30.0, KeyKind::Auto),
            Key::new(
                1.0,
                90.0,
                KeyKind::User {
                    right: 0.0,
                    next_left: 0.0,
                },
            ),
        ],
        ..moving_arm()
    };
    let scene = import(&arm);
    assert!(scene.report.notes.is_empty(), "{:?}", scene.report.notes);
    let s = sampler(&scene, "Lower", Path::Rotation);
    println!(
        "cubic rotation: {} keys, {}",
        s.times_s.len(),
        s.interpolation.name()
    );
    let mut worst: f64 = 0.0;
    for t in between_frames() {
        let mut out = [0.0f32; 4];
        s.sample_binary_search(t as f32, &mut out);
        let q = ufbx_transform(&arm, "Lower", t as f32 as f64).rotation;
        let ours = glam::DQuat::from_array(out.map(f64::from)).normalize();
        let theirs = glam::DQuat::from_xyzw(q.x, q.y, q.z, q.w);
        // The angle of the rotation between them (acos of their dot loses half the digits).
        let d = ours * theirs.conjugate();
        worst = worst.max(2.0 * glam::DVec3::new(d.x, d.y, d.z).length().asin());
    }
    println!("cubic rotation: {worst:.2e} rad from ufbx between frames");
    assert!(worst <= 1.5e-6, "{worst:.3e} rad from ufbx's evaluation");
    let rel = check_against_ufbx_at("arm.fbx", arm.text().as_bytes(), 31, 0.37);
    println!("cubic arm skinned between frames: {rel:.2e} of the diagonal");
    assert!(rel <= 2e-6, "{rel:.3e} of the diagonal from ufbx");
}

/// `Lower` turns 360° between its two keys (a real file turns so in one segment): it plays
/// the whole turn (half-way it is at 180°, not at rest), as ufbx evaluates it.
#[test]
fn a_turn_past_180_degrees_between_two_keys_plays_whole() {
    let arm = AsciiArm {
        bend: vec![
            Key::new(0.0, 0.0, KeyKind::Linear),
            Key::new(1.0, 360.0, KeyKind::Linear),
        ],
        ..Default::default()
    };
    let scene = import(&arm);
    let s = sampler(&scene, "Lower", Path::Rotation);
    let mut half = [0.0f32; 4];
    s.sample_binary_search(0.5, &mut half);
    let angle = glam::Quat::from_array(half).angle_between(glam::Quat::IDENTITY);
    assert!(
        (angle - std::f32::consts::PI).abs() < 1e-5,
        "half-way the turn is at {angle} rad"
    );
    let rel = check_against_ufbx_at("arm.fbx", arm.text().as_bytes(), 31, 0.37);
    println!("360° turn skinned between frames: {rel:.2e} of the diagonal");
    assert!(rel <= 2e-6, "{rel:.3e} of the diagonal from ufbx");
}

/// A hundred turns in one segment cannot be followed in [`MAX_SEGMENTS_PER_KEY`] pieces: the
/// import says so, naming the stack, the node and the error reached.
///
/// [`MAX_SEGMENTS_PER_KEY`]: skinview::io::fbx::MAX_SEGMENTS_PER_KEY
#[test]
fn a_curve_past_the_segment_cap_is_reported_with_its_error() {
    let arm = AsciiArm {
        bend: vec![
            Key::new(0.0, 0.0, KeyKind::Linear),
            Key::new(1.0, 36_000.0, KeyKind::Linear),
        ],
        ..Default::default()
    };
    let scene = import(&arm);
    let notes: Vec<String> = scene
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.field, n.message))
        .collect();
    println!("{notes:?}");
    let note = notes
        .iter()
        .find(|n| n.contains("Model \"Lower\": rotation sampled to within"))
        .unwrap_or_else(|| panic!("no repair reported: {notes:?}"));
    assert!(note.starts_with("AnimationStack \"Bend\""), "{note}");
    let reached: f64 = note
        .split("within ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(reached > 1e-6, "{note}");
    assert!(scene.report.notes.iter().all(|n| n.repaired));
}

/// Every file Blender wrote skins as ufbx evaluates it between frames too (0.37 of a frame
/// after 9 frames of every clip), where the frame-rate bake used to interpolate.
#[test]
fn blender_files_skin_as_ufbx_evaluates_them_between_frames() {
    for stem in [
        "CesiumMan",
        "Fox",
        "RiggedFigure",
        "rig_seed4_8inf_morph_ubyte",
    ] {
        let bytes = std::fs::read(crate::common::fbx::converted(stem)).unwrap();
        let rel = check_against_ufbx_at(&format!("{stem}.fbx"), &bytes, 9, 0.37);
        println!("{stem}.fbx between frames: {rel:.2e} of the diagonal from ufbx");
        assert!(
            rel <= 2e-6,
            "{stem}.fbx: {rel:.3e} of the diagonal from ufbx"
        );
    }
}
