//! The partitioner: split a skinned primitive into submeshes that each use at most `K` bones,
//! so a vertex shader with a `K`-matrix palette can draw each piece.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Hardware Compatibility ("the mesh has to be
//! broken down into pieces that use the same subset of the total list of transforms"); Ribeiro,
//! "Mesh Skinning", §GPU Skinning (a uniform array of 32–128 matrices); meshoptimizer (Arseny
//! Kapoulkine) for the submeshes' vertex cache order and its ACMR measure. The split itself is
//! the project's own method, built against Assimp's `SplitByBoneCount` as the common baseline.
//!
//! Method: (1) Fit: vertices keep at most `K` influences and faces at most `K` bones, dropping
//! the lightest with renormalisation, each drop counted (`fit.rs`). (2) Two candidate
//! splits: region growing with a bone budget, then merging (`grow.rs`: compact, few
//! border vertices), and bone-set packing with an exact search (`pack.rs`: the fewest
//! submeshes, proved minimal where the search finishes); and, unless one of them is proved
//! minimal, the common file-order split as a floor (`greedy.rs`). (3) Each candidate's
//! borders are shortened by label propagation (`refine.rs`). (4) The candidate with
//! fewer submeshes wins, then the one with fewer vertices. (5) Each submesh's faces are
//! reordered for the post-transform cache (Tipsify, `tipsify.rs`, as meshoptimizer's FIFO
//! optimiser; kept only when it lowers the submesh's ACMR over the input order; ACMR before and
//! after is reported), its
//! vertices numbered in first use and its bones listed ascending; vertex influences keep their
//! order, so skinning a submesh with its own palette is bit-identical to the original when
//! nothing was dropped.
//!
//! The usual split (Assimp's `SplitByBoneCount`) adds faces in file order to the current
//! submesh while their bones fit, and copies every corner: more submeshes, and vertices
//! duplicated per face. Here the count is at the proved minimum on every shared model and only
//! vertices on submesh borders are duplicated (BENCHMARKS.md has the table).
//!
//! Cost: O(V·w + F·w²) to fit and index (w influences per vertex), O(F · valence) for each
//! candidate and refinement; packing is O(combos · bins), and the exact search is capped, so
//! the whole split stays near linear in the faces (BENCHMARKS.md times it on a million
//! triangles). Memory: a few words per face and vertex, per-joint tables of [`MAX_JOINTS`] at
//! most.
//!
//! Limits: faces of 3, 2 or 1 vertices (triangles, lines, points); `K` ≥ [`MIN_BONES`]; joint
//! indices are the skin's, and a submesh lists them as such.

use web_time::Instant;

use super::fit::{Influences, fit};
use super::greedy::greedy;
use super::grow::grow;
use super::pack::pack;
use super::refine::refine;
use super::{Faces, Groups};
use crate::error::{Error, Result};
use crate::scene::{Primitive, SkinWeights, Topology};

/// The smallest bone budget (a triangle keeps each vertex's largest influence: 3 bones).
pub const MIN_BONES: usize = 4;

/// Most joints a skin may index (glTF JOINTS_n are unsigned bytes or shorts); bounds the
/// per-bone tables.
pub const MAX_JOINTS: usize = 1 << 16;

/// Work (submeshes × `K` × combos) beyond which the file-order floor is not run: a second at
/// most. Real skins are 10⁴–10⁶ below it (CesiumMan: 4 × 16 × 105); only hostile inputs
/// (tens of thousands of distinct bone sets) reach it, and then the result may, in principle,
/// have more submeshes than the common split.
const GREEDY_BUDGET: usize = 500_000_000;

/// Vertex cache size of the ACMR figures (a FIFO, as meshoptimizer's `analyzeVertexCache`
/// and most post-transform caches of the era the limit comes from).
pub const ACMR_CACHE: usize = 16;

/// One piece of a partitioned primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submesh {
    /// First index in [`Partition::indices`].
    pub index_offset: u32,
    /// Indices of this submesh.
    pub index_count: u32,
    /// First vertex in [`Partition::vertex_remap`] (and the influence arrays).
    pub vertex_offset: u32,
    /// Vertices of this submesh.
    pub vertex_count: u32,
    /// First bone in [`Partition::bones`].
    pub bone_offset: u32,
    /// Bones of this submesh (at most `K`).
    pub bone_count: u32,
}

