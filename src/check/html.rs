//! A check report as a static page — a row per model with a thumbnail (the model at its
//! worst frame), its verdict and its findings, each finding about a frame or a place linking
//! to a render of that frame with the place marked ([`super::marks`]: the boxes of a clip
//! leaving its bounds, the ring and joint of a shrinking blend zone, the vertex of a weight
//! problem); a click on a column header sorts the rows (a few lines of inline script; the page
//! loads nothing from the network).
//!
//! The renders are made from the report and the model files, not during the checks, so the
//! page of merged shard reports is made the same way as a single run's. Without a GPU (CPU
//! checks only) the page has no pictures and says so.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::junit::escape;
use super::{CheckReport, Finding, FrameRef, ModelResult, Severity};
use crate::character::{Character, CharacterSetup};
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::image::Rgba8;
use crate::io::ModelSource;
use crate::scene::Scene;
use crate::view::legend::Legend;
use crate::view::{ViewOptions, render_character, render_marked};

/// Thumbnail size in the table (pixels): small enough for thousands of rows.
pub const THUMB_SIZE: (u32, u32) = (192, 144);

/// Size of a finding's frame render (pixels).
pub const FRAME_SIZE: (u32, u32) = (640, 480);

/// Adds a legend under a picture (the command line's strip, in its font: the library has none).
pub type PaintLegend<'a> = &'a dyn Fn(Rgba8, &Legend) -> std::result::Result<Rgba8, String>;

/// The page's file in DIR.
pub const INDEX: &str = "index.html";

/// What writing the page did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HtmlStats {
    /// Models listed.
    pub models: usize,
    /// Pictures written (thumbnails and frames).
    pub renders: usize,
    /// Models that could not be drawn (not imported, or the render failed).
    pub not_drawn: usize,
}

/// The pictures of one model: its thumbnail and each finding's frame render (file names
/// relative to DIR), or why there are none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pictures {
    /// The thumbnail.
    pub thumbnail: Option<String>,
    /// Per finding (report order), its frame render.
    pub frames: Vec<Option<String>>,
    /// Why there is no thumbnail.
    pub missing: Option<String>,
}

impl Pictures {
    /// No pictures for `model`, and why.
    pub fn none(model: &ModelResult, why: impl Into<String>) -> Pictures {
        Pictures {
            thumbnail: None,
            frames: vec![None; model.findings.len()],
            missing: Some(why.into()),
        }
    }
}

/// Make DIR and DIR/img for the page and its pictures.
pub fn prepare(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("img")).map_err(|e| crate::error::Error::Output {
        path: dir.to_path_buf(),
        message: format!("cannot make the folder: {e}"),
    })
}

/// Write DIR/index.html for `report`, with `pictures` per model (report order; the files
/// already under DIR/img).
pub fn write_page(report: &CheckReport, dir: &Path, pictures: &[Pictures]) -> Result<HtmlStats> {
    let mut stats = HtmlStats {
        models: report.models.len(),
        ..HtmlStats::default()
    };
    let mut rows = String::new();
    for (i, model) in report.models.iter().enumerate() {
        let none;
        let p = match pictures.get(i) {
            Some(p) => p,
            None => {
                none = Pictures::none(model, "not drawn");
                &none
            }
        };
        stats.renders += usize::from(p.thumbnail.is_some()) + p.frames.iter().flatten().count();
        stats.not_drawn += usize::from(p.thumbnail.is_none());
        row(&mut rows, model, p);
    }
    let page = page(report, &rows);
    crate::io::output::write_file(&dir.join(INDEX), page.as_bytes())?;
    Ok(stats)
}

/// The frame a model's thumbnail shows: its worst finding's frame, else the middle of its
/// first clip (None: the rest pose).
fn worst_frame(model: &ModelResult) -> Option<FrameRef> {
    let located = model.findings.iter().filter(|f| f.frame.is_some());
    if let Some(f) = located.max_by_key(|f| f.severity) {
        return f.frame.clone();
    }
    model.clip_bounds.first().map(|_| FrameRef {
        clip: Some(model.clip_bounds[0].clip.clone()),
        clip_index: Some(0),
        time_s: f32::NAN,
    })
}

