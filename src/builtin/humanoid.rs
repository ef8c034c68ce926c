//! Built-in 18-bone humanoid (the FK skeleton of Dunia, "Implicit Animation Overview", stacked from
//! the pelvis) in Weber's convention, with a generated skin and authored motions (walk, run,
//! throw).
//!
//! Skeleton: pelvis, spine, chest, head; per side clavicle, upper arm, forearm, hand; per side
//! thigh, shin, foot. Reference pose: T-pose facing +Z, Y up, bones along local +X. Skin: one
//! connected surface round the bones' tapered elliptical pseudo-cylinders (their authored base and
//! tip sections), blended where limbs meet the torso ([`crate::weights::surface`]); weights made as
//! Weber's §11 and §10 describe for a model without weights: regeneration against the
//! pseudo-cylinders, then smoothing scaled by the cross-sections ([`crate::weights`]), four
//! influences at most. Motions are keyframed tracks with irregular key times; rotations are
//! authored as deltas about model-space axes applied in each bone's own reference frame.

use std::f32::consts::{PI, TAU};

use glam::{Mat3, Quat, Vec2, Vec3};

use crate::rig::{Bone, Key, LimitsDeg, LinkSettings, Motion, RigMesh, Section, Track, WeberRig};
use crate::weights::BoneAxis;
use crate::weights::regenerate::RegenerateJob;
use crate::weights::sections::BoneSection;
use crate::weights::smooth::SmoothJob;
use crate::weights::surface::{Surface, SurfaceJob};

struct Builder {
    bones: Vec<Bone>,
    /// Rest model rotation and base position per bone.
    model_rot: Vec<Quat>,
    base: Vec<Vec3>,
}

impl Builder {
    fn tip(&self, i: usize) -> Vec3 {
        self.base[i] + self.model_rot[i] * Vec3::new(self.bones[i].length_m, 0.0, 0.0)
    }

    /// Add a bone from its model-space base, direction and an "up" hint for its local Y.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        name: &str,
        parent: Option<usize>,
        base: Vec3,
        dir: Vec3,
        up: Vec3,
        length_m: f32,
        radii: ([f32; 2], [f32; 2]),
        limits: Option<LimitsDeg>,
    ) -> usize {
        let x = dir.normalize();
        let z = x.cross(up).normalize();
        let y = z.cross(x);
        let rot = Quat::from_mat3(&Mat3::from_cols(x, y, z)).normalize();
        let (local_rot, displacement) = match parent {
            Some(p) => {
                let inv = self.model_rot[p].inverse();
                (inv * rot, inv * (base - self.tip(p)))
            }
            None => (rot, base),
        };
        self.bones.push(Bone {
            name: name.into(),
            parent,
            length_m,
            displacement_m: displacement
                .to_array()
                .map(|v| if v.abs() < 1e-6 { 0.0 } else { v }),
            rotation: local_rot.normalize().to_array(),
            limits_deg: limits,
            base_section: Some(Section {
                radii_m: radii.0,
                offset_m: [0.0, 0.0],
            }),
            tip_section: Some(Section {
                radii_m: radii.1,
                offset_m: [0.0, 0.0],
            }),
            links: None,
            muscle: false,
        });
        self.model_rot.push(rot);
        self.base.push(base);
        self.bones.len() - 1
    }
}

fn lim(min: [f32; 3], max: [f32; 3]) -> Option<LimitsDeg> {
    Some(LimitsDeg { min, max })
}

/// The humanoid rig with its skin and motions.
pub fn humanoid_rig() -> crate::error::Result<WeberRig> {
    let b = skeleton();
    // The skin depends only on the bones above (constant): build it once per process.
    static SKIN: std::sync::OnceLock<RigMesh> = std::sync::OnceLock::new();
    let mesh = match SKIN.get() {
        Some(m) => m.clone(),
        None => {
            let m = skin(&b.bones)?;
            SKIN.get_or_init(|| m).clone()
        }
    };
    let mut rig = WeberRig::new("humanoid", b.bones.clone());
    rig.mesh = Some(mesh);
    rig.motions = vec![
        walk(&b, "walk", 1.1, 1.0),
        walk(&b, "run", 0.72, 1.8),
        throw(&b),
    ];
    Ok(rig)
}

