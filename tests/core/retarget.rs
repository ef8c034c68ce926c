//! Retargeting (issue 47): name matching onto the humanoid profile, the map file, a rig onto
//! itself, the reference pose, the clip written key for key against the per-frame job, and
//! the built-in humanoid's walk onto a differently named, re-bound, larger character and back.
//! The characters are made here from the built-in humanoid: a copy with its arms lowered 45°
//! in the rest pose (same mesh and bind), one re-bound in that A-pose (mesh and inverse bind
//! matrices), and one renamed the Mixamo way and scaled.

#![allow(clippy::unwrap_used)] // test code: a panic is its report

use glam::Vec3;
use skinview::anim::Pose;
use skinview::frame::{FrameState, skin_pose};
use skinview::retarget::names::humanoid_bone;
use skinview::retarget::{
    BoneMap, Reference, RetargetJob, RetargetOptions, RetargetPlayer, RetargetSetup, clip_readouts,
    retarget_clip,
};
use skinview::scene::Scene;

use crate::common::retarget::{
    A_POSE_RAD, ARMS, MIXAMO, humanoid, mixamo, node, rebind, turn_rest,
};

/// Every skinned vertex of `scene` playing clip `anim` at `t` (rest pose for `None`).
fn skinned(scene: &Scene, anim: Option<usize>, t: f32) -> Vec<Vec3> {
    skin_pose(scene, anim, t, None)
        .unwrap()
        .into_iter()
        .flat_map(|s| s.positions)
        .collect()
}

fn diagonal(points: &[Vec3]) -> f32 {
    let (lo, hi) = points
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(a, b), p| (a.min(*p), b.max(*p)));
    (hi - lo).length()
}

fn largest_gap(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| x.distance(*y))
        .fold(0.0, f32::max)
}

/// `scene` with clip `clip` walking forward: the pelvis given the speed at which the built-in
/// (treadmill) walk moves the left foot at its lowest, so that foot stands still there (the
/// built-in walk has no stance phase of its own: in place, no foot is ever slower than
/// 0.1 m/s).
fn with_root_motion(mut scene: Scene, clip: usize) -> Scene {
    let foot = node(&scene, "l_foot");
    let duration = scene.animations[clip].duration_s();
    let mut frame = FrameState::new(&scene);
    let track: Vec<Vec3> = (0..=120)
        .map(|k| {
            frame
                .evaluate(&scene, Some(clip), duration * k as f32 / 120.0)
                .unwrap();
            frame.model_from_node[foot].w_axis.truncate()
        })
        .collect();
    let dt = duration / 120.0;
    let low = (1..track.len() - 1)
        .min_by(|&a, &b| track[a].y.total_cmp(&track[b].y))
        .unwrap();
    let v = (track[low + 1] - track[low - 1]) / (2.0 * dt);
    let v = Vec3::new(v.x, 0.0, v.z);
    let pelvis = node(&scene, "pelvis");
    // The pelvis's own translation over the clip, sampled, plus the travel.
    let times: Vec<f32> = (0..=120).map(|k| duration * k as f32 / 120.0).collect();
    let values = times
        .iter()
        .flat_map(|&t| {
            frame.evaluate(&scene, Some(clip), t).unwrap();
            (frame.pose.locals[pelvis].translation - v * t).to_array()
        })
        .collect();
    set_pelvis_translation(&mut scene, clip, times, values);
    scene
}

