//! CCD inverse kinematics throughput: a 6-bone chain following a reachable moving target,
//! 10 CCD iterations per solve (tolerance 0, so every solve runs all 10).
//!
//! `cargo bench --bench ik -- --warm-up-time 1 --measurement-time 3`. Throughput is reported
//! in CCD iterations (elements); iterations per ms = elements/s ÷ 1000.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use glam::Vec3;
use skinview::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use skinview::math::Trs;
use skinview::scene::{Node, RawScene, Scene, SceneBuilder};

const LENGTHS: [f32; 6] = [0.5, 0.4, 0.4, 0.3, 0.3, 0.2];
const ITERATIONS: u32 = 10;

fn chain() -> Scene {
    let nodes = (0..LENGTHS.len())
        .map(|i| Node {
            name: None,
            source_index: i,
            parent: i.checked_sub(1),
            rest: Trs { translation: if i == 0 { Vec3::ZERO } else { Vec3::new(LENGTHS[i - 1], 0.0, 0.0) }, ..Trs::IDENTITY },
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        })
        .collect();
    SceneBuilder::build(RawScene { name: "chain6".into(), nodes, ..Default::default() }).unwrap()
}

/// A point on a tilted circle well inside the chain's reach (total length 2.1).
fn target(frame: u64) -> Vec3 {
    let t = frame as f32 * 0.05;
    Vec3::new(0.8 + 0.4 * t.cos(), 0.9 + 0.4 * t.sin(), 0.3 * (0.7 * t).sin())
}

fn bench(c: &mut Criterion) {
    let scene = chain();
    let rest: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
    let limits: Vec<Option<JointLimits>> = vec![Some(JointLimits::symmetric([1.2, 1.0, 0.3])); LENGTHS.len()];
    let settings = IkSettings { iterations: ITERATIONS, tolerance_m: 0.0, mode: IkMode::ReferenceBased, max_angular_velocity_rad_s: None, dt_s: 1.0 / 60.0 };
    let mut group = c.benchmark_group("ccd_6bone");
    group.throughput(Throughput::Elements(ITERATIONS as u64));
    for (name, lim) in [("free", &[][..]), ("zyx_limits", &limits[..])] {
        let mut output = Vec::new();
        let mut result = IkResult::default();
        let mut scratch = IkScratch::default();
        let mut frame = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                frame += 1;
                let eff = Effector { end_node: 5, chain_length: 6, tip_local: Vec3::new(LENGTHS[5], 0.0, 0.0), target_model: target(frame), weight: 1.0 };
                CcdJob {
                    scene: &scene,
                    reference: &rest,
                    input: &rest,
                    previous: None,
                    participation: &[],
                    limits: lim,
                    effectors: std::slice::from_ref(&eff),
                    settings,
                    output: &mut output,
                    result: &mut result,
                    scratch: &mut scratch,
                }
                .run()
                .unwrap();
                assert_eq!(result.iterations_used, ITERATIONS);
                black_box(&output);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
