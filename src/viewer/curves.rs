//! The curves panel: for the selected bone and the pinned ones, each animated property's
//! curves over the clips that play (translation, rotation as unwrapped XYZ Euler angles in
//! degrees or as quaternion components, scale, a mesh's morph weights), keys as points shaped
//! by their interpolation (STEP a square, LINEAR a circle, CUBICSPLINE a diamond with its
//! tangent handles), the time cursor, and a dope sheet: a row of key ticks per animated
//! node. With another file open for comparison, its curves are drawn dashed over the model's.
//! The plots share their time axis (zoom and pan one, all follow); clicking a key jumps to it,
//! hovering reads a value. Curves are CPU data ([`crate::anim::curves`]), so the panel is the
//! same on every backend.

use std::collections::HashMap;

use egui::{Color32, RichText, Ui};
use egui_plot::{
    AxisHints, GridMark, HoverPosition, Legend, Line, LineStyle, MarkerShape, Plot, PlotPoint,
    Points, VLine,
};

use crate::anim::curves::{CurveJob, Curves, RotationForm, component_names};
use crate::anim::{Interpolation, Path, Sampler};
use crate::choice::Choice;
use crate::scene::Scene;

use super::plot_axes::{LABEL_PX, ladder_grid, ladder_label};
use super::state::ViewerState;

/// The largest distance between a drawn polyline and its curve, in pixels (under the one
/// pixel the panel promises, with room for egui's own rounding).
pub const TOLERANCE_PX: f64 = 0.5;

/// Points a component at most (a polyline within half a pixel has about one point a pixel;
/// this is a 4K-wide plot's worth several times over).
const MAX_POINTS: usize = 1 << 16;

/// The y axis's width in every plot of the panel, so their time axes line up (points).
const AXIS_WIDTH: f32 = 110.0;

/// Characters of a dope-sheet row's name (longer ones are cut, so the axis keeps its width).
const ROW_NAME_CHARS: usize = 16;

/// How close a click must come to a key to jump to it (pixels).
const CLICK_PX: f32 = 8.0;

/// The properties the panel can show, in the order of its toggles.
pub const PATHS: [Path; 4] = [
    Path::Translation,
    Path::Rotation,
    Path::Scale,
    Path::Weights,
];

/// The panel's settings and what it drew last.
#[derive(Clone, Debug)]
pub struct CurvesPanel {
    /// Shown (the `C` key, the Animation panel's "curves" box, the view command's curves option).
    pub open: bool,
    /// How rotations are drawn.
    pub rotation: RotationForm,
    /// Bones drawn beside the selected one.
    pub pinned: Vec<usize>,
    /// Per [`PATHS`] entry: drawn.
    pub show: [bool; 4],
    /// The last frame's plots, per (node, property): the window and scale they showed.
    views: HashMap<(usize, Path), PlotView>,
    /// What the last frame drew (for tests and the hover read-out); the next frame draws a
    /// channel again from it when its keys, rotation form and view are the same.
    pub drawn: Vec<DrawnChannel>,
    /// [`CurveJob`] runs since the panel was made: a channel drawn again from the last frame
    /// adds none.
    pub curve_runs: u64,
    /// The last frame's dope sheet.
    pub dope: DopeSheet,
}

impl Default for CurvesPanel {
    fn default() -> Self {
        CurvesPanel {
            open: false,
            rotation: RotationForm::EulerXyz,
            pinned: Vec::new(),
            show: [true; 4],
            views: HashMap::new(),
            drawn: Vec::new(),
            curve_runs: 0,
            dope: DopeSheet::default(),
        }
    }
}

/// A plot's time window and value scale, from its last frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotView {
    /// Times shown (seconds).
    pub window_s: (f32, f32),
    /// Value units a pixel, vertically.
    pub value_per_px: f64,
}

/// One channel as the panel drew it.
#[derive(Clone, Debug)]
pub struct DrawnChannel {
    /// The node (the model's numbering).
    pub node: usize,
    /// The property.
    pub path: Path,
    /// The clip it belongs to (of the model, or of the compared file when `compared`).
    pub clip: usize,
    /// From the file compared with the model.
    pub compared: bool,
    /// The plot's view it was drawn for.
    pub view: PlotView,
    /// The rotation form it was drawn in.
    pub rotation: RotationForm,
    /// The polylines, keys and handles.
    pub curves: Curves,
    /// Where its plot was on screen (None until drawn).
    pub plot: Option<egui_plot::PlotTransform>,
    /// The keys it was drawn from (a copy: the next frame reuses the curves only for equal
    /// keys, whatever file they now come from).
    keys: Sampler,
}

