//! The shape measures of a piece of skin: a ring's radius, the enclosed volume of an open
//! piece, the normals of the skinned surface itself. Used by the remedies study (`quality`)
//! and by every joint's zone ([`super::joints`]).

use std::collections::BTreeMap;

use glam::{DVec3, Vec3};

/// Mean distance of a ring's vertices (`ring` indexes `positions`) from their own centroid:
/// the ring's radius wherever the skin put it (the centroid, not the joint, so the ring's
/// offset along the bone does not count).
pub fn ring_radius(positions: &[Vec3], ring: &[usize]) -> f64 {
    ring_circle(positions, ring).map_or(0.0, |(_, radius)| radius)
}

/// A ring's centroid and [`ring_radius`] (None: none of its vertices in `positions`).
pub fn ring_circle(positions: &[Vec3], ring: &[usize]) -> Option<(DVec3, f64)> {
    let points: Vec<DVec3> = ring
        .iter()
        .filter_map(|&v| positions.get(v))
        .map(|p| p.as_dvec3())
        .collect();
    if points.is_empty() {
        return None;
    }
    let centroid = points.iter().sum::<DVec3>() / points.len() as f64;
    let radius = points.iter().map(|q| (*q - centroid).length()).sum::<f64>() / points.len() as f64;
    Some((centroid, radius))
}

/// Area-weighted vertex normals of a triangle list.
pub fn surface_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
        let (Some(pa), Some(pb), Some(pc)) = (positions.get(a), positions.get(b), positions.get(c))
        else {
            continue;
        };
        let f = (*pb - *pa).cross(*pc - *pa);
        for i in [a, b, c] {
            n[i] += f;
        }
    }
    n
}

/// Enclosed volume of a triangle list whose open boundary loops are closed by fans to each
/// loop's centroid (signed tetrahedra against the origin, f64).
pub fn closed_volume(positions: &[Vec3], indices: &[u32]) -> f64 {
    let p = |i: u32| {
        positions
            .get(i as usize)
            .map_or(DVec3::ZERO, |v| v.as_dvec3())
    };
    let tet = |a: DVec3, b: DVec3, c: DVec3| a.dot(b.cross(c)) / 6.0;
    let mut volume = 0.0;
    // Directed edges used once: the boundary, oriented as its triangles go round.
    let mut edges: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for t in indices.chunks_exact(3) {
        volume += tet(p(t[0]), p(t[1]), p(t[2]));
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            if edges.remove(&(b, a)).is_none() {
                *edges.entry((a, b)).or_insert(0) += 1;
            }
        }
    }
    // Walk each boundary loop; cap it with a fan to its centroid, reversed so the cap faces
    // out as the surface does.
    let mut next: BTreeMap<u32, u32> = edges.keys().map(|&(a, b)| (a, b)).collect();
    while let Some((&start, _)) = next.iter().next() {
        let mut loop_ = vec![start];
        let mut at = start;
        while let Some(n) = next.remove(&at) {
            if n == start {
                break;
            }
            loop_.push(n);
            at = n;
        }
        if loop_.len() < 3 {
            continue;
        }
        let centroid = loop_.iter().map(|&i| p(i)).sum::<DVec3>() / loop_.len() as f64;
        for k in 0..loop_.len() {
            let (a, b) = (loop_[k], loop_[(k + 1) % loop_.len()]);
            volume += tet(p(b), p(a), centroid);
        }
    }
    volume
}
