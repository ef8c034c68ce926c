//! The crowd and the compute-skinning path: every instance of a crowd, drawn by the
//! vertex-shader path (instanced) and by the compute-skinning path (skinned buffer, plain
//! vertex shader), read back through the draw and compared with the CPU reference of that
//! instance's own frame moved to its place; the crowd benchmark's report and picture; the
//! compute path's limits and refusals.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use glam::{Mat4, Vec3};
use skinview::character::{Character, CharacterSetup};
use skinview::compare::{CPU_GPU_TOLERANCE_REL, DrawErrors};
use skinview::gpu::compute_skin::DispatchOrder;
use skinview::gpu::{DrawCapture, GpuScene, PaletteSource, Skinning};
use skinview::skin::{SkinMode, SkinOptions, SkinnedVertices};

/// Where the test puts instance `i`: far enough apart that a palette read from the wrong
/// block is off by metres, not by the tolerance.
fn offset(i: u32) -> Vec3 {
    Vec3::new(3.0 * i as f32, 0.0, -1.5 * i as f32)
}

/// One way to upload and skin a crowd.
#[derive(Clone, Copy, Debug)]
struct Layout {
    palette: PaletteSource,
    /// Compute output buffers of this many instances (`None`: one buffer).
    instances_per_buffer: Option<u64>,
    order: DispatchOrder,
}

/// Every instance of a 5-character crowd (each at its own time, moved to its own place) comes
/// back from both GPU paths as the CPU skins that character: CesiumMan (LBS), a generated rig
/// with 8 influences and morph targets (the second influence set, morph weights shared), and
/// the arm under DQS (each instance's DQS block). On the storage palette with the compute
/// copies in one buffer and split over buffers of two instances (three buffers, the last
/// holding one), in both dispatch orders; on the uniform palette (a block and a draw per
/// instance).
#[test]
fn every_crowd_instance_skins_as_its_own_character_on_both_paths() {
    let Some(ctx) = common::gpu() else { return };
    const N: u32 = 5;
    let cases: Vec<(skinview::Scene, SkinOptions)> = vec![
        (
            skinview::io::load(&common::model("CesiumMan")).unwrap(),
            SkinOptions::default(),
        ),
        (
            skinview::io::load(&common::model("rig_seed4_8inf_morph_ubyte")).unwrap(),
            SkinOptions::default(),
        ),
        (
            skinview::builtin::woodland_arm().unwrap(),
            SkinOptions {
                mode: SkinMode::Dqs,
                ..Default::default()
            },
        ),
    ];
    for (scene, skin) in cases {
        // K: the widest skin (at least the partitioner's minimum), so no draw needs a split.
        let k = scene
            .skins
            .iter()
            .map(|s| s.joints.len() as u32)
            .max()
            .unwrap_or(1)
            .max(skinview::partition::MIN_BONES as u32);
        let layouts = [
            (None, DispatchOrder::InstanceOuter),
            (Some(2), DispatchOrder::InstanceOuter),
            (Some(2), DispatchOrder::InstanceInner),
        ]
        .map(|(instances_per_buffer, order)| Layout {
            palette: PaletteSource::Storage,
            instances_per_buffer,
            order,
        })
        .into_iter()
        .chain([Layout {
            palette: PaletteSource::Uniform { bones: k },
            instances_per_buffer: None,
            order: DispatchOrder::InstanceOuter,
        }]);
        let anim = (!scene.animations.is_empty()).then_some(0);
        let duration = anim.map_or(0.0, |a| scene.animations[a].duration_s());
        let mut c = CharacterSetup::clip(anim).build(&scene).unwrap();
        c.set_skin_options(skin);
        for layout in layouts {
            for upload in [Upload::PerInstance, Upload::OneWrite] {
                check_crowd(ctx, &mut c, duration, skin, layout, upload, N);
            }
        }
    }
}