/// Render a model's thumbnail and finding pictures into DIR/img (names from `index`, the
/// model's row), the model read from `path` (its file: `model.path` is the name in words,
/// which loses bytes that are not UTF-8), or say why not. A finding with a frame or a mark
/// gets a picture: its frame (the rest pose without one) with its mark drawn and the mark's
/// legend painted by `paint`.
pub fn draw_model(
    ctx: &GpuContext,
    path: &Path,
    model: &ModelResult,
    (index, dir): (usize, &Path),
    paint: PaintLegend<'_>,
) -> Pictures {
    let mut pictures = Pictures {
        thumbnail: None,
        frames: vec![None; model.findings.len()],
        missing: None,
    };
    let scene = match ModelSource::from_arg(Some(path)).and_then(|s| s.load()) {
        Ok(m) => m.scene,
        Err(e) => {
            pictures.missing = Some(format!("not drawn: {e}"));
            return pictures;
        }
    };
    let save = |image: Rgba8, name: String| {
        crate::io::png::write(&image, &dir.join("img").join(&name))?;
        Ok::<String, Error>(format!("img/{name}"))
    };
    let thumbnail = posed(&scene, worst_frame(model).as_ref()).and_then(|c| {
        let image = render_character(ctx, &c, &ViewOptions::default(), THUMB_SIZE.0, THUMB_SIZE.1)?;
        save(image, format!("{index:06}-thumb.png"))
    });
    match thumbnail {
        Ok(name) => pictures.thumbnail = Some(name),
        Err(e) => {
            pictures.missing = Some(format!("not drawn: {e}"));
            return pictures;
        }
    }
    for (k, finding) in model.findings.iter().enumerate() {
        if finding.frame.is_none() && finding.mark.is_none() {
            continue;
        }
        let name = format!("{index:06}-{k}.png");
        let picture =
            finding_picture(ctx, &scene, finding, FRAME_SIZE).and_then(|(image, legend)| {
                let image = match legend {
                    Some(l) => paint(image, &l).map_err(|message| Error::Output {
                        path: dir.join("img").join(&name),
                        message: format!("cannot paint the legend: {message}"),
                    })?,
                    None => image,
                };
                save(image, name)
            });
        pictures.frames[k] = picture.ok();
    }
    pictures
}

/// `scene` posed at `frame`: its clip at its time (the middle of the clip when the time is
/// not a number); the rest pose without a frame or clip.
fn posed(scene: &Scene, frame: Option<&FrameRef>) -> Result<Character> {
    let anim = frame.and_then(|f| f.clip_index);
    let mut character = CharacterSetup::clip(anim).build(scene)?;
    let time_s = match frame.map(|f| f.time_s) {
        Some(t) if t.is_finite() => t,
        // The middle of the clip.
        _ => anim
            .and_then(|a| scene.animations.get(a))
            .map_or(0.0, |a| a.duration_s() / 2.0),
    };
    character.update(time_s, 0.0)?;
    Ok(character)
}

/// A finding's picture at `size`: its frame (the rest pose without one), its mark drawn over
/// it, framed on the model and the mark together; and the legend of the mark's colours, to
/// paint over it.
pub fn finding_picture(
    ctx: &GpuContext,
    scene: &Scene,
    finding: &Finding,
    size: (u32, u32),
) -> Result<(Rgba8, Option<Legend>)> {
    let character = posed(scene, finding.frame.as_ref())?;
    let options = ViewOptions::default();
    let Some(mark) = &finding.mark else {
        let image = render_character(ctx, &character, &options, size.0, size.1)?;
        return Ok((image, None));
    };
    let skinned: Vec<glam::Vec3> = character
        .outputs
        .iter()
        .flat_map(|o| o.positions.iter().copied())
        .collect();
    let frame = finding.frame.as_ref();
    let (anim, time_s) = (
        frame.and_then(|f| f.clip_index),
        frame.map_or(0.0, |f| f.time_s),
    );
    let title = super::checks::frame_words(scene, anim, time_s);
    let d = super::marks::draw(mark, title, &skinned);
    let image = render_marked(
        ctx,
        &character,
        &options,
        &d.overlay,
        Some(&d.frame_points),
        size,
    )?;
    Ok((image, Some(d.legend)))
}

