//! The dense humanoid (`builtin:dense-humanoid`): the built-in humanoid with its skin
//! subdivided until it has at least [`DENSE_MIN_VERTICES`] vertices, so GPU benchmarks have a
//! film-resolution character without a file (`scripts/gpu-report.sh` crowds of it).
//!
//! Based on: midpoint (1-to-4) triangle subdivision, the first step of Loop's scheme (Charles
//! Loop, "Smooth Subdivision Surfaces Based on Triangles", 1987) without its smoothing, so
//! the surface, and what the bones do to it, stay those of the humanoid.
//! Method: each edge gets one new vertex at its midpoint (shared by both triangles), normal
//! the normalised sum of its ends', influences the mean of its ends' (the four largest kept
//! and rescaled to the ends' mean total, so a vertex between two sections blends them as the
//! edge did). Cost: O(V + T) a level with one hash map of edges; each level multiplies the
//! triangles by 4 and adds one vertex an edge. Limits: vertex indices are `u32`;
//! [`MAX_LEVELS`] levels at most.

use std::collections::HashMap;

use glam::Vec3;

use crate::error::{Error, Result};
use crate::rig::{RigMesh, WeberRig};

/// Vertices the dense humanoid has at least: the "100k-vertex character" of GPU benchmarks
/// (film and cinematic characters run 50k–200k).
pub const DENSE_MIN_VERTICES: usize = 100_000;

/// Most subdivision levels (each quadruples the triangles: 6 levels turn 1k triangles into
/// 4M).
pub const MAX_LEVELS: usize = 6;

/// Influences a subdivided vertex keeps (the humanoid's skin has at most four).
pub const MAX_INFLUENCES: usize = 4;

/// What [`subdivide_to`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubdivideStats {
    /// Levels applied.
    pub levels: usize,
    /// Vertices before and after.
    pub vertices: (usize, usize),
    /// Triangles before and after.
    pub triangles: (usize, usize),
    /// New vertices whose ends had more than [`MAX_INFLUENCES`] influences between them
    /// (the smallest dropped, the rest rescaled).
    pub reduced: usize,
}

/// The mean of two influence lists, the largest [`MAX_INFLUENCES`] kept and rescaled to the
/// mean total; whether any was dropped.
fn mean_influences(a: &[(u32, f32)], b: &[(u32, f32)]) -> (Vec<(u32, f32)>, bool) {
    let mut merged: Vec<(u32, f32)> = Vec::with_capacity(a.len() + b.len());
    for &(bone, w) in a.iter().chain(b) {
        match merged.iter_mut().find(|(j, _)| *j == bone) {
            Some((_, sum)) => *sum += 0.5 * w,
            None => merged.push((bone, 0.5 * w)),
        }
    }
    let total: f32 = merged.iter().map(|(_, w)| w).sum();
    let reduced = merged.len() > MAX_INFLUENCES;
    if reduced {
        crate::weights::sort_influences(&mut merged);
        merged.truncate(MAX_INFLUENCES);
        let kept: f32 = merged.iter().map(|(_, w)| w).sum();
        if kept > 0.0 {
            for (_, w) in &mut merged {
                *w *= total / kept;
            }
        }
    }
    (merged, reduced)
}

