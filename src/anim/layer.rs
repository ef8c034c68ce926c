//! LayerJob: several sampled motions drawn onto one skeleton through per-bone masks.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Applying Motion to Bones ("a running motion
//! on the lower body and a throwing motion on the upper body"); the weight threshold below
//! which the reference pose fills in, as ozz-animation's blending job (Guillaume Blanc) has it.
//!
//! Method: per bone, each layer contributes with `layer.weight × mask[bone]`; translations and
//! scales are averaged by weight, rotations by a normalised weighted sum of quaternions, each
//! flipped into the first contributor's hemisphere (nlerp; exact for two layers up to the
//! usual nlerp speed distortion, and order-independent); a bone with a single contributor takes
//! it unchanged. When a bone's total weight is below `threshold` the reference pose fills the
//! rest (so bones no motion drives stay at reference, where IK or code may take them). Masks:
//! [`BoneMask`] builds them from subtrees; [`track_mask`] marks the bones a motion has tracks
//! for; [`CrossFade`] gives the two weights of a timed cross-fade.
//!
//! Cost: O(bones × layers), no allocation.
//!
//! Limits: layers replace in proportion to their weights (no additive layers); nlerp's speed
//! distortion grows with the angle between the layers' rotations; scales are averaged
//! linearly.

use glam::{Quat, Vec3, Vec4};

use super::Animation;
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::Scene;

/// One layer: a sampled pose, a global weight and an optional per-bone mask (0..1).
#[derive(Clone, Copy, Debug)]
pub struct Layer<'a> {
    /// Local transform per bone (index = scene node).
    pub pose: &'a [Trs],
    /// Global weight of the layer (≥ 0).
    pub weight: f32,
    /// Per-bone weight in 0..1 multiplying `weight`; `None` = 1 on every bone.
    pub mask: Option<&'a [f32]>,
}

/// Validation rules:
/// 1. every layer pose and the output have as many bones as `reference`;
/// 2. masks, when given, have one weight per bone;
/// 3. layer weights, mask weights and `threshold` are finite and non-negative, threshold > 0.
pub struct LayerJob<'a> {
    /// Reference locals, one per bone: they make up the weight where the layers' total is below
    /// `threshold`.
    pub reference: &'a [Trs],
    /// Layers to blend.
    pub layers: &'a [Layer<'a>],
    /// Below this total weight the reference pose makes up the difference.
    pub threshold: f32,
    /// Receives the blended locals, one per bone.
    pub output: &'a mut [Trs],
}

/// Default threshold: a bone needs at least this much total layer weight to leave the
/// reference pose entirely (ozz-animation uses the same kind of threshold, 0.1).
pub const DEFAULT_THRESHOLD: f32 = 0.1;

impl LayerJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        let n = self.reference.len();
        if self.output.len() != n || self.layers.iter().any(|l| l.pose.len() != n) {
            return Err(Error::job(
                "LayerJob",
                1,
                "layer poses and output must have one transform per bone",
            ));
        }
        if self
            .layers
            .iter()
            .any(|l| l.mask.is_some_and(|m| m.len() != n))
        {
            return Err(Error::job(
                "LayerJob",
                2,
                "a mask must have one weight per bone",
            ));
        }
        // Branch-free counts (they vectorise: this runs every frame). `0 ≤ w ≤ f32::MAX` is
        // finite and non-negative (NaN is in no range).
        let good = |w: f32| (0.0..=f32::MAX).contains(&w);
        let all_good = |ws: &[f32]| ws.iter().filter(|&&w| !good(w)).count() == 0;
        let threshold_ok = self.threshold > 0.0 && self.threshold.is_finite();
        let layers_ok = self
            .layers
            .iter()
            .all(|l| good(l.weight) && l.mask.is_none_or(all_good));
        if !(threshold_ok && layers_ok) {
            return Err(Error::job(
                "LayerJob",
                3,
                "weights must be finite and non-negative, threshold positive",
            ));
        }
        Ok(())
    }

    /// Validate, then blend the layers bone by bone into `output`.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        for (b, out) in self.output.iter_mut().enumerate() {
            let weight = |l: &Layer| l.weight * l.mask.map_or(1.0, |m| m[b]);
            // What the blend below returns unchanged, found first: a bone no layer covers takes
            // the reference; one covered by a single layer at or above the threshold takes
            // that layer's transform as sampled.
            let mut single = None;
            let mut covering = 0u32;
            for l in self.layers {
                let w = weight(l);
                if w > 0.0 {
                    covering += 1;
                    single = Some((l, w));
                }
            }
            match (covering, single) {
                (0, _) => {
                    *out = self.reference[b];
                    continue;
                }
                (1, Some((l, w))) if w >= self.threshold => {
                    *out = l.pose[b];
                    continue;
                }
                _ => {}
            }
            let mut acc = Accumulator::default();
            for l in self.layers {
                acc.add(&l.pose[b], weight(l));
            }
            if acc.total < self.threshold {
                acc.add(&self.reference[b], self.threshold - acc.total);
            }
            *out = acc.finish(&self.reference[b]);
        }
        Ok(())
    }
}