/// What a partition did, per primitive.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PartitionStats {
    /// The bone budget.
    pub k: usize,
    /// Submeshes made.
    pub submeshes: usize,
    /// ⌈bones used / K⌉ (at least 1 with any face): no partition can do with fewer.
    pub lower_bound: usize,
    /// Vertices of the primitive.
    pub vertices_in: usize,
    /// Vertices over all submeshes (border vertices count once per submesh using them).
    pub vertices_out: usize,
    /// `vertices_out / vertices_in`.
    pub duplication_ratio: f64,
    /// Triangles (faces) of the primitive.
    pub triangles: usize,
    /// Distinct bones the faces use (non-zero weights of their vertices, after fitting).
    pub bones_used: usize,
    /// No split of the (fitted) faces into fewer submeshes exists: the count is at the lower
    /// bound, or the exact search proved it.
    pub minimal: bool,
    /// The most bones one submesh uses.
    pub max_bones_used: usize,
    /// (vertex, bone) influences dropped to fit `K`.
    pub dropped_influences: usize,
    /// The largest single weight dropped, in magnitude (before renormalisation; what a drop
    /// costs in position is measured by [`crate::partition::PartitionedScene::skinning_error`]).
    pub max_dropped_weight: f32,
    /// Average cache miss ratio of the input's index order (misses per face, FIFO of 16).
    pub acmr_in: f64,
    /// Of the submeshes' index buffers, drawn one after another.
    pub acmr_out: f64,
    /// Wall time of the partition (ms).
    pub time_ms: f64,
}

/// A partitioned primitive: flat arrays, and per-submesh offset/count records into them.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// The pieces.
    pub submeshes: Vec<Submesh>,
    /// Per output vertex: the input vertex it copies.
    pub vertex_remap: Vec<u32>,
    /// Index list of every submesh, in submesh-local vertex numbers.
    pub indices: Vec<u32>,
    /// Bones of every submesh (skin joint indices), ascending within a submesh.
    pub bones: Vec<u32>,
    /// Influences per output vertex: the widest vertex's count rounded up to a multiple of 4
    /// (the shader's `vec4` slots), padded with weight 0.
    pub width: usize,
    /// Per output vertex, `width` joints as indices into its submesh's bones.
    pub local_joints: Vec<u32>,
    /// Per output vertex, `width` weights (those of the input, after any reduction).
    pub weights: Vec<f32>,
    /// The input's influences after the reductions, in its own (global) joint indices: what
    /// the submeshes skin with, for comparing against the original.
    pub reduced: SkinWeights,
    /// What the partition did.
    pub stats: PartitionStats,
}

impl Partition {
    /// The submesh's bones.
    pub fn bones_of(&self, s: &Submesh) -> &[u32] {
        &self.bones[s.bone_offset as usize..(s.bone_offset + s.bone_count) as usize]
    }

    /// The submesh's output vertices (as input vertex numbers).
    pub fn vertices_of(&self, s: &Submesh) -> &[u32] {
        &self.vertex_remap[s.vertex_offset as usize..(s.vertex_offset + s.vertex_count) as usize]
    }

    /// The submesh's indices (local to its vertices).
    pub fn indices_of(&self, s: &Submesh) -> &[u32] {
        &self.indices[s.index_offset as usize..(s.index_offset + s.index_count) as usize]
    }
}

/// Vertices per face of a topology.
fn face_size(t: Topology) -> usize {
    match t {
        Topology::Triangles => 3,
        Topology::Lines => 2,
        Topology::Points => 1,
    }
}

