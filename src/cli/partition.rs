//! `skinview partition`: split every skinned primitive into submeshes of at most K bones and
//! print what the split did (submeshes against the lower bound, vertex duplication, dropped
//! influences and the position error they cost, vertex-cache ACMR, time).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use skinview::compare::run::frame_times;
use skinview::partition::{MAX_BONES, MIN_BONES, PartitionedScene};

use super::args::{ModelArg, parse_anim};
use super::{CliError, CliResult, write_json};

#[derive(Args)]
pub struct PartitionArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Bone budget per submesh (the uniform palette's size); several as 8,12,16.
    #[arg(long, value_delimiter = ',', required = true, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(MIN_BONES as u64..=MAX_BONES as u64))]
    max_bones: Vec<u64>,
    /// Animation whose frames measure the error of dropped influences (index, name or
    /// "none"; default 0 when the model has one).
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Frames of that animation to measure it on.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    frames: u64,
    /// Also write the stats as JSON: one object per (K, primitive).
    #[arg(long)]
    json: Option<PathBuf>,
}

/// One row of the table and of `--json`.
#[derive(Serialize)]
struct Row {
    mesh: String,
    primitive: usize,
    k: usize,
    submeshes: usize,
    lower_bound: usize,
    vertices_in: usize,
    vertices_out: usize,
    duplication_ratio: f64,
    triangles: usize,
    bones_used: usize,
    /// No split into fewer submeshes exists (lower bound reached or proved by search).
    minimal: bool,
    max_bones_used: usize,
    dropped_influences: usize,
    max_dropped_weight: f32,
    /// Largest skinned position error the dropped influences cause, model units.
    max_error: f32,
    /// The same, as a fraction of the skinned bounds' diagonal.
    max_error_rel: f32,
    acmr_in: f64,
    acmr_out: f64,
    time_ms: f64,
}

/// Most `--max-bones` values in one run (each partitions every primitive and skins it over
/// the frames).
const MAX_BUDGETS: usize = 64;

pub fn run(a: PartitionArgs) -> CliResult {
    if a.max_bones.len() > MAX_BUDGETS {
        return Err(CliError::Usage(format!(
            "{} --max-bones values; at most {MAX_BUDGETS}",
            a.max_bones.len()
        )));
    }
    let model = a.model.load_writing(&[a.json.as_deref()])?;
    let scene = &model.scene;
    let anim = parse_anim(&model, a.anim.as_deref())?;
    let times = frame_times(scene, anim, a.frames as usize);
    let mut rows = Vec::new();
    for &k in &a.max_bones {
        let k = k as usize;
        let part = PartitionedScene::new(scene, k)?;
        let err = part.skinning_error(scene, anim, &times)?;
        for pp in &part.primitives {
            let s = &pp.partition.stats;
            // The error of a primitive: the worst of the draws drawing it.
            let max_error = part
                .draws
                .iter()
                .filter(|d| {
                    d.submesh.is_some_and(|(pi, _)| {
                        part.primitives[pi].mesh == pp.mesh
                            && part.primitives[pi].primitive == pp.primitive
                    })
                })
                .map(|d| err.max_error[d.origin])
                .fold(0.0f32, f32::max);
            rows.push(Row {
                mesh: scene.meshes[pp.mesh]
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("mesh {}", pp.mesh)),
                primitive: pp.primitive,
                k,
                submeshes: s.submeshes,
                lower_bound: s.lower_bound,
                vertices_in: s.vertices_in,
                vertices_out: s.vertices_out,
                duplication_ratio: s.duplication_ratio,
                triangles: s.triangles,
                bones_used: s.bones_used,
                minimal: s.minimal,
                max_bones_used: s.max_bones_used,
                dropped_influences: s.dropped_influences,
                max_dropped_weight: s.max_dropped_weight,
                max_error,
                max_error_rel: if err.diagonal > 0.0 {
                    max_error / err.diagonal
                } else {
                    0.0
                },
                acmr_in: s.acmr_in,
                acmr_out: s.acmr_out,
                time_ms: s.time_ms,
            });
        }
    }
    print!("{}", table(&scene.name, &rows, times.len()));
    if let Some(path) = &a.json {
        write_json(path, &rows)?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn table(model: &str, rows: &[Row], frames: usize) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    if rows.is_empty() {
        let _ = writeln!(t, "{model}: no skinned primitive to partition");
        return t;
    }
    let _ = writeln!(
        t,
        "{model}: submeshes of at most K bones (error of dropped influences over {}, \
         relative to the skinned bounds' diagonal)",
        skinview::info::count(frames, "frame", "frames")
    );
    let _ = writeln!(
        t,
        "{:<20} {:>4} {:>4} {:>9} {:>5} {:>7} {:>6} {:>10} {:>7} {:>9} {:>5} {:>7} {:>9} {:>11} {:>8}",
        "mesh",
        "prim",
        "K",
        "submeshes",
        "bound",
        "minimal",
        "bones",
        "vertices",
        "×dup",
        "triangles",
        "max",
        "dropped",
        "error",
        "ACMR in→out",
        "ms"
    );
    for r in rows {
        let mut mesh = r.mesh.clone();
        if mesh.chars().count() > 20 {
            mesh = mesh.chars().take(19).collect::<String>() + "…";
        }
        let _ = writeln!(
            t,
            "{:<20} {:>4} {:>4} {:>9} {:>5} {:>7} {:>6} {:>10} {:>7.3} {:>9} {:>5} {:>7} {:>9.1e} {:>5.3}→{:<5.3} {:>8.2}",
            mesh,
            r.primitive,
            r.k,
            r.submeshes,
            r.lower_bound,
            if r.minimal { "yes" } else { "?" },
            r.bones_used,
            r.vertices_out,
            r.duplication_ratio,
            r.triangles,
            r.max_bones_used,
            r.dropped_influences,
            r.max_error_rel,
            r.acmr_in,
            r.acmr_out,
            r.time_ms
        );
    }
    t
}
