//! The real-GPU report (`scripts/gpu-report.sh`, `skinview gpu-report`): the rows one run of
//! the script wrote — crowds timed by the GPU benchmark ([`CrowdReport`]), comparisons
//! written by `compare` as JSON, the script's own step log — merged into `report.json`
//! ([`GpuReport`], schema [`SCHEMA`]) and `report.md` (the tables a reader wants: skinned
//! vertices per second against the memory-bandwidth floor, the skinned draw against the same
//! draw unskinned, vertex-shader against compute path, storage against uniform palette, both
//! dispatch orders, and the correctness of every path on every model).
//!
//! The floor is the memory-bandwidth bound: the adapter's device-to-device copy bandwidth
//! (bytes read + written per second, [`KNOWN_COPY_BANDWIDTH`]) over the bytes a skinned
//! vertex must move —
//! 72 for one character (read 48, write 24), 24 for a crowd sharing one mesh (the mesh stays
//! in cache; each copy is written). The vertex-shader path writes nothing back: its floor is
//! the same crowd drawn unskinned.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::crowd::CrowdReport;
use crate::error::{Error, Result};

/// `schema` of every `report.json` this version writes.
pub const SCHEMA: &str = "skinview-gpu-report/1";

/// Bytes a skinned vertex moves at least for one character (read position 12, normal 12, u16
/// joints 8, weights 16; write position and normal 24).
pub const FLOOR_BYTES_ONE: f64 = 72.0;

/// Bytes a skinned vertex moves at least in a crowd sharing one mesh (the writes alone: the
/// mesh is read from cache after the first character).
pub const FLOOR_BYTES_CROWD: f64 = 24.0;

/// Device-to-device copy bandwidth, bytes read + written per second, measured on the GPUs the
/// project's device machines lend (an NVIDIA H100 80GB HBM3 and an NVIDIA H200, November
/// 2026), by a word of the adapter's name.
pub const KNOWN_COPY_BANDWIDTH: [(&str, f64); 2] = [("H100", 3.0e12), ("H200", 4.3e12)];

/// Most row files one report merges (a full run writes about 80).
pub const MAX_ROWS: usize = 1000;

/// Largest row file read (a compare JSON of a big model is a few hundred KB).
pub const MAX_ROW_BYTES: u64 = 64 << 20;

/// The copy bandwidth the floor is computed from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyBandwidth {
    /// Bytes read + written per second.
    pub bytes_per_s: f64,
    /// Where the figure comes from (`measured on an H100`, or the caller's words).
    pub source: String,
}

/// One crowd row with the figures derived from it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrowdRow {
    /// The row file's name.
    pub file: String,
    /// What the GPU benchmark measured.
    pub run: CrowdReport,
    /// Figures derived from it.
    pub derived: CrowdDerived,
}

/// Figures derived from a crowd row (`None` where an input is missing).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrowdDerived {
    /// Skinned vertices per second of the vertex-shader path's draw (`None`: not timed).
    pub vertex_path_vertices_per_s: Option<f64>,
    /// Skinned vertices per second of the compute pass in the faster order (timestamps, else
    /// wall time of the pass alone).
    pub compute_vertices_per_s: Option<f64>,
    /// The faster dispatch order.
    pub faster_order: Option<String>,
    /// The floor for this row (vertices per second).
    pub floor_vertices_per_s: Option<f64>,
    /// `compute_vertices_per_s` over the floor (1 = at the floor; the target is ≥ 0.5).
    pub fraction_of_floor: Option<f64>,
    /// The vertex-shader path's draw over the same crowd drawn unskinned (target ≤ 1.3).
    pub skinned_over_unskinned: Option<f64>,
    /// The vertex-shader path's whole frame over the compute path's (wall times: < 1 means
    /// the vertex-shader path is faster).
    pub vertex_over_compute_wall: Option<f64>,
}

