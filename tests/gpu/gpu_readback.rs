//! GPU readback (the capture shader, the draw's own vertex stage and the compute-skinning
//! path as drawn, all calling the shared WGSL `skin()`) against the CPU reference
//! for every shared model and rig across each animation, the f32 CPU path against the f64
//! reference, and the `--max-influences` reduction.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use skinview::anim::Pose;
use skinview::compare::{CPU_GPU_TOLERANCE_REL, CompareOptions, compare};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::gpu::CapturePath;
use skinview::skin::SkinnedVertices;
use skinview::skin::reference64::skin_draw_f64;
use skinview::skin::weights::reduce_influences;
use skinview::skin::{NormalMode, SkinOptions};

/// Frames per animation in the test (both ends included).
const FRAMES: usize = 9;

fn anims(scene: &skinview::Scene) -> Vec<Option<usize>> {
    if scene.animations.is_empty() {
        vec![None]
    } else {
        (0..scene.animations.len()).map(Some).collect()
    }
}

#[test]
fn gpu_matches_cpu_reference_on_every_model_and_animation() {
    let Some(ctx) = common::gpu() else { return };
    println!("adapter: {}", ctx.describe());
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut models = common::all_models();
    models.push("builtin".into());
    for path in models {
        let scene = if path.as_os_str() == "builtin" {
            skinview::builtin::woodland_arm().unwrap()
        } else {
            skinview::io::load(&path).unwrap()
        };
        // Both captures of the vertex-shader path, and the compute-skinning path as drawn.
        let options = CompareOptions {
            frames: FRAMES,
            captures: vec![
                CapturePath::CaptureShader,
                CapturePath::Draw,
                CapturePath::ComputePass,
            ],
            ..Default::default()
        };
        let cmp = compare(ctx, &scene, &anims(&scene), &options, |_, _| {}).unwrap();
        assert_eq!(cmp.anims[0].captures.len(), 3);
        let worst = cmp
            .anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_error)
            .fold(0.0, f64::max);
        let worst_n = cmp
            .anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_normal_error)
            .fold(0.0, f64::max);
        println!(
            "{:<32} {} anims x {FRAMES} frames: max {:.2e} of diagonal, normals {:.2e}",
            scene.name,
            cmp.anims.len(),
            worst / cmp.diagonal,
            worst_n
        );
        compared += cmp.anims.iter().map(|a| a.draws.len()).sum::<usize>();
        if !cmp.passed {
            failures.push(format!(
                "{}: {:.3e} of diagonal > {CPU_GPU_TOLERANCE_REL:e}",
                scene.name,
                worst / cmp.diagonal
            ));
        }
        // Unit normals agree to f32 precision (degenerate blends may differ: none in these models).
        if worst_n > 1e-5 {
            failures.push(format!("{}: normals differ by {worst_n:.3e}", scene.name));
        }
    }
    assert!(compared > 100, "compared only {compared} draw-animations");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cpu_f32_matches_f64_reference() {
    let mut models = common::all_models();
    models.push("builtin".into());
    for path in models {
        let scene = if path.as_os_str() == "builtin" {
            skinview::builtin::woodland_arm().unwrap()
        } else {
            skinview::io::load(&path).unwrap()
        };
        let mut frame = FrameState::new(&scene);
        let mut sk = CpuSkinner::new(&scene, None);
        let mut worst_rel: f64 = 0.0;
        for anim in anims(&scene) {
            for t in skinview::compare::run::frame_times(&scene, anim, 5) {
                frame.evaluate(&scene, anim, t).unwrap();
                let pose: &Pose = &frame.pose;
                let mut lo = glam::DVec3::splat(f64::MAX);
                let mut hi = glam::DVec3::splat(f64::MIN);
                let mut errs = Vec::new();
                for i in 0..scene.draws.len() {
                    let mut out = SkinnedVertices::default();
                    sk.skin_draw(&scene, &frame, i, &mut out).unwrap();
                    let r = skin_draw_f64(&scene, pose, i, None);
                    for (a, b) in out.positions.iter().zip(&r.positions) {
                        lo = lo.min(*b);
                        hi = hi.max(*b);
                        errs.push((a.as_dvec3() - *b).length());
                    }
                    if let (Some(na), Some(nb)) = (&out.normals, &r.normals) {
                        for (a, b) in na.iter().zip(nb) {
                            let e = (a.as_dvec3() - *b).length();
                            assert!(
                                e < 1e-5,
                                "{}: normal differs from f64 by {e:.3e}",
                                scene.name
                            );
                        }
                    }
                }
                let diag = (hi - lo).length();
                let worst = errs.iter().copied().fold(0.0, f64::max);
                worst_rel = worst_rel.max(worst / diag);
            }
        }
        println!(
            "{:<32} f32 vs f64: {:.2e} of diagonal",
            scene.name, worst_rel
        );
        assert!(
            worst_rel < 1e-5,
            "{}: f32 CPU path differs from the f64 reference by {worst_rel:.3e} of the diagonal",
            scene.name
        );
    }
}

