//! A skeleton's two reference poses, and where they disagree.
//!
//! Based on: the glTF 2.0 specification's skinning section (a joint's matrix is its global
//! transform times its inverse bind matrix, so at bind time the joint sat at the inverse of its
//! inverse bind matrix), and three.js's `SkeletonHelper` / PR #28314's rest-and-bind display
//! for debugging retargeting.
//!
//! Method: the **rest** pose is the hierarchy's own node transforms, evaluated with no clip.
//! The **bind** pose places each joint at `M̄ · bind_from_joint⁻¹`, where `M̄` is the
//! element-wise median of its draw's skinning matrices at rest (the mesh's own bind transform,
//! or a scale folded into every inverse bind, shared by every joint of a consistent rig), so a
//! joint whose bind matrix matches the hierarchy sits exactly on its rest place. Non-joint
//! nodes follow their parent's bind pose with their rest local transform. A joint's **gap** is
//! the furthest its bind matrix would move one of its vertices at rest, `|M_j p − M̄ p|`: the
//! measure `check`'s bind-pose finding reports against its threshold.
//! Cost: one rest evaluation and one pass over the skinned vertices' influences. Limits: a
//! joint in several skins takes its first skinned draw's bind matrix.

use glam::Mat4;

use crate::error::Result;
use crate::frame::FrameState;
use crate::scene::Scene;

/// A joint's bind and rest disagree past this share of the model's bounding-box diagonal: a
/// tenth of a millimetre on a 1 m character, above what float round-trips of exported bind
/// matrices leave (about 1e-6) and below any visible offset. `check`'s default threshold and
/// the viewer's marks.
pub const BIND_REST_REL: f64 = 1e-4;

/// Rest and bind `model_from_node`, and per node the bind-versus-rest gap.
#[derive(Clone, Debug, Default)]
pub struct ReferencePoses {
    /// The nodes' own transforms, no clip (model space).
    pub rest: Vec<Mat4>,
    /// Where the inverse bind matrices put each joint (non-joints follow their parent).
    pub bind: Vec<Mat4>,
    /// Whether the node is a joint with a bind matrix (of a skinned draw).
    pub bound: Vec<bool>,
    /// Per node, the furthest its bind matrix would move one of its vertices in the rest pose
    /// (metres; 0 for a node that moves none, or agrees).
    pub gap_m: Vec<f64>,
}

impl ReferencePoses {
    /// Both poses of `scene` and the gaps between them.
    pub fn new(scene: &Scene) -> Result<ReferencePoses> {
        let n = scene.nodes.len();
        let mut frame = FrameState::new(scene);
        frame.evaluate(scene, None, 0.0)?;
        let rest = frame.model_from_node.clone();
        let mut bind: Vec<Option<Mat4>> = vec![None; n];
        let mut gap_m = vec![0f64; n];
        for (di, d) in scene.draws.iter().enumerate() {
            let (Some(skin), Some(w)) = (d.skin, &scene.primitive(d).skin_weights) else {
                continue;
            };
            let skin = &scene.skins[skin];
            let palette = frame.draw_palette(scene, di);
            let Some(shared) = crate::math::elementwise_median(palette) else {
                continue;
            };
            for (j, &node) in skin.joints.iter().enumerate() {
                let placed = skin.joint_from_bind.get(j).map(|m| shared * m.inverse());
                if let (Some(slot), Some(m)) = (bind.get_mut(node), placed)
                    && slot.is_none()
                    && m.is_finite()
                {
                    *slot = Some(m);
                }
            }
            let positions = &scene.primitive(d).positions;
            for (v, p) in positions.iter().enumerate() {
                let slots = v * w.width..(v + 1) * w.width;
                let influences = w.joints[slots.clone()].iter().zip(&w.weights[slots]);
                for (&j, _) in influences.filter(|(_, x)| **x != 0.0) {
                    let (Some(m), Some(&node)) =
                        (palette.get(j as usize), skin.joints.get(j as usize))
                    else {
                        continue;
                    };
                    let e =
                        f64::from((m.transform_point3(*p) - shared.transform_point3(*p)).length());
                    if let Some(g) = gap_m.get_mut(node) {
                        *g = g.max(e);
                    }
                }
            }
        }
        let bound = bind.iter().map(Option::is_some).collect();
        // Parents come first: a non-joint follows its parent's bind place.
        let mut placed = Vec::with_capacity(n);
        for (i, node) in scene.nodes.iter().enumerate() {
            let m = match (bind[i], node.parent) {
                (Some(m), _) => m,
                (None, Some(p)) => {
                    let local = rest[p].inverse() * rest[i];
                    placed[p] * local
                }
                (None, None) => rest[i],
            };
            placed.push(m);
        }
        Ok(ReferencePoses {
            rest,
            bind: placed,
            bound,
            gap_m,
        })
    }

    /// Whether `node`'s bind and rest disagree past [`BIND_REST_REL`] of `diagonal_m`.
    pub fn differs(&self, node: usize, diagonal_m: f64) -> bool {
        self.gap_m
            .get(node)
            .is_some_and(|g| *g > BIND_REST_REL * diagonal_m)
    }
}
