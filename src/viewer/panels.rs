//! The viewer's egui panels, each a function of `&mut ViewerState` (no GPU, no window), so
//! their logic is tested headless with egui_kittest: model (open by path or built-in, errors),
//! joint hierarchy, animation (clip, play/pause, timeline with key markers, speed, loop),
//! layers (native rigs), IK, deformation, weights and the picked vertex, performance.

use egui::{Color32, RichText, Ui};
use glam::Vec3;

use super::state::{LiveErrors, SurfaceColours, ViewMode, ViewerState};
use crate::builtin::Builtin;
use crate::character::{CharacterSpec, LayerDesc, MaskSpec, Motion, MotionRef};
use crate::gpu::ColorMode;
use crate::ik::IkMode;
use crate::info::count;
use crate::skin::VertexErrors;
use crate::view::skeleton::BoneStyle;

/// The open-model panel: a path field (file or `builtin:` name), the built-ins, the error of
/// the last attempt.
pub fn model(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Model");
    ui.label(RichText::new(&state.character.scene.name).strong());
    let scene = &state.character.scene;
    ui.label(format!(
        "{} · {} · {} · {}",
        state.joint_summary(),
        count(scene.vertex_count(), "vertex", "vertices"),
        count(scene.draws.len(), "draw", "draws"),
        count(scene.animations.len(), "animation", "animations")
    ));
    open_field(ui, state);
    ui.horizontal_wrapped(|ui| {
        for b in Builtin::ALL {
            if ui.button(b.name()).clicked() {
                let _ = state.open(b.name());
            }
        }
    });
    #[cfg(not(target_arch = "wasm32"))]
    ui.label(RichText::new("or drop a file on the window").weak());
    #[cfg(target_arch = "wasm32")]
    ui.label(RichText::new("or drop files on the page, or pick them below it").weak());
    // The page reads dropped files, not paths: comparing is on the desktop.
    #[cfg(not(target_arch = "wasm32"))]
    compare_with(ui, state);
    error(ui, state);
}

/// The model's path and its Open button (on the desktop).
#[cfg(not(target_arch = "wasm32"))]
fn open_field(ui: &mut Ui, state: &mut ViewerState) {
    if let Some(path) = path_field(
        ui,
        &mut state.open_path,
        ".glb, .gltf, .rig.json or builtin:…",
        "Open",
    ) {
        let _ = state.open(&path);
    }
}

/// The page cannot read paths: a URL field instead (a model on this site, or on another whose
/// server allows cross-origin reads), fetched by the page, or a `builtin:` name.
#[cfg(target_arch = "wasm32")]
fn open_field(ui: &mut Ui, state: &mut ViewerState) {
    let (asked, at) = path_field_at(
        ui,
        &mut state.open_path,
        "URL of a .glb, .gltf, .rig.json, or builtin:…",
        "Open URL",
    );
    state.url_field_at = Some(at.center().into());
    if let Some(url) = asked {
        let url = url.trim();
        if url.starts_with("builtin:") {
            let _ = state.open(url);
        } else if !url.is_empty() {
            state.url_requested = Some(url.to_string());
        }
    }
}

/// A file dropped while a model is open (on the desktop window: a path; on the page: a model
/// read there): open it instead, or compare the model with it (a converted or re-exported
/// copy: its vertices where they can be compared, else its curves), or neither (Esc, a click
/// outside).
pub fn drop_prompt(ctx: &egui::Context, state: &mut ViewerState) {
    let label = match (&state.dropped, &state.dropped_model) {
        (Some(path), _) => path.clone(),
        (None, Some((label, _))) => label.clone(),
        (None, None) => return,
    };
    let name = crate::io::file_label(std::path::Path::new(&label));
    let refusal = state.compare_refusal().or(state
        .dropped_model
        .as_ref()
        .map(|_| "the page compares curves only"));
    let modal = egui::Modal::new(egui::Id::unique("skinview dropped file")).show(ctx, |ui| {
        ui.heading(format!("Dropped: {name}"));
        ui.label(format!(
            "{} is open. What should {name} do?",
            state.character.scene.name
        ));
        let mut choice = None;
        ui.horizontal_wrapped(|ui| {
            let open = ui.button("Open it");
            let compare = ui.button("Compare with it").on_hover_text(match refusal {
                None => "beside the model, coloured by the distance between the two",
                Some(_) => "its curves over the model's (its vertices cannot be compared here)",
            });
            let motion = ui
                .button("Play its motion here")
                .on_hover_text("its clips retargeted onto the model (the Motion panel)");
            state.prompt_buttons_at = Some([
                open.rect.center().into(),
                compare.rect.center().into(),
                motion.rect.center().into(),
            ]);
            for (button, c) in [
                (open, DropChoice::Open),
                (compare, DropChoice::Compare),
                (motion, DropChoice::Motion),
            ] {
                if button.clicked() {
                    choice = Some(c);
                }
            }
            if ui.button("Cancel").clicked() {
                state.dropped = None;
                state.dropped_model = None;
            }
        });
        choice
    });
    let choice = match modal.inner {
        None if modal.should_close() => {
            state.dropped = None;
            state.dropped_model = None;
            return;
        }
        None => return,
        Some(c) => c,
    };
    // A desktop path compared is read by the comparison; any other is read now.
    if let (DropChoice::Compare, Some(path)) = (choice, &state.dropped) {
        let path = path.clone();
        state.dropped = None;
        state.compare_path.clone_from(&path);
        let _ = state.compare_with(&path);
        return;
    }
    let (label, loaded) = match (state.dropped.take(), state.dropped_model.take()) {
        (Some(path), _) => {
            let loaded = crate::io::ModelSource::parse(&path).and_then(|s| s.load());
            (path, loaded)
        }
        (None, Some((label, model))) => (label, Ok(model)),
        (None, None) => return,
    };
    match (choice, loaded) {
        (DropChoice::Open, loaded) => {
            if state.open_loaded(loaded, &label).is_ok() {
                state.open_path = label;
            }
        }
        (DropChoice::Compare, Ok(model)) => {
            let file = super::curves::CurvesFile::new(&label, model.scene, &state.character.scene);
            state.curves_file = Some(file);
            state.curves.open = true;
        }
        (DropChoice::Motion, Ok(model)) if model.scene.animations.is_empty() => {
            state.error = Some(format!("{label}: no animation to play on the model"));
        }
        (DropChoice::Motion, Ok(model)) => {
            let _ = state.use_motion(&label, model.scene);
        }
        (_, Err(e)) => state.error = Some(format!("{label}: {e}")),
    }
}

/// What a dropped file is for.
#[derive(Clone, Copy)]
enum DropChoice {
    Open,
    Compare,
    Motion,
}

