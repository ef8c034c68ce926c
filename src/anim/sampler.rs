//! Keyframe sampler with irregular key times and a cached cursor.
//!
//! Based on: the glTF 2.0 specification (Khronos Group), §3.11, for the interpolation; Weber,
//! "Run-Time Skin Deformation", §Applying Motion to Bones, for the cursor; the gallop is
//! exponential search (Bentley and Yao, "An almost optimal algorithm for unbounded searching",
//! 1976).
//!
//! Method: STEP holds the previous key; LINEAR lerps vectors and slerps quaternions along the
//! shorter arc (the sign of the second key is flipped when the 4D dot product is negative);
//! CUBICSPLINE evaluates the cubic Hermite spline with in/out tangents scaled by the key
//! interval and normalises quaternion results. Outside the key range the first/last value is
//! held (clamping). The key interval found for the previous sample is cached: forward playback
//! checks the current and the next interval (no search while keys are sparser than frames);
//! when more keys were skipped, or time went backwards (reverse play, a loop wrap, a seek), it
//! gallops from the cursor (steps 1, 2, 4, ...) and binary-searches the bracket. The cursor
//! also caches the slerp angle and 1/sin of its interval.
//!
//! Cost: O(1) per sample in forward playback, O(log d) when d keys are skipped — never
//! dependent on the clip's total key count; rotation samples inside one interval cost two
//! sin() calls.
//!
//! Limits: a cursor follows one playhead, so sampling one channel at far-apart times in turn
//! searches every time; CUBICSPLINE rotations are splined component by component and then
//! normalised (as glTF specifies), so their angular speed is not constant.

/// Interpolation between keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Hold the previous key's value.
    Step,
    /// Lerp vectors; slerp quaternions along the shorter arc.
    Linear,
    /// Cubic Hermite spline with in/out tangents per key.
    CubicSpline,
}

impl Interpolation {
    /// The glTF name (`"STEP"`, `"LINEAR"`, `"CUBICSPLINE"`).
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Step => "STEP",
            Interpolation::Linear => "LINEAR",
            Interpolation::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// Cached key interval of one sampler (see the module documentation), plus the slerp set-up
/// of that interval (angle, 1/sin, sign), which forward playback reuses until the interval
/// changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cursor {
    key: usize,
    /// Interval whose slerp set-up is cached (`usize::MAX`: none).
    slerp_key: usize,
    slerp: SlerpSetup,
}

impl Cursor {
    /// Move the cursor to interval `k` (a caller that found the interval itself, as the
    /// four-lane sampler's next-interval check does, keeps the cursor where a search from it
    /// stays short).
    pub(crate) fn set_key(&mut self, k: usize) {
        self.key = k;
    }
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            key: 0,
            slerp_key: usize::MAX,
            slerp: SlerpSetup::default(),
        }
    }
}

/// The trigonometric part of a slerp set-up (angle and 1/sin of it), cached per interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SlerpSetup {
    theta: f32,
    inv_sin: f32,
}

/// Below this angle between keys sin() loses precision; lerp + normalise (in `finish`) is
/// exact enough (angle error < 4e-6 rad).
const LERP_COS_THRESHOLD: f32 = 0.9995;

/// Shortest-arc slerp `a` → `b` at `u`, the trigonometric set-up taken from (and stored in)
/// `cache` when given. The dot product and the near-parallel lerp path are always evaluated
/// directly: they are cheaper than the cache bookkeeping.
#[inline]
fn slerp_cached(
    a: &[f32],
    b: &[f32],
    u: f32,
    k: usize,
    cache: Option<&mut Cursor>,
    out: &mut [f32],
) {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    let sign = if dot < 0.0 { -1.0 } else { 1.0 };
    let dot = dot * sign;
    let (wa, wb) = if dot > LERP_COS_THRESHOLD {
        (1.0 - u, u)
    } else {
        let fresh = || {
            let theta = dot.clamp(-1.0, 1.0).acos();
            SlerpSetup {
                theta,
                inv_sin: 1.0 / theta.sin(),
            }
        };
        // The fresh and the cached set-up are computed identically: results are bit-equal.
        let s = match cache {
            Some(c) if c.slerp_key == k => c.slerp,
            Some(c) => {
                c.slerp = fresh();
                c.slerp_key = k;
                c.slerp
            }
            None => fresh(),
        };
        (
            ((1.0 - u) * s.theta).sin() * s.inv_sin,
            (u * s.theta).sin() * s.inv_sin,
        )
    };
    let wb = wb * sign;
    for i in 0..4 {
        out[i] = wa * a[i] + wb * b[i];
    }
}

