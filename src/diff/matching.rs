//! Vertex matching for `diff`: which drawn vertex of one file is which of the other's.
//!
//! Based on: the k-d tree's k-nearest search (Bentley, "Multidimensional binary search trees
//! used for associative searching", 1975) and the greedy weighted matching (candidate pairs
//! taken in order of distance, each vertex once: Avis, "A survey of heuristics for the
//! weighted matching problem", 1983).
//!
//! Method: when both files draw the same vertices in the same order (a re-weighted or
//! re-exported copy), the vertices are paired by index. Otherwise (gltfpack and converters
//! reorder, split and merge vertices) by rest-pose position: each vertex of A keeps its
//! [`MAX_CANDIDATES`] nearest vertices of B within the radius, the pairs are taken one to
//! one in order of cost, then every vertex left over on either side is paired with its
//! cheapest candidate within the radius on the other, already taken or not (seams split into
//! several vertices at one position, or merged back into one). A pair's cost is its rest-pose
//! distance, plus up to the radius more as its texture coordinates differ ([`pair_cost`]):
//! the copies of a seam, at one position, are told apart by their texture coordinates, and so
//! are neighbours that a coarse position grid (`optimize`'s mesh quantisation) moved past each
//! other, where the file keeps texture coordinates finer than that.
//!
//! Cost: O(n log n) to build the trees, about O(log n + k) a query (a subtree is skipped once
//! its splitting plane is as far as the k-th candidate, so clusters of coincident vertices do
//! not make it quadratic), O(n k log(n k)) to order the candidates, O(n k) memory for n
//! vertices and k = [`MAX_CANDIDATES`].
//! Limits: without texture coordinates (or with the same ones) positions alone decide, so two
//! vertices at one rest position that move apart (two layers of a mesh that touch) can be
//! paired crosswise, and so can neighbours that a position grid coarser than their spacing
//! moved past each other (the 108,258-vertex `builtin:dense-humanoid`, which has none, on a
//! 9-bit grid: `diff`'s worst of a clip is then up to 41 % above `optimize`'s own); vertices
//! further apart than the radius in the rest pose are reported unmatched; a candidate must be
//! among the [`MAX_CANDIDATES`] nearest by position.

use glam::{Vec2, Vec3};

/// Candidates each vertex keeps (seams put a few vertices at one position; more than this
/// many within the radius means the radius is too large for the mesh).
pub const MAX_CANDIDATES: usize = 8;

/// Texture-coordinate distance at which a candidate pair costs a whole match radius more: 16
/// times the rounding of gltfpack's default 12-bit texture coordinates (1/8190 of their
/// range, about 1.2e-4), under the spacing of neighbouring vertices on a texture of 256
/// texels or more (a texel is 3.9e-3).
pub const UV_RADIUS: f32 = 2e-3;

/// Share of index pairs that must lie within the radius for index order to be trusted: a
/// copy with a planted change still pairs by index, a reordered file falls below it.
pub const INDEX_MATCH_SHARE: f64 = 0.9;

/// The drawn vertices of one file, in draw order, with where each comes from.
#[derive(Clone, Debug, Default)]
pub struct VertexSet {
    /// Rest-pose (skinned) position, model space.
    pub positions: Vec<Vec3>,
    /// Texture coordinates: those the base colour texture is read with, as the importer gives
    /// them (its texture transform applied); NaN where the draw has none.
    pub uvs: Vec<Vec2>,
    /// The draw each vertex belongs to.
    pub draw: Vec<u32>,
    /// Its index in that draw's primitive.
    pub vertex: Vec<u32>,
    /// Drawn vertices per draw (the index-order test compares these).
    pub per_draw: Vec<usize>,
}

/// How the vertices were paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchMethod {
    /// The same draws and vertex counts, paired in order.
    Index,
    /// Nearest rest-pose positions (texture coordinates breaking ties).
    Position,
}

impl MatchMethod {
    /// `index` or `position`.
    pub fn name(self) -> &'static str {
        match self {
            MatchMethod::Index => "index",
            MatchMethod::Position => "position",
        }
    }
}

/// What the matching found.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MatchStats {
    /// How the vertices were paired.
    pub method: MatchMethod,
    /// The search radius, model units.
    pub radius: f64,
    /// Drawn vertices of A and of B.
    pub a_vertices: usize,
    /// Drawn vertices of B.
    pub b_vertices: usize,
    /// Pairs made one to one.
    pub one_to_one: usize,
    /// Vertices of A paired with a vertex of B another vertex of A already has.
    pub a_shared: usize,
    /// Vertices of B paired with a vertex of A already paired.
    pub b_shared: usize,
    /// Vertices of A with no vertex of B within the radius.
    pub a_unmatched: usize,
    /// Vertices of B with no vertex of A within the radius.
    pub b_unmatched: usize,
    /// Largest rest-pose distance within a pair (model units).
    pub worst_rest_distance: f64,
}