/// The 18 bones in their reference pose (torso, left and right arm, left and right leg), with
/// bone links at shoulders, elbows, hips and knees.
fn skeleton() -> Builder {
    let mut b = Builder {
        bones: Vec::new(),
        model_rot: Vec::new(),
        base: Vec::new(),
    };
    let (pelvis, chest) = b.torso();
    b.arm(chest, 1.0, "l");
    b.arm(chest, -1.0, "r");
    for (side, s) in [(1.0f32, "l"), (-1.0, "r")] {
        b.leg(pelvis, side, s);
    }
    // Bone links at shoulders, elbows, hips and knees (Weber, "Run-Time Skin Deformation", §Bone
    // Links: 2–3 links, default length). The hips are a fork (the pelvis has the spine and both
    // thighs): the pelvis's weight is split by pseudo-weights that change continuously round the
    // crotch, and the links share the thighs' rotation away from their rest (they hang 180° from
    // the pelvis).
    for name in [
        "l_upper_arm",
        "r_upper_arm",
        "l_forearm",
        "r_forearm",
        "l_thigh",
        "r_thigh",
        "l_shin",
        "r_shin",
    ] {
        if let Some(bone) = b.bones.iter_mut().find(|x| x.name == name) {
            bone.links = Some(LinkSettings {
                count: 2,
                length_m: None,
                normal_fade: None,
            });
        }
    }
    b
}

impl Builder {
    /// Pelvis, spine, chest and head, stacked up +Y; returns the pelvis and the chest.
    fn torso(&mut self) -> (usize, usize) {
        let up = Vec3::Y;
        let fwd = Vec3::Z;
        let pelvis = self.add(
            "pelvis",
            None,
            Vec3::new(0.0, 0.95, 0.0),
            up,
            fwd,
            0.12,
            ([0.11, 0.15], [0.10, 0.14]),
            lim([-30.0, -30.0, -30.0], [30.0, 30.0, 30.0]),
        );
        let spine = self.add(
            "spine",
            Some(pelvis),
            self.tip(pelvis),
            up,
            fwd,
            0.18,
            ([0.10, 0.14], [0.10, 0.14]),
            lim([-30.0, -30.0, -35.0], [45.0, 30.0, 35.0]),
        );
        let chest = self.add(
            "chest",
            Some(spine),
            self.tip(spine),
            up,
            fwd,
            0.24,
            ([0.10, 0.14], [0.10, 0.13]),
            lim([-20.0, -20.0, -30.0], [30.0, 20.0, 30.0]),
        );
        self.add(
            "head",
            Some(chest),
            self.tip(chest),
            up,
            fwd,
            0.26,
            ([0.05, 0.05], [0.09, 0.10]),
            lim([-40.0, -40.0, -70.0], [40.0, 40.0, 70.0]),
        );
        (pelvis, chest)
    }