/// `--max-influences 4` on the 6- and 8-influence rigs: GPU and CPU agree on the reduced
/// weights, the reduction is reported (vertices changed, non-zero cost), and the reduced
/// weights are the 4 largest renormalised (checked against a direct computation).
#[test]
fn max_influences_reduction_is_applied_on_both_paths_and_costed() {
    for stem in ["rig_seed4_8inf_morph_ubyte", "rig_seed5_40j_6inf_ushort"] {
        let scene = skinview::io::load(&common::model(stem)).unwrap();
        let w = scene
            .primitive(&scene.draws[0])
            .skin_weights
            .clone()
            .unwrap();
        let (r, stats) = reduce_influences(&w, 4);
        assert!(
            stats.max_influences_before > 4
                && stats.max_influences_after == 4
                && stats.vertices_reduced > 0,
            "{stem}: {stats:?}"
        );
        for v in 0..w.vertex_count() {
            let mut pairs: Vec<(u32, f32)> = (0..w.width)
                .map(|k| (w.joints[v * w.width + k], w.weights[v * w.width + k]))
                .filter(|p| p.1 > 0.0)
                .collect();
            pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
            pairs.truncate(4);
            let sum: f32 = pairs.iter().map(|p| p.1).sum();
            let got: f32 = r.weights[v * r.width..(v + 1) * r.width].iter().sum();
            assert!(
                (got - 1.0).abs() < 1e-5,
                "{stem} vertex {v}: reduced weights sum to {got}"
            );
            for (j, wt) in pairs {
                let k = (0..r.width)
                    .find(|&k| r.joints[v * r.width + k] == j && r.weights[v * r.width + k] > 0.0)
                    .expect("kept joint");
                assert!((r.weights[v * r.width + k] - wt / sum).abs() < 1e-6);
            }
        }
        let Some(ctx) = common::gpu() else { continue };
        let options = CompareOptions {
            frames: 5,
            max_influences: Some(4),
            ..Default::default()
        };
        let cmp = compare(ctx, &scene, &anims(&scene), &options, |_, _| {}).unwrap();
        assert!(cmp.passed, "{stem}: GPU differs from CPU with 4 influences");
        assert_eq!(cmp.vertices_reduced, stats.vertices_reduced);
        let cost = cmp
            .anims
            .iter()
            .flat_map(|a| a.reduction_cost.as_ref().unwrap())
            .map(|d| d.max_error)
            .fold(0.0, f64::max);
        println!(
            "{stem}: reducing to 4 influences moves vertices by up to {:.2e} of the diagonal",
            cost / cmp.diagonal
        );
        assert!(
            cost > 1e-5 * cmp.diagonal,
            "{stem}: reduction cost {cost:e} suspiciously small"
        );
    }
}

