//! Animation-stage benchmarks (issue 3): forward-playback sampling cost against key count
//! (cursors make it flat), and sample + layer + local→model + palette per character for 64 and
//! 256 joints; drawing a clip's curves for the viewer's curves panel. `cargo bench --bench
//! animation`; figures go to BENCHMARKS.md.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)] // bench code; criterion_main! makes an undocumented main

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use skinview::anim::layer::{BoneMask, DEFAULT_THRESHOLD, Layer, LayerJob};
use skinview::anim::{
    AnimateJob, Animation, Channel, Cursor, Interpolation, Path, Pose, Sampler, SoaAnimateJob,
    SoaClip, SoaState,
};
use skinview::math::Trs;
use skinview::scene::{Node, RawScene, Scene, SceneBuilder, Skin};
use skinview::skeleton::LocalToModelJob;
use skinview::skin::{PaletteJob, PaletteLayout};

fn rotation_sampler(keys: usize, duration_s: f32, phase: f32) -> Sampler {
    let times_s: Vec<f32> = (0..keys)
        .map(|k| duration_s * k as f32 / (keys - 1) as f32)
        .collect();
    let values = times_s
        .iter()
        .flat_map(|&t| Quat::from_rotation_z(0.5 * (t * 3.0 + phase).sin()).to_array())
        .collect();
    Sampler {
        interpolation: Interpolation::Linear,
        times_s,
        values,
        components: 4,
        is_rotation: true,
    }
}

/// Forward playback at 60 Hz, 600 frames from the middle of the clip.
/// - `keys_at_30_per_s`: clips of growing length at a fixed 30 keys/s (mocap density): the
///   cursor advances at most one key per frame, so the cost per sample is flat in key count.
/// - `keys_in_10s_clip`: growing density in a fixed 10 s clip: once keys outnumber frames
///   (> 600 keys) every frame must skip keys, and the cursor falls back to a binary search
///   after two steps, so the cost grows with log(keys per frame), not with the key count.
fn sampling_vs_keys(c: &mut Criterion) {
    let mut group = c.benchmark_group("forward_playback_sample");
    group.throughput(Throughput::Elements(600));
    for (label, density) in [("keys_at_30_per_s", true), ("keys_in_10s_clip", false)] {
        let counts: &[usize] = if density {
            &[1_000, 10_000, 100_000, 1_000_000]
        } else {
            &[10, 100, 1_000, 10_000, 100_000]
        };
        for &keys in counts {
            let duration_s = if density { keys as f32 / 30.0 } else { 10.0 };
            let s = rotation_sampler(keys, duration_s, 0.0);
            let start = if density { duration_s * 0.5 - 5.0 } else { 0.0 };
            group.bench_with_input(BenchmarkId::new(label, keys), &s, |b, s| {
                let mut out = [0.0f32; 4];
                let mut cursor = Cursor::default();
                b.iter(|| {
                    for f in 0..600 {
                        s.sample(start + f as f32 / 60.0, &mut cursor, &mut out);
                        black_box(&out);
                    }
                })
            });
        }
    }
    group.finish();
}

/// A humanoid-like tree of `joints` joints (a spine with limbs branching off), one skin over
/// all of them, and two animations with rotation tracks on every joint (30 keys, irregular
/// phases) and translation on the root.
fn character(joints: usize) -> Scene {
    let mut nodes = Vec::with_capacity(joints);
    for i in 0..joints {
        // Every 8th joint starts a new branch off the spine (joint 8k hangs off 8(k-1)).
        let parent = if i == 0 {
            None
        } else if i % 8 == 0 {
            Some(i - 8)
        } else {
            Some(i - 1)
        };
        nodes.push(Node {
            name: Some(format!("j{i}")),
            source_index: i,
            parent,
            rest: Trs {
                translation: Vec3::new(0.1, 0.0, 0.0),
                ..Trs::IDENTITY
            },
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        });
    }
    let anims = (0..2)
        .map(|a| Animation {
            name: Some(format!("a{a}")),
            channels: (0..joints)
                .map(|j| Channel {
                    node: j,
                    path: Path::Rotation,
                    sampler: rotation_sampler(30, 2.0, j as f32 * 0.37 + a as f32),
                })
                .chain(std::iter::once(Channel {
                    node: 0,
                    path: Path::Translation,
                    sampler: Sampler {
                        interpolation: Interpolation::Linear,
                        times_s: vec![0.0, 1.0, 2.0],
                        values: vec![0.0, 1.0, 0.0, 0.0, 1.1, 0.0, 0.0, 1.0, 0.0],
                        components: 3,
                        is_rotation: false,
                    },
                }))
                .collect(),
        })
        .collect();
    let raw = RawScene {
        name: format!("synthetic_{joints}"),
        nodes,
        skins: vec![Skin {
            name: None,
            joints: (0..joints).collect(),
            joint_from_bind: vec![Mat4::IDENTITY; joints],
        }],
        animations: anims,
        ..Default::default()
    };
    SceneBuilder::build(raw).expect("synthetic character")
}

