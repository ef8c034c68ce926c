//! Native Weber rigs: format round trips, conversion to the internal skeleton, glTF export,
//! validation errors, and layered motions against hand-composed poses.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use glam::{Quat, Vec3};
use skinview::anim::layer::{BoneMask, CrossFade, DEFAULT_THRESHOLD, Layer, LayerJob, track_mask};
use skinview::anim::{AnimateJob, Cursor, Pose};
use skinview::io::dump::diff;
use skinview::io::gltf_export::{ExportOptions, export_glb};
use skinview::math::Trs;
use skinview::rig::{Bone, WeberRig};

fn humanoid() -> WeberRig {
    skinview::builtin::humanoid_rig().unwrap()
}

fn rigs() -> Vec<WeberRig> {
    vec![humanoid(), skinview::builtin::woodland_arm_rig().unwrap()]
}

/// native → JSON → native is exact; native → internal → native keeps every field (lengths,
/// limits, sections, links, displacements to f32 rounding, tracks, weights).
#[test]
fn native_round_trips_are_lossless() {
    for rig in rigs() {
        let text = skinview::io::rig_json::to_string(&rig);
        let back = skinview::io::rig_json::parse(&text, "mem.rig.json").unwrap();
        assert_eq!(back, rig, "{}: JSON round trip changed the rig", rig.name);
        let rs = rig.to_scene().unwrap();
        let again = WeberRig::from_scene(&rs, &rig.name).unwrap();
        assert_eq!(again.bones.len(), rig.bones.len());
        for (a, b) in again.bones.iter().zip(&rig.bones) {
            assert_eq!(
                (
                    &a.name,
                    a.parent,
                    a.length_m,
                    a.limits_deg,
                    a.base_section,
                    a.tip_section,
                    a.links
                ),
                (
                    &b.name,
                    b.parent,
                    b.length_m,
                    b.limits_deg,
                    b.base_section,
                    b.tip_section,
                    b.links
                )
            );
            for k in 0..3 {
                assert!(
                    (a.displacement_m[k] - b.displacement_m[k]).abs() <= 1e-6,
                    "{}: displacement",
                    a.name
                );
            }
            let (qa, qb) = (Quat::from_array(a.rotation), Quat::from_array(b.rotation));
            assert!(
                (qa - qb).length() < 1e-6 || (qa + qb).length() < 1e-6,
                "{}: rotation",
                a.name
            );
        }
        let (ma, mb) = (again.mesh.as_ref().unwrap(), rig.mesh.as_ref().unwrap());
        assert_eq!(ma.positions, mb.positions);
        assert_eq!(ma.triangles, mb.triangles);
        assert_eq!(ma.weights, mb.weights);
        assert_eq!(again.motions.len(), rig.motions.len());
        assert_eq!(ma.normals, mb.normals);
        assert_eq!(ma.color, mb.color);
        for (x, y) in again.motions.iter().zip(&rig.motions) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.looping, y.looping, "{}: looping flag lost", x.name);
            let keys = |m: &skinview::rig::Motion| {
                m.tracks
                    .iter()
                    .map(|t| t.rotation_keys.len() + t.displacement_keys.len())
                    .sum::<usize>()
            };
            assert_eq!(keys(x), keys(y));
        }
    }
}

