//! The web page in a real browser: `scripts/build-web.sh` builds the site, `tests/web/run.mjs`
//! serves it on 127.0.0.1 and drives Debian's Chromium (playwright-core, under Xvfb) on WebGPU
//! and on WebGL2, and this test judges what the page reported (its `#skinview-report` JSON),
//! the canvas screenshots, the downloaded PNG, and the goldens.
//! In CI (`CI=true`) a missing browser, Xvfb or Node.js is a failure; elsewhere a loud skip.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skinview::image::Rgba8;

/// Largest live |GPU − CPU| the page may report, relative to the model's bounding-box
/// diagonal (the required bound; both SwiftShader backends measure 0 to 1.3e-7).
const MAX_RELATIVE_ERROR: f64 = 1e-5;

/// Columns of the canvas the goldens hold: the left panel, the viewport and the status bar.
/// The right panel's performance figures and plot differ run to run (a mean difference of
/// ~1 on the whole canvas between two runs on SwiftShader WebGPU); the settings above them are
/// checked through the page's report.
const GOLDEN_WIDTH: u32 = 580;

/// Inside the viewport of the 960×600 page whatever the panels hold (they size to their
/// content: 378–582 on CesiumMan, 430–648 on the humanoid), above the status bar: (x, y,
/// width, height).
const VIEWPORT: (u32, u32, u32, u32) = (450, 40, 100, 480);

/// Share of the viewport's pixels the model covers at least, as bright pixels (a channel at
/// 150 or more: the models are light; the background, under 70, and the thin grid lines are
/// not): the humanoid at the test's framing covers 0.12–0.19 of it.
const MIN_MODEL_SHARE: f64 = 0.05;

/// The browser the tests drive (Debian's package).
const CHROMIUM: &str = "/usr/bin/chromium";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the page needs that may be missing: `None` when all is there.
fn missing_tools() -> Option<String> {
    let mut missing = Vec::new();
    if !Path::new(CHROMIUM).exists() {
        missing.push("chromium (apt-get install chromium)");
    }
    if Command::new("xvfb-run").arg("--help").output().is_err() {
        missing.push("xvfb-run (apt-get install xvfb xauth)");
    }
    if !root()
        .join("tests/web/node_modules/playwright-core/package.json")
        .exists()
    {
        missing.push("playwright-core (npm ci --prefix tests/web)");
    }
    (!missing.is_empty()).then(|| missing.join(", "))
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        common::output_text(&out)
    );
    println!("{}", common::output_text(&out));
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number `{key}` in {v}"))
}

/// The page ran without a fatal error or timeout and showed no error.
fn clean(what: &str, r: &Value) {
    assert!(
        r["fatal"].is_null(),
        "{what}: the page stopped: {}",
        r["fatal"]
    );
    assert!(
        r["timed_out"].is_null(),
        "{what}: timed out waiting; last report {r}"
    );
    assert_eq!(
        r["errors"],
        serde_json::json!([]),
        "{what}: the page showed errors"
    );
}