/// Partition `primitive` (skinned) into submeshes of at most `k` bones; see the module
/// documentation. Errors: `k` below [`MIN_BONES`], no skin weights, weights or indices that do
/// not fit the vertices, a joint index of [`MAX_JOINTS`] or more.
pub fn partition(primitive: &Primitive, k: usize) -> Result<Partition> {
    let started = Instant::now();
    let input = Input::check(primitive, k)?;
    let (k, n, fs, indices) = (input.k, input.vertices, input.face_size, input.indices);
    let mut inf = Influences::of(input.weights);
    let mut stats = PartitionStats {
        k,
        vertices_in: n,
        triangles: input.faces,
        ..Default::default()
    };
    // (1) Fit.
    let dropped = fit(&mut inf, indices, fs, k);
    stats.dropped_influences = dropped.influences;
    stats.max_dropped_weight = dropped.max_weight;
    let faces_view = index_faces(&inf, indices, fs, n);
    {
        let mut used = vec![false; input.joints];
        for &b in &faces_view.bones {
            used[b as usize] = true;
        }
        stats.bones_used = used.iter().filter(|&&u| u).count();
        stats.lower_bound = stats
            .bones_used
            .div_ceil(k)
            .max(usize::from(input.faces > 0));
    }
    // (2) Candidates; (3) the fewest submeshes, refined; (4) then the fewest vertices.
    let chosen = choose_groups(&faces_view, input.joints, k, n, &mut stats);
    // (5) Output.
    let width = (0..n)
        .map(|v| inf.count[v] as usize)
        .max()
        .unwrap_or(0)
        .next_multiple_of(4)
        .max(4);
    let mut out = Partition {
        submeshes: Vec::with_capacity(chosen.len()),
        vertex_remap: Vec::with_capacity(n + n / 8),
        indices: Vec::with_capacity(indices.len()),
        bones: Vec::new(),
        width,
        local_joints: Vec::new(),
        weights: Vec::new(),
        reduced: reduced_weights(&inf, input.weights.width, n),
        stats,
    };
    let mut writer = SubmeshWriter {
        faces: &faces_view,
        inf: &inf,
        k,
        triangles: primitive.topology == Topology::Triangles,
        local_of: vec![u32::MAX; n],
        bone_local: vec![u32::MAX; input.joints],
    };
    for (group, bones) in chosen {
        writer.push(&mut out, &group, &bones)?;
    }
    finish_stats(&mut out, indices, n, input.faces);
    out.stats.time_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(out)
}

/// The error of a partition's input or of an internal check.
fn invalid(what: &str, message: impl Into<String>) -> Error {
    Error::invalid("partition", what, message)
}

/// A primitive checked for partitioning.
struct Input<'a> {
    /// The bone budget, at most [`MAX_JOINTS`].
    k: usize,
    /// Its skin weights (one row per vertex).
    weights: &'a SkinWeights,
    /// Vertex count.
    vertices: usize,
    /// Vertices per face.
    face_size: usize,
    /// Whole faces.
    faces: usize,
    /// The indices of the whole faces, each below `vertices`.
    indices: &'a [u32],
    /// One more than the largest joint index with a non-zero weight (at least 1).
    joints: usize,
}

impl<'a> Input<'a> {
    /// Check `k`, the weights and the indices of `primitive`.
    fn check(primitive: &'a Primitive, k: usize) -> Result<Input<'a>> {
        if k < MIN_BONES {
            return Err(invalid(
                "max bones",
                format!("{k} bones per submesh; at least {MIN_BONES}"),
            ));
        }
        let w = primitive
            .skin_weights
            .as_ref()
            .ok_or_else(|| invalid("skin weights", "the primitive is not skinned"))?;
        let n = primitive.vertex_count();
        if w.vertex_count() != n
            || w.joints.len() != w.weights.len()
            || w.weights.len() != n * w.width
        {
            return Err(invalid(
                "skin weights",
                format!("{} weighted vertices for {n} positions", w.vertex_count()),
            ));
        }
        let fs = face_size(primitive.topology);
        let faces = primitive.indices.len() / fs;
        let indices = &primitive.indices[..faces * fs];
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= n) {
            return Err(invalid(
                "indices",
                format!("index {bad} >= vertex count {n}"),
            ));
        }
        let joints = w
            .joints
            .iter()
            .zip(&w.weights)
            .filter(|(_, wt)| **wt != 0.0)
            .map(|(&j, _)| j as usize + 1)
            .max()
            .unwrap_or(1);
        if joints > MAX_JOINTS {
            return Err(invalid(
                "skin weights",
                format!("joint index {} (at most {MAX_JOINTS} joints)", joints - 1),
            ));
        }
        Ok(Input {
            // More bones than a skin can have changes nothing and keeps the per-bin tables
            // bounded.
            k: k.min(MAX_JOINTS),
            weights: w,
            vertices: n,
            face_size: fs,
            faces,
            indices,
            joints,
        })
    }
}

