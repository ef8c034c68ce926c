//! Deformation at every joint of an imported skin: each joint's blend zone, its rings and the
//! zone's enclosed volume, set up once from the bind pose, then measured on any skinned pose
//! against the rest pose: the candy-wrapper (a ring that shrinks under a twist) and the
//! collapsing elbow (volume lost under a bend), named by joint.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex Blending (a ring
//! weighted w and 1 − w between two bones keeps r·|2w − 1| of its radius under a 180° twist);
//! the measures of the remedies study in this module's parent, generalised from one built
//! joint to every joint of a real rig.
//!
//! Definitions (the README's "Deformation at a joint" says the same):
//! - the **blend zone** of joint J whose parent node P is a joint of the same skin: the
//!   vertices of a draw skinned by that skin weighted to both J and P, the two holding at
//!   least half the vertex's weight (a vertex blended between several such pairs belongs to
//!   the pair that holds most);
//! - the **bone axis**: from P's bind position to J's (the origins of their bind matrices,
//!   in the mesh's bind space);
//! - the **rings**: the zone's vertices in order along the axis, a new ring starting past
//!   half the zone's mean edge length from the ring's first vertex; a ring keeps at least
//!   [`MIN_RING_VERTICES`] vertices that surround the axis (no gap over
//!   [`MAX_RING_GAP_RAD`] between them round it); its **radius** is its vertices' mean
//!   distance from their own centroid;
//! - the **volume**: the zone's triangles (corners all in the zone; vertices at the same bind
//!   position welded, so UV seams do not open it), the open ends capped by fans; measured
//!   only when that piece is a section of a tube (one manifold piece with the topology of an
//!   annulus, its two open ends rings).
//!
//! A pose's [`ZoneShape`]: the smallest ring's radius and the volume, each over its value in
//! the rest pose.
//!
//! Cost: set-up one pass over the weights per draw (width² per vertex), a sort of each zone's
//! vertices and a pass over the triangles per zone; a pose is linear in the zone's vertices
//! and triangles.
//!
//! Limits: rings are cross-sections only where the limb is a tube round its bone (a slab of a
//! shoulder or a hip mixes body and limb; the gap rule drops half rings, not mixed ones);
//! a joint whose parent is not a joint of its skin, or whose bone has no length, has no zone.

use std::collections::HashMap;

use glam::{Mat4, Vec3};

use super::measure::{closed_volume, ring_circle, ring_radius};
use crate::scene::Scene;
use crate::skin::SkinnedVertices;

/// A slab with fewer vertices is no ring (the remedies study's threshold).
pub use super::MIN_RING_VERTICES;

/// Largest angle round the axis between consecutive vertices of a ring: a third of a turn
/// (a slab of one side of a limb is a half ring; a ring of six vertices has 60° gaps).
pub const MAX_RING_GAP_RAD: f32 = std::f32::consts::TAU / 3.0;

/// Zone weight: the joint and its parent together hold at least this much of a vertex's
/// weight (a vertex of a three-way blend counts for the one pair that holds most).
pub const MIN_PAIR_WEIGHT: f32 = 0.5;

/// One joint's blend zone on one draw.
#[derive(Clone, Debug)]
pub struct JointZone {
    /// The draw (index into `scene.draws`).
    pub draw: usize,
    /// The joint's node.
    pub joint_node: usize,
    /// Its parent joint's node.
    pub parent_node: usize,
    /// The zone's vertices.
    pub vertices: usize,
    /// Each ring's vertices and rest radius.
    rings: Vec<(Vec<usize>, f64)>,
    /// The zone's triangles, welded.
    indices: Vec<u32>,
    /// The zone's enclosed volume at rest (None: not a closed-able piece).
    rest_volume: Option<f64>,
}

/// A pose's shape at a joint, relative to its rest pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZoneShape {
    /// Smallest ring radius over its rest radius.
    pub radius_ratio: f64,
    /// Enclosed volume over its rest volume (None: the zone encloses no volume).
    pub volume_ratio: Option<f64>,
}

