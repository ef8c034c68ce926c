//! The real window under Xvfb (X virtual framebuffer): `skinview view --frames N --screenshot`
//! opens the viewer, animates, saves its last frame and exits. Checked: the exit status, that
//! the frame counter and the animation time advanced (PNG text chunks and the exit report), that
//! the screenshot is not blank (many colours, the viewport not uniform), and for CesiumMan side
//! by side that the live CPU-vs-GPU comparison ran and stayed within the comparison's tolerance
//! (with compute skinning, on the compute pass's own output buffer).
//! Needs `xvfb-run` (`scripts/setup.sh --tests` installs it): in CI its absence fails the test,
//! elsewhere it is a loud skip.
#![cfg(feature = "viewer")]
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code

use crate::common;

use std::path::Path;
use std::process::Command;

fn xvfb() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !common::in_ci(),
            "CI=true and xvfb-run is missing (scripts/setup.sh --tests)"
        );
        eprintln!("SKIPPING window test: xvfb-run not found (apt-get install xvfb xauth)");
    }
    found
}

/// Run the viewer for `frames` frames in a 1280x800 window; (stdout, screenshot text chunks,
/// screenshot).
fn run_viewer(
    args: &[&str],
    frames: u32,
    name: &str,
) -> (String, Vec<(String, String)>, skinview::image::Rgba8) {
    run_viewer_with(args, frames, name, &[])
}

/// [`run_viewer`] with extra environment variables.
fn run_viewer_with(
    args: &[&str],
    frames: u32,
    name: &str,
    env: &[(&str, &str)],
) -> (String, Vec<(String, String)>, skinview::image::Rgba8) {
    let dir = std::env::temp_dir().join(format!("skinview-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join(name);
    let frames = frames.to_string();
    let o = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1400x900x24"])
        .arg(env!("CARGO_BIN_EXE_skinview"))
        .arg("view")
        .args(args)
        .args(["--frames", &frames, "--screenshot"])
        .arg(&shot)
        .env("XDG_RUNTIME_DIR", &dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "viewer failed:\n{text}");
    let chunks = skinview::io::png::read_text(&shot).unwrap();
    let image = skinview::io::png::read(&shot).unwrap();
    println!("{text}");
    (text, chunks, image)
}

fn chunk<'a>(chunks: &'a [(String, String)], key: &str) -> &'a str {
    chunks
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in the screenshot"))
}

/// Distinct colours in the image, and the share of the central region equal to its centre.
fn not_blank(image: &skinview::image::Rgba8) -> (usize, f32) {
    let mut colours: Vec<[u8; 3]> = image
        .pixels
        .chunks_exact(4)
        .step_by(7)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    let (w, h) = (image.width as usize, image.height as usize);
    let at = |x: usize, y: usize| &image.pixels[(y * w + x) * 4..(y * w + x) * 4 + 3];
    let centre = at(w / 2, h / 2).to_vec();
    let mut same = 0;
    let mut total = 0;
    for y in (h / 4..3 * h / 4).step_by(5) {
        for x in (w / 3..2 * w / 3).step_by(5) {
            total += 1;
            if at(x, y) == centre.as_slice() {
                same += 1;
            }
        }
    }
    (colours.len(), same as f32 / total as f32)
}

