//! Weight smoothing: limit how fast a bone's weight changes along the surface.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §10 (the weight change along an edge limited
//! in proportion to the edge's length over the cross-section's radius).
//!
//! Method: for every mesh edge (i, j) and every bone b on either end, the weight change allowed
//! is proportional to the edge's length and inversely to the body's thickness there,
//!
//! `|w_b(i) − w_b(j)| ≤ threshold · |p_i − p_j| / r_b`,
//!
//! `r_b` the mean radius of b's cross-section ([`super::sections`]) at the two vertices, so a
//! full 0 → 1 transition spans at least `r_b / threshold` of surface: a wide blend round the
//! torso, a short one on a finger, from one setting. Where the limit is exceeded the heavier
//! vertex gives half the excess to the lighter (which meets the limit exactly) and takes the
//! same amount back in the lighter vertex's other bones, in proportion, so both still sum to
//! 1 (renormalising after the transfer instead would undo part of it every sweep); sweeps
//! run forwards, then backwards (symmetric Gauss–Seidel), and changed vertices are
//! renormalised against rounding. Sweeps repeat until no edge exceeds the limit by more than
//! [`CONVERGED_EXCESS`] or `max_iterations` run out: a radical change spreads over a wider
//! area with every sweep. Finally changed vertices keep their `max_influences` largest
//! weights (renormalised); the limit measured after that is [`SmoothStats::max_excess`], what
//! the smoothing promises.
//!
//! Vertices on no edge, and vertices whose edges are all within the limit, are returned
//! bit for bit as given. Meshes without triangles have no edges and come back unchanged.
//!
//! Cost: O(iterations · E · k) for E edges and k influences per edge end; memory O(V·k).
//!
//! Limits: the limit holds along mesh edges only, so parts that touch without sharing a vertex
//! (a hand on a hip) keep any step between them; when `max_iterations` runs out first, or the
//! final influence limit cuts a blend, some edges stay above the limit
//! ([`SmoothStats::max_excess`] says by how much).

use glam::Vec3;

use super::sections::BoneSection;
use super::{
    Adjacency, Influences, WeightMesh, Work, check_joints, check_lists, limit_and_normalise, rule,
    weight_of,
};
use crate::error::Result;

/// An edge counts as within the limit when it exceeds it by at most this much weight.
pub const CONVERGED_EXCESS: f32 = 1e-4;

/// Weights below this after a transfer are dropped (they change no vertex by a visible
/// amount, and would otherwise collect on every vertex the blend passes over).
pub const DROP_WEIGHT: f32 = 1e-5;

/// What [`SmoothJob::run`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SmoothStats {
    /// Mesh edges (each undirected edge once).
    pub edges: usize,
    /// Sweeps over the edges.
    pub iterations: usize,
    /// Whether the last sweep found every edge within the limit (before influence limiting).
    pub converged: bool,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Largest change of any weight of any vertex.
    pub max_weight_change: f32,
    /// Largest excess over the limit of any edge and bone in the result (after influence
    /// limiting), in weight units.
    pub max_excess: f32,
    /// The work it took.
    pub work: Work,
}

/// Smooth `influences` in place.
pub struct SmoothJob<'a> {
    /// The mesh.
    pub mesh: &'a WeightMesh,
    /// Bone pseudo-cylinders, one per joint the influences name (their radii scale the
    /// limit).
    pub sections: &'a [BoneSection],
    /// Weight change allowed per radius of surface distance (> 0).
    pub threshold: f32,
    /// Most sweeps.
    pub max_iterations: usize,
    /// Influences per vertex kept at the end (1..=8).
    pub max_influences: usize,
    /// The weights, smoothed in place.
    pub influences: &'a mut Influences,
}

