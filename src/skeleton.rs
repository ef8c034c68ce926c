//! LocalToModelJob: local transforms → `model_from_node` matrices in one linear pass
//! (nodes are in depth-first order, so a parent is always done before its children).
//! "Model" space is the glTF scene root, i.e. world space.
//!
//! Based on: the glTF 2.0 specification's node hierarchy (Khronos Group: a node's matrix is its
//! parent's times its local TRS or fixed matrix), in the shape of ozz-animation's local-to-model
//! job (Guillaume Blanc): one pass over joints stored parents first.
//!
//! Method: each node's local transform (or its fixed `matrix`) is composed with its parent's
//! model matrix, in node order; a TRS local, whose last row is (0, 0, 0, 1), takes an affine
//! product of 12 multiplies instead of 16. TRS locals become matrices four at a time, one a
//! lane (glam's operations in lanes: the same bits as one at a time).
//!
//! Cost: O(nodes), one matrix product each, no allocation once the output has grown.
//!
//! Limits: every node is recomputed each call (no update of one subtree); parents must come
//! before their children (checked); f32 throughout (the f64 mirror is for the reference path).

use glam::{DMat4, Mat4, Vec4};

use crate::anim::Pose;
use crate::error::{Error, Result};
use crate::math::Trs;
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
        self.check_sizes()?;
        let late = |(i, n): (usize, &crate::scene::Node)| n.parent.is_some_and(|p| p >= i);
        match self.scene.nodes.iter().enumerate().position(late) {
            Some(i) => Err(late_parent(i)),
            None => Ok(()),
        }
    }

    /// Rule 1.
    fn check_sizes(&self) -> Result<()> {
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
    /// (a `matrix` node uses its fixed matrix). Rule 2 is checked as the pass goes, so the
    /// nodes are read once: a parent not yet computed stops it with the rule's error (the same
    /// as `validate`'s) and `model_from_node` left empty.
    pub fn run(&mut self) -> Result<()> {
        self.check_sizes()?;
        let (nodes, locals) = (&self.scene.nodes[..], &self.pose.locals[..]);
        let out = &mut *self.model_from_node;
        #[cfg(target_arch = "x86_64")]
        if crate::math::avx2_fma_available() {
            #[allow(unsafe_code)]
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            return unsafe { compose_all_avx2(nodes, locals, out) };
        }
        compose_all(nodes, locals, out)
    }
}

/// [`compose_all`] compiled for AVX2 (chosen at run time): the same operations, so the same
/// bits (Rust never fuses a multiply and an add by itself), in three-operand VEX encoding:
/// fewer register copies in this latency-bound pass (measured: about −3% on the 64-joint
/// sample + local→model workload).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn compose_all_avx2(
    nodes: &[crate::scene::Node],
    locals: &[Trs],
    out: &mut Vec<Mat4>,
) -> Result<()> {
    compose_all(nodes, locals, out)
}

/// Local→model's pass: each node's local matrix composed with its parent's model matrix, in
/// node order (rule 2 checked as it goes). Local matrices are made four at a time
/// ([`local_matrices4`]).
#[inline(always)]
fn compose_all(nodes: &[crate::scene::Node], locals: &[Trs], out: &mut Vec<Mat4>) -> Result<()> {
    out.clear();
    let n = nodes.len().min(locals.len());
    let mut first = 0;
    while first < n {
        let count = (n - first).min(4);
        let matrices = match locals.get(first..first + 4).and_then(|l| l.try_into().ok()) {
            Some(four) => local_matrices4(four),
            _ => {
                std::array::from_fn(|k| locals.get(first + k).map_or(Mat4::IDENTITY, Trs::to_mat4))
            }
        };
        for (i, (node, local)) in nodes[first..first + count]
            .iter()
            .zip(&matrices)
            .enumerate()
        {
            let i = first + i;
            let parent = match node.parent {
                Some(p) if p < i => out.get(p),
                Some(_) => {
                    out.clear();
                    return Err(late_parent(i));
                }
                None => None,
            };
            let local = node.matrix.unwrap_or(*local);
            out.push(compose_model(parent, &local, node.matrix.is_some()));
        }
        first += count;
    }
    Ok(())
}

/// [`Trs::to_mat4`] of four locals at once, one a lane: glam's
/// `Mat4::from_scale_rotation_translation` (the quaternion's doubled products, the axes' sums,
/// then the scale) on the four rotations and scales transposed into lanes, the axes transposed
/// back into columns. The same operations in the same order, so the same bits (tested).
#[inline(always)]
fn local_matrices4(l: &[Trs; 4]) -> [Mat4; 4] {
    let lanes = |c: [Vec4; 4]| Mat4::from_cols(c[0], c[1], c[2], c[3]).transpose();
    let q = lanes(l.each_ref().map(|t| Vec4::from(t.rotation)));
    let s = lanes(l.each_ref().map(|t| t.scale.extend(0.0)));
    let (x, y, z, w) = (q.x_axis, q.y_axis, q.z_axis, q.w_axis);
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, xy, xz) = (x * x2, x * y2, x * z2);
    let (yy, yz, zz) = (y * y2, y * z2, z * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    let (one, zero) = (Vec4::ONE, Vec4::ZERO);
    // Each axis's four components, one local a lane, times that axis's scale (its last
    // component too: glam scales the whole column, so a negative scale gives -0 there).
    let axis =
        |c: [Vec4; 3], scale: Vec4| lanes([c[0] * scale, c[1] * scale, c[2] * scale, zero * scale]);
    let ax = axis([one - (yy + zz), xy + wz, xz - wy], s.x_axis);
    let ay = axis([xy - wz, one - (xx + zz), yz + wx], s.y_axis);
    let az = axis([xz + wy, yz - wx, one - (xx + yy)], s.z_axis);
    std::array::from_fn(|k| {
        Mat4::from_cols(
            ax.col(k),
            ay.col(k),
            az.col(k),
            l[k].translation.extend(1.0),
        )
    })
}

