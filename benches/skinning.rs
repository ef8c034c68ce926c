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
use glam::{Mat4, Quat, Vec3, Vec4};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::scene::SkinWeights;
use skinview::skin::SkinnedVertices;
use skinview::skin::simd::Kernel;
use skinview::skin::{NormalMode, SkinningJob, VertexWeights};

// Deterministic pseudo-random numbers (the tests' xorshift64) so runs are comparable.
#[path = "../tests/common/rng.rs"]
mod rng;
use rng::XorShift64;

const VERTICES: usize = 1_000_000;
const JOINTS: usize = 64;

struct Synthetic {
    palette: Vec<Mat4>,
    /// Four-slot weights as given (f32; u8 joints: the palette has 64 matrices).
    weights: VertexWeights,
    /// The same weights in the any-count (CSR) layout.
    weights_csr: VertexWeights,
    /// The weights quantised as a glTF file's unorm8 / unorm16 weights would be (each vertex
    /// still summing to 1 within the quantum).
    weights_unorm8: VertexWeights,
    weights_unorm16: VertexWeights,
    /// Bytes per vertex of the f32 four-slot record, for the memory floor.
    record_bytes: usize,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
}

fn synthetic() -> Synthetic {
    let mut r = XorShift64(0x9E3779B97F4A7C15);
    let palette = (0..JOINTS)
        .map(|_| {
            Mat4::from_scale_rotation_translation(
                Vec3::splat(0.9 + 0.2 * r.next_f32()),
                Quat::from_rotation_arc(
                    Vec3::Y,
                    Vec3::new(r.next_f32(), 1.0, r.next_f32()).normalize(),
                ),
                Vec3::new(r.next_f32(), r.next_f32(), r.next_f32()),
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
            joints.push((base + k as u32 * 3 + (r.next_f32() * 2.0) as u32) % JOINTS as u32);
            weights.push(wk);
        }
    }
    let positions = (0..VERTICES)
        .map(|_| Vec3::new(r.next_f32(), r.next_f32(), r.next_f32()))
        .collect();
    let normals: Vec<Vec3> = (0..VERTICES)
        .map(|_| Vec3::new(r.next_f32() - 0.5, r.next_f32() - 0.5, 1.0).normalize())
        .collect();
    let tangents = normals
        .iter()
        .map(|n: &Vec3| n.any_orthonormal_vector().extend(1.0))
        .collect();
    let sw = SkinWeights {
        width: 4,
        joints,
        weights,
    };
    let quantised = |q: f32| {
        VertexWeights::from_skin_weights(&SkinWeights {
            weights: sw.weights.iter().map(|w| (w * q).round() / q).collect(),
            ..sw.clone()
        })
    };
    let weights = VertexWeights::from_skin_weights(&sw);
    let record_bytes = match &weights.layout {
        skinview::skin::weights::WeightLayout::Fixed4(p) => p.stride(),
        _ => 24,
    };
    Synthetic {
        palette,
        weights,
        weights_csr: VertexWeights::csr_from_skin_weights(&sw),
        weights_unorm8: quantised(255.0),
        weights_unorm16: quantised(65535.0),
        record_bytes,
        positions,
        normals,
        tangents,
    }
}

/// What a skinning case writes: normals (and how), tangents.
#[derive(Clone, Copy)]
struct Attributes {
    normals: bool,
    tangents: bool,
    mode: NormalMode,
    renormalize: bool,
    /// Tangents made perpendicular to the unit normal and unit (else as the blend gives them).
    ortho: bool,
}

/// One skinning pass over the synthetic mesh on `kernel` (`None`: the one `run` picks).
fn skin(
    s: &Synthetic,
    weights: &VertexWeights,
    a: Attributes,
    kernel: Option<Kernel>,
    out: &mut Outputs,
) {
    let mut job = SkinningJob {
        palette: &s.palette,
        weights,
        positions: &s.positions,
        normals: a.normals.then_some(&s.normals[..]),
        tangents: a.tangents.then_some(&s.tangents[..]),
        out_positions: &mut out.p,
        out_normals: a.normals.then_some(&mut out.n[..]),
        out_tangents: a.tangents.then_some(&mut out.t[..]),
        renormalize: a.renormalize,
        orthonormalize_tangents: a.ortho,
        normal_mode: a.mode,
    };
    match kernel {
        Some(k) => job.run_kernel(k).unwrap(),
        None => job.run().unwrap(),
    }
}

struct Outputs {
    p: Vec<Vec3>,
    n: Vec<Vec3>,
    t: Vec<Vec4>,
}

fn cpu_skinning(c: &mut Criterion) {
    let s = synthetic();
    let mut out = Outputs {
        p: vec![Vec3::ZERO; VERTICES],
        n: vec![Vec3::ZERO; VERTICES],
        t: vec![Vec4::ZERO; VERTICES],
    };
    eprintln!(
        "CPU skinning kernel: {}",
        skinview::skin::simd::kernel_name()
    );
    let mut group = c.benchmark_group("cpu_skinning_1M_vertices_4_influences");
    group.throughput(Throughput::Elements(VERTICES as u64));
    group.sample_size(20);
    let threads = rayon::current_num_threads();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let all = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let attrs = |normals, tangents, mode, renormalize| Attributes {
        normals,
        tangents,
        mode,
        renormalize,
        ortho: renormalize,
    };
    // The ids ../shared/peers/ozzbench reads (…/fixed4_1_thread), then the same on the
    // portable path, on the 256-bit AVX2 kernel (where the CPU runs it), on all threads, with
    // the any-count (CSR) layout and with quantised weights; and the other normal modes.
    let cases = [
        (
            "positions_only",
            attrs(false, false, NormalMode::Exact, true),
        ),
        // ozz's method: normals by the blended 3×3, not renormalised.
        (
            "positions_normals_blend3x3",
            attrs(true, false, NormalMode::Blend3x3, false),
        ),
        // Exact inverse-transpose normals, renormalised (more work than ozz does).
        (
            "positions_normals",
            attrs(true, false, NormalMode::Exact, true),
        ),
        // ozz's method with tangents: both through the blended 3×3, neither renormalised.
        (
            "positions_normals_tangents",
            attrs(true, true, NormalMode::Blend3x3, false),
        ),
        // Raw blended normals, tangents made perpendicular to the unit normal and unit (what
        // the animation stage's CPU skinning does before its separate normalisation pass).
        (
            "positions_normals_tangents_orthonormalised",
            Attributes {
                ortho: true,
                ..attrs(true, true, NormalMode::Blend3x3, false)
            },
        ),
        (
            "positions_normals_blend3x3_renormalised",
            attrs(true, false, NormalMode::Blend3x3, true),
        ),
        (
            "positions_normals_exact_raw",
            attrs(true, false, NormalMode::Exact, false),
        ),
    ];
    for (name, a) in cases {
        for (label, pool, weights, kernel) in [
            ("fixed4_1_thread", &one, &s.weights, None),
            (
                "fixed4_portable_1_thread",
                &one,
                &s.weights,
                Some(Kernel::Portable),
            ),
            (
                "fixed4_avx2_1_thread",
                &one,
                &s.weights,
                Some(Kernel::Avx2Fma),
            ),
            ("fixed4_all_threads", &all, &s.weights, None),
            ("csr_1_thread", &one, &s.weights_csr, None),
            ("unorm8_1_thread", &one, &s.weights_unorm8, None),
            ("unorm16_1_thread", &one, &s.weights_unorm16, None),
        ] {
            if kernel.is_some_and(|k| !k.is_available()) {
                continue;
            }
            group.bench_function(BenchmarkId::new(name, label), |b| {
                b.iter(|| {
                    pool.install(|| skin(&s, weights, a, kernel, &mut out));
                    black_box(&out.p);
                })
            });
        }
    }
    group.finish();

    // The memory-bandwidth floor of the same streams: read the weight records, positions,
    // normals and tangents, write the outputs, no arithmetic (a streaming copy). The skinning
    // figures above cannot beat these.
    let records = vec![1u8; VERTICES * s.record_bytes];
    let mut floor = c.benchmark_group("memory_floor_1M_vertices");
    floor.throughput(Throughput::Elements(VERTICES as u64));
    floor.sample_size(20);
    let streams = [
        ("positions", false, false),
        ("positions_normals", true, false),
        ("positions_normals_tangents", true, true),
    ];
    for (name, normals, tangents) in streams {
        for (label, pool) in [("1_thread", &one), ("all_threads", &all)] {
            floor.bench_function(BenchmarkId::new(name, label), |b| {
                b.iter(|| {
                    pool.install(|| {
                        stream_copy(&s, &records, normals, tangents, &mut out);
                    });
                    black_box(&out.p);
                })
            });
        }
    }
    floor.finish();
}

/// Copy each input stream to its output in one pass over parallel chunks, reading the weight
/// records too (folded into the first output so they are not optimised away): the traffic of
/// skinning without its arithmetic.
fn stream_copy(s: &Synthetic, records: &[u8], normals: bool, tangents: bool, out: &mut Outputs) {
    use rayon::prelude::*;
    const CHUNK: usize = 8192;
    let rb = s.record_bytes;
    out.p
        .par_chunks_mut(CHUNK)
        .zip(out.n.par_chunks_mut(CHUNK))
        .zip(out.t.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(i, ((p, n), t))| {
            let from = i * CHUNK;
            let recs = &records[from * rb..(from + p.len()) * rb];
            let mut fold = 0u32;
            for (k, rec) in recs.chunks_exact(rb).enumerate() {
                fold ^= u32::from_le_bytes([rec[0], rec[1], rec[2], rec[rb - 1]]);
                p[k] = s.positions[from + k];
                if normals {
                    n[k] = s.normals[from + k];
                }
                if tangents {
                    t[k] = s.tangents[from + k];
                }
            }
            p[0].x += (fold & 1) as f32;
        });
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
