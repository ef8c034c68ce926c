//! A node property that has no exact glTF form (a rotation, whose FBX curves are Euler
//! angles; a translation or scale with weighted tangents, animated pivots or helpers)
//! sampled from ufbx's evaluation until it is within tolerance ([`super::track`]).
//!
//! Based on: adaptive subdivision of a piecewise cubic Hermite interpolant (de Boor, "A
//! Practical Guide to Splines", ch. IV: its error is O(h⁴), so halving an interval cuts it
//! sixteenfold; a chord's is O(h²)).
//!
//! Method: the knots are ufbx's bake of the property without its frame-rate samples (the
//! curves' keys and the two sides of each step) and the take's ends. When playing the knots'
//! values LINEAR (lerp, or slerp as the runtime does) is within tolerance at the quarter
//! points of every interval, that is the track. Otherwise the track is CUBICSPLINE: each
//! knot's tangents are ufbx's one-sided derivatives there (second-order differences inside
//! the interval, so a key's broken tangents stay broken), and an interval off by more than the
//! tolerance at a quarter point is halved (a knot at its middle, with ufbx's value and central
//! derivative), at most until [`MAX_SEGMENTS_PER_KEY`] pieces. A step's short ramp is kept
//! as the bake makes it (its tangents its secant). Rotation knots are kept on one hemisphere
//! (each quaternion's sign chosen nearest the previous), so the Hermite runs between the
//! right pair.
//!
//! Cost: ufbx evaluations, about 12 per knot made.

use super::MAX_SEGMENTS_PER_KEY;
use super::track::{self, CHECKS, Knot, Property, Target, Track};

/// A derivative's step, as a fraction of the interval it is taken in: 1e-4 leaves a
/// second-order difference's truncation (about 1e-8 of the interval's squared curvature)
/// and f64 cancellation (about 1e-12 of the value) far below f32.
const DERIVATIVE_STEP: f64 = 1e-4;

/// A knot time of the bake: time (file seconds), and whether the interval after it is a
/// step's ramp (not a curve).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Base {
    pub time: f64,
    pub step_after: bool,
}

/// A sampled track and its worst error in tolerances (above 1 where the cap stopped short).
pub(super) struct Sampled {
    pub track: Track,
    pub worst: f64,
}

/// `property` of `target`'s node sampled at and between `base` (at least one knot).
pub(super) fn sample(target: &Target, property: Property, base: &[Base]) -> Sampled {
    let mut values: Vec<[f64; 4]> = Vec::with_capacity(base.len());
    for b in base {
        let v = target.eval(property, b.time);
        values.push(match values.last() {
            Some(&prev) => nearest(property, prev, v),
            None => v,
        });
    }
    let linear = Track {
        knots: base
            .iter()
            .zip(&values)
            .map(|(b, &v)| Knot::new(b.time, v, [0.0; 4], [0.0; 4]))
            .collect(),
        cubic: false,
    };
    let worst = track::worst_error(target, property, &linear, |i| base[i].step_after);
    if worst <= 1.0 {
        return Sampled {
            track: linear,
            worst,
        };
    }
    let depth = MAX_SEGMENTS_PER_KEY.max(1).ilog2();
    let mut knots: Vec<Knot> = Vec::with_capacity(base.len());
    let mut worst: f64 = 0.0;
    for (i, (b, &v)) in base.iter().zip(&values).enumerate() {
        let prev = i.checked_sub(1).map(|p| (&base[p], values[p]));
        let next = base.get(i + 1).map(|n| (n, values[i + 1]));
        let in_tangent = match prev {
            Some((p, pv)) if p.step_after => secant(pv, p.time, v, b.time),
            Some((p, _)) => derivative(target, property, v, b.time, -(b.time - p.time)),
            None => [0.0; 4],
        };
        let out_tangent = match next {
            Some((n, nv)) if b.step_after => secant(v, b.time, nv, n.time),
            Some((n, _)) => derivative(target, property, v, b.time, n.time - b.time),
            None => [0.0; 4],
        };
        let knot = Knot::new(b.time, v, in_tangent, out_tangent);
        let knot = match knots.last() {
            Some(&a) if !base[i - 1].step_after => {
                let (error, knot) = refine(target, property, a, knot, depth, &mut knots);
                worst = worst.max(error);
                knot
            }
            Some(a) => continued(property, a, knot),
            None => knot,
        };
        knots.push(knot);
    }
    Sampled {
        track: Track { knots, cubic: true },
        worst,
    }
}

/// Knots between `a` and `b` (pushed onto `out`, `a` already there) until the Hermite
/// between each pair is within tolerance or `depth` halvings are spent; the worst error left,
/// and `b` as the last of them continues (a rotation's sign follows the knots made, so a
/// turn past 180° between two keys keeps turning).
fn refine(
    target: &Target,
    property: Property,
    a: Knot,
    b: Knot,
    depth: u32,
    out: &mut Vec<Knot>,
) -> (f64, Knot) {
    let b = continued(property, &a, b);
    let error = CHECKS
        .iter()
        .map(|&u| {
            let t = a.time + (b.time - a.time) * u;
            let ours = track::interpolate(property, true, &a, &b, u);
            target.error(property, ours, target.eval(property, t))
        })
        .fold(0.0, f64::max);
    if error <= 1.0 || depth == 0 {
        return (error, b);
    }
    let t = 0.5 * (a.time + b.time);
    let v = nearest(property, a.value, target.eval(property, t));
    let half = 0.5 * (b.time - a.time);
    let ahead = derivative(target, property, v, t, half);
    let behind = derivative(target, property, v, t, -half);
    let d: [f64; 4] = std::array::from_fn(|i| 0.5 * (ahead[i] + behind[i]));
    let m = Knot::new(t, v, d, d);
    let (left, m) = refine(target, property, a, m, depth - 1, out);
    out.push(m);
    let (right, b) = refine(target, property, m, b, depth - 1, out);
    (left.max(right), b)
}

/// `b`, or for a rotation `b` negated (value and tangents) when nearer so to `a`.
fn continued(property: Property, a: &Knot, b: Knot) -> Knot {
    if nearest(property, a.value, b.value) == b.value {
        return b;
    }
    Knot {
        time: b.time,
        value: b.value.map(|x| -x),
        in_tangent: b.in_tangent.map(|x| -x),
        out_tangent: b.out_tangent.map(|x| -x),
    }
}

/// ufbx's derivative (per second) at `t`, where its value is `v`, from inside the interval
/// of signed length `span` (negative: before `t`): a second-order one-sided difference.
fn derivative(target: &Target, property: Property, v: [f64; 4], t: f64, span: f64) -> [f64; 4] {
    let h = span * DERIVATIVE_STEP;
    let v1 = nearest(property, v, target.eval(property, t + h));
    let v2 = nearest(property, v, target.eval(property, t + 2.0 * h));
    std::array::from_fn(|i| (-3.0 * v[i] + 4.0 * v1[i] - v2[i]) / (2.0 * h))
}

/// The slope (per second) of the straight line from `a` at `ta` to `b` at `tb`.
fn secant(a: [f64; 4], ta: f64, b: [f64; 4], tb: f64) -> [f64; 4] {
    std::array::from_fn(|i| (b[i] - a[i]) / (tb - ta))
}

/// `v`, or for a rotation the quaternion of its sign nearest `reference`.
fn nearest(property: Property, reference: [f64; 4], v: [f64; 4]) -> [f64; 4] {
    let dot: f64 = (0..4).map(|i| reference[i] * v[i]).sum();
    if property == Property::Rotation && dot < 0.0 {
        v.map(|x| -x)
    } else {
        v
    }
}
