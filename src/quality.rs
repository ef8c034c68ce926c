//! Deformation quality at a joint: Woodland's arm bent and twisted at the elbow through
//! 0–180° under every remedy — LBS, LBS with 1, 2 or 3 bone links, DQS, stitching — measured
//! against its rest shape.
//!
//! Method: for each motion (bend about the forearm's Z, twist about its own X axis), angle
//! and variant, the arm rig is posed by a one-key motion on the forearm and skinned on the
//! CPU path (bone links inserted and posed by the animation stage, as the renderer does).
//! Three numbers per pose:
//! - `volume_ratio`: the enclosed volume of the tube (its open ends closed by fans to the end
//!   rings' centroids; signed tetrahedra from the origin) over the rest volume;
//! - `radius_ratio`: the mean distance of the ring nearest the elbow from its own centroid,
//!   over the rest value (Weber's candy-wrapper: LBS gives r·|cos(θ/2)| under a twist);
//! - `normal_err_deg`: the mean angle, over the vertices of the weight-blend zone, between the
//!   skinned normal and the normal of the skinned surface itself (area-weighted average of
//!   the skinned triangles around the vertex); a zero normal counts 90°.
//!
//! Cost: one small character per (motion, angle, variant): 13 angles × 2 motions × 6 variants
//! of a 1,152-vertex arm take milliseconds. Limits: the humanoid is not measured yet (its skin
//! is separate tubes, not one connected surface).

use std::collections::HashMap;

use glam::{DVec3, Quat, Vec3};
use serde::Serialize;

use crate::builtin::Builtin;
use crate::character::{Character, CharacterSpec};
use crate::error::{Error, Result};
use crate::rig::{Key, LinkSettings, Motion, Track};
use crate::skin::{SkinMode, SkinOptions};

/// One measured pose.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualityRow {
    /// The rig (`woodland_arm`).
    pub rig: String,
    /// `lbs`, `dqs` or `stitch`.
    pub mode: String,
    /// Bone links at the elbow (LBS only).
    pub links: usize,
    /// `bend` or `twist`.
    pub motion: String,
    /// Elbow angle.
    pub angle_deg: f32,
    /// Enclosed volume / rest volume.
    pub volume_ratio: f64,
    /// Elbow ring radius / rest radius.
    pub radius_ratio: f64,
    /// Mean angle between skinned and surface normals in the blend zone.
    pub normal_err_deg: f64,
}

/// The variants measured: (mode, links).
pub const VARIANTS: [(SkinMode, usize); 6] = [
    (SkinMode::Lbs, 0),
    (SkinMode::Lbs, 1),
    (SkinMode::Lbs, 2),
    (SkinMode::Lbs, 3),
    (SkinMode::Dqs, 0),
    (SkinMode::Stitch, 0),
];

