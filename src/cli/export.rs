//! `skinview export`: any model as binary glTF, or a native rig as `.rig.json` (how `assets/`
//! is made).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use skinview::io::gltf_export::{ExportOptions, JointType, WeightType, write_glb};

use super::args::ModelArg;
use super::{CliError, CliResult};

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Joint index type.
    #[arg(long, value_enum, default_value = "u16")]
    joints: JointsArg,
    /// Weight type.
    #[arg(long, value_enum, default_value = "f32")]
    weights: WeightsArg,
    /// Output: FILE.glb (binary glTF), or FILE.rig.json for a native rig.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum JointsArg {
    U8,
    U16,
}

#[derive(Clone, Copy, ValueEnum)]
enum WeightsArg {
    F32,
    Unorm8,
    Unorm16,
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
            "{}: {} bones, {} motions -> {}",
            rig.name,
            rig.bones.len(),
            rig.motions.len(),
            a.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let scene = &model.scene;
    let options = ExportOptions {
        joints: match a.joints {
            JointsArg::U8 => JointType::U8,
            JointsArg::U16 => JointType::U16,
        },
        weights: match a.weights {
            WeightsArg::F32 => WeightType::F32,
            WeightsArg::Unorm8 => WeightType::Unorm8,
            WeightsArg::Unorm16 => WeightType::Unorm16,
        },
        ..Default::default()
    };
    write_glb(scene, &options, &a.out)?;
    println!(
        "{}: {} nodes, {} skins, {} animations -> {}",
        scene.name,
        scene.nodes.len(),
        scene.skins.len(),
        scene.animations.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