/// One ring of a zone in a pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingShape {
    /// Its vertices' centroid.
    pub centre: Vec3,
    /// Its radius: the vertices' mean distance from the centroid.
    pub radius: f64,
    /// Its radius in the rest pose.
    pub rest_radius: f64,
}

/// The zone of every joint of every skinned draw of `scene` that has rings, measured at rest
/// on `rest` (every draw skinned in the rest pose, `scene.draws` order).
pub fn joint_zones(scene: &Scene, rest: &[SkinnedVertices]) -> Vec<JointZone> {
    let mut zones = Vec::new();
    for (d, draw) in scene.draws.iter().enumerate() {
        let (Some(s), Some(out)) = (draw.skin, rest.get(d)) else {
            continue;
        };
        let prim = scene.primitive(draw);
        let (Some(skin), Some(weights)) = (scene.skins.get(s), &prim.skin_weights) else {
            continue;
        };
        let parent_of: Vec<Option<usize>> = skin
            .joints
            .iter()
            .map(|&n| {
                let parent = scene.nodes.get(n)?.parent?;
                skin.joints.iter().position(|&j| j == parent)
            })
            .collect();
        let members = zone_members(&weights.joints, &weights.weights, weights.width, &parent_of);
        let weld = weld(&prim.positions);
        for (j, vertices) in members.into_iter().enumerate() {
            let Some(p) = parent_of[j] else { continue };
            if vertices.len() < MIN_RING_VERTICES {
                continue;
            }
            let Some(axis) = bone_axis(&skin.joint_from_bind, p, j) else {
                continue;
            };
            let zone = ZoneGeometry {
                bind: &prim.positions,
                indices: &prim.indices,
                weld: &weld,
                axis,
            };
            let Some(mut z) = zone.build(&vertices, &out.positions) else {
                continue;
            };
            z.draw = d;
            z.joint_node = skin.joints[j];
            z.parent_node = skin.joints[p];
            zones.push(z);
        }
    }
    zones
}

/// Per skin joint, the vertices in its blend zone with its parent joint.
fn zone_members(
    joints: &[u32],
    weights: &[f32],
    width: usize,
    parent_of: &[Option<usize>],
) -> Vec<Vec<usize>> {
    let mut members = vec![Vec::new(); parent_of.len()];
    if width == 0 {
        return members;
    }
    for (v, (js, ws)) in joints
        .chunks_exact(width)
        .zip(weights.chunks_exact(width))
        .enumerate()
    {
        let total: f32 = ws.iter().sum();
        let weight_of = |joint: usize| -> f32 {
            js.iter()
                .zip(ws)
                .filter(|(j, _)| **j as usize == joint)
                .map(|(_, w)| *w)
                .sum()
        };
        // The pair (joint, its parent) holding the most of this vertex's weight.
        let mut best: Option<(f32, usize)> = None;
        for (&j, &w) in js.iter().zip(ws) {
            let j = j as usize;
            let Some(Some(p)) = parent_of.get(j) else {
                continue;
            };
            let wp = weight_of(*p);
            let pair = w + wp;
            if w > 0.0
                && wp > 0.0
                && pair >= MIN_PAIR_WEIGHT * total
                && best.is_none_or(|(b, _)| pair > b)
            {
                best = Some((pair, j));
            }
        }
        if let Some((_, j)) = best {
            members[j].push(v);
        }
    }
    members
}

/// The bone from joint `p` to joint `j` in bind space: `j`'s bind position and the unit
/// direction (None when a bind matrix cannot be inverted or the bone has no length).
fn bone_axis(joint_from_bind: &[Mat4], p: usize, j: usize) -> Option<(Vec3, Vec3)> {
    let origin = |k: usize| {
        let m = joint_from_bind.get(k)?;
        (m.determinant().abs() > f32::MIN_POSITIVE)
            .then(|| m.inverse().w_axis.truncate())
            .filter(|o| o.is_finite())
    };
    let (at, from) = (origin(j)?, origin(p)?);
    let axis = (at - from).try_normalize()?;
    Some((at, axis))
}

