//! `skinview view`: the desktop viewer. With no MODEL, the built-in humanoid running the whole
//! animation stage (walk→run cross-fade, throw on the upper body, IK reach, bone links).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::builtin::Builtin;
use skinview::character::SplitSpec;
use skinview::gpu::{DEFAULT_UNIFORM_BONES, PaletteSource, Skinning};
use skinview::info::count;
use skinview::io::ModelSource;
use skinview::viewer::state::ViewMode;
use skinview::viewer::{AgainstReport, ViewerOptions, run};

use super::args::{MODEL_HELP, PaletteArgs, check_gpu_skinning, parse_anim, parse_size};
use super::render::ColorArg;
use super::{CliError, CliResult};

/// Most frames a scripted run may ask for (an hour at 60 Hz).
const MAX_FRAMES: u64 = 216_000;

#[derive(Args)]
pub struct ViewArgs {
    #[arg(help = MODEL_HELP, long_help = "Model: .gltf/.glb, .fbx, native .rig.json, or builtin:arm / \
        builtin:humanoid (default: the built-in humanoid running every animation stage)")]
    model: Option<PathBuf>,
    /// What the window shows first: gpu, cpu, split (CPU | GPU side by side) or diff
    /// (|GPU - CPU|).
    #[arg(long, alias = "mode", value_parser = super::choice::choice::<ViewMode>(), default_value = "gpu")]
    show: ViewMode,
    /// How the GPU skins: vertex (in the draw's vertex shader) or compute (once per frame in a
    /// compute pass, drawn by a plain vertex shader; storage palette only). The window's
    /// panel switches it too. Also spelled --skinning.
    #[arg(long = "skin", alias = "skinning", value_parser = super::choice::choice::<Skinning>(), default_value = "vertex")]
    who_skins: Skinning,
    /// Window size, WIDTHxHEIGHT (logical pixels).
    #[arg(long, default_value = "1280x800", allow_hyphen_values = true, value_parser = parse_size)]
    size: (u32, u32),
    /// Render this many frames, then exit (with --screenshot: save the last one).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=MAX_FRAMES))]
    frames: Option<u64>,
    /// Where the screenshot key (P) saves, and where --frames saves its last frame: PNG
    /// (.png, with the adapter, frame count and time as text) or JPEG (.jpg, .jpeg).
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Start with this bone selected (its weights with --color weights, highlighted, in the
    /// bone panel): a joint name, the label the viewer shows ("node 5"), or a node index.
    #[arg(long)]
    bone: Option<String>,
    /// Start in this colour mode, as `render --color`: material, weights (of --bone), bones
    /// (every bone its own colour) or submesh (a glTF model split into submeshes of at most
    /// --max-bones bones, 64 by default, each its own colour). The error colours come with a
    /// comparison: --show diff.
    #[arg(long, value_enum, default_value = "material")]
    color: ColorArg,
    #[command(flatten)]
    skeleton: super::args::SkeletonArgs,
    /// Draw the selected bone's path over the clip (the motion trail).
    #[arg(long)]
    motion_trail: bool,
    /// Draw each limited IK joint's ZYX box as arcs (red while an angle sits on a bound) and
    /// the effector chains with their weights (native rigs).
    #[arg(long)]
    limits: bool,
    /// Do not wait for vertical sync (frame-time measurements).
    #[arg(long)]
    no_vsync: bool,
    /// Play this clip: its index or name, or "none" for the rest pose (as `render --anim`).
    /// Default: the first clip. A native rig's stage plays its layers; its clock follows.
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Start at this clip time in seconds (the web page's `?time=`).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_start_time)]
    time: Option<f32>,
    /// Start paused (the web page's `?paused=1`).
    #[arg(long)]
    paused: bool,
    /// Compare with another file of the same character (a converted, compressed or
    /// re-exported copy): both side by side, coloured by the distance between them, as
    /// `skinview diff` measures it.
    #[arg(long, value_name = "FILE")]
    compare_with: Option<String>,
    /// Play another character's clips on the model, retargeted (a path or `builtin:` name):
    /// its clips added as "CLIP from FILE", the Motion panel showing the bone map, its
    /// problems and each clip's foot sliding and hand/foot reach, as `skinview retarget`
    /// writes them.
    #[arg(long, value_name = "FILE")]
    motion: Option<String>,
    /// The bone map for --motion (TOML, as `skinview retarget --save-map` writes); default:
    /// made from the names.
    #[arg(long, value_name = "FILE", requires = "motion")]
    map: Option<std::path::PathBuf>,
    /// Follow buffer and image URIs that lead outside the model's folder (absolute paths,
    /// `..`, symlinks, hidden files). Off by default: a model file cannot make skinview read
    /// other files.
    #[arg(long)]
    allow_external_uris: bool,
    /// Show a crowd: N copies of the model on a grid, each cycling through its clips at its
    /// own phase, culled to the view, with a panel of the frame's figures; `[` halves N and
    /// `]` doubles it (the web page's `?crowd=N`).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=skinview::gpu::MAX_INSTANCES as i64))]
    crowd: Option<u32>,
    /// Open the curves panel: the selected bone's (--bone) animation curves over the clip,
    /// its keys and their interpolation, and a dope sheet of every animated node (C in the
    /// window; the web page's `?curves=1`).
    #[arg(long)]
    curves: bool,
    // glTF models: --max-bones K splits each skinned mesh into submeshes of at most K bones,
    // drawn through a uniform palette of K matrices, or through the storage buffer with
    // --palette storage (the split shown by colour).
    #[command(flatten)]
    palette: PaletteArgs,
}

/// `--time`: a clip time in seconds, finite and not negative.
fn parse_start_time(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("`{text}`: expected a time in seconds, 0 or more")),
    }
}