/// How the test writes the crowd's palettes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Upload {
    /// One instance at a time, each moved on the CPU (`write_instance_palette`).
    PerInstance,
    /// Every palette back to back with the instances' offsets, in one call (`write_crowd`):
    /// one queue write on the storage palette.
    OneWrite,
}

/// Upload `c` as a crowd of `n` in `layout` by `upload`, skin each instance at its own time
/// (within `duration`) and place, and compare every instance read back through the draw with
/// the CPU reference.
fn check_crowd(
    ctx: &skinview::gpu::GpuContext,
    c: &mut Character,
    duration: f32,
    skin: SkinOptions,
    layout: Layout,
    upload: Upload,
    n: u32,
) {
    let mut gpu =
        GpuScene::crowd_with_palette(ctx, &c.scene, &c.frame, None, n, layout.palette).unwrap();
    gpu.set_all_skin_options(ctx, skin);
    let storage = layout.palette == PaletteSource::Storage;
    if storage {
        let max = layout
            .instances_per_buffer
            .map(|k| k * gpu.vertex_total() as u64 * 24);
        gpu.enable_compute_skinning_with(ctx, max).unwrap();
        gpu.set_dispatch_order(layout.order);
        let buffers = gpu.compute_skinning().unwrap().layout().buffers;
        let expected = layout
            .instances_per_buffer
            .map_or(1, |k| (n as u64).div_ceil(k) as u32);
        assert_eq!(buffers, expected, "{layout:?}");
    }
    let draws: Vec<usize> = (0..c.scene.draws.len()).collect();
    // Morph weights are shared: every instance plays the same time's weights, so the morphing
    // rig's instances differ in their palettes only (its clip moves joints too).
    let morphs = c
        .scene
        .draws
        .iter()
        .any(|d| !c.scene.primitive(d).morph_targets.is_empty());
    let mut expected: Vec<Vec<SkinnedVertices>> = Vec::new();
    let mut diagonal: f32 = 0.0;
    let (mut palettes, mut offsets) = (Vec::new(), Vec::new());
    for i in 0..n {
        let t = if morphs {
            0.4 * duration
        } else {
            duration * i as f32 / n as f32
        };
        c.update(t, 0.0).unwrap();
        let moved = Mat4::from_translation(offset(i));
        let palette: Vec<Mat4> = c.frame.palette.iter().map(|m| moved * *m).collect();
        if i == 0 {
            gpu.write_frame(ctx, &c.scene, &c.frame);
        }
        match upload {
            Upload::PerInstance => gpu.write_instance_palette(ctx, i, &palette).unwrap(),
            Upload::OneWrite => {
                palettes.extend_from_slice(&c.frame.palette);
                offsets.push(offset(i));
            }
        }
        let (lo, hi) = skinview::skin::bounds(&c.outputs).unwrap();
        diagonal = diagonal.max((hi - lo).length());
        expected.push(
            c.outputs
                .iter()
                .map(|o| SkinnedVertices {
                    positions: o.positions.iter().map(|p| *p + offset(i)).collect(),
                    ..o.clone()
                })
                .collect(),
        );
    }
    if upload == Upload::OneWrite {
        gpu.take_writes();
        gpu.write_crowd(ctx, &palettes, &offsets).unwrap();
        let writes = gpu.take_writes();
        assert_eq!(
            writes.palette, 1,
            "{layout:?}: one palette write for {n} instances"
        );
    }
    gpu.submit_compute_skinning(ctx);
    let limit = CPU_GPU_TOLERANCE_REL * diagonal as f64;
    let mut capture = DrawCapture::new(ctx).unwrap();
    let paths: &[Skinning] = if storage {
        &[Skinning::VertexShader, Skinning::ComputePass]
    } else {
        &[Skinning::VertexShader]
    };
    for &skinning in paths {
        let got = capture.run_with(ctx, &gpu, &draws, skinning, n).unwrap();
        assert_eq!(got.len(), n as usize);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            for (&d, (gv, ev)) in draws.iter().zip(g.iter().zip(e)) {
                let mut err = DrawErrors::new(&c.scene, d);
                err.add(0.0, ev, gv);
                assert!(
                    err.max_error <= limit && err.max_normal_error <= 1e-4,
                    "{} {:?} {layout:?} {upload:?} instance {i} draw {d}: {:e} (limit \
                     {limit:e}), normals {:e}",
                    c.scene.name,
                    skinning,
                    err.max_error,
                    err.max_normal_error
                );
            }
        }
        println!(
            "{} {} {layout:?} {upload:?}: {n} instances match",
            c.scene.name,
            skinning.describe()
        );
    }
}