/// The pairs (indices into the two [`VertexSet`]s) and what the matching found.
#[derive(Clone, Debug)]
pub struct Matching {
    /// `(a, b)` vertex pairs.
    pub pairs: Vec<(u32, u32)>,
    /// Counts.
    pub stats: MatchStats,
}

/// Pair the vertices of `a` and `b` ([`MatchMethod::Index`] where the order holds, else by
/// position), within `radius` model units.
pub fn match_vertices(a: &VertexSet, b: &VertexSet, radius: f32) -> Matching {
    match_by_index(a, b, radius).unwrap_or_else(|| match_by_position(a, b, radius))
}

/// Pair by index when both draw the same vertex counts per draw and at least
/// [`INDEX_MATCH_SHARE`] of the pairs lie within `radius`.
pub fn match_by_index(a: &VertexSet, b: &VertexSet, radius: f32) -> Option<Matching> {
    if a.per_draw != b.per_draw || a.positions.is_empty() {
        return None;
    }
    let near = a
        .positions
        .iter()
        .zip(&b.positions)
        .filter(|(p, q)| p.distance(**q) <= radius)
        .count();
    if (near as f64) < INDEX_MATCH_SHARE * a.positions.len() as f64 {
        return None;
    }
    let n = a.positions.len();
    let worst = a
        .positions
        .iter()
        .zip(&b.positions)
        .map(|(p, q)| p.as_dvec3().distance(q.as_dvec3()))
        .fold(0.0, f64::max);
    Some(Matching {
        pairs: (0..n as u32).map(|i| (i, i)).collect(),
        stats: MatchStats {
            method: MatchMethod::Index,
            radius: radius as f64,
            a_vertices: n,
            b_vertices: n,
            one_to_one: n,
            a_shared: 0,
            b_shared: 0,
            a_unmatched: 0,
            b_unmatched: 0,
            worst_rest_distance: worst,
        },
    })
}

/// A static k-d tree over points (Bentley, "Multidimensional binary search trees used for
/// associative searching", 1975): indices ordered so each subrange's middle element splits it
/// on the axis of its depth; non-finite points are left out.
struct KdTree<'a> {
    points: &'a [Vec3],
    order: Vec<u32>,
}

