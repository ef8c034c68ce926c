//! Skinned bounds from the palette (`skinview::skin::skinned_bounds`, what a crowd culls
//! with): over sampled frames of every shared model and rig, in every skinning mode (linear,
//! DQS, stitched) and with the GPU's four influences, the bound holds every vertex the CPU
//! skinning gives, so culling never hides a visible character; the same over random palettes
//! (non-uniform scale, shear, mirrored and collapsed joints), random weights that do not sum to
//! 1 and random morph weights; and the linear bound is tight enough to cull with.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{Mat4, Quat, Vec3};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::scene::{MorphTarget, Scene};
use skinview::skin::skinned_bounds::{Aabb, SkinnedBounds};
use skinview::skin::{SkinMode, SkinOptions, SkinnedVertices};

use crate::common;
use crate::common::rng::XorShift64;

/// Skin every draw of `scene` at `frame` in `mode` with at most `influences` a vertex.
fn skin(
    scene: &Scene,
    frame: &FrameState,
    mode: SkinMode,
    influences: Option<usize>,
) -> Vec<SkinnedVertices> {
    let mut cpu = CpuSkinner::new(scene, influences);
    cpu.set_options(
        scene,
        SkinOptions {
            mode,
            ..SkinOptions::default()
        },
    );
    cpu.skin_all(scene, frame).unwrap()
}

/// The worst distance (relative to the bound's diagonal) by which a finite skinned vertex
/// leaves `bound`, 0 when all are inside.
fn outside(bound: Aabb, skinned: &[SkinnedVertices]) -> (f32, Option<Vec3>) {
    let (lo, hi) = bound;
    let diag = (hi - lo).length().max(f32::MIN_POSITIVE);
    let mut worst = (0.0f32, None);
    for p in skinned.iter().flat_map(|s| &s.positions) {
        if !p.is_finite() {
            continue;
        }
        let out = (lo - *p).max(*p - hi).max(Vec3::ZERO).length() / diag;
        if out > worst.0 {
            worst = (out, Some(*p));
        }
    }
    worst
}

/// Clip times sampled: the rest pose, then each clip at its ends and eight times between.
fn samples(scene: &Scene) -> Vec<(Option<usize>, f32)> {
    let mut v = vec![(None, 0.0)];
    for (a, anim) in scene.animations.iter().enumerate() {
        let d = anim.duration_s();
        v.extend((0..10).map(|k| (Some(a), d * k as f32 / 9.0)));
    }
    v
}

#[test]
fn the_bound_holds_every_skinned_vertex_of_every_shared_model() {
    let mut checked = 0;
    for path in common::all_models() {
        let Ok(scene) = skinview::io::load(&path) else {
            continue;
        };
        let mut frame = FrameState::new(&scene);
        for mode in SkinMode::ALL {
            let bounds = SkinnedBounds::new(&scene, &frame.layout, |_| mode);
            let mut looseness = 0.0f32;
            for (anim, t_s) in samples(&scene) {
                frame.evaluate(&scene, anim, t_s).unwrap();
                let bound = bounds.bound(&frame.palette, &frame.pose.morph_weights);
                for influences in [None, Some(4)] {
                    let skinned = skin(&scene, &frame, mode, influences);
                    let Some(actual) = skinview::skin::bounds(&skinned) else {
                        continue;
                    };
                    let bound = bound.unwrap_or_else(|| {
                        panic!(
                            "{}: no bound in {} at {anim:?} {t_s} s",
                            path.display(),
                            mode.name()
                        )
                    });
                    let (out, at) = outside(bound, &skinned);
                    assert!(
                        out == 0.0,
                        "{} {} clip {anim:?} at {t_s} s, {influences:?} influences: vertex \
                         {at:?} is {out:e} of the diagonal outside the bound {bound:?}",
                        path.display(),
                        mode.name()
                    );
                    let ratio = (bound.1 - bound.0).length() / (actual.1 - actual.0).length();
                    looseness = looseness.max(ratio);
                    checked += 1;
                }
            }
            println!(
                "{}: {} bound diagonal at most {looseness:.2}× the skinned one",
                path.file_name().unwrap().to_string_lossy(),
                mode.name()
            );
        }
    }
    assert!(checked > 100, "only {checked} frames were checked");
}