/// The crowd benchmark draws what it says: a report whose counts follow from the model and
/// the instance count, finite positive times, the palette upload of every instance, and a
/// picture with the crowd on it (and nothing when the crowd is asked of an adapter that
/// cannot, or of zero characters).
#[test]
fn crowd_benchmark_reports_both_paths_and_draws_the_crowd() {
    use skinview::view::crowd::{CrowdOptions, Timing, run_crowd};
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let vertices = scene.vertex_count();
    let mut c = CharacterSetup {
        looping: true,
        ..CharacterSetup::clip(Some(0))
    }
    .build(&scene)
    .unwrap();
    let options = CrowdOptions {
        instances: 3,
        frames: 2,
        size: (160, 120),
        dt_s: 1.0 / 60.0,
        palette: skinview::gpu::PaletteSource::Storage,
        max_buffer_bytes: None,
        only: None,
    };
    let mut frames_seen = 0;
    let (r, image) = run_crowd(ctx, &mut c, &options, |_| frames_seen += 1).unwrap();
    println!("{r}");
    assert_eq!(frames_seen, 2);
    assert_eq!(r.vertices_per_instance, vertices);
    assert_eq!(r.vertices_per_frame, 3 * vertices as u64);
    assert_eq!(
        r.palette_upload_bytes,
        3 * 48 * r.palette_entries as u64,
        "LBS uploads the matrices' rows alone"
    );
    assert!(r.vertex_wall_ms.unwrap() > 0.0 && r.compute_wall_ms.unwrap() > 0.0);
    assert_eq!(r.skin_alone.len(), 2, "both dispatch orders timed");
    assert!(r.skin_alone.iter().all(|a| a.wall_ms > 0.0), "{r:?}");
    assert_eq!(r.timing == Timing::TimestampQueries, ctx.timestamps());
    if ctx.timestamps() {
        let (v, s, d) = (
            r.vertex_draw_ms.unwrap(),
            r.compute_skin_ms.unwrap(),
            r.compute_draw_ms.unwrap(),
        );
        assert!(v > 0.0 && s > 0.0 && d > 0.0, "{r:?}");
        assert!(r.skinned_over_plain_draw().unwrap().is_finite());
    }
    // Untrusted compute timestamps (lavapipe stamps a compute pass without its work): the
    // report leads with the wall time and gives no rate or bandwidth from the stamps.
    let text = r.to_string();
    let compute_line = text
        .lines()
        .find(|l| l.starts_with("compute path"))
        .unwrap();
    if r.compute_timestamps_suspect() {
        assert!(
            compute_line.contains("ms a frame submit to done") && !compute_line.contains("B/s"),
            "{compute_line}"
        );
        assert!(!text.contains("pass 0."), "{text}");
    }
    if r.driver.contains("llvmpipe") {
        assert!(
            r.compute_timestamps_suspect(),
            "lavapipe's compute stamps are known"
        );
    }
    // The crowd is on the picture: a share of pixels differ from the background (the corner).
    let background = image.pixels[..4].to_vec();
    let covered = image
        .pixels
        .chunks_exact(4)
        .filter(|p| p[..3] != background[..3])
        .count();
    let share = covered as f64 / (160.0 * 120.0);
    println!("crowd covers {:.1}% of the picture", 100.0 * share);
    assert!(share > 0.02 && share < 0.9, "{share}");
    // The uniform palette: the vertex-shader path alone, one draw per character, the same
    // picture (the same frames of the same clip; the storage run's is the compute path's).
    let uniform = CrowdOptions {
        palette: skinview::gpu::PaletteSource::Uniform { bones: 64 },
        ..options
    };
    let (u, uniform_image) = run_crowd(ctx, &mut c, &uniform, |_| {}).unwrap();
    println!("{u}");
    assert_eq!(u.palette, "uniform K=64");
    assert_eq!(u.vertices_per_frame, r.vertices_per_frame);
    assert!(u.vertex_wall_ms.unwrap() > 0.0);
    assert!(u.compute_wall_ms.is_none() && u.skin_alone.is_empty() && u.compute_buffers == 0);
    let differing = pixels_differing(&image, &uniform_image, 8);
    assert!(
        differing as f64 <= 0.002 * (160.0 * 120.0),
        "{differing} pixels differ between the storage and uniform crowds"
    );
    let refused = run_crowd(
        ctx,
        &mut c,
        &CrowdOptions {
            instances: 0,
            ..options
        },
        |_| {},
    );
    assert!(refused.is_err());
}

