//! The uniform-palette GPU path: each mesh partitioned into submeshes of at most K
//! bones, one draw per submesh with a uniform array of K matrices, the same WGSL `skin()` —
//! read back through the draw's own vertex stage, scattered onto the source vertices and held
//! against the unpartitioned CPU reference; on a device with WebGL2-class limits (no storage
//! buffers at all, no compute) it is chosen by itself; and a render through it matches the
//! storage path's.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::sync::OnceLock;

use skinview::character::CharacterSetup;
use skinview::compare::{CPU_GPU_TOLERANCE_REL, CompareOptions, compare};
use skinview::gpu::{
    CapturePath, DEFAULT_UNIFORM_BONES, GpuContext, PaletteSource, check_source, choose_source,
};
use skinview::partition::PartitionedScene;
use skinview::view::{ViewOptions, render_character_with};

/// The K values the uniform palette is tested at (palettes of 8 to 64 matrices).
const KS: [u32; 6] = [8, 12, 16, 24, 32, 64];

fn anims(scene: &skinview::Scene) -> Vec<Option<usize>> {
    if scene.animations.is_empty() {
        vec![None]
    } else {
        (0..scene.animations.len()).map(Some).collect()
    }
}

/// A device asking for WebGL2-class limits: no storage buffers in any stage, no compute.
fn webgl2() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Result<GpuContext, String>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| {
        GpuContext::new_headless_with_limits(wgpu::Limits::downlevel_webgl2_defaults())
            .map_err(|e| e.to_string())
    });
    match ctx {
        Ok(c) => Some(c),
        Err(e) if common::in_ci() => panic!("CI=true and no GPU adapter: {e}"),
        Err(e) => {
            eprintln!("SKIPPING GPU part: {e}");
            None
        }
    }
}

fn uniform(k: u32) -> CompareOptions {
    CompareOptions {
        frames: 5,
        captures: vec![CapturePath::Draw],
        palette: Some(PaletteSource::Uniform { bones: k }),
        ..Default::default()
    }
}

