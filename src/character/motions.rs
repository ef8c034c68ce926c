//! What a built character plays, changed between frames: its motion layers replaced (one
//! clip over the whole model, or layers on bone masks), a layer's weight, the cross-fade's
//! times. Building a character is [`super::setup`]'s; playing a frame is
//! [`Character::update`]'s.

use super::{Character, LayerSpec, MAX_LAYERS};
use crate::anim::layer::{CrossFade, track_mask};
use crate::anim::{Pose, SoaClip, SoaState};
use crate::error::{Error, Result};
use crate::scene::Scene;

impl Character {
    /// The motion layers, blended in order.
    pub fn layers(&self) -> &[LayerSpec] {
        &self.layers
    }

    /// Set a layer's weight (≥ 0; read every frame, so no set-up is redone). Unknown layers and
    /// weights that are not finite are ignored.
    pub fn set_layer_weight(&mut self, layer: usize, weight: f32) {
        if let Some(l) = self.layers.get_mut(layer)
            && weight.is_finite()
        {
            l.weight = weight.max(0.0);
        }
    }

    /// Move the cross-fade in time (the layers that take part in one keep their part).
    pub fn set_fade_times(&mut self, fade: CrossFade) {
        for f in self.layers.iter_mut().filter_map(|l| l.fade.as_mut()) {
            f.fade = fade;
        }
    }

    /// Replace the layers with one full-body layer of `anim` (`None`: rest pose), as
    /// [`super::CharacterSetup::clip`] sets up; IK, links and hand-driven bones stay. Set-up time.
    pub fn set_clip(&mut self, anim: Option<usize>, looping: bool) -> Result<()> {
        let layers = match anim {
            None => Vec::new(),
            Some(a) => {
                let clip = self
                    .scene
                    .animations
                    .get(a)
                    .ok_or_else(|| self.scene.unknown_animation(&a.to_string()))?;
                vec![LayerSpec {
                    anim: a,
                    mask: track_mask(&self.scene, clip),
                    weight: 1.0,
                    fade: None,
                    looping,
                }]
            }
        };
        self.set_layers(layers)
    }

    /// Replace the motion layers (at most [`MAX_LAYERS`]); cursors start afresh. Set-up time.
    pub fn set_layers(&mut self, layers: Vec<LayerSpec>) -> Result<()> {
        if layers.len() > MAX_LAYERS {
            return Err(Error::TooManyLayers {
                count: layers.len(),
                max: MAX_LAYERS,
            });
        }
        for l in &layers {
            if l.anim >= self.scene.animations.len() || l.mask.len() != self.scene.nodes.len() {
                return Err(self.scene.unknown_animation(&l.anim.to_string()));
            }
        }
        let pose = Pose::rest(&self.scene);
        self.layer_poses = layers.iter().map(|_| pose.clone()).collect();
        self.clips = compile_layers(&self.scene, &layers)?;
        self.layers = layers;
        Ok(())
    }
}

/// Each layer's motion compiled for four-lane sampling, with a fresh playback state.
pub(super) fn compile_layers(
    scene: &Scene,
    layers: &[LayerSpec],
) -> Result<Vec<(SoaClip, SoaState)>> {
    layers
        .iter()
        .map(|l| {
            let anim = scene
                .animations
                .get(l.anim)
                .ok_or_else(|| scene.unknown_animation(&l.anim.to_string()))?;
            let clip = SoaClip::new(scene, anim)?;
            let state = SoaState::new(&clip);
            Ok((clip, state))
        })
        .collect()
}
