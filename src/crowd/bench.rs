//! The crowd stage timed as ozz-animation's crowd case times its own
//! (`../shared/peers/ozzbench`, `ozz_crowd_64j_c{N}_t{T}`): runs of 60 frames at 60 Hz, the
//! median over runs after warm-up runs, per frame and per character, so the command line's
//! crowd benchmark on ozz's workload stands beside `ozz_bench`'s crowd case in one interleaved
//! run (scripts/crowd-side-by-side.sh).

use web_time::Instant;

use super::{Crowd, CrowdSetup};
use crate::error::Result;
use crate::scene::Scene;
use crate::skin::MatrixRows;
use crate::skin::skinned_bounds::SkinnedBounds;

/// Frames in one timed run (ozz_bench's `kFrames`: one second at 60 Hz).
pub const FRAMES_PER_RUN: usize = 60;

/// Runs before timing starts (ozz_bench's default warm-up).
pub const WARM_UP_RUNS: usize = 3;

/// One crowd timed on one thread count (the JSON row of the command line's crowd benchmark).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CrowdBenchRow {
    /// Model (or workload) name.
    pub model: String,
    /// Characters in the crowd.
    pub characters: usize,
    /// Threads the stage ran on (the calling thread included).
    pub threads: usize,
    /// Palette entries of one character.
    pub palette_entries: usize,
    /// Evaluations a frame (characters less those sharing one).
    pub evaluations: usize,
    /// Timed runs of [`FRAMES_PER_RUN`] frames.
    pub runs: usize,
    /// The stage (sampling, blending, local→model, palette, sharing's copies) per frame: the
    /// median over runs, µs.
    pub stage_us_per_frame: f64,
    /// The fastest and slowest run, per frame, µs.
    pub min_us_per_frame: f64,
    /// See `min_us_per_frame`.
    pub max_us_per_frame: f64,
    /// `stage_us_per_frame` per character, ns.
    pub ns_per_character: f64,
    /// Bytes of palettes the GPU crowd uploads a frame (every character's matrices as
    /// [`MatrixRows`], linear blending's form).
    pub upload_bytes_per_frame: u64,
    /// Palette writes a frame on the GPU crowd: one, whatever the size
    /// ([`crate::crowd::Crowd::palettes`] is the one buffer written).
    pub palette_writes_per_frame: u32,
    /// Culling's bounds of every character from its palette ([`Crowd::bound`], linear
    /// blend), on the same threads, per frame: the median over runs, µs. Timed apart from
    /// the stage (ozz's crowd case has no culling).
    pub bound_us_per_frame: f64,
}

/// Time `setup` on `scene`: [`WARM_UP_RUNS`] runs, then `runs` runs of [`FRAMES_PER_RUN`]
/// frames at 60 Hz, the crowd clock going on from run to run; `progress(run)` after each
/// timed run.
pub fn measure(
    scene: &Scene,
    setup: CrowdSetup,
    runs: usize,
    mut progress: impl FnMut(usize),
) -> Result<CrowdBenchRow> {
    let mut crowd = Crowd::new(scene.clone(), setup)?;
    let dt_s = 1.0 / 60.0;
    let mut frame = 0u64;
    let mut per_frame_us = Vec::with_capacity(runs.max(1));
    for run in 0..WARM_UP_RUNS + runs.max(1) {
        let t0 = Instant::now();
        for _ in 0..FRAMES_PER_RUN {
            // The clock wraps every hour so f32 time keeps its precision in long runs.
            crowd.update((frame % 216_000) as f32 * dt_s)?;
            frame += 1;
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / FRAMES_PER_RUN as f64;
        if run >= WARM_UP_RUNS {
            per_frame_us.push(us);
            progress(run - WARM_UP_RUNS);
        }
    }
    // Sorted by the median: the first and last are the fastest and slowest runs.
    let median = crate::math::median(&mut per_frame_us);
    let bound_us = time_bounds(&mut crowd, scene, runs)?;
    let stats = crowd.stats();
    Ok(CrowdBenchRow {
        model: scene.name.clone(),
        characters: crowd.len(),
        threads: crowd.threads(),
        palette_entries: crowd.entries(),
        evaluations: stats.evaluations,
        runs: per_frame_us.len(),
        stage_us_per_frame: median,
        min_us_per_frame: per_frame_us[0],
        max_us_per_frame: per_frame_us[per_frame_us.len() - 1],
        ns_per_character: median * 1e3 / crowd.len() as f64,
        upload_bytes_per_frame: (crowd.palettes().len() * size_of::<MatrixRows>()) as u64,
        palette_writes_per_frame: 1,
        bound_us_per_frame: bound_us,
    })
}

/// The median over `runs` runs of [`FRAMES_PER_RUN`] frames of bounding every character of
/// `crowd` (its last pose), per frame, µs.
fn time_bounds(crowd: &mut Crowd, scene: &Scene, runs: usize) -> Result<f64> {
    let layout = crate::skin::PaletteLayout::new(scene);
    let bounds = SkinnedBounds::new(scene, &layout, |_| crate::skin::SkinMode::Lbs);
    let morph = crate::anim::Pose::rest(scene).morph_weights;
    let mut boxes = Vec::with_capacity(crowd.len());
    crowd.bound(&bounds, &morph, &mut boxes)?;
    let mut per_frame_us = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        for _ in 0..FRAMES_PER_RUN {
            crowd.bound(&bounds, &morph, &mut boxes)?;
        }
        per_frame_us.push(t0.elapsed().as_secs_f64() * 1e6 / FRAMES_PER_RUN as f64);
    }
    Ok(crate::math::median(&mut per_frame_us))
}
