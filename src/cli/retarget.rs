//! `skinview retarget SOURCE TARGET --out OUT.glb`: SOURCE's clips played on TARGET's
//! skeleton and written into a copy of TARGET beside its own clips, with the bone map, its
//! problems and each clip's readouts printed (and written with `--json`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use skinview::info::count;
use skinview::io::gltf_export::{ExportOptions, write_glb};
use skinview::io::gltf_repack::{RepackOptions, repack_file_edited};
use skinview::io::{ImportOptions, Model, ModelSource};
use skinview::retarget::map::MAX_MAP_BYTES;
use skinview::retarget::{
    BoneMap, ClipReadouts, MapIssues, Reference, RetargetOptions, RetargetSetup, clip_readouts,
    retarget_clip,
};
use skinview::scene::Scene;

use super::choice::choice;
use super::{CliError, CliResult};

#[derive(Args)]
pub struct RetargetArgs {
    /// The file whose clips are played (.gltf/.glb, .fbx, .rig.json, builtin:NAME).
    source: PathBuf,
    /// The character they are played on; written to --out with the new clips added.
    target: PathBuf,
    /// Output: FILE.glb (TARGET with its own clips and the retargeted ones).
    #[arg(long)]
    out: PathBuf,
    /// A bone map (TOML: `[bones]` "target bone" = "source bone"); default: made from the
    /// names (see --save-map).
    #[arg(long)]
    map: Option<PathBuf>,
    /// Write the bone map used (the automatic one unless --map) as TOML, to edit and give
    /// back with --map.
    #[arg(long)]
    save_map: Option<PathBuf>,
    /// SOURCE's clips to retarget, by index or name, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    clips: Vec<String>,
    /// The pose each bone's orientation is measured from: bind (the inverse bind matrices)
    /// or rest (the nodes' own transforms).
    #[arg(long, value_parser = choice::<Reference>(), default_value = "bind")]
    reference: Reference,
    /// Turn the bones only: every bone but the hips keeps its own translation (by default each
    /// follows the source's offset from its reference pose, scaled: zero for clips that only
    /// turn bones).
    #[arg(long)]
    rotation_only: bool,
    /// Play the clips in place: take the hips' travel over each clip away.
    #[arg(long)]
    in_place: bool,
    /// Hold each foot where it is planted (within 2 cm of its lowest, slower than 0.1 m/s on
    /// the source), turning the leg with CCD IK; the legs' channels are then sampled.
    #[arg(long)]
    foot_lock: bool,
    /// Follow buffer and image URIs outside the models' folders.
    #[arg(long)]
    allow_external_uris: bool,
    /// Write the map, its problems and each clip's readouts as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// What the command reports (`--json`).
#[derive(serde::Serialize)]
struct Report {
    schema: &'static str,
    source: String,
    target: String,
    out: String,
    /// Target bone name → source bone name.
    map: Vec<(String, String)>,
    unmapped: Vec<String>,
    duplicated: Vec<(String, Vec<String>)>,
    parent_mismatch: Vec<String>,
    hips: Option<(String, String)>,
    height_ratio: f32,
    clips: Vec<ClipReport>,
}

#[derive(serde::Serialize)]
struct ClipReport {
    source_clip: String,
    written_as: String,
    channels_transferred: usize,
    channels_sampled: usize,
    samples: usize,
    readouts: ClipReadouts,
}

fn node_name(scene: &Scene, n: usize) -> String {
    scene.nodes[n]
        .name
        .clone()
        .unwrap_or_else(|| format!("node {}", scene.nodes[n].source_index))
}

pub fn run(a: RetargetArgs) -> CliResult {
    let is_glb = a
        .out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if is_glb.as_deref() != Some("glb") {
        return Err(CliError::Usage(format!(
            "--out {}: write FILE.glb (binary glTF)",
            a.out.display()
        )));
    }
    let import = ImportOptions {
        allow_external_uris: a.allow_external_uris,
    };
    let outputs = [
        Some(a.out.as_path()),
        a.json.as_deref(),
        a.save_map.as_deref(),
    ];
    let source = super::args::load_path(&a.source, import, &outputs)?;
    let target = super::args::load_path(&a.target, import, &outputs)?;
    if source.scene.animations.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no animation to retarget",
            a.source.display()
        )));
    }
    let clips = chosen_clips(&source.scene, &a.clips)?;
    let map = match &a.map {
        Some(path) => {
            let bytes = skinview::io::files::read_regular(path, MAX_MAP_BYTES, None)?;
            let label = path.display().to_string();
            BoneMap::from_toml_bytes(&bytes, &label, &source.scene, &target.scene)?
        }
        None => BoneMap::auto(&source.scene, &target.scene),
    };
    if map.pairs().next().is_none() {
        return Err(CliError::Usage(format!(
            "no bone of {} could be matched to one of {}: give a map with --map (write one to \
             start from with --save-map)",
            target.scene.name, source.scene.name
        )));
    }
    if let Some(path) = &a.save_map {
        let text = map.to_toml(&source.scene, &target.scene);
        skinview::io::output::write_file(path, text.as_bytes())?;
        println!("map -> {}", path.display());
    }
    let options = RetargetOptions {
        reference: a.reference,
        translations: !a.rotation_only,
        root_motion: !a.in_place,
        foot_lock: a.foot_lock,
    };
    let issues = map.issues(&source.scene, &target.scene);
    let setup = RetargetSetup::new(&source.scene, &target.scene, map, options)?;
    let mut report = report_head(&a, &source.scene, &target.scene, &setup, &issues);
    print_map(&report, &setup);
    if let Some((t, _)) = setup.hips
        && skinview::retarget::map::humanoid_profile(&target.scene)[t] != Some("hips")
    {
        println!(
            "  note: no bone of {} reads as the hips; the mapped bone nearest the root moves \
             in its place (a map file can say which)",
            target.scene.name
        );
    }
    let mut taken: Vec<String> = target
        .scene
        .animations
        .iter()
        .filter_map(|x| x.name.clone())
        .collect();
    let mut new_clips = Vec::with_capacity(clips.len());
    for &c in &clips {
        let source_name =
            skinview::anim::ClipName::new(c, source.scene.animations[c].name.as_deref());
        let base = source.scene.animations[c]
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("clip {c}"));
        let name = free_name(&base, &taken);
        taken.push(name.clone());
        let made = retarget_clip(&source.scene, &target.scene, &setup, c, name.clone())?;
        let readouts = clip_readouts(&source.scene, &target.scene, &setup, c)?;
        print_clip(&source_name.label(), &name, &made, &readouts);
        report.clips.push(ClipReport {
            source_clip: source_name.label(),
            written_as: name,
            channels_transferred: made.transferred,
            channels_sampled: made.sampled,
            samples: made.samples,
            readouts,
        });
        new_clips.push(made.animation);
    }
    write_out(&a, &target, new_clips)?;
    println!("-> {}", a.out.display());
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
        println!("-> {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The clips `--clips` names (all when empty).
fn chosen_clips(scene: &Scene, names: &[String]) -> CliResult<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..scene.animations.len()).collect());
    }
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let i = scene.find_animation(n.trim())?;
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

