//! The times a clip's error is measured at: every key time of every channel, 4 samples inside
//! each interval between consecutive key times, and at least [`MIN_RATE_HZ`] everywhere.
//!
//! Based on: issue 48's statement of the guarantee ("the bound is stated and checked at those
//! times"); the in-between samples catch a LINEAR or CUBICSPLINE curve bulging between keys, the
//! floor rate a long interval. Cost: O(keys + duration × rate). Limits: at most
//! [`MAX_EVALUATION_TIMES`], checked before the list is made.

use crate::anim::Animation;
use crate::error::{Error, Result};

/// Samples inside each interval between consecutive key times.
pub const SAMPLES_PER_INTERVAL: usize = 4;
/// The least sampling rate anywhere in the clip (Hz): twice a 60 Hz display's.
pub const MIN_RATE_HZ: f32 = 120.0;
/// Most evaluation times for one clip (about 2.4 hours at 120 Hz).
pub const MAX_EVALUATION_TIMES: usize = 1 << 20;

/// The evaluation times of `anim` (see the module documentation), ascending, distinct; from 0
/// (glTF clips play from 0) to the last key.
pub fn evaluation_times(anim: &Animation) -> Result<Vec<f32>> {
    let duration = anim.duration_s();
    let keys: usize = anim.channels.iter().map(|c| c.sampler.times_s.len()).sum();
    let floor = if duration.is_finite() {
        (duration * MIN_RATE_HZ).ceil() as usize
    } else {
        usize::MAX
    };
    let bound = keys
        .saturating_mul(SAMPLES_PER_INTERVAL + 1)
        .saturating_add(floor)
        .saturating_add(1);
    if bound > MAX_EVALUATION_TIMES {
        return Err(Error::invalid(
            anim.name.as_deref().unwrap_or("(clip)"),
            "animation",
            format!(
                "{keys} keys over {duration} s would take more than {MAX_EVALUATION_TIMES} \
                 evaluation times"
            ),
        ));
    }
    let mut knots: Vec<f32> = anim
        .channels
        .iter()
        .flat_map(|c| c.sampler.times_s.iter().copied())
        .chain([0.0, duration])
        .filter(|t| t.is_finite() && *t >= 0.0)
        .collect();
    knots.sort_by(f32::total_cmp);
    knots.dedup();
    let step = 1.0 / MIN_RATE_HZ;
    let mut out = Vec::with_capacity(bound.min(MAX_EVALUATION_TIMES));
    for w in knots.windows(2) {
        let (a, b) = (w[0], w[1]);
        let pieces = (SAMPLES_PER_INTERVAL + 1).max(((b - a) / step).ceil() as usize);
        out.extend((0..pieces).map(|k| a + (b - a) * k as f32 / pieces as f32));
    }
    out.extend(knots.last());
    out.dedup();
    Ok(out)
}
