//! A crowd on the GPU, timed (the GPU benchmark of `skinview bench`): N instances of one character
//! on a grid, each with its own time offset and palette, drawn into an offscreen 4× MSAA target.
//! On the storage palette (one palette buffer, a block per instance):
//! - the vertex-shader path: one instanced draw per primitive, `skin()` in the vertex stage;
//! - the compute-skinning path: one pass skins every instance into buffers
//!   ([`crate::gpu::ComputeSkinning`]), then a plain vertex shader draws them. That draw is
//!   also the vertex-shader path's floor: the same crowd, the same triangles, unskinned;
//! - the skinning pass alone in each [`DispatchOrder`], so the faster can be kept.
//!
//! On the uniform palette (K matrices a draw, WebGL2 class) only the vertex-shader path runs,
//! one draw per instance and submesh, each with its own uniform block.
//!
//! Each pass is timed with timestamp queries where the adapter offers them, and every path by
//! wall time (submit to completion) besides; medians over the frames. The CPU side (the
//! animation stage of every instance, the palette upload) is timed too.

use web_time::Instant;

use glam::Vec3;

use super::BACKGROUND;
use super::crowd_field::{CrowdField, FieldStats};
use super::pass_stamps::PassStamps;
use crate::camera::{Frustum, OrbitCamera};
use crate::character::Character;
use crate::crowd::{Crowd, CrowdLayer, CrowdSetup, MAX_CROWD_LAYERS, Member};
use crate::error::{Error, Result};
use crate::gpu::compute_skin::{DispatchOrder, bytes_moved};
use crate::gpu::{
    Camera, DrawOptions, GpuContext, GpuScene, MAX_INSTANCES, OffscreenTarget, PaletteSource,
    Renderer, Skinning, Target, ViewUniform,
};
use crate::image::Rgba8;
use crate::math::{box_corners, median};
use crate::skin::PaletteLayout;
use crate::skin::skinned_bounds::SkinnedBounds;

/// Frames drawn before timing starts (pipelines compiled, buffers resident, clocks up).
pub const WARM_UP_FRAMES: usize = 3;

/// Gap between neighbours on the grid, in model sizes (their widest horizontal extent).
const SPACING: f32 = 1.25;

/// Bytes the compute-skinning pass moved a vertex before joints and weights were packed (reports
/// made before `compute_bytes_per_instance` was recorded).
const UNPACKED_COMPUTE_BYTES_PER_VERTEX: u64 = 80;

/// Passes timed per frame, two timestamps each: the vertex path's draw, the compute path's
/// skinning pass and its draw, the skinning pass alone in each dispatch order.
const PASSES: usize = 5;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct CrowdOptions {
    /// Characters in the crowd, 1..=[`MAX_INSTANCES`].
    pub instances: u32,
    /// Frames timed (after [`WARM_UP_FRAMES`]).
    pub frames: usize,
    /// Target size in pixels.
    pub size: (u32, u32),
    /// Time step between frames (s).
    pub dt_s: f32,
    /// Where the skinning reads its palette: the storage buffer (both paths) or a uniform
    /// array of K matrices a draw (the vertex-shader path alone; every draw must use at most
    /// K joints: partition the scene first).
    pub palette: PaletteSource,
    /// Compute path: output buffers of at most this many bytes (`None`: the adapter's storage
    /// binding size), whole instances in each.
    pub max_buffer_bytes: Option<u64>,
    /// Time this GPU path alone (`None`: both, the vertex-shader path alone on the uniform
    /// palette).
    pub only: Option<Skinning>,
}

/// How the GPU passes were timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Timestamp queries at the start and end of each pass.
    TimestampQueries,
    /// The adapter has no timestamp queries: wall time from submission to completion only.
    WallClock,
}

/// One crowd benchmark's medians (the row the GPU benchmark writes as JSON; `report.json` of
/// `scripts/gpu-report.sh` holds these, [`super::gpu_report`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrowdReport {
    /// Model name.
    pub model: String,
    /// The adapter, in words.
    pub adapter: String,
    /// The adapter's backend (`Vulkan`, `Metal`…).
    pub backend: String,
    /// The adapter's driver and its version, as the driver reports them.
    pub driver: String,
    /// How the passes were timed.
    pub timing: Timing,
    /// Where the skinning read its palette: `storage` or `uniform K=…`.
    pub palette: String,
    /// Draws of one character (submeshes on the uniform palette).
    pub draws: usize,
    /// Characters drawn.
    pub instances: u32,
    /// Vertices of one character.
    pub vertices_per_instance: usize,
    /// Vertices skinned per frame (instances × vertices).
    pub vertices_per_frame: u64,
    /// Bytes the compute-skinning pass moves for one character
    /// ([`crate::gpu::compute_skin::bytes_moved`] over its draws; 0 in reports made before it
    /// was recorded).
    #[serde(default)]
    pub compute_bytes_per_instance: u64,
    /// Frames timed.
    pub frames: usize,
    /// Target size in pixels.
    pub size: (u32, u32),
    /// Palette entries of one character.
    pub palette_entries: usize,
    /// Palette bytes written per frame (every instance's matrices, and their DQS form when a
    /// draw skins with DQS).
    pub palette_upload_bytes: u64,
    /// CPU time writing the palettes (queue writes) per frame, ms.
    pub palette_upload_ms: f64,
    /// CPU animation stage of every instance per frame, ms.
    pub animation_ms: f64,
    /// Threads the animation stage ran on (0 in reports made before it ran in parallel).
    #[serde(default)]
    pub animation_threads: usize,
    /// Queue writes of palette data a frame (one on the storage palette, whatever the crowd's
    /// size; 0 in reports made before it was counted).
    #[serde(default)]
    pub palette_writes_per_frame: u32,
    /// Vertex-shader path: the draw pass (timestamps; `None` without), ms.
    pub vertex_draw_ms: Option<f64>,
    /// Vertex-shader path, submission to completion, ms (`None` when the compute path was
    /// timed alone).
    pub vertex_wall_ms: Option<f64>,
    /// Compute path: the skinning pass (timestamps), ms.
    pub compute_skin_ms: Option<f64>,
    /// Compute path: the plain draw of the skinned buffers (timestamps), ms: the same crowd
    /// drawn unskinned, the vertex-shader path's floor.
    pub compute_draw_ms: Option<f64>,
    /// Compute path, submission to completion, ms (`None` on the uniform palette).
    pub compute_wall_ms: Option<f64>,
    /// Output buffers the compute path's copies are split over (0 on the uniform palette).
    pub compute_buffers: u32,
    /// The dispatch order of the compute path.
    pub dispatch_order: DispatchOrder,
    /// The skinning pass submitted alone, once in each dispatch order.
    pub skin_alone: Vec<SkinAlone>,
}