/// `--crowd`: the flags it cannot take (the crowd view shows the GPU's picture of many
/// characters, not one character's comparison or skeleton).
fn check_crowd(a: &ViewArgs) -> Result<(), CliError> {
    if a.crowd.is_none() {
        return Ok(());
    }
    let refused = [
        (
            a.show != ViewMode::Gpu,
            "--show (the crowd is the GPU's picture)",
        ),
        (a.compare_with.is_some(), "--compare-with"),
        (a.motion.is_some(), "--motion"),
        (a.motion_trail, "--motion-trail"),
        (a.limits, "--limits"),
        (
            a.color == ColorArg::Weights,
            "--color weights (one bone's weights; --color bones works)",
        ),
        (a.bone.is_some(), "--bone"),
    ];
    let skeleton = a.skeleton.given();
    match refused.iter().chain(&skeleton).find(|(on, _)| *on) {
        Some((_, flag)) => Err(CliError::Usage(format!("--crowd does not take {flag}"))),
        None => Ok(()),
    }
}

/// The colour mode `--color` starts the viewer in (`submesh`: the material, the split's
/// colours coming from the split); the error colours are refused: they come with a view.
fn view_colour(c: ColorArg) -> Result<skinview::gpu::ColorMode, CliError> {
    use skinview::gpu::ColorMode;
    match c {
        ColorArg::Material | ColorArg::Submesh => Ok(ColorMode::Material),
        ColorArg::Weights => Ok(ColorMode::Weights),
        ColorArg::Bones => Ok(ColorMode::Bones),
        ColorArg::Error | ColorArg::Diff => Err(CliError::Usage(
            "--color error: the viewer colours |GPU - CPU| in its heatmap view: --show diff".into(),
        )),
    }
}

