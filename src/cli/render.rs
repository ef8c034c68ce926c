//! `skinview render`: an offscreen lit render to PNG of a model at a time, skinned on the GPU
//! or by the CPU reference, optionally through the whole animation stage of a native rig.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use skinview::builtin::Builtin;
use skinview::character::{Character, CharacterSetup, CharacterSpec, Motion, SplitSpec};
use skinview::gpu::{
    ColorMode, DEFAULT_UNIFORM_BONES, GPU_MAX_INFLUENCES, GpuContext, PaletteSource, Skinning,
    choose_source,
};
use skinview::io::ModelSource;
use skinview::partition::{MAX_BONES, MIN_BONES};
use skinview::view::ViewOptions;
use skinview::view::skeleton::BoneStyle;

use super::annotate;
use super::args::{ModelArg, SkinArgs, StageArgs, check_gpu_skinning, parse_anim, parse_size};
use super::choice::choice;
use super::{CliError, CliResult, gpu};
use skinview::info::count;
use skinview::skin::{SkinMode, SkinOptions};

#[derive(Args)]
pub struct RenderArgs {
    #[command(flatten)]
    model: ModelArg,
    #[command(flatten)]
    skin: SkinArgs,
    /// Animation index or name, or "none" for the rest pose. Default: 0 when the model has one.
    #[arg(long, allow_negative_numbers = true)]
    anim: Option<String>,
    /// Time in seconds. Default: the middle of the animation (1 s for --demo). Before 0 or past
    /// the clip's end, the clip's first or last pose (glTF holds values outside the key
    /// range), with a note.
    #[arg(long, allow_hyphen_values = true)]
    time: Option<f32>,
    /// Who skins what is drawn: vertex (the GPU, in the draw's vertex shader), compute (the
    /// GPU, once per frame in a compute pass, into a buffer a plain vertex shader draws, as
    /// Unreal and Godot do; storage palette only) or cpu (the reference, uploaded). --split
    /// and the error colours show the GPU side this way. Also spelled --path (gpu = vertex).
    /// Rigs whose vertices have more than 8 influences are drawn from the CPU result.
    #[arg(long = "skin", alias = "path", value_parser = choice::<Skinning>(), default_value = "vertex")]
    who_skins: Skinning,
    /// The GPU's way alone (vertex or compute), as this flag said before --skin; with
    /// --skin cpu (or --path cpu) the CPU still draws.
    #[arg(long, value_parser = choice::<Skinning>())]
    skinning: Option<Skinning>,
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "640x480", allow_hyphen_values = true, value_parser = parse_size)]
    size: (u32, u32),
    /// Built-in humanoid only: run the whole CPU animation stage (walk→run cross-fade on the
    /// lower body, throw on the upper body, left-hand IK, bone links) up to --time and draw it.
    #[arg(long)]
    demo: bool,
    /// Native rigs (builtin:arm, builtin:humanoid, .rig.json): insert the bone links the rig's
    /// bones ask for (Weber, "Run-Time Skin Deformation": extra joints that share the rotation
    /// at elbows and knees).
    #[arg(long)]
    links: bool,
    #[command(flatten)]
    stage: StageArgs,
    /// Surface colour: material (base colour, texture, vertex colour), weights (of --bone),
    /// bones (every bone its own colour, blended by weight), error (per vertex, log scale:
    /// |GPU - CPU|, blue 1e-8, orange 1e-5, red 1e-4 of the model's diagonal; with --against
    /// MODE, |--blend - MODE| on the CPU, blue 1e-5, orange 1e-2, red 1e-1), diff (the same
    /// as error), submesh (the split into submeshes of at most --max-bones bones, each its
    /// own colour).
    #[arg(long, value_enum, default_value = "material")]
    color: ColorArg,
    /// --color error: compare --blend with this skinning mode (same normals settings) on the
    /// CPU, instead of the GPU with the CPU.
    #[arg(long, value_parser = choice::<SkinMode>())]
    against: Option<SkinMode>,
    /// Where the GPU skinning reads the joint matrices: storage (one buffer for the frame) or
    /// uniform (K matrices per draw, the model split into submeshes of at most K bones).
    /// Default: storage where the adapter reads storage buffers in the vertex stage, else
    /// uniform.
    #[arg(long, value_parser = choice::<PaletteSource>())]
    palette: Option<PaletteSource>,
    /// K: the model is split into submeshes of at most K bones, drawn with a uniform palette
    /// of K matrices (unless --palette storage) and shown by --color submesh (`skinview
    /// partition` prints the split's stats). Default with --palette uniform: 64.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(MIN_BONES as u64..=MAX_BONES as u64))]
    max_bones: Option<u64>,
    /// The bone --color weights shows, also highlighted by --skeleton: a joint name, the label
    /// `info` and the viewer show ("node 5"), or a node index.
    #[arg(long)]
    bone: Option<String>,
    #[command(flatten)]
    skeleton: super::args::SkeletonArgs,
    /// Draw the ground grid under the model.
    #[arg(long)]
    grid: bool,
    /// Draw the triangle edges over the faces.
    #[arg(long)]
    wireframe: bool,
    /// CPU reference (left) and GPU skinning (right) side by side under one camera.
    #[arg(long)]
    split: bool,
    /// Compare with another file of the same character (a converted, compressed or
    /// re-exported copy): the model (left) and FILE (right) at the same clip time (clips
    /// paired by name, then in order), side by side under one camera, coloured by the
    /// distance between paired vertices as `skinview diff` measures it; prints the largest
    /// and mean distance.
    #[arg(long, value_name = "FILE")]
    compare_with: Option<PathBuf>,
    /// Frame the model's skinned bounds over the whole clip (the animation stage and --demo:
    /// from 0 to --time) instead of at --time: renders of one clip at several times then share
    /// one camera.
    #[arg(long)]
    frame_clip: bool,
    /// A still of a crowd of N characters (1..=65536) on a grid, each cycling through the
    /// model's clips from its own phase at --time, animated by the crowd stage and drawn by
    /// the GPU (--skin vertex or compute) in their material colours; of the built-in humanoid
    /// when no MODEL is given.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=skinview::gpu::MAX_INSTANCES as i64))]
    crowd: Option<u32>,
    /// Output image: PNG (.png) or JPEG (.jpg, .jpeg), by the extension.
    #[arg(long)]
    out: PathBuf,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Base colour, texture and vertex colour.
    Material,
    /// The weights of --bone.
    Weights,
    /// Every bone its own colour, blended by weight.
    Bones,
    /// Per-vertex error: |GPU - CPU|, or |--blend - --against| on the CPU.
    Error,
    /// The same as error (|GPU - CPU| without --against).
    Diff,
    /// The partition into submeshes of at most K bones (--max-bones), each its own colour.
    Submesh,
}

