//! The headless harness behind the CLI and the tests: load a model (or the built-in rig),
//! skin it on the CPU and the GPU at chosen times, compare, dump, render.
//! Sits above `gpu`, `io` and the core modules (like the viewer will).

use std::path::Path;

use glam::Vec3;

use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::gpu::{Capture, GpuContext, GpuScene, RenderSettings, Renderer};
use crate::io::dump::Dump;
use crate::io::image::Rgba8;
use crate::math::Trs;
use crate::scene::{Mesh, Node, Primitive, RawScene, Scene, SceneBuilder};
use crate::skin::SkinnedVertices;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SkinPath {
    Cpu,
    Gpu,
}

/// Names of the built-in rigs, usable wherever a model path is taken.
pub const BUILTINS: [&str; 2] = ["builtin:arm", "builtin:humanoid"];

/// Load `path` (`.gltf`/`.glb`, a native `.rig.json`, or `builtin:arm` / `builtin:humanoid`);
/// `None` is the built-in Woodland arm.
pub fn load_model(path: Option<&Path>) -> Result<Scene> {
    match path.and_then(|p| p.to_str()) {
        None if path.is_none() => crate::builtin::woodland_arm(),
        Some("builtin:arm") => crate::builtin::woodland_arm(),
        Some("builtin:humanoid") => crate::builtin::humanoid(),
        Some(s) if s.starts_with("builtin:") => Err(Error::Usage(format!(
            "unknown built-in {s:?}; known: {}",
            BUILTINS.join(", ")
        ))),
        _ => crate::io::load(path.unwrap_or(Path::new(""))),
    }
}

/// The native rig behind a model argument, when there is one (built-ins and `.json` files).
pub fn load_native_rig(path: Option<&Path>) -> Result<Option<crate::rig::WeberRig>> {
    match path.and_then(|p| p.to_str()) {
        None if path.is_none() => crate::builtin::woodland_arm_rig().map(Some),
        Some("builtin:arm") => crate::builtin::woodland_arm_rig().map(Some),
        Some("builtin:humanoid") => Ok(Some(crate::rig::humanoid::humanoid())),
        Some(s) if s.to_ascii_lowercase().ends_with(".json") => {
            crate::io::load_rig(Path::new(s)).map(Some)
        }
        _ => Ok(None),
    }
}

/// `count` evenly spaced times over animation `anim` (both ends included); `[0]` for rest.
pub fn frame_times(scene: &Scene, anim: Option<usize>, count: usize) -> Vec<f32> {
    let duration = anim
        .and_then(|a| scene.animations.get(a))
        .map_or(0.0, |a| a.duration_s());
    if count <= 1 || duration == 0.0 {
        return vec![0.0];
    }
    (0..count)
        .map(|i| duration * i as f32 / (count - 1) as f32)
        .collect()
}

/// CPU-skinned output of the selected draws at each time: `[time][k]`.
pub fn skin_cpu(
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    draws: &[usize],
    max_influences: Option<usize>,
) -> Result<Vec<Vec<SkinnedVertices>>> {
    let mut frame = FrameState::new(scene);
    let mut skinner = CpuSkinner::new(scene, max_influences);
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        frame.evaluate(scene, anim, t)?;
        let mut per = Vec::with_capacity(draws.len());
        for &d in draws {
            let mut v = SkinnedVertices::default();
            skinner.skin_draw(scene, &frame, d, &mut v)?;
            per.push(v);
        }
        out.push(per);
    }
    Ok(out)
}

/// GPU skinning of a scene through the capture pipeline.
pub struct GpuSkinner {
    pub gpu: GpuScene,
    capture: Capture,
    frame: FrameState,
}