/// For each vertex, the first vertex at exactly its bind position.
fn weld(positions: &[Vec3]) -> Vec<u32> {
    let mut first: HashMap<[u32; 3], u32> = HashMap::with_capacity(positions.len());
    positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // + 0.0 makes -0.0 into 0.0: the same position, one key.
            let key = (*p + Vec3::ZERO).to_array().map(f32::to_bits);
            *first.entry(key).or_insert(i as u32)
        })
        .collect()
}

/// What a zone is built from: the draw's bind positions, triangles and weld, and the bone.
struct ZoneGeometry<'a> {
    bind: &'a [Vec3],
    indices: &'a [u32],
    weld: &'a [u32],
    /// The joint's bind position and the bone's direction.
    axis: (Vec3, Vec3),
}

impl ZoneGeometry<'_> {
    /// The zone of `vertices`, measured at rest on `rest` (None: no ring).
    fn build(&self, vertices: &[usize], rest: &[Vec3]) -> Option<JointZone> {
        let mut in_zone = vec![false; self.bind.len()];
        for &v in vertices {
            if let Some(z) = in_zone.get_mut(v) {
                *z = true;
            }
        }
        let triangles: Vec<u32> = self
            .indices
            .chunks_exact(3)
            .filter(|t| t.iter().all(|&i| in_zone.get(i as usize) == Some(&true)))
            .flatten()
            .map(|&i| self.weld.get(i as usize).copied().unwrap_or(i))
            .collect();
        let rings: Vec<(Vec<usize>, f64)> = self
            .rings(vertices, mean_edge(self.bind, &triangles) / 2.0)
            .into_iter()
            .map(|ring| {
                let radius = ring_radius(rest, &ring);
                (ring, radius)
            })
            .filter(|(_, r)| *r > 0.0 && r.is_finite())
            .collect();
        if rings.is_empty() {
            return None;
        }
        let volume = if is_tube_section(&triangles) {
            closed_volume(rest, &triangles)
        } else {
            f64::NAN
        };
        Some(JointZone {
            draw: 0,
            joint_node: 0,
            parent_node: 0,
            vertices: vertices.len(),
            rings,
            indices: triangles,
            rest_volume: (volume > 0.0 && volume.is_finite()).then_some(volume),
        })
    }

    /// The zone's rings: slabs `width` thick along the axis that surround it.
    fn rings(&self, vertices: &[usize], width: f32) -> Vec<Vec<usize>> {
        let (at, axis) = self.axis;
        let along = |v: usize| (self.bind[v] - at).dot(axis);
        let mut order: Vec<usize> = vertices
            .iter()
            .copied()
            .filter(|&v| v < self.bind.len())
            .collect();
        order.sort_by(|&a, &b| along(a).total_cmp(&along(b)));
        let mut rings: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        for v in order {
            if current
                .first()
                .is_some_and(|&f| along(v) - along(f) > width)
            {
                rings.push(std::mem::take(&mut current));
            }
            current.push(v);
        }
        rings.push(current);
        rings.retain(|r| r.len() >= MIN_RING_VERTICES && self.surrounds(r));
        rings
    }

    /// Whether a ring's vertices go round the bone's axis line with no gap over
    /// [`MAX_RING_GAP_RAD`] (angles about the axis, not about the ring's own centroid, which
    /// a half ring pulls towards its arc).
    fn surrounds(&self, ring: &[usize]) -> bool {
        let (at, axis) = self.axis;
        let (u, w) = axis.any_orthonormal_pair();
        let mut angles: Vec<f32> = ring
            .iter()
            .map(|&v| {
                let d = self.bind[v] - at;
                d.dot(w).atan2(d.dot(u))
            })
            .collect();
        angles.sort_by(f32::total_cmp);
        let wrap = angles
            .first()
            .zip(angles.last())
            .map(|(a, b)| a + std::f32::consts::TAU - b);
        let largest = angles
            .windows(2)
            .map(|p| p[1] - p[0])
            .chain(wrap)
            .fold(0.0, f32::max);
        largest <= MAX_RING_GAP_RAD
    }
}