/// The draw-path capture reads back the real draw's vertex fetch: with position and normal
/// swapped in the vertex layout (a planted fault), the draw-path comparison fails while the
/// capture shader, which loads vertices from storage buffers, still passes; with the real
/// layout both pass.
#[test]
fn draw_path_capture_catches_a_planted_vertex_layout_fault() {
    use skinview::character::CharacterSetup;
    use skinview::compare::DrawErrors;
    use skinview::gpu::{DrawCapture, GpuReadback, VertexLayout};
    let Some(ctx) = common::gpu() else { return };
    let swapped = |sets, packing| {
        let mut l = VertexLayout::skinned(sets, packing);
        // Slot 0 feeds location 0 (position), slot 1 location 1 (normal): swap them.
        let slot = |l: &mut VertexLayout, i: usize| {
            l.slots[i].as_mut().expect("slot").attributes[0].shader_location
        };
        let (a, b) = (slot(&mut l, 0), slot(&mut l, 1));
        l.slots[0].as_mut().expect("slot").attributes[0].shader_location = b;
        l.slots[1].as_mut().expect("slot").attributes[0].shader_location = a;
        l
    };
    for path in [
        common::model("CesiumMan"),
        common::model("rig_seed4_8inf_morph_ubyte"),
    ] {
        let scene = skinview::io::load(&path).unwrap();
        let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
        let t = c.scene.animations[0].duration_s() * 0.4;
        c.update(t, 0.0).unwrap();
        let draws: Vec<usize> = (0..c.scene.draws.len()).collect();
        let (lo, hi) = skinview::skin::bounds(&c.outputs).unwrap();
        let limit = CPU_GPU_TOLERANCE_REL * (hi - lo).length() as f64;
        let worst = |capture: DrawCapture, path: CapturePath| {
            let mut g =
                GpuReadback::with_draw_capture(ctx, &c.scene, &c.frame, None, capture).unwrap();
            let out = g.read(ctx, &c.scene, &c.frame, path, &draws).unwrap();
            draws
                .iter()
                .map(|&d| {
                    let mut e = DrawErrors::new(&c.scene, d);
                    e.add(t, &c.outputs[d], &out[d]);
                    e.max_error
                })
                .fold(0.0, f64::max)
        };
        let faulty = || DrawCapture::with_layouts(ctx, swapped).unwrap();
        let good = worst(DrawCapture::new(ctx).unwrap(), CapturePath::Draw);
        let caught = worst(faulty(), CapturePath::Draw);
        let compute = worst(faulty(), CapturePath::CaptureShader);
        println!(
            "{}: draw path {good:.2e} (real layout), {caught:.2e} (swapped); compute {compute:.2e}; limit {limit:.2e}",
            c.scene.name
        );
        assert!(good <= limit, "real layout: {good:e} > {limit:e}");
        assert!(
            caught > 100.0 * limit,
            "swapped layout not caught: {caught:e}"
        );
        assert!(compute <= limit, "capture shader: {compute:e}");
    }
}

/// A fault that leaves positions right but normals wrong (the normal buffer read with stride
/// 0: every vertex gets vertex 0's normal) fails the comparison through the normal tolerance.
#[test]
fn draw_path_capture_judges_normals_too() {
    use skinview::character::CharacterSetup;
    use skinview::compare::{DrawErrors, NORMAL_TOLERANCE};
    use skinview::gpu::{DrawCapture, GpuReadback, VertexLayout};
    let Some(ctx) = common::gpu() else { return };
    let stride0 = |sets, packing| {
        let mut l = VertexLayout::skinned(sets, packing);
        l.slots[1].as_mut().expect("normal slot").stride = 0;
        l
    };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(0.7, 0.0).unwrap();
    let capture = DrawCapture::with_layouts(ctx, stride0).unwrap();
    let mut g = GpuReadback::with_draw_capture(ctx, &c.scene, &c.frame, None, capture).unwrap();
    let out = g
        .read(ctx, &c.scene, &c.frame, CapturePath::Draw, &[0])
        .unwrap();
    let mut e = DrawErrors::new(&c.scene, 0);
    e.add(0.7, &c.outputs[0], &out[0]);
    let (lo, hi) = skinview::skin::bounds(&c.outputs).unwrap();
    let limit = CPU_GPU_TOLERANCE_REL * (hi - lo).length() as f64;
    println!(
        "positions {:.2e} (limit {limit:.2e}), normals {:.2e}",
        e.max_error, e.max_normal_error
    );
    assert!(
        e.max_error <= limit,
        "positions should be untouched: {:e}",
        e.max_error
    );
    assert!(
        e.max_normal_error > 100.0 * NORMAL_TOLERANCE,
        "normal fault not seen"
    );
}