    /// Clavicle, upper arm, forearm and hand of one side (`side` ±1 along X, `s` the name
    /// prefix), from the top of the chest outwards.
    fn arm(&mut self, chest: usize, side: f32, s: &str) {
        let up = Vec3::Y;
        let sx = Vec3::new(side, 0.0, 0.0);
        let clav_base = self.tip(chest) + Vec3::new(side * 0.02, -0.05, 0.0);
        let clav = self.add(
            &format!("{s}_clavicle"),
            Some(chest),
            clav_base,
            sx,
            up,
            0.15,
            ([0.06, 0.06], [0.055, 0.055]),
            lim([-15.0, -20.0, -10.0], [25.0, 20.0, 10.0]),
        );
        let upper = self.add(
            &format!("{s}_upper_arm"),
            Some(clav),
            self.tip(clav),
            sx,
            up,
            0.28,
            ([0.05, 0.05], [0.042, 0.042]),
            lim([-95.0, -90.0, -80.0], [95.0, 90.0, 80.0]),
        );
        let fore = self.add(
            &format!("{s}_forearm"),
            Some(upper),
            self.tip(upper),
            sx,
            up,
            0.26,
            ([0.04, 0.04], [0.03, 0.032]),
            lim([-5.0, -150.0, -80.0], [5.0, 150.0, 80.0]),
        );
        self.add(
            &format!("{s}_hand"),
            Some(fore),
            self.tip(fore),
            sx,
            up,
            0.16,
            ([0.018, 0.03], [0.012, 0.025]),
            lim([-60.0, -30.0, -10.0], [60.0, 30.0, 10.0]),
        );
    }

    /// Thigh, shin and foot of one side (`side` ±1 along X, `s` the name prefix), hanging
    /// from the pelvis.
    fn leg(&mut self, pelvis: usize, side: f32, s: &str) {
        let up = Vec3::Y;
        let fwd = Vec3::Z;
        let thigh = self.add(
            &format!("{s}_thigh"),
            Some(pelvis),
            Vec3::new(side * 0.095, 0.92, 0.0),
            -up,
            fwd,
            0.45,
            ([0.075, 0.075], [0.05, 0.05]),
            lim([-30.0, -30.0, -40.0], [30.0, 30.0, 40.0]),
        );
        let shin = self.add(
            &format!("{s}_shin"),
            Some(thigh),
            self.tip(thigh),
            -up,
            fwd,
            0.43,
            ([0.048, 0.048], [0.035, 0.035]),
            lim([-3.0, -3.0, -150.0], [3.0, 3.0, 3.0]),
        );
        self.add(
            &format!("{s}_foot"),
            Some(shin),
            self.tip(shin),
            Vec3::new(0.0, -0.35, 1.0),
            up,
            0.19,
            ([0.04, 0.045], [0.025, 0.045]),
            lim([-30.0, -15.0, -40.0], [30.0, 15.0, 40.0]),
        );
    }
}

/// Grid cell of the skin's surface nets: thinner than the hand (2.4 cm at its tip) and the
/// foot, so neither breaks apart (metres).
pub const SKIN_CELL_M: f32 = 0.018;

/// Smooth-union blend width: limbs meet the torso in a fillet about this wide (metres).
pub const SKIN_BLEND_M: f32 = 0.04;

/// Weight change allowed per section radius of surface distance when smoothing: a joint's
/// blend spans about one radius on either side, as an artist's falloff would.
pub const SKIN_SMOOTH_THRESHOLD: f32 = 0.5;

/// Most smoothing sweeps (this skin converges, every edge within 1e-4 of its limit, in
/// about 290).
pub const SKIN_SMOOTH_ITERATIONS: usize = 400;

/// Each bone's pseudo-cylinder from its authored sections, in model space.
pub fn bone_sections(rig: &crate::rig::WeberRig) -> Vec<BoneSection> {
    let (rot, base) = rest_frames(rig);
    rig.bones
        .iter()
        .enumerate()
        .map(|(i, bone)| {
            let s0 = bone.base_section.unwrap_or(Section {
                radii_m: [0.05; 2],
                offset_m: [0.0; 2],
            });
            let s1 = bone.tip_section.unwrap_or(s0);
            BoneSection::new(
                base[i],
                rot[i] * Vec3::X,
                rot[i] * Vec3::Y,
                bone.length_m,
                Vec2::from(s0.radii_m),
                Vec2::from(s1.radii_m),
                Vec2::from(s0.offset_m),
                Vec2::from(s1.offset_m),
            )
        })
        .collect()
}