#[test]
fn the_window_opens_animates_and_saves_a_frame() {
    if !xvfb() || common::gpu().is_none() {
        return;
    }
    // The built-in humanoid through every stage (no MODEL).
    let (text, chunks, image) = run_viewer(&[], 45, "humanoid.png");
    assert_eq!(chunk(&chunks, "Frames"), "45");
    let t: f32 = chunk(&chunks, "Time").parse().unwrap();
    assert!(t > 0.0, "animation time did not advance: {t}");
    assert!(text.contains("viewer: 45 frames"), "{text}");
    let (colours, same) = not_blank(&image);
    println!(
        "humanoid: {}x{}, {colours} colours, {same:.2} of the centre uniform",
        image.width, image.height
    );
    assert!(image.width >= 640 && image.height >= 400);
    assert!(colours > 200, "screenshot looks blank: {colours} colours");
    assert!(same < 0.9, "the viewport is uniform");

    // CesiumMan side by side: the live comparison runs and passes.
    let cesium = common::model("CesiumMan");
    let (text, chunks, image) = run_viewer(
        &[cesium.to_str().unwrap(), "--show", "split"],
        30,
        "cesium_split.png",
    );
    assert_eq!(chunk(&chunks, "Frames"), "30");
    assert_live_comparison_passes(&text, "the capture shader");
    let (colours, _) = not_blank(&image);
    assert!(colours > 200, "side-by-side screenshot looks blank");
    assert_eq!(chunk(&chunks, "Skinning"), "GPU (vertex shader)");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).exists());
    // The compute-skinning path in the window: it draws, and the live comparison still passes.
    let (text, chunks, image) = run_viewer(
        &[
            cesium.to_str().unwrap(),
            "--mode", // the old spelling of --show, a hidden alias
            "split",
            "--skinning",
            "compute",
        ],
        20,
        "cesium_compute.png",
    );
    assert_eq!(chunk(&chunks, "Skinning"), "GPU (compute pass)");
    // Compared as drawn: the compute pass's own output buffer, within the same tolerance.
    assert_live_comparison_passes(&text, "the compute-skinned buffer as drawn");
    let (colours, same) = not_blank(&image);
    assert!(
        colours > 200 && same < 0.9,
        "compute path screenshot looks blank: {colours} colours, {same:.2}"
    );
}

/// The exit report's live comparison line: present, within the CPU-vs-GPU tolerance relative
/// to the diagonal, and read from `source`.
fn assert_live_comparison_passes(text: &str, source: &str) {
    let line = text
        .lines()
        .find(|l| l.contains("live |GPU - CPU|"))
        .unwrap_or_else(|| panic!("no live comparison reported:\n{text}"));
    let rel: f64 = line
        .split('(')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(rel <= skinview::compare::CPU_GPU_TOLERANCE_REL, "{line}");
    assert!(line.contains(&format!("read from {source}")), "{line}");
}

/// A window on a device with WebGL2-class limits (no vertex-stage storage buffers): the
/// viewer switches to the uniform palette by itself and still draws the humanoid (30 joints,
/// within one 64-matrix array) and a glTF model (partitioned), and compares it live through
/// the draw-path capture; with storage, `--max-bones` shows the split by colour.
#[test]
fn the_window_draws_through_the_uniform_palette() {
    if !xvfb() || common::gpu().is_none() {
        return;
    }
    let webgl2 = [("SKINVIEW_LIMITS", "webgl2")];
    let (_, _, image) = run_viewer_with(&[], 10, "humanoid_webgl2.png", &webgl2);
    let (colours, same) = not_blank(&image);
    assert!(
        colours > 200 && same < 0.9,
        "blank: {colours} colours, {same:.2}"
    );
    let cesium = common::model("CesiumMan");
    let (_, _, image) = run_viewer_with(
        &[cesium.to_str().unwrap()],
        10,
        "cesium_webgl2.png",
        &webgl2,
    );
    let (colours, same) = not_blank(&image);
    assert!(
        colours > 200 && same < 0.9,
        "blank: {colours} colours, {same:.2}"
    );
    // No capture shader there: the live comparison reads the draw's own vertex stage (the
    // draw-path capture, asynchronously) and passes, side by side and as the heatmap.
    for show in ["split", "diff"] {
        let (text, _, image) = run_viewer_with(
            &[cesium.to_str().unwrap(), "--show", show],
            20,
            &format!("cesium_webgl2_{show}.png"),
            &webgl2,
        );
        assert_live_comparison_passes(&text, "the draw's vertex stage");
        let (colours, _) = not_blank(&image);
        assert!(colours > 100, "{show}: blank, {colours} colours");
    }
    // The split by colour on the storage path (the panel's state is tested in
    // tests/viewer/viewer_panels.rs).
    let (_, _, split) = run_viewer(
        &[
            cesium.to_str().unwrap(),
            "--palette",
            "storage",
            "--max-bones",
            "8",
        ],
        10,
        "cesium_k8.png",
    );
    let (colours, _) = not_blank(&split);
    assert!(colours > 200, "blank split view");
}

