//! CPU skinning throughput and the end-to-end CesiumMan frame.
//!
//! `cargo bench --bench skinning`. Figures go to BENCHMARKS.md. Anchor (issue 2): ozz-animation's
//! SkinningJob does about 130 M vertices/s per thread (positions + normals, 4 influences).
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)] // bench code; criterion_main! makes an undocumented main

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::scene::SkinWeights;
use skinview::skin::SkinnedVertices;
use skinview::skin::{SkinningJob, VertexWeights};

const VERTICES: usize = 1_000_000;
const JOINTS: usize = 64;

/// Deterministic pseudo-random numbers (xorshift) so runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

struct Synthetic {
    palette: Vec<Mat4>,
    weights: VertexWeights,
    /// The same weights in the any-count (CSR) layout.
    weights_csr: VertexWeights,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
}

fn synthetic() -> Synthetic {
    let mut r = Rng(0x9E3779B97F4A7C15);
    let palette = (0..JOINTS)
        .map(|_| {
            Mat4::from_scale_rotation_translation(
                Vec3::splat(0.9 + 0.2 * r.next()),
                Quat::from_rotation_arc(Vec3::Y, Vec3::new(r.next(), 1.0, r.next()).normalize()),
                Vec3::new(r.next(), r.next(), r.next()),
            )
        })
        .collect();
    let mut joints = Vec::with_capacity(VERTICES * 4);
    let mut weights = Vec::with_capacity(VERTICES * 4);
    for v in 0..VERTICES {
        // Neighbouring joints, like a real mesh (keeps the palette in L1 as real data does).
        let base = (v * JOINTS / VERTICES) as u32;
        let w: [f32; 4] = [0.55, 0.25, 0.15, 0.05];
        for (k, &wk) in w.iter().enumerate() {
            joints.push((base + k as u32 * 3 + (r.next() * 2.0) as u32) % JOINTS as u32);
            weights.push(wk);
        }
    }
    let positions = (0..VERTICES)
        .map(|_| Vec3::new(r.next(), r.next(), r.next()))
        .collect();
    let normals = (0..VERTICES)
        .map(|_| Vec3::new(r.next() - 0.5, r.next() - 0.5, 1.0).normalize())
        .collect();
    let sw = SkinWeights {
        width: 4,
        joints,
        weights,
    };
    Synthetic {
        palette,
        weights: VertexWeights::from_skin_weights(&sw),
        weights_csr: VertexWeights::csr_from_skin_weights(&sw),
        positions,
        normals,
    }
}

fn cpu_skinning(c: &mut Criterion) {
    let s = synthetic();
    let mut out_p = vec![Vec3::ZERO; VERTICES];
    let mut out_n = vec![Vec3::ZERO; VERTICES];
    let mut group = c.benchmark_group("cpu_skinning_1M_vertices_4_influences");
    group.throughput(Throughput::Elements(VERTICES as u64));
    group.sample_size(20);
    let threads = rayon::current_num_threads();
    for (label, pool_threads, weights) in [
        ("fixed4_1_thread", 1usize, &s.weights),
        ("fixed4_all_threads", threads, &s.weights),
        ("csr_1_thread", 1, &s.weights_csr),
    ] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(pool_threads)
            .build()
            .unwrap();
        group.bench_function(BenchmarkId::new("positions_normals", label), |b| {
            b.iter(|| {
                pool.install(|| {
                    SkinningJob {
                        palette: &s.palette,
                        weights,
                        positions: &s.positions,
                        normals: Some(&s.normals),
                        tangents: None,
                        out_positions: &mut out_p,
                        out_normals: Some(&mut out_n),
                        out_tangents: None,
                        normalize_normals: true,
                        normal_mode: skinview::skin::NormalMode::Exact,
                    }
                    .run()
                    .unwrap()
                });
                black_box(&out_p);
            })
        });
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function(BenchmarkId::new("positions_only", "fixed4_1_thread"), |b| {
        b.iter(|| {
            pool.install(|| {
                SkinningJob {
                    palette: &s.palette,
                    weights: &s.weights,
                    positions: &s.positions,
                    normals: None,
                    tangents: None,
                    out_positions: &mut out_p,
                    out_normals: None,
                    out_tangents: None,
                    normalize_normals: true,
                    normal_mode: skinview::skin::NormalMode::Exact,
                }
                .run()
                .unwrap()
            });
            black_box(&out_p);
        })
    });
    group.finish();
}

fn cesiumman_frame(c: &mut Criterion) {
    // The shared test data: $SKINVIEW_SHARED, ../shared, or tests/data (scripts/setup.sh --tests).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("SKINVIEW_SHARED").map(std::path::PathBuf::from);
    let path = shared
        .into_iter()
        .chain([root.join("../shared"), root.join("tests/data")])
        .map(|d| d.join("models/CesiumMan/CesiumMan.glb"))
        .find(|p| p.exists())
        .unwrap_or_else(|| root.join("../shared/models/CesiumMan/CesiumMan.glb"));
    let Ok(scene) = skinview::io::load(&path) else {
        eprintln!("skipping cesiumman_frame: {} not found", path.display());
        return;
    };
    let mut frame = FrameState::new(&scene);
    let mut skinner = CpuSkinner::new(&scene, None);
    let mut outs: Vec<SkinnedVertices> = vec![SkinnedVertices::default(); scene.draws.len()];
    let duration = scene.animations[0].duration_s();
    let mut t = 0.0f32;
    // Frame = sample animation → local→model → palette → skin every draw (CPU).
    c.bench_function("cesiumman_frame_sample_palette_skin", |b| {
        b.iter(|| {
            t = (t + 1.0 / 60.0) % duration;
            frame.evaluate(&scene, Some(0), t).unwrap();
            for (i, o) in outs.iter_mut().enumerate() {
                skinner.skin_draw(&scene, &frame, i, o).unwrap();
            }
            black_box(&outs);
        })
    });
    c.bench_function("cesiumman_sample_palette_only", |b| {
        b.iter(|| {
            t = (t + 1.0 / 60.0) % duration;
            frame.evaluate(&scene, Some(0), t).unwrap();
            black_box(&frame.palette);
        })
    });
}

criterion_group!(benches, cpu_skinning, cesiumman_frame);
criterion_main!(benches);
