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
use skinview::viewer::state::{ViewMode, ViewerState};

use crate::common;

fn open(b: Builtin, demo: bool) -> ViewerState {
    ViewerState::new(ModelSource::Builtin(b).load().unwrap(), demo).unwrap()
}

fn open_file(path: &std::path::Path) -> ViewerState {
    ViewerState::new(skinview::io::model::load(Some(path)).unwrap(), false).unwrap()
}

fn glb_arm() -> ViewerState {
    // The arm's scene as a plain (non-native) model: clips are chosen, not layered.
    let mut s = open(Builtin::Arm, false);
    s.setup.motion = skinview::character::Motion::Clip(0);
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
    h.get_by_role_and_label(Role::ComboBox, "clip").click();
    h.run();
    h.get_by_label("1: twist").click();
    h.run();
    assert_eq!(h.state().playback.anim, Some(1));
    assert_eq!(h.state().character.layers()[0].anim, 1);
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
    assert!(h.state().stage().unwrap().orbit.is_some());
    // The target's z drag value.
    h.get_by_role_and_label(Role::SpinButton, "z")
        .set_value_accesskit(0.45);
    h.run();
    h.run();
    let s = h.state();
    let goal = s.stage().unwrap().ik[0].target_m;
    assert!((goal.z - 0.45).abs() < 1e-4, "{goal}");
    assert!(
        s.stage().unwrap().orbit.is_none(),
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
    let field = h.get_all_by_role(Role::TextInput).next().unwrap();
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

/// Native rigs loop over their timeline (the longest clip or the cross-fade's end) and stop
/// there without looping.
#[test]
fn native_rigs_loop_over_their_timeline() {
    let mut s = open(Builtin::Humanoid, true);
    let d = s.duration_s();
    assert!(d > 1.0, "timeline {d}");
    for _ in 0..(d / 0.05) as usize + 40 {
        s.tick(0.05).unwrap();
    }
    assert!(
        s.playback.playing && s.playback.time_s < d,
        "wrapped: {}",
        s.playback.time_s
    );
    s.playback.looping = false;
    for _ in 0..(d / 0.05) as usize + 40 {
        s.tick(0.05).unwrap();
    }
    assert!(!s.playback.playing);
    assert!((s.playback.time_s - d).abs() < 1e-6);
}

/// Layer edits: a weight applies in place (no rebuild), a typed mask rebuilds once.
#[test]
fn layer_weight_in_place_and_mask_typed() {
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            let before = s.setup.clone();
            panels::layers(ui, s);
            s.apply_pending(Some(before));
        },
        open(Builtin::Humanoid, true),
    );
    h.run();
    let generation = h.state().generation;
    h.get_all_by_role_and_label(Role::Slider, "w")
        .next()
        .unwrap()
        .set_value_accesskit(0.25);
    h.run();
    assert_eq!(
        h.state().generation,
        generation,
        "a weight must not rebuild"
    );
    assert!((h.state().character.layers()[0].weight - 0.25).abs() < 1e-6);
    assert!((h.state().stage().unwrap().layers[0].weight - 0.25).abs() < 1e-6);
    // Replace layer 2's mask ("spine") with "head" and press Enter: one rebuild, applied.
    let field = h.get_all_by_role(Role::TextInput).nth(2).unwrap();
    field.focus();
    h.run();
    for _ in 0..8 {
        h.key_press(egui::Key::Backspace);
    }
    h.run();
    h.get_all_by_role(Role::TextInput)
        .nth(2)
        .unwrap()
        .type_text("head");
    h.run();
    h.key_press(egui::Key::Enter);
    h.run();
    let s = h.state();
    assert_eq!(
        s.stage().unwrap().layers[2].mask,
        skinview::character::MaskSpec::Subtree("head".into())
    );
    assert_eq!(s.generation, generation + 1, "one rebuild");
    assert!(s.error.is_none(), "{:?}", s.error);
}

/// Projection and picking maths of the viewport: a point moved under the pointer projects to
/// that pointer position at its depth; picking finds the vertex under the click (the nearest
/// to the eye of those within the radius), with its influences summing to 1.
#[test]
fn projection_drag_and_vertex_picking() {
    use skinview::viewer::viewport::{move_in_view_plane, pick_vertex, project};
    let s = open(Builtin::Arm, false);
    let m = s.framing.camera.clip_from_world(16.0 / 9.0);
    let size = egui::vec2(1600.0, 900.0);
    let (centre, depth) = project(m, s.framing.camera.target, size).unwrap();
    assert!(
        (centre - egui::pos2(800.0, 450.0)).length() < 1e-2,
        "{centre:?}"
    );
    let to = egui::pos2(900.0, 300.0);
    let moved = move_in_view_plane(m, s.framing.camera.target, to, size).unwrap();
    let (back, d2) = project(m, moved, size).unwrap();
    assert!(
        (back - to).length() < 1e-2 && (d2 - depth).abs() < 1e-5,
        "{back:?} {d2} {depth}"
    );
    // Pick: use the CPU-skinned vertices as the readback, click on vertex 100.
    let outputs = &s.character.outputs;
    let target = outputs[0].positions[100];
    let (click, _) = project(m, target, size).unwrap();
    let p = pick_vertex(outputs, &s.character.scene, None, click, m, size).unwrap();
    let (picked_at, picked_depth) = project(m, p.position, size).unwrap();
    let (_, target_depth) = project(m, target, size).unwrap();
    assert!(picked_at.distance(click) <= skinview::viewer::viewport::PICK_RADIUS_PX);
    assert!(picked_depth <= target_depth, "the nearest to the eye wins");
    let sum: f32 = p.influences.iter().map(|i| i.1).sum();
    assert!((sum - 1.0).abs() < 1e-5, "{:?}", p.influences);
    // Far from every vertex: nothing.
    assert!(
        pick_vertex(
            outputs,
            &s.character.scene,
            None,
            egui::pos2(2.0, 2.0),
            m,
            size
        )
        .is_none()
    );
}

/// The palette panel: splitting a glTF model into submeshes of at most K bones rebuilds the
/// character on the partitioned scene (every draw within K joints, the stats shown), the
/// uniform palette is offered only with a split, and native rigs are drawn whole.
#[test]
fn partition_slider_splits_the_model_and_picks_the_palette() {
    let model = ModelSource::parse(common::model("CesiumMan").to_str().unwrap())
        .unwrap()
        .load()
        .unwrap();
    let state = ViewerState::new(model, false).unwrap();
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::deformation(ui, s);
            s.apply_pending(None);
        },
        state,
    );
    h.run();
    assert_eq!(h.state().character.scene.draws.len(), 1);
    h.get_by_label("split into submeshes").click();
    h.run();
    h.get_by_role_and_label(Role::Slider, "K bones")
        .set_value_accesskit(8.0);
    h.run();
    h.run();
    let s = h.state();
    assert_eq!(s.setup.split.map(|p| p.max_bones), Some(8));
    let summary = s.character.split.unwrap();
    // CesiumMan at K = 8: six submeshes, the proved minimum (tests/core/partition.rs).
    assert_eq!(summary.submeshes, 6, "{summary:?}");
    assert_eq!(s.character.scene.draws.len(), 6);
    for d in &s.character.scene.draws {
        let joints = s.character.scene.skins[d.skin.unwrap()].joints.len();
        assert!(joints <= 8, "a submesh draw with {joints} joints");
    }
    assert!(h.query_by_label_contains("6 submeshes").is_some());
    // The uniform palette needs the split: on, then the split off turns it off too.
    h.get_by_label("uniform palette (K matrices per draw)")
        .click();
    h.run();
    h.run();
    assert!(h.state().setup.split.unwrap().uniform_palette);
    assert_eq!(
        h.state().palette_source(),
        skinview::gpu::PaletteSource::Uniform { bones: 8 }
    );
    h.get_by_label("split into submeshes").click();
    h.run();
    h.run();
    assert_eq!(h.state().setup.split, None);
    assert_eq!(h.state().character.scene.draws.len(), 1);
    assert!(h.state().character.split.is_none());
    // The settings carry over to the next model; a native rig opened with the uniform
    // palette on is drawn whole, from the storage buffer the adapter has.
    h.get_by_label("split into submeshes").click();
    h.run();
    h.get_by_label("uniform palette (K matrices per draw)")
        .click();
    h.run();
    h.run();
    assert!(h.state().setup.split.unwrap().uniform_palette);
    h.state_mut().open("builtin:humanoid").unwrap();
    assert_eq!(
        h.state().palette_source(),
        skinview::gpu::PaletteSource::Storage
    );
    // Native rigs: drawn whole, said so.
    let mut h = Harness::new_ui_state(panels::deformation, open(Builtin::Humanoid, true));
    h.run();
    assert!(h.query_by_label_contains("drawn whole").is_some());
}