#[test]
fn names_of_five_conventions_meet_in_the_humanoid_profile() {
    let cases: &[(&str, Option<&str>)] = &[
        // Mixamo
        ("mixamorig:Hips", Some("hips")),
        ("mixamorig:LeftArm", Some("leftUpperArm")),
        ("mixamorig:LeftForeArm", Some("leftLowerArm")),
        ("mixamorig:RightUpLeg", Some("rightUpperLeg")),
        ("mixamorig:RightLeg", Some("rightLowerLeg")),
        ("mixamorig:LeftToeBase", Some("leftToes")),
        ("mixamorig:LeftShoulder", Some("leftShoulder")),
        ("mixamorig:LeftHandThumb1", Some("leftThumbMetacarpal")),
        ("mixamorig:RightHandIndex2", Some("rightIndexIntermediate")),
        ("mixamorig:Neck", Some("neck")),
        ("mixamorig:HeadTop_End", None),
        // Blender
        ("upper_arm.L", Some("leftUpperArm")),
        ("forearm.R", Some("rightLowerArm")),
        ("thigh.L", Some("leftUpperLeg")),
        ("shin.R", Some("rightLowerLeg")),
        ("DEF-hand.L", Some("leftHand")),
        ("Armature|foot.R", Some("rightFoot")),
        ("thumb.01.L", Some("leftThumbMetacarpal")),
        ("f_index.02.R", Some("rightIndexIntermediate")),
        // VRM 1.0
        ("hips", Some("hips")),
        ("leftUpperArm", Some("leftUpperArm")),
        ("leftThumbProximal", Some("leftThumbProximal")),
        ("rightLittleDistal", Some("rightLittleDistal")),
        // Unreal
        ("pelvis", Some("hips")),
        ("upperarm_l", Some("leftUpperArm")),
        ("lowerarm_r", Some("rightLowerArm")),
        ("clavicle_l", Some("leftShoulder")),
        ("calf_r", Some("rightLowerLeg")),
        ("ball_l", Some("leftToes")),
        ("neck_01", Some("neck")),
        ("pinky_03_r", Some("rightLittleDistal")),
        // Godot's profile
        ("LeftUpperArm", Some("leftUpperArm")),
        ("RightLowerLeg", Some("rightLowerLeg")),
        ("LeftIndexIntermediate", Some("leftIndexIntermediate")),
        // Other exporters
        ("b_LeftUpperArm_09", Some("leftUpperArm")),
        ("b_Hip_01", Some("hips")),
        ("Bip01 L UpperArm", Some("leftUpperArm")),
        // Not a profile bone, no side, or both sides
        ("b_Tail01_012", None),
        ("forearm", None),
        ("l_r_hand", None),
        ("spine", None),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(name, want)| humanoid_bone(name) != *want)
        .map(|(name, want)| format!("{name}: {:?}, want {want:?}", humanoid_bone(name)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_automatic_map_pairs_every_humanoid_bone_across_naming_and_round_trips_as_toml() {
    let source = humanoid();
    let target = mixamo(humanoid(), 1.0);
    let map = BoneMap::auto(&source, &target);
    for (from, to) in MIXAMO {
        assert_eq!(
            map.source_of[node(&target, to)],
            Some(node(&source, from)),
            "{to}"
        );
    }
    assert!(
        map.issues(&source, &target).is_empty(),
        "{:?}",
        map.issues(&source, &target)
    );
    let text = map.to_toml(&source, &target);
    let again = BoneMap::from_toml(&text, "map.toml", &source, &target).unwrap();
    assert_eq!(again, map);
    // A bone the target lacks, named with the file and the field.
    let bad = text.replace("mixamorig:LeftArm", "mixamorig:LeftWing");
    let e = BoneMap::from_toml(&bad, "map.toml", &source, &target)
        .unwrap_err()
        .to_string();
    assert!(e.contains("map.toml") && e.contains("LeftWing"), "{e}");
    let e = BoneMap::from_toml("[bones\n", "broken.toml", &source, &target)
        .unwrap_err()
        .to_string();
    assert!(e.contains("broken.toml"), "{e}");
    // Issues: a target joint left out is unmapped; one source bone twice is duplicated; a
    // source that is not under the parent's source is a parent mismatch.
    let mut holes = map.clone();
    let hand = node(&target, "mixamorig:LeftHand");
    holes.source_of[hand] = None;
    holes.source_of[node(&target, "mixamorig:RightHand")] = Some(node(&source, "l_hand"));
    let issues = holes.issues(&source, &target);
    assert_eq!(issues.unmapped, vec![hand]);
    assert_eq!(issues.duplicated.len(), 0);
    assert_eq!(
        issues.parent_mismatch,
        vec![node(&target, "mixamorig:RightHand")]
    );
    holes.source_of[hand] = Some(node(&source, "l_hand"));
    let issues = holes.issues(&source, &target);
    assert_eq!(issues.duplicated.len(), 1, "{issues:?}");
}

/// Every clip of a model retargeted onto itself is carried key for key and skins every
/// vertex where the source does, within 1e-5 of the diagonal, at 40 times over each clip.
#[test]
fn a_rig_onto_itself_gives_its_own_skinned_vertices() {
    let cesium =
        skinview::io::gltf_import::import_file(&crate::common::model("CesiumMan")).unwrap();
    for scene in [humanoid(), cesium] {
        let map = BoneMap::auto(&scene, &scene);
        let setup = RetargetSetup::new(&scene, &scene, map, RetargetOptions::default()).unwrap();
        let mut played = scene.clone();
        for c in 0..scene.animations.len() {
            let made = retarget_clip(&scene, &scene, &setup, c, format!("again {c}")).unwrap();
            assert_eq!(
                made.sampled, 0,
                "{} clip {c}: every channel key for key",
                scene.name
            );
            played.animations.push(made.animation);
        }
        let diag = diagonal(&skinned(&scene, None, 0.0));
        for c in 0..scene.animations.len() {
            let copy = scene.animations.len() + c;
            let duration = scene.animations[c].duration_s();
            let worst = (0..40)
                .map(|k| duration * k as f32 / 39.0)
                .map(|t| {
                    largest_gap(
                        &skinned(&scene, Some(c), t),
                        &skinned(&played, Some(copy), t),
                    )
                })
                .fold(0.0, f32::max);
            assert!(
                worst <= 1e-5 * diag,
                "{} clip {c}: {worst} of {diag}",
                scene.name
            );
        }
    }
}

/// The retargeted pose of one frame (the per-frame job, through the player), from `source`
/// playing `clip` at `t`.
fn job_pose(source: &Scene, target: &Scene, setup: &RetargetSetup, clip: usize, t: f32) -> Pose {
    let mut player = RetargetPlayer::new(source, target, setup, clip).unwrap();
    player.play(t).unwrap();
    player.pose
}

/// With the same mesh and bind matrices, a rest pose moved into an A-pose changes nothing
/// (the bind pose is the reference): the copy driven by the original's clip skins every
/// vertex where the original does, within 1e-4 of the diagonal.
#[test]
fn a_changed_rest_pose_with_the_same_bind_gives_the_same_vertices() {
    let original = humanoid();
    let a_pose = turn_rest(humanoid(), &ARMS, A_POSE_RAD);
    let mut target = a_pose.clone();
    target.animations.clear();
    // The copy's rest pose really differs (a hand moved by more than 10 cm).
    let hand = node(&original, "l_hand");
    let rest = |s: &Scene| {
        let mut f = FrameState::new(s);
        f.evaluate(s, None, 0.0).unwrap();
        f.model_from_node[hand].w_axis.truncate()
    };
    assert!(rest(&original).distance(rest(&target)) > 0.1);
    let map = BoneMap::auto(&original, &target);
    let setup = RetargetSetup::new(&original, &target, map, RetargetOptions::default()).unwrap();
    let diag = diagonal(&skinned(&original, None, 0.0));
    for c in 0..original.animations.len() {
        let made = retarget_clip(&original, &target, &setup, c, "walk".into()).unwrap();
        let mut played = target.clone();
        played.animations.push(made.animation);
        let duration = original.animations[c].duration_s();
        for k in 0..20 {
            let t = duration * k as f32 / 19.0;
            let gap = largest_gap(
                &skinned(&original, Some(c), t),
                &skinned(&played, Some(0), t),
            );
            assert!(gap <= 1e-4 * diag, "clip {c} at {t}: {gap} of {diag}");
        }
    }
}

/// Leaf joints' model places (hands, feet, head) of `scene` in `pose`.
fn leaves(scene: &Scene, pose: &Pose) -> Vec<Vec3> {
    let mut f = FrameState::new(scene);
    f.pose = pose.clone();
    f.evaluate_current_pose(scene).unwrap();
    let names = ["l_hand", "r_hand", "l_foot", "r_foot", "head"];
    names
        .iter()
        .map(|n| f.model_from_node[node(scene, n)].w_axis.truncate())
        .collect()
}

/// A copy bound in an A-pose (its mesh and inverse bind matrices made there) driven by the
/// T-posed original's clips puts hands, feet and head where the original does, within 1 % of
/// its height, through the clip written for it and through the per-frame job (which agree
/// within 1e-4); the rest pose as reference does the same (the copy's rest is its bind).
#[test]
fn a_copy_bound_in_an_a_pose_reaches_the_same_hands_and_feet() {
    let original = humanoid();
    let mut target = rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD));
    target.animations.clear();
    let height = diagonal(&skinned(&original, None, 0.0));
    let map = BoneMap::auto(&original, &target);
    let setup = RetargetSetup::new(&original, &target, map, RetargetOptions::default()).unwrap();
    for c in 0..original.animations.len() {
        let made = retarget_clip(&original, &target, &setup, c, "clip".into()).unwrap();
        let mut played = target.clone();
        played.animations.push(made.animation);
        let duration = original.animations[c].duration_s();
        for k in 0..15 {
            let t = duration * k as f32 / 14.0;
            let mut f = FrameState::new(&original);
            f.evaluate(&original, Some(c), t).unwrap();
            let want = leaves(&original, &f.pose);
            let mut g = FrameState::new(&played);
            g.evaluate(&played, Some(0), t).unwrap();
            let by_clip = leaves(&played, &g.pose);
            let by_job = leaves(&target, &job_pose(&original, &target, &setup, c, t));
            for (w, (a, b)) in want.iter().zip(by_clip.iter().zip(&by_job)) {
                assert!(
                    w.distance(*a) <= 0.01 * height,
                    "clip {c} at {t}: {w} vs {a}"
                );
                assert!(
                    a.distance(*b) <= 1e-4 * height,
                    "clip {c} at {t}: clip {a} vs job {b}"
                );
            }
        }
    }
    let rest = RetargetOptions {
        reference: Reference::Rest,
        ..RetargetOptions::default()
    };
    let map = BoneMap::auto(&original, &target);
    let setup = RetargetSetup::new(&original, &target, map, rest).unwrap();
    let mut f = FrameState::new(&original);
    f.evaluate(&original, Some(0), 0.3).unwrap();
    let want = leaves(&original, &f.pose);
    let got = leaves(&target, &job_pose(&original, &target, &setup, 0, 0.3));
    for (w, g) in want.iter().zip(&got) {
        assert!(
            w.distance(*g) <= 0.01 * height,
            "rest reference: {w} vs {g}"
        );
    }
}

/// The walk (given root motion) onto a renamed, re-bound character 1.15 times as large and
/// back: every bone mapped by name, the hips' height ratio 1.15, the left foot planted
/// (within 2 cm of its lowest, slower than 0.1 m/s), each foot sliding in contact no more than
/// the source's own (scaled) plus 1 cm, and the walk back reaches the original's hands and
/// feet.
#[test]
fn the_walk_onto_a_larger_renamed_character_and_back() {
    let walk = humanoid().find_animation("walk").unwrap();
    let source = with_root_motion(humanoid(), walk);
    let mut target = mixamo(rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD)), 1.15);
    let map = BoneMap::auto(&source, &target);
    assert_eq!(map.pairs().count(), 18);
    let setup = RetargetSetup::new(&source, &target, map, RetargetOptions::default()).unwrap();
    assert!(
        (setup.height_ratio - 1.15).abs() < 1e-3,
        "{}",
        setup.height_ratio
    );
    // Feet planted: the throw keeps both feet on the ground, the walk (given root motion)
    // plants its left foot at its lowest.
    let throw = source.find_animation("throw").unwrap();
    for (clip, planted) in [
        (throw, &["leftFoot", "rightFoot"][..]),
        (walk, &["leftFoot"][..]),
    ] {
        let readouts = clip_readouts(&source, &target, &setup, clip).unwrap();
        let feet: Vec<_> = readouts
            .effectors
            .iter()
            .filter(|e| e.bone.ends_with("Foot"))
            .collect();
        assert_eq!(feet.len(), 2);
        for f in &feet {
            let (t, s) = (f.target_sliding_m.unwrap(), f.source_sliding_m.unwrap());
            let contacts = f.contact_samples.unwrap();
            if planted.contains(&f.bone) {
                assert!(contacts >= 1, "clip {clip} {f:?}: never planted");
            }
            assert!(
                t <= s + 0.01,
                "clip {clip} {}: slides {t} m, the source {s} m",
                f.bone
            );
        }
    }
    let made = retarget_clip(&source, &target, &setup, walk, "walk".into()).unwrap();
    target.animations.push(made.animation);
    // And back onto the original, at its own size.
    let back_map = BoneMap::auto(&target, &source);
    let back = RetargetSetup::new(&target, &source, back_map, RetargetOptions::default()).unwrap();
    let height = diagonal(&skinned(&source, None, 0.0));
    let duration = source.animations[walk].duration_s();
    for k in 0..12 {
        let t = duration * k as f32 / 11.0;
        let mut f = FrameState::new(&source);
        f.evaluate(&source, Some(walk), t).unwrap();
        let want = leaves(&source, &f.pose);
        let got = leaves(&source, &job_pose(&target, &source, &back, 0, t));
        for (w, g) in want.iter().zip(&got) {
            assert!(w.distance(*g) <= 0.01 * height, "at {t}: {w} vs {g}");
        }
    }
}