/// Measure the arm at each of `angles_deg` (bend and twist) for every variant;
/// `progress(done, total)` after each pose.
pub fn arm_quality(
    angles_deg: &[f32],
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<QualityRow>> {
    let base = Builtin::Arm.rig()?;
    let fore = base
        .bones
        .iter()
        .position(|b| b.name == "forearm")
        .ok_or_else(|| Error::UnknownBone {
            model: base.name.clone(),
            bone: "forearm".into(),
        })?;
    let total = 2 * angles_deg.len() * VARIANTS.len();
    let mut rows = Vec::with_capacity(total);
    // Rest measures per variant (links change the mesh's weights, not its rest shape).
    let mut rest: HashMap<usize, (f64, f64)> = HashMap::new();
    for motion in ["bend", "twist"] {
        for &angle in angles_deg {
            let q = match motion {
                "bend" => Quat::from_rotation_z(angle.to_radians()),
                _ => Quat::from_rotation_x(angle.to_radians()),
            };
            for (vi, &(mode, links)) in VARIANTS.iter().enumerate() {
                let mut rig = base.clone();
                rig.bones[fore].links = (links > 0).then_some(LinkSettings {
                    count: links,
                    length_m: None,
                    normal_fade: None,
                });
                rig.motions = vec![Motion {
                    name: "pose".into(),
                    looping: false,
                    tracks: vec![Track {
                        bone: "forearm".into(),
                        displacement_keys: Vec::new(),
                        rotation_keys: vec![Key {
                            time_s: 0.0,
                            value: q.to_array(),
                        }],
                    }],
                }];
                let rs = rig.to_scene()?;
                let spec = CharacterSpec {
                    links: links > 0,
                    ..CharacterSpec::single("pose")
                };
                let mut c = Character::from_rig(&rs, &spec)?;
                c.set_skin_options(SkinOptions {
                    mode,
                    ..Default::default()
                });
                c.update(0.0, 0.0)?;
                let m = measure(&c)?;
                let (rest_volume, rest_radius) = *rest.entry(vi).or_insert_with(|| {
                    let prim = c.scene.primitive(&c.scene.draws[0]);
                    let elbow = elbow_rest(&c);
                    (
                        closed_volume(&prim.positions, &prim.indices),
                        ring_radius(&prim.positions, &prim.positions, elbow),
                    )
                });
                rows.push(QualityRow {
                    rig: "woodland_arm".into(),
                    mode: mode.name().into(),
                    links,
                    motion: motion.into(),
                    angle_deg: angle,
                    volume_ratio: m.volume / rest_volume,
                    radius_ratio: m.radius / rest_radius,
                    normal_err_deg: m.normal_err_deg,
                });
                progress(rows.len(), total);
            }
        }
    }
    Ok(rows)
}

/// Measures of one skinned pose.
struct Measures {
    volume: f64,
    radius: f64,
    normal_err_deg: f64,
}

/// Blend zone half-width around the elbow (the arm's weights blend over ±5 cm).
const BLEND_HALF_WIDTH_M: f32 = 0.05;

fn forearm_node(c: &Character) -> Result<usize> {
    c.scene.find_node("forearm")
}

/// The elbow in the bind pose: the forearm joint's rest position (the upper arm never moves).
fn elbow_rest(c: &Character) -> Vec3 {
    forearm_node(c)
        .ok()
        .and_then(|n| c.frame.model_from_node.get(n))
        .map_or(Vec3::ZERO, |m| m.w_axis.truncate())
}

fn measure(c: &Character) -> Result<Measures> {
    let prim = c.scene.primitive(&c.scene.draws[0]);
    let out = &c.outputs[0];
    let node = forearm_node(c)?;
    // The elbow joint does not move (the upper arm is at rest): its bind position is today's.
    let elbow = c.frame.model_from_node[node].w_axis.truncate();
    let volume = closed_volume(&out.positions, &prim.indices);
    let radius = ring_radius(&prim.positions, &out.positions, elbow);
    let normals = out.normals.as_deref().unwrap_or(&[]);
    let surface = surface_normals(&out.positions, &prim.indices);
    let mut sum = 0.0;
    let mut count = 0usize;
    for (v, p) in prim.positions.iter().enumerate() {
        if (p.x - elbow.x).abs() > BLEND_HALF_WIDTH_M {
            continue;
        }
        let (a, b) = (normals.get(v).copied().unwrap_or(Vec3::ZERO), surface[v]);
        let angle = if a.length_squared() > 0.0 && b.length_squared() > 0.0 {
            (a.normalize().dot(b.normalize()).clamp(-1.0, 1.0) as f64)
                .acos()
                .to_degrees()
        } else {
            90.0
        };
        sum += angle;
        count += 1;
    }
    Ok(Measures {
        volume,
        radius,
        normal_err_deg: if count > 0 { sum / count as f64 } else { 0.0 },
    })
}

/// Mean distance of the skinned vertices of the rest ring nearest the elbow from their own
/// centroid: the ring's radius wherever the skin put it (the centroid, not the joint, so the
/// ring's offset along the bone does not count).
fn ring_radius(rest: &[Vec3], skinned: &[Vec3], elbow_rest: Vec3) -> f64 {
    let nearest = rest
        .iter()
        .map(|p| (p.x - elbow_rest.x).abs())
        .fold(f32::INFINITY, f32::min);
    let ring: Vec<DVec3> = rest
        .iter()
        .zip(skinned)
        .filter(|(p, _)| (p.x - elbow_rest.x).abs() <= nearest + 1e-5)
        .map(|(_, q)| q.as_dvec3())
        .collect();
    if ring.is_empty() {
        return 0.0;
    }
    let centroid = ring.iter().sum::<DVec3>() / ring.len() as f64;
    ring.iter().map(|q| (*q - centroid).length()).sum::<f64>() / ring.len() as f64
}

/// Area-weighted vertex normals of a triangle list.
pub fn surface_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
        let (Some(pa), Some(pb), Some(pc)) = (positions.get(a), positions.get(b), positions.get(c))
        else {
            continue;
        };
        let f = (*pb - *pa).cross(*pc - *pa);
        for i in [a, b, c] {
            n[i] += f;
        }
    }
    n
}

/// Enclosed volume of a triangle list whose open boundary loops are closed by fans to each
/// loop's centroid (signed tetrahedra against the origin, f64).
pub fn closed_volume(positions: &[Vec3], indices: &[u32]) -> f64 {
    let p = |i: u32| {
        positions
            .get(i as usize)
            .map_or(DVec3::ZERO, |v| v.as_dvec3())
    };
    let tet = |a: DVec3, b: DVec3, c: DVec3| a.dot(b.cross(c)) / 6.0;
    let mut volume = 0.0;
    // Directed edges used once: the boundary, oriented as its triangles go round.
    let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
    for t in indices.chunks_exact(3) {
        volume += tet(p(t[0]), p(t[1]), p(t[2]));
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            if edges.remove(&(b, a)).is_none() {
                *edges.entry((a, b)).or_insert(0) += 1;
            }
        }
    }
    // Walk each boundary loop; cap it with a fan to its centroid, reversed so the cap faces
    // out as the surface does.
    let mut next: HashMap<u32, u32> = edges.keys().map(|&(a, b)| (a, b)).collect();
    while let Some((&start, _)) = next.iter().next() {
        let mut loop_ = vec![start];
        let mut at = start;
        while let Some(n) = next.remove(&at) {
            if n == start {
                break;
            }
            loop_.push(n);
            at = n;
        }
        if loop_.len() < 3 {
            continue;
        }
        let centroid = loop_.iter().map(|&i| p(i)).sum::<DVec3>() / loop_.len() as f64;
        for k in 0..loop_.len() {
            let (a, b) = (loop_[k], loop_[(k + 1) % loop_.len()]);
            volume += tet(p(b), p(a), centroid);
        }
    }
    volume
}
