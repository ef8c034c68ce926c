//! `skinview optimize IN --out OUT.glb`: every clip's keys reduced while every skinned vertex
//! stays within the tolerance of where the original clip puts it (at the clip's evaluation
//! times), the file written from its own document, then read back and measured again: a
//! result over the tolerance is an error and nothing is written.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::anim::ClipName;
use skinview::choice::Choice;
use skinview::io::gltf_export::{ExportOptions, JointEncoding, export_glb};
use skinview::io::gltf_quantize::MeshQuantization;
use skinview::io::gltf_repack::{
    CompressStats, RepackOptions, animation_bytes, repack_bytes_edited, repack_glb_in_memory,
};
use skinview::io::{ImportOptions, Model, ModelSource};
use skinview::optimize::{
    ClipResult, KeyCodes, KeyCounts, OptimizeJob, WorstError, evaluation_times,
    worst_error_renumbered,
};
use skinview::scene::Scene;
use skinview::skin::weights::WeightEncoding;

use super::{CliError, CliResult};

#[derive(Args)]
pub struct OptimizeArgs {
    /// The character (.gltf/.glb, .fbx, .rig.json, builtin:NAME).
    input: PathBuf,
    /// Output: FILE.glb.
    #[arg(long)]
    out: PathBuf,
    /// The largest distance a skinned vertex may move, relative to the rest pose's bounding
    /// box diagonal (as `diff` measures it); 0 keeps every key.
    #[arg(
        long,
        default_value_t = 1e-4,
        conflicts_with = "tolerance_abs",
        allow_hyphen_values = true
    )]
    tolerance: f64,
    /// The largest distance a skinned vertex may move, in model units (metres for glTF).
    #[arg(long, allow_hyphen_values = true)]
    tolerance_abs: Option<f64>,
    /// Keep every skin's root joint's keys bit for bit (root motion as authored).
    #[arg(long)]
    exact_root: bool,
    /// JOINT=REL: what the joint's own keys may move the skin, at most (relative to the
    /// diagonal, as --tolerance), when that is less than its share; repeatable.
    #[arg(long, value_name = "JOINT=REL")]
    joint_tolerance: Vec<String>,
    /// Store positions, normals, tangents, texture coordinates and morph deltas as integers
    /// (KHR_mesh_quantization); their rounding counts in the tolerance.
    #[arg(long)]
    quantize_mesh: bool,
    /// Store the vertex, animation and index data compressed (EXT_meshopt_compression, as
    /// gltfpack -c): lossless, but for byte normals and tangents (octahedral filter).
    #[arg(long)]
    compress: bool,
    /// Follow buffer and image URIs outside the model's folder.
    #[arg(long)]
    allow_external_uris: bool,
    /// Write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The command's report (`--json`).
#[derive(serde::Serialize)]
struct Report {
    schema: &'static str,
    input: String,
    out: String,
    /// The tolerance in model units, and relative to the diagonal.
    tolerance: f64,
    tolerance_rel: f64,
    diagonal: f64,
    /// Where the bound is stated and checked.
    checked_at: &'static str,
    bytes_before: u64,
    bytes_after: u64,
    /// How the skin weights are stored: `unorm8`, `unorm16` or as in the input.
    skin_weights: &'static str,
    /// The most influences a vertex kept when a skin with more was limited (its largest,
    /// renormalised); None: every influence as in the input.
    influences: Option<usize>,
    /// With `--quantize-mesh` when it was kept: the position grid's bits and step (model
    /// units), and what the mesh's rounding alone moves the skinned vertices by.
    position_grid: Option<GridReport>,
    /// With `--compress`: the views compressed, their bytes before and after.
    compressed: Option<CompressStats>,
    clips: Vec<ClipReport>,
}

#[derive(serde::Serialize, Clone, Copy)]
struct GridReport {
    bits: u32,
    /// The largest step of the grids (each in the units of the positions it covers); None when
    /// no position was quantised (normals and the rest were).
    step: Option<f32>,
    error: f64,
}

#[derive(serde::Serialize)]
struct ClipReport {
    clip: String,
    translation: KeyCounts,
    rotation: KeyCounts,
    scale: KeyCounts,
    weights: KeyCounts,
    animation_bytes_before: u64,
    animation_bytes_after: u64,
    times_checked: usize,
    /// Budget halvings before the reduction held, doublings that still held, and reductions
    /// tried.
    tightened: usize,
    loosened: usize,
    attempts: usize,
    kept_original: bool,
    /// How rotation keys are stored as codes (None: floats) and translation and scale keys
    /// rounded (None: as they were), and how far those roundings and the morph weights' alone
    /// move a vertex (model units; measured before the reduction).
    rotation_codes: Option<String>,
    vector_codes: Option<String>,
    /// How morph weight keys are stored: `8-bit codes`, `16-bit codes`; None: floats.
    weight_codes: Option<String>,
    codes_error: f64,
    /// Measured on the written file, read back.
    worst_error: f64,
    worst_error_rel: f64,
    worst_time_s: f32,
    worst_draw: usize,
    worst_vertex: usize,
    worst_joint: Option<String>,
}

