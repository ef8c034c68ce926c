//! Running a comparison: a [`Character`] plays each animation (not looping, so `t = duration`
//! is the last key) and skins on the CPU; each frame's palette is uploaded to the GPU and read
//! back through the chosen capture paths; the errors accumulate per draw.
//!
//! On the uniform palette path the GPU draws a [`PartitionedScene`] (one draw per submesh of
//! at most K bones, its own character for the frame's palettes); the submeshes' vertices are
//! scattered back onto the source draws and compared with the unpartitioned CPU reference,
//! whose weights are the fitted ones (the same as the source unless a face needed more than K
//! bones; what the fitting costs is reported beside, as an influence reduction is).

use super::{
    AnimComparison, CPU_GPU_TOLERANCE_REL, CaptureErrors, Comparison, DrawErrors, NORMAL_TOLERANCE,
    PaletteSplit, SurfaceNormalErrors,
};
use crate::character::{Character, CharacterSetup};
use crate::error::{Error, Result};
use crate::gpu::{CapturePath, GpuContext, GpuReadback, PaletteSource, Skinning, choose_source};
use crate::math::bounds_diagonal;
use crate::partition::PartitionedScene;
use crate::scene::Scene;
use crate::skin::{SkinOptions, SkinnedVertices, bounds};

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
    /// Where the GPU reads its palette from; `None`: the storage buffer where the adapter
    /// can, else a uniform array ([`choose_source`]).
    pub palette: Option<PaletteSource>,
    /// How both paths skin (blend mode, normals).
    pub skin: SkinOptions,
    /// Frames skinned and read back together in one GPU submission per capture path
    /// (`None`: [`batch_frames`] chooses; 1 on the uniform palette and for scenes with morph
    /// targets, whose weights all instances of a batch would share).
    pub batch: Option<usize>,
    /// Largest position error allowed, relative to the model's bounding-box diagonal
    /// ([`CPU_GPU_TOLERANCE_REL`] by default; a GPU of lower precision may need more).
    pub tolerance_rel: f64,
}

/// Vertex-frames per batch when [`CompareOptions::batch`] is `None`: about 180 bytes each on
/// the GPU and the CPU side (capture records, draw targets and staging, kept CPU outputs), so
/// a batch stays near 45 MB.
pub const BATCH_VERTEX_FRAMES: usize = 262_144;
/// At most this many frames per batch: past it the per-submission costs are already small
/// (measured on lavapipe: CesiumMan's draw capture spends most of its time renewing
/// pipelines per draw, which a batch of 64 frames shares).
pub const MAX_BATCH_FRAMES: usize = 64;

/// Frames per batch for `scene` (see [`CompareOptions::batch`]), at most what one storage
/// binding of `max_binding_bytes` holds of the largest draw's capture records.
pub fn batch_frames(
    scene: &Scene,
    options: &CompareOptions,
    source: PaletteSource,
    max_binding_bytes: u64,
) -> usize {
    let morphs = scene
        .draws
        .iter()
        .any(|d| !scene.primitive(d).morph_targets.is_empty());
    if morphs || source != PaletteSource::Storage {
        return 1;
    }
    let vertices = scene.vertex_count().max(1);
    let widest = scene
        .draws
        .iter()
        .map(|d| scene.primitive(d).vertex_count())
        .max()
        .unwrap_or(1)
        .max(1);
    let fits = max_binding_bytes / (widest as u64 * crate::gpu::shader_types::RECORD_BYTES);
    options
        .batch
        .unwrap_or(BATCH_VERTEX_FRAMES / vertices)
        .clamp(1, MAX_BATCH_FRAMES)
        .min(options.frames.max(1))
        .min(usize::try_from(fits).unwrap_or(usize::MAX).max(1))
}

impl CompareOptions {
    /// Validation rules: 1. at least one frame; 2. at least one capture path; 3. the uniform
    /// palette path reads back through the draw only (no capture shader, no compute
    /// skinning); 4. `tolerance_rel` is finite and in [0, 1].
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
        if let Some(PaletteSource::Uniform { .. }) = self.palette
            && self.captures.iter().any(|c| c.storage_only())
        {
            return Err(Error::job(
                "CompareOptions",
                3,
                "the capture shader and compute skinning read the storage palette; the uniform \
                 palette path reads back through the draw capture",
            ));
        }
        if !(0.0..=1.0).contains(&self.tolerance_rel) {
            return Err(Error::job(
                "CompareOptions",
                4,
                format!(
                    "tolerance {} is not a fraction of the bounding-box diagonal in [0, 1]",
                    self.tolerance_rel
                ),
            ));
        }
        Ok(())
    }
}