/// Rest model rotation and base position of every bone (parents before children).
fn rest_frames(rig: &crate::rig::WeberRig) -> (Vec<Quat>, Vec<Vec3>) {
    let mut rot: Vec<Quat> = Vec::with_capacity(rig.bones.len());
    let mut base: Vec<Vec3> = Vec::with_capacity(rig.bones.len());
    for (i, b) in rig.bones.iter().enumerate() {
        let local = Quat::from_array(b.rotation).normalize();
        let t = rig.local_translation(i, b.displacement_m);
        match b.parent.filter(|&p| p < i) {
            Some(p) => {
                base.push(base[p] + rot[p] * t);
                rot.push((rot[p] * local).normalize());
            }
            None => {
                base.push(t);
                rot.push(local);
            }
        }
    }
    (rot, base)
}

/// The humanoid's skin: one connected surface round its bones' pseudo-cylinders
/// ([`crate::weights::surface`]).
pub fn skin_surface(rig: &crate::rig::WeberRig) -> crate::error::Result<Surface> {
    let sections = bone_sections(rig);
    let parents: Vec<Option<usize>> = rig.bones.iter().map(|b| b.parent).collect();
    SurfaceJob {
        sections: &sections,
        cell_m: SKIN_CELL_M,
        blend_m: SKIN_BLEND_M,
        parents: &parents,
    }
    .run()
}

/// The skinned mesh: the surface, weighted by regeneration against the bones' authored
/// pseudo-cylinders, then smoothed (Weber §11 then §10), four influences at most.
fn skin(bones: &[Bone]) -> crate::error::Result<RigMesh> {
    let rig = WeberRig::new("humanoid", bones.to_vec());
    let surface = skin_surface(&rig)?;
    let sections = bone_sections(&rig);
    let axes: Vec<BoneAxis> = sections
        .iter()
        .zip(&rig.bones)
        .map(|(s, b)| BoneAxis {
            name: b.name.clone(),
            base: s.base,
            tip: s.base + s.axis * s.length,
            parent: b.parent,
        })
        .collect();
    let regenerated = RegenerateJob {
        mesh: &surface.mesh,
        bones: &axes,
        sections: Some(&sections),
    }
    .run()?;
    let mut influences = regenerated.influences();
    SmoothJob {
        mesh: &surface.mesh,
        sections: &sections,
        threshold: SKIN_SMOOTH_THRESHOLD,
        max_iterations: SKIN_SMOOTH_ITERATIONS,
        max_influences: 4,
        influences: &mut influences,
    }
    .run()?;
    Ok(RigMesh {
        positions: surface
            .mesh
            .positions
            .iter()
            .map(|p| p.to_array())
            .collect(),
        normals: surface.normals.iter().map(|n| n.to_array()).collect(),
        triangles: surface.mesh.triangles,
        weights: influences,
        color: [0.78, 0.66, 0.58, 1.0],
    })
}

/// Local rotation key: the reference rotation followed by `delta_model` (a rotation about a
/// model-space axis) expressed in the bone's reference frame.
fn rot_key(b: &Builder, bone: usize, delta_model: Quat, time_s: f32) -> Key<4> {
    let r = b.model_rot[bone];
    let local_delta = r.inverse() * delta_model * r;
    let q = (Quat::from_array(b.bones[bone].rotation) * local_delta).normalize();
    Key {
        time_s,
        value: q.to_array(),
    }
}

fn find(b: &Builder, name: &str) -> usize {
    b.bones.iter().position(|x| x.name == name).unwrap_or(0)
}

/// Irregular key times over one cycle: denser around the phase extremes, and different for
/// every track (offset by `jitter`).
fn cycle_times(period_s: f32, jitter: f32) -> Vec<f32> {
    let fr = [0.0, 0.09, 0.21, 0.3, 0.43, 0.5, 0.58, 0.71, 0.8, 0.93, 1.0];
    fr.iter()
        .enumerate()
        .map(|(i, f)| {
            // Shift inner keys by at most 1% of the period: the gaps are >= 7%.
            let j = if i == 0 || i + 1 == fr.len() {
                0.0
            } else {
                0.01 * (i as f32 * 1.7 + jitter).sin()
            };
            (f + j) * period_s
        })
        .collect()
}

