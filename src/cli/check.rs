//! `skinview check PATH...`: every model under the paths through the checks of
//! `skinview::check`, in parallel, one line per model, with JSON and JUnit reports. Exit 0
//! when no model has an error, 1 when one has, 2 for bad arguments or config.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use skinview::check::{CheckConfig, CheckReport, ModelResult, PathConfigs, Severity};
use skinview::info::count as words;

use super::check_workers::{Draw, Job};
use super::{CliError, CliResult};

/// The config file looked for in the first folder given when `--config` is not.
const DEFAULT_CONFIG: &str = "skinview.toml";

/// Largest config file read (bytes): thresholds fit in a page.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Largest report read by `--since` and `--merge` (bytes): 1 GiB, a million models' results.
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// Most `--jobs`: each is a worker process with its own GPU device, so more than a large
/// machine's cores only adds start-up and memory.
const MAX_JOBS: i64 = 256;

/// A JSON report read back.
fn read_report(path: &Path) -> CliResult<CheckReport> {
    let bytes = skinview::io::files::read_regular(path, MAX_REPORT_BYTES, None)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        CliError::Usage(format!(
            "{}: not a skinview check report (skinview-check/1): {e}",
            path.display()
        ))
    })
}

#[derive(Args)]
pub struct CheckArgs {
    /// Model files or folders (searched for .glb, .gltf, .rig.json and .fbx files).
    #[arg(required_unless_present_any = ["merge", "worker"])]
    paths: Vec<PathBuf>,
    /// Take each model's result from this earlier JSON report when none of its files, the
    /// config nor skinview's version changed; check the rest.
    #[arg(long)]
    since: Option<PathBuf>,
    /// Join these JSON reports (the shards of one run) into one (--json, --junit) instead of
    /// checking.
    #[arg(long, num_args = 1.., conflicts_with_all = ["paths", "since", "shard"])]
    merge: Vec<PathBuf>,
    /// Write the report as JSON (schema skinview-check/1).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the report as JUnit XML (a test case per model and check).
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Write a static page to this folder: index.html, a row per model with a thumbnail of
    /// its worst frame, its findings linking to their frames' renders (img/), sortable.
    #[arg(long)]
    html: Option<PathBuf>,
    /// Thresholds (TOML); default: skinview.toml in the first folder given, if there.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Models checked at once, 1..=256 (default: every core).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=MAX_JOBS))]
    jobs: Option<u32>,
    /// Check the I-th of N deterministic shards of the files (I from 1): I/N.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<[usize; 2]>,
    /// CPU checks only (no GPU readback).
    #[arg(long)]
    no_gpu: bool,
    /// Internal: be a worker process of a check run (models and their configs in on
    /// standard input, results out on standard output, one JSON line each).
    #[arg(long, hide = true)]
    worker: bool,
}

fn parse_shard(text: &str) -> Result<[usize; 2], String> {
    let bad = || format!("{text:?}: give I/N with 1 <= I <= N, e.g. 2/8");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok([i, n])
}

/// The config: `--config`, else `skinview.toml` in the first folder given, else defaults;
/// with the folder its overrides' globs are relative to (the config file's, else the first
/// folder given, else the working folder) and the overrides compiled.
fn config(a: &CheckArgs) -> CliResult<(CheckConfig, PathConfigs, PathBuf)> {
    let first_dir = a.paths.iter().find(|p| p.is_dir()).cloned();
    let found = a.config.clone().or_else(|| {
        first_dir
            .as_ref()
            .map(|d| d.join(DEFAULT_CONFIG))
            .filter(|p| p.is_file())
    });
    let (mut config, name) = match &found {
        Some(p) => {
            let bytes = skinview::io::files::read_regular(p, MAX_CONFIG_BYTES, None)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| CliError::Usage(format!("{}: not UTF-8 text", p.display())))?;
            let name = p.display().to_string();
            let config =
                CheckConfig::parse(&text, &name).map_err(|e| CliError::Usage(e.to_string()))?;
            (config, name)
        }
        None => (CheckConfig::default(), "defaults".to_string()),
    };
    config.no_gpu |= a.no_gpu;
    let base = found
        .as_ref()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .or(first_dir)
        .unwrap_or_default();
    let compiled = PathConfigs::new(&config, &name).map_err(|e| CliError::Usage(e.to_string()))?;
    Ok((config, compiled, base))
}

