//! The curves panel and the key help, through the viewer's own panels (egui_kittest): every
//! channel of a clip mixing STEP, LINEAR and CUBICSPLINE is drawn within a pixel of the curve
//! the player samples (measured on the plot the panel laid out) and through every key; a
//! click on a key jumps to it; a click on a dope-sheet row selects its bone; `?` lists every
//! key of the handler's table, and the README lists the same keys.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use crate::common;
use crate::ui_image;
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skinview::anim::Sampler;
use skinview::anim::curves::RotationForm;
use skinview::choice::Choice;
use skinview::viewer::curves::{self, DrawnChannel};
use skinview::viewer::keys::{self, KEYS};
use skinview::viewer::state::ViewerState;

/// The generated rig whose clips mix STEP, LINEAR and CUBICSPLINE on one bone.
fn rig() -> ViewerState {
    let path = common::shared_dir().join("rigs/rig_seed1.glb");
    let mut s = ViewerState::new(skinview::io::model::load(Some(&path)).unwrap(), false).unwrap();
    s.curves.open = true;
    s.playback.playing = false;
    s
}

fn harness(s: ViewerState) -> Harness<'static, ViewerState> {
    Harness::builder()
        .with_size(egui::vec2(1100.0, 900.0))
        .build_ui_state(curves::panel, s)
}

/// The channel's sampler in the model's scene.
fn sampler<'a>(s: &'a ViewerState, d: &DrawnChannel) -> &'a Sampler {
    let anim = &s.character.scene.animations[d.clip];
    let ch = anim
        .channels
        .iter()
        .find(|c| c.node == d.node && c.path == d.path);
    &ch.unwrap().sampler
}

/// The value the player samples at `t`, per drawn component (Euler in degrees).
fn played(sampler: &Sampler, form: RotationForm, t: f32) -> Vec<f64> {
    let mut raw = vec![0.0; sampler.components];
    sampler.sample_binary_search(t, &mut raw);
    if !sampler.is_rotation {
        return raw.iter().map(|&x| f64::from(x)).collect();
    }
    let q = glam::Quat::from_slice(&raw);
    match form {
        RotationForm::EulerXyz => {
            let e = skinview::math::euler_xyz_rad(q);
            [e.x, e.y, e.z]
                .iter()
                .map(|a| f64::from(*a).to_degrees())
                .collect()
        }
        RotationForm::Quaternion => raw.iter().map(|&x| f64::from(x)).collect(),
    }
}

/// Worst distance in pixels between a drawn polyline and the played curve, over 2,000
/// times of the plot's window (angles compared modulo 360°, quaternions up to sign).
fn worst_px(s: &ViewerState, d: &DrawnChannel, form: RotationForm) -> f64 {
    let plot = d.plot.expect("the plot was laid out");
    let px_per_value = plot.dpos_dvalue_y().abs();
    let sampler = sampler(s, d);
    let (w0, w1) = d.view.window_s;
    let mut worst: f64 = 0.0;
    for j in 0..=2000 {
        let t = w0 + (w1 - w0) * j as f32 / 2000.0;
        let want = played(sampler, form, t);
        let got: Vec<f64> = d
            .curves
            .lines
            .iter()
            .map(|l| common::polyline_at(l, f64::from(t)))
            .collect();
        let flip = match (sampler.is_rotation, form) {
            (true, RotationForm::Quaternion) => {
                got.iter().zip(&want).map(|(a, b)| a * b).sum::<f64>() < 0.0
            }
            _ => false,
        };
        for (g, w) in got.iter().zip(&want) {
            let w = if flip { -w } else { *w };
            let mut e = g - w;
            if sampler.is_rotation && form == RotationForm::EulerXyz {
                e -= 360.0 * (e / 360.0).round();
            }
            worst = worst.max(e.abs() * px_per_value);
        }
    }
    worst
}

#[test]
fn every_channel_is_drawn_within_a_pixel_and_through_its_keys() {
    let mut kinds = std::collections::HashSet::new();
    let (mut channels, mut worst) = (0, 0.0f64);
    for clip in 0..2 {
        for &form in RotationForm::ALL {
            let mut s = rig();
            s.set_anim(Some(clip));
            s.curves.rotation = form;
            let nodes: Vec<usize> = {
                let a = &s.character.scene.animations[clip];
                let mut n: Vec<usize> = a.channels.iter().map(|c| c.node).collect();
                n.dedup();
                n
            };
            let mut h = harness(s);
            for node in nodes {
                h.state_mut().select(Some(node));
                // The first frame lays the plots out; the next draws for their scale.
                h.run();
                h.run();
                let s = h.state();
                assert!(!s.curves.drawn.is_empty(), "node {node}: nothing drawn");
                for d in &s.curves.drawn {
                    kinds.insert((sampler(s, d).interpolation.name(), d.path.name()));
                    let px = worst_px(s, d, form);
                    (channels, worst) = (channels + 1, worst.max(px));
                    assert!(px <= 1.0, "node {node} {}: {px:.3} px", d.path.name());
                    for key in &d.curves.keys {
                        for (line, v) in d.curves.lines.iter().zip(&key.values) {
                            let t = f64::from(key.time_s);
                            assert!(line.iter().any(|p| p[0] == t && p[1] == *v));
                        }
                    }
                    let (w0, w1) = d.view.window_s;
                    let inside = sampler(s, d)
                        .times_s
                        .iter()
                        .filter(|&&t| t >= w0 && t <= w1)
                        .count();
                    assert_eq!(d.curves.keys.len(), inside);
                }
            }
        }
    }
    println!("{channels} channels drawn, worst {worst:.3} px from the played curve");
    assert!(channels >= 30, "{channels} channels");
    for interpolation in ["STEP", "LINEAR", "CUBICSPLINE"] {
        assert!(
            kinds.iter().any(|k| k.0 == interpolation),
            "{interpolation} not drawn: {kinds:?}"
        );
    }
    assert!(kinds.iter().any(|k| k.1 == "rotation"));
}