pub fn run(a: RenderArgs) -> CliResult {
    check_flags(&a)?;
    let ctx = gpu()?;
    let palette = choose_source(&ctx, requested_palette(&a))?;
    let setup = setup(&a, &ctx, palette)?;
    let (mut c, anim, time) = character(&a, &setup)?;
    let skinning = skinning_path(&a, &c, palette)?;
    let error_against = a.against.map(|m| SkinOptions {
        mode: m,
        ..setup.skin
    });
    if let Some(other) = error_against {
        print_mode_difference(&c, other)?;
    }
    if let Some(n) = a.crowd {
        return render_crowd(&a, &ctx, &mut c, palette, skinning, (n, time));
    }
    let options = view_options(&a, &c, skinning, error_against)?;
    if let Some(file) = &a.compare_with {
        render_against_file(&a, &ctx, (&c, &setup), (anim, time), &options, file)?;
        return Ok(ExitCode::SUCCESS);
    }
    let frame_points = match a.frame_clip {
        true => Some(clip_frame_points(&a, &mut c, anim, time)?),
        false => None,
    };
    let submeshes = a.color == ColorArg::Submesh;
    let legend = skinview::view::legend::legend(&c, &options, submeshes);
    let (width, height) = a.size;
    let picture_h = annotate::picture_height(legend.as_ref(), width, height);
    let img = skinview::view::render_character_with(
        &ctx,
        &c,
        &options,
        palette,
        frame_points.as_deref(),
        (width, picture_h),
    )?;
    let split = options.split.then(|| skinning.describe());
    let img = annotate::annotate(img, legend.as_ref(), height, split).map_err(CliError::Usage)?;
    skinview::io::png::write(&img, &a.out)?;
    print_summary(&a, &c, &ctx, palette, skinning, anim, time);
    Ok(ExitCode::SUCCESS)
}

