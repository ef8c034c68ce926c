//! Writes the long-clip character of `skinview optimize`'s speed target (issue 48): the
//! project's humanoid generator (`builtin:humanoid`, 18 joints) with its skin subdivided to at
//! least MIN_VERTICES vertices (`builtin::dense::subdivide_to`), and one clip, its walk looped
//! for SECONDS and keyed at 30 Hz on every channel (LINEAR), as a .glb.
//!
//! Usage: `cargo run --release --example long_clip -- OUT.glb [SECONDS] [MIN_VERTICES]`
//! (defaults 34 and 34000). `scripts/optimize-side-by-side.sh` runs `optimize` on it.
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::process::ExitCode;

use skinview::anim::{Animation, Channel, Interpolation, Sampler};
use skinview::builtin::dense::subdivide_to;
use skinview::builtin::humanoid_rig;
use skinview::io::gltf_export::{ExportOptions, write_glb};

/// Keys a second.
const RATE_HZ: f64 = 30.0;
/// Most seconds (a clip of 30 Hz keys on 13 channels stays under a few MB).
const MAX_SECONDS: f64 = 3600.0;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!(
            "usage: cargo run --release --example long_clip -- OUT.glb [SECONDS] [MIN_VERTICES]"
        );
        return ExitCode::from(2);
    };
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(34.0);
    let min_vertices: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(34_000);
    if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
        eprintln!("SECONDS must be in (0, {MAX_SECONDS}]");
        return ExitCode::from(2);
    }
    match write(out, seconds, min_vertices) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("long_clip: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write(out: &str, seconds: f64, min_vertices: usize) -> skinview::error::Result<()> {
    let mut rig = humanoid_rig()?;
    if let Some(mesh) = rig.mesh.as_ref() {
        rig.mesh = Some(subdivide_to(mesh, min_vertices)?.0);
    }
    let mut scene = rig.to_scene()?.scene;
    let walk = scene.find_animation("walk")?;
    let clip = looped(&scene.animations[walk], seconds);
    scene.animations = vec![clip];
    write_glb(&scene, &ExportOptions::default(), std::path::Path::new(out))?;
    let vertices: usize = scene
        .draws
        .iter()
        .map(|d| scene.primitive(d).positions.len())
        .sum();
    println!(
        "{out}: {vertices} vertices, {} joints, clip \"walk\" {seconds} s keyed at {RATE_HZ} Hz",
        scene.skins.first().map_or(0, |s| s.joints.len())
    );
    Ok(())
}

/// `anim` played in a loop for `seconds`, every channel keyed at [`RATE_HZ`] (LINEAR).
fn looped(anim: &Animation, seconds: f64) -> Animation {
    let duration = f64::from(anim.duration_s()).max(1e-3);
    let keys = (seconds * RATE_HZ).round() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| (k as f64 / RATE_HZ) as f32).collect();
    let channels = anim
        .channels
        .iter()
        .map(|c| {
            let s = &c.sampler;
            let mut values = vec![0f32; keys * s.components];
            for (k, v) in values.chunks_exact_mut(s.components).enumerate() {
                let t = (k as f64 / RATE_HZ) % duration;
                s.sample_binary_search(t as f32, v);
            }
            Channel {
                node: c.node,
                path: c.path,
                sampler: Sampler {
                    interpolation: Interpolation::Linear,
                    times_s: times.clone(),
                    values,
                    components: s.components,
                    is_rotation: s.is_rotation,
                },
            }
        })
        .collect();
    Animation {
        name: Some("walk".into()),
        channels,
    }
}
