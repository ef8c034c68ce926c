//! Golden renders: CesiumMan and Fox mid-animation (and the built-in arm at its 120° end),
//! rendered through the skinning vertex shader and compared with PNGs that were looked at by
//! eye when committed. On mismatch `<name>-actual.png` and `<name>-difference.png` are
//! written next to the golden file. `SKINVIEW_BLESS=1` rewrites the goldens.
//!
//! Thresholds (mean absolute channel difference, 0–255) were set on lavapipe (Mesa 22.3,
//! llvmpipe LLVM 15, 256-bit): identical renders there give 0; other rasterisers differ in
//! MSAA coverage and edge pixels by well under 2.

mod common;

use std::path::PathBuf;

use skinview::gpu::RenderSettings;
use skinview::harness::{self, SkinPath};
use skinview::io::image::Rgba8;

const MEAN_DIFF_THRESHOLD: f64 = 2.0;
/// The CPU-skinned and GPU-skinned renders differ only by f32 rounding of vertices.
const CPU_GPU_RENDER_THRESHOLD: f64 = 0.25;
const SIZE: u32 = 320;

struct Case {
    name: &'static str,
    model: Option<&'static str>,
    anim: usize,
    /// Fraction of the animation's duration.
    at: f32,
}

const CASES: [Case; 3] = [
    Case {
        name: "cesiumman_mid",
        model: Some("CesiumMan"),
        anim: 0,
        at: 0.5,
    },
    Case {
        name: "fox_walk_mid",
        model: Some("Fox"),
        anim: 1,
        at: 0.5,
    },
    Case {
        name: "woodland_arm_120deg",
        model: None,
        anim: 0,
        at: 1.0,
    },
];

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[test]
fn renders_match_golden_images() {
    let Some(ctx) = common::gpu() else { return };
    let bless = std::env::var("SKINVIEW_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for case in &CASES {
        let scene = harness::load_model(case.model.map(common::model).as_deref()).unwrap();
        let t = scene.animations[case.anim].duration_s() * case.at;
        let settings = RenderSettings {
            width: SIZE,
            height: SIZE,
            ..Default::default()
        };
        let gpu =
            harness::render(ctx, &scene, Some(case.anim), t, SkinPath::Gpu, &settings).unwrap();
        let cpu =
            harness::render(ctx, &scene, Some(case.anim), t, SkinPath::Cpu, &settings).unwrap();
        let (cpu_gpu, _) = gpu.difference(&cpu).unwrap();
        assert!(
            cpu_gpu <= CPU_GPU_RENDER_THRESHOLD,
            "{}: CPU- and GPU-skinned renders differ by {cpu_gpu:.3}",
            case.name
        );
        // Something was drawn: enough pixels differ from the background.
        let bg = gpu.pixels[0..4].to_vec();
        let covered = gpu
            .pixels
            .chunks_exact(4)
            .filter(|p| p[..3] != bg[..3])
            .count();
        assert!(
            covered > (SIZE * SIZE / 50) as usize,
            "{}: only {covered} pixels drawn",
            case.name
        );
        let golden = golden_dir().join(format!("{}.png", case.name));
        if bless || !golden.exists() {
            gpu.write_png(&golden).unwrap();
            println!("wrote {}", golden.display());
            if !bless {
                failures.push(format!(
                    "{}: no golden image yet; wrote one, look at it and commit",
                    case.name
                ));
            }
            continue;
        }
        let expected = Rgba8::read_png(&golden).unwrap();
        match gpu.difference(&expected) {
            Some((mean, diff)) => {
                println!(
                    "{}: mean difference {mean:.3} (threshold {MEAN_DIFF_THRESHOLD}), CPU vs GPU render {cpu_gpu:.3}",
                    case.name
                );
                if mean > MEAN_DIFF_THRESHOLD {
                    gpu.write_png(&golden_dir().join(format!("{}-actual.png", case.name)))
                        .unwrap();
                    diff.write_png(&golden_dir().join(format!("{}-difference.png", case.name)))
                        .unwrap();
                    failures.push(format!("{}: mean difference {mean:.3} > {MEAN_DIFF_THRESHOLD}; see {}-actual.png / -difference.png", case.name, case.name));
                }
            }
            None => failures.push(format!("{}: golden image has another size", case.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
