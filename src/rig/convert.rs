//! Conversion between a native rig and the internal [`Scene`]: [`WeberRig::to_scene`] and its
//! inverse [`WeberRig::from_scene`] (the convention is in [`crate::rig`]).

use std::collections::HashMap;

use glam::{Mat4, Quat, Vec3};

use super::format::{mesh_steps, motion_steps};
use super::{Bone, Key, LimitsDeg, LinkSettings, Motion, RigMesh, Section, Track, WeberRig};
use crate::anim::{Animation, Channel, Interpolation, Path as AnimPath, Sampler};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};
use crate::weights::Work;

/// Weber metadata kept per scene node so the conversion can be inverted and later stages
/// (IK limits, bone links, weight tools) find it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneMeta {
    /// The bone's length along its local +X (0 for non-bone nodes).
    pub length_m: f32,
    /// The bone's joint limits, degrees.
    pub limits_deg: Option<LimitsDeg>,
    /// The bone's base cross-section.
    pub base_section: Option<Section>,
    /// The bone's tip cross-section.
    pub tip_section: Option<Section>,
    /// The bone's link settings.
    pub links: Option<LinkSettings>,
    /// Whether the bone is a muscle ([`Bone::muscle`]).
    pub muscle: bool,
}

impl BoneMeta {
    /// Mean base cross-section radius (the "joint radius" of Weber, "Run-Time Skin Deformation",
    /// §Bone Links), 0 when unknown.
    pub fn joint_radius_m(&self) -> f32 {
        self.base_section
            .map_or(0.0, |s| 0.5 * (s.radii_m[0] + s.radii_m[1]))
    }
}

/// A native rig as the internal scene plus its per-node bone metadata (`bones[node]`; the mesh
/// node has a default entry).
#[derive(Clone, Debug)]
pub struct RigScene {
    /// The internal scene: one node per bone, plus a mesh node when the rig has a mesh.
    pub scene: Scene,
    /// Per scene node (index into `scene.nodes`): its bone metadata.
    pub bones: Vec<BoneMeta>,
    /// Scene node of each rig bone (rig bone order).
    pub node_of_bone: Vec<usize>,
    /// Per animation (= per motion): whether it loops.
    pub looping: Vec<bool>,
}

