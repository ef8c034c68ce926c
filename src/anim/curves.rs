//! One channel's curves for display: per component, a polyline over a time window that passes
//! through every key and stays within a tolerance (one pixel's worth of value) of the curve
//! the player samples; the keys with their values, and CUBICSPLINE tangent handles.
//!
//! Based on: the chord bound of piecewise-linear interpolation, `|f − L| ≤ Δ²/8 · max|f''|`
//! (de Boor, "A Practical Guide to Splines", chapter 3), and Blender's F-curve display: Euler
//! angles unwrapped to the nearest equivalent of the previous point (its "Euler filter"),
//! Bézier handles a third of the interval long.
//!
//! Method: every value is [`Sampler::sample_binary_search`], the sampler the player uses, so
//! the drawn curve is the played one. Between two keys:
//! - STEP holds the key and jumps at the next (a vertical segment at the key time);
//! - LINEAR translation, scale and weights are straight, so the keys alone are exact;
//! - CUBICSPLINE translation, scale and weights are cubics in the interval parameter `s`:
//!   `p''(s)` is linear in `s`, so its largest size is at an end, and `n` equal steps with
//!   `(1/n)² · max|p''| / 8 ≤ tolerance` keep every point of the cubic within the tolerance of
//!   the polyline (a proof, not a probe);
//! - rotations (slerped, or splined and normalised; as Euler angles or quaternion components)
//!   are not polynomials: each interval is cut in [`ROTATION_PIECES`] pieces, then halved
//!   until the chord is within the tolerance at a quarter, a half and three quarters of it.
//!
//! Quaternions are drawn on one hemisphere (each point continues the previous one's sign, as
//! `q` and `−q` are one rotation); Euler angles (X, then Y, then Z,
//! [`crate::math::euler_xyz_rad`]) are unwrapped, so a turn past 180° keeps climbing.
//!
//! Cost: one sample per point; the points scale with the curve's length in tolerances (about
//! one per pixel of a drawn curve), not with the clip's keys outside the window.
//!
//! Limits: the rotation probes can miss a wiggle narrower than a quarter of a piece; near
//! gimbal lock (Y at ±90°) the Euler angles of two nearby rotations differ by up to 180° in X
//! and Z, and the curve shows that jump as the angles do; rotation handles are the curve's
//! one-sided slopes measured at the key, not the file's tangents (those act on quaternion
//! components before normalising).

use super::{Interpolation, Path, Sampler};
use crate::choice::Choice;
use crate::error::{Error, Result};

/// How a rotation channel is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RotationForm {
    /// Euler angles in degrees, X then Y then Z (`R = Rz · Ry · Rx`, Blender's "XYZ"), unwrapped.
    #[default]
    EulerXyz,
    /// The quaternion's x, y, z and w, on one hemisphere.
    Quaternion,
}

impl Choice for RotationForm {
    const ALL: &'static [RotationForm] = &[RotationForm::EulerXyz, RotationForm::Quaternion];
    fn name(self) -> &'static str {
        match self {
            RotationForm::EulerXyz => "euler",
            RotationForm::Quaternion => "quaternion",
        }
    }
    fn help(self) -> &'static str {
        match self {
            RotationForm::EulerXyz => {
                "Euler angles in degrees, XYZ order (R = Rz·Ry·Rx), unwrapped"
            }
            RotationForm::Quaternion => "quaternion components x, y, z, w",
        }
    }
}

/// Pieces each rotation interval is cut into before halving (22.5° or less of turn each, as a
/// slerp turns at most 180°), so every point is unwrapped from a near neighbour.
pub const ROTATION_PIECES: usize = 8;

/// Halvings of one rotation piece at most (2¹⁶ points a piece): the probes of a curve that
/// is not continuous (a rotation through a zero-length spline quaternion) never converge.
const MAX_DEPTH: u32 = 16;

/// A key inside the window, in the drawn form.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveKey {
    /// The key's index in the sampler.
    pub key: usize,
    /// Its time (seconds).
    pub time_s: f32,
    /// Its value per component, as drawn (degrees for Euler angles).
    pub values: Vec<f64>,
}

/// A CUBICSPLINE tangent handle: from a key's point to a third of the interval along its
/// tangent (time seconds, value as drawn).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Handle {
    /// The component it belongs to.
    pub component: usize,
    /// The key it starts at.
    pub key: usize,
    /// The key's point.
    pub from: [f64; 2],
    /// The handle's end.
    pub to: [f64; 2],
}

/// What [`CurveJob`] draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curves {
    /// Per component, the polyline: (time seconds, value as drawn), times non-decreasing.
    pub lines: Vec<Vec<[f64; 2]>>,
    /// The keys inside the window, in time order.
    pub keys: Vec<CurveKey>,
    /// CUBICSPLINE tangent handles of the keys inside the window.
    pub handles: Vec<Handle>,
}

