//! `skinview render`: an offscreen lit render to PNG of a model at a time, skinned on the GPU
//! or by the CPU reference, optionally through the whole animation stage of a native rig.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use skinview::builtin::Builtin;
use skinview::character::Character;
use skinview::gpu::{
    ColorMode, DEFAULT_UNIFORM_BONES, GPU_MAX_INFLUENCES, PaletteSource, Skinning, choose_source,
};
use skinview::io::ModelSource;
use skinview::partition::{MAX_BONES, MIN_BONES, PartitionedScene};
use skinview::view::ViewOptions;

use super::args::{
    GpuSkinningArg, ModeArg, ModelArg, PaletteArg, SkinArgs, StageArgs, parse_anim, parse_size,
};
use super::{CliError, CliResult, gpu};
use skinview::skin::SkinOptions;

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
    /// Which skinning result to draw: gpu (skinned as --skinning says) or cpu (reference,
    /// uploaded).
    /// Rigs whose vertices have more than 8 influences are drawn from the CPU result.
    #[arg(long, value_enum, default_value = "gpu")]
    path: SkinningArg,
    /// How the GPU skins (the GPU result, and the right half of --split): vertex (in the
    /// draw's vertex shader) or compute (once per frame in a compute pass, into a buffer a
    /// plain vertex shader draws, as Unreal and Godot do; storage palette only).
    #[arg(long, value_enum, default_value = "vertex")]
    skinning: GpuSkinningArg,
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
    /// MODE, |--mode - MODE| on the CPU, blue 1e-5, orange 1e-2, red 1e-1), diff (the same
    /// as error), submesh (the split into submeshes of at most --max-bones bones, each its
    /// own colour).
    #[arg(long, value_enum, default_value = "material")]
    color: ColorArg,
    /// --color error: compare --mode with this skinning mode (same normals settings) on the
    /// CPU, instead of the GPU with the CPU.
    #[arg(long, value_enum)]
    against: Option<ModeArg>,
    /// Where the GPU skinning reads the joint matrices: storage (one buffer for the frame) or
    /// uniform (K matrices per draw, the model split into submeshes of at most K bones).
    /// Default: storage where the adapter reads storage buffers in the vertex stage, else
    /// uniform.
    #[arg(long, value_enum)]
    palette: Option<PaletteArg>,
    /// K: the model is split into submeshes of at most K bones, drawn with a uniform palette
    /// of K matrices (unless --palette storage) and shown by --color submesh (`skinview
    /// partition` prints the split's stats). Default with --palette uniform: 64.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(MIN_BONES as u64..=MAX_BONES as u64))]
    max_bones: Option<u64>,
    /// The bone (node name) --color weights shows; also highlighted by --skeleton.
    #[arg(long)]
    bone: Option<String>,
    /// Draw the skeleton in front of the mesh: bones along their length, joint axes.
    #[arg(long)]
    skeleton: bool,
    /// Draw the ground grid under the model.
    #[arg(long)]
    grid: bool,
    /// Draw the triangle edges over the faces.
    #[arg(long)]
    wireframe: bool,
    /// CPU reference (left) and GPU skinning (right) side by side under one camera.
    #[arg(long)]
    split: bool,
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
    /// Per-vertex error: |GPU - CPU|, or |--mode - --against| on the CPU.
    Error,
    /// The same as error (|GPU - CPU| without --against).
    Diff,
    /// The partition into submeshes of at most K bones (--max-bones), each its own colour.
    Submesh,
}

/// `--path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SkinningArg {
    /// The WGSL vertex shader.
    Gpu,
    /// The CPU reference.
    Cpu,
}

