//! Joint limits and IK chains as overlay geometry: each limited joint's ZYX Euler box as three
//! arcs about its reference frame's axes (Z and Y swing the bone, X twists it), the current
//! angles on them, an arc turning red while its angle sits on a bound (the solver clamps it
//! there), and each effector's chain with its weight.
//!
//! The arcs follow the decomposition [`crate::ik::limits`] clamps in: `q = q_ref · Rz(z) ·
//! Ry(y) · Rx(x)`, so the Z arc is the bone's direction swept about the reference Z, the Y arc
//! the direction swept about Y after the current Z, and the X arc the bone's Y axis swept about
//! the bone after the current Z and Y.

use glam::{Quat, Vec3};

use crate::character::Character;
use crate::gpu::OverlayGeometry;
use crate::ik::{JointLimits, to_euler_zyx};

/// An angle within this of a bound sits on it (radians; the clamp lands exactly on it, and
/// float round trips through the pose leave well under this).
pub const AT_BOUND_RAD: f32 = 1e-3;
/// Segments per arc: smooth at the sizes joints are drawn.
const ARC_SEGMENTS: usize = 24;
/// Arc colours per axis `[z, y, x]` (linear RGBA): the axis colours, paled.
const ARC_COLORS: [[f32; 4]; 3] = [
    [0.55, 0.7, 1.0, 0.9],
    [0.55, 1.0, 0.6, 0.9],
    [1.0, 0.6, 0.6, 0.9],
];
/// An arc whose angle sits on a bound.
pub const CLAMPED_COLOR: [f32; 4] = [1.0, 0.08, 0.05, 1.0];
/// An effector's chain at weight 1 (fainter as the weight falls).
pub const CHAIN_COLOR: [f32; 3] = [1.0, 0.85, 0.1];

/// One limited joint as drawn.
#[derive(Clone, Copy, Debug)]
pub struct LimitedJoint {
    /// Its node.
    pub node: usize,
    /// Its position (model space).
    pub at: Vec3,
    /// The model rotation of its reference frame (parent's model rotation × reference local).
    pub model_from_reference: Quat,
    /// Its box, `[z, y, x]`.
    pub limits: JointLimits,
    /// Its current angles relative to the reference, `[z, y, x]` (radians).
    pub angles_rad: [f32; 3],
    /// Per axis, whether the angle sits on a bound of a range narrower than the full turn.
    pub at_bound: [bool; 3],
    /// The arcs' radius (metres).
    pub radius_m: f32,
}

/// The limited joints of `character`'s IK chains, and `extra` (the selected joint) when
/// limited: where they are and where their angles sit. `radius_m(node)`: each one's arc size.
pub fn limited_joints(
    character: &Character,
    extra: Option<usize>,
    radius_m: &dyn Fn(usize) -> f32,
) -> Vec<LimitedJoint> {
    let Some(ik) = &character.ik else {
        return Vec::new();
    };
    let scene = &character.scene;
    let mut nodes: Vec<usize> = Vec::new();
    for e in &ik.effectors {
        let mut n = Some(e.end_node);
        for _ in 0..e.chain_length {
            let Some(node) = n else { break };
            nodes.push(node);
            n = scene.nodes.get(node).and_then(|x| x.parent);
        }
    }
    nodes.extend(extra);
    nodes.sort_unstable();
    nodes.dedup();
    let (reference, locals) = (character.reference_pose(), &character.frame.pose.locals);
    let model = &character.frame.model_from_node;
    nodes
        .into_iter()
        .filter_map(|node| {
            let limits = (*ik.limits.get(node)?)?;
            let parent_rotation = scene.nodes[node]
                .parent
                .and_then(|p| model.get(p))
                .map_or(Quat::IDENTITY, |m| m.to_scale_rotation_translation().1);
            let q_ref = reference.get(node)?.rotation;
            let q_rel = q_ref.inverse() * locals.get(node)?.rotation;
            let angles_rad = to_euler_zyx(q_rel);
            let at_bound = std::array::from_fn(|i| {
                let (lo, hi) = (limits.min_rad[i], limits.max_rad[i]);
                hi - lo < std::f32::consts::TAU - AT_BOUND_RAD
                    && ((angles_rad[i] - lo).abs() < AT_BOUND_RAD
                        || (angles_rad[i] - hi).abs() < AT_BOUND_RAD)
            });
            Some(LimitedJoint {
                node,
                at: model.get(node)?.w_axis.truncate(),
                model_from_reference: (parent_rotation * q_ref).normalize(),
                limits,
                angles_rad,
                at_bound,
                radius_m: radius_m(node),
            })
        })
        .collect()
}