/// The comparison measures the CPU normals against the skinned surface's own: on a rig with
/// non-uniform joint scale the blended 3×3 is further from the surface than the exact
/// inverse-transpose (Ribeiro, "Mesh Skinning"; Marschner, "Real time geometric deformations"); on
/// CesiumMan (rotations only) the two agree; the bind baseline does not depend on the mode.
#[test]
fn comparison_measures_normals_against_the_skinned_surface() {
    let Some(ctx) = common::gpu() else { return };
    let measure = |stem: &str, normals: NormalMode| {
        let scene = skinview::io::load(&common::model(stem)).unwrap();
        let options = CompareOptions {
            frames: 6,
            captures: vec![skinview::gpu::CapturePath::CaptureShader],
            skin: SkinOptions {
                normals,
                ..Default::default()
            },
            ..Default::default()
        };
        let cmp = compare(ctx, &scene, &anims(&scene)[..1], &options, |_, _| {}).unwrap();
        let n = cmp.anims[0].surface_normals[0].clone();
        assert!(n.mean_deg.is_finite() && n.max_deg >= n.mean_deg, "{n:?}");
        n
    };
    let (exact, blend) = (
        measure("rig_seed1", NormalMode::Exact),
        measure("rig_seed1", NormalMode::Blend3x3),
    );
    eprintln!(
        "rig_seed1: exact {:.2} deg, blend3x3 {:.2} deg",
        exact.mean_deg, blend.mean_deg
    );
    assert_eq!(exact.bind_mean_deg, blend.bind_mean_deg);
    assert!(
        blend.mean_deg > 1.5 * exact.mean_deg,
        "{} vs {}",
        blend.mean_deg,
        exact.mean_deg
    );
    let (exact, blend) = (
        measure("CesiumMan", NormalMode::Exact),
        measure("CesiumMan", NormalMode::Blend3x3),
    );
    assert!(
        (exact.mean_deg - blend.mean_deg).abs() < 0.05,
        "{exact:?} {blend:?}"
    );
}

/// Batched comparison (several frames' palettes skinned in one pass per capture path and read
/// back together) gives the same report, to the bit, as one frame at a time: CesiumMan and the
/// built-in arm over 11 frames in batches of 4 (a short last batch) and the automatic batch,
/// through all three capture paths.
#[test]
fn batched_comparison_equals_frame_by_frame() {
    let Some(ctx) = common::gpu() else { return };
    let cesium = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let arm = skinview::builtin::woodland_arm().unwrap();
    for scene in [cesium, arm] {
        let run = |batch| {
            let options = CompareOptions {
                frames: 11,
                captures: vec![
                    CapturePath::CaptureShader,
                    CapturePath::Draw,
                    CapturePath::ComputePass,
                ],
                batch,
                ..Default::default()
            };
            let mut ticks = Vec::new();
            let cmp = compare(ctx, &scene, &anims(&scene), &options, |done, total| {
                ticks.push((done, total))
            })
            .unwrap();
            (serde_json::to_value(&cmp.anims).unwrap(), ticks)
        };
        let (one, ticks_one) = run(Some(1));
        let (four, ticks_four) = run(Some(4));
        let (auto, _) = run(None);
        assert_eq!(one, four, "{}: batches of 4", scene.name);
        assert_eq!(one, auto, "{}: the automatic batch", scene.name);
        // Progress counts frames: every frame once, batches of 4 in 3 steps per clip.
        let total = 11 * anims(&scene).len();
        assert_eq!(ticks_one.last(), Some(&(total, total)));
        assert_eq!(
            ticks_four.len(),
            1 + 3 * anims(&scene).len(),
            "{ticks_four:?}"
        );
    }
}

/// `draws` of `scene` as the CPU reference `cpu` skins them in `frame` (each with its own
/// options).
pub(crate) fn cpu_skin_draws(
    cpu: &mut CpuSkinner,
    scene: &skinview::Scene,
    frame: &FrameState,
    draws: &[usize],
) -> Vec<SkinnedVertices> {
    draws
        .iter()
        .map(|&d| {
            let mut out = SkinnedVertices::default();
            cpu.skin_draw(scene, frame, d, &mut out).unwrap();
            out
        })
        .collect()
}