/// Walk (and, with a larger amplitude and shorter period, run): legs and arms swing in
/// opposite phases, knees bend on the forward swing, the pelvis bobs.
fn walk(b: &Builder, name: &str, period_s: f32, amp: f32) -> Motion {
    let mut tracks = Vec::new();
    let swing = 24f32.to_radians() * amp;
    for (side, s) in [(0.0f32, "l"), (PI, "r")] {
        let times = cycle_times(period_s, 1.0 + side);
        let phase = |t: f32| TAU * t / period_s + side;
        // Thigh: forward swing is a negative rotation about +X (foot towards +Z).
        tracks.push(Track {
            scale_keys: Vec::new(),
            bone: format!("{s}_thigh"),
            displacement_keys: vec![],
            rotation_keys: times
                .iter()
                .map(|&t| {
                    rot_key(
                        b,
                        find(b, &format!("{s}_thigh")),
                        Quat::from_rotation_x(-swing * phase(t).sin()),
                        t,
                    )
                })
                .collect(),
        });
        // Knee bends (positive about +X) mostly while the leg swings forward.
        tracks.push(Track {
            scale_keys: Vec::new(),
            bone: format!("{s}_shin"),
            displacement_keys: vec![],
            rotation_keys: cycle_times(period_s, 2.0 + side)
                .iter()
                .map(|&t| {
                    let bend =
                        (0.15 + 0.55 * (0.5 + 0.5 * (phase(t) + 0.9).sin()).powi(2)) * amp * 1.1;
                    rot_key(
                        b,
                        find(b, &format!("{s}_shin")),
                        Quat::from_rotation_x(bend),
                        t,
                    )
                })
                .collect(),
        });
        tracks.push(Track {
            scale_keys: Vec::new(),
            bone: format!("{s}_foot"),
            displacement_keys: vec![],
            rotation_keys: times
                .iter()
                .map(|&t| {
                    rot_key(
                        b,
                        find(b, &format!("{s}_foot")),
                        Quat::from_rotation_x(0.25 * amp * (phase(t) - 0.6).sin()),
                        t,
                    )
                })
                .collect(),
        });
        // Arms hang (rotated down about Z) and swing opposite to the same-side leg.
        let down = if s == "l" { -1.2 } else { 1.2 };
        tracks.push(Track {
            scale_keys: Vec::new(),
            bone: format!("{s}_upper_arm"),
            displacement_keys: vec![],
            rotation_keys: cycle_times(period_s, 3.0 + side)
                .iter()
                .map(|&t| {
                    rot_key(
                        b,
                        find(b, &format!("{s}_upper_arm")),
                        Quat::from_rotation_x(0.8 * swing * phase(t).sin())
                            * Quat::from_rotation_z(down),
                        t,
                    )
                })
                .collect(),
        });
        tracks.push(Track {
            scale_keys: Vec::new(),
            bone: format!("{s}_forearm"),
            displacement_keys: vec![],
            rotation_keys: times
                .iter()
                .map(|&t| {
                    let bend = (0.35 + 0.25 * amp * (0.5 - 0.5 * phase(t).sin()))
                        * if s == "l" { -1.0 } else { 1.0 };
                    rot_key(
                        b,
                        find(b, &format!("{s}_forearm")),
                        Quat::from_rotation_y(bend),
                        t,
                    )
                })
                .collect(),
        });
    }
    // Pelvis bob (twice per cycle) and a forward lean for running.
    let pelvis = find(b, "pelvis");
    let base = b.bones[pelvis].displacement_m;
    tracks.push(Track {
        scale_keys: Vec::new(),
        bone: "pelvis".into(),
        displacement_keys: cycle_times(period_s, 5.0)
            .iter()
            .map(|&t| Key {
                time_s: t,
                value: [
                    base[0],
                    base[1] + 0.025 * amp * (2.0 * TAU * t / period_s).cos(),
                    base[2],
                ],
            })
            .collect(),
        rotation_keys: cycle_times(period_s, 6.0)
            .iter()
            .map(|&t| {
                rot_key(
                    b,
                    pelvis,
                    Quat::from_rotation_y(0.08 * amp * (TAU * t / period_s).sin()),
                    t,
                )
            })
            .collect(),
    });
    tracks.push(Track {
        scale_keys: Vec::new(),
        bone: "spine".into(),
        displacement_keys: vec![],
        rotation_keys: [0.0, 0.37 * period_s, period_s]
            .iter()
            .map(|&t| {
                rot_key(
                    b,
                    find(b, "spine"),
                    Quat::from_rotation_x(
                        0.06 * (amp - 1.0) * 2.0 + 0.02 * (TAU * t / period_s).cos(),
                    ),
                    t,
                )
            })
            .collect(),
    });
    Motion {
        name: name.into(),
        looping: true,
        tracks,
    }
}