/// `base`, or `base-2`, `base-3`, ... when a clip of the target already has the name.
fn free_name(base: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == base) {
        return base.to_string();
    }
    (2..)
        .map(|k| format!("{base}-{k}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string())
}

fn report_head(
    a: &RetargetArgs,
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    issues: &MapIssues,
) -> Report {
    let names = |v: &[usize], scene: &Scene| v.iter().map(|&n| node_name(scene, n)).collect();
    Report {
        schema: "skinview-retarget/1",
        source: a.source.display().to_string(),
        target: a.target.display().to_string(),
        out: a.out.display().to_string(),
        map: setup
            .map
            .pairs()
            .map(|(t, s)| (node_name(target, t), node_name(source, s)))
            .collect(),
        unmapped: names(&issues.unmapped, target),
        duplicated: issues
            .duplicated
            .iter()
            .map(|(s, ts)| (node_name(source, *s), names(ts, target)))
            .collect(),
        parent_mismatch: names(&issues.parent_mismatch, target),
        hips: setup
            .hips
            .map(|(t, s)| (node_name(target, t), node_name(source, s))),
        height_ratio: setup.height_ratio,
        clips: Vec::new(),
    }
}

fn print_map(r: &Report, setup: &RetargetSetup) {
    println!(
        "{} -> {}: {} mapped; hips {}; height ratio {:.3}",
        r.source,
        r.target,
        count(r.map.len(), "bone", "bones"),
        r.hips
            .as_ref()
            .map_or("none".to_string(), |(t, s)| format!("{t} <- {s}")),
        setup.height_ratio
    );
    if !r.unmapped.is_empty() {
        println!(
            "  unmapped (hold their rest pose): {}",
            r.unmapped.join(", ")
        );
    }
    for (s, ts) in &r.duplicated {
        println!("  duplicated: {s} drives {}", ts.join(", "));
    }
    if !r.parent_mismatch.is_empty() {
        println!(
            "  parent mismatch (their source is not under their parent's): {}",
            r.parent_mismatch.join(", ")
        );
    }
}

fn print_clip(
    source: &str,
    name: &str,
    made: &skinview::retarget::RetargetedClip,
    readouts: &ClipReadouts,
) {
    println!(
        "  {source} -> \"{name}\": {} key for key, {} sampled ({})",
        count(made.transferred, "channel", "channels"),
        made.sampled,
        count(made.samples, "sample", "samples")
    );
    for e in &readouts.effectors {
        let sliding = match (e.contact_samples, e.target_sliding_m, e.source_sliding_m) {
            (Some(0), ..) => "; never planted".to_string(),
            (Some(_), Some(t), Some(s)) => {
                format!("; sliding in contact {t:.3} m (source {s:.3} m)")
            }
            _ => String::new(),
        };
        println!(
            "    {}: off the source's scaled place by {:.3} m at most, {:.3} m mean{sliding}",
            e.bone, e.max_reach_error_m, e.mean_reach_error_m
        );
    }
}

/// TARGET written with `clips` added: a glTF file from its own document (everything kept), a
/// native rig or an FBX file from its scene.
fn write_out(
    a: &RetargetArgs,
    target: &Model,
    clips: Vec<skinview::anim::Animation>,
) -> CliResult<()> {
    let source = &target.source;
    match source {
        ModelSource::File(path) if !source.is_native() && !source.is_fbx() => {
            let import = ImportOptions {
                allow_external_uris: a.allow_external_uris,
            };
            repack_file_edited(path, import, &RepackOptions::default(), &a.out, |scene| {
                scene.animations.extend(clips);
                Ok(())
            })?;
        }
        _ => {
            let mut scene = target.scene.clone();
            scene.animations.extend(clips);
            write_glb(&scene, &ExportOptions::default(), &a.out)?;
        }
    }
    Ok(())
}
