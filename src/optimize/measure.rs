//! The worst skinned-vertex distance between a character and another version of it (same
//! meshes, vertex for vertex: an optimised copy), playing a clip of each at the same times.
//!
//! Based on: `skinview diff`'s measure (the distance between paired skinned vertices), here
//! with the pairing by index that an optimiser's output keeps. Cost: two CPU skinnings a time.
//! Limits: the two scenes must have the same draws and vertex counts (checked).

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
pub fn worst_error(
    (a, clip_a): (&Scene, usize),
    (b, clip_b): (&Scene, usize),
    times: &[f32],
) -> Result<WorstError> {
    let same = a.draws.len() == b.draws.len()
        && a.draws
            .iter()
            .zip(&b.draws)
            .all(|(x, y)| a.primitive(x).positions.len() == b.primitive(y).positions.len());
    if !same {
        return Err(Error::invalid(
            &b.name,
            "meshes",
            format!("its draws or vertex counts differ from {}'s", a.name),
        ));
    }
    let (mut fa, mut fb) = (FrameState::new(a), FrameState::new(b));
    let (mut sa, mut sb) = (CpuSkinner::new(a, None), CpuSkinner::new(b, None));
    let mut worst = WorstError::default();
    for &t in times {
        fa.evaluate(a, Some(clip_a), t)?;
        fb.evaluate(b, Some(clip_b), t)?;
        let (va, vb) = (sa.skin_all(a, &fa)?, sb.skin_all(b, &fb)?);
        for (draw, (x, y)) in va.iter().zip(&vb).enumerate() {
            for (vertex, (p, q)) in x.positions.iter().zip(&y.positions).enumerate() {
                let d = Vec3::distance(*p, *q);
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