/// `view --color weights --bone B --skeleton` opens with that bone's weights and their legend
/// (a row of fully saturated ramp colours, blue to red, no lit surface has) and the skeleton;
/// an unknown bone is refused with its name.
#[test]
fn the_window_opens_on_a_bones_weights_with_their_legend() {
    if !xvfb() || common::gpu().is_none() {
        return;
    }
    let cesium = common::model("CesiumMan");
    let args = [
        cesium.to_str().unwrap(),
        "--color",
        "weights",
        "--bone",
        "Skeleton_arm_joint_L__3_",
        "--skeleton",
        "--time",
        "1.25",
        "--paused",
    ];
    let (text, _, image) = run_viewer(&args, 10, "cesium_weights.png");
    // Started paused at 1.25 s, it is still there (the web page's `?time=1.25&paused=1`).
    assert!(text.contains("t = 1.250 s"), "{text}");
    let w = image.width as usize;
    let px = |x: usize, y: usize| &image.pixels[(y * w + x) * 4..][..3];
    let vivid = |p: &[u8]| p.iter().max().unwrap() >= &235 && p.iter().min().unwrap() <= &20;
    let bar =
        (0..image.height as usize).find(|&y| (0..w).filter(|&x| vivid(px(x, y))).count() >= 150);
    let bar = bar.expect("no weights legend in the window");
    // The legend has a strip of its own: the picture's clear colour (all around a model) is
    // nowhere in the legend's rows, so it cannot cover the model.
    let clear = skinview::view::BACKGROUND.map(|c| skinview::image::linear_to_srgb(c) * 255.0);
    let is_clear = |p: &[u8]| (0..3).all(|k| (f64::from(p[k]) - clear[k]).abs() <= 3.0);
    let rows = bar.saturating_sub(16)..(bar + 20).min(image.height as usize);
    let covered = rows
        .clone()
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| is_clear(px(x, y)))
        .count();
    assert_eq!(
        covered, 0,
        "the picture runs under the legend (rows {rows:?})"
    );
    let picture = (0..w).filter(|&x| is_clear(px(x, bar - 40))).count();
    assert!(picture > 100, "no picture above the legend");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args([
            "view",
            cesium.to_str().unwrap(),
            "--bone",
            "no_such_bone",
            "--frames",
            "1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && text.contains("no_such_bone"),
        "{text}"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(["view", "--time", "-1", "--frames", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && text.contains("expected a time in seconds, 0 or more"),
        "{text}"
    );
}

/// `view --compare-with`: CesiumMan beside a copy with one inverse bind matrix moved 1 cm.
/// The window opens on both (what each half draws is checked on the viewport's own target in
/// `viewer_panels.rs`), and the exit report's largest distance is about the move.
#[test]
fn the_window_compares_the_model_with_another_file() {
    if !xvfb() || common::gpu().is_none() {
        return;
    }
    let cesium = common::model("CesiumMan");
    let dir = std::env::temp_dir().join("skinview-window-compare");
    let (planted, _) = common::glb::planted_bind_move(&cesium, 3, 0.01, &dir);
    let (text, _, image) = run_viewer(
        &[
            cesium.to_str().unwrap(),
            "--compare-with",
            planted.to_str().unwrap(),
        ],
        20,
        "compare.png",
    );
    let line = text
        .lines()
        .find(|l| l.contains("|A - B| against"))
        .unwrap_or_else(|| panic!("no comparison line:\n{text}"));
    let largest: f64 = line
        .split("largest ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(largest > 0.004 && largest < 0.011, "{line}");
    let (colours, same) = not_blank(&image);
    assert!(
        colours > 200 && same < 0.9,
        "screenshot looks blank: {colours} colours"
    );
}

/// `view --crowd N`: the window shows the field (not blank), its exit report gives the crowd's
/// figures (every character posed, the ones in view uploaded in one write of a palette each,
/// the GPU passes' times from timestamps), on the vertex shader and the compute pass.
#[test]
fn the_window_shows_a_crowd() {
    if !xvfb() || common::gpu().is_none() {
        return;
    }
    let fox = common::model("Fox");
    for skinning in ["vertex", "compute"] {
        let (text, chunks, image) = run_viewer(
            &[fox.to_str().unwrap(), "--crowd", "60", "--skin", skinning],
            8,
            &format!("crowd_{skinning}.png"),
        );
        assert_eq!(chunk(&chunks, "Frames"), "8");
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("crowd: 60 characters"))
            .unwrap_or_else(|| panic!("no crowd line:\n{text}"));
        let visible: usize = line
            .split(", ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!((1..=60).contains(&visible), "{line}");
        assert!(line.contains("in 1 write ("), "{line}");
        // Fox: 24 joints of 48 bytes (three rows of a matrix) a character.
        assert!(line.contains("(1152 B a character)"), "{line}");
        // The GPU passes from timestamps, read back without waiting, where the adapter
        // writes them.
        let gpu = text
            .lines()
            .find(|l| l.trim_start().starts_with("crowd GPU: "))
            .unwrap_or_else(|| panic!("no crowd GPU line:\n{text}"));
        if common::gpu().is_some_and(|c| c.timestamps()) {
            assert!(gpu.contains(" draw "), "{gpu}");
            assert_eq!(
                gpu.contains("skinning pass"),
                skinning == "compute",
                "{gpu}"
            );
        }
        let (colours, same) = not_blank(&image);
        assert!(
            colours > 200 && same < 0.9,
            "{skinning}: the crowd looks blank: {colours} colours, {same:.2}"
        );
    }
}

/// `view --color submesh --max-bones 8`: CesiumMan opens split into submeshes, each its own
/// colour: the window holds a large area of the first swatch's vivid yellow (CesiumMan's head
/// and torso; the palette's first colour), which the material view of the same frame does
/// not.
#[test]
fn view_color_submesh_opens_the_split_in_its_colours() {
    if !xvfb() {
        return;
    }
    let cesium = common::model("CesiumMan");
    let m = cesium.to_str().unwrap();
    let yellow = |image: &skinview::image::Rgba8| {
        let px = image.pixels.chunks_exact(4);
        let n = px.len().max(1) as f64;
        px.filter(|p| p[0] > 150 && p[1] > 100 && p[2] < 40 && p[0] > p[1])
            .count() as f64
            / n
    };
    let args = ["--time", "0.9", "--paused"];
    let (text, _, split) = run_viewer(
        &[
            &[m, "--color", "submesh", "--max-bones", "8"][..],
            &args[..],
        ]
        .concat(),
        3,
        "submesh.png",
    );
    let (_, _, material) = run_viewer(&[&[m][..], &args[..]].concat(), 3, "material.png");
    let (r, r0) = (yellow(&split), yellow(&material));
    println!("yellow {r:.4}; material yellow {r0:.4}");
    // Measured on lavapipe, 2026-11-29: 0.032 split, 0.000 material.
    assert!(r > 0.01, "no submesh colours: {text}");
    assert!(r0 < r / 4.0, "the material view is as yellow");
}

/// At any window size the viewport keeps a usable share of the width: each side panel takes a
/// fifth (a quarter at most where a fifth is too narrow for a slider row), so from 1000 px up
/// the picture (its clear colour, measured along a row near the top, where the model is not)
/// spans at least 60 % of the window, and at 700×500 and 800×600 about half (0.49, 0.5) or
/// more; under 600 px the panels hide, and the picture spans nine tenths at least. The status
/// bar stays inside the window (it wraps).
#[test]
fn the_viewport_keeps_most_of_the_window_at_any_size() {
    if !xvfb() {
        return;
    }
    let cesium = common::model("CesiumMan");
    let clear = skinview::view::BACKGROUND.map(|c| skinview::image::linear_to_srgb(c) * 255.0);
    for (size, share) in [
        ("480x320", 0.9),
        ("700x500", 0.49),
        ("800x600", 0.5),
        ("1000x700", 0.6),
        ("1280x800", 0.6),
    ] {
        let args = [
            cesium.to_str().unwrap(),
            "--bone",
            "Skeleton_arm_joint_L__3_",
            "--size",
            size,
            "--paused",
        ];
        let (_, _, image) = run_viewer(&args, 6, &format!("size_{size}.png"));
        let w = image.width as usize;
        let row = 30;
        let is_clear = |x: usize| {
            let p = &image.pixels[(row * w + x) * 4..][..3];
            (0..3).all(|k| (f64::from(p[k]) - clear[k]).abs() <= 3.0)
        };
        let first = (0..w).find(|&x| is_clear(x)).unwrap();
        let last = (0..w).rev().find(|&x| is_clear(x)).unwrap();
        let got = (last + 1 - first) as f64 / w as f64;
        println!("{size}: viewport {first}..={last}, {got:.2} of the width");
        assert!(
            got >= share,
            "{size}: the viewport spans {got:.2} of the width"
        );
    }
}