/// The most of the tolerance the skin weights' rounding may take of what the mesh's leaves (the
/// keys get the rest): a narrower encoding that takes more leaves too little for the keys.
const WEIGHTS_SHARE: f64 = 0.5;

/// The most of the tolerance the position grid's rounding may take (`--quantize-mesh`): a
/// quarter, so the weights and keys keep most of it.
const MESH_SHARE: f64 = 0.25;

/// Position grid bits tried (`--quantize-mesh`), fewest first: stored in unsigned shorts, so
/// without compression every count costs the same bytes and the finest is taken; compressed,
/// fewer bits take fewer bytes (gltfpack's default is 14). Not fewer than 9: a grid over the
/// mesh's largest extent E moves a vertex by up to √3/2 · E / (2^N − 1), which at 8 bits (E
/// about 0.8 of the diagonal on a figure) passes `diff`'s match radius (2e-3 of the diagonal),
/// so the check would find vertices unmatched. Where a coarse grid moves neighbours past each
/// other, `diff` tells them apart by their texture coordinates (`diff::matching::pair_cost`),
/// among the 8 nearest by position: on a mesh with more than 8 vertices within a grid step of
/// one another the right one may not be among them, and there positions alone decide.
const POSITION_BITS: [u32; 6] = [9, 10, 11, 12, 14, 16];

/// Quaternion filter bits offered for rotation keys (`--compress`), fewest first: gltfpack's
/// default is 12; 14 is as far as the filter is coarser than plain 16-bit codes.
const QUATERNION_BITS: [i32; 3] = [10, 12, 14];

/// Exponent filter mantissa bits offered for translation and scale keys (`--compress`),
/// fewest first: gltfpack's default is 16 for both.
const EXPONENT_BITS: [i32; 2] = [12, 16];

/// Keys rounded in place to what the file reads back.
type Rounding = Box<dyn Fn(&mut [f32])>;

/// Keys rounded as one of meshoptimizer's filters gives them back at some bits.
struct Filter {
    name: String,
    round: Rounding,
}

impl Filter {
    /// Rotations through the quaternion filter, translations and scales through the exponent
    /// filter, coarsest first.
    fn choices() -> (Vec<Filter>, Vec<Filter>) {
        use skinview::io::meshopt_encode::{exponent_filter_round, quaternion_filter_round};
        let quaternion = QUATERNION_BITS.iter().map(|&bits| Filter {
            name: format!("quaternion filter, {bits} bits"),
            round: Box::new(move |v: &mut [f32]| quaternion_filter_round(bits, v)),
        });
        let exponent = EXPONENT_BITS.iter().map(|&bits| Filter {
            name: format!("exponent filter, {bits} bits"),
            round: Box::new(move |v: &mut [f32]| exponent_filter_round(bits, v)),
        });
        (quaternion.collect(), exponent.collect())
    }

    /// `filters` as the job takes them when the output is compressed, else none.
    fn offered<'a>(a: &OptimizeArgs, filters: &'a [Filter]) -> Vec<KeyCodes<'a>> {
        (filters.iter().filter(|_| a.compress))
            .map(|f| KeyCodes {
                name: &f.name,
                round: &*f.round,
            })
            .collect()
    }
}

/// How the written file stores what is not keys.
#[derive(Clone, Copy, Default)]
struct Encodings {
    weights: Option<WeightEncoding>,
    /// Most influences a vertex keeps (its largest, renormalised); None: all of them.
    influences: Option<usize>,
    mesh: Option<MeshQuantization>,
}

impl Encodings {
    /// Whether the skin weights are written other than as in the input.
    fn skin_changed(&self) -> bool {
        self.weights.is_some() || self.influences.is_some()
    }
}

/// Skin weight encodings tried, narrowest first; the input's own when neither holds.
const WEIGHT_ENCODINGS: [WeightEncoding; 2] = [WeightEncoding::Unorm8, WeightEncoding::Unorm16];

/// Influences a vertex keeps when a skin with more is limited: glTF's one JOINTS/WEIGHTS set,
/// all that three.js and Bevy read, and what gltfpack keeps.
const LIMITED_INFLUENCES: usize = 4;

const CHECKED_AT: &str = "every key time of the clip, 4 samples between each two, and at \
                          least 120 Hz (skinview diff --times evaluation)";

