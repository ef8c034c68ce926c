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
//! Three numbers per pose, over the joint's blend zone (the rest vertices within
//! [`BLEND_HALF_WIDTH_M`] of the joint's plane and near the bone's axis: the limb, not the body
//! it joins), which is what a user means by "the elbow":
//! - `volume_ratio`: the enclosed volume of the zone's piece of skin (its triangles whose
//!   corners all lie in the zone, the open ends closed by fans to each boundary loop's
//!   centroid; signed tetrahedra from the origin) over its rest volume;
//! - `radius_ratio`: the smallest, over the zone's rings, of a ring's mean distance from its
//!   own centroid over its rest value (Weber's candy wrapper: LBS gives r·|2w − 1| under a
//!   180° twist for a ring weighted w and 1 − w, smallest where w = ½, wherever that ring
//!   lies). A ring: the zone's rest vertices within the case's ring width along the axis
//!   (the arm's rings; slabs of one grid cell on the humanoid's surface-nets skin), with at
//!   least [`MIN_RING_VERTICES`];
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

mod joints;
mod measure;

pub use joints::{JointZone, RingShape, ZoneShape, joint_zones};
pub use measure::{closed_volume, ring_radius, surface_normals};

use std::collections::HashMap;

use glam::{Quat, Vec3};
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
    /// Enclosed volume of the blend zone's skin / its rest volume.
    pub volume_ratio: f64,
    /// Smallest ring radius / its rest radius over the blend zone.
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
    /// A ring: rest vertices within this distance of the ring's first along the bone's axis.
    ring_width_m: f32,
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
        ring_width_m: ARM_RING_WIDTH_M,
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
            ring_width_m: ARM_RING_WIDTH_M,
        },
        JointCase {
            rig: "humanoid",
            base: Builtin::Humanoid.rig()?,
            bone: "l_forearm",
            ring_width_m: crate::builtin::humanoid::SKIN_CELL_M,
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
                closest: crate::error::closest_names(
                    case.bone,
                    base.bones.iter().map(|b| b.name.as_str()),
                ),
            })?;
        let rest_rotation = Quat::from_array(base.bones[bone].rotation).normalize();
        // The zone per variant (links change the mesh's weights, not its rest shape).
        let mut rest: HashMap<usize, BlendZone> = HashMap::new();
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
                    let zone = rest
                        .entry(vi)
                        .or_insert_with(|| BlendZone::new(&c, joint, case.ring_width_m));
                    let m = zone.measure(&c);
                    rows.push(QualityRow {
                        rig: case.rig.into(),
                        mode: mode.name().into(),
                        links,
                        motion: motion.into(),
                        angle_deg: angle,
                        volume_ratio: m.volume / zone.rest_volume,
                        radius_ratio: m.radius_ratio,
                        normal_err_deg: m.normal_err_deg,
                    });
                    progress(rows.len(), total);
                }
            }
        }
    }
    Ok(rows)
}

/// The joint's rest frame: where it is and the direction of its bone (model space).
#[derive(Clone, Copy)]
struct Joint {
    at: Vec3,
    axis: Vec3,
}

/// Blend zone half-width around the joint (the arm's weights blend over ±5 cm, the
/// humanoid's elbow over about one radius, 4 cm, either side).
pub const BLEND_HALF_WIDTH_M: f32 = 0.05;

/// The arm's rings lie at exact positions along its axis: vertices of one ring agree to f32
/// rounding, rings are centimetres apart.
const ARM_RING_WIDTH_M: f32 = 1e-5;

/// A slab with fewer vertices is no ring (a triangle's worth of a surface-nets slab).
pub const MIN_RING_VERTICES: usize = 6;

/// A joint's blend zone at rest, found once per variant: its vertices, rings, triangles and
/// rest measures.
struct BlendZone {
    /// Per vertex: in the zone.
    in_zone: Vec<bool>,
    /// The zone's rings (vertex indices) and each one's rest radius.
    rings: Vec<(Vec<usize>, f64)>,
    /// The triangles whose corners all lie in the zone.
    indices: Vec<u32>,
    rest_volume: f64,
}

/// Measures of one skinned pose.
struct Measures {
    volume: f64,
    radius_ratio: f64,
    normal_err_deg: f64,
}

impl BlendZone {
    /// The zone of `joint` on `c`'s first draw, rings `ring_width_m` wide along the axis.
    fn new(c: &Character, joint: Joint, ring_width_m: f32) -> BlendZone {
        let prim = c.scene.primitive(&c.scene.draws[0]);
        let rest = &prim.positions;
        let in_zone: Vec<bool> = rest
            .iter()
            .map(|p| in_zone(joint, *p, BLEND_HALF_WIDTH_M))
            .collect();
        // Rings: the zone's vertices in order along the axis, a new ring past the width.
        let along = |v: usize| (rest[v] - joint.at).dot(joint.axis);
        let mut order: Vec<usize> = (0..rest.len()).filter(|&v| in_zone[v]).collect();
        order.sort_by(|&a, &b| along(a).total_cmp(&along(b)));
        let mut rings: Vec<(Vec<usize>, f64)> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        for v in order {
            if current
                .first()
                .is_some_and(|&f| along(v) - along(f) > ring_width_m)
            {
                rings.push((std::mem::take(&mut current), 0.0));
            }
            current.push(v);
        }
        rings.push((current, 0.0));
        rings.retain(|(r, _)| r.len() >= MIN_RING_VERTICES);
        for (ring, radius) in &mut rings {
            *radius = ring_radius(rest, ring);
        }
        rings.retain(|(_, r)| *r > 0.0);
        let indices: Vec<u32> = prim
            .indices
            .chunks_exact(3)
            .filter(|t| t.iter().all(|&i| in_zone.get(i as usize) == Some(&true)))
            .flatten()
            .copied()
            .collect();
        let rest_volume = closed_volume(rest, &indices);
        BlendZone {
            in_zone,
            rings,
            indices,
            rest_volume,
        }
    }

    /// The zone's volume, smallest ring ratio and mean normal error in `c`'s skinned pose.
    fn measure(&self, c: &Character) -> Measures {
        let prim = c.scene.primitive(&c.scene.draws[0]);
        let out = &c.outputs[0];
        let radius_ratio = self
            .rings
            .iter()
            .map(|(ring, rest)| ring_radius(&out.positions, ring) / rest)
            .fold(f64::INFINITY, f64::min);
        let normals = out.normals.as_deref().unwrap_or(&[]);
        let surface = surface_normals(&out.positions, &prim.indices);
        let mut sum = 0.0;
        let mut count = 0usize;
        for v in (0..prim.positions.len()).filter(|&v| self.in_zone[v]) {
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
        Measures {
            volume: closed_volume(&out.positions, &self.indices),
            radius_ratio: if radius_ratio.is_finite() {
                radius_ratio
            } else {
                0.0
            },
            normal_err_deg: if count > 0 { sum / count as f64 } else { 0.0 },
        }
    }
}

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

/// Whether rest position `p` lies within `half_width` of the joint's plane and near the
/// bone's axis (within four half-widths: the limb, not the body it joins).
fn in_zone(joint: Joint, p: Vec3, half_width: f32) -> bool {
    let d = p - joint.at;
    let along = d.dot(joint.axis);
    along.abs() <= half_width && (d - joint.axis * along).length() <= 4.0 * half_width
}