/// One path alone (`bench --skin vertex|compute`): only its figures, the other's lines say
/// "not timed", and the two draw the same crowd (the one WGSL `skin()`; a few edge pixels may
/// round differently). The CPU, and compute skinning on the uniform palette, are refused.
#[test]
fn crowd_benchmark_times_one_path_alone() {
    use skinview::gpu::{PaletteSource, Skinning};
    use skinview::view::crowd::{CrowdOptions, run_crowd};
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    let options = CrowdOptions {
        instances: 3,
        frames: 2,
        size: (160, 120),
        dt_s: 1.0 / 60.0,
        palette: PaletteSource::Storage,
        max_buffer_bytes: None,
        only: Some(Skinning::ComputePass),
    };
    let (a, compute_image) = run_crowd(ctx, &mut c, &options, |_| {}).unwrap();
    println!("{a}");
    assert!(
        a.vertex_wall_ms.is_none() && a.vertex_draw_ms.is_none(),
        "{a:?}"
    );
    assert!(
        a.compute_wall_ms.unwrap() > 0.0 && a.skin_alone.len() == 2,
        "{a:?}"
    );
    assert!(
        a.to_string().contains("vertex-shader path: not timed"),
        "{a}"
    );
    let vertex = CrowdOptions {
        only: Some(Skinning::VertexShader),
        ..options
    };
    let (v, vertex_image) = run_crowd(ctx, &mut c, &vertex, |_| {}).unwrap();
    println!("{v}");
    assert!(v.vertex_wall_ms.unwrap() > 0.0, "{v:?}");
    assert!(
        v.compute_wall_ms.is_none() && v.skin_alone.is_empty(),
        "{v:?}"
    );
    assert!(v.to_string().contains("compute path: not timed"), "{v}");
    let differing = pixels_differing(&compute_image, &vertex_image, 8);
    assert!(
        differing as f64 <= 0.002 * (160.0 * 120.0),
        "{differing} pixels differ"
    );
    let uniform = PaletteSource::Uniform { bones: 64 };
    for (refuse, says) in [
        (
            CrowdOptions {
                only: Some(Skinning::Cpu),
                ..options
            },
            "GPU skinning",
        ),
        (
            CrowdOptions {
                palette: uniform,
                ..options
            },
            "storage palette",
        ),
    ] {
        let e = run_crowd(ctx, &mut c, &refuse, |_| {})
            .err()
            .map(|e| e.to_string());
        assert!(e.as_deref().is_some_and(|e| e.contains(says)), "{e:?}");
    }
}

