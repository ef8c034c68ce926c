//! Four-lane sampling of compiled clips (`SoaAnimateJob`) against the per-channel sampler
//! (`AnimateJob`, itself checked against analytic keys and three.js elsewhere): every shared
//! model and rig, the built-in rigs and generated rigs with STEP, LINEAR and CUBICSPLINE
//! channels, over forward playback, reverse play, jumps, loop wraps and times outside the keys.
//! Vectors give the same bits; quaternions agree to a unit or two in the last place (the
//! polynomial sine and arc cosine, one reciprocal in the normalisation).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;
use crate::common::rng::XorShift64;

use skinview::anim::{AnimateJob, Cursor, Pose, SoaAnimateJob, SoaClip, SoaState};
use skinview::scene::Scene;

/// Largest quaternion difference allowed (component-wise, unit quaternions): polynomials
/// instead of `sin` and `acos`, a reciprocal instead of divisions (measured: 1.2e-7, an ulp
/// of 1).
const QUAT_TOLERANCE: f32 = 2.5e-7;

/// Times a player visits: 60 Hz forward through the clip and past its end, a loop wrap,
/// reverse play, random jumps, before the start.
fn times(duration: f32, rng: &mut XorShift64) -> Vec<f32> {
    let d = duration.max(0.1);
    let mut v: Vec<f32> = (0..=((d * 60.0) as usize + 30))
        .map(|f| f as f32 / 60.0)
        .collect();
    v.extend((0..60).map(|f| f as f32 / 60.0 * d * 0.5));
    v.extend((0..40).rev().map(|f| f as f32 / 40.0 * d));
    v.extend((0..50).map(|_| (rng.next_f32() * 1.4 - 0.2) * d));
    v.extend([-1.0, 0.0, d, d + 1.0, d * 0.5]);
    v
}

/// Sample every animation of `scene` both ways along `times` and compare.
fn check(scene: &Scene, label: &str, rng: &mut XorShift64) -> usize {
    let mut checked = 0;
    for (ai, anim) in scene.animations.iter().enumerate() {
        let visits = times(anim.duration_s(), rng);
        checked += compare_along(scene, ai, &visits, &format!("{label} anim {ai}"));
    }
    checked
}

/// Sample animation `ai` of `scene` both ways at each of `visits`, in order, and compare:
/// vectors to the bit, quaternions within [`QUAT_TOLERANCE`], morph weights equal.
fn compare_along(scene: &Scene, ai: usize, visits: &[f32], label: &str) -> usize {
    let anim = &scene.animations[ai];
    let clip = SoaClip::new(scene, anim).unwrap();
    assert_eq!(clip.duration_s(), anim.duration_s(), "{label}: clip length");
    let mut state = SoaState::new(&clip);
    // A second state the job prefetches as it plays (a crowd's next character): a hint that
    // must change nothing below.
    let ahead = SoaState::new(&clip);
    let mut cursors = vec![Cursor::default(); anim.channels.len()];
    let (mut a, mut b) = (Pose::rest(scene), Pose::rest(scene));
    for &t in visits {
        AnimateJob {
            scene,
            animation: Some(anim),
            time_s: t,
            cursors: &mut cursors,
            pose: &mut a,
        }
        .run()
        .unwrap();
        SoaAnimateJob {
            scene,
            clip: &clip,
            time_s: t,
            state: &mut state,
            ahead: Some(&ahead),
            pose: &mut b,
        }
        .run()
        .unwrap();
        for (n, (x, y)) in a.locals.iter().zip(&b.locals).enumerate() {
            assert_eq!(
                x.translation, y.translation,
                "{label} t={t} node {n}: translation"
            );
            assert_eq!(x.scale, y.scale, "{label} t={t} node {n}: scale");
            let d = (glam::Vec4::from(x.rotation) - glam::Vec4::from(y.rotation))
                .abs()
                .max_element();
            assert!(
                d <= QUAT_TOLERANCE,
                "{label} t={t} node {n}: rotation {} vs {} ({d:e})",
                x.rotation,
                y.rotation
            );
        }
        assert_eq!(a.morph_weights, b.morph_weights, "{label} t={t}");
    }
    visits.len()
}