/// `--frame-clip`: the points to frame, over the clip's duration (the animation stage and
/// --demo: 0 to `time`, played again); the character is left at `time`.
fn clip_frame_points(
    a: &RenderArgs,
    c: &mut Character,
    anim: Option<usize>,
    time: f32,
) -> CliResult<Vec<glam::Vec3>> {
    use skinview::view::clip_frame_points as sweep;
    if a.demo || native_stage(a) {
        return Ok(sweep(c, time, true)?);
    }
    let duration = anim.map_or(0.0, |i| c.scene.animations[i].duration_s());
    let points = sweep(c, duration, false)?;
    c.update(time, 0.0)?;
    Ok(points)
}

/// The animation stage's flags (a native rig's layers, fade, IK or links).
fn native_stage(a: &RenderArgs) -> bool {
    a.links || a.stage.is_set()
}

/// The palette asked for by the flags (`None`: the adapter's choice).
fn requested_palette(a: &RenderArgs) -> Option<PaletteSource> {
    match (a.palette, a.max_bones) {
        (Some(PaletteSource::Storage), _) => Some(PaletteSource::Storage),
        (Some(PaletteSource::Uniform { .. }), k) | (None, k @ Some(_)) => {
            Some(PaletteSource::Uniform {
                bones: k.map_or(DEFAULT_UNIFORM_BONES, |k| k as u32),
            })
        }
        (None, None) => None,
    }
}

/// Flag combinations refused before the adapter opens (the set-up's own rules are
/// [`CharacterSetup::validate`]'s).
fn check_flags(a: &RenderArgs) -> CliResult<()> {
    if a.palette == Some(PaletteSource::Storage)
        && a.max_bones.is_some()
        && a.color != ColorArg::Submesh
    {
        return Err(CliError::Usage(
            "--max-bones with --palette storage only shows a split (--color submesh)".into(),
        ));
    }
    skinview::io::png::ImageFormat::of_path(&a.out).map_err(|_| {
        CliError::Usage(format!(
            "--out {}: the format is chosen by the extension: {}",
            a.out.display(),
            skinview::io::png::IMAGE_EXTENSIONS
        ))
    })?;
    let asks_split =
        a.max_bones.is_some() || matches!(a.palette, Some(PaletteSource::Uniform { .. }));
    if a.color == ColorArg::Submesh && !asks_split {
        return Err(CliError::Usage(
            "--color submesh shows a split: give its bone budget with --max-bones K".into(),
        ));
    }
    if a.demo {
        let humanoid = a.model.model.is_none()
            || ModelSource::from_arg(a.model.model.as_deref())?
                == ModelSource::Builtin(Builtin::Humanoid);
        if !humanoid || a.anim.is_some() || a.links {
            return Err(CliError::Usage(
                "--demo runs the built-in humanoid's own set-up: give no MODEL (or \
                 builtin:humanoid), no --anim and no --links"
                    .into(),
            ));
        }
        if a.stage.is_set() {
            return Err(CliError::Usage(
                "--demo has its own layers and IK; drop --layer/--fade/--ik".into(),
            ));
        }
    }
    a.skeleton.check()?;
    if a.compare_with.is_some() {
        check_compare_with(a)?;
    }
    if a.crowd.is_some() {
        check_crowd(a)?;
    }
    let against_needs_error = a.against.is_some() && !error_color(a);
    if against_needs_error {
        return Err(CliError::Usage(
            "--against compares two skinning modes in the error colours: add --color error".into(),
        ));
    }
    Ok(())
}

