//! Deformation quality at a joint: Woodland's arm (its elbow) and the built-in humanoid (its
//! left elbow, on one connected skin) bent and twisted through 0–180° under every remedy —
//! LBS, LBS with 1, 2 or 3 bone links, DQS, stitching — measured against the rest shape.
//!
//! Based on: the project's own measure of the failures Weber, "Run-Time Skin Deformation",
//! §Shortcomings of Vertex Blending, describes (an elbow that flattens when bent, the candy
//! wrapper under a twist), on Woodland's arm ("Filling the Gaps"); the remedies are Weber's
//! §Bone Links, Kavan et al.'s dual quaternions (2008) and Woodland's stitching.
//!
//! Method: for each rig, motion (bend about the joint's local Z, twist about its own X axis),
//! angle and variant, the rig is posed by a one-key motion on the joint's bone and skinned on
//! the CPU path (bone links inserted and posed by the animation stage, as the renderer does).
//! Three numbers per pose:
//! - `volume_ratio`: for the arm, the enclosed volume of the tube (its open ends closed by
//!   fans to the end rings' centroids; signed tetrahedra from the origin) over the rest
//!   volume; for the humanoid, whose whole body would drown an elbow's change, one plus the
//!   change of the whole skin's volume over the rest volume of the joint's blend zone (an
//!   elliptic cylinder of the rest ring's radius, [`BLEND_HALF_WIDTH_M`] either side);
//! - `radius_ratio`: the mean distance of the rest ring nearest the joint (the arm's ring;
//!   on the humanoid's surface-nets skin, the vertices within half a grid cell of the joint's
//!   plane) from its own centroid, over the rest value (Weber's candy wrapper: LBS gives
//!   r·|cos(θ/2)| under a twist);
//! - `normal_err_deg`: the mean angle, over the vertices of the weight-blend zone, between the
//!   skinned normal and the normal of the skinned surface itself (area-weighted average of
//!   the skinned triangles around the vertex); a zero normal counts 90°.
//!
//! Cost: one character built, posed and skinned on the CPU per (rig, motion, angle, variant),
//! each linear in its vertices: 13 angles × 2 motions × 6 variants of the 1,152-vertex arm and
//! the 6,768-vertex humanoid, small enough for a command run by hand.
//!
//! Limits: one joint per rig and one motion at a time, about the joint's own axes; the ratios
//! say how far a remedy moves the shape from rest, not how a real elbow would deform.

use std::collections::HashMap;

use glam::{DVec3, Quat, Vec3};
use serde::Serialize;

use crate::builtin::Builtin;
use crate::character::{Character, CharacterSetup, CharacterSpec, MotionRef};
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

/// A joint to measure: a rig, the bone whose base is the joint, and how to find its ring.
struct JointCase {
    /// Name in the rows.
    rig: &'static str,
    /// The rig.
    base: crate::rig::WeberRig,
    /// The bone whose local rotation poses the joint.
    bone: &'static str,
    /// Rest vertices within this distance of the joint's plane (beyond the nearest) form its
    /// ring.
    ring_tolerance_m: f32,
    /// Measure the volume against the blend zone (a whole body) instead of the whole mesh.
    zone_volume: bool,
}

/// Measure the arm at each of `angles_deg` (bend and twist) for every variant;
/// `progress(done, total)` after each pose.
pub fn arm_quality(
    angles_deg: &[f32],
    progress: impl FnMut(usize, usize),
) -> Result<Vec<QualityRow>> {
    let case = JointCase {
        rig: "woodland_arm",
        base: Builtin::Arm.rig()?,
        bone: "forearm",
        ring_tolerance_m: 1e-5,
        zone_volume: false,
    };
    joint_quality(&[case], angles_deg, progress)
}

