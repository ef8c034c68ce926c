//! Timing whole runs of a [`Character`]: the per-stage medians of Weber, "Run-Time Skin
//! Deformation", §14, and the report `skinview bench` prints and writes as JSON. Benchmark code
//! for the CPU stage lives here (the GPU crowd's is `view::crowd`); measured figures are in
//! BENCHMARKS.md.

use super::{Character, StageTimes};
use crate::error::Result;
use web_time::Instant;

/// Timed runs of the whole animation stage ([`time_stage`]): ozz-animation's benchmark
/// (`../shared/peers/ozzbench`) takes the median of 25 timed runs too.
pub const STAGE_RUNS: usize = 25;

/// Most frames in one timed run of the stage: ten seconds at 60 Hz, as many as one
/// ozz-animation benchmark run plays (600).
pub const STAGE_FRAMES_PER_RUN: usize = 600;

/// Frames [`bench`] plays before it times any: buffers reach their final size, caches fill.
const WARM_UP_FRAMES: usize = 10;

/// Run `frames` frames at 60 Hz and return the per-stage medians (µs).
pub fn bench(
    character: &mut Character,
    frames: usize,
    mut progress: impl FnMut(usize),
) -> Result<StageTimes> {
    let dt = 1.0 / 60.0;
    let mut all: Vec<StageTimes> = Vec::with_capacity(frames);
    for i in 0..WARM_UP_FRAMES {
        character.update(i as f32 * dt, dt)?;
    }
    for i in 0..frames {
        all.push(character.update((i + WARM_UP_FRAMES) as f32 * dt, dt)?);
        progress(i);
    }
    let median = |f: &dyn Fn(&StageTimes) -> f64| {
        crate::math::median(&mut all.iter().map(f).collect::<Vec<f64>>())
    };
    Ok(StageTimes {
        sample: median(&|t| t.sample),
        layer: median(&|t| t.layer),
        ik: median(&|t| t.ik),
        links: median(&|t| t.links),
        palette: median(&|t| t.palette),
        skin: median(&|t| t.skin),
        normals: median(&|t| t.normals),
        frame: median(&|t| t.frame),
    })
}

/// The animation stage as a whole ([`Character::animate`]: sampling to the palette, no clock
/// read inside), µs per frame: the median over [`STAGE_RUNS`] runs of `frames / 5` frames
/// (at least 1, at most [`STAGE_FRAMES_PER_RUN`]) at 60 Hz from `start_s`, one clock read per run,
/// as ozz-animation's benchmark times its sampling and local→model.
pub fn time_stage(character: &mut Character, start_s: f32, frames: usize) -> Result<f64> {
    let dt = 1.0 / 60.0;
    let per_run = (frames / 5).clamp(1, STAGE_FRAMES_PER_RUN);
    let mut frame = 0usize;
    let mut per_frame_us = Vec::with_capacity(STAGE_RUNS);
    for _ in 0..STAGE_RUNS {
        let t0 = Instant::now();
        for _ in 0..per_run {
            character.animate(start_s + frame as f32 * dt, dt)?;
            frame += 1;
        }
        per_frame_us.push(t0.elapsed().as_secs_f64() * 1e6 / per_run as f64);
    }
    Ok(crate::math::median(&mut per_frame_us))
}

/// What a benchmark run measured on one character: its JSON form is the bench report
/// (`{"model","joints","vertices","stages_us":{...},"frame_us","stage_us","cpu_kernel"}`), and
/// it prints as the stage table of Weber's §14.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    /// Model name.
    pub model: String,
    /// Joint nodes over all skins, each once.
    pub joints: usize,
    /// Vertices over all draws.
    pub vertices: usize,
    /// Per-stage medians.
    pub stages_us: StageTimes,
    /// Median of whole frames.
    pub frame_us: f64,
    /// The animation stage (stages 1 to 5) timed as a whole: [`time_stage`].
    pub stage_us: f64,
    /// Motion layers blended.
    #[serde(skip)]
    pub layers: usize,
    /// IK effectors.
    #[serde(skip)]
    pub ik_effectors: usize,
    /// Bone links.
    #[serde(skip)]
    pub links: usize,
    /// Frames timed.
    #[serde(skip)]
    pub frames: usize,
    /// Worker threads skinning used.
    #[serde(skip)]
    pub threads: usize,
    /// The CPU kernel linear-blend skinning runs on (`portable`, `avx2` or `avx512`:
    /// [`crate::skin::simd::Kernel::chosen`]); dual-quaternion and stitched draws run the
    /// portable path whatever it says.
    pub cpu_kernel: &'static str,
}

impl BenchReport {
    /// Time `frames` frames of `character` (see [`fn@bench`]) and describe the result.
    pub fn measure(
        character: &mut Character,
        frames: usize,
        progress: impl FnMut(usize),
    ) -> Result<BenchReport> {
        let t = bench(character, frames.max(1), progress)?;
        // Time goes on from the last frame `bench` played.
        let stage_us = time_stage(
            character,
            (frames.max(1) + WARM_UP_FRAMES) as f32 / 60.0,
            frames,
        )?;
        let scene = &character.scene;
        // Nanosecond resolution: the clock's, and no float noise in the JSON.
        let ns = |us: f64| (us * 1000.0).round() / 1000.0;
        let stages = StageTimes {
            sample: ns(t.sample),
            layer: ns(t.layer),
            ik: ns(t.ik),
            links: ns(t.links),
            palette: ns(t.palette),
            skin: ns(t.skin),
            normals: ns(t.normals),
            frame: ns(t.frame),
        };
        Ok(BenchReport {
            model: scene.name.clone(),
            joints: scene.joint_count(),
            vertices: scene.vertex_count(),
            stages_us: stages,
            frame_us: stages.frame,
            stage_us: ns(stage_us),
            layers: character.layers().len(),
            ik_effectors: character.ik.as_ref().map_or(0, |i| i.effectors.len()),
            links: character.links.as_ref().map_or(0, |l| l.links.len()),
            frames: frames.max(1),
            threads: rayon::current_num_threads(),
            cpu_kernel: crate::skin::simd::Kernel::chosen().name(),
        })
    }
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::info::count;
        let links = if self.links > 0 {
            format!(" (of which {} bone links)", self.links)
        } else {
            String::new()
        };
        writeln!(
            f,
            "model {}: {}{links}, {}, {}, {}",
            self.model,
            count(self.joints, "joint", "joints"),
            count(self.vertices, "vertex", "vertices"),
            count(self.layers, "motion layer", "motion layers"),
            count(self.ik_effectors, "IK effector", "IK effectors"),
        )?;
        writeln!(
            f,
            "median over {}, {}, skinning kernel {}:",
            count(self.frames, "frame", "frames"),
            count(self.threads, "thread", "threads"),
            self.cpu_kernel
        )?;
        let s = &self.stages_us;
        for (name, v) in [
            ("sample motion", s.sample),
            ("layer", s.layer),
            ("ik", s.ik),
            ("bone links", s.links),
            ("palette (local->model + palette)", s.palette),
            ("skin", s.skin),
            ("renormalise normals", s.normals),
        ] {
            writeln!(f, "  {name:<34} {v:>10.2} us")?;
        }
        writeln!(
            f,
            "  {:<34} {:>10.2} us",
            "frame (median of whole frames)", self.frame_us
        )?;
        write!(
            f,
            "  {:<34} {:>10.2} us (median of {STAGE_RUNS} runs, sample to palette untimed inside)",
            "animation stage as a whole", self.stage_us
        )
    }
}