pub fn run(a: OptimizeArgs) -> CliResult {
    if a.out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        != Some("glb".into())
    {
        return Err(CliError::Usage(format!(
            "--out {}: write FILE.glb (binary glTF)",
            a.out.display()
        )));
    }
    check_tolerance(&a)?;
    if a.tolerance_abs.unwrap_or(a.tolerance) == 0.0 && (a.quantize_mesh || a.compress) {
        return Err(CliError::Usage(
            "--tolerance 0 keeps every bit as it is: --quantize-mesh and --compress need a \
             tolerance above 0"
                .into(),
        ));
    }
    let import = ImportOptions {
        allow_external_uris: a.allow_external_uris,
    };
    let model = super::args::load_path(&a.input, import, &[Some(&a.out), a.json.as_deref()])?;
    let scene = &model.scene;
    if scene.animations.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no animation to optimise",
            a.input.display()
        )));
    }
    let diagonal = skinview::diff::rest_diagonal(scene)?;
    let tolerance = tolerance_in_units(&a, diagonal)?;
    // Joint names checked before any work.
    let caps = joint_caps(&a, scene, diagonal)?;
    // The mesh's and the skin weights' rounding first: the keys get what they leave of the
    // tolerance.
    let (enc, mut grid, coarser, used) = encodings(&a, &model, tolerance)?;
    let (quaternion, exponent) = Filter::choices();
    // Every clip's keys reduced within `keys_tolerance` (model units).
    let reduce = |keys_tolerance: f64| {
        let job = OptimizeJob {
            scene,
            tolerance: keys_tolerance.max(0.0) as f32,
            exact: match a.exact_root {
                true => root_joints(scene),
                false => Vec::new(),
            },
            caps: caps.clone(),
            // Through the quaternion filter (`--compress`), else 16-bit codes.
            rotation_codes: [Filter::offered(&a, &quaternion), vec![KeyCodes::SNORM16]].concat(),
            vector_codes: Filter::offered(&a, &exponent),
            price: a
                .compress
                .then_some(&skinview::io::meshopt_encode::clip_compressed_bytes as _),
        };
        job.run(|clip, attempt| {
            let name = ClipName::new(clip, scene.animations[clip].name.as_deref()).label();
            match attempt {
                0 => println!("clip {}/{} {name}", clip + 1, scene.animations.len()),
                k => println!("  {name}: reduction {} (budgets halved or doubled)", k + 1),
            }
        })
    };
    let (clips, results) = reduce(tolerance - used)?;
    let (written, worst, enc) = write_checked(&a, &model, clips.clone(), tolerance, enc)?;
    let weights_error = used - grid.map_or(0.0, |g| g.error);
    let best = Best {
        written,
        worst,
        enc,
        clips,
        results,
    };
    let Best {
        written,
        worst,
        enc,
        results,
        ..
    } = coarsest_grid(
        &a,
        &model,
        (tolerance, weights_error),
        best,
        &coarser,
        reduce,
    )?;
    let glb = written.glb;
    grid = match enc.mesh {
        None => None,
        Some(m) => coarser
            .into_iter()
            .find(|g| g.bits == m.position_bits)
            .or(grid),
    };
    let before = bytes_before(&model)?;
    let after = animation_bytes(&glb, &a.out.display().to_string())?;
    let mut report = Report {
        schema: "skinview-optimize/1",
        input: a.input.display().to_string(),
        out: a.out.display().to_string(),
        tolerance,
        tolerance_rel: tolerance / diagonal.max(f64::MIN_POSITIVE),
        diagonal,
        checked_at: CHECKED_AT,
        bytes_before: before.1,
        bytes_after: glb.len() as u64,
        skin_weights: enc.weights.map_or("as in the input", |w| w.name()),
        influences: enc.influences,
        position_grid: grid,
        compressed: written.compressed,
        clips: Vec::with_capacity(results.len()),
    };
    let mut over = Vec::new();
    for (r, worst) in results.iter().zip(&worst) {
        let clip = clip_report(scene, r, worst, diagonal, &before.0, &after);
        print_clip(&clip);
        if f64::from(worst.distance) > tolerance {
            over.push(clip.clip.clone());
        }
        report.clips.push(clip);
    }
    print_file_summary(&report);
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
        println!("report -> {}", path.display());
    }
    if !over.is_empty() {
        eprintln!(
            "skinview: the written file moves skinned vertices past the tolerance in {}; \
             {} not written",
            over.join(", "),
            a.out.display()
        );
        return Ok(ExitCode::from(1));
    }
    skinview::io::output::write_file(&a.out, &glb)?;
    println!("-> {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

/// What the report says of the file as a whole: the skin weights, compression, the mesh's
/// integers, the sizes and the bound.
fn print_file_summary(report: &Report) {
    match report.influences {
        Some(k) => println!(
            "skin weights: {}, at most {k} influences a vertex",
            report.skin_weights
        ),
        None => println!("skin weights: {}", report.skin_weights),
    }
    match &report.compressed {
        Some(c) if c.views == 0 => println!("compressed: no view would shrink, all kept plain"),
        Some(c) => println!(
            "compressed: {} views, {} bytes -> {}",
            c.views, c.bytes_before, c.bytes_after
        ),
        None => {}
    }
    if let Some(g) = &report.position_grid {
        match g.step {
            Some(step) => println!(
                "mesh: positions on a {}-bit grid, step {step:.3e}; normals, tangents and texture \
                 coordinates as integers (their rounding moves vertices by {:.3e})",
                g.bits, g.error
            ),
            None => println!("mesh: normals, tangents and texture coordinates as integers"),
        }
    }
    println!(
        "{} bytes -> {} bytes ({:.1} %); bound {:.3e} ({:.2e} of the diagonal) checked at {}",
        report.bytes_before,
        report.bytes_after,
        100.0 * report.bytes_after as f64 / report.bytes_before.max(1) as f64,
        report.tolerance,
        report.tolerance_rel,
        CHECKED_AT
    );
}

/// The mesh's encoding (`--quantize-mesh`) and the skin weights' narrowest, each measured
/// on the file written with the clips as they are; the position grid kept, and how far the
/// two roundings together move the vertices (what the keys do not get of the tolerance);
/// also the coarser grids measured that took more than their share (tried again at the end).
fn encodings(
    a: &OptimizeArgs,
    model: &Model,
    tolerance: f64,
) -> CliResult<(Encodings, Option<GridReport>, Vec<GridReport>, f64)> {
    let scene = &model.scene;
    let mut enc = Encodings::default();
    let (mut grid, mut coarser) = (None, Vec::new());
    if a.quantize_mesh {
        (grid, coarser) = position_grid(a, model, tolerance)?;
        enc.mesh = grid.map(|g| MeshQuantization {
            position_bits: g.bits,
            uv_bits: uv_bits(a),
        });
    }
    let mesh_error = grid.map_or(0.0, |g| g.error);
    let skinned = scene
        .draws
        .iter()
        .any(|d| scene.primitive(d).skin_weights.is_some());
    let mut used = mesh_error;
    if skinned && tolerance > 0.0 {
        let allowed = mesh_error + WEIGHTS_SHARE * (tolerance - mesh_error);
        if let Some((w, k, e)) = narrowest_weights(a, model, enc, allowed)? {
            (enc.weights, enc.influences) = (Some(w), k);
            used = e;
        }
    }
    Ok((enc, grid, coarser, used))
}

/// The position grid (`--quantize-mesh`) when it makes the file smaller and its rounding alone
/// (the clips as they are, the file written and read back) moves no vertex by more than
/// [`MESH_SHARE`] of the tolerance at any evaluation time; None (said why) otherwise. Also the
/// coarser grids (all of them when none held) measured that made the file smaller but took
/// more than that, finest first.
fn position_grid(
    a: &OptimizeArgs,
    model: &Model,
    tolerance: f64,
) -> CliResult<(Option<GridReport>, Vec<GridReport>)> {
    let mut coarser = Vec::new();
    let clips = || model.scene.animations.clone();
    let plain = write_bytes(a, model, clips(), Encodings::default())?
        .glb
        .len();
    let bits: &[u32] = match a.compress {
        true => &POSITION_BITS,
        false => &POSITION_BITS[POSITION_BITS.len() - 1..],
    };
    for &b in bits {
        let mesh = Some(MeshQuantization {
            position_bits: b,
            uv_bits: uv_bits(a),
        });
        let enc = Encodings {
            mesh,
            ..Default::default()
        };
        let (written, worst) = write_measured(a, model, clips(), enc)?;
        let (glb, step) = (written.glb, written.position_step);
        let error = largest(&worst);
        println!(
            "mesh quantised ({}): {plain} bytes -> {}; rounding moves vertices by {error:.3e}",
            step.map_or(
                "normals, tangents, texture coordinates".into(),
                |s| format!("{b}-bit position grid, step {s:.3e}")
            ),
            glb.len()
        );
        if glb.len() >= plain {
            println!("  not smaller: the mesh stays as it was");
            return Ok((None, Vec::new()));
        }
        let report = GridReport {
            bits: b,
            step,
            error,
        };
        if error <= MESH_SHARE * tolerance {
            coarser.reverse();
            return Ok((Some(report), coarser));
        }
        println!("  over a quarter of the tolerance");
        coarser.push(report);
    }
    println!("  the mesh stays as it was (tried again once the keys are reduced)");
    coarser.reverse();
    Ok((None, coarser))
}

/// Bits of texture coordinates over their range: gltfpack's 12 when compressed (fewer bits
/// compress; a step of 1/4095 of the range, under a texel of a 4096-pixel texture), else 16
/// (plain shorts cost the same whatever the bits).
fn uv_bits(a: &OptimizeArgs) -> u32 {
    match a.compress {
        true => 12,
        false => 16,
    }
}

/// The largest of the clips' worst errors.
fn largest(worst: &[WorstError]) -> f64 {
    worst
        .iter()
        .map(|e| f64::from(e.distance))
        .fold(0.0, f64::max)
}

/// The narrowest skin weight encoding, with the influences limited to
/// [`LIMITED_INFLUENCES`] first where a skin has more, that makes the file (written as `enc`
/// says otherwise) smaller and with which no vertex moves by more than `allowed` at any
/// evaluation time (the clips as they are, the file written and read back), and that distance;
/// None when none does.
fn narrowest_weights(
    a: &OptimizeArgs,
    model: &Model,
    enc: Encodings,
    allowed: f64,
) -> CliResult<Option<(WeightEncoding, Option<usize>, f64)>> {
    // An encoding that does not make the file smaller is not worth its error (a tiny mesh's
    // re-encoded weights take a view of their own).
    let clips = || model.scene.animations.clone();
    let plain = write_bytes(a, model, clips(), enc)?.glb.len();
    let wide = (model.scene.meshes.iter().flat_map(|m| &m.primitives))
        .filter_map(|p| p.skin_weights.as_ref())
        .any(|w| w.max_influences() > LIMITED_INFLUENCES);
    let limits = match wide {
        true => vec![Some(LIMITED_INFLUENCES), None],
        false => vec![None],
    };
    for (k, w) in limits
        .into_iter()
        .flat_map(|k| WEIGHT_ENCODINGS.map(|w| (k, w)))
    {
        let with = Encodings {
            weights: Some(w),
            influences: k,
            ..enc
        };
        let (written, worst) = write_measured(a, model, clips(), with)?;
        let glb = written.glb;
        if glb.len() >= plain {
            continue;
        }
        let moved = largest(&worst);
        let fits = moved <= allowed;
        println!(
            "skin weights as {}{}: vertices move by {moved:.3e}{}",
            w.name(),
            k.map_or(String::new(), |k| format!(
                ", at most {k} influences a vertex"
            )),
            if fits { "" } else { ", over their share" }
        );
        if fits {
            return Ok(Some((w, k, moved)));
        }
    }
    Ok(None)
}

/// The output written as `enc` says, and the worst error of each clip measured on it read
/// back, at its evaluation times.
fn write_measured(
    a: &OptimizeArgs,
    model: &Model,
    clips: Vec<skinview::anim::Animation>,
    enc: Encodings,
) -> CliResult<(Written, Vec<WorstError>)> {
    let scene = &model.scene;
    let written = write_bytes(a, model, clips, enc)?;
    let back = skinview::io::gltf_import::import_slice(&written.glb, &a.out)?;
    let mut worst = Vec::with_capacity(scene.animations.len());
    for c in 0..scene.animations.len() {
        let times = evaluation_times(&scene.animations[c])?;
        let order = &written.vertex_orders;
        worst.push(worst_error_renumbered(
            (scene, c),
            (&back, c),
            &times,
            order,
        )?);
    }
    Ok((written, worst))
}

/// The output and each clip's worst error written as `enc` says; when that passes the
/// tolerance, again with the weights as in the input, and then with the mesh as well (the
/// caller refuses a result still over). The encodings the bytes have.
fn write_checked(
    a: &OptimizeArgs,
    model: &Model,
    clips: Vec<skinview::anim::Animation>,
    tolerance: f64,
    enc: Encodings,
) -> CliResult<(Written, Vec<WorstError>, Encodings)> {
    let fallbacks = [
        enc,
        Encodings {
            weights: None,
            influences: None,
            ..enc
        },
        Encodings::default(),
    ];
    let mut tried: Vec<(bool, bool)> = Vec::new();
    let mut last = None;
    for e in fallbacks {
        let key = (e.skin_changed(), e.mesh.is_some());
        if tried.contains(&key) {
            continue;
        }
        if !tried.is_empty() {
            println!(
                "  over the tolerance with the {} rounded: written with {} as they were",
                if tried.len() == 1 && enc.skin_changed() {
                    "weights"
                } else {
                    "mesh"
                },
                if e.mesh.is_none() && !e.skin_changed() {
                    "both"
                } else {
                    "them"
                }
            );
        }
        tried.push(key);
        let (written, worst) = write_measured(a, model, clips.clone(), e)?;
        if within(&worst, tolerance) {
            return Ok((written, worst, e));
        }
        last = Some((written, worst, e));
    }
    last.ok_or_else(|| CliError::Usage("nothing was written".into()))
}

/// A written output with what it was written from: the file and its clips' worst errors, its
/// encodings, the reduced clips and the reduction's report.
struct Best {
    written: Written,
    worst: Vec<WorstError>,
    enc: Encodings,
    clips: Vec<skinview::anim::Animation>,
    results: Vec<ClipResult>,
}

/// The checked output with its position grid made coarser (or, when no grid held its share,
/// quantised at all) while the whole file still holds the tolerance and gets smaller: each of
/// `coarser` (finest first, each measured alone over its share) is written with the reduced
/// clips and the other encodings as they are, read back and measured at every evaluation time;
/// when that fails the tolerance (or is no smaller), the keys are reduced again (`reduce`)
/// within what the grid's and the weights' (`weights_error`) rounding leave, and it is written
/// and measured with those. The budgets split the tolerance before the keys were reduced; what the reduction
/// left unused, or gives back, goes to the grid.
fn coarsest_grid(
    a: &OptimizeArgs,
    model: &Model,
    (tolerance, weights_error): (f64, f64),
    checked: Best,
    coarser: &[GridReport],
    reduce: impl Fn(f64) -> skinview::error::Result<(Vec<skinview::anim::Animation>, Vec<ClipResult>)>,
) -> CliResult<Best> {
    let mut best = checked;
    if !within(&best.worst, tolerance) {
        return Ok(best);
    }
    let finest = best.enc.mesh.map_or(u32::MAX, |m| m.position_bits);
    for g in coarser.iter().filter(|g| g.bits < finest) {
        let enc = Encodings {
            mesh: Some(MeshQuantization {
                position_bits: g.bits,
                uv_bits: uv_bits(a),
            }),
            ..best.enc
        };
        // The file on this grid with `clips`, measured and told (`with`: which keys); Some
        // when it holds and is smaller than the best so far.
        let try_grid = |clips: Vec<skinview::anim::Animation>, with: &str, best: &Best| {
            let (written, worst) = write_measured(a, model, clips, enc)?;
            println!(
                "  {}-bit position grid with {with}: {} bytes, vertices move by {:.3e}",
                g.bits,
                written.glb.len(),
                largest(&worst),
            );
            let better = within(&worst, tolerance) && written.glb.len() < best.written.glb.len();
            CliResult::Ok(better.then_some((written, worst)))
        };
        if let Some((written, worst)) = try_grid(best.clips.clone(), "the reduced clips", &best)? {
            (best.written, best.worst, best.enc) = (written, worst, enc);
            continue;
        }
        let left = tolerance - g.error - weights_error;
        if left > 0.0 {
            println!(
                "  the keys reduced again within the {left:.3e} the {}-bit grid leaves",
                g.bits
            );
            let (clips, results) = reduce(left)?;
            if let Some((written, worst)) = try_grid(clips.clone(), "those keys", &best)? {
                best = Best {
                    written,
                    worst,
                    enc,
                    clips,
                    results,
                };
                continue;
            }
        }
        println!(
            "  {}",
            match best.enc.mesh {
                Some(_) => "kept the finer grid",
                None => "the mesh stays as it was",
            }
        );
        break;
    }
    Ok(best)
}

/// Whether every clip's worst error is within `tolerance` (model units).
fn within(worst: &[WorstError], tolerance: f64) -> bool {
    worst.iter().all(|e| f64::from(e.distance) <= tolerance)
}

/// The tolerance in model units: `--tolerance-abs`, refused over the rest `diagonal` (over the
/// whole model's size, as over 1 for `--tolerance`: no bound at all), or `--tolerance` times
/// the diagonal.
fn tolerance_in_units(a: &OptimizeArgs, diagonal: f64) -> CliResult<f64> {
    match a.tolerance_abs {
        Some(t) if t > diagonal => Err(CliError::Usage(format!(
            "--tolerance-abs {t}: more than {}'s rest diagonal ({diagonal:.4}): give at most that",
            a.input.display()
        ))),
        Some(t) => Ok(t),
        None => Ok(a.tolerance * diagonal),
    }
}

/// Refuse a tolerance that is not a distance: negative, NaN, infinite, or over 1 of the
/// diagonal.
fn check_tolerance(a: &OptimizeArgs) -> CliResult<()> {
    let (flag, t, most) = match a.tolerance_abs {
        Some(t) => ("--tolerance-abs", t, f64::MAX),
        None => ("--tolerance", a.tolerance, 1.0),
    };
    if !(t.is_finite() && (0.0..=most).contains(&t)) {
        let range = if most == 1.0 {
            "between 0 and 1 (a fraction of the diagonal)"
        } else {
            "a finite distance, 0 or more"
        };
        return Err(CliError::Usage(format!("{flag} {t}: give {range}")));
    }
    Ok(())
}

/// The output's bytes written as `enc` says, and the position grid's step when positions were
/// quantised: a glTF input rewritten from its own document (everything it had kept, the clips
/// replaced and their old data dropped), a native rig or FBX file from its scene (and that
/// file repacked in memory to quantise its mesh).
fn write_bytes(
    a: &OptimizeArgs,
    model: &Model,
    clips: Vec<skinview::anim::Animation>,
    enc: Encodings,
) -> CliResult<Written> {
    let source = &model.source;
    let report = match source {
        ModelSource::File(path) if !source.is_native() && !source.is_fbx() => {
            let import = ImportOptions {
                allow_external_uris: a.allow_external_uris,
            };
            let options = RepackOptions {
                rewrite_animations: true,
                weights: enc.weights,
                joints: narrow_joints(&model.scene),
                rewrite_skin: enc.influences.is_some() || a.compress,
                quantize_mesh: enc.mesh,
                compress: a.compress,
            };
            let (glb, report, ()) = repack_bytes_edited(path, import, &options, &a.out, |s| {
                s.animations = clips;
                shape_skin(s, enc.influences, a.compress);
                Ok(())
            })?;
            for d in &report.dropped {
                println!("  not kept: {d}");
            }
            (glb, report)
        }
        _ => {
            let mut scene = model.scene.clone();
            scene.animations = clips;
            shape_skin(&mut scene, enc.influences, a.compress);
            let options = ExportOptions {
                joints: narrow_joints(&scene).unwrap_or(ExportOptions::default().joints),
                weights: enc.weights.unwrap_or(ExportOptions::default().weights),
                ..Default::default()
            };
            let glb = export_glb(&scene, &options)?;
            if enc.mesh.is_none() && !a.compress {
                return Ok(Written {
                    glb,
                    ..Default::default()
                });
            }
            // The clips rewritten too: their data gathered into one view per element size.
            let options = RepackOptions {
                rewrite_animations: true,
                quantize_mesh: enc.mesh,
                compress: a.compress,
                ..Default::default()
            };
            repack_glb_in_memory(glb, &format!("{}.glb", scene.name), &options, &a.out)?
        }
    };
    let (glb, report) = report;
    Ok(Written {
        glb,
        position_step: report.position_step,
        vertex_orders: report.vertex_orders,
        compressed: report.compressed,
    })
}

/// Every skin's influences limited to `influences` a vertex (its largest, renormalised) when
/// given, and sorted by joint when the file is compressed (gltfpack's order: the joint bytes
/// of neighbouring vertices then repeat, and compress).
fn shape_skin(scene: &mut Scene, influences: Option<usize>, compress: bool) {
    use skinview::skin::weights::{reduce_influences, sort_by_joint};
    for p in scene.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        let Some(w) = &mut p.skin_weights else {
            continue;
        };
        if let Some(k) = influences.filter(|&k| w.max_influences() > k) {
            *w = reduce_influences(w, k).0;
        }
        if compress {
            sort_by_joint(w);
        }
    }
}

