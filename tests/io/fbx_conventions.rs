//! FBX conventions made explicit: an arm written as ASCII FBX by the tests
//! ([`common::fbx::AsciiArm`]) with what Blender's exporter never writes — centimetres, Z up,
//! a geometric transform, a bind pose other than the rest pose — skins to positions computed
//! here in f64 from FBX's rules; and for what has no short formula (a joint ignoring its
//! parent's scale, every file Blender wrote) the import skins as ufbx's own evaluation of the
//! file does (`ufbx::evaluate_scene` with skinning), at several times of every clip.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code

use crate::common;
use crate::common::fbx::{ARM_LOWER_X, ARM_RINGS, AsciiArm};

use glam::{DMat4, DVec3, Vec3};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::scene::Scene;

/// f32 positions of a 20-unit arm: 1e-5 of its size.
const TOLERANCE_REL: f64 = 1e-5;

fn import(arm: &AsciiArm) -> Scene {
    skinview::io::fbx::import_slice(arm.text().as_bytes(), "arm.fbx").unwrap()
}

/// Every drawn vertex of `scene` skinned at `time_s` of clip 0, model space.
fn skinned(scene: &Scene, time_s: f32) -> Vec<Vec3> {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, Some(0), time_s).unwrap();
    let mut skinner = CpuSkinner::new(scene, None);
    let out = skinner.skin_all(scene, &frame).unwrap();
    out.iter()
        .flat_map(|o| o.positions.iter().copied())
        .collect()
}

/// Where FBX puts vertex `v` of the arm at `time_s` (metres, glTF's axes):
/// Σ w · bone_world(t) · TransformLink⁻¹ · Transform · geometric · v, then units and axes.
fn expected(arm: &AsciiArm, v: usize, time_s: f64) -> DVec3 {
    let upper = DMat4::from_rotation_y(arm.upper_rest_y_deg.to_radians())
        * DMat4::from_scale(DVec3::splat(arm.upper_scale));
    let lower = upper
        * DMat4::from_translation(DVec3::X * ARM_LOWER_X)
        * DMat4::from_rotation_z(arm.lower_pre_rotation_z_deg.to_radians())
        * DMat4::from_rotation_z((90.0 * time_s).to_radians());
    let upper_bind = DMat4::IDENTITY;
    let lower_bind = DMat4::from_translation(DVec3::X * ARM_LOWER_X);
    let mesh = DMat4::from_translation(DVec3::from(arm.mesh_translation))
        * DMat4::from_translation(DVec3::from(arm.geometric_translation))
        * DMat4::from_rotation_x(arm.geometric_rotation_x_deg.to_radians());
    let mut p = DVec3::from(AsciiArm::vertex(v));
    if arm.bulge {
        p += DVec3::from(AsciiArm::bulge_offset(v)) * (time_s / arm.clip_end_s).min(1.0);
    }
    let w = AsciiArm::lower_weight(v);
    let world = (upper * upper_bind.inverse() * mesh).transform_point3(p) * (1.0 - w)
        + (lower * lower_bind.inverse() * mesh).transform_point3(p) * w;
    let world = if arm.z_up {
        DVec3::new(world.x, world.z, -world.y)
    } else {
        world
    };
    world * arm.unit_cm / 100.0
}

/// The import of `arm` skins as [`expected`] says at 0, 0.25, 0.5 and 1 s: each drawn vertex
/// is one of the arm's vertices at 0 s, and stays it.
fn check_arm(what: &str, arm: &AsciiArm) {
    check_arm_text(what, arm, &arm.text());
}

