//! `skinview` command line: inspect, render, compare and dump skinned glTF models.
//! With no MODEL every command uses the built-in rig Woodland's arm, except `bench`, which
//! runs the built-in humanoid through every animation stage.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use skinview::gpu::{GpuContext, RenderSettings};
use skinview::harness::{self, SkinPath};
use skinview::{Error, Result, Scene};

#[derive(Parser)]
#[command(
    name = "skinview",
    version,
    about = "GPU skinning renderer and CPU/GPU skinning comparison for glTF rigs",
    long_about = "\
GPU skinning renderer and CPU vs GPU skinning comparison for glTF 2.0 rigs.

Every command takes an optional MODEL: a .gltf/.glb file, a native Weber rig (.rig.json), or a
built-in rig (builtin:arm, builtin:humanoid). Without one it uses the built-in rig Woodland's
arm: two bones with a generated skin, animated to bend 0 -> 120 degrees (`bench` uses the
built-in humanoid instead).

GPU work runs headless through wgpu; on machines without a GPU install Mesa's software
Vulkan driver (Debian: mesa-vulkan-drivers). WGPU_BACKEND=vulkan|gl picks a backend."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Skins, joints, primitives, vertices, influences, morph targets, animations, repairs.
    Info(InfoArgs),
    /// Offscreen lit render to PNG, the camera framing the skinned bounds.
    Render(RenderArgs),
    /// CPU vs GPU skinning over N frames of every animation; exit 1 above tolerance.
    Compare(CompareArgs),
    /// World-space skinned positions/normals at given times as JSON (the exchange format).
    Dump(DumpArgs),
    /// Write the model as binary glTF (.glb), or a native rig as .rig.json (by --out extension).
    Export(ExportArgs),
    /// Per-stage CPU timing (sample, layer, IK, links, palette, skin, normals), medians over
    /// many frames. No MODEL = the built-in humanoid with layers, IK and bone links.
    Bench(BenchArgs),
}

/// The CPU animation stage for a native rig (layers, cross-fade, IK); see `skinview::character`.
#[derive(Args, Clone, Default)]
struct StageArgs {
    /// Motion layer MOTION[:MASK[:WEIGHT]] (repeatable): MOTION is a name or index, MASK is `all`,
    /// BONE (its subtree) or !BONE (all but its subtree). E.g. --layer run:!spine --layer throw:spine
    #[arg(long = "layer")]
    layers: Vec<skinview::character::LayerArg>,
    /// Cross-fade FROM_LAYER:TO_LAYER:START_S:DURATION_S between two --layer entries (0-based).
    #[arg(long)]
    fade: Option<skinview::character::FadeArg>,
    /// IK effector END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT] (repeatable): the end bone's tip reaches
    /// the model-space target, within the rig's joint limits.
    #[arg(long = "ik")]
    ik: Vec<skinview::character::IkArg>,
}

impl StageArgs {
    fn is_set(&self) -> bool {
        !self.layers.is_empty() || self.fade.is_some() || !self.ik.is_empty()
    }

    /// The spec for a native rig: the given layers, or one full-body layer of `anim`.
    fn spec(&self, anim: Option<usize>, links: bool) -> skinview::character::CharacterSpec {
        let mut spec = skinview::character::CharacterSpec::single(&anim.unwrap_or(0).to_string());
        if !self.layers.is_empty() {
            spec.layers = self.layers.clone();
        } else if anim.is_none() {
            spec.layers.clear();
        }
        spec.fade = self.fade;
        spec.ik = self.ik.clone();
        spec.links = links;
        spec
    }
}

/// Play a character from t = 0 to `time_s` at 60 Hz (incremental IK needs its history).
fn play_to(c: &mut skinview::character::Character, time_s: f32) -> Result<()> {
    const MAX_PLAY_S: f32 = 600.0;
    if !(0.0..=MAX_PLAY_S).contains(&time_s) {
        return Err(Error::Usage(format!(
            "--time {time_s} must be between 0 and {MAX_PLAY_S} s when the animation stage runs"
        )));
    }
    let dt = 1.0 / 60.0;
    let steps = (time_s / dt).floor() as usize;
    for i in 0..=steps {
        c.update((i as f32 * dt).min(time_s), dt)?;
    }
    c.update(time_s, dt)?;
    Ok(())
}

