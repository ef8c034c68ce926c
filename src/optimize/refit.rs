//! Key refit: a LINEAR or STEP channel reduced to fewer keys than its own values allow, by
//! giving the kept keys the values whose curve comes closest to the original, then checking
//! it.
//!
//! Based on: least-squares approximation by piecewise-linear functions with fixed knots
//! (de Boor, "A Practical Guide to Splines", 1978, ch. XIV: the normal equations of linear
//! B-splines are tridiagonal), solved by the Thomas algorithm (Conte and de Boor, "Elementary
//! Numerical Analysis", 1980, §4.3). Method: keys are selected as [`reduce_channel`] selects
//! them at [`LOOSENESS`] × the tolerance (the loosest first). LINEAR: their values are fitted
//! to the original curve at every check time (rotations component-wise, sign-aligned and then
//! renormalised), each time's squared error weighted by Lawson's iteration (Lawson,
//! "Contributions to the theory of linear least maximum approximation", 1961: weights grow
//! with the errors, so the fit tends to the least largest error). STEP: each kept key holds
//! the middle of the original values it stands for (per component, between the least and the
//! largest: the best constant in the largest error, per component). The values are rounded as
//! the file stores them, and the curve is kept when it is within the tolerance at every check
//! time and has fewer keys than [`reduce_channel`]'s own selection at the tolerance. A line
//! through points that curve has its kept keys off the curve, and a held value is off by all
//! of the spread it stands for: the fit splits the error on both sides, so a selection made
//! at twice the tolerance often holds it.
//! Cost: per looseness one selection and up to [`LAWSON_ROUNDS`] fits (O(check times + keys))
//! and checks.
//! Limits: not CUBICSPLINE (its keys carry tangents); the fit minimises the squared error,
//! not the largest, so it is checked; rotations are fitted as 4-vectors (close to slerp for
//! the small turns between kept keys; the check slerps), and a STEP rotation's middle is
//! taken per component and renormalised.

use super::reduce::{ErrorMeasure, ReduceStats, reduce_channel, sampled_at};
use crate::anim::{Interpolation, Sampler};

/// Tolerances the keys are selected at before the refit, as multiples of the channel's own,
/// loosest first.
pub const LOOSENESS: [f32; 2] = [2.0, 1.5];

/// Weighted fits tried per selection (Lawson's iteration): the largest error comes within a
/// few per cent of its least in about ten on the curves of a clip.
const LAWSON_ROUNDS: usize = 10;

/// How a channel's keys are rounded to what the file stores them as (None: floats as they
/// are).
pub type Rounding<'r> = Option<&'r dyn Fn(&mut [f32])>;

/// What [`reduce_refit`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RefitStats {
    /// The reduction kept: keys before and after.
    pub reduce: ReduceStats,
    /// The looseness of the selection whose refit held (None: the plain selection, values
    /// the channel's own).
    pub looseness: Option<f32>,
}

/// `sampler` with the fewest keys within `tolerance` (in `measure`'s unit) of the original at
/// every one of `times` and at its keys: [`reduce_channel`]'s selection, or fewer keys
/// refitted (LINEAR and STEP channels), their values rounded by `round` (what the file stores) before
/// they are checked.
pub fn reduce_refit(
    sampler: &Sampler,
    times: &[f32],
    tolerance: f32,
    measure: &ErrorMeasure,
    round: Rounding<'_>,
) -> (Sampler, RefitStats) {
    let (plain, stats) = reduce_channel(sampler, times, tolerance, measure);
    let plain = (
        plain,
        RefitStats {
            reduce: stats,
            looseness: None,
        },
    );
    if stats.keys_after <= 2 {
        return plain;
    }
    let target = Target::new(sampler, times);
    match sampler.interpolation {
        Interpolation::Linear => {}
        Interpolation::Step => {
            let refit = refit_step(
                (sampler, times),
                &target,
                (tolerance, measure),
                round,
                stats,
            );
            return refit.unwrap_or(plain);
        }
        Interpolation::CubicSpline => return plain,
    }
    for g in LOOSENESS {
        let (selected, s) = reduce_channel(sampler, times, tolerance * g, measure);
        if s.keys_after >= stats.keys_after {
            continue;
        }
        // Lawson's iteration: each time's weight grows with its error.
        let mut weights = vec![1f64; target.times.len()];
        for _ in 0..LAWSON_ROUNDS {
            let Some(mut values) = fit(&target, &selected.times_s, &weights, sampler.is_rotation)
            else {
                break;
            };
            if let Some(round) = round {
                round(&mut values);
            }
            let candidate = Sampler {
                values,
                ..selected.clone()
            };
            let errors = target.errors(&candidate, measure);
            if errors.iter().all(|&e| e <= tolerance) {
                return (candidate, refitted(stats, s, g));
            }
            let total: f64 = errors.iter().map(|&e| f64::from(e)).sum();
            if !(total > 0.0 && total.is_finite()) {
                break;
            }
            // Relative to the mean error; never quite 0, so every knot keeps a say.
            let mean = total / errors.len() as f64;
            for (w, &e) in weights.iter_mut().zip(&errors) {
                *w = (*w * f64::from(e) / mean).max(1e-9);
            }
        }
    }
    plain
}