/// sample 2 motions → layer (second on a subtree mask) → local→model → palette.
fn character_pose(c: &mut Criterion) {
    let mut group = c.benchmark_group("sample_layer_local_to_model_palette");
    for joints in [64usize, 256] {
        let scene = character(joints);
        let layout = PaletteLayout::new(&scene);
        let reference: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
        let mask = BoneMask::subtree(&scene, 8);
        let mut poses = [Pose::rest(&scene), Pose::rest(&scene)];
        let mut cursors = [
            vec![Cursor::default(); scene.animations[0].channels.len()],
            vec![Cursor::default(); scene.animations[1].channels.len()],
        ];
        let mut layered = reference.clone();
        let mut pose = Pose::rest(&scene);
        let mut model = Vec::with_capacity(joints);
        let mut palette = Vec::with_capacity(joints);
        let mut t = 0.0f32;
        group.bench_function(BenchmarkId::new("joints", joints), |b| {
            b.iter(|| {
                t = (t + 1.0 / 60.0) % 2.0;
                for (a, (p, cur)) in poses.iter_mut().zip(cursors.iter_mut()).enumerate() {
                    AnimateJob {
                        scene: &scene,
                        animation: Some(&scene.animations[a]),
                        time_s: t,
                        cursors: cur,
                        pose: p,
                    }
                    .run()
                    .unwrap();
                }
                let layers = [
                    Layer {
                        pose: &poses[0].locals,
                        weight: 1.0,
                        mask: None,
                    },
                    Layer {
                        pose: &poses[1].locals,
                        weight: 1.0,
                        mask: Some(&mask),
                    },
                ];
                LayerJob {
                    reference: &reference,
                    layers: &layers,
                    threshold: DEFAULT_THRESHOLD,
                    output: &mut layered,
                }
                .run()
                .unwrap();
                pose.locals.copy_from_slice(&layered);
                LocalToModelJob {
                    scene: &scene,
                    pose: &pose,
                    model_from_node: &mut model,
                }
                .run()
                .unwrap();
                PaletteJob {
                    scene: &scene,
                    layout: &layout,
                    model_from_node: &model,
                    palette: &mut palette,
                }
                .run()
                .unwrap();
                black_box(&palette);
            })
        });
    }
    group.finish();
}

/// ozz-animation's anchor workload (`../shared/peers/ozzbench/ozz_bench.cc`,
/// `ozz_anim_64j_sample_l2m`): a 64-joint random tree, a 1 s clip with 30 linear keys on every
/// translation, rotation and scale track, played forward at 60 Hz and looping; per frame sample
/// every track (cursors) and run local→model. Built by the library as ozz_bench builds it
/// ([`skinview::crowd::ozz`]), so the trees match; ozz prints its figure in the same
/// side-by-side run.
fn ozz_workload_scene() -> Scene {
    skinview::crowd::ozz::scene(false).unwrap()
}