/// The compute-skinning pass submitted alone in one dispatch order (medians).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkinAlone {
    /// The order.
    pub order: DispatchOrder,
    /// The pass (timestamps), ms.
    pub skin_ms: Option<f64>,
    /// Submission to completion, ms (what the skinning costs where timestamps are missing or
    /// not to be trusted).
    pub wall_ms: f64,
}

impl CrowdReport {
    /// The vertex-shader path's time a frame: its draw pass, or its wall time without
    /// timestamps (`None` when it was not timed).
    pub fn vertex_path_ms(&self) -> Option<f64> {
        self.vertex_draw_ms.or(self.vertex_wall_ms)
    }

    /// Skinned vertices per second of the vertex-shader path ([`CrowdReport::vertex_path_ms`]).
    pub fn vertex_path_vertices_per_s(&self) -> Option<f64> {
        self.vertex_path_ms()
            .map(|ms| per_s(self.vertices_per_frame, ms))
    }

    /// Vertices per second of the compute-skinning pass alone (timestamps only).
    pub fn compute_skin_vertices_per_s(&self) -> Option<f64> {
        self.compute_skin_ms
            .map(|ms| per_s(self.vertices_per_frame, ms))
    }

    /// The skinning pass alone in `order` (`None` on the uniform palette).
    pub fn alone(&self, order: DispatchOrder) -> Option<&SkinAlone> {
        self.skin_alone.iter().find(|a| a.order == order)
    }

    /// The skinning pass alone's time in ms: its timestamps, or its wall time where the
    /// adapter has none or they miss the work ([`CrowdReport::compute_timestamps_suspect`]).
    pub fn alone_ms(&self, alone: &SkinAlone) -> f64 {
        match alone.skin_ms {
            Some(ms) if !self.compute_timestamps_suspect() => ms,
            _ => alone.wall_ms,
        }
    }

    /// Vertices per second of the skinning pass alone ([`CrowdReport::alone_ms`]; 0 without a
    /// time).
    pub fn alone_vertices_per_s(&self, alone: &SkinAlone) -> f64 {
        per_s(self.vertices_per_frame, self.alone_ms(alone))
    }

    /// The faster dispatch order by the skinning pass alone ([`CrowdReport::alone_ms`]).
    pub fn faster_order(&self) -> Option<DispatchOrder> {
        let cost = |a: &SkinAlone| self.alone_ms(a);
        self.skin_alone
            .iter()
            .min_by(|a, b| cost(a).total_cmp(&cost(b)))
            .map(|a| a.order)
    }

    /// Bytes the skinning pass moves a vertex, on average over the character's vertices.
    pub fn compute_bytes_per_vertex(&self) -> f64 {
        match (self.compute_bytes_per_instance, self.vertices_per_instance) {
            (0, _) | (_, 0) => UNPACKED_COMPUTE_BYTES_PER_VERTEX as f64,
            (b, v) => b as f64 / v as f64,
        }
    }

    /// Bytes per second the skinning pass moved ([`CrowdReport::compute_bytes_per_vertex`]).
    pub fn compute_skin_bytes_per_s(&self) -> Option<f64> {
        self.compute_skin_vertices_per_s()
            .map(|v| v * self.compute_bytes_per_vertex())
    }

    /// The compute pass's timestamps are not to be trusted: the driver is known to stamp a
    /// compute pass without its work ([`COMPUTE_STAMPS_MISS_WORK`]), or they cover under a
    /// tenth of the same pass's wall time while that is over [`SUBMISSION_OVERHEAD_MS`] (so
    /// not submission overhead alone). The wall time is then the figure to read.
    pub fn compute_timestamps_suspect(&self) -> bool {
        let known = COMPUTE_STAMPS_MISS_WORK
            .iter()
            .any(|d| self.driver.contains(d));
        known
            || self.skin_alone.iter().any(|a| {
                a.skin_ms
                    .is_some_and(|ms| a.wall_ms > SUBMISSION_OVERHEAD_MS && ms < 0.1 * a.wall_ms)
            })
    }