/// Weber's convention maps to node transforms: a bone's base sits at its parent's tip plus
/// the displacement (checked on model-space positions computed by hand along a chain).
#[test]
fn bone_bases_sit_at_parent_tips() {
    let mut rig = WeberRig::new(
        "chain",
        vec![
            Bone {
                name: "a".into(),
                parent: None,
                length_m: 1.0,
                displacement_m: [0.0, 2.0, 0.0],
                rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2).to_array(),
                limits_deg: None,
                base_section: None,
                tip_section: None,
                links: None,
                muscle: false,
            },
            Bone {
                name: "b".into(),
                parent: Some(0),
                length_m: 0.5,
                displacement_m: [0.0, 0.0, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
                limits_deg: None,
                base_section: None,
                tip_section: None,
                links: None,
                muscle: false,
            },
            Bone {
                name: "c".into(),
                parent: Some(1),
                length_m: 0.25,
                displacement_m: [0.1, 0.0, 0.0],
                rotation: Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2).to_array(),
                limits_deg: None,
                base_section: None,
                tip_section: None,
                links: None,
                muscle: false,
            },
        ],
    );
    rig.format = skinview::rig::FORMAT.into();
    let rs = rig.to_scene().unwrap();
    let mut frame = skinview::frame::FrameState::new(&rs.scene);
    frame.evaluate(&rs.scene, None, 0.0).unwrap();
    let base = |b: usize| frame.model_from_node[rs.node_of_bone[b]].w_axis.truncate();
    // a: base (0,2,0), pointing +Y (X rotated 90° about Z), tip (0,3,0).
    assert!((base(0) - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-6);
    // b: at a's tip.
    assert!(
        (base(1) - Vec3::new(0.0, 3.0, 0.0)).length() < 1e-6,
        "{}",
        base(1)
    );
    // c: b's tip (0,3.5,0) plus 0.1 along b's X (+Y).
    assert!(
        (base(2) - Vec3::new(0.0, 3.6, 0.0)).length() < 1e-6,
        "{}",
        base(2)
    );
}

/// native rig → glTF export → import skins like the native rig (≤ 1e-5 of the diagonal).
#[test]
fn native_to_gltf_round_trip_skins_the_same() {
    for rig in rigs() {
        let rs = rig.to_scene().unwrap();
        let bytes = export_glb(&rs.scene, &ExportOptions::default()).unwrap();
        let back =
            skinview::io::gltf_import::import_slice(&bytes, std::path::Path::new("exported.glb"))
                .unwrap();
        for anim in 0..rs.scene.animations.len() {
            let d = rs.scene.animations[anim].duration_s();
            let times = [0.0, d * 0.31, d * 0.77, d];
            let a = common::dump(
                &rs.scene,
                Some(anim),
                &times,
                common::Source::CPU,
                None,
                None,
            )
            .unwrap();
            let b =
                common::dump(&back, Some(anim), &times, common::Source::CPU, None, None).unwrap();
            let e = diff(&a, &b).unwrap();
            println!(
                "{} anim {anim}: glTF round trip {:.2e} of diagonal",
                rig.name,
                e.max_position / a.diagonal()
            );
            assert!(
                e.max_position <= 1e-5 * a.diagonal(),
                "{} anim {anim}: {:e}",
                rig.name,
                e.max_position
            );
        }
    }
}

