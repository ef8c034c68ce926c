//! The f64 reference: the whole chain (local→model, palette, morph, blend, normals,
//! tangents) recomputed in double precision straight from the scene's fixed-width weight
//! sets, sharing no code with the f32 jobs beyond the pose. Tests use it as ground truth.

use glam::{DMat3, DMat4, DQuat, DVec3, DVec4};

use crate::anim::Pose;
use crate::math::dorthogonalize_tangent;
use crate::scene::{Scene, SkinWeights};
use crate::skeleton::model_from_node_f64;
use crate::skin::modes::{NormalMode, SkinMode, SkinOptions, stitch_weights};
use crate::skin::palette::draw_palette_f64;

/// Skinned output of one draw in f64 (the reference for [`crate::skin::SkinnedVertices`]).
#[derive(Clone, Debug, Default)]
pub struct Skinned64 {
    /// Skinned positions in model space.
    pub positions: Vec<DVec3>,
    /// Skinned normals (unit when the options renormalise), present when the primitive has
    /// normals.
    pub normals: Option<Vec<DVec3>>,
    /// Skinned tangents (`w` handedness; xyz unit and perpendicular to the normal when the
    /// options renormalise, else as the blend gives them), present when the primitive has
    /// tangents.
    pub tangents: Option<Vec<DVec4>>,
}

/// Skin draw `draw` of `scene` in `pose`, in f64. `weights` overrides the primitive's weight
/// sets (e.g. a reduced copy); rigid draws use weight 1 on the node.
pub fn skin_draw_f64(
    scene: &Scene,
    pose: &Pose,
    draw: usize,
    weights: Option<&SkinWeights>,
) -> Skinned64 {
    let model_from_node = model_from_node_f64(scene, pose);
    skin_draw_f64_with(scene, pose, &model_from_node, draw, weights)
}

/// [`skin_draw_f64`] with `model_from_node` (from [`model_from_node_f64`]) given, so several
/// draws of one pose share it.
pub fn skin_draw_f64_with(
    scene: &Scene,
    pose: &Pose,
    model_from_node: &[DMat4],
    draw: usize,
    weights: Option<&SkinWeights>,
) -> Skinned64 {
    skin_draw_f64_options(
        scene,
        pose,
        model_from_node,
        draw,
        weights,
        SkinOptions::default(),
    )
}

/// [`skin_draw_f64_with`] in any skinning mode: LBS, DQS (polar decomposition and dual
/// quaternion blend in f64, `crate::skin::dqs::blend_f64`) or stitching; normals exact
/// (inverse-transpose) or blend3x3, unit or as the blend leaves them
/// (`sign(det A) cof(A) n` or `A n`).
pub fn skin_draw_f64_options(
    scene: &Scene,
    pose: &Pose,
    model_from_node: &[DMat4],
    draw: usize,
    weights: Option<&SkinWeights>,
    options: SkinOptions,
) -> Skinned64 {
    let d = &scene.draws[draw];
    let prim = scene.primitive(d);
    let palette = draw_palette_f64(scene, model_from_node, draw);
    let morph_w = &pose.morph_weights[d.node];
    let n = prim.vertex_count();
    let sw = if d.skin.is_some() {
        weights.or(prim.skin_weights.as_ref())
    } else {
        None
    };
    let stitched = match (options.mode, sw) {
        (SkinMode::Stitch, Some(w)) => Some(stitch_weights(w)),
        _ => None,
    };
    let sw = stitched.as_ref().or(sw);
    let mut out = Skinned64 {
        positions: Vec::with_capacity(n),
        normals: prim.normals.as_ref().map(|_| Vec::with_capacity(n)),
        tangents: prim.tangents.as_ref().map(|_| Vec::with_capacity(n)),
    };
    for v in 0..n {
        // Morph in f64.
        let mut p = prim.positions[v].as_dvec3();
        let mut nrm = prim.normals.as_ref().map(|x| x[v].as_dvec3());
        let mut tan = prim.tangents.as_ref().map(|x| x[v].as_dvec4());
        for (t, target) in prim.morph_targets.iter().enumerate() {
            let w = morph_w.get(t).copied().unwrap_or(0.0) as f64;
            if let Some(dp) = &target.positions {
                p += dp[v].as_dvec3() * w;
            }
            if let (Some(n), Some(dn)) = (nrm.as_mut(), &target.normals) {
                *n += dn[v].as_dvec3() * w;
            }
            if let (Some(t), Some(dt)) = (tan.as_mut(), &target.tangents) {
                *t += (dt[v].as_dvec3() * w).extend(0.0);
            }
        }
        // Blend: the point map and the linear part A.
        let pairs: Vec<(DMat4, f64)> = match sw {
            Some(sw) => (0..sw.width)
                .map(|k| {
                    let i = v * sw.width + k;
                    (palette[sw.joints[i] as usize], sw.weights[i] as f64)
                })
                .filter(|&(_, w)| w != 0.0)
                .collect(),
            None => vec![(palette[0], 1.0)],
        };
        let (position, rotation, linear) = if options.mode == SkinMode::Dqs {
            let (q, t, s) = crate::skin::dqs::blend_f64(&pairs);
            (q * (s * p) + t, q, s)
        } else {
            let m = pairs.iter().fold(DMat4::ZERO, |acc, (m, w)| acc + *m * *w);
            (m.transform_point3(p), DQuat::IDENTITY, DMat3::from_mat4(m))
        };
        out.positions.push(position);
        let mut unit_n = DVec3::ZERO;
        if let (Some(o), Some(n)) = (out.normals.as_mut(), nrm) {
            let raw = match options.normals {
                NormalMode::Exact => {
                    let det = linear.determinant();
                    let cof = DMat3::from_cols(
                        linear.y_axis.cross(linear.z_axis),
                        linear.z_axis.cross(linear.x_axis),
                        linear.x_axis.cross(linear.y_axis),
                    );
                    let r = cof * n;
                    if det < 0.0 { -r } else { r }
                }
                NormalMode::Blend3x3 => linear * n,
            };
            let raw = rotation * raw;
            unit_n = raw.normalize_or_zero();
            o.push(if options.renormalize { unit_n } else { raw });
        }
        if let (Some(o), Some(t)) = (out.tangents.as_mut(), tan) {
            let r = rotation * (linear * t.truncate());
            let r = if !options.renormalize {
                r
            } else if unit_n != DVec3::ZERO {
                dorthogonalize_tangent(r, unit_n)
            } else {
                r.normalize_or_zero()
            };
            o.push(r.extend(t.w));
        }
    }
    out
}
