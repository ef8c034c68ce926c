//! `skinview bench`: per-stage CPU times (Weber's table in "Run-Time Skin Deformation"), medians over many
//! frames; with no MODEL the built-in humanoid runs every stage. `--gpu`: a crowd of
//! `--crowd` characters drawn by both GPU skinning paths (one alone with `--skin vertex` or
//! `--skin compute`; the vertex-shader path alone on `--palette uniform`), timed per pass.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::builtin::Builtin;
use skinview::character::{BenchReport, Character, CharacterSetup, Motion, SplitSpec};
use skinview::gpu::{PaletteSource, Skinning};
use skinview::info::count;
use skinview::io::{Model, ModelSource};
use skinview::view::crowd::{CrowdOptions, run_crowd};

use super::args::{MODEL_HELP, PaletteArgs, SkinArgs, StageArgs, parse_anim};
use super::{CliError, CliResult};

#[derive(Args)]
pub struct BenchArgs {
    #[arg(help = MODEL_HELP, long_help = "Model: .gltf/.glb, .fbx, native .rig.json, or builtin:arm / \
        builtin:humanoid (default: the built-in humanoid with layers, IK and bone links)")]
    model: Option<PathBuf>,
    /// Animation index or name to play (default: 0; the humanoid demo without it).
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Frames to time (after warm-up frames); the medians are printed. Default: 600, with
    /// --gpu 60.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    frames: Option<u64>,
    /// Write {"model","joints","vertices","stages_us":{...},"frame_us","stage_us"} here (with --gpu:
    /// the crowd's figures, per pass).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Time the GPU instead: a crowd of --crowd characters (each its own time offset and
    /// palette; one palette buffer, instanced draws) drawn by the vertex-shader path and by
    /// the compute-skinning path (one alone: --skin), each pass timed with timestamp queries
    /// where the adapter has them (wall time otherwise, said in the output): vertices/s, ms
    /// per frame, palette upload per frame. Default model: the built-in humanoid playing its
    /// walk.
    #[arg(long)]
    gpu: bool,
    /// Who skins what is timed: cpu (the CPU animation stage and skinning, per stage: the
    /// default), vertex (the GPU crowd, the vertex-shader path alone) or compute (the GPU
    /// crowd, the compute-skinning path alone; storage palette only). vertex and compute imply
    /// --gpu; --gpu alone times both.
    #[arg(long = "skin", value_parser = super::choice::choice::<Skinning>())]
    who_skins: Option<Skinning>,
    /// A crowd of this many characters, 1..=65536: without --gpu its CPU stage (every
    /// character's clip, local→model and palette, in parallel over characters), timed on
    /// --threads threads and on one, as ozz-animation's crowd case is (runs of 60 frames at
    /// 60 Hz, the median run); with --gpu the GPU crowd (default 16). Also spelled
    /// --instances.
    #[arg(long = "crowd", alias = "instances", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=skinview::gpu::MAX_INSTANCES as i64))]
    instances: Option<u32>,
    /// --crowd without --gpu: threads for the stage, the calling thread included (default:
    /// every core, at least 64 characters a thread); it is timed on one thread too.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=skinview::crowd::MAX_THREADS as i64))]
    threads: Option<u32>,
    /// --crowd without --gpu: `ozz` plays ozz-animation's benchmark workload instead of a
    /// model (the 64-joint random tree and its 1 s clip of 30 keys a track, as
    /// ../shared/peers/ozzbench builds them; character c at phase frac(c × 0.618…), no
    /// shared evaluations), to stand beside `ozz_bench --only crowd`.
    #[arg(long, value_parser = ["ozz"])]
    workload: Option<String>,
    /// --gpu: the crowd's target size, WIDTHxHEIGHT, 4x MSAA (default 1280x720).
    #[arg(long, allow_hyphen_values = true, value_parser = super::args::parse_size)]
    size: Option<(u32, u32)>,
    /// --gpu: split the compute path's skinned copies over buffers of at most this many bytes
    /// (whole characters in each; default: the adapter's storage binding size).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    max_buffer_bytes: Option<u64>,
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
    /// --gpu: the palette the crowd's skinning reads (uniform: the vertex-shader path alone,
    /// one draw per character and submesh; the model is split into submeshes of at most K
    /// bones when it needs to be).
    #[command(flatten)]
    palette: PaletteArgs,
}