impl DrawnChannel {
    /// Whether this drawing shows `s` for `node`, `path`, `form` and `view` as they are now.
    fn shows(
        &self,
        node: usize,
        path: Path,
        s: &Series<'_>,
        form: RotationForm,
        view: PlotView,
    ) -> bool {
        (self.node, self.path, self.clip, self.compared) == (node, path, s.clip, s.compared)
            && (self.rotation, self.view) == (form, view)
            && self.keys == *s.sampler
    }
}

/// The dope sheet as drawn last: its nodes, top row first, and where it was on screen.
#[derive(Clone, Debug, Default)]
pub struct DopeSheet {
    /// Per row, the node.
    pub rows: Vec<usize>,
    /// Where the plot was (row k at y = −k).
    pub plot: Option<egui_plot::PlotTransform>,
}

/// The bones the panel draws: the selected one, then the pinned ones.
fn bones(state: &ViewerState) -> Vec<usize> {
    let mut v: Vec<usize> = state.view.selected_node.into_iter().collect();
    for &p in &state.curves.pinned {
        if !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// The clips playing, each once.
fn clips(state: &ViewerState) -> Vec<usize> {
    let mut c = state.playback.clips(&state.character, state.stage());
    c.sort_unstable();
    c.dedup();
    c
}

/// The panel.
pub fn panel(ui: &mut Ui, state: &mut ViewerState) {
    // Last frame's drawings: each channel unchanged since is drawn again from them.
    let mut last = std::mem::take(&mut state.curves.drawn);
    state.curves.dope = DopeSheet::default();
    header(ui, state);
    let clips = clips(state);
    if clips.is_empty() {
        ui.label(RichText::new("no clip plays: choose one in the Animation panel").weak());
        return;
    }
    dope_sheet(ui, state, &clips);
    let bones = bones(state);
    if bones.is_empty() {
        ui.label(RichText::new("select a bone to see its curves (click a dope-sheet row)").weak());
        return;
    }
    egui::ScrollArea::vertical()
        .id_salt("curves scroll")
        .show(ui, |ui| {
            for node in bones {
                let before = state.curves.drawn.len();
                for (i, path) in PATHS.into_iter().enumerate() {
                    if state.curves.show[i] {
                        channel_plot(ui, state, &mut last, &clips, node, path);
                    }
                }
                if state.curves.drawn.len() == before {
                    let what = format!(
                        "{}: no keys of the ticked properties in the clips playing",
                        state.node_label(node)
                    );
                    ui.label(RichText::new(what).weak());
                }
            }
        });
}

/// Pin, the rotation form and the property toggles.
fn header(ui: &mut Ui, state: &mut ViewerState) {
    ui.horizontal_wrapped(|ui| {
        ui.heading("Curves");
        if let Some(n) = state.view.selected_node {
            let pinned = state.curves.pinned.contains(&n);
            if ui
                .selectable_label(pinned, "pin")
                .on_hover_text("keep this bone's curves when another is selected")
                .clicked()
            {
                match pinned {
                    true => state.curves.pinned.retain(|&p| p != n),
                    false => state.curves.pinned.push(n),
                }
            }
        }
        let mut unpin = None;
        for &p in &state.curves.pinned {
            if ui
                .small_button(format!("{} ×", state.node_label(p)))
                .on_hover_text("unpin")
                .clicked()
            {
                unpin = Some(p);
            }
        }
        if let Some(p) = unpin {
            state.curves.pinned.retain(|&q| q != p);
        }
        ui.separator();
        egui::ComboBox::from_label("rotation")
            .selected_text(rotation_label(state.curves.rotation))
            .show_ui(ui, |ui| {
                for &f in RotationForm::ALL {
                    ui.selectable_value(&mut state.curves.rotation, f, rotation_label(f))
                        .on_hover_text(f.help());
                }
            });
        for (i, path) in PATHS.into_iter().enumerate() {
            ui.checkbox(&mut state.curves.show[i], path.name());
        }
        if let Some((_, _, label)) = compared(state) {
            ui.label(RichText::new(format!("dashed: {label}")).weak());
        }
    });
}

fn rotation_label(f: RotationForm) -> &'static str {
    match f {
        RotationForm::EulerXyz => "Euler XYZ °",
        RotationForm::Quaternion => "quaternion",
    }
}

/// The plots' shared time axis and cursor.
fn time_group() -> egui::Id {
    egui::Id::unique("curves time")
}

/// A channel's samplers: the model's, per clip playing, then the compared file's.
struct Series<'a> {
    sampler: &'a Sampler,
    clip: usize,
    compared: bool,
    label: String,
}

