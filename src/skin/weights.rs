//! Influence reduction and the vertex-weight array (seed 000 §14).
//!
//! The vertex-weight array stores each vertex's (joint, weight) pairs contiguously, grouped
//! by vertex in vertex order, so the skinning loop reads it front to back, never writes it,
//! and writes each output vertex once. Two layouts:
//! - [`Influences4`]: exactly four (u16 joint, f32 weight) slots per vertex, zero-padded —
//!   24 bytes a vertex and a branch-free blend, used when no vertex has more than four
//!   influences and joint indices fit in u16 (the common game-engine case);
//! - CSR (`offsets[v]..offsets[v+1]` into `influences`, zero weights dropped) for any number
//!   of influences.
//!
//! Reduction to an influence limit K: keep the K largest weights (by magnitude) of each vertex
//! and renormalise them to sum to 1, as engines with a 4-influence limit do; [`ReductionStats`] says how many
//! vertices lost weight and how much.

use bytemuck::{Pod, Zeroable};

use crate::scene::SkinWeights;

/// Most influences per vertex the GPU path blends (two `vec4` sets: JOINTS_0/1 and
/// WEIGHTS_0/1); wider sets must be reduced first.
pub const GPU_MAX_INFLUENCES: usize = 8;

/// One (joint, weight) pair of the vertex-weight array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Influence {
    /// Index into the skin's joint list (and the draw's palette).
    pub joint: u32,
    /// Blend weight (non-zero in the CSR layout).
    pub weight: f32,
}

/// Four influence slots of one vertex (unused slots have weight 0 and joint 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Influences4 {
    /// Weight per slot (0 for an unused slot).
    pub weights: [f32; 4],
    /// Joint index per slot, into the skin's joint list.
    pub joints: [u16; 4],
}

/// Storage of a [`VertexWeights`] array.
#[derive(Clone, Debug)]
pub enum WeightLayout {
    /// Four slots per vertex, one entry per vertex.
    Fixed4(Vec<Influences4>),
    /// Compressed rows: any number of non-zero influences per vertex.
    Csr {
        /// `vertex_count + 1` entries; vertex v owns `influences[offsets[v]..offsets[v+1]]`.
        offsets: Vec<u32>,
        /// Non-zero influences of all vertices, grouped by vertex in vertex order.
        influences: Vec<Influence>,
    },
}

/// The vertex-weight array the skinning loop reads (see the module documentation).
#[derive(Clone, Debug)]
pub struct VertexWeights {
    /// Fixed four-slot or CSR storage.
    pub layout: WeightLayout,
    /// Largest joint index used (for validation against the palette length).
    pub max_joint: u32,
}

/// What a reduction to K influences changed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReductionStats {
    /// Most non-zero weights on one vertex before the reduction.
    pub max_influences_before: usize,
    /// Most non-zero weights on one vertex after the reduction (at most K).
    pub max_influences_after: usize,
    /// Vertices that had more than K non-zero weights.
    pub vertices_reduced: usize,
    /// Largest total weight dropped from one vertex (before renormalisation).
    pub max_dropped_weight: f32,
}