/// Steps (2) to (4): the candidate splits, the file-order floor unless one is proved minimal
/// (within [`GREEDY_BUDGET`]), then of those with the fewest submeshes, refined, the one with
/// the fewest vertices. Sets `stats.minimal`.
fn choose_groups(
    faces: &Faces,
    joints: usize,
    k: usize,
    n: usize,
    stats: &mut PartitionStats,
) -> Groups {
    let mut candidates = vec![grow(faces, joints, k)];
    let mut proved = false;
    if let Some(packed) = pack(faces, joints, k, stats.lower_bound) {
        candidates.push(packed.groups);
        proved = packed.minimal;
    }
    let fewest = candidates.iter().map(Vec::len).min().unwrap_or(0);
    stats.minimal = fewest <= stats.lower_bound || proved;
    if !stats.minimal
        && fewest.saturating_mul(k).saturating_mul(faces.combo_count()) <= GREEDY_BUDGET
    {
        // The common split as a floor: never more submeshes than it makes.
        candidates.push(greedy(faces, joints, k));
    }
    let fewest = candidates.iter().map(Vec::len).min().unwrap_or(0);
    let mut chosen: Option<(usize, Groups)> = None;
    for c in candidates.into_iter().filter(|c| c.len() == fewest) {
        let refined = refine(faces, joints, c);
        let verts = vertices_out(faces, &refined, n);
        if chosen.as_ref().is_none_or(|(v, _)| verts < *v) {
            chosen = Some((verts, refined));
        }
    }
    chosen.map(|c| c.1).unwrap_or_default()
}

/// The fitted influences of the `n` vertices as skin weights `width` wide, in the input's
/// (global) joint indices.
fn reduced_weights(inf: &Influences, width: usize, n: usize) -> SkinWeights {
    let mut reduced = SkinWeights {
        width,
        joints: vec![0; n * width],
        weights: vec![0.0; n * width],
    };
    for v in 0..n {
        let (js, ws) = inf.of_vertex(v);
        for (i, (&j, &wt)) in js.iter().zip(ws).enumerate() {
            reduced.joints[v * width + i] = j;
            reduced.weights[v * width + i] = wt;
        }
    }
    reduced
}

/// Writes the chosen groups into a [`Partition`], one submesh each.
struct SubmeshWriter<'a> {
    /// The faces.
    faces: &'a Faces<'a>,
    /// The fitted influences.
    inf: &'a Influences,
    /// The bone budget.
    k: usize,
    /// Triangles: reorder each submesh for the vertex cache.
    triangles: bool,
    /// Per input vertex: its number in the current submesh (`u32::MAX` between submeshes).
    local_of: Vec<u32>,
    /// Per joint: its index in the current submesh's bones (`u32::MAX` between submeshes).
    bone_local: Vec<u32>,
}

