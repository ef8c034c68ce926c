//! Weight tools: make, repair and measure the per-vertex bone weights of a skinned mesh.
//!
//! One algorithm per file, each a `*Job` with public inputs, `validate()` with numbered rules
//! and `run()`, and a stats struct saying what it did:
//! - [`sections`]: each bone's elliptical cross-sections at base and tip, estimated from the
//!   mesh (Weber, "Run-Time Skin Deformation", §10, fig. 12);
//! - [`regenerate`]: one bone per vertex from tapered elliptical pseudo-cylinders (§11);
//! - [`smooth`]: limit the weight change between neighbouring vertices, scaled by the local
//!   cross-section (§10);
//! - [`rogue`]: move weights on patches detached from a bone's main patch to the bone of the
//!   nearest valid vertex along the surface (§12);
//! - [`distance`]: `w = k / d^n` to every bone segment (Dunia, "Implicit Animation Overview");
//! - [`edit`]: the tools above on every skinned primitive of a scene, with a report;
//! - [`surface`]: one connected skin around a skeleton's pseudo-cylinders (naive surface
//!   nets over their smooth union), what the built-in humanoid wears.
//!
//! Everything here works in the mesh's bind space (the space its positions are in), on
//! [`WeightMesh`] (positions and triangles), [`BoneAxis`] segments (one per skin joint) and
//! [`Influences`] (per vertex, (joint, weight) pairs). [`bone_axes`] derives the segments of a
//! glTF skin from its joints; native rigs know theirs.

pub mod changes;
pub mod distance;
pub mod edit;
pub mod regenerate;
pub mod rogue;
pub mod sections;
pub mod smooth;
pub mod surface;

use glam::Vec3;

use crate::error::Error;

use crate::scene::{Scene, SkinWeights, Topology};

/// Most vertices the weight tools take in one mesh (the importer's own limit is larger; the
/// tools keep per-vertex maps of a few dozen bytes, so this bounds them to about 1 GB).
pub const MAX_VERTICES: usize = 16_000_000;

/// Per vertex: (joint index into the skin, weight) pairs, largest weight first, weights > 0.
pub type Influences = Vec<Vec<(u32, f32)>>;

/// The surface the tools work on: bind-space positions and triangles.
#[derive(Clone, Debug, Default)]
pub struct WeightMesh {
    /// Vertex positions in bind space.
    pub positions: Vec<Vec3>,
    /// Triangles (vertex index triples); may be empty (no connectivity: smoothing and rogue
    /// removal then leave every vertex as it is, and say so).
    pub triangles: Vec<[u32; 3]>,
}

impl WeightMesh {
    /// The positions and triangles of a scene primitive (only triangle lists have triangles).
    pub fn from_primitive(p: &crate::scene::Primitive) -> WeightMesh {
        let triangles = if p.topology == Topology::Triangles {
            p.indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect()
        } else {
            Vec::new()
        };
        WeightMesh {
            positions: p.positions.clone(),
            triangles,
        }
    }

    /// Length of the bounding box diagonal (0 for an empty mesh).
    pub fn diagonal(&self) -> f32 {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in &self.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        if self.positions.is_empty() {
            0.0
        } else {
            (hi - lo).length()
        }
    }
}

/// A bone as a segment in bind space, from its joint (base) to where it ends (tip).
#[derive(Clone, Debug, PartialEq)]
pub struct BoneAxis {
    /// Joint name (for reports).
    pub name: String,
    /// The joint's origin.
    pub base: Vec3,
    /// The bone's end (its child joint, or an estimate for a leaf).
    pub tip: Vec3,
    /// Parent bone in the same list, if any.
    pub parent: Option<usize>,
}

impl BoneAxis {
    /// Length of the segment.
    pub fn length(&self) -> f32 {
        (self.tip - self.base).length()
    }

