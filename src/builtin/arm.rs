//! Woodland's arm (Woodland, "Filling the Gaps"): an upper arm and a forearm bone along +X, a
//! closed tube skin around them with weights blended across the elbow, and two animations: "bend"
//! turns the forearm about +Z from 0° to 120° (the paper's 45/90/120° cases lie on it), "twist"
//! turns it 180° about its own axis (Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex
//! Blending: the worst case for blending).

use std::f32::consts::{PI, TAU};

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::anim::{Animation, Channel, Interpolation, Path, Sampler};
use crate::error::Result;
use crate::math::Trs;
use crate::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};

/// Dimensions of the generated arm (metres).
pub struct ArmParams {
    /// Length of the upper-arm bone along +X.
    pub upper_length_m: f32,
    /// Length of the forearm bone along +X.
    pub fore_length_m: f32,
    /// Radius of the tube skin.
    pub radius_m: f32,
    /// Rings along the whole arm and vertices per ring.
    pub rings: usize,
    /// Vertices per ring.
    pub ring_vertices: usize,
    /// Half-width of the weight blend zone around the elbow.
    pub blend_half_width_m: f32,
    /// Bend at the end of the animation.
    pub max_bend_rad: f32,
    /// Length of the "bend" and "twist" animations, in seconds.
    pub duration_s: f32,
}

impl Default for ArmParams {
    fn default() -> Self {
        ArmParams {
            upper_length_m: 0.30,
            fore_length_m: 0.28,
            radius_m: 0.045,
            rings: 48,
            ring_vertices: 24,
            blend_half_width_m: 0.05,
            max_bend_rad: 120f32.to_radians(),
            duration_s: 2.0,
        }
    }
}

/// Woodland's arm with the default parameters.
pub fn woodland_arm() -> Result<Scene> {
    woodland_arm_with(&ArmParams::default())
}

/// Woodland's arm with the dimensions and animation settings of `p`.
pub fn woodland_arm_with(p: &ArmParams) -> Result<Scene> {
    let total = p.upper_length_m + p.fore_length_m;
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut tangents = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    let mut push = |pos: Vec3, n: Vec3, t: Vec4, positions: &mut Vec<Vec3>| {
        // Weight of the forearm: smoothstep across the elbow zone.
        let s = ((pos.x - (p.upper_length_m - p.blend_half_width_m))
            / (2.0 * p.blend_half_width_m))
            .clamp(0.0, 1.0);
        let w1 = s * s * (3.0 - 2.0 * s);
        positions.push(pos);
        normals.push(n);
        tangents.push(t);
        joints.extend_from_slice(&[0, 1, 0, 0]);
        weights.extend_from_slice(&[1.0 - w1, w1, 0.0, 0.0]);
    };
    let rv = p.ring_vertices;
    for r in 0..p.rings {
        let x = total * r as f32 / (p.rings - 1) as f32;
        for k in 0..rv {
            let a = TAU * k as f32 / rv as f32;
            let n = Vec3::new(0.0, a.cos(), a.sin());
            push(
                Vec3::new(x, 0.0, 0.0) + n * p.radius_m,
                n,
                Vec4::new(1.0, 0.0, 0.0, 1.0),
                &mut positions,
            );
        }
    }
    let mut indices = Vec::new();
    for r in 0..p.rings as u32 - 1 {
        for k in 0..rv as u32 {
            let a = r * rv as u32 + k;
            let b = r * rv as u32 + (k + 1) % rv as u32;
            let (c, d) = (a + rv as u32, b + rv as u32);
            indices.extend_from_slice(&[a, b, d, a, d, c]);
        }
    }
    // End caps: a centre vertex and a ring with axial normals.
    for (x, dir) in [(0.0f32, -1.0f32), (total, 1.0)] {
        let centre = positions.len() as u32;
        let n = Vec3::new(dir, 0.0, 0.0);
        push(
            Vec3::new(x, 0.0, 0.0),
            n,
            Vec4::new(0.0, 1.0, 0.0, 1.0),
            &mut positions,
        );
        for k in 0..rv {
            let a = TAU * k as f32 / rv as f32;
            push(
                Vec3::new(x, a.cos() * p.radius_m, a.sin() * p.radius_m),
                n,
                Vec4::new(0.0, 1.0, 0.0, 1.0),
                &mut positions,
            );
        }
        for k in 0..rv as u32 {
            let (a, b) = (centre + 1 + k, centre + 1 + (k + 1) % rv as u32);
            if dir > 0.0 {
                indices.extend_from_slice(&[centre, a, b])
            } else {
                indices.extend_from_slice(&[centre, b, a])
            }
        }
    }
    let node = |name: &str, src: usize, parent: Option<usize>, t: Vec3| Node {
        name: Some(name.into()),
        source_index: src,
        parent,
        rest: Trs {
            translation: t,
            ..Trs::IDENTITY
        },
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    };
    let upper = node("upper_arm", 0, None, Vec3::ZERO);
    let fore = node("forearm", 1, Some(0), Vec3::new(p.upper_length_m, 0.0, 0.0));
    let mut skinned = node("arm_skin", 2, None, Vec3::ZERO);
    skinned.mesh = Some(0);
    skinned.skin = Some(0);
    let joint_from_bind = vec![
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::new(-p.upper_length_m, 0.0, 0.0)),
    ];
    // Bend keys every 30°: slerp between them is exact rotation about Z.
    let steps = ((p.max_bend_rad / (PI / 6.0)).ceil() as usize).max(1);
    let mut times_s = Vec::new();
    let mut values = Vec::new();
    for i in 0..=steps {
        let f = i as f32 / steps as f32;
        times_s.push(p.duration_s * f);
        values.extend_from_slice(&Quat::from_rotation_z(p.max_bend_rad * f).to_array());
    }
    let bend = Animation {
        name: Some("bend".into()),
        channels: vec![Channel {
            node: 1,
            path: Path::Rotation,
            sampler: Sampler {
                interpolation: Interpolation::Linear,
                times_s,
                values,
                components: 4,
                is_rotation: true,
            },
        }],
    };
    // A 180° twist of the forearm about its own axis (Weber, "Run-Time Skin Deformation",
    // §Shortcomings of Vertex Blending, Figure 9).
    let twist_steps = 6;
    let twist = Animation {
        name: Some("twist".into()),
        channels: vec![Channel {
            node: 1,
            path: Path::Rotation,
            sampler: Sampler {
                interpolation: Interpolation::Linear,
                times_s: (0..=twist_steps)
                    .map(|i| p.duration_s * i as f32 / twist_steps as f32)
                    .collect(),
                values: (0..=twist_steps)
                    .flat_map(|i| {
                        Quat::from_rotation_x(PI * i as f32 / twist_steps as f32).to_array()
                    })
                    .collect(),
                components: 4,
                is_rotation: true,
            },
        }],
    };
    let raw = RawScene {
        name: "woodland_arm (built-in)".into(),
        nodes: vec![upper, fore, skinned],
        meshes: vec![Mesh {
            name: Some("arm".into()),
            primitives: vec![Primitive {
                positions,
                normals: Some(normals),
                tangents: Some(tangents),
                indices,
                topology: Topology::Triangles,
                skin_weights: Some(SkinWeights {
                    width: 4,
                    joints,
                    weights,
                }),
                morph_targets: Vec::new(),
                base_color: [0.85, 0.62, 0.50, 1.0],
                base_color_texture: None,
                uvs: None,
                colors: None,
            }],
            default_morph_weights: Vec::new(),
        }],
        skins: vec![Skin {
            name: Some("arm".into()),
            joints: vec![0, 1],
            joint_from_bind,
        }],
        animations: vec![bend, twist],
        roots: vec![0, 2],
        textures: Vec::new(),
        report: Default::default(),
    };
    SceneBuilder::build(raw)
}

