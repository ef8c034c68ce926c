//! Key refit: a channel reduced to fewer keys than its own values allow, by giving the kept
//! keys the values (and CUBICSPLINE tangents) whose curve comes closest to the original, then
//! checking it.
//!
//! Based on: least-squares approximation by piecewise-linear functions with fixed knots
//! (de Boor, "A Practical Guide to Splines", 1978, ch. XIV: the normal equations of linear
//! B-splines are tridiagonal), solved by the Thomas algorithm (Conte and de Boor, "Elementary
//! Numerical Analysis", 1980, §4.3); for CUBICSPLINE, the same with glTF's cubic Hermite
//! segments (a segment's curve is linear in its ends' values and tangents, so the normal
//! equations are banded), solved by a banded Cholesky factorisation (Golub and Van Loan,
//! "Matrix Computations", 4th ed., 2013, §4.3.5). Method: keys are selected as [`reduce_channel`] selects
//! them at [`LOOSENESS`] × the tolerance (the loosest first). LINEAR and CUBICSPLINE: their
//! values (and tangents) are fitted to the original curve at every check time (rotations component-wise, sign-aligned and then
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
//! Limits: the fit minimises the squared error, not the largest, so it is checked; a cubic
//! fit's first in-tangent and last out-tangent shape nothing and are 0; rotations are fitted as 4-vectors (close to slerp for
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
/// refitted, their values rounded by `round` (what the file stores) before
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
    let fit = match sampler.interpolation {
        Interpolation::Linear => fit_linear,
        Interpolation::CubicSpline => fit_cubic,
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
    };
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
    'looseness: for g in LOOSENESS {
        let (selected, s) = reduce_channel(sampler, times, tolerance * g, measure);
        if s.keys_after >= plain.keys_after {
            continue;
        }
        let mut values = selected.values.clone();
        let kept = &selected.times_s;
        for k in 0..kept.len().saturating_sub(1) {
            let lo = sampler.times_s.partition_point(|&t| t < kept[k]);
            let hi = sampler.times_s.partition_point(|&t| t < kept[k + 1]);
            let Some(held) = middle(&sampler.values, (lo, hi), c, sampler.is_rotation) else {
                continue 'looseness;
            };
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
        unit_length(&mut mid)?;
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
fn fit_linear(target: &Target, knots: &[f32], weights: &[f64], rotation: bool) -> Option<Vec<f32>> {
    let (m, c) = (knots.len(), target.components);
    if m < 2 {
        return None;
    }
    // Normal equations: A (tridiagonal, symmetric) · V = B, one right-hand side a component.
    let mut diag = vec![0f64; m];
    let mut off = vec![0f64; m - 1];
    let mut rhs = vec![0f64; m * c];
    for (k, &t) in target.times.iter().enumerate() {
        let (s, _, u) = segment_at(knots, t);
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
            unit_length(q)?;
        }
    }
    values.iter().all(|v| v.is_finite()).then_some(values)
}

/// A fitted rotation `q` (its components) scaled to unit length; None when it has no length
/// (zero or not finite).
fn unit_length(q: &mut [f32]) -> Option<()> {
    let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(n.is_finite() && n > 0.0) {
        return None;
    }
    q.iter_mut().for_each(|x| *x /= n);
    Some(())
}

/// The segment of `knots` (at least two, ascending) that holds time `t` (the first or last
/// outside them), its length and `t`'s place in it, from 0 to 1.
fn segment_at(knots: &[f32], t: f32) -> (usize, f64, f64) {
    let s = (knots.partition_point(|&x| x <= t).max(1) - 1).min(knots.len() - 2);
    let span = f64::from(knots[s + 1] - knots[s]);
    let u = match span > 0.0 {
        true => (f64::from(t - knots[s]) / span).clamp(0.0, 1.0),
        false => 0.0,
    };
    (s, span, u)
}

/// Unknowns a CUBICSPLINE key has per component: its in-tangent, value and out-tangent (the
/// order glTF stores them in).
const CUBIC_UNKNOWNS: usize = 3;

/// A segment's samples touch its start's value and out-tangent and its end's in-tangent and
/// value: four unknowns in a row, so the normal equations are a band 3 wide off the diagonal.
const CUBIC_BAND: usize = 3;

/// Ridge added to the diagonal, relative to its largest entry: the first key's in-tangent and
/// the last key's out-tangent shape no segment, and stay 0.
const CUBIC_RIDGE: f64 = 1e-12;