/// Sample + local→model of [`ozz_workload_scene`] at 60 Hz (criterion id
/// `ozz_workload/sample_local_to_model_64_joints`; one iteration is one frame).
fn ozz_workload(c: &mut Criterion) {
    let scene = ozz_workload_scene();
    let anim = &scene.animations[0];
    let mut cursors = vec![Cursor::default(); anim.channels.len()];
    let mut pose = Pose::rest(&scene);
    let mut model = Vec::with_capacity(scene.nodes.len());
    let mut group = c.benchmark_group("ozz_workload");
    // What the frame drivers run: the clip compiled for four-lane sampling.
    let clip = SoaClip::new(&scene, anim).unwrap();
    let mut state = SoaState::new(&clip);
    // One frame: sample at `frame`'s time (60 Hz, looping every second), then local→model.
    let mut play = |b: &mut criterion::Bencher, sample: &mut dyn FnMut(f32, &mut Pose)| {
        let mut frame = 0u32;
        b.iter(|| {
            let t = (frame % 60) as f32 / 60.0;
            frame = frame.wrapping_add(1);
            sample(t, &mut pose);
            LocalToModelJob {
                scene: &scene,
                pose: &pose,
                model_from_node: &mut model,
            }
            .run()
            .unwrap();
            black_box(&model);
        })
    };
    group.bench_function("sample_local_to_model_64_joints", |b| {
        play(b, &mut |t, pose| {
            SoaAnimateJob {
                scene: &scene,
                clip: &clip,
                time_s: t,
                state: &mut state,
                ahead: None,
                pose,
            }
            .run()
            .unwrap()
        })
    });
    // The per-channel sampler on the same workload.
    group.bench_function("sample_local_to_model_64_joints_per_channel", |b| {
        play(b, &mut |t, pose| {
            AnimateJob {
                scene: &scene,
                animation: Some(anim),
                time_s: t,
                cursors: &mut cursors,
                pose,
            }
            .run()
            .unwrap()
        })
    });
    group.finish();
}

/// ozz-animation's crowd case (`ozz_crowd_64j_c{N}_t{T}` of ozz_bench): N characters of the
/// workload above, character c at phase frac(c × 0.618…), each sampled, taken to model space
/// and turned into its palette every frame, on one thread and on every core (criterion ids
/// `crowd/ozz_64j_c{N}_t{T}`; one iteration is one frame at 60 Hz).
fn crowd(c: &mut Criterion) {
    let scene = skinview::crowd::ozz::scene(true).unwrap();
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut group = c.benchmark_group("crowd");
    for n in [1024usize, 4096] {
        group.throughput(Throughput::Elements(n as u64));
        let counts = if all > 1 { vec![1, all] } else { vec![1] };
        for threads in counts {
            let setup = skinview::crowd::ozz::crowd_setup(n, threads);
            let mut crowd = skinview::crowd::Crowd::new(scene.clone(), setup).unwrap();
            let mut frame = 0u32;
            group.bench_function(format!("ozz_64j_c{n}_t{threads}"), |b| {
                b.iter(|| {
                    crowd.update((frame % 60) as f32 / 60.0).unwrap();
                    frame = frame.wrapping_add(1);
                    black_box(crowd.palettes());
                })
            });
        }
    }
    group.finish();
}

/// The curves panel's drawing of every channel of the Fox's clips (shared models) over the
/// whole clip at its first view's tolerance (the keys' spread, or 360° for Euler angles, over
/// 200 px, at [`skinview::viewer::curves::TOLERANCE_PX`]): what the panel paid every frame
/// before it kept the last frame's curves.
fn curve_drawing(c: &mut Criterion) {
    use skinview::anim::curves::{CurveJob, Curves, RotationForm};
    let shared = std::env::var_os("SKINVIEW_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let Ok(model) = skinview::io::model::load(Some(&shared.join("models/Fox/Fox.glb"))) else {
        eprintln!("curve_drawing: no Fox.glb under {}", shared.display());
        return;
    };
    let mut group = c.benchmark_group("curve_drawing");
    for anim in &model.scene.animations {
        let clip_s = anim.duration_s().max(1e-3);
        let name = anim.name.clone().unwrap_or_default();
        group.throughput(Throughput::Elements(anim.channels.len() as u64));
        group.bench_function(format!("fox_{name}_euler"), |b| {
            let mut out = Curves::default();
            b.iter(|| {
                for ch in &anim.channels {
                    let (lo, hi) = ch
                        .sampler
                        .values
                        .iter()
                        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                            (a.min(v), b.max(v))
                        });
                    let spread = match ch.path {
                        Path::Rotation => 360.0,
                        _ => f64::from(hi - lo).max(1e-3),
                    };
                    CurveJob {
                        sampler: &ch.sampler,
                        path: ch.path,
                        rotation: RotationForm::EulerXyz,
                        window_s: (0.0, clip_s),
                        tolerance: spread / 200.0 * skinview::viewer::curves::TOLERANCE_PX,
                        max_points: 100_000,
                        output: &mut out,
                    }
                    .run()
                    .unwrap();
                    black_box(&out);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    sampling_vs_keys,
    character_pose,
    ozz_workload,
    crowd,
    curve_drawing
);
criterion_main!(benches);