impl WeberRig {
    /// Bone index by name, for every bone at once.
    fn bone_indices(&self) -> std::collections::HashMap<&str, usize> {
        self.bones
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.as_str(), i))
            .collect()
    }

    /// Parent-relative translation of bone `i`'s base: `(parent_length, 0, 0) + displacement`.
    pub fn local_translation(&self, i: usize, displacement: [f32; 3]) -> Vec3 {
        let parent_len = self.bones[i].parent.map_or(0.0, |p| self.bones[p].length_m);
        Vec3::new(
            parent_len + displacement[0],
            displacement[1],
            displacement[2],
        )
    }

    /// One vertex's weights as the skinning paths use them: a muscle bone `m` of weight `w` becomes
    /// `+w` on `m` and `−w` on its parent `p`, so the vertex moves by `w · (model_from_bind[m] −
    /// model_from_bind[p]) · v` on top of its ordinary blend: zero at rest and whenever the muscle
    /// only follows its parent (its local transform at rest), `w` times the muscle's own
    /// deformation (a scale about its joint: a bulge) otherwise. Linear blending applies the
    /// weights as given; dual quaternions see the same pair as an equal and opposite rigid part
    /// plus the muscle's scale, so they bulge alike; stitching follows the vertex's largest weight.
    /// Entries that cancel to exactly 0 are dropped. Order: the list's order, the parents of
    /// muscles merged where they already appear, otherwise appended.
    fn expand_muscles(&self, ws: &[(u32, f32)]) -> Vec<(u32, f32)> {
        let mut out: Vec<(u32, f32)> = ws.to_vec();
        for &(b, w) in ws {
            let bone = &self.bones[b as usize];
            if let (true, Some(p)) = (bone.muscle, bone.parent) {
                match out.iter_mut().find(|e| e.0 == p as u32) {
                    Some(e) => e.1 -= w,
                    None => out.push((p as u32, -w)),
                }
            }
        }
        out.retain(|e| e.1 != 0.0);
        out
    }

    /// Inverse of [`Self::expand_muscles`] (up to f32 rounding of the parents' weights).
    fn collapse_muscles(&self, mut ws: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
        let muscles: Vec<(u32, f32)> = ws
            .iter()
            .copied()
            .filter(|e| self.bones.get(e.0 as usize).is_some_and(|b| b.muscle))
            .collect();
        for (m, w) in muscles {
            if let Some(p) = self.bones[m as usize].parent {
                match ws.iter_mut().find(|e| e.0 == p as u32) {
                    Some(e) => e.1 += w,
                    None => ws.push((p as u32, w)),
                }
            }
        }
        ws.retain(|e| e.1 != 0.0);
        ws
    }

    /// Convert to the internal scene (see the [module documentation](crate::rig)).
    pub fn to_scene(&self) -> Result<RigScene> {
        self.to_scene_counted(&mut Work::default())
    }

    /// [`Self::to_scene`], its steps added to `work`: the validation's, one a bone, vertex,
    /// influence, triangle, track and key converted, and [`SceneBuilder::build_counted`]'s.
    pub fn to_scene_counted(&self, work: &mut Work) -> Result<RigScene> {
        self.validate_counted(&self.name, work)?;
        let nb = self.bones.len();
        // Nodes, bind matrices and the name index: one pass over the bones each.
        *work += Work::steps(3 * nb);
        let (mut nodes, mut metas) = self.bone_nodes();
        let mut raw = RawScene {
            name: self.name.clone(),
            ..Default::default()
        };
        if let Some(m) = &self.mesh {
            *work += Work::steps(mesh_steps(m));
            raw.meshes.push(self.skin_mesh(m));
            raw.skins.push(self.bind_skin(&nodes));
            nodes.push(Node {
                name: Some(format!("{}_skin", self.name)),
                source_index: nb,
                parent: None,
                rest: Trs::IDENTITY,
                matrix: None,
                mesh: Some(0),
                skin: Some(0),
                morph_weights: None,
            });
            metas.push(BoneMeta::default());
        }
        let bone_index = self.bone_indices();
        for m in &self.motions {
            *work += Work::steps(motion_steps(m));
            raw.animations.push(self.motion_animation(m, &bone_index));
        }
        raw.nodes = nodes;
        let scene = SceneBuilder::build_counted(raw, work)?;
        // The builder keeps bone order (parents come first already); map by source index.
        *work += Work::steps(scene.nodes.len());
        let mut bones = vec![BoneMeta::default(); scene.nodes.len()];
        let mut node_of_bone = vec![0; nb];
        for (ni, n) in scene.nodes.iter().enumerate() {
            if n.source_index < metas.len() {
                bones[ni] = metas[n.source_index].clone();
            }
            if n.source_index < nb {
                node_of_bone[n.source_index] = ni;
            }
        }
        Ok(RigScene {
            scene,
            bones,
            node_of_bone,
            looping: self.motions.iter().map(|m| m.looping).collect(),
        })
    }

    /// One node per bone (in bone order, source index = bone index) and its metadata.
    fn bone_nodes(&self) -> (Vec<Node>, Vec<BoneMeta>) {
        let nb = self.bones.len();
        let mut nodes = Vec::with_capacity(nb + 1);
        let mut metas = Vec::with_capacity(nb + 1);
        for (i, b) in self.bones.iter().enumerate() {
            let q = Quat::from_array(b.rotation).normalize();
            nodes.push(Node {
                name: Some(b.name.clone()),
                source_index: i,
                parent: b.parent,
                rest: Trs {
                    translation: self.local_translation(i, b.displacement_m),
                    rotation: q,
                    scale: Vec3::ONE,
                },
                matrix: None,
                mesh: None,
                skin: None,
                morph_weights: None,
            });
            metas.push(BoneMeta {
                length_m: b.length_m,
                limits_deg: b.limits_deg,
                base_section: b.base_section,
                tip_section: b.tip_section,
                links: b.links,
                muscle: b.muscle,
            });
        }
        (nodes, metas)
    }

    /// The skin of every bone, bound at the rest pose of `bone_nodes` (the bones' nodes,
    /// parents first): its inverse bind matrices are the inverse rest model matrices.
    fn bind_skin(&self, bone_nodes: &[Node]) -> Skin {
        let nb = self.bones.len();
        let mut model_from_joint = Vec::<Mat4>::with_capacity(nb);
        for n in bone_nodes.iter() {
            let local = n.rest.to_mat4();
            model_from_joint.push(match n.parent {
                Some(p) => model_from_joint[p] * local,
                None => local,
            });
        }
        Skin {
            name: Some(self.name.clone()),
            joints: (0..nb).collect(),
            joint_from_bind: model_from_joint.iter().map(|m| m.inverse()).collect(),
        }
    }

    /// The rig's mesh as one skinned primitive, muscles expanded
    /// ([`Self::expand_muscles`]), as many influence slots as the widest vertex needs rounded
    /// up to a multiple of 4.
    fn skin_mesh(&self, m: &RigMesh) -> Mesh {
        let lists: Vec<Vec<(u32, f32)>> =
            m.weights.iter().map(|ws| self.expand_muscles(ws)).collect();
        let max_inf = lists.iter().map(|w| w.len()).max().unwrap_or(1).max(1);
        let width = max_inf.div_ceil(4) * 4;
        let mut sw = SkinWeights {
            width,
            joints: vec![0; m.positions.len() * width],
            weights: vec![0.0; m.positions.len() * width],
        };
        for (v, ws) in lists.iter().enumerate() {
            for (k, &(b, w)) in ws.iter().enumerate() {
                sw.joints[v * width + k] = b;
                sw.weights[v * width + k] = w;
            }
        }
        Mesh {
            name: Some(format!("{}_skin", self.name)),
            primitives: vec![Primitive {
                positions: m.positions.iter().map(|p| Vec3::from(*p)).collect(),
                normals: Some(m.normals.iter().map(|p| Vec3::from(*p)).collect()),
                tangents: None,
                indices: m.triangles.iter().flatten().copied().collect(),
                topology: Topology::Triangles,
                skin_weights: Some(sw),
                morph_targets: Vec::new(),
                base_color: m.color,
                base_color_texture: None,
                uvs: None,
                colors: None,
            }],
            default_morph_weights: Vec::new(),
        }
    }

    /// A motion as an animation: per track, LINEAR channels with the same keys (translations
    /// as node local translations, rotations normalised). Tracks of unknown bones are skipped.
    fn motion_animation(&self, m: &Motion, bone_index: &HashMap<&str, usize>) -> Animation {
        let mut channels = Vec::new();
        for t in &m.tracks {
            let Some(&i) = bone_index.get(t.bone.as_str()) else {
                continue;
            };
            if !t.displacement_keys.is_empty() {
                let values = t
                    .displacement_keys
                    .iter()
                    .flat_map(|k| self.local_translation(i, k.value).to_array())
                    .collect();
                channels.push(linear_channel(
                    i,
                    AnimPath::Translation,
                    &t.displacement_keys,
                    values,
                ));
            }
            if !t.scale_keys.is_empty() {
                let values = t.scale_keys.iter().flat_map(|k| k.value).collect();
                channels.push(linear_channel(i, AnimPath::Scale, &t.scale_keys, values));
            }
            if !t.rotation_keys.is_empty() {
                let values = t
                    .rotation_keys
                    .iter()
                    .flat_map(|k| Quat::from_array(k.value).normalize().to_array())
                    .collect();
                channels.push(linear_channel(
                    i,
                    AnimPath::Rotation,
                    &t.rotation_keys,
                    values,
                ));
            }
        }
        Animation {
            name: Some(m.name.clone()),
            channels,
        }
    }

    /// Inverse of [`WeberRig::to_scene`] for scenes it produced.
    pub fn from_scene(rs: &RigScene, name: &str) -> Result<WeberRig> {
        Self::from_scene_counted(rs, name, &mut Work::default())
    }

    /// [`Self::from_scene`], its steps added to `work`: one a node, bone, vertex, influence
    /// slot, triangle, channel and key read back.
    pub fn from_scene_counted(rs: &RigScene, name: &str, work: &mut Work) -> Result<WeberRig> {
        let scene = &rs.scene;
        // The node → bone map (its nodes and bones), then the bones.
        *work += Work::steps(scene.nodes.len() + 2 * rs.node_of_bone.len());
        let bone_by_node = bone_by_node(rs, name)?;
        let mut bones = Vec::with_capacity(rs.node_of_bone.len());
        for (b, &n) in rs.node_of_bone.iter().enumerate() {
            let node = &scene.nodes[n];
            let parent = node.parent.and_then(|p| bone_of(&bone_by_node, p));
            let parent_len = parent.map_or(0.0, |p| rs.bones[rs.node_of_bone[p]].length_m);
            let t = node.rest.translation;
            let meta = &rs.bones[n];
            bones.push(Bone {
                name: node.name.clone().unwrap_or_else(|| format!("bone{b}")),
                parent,
                length_m: meta.length_m,
                displacement_m: [t.x - parent_len, t.y, t.z],
                rotation: node.rest.rotation.to_array(),
                limits_deg: meta.limits_deg,
                base_section: meta.base_section,
                tip_section: meta.tip_section,
                links: meta.links,
                muscle: meta.muscle,
            });
        }
        let mut rig = WeberRig::new(name, bones);
        rig.mesh = rig.mesh_of(scene, &bone_by_node, name)?;
        if let Some(m) = &rig.mesh {
            *work += Work::steps(mesh_steps(m));
        }
        for (ai, a) in scene.animations.iter().enumerate() {
            *work += Work::steps(a.channels.iter().map(|c| 1 + c.sampler.times_s.len()).sum());
            let tracks = rig.tracks_of(a, &bone_by_node);
            rig.motions.push(Motion {
                name: a.name.clone().unwrap_or_else(|| format!("motion{ai}")),
                looping: rs.looping.get(ai).copied().unwrap_or(false),
                tracks,
            });
        }
        Ok(rig)
    }

    /// The mesh of the scene's first skinned draw (muscles collapsed,
    /// [`Self::collapse_muscles`]), in this rig's bones (`bone_by_node`: per scene node, its
    /// bone); `None` without one.
    fn mesh_of(
        &self,
        scene: &Scene,
        bone_by_node: &[Option<usize>],
        name: &str,
    ) -> Result<Option<RigMesh>> {
        let Some(d) = scene.draws.iter().find(|d| d.skin.is_some()) else {
            return Ok(None);
        };
        let p = scene.primitive(d);
        let skin = &scene.skins[d.skin.unwrap_or(0)];
        let w = p
            .skin_weights
            .as_ref()
            .ok_or_else(|| Error::invalid(name, "mesh", "skinned draw without weights"))?;
        Ok(Some(RigMesh {
            positions: p.positions.iter().map(|v| v.to_array()).collect(),
            normals: p
                .normals
                .as_ref()
                .map(|n| n.iter().map(|v| v.to_array()).collect())
                .unwrap_or_else(|| vec![[0.0, 1.0, 0.0]; p.positions.len()]),
            triangles: p
                .indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect(),
            weights: (0..p.vertex_count())
                .map(|v| {
                    let list: Vec<(u32, f32)> = (0..w.width)
                        .filter(|&k| w.weights[v * w.width + k] != 0.0)
                        .filter_map(|k| {
                            bone_of(
                                bone_by_node,
                                skin.joints[w.joints[v * w.width + k] as usize],
                            )
                            .map(|b| (b as u32, w.weights[v * w.width + k]))
                        })
                        .collect();
                    self.collapse_muscles(list)
                })
                .collect(),
            color: p.base_color,
        }))
    }

    /// An animation's channels on this rig's bones (`bone_by_node`: per scene node, its bone)
    /// as a motion's tracks, one per bone in order of first channel.
    fn tracks_of(&self, a: &Animation, bone_by_node: &[Option<usize>]) -> Vec<Track> {
        let mut tracks: Vec<Track> = Vec::new();
        let mut track_of_bone: HashMap<usize, usize> = HashMap::new();
        for ch in &a.channels {
            let Some(b) = bone_of(bone_by_node, ch.node) else {
                continue;
            };
            let idx = *track_of_bone.entry(b).or_insert_with(|| {
                tracks.push(Track {
                    bone: self.bones[b].name.clone(),
                    displacement_keys: Vec::new(),
                    rotation_keys: Vec::new(),
                    scale_keys: Vec::new(),
                });
                tracks.len() - 1
            });
            let s = &ch.sampler;
            match ch.path {
                AnimPath::Translation => {
                    let parent_len = self.bones[b].parent.map_or(0.0, |p| self.bones[p].length_m);
                    tracks[idx].displacement_keys =
                        keys(s, |v: [f32; 3]| [v[0] - parent_len, v[1], v[2]]);
                }
                AnimPath::Scale => tracks[idx].scale_keys = keys(s, |v| v),
                AnimPath::Rotation => tracks[idx].rotation_keys = keys(s, |v| v),
                _ => {}
            }
        }
        tracks
    }
}