/// Weighted sums of one bone's contributions.
#[derive(Default)]
struct Accumulator {
    total: f32,
    /// Contributors so far, and the first one: a bone with one contributor at full weight
    /// takes its transform unchanged (the average of one sample is itself; its rotation is
    /// not renormalised, so a clip with slightly non-unit keys plays as sampled).
    count: u32,
    first: Trs,
    translation: Vec3,
    scale: Vec3,
    rotation: Vec4,
    hemisphere: Option<Vec4>,
}

impl Accumulator {
    #[inline]
    fn add(&mut self, x: &Trs, w: f32) {
        if w <= 0.0 {
            return;
        }
        if self.count == 0 {
            self.first = *x;
        }
        self.count += 1;
        let q = Vec4::from(x.rotation);
        let h = *self.hemisphere.get_or_insert(q);
        self.rotation += if h.dot(q) < 0.0 { -q } else { q } * w;
        self.translation += x.translation * w;
        self.scale += x.scale * w;
        self.total += w;
    }

    #[inline]
    fn finish(&self, reference: &Trs) -> Trs {
        if self.total <= 0.0 {
            return *reference;
        }
        if self.count == 1 {
            return self.first;
        }
        let rot = Quat::from_vec4(self.rotation);
        let len = rot.length();
        Trs {
            translation: self.translation / self.total,
            rotation: if len > 0.0 {
                rot / len
            } else {
                reference.rotation
            },
            scale: self.scale / self.total,
        }
    }
}

/// Per-bone masks from subtrees of the scene.
pub struct BoneMask;

impl BoneMask {
    /// 1 on `root` and every descendant, 0 elsewhere.
    pub fn subtree(scene: &Scene, root: usize) -> Vec<f32> {
        let mut m = vec![0.0; scene.nodes.len()];
        if root < m.len() {
            m[root] = 1.0;
            // Depth-first order: a descendant always comes after its parent.
            for i in root + 1..scene.nodes.len() {
                if let Some(p) = scene.nodes[i].parent
                    && m[p] > 0.0
                {
                    m[i] = 1.0;
                }
            }
        }
        m
    }

    /// `1 - other` (e.g. the lower body as "everything but the upper body").
    pub fn invert(mask: &[f32]) -> Vec<f32> {
        mask.iter().map(|w| 1.0 - w).collect()
    }
}

/// 1 on bones `anim` has a track for, 0 on the rest: bones a motion does not drive must not
/// pull their layer's weight towards its (reference) value.
pub fn track_mask(scene: &Scene, anim: &Animation) -> Vec<f32> {
    let mut m = vec![0.0; scene.nodes.len()];
    for c in &anim.channels {
        if let Some(x) = m.get_mut(c.node) {
            *x = 1.0;
        }
    }
    m
}

/// A cross-fade from motion A to motion B starting at `start_s` over `duration_s`
/// (smoothstep ramp).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossFade {
    /// Time the fade starts, in seconds.
    pub start_s: f32,
    /// Length of the fade in seconds (≤ 0 = an instant switch at `start_s`).
    pub duration_s: f32,
}

impl CrossFade {
    /// Weights (A, B) at `time_s`; they always sum to 1.
    pub fn weights(&self, time_s: f32) -> (f32, f32) {
        let u = if self.duration_s > 0.0 {
            ((time_s - self.start_s) / self.duration_s).clamp(0.0, 1.0)
        } else if time_s >= self.start_s {
            1.0
        } else {
            0.0
        };
        let b = u * u * (3.0 - 2.0 * u);
        (1.0 - b, b)
    }
}
