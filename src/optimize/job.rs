//! [`OptimizeJob`]: every clip of a character with its keys reduced while every skinned vertex
//! of every mesh stays within a distance of where the original clip puts it, at the clip's
//! evaluation times.
//!
//! Based on: the per-joint error budget of skeletal animation compressors (Frechette, ACL:
//! error measured on virtual vertices at a distance from each bone), here with each node's
//! distance taken from the vertices it actually moves (through its descendants, at the pose
//! the clip starts in) and the guarantee checked on the real skinned vertices afterwards.
//! Method: a node's channels get an equal share of the tolerance, 1 / (the most animated
//! channels on any path from the root to a node that moves vertices): a turn error θ moves
//! a vertex by at most θ × reach, a translation error δ by δ × the parent's scale, a scale
//! error σ by σ × reach, a morph weight error Δw_k by Δw_k × target k's largest offset. Each
//! channel is reduced within its budget (`reduce_channel`), then [`worst_error`] skins both
//! versions at every evaluation time; over the tolerance, every budget is halved and the clip
//! reduced again (at most [`MAX_ROUNDS`] times; then the clip is kept as it was); within it,
//! the budgets are doubled while the result still holds, and the one in the fewest bytes is
//! kept (the shares add up only when every error lines up). Channels with the same key times
//! are reduced each on its own, together onto common times (`reduce_together`), and split
//! (those that keep fewest keys on their own together, the others on their own), and kept the
//! way that takes fewest bytes. Before the reduction, every rotation channel (a
//! CUBICSPLINE one where its tangents are in [-1, 1], to plain 16-bit codes) is rounded to
//! integer codes ([`OptimizeJob::rotation_codes`], coarsest first: what
//! the writer stores them as) and every morph weight channel in [0, 1] to 16-bit codes (then to
//! 8-bit ones where the clip still holds so); the
//! coarsest rounding that moves no vertex by more than [`CODES_SHARE`] of the tolerance, as
//! measured on the skin, is kept (else the finest on as many rotation channels as hold it,
//! those whose node reaches least first); then translations and scales are rounded likewise
//! ([`OptimizeJob::vector_codes`]: what a writer's filter gives back) where the clip still
//! holds that share. The keys are reduced from the rounded clip within what it leaves. Cost:
//! per attempt, the channel reductions and two CPU skinnings per evaluation time. First of
//! all, a CUBICSPLINE channel whose reduction at its equal share takes fewer bytes as LINEAR
//! keys at the evaluation times (the cubic curve's values there) than as cubic keys is made
//! so. Once the budgets are chosen, the clip is reduced once more with its channels
//! refitted (`reduce_refit`: fewer keys than their own values allow, fitted to the curve and
//! rounded as the file stores them), kept when it still holds in fewer bytes. Limits: a node that moves no vertex is budgeted as if it
//! carried one a whole diagonal away, so attachment and helper bones keep their motion.

use glam::{Mat4, Vec3};

use super::eval_times::evaluation_times;
use super::measure::{WorstError, worst_error};
use super::reduce::{ErrorMeasure, reduce_channel, reduce_together, sampled_at};
use super::refit::{RefitStats, Rounding, reduce_refit};
use crate::anim::snorm::{OutputCodes, snorm16_round, unorm8_round, unorm16_round};
use crate::anim::{Animation, Channel, Interpolation, KEY_TIMES_JSON_BYTES, Path};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::scene::Scene;

/// The most of the tolerance the rounding of rotations and morph weights to codes may take,
/// measured on the skin: codes halve the bytes of every key, so they get as much as the key
/// reduction.
pub const CODES_SHARE: f32 = 0.5;

/// One way the writer may store keys with fewer bits ([`OptimizeJob::rotation_codes`],
/// [`OptimizeJob::vector_codes`]).
#[derive(Clone, Copy)]
pub struct KeyCodes<'a> {
    /// How the report names it.
    pub name: &'a str,
    /// Keys rounded in place to the values the file reads back. Rotations: unit quaternions
    /// (xyzw, 4 values each), each value exactly a 16-bit code's ([`OutputCodes`]), which is
    /// how the writers know to store them as codes. Translations and scales: xyz, 3 values
    /// each, still floats.
    pub round: &'a dyn Fn(&mut [f32]),
}

impl KeyCodes<'static> {
    /// Each component to the nearest normalised signed short (glTF's own encoding).
    pub const SNORM16: KeyCodes<'static> = KeyCodes {
        name: "16-bit codes",
        round: &round_snorm16,
    };
}

fn round_snorm16(values: &mut [f32]) {
    values.iter_mut().for_each(|v| *v = snorm16_round(*v));
}

fn round_unorm16(values: &mut [f32]) {
    values.iter_mut().for_each(|v| *v = unorm16_round(*v));
}

fn round_unorm8(values: &mut [f32]) {
    values.iter_mut().for_each(|v| *v = unorm8_round(*v));
}

/// How the report names morph weights stored as 8-bit and as 16-bit codes.
const WEIGHT_CODES: [&str; 2] = ["8-bit codes", "16-bit codes"];

/// Times a clip's budgets are halved before it is kept unreduced.
pub const MAX_ROUNDS: usize = 6;

/// Keys before and after, per channel kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeyCounts {
    /// Channels of this kind.
    pub channels: usize,
    /// Their keys in the original clip.
    pub before: usize,
    /// Their keys kept.
    pub after: usize,
    /// Of those channels, how many store their values with fewer bits: rotations and morph
    /// weights as integer codes, translations and scales rounded to
    /// [`OptimizeJob::vector_codes`].
    pub quantised: usize,
    /// Of the channels stored with fewer bits, how many are CUBICSPLINE rotations, which take
    /// plain 16-bit codes whatever rotation codes the clip chose (their tangents are no
    /// rotations).
    pub cubic_codes: usize,
    /// Of those channels, how many were CUBICSPLINE and are stored as LINEAR keys (fewer
    /// bytes within their budget).
    pub linearised: usize,
    /// Of those channels, how many keep fewer keys than their own values allow, with values
    /// refitted to the original curve (`reduce_refit`).
    pub refitted: usize,
    /// Of those channels, how many are left out: their node's rest value holds the clip
    /// within their budget (glTF plays an unanimated channel at the node's own value).
    pub dropped: usize,
}