/// Compute skinning is refused with words on the uniform palette path (no storage buffers to
/// read), and a crowd's palette of the wrong size or an instance out of range is an error that
/// writes nothing.
#[test]
fn compute_skinning_refusals_say_why() {
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(0.5, 0.0).unwrap();
    let mut uniform = GpuScene::with_palette(
        ctx,
        &c.scene,
        &c.frame,
        None,
        PaletteSource::Uniform { bones: 64 },
    )
    .unwrap();
    let e = uniform
        .enable_compute_skinning(ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("storage palette"), "{e}");
    let mut crowd = GpuScene::crowd(ctx, &c.scene, &c.frame, None, 2).unwrap();
    let e = crowd
        .write_instance_palette(ctx, 2, &c.frame.palette)
        .unwrap_err()
        .to_string();
    assert!(e.contains("instance 2") && e.contains("2 instance"), "{e}");
    let e = crowd
        .write_instance_palette(ctx, 1, &c.frame.palette[1..])
        .unwrap_err()
        .to_string();
    assert!(e.contains("matrices"), "{e}");
    assert!(GpuScene::crowd(ctx, &c.scene, &c.frame, None, 0).is_err());
}

/// One palette write a frame for any crowd size, on the storage palette (the DQS forms in the
/// same write) and on the uniform palette (one buffer of blocks); on the storage palette the
/// bytes it carries are every instance's palette (as rows, and packed again with DQS); a
/// frame's other writes are counted apart; palettes or offsets of the wrong length are refused
/// and nothing is written.
#[test]
fn a_crowd_frame_writes_its_palettes_once() {
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(0.5, 0.0).unwrap();
    let e = c.frame.palette.len();
    assert!(e > 0);
    for (n, mode) in [
        (1u32, SkinMode::Lbs),
        (2, SkinMode::Dqs),
        (37, SkinMode::Lbs),
        (1000, SkinMode::Dqs),
    ] {
        let mut gpu = GpuScene::crowd(ctx, &c.scene, &c.frame, None, n).unwrap();
        gpu.set_all_skin_options(
            ctx,
            SkinOptions {
                mode,
                ..Default::default()
            },
        );
        let palettes: Vec<Mat4> = (0..n)
            .flat_map(|_| c.frame.palette.iter().copied())
            .collect();
        let offsets: Vec<Vec3> = (0..n).map(offset).collect();
        for _frame in 0..3 {
            gpu.take_writes();
            gpu.write_morph_weights(ctx, &c.scene, &c.frame);
            gpu.write_crowd(ctx, &palettes, &offsets).unwrap();
            let w = gpu.take_writes();
            // Every instance's matrices as three rows (48 bytes), and with DQS every
            // instance's packed joints (64 bytes) after them.
            let entry_bytes = if mode == SkinMode::Dqs { 48 + 64 } else { 48 };
            assert_eq!(w.palette, 1, "{n} instances, {mode:?}");
            assert_eq!(
                w.palette_bytes,
                n as u64 * e as u64 * entry_bytes,
                "{n} instances"
            );
        }
        // The uniform palette: one buffer of blocks, one write too.
        let mut uniform = GpuScene::crowd_with_palette(
            ctx,
            &c.scene,
            &c.frame,
            None,
            n,
            PaletteSource::Uniform { bones: 64 },
        )
        .unwrap();
        uniform.write_morph_weights(ctx, &c.scene, &c.frame);
        uniform.take_writes();
        uniform.write_crowd(ctx, &palettes, &offsets).unwrap();
        assert_eq!(
            uniform.take_writes().palette,
            1,
            "{n} instances, uniform palette"
        );
        assert!(gpu.write_crowd(ctx, &palettes[1..], &offsets).is_err());
        assert!(gpu.write_crowd(ctx, &palettes, &offsets[1..]).is_err());
        assert_eq!(
            gpu.take_writes().palette,
            0,
            "a refused upload writes nothing"
        );
    }
}