/// The Deformation panel's skinning buttons switch both paths: the state, the character's
/// options (kept across a rebuild), and what the CPU path computes (the twisted arm keeps its
/// elbow radius under DQS, not under LBS).
#[test]
fn skinning_mode_buttons_switch_both_paths() {
    use skinview::skin::{NormalMode, SkinMode};
    let mut s = glb_arm();
    s.set_anim(Some(1)); // twist
    s.rebuild().unwrap();
    let mut h = Harness::new_ui_state(panels::deformation, s);
    h.run();
    let elbow_ring_spread = |s: &mut ViewerState| {
        s.character.update(1.98, 0.0).unwrap(); // near the end of the twist: ~178°
        let p = &s.character.outputs[0].positions;
        // Vertices near the elbow (x ≈ 0.30): their distance from the bone axis.
        let rest = &s.character.scene.meshes[0].primitives[0].positions;
        let near: Vec<f32> = rest
            .iter()
            .zip(p)
            .filter(|(r, _)| (r.x - 0.30).abs() < 0.007)
            .map(|(_, q)| (q.y * q.y + q.z * q.z).sqrt())
            .collect();
        near.iter().sum::<f32>() / near.len() as f32
    };
    let lbs = elbow_ring_spread(h.state_mut());
    h.get_by_label("DQS").click();
    h.run();
    assert_eq!(h.state().setup.skin.mode, SkinMode::Dqs);
    assert_eq!(h.state().character.skin_options(0).mode, SkinMode::Dqs);
    let dqs = elbow_ring_spread(h.state_mut());
    assert!(dqs > lbs * 2.0, "LBS {lbs} DQS {dqs}");
    h.get_by_label("blend 3x3").click();
    h.run();
    assert_eq!(
        h.state().character.skin_options(0).normals,
        NormalMode::Blend3x3
    );
    // A rebuild keeps them.
    h.state_mut().rebuild().unwrap();
    assert_eq!(h.state().character.skin_options(0).mode, SkinMode::Dqs);
}

/// The "GPU skins in" buttons pick the GPU skinning path the view draws (the vertex shader or
/// the compute pass), kept when another model opens; the compute pass is offered on the
/// storage palette only.
#[test]
fn gpu_skinning_buttons_pick_the_vertex_shader_or_the_compute_pass() {
    use skinview::gpu::Skinning;
    use skinview::viewer::state::ViewMode;
    let mut h = Harness::new_ui_state(panels::deformation, glb_arm());
    h.run();
    assert_eq!(h.state().gpu_skinning, Skinning::VertexShader);
    assert_eq!(h.state().view_options().skinning, Skinning::VertexShader);
    h.get_by_label("compute pass").click();
    h.run();
    assert_eq!(h.state().gpu_skinning, Skinning::ComputePass);
    assert_eq!(h.state().view_options().skinning, Skinning::ComputePass);
    // The CPU view draws the CPU result whatever the GPU path.
    h.state_mut().mode = ViewMode::Cpu;
    assert_eq!(h.state().view_options().skinning, Skinning::Cpu);
    h.state_mut().mode = ViewMode::SideBySide;
    assert_eq!(
        h.state().view_options().gpu_skinning(),
        Skinning::ComputePass
    );
    h.state_mut().open("builtin:arm").unwrap();
    assert_eq!(h.state().gpu_skinning, Skinning::ComputePass);
    h.run();
    h.get_by_label("vertex shader").click();
    h.run();
    assert_eq!(h.state().gpu_skinning, Skinning::VertexShader);
    // Through a uniform palette the compute pass is greyed out: clicking it changes nothing.
    let model = ModelSource::parse(common::model("CesiumMan").to_str().unwrap())
        .unwrap()
        .load()
        .unwrap();
    let mut s = ViewerState::new(model, false).unwrap();
    s.use_uniform_palette_only(64).unwrap();
    let mut h = Harness::new_ui_state(panels::deformation, s);
    h.run();
    h.get_by_label("compute pass").click();
    h.run();
    assert_eq!(h.state().gpu_skinning, Skinning::VertexShader);
}

/// The built-in humanoid opens its full demo however it is named (`view builtin:humanoid`, the
/// path field, the button), and a layer shows its motion by name.
#[test]
fn humanoid_by_name_opens_the_demo() {
    let s = open(Builtin::Humanoid, false);
    assert_eq!(
        s.stage(),
        skinview::character::CharacterSetup::humanoid_demo().stage_spec()
    );
    let motions = |s: ViewerState| {
        let mut h = Harness::new_ui_state(panels::layers, s);
        h.run();
        h.query_all_by_role(Role::ComboBox)
            .filter_map(|n| n.accesskit_node().value())
            .collect::<Vec<String>>()
    };
    assert_eq!(
        motions(open(Builtin::Humanoid, false)),
        ["walk", "run", "throw"]
    );
    // A native rig without the demo: its first motion by name too.
    assert_eq!(motions(open(Builtin::Arm, false)), ["bend"]);
}

/// The IK panel over `s` (its edits applied as the window applies them), after a click on
/// "effector" and the frames that rebuild the character.
/// The IK panel with the end of the window's frame: settings edited rebuild the character.
pub fn ik_applied(ui: &mut egui::Ui, s: &mut ViewerState) {
    let before = s.setup.clone();
    panels::ik(ui, s);
    s.apply_pending(Some(before));
}

fn tick_effector(s: ViewerState) -> Harness<'static, ViewerState> {
    let mut h = Harness::new_ui_state(ik_applied, s);
    h.run();
    h.get_by_label("effector").click();
    h.run();
    h.run();
    h
}

/// Ticking the IK effector on a native rig makes a goal the solver takes: the deepest leaf, a
/// chain within the root (CcdJob rule 6), reaching for where the bone is — no error.
#[test]
fn ik_effector_default_is_solvable() {
    for (rig, demo) in [(Builtin::Arm, false), (Builtin::Humanoid, true)] {
        let mut s = open(rig, demo);
        if let Some(spec) = s.stage_mut() {
            spec.ik.clear();
            spec.orbit = None;
        }
        s.rebuild().unwrap();
        let h = tick_effector(s);
        let s = h.state();
        assert_eq!(s.error, None, "{rig:?}");
        let goal = s.stage().unwrap().ik[0].clone();
        let end = s.character.scene.find_node(&goal.end_bone).unwrap();
        let mut depth = 0;
        let mut n = end;
        while let Some(p) = s.character.scene.nodes[n].parent {
            depth += 1;
            n = p;
        }
        assert!(
            goal.chain_length >= 1 && goal.chain_length <= depth + 1,
            "{goal:?}"
        );
        assert!(s.character.ik.is_some(), "{rig:?}: the effector is solved");
        // Reaching for where the bone is: the solve starts where it stands.
        assert!(
            s.character.ik_result.residual_m[0] < 0.05,
            "{:?}",
            s.character.ik_result
        );
    }
}