/// [`arm_quality`] and the built-in humanoid's left elbow, in that order.
pub fn quality(angles_deg: &[f32], progress: impl FnMut(usize, usize)) -> Result<Vec<QualityRow>> {
    let cases = [
        JointCase {
            rig: "woodland_arm",
            base: Builtin::Arm.rig()?,
            bone: "forearm",
            ring_tolerance_m: 1e-5,
            zone_volume: false,
        },
        JointCase {
            rig: "humanoid",
            base: Builtin::Humanoid.rig()?,
            bone: "l_forearm",
            ring_tolerance_m: 0.5 * crate::builtin::humanoid::SKIN_CELL_M,
            zone_volume: true,
        },
    ];
    joint_quality(&cases, angles_deg, progress)
}

fn joint_quality(
    cases: &[JointCase],
    angles_deg: &[f32],
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<QualityRow>> {
    let total = cases.len() * 2 * angles_deg.len() * VARIANTS.len();
    let mut rows = Vec::with_capacity(total);
    for case in cases {
        let base = &case.base;
        let bone = base
            .bones
            .iter()
            .position(|b| b.name == case.bone)
            .ok_or_else(|| Error::UnknownBone {
                model: base.name.clone(),
                bone: case.bone.into(),
            })?;
        let rest_rotation = Quat::from_array(base.bones[bone].rotation).normalize();
        // Rest measures per variant (links change the mesh's weights, not its rest shape).
        let mut rest: HashMap<usize, Rest> = HashMap::new();
        for motion in ["bend", "twist"] {
            for &angle in angles_deg {
                let q = match motion {
                    "bend" => Quat::from_rotation_z(angle.to_radians()),
                    _ => Quat::from_rotation_x(angle.to_radians()),
                };
                for (vi, &(mode, links)) in VARIANTS.iter().enumerate() {
                    let mut rig = base.clone();
                    rig.bones[bone].links = (links > 0).then_some(LinkSettings {
                        count: links,
                        length_m: None,
                        normal_fade: None,
                    });
                    rig.motions = vec![Motion {
                        name: "pose".into(),
                        looping: false,
                        tracks: vec![Track {
                            scale_keys: Vec::new(),
                            bone: case.bone.into(),
                            displacement_keys: Vec::new(),
                            rotation_keys: vec![Key {
                                time_s: 0.0,
                                value: (rest_rotation * q).to_array(),
                            }],
                        }],
                    }];
                    let rs = rig.to_scene()?;
                    let spec = CharacterSpec {
                        links: links > 0,
                        ..CharacterSpec::single(Some(MotionRef::Name("pose".into())))
                    };
                    let setup = CharacterSetup {
                        skin: SkinOptions {
                            mode,
                            ..Default::default()
                        },
                        ..CharacterSetup::stage(spec)
                    };
                    let mut c = setup.build_rig(&rs)?;
                    c.update(0.0, 0.0)?;
                    let joint = joint_rest(&c, case.bone)?;
                    let r = match rest.get(&vi) {
                        Some(r) => *r,
                        None => {
                            let r = rest_measures(&c, joint, case.ring_tolerance_m);
                            rest.insert(vi, r);
                            r
                        }
                    };
                    let m = measure(&c, joint, case.ring_tolerance_m)?;
                    let volume_ratio = if case.zone_volume {
                        1.0 + (m.volume - r.volume) / r.zone_volume
                    } else {
                        m.volume / r.volume
                    };
                    rows.push(QualityRow {
                        rig: case.rig.into(),
                        mode: mode.name().into(),
                        links,
                        motion: motion.into(),
                        angle_deg: angle,
                        volume_ratio,
                        radius_ratio: m.radius / r.radius,
                        normal_err_deg: m.normal_err_deg,
                    });
                    progress(rows.len(), total);
                }
            }
        }
    }
    Ok(rows)
}

/// Rest measures of a case.
#[derive(Clone, Copy)]
struct Rest {
    volume: f64,
    radius: f64,
    zone_volume: f64,
}

/// The joint's rest frame: where it is and the direction of its bone (model space).
#[derive(Clone, Copy)]
struct Joint {
    at: Vec3,
    axis: Vec3,
}

fn rest_measures(c: &Character, joint: Joint, tolerance: f32) -> Rest {
    let prim = c.scene.primitive(&c.scene.draws[0]);
    let radius = ring_radius(&prim.positions, &prim.positions, joint, tolerance);
    // The blend zone's rest volume: an elliptic cylinder of the ring's mean radius.
    let zone_volume = std::f64::consts::PI * radius * radius * 2.0 * BLEND_HALF_WIDTH_M as f64;
    Rest {
        volume: closed_volume(&prim.positions, &prim.indices),
        radius,
        zone_volume,
    }
}

/// Measures of one skinned pose.
struct Measures {
    volume: f64,
    radius: f64,
    normal_err_deg: f64,
}

/// Blend zone half-width around the joint (the arm's weights blend over ±5 cm, the
/// humanoid's elbow over about one radius, 4 cm, either side).
pub const BLEND_HALF_WIDTH_M: f32 = 0.05;

/// The joint (the base of `bone`) at rest, in model space, and its bone's rest direction. The
/// bone's parent is at rest in every pose measured, so this is also where the joint is.
fn joint_rest(c: &Character, bone: &str) -> Result<Joint> {
    let node = c.scene.find_node(bone)?;
    // The rest transforms up the hierarchy (the posed frame has the joint's bone turned).
    let mut m = glam::Mat4::IDENTITY;
    let mut cur = Some(node);
    while let Some(n) = cur {
        let nd = &c.scene.nodes[n];
        m = nd.matrix.unwrap_or_else(|| nd.rest.to_mat4()) * m;
        cur = nd.parent;
    }
    Ok(Joint {
        at: m.w_axis.truncate(),
        axis: m.x_axis.truncate().normalize_or(Vec3::X),
    })
}

fn measure(c: &Character, joint: Joint, tolerance: f32) -> Result<Measures> {
    let prim = c.scene.primitive(&c.scene.draws[0]);
    let out = &c.outputs[0];
    let volume = closed_volume(&out.positions, &prim.indices);
    let radius = ring_radius(&prim.positions, &out.positions, joint, tolerance);
    let normals = out.normals.as_deref().unwrap_or(&[]);
    let surface = surface_normals(&out.positions, &prim.indices);
    let mut sum = 0.0;
    let mut count = 0usize;
    for (v, p) in prim.positions.iter().enumerate() {
        if !in_zone(joint, *p, BLEND_HALF_WIDTH_M) {
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

/// Whether rest position `p` lies within `half_width` of the joint's plane and near the
/// bone's axis (within four half-widths: the limb, not the body it joins).
fn in_zone(joint: Joint, p: Vec3, half_width: f32) -> bool {
    let d = p - joint.at;
    let along = d.dot(joint.axis);
    along.abs() <= half_width && (d - joint.axis * along).length() <= 4.0 * half_width
}

/// Mean distance of the skinned vertices of the rest ring nearest the joint from their own
/// centroid: the ring's radius wherever the skin put it (the centroid, not the joint, so the
/// ring's offset along the bone does not count). The ring: rest vertices near the bone's
/// axis within `tolerance` of the nearest one's distance to the joint's plane.
fn ring_radius(rest: &[Vec3], skinned: &[Vec3], joint: Joint, tolerance: f32) -> f64 {
    let plane = |p: &Vec3| (*p - joint.at).dot(joint.axis).abs();
    let near_axis = |p: &Vec3| {
        let d = *p - joint.at;
        (d - joint.axis * d.dot(joint.axis)).length() <= 4.0 * BLEND_HALF_WIDTH_M
    };
    let nearest = rest
        .iter()
        .filter(|p| near_axis(p))
        .map(plane)
        .fold(f32::INFINITY, f32::min);
    let ring: Vec<DVec3> = rest
        .iter()
        .zip(skinned)
        .filter(|(p, _)| near_axis(p) && plane(p) <= nearest + tolerance)
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