/// Add each joint's three arcs (red where its angle sits on a bound), the current direction
/// on each and a ball where the angle is, to `g`.
pub fn draw_limits(joints: &[LimitedJoint], g: &mut OverlayGeometry) {
    for j in joints {
        let [z, y, _] = j.angles_rad;
        let r = j.model_from_reference;
        // Per axis: the swept direction at angle θ, and the arc's radius.
        let sweep: [(&dyn Fn(f32) -> Vec3, f32); 3] = [
            (&|t| r * (Quat::from_rotation_z(t) * Vec3::X), j.radius_m),
            (
                &|t| r * (Quat::from_rotation_z(z) * Quat::from_rotation_y(t) * Vec3::X),
                j.radius_m * 0.85,
            ),
            (
                &|t| {
                    r * (Quat::from_rotation_z(z)
                        * Quat::from_rotation_y(y)
                        * Quat::from_rotation_x(t)
                        * Vec3::Y)
                },
                j.radius_m * 0.5,
            ),
        ];
        for (axis, (dir, radius)) in sweep.iter().enumerate() {
            let color = match j.at_bound[axis] {
                true => CLAMPED_COLOR,
                false => ARC_COLORS[axis],
            };
            let (lo, hi) = (
                j.limits.min_rad[axis].max(-std::f32::consts::PI),
                j.limits.max_rad[axis].min(std::f32::consts::PI),
            );
            let point = |t: f32| j.at + dir(t) * *radius;
            let mut last = point(lo);
            // The bounds as spokes, the range as the arc between them.
            g.line(j.at, last, color, true);
            for k in 1..=ARC_SEGMENTS {
                let p = point(lo + (hi - lo) * k as f32 / ARC_SEGMENTS as f32);
                g.line(last, p, color, true);
                last = p;
            }
            g.line(j.at, last, color, true);
            let now = point(j.angles_rad[axis]);
            super::skeleton::sphere(now, j.radius_m * 0.06, &|_| color, g);
        }
    }
}

/// Add each effector's chain (its joints, then the tip) to `g`, brighter the heavier its
/// weight; returns each effector's tip and weight (for labels).
pub fn draw_chains(character: &Character, g: &mut OverlayGeometry) -> Vec<(Vec3, f32)> {
    let Some(ik) = &character.ik else {
        return Vec::new();
    };
    let model = &character.frame.model_from_node;
    let scene = &character.scene;
    let mut tips = Vec::new();
    for e in &ik.effectors {
        let Some(end) = model.get(e.end_node) else {
            continue;
        };
        let tip = end.transform_point3(e.tip_local);
        let w = e.weight.clamp(0.0, 1.0);
        let color = [
            CHAIN_COLOR[0],
            CHAIN_COLOR[1],
            CHAIN_COLOR[2],
            0.3 + 0.7 * w,
        ];
        let (mut from, mut n) = (tip, Some(e.end_node));
        for _ in 0..e.chain_length {
            let Some((node, m)) = n.and_then(|n| Some((n, model.get(n)?))) else {
                break;
            };
            let at = m.w_axis.truncate();
            g.line(from, at, color, true);
            from = at;
            n = scene.nodes.get(node).and_then(|x| x.parent);
        }
        tips.push((tip, e.weight));
    }
    tips
}