/// `file`'s path relative to `base`, `/`-separated (the whole path when not under it): what
/// the overrides' globs match.
fn relative(file: &Path, base: &Path) -> String {
    let rel = file.strip_prefix(base).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

pub fn run(a: CheckArgs) -> CliResult {
    if a.worker {
        return super::check_workers::serve();
    }
    // Before any work: the --html folder made, then every report file checked writable.
    if let Some(dir) = &a.html {
        skinview::check::html::prepare(dir)?;
    }
    let written = outputs(&a);
    skinview::io::output::check_outputs(&written.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
    if !a.merge.is_empty() {
        return merge(&a);
    }
    let (config, per_path, base) = config(&a)?;
    let previous = a.since.as_deref().map(read_report).transpose()?;
    let mut files = skinview::check::find_models(&a.paths)?;
    // A run that checks nothing is a mistake (a wrong folder, a typo in CI), not a pass. A
    // shard may still come out empty (more shards than models): every shard's report merges.
    if files.is_empty() {
        let given: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(CliError::Usage(format!(
            "no model file (.glb, .gltf, .rig.json or .fbx) under {} (hidden folders are \
             skipped): nothing to check",
            given.join(", ")
        )));
    }
    if let Some([i, n]) = a.shard {
        files = skinview::check::shard(files, i, n);
    }
    for out in outputs(&a) {
        skinview::io::output::refuse_inputs(&out, &files)?;
    }
    // Results an earlier report still holds are taken here; the rest go to the workers (all
    // of them with --html, to be drawn).
    let reused: Vec<Option<ModelResult>> = files
        .iter()
        .map(|f| {
            previous
                .as_ref()
                .and_then(|p| skinview::check::reuse(p, &config, f))
        })
        .collect();
    let jobs: Vec<Job> = files
        .iter()
        .zip(reused)
        .enumerate()
        .map(|(i, (f, result))| {
            let mut config = per_path.for_path(&relative(f, &base));
            config.no_gpu |= a.no_gpu;
            Job {
                path: f.clone(),
                config,
                result,
                draw: a.html.clone().map(|dir| Draw { dir, row: i }),
            }
        })
        .collect();
    let (models, pictures) = run_jobs(&a, jobs, "checking")?;
    for m in &models {
        println!("{}", summary_line(m));
        // A crashed or timed-out model's worker's last lines on standard error.
        for line in m.findings.iter().flat_map(|f| &f.stderr) {
            println!("      | {line}");
        }
    }
    let reused = models.iter().filter(|m| m.reused).count();
    if a.since.is_some() {
        println!(
            "{} taken from the earlier report, {} checked",
            words(reused, "result", "results"),
            models.len() - reused
        );
    }
    let report = CheckReport::new(config, a.shard, models);
    println!(
        "{}: {} with errors, {} with warnings, {} clean",
        words(report.models.len(), "model", "models"),
        report.failed,
        report.warned,
        report.models.len() - report.failed - report.warned
    );
    write_reports(&a, &report, &pictures)
}

/// `--merge`: the reports joined, written, and the exit code of the whole.
fn merge(a: &CheckArgs) -> CliResult {
    let mut reports = Vec::with_capacity(a.merge.len());
    for p in &a.merge {
        reports.push((p.display().to_string(), read_report(p)?));
    }
    for out in outputs(a) {
        skinview::io::output::refuse_inputs(&out, &a.merge)?;
    }
    let report = skinview::check::merge(reports)?;
    println!(
        "{} merged: {}, {} with errors, {} with warnings",
        words(a.merge.len(), "report", "reports"),
        words(report.models.len(), "model", "models"),
        report.failed,
        report.warned
    );
    // The page: each model drawn by a worker from its merged result.
    let mut pictures = Vec::new();
    if let Some(dir) = &a.html {
        let jobs = report
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| Job {
                path: PathBuf::from(&m.path),
                config: CheckConfig {
                    no_gpu: report.config.no_gpu || a.no_gpu,
                    overrides: Vec::new(),
                    ..report.config.clone()
                },
                result: Some(m.clone()),
                draw: Some(Draw {
                    dir: dir.clone(),
                    row: i,
                }),
            })
            .collect();
        pictures = run_jobs(a, jobs, "drawing")?.1;
    }
    write_reports(a, &report, &pictures)
}

/// The files the reports asked for would write (the page's index for `--html`).
fn outputs(a: &CheckArgs) -> Vec<PathBuf> {
    let page = a
        .html
        .as_ref()
        .map(|d| d.join(skinview::check::html::INDEX));
    [a.json.clone(), a.junit.clone(), page]
        .into_iter()
        .flatten()
        .collect()
}

/// The JSON, JUnit and HTML reports asked for (the page with `pictures`, one per model);
/// exit 1 when a model has an error.
fn write_reports(
    a: &CheckArgs,
    report: &CheckReport,
    pictures: &[skinview::check::html::Pictures],
) -> CliResult {
    if let Some(p) = &a.json {
        super::write_json(p, report)?;
    }
    if let Some(p) = &a.junit {
        skinview::io::output::write_file(p, skinview::check::junit::to_junit(report).as_bytes())?;
    }
    if let Some(dir) = &a.html {
        let stats = skinview::check::html::write_page(report, dir, pictures)?;
        println!(
            "{}: {}, {}{}",
            dir.join(skinview::check::html::INDEX).display(),
            words(stats.models, "model", "models"),
            words(stats.renders, "picture", "pictures"),
            if stats.not_drawn > 0 {
                format!(", {} not drawn", words(stats.not_drawn, "model", "models"))
            } else {
                String::new()
            }
        );
    }
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `jobs` through the worker processes with a progress bar (`what`: "checking"); the
/// results, and the pictures where drawn (empty when no job draws).
fn run_jobs(
    a: &CheckArgs,
    jobs: Vec<Job>,
    what: &str,
) -> CliResult<(Vec<ModelResult>, Vec<skinview::check::html::Pictures>)> {
    if jobs.iter().any(|j| !j.config.no_gpu) {
        // Say now, not once per worker, when there is no adapter.
        super::gpu()?;
    }
    let workers = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |j| j as usize,
    );
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{what} {{wide_bar}} {{pos}}/{{len}} models, {{per_sec}}, {{eta}} left"
    ))
    .map_err(|e| CliError::Usage(format!("progress bar: {e}")))?;
    let bar = indicatif::ProgressBar::new(jobs.len() as u64).with_style(style);
    // A job with its result and nothing to draw needs no worker.
    type Numbered = Vec<(usize, Job)>;
    let (done, todo): (Numbered, Numbered) = jobs
        .into_iter()
        .enumerate()
        .partition(|(_, j)| j.result.is_some() && j.draw.is_none());
    bar.inc(done.len() as u64);
    let (indices, todo): (Vec<usize>, Vec<Job>) = todo.into_iter().unzip();
    let answers = super::check_workers::run_all(&todo, workers, || bar.inc(1))?;
    bar.finish_and_clear();
    let total = done.len() + answers.len();
    let mut models: Vec<Option<ModelResult>> = (0..total).map(|_| None).collect();
    let mut pictures = vec![skinview::check::html::Pictures::default(); total];
    for (i, job) in done {
        models[i] = job.result;
    }
    for (i, (result, drawn)) in indices.into_iter().zip(answers) {
        models[i] = Some(result);
        if let Some(p) = drawn {
            pictures[i] = p;
        }
    }
    let models = models.into_iter().flatten().collect();
    Ok((models, pictures))
}

/// `FAIL  path: the worst finding` / `WARN  path: …` / `ok    path`.
fn summary_line(m: &ModelResult) -> String {
    let worst = m
        .findings
        .iter()
        .filter(|f| Some(f.severity) == m.worst && f.severity != Severity::Info)
        .map(|f| format!("{}: {}", f.check.id(), f.message))
        .next();
    let count = |s: Severity| m.findings.iter().filter(|f| f.severity == s).count();
    match (m.worst, worst) {
        (Some(Severity::Error), Some(w)) => format!(
            "FAIL  {}: {w} ({}, {})",
            m.path,
            words(count(Severity::Error), "error", "errors"),
            words(count(Severity::Warning), "warning", "warnings")
        ),
        (Some(Severity::Warning), Some(w)) => format!(
            "WARN  {}: {w} ({})",
            m.path,
            words(count(Severity::Warning), "warning", "warnings")
        ),
        _ => format!("ok    {}", m.path),
    }
}