/// Every job rule broken once.
#[test]
fn the_retarget_job_rules() {
    let scene = humanoid();
    let setup = RetargetSetup::new(
        &scene,
        &scene,
        BoneMap::identity(&scene),
        RetargetOptions::default(),
    )
    .unwrap();
    let frame = {
        let mut f = FrameState::new(&scene);
        f.evaluate(&scene, Some(0), 0.1).unwrap();
        f
    };
    let mut pose = Pose::rest(&scene);
    let mut model = Vec::new();
    let short_model = &frame.model_from_node[1..];
    let rule = |e: skinview::Error| e.to_string();
    let mut job = RetargetJob {
        setup: &setup,
        target: &scene,
        source_model: short_model,
        source_pose: &frame.pose,
        travel: Vec3::ZERO,
        target_pose: &mut pose,
        target_model: &mut model,
    };
    assert!(rule(job.run().unwrap_err()).contains("rule 1"));
    job.source_model = &frame.model_from_node;
    job.travel = Vec3::NAN;
    assert!(rule(job.run().unwrap_err()).contains("rule 5"));
    let empty = Pose::default();
    job.travel = Vec3::ZERO;
    job.source_pose = &empty;
    assert!(rule(job.run().unwrap_err()).contains("rule 2"));
    // A map for another skeleton.
    let other = mixamo(humanoid(), 1.0);
    let mut bad = BoneMap::identity(&scene);
    bad.source_of.push(Some(0));
    assert!(RetargetSetup::new(&scene, &other, bad, RetargetOptions::default()).is_err());
}

