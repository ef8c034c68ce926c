//! The worst skinned-vertex distance between a character and another version of it (same
//! meshes, vertex for vertex: an optimised copy), playing a clip of each at the same times.
//!
//! Based on: `skinview diff`'s measure (the distance between paired skinned vertices), here
//! with the pairing by index that an optimiser's output keeps. Cost: two CPU skinnings a time.
//! Limits: the two scenes must have the same draws and, unless renumbered, vertex counts
//! (checked); vertices pair by index, or through a renumbering the optimiser reports.

use glam::Vec3;

use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::scene::Scene;

/// Where two versions differ most.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorstError {
    /// The distance (model units).
    pub distance: f32,
    /// At this time (s).
    pub time_s: f32,
    /// Draw (index into `scene.draws`) and vertex.
    pub draw: usize,
    /// The vertex in that draw.
    pub vertex: usize,
}

/// The worst distance between `a` playing clip `clip_a` and `b` playing `clip_b`, over `times`.
pub fn worst_error(a: (&Scene, usize), b: (&Scene, usize), times: &[f32]) -> Result<WorstError> {
    worst_error_renumbered(a, b, times, &[])
}

/// [`worst_error`] where `b` has some primitives' vertices renumbered: for each `(mesh,
/// primitive, new_from_old)` of `renumbered`, vertex `v` of that primitive in `a` is vertex
/// `new_from_old[v]` in `b` (an optimiser's vertex fetch order; several vertices of `a` may
/// be one of `b`, welded).
pub fn worst_error_renumbered(
    (a, clip_a): (&Scene, usize),
    (b, clip_b): (&Scene, usize),
    times: &[f32],
    renumbered: &[(usize, usize, Vec<u32>)],
) -> Result<WorstError> {
    if a.draws.len() != b.draws.len() {
        return Err(Error::invalid(
            &b.name,
            "meshes",
            format!("its draws differ from {}'s", a.name),
        ));
    }
    // Per draw: its renumbering, if any; each vertex of `a` must have one in `b`.
    let mut maps: Vec<Option<&[u32]>> = Vec::with_capacity(a.draws.len());
    for (d, e) in a.draws.iter().zip(&b.draws) {
        let map = renumbered
            .iter()
            .find(|r| (r.0, r.1) == (d.mesh, d.primitive))
            .map(|r| r.2.as_slice());
        let (n, m) = (
            a.primitive(d).positions.len(),
            b.primitive(e).positions.len(),
        );
        let fits = match map {
            Some(map) => map.len() == n && map.iter().all(|&v| (v as usize) < m),
            None => n == m,
        };
        if !fits {
            return Err(Error::invalid(
                &b.name,
                format!("meshes[{}].primitives[{}]", d.mesh, d.primitive),
                format!("its {m} vertices do not pair with {}'s {n}", a.name),
            ));
        }
        maps.push(map);
    }
    let (mut fa, mut fb) = (FrameState::new(a), FrameState::new(b));
    let (mut sa, mut sb) = (CpuSkinner::new(a, None), CpuSkinner::new(b, None));
    let mut worst = WorstError::default();
    for &t in times {
        fa.evaluate(a, Some(clip_a), t)?;
        fb.evaluate(b, Some(clip_b), t)?;
        let (va, vb) = (sa.skin_all(a, &fa)?, sb.skin_all(b, &fb)?);
        for (draw, (x, y)) in va.iter().zip(&vb).enumerate() {
            for (vertex, p) in x.positions.iter().enumerate() {
                let v = maps[draw].map_or(vertex, |m| m[vertex] as usize);
                let d = y
                    .positions
                    .get(v)
                    .map_or(f32::INFINITY, |q| Vec3::distance(*p, *q));
                if d > worst.distance {
                    worst = WorstError {
                        distance: d,
                        time_s: t,
                        draw,
                        vertex,
                    };
                }
            }
        }
    }
    Ok(worst)
}