/// "Compare with…": a second file of the same character, side by side with the model and
/// coloured by the distance between them; the figures of the frame and the largest so far.
#[cfg(not(target_arch = "wasm32"))]
fn compare_with(ui: &mut Ui, state: &mut ViewerState) {
    if let Some(path) = path_field(
        ui,
        &mut state.compare_path,
        "another file of this character",
        "Compare with",
    ) {
        let _ = state.compare_with(&path);
    }
    if let (None, Some(f)) = (&state.other, &state.curves_file) {
        let why = state
            .compare_refusal()
            .unwrap_or("its vertices are not compared");
        ui.label(format!(
            "B: {} — its curves, dashed in the curves panel; vertices not compared: {why}",
            f.label
        ));
        if ui.small_button("stop").clicked() {
            state.stop_comparing();
        }
        return;
    }
    let Some(o) = &state.other else { return };
    let diagonal = o.diagonal().max(f64::MIN_POSITIVE);
    let unmatched = o.pairing().map_or(0, |p| {
        p.matching.stats.a_unmatched + p.matching.stats.b_unmatched
    });
    let mut stop = false;
    ui.horizontal_wrapped(|ui| {
        let measured = match o.unpaired() {
            Some((a, b)) => format!(
                "no vertex pairs with the model's ({a} of A's and {b} of B's unmatched): \
                 another character, or placed elsewhere? Nothing is measured"
            ),
            None => format!(
                "|A − B| now {:.2e}, largest so far {:.2e} of the diagonal{}",
                o.now.max / diagonal,
                o.largest / diagonal,
                match unmatched {
                    0 => String::new(),
                    n => format!("; {n} vertices unmatched (grey)"),
                }
            ),
        };
        ui.label(format!("B: {} — {measured}", o.label));
        stop = ui.small_button("stop").clicked();
    });
    if state.mode != ViewMode::AgainstFile && ui.small_button("show A | B").clicked() {
        state.mode = ViewMode::AgainstFile;
    }
    if stop {
        state.stop_comparing();
    }
}

/// A path field and its button: the path when the button is clicked or Enter pressed in it.
#[cfg(not(target_arch = "wasm32"))]
fn path_field(ui: &mut Ui, text: &mut String, hint: &str, button: &str) -> Option<String> {
    path_field_at(ui, text, hint, button).0
}

/// [`path_field`], and where the field is (the web page reports it, for scripts to click).
fn path_field_at(
    ui: &mut Ui,
    text: &mut String,
    hint: &str,
    button: &str,
) -> (Option<String>, egui::Rect) {
    ui.horizontal_wrapped(|ui| {
        let field = ui.add(
            egui::TextEdit::singleline(text)
                .hint_text(hint)
                .desired_width(170.0),
        );
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        let asked = (ui.button(button).clicked() || enter).then(|| text.clone());
        (asked, field.rect)
    })
    .inner
}

/// The last error, in red, with a button to dismiss it.
pub fn error(ui: &mut Ui, state: &mut ViewerState) {
    if let Some(e) = state.error.clone() {
        ui.horizontal_wrapped(|ui| {
            ui.colored_label(Color32::from_rgb(255, 110, 90), format!("Error: {e}"));
            if ui.small_button("dismiss").clicked() {
                state.error = None;
            }
        });
    }
}

/// The joint hierarchy as a tree; clicking a node selects it (the viewport highlights it).
pub fn hierarchy(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Hierarchy");
    ui.horizontal_wrapped(|ui| {
        ui.label("filter");
        ui.add(
            egui::TextEdit::singleline(&mut state.hierarchy_filter)
                .hint_text("bone name or node N")
                .desired_width(150.0),
        );
    });
    let filter = state.hierarchy_filter.trim().to_lowercase();
    // A selection made elsewhere: open its ancestors, and scroll to it below.
    let reveal = state
        .view
        .selected_node
        .filter(|&n| state.hierarchy_revealed != Some(n));
    if let Some(n) = reveal {
        let mut up = state.character.scene.nodes.get(n).and_then(|x| x.parent);
        while let Some(p) = up {
            let id = tree_id(p);
            let mut open = egui::collapsing_header::CollapsingState::load_with_default_open(
                ui.ctx(),
                id,
                false,
            );
            open.set_open(true);
            open.store(ui.ctx());
            up = state.character.scene.nodes.get(p).and_then(|x| x.parent);
        }
    }
    state.hierarchy_revealed = state.view.selected_node;
    egui::ScrollArea::vertical()
        .id_salt("hierarchy")
        .max_height(260.0)
        .show(ui, |ui| {
            if !filter.is_empty() {
                filtered_nodes(ui, state, &filter);
                return;
            }
            let roots: Vec<usize> = (0..state.character.scene.nodes.len())
                .filter(|&n| state.character.scene.nodes[n].parent.is_none())
                .collect();
            for r in roots {
                node_tree(ui, state, r, 0, reveal);
            }
        });
}

/// The hierarchy's collapsing state of node `n`: one id whatever the depth it is drawn at, so
/// revealing a selection can open it.
fn tree_id(n: usize) -> egui::Id {
    egui::Id::unique(("skinview hierarchy node", n))
}

/// The hierarchy filtered: every node whose label holds `filter` (lower case), flat, with
/// its parent's label.
fn filtered_nodes(ui: &mut Ui, state: &mut ViewerState, filter: &str) {
    let scene = &state.character.scene;
    let hits: Vec<(usize, String, String)> = (0..scene.nodes.len())
        .map(|n| (n, state.node_label(n)))
        .filter(|(_, l)| l.to_lowercase().contains(filter))
        .map(|(n, l)| {
            let parent = scene.nodes[n]
                .parent
                .map_or("root".into(), |p| state.node_label(p));
            (n, l, parent)
        })
        .collect();
    if hits.is_empty() {
        ui.label(RichText::new("no node matches").weak());
    }
    for (n, label, parent) in hits {
        let selected = state.view.selected_node == Some(n);
        if ui
            .selectable_label(selected, label)
            .on_hover_text(format!("child of {parent}"))
            .clicked()
        {
            state.select((!selected).then_some(n));
        }
    }
}