/// `info`/`dump` accept native rigs like glTF files.
#[test]
fn native_files_load_through_io() {
    let dir = std::env::temp_dir().join(format!("skinview-rig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("h.rig.json");
    std::fs::write(&p, skinview::io::rig_json::to_string(&humanoid())).unwrap();
    let scene = skinview::io::load(&p).unwrap();
    assert_eq!(scene.skins[0].joints.len(), 18);
    assert_eq!(scene.animations.len(), 3);
    // The committed asset is what the generator writes today.
    let asset = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/humanoid.rig.json");
    assert!(
        std::fs::read_to_string(asset).unwrap() == skinview::io::rig_json::to_string(&humanoid()),
        "assets/humanoid.rig.json is stale: cargo run -- export builtin:humanoid --out assets/humanoid.rig.json"
    );
}

#[test]
fn bad_native_files_name_the_field() {
    let good = skinview::io::rig_json::to_string(&humanoid());
    let cases: Vec<(String, &str)> = vec![
        (
            good.replacen("\"version\":1", "\"version\":7", 1),
            "version",
        ),
        (
            good.replacen("\"format\":\"skinview.rig\"", "\"format\":\"other\"", 1),
            "format",
        ),
        (
            good.replacen("\"parent\":null", "\"parent\":5", 1),
            "bones[0]",
        ),
        (
            good.replacen("\"length_m\":0.12", "\"length_m\":-1.0", 1),
            "length_m",
        ),
        (
            good.replacen("\"bone\":\"l_thigh\"", "\"bone\":\"tail\"", 1),
            "no bone named",
        ),
        (good[..good.len() / 2].to_string(), "line"),
        // A value of the wrong type: the JSON path names the field.
        (
            good.replacen("\"length_m\":0.12", "\"length_m\":\"long\"", 1),
            "].length_m: invalid type: string",
        ),
        (
            good.replacen("\"name\":\"spine\"", "\"name\":\"pelvis\"", 1),
            "duplicate bone name",
        ),
        (
            good.replacen("\"links\":{\"count\":2", "\"links\":{\"count\":0", 1),
            "links.count",
        ),
        (
            good.replacen("\"radii_m\":[0.11,0.15]", "\"radii_m\":[0.0,0.15]", 1),
            "base_section",
        ),
    ];
    // A zero quaternion key: rewrite the first rotation key's value.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["motions"][0]["tracks"][0]["rotation_keys"][0]["value"] =
        serde_json::json!([0.0, 0.0, 0.0, 0.0]);
    let zero_key = (serde_json::to_string(&v).unwrap(), "zero-length quaternion");
    // A second track for a bone that already has one in the motion.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let tracks = v["motions"][0]["tracks"].as_array_mut().unwrap();
    let again = tracks[0].clone();
    tracks.push(again);
    let n = tracks.len() - 1;
    let twice = (
        serde_json::to_string(&v).unwrap(),
        format!("tracks[{n}].bone: bone"),
    );
    let cases: Vec<(String, String)> = cases
        .into_iter()
        .map(|(t, n)| (t, n.to_string()))
        .chain([(zero_key.0, zero_key.1.to_string()), twice])
        .collect();
    for (text, needle) in cases {
        let r = std::panic::catch_unwind(|| skinview::io::rig_json::parse(&text, "bad.rig.json"));
        let err = r.expect("no panic").expect_err("must fail").to_string();
        assert!(
            err.contains("bad.rig.json") && err.contains(&needle),
            "{needle}: {err}"
        );
    }
}

fn sample(scene: &skinview::Scene, anim: usize, t: f32) -> Pose {
    let mut pose = Pose::rest(scene);
    let mut cursors = vec![Cursor::default(); scene.animations[anim].channels.len()];
    AnimateJob {
        scene,
        animation: Some(&scene.animations[anim]),
        time_s: t,
        cursors: &mut cursors,
        pose: &mut pose,
    }
    .run()
    .unwrap();
    pose
}

/// `layers` over `reference` through `LayerJob` at the default threshold.
fn layered(reference: &[Trs], layers: &[Layer]) -> Vec<Trs> {
    let mut out = vec![Trs::IDENTITY; reference.len()];
    LayerJob {
        reference,
        layers,
        threshold: DEFAULT_THRESHOLD,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// Run on the lower body and throw on the upper body through masks equals the pose composed
/// by hand: upper-body bones from the throw where it has tracks, else reference; lower-body
/// bones from the run.
#[test]
fn layered_motions_equal_hand_composed_poses() {
    let scene = skinview::builtin::humanoid().unwrap();
    let run = sample(&scene, 1, 0.4);
    let throw = sample(&scene, 2, 0.6);
    let upper = BoneMask::subtree(&scene, scene.find_node("spine").unwrap());
    let lower = BoneMask::invert(&upper);
    let throw_mask: Vec<f32> = upper
        .iter()
        .zip(track_mask(&scene, &scene.animations[2]))
        .map(|(a, b)| a * b)
        .collect();
    let reference: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
    let layers = [
        Layer {
            pose: &run.locals,
            weight: 1.0,
            mask: Some(&lower),
        },
        Layer {
            pose: &throw.locals,
            weight: 1.0,
            mask: Some(&throw_mask),
        },
    ];
    let out = layered(&reference, &layers);
    for (i, n) in scene.nodes.iter().enumerate() {
        let expected = if lower[i] > 0.0 {
            run.locals[i]
        } else if throw_mask[i] > 0.0 {
            throw.locals[i]
        } else {
            reference[i]
        };
        let q_ok = (out[i].rotation - expected.rotation).length() < 1e-6
            || (out[i].rotation + expected.rotation).length() < 1e-6;
        assert!(
            q_ok && (out[i].translation - expected.translation).length() < 1e-6,
            "{:?}",
            n.name
        );
    }
    // A 50/50 cross-fade between two rotations about one axis is the half-angle rotation.
    let a = [Trs {
        rotation: Quat::from_rotation_z(0.2),
        ..Trs::IDENTITY
    }];
    let b = [Trs {
        rotation: Quat::from_rotation_z(1.0),
        translation: Vec3::X,
        ..Trs::IDENTITY
    }];
    let (wa, wb) = CrossFade {
        start_s: 1.0,
        duration_s: 2.0,
    }
    .weights(2.0);
    assert!((wa - 0.5).abs() < 1e-6 && (wb - 0.5).abs() < 1e-6);
    let o = layered(
        &[Trs::IDENTITY],
        &[
            Layer {
                pose: &a,
                weight: wa,
                mask: None,
            },
            Layer {
                pose: &b,
                weight: wb,
                mask: None,
            },
        ],
    );
    let (axis, angle) = o[0].rotation.to_axis_angle();
    assert!((angle - 0.6).abs() < 1e-5 && axis.z > 0.999, "{angle}");
    assert!((o[0].translation - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6);
    // Bones below the threshold fall back to the reference.
    let o = layered(
        &[Trs {
            translation: Vec3::Y,
            ..Trs::IDENTITY
        }],
        &[Layer {
            pose: &b,
            weight: 0.0,
            mask: None,
        }],
    );
    assert_eq!(o[0].translation, Vec3::Y);
    // Cross-fade weights always sum to 1 and are monotone.
    let f = CrossFade {
        start_s: 0.3,
        duration_s: 0.5,
    };
    let mut last = 0.0;
    for i in 0..100 {
        let (x, y) = f.weights(i as f32 * 0.01);
        assert!((x + y - 1.0).abs() < 1e-6 && y >= last);
        last = y;
    }
}

/// `LayerJob` against a blend written out here (seeded random poses, weights and masks with
/// many zeros, single layers below, at and above the threshold): where no layer covers a bone
/// it is the reference, where one covers it at or above the threshold it is that layer's
/// transform to the bit (as sampled, not renormalised: the keys here are not unit), else the
/// weighted average with rotations in the first contributor's hemisphere, normalised.
#[test]
fn layer_job_matches_a_written_out_blend() {
    let mut next = common::rng::xorshift32(0x0bad_cafe);
    let bones = 64;
    for round in 0..50 {
        let mut trs = |scale: f32| Trs {
            translation: Vec3::new(next(), next(), next()) * 2.0 - Vec3::ONE,
            rotation: Quat::from_xyzw(next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5)
                * scale,
            scale: Vec3::new(next(), next(), next()) + Vec3::splat(0.5),
        };
        let reference: Vec<Trs> = (0..bones).map(|_| trs(1.0)).collect();
        let count = 1 + round % 4;
        let poses: Vec<Vec<Trs>> = (0..count)
            .map(|_| (0..bones).map(|_| trs(1.3)).collect())
            .collect();
        // Weights: zero, just under, at and over the threshold, or anything up to 1.
        let mut weight = || match (next() * 5.0) as u32 {
            0 => 0.0,
            1 => DEFAULT_THRESHOLD * 0.5,
            2 => DEFAULT_THRESHOLD,
            _ => next(),
        };
        let masks: Vec<Vec<f32>> = (0..count)
            .map(|_| (0..bones).map(|_| weight()).collect())
            .collect();
        let weights: Vec<f32> = (0..count)
            .map(|_| if next() < 0.2 { 0.5 } else { 1.0 })
            .collect();
        let layers: Vec<Layer> = (0..count)
            .map(|l| Layer {
                pose: &poses[l],
                weight: weights[l],
                mask: Some(&masks[l]),
            })
            .collect();
        let out = layered(&reference, &layers);
        for b in 0..bones {
            let mut parts: Vec<(Trs, f32)> = (0..count)
                .map(|l| (poses[l][b], weights[l] * masks[l][b]))
                .filter(|&(_, w)| w > 0.0)
                .collect();
            let total: f32 = parts.iter().map(|p| p.1).sum();
            if total < DEFAULT_THRESHOLD {
                parts.push((reference[b], DEFAULT_THRESHOLD - total));
            }
            let got = out[b];
            if parts.len() == 1 {
                assert_eq!(got, parts[0].0, "round {round} bone {b}: one contributor");
                continue;
            }
            let sum: f32 = parts.iter().map(|p| p.1).sum();
            let first = glam::Vec4::from(parts[0].0.rotation);
            let (mut t, mut sc, mut q) = (Vec3::ZERO, Vec3::ZERO, glam::Vec4::ZERO);
            for (x, w) in &parts {
                let r = glam::Vec4::from(x.rotation);
                q += if r.dot(first) < 0.0 { -r } else { r } * *w;
                t += x.translation * *w;
                sc += x.scale * *w;
            }
            let want = Trs {
                translation: t / sum,
                rotation: Quat::from_vec4(q.normalize()),
                scale: sc / sum,
            };
            let close = (got.translation - want.translation).length() < 1e-5
                && (got.scale - want.scale).length() < 1e-5
                && glam::Vec4::from(got.rotation).distance(glam::Vec4::from(want.rotation)) < 1e-5;
            assert!(close, "round {round} bone {b}: {got:?} vs {want:?}");
        }
    }
}

/// Muscle bones (Woodland's biceps: weights that do not sum to 1) against the analytic
/// deformation: at rest and while the biceps only follows the turning upper arm the skin is
/// exactly the ordinary blend (here the arm's rigid turn `R p`); flexed, each vertex moves on
/// by `w · R (S (p − c) − (p − c))` with `c` the biceps' joint and `S` its scale. Linear and
/// dual quaternion blending agree with it (the pair `+w`/`−w` cancels in the rigid part and
/// leaves the scale); stitching follows the ordinary bone (a muscle never has a vertex's
/// largest weight here). The rig survives JSON and scene round trips.
#[test]
fn muscle_bone_bulges_only_when_scaled() {
    use skinview::frame::{CpuSkinner, FrameState};
    use skinview::skin::{SkinMode, SkinOptions, SkinnedVertices};
    let rig = common::rigs::biceps_rig();
    rig.validate("biceps").unwrap();
    let text = skinview::io::rig_json::to_string(&rig);
    assert!(text.contains("\"muscle\":true") && text.contains("\"scale_keys\""));
    assert_eq!(
        skinview::io::rig_json::parse(&text, "biceps.rig.json").unwrap(),
        rig
    );
    let rs = rig.to_scene().unwrap();
    let back = WeberRig::from_scene(&rs, &rig.name).unwrap();
    assert_eq!(back.bones, rig.bones);
    // Motions: the same tracks, rotations renormalised on the way (to the last ulp).
    let keys = |r: &WeberRig| -> Vec<(String, Vec<f32>)> {
        r.motions
            .iter()
            .flat_map(|m| &m.tracks)
            .map(|t| {
                let v = t.displacement_keys.iter().flat_map(|k| k.value);
                let v = v.chain(t.rotation_keys.iter().flat_map(|k| k.value));
                let v = v.chain(t.scale_keys.iter().flat_map(|k| k.value));
                (t.bone.clone(), v.collect())
            })
            .collect()
    };
    for (a, b) in keys(&back).iter().zip(&keys(&rig)) {
        assert!(a.0 == b.0 && a.1.len() == b.1.len(), "{a:?} vs {b:?}");
        assert!(a.1.iter().zip(&b.1).all(|(x, y)| (x - y).abs() < 1e-6));
    }
    for (a, b) in back
        .mesh
        .as_ref()
        .unwrap()
        .weights
        .iter()
        .zip(&rig.mesh.as_ref().unwrap().weights)
    {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!(x.0 == y.0 && (x.1 - y.1).abs() < 1e-6, "{a:?} vs {b:?}");
        }
    }
    let scene = &rs.scene;
    let draw = scene.draws.iter().position(|d| d.skin.is_some()).unwrap();
    let mesh = rig.mesh.as_ref().unwrap();
    let muscle_weight = |v: usize| {
        mesh.weights[v]
            .iter()
            .find(|e| e.0 == 2)
            .map_or(0.0, |e| e.1)
    };
    assert!((0..mesh.positions.len()).any(|v| muscle_weight(v) > 0.45));
    let turn = Quat::from_rotation_z(40f32.to_radians());
    let c = Vec3::new(0.3, 0.08, 0.0);
    let s = Vec3::new(1.0, 1.6, 1.6);
    let mut frame = FrameState::new(scene);
    let mut out = SkinnedVertices::default();
    for mode in [SkinMode::Lbs, SkinMode::Dqs, SkinMode::Stitch] {
        let mut skinner = CpuSkinner::new(scene, None);
        skinner.set_draw_options(
            scene,
            draw,
            SkinOptions {
                mode,
                ..Default::default()
            },
        );
        for (anim, time_s, flexed) in [(0, 0.0, false), (1, 1.0, false), (0, 1.0, true)] {
            frame.evaluate(scene, Some(anim), time_s).unwrap();
            skinner.skin_draw(scene, &frame, draw, &mut out).unwrap();
            let r = if time_s > 0.0 { turn } else { Quat::IDENTITY };
            let mut worst = 0.0f32;
            for (v, (&p, &got)) in mesh.positions.iter().zip(&out.positions).enumerate() {
                let p = Vec3::from(p);
                let bulge = if flexed && mode != SkinMode::Stitch {
                    muscle_weight(v) * ((p - c) * s - (p - c))
                } else {
                    Vec3::ZERO
                };
                worst = worst.max((got - r * (p + bulge)).length());
            }
            assert!(
                worst < 2e-6,
                "{mode:?}, motion {anim} at {time_s} s: {worst} m from the analytic skin"
            );
        }
    }
}

/// A muscle needs a parent that is not a muscle and no links, and its weights are at most 1;
/// the ordinary weights still sum to 1 (the message says muscles are not counted); glTF
/// export, bone links and the weight tools refuse the negative weights a muscle gives.
#[test]
fn muscle_bone_errors_are_named() {
    let base = common::rigs::biceps_rig();
    let err = |rig: &WeberRig| rig.validate("m.rig.json").unwrap_err().to_string();
    let mut r = base.clone();
    r.bones[0].muscle = true;
    assert!(
        err(&r).contains("bones[0] (upper_arm).muscle"),
        "{}",
        err(&r)
    );
    let mut r = base.clone();
    r.bones[1].muscle = true;
    r.bones[2].parent = Some(1);
    assert!(err(&r).contains("bones[2] (biceps).muscle") && err(&r).contains("muscle too"));
    let mut r = base.clone();
    r.mesh.as_mut().unwrap().weights[0].push((2, 1.5));
    assert!(err(&r).contains("mesh.weights[0]") && err(&r).contains("at most 1"));
    let mut r = base.clone();
    r.mesh.as_mut().unwrap().weights[0] = vec![(0, 0.5), (2, 0.5)];
    assert!(
        err(&r).contains("sum to 0.5 (muscle bones not counted)"),
        "{}",
        err(&r)
    );
    // The biceps sits on vertices whose parent weight covers it: its pair is +w on the
    // biceps, 1 − w on the upper arm, which glTF holds (and any engine skins the same).
    let scene = base.to_scene().unwrap().scene;
    let glb = export_glb(&scene, &ExportOptions::default()).unwrap();
    let reimported =
        skinview::io::gltf_import::import_slice(&glb, std::path::Path::new("biceps.glb")).unwrap();
    let (a, b) = (
        scene.meshes[0].primitives[0].skin_weights.as_ref().unwrap(),
        reimported.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .unwrap(),
    );
    assert!(
        a.weights
            .iter()
            .zip(&b.weights)
            .all(|(x, y)| (x - y).abs() < 1e-6)
    );
    // A muscle weight on a forearm-only vertex gives the upper arm a negative weight.
    let mut r = base.clone();
    let last = r.mesh.as_ref().unwrap().weights.len() - 1;
    r.mesh.as_mut().unwrap().weights[last].push((2, 0.3));
    let rs = r.to_scene().unwrap();
    let scene = rs.scene;
    let e = export_glb(&scene, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("WEIGHTS_0") && e.contains(".rig.json"), "{e}");
    let (upper, fore) = (rs.node_of_bone[0], rs.node_of_bone[1]);
    let spec = skinview::links::LinkSpec {
        total_length_m: Some(0.3),
        ..skinview::links::LinkSpec::new(upper, fore)
    };
    let e = skinview::links::insert_links(&scene, &[spec], &Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("negative weight") && e.contains("rule 7"), "{e}");
    let mut edited = scene;
    let e = skinview::weights::edit::edit_scene(
        &mut edited,
        &skinview::weights::edit::WeightEdit {
            new_weights: skinview::weights::edit::NewWeights::Keep,
            smooth: None,
            rogue: true,
            max_influences: 4,
        },
        "biceps",
        |_, _| {},
    );
    assert!(
        e.as_ref()
            .is_err_and(|e| e.to_string().contains("negative weight")),
        "{e:?}"
    );
}

/// `builtin:dense-humanoid` is the humanoid subdivided: at least 100,000 vertices, the
/// humanoid's vertices first with their influences unchanged, so at any time of any clip they
/// skin to the humanoid's positions (CPU reference of both, the same bits); every new vertex
/// is the rest midpoint of two vertices, so the bounds stay the humanoid's.
#[test]
fn dense_humanoid_is_the_humanoid_subdivided() {
    use skinview::builtin::Builtin;
    use skinview::character::CharacterSetup;
    let (a, b) = (humanoid(), Builtin::DenseHumanoid.rig().unwrap());
    let (ma, mb) = (a.mesh.as_ref().unwrap(), b.mesh.as_ref().unwrap());
    let n = ma.positions.len();
    assert!(mb.positions.len() >= 100_000, "{}", mb.positions.len());
    assert_eq!(mb.positions[..n], ma.positions[..]);
    assert_eq!(mb.weights[..n], ma.weights[..]);
    assert_eq!(b.motions, a.motions);
    let bounds = |m: &skinview::rig::RigMesh| {
        m.positions.iter().fold(
            (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
            |(lo, hi), p| (lo.min((*p).into()), hi.max((*p).into())),
        )
    };
    assert_eq!(bounds(mb), bounds(ma));
    for anim in 0..a.motions.len() {
        let mut ca = CharacterSetup {
            looping: true,
            ..CharacterSetup::clip(Some(anim))
        }
        .build(&Builtin::Humanoid.scene().unwrap())
        .unwrap();
        let mut cb = CharacterSetup {
            looping: true,
            ..CharacterSetup::clip(Some(anim))
        }
        .build(&Builtin::DenseHumanoid.scene().unwrap())
        .unwrap();
        for time_s in [0.0, 0.37, 0.81] {
            ca.update(time_s, 0.0).unwrap();
            cb.update(time_s, 0.0).unwrap();
            assert_eq!(
                cb.outputs[0].positions[..n],
                ca.outputs[0].positions[..],
                "clip {anim} at {time_s} s"
            );
        }
    }
}