/// Rule 2's error for node `i`.
fn late_parent(i: usize) -> Error {
    Error::job(
        "LocalToModelJob",
        2,
        format!("node {i}'s parent does not come before it"),
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::XorShift64;
    use glam::{Quat, Vec3};

    /// Every matrix's floats as bits, in order.
    fn bits(m: &[Mat4]) -> Vec<u32> {
        m.iter()
            .flat_map(|m| m.to_cols_array())
            .map(f32::to_bits)
            .collect()
    }

    /// Four locals at once give `Trs::to_mat4`'s bits, and the pass node by node with it: any
    /// rotation (not unit, zero), any scale (negative: a -0 in the last row), node counts that
    /// leave 1 to 3 locals over.
    #[test]
    fn four_locals_at_once_give_the_bits_of_one_at_a_time() {
        let mut rng = XorShift64(0x2545_F491_4F6C_DD1D);
        let mut r = || rng.range(-2.0, 2.0);
        for count in 1..=11 {
            let nodes: Vec<crate::scene::Node> = (0..count)
                .map(|i| crate::scene::Node {
                    name: None,
                    source_index: i,
                    parent: i.checked_sub(1 + i % 2),
                    rest: Trs::IDENTITY,
                    matrix: None,
                    mesh: None,
                    skin: None,
                    morph_weights: None,
                })
                .collect();
            for round in 0..50 {
                let locals: Vec<Trs> = (0..count)
                    .map(|k| Trs {
                        translation: Vec3::new(r(), r(), r()),
                        rotation: match (round + k) % 7 {
                            0 => Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                            1 => Quat::from_xyzw(r(), r(), r(), r()),
                            _ => Quat::from_xyzw(r(), r(), r(), r()).normalize(),
                        },
                        scale: Vec3::new(r(), r(), r()),
                    })
                    .collect();
                let one_at_a_time: Vec<Mat4> = locals.iter().map(Trs::to_mat4).collect();
                let four: Vec<Mat4> = locals
                    .chunks_exact(4)
                    .flat_map(|c| match c.try_into() {
                        Ok(c) => local_matrices4(c),
                        Err(_) => unreachable!("chunks of four"),
                    })
                    .collect();
                assert_eq!(bits(&four), bits(&one_at_a_time[..four.len()]));
                let mut expected: Vec<Mat4> = Vec::new();
                for (node, local) in nodes.iter().zip(&one_at_a_time) {
                    let parent = node.parent.map(|p| expected[p]);
                    expected.push(compose_model(parent.as_ref(), local, false));
                }
                let mut got = Vec::new();
                assert!(compose_all(&nodes, &locals, &mut got).is_ok());
                assert_eq!(bits(&got), bits(&expected), "{count} nodes");
            }
        }
    }

    /// The AVX2 build of the pass gives the portable build's bits, `matrix` nodes included.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_pass_equals_the_portable_pass() {
        if !crate::math::avx2_fma_available() {
            return; // nothing to compare on this CPU: the portable pass is the only one
        }
        let mut scene = match crate::builtin::humanoid() {
            Ok(s) => s,
            Err(e) => panic!("humanoid: {e}"),
        };
        let mut rng = XorShift64(0x9E37_79B9_7F4A_7C15);
        let mut r = || rng.range(-1.0, 1.0);
        for n in scene.nodes.iter_mut().skip(3).step_by(5) {
            n.matrix = Some(Mat4::from_cols_array(&std::array::from_fn(|_| r())));
        }
        for _ in 0..200 {
            let locals: Vec<Trs> = (0..scene.nodes.len())
                .map(|_| Trs {
                    translation: Vec3::new(r(), r(), r()),
                    rotation: Quat::from_xyzw(r(), r(), r(), r()).normalize(),
                    scale: Vec3::new(r(), r(), r()) * 2.0,
                })
                .collect();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(compose_all(&scene.nodes, &locals, &mut a).is_ok());
            #[allow(unsafe_code)]
            // SAFETY: AVX2 and FMA checked above.
            let avx = unsafe { compose_all_avx2(&scene.nodes, &locals, &mut b) };
            assert!(avx.is_ok());
            assert_eq!(bits(&a), bits(&b));
        }
    }
}