/// The selected bone: its local and model transforms (translation, rotation as a quaternion
/// and as XYZ Euler degrees, scale), its inverse bind matrix per skin, and the vertices it
/// moves with its largest weight (Blender's bone properties, Babylon's inspector).
pub fn bone_inspector(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Bone");
    let Some(node) = state.view.selected_node else {
        ui.label(RichText::new("select a bone in the viewport or the hierarchy").weak());
        return;
    };
    ui.label(RichText::new(state.node_label(node)).strong());
    let c = &state.character;
    let local = c.frame.pose.locals.get(node).map(|t| t.to_mat4());
    let local = c.scene.nodes[node].matrix.or(local);
    let model = c.frame.model_from_node.get(node).copied();
    let mut rows: Vec<(String, String)> = Vec::new();
    for (name, m) in [("local", local), ("model", model)] {
        let Some(m) = m else { continue };
        let p = crate::info::TransformParts::of(&m);
        let v3 = |v: Vec3| format!("{:.4} {:.4} {:.4}", v.x, v.y, v.z);
        let q = p.rotation;
        let e = p.euler_deg;
        rows.extend([
            (format!("{name} translation"), v3(p.translation)),
            (
                format!("{name} rotation"),
                format!("{:.4} {:.4} {:.4} {:.4} (xyzw)", q.x, q.y, q.z, q.w),
            ),
            (
                format!("{name} Euler XYZ °"),
                format!("{:.2} {:.2} {:.2}", e.x, e.y, e.z),
            ),
            (format!("{name} scale"), v3(p.scale)),
        ]);
    }
    facts(ui, "bone transforms", &rows);
    rest_and_bind(ui, state, node);
    let Some(b) = state.selected_influence().cloned() else {
        return;
    };
    ui.label(format!(
        "moves {} vertices, largest weight {:.4}",
        b.vertices, b.largest_weight
    ));
    if b.inverse_binds.is_empty() {
        ui.label(RichText::new("not a joint of any skin").weak());
    }
    // Once per distinct matrix: a split repeats each joint's in every submesh's skin.
    let mut shown: Vec<(Vec<usize>, glam::Mat4)> = Vec::new();
    for &(skin, m) in &b.inverse_binds {
        match shown.iter_mut().find(|(_, x)| *x == m) {
            Some((skins, _)) => skins.push(skin),
            None => shown.push((vec![skin], m)),
        }
    }
    for (skins, m) in &shown {
        let which = match skins.as_slice() {
            [one] => format!("skin {one}"),
            many if many.len() == b.inverse_binds.len() => format!("all {} skins", many.len()),
            many => format!(
                "skins {}",
                many.iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        ui.label(format!("inverse bind matrix ({which}), rows:"));
        let rows = m.transpose();
        // Four decimals where the panel is wide; narrower, three in a smaller face, so the
        // columns stay whole.
        let wide = ui.available_width() >= FACTS_TABLE_MIN_PX;
        for r in [rows.x_axis, rows.y_axis, rows.z_axis, rows.w_axis] {
            let text = match wide {
                true => format!("{:>9.4} {:>9.4} {:>9.4} {:>9.4}", r.x, r.y, r.z, r.w),
                false => format!("{:>7.3} {:>7.3} {:>7.3} {:>7.3}", r.x, r.y, r.z, r.w),
            };
            ui.label(
                RichText::new(text)
                    .monospace()
                    .size(if wide { 14.0 } else { 11.0 }),
            );
        }
    }
}

/// A panel this wide (points) shows facts as a two-column table; narrower, each value goes
/// under its name (a side panel a fifth of a 1280-px window is 256 wide).
const FACTS_TABLE_MIN_PX: f32 = 320.0;

/// A combo box after its name: on one row when both fit, else the box on the next row, as wide
/// as the panel allows, its text cut short. (egui's own label, beside the box, is squeezed to a
/// letter a line in a narrow panel.) The box's accessible name is the label.
fn labelled_combo(ui: &mut Ui, label: &str, selected: String, menu: impl FnOnce(&mut Ui)) {
    ui.horizontal_wrapped(|ui| {
        let name = ui.label(label);
        // What is left of this row (`available_width` is the whole row's in a wrapping
        // layout).
        if ui.available_size_before_wrap().x < COMBO_MIN_PX {
            ui.end_row();
        }
        egui::ComboBox::from_id_salt(label)
            .selected_text(selected)
            .width(ui.available_size_before_wrap().x.min(COMBO_MAX_PX))
            .truncate()
            .show_ui(ui, menu)
            .response
            .labelled_by(name.id);
    });
}

/// A slider and its name: egui's one row (slider, value, name) where the row has room for
/// the name, else the name on a row of its own above the slider. (egui puts the name after the
/// value, where it cannot wrap: a narrow panel cut it at its edge.) The slider's accessible
/// name is the name either way.
fn named_slider(ui: &mut Ui, name: &str, slider: egui::Slider<'_>) -> egui::Response {
    let name_px = label_px(ui, name);
    let spacing = ui.spacing();
    // The slider, its value box and the two gaps before the name.
    let row_px = spacing.slider_width + spacing.interact_size.x + 2.0 * spacing.item_spacing.x;
    if ui.available_size_before_wrap().x >= row_px + name_px {
        return ui.add(slider.text(name));
    }
    let label = ui.label(name);
    // In a wrapping row the slider goes under its name; a column stacks them anyway.
    ui.end_row();
    ui.add(slider).labelled_by(label.id)
}

/// How wide `text` is as a label on one line (points).
fn label_px(ui: &Ui, text: &str) -> f32 {
    egui::WidgetText::from(text)
        .into_galley(
            ui,
            Some(egui::TextWrapMode::Extend),
            f32::INFINITY,
            egui::TextStyle::Body,
        )
        .size()
        .x
}

/// A combo box's narrowest width beside its label (points): a short clip or bone name.
const COMBO_MIN_PX: f32 = 90.0;
/// A combo box's widest (points): the longest names of the shared models fit.
const COMBO_MAX_PX: f32 = 200.0;

/// Named values: a striped two-column table where the panel is wide enough, else each name
/// (small) over its value, so no number is cut by the panel's edge.
fn facts(ui: &mut Ui, id: &str, rows: &[(String, String)]) {
    if ui.available_width() >= FACTS_TABLE_MIN_PX {
        egui::Grid::new(id).striped(true).show(ui, |ui| {
            for (name, value) in rows {
                ui.label(name);
                ui.label(value);
                ui.end_row();
            }
        });
        return;
    }
    for (name, value) in rows {
        ui.label(RichText::new(name).small().weak());
        ui.label(value);
    }
}

/// The selected joint in the rest pose (its node's own transforms) and the bind pose (its
/// inverse bind matrix), model space, and how far apart: metres between the joints, degrees
/// between their rotations, and the furthest its bind matrix moves one of its vertices at rest
/// (red past `check`'s threshold).
fn rest_and_bind(ui: &mut Ui, state: &ViewerState, node: usize) {
    let Some(poses) = state.poses.as_ref() else {
        return;
    };
    let (Some(rest), Some(bind), Some(true)) = (
        poses.rest.get(node),
        poses.bind.get(node),
        poses.bound.get(node).copied(),
    ) else {
        return;
    };
    let (r, b) = (
        crate::info::TransformParts::of(rest),
        crate::info::TransformParts::of(bind),
    );
    let mut rows: Vec<(String, String)> = Vec::new();
    for (name, p) in [("rest", &r), ("bind", &b)] {
        let (t, e) = (p.translation, p.euler_deg);
        rows.push((
            format!("{name} position"),
            format!("{:.4} {:.4} {:.4}", t.x, t.y, t.z),
        ));
        rows.push((
            format!("{name} Euler XYZ °"),
            format!("{:.2} {:.2} {:.2}", e.x, e.y, e.z),
        ));
    }
    facts(ui, "rest and bind", &rows);
    let apart_m = (r.translation - b.translation).length();
    let apart_deg = r.rotation.angle_between(b.rotation).to_degrees();
    let diagonal = f64::from((state.bounds.1 - state.bounds.0).length());
    let gap = poses.gap_m.get(node).copied().unwrap_or(0.0);
    let text = format!(
        "bind − rest: {apart_m:.4} m, {apart_deg:.2}°; moves its vertices up to {gap:.2e} m at rest"
    );
    match poses.differs(node, diagonal) {
        true => ui
            .colored_label(Color32::from_rgb(255, 110, 90), text)
            .on_hover_text("bind pose ≠ rest pose, as `skinview check` reports"),
        false => ui.label(text),
    };
}

/// Deepest hierarchy level drawn as a tree; nodes deeper than this are listed without their
/// subtrees (a pathological file must not overflow the UI's stack).
const MAX_TREE_DEPTH: usize = 64;

/// Node `n` and (open) its subtree; `reveal`: the node to scroll into view.
fn node_tree(ui: &mut Ui, state: &mut ViewerState, n: usize, depth: usize, reveal: Option<usize>) {
    let label = state.node_label(n);
    let selected = state.view.selected_node == Some(n);
    let row = |ui: &mut Ui, state: &mut ViewerState| {
        let r = ui.selectable_label(selected, label.as_str());
        if reveal == Some(n) {
            r.scroll_to_me(Some(egui::Align::Center));
        }
        if r.clicked() {
            state.select((!selected).then_some(n));
        }
    };
    let child_count = state.children.get(n).map_or(0, Vec::len);
    if child_count == 0 || depth >= MAX_TREE_DEPTH {
        row(ui, state);
        return;
    }
    egui::collapsing_header::CollapsingState::load_with_default_open(
        ui.ctx(),
        tree_id(n),
        depth < 3,
    )
    .show_header(ui, |ui| row(ui, state))
    .body(|ui| {
        for k in 0..child_count {
            if let Some(&c) = state.children.get(n).and_then(|v| v.get(k)) {
                node_tree(ui, state, c, depth + 1, reveal);
            }
        }
    });
}

/// Clip choice, play/pause, the timeline with its key markers, speed and loop.
pub fn animation(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Animation");
    if !state.has_clock() {
        // Nothing plays: no clock, no Play button, no timeline.
        ui.label(RichText::new("no animation in this file: the rest pose").weak());
        ui.checkbox(&mut state.curves.open, "curves")
            .on_hover_text("the curves panel (C): the selected bone's curves and the dope sheet");
        return;
    }
    // A glTF model keeps its clip choice on the stage (where it goes for IK).
    if state.stage().is_none() || state.model.rig.is_none() {
        let names: Vec<String> = state
            .character
            .scene
            .animations
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{i}: {}", a.name.as_deref().unwrap_or("(unnamed)")))
            .collect();
        let current = state
            .playback
            .anim
            .and_then(|a| names.get(a).cloned())
            .unwrap_or_else(|| "rest pose".into());
        let mut choice = state.playback.anim;
        labelled_combo(ui, "clip", current, |ui| {
            ui.selectable_value(&mut choice, None, "rest pose");
            for (i, n) in names.iter().enumerate() {
                ui.selectable_value(&mut choice, Some(i), n);
            }
        });
        if choice != state.playback.anim {
            state.set_anim(choice);
        }
    }
    ui.horizontal_wrapped(|ui| {
        let label = if state.playback.playing {
            "Pause"
        } else {
            "Play"
        };
        if ui.button(label).clicked() {
            state.toggle_play();
        }
        ui.checkbox(&mut state.playback.looping, "loop");
        ui.checkbox(&mut state.curves.open, "curves")
            .on_hover_text("the curves panel (C): the selected bone's curves and the dope sheet");
        // A slider on a row of its own: as one widget it would not wrap.
        ui.end_row();
        named_slider(
            ui,
            "speed",
            egui::Slider::new(&mut state.playback.speed, 0.0..=4.0).max_decimals(2),
        );
    });
    timeline(ui, state);
}

/// The timeline slider's name.
const TIMELINE_NAME: &str = "time (s)";

/// The scrubbable timeline: a slider as wide as the panel over the clip, a tick per key time
/// (the selected bone's keys taller and brighter), the current time and frame.
pub fn timeline(ui: &mut Ui, state: &mut ViewerState) {
    // Native rigs keep time running past their clips (layers loop on their own): the range
    // covers the current time, so the slider never clamps (and reports) it.
    let d = state.duration_s();
    let range = d.max(state.playback.time_s).max(1e-3);
    let mut t = state.playback.time_s;
    // A share of the panel, not all of it less the label: content as wide as the panel
    // would widen a resizable panel frame after frame. Scoped: later sliders keep theirs.
    // Its name keeps its room beside it in a narrow panel.
    let room = ui.available_width();
    let name_px = label_px(ui, TIMELINE_NAME) + ui.spacing().item_spacing.x;
    let width = (room * 0.7).min(room - name_px).max(60.0);
    let response = ui
        .scope(|ui| {
            ui.spacing_mut().slider_width = width;
            ui.add(
                egui::Slider::new(&mut t, 0.0..=range)
                    .show_value(false)
                    .text(TIMELINE_NAME),
            )
        })
        .inner;
    if response.changed() {
        state.scrub(t);
        state.playback.playing = false;
    }
    // Key markers under the slider's rail.
    let rail = response.rect;
    let own = state.selected_key_times();
    let painter = ui.painter();
    let y = rail.bottom() + 1.0;
    let x_of = |k: f32| rail.left() + width * (k / range);
    if d > 0.0 {
        for &k in state.key_times.iter().filter(|&&k| k <= d) {
            painter.line_segment(
                [egui::pos2(x_of(k), y), egui::pos2(x_of(k), y + 4.0)],
                egui::Stroke::new(1.0, Color32::from_rgb(150, 120, 60)),
            );
        }
        for &k in own.iter().filter(|&&k| k <= d) {
            painter.line_segment(
                [egui::pos2(x_of(k), y - 2.0), egui::pos2(x_of(k), y + 7.0)],
                egui::Stroke::new(2.0, Color32::from_rgb(255, 200, 60)),
            );
        }
    }
    ui.add_space(8.0);
    let frame = (state.playback.time_s / super::playback::STEP_S).round() as i64;
    let keys = match state.view.selected_node {
        Some(n) if !own.is_empty() => format!(", {} keys of {}", own.len(), state.node_label(n)),
        _ => String::new(),
    };
    ui.label(format!(
        "{:.3} s of {d:.3} s, frame {frame} at 30 fps{keys}",
        state.playback.time_s
    ));
}

/// Layers of a native rig: motion, mask, weight, and the cross-fade of the first two. Weights
/// and fade times apply in place; motions, masks and the layer list rebuild the character once,
/// at the end of the frame.
pub fn layers(ui: &mut Ui, state: &mut ViewerState) {
    // A native rig's layers (a glTF model on the stage for IK plays its one clip).
    let Some(stage) = state
        .setup
        .stage_spec()
        .filter(|_| state.model.rig.is_some())
    else {
        return;
    };
    ui.heading("Layers");
    let motions: Vec<MotionRef> = state
        .character
        .scene
        .animations
        .iter()
        .enumerate()
        .map(|(i, _)| super::state::motion_ref(&state.character.scene, i))
        .collect();
    let mut edited = stage.layers.clone();
    let mut rebuild = false;
    let mut weights = Vec::new();
    let mut remove = None;
    for (li, layer) in edited.iter_mut().enumerate() {
        ui.horizontal_wrapped(|ui| {
            let name = ui.label(format!("{li}"));
            egui::ComboBox::from_id_salt(("layer motion", li))
                .selected_text(layer.motion.to_string())
                .width(70.0)
                .show_ui(ui, |ui| {
                    for m in &motions {
                        rebuild |= ui
                            .selectable_value(&mut layer.motion, m.clone(), m.to_string())
                            .changed();
                    }
                })
                .response
                .labelled_by(name.id);
            // The mask is edited in a buffer kept across frames and applied on Enter or
            // when the field loses focus.
            let id = ui.make_persistent_id(("layer mask", li));
            let current = match &layer.mask {
                // Empty shows the hint ("all / bone / !bone").
                MaskSpec::All => String::new(),
                mask => mask.to_string(),
            };
            let mut text: String = ui.data_mut(|d| d.get_temp(id)).unwrap_or(current.clone());
            let field = ui.add(
                egui::TextEdit::singleline(&mut text)
                    .hint_text("all / bone / !bone")
                    .desired_width(70.0),
            );
            if field.lost_focus() {
                // Text that is no mask ("!" alone) keeps the layer's mask.
                let new = text
                    .parse::<MaskSpec>()
                    .unwrap_or_else(|_| layer.mask.clone());
                if new != layer.mask {
                    layer.mask = new;
                    rebuild = true;
                }
                ui.data_mut(|d| d.remove::<String>(id));
            } else if field.has_focus() {
                ui.data_mut(|d| d.insert_temp(id, text));
            }
            let mut w = layer.weight;
            ui.end_row();
            if named_slider(ui, "w", egui::Slider::new(&mut w, 0.0..=1.0)).changed() {
                weights.push((li, w));
            }
            if ui.small_button("remove").clicked() {
                remove = Some(li);
            }
        });
    }
    let mut fade = stage.fade.is_some();
    let (mut start, mut duration) = stage
        .fade
        .map_or((0.5, 0.6), |f| (f.fade.start_s, f.fade.duration_s));
    let mut fade_changed = false;
    ui.horizontal_wrapped(|ui| {
        fade_changed |= ui.checkbox(&mut fade, "cross-fade layer 0 to 1").changed();
        fade_changed |= ui
            .add(egui::DragValue::new(&mut start).speed(0.05).prefix("at "))
            .changed();
        fade_changed |= ui
            .add(
                egui::DragValue::new(&mut duration)
                    .speed(0.05)
                    .prefix("over ")
                    .range(0.0..=60.0),
            )
            .changed();
    });
    let add = ui.button("add layer").clicked() && edited.len() < crate::character::MAX_LAYERS;
    for (li, w) in weights {
        state.set_layer_weight(li, w);
    }
    if fade_changed {
        state.set_fade(fade, start, duration);
    }
    if let Some(stage) = state.setup.stage_spec_mut() {
        if let Some(i) = remove {
            edited.remove(i);
            stage.fade = None;
            rebuild = true;
        }
        if add {
            edited.push(LayerDesc {
                motion: motions.first().cloned().unwrap_or(MotionRef::Index(0)),
                mask: MaskSpec::All,
                weight: 1.0,
            });
            rebuild = true;
        }
        if rebuild {
            // Weights set in place above are kept.
            for (e, l) in edited.iter_mut().zip(&stage.layers) {
                e.weight = l.weight;
            }
            stage.layers = edited;
            state.request_rebuild();
        }
    }
}

/// IK: the effector's end bone and chain, the target (dragged in the viewport), the mode,
/// joint limits, and what the solver did this frame.
pub fn ik(ui: &mut Ui, state: &mut ViewerState) {
    if state.setup.stage_spec().is_none() {
        ik_on_a_clip(ui, state);
        return;
    }
    ui.heading("IK");
    let bones = state.ik_bone_choices();
    let goal = state.effector_goal();
    let Some(stage) = state.setup.stage_spec_mut() else {
        return;
    };
    let mut changed = false;
    let mut on = !stage.ik.is_empty();
    changed |= ui.checkbox(&mut on, "effector").changed();
    if on && stage.ik.is_empty() {
        stage.ik = goal.into_iter().collect();
    } else if !on {
        stage.ik.clear();
        stage.orbit = None;
        if state.model.rig.is_none() {
            // A glTF model went to the stage for IK alone: back to its clip.
            state.setup.motion = state.playback.anim.map_or(Motion::Rest, Motion::Clip);
            state.request_rebuild();
            return;
        }
    }
    let chain_max = stage
        .ik
        .first()
        .and_then(|g| state.character.scene.find_node(&g.end_bone).ok())
        .map_or(1, |end| state.ik_chain_max(end).max(1));
    let Some(stage) = state.setup.stage_spec_mut() else {
        return;
    };
    if let Some(goal) = stage.ik.first_mut() {
        goal.chain_length = goal.chain_length.clamp(1, chain_max);
        labelled_combo(ui, "end bone", goal.end_bone.clone(), |ui| {
            for b in &bones {
                changed |= ui
                    .selectable_value(&mut goal.end_bone, b.clone(), b)
                    .changed();
            }
        });
        ui.horizontal_wrapped(|ui| {
            let label = ui.label("joint filter");
            ui.add(
                egui::TextEdit::singleline(&mut state.ik_bone_filter)
                    .hint_text("joint name")
                    .desired_width(120.0),
            )
            .labelled_by(label.id);
        });
        changed |= named_slider(
            ui,
            "joints turn",
            egui::Slider::new(&mut goal.chain_length, 1..=chain_max),
        )
        .on_hover_text(
            "how many joints the solver turns: the end bone and its parents, or its \
             parents alone when the end bone has no length (a glTF joint, whose tip is \
             where it turns)",
        )
        .changed();
        ui.horizontal_wrapped(|ui| {
            ui.label("target");
            let mut t = goal.target_m;
            let mut moved = false;
            for (c, axis) in [(&mut t.x, "x"), (&mut t.y, "y"), (&mut t.z, "z")] {
                let label = ui.label(axis);
                moved |= ui
                    .add(egui::DragValue::new(c).speed(0.01))
                    .labelled_by(label.id)
                    .changed();
            }
            if moved {
                goal.target_m = t;
                stage.orbit = None;
            }
        });
        let mode = &mut stage.ik_settings.mode;
        ui.horizontal_wrapped(|ui| {
            changed |= ui
                .radio_value(mode, IkMode::Incremental, "incremental")
                .changed();
            changed |= ui
                .radio_value(mode, IkMode::ReferenceBased, "reference-based")
                .changed();
        });
        ui.horizontal_wrapped(|ui| {
            changed |= ui.checkbox(&mut stage.ik_limits, "joint limits").changed();
            ui.checkbox(&mut state.show_limits, "show limits and chains")
                .on_hover_text(
                    "each limited joint's ZYX box as arcs (red while an angle sits on a \
                     bound), the effector chains with their weights (L)",
                );
        });
        let mut circles = stage.orbit.is_some();
        if ui.checkbox(&mut circles, "target circles").changed() {
            changed = true;
            let centre_m = stage.ik.first().map_or(Vec3::ZERO, |g| g.target_m);
            stage.orbit = circles.then(|| super::state::orbit_around(&state.model, centre_m));
        }
    }
    let target = stage.ik.first().map(|g| g.target_m);
    if changed {
        state.request_rebuild();
    } else if let Some(t) = target
        && state.ik_target() != Some(t)
        && state.stage().is_none_or(|s| s.orbit.is_none())
    {
        state.set_ik_target(t);
    }
    if state.character.ik.is_some() {
        let r = &state.character.ik_result;
        ui.label(format!(
            "reached {} · residual {} · {} sweeps",
            if r.reached { "yes" } else { "no" },
            r.residual_m
                .first()
                .map_or("-".into(), |m| format!("{:.1} mm", m * 1000.0)),
            r.iterations_used
        ));
        ui.label(RichText::new("drag the yellow target in the viewport").weak());
    }
}

/// The IK panel of a model playing a clip (a glTF model): ticking "effector" moves it onto the
/// animation stage with its clip as the one layer and an effector on the selected joint (else
/// its deepest; the end bone and chain then chosen in the IK panel), joint limits off: a glTF
/// joint has none. The clip stays chosen in the Animation panel.
fn ik_on_a_clip(ui: &mut Ui, state: &mut ViewerState) {
    if state.character.scene.skins.is_empty() {
        return;
    }
    ui.heading("IK");
    let mut on = false;
    if !ui.checkbox(&mut on, "effector").changed() || !on {
        return;
    }
    let motion = state
        .playback
        .anim
        .map(|a| super::state::motion_ref(&state.character.scene, a));
    let goal = state.effector_goal();
    state.setup.motion = Motion::Stage(CharacterSpec {
        ik: goal.into_iter().collect(),
        ik_limits: false,
        links: false,
        ..CharacterSpec::single(motion)
    });
    state.request_rebuild();
}

/// Morph targets: every mesh node's targets with a slider each (Babylon's influence sliders,
/// Blender's shape keys) showing the weight as the clip plays; dragging one holds the target at
/// the slider's value until it is let go.
pub fn morph_targets(ui: &mut Ui, state: &mut ViewerState) {
    let scene = &state.character.scene;
    let nodes: Vec<(usize, usize)> = (0..scene.nodes.len())
        .filter_map(|n| {
            let count = scene.nodes[n]
                .mesh
                .and_then(|m| scene.meshes.get(m))
                .map_or(0, |m| m.morph_target_count());
            (count > 0).then_some((n, count))
        })
        .collect();
    if nodes.is_empty() {
        return;
    }
    ui.heading("Morph targets");
    for (node, count) in nodes {
        let label = state.node_label(node);
        egui::CollapsingHeader::new(format!("{label} ({count} targets)"))
            .id_salt(("morph", node))
            .default_open(count <= 8)
            .show(ui, |ui| {
                for target in 0..count {
                    morph_slider(ui, state, node, target);
                }
            });
    }
}

/// One target's slider: the current weight. A dragged value is held (it replaces the clip's)
/// while dragged when the clip plays, and until Play or "release" when paused, as Blender's
/// shape-key values and Babylon's influence sliders stay where they are put.
fn morph_slider(ui: &mut Ui, state: &mut ViewerState, node: usize, target: usize) {
    let weights = &state.character.frame.pose.morph_weights;
    let mut w = weights
        .get(node)
        .and_then(|w| w.get(target))
        .copied()
        .unwrap_or(0.0);
    let holding = state
        .character
        .morph_overrides()
        .iter()
        .any(|&(n, t, _)| (n, t) == (node, target));
    let (slider, release) = ui
        .horizontal_wrapped(|ui| {
            let slider = named_slider(
                ui,
                &format!("target {target}"),
                egui::Slider::new(&mut w, 0.0..=1.0),
            );
            let release = holding
                && ui
                    .small_button("release")
                    .on_hover_text("hand this weight back to the clip")
                    .clicked();
            (slider, release)
        })
        .inner;
    let held = if slider.dragged() || slider.changed() {
        Some(w)
    } else if release
        || (holding && state.clip_drives_morphs() && !slider.is_pointer_button_down_on())
    {
        None
    } else {
        return;
    };
    if let Err(e) = state.character.set_morph_override(node, target, held) {
        state.error = Some(e.to_string());
    }
}

/// Bone links, the influence limit, and the view mode.
pub fn deformation(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Deformation");
    let mut rebuild = false;
    if state.model.rig.is_some()
        && let Some(stage) = state.setup.stage_spec_mut()
    {
        rebuild |= ui.checkbox(&mut stage.links, "bone links").changed();
    }
    let mut limited = state.setup.max_influences.is_some();
    let mut k = state.setup.max_influences.unwrap_or(4);
    ui.horizontal_wrapped(|ui| {
        rebuild |= ui.checkbox(&mut limited, "influence limit").changed();
        ui.end_row();
        rebuild |= ui
            .add_enabled_ui(limited, |ui| {
                named_slider(ui, "K", egui::Slider::new(&mut k, 1..=8))
            })
            .inner
            .changed();
    });
    if rebuild {
        state.setup.max_influences = limited.then_some(k);
        state.request_rebuild();
    }
    if let Some(s) = &state.character.link_stats {
        ui.label(format!(
            "links moved weight on {} vertices; influences {} -> {}",
            s.vertices_changed, s.max_influences_before, s.max_influences_after
        ));
    }
    skinning(ui, state);
    palette(ui, state);
    ui.horizontal_wrapped(|ui| {
        ui.label("view");
        for m in ViewMode::ALL {
            ui.selectable_value(&mut state.mode, m, m.label());
        }
        if state.other.is_some() {
            ui.selectable_value(
                &mut state.mode,
                ViewMode::AgainstFile,
                ViewMode::AgainstFile.label(),
            );
        }
    });
    ui.horizontal_wrapped(|ui| {
        use crate::gpu::Skinning;
        ui.label("GPU skins in");
        ui.selectable_value(
            &mut state.gpu_skinning,
            Skinning::VertexShader,
            "vertex shader",
        )
        .on_hover_text("every pass that draws the mesh blends the palette itself");
        // One widget, not a child ui: a wrapping row moves it whole to the next line.
        let storage = state.palette_source() == crate::gpu::PaletteSource::Storage;
        let compute = state.gpu_skinning == Skinning::ComputePass;
        if ui
            .add_enabled(storage, egui::Button::selectable(compute, "compute pass"))
            .on_hover_text(
                "skinned once per frame into a buffer that a plain vertex shader draws (as \
                 Unreal and Godot do); storage palette only",
            )
            .clicked()
        {
            state.gpu_skinning = Skinning::ComputePass;
        }
    });
}

/// Largest K the slider offers (Ribeiro, "Mesh Skinning", §GPU Skinning: uniform arrays of 32–128
/// matrices).
const MAX_SLIDER_BONES: usize = 128;

/// The skinning blend and how normals follow it (both paths).
fn skinning(ui: &mut Ui, state: &mut ViewerState) {
    use crate::skin::{NormalMode, SkinMode};
    let mut options = state.setup.skin;
    ui.horizontal_wrapped(|ui| {
        ui.label("skinning");
        for (m, label) in [
            (SkinMode::Lbs, "LBS"),
            (SkinMode::Dqs, "DQS"),
            (SkinMode::Stitch, "stitch"),
        ] {
            ui.selectable_value(&mut options.mode, m, label)
                .on_hover_text(match m {
                    SkinMode::Lbs => "linear blend: blended matrices (collapses at twisted joints)",
                    SkinMode::Dqs => {
                        "dual quaternion: keeps volume at twisted joints (Kavan et al.)"
                    }
                    SkinMode::Stitch => "each vertex follows its largest-weight bone alone",
                });
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("normals");
        ui.selectable_value(&mut options.normals, NormalMode::Exact, "exact")
            .on_hover_text("inverse-transpose: right under non-uniform scale");
        ui.selectable_value(&mut options.normals, NormalMode::Blend3x3, "blend 3x3")
            .on_hover_text("the blended matrix itself, as most engines do");
        ui.checkbox(&mut options.renormalize, "renormalise")
            .on_hover_text("scale skinned normals back to unit length, tangents unit and perpendicular to them; off: both as the blend gives them");
    });
    if options != state.setup.skin {
        state.set_skin_options(options);
    }
}

/// The mesh partition (K slider, submesh colours) and the palette path (storage buffer or a
/// uniform array of K matrices per draw).
fn palette(ui: &mut Ui, state: &mut ViewerState) {
    ui.separator();
    ui.label("palette");
    if state.stage().is_some() {
        let how = if state.storage_palette {
            "storage buffer"
        } else {
            "uniform array (this adapter has no vertex-stage storage buffers)"
        };
        let why = match state.model.rig {
            Some(_) => "native rigs are drawn whole",
            None => "with an IK effector the model is drawn whole",
        };
        ui.label(RichText::new(format!("{how}; {why}")).weak());
        return;
    }
    let mut p = state
        .setup
        .split
        .unwrap_or_else(super::state::default_split);
    let mut split = state.setup.split.is_some();
    let mut k = p.max_bones;
    let mut changed = false;
    ui.horizontal_wrapped(|ui| {
        changed |= ui
            .add_enabled(
                state.storage_palette,
                egui::Checkbox::new(&mut split, "split into submeshes"),
            )
            .changed();
        ui.end_row();
        changed |= ui
            .add_enabled_ui(split, |ui| {
                named_slider(
                    ui,
                    "K bones",
                    egui::Slider::new(&mut k, crate::partition::MIN_BONES..=MAX_SLIDER_BONES),
                )
            })
            .inner
            .changed();
    });
    ui.horizontal_wrapped(|ui| {
        changed |= ui
            .add_enabled(
                split && state.storage_palette,
                egui::Checkbox::new(
                    &mut p.uniform_palette,
                    "uniform palette (K matrices per draw)",
                ),
            )
            .changed();
        changed |= ui
            .add_enabled(
                split,
                egui::Checkbox::new(&mut p.color_submeshes, "colour by submesh"),
            )
            .changed();
    });
    if changed {
        p.max_bones = k;
        state.setup.split = split.then_some(p);
        state.request_rebuild();
    }
    if let Some(s) = &state.character.split {
        ui.label(format!(
            "{} submeshes (lower bound {}), vertices {} -> {}, {} influences dropped",
            s.submeshes, s.lower_bound, s.vertices_in, s.vertices_out, s.dropped_influences
        ));
    }
    if state.setup.split.is_some_and(|s| s.uniform_palette) {
        ui.label(
            RichText::new(
                "uniform palette: live comparison and picking read the draw's own vertex stage \
                 (the draw-path capture)",
            )
            .weak(),
        );
    }
}

/// Colour mode, overlays, and the picked vertex's influences.
pub fn weights(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Weights & overlays");
    let drawn = state.surface_colours();
    // Wrapped: the row must not widen the panel (the viewport keeps its width).
    ui.horizontal_wrapped(|ui| {
        // Lit: what the surface shows now; submesh colours come with a split.
        let split = state.setup.split.is_some();
        let offered = SurfaceColours::CHOSEN
            .into_iter()
            .filter(|&c| c != SurfaceColours::Submesh || split);
        for c in offered {
            if ui.selectable_label(drawn == c, c.label()).clicked() {
                state.choose_colours(c);
            }
        }
        if matches!(drawn, SurfaceColours::Error | SurfaceColours::Distance) {
            let _ = ui
                .selectable_label(true, drawn.label())
                .on_hover_text("the colours of this view (V): pick another to leave it");
        }
    });
    if state.view.color_mode == ColorMode::Weights {
        let name = state
            .view
            .selected_node
            .map_or("select a bone".into(), |n| state.node_label(n));
        ui.label(format!("weights of: {name}"));
    }
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut state.view.skeleton, "skeleton");
        ui.checkbox(&mut state.view.grid, "grid");
        ui.checkbox(&mut state.view.wireframe, "wireframe");
    });
    if state.view.skeleton {
        ui.horizontal_wrapped(|ui| {
            ui.label("bones:");
            for style in BoneStyle::ALL {
                ui.selectable_value(&mut state.view.bone_style, style, style.name());
            }
        });
        ui.checkbox(
            &mut state.view.hide_unweighted_bones,
            "hide bones that move no vertex",
        )
        .on_hover_text("control and end bones (Shift + K)");
    }
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut state.view.rest_pose, "rest pose")
            .on_hover_text("the nodes' own transforms as a ghost skeleton, with axes (R)");
        ui.checkbox(&mut state.view.bind_pose, "bind pose")
            .on_hover_text(
                "where the inverse bind matrices put the joints, with axes; red: bind ≠ rest (B)",
            );
        ui.checkbox(&mut state.trail.shown, "motion trail")
            .on_hover_text("the selected bone's path over the clip (T)");
    });
    match state.picked.clone() {
        Some(p) => {
            ui.label(format!(
                "vertex {} of draw {} at ({:.3}, {:.3}, {:.3})",
                p.vertex, p.draw, p.position.x, p.position.y, p.position.z
            ));
            egui::Grid::new("influences").striped(true).show(ui, |ui| {
                ui.label("bone");
                ui.label("weight");
                ui.end_row();
                for (node, w) in &p.influences {
                    if ui
                        .selectable_label(false, state.node_label(*node))
                        .clicked()
                    {
                        state.select(Some(*node));
                    }
                    ui.label(format!("{w:.4}"));
                    ui.end_row();
                }
            });
            if ui.small_button("clear pick").clicked() {
                state.picked = None;
            }
        }
        None => {
            ui.label(RichText::new("click the skin to pick a vertex").weak());
        }
    }
}