/// How a [`CurveJob`] went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CurveStats {
    /// Points per component.
    pub points: usize,
    /// Samples taken (points, probes and handle slopes).
    pub samples: usize,
    /// Deepest halving of a rotation piece.
    pub max_depth: u32,
}

/// Draws one channel's curves over a window.
///
/// Rules (`validate()`):
/// 1. the sampler is valid ([`Sampler::validate`]);
/// 2. the window is finite and starts before it ends;
/// 3. the tolerance is finite and above zero;
/// 4. a rotation sampler has four components;
/// 5. the curve fits in `max_points` points a component (checked before each point is added;
///    `run()` then stops and says so).
pub struct CurveJob<'a> {
    /// The channel's keys.
    pub sampler: &'a Sampler,
    /// What the channel drives (rotations are drawn in `rotation`'s form).
    pub path: Path,
    /// How a rotation is drawn.
    pub rotation: RotationForm,
    /// The times drawn, seconds.
    pub window_s: (f32, f32),
    /// The largest distance, in drawn value units, between the polyline and the curve.
    pub tolerance: f64,
    /// Points a component at most.
    pub max_points: usize,
    /// The curves (cleared and refilled).
    pub output: &'a mut Curves,
}

impl CurveJob<'_> {
    /// Check rules 1–4 (see the type's documentation).
    pub fn validate(&self) -> Result<()> {
        let fail = |rule, message: String| Err(Error::job("CurveJob", rule, message));
        if let Err(e) = self.sampler.validate() {
            return fail(1, e);
        }
        let (w0, w1) = self.window_s;
        if !(w0.is_finite() && w1.is_finite() && w0 < w1) {
            return fail(2, format!("window {w0} to {w1} s is not a finite span"));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return fail(3, format!("tolerance {} is not above zero", self.tolerance));
        }
        if self.is_rotation() && self.sampler.components != 4 {
            return fail(
                4,
                format!(
                    "a rotation has 4 components, not {}",
                    self.sampler.components
                ),
            );
        }
        Ok(())
    }

    fn is_rotation(&self) -> bool {
        self.path == Path::Rotation
    }

    /// Validate, then draw the curves into `output`.
    pub fn run(&mut self) -> Result<CurveStats> {
        self.validate()?;
        let components = match (self.is_rotation(), self.rotation) {
            (true, RotationForm::EulerXyz) => 3,
            _ => self.sampler.components,
        };
        let mut pen = Pen {
            sampler: self.sampler,
            euler: self.is_rotation() && self.rotation == RotationForm::EulerXyz,
            tolerance: self.tolerance,
            max_points: self.max_points,
            raw: vec![0.0; self.sampler.components],
            out: Curves {
                lines: vec![Vec::new(); components],
                ..Curves::default()
            },
            stats: CurveStats::default(),
        };
        pen.draw(self.window_s)?;
        pen.stats.points = pen.out.lines.first().map_or(0, Vec::len);
        *self.output = pen.out;
        Ok(pen.stats)
    }
}

/// The names of a channel's drawn components: `x y z`, `X° Y° Z°`, `x y z w`, `target k`.
pub fn component_names(path: Path, rotation: RotationForm, components: usize) -> Vec<String> {
    let names: &[&str] = match (path, rotation) {
        (Path::Rotation, RotationForm::EulerXyz) => &["X°", "Y°", "Z°"],
        (Path::Rotation, RotationForm::Quaternion) => &["x", "y", "z", "w"],
        (Path::Translation | Path::Scale, _) => &["x", "y", "z"],
        (Path::Weights, _) => &[],
    };
    if names.is_empty() {
        (0..components).map(|k| format!("target {k}")).collect()
    } else {
        names.iter().map(|n| (*n).to_string()).collect()
    }
}

/// The drawing state of one [`CurveJob::run`].
struct Pen<'a> {
    sampler: &'a Sampler,
    euler: bool,
    tolerance: f64,
    max_points: usize,
    raw: Vec<f32>,
    out: Curves,
    stats: CurveStats,
}

