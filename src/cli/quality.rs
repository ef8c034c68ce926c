//! `skinview quality`: how the elbows of Woodland's arm and the built-in humanoid hold up,
//! bent and twisted 0–180°, under LBS, LBS with 1–3 bone links, DQS and stitching (table,
//! `quality.json`, `quality.png`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::quality::{QualityRow, quality};

use super::{CliError, CliResult};

#[derive(Args)]
pub struct QualityArgs {
    /// Folder for `quality.json` and the chart `quality.png` (made if missing). Without it, the
    /// table only.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Angle step in degrees of the 0–180° sweep, 1..=90.
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
    let rows = quality(&angles, |done, total| {
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
        let png = dir.join("quality.png");
        let image = super::chart::render(&chart(&rows)).map_err(|e| {
            CliError::Usage(format!(
                "--out {}: cannot draw the chart: {e}",
                dir.display()
            ))
        })?;
        skinview::io::png::write(&image, &png)?;
        println!("-> {}", png.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per (rig, motion, angle): radius and volume ratio and normal error per variant.
fn print_table(rows: &[QualityRow]) {
    println!(
        "over the elbow's blend zone: smallest ring radius / volume, each over its rest value; \
         mean normal error (degrees) against the skinned surface's own normals (not 0 at rest \
         where the mesh's normals are not its faces' average)"
    );
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
    print!("{:<12} {:<6} {:>5}", "rig", "motion", "angle");
    for n in &names {
        print!(" | {n:^20}");
    }
    println!();
    let mut i = 0;
    while i < rows.len() {
        let (rig, motion, angle) = (&rows[i].rig, &rows[i].motion, rows[i].angle_deg);
        print!("{rig:<12} {motion:<6} {angle:>5.0}");
        while i < rows.len()
            && rows[i].rig == *rig
            && rows[i].motion == *motion
            && rows[i].angle_deg == angle
        {
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

/// The variants' names and colours, in [`skinview::quality::VARIANTS`] order.
const LEGEND: [(&str, [u8; 3]); 6] = [
    ("lbs", [214, 39, 40]),
    ("lbs+1link", [255, 127, 14]),
    ("lbs+2links", [188, 189, 34]),
    ("lbs+3links", [44, 160, 44]),
    ("dqs", [31, 119, 180]),
    ("stitch", [148, 103, 189]),
];

/// Radius, volume and normal error against the angle: one column per (rig, motion), one row
/// per measure, one line per variant.
fn chart(rows: &[QualityRow]) -> super::chart::Chart {
    use super::chart::{Chart, Panel, Series};
    let legend_of = |r: &QualityRow| match (r.mode.as_str(), r.links) {
        ("lbs", 0) => 0,
        ("lbs", n) => n.min(3),
        ("dqs", _) => 4,
        _ => 5,
    };
    let mut columns: Vec<(String, String)> = Vec::new();
    for r in rows {
        let key = (r.rig.clone(), r.motion.clone());
        if !columns.contains(&key) {
            columns.push(key);
        }
    }
    type Measure = (&'static str, fn(&QualityRow) -> f64);
    let measures: [Measure; 3] = [
        ("smallest ring radius / rest", |r| r.radius_ratio),
        ("volume / rest", |r| r.volume_ratio),
        ("normal error (deg)", |r| r.normal_err_deg),
    ];
    let mut panels = Vec::new();
    for (name, value) in measures {
        let all: Vec<f64> = rows.iter().map(value).filter(|v| v.is_finite()).collect();
        let hi = all.iter().copied().fold(f64::MIN, f64::max);
        let lo = all.iter().copied().fold(f64::MAX, f64::min);
        let y_range = if name.starts_with("normal") {
            (0.0, (hi / 10.0).ceil().max(1.0) * 10.0)
        } else {
            // Steps of 0.2, with room above the rest value 1.
            (
                (lo.min(1.0) * 5.0).floor() / 5.0,
                (hi.max(1.0) * 5.0 - 1e-6).ceil() / 5.0 + 0.2,
            )
        };
        for (rig, motion) in &columns {
            let mut series: Vec<Series> = Vec::new();
            for r in rows.iter().filter(|r| &r.rig == rig && &r.motion == motion) {
                let legend = legend_of(r);
                match series.iter_mut().find(|s| s.legend == legend) {
                    Some(s) => s.points.push((r.angle_deg as f64, value(r))),
                    None => series.push(Series {
                        legend,
                        points: vec![(r.angle_deg as f64, value(r))],
                    }),
                }
            }
            panels.push(Panel {
                title: format!("{rig} elbow {motion}: {name}"),
                y_range,
                series,
            });
        }
    }
    Chart {
        title: "Deformation at the elbow, bent and twisted 0-180 degrees".into(),
        x_label: "joint angle (degrees)".into(),
        x_range: (0.0, 180.0),
        x_ticks: vec![0.0, 45.0, 90.0, 135.0, 180.0],
        legend: LEGEND.iter().map(|(n, c)| (n.to_string(), *c)).collect(),
        panels,
        columns: columns.len().max(1),
    }
}
