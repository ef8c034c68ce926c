//! Partition time (issue 9): a 1M-triangle skinned grid (709 × 709 vertices, 64 bones at
//! seeded random spots, each vertex weighted to its 4 nearest by inverse squared distance, as
//! smooth skins are) split for K = 16 and 32 bones, and the shared CesiumMan for K = 8, on one
//! core (the partitioner is single-threaded).
//!
//! `cargo bench --bench partition -- --warm-up-time 1 --measurement-time 5`. Throughput is
//! triangles: 1 Melem/s = 1M triangles per second.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)] // bench code; criterion_main! makes an undocumented main

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use skinview::partition::partition;
use skinview::scene::{Primitive, SkinWeights};

// The tests' seeded xorshift64*.
#[path = "../tests/common/rng.rs"]
mod rng;
use rng::XorShift64Star;

/// Grid side in vertices: 2 · 708² = 1,002,528 triangles.
const SIDE: usize = 709;
const BONES: usize = 64;
const INFLUENCES: usize = 4;

/// The 1M-triangle skinned grid (module documentation).
pub fn grid_mesh() -> Primitive {
    let mut rng = XorShift64Star::from_state(0x853C_49E6_748F_EA9B);
    let mut unit = || rng.next_f32();
    let bones: Vec<Vec3> = (0..BONES)
        .map(|_| Vec3::new(unit(), unit(), 0.0) * SIDE as f32)
        .collect();
    let positions: Vec<Vec3> = (0..SIDE * SIDE)
        .map(|i| Vec3::new((i % SIDE) as f32, (i / SIDE) as f32, 0.0))
        .collect();
    let mut joints = Vec::with_capacity(positions.len() * 4);
    let mut weights = Vec::with_capacity(positions.len() * 4);
    for p in &positions {
        let mut d: Vec<(f32, u32)> = bones
            .iter()
            .enumerate()
            .map(|(b, q)| (p.distance_squared(*q), b as u32))
            .collect();
        d.select_nth_unstable_by(INFLUENCES, |a, b| a.0.total_cmp(&b.0));
        d[..INFLUENCES].sort_by(|a, b| a.0.total_cmp(&b.0));
        let w: Vec<f32> = d[..INFLUENCES].iter().map(|e| 1.0 / (1.0 + e.0)).collect();
        let sum: f32 = w.iter().sum();
        for i in 0..INFLUENCES {
            joints.push(d[i].1);
            weights.push(w[i] / sum);
        }
    }
    let mut indices = Vec::with_capacity((SIDE - 1) * (SIDE - 1) * 6);
    for y in 0..SIDE - 1 {
        for x in 0..SIDE - 1 {
            let i = (y * SIDE + x) as u32;
            let s = SIDE as u32;
            indices.extend([i, i + 1, i + s, i + 1, i + s + 1, i + s]);
        }
    }
    Primitive {
        positions,
        indices,
        skin_weights: Some(SkinWeights {
            width: 4,
            joints,
            weights,
        }),
        ..Primitive::default()
    }
}

fn bench(c: &mut Criterion) {
    let grid = grid_mesh();
    let triangles = grid.indices.len() / 3;
    let mut g = c.benchmark_group("partition_1M_triangles");
    g.sample_size(10);
    g.throughput(Throughput::Elements(triangles as u64));
    for k in [16usize, 32] {
        let s = partition(&grid, k).unwrap().stats;
        println!(
            "grid {triangles} triangles K={k}: {} submeshes (bound {}, minimal {}), ×{:.3} \
             vertices, ACMR {:.3} -> {:.3}, {} dropped",
            s.submeshes,
            s.lower_bound,
            s.minimal,
            s.duplication_ratio,
            s.acmr_in,
            s.acmr_out,
            s.dropped_influences
        );
        g.bench_function(format!("K{k}"), |b| {
            b.iter(|| partition(black_box(&grid), k).unwrap())
        });
    }
    g.finish();
    let shared = std::env::var_os("SKINVIEW_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let cesium = shared.join("models/CesiumMan/CesiumMan.glb");
    if let Ok(model) = skinview::io::model::load(Some(&cesium)) {
        let prim = model.scene.meshes[0].primitives[0].clone();
        let mut g = c.benchmark_group("partition_cesium_man");
        g.throughput(Throughput::Elements((prim.indices.len() / 3) as u64));
        g.bench_function("K8", |b| b.iter(|| partition(black_box(&prim), 8).unwrap()));
        g.finish();
    } else {
        println!(
            "no {} (set SKINVIEW_SHARED): CesiumMan bench skipped",
            cesium.display()
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
