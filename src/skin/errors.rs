//! How far one skinning's vertices are from another's: the one measure every comparison uses
//! (`compare`, the viewer's live diff and its heatmap, the rendered error colours, the GPU scene's
//! error colours). The distance is Euclidean, per vertex, in model units; a draw whose vertex
//! counts differ, or a NaN, counts as an infinite distance, so a short or broken readback
//! fails instead of passing over what it has.

use glam::Vec3;

use super::SkinnedVertices;

/// The distance between two positions, in f64 (NaN counts as infinite).
pub fn position_error(a: Vec3, b: Vec3) -> f64 {
    let e = (a.as_dvec3() - b.as_dvec3()).length();
    if e.is_nan() { f64::INFINITY } else { e }
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
        let diagonal = super::bounds(a).map_or(1.0, |(lo, hi)| (hi - lo).length());
        VertexErrors::of_distances(&d, a, diagonal)
    }

    /// Summarise `distances` ([`vertex_distances`] of `reference` against something), read
    /// against `diagonal`.
    pub fn of_distances(
        distances: &[f32],
        reference: &[SkinnedVertices],
        diagonal: f32,
    ) -> VertexErrors {
        let mut out = VertexErrors {
            diagonal: diagonal.max(f32::MIN_POSITIVE),
            ..Default::default()
        };
        let mut sum = 0.0f64;
        let mut at = 0usize;
        for (draw, v) in reference.iter().enumerate() {
            for i in 0..v.positions.len() {
                let e = distances.get(at).copied().unwrap_or(f32::INFINITY);
                let e = if e.is_nan() { f32::INFINITY } else { e };
                sum += f64::from(e);
                if e > out.max || at == 0 {
                    out.max = e;
                    out.worst = (draw, i);
                }
                at += 1;
            }
        }
        out.mean = if at > 0 {
            (sum / at as f64) as f32
        } else {
            0.0
        };
        out
    }
}