/// The GPU side of a comparison: the scene as drawn (whole, or partitioned for the uniform
/// palette), read back per frame onto the source draws.
enum GpuSide {
    Whole(GpuReadback),
    Parts {
        part: Box<PartitionedScene>,
        character: Box<Character>,
        readback: GpuReadback,
        draws: Vec<usize>,
    },
}

impl GpuSide {
    /// Set up for `source` on `scene`; on the uniform path also the partitioned scene.
    fn new(
        ctx: &GpuContext,
        scene: &Scene,
        cpu: &Character,
        max_influences: Option<usize>,
        source: PaletteSource,
        skin: SkinOptions,
        batch: usize,
    ) -> Result<(GpuSide, Option<Box<PartitionedScene>>)> {
        match source {
            PaletteSource::Storage => {
                let mut g = match batch {
                    1 => GpuReadback::new(ctx, scene, &cpu.frame, max_influences)?,
                    n => GpuReadback::batched(ctx, scene, &cpu.frame, max_influences, n as u32)?,
                };
                g.gpu.set_all_skin_options(ctx, skin);
                Ok((GpuSide::Whole(g), None))
            }
            PaletteSource::Uniform { bones } => {
                // An influence limit applies before the split (the CPU side reduces the same).
                let reduced;
                let base = match max_influences {
                    Some(k) => {
                        reduced = reduce_scene_influences(scene, k);
                        &reduced
                    }
                    None => scene,
                };
                let part = Box::new(PartitionedScene::new(base, bones as usize)?);
                let mut character = Box::new(CharacterSetup::clip(None).build(&part.scene)?);
                character.cpu_skinning = false;
                let mut readback =
                    GpuReadback::with_palette(ctx, &part.scene, &character.frame, None, source)?;
                readback.gpu.set_all_skin_options(ctx, skin);
                let draws = (0..part.scene.draws.len()).collect();
                let copy = part.clone();
                Ok((
                    GpuSide::Parts {
                        part,
                        character,
                        readback,
                        draws,
                    },
                    Some(copy),
                ))
            }
        }
    }

    fn set_clip(&mut self, anim: Option<usize>) -> Result<()> {
        match self {
            GpuSide::Whole(_) => Ok(()),
            GpuSide::Parts { character, .. } => character.set_clip(anim, false),
        }
    }

    /// Frames read back together ([`GpuSide::read_frames`]).
    fn batch(&self) -> usize {
        match self {
            GpuSide::Whole(g) => g.batch(),
            GpuSide::Parts { .. } => 1,
        }
    }

    /// The GPU's vertices of every source draw at each of `times` (at most
    /// [`GpuSide::batch`]), read through each of `paths`: `[path][frame][k]`. `palettes` and
    /// `outputs` are the CPU reference's per frame; `frame` its frame state when the batch
    /// is that one frame ([`GpuReadback::read_frames_each`]); `scene` the CPU side's.
    #[allow(clippy::too_many_arguments)]
    fn read_frames(
        &mut self,
        ctx: &GpuContext,
        (scene, frame): (&Scene, Option<&crate::frame::FrameState>),
        times: &[f32],
        palettes: &[Vec<glam::Mat4>],
        outputs: &[Vec<SkinnedVertices>],
        paths: &[CapturePath],
        draws: &[usize],
    ) -> Result<Vec<Vec<Vec<SkinnedVertices>>>> {
        match self {
            GpuSide::Whole(g) => g.read_frames_each(ctx, scene, frame, palettes, paths, draws),
            GpuSide::Parts {
                part,
                character,
                readback,
                draws: all,
            } => {
                let mut each = vec![Vec::with_capacity(times.len()); paths.len()];
                for (&t, reference) in times.iter().zip(outputs) {
                    character.update(t, COMPARE_DT_S)?;
                    for (frames, &path) in each.iter_mut().zip(paths) {
                        let parts =
                            readback.read(ctx, &character.scene, &character.frame, path, all)?;
                        // Vertices in no submesh (no face uses them) keep the reference's
                        // values.
                        let mut out = reference.clone();
                        part.scatter(&parts, &mut out)?;
                        frames.push(draws.iter().filter_map(|&d| out.get(d).cloned()).collect());
                    }
                }
                Ok(each)
            }
        }
    }
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            frames: 16,
            max_influences: None,
            captures: vec![CapturePath::CaptureShader, CapturePath::Draw],
            palette: None,
            skin: SkinOptions::default(),
            batch: None,
            tolerance_rel: CPU_GPU_TOLERANCE_REL,
        }
    }
}