#[test]
fn four_lane_sampling_matches_the_per_channel_sampler() {
    let mut rng = XorShift64(0x50A5_50A5);
    let mut checked = 0;
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        checked += check(&scene, &scene.name.clone(), &mut rng);
    }
    for b in skinview::builtin::Builtin::ALL {
        let scene = b.scene().unwrap();
        checked += check(&scene, b.name(), &mut rng);
    }
    // Generated rigs: STEP, LINEAR and CUBICSPLINE channels, irregular key times, rotation
    // keys with random sign flips, non-uniform scale, morph weights.
    for seed in 1..=6 {
        let o = common::rigs::RigOptions {
            seed,
            joints: 4 + 9 * seed as usize % 40,
            morph_targets: seed as usize % 3,
            ..Default::default()
        };
        let scene = common::rigs::generate_rig(&o).unwrap();
        checked += check(&scene, &format!("generated rig {seed}"), &mut rng);
    }
    println!("{checked} poses compared");
    assert!(checked > 1000);
    // Both kinds of lane group were compared: lockstep groups (four tracks on the same key
    // times, as baked exports have them: CesiumMan, RiggedFigure, Fox, RecursiveSkeletons) and
    // mixed ones.
    let (mut lockstep, mut mixed) = (0, 0);
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        for anim in &scene.animations {
            let (v, vl, q, ql) = SoaClip::new(&scene, anim).unwrap().lane_groups();
            lockstep += vl + ql;
            mixed += v - vl + q - ql;
        }
    }
    println!("{lockstep} lockstep and {mixed} mixed lane groups in the shared models");
    assert!(lockstep > 0 && mixed > 0);
}

/// The job's numbered rules, each broken once.
#[test]
fn soa_rules_are_named() {
    let arm = skinview::builtin::Builtin::Arm.scene().unwrap();
    let human = skinview::builtin::Builtin::Humanoid.scene().unwrap();
    let clip = SoaClip::new(&arm, &arm.animations[0]).unwrap();
    let rule = |scene: &Scene, state: &mut SoaState, pose: &mut Pose, t: f32| {
        SoaAnimateJob {
            scene,
            clip: &clip,
            time_s: t,
            state,
            ahead: None,
            pose,
        }
        .run()
        .err()
        .map(|e| e.to_string())
    };
    let mut state = SoaState::new(&clip);
    let mut pose = Pose::rest(&arm);
    assert_eq!(rule(&arm, &mut state, &mut pose, 0.5), None);
    let e = rule(&human, &mut state, &mut Pose::rest(&human), 0.5).unwrap();
    assert!(e.contains("rule 1"), "{e}");
    let mut small = Pose::rest(&arm);
    small.locals.pop();
    let e = rule(&arm, &mut state, &mut small, 0.5).unwrap();
    assert!(e.contains("rule 3"), "{e}");
    let e = rule(&arm, &mut state, &mut pose, f32::NAN).unwrap();
    assert!(e.contains("rule 4"), "{e}");
    // A state for a clip with other tracks is refused by rule 2.
    let rig = common::rigs::generate_rig(&common::rigs::RigOptions::default()).unwrap();
    let big = SoaClip::new(&rig, &rig.animations[0]).unwrap();
    let mut big_state = SoaState::new(&big);
    let e = rule(&arm, &mut big_state, &mut pose, 0.5).unwrap();
    assert!(e.contains("rule 2"), "{e}");
    // So is a state made for another compilation of the same animation (same track counts,
    // its own segment indices); a clone of the clip plays the state made for the original.
    let again = SoaClip::new(&arm, &arm.animations[0]).unwrap();
    let mut other = SoaState::new(&again);
    let e = rule(&arm, &mut other, &mut pose, 0.5).unwrap();
    assert!(e.contains("rule 2"), "{e}");
    // Rule 4 (of `SoaClip::new`): a second channel on the same property.
    let mut twice = arm.animations[0].clone();
    twice.channels.push(twice.channels[0].clone());
    let e = SoaClip::new(&arm, &twice).unwrap_err().to_string();
    assert!(e.contains("rule 4") && e.contains("channel 1"), "{e}");
    let copy = clip.clone();
    let ok = SoaAnimateJob {
        scene: &arm,
        clip: &copy,
        time_s: 0.5,
        state: &mut state,
        ahead: None,
        pose: &mut pose,
    }
    .run();
    assert!(ok.is_ok(), "{ok:?}");
}