/// Shortcuts never fire while a text field has focus, and every press of a frame counts.
#[test]
fn shortcuts_skip_text_fields_and_count_every_press() {
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::model(ui, s);
            skinview::viewer::keys::keyboard(ui, s);
        },
        open(Builtin::Arm, false),
    );
    h.run();
    let grid = h.state().view.grid;
    let field = h.get_all_by_role(Role::TextInput).next().unwrap();
    field.focus();
    h.run();
    h.key_press(egui::Key::G);
    h.get_all_by_role(Role::TextInput)
        .next()
        .unwrap()
        .type_text("g");
    h.run();
    assert_eq!(h.state().view.grid, grid, "typing g into the path field");
    // Leave the field; V twice in one frame advances the view twice.
    h.key_press(egui::Key::Escape);
    h.run();
    let mode = h.state().mode;
    h.key_press(egui::Key::V);
    h.key_press(egui::Key::V);
    h.run();
    let all = skinview::viewer::state::ViewMode::ALL;
    let i = all.iter().position(|&m| m == mode).unwrap();
    assert_eq!(h.state().mode, all[(i + 2) % all.len()]);
    // K toggles the skeleton, Shift + K the bones that move no vertex (and not the skeleton).
    let (skeleton, hide) = (
        h.state().view.skeleton,
        h.state().view.hide_unweighted_bones,
    );
    h.key_press(egui::Key::K);
    h.run();
    assert_eq!(h.state().view.skeleton, !skeleton);
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::K);
    h.run();
    assert_eq!(
        h.state().view.skeleton,
        !skeleton,
        "Shift + K leaves the skeleton"
    );
    assert_eq!(h.state().view.hide_unweighted_bones, !hide);
    // R, B and T: the rest and bind ghosts and the motion trail.
    let (rest, bind, trail) = (
        h.state().view.rest_pose,
        h.state().view.bind_pose,
        h.state().trail.shown,
    );
    for k in [egui::Key::R, egui::Key::B, egui::Key::T] {
        h.key_press(k);
    }
    h.run();
    assert_eq!(h.state().view.rest_pose, !rest);
    assert_eq!(h.state().view.bind_pose, !bind);
    assert_eq!(h.state().trail.shown, !trail);
    // H hides both side panels, shows both again; with one shown, H hides it.
    h.key_press(egui::Key::H);
    h.run();
    assert_eq!(h.state().side_panels, [false, false]);
    h.key_press(egui::Key::H);
    h.run();
    assert_eq!(h.state().side_panels, [true, true]);
    h.state_mut().side_panels = [false, true];
    h.key_press(egui::Key::H);
    h.run();
    assert_eq!(h.state().side_panels, [false, false]);
}

/// The status bar's two panel buttons show and hide each side panel.
#[test]
fn status_bar_buttons_show_and_hide_each_side_panel() {
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| panels::status(ui, s, "test adapter"),
        open(Builtin::Arm, false),
    );
    h.run();
    h.get_by_label("«").click();
    h.run();
    assert_eq!(h.state().side_panels, [false, true]);
    h.get_by_label("»").click();
    h.run();
    assert_eq!(h.state().side_panels, [false, false]);
    h.get_by_label("«").click();
    h.run();
    assert_eq!(h.state().side_panels, [true, false]);
}

/// A window too narrow for the side panels hides them; widening brings back those that were
/// shown, with any opened by hand meanwhile; one hidden by hand before stays hidden.
#[test]
fn narrow_windows_hide_the_side_panels_until_they_widen() {
    let mut s = open(Builtin::Arm, false);
    s.side_panels = [false, true];
    s.fit_side_panels(false);
    assert_eq!(
        s.side_panels,
        [false, true],
        "a wide window keeps the user's choice"
    );
    s.fit_side_panels(true);
    assert_eq!(s.side_panels, [false, false]);
    s.fit_side_panels(true);
    assert_eq!(
        s.side_panels,
        [false, false],
        "still narrow: nothing changes"
    );
    s.side_panels[1] = true; // opened by hand while narrow
    s.fit_side_panels(true);
    assert_eq!(
        s.side_panels,
        [false, true],
        "a panel opened by hand stays open"
    );
    s.side_panels = [true, false];
    s.fit_side_panels(false);
    assert_eq!(s.side_panels, [true, true]);
    // Opening another model keeps the narrowing.
    s.fit_side_panels(true);
    let next = skinview::io::ModelSource::Builtin(Builtin::Humanoid)
        .load()
        .unwrap();
    s.open_loaded(Ok(next), "test").unwrap();
    assert_eq!(s.side_panels, [false, false]);
    s.fit_side_panels(false);
    assert_eq!(s.side_panels, [true, true]);
}

/// Playback follows the wall clock: a slow frame (0.4 s) advances the clip by 0.4 s at speed
/// 1; only a stall past the step limit holds back, and then the share of real time drops
/// below 1.
#[test]
fn playback_follows_the_wall_clock() {
    use skinview::viewer::state::{BEHIND_REAL_TIME, MAX_STEP_S};
    let mut s = glb_arm();
    s.playback.time_s = 0.0;
    s.tick(0.4).unwrap();
    assert!(
        (s.playback.time_s - 0.4).abs() < 1e-6,
        "{}",
        s.playback.time_s
    );
    assert!(s.stats.real_time_share >= BEHIND_REAL_TIME);
    for _ in 0..10 {
        s.tick(2.0 * MAX_STEP_S).unwrap();
    }
    assert!(s.stats.real_time_share < 0.6, "{}", s.stats.real_time_share);
}

/// The performance plot names only the stages that run for the model, in a legend row of its
/// own (never over the lines): the humanoid demo samples, layers, solves IK and poses links;
/// a glTF clip in the GPU view has no IK, no links and no CPU skinning.
#[test]
fn performance_plot_shows_the_stages_that_run() {
    let legend = |s: ViewerState| {
        let mut h = Harness::new_ui_state(|ui, s: &mut ViewerState| panels::performance(ui, s), s);
        h.run();
        [
            "sample",
            "layer",
            "ik",
            "links",
            "palette",
            "skin + normals",
        ]
        .into_iter()
        .filter(|n| h.query_by_label(&format!("— {n}")).is_some())
        .collect::<Vec<_>>()
    };
    assert_eq!(
        legend(open(Builtin::Humanoid, true)),
        ["sample", "layer", "ik", "links", "palette"]
    );
    let mut cpu = glb_arm();
    cpu.mode = skinview::viewer::state::ViewMode::Cpu;
    assert_eq!(legend(glb_arm()), ["sample", "layer", "palette"]);
    assert_eq!(
        legend(cpu),
        ["sample", "layer", "palette", "skin + normals"]
    );
}

/// Timeline keys: `.` and `,` step 1/30 s and pause; with Shift they go to the next and
/// previous key time of the clip (the arm's bend has keys at its ends).
#[test]
fn frame_stepping_by_frame_and_by_key() {
    use skinview::viewer::state::STEP_S;
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| skinview::viewer::keys::keyboard(ui, s),
        glb_arm(),
    );
    h.state_mut().scrub(0.5);
    h.run();
    h.key_press(egui::Key::Period);
    h.key_press(egui::Key::Period);
    h.run();
    let s = h.state();
    assert!(!s.playback.playing, "stepping pauses");
    assert!(
        (s.playback.time_s - (0.5 + 2.0 * STEP_S)).abs() < 1e-5,
        "{}",
        s.playback.time_s
    );
    h.key_press(egui::Key::Comma);
    h.run();
    assert!((h.state().playback.time_s - (0.5 + STEP_S)).abs() < 1e-5);
    let keys = h.state().key_times.clone();
    let t = h.state().playback.time_s;
    let next = keys.iter().copied().find(|&k| k > t + 1e-5).unwrap();
    let before_next = keys
        .iter()
        .rev()
        .copied()
        .find(|&k| k < next - 1e-5)
        .unwrap();
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Period);
    h.run();
    assert_eq!(h.state().playback.time_s, next);
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Comma);
    h.run();
    assert_eq!(h.state().playback.time_s, before_next);
}

/// (fill of the limiting dimension, farthest reach), in the view of shape `aspect`, of the
/// current CPU-skinned vertices projected through the viewer's camera.
fn framed_extent(s: &ViewerState, aspect: f32) -> (f32, f32) {
    let m = s.framing.camera.clip_from_world(aspect);
    let mut reach: f32 = 0.0;
    let mut extent = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for p in s.character.outputs.iter().flat_map(|o| o.positions.iter()) {
        let c = m * p.extend(1.0);
        let (x, y) = (c.x / c.w, c.y / c.w);
        extent = [
            extent[0].min(x),
            extent[1].max(x),
            extent[2].min(y),
            extent[3].max(y),
        ];
        reach = reach.max(x.abs()).max(y.abs());
    }
    (
        0.5 * (extent[1] - extent[0]).max(extent[3] - extent[2]),
        reach,
    )
}