/// `scene` with every primitive's weights reduced to the `k` largest (renormalised), as
/// the influence limit of a [`crate::character::CharacterSetup`] reduces them.
fn reduce_scene_influences(scene: &Scene, k: usize) -> Scene {
    let mut out = scene.clone();
    for prim in out.meshes.iter_mut().flat_map(|m| m.primitives.iter_mut()) {
        if let Some(w) = prim.skin_weights.as_mut() {
            *w = crate::skin::weights::reduce_influences(w, k).0;
        }
    }
    out
}

/// `count` evenly spaced times over animation `anim` (both ends included); `[0]` for rest.
pub fn frame_times(scene: &Scene, anim: Option<usize>, count: usize) -> Vec<f32> {
    let duration = anim
        .and_then(|a| scene.animations.get(a))
        .map_or(0.0, |a| a.duration_s());
    if count <= 1 || duration == 0.0 {
        return vec![0.0];
    }
    // duration × fraction, never duration × i first: a clip of 1e38 s overflows that.
    (0..count)
        .map(|i| duration * (i as f32 / (count - 1) as f32))
        .collect()
}

/// Compare CPU and GPU skinning of every draw over `options.frames` frames of each of
/// `anims`; `progress(done, total)` counts frames, called after each batch.
pub fn compare(
    ctx: &GpuContext,
    scene: &Scene,
    anims: &[Option<usize>],
    options: &CompareOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<Comparison> {
    options.validate()?;
    let source = choose_source(ctx, options.palette)?;
    let options = &CompareOptions {
        palette: Some(source),
        ..options.clone()
    };
    options.validate()?;
    let mut sides = Sides::new(ctx, scene, options, source)?;
    let mut result = Vec::with_capacity(anims.len());
    let mut diagonal: f64 = 0.0;
    let total: usize = anims
        .iter()
        .map(|&a| frame_times(scene, a, options.frames).len())
        .sum();
    let mut done = 0;
    progress(0, total);
    for &anim in anims {
        let mut tick = |frames: usize| {
            done += frames;
            progress(done, total);
        };
        result.push(sides.compare_anim(ctx, scene, anim, options, &mut diagonal, &mut tick)?);
    }
    let mut cmp = Comparison {
        model: scene.name.clone(),
        adapter: ctx.describe(),
        diagonal,
        tolerance_rel: options.tolerance_rel,
        normal_tolerance: NORMAL_TOLERANCE,
        max_influences: options.max_influences,
        vertices_reduced: sides.vertices_reduced,
        palette: source.describe(),
        skinning: options.skin.describe(),
        split: sides.split,
        captures: options.captures.clone(),
        anims: result,
        passed: false,
    };
    cmp.judge();
    Ok(cmp)
}

/// The characters a comparison plays: the CPU reference, the GPU side, and the unreduced CPU
/// path when the cost of reducing (or fitting) the influences is asked for.
struct Sides {
    cpu: Character,
    gpu: GpuSide,
    full: Option<Character>,
    split: Option<PaletteSplit>,
    vertices_reduced: usize,
}

impl Sides {
    /// Set up both sides of a comparison of `scene` on `source`.
    fn new(
        ctx: &GpuContext,
        scene: &Scene,
        options: &CompareOptions,
        source: PaletteSource,
    ) -> Result<Sides> {
        let k = options.max_influences;
        let setup = CharacterSetup {
            max_influences: k,
            skin: options.skin,
            ..CharacterSetup::clip(None)
        };
        let mut cpu = setup.build(scene)?;
        let max_binding = ctx.device.limits().max_storage_buffer_binding_size;
        let batch = batch_frames(scene, options, source, max_binding);
        let (gpu, part) = GpuSide::new(ctx, scene, &cpu, k, source, options.skin, batch)?;
        let mut vertices_reduced = match &gpu {
            GpuSide::Whole(g) => g
                .gpu
                .draws
                .iter()
                .filter_map(|d| d.reduction)
                .map(|r| r.vertices_reduced)
                .sum(),
            GpuSide::Parts { .. } => 0,
        };
        let mut split = None;
        if let Some(p) = &part {
            // The reference skins with the fitted weights, as the submeshes do.
            vertices_reduced = p.dropped_influences();
            split = Some(PaletteSplit {
                k: p.k,
                submeshes: p.submesh_count(),
                dropped_influences: vertices_reduced,
            });
            if vertices_reduced > 0 {
                cpu = setup.build(&p.fitted_source(scene))?;
            }
        }
        // The unreduced CPU path, when the reduction's (or the fitting's) cost is asked for.
        let full = match k.is_some() || vertices_reduced > 0 && part.is_some() {
            true => {
                let unreduced = CharacterSetup {
                    max_influences: None,
                    ..setup.clone()
                };
                Some(unreduced.build(scene)?)
            }
            false => None,
        };
        Ok(Sides {
            cpu,
            gpu,
            full,
            split,
            vertices_reduced,
        })
    }

    /// Play `anim` on every side and compare them frame by frame, the GPU reading back a
    /// batch of frames at a time; `diagonal` grows to the largest first-frame bounds seen;
    /// `tick(frames)` after each batch.
    fn compare_anim(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        anim: Option<usize>,
        options: &CompareOptions,
        diagonal: &mut f64,
        tick: &mut dyn FnMut(usize),
    ) -> Result<AnimComparison> {
        let draws: Vec<usize> = (0..scene.draws.len()).collect();
        let times = frame_times(scene, anim, options.frames);
        self.cpu.set_clip(anim, false)?;
        self.gpu.set_clip(anim)?;
        if let Some(f) = &mut self.full {
            f.set_clip(anim, false)?;
        }
        let new_errors = || draws.iter().map(|&d| DrawErrors::new(scene, d)).collect();
        let mut per_path: Vec<Vec<DrawErrors>> =
            options.captures.iter().map(|_| new_errors()).collect();
        let mut draw_vs_compute: Vec<DrawErrors> = new_errors();
        let mut reduction_cost: Vec<DrawErrors> = new_errors();
        let cpu_scene = &self.cpu.scene;
        let mut surface_normals: Vec<SurfaceNormalErrors> = draws
            .iter()
            .filter_map(|&d| SurfaceNormalErrors::new(d, cpu_scene.primitive(&cpu_scene.draws[d])))
            .collect();
        let full_cost = self.full.is_some();
        let batch = self.gpu.batch().max(1);
        let chunks: Vec<&[f32]> = times.chunks(batch).collect();
        let Sides { cpu, gpu, full, .. } = self;
        let mut reference = Reference {
            cpu,
            full: full.as_mut(),
            draws: &draws,
            diagonal,
            surface_normals: &mut surface_normals,
            reduction_cost: &mut reduction_cost,
        };
        let mut current = reference.batch(chunks.first().copied().unwrap_or(&[]), true)?;
        let mut errors = Errors {
            per_path: &mut per_path,
            draw_vs_compute: &mut draw_vs_compute,
        };
        // The batch read last, its errors not yet added.
        let mut pending: Option<(&[f32], CpuBatch, Reads)> = None;
        for (bi, &chunk) in chunks.iter().enumerate() {
            let next_chunk = chunks.get(bi + 1).copied();
            // The GPU reads this batch while another thread adds the last batch's errors and
            // skins the next (a batch of one frame reads the CPU character's own frame, so
            // there the steps take turns).
            let (reads, next) = if batch > 1 {
                std::thread::scope(|s| {
                    let (r, e, last) = (&mut reference, &mut errors, pending.take());
                    let cpu = s.spawn(move || {
                        if let Some((t, b, reads)) = last {
                            e.add(t, &b, &reads);
                        }
                        next_chunk.map(|c| r.batch(c, false)).transpose()
                    });
                    let reads =
                        read_paths(ctx, gpu, (scene, None), chunk, &current, options, &draws);
                    let next = cpu.join().unwrap_or_else(|_| {
                        Err(Error::Gpu("the CPU reference's thread panicked".into()))
                    });
                    (reads, next)
                })
            } else {
                if let Some((t, b, reads)) = pending.take() {
                    errors.add(t, &b, &reads);
                }
                let at = (&reference.cpu.scene, Some(&reference.cpu.frame));
                let reads = read_paths(ctx, gpu, at, chunk, &current, options, &draws);
                let next = next_chunk.map(|c| reference.batch(c, false)).transpose();
                (reads, next)
            };
            let reads = reads?;
            match next? {
                Some(n) => pending = Some((chunk, std::mem::replace(&mut current, n), reads)),
                None => errors.add(chunk, &current, &reads),
            }
            tick(chunk.len());
        }
        let worst = per_path
            .iter()
            .skip(1)
            .fold(per_path.first().cloned().unwrap_or_default(), |acc, p| {
                acc.iter().zip(p).map(|(a, b)| a.worst_of(b)).collect()
            });
        let both = options.captures.contains(&CapturePath::CaptureShader)
            && options.captures.contains(&CapturePath::Draw);
        Ok(AnimComparison {
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
            reduction_cost: full_cost.then_some(reduction_cost),
            surface_normals,
            times,
        })
    }
}

/// A batch of the CPU reference: each frame's palette and skinned vertices.
struct CpuBatch {
    palettes: Vec<Vec<glam::Mat4>>,
    outputs: Vec<Vec<SkinnedVertices>>,
}

/// The CPU side of a comparison and what it measures on its own (the first frame's bounds,
/// its normals against its surface, the cost of reducing influences): sent to a thread of
/// its own while the GPU reads the previous batch.
struct Reference<'a> {
    cpu: &'a mut Character,
    full: Option<&'a mut Character>,
    draws: &'a [usize],
    diagonal: &'a mut f64,
    surface_normals: &'a mut [SurfaceNormalErrors],
    reduction_cost: &'a mut [DrawErrors],
}