/// `render --crowd`'s still: a field of Fox characters each cycling through Fox's clips is
/// the same picture from the vertex shader, the compute pass and the uniform palette (three
/// ways to skin the same palettes), covers a share of the image, and changes with the crowd's
/// time (the characters move); a compute still on the uniform palette and a time that is not
/// finite are refused.
#[test]
fn a_crowd_still_is_the_same_on_every_gpu_path() {
    use skinview::view::crowd::{CrowdStill, render_crowd};
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("Fox")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    let still = CrowdStill {
        instances: 9,
        size: (200, 150),
        time_s: 0.8,
        palette: PaletteSource::Storage,
        skinning: Skinning::VertexShader,
        camera: None,
        cull: false,
    };
    let vertex = render_crowd(ctx, &mut c, &still).unwrap().0;
    let compute = render_crowd(
        ctx,
        &mut c,
        &CrowdStill {
            skinning: Skinning::ComputePass,
            ..still
        },
    )
    .unwrap()
    .0;
    let uniform = render_crowd(
        ctx,
        &mut c,
        &CrowdStill {
            palette: PaletteSource::Uniform { bones: 64 },
            ..still
        },
    )
    .unwrap()
    .0;
    let later = render_crowd(
        ctx,
        &mut c,
        &CrowdStill {
            time_s: 1.3,
            ..still
        },
    )
    .unwrap()
    .0;
    let differing = |a: &skinview::image::Rgba8, b: &skinview::image::Rgba8| {
        pixels_differing(a, b, 8) as f64 / (200.0 * 150.0)
    };
    for (name, other) in [("compute", &compute), ("uniform", &uniform)] {
        let d = differing(&vertex, other);
        assert!(d <= 0.003, "{name}: {:.2}% of pixels differ", 100.0 * d);
    }
    let background = vertex.pixels[..4].to_vec();
    let covered = vertex
        .pixels
        .chunks_exact(4)
        .filter(|p| p[..3] != background[..3])
        .count() as f64
        / (200.0 * 150.0);
    assert!(
        covered > 0.02 && covered < 0.9,
        "the crowd covers {covered}"
    );
    assert!(
        differing(&vertex, &later) > 0.005,
        "the crowd moves between 0.8 s and 1.3 s"
    );
    let refused = [
        CrowdStill {
            palette: PaletteSource::Uniform { bones: 64 },
            skinning: Skinning::ComputePass,
            ..still
        },
        CrowdStill {
            time_s: f32::NAN,
            ..still
        },
        CrowdStill {
            instances: 0,
            ..still
        },
    ];
    for s in refused {
        assert!(render_crowd(ctx, &mut c, &s).is_err(), "{s:?}");
    }
}

/// Culling never hides a visible character: a close view into a field of 49 characters, with
/// and without culling, is the same picture in every skinning mode (linear, DQS, stitched) on
/// the vertex shader and the compute pass and from the uniform palette's blocks, while culling
/// draws fewer characters (and still some) and uploads less; from far away every character is
/// in view.
#[test]
fn culling_skips_characters_out_of_view_and_hides_none() {
    use skinview::camera::OrbitCamera;
    use skinview::view::crowd::{CrowdStill, render_crowd};
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    let whole = CrowdStill {
        instances: 49,
        size: (160, 120),
        time_s: 0.7,
        palette: PaletteSource::Storage,
        skinning: Skinning::VertexShader,
        camera: None,
        cull: true,
    };
    let (_, far) = render_crowd(ctx, &mut c, &whole).unwrap();
    assert_eq!((far.characters, far.visible), (49, 49), "{far:?}");
    // A camera among the characters, looking across a corner of the field.
    let mut close = OrbitCamera::framing(Vec3::splat(-0.5), Vec3::splat(0.5), 160.0 / 120.0);
    close.distance_m *= 1.5;
    // Who skins, from which palette: the storage palette's two paths and the uniform
    // palette's blocks (one draw per visible character).
    let mut skinnings = vec![(Skinning::VertexShader, PaletteSource::Uniform { bones: 64 })];
    if ctx.storage_palette() && ctx.compute_capture() {
        skinnings.push((Skinning::VertexShader, PaletteSource::Storage));
        skinnings.push((Skinning::ComputePass, PaletteSource::Storage));
    }
    for mode in SkinMode::ALL {
        c.set_skin_options(SkinOptions {
            mode,
            ..SkinOptions::default()
        });
        for &(skinning, palette) in &skinnings {
            let still = CrowdStill {
                camera: Some(close),
                skinning,
                palette,
                ..whole
            };
            let (all, every) = render_crowd(
                ctx,
                &mut c,
                &CrowdStill {
                    cull: false,
                    ..still
                },
            )
            .unwrap();
            let (culled, seen) = render_crowd(ctx, &mut c, &still).unwrap();
            let label = format!("{} on {skinning:?}, {palette:?}", mode.name());
            assert_eq!(every.visible, 49, "{label}: without culling all are drawn");
            assert!(
                (1..40).contains(&seen.visible),
                "{label}: {} of 49 in view",
                seen.visible
            );
            let differing = pixels_differing(&all, &culled, 2);
            assert_eq!(differing, 0, "{label}: culling changed {differing} pixels");
            assert!(seen.upload_bytes < every.upload_bytes, "{label}: {seen:?}");
        }
    }
}

