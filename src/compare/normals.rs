//! How far skinned normals are from the skinned surface's own normals: the measure of a
//! normal mode (exact inverse-transpose or blended 3×3, renormalised or not) against the truth
//! of the deformed triangles.
//!
//! Based on: the project's own measure, with area-weighted vertex normals (each triangle's
//! cross product summed onto its corners) as the surface's truth.
//!
//! Method: per frame, every triangle's area-weighted normal is summed onto the positions of
//! its corners — vertices at the same bind position (seams: glTF splits a vertex where its UV
//! or normal differs) share the sum, so a seam is not half a surface — and the angle between
//! each vertex's skinned normal and that sum is taken. The same measure of the bind pose
//! (authored normals against the bind surface) is the baseline: hard edges and authored
//! smoothing differ from the area-weighted normal at rest already, and only what the pose
//! adds is the normal mode's doing.
//!
//! Cost: O(V + T) per frame with one hash of each bind position, made once per draw.
//!
//! Limits: triangle draws with normals only; seams are joined only where the bind positions
//! are bit-identical; a zero normal, or a vertex on no triangle, counts as 90°.

use std::collections::HashMap;

use glam::Vec3;
use serde::Serialize;

use crate::scene::{Primitive, Topology};

/// Angles between skinned normals and the skinned surface, over a clip, for one draw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SurfaceNormalErrors {
    /// Draw index.
    pub draw: usize,
    /// Mean angle over vertices and frames, degrees.
    pub mean_deg: f64,
    /// Largest angle, degrees.
    pub max_deg: f64,
    /// The same measures at the bind pose (authored normals against the bind surface).
    pub bind_mean_deg: f64,
    /// Largest angle at the bind pose.
    pub bind_max_deg: f64,
    #[serde(skip)]
    sum: f64,
    #[serde(skip)]
    count: usize,
    #[serde(skip)]
    weld: Vec<u32>,
}

impl SurfaceNormalErrors {
    /// Ready to measure draw `draw` of primitive `prim`; `None` when the draw has no normals
    /// or no triangles.
    pub fn new(draw: usize, prim: &Primitive) -> Option<SurfaceNormalErrors> {
        let normals = prim.normals.as_ref()?;
        if prim.topology != Topology::Triangles || prim.indices.len() < 3 {
            return None;
        }
        let mut first: HashMap<[u32; 3], u32> = HashMap::with_capacity(prim.positions.len());
        let weld = prim
            .positions
            .iter()
            .enumerate()
            .map(|(v, p)| {
                *first
                    .entry(p.to_array().map(|c| (c + 0.0).to_bits()))
                    .or_insert(v as u32)
            })
            .collect();
        let mut e = SurfaceNormalErrors {
            draw,
            weld,
            ..Default::default()
        };
        let (mean, max) = e.angles(&prim.positions, normals, &prim.indices);
        e.bind_mean_deg = mean;
        e.bind_max_deg = max;
        Some(e)
    }

    /// Add one frame's skinned positions and normals (lengths must match the primitive's).
    pub fn add(&mut self, positions: &[Vec3], normals: &[Vec3], indices: &[u32]) {
        let n = positions.len();
        let (mean, max) = self.angles(positions, normals, indices);
        self.sum += mean * n as f64;
        self.count += n;
        self.max_deg = self.max_deg.max(max);
        self.mean_deg = if self.count > 0 {
            self.sum / self.count as f64
        } else {
            0.0
        };
    }

    /// Mean and largest angle between `normals` and the welded area-weighted surface normals.
    fn angles(&self, positions: &[Vec3], normals: &[Vec3], indices: &[u32]) -> (f64, f64) {
        if positions.len() != self.weld.len() || normals.len() != positions.len() {
            return (90.0, 180.0);
        }
        let mut surface = vec![Vec3::ZERO; positions.len()];
        for t in indices.chunks_exact(3) {
            let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
            let (Some(pa), Some(pb), Some(pc)) =
                (positions.get(a), positions.get(b), positions.get(c))
            else {
                continue;
            };
            let f = (*pb - *pa).cross(*pc - *pa);
            for i in [a, b, c] {
                surface[self.weld[i] as usize] += f;
            }
        }
        let (mut sum, mut max) = (0.0f64, 0.0f64);
        for (v, n) in normals.iter().enumerate() {
            let s = surface[self.weld[v] as usize];
            let angle = if s.length_squared() > 0.0 && n.length_squared() > 0.0 {
                (n.normalize().dot(s.normalize()).clamp(-1.0, 1.0) as f64)
                    .acos()
                    .to_degrees()
            } else {
                90.0
            };
            sum += angle;
            max = max.max(angle);
        }
        (sum / normals.len().max(1) as f64, max)
    }
}
