//! The retargeting preview through the viewer (egui_kittest): the built-in humanoid's clips
//! played on a renamed, re-bound, larger character (made by `common::retarget`), added as
//! "CLIP from SOURCE"; the Motion panel's map, its problems, a pairing removed and the clips
//! rewritten, "in place", "lock feet", the map saved and read back, "stop"; and a dropped
//! file's "Play its motion here".
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use glam::Vec3;
use skinview::frame::FrameState;
use skinview::viewer::motion;
use skinview::viewer::panels;
use skinview::viewer::state::ViewerState;

use crate::common::retarget::{A_POSE_RAD, ARMS, humanoid, mixamo, node, rebind, turn_rest};

fn scratch() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("skinview-motion-panel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The viewer on the larger, renamed, A-pose-bound humanoid (written as `TAG.glb`: tests run
/// in parallel), no clips.
fn target_state(tag: &str) -> ViewerState {
    let scene = mixamo(rebind(turn_rest(humanoid(), &ARMS, A_POSE_RAD)), 1.15);
    let path = scratch().join(format!("{tag}.glb"));
    skinview::io::gltf_export::write_glb(&scene, &Default::default(), &path).unwrap();
    ViewerState::new(skinview::io::model::load(Some(&path)).unwrap(), false).unwrap()
}

fn panel(ui: &mut egui::Ui, s: &mut ViewerState) {
    motion::panel(ui, s);
}

fn place(f: &FrameState, n: usize) -> Vec3 {
    f.model_from_node[n].w_axis.truncate()
}

#[test]
fn the_motion_panel_plays_the_walk_and_rewrites_it_on_every_change() {
    let mut s = target_state("panel");
    let own = s.model.scene.animations.len();
    let source = humanoid();
    s.use_motion("builtin:humanoid", source.clone()).unwrap();
    assert_eq!(s.model.scene.animations.len(), own + 3);
    let name = s.model.scene.animations[own].name.clone().unwrap();
    assert!(name.starts_with("walk from"), "{name}");
    assert_eq!(
        s.playback.anim,
        Some(own),
        "the first retargeted clip plays"
    );
    // What plays is the source's walk: each hand and foot where the source's is, scaled by
    // the hip heights (1.15) about the hips, within 1 % of the height.
    let height = 1.15 * 1.8;
    s.playback.playing = false;
    for t in [0.1f32, 0.4, 0.8] {
        s.scrub(t);
        s.tick(0.0).unwrap();
        let mut f = FrameState::new(&source);
        f.evaluate(&source, Some(0), t).unwrap();
        let scene = &s.character.scene;
        let hips_t = place(&s.character.frame, node(scene, "mixamorig:Hips"));
        let hips_s = place(&f, node(&source, "pelvis"));
        for (to, from) in [
            ("mixamorig:LeftHand", "l_hand"),
            ("mixamorig:RightFoot", "r_foot"),
        ] {
            let got = place(&s.character.frame, node(scene, to)) - hips_t;
            let want = 1.15 * (place(&f, node(&source, from)) - hips_s);
            assert!(
                got.distance(want) < 0.01 * height,
                "{to} at {t}: {got} vs {want}"
            );
        }
    }
    // Tall enough for the whole bone map (a click lands on what is on screen).
    let mut h = Harness::builder()
        .with_size(egui::vec2(520.0, 1400.0))
        .build_ui_state(panel, s);
    h.run();
    h.get_by_label_contains("18 of 18 joints mapped");
    h.get_by_label("every weighted joint mapped; no duplicate, no parent mismatch");
    // The bone map lists each joint with its source.
    h.get_by_label("bone map").click();
    h.run();
    let shows = |h: &Harness<'_, ViewerState>, row: &str, value: &str| {
        h.query_all_by_label(row).any(|n| {
            n.accesskit_node()
                .value()
                .is_some_and(|v| v.contains(value))
        })
    };
    assert!(shows(&h, "mixamorig:LeftForeArm", "l_forearm"));
    // A pairing removed in its combo: the hand is unmapped, said in red, and its channel is
    // gone.
    let hand = node(&h.state().model.scene, "mixamorig:LeftHand");
    h.query_all_by_label("mixamorig:LeftHand")
        .find(|n| n.accesskit_node().role() == egui::accesskit::Role::ComboBox)
        .expect("the hand's combo")
        .click();
    h.run();
    h.get_by_label("(none)").click();
    h.run();
    let s = h.state_mut();
    assert_eq!(
        s.model.scene.animations.len(),
        own + 3,
        "rewritten, not added"
    );
    let walk = &s.model.scene.animations[own];
    assert!(walk.channels.iter().all(|c| c.node != hand));
    assert!(
        walk.channels
            .iter()
            .any(|c| c.node == node(&s.model.scene, "mixamorig:LeftForeArm"))
    );
    h.run();
    h.get_by_label_contains("unmapped (hold their rest pose): mixamorig:LeftHand");
    h.get_by_label_contains("17 of 18 joints mapped");
    // "in place" rewrites the clips with the option.
    h.get_by_label("in place").click();
    h.run();
    let m = h.state().motion.as_ref().unwrap();
    assert!(!m.options.root_motion);
    assert_eq!(h.state().model.scene.animations.len(), own + 3);
    // "lock feet": the clips written again with the legs sampled (the walk plants its feet
    // nowhere, so they play as before).
    let keys_before: usize = h.state().model.scene.animations[own]
        .channels
        .iter()
        .map(|c| c.sampler.times_s.len())
        .sum();
    h.get_by_label("lock feet").click();
    h.run();
    assert!(h.state().motion.as_ref().unwrap().options.foot_lock);
    let keys_after: usize = h.state().model.scene.animations[own]
        .channels
        .iter()
        .map(|c| c.sampler.times_s.len())
        .sum();
    assert!(
        keys_after > keys_before,
        "{keys_before} -> {keys_after} keys"
    );
    // The map saved, a pairing changed, the file read back: as saved.
    let path = scratch().join("map.toml");
    let s = h.state_mut();
    s.motion.as_mut().unwrap().map_path = path.display().to_string();
    let saved = s.motion.as_ref().unwrap().map.clone();
    s.save_motion_map().unwrap();
    s.set_motion_pairing(hand, Some(node(&source, "l_hand")))
        .unwrap();
    s.load_motion_map().unwrap();
    assert_eq!(s.motion.as_ref().unwrap().map, saved);
    // "stop": the model's own clips again.
    h.run();
    h.get_by_label("stop").click();
    h.run();
    assert!(h.state().motion.is_none(), "{:?}", h.state().error);
    assert_eq!(h.state().model.scene.animations.len(), own);
}