/// Every shared model and rig opened through the viewer's own load path, framed at two view
/// shapes (a wide window and one half of a split) and played at nine times of its clip: no
/// vertex touches the view's edge (within the framing's fill and 0.02), and the clip fills the
/// view (its widest frame reaches the fill within 0.1). A model without a clip is checked at
/// rest.
#[test]
fn every_shared_model_opens_framed_over_its_clip() {
    use skinview::camera::FRAME_FILL;
    let mut checked = 0;
    for path in common::all_models() {
        for aspect in [1.6f32, 0.9] {
            let mut s = open_file(&path);
            s.character.cpu_skinning = true;
            s.frame_view(aspect);
            let duration = s
                .playback
                .anim
                .map_or(0.0, |a| s.character.scene.animations[a].duration_s());
            let mut widest: f32 = 0.0;
            for i in 0..=8 {
                s.character.update(duration * i as f32 / 8.0, 0.0).unwrap();
                let (_, reach) = framed_extent(&s, aspect);
                assert!(
                    reach <= FRAME_FILL + 0.02,
                    "{} at aspect {aspect}, {:.3} s: reaches {reach} of the view",
                    path.display(),
                    duration * i as f32 / 8.0
                );
                widest = widest.max(reach);
            }
            assert!(
                widest >= FRAME_FILL - 0.1,
                "{} at aspect {aspect}: its clip only reaches {widest} of the view",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} models framed");
}

/// Framing in the viewer: a model opens framed at the view's own shape over its whole clip
/// (every sampled frame within 85 % of the view's limiting dimension, the widest near it,
/// measured by projecting the CPU-skinned vertices through the camera); `F` frames the current
/// pose to 85 %; a view the user left alone is framed again when its shape changes, one they
/// zoomed is not; a model that walks out of view is framed again unless the user has panned
/// or zoomed.
#[test]
fn the_viewer_frames_the_model_and_follows_it_out_of_view() {
    use skinview::camera::FRAME_FILL;
    let fox = ModelSource::File(common::model("Fox")).load().unwrap();
    let mut s = ViewerState::new(fox, false).unwrap();
    assert!(
        s.framing.reframe,
        "a new model is framed on its first drawn frame"
    );
    let aspect = 0.9; // one half of a split window
    s.frame_view(aspect);
    assert!(!s.framing.reframe);
    let measure = |s: &ViewerState| framed_extent(s, aspect);
    let time = s.playback.time_s;
    let duration = s.character.scene.animations[s.playback.anim.unwrap()].duration_s();
    s.character.cpu_skinning = true;
    let mut widest: f32 = 0.0;
    for i in 0..=40 {
        // Times off the framing's 30 Hz samples too.
        s.character.update(duration * i as f32 / 40.0, 0.0).unwrap();
        let (_, reach) = measure(&s);
        assert!(
            reach <= FRAME_FILL + 0.02,
            "frame {i} reaches {reach} of the view"
        );
        widest = widest.max(reach);
    }
    assert!(widest >= FRAME_FILL - 0.1, "the clip only reaches {widest}");
    s.character.update(time, 0.0).unwrap();
    // F: the current pose alone, to 85 %.
    s.framing.request(false);
    s.frame_view(aspect);
    let (fill, reach) = measure(&s);
    assert!((fill - FRAME_FILL).abs() < 0.01, "fills {fill}");
    assert!(reach < 0.9, "reaches {reach} of the view");
    // A change of shape frames again, unless the user framed the view.
    assert!(!s.framing.due(&s.character, aspect * 1.01));
    assert!(s.framing.due(&s.character, aspect * 2.0));
    let mut zoomed = s.framing.clone();
    zoomed.zoom(0.9);
    assert!(!zoomed.due(&s.character, aspect * 2.0));
    assert!(!s.model_left_view(aspect));
    // The model walks off: 3 of its sizes to the side.
    let size = (s.bounds.1 - s.bounds.0).length();
    s.framing.camera.target += glam::Vec3::X * 3.0 * size;
    assert!(s.model_left_view(aspect));
    // F asks for a framing (the viewport does it on its next frame, at its own shape).
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| skinview::viewer::keys::keyboard(ui, s),
        s,
    );
    h.run();
    h.key_press(egui::Key::F);
    h.run();
    assert!(h.state().framing.reframe, "F asks for a framing");
}

/// The bone inspector: the selected bone's local translation as the pose has it, the vertices
/// it moves (counted here from the weights) with its largest weight, its inverse bind matrix;
/// the hierarchy filter lists only matching nodes, and picking one selects it.
#[test]
fn bone_inspector_and_hierarchy_filter() {
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::hierarchy(ui, s);
            panels::bone_inspector(ui, s);
        },
        open(Builtin::Humanoid, true),
    );
    h.run();
    h.get_by_label("select a bone in the viewport or the hierarchy");
    h.get_by_role(Role::TextInput).focus();
    h.run();
    h.get_by_role(Role::TextInput).type_text("forearm");
    h.run();
    assert_eq!(h.state().hierarchy_filter, "forearm");
    assert!(
        h.query_by_label("l_thigh").is_none(),
        "the filter hides the thighs"
    );
    h.get_by_label("l_forearm").click();
    h.run();
    let scene = h.state().character.scene.clone();
    let fore = scene.find_node("l_forearm").unwrap();
    assert_eq!(h.state().view.selected_node, Some(fore));
    // Independent count: every (vertex, joint) entry of this joint with a weight above 0.
    let (mut count, mut largest) = (0usize, 0f32);
    for d in &scene.draws {
        let (Some(s), Some(w)) = (d.skin, scene.primitive(d).skin_weights.as_ref()) else {
            continue;
        };
        let Some(j) = scene.skins[s].joints.iter().position(|&n| n == fore) else {
            continue;
        };
        for v in 0..w.vertex_count() {
            let x: f32 = (0..w.width)
                .filter(|&k| w.joints[v * w.width + k] as usize == j)
                .map(|k| w.weights[v * w.width + k])
                .sum();
            if x > 0.0 {
                count += 1;
                largest = largest.max(x);
            }
        }
    }
    assert!(count > 100, "{count}");
    h.get_by_label(&format!(
        "moves {count} vertices, largest weight {largest:.4}"
    ));
    let t = h.state().character.frame.pose.locals[fore].translation;
    h.get_by_label(&format!("{:.4} {:.4} {:.4}", t.x, t.y, t.z));
    h.get_by_label("inverse bind matrix (skin 0), rows:");
}

/// `F` with a bone selected frames the vertices that bone moves (85 % of the view), the
/// rest of the model reaching past the view's edges.
#[test]
fn f_frames_the_selected_bone() {
    use skinview::camera::FRAME_FILL;
    let mut s = open(Builtin::Humanoid, true);
    let fore = s.character.scene.find_node("l_forearm").unwrap();
    s.select(Some(fore));
    s.framing.reframe = true;
    s.framing.frame_selection = true;
    let aspect = 1.5;
    s.frame_view(aspect);
    let b = skinview::info::BoneInfluence::of(&s.character.scene, fore);
    let m = s.framing.camera.clip_from_world(aspect);
    let ndc = |p: glam::Vec3| {
        let c = m * p.extend(1.0);
        glam::Vec2::new(c.x / c.w, c.y / c.w)
    };
    let mut reach: f32 = 0.0;
    for (d, vs) in &b.draw_vertices {
        for &v in vs {
            let q = ndc(s.character.outputs[*d].positions[v as usize]);
            reach = reach.max(q.x.abs()).max(q.y.abs());
        }
    }
    assert!(
        reach <= FRAME_FILL + 0.05 && reach > 0.5,
        "the forearm reaches {reach}"
    );
    let whole = s.character.outputs[0]
        .positions
        .iter()
        .map(|p| ndc(*p).abs().max_element())
        .fold(0f32, f32::max);
    assert!(
        whole > 1.0,
        "the whole body fits ({whole}): not framed on the bone"
    );
    // The close-up stays (no walk-out framing undoes it), and the depth planes still hold the
    // whole model.
    assert!(s.framing.user_framed, "a close-up is the user's framing");
    let (lo, hi) = skinview::skin::bounds(&s.character.outputs).unwrap();
    assert!((s.framing.camera.scene_radius_m - (hi - lo).length() * 0.5).abs() < 1e-4);
}

