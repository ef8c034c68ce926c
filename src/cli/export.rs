//! `skinview export`: any model as binary glTF, or a native rig as `.rig.json` (how `assets/`
//! is made). A glTF input is rewritten from its own document (nothing it had is lost; what
//! changed and anything dropped are printed); a native rig or an FBX file is written from its
//! scene (an FBX conversion also prints the importer's repairs and warnings).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::info::count;
use skinview::io::ModelSource;
use skinview::io::gltf_export::{ExportOptions, JointEncoding, WeightEncoding, write_glb};
use skinview::io::gltf_repack::{RepackOptions, repack_file};

use super::args::ModelArg;
use super::choice::choice;
use super::{CliError, CliResult};

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Joint index type (glTF input: kept as written unless given; rigs: u16).
    #[arg(long, value_parser = choice::<JointEncoding>())]
    joints: Option<JointEncoding>,
    /// Weight type (glTF input: kept as written unless given; rigs: f32).
    #[arg(long, value_parser = choice::<WeightEncoding>())]
    weights: Option<WeightEncoding>,
    /// Output: FILE.glb (binary glTF), or FILE.rig.json for a native rig.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(a: ExportArgs) -> CliResult {
    let ext = a
        .out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("glb") | Some("json")) {
        return Err(CliError::Usage(format!(
            "--out {}: write FILE.glb (binary glTF) or FILE.rig.json (native rig)",
            a.out.display()
        )));
    }
    skinview::io::output::check_outputs(&[a.out.as_path()])?;
    let (joints, weights) = (a.joints, a.weights);
    let source = a.model.source()?;
    if let ModelSource::File(path) = &source
        && !source.is_native()
        && !source.is_fbx()
    {
        if ext.as_deref() == Some("json") {
            return Err(CliError::Usage(
                "--out *.rig.json needs a native rig (builtin:arm, builtin:humanoid or a \
                 .rig.json); write .glb for glTF models"
                    .into(),
            ));
        }
        let options = RepackOptions {
            joints,
            weights,
            rewrite_skin: false,
            rewrite_animations: false,
            quantize_mesh: None,
            compress: false,
        };
        let report = repack_file(path, a.model.import_options(), &options, &a.out)?;
        println!(
            "{} -> {} ({} bytes)",
            path.display(),
            a.out.display(),
            report.bytes
        );
        println!("  kept: {}", report.kept);
        if report.buffers_merged > 1 {
            println!(
                "  {} buffers merged into the binary chunk",
                report.buffers_merged
            );
        }
        for e in &report.embedded {
            println!("  embedded: {e}");
        }
        for r in &report.reencoded {
            println!("  re-encoded: {r}");
        }
        if !report.reencoded.is_empty() {
            println!("  largest weight change: {:.2e}", report.max_weight_change);
        }
        if !report.input_notes.is_empty() {
            println!(
                "  the input's own problems, written as they were (import repairs them on reading):"
            );
            for n in &report.input_notes {
                println!("    {n}");
            }
        }
        if report.dropped.is_empty() {
            println!("  dropped: nothing");
        } else {
            println!("  dropped (not kept by the glTF writer):");
            for d in &report.dropped {
                println!("    {d}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let model = a.model.load_writing(&[Some(&a.out)])?;
    if ext.as_deref() == Some("json") {
        let rig = model.rig.ok_or_else(|| {
            CliError::Usage(
                "--out *.rig.json needs a native rig (builtin:arm, builtin:humanoid or a \
                 .rig.json); write .glb for glTF models"
                    .into(),
            )
        })?;
        let rig = rig.weber;
        skinview::io::rig_json::write(&rig, &a.out)?;
        println!(
            "{}: {}, {} -> {}",
            rig.name,
            count(rig.bones.len(), "bone", "bones"),
            count(rig.motions.len(), "motion", "motions"),
            a.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let scene = &model.scene;
    for n in &scene.report.notes {
        let kind = if n.repaired { "repaired" } else { "warning" };
        println!("  {kind}: {}: {}", n.field, n.message);
    }
    let options = ExportOptions {
        joints: joints.unwrap_or(JointEncoding::U16),
        weights: weights.unwrap_or(WeightEncoding::F32),
        ..Default::default()
    };
    write_glb(scene, &options, &a.out)?;
    println!(
        "{}: {}, {}, {} -> {}",
        scene.name,
        skinview::info::count(scene.nodes.len(), "node", "nodes"),
        skinview::info::count(scene.skins.len(), "skin", "skins"),
        skinview::info::count(scene.animations.len(), "animation", "animations"),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