/// One upload whose draws skin with different blends (CesiumMan's mesh drawn three times:
/// LBS, DQS and stitching) reads back, through the capture shader, the draw and the compute
/// pass, each draw as the CPU reference skins it with its own blend: the pipelines are made
/// per blend (src/gpu/variants.rs), and each draw must get its own. The blends differ here by
/// far more than the tolerance (checked), so a draw on another blend's pipeline fails.
#[test]
fn each_draw_skins_with_its_own_blend_on_every_path() {
    let Some(ctx) = common::gpu() else { return };
    let mut scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    scene.draws = vec![scene.draws[0]; 3];
    let draws: Vec<usize> = (0..scene.draws.len()).collect();
    let blend_of = |d: usize| skinview::skin::SkinMode::ALL[d % 3];
    let mut frame = FrameState::new(&scene);
    let mut readback = skinview::gpu::GpuReadback::new(ctx, &scene, &frame, None).unwrap();
    let mut cpu = CpuSkinner::new(&scene, None);
    let mut lbs = CpuSkinner::new(&scene, None);
    for &d in &draws {
        let options = SkinOptions {
            mode: blend_of(d),
            ..Default::default()
        };
        cpu.set_draw_options(&scene, d, options);
        readback.gpu.set_skin_options(ctx, d, options);
    }
    let duration = scene.animations[0].duration_s();
    let diagonal = {
        frame.evaluate(&scene, Some(0), 0.0).unwrap();
        let rest = cpu_skin_draws(&mut cpu, &scene, &frame, &draws);
        let (lo, hi) = skinview::skin::bounds(&rest).unwrap();
        f64::from((hi - lo).length())
    };
    let mut blends_apart = 0.0f64;
    for t in [duration * 0.3, duration * 0.7] {
        frame.evaluate(&scene, Some(0), t).unwrap();
        for path in [
            CapturePath::CaptureShader,
            CapturePath::Draw,
            CapturePath::ComputePass,
        ] {
            let gpu = readback.read(ctx, &scene, &frame, path, &draws).unwrap();
            for (&d, g) in draws.iter().zip(&gpu) {
                let mut want = SkinnedVertices::default();
                cpu.skin_draw(&scene, &frame, d, &mut want).unwrap();
                let mut plain = SkinnedVertices::default();
                lbs.skin_draw(&scene, &frame, d, &mut plain).unwrap();
                for (v, (a, b)) in want.positions.iter().zip(&g.positions).enumerate() {
                    let e = f64::from((*a - *b).length()) / diagonal;
                    assert!(
                        e < CPU_GPU_TOLERANCE_REL,
                        "draw {d} ({:?}) vertex {v} at {t} s through the {}: {e:.2e} of the \
                         diagonal",
                        blend_of(d),
                        path.name()
                    );
                }
                if blend_of(d) != skinview::skin::SkinMode::Lbs {
                    for (a, b) in want.positions.iter().zip(&plain.positions) {
                        blends_apart = blends_apart.max(f64::from((*a - *b).length()) / diagonal);
                    }
                }
            }
        }
    }
    assert!(
        blends_apart > 100.0 * CPU_GPU_TOLERANCE_REL,
        "the blends differ by only {blends_apart:.2e} of the diagonal here"
    );
}

/// `compare::run::Source`, built on who skins: each skinning's readback is the GPU code it
/// runs (the compute-skinned buffer for compute skinning; the capture shader on the storage
/// palette for the vertex shader, the draw's vertex stage on the uniform one), a readback of
/// other code than the skinning's is refused with words, and the CPU reference has none.
#[test]
fn each_skinning_is_read_back_by_its_own_code() {
    use skinview::compare::run::Source;
    use skinview::gpu::{PaletteSource, Skinning};
    let Some(ctx) = common::gpu() else { return };
    let storage = PaletteSource::Storage;
    let uniform = PaletteSource::Uniform { bones: 64 };
    let read = |s: Source, p| s.readback(ctx, p).map_err(|e| e.to_string());
    assert_eq!(
        read(Source::of(Skinning::ComputePass), storage),
        Ok(CapturePath::ComputePass)
    );
    let vertex_default = match ctx.compute_capture() {
        true => CapturePath::CaptureShader,
        false => CapturePath::Draw,
    };
    assert_eq!(
        read(Source::of(Skinning::VertexShader), storage),
        Ok(vertex_default)
    );
    assert_eq!(
        read(Source::of(Skinning::VertexShader), uniform),
        Ok(CapturePath::Draw)
    );
    for path in [
        CapturePath::CaptureShader,
        CapturePath::Draw,
        CapturePath::ComputePass,
    ] {
        assert_eq!(read(Source::gpu(path), storage), Ok(path), "{path:?}");
    }
    let refused = [
        (
            Source {
                capture: Some(CapturePath::Draw),
                ..Source::of(Skinning::ComputePass)
            },
            "compute skinning",
        ),
        (
            Source {
                capture: Some(CapturePath::ComputePass),
                ..Source::of(Skinning::VertexShader)
            },
            "vertex shader",
        ),
        (Source::CPU, "CPU reference"),
    ];
    for (source, says) in refused {
        let e = read(source, storage).unwrap_err();
        assert!(e.contains(says), "{source:?}: {e}");
    }
}
