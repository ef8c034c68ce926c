//! `skinview info`: what a model holds (skins and their joints, draws, animations), and every
//! repair the importer made; `--json FILE` writes the same as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::info::{InfoReport, InfoText, LIST_LINES};

use super::CliResult;
use super::args::ModelArg;

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    model: ModelArg,
    /// Also write the report as JSON (schema "skinview-info/1": skins with their joints —
    /// index, node, label, parent —, draws, animations, repairs).
    #[arg(long)]
    json: Option<PathBuf>,
    /// List every joint and every draw. Without it each list stops after 200 lines and counts
    /// the rest (a scene of many skeletons); the JSON always holds every one.
    #[arg(long)]
    all: bool,
}

pub fn run(a: InfoArgs) -> CliResult {
    let model = a.model.load_writing(&[a.json.as_deref()])?;
    let report = InfoReport::of(&model.scene);
    let text = InfoText {
        report: &report,
        list_lines: (!a.all).then_some(LIST_LINES),
        cut_note: "(every line: `info --all`, or its --json)",
    };
    print!("{text}");
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}