/// The timeline names the time and frame and the selected bone's keys; Shift+`.` / `,` step
/// through the selected bone's own keys (a generated rig whose channels have their own key
/// times), and through every key with nothing selected.
#[test]
fn timeline_follows_the_selected_bones_keys() {
    let rig = ModelSource::File(common::model("rig_seed1"))
        .load()
        .unwrap();
    let mut s = ViewerState::new(rig, false).unwrap();
    let all = s.key_times.clone();
    // A bone whose keys are a strict subset of the clip's.
    let node = (0..s.character.scene.nodes.len())
        .find(|&n| {
            let own = s.key_times_of(Some(n));
            own.len() >= 2 && own.len() < all.len()
        })
        .expect("a bone with keys of its own");
    let own = s.key_times_of(Some(node));
    s.select(Some(node));
    s.scrub(0.0);
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::timeline(ui, s);
            skinview::viewer::keys::keyboard(ui, s);
        },
        s,
    );
    h.run();
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Period);
    h.run();
    let first = own.iter().copied().find(|&k| k > 1e-5).unwrap();
    assert_eq!(h.state().playback.time_s, first, "own keys {own:?}");
    let label = h.state().node_label(node);
    let frame = (first / skinview::viewer::state::STEP_S).round() as i64;
    h.get_by_label_contains(&format!(
        "frame {frame} at 30 fps, {} keys of {label}",
        own.len()
    ));
    // Nothing selected: every key.
    h.state_mut().select(None);
    h.state_mut().scrub(0.0);
    h.run();
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Period);
    h.run();
    let next = all.iter().copied().find(|&k| k > 1e-5).unwrap();
    assert_eq!(h.state().playback.time_s, next);
}

/// IK on glTF models: ticking "effector" on CesiumMan and Fox puts the clip on the animation
/// stage with an effector on a leaf joint, no joint limits; the chosen end bone (CesiumMan's
/// hand, Fox's front foot) then reaches a target moved 5 % of the model's size away, and
/// unticking goes back to the clip.
#[test]
fn ik_on_gltf_models() {
    for (model, end) in [
        ("CesiumMan", "Skeleton_arm_joint_L__2_"),
        ("Fox", "b_LeftFoot02_018"),
    ] {
        let m = ModelSource::File(common::model(model)).load().unwrap();
        let s = ViewerState::new(m, false).unwrap();
        let mut h = tick_effector(s);
        let s = h.state_mut();
        assert_eq!(s.error, None, "{model}");
        let ik = s.character.ik.as_ref().expect("an effector");
        assert!(ik.limits.iter().all(Option::is_none), "{model}: limits off");
        let goal = &s.stage().unwrap().ik[0];
        let leaf = s.character.scene.find_node(&goal.end_bone).unwrap();
        assert!(
            s.character.scene.skins[0].joints.contains(&leaf),
            "{model}: the default end bone is a joint"
        );
        // Pick the hand / foot, three bones, and move its target.
        let spec = s.stage_mut().unwrap();
        spec.ik[0].end_bone = end.into();
        spec.ik[0].chain_length = 3;
        s.rebuild().unwrap();
        let node = s.character.scene.find_node(end).unwrap();
        let at = s.character.frame.model_from_node[node].w_axis.truncate();
        let size = (s.bounds.1 - s.bounds.0).length();
        let target = at + glam::Vec3::new(0.03, 0.03, 0.02) * size;
        s.set_ik_target(target);
        s.playback.playing = false;
        // A second of frames: the solver's speed limits spread the reach over a few.
        for _ in 0..30 {
            s.tick(1.0 / 30.0).unwrap();
        }
        let reached = s.character.frame.model_from_node[node].w_axis.truncate();
        assert!(
            reached.distance(target) < 0.01 * size,
            "{model}: {end} at {reached} for a target at {target} (size {size})"
        );
        // Unticking: back to the clip.
        h.get_by_label("effector").click();
        h.run();
        h.run();
        assert!(h.state().stage().is_none(), "{model}: back to its clip");
        assert!(h.state().character.ik.is_none());
    }
}

/// The morph targets panel lists every target of a morphed mesh with a slider (none for a
/// model without morph targets).
#[test]
fn morph_targets_panel_lists_each_target() {
    let cube = ModelSource::File(common::model("AnimatedMorphCube"))
        .load()
        .unwrap();
    let mut h = Harness::new_ui_state(
        panels::morph_targets,
        ViewerState::new(cube, false).unwrap(),
    );
    h.run();
    h.get_by_label_contains("(2 targets)");
    h.get_by_role_and_label(Role::Slider, "target 0");
    h.get_by_role_and_label(Role::Slider, "target 1");
    let mut h = Harness::new_ui_state(panels::morph_targets, open(Builtin::Arm, false));
    h.run();
    assert!(h.query_by_label_contains("targets)").is_none());
}

/// A morph slider set while paused keeps its value over later frames (the clip's weight at
/// that time differs), until "release" or Play hands it back to the clip; while playing, a set
/// value is let go once the slider is.
#[test]
fn morph_sliders_keep_their_value_while_paused() {
    let cube = ModelSource::File(common::model("AnimatedMorphCube"))
        .load()
        .unwrap();
    let mut state = ViewerState::new(cube, false).unwrap();
    state.playback.playing = false;
    state.scrub(0.5);
    state.tick(0.0).unwrap();
    let node = (0..state.character.scene.nodes.len())
        .find(|&n| {
            state
                .character
                .frame
                .pose
                .morph_weights
                .get(n)
                .is_some_and(|w| !w.is_empty())
        })
        .unwrap();
    let clip_w = state.character.frame.pose.morph_weights[node][0];
    let held_w = if clip_w > 0.5 { 0.1 } else { 0.9 };
    let mut h = Harness::new_ui_state(panels::morph_targets, state);
    h.run();
    h.get_by_role_and_label(Role::Slider, "target 0")
        .set_value_accesskit(held_w as f64);
    for _ in 0..4 {
        h.run();
        h.state_mut().tick(1.0 / 30.0).unwrap();
    }
    let now = h.state().character.frame.pose.morph_weights[node][0];
    assert!(
        (now - held_w).abs() < 1e-4,
        "held {held_w}, now {now} (clip {clip_w})"
    );
    h.get_by_label("release").click();
    h.run();
    h.state_mut().tick(0.0).unwrap();
    let now = h.state().character.frame.pose.morph_weights[node][0];
    assert!(
        (now - clip_w).abs() < 1e-4,
        "released: {now} vs the clip's {clip_w}"
    );
    assert!(h.query_by_label("release").is_none());
    // Held again, then Play: the clip drives it.
    h.get_by_role_and_label(Role::Slider, "target 0")
        .set_value_accesskit(held_w as f64);
    h.run();
    h.run();
    assert_eq!(h.state().character.morph_overrides().len(), 1);
    h.state_mut().toggle_play();
    assert!(h.state().character.morph_overrides().is_empty());
    // Playing: a value set is held for that frame only.
    h.get_by_role_and_label(Role::Slider, "target 0")
        .set_value_accesskit(held_w as f64);
    h.run();
    h.run();
    h.run();
    assert!(h.state().character.morph_overrides().is_empty());
}

/// "Compare with" another character (the Fox beside CesiumMan): no vertex pairs, and the panel
/// says that nothing is measured instead of a distance of 0; the counts are the two files'
/// vertices.
#[test]
fn compare_with_another_character_says_nothing_paired() {
    let fox = common::model("Fox");
    let cesium = common::model("CesiumMan");
    let mut state = open_file(&fox);
    state.compare_with(cesium.to_str().unwrap()).unwrap();
    state.tick(0.0).unwrap();
    let o = state.other.as_ref().unwrap();
    assert_eq!(
        o.unpaired(),
        Some((state.character.scene.vertex_count(), o.scene.vertex_count()))
    );
    // The heatmaps draw every vertex grey (no partner), not blue (a distance of 0).
    let no_partner = skinview::diff::pairing::NO_PARTNER;
    assert!(
        o.distances_a
            .iter()
            .chain(&o.distances_b)
            .all(|&d| d == no_partner)
    );
    let mut h = Harness::new_ui_state(panels::model, state);
    h.run();
    assert!(h.query_by_label_contains("no vertex pairs").is_some());
    assert!(h.query_by_label_contains("|A − B| now").is_none());
    // A copy of the model pairs every vertex: nothing unpaired.
    let s = h.state_mut();
    s.compare_with(fox.to_str().unwrap()).unwrap();
    s.tick(0.0).unwrap();
    assert_eq!(s.other.as_ref().unwrap().unpaired(), None);
}