/// The open boundary of a triangle list as loops of vertices, when the list is a manifold
/// piece whose boundary is simple loops: every directed edge used once, each boundary vertex
/// on one loop once (None otherwise: a fin, a pinch or a flipped triangle).
fn boundary_loops(indices: &[u32]) -> Option<Vec<Vec<u32>>> {
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    for t in indices.chunks_exact(3) {
        for e in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let n = directed.entry(e).or_insert(0);
            *n += 1;
            if *n > 1 {
                return None;
            }
        }
    }
    let mut next: HashMap<u32, u32> = HashMap::new();
    let mut incoming: HashMap<u32, u32> = HashMap::new();
    for &(a, b) in directed
        .keys()
        .filter(|&&(a, b)| !directed.contains_key(&(b, a)))
    {
        if next.insert(a, b).is_some() {
            return None;
        }
        *incoming.entry(b).or_insert(0) += 1;
    }
    if incoming.values().any(|&n| n != 1) {
        return None;
    }
    let mut starts: Vec<u32> = next.keys().copied().collect();
    starts.sort_unstable();
    let mut loops = Vec::new();
    for start in starts {
        let mut at = start;
        let mut ring = Vec::new();
        while let Some(n) = next.remove(&at) {
            ring.push(at);
            at = n;
        }
        if !ring.is_empty() {
            loops.push(ring);
        }
    }
    Some(loops)
}

/// The zone's volume is measured when its piece of skin is a section of a tube: two open
/// ends, each a ring of at least [`MIN_RING_VERTICES`] (a patch or a piece with holes has
/// no volume a cap would make meaningful).
fn is_tube_section(indices: &[u32]) -> bool {
    let ends = boundary_loops(indices).is_some_and(|loops| {
        loops.len() == 2 && loops.iter().all(|l| l.len() >= MIN_RING_VERTICES)
    });
    ends && is_annulus(indices)
}

/// Whether a manifold triangle list is one connected piece with the topology of an annulus
/// (Euler characteristic V − E + F = 0): two disjoint patches also have two open ends.
fn is_annulus(indices: &[u32]) -> bool {
    let mut vertices: Vec<u32> = indices.to_vec();
    vertices.sort_unstable();
    vertices.dedup();
    let index_of = |v: u32| vertices.binary_search(&v).unwrap_or(0);
    let mut parent: Vec<usize> = (0..vertices.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(indices.len());
    for t in indices.chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            edges.push((a.min(b), a.max(b)));
            let (ra, rb) = (
                root(&mut parent, index_of(a)),
                root(&mut parent, index_of(b)),
            );
            parent[ra] = rb;
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let pieces = (0..parent.len())
        .filter(|&i| root(&mut parent, i) == i)
        .count();
    let euler = vertices.len() as i64 - edges.len() as i64 + (indices.len() / 3) as i64;
    pieces == 1 && euler == 0
}

/// Mean edge length of a triangle list (0 when empty).
fn mean_edge(positions: &[Vec3], indices: &[u32]) -> f32 {
    let p = |i: u32| positions.get(i as usize).copied().unwrap_or(Vec3::ZERO);
    let (mut sum, mut count) = (0.0f64, 0usize);
    for t in indices.chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            sum += f64::from(p(a).distance(p(b)));
            count += 1;
        }
    }
    if count == 0 {
        0.0
    } else {
        (sum / count as f64) as f32
    }
}

