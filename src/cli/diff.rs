//! `skinview diff A B`: two files of one character (converted, compressed, re-exported or
//! re-weighted) skinned over every clip they share; how far the matched vertices are apart,
//! where and when, and which joints' weights or bind matrices differ. Exit 1 past the
//! tolerance, for unmatched vertices, or for a clip of A that B lacks.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use skinview::character::CharacterSetup;
use skinview::diff::{Diff, DiffOptions, Differ, Times};
use skinview::io::{ImportOptions, Model};

use super::args::parse_size;
use super::choice::choice;
use super::{CliError, CliResult};

/// Clips drawn in `--plot` (the worst ones; the rest are in the JSON).
const MAX_PLOTTED_CLIPS: usize = 6;

#[derive(Args)]
pub struct DiffArgs {
    /// The reference file (.gltf/.glb, .fbx, .rig.json, builtin:NAME).
    a: PathBuf,
    /// The file compared with it.
    b: PathBuf,
    /// When both are skinned: rate (every 1/fps s and each clip's end), a-keys or b-keys
    /// (that file's key times: where a file resampled from the other keeps its values), or
    /// keys (both files' key times).
    #[arg(long, value_parser = choice::<Times>(), default_value = "rate")]
    times: Times,
    /// Frames a second for --times rate.
    #[arg(long, default_value_t = DiffOptions::default().fps, allow_negative_numbers = true)]
    fps: f32,
    /// Largest distance allowed between matched vertices, relative to A's bounds diagonal.
    #[arg(long, default_value_t = DiffOptions::default().tolerance_rel, allow_negative_numbers = true)]
    tolerance: f64,
    /// Vertices further apart than this in the rest pose (relative to the diagonal) are not
    /// the same vertex.
    #[arg(long, default_value_t = DiffOptions::default().match_radius_rel, allow_negative_numbers = true)]
    match_radius: f64,
    /// Follow buffer and image URIs outside the models' folders.
    #[arg(long)]
    allow_external_uris: bool,
    /// Write the whole comparison as JSON (schema skinview-diff/1, README).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Render A at the worst frame, coloured by the distance to B, with a legend (PNG).
    #[arg(long)]
    render: Option<PathBuf>,
    /// Plot the largest and mean distance over time, one panel per clip (PNG).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Size of --render, WIDTHxHEIGHT.
    #[arg(long, default_value = "960x600", allow_hyphen_values = true, value_parser = parse_size)]
    size: (u32, u32),
}

fn load(path: &Path, options: ImportOptions, outputs: &[Option<&Path>]) -> CliResult<Model> {
    let model = super::args::load_path(path, options, outputs)?;
    model.scene.require_draws()?;
    Ok(model)
}