impl VertexWeights {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        match &self.layout {
            WeightLayout::Fixed4(v) => v.len(),
            WeightLayout::Csr { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// Every vertex bound to joint 0 with weight 1 (rigid draws).
    pub fn rigid(vertex_count: usize) -> VertexWeights {
        let one = Influences4 {
            weights: [1.0, 0.0, 0.0, 0.0],
            joints: [0; 4],
        };
        VertexWeights {
            layout: WeightLayout::Fixed4(vec![one; vertex_count]),
            max_joint: 0,
        }
    }

    /// Build from fixed-width sets: the four-slot layout when it can hold every vertex,
    /// otherwise CSR with zero weights dropped.
    pub fn from_skin_weights(w: &SkinWeights) -> VertexWeights {
        let fits_u16 = w
            .joints
            .iter()
            .zip(&w.weights)
            .all(|(&j, &wt)| wt == 0.0 || j <= u16::MAX as u32);
        if w.max_influences() <= 4 && fits_u16 {
            let mut out = Vec::with_capacity(w.vertex_count());
            let mut max_joint = 0;
            if w.width > 0 {
                for (js, ws) in w
                    .joints
                    .chunks_exact(w.width)
                    .zip(w.weights.chunks_exact(w.width))
                {
                    let mut slot = Influences4::default();
                    let mut k = 0;
                    for (&joint, &weight) in js.iter().zip(ws) {
                        if weight != 0.0 && k < 4 {
                            slot.joints[k] = joint as u16;
                            slot.weights[k] = weight;
                            max_joint = max_joint.max(joint);
                            k += 1;
                        }
                    }
                    out.push(slot);
                }
            }
            return VertexWeights {
                layout: WeightLayout::Fixed4(out),
                max_joint,
            };
        }
        Self::csr_from_skin_weights(w)
    }

    /// CSR layout regardless of the influence count (any number of influences).
    pub fn csr_from_skin_weights(w: &SkinWeights) -> VertexWeights {
        let n = w.vertex_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut influences = Vec::with_capacity(n * 4);
        let mut max_joint = 0;
        offsets.push(0);
        if w.width > 0 {
            for (js, ws) in w
                .joints
                .chunks_exact(w.width)
                .zip(w.weights.chunks_exact(w.width))
            {
                for (&joint, &weight) in js.iter().zip(ws) {
                    if weight != 0.0 {
                        influences.push(Influence { joint, weight });
                        max_joint = max_joint.max(joint);
                    }
                }
                offsets.push(influences.len() as u32);
            }
        }
        VertexWeights {
            layout: WeightLayout::Csr {
                offsets,
                influences,
            },
            max_joint,
        }
    }

    /// True when there are no influences at all (nothing to validate against a palette).
    pub fn is_empty(&self) -> bool {
        match &self.layout {
            WeightLayout::Fixed4(v) => v.is_empty(),
            WeightLayout::Csr { influences, .. } => influences.is_empty(),
        }
    }
}

/// Keep the `k` largest weights per vertex, renormalised; result has width `ceil(k/4)*4`
/// (or the input width when that is smaller).
pub fn reduce_influences(w: &SkinWeights, k: usize) -> (SkinWeights, ReductionStats) {
    let k = k.max(1);
    let n = w.vertex_count();
    let width = (k.div_ceil(4) * 4).min(w.width.max(4));
    let mut out = SkinWeights {
        width,
        joints: vec![0; n * width],
        weights: vec![0.0; n * width],
    };
    let mut stats = ReductionStats {
        max_influences_before: w.max_influences(),
        ..Default::default()
    };
    let mut pairs: Vec<(u32, f32)> = Vec::with_capacity(w.width);
    for v in 0..n {
        pairs.clear();
        for i in 0..w.width {
            let weight = w.weights[v * w.width + i];
            if weight != 0.0 {
                pairs.push((w.joints[v * w.width + i], weight));
            }
        }
        let kept_count = pairs.len().min(k);
        if pairs.len() > k {
            // Largest magnitude first (a native rig's muscle gives its parent a negative
            // weight, as large as the muscle's own); stable: equal weights keep file order.
            pairs.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            let dropped: f32 = pairs[k..].iter().map(|p| p.1).sum();
            stats.vertices_reduced += 1;
            stats.max_dropped_weight = stats.max_dropped_weight.max(dropped);
            let kept: f32 = pairs[..k].iter().map(|p| p.1).sum();
            let scale = if kept > 0.0 { 1.0 / kept } else { 0.0 };
            for p in &mut pairs[..k] {
                p.1 *= scale;
            }
        }
        for (i, &(j, wt)) in pairs[..kept_count].iter().enumerate() {
            out.joints[v * width + i] = j;
            out.weights[v * width + i] = wt;
        }
        stats.max_influences_after = stats.max_influences_after.max(kept_count);
    }
    (out, stats)
}
