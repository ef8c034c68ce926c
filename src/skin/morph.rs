//! MorphJob: morph targets (blend shapes) applied before skinning.
//!
//! Based on: Marschner, "Real time geometric deformations" (blend shapes), and the glTF 2.0
//! specification's morph targets (Khronos Group).
//!
//! Method: `attr' = attr + Σ_t w_t · delta_t` for positions, normals and tangents (xyz, the
//! handedness `w` kept), targets with a zero weight skipped.
//!
//! Cost: O(vertices × non-zero targets).
//!
//! Limits: normals and tangents come out as summed, not renormalised; the deltas add linearly,
//! so a target that turns a part (an eyelid closing) shortens it on the way.

use glam::{Vec3, Vec4};

use crate::error::{Error, Result};
use crate::scene::Primitive;

/// Validation rules:
/// 1. every weight is finite (targets without a weight get 0, extra weights are ignored);
/// 2. outputs have the primitive's vertex count, and normals/tangents are given exactly when
///    the primitive has them.
pub struct MorphJob<'a> {
    /// Primitive whose base attributes and morph targets are blended.
    pub primitive: &'a Primitive,
    /// Weight per morph target, in target order; targets past the end count as 0.
    pub weights: &'a [f32],
    /// Receives the morphed positions (cleared and refilled).
    pub out_positions: &'a mut Vec<Vec3>,
    /// Receives the morphed normals (not renormalised); `Some` exactly when the primitive has
    /// normals.
    pub out_normals: Option<&'a mut Vec<Vec3>>,
    /// Receives the morphed tangents (xyz morphed, handedness `w` kept); `Some` exactly when the
    /// primitive has tangents.
    pub out_tangents: Option<&'a mut Vec<Vec4>>,
}

impl MorphJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        if let Some(i) = self.weights.iter().position(|w| !w.is_finite()) {
            return Err(Error::job(
                "MorphJob",
                1,
                format!("morph weight {i} is not finite"),
            ));
        }
        if self.primitive.normals.is_some() != self.out_normals.is_some()
            || self.primitive.tangents.is_some() != self.out_tangents.is_some()
        {
            return Err(Error::job(
                "MorphJob",
                2,
                "output attributes do not match the primitive's",
            ));
        }
        Ok(())
    }

    /// Validate, then write the base attributes plus the weighted target offsets to the outputs.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let p = self.primitive;
        self.out_positions.clear();
        self.out_positions.extend_from_slice(&p.positions);
        if let (Some(o), Some(src)) = (self.out_normals.as_deref_mut(), p.normals.as_ref()) {
            o.clear();
            o.extend_from_slice(src);
        }
        if let (Some(o), Some(src)) = (self.out_tangents.as_deref_mut(), p.tangents.as_ref()) {
            o.clear();
            o.extend_from_slice(src);
        }
        for (target, &w) in p.morph_targets.iter().zip(self.weights) {
            if w == 0.0 {
                continue;
            }
            if let Some(d) = &target.positions {
                for (o, d) in self.out_positions.iter_mut().zip(d) {
                    *o += *d * w;
                }
            }
            if let (Some(o), Some(d)) = (self.out_normals.as_deref_mut(), target.normals.as_ref()) {
                for (o, d) in o.iter_mut().zip(d) {
                    *o += *d * w;
                }
            }
            if let (Some(o), Some(d)) = (self.out_tangents.as_deref_mut(), target.tangents.as_ref())
            {
                for (o, d) in o.iter_mut().zip(d) {
                    *o += (*d * w).extend(0.0);
                }
            }
        }
        Ok(())
    }
}
