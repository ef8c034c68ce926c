//! `skinview weights`: make or repair a model's skin weights and write it as a new .glb, with
//! a report per skinned primitive.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::io::ModelSource;
use skinview::io::gltf_export::{ExportOptions, JointEncoding, WeightEncoding, write_glb};
use skinview::io::gltf_repack::{RepackOptions, repack_file_edited};
use skinview::weights::edit::{
    NewWeights, PrimitiveReport, SmoothSettings, WeightEdit, edit_scene,
};

use super::args::ModelArg;
use super::{CliError, CliResult};

#[derive(Args)]
pub struct WeightsArgs {
    #[command(flatten)]
    model: ModelArg,
    /// New weights from each bone's pseudo-cylinder (Weber, "Run-Time Skin Deformation",
    /// Intel 2000: weight regeneration), then smoothed (unless --no-smooth).
    #[arg(long, conflicts_with = "distance")]
    regenerate: bool,
    /// New weights k / d^n to every bone segment (Dunia, "Implicit Animation Overview").
    #[arg(long)]
    distance: bool,
    /// Smooth the weights (the given ones, or the distance weights): limit the weight change
    /// between neighbouring vertices to --threshold per cross-section radius of distance.
    #[arg(long)]
    smooth: bool,
    /// With --regenerate: keep one bone per vertex (no smoothing).
    #[arg(long, requires = "regenerate", conflicts_with = "smooth")]
    no_smooth: bool,
    /// Move weights on patches detached from their bone's main patch to the bone of the
    /// nearest valid vertex along the surface (rogue removal), after everything else.
    #[arg(long)]
    rogue: bool,
    /// Smoothing: weight change allowed per cross-section radius of surface distance
    /// (smaller = wider blends). 0.01..=10.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true,
          value_parser = bounded(0.01, 10.0))]
    threshold: f32,
    /// Smoothing: most sweeps over the mesh's edges (it stops once every edge is within its
    /// limit). 1..=100000.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    iterations: u64,
    /// Influences kept per vertex (and never more than the model's JOINTS sets hold). 1..=8.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=8))]
    max_influences: u64,
    /// Distance weights: scale k (cancels in the normalisation). 1e-6..=1e6.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true,
          value_parser = bounded(1e-6, 1e6))]
    k: f32,
    /// Distance weights: fall-off exponent n (4 for human-sized figures). 0.1..=16.
    #[arg(long, default_value_t = 4.0, allow_negative_numbers = true,
          value_parser = bounded(0.1, 16.0))]
    n: f32,
    /// Distance weights: drop normalised weights below this. 0..=0.5.
    #[arg(long, default_value_t = 0.01, allow_negative_numbers = true,
          value_parser = bounded(0.0, 0.5))]
    min_weight: f32,
    /// Output: FILE.glb (never one of the model's own files).
    #[arg(long)]
    out: PathBuf,
}

/// A float flag parser accepting `lo..=hi` (finite).
fn bounded(lo: f32, hi: f32) -> impl Fn(&str) -> Result<f32, String> + Clone {
    move |s: &str| {
        let v: f32 = s
            .parse()
            .map_err(|e| format!("{s:?} is not a number ({e})"))?;
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{s} is not in {lo}..={hi}"))
        }
    }
}