/// `scene`'s clip `clip` with the pelvis swaying 1.5 cm side to side once over the clip (the
/// feet, without IK, sway with it: planted by the contact rule, 2 cm of sliding or more).
fn with_sway(mut scene: Scene, clip: usize) -> Scene {
    let pelvis = node(&scene, "pelvis");
    let rest = scene.nodes[pelvis].rest.translation;
    let duration = scene.animations[clip].duration_s();
    let times: Vec<f32> = (0..=60).map(|k| duration * k as f32 / 60.0).collect();
    let values = times
        .iter()
        .flat_map(|t| {
            let x = 0.015 * (std::f32::consts::TAU * t / duration).sin();
            (rest + Vec3::X * x).to_array()
        })
        .collect();
    set_pelvis_translation(&mut scene, clip, times, values);
    scene
}

/// Foot locking: the throw given a pelvis sway slides the planted feet of the plain retarget
/// (as the source's own do, scaled); locked, each foot stays within 2 mm of where it was
/// planted, in the readouts and in the written clip (its legs sampled), the source's sliding
/// unchanged.
#[test]
fn locked_feet_stay_where_they_are_planted() {
    let throw = humanoid().find_animation("throw").unwrap();
    let source = with_sway(humanoid(), throw);
    let target = mixamo(rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD)), 1.15);
    let sliding = |foot_lock: bool| {
        let options = RetargetOptions {
            foot_lock,
            ..RetargetOptions::default()
        };
        let map = BoneMap::auto(&source, &target);
        let setup = RetargetSetup::new(&source, &target, map, options).unwrap();
        let r = clip_readouts(&source, &target, &setup, throw).unwrap();
        let left = r
            .effectors
            .iter()
            .find(|e| e.bone == "leftFoot")
            .unwrap()
            .clone();
        (left, setup)
    };
    let (free, _) = sliding(false);
    let (held, setup) = sliding(true);
    println!("free {free:?}\nheld {held:?}");
    let source_slides = free.source_sliding_m.unwrap();
    assert!(source_slides >= 0.02, "the source slides {source_slides} m");
    assert!(free.contact_samples.unwrap() > 10, "{free:?}");
    assert!(free.target_sliding_m.unwrap() >= 0.02, "{free:?}");
    assert!(held.target_sliding_m.unwrap() <= 0.002, "{held:?}");
    assert_eq!(held.source_sliding_m, free.source_sliding_m);
    // The written clip: the legs sampled, the foot held.
    let made = retarget_clip(&source, &target, &setup, throw, "throw".into()).unwrap();
    assert!(made.sampled >= 6, "{} sampled", made.sampled);
    let mut played = target.clone();
    played.animations.push(made.animation);
    let foot = node(&played, "mixamorig:LeftFoot");
    let mut f = FrameState::new(&played);
    let duration = source.animations[throw].duration_s();
    let at = |f: &mut FrameState, t: f32| {
        f.evaluate(&played, Some(0), t).unwrap();
        f.model_from_node[foot].w_axis.truncate()
    };
    let planted = at(&mut f, 0.0);
    for k in 1..=20 {
        let t = duration * k as f32 / 20.0;
        let now = at(&mut f, t);
        assert!(now.distance(planted) <= 0.002, "at {t}: {now} vs {planted}");
    }
}

