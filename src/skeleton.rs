//! LocalToModelJob: local transforms → `model_from_node` matrices in one linear pass
//! (nodes are in depth-first order, so a parent is always done before its children).
//! "Model" space is the glTF scene root, i.e. world space.

use glam::{DMat4, Mat4};

use crate::anim::Pose;
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Validation rules:
/// 1. `pose` and `model_from_node` have one entry per scene node.
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
        Ok(())
    }

    /// Validate, then compose every node's local transform with its parent's model matrix
    /// (a `matrix` node uses its fixed matrix).
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let out = &mut *self.model_from_node;
        out.clear();
        for (i, node) in self.scene.nodes.iter().enumerate() {
            let parent_from_node = node.matrix.unwrap_or_else(|| self.pose.locals[i].to_mat4());
            let m = match node.parent {
                Some(p) => out[p] * parent_from_node,
                None => parent_from_node,
            };
            out.push(m);
        }
        Ok(())
    }
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
