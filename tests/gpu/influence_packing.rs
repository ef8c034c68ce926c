//! Packed joints and weights (src/gpu/influence_packing.rs): each draw's influences are stored
//! in the narrowest form that holds them exactly, and every GPU path reads that form back to
//! what the CPU reference skins with — the vertex formats of the draw's vertex stage and the
//! unpacking in the capture and compute shaders, in every blend.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code: panics and prints are its report

use crate::common;
use crate::gpu_readback::cpu_skin_draws;

use skinview::Scene;
use skinview::compare::CPU_GPU_TOLERANCE_REL;
use skinview::frame::{CpuSkinner, FrameState};
use skinview::gpu::InfluencePacking;
use skinview::gpu::{CapturePath, GpuReadback};
use skinview::skin::weights::{JointEncoding, WeightEncoding};
use skinview::skin::{SkinMode, SkinOptions};

/// Every draw's weights rounded to codes of `max` (largest remainder, so each vertex's codes
/// sum to `max`), stored as the f32 `code / max` an importer makes of a normalized file.
fn quantise(scene: &mut Scene, max: u32) {
    for mesh in &mut scene.meshes {
        for prim in &mut mesh.primitives {
            let Some(w) = prim.skin_weights.as_mut() else {
                continue;
            };
            let width = w.width;
            for ws in w.weights.chunks_exact_mut(width) {
                let sum: f32 = ws.iter().sum();
                let scaled: Vec<f64> = ws
                    .iter()
                    .map(|&x| f64::from(x / sum) * f64::from(max))
                    .collect();
                let mut codes: Vec<u32> = scaled.iter().map(|x| x.floor() as u32).collect();
                let mut order: Vec<usize> = (0..width).collect();
                order.sort_by(|&a, &b| {
                    let frac = |i: usize| scaled[i] - scaled[i].floor();
                    frac(b).total_cmp(&frac(a))
                });
                let short = max - codes.iter().sum::<u32>();
                for &i in order.iter().take(short as usize) {
                    codes[i] += 1;
                }
                for (x, c) in ws.iter_mut().zip(codes) {
                    *x = c as f32 / max as f32;
                }
            }
        }
    }
}

/// Every skin's joints listed again from index `shift` on (the same nodes and inverse binds)
/// and the vertices pointed at the copies: the same skinning with wider joint indices.
fn joints_from(scene: &mut Scene, shift: usize) {
    for skin in &mut scene.skins {
        let n = skin.joints.len();
        let (joints, binds) = (skin.joints.clone(), skin.joint_from_bind.clone());
        skin.joints = (0..shift + n).map(|i| joints[i % n]).collect();
        skin.joint_from_bind = (0..shift + n).map(|i| binds[i % n]).collect();
    }
    for mesh in &mut scene.meshes {
        for prim in &mut mesh.primitives {
            if let Some(w) = prim.skin_weights.as_mut() {
                w.joints.iter_mut().for_each(|j| *j += shift as u32);
            }
        }
    }
}

/// `scene`'s first draw three times (LBS, DQS, stitch) read back through the capture shader,
/// the draw and the compute pass at two times of its first clip, against the CPU reference;
/// returns the packing the GPU chose.
fn check_every_path(ctx: &skinview::gpu::GpuContext, mut scene: Scene) -> InfluencePacking {
    scene.draws = vec![scene.draws[0]; 3];
    let draws: Vec<usize> = (0..3).collect();
    let mut frame = FrameState::new(&scene);
    let mut readback = GpuReadback::new(ctx, &scene, &frame, None).unwrap();
    let mut cpu = CpuSkinner::new(&scene, None);
    for &d in &draws {
        let options = SkinOptions {
            mode: SkinMode::ALL[d],
            ..Default::default()
        };
        cpu.set_draw_options(&scene, d, options);
        readback.gpu.set_skin_options(ctx, d, options);
    }
    let packing = readback.gpu.draws[0].packing;
    let duration = scene.animations.first().map_or(0.0, |a| a.duration_s());
    let clip = (!scene.animations.is_empty()).then_some(0);
    let mut worst = 0.0f64;
    for t in [duration * 0.3, duration * 0.7] {
        frame.evaluate(&scene, clip, t).unwrap();
        let want = cpu_skin_draws(&mut cpu, &scene, &frame, &draws);
        let (lo, hi) = skinview::skin::bounds(&want).unwrap();
        let diagonal = f64::from((hi - lo).length());
        for path in [
            CapturePath::CaptureShader,
            CapturePath::Draw,
            CapturePath::ComputePass,
        ] {
            let got = readback.read(ctx, &scene, &frame, path, &draws).unwrap();
            for (d, (w, g)) in want.iter().zip(&got).enumerate() {
                for (v, (a, b)) in w.positions.iter().zip(&g.positions).enumerate() {
                    let e = f64::from((*a - *b).length()) / diagonal;
                    worst = worst.max(e);
                    assert!(
                        e < CPU_GPU_TOLERANCE_REL,
                        "{} ({}), {:?}, vertex {v} at {t} s through the {}: {e:.2e} of the \
                         diagonal",
                        scene.name,
                        packing.describe(),
                        SkinMode::ALL[d],
                        path.name()
                    );
                }
            }
        }
    }
    println!(
        "{:<36} {}: worst {worst:.2e} of the diagonal",
        scene.name,
        packing.describe()
    );
    packing
}

/// The shared models keep their float weights (f32) and the rigs stored as normalized bytes
/// and shorts get unorm8 and unorm16; CesiumMan quantised in memory to either gets it, and
/// with joint indices past 255 and past 65,535 gets 16- and 32-bit joints. Each reads back, on
/// every path and in every blend, as the CPU reference skins it.
#[test]
fn packed_influences_read_back_as_the_cpu_skins_them() {
    let Some(ctx) = common::gpu() else { return };
    let load = |name: &str| skinview::io::load(&common::model(name)).unwrap();
    let packed = |joints, weights| InfluencePacking { joints, weights };
    let (u8_, u16_) = (Some(JointEncoding::U8), Some(JointEncoding::U16));
    use WeightEncoding::{F32, Unorm8, Unorm16};
    assert_eq!(check_every_path(ctx, load("CesiumMan")), packed(u8_, F32));
    assert_eq!(
        check_every_path(ctx, load("rig_seed4_8inf_morph_ubyte")),
        packed(u8_, Unorm8)
    );
    assert_eq!(
        check_every_path(ctx, load("rig_seed5_40j_6inf_ushort")),
        packed(u8_, Unorm16)
    );
    for (max, want) in [(255, Unorm8), (65535, Unorm16)] {
        let mut scene = load("CesiumMan");
        quantise(&mut scene, max);
        scene.name = format!("CesiumMan, weights in 1/{max}");
        assert_eq!(check_every_path(ctx, scene), packed(u8_, want));
    }
    for (shift, want) in [(256, u16_), (1 << 16, None)] {
        let mut scene = load("CesiumMan");
        quantise(&mut scene, 255);
        joints_from(&mut scene, shift);
        scene.name = format!("CesiumMan, joints from {shift}");
        assert_eq!(check_every_path(ctx, scene), packed(want, Unorm8));
    }
}