    /// The vertex-shader path's draw over the same draw of pre-skinned vertices (the issue's
    /// "skinned draw within 1.3× of the unskinned draw"; timestamps only).
    pub fn skinned_over_plain_draw(&self) -> Option<f64> {
        match (self.vertex_draw_ms, self.compute_draw_ms) {
            (Some(v), Some(p)) if p > 0.0 => Some(v / p),
            _ => None,
        }
    }
}

/// Drivers whose compute-pass timestamps are known not to cover the pass's work: lavapipe
/// (Mesa's llvmpipe Vulkan driver, 22.3) writes both stamps before the work runs, so a pass
/// of millions of vertices reads as a few microseconds.
pub const COMPUTE_STAMPS_MISS_WORK: &[&str] = &["llvmpipe"];

/// The most a submission and its wait add to a short pass's wall time, in ms: on the H200 a
/// 0.03 ms skinning pass took up to 0.38 ms from submit to done (2026-11-27; the old bound of
/// 0.2 ms read that as stamps missing their work). Lavapipe's missed work is tens of ms.
pub const SUBMISSION_OVERHEAD_MS: f64 = 1.0;

/// A rate with an SI prefix: "1.23 G", "456 M", "12.0 k".
fn si(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.2} G", v / 1e9),
        v if v >= 1e6 => format!("{:.1} M", v / 1e6),
        v => format!("{:.1} k", v / 1e3),
    }
}

fn per_s(count: u64, ms: f64) -> f64 {
    if ms > 0.0 {
        count as f64 / (ms * 1e-3)
    } else {
        0.0
    }
}

impl std::fmt::Display for CrowdReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} x {}: {} vertices a character ({} draws), {} a frame, {}x{} px, {} frames, \
             {} palette, on {}",
            self.instances,
            self.model,
            self.vertices_per_instance,
            self.draws,
            self.vertices_per_frame,
            self.size.0,
            self.size.1,
            self.frames,
            self.palette,
            self.adapter
        )?;
        writeln!(
            f,
            "timing: {}",
            match self.timing {
                Timing::TimestampQueries => "timestamp queries per pass, medians",
                Timing::WallClock =>
                    "wall clock only (this adapter has no timestamp queries), medians",
            }
        )?;
        writeln!(
            f,
            "CPU per frame: animation stage of every character {:.3} ms on {}; palette upload \
             {:.1} KB in {}, {:.3} ms",
            self.animation_ms,
            crate::info::count(self.animation_threads, "thread", "threads"),
            self.palette_upload_bytes as f64 / 1024.0,
            crate::info::count(self.palette_writes_per_frame as usize, "write", "writes"),
            self.palette_upload_ms
        )?;
        let rate = si(self.vertex_path_vertices_per_s().unwrap_or(0.0));
        match (self.vertex_draw_ms, self.vertex_wall_ms) {
            (Some(ms), Some(wall)) => writeln!(
                f,
                "vertex-shader path: draw {ms:.3} ms ({rate} skinned vertices/s); submit to \
                 done {wall:.3} ms",
            )?,
            (_, Some(wall)) => writeln!(
                f,
                "vertex-shader path: {wall:.3} ms a frame ({rate} skinned vertices/s)",
            )?,
            (_, None) => writeln!(f, "vertex-shader path: not timed (compute path alone)")?,
        }
        let Some(wall) = self.compute_wall_ms else {
            return match self.palette.as_str() {
                "storage" => writeln!(f, "compute path: not timed (vertex-shader path alone)"),
                palette => writeln!(f, "compute path: not on the {palette} palette"),
            };
        };
        let suspect = self.compute_timestamps_suspect();
        match (self.compute_skin_ms, self.compute_draw_ms) {
            // Untrusted stamps: the wall time leads, and no rate or bandwidth comes from them.
            (Some(_), _) if suspect => writeln!(
                f,
                "compute path ({}, {}): {wall:.3} ms a frame submit to done (skinning \
                 pass and draw; {} skinned vertices/s); the pass's timestamps are not used: \
                 this adapter stamps a compute pass without its work",
                self.dispatch_order.name(),
                crate::info::count(self.compute_buffers as usize, "buffer", "buffers"),
                si(per_s(self.vertices_per_frame, wall)),
            )?,
            (Some(skin), Some(draw)) => {
                writeln!(
                    f,
                    "compute path ({}, {}): skinning pass {skin:.3} ms ({} vertices/s, \
                     {}B/s at {:.0} B a vertex) + plain draw {draw:.3} ms; \
                     submit to done {wall:.3} ms",
                    self.dispatch_order.name(),
                    crate::info::count(self.compute_buffers as usize, "buffer", "buffers"),
                    si(self.compute_skin_vertices_per_s().unwrap_or(0.0)),
                    si(self.compute_skin_bytes_per_s().unwrap_or(0.0)),
                    self.compute_bytes_per_vertex(),
                )?;
                if let Some(r) = self.skinned_over_plain_draw() {
                    writeln!(
                        f,
                        "skinned draw / the same draw unskinned: {r:.2}x (vertex-shader path's \
                         draw over the compute path's)"
                    )?;
                }
            }
            _ => writeln!(
                f,
                "compute path: {wall:.3} ms a frame (skinning pass and draw)"
            )?,
        }
        for a in &self.skin_alone {
            let stamped = a
                .skin_ms
                .filter(|_| !suspect)
                .map(|ms| format!("pass {ms:.3} ms, "))
                .unwrap_or_default();
            writeln!(
                f,
                "compute skinning pass alone, {}: {stamped}{:.3} ms submit to done ({} \
                 vertices/s)",
                a.order.name(),
                a.wall_ms,
                si(self.alone_vertices_per_s(a))
            )?;
        }
        Ok(())
    }
}