/// The rig on its first clip, joint_7 selected and joint_1 pinned beside it (every
/// interpolation between them), rotations drawn in `form`.
fn pinned_rig(form: RotationForm) -> ViewerState {
    let mut s = rig();
    s.set_anim(Some(0));
    let scene = &s.character.scene;
    let (j7, j1) = (
        scene.find_node("joint_7").unwrap(),
        scene.find_node("joint_1").unwrap(),
    );
    s.select(Some(j7));
    s.curves.pinned.push(j1);
    s.curves.rotation = form;
    s
}

/// A channel's curves are made (its `CurveJob` run) again only when what they show changes:
/// frames with nothing changed, or only the time, reuse the last frame's; another rotation
/// form draws the rotations anew, and what is reused is what a fresh panel draws.
#[test]
fn unchanged_channels_are_not_drawn_again() {
    let mut h = harness(pinned_rig(RotationForm::EulerXyz));
    h.run();
    h.run();
    let runs = h.state().curves.curve_runs;
    let curves =
        |s: &ViewerState| -> Vec<_> { s.curves.drawn.iter().map(|d| d.curves.clone()).collect() };
    let first = curves(h.state());
    assert!(
        first.len() >= 3 && runs >= first.len() as u64,
        "{runs} runs"
    );
    for time_s in [0.2, 0.5, 0.9] {
        h.state_mut().scrub(time_s);
        h.run();
    }
    assert_eq!(h.state().curves.curve_runs, runs, "nothing drawn changed");
    assert_eq!(curves(h.state()), first);
    h.state_mut().curves.rotation = RotationForm::Quaternion;
    h.run();
    h.run();
    let st = h.state();
    assert!(st.curves.curve_runs > runs);
    let rotations: Vec<_> = st
        .curves
        .drawn
        .iter()
        .filter(|d| d.path.name() == "rotation")
        .collect();
    assert!(!rotations.is_empty() && rotations.iter().all(|d| d.curves.lines.len() == 4));
    // The same view in a fresh panel draws the same curves.
    let mut f = harness(pinned_rig(RotationForm::Quaternion));
    f.run();
    f.run();
    assert_eq!(curves(f.state()), curves(h.state()));
}

/// The plots' grid steps: the smallest of 1, 2, 5 times a power of ten at least the asked
/// size, over sizes from 1e-6 to 1e6 (seeded).
#[test]
fn grid_steps_climb_the_one_two_five_ladder() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..10_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let v = 10f64.powf((state >> 11) as f64 / (1u64 << 53) as f64 * 12.0 - 6.0);
        let step = skinview::viewer::plot_axes::ladder_step_at_least(v);
        let mantissa = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
            "{v:e}: {step:e}"
        );
        assert!(step >= v * (1.0 - 1e-9), "{v:e}: {step:e}");
        // The rung below is under v: the ladder's rungs are at most 2.5 apart.
        assert!(step < v * 2.5 * (1.0 + 1e-9), "{v:e}: {step:e}");
    }
}

/// A click at `pos` (press and release).
fn click(h: &mut Harness<'_, ViewerState>, pos: Pos2) {
    h.hover_at(pos);
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run();
}

#[test]
fn clicking_a_key_jumps_to_it_and_a_dope_sheet_row_selects_its_bone() {
    let mut s = rig();
    s.set_anim(Some(0));
    let joint_7 = s.character.scene.find_node("joint_7").unwrap();
    s.select(Some(joint_7));
    let mut h = harness(s);
    h.run();
    h.run();
    let (pos, key_s) = {
        let d = &h.state().curves.drawn[0];
        let key = &d.curves.keys[d.curves.keys.len() / 2];
        let p = egui_plot::PlotPoint::new(f64::from(key.time_s), key.values[0]);
        (d.plot.unwrap().position_from_point(&p), key.time_s)
    };
    assert_ne!(h.state().playback.time_s, key_s);
    // A few pixels off the key still takes it.
    click(&mut h, pos + egui::vec2(3.0, -2.0));
    assert_eq!(h.state().playback.time_s, key_s);

    // The dope sheet's first row is the first animated node; clicking it selects it.
    let (pos, first) = {
        let dope = &h.state().curves.dope;
        let plot = dope.plot.unwrap();
        let p = egui_plot::PlotPoint::new(0.37, 0.0);
        (plot.position_from_point(&p), dope.rows[0])
    };
    assert_ne!(first, joint_7);
    click(&mut h, pos);
    assert_eq!(h.state().view.selected_node, Some(first));
    // Pinned bones stay drawn beside the selected one.
    h.state_mut().curves.pinned.push(joint_7);
    h.run();
    let nodes: std::collections::HashSet<usize> =
        h.state().curves.drawn.iter().map(|d| d.node).collect();
    assert!(
        nodes.contains(&first) && nodes.contains(&joint_7),
        "{nodes:?}"
    );
}