/// What a sample reads ([`Sampler::segment`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Key `k`'s value alone.
    Held(usize),
    /// The interval from key `k` to key `k + 1`.
    Span(usize),
}

/// Key times and values of one channel.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampler {
    /// How values between keys are computed.
    pub interpolation: Interpolation,
    /// Strictly increasing key times in seconds.
    pub times_s: Vec<f32>,
    /// Key values, `components` floats per element. CUBICSPLINE stores three elements per
    /// key: in-tangent, value, out-tangent (glTF order).
    pub values: Vec<f32>,
    /// Floats per element: 3 (translation/scale), 4 (rotation xyzw), target count (weights).
    pub components: usize,
    /// Quaternion channel: slerp and normalise instead of lerp.
    pub is_rotation: bool,
}

impl Sampler {
    /// Check the invariants sampling relies on (returns a description of the first broken one).
    pub fn validate(&self) -> Result<(), String> {
        if self.times_s.is_empty() {
            return Err("sampler has no keys".into());
        }
        if self.components == 0 {
            return Err("sampler output has zero components".into());
        }
        if let Some(i) = self.times_s.iter().position(|t| !t.is_finite()) {
            return Err(format!("input time {i} is not finite"));
        }
        // Interpolation divides by key intervals: a span that overflows f32 (keys at ±3e38)
        // would turn every blend factor into 0 or NaN.
        if let (Some(first), Some(last)) = (self.times_s.first(), self.times_s.last())
            && !(last - first).is_finite()
        {
            return Err(format!(
                "input times span {first:e} to {last:e} s: the interval overflows f32"
            ));
        }
        if let Some(i) = self.times_s.windows(2).position(|w| w[1] <= w[0]) {
            return Err(format!(
                "input times not strictly increasing at key {} ({} then {})",
                i + 1,
                self.times_s[i],
                self.times_s[i + 1]
            ));
        }
        let per_key = if self.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let need = self.times_s.len() * per_key * self.components;
        if self.values.len() != need {
            return Err(format!(
                "output has {} floats, {} keys of {} interpolation need {need}",
                self.values.len(),
                self.times_s.len(),
                self.interpolation.name()
            ));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(format!("output value {i} is not finite"));
        }
        Ok(())
    }

    /// Key element `k` (the value, not a tangent).
    #[inline]
    pub(crate) fn value(&self, k: usize) -> &[f32] {
        let c = self.components;
        match self.interpolation {
            Interpolation::CubicSpline => &self.values[(3 * k + 1) * c..(3 * k + 2) * c],
            _ => &self.values[k * c..(k + 1) * c],
        }
    }
    #[inline]
    fn in_tangent(&self, k: usize) -> &[f32] {
        let c = self.components;
        &self.values[3 * k * c..(3 * k + 1) * c]
    }
    #[inline]
    fn out_tangent(&self, k: usize) -> &[f32] {
        let c = self.components;
        &self.values[(3 * k + 2) * c..(3 * k + 3) * c]
    }

    /// Index `k` of the interval `[t_k, t_k+1)` holding `time_s`, using and updating the cursor.
    /// Requires at least two keys and `t_0 <= time_s < t_last`.
    #[inline]
    fn locate(&self, time_s: f32, cursor: &mut Cursor) -> usize {
        let t = &self.times_s;
        let last = t.len() - 2;
        let k0 = cursor.key.min(last);
        // The interval [lo, hi) of key indices known to hold the answer.
        let (lo, hi) = if t[k0] <= time_s {
            // Forward playback: the current or next interval in the common case.
            if time_s < t[k0 + 1] {
                return k0;
            }
            if k0 < last && time_s < t[k0 + 2] {
                cursor.key = k0 + 1;
                return k0 + 1;
            }
            // Gallop forward: steps 2, 4, 8, ... until a key beyond time_s.
            let mut step = 2;
            let mut a = k0 + 1;
            loop {
                let b = (a + step).min(last + 1);
                if b > last || time_s < t[b] {
                    break (a, b + 1);
                }
                a = b;
                step *= 2;
            }
        } else {
            // Backward (reverse play, loop wrap, seek back): gallop towards key 0.
            let mut step = 1;
            let mut b = k0;
            loop {
                let a = b.saturating_sub(step);
                if a == 0 || t[a] <= time_s {
                    break (a, b + 1);
                }
                b = a;
                step *= 2;
            }
        };
        // Binary search inside the window for the last key <= time_s.
        let hi = hi.min(t.len());
        let k = (lo + t[lo..hi].partition_point(|&x| x <= time_s))
            .saturating_sub(1)
            .min(last);
        cursor.key = k;
        k
    }