fn image(path: &Path) -> Rgba8 {
    skinview::io::png::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Share of `img`'s pixels with a channel at 150 or more.
fn bright_share(img: &Rgba8) -> f64 {
    let pixels = img.pixels.chunks_exact(4);
    let n = pixels.len().max(1);
    let bright = pixels.filter(|p| p[..3].iter().any(|&c| c >= 150)).count();
    bright as f64 / n as f64
}

#[test]
fn web_page_runs_compares_and_downloads_on_webgpu_and_webgl2() {
    if let Some(missing) = missing_tools() {
        if common::in_ci() {
            panic!("CI=true and the web tests cannot run: missing {missing}");
        }
        eprintln!("SKIPPED web tests: missing {missing} (scripts/setup.sh --tests installs them)");
        return;
    }
    run(
        &mut Command::new(root().join("scripts/build-web.sh")),
        "scripts/build-web.sh",
    );
    let out = tempfile_dir();
    // The bad file the page is given; the command line reads it too, for its error text.
    let broken = out.join("broken.glb");
    std::fs::write(&broken, b"glTF\x02\x00\x00\x00this is not a model").unwrap();
    // A file whose clips the page plays on its humanoid ("Play its motion here").
    let humanoid = skinview::io::ModelSource::Builtin(skinview::builtin::Builtin::Humanoid)
        .load()
        .unwrap();
    skinview::io::gltf_export::write_glb(
        &humanoid.scene,
        &Default::default(),
        &out.join("humanoid.glb"),
    )
    .unwrap();
    // A file `optimize` wrote with every encoding it has, compressed included.
    run(
        Command::new(env!("CARGO_BIN_EXE_skinview"))
            .arg("optimize")
            .arg(common::shared_dir().join("models/CesiumMan/CesiumMan.glb"))
            .arg("--out")
            .arg(out.join("CesiumMan.opt.glb"))
            .args(["--tolerance", "1e-3", "--quantize-mesh", "--compress"]),
        "skinview optimize",
    );
    let cli = Command::new(env!("CARGO_BIN_EXE_skinview"))
        .arg("info")
        .arg(&broken)
        .output()
        .unwrap();
    let cli_error = String::from_utf8_lossy(&cli.stderr).trim().to_string();
    assert!(
        !cli.status.success(),
        "the CLI read the broken file: {cli_error}"
    );
    run(
        Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1280x1024x24", "node"])
            .arg(root().join("tests/web/run.mjs"))
            .arg(&out)
            .env("SKINVIEW_SHARED", common::shared_dir()),
        "tests/web/run.mjs",
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    println!("browser: {}", results["browser"]);
    let mut failures = Vec::new();
    for backend in ["webgpu", "webgl2"] {
        let b = &results["backends"][backend];
        check_backend(backend, b, &out);
        // The same words as the command line for the same file.
        let page_error = b["broken"]["error"].as_str().unwrap_or_default();
        assert!(
            !page_error.is_empty() && cli_error.ends_with(page_error),
            "{backend}: the page says {page_error:?}, the command line {cli_error:?}"
        );
        let shot = left_of(
            &image(&out.join(b["golden_shot"].as_str().unwrap())),
            GOLDEN_WIDTH,
        );
        let adapter = b["golden"]["adapter"].as_str().unwrap_or("?").to_string();
        failures.extend(common::golden::check_golden(
            &common::golden::golden_dir(),
            &format!("web_cesiumman_{backend}"),
            &shot,
            &adapter,
            common::golden::bless(),
        ));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// An 800×600 page keeps a usable viewport; the loading line shows until the first frame and
/// then goes; the file bar lies below the canvas (not over the panels or the plot); the adapter
/// has a name (on WebGPU the browser's).
fn check_page_frame(backend: &str, b: &Value) {
    // A second file dropped on the page and compared: its curves over the model's (CPU data,
    // so on WebGL2 too), the model kept.
    let c = &b["curves_compared"];
    assert!(
        c["timed_out"].is_null() && c["model"] == "CesiumMan.fbx" && c["curves"]["open"] == true,
        "{backend}: curves not compared: {c}"
    );
    // At 800×600 the viewport keeps at least half the width (each side panel a fifth at most).
    let small = &b["small"];
    clean(&format!("{backend}: 800×600"), small);
    let (canvas, viewport) = (&small["canvas"], &small["viewport_px"]);
    assert_eq!(canvas, &serde_json::json!([800, 600]), "{backend}: {small}");
    let share = viewport[0].as_f64().unwrap_or(0.0) / 800.0;
    assert!(
        share >= 0.5,
        "{backend}: at 800×600 the viewport is {viewport} ({share:.2})"
    );
    assert_eq!(b["loading_at_start"], true, "{backend}: no loading line");
    assert_eq!(
        b["loading_after_frames"], false,
        "{backend}: the loading line stayed"
    );
    let (bar, canvas) = (&b["bar_box"], &b["canvas_box"]);
    assert!(
        num(bar, "y") >= num(canvas, "y") + num(canvas, "height") - 0.5,
        "{backend}: the file bar {bar} covers the canvas {canvas}"
    );
    let adapter = b["humanoid"]["adapter"].as_str().unwrap_or_default();
    assert!(
        !adapter.starts_with(" (") && !adapter.is_empty(),
        "{backend}: the adapter has no name: {adapter:?}"
    );
}

/// A file's motion played on the humanoid: its three clips, all 18 joints mapped; its map
/// downloaded from the Motion panel, edited and dropped back.
fn check_motion(backend: &str, b: &Value) {
    // A file's motion played on the humanoid: its three clips, all 18 joints mapped.
    // (The broken file's error is still listed: the page keeps its errors.)
    let m = &b["motion"];
    assert!(
        m["fatal"].is_null() && m["timed_out"].is_null(),
        "{backend}: {m}"
    );
    assert_eq!(m["motion"]["clips"], 3, "{backend}: {m}");
    assert_eq!(m["motion"]["mapped"], 18, "{backend}: {m}");
    // Its map, downloaded from the Motion panel: the TOML `skinview retarget --map` reads, one
    // line a joint.
    let d = &b["map_download"];
    assert_eq!(d["suggested"], "bone-map.toml", "{backend}: {d}");
    let text = d["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("[bones]") && text.contains("\"l_hand\" = \"l_hand\""),
        "{backend}: {text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("\" = \"")).count(),
        18,
        "{backend}: {text}"
    );
    // The map edited and dropped back on the page: the left hand unmapped.
    let d = &b["map_dropped"];
    assert!(
        d["fatal"].is_null() && d["timed_out"].is_null(),
        "{backend}: {d}"
    );
    assert_eq!(d["motion"]["mapped"], 17, "{backend}: {d}");
}

fn check_backend(backend: &str, b: &Value, out: &Path) {
    check_page_frame(backend, b);
    let what = |s: &str| format!("{backend}: {s}");
    // No error, warning or uncaught exception of the page's own.
    assert_eq!(
        b["messages"],
        serde_json::json!([]),
        "{backend}: the page logged"
    );
    check_motion(backend, b);
    // The humanoid loads, draws and animates.
    let h = &b["humanoid"];
    clean(&what("humanoid"), h);
    assert_eq!(
        h["backend"], backend,
        "{backend}: the page chose another backend"
    );
    assert_eq!(h["model"], "builtin:humanoid");
    let shots: Vec<Rgba8> = b["humanoid_shots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| image(&out.join(f.as_str().unwrap())))
        .collect();
    assert_eq!((shots[0].width, shots[0].height), (960, 600));
    // The viewport alone (the panels' text and plot change without it).
    let view = |img: &Rgba8| crop(img, VIEWPORT);
    let share = bright_share(&view(&shots[0]));
    assert!(
        share >= MIN_MODEL_SHARE,
        "{backend}: the viewport looks blank ({share:.3} of it bright)"
    );
    let (changed, _) = view(&shots[0]).difference(&view(&shots[1])).unwrap();
    assert!(
        changed > 0.01,
        "{backend}: the canvas did not change between frames (mean difference {changed})"
    );
    // The palette path: WebGL2 draws through the uniform palette, K from its limits.
    match backend {
        "webgl2" => {
            assert_eq!(h["palette"], "uniform", "{backend}: {h}");
            assert!(
                num(h, "uniform_bones") >= 16.0,
                "{backend}: K {}",
                h["uniform_bones"]
            );
        }
        _ => assert_eq!(h["palette"], "storage", "{backend}: {h}"),
    }
    // The page's own live comparison on each model.
    for (model, live) in b["live"].as_object().unwrap() {
        clean(&what(model), live);
        let l = &live["live"];
        let relative = num(l, "relative");
        println!(
            "{backend} {model}: |GPU - CPU| {} of the diagonal (source {}, palette {}); \
             readback handling {:.1} ms of a {:.1} ms frame",
            relative,
            l["source"],
            live["palette"],
            num(live, "readback_ms"),
            num(live, "frame_ms")
        );
        assert!(
            relative.is_finite() && relative <= MAX_RELATIVE_ERROR,
            "{backend} {model}: |GPU - CPU| is {relative} of the diagonal"
        );
        let expected_source = if backend == "webgl2" {
            "draw"
        } else {
            "compute"
        };
        assert_eq!(l["source"], expected_source, "{backend} {model}: {l}");
        if backend == "webgl2" {
            assert_eq!(live["palette"], "uniform", "{backend} {model}");
            assert!(
                !live["split"].is_null(),
                "{backend} {model}: no partition stats"
            );
        }
    }
    // ?model= a .gltf: its buffer and texture fetched beside it; a URI leaving the folder as
    // the browser reads URLs is refused, naming the field.
    let fetched = &b["fetched_gltf"];
    clean(&what("fetched .gltf"), fetched);
    assert_eq!(fetched["model"], "CesiumMan.gltf");
    assert!(
        num(&fetched["live"], "relative") <= MAX_RELATIVE_ERROR,
        "{fetched}"
    );
    check_model_urls(backend, b);
    // A click on CesiumMan picks a vertex: GPU-skinned positions read back, its influences.
    let picked = &b["picked_vertex"]["picked"];
    assert!(
        !picked.is_null() && num(picked, "influences") >= 1.0,
        "{backend}: no vertex picked: {}",
        b["picked_vertex"]
    );
    // A broken file: its error, and the model stays.
    let broken = &b["broken"];
    let error = broken["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("broken.glb: GLB header length"),
        "{backend}: broken file: {broken}"
    );
    assert_eq!(
        broken["model"], "builtin:humanoid",
        "{backend}: the model changed"
    );
    // Several files dropped together (a .gltf, its .bin and its texture), and the file button.
    for (what, r, model) in [
        (
            "dropped .gltf + .bin + .png",
            &b["dropped"],
            "CesiumMan.gltf",
        ),
        ("picked .glb", &b["picked"], "Fox.glb"),
        ("dropped .fbx", &b["fbx"], "CesiumMan.fbx"),
        (
            "dropped optimize --compress output",
            &b["optimized"],
            "CesiumMan.opt.glb",
        ),
    ] {
        assert!(
            r["fatal"].is_null() && r["timed_out"].is_null(),
            "{backend} {what}: {r}"
        );
        assert_eq!(r["model"], model, "{backend} {what}");
        assert!(r["error"].is_null(), "{backend} {what}: {}", r["error"]);
        // On WebGL2 a glTF model opened after the humanoid (drawn whole) is split for the
        // uniform palette.
        if backend == "webgl2" {
            assert!(!r["split"].is_null(), "{backend} {what}: not split");
        }
    }
    // P downloads a PNG of the whole canvas.
    let file = b["download"]["file"]
        .as_str()
        .unwrap_or_else(|| panic!("{backend}: no download: {}", b["download"]));
    let png = image(&out.join(file));
    assert_eq!(
        (png.width, png.height),
        (960, 600),
        "{backend}: downloaded PNG"
    );
    let share = bright_share(&crop(&png, VIEWPORT));
    assert!(
        share >= MIN_MODEL_SHARE,
        "{backend}: the downloaded PNG's viewport looks blank ({share:.3} of it bright)"
    );
    check_crowd(backend, b, out);
    check_curves(backend, b);
    // The golden frame: paused at 1 s.
    clean(&what("golden"), &b["golden"]);
    assert!((num(&b["golden"], "time_s") - 1.0).abs() < 1e-6);
    assert_eq!(b["golden"]["playing"], false);
}

/// `?crowd=20`: the field of Foxes, every character posed, the ones in view uploaded in one
/// write; `]` doubles it; the canvas shows it.
/// `?model=` and the URL field: a model that cannot be had (outside its folder, missing,
/// another site that does not allow it) starts the page on the default model with the reason;
/// the URL field then opens a model; another site's model is read where its server allows it.
fn check_model_urls(backend: &str, b: &Value) {
    for (what, words) in [
        (
            "fetched_escape",
            &[
                "escape.gltf: buffers[0].uri",
                "outside the model's folder on its site",
            ][..],
        ),
        ("fetched_missing", &["no-such-model.glb", "404"]),
        (
            "cross_origin_refused",
            &["Fox.glb", "Access-Control-Allow-Origin"],
        ),
    ] {
        let r = &b[what];
        let error = r["error"].as_str().unwrap_or_default();
        assert!(
            r["fatal"].is_null() && r["model"] == "builtin:humanoid",
            "{backend} {what}: no viewer: {r}"
        );
        assert!(
            words.iter().all(|w| error.contains(w)),
            "{backend} {what}: {error:?} lacks {words:?}"
        );
    }
    // The URL field then opens a model, and shows the one shown; another site's model is
    // read where its server allows it.
    for what in ["url_field_opened", "cross_origin"] {
        let r = &b[what];
        assert!(
            r["fatal"].is_null() && r["timed_out"].is_null() && r["model"] == "Fox.glb",
            "{backend} {what}: {r}"
        );
    }
    assert!(
        b["url_field_opened"]["open_path"]
            .as_str()
            .is_some_and(|p| p.ends_with("Fox.glb")),
        "{backend}: {}",
        b["url_field_opened"]
    );
}

fn check_crowd(backend: &str, b: &Value, out: &Path) {
    let what = |s: &str| format!("{backend}: {s}");
    for (key, n) in [("crowd", 20.0), ("crowd_doubled", 40.0)] {
        clean(&what(key), &b[key]);
        let c = &b[key]["crowd"];
        assert_eq!(num(c, "characters"), n, "{backend} {key}: {c}");
        let visible = num(c, "visible");
        assert!(visible >= 1.0 && visible <= n, "{backend} {key}: {c}");
        assert_eq!(num(c, "palette_writes"), 1.0, "{backend} {key}: {c}");
        assert!(num(c, "upload_bytes") > 0.0, "{backend} {key}: {c}");
    }
    // The foxes are small in a field framed whole: count their orange fur (1.5 % of the strip
    // on SwiftShader, both backends, 2026-11-29; the CesiumMan frame has 0.2 %: the grid's red
    // axis).
    let crowd = crop(
        &image(&out.join(b["crowd_shot"].as_str().unwrap_or_default())),
        VIEWPORT,
    );
    let orange = crowd
        .pixels
        .chunks_exact(4)
        .filter(|p| p[0] > 120 && p[0] as u32 > p[2] as u32 + 60)
        .count() as f64
        / (crowd.width * crowd.height).max(1) as f64;
    assert!(
        orange >= 0.008,
        "{backend}: no foxes in the crowd's viewport ({orange:.4} of it orange)"
    );
}

/// `?curves=1` on the Fox: the dope sheet's rows, a click on the first selecting its bone
/// and drawing its curves with their keys, and `C` closing the panel (CPU data: the same on
/// both backends).
fn check_curves(backend: &str, b: &Value) {
    let what = |s: &str| format!("{backend}: {s}");
    for key in ["curves", "curves_selected", "curves_closed"] {
        clean(&what(key), &b[key]);
    }
    let c = &b["curves"]["curves"];
    assert_eq!(c["open"], true, "{backend}: {c}");
    assert!(
        num(c, "rows") >= 20.0,
        "{backend}: the Fox animates 20+ bones: {c}"
    );
    let c = &b["curves_selected"]["curves"];
    assert!(
        c["bone"].is_string(),
        "{backend}: the click selected no bone: {c}"
    );
    assert!(
        num(c, "channels") >= 1.0 && num(c, "keys") >= 2.0,
        "{backend}: {c}"
    );
    assert!(num(c, "points") >= num(c, "keys"), "{backend}: {c}");
    assert_eq!(b["curves_closed"]["curves"]["open"], false, "{backend}");
}

/// The columns of `img` left of `width`.
fn left_of(img: &Rgba8, width: u32) -> Rgba8 {
    crop(img, (0, 0, width, img.height))
}

/// The rectangle `(x, y, width, height)` of `img` (clipped to it).
fn crop(img: &Rgba8, (x, y, w, h): (u32, u32, u32, u32)) -> Rgba8 {
    let (x0, y0) = (x.min(img.width), y.min(img.height));
    let (x1, y1) = ((x + w).min(img.width), (y + h).min(img.height));
    let pixels = img
        .pixels
        .chunks_exact(img.width as usize * 4)
        .skip(y0 as usize)
        .take((y1 - y0) as usize)
        .flat_map(|row| &row[x0 as usize * 4..x1 as usize * 4])
        .copied()
        .collect();
    Rgba8 {
        width: x1 - x0,
        height: y1 - y0,
        pixels,
    }
}

/// A fresh folder for the browser's output (under the target folder, kept for a look).
fn tempfile_dir() -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("web-test");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    base
}

/// The page `skinview check --html` writes, in headless Chromium: no console error or failed
/// load, every thumbnail and frame picture loaded at its size, and a click on a column header
/// sorts the rows by it (again: reversed; the verdict column sorts by severity, not text), at
/// a phone's width too, where nothing reaches past the page's edge.
#[test]
fn check_page_loads_its_pictures_and_sorts() {
    if let Some(missing) = missing_tools() {
        if common::in_ci() {
            panic!("CI=true and the web tests cannot run: missing {missing}");
        }
        eprintln!(
            "SKIPPED check page test: missing {missing} (scripts/setup.sh --tests installs them)"
        );
        return;
    }
    let out = std::env::temp_dir().join("skinview-check-page");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(out.join("models")).unwrap();
    for stem in ["CesiumMan", "rig_seed1", "rig_seed5_40j_6inf_ushort"] {
        let model = common::model(stem);
        std::fs::copy(&model, out.join("models").join(model.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        out.join("models/broken.glb"),
        b"glTF\x02\x00\x00\x00 not a model",
    )
    .unwrap();
    let page = out.join("page");
    let check = Command::new(env!("CARGO_BIN_EXE_skinview"))
        .arg("check")
        .arg(out.join("models"))
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(1),
        "{}",
        common::output_text(&check)
    );
    let seen = out.join("seen.json");
    run(
        Command::new("node")
            .arg(root().join("tests/web/check_page.mjs"))
            .arg(&page)
            .arg(&seen),
        "tests/web/check_page.mjs",
    );
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    println!("{seen:#}");
    assert_eq!(seen["messages"].as_array().unwrap().len(), 0, "{seen:#}");
    let images = seen["images"].as_array().unwrap();
    assert!(images.len() >= 3, "a thumbnail per drawn model: {seen:#}");
    for i in images {
        assert!(
            i["complete"] == true && i["width"].as_u64().unwrap_or(0) > 0,
            "not loaded: {i}"
        );
    }
    let texts = |key: &str| -> Vec<String> {
        seen[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let mut expected = texts("before");
    assert_eq!(expected.len(), 4);
    expected.sort();
    assert_eq!(texts("sorted"), expected);
    expected.reverse();
    assert_eq!(texts("reversed"), expected);
    let verdicts: Vec<u64> = seen["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(verdicts.windows(2).all(|w| w[0] <= w[1]), "{verdicts:?}");
    // At 400 px nothing reaches past the right edge (a point of rounding allowed).
    let narrow = &seen["narrow"];
    let width = narrow["width"].as_f64().unwrap();
    assert_eq!(width, 400.0, "{narrow}");
    assert!(narrow["scrollWidth"].as_f64().unwrap() <= width, "{narrow}");
    assert!(narrow["right"].as_f64().unwrap() <= width + 1.0, "{narrow}");
}