/// Overhand throw with the right arm: wind-up back, chest twist, release forward.
fn throw(b: &Builder) -> Motion {
    // (time, upper-arm pitch about X, elbow bend, chest twist about Y)
    let keys: [(f32, f32, f32, f32); 6] = [
        (0.0, 0.0, 0.3, 0.0),
        (0.35, 1.2, 1.6, -0.5),
        (0.55, 1.5, 2.2, -0.6),
        (0.72, -0.3, 0.9, 0.4),
        (0.9, -0.9, 0.3, 0.5),
        (1.3, 0.0, 0.3, 0.0),
    ];
    let r_upper = find(b, "r_upper_arm");
    let r_fore = find(b, "r_forearm");
    let chest = find(b, "chest");
    let l_upper = find(b, "l_upper_arm");
    let tracks = vec![
        Track {
            scale_keys: Vec::new(),
            bone: "r_upper_arm".into(),
            displacement_keys: vec![],
            rotation_keys: keys
                .iter()
                .map(|&(t, p, _, _)| {
                    rot_key(
                        b,
                        r_upper,
                        Quat::from_rotation_x(p) * Quat::from_rotation_z(0.9 - 0.5 * p.max(0.0)),
                        t,
                    )
                })
                .collect(),
        },
        Track {
            scale_keys: Vec::new(),
            bone: "r_forearm".into(),
            displacement_keys: vec![],
            // Fewer keys: the bend interpolates between these exactly enough.
            rotation_keys: [keys[0], keys[2], keys[3], keys[5]]
                .iter()
                .map(|&(t, _, e, _)| rot_key(b, r_fore, Quat::from_rotation_z(e), t))
                .collect(),
        },
        Track {
            scale_keys: Vec::new(),
            bone: "chest".into(),
            displacement_keys: vec![],
            rotation_keys: keys
                .iter()
                .map(|&(t, _, _, tw)| rot_key(b, chest, Quat::from_rotation_y(tw), t))
                .collect(),
        },
        Track {
            scale_keys: Vec::new(),
            bone: "l_upper_arm".into(),
            displacement_keys: vec![],
            rotation_keys: [(0.0, 0.0), (0.5, 0.6), (1.0, -0.2), (1.3, 0.0)]
                .iter()
                .map(|&(t, a)| {
                    rot_key(
                        b,
                        l_upper,
                        Quat::from_rotation_x(-a) * Quat::from_rotation_z(-0.9),
                        t,
                    )
                })
                .collect(),
        },
    ];
    Motion {
        name: "throw".into(),
        looping: false,
        tracks,
    }
}
