//! `skinview bench`: per-stage CPU times (Weber's table in "Run-Time Skin Deformation"), medians over many
//! frames; with no MODEL the built-in humanoid runs every stage.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::builtin::Builtin;
use skinview::character::{BenchReport, Character};
use skinview::io::ModelSource;

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
    /// Frames to time (after 10 warm-up frames); the medians are printed.
    #[arg(long, default_value_t = 600, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    frames: u64,
    /// Write {"model","joints","vertices","stages_us":{...},"frame_us"} here.
    #[arg(long)]
    json: Option<PathBuf>,
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
    let source = match a.model.as_deref() {
        None => ModelSource::Builtin(Builtin::Humanoid),
        Some(p) => ModelSource::from_arg(Some(p))?,
    };
    let demo = source == ModelSource::Builtin(Builtin::Humanoid)
        && !a.stage.is_set()
        && a.anim.is_none()
        && !a.links;
    let mut character = if demo {
        Character::humanoid_demo()?
    } else {
        let model = source.load_with(skinview::io::ImportOptions {
            allow_external_uris: a.allow_external_uris,
        })?;
        if let Some(out) = &a.json {
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
    let bar = indicatif::ProgressBar::new(a.frames).with_message("frames");
    let report = BenchReport::measure(&mut character, a.frames as usize, |i| {
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
