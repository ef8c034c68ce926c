//! The `skinview` command line: one file per command, the shared arguments in `args.rs`, and
//! the translation of library errors into messages that name the flags involved. This is the
//! only place in the crate that knows a flag's name.
//!
//! Exit codes: 0 success, 1 a comparison above tolerance, 2 bad input or no adapter.

mod annotate;
mod args;
mod bench;
mod chart;
mod check;
mod check_workers;
mod choice;
mod compare;
mod diff;
mod dump;
mod export;
mod gpu_report;
mod help;
mod info;
mod optimize;
mod partition;
mod quality;
mod render;
mod retarget;
#[cfg(feature = "viewer")]
mod view;
mod weights;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use skinview::Error;
use skinview::gpu::GpuContext;

/// What went wrong in a command.
#[derive(Debug)]
pub enum CliError {
    /// A flag or argument combination that makes no sense (message names the flags).
    Usage(String),
    /// A library error.
    Lib(Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Lib(e)
    }
}

/// The library's domain errors in the command line's terms: which flag asked for what.
fn explain(e: &Error) -> String {
    match e {
        Error::UnknownAnimation {
            model,
            requested,
            count,
            closest,
        } => format!(
            "{model}: no animation {requested:?} ({}); check --anim or the MOTION of \
             --layer{}",
            skinview::info::count(*count, "animation", "animations"),
            skinview::error::did_you_mean(closest)
        ),
        Error::UnknownBone {
            model,
            bone,
            closest,
        } => format!(
            "{model}: no bone {bone:?}{}; check --bone, the MASK of --layer and the END_BONE of \
             --ik: a bone is a joint's name, its label `node N` or its node index N (`skinview \
             info` lists every skin's joints)",
            skinview::error::did_you_mean(closest)
        ),
        Error::FadeLayers { from, to, layers } => format!(
            "--fade {from}:{to}: there are {layers} --layer entries (numbered from 0), and the two \
             must differ"
        ),
        Error::Job {
            job: "CharacterSetup",
            rule: 7,
            ..
        } => "--max-bones and --palette uniform draw the model split by its stored weights; the \
              animation stage (--demo, --links, --layer, --fade, --ik) rewrites them every frame \
              and needs the storage palette"
            .into(),
        Error::Job {
            job: "CharacterSetup",
            rule: 8,
            ..
        } => "--links needs a native rig's bones (builtin:arm, builtin:humanoid or a \
              .rig.json); --layer, --fade and --ik work on any model"
            .into(),
        Error::TooManyLayers { count, max } => {
            format!("{count} --layer entries; a character blends at most {max}")
        }
        Error::TimeRange { time_s, max_s } => {
            format!(
                "--time {time_s}: must be between 0 and {max_s} s when the animation stage runs"
            )
        }
        Error::RenderSize { width, height, max } => {
            format!(
                "--size {width}x{height}: each side must be between 1 and {max} on this adapter"
            )
        }
        Error::TooManyInfluences {
            model,
            draw,
            used,
            max,
        } => format!(
            "{model}: draw {draw}: vertices with {used} influences; the GPU path handles up to \
             {max} (use --max-influences {max})"
        ),
        other => other.to_string(),
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Lib(e) => f.write_str(&explain(e)),
        }
    }
}

type CliResult<T = ExitCode> = Result<T, CliError>;

#[derive(Parser)]
#[command(
    name = "skinview",
    version,
    about = "GPU skinning renderer and CPU/GPU skinning comparison for glTF rigs",
    long_about = "\
GPU skinning renderer and CPU vs GPU skinning comparison for glTF 2.0 rigs.