impl JointZone {
    /// The zone's shape in a skinned pose of its draw (`posed`: that draw's positions).
    pub fn measure(&self, posed: &[Vec3]) -> ZoneShape {
        ZoneShape {
            radius_ratio: self
                .narrowest_ring(posed)
                .map_or(0.0, |r| r.radius / r.rest_radius),
            volume_ratio: self
                .rest_volume
                .map(|rest| closed_volume(posed, &self.indices) / rest),
        }
    }

    /// The ring that keeps the least of its rest radius in a skinned pose of its draw
    /// (`posed`: that draw's positions); None when no ring has a finite ratio.
    pub fn narrowest_ring(&self, posed: &[Vec3]) -> Option<RingShape> {
        let mut narrowest: Option<RingShape> = None;
        for (ring, rest) in &self.rings {
            // A ring none of whose vertices are in `posed` has lost its whole radius.
            let (centre, radius) = ring_circle(posed, ring).unwrap_or_default();
            let ratio = radius / rest;
            let best = narrowest.map_or(f64::INFINITY, |n| n.radius / n.rest_radius);
            if ratio < best {
                narrowest = Some(RingShape {
                    centre: centre.as_vec3(),
                    radius,
                    rest_radius: *rest,
                });
            }
        }
        narrowest
    }

    /// Rings in the zone.
    pub fn ring_count(&self) -> usize {
        self.rings.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tube of `rings` rings of `n` vertices round +X (radius 1, 0.1 apart), keeping the
    /// vertices whose angle lies in `[0, arc_rad)`, with its triangles.
    fn tube(rings: usize, n: usize, arc_rad: f32) -> (Vec<Vec3>, Vec<u32>) {
        let mut positions = Vec::new();
        for r in 0..rings {
            for k in 0..n {
                let a = std::f32::consts::TAU * k as f32 / n as f32;
                positions.push(Vec3::new(0.1 * r as f32, a.cos(), a.sin()));
            }
        }
        let keep = |k: usize| std::f32::consts::TAU * k as f32 / (n as f32) < arc_rad;
        let mut indices = Vec::new();
        for r in 0..rings as u32 - 1 {
            for k in 0..n as u32 {
                let k1 = (k + 1) % n as u32;
                if !(keep(k as usize) && keep(k1 as usize)) {
                    continue;
                }
                let (a, b) = (r * n as u32 + k, r * n as u32 + k1);
                let (c, d) = (a + n as u32, b + n as u32);
                indices.extend_from_slice(&[a, b, d, a, d, c]);
            }
        }
        (positions, indices)
    }

    /// A full tube's slabs are rings and its zone a tube section; half a tube (a slab of one
    /// side of a limb, whose gap seen from its own centroid is under 120°) has no ring and
    /// no volume.
    #[test]
    fn rings_go_round_the_axis_and_tubes_are_annuli() {
        for (arc, expect_rings) in [(std::f32::consts::TAU, true), (std::f32::consts::PI, false)] {
            let (bind, indices) = tube(6, 12, arc + 1e-3);
            let used: Vec<usize> = {
                let mut v: Vec<usize> = indices.iter().map(|&i| i as usize).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let weld: Vec<u32> = (0..bind.len() as u32).collect();
            let zone = ZoneGeometry {
                bind: &bind,
                indices: &indices,
                weld: &weld,
                axis: (Vec3::new(0.25, 0.0, 0.0), Vec3::X),
            };
            let rings = zone.rings(&used, 0.05);
            assert_eq!(!rings.is_empty(), expect_rings, "arc {arc}: {rings:?}");
            assert_eq!(is_tube_section(&indices), expect_rings, "arc {arc}");
        }
        // Two separate patches have two open ends too, but are no annulus.
        let (_, a) = tube(3, 12, std::f32::consts::TAU + 1e-3);
        let b: Vec<u32> = a.iter().map(|i| i + 1000).collect();
        assert!(!is_annulus(&[a.clone(), b].concat()));
        assert!(is_annulus(&a));
    }
}