#[test]
fn uniform_palette_matches_the_unpartitioned_reference_for_every_k_and_model() {
    let Some(ctx) = common::gpu() else { return };
    println!("adapter: {}", ctx.describe());
    let mut failures = Vec::new();
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        for k in KS {
            let cmp = compare(ctx, &scene, &anims(&scene), &uniform(k), |_, _| {}).unwrap();
            let split = cmp.split.unwrap();
            assert_eq!(split.k, k as usize);
            // Every skinned draw became at least one submesh draw.
            let skinned = scene.draws.iter().filter(|d| d.skin.is_some()).count();
            assert!(split.submeshes >= skinned, "{}: {split:?}", scene.name);
            // When fitting dropped influences, what that costs is measured (CPU full vs
            // fitted), beside the GPU comparison.
            let cost = cmp
                .anims
                .iter()
                .all(|a| a.reduction_cost.is_some() == (split.dropped_influences > 0));
            assert!(
                cost,
                "{} K={k}: reduction cost reported iff influences were dropped",
                scene.name
            );
            println!(
                "{:<28} K={k:<2}: {:>3} submesh draws, {:>3} dropped, GPU-CPU max {:.2e} of diagonal",
                scene.name,
                split.submeshes,
                split.dropped_influences,
                cmp.relative(cmp.worst_error())
            );
            if !cmp.passed {
                failures.push(format!("{} K={k}:\n{cmp}", scene.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Tangents on a skinned mesh (normal-mapped assets have them; no shared skinned sample
/// does) and an influence limit both work on the uniform path: the draw-path readback has no
/// tangents and the comparison covers positions and normals; the limit applies before the
/// split, on both sides.
#[test]
fn uniform_palette_with_tangents_and_an_influence_limit() {
    let Some(ctx) = common::gpu() else { return };
    let mut scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let d = scene.draws[0];
    let prim = &mut scene.meshes[d.mesh].primitives[d.primitive];
    prim.tangents = Some(vec![
        glam::Vec4::new(1.0, 0.0, 0.0, 1.0);
        prim.positions.len()
    ]);
    let cmp = compare(ctx, &scene, &[Some(0)], &uniform(12), |_, _| {}).unwrap();
    assert!(cmp.passed, "{cmp}");
    let rig = skinview::io::load(&common::model("rig_seed4_8inf_morph_ubyte")).unwrap();
    let options = CompareOptions {
        max_influences: Some(4),
        ..uniform(8)
    };
    let cmp = compare(ctx, &rig, &anims(&rig), &options, |_, _| {}).unwrap();
    assert!(cmp.passed, "{cmp}");
    // Reducing 8 influences to 4 moves vertices, and the report says how far.
    assert!(cmp.worst_reduction_cost() > 0.0, "{cmp}");
}

/// The same on GL (llvmpipe, through naga's GLSL): `skinview compare --max-bones K` with
/// `WGPU_BACKEND=gl`, every shared model and rig, every K (a process each: the backend is
/// chosen from the environment when the device is made).
#[test]
#[cfg(feature = "cli")]
fn uniform_palette_matches_the_reference_on_gl() {
    if common::gpu().is_none() {
        return;
    }
    let xdg = std::env::temp_dir().join(format!("skinview-gl-{}", std::process::id()));
    std::fs::create_dir_all(&xdg).unwrap();
    let mut failures = Vec::new();
    for path in common::all_models() {
        for k in KS {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
                .args(["compare", path.to_str().unwrap(), "--frames", "2"])
                .args(["--max-bones", &k.to_string()])
                .env("WGPU_BACKEND", "gl")
                .env("XDG_RUNTIME_DIR", &xdg)
                .output()
                .unwrap();
            let text = common::output_text(&o);
            if !o.status.success() || !text.contains("(OpenGL,") {
                failures.push(format!("{} K={k}:\n{text}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_planted_palette_fault_on_the_uniform_path_is_caught() {
    // The comparison must be able to fail: swap two joints of one submesh skin (its palette
    // then maps a local index to the wrong bone) and the GPU result lands far away.
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut part = PartitionedScene::new(&scene, 12).unwrap();
    let skin = part.scene.draws.iter().find_map(|d| d.skin).unwrap();
    part.scene.skins[skin].joints.swap(0, 1);
    let mut gpu_side = CharacterSetup::clip(Some(0))
        .build(&part.scene.clone())
        .unwrap();
    let mut cpu = CharacterSetup::clip(Some(0)).build(&scene.clone()).unwrap();
    let source = PaletteSource::Uniform { bones: 12 };
    let mut readback =
        skinview::gpu::GpuReadback::with_palette(ctx, &part.scene, &gpu_side.frame, None, source)
            .unwrap();
    gpu_side.update(0.5, 0.0).unwrap();
    cpu.update(0.5, 0.0).unwrap();
    let draws: Vec<usize> = (0..part.scene.draws.len()).collect();
    let parts = readback
        .read(
            ctx,
            &gpu_side.scene,
            &gpu_side.frame,
            CapturePath::Draw,
            &draws,
        )
        .unwrap();
    let mut out = cpu.outputs.clone();
    part.scatter(&parts, &mut out).unwrap();
    let (lo, hi) = skinview::skin::bounds(&cpu.outputs).unwrap();
    let worst = cpu.outputs[0]
        .positions
        .iter()
        .zip(&out[0].positions)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    assert!(
        worst as f64 > 100.0 * CPU_GPU_TOLERANCE_REL * lo.distance(hi) as f64,
        "a swapped palette entry moved vertices by only {worst}"
    );
}

#[test]
fn a_device_without_storage_buffers_skins_through_the_uniform_palette() {
    let Some(ctx) = webgl2() else { return };
    println!("adapter: {} (WebGL2 limits)", ctx.describe());
    assert!(
        !ctx.storage_palette(),
        "WebGL2 limits have no vertex-stage storage buffers"
    );
    assert!(!ctx.compute_capture(), "WebGL2 limits have no compute");
    // The storage path is refused with a clear word; the automatic choice is the uniform one.
    let err = check_source(ctx, PaletteSource::Storage)
        .unwrap_err()
        .to_string();
    assert!(err.contains("storage buffers"), "{err}");
    let chosen = choose_source(ctx, None).unwrap();
    assert_eq!(
        chosen,
        PaletteSource::Uniform {
            bones: DEFAULT_UNIFORM_BONES
        }
    );
    // A K the 16 KiB uniform binding cannot hold is refused before any work.
    let err = check_source(ctx, PaletteSource::Uniform { bones: 1024 })
        .unwrap_err()
        .to_string();
    assert!(err.contains("uniform buffers hold"), "{err}");
    // Skins (and morph targets, from a texture there) match the reference on the shared
    // models, with the palette chosen for the device.
    for stem in [
        "CesiumMan",
        "Fox",
        "rig_seed4_8inf_morph_ubyte",
        "MorphStressTest",
    ] {
        let scene = skinview::io::load(&common::model(stem)).unwrap();
        let options = CompareOptions {
            frames: 4,
            captures: vec![CapturePath::Draw],
            palette: None,
            ..Default::default()
        };
        let cmp = compare(ctx, &scene, &anims(&scene), &options, |_, _| {}).unwrap();
        println!(
            "{stem}: {} -> {:.2e}",
            cmp.palette,
            cmp.relative(cmp.worst_error())
        );
        assert!(cmp.palette.contains("uniform"), "{}", cmp.palette);
        assert!(cmp.passed, "{cmp}");
    }
    // Asking for the capture shader there is an error, not a silent skip.
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let options = CompareOptions {
        frames: 2,
        captures: vec![CapturePath::CaptureShader, CapturePath::Draw],
        palette: None,
        ..Default::default()
    };
    assert!(compare(ctx, &scene, &[Some(0)], &options, |_, _| {}).is_err());
}

#[test]
fn a_render_through_the_uniform_palette_matches_the_storage_render() {
    // The same vertices drawn as one draw (storage palette) or as submeshes (uniform palette)
    // rasterise to the same image: skin() computes the same positions from the same
    // matrices, only the draw order differs (depth-tested, opaque).
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut whole = CharacterSetup::clip(Some(0)).build(&scene.clone()).unwrap();
    whole.update(1.0, 0.0).unwrap();
    let part = PartitionedScene::new(&scene, 8).unwrap();
    assert!(part.submesh_count() > 1);
    let mut split = CharacterSetup::clip(Some(0))
        .build(&part.scene.clone())
        .unwrap();
    split.update(1.0, 0.0).unwrap();
    let options = ViewOptions::default();
    let (w, h) = (160, 120);
    let a =
        render_character_with(ctx, &whole, &options, PaletteSource::Storage, None, (w, h)).unwrap();
    let b = render_character_with(
        ctx,
        &split,
        &options,
        PaletteSource::Uniform { bones: 8 },
        None,
        (w, h),
    )
    .unwrap();
    let covered = a
        .pixels
        .chunks(4)
        .filter(|p| p[..3] != a.pixels[..3])
        .count();
    assert!(
        covered * 20 > (w * h) as usize,
        "the model covers only {covered} of {} pixels",
        w * h
    );
    let differing = a
        .pixels
        .chunks(4)
        .zip(b.pixels.chunks(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > 2))
        .count();
    assert!(
        differing * 1000 <= (w * h) as usize,
        "{differing} of {} pixels differ between the storage and uniform renders",
        w * h
    );
}
