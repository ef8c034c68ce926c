//! `diff`: what a conversion, compression or re-export did to a character's skinned result.
//!
//! Two scenes of the same character are skinned on the CPU (the reference path, linear blend)
//! over every clip they share, at the same times; matched vertices ([`matching`]) are compared
//! per frame and per draw: the largest and mean distance relative to the bounds' diagonal,
//! the worst vertex and time. Joints are matched ([`names`]) and those whose weights or bind
//! matrices differ are named ([`joints`]). Set-up ([`Differ::new`]) is apart from the
//! per-frame work ([`Differ::frame`]); no skinned vertices are kept between frames, only the
//! figures (24 bytes a frame for the series).

pub mod against;
pub mod joints;
pub mod matching;
pub mod names;
pub mod pairing;

use std::fmt;

use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState, skin_pose};
use crate::scene::Scene;
use crate::skin::{RunningError, SkinnedVertices};

pub use joints::{JointChange, JointReport};
pub use matching::{MatchMethod, MatchStats, Matching, VertexSet};
pub use names::{ClipPair, MatchedBy};
pub use pairing::Pairing;

/// The report's schema name (bumped when a field changes meaning or goes away).
pub const SCHEMA: &str = "skinview-diff/1";

/// When in a clip both files are skinned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Times {
    /// Every 1 / fps s from 0, and the clip's end.
    #[default]
    Rate,
    /// A's key times in the clip (what a file resampled from A keeps exactly).
    KeysOfA,
    /// B's key times (gltfpack resamples at 30 Hz from the first key; Blender bakes whole
    /// frames): where B holds A's values up to quantisation.
    KeysOfB,
    /// Both files' key times.
    Keys,
    /// A's evaluation times ([`crate::optimize::evaluation_times`]: every key time, 4 samples
    /// between each two, at least 120 Hz): where `skinview optimize` states its bound.
    Evaluation,
}

impl crate::choice::Choice for Times {
    const ALL: &'static [Times] = &[
        Times::Rate,
        Times::KeysOfA,
        Times::KeysOfB,
        Times::Keys,
        Times::Evaluation,
    ];

    fn name(self) -> &'static str {
        match self {
            Times::Rate => "rate",
            Times::KeysOfA => "a-keys",
            Times::KeysOfB => "b-keys",
            Times::Keys => "keys",
            Times::Evaluation => "evaluation",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Times::Rate => "Every 1/fps s",
            Times::KeysOfA => "A's key times",
            Times::KeysOfB => "B's key times",
            Times::Keys => "Both files' key times",
            Times::Evaluation => {
                "A's key times, 4 between each two and at least 120 Hz (where optimize checks)"
            }
        }
    }
}

/// How two files are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffOptions {
    /// When in a clip both are skinned.
    pub times: Times,
    /// Frames a second for [`Times::Rate`].
    pub fps: f32,
    /// Largest distance allowed, relative to the diagonal.
    pub tolerance_rel: f64,
    /// Vertices further apart than this in the rest pose (relative to the diagonal) are not
    /// the same vertex.
    pub match_radius_rel: f64,
    /// Weight differences above this name the joint.
    pub weight_tolerance: f32,
    /// Most frames over all clips (checked before their times are made).
    pub max_frames: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            times: Times::Rate,
            // gltfpack resamples at 30 Hz, Blender bakes at whole frames (24–30 fps): a
            // 30 Hz grid lands on the keys both keep.
            fps: 30.0,
            tolerance_rel: 1e-4,
            // Twice the largest offset 10-bit position quantisation makes (half a step of
            // 1/1023 of an axis on each of three axes, under 8.5e-4 of the diagonal).
            match_radius_rel: 2e-3,
            // gltfpack stores weights in 8 bits: rounding and renormalising move a weight by
            // under 1/255 (0.004).
            weight_tolerance: 0.01,
            max_frames: 1_000_000,
        }
    }
}

