//! How far one skinning's vertices are from another's: the one measure every comparison uses
//! (`compare`, `diff`, the dump comparison, the partition's error, the viewer's live diff and
//! its heatmap, the rendered error colours, the GPU scene's error colours). The distance is
//! Euclidean, per vertex, in model units; a draw whose vertex counts differ, or a NaN, counts
//! as an infinite distance ([`nan_as_infinite`]), so a short or broken readback fails instead
//! of passing over what it has. [`RunningError`] is the one accumulator of the largest and
//! mean distance and where the largest is.

use glam::Vec3;

use super::SkinnedVertices;

/// `e` with NaN read as infinite: the one home of "NaN counts as infinity", so a broken pose
/// or readback is the largest error, never none (NaN compares false with everything).
pub fn nan_as_infinite(e: f64) -> f64 {
    if e.is_nan() { f64::INFINITY } else { e }
}

/// The distance between two positions, in f64 (NaN counts as infinite).
pub fn position_error(a: Vec3, b: Vec3) -> f64 {
    nan_as_infinite((a.as_dvec3() - b.as_dvec3()).length())
}

/// The running largest and mean of distances, and where the largest is (`W`: a vertex, and
/// when): the one accumulator every comparison keeps ([`VertexErrors`], `compare`'s
/// `DrawErrors`, `diff`'s frames and draws, the dump comparison). The first distance sets the
/// worst place; a later one moves it only when strictly larger; NaN counts as infinite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunningError<W> {
    /// Largest distance so far (0 before any).
    pub max: f64,
    /// Sum of the distances added.
    pub sum: f64,
    /// Distances added.
    pub count: usize,
    /// Where the largest is (None before any).
    pub worst: Option<W>,
}

impl<W> Default for RunningError<W> {
    fn default() -> Self {
        RunningError {
            max: 0.0,
            sum: 0.0,
            count: 0,
            worst: None,
        }
    }
}

impl<W> RunningError<W> {
    /// Add distance `e`, at `at`.
    pub fn add(&mut self, e: f64, at: W) {
        let e = nan_as_infinite(e);
        self.sum += e;
        self.count += 1;
        if e > self.max || self.worst.is_none() {
            self.max = e;
            self.worst = Some(at);
        }
    }

    /// Something that could not be measured at `at` (a short readback, a missing frame): the
    /// largest becomes infinite there; the mean is unchanged.
    pub fn add_infinite(&mut self, at: W) {
        self.max = f64::INFINITY;
        self.worst = Some(at);
    }

    /// The mean of the distances added (0 before any).
    pub fn mean(&self) -> f64 {
        if self.count > 0 {
            self.sum / self.count as f64
        } else {
            0.0
        }
    }
}

/// Each vertex's distance between `a` and `b` (same draws, in order), appended to `out` after
/// clearing it: one value per vertex of `a`.
pub fn vertex_distances(a: &[SkinnedVertices], b: &[SkinnedVertices], out: &mut Vec<f32>) {
    out.clear();
    for (x, y) in a.iter().zip(b) {
        if x.positions.len() == y.positions.len() {
            out.extend(
                x.positions
                    .iter()
                    .zip(&y.positions)
                    .map(|(p, q)| position_error(*p, *q) as f32),
            );
        } else {
            out.extend(std::iter::repeat_n(f32::INFINITY, x.positions.len()));
        }
    }
}

/// The largest and mean vertex distance between two skinnings, where the largest is, and
/// the scale to read them against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VertexErrors {
    /// Largest distance (model units; infinite for a mismatch or NaN).
    pub max: f32,
    /// Mean over every vertex.
    pub mean: f32,
    /// Where the largest is: draw and vertex.
    pub worst: (usize, usize),
    /// The diagonal of the reference's bounds (errors are read relative to it; at least
    /// `f32::MIN_POSITIVE`).
    pub diagonal: f32,
}

impl VertexErrors {
    /// `b` against the reference `a`.
    pub fn between(a: &[SkinnedVertices], b: &[SkinnedVertices]) -> VertexErrors {
        let mut d = Vec::new();
        vertex_distances(a, b, &mut d);
        let diagonal = super::bounds(a).map_or(1.0, crate::math::bounds_diagonal);
        VertexErrors::of_distances(&d, a, diagonal)
    }

    /// Summarise `distances` ([`vertex_distances`] of `reference` against something), read
    /// against `diagonal`.
    pub fn of_distances(
        distances: &[f32],
        reference: &[SkinnedVertices],
        diagonal: f32,
    ) -> VertexErrors {
        let mut acc = RunningError::default();
        let mut at = 0usize;
        for (draw, v) in reference.iter().enumerate() {
            for i in 0..v.positions.len() {
                let e = distances.get(at).copied().unwrap_or(f32::INFINITY);
                acc.add(f64::from(e), (draw, i));
                at += 1;
            }
        }
        VertexErrors {
            max: acc.max as f32,
            mean: acc.mean() as f32,
            worst: acc.worst.unwrap_or_default(),
            diagonal: diagonal.max(f32::MIN_POSITIVE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first distance sets the worst place, a larger one moves it, an equal one does not;
    /// NaN counts as infinite and a later NaN leaves the first infinite place.
    #[test]
    fn running_error_keeps_the_first_largest() {
        let mut acc = RunningError::default();
        assert_eq!((acc.max, acc.mean(), acc.worst), (0.0, 0.0, None));
        for (i, e) in [0.0, 2.0, 2.0, 1.0].into_iter().enumerate() {
            acc.add(e, i);
        }
        assert_eq!((acc.max, acc.mean(), acc.worst), (2.0, 1.25, Some(1)));
        acc.add(f64::NAN, 4);
        acc.add(f64::NAN, 5);
        assert_eq!((acc.max, acc.worst, acc.count), (f64::INFINITY, Some(4), 6));
        // What could not be measured is infinite there and leaves the mean alone.
        let mut short = RunningError::default();
        short.add(3.0, 0);
        short.add_infinite(7);
        short.add(5.0, 1);
        assert_eq!(
            (short.max, short.mean(), short.worst),
            (f64::INFINITY, 4.0, Some(7))
        );
    }
}