/// One comparison row (`compare`'s JSON), summarised.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareRow {
    /// The row file's name.
    pub file: String,
    /// Model name.
    pub model: String,
    /// `vertex` or `compute` (the compute-skinning pass, drawn and read back).
    pub skinning: String,
    /// Palette source, in words.
    pub palette: String,
    /// Capture paths compared.
    pub captures: Vec<String>,
    /// Largest GPU−CPU position error over every animation and draw, relative to the
    /// model's diagonal.
    pub worst_error_rel: f64,
    /// Its tolerance.
    pub tolerance_rel: f64,
    /// The verdict.
    pub passed: bool,
}

/// One step of the script: its name, how it ended, how long it took.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What ran.
    pub name: String,
    /// `ok`, `failed (exit N)`, `timed out (N s)`, `skipped (deadline)`.
    pub status: String,
    /// Wall time (s).
    pub seconds: f64,
}

impl Step {
    /// Whether the step ran and succeeded.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// `report.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuReport {
    /// [`SCHEMA`].
    pub schema: String,
    /// The adapter, backend and driver of the first crowd row (every row names its own).
    pub adapter: String,
    /// Backend.
    pub backend: String,
    /// Driver and version.
    pub driver: String,
    /// The floor's copy bandwidth (`None`: unknown for this adapter).
    pub copy_bandwidth: Option<CopyBandwidth>,
    /// Crowd rows, in file-name order.
    pub crowd: Vec<CrowdRow>,
    /// Comparison rows, in file-name order.
    pub compare: Vec<CompareRow>,
    /// The script's steps, in order.
    pub steps: Vec<Step>,
    /// Row files that could not be read, each with the reason (the rest are merged).
    pub rejected: Vec<String>,
}

fn bad(file: &Path, message: impl Into<String>) -> Error {
    Error::invalid(&file.display().to_string(), "", message)
}

/// The copy bandwidth known for `adapter` (by a word of its name).
pub fn known_copy_bandwidth(adapter: &str) -> Option<CopyBandwidth> {
    KNOWN_COPY_BANDWIDTH
        .iter()
        .find(|(word, _)| adapter.contains(word))
        .map(|&(word, bytes_per_s)| CopyBandwidth {
            bytes_per_s,
            source: format!("measured on an {word}"),
        })
}

impl CrowdDerived {
    /// The figures of `run` against `bandwidth`.
    pub fn of(run: &CrowdReport, bandwidth: Option<&CopyBandwidth>) -> CrowdDerived {
        let faster = run.faster_order();
        let compute_vertices_per_s = faster
            .and_then(|o| run.alone(o))
            .map(|a| run.alone_vertices_per_s(a))
            .filter(|&v| v > 0.0);
        let floor_vertices_per_s = bandwidth.map(|b| {
            let bytes = if run.instances > 1 {
                FLOOR_BYTES_CROWD
            } else {
                FLOOR_BYTES_ONE
            };
            b.bytes_per_s / bytes
        });
        let fraction_of_floor = match (compute_vertices_per_s, floor_vertices_per_s) {
            (Some(v), Some(f)) if f > 0.0 => Some(v / f),
            _ => None,
        };
        CrowdDerived {
            vertex_path_vertices_per_s: run.vertex_path_vertices_per_s(),
            compute_vertices_per_s,
            faster_order: faster.map(|o| o.name().to_string()),
            floor_vertices_per_s,
            fraction_of_floor,
            skinned_over_unskinned: run.skinned_over_plain_draw(),
            vertex_over_compute_wall: run
                .compute_wall_ms
                .filter(|&c| c > 0.0)
                .zip(run.vertex_wall_ms)
                .map(|(c, v)| v / c),
        }
    }
}

