//! Distance weights: `w = k / d^n` to every bone segment.
//!
//! Based on: Dunia, "Implicit Animation Overview", the FK chapter (k = 1 and n = 4 "do the job
//! remarkably well" for human-sized figures).
//!
//! Method: each vertex's weight to a bone is `k / d^n`, `d` the distance from the vertex to the
//! bone's segment (the parametric point–segment test, clamped to the segment's ends). The
//! weights of a vertex are normalised, those below `threshold` dropped, the `max_influences`
//! largest kept and normalised again. A vertex lying on a segment (d below
//! [`MIN_DISTANCE_OF_DIAGONAL`] of the mesh diagonal) takes that distance instead, so it
//! belongs almost wholly to that bone rather than dividing by zero. k scales every weight alike
//! and cancels in the normalisation; it is kept because the published formula has it.
//!
//! Cost: O(V · B) (every bone's weight; the largest few selected, then sorted), parallel over
//! vertices; memory O(V · max_influences) kept, O(B) per thread while a vertex is weighed. The
//! weight tools refuse a primitive past [`super::WORK_BUDGET_PAIRS`] vertex–bone pairs.
//!
//! Limits: `d` is a straight-line distance, not one along the surface, so a vertex near another
//! part's bone (an inner thigh near the other leg) takes weight from it; a bone's weight does
//! not depend on the flesh's thickness round it.

use rayon::prelude::*;

use super::{BoneAxis, Influences, WeightMesh, Work, limit_and_normalise, rule};
use crate::error::Result;

/// Smallest distance used, as a fraction of the mesh's bounding-box diagonal.
pub const MIN_DISTANCE_OF_DIAGONAL: f32 = 1e-5;

/// What [`DistanceWeightsJob::run`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DistanceStats {
    /// Influences per vertex after thresholding and limiting: histogram, index = count.
    pub influence_histogram: Vec<usize>,
    /// Largest normalised weight dropped by the threshold or the influence limit.
    pub max_dropped: f32,
    /// The work it took.
    pub work: Work,
}

/// Compute distance weights for every vertex.
pub struct DistanceWeightsJob<'a> {
    /// The mesh.
    pub mesh: &'a WeightMesh,
    /// The bones (at least one).
    pub bones: &'a [BoneAxis],
    /// Scale (> 0).
    pub k: f32,
    /// Fall-off exponent (> 0).
    pub n: f32,
    /// Normalised weights below this are dropped (0 ≤ threshold < 1).
    pub threshold: f32,
    /// Influences kept per vertex (1..=8).
    pub max_influences: usize,
}

impl DistanceWeightsJob<'_> {
    /// Rules: 1. at least one bone; 2. k and n finite and > 0; 3. threshold in [0, 1);
    /// 4. max_influences in 1..=8; 5. at most [`super::MAX_VERTICES`] vertices.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "DistanceWeightsJob";
        if self.bones.is_empty() {
            return Err(rule(JOB, 1, "no bones to weight vertices to"));
        }
        if !(self.k.is_finite() && self.k > 0.0 && self.n.is_finite() && self.n > 0.0) {
            return Err(rule(
                JOB,
                2,
                format!("k = {} and n = {} must be finite and > 0", self.k, self.n),
            ));
        }
        if !(0.0..1.0).contains(&self.threshold) {
            return Err(rule(
                JOB,
                3,
                format!("threshold {} is not in [0, 1)", self.threshold),
            ));
        }
        if !(1..=8).contains(&self.max_influences) {
            return Err(rule(
                JOB,
                4,
                format!("max_influences {} is not in 1..=8", self.max_influences),
            ));
        }
        super::check_vertex_count(JOB, 5, self.mesh.positions.len())
    }

    /// Validate, then weight every vertex.
    pub fn run(&self) -> Result<(Influences, DistanceStats)> {
        self.validate()?;
        let d_min = (MIN_DISTANCE_OF_DIAGONAL * self.mesh.diagonal()).max(f32::MIN_POSITIVE);
        let rows: Vec<(Vec<(u32, f32)>, f32)> = self
            .mesh
            .positions
            .par_iter()
            .map(|&p| {
                // Work relative to the nearest bone so k / d^n cannot overflow.
                let d: Vec<f32> = self
                    .bones
                    .iter()
                    .map(|b| b.distance(p).0.max(d_min))
                    .collect();
                let nearest = d.iter().copied().fold(f32::INFINITY, f32::min);
                let mut w: Vec<(u32, f32)> = d
                    .iter()
                    .enumerate()
                    .map(|(i, &di)| (i as u32, self.k * (nearest / di).powf(self.n)))
                    .collect();
                let sum: f32 = w.iter().map(|x| x.1).sum();
                for x in &mut w {
                    x.1 /= sum;
                }
                // Only the largest max_influences + 1 are ever looked at: select them (O(B)),
                // sort those alone ([`super::sort_influences`]'s order), and keep the kept ones
                // in a vector of their own (the B-long one is freed here: a row per vertex
                // holding every bone's slot took 1 GB on a 100,000-bone rig).
                let order =
                    |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
                let head = (self.max_influences + 1).min(w.len());
                if head == 0 {
                    return (Vec::new(), 0.0);
                }
                if head < w.len() {
                    w.select_nth_unstable_by(head - 1, order);
                }
                w[..head].sort_by(order);
                let keep = w
                    .iter()
                    .take(self.max_influences)
                    .take_while(|x| x.1 >= self.threshold)
                    .count()
                    .max(1);
                let dropped = w.get(keep).map_or(0.0, |x| x.1);
                let mut kept = w[..keep].to_vec();
                limit_and_normalise(&mut kept, self.max_influences);
                (kept, dropped)
            })
            .collect();
        // Each vertex weighs every bone (distance, weight, normalisation, selection: the
        // definition's V·B); then sorts its head of max_influences + 1 and keeps some, and
        // the histogram pass.
        let head = (self.max_influences + 1).min(self.bones.len());
        let mut stats = DistanceStats {
            influence_histogram: vec![0; self.max_influences + 1],
            max_dropped: 0.0,
            work: Work::pairs(rows.len(), self.bones.len())
                + Work::steps(rows.len() * (2 * head + 1)),
        };
        let mut out = Vec::with_capacity(rows.len());
        for (w, dropped) in rows {
            stats.influence_histogram[w.len()] += 1;
            stats.max_dropped = stats.max_dropped.max(dropped);
            out.push(w);
        }
        Ok((out, stats))
    }
}