/// [`check_arm`] on the arm written as `text`.
fn check_arm_text(what: &str, arm: &AsciiArm, text: &str) {
    let scene = skinview::io::fbx::import_slice(text.as_bytes(), "arm.fbx").unwrap();
    let n = ARM_RINGS.len() * 4;
    let size = 20.0 * arm.unit_cm / 100.0;
    let at_rest = skinned(&scene, 0.0);
    let which: Vec<usize> = at_rest
        .iter()
        .map(|p| {
            (0..n)
                .min_by(|&a, &b| {
                    let da = (p.as_dvec3() - expected(arm, a, 0.0)).length();
                    let db = (p.as_dvec3() - expected(arm, b, 0.0)).length();
                    da.total_cmp(&db)
                })
                .unwrap()
        })
        .collect();
    for t in [0.0, 0.25, 0.5, 1.0] {
        let got = skinned(&scene, t as f32);
        let worst = got
            .iter()
            .zip(&which)
            .map(|(p, &v)| (p.as_dvec3() - expected(arm, v, t)).length())
            .fold(0.0, f64::max);
        println!("{what} at {t} s: {:.2e} of the arm", worst / size);
        assert!(
            worst <= TOLERANCE_REL * size,
            "{what} at {t} s: a vertex is {worst:.3e} m from where FBX puts it"
        );
    }
}

#[test]
fn metres_and_y_up_as_written() {
    check_arm("metres, Y up", &AsciiArm::default());
}

#[test]
fn centimetres_and_z_up_become_metres_and_y_up() {
    check_arm(
        "centimetres, Z up",
        &AsciiArm {
            unit_cm: 1.0,
            z_up: true,
            ..Default::default()
        },
    );
}

#[test]
fn geometric_transform_moves_the_geometry_only() {
    check_arm(
        "geometric translation",
        &AsciiArm {
            mesh_translation: [2.0, 0.0, 0.0],
            geometric_translation: [0.0, 0.0, 3.0],
            ..Default::default()
        },
    );
}

/// A blend shape channel animated from 0 to 100 %: a morph target with a weights track,
/// applied before skinning.
#[test]
fn blend_shapes_become_animated_morph_targets() {
    let arm = AsciiArm {
        bulge: true,
        ..Default::default()
    };
    let scene = import(&arm);
    assert_eq!(scene.meshes[0].morph_target_count(), 1, "one morph target");
    let weights = scene.animations[0]
        .channels
        .iter()
        .filter(|c| c.path == skinview::anim::Path::Weights)
        .count();
    assert_eq!(weights, 1, "one weights channel");
    check_arm("blend shape", &arm);
}

/// `Lower` has a pre-rotation (Maya's joint orient) of 20° under its animated rotation: it
/// is part of the rest transform and of every baked key.
#[test]
fn pre_rotation_composes_under_the_animated_rotation() {
    check_arm(
        "pre-rotation",
        &AsciiArm {
            lower_pre_rotation_z_deg: 20.0,
            ..Default::default()
        },
    );
}

/// A geometric rotation turns the blend shape's offsets with the vertices (they are both in
/// the geometry's space).
#[test]
fn geometric_transform_applies_to_blend_shapes_too() {
    check_arm(
        "geometric rotation with a blend shape",
        &AsciiArm {
            geometric_translation: [0.0, 0.0, 3.0],
            geometric_rotation_x_deg: 90.0,
            bulge: true,
            ..Default::default()
        },
    );
}

/// The same arm as an FBX 6.1 file (named objects, `Properties60`, the clip in `Takes`).
#[test]
fn fbx_6_files_read_as_fbx_7_files() {
    let arm = AsciiArm::default();
    check_arm_text("FBX 6.1", &arm, &arm.text_v6());
}

/// `Upper` rests turned 30° and scaled 1.5 but was bound straight: the skin follows the
/// bones from the clusters' bind pose, so at rest it is turned and scaled too.
#[test]
fn bind_pose_comes_from_the_clusters_not_the_rest_pose() {
    check_arm(
        "bind pose other than the rest pose",
        &AsciiArm {
            upper_rest_y_deg: 30.0,
            upper_scale: 1.5,
            unit_cm: 1.0,
            z_up: true,
            ..Default::default()
        },
    );
}

/// The import skins `bytes` as ufbx evaluates the file itself (skinning on), at `samples`
/// frames of every clip: the conversion to glTF's node tree, TRS tracks, clusters and split vertices
/// changes nothing. Vertices are matched through their geometry-space positions.
fn check_against_ufbx(name: &str, bytes: &[u8], samples: usize) -> f64 {
    check_against_ufbx_at(name, bytes, samples, 0.0)
}