impl SmoothJob<'_> {
    /// Rules: 1. one influence list per vertex; 2. every vertex has some weight (run
    /// regeneration or distance weights first); 3. joints name sections; 4. threshold finite
    /// and > 0, max_influences in 1..=8.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "SmoothJob";
        check_lists(JOB, 1, self.influences.len(), self.mesh.positions.len())?;
        if let Some(v) = self.influences.iter().position(|v| {
            v.iter().map(|x| x.1).sum::<f32>().partial_cmp(&0.0)
                != Some(std::cmp::Ordering::Greater)
        }) {
            return Err(rule(
                JOB,
                2,
                format!(
                    "vertex {v} has no weights: smoothing spreads weights, it cannot invent \
                     them (regenerate or compute distance weights first)"
                ),
            ));
        }
        check_joints(JOB, 3, self.influences, self.sections.len())?;
        if !(self.threshold.is_finite()
            && self.threshold > 0.0
            && (1..=8).contains(&self.max_influences))
        {
            return Err(rule(
                JOB,
                4,
                format!(
                    "threshold {} must be finite and > 0, max_influences {} in 1..=8",
                    self.threshold, self.max_influences
                ),
            ));
        }
        Ok(())
    }

    /// Validate, then smooth.
    pub fn run(&mut self) -> Result<SmoothStats> {
        self.run_with_progress(|_| {})
    }

    /// [`Self::run`], calling `sweep_done(sweeps so far)` after every sweep (a long smoothing
    /// runs hundreds of them: progress bars count them).
    pub fn run_with_progress(&mut self, mut sweep_done: impl FnMut(usize)) -> Result<SmoothStats> {
        self.validate()?;
        let adj = Adjacency::new(self.mesh);
        let n = self.mesh.positions.len();
        let input = self.influences.clone();
        let mut stats = SmoothStats {
            edges: adj.neighbours.len() / 2,
            work: adj.work,
            ..Default::default()
        };
        // Edges and their bones visited in every sweep, counted as they happen.
        let mut steps = 0usize;
        let mut touched = vec![false; n];
        let mut touched_now = vec![false; n];
        let mut bones: Vec<u32> = Vec::with_capacity(16);
        let mut others: Vec<(u32, f32)> = Vec::with_capacity(16);
        for _ in 0..self.max_iterations {
            stats.iterations += 1;
            let mut worst = 0.0f32;
            // Symmetric Gauss–Seidel: every other sweep runs backwards, so a step spreads both
            // ways along the surface at the same speed.
            let backwards = stats.iterations.is_multiple_of(2);
            steps += 2 * n;
            for k in 0..n {
                let i = if backwards { n - 1 - k } else { k };
                steps += adj.of(i).len();
                for &j in adj.of(i) {
                    let j = j as usize;
                    if j <= i {
                        continue;
                    }
                    let d = (self.mesh.positions[i] - self.mesh.positions[j]).length();
                    bones.clear();
                    bones.extend(self.influences[i].iter().map(|x| x.0));
                    bones.extend(self.influences[j].iter().map(|x| x.0));
                    bones.sort_unstable();
                    bones.dedup();
                    steps +=
                        bones.len() * (1 + self.influences[i].len() + self.influences[j].len());
                    for &b in &bones {
                        let limit = self.limit(b, i, j, d);
                        let (wi, wj) = (
                            weight_of(&self.influences[i], b),
                            weight_of(&self.influences[j], b),
                        );
                        let excess = (wi - wj).abs() - limit;
                        if excess <= 0.0 {
                            continue;
                        }
                        worst = worst.max(excess);
                        let delta = 0.5 * excess;
                        let (hi, lo) = if wi > wj { (i, j) } else { (j, i) };
                        // A swap that keeps both sums: `lo` takes `delta` of b and pays it in
                        // its other bones, in proportion; `hi` the reverse. (Renormalising
                        // after the transfer instead would undo part of it every sweep.)
                        others.clear();
                        others.extend(
                            self.influences[lo]
                                .iter()
                                .filter(|x| x.0 != b && x.1 > 0.0)
                                .copied(),
                        );
                        let total: f32 = others.iter().map(|x| x.1).sum();
                        add(&mut self.influences[hi], b, -delta);
                        add(&mut self.influences[lo], b, delta);
                        if total > 0.0 {
                            for &(o, w) in &others {
                                let share = delta * w / total;
                                add(&mut self.influences[lo], o, -share);
                                add(&mut self.influences[hi], o, share);
                            }
                        }
                        touched_now[hi] = true;
                        touched_now[lo] = true;
                    }
                }
            }
            for v in 0..n {
                if touched_now[v] {
                    let w = &mut self.influences[v];
                    w.retain(|x| x.1 > DROP_WEIGHT);
                    let sum: f32 = w.iter().map(|x| x.1).sum();
                    if sum > 0.0 {
                        for x in w.iter_mut() {
                            x.1 /= sum;
                        }
                    }
                    touched[v] = true;
                    touched_now[v] = false;
                }
            }
            sweep_done(stats.iterations);
            if worst <= CONVERGED_EXCESS {
                stats.converged = true;
                break;
            }
        }
        for (w, &t) in self.influences.iter_mut().zip(&touched) {
            if t || w.len() > self.max_influences {
                limit_and_normalise(w, self.max_influences);
            }
        }
        // What the result keeps, and what changed.
        for (a, b) in input.iter().zip(self.influences.iter()) {
            if a != b {
                stats.vertices_changed += 1;
                for &(j, _) in a.iter().chain(b.iter()) {
                    let change = (weight_of(a, j) - weight_of(b, j)).abs();
                    stats.max_weight_change = stats.max_weight_change.max(change);
                }
            }
        }
        stats.max_excess = self.max_excess(&adj);
        // The final limits, the comparison with the input and the excess pass.
        stats.work += Work::steps(steps + 3 * n + adj.neighbours.len());
        Ok(stats)
    }

    /// The largest excess over the limit in the current weights (0 when all are within).
    fn max_excess(&self, adj: &Adjacency) -> f32 {
        let mut worst = 0.0f32;
        for i in 0..self.mesh.positions.len() {
            for &j in adj.of(i) {
                let j = j as usize;
                if j <= i {
                    continue;
                }
                let d = (self.mesh.positions[i] - self.mesh.positions[j]).length();
                for &(b, _) in self.influences[i].iter().chain(&self.influences[j]) {
                    let diff = (weight_of(&self.influences[i], b)
                        - weight_of(&self.influences[j], b))
                    .abs();
                    worst = worst.max(diff - self.limit(b, i, j, d));
                }
            }
        }
        worst.max(0.0)
    }

    /// The change of bone `b`'s weight allowed between vertices `i` and `j` at distance `d`.
    fn limit(&self, b: u32, i: usize, j: usize, d: f32) -> f32 {
        let s = &self.sections[b as usize];
        let r = 0.5 * (radius_at(s, self.mesh.positions[i]) + radius_at(s, self.mesh.positions[j]));
        self.threshold * d / r.max(f32::MIN_POSITIVE)
    }
}

/// Mean section radius of `s` at the segment parameter nearest `p`.
pub fn radius_at(s: &BoneSection, p: Vec3) -> f32 {
    s.mean_radius(s.param(s.local(p)))
}

/// Add `delta` to joint `b`'s weight on a vertex (creating the entry).
fn add(v: &mut Vec<(u32, f32)>, b: u32, delta: f32) {
    match v.iter_mut().find(|x| x.0 == b) {
        Some(x) => x.1 = (x.1 + delta).max(0.0),
        None if delta > 0.0 => v.push((b, delta)),
        None => {}
    }
}
