//! Framing: the camera fits a model's skinned vertices so they fill `FRAME_FILL` (85 %) of the
//! view's limiting dimension, centred. Checked three ways: the projection through
//! `clip_from_world` (not the fit's own arithmetic) of random point clouds at random view
//! directions and shapes; the rendered images of every shared model and the built-ins,
//! measured in pixels, alone and in each half of a split; and `--frame-clip`'s points, which
//! keep every frame of the clip in view.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use crate::common;

use glam::Vec3;
use skinview::camera::{FRAME_FILL, OrbitCamera};
use skinview::character::CharacterSetup;
use skinview::image::Rgba8;
use skinview::view::ViewOptions;

/// `[min x, max x, min y, max y]` of `points` in normalised device coordinates.
fn ndc_extent(camera: &OrbitCamera, points: &[Vec3], aspect: f32) -> [f32; 4] {
    let m = camera.clip_from_world(aspect);
    let mut e = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for p in points {
        let c = m * p.extend(1.0);
        assert!(c.w > 0.0, "a point behind the eye");
        let (x, y) = (c.x / c.w, c.y / c.w);
        e = [e[0].min(x), e[1].max(x), e[2].min(y), e[3].max(y)];
    }
    e
}

#[test]
fn fit_fills_and_centres_random_point_clouds() {
    let mut rng = common::rng::XorShift64(0x5eed_f1a3);
    for case in 0..200 {
        let scale = Vec3::new(
            0.1 + 3.0 * rng.next_f32(),
            0.1 + 3.0 * rng.next_f32(),
            0.1 + 3.0 * rng.next_f32(),
        );
        let offset = (Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32()) - 0.5) * 20.0;
        let points: Vec<Vec3> = (0..50)
            .map(|_| {
                offset + (Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32()) - 0.5) * scale
            })
            .collect();
        let aspect = 0.4 + 2.0 * rng.next_f32();
        let mut camera = OrbitCamera::framing(Vec3::ZERO, Vec3::ONE, aspect);
        camera.orbit(6.0 * rng.next_f32(), 2.8 * (rng.next_f32() - 0.5));
        assert!(camera.fit(&points, aspect, FRAME_FILL));
        let e = ndc_extent(&camera, &points, aspect);
        let half = 0.5 * (e[1] - e[0]).max(e[3] - e[2]);
        let centre = [(e[0] + e[1]) * 0.5, (e[2] + e[3]) * 0.5];
        assert!(
            (half - FRAME_FILL).abs() < 2e-3,
            "case {case}: fills {half}, not {FRAME_FILL}"
        );
        assert!(
            centre[0].abs() < 5e-3 && centre[1].abs() < 5e-3,
            "case {case}: centred at {centre:?}"
        );
    }
}

#[test]
fn fit_with_no_finite_point_changes_nothing() {
    let mut camera = OrbitCamera::framing(Vec3::ZERO, Vec3::ONE, 1.0);
    let before = camera;
    assert!(!camera.fit(&[Vec3::NAN, Vec3::INFINITY], 1.0, FRAME_FILL));
    assert_eq!(camera, before);
}

/// The box of the pixels that differ from the corner (background) pixel, in `x0..x1`:
/// `(min x, max x, min y, max y)`.
fn covered_box(image: &Rgba8, x0: usize, x1: usize) -> Option<(usize, usize, usize, usize)> {
    let w = image.width as usize;
    let bg = &image.pixels[0..3];
    let mut b: Option<(usize, usize, usize, usize)> = None;
    for y in 0..image.height as usize {
        for x in x0..x1 {
            let p = &image.pixels[(y * w + x) * 4..][..3];
            if p.iter().zip(bg).any(|(a, c)| a.abs_diff(*c) > 4) {
                b = Some(b.map_or((x, x, y, y), |(a, c, d, e)| {
                    (a.min(x), c.max(x), d.min(y), e.max(y))
                }));
            }
        }
    }
    b
}

/// The share of a view's limiting dimension the model covers, and whether it touches an edge.
fn fill_of(image: &Rgba8, x0: usize, x1: usize) -> (f32, bool) {
    let (a, b, c, d) = covered_box(image, x0, x1).expect("nothing drawn");
    let (w, h) = ((x1 - x0) as f32, image.height as f32);
    let fill = ((b - a + 1) as f32 / w).max((d - c + 1) as f32 / h);
    let touches = a == x0 || b + 1 == x1 || c == 0 || d + 1 == image.height as usize;
    (fill, touches)
}

#[test]
fn renders_fill_80_to_90_percent_of_the_image() {
    let Some(ctx) = common::gpu() else { return };
    let mut scenes: Vec<skinview::Scene> = common::all_models()
        .iter()
        .map(|p| skinview::io::load(p).unwrap())
        .collect();
    scenes.push(skinview::builtin::woodland_arm().unwrap());
    scenes.push(skinview::builtin::humanoid().unwrap());
    let mut failures = Vec::new();
    for scene in &scenes {
        let anim = (!scene.animations.is_empty()).then_some(0);
        let mut c = CharacterSetup::clip(anim).build(scene).unwrap();
        let t = anim.map_or(0.0, |a| scene.animations[a].duration_s() * 0.5);
        c.update(t, 0.0).unwrap();
        for (split, (w, h)) in [(false, (240, 160)), (true, (320, 180))] {
            let options = ViewOptions {
                split,
                ..Default::default()
            };
            let image = skinview::view::render_character(ctx, &c, &options, w, h).unwrap();
            let halves: Vec<(usize, usize)> = if split {
                vec![(0, w as usize / 2 - 1), (w as usize / 2 + 1, w as usize)]
            } else {
                vec![(0, w as usize)]
            };
            for (x0, x1) in halves {
                let (fill, touches) = fill_of(&image, x0, x1);
                println!("{} split={split} x {x0}..{x1}: fills {fill:.3}", scene.name);
                if !(0.80..=0.90).contains(&fill) || touches {
                    failures.push(format!(
                        "{} (split {split}, columns {x0}..{x1}): fills {fill:.3}{}",
                        scene.name,
                        if touches { ", touching the edge" } else { "" }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `render --frame-clip`: one camera for the whole clip, every frame inside it.
#[test]
fn clip_framing_keeps_every_frame_in_view() {
    for (model, anim) in [("CesiumMan", 0), ("Fox", 2)] {
        let scene = skinview::io::load(&common::model(model)).unwrap();
        let mut c = CharacterSetup::clip(Some(anim)).build(&scene).unwrap();
        let duration = scene.animations[anim].duration_s();
        let points = skinview::view::clip_frame_points(&mut c, duration, false).unwrap();
        let aspect = 4.0 / 3.0;
        let camera = OrbitCamera::framing_points(&points, aspect).unwrap();
        let mut widest: f32 = 0.0;
        for i in 0..=47 {
            // Times off the 30 Hz sampling grid too.
            c.update(duration * i as f32 / 47.0, 0.0).unwrap();
            let frame: Vec<Vec3> = c.outputs.iter().flat_map(|o| o.positions.clone()).collect();
            let e = ndc_extent(&camera, &frame, aspect);
            let reach = e.iter().fold(0f32, |m, v| m.max(v.abs()));
            widest = widest.max(reach);
            assert!(
                reach <= FRAME_FILL + 0.02,
                "{model} at frame {i}: reaches {reach}"
            );
        }
        assert!(
            widest >= FRAME_FILL - 0.1,
            "{model}: the clip only reaches {widest}"
        );
    }
}