/// The bone of scene node `n` (`bone_by_node` from [`bone_by_node`]), if any.
fn bone_of(bone_by_node: &[Option<usize>], n: usize) -> Option<usize> {
    bone_by_node.get(n).copied().flatten()
}

/// A LINEAR channel on `node` at the key times of `keys`, with `values` (3 or 4 per key as
/// `N`; 4 are a rotation).
fn linear_channel<const N: usize>(
    node: usize,
    path: AnimPath,
    keys: &[Key<N>],
    values: Vec<f32>,
) -> Channel {
    Channel {
        node,
        path,
        sampler: Sampler {
            interpolation: Interpolation::Linear,
            times_s: keys.iter().map(|k| k.time_s).collect(),
            values,
            components: N,
            is_rotation: N == 4,
        },
    }
}

/// The sampler's keys, `N` values each, mapped by `value`.
fn keys<const N: usize>(s: &Sampler, value: impl Fn([f32; N]) -> [f32; N]) -> Vec<Key<N>> {
    s.times_s
        .iter()
        .zip(s.values.chunks_exact(N))
        .map(|(&t, v)| Key {
            time_s: t,
            value: value(std::array::from_fn(|i| v[i])),
        })
        .collect()
}

/// Per scene node, the bone whose node it is (`rs.node_of_bone` inverted), after checking that
/// every bone has a node of its own in range and every node a bone record.
fn bone_by_node(rs: &RigScene, name: &str) -> Result<Vec<Option<usize>>> {
    let scene = &rs.scene;
    // Node → bone, once (a search per lookup is quadratic in bones).
    let mut bone_by_node = vec![None; scene.nodes.len()];
    for (b, &n) in rs.node_of_bone.iter().enumerate() {
        match bone_by_node.get_mut(n) {
            Some(slot) if slot.is_none() => *slot = Some(b),
            Some(_) => {
                return Err(Error::invalid(
                    name,
                    format!("node_of_bone[{b}]"),
                    format!("node {n} is already another bone's"),
                ));
            }
            None => {
                return Err(Error::invalid(
                    name,
                    format!("node_of_bone[{b}]"),
                    format!("node {n} out of range ({} nodes)", scene.nodes.len()),
                ));
            }
        }
    }
    if rs.bones.len() < scene.nodes.len() {
        return Err(Error::invalid(
            name,
            "bones",
            format!(
                "{} bone records for {} nodes",
                rs.bones.len(),
                scene.nodes.len()
            ),
        ));
    }
    Ok(bone_by_node)
}