/// Columns and rows of the square grid of `n` instances.
fn grid_shape(n: u32) -> (u32, u32) {
    let cols = (n as f64).sqrt().ceil().max(1.0) as u32;
    (cols, n.div_ceil(cols))
}

/// Where instance `i` of `n` stands: a square grid centred on the origin, `step` apart.
pub(super) fn grid_offset(i: u32, n: u32, step: f32) -> Vec3 {
    let (cols, rows) = grid_shape(n);
    let x = (i % cols) as f32 - (cols - 1) as f32 / 2.0;
    let z = (i / cols) as f32 - (rows - 1) as f32 / 2.0;
    Vec3::new(x * step, 0.0, z * step)
}

/// The corners of the field's occupied cells as a view frames them: `one` (a character's box
/// in its own space) over the grid's full rows, and over its last row's characters when that
/// row is partly filled. A field of 5 is a row of 3 and a row of 2: the sixth cell stays out of
/// the framing (framed as one box, the empty cell nearest the eye left the lower part of the
/// view empty). 8 or 16 points.
pub(super) fn field_corners(one: (Vec3, Vec3), n: u32, step: f32) -> Vec<Vec3> {
    let n = n.max(1);
    let (cols, _) = grid_shape(n);
    let (full_rows, rest) = (n / cols, n % cols);
    let mut cells = Vec::with_capacity(2);
    if full_rows > 0 {
        cells.push((0, cols * full_rows - 1));
    }
    if rest > 0 {
        cells.push((cols * full_rows, n - 1));
    }
    cells
        .into_iter()
        .flat_map(|(first, last)| {
            // `first` is a row's column 0 and `last` its box's largest column and row.
            box_corners((
                one.0 + grid_offset(first, n, step),
                one.1 + grid_offset(last, n, step),
            ))
        })
        .collect()
}

/// Record one draw of the whole crowd with `skinning` into a pass on `target`.
#[allow(clippy::too_many_arguments)]
fn record_draw(
    enc: &mut wgpu::CommandEncoder,
    target: &OffscreenTarget,
    renderer: &Renderer,
    camera: &Camera,
    gpu: &GpuScene,
    skinning: Skinning,
    timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
) {
    let mut pass = target.begin_pass_timed(enc, BACKGROUND, timestamps);
    renderer.draw_with(
        &mut pass,
        camera,
        gpu,
        DrawOptions {
            skinning,
            wireframe: false,
            instances: gpu.drawn_instances(),
        },
    );
}

/// Time offset of instance `i` within `period_s`: golden-ratio steps, so no two neighbours
/// move in step.
fn time_offset_s(i: u32, period_s: f32) -> f32 {
    (i as f64 * 0.618_033_988_749_895).fract() as f32 * period_s
}

/// Submit `enc` and wait until the GPU is done; returns the time that took (ms).
fn submit_and_wait(ctx: &GpuContext, enc: wgpu::CommandEncoder) -> Result<f64> {
    let t0 = Instant::now();
    ctx.queue.submit([enc.finish()]);
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Gpu(format!("poll: {e}")))?;
    ctx.check()?;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

/// Per-frame samples of every figure, reduced to medians at the end.
#[derive(Default)]
struct Samples {
    animation: Vec<f64>,
    upload: Vec<f64>,
    vertex_wall: Vec<f64>,
    compute_wall: Vec<f64>,
    alone_wall: [Vec<f64>; 2],
    /// Per pass, in [`PASSES`] order.
    stamps: [Vec<f64>; PASSES],
    /// Palette writes of the last frame.
    palette_writes: u32,
    /// Threads of the crowd stage.
    threads: usize,
}

/// Where the crowd's characters stand and how their clocks are offset.
pub(super) struct CrowdLayout {
    /// Grid spacing (model units).
    pub(super) step_m: f32,
    /// The longest clip: instance clocks are offset within it.
    pub(super) period_s: f32,
}