pub fn run(a: WeightsArgs) -> CliResult {
    let ext = a
        .out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("glb") {
        return Err(CliError::Usage(format!(
            "--out {}: weights writes binary glTF: name it FILE.glb",
            a.out.display()
        )));
    }
    if !(a.regenerate || a.distance || a.smooth || a.rogue) {
        return Err(CliError::Usage(
            "say what to do: --regenerate, --distance, --smooth and/or --rogue".into(),
        ));
    }
    let edit = WeightEdit {
        new_weights: if a.regenerate {
            NewWeights::Regenerate
        } else if a.distance {
            NewWeights::Distance {
                k: a.k,
                n: a.n,
                threshold: a.min_weight,
            }
        } else {
            NewWeights::Keep
        },
        smooth: ((a.regenerate && !a.no_smooth) || a.smooth).then_some(SmoothSettings {
            threshold: a.threshold,
            max_iterations: a.iterations as usize,
        }),
        rogue: a.rogue,
        max_influences: a.max_influences as usize,
    };
    let bar = indicatif::ProgressBar::new(1).with_message("weight steps");
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let source = a.model.source()?;
    if let ModelSource::File(path) = &source
        && !source.is_native()
        && !source.is_fbx()
    {
        let file = path.display().to_string();
        let options = RepackOptions {
            rewrite_skin: true,
            ..Default::default()
        };
        let (report, reports) =
            repack_file_edited(path, a.model.import_options(), &options, &a.out, |scene| {
                edit_scene(scene, &edit, &file, progress)
            })?;
        bar.finish_and_clear();
        print_input_notes(report.input_notes.iter().cloned());
        print_reports(&reports);
        if !report.dropped.is_empty() {
            println!("  dropped (not kept by the glTF writer):");
            for d in &report.dropped {
                println!("    {d}");
            }
        }
        println!(
            "{} -> {} ({} bytes)",
            path.display(),
            a.out.display(),
            report.bytes
        );
    } else {
        let mut model = a.model.load_writing(&[Some(&a.out)])?;
        let name = model.scene.name.clone();
        let reports = edit_scene(&mut model.scene, &edit, &name, progress)?;
        bar.finish_and_clear();
        print_input_notes(
            model
                .scene
                .report
                .notes
                .iter()
                .map(|n| format!("{}: {}", n.field, n.message)),
        );
        print_reports(&reports);
        let options = ExportOptions {
            joints: JointEncoding::U16,
            weights: WeightEncoding::F32,
            ..Default::default()
        };
        write_glb(&model.scene, &options, &a.out)?;
        println!("{name} -> {}", a.out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// What the importer repaired before the tools ran (a vertex without weights bound to its
/// first joint, weights renormalised): the tools start from the repaired weights.
fn print_input_notes(notes: impl Iterator<Item = String>) {
    let notes: Vec<String> = notes.collect();
    if !notes.is_empty() {
        println!("the input's own problems, repaired on import before the weight tools ran:");
        for n in notes {
            println!("  {n}");
        }
    }
}

fn print_reports(reports: &[PrimitiveReport]) {
    for r in reports {
        println!(
            "{}: {} vertices, {} joints: {} vertices changed, largest weight change {:.3}",
            r.field, r.vertices, r.joints, r.vertices_changed, r.max_weight_change
        );
        if let Some(s) = &r.regenerate {
            let busiest = s.vertices_per_bone.iter().max().copied().unwrap_or(0);
            let unused = s.vertices_per_bone.iter().filter(|&&n| n == 0).count();
            println!(
                "  regenerated: one bone per vertex (up to {busiest} vertices a bone, {unused} \
                 bones with none, {} vertices far from every bone)",
                s.far_from_every_cylinder
            );
        }
        if let Some(s) = &r.distance {
            let hist: Vec<String> = s
                .influence_histogram
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| format!("{n} with {k}"))
                .collect();
            println!(
                "  distance weights: {} vertices; largest weight dropped {:.3}",
                hist.join(", "),
                s.max_dropped
            );
        }
        if let Some(s) = &r.smooth {
            println!(
                "  smoothed: {} edges, {} sweeps ({}), {} vertices changed, largest change \
                 {:.3}, worst edge over the limit by {:.1e}",
                s.edges,
                s.iterations,
                if s.converged {
                    "converged"
                } else {
                    "stopped at --iterations"
                },
                s.vertices_changed,
                s.max_weight_change,
                s.max_excess
            );
        }
        if let Some(s) = r
            .sections
            .as_ref()
            .filter(|s| s.zero_length_bones + s.bones_without_vertices > 0)
        {
            println!(
                "  note: {} zero-length bones scored as points, {} bones with no vertices of \
                 their own given their parent's tip section (or a quarter of their length)",
                s.zero_length_bones, s.bones_without_vertices
            );
        }
        if let Some(s) = &r.rogue {
            println!(
                "  rogue removal: {} parts, {} rogue weights on {} vertices moved ({:.3} weight \
                 in all), {} left (no valid vertex to take them)",
                s.components, s.rogue_weights, s.vertices_changed, s.weight_moved, s.unresolved
            );
        }
        print_bone_changes(&r.bone_changes);
    }
}

/// Bones listed by how far their weights moved (the largest first).
const BONES_LISTED: usize = 12;

/// Per bone, how far its weights moved from the input's (the ones that moved most), then a
/// warning per bone whose new weights look worse than the input's.
fn print_bone_changes(changes: &[skinview::weights::changes::BoneChange]) {
    let mut moved: Vec<_> = changes.iter().filter(|c| c.largest > 0.0).collect();
    moved.sort_by(|a, b| b.largest.total_cmp(&a.largest));
    if !moved.is_empty() {
        println!("  weight change per bone (largest, mean over the vertices it weighs):");
    }
    for c in moved.iter().take(BONES_LISTED) {
        println!("    {:<24} {:.3}  {:.3}", c.name, c.largest, c.mean);
    }
    if moved.len() > BONES_LISTED {
        println!(
            "    ... {} more bones, each at most {:.3}",
            moved.len() - BONES_LISTED,
            moved[BONES_LISTED].largest
        );
    }
    for w in changes.iter().flat_map(|c| c.warnings()) {
        println!("  warning: {w}");
    }
}