impl Reference<'_> {
    /// Skin the frames at `times` (`first`: the clip's first batch).
    fn batch(&mut self, times: &[f32], first: bool) -> Result<CpuBatch> {
        let mut b = CpuBatch {
            palettes: Vec::with_capacity(times.len()),
            outputs: Vec::with_capacity(times.len()),
        };
        for (j, &t) in times.iter().enumerate() {
            self.frame(t, first && j == 0)?;
            b.palettes.push(self.cpu.frame.palette.clone());
            b.outputs.push(self.cpu.outputs.clone());
        }
        Ok(b)
    }

    /// The CPU reference at `t`: skinned, checked finite, the first frame's bounds into
    /// `diagonal`, its normals against its own surface, the unreduced path's distance.
    fn frame(&mut self, t: f32, first: bool) -> Result<()> {
        let cpu = &mut *self.cpu;
        cpu.update(t, COMPARE_DT_S)?;
        // A reference that overflowed compares as "equal" to anything: an error instead.
        crate::skin::check_finite(&cpu.scene, self.draws, Some(t), &cpu.outputs)?;
        if first && let Some(b) = bounds(&cpu.outputs) {
            *self.diagonal = self.diagonal.max(f64::from(bounds_diagonal(b)));
        }
        for sn in self.surface_normals.iter_mut() {
            if let Some(k) = self.draws.iter().position(|&d| d == sn.draw)
                && let Some(out) = cpu.outputs.get(k)
                && let Some(n) = &out.normals
            {
                let prim = cpu.scene.primitive(&cpu.scene.draws[sn.draw]);
                sn.add(&out.positions, n, &prim.indices);
            }
        }
        if let Some(f) = self.full.as_deref_mut() {
            f.update(t, COMPARE_DT_S)?;
            for (e, (a, b)) in self
                .reduction_cost
                .iter_mut()
                .zip(f.outputs.iter().zip(&cpu.outputs))
            {
                e.add(t, a, b);
            }
        }
        Ok(())
    }
}