impl DiffOptions {
    /// Rules: 1. `fps` is finite and in (0, 10000]; 2. `tolerance_rel` is finite and ≥ 0;
    /// 3. `match_radius_rel` is in [1e-7, 1]; 4. `weight_tolerance` is in [0, 1];
    /// 5. `max_frames` ≥ 1.
    pub fn validate(&self) -> Result<()> {
        let rule = |rule: u32, ok: bool, message: String| match ok {
            true => Ok(()),
            false => Err(Error::Job {
                job: "DiffOptions",
                rule,
                message,
            }),
        };
        rule(
            1,
            self.fps.is_finite() && self.fps > 0.0 && self.fps <= 10_000.0,
            format!("fps {} is not in (0, 10000]", self.fps),
        )?;
        rule(
            2,
            self.tolerance_rel.is_finite() && self.tolerance_rel >= 0.0,
            format!("tolerance {} is not a finite share ≥ 0", self.tolerance_rel),
        )?;
        rule(
            3,
            (1e-7..=1.0).contains(&self.match_radius_rel),
            format!(
                "match radius {} is not in [1e-7, 1] of the diagonal",
                self.match_radius_rel
            ),
        )?;
        rule(
            4,
            (0.0..=1.0).contains(&self.weight_tolerance),
            format!(
                "weight tolerance {} is not in [0, 1]",
                self.weight_tolerance
            ),
        )?;
        rule(5, self.max_frames >= 1, "max_frames is 0".into())
    }
}

/// Where and when the largest distance was.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Worst {
    /// Time in the clip, s.
    pub time_s: f32,
    /// Draw of A.
    pub draw: u32,
    /// Vertex of that draw.
    pub vertex: u32,
    /// Distance, model units.
    pub distance: f64,
    /// Distance relative to the diagonal.
    pub distance_rel: f64,
}

/// One draw of A over one clip.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DrawDiff {
    /// Draw index of A.
    pub draw: usize,
    /// Its node and mesh.
    pub label: String,
    /// Vertex pairs compared in it.
    pub pairs: usize,
    /// Largest distance over the clip, relative to the diagonal.
    pub max_rel: f64,
    /// Mean distance over the clip's frames and pairs, relative.
    pub mean_rel: f64,
    /// Where the largest was.
    pub worst: Option<Worst>,
}

/// One frame: the largest and mean distance over every pair.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FramePoint {
    /// Time, s.
    pub time_s: f32,
    /// Largest distance, relative to the diagonal.
    pub max_rel: f64,
    /// Mean distance, relative.
    pub mean_rel: f64,
}

/// One shared clip (or the rest pose when the files share none).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClipDiff {
    /// The clip's name in A (`animation N` when unnamed; `rest pose`).
    pub name: String,
    /// Its index in A (None: the rest pose).
    pub a: Option<usize>,
    /// Its index in B.
    pub b: Option<usize>,
    /// Its name in B.
    pub b_name: String,
    /// How it was matched (None: the rest pose).
    pub matched_by: Option<MatchedBy>,
    /// The last time compared, s (the longer clip's end at a rate; the last key otherwise).
    pub duration_s: f32,
    /// Frames compared.
    pub frames: usize,
    /// Largest distance, relative to the diagonal.
    pub max_rel: f64,
    /// Mean distance over frames and pairs, relative.
    pub mean_rel: f64,
    /// Where and when the largest was.
    pub worst: Option<Worst>,
    /// Per draw of A.
    pub draws: Vec<DrawDiff>,
    /// Per frame.
    pub series: Vec<FramePoint>,
}

/// The whole comparison (what the `diff` command writes as JSON; schema [`SCHEMA`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Diff {
    /// [`SCHEMA`].
    pub schema: String,
    /// A's label (the CLI sets the file).
    pub a: String,
    /// B's label.
    pub b: String,
    /// A's rest-pose bounds diagonal, model units (distances are relative to it).
    pub diagonal: f64,
    /// The tolerance, relative.
    pub tolerance_rel: f64,
    /// When in each clip both were skinned.
    pub times: Times,
    /// Frames a second ([`Times::Rate`]).
    pub fps: f32,
    /// How the vertices matched.
    pub vertices: MatchStats,
    /// Where the vertices were paired when not in the rest pose: the first shared clip at
    /// its start, because the rest poses differ (see [`Differ::new`]).
    pub paired_at: Option<PairedAt>,
    /// How the joints matched and which differ.
    pub joints: JointReport,
    /// Per clip.
    pub clips: Vec<ClipDiff>,
    /// Clips of A that B lacks.
    pub clips_only_in_a: Vec<String>,
    /// Clips of B that A lacks.
    pub clips_only_in_b: Vec<String>,
    /// The clip (name) and place of the largest distance over all clips.
    pub worst: Option<(String, Worst)>,
    /// Why it failed (empty: passed).
    pub failures: Vec<String>,
    /// No failure.
    pub passed: bool,
}