/// The in-tangents, values and out-tangents at `knots` (ascending, the first and last at the
/// target's ends) of the CUBICSPLINE curve closest to `target` in the least-squares sense
/// (glTF's Hermite segments: a segment's curve is linear in its ends' values and tangents),
/// each time's squared error `weights`-weighted, rotation values renormalised; laid out as
/// glTF stores them (in-tangent, value, out-tangent a key). None when the system is not
/// positive definite or the result not finite. Solved by a banded Cholesky factorisation.
fn fit_cubic(target: &Target, knots: &[f32], weights: &[f64], rotation: bool) -> Option<Vec<f32>> {
    let (m, c) = (knots.len(), target.components);
    if m < 2 {
        return None;
    }
    let n = m * CUBIC_UNKNOWNS;
    let w = CUBIC_BAND + 1;
    // band[i * w + d] = A[i][i + d].
    let mut band = vec![0f64; n * w];
    let mut rhs = vec![0f64; n * c];
    for (k, &t) in target.times.iter().enumerate() {
        let (s, span, u) = segment_at(knots, t);
        let (u2, u3) = (u * u, u * u * u);
        // v_s, b_s (out), a_{s+1} (in), v_{s+1}: unknowns 3s + 1 .. 3s + 4.
        let basis = [
            2.0 * u3 - 3.0 * u2 + 1.0,
            (u3 - 2.0 * u2 + u) * span,
            (u3 - u2) * span,
            -2.0 * u3 + 3.0 * u2,
        ];
        let first = CUBIC_UNKNOWNS * s + 1;
        let wk = weights[k];
        for p in 0..4 {
            for q in p..4 {
                band[(first + p) * w + (q - p)] += wk * basis[p] * basis[q];
            }
            for j in 0..c {
                rhs[(first + p) * c + j] += wk * basis[p] * f64::from(target.values[k * c + j]);
            }
        }
    }
    let largest = (0..n).map(|i| band[i * w]).fold(0.0, f64::max);
    let ridge = (CUBIC_RIDGE * largest).max(f64::MIN_POSITIVE);
    (0..n).for_each(|i| band[i * w] += ridge);
    let lower = banded_cholesky(&band, n, CUBIC_BAND)?;
    banded_solve(&lower, n, CUBIC_BAND, &mut rhs, c);
    let mut values: Vec<f32> = rhs.iter().map(|&v| v as f32).collect();
    if rotation {
        for key in values.chunks_exact_mut(CUBIC_UNKNOWNS * c) {
            unit_length(&mut key[c..2 * c])?;
        }
    }
    values.iter().all(|v| v.is_finite()).then_some(values)
}

/// The Cholesky factor L (A = L Lᵀ) of the symmetric banded matrix `band` (`n` rows, `p`
/// entries right of the diagonal, `band[i * (p + 1) + d] = A[i][i + d]`), stored as
/// `lower[i * (p + 1) + d] = L[i][i - d]`; None when A is not positive definite.
fn banded_cholesky(band: &[f64], n: usize, p: usize) -> Option<Vec<f64>> {
    let w = p + 1;
    let mut lower = vec![0f64; n * w];
    for i in 0..n {
        for j in i.saturating_sub(p)..=i {
            // A[j][i] less the products of rows i and j left of column j.
            let mut sum = band[j * w + (i - j)];
            for k in i.saturating_sub(p)..j {
                sum -= lower[i * w + (i - k)] * lower[j * w + (j - k)];
            }
            if i == j {
                if !(sum > 0.0 && sum.is_finite()) {
                    return None;
                }
                lower[i * w] = sum.sqrt();
            } else {
                lower[i * w + (i - j)] = sum / lower[j * w];
            }
        }
    }
    Some(lower)
}

/// `rhs` (`n` rows of `c`) overwritten with the solution of L Lᵀ x = rhs, L from
/// [`banded_cholesky`].
fn banded_solve(lower: &[f64], n: usize, p: usize, rhs: &mut [f64], c: usize) {
    let w = p + 1;
    for i in 0..n {
        for j in 0..c {
            let mut sum = rhs[i * c + j];
            for k in i.saturating_sub(p)..i {
                sum -= lower[i * w + (i - k)] * rhs[k * c + j];
            }
            rhs[i * c + j] = sum / lower[i * w];
        }
    }
    for i in (0..n).rev() {
        for j in 0..c {
            let mut sum = rhs[i * c + j];
            for k in i + 1..(i + w).min(n) {
                sum -= lower[k * w + (k - i)] * rhs[k * c + j];
            }
            rhs[i * c + j] = sum / lower[i * w];
        }
    }
}