pub fn run(a: DiffArgs) -> CliResult {
    let outputs = [a.json.as_deref(), a.render.as_deref(), a.plot.as_deref()];
    let import = ImportOptions {
        allow_external_uris: a.allow_external_uris,
    };
    let options = DiffOptions {
        times: a.times,
        fps: a.fps,
        tolerance_rel: a.tolerance,
        match_radius_rel: a.match_radius,
        ..DiffOptions::default()
    };
    // The numbers first: a wrong one is said before two models are read.
    options
        .validate()
        .map_err(|e| CliError::Usage(format!("--fps, --tolerance, --match-radius: {e}")))?;
    let model_a = load(&a.a, import, &outputs)?;
    let model_b = load(&a.b, import, &outputs)?;
    let mut differ = Differ::new(&model_a.scene, &model_b.scene, options)?;
    let style = indicatif::ProgressStyle::with_template(
        "skinning both {wide_bar} {pos}/{len} frames, {per_sec}, {eta} left",
    )
    .map_err(|e| CliError::Usage(format!("progress bar: {e}")))?;
    let bar = indicatif::ProgressBar::new(0).with_style(style);
    let mut report = differ.run(|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    report.a = a.a.display().to_string();
    report.b = a.b.display().to_string();
    println!("{report}");
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
        println!("-> {}", path.display());
    }
    if let Some(path) = &a.plot {
        let image = super::chart::render(&chart(&report))
            .map_err(|e| CliError::Usage(format!("--plot: cannot draw the chart: {e}")))?;
        skinview::io::png::write(&image, path)?;
        println!("-> {}", path.display());
    }
    if let Some(path) = &a.render {
        render_worst(&model_a, &mut differ, &report, a.size, path)?;
        println!("-> {}", path.display());
    }
    Ok(match report.passed {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// A at the worst frame, coloured by the distance to B, with the legend and a caption.
fn render_worst(
    model: &Model,
    differ: &mut Differ,
    report: &Diff,
    size: (u32, u32),
    path: &Path,
) -> CliResult<()> {
    let (clip, time_s) = report
        .clips
        .iter()
        .filter_map(|c| c.worst.map(|w| (c, w)))
        .max_by(|x, y| x.1.distance.total_cmp(&y.1.distance))
        .map_or((None, 0.0), |(c, w)| (c.a, w.time_s));
    let pair = differ.clips().iter().copied().find(|p| Some(p.a) == clip);
    differ.frame(pair, time_s)?;
    let distances = differ.vertex_distances();
    let mut character = CharacterSetup::clip(clip).build(&model.scene)?;
    character.update(time_s, 0.0)?;
    let ctx = super::gpu()?;
    let diagonal = differ.pairing().diagonal;
    let legend = skinview::view::legend::distance_legend("|A − B| / diagonal");
    let (width, height) = size;
    let picture_h = super::annotate::picture_height(Some(&legend), width, height);
    let image = skinview::view::render_distances(
        &ctx,
        &character,
        (&distances, diagonal),
        &skinview::view::ViewOptions::default(),
        None,
        (width, picture_h),
    )?;
    let caption = format!(
        "{} at {time_s:.3} s: largest {:.2e} of the diagonal",
        report
            .worst
            .as_ref()
            .map_or("rest pose", |(name, _)| name.as_str()),
        report.worst.as_ref().map_or(0.0, |(_, w)| w.distance_rel)
    );
    let image = super::annotate::annotate_with(image, &legend, height, &[caption])
        .map_err(|e| CliError::Usage(format!("--render: cannot label the picture: {e}")))?;
    skinview::io::png::write(&image, path)?;
    Ok(())
}

/// The largest and mean distance over time, in units of the tolerance, a panel per clip
/// (the worst [`MAX_PLOTTED_CLIPS`]).
fn chart(report: &Diff) -> super::chart::Chart {
    use super::chart::{Chart, Panel, Series};
    let mut clips: Vec<_> = report.clips.iter().collect();
    clips.sort_by(|x, y| y.max_rel.total_cmp(&x.max_rel));
    clips.truncate(MAX_PLOTTED_CLIPS);
    // Distances in units of the tolerance (of 1e-4 of the diagonal when the tolerance is 0).
    let tol = match report.tolerance_rel {
        t if t > 0.0 => t,
        _ => 1e-4,
    };
    let end = clips
        .iter()
        .map(|c| c.duration_s as f64)
        .fold(0.0, f64::max)
        .max(1e-3);
    let panels = clips
        .iter()
        .map(|c| {
            let top = (c.max_rel / tol).max(1.0) * 1.15;
            let line = |f: fn(&skinview::diff::FramePoint) -> f64| {
                c.series
                    .iter()
                    .map(|p| (p.time_s as f64, f(p) / tol))
                    .collect()
            };
            Panel {
                title: format!("{} (largest {:.2e})", c.name, c.max_rel),
                y_range: (0.0, top),
                series: vec![
                    Series {
                        legend: 0,
                        points: line(|p| p.max_rel),
                    },
                    Series {
                        legend: 1,
                        points: line(|p| p.mean_rel),
                    },
                    Series {
                        legend: 2,
                        points: vec![
                            (0.0, report.tolerance_rel / tol),
                            (end, report.tolerance_rel / tol),
                        ],
                    },
                ],
            }
        })
        .collect();
    Chart {
        title: format!("|A - B| / {tol:.0e} of the diagonal"),
        x_label: "time (s)".into(),
        x_range: (0.0, end),
        x_ticks: ticks(end),
        legend: vec![
            ("largest".into(), [214, 39, 40]),
            ("mean".into(), [31, 119, 180]),
            ("tolerance".into(), [120, 120, 120]),
        ],
        columns: clips.len().clamp(1, 3),
        panels,
    }
}

/// Round ticks from 0 to `end`: a step of 1, 2 or 5 times a power of ten, four to eight of
/// them.
fn ticks(end: f64) -> Vec<f64> {
    let rough = end / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| end / s <= 8.0)
        .unwrap_or(10.0 * power);
    (0..)
        .map(|k| k as f64 * step)
        .take_while(|t| *t <= end * (1.0 + 1e-9))
        .collect()
}