/// [`check_against_ufbx`] `offset` frames after each sampled frame (0.37: between frames,
/// where a resampled curve would be interpolated), the last sample kept inside the clip.
pub(crate) fn check_against_ufbx_at(name: &str, bytes: &[u8], samples: usize, offset: f64) -> f64 {
    let scene = skinview::io::fbx::import_slice(bytes, name).unwrap();
    let fbx = ufbx::load_memory(bytes, skinview::io::fbx::load_options()).unwrap();
    assert_eq!(
        fbx.anim_stacks.len(),
        scene.animations.len(),
        "{name}: clips"
    );
    let mut worst_rel: f64 = 0.0;
    for (clip, stack) in fbx.anim_stacks.iter().enumerate() {
        // At whole frames of the file's rate, or `offset` frames after them. The clip starts at its take's start (file time `begin`).
        let fps = fbx.settings.frames_per_second;
        let frames = (scene.animations[clip].duration_s() as f64 * fps).floor();
        let begin = match stack.time_begin < stack.time_end {
            true => stack.time_begin,
            false => 0.0,
        };
        for k in 0..samples {
            let frame = (frames * k as f64 / (samples - 1).max(1) as f64).round();
            let u = ((frame + offset).min(frames) / fps)
                .min(scene.animations[clip].duration_s() as f64);
            let t = begin + u;
            let opts = ufbx::EvaluateOpts {
                evaluate_skinning: true,
                ..Default::default()
            };
            let ev = ufbx::evaluate_scene(&fbx, &stack.anim, t, opts).unwrap();
            let mut frame = FrameState::new(&scene);
            frame.evaluate(&scene, Some(clip), u as f32).unwrap();
            let mut skinner = CpuSkinner::new(&scene, None);
            let ours = skinner.skin_all(&scene, &frame).unwrap();
            let (mut lo, mut hi) = (DVec3::MAX, DVec3::MIN);
            let mut worst: f64 = 0.0;
            for (d, draw) in scene.draws.iter().enumerate() {
                let m = &ev.meshes[draw.mesh];
                assert!(!m.skinned_is_local, "{name}: ufbx skinned in world space");
                let rest = &scene.primitive(draw).positions;
                // Each of our vertices is a ufbx vertex: the one at its geometry position.
                let index: std::collections::HashMap<[u32; 3], usize> = m
                    .vertices
                    .iter()
                    .enumerate()
                    .map(|(v, p)| ([p.x as f32, p.y as f32, p.z as f32].map(f32::to_bits), v))
                    .collect();
                for (i, p) in ours[d].positions.iter().enumerate() {
                    let v = index[&rest[i].to_array().map(f32::to_bits)];
                    let s = m.skinned_position.values[v];
                    let theirs = DVec3::new(s.x, s.y, s.z);
                    lo = lo.min(theirs);
                    hi = hi.max(theirs);
                    worst = worst.max((p.as_dvec3() - theirs).length());
                }
            }
            worst_rel = worst_rel.max(worst / (hi - lo).length());
        }
    }
    worst_rel
}

/// Maya's segment-scale compensation (`InheritType` 2: `Lower` ignores `Upper`'s scale 2)
/// becomes a scale helper node; the skin moves as ufbx evaluates the file.
#[test]
fn a_joint_ignoring_its_parents_scale_skins_as_fbx_says() {
    let arm = AsciiArm {
        upper_scale: 2.0,
        lower_inherit: 2,
        ..Default::default()
    };
    let scene = import(&arm);
    assert!(
        scene
            .nodes
            .iter()
            .any(|n| n.name.as_deref() == Some("Lower (scale helper)")
                || n.name.as_deref() == Some("Upper (scale helper)")),
        "no scale helper: {:?}",
        scene
            .nodes
            .iter()
            .map(|n| n.name.clone())
            .collect::<Vec<_>>()
    );
    let rel = check_against_ufbx("arm.fbx", arm.text().as_bytes(), 5);
    println!("segment-scale compensation: {rel:.2e} of the diagonal");
    assert!(
        rel <= TOLERANCE_REL,
        "{rel:.3e} of the diagonal from ufbx's evaluation"
    );
    // And it differs from the normal inheritance: the test can fail.
    let normal = import(&AsciiArm {
        upper_scale: 2.0,
        ..Default::default()
    });
    let (a, b) = (skinned(&scene, 1.0), skinned(&normal, 1.0));
    let moved = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f32::max);
    assert!(
        moved > 1.0,
        "ignoring the parent's scale changed nothing ({moved} m)"
    );
}

