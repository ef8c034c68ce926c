//! Shared test helpers: where the shared test data lives, and the GPU context policy
//! (in CI a missing adapter is a failure, locally a loud skip).
#![allow(dead_code)]
#![allow(clippy::print_stdout, clippy::print_stderr)] // test support reports what it skips

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use skinview::Scene;
use skinview::gpu::{CapturePath, GpuContext};
use skinview::io::dump::Dump;

pub use skinview::compare::run::Source;

/// GPU skinning through the capture shader (what `dump --path gpu` writes by default).
pub const GPU: Source = Source::gpu(CapturePath::CaptureShader);

/// The `dump` exchange format of the deformed draws at `times` of `anim`, from `source`.
pub fn dump(
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    source: Source,
    ctx: Option<&GpuContext>,
    max_influences: Option<usize>,
) -> skinview::Result<Dump> {
    let draws = scene.deformed_draw_indices();
    let frames =
        skinview::compare::sample_frames(ctx, scene, anim, times, &draws, source, max_influences)?;
    Ok(Dump::new(scene, anim, times, &frames))
}

/// Binary glTF surgery (split, edit, re-pack, patch accessor elements).
pub mod glb;
/// gltfpack's quantised and compressed copies of the shared models, made at test time.
pub mod gltfpack;
/// What gltfpack's default settings change, applied to a scene (to bound its output).
pub mod gltfpack_model;

/// FBX files Blender wrote from the shared models (scripts/make-fbx-test-data.sh).
pub mod fbx;

/// The Khronos glTF-Validator over files the tests write.
pub mod validator;

/// Golden-image comparison (renders and `render` images with legends).
pub mod golden;
/// Characters for the retargeting tests (made from the built-in humanoid).
pub mod retarget;
/// Deterministic generated rigs (seeded skeleton, tube skin, morph targets, animations).
pub mod rigs;
/// The seeded pseudo-random generators (one file, shared with the benches and the example).
pub mod rng;

/// The test data: `$SKINVIEW_SHARED` (when set and not empty), else `../shared` beside the
/// repository, else `tests/data` (made by `scripts/setup.sh --tests` when there is no
/// `../shared`).
pub fn shared_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("SKINVIEW_SHARED").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.join("models").is_dir(),
            "SKINVIEW_SHARED={} has no models/ folder: point it at the test data (the folder \
             with models/, rigs/ and oracle_ref/), or unset it to use ../shared or tests/data",
            p.display()
        );
        return p;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared");
    if shared.join("models").is_dir() && shared.join("oracle_ref").is_dir() {
        return shared;
    }
    // Made by scripts/fetch-test-data.sh, which marks it complete last.
    let data = root.join("tests/data");
    if data.join(".complete").is_file() {
        return data;
    }
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    panic!(
        "test data not found. Looked in: $SKINVIEW_SHARED (unset), {} (no models/ and \
         oracle_ref/), {} (not made yet). Run `scripts/setup.sh --tests` (it downloads the \
         Khronos sample models into tests/data and makes the rigs and reference outputs), or \
         set SKINVIEW_SHARED=/path/to/shared (the folder with models/, rigs/, oracle_ref/).",
        abs(&shared).display(),
        abs(&data).display()
    )
}

/// Every shared model and rig file.
pub fn all_models() -> Vec<PathBuf> {
    let shared = shared_dir();
    let mut v = Vec::new();
    for dir in ["models", "rigs"] {
        let mut entries: Vec<PathBuf> = walk(&shared.join(dir));
        // .glb files, and .gltf files with no .glb beside them (tests/data keeps the two
        // embedded samples as they are published).
        let glbs: Vec<PathBuf> = entries
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "glb"))
            .cloned()
            .collect();
        entries.retain(|p| {
            p.extension().is_some_and(|e| e == "glb")
                || (p.extension().is_some_and(|e| e == "gltf")
                    && !glbs.contains(&p.with_extension("glb")))
        });
        entries.sort();
        v.extend(entries);
    }
    assert!(
        v.len() >= 16,
        "expected the 11 sample models and 5 rigs in {} (models/ and rigs/), found {}: the \
         test data is incomplete; run `scripts/setup.sh --tests` or point SKINVIEW_SHARED at a \
         complete copy",
        std::path::absolute(&shared)
            .unwrap_or_else(|_| shared.clone())
            .display(),
        v.len()
    );
    v
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p))
            } else {
                out.push(p)
            }
        }
    }
    out
}

/// Find a shared model or rig by file stem.
pub fn model(stem: &str) -> PathBuf {
    all_models()
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == stem))
        .unwrap_or_else(|| panic!("model {stem} not in shared data"))
}

/// A finished process's stdout and stderr, as one text for messages and searches.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A drawn polyline's value at `t`: between its two vertices around `t`; at a vertical step
/// (two vertices at one time, as STEP keys draw) the value after it.
pub fn polyline_at(line: &[[f64; 2]], t: f64) -> f64 {
    let k = line.partition_point(|p| p[0] <= t).clamp(1, line.len() - 1);
    let ([t0, v0], [t1, v1]) = (line[k - 1], line[k]);
    if t1 <= t0 {
        return v1;
    }
    v0 + (v1 - v0) * ((t - t0) / (t1 - t0)).clamp(0.0, 1.0)
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The headless GPU context, created once per test binary. `None` (with a message) when no
/// adapter exists outside CI; in CI that is a test failure.
/// (lavapipe only warns without `XDG_RUNTIME_DIR`; `.ci/run` sets one.)
pub fn gpu() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Result<GpuContext, String>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| GpuContext::new_headless().map_err(|e| e.to_string()));
    match ctx {
        Ok(c) => Some(c),
        Err(e) if in_ci() => panic!("CI=true and no GPU adapter: {e}"),
        Err(e) => {
            eprintln!("SKIPPING GPU part: {e}");
            None
        }
    }
}

/// Fineness of [`f32s`] and [`f64s`]: 2²⁴ evenly spaced values over the range (f32's mantissa).
const FLOAT_STEPS: u32 = 1 << 24;

/// Floats in `r` (start included, end not) for proptest, drawn as integers and scaled.
/// proptest's own float range sampler trips its debug assertion `self.low - result <
/// initial.step` on some seeds (proptest 1.10–1.12; other projects replaced it the same way),
/// which failed a property test at random; integers shrink towards `r.start`.
pub fn f32s(r: std::ops::Range<f32>) -> impl proptest::strategy::Strategy<Value = f32> + Clone {
    use proptest::strategy::Strategy;
    (0..FLOAT_STEPS).prop_map(move |k| {
        let v = r.start + (r.end - r.start) * (k as f32 / FLOAT_STEPS as f32);
        v.min(r.end.next_down())
    })
}

/// [`f32s`] for f64.
pub fn f64s(r: std::ops::Range<f64>) -> impl proptest::strategy::Strategy<Value = f64> + Clone {
    use proptest::strategy::Strategy;
    (0..FLOAT_STEPS)
        .prop_map(move |k| r.start + (r.end - r.start) * (k as f64 / FLOAT_STEPS as f64))
}
