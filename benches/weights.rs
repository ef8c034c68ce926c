//! Weight tools on a 100k-vertex mesh (issue 11): regeneration (every vertex against every
//! bone's pseudo-cylinder), smoothing of the regenerated single-bone weights, rogue removal,
//! distance weights. The mesh is a closed tube 10 bones long, 1,000 rings of 100 vertices
//! (100,002 vertices, 200,000 triangles), tapering like a limb. `cargo bench --bench weights`;
//! figures go to BENCHMARKS.md.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)] // bench code; criterion_main! makes an undocumented main

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use skinview::weights::distance::DistanceWeightsJob;
use skinview::weights::regenerate::RegenerateJob;
use skinview::weights::rogue::RogueJob;
use skinview::weights::smooth::SmoothJob;
use skinview::weights::{BoneAxis, WeightMesh};

const BONES: usize = 10;
const RINGS: usize = 1000;
const AROUND: usize = 100;

fn mesh() -> (WeightMesh, Vec<BoneAxis>) {
    let length = BONES as f32;
    let r = |x: f32| 0.3 - 0.015 * x + 0.03 * (x * std::f32::consts::PI).sin();
    let mut positions = Vec::with_capacity(RINGS * AROUND + 2);
    let mut triangles = Vec::with_capacity(2 * RINGS * AROUND);
    for i in 0..RINGS {
        let x = length * i as f32 / (RINGS - 1) as f32;
        for j in 0..AROUND {
            let a = std::f32::consts::TAU * j as f32 / AROUND as f32;
            positions.push(Vec3::new(x, r(x) * a.cos(), r(x) * a.sin()));
        }
    }
    let ring = |i: usize, j: usize| (i * AROUND + j % AROUND) as u32;
    for i in 0..RINGS - 1 {
        for j in 0..AROUND {
            triangles.push([ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)]);
            triangles.push([ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)]);
        }
    }
    let start = positions.len() as u32;
    positions.push(Vec3::ZERO);
    positions.push(Vec3::new(length, 0.0, 0.0));
    for j in 0..AROUND {
        triangles.push([start, ring(0, j + 1), ring(0, j)]);
        triangles.push([start + 1, ring(RINGS - 1, j), ring(RINGS - 1, j + 1)]);
    }
    let bones = (0..BONES)
        .map(|b| BoneAxis {
            name: format!("bone{b}"),
            base: Vec3::new(b as f32, 0.0, 0.0),
            tip: Vec3::new(b as f32 + 1.0, 0.0, 0.0),
            parent: b.checked_sub(1),
        })
        .collect();
    (
        WeightMesh {
            positions,
            triangles,
        },
        bones,
    )
}

fn weights(c: &mut Criterion) {
    let (mesh, bones) = mesh();
    let n = mesh.positions.len() as u64;
    let mut g = c.benchmark_group("weights_100k_vertices");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    let regen = || {
        RegenerateJob {
            mesh: &mesh,
            bones: &bones,
            sections: None,
        }
        .run()
        .unwrap()
    };
    g.bench_function("regenerate", |b| b.iter(|| black_box(regen())));
    let r = regen();
    let smooth = || {
        let mut w = r.influences();
        let stats = SmoothJob {
            mesh: &mesh,
            sections: &r.sections,
            threshold: 0.5,
            max_iterations: 200,
            max_influences: 4,
            influences: &mut w,
        }
        .run()
        .unwrap();
        (w, stats)
    };
    // Say whether the timed smoothing converges within its sweeps (BENCHMARKS.md).
    let (_, stats) = smooth();
    eprintln!(
        "smooth: {} sweeps, converged: {}, worst edge over its limit by {:.1e}",
        stats.iterations, stats.converged, stats.max_excess
    );
    g.bench_function("smooth", |b| b.iter(|| black_box(smooth())));
    g.bench_function("rogue", |b| {
        b.iter(|| {
            let mut w = r.influences();
            black_box(
                RogueJob {
                    mesh: &mesh,
                    sections: Some(&r.sections),
                    bone_count: bones.len(),
                    influences: &mut w,
                }
                .run()
                .unwrap(),
            )
        })
    });
    g.bench_function("distance", |b| {
        b.iter(|| {
            black_box(
                DistanceWeightsJob {
                    mesh: &mesh,
                    bones: &bones,
                    k: 1.0,
                    n: 4.0,
                    threshold: 0.01,
                    max_influences: 4,
                }
                .run()
                .unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, weights);
criterion_main!(benches);
