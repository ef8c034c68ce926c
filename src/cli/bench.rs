//! `skinview bench`: per-stage CPU times (Weber's table in "Run-Time Skin Deformation"), medians over many
//! frames; with no MODEL the built-in humanoid runs every stage. `--gpu`: a crowd of
//! `--instances` characters drawn by both GPU skinning paths, timed per pass.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::builtin::Builtin;
use skinview::character::{BenchReport, Character};
use skinview::io::ModelSource;
use skinview::view::crowd::{CrowdOptions, run_crowd};

use super::args::{MODEL_HELP, SkinArgs, StageArgs, parse_anim};
use super::{CliError, CliResult};

#[derive(Args)]
pub struct BenchArgs {
    #[arg(help = MODEL_HELP, long_help = "Model: .gltf/.glb, native .rig.json, or builtin:arm / \
        builtin:humanoid (default: the built-in humanoid with layers, IK and bone links)")]
    model: Option<PathBuf>,
    /// Animation index or name to play (default: 0; the humanoid demo without it).
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Frames to time (after warm-up frames); the medians are printed. Default: 600, with
    /// --gpu 60.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    frames: Option<u64>,
    /// Write {"model","joints","vertices","stages_us":{...},"frame_us"} here (with --gpu:
    /// the crowd's figures, per pass).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Time the GPU instead: a crowd of --instances characters (each its own time offset and
    /// palette; one palette buffer, instanced draws) drawn by the vertex-shader path and by
    /// the compute-skinning path (--skinning compute), each pass timed with timestamp queries
    /// where the adapter has them (wall time otherwise, said in the output): vertices/s, ms
    /// per frame, palette upload per frame. Default model: the built-in humanoid playing its
    /// walk.
    #[arg(long)]
    gpu: bool,
    /// --gpu: characters in the crowd, 1..=65536 (default 16).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=skinview::gpu::MAX_INSTANCES as i64))]
    instances: Option<u32>,
    /// --gpu: the crowd's target size, WIDTHxHEIGHT, 4x MSAA (default 1280x720).
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::parse_size)]
    size: Option<(u32, u32)>,
    /// --gpu: save the last frame (PNG or JPEG, by the extension).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Follow buffer and image URIs that lead outside the model's folder (absolute paths,
    /// `..`, symlinks, hidden files). Off by default: a model file cannot make skinview read
    /// other files.
    #[arg(long)]
    allow_external_uris: bool,
    /// Native rigs: insert the bone links the rig's bones ask for.
    #[arg(long)]
    links: bool,
    #[command(flatten)]
    stage: StageArgs,
    #[command(flatten)]
    skin: SkinArgs,
}

pub fn run(a: BenchArgs) -> CliResult {
    if !a.gpu && (a.out.is_some() || a.instances.is_some() || a.size.is_some()) {
        return Err(CliError::Usage(
            "--instances, --size and --out set up the GPU crowd: add --gpu".into(),
        ));
    }
    if let Some(out) = &a.out {
        skinview::io::png::ImageFormat::of_path(out).map_err(|_| {
            CliError::Usage(format!(
                "--out {}: the format is chosen by the extension: {}",
                out.display(),
                skinview::io::png::IMAGE_EXTENSIONS
            ))
        })?;
    }
    let source = match a.model.as_deref() {
        None => ModelSource::Builtin(Builtin::Humanoid),
        Some(p) => ModelSource::from_arg(Some(p))?,
    };
    let demo = !a.gpu
        && source == ModelSource::Builtin(Builtin::Humanoid)
        && !a.stage.is_set()
        && a.anim.is_none()
        && !a.links;
    let mut character = if demo {
        Character::humanoid_demo()?
    } else {
        let model = source.load_with(skinview::io::ImportOptions {
            allow_external_uris: a.allow_external_uris,
        })?;
        for out in [&a.json, &a.out].into_iter().flatten() {
            model.refuse_as_output(out)?;
        }
        let anim = parse_anim(&model, a.anim.as_deref())?;
        match &model.rig {
            Some(rig) => Character::from_rig(&rig.scene, &a.stage.spec(anim, a.links))?,
            None if a.stage.is_set() || a.links => {
                return Err(CliError::Usage(
                    "--links/--layer/--fade/--ik need a native rig (builtin:arm, \
                     builtin:humanoid or a .rig.json)"
                        .into(),
                ));
            }
            None => Character::from_scene(model.scene, anim, true)?,
        }
    };
    character.set_skin_options(a.skin.options());
    if a.gpu {
        return run_gpu(&a, &mut character);
    }
    let frames = a.frames.unwrap_or(600);
    let bar = indicatif::ProgressBar::new(frames).with_message("frames");
    let report = BenchReport::measure(&mut character, frames as usize, |i| {
        bar.set_position(i as u64)
    })?;
    bar.finish_and_clear();
    // Timings of a skin that overflowed f32 measure nothing a user wants: say so instead.
    let all: Vec<usize> = (0..character.scene.draws.len()).collect();
    skinview::skin::check_finite(&character.scene, &all, None, &character.outputs)?;
    println!("{report}");
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `bench --gpu`: the crowd on both GPU skinning paths.
fn run_gpu(a: &BenchArgs, character: &mut Character) -> CliResult {
    let ctx = super::gpu()?;
    let frames = a.frames.unwrap_or(60);
    let options = CrowdOptions {
        instances: a.instances.unwrap_or(16),
        frames: frames as usize,
        size: a.size.unwrap_or((1280, 720)),
        dt_s: 1.0 / 60.0,
    };
    let bar = indicatif::ProgressBar::new(frames).with_message("crowd frames");
    let (report, image) = run_crowd(&ctx, character, &options, |i| bar.set_position(i as u64))?;
    bar.finish_and_clear();
    print!("{report}");
    if let Some(out) = &a.out {
        skinview::io::png::write(&image, out)?;
        println!("last frame (compute path) -> {}", out.display());
    }
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}
