//! Golden renders: CesiumMan and Fox mid-animation (textured) and the built-in arm at its 120°
//! end, rendered through the skinning vertex shader; and the viewport's modes headless
//! (skeleton and grid, the three bone styles, weights, bone colours, CPU | GPU split, error
//! heatmap, wireframe).
//! Compared with PNGs that were looked at by eye when committed (tests/common/golden.rs: the
//! threshold, set on lavapipe, and the `-actual` / `-difference` images on mismatch;
//! `SKINVIEW_BLESS=1` rewrites the goldens).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;
use crate::common::golden::{bless, check_golden, golden_dir};

use skinview::character::{Character, CharacterSetup};
use skinview::gpu::{ColorMode, Skinning};
use skinview::image::Rgba8;
use skinview::io::png;
use skinview::view::ViewOptions;
use skinview::view::skeleton::BoneStyle;

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

#[test]
fn renders_match_golden_images() {
    let Some(ctx) = common::gpu() else { return };
    let mut failures = Vec::new();
    for case in &CASES {
        let scene = match case.model {
            Some(m) => skinview::io::load(&common::model(m)).unwrap(),
            None => skinview::builtin::woodland_arm().unwrap(),
        };
        let t = scene.animations[case.anim].duration_s() * case.at;
        let mut c = CharacterSetup::clip(Some(case.anim)).build(&scene).unwrap();
        c.update(t, 0.0).unwrap();
        let render = |skinning| {
            let options = ViewOptions {
                skinning,
                ..Default::default()
            };
            skinview::view::render_character(ctx, &c, &options, SIZE, SIZE).unwrap()
        };
        let (gpu, cpu) = (render(Skinning::VertexShader), render(Skinning::Cpu));
        let (cpu_gpu, _) = gpu.difference(&cpu).unwrap();
        println!("{}: CPU vs GPU render {cpu_gpu:.3}", case.name);
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
        failures.extend(check_golden(
            &golden_dir(),
            case.name,
            &gpu,
            &ctx.describe(),
            bless(),
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the viewport draws, headless (the viewer's twin): skeleton and grid, one bone's
/// weights, bone colours, CPU | GPU side by side, the |GPU − CPU| heatmap, the wireframe.
#[test]
fn view_modes_match_golden_images() {
    let Some(ctx) = common::gpu() else { return };
    let cesium = || {
        let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
        let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
        c.update(1.0, 0.0).unwrap();
        c
    };
    let fox = || {
        let scene = skinview::io::load(&common::model("Fox")).unwrap();
        let mut c = CharacterSetup::clip(Some(1)).build(&scene).unwrap();
        c.update(0.35, 0.0).unwrap();
        c
    };
    let humanoid = || {
        let mut c = Character::humanoid_demo().unwrap();
        c.play_to(1.0).unwrap();
        c
    };
    let arm_bent = || {
        let scene = skinview::builtin::woodland_arm().unwrap();
        let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
        c.update(scene.animations[0].duration_s(), 0.0).unwrap();
        c
    };
    type Setup = fn(&Character) -> ViewOptions;
    type Case<'a> = (&'a str, &'a dyn Fn() -> Character, Setup, (u32, u32));
    let cases: [Case; 9] = [
        (
            "woodland_arm_skeleton_bent",
            &arm_bent,
            |_| ViewOptions {
                skeleton: true,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "fox_skeleton_spheres",
            &fox,
            |_| ViewOptions {
                skeleton: true,
                bone_style: BoneStyle::Spheres,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "cesiumman_skeleton_stick",
            &cesium,
            |_| ViewOptions {
                skeleton: true,
                bone_style: BoneStyle::Stick,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "humanoid_skeleton_grid",
            &humanoid,
            |_| ViewOptions {
                skeleton: true,
                grid: true,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "cesiumman_weights_arm",
            &cesium,
            |c| ViewOptions {
                color_mode: ColorMode::Weights,
                selected_node: Some(c.scene.find_node("Skeleton_arm_joint_L__3_").unwrap()),
                skeleton: true,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "fox_bone_colours",
            &fox,
            |_| ViewOptions {
                color_mode: ColorMode::Bones,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "cesiumman_split",
            &cesium,
            |_| ViewOptions {
                split: true,
                ..Default::default()
            },
            (2 * SIZE, SIZE),
        ),
        (
            "cesiumman_diff",
            &cesium,
            |_| ViewOptions {
                color_mode: ColorMode::Errors,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
        (
            "fox_wireframe",
            &fox,
            |_| ViewOptions {
                wireframe: true,
                ..Default::default()
            },
            (SIZE, SIZE),
        ),
    ];
    let mut failures = Vec::new();
    for (name, make, options, (w, h)) in cases {
        let c = make();
        let img = skinview::view::render_character(ctx, &c, &options(&c), w, h).unwrap();
        failures.extend(check_golden(
            &golden_dir(),
            name,
            &img,
            &ctx.describe(),
            bless(),
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A mismatch leaves `-actual` and `-difference` images tagged with the adapter.
#[test]
fn a_mismatch_writes_tagged_actual_and_difference_images() {
    let Some(ctx) = common::gpu() else { return };
    let golden = png::read(&golden_dir().join("woodland_arm_120deg.png")).unwrap();
    // The golden with a block painted over: far above the threshold.
    let mut wrong = golden.clone();
    for y in 0..wrong.height as usize / 2 {
        for x in 0..wrong.width as usize / 2 {
            let i = (y * wrong.width as usize + x) * 4;
            wrong.pixels[i..i + 4].copy_from_slice(&[255, 0, 255, 255]);
        }
    }
    let name = "woodland_arm_120deg";
    let dir = std::env::temp_dir().join(format!("skinview-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        golden_dir().join(format!("{name}.png")),
        dir.join(format!("{name}.png")),
    )
    .unwrap();
    let message = check_golden(&dir, name, &wrong, &ctx.describe(), false).expect("a mismatch");
    assert!(message.contains(&ctx.describe()), "{message}");
    for suffix in ["actual", "difference"] {
        let p = dir.join(format!("{name}-{suffix}.png"));
        let text = png::read_text(&p).unwrap();
        assert!(
            text.iter()
                .any(|(k, v)| k == "Adapter" && *v == ctx.describe()),
            "{}: {text:?}",
            p.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The error heatmap shows real errors: the CPU result of part of CesiumMan moved by 1e-3 of
/// the diagonal (a hundred times the comparison's tolerance) turns those vertices red, while
/// the untouched render has no red at all.
#[test]
fn the_error_heatmap_shows_a_planted_error_in_red() {
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(1.0, 0.0).unwrap();
    let options = ViewOptions {
        color_mode: ColorMode::Errors,
        ..Default::default()
    };
    let red = |img: &Rgba8| {
        img.pixels
            .chunks_exact(4)
            .filter(|p| p[0] > 200 && p[1] < 90 && p[2] < 90)
            .count()
    };
    let clean = skinview::view::render_character(ctx, &c, &options, SIZE, SIZE).unwrap();
    let (lo, hi) = skinview::skin::bounds(&c.outputs).unwrap();
    let offset = (hi - lo).length() * 1e-3;
    let n = c.outputs[0].positions.len();
    for p in &mut c.outputs[0].positions[..n / 3] {
        p.x += offset;
    }
    let planted = skinview::view::render_character(ctx, &c, &options, SIZE, SIZE).unwrap();
    println!(
        "red pixels: {} clean, {} planted",
        red(&clean),
        red(&planted)
    );
    assert_eq!(red(&clean), 0);
    assert!(
        red(&planted) > 500,
        "planted error not shown: {} red pixels",
        red(&planted)
    );
}