impl GpuSkinner {
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        max_influences: Option<usize>,
    ) -> Result<GpuSkinner> {
        let frame = FrameState::new(scene);
        let gpu = GpuScene::new(ctx, scene, &frame, max_influences)?;
        let capture = Capture::new(ctx, &gpu)?;
        Ok(GpuSkinner {
            gpu,
            capture,
            frame,
        })
    }

    /// GPU-skinned output of the selected draws at each time: `[time][k]`. Attributes the
    /// primitive lacks are `None`, as on the CPU.
    pub fn skin(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        anim: Option<usize>,
        times: &[f32],
        draws: &[usize],
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        let mut out = Vec::with_capacity(times.len());
        for &t in times {
            self.frame.evaluate(scene, anim, t)?;
            self.gpu.update(ctx, scene, &self.frame);
            let mut per = self.capture.run(ctx, &self.gpu, draws)?;
            for (v, &d) in per.iter_mut().zip(draws) {
                let prim = scene.primitive(&scene.draws[d]);
                if prim.normals.is_none() {
                    v.normals = None;
                }
                if prim.tangents.is_none() {
                    v.tangents = None;
                }
            }
            out.push(per);
        }
        Ok(out)
    }
}

/// Indices of the deformed draws (the `dump` set).
pub fn deformed_draw_indices(scene: &Scene) -> Vec<usize> {
    let set: Vec<_> = scene.deformed_draws().copied().collect();
    scene
        .draws
        .iter()
        .enumerate()
        .filter(|(_, d)| set.contains(d))
        .map(|(i, _)| i)
        .collect()
}

/// Build a `dump` of the deformed draws on the chosen path.
pub fn dump(
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    path: SkinPath,
    ctx: Option<&GpuContext>,
    max_influences: Option<usize>,
) -> Result<Dump> {
    let draws = deformed_draw_indices(scene);
    let frames = match path {
        SkinPath::Cpu => skin_cpu(scene, anim, times, &draws, max_influences)?,
        SkinPath::Gpu => {
            let ctx = ctx.ok_or_else(|| {
                Error::NoAdapter("GPU path requested without a GPU context".into())
            })?;
            GpuSkinner::new(ctx, scene, max_influences)?.skin(ctx, scene, anim, times, &draws)?
        }
    };
    Ok(Dump::new(scene, anim, times, &frames))
}

