//! Influence fitting: make every face drawable with `K` bones before any split.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Caching and Performance, for the per-vertex
//! reduction (keep the largest, renormalise: `skin::weights::keep_largest`); the per-face drop
//! is the project's own method.
//!
//! Method: a vertex with more than `K` influences keeps its `K` largest, renormalised. A face
//! whose vertices together need more than `K` bones (possible once `K` < 3 × influences, e.g.
//! `K` < 12 with four) drops, one bone at a time, the bone with the least total weight over its
//! vertices — never a vertex's last influence — from every vertex of the face, renormalising
//! each. Weights are per vertex, so a drop also changes the vertex's other faces (never to more
//! bones). Every removed (vertex, bone) is counted, whatever its weight; what it costs in
//! position is measured by skinning both ways ([`super::PartitionedScene::skinning_error`]).
//!
//! Cost: O(V · w) to index, O(F · (3w)²) for the faces (w influences per vertex), a drop at a
//! time; each drop removes an influence for good, so the loop ends.
//!
//! Limits: greedy by weight, not by position error.

use crate::scene::SkinWeights;
use crate::skin::weights::keep_largest;

/// Influence lists per vertex in place (one slot per input influence, zero weights dropped),
/// in the input's order.
pub(super) struct Influences {
    offsets: Vec<usize>,
    joints: Vec<u32>,
    weights: Vec<f32>,
    /// Live entries per vertex (removals shift the later ones down).
    pub count: Vec<u32>,
}

impl Influences {
    pub fn of(w: &SkinWeights) -> Influences {
        let n = w.vertex_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut joints = Vec::with_capacity(n * w.width);
        let mut weights = Vec::with_capacity(n * w.width);
        let mut count = Vec::with_capacity(n);
        offsets.push(0);
        for v in 0..n {
            let start = joints.len();
            for k in 0..w.width {
                let wt = w.weights[v * w.width + k];
                if wt != 0.0 {
                    joints.push(w.joints[v * w.width + k]);
                    weights.push(wt);
                }
            }
            count.push((joints.len() - start) as u32);
            offsets.push(start + w.width);
            joints.resize(start + w.width, 0);
            weights.resize(start + w.width, 0.0);
        }
        Influences {
            offsets,
            joints,
            weights,
            count,
        }
    }

    /// The live (joint, weight) lists of vertex `v`.
    pub fn of_vertex(&self, v: usize) -> (&[u32], &[f32]) {
        let (s, c) = (self.offsets[v], self.count[v] as usize);
        (&self.joints[s..s + c], &self.weights[s..s + c])
    }

    /// Replace vertex `v`'s list with `pairs` (no longer than its slots).
    fn set_vertex(&mut self, v: usize, pairs: &[(u32, f32)]) {
        let (s, c) = (self.offsets[v], self.count[v] as usize);
        let n = pairs.len().min(c);
        for (i, &(j, w)) in pairs[..n].iter().enumerate() {
            self.joints[s + i] = j;
            self.weights[s + i] = w;
        }
        for i in n..c {
            self.joints[s + i] = 0;
            self.weights[s + i] = 0.0;
        }
        self.count[v] = n as _;
    }

    /// Remove `joint` from vertex `v` (keeping the others' order), renormalise; the weight
    /// removed (`None` when absent or when it is the vertex's last influence).
    fn remove(&mut self, v: usize, joint: u32) -> Option<f32> {
        let (s, c) = (self.offsets[v], self.count[v] as usize);
        if c <= 1 {
            return None;
        }
        let i = self.joints[s..s + c].iter().position(|&j| j == joint)?;
        let dropped = self.weights[s + i];
        self.joints.copy_within(s + i + 1..s + c, s + i);
        self.weights.copy_within(s + i + 1..s + c, s + i);
        self.count[v] -= 1;
        let c = c - 1;
        self.joints[s + c] = 0;
        self.weights[s + c] = 0.0;
        let sum: f32 = self.weights[s..s + c].iter().sum();
        if sum > 0.0 {
            for w in &mut self.weights[s..s + c] {
                *w /= sum;
            }
        }
        Some(dropped)
    }
}

/// What fitting dropped.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Dropped {
    /// (vertex, bone) influences removed.
    pub influences: usize,
    /// The largest single weight removed, in magnitude (before renormalisation; a NaN weight
    /// is counted but cannot be measured).
    pub max_weight: f32,
}

impl Dropped {
    /// Remove one influence; every removal is counted, whatever its weight (NaN and negative
    /// weights included).
    fn drop(&mut self, inf: &mut Influences, v: usize, joint: u32) {
        if let Some(d) = inf.remove(v, joint) {
            self.influences += 1;
            if d.abs() > self.max_weight {
                self.max_weight = d.abs();
            }
        }
    }
}

/// Fit every vertex and every face of `indices` (faces of `face_size`) into `k` bones.
pub(super) fn fit(inf: &mut Influences, indices: &[u32], face_size: usize, k: usize) -> Dropped {
    let mut dropped = Dropped::default();
    let mut pairs: Vec<(u32, f32)> = Vec::new();
    for v in 0..inf.count.len() {
        if inf.count[v] as usize > k {
            let (js, ws) = inf.of_vertex(v);
            pairs.clear();
            pairs.extend(js.iter().copied().zip(ws.iter().copied()));
            if let Some(d) = keep_largest(&mut pairs, k) {
                dropped.influences += d.count;
                dropped.max_weight = dropped.max_weight.max(d.max_abs);
                inf.set_vertex(v, &pairs);
            }
        }
    }
    let mut union: Vec<(u32, f32)> = Vec::new();
    for face in indices.chunks_exact(face_size) {
        // Most faces fit without counting their distinct bones.
        if face
            .iter()
            .map(|&v| inf.count[v as usize] as usize)
            .sum::<usize>()
            <= k
        {
            continue;
        }
        loop {
            union.clear();
            for &v in face {
                let (js, ws) = inf.of_vertex(v as usize);
                for (&j, &wt) in js.iter().zip(ws) {
                    match union.iter_mut().find(|e| e.0 == j) {
                        Some(e) => e.1 += wt,
                        None => union.push((j, wt)),
                    }
                }
            }
            if union.len() <= k {
                break;
            }
            // The lightest bone that is no vertex's last influence.
            union.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            let removable = union.iter().find(|(j, _)| {
                face.iter().all(|&v| {
                    let (js, _) = inf.of_vertex(v as usize);
                    js.len() > 1 || js.first() != Some(j)
                })
            });
            // None: each vertex is down to one bone, ≤ face_size ≤ 3 < K bones: cannot happen.
            let Some(&(joint, _)) = removable else {
                break;
            };
            for &v in face {
                dropped.drop(inf, v as usize, joint);
            }
        }
    }
    dropped
}
