//! The viewer's panel logic without a window, through egui_kittest (egui's test harness,
//! driving widgets by their accessible labels): selection in sync between the hierarchy and
//! the viewport's state, play/pause, clip choice, scrubbing, IK target edits, file-open
//! errors that keep the previous model.
#![cfg(feature = "viewer")]
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code

use egui::accesskit::{Role, Toggled};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use skinview::builtin::Builtin;
use skinview::io::ModelSource;
use skinview::viewer::panels;
use skinview::viewer::state::ViewerState;

fn open(b: Builtin, demo: bool) -> ViewerState {
    ViewerState::new(ModelSource::Builtin(b).load().unwrap(), demo).unwrap()
}

fn glb_arm() -> ViewerState {
    // The arm's scene as a plain (non-native) model: clips are chosen, not layered.
    let mut s = open(Builtin::Arm, false);
    s.stage = None;
    s.rebuild().unwrap();
    s
}

#[test]
fn hierarchy_and_viewport_selection_stay_in_sync() {
    let mut h = Harness::new_ui_state(panels::hierarchy, open(Builtin::Arm, false));
    h.run();
    let fore = h.state().character.scene.find_node("forearm").unwrap();
    h.get_by_label("forearm").click();
    h.run();
    assert_eq!(h.state().view.selected_node, Some(fore));
    // Selected in the viewport (a bone click) → the tree shows it selected.
    let upper = h.state().character.scene.find_node("upper_arm").unwrap();
    h.state_mut().select(Some(upper));
    h.run();
    assert!(h.get_by_label("upper_arm").accesskit_node().toggled() == Some(Toggled::True));
    assert!(h.get_by_label("forearm").accesskit_node().toggled() != Some(Toggled::True));
    // Clicking the selected node again clears the selection.
    h.get_by_label("upper_arm").click();
    h.run();
    assert_eq!(h.state().view.selected_node, None);
}

#[test]
fn play_pause_clip_and_scrub() {
    let mut h = Harness::new_ui_state(panels::animation, glb_arm());
    h.run();
    assert!(h.state().playback.playing);
    h.get_by_label("Pause").click();
    h.run();
    assert!(!h.state().playback.playing);
    h.get_by_label("Play").click();
    h.run();
    assert!(h.state().playback.playing);
    // Choose the second clip from the combo box.
    h.get_by_label("clip").click();
    h.run();
    h.get_by_label("1: twist").click();
    h.run();
    assert_eq!(h.state().playback.anim, Some(1));
    assert_eq!(h.state().character.layers[0].anim, 1);
    // Scrub: the slider sets the time and pauses.
    h.get_by_role_and_label(Role::Slider, "time (s)")
        .set_value_accesskit(1.25);
    h.run();
    assert!(
        (h.state().playback.time_s - 1.25).abs() < 1e-3,
        "{}",
        h.state().playback.time_s
    );
    assert!(!h.state().playback.playing);
    // Advancing while paused keeps the time; the pose follows it.
    h.state_mut().tick(0.5).unwrap();
    assert!((h.state().playback.time_s - 1.25).abs() < 1e-3);
}

#[test]
fn ik_target_edits_move_the_effector_and_the_solver_follows() {
    let mut h = Harness::new_ui_state(panels::ik, open(Builtin::Humanoid, true));
    h.run();
    assert!(h.state().stage.as_ref().unwrap().ik_orbit);
    // The target's z drag value.
    h.get_by_role_and_label(Role::SpinButton, "z")
        .set_value_accesskit(0.45);
    h.run();
    h.run();
    let s = h.state();
    let goal = s.stage.as_ref().unwrap().ik.as_ref().unwrap().target_m;
    assert!((goal.z - 0.45).abs() < 1e-4, "{goal}");
    assert!(
        !s.stage.as_ref().unwrap().ik_orbit,
        "editing stops the orbit"
    );
    assert_eq!(s.ik_target(), Some(goal), "the effector follows the panel");
    // The solver reaches a reachable target within a few frames.
    let reachable = glam::Vec3::new(0.3, 1.3, 0.3);
    h.state_mut().set_ik_target(reachable);
    for _ in 0..30 {
        h.state_mut().tick(1.0 / 60.0).unwrap();
    }
    let r = &h.state().character.ik_result;
    assert!(r.residual_m[0] < 0.02, "residual {} m", r.residual_m[0]);
}

#[test]
fn a_bad_file_shows_its_error_and_keeps_the_model() {
    let mut h = Harness::new_ui_state(panels::model, open(Builtin::Arm, false));
    h.run();
    let before = h.state().character.scene.name.clone();
    let field = h.get_by_role(Role::TextInput);
    field.focus();
    field.type_text("/nonexistent/dragon.glb");
    h.run();
    h.get_by_label("Open").click();
    h.run();
    let s = h.state();
    let error = s.error.clone().unwrap_or_default();
    assert!(error.contains("dragon.glb"), "{error}");
    assert_eq!(s.character.scene.name, before, "the previous model stays");
    // The error is on screen, and a good model replaces it.
    assert!(h.query_by_label_contains("dragon.glb").is_some());
    h.get_by_label("builtin:humanoid").click();
    h.run();
    assert_eq!(h.state().character.scene.name, "humanoid");
    assert!(h.state().error.is_none());
}