/// A written file's bytes, with what reading it back needs to know.
#[derive(Default)]
struct Written {
    glb: Vec<u8>,
    /// The largest position grid's step, when positions were quantised.
    position_step: Option<f32>,
    /// Primitives whose vertices were renumbered (mesh, primitive, `new_from_old`).
    vertex_orders: Vec<(usize, usize, Vec<u32>)>,
    /// What compression did.
    compressed: Option<CompressStats>,
}

/// Each skin's root joints: its joints whose parent is not one of its joints.
fn root_joints(scene: &Scene) -> Vec<usize> {
    let mut roots: Vec<usize> = scene
        .skins
        .iter()
        .flat_map(|s| {
            s.joints
                .iter()
                .copied()
                .filter(|&j| scene.nodes[j].parent.is_none_or(|p| !s.joints.contains(&p)))
        })
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// `--joint-tolerance JOINT=REL` as (node, distance in model units); an error names a joint
/// the scene lacks or a value that is not a fraction of the diagonal.
fn joint_caps(a: &OptimizeArgs, scene: &Scene, diagonal: f64) -> CliResult<Vec<(usize, f32)>> {
    a.joint_tolerance
        .iter()
        .map(|spec| {
            let usage = || {
                CliError::Usage(format!(
                    "--joint-tolerance {spec}: give JOINT=REL, REL between 0 and 1 (a fraction \
                     of the diagonal)"
                ))
            };
            let (name, rel) = spec.rsplit_once('=').ok_or_else(usage)?;
            let rel: f64 = rel.trim().parse().map_err(|_| usage())?;
            if !(rel.is_finite() && (0.0..=1.0).contains(&rel)) {
                return Err(usage());
            }
            // Named for this switch: the library's message names the animation switches.
            let node = scene.find_node(name.trim()).map_err(|e| match e {
                skinview::error::Error::UnknownBone {
                    model,
                    bone,
                    closest,
                } => CliError::Usage(format!(
                    "--joint-tolerance {spec}: {model} has no joint {bone:?} (a joint is its \
                     name, its label `node N` or its node index N; `skinview info` lists every \
                     skin's joints){}",
                    skinview::error::did_you_mean(&closest)
                )),
                e => e.into(),
            })?;
            Ok((node, (rel * diagonal) as f32))
        })
        .collect()
}

/// Joint indices as bytes when every one fits (lossless: the same indices in half the bytes);
/// None keeps them as the input has them.
fn narrow_joints(scene: &Scene) -> Option<JointEncoding> {
    let fits = scene
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .filter_map(|p| p.skin_weights.as_ref())
        .all(|w| w.joints.iter().all(|&j| j <= u32::from(u8::MAX)));
    fits.then_some(JointEncoding::U8)
}

/// Per clip, the bytes of its animation data in the input, and the input's size: a glTF
/// file's as stored (its file size), another input's as `export` would write it.
fn bytes_before(model: &Model) -> CliResult<(Vec<u64>, u64)> {
    let source = &model.source;
    let (bytes, label) = match source {
        ModelSource::File(path) if !source.is_native() && !source.is_fbx() => {
            let limit = skinview::io::files::MAX_FILE_BYTES;
            (
                skinview::io::files::read_regular(path, limit, None)?,
                path.display().to_string(),
            )
        }
        _ => (
            export_glb(&model.scene, &ExportOptions::default())?,
            model.scene.name.clone(),
        ),
    };
    let files: u64 = model
        .files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let size = if files > 0 { files } else { bytes.len() as u64 };
    Ok((animation_bytes(&bytes, &label)?, size))
}

fn clip_report(
    scene: &Scene,
    r: &ClipResult,
    worst: &WorstError,
    diagonal: f64,
    before: &[u64],
    after: &[u64],
) -> ClipReport {
    let [translation, rotation, scale, weights] = r.keys;
    ClipReport {
        clip: ClipName::new(r.clip, scene.animations[r.clip].name.as_deref()).label(),
        translation,
        rotation,
        scale,
        weights,
        animation_bytes_before: before.get(r.clip).copied().unwrap_or(0),
        animation_bytes_after: after.get(r.clip).copied().unwrap_or(0),
        times_checked: r.times_checked,
        tightened: r.tightened,
        loosened: r.loosened,
        attempts: r.attempts,
        kept_original: r.kept_original,
        rotation_codes: r.rotation_codes.clone(),
        vector_codes: r.vector_codes.clone(),
        weight_codes: r.weight_codes.clone(),
        codes_error: f64::from(r.codes_error),
        worst_error: f64::from(worst.distance),
        worst_error_rel: f64::from(worst.distance) / diagonal.max(f64::MIN_POSITIVE),
        worst_time_s: worst.time_s,
        worst_draw: worst.draw,
        worst_vertex: worst.vertex,
        worst_joint: heaviest_joint(scene, worst.draw, worst.vertex),
    }
}

/// The name of the joint with the largest weight on `vertex` of `draw` (None for a rigid
/// draw or an unnamed joint).
fn heaviest_joint(scene: &Scene, draw: usize, vertex: usize) -> Option<String> {
    let d = scene.draws.get(draw)?;
    let w = scene.primitive(d).skin_weights.as_ref()?;
    let slots = vertex * w.width..(vertex + 1) * w.width;
    let k = slots
        .clone()
        .filter(|&k| k < w.weights.len())
        .max_by(|&x, &y| w.weights[x].total_cmp(&w.weights[y]))?;
    let node = *scene.skins.get(d.skin?)?.joints.get(w.joints[k] as usize)?;
    scene.nodes.get(node)?.name.clone()
}

fn print_clip(c: &ClipReport) {
    let keys = |k: &KeyCounts, what: &str| {
        let mut notes = Vec::new();
        if k.quantised > 0 {
            let codes = match (what, &c.rotation_codes, &c.vector_codes) {
                ("rotation", Some(name), _) => name.as_str(),
                ("translation" | "scale", _, Some(name)) => name.as_str(),
                ("weights", ..) => c.weight_codes.as_deref().unwrap_or("16-bit codes"),
                _ => "16-bit codes",
            };
            notes.push(format!(
                "{} of {} channels as {codes}",
                k.quantised, k.channels
            ));
            if k.cubic_codes > 0 && codes != KeyCodes::SNORM16.name {
                notes.push(format!(
                    "{} CUBICSPLINE of them as {}",
                    k.cubic_codes,
                    KeyCodes::SNORM16.name
                ));
            }
        }
        if k.linearised > 0 {
            notes.push(format!("{} CUBICSPLINE made LINEAR", k.linearised));
        }
        if k.refitted > 0 {
            notes.push(format!("{} refitted", k.refitted));
        }
        if k.dropped > 0 {
            notes.push(format!("{} held by the node's own value", k.dropped));
        }
        let notes = match notes.is_empty() {
            true => String::new(),
            false => format!(" ({})", notes.join(", ")),
        };
        (k.channels > 0).then(|| format!("{what} {} -> {}{notes}", k.before, k.after))
    };
    let parts: Vec<String> = [
        keys(&c.translation, "translation"),
        keys(&c.rotation, "rotation"),
        keys(&c.scale, "scale"),
        keys(&c.weights, "weights"),
    ]
    .into_iter()
    .flatten()
    .collect();
    println!(
        "  {}: keys {}; animation data {} -> {} bytes{}",
        c.clip,
        parts.join(", "),
        c.animation_bytes_before,
        c.animation_bytes_after,
        if c.kept_original {
            " (kept as it was)"
        } else {
            ""
        }
    );
    if c.codes_error > 0.0 {
        println!(
            "  codes: their rounding alone moves vertices by {:.3e}",
            c.codes_error
        );
    }
    println!(
        "  worst skinned-vertex error {:.3e} ({:.2e} of the diagonal) at {:.3} s, draw {} vertex \
         {}{} ({} times checked)",
        c.worst_error,
        c.worst_error_rel,
        c.worst_time_s,
        c.worst_draw,
        c.worst_vertex,
        c.worst_joint
            .as_ref()
            .map_or(String::new(), |j| format!(" (joint {j})")),
        c.times_checked
    );
}