    /// Distance from `p` to the segment and the segment parameter of the closest point
    /// (0 at the base, 1 at the tip; 0 for a zero-length bone).
    pub fn distance(&self, p: Vec3) -> (f32, f32) {
        let ab = self.tip - self.base;
        let l2 = ab.length_squared();
        let t = if l2 > 0.0 {
            ((p - self.base).dot(ab) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        ((p - (self.base + ab * t)).length(), t)
    }
}

/// The bone segments of skin `skin` of `scene` in its bind space: each joint's origin
/// (`inverse(joint_from_bind)`) to the child joint that continues its chain (furthest along
/// the direction from its parent; at a root, the child with the largest subtree); a leaf
/// continues its parent's direction for half the parent's length ([`fit_leaf_tips`] then
/// fits leaves to the mesh); a joint with neither parent nor child gets a zero-length
/// segment, which the tools treat as a point. Joint names come from the nodes.
pub fn bone_axes(scene: &Scene, skin: usize, work: &mut Work) -> Vec<BoneAxis> {
    let Some(s) = scene.skins.get(skin) else {
        return Vec::new();
    };
    // The inverse binds, the joint map, the parent walks' first steps and the names.
    *work += Work::steps(4 * s.joints.len());
    let base: Vec<Vec3> = s
        .joint_from_bind
        .iter()
        .map(|m| {
            let inv = m.inverse();
            let p = inv.w_axis.truncate();
            if p.is_finite() { p } else { Vec3::ZERO }
        })
        .collect();
    // Parent in the skin: the nearest ancestor node that is one of its joints (the walks'
    // steps past the first counted).
    let mut walked = 0u64;
    let joint_of_node: std::collections::HashMap<usize, usize> =
        s.joints.iter().enumerate().map(|(j, &n)| (n, j)).collect();
    let parent: Vec<Option<usize>> = s
        .joints
        .iter()
        .map(|&n| {
            let mut cur = scene.nodes.get(n).and_then(|x| x.parent);
            let mut steps = 0;
            let found = loop {
                let Some(c) = cur else { break None };
                if let Some(&j) = joint_of_node.get(&c) {
                    break Some(j);
                }
                cur = scene.nodes.get(c).and_then(|x| x.parent);
                steps += 1;
                if steps > scene.nodes.len() {
                    break None;
                }
            };
            walked += steps as u64;
            found
        })
        .collect();
    work.steps += walked;
    axes_from_joints(
        &base,
        &parent,
        s.joints
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                scene
                    .nodes
                    .get(n)
                    .and_then(|x| x.name.clone())
                    .unwrap_or_else(|| format!("joint {j}"))
            })
            .collect(),
        work,
    )
}

/// Segments from joint origins and parents (see [`bone_axes`] for the tip rule).
pub fn axes_from_joints(
    base: &[Vec3],
    parent: &[Option<usize>],
    names: Vec<String>,
    work: &mut Work,
) -> Vec<BoneAxis> {
    let n = base.len();
    // Parents, children, the depth sort, subtree sizes, each joint's children (n in all) and
    // the axes: six passes over the joints besides the depth walks.
    *work += Work::steps(6 * n);
    let parent: Vec<Option<usize>> = parent.iter().map(|p| p.filter(|&p| p < n)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            children[p].push(j);
        }
    }
    // Subtree sizes (children may come before parents in a skin's joint list).
    let mut subtree = vec![1usize; n];
    let mut order: Vec<usize> = (0..n).collect();
    let depth = depths(n, |j| parent[j], work);
    order.sort_by_key(|&j| std::cmp::Reverse(depth[j]));
    for &j in &order {
        if let Some(p) = parent[j] {
            subtree[p] += subtree[j];
        }
    }
    (0..n)
        .map(|j| {
            let incoming = parent[j]
                .map(|p| base[j] - base[p])
                .filter(|d| d.length_squared() > 0.0);
            // The child that continues the chain: furthest along the incoming direction, or
            // at a root the child with the largest subtree (the spine, not a leg).
            let next = children[j].iter().copied().max_by(|&a, &b| {
                let key = |c: usize| match incoming {
                    Some(d) => ((base[c] - base[j]).dot(d), 0.0),
                    None => (subtree[c] as f32, (base[c] - base[j]).length()),
                };
                let (ka, kb) = (key(a), key(b));
                ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            });
            let tip = match (next, incoming) {
                (Some(c), _) => base[c],
                // A leaf continues its parent's direction for half the parent's length.
                (None, Some(d)) => base[j] + d * 0.5,
                (None, None) => base[j],
            };
            BoneAxis {
                name: names
                    .get(j)
                    .cloned()
                    .unwrap_or_else(|| format!("joint {j}")),
                base: base[j],
                tip,
                parent: parent[j],
            }
        })
        .collect()
}

