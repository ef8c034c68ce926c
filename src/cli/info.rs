//! `skinview info`: what a model holds, and every repair the importer made.

use std::process::ExitCode;

use clap::Args;
use skinview::info::ModelInfo;

use super::CliResult;
use super::args::ModelArg;

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    model: ModelArg,
}

pub fn run(a: InfoArgs) -> CliResult {
    let model = a.model.load()?;
    print!("{}", ModelInfo(&model.scene));
    Ok(ExitCode::SUCCESS)
}