impl Pen<'_> {
    fn draw(&mut self, (w0, w1): (f32, f32)) -> Result<()> {
        let times = &self.sampler.times_s;
        let n = times.len();
        let first = self.value_at(w0, None);
        self.push(w0, &first)?;
        if times[0] > w0 && times[0] <= w1 {
            self.segment(w0, times[0], None)?;
        }
        if times[0] >= w0 && times[0] <= w1 {
            self.record_key(0);
        }
        for k in 0..n.saturating_sub(1) {
            let (a, b) = (times[k].max(w0), times[k + 1].min(w1));
            if a >= b {
                continue;
            }
            self.segment(a, b, Some(k))?;
            if times[k + 1] <= w1 {
                self.record_key(k + 1);
            }
        }
        let last = times[n - 1];
        if last < w1 {
            self.segment(last.max(w0), w1, None)?;
        }
        self.handles();
        Ok(())
    }

    /// Points for `(a, b]`: inside interval `k` (from key `k` to `k + 1`), or where a key is
    /// held (`None`: before the first key or after the last).
    fn segment(&mut self, a: f32, b: f32, k: Option<usize>) -> Result<()> {
        let Some(k) = k else {
            let v = self.continued(b, None);
            return self.push(b, &v);
        };
        let times = &self.sampler.times_s;
        let rotation = self.sampler.is_rotation;
        match self.sampler.interpolation {
            Interpolation::Step => {
                let held = self.continued_value_of(k);
                self.push(b, &held)?;
                if b == times[k + 1] {
                    let v = self.continued(b, None);
                    self.push(b, &v)?;
                }
                Ok(())
            }
            Interpolation::Linear if !rotation => {
                let v = self.continued(b, None);
                self.push(b, &v)
            }
            Interpolation::CubicSpline if !rotation => {
                let h = times[k + 1] - times[k];
                let steps = self.cubic_steps(k, f64::from((b - a) / h));
                if steps > self.max_points {
                    return Err(self.too_many());
                }
                for j in 1..=steps {
                    let t = if j == steps {
                        b
                    } else {
                        a + (b - a) * (j as f32 / steps as f32)
                    };
                    let v = self.continued(t, None);
                    self.push(t, &v)?;
                }
                Ok(())
            }
            _ => {
                for j in 1..=ROTATION_PIECES {
                    let t0 = self.last_time();
                    let t1 = if j == ROTATION_PIECES {
                        b
                    } else {
                        a + (b - a) * (j as f32 / ROTATION_PIECES as f32)
                    };
                    let v0 = self.last_point();
                    let v1 = self.continued(t1, Some(&v0));
                    self.refine(t0, &v0, t1, v1, 0)?;
                }
                Ok(())
            }
        }
    }

    /// Equal steps over a share `span` of CUBICSPLINE interval `k` that keep every component's
    /// cubic within the tolerance of its chords (the module's bound).
    fn cubic_steps(&self, k: usize, span: f64) -> usize {
        let s = self.sampler;
        let c = s.components;
        let h = f64::from(s.times_s[k + 1] - s.times_s[k]);
        let part = |e: usize, i: usize| f64::from(s.values[e * c + i]);
        let mut m: f64 = 0.0;
        for i in 0..c {
            let (v0, b0) = (part(3 * k + 1, i), part(3 * k + 2, i));
            let (a1, v1) = (part(3 * (k + 1), i), part(3 * (k + 1) + 1, i));
            let at0 = -6.0 * v0 - 4.0 * h * b0 + 6.0 * v1 - 2.0 * h * a1;
            let at1 = 6.0 * v0 + 2.0 * h * b0 - 6.0 * v1 + 4.0 * h * a1;
            m = m.max(at0.abs()).max(at1.abs());
        }
        let steps = (span * (m / (8.0 * self.tolerance)).sqrt()).ceil();
        // At least one step; the cap only matters for a tolerance far below f32's own noise,
        // and push() refuses past max_points anyway.
        steps.clamp(1.0, 1e9) as usize
    }

    /// Halve `(t0, t1]` until its chord is within the tolerance at the probes, pushing the
    /// points after `t0`.
    fn refine(&mut self, t0: f32, v0: &[f64], t1: f32, v1: Vec<f64>, depth: u32) -> Result<()> {
        self.stats.max_depth = self.stats.max_depth.max(depth);
        let chord =
            |u: f64| -> Vec<f64> { v0.iter().zip(&v1).map(|(a, b)| a + (b - a) * u).collect() };
        let mut far = false;
        let mut mid = Vec::new();
        for u in [0.5, 0.25, 0.75] {
            let t = t0 + (t1 - t0) * u as f32;
            let line = chord(u);
            let v = self.continued(t, Some(&line));
            far |= v
                .iter()
                .zip(&line)
                .any(|(a, b)| (a - b).abs() > self.tolerance);
            if u == 0.5 {
                mid = v;
            }
            if far {
                break;
            }
        }
        let tm = t0 + (t1 - t0) * 0.5;
        if !far || depth >= MAX_DEPTH || tm <= t0 || tm >= t1 {
            return self.push(t1, &v1);
        }
        self.refine(t0, v0, tm, mid.clone(), depth + 1)?;
        self.refine(tm, &mid, t1, v1, depth + 1)
    }

    /// The CUBICSPLINE handles of the keys inside the window.
    fn handles(&mut self) {
        if self.sampler.interpolation != Interpolation::CubicSpline {
            return;
        }
        let s = self.sampler;
        let times = &s.times_s;
        let keys = std::mem::take(&mut self.out.keys);
        for key in &keys {
            let k = key.key;
            let t = f64::from(times[k]);
            let sides = [
                (k > 0).then(|| (-1.0, k - 1)),
                (k + 1 < times.len()).then_some((1.0, k)),
            ];
            for (side, interval) in sides.into_iter().flatten() {
                let h = times[interval + 1] - times[interval];
                let slopes = if s.is_rotation {
                    self.measured_slopes(times[k], side * h, &key.values)
                } else {
                    let tangent = if side < 0.0 { 3 * k } else { 3 * k + 2 };
                    s.values[tangent * s.components..(tangent + 1) * s.components]
                        .iter()
                        .map(|&x| f64::from(x))
                        .collect()
                };
                let dt = f64::from(side * h) / 3.0;
                for (i, (&v, slope)) in key.values.iter().zip(slopes).enumerate() {
                    self.out.handles.push(Handle {
                        component: i,
                        key: k,
                        from: [t, v],
                        to: [t + dt, v + slope * dt],
                    });
                }
            }
        }
        self.out.keys = keys;
    }

    /// The drawn form's slope (per second) leaving `time_s` towards `time_s + toward_s`.
    fn measured_slopes(&mut self, time_s: f32, toward_s: f32, at: &[f64]) -> Vec<f64> {
        let dt = toward_s * 1e-3;
        let t = time_s + dt;
        let v = self.continued(t, Some(at));
        let dt = f64::from(t - time_s);
        v.iter()
            .zip(at)
            .map(|(b, a)| if dt == 0.0 { 0.0 } else { (b - a) / dt })
            .collect()
    }

    fn record_key(&mut self, k: usize) {
        let time_s = self.sampler.times_s[k];
        let values = self.last_point();
        self.out.keys.push(CurveKey {
            key: k,
            time_s,
            values,
        });
    }

    fn last_time(&self) -> f32 {
        self.out
            .lines
            .first()
            .and_then(|l| l.last())
            .map_or(0.0, |p| p[0] as f32)
    }

    fn last_point(&self) -> Vec<f64> {
        self.out
            .lines
            .iter()
            .map(|l| l.last().map_or(0.0, |p| p[1]))
            .collect()
    }

    fn push(&mut self, t: f32, v: &[f64]) -> Result<()> {
        let len = self.out.lines.first().map_or(0, Vec::len);
        if len >= self.max_points {
            return Err(self.too_many());
        }
        for (line, &x) in self.out.lines.iter_mut().zip(v) {
            line.push([f64::from(t), x]);
        }
        Ok(())
    }

    fn too_many(&self) -> Error {
        Error::job(
            "CurveJob",
            5,
            format!(
                "the curve needs more than {} points at a tolerance of {:e}",
                self.max_points, self.tolerance
            ),
        )
    }

    /// Key `k`'s own value in the drawn form, continuing the last point.
    fn continued_value_of(&mut self, k: usize) -> Vec<f64> {
        let t = self.sampler.times_s[k];
        let reference = self.last_point();
        self.value_at(t, Some(&reference))
    }

    /// The value at `t`, continuing `near` (or the last point when `None`).
    fn continued(&mut self, t: f32, near: Option<&[f64]>) -> Vec<f64> {
        let reference = match near {
            Some(r) => r.to_vec(),
            None => self.last_point(),
        };
        self.value_at(t, Some(&reference))
    }

    /// The sampled value at `t` in the drawn form: Euler angles unwrapped to the nearest of
    /// `near`, quaternions on `near`'s hemisphere.
    fn value_at(&mut self, t: f32, near: Option<&[f64]>) -> Vec<f64> {
        self.stats.samples += 1;
        self.sampler.sample_binary_search(t, &mut self.raw);
        let raw = &self.raw;
        if !self.sampler.is_rotation {
            return raw.iter().map(|&x| f64::from(x)).collect();
        }
        let q = glam::Quat::from_xyzw(raw[0], raw[1], raw[2], raw[3]);
        if self.euler {
            let e = crate::math::euler_xyz_rad(q);
            let mut v = [e.x, e.y, e.z].map(|a| f64::from(a).to_degrees()).to_vec();
            if let Some(near) = near {
                for (x, r) in v.iter_mut().zip(near) {
                    *x += 360.0 * ((r - *x) / 360.0).round();
                }
            }
            return v;
        }
        let mut v: Vec<f64> = raw.iter().map(|&x| f64::from(x)).collect();
        if let Some(near) = near {
            let dot: f64 = v.iter().zip(near).map(|(a, b)| a * b).sum();
            if dot < 0.0 {
                v.iter_mut().for_each(|x| *x = -*x);
            }
        }
        v
    }
}