/// Aim and size leaf bones (joints without children, whose end no joint marks) by the mesh:
/// each leaf's tip moves to the furthest extent, along the direction from its base to their
/// centroid, of the vertices nearest its segment; twice, as the new segments take vertices
/// of their own. Bones with children and leaves with fewer than 3 vertices are unchanged.
pub fn fit_leaf_tips(mesh: &WeightMesh, bones: &mut [BoneAxis], work: &mut Work) {
    let n = bones.len();
    // Children flags; per round: the owners' sums, directions, reaches and tips.
    *work += Work::steps(n + 2 * (2 * mesh.positions.len() + 2 * n));
    let mut has_child = vec![false; n];
    for b in bones.iter() {
        if let Some(p) = b.parent.filter(|&p| p < n) {
            has_child[p] = true;
        }
    }
    for _ in 0..2 {
        let owner = sections::nearest_bone(mesh, bones, work);
        let mut sum = vec![Vec3::ZERO; n];
        let mut count = vec![0usize; n];
        for (v, o) in owner.iter().enumerate() {
            if let Some(b) = o {
                sum[*b as usize] += mesh.positions[v];
                count[*b as usize] += 1;
            }
        }
        // Each leaf's direction (to its vertices' centroid), then every leaf's reach along it
        // in one pass over the vertices (one pass per leaf was leaves × vertices).
        let dir: Vec<Option<Vec3>> = (0..n)
            .map(|b| {
                let leaf = !has_child[b] && count[b] >= 3;
                leaf.then(|| (sum[b] / count[b] as f32 - bones[b].base).try_normalize())
                    .flatten()
            })
            .collect();
        let mut reach = vec![0.0f32; n];
        for (v, o) in owner.iter().enumerate() {
            if let Some(b) = o.map(|b| b as usize)
                && let Some(d) = dir[b]
            {
                reach[b] = reach[b].max((mesh.positions[v] - bones[b].base).dot(d));
            }
        }
        for b in 0..n {
            if let Some(d) = dir[b]
                && reach[b] > 0.0
            {
                bones[b].tip = bones[b].base + d * reach[b];
            }
        }
    }
}

/// Vertex–bone pairs a weight tool takes on per primitive: every tool compares each vertex
/// with each bone at least once a pass (nearest bones, cross-sections, scores, distance
/// weights), up to 17 passes for regeneration. 2.5 × 10⁸ pairs is about a second a pass on 2
/// cores and covers a 100,000-vertex character with 2,500 bones; past it the tools refuse
/// before starting rather than run for minutes.
pub const WORK_BUDGET_PAIRS: u64 = 250_000_000;

/// The work a weight tool did, counted in its loops: its cost is tested by these counts at two
/// sizes (tests/core/weights.rs), since a shared 2-core machine's clock cannot tell 2× from 4×.
/// Each tool's statistics carry theirs; [`edit::PrimitiveReport::work`] sums a primitive's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Vertex–bone evaluations: one vertex against one bone (a distance, a cost, a weight).
    /// V·B a pass by the tools' definitions, which compare every vertex with every bone.
    pub vertex_bone: u64,
    /// Every other step: a vertex, bone, joint, influence, triangle or edge visited, each step
    /// of a walk up a hierarchy or across the surface.
    pub steps: u64,
}

impl Work {
    /// `n` steps.
    pub fn steps(n: usize) -> Work {
        Work {
            vertex_bone: 0,
            steps: n as u64,
        }
    }

    /// `vertices × bones` vertex–bone evaluations.
    pub fn pairs(vertices: usize, bones: usize) -> Work {
        Work {
            vertex_bone: vertices as u64 * bones as u64,
            steps: 0,
        }
    }
}

/// Steps to compare two influence lists per vertex (each joint of one looked up in both, as
/// [`weight_of`] does): `1 + len²` a list, over both sets.
pub fn list_comparison_steps(a: &Influences, b: &Influences) -> usize {
    a.iter().chain(b).map(|v| 1 + v.len() * v.len()).sum()
}

impl std::ops::Add for Work {
    type Output = Work;
    fn add(mut self, o: Work) -> Work {
        self += o;
        self
    }
}

impl std::ops::AddAssign for Work {
    fn add_assign(&mut self, o: Work) {
        self.vertex_bone += o.vertex_bone;
        self.steps += o.steps;
    }
}

