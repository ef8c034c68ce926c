//! `skinview dump`: world-space skinned positions and normals at given times, as JSON in the
//! exchange format (docs/dump-format.md), from the CPU reference or a GPU capture (storage or uniform
//! palette).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::compare::run::Source;
use skinview::compare::{Sampling, sample_frames_each};
use skinview::gpu::{CapturePath, Skinning, choose_source};
use skinview::io::dump::DumpWriter;

use super::args::{
    MAX_INFLUENCES_ARG, ModelArg, PaletteArgs, SkinArgs, check_gpu_skinning, parse_anim,
};
use super::choice::choice;
use super::{CliError, CliResult, gpu};

#[derive(Args)]
pub struct DumpArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Animation index or name, or "none" for the rest pose (node weights still apply).
    /// Default: 0 when the model has an animation.
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Times in seconds (repeat the flag for several). Before 0 or past the clip's end, the
    /// clip's first or last pose (glTF holds values outside the key range), with a note.
    #[arg(long = "time", required = true, allow_hyphen_values = true)]
    times: Vec<f32>,
    /// Who skins what is dumped: cpu (the reference), vertex (the GPU's vertex-shader skinning,
    /// read back as --capture says) or compute (the compute-skinning pass's buffer, read back
    /// as drawn; storage palette only). Also spelled --path (gpu = vertex).
    #[arg(long = "skin", alias = "path", value_parser = choice::<Skinning>(), default_value = "cpu")]
    who_skins: Skinning,
    /// With --skin vertex: which GPU code to read back, shader (the capture shader: the draw's
    /// skin() in a compute pass) or draw (the draw's own vertex stage). Default: shader on the
    /// storage palette, draw on the uniform palette.
    #[arg(long, value_parser = choice::<CapturePath>())]
    capture: Option<CapturePath>,
    // With --skin vertex or compute: the palette path (--palette, --max-bones).
    #[command(flatten)]
    palette: PaletteArgs,
    #[command(flatten)]
    skin: SkinArgs,
    /// Reduce every vertex to its K largest weights (renormalised) first. 1..=64.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=MAX_INFLUENCES_ARG))]
    max_influences: Option<u64>,
    /// Output JSON file.
    #[arg(long)]
    out: PathBuf,
}

/// Most `--time` values (each is a frame of every deformed vertex in the JSON).
const MAX_TIMES: usize = 100_000;

/// Most position and normal components one dump holds (times × vertices × 6): the dump is
/// written as it goes (memory stays flat), so this bounds the file, about 12 bytes a value.
const MAX_DUMP_VALUES: u64 = 400_000_000;

pub fn run(a: DumpArgs) -> CliResult {
    if a.times.len() > MAX_TIMES {
        return Err(CliError::Usage(format!(
            "{} --time values; at most {MAX_TIMES}",
            a.times.len()
        )));
    }
    let model = a.model.load_writing(&[Some(&a.out)])?;
    model.scene.require_draws()?;
    let scene = &model.scene;
    let anim = parse_anim(&model, a.anim.as_deref())?;
    if let Some(i) = anim {
        super::args::note_time_outside(&model.scene, i, &a.times);
    }
    let requested = a.palette.requested()?;
    // `--capture compute-pass` reads compute skinning: it says who skins (as it did before
    // --skin).
    let who_skins = match (a.who_skins, a.capture) {
        (Skinning::VertexShader, Some(CapturePath::ComputePass)) => Skinning::ComputePass,
        (who, _) => who,
    };
    let (ctx, source) = match who_skins {
        Skinning::Cpu if requested.is_some() || a.capture.is_some() => {
            return Err(CliError::Usage(
                "--palette, --max-bones and --capture choose the GPU code: add --skin vertex (or \
                 --skin compute)"
                    .into(),
            ));
        }
        Skinning::Cpu => (None, Source::CPU),
        skinning => {
            let ctx = gpu()?;
            let palette = choose_source(&ctx, requested)?;
            check_gpu_skinning(skinning, palette, "")?;
            let source = Source {
                skinning,
                capture: a.capture,
                palette: Some(palette),
            };
            // The readback's rules, before the output file is made.
            source.readback(&ctx, palette)?;
            (Some(ctx), source)
        }
    };
    let draws = scene.deformed_draw_indices();
    // The dump is written as it goes (~12 bytes a value of text): its size is bounded before
    // any work, whatever the model's size times the number of times asked for.
    let per_time: u64 = draws
        .iter()
        .map(|&d| scene.primitive(&scene.draws[d]).vertex_count() as u64 * 6)
        .sum();
    let values = per_time.saturating_mul(a.times.len() as u64);
    if values > MAX_DUMP_VALUES {
        return Err(CliError::Usage(format!(
            "--time: {} times x {} values per time = {values} values; a dump holds at most \
             {MAX_DUMP_VALUES} (about 5 GB of JSON): ask for fewer times",
            a.times.len(),
            per_time
        )));
    }
    let k = a.max_influences.map(|k| k as usize);
    let sampling = Sampling {
        source,
        max_influences: k,
        skin: a.skin.options(),
    };
    let mut writer = DumpWriter::create(&a.out, scene, anim, &a.times)?;
    let bar = indicatif::ProgressBar::new(a.times.len() as u64).with_message("dumping");
    sample_frames_each(
        ctx.as_ref(),
        scene,
        anim,
        &a.times,
        &draws,
        &sampling,
        |i, frame| {
            bar.set_position(i as u64 + 1);
            writer.push(frame)
        },
    )?;
    bar.finish_and_clear();
    writer.finish()?;
    println!(
        "{}: {} x {} -> {}",
        scene.name,
        skinview::info::count(draws.len(), "mesh entry", "mesh entries"),
        skinview::info::count(a.times.len(), "time", "times"),
        a.out.display()
    );
    super::print_peak_memory();
    Ok(ExitCode::SUCCESS)
}