pub fn run(a: RenderArgs) -> CliResult {
    let (width, height) = a.size;
    let native_stage = a.links || a.stage.is_set();
    let requested = match (a.palette, a.max_bones) {
        (Some(PaletteArg::Storage), _) => Some(PaletteSource::Storage),
        (Some(PaletteArg::Uniform), k) | (None, k @ Some(_)) => Some(PaletteSource::Uniform {
            bones: k.map_or(DEFAULT_UNIFORM_BONES, |k| k as u32),
        }),
        (None, None) => None,
    };
    if a.palette == Some(PaletteArg::Storage)
        && a.max_bones.is_some()
        && a.color != ColorArg::Submesh
    {
        return Err(CliError::Usage(
            "--max-bones with --palette storage only shows a split (--color submesh)".into(),
        ));
    }
    // Usage errors that do not depend on the adapter come before it is opened.
    skinview::io::png::ImageFormat::of_path(&a.out).map_err(|_| {
        CliError::Usage(format!(
            "--out {}: the format is chosen by the extension: {}",
            a.out.display(),
            skinview::io::png::IMAGE_EXTENSIONS
        ))
    })?;
    let asks_split = a.max_bones.is_some() || a.palette == Some(PaletteArg::Uniform);
    if a.color == ColorArg::Submesh && !asks_split {
        return Err(CliError::Usage(
            "--color submesh shows a split: give its bone budget with --max-bones K".into(),
        ));
    }
    if asks_split && (a.demo || native_stage) {
        return Err(CliError::Usage(
            "--max-bones and --palette uniform draw the model split by its stored weights; the \
             animation stage (--demo, --links, --layer, --fade, --ik) rewrites them every frame \
             and needs the storage palette"
                .into(),
        ));
    }
    let ctx = gpu()?;
    let palette = choose_source(&ctx, requested)?;
    // The bone budget of the split drawn: the uniform palette's K, or --max-bones.
    let split_k = match palette {
        PaletteSource::Uniform { bones } => Some(bones as usize),
        PaletteSource::Storage => a.max_bones.map(|k| k as usize),
    };
    if a.color == ColorArg::Submesh && split_k.is_none() {
        return Err(CliError::Usage(
            "--color submesh shows a split: give its bone budget with --max-bones K".into(),
        ));
    }
    if split_k.is_some() && (a.demo || native_stage) {
        return Err(CliError::Usage(format!(
            "the {} draws the model split by its stored weights; the animation stage (--demo, \
             --links, --layer, --fade, --ik) rewrites them every frame and needs the storage \
             palette{}",
            if palette == PaletteSource::Storage {
                "--color submesh view".to_string()
            } else {
                palette.describe()
            },
            if ctx.storage_palette() {
                String::new()
            } else {
                format!(", which {} cannot run", ctx.info.name)
            }
        )));
    }
    let (mut c, anim, time) = if a.demo {
        let source = ModelSource::from_arg(a.model.model.as_deref())?;
        let humanoid = a.model.model.is_none() || source == ModelSource::Builtin(Builtin::Humanoid);
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
        let time = a.time.unwrap_or(1.0);
        let mut c = Character::humanoid_demo()?;
        c.play_to(time)?;
        (c, None, time)
    } else {
        let model = a.model.load_writing(&[Some(&a.out)])?;
        let anim = parse_anim(&model, a.anim.as_deref())?;
        let time = a
            .time
            .unwrap_or_else(|| anim.map_or(0.0, |i| model.scene.animations[i].duration_s() * 0.5));
        if native_stage {
            let rig = model.rig.as_ref().ok_or_else(|| {
                CliError::Usage(
                    "--links/--layer/--fade/--ik need a native rig (builtin:arm, \
                     builtin:humanoid or a .rig.json)"
                        .into(),
                )
            })?;
            let mut c = Character::from_rig(&rig.scene, &a.stage.spec(anim, a.links))?;
            // The stage plays from 0 at 60 Hz: a default time past its limit (a clip that
            // lasts longer) is brought to the limit, with a note; a given --time is checked.
            let time = if a.time.is_none() && time > skinview::character::MAX_PLAY_S {
                println!(
                    "note: the clip's middle, {time} s, is past the {} s the animation stage \
                     plays to; rendering at {} s",
                    skinview::character::MAX_PLAY_S,
                    skinview::character::MAX_PLAY_S
                );
                skinview::character::MAX_PLAY_S
            } else {
                time
            };
            c.play_to(time)?;
            (c, anim, time)
        } else {
            if !time.is_finite() {
                return Err(CliError::Usage(format!(
                    "--time {time}: not a finite number"
                )));
            }
            let scene = match split_k {
                Some(k) => {
                    let mut part = PartitionedScene::new(&model.scene, k)?;
                    if a.color == ColorArg::Submesh {
                        part.color_submeshes();
                    }
                    println!(
                        "{}: {} submeshes of at most {k} bones ({} influences dropped to fit)",
                        model.scene.name,
                        part.submesh_count(),
                        part.dropped_influences()
                    );
                    part.scene
                }
                None => model.scene,
            };
            if let Some(i) = anim {
                super::args::note_time_outside(&scene, i, &[time]);
            }
            let mut c = Character::from_scene(scene, anim, false)?;
            c.update(time, 0.0)?;
            (c, anim, time)
        }
    };
    let skin = a.skin.options();
    if skin != SkinOptions::default() {
        // Skin this frame again in the mode asked for (the GPU upload follows the character).
        c.set_skin_options(skin);
        c.update(time, 0.0)?;
    }
    let widest = c.scene.max_influences();
    let gpu_can_skin = skinview::view::gpu_can_skin(&c);
    a.skinning.check(palette)?;
    let mut skinning = match a.path {
        SkinningArg::Gpu => a.skinning.skinning(),
        SkinningArg::Cpu => Skinning::Cpu,
    };
    let error_color = matches!(a.color, ColorArg::Error | ColorArg::Diff);
    if a.against.is_some() && !error_color {
        return Err(CliError::Usage(
            "--against compares two skinning modes in the error colours: add --color error".into(),
        ));
    }
    let needs_gpu = a.split || (error_color && a.against.is_none());
    if !gpu_can_skin {
        if needs_gpu {
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
            skinning = Skinning::Cpu;
        }
    }
    let error_against = a.against.map(|m| SkinOptions {
        mode: m.mode(),
        ..skin
    });
    if let Some(other) = error_against {
        // What the picture shows, in numbers.
        let against = c.skin_current_with(other)?;
        let mut d = Vec::new();
        skinview::gpu::vertex_errors(&c.outputs, &against, &mut d);
        let diagonal = skinview::skin::bounds(&c.outputs)
            .map_or(1.0, |(lo, hi)| (hi - lo).length().max(1e-12));
        let worst = d.iter().copied().fold(0.0f32, f32::max);
        let mean = d.iter().sum::<f32>() / d.len().max(1) as f32;
        println!(
            "{} vs {}: largest vertex distance {:.3e} ({:.2e} of the diagonal), mean {:.3e}",
            skin.describe(),
            other.describe(),
            worst,
            worst / diagonal,
            mean
        );
    }
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
    let options = ViewOptions {
        color_mode: match a.color {
            ColorArg::Material => ColorMode::Material,
            ColorArg::Weights => ColorMode::Weights,
            ColorArg::Bones => ColorMode::Bones,
            ColorArg::Error | ColorArg::Diff => ColorMode::Errors,
            ColorArg::Submesh => ColorMode::Material,
        },
        selected_node,
        skeleton: a.skeleton,
        grid: a.grid,
        wireframe: a.wireframe,
        skinning,
        split: a.split,
        error_against,
    };
    let img = skinview::view::render_character_with(&ctx, &c, &options, palette, width, height)?;
    skinview::io::png::write(&img, &a.out)?;
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
            skin.describe(),
            palette.describe(),
            a.out.display(),
            ctx.describe()
        );
    }
    if native_stage {
        let count = skinview::info::count;
        println!(
            "  {}, {}, {}",
            count(
                c.links.as_ref().map_or(0, |l| l.links.len()),
                "bone link",
                "bone links"
            ),
            count(c.layers.len(), "motion layer", "motion layers"),
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
    Ok(ExitCode::SUCCESS)
}