/// Stage times as a live plot, frame rate, counts.
pub fn performance(ui: &mut Ui, state: &ViewerState) {
    ui.heading("Performance");
    let s = &state.stats;
    let scene = &state.character.scene;
    ui.label(format!(
        "{:.0} fps · {:.2} ms/frame · {} · {} · {}",
        s.fps,
        s.frame_ms,
        count(scene.vertex_count(), "vertex", "vertices"),
        state.joint_summary(),
        count(scene.draws.len(), "draw", "draws")
    ));
    ui.label(format!(
        "GPU submit {:.2} ms · readback {:.2} ms (waits included)",
        s.submit_ms, s.readback_smoothed_ms
    ));
    // Only the stages that run for this model, each in its own colour; the legend is a row
    // under the plot, so it never covers a line.
    type Pick = fn(&crate::character::StageTimes) -> f64;
    let c = &state.character;
    let animated = !c.layers().is_empty();
    let series: Vec<(&str, Color32, Pick)> = [
        (
            "sample",
            Color32::from_rgb(90, 160, 255),
            animated,
            (|t| t.sample) as Pick,
        ),
        ("layer", Color32::from_rgb(120, 220, 140), animated, |t| {
            t.layer
        }),
        ("ik", Color32::from_rgb(255, 200, 60), c.ik.is_some(), |t| {
            t.ik
        }),
        (
            "links",
            Color32::from_rgb(230, 120, 230),
            c.links.is_some(),
            |t| t.links,
        ),
        ("palette", Color32::from_rgb(200, 200, 200), true, |t| {
            t.palette
        }),
        (
            "skin + normals",
            Color32::from_rgb(255, 120, 90),
            state.mode.needs_cpu(),
            |t| t.skin + t.normals,
        ),
    ]
    .into_iter()
    .filter(|s| s.2)
    .map(|(name, colour, _, pick)| (name, colour, pick))
    .collect();
    use super::plot_axes::{LABEL_PX, ladder_grid, ladder_label};
    egui_plot::Plot::new("stage times")
        .height(140.0)
        .x_grid_spacer(ladder_grid(LABEL_PX[0]))
        .y_grid_spacer(ladder_grid(LABEL_PX[1]))
        .x_axis_formatter(ladder_label)
        .y_axis_formatter(ladder_label)
        .include_y(0.0)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .show(ui, |plot| {
            for (name, colour, pick) in &series {
                let points: Vec<[f64; 2]> = s
                    .history
                    .iter()
                    .enumerate()
                    .map(|(i, t)| [i as f64, pick(t)])
                    .collect();
                plot.line(egui_plot::Line::new(*name, points).color(*colour));
            }
        });
    ui.horizontal_wrapped(|ui| {
        for (name, colour, _) in &series {
            ui.colored_label(*colour, format!("— {name}"));
        }
    });
    ui.label(RichText::new("µs per frame, last 240 frames").weak());
}