/// Every file Blender wrote skins as ufbx evaluates it, at 5 frames of every clip.
#[test]
fn blender_files_skin_as_ufbx_evaluates_them() {
    for stem in [
        "CesiumMan",
        "Fox",
        "RiggedFigure",
        "rig_seed4_8inf_morph_ubyte",
    ] {
        let bytes = std::fs::read(common::fbx::converted(stem)).unwrap();
        let rel = check_against_ufbx(&format!("{stem}.fbx"), &bytes, 5);
        println!("{stem}.fbx: {rel:.2e} of the diagonal from ufbx's evaluation");
        assert!(
            rel <= TOLERANCE_REL,
            "{stem}.fbx: {rel:.3e} of the diagonal from ufbx"
        );
    }
}

/// Three takes sharing one timeline (`Lower` turns 0° → 90° over 0–1 s), each its own
/// `LocalStart`…`LocalStop`: each clip lasts its range, starts at 0 s and plays that part of
/// the timeline (keys outside it dropped; a range past the last key holds it), as
/// [`expected`] puts the vertices at the file's time begin + t.
#[test]
fn each_take_plays_its_own_range_from_zero() {
    let takes = [
        ("Early", 0.0, 0.25),
        ("Middle", 0.25, 0.8),
        ("Hold", 0.6, 1.5),
    ];
    let arm = AsciiArm {
        takes: takes
            .iter()
            .map(|&(name, a, b)| (name.to_string(), a, b))
            .collect(),
        ..Default::default()
    };
    let scene = import(&arm);
    let n = ARM_RINGS.len() * 4;
    let size = 20.0 * arm.unit_cm / 100.0;
    assert_eq!(scene.animations.len(), takes.len());
    for (clip, &(name, begin_s, end_s)) in takes.iter().enumerate() {
        let a = &scene.animations[clip];
        assert_eq!(a.name.as_deref(), Some(name));
        let duration = a.duration_s() as f64;
        assert!(
            (duration - (end_s - begin_s)).abs() < 1e-6,
            "{name}: {duration} s"
        );
        for u in [0.0, 0.3 * duration, 0.7 * duration, duration] {
            let mut frame = FrameState::new(&scene);
            frame.evaluate(&scene, Some(clip), u as f32).unwrap();
            let got = CpuSkinner::new(&scene, None)
                .skin_all(&scene, &frame)
                .unwrap();
            let file_s = (begin_s + u).min(1.0);
            // Each drawn vertex is the arm vertex nearest it (they are far apart).
            let worst = got
                .iter()
                .flat_map(|o| o.positions.iter())
                .map(|p| {
                    (0..n)
                        .map(|v| (p.as_dvec3() - expected(&arm, v, file_s)).length())
                        .fold(f64::MAX, f64::min)
                })
                .fold(0.0, f64::max);
            println!(
                "{name} at {u:.3} s (file {file_s:.3} s): {:.2e} of the arm",
                worst / size
            );
            assert!(
                worst <= TOLERANCE_REL * size,
                "{name} at {u} s: {worst:.3e} m off"
            );
        }
    }
    // ufbx reads the same ranges from the file.
    let fbx = ufbx::load_memory(arm.text().as_bytes(), skinview::io::fbx::load_options()).unwrap();
    for (stack, &(_, begin_s, end_s)) in fbx.anim_stacks.iter().zip(&takes) {
        assert!((stack.time_begin - begin_s).abs() < 1e-9 && (stack.time_end - end_s).abs() < 1e-9);
    }
}