pub fn run(mut a: BenchArgs) -> CliResult {
    match a.who_skins {
        Some(Skinning::Cpu) if a.gpu => {
            return Err(CliError::Usage(
                "--skin cpu times the CPU stages; --gpu times the GPU crowd (--skin vertex or \
                 --skin compute for one path alone)"
                    .into(),
            ));
        }
        Some(Skinning::VertexShader | Skinning::ComputePass) => a.gpu = true,
        _ => {}
    }
    // Before any work (the GPU started, a crowd run): every output writable.
    let written: Vec<&std::path::Path> = [&a.json, &a.out]
        .into_iter()
        .flatten()
        .map(|p| p.as_path())
        .collect();
    skinview::io::output::check_outputs(&written)?;
    if a.instances.is_some() && !a.gpu {
        return run_cpu_crowd(&a);
    }
    if a.threads.is_some() || a.workload.is_some() {
        return Err(CliError::Usage(
            "--threads and --workload set up the CPU crowd: --crowd N without --gpu".into(),
        ));
    }
    let crowd_set = a.out.is_some()
        || a.size.is_some()
        || a.max_buffer_bytes.is_some()
        || a.palette.palette.is_some()
        || a.palette.max_bones.is_some();
    if !a.gpu && crowd_set {
        return Err(CliError::Usage(
            "--size, --out, --palette, --max-bones and --max-buffer-bytes set up the GPU \
             crowd: add --gpu"
                .into(),
        ));
    }
    let requested = a.palette.requested()?;
    // The GPU and its palette first: the uniform palette (asked for, or the adapter's only
    // one) decides whether the model is split into submeshes.
    let gpu = match a.gpu {
        true => {
            let ctx = super::gpu()?;
            let palette = skinview::gpu::choose_source(&ctx, requested)?;
            Some((ctx, palette))
        }
        false => None,
    };
    if let Some(out) = &a.out {
        skinview::io::png::ImageFormat::of_path(out).map_err(|_| {
            CliError::Usage(format!(
                "--out {}: the format is chosen by the extension: {}",
                out.display(),
                skinview::io::png::IMAGE_EXTENSIONS
            ))
        })?;
    }
    let source =
        ModelSource::from_arg_or(a.model.as_deref(), ModelSource::Builtin(Builtin::Humanoid))?;
    let demo = !a.gpu
        && source == ModelSource::Builtin(Builtin::Humanoid)
        && !a.stage.is_set()
        && a.anim.is_none()
        && !a.links;
    let model = source.load_with(skinview::io::ImportOptions {
        allow_external_uris: a.allow_external_uris,
    })?;
    model.scene.require_draws()?;
    for out in [&a.json, &a.out].into_iter().flatten() {
        model.refuse_as_output(out)?;
    }
    let uniform_k = match gpu.as_ref().map(|(_, palette)| *palette) {
        Some(PaletteSource::Uniform { bones }) => Some(bones as usize),
        _ => None,
    };
    let setup = setup(&a, &model, demo, uniform_k)?;
    let mut character = model.character(&setup)?;
    if let Some(s) = &character.split {
        println!(
            "{}: {} of at most {} bones ({} dropped to fit)",
            model.scene.name,
            count(s.submeshes, "submesh", "submeshes"),
            setup.split.map_or(0, |s| s.max_bones),
            count(s.dropped_influences, "influence", "influences")
        );
    }
    if let Some((ctx, palette)) = &gpu {
        return run_gpu(&a, ctx, *palette, &mut character);
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

/// The character benchmarked: the humanoid's demo, a native rig's animation stage, or a clip
/// (split into submeshes when the uniform palette of `uniform_k` bones cannot hold a skin).
fn setup(
    a: &BenchArgs,
    model: &Model,
    demo: bool,
    uniform_k: Option<usize>,
) -> CliResult<CharacterSetup> {
    let anim = parse_anim(model, a.anim.as_deref())?;
    let needs_split =
        uniform_k.is_some_and(|k| model.scene.skins.iter().any(|s| s.joints.len() > k));
    let motion = if demo {
        CharacterSetup::humanoid_demo().motion
    } else if model.rig.is_some() && !needs_split || a.stage.is_set() || a.links {
        // The animation stage (bone links only on a native rig: rule 8).
        Motion::Stage(a.stage.spec(anim, a.links))
    } else {
        anim.map_or(Motion::Rest, Motion::Clip)
    };
    let setup = CharacterSetup {
        motion,
        looping: true,
        // The uniform palette on a model with more joints than K: its submeshes, the clip
        // alone (the stage of a native rig works on the unsplit scene).
        split: needs_split.then(|| SplitSpec {
            max_bones: uniform_k.unwrap_or(skinview::gpu::DEFAULT_UNIFORM_BONES as usize),
            uniform_palette: true,
            color_submeshes: false,
        }),
        max_influences: None,
        skin: a.skin.options(),
    };
    setup.validate()?;
    Ok(setup)
}

/// `bench --gpu`: the crowd on both GPU skinning paths (the vertex-shader path alone on the
/// uniform palette).
fn run_gpu(
    a: &BenchArgs,
    ctx: &skinview::gpu::GpuContext,
    palette: PaletteSource,
    character: &mut Character,
) -> CliResult {
    let frames = a.frames.unwrap_or(60);
    let options = CrowdOptions {
        instances: a.instances.unwrap_or(16),
        frames: frames as usize,
        size: a.size.unwrap_or((1280, 720)),
        dt_s: 1.0 / 60.0,
        palette,
        max_buffer_bytes: a.max_buffer_bytes,
        only: a.who_skins,
    };
    let bar = indicatif::ProgressBar::new(frames).with_message("crowd frames");
    let (report, image) = run_crowd(ctx, character, &options, |i| bar.set_position(i as u64))?;
    bar.finish_and_clear();
    print!("{report}");
    if let Some(out) = &a.out {
        skinview::io::png::write(&image, out)?;
        let path = match report.compute_wall_ms {
            Some(_) => "compute path",
            None => "vertex-shader path",
        };
        println!("last frame ({path}) -> {}", out.display());
    }
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `bench --crowd N` without `--gpu`: the crowd's CPU stage on `--threads` threads (every core
/// by default) and on one, ozz-animation's crowd case beside it with `--workload ozz`.
fn run_cpu_crowd(a: &BenchArgs) -> CliResult {
    let n = a.instances.unwrap_or(1) as usize;
    if a.out.is_some() || a.size.is_some() || a.max_buffer_bytes.is_some() {
        return Err(CliError::Usage(
            "--out, --size and --max-buffer-bytes set up the GPU crowd: add --gpu".into(),
        ));
    }
    let (scene, setup) = match a.workload.as_deref() {
        Some(_) => {
            if a.model.is_some() || a.anim.is_some() {
                return Err(CliError::Usage(
                    "--workload ozz plays ozz-animation's rig and clip: give no MODEL or --anim"
                        .into(),
                ));
            }
            let scene = skinview::crowd::ozz::scene(true)?;
            (scene, skinview::crowd::ozz::crowd_setup(n, 0))
        }
        None => {
            let source = ModelSource::from_arg_or(
                a.model.as_deref(),
                ModelSource::Builtin(Builtin::Humanoid),
            )?;
            let model = source.load_with(skinview::io::ImportOptions {
                allow_external_uris: a.allow_external_uris,
            })?;
            if let Some(json) = &a.json {
                model.refuse_as_output(json)?;
            }
            let mut setup = skinview::crowd::CrowdSetup::cycling(&model.scene, n);
            if let Some(anim) = parse_anim(&model, a.anim.as_deref())? {
                let d = model.scene.animations[anim].duration_s();
                for (c, m) in setup.members.iter_mut().enumerate() {
                    *m = skinview::crowd::Member::clip(anim, skinview::crowd::golden_phase(c) * d);
                }
            }
            (model.scene, setup)
        }
    };
    // 0: the crowd's own choice (every core, at least 64 characters a thread).
    let asked = a.threads.map_or(0, |t| t as usize);
    let runs = a.frames.map_or(25, |f| {
        (f as usize).div_ceil(skinview::crowd::bench::FRAMES_PER_RUN)
    });
    let mut rows: Vec<skinview::crowd::bench::CrowdBenchRow> = Vec::new();
    for threads in [asked, 1] {
        // One thread already timed (asked for, or all the crowd would use): done.
        if rows.first().is_some_and(|r| r.threads == 1) {
            break;
        }
        let bar = indicatif::ProgressBar::new(runs as u64).with_message("crowd runs");
        let setup = skinview::crowd::CrowdSetup {
            threads,
            ..setup.clone()
        };
        let row = skinview::crowd::bench::measure(&scene, setup, runs, |i| {
            bar.set_position(i as u64 + 1)
        })?;
        bar.finish_and_clear();
        println!(
            "{}: {} characters on {}: {:.1} µs a frame ({:.1}–{:.1}), {:.1} ns a character; {} \
             evaluations; palettes {} bytes a frame in {}; culling's bounds {:.1} µs a frame",
            row.model,
            row.characters,
            skinview::info::count(row.threads, "thread", "threads"),
            row.stage_us_per_frame,
            row.min_us_per_frame,
            row.max_us_per_frame,
            row.ns_per_character,
            row.evaluations,
            row.upload_bytes_per_frame,
            skinview::info::count(row.palette_writes_per_frame as usize, "write", "writes"),
            row.bound_us_per_frame
        );
        rows.push(row);
    }
    if let (Some(t), Some(one)) = (rows.first(), rows.get(1)) {
        println!(
            "{} threads: {:.2}x one thread",
            t.threads,
            one.stage_us_per_frame / t.stage_us_per_frame
        );
    }
    if let Some(path) = &a.json {
        super::write_json(path, &rows)?;
    }
    Ok(ExitCode::SUCCESS)
}