/// The depth of each of `n` nodes (0 at a root) from `parent` (a parent index at or past `n`
/// counts as a root one level up), each walk stopping at a node already measured: O(n) in
/// all (its steps added to `work`). A node on or above a parent cycle gets `n + 1`, as a walk bounded by `n` steps gives.
pub fn depths(n: usize, parent: impl Fn(usize) -> Option<usize>, work: &mut Work) -> Vec<usize> {
    const UNKNOWN: usize = usize::MAX;
    let mut depth = vec![UNKNOWN; n];
    let mut path = Vec::new();
    work.steps += n as u64;
    for start in 0..n {
        let mut j = start;
        // The depth of the walk's last node.
        let base = loop {
            if depth[j] != UNKNOWN {
                break None;
            }
            path.push(j);
            work.steps += 1;
            match parent(j) {
                None => break Some(0),
                Some(p) if p >= n => break Some(1),
                Some(p) if depth[p] != UNKNOWN => break Some(depth[p].saturating_add(1)),
                Some(_) if path.len() > n => break Some(n + 1),
                Some(p) => j = p,
            }
        };
        let mut d = base.unwrap_or(0);
        while let Some(k) = path.pop() {
            depth[k] = d.min(n + 1);
            d = d.saturating_add(1);
        }
    }
    depth
}

/// Sparse per-vertex influences of a fixed-width weight set (zero weights dropped, largest
/// first).
pub fn influences_from(w: &SkinWeights) -> Influences {
    if w.width == 0 {
        return Vec::new();
    }
    w.joints
        .chunks_exact(w.width)
        .zip(w.weights.chunks_exact(w.width))
        .map(|(j, ws)| {
            let mut v: Vec<(u32, f32)> = j
                .iter()
                .zip(ws)
                .filter(|(_, w)| **w > 0.0)
                .map(|(j, w)| (*j, *w))
                .collect();
            sort_influences(&mut v);
            v
        })
        .collect()
}

/// A fixed-width weight set (`width` a multiple of 4, at least the widest vertex rounded up)
/// holding `influences`.
pub fn skin_weights_from(influences: &Influences, min_width: usize) -> SkinWeights {
    let widest = influences.iter().map(Vec::len).max().unwrap_or(0);
    let width = widest.max(min_width).max(1).div_ceil(4) * 4;
    let mut joints = vec![0u32; influences.len() * width];
    let mut weights = vec![0f32; influences.len() * width];
    for (v, inf) in influences.iter().enumerate() {
        for (s, &(j, w)) in inf.iter().enumerate() {
            joints[v * width + s] = j;
            weights[v * width + s] = w;
        }
    }
    SkinWeights {
        width,
        joints,
        weights,
    }
}