/// The CPU side of one crowd frame at `time_s`: the crowd stage (every character's palette,
/// in parallel over characters) and the upload of every palette, moved to its place on the
/// grid, in one write. Returns the seconds spent in each.
fn animate_crowd(
    ctx: &GpuContext,
    crowd: &mut Crowd,
    gpu: &mut GpuScene,
    offsets: &[Vec3],
    time_s: f32,
) -> Result<(f64, f64)> {
    let t0 = Instant::now();
    crowd.update(time_s)?;
    let t1 = Instant::now();
    gpu.write_crowd(ctx, crowd.palettes(), offsets)?;
    Ok(((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64()))
}

/// The crowd stage for `n` copies of `character`: each plays the character's clips (its
/// first [`MAX_CROWD_LAYERS`] layers, at their weights, over the whole body) from its own
/// offset in the longest clip. What a character adds on top of its clips (IK, bone links,
/// masks, fades) is its own; the crowd plays clips.
pub fn crowd_of(character: &Character, n: u32, period_s: f32, threads: usize) -> Result<Crowd> {
    let mut layers = [None; MAX_CROWD_LAYERS];
    for (slot, l) in layers.iter_mut().zip(character.layers()) {
        *slot = Some(CrowdLayer {
            clip: l.anim,
            weight: l.weight,
        });
    }
    let members = (0..n)
        .map(|i| Member {
            layers,
            phase_s: time_offset_s(i, period_s),
            speed: 1.0,
        })
        .collect();
    let setup = CrowdSetup {
        threads,
        ..CrowdSetup::new(members)
    };
    Crowd::new(character.scene.clone(), setup)
}

/// Run the crowd benchmark on `character` (its clips play looping through the crowd stage,
/// [`crowd_of`], on every core): `progress(frame)` after each timed frame. Returns the report
/// and the last frame as drawn by the compute path (the vertex path on the uniform palette;
/// both draw the same picture, tests compare them).
pub fn run_crowd(
    ctx: &GpuContext,
    character: &mut Character,
    options: &CrowdOptions,
    mut progress: impl FnMut(usize),
) -> Result<(CrowdReport, Rgba8)> {
    let n = options.instances;
    check_crowd(ctx, options)?;
    let (layout, corners) = crowd_layout(character, n)?;
    let model = character.scene.name.clone();
    let mut passes = CrowdPasses::new(ctx, character, options, &corners)?;
    let mut crowd = crowd_of(character, n, layout.period_s, 0)?;
    let offsets: Vec<Vec3> = (0..n).map(|i| grid_offset(i, n, layout.step_m)).collect();
    // Morph weights are shared by the crowd: the character's at rest.
    passes
        .gpu
        .write_morph_weights(ctx, &character.scene, &character.frame);
    let mut samples = Samples::default();
    let total = WARM_UP_FRAMES + options.frames.max(1);
    let mut image = None;
    for frame in 0..total {
        let t_s = frame as f32 * options.dt_s;
        passes.gpu.take_writes();
        let (anim_s, upload_s) = animate_crowd(ctx, &mut crowd, &mut passes.gpu, &offsets, t_s)?;
        samples.palette_writes = passes.gpu.take_writes().palette;
        let walls = passes.time_paths(ctx)?;
        if frame < WARM_UP_FRAMES {
            continue;
        }
        passes.read_timestamps(ctx, &mut samples)?;
        samples.animation.push(anim_s * 1e3);
        samples.upload.push(upload_s * 1e3);
        samples.vertex_wall.extend(walls.vertex_ms);
        samples.compute_wall.push(walls.compute_ms);
        for (k, ms) in walls.alone_ms.into_iter().enumerate() {
            samples.alone_wall[k].push(ms);
        }
        progress(frame - WARM_UP_FRAMES);
        if frame + 1 == total {
            image = Some(passes.picture(ctx)?);
        }
    }
    samples.threads = crowd.threads();
    let report = summarize(ctx, &passes.gpu, options, model, n, samples);
    let image = image.ok_or_else(|| Error::Gpu("the crowd drew no frame".into()))?;
    Ok((report, image))
}

/// A still of a crowd ([`render_crowd`]).
#[derive(Clone, Copy, Debug)]
pub struct CrowdStill {
    /// Characters, 1..=[`MAX_INSTANCES`].
    pub instances: u32,
    /// Image size in pixels.
    pub size: (u32, u32),
    /// Crowd time (s): each character is at its own phase of its clip.
    pub time_s: f32,
    /// Where the skinning reads its palette.
    pub palette: PaletteSource,
    /// Who skins: the vertex shader or the compute pass (storage palette only).
    pub skinning: Skinning,
    /// The camera (None: the whole field framed).
    pub camera: Option<OrbitCamera>,
    /// Skip the characters outside the view (the same picture, fewer characters drawn).
    pub cull: bool,
}

/// A field of `still.instances` copies of `character`'s model, each cycling through the
/// model's clips from its own phase ([`CrowdSetup::cycling`], as the viewer's crowd plays),
/// animated by the crowd stage, culled to the view when asked, uploaded in one write and
/// drawn by `still.skinning` into a 4× MSAA image. Returns the image and the frame's figures.
pub fn render_crowd(
    ctx: &GpuContext,
    character: &mut Character,
    still: &CrowdStill,
) -> Result<(Rgba8, FieldStats)> {
    if !still.time_s.is_finite() {
        return Err(Error::TimeRange {
            time_s: still.time_s,
            max_s: f32::MAX,
        });
    }
    let options = CrowdOptions {
        instances: still.instances,
        frames: 1,
        size: still.size,
        dt_s: 1.0 / 60.0,
        palette: still.palette,
        max_buffer_bytes: None,
        only: Some(still.skinning),
    };
    check_crowd(ctx, &options)?;
    let mut field = CrowdField::new(
        ctx,
        character,
        still.instances,
        still.palette,
        still.skinning,
    )?;
    let target = OffscreenTarget::new(ctx, Target::OFFSCREEN, still.size.0, still.size.1)?;
    let mut renderer = Renderer::new(ctx, Target::OFFSCREEN)?;
    renderer.prepare(ctx, still.palette)?;
    let camera = Camera::new(ctx);
    let aspect = target.aspect();
    let orbit = still
        .camera
        .unwrap_or_else(|| framing_field(field.framing_points(), aspect));
    camera.set(ctx, &ViewUniform::from_camera(&orbit, aspect));
    let frustum = Frustum::new(orbit.clip_from_world(aspect));
    let stats = field.update(ctx, still.time_s, still.cull.then_some(&frustum))?;
    field.gpu().submit_compute_skinning(ctx);
    let mut enc = encoder(ctx, "crowd: still");
    record_draw(
        &mut enc,
        &target,
        &renderer,
        &camera,
        field.gpu(),
        still.skinning,
        None,
    );
    Ok((target.read_rgba8(ctx, enc)?, stats))
}

/// Refuse a crowd size out of range, and the storage palette on an adapter without storage
/// buffers in the vertex stage or compute shaders.
fn check_crowd(ctx: &GpuContext, options: &CrowdOptions) -> Result<()> {
    let n = options.instances;
    if !(1..=MAX_INSTANCES).contains(&n) {
        return Err(Error::Gpu(format!(
            "a crowd of {n} characters: 1..={MAX_INSTANCES}"
        )));
    }
    let storage = options.palette == PaletteSource::Storage;
    match options.only {
        Some(Skinning::Cpu) => {
            return Err(Error::Gpu(
                "a crowd is drawn with GPU skinning: the vertex shader or the compute pass".into(),
            ));
        }
        Some(Skinning::ComputePass) if !storage => {
            return Err(Error::Gpu(format!(
                "compute skinning reads the storage palette, not the {}",
                options.palette.describe()
            )));
        }
        _ => {}
    }
    if storage && (!ctx.storage_palette() || !ctx.compute_capture()) {
        return Err(Error::Gpu(format!(
            "a crowd on the storage palette needs storage buffers in the vertex \
             stage and compute shaders (one palette buffer for every character, the \
             compute-skinning path); {} has not: try the uniform palette",
            ctx.info.name
        )));
    }
    Ok(())
}

/// The default camera on a field whose occupied cells have these [`field_corners`].
pub(super) fn framing_field(corners: &[Vec3], aspect: f32) -> OrbitCamera {
    // The corners come from a finite box, so some point is finite; the unit box otherwise.
    OrbitCamera::framing_points(corners, aspect)
        .unwrap_or_else(|| OrbitCamera::framing(Vec3::NEG_ONE, Vec3::ONE, aspect))
}

/// The grid of `n` copies of `character` and the corners a view frames ([`field_corners`]),
/// from the bounds of one character at the rest pose of its clip (skinned on the CPU once).
pub(super) fn crowd_layout(character: &mut Character, n: u32) -> Result<(CrowdLayout, Vec<Vec3>)> {
    character.cpu_skinning = true;
    character.update(0.0, 0.0)?;
    let (lo, hi) =
        crate::skin::bounds(&character.outputs).ok_or_else(|| Error::NothingToRender {
            model: character.scene.name.clone(),
        })?;
    character.cpu_skinning = false;
    let extent = hi - lo;
    let step = SPACING * extent.x.max(extent.z).max(extent.length() * 1e-3).max(1e-6);
    let period_s = character
        .scene
        .animations
        .iter()
        .map(|a| a.duration_s())
        .fold(0.0f32, f32::max)
        .max(1.0);
    let layout = CrowdLayout {
        step_m: step,
        period_s,
    };
    let reach = motion_envelope(character, (lo, hi))?;
    Ok((layout, field_corners(reach, n, step)))
}

/// Samples a second at which [`motion_envelope`] bounds a clip, and at most this many a clip
/// and in all: the reach of a clip is framed, not every frame of it (a wave's or a jump's peak
/// falls between samples by at most what a 30 Hz frame moves).
const ENVELOPE_HZ: f32 = 30.0;
const ENVELOPE_SAMPLES_PER_CLIP: usize = 64;
const ENVELOPE_SAMPLES: usize = 4096;

/// The box one character reaches in its own space while playing any of its scene's clips,
/// joined to `rest` (its box at rest): what a view of the field frames, so that arms raised or
/// a walk's stride stay in view. Each clip is sampled on a one-thread [`Crowd`] and bounded
/// as culling bounds a character ([`SkinnedBounds`]: joint boxes moved by the palette).
fn motion_envelope(character: &Character, rest: (Vec3, Vec3)) -> Result<(Vec3, Vec3)> {
    let scene = &character.scene;
    let members: Vec<Member> = scene
        .animations
        .iter()
        .enumerate()
        .flat_map(|(clip, a)| {
            let d = a.duration_s();
            let k = ((d * ENVELOPE_HZ).ceil() as usize).clamp(1, ENVELOPE_SAMPLES_PER_CLIP);
            (0..k).map(move |i| Member::clip(clip, d * i as f32 / k as f32))
        })
        .take(ENVELOPE_SAMPLES)
        .collect();
    if members.is_empty() {
        return Ok(rest);
    }
    let mut setup = CrowdSetup::new(members);
    setup.threads = 1;
    let mut crowd = Crowd::new(scene.clone(), setup)?;
    crowd.update(0.0)?;
    let bounds = SkinnedBounds::new(scene, &PaletteLayout::new(scene), |d| {
        character.skin_options(d).mode
    });
    let mut boxes = Vec::new();
    crowd.bound(&bounds, &character.frame.pose.morph_weights, &mut boxes)?;
    Ok(boxes
        .iter()
        .flatten()
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .fold(rest, |(lo, hi), (a, b)| (lo.min(*a), hi.max(*b))))
}

/// Wall times of one frame's GPU work (ms): each path, and the skinning pass alone in each
/// dispatch order (0 where the compute path does not run).
struct PathWalls {
    vertex_ms: Option<f64>,
    compute_ms: f64,
    alone_ms: [f64; 2],
}

/// What the crowd is drawn with: the crowd's scene on the GPU, the offscreen target, the
/// renderer, the camera framing the field's corners and the timestamp queries (where the adapter has
/// them).
struct CrowdPasses {
    gpu: GpuScene,
    target: OffscreenTarget,
    renderer: Renderer,
    camera: Camera,
    queries: Option<PassStamps>,
    /// The one path timed ([`CrowdOptions::only`]).
    only: Option<Skinning>,
}

impl CrowdPasses {
    /// Upload `character`'s scene for the crowd (and its compute skinning on the storage
    /// palette), and frame the field's `corners` ([`field_corners`]).
    fn new(
        ctx: &GpuContext,
        character: &Character,
        options: &CrowdOptions,
        corners: &[Vec3],
    ) -> Result<CrowdPasses> {
        let mut gpu = GpuScene::crowd_with_palette(
            ctx,
            &character.scene,
            &character.frame,
            character.max_influences(),
            options.instances,
            options.palette,
        )?;
        for d in 0..character.scene.draws.len() {
            gpu.set_skin_options(ctx, d, character.skin_options(d));
        }
        if options.palette == PaletteSource::Storage && options.only != Some(Skinning::VertexShader)
        {
            gpu.enable_compute_skinning_with(ctx, options.max_buffer_bytes)?;
        }
        let target = OffscreenTarget::new(ctx, Target::OFFSCREEN, options.size.0, options.size.1)?;
        let mut renderer = Renderer::new(ctx, Target::OFFSCREEN)?;
        renderer.prepare(ctx, options.palette)?;
        let camera = Camera::new(ctx);
        let orbit = framing_field(corners, target.aspect());
        camera.set(ctx, &ViewUniform::from_camera(&orbit, target.aspect()));
        let queries = PassStamps::new(ctx, PASSES as u32, "crowd timestamps");
        Ok(CrowdPasses {
            gpu,
            target,
            renderer,
            camera,
            queries,
            only: options.only,
        })
    }

    /// Record one draw of the whole crowd with `skinning`.
    fn draw(
        &self,
        enc: &mut wgpu::CommandEncoder,
        skinning: Skinning,
        stamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) {
        let (target, renderer, camera) = (&self.target, &self.renderer, &self.camera);
        record_draw(enc, target, renderer, camera, &self.gpu, skinning, stamps);
    }

    /// One frame's GPU work, each part submitted and waited for: the vertex-shader path, then
    /// (where it runs) the compute path and the skinning pass alone in each dispatch order.
    fn time_paths(&self, ctx: &GpuContext) -> Result<PathWalls> {
        let q = self.queries.as_ref();
        let mut vertex_ms = None;
        if self.only != Some(Skinning::ComputePass) {
            let mut enc = encoder(ctx, "crowd: vertex-shader path");
            self.draw(&mut enc, Skinning::VertexShader, q.map(|q| q.render(0)));
            vertex_ms = Some(submit_and_wait(ctx, enc)?);
        }
        let (mut compute_ms, mut alone_ms) = (0.0, [0.0; 2]);
        if let Some(compute) = self.gpu.compute_skinning() {
            // The compute path: the skinning pass, then the plain draw of its buffers.
            let mut enc = encoder(ctx, "crowd: compute path");
            self.gpu
                .record_compute_skinning(&mut enc, q.map(|q| q.compute(2)));
            self.draw(&mut enc, Skinning::ComputePass, q.map(|q| q.render(4)));
            compute_ms = submit_and_wait(ctx, enc)?;
            // The skinning pass alone, in each dispatch order.
            for (k, order) in DispatchOrder::ALL.into_iter().enumerate() {
                let mut enc = encoder(ctx, "crowd: compute skinning alone");
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("compute skinning alone"),
                        timestamp_writes: q.map(|q| q.compute(6 + 2 * k as u32)),
                    });
                    compute.record_in(&mut pass, &self.gpu, order);
                }
                alone_ms[k] = submit_and_wait(ctx, enc)?;
            }
        }
        Ok(PathWalls {
            vertex_ms,
            compute_ms,
            alone_ms,
        })
    }

    /// The frame's pass durations from the timestamp queries into `samples` (nothing without
    /// queries).
    fn read_timestamps(&self, ctx: &GpuContext, samples: &mut Samples) -> Result<()> {
        let Some(q) = &self.queries else {
            return Ok(());
        };
        let mut enc = encoder(ctx, "crowd: timestamps");
        q.resolve(&mut enc);
        submit_and_wait(ctx, enc)?;
        let ms = q.read(ctx)?;
        for (k, v) in samples.stamps.iter_mut().enumerate() {
            v.push(ms.get(k).copied().flatten().unwrap_or(0.0));
        }
        Ok(())
    }

    /// The crowd as drawn by the compute path where it runs, else by the vertex-shader path.
    fn picture(&self, ctx: &GpuContext) -> Result<Rgba8> {
        let mut enc = encoder(ctx, "crowd: picture");
        let skinning = match self.gpu.compute_skinning() {
            Some(_) => Skinning::ComputePass,
            None => Skinning::VertexShader,
        };
        self.draw(&mut enc, skinning, None);
        self.target.read_rgba8(ctx, enc)
    }
}