/// Another file whose curves are drawn over the model's without comparing vertices (the
/// comparison needs vertex-stage storage and a clip; curves are CPU data, so this works on any
/// adapter): its scene and, per clip of the model, its paired clip (by name, then in order).
#[derive(Clone, Debug)]
pub struct CurvesFile {
    /// The path or name it was opened by.
    pub label: String,
    /// Its scene.
    pub scene: Scene,
    /// Per clip of the model, the paired clip of this file.
    clip_of: Vec<Option<usize>>,
}

impl CurvesFile {
    /// `scene` (opened as `label`) paired with `model`'s clips.
    pub fn new(label: &str, scene: Scene, model: &Scene) -> CurvesFile {
        let (pairs, _, _) = crate::diff::names::match_clips(model, &scene);
        let mut clip_of = vec![None; model.animations.len()];
        for p in pairs {
            clip_of[p.a] = Some(p.b);
        }
        CurvesFile {
            label: label.to_string(),
            scene,
            clip_of,
        }
    }

    /// This file's clip paired with the model's clip `anim`.
    pub fn clip(&self, anim: Option<usize>) -> Option<usize> {
        anim.and_then(|a| self.clip_of.get(a).copied().flatten())
    }
}

/// The file whose curves are drawn dashed, if any: the compared file (vertices too) or a
/// curves-only one; its scene, the clip paired with the model's, and its label.
fn compared(state: &ViewerState) -> Option<(&Scene, Option<usize>, &str)> {
    match (&state.other, &state.curves_file) {
        (Some(o), _) => Some((&o.scene, o.clip(), o.label.as_str())),
        (None, Some(f)) => Some((&f.scene, f.clip(state.playback.anim), f.label.as_str())),
        (None, None) => None,
    }
}

fn series<'a>(
    scene: &'a Scene,
    other: Option<(&'a Scene, Option<usize>, &'a str)>,
    clips: &[usize],
    node: usize,
    path: Path,
) -> Vec<Series<'a>> {
    let mut out = Vec::new();
    let many = clips.len() > 1;
    for &c in clips {
        for ch in scene.animations.get(c).map_or(&[][..], |a| &a.channels) {
            if ch.node == node && ch.path == path {
                let label = match many {
                    true => format!("{} ", scene.clip_name(c).label()),
                    false => String::new(),
                };
                out.push(Series {
                    sampler: &ch.sampler,
                    clip: c,
                    compared: false,
                    label,
                });
            }
        }
    }
    // The compared file's channel of the same-named node, in the clip paired with the model's.
    let b = other.and_then(|(b_scene, b_clip, _)| {
        let name = scene.nodes.get(node)?.name.as_deref()?;
        let n = b_scene.find_node(name).ok()?;
        let c = b_clip?;
        let channels = &b_scene.animations.get(c)?.channels;
        let ch = channels.iter().find(|ch| ch.node == n && ch.path == path)?;
        Some(Series {
            sampler: &ch.sampler,
            clip: c,
            compared: true,
            label: "B ".into(),
        })
    });
    out.extend(b);
    out
}

/// Colour of component `i` of `n`: X red, Y green, Z blue, W grey (the axes' colours); morph
/// targets from a qualitative palette (neighbours differ in hue).
pub fn component_colour(path: Path, i: usize, compared: bool) -> Color32 {
    const AXES: [Color32; 4] = [
        Color32::from_rgb(235, 80, 70),
        Color32::from_rgb(90, 200, 90),
        Color32::from_rgb(80, 140, 245),
        Color32::from_rgb(190, 190, 190),
    ];
    // Okabe and Ito's colour-blind-safe set.
    const TARGETS: [Color32; 7] = [
        Color32::from_rgb(230, 159, 0),
        Color32::from_rgb(86, 180, 233),
        Color32::from_rgb(0, 158, 115),
        Color32::from_rgb(240, 228, 66),
        Color32::from_rgb(0, 114, 178),
        Color32::from_rgb(213, 94, 0),
        Color32::from_rgb(204, 121, 167),
    ];
    let c = match path {
        Path::Weights => TARGETS[i % TARGETS.len()],
        _ => AXES[i.min(3)],
    };
    match compared {
        // The compared file: the same hue, lighter.
        true => c.lerp_to_gamma(Color32::WHITE, 0.45),
        false => c,
    }
}