/// One model's table row.
fn row(out: &mut String, model: &ModelResult, pictures: &Pictures) {
    let rank = model.worst.map_or(0, |s| s as usize + 1);
    let verdict = match model.worst {
        Some(Severity::Error) => "FAIL",
        Some(Severity::Warning) => "WARN",
        _ => "ok",
    };
    let thumb = match (&pictures.thumbnail, &pictures.missing) {
        (Some(src), _) => format!(
            "<img src=\"{}\" width=\"{}\" height=\"{}\" alt=\"{}\">",
            escape(src),
            THUMB_SIZE.0,
            THUMB_SIZE.1,
            escape(&model.path)
        ),
        (None, Some(why)) => format!("<span class=\"none\">{}</span>", escape(why)),
        (None, None) => String::new(),
    };
    let mut findings = String::new();
    for (k, finding) in model.findings.iter().enumerate() {
        let text = escape(&finding.message);
        let text = match pictures.frames.get(k).and_then(Option::as_ref) {
            Some(src) => format!("<a href=\"{}\">{text}</a>", escape(src)),
            None => text,
        };
        // A crashed or timed-out model's last lines of its worker's standard error.
        let stderr = if finding.stderr.is_empty() {
            String::new()
        } else {
            format!("<pre>{}</pre>", escape(&finding.stderr.join("\n")))
        };
        let _ = write!(
            findings,
            "<li class=\"{}\"><code>{}</code> {text}{stderr}</li>",
            finding.severity.name(),
            finding.check.id()
        );
    }
    let _ = writeln!(
        out,
        "<tr class=\"{verdict}\"><td>{thumb}</td><td data-sort=\"{path}\">{path}</td>\
         <td data-sort=\"{rank}\">{verdict}</td><td data-sort=\"{count}\">{count}</td>\
         <td><ul>{findings}</ul></td></tr>",
        path = escape(&model.path),
        count = model.findings.len(),
    );
}

/// The whole page around the rows.
fn page(report: &CheckReport, rows: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>skinview check: {models}</title>\n<style>{STYLE}</style></head>\n<body>\
         <h1>skinview check</h1>\n<p>{models}: {failed} with errors, {warned} with \
         warnings (skinview {version}, {schema}). Click a column to sort; a finding's link \
         shows its frame.</p>\n<table id=\"models\"><thead><tr><th>model</th>\
         <th class=\"sort\">file</th><th class=\"sort\">verdict</th>\
         <th class=\"sort\">findings</th><th>what was found</th></tr></thead>\n<tbody>\n\
         {rows}</tbody></table>\n<script>{SCRIPT}</script></body></html>\n",
        models = crate::info::count(report.models.len(), "model", "models"),
        failed = report.failed,
        warned = report.warned,
        version = escape(&report.version),
        schema = escape(&report.schema),
    )
}

/// The page's style. Under 640 CSS pixels (a phone) the table is laid out as blocks: a
/// model's picture at most the page's width, then its file, verdict and finding count on one
/// line, then its findings; the header keeps the sortable columns.
const STYLE: &str = "body{font:14px sans-serif;margin:1em}table{border-collapse:collapse}\
td,th{border-bottom:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}\
th.sort{cursor:pointer;text-decoration:underline}tr.FAIL td:nth-child(3){color:#b00}\
tr.WARN td:nth-child(3){color:#a60}li.error{color:#b00}li.warning{color:#a60}\
li.info{color:#555}ul{margin:0;padding-left:1.2em}.none{color:#888}\
li pre{color:#333;background:#f4f4f4;margin:2px 0;padding:2px 4px;white-space:pre-wrap}\
@media (max-width:640px){table,tbody,tr,td{display:block}thead tr{display:flex;gap:0 12px}\
th:first-child,th:last-child{display:none}th{border:0;padding:4px 0}\
tr{border-bottom:1px solid #ccc;padding:6px 0}td{border:0;padding:2px 0}\
td img{max-width:100%;height:auto}td:nth-child(2),td:nth-child(3),td:nth-child(4)\
{display:inline-block;margin-right:8px;overflow-wrap:anywhere}td:nth-child(4)::after\
{content:\" findings\"}li{overflow-wrap:anywhere}}";

/// Sorts the table by the clicked column's `data-sort` values (numbers as numbers, text in
/// code-unit order, as the report lists paths), again to reverse.
const SCRIPT: &str = "document.querySelectorAll('th.sort').forEach(function(th){\
th.addEventListener('click',function(){var i=th.cellIndex;\
var body=document.querySelector('#models tbody');var rows=Array.from(body.rows);\
var up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';\
rows.sort(function(a,b){var x=a.cells[i].dataset.sort,y=b.cells[i].dataset.sort;\
var n=Number(x)-Number(y);var c=isNaN(n)?(x<y?-1:x>y?1:0):n;return up?c:-c;});\
rows.forEach(function(r){body.appendChild(r);});});});";