impl SubmeshWriter<'_> {
    /// Append the submesh of faces `group` with `bones` (ascending) to `out`: its vertices
    /// in first use of the final index order, their influences as indices into `bones`.
    fn push(&mut self, out: &mut Partition, group: &[u32], bones: &[u32]) -> Result<()> {
        let index_offset = out.indices.len() as u32;
        let vertex_offset = out.vertex_remap.len() as u32;
        let bone_offset = out.bones.len() as u32;
        for (i, &b) in bones.iter().enumerate() {
            self.bone_local[b as usize] = i as u32;
        }
        out.bones.extend_from_slice(bones);
        let (ordered, local) = self.vertices_and_indices(group);
        for &v in &ordered {
            out.vertex_remap.push(v);
            let (js, ws) = self.inf.of_vertex(v as usize);
            for i in 0..out.width {
                let local = js.get(i).map_or(0, |&j| self.bone_local[j as usize]);
                if local == u32::MAX {
                    return Err(invalid(
                        "submesh bones",
                        format!("internal: vertex {v} uses a bone its submesh does not list"),
                    ));
                }
                out.local_joints.push(local);
                out.weights.push(ws.get(i).copied().unwrap_or(0.0));
            }
        }
        out.indices.extend_from_slice(&local);
        let vertex_count = out.vertex_remap.len() as u32 - vertex_offset;
        for &b in bones {
            self.bone_local[b as usize] = u32::MAX;
        }
        if bones.len() > self.k {
            return Err(invalid(
                "submesh bones",
                format!(
                    "internal: a submesh with {} bones over {}",
                    bones.len(),
                    self.k
                ),
            ));
        }
        out.stats.max_bones_used = out.stats.max_bones_used.max(bones.len());
        out.submeshes.push(Submesh {
            index_offset,
            index_count: out.indices.len() as u32 - index_offset,
            vertex_offset,
            vertex_count,
            bone_offset,
            bone_count: bones.len() as u32,
        });
        Ok(())
    }

    /// The input vertices of faces `group` in first-use order of the final index order
    /// (triangles reordered for the cache first), and the group's indices in that numbering.
    fn vertices_and_indices(&mut self, group: &[u32]) -> (Vec<u32>, Vec<u32>) {
        // Input vertices in first-use order of the faces' original order, local indices.
        let mut verts: Vec<u32> = Vec::new();
        let mut local: Vec<u32> = Vec::with_capacity(group.len() * self.faces.face_size);
        for &f in group {
            for &v in self.faces.vertices_of(f as usize) {
                if self.local_of[v as usize] == u32::MAX {
                    self.local_of[v as usize] = verts.len() as u32;
                    verts.push(v);
                }
                local.push(self.local_of[v as usize]);
            }
        }
        for &v in &verts {
            self.local_of[v as usize] = u32::MAX;
        }
        if self.triangles {
            local = cache_order(local, verts.len());
        }
        // Vertices renumbered in first-use order of the final index order (fetch locality).
        let mut renumber = vec![u32::MAX; verts.len()];
        let mut next = 0u32;
        for i in &mut local {
            let r = &mut renumber[*i as usize];
            if *r == u32::MAX {
                *r = next;
                next += 1;
            }
            *i = *r;
        }
        let mut ordered = vec![0u32; verts.len()];
        for (old, &new) in renumber.iter().enumerate() {
            ordered[new as usize] = verts[old];
        }
        (ordered, local)
    }
}

/// The output figures of `out.stats` (all but the time): submeshes, minimality, vertices
/// and their duplication, and the ACMR of the input's `indices` and of the submeshes'.
fn finish_stats(out: &mut Partition, indices: &[u32], n: usize, faces: usize) {
    let s = &mut out.stats;
    s.submeshes = out.submeshes.len();
    // A count at the lower bound is minimal whatever the candidates claimed (refinement can
    // empty a group).
    s.minimal |= s.submeshes <= s.lower_bound;
    s.vertices_out = out.vertex_remap.len();
    s.duplication_ratio = if n > 0 {
        s.vertices_out as f64 / n as f64
    } else {
        1.0
    };
    s.acmr_in = acmr(indices.iter().copied(), n, faces);
    s.acmr_out = acmr(
        out.submeshes.iter().flat_map(|sm| {
            let base = sm.vertex_offset;
            out.indices[sm.index_offset as usize..(sm.index_offset + sm.index_count) as usize]
                .iter()
                .map(move |&i| base + i)
        }),
        out.vertex_remap.len(),
        faces,
    );
}

