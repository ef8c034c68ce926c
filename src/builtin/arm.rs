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
    let raw = RawScene {
        name: "woodland_arm (built-in)".into(),
        nodes: vec![upper, fore, skinned],
        meshes: vec![Mesh {
            name: Some("arm".into()),
            primitives: vec![arm_skin(p)],
            default_morph_weights: Vec::new(),
        }],
        skins: vec![Skin {
            name: Some("arm".into()),
            joints: vec![0, 1],
            joint_from_bind,
        }],
        animations: vec![bend_animation(p), twist_animation(p)],
        roots: vec![0, 2],
        textures: Vec::new(),
        report: Default::default(),
    };
    SceneBuilder::build(raw)
}

/// The arm's vertex attributes and triangles as they are built.
#[derive(Default)]
struct Tube {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    joints: Vec<u32>,
    weights: Vec<f32>,
    indices: Vec<u32>,
}

impl Tube {
    /// Add a vertex weighted to the upper arm and the forearm by a smoothstep across the
    /// elbow's blend zone.
    fn push(&mut self, p: &ArmParams, pos: Vec3, n: Vec3, t: Vec4) {
        // Weight of the forearm: smoothstep across the elbow zone.
        let s = ((pos.x - (p.upper_length_m - p.blend_half_width_m))
            / (2.0 * p.blend_half_width_m))
            .clamp(0.0, 1.0);
        let w1 = s * s * (3.0 - 2.0 * s);
        self.positions.push(pos);
        self.normals.push(n);
        self.tangents.push(t);
        self.joints.extend_from_slice(&[0, 1, 0, 0]);
        self.weights.extend_from_slice(&[1.0 - w1, w1, 0.0, 0.0]);
    }
}

/// The closed tube skin round both bones: rings along +X, then an end cap at each end.
fn arm_skin(p: &ArmParams) -> Primitive {
    let total = p.upper_length_m + p.fore_length_m;
    let mut tube = Tube::default();
    let rv = p.ring_vertices;
    for r in 0..p.rings {
        let x = total * r as f32 / (p.rings - 1) as f32;
        for k in 0..rv {
            let a = TAU * k as f32 / rv as f32;
            let n = Vec3::new(0.0, a.cos(), a.sin());
            tube.push(
                p,
                Vec3::new(x, 0.0, 0.0) + n * p.radius_m,
                n,
                Vec4::new(1.0, 0.0, 0.0, 1.0),
            );
        }
    }
    for r in 0..p.rings as u32 - 1 {
        for k in 0..rv as u32 {
            let a = r * rv as u32 + k;
            let b = r * rv as u32 + (k + 1) % rv as u32;
            let (c, d) = (a + rv as u32, b + rv as u32);
            tube.indices.extend_from_slice(&[a, b, d, a, d, c]);
        }
    }
    // End caps: a centre vertex and a ring with axial normals.
    for (x, dir) in [(0.0f32, -1.0f32), (total, 1.0)] {
        let centre = tube.positions.len() as u32;
        let n = Vec3::new(dir, 0.0, 0.0);
        tube.push(p, Vec3::new(x, 0.0, 0.0), n, Vec4::new(0.0, 1.0, 0.0, 1.0));
        for k in 0..rv {
            let a = TAU * k as f32 / rv as f32;
            tube.push(
                p,
                Vec3::new(x, a.cos() * p.radius_m, a.sin() * p.radius_m),
                n,
                Vec4::new(0.0, 1.0, 0.0, 1.0),
            );
        }
        for k in 0..rv as u32 {
            let (a, b) = (centre + 1 + k, centre + 1 + (k + 1) % rv as u32);
            if dir > 0.0 {
                tube.indices.extend_from_slice(&[centre, a, b])
            } else {
                tube.indices.extend_from_slice(&[centre, b, a])
            }
        }
    }
    Primitive {
        positions: tube.positions,
        normals: Some(tube.normals),
        tangents: Some(tube.tangents),
        indices: tube.indices,
        topology: Topology::Triangles,
        skin_weights: Some(SkinWeights {
            width: 4,
            joints: tube.joints,
            weights: tube.weights,
        }),
        morph_targets: Vec::new(),
        base_color: [0.85, 0.62, 0.50, 1.0],
        base_color_texture: None,
        uvs: None,
        colors: None,
    }
}

/// "bend": the forearm (node 1) turned about +Z from 0 to `max_bend_rad` over `duration_s`.
fn bend_animation(p: &ArmParams) -> Animation {
    // Bend keys every 30°: slerp between them is exact rotation about Z.
    let steps = ((p.max_bend_rad / (PI / 6.0)).ceil() as usize).max(1);
    let mut times_s = Vec::new();
    let mut values = Vec::new();
    for i in 0..=steps {
        let f = i as f32 / steps as f32;
        times_s.push(p.duration_s * f);
        values.extend_from_slice(&Quat::from_rotation_z(p.max_bend_rad * f).to_array());
    }
    Animation {
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
    }
}

/// "twist": a 180° twist of the forearm about its own axis over `duration_s` (Weber,
/// "Run-Time Skin Deformation", §Shortcomings of Vertex Blending, Figure 9).
fn twist_animation(p: &ArmParams) -> Animation {
    let twist_steps = 6;
    Animation {
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
    }
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
