//! The vertices of two scenes paired, and the distance between them in a frame: what `diff`
//! measures every frame, owned (no borrow of either scene), so the viewer keeps one beside
//! its two characters.

use glam::{Vec2, Vec3};

use crate::error::{Error, Result};
use crate::math::{bounds_diagonal_f64, finite_bounds};
use crate::scene::{Scene, Topology};
use crate::skin::{RunningError, SkinnedVertices, position_error};

use super::FrameStats;
use super::matching::{self, Matching, VertexSet};

/// What [`Pairing::per_vertex`] holds for a vertex with no partner in the other file (and for
/// one not drawn): a distance cannot be negative, so the heatmaps draw it grey, off their ramp
/// (`shaders/render.wgsl`), instead of as a perfect match.
pub const NO_PARTNER: f32 = -1.0;

/// Most vertices (over every draw) of a side: pairs hold vertex indices as u32.
pub const MAX_PAIRED_VERTICES: u64 = u32::MAX as u64;

/// The drawn vertices of both scenes, paired, and the scale distances are read against.
#[derive(Clone, Debug)]
pub struct Pairing {
    /// A's drawn vertices (rest-pose positions).
    pub set_a: VertexSet,
    /// B's.
    pub set_b: VertexSet,
    /// The pairs and how they were made.
    pub matching: Matching,
    /// A's rest-pose bounds diagonal (B's when A has none; 1 when neither has), model units.
    pub diagonal: f64,
    /// Where each draw of A, and of B, starts in a per-vertex array of every draw, and the
    /// arrays' lengths ([`Pairing::per_vertex`]; made once, not every frame).
    starts: [(Vec<usize>, usize); 2],
}

/// The drawn vertices of `scene`, their positions in `skinned` (every draw's) and their
/// texture coordinates.
pub fn vertex_set(scene: &Scene, skinned: &[SkinnedVertices]) -> VertexSet {
    let mut set = VertexSet::default();
    for (d, draw) in scene.draws.iter().enumerate() {
        let prim = scene.primitive(draw);
        let n = prim.vertex_count();
        let mut drawn = vec![prim.indices.is_empty() || prim.topology == Topology::Points; n];
        for &i in &prim.indices {
            if let Some(slot) = drawn.get_mut(i as usize) {
                *slot = true;
            }
        }
        let before = set.positions.len();
        for (v, _) in drawn.iter().enumerate().filter(|(_, d)| **d) {
            set.positions.push(position(skinned, d, v));
            let uv = prim.uvs.as_ref().and_then(|u| u.get(v));
            set.uvs.push(uv.copied().unwrap_or(Vec2::NAN));
            set.draw.push(d as u32);
            set.vertex.push(v as u32);
        }
        set.per_draw.push(set.positions.len() - before);
    }
    set
}

/// Vertex `v` of draw `d` in `skinned` (NaN when missing: it then counts as infinitely far).
fn position(skinned: &[SkinnedVertices], d: usize, v: usize) -> Vec3 {
    skinned
        .get(d)
        .and_then(|s| s.positions.get(v))
        .copied()
        .unwrap_or(Vec3::NAN)
}

/// The diagonal of the finite points' bounds (0 without any).
fn diagonal_of(points: &[Vec3]) -> f64 {
    finite_bounds(points.iter().copied()).map_or(0.0, bounds_diagonal_f64)
}

/// Where each draw's vertices start in a per-vertex array of every draw of `scene`, and the
/// array's length.
fn starts(scene: &Scene) -> (Vec<usize>, usize) {
    let mut start = Vec::with_capacity(scene.draws.len());
    let mut total = 0usize;
    for d in &scene.draws {
        start.push(total);
        total += scene.primitive(d).vertex_count();
    }
    (start, total)
}

impl Pairing {
    /// Pair `a`'s and `b`'s drawn vertices by their rest poses (`rest_a`, `rest_b`: every
    /// draw skinned at rest), within `match_radius_rel` of the diagonal.
    pub fn new(
        a: &Scene,
        rest_a: &[SkinnedVertices],
        b: &Scene,
        rest_b: &[SkinnedVertices],
        match_radius_rel: f64,
    ) -> Result<Pairing> {
        let starts = [starts(a), starts(b)];
        for (scene, (_, total)) in [a, b].into_iter().zip(&starts) {
            let total = *total;
            if total as u64 > MAX_PAIRED_VERTICES {
                return Err(Error::invalid(
                    &scene.name,
                    "meshes",
                    format!(
                        "{total} vertices over its draws: more than the {MAX_PAIRED_VERTICES} \
                         a comparison pairs"
                    ),
                ));
            }
        }
        let set_a = vertex_set(a, rest_a);
        let set_b = vertex_set(b, rest_b);
        let diagonal = match (diagonal_of(&set_a.positions), diagonal_of(&set_b.positions)) {
            (d, _) if d > 0.0 => d,
            (_, d) if d > 0.0 => d,
            _ => 1.0,
        };
        let radius = (match_radius_rel * diagonal) as f32;
        let matching = matching::match_vertices(&set_a, &set_b, radius);
        Ok(Pairing {
            set_a,
            set_b,
            matching,
            diagonal,
            starts,
        })
    }

    /// Each pair's distance between `a` and `b` (every draw's skinned vertices of each
    /// scene), into `distances` (one per pair), and the frame's figures.
    pub fn measure(
        &self,
        a: &[SkinnedVertices],
        b: &[SkinnedVertices],
        distances: &mut Vec<f64>,
    ) -> FrameStats {
        distances.clear();
        let mut acc = RunningError::default();
        for &(ia, ib) in &self.matching.pairs {
            let (da, va) = self.a_vertex(ia);
            let (db, vb) = (
                self.set_b.draw[ib as usize] as usize,
                self.set_b.vertex[ib as usize] as usize,
            );
            let d = position_error(position(a, da as usize, va as usize), position(b, db, vb));
            distances.push(d);
            acc.add(d, (da, va));
        }
        FrameStats {
            max: acc.max,
            mean: acc.mean(),
            worst: acc.worst,
        }
    }

    /// A's draw and vertex of pair side `ia`.
    pub fn a_vertex(&self, ia: u32) -> (u32, u32) {
        (self.set_a.draw[ia as usize], self.set_a.vertex[ia as usize])
    }

    /// Per vertex of every draw of A and of B (draws in order), the largest of `distances`
    /// ([`Pairing::measure`]'s) over its pairs; [`NO_PARTNER`] for vertices not drawn or not
    /// matched: what heatmaps show.
    pub fn per_vertex(&self, distances: &[f64], out_a: &mut Vec<f32>, out_b: &mut Vec<f32>) {
        let [(start_a, total_a), (start_b, total_b)] = &self.starts;
        out_a.clear();
        out_a.resize(*total_a, NO_PARTNER);
        out_b.clear();
        out_b.resize(*total_b, NO_PARTNER);
        for (&(ia, ib), &d) in self.matching.pairs.iter().zip(distances) {
            let d = d as f32;
            let (da, va) = self.a_vertex(ia);
            if let Some(slot) = start_a
                .get(da as usize)
                .and_then(|s| out_a.get_mut(s + va as usize))
            {
                *slot = slot.max(d);
            }
            let (db, vb) = (self.set_b.draw[ib as usize], self.set_b.vertex[ib as usize]);
            if let Some(slot) = start_b
                .get(db as usize)
                .and_then(|s| out_b.get_mut(s + vb as usize))
            {
                *slot = slot.max(d);
            }
        }
    }
}