/// The flat face arrays every stage reads: bone sets, vertex→face lists, combos.
pub(super) fn index_faces<'a>(
    inf: &Influences,
    indices: &'a [u32],
    fs: usize,
    n: usize,
) -> Faces<'a> {
    let faces = indices.len() / fs;
    let mut bone_offsets = Vec::with_capacity(faces + 1);
    // Capacity for the worst case (no bone shared within a face): no regrowth.
    let bound: usize = indices
        .iter()
        .map(|&v| inf.count[v as usize] as usize)
        .sum();
    let mut bones: Vec<u32> = Vec::with_capacity(bound);
    let mut scratch: Vec<u32> = Vec::new();
    bone_offsets.push(0usize);
    for face in indices.chunks_exact(fs) {
        // Sorted insertion without duplicates into a small buffer (a face has a handful of
        // bones), then one copy.
        scratch.clear();
        for &v in face {
            for &b in inf.of_vertex(v as usize).0 {
                if let Err(at) = scratch.binary_search(&b) {
                    scratch.insert(at, b);
                }
            }
        }
        bones.extend_from_slice(&scratch);
        bone_offsets.push(bones.len());
    }
    let mut vf_offsets = vec![0usize; n + 1];
    for &v in indices {
        vf_offsets[v as usize + 1] += 1;
    }
    for v in 0..n {
        vf_offsets[v + 1] += vf_offsets[v];
    }
    let mut vf_faces = vec![0u32; indices.len()];
    let mut fill = vf_offsets.clone();
    for (f, face) in indices.chunks_exact(fs).enumerate() {
        for &v in face {
            vf_faces[fill[v as usize]] = f as u32;
            fill[v as usize] += 1;
        }
    }
    let mut combo_of_face = Vec::with_capacity(faces);
    let mut combo_first: Vec<usize> = Vec::new();
    let mut combo_faces: Vec<usize> = Vec::new();
    {
        let mut index: rustc_hash::FxHashMap<&[u32], u32> = rustc_hash::FxHashMap::default();
        for f in 0..faces {
            let b = &bones[bone_offsets[f]..bone_offsets[f + 1]];
            let next = combo_first.len() as u32;
            let c = *index.entry(b).or_insert(next);
            if c == next {
                combo_first.push(f);
                combo_faces.push(0);
            }
            combo_faces[c as usize] += 1;
            combo_of_face.push(c);
        }
    }
    Faces {
        bone_offsets,
        bones,
        indices,
        face_size: fs,
        vf_offsets,
        vf_faces,
        combo_of_face,
        combo_first,
        combo_faces,
    }
}

/// The triangle order of one submesh with the fewer FIFO cache misses of its faces' input
/// order and Tipsify's ([`super::tipsify`], meshoptimizer's `optimizeVertexCacheFifo`) for
/// [`ACMR_CACHE`] entries (ties keep the input order). meshoptimizer's general
/// `optimizeVertexCache` scored within 1 % of it on the shared models at six times the cost
/// (1M triangles: 120 ms against 20 ms).
fn cache_order(local: Vec<u32>, vertices: usize) -> Vec<u32> {
    let faces = local.len() / 3;
    let score = |ix: &[u32]| acmr(ix.iter().copied(), vertices, faces);
    match super::tipsify::tipsify(&local, vertices, ACMR_CACHE as u32) {
        Some((optimized, _)) if score(&optimized) < score(&local) => optimized,
        _ => local,
    }
}

/// Vertices a grouping makes: distinct (vertex, group) pairs.
fn vertices_out(faces: &Faces, groups: &[(Vec<u32>, Vec<u32>)], n: usize) -> usize {
    let mut stamp = vec![u32::MAX; n];
    let mut count = 0;
    for (g, (members, _)) in groups.iter().enumerate() {
        for &f in members {
            for &v in faces.vertices_of(f as usize) {
                if stamp[v as usize] != g as u32 {
                    stamp[v as usize] = g as u32;
                    count += 1;
                }
            }
        }
    }
    count
}

/// Average cache miss ratio of an index stream with a FIFO cache of [`ACMR_CACHE`] vertices.
pub fn acmr(indices: impl Iterator<Item = u32>, vertices: usize, faces: usize) -> f64 {
    let mut stamp = vec![0usize; vertices];
    let mut time = ACMR_CACHE + 1;
    let mut misses = 0usize;
    for i in indices {
        let Some(s) = stamp.get_mut(i as usize) else {
            continue;
        };
        // In the FIFO when it entered within the last ACMR_CACHE misses.
        if time - *s > ACMR_CACHE {
            misses += 1;
            *s = time;
            time += 1;
        }
    }
    if faces == 0 {
        0.0
    } else {
        misses as f64 / faces as f64
    }
}