Every command but `quality`, `diff` and `gpu-report` takes an optional MODEL: a .gltf/.glb or \
.fbx file, a native rig (.rig.json), or a built-in rig (builtin:arm, builtin:humanoid, \
builtin:dense-humanoid). Without one it uses the built-in arm (after Woodland, \"Filling the \
Gaps: Advanced Animation Using Stitching and Skinning\"): two bones with a generated skin and \
two motions, \"bend\" (0 -> 120 degrees) and \"twist\" (0 -> 180 degrees about the forearm); \
`view`, `bench` and `render --crowd` use the built-in humanoid.

GPU work runs headless through wgpu; on machines without a GPU install Mesa's software \
Vulkan driver (Debian: mesa-vulkan-drivers). WGPU_BACKEND=vulkan|gl picks a backend."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Skins, joints, primitives, vertices, influences, morph targets, animations, repairs.
    Info(info::InfoArgs),
    /// Offscreen lit render to PNG or JPEG, the camera framing the skinned bounds.
    Render(render::RenderArgs),
    /// CPU vs GPU skinning over N frames of every animation; exit 1 above tolerance.
    Compare(compare::CompareArgs),
    /// World-space skinned positions/normals at given times as JSON (the exchange format).
    Dump(dump::DumpArgs),
    /// Write the model as binary glTF (.glb), or a native rig as .rig.json (by --out
    /// extension).
    Export(export::ExportArgs),
    /// Split every skinned primitive into submeshes of at most K bones (for a K-matrix
    /// uniform palette) and print the split's stats.
    Partition(partition::PartitionArgs),
    /// Deformation quality at a joint: the elbows of the built-in arm and humanoid
    /// bent and twisted 0-180 degrees under LBS, LBS with bone links, DQS and stitching
    /// (radius, volume, normal error; JSON and a chart).
    Quality(quality::QualityArgs),
    /// Make or repair skin weights (regenerate, distance, smooth, remove rogue patches) and
    /// write the model as a new .glb, with a report.
    Weights(weights::WeightsArgs),
    /// Per-stage CPU timing (sample, layer, IK, links, palette, skin, normals), medians over
    /// many frames. No MODEL = the built-in humanoid with layers, IK and bone links.
    Bench(bench::BenchArgs),
    /// Two files of one character (converted, compressed, re-exported): how far their
    /// skinned vertices are apart over every shared clip, where and when, and which joints'
    /// weights or bind matrices differ. Exit 1 past the tolerance.
    Diff(diff::DiffArgs),
    /// SOURCE's clips played on TARGET's skeleton (bone map from the names, or --map) and
    /// written with TARGET's own into a new .glb, with the map's problems and each clip's
    /// foot sliding and hand/foot reach.
    Retarget(retarget::RetargetArgs),
    /// A smaller .glb: every clip's keys reduced, rotations and morph weights stored as 16-bit
    /// codes and skin weights as bytes or shorts, while every skinned vertex stays within the
    /// tolerance of where the original puts it (checked on the written file, read back), with
    /// a report. Exit 1, nothing written, past the tolerance.
    Optimize(optimize::OptimizeArgs),
    /// Every character under some folders through the asset checks (import, weights, bind
    /// matrices, clip bounds, GPU readback): one line per model, JSON and JUnit reports, in
    /// parallel and in shards. Exit 1 when a model has an error.
    Check(check::CheckArgs),
    /// Merge the rows of scripts/gpu-report.sh (bench --gpu and compare JSON) into
    /// report.json and report.md: vertices/s against the bandwidth floor, skinned against
    /// unskinned draw, vertex against compute path, storage against uniform palette.
    GpuReport(gpu_report::GpuReportArgs),
    /// The desktop viewer: inspect a rig, drive it, watch CPU and GPU skinning side by side.
    /// No MODEL = the built-in humanoid running every animation stage.
    #[cfg(feature = "viewer")]
    View(view::ViewArgs),
}

/// Write a report as pretty JSON (through a temporary file renamed into place).
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> CliResult<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Error::Output {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(skinview::io::output::write_file(path, text.as_bytes())?)
}

/// Print the process's peak resident memory (Linux: `VmHWM` of `/proc/self/status`; nothing
/// where it cannot be read), so that long runs show what they cost.
fn print_peak_memory() {
    let peak_kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
    if let Some(kb) = peak_kb {
        println!("peak memory {:.1} MB", kb as f64 / 1024.0);
    }
}

/// The headless GPU context, as every GPU command makes it.
fn gpu() -> CliResult<GpuContext> {
    Ok(GpuContext::new_headless()?)
}

/// Parse the command line, run the command, print errors; the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return help::print(&e),
    };
    if let Some(w) = skinview::skin::simd::Kernel::env_warning() {
        eprintln!("skinview: warning: {}", printable(&w));
    }
    let result = match cli.command {
        Command::Info(a) => info::run(a),
        Command::Render(a) => render::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Retarget(a) => retarget::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Check(a) => check::run(a),
        Command::Export(a) => export::run(a),
        Command::Bench(a) => bench::run(a),
        Command::GpuReport(a) => gpu_report::run(a),
        Command::Partition(a) => partition::run(a),
        Command::Quality(a) => quality::run(a),
        Command::Weights(a) => weights::run(a),
        #[cfg(feature = "viewer")]
        Command::View(a) => view::run_view(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("skinview: error: {}", printable(&e.to_string()));
            ExitCode::from(2)
        }
    }
}

/// `text` with control characters (terminal escapes, NUL) shown as `\u{..}` escapes: messages
/// quote URIs and names from files, which must not drive the user's terminal.
fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().collect::<Vec<char>>()
            } else {
                vec![c]
            }
        })
        .collect()
}