/// The linear bound is tight enough to cull with: on the humanoid figures, within 1.6× of the
/// skinned vertices' box diagonal at every sampled frame (joint boxes moved by rotated joints
/// grow by at most √3 on an axis; at rest they are the mesh's own box).
#[test]
fn the_linear_bound_is_close_to_the_skinned_box() {
    for stem in ["CesiumMan", "RiggedFigure", "Fox"] {
        let scene = skinview::io::load(&common::model(stem)).unwrap();
        let mut frame = FrameState::new(&scene);
        let bounds = SkinnedBounds::new(&scene, &frame.layout, |_| SkinMode::Lbs);
        for (anim, t_s) in samples(&scene) {
            frame.evaluate(&scene, anim, t_s).unwrap();
            let bound = bounds
                .bound(&frame.palette, &frame.pose.morph_weights)
                .unwrap();
            let actual =
                skinview::skin::bounds(&skin(&scene, &frame, SkinMode::Lbs, None)).unwrap();
            let ratio = (bound.1 - bound.0).length() / (actual.1 - actual.0).length();
            assert!(
                (1.0..1.6).contains(&ratio),
                "{stem} clip {anim:?} at {t_s} s: bound diagonal {ratio}× the skinned box's"
            );
        }
    }
}

/// A random matrix: rotation, translation, and by `kind` non-uniform scale, shear, a mirror
/// or a collapse to zero on one axis.
fn random_matrix(rng: &mut XorShift64, kind: usize) -> Mat4 {
    let rotation = Quat::from_axis_angle(rng.direction(), rng.range(-3.1, 3.1));
    let translation = Vec3::new(
        rng.range(-2.0, 2.0),
        rng.range(-2.0, 2.0),
        rng.range(-2.0, 2.0),
    );
    let scale = match kind % 5 {
        0 => Vec3::ONE,
        1 => Vec3::new(
            rng.range(0.3, 2.0),
            rng.range(0.3, 2.0),
            rng.range(0.3, 2.0),
        ),
        2 => Vec3::new(-rng.range(0.5, 1.5), 1.0, 1.0),
        3 => Vec3::new(0.0, 1.0, 1.0),
        _ => Vec3::splat(rng.range(0.5, 1.5)),
    };
    let shear = if kind % 7 == 6 {
        Mat4::from_cols_array(&[
            1.0,
            rng.range(-0.5, 0.5),
            0.0,
            0.0,
            rng.range(-0.5, 0.5),
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
        ])
    } else {
        Mat4::IDENTITY
    };
    Mat4::from_scale_rotation_translation(scale, rotation, translation) * shear
}

/// Random weights on every skinned primitive (1 to 4 joints a vertex, sums from 0.5 to 1.5,
/// some all zero) and two random morph targets on each primitive.
fn scramble(scene: &mut Scene, rng: &mut XorShift64) {
    let joints: Vec<usize> = scene.skins.iter().map(|s| s.joints.len()).collect();
    for d in scene.draws.clone() {
        let prim = &mut scene.meshes[d.mesh].primitives[d.primitive];
        let n = prim.positions.len();
        prim.morph_targets = (0..2)
            .map(|_| MorphTarget {
                positions: Some(
                    (0..n)
                        .map(|_| rng.direction() * rng.range(0.0, 0.3))
                        .collect(),
                ),
                normals: None,
                tangents: None,
            })
            .collect();
        let (Some(s), Some(w)) = (d.skin, prim.skin_weights.as_mut()) else {
            continue;
        };
        for v in 0..n {
            let slots = v * w.width..(v + 1) * w.width;
            w.weights[slots.clone()].fill(0.0);
            if rng.below(50) == 0 {
                continue;
            }
            let used = 1 + rng.below(4.min(w.width));
            let sum = rng.range(0.5, 1.5);
            let raw: Vec<f32> = (0..used).map(|_| rng.range(0.05, 1.0)).collect();
            let total: f32 = raw.iter().sum();
            for (k, x) in raw.iter().enumerate() {
                w.joints[slots.start + k] = rng.below(joints[s]) as u32;
                w.weights[slots.start + k] = x / total * sum;
            }
        }
    }
}

#[test]
fn the_bound_holds_under_random_palettes_weights_and_morphs() {
    let mut rng = XorShift64(0x5eed_b0c5);
    for stem in ["RiggedSimple", "CesiumMan", "RiggedFigure"] {
        let mut scene = skinview::io::load(&common::model(stem)).unwrap();
        scramble(&mut scene, &mut rng);
        let mut frame = FrameState::new(&scene);
        frame.evaluate(&scene, None, 0.0).unwrap();
        for mode in SkinMode::ALL {
            let bounds = SkinnedBounds::new(&scene, &frame.layout, |_| mode);
            for round in 0..40 {
                for (i, m) in frame.palette.iter_mut().enumerate() {
                    *m = random_matrix(&mut rng, round + i);
                }
                for w in frame.pose.morph_weights.iter_mut() {
                    *w = vec![rng.range(-1.0, 2.0), rng.range(-1.0, 2.0)];
                }
                let bound = bounds
                    .bound(&frame.palette, &frame.pose.morph_weights)
                    .unwrap();
                for influences in [None, Some(4)] {
                    let skinned = skin(&scene, &frame, mode, influences);
                    let (out, at) = outside(bound, &skinned);
                    assert!(
                        out == 0.0,
                        "{stem} {} round {round}, {influences:?} influences: vertex {at:?} is \
                         {out:e} of the diagonal outside {bound:?}",
                        mode.name()
                    );
                }
            }
        }
    }
}