/// Woodland's arm as a native Weber rig: the same bones, skin and bend motion, plus the
/// metadata Weber's stages use (lengths, elbow limits, cross-sections, links at the elbow).
pub fn woodland_arm_rig() -> Result<crate::rig::WeberRig> {
    use crate::rig::{BoneMeta, LimitsDeg, LinkSettings, RigScene, Section, WeberRig};
    let p = ArmParams::default();
    let scene = woodland_arm_with(&p)?;
    let section = Some(Section {
        radii_m: [p.radius_m, p.radius_m],
        offset_m: [0.0, 0.0],
    });
    let mut bones = vec![BoneMeta::default(); scene.nodes.len()];
    let mut node_of_bone = vec![0; 2];
    for (i, n) in scene.nodes.iter().enumerate() {
        match n.name.as_deref() {
            Some("upper_arm") => {
                node_of_bone[0] = i;
                bones[i] = BoneMeta {
                    length_m: p.upper_length_m,
                    limits_deg: Some(LimitsDeg {
                        min: [-90.0, -90.0, -90.0],
                        max: [90.0, 90.0, 90.0],
                    }),
                    base_section: section,
                    tip_section: section,
                    links: None,
                    muscle: false,
                };
            }
            Some("forearm") => {
                node_of_bone[1] = i;
                // The elbow bends about Z only, up to 150°, with some twist.
                bones[i] = BoneMeta {
                    length_m: p.fore_length_m,
                    limits_deg: Some(LimitsDeg {
                        min: [0.0, -5.0, -90.0],
                        max: [150.0, 5.0, 90.0],
                    }),
                    base_section: section,
                    tip_section: section,
                    links: Some(LinkSettings {
                        count: 2,
                        length_m: None,
                        normal_fade: None,
                    }),
                    muscle: false,
                };
            }
            _ => {}
        }
    }
    let looping = vec![false; scene.animations.len()];
    WeberRig::from_scene(
        &RigScene {
            scene,
            bones,
            node_of_bone,
            looping,
        },
        "woodland_arm",
    )
}