/// "Compare with": a copy of CesiumMan with one inverse bind matrix moved 1 cm opens beside it;
/// the distance at the paired vertices is what the move makes (every vertex that joint binds
/// moves by model_from_joint · (0.01, 0, 0), computed here), the heatmaps' per-vertex values
/// hold it, the panel says it; the file against itself is 0; a missing file shows its error and
/// compares nothing; stop goes back to the GPU view.
#[test]
fn compare_with_shows_the_distance_to_another_file() {
    let model = common::model("CesiumMan");
    let dir = std::env::temp_dir().join("skinview-viewer-compare");
    let (planted, node) = common::glb::planted_bind_move(&model, 3, 0.01, &dir);
    let state = open_file(&model);
    let mut h = Harness::new_ui_state(panels::model, state);
    h.run();
    let field = h.get_all_by_role(Role::TextInput).nth(1).unwrap();
    field.focus();
    field.type_text(planted.to_str().unwrap());
    h.run();
    h.get_by_label("Compare with").click();
    h.run();
    {
        let s = h.state_mut();
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(s.mode, ViewMode::AgainstFile);
        s.scrub(0.5);
        s.tick(0.0).unwrap();
        let o = s.other.as_ref().unwrap();
        let expected = s.character.frame.model_from_node[node]
            .transform_vector3(glam::Vec3::new(0.01, 0.0, 0.0))
            .length() as f64;
        let now = o.now.max;
        assert!(
            now > 0.5 * expected && now <= expected * 1.001,
            "{now} vs {expected}"
        );
        let heat = o.distances_a.iter().copied().fold(0.0f32, f32::max) as f64;
        assert!((heat / now - 1.0).abs() < 1e-6, "{heat} vs {now}");
        assert_eq!(o.distances_a.len(), s.character.scene.vertex_count());
        assert_eq!(o.distances_b.len(), o.scene.vertex_count());
    }
    h.run();
    assert!(h.query_by_label_contains("|A − B| now").is_some());
    h.get_by_label("stop").click();
    h.run();
    assert!(h.state().other.is_none());
    assert_eq!(h.state().mode, ViewMode::Gpu);
    // The file against itself: zero everywhere.
    let s = h.state_mut();
    s.compare_with(model.to_str().unwrap()).unwrap();
    s.scrub(1.0);
    s.tick(0.0).unwrap();
    assert_eq!(s.other.as_ref().unwrap().now.max, 0.0);
    // At the clip's last instant too: the model's looping clip shows its start there, and so
    // does the other file's (a slow machine's playback lands on the end in whole steps).
    let end_s = s.duration_s();
    assert!(end_s > 1.0, "{end_s}");
    s.scrub(end_s);
    s.tick(0.0).unwrap();
    assert_eq!(s.other.as_ref().unwrap().now.max, 0.0, "at {end_s} s");
    // The other file takes the model's blend: against itself under DQS, still 0.
    s.set_skin_options(skinview::skin::SkinOptions {
        mode: skinview::skin::SkinMode::Dqs,
        ..Default::default()
    });
    s.tick(0.0).unwrap();
    assert_eq!(s.mode, ViewMode::AgainstFile, "{:?}", s.error);
    assert_eq!(s.other.as_ref().unwrap().now.max, 0.0);
    s.stop_comparing();
    // A missing file: its error, and nothing compared.
    assert!(s.compare_with("/nonexistent/dragon.glb").is_err());
    assert!(s.error.as_deref().unwrap_or("").contains("dragon.glb"));
    assert!(s.other.is_none() && s.mode != ViewMode::AgainstFile);
    // V from "A | B" goes to the first mode of the cycle (GPU); the file stays open.
    let mut with_b = open_file(&model);
    with_b.compare_with(planted.to_str().unwrap()).unwrap();
    let mut k = Harness::new_ui_state(
        |ui, s: &mut ViewerState| skinview::viewer::keys::keyboard(ui, s),
        with_b,
    );
    k.run();
    k.key_press(egui::Key::V);
    k.run();
    assert_eq!(k.state().mode, ViewMode::Gpu);
    assert!(k.state().other.is_some());
    // A native rig's animation stage has no clip to pair: its vertices are not compared, its
    // curves are (and the panel says why).
    let mut humanoid = open(Builtin::Humanoid, true);
    humanoid.compare_with(model.to_str().unwrap()).unwrap();
    assert!(humanoid.other.is_none() && humanoid.curves_file.is_some());
    assert!(
        humanoid
            .compare_refusal()
            .unwrap()
            .contains("animation stage")
    );
}

/// The viewport in "A | B": the model on the left and the other file on the right, both drawn
/// as heat: blue where they agree, green to yellow on the head the moved bind matrix shifts
/// (1 cm on a 1.9 m model: 5e-3 of the diagonal, between 1e-3 green and 1e-2 orange), in each
/// half of the viewport's own target.
#[test]
fn viewport_draws_both_files_coloured_by_their_distance() {
    let Some(ctx) = common::gpu() else { return };
    let model = common::model("CesiumMan");
    let dir = std::env::temp_dir().join("skinview-viewport-compare");
    let (planted, _) = common::glb::planted_bind_move(&model, 3, 0.01, &dir);
    let mut state = open_file(&model);
    state.compare_with(planted.to_str().unwrap()).unwrap();
    state.scrub(0.5);
    state.tick(0.0).unwrap();
    let mut viewport = skinview::viewer::viewport::Viewport::new(ctx).unwrap();
    for _ in 0..2 {
        viewport.frame(ctx, &mut state, (640, 320)).unwrap();
    }
    let encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let image = viewport.target().read_rgba8(ctx, encoder).unwrap();
    let count = |x0: u32, x1: u32, f: &dyn Fn(&[u8]) -> bool| {
        (0..image.height)
            .flat_map(|y| (x0..x1).map(move |x| ((y * image.width + x) * 4) as usize))
            .filter(|&i| f(&image.pixels[i..i + 4]))
            .count()
    };
    let blue = |p: &[u8]| p[2] > 120 && p[0] < 60;
    let warm = |p: &[u8]| p[1] > 120 && p[2] < 80;
    let half = image.width / 2;
    for (name, x0, x1) in [("left (A)", 0, half), ("right (B)", half, image.width)] {
        let (b, w) = (count(x0, x1, &blue), count(x0, x1, &warm));
        println!("{name}: {b} blue, {w} green-to-yellow pixels");
        assert!(
            b > 200,
            "{name}: the body is not drawn as agreeing (blue): {b}"
        );
        assert!(w > 20, "{name}: the moved head shows no heat: {w}");
    }
}

/// The viewer opens an FBX file (the path field's `open`) and plays its clips, and compares
/// it with the glTF it came from: the FBX rests in its bind pose, so the two are paired at
/// the clip's start, and they agree to f32 precision at the source's keys (1/24 s).
#[test]
fn opens_an_fbx_and_compares_it_with_its_source() {
    let fbx = common::fbx::converted("CesiumMan");
    let source = common::model("CesiumMan");
    let mut s = open(Builtin::Arm, false);
    s.open(fbx.to_str().unwrap()).unwrap();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.character.scene.name, "CesiumMan.fbx");
    assert_eq!(s.character.scene.animations.len(), 1);
    s.compare_with(source.to_str().unwrap()).unwrap();
    for frame in [1, 12, 30, 47] {
        s.scrub(frame as f32 / 24.0);
        s.tick(0.0).unwrap();
        // Model units: 1e-5 m is 6e-6 of CesiumMan's 1.8 m (measured 1.5e-6 m).
        let now = s.other.as_ref().unwrap().now.max;
        assert!(now < 1e-5, "frame {frame}: {now:e} m apart");
    }
}

/// The crowd panel enters the crowd view, `]` doubles and `[` halves it (each press counts,
/// within 1..=MAX_INSTANCES), and "One character" leaves it.
#[test]
fn crowd_panel_and_keys_resize_the_crowd() {
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::crowd(ui, s);
            skinview::viewer::keys::keyboard(ui, s);
        },
        open(Builtin::Arm, false),
    );
    h.run();
    assert_eq!(h.state().crowd, None);
    h.get_by_label("Show a crowd of 64").click();
    h.run();
    assert_eq!(h.state().crowd, Some(64));
    h.key_press(egui::Key::CloseBracket);
    h.key_press(egui::Key::CloseBracket);
    h.run();
    assert_eq!(h.state().crowd, Some(256));
    h.key_press(egui::Key::OpenBracket);
    h.run();
    assert_eq!(h.state().crowd, Some(128));
    h.get_by_label("÷2").click();
    h.run();
    assert_eq!(h.state().crowd, Some(64));
    for _ in 0..10 {
        h.key_press(egui::Key::OpenBracket);
    }
    h.run();
    assert_eq!(h.state().crowd, Some(1), "halving stops at one character");
    for _ in 0..20 {
        h.key_press(egui::Key::CloseBracket);
    }
    h.run();
    assert_eq!(h.state().crowd, Some(skinview::gpu::MAX_INSTANCES));
    h.get_by_label("One character").click();
    h.run();
    assert_eq!(h.state().crowd, None);
}

