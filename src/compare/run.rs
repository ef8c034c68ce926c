//! Running a comparison: a [`Character`] plays each animation (not looping, so `t = duration`
//! is the last key) and skins on the CPU; each frame's palette is uploaded to the GPU and read
//! back through the chosen capture paths; the errors accumulate per draw.

use super::{
    AnimComparison, CPU_GPU_TOLERANCE_REL, CaptureErrors, Comparison, DrawErrors, NORMAL_TOLERANCE,
};
use crate::character::Character;
use crate::error::{Error, Result};
use crate::gpu::{CapturePath, GpuContext, GpuReadback};
use crate::scene::Scene;
use crate::skin::{SkinnedVertices, bounds};

/// `dt` handed to the character between compared frames: comparisons play clips without IK,
/// so only its sign matters; one 60 Hz frame.
const COMPARE_DT_S: f32 = 1.0 / 60.0;

/// What to compare.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Frames per animation, evenly spaced over its duration, both ends included.
    pub frames: usize,
    /// Reduce both paths to the K largest weights (renormalised) and report the cost.
    pub max_influences: Option<usize>,
    /// GPU code to read back (at least one).
    pub captures: Vec<CapturePath>,
}

impl CompareOptions {
    /// Validation rules: 1. at least one frame; 2. at least one capture path.
    pub fn validate(&self) -> Result<()> {
        if self.frames == 0 {
            return Err(Error::job("CompareOptions", 1, "no frames to compare"));
        }
        if self.captures.is_empty() {
            return Err(Error::job(
                "CompareOptions",
                2,
                "no capture path to read back",
            ));
        }
        Ok(())
    }
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            frames: 16,
            max_influences: None,
            captures: vec![CapturePath::Compute, CapturePath::Draw],
        }
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

/// Compare CPU and GPU skinning of every draw over `options.frames` frames of each of
/// `anims`; `progress(done, total)` is called per animation.
pub fn compare(
    ctx: &GpuContext,
    scene: &Scene,
    anims: &[Option<usize>],
    options: &CompareOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<Comparison> {
    options.validate()?;
    let draws: Vec<usize> = (0..scene.draws.len()).collect();
    let k = options.max_influences;
    let mut cpu = Character::from_scene(scene.clone(), None, false)?;
    cpu.set_max_influences(k);
    // The unreduced CPU path, when the reduction's cost is asked for.
    let mut full = match k {
        Some(_) => Some(Character::from_scene(scene.clone(), None, false)?),
        None => None,
    };
    let mut gpu = GpuReadback::new(ctx, scene, &cpu.frame, k)?;
    let vertices_reduced = gpu
        .gpu
        .draws
        .iter()
        .filter_map(|d| d.reduction)
        .map(|r| r.vertices_reduced)
        .sum();
    let mut result = Vec::with_capacity(anims.len());
    let mut diagonal: f64 = 0.0;
    for (i, &anim) in anims.iter().enumerate() {
        progress(i, anims.len());
        let times = frame_times(scene, anim, options.frames);
        cpu.set_clip(anim, false)?;
        if let Some(f) = &mut full {
            f.set_clip(anim, false)?;
        }
        let new_errors = || draws.iter().map(|&d| DrawErrors::new(scene, d)).collect();
        let mut per_path: Vec<Vec<DrawErrors>> =
            options.captures.iter().map(|_| new_errors()).collect();
        let mut draw_vs_compute: Vec<DrawErrors> = new_errors();
        let mut reduction_cost: Vec<DrawErrors> = new_errors();
        for (ti, &t) in times.iter().enumerate() {
            cpu.update(t, COMPARE_DT_S)?;
            if ti == 0
                && let Some((lo, hi)) = bounds(&cpu.outputs)
            {
                diagonal = diagonal.max((hi - lo).length() as f64);
            }
            let mut read: Vec<(CapturePath, Vec<SkinnedVertices>)> = Vec::new();
            for (path, errs) in options.captures.iter().zip(&mut per_path) {
                let out = gpu.read(ctx, &cpu.scene, &cpu.frame, *path, &draws)?;
                for (e, (c, g)) in errs.iter_mut().zip(cpu.outputs.iter().zip(&out)) {
                    e.add(t, c, g);
                }
                read.push((*path, out));
            }
            let find = |p| read.iter().find(|(q, _)| *q == p).map(|(_, v)| v);
            if let (Some(c), Some(d)) = (find(CapturePath::Compute), find(CapturePath::Draw)) {
                for (e, (a, b)) in draw_vs_compute.iter_mut().zip(c.iter().zip(d)) {
                    e.add(t, a, b);
                }
            }
            if let Some(f) = &mut full {
                f.update(t, COMPARE_DT_S)?;
                for (e, (a, b)) in reduction_cost
                    .iter_mut()
                    .zip(f.outputs.iter().zip(&cpu.outputs))
                {
                    e.add(t, a, b);
                }
            }
        }
        let worst = per_path
            .iter()
            .skip(1)
            .fold(per_path.first().cloned().unwrap_or_default(), |acc, p| {
                acc.iter().zip(p).map(|(a, b)| a.worst_of(b)).collect()
            });
        let both = options.captures.contains(&CapturePath::Compute)
            && options.captures.contains(&CapturePath::Draw);
        result.push(AnimComparison {
            anim,
            name: anim.and_then(|a| scene.animations[a].name.clone()),
            draws: worst,
            captures: options
                .captures
                .iter()
                .zip(per_path)
                .map(|(&capture, draws)| CaptureErrors { capture, draws })
                .collect(),
            draw_vs_compute: both.then_some(draw_vs_compute),
            reduction_cost: full.is_some().then_some(reduction_cost),
            times,
        });
    }
    progress(anims.len(), anims.len());
    let mut cmp = Comparison {
        model: scene.name.clone(),
        adapter: ctx.describe(),
        diagonal,
        tolerance_rel: CPU_GPU_TOLERANCE_REL,
        normal_tolerance: NORMAL_TOLERANCE,
        max_influences: k,
        vertices_reduced,
        captures: options.captures.clone(),
        anims: result,
        passed: false,
    };
    cmp.judge();
    Ok(cmp)
}

/// Where [`sample_frames`] takes its vertices from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The CPU reference.
    Cpu,
    /// GPU skinning read back through a capture path.
    Gpu(CapturePath),
}

/// Skinned vertices of `draws` at each of `times` of `anim` (not looping): `[time][k]`.
/// `ctx` is needed for [`Source::Gpu`].
pub fn sample_frames(
    ctx: Option<&GpuContext>,
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    draws: &[usize],
    source: Source,
    max_influences: Option<usize>,
) -> Result<Vec<Vec<SkinnedVertices>>> {
    let mut c = Character::from_scene(scene.clone(), anim, false)?;
    c.set_max_influences(max_influences);
    let mut gpu = match source {
        Source::Cpu => None,
        Source::Gpu(path) => {
            let ctx = ctx.ok_or_else(|| {
                Error::NoAdapter("GPU skinning requested without a GPU context".into())
            })?;
            c.cpu_skinning = false;
            Some((
                ctx,
                path,
                GpuReadback::new(ctx, scene, &c.frame, max_influences)?,
            ))
        }
    };
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        c.update(t, COMPARE_DT_S)?;
        match &mut gpu {
            None => out.push(draws.iter().map(|&d| c.outputs[d].clone()).collect()),
            Some((ctx, path, g)) => out.push(g.read(ctx, &c.scene, &c.frame, *path, draws)?),
        }
    }
    Ok(out)
}