/// The marker of a key of `interpolation`.
pub fn key_marker(interpolation: Interpolation) -> MarkerShape {
    match interpolation {
        Interpolation::Step => MarkerShape::Square,
        Interpolation::Linear => MarkerShape::Circle,
        Interpolation::CubicSpline => MarkerShape::Diamond,
    }
}

/// The y axis's words for `path`.
fn axis_label(path: Path, form: RotationForm) -> &'static str {
    match (path, form) {
        (Path::Translation, _) => "translation (m)",
        (Path::Rotation, RotationForm::EulerXyz) => "rotation, Euler XYZ (°)",
        (Path::Rotation, RotationForm::Quaternion) => "rotation (quaternion)",
        (Path::Scale, _) => "scale",
        (Path::Weights, _) => "morph weights",
    }
}

/// A first frame's view: the whole clip, and a scale from the keys' spread over 200 px.
fn first_view(samplers: &[Series<'_>], path: Path, form: RotationForm, clip_s: f32) -> PlotView {
    let spread = match (path, form) {
        (Path::Rotation, RotationForm::EulerXyz) => 360.0,
        _ => {
            let (lo, hi) = samplers
                .iter()
                .flat_map(|s| s.sampler.values.iter())
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            f64::from(hi - lo).max(1e-3)
        }
    };
    PlotView {
        window_s: (0.0, clip_s.max(1e-3)),
        value_per_px: spread / 200.0,
    }
}

/// One property of one bone: its curves from every clip playing (and the compared file's),
/// taken from `last` (last frame's drawings) where one shows the same.
fn channel_plot(
    ui: &mut Ui,
    state: &mut ViewerState,
    last: &mut Vec<DrawnChannel>,
    clips: &[usize],
    node: usize,
    path: Path,
) {
    let form = state.curves.rotation;
    let series = series(&state.character.scene, compared(state), clips, node, path);
    if series.is_empty() {
        return;
    }
    let clip_s = state.duration_s();
    let view = state
        .curves
        .views
        .get(&(node, path))
        .copied()
        .unwrap_or_else(|| first_view(&series, path, form, clip_s));
    let mut drawn = Vec::new();
    let mut runs = 0;
    for s in &series {
        if let Some(i) = last.iter().position(|d| d.shows(node, path, s, form, view)) {
            drawn.push(last.swap_remove(i));
            continue;
        }
        runs += 1;
        let mut curves = Curves::default();
        let job = CurveJob {
            sampler: s.sampler,
            path,
            rotation: form,
            window_s: view.window_s,
            tolerance: view.value_per_px * TOLERANCE_PX,
            max_points: MAX_POINTS,
            output: &mut curves,
        }
        .run();
        match job {
            Ok(_) => drawn.push(DrawnChannel {
                node,
                path,
                clip: s.clip,
                compared: s.compared,
                view,
                rotation: form,
                curves,
                plot: None,
                keys: s.sampler.clone(),
            }),
            Err(e) => {
                ui.colored_label(Color32::LIGHT_RED, format!("{}: {e}", path.name()));
            }
        }
    }
    let title = format!("{} · {}", state.node_label(node), axis_label(path, form));
    ui.label(RichText::new(title).small().strong());
    let time_s = f64::from(state.playback.time_s);
    let height = (ui.available_height() * 0.5).clamp(110.0, 220.0);
    let response = Plot::new(("curve", node, path.name()))
        .height(height)
        .x_grid_spacer(ladder_grid(LABEL_PX[0]))
        .y_grid_spacer(ladder_grid(LABEL_PX[1]))
        .x_axis_formatter(ladder_label)
        .y_axis_formatter(ladder_label)
        .y_axis_min_width(AXIS_WIDTH)
        .link_axis(time_group(), [true, false])
        .link_cursor(time_group(), [true, false])
        .default_x_bounds(0.0, f64::from(clip_s.max(1e-3)))
        .x_axis_label("s")
        .legend(Legend::default())
        .label_formatter(|hover| {
            Some(match hover {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position: p,
                    ..
                } if !plot_name.is_empty() => format!("{plot_name}\n{:.3} s\n{:.4}", p.x, p.y),
                HoverPosition::NearDataPoint { position: p, .. }
                | HoverPosition::Elsewhere { position: p } => format!("{:.3} s\n{:.4}", p.x, p.y),
            })
        })
        .show(ui, |plot| {
            // Each drawing with its own series (one that failed to draw has none).
            for d in &drawn {
                let own = series
                    .iter()
                    .find(|s| (s.clip, s.compared) == (d.clip, d.compared));
                if let Some(s) = own {
                    draw_channel(plot, d, s, form);
                }
            }
            plot.vline(VLine::new("", time_s).color(Color32::from_rgb(255, 200, 40)));
            plot.pointer_coordinate()
        });
    state.curves.curve_runs += runs;
    // The view the next frame draws for, from what this frame showed.
    let t = response.transform;
    if let Some(next) = next_view(&t, clip_s) {
        state.curves.views.insert((node, path), next);
    }
    if response.response.clicked()
        && let Some(pos) = response.response.interact_pointer_pos()
        && let Some(key_s) = nearest_key(&drawn, &t, pos)
    {
        state.scrub(key_s);
    }
    for d in &mut drawn {
        d.plot = Some(t);
    }
    state.curves.drawn.extend(drawn);
}