/// A STEP channel's keys selected at each [`LOOSENESS`] × `tolerance` (checked at `times`),
/// each kept key given
/// the middle (per component, between the least and the largest) of the original values it
/// holds over, rotations sign-aligned to the key's own and renormalised, then rounded by
/// `round`: the first selection with fewer keys than `plain` whose curve holds the tolerance
/// at every check time. A held value is off by half the spread of what it stands for, so a
/// selection at twice the tolerance can hold it.
fn refit_step(
    (sampler, times): (&Sampler, &[f32]),
    target: &Target,
    (tolerance, measure): (f32, &ErrorMeasure),
    round: Rounding<'_>,
    plain: ReduceStats,
) -> Option<(Sampler, RefitStats)> {
    let c = sampler.components;
    for g in LOOSENESS {
        let (selected, s) = reduce_channel(sampler, times, tolerance * g, measure);
        if s.keys_after >= plain.keys_after {
            continue;
        }
        let mut values = selected.values.clone();
        let kept = &selected.times_s;
        for k in 0..kept.len().saturating_sub(1) {
            let lo = sampler.times_s.partition_point(|&t| t < kept[k]);
            let hi = sampler.times_s.partition_point(|&t| t < kept[k + 1]);
            let held = middle(&sampler.values, (lo, hi), c, sampler.is_rotation)?;
            values[k * c..(k + 1) * c].copy_from_slice(&held);
        }
        if let Some(round) = round {
            round(&mut values);
        }
        let candidate = Sampler { values, ..selected };
        if (target.errors(&candidate, measure).iter()).all(|&e| e <= tolerance) {
            return Some((candidate, refitted(plain, s, g)));
        }
    }
    None
}

/// What a refit of selection `s` (made at `g` × the tolerance) that held did, counting the
/// segments `plain`'s selection checked too.
fn refitted(plain: ReduceStats, s: ReduceStats, g: f32) -> RefitStats {
    let reduce = ReduceStats {
        segments_checked: plain.segments_checked + s.segments_checked,
        ..s
    };
    RefitStats {
        reduce,
        looseness: Some(g),
    }
}

/// Per component, the middle between the least and the largest of keys `lo..hi` of `values`
/// (`c` floats a key); rotations first turned onto key `lo`'s hemisphere, the result
/// renormalised. None when there are no keys or the middle is not a rotation.
fn middle(values: &[f32], (lo, hi): (usize, usize), c: usize, rotation: bool) -> Option<Vec<f32>> {
    let own = values.get(lo * c..(lo + 1) * c)?;
    let (mut least, mut most) = (vec![f32::INFINITY; c], vec![f32::NEG_INFINITY; c]);
    for key in values.get(lo * c..hi * c)?.chunks_exact(c) {
        let dot: f32 = key.iter().zip(own).map(|(a, b)| a * b).sum();
        let sign = if rotation && dot < 0.0 { -1.0 } else { 1.0 };
        for (j, v) in key.iter().enumerate() {
            least[j] = least[j].min(sign * v);
            most[j] = most[j].max(sign * v);
        }
    }
    let mut mid: Vec<f32> = least
        .iter()
        .zip(&most)
        .map(|(a, b)| 0.5 * (a + b))
        .collect();
    if rotation {
        let n = mid.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !(n.is_finite() && n > 0.0) {
            return None;
        }
        mid.iter_mut().for_each(|x| *x /= n);
    }
    mid.iter().all(|v| v.is_finite()).then_some(mid)
}