/// Summarise a `compare` JSON document.
fn compare_row(file: &Path, v: &serde_json::Value) -> Result<CompareRow> {
    let text = |key: &str| {
        v[key]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(file, format!("compare row without {key:?}")))
    };
    let number = |key: &str| {
        v[key]
            .as_f64()
            .ok_or_else(|| bad(file, format!("compare row without {key:?}")))
    };
    let captures: Vec<String> = v["captures"]
        .as_array()
        .ok_or_else(|| bad(file, "compare row without \"captures\""))?
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    let diagonal = number("diagonal")?.max(f64::MIN_POSITIVE);
    let mut worst = 0.0f64;
    for anim in v["anims"].as_array().into_iter().flatten() {
        for d in anim["draws"].as_array().into_iter().flatten() {
            worst = worst.max(d["max_error"].as_f64().unwrap_or(f64::INFINITY));
        }
    }
    Ok(CompareRow {
        file: file_name(file),
        model: text("model")?,
        skinning: if captures.iter().any(|c| c == "compute_skinning") {
            "compute".into()
        } else {
            "vertex".into()
        },
        palette: text("palette")?,
        captures,
        worst_error_rel: worst / diagonal,
        tolerance_rel: number("tolerance_rel")?,
        passed: v["passed"]
            .as_bool()
            .ok_or_else(|| bad(file, "compare row without \"passed\""))?,
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Read the script's step log: one `name<TAB>status<TAB>seconds` line a step.
fn read_steps(path: &Path) -> Result<Vec<Step>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            match (
                f.next(),
                f.next(),
                f.next().and_then(|s| s.trim().parse().ok()),
            ) {
                (Some(name), Some(status), Some(seconds)) => Ok(Step {
                    name: name.to_string(),
                    status: status.to_string(),
                    seconds,
                }),
                _ => Err(bad(path, format!("not name<TAB>status<TAB>seconds: {l:?}"))),
            }
        })
        .collect()
}

/// What one row file holds.
enum Row {
    Crowd(Box<CrowdReport>),
    Compare(CompareRow),
    /// Not a row (another JSON file in the folder).
    Other,
}

/// Read one row file (at most [`MAX_ROW_BYTES`]), by its name's prefix.
fn read_row(path: &Path) -> Result<Row> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_ROW_BYTES {
        return Err(bad(
            path,
            format!("{size} bytes; rows are at most {MAX_ROW_BYTES}"),
        ));
    }
    let name = file_name(path);
    if !name.starts_with("crowd-") && !name.starts_with("compare-") {
        return Ok(Row::Other);
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    if name.starts_with("crowd-") {
        let run: CrowdReport = serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))?;
        Ok(Row::Crowd(Box::new(run)))
    } else {
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))?;
        Ok(Row::Compare(compare_row(path, &v)?))
    }
}

