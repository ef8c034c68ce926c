//! CCD inverse kinematics throughput: a 6-bone chain following a reachable moving target,
//! at most 10 CCD iterations per solve (tolerance 0).
//!
//! `cargo bench --bench ik -- --warm-up-time 1 --measurement-time 3`. One bench iteration
//! solves the same 100 frames of a target moving on a circle (reference-based, so every pass
//! is identical). Throughput is the exact number of CCD iterations those 100 solves run
//! (counted in a first pass: a solve stops early only when its residual rounds to exactly
//! 0.0, which a reachable target does in a good share of frames). Read the figure as CCD
//! iterations per second: 1 Kelem/s = 1 iteration per ms.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)] // bench code; criterion_main! makes an undocumented main

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use skinview::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use skinview::math::Trs;
use skinview::scene::{Node, RawScene, Scene, SceneBuilder};

const LENGTHS: [f32; 6] = [0.5, 0.4, 0.4, 0.3, 0.3, 0.2];
const ITERATIONS: u32 = 10;
const FRAMES: usize = 100;

fn chain() -> Scene {
    let nodes = (0..LENGTHS.len())
        .map(|i| Node {
            name: None,
            source_index: i,
            parent: i.checked_sub(1),
            rest: Trs {
                translation: if i == 0 {
                    Vec3::ZERO
                } else {
                    Vec3::new(LENGTHS[i - 1], 0.0, 0.0)
                },
                ..Trs::IDENTITY
            },
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        })
        .collect();
    SceneBuilder::build(RawScene {
        name: "chain6".into(),
        nodes,
        ..Default::default()
    })
    .unwrap()
}

/// A point on a tilted circle well inside the chain's reach (total length 2.1).
fn target(frame: usize) -> Vec3 {
    let t = frame as f32 * (std::f32::consts::TAU / FRAMES as f32);
    Vec3::new(
        0.8 + 0.4 * t.cos(),
        0.9 + 0.4 * t.sin(),
        0.3 * (2.0 * t).sin(),
    )
}

struct Solver<'a> {
    scene: &'a Scene,
    rest: &'a [Trs],
    limits: &'a [Option<JointLimits>],
    settings: IkSettings,
    output: Vec<Trs>,
    result: IkResult,
    scratch: IkScratch,
}

impl Solver<'_> {
    /// Solve the 100 frames; returns the CCD iterations run.
    fn pass(&mut self) -> u64 {
        let mut iterations = 0;
        for frame in 0..FRAMES {
            let eff = Effector {
                end_node: 5,
                chain_length: 6,
                tip_local: Vec3::new(LENGTHS[5], 0.0, 0.0),
                target_model: target(frame),
                weight: 1.0,
            };
            CcdJob {
                scene: self.scene,
                reference: self.rest,
                input: self.rest,
                previous: None,
                participation: &[],
                limits: self.limits,
                effectors: std::slice::from_ref(&eff),
                settings: self.settings,
                output: &mut self.output,
                result: &mut self.result,
                scratch: &mut self.scratch,
            }
            .run()
            .unwrap();
            iterations += self.result.iterations_used as u64;
            black_box(&self.output);
        }
        iterations
    }
}

fn bench(c: &mut Criterion) {
    let scene = chain();
    let rest: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
    let limits: Vec<Option<JointLimits>> =
        vec![Some(JointLimits::symmetric([1.2, 1.0, 0.3])); LENGTHS.len()];
    let settings = IkSettings {
        iterations: ITERATIONS,
        tolerance_m: 0.0,
        mode: IkMode::ReferenceBased,
        max_angular_velocity_rad_s: None,
        dt_s: 1.0 / 60.0,
    };
    let mut group = c.benchmark_group("ccd_6bone");
    for (name, lim) in [("free", &[][..]), ("zyx_limits", &limits[..])] {
        let mut solver = Solver {
            scene: &scene,
            rest: &rest,
            limits: lim,
            settings,
            output: Vec::new(),
            result: IkResult::default(),
            scratch: IkScratch::default(),
        };
        let iterations = solver.pass();
        eprintln!(
            "ccd_6bone/{name}: {iterations} CCD iterations per {FRAMES} solves ({:.2} per solve)",
            iterations as f64 / FRAMES as f64
        );
        group.throughput(Throughput::Elements(iterations));
        group.bench_function(name, |b| b.iter(|| solver.pass()));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