/// Pixels of `a` and `b` (the same size) with a channel more than `by` apart.
fn pixels_differing(a: &skinview::image::Rgba8, b: &skinview::image::Rgba8, by: u8) -> usize {
    a.pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(x, y)| x.iter().zip(*y).any(|(p, q)| p.abs_diff(*q) > by))
        .count()
}

/// The compute pass skins every draw that shares influence sets, packing and morph target
/// count in one dispatch per output buffer: over every shared model and rig, the batches are
/// the distinct such keys among the draws with vertices, and with one set of skinning options
/// the pass makes one dispatch per batch and buffer. Draws of one batch on three blends make
/// three dispatches, each draw still skinned with its own (the readback tests check the bits).
#[test]
fn compute_skinning_dispatches_once_per_batch_of_draws() {
    use skinview::frame::FrameState;
    let Some(ctx) = common::gpu() else { return };
    let mut paths = common::all_models();
    paths.push(common::model("CesiumMan"));
    let mut fewer = 0;
    for (k, path) in paths.iter().enumerate() {
        let mut scene = skinview::io::load(path).unwrap();
        let last = k + 1 == paths.len();
        if last {
            // CesiumMan's draw three times, on three blends.
            scene.draws = vec![scene.draws[0]; 3];
        }
        let frame = FrameState::new(&scene);
        let mut gpu = GpuScene::crowd(ctx, &scene, &frame, None, 3).unwrap();
        if last {
            for (d, mode) in SkinMode::ALL.into_iter().enumerate() {
                let options = SkinOptions {
                    mode,
                    ..Default::default()
                };
                gpu.set_skin_options(ctx, d, options);
            }
        }
        // Two characters' copies a buffer: the three need two buffers.
        let copy = gpu.vertex_total() as u64 * skinview::gpu::shader_types::CPU_VERTEX_STRIDE;
        gpu.enable_compute_skinning_with(ctx, Some(2 * copy))
            .unwrap();
        let mut keys = Vec::new();
        for d in gpu.draws.iter().filter(|d| d.vertex_count > 0) {
            let key = (
                d.influence_sets,
                d.params_data.morph_target_count,
                d.packing,
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let c = gpu.compute_skinning().unwrap();
        let buffers = c.layout().buffers as usize;
        assert_eq!(buffers, 2, "{}", scene.name);
        let blends = if last { 3 } else { 1 };
        println!(
            "{:<36} {} draws, {} batch(es), {} buffer(s): {} dispatches",
            scene.name,
            gpu.draws.len(),
            c.batch_count(),
            buffers,
            c.dispatches(&gpu)
        );
        assert_eq!(c.batch_count(), keys.len(), "{}", scene.name);
        assert_eq!(
            c.dispatches(&gpu),
            keys.len() * buffers * blends,
            "{}",
            scene.name
        );
        if keys.len() < gpu.draws.len() {
            fewer += 1;
        }
    }
    assert!(fewer > 0, "no model with several draws in one batch");
}

/// The field's animation level of detail: seen from far away every character is a few pixels
/// across, so each is animated every fourth frame, on its own beat (a quarter of the field a
/// frame); with the level of detail off, all of them every frame.
#[test]
fn a_far_crowd_animates_a_quarter_of_its_characters_a_frame() {
    use skinview::camera::{Frustum, OrbitCamera};
    use skinview::view::crowd_field::LodView;
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut character = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    let n = 64;
    let mut field = storage_field(ctx, &mut character, n);
    let (lo, hi) = field.field_bounds();
    let mut camera = OrbitCamera::framing(lo, hi, 1.0);
    camera.distance_m *= 20.0;
    let frustum = Frustum::new(camera.clip_from_world(1.0));
    field.set_lod(Some(LodView::of(&camera, 720)));
    let first = field.update(ctx, 0.0, Some(&frustum)).unwrap();
    assert_eq!(
        first.animated, n as usize,
        "before any box, every character"
    );
    for frame in 1..=8 {
        let s = field
            .update(ctx, frame as f32 * 0.25, Some(&frustum))
            .unwrap();
        assert_eq!(
            s.visible, n as usize,
            "frame {frame}: all in view from afar"
        );
        assert_eq!(s.animated, n as usize / 4, "frame {frame}");
    }
    field.set_lod(None);
    let s = field.update(ctx, 2.0, Some(&frustum)).unwrap();
    assert_eq!(s.animated, n as usize);
}

/// A field is framed on what its characters reach while they play (every clip sampled), not on
/// one character at rest: at times between those samples, every character's culling box
/// (bounding its skinned vertices) stays in the default view, for fields with a partly filled
/// last row too, at two aspects.
#[test]
fn a_framed_field_keeps_every_character_in_view_as_it_plays() {
    use skinview::camera::{Frustum, OrbitCamera};
    let Some(ctx) = common::gpu() else { return };
    let mut models: Vec<(String, skinview::scene::Scene)> = ["CesiumMan", "Fox", "RiggedFigure"]
        .iter()
        .map(|m| {
            (
                m.to_string(),
                skinview::io::load(&common::model(m)).unwrap(),
            )
        })
        .collect();
    models.push(("arm".into(), skinview::builtin::woodland_arm().unwrap()));
    for (name, scene) in &models {
        let mut character = CharacterSetup::clip(Some(0)).build(scene).unwrap();
        for n in [3u32, 5, 7] {
            let mut field = storage_field(ctx, &mut character, n);
            for aspect in [16.0 / 9.0, 0.5] {
                let camera = OrbitCamera::framing_points(field.framing_points(), aspect).unwrap();
                let frustum = Frustum::new(camera.clip_from_world(aspect));
                for frame in 0..24 {
                    // 0.173 s apart: off the 30 Hz samples of the framing.
                    let s = field
                        .update(ctx, frame as f32 * 0.173, Some(&frustum))
                        .unwrap();
                    assert_eq!(s.visible, n as usize, "{name} × {n}, frame {frame}");
                    for c in 0..n as usize {
                        let (lo, hi) = field.character_bounds(c).unwrap();
                        assert!(
                            camera.sees_all(&skinview::math::box_corners((lo, hi)), aspect),
                            "{name} × {n} at aspect {aspect}, frame {frame}: character {c}'s \
                             box {lo} {hi} leaves the view"
                        );
                    }
                }
            }
        }
    }
}

/// A field of `n` copies of `character` on the storage palette, skinned in the vertex shader.
fn storage_field(
    ctx: &skinview::gpu::GpuContext,
    character: &mut Character,
    n: u32,
) -> skinview::view::crowd_field::CrowdField {
    skinview::view::crowd_field::CrowdField::new(
        ctx,
        character,
        n,
        PaletteSource::Storage,
        Skinning::VertexShader,
    )
    .unwrap()
}
