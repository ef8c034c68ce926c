//! AnimateJob: sample an animation at a time into a pose (local TRS + morph weights per node).

use glam::{Quat, Vec3};

use super::{Animation, Cursor, Path};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::Scene;

/// Local transforms and morph weights of every node of a scene.
#[derive(Clone, Debug, Default)]
pub struct Pose {
    /// Local transform per node (index into `scene.nodes`).
    pub locals: Vec<Trs>,
    /// Per node: current morph weights (empty for nodes without a morphed mesh).
    pub morph_weights: Vec<Vec<f32>>,
}

impl Pose {
    /// The rest pose: node TRS, and `node.weights` over `mesh.weights` over zeros.
    pub fn rest(scene: &Scene) -> Pose {
        let mut pose = Pose::default();
        pose.reset(scene);
        pose
    }

    /// Reset to the rest pose without reallocating.
    pub fn reset(&mut self, scene: &Scene) {
        self.locals.clear();
        self.locals.extend(scene.nodes.iter().map(|n| n.rest));
        self.reset_morph_weights(scene);
    }

    /// Reset the morph weights to rest (`node.weights` over `mesh.weights` over zeros) and
    /// size them to the scene, leaving the local transforms alone.
    pub fn reset_morph_weights(&mut self, scene: &Scene) {
        self.morph_weights.resize(scene.nodes.len(), Vec::new());
        // Most scenes have no morph targets: every list is emptied without reading the nodes.
        if scene.meshes.iter().all(|m| m.morph_target_count() == 0) {
            self.morph_weights.iter_mut().for_each(Vec::clear);
            return;
        }
        for (w, node) in self.morph_weights.iter_mut().zip(&scene.nodes) {
            w.clear();
            if let Some(m) = node.mesh {
                let mesh = &scene.meshes[m];
                let count = mesh.morph_target_count();
                let src = node
                    .morph_weights
                    .as_deref()
                    .unwrap_or(&mesh.default_morph_weights);
                w.extend((0..count).map(|i| src.get(i).copied().unwrap_or(0.0)));
            }
        }
    }
}

/// Samples `animation` at `time_s` on top of the rest pose.
///
/// Validation rules:
/// 1. `cursors.len()` equals the animation's channel count;
/// 2. `pose` was made for this scene (one entry per node);
/// 3. `time_s` is finite.
pub struct AnimateJob<'a> {
    /// The scene the pose belongs to.
    pub scene: &'a Scene,
    /// Animation to sample; `None` leaves the rest pose.
    pub animation: Option<&'a Animation>,
    /// Sample time in seconds; outside a channel's key range its first or last value is held.
    pub time_s: f32,
    /// One cursor per channel, kept between calls for cheap forward playback.
    pub cursors: &'a mut [Cursor],
    /// Receives the rest pose with the animated properties overwritten.
    pub pose: &'a mut Pose,
}

impl AnimateJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        let channels = self.animation.map_or(0, |a| a.channels.len());
        if self.cursors.len() != channels {
            return Err(Error::job(
                "AnimateJob",
                1,
                format!("{} cursors for {channels} channels", self.cursors.len()),
            ));
        }
        if self.pose.locals.len() != self.scene.nodes.len()
            || self.pose.morph_weights.len() != self.scene.nodes.len()
        {
            return Err(Error::job(
                "AnimateJob",
                2,
                "pose does not match the scene's node count",
            ));
        }
        if !self.time_s.is_finite() {
            return Err(Error::job(
                "AnimateJob",
                3,
                format!("time {} is not finite", self.time_s),
            ));
        }
        Ok(())
    }

    /// Validate, then reset `pose` to rest and sample every channel into it.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        self.pose.reset(self.scene);
        let Some(anim) = self.animation else {
            return Ok(());
        };
        let mut buf = [0.0f32; 4];
        for (ch, cursor) in anim.channels.iter().zip(self.cursors.iter_mut()) {
            let s = &ch.sampler;
            let local = &mut self.pose.locals[ch.node];
            match ch.path {
                Path::Translation => {
                    s.sample(self.time_s, cursor, &mut buf[..3]);
                    local.translation = Vec3::from_slice(&buf[..3]);
                }
                Path::Scale => {
                    s.sample(self.time_s, cursor, &mut buf[..3]);
                    local.scale = Vec3::from_slice(&buf[..3]);
                }
                Path::Rotation => {
                    s.sample(self.time_s, cursor, &mut buf);
                    local.rotation = Quat::from_xyzw(buf[0], buf[1], buf[2], buf[3]);
                }
                Path::Weights => {
                    // Sampled straight into the pose (no allocation); the importer sized the
                    // channel to the mesh's target count.
                    let w = &mut self.pose.morph_weights[ch.node];
                    if w.len() >= s.components {
                        s.sample(self.time_s, cursor, &mut w[..]);
                    }
                }
            }
        }
        Ok(())
    }
}
