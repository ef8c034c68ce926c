//! The skeleton overlay: bones drawn along their length as Blender-style octahedra, joint axes
//! (X red, Y green, Z blue), the selected bone highlighted; and the same bone list for picking.
//!
//! Method: a bone is the segment from a joint to each child joint (glTF joints are points). A
//! leaf joint gets a tail: along its own +X by its length when the rig says (Weber's native
//! rigs), else half its parent bone's length onward. Joint axes are the columns of
//! `model_from_node`, normalised, at a quarter of the shortest bone near them. Cost: O(joints)
//! per frame, into reused vectors.

use glam::{Mat4, Vec3};

use crate::gpu::OverlayGeometry;
use crate::scene::Scene;

/// One displayed bone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bone {
    /// The node the bone belongs to (its head joint; what clicking it selects).
    pub node: usize,
    /// Head position (world).
    pub head: Vec3,
    /// Tail position (world): the child joint, or the leaf's tip.
    pub tail: Vec3,
}

/// Bone colour (linear RGBA): a saturated mid blue, apart from skin tones and textures.
pub const BONE_COLOR: [f32; 4] = [0.12, 0.25, 0.75, 0.9];
/// The selected bone: orange, as in Blender.
pub const SELECTED_COLOR: [f32; 4] = [1.0, 0.55, 0.1, 0.95];

/// Joints of every skin, as a per-node flag.
pub fn joint_flags(scene: &Scene) -> Vec<bool> {
    let mut is_joint = vec![false; scene.nodes.len()];
    for s in &scene.skins {
        for &j in &s.joints {
            if let Some(f) = is_joint.get_mut(j) {
                *f = true;
            }
        }
    }
    is_joint
}

/// The bones of the current pose into `out` (cleared). `tips`: per node, the leaf tip in the
/// node's own space when known (native rigs: `(length, 0, 0)`). `has_child` is scratch (one
/// flag per node, reused).
pub fn bones(
    scene: &Scene,
    is_joint: &[bool],
    model_from_node: &[Mat4],
    tips: Option<&[Option<Vec3>]>,
    has_child: &mut Vec<bool>,
    out: &mut Vec<Bone>,
) {
    out.clear();
    has_child.clear();
    has_child.resize(scene.nodes.len(), false);
    let n_nodes = scene
        .nodes
        .len()
        .min(model_from_node.len())
        .min(is_joint.len());
    let pos = |n: usize| model_from_node[n].w_axis.truncate();
    for (n, node) in scene.nodes.iter().enumerate().take(n_nodes) {
        if let Some(p) = node.parent
            && is_joint[n]
            && is_joint[p]
        {
            has_child[p] = true;
            out.push(Bone {
                node: p,
                head: pos(p),
                tail: pos(n),
            });
        }
    }
    for (n, node) in scene.nodes.iter().enumerate().take(n_nodes) {
        if !is_joint[n] || has_child[n] {
            continue;
        }
        let tip = tips.and_then(|t| t.get(n).copied().flatten());
        let tail = match (tip, node.parent.filter(|&p| is_joint[p])) {
            (Some(t), _) => model_from_node[n].transform_point3(t),
            (None, Some(p)) => pos(n) + (pos(n) - pos(p)) * 0.5,
            (None, None) => continue,
        };
        if tail.distance(pos(n)) > 0.0 {
            out.push(Bone {
                node: n,
                head: pos(n),
                tail,
            });
        }
    }
}

/// Add the bones (octahedra, in front of the mesh) and joint axes to `g`.
pub fn draw(
    bones: &[Bone],
    model_from_node: &[Mat4],
    selected: Option<usize>,
    light: Vec3,
    g: &mut OverlayGeometry,
) {
    for b in bones {
        let axis = b.tail - b.head;
        let len = axis.length();
        if !(len.is_finite() && len > 0.0) {
            continue;
        }
        let d = axis / len;
        let u = d.any_orthonormal_vector();
        let v = d.cross(u);
        let w = 0.1 * len;
        let mid = b.head + d * (0.15 * len);
        let ring = [mid + u * w, mid + v * w, mid - u * w, mid - v * w];
        let base = if Some(b.node) == selected {
            SELECTED_COLOR
        } else {
            BONE_COLOR
        };
        for k in 0..4 {
            let (r0, r1) = (ring[k], ring[(k + 1) % 4]);
            for apex in [b.head, b.tail] {
                let n = (r0 - apex).cross(r1 - apex).normalize_or_zero();
                // Faceted shading from the key light, either side.
                let shade = 0.55 + 0.45 * n.dot(light).abs();
                let c = [base[0] * shade, base[1] * shade, base[2] * shade, base[3]];
                g.triangle([apex, r0, r1], c, true);
            }
            g.line(r0, r1, [0.05, 0.05, 0.08, 0.9], true);
        }
        g.line(b.head, b.tail, [0.05, 0.05, 0.08, 0.9], true);
    }
    // Joint axes at every bone head, a quarter of the bone long.
    for b in bones {
        let len = (b.tail - b.head).length() * 0.25;
        let m = &model_from_node[b.node];
        let o = b.head;
        for (axis, color) in [
            (m.x_axis.truncate(), [0.95, 0.2, 0.2, 1.0]),
            (m.y_axis.truncate(), [0.2, 0.9, 0.25, 1.0]),
            (m.z_axis.truncate(), [0.25, 0.45, 1.0, 1.0]),
        ] {
            g.line(o, o + axis.normalize_or_zero() * len, color, true);
        }
    }
}