/// `view --anim`: the viewer starts on the clip asked for (by name or index), or the rest pose.
#[test]
fn the_view_command_starts_on_the_clip_it_names() {
    for (anim, want) in [
        (Some(Some(2)), Some(2)),
        (Some(None), None),
        (None, Some(0)),
    ] {
        let m = ModelSource::File(common::model("Fox")).load().unwrap();
        let options = skinview::viewer::ViewerOptions {
            anim,
            ..Default::default()
        };
        let s = skinview::viewer::start_state(m, &options).unwrap();
        assert_eq!(s.playback.anim, want, "{anim:?}");
        let name = want.map(|a| s.character.scene.clip_name(a).label());
        let playing = s.character.layers().first().map(|l| l.anim);
        assert_eq!(playing, want, "{anim:?} {name:?}: the character plays it");
    }
}

/// A model with no animation: no Play or Pause button, no timeline, no clock in the status bar.
#[test]
fn a_model_with_no_animation_shows_no_clock() {
    let mut m = ModelSource::File(common::model("CesiumMan"))
        .load()
        .unwrap();
    m.scene.animations.clear();
    let s = ViewerState::new(m, false).unwrap();
    assert!(!s.has_clock());
    let both = |ui: &mut egui::Ui, s: &mut ViewerState| {
        panels::animation(ui, s);
        panels::status(ui, s, "adapter");
    };
    let mut h = Harness::new_ui_state(both, s);
    h.run();
    h.get_by_label("no animation in this file: the rest pose");
    for gone in ["Play", "Pause", "loop"] {
        assert!(h.query_by_label(gone).is_none(), "{gone} is shown");
    }
    assert!(
        h.query_by_label_contains("t = ").is_none(),
        "a clock is shown"
    );
    // With its clip, the same model has them.
    let s = ViewerState::new(
        ModelSource::File(common::model("CesiumMan"))
            .load()
            .unwrap(),
        false,
    )
    .unwrap();
    let mut h = Harness::new_ui_state(both, s);
    h.run();
    assert!(h.query_by_label("Pause").is_some() && h.query_by_label_contains("t = ").is_some());
}

/// Opened in the viewer (every shared model and the built-ins), no leaf bone and no bone that
/// moves no vertex is drawn longer than a tenth of the diagonal the viewer frames, with every
/// bone shown; hidden, none of the bones that move no vertex is left. A native rig's bones,
/// links included, are as long as the rig says (the humanoid's head bone is its head's 0.26 m,
/// a forearm's twist links span the forearm): only its hiding is checked.
#[test]
fn end_and_control_bones_stay_short() {
    use skinview::view::skeleton::{SkeletonShape, joint_flags, own_weights};
    let mut states: Vec<ViewerState> = common::all_models().iter().map(|p| open_file(p)).collect();
    states.push(open(Builtin::Humanoid, true));
    states.push(open(Builtin::Arm, false));
    let (mut ends, mut models) = (0, 0);
    for s in &states {
        let scene = &s.character.scene;
        let is_joint = joint_flags(scene);
        let own = own_weights(scene);
        let shape = SkeletonShape::new(scene, &skinview::view::bone_tips(&s.character));
        let diagonal = (s.bounds.1 - s.bounds.0).length();
        let m = &s.character.frame.model_from_node;
        let mut bones = Vec::new();
        shape.bones(m, false, &mut bones);
        models += usize::from(!bones.is_empty());
        for b in &bones {
            let leaf = !(0..scene.nodes.len())
                .any(|k| is_joint[k] && scene.nodes[k].parent == Some(b.node));
            if !(leaf || own[b.node] == 0.0) || s.character.bones.is_some() {
                continue;
            }
            ends += 1;
            let len = b.tail.distance(b.head);
            assert!(
                len <= diagonal / 10.0,
                "{}: {} is {len} long, over a tenth of the diagonal {diagonal}",
                scene.name,
                scene.node_label(b.node)
            );
        }
        shape.bones(m, true, &mut bones);
        assert!(bones.iter().all(|b| own[b.node] > 0.0), "{}", scene.name);
    }
    assert!(
        models >= 10 && ends > 50,
        "{models} models, {ends} end bones"
    );
}

fn lit(h: &Harness<'_, ViewerState>, label: &str) -> bool {
    h.get_by_label(label).accesskit_node().toggled() == Some(Toggled::True)
}

/// The status bar names the model, the clip, the selected bone and the colours drawn, and
/// follows the view: the difference view's colours replace the chosen ones.
#[test]
fn the_status_bar_says_what_is_shown() {
    let mut s = open_file(&common::model("Fox"));
    let head = s.character.scene.find_node("b_Head_05").unwrap();
    s.select(Some(head));
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| panels::status(ui, s, "test adapter"),
        s,
    );
    h.run();
    let clip = h.state().motion_label();
    let anim = h.state().playback.anim.unwrap();
    let expected = h.state().character.scene.animations[anim].name.clone();
    assert_eq!(Some(clip.clone()), expected);
    h.get_by_label("Fox.glb");
    h.get_by_label(&clip);
    h.get_by_label("bone b_Head_05");
    h.get_by_label("colours: material");
    h.state_mut().mode = ViewMode::Diff;
    h.run();
    h.get_by_label("colours: |GPU - CPU| error");
    assert!(h.query_by_label("colours: material").is_none());
}

/// The colour buttons light what the surface shows: the submesh colours of a split (not
/// "material"), the difference view's error colours (not "weights"); choosing weights there
/// leaves the difference view for the GPU view.
#[test]
fn colour_buttons_light_the_colours_drawn() {
    use skinview::gpu::ColorMode;
    let mut s = open_file(&common::model("CesiumMan"));
    s.setup.split = Some(skinview::viewer::state::default_split());
    s.rebuild().unwrap();
    let weights_applied = |ui: &mut egui::Ui, s: &mut ViewerState| {
        let before = s.setup.clone();
        panels::weights(ui, s);
        s.apply_pending(Some(before));
    };
    let mut h = Harness::new_ui_state(weights_applied, s);
    h.run();
    assert!(lit(&h, "submesh") && !lit(&h, "material"));
    h.get_by_label("material").click();
    h.run();
    h.run();
    assert!(lit(&h, "material") && !lit(&h, "submesh"));
    assert!(!h.state().setup.split.unwrap().color_submeshes);
    h.state_mut().view.color_mode = ColorMode::Weights;
    h.state_mut().mode = ViewMode::Diff;
    h.run();
    assert!(lit(&h, "|GPU - CPU| error") && !lit(&h, "weights"));
    h.get_by_label("weights").click();
    h.run();
    assert_eq!(h.state().mode, ViewMode::Gpu);
    assert!(lit(&h, "weights"));
    assert!(h.query_by_label("|GPU - CPU| error").is_none());
}

/// A bone selected outside the hierarchy (in the viewport, by `--bone`) opens its ancestors
/// there; the bone inspector shows its inverse bind matrix once, not once per submesh skin.
#[test]
fn a_selection_opens_the_hierarchy_and_its_inverse_bind_shows_once() {
    let mut s = open_file(&common::model("Fox"));
    s.setup.split = Some(skinview::character::SplitSpec {
        max_bones: 8,
        ..skinview::viewer::state::default_split()
    });
    s.rebuild().unwrap();
    let skins = s.character.scene.skins.len();
    assert!(skins > 1, "the split makes a skin per submesh");
    // The deepest joint: closed under the tree's default (three levels open).
    let deepest = skinview::viewer::state::deepest_leaf_joint(&s.character.scene).unwrap();
    let label = s.node_label(deepest);
    let mut h = Harness::new_ui_state(
        |ui, s: &mut ViewerState| {
            panels::hierarchy(ui, s);
            panels::bone_inspector(ui, s);
        },
        s,
    );
    h.run();
    assert!(
        h.query_by_label(&label).is_none(),
        "{label} starts folded away"
    );
    h.state_mut().select(Some(deepest));
    h.run();
    h.run();
    assert!(
        h.query_all_by_label(&label).count() >= 2,
        "{label}: tree row and inspector"
    );
    let ibm = h
        .query_all_by_label_contains("inverse bind matrix")
        .collect::<Vec<_>>();
    assert_eq!(ibm.len(), 1);
}