/// The view the next frame draws for: the times shown, within the clip (so the plot's own
/// margins do not widen the data, and with it the bounds, frame after frame), and the scale.
fn next_view(t: &egui_plot::PlotTransform, clip_s: f32) -> Option<PlotView> {
    let (b, frame) = (t.bounds(), t.frame());
    let ([x0, _], [x1, _]) = (b.min(), b.max());
    let clip_s = f64::from(clip_s.max(1e-3));
    let (w0, w1) = (x0.max(0.0), x1.min(clip_s));
    (b.is_valid() && frame.height() > 1.0 && w0 < w1).then(|| PlotView {
        window_s: (w0 as f32, w1 as f32),
        value_per_px: b.height() / f64::from(frame.height()),
    })
}

/// One series' lines, keys and handles.
fn draw_channel(
    plot: &mut egui_plot::PlotUi<'_>,
    d: &DrawnChannel,
    s: &Series<'_>,
    form: RotationForm,
) {
    let names = component_names(d.path, form, d.curves.lines.len());
    let style = match d.compared {
        true => LineStyle::dashed_dense(),
        false => LineStyle::Solid,
    };
    for (i, line) in d.curves.lines.iter().enumerate() {
        let colour = component_colour(d.path, i, d.compared);
        let name = format!("{}{}", s.label, names.get(i).map_or("", String::as_str));
        plot.line(
            Line::new(name.clone(), line.clone())
                .color(colour)
                .style(style)
                .width(1.5)
                // Never merged into a band: every vertex is drawn (the 1 px promise).
                .allow_band(false),
        );
        let keys: Vec<[f64; 2]> = d
            .curves
            .keys
            .iter()
            .filter_map(|k| Some([f64::from(k.time_s), *k.values.get(i)?]))
            .collect();
        plot.points(
            Points::new(name, keys)
                .shape(key_marker(s.sampler.interpolation))
                .color(colour)
                .radius(3.0)
                .filled(!d.compared),
        );
    }
    for h in &d.curves.handles {
        let colour = component_colour(d.path, h.component, d.compared).gamma_multiply(0.6);
        plot.line(
            Line::new("", vec![h.from, h.to])
                .color(colour)
                .width(1.0)
                .allow_band(false)
                .allow_hover(false),
        );
        plot.points(
            Points::new("", vec![h.to])
                .shape(MarkerShape::Circle)
                .radius(2.0)
                .color(colour)
                .allow_hover(false),
        );
    }
}

/// The time of the drawn key nearest to `pos` within [`CLICK_PX`], if any.
fn nearest_key(
    drawn: &[DrawnChannel],
    t: &egui_plot::PlotTransform,
    pos: egui::Pos2,
) -> Option<f32> {
    let mut best: Option<(f32, f32)> = None;
    for d in drawn {
        for k in &d.curves.keys {
            for &v in &k.values {
                let p = t.position_from_point(&PlotPoint::new(f64::from(k.time_s), v));
                let dist = p.distance(pos);
                if dist <= CLICK_PX && best.is_none_or(|(b, _)| dist < b) {
                    best = Some((dist, k.time_s));
                }
            }
        }
    }
    best.map(|(_, t)| t)
}