pub fn run_view(a: ViewArgs) -> CliResult {
    if let Some(out) = &a.screenshot {
        skinview::io::png::ImageFormat::of_path(out).map_err(|_| {
            CliError::Usage(format!(
                "--screenshot {}: the format is chosen by the extension: {}",
                out.display(),
                skinview::io::png::IMAGE_EXTENSIONS
            ))
        })?;
        if a.frames.is_none() {
            println!("note: --screenshot without --frames: press P in the window to save");
        }
    }
    let (w, h) = a.size;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(CliError::Usage(format!(
            "--size {w}x{h}: each side 1..=16384"
        )));
    }
    check_crowd(&a)?;
    a.skeleton.check()?;
    let source =
        ModelSource::from_arg_or(a.model.as_deref(), ModelSource::Builtin(Builtin::Humanoid))?;
    let model = source.load_with(skinview::io::ImportOptions {
        allow_external_uris: a.allow_external_uris,
    })?;
    if let Some(out) = &a.screenshot {
        model.refuse_as_output(out)?;
    }
    let anim = match &a.anim {
        Some(text) => Some(parse_anim(&model, Some(text))?),
        None => None,
    };
    let k = a.palette.max_bones.map(|k| k as usize);
    let uniform = match a.palette.palette {
        Some(PaletteSource::Uniform { .. }) => true,
        Some(PaletteSource::Storage) => false,
        None => k.is_some(),
    };
    let submeshes = a.color == ColorArg::Submesh;
    if (uniform || k.is_some() || submeshes) && model.rig.is_some() {
        return Err(CliError::Usage(
            "--palette uniform, --max-bones and --color submesh split a glTF model's stored \
             weights; native rigs (builtin:, .rig.json) rewrite theirs with bone links and are \
             drawn whole"
                .into(),
        ));
    }
    let palette = match uniform {
        true => PaletteSource::Uniform {
            bones: k.map_or(DEFAULT_UNIFORM_BONES, |k| k as u32),
        },
        false => PaletteSource::Storage,
    };
    check_gpu_skinning(a.who_skins, palette, "the CPU reference is --show cpu")?;
    let split = (uniform || k.is_some() || submeshes).then(|| SplitSpec {
        max_bones: k.unwrap_or(DEFAULT_UNIFORM_BONES as usize),
        uniform_palette: uniform,
        color_submeshes: !uniform || submeshes,
    });
    let options = ViewerOptions {
        split,
        size: a.size,
        demo: a.model.is_none(),
        mode: a.show,
        gpu_skinning: a.who_skins,
        frames: a.frames,
        screenshot: a.screenshot,
        no_vsync: a.no_vsync,
        bone: a.bone,
        color_mode: view_colour(a.color)?,
        skeleton: a.skeleton.skeleton,
        hide_unweighted_bones: a.skeleton.hide_unweighted_bones,
        rest_pose: a.skeleton.rest_pose,
        bind_pose: a.skeleton.bind_pose,
        motion_trail: a.motion_trail,
        limits: a.limits,
        time_s: a.time,
        paused: a.paused,
        compare_with: a.compare_with.clone(),
        crowd: a.crowd,
        curves: a.curves,
        anim,
        motion: a.motion.clone(),
        motion_map: a.map.clone(),
    };
    let report = run(model, options)?;
    print_report(&report);
    Ok(ExitCode::SUCCESS)
}

/// What the window did: frames, time per stage, the live distances, the crowd's figures and
/// the screenshots saved.
fn print_report(report: &skinview::viewer::ViewerReport) {
    let m = report.mean_ms;
    println!(
        "viewer: {}, t = {:.3} s, {}x{} px on {}",
        count(
            usize::try_from(report.frames).unwrap_or(usize::MAX),
            "frame",
            "frames"
        ),
        report.time_s,
        report.size_px.0,
        report.size_px.1,
        report.adapter
    );
    println!(
        "  mean ms/frame {:.2}: animation stage {:.2} (CPU skin {:.2}), viewport upload+submit {:.2}, \
         readback {:.2}, ui+present {:.2}",
        m.frame, m.animation, m.cpu_skin, m.gpu_submit, m.readback, m.ui_present
    );
    if let Some(l) = report.live {
        println!(
            "  live |GPU - CPU|: max {:.3e} ({:.2e} of diagonal), mean {:.3e}, worst vertex {} of \
             draw {}; GPU side read from {}",
            l.errors.max,
            l.errors.max / l.errors.diagonal,
            l.errors.mean,
            l.errors.worst.1,
            l.errors.worst.0,
            l.source.describe()
        );
    }
    match &report.against {
        Some(AgainstReport {
            label,
            unpaired: Some((ua, ub)),
            ..
        }) => println!(
            "  |A - B| against {label}: no vertex paired ({ua} of A's and {ub} of B's vertices \
             unmatched): nothing measured"
        ),
        Some(a) => {
            let d = a.diagonal.max(f64::MIN_POSITIVE);
            println!(
                "  |A - B| against {}: last frame {:.3e} ({:.2e} of diagonal), largest {:.3e} \
                 ({:.2e} of diagonal)",
                a.label,
                a.now,
                a.now / d,
                a.largest,
                a.largest / d
            );
        }
        None => {}
    }
    if let Some(c) = report.crowd {
        println!(
            "  crowd: {} characters, {} in view; stage {:.2} ms on {} ({} animated), cull {:.2} \
             ms, upload {:.1} KB in {} ({:.0} B a character) {:.2} ms",
            c.characters,
            c.visible,
            c.stage_ms,
            skinview::info::count(c.threads, "thread", "threads"),
            c.animated,
            c.cull_ms,
            c.upload_bytes as f64 / 1024.0,
            skinview::info::count(c.palette_writes as usize, "write", "writes"),
            c.bytes_per_character(),
            c.upload_ms
        );
        println!(
            "  crowd GPU: {}",
            skinview::viewer::crowd::gpu_ms_text(report.crowd_gpu_ms)
        );
    }
    for s in &report.screenshots {
        println!("  screenshot -> {}", s.display());
    }
}
