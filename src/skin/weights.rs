//! Influence reduction and the vertex-weight array: how each vertex's (joint, weight) pairs
//! are limited and laid out for the skinning loop.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Caching and Performance (the vertex-weight
//! array, read front to back); the reduction is what engines with a 4-influence limit do.
//!
//! Method: the vertex-weight array stores each vertex's (joint, weight) pairs contiguously,
//! grouped by vertex in vertex order, so the skinning loop reads it front to back, never writes
//! it, and writes each output vertex once. Two layouts:
//! - [`Packed4`]: exactly four slots per vertex, zero-padded, in the most compact encoding that
//!   holds every vertex exactly — joints as u8 (palettes of up to 256) or u16, weights as
//!   unorm8 or unorm16 when every weight is `k/255` or `k/65535` (what a glTF file stores as
//!   normalised integers decodes to exactly that) or f32 otherwise: 8 to 24 bytes a vertex and
//!   a branch-free blend, used when no vertex has more than four influences and joint indices
//!   fit in u16 (the common game-engine case);
//! - CSR (`offsets[v]..offsets[v+1]` into `influences`, zero weights dropped) for any number
//!   of influences.
//!
//! Reduction to an influence limit K: keep the K largest weights (by magnitude) of each vertex
//! and renormalise them to sum to 1; [`ReductionStats`] says how many vertices lost weight and
//! how much.
//!
//! Cost: O(V · w) to build either layout (w influences per vertex); reduction sorts each
//! vertex's pairs, O(V · w log w).
//!
//! Limits: the reduction goes by weight, not by the position error a dropped influence causes;
//! [`Packed4`] needs at most four influences and joint indices within u16 (otherwise CSR).

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

/// How joint indices are stored: in [`Packed4`]'s slots, and as the component type of a glTF
/// file's `JOINTS_n` (export, repacking). The one encoding type of joints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JointEncoding {
    /// One byte each (palettes of at most 256 matrices; glTF unsigned byte).
    U8,
    /// Two bytes each (glTF unsigned short).
    U16,
}

/// How weights are stored: in [`Packed4`]'s slots, and as the component type of a glTF file's
/// `WEIGHTS_n`. The one encoding type of weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WeightEncoding {
    /// f32, as given (any value, negative ones of muscle bones too).
    F32,
    /// `k / 65535` for k in 0..=65535, two bytes each (glTF normalised unsigned short).
    Unorm16,
    /// `k / 255` for k in 0..=255, one byte each (glTF normalised unsigned byte).
    Unorm8,
}

impl crate::choice::Choice for JointEncoding {
    const ALL: &'static [JointEncoding] = &[JointEncoding::U8, JointEncoding::U16];

    fn name(self) -> &'static str {
        match self {
            JointEncoding::U8 => "u8",
            JointEncoding::U16 => "u16",
        }
    }

    fn help(self) -> &'static str {
        match self {
            JointEncoding::U8 => "One byte a joint index (up to 255)",
            JointEncoding::U16 => "Two bytes a joint index (up to 65535)",
        }
    }
}

impl crate::choice::Choice for WeightEncoding {
    const ALL: &'static [WeightEncoding] = &[
        WeightEncoding::F32,
        WeightEncoding::Unorm8,
        WeightEncoding::Unorm16,
    ];

    fn name(self) -> &'static str {
        match self {
            WeightEncoding::F32 => "f32",
            WeightEncoding::Unorm8 => "unorm8",
            WeightEncoding::Unorm16 => "unorm16",
        }
    }

    fn help(self) -> &'static str {
        match self {
            WeightEncoding::F32 => "32-bit float, as stored",
            WeightEncoding::Unorm8 => "Normalised unsigned byte: weight = integer / 255",
            WeightEncoding::Unorm16 => "Normalised unsigned short: weight = integer / 65535",
        }
    }
}

/// Four influence slots per vertex in a compact encoding ([`JointEncoding`], [`WeightEncoding`]):
/// per vertex the four weights, then the four joints, `stride` bytes in all. Decodes exactly:
/// an unorm weight is `k as f32 / 255.0` (or `/ 65535.0`), the same f32 a glTF importer makes
/// of it, and is only chosen when every weight has that form, so every encoding skins to the
/// same result. Immutable once built: the kernels trust its `max_joint`.
#[derive(Clone, Debug, PartialEq)]
pub struct Packed4 {
    joints: JointEncoding,
    weights: WeightEncoding,
    stride: usize,
    len: usize,
    bytes: Vec<u8>,
    max_joint: u32,
}