#[test]
fn a_dropped_file_plays_its_motion_on_the_model() {
    let mut s = target_state("dropped");
    s.dropped = Some("builtin:humanoid".into());
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| panels::drop_prompt(ui.ctx(), s),
        s,
    );
    h.run();
    h.get_by_label("Play its motion here").click();
    h.run();
    let s = h.state();
    assert_eq!(s.error, None);
    let m = s.motion.as_ref().expect("the motion panel's source");
    assert_eq!(m.clips.len(), 3);
    // A file without clips says so.
    let mut s = target_state("dropped-empty");
    s.dropped = Some(scratch().join("dropped-empty.glb").display().to_string());
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| panels::drop_prompt(ui.ctx(), s),
        s,
    );
    h.run();
    h.get_by_label("Play its motion here").click();
    h.run();
    let e = h.state().error.clone().unwrap_or_default();
    assert!(e.contains("no animation"), "{e}");
}

/// On a native rig's animation stage (the built-in humanoid's demo: layers, a cross-fade, IK)
/// the motion plays as the stage's one layer, and "stop" puts the demo back.
#[test]
fn a_motion_on_the_humanoid_demo_and_back() {
    let model = skinview::io::ModelSource::Builtin(skinview::builtin::Builtin::Humanoid)
        .load()
        .unwrap();
    let mut s = ViewerState::new(model, true).unwrap();
    let demo = s.setup.clone();
    let own = s.model.scene.animations.len();
    s.use_motion("builtin:humanoid", humanoid()).unwrap();
    assert_eq!(s.error, None);
    assert_eq!(s.playback.anim, Some(own));
    let stage = s.stage().unwrap();
    assert_eq!(
        (stage.layers.len(), stage.fade.is_none(), stage.ik.len()),
        (1, true, 0)
    );
    s.tick(0.1).unwrap();
    s.stop_motion();
    assert_eq!(s.error, None);
    assert_eq!(
        s.setup.stage_spec().map(|x| x.layers.len()),
        demo.stage_spec().map(|x| x.layers.len())
    );
    assert_eq!(s.model.scene.animations.len(), own);
}

/// A bone map given without a motion (a `.toml` dropped on the page first) says what it is
/// for; one naming a bone the model lacks names the file and the entry, and the map stays.
#[test]
fn a_bone_map_file_needs_a_motion_and_its_bones() {
    let mut s = target_state("map-file");
    let map = b"[bones]\n\"mixamorig:LeftHand\" = \"l_hand\"\n";
    let e = s
        .set_motion_map_file(map, "bone-map.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bone-map.toml") && e.contains("motion"), "{e}");
    s.use_motion("builtin:humanoid", humanoid()).unwrap();
    let before = s.motion.as_ref().unwrap().map.clone();
    let bad = b"[bones]\n\"mixamorig:LeftWing\" = \"l_hand\"\n";
    let e = s
        .set_motion_map_file(bad, "bone-map.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bone-map.toml") && e.contains("LeftWing"), "{e}");
    assert_eq!(s.motion.as_ref().unwrap().map, before);
    // A good one: the hand alone mapped.
    s.set_motion_map_file(map, "bone-map.toml").unwrap();
    assert_eq!(s.motion.as_ref().unwrap().map.pairs().count(), 1);
}

/// The source's skeleton drawn over the model: a line from each joint to its parent joint,
/// from the model's hips; none when "source skeleton" is off.
#[test]
fn the_source_skeleton_is_drawn_on_the_model_hips() {
    let mut s = target_state("overlay");
    let source = humanoid();
    let bones = source.nodes.iter().filter(|n| n.parent.is_some()).count();
    s.use_motion("builtin:humanoid", source).unwrap();
    s.tick(0.0).unwrap();
    let mut g = skinview::gpu::OverlayGeometry::default();
    motion::draw_source(&mut s, &mut g);
    assert_eq!(g.lines_front.len(), 2 * bones);
    let hips = node(&s.character.scene, "mixamorig:Hips");
    let at = s.character.frame.model_from_node[hips].w_axis.truncate();
    assert!(
        g.lines_front
            .iter()
            .any(|v| Vec3::from(v.position).distance(at) < 1e-5),
        "no bone starts at the model's hips {at}"
    );
    s.motion.as_mut().unwrap().show_source = false;
    let mut g = skinview::gpu::OverlayGeometry::default();
    motion::draw_source(&mut s, &mut g);
    assert!(g.lines_front.is_empty());
}