/// What the job did to one clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipResult {
    /// Index in the scene's animations.
    pub clip: usize,
    /// Translation, rotation, scale and morph-weight channels (in [`Path`] order).
    pub keys: [KeyCounts; 4],
    /// The worst skinned-vertex distance of the reduced clip from the original (model units).
    pub worst: WorstError,
    /// Evaluation times checked.
    pub times_checked: usize,
    /// Budget halvings needed (0: the first reduction held).
    pub tightened: usize,
    /// Budget doublings that still held in fewer bytes.
    pub loosened: usize,
    /// Reductions tried (each checked at every evaluation time).
    pub attempts: usize,
    /// No reduction held within [`MAX_ROUNDS`]: the clip is the original.
    pub kept_original: bool,
    /// The name of the rotation codes chosen ([`KeyCodes::name`]); None: rotations stay
    /// floats.
    pub rotation_codes: Option<String>,
    /// The name of the translation and scale codes chosen; None: they stay as they are.
    pub vector_codes: Option<String>,
    /// The name of the morph weight codes chosen (8-bit or 16-bit codes); None: floats.
    pub weight_codes: Option<String>,
    /// How far the rounding to codes alone moves a vertex, at most (model units, measured).
    pub codes_error: f32,
}

/// The bytes a version of a clip takes in a file ([`OptimizeJob::price`]).
pub type Price<'a> = &'a dyn Fn(&Animation) -> usize;

/// The key reduction of every clip of `scene` within `tolerance` (see the module
/// documentation).
pub struct OptimizeJob<'a> {
    /// The character; its animations are the originals.
    pub scene: &'a Scene,
    /// The largest distance a skinned vertex may move (model units, at least 0; 0 keeps
    /// every key).
    pub tolerance: f32,
    /// Nodes whose channels are kept bit for bit (an exact root).
    pub exact: Vec<usize>,
    /// Per node, a cap on what its channels' errors may move the skin (model units): their
    /// budget is the smaller of their share and this.
    pub caps: Vec<(usize, f32)>,
    /// Ways rotation keys may be stored as codes, coarsest first (tried in order; the first
    /// whose rounding takes at most [`CODES_SHARE`] of the tolerance is kept); empty keeps
    /// rotations as floats. [`KeyCodes::SNORM16`] is what every glTF reader reads; a
    /// CUBICSPLINE rotation takes it whichever is chosen (its tangents are no rotations).
    pub rotation_codes: Vec<KeyCodes<'a>>,
    /// Ways translation and scale keys may be rounded (what a writer's filter gives back),
    /// coarsest first; the first whose rounding, with the rotations', still takes at most
    /// [`CODES_SHARE`] of the tolerance is kept; empty keeps them as they are.
    pub vector_codes: Vec<KeyCodes<'a>>,
    /// The bytes a version of a clip takes in the file, which the budget search keeps the
    /// fewest of (None: [`clip_bytes`], its bytes uncompressed; a writer that compresses
    /// gives its own).
    pub price: Option<Price<'a>>,
}

