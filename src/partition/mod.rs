//! Mesh partitioning for bounded palettes (Weber, "Run-Time Skin Deformation", §Hardware
//! Compatibility, Ribeiro, "Mesh Skinning", §GPU Skinning).
//!
//! - [`split`]: the algorithm — one skinned primitive into submeshes of at most `K` bones
//!   ([`partition`], [`Partition`], [`PartitionStats`]); its stages: influence fitting
//!   (`fit`), candidate splits (`grow`: region growing; `pack`: bone-set packing with an exact
//!   search; `greedy`: the common file-order split, as a floor), border refinement
//!   (`refine`), then the best candidate, its triangles ordered for the vertex cache
//!   ([`tipsify`]);
//! - [`scene`]: a whole scene made drawable with a `K`-matrix palette — every skinned draw
//!   replaced by one draw per submesh, each with its own skin of at most `K` joints
//!   ([`PartitionedScene`]), and the way back to the original vertices for comparisons.

mod fit;
mod greedy;
mod grow;
mod pack;
mod refine;
pub mod scene;
pub mod split;
pub mod tipsify;

pub use scene::{MAX_BONES, PartitionedScene, PrimitivePartition, SkinningError, SubmeshDraw};
pub use split::{
    ACMR_CACHE, MAX_JOINTS, MIN_BONES, Partition, PartitionStats, Submesh, acmr, partition,
};

/// Vertices used by more faces than this (fan centres, poles, a hostile index list) are not
/// walked when looking for a face's neighbours: their faces connect through their other
/// vertices, and walking them from each of their faces would cost valence² (a 1M-face fan:
/// 10¹²). Real meshes have valences of 4–12.
const VALENCE_CAP: usize = 64;

/// A split of the faces: `(faces, bones ascending)` per group; what every candidate stage
/// returns and the refinement takes.
type Groups = Vec<(Vec<u32>, Vec<u32>)>;

/// The faces of a primitive as the stages see them: flat arrays built once by [`split`].
struct Faces<'a> {
    /// Per face, its sorted bone set: `bones[bone_offsets[f]..bone_offsets[f + 1]]`.
    bone_offsets: Vec<usize>,
    bones: Vec<u32>,
    /// Face vertices, `face_size` per face.
    indices: &'a [u32],
    face_size: usize,
    /// Per vertex, the faces using it: `vf_faces[vf_offsets[v]..vf_offsets[v + 1]]`.
    vf_offsets: Vec<usize>,
    vf_faces: Vec<u32>,
    /// Per face, its combo: the faces with the same bone set share one (numbered by first
    /// use).
    combo_of_face: Vec<u32>,
    /// Per combo, a face with it, and its face count.
    combo_first: Vec<usize>,
    combo_faces: Vec<usize>,
}

impl Faces<'_> {
    fn count(&self) -> usize {
        self.combo_of_face.len()
    }
    fn vertex_count(&self) -> usize {
        self.vf_offsets.len().saturating_sub(1)
    }
    fn bones_of(&self, f: usize) -> &[u32] {
        &self.bones[self.bone_offsets[f]..self.bone_offsets[f + 1]]
    }
    fn vertices_of(&self, f: usize) -> &[u32] {
        &self.indices[f * self.face_size..(f + 1) * self.face_size]
    }
    fn faces_of_vertex(&self, v: usize) -> &[u32] {
        &self.vf_faces[self.vf_offsets[v]..self.vf_offsets[v + 1]]
    }
    fn combo_count(&self) -> usize {
        self.combo_first.len()
    }
    fn combo_of(&self, f: usize) -> usize {
        self.combo_of_face[f] as usize
    }
    fn combo_bones(&self, c: usize) -> &[u32] {
        self.bones_of(self.combo_first[c])
    }
    fn combo_face_counts(&self) -> &[usize] {
        &self.combo_faces
    }
}