/// `--crowd`: the flags it cannot take (the crowd is drawn by the GPU, in material colours,
/// each character playing the model's clips).
fn check_crowd(a: &RenderArgs) -> CliResult<()> {
    let refused = [
        (a.split, "--split"),
        (a.compare_with.is_some(), "--compare-with"),
        (a.color != ColorArg::Material, "--color"),
        (a.against.is_some(), "--against"),
        (a.bone.is_some(), "--bone"),
        (a.wireframe, "--wireframe"),
        (a.frame_clip, "--frame-clip"),
        (a.demo, "--demo"),
        (a.stage.is_set(), "--layer/--fade/--ik"),
        (a.links, "--links"),
        (a.who_skins == Skinning::Cpu, "--skin cpu"),
    ];
    let skeleton = a.skeleton.given();
    if let Some((_, flag)) = refused.iter().chain(&skeleton).find(|(set, _)| *set) {
        return Err(CliError::Usage(format!(
            "--crowd draws a field of characters playing the model's clips, skinned by the \
             GPU in their material colours: drop {flag}"
        )));
    }
    Ok(())
}

/// `render --crowd N`: the still of the crowd at `time` (s), written to `--out`.
fn render_crowd(
    a: &RenderArgs,
    ctx: &GpuContext,
    c: &mut Character,
    palette: PaletteSource,
    skinning: Skinning,
    (n, time): (u32, f32),
) -> CliResult {
    let still = skinview::view::crowd::CrowdStill {
        instances: n,
        size: a.size,
        time_s: time,
        palette,
        skinning,
        camera: None,
        cull: true,
    };
    let (img, stats) = skinview::view::crowd::render_crowd(ctx, c, &still)?;
    skinview::io::png::write(&img, &a.out)?;
    println!(
        "{}: a crowd of {n} ({} in view) at {time:.3} s ({} cycling), {} palette, {} -> {}",
        c.scene.name,
        stats.visible,
        skinview::info::count(c.scene.animations.len(), "clip", "clips"),
        palette.describe(),
        skinning.describe(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `--compare-with`: the flags it cannot take. The picture's colours are the distance, the
/// other file plays the paired clip, and both are drawn on the storage palette, whole.
fn check_compare_with(a: &RenderArgs) -> CliResult<()> {
    let clash = [
        (a.split, "--split"),
        (a.against.is_some(), "--against"),
        (
            a.demo || native_stage(a),
            "--demo, --links, --layer, --fade and --ik",
        ),
        (a.frame_clip, "--frame-clip"),
        (a.max_bones.is_some(), "--max-bones"),
        (
            matches!(a.palette, Some(PaletteSource::Uniform { .. })),
            "--palette uniform",
        ),
        (
            !matches!(
                a.color,
                ColorArg::Material | ColorArg::Error | ColorArg::Diff
            ),
            "--color other than the distance",
        ),
    ];
    if a.size.0 < 2 {
        return Err(CliError::Usage(format!(
            "--size {}x{}: --compare-with draws two halves side by side, so the width is at \
             least 2",
            a.size.0, a.size.1
        )));
    }
    match clash.iter().find(|(set, _)| *set) {
        Some((_, flags)) => Err(CliError::Usage(format!(
            "--compare-with colours both files by the distance between them, each playing a \
             clip whole on the storage palette: it does not take {flags}"
        ))),
        None => Ok(()),
    }
}

/// `render --compare-with FILE`: the model (left) and `file` (right) at the character's time,
/// under one camera framing both, coloured by the distance between paired vertices; the
/// figures printed.
fn render_against_file(
    a: &RenderArgs,
    ctx: &GpuContext,
    (c, setup): (&Character, &CharacterSetup),
    (anim, time_s): (Option<usize>, f32),
    options: &ViewOptions,
    file: &std::path::Path,
) -> CliResult<()> {
    use skinview::diff::against::OtherFile;
    if !ctx.storage_palette() {
        return Err(CliError::Usage(format!(
            "--compare-with draws both files on the storage palette, which {} cannot run",
            ctx.info.name
        )));
    }
    let model = ModelSource::from_arg(Some(file))?.load_with(a.model.import_options())?;
    model.refuse_as_output(&a.out)?;
    let label = file.display().to_string();
    let mut other = OtherFile::new(&label, model.scene, c, setup, anim)?;
    other.follow(c, setup, 0, anim, time_s)?;
    let stats = other.pairing().map(|p| p.matching.stats);
    let Some(stats) = stats.filter(|_| other.unpaired().is_none()) else {
        return Err(CliError::Usage(format!(
            "--compare-with {label}: none of its {} vertices lies within {:.2e} (the match \
             radius) of the model's in the rest pose: not a copy of the same character",
            other.scene.vertex_count(),
            other.pairing().map_or(0.0, |p| p.matching.stats.radius),
        )));
    };
    let diagonal = other.diagonal();
    let points: Vec<glam::Vec3> = [&c.outputs, &other.character.outputs]
        .into_iter()
        .flatten()
        .flat_map(|o| o.positions.iter().copied())
        .collect();
    let legend = skinview::view::legend::distance_legend("|A − B| / diagonal");
    let (width, height) = a.size;
    let picture_h = annotate::picture_height(Some(&legend), width, height);
    let left_w = width.div_ceil(2);
    let render = skinview::view::render_distances;
    let left = render(
        ctx,
        c,
        (&other.distances_a, diagonal),
        options,
        Some(&points),
        (left_w, picture_h),
    )?;
    let b = &other.character;
    let b_options = ViewOptions {
        skinning: Skinning::Cpu,
        selected_node: None,
        ..*options
    };
    let right_size = (width - left_w, picture_h);
    let right = render(
        ctx,
        b,
        (&other.distances_b, diagonal),
        &b_options,
        Some(&points),
        right_size,
    )?;
    let image = skinview::image::Rgba8::side_by_side(&left, &right)
        .ok_or_else(|| CliError::Usage("--compare-with: the halves differ in height".into()))?;
    let caption = format!(
        "{} at {time_s:.3} s: largest {:.2e} of the diagonal",
        super::args::describe_anim(&c.scene, anim),
        other.now.max / diagonal
    );
    let names = [format!("A: {}", c.scene.name), format!("B: {label}")];
    let image = annotate::annotate_pair(image, (left_w, height), &names, &caption, &legend)
        .map_err(CliError::Usage)?;
    skinview::io::png::write(&image, &a.out)?;
    let unmatched = match (stats.a_unmatched, stats.b_unmatched) {
        (0, 0) => String::new(),
        (a, b) => format!(
            " ({a} of A's {} and {b} of B's {} vertices unmatched, drawn grey)",
            stats.a_vertices, stats.b_vertices
        ),
    };
    if 2 * stats.a_unmatched > stats.a_vertices {
        println!(
            "note: most of the model's vertices have no partner in {label}: is it a copy of the \
             same character?"
        );
    }
    println!(
        "{} vs {label}: {} at t = {time_s:.3} s, vertices paired by {}{unmatched}: largest \
         distance {:.3e} ({:.2e} of the diagonal), mean {:.3e} -> {} ({width}x{height}) on {}",
        c.scene.name,
        super::args::describe_anim(&c.scene, anim),
        stats.method.name(),
        other.now.max,
        other.now.max / diagonal,
        other.now.mean,
        a.out.display(),
        ctx.describe()
    );
    Ok(())
}

/// `--color error` or its synonym `--color diff`.
fn error_color(a: &RenderArgs) -> bool {
    matches!(a.color, ColorArg::Error | ColorArg::Diff)
}

/// The character's set-up from the flags, once the adapter's palette is known. The motion is
/// filled in by [`character`] (it needs the model).
fn setup(a: &RenderArgs, ctx: &GpuContext, palette: PaletteSource) -> CliResult<CharacterSetup> {
    // The bone budget of the split drawn: the uniform palette's K, or --max-bones.
    let split_k = match palette {
        PaletteSource::Uniform { bones } => Some(bones as usize),
        PaletteSource::Storage => a.max_bones.map(|k| k as usize),
    };
    if split_k.is_some() && requested_palette(a).is_none() && (a.demo || native_stage(a)) {
        return Err(CliError::Usage(format!(
            "the animation stage (--demo, --links, --layer, --fade, --ik) rewrites the weights \
             every frame and needs the storage palette, which {} cannot run",
            ctx.info.name
        )));
    }
    let motion = if a.demo || native_stage(a) {
        // Filled in with the model; the split rule (7) is checked on the real spec.
        Motion::Stage(CharacterSpec::single(None))
    } else {
        Motion::Rest
    };
    let setup = CharacterSetup {
        motion,
        looping: false,
        split: split_k.map(|max_bones| SplitSpec {
            max_bones,
            uniform_palette: matches!(palette, PaletteSource::Uniform { .. }),
            color_submeshes: a.color == ColorArg::Submesh,
        }),
        max_influences: None,
        skin: a.skin.options(),
    };
    setup.validate()?;
    Ok(setup)
}

/// Load the model, build its character from `setup` and play it to the time asked for.
/// Returns the character, the clip played and the time.
fn character(a: &RenderArgs, setup: &CharacterSetup) -> CliResult<(Character, Option<usize>, f32)> {
    if a.demo {
        let time = a.time.unwrap_or(1.0);
        let model = ModelSource::Builtin(Builtin::Humanoid).load()?;
        let demo = CharacterSetup {
            motion: CharacterSetup::humanoid_demo().motion,
            ..setup.clone()
        };
        let mut c = model.character(&demo)?;
        c.play_to(time)?;
        return Ok((c, None, time));
    }
    // A crowd with no MODEL is one of the humanoid (as `view --crowd` and the web page's
    // `?crowd=N` show), not of the arm every other still defaults to.
    let default = match a.crowd {
        Some(_) => ModelSource::Builtin(Builtin::Humanoid),
        None => ModelSource::DEFAULT,
    };
    let model = a.model.load_writing_or(default, &[Some(&a.out)])?;
    let anim = parse_anim(&model, a.anim.as_deref())?;
    let time = a
        .time
        .unwrap_or_else(|| anim.map_or(0.0, |i| model.scene.animations[i].duration_s() * 0.5));
    if native_stage(a) {
        let stage = CharacterSetup {
            motion: Motion::Stage(a.stage.spec(anim, a.links)),
            ..setup.clone()
        };
        let mut c = model.character(&stage)?;
        c.play_to(stage_time(a, time))?;
        return Ok((c, anim, stage_time(a, time)));
    }
    if !time.is_finite() {
        return Err(CliError::Usage(format!(
            "--time {time}: not a finite number"
        )));
    }
    let clip = CharacterSetup {
        motion: anim.map_or(Motion::Rest, Motion::Clip),
        ..setup.clone()
    };
    let mut c = clip.build(&model.scene)?;
    if let Some(s) = &c.split {
        println!(
            "{}: {} of at most {} bones ({} dropped to fit)",
            model.scene.name,
            count(s.submeshes, "submesh", "submeshes"),
            clip.split.map_or(0, |s| s.max_bones),
            count(s.dropped_influences, "influence", "influences")
        );
    }
    if let Some(i) = anim {
        super::args::note_time_outside(&c.scene, i, &[time]);
    }
    c.update(time, 0.0)?;
    Ok((c, anim, time))
}

/// The time the animation stage plays to: it plays from 0 at 60 Hz, so a default time past
/// its limit (a clip that lasts longer) is brought to the limit, with a note; a given --time
/// is checked by the stage.
fn stage_time(a: &RenderArgs, time: f32) -> f32 {
    let max = skinview::character::MAX_PLAY_S;
    if a.time.is_none() && time > max {
        println!(
            "note: the clip's middle, {time} s, is past the {max} s the animation stage plays \
             to; rendering at {max} s"
        );
        max
    } else {
        time
    }
}

/// Who skins the drawn result: the GPU as --skinning says, or the CPU (asked for, or because
/// the rig has more influences than the GPU path blends).
fn skinning_path(a: &RenderArgs, c: &Character, palette: PaletteSource) -> CliResult<Skinning> {
    let skinning = match (a.who_skins, a.skinning) {
        (Skinning::Cpu, _) => Skinning::Cpu,
        (_, Some(gpu)) => gpu,
        (skin, None) => skin,
    };
    if skinning != Skinning::Cpu {
        check_gpu_skinning(skinning, palette, "the CPU reference is --skin cpu")?;
    }
    if skinview::view::gpu_can_skin(c) {
        return Ok(skinning);
    }
    let widest = c.scene.max_influences();
    if a.split || (error_color(a) && a.against.is_none()) {
        return Err(CliError::Usage(format!(
            "vertices with {widest} influences: the GPU path blends at most \
             {GPU_MAX_INFLUENCES}, so --split and --color diff cannot run on this rig"
        )));
    }
    if skinning != Skinning::Cpu {
        println!(
            "note: vertices with {widest} influences, more than the GPU path's \
             {GPU_MAX_INFLUENCES}: drawn from the CPU result"
        );
    }
    Ok(Skinning::Cpu)
}

/// `--against MODE`: what the error colours show, in numbers.
fn print_mode_difference(c: &Character, other: SkinOptions) -> CliResult<()> {
    let against = c.skin_current_with(other)?;
    let e = skinview::skin::VertexErrors::between(&c.outputs, &against);
    println!(
        "{} vs {}: largest vertex distance {:.3e} ({:.2e} of the diagonal), mean {:.3e}",
        c.skin_options(0).describe(),
        other.describe(),
        e.max,
        e.max / e.diagonal,
        e.mean
    );
    Ok(())
}

/// What the picture shows: colours, overlays, the bone, who skins.
fn view_options(
    a: &RenderArgs,
    c: &Character,
    skinning: Skinning,
    error_against: Option<SkinOptions>,
) -> CliResult<ViewOptions> {
    let selected_node = match &a.bone {
        Some(name) => Some(c.scene.find_node(name)?),
        None if a.color == ColorArg::Weights => {
            return Err(CliError::Usage(
                "--color weights shows one bone's weights: name it with --bone NAME (`skinview \
                 info` lists the joints)"
                    .into(),
            ));
        }
        None => None,
    };
    Ok(ViewOptions {
        color_mode: match a.color {
            ColorArg::Material | ColorArg::Submesh => ColorMode::Material,
            ColorArg::Weights => ColorMode::Weights,
            ColorArg::Bones => ColorMode::Bones,
            ColorArg::Error | ColorArg::Diff => ColorMode::Errors,
        },
        selected_node,
        skeleton: a.skeleton.skeleton.is_some(),
        bone_style: a.skeleton.skeleton.unwrap_or(BoneStyle::Octahedral),
        hide_unweighted_bones: a.skeleton.hide_unweighted_bones,
        rest_pose: a.skeleton.rest_pose,
        bind_pose: a.skeleton.bind_pose,
        grid: a.grid,
        wireframe: a.wireframe,
        skinning,
        split: a.split,
        error_against,
    })
}

/// The lines `render` prints after writing the picture.
fn print_summary(
    a: &RenderArgs,
    c: &Character,
    ctx: &GpuContext,
    palette: PaletteSource,
    skinning: Skinning,
    anim: Option<usize>,
    time: f32,
) {
    let (width, height) = a.size;
    if a.demo {
        println!(
            "humanoid demo at t = {time:.3} s: left-hand IK {} -> {} ({width}x{height}) on {}",
            super::args::describe_ik(&c.ik_result),
            a.out.display(),
            ctx.describe()
        );
    } else {
        println!(
            "{}: {} at t = {time:.3} s, {} skinning ({}), joint matrices in a {} -> {} \
             ({width}x{height}) on {}",
            c.scene.name,
            if a.stage.is_set() {
                "the animation stage (the --layer motions)".to_string()
            } else {
                super::args::describe_anim(&c.scene, anim)
            },
            skinning.describe(),
            c.skin_options(0).describe(),
            palette.describe(),
            a.out.display(),
            ctx.describe()
        );
    }
    if native_stage(a) {
        let count = skinview::info::count;
        println!(
            "  {}, {}, {}",
            count(
                c.links.as_ref().map_or(0, |l| l.links.len()),
                "bone link",
                "bone links"
            ),
            count(c.layers().len(), "motion layer", "motion layers"),
            count(
                c.ik.as_ref().map_or(0, |i| i.effectors.len()),
                "IK effector",
                "IK effectors"
            )
        );
    }
    if let Some(s) = &c.link_stats {
        println!(
            "  links moved weight on {} vertices ({} forks, {} faded); max influences {} -> {}",
            s.vertices_changed,
            s.fork_vertices,
            s.faded_vertices,
            s.max_influences_before,
            s.max_influences_after,
        );
    }
}
