//! How far a joint's turn reaches on the skin: per node, the largest distance, in the bind
//! pose, from the joint to a vertex that it or a joint below it moves.
//!
//! Based on: ACL's virtual-vertex error (Frechette, "Animation Compression Library": a bone's
//! error measured at a shell distance from it) and its Unreal plug-in deriving that distance
//! from the bind-pose mesh, here taken per joint from the vertices its subtree moves, so a
//! rotation error θ at the joint moves no vertex by more than θ × reach. Cost: one pass over the
//! influences and one up each joint's ancestors. Limits: the bind pose's distances (a joint's
//! translation error moves a vertex by at most the error itself, whatever the reach).

use glam::Vec3;

use crate::scene::Scene;

/// Per node of `scene`: the reach (in the skin's bind space, where the vertices are and where
/// each joint's inverse bind matrix puts it); 0 for a node that moves no vertex.
pub fn joint_reach(scene: &Scene) -> Vec<f32> {
    let n = scene.nodes.len();
    let mut reach = vec![0f32; n];
    for d in &scene.draws {
        let (Some(skin), Some(w)) = (d.skin, &scene.primitive(d).skin_weights) else {
            continue;
        };
        let skin = &scene.skins[skin];
        // Per node, its joint index in this skin; per joint, its bind place.
        let mut joint_of = vec![None; n];
        for (k, &j) in skin.joints.iter().enumerate() {
            if let Some(slot) = joint_of.get_mut(j) {
                *slot = Some(k);
            }
        }
        let places: Vec<Vec3> = skin
            .joint_from_bind
            .iter()
            .map(|m| m.inverse().w_axis.truncate())
            .collect();
        for (v, p) in scene.primitive(d).positions.iter().enumerate() {
            let slots = v * w.width..(v + 1) * w.width;
            let moved_by = w.joints[slots.clone()].iter().zip(&w.weights[slots]);
            for (&j, _) in moved_by.filter(|(_, x)| **x > 0.0) {
                // The joint and every ancestor that is a joint of this skin.
                let mut at = skin.joints.get(j as usize).copied();
                while let Some(a) = at {
                    if let Some(o) = joint_of[a].and_then(|k| places.get(k)) {
                        reach[a] = reach[a].max(p.distance(*o));
                    }
                    at = scene.nodes[a].parent;
                }
            }
        }
    }
    reach
}