/// Axis-aligned bounds of skinned positions.
pub fn bounds(frames: &[SkinnedVertices]) -> Option<(Vec3, Vec3)> {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    for f in frames {
        for p in &f.positions {
            if p.is_finite() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
    }
    (lo.x <= hi.x).then_some((lo, hi))
}

/// A static scene holding already-skinned draws (identity transforms, no skins or morphs):
/// how the CPU path's result is drawn by the same renderer.
pub fn static_scene(scene: &Scene, skinned: &[SkinnedVertices]) -> Result<Scene> {
    let mut raw = RawScene {
        name: format!("{} (CPU skinned)", scene.name),
        ..Default::default()
    };
    for (i, (d, s)) in scene.draws.iter().zip(skinned).enumerate() {
        let src = scene.primitive(d);
        raw.meshes.push(Mesh {
            name: None,
            primitives: vec![Primitive {
                positions: s.positions.clone(),
                normals: s.normals.clone(),
                tangents: s.tangents.clone(),
                indices: src.indices.clone(),
                topology: src.topology,
                skin_weights: None,
                morph_targets: Vec::new(),
                base_color: src.base_color,
            }],
            default_morph_weights: Vec::new(),
        });
        raw.nodes.push(Node {
            name: None,
            source_index: i,
            parent: None,
            rest: Trs::IDENTITY,
            matrix: None,
            mesh: Some(i),
            skin: None,
            morph_weights: None,
        });
    }
    SceneBuilder::build(raw)
}

/// Render already-skinned draws of `scene` (e.g. a `Character`'s CPU output).
pub fn render_skinned(
    ctx: &GpuContext,
    scene: &Scene,
    skinned: &[SkinnedVertices],
    settings: &RenderSettings,
) -> Result<Rgba8> {
    let bounds = bounds(skinned).ok_or_else(|| {
        Error::Usage(format!(
            "{}: nothing to render (no finite vertices)",
            scene.name
        ))
    })?;
    let s = static_scene(scene, skinned)?;
    let mut frame = FrameState::new(&s);
    frame.evaluate(&s, None, 0.0)?;
    let mut gpu = GpuScene::new(ctx, &s, &frame, None)?;
    gpu.update(ctx, &s, &frame);
    Renderer::new(ctx, &gpu)?.render(ctx, &gpu, bounds, settings)
}

/// Render `scene` at `time_s` of `anim` on the chosen skinning path.
pub fn render(
    ctx: &GpuContext,
    scene: &Scene,
    anim: Option<usize>,
    time_s: f32,
    path: SkinPath,
    settings: &RenderSettings,
) -> Result<Rgba8> {
    let all: Vec<usize> = (0..scene.draws.len()).collect();
    let cpu = skin_cpu(scene, anim, &[time_s], &all, None)?
        .pop()
        .unwrap_or_default();
    let bounds = bounds(&cpu).ok_or_else(|| {
        Error::Usage(format!(
            "{}: nothing to render (no finite vertices)",
            scene.name
        ))
    })?;
    let (draw_scene, draw_anim, draw_time) = match path {
        SkinPath::Gpu => (None, anim, time_s),
        SkinPath::Cpu => (Some(static_scene(scene, &cpu)?), None, 0.0),
    };
    let s = draw_scene.as_ref().unwrap_or(scene);
    let mut frame = FrameState::new(s);
    frame.evaluate(s, draw_anim, draw_time)?;
    let mut gpu = GpuScene::new(ctx, s, &frame, None)?;
    gpu.update(ctx, s, &frame);
    let renderer = Renderer::new(ctx, &gpu)?;
    renderer.render(ctx, &gpu, bounds, settings)
}

/// Errors of one draw between two skinnings over all compared frames.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DrawErrors {
    pub draw: usize,
    pub node_index: usize,
    pub mesh_index: usize,
    pub primitive_index: usize,
    pub vertex_count: usize,
    pub max_error: f64,
    pub mean_error: f64,
    pub worst_vertex: usize,
    pub worst_time_s: f32,
    pub max_normal_error: f64,
}