/// A command encoder labelled `label`.
fn encoder(ctx: &GpuContext, label: &str) -> wgpu::CommandEncoder {
    ctx.device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
}

/// The report of a run: medians of the samples.
fn summarize(
    ctx: &GpuContext,
    gpu: &GpuScene,
    options: &CrowdOptions,
    model: String,
    n: u32,
    mut s: Samples,
) -> CrowdReport {
    let timed = ctx.timestamps();
    let compute = gpu.compute_skinning();
    let stamp = |k: usize, s: &mut Samples| timed.then(|| median(&mut s.stamps[k]));
    let on_compute = |v: Option<f64>| compute.and(v);
    let vertex_timed = options.only != Some(Skinning::ComputePass);
    let skin_alone = match compute {
        Some(_) => DispatchOrder::ALL
            .into_iter()
            .enumerate()
            .map(|(k, order)| SkinAlone {
                order,
                skin_ms: stamp(3 + k, &mut s),
                wall_ms: median(&mut s.alone_wall[k]),
            })
            .collect(),
        None => Vec::new(),
    };
    CrowdReport {
        model,
        adapter: ctx.describe(),
        backend: format!("{:?}", ctx.info.backend),
        driver: format!("{} {}", ctx.info.driver, ctx.info.driver_info)
            .trim()
            .to_string(),
        timing: if timed {
            Timing::TimestampQueries
        } else {
            Timing::WallClock
        },
        palette: match options.palette {
            PaletteSource::Storage => "storage".into(),
            PaletteSource::Uniform { bones } => format!("uniform K={bones}"),
        },
        draws: gpu.draws.len(),
        instances: n,
        vertices_per_instance: gpu.vertex_total(),
        vertices_per_frame: gpu.vertex_total() as u64 * n as u64,
        compute_bytes_per_instance: gpu
            .draws
            .iter()
            .map(|d| u64::from(d.vertex_count) * bytes_moved(d))
            .sum(),
        frames: options.frames.max(1),
        size: options.size,
        palette_entries: gpu.palette_entries,
        palette_upload_bytes: gpu.palette_upload_bytes() * n as u64,
        palette_upload_ms: median(&mut s.upload),
        animation_ms: median(&mut s.animation),
        animation_threads: s.threads,
        palette_writes_per_frame: s.palette_writes,
        vertex_draw_ms: vertex_timed.then(|| stamp(0, &mut s)).flatten(),
        vertex_wall_ms: vertex_timed.then(|| median(&mut s.vertex_wall)),
        compute_skin_ms: on_compute(stamp(1, &mut s)),
        compute_draw_ms: on_compute(stamp(2, &mut s)),
        compute_wall_ms: compute.map(|_| median(&mut s.compute_wall)),
        compute_buffers: compute.map_or(0, |c| c.layout().buffers),
        dispatch_order: compute.map_or_else(DispatchOrder::default, |c| c.order),
        skin_alone,
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::{field_corners, grid_offset, grid_shape};

    /// The framed boxes hold every character's cell and no empty cell of the grid, for any
    /// crowd size (a partly filled last row framed apart from the full rows).
    #[test]
    fn field_corners_frame_the_occupied_cells_alone() {
        let one = (Vec3::new(-0.4, 0.0, -0.3), Vec3::new(0.4, 1.7, 0.3));
        let step = 1.0;
        for n in 1..=50u32 {
            let corners = field_corners(one, n, step);
            let boxes: Vec<(Vec3, Vec3)> = corners
                .chunks_exact(8)
                .map(|c| {
                    let lo = c.iter().copied().fold(Vec3::INFINITY, Vec3::min);
                    let hi = c.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
                    (lo, hi)
                })
                .collect();
            assert_eq!(corners.len(), boxes.len() * 8, "n {n}");
            let inside = |p: Vec3| {
                boxes
                    .iter()
                    .any(|(lo, hi)| p.cmpge(*lo - 1e-5).all() && p.cmple(*hi + 1e-5).all())
            };
            for i in 0..n {
                let o = grid_offset(i, n, step);
                assert!(inside(one.0 + o) && inside(one.1 + o), "n {n}: cell {i}");
            }
            let (cols, rows) = grid_shape(n);
            for i in n..cols * rows {
                let centre = (one.0 + one.1) * 0.5 + grid_offset(i, n, step);
                assert!(!inside(centre), "n {n}: empty cell {i} framed");
            }
        }
    }
}