impl GpuReport {
    /// Merge the rows under `dir`: `crowd-*.json` (the GPU benchmark), `compare-*.json` (compare)
    /// and `steps.tsv`. `bandwidth` overrides the copy bandwidth known for the adapter. A row
    /// that cannot be read is listed in [`GpuReport::rejected`] and the rest merged, so one bad
    /// row does not lose a run's report.
    pub fn merge(dir: &Path, bandwidth: Option<CopyBandwidth>) -> Result<GpuReport> {
        let io = |source| Error::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().is_some_and(|e| e == "json") {
                if files.len() == MAX_ROWS {
                    return Err(bad(dir, format!("more than {MAX_ROWS} row files")));
                }
                files.push(path);
            }
        }
        files.sort();
        let mut crowd_runs = Vec::new();
        let mut compare = Vec::new();
        let mut rejected = Vec::new();
        for path in &files {
            let name = file_name(path);
            match read_row(path) {
                Ok(Row::Crowd(run)) => crowd_runs.push((name, *run)),
                Ok(Row::Compare(row)) => compare.push(row),
                Ok(Row::Other) => {}
                Err(e) => rejected.push(e.to_string()),
            }
        }
        let first = crowd_runs.first().map(|(_, r)| r);
        let adapter = first.map(|r| r.adapter.clone()).unwrap_or_default();
        let backend = first.map(|r| r.backend.clone()).unwrap_or_default();
        let driver = first.map(|r| r.driver.clone()).unwrap_or_default();
        let copy_bandwidth = bandwidth.or_else(|| known_copy_bandwidth(&adapter));
        let crowd = crowd_runs
            .into_iter()
            .map(|(file, run)| CrowdRow {
                derived: CrowdDerived::of(&run, copy_bandwidth.as_ref()),
                file,
                run,
            })
            .collect();
        Ok(GpuReport {
            schema: SCHEMA.into(),
            backend,
            driver,
            adapter,
            copy_bandwidth,
            crowd,
            compare,
            steps: read_steps(&dir.join("steps.tsv"))?,
            rejected,
        })
    }

    /// What is wrong with the report as a finished run: a schema other than [`SCHEMA`], no
    /// crowd or comparison rows, an empty row (no vertices, no time), a storage row without
    /// its compute figures, a failed comparison or step, a row not merged. Empty when nothing
    /// is.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if self.schema != SCHEMA {
            p.push(format!("schema {:?}, expected {SCHEMA:?}", self.schema));
        }
        if self.crowd.is_empty() {
            p.push("no crowd rows".into());
        }
        if self.compare.is_empty() {
            p.push("no comparison rows".into());
        }
        for row in &self.crowd {
            let r = &row.run;
            let timed = r
                .vertex_wall_ms
                .is_some_and(|ms| ms.is_finite() && ms > 0.0);
            if r.vertices_per_frame == 0 || r.frames == 0 || !timed {
                p.push(format!(
                    "{}: empty row (no vertices, frames or time)",
                    row.file
                ));
            }
            let storage = r.palette == "storage";
            if storage && (r.compute_wall_ms.is_none() || r.skin_alone.len() != 2) {
                p.push(format!("{}: storage row without compute figures", row.file));
            }
            if r.adapter.is_empty() || r.backend.is_empty() {
                p.push(format!("{}: no adapter or backend", row.file));
            }
        }
        for row in &self.compare {
            if !row.passed {
                p.push(format!(
                    "{}: {} ({} path, {}) above tolerance: {:.2e} of the diagonal",
                    row.file, row.model, row.skinning, row.palette, row.worst_error_rel
                ));
            }
        }
        for s in &self.steps {
            if !s.ok() {
                p.push(format!("step {}: {}", s.name, s.status));
            }
        }
        p.extend(self.rejected.iter().map(|r| format!("row not merged: {r}")));
        p
    }

    /// `report.md`: the tables.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let mut line = |s: String| {
            md.push_str(&s);
            md.push('\n');
        };
        line("# skinview GPU report".into());
        line(String::new());
        line(format!(
            "Adapter: **{}**. Schema `{}`.",
            self.adapter, self.schema
        ));
        match &self.copy_bandwidth {
            Some(b) => line(format!(
                "Floor: copy bandwidth {:.2} TB/s ({}): {:.1} G vertices/s for one character \
                 ({FLOOR_BYTES_ONE} B a vertex), {:.1} G/s for a crowd ({FLOOR_BYTES_CROWD} B).",
                b.bytes_per_s / 1e12,
                b.source,
                b.bytes_per_s / FLOOR_BYTES_ONE / 1e9,
                b.bytes_per_s / FLOOR_BYTES_CROWD / 1e9
            )),
            None => line(
                "Floor: no copy bandwidth known for this adapter (`skinview gpu-report` takes one \
                 in TB/s)."
                    .into(),
            ),
        }
        line(String::new());
        line(
            "## Storage palette: compute skinning against the floor, the vertex-shader draw \
              against the same draw unskinned"
                .into(),
        );
        line(String::new());
        line(
            "| model | instances | vertices/frame | compute pass ms (outer / inner) | faster | \
              skinned G vert/s | of floor | vertex draw ms | unskinned draw ms | skinned / \
              unskinned | frame ms vertex / compute |"
                .into(),
        );
        line("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---|".into());
        for row in self.crowd.iter().filter(|r| r.run.palette == "storage") {
            let (r, d) = (&row.run, &row.derived);
            let alone: Vec<String> = r.skin_alone.iter().map(|a| ms(r.alone_ms(a))).collect();
            line(format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
                r.model,
                r.instances,
                r.vertices_per_frame,
                alone.join(" / "),
                d.faster_order.as_deref().unwrap_or("–"),
                giga(d.compute_vertices_per_s),
                percent(d.fraction_of_floor),
                opt_ms(r.vertex_draw_ms),
                opt_ms(r.compute_draw_ms),
                ratio(d.skinned_over_unskinned),
                opt_ms(r.vertex_wall_ms),
                opt_ms(r.compute_wall_ms),
            ));
        }
        line(String::new());
        line("## Storage against uniform palette (vertex-shader path, draw pass)".into());
        line(String::new());
        line(
            "| model | instances | palette | draws a character | draw ms | skinned G vert/s | \
              over storage |"
                .into(),
        );
        line("|---|---:|---|---:|---:|---:|---:|".into());
        for row in &self.crowd {
            let r = &row.run;
            let storage = self.crowd.iter().find(|s| {
                s.run.palette == "storage"
                    && s.run.model == r.model
                    && s.run.instances == r.instances
            });
            let over = storage.and_then(|s| {
                let (a, b) = (r.vertex_path_ms()?, s.run.vertex_path_ms()?);
                (b > 0.0).then(|| a / b)
            });
            line(format!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                r.model,
                r.instances,
                r.palette,
                r.draws,
                opt_ms(r.vertex_path_ms()),
                giga(row.derived.vertex_path_vertices_per_s),
                ratio(over),
            ));
        }
        line(String::new());
        line("## Correctness: CPU reference against every GPU path".into());
        line(String::new());
        line(
            "| model | skinning | palette | captures | worst error (of diagonal) | tolerance | \
              result |"
                .into(),
        );
        line("|---|---|---|---|---:|---:|---|".into());
        for c in &self.compare {
            line(format!(
                "| {} | {} | {} | {} | {:.2e} | {:.0e} | {} |",
                c.model,
                c.skinning,
                c.palette,
                c.captures.join(", "),
                c.worst_error_rel,
                c.tolerance_rel,
                if c.passed { "pass" } else { "**FAIL**" }
            ));
        }
        if !self.rejected.is_empty() {
            line(String::new());
            line("## Rows not merged".into());
            line(String::new());
            for r in &self.rejected {
                line(format!("- {r}"));
            }
        }
        line(String::new());
        line("## Steps".into());
        line(String::new());
        line("| step | status | s |".into());
        line("|---|---|---:|".into());
        for s in &self.steps {
            line(format!("| {} | {} | {:.1} |", s.name, s.status, s.seconds));
        }
        md
    }
}

fn ms(v: f64) -> String {
    format!("{v:.3}")
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or("–".into(), ms)
}

/// A rate in G (giga) units, with enough digits for software adapters' rates too.
fn giga(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| match v / 1e9 {
        g if g >= 0.1 => format!("{g:.2}"),
        g => format!("{g:.2e}"),
    })
}

fn percent(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.0} %", 100.0 * v))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2}×"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor's arithmetic: an H100's 3.0 TB/s is about 42 G vertices/s for one character
    /// (72 B a vertex) and 125 G/s for a crowd (24 B).
    #[test]
    fn floors_are_the_anchor_notes() {
        let h100 = known_copy_bandwidth("NVIDIA H100 80GB HBM3 (Vulkan)")
            .expect("the H100 is a known adapter");
        assert!((h100.bytes_per_s / FLOOR_BYTES_ONE / 1e9 - 41.7).abs() < 0.1);
        assert!((h100.bytes_per_s / FLOOR_BYTES_CROWD / 1e9 - 125.0).abs() < 0.1);
        assert!(known_copy_bandwidth("llvmpipe (LLVM 15.0.6, 256 bits)").is_none());
    }
}