#[test]
fn a_wrong_length_or_non_finite_palette_has_no_bound() {
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut frame = FrameState::new(&scene);
    frame.evaluate(&scene, Some(0), 0.5).unwrap();
    let bounds = SkinnedBounds::new(&scene, &frame.layout, |_| SkinMode::Lbs);
    assert!(bounds.bound(&frame.palette, &[]).is_some());
    assert!(bounds.bound(&frame.palette[1..], &[]).is_none());
    frame.palette[3].w_axis.x = f32::NAN;
    assert!(bounds.bound(&frame.palette, &[]).is_none());
}

/// The frustum of a camera keeps a box it sees and one crossing its edge, and drops boxes
/// behind the eye, nearer than the near plane, past the far plane, beside the view and above
/// it; a
/// box with a NaN corner is kept (culling never hides what it cannot judge).
#[test]
fn the_frustum_keeps_what_the_camera_sees() {
    use skinview::camera::{Frustum, OrbitCamera};
    let camera = OrbitCamera::framing(Vec3::splat(-1.0), Vec3::splat(1.0), 1.5);
    let f = Frustum::new(camera.clip_from_world(1.5));
    let eye = camera.eye();
    let forward = (camera.target - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let unit = |c: Vec3, r: f32| (c - Vec3::splat(r), c + Vec3::splat(r));
    let d = camera.distance_m;
    for (what, (lo, hi), seen) in [
        ("the framed box", unit(camera.target, 1.0), true),
        // Nearer than the near plane: the GPU clips it too.
        (
            "a box just before the eye",
            unit(eye + forward * 0.05, 0.01),
            false,
        ),
        (
            "a box crossing the right edge",
            unit(camera.target + right * d * 0.4, 0.5),
            true,
        ),
        (
            "a box behind the eye",
            unit(eye - forward * 2.0, 0.5),
            false,
        ),
        (
            "a box far to the right",
            unit(camera.target + right * d * 3.0, 0.5),
            false,
        ),
        (
            "a box far above",
            unit(camera.target + up * d * 3.0, 0.5),
            false,
        ),
        (
            "a box past the far plane",
            unit(eye + forward * 1e7, 1.0),
            false,
        ),
    ] {
        assert_eq!(f.intersects(lo, hi), seen, "{what}");
    }
    assert!(f.intersects(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::splat(1.0)));
}

/// Draws skinned in different modes (linear, DQS and stitched side by side in one scene):
/// the bound set up with each draw's mode holds every draw's vertices.
#[test]
fn the_bound_holds_draws_of_mixed_modes() {
    let mut rng = XorShift64(0x0d15_ea5e);
    for path in common::all_models() {
        let Ok(scene) = skinview::io::load(&path) else {
            continue;
        };
        if scene.draws.len() < 2 {
            continue;
        }
        let mode_of = |d: usize| SkinMode::ALL[d % 3];
        let mut frame = FrameState::new(&scene);
        let bounds = SkinnedBounds::new(&scene, &frame.layout, mode_of);
        let mut cpu = CpuSkinner::new(&scene, None);
        for d in 0..scene.draws.len() {
            let options = SkinOptions {
                mode: mode_of(d),
                ..SkinOptions::default()
            };
            cpu.set_draw_options(&scene, d, options);
        }
        for (anim, t_s) in samples(&scene) {
            frame.evaluate(&scene, anim, t_s).unwrap();
            if rng.below(2) == 0 {
                for (i, m) in frame.palette.iter_mut().enumerate() {
                    *m = random_matrix(&mut rng, i) * *m;
                }
            }
            let skinned = cpu.skin_all(&scene, &frame).unwrap();
            let bound = bounds
                .bound(&frame.palette, &frame.pose.morph_weights)
                .unwrap();
            let (out, at) = outside(bound, &skinned);
            assert!(out == 0.0, "{}: {at:?} is {out:e} outside", path.display());
        }
    }
}