    /// Which keys a sample at `time_s` reads, and the times `[lo, hi)` for which that stays
    /// so (what [`super::soa`] caches): before the first key (and at it) the first key held,
    /// from the last key on the last one held, in between the interval `k` to `k + 1`.
    /// Moves the cursor as [`Sampler::sample`] does. Requires a validated sampler.
    pub(crate) fn segment(&self, time_s: f32, cursor: &mut Cursor) -> (Segment, f32, f32) {
        let t = &self.times_s;
        let n = t.len();
        if n == 1 {
            cursor.key = 0;
            return (Segment::Held(0), f32::NEG_INFINITY, f32::INFINITY);
        }
        if time_s <= t[0] {
            cursor.key = 0;
            return (Segment::Held(0), f32::NEG_INFINITY, t[0].next_up());
        }
        if time_s >= t[n - 1] {
            cursor.key = n - 2;
            return (Segment::Held(n - 1), t[n - 1], f32::INFINITY);
        }
        let k = self.locate(time_s, cursor);
        (Segment::Span(k), t[k], t[k + 1])
    }

    /// Sample at `time_s` into `out` (`components` floats), clamping outside the key range.
    pub fn sample(&self, time_s: f32, cursor: &mut Cursor, out: &mut [f32]) {
        self.sample_with(time_s, out, Some(cursor))
    }

    /// The same sample found by a plain binary search over all keys, ignoring any cursor:
    /// the reference the cursor is tested against, and the right call for one-off seeks.
    pub fn sample_binary_search(&self, time_s: f32, out: &mut [f32]) {
        self.sample_with(time_s, out, None)
    }

    #[inline]
    fn sample_with(&self, time_s: f32, out: &mut [f32], mut cursor: Option<&mut Cursor>) {
        let mut set_cursor = |k: usize| {
            if let Some(c) = cursor.as_deref_mut() {
                c.key = k;
            }
        };
        let n = self.times_s.len();
        let c = self.components;
        let out = &mut out[..c];
        if n == 1 || time_s <= self.times_s[0] || !time_s.is_finite() {
            out.copy_from_slice(self.value(0));
            set_cursor(0);
            return self.finish(out);
        }
        if time_s >= self.times_s[n - 1] {
            out.copy_from_slice(self.value(n - 1));
            set_cursor(n - 2);
            return self.finish(out);
        }
        let k = match cursor.as_deref_mut() {
            Some(c) => self.locate(time_s, c),
            None => self
                .times_s
                .partition_point(|&x| x <= time_s)
                .saturating_sub(1)
                .min(n - 2),
        };
        let (t0, t1) = (self.times_s[k], self.times_s[k + 1]);
        let dt = t1 - t0;
        let u = ((time_s - t0) / dt).clamp(0.0, 1.0);
        match self.interpolation {
            Interpolation::Step => out.copy_from_slice(self.value(k)),
            Interpolation::Linear => {
                let (a, b) = (self.value(k), self.value(k + 1));
                if self.is_rotation {
                    slerp_cached(a, b, u, k, cursor, out);
                } else {
                    for i in 0..c {
                        out[i] = a[i] + (b[i] - a[i]) * u;
                    }
                }
            }
            Interpolation::CubicSpline => {
                let (v0, b0) = (self.value(k), self.out_tangent(k));
                let (v1, a1) = (self.value(k + 1), self.in_tangent(k + 1));
                let u2 = u * u;
                let u3 = u2 * u;
                let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
                let h10 = (u3 - 2.0 * u2 + u) * dt;
                let h01 = -2.0 * u3 + 3.0 * u2;
                let h11 = (u3 - u2) * dt;
                for i in 0..c {
                    out[i] = h00 * v0[i] + h10 * b0[i] + h01 * v1[i] + h11 * a1[i];
                }
            }
        }
        self.finish(out)
    }

    #[inline]
    fn finish(&self, out: &mut [f32]) {
        if self.is_rotation {
            let len =
                (out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]).sqrt();
            if len > 0.0 && len.is_finite() {
                for x in out.iter_mut() {
                    *x /= len;
                }
            } else {
                out.copy_from_slice(&[0.0, 0.0, 0.0, 1.0]);
            }
        }
    }
}