/// Position/normal differences of `b` against `a` (`[time][k]` layouts for `draws`).
pub fn errors(
    scene: &Scene,
    draws: &[usize],
    times: &[f32],
    a: &[Vec<SkinnedVertices>],
    b: &[Vec<SkinnedVertices>],
) -> Vec<DrawErrors> {
    let mut out = Vec::with_capacity(draws.len());
    for (k, &di) in draws.iter().enumerate() {
        let d = &scene.draws[di];
        let mut e = DrawErrors {
            draw: di,
            node_index: scene.nodes[d.node].source_index,
            mesh_index: d.mesh,
            primitive_index: d.primitive,
            vertex_count: scene.primitive(d).vertex_count(),
            ..Default::default()
        };
        let mut sum = 0.0;
        let mut count = 0usize;
        for (ti, &t) in times.iter().enumerate() {
            let (pa, pb) = (&a[ti][k], &b[ti][k]);
            if pa.positions.len() != pb.positions.len() {
                // A short or long readback is a failure, not a pass over the common prefix.
                e.max_error = f64::INFINITY;
                e.worst_time_s = t;
                continue;
            }
            for (v, (x, y)) in pa.positions.iter().zip(&pb.positions).enumerate() {
                let err = (x.as_dvec3() - y.as_dvec3()).length();
                let err = if err.is_nan() { f64::INFINITY } else { err };
                sum += err;
                count += 1;
                if err > e.max_error || (count == 1) {
                    e.max_error = err;
                    e.worst_vertex = v;
                    e.worst_time_s = t;
                }
            }
            if let (Some(na), Some(nb)) = (&pa.normals, &pb.normals) {
                for (x, y) in na.iter().zip(nb) {
                    let err = (x.as_dvec3() - y.as_dvec3()).length();
                    e.max_normal_error =
                        e.max_normal_error
                            .max(if err.is_nan() { f64::INFINITY } else { err });
                }
            }
        }
        e.mean_error = if count > 0 { sum / count as f64 } else { 0.0 };
        out.push(e);
    }
    out
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct AnimComparison {
    pub anim: Option<usize>,
    pub name: Option<String>,
    pub times: Vec<f32>,
    /// GPU readback against the CPU reference (same influence count).
    pub draws: Vec<DrawErrors>,
    /// With `--max-influences`: CPU reduced against CPU with every influence.
    pub reduction_cost: Option<Vec<DrawErrors>>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Comparison {
    pub model: String,
    pub adapter: String,
    /// Bounding-box diagonal of the skinned model (errors are judged relative to it).
    pub diagonal: f64,
    /// Largest allowed GPU−CPU position error, relative to the diagonal.
    pub tolerance_rel: f64,
    pub max_influences: Option<usize>,
    /// Vertices whose weights the reduction changed, over all draws.
    pub vertices_reduced: usize,
    pub anims: Vec<AnimComparison>,
    pub passed: bool,
}

/// CPU vs GPU readback tolerance: 1e-5 of the model's diagonal. Both sides compute in f32 on
/// the same inputs; the differences are FMA contraction and summation order (measured ~1e-7
/// on lavapipe).
pub const CPU_GPU_TOLERANCE_REL: f64 = 1e-5;

/// Compare CPU and GPU skinning of every draw over `frames` frames of each of `anims`.
pub fn compare(
    ctx: &GpuContext,
    scene: &Scene,
    anims: &[Option<usize>],
    frames: usize,
    max_influences: Option<usize>,
    mut progress: impl FnMut(usize, usize),
) -> Result<Comparison> {
    let draws: Vec<usize> = (0..scene.draws.len()).collect();
    let mut gpu = GpuSkinner::new(ctx, scene, max_influences)?;
    let vertices_reduced = gpu
        .gpu
        .draws
        .iter()
        .filter_map(|d| d.reduction)
        .map(|r| r.vertices_reduced)
        .sum();
    let mut result = Vec::new();
    let mut diagonal: f64 = 0.0;
    for (i, &anim) in anims.iter().enumerate() {
        progress(i, anims.len());
        let times = frame_times(scene, anim, frames);
        let cpu = skin_cpu(scene, anim, &times, &draws, max_influences)?;
        let gpu_out = gpu.skin(ctx, scene, anim, &times, &draws)?;
        if let Some((lo, hi)) = cpu.first().and_then(|f| bounds(f)) {
            diagonal = diagonal.max((hi - lo).length() as f64);
        }
        let reduction_cost = match max_influences {
            Some(_) => {
                let full = skin_cpu(scene, anim, &times, &draws, None)?;
                Some(errors(scene, &draws, &times, &full, &cpu))
            }
            None => None,
        };
        result.push(AnimComparison {
            anim,
            name: anim.and_then(|a| scene.animations[a].name.clone()),
            draws: errors(scene, &draws, &times, &cpu, &gpu_out),
            times,
            reduction_cost,
        });
    }
    progress(anims.len(), anims.len());
    let limit = CPU_GPU_TOLERANCE_REL * diagonal.max(f64::MIN_POSITIVE);
    let passed = result
        .iter()
        .all(|a| a.draws.iter().all(|d| d.max_error <= limit));
    Ok(Comparison {
        model: scene.name.clone(),
        adapter: ctx.describe(),
        diagonal,
        tolerance_rel: CPU_GPU_TOLERANCE_REL,
        max_influences,
        vertices_reduced,
        anims: result,
        passed,
    })
}