/// CesiumMan beside itself: B's curves are the model's, drawn second; on an adapter without
/// vertex-stage storage (WebGL2's kind), where vertices cannot be compared, the curves still
/// are (they are CPU data).
#[test]
fn a_compared_file_is_drawn_dashed_over_the_model() {
    for storage in [true, false] {
        compared_curves_match_the_model(storage);
    }
}

fn compared_curves_match_the_model(storage: bool) {
    let path = common::model("CesiumMan");
    let mut s = ViewerState::new(skinview::io::model::load(Some(&path)).unwrap(), false).unwrap();
    s.storage_palette = storage;
    s.compare_with(path.to_str().unwrap()).unwrap();
    assert_eq!(
        s.other.is_some(),
        storage,
        "vertices compared only with storage"
    );
    assert_eq!(s.curves_file.is_some(), !storage);
    s.curves.open = true;
    let node = s.character.scene.animations[0].channels[3].node;
    s.select(Some(node));
    let mut h = harness(s);
    h.run();
    h.run();
    let drawn = &h.state().curves.drawn;
    let a: Vec<&DrawnChannel> = drawn.iter().filter(|d| !d.compared).collect();
    let b: Vec<&DrawnChannel> = drawn.iter().filter(|d| d.compared).collect();
    assert!(
        !a.is_empty() && a.len() == b.len(),
        "{} and {}",
        a.len(),
        b.len()
    );
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.path, b.path);
        assert_eq!(a.curves.lines, b.curves.lines);
    }
}

#[test]
fn the_curves_panel_matches_its_golden_image() {
    // joint_7's CUBICSPLINE translation (handles) and STEP rotation and scale, pinned beside
    // joint_1's LINEAR translation and STEP rotation: every interpolation in one picture.
    let Some(ctx) = common::gpu() else { return };
    let mut s = pinned_rig(RotationForm::EulerXyz);
    s.scrub(0.7);
    let image = ui_image::render(ctx, (1000, 1150), |ui| curves::panel(ui, &mut s));
    let drawn: Vec<(usize, &str)> = s
        .curves
        .drawn
        .iter()
        .map(|d| (d.node, d.path.name()))
        .collect();
    assert_eq!(drawn.len(), 5, "{drawn:?}");
    let dir = common::golden::golden_dir();
    let failure = common::golden::check_golden(
        &dir,
        "curves_rig_seed1",
        &image,
        &ctx.describe(),
        common::golden::bless(),
    );
    assert!(failure.is_none(), "{}", failure.unwrap_or_default());
}

#[test]
fn question_mark_lists_every_key_and_escape_closes_it() {
    let both = |ui: &mut egui::Ui, s: &mut ViewerState| {
        keys::keyboard(ui, s);
        if s.help {
            keys::help_window(ui.ctx(), s);
        }
    };
    let mut s = rig();
    s.curves.open = false;
    let mut h = Harness::builder()
        .with_size(egui::vec2(900.0, 900.0))
        .build_ui_state(both, s);
    h.run();
    h.key_press(Key::Questionmark);
    h.run();
    assert!(h.state().help);
    let shown = |h: &Harness<'_, ViewerState>, text: &str| {
        assert!(
            h.query_all_by_label(text).next().is_some(),
            "{text:?} not in the help"
        );
    };
    for b in KEYS {
        shown(&h, b.does);
        shown(&h, b.label);
    }
    for (gesture, does) in keys::POINTER {
        shown(&h, gesture);
        shown(&h, does);
    }
    // The table drives the handler: C opens the curves panel.
    h.key_press(Key::C);
    h.run();
    assert!(h.state().curves.open);
    h.key_press(Key::Escape);
    h.run();
    assert!(!h.state().help);
    assert!(h.query_by_label(KEYS[0].does).is_none());
}

#[test]
fn the_readme_lists_every_key_of_the_table() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for b in KEYS {
        let row = format!("| `{}` | {} |", b.label, b.does);
        assert!(readme.contains(&row), "README.md lacks the key row {row}");
    }
    for (gesture, does) in keys::POINTER {
        let row = format!("| {gesture} | {does} |");
        assert!(
            readme.contains(&row),
            "README.md lacks the pointer row {row}"
        );
    }
}