impl<'a> KdTree<'a> {
    fn new(points: &'a [Vec3]) -> KdTree<'a> {
        let mut order: Vec<u32> = (0..points.len() as u32)
            .filter(|&i| points[i as usize].is_finite())
            .collect();
        Self::build(points, &mut order, 0);
        KdTree { points, order }
    }

    fn build(points: &[Vec3], order: &mut [u32], depth: usize) {
        if order.len() <= 1 {
            return;
        }
        let axis = depth % 3;
        let mid = order.len() / 2;
        order.select_nth_unstable_by(mid, |&x, &y| {
            points[x as usize][axis].total_cmp(&points[y as usize][axis])
        });
        let (lo, hi) = order.split_at_mut(mid);
        Self::build(points, lo, depth + 1);
        Self::build(points, &mut hi[1..], depth + 1);
    }

    /// Points within `radius` of `p`, nearest first (ties by index), at most `keep`, into
    /// `out`.
    fn near(&self, p: Vec3, radius: f32, keep: usize, out: &mut Vec<(f32, u32)>) {
        out.clear();
        if p.is_finite() && keep > 0 {
            self.search(&self.order, 0, p, radius, keep, out);
        }
        out.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    }

    /// The farthest distance `out` keeps: the radius until it holds `keep`, then its worst.
    fn bound(out: &[(f32, u32)], radius: f32, keep: usize) -> f32 {
        if out.len() < keep {
            radius
        } else {
            out.iter().map(|c| c.0).fold(0.0, f32::max)
        }
    }

    fn search(
        &self,
        order: &[u32],
        depth: usize,
        p: Vec3,
        radius: f32,
        keep: usize,
        out: &mut Vec<(f32, u32)>,
    ) {
        if order.is_empty() {
            return;
        }
        let mid = order.len() / 2;
        let i = order[mid];
        let q = self.points[i as usize];
        let d = p.distance(q);
        if d <= Self::bound(out, radius, keep) {
            if out.len() == keep
                && let Some(worst) = (0..out.len())
                    .max_by(|&x, &y| out[x].0.total_cmp(&out[y].0).then(out[x].1.cmp(&out[y].1)))
            {
                if (d, i) < (out[worst].0, out[worst].1) {
                    out[worst] = (d, i);
                }
            } else if out.len() < keep {
                out.push((d, i));
            }
        }
        let axis = depth % 3;
        let delta = p[axis] - q[axis];
        let (near, far) = if delta < 0.0 {
            (&order[..mid], &order[mid + 1..])
        } else {
            (&order[mid + 1..], &order[..mid])
        };
        self.search(near, depth + 1, p, radius, keep, out);
        // The far side only when the splitting plane is nearer than what is kept (strictly:
        // a cluster of coincident points is not searched again and again).
        let bound = Self::bound(out, radius, keep);
        if delta.abs() < bound || (delta.abs() <= bound && out.len() < keep) {
            self.search(far, depth + 1, p, radius, keep, out);
        }
    }
}

/// What pairing A's vertex `i` with B's `j`, `distance` apart in the rest pose, costs: the
/// distance, plus `radius` times their texture coordinates' distance in [`UV_RADIUS`]s, at
/// most one (so coordinates that differ everywhere, a copy whose texture layout changed, leave
/// the positions to decide); the distance alone where neither has any, and a whole radius more
/// where one has and the other has not (a file without any adds the same to every pair).
pub fn pair_cost(distance: f32, uv_a: Vec2, uv_b: Vec2, radius: f32) -> f32 {
    match (uv_a.is_nan(), uv_b.is_nan()) {
        (true, true) => distance,
        (false, false) => distance + radius * (uv_a.distance(uv_b) / UV_RADIUS).min(1.0),
        _ => distance + radius,
    }
}

/// A candidate pair: its cost ([`pair_cost`]), rest-pose distance, A's vertex, B's.
type Candidate = (f32, f32, u32, u32);

/// Pair by rest-pose position: one to one in order of cost, then the leftovers with
/// their cheapest (see the module header).
pub fn match_by_position(a: &VertexSet, b: &VertexSet, radius: f32) -> Matching {
    let tree_b = KdTree::new(&b.positions);
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut near = Vec::new();
    for (i, p) in a.positions.iter().enumerate() {
        tree_b.near(*p, radius, MAX_CANDIDATES, &mut near);
        let uv_a = uv_of(a, i as u32);
        candidates.extend(near.iter().map(|&(d, j)| {
            let cost = pair_cost(d, uv_a, uv_of(b, j), radius);
            (cost, d, i as u32, j)
        }));
    }
    candidates.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then((x.2, x.3).cmp(&(y.2, y.3))));
    let (mut a_used, mut b_used) = (
        vec![false; a.positions.len()],
        vec![false; b.positions.len()],
    );
    let mut pairs = Vec::new();
    let mut worst = 0.0f64;
    for &(_, d, i, j) in &candidates {
        if !a_used[i as usize] && !b_used[j as usize] {
            a_used[i as usize] = true;
            b_used[j as usize] = true;
            pairs.push((i, j));
            worst = worst.max(d as f64);
        }
    }
    let one_to_one = pairs.len();
    // Leftovers of each side: their cheapest on the other, taken or not.
    let (a_shared, a_unmatched) = pair_leftovers(
        (a, &a_used),
        (b, &tree_b),
        radius,
        (&mut pairs, &mut worst),
        false,
    );
    let tree_a = KdTree::new(&a.positions);
    let (b_shared, b_unmatched) = pair_leftovers(
        (b, &b_used),
        (a, &tree_a),
        radius,
        (&mut pairs, &mut worst),
        true,
    );
    Matching {
        pairs,
        stats: MatchStats {
            method: MatchMethod::Position,
            radius: radius as f64,
            a_vertices: a.positions.len(),
            b_vertices: b.positions.len(),
            one_to_one,
            a_shared,
            b_shared,
            a_unmatched,
            b_unmatched,
            worst_rest_distance: worst,
        },
    }
}

/// Vertex `i`'s texture coordinates in `set` (NaN when it has none).
fn uv_of(set: &VertexSet, i: u32) -> Vec2 {
    set.uvs.get(i as usize).copied().unwrap_or(Vec2::NAN)
}

/// Pair each vertex of `set` not `used` with its cheapest candidate in `other` within
/// `radius` (`flipped`: `set` is B, so pairs are written (other, vertex)); the counts paired
/// and left unmatched.
fn pair_leftovers(
    (set, used): (&VertexSet, &[bool]),
    (other, tree): (&VertexSet, &KdTree),
    radius: f32,
    (pairs, worst): (&mut Vec<(u32, u32)>, &mut f64),
    flipped: bool,
) -> (usize, usize) {
    let (mut shared, mut unmatched) = (0, 0);
    let mut near = Vec::new();
    for (i, p) in set.positions.iter().enumerate().filter(|(i, _)| !used[*i]) {
        tree.near(*p, radius, MAX_CANDIDATES, &mut near);
        let uv = uv_of(set, i as u32);
        // The first of the cheapest (`near` is ordered by distance, then index).
        let cheapest = near
            .iter()
            .map(|&(d, j)| (pair_cost(d, uv, uv_of(other, j), radius), d, j))
            .reduce(|best, c| if c.0 < best.0 { c } else { best });
        match cheapest {
            Some((_, d, j)) => {
                pairs.push(if flipped {
                    (j, i as u32)
                } else {
                    (i as u32, j)
                });
                shared += 1;
                *worst = worst.max(d as f64);
            }
            None => unmatched += 1,
        }
    }
    (shared, unmatched)
}