#[derive(Args)]
struct BenchArgs {
    /// Model: .gltf/.glb, native .rig.json, or builtin:arm / builtin:humanoid (default: the
    /// built-in humanoid with layers, IK and bone links).
    model: Option<PathBuf>,
    /// Animation to play on a model file (ignored for the built-in humanoid demo).
    #[arg(long)]
    anim: Option<String>,
    /// Frames to time (after 10 warm-up frames); the medians are printed.
    #[arg(long, default_value_t = 600)]
    frames: usize,
    /// Write {"model","joints","vertices","stages_us":{...},"frame_us"} here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Native rigs: insert the bone links the rig's bones ask for.
    #[arg(long)]
    links: bool,
    #[command(flatten)]
    stage: StageArgs,
}

#[derive(Args)]
struct ExportArgs {
    /// Model: .gltf/.glb, native .rig.json, or builtin:arm / builtin:humanoid (default: the arm).
    model: Option<PathBuf>,
    /// Joint index type.
    #[arg(long, value_enum, default_value = "u16")]
    joints: JointsArg,
    /// Weight type.
    #[arg(long, value_enum, default_value = "f32")]
    weights: WeightsArg,
    /// Output: FILE.glb (binary glTF), or FILE.rig.json for a native rig.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum JointsArg {
    U8,
    U16,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum WeightsArg {
    F32,
    Unorm8,
    Unorm16,
}

#[derive(Args)]
struct InfoArgs {
    /// .gltf/.glb, .rig.json, or builtin:arm / builtin:humanoid; omitted = built-in Woodland arm.
    model: Option<PathBuf>,
}

#[derive(Args)]
struct RenderArgs {
    /// Model: .gltf/.glb, native .rig.json, or builtin:arm / builtin:humanoid (default: the arm).
    model: Option<PathBuf>,
    /// Animation index, or "none" for the rest pose. Default: 0 when the model has one.
    #[arg(long)]
    anim: Option<String>,
    /// Time in seconds. Default: the middle of the animation.
    #[arg(long)]
    time: Option<f32>,
    /// Which skinning result to draw: cpu (reference, uploaded) or gpu (vertex shader).
    #[arg(long, value_enum, default_value = "gpu")]
    path: SkinPath,
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "640x480")]
    size: String,
    /// Built-in humanoid only: run the whole CPU animation stage (walk→run cross-fade on the
    /// lower body, throw on the upper body, left-hand IK, bone links) up to --time and draw it.
    #[arg(long)]
    demo: bool,
    /// Native rigs (builtin:arm, builtin:humanoid, .rig.json): insert the bone links the rig's
    /// bones ask for (seed 000 §9) and draw the CPU-skinned result.
    #[arg(long)]
    links: bool,
    #[command(flatten)]
    stage: StageArgs,
    /// Output PNG.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct CompareArgs {
    /// Model: .gltf/.glb, native .rig.json, or builtin:arm / builtin:humanoid (default: the arm).
    model: Option<PathBuf>,
    /// Only this animation (index or "none"); default: every animation.
    #[arg(long)]
    anim: Option<String>,
    /// Frames per animation, evenly spaced over its duration, both ends included.
    #[arg(long, default_value_t = 16)]
    frames: usize,
    /// Reduce every vertex to its K largest weights (renormalised) on both paths and report
    /// what that costs against the full CPU reference. 1..=64.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    max_influences: Option<usize>,
    /// Also write the full comparison as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct DumpArgs {
    /// Model: .gltf/.glb, native .rig.json, or builtin:arm / builtin:humanoid (default: the arm).
    model: Option<PathBuf>,
    /// Animation index, or "none" for the rest pose (node weights still apply).
    /// Default: 0 when the model has an animation.
    #[arg(long)]
    anim: Option<String>,
    /// Times in seconds (repeat the flag for several).
    #[arg(long = "time", required = true)]
    times: Vec<f32>,
    /// Which skinning to dump: cpu (the reference) or gpu (capture-shader readback).
    #[arg(long, value_enum, default_value = "cpu")]
    path: SkinPath,
    /// Reduce every vertex to its K largest weights (renormalised) first. 1..=64.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    max_influences: Option<usize>,
    /// Output JSON file.
    #[arg(long)]
    out: PathBuf,
}