/// The bone panel shows the selected joint's rest and bind places and how far apart they are:
/// on a copy of CesiumMan with one inverse bind matrix moved 1 cm, that joint's bind place is
/// the offset through its rest rotation away (computed here from the rest pose), in red; the
/// other joints agree. The overlay toggles are in the panel.
#[test]
fn the_bone_panel_shows_rest_bind_and_their_difference() {
    let model = common::model("CesiumMan");
    let dir = std::env::temp_dir().join("skinview-viewer-rest-bind");
    let (planted, node) = common::glb::planted_bind_move(&model, 3, 0.01, &dir);
    let mut state = open_file(&planted);
    state.select(Some(node));
    let rest = state.poses.as_ref().unwrap().rest[node];
    let expected_m = rest
        .transform_vector3(glam::Vec3::new(0.01, 0.0, 0.0))
        .length();
    let mut h = Harness::new_ui_state(panels::bone_inspector, state);
    h.run();
    let difference = |h: &Harness<'_, ViewerState>| {
        let row = h.get_by_label_contains("bind − rest:");
        let n = row.accesskit_node();
        n.label().or(n.value()).unwrap_or_default().to_string()
    };
    let text = difference(&h);
    let metres: f32 = text
        .split("bind − rest: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((metres - expected_m).abs() < 2e-4, "{text} vs {expected_m}");
    assert!(h.query_by_label_contains("rest position").is_some());
    assert!(h.query_by_label_contains("bind position").is_some());
    // Another joint: bind and rest agree.
    let other = h.state().character.scene.skins[0].joints[5];
    h.state_mut().select(Some(other));
    h.run();
    let text = difference(&h);
    assert!(text.starts_with("bind − rest: 0.0000 m, 0.00°"), "{text}");
    // The toggles.
    let mut h = Harness::new_ui_state(panels::weights, open_file(&model));
    h.run();
    h.get_by_label("rest pose").click();
    h.get_by_label("bind pose").click();
    h.get_by_label("motion trail").click();
    h.run();
    let s = h.state();
    assert!(s.view.rest_pose && s.view.bind_pose && s.trail.shown);
}

/// The motion trail follows the selected bone over the clip: its first and middle points are
/// where the character's own animation stage puts the joint at those times.
#[test]
fn the_motion_trail_runs_through_the_bones_places() {
    let mut s = open_file(&common::model("CesiumMan"));
    let node = s
        .character
        .scene
        .find_node("Skeleton_arm_joint_L__3_")
        .unwrap();
    let anim = s.playback.anim.unwrap();
    let generation = s.generation;
    let path = s
        .trail
        .path(&s.character.scene, generation, node, anim)
        .to_vec();
    assert_eq!(path.len(), skinview::viewer::trail::TRAIL_SAMPLES);
    // The start and the middle (the viewer's looping clip shows its start at its end).
    let mid = path.len() / 2;
    let mid_s = s.duration_s() * mid as f32 / (path.len() - 1) as f32;
    for (t, p) in [(0.0, path[0]), (mid_s, path[mid])] {
        s.playback.playing = false;
        s.scrub(t);
        s.tick(0.0).unwrap();
        let at = s.character.frame.model_from_node[node].w_axis.truncate();
        assert!(at.distance(p) < 1e-4, "t = {t}: trail {p}, joint {at}");
    }
    let travelled: f32 = path.windows(2).map(|w| w[0].distance(w[1])).sum();
    assert!(
        travelled > 0.05,
        "the hand moves over the walk: {travelled}"
    );
}

/// A file dropped on the window asks what to do: "Compare with it" shows the model beside it
/// (the copy with one bind matrix moved 1 cm: the distance view), "Open it" opens it, "Cancel"
/// leaves everything as it was; on the humanoid's animation stage it compares the curves.
#[test]
fn a_dropped_file_asks_to_open_or_compare() {
    let model = common::model("CesiumMan");
    let dir = std::env::temp_dir().join("skinview-viewer-drop");
    let (planted, _) = common::glb::planted_bind_move(&model, 3, 0.01, &dir);
    let prompt = |ui: &mut egui::Ui, s: &mut ViewerState| panels::drop_prompt(ui.ctx(), s);
    let mut h = Harness::new_ui_state(prompt, open_file(&model));
    h.state_mut().dropped = Some(planted.display().to_string());
    h.run();
    h.get_by_label_contains("Dropped: planted.glb");
    h.get_by_label("Compare with it").click();
    h.run();
    let s = h.state();
    assert!(s.dropped.is_none() && s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.mode, ViewMode::AgainstFile);
    assert!(s.other.is_some());
    assert_eq!(s.character.scene.name, "CesiumMan.glb", "the model stays");
    // Cancel: nothing changes.
    h.state_mut().dropped = Some(common::model("Fox").display().to_string());
    h.run();
    h.get_by_label("Cancel").click();
    h.run();
    assert!(h.state().dropped.is_none());
    assert_eq!(h.state().character.scene.name, "CesiumMan.glb");
    // Open it.
    h.state_mut().dropped = Some(common::model("Fox").display().to_string());
    h.run();
    h.get_by_label("Open it").click();
    h.run();
    assert_eq!(h.state().character.scene.name, "Fox.glb");
    // The humanoid's stage cannot be compared vertex by vertex: its curves are, in the
    // curves panel.
    let mut h = Harness::new_ui_state(prompt, open(Builtin::Humanoid, true));
    h.state_mut().dropped = Some(model.display().to_string());
    h.run();
    h.get_by_label("Compare with it").click();
    h.run();
    let s = h.state();
    assert!(s.other.is_none() && s.error.is_none(), "{:?}", s.error);
    assert!(s.curves_file.is_some() && s.curves.open);
}

/// A side panel a fifth of a 1000-px window wide (200 points), and narrower down to 120 (the
/// narrowest the viewer lets one be dragged): the panels' rows wrap inside it (sliders on rows
/// of their own, a slider's name above it where the row has no room for it, buttons moved down
/// whole, a bone's values under their names, its matrix in three decimals), so nothing reaches
/// past its edge. Measured on every widget's accessible bounds, with a bone selected.
#[test]
fn side_panel_rows_wrap_at_the_panel_width() {
    for width in [200.0, 160.0, 140.0, 120.0] {
        rows_wrap_at(width);
    }
}

fn rows_wrap_at(width: f32) {
    let all = |ui: &mut egui::Ui, s: &mut ViewerState| {
        skinview::viewer::side_scroll(ui, "test panel", |ui| {
            panels::bone_inspector(ui, s);
            panels::model(ui, s);
            panels::animation(ui, s);
            panels::layers(ui, s);
            panels::crowd(ui, s);
            panels::deformation(ui, s);
            panels::weights(ui, s);
            panels::morph_targets(ui, s);
            panels::ik(ui, s);
        });
    };
    let mut cesium = open_file(&common::model("CesiumMan"));
    let arm = cesium
        .character
        .scene
        .find_node("Skeleton_arm_joint_L__3_")
        .ok();
    cesium.select(arm);
    for state in [open(Builtin::Humanoid, true), cesium] {
        let mut h = Harness::builder()
            .with_size(egui::vec2(width, 2400.0))
            .build_ui_state(all, state);
        h.run();
        h.run();
        // A button whose text is a few points wider than the row still sits on it.
        let slack = 12.0;
        let wide: Vec<String> = h
            .root()
            .children_recursive()
            .filter_map(|n| {
                let n = n.accesskit_node();
                // A text field's own text runs on inside it (the field is what is laid out).
                if n.role() == Role::TextRun {
                    return None;
                }
                let b = n.bounding_box()?;
                (b.x1 > f64::from(width + slack)).then(|| {
                    format!(
                        "{:?} {:?} {:?} to x {:.0}",
                        n.role(),
                        n.label(),
                        n.value(),
                        b.x1
                    )
                })
            })
            .collect();
        assert!(
            wide.is_empty(),
            "{width} points: past the panel's edge: {wide:#?}"
        );
    }
}