/// Clip `clip`'s pelvis translation replaced by LINEAR keys `values` at `times`.
fn set_pelvis_translation(scene: &mut Scene, clip: usize, times: Vec<f32>, values: Vec<f32>) {
    use skinview::anim::{Channel, Interpolation, Path as P, Sampler};
    let pelvis = node(scene, "pelvis");
    let anim = &mut scene.animations[clip];
    anim.channels
        .retain(|c| !(c.node == pelvis && c.path == P::Translation));
    anim.channels.push(Channel {
        node: pelvis,
        path: P::Translation,
        sampler: Sampler {
            interpolation: Interpolation::Linear,
            times_s: times,
            values,
            components: 3,
            is_rotation: false,
        },
    });
}

/// In place: the hips' ground travel over the clip taken away (the walk given root motion ends
/// where it started, on the ground plane); with root motion kept it travels the source's
/// distance times the hip-height ratio.
#[test]
fn in_place_takes_the_travel_away() {
    let walk = humanoid().find_animation("walk").unwrap();
    let source = with_root_motion(humanoid(), walk);
    let target = mixamo(rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD)), 1.15);
    let hips = node(&target, "mixamorig:Hips");
    let duration = source.animations[walk].duration_s();
    let travel = |root_motion: bool| {
        let options = RetargetOptions {
            root_motion,
            ..RetargetOptions::default()
        };
        let setup =
            RetargetSetup::new(&source, &target, BoneMap::auto(&source, &target), options).unwrap();
        let mut player = RetargetPlayer::new(&source, &target, &setup, walk).unwrap();
        let mut at = |t: f32| {
            player.play(t).unwrap();
            let p = player.model[hips].w_axis.truncate();
            Vec3::new(p.x, 0.0, p.z)
        };
        (at(0.0), at(duration))
    };
    let (a, b) = travel(false);
    assert!(a.distance(b) < 1e-4, "in place: {a} -> {b}");
    let (a, b) = travel(true);
    let mut f = FrameState::new(&source);
    f.evaluate(&source, Some(walk), 0.0).unwrap();
    let p0 = f.model_from_node[node(&source, "pelvis")].w_axis.truncate();
    f.evaluate(&source, Some(walk), duration).unwrap();
    let p1 = f.model_from_node[node(&source, "pelvis")].w_axis.truncate();
    let source_travel = Vec3::new(p1.x - p0.x, 0.0, p1.z - p0.z).length();
    assert!(source_travel > 0.1, "the walk travels {source_travel} m");
    assert!(
        (a.distance(b) - 1.15 * source_travel).abs() < 1e-3,
        "{} vs {}",
        a.distance(b),
        1.15 * source_travel
    );
}

/// Rotation only: the written clip moves the hips alone (every other joint keeps its own
/// translation: no channel); with translations, every mapped joint gets one.
#[test]
fn rotation_only_writes_the_hips_translation_alone() {
    let cesium =
        skinview::io::gltf_import::import_file(&crate::common::model("CesiumMan")).unwrap();
    let count = |translations: bool| {
        let options = RetargetOptions {
            translations,
            ..RetargetOptions::default()
        };
        let map = BoneMap::auto(&cesium, &cesium);
        let pairs = map.pairs().count();
        let setup = RetargetSetup::new(&cesium, &cesium, map, options).unwrap();
        let made = retarget_clip(&cesium, &cesium, &setup, 0, "again".into()).unwrap();
        let moved: Vec<usize> = made
            .animation
            .channels
            .iter()
            .filter(|c| c.path == skinview::anim::Path::Translation)
            .map(|c| c.node)
            .collect();
        (moved, setup.hips.unwrap().0, pairs)
    };
    let (moved, hips, _) = count(false);
    assert_eq!(moved, vec![hips]);
    let (moved, _, pairs) = count(true);
    assert_eq!(moved.len(), pairs);
}
