//! LocalToModelJob: local transforms → `model_from_node` matrices in one linear pass
//! (nodes are in depth-first order, so a parent is always done before its children).
//! "Model" space is the glTF scene root, i.e. world space.

use glam::{DMat4, Mat4};

use crate::anim::Pose;
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Validation rules:
/// 1. `pose` has one entry per scene node;
/// 2. every node's parent comes before it (the order `SceneBuilder` makes; a scene whose
///    public fields were edited out of it would otherwise read a parent not yet computed).
pub struct LocalToModelJob<'a> {
    /// The scene whose nodes are transformed.
    pub scene: &'a Scene,
    /// Local transforms per node (index into `scene.nodes`).
    pub pose: &'a Pose,
    /// Receives `model_from_node` for every node (cleared and refilled).
    pub model_from_node: &'a mut Vec<Mat4>,
}

impl LocalToModelJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        if self.pose.locals.len() != self.scene.nodes.len() {
            return Err(Error::job(
                "LocalToModelJob",
                1,
                "pose does not match the scene's node count",
            ));
        }
        let late = |(i, n): (usize, &crate::scene::Node)| n.parent.is_some_and(|p| p >= i);
        if let Some(i) = self.scene.nodes.iter().enumerate().position(late) {
            return Err(Error::job(
                "LocalToModelJob",
                2,
                format!("node {i}'s parent does not come before it"),
            ));
        }
        Ok(())
    }

    /// Validate, then compose every node's local transform with its parent's model matrix
    /// (a `matrix` node uses its fixed matrix).
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let out = &mut *self.model_from_node;
        out.clear();
        for (node, local) in self.scene.nodes.iter().zip(&self.pose.locals) {
            let parent = node.parent.and_then(|p| out.get(p));
            let local = node.matrix.unwrap_or_else(|| local.to_mat4());
            out.push(compose_model(parent, &local, node.matrix.is_some()));
        }
        Ok(())
    }
}

/// A node's `model_from_node`: `model_from_parent · parent_from_node`, or the local matrix
/// alone for a root. A TRS local takes [`mul_affine`]; a node's fixed `matrix` (`fixed`) may
/// have any last row, so it takes glam's full product. (Local→model here and the IK solver's
/// chain updates.)
#[inline]
pub(crate) fn compose_model(
    model_from_parent: Option<&Mat4>,
    parent_from_node: &Mat4,
    fixed: bool,
) -> Mat4 {
    match (model_from_parent, fixed) {
        (Some(p), false) => mul_affine(p, parent_from_node),
        (Some(p), true) => *p * *parent_from_node,
        (None, _) => *parent_from_node,
    }
}

/// `a * b` for a `b` whose last row is (0, 0, 0, 1) (a TRS matrix): glam's product without
/// the terms that multiply by that row's zeros, summed in glam's order, so the same bits but
/// for the sign of a zero sum (`x + 0 = x`, except that `-0 + 0 = +0`). 12 products instead of
/// 16.
#[inline]
fn mul_affine(a: &Mat4, b: &Mat4) -> Mat4 {
    let dir = |c: glam::Vec4| a.x_axis * c.x + a.y_axis * c.y + a.z_axis * c.z;
    Mat4::from_cols(
        dir(b.x_axis),
        dir(b.y_axis),
        dir(b.z_axis),
        dir(b.w_axis) + a.w_axis,
    )
}

/// f64 mirror of [`LocalToModelJob`] for the reference path.
pub fn model_from_node_f64(scene: &Scene, pose: &Pose) -> Vec<DMat4> {
    let mut out: Vec<DMat4> = Vec::with_capacity(scene.nodes.len());
    for (i, node) in scene.nodes.iter().enumerate() {
        let local = node
            .matrix
            .map(|m| m.as_dmat4())
            .unwrap_or_else(|| pose.locals[i].to_dmat4());
        let m = match node.parent {
            Some(p) => out[p] * local,
            None => local,
        };
        out.push(m);
    }
    out
}