/// Where vertices were paired, when not in the rest pose.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairedAt {
    /// The clip's name in A.
    pub clip: String,
    /// The time both were skinned at, s.
    pub time_s: f32,
}

/// One frame's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Largest distance, model units.
    pub max: f64,
    /// Mean distance, model units.
    pub mean: f64,
    /// Where the largest was (A's draw and vertex).
    pub worst: Option<(u32, u32)>,
}

/// `scene`'s rest-pose bounds diagonal, the length a comparison's distances are relative to
/// (every draw skinned at rest, as [`pairing::Pairing`] measures it for A; 1 without a finite
/// vertex).
pub fn rest_diagonal(scene: &Scene) -> Result<f64> {
    let rest = Skinned::new(scene)?;
    let points = rest.out.iter().flat_map(|o| o.positions.iter().copied());
    Ok(crate::math::finite_bounds(points).map_or(1.0, crate::math::bounds_diagonal_f64))
}

/// One side's per-frame state.
struct Skinned<'a> {
    scene: &'a Scene,
    frame: FrameState,
    skinner: CpuSkinner,
    out: Vec<SkinnedVertices>,
}

impl<'a> Skinned<'a> {
    fn new(scene: &'a Scene) -> Result<Skinned<'a>> {
        let mut frame = FrameState::new(scene);
        frame.evaluate(scene, None, 0.0)?;
        let mut skinner = CpuSkinner::new(scene, None);
        let out = skinner.skin_all(scene, &frame)?;
        Ok(Skinned {
            scene,
            frame,
            skinner,
            out,
        })
    }

    /// Skin clip `anim` at `time_s` into `self.out`.
    fn skin(&mut self, anim: Option<usize>, time_s: f32) -> Result<()> {
        self.frame.evaluate(self.scene, anim, time_s)?;
        for (d, out) in self.out.iter_mut().enumerate() {
            self.skinner.skin_draw(self.scene, &self.frame, d, out)?;
        }
        Ok(())
    }
}

/// Two scenes set up for comparison: matched vertices, joints and clips, and each side's
/// skinning state.
pub struct Differ<'a> {
    a: Skinned<'a>,
    b: Skinned<'a>,
    options: DiffOptions,
    pairing: Pairing,
    joints: JointReport,
    clips: Vec<ClipPair>,
    lone_a: Vec<usize>,
    lone_b: Vec<usize>,
    paired_at: Option<PairedAt>,
    /// Per pair, its distance in the last frame.
    distances: Vec<f64>,
}

/// When in the first shared clip vertices are paired if the rest poses do not pair them: its
/// start (glTF clips play from 0; the source's and the copy's first key).
const PAIRING_TIME_S: f32 = 0.0;

/// Pair the drawn vertices of `a` and `b` in their rest poses; when that leaves some
/// unmatched and the files share `clip`, pair them again at the clip's start and keep the
/// pairing that matches more (see [`Differ::new`]). Also where they were paired when not at
/// rest. The viewer's "compare with" pairs the same way.
pub fn pair_vertices(
    a: &Scene,
    b: &Scene,
    clip: Option<ClipPair>,
    radius_rel: f64,
) -> Result<(Pairing, Option<PairedAt>)> {
    let at = |scene: &Scene, anim| skin_pose(scene, anim, PAIRING_TIME_S, None);
    let rest = Pairing::new(a, &at(a, None)?, b, &at(b, None)?, radius_rel)?;
    let unmatched = |p: &Pairing| p.matching.stats.a_unmatched + p.matching.stats.b_unmatched;
    let Some(c) = clip.filter(|_| unmatched(&rest) > 0) else {
        return Ok((rest, None));
    };
    let posed = Pairing::new(a, &at(a, Some(c.a))?, b, &at(b, Some(c.b))?, radius_rel)?;
    if unmatched(&posed) >= unmatched(&rest) {
        return Ok((rest, None));
    }
    let at = PairedAt {
        clip: a.clip_name(c.a).label(),
        time_s: PAIRING_TIME_S,
    };
    Ok((posed, Some(at)))
}