/// Segment edges: a one-key track, a two-key track, STEP and LINEAR tracks with irregular
/// keys, sampled exactly at every key time and at the next float on either side, forward,
/// backward and at random, against the per-channel sampler.
#[test]
fn segment_edges_match_the_per_channel_sampler() {
    use skinview::anim::{Interpolation, Path, Sampler};
    let mut scene = skinview::builtin::Builtin::Arm.scene().unwrap();
    // A fourth node (a root of its own), so each track below drives its own property.
    let mut extra = scene.nodes[0].clone();
    extra.name = Some("extra".into());
    extra.source_index = scene.nodes.len();
    (extra.parent, extra.mesh, extra.skin) = (None, None, None);
    scene.nodes.push(extra);
    let times = [0.1f32, 0.25, 0.3, 0.7, 1.3];
    let key_times: Vec<f32> = times
        .iter()
        .flat_map(|&k| [k.next_down(), k, k.next_up()])
        .collect();
    let quat = |i: usize| {
        let q = glam::Quat::from_euler(glam::EulerRot::ZYX, i as f32 * 1.1, 0.3, -0.2 * i as f32);
        // Alternate signs: the shorter arc must be taken.
        let q = if i % 2 == 1 { -q } else { q };
        q.to_array()
    };
    let sampler = |interpolation, times: &[f32], components: usize, rotation: bool| Sampler {
        interpolation,
        times_s: times.to_vec(),
        values: (0..times.len())
            .flat_map(|i| {
                if rotation {
                    quat(i).to_vec()
                } else {
                    (0..components)
                        .map(|c| (i * 3 + c) as f32 * 0.25 - 1.0)
                        .collect()
                }
            })
            .collect(),
        components,
        is_rotation: rotation,
    };
    let anim = &mut scene.animations[0];
    anim.channels.clear();
    let specs = [
        (Path::Translation, Interpolation::Linear, &times[..1]),
        (Path::Rotation, Interpolation::Linear, &times[..1]),
        (Path::Scale, Interpolation::Step, &times[1..3]),
        (Path::Translation, Interpolation::Step, &times[..]),
        (Path::Rotation, Interpolation::Linear, &times[..2]),
        (Path::Rotation, Interpolation::Linear, &times[..]),
        (Path::Scale, Interpolation::Linear, &times[..]),
        (Path::Rotation, Interpolation::Step, &times[..]),
    ];
    for (i, (path, interpolation, keys)) in specs.into_iter().enumerate() {
        let rotation = path == Path::Rotation;
        // The first track on this path goes to node 0, the next to node 1, and so on.
        let node = specs[..i].iter().filter(|s| s.0 == path).count();
        anim.channels.push(skinview::anim::Channel {
            node,
            path,
            sampler: sampler(interpolation, keys, if rotation { 4 } else { 3 }, rotation),
        });
    }
    let clip = SoaClip::new(&scene, &scene.animations[0]).unwrap();
    assert_eq!(clip.track_counts(), (4, 4, 0));
    let mut rng = XorShift64(0xED6E);
    let mut visits: Vec<f32> = key_times.clone();
    visits.extend(key_times.iter().rev());
    visits.extend((0..200).map(|f| f as f32 / 120.0));
    visits.extend((0..50).map(|_| rng.next_f32() * 1.6 - 0.1));
    compare_along(&scene, 0, &visits, "segment edges");
}

/// `Pose::reset_morph_weights` against its rule written out here: one list per node; a node
/// whose mesh has morph targets gets one weight per target (the node's own weights, else the
/// mesh's, else 0), every other node an empty list. Poses start with stale lists of the wrong
/// lengths; scenes with and without morph targets.
#[test]
fn morph_weights_reset_to_rest_from_any_state() {
    let mut scenes: Vec<Scene> = common::all_models()
        .iter()
        .map(|p| skinview::io::load(p).unwrap())
        .collect();
    for b in skinview::builtin::Builtin::ALL {
        scenes.push(b.scene().unwrap());
    }
    for seed in [1, 4] {
        let o = common::rigs::RigOptions {
            seed,
            morph_targets: seed as usize % 3,
            ..Default::default()
        };
        scenes.push(common::rigs::generate_rig(&o).unwrap());
    }
    let mut with_targets = 0;
    for scene in &scenes {
        let mut pose = Pose::rest(scene);
        pose.morph_weights = vec![vec![7.0; 3]; scene.nodes.len() + 2];
        pose.reset_morph_weights(scene);
        assert_eq!(
            pose.morph_weights.len(),
            scene.nodes.len(),
            "{}",
            scene.name
        );
        for (i, (w, node)) in pose.morph_weights.iter().zip(&scene.nodes).enumerate() {
            let count = node.mesh.map_or(0, |m| {
                let mesh = &scene.meshes[m];
                mesh.primitives
                    .iter()
                    .map(|p| p.morph_targets.len())
                    .max()
                    .unwrap_or(0)
            });
            let want: Vec<f32> = (0..count)
                .map(|k| {
                    let mesh = &scene.meshes[node.mesh.unwrap()];
                    let src = node
                        .morph_weights
                        .as_deref()
                        .unwrap_or(&mesh.default_morph_weights);
                    src.get(k).copied().unwrap_or(0.0)
                })
                .collect();
            with_targets += usize::from(count > 0);
            assert_eq!(w, &want, "{} node {i}", scene.name);
        }
    }
    // Both branches ran: scenes with morph targets and scenes without.
    assert!(with_targets > 0);
    assert!(
        scenes
            .iter()
            .any(|s| s.meshes.iter().all(|m| m.morph_target_count() == 0))
    );
}