/// Largest weight first; equal weights by joint index (so results do not depend on input
/// order).
pub fn sort_influences(v: &mut [(u32, f32)]) {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

/// A tool's weights for one vertex, made valid: positive finite weights only, largest first
/// ([`sort_influences`]), the `k` largest kept ([`crate::skin::weights::keep_largest`]), and
/// renormalised to sum to 1.
pub fn limit_and_normalise(v: &mut Vec<(u32, f32)>, k: usize) {
    v.retain(|x| x.1 > 0.0 && x.1.is_finite());
    sort_influences(v);
    if crate::skin::weights::keep_largest(v, k).is_none() {
        let sum: f32 = v.iter().map(|x| x.1).sum();
        if sum > 0.0 {
            for x in v.iter_mut() {
                x.1 /= sum;
            }
        }
    }
}

/// Weight of joint `j` on a vertex (0 when absent).
pub fn weight_of(v: &[(u32, f32)], j: u32) -> f32 {
    v.iter().find(|x| x.0 == j).map_or(0.0, |x| x.1)
}

/// Vertex neighbours from triangles (CSR, each undirected edge once per endpoint), and the
/// connected components they make. Vertices at bit-identical positions (glTF splits a
/// vertex wherever its normal or UV differs: seams) are one point of the surface: the first
/// of them carries every triangle edge of the group, the others hang off it by zero-length
/// edges, so tools that follow the surface cross seams (and smoothing keeps twins equal).
#[derive(Clone, Debug, Default)]
pub struct Adjacency {
    /// `vertex_count + 1` offsets into `neighbours`.
    pub offsets: Vec<u32>,
    /// Neighbour vertex indices, grouped by vertex, ascending, no duplicates.
    pub neighbours: Vec<u32>,
    /// Component index of every vertex (isolated vertices are their own components).
    pub component: Vec<u32>,
    /// Number of components.
    pub component_count: usize,
    /// The steps building it took (vertices, triangles, edges, union-find walks).
    pub work: Work,
}

impl Adjacency {
    /// Build from a mesh (triangle indices must be below the vertex count; others are
    /// skipped).
    pub fn new(mesh: &WeightMesh) -> Adjacency {
        let n = mesh.positions.len();
        // Weld: the first vertex at each exact position stands for all of them.
        let mut first: std::collections::HashMap<[u32; 3], u32> =
            std::collections::HashMap::with_capacity(n);
        let canon: Vec<u32> = mesh
            .positions
            .iter()
            .enumerate()
            .map(|(v, p)| {
                let key = [p.x, p.y, p.z].map(|c| (c + 0.0).to_bits());
                *first.entry(key).or_insert(v as u32)
            })
            .collect();
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(mesh.triangles.len() * 6);
        for t in &mesh.triangles {
            if t.iter().any(|&i| i as usize >= n) {
                continue;
            }
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                let (a, b) = (canon[a as usize], canon[b as usize]);
                if a != b {
                    edges.push((a, b));
                    edges.push((b, a));
                }
            }
        }
        // Each twin hangs off its canonical vertex by a zero-length edge (a star, so a
        // thousand vertices at one point make a thousand edges, not a million).
        for (v, &c) in canon.iter().enumerate() {
            if c as usize != v {
                edges.push((c, v as u32));
                edges.push((v as u32, c));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let mut offsets = vec![0u32; n + 1];
        for &(a, _) in &edges {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let neighbours: Vec<u32> = edges.iter().map(|e| e.1).collect();
        // Components by union-find.
        let mut root: Vec<u32> = (0..n as u32).collect();
        let mut walked = 0u64;
        let mut find = |root: &mut [u32], mut x: u32| -> u32 {
            while root[x as usize] != x {
                root[x as usize] = root[root[x as usize] as usize];
                x = root[x as usize];
                walked += 1;
            }
            x
        };
        for &(a, b) in &edges {
            let (ra, rb) = (find(&mut root, a), find(&mut root, b));
            if ra != rb {
                root[ra.max(rb) as usize] = ra.min(rb);
            }
        }
        let mut label = vec![u32::MAX; n];
        let mut component = vec![0u32; n];
        let mut count = 0u32;
        for v in 0..n as u32 {
            let r = find(&mut root, v) as usize;
            if label[r] == u32::MAX {
                label[r] = count;
                count += 1;
            }
            component[v as usize] = label[r];
        }
        // Welding, twins, offsets and labels (vertices); edges made, sorted, counted,
        // copied and joined; the union-find walks.
        let work = Work::steps(4 * n + 3 * mesh.triangles.len() + 4 * edges.len())
            + Work::steps(walked as usize);
        Adjacency {
            offsets,
            neighbours,
            component,
            component_count: count as usize,
            work,
        }
    }

    /// Neighbours of vertex `v`.
    pub fn of(&self, v: usize) -> &[u32] {
        &self.neighbours[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

/// Rule: one influence list per vertex.
pub(crate) fn check_lists(
    job: &'static str,
    n: u32,
    lists: usize,
    vertices: usize,
) -> crate::error::Result<()> {
    if lists != vertices {
        return Err(rule(
            job,
            n,
            format!("{lists} influence lists for {vertices} vertices"),
        ));
    }
    Ok(())
}

/// Rule: at most [`MAX_VERTICES`] vertices.
pub(crate) fn check_vertex_count(
    job: &'static str,
    n: u32,
    vertices: usize,
) -> crate::error::Result<()> {
    if vertices > MAX_VERTICES {
        return Err(rule(
            job,
            n,
            format!("{vertices} vertices (at most {MAX_VERTICES})"),
        ));
    }
    Ok(())
}

/// Rule: every joint named is below `bones`.
pub(crate) fn check_joints(
    job: &'static str,
    n: u32,
    influences: &Influences,
    bones: usize,
) -> crate::error::Result<()> {
    if let Some((v, j)) = influences
        .iter()
        .enumerate()
        .find_map(|(v, x)| x.iter().find(|i| i.0 as usize >= bones).map(|i| (v, i.0)))
    {
        return Err(rule(
            job,
            n,
            format!("vertex {v} names joint {j} of {bones} bones"),
        ));
    }
    Ok(())
}

/// A `*Job::validate()` failure of this module.
pub(crate) fn rule(job: &'static str, rule: u32, message: impl Into<String>) -> Error {
    Error::Job {
        job,
        rule,
        message: message.into(),
    }
}