/// Every capture path's reading of a batch: `[frame][k]` per path.
type Reads = Vec<(CapturePath, Vec<Vec<SkinnedVertices>>)>;

/// The GPU-against-CPU errors a comparison adds up, per capture path and between the capture
/// shader and the draw.
struct Errors<'a> {
    per_path: &'a mut [Vec<DrawErrors>],
    draw_vs_compute: &'a mut [DrawErrors],
}

impl Errors<'_> {
    /// Add a batch: the frames at `times`, the CPU's `batch` and each path's `reads`.
    fn add(&mut self, times: &[f32], batch: &CpuBatch, reads: &Reads) {
        for ((_, frames), errs) in reads.iter().zip(self.per_path.iter_mut()) {
            for ((&t, cpu), gpu) in times.iter().zip(&batch.outputs).zip(frames) {
                for (e, (c, g)) in errs.iter_mut().zip(cpu.iter().zip(gpu)) {
                    e.add(t, c, g);
                }
            }
        }
        let find = |p| reads.iter().find(|(q, _)| *q == p).map(|(_, v)| v);
        if let (Some(c), Some(d)) = (find(CapturePath::CaptureShader), find(CapturePath::Draw)) {
            for ((&t, cf), df) in times.iter().zip(c).zip(d) {
                for (e, (a, b)) in self.draw_vs_compute.iter_mut().zip(cf.iter().zip(df)) {
                    e.add(t, a, b);
                }
            }
        }
    }
}