impl<'a> Differ<'a> {
    /// Set up the comparison of `a` with `b`: rest poses skinned, vertices, joints and clips
    /// matched. Vertices are paired in the rest pose; when that leaves some unmatched and the
    /// files share a clip, they are paired again at the start of the first shared clip and
    /// the pairing that matches more is kept (the joints' skinning matrices are then compared
    /// in that pose too). Files of one character can differ in what
    /// "rest" means: Blender's rest pose is the bind pose, so an FBX it wrote rests where its
    /// glTF source was bound, while the source's nodes rest elsewhere.
    pub fn new(a: &'a Scene, b: &'a Scene, options: DiffOptions) -> Result<Differ<'a>> {
        options.validate()?;
        let mut a_side = Skinned::new(a)?;
        let mut b_side = Skinned::new(b)?;
        let (clips, lone_a, lone_b) = names::match_clips(a, b);
        let first = clips.first().copied();
        let (pairing, paired_at) = pair_vertices(a, b, first, options.match_radius_rel)?;
        // The joints are judged in the pose the vertices were paired in.
        if let (Some(c), Some(at)) = (first, &paired_at) {
            a_side.skin(Some(c.a), at.time_s)?;
            b_side.skin(Some(c.b), at.time_s)?;
        }
        let nodes = names::match_nodes(a, b);
        let joints = joints::compare_joints(
            &joints::Side {
                scene: a,
                rest: &a_side.frame,
                set: &pairing.set_a,
            },
            &joints::Side {
                scene: b,
                rest: &b_side.frame,
                set: &pairing.set_b,
            },
            &pairing.matching.pairs,
            &nodes,
            pairing.diagonal,
            (options.tolerance_rel, options.weight_tolerance),
        );
        if paired_at.is_some() {
            a_side.skin(None, 0.0)?;
            b_side.skin(None, 0.0)?;
        }
        Ok(Differ {
            a: a_side,
            b: b_side,
            options,
            paired_at,
            distances: Vec::with_capacity(pairing.matching.pairs.len()),
            pairing,
            joints,
            clips,
            lone_a,
            lone_b,
        })
    }

    /// The vertices paired.
    pub fn pairing(&self) -> &Pairing {
        &self.pairing
    }

    /// The shared clips.
    pub fn clips(&self) -> &[ClipPair] {
        &self.clips
    }

    /// The clips of `clip` on each side.
    fn clips_of(&self, c: ClipPair) -> [Option<&crate::anim::Animation>; 2] {
        [
            self.a.scene.animations.get(c.a),
            self.b.scene.animations.get(c.b),
        ]
    }

    /// The longer of the two clips of `c`, s.
    fn end_s(&self, c: ClipPair) -> f32 {
        self.clips_of(c)
            .iter()
            .flatten()
            .map(|a| a.duration_s())
            .fold(0.0, f32::max)
    }

    /// At most how many times [`Differ::times`] gives for `clip`, counted without making
    /// them (a key time past 1e30 s must not allocate first and check after).
    fn frame_count(&self, clip: Option<ClipPair>) -> f64 {
        let Some(c) = clip else { return 1.0 };
        let keys = |which: &[usize]| -> f64 {
            let clips = self.clips_of(c);
            which
                .iter()
                .filter_map(|&i| clips[i])
                .flat_map(|a| a.channels.iter().map(|ch| ch.sampler.times_s.len() as f64))
                .sum::<f64>()
                .max(1.0)
        };
        match self.options.times {
            Times::Rate => (self.end_s(c) as f64 * self.options.fps as f64 + 1e-3).floor() + 2.0,
            Times::KeysOfA => keys(&[0]),
            Times::KeysOfB => keys(&[1]),
            Times::Keys => keys(&[0, 1]),
            Times::Evaluation => {
                let floor = self.end_s(c) as f64 * crate::optimize::MIN_RATE_HZ as f64 + 2.0;
                keys(&[0]) * (crate::optimize::SAMPLES_PER_INTERVAL as f64 + 1.0) + floor
            }
        }
    }

    /// The times compared in `clip` (None: the rest pose), as [`DiffOptions::times`] says:
    /// k / fps up to the longer clip's end and that end, or key times. More than
    /// [`DiffOptions::max_frames`] is an error, found before any is made.
    pub fn times(&self, clip: Option<ClipPair>) -> Result<Vec<f32>> {
        self.check_frames(&[clip])?;
        let Some(c) = clip else { return Ok(vec![0.0]) };
        let [a, b] = self.clips_of(c);
        let keys = |clips: &[Option<&crate::anim::Animation>]| {
            let mut t: Vec<f32> = clips
                .iter()
                .flatten()
                .flat_map(|a| {
                    a.channels
                        .iter()
                        .flat_map(|c| c.sampler.times_s.iter().copied())
                })
                .filter(|t| t.is_finite() && *t >= 0.0)
                .collect();
            t.sort_unstable_by(f32::total_cmp);
            t.dedup_by(|x, y| (*x - *y).abs() <= 1e-6);
            t
        };
        let times = match self.options.times {
            Times::Rate => {
                let (end, fps) = (self.end_s(c) as f64, self.options.fps as f64);
                let steps = (end * fps + 1e-3).floor().max(0.0) as usize;
                let mut times: Vec<f32> = (0..=steps).map(|k| (k as f64 / fps) as f32).collect();
                if times.last().is_some_and(|&t| end - t as f64 > 1e-4) {
                    times.push(end as f32);
                }
                times
            }
            Times::KeysOfA => keys(&[a]),
            Times::KeysOfB => keys(&[b]),
            Times::Keys => keys(&[a, b]),
            Times::Evaluation => match a.or(b) {
                Some(clip) => crate::optimize::evaluation_times(clip)?,
                None => Vec::new(),
            },
        };
        Ok(if times.is_empty() { vec![0.0] } else { times })
    }

    /// An error when `plan`'s frames pass [`DiffOptions::max_frames`].
    fn check_frames(&self, plan: &[Option<ClipPair>]) -> Result<()> {
        let total: f64 = plan.iter().map(|&c| self.frame_count(c)).sum();
        if total > self.options.max_frames as f64 {
            return Err(Error::invalid(
                &self.a.scene.name,
                "animations",
                format!(
                    "comparing {} takes {total:.0} frames, more than the limit of {} (a lower \
                     rate, or the key times, take fewer)",
                    crate::info::count(plan.len(), "clip", "clips"),
                    self.options.max_frames
                ),
            ));
        }
        Ok(())
    }

    /// Skin both at `time_s` of `clip` (None: the rest pose) and measure every pair.
    pub fn frame(&mut self, clip: Option<ClipPair>, time_s: f32) -> Result<FrameStats> {
        self.a.skin(clip.map(|c| c.a), time_s)?;
        self.b.skin(clip.map(|c| c.b), time_s)?;
        Ok(self
            .pairing
            .measure(&self.a.out, &self.b.out, &mut self.distances))
    }

    /// The last frame's distance at every vertex of A, draws in order (the largest over a
    /// vertex's pairs; [`pairing::NO_PARTNER`] for vertices not drawn or not matched): what a
    /// heatmap shows.
    pub fn vertex_distances(&self) -> Vec<f32> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        self.pairing.per_vertex(&self.distances, &mut a, &mut b);
        a
    }

    /// The frames [`Differ::run`] will skin: every shared clip's times, or the rest pose.
    fn plan(&self) -> Vec<Option<ClipPair>> {
        match self.clips.is_empty() {
            true => vec![None],
            false => self.clips.iter().copied().map(Some).collect(),
        }
    }

    /// Compare every shared clip (the rest pose when there is none), calling `tick(done,
    /// total)` after each frame.
    pub fn run(&mut self, mut tick: impl FnMut(usize, usize)) -> Result<Diff> {
        let plan = self.plan();
        self.check_frames(&plan)?;
        let mut total = 0;
        for &c in &plan {
            total += self.times(c)?.len();
        }
        let mut done = 0;
        let mut clips = Vec::with_capacity(plan.len());
        for clip in plan {
            clips.push(self.run_clip(clip, &mut |_| {
                done += 1;
                tick(done, total);
            })?);
        }
        Ok(self.report(clips))
    }

    /// One clip's figures.
    fn run_clip(
        &mut self,
        clip: Option<ClipPair>,
        tick: &mut dyn FnMut(usize),
    ) -> Result<ClipDiff> {
        let scene = self.a.scene;
        // Per draw of A: its distances, the worst at (time, draw, vertex).
        let mut draws = vec![RunningError::<(f32, u32, u32)>::default(); scene.draws.len()];
        let mut series = Vec::new();
        let (mut sum, mut count) = (0.0, 0usize);
        let scale = self.pairing.diagonal.max(f64::MIN_POSITIVE);
        let pairs = self.pairing.matching.pairs.len();
        let times = self.times(clip)?;
        for &t in &times {
            let stats = self.frame(clip, t)?;
            for (&(ia, _), &d) in self.pairing.matching.pairs.iter().zip(&self.distances) {
                let (draw, v) = self.pairing.a_vertex(ia);
                draws[draw as usize].add(d, (t, draw, v));
            }
            sum += stats.mean * pairs as f64;
            count += pairs;
            series.push(FramePoint {
                time_s: t,
                max_rel: stats.max / scale,
                mean_rel: stats.mean / scale,
            });
            tick(1);
        }
        let worst_of = |acc: &RunningError<(f32, u32, u32)>| {
            acc.worst.map(|(time_s, draw, vertex)| Worst {
                time_s,
                draw,
                vertex,
                distance: acc.max,
                distance_rel: acc.max / scale,
            })
        };
        let worst = draws
            .iter()
            .filter_map(worst_of)
            .max_by(|x, y| x.distance.total_cmp(&y.distance));
        let b = self.b.scene;
        Ok(ClipDiff {
            name: clip.map_or("rest pose".into(), |c| scene.clip_name(c.a).label()),
            a: clip.map(|c| c.a),
            b: clip.map(|c| c.b),
            b_name: clip.map_or("rest pose".into(), |c| b.clip_name(c.b).label()),
            matched_by: clip.map(|c| c.by),
            duration_s: times.last().copied().unwrap_or(0.0),
            frames: times.len(),
            max_rel: worst.map_or(0.0, |w| w.distance_rel),
            mean_rel: sum / count.max(1) as f64 / scale,
            worst,
            draws: draws
                .iter()
                .enumerate()
                .filter(|(_, acc)| acc.count > 0)
                .map(|(i, acc)| DrawDiff {
                    draw: i,
                    label: draw_label(scene, i),
                    pairs: acc.count / times.len().max(1),
                    max_rel: acc.max / scale,
                    mean_rel: acc.mean() / scale,
                    worst: worst_of(acc),
                })
                .collect(),
            series,
        })
    }

    /// The report from the clips' figures.
    fn report(&self, clips: Vec<ClipDiff>) -> Diff {
        let worst = clips
            .iter()
            .filter_map(|c| c.worst.map(|w| (c.name.clone(), w)))
            .max_by(|x, y| x.1.distance.total_cmp(&y.1.distance));
        let stats = self.pairing.matching.stats;
        let clips_only_in_a: Vec<String> = self
            .lone_a
            .iter()
            .map(|&i| self.a.scene.clip_name(i).label())
            .collect();
        let clips_only_in_b: Vec<String> = self
            .lone_b
            .iter()
            .map(|&i| self.b.scene.clip_name(i).label())
            .collect();
        let mut failures = Vec::new();
        if let Some((clip, w)) = &worst
            && w.distance_rel > self.options.tolerance_rel
        {
            failures.push(format!(
                "largest distance {:.3e} of the diagonal (in {clip:?} at {:.3} s) is over the \
                 tolerance {:.1e}",
                w.distance_rel, w.time_s, self.options.tolerance_rel
            ));
        }
        if stats.a_unmatched > 0 || stats.b_unmatched > 0 {
            failures.push(format!(
                "{} vertices of A and {} of B have no vertex of the other within {:.1e} of the \
                 diagonal {}",
                stats.a_unmatched,
                stats.b_unmatched,
                self.options.match_radius_rel,
                paired_where(self.paired_at.as_ref())
            ));
        }
        if !clips_only_in_a.is_empty() {
            failures.push(format!("clips only in A: {}", clips_only_in_a.join(", ")));
        }
        Diff {
            schema: SCHEMA.into(),
            a: self.a.scene.name.clone(),
            b: self.b.scene.name.clone(),
            diagonal: self.pairing.diagonal,
            tolerance_rel: self.options.tolerance_rel,
            times: self.options.times,
            fps: self.options.fps,
            vertices: stats,
            paired_at: self.paired_at.clone(),
            joints: self.joints.clone(),
            clips,
            clips_only_in_a,
            clips_only_in_b,
            worst,
            passed: failures.is_empty(),
            failures,
        }
    }
}