/// One level of midpoint subdivision of `mesh`; the count of reduced influence lists.
pub fn subdivide(mesh: &RigMesh) -> Result<(RigMesh, usize)> {
    let v = mesh.positions.len();
    if mesh.normals.len() != v || mesh.weights.len() != v {
        return Err(Error::invalid(
            "subdivided mesh",
            "normals/weights",
            format!(
                "{v} positions, {} normals, {} influence lists",
                mesh.normals.len(),
                mesh.weights.len()
            ),
        ));
    }
    let mut out = mesh.clone();
    out.triangles = Vec::with_capacity(4 * mesh.triangles.len());
    let mut midpoints: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * mesh.triangles.len());
    let mut reduced = 0;
    for t in &mesh.triangles {
        if t.iter().any(|&i| i as usize >= v) {
            return Err(Error::invalid(
                "subdivided mesh",
                "triangles",
                format!("triangle {t:?} indexes past the {v} vertices"),
            ));
        }
        let mut mid = [0u32; 3];
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let key = (a.min(b), a.max(b));
            mid[k] = match midpoints.get(&key) {
                Some(&m) => m,
                None => {
                    let m = u32::try_from(out.positions.len()).map_err(|_| {
                        Error::invalid("subdivided mesh", "positions", "more than 2^32 vertices")
                    })?;
                    let (pa, pb) = (mesh.positions[a as usize], mesh.positions[b as usize]);
                    let p = (Vec3::from(pa) + Vec3::from(pb)) * 0.5;
                    let (na, nb) = (
                        Vec3::from(mesh.normals[a as usize]),
                        mesh.normals[b as usize],
                    );
                    let n = (na + Vec3::from(nb)).try_normalize().unwrap_or(na);
                    let (w, dropped) =
                        mean_influences(&mesh.weights[a as usize], &mesh.weights[b as usize]);
                    reduced += dropped as usize;
                    out.positions.push(p.to_array());
                    out.normals.push(n.to_array());
                    out.weights.push(w);
                    midpoints.insert(key, m);
                    m
                }
            };
        }
        let [a, b, c] = *t;
        let [ab, bc, ca] = mid;
        out.triangles
            .extend_from_slice(&[[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    Ok((out, reduced))
}

/// Subdivide `mesh` until it has at least `min_vertices` vertices ([`MAX_LEVELS`] at most: an
/// error beyond).
pub fn subdivide_to(mesh: &RigMesh, min_vertices: usize) -> Result<(RigMesh, SubdivideStats)> {
    let mut stats = SubdivideStats {
        vertices: (mesh.positions.len(), mesh.positions.len()),
        triangles: (mesh.triangles.len(), mesh.triangles.len()),
        ..Default::default()
    };
    let mut out = mesh.clone();
    while out.positions.len() < min_vertices {
        if stats.levels == MAX_LEVELS || out.triangles.is_empty() {
            return Err(Error::invalid(
                "subdivided mesh",
                "positions",
                format!(
                    "{} vertices after {} levels, {min_vertices} asked",
                    out.positions.len(),
                    stats.levels
                ),
            ));
        }
        let (next, reduced) = subdivide(&out)?;
        out = next;
        stats.levels += 1;
        stats.reduced += reduced;
    }
    stats.vertices.1 = out.positions.len();
    stats.triangles.1 = out.triangles.len();
    Ok((out, stats))
}

/// The dense humanoid: the humanoid's rig, bones and motions, its skin subdivided to at least
/// [`DENSE_MIN_VERTICES`] vertices.
pub fn dense_humanoid_rig() -> Result<WeberRig> {
    let mut rig = super::humanoid_rig()?;
    let mesh = rig
        .mesh
        .as_ref()
        .ok_or_else(|| Error::invalid("builtin:humanoid", "mesh", "no skin to subdivide"))?;
    let (dense, _) = subdivide_to(mesh, DENSE_MIN_VERTICES)?;
    rig.mesh = Some(dense);
    rig.name = "dense-humanoid".into();
    Ok(rig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad() -> RigMesh {
        RigMesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
            weights: vec![
                vec![(0, 1.0)],
                vec![(0, 0.5), (1, 0.5)],
                vec![(1, 0.25), (2, 0.25), (3, 0.25), (4, 0.25)],
                vec![(5, 1.0)],
            ],
            color: [1.0; 4],
        }
    }

    /// One level on two triangles sharing an edge: V + E vertices (the shared edge's midpoint
    /// once), 4T triangles, midpoints halfway, influences the mean of the ends'.
    #[test]
    fn one_level_adds_a_vertex_an_edge_at_the_midpoint() {
        let (m, reduced) = subdivide(&quad()).expect("a quad subdivides");
        assert_eq!(m.positions.len(), 4 + 5);
        assert_eq!(m.triangles.len(), 8);
        let (sum_area, mut area) = (1.0f32, 0.0f32);
        for t in &m.triangles {
            let p = t.map(|i| Vec3::from(m.positions[i as usize]));
            area += 0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length();
        }
        assert!((area - sum_area).abs() < 1e-6, "area {area}");
        // The first new vertex is the midpoint of edge 0-1.
        assert_eq!(m.positions[4], [0.5, 0.0, 0.0]);
        assert_eq!(m.weights[4], vec![(0, 0.75), (1, 0.25)]);
        // Edges 1-2, 2-0 and 2-3 merge five bones each: the smallest loses out and the rest are
        // rescaled, so the sum stays 1.
        assert_eq!(reduced, 3, "edges 1-2, 2-0 and 2-3 exceed four influences");
        for w in &m.weights {
            let s: f32 = w.iter().map(|(_, w)| w).sum();
            assert!((s - 1.0).abs() < 1e-6 && w.len() <= MAX_INFLUENCES, "{w:?}");
        }
    }

    #[test]
    fn subdivide_to_stops_at_the_count_and_refuses_bad_meshes() {
        // A triangulated disc gains one vertex an edge, E = V + T - 1 (Euler): 4 → 9 → 25.
        let (m, stats) = subdivide_to(&quad(), 25).expect("a quad subdivides to 25 vertices");
        assert_eq!(stats.levels, 2);
        assert_eq!(stats.vertices, (4, 25));
        assert_eq!(stats.triangles, (2, 32));
        assert_eq!(m.positions.len(), 25);
        let mut bad = quad();
        bad.triangles.push([0, 1, 9]);
        assert!(subdivide(&bad).is_err());
        let mut bad = quad();
        bad.normals.pop();
        assert!(subdivide(&bad).is_err());
        assert!(subdivide_to(&quad(), usize::MAX).is_err());
    }
}