/// Every capture path's reading of the batch `times` (CPU reference `batch`): `frame` is the
/// CPU character's frame when the batch is that one frame.
fn read_paths(
    ctx: &GpuContext,
    gpu: &mut GpuSide,
    at: (&Scene, Option<&crate::frame::FrameState>),
    times: &[f32],
    batch: &CpuBatch,
    options: &CompareOptions,
    draws: &[usize],
) -> Result<Reads> {
    let (palettes, outputs) = (&batch.palettes, &batch.outputs);
    let each = gpu.read_frames(ctx, at, times, palettes, outputs, &options.captures, draws)?;
    Ok(options.captures.iter().copied().zip(each).collect())
}

/// Where [`sample_frames`] takes its vertices from: who skins ([`Skinning`], the one choice of
/// who skins every command names) and, on the GPU, which readback checks it and where the
/// palette lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// Who skins.
    pub skinning: Skinning,
    /// The GPU's readback (`None`: the one `skinning` and the adapter imply,
    /// [`Source::readback`]); only for GPU skinning.
    pub capture: Option<CapturePath>,
    /// Where the GPU reads the joint matrices (`None`: the adapter's choice,
    /// [`choose_source`]; the uniform palette draws the partitioned scene, and vertices no
    /// face uses take the CPU's values); only for GPU skinning.
    pub palette: Option<PaletteSource>,
}

impl Source {
    /// The CPU reference.
    pub const CPU: Source = Source::of(Skinning::Cpu);

    /// `skinning`, read back (on the GPU) the way it implies, on the adapter's palette.
    pub const fn of(skinning: Skinning) -> Source {
        Source {
            skinning,
            capture: None,
            palette: None,
        }
    }

    /// GPU skinning read back through `capture`, on the adapter's palette: the compute pass
    /// for [`CapturePath::ComputePass`], the vertex shader's `skin()` for the others.
    pub const fn gpu(capture: CapturePath) -> Source {
        let skinning = match capture {
            CapturePath::ComputePass => Skinning::ComputePass,
            CapturePath::CaptureShader | CapturePath::Draw => Skinning::VertexShader,
        };
        Source {
            skinning,
            capture: Some(capture),
            palette: None,
        }
    }

    /// The readback that checks this skinning on `palette`: the compute-skinned buffer as
    /// drawn for [`Skinning::ComputePass`]; for the vertex shader the one asked for, else the
    /// capture shader where it runs (storage palette, compute shaders), else the draw's own
    /// vertex stage. Refuses a readback of other GPU code than the skinning's, and any
    /// readback or palette for the CPU.
    pub fn readback(self, ctx: &GpuContext, palette: PaletteSource) -> Result<CapturePath> {
        let refuse = |why: String| Err(Error::Gpu(why));
        match (self.skinning, self.capture) {
            (Skinning::Cpu, _) => refuse(
                "the CPU reference has no GPU readback (ask for vertex or compute skinning)".into(),
            ),
            (Skinning::ComputePass, None | Some(CapturePath::ComputePass)) => {
                Ok(CapturePath::ComputePass)
            }
            (Skinning::ComputePass, Some(c)) => refuse(format!(
                "compute skinning is read back as drawn ({}); {} reads the vertex shader's \
                 skin()",
                CapturePath::ComputePass.describe(),
                c.describe()
            )),
            (Skinning::VertexShader, Some(CapturePath::ComputePass)) => refuse(format!(
                "{} reads compute skinning, not the vertex shader's",
                CapturePath::ComputePass.describe()
            )),
            (Skinning::VertexShader, Some(c)) => Ok(c),
            (Skinning::VertexShader, None) => Ok(match palette {
                PaletteSource::Storage if ctx.compute_capture() => CapturePath::CaptureShader,
                _ => CapturePath::Draw,
            }),
        }
    }
}