fn parse_anim(scene: &Scene, arg: Option<&str>) -> Result<Option<usize>> {
    match arg {
        None => Ok(if scene.animations.is_empty() {
            None
        } else {
            Some(0)
        }),
        Some("none") => Ok(None),
        Some(s) => {
            let i: usize = s.parse().map_err(|_| {
                Error::Usage(format!("--anim must be an index or \"none\", not {s:?}"))
            })?;
            if i >= scene.animations.len() {
                return Err(Error::Usage(format!(
                    "--anim {i}: {} has {} animation(s)",
                    scene.name,
                    scene.animations.len()
                )));
            }
            Ok(Some(i))
        }
    }
}

fn parse_size(s: &str) -> Result<(u32, u32)> {
    let bad = || Error::Usage(format!("--size must look like 640x480, not {s:?}"));
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

fn info(scene: &Scene) {
    println!("model: {}", scene.name);
    println!("nodes: {}", scene.nodes.len());
    println!("skins: {}", scene.skins.len());
    for (i, s) in scene.skins.iter().enumerate() {
        println!(
            "  skin {i} {:?}: {} joints",
            s.name.as_deref().unwrap_or(""),
            s.joints.len()
        );
    }
    println!("draws (node, mesh, primitive): {}", scene.draws.len());
    for d in &scene.draws {
        let p = scene.primitive(d);
        let node = &scene.nodes[d.node];
        let (sets, infl) = p
            .skin_weights
            .as_ref()
            .map_or((0, 0), |w| (w.width / 4, w.max_influences()));
        println!(
            "  node {} {:?} mesh {} prim {}: {} vertices, {} indices ({:?}), skin {}, weight sets {sets}, max influences {infl}, morph targets {}, normals {}, tangents {}",
            node.source_index,
            node.name.as_deref().unwrap_or(""),
            d.mesh,
            d.primitive,
            p.vertex_count(),
            p.indices.len(),
            p.topology,
            d.skin.map_or("-".into(), |s| s.to_string()),
            p.morph_targets.len(),
            if p.normals.is_some() { "yes" } else { "no" },
            if p.tangents.is_some() { "yes" } else { "no" },
        );
    }
    let vertices: usize = scene
        .draws
        .iter()
        .map(|d| scene.primitive(d).vertex_count())
        .sum();
    let max_infl = scene
        .draws
        .iter()
        .filter(|d| d.skin.is_some())
        .filter_map(|d| scene.primitive(d).skin_weights.as_ref())
        .map(|w| w.max_influences())
        .max()
        .unwrap_or(0);
    println!(
        "total: {vertices} vertices drawn, {} joints, max influences {max_infl}",
        scene.joint_count()
    );
    // Mirrored nodes flip the winding (glTF: negative determinant of the global transform).
    let mut frame = skinview::frame::FrameState::new(scene);
    if frame.evaluate(scene, None, 0.0).is_ok() {
        for d in scene.draws.iter().filter(|d| d.skin.is_none()) {
            if frame.model_from_node[d.node].determinant() < 0.0 {
                println!(
                    "  node {}: negative determinant, triangle winding flipped",
                    scene.nodes[d.node].source_index
                );
            }
        }
    }
    println!("animations: {}", scene.animations.len());
    for (i, a) in scene.animations.iter().enumerate() {
        let modes: Vec<&str> = a.interpolations().iter().map(|m| m.name()).collect();
        println!(
            "  anim {i} {:?}: {:.3} s, {} channels, {}",
            a.name.as_deref().unwrap_or(""),
            a.duration_s(),
            a.channels.len(),
            modes.join("/")
        );
    }
    println!("repairs and warnings: {}", scene.report.notes.len());
    for n in &scene.report.notes {
        println!(
            "  {} {}: {}",
            if n.repaired { "repaired" } else { "warning" },
            n.field,
            n.message
        );
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Info(a) => {
            let scene = harness::load_model(a.model.as_deref())?;
            info(&scene);
        }
        Command::Render(a) if a.demo => {
            if !matches!(
                a.model.as_deref().and_then(|p| p.to_str()),
                None | Some("builtin:humanoid")
            ) || a.anim.is_some()
                || a.links
            {
                return Err(Error::Usage("--demo runs the built-in humanoid's own set-up: give no MODEL (or builtin:humanoid), no --anim and no --links".into()));
            }
            if a.stage.is_set() {
                return Err(Error::Usage(
                    "--demo has its own layers and IK; drop --layer/--fade/--ik".into(),
                ));
            }
            let mut c = skinview::character::Character::humanoid_demo()?;
            let time = a.time.unwrap_or(1.0);
            play_to(&mut c, time)?;
            let (width, height) = parse_size(&a.size)?;
            let ctx = GpuContext::new_headless()?;
            let img = harness::render_skinned(
                &ctx,
                &c.scene,
                &c.outputs,
                &RenderSettings {
                    width,
                    height,
                    ..Default::default()
                },
            )?;
            img.write_png(&a.out)?;
            println!(
                "humanoid demo t={time:.3}s: IK reached {} (residual {:?} m) -> {}",
                c.ik_result.reached,
                c.ik_result.residual_m,
                a.out.display()
            );
        }
        Command::Render(a) if a.links || a.stage.is_set() => {
            let rig = harness::load_native_rig(a.model.as_deref())?.ok_or_else(|| Error::Usage("--links/--layer/--fade/--ik need a native rig (builtin:arm, builtin:humanoid or a .rig.json)".into()))?;
            let probe = rig.to_scene()?.scene;
            let anim = parse_anim(&probe, a.anim.as_deref())?;
            let time = a
                .time
                .unwrap_or_else(|| anim.map_or(0.0, |i| probe.animations[i].duration_s() * 0.5));
            let mut c =
                skinview::character::Character::from_spec(&rig, &a.stage.spec(anim, a.links))?;
            play_to(&mut c, time)?;
            let (width, height) = parse_size(&a.size)?;
            let ctx = GpuContext::new_headless()?;
            let img = harness::render_skinned(
                &ctx,
                &c.scene,
                &c.outputs,
                &RenderSettings {
                    width,
                    height,
                    ..Default::default()
                },
            )?;
            img.write_png(&a.out)?;
            println!(
                "{} with {} bone links: anim {:?} t={time:.3}s -> {}",
                rig.name,
                c.links.as_ref().map_or(0, |l| l.links.len()),
                anim,
                a.out.display()
            );
            if let Some(s) = &c.link_stats {
                println!(
                    "  links moved weight on {} vertices ({} forks, {} faded); max influences {} -> {}{}",
                    s.vertices_changed,
                    s.fork_vertices,
                    s.faded_vertices,
                    s.max_influences_before,
                    s.max_influences_after,
                    if s.exceeds_gpu_limit {
                        " (more than the GPU path's 8: drawn from the CPU result)"
                    } else {
                        ""
                    }
                );
            }
        }
        Command::Render(a) => {
            let scene = harness::load_model(a.model.as_deref())?;
            let anim = parse_anim(&scene, a.anim.as_deref())?;
            let time = a
                .time
                .unwrap_or_else(|| anim.map_or(0.0, |i| scene.animations[i].duration_s() * 0.5));
            let (width, height) = parse_size(&a.size)?;
            let ctx = GpuContext::new_headless()?;
            let img = harness::render(
                &ctx,
                &scene,
                anim,
                time,
                a.path,
                &RenderSettings {
                    width,
                    height,
                    ..Default::default()
                },
            )?;
            img.write_png(&a.out)?;
            println!(
                "{}: anim {:?} t={time:.3}s path {:?} -> {} ({}x{}) on {}",
                scene.name,
                anim,
                a.path,
                a.out.display(),
                width,
                height,
                ctx.describe()
            );
        }
        Command::Compare(a) => {
            let scene = harness::load_model(a.model.as_deref())?;
            let anims: Vec<Option<usize>> = match a.anim.as_deref() {
                Some(s) => vec![parse_anim(&scene, Some(s))?],
                None if scene.animations.is_empty() => vec![None],
                None => (0..scene.animations.len()).map(Some).collect(),
            };
            let ctx = GpuContext::new_headless()?;
            let bar = indicatif::ProgressBar::new(anims.len() as u64).with_message("comparing");
            let cmp = harness::compare(
                &ctx,
                &scene,
                &anims,
                a.frames.max(1),
                a.max_influences,
                |i, _| bar.set_position(i as u64),
            )?;
            bar.finish_and_clear();
            println!("model {}  adapter {}", cmp.model, cmp.adapter);
            println!(
                "diagonal {:.6}  tolerance {:.1e} x diagonal = {:.3e}",
                cmp.diagonal,
                cmp.tolerance_rel,
                cmp.tolerance_rel * cmp.diagonal
            );
            for an in &cmp.anims {
                println!(
                    "anim {:?} {:?}: {} frames",
                    an.anim,
                    an.name.as_deref().unwrap_or(""),
                    an.times.len()
                );
                for d in &an.draws {
                    println!(
                        "  node {} mesh {} prim {} ({} verts): GPU-CPU max {:.3e} ({:.2e} rel) mean {:.3e}, worst vertex {} at t={:.3}s; normals max {:.2e}",
                        d.node_index,
                        d.mesh_index,
                        d.primitive_index,
                        d.vertex_count,
                        d.max_error,
                        d.max_error / cmp.diagonal.max(f64::MIN_POSITIVE),
                        d.mean_error,
                        d.worst_vertex,
                        d.worst_time_s,
                        d.max_normal_error
                    );
                }
                if let Some(rc) = &an.reduction_cost {
                    for d in rc {
                        println!(
                            "  node {} mesh {} prim {}: reducing to {} influences costs max {:.3e} ({:.2e} rel) mean {:.3e} (worst vertex {})",
                            d.node_index,
                            d.mesh_index,
                            d.primitive_index,
                            cmp.max_influences.unwrap_or(0),
                            d.max_error,
                            d.max_error / cmp.diagonal.max(f64::MIN_POSITIVE),
                            d.mean_error,
                            d.worst_vertex
                        );
                    }
                }
            }
            if let Some(k) = cmp.max_influences {
                let worst = cmp
                    .anims
                    .iter()
                    .flat_map(|a| a.reduction_cost.iter().flatten())
                    .map(|d| d.max_error)
                    .fold(0.0, f64::max);
                println!(
                    "--max-influences {k}: {} vertices lost weight; over the model the reduction moves vertices by up to {:.3e} ({:.2e} of the diagonal)",
                    cmp.vertices_reduced,
                    worst,
                    worst / cmp.diagonal.max(f64::MIN_POSITIVE)
                );
            }
            if let Some(path) = &a.json {
                let text = serde_json::to_string_pretty(&cmp).map_err(|e| Error::Output {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                std::fs::write(path, text).map_err(|e| Error::Output {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            }
            println!(
                "{}",
                if cmp.passed {
                    "PASS"
                } else {
                    "FAIL: GPU differs from the CPU reference above tolerance"
                }
            );
            if !cmp.passed {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Dump(a) => {
            let scene = harness::load_model(a.model.as_deref())?;
            let anim = parse_anim(&scene, a.anim.as_deref())?;
            let ctx = match a.path {
                SkinPath::Gpu => Some(GpuContext::new_headless()?),
                SkinPath::Cpu => None,
            };
            let dump = harness::dump(
                &scene,
                anim,
                &a.times,
                a.path,
                ctx.as_ref(),
                a.max_influences,
            )?;
            dump.write(&a.out)?;
            println!(
                "{}: {} mesh entries x {} times -> {}",
                scene.name,
                dump.meshes.len(),
                dump.times.len(),
                a.out.display()
            );
        }
        Command::Bench(a) => {
            use skinview::character::{Character, bench};
            let native = harness::load_native_rig(a.model.as_deref())?;
            let default_humanoid = matches!(
                a.model.as_deref().and_then(|p| p.to_str()),
                None | Some("builtin:humanoid")
            );
            let mut character = match native {
                // No MODEL (or the humanoid) and no stage options: the full demo set-up.
                _ if default_humanoid && !a.stage.is_set() && a.anim.is_none() => {
                    Character::humanoid_demo()?
                }
                Some(rig) if a.model.is_some() || default_humanoid => {
                    let rig = if a.model.is_none() {
                        skinview::rig::humanoid::humanoid()
                    } else {
                        rig
                    };
                    let probe = rig.to_scene()?.scene;
                    let anim = parse_anim(&probe, a.anim.as_deref())?;
                    Character::from_spec(&rig, &a.stage.spec(anim, a.links))?
                }
                _ => {
                    if a.stage.is_set() || a.links {
                        return Err(Error::Usage("--links/--layer/--fade/--ik need a native rig (builtin:arm, builtin:humanoid or a .rig.json)".into()));
                    }
                    let scene = harness::load_model(a.model.as_deref())?;
                    let anim = parse_anim(&scene, a.anim.as_deref())?;
                    Character::from_scene(scene, anim)
                }
            };
            let bar = indicatif::ProgressBar::new(a.frames as u64).with_message("frames");
            let t = bench(&mut character, a.frames.max(1), |i| {
                bar.set_position(i as u64)
            })?;
            bar.finish_and_clear();
            let scene = &character.scene;
            let vertices: usize = scene
                .draws
                .iter()
                .map(|d| scene.primitive(d).vertex_count())
                .sum();
            println!(
                "model {}  joints {}  vertices {}  layers {}  ik effectors {}  links {}",
                scene.name,
                scene.joint_count(),
                vertices,
                character.layers.len(),
                character.ik.as_ref().map_or(0, |i| i.effectors.len()),
                character.links.as_ref().map_or(0, |l| l.links.len())
            );
            println!(
                "median over {} frames, {} thread(s):",
                a.frames,
                rayon::current_num_threads()
            );
            for (name, v) in [
                ("sample motion", t.sample),
                ("layer", t.layer),
                ("ik", t.ik),
                ("bone links", t.links),
                ("palette (local->model + palette)", t.palette),
                ("skin", t.skin),
                ("renormalise normals", t.normals),
            ] {
                println!("  {name:<34} {v:>10.2} us");
            }
            println!(
                "  {:<34} {:>10.2} us",
                "frame (median of whole frames)", t.frame
            );
            if let Some(path) = &a.json {
                let v = serde_json::json!({
                    "model": scene.name, "joints": scene.joint_count(), "vertices": vertices,
                    "stages_us": { "sample": t.sample, "layer": t.layer, "ik": t.ik, "links": t.links, "palette": t.palette, "skin": t.skin, "normals": t.normals },
                    "frame_us": t.frame,
                });
                std::fs::write(path, serde_json::to_string_pretty(&v).unwrap_or_default())
                    .map_err(|e| Error::Output {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
            }
        }
        Command::Export(a) => {
            use skinview::io::gltf_export::{ExportOptions, JointType, WeightType, write_glb};
            let ext = a
                .out
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            if !matches!(ext.as_deref(), Some("glb") | Some("json")) {
                return Err(Error::Usage(format!(
                    "--out {}: write FILE.glb (binary glTF) or FILE.rig.json (native rig)",
                    a.out.display()
                )));
            }
            if a.out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            {
                let rig = harness::load_native_rig(a.model.as_deref())?.ok_or_else(|| Error::Usage("native .rig.json export needs a native rig (builtin:arm, builtin:humanoid or a .rig.json)".into()))?;
                std::fs::write(&a.out, rig.to_json()).map_err(|e| Error::Output {
                    path: a.out.clone(),
                    message: e.to_string(),
                })?;
                println!(
                    "{}: {} bones, {} motions -> {}",
                    rig.name,
                    rig.bones.len(),
                    rig.motions.len(),
                    a.out.display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let scene = harness::load_model(a.model.as_deref())?;
            let options = ExportOptions {
                joints: match a.joints {
                    JointsArg::U8 => JointType::U8,
                    JointsArg::U16 => JointType::U16,
                },
                weights: match a.weights {
                    WeightsArg::F32 => WeightType::F32,
                    WeightsArg::Unorm8 => WeightType::Unorm8,
                    WeightsArg::Unorm16 => WeightType::Unorm16,
                },
                ..Default::default()
            };
            write_glb(&scene, &options, &a.out)?;
            println!(
                "{}: {} nodes, {} skins, {} animations -> {}",
                scene.name,
                scene.nodes.len(),
                scene.skins.len(),
                scene.animations.len(),
                a.out.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("skinview: error: {e}");
            ExitCode::from(2)
        }
    }
}