impl Packed4 {
    /// Pack `slots` in the most compact encoding that holds every one of them exactly.
    pub fn new(slots: &[Influences4]) -> Packed4 {
        let max_joint = slots
            .iter()
            .flat_map(|i| {
                (0..4)
                    .filter(|&k| i.weights[k] != 0.0)
                    .map(|k| i.joints[k] as u32)
            })
            .max()
            .unwrap_or(0);
        let joints = if max_joint <= u8::MAX as u32 {
            JointEncoding::U8
        } else {
            JointEncoding::U16
        };
        let exact = |q: f32| {
            slots.iter().all(|i| {
                i.weights
                    .iter()
                    .all(|&w| (0.0..=1.0).contains(&w) && (w * q).round() / q == w)
            })
        };
        let weights = if exact(255.0) {
            WeightEncoding::Unorm8
        } else if exact(65535.0) {
            WeightEncoding::Unorm16
        } else {
            WeightEncoding::F32
        };
        Self::with_encoding(slots, joints, weights, max_joint)
    }

    /// Pack in a given encoding (the caller has checked that it holds every slot).
    fn with_encoding(
        slots: &[Influences4],
        joints: JointEncoding,
        weights: WeightEncoding,
        max_joint: u32,
    ) -> Packed4 {
        let wbytes = match weights {
            WeightEncoding::F32 => 16,
            WeightEncoding::Unorm16 => 8,
            WeightEncoding::Unorm8 => 4,
        };
        let jbytes = match joints {
            JointEncoding::U8 => 4,
            JointEncoding::U16 => 8,
        };
        let stride = wbytes + jbytes;
        let mut bytes = Vec::with_capacity(slots.len() * stride);
        for i in slots {
            for &w in &i.weights {
                match weights {
                    WeightEncoding::F32 => bytes.extend_from_slice(&w.to_le_bytes()),
                    WeightEncoding::Unorm16 => {
                        bytes.extend_from_slice(&((w * 65535.0).round() as u16).to_le_bytes())
                    }
                    WeightEncoding::Unorm8 => bytes.push((w * 255.0).round() as u8),
                }
            }
            for (k, &j) in i.joints.iter().enumerate() {
                // Unused slots keep joint 0: every stored index is within the palette.
                let j = if i.weights[k] != 0.0 { j } else { 0 };
                match joints {
                    JointEncoding::U8 => bytes.push(j as u8),
                    JointEncoding::U16 => bytes.extend_from_slice(&j.to_le_bytes()),
                }
            }
        }
        Packed4 {
            joints,
            weights,
            stride,
            len: slots.len(),
            bytes,
            max_joint,
        }
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoding.
    pub fn encoding(&self) -> (JointEncoding, WeightEncoding) {
        (self.joints, self.weights)
    }

    /// Bytes per vertex.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Largest joint index of any used slot (unused slots hold joint 0).
    pub fn max_joint(&self) -> u32 {
        self.max_joint
    }

    /// The encoded records, `stride` bytes per vertex (for the x86-64 SIMD kernel).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Vertex `v`'s four slots, decoded exactly.
    #[inline]
    pub fn get(&self, v: usize) -> Influences4 {
        macro_rules! each {
            ($($c:ident),*) => {
                match self.encoding() {
                    $((<$c as SlotCodec>::JOINTS, <$c as SlotCodec>::WEIGHTS) => self.get_as::<$c>(v),)*
                }
            };
        }
        each!(U8F32, U16F32, U8Unorm16, U16Unorm16, U8Unorm8, U16Unorm8)
    }

    /// [`Packed4::get`] with the encoding fixed at compile time (`C` must be this array's).
    #[inline(always)]
    pub(crate) fn get_as<C: SlotCodec>(&self, v: usize) -> Influences4 {
        let stride = C::WEIGHT_BYTES + C::JOINT_BYTES;
        let r = &self.bytes[v * stride..(v + 1) * stride];
        let (w, j) = r.split_at(C::WEIGHT_BYTES);
        let weights: [f32; 4] = match C::WEIGHTS {
            WeightEncoding::F32 => bytemuck::pod_read_unaligned(w),
            WeightEncoding::Unorm16 => {
                bytemuck::pod_read_unaligned::<[u16; 4]>(w).map(|k| k as f32 / 65535.0)
            }
            WeightEncoding::Unorm8 => {
                bytemuck::pod_read_unaligned::<[u8; 4]>(w).map(|k| k as f32 / 255.0)
            }
        };
        let joints: [u16; 4] = match C::JOINTS {
            JointEncoding::U8 => bytemuck::pod_read_unaligned::<[u8; 4]>(j).map(u16::from),
            JointEncoding::U16 => bytemuck::pod_read_unaligned(j),
        };
        Influences4 { weights, joints }
    }
}

/// One [`Packed4`] encoding as a type, so loops over records can be compiled per encoding
/// (nothing matched per vertex).
pub(crate) trait SlotCodec {
    const JOINTS: JointEncoding;
    const WEIGHTS: WeightEncoding;
    const WEIGHT_BYTES: usize = match Self::WEIGHTS {
        WeightEncoding::F32 => 16,
        WeightEncoding::Unorm16 => 8,
        WeightEncoding::Unorm8 => 4,
    };
    const JOINT_BYTES: usize = match Self::JOINTS {
        JointEncoding::U8 => 4,
        JointEncoding::U16 => 8,
    };
}

macro_rules! codecs {
    ($($name:ident: $j:ident, $w:ident;)*) => {$(
        #[doc = concat!("Joints ", stringify!($j), ", weights ", stringify!($w), ".")]
        pub(crate) struct $name;
        impl SlotCodec for $name {
            const JOINTS: JointEncoding = JointEncoding::$j;
            const WEIGHTS: WeightEncoding = WeightEncoding::$w;
        }
    )*};
}

codecs! {
    U8F32: U8, F32;
    U16F32: U16, F32;
    U8Unorm16: U8, Unorm16;
    U16Unorm16: U16, Unorm16;
    U8Unorm8: U8, Unorm8;
    U16Unorm8: U16, Unorm8;
}

/// Storage of a [`VertexWeights`] array.
#[derive(Clone, Debug)]
pub enum WeightLayout {
    /// Four slots per vertex, packed ([`Packed4`]).
    Fixed4(Packed4),
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
            layout: WeightLayout::Fixed4(Packed4::new(&vec![one; vertex_count])),
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
                layout: WeightLayout::Fixed4(Packed4::new(&out)),
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

/// Each vertex's influences in joint order, unused slots (weight 0) last with joint 0:
/// neighbouring vertices then hold the same joints in the same slots, which the vertex codec's
/// byte deltas take in fewer bits. (gltfpack writes largest weight first, as its `-cc` copy of
/// CesiumMan shows; `optimize`'s compression takes that order where it compresses smaller,
/// `io::gltf_reorder`.) The slots are a sum, so the skin is the same (to the order of a float
/// sum).
pub fn sort_by_joint(w: &mut SkinWeights) {
    let width = w.width;
    if width == 0 {
        return;
    }
    let mut pairs: Vec<(u32, f32)> = Vec::with_capacity(width);
    for (joints, weights) in w
        .joints
        .chunks_exact_mut(width)
        .zip(w.weights.chunks_exact_mut(width))
    {
        pairs.clear();
        pairs.extend(
            joints
                .iter()
                .zip(weights.iter())
                .filter(|p| *p.1 != 0.0)
                .map(|(&j, &x)| (j, x)),
        );
        pairs.sort_by_key(|p| p.0);
        for k in 0..width {
            (joints[k], weights[k]) = pairs.get(k).copied().unwrap_or((0, 0.0));
        }
    }
}

/// What [`keep_largest`] removed from one vertex.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dropped {
    /// Influences removed.
    pub count: usize,
    /// Their weights' sum (before renormalisation).
    pub sum: f32,
    /// The largest of them in magnitude (before renormalisation).
    pub max_abs: f32,
}

/// Keep a vertex's `k` largest influences (at least one) and renormalise them to sum to 1:
/// the one place influences are limited (the CPU and GPU paths, the partitioner's fitting,
/// the weight tools). Largest magnitude first (a native rig's muscle gives its parent a
/// negative weight as large as its own), stable: equal weights keep their order in `pairs`
/// (sort them first for an order-independent result). Returns what was dropped, or `None`
/// when `pairs` already had at most `k` (then nothing changes: not even renormalised).
pub fn keep_largest(pairs: &mut Vec<(u32, f32)>, k: usize) -> Option<Dropped> {
    let k = k.max(1);
    if pairs.len() <= k {
        return None;
    }
    pairs.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let dropped = Dropped {
        count: pairs.len() - k,
        sum: pairs[k..].iter().map(|p| p.1).sum(),
        max_abs: pairs[k..].iter().map(|p| p.1.abs()).fold(0.0, f32::max),
    };
    pairs.truncate(k);
    let kept: f32 = pairs.iter().map(|p| p.1).sum();
    for p in pairs.iter_mut() {
        p.1 = if kept > 0.0 { p.1 / kept } else { 0.0 };
    }
    Some(dropped)
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
        if let Some(dropped) = keep_largest(&mut pairs, k) {
            stats.vertices_reduced += 1;
            stats.max_dropped_weight = stats.max_dropped_weight.max(dropped.sum);
        }
        let kept_count = pairs.len();
        for (i, &(j, wt)) in pairs.iter().enumerate() {
            out.joints[v * width + i] = j;
            out.weights[v * width + i] = wt;
        }
        stats.max_influences_after = stats.max_influences_after.max(kept_count);
    }
    (out, stats)
}