impl Diff {
    /// Where the vertices were paired, in words: `in the rest pose`, or `at "Walk" 0.000 s`.
    pub fn paired_where(&self) -> String {
        paired_where(self.paired_at.as_ref())
    }
}

fn paired_where(at: Option<&PairedAt>) -> String {
    match at {
        None => "in the rest pose".into(),
        Some(p) => format!("at {:?} {:.3} s", p.clip, p.time_s),
    }
}

/// A draw in words: its node and mesh.
pub fn draw_label(scene: &Scene, draw: usize) -> String {
    let Some(d) = scene.draws.get(draw) else {
        return format!("draw {draw}");
    };
    let mesh = scene
        .meshes
        .get(d.mesh)
        .and_then(|m| m.name.as_deref())
        .filter(|n| !n.is_empty())
        .map_or(format!("mesh {}", d.mesh), str::to_string);
    format!(
        "{} ({mesh}, primitive {})",
        scene.node_label(d.node),
        d.primitive
    )
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.vertices;
        writeln!(f, "A: {}\nB: {}", self.a, self.b)?;
        writeln!(
            f,
            "vertices: {} of A, {} of B, paired by {} {}: {} one to one, {} of A and {} of B \
             sharing a vertex, {} of A and {} of B unmatched (offset up to {:.2e} of the \
             diagonal)",
            v.a_vertices,
            v.b_vertices,
            v.method.name(),
            self.paired_where(),
            v.one_to_one,
            v.a_shared,
            v.b_shared,
            v.a_unmatched,
            v.b_unmatched,
            v.worst_rest_distance / self.diagonal.max(f64::MIN_POSITIVE)
        )?;
        let j = &self.joints;
        writeln!(
            f,
            "joints: {} matched by name, {} by hierarchy; {} of A and {} of B unmatched",
            j.by_name,
            j.by_hierarchy,
            j.unmatched_a.len(),
            j.unmatched_b.len()
        )?;
        for name in &j.unmatched_a {
            writeln!(f, "  only in A: {name}")?;
        }
        for name in &j.unmatched_b {
            writeln!(f, "  only in B: {name}")?;
        }
        for c in &j.changed {
            writeln!(
                f,
                "  joint {}: bind moves vertices by {:.3e} of the diagonal; weights differ by up \
                 to {:.3} ({} vertices over the weight tolerance)",
                c.name, c.bind_distance_rel, c.weight_max_difference, c.vertices_weight_differs
            )?;
        }
        for c in &self.clips {
            // B's name beside A's when they differ (a clip paired by its action name or its
            // place among the clips left over).
            let b_name = match c.matched_by {
                Some(MatchedBy::ActionName) => format!(" (B: {:?}, the same action)", c.b_name),
                Some(MatchedBy::Index) => format!(" (B: {:?}, paired by order)", c.b_name),
                _ => String::new(),
            };
            if c.draws.is_empty() {
                // No vertex paired: no distance to report (the failure below says why).
                writeln!(f, "clip {:?}{b_name}: no vertex paired", c.name)?;
                continue;
            }
            write!(
                f,
                "clip {:?}{b_name}: {} frames over {:.3} s, largest {:.3e}, mean {:.3e} of the \
                 diagonal",
                c.name, c.frames, c.duration_s, c.max_rel, c.mean_rel
            )?;
            match c.worst {
                Some(w) => writeln!(
                    f,
                    " (at {:.3} s, draw {} vertex {})",
                    w.time_s, w.draw, w.vertex
                )?,
                None => writeln!(f)?,
            }
        }
        for name in &self.clips_only_in_a {
            writeln!(f, "clip only in A: {name}")?;
        }
        for name in &self.clips_only_in_b {
            writeln!(f, "clip only in B: {name}")?;
        }
        writeln!(
            f,
            "diagonal {:.6} model units; tolerance {:.1e} of it",
            self.diagonal, self.tolerance_rel
        )?;
        match self.failures.is_empty() {
            true => write!(f, "PASS"),
            false => write!(f, "FAIL: {}", self.failures.join("; ")),
        }
    }
}
