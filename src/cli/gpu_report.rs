//! `skinview gpu-report ROWS --out DIR`: merge the rows `scripts/gpu-report.sh` wrote (crowds
//! from `bench --gpu --json`, comparisons from `compare --json`, its step log) into
//! `report.json` and `report.md` (see `skinview::view::gpu_report`); `--strict` exits 1 when
//! the report has an empty row, a failed comparison or a failed step.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::info::count;
use skinview::view::gpu_report::{CopyBandwidth, GpuReport};

use super::{CliError, CliResult};

#[derive(Args)]
pub struct GpuReportArgs {
    /// The folder of row files (crowd-*.json, compare-*.json, steps.tsv).
    rows: PathBuf,
    /// Where report.json and report.md go (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// The adapter's device-to-device copy bandwidth in TB/s (bytes read + written), the
    /// floor's input; default: the figure measured on the GPU's model (3.0 for an H100, 4.3
    /// for an H200).
    #[arg(long, value_parser = parse_bandwidth)]
    copy_bandwidth: Option<f64>,
    /// Exit 1 when the report is not a finished run: no rows, an empty row, a failed
    /// comparison or step (each listed).
    #[arg(long)]
    strict: bool,
}

fn parse_bandwidth(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1000.0 => Ok(v),
        _ => Err(format!(
            "{text:?}: a bandwidth in TB/s, above 0 and below 1000"
        )),
    }
}

pub fn run(a: GpuReportArgs) -> CliResult {
    if a.out == a.rows {
        return Err(CliError::Usage(
            "--out is the rows folder: give the report its own folder".into(),
        ));
    }
    let bandwidth = a.copy_bandwidth.map(|tb| CopyBandwidth {
        bytes_per_s: tb * 1e12,
        source: "--copy-bandwidth".into(),
    });
    let report = GpuReport::merge(&a.rows, bandwidth)?;
    std::fs::create_dir_all(&a.out).map_err(|source| skinview::Error::Io {
        path: a.out.clone(),
        source,
    })?;
    super::write_json(&a.out.join("report.json"), &report)?;
    skinview::io::output::write_file(&a.out.join("report.md"), report.markdown().as_bytes())?;
    let problems = report.problems();
    println!(
        "{}, {}, {} -> {}",
        count(report.crowd.len(), "crowd row", "crowd rows"),
        count(report.compare.len(), "comparison", "comparisons"),
        count(report.steps.len(), "step", "steps"),
        a.out.join("report.{json,md}").display()
    );
    for p in &problems {
        println!("problem: {p}");
    }
    Ok(if a.strict && !problems.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