/// Skinned vertices of `draws` at each of `times` of `anim` (not looping): `[time][k]`.
/// `ctx` is needed for the GPU sources. On the uniform palette path the vertices are the
/// fitted skin's (the same unless a face needed more than K bones).
pub fn sample_frames(
    ctx: Option<&GpuContext>,
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    draws: &[usize],
    source: Source,
    max_influences: Option<usize>,
) -> Result<Vec<Vec<SkinnedVertices>>> {
    let sampling = Sampling {
        source,
        max_influences,
        skin: SkinOptions::default(),
    };
    sample_frames_with(ctx, scene, anim, times, draws, &sampling)
}

/// How [`sample_frames_with`] skins.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Where the vertices come from.
    pub source: Source,
    /// Reduce to the K largest weights (renormalised).
    pub max_influences: Option<usize>,
    /// Blend mode and normals.
    pub skin: SkinOptions,
}

/// [`sample_frames`] in any skinning mode.
pub fn sample_frames_with(
    ctx: Option<&GpuContext>,
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    draws: &[usize],
    sampling: &Sampling,
) -> Result<Vec<Vec<SkinnedVertices>>> {
    let mut out = Vec::with_capacity(times.len());
    sample_frames_each(ctx, scene, anim, times, draws, sampling, |_, frame| {
        out.push(frame.to_vec());
        Ok(())
    })?;
    Ok(out)
}

/// [`sample_frames_with`] handing each time's frame (`[k]` = `draws[k]`) to `each(time
/// index, frame)` as it comes instead of keeping them: memory stays flat in the number of
/// times.
pub fn sample_frames_each(
    ctx: Option<&GpuContext>,
    scene: &Scene,
    anim: Option<usize>,
    times: &[f32],
    draws: &[usize],
    sampling: &Sampling,
    mut each: impl FnMut(usize, &[SkinnedVertices]) -> Result<()>,
) -> Result<()> {
    let Sampling {
        source,
        max_influences,
        skin,
    } = *sampling;
    let setup = CharacterSetup {
        max_influences,
        skin,
        ..CharacterSetup::clip(anim)
    };
    let mut c = setup.build(scene)?;
    if source.skinning == Skinning::Cpu {
        if source.capture.is_some() || source.palette.is_some() {
            return Err(Error::Gpu(
                "the CPU reference reads no GPU palette and has no GPU readback".into(),
            ));
        }
        let mut frame: Vec<SkinnedVertices> = Vec::with_capacity(draws.len());
        for (ti, &t) in times.iter().enumerate() {
            c.update(t, COMPARE_DT_S)?;
            frame.clear();
            frame.extend(draws.iter().map(|&d| c.outputs[d].clone()));
            crate::skin::check_finite(scene, draws, Some(t), &frame)?;
            each(ti, &frame)?;
        }
        return Ok(());
    }
    let ctx =
        ctx.ok_or_else(|| Error::NoAdapter("GPU skinning requested without a GPU context".into()))?;
    let palette = choose_source(ctx, source.palette)?;
    let path = source.readback(ctx, palette)?;
    let (mut gpu, part) = GpuSide::new(ctx, scene, &c, max_influences, palette, skin, 1)?;
    gpu.set_clip(anim)?;
    match &part {
        // The CPU side only fills vertices no submesh draws: with the fitted weights.
        Some(p) if p.dropped_influences() > 0 => {
            c = setup.build(&p.fitted_source(scene))?;
        }
        Some(_) => {}
        None => c.cpu_skinning = false,
    }
    for (ti, &t) in times.iter().enumerate() {
        c.update(t, COMPARE_DT_S)?;
        let palette = [c.frame.palette.clone()];
        let outputs = std::slice::from_ref(&c.outputs);
        let at = (&c.scene, Some(&c.frame));
        let frame = gpu
            .read_frames(ctx, at, &[t], &palette, outputs, &[path], draws)?
            .pop()
            .and_then(|mut frames| frames.pop())
            .unwrap_or_default();
        crate::skin::check_finite(scene, draws, Some(t), &frame)?;
        each(ti, &frame)?;
    }
    Ok(())
}
