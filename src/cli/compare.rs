//! `skinview compare`: CPU reference vs GPU skinning (capture shader, the draw's own vertex
//! stage, or both; or the compute-skinning pass as drawn) over N frames of every animation,
//! on the storage or the uniform palette path (the mesh partitioned into submeshes of at most
//! K bones); exit 1 above tolerance.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use skinview::compare::{CompareOptions, compare};
use skinview::gpu::{CapturePath, PaletteSource, Skinning};

use super::args::{
    MAX_INFLUENCES_ARG, ModelArg, PaletteArgs, SkinArgs, check_gpu_skinning, parse_anim,
};
use super::choice::choice;
use super::{CliError, CliResult, gpu};

/// Most frames per animation (each frame is a GPU round trip per capture path).
const MAX_FRAMES: u64 = 100_000;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Only this animation (index, name, or "none"); default: every animation.
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Frames per animation, evenly spaced over its duration, both ends included.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=MAX_FRAMES))]
    frames: u64,
    /// Reduce every vertex to its K largest weights (renormalised) on both paths and report
    /// what that costs against the full CPU reference. 1..=64.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=MAX_INFLUENCES_ARG))]
    max_influences: Option<u64>,
    /// GPU code to read back: shader (the capture shader, the draw's skin() in a compute pass
    /// over storage buffers), draw (the draw's own vertex stage, one point per vertex), or
    /// both (and each against the other). Default: both on the storage palette, draw on the
    /// uniform palette.
    #[arg(long, value_enum)]
    capture: Option<CaptureChoice>,
    /// How the GPU skins: vertex (the draw's vertex shader, read back as --capture says) or
    /// compute (the compute-skinning pass, read back as drawn by the plain vertex shader;
    /// with --capture, those paths are compared too). Storage palette only for compute. Also
    /// spelled --skinning.
    #[arg(long = "skin", alias = "skinning", value_parser = choice::<Skinning>(), default_value = "vertex")]
    who_skins: Skinning,
    #[command(flatten)]
    palette: PaletteArgs,
    #[command(flatten)]
    skin: SkinArgs,
    /// Largest GPU position error allowed, relative to the model's bounding-box diagonal, in
    /// [0, 1]. The default holds f32 on both sides (differences of contraction and order).
    #[arg(long, default_value_t = skinview::compare::CPU_GPU_TOLERANCE_REL, allow_negative_numbers = true)]
    tolerance: f64,
    /// Also write the full comparison as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `--capture`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaptureChoice {
    /// The capture shader (the draw's skin() in a compute pass, for readback).
    #[value(alias = "compute")]
    Shader,
    /// The draw's vertex stage.
    Draw,
    /// Both.
    Both,
}

impl CaptureChoice {
    fn paths(self) -> Vec<CapturePath> {
        match self {
            CaptureChoice::Shader => vec![CapturePath::CaptureShader],
            CaptureChoice::Draw => vec![CapturePath::Draw],
            CaptureChoice::Both => vec![CapturePath::CaptureShader, CapturePath::Draw],
        }
    }
}

pub fn run(a: CompareArgs) -> CliResult {
    // The tolerance's rule (`CompareOptions::validate`), before the model and the GPU.
    CompareOptions {
        tolerance_rel: a.tolerance,
        ..Default::default()
    }
    .validate()
    .map_err(|e| CliError::Usage(format!("--tolerance: {e}")))?;
    let model = a.model.load_writing(&[a.json.as_deref()])?;
    model.scene.require_draws()?;
    let scene = &model.scene;
    let anims: Vec<Option<usize>> = match a.anim.as_deref() {
        Some(s) => vec![parse_anim(&model, Some(s))?],
        None if scene.animations.is_empty() => vec![None],
        None => (0..scene.animations.len()).map(Some).collect(),
    };
    let ctx = gpu()?;
    let palette = skinview::gpu::choose_source(&ctx, a.palette.requested()?)?;
    if palette != PaletteSource::Storage
        && matches!(a.capture, Some(CaptureChoice::Shader | CaptureChoice::Both))
    {
        return Err(CliError::Usage(format!(
            "the capture shader reads the storage palette; on the {} read back with \
             --capture draw",
            palette.describe()
        )));
    }
    check_gpu_skinning(
        a.who_skins,
        palette,
        "compare checks the GPU against the CPU",
    )?;
    let captures = match (a.who_skins, a.capture) {
        (Skinning::VertexShader | Skinning::Cpu, choice) => choice
            .unwrap_or(match palette {
                PaletteSource::Storage if ctx.compute_capture() => CaptureChoice::Both,
                _ => CaptureChoice::Draw,
            })
            .paths(),
        (Skinning::ComputePass, choice) => {
            let mut paths = choice.map(CaptureChoice::paths).unwrap_or_default();
            paths.push(CapturePath::ComputePass);
            paths
        }
    };
    let options = CompareOptions {
        frames: a.frames as usize,
        max_influences: a.max_influences.map(|k| k as usize),
        captures,
        palette: Some(palette),
        skin: a.skin.options(),
        batch: None,
        tolerance_rel: a.tolerance,
    };
    // Frames compared, with the rate and the time left (drawn only on a terminal).
    let style = indicatif::ProgressStyle::with_template(
        "comparing {wide_bar} {pos}/{len} frames, {per_sec}, {eta} left",
    )
    .map_err(|e| CliError::Usage(format!("progress bar: {e}")))?;
    let bar = indicatif::ProgressBar::new(0).with_style(style);
    let cmp = compare(&ctx, scene, &anims, &options, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    println!("{cmp}");
    super::print_peak_memory();
    if let Some(path) = &a.json {
        super::write_json(path, &cmp)?;
    }
    Ok(if cmp.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