/// A row of key ticks per node the playing clips animate; the selected and pinned rows
/// brighter. Clicking a row selects its node; clicking a tick also jumps to it.
fn dope_sheet(ui: &mut Ui, state: &mut ViewerState, clips: &[usize]) {
    let scene = &state.character.scene;
    let mut rows: Vec<(usize, Vec<f32>)> = Vec::new();
    for &c in clips {
        for ch in scene.animations.get(c).map_or(&[][..], |a| &a.channels) {
            match rows.iter_mut().find(|r| r.0 == ch.node) {
                Some(r) => r.1.extend_from_slice(&ch.sampler.times_s),
                None => rows.push((ch.node, ch.sampler.times_s.clone())),
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    for r in &mut rows {
        r.1.sort_by(f32::total_cmp);
        r.1.dedup();
    }
    let labels: Vec<String> = rows
        .iter()
        .map(|r| {
            let l = state.node_label(r.0);
            match l.chars().count() > ROW_NAME_CHARS {
                true => l.chars().take(ROW_NAME_CHARS - 1).chain(['…']).collect(),
                false => l,
            }
        })
        .collect();
    let chosen = bones(state);
    let clip_s = f64::from(state.duration_s().max(1e-3));
    let time_s = f64::from(state.playback.time_s);
    let n = rows.len();
    // Row k is drawn at y = −k, so the first node is at the top.
    // Up to 170 px, and under half of a short panel, so a curve stays in view below it.
    let most = (ui.available_height() * 0.45).clamp(60.0, 170.0);
    let height = (n as f32 * 16.0 + 28.0).clamp(60.0, most);
    let rows_shown = (((height - 28.0) / 16.0).floor() as usize).clamp(1, n.max(1));
    let response = Plot::new("dope sheet")
        .height(height)
        .x_grid_spacer(ladder_grid(LABEL_PX[0]))
        .x_axis_formatter(ladder_label)
        .link_axis(time_group(), [true, false])
        .link_cursor(time_group(), [true, false])
        .default_x_bounds(0.0, clip_s)
        // As many rows as fit 16 px apart (the rest scroll).
        .default_y_bounds(-(rows_shown as f64) + 0.5, 0.5)
        .allow_zoom([true, false])
        .show_grid([true, false])
        // A mark, and so a name, on every row (rows are 16 px apart: labels from 10 px).
        .y_grid_spacer(|input| {
            let (lo, hi) = input.bounds;
            let rows = (-hi).ceil().max(0.0) as i64..=(-lo).floor().max(0.0) as i64;
            rows.take(512)
                .map(|k| GridMark {
                    value: -(k as f64),
                    step_size: 1.0,
                })
                .collect()
        })
        .custom_y_axes(vec![
            AxisHints::new_y()
                .min_thickness(AXIS_WIDTH)
                .label_spacing(10.0..=14.0)
                .formatter(move |mark, _| {
                    let k = -mark.value;
                    match k.fract() == 0.0 && k >= 0.0 {
                        true => labels.get(k as usize).cloned().unwrap_or_default(),
                        false => String::new(),
                    }
                }),
        ])
        .label_formatter(|hover| {
            let (HoverPosition::NearDataPoint { position: p, .. }
            | HoverPosition::Elsewhere { position: p }) = hover;
            Some(format!("{:.3} s", p.x))
        })
        .show(ui, |plot| {
            for (k, (node, times)) in rows.iter().enumerate() {
                let y = -(k as f64);
                let on = chosen.contains(node);
                let colour = match on {
                    true => Color32::from_rgb(255, 200, 40),
                    false => Color32::from_gray(170),
                };
                let ticks: Vec<[f64; 2]> = times.iter().map(|&t| [f64::from(t), y]).collect();
                plot.points(
                    Points::new("", ticks)
                        .shape(MarkerShape::Diamond)
                        .radius(if on { 3.5 } else { 2.5 })
                        .color(colour)
                        .allow_hover(false),
                );
            }
            plot.vline(VLine::new("", time_s).color(Color32::from_rgb(255, 200, 40)));
        });
    state.curves.dope = DopeSheet {
        rows: rows.iter().map(|r| r.0).collect(),
        plot: Some(response.transform),
    };
    if response.response.clicked()
        && let Some(pos) = response.response.interact_pointer_pos()
    {
        let at = response.transform.value_from_position(pos);
        let k = (-at.y).round();
        if k >= 0.0
            && let Some((node, times)) = rows.get(k as usize)
        {
            state.select(Some(*node));
            let near = times.iter().copied().min_by(|a, b| {
                (f64::from(*a) - at.x)
                    .abs()
                    .total_cmp(&(f64::from(*b) - at.x).abs())
            });
            if let Some(t) = near {
                let px = (f64::from(t) - at.x).abs() * response.transform.dpos_dvalue_x();
                if px <= f64::from(CLICK_PX) {
                    state.scrub(t);
                }
            }
        }
    }
}