impl OptimizeJob<'_> {
    /// Rule 1: the tolerance and every cap are finite and not negative. Rule 2: the scene
    /// draws something (the error is measured on its vertices). Rule 3: every exact or capped
    /// node is one of the scene's.
    pub fn validate(&self) -> Result<()> {
        let caps = self.caps.iter().map(|c| c.1);
        if let Some(t) = std::iter::once(self.tolerance)
            .chain(caps)
            .find(|t| !(t.is_finite() && *t >= 0.0))
        {
            return Err(Error::invalid(
                &self.scene.name,
                "tolerance",
                format!("{t} is not a distance (finite, 0 or more)"),
            ));
        }
        self.scene.require_draws()?;
        let n = self.scene.nodes.len();
        if let Some(bad) = self
            .exact
            .iter()
            .chain(self.caps.iter().map(|c| &c.0))
            .find(|&&i| i >= n)
        {
            return Err(Error::invalid(
                &self.scene.name,
                "nodes",
                format!("node {bad} is not one of the scene's {n}"),
            ));
        }
        Ok(())
    }

    /// The reduced clips (one per animation of the scene, in order) and what was done to
    /// each; `progress(clip, attempt)` is called before each reduction is tried (attempt 0 as
    /// the clip starts).
    pub fn run(
        &self,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<(Vec<Animation>, Vec<ClipResult>)> {
        self.validate()?;
        let scene = self.scene;
        let mut budget = Budgets::new(scene)?;
        for &i in &self.exact {
            budget.exact[i] = true;
        }
        for &(i, cap) in &self.caps {
            budget.cap[i] = Some(budget.cap[i].map_or(cap, |c| c.min(cap)));
        }
        // Exact and capped nodes' keys keep their values (a cap bounds their keys' error).
        let keep: Vec<bool> = (budget.exact.iter().zip(&budget.cap))
            .map(|(e, c)| *e || c.is_some())
            .collect();
        let mut work = scene.clone();
        let mut clips = Vec::with_capacity(scene.animations.len());
        let mut results = Vec::with_capacity(scene.animations.len());
        for (ci, original) in scene.animations.iter().enumerate() {
            let times = evaluation_times(original)?;
            let mut result = ClipResult {
                clip: ci,
                times_checked: times.len(),
                ..Default::default()
            };
            progress(ci, 0);
            let share = self.tolerance / budget.shares(original) as f32;
            // A tolerance of 0 keeps every key as it is.
            let (basis, linear) = match self.tolerance > 0.0 {
                true => linearised(original, &times, (&budget, share), &keep),
                false => (original.clone(), vec![false; original.channels.len()]),
            };
            let (coded, mut rounding) = self.coded_clip(
                &mut work,
                (ci, &times),
                (&basis, &budget),
                &keep,
                &mut result,
            )?;
            let (coded, lattice) = self.vector_coded(
                &mut work,
                (ci, &times),
                coded,
                (&keep, &mut rounding),
                &mut result,
            )?;
            let share =
                (self.tolerance - result.codes_error).max(0.0) / budget.shares(original) as f32;
            // The bytes of the best reduction that held so far.
            let mut best_bytes = usize::MAX;
            let keys_before = key_counts(original);
            let attempt =
                |(factor, refit): (f32, bool), result: &mut ClipResult| -> Result<Tried> {
                    if result.attempts > 0 {
                        progress(ci, result.attempts);
                    }
                    result.attempts += 1;
                    let (candidate, mut keys) = reduce_clip(
                        (&coded, &lattice, &linear),
                        (&times, &rounding),
                        (&budget, self.price),
                        (factor, refit),
                    );
                    // Keys before are the original's (a channel made LINEAR has more).
                    for (k, &before) in keys.iter_mut().zip(&keys_before) {
                        k.before = before;
                    }
                    let bytes = self
                        .price
                        .map_or_else(|| clip_bytes(&candidate), |p| p(&candidate));
                    let (out, worst) = measured(scene, &mut work, (ci, &times), candidate)?;
                    if worst.distance > self.tolerance {
                        return Ok(Tried::Fails);
                    }
                    if bytes >= best_bytes {
                        return Ok(Tried::Holds(None));
                    }
                    best_bytes = bytes;
                    result.keys = keys;
                    result.worst = worst;
                    Ok(Tried::Holds(Some(out)))
                };
            let chosen = search_budgets(share, self.tolerance > 0.0, &mut result, attempt)?;
            let clip = chosen.unwrap_or_else(|| {
                result.kept_original = true;
                let none = vec![false; original.channels.len()];
                let floats = vec![None; original.channels.len()];
                let plain = reduce_clip(
                    (original, &none, &none),
                    (&times, &floats),
                    (&budget, None),
                    (0.0, false),
                );
                result.keys = plain.1;
                result.keys.iter_mut().for_each(|k| {
                    k.quantised = 0;
                    k.cubic_codes = 0;
                });
                result.worst = WorstError::default();
                result.rotation_codes = None;
                result.vector_codes = None;
                result.weight_codes = None;
                result.codes_error = 0.0;
                original.clone()
            });
            // A choice no kept channel uses (every rounded one left out) is not reported.
            let rounded = |p: Path| result.keys[path_slot(p)].quantised > 0;
            if !rounded(Path::Rotation) {
                result.rotation_codes = None;
            }
            if !rounded(Path::Translation) && !rounded(Path::Scale) {
                result.vector_codes = None;
            }
            if !rounded(Path::Weights) {
                result.weight_codes = None;
            }
            clips.push(clip);
            results.push(result);
        }
        Ok((clips, results))
    }

    /// `original` (clip `ci` of the scene, or a version of it) with its rotations rounded by
    /// the coarsest of
    /// [`OptimizeJob::rotation_codes`], and its morph weights in [0, 1] to 16-bit codes (8-bit
    /// ones where the clip still holds so), whose
    /// rounding moves no vertex by more than [`CODES_SHARE`] of the tolerance at `times`;
    /// failing that, the finest codes on as many of the rotation channels as hold it, those
    /// whose node reaches least first (found by bisection); failing that, the morph weights
    /// alone; failing that, the clip as it is. Channels on `keep` nodes are left as they are.
    /// `work` is the scene with the original clips (given back so); `result` gets the choice
    /// and its error. Also each channel's rounding (a refit's keys are rounded so).
    fn coded_clip(
        &self,
        work: &mut Scene,
        (ci, times): (usize, &[f32]),
        (original, budget): (&Animation, &Budgets),
        keep: &[bool],
        result: &mut ClipResult,
    ) -> Result<(Animation, Vec<Rounding<'_>>)> {
        let mut rounding: Vec<Rounding<'_>> = vec![None; original.channels.len()];
        if self.tolerance <= 0.0 {
            return Ok((original.clone(), rounding));
        }
        let allowed = CODES_SHARE * self.tolerance;
        let rounds = code_channels(original, keep);
        let rotation = |i: usize| original.channels[i].path == Path::Rotation;
        let weights: Vec<bool> = (0..rounds.len())
            .map(|i| rounds[i] && !rotation(i))
            .collect();
        // The rounding of `codes` on `which` channels (morph weights to 16-bit codes, or to
        // 8-bit ones with `bytes`), measured: Some when it holds.
        let mut attempt = |codes: Option<&KeyCodes>, which: &[bool], bytes: bool| -> Result<_> {
            if !which.contains(&true) {
                return Ok(None);
            }
            let candidate = round_to_codes(original, codes, which, bytes);
            let (coded, worst) = measured(self.scene, work, (ci, times), candidate)?;
            Ok((worst.distance <= allowed).then_some((coded, worst.distance, which.to_vec())))
        };
        let mut chosen = None;
        for codes in &self.rotation_codes {
            if let Some(c) = attempt(Some(codes), &rounds, false)? {
                chosen = Some((c, Some(codes)));
                break;
            }
        }
        if let (None, Some(finest)) = (&chosen, self.rotation_codes.last()) {
            // The rotation channels whose rounding moves the skin least first.
            let mut order: Vec<usize> = (0..rounds.len())
                .filter(|&i| rounds[i] && rotation(i))
                .collect();
            let reach = |i: usize| budget.reach.get(original.channels[i].node).copied();
            order.sort_by(|&a, &b| {
                reach(a)
                    .partial_cmp(&reach(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            // Bisect the longest prefix that holds: `lo` holds (0: none), `hi` does not.
            let (mut lo, mut hi) = (0, order.len());
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                let mut which = weights.clone();
                order[..mid].iter().for_each(|&i| which[i] = true);
                match attempt(Some(finest), &which, false)? {
                    Some(c) => {
                        chosen = Some((c, Some(finest)));
                        lo = mid;
                    }
                    None => hi = mid,
                }
            }
        }
        if chosen.is_none() {
            chosen = attempt(None, &weights, false)?.map(|c| (c, None));
        }
        // Morph weights as 8-bit codes, half the bytes again, where the clip still holds so.
        let rounds_weights = |which: &[bool]| (0..which.len()).any(|i| which[i] && !rotation(i));
        let mut bytes = false;
        if let Some(((_, _, which), codes)) = &chosen
            && rounds_weights(which)
            && let Some(c) = attempt(*codes, &which.clone(), true)?
        {
            chosen = Some((c, *codes));
            bytes = true;
        }
        Ok(match chosen {
            Some(((coded, error, which), codes)) => {
                result.rotation_codes = codes.map(|c| c.name.to_string());
                result.codes_error = error;
                let weight_rounding: &dyn Fn(&mut [f32]) = match bytes {
                    true => &round_unorm8,
                    false => &round_unorm16,
                };
                for (i, r) in rounding.iter_mut().enumerate().filter(|(i, _)| which[*i]) {
                    *r = match (rotation(i), cubic_rotation(&original.channels[i])) {
                        (true, true) => Some(KeyCodes::SNORM16.round),
                        (true, false) => codes.map(|c| c.round),
                        (false, _) => Some(weight_rounding),
                    };
                }
                if rounds_weights(&which) {
                    result.weight_codes = Some(WEIGHT_CODES[usize::from(!bytes)].to_string());
                }
                (coded, rounding)
            }
            None => (original.clone(), rounding),
        })
    }

    /// `coded` (clip `ci` with its codes) with its LINEAR and STEP translation and scale
    /// channels rounded by the coarsest of [`OptimizeJob::vector_codes`] with which the clip
    /// still moves no vertex by more than [`CODES_SHARE`] of the tolerance at `times`, and
    /// per channel whether it was so rounded (and its `rounding` set); `coded` as it is when
    /// none holds. Channels on `keep` nodes are left as they are.
    fn vector_coded<'s>(
        &'s self,
        work: &mut Scene,
        (ci, times): (usize, &[f32]),
        coded: Animation,
        (keep, rounding): (&[bool], &mut [Rounding<'s>]),
        result: &mut ClipResult,
    ) -> Result<(Animation, Vec<bool>)> {
        let which: Vec<bool> = coded
            .channels
            .iter()
            .map(|ch| {
                let s = &ch.sampler;
                keep.get(ch.node) != Some(&true)
                    && s.interpolation != Interpolation::CubicSpline
                    && matches!(ch.path, Path::Translation | Path::Scale)
                    && s.components == 3
            })
            .collect();
        let none = vec![false; which.len()];
        if self.tolerance <= 0.0 || !which.contains(&true) {
            return Ok((coded, none));
        }
        for codes in &self.vector_codes {
            let mut rounded = coded.clone();
            for (ch, _) in rounded.channels.iter_mut().zip(&which).filter(|(_, w)| **w) {
                (codes.round)(&mut ch.sampler.values);
            }
            let (rounded, worst) = measured(self.scene, work, (ci, times), rounded)?;
            if worst.distance <= CODES_SHARE * self.tolerance {
                result.vector_codes = Some(codes.name.to_string());
                result.codes_error = worst.distance;
                for (r, _) in rounding.iter_mut().zip(&which).filter(|(_, w)| **w) {
                    *r = Some(codes.round);
                }
                return Ok((rounded, which));
            }
        }
        Ok((coded, none))
    }
}

/// What one reduction the budget search tries gives.
enum Tried {
    /// Over the tolerance on the skin.
    Fails,
    /// Within it: Some when in fewer bytes than every reduction that held before.
    Holds(Option<Animation>),
}

/// The reduction the budget search settles on (None: none held): from the equal shares
/// (`share`), tightened by halving until a reduction holds (at most [`MAX_ROUNDS`] times), then,
/// when the first held and `reducing` (a tolerance above 0), loosened by doubling while it
/// still holds (at most [`MAX_ROUNDS`] times; a doubling that holds in no fewer bytes goes on:
/// keys are kept whole until their channel's reduction pays for its own key times), keeping
/// the one in the fewest bytes; then tried once more refitted at the budgets chosen.
/// `attempt((factor, refit), result)` reduces the clip at `factor` × the budgets.
fn search_budgets(
    share: f32,
    reducing: bool,
    result: &mut ClipResult,
    mut attempt: impl FnMut((f32, bool), &mut ClipResult) -> Result<Tried>,
) -> Result<Option<Animation>> {
    // Tighten from the equal shares until the reduction holds, then loosen while it
    // still holds: the shares add up only in the worst case.
    let mut chosen = None;
    let mut factor = share;
    let mut chosen_factor = factor;
    for round in 0..=MAX_ROUNDS {
        if let Tried::Holds(a) = attempt((factor, false), result)? {
            (chosen, chosen_factor) = (a, factor);
            result.tightened = round;
            break;
        }
        factor *= 0.5;
    }
    if chosen.is_some() && result.tightened == 0 && reducing {
        for _ in 0..MAX_ROUNDS {
            factor *= 2.0;
            match attempt((factor, false), result)? {
                Tried::Holds(Some(a)) => {
                    (chosen, chosen_factor) = (Some(a), factor);
                    result.loosened += 1;
                }
                Tried::Holds(None) => {}
                Tried::Fails => {
                    // Halfway (in ratio) to the doubling that did not hold.
                    let half = factor * std::f32::consts::FRAC_1_SQRT_2;
                    if let Tried::Holds(Some(a)) = attempt((half, false), result)? {
                        (chosen, chosen_factor) = (Some(a), half);
                        result.loosened += 1;
                    }
                    break;
                }
            }
        }
    }
    // Refitted at the budgets chosen, kept where it still holds in fewer bytes: a refit
    // moves every error towards its channel's budget, so the errors add up more often
    // on the skin, and budgets are not chosen with it.
    if chosen.is_some()
        && reducing
        && let Tried::Holds(Some(a)) = attempt((chosen_factor, true), result)?
    {
        chosen = Some(a);
    }
    Ok(chosen)
}

/// Keys per channel kind of `anim` (in [`Path`] order).
fn key_counts(anim: &Animation) -> [usize; 4] {
    let mut n = [0; 4];
    for c in &anim.channels {
        n[path_slot(c.path)] += c.sampler.times_s.len();
    }
    n
}

/// `anim` with each CUBICSPLINE channel (not on a `keep` node) replaced by LINEAR keys at
/// every one of `times` inside its key range and at its keys, where that channel reduced
/// within `share` of its budget takes fewer bytes so than as cubic keys (a value and two
/// tangents a key, floats); and per channel whether it was. The LINEAR keys are the cubic
/// curve's values at those times, so at the times the error is checked they are exact.
fn linearised(
    anim: &Animation,
    times: &[f32],
    (budget, share): (&Budgets, f32),
    keep: &[bool],
) -> (Animation, Vec<bool>) {
    let mut out = anim.clone();
    let mut made = vec![false; anim.channels.len()];
    for (ch, made) in out.channels.iter_mut().zip(&mut made) {
        let s = &ch.sampler;
        let cubic = s.interpolation == Interpolation::CubicSpline;
        if !cubic || s.times_s.is_empty() || keep.get(ch.node) == Some(&true) {
            continue;
        }
        let c = s.components;
        let (at, values) = sampled_at(s, times);
        let line = crate::anim::Sampler {
            interpolation: Interpolation::Linear,
            times_s: at,
            values,
            ..s.clone()
        };
        let share = match budget.cap.get(ch.node).copied().flatten() {
            Some(cap) => share.min(cap),
            None => share,
        };
        let (tolerance, measure) = budget.channel(ch.node, ch.path, share);
        let cubic_keys = reduce_channel(s, times, tolerance, &measure).1.keys_after;
        let line_keys = reduce_channel(&line, times, tolerance, &measure)
            .1
            .keys_after;
        // Rotations and morph weights become 16-bit codes once LINEAR (most often).
        let value = match ch.path {
            Path::Rotation | Path::Weights => 2,
            _ => 4,
        };
        if line_keys * (4 + value * c) < cubic_keys * (4 + 3 * 4 * c) {
            ch.sampler = line;
            *made = true;
        }
    }
    (out, made)
}

/// Per channel of `anim`, whether it can be stored as codes: rotations and LINEAR or STEP
/// morph weights in [0, 1], not on a `keep` node; CUBICSPLINE rotations where every tangent
/// is in [-1, 1] too (normalised shorts hold no more; cubic morph weights' tangents leave
/// [0, 1] as soon as a weight falls).
fn code_channels(anim: &Animation, keep: &[bool]) -> Vec<bool> {
    anim.channels
        .iter()
        .map(|ch| {
            let s = &ch.sampler;
            let in_range = |lo: f32| s.values.iter().all(|v| (lo..=1.0).contains(v));
            keep.get(ch.node) != Some(&true)
                && match ch.path {
                    Path::Rotation => s.components == 4 && in_range(-1.0),
                    Path::Weights => s.interpolation != Interpolation::CubicSpline && in_range(0.0),
                    _ => false,
                }
        })
        .collect()
}

/// `anim` with the channels `which` says rounded: rotations by `codes` (left as they are when
/// None), morph weights to 16-bit codes (8-bit with `bytes`).
fn round_to_codes(
    anim: &Animation,
    codes: Option<&KeyCodes>,
    which: &[bool],
    bytes: bool,
) -> Animation {
    let mut out = anim.clone();
    for (ch, _) in out.channels.iter_mut().zip(which).filter(|(_, w)| **w) {
        let cubic = cubic_rotation(ch);
        let s = &mut ch.sampler;
        match (ch.path, codes) {
            (Path::Rotation, Some(_)) if cubic => round_snorm16(&mut s.values),
            (Path::Rotation, Some(c)) => (c.round)(&mut s.values),
            (Path::Weights, _) if bytes => round_unorm8(&mut s.values),
            (Path::Weights, _) => round_unorm16(&mut s.values),
            _ => {}
        }
    }
    out
}

/// Bytes of `anim`'s data as the writers store it: key times as floats (channels with the same
/// key times share one array of them, as the writer shares one input accessor), each array
/// with its accessor's JSON (about 100 bytes), rotation keys and morph weights that are
/// all exactly codes as codes (morph weights as bytes where they are 8-bit codes), other values
/// as floats.
pub fn clip_bytes(anim: &Animation) -> usize {
    channel_bytes(anim.channels.iter())
}

/// [`clip_bytes`] of a clip with `channels`.
fn channel_bytes<'c>(channels: impl Iterator<Item = &'c Channel> + Clone) -> usize {
    let times = crate::anim::distinct_key_times(channels.clone());
    let values: usize = channels
        .map(|c| c.sampler.values.len() * code_bytes(c).unwrap_or(4))
        .sum();
    let inputs: usize = times
        .iter()
        .map(|t| 4 * t.len() + KEY_TIMES_JSON_BYTES)
        .sum();
    inputs + values
}

/// The worst skinned-vertex distance at `times` of clip `ci` of `scene` from `candidate`,
/// skinned in `work` (a copy of `scene`) with the candidate in the clip's place for the
/// measure; the candidate given back, and `work` as it was.
fn measured(
    scene: &Scene,
    work: &mut Scene,
    (ci, times): (usize, &[f32]),
    candidate: Animation,
) -> Result<(Animation, WorstError)> {
    let before = std::mem::replace(&mut work.animations[ci], candidate);
    let worst = worst_error((scene, ci), (&*work, ci), times);
    let candidate = std::mem::replace(&mut work.animations[ci], before);
    Ok((candidate, worst?))
}

/// `anim` with every channel reduced within `factor` × its budget (`refit`: channels
/// refitted where that keeps fewer keys, rounded as `rounding` says), and the key counts
/// (`lattice`: per channel, whether its keys were rounded to [`OptimizeJob::vector_codes`];
/// `linear`: whether it was made LINEAR from CUBICSPLINE).
/// Channels with the same key times are reduced each on its own, together (onto common times,
/// [`reduce_together`]) and split ([`reduce_group`]); the one taking fewest bytes (`price`'s,
/// else [`clip_bytes`]') is kept. A channel reduced on its
/// own keeps all its keys unless the reduction saves bytes even when its key times need an
/// array of their own (the original's are usually shared with other channels).
fn reduce_clip(
    (anim, lattice, linear): (&Animation, &[bool], &[bool]),
    (times, rounding): (&[f32], &[Rounding<'_>]),
    (budget, price): (&Budgets, Option<Price<'_>>),
    (factor, refit): (f32, bool),
) -> (Animation, [KeyCounts; 4]) {
    let mut keys = [KeyCounts::default(); 4];
    let mut slots: Vec<Option<Channel>> = vec![None; anim.channels.len()];
    let mut pending = Vec::new();
    // The first channel left out: a clip must keep one (glTF animations have channels).
    let mut first_held = None;
    // Each channel's key times as bits, once: what groups channels on one array of times.
    let bits: Vec<Vec<u32>> = (anim.channels.iter())
        .map(|c| crate::anim::key_time_bits(&c.sampler.times_s))
        .collect();
    let shared = shared_times(&bits);
    for (i, (ch, &shared)) in anim.channels.iter().zip(&shared).enumerate() {
        let k = &mut keys[path_slot(ch.path)];
        k.channels += 1;
        k.before += ch.sampler.times_s.len();
        let codes = code_bytes(ch);
        let rounded = codes.is_some() || lattice.get(i) == Some(&true);
        let cubic_codes = usize::from(rounded && cubic_rotation(ch));
        let made_linear = linear.get(i) == Some(&true);
        if budget.exact.get(ch.node) == Some(&true) {
            k.quantised += usize::from(rounded);
            k.cubic_codes += cubic_codes;
            k.linearised += usize::from(made_linear);
            k.after += ch.sampler.times_s.len();
            slots[i] = Some(ch.clone());
            continue;
        }
        let share = match budget.cap.get(ch.node).copied().flatten() {
            Some(cap) => factor.min(cap),
            None => factor,
        };
        let (tolerance, measure) = budget.channel(ch.node, ch.path, share);
        // A channel its node's own value holds, everywhere, is left out.
        let rest = budget.rest_value(ch.node, ch.path);
        if rest
            .as_ref()
            .is_some_and(|r| holds_at(&ch.sampler, times, r, tolerance, &measure))
        {
            k.dropped += 1;
            if first_held.is_none() {
                first_held = rest.map(|r| (ch, r));
            }
            continue;
        }
        k.quantised += usize::from(rounded);
        k.cubic_codes += cubic_codes;
        k.linearised += usize::from(made_linear);
        pending.push(Pending {
            index: i,
            ch,
            tolerance,
            measure,
            bytes: StoredBytes {
                value: codes.unwrap_or(4),
                shared,
            },
            round: refit.then(|| rounding.get(i).copied().flatten()),
        });
    }
    for group in same_key_times(pending, &bits) {
        // Channels kept as they are with these key times share their array whichever way.
        let times_of_group = &bits[group[0].index];
        let outside: Vec<Channel> = (slots.iter().flatten())
            .filter(|c| {
                c.sampler
                    .times_s
                    .iter()
                    .map(|t| t.to_bits())
                    .eq(times_of_group.iter().copied())
            })
            .cloned()
            .collect();
        for (p, ch, kept) in reduce_group(&group, times, (price, &outside)) {
            let k = &mut keys[path_slot(ch.path)];
            k.after += kept.after;
            k.refitted += kept.refitted;
            slots[p] = Some(ch);
        }
    }
    let mut out = anim.clone();
    out.channels = slots.into_iter().flatten().collect();
    if let (true, Some((ch, rest))) = (out.channels.is_empty(), first_held) {
        // Held as one key of the node's own value: the same motion as leaving it out.
        let mut sampler = ch.sampler.clone();
        sampler.interpolation = Interpolation::Linear;
        sampler.times_s.truncate(1);
        sampler.values = rest;
        let k = &mut keys[path_slot(ch.path)];
        k.dropped -= 1;
        k.after += 1;
        out.channels.push(Channel {
            sampler,
            ..ch.clone()
        });
    }
    (out, keys)
}

/// A channel of a clip to reduce, and within what.
struct Pending<'a> {
    /// Its index in the clip.
    index: usize,
    ch: &'a Channel,
    /// In `measure`'s unit.
    tolerance: f32,
    measure: ErrorMeasure,
    bytes: StoredBytes,
    /// Some when refitted: its keys' rounding.
    round: Option<Rounding<'a>>,
}

/// `pending` in groups of channels with the same key times (`bits`, per channel of the clip:
/// its key times' bits), in the clip's order.
fn same_key_times<'a>(pending: Vec<Pending<'a>>, bits: &[Vec<u32>]) -> Vec<Vec<Pending<'a>>> {
    let mut groups: Vec<(&[u32], Vec<Pending>)> = Vec::new();
    for p in pending {
        let b = &bits[p.index][..];
        match groups.iter_mut().find(|(g, _)| *g == b) {
            Some((_, g)) => g.push(p),
            None => groups.push((b, vec![p])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Keys a reduced channel keeps, and whether they were refitted.
#[derive(Clone, Copy, Default)]
struct Kept {
    after: usize,
    refitted: usize,
}

/// A group of channels with the same key times reduced, each on its own ([`reduce_kept`]),
/// together onto common times, or split: the channels that keep fewest keys on their own
/// (the first quarter, half or three quarters of them) together and the rest on their own
/// (channels that need most of their keys keep the group's times whole, while the others
/// share fewer), whichever the writer stores in fewest bytes (`price`'s of a clip of them and
/// the `outside` channels kept as they are with the same key times, else [`channel_bytes`]):
/// per channel, its index, the channel and its keys.
fn reduce_group(
    group: &[Pending<'_>],
    times: &[f32],
    (price, outside): (Option<Price<'_>>, &[Channel]),
) -> Vec<Reduced> {
    let alone: Vec<Reduced> = group
        .iter()
        .map(|p| {
            let (ch, kept) =
                reduce_kept(p.ch, (times, p.round), (p.tolerance, &p.measure), p.bytes);
            (p.index, ch, kept)
        })
        .collect();
    if group.len() < 2 {
        return alone;
    }
    let bytes = |v: &[Reduced]| {
        let channels = v.iter().map(|c| &c.1).chain(outside);
        match price {
            Some(price) => price(&Animation {
                name: None,
                channels: channels.cloned().collect(),
            }),
            None => channel_bytes(channels),
        }
    };
    // Members of the group by the keys they keep on their own, fewest first.
    let mut by_keys: Vec<usize> = (0..group.len()).collect();
    by_keys.sort_by_key(|&k| (alone[k].2.after, k));
    let n = group.len();
    let mut cuts: Vec<usize> = [n / 4, n / 2, 3 * n / 4, n]
        .into_iter()
        .filter(|&c| c >= 2)
        .collect();
    cuts.dedup();
    let mut best_bytes = bytes(&alone);
    let mut best = alone.clone();
    for cut in cuts {
        let Some(shared) = together(group, &by_keys[..cut], times) else {
            continue;
        };
        let mut candidate = alone.clone();
        for (k, c) in shared {
            candidate[k] = c;
        }
        let b = bytes(&candidate);
        if b < best_bytes {
            (best_bytes, best) = (b, candidate);
        }
    }
    best
}

/// A channel of a group reduced: its index in the clip, the channel, its keys.
type Reduced = (usize, Channel, Kept);

/// Members `members` of `group` reduced together onto common times ([`reduce_together`]): per
/// member, its place in the group and its reduced channel; None when they cannot be.
fn together(
    group: &[Pending<'_>],
    members: &[usize],
    times: &[f32],
) -> Option<Vec<(usize, Reduced)>> {
    let inputs: Vec<_> = (members.iter())
        .map(|&k| (&group[k].ch.sampler, group[k].tolerance, &group[k].measure))
        .collect();
    let (samplers, stats) = reduce_together(&inputs, times)?;
    let kept = Kept {
        after: stats.keys_after,
        refitted: 0,
    };
    let reduced = (members.iter().zip(samplers)).map(|(&k, sampler)| {
        let ch = Channel {
            sampler,
            ..group[k].ch.clone()
        };
        (k, (group[k].index, ch, kept))
    });
    Some(reduced.collect())
}

/// The bytes a value when the writers store channel `ch`'s values as codes
/// ([`OutputCodes`]); None: floats.
fn code_bytes(ch: &Channel) -> Option<usize> {
    OutputCodes::of(ch.path, &ch.sampler.values).map(|c| c.bytes_per_value())
}

/// Per channel (`bits`: its key times' bits), whether another channel has the same key times
/// (the writer then stores them once).
fn shared_times(bits: &[Vec<u32>]) -> Vec<bool> {
    let mut count = std::collections::HashMap::new();
    for b in bits {
        *count.entry(b).or_insert(0usize) += 1;
    }
    bits.iter()
        .map(|b| count.get(b).is_some_and(|&n| n > 1))
        .collect()
}

/// A CUBICSPLINE rotation: stored as plain 16-bit codes whatever rotation codes the clip
/// chose, since its tangents are no rotations (a filter for unit quaternions would not give
/// them back).
fn cubic_rotation(ch: &Channel) -> bool {
    ch.path == Path::Rotation && ch.sampler.interpolation == Interpolation::CubicSpline
}

/// How a channel's keys are stored: bytes a value, and whether its key times are shared
/// with another channel (so keeping them all costs no times of its own).
#[derive(Clone, Copy)]
struct StoredBytes {
    value: usize,
    shared: bool,
}

/// Channel `ch` reduced within `tolerance` (in `measure`'s unit), refitted when `refit` gives
/// its rounding, and its keys:
/// all its keys kept unless the reduction saves bytes, its key times then needing an array
/// of their own (4 bytes a key and an accessor) where the original's were shared.
fn reduce_kept(
    ch: &Channel,
    (times, refit): (&[f32], Option<Rounding<'_>>),
    (tolerance, measure): (f32, &ErrorMeasure),
    bytes: StoredBytes,
) -> (Channel, Kept) {
    let mut ch = ch.clone();
    let (reduced, refit) = match refit {
        Some(round) => reduce_refit(&ch.sampler, times, tolerance, measure, round),
        None => {
            let (reduced, reduce) = reduce_channel(&ch.sampler, times, tolerance, measure);
            let refit = RefitStats {
                reduce,
                looseness: None,
            };
            (reduced, refit)
        }
    };
    let stats = refit.reduce;
    let per_key = ch.sampler.values.len() / stats.keys_before.max(1);
    let stored = |keys: usize, times: bool| {
        keys * bytes.value * per_key + usize::from(times) * (4 * keys + KEY_TIMES_JSON_BYTES)
    };
    if stored(stats.keys_after, true) < stored(stats.keys_before, !bytes.shared) {
        ch.sampler = reduced;
        let kept = Kept {
            after: stats.keys_after,
            refitted: usize::from(refit.looseness.is_some()),
        };
        (ch, kept)
    } else {
        let kept = Kept {
            after: stats.keys_before,
            refitted: 0,
        };
        (ch, kept)
    }
}

/// Whether `value`, held, is within `tolerance` of `sampler` at every one of `times` (and at
/// its keys).
fn holds_at(
    sampler: &crate::anim::Sampler,
    times: &[f32],
    value: &[f32],
    tolerance: f32,
    measure: &ErrorMeasure,
) -> bool {
    let c = sampler.components;
    if value.len() != c || tolerance.is_nan() || tolerance <= 0.0 {
        return false;
    }
    let mut at = vec![0f32; c];
    times.iter().chain(&sampler.times_s).all(|&t| {
        sampler.sample_binary_search(t, &mut at);
        measure.error(&at, value) <= tolerance
    })
}

/// The index of `path` in [`ClipResult::keys`].
pub fn path_slot(path: Path) -> usize {
    match path {
        Path::Translation => 0,
        Path::Rotation => 1,
        Path::Scale => 2,
        Path::Weights => 3,
    }
}

/// Per node: what an error of each channel kind costs on the skin.
struct Budgets {
    /// The largest distance from the node to a vertex it moves (model units, at the rest
    /// pose); a node that moves none gets the diagonal.
    reach: Vec<f32>,
    /// Whether the node moves a vertex.
    moves: Vec<bool>,
    /// The largest axis scale of the node's parent's model matrix (1 at a root).
    parent_scale: Vec<f32>,
    /// Per node with a mesh: each morph target's largest vertex offset (model units).
    morph: Vec<Vec<f32>>,
    parents: Vec<Option<usize>>,
    /// Each node's own translation, rotation and scale (what it holds where no channel
    /// animates it); None for a node given by a matrix.
    rest: Vec<Option<crate::math::Trs>>,
    /// Nodes whose channels stay as they are.
    exact: Vec<bool>,
    /// Per node, the most its channels' errors may move the skin (model units).
    cap: Vec<Option<f32>>,
}

impl Budgets {
    fn new(scene: &Scene) -> Result<Budgets> {
        let mut frame = FrameState::new(scene);
        frame.evaluate(scene, None, 0.0)?;
        let rest = CpuSkinner::new(scene, None).skin_all(scene, &frame)?;
        let n = scene.nodes.len();
        let origin: Vec<Vec3> = frame
            .model_from_node
            .iter()
            .map(|m| m.w_axis.truncate())
            .collect();
        let mut reach = vec![0f32; n];
        let mut moves = vec![false; n];
        let parents: Vec<Option<usize>> = scene.nodes.iter().map(|x| x.parent).collect();
        let mut touch = |node: usize, p: Vec3| {
            let mut at = Some(node);
            while let Some(a) = at {
                moves[a] = true;
                reach[a] = reach[a].max(p.distance(origin[a]));
                at = parents[a];
            }
        };
        let mut all = Vec::new();
        for (d, out) in scene.draws.iter().zip(&rest) {
            let prim = scene.primitive(d);
            let finite = out
                .positions
                .iter()
                .enumerate()
                .filter(|(_, p)| p.is_finite());
            match (d.skin, &prim.skin_weights) {
                (Some(s), Some(w)) => {
                    let joints = &scene.skins[s].joints;
                    for (v, p) in finite {
                        all.push(*p);
                        for k in v * w.width..(v + 1) * w.width {
                            if w.weights[k] > 0.0
                                && let Some(&j) = joints.get(w.joints[k] as usize)
                            {
                                touch(j, *p);
                            }
                        }
                    }
                }
                _ => finite.for_each(|(_, p)| {
                    all.push(*p);
                    touch(d.node, *p);
                }),
            }
        }
        let diagonal = crate::math::finite_bounds(all.iter().copied())
            .map_or(1.0, crate::math::bounds_diagonal)
            .max(f32::MIN_POSITIVE);
        for (r, m) in reach.iter_mut().zip(&moves) {
            if !*m {
                *r = diagonal;
            }
        }
        let scale_of = |m: &Mat4| {
            [m.x_axis, m.y_axis, m.z_axis]
                .iter()
                .map(|a| a.truncate().length())
                .fold(0.0, f32::max)
        };
        let parent_scale = parents
            .iter()
            .map(|p| p.map_or(1.0, |p| scale_of(&frame.model_from_node[p])))
            .collect();
        let morph = (0..n)
            .map(|i| morph_offsets(scene, i, scale_of(&frame.model_from_node[i])))
            .collect();
        Ok(Budgets {
            reach,
            moves,
            parent_scale,
            morph,
            parents,
            rest: scene
                .nodes
                .iter()
                .map(|n| n.matrix.is_none().then_some(n.rest))
                .collect(),
            exact: vec![false; n],
            cap: vec![None; n],
        })
    }

    /// How many shares a clip's tolerance is cut into: the most animated channels on a
    /// path from the root to a node that moves vertices (at least 1).
    fn shares(&self, anim: &Animation) -> usize {
        let mut own = vec![0usize; self.reach.len()];
        for c in &anim.channels {
            if let Some(o) = own.get_mut(c.node) {
                *o += 1;
            }
        }
        // Nodes are in depth-first order: a parent's count is final before its children's.
        let mut path = vec![0usize; own.len()];
        for i in 0..own.len() {
            path[i] = own[i] + self.parents[i].map_or(0, |p| path[p]);
        }
        (0..own.len())
            .filter(|&i| self.moves[i])
            .map(|i| path[i])
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Node `node`'s own value for channel kind `path` (xyz or xyzw), when it has one.
    fn rest_value(&self, node: usize, path: Path) -> Option<Vec<f32>> {
        let rest = self.rest.get(node).copied().flatten()?;
        match path {
            Path::Translation => Some(rest.translation.to_array().to_vec()),
            Path::Rotation => Some(rest.rotation.to_array().to_vec()),
            Path::Scale => Some(rest.scale.to_array().to_vec()),
            Path::Weights => None,
        }
    }

    /// The tolerance of a channel on `node`'s `path` given `share` (a distance on the skin),
    /// in the unit its measure gives, and that measure.
    fn channel(&self, node: usize, path: Path, share: f32) -> (f32, ErrorMeasure) {
        let reach = self.reach.get(node).copied().unwrap_or(1.0).max(1e-6);
        match path {
            Path::Rotation => (share / reach, ErrorMeasure::Angle),
            Path::Scale => (share / reach, ErrorMeasure::Distance),
            Path::Translation => {
                let s = self.parent_scale.get(node).copied().unwrap_or(1.0);
                (share / s.max(1e-6), ErrorMeasure::Distance)
            }
            Path::Weights => {
                let f = self.morph.get(node).cloned().unwrap_or_default();
                (share, ErrorMeasure::Weighted(f))
            }
        }
    }
}

/// Per morph target of node `i`'s mesh: its largest vertex offset times the node's scale.
fn morph_offsets(scene: &Scene, i: usize, scale: f32) -> Vec<f32> {
    let Some(mesh) = scene.nodes[i].mesh.and_then(|m| scene.meshes.get(m)) else {
        return Vec::new();
    };
    let count = mesh
        .primitives
        .iter()
        .map(|p| p.morph_targets.len())
        .max()
        .unwrap_or(0);
    (0..count)
        .map(|k| {
            let largest = mesh
                .primitives
                .iter()
                .filter_map(|p| p.morph_targets.get(k)?.positions.as_ref())
                .flatten()
                .map(|o| o.length())
                .filter(|l| l.is_finite())
                .fold(0.0, f32::max);
            largest * scale
        })
        .collect()
}
