//! `skinview quality`: how the elbow of Woodland's arm holds up, bent and twisted 0–180°,
//! under LBS, LBS with 1–3 bone links, DQS and stitching (table and `quality.json`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::quality::{QualityRow, arm_quality};

use super::{CliError, CliResult};

#[derive(Args)]
pub struct QualityArgs {
    /// Folder for `quality.json` (made if missing). Without it, the table only.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Angle step in degrees (0 to 180 inclusive). 1..=90.
    #[arg(long, default_value_t = 15, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=90))]
    step: u64,
}

pub fn run(a: QualityArgs) -> CliResult {
    let angles: Vec<f32> = (0..=180)
        .step_by(a.step as usize)
        .map(|d| d as f32)
        .collect();
    let bar = indicatif::ProgressBar::new(1).with_message("poses");
    let rows = arm_quality(&angles, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    print_table(&rows);
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::Usage(format!(
                "--out {}: cannot make the folder: {e}",
                dir.display()
            ))
        })?;
        let path = dir.join("quality.json");
        super::write_json(&path, &rows)?;
        println!("-> {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per (motion, angle): radius and volume ratio and normal error per variant.
fn print_table(rows: &[QualityRow]) {
    let variant = |r: &QualityRow| match (r.mode.as_str(), r.links) {
        ("lbs", 0) => "lbs".to_string(),
        ("lbs", n) => format!("lbs+{n}link"),
        (m, _) => m.to_string(),
    };
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        let v = variant(r);
        if !names.contains(&v) {
            names.push(v);
        }
    }
    println!(
        "woodland_arm elbow: radius ratio / volume ratio / mean normal error (degrees) in the \
         blend zone, against the rest shape"
    );
    print!("{:<6} {:>5}", "motion", "angle");
    for n in &names {
        print!(" | {n:^20}");
    }
    println!();
    let mut i = 0;
    while i < rows.len() {
        let (motion, angle) = (&rows[i].motion, rows[i].angle_deg);
        print!("{motion:<6} {angle:>5.0}");
        while i < rows.len() && rows[i].motion == *motion && rows[i].angle_deg == angle {
            let r = &rows[i];
            print!(
                " | {:>5.3} {:>5.3} {:>6.1}",
                r.radius_ratio, r.volume_ratio, r.normal_err_deg
            );
            i += 1;
        }
        println!();
    }
}