/// Characters the crowd button starts with.
const FIRST_CROWD: u32 = 64;

/// The crowd view: enter and leave it, halve or double it (`[`, `]`), and the frame's figures
/// (characters, in view, the CPU stage, the cull, the upload and its bytes a character, the
/// frame).
pub fn crowd(ui: &mut Ui, state: &mut ViewerState) {
    ui.heading("Crowd");
    let Some(n) = state.crowd else {
        let button = ui.add(egui::Button::new(format!("Show a crowd of {FIRST_CROWD}")).wrap());
        if button
            .on_hover_text("copies of the model on a grid, each cycling through its clips")
            .clicked()
        {
            state.crowd = Some(FIRST_CROWD);
            state.crowd_stats = None;
        }
        return;
    };
    ui.horizontal_wrapped(|ui| {
        if ui.button("÷2").on_hover_text("[").clicked() {
            state.crowd = Some(super::crowd::resized(n, false));
        }
        ui.label(format!("{n} characters"));
        if ui.button("×2").on_hover_text("]").clicked() {
            state.crowd = Some(super::crowd::resized(n, true));
        }
        if ui.button("One character").clicked() {
            state.crowd = None;
        }
    });
    ui.checkbox(&mut state.crowd_lod, "Animation level of detail")
        .on_hover_text(
            "while playing, characters small on screen are animated every 2nd or 4th frame, \
             those out of view every 8th",
        );
    let Some(s) = state.crowd_stats.filter(|s| s.characters == n as usize) else {
        ui.label(RichText::new("setting up…").weak());
        return;
    };
    let rows = [
        ("in view", format!("{} of {}", s.visible, s.characters)),
        ("animated", format!("{} of {}", s.animated, s.characters)),
        (
            "CPU stage",
            format!(
                "{:.2} ms on {}",
                s.stage_ms,
                count(s.threads, "thread", "threads")
            ),
        ),
        ("culling", format!("{:.2} ms", s.cull_ms)),
        (
            "upload",
            format!(
                "{:.1} KB in {}, {:.2} ms",
                s.upload_bytes as f64 / 1024.0,
                count(s.palette_writes as usize, "write", "writes"),
                s.upload_ms
            ),
        ),
        ("per character", format!("{:.0} B", s.bytes_per_character())),
        ("GPU", super::crowd::gpu_ms_text(state.crowd_gpu_ms)),
        ("frame", format!("{:.2} ms", state.stats.frame_ms)),
    ]
    .map(|(name, value)| (name.to_owned(), value));
    facts(ui, "crowd stats", &rows);
}