/// The original curve at every check time inside its keys and at its keys.
struct Target {
    times: Vec<f32>,
    /// `components` floats a time; rotations on one hemisphere from one time to the next.
    values: Vec<f32>,
    components: usize,
}

impl Target {
    fn new(sampler: &Sampler, times: &[f32]) -> Target {
        let c = sampler.components;
        let (at, mut values) = sampled_at(sampler, times);
        if sampler.is_rotation {
            for k in 1..at.len() {
                let (before, rest) = values.split_at_mut(k * c);
                let (prev, cur) = (&before[(k - 1) * c..], &mut rest[..c]);
                if prev.iter().zip(cur.iter()).map(|(a, b)| a * b).sum::<f32>() < 0.0 {
                    cur.iter_mut().for_each(|x| *x = -*x);
                }
            }
        }
        Target {
            times: at,
            values,
            components: c,
        }
    }

    /// `candidate`'s error from the original at every time, in `measure`'s unit.
    fn errors(&self, candidate: &Sampler, measure: &ErrorMeasure) -> Vec<f32> {
        let c = self.components;
        let mut at = vec![0f32; c];
        (self.times.iter().enumerate())
            .map(|(k, &t)| {
                candidate.sample_binary_search(t, &mut at);
                measure.error(&self.values[k * c..(k + 1) * c], &at)
            })
            .collect()
    }
}

/// The values at `knots` (ascending, the first and last at the target's ends) of the
/// piecewise-linear curve closest to `target` in the least-squares sense, each time's
/// squared error `weights`-weighted, rotations renormalised; None when the system is singular
/// or the result not finite.
fn fit(target: &Target, knots: &[f32], weights: &[f64], rotation: bool) -> Option<Vec<f32>> {
    let (m, c) = (knots.len(), target.components);
    if m < 2 {
        return None;
    }
    // Normal equations: A (tridiagonal, symmetric) · V = B, one right-hand side a component.
    let mut diag = vec![0f64; m];
    let mut off = vec![0f64; m - 1];
    let mut rhs = vec![0f64; m * c];
    for (k, &t) in target.times.iter().enumerate() {
        let s = (knots.partition_point(|&x| x <= t).max(1) - 1).min(m - 2);
        let span = f64::from(knots[s + 1] - knots[s]);
        let u = match span > 0.0 {
            true => (f64::from(t - knots[s]) / span).clamp(0.0, 1.0),
            false => 0.0,
        };
        let (a, b, w) = (1.0 - u, u, weights[k]);
        diag[s] += w * a * a;
        diag[s + 1] += w * b * b;
        off[s] += w * a * b;
        for j in 0..c {
            let o = w * f64::from(target.values[k * c + j]);
            rhs[s * c + j] += a * o;
            rhs[(s + 1) * c + j] += b * o;
        }
    }
    // Thomas algorithm: forward elimination, then back substitution.
    let mut upper = vec![0f64; m];
    for i in 0..m {
        let lower = if i > 0 { off[i - 1] } else { 0.0 };
        let pivot = diag[i] - if i > 0 { lower * upper[i - 1] } else { 0.0 };
        if pivot.abs() <= f64::EPSILON {
            return None;
        }
        upper[i] = if i + 1 < m { off[i] / pivot } else { 0.0 };
        for j in 0..c {
            let before = if i > 0 { rhs[(i - 1) * c + j] } else { 0.0 };
            rhs[i * c + j] = (rhs[i * c + j] - lower * before) / pivot;
        }
    }
    for i in (0..m - 1).rev() {
        for j in 0..c {
            rhs[i * c + j] -= upper[i] * rhs[(i + 1) * c + j];
        }
    }
    let mut values: Vec<f32> = rhs.iter().map(|&v| v as f32).collect();
    if rotation {
        for q in values.chunks_exact_mut(c) {
            let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n.is_nan() || n <= 0.0 {
                return None;
            }
            q.iter_mut().for_each(|x| *x /= n);
        }
    }
    values.iter().all(|v| v.is_finite()).then_some(values)
}