/// The status bar: the model, what plays, the selected bone and the colours shown; the live
/// comparison, the time, the palette and the adapter. It wraps rather than cut off.
pub fn status(ui: &mut Ui, state: &mut ViewerState, adapter: &str) {
    ui.horizontal_wrapped(|ui| {
        if ui
            .selectable_label(state.help, "?")
            .on_hover_text("the keys (?)")
            .clicked()
        {
            state.help = !state.help;
        }
        for (i, name) in ["left panel", "right panel"].into_iter().enumerate() {
            let open = state.side_panels[i];
            if ui
                .selectable_label(open, if i == 0 { "«" } else { "»" })
                .on_hover_text(format!("show or hide the {name} (H: both)"))
                .clicked()
            {
                state.side_panels[i] = !open;
            }
        }
        ui.label(RichText::new(&state.character.scene.name).strong());
        ui.label(state.motion_label());
        if let Some(n) = state.view.selected_node {
            ui.label(format!("bone {}", state.node_label(n)));
        }
        ui.label(format!("colours: {}", state.surface_colours().label()));
        ui.separator();
        match (state.mode.compares(), state.live) {
            (
                true,
                Some(LiveErrors {
                    errors:
                        VertexErrors {
                            max,
                            mean,
                            worst,
                            diagonal,
                        },
                    latency_frames,
                    source,
                }),
            ) => {
                let rel = max / diagonal;
                let ok = rel as f64 <= crate::compare::CPU_GPU_TOLERANCE_REL;
                ui.colored_label(
                    if ok {
                        Color32::from_rgb(120, 210, 120)
                    } else {
                        Color32::from_rgb(255, 110, 90)
                    },
                    format!(
                        "|GPU - CPU| max {max:.2e} ({rel:.1e} of diagonal) · mean {mean:.2e} · \
                         worst vertex {} of draw {} · {} late · GPU side from {}",
                        worst.1,
                        worst.0,
                        count(latency_frames as usize, "frame", "frames"),
                        source.describe()
                    ),
                );
            }
            (true, None) => {
                ui.label("comparing…");
            }
            _ => {
                ui.label(format!("view {}", state.mode.label()));
            }
        }
        if state.has_clock() {
            ui.separator();
            ui.label(format!("t = {:.3} s", state.playback.time_s));
        }
        let share = state.stats.real_time_share;
        if state.playback.playing && share < super::playback::BEHIND_REAL_TIME {
            ui.separator();
            ui.colored_label(
                Color32::from_rgb(255, 170, 60),
                format!(
                    "playing at {:.1}× real time (frames too slow)",
                    share * state.playback.speed
                ),
            );
        }
        ui.separator();
        ui.label(format!("palette: {}", state.palette_source().describe()));
        ui.separator();
        // The adapter's name; the backend and driver on hover (the bar stays short).
        let name = adapter.split(" (").next().unwrap_or(adapter);
        ui.label(RichText::new(name).weak()).on_hover_text(adapter);
    });
}
