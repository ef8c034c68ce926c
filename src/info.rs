//! What a model holds, in words and as data: skins with their joints (index, node, name or
//! label, parent), draws with their vertices, influences, morph targets and attributes,
//! mirrored nodes, base colour textures, animations with their interpolation modes, and every
//! repair and warning the importer made. `skinview info` prints it (and writes it as JSON); the viewer shows it.

use serde::Serialize;

use crate::frame::FrameState;
use crate::scene::Scene;

/// Version of the JSON form of [`InfoReport`] (bumped when a field changes meaning).
pub const INFO_SCHEMA: &str = "skinview-info/1";

/// What a model holds (see the module documentation); its [`std::fmt::Display`] is the
/// `info` report and its JSON form is `info`'s JSON.
#[derive(Clone, Debug, Serialize)]
pub struct InfoReport {
    /// [`INFO_SCHEMA`].
    pub schema: &'static str,
    /// Model name.
    pub model: String,
    /// Nodes in the scene (joints, meshes, the rest).
    pub nodes: usize,
    /// Skins, each with its joints.
    pub skins: Vec<SkinInfo>,
    /// Draws (node, mesh, primitive).
    pub draws: Vec<DrawInfo>,
    /// Vertices over every draw.
    pub vertices: usize,
    /// Joint nodes over every skin, each once (a joint two skins share counts once).
    pub joints: usize,
    /// Largest number of influences of any vertex.
    pub max_influences: usize,
    /// Rigid draws whose node is mirrored (negative determinant: the winding flips).
    pub mirrored_nodes: Vec<usize>,
    /// Decoded base colour textures (what [`DrawInfo::texture`] indexes).
    pub textures: Vec<TextureInfo>,
    /// Animations.
    pub animations: Vec<AnimationInfo>,
    /// The importer's repairs and warnings.
    pub notes: Vec<NoteInfo>,
}

/// One skin.
#[derive(Clone, Debug, Serialize)]
pub struct SkinInfo {
    /// Its name in the file.
    pub name: Option<String>,
    /// Its joints, in the skin's order (the order of the inverse bind matrices).
    pub joints: Vec<JointInfo>,
}

/// One joint of a skin.
#[derive(Clone, Debug, Serialize)]
pub struct JointInfo {
    /// Position in the skin's joint list.
    pub index: usize,
    /// Its node's index in the file.
    pub node: usize,
    /// Its node's name, or `node N` when it has none: what a bone argument takes.
    pub label: String,
    /// Whether the file names it.
    pub named: bool,
    /// The parent node's index in the file (`None`: a root).
    pub parent: Option<usize>,
}

/// One draw.
#[derive(Clone, Debug, Serialize)]
pub struct DrawInfo {
    /// Node index in the file.
    pub node: usize,
    /// Node name.
    pub name: Option<String>,
    /// Mesh index.
    pub mesh: usize,
    /// Primitive index in the mesh.
    pub primitive: usize,
    /// Vertices.
    pub vertices: usize,
    /// Indices.
    pub indices: usize,
    /// Topology name.
    pub topology: &'static str,
    /// Skin index (`None`: rigid).
    pub skin: Option<usize>,
    /// Weight sets of four.
    pub weight_sets: usize,
    /// Largest number of influences of a vertex.
    pub max_influences: usize,
    /// Morph targets.
    pub morph_targets: usize,
    /// Has normals.
    pub normals: bool,
    /// Has tangents.
    pub tangents: bool,
    /// Has texture coordinates.
    pub uvs: bool,
    /// Its base colour texture (index into [`InfoReport::textures`]).
    pub texture: Option<usize>,
}

/// One decoded texture.
#[derive(Clone, Debug, Serialize)]
pub struct TextureInfo {
    /// Its name in the file (an image's name or file name).
    pub name: Option<String>,
    /// Width (pixels).
    pub width: u32,
    /// Height (pixels).
    pub height: u32,
}

/// One animation.
#[derive(Clone, Debug, Serialize)]
pub struct AnimationInfo {
    /// Name in the file.
    pub name: Option<String>,
    /// Duration (s).
    pub duration_s: f32,
    /// Channels.
    pub channels: usize,
    /// Interpolation modes used.
    pub interpolations: Vec<&'static str>,
}

/// One repair or warning of the importer.
#[derive(Clone, Debug, Serialize)]
pub struct NoteInfo {
    /// Repaired (else a warning).
    pub repaired: bool,
    /// The field.
    pub field: String,
    /// What was found and done.
    pub message: String,
}

impl InfoReport {
    /// Describe `scene`.
    pub fn of(scene: &Scene) -> InfoReport {
        let file_index = |n: usize| scene.nodes[n].source_index;
        let skins = scene
            .skins
            .iter()
            .map(|sk| SkinInfo {
                name: sk.name.clone(),
                joints: sk
                    .joints
                    .iter()
                    .enumerate()
                    .map(|(index, &node)| JointInfo {
                        index,
                        node: file_index(node),
                        label: scene.node_label(node),
                        named: scene.nodes[node]
                            .name
                            .as_deref()
                            .is_some_and(|n| !n.is_empty()),
                        parent: scene.nodes[node].parent.map(file_index),
                    })
                    .collect(),
            })
            .collect();
        InfoReport {
            schema: INFO_SCHEMA,
            model: scene.name.clone(),
            nodes: scene.nodes.len(),
            skins,
            draws: draws(scene),
            vertices: scene.vertex_count(),
            joints: scene.joint_count(),
            max_influences: scene.max_influences(),
            mirrored_nodes: mirrored_nodes(scene),
            textures: scene
                .textures
                .iter()
                .map(|t| TextureInfo {
                    name: t.name.clone(),
                    width: t.image.width,
                    height: t.image.height,
                })
                .collect(),
            animations: scene
                .animations
                .iter()
                .map(|an| AnimationInfo {
                    name: an.name.clone(),
                    duration_s: an.duration_s(),
                    channels: an.channels.len(),
                    interpolations: an.interpolations().iter().map(|m| m.name()).collect(),
                })
                .collect(),
            notes: scene
                .report
                .notes
                .iter()
                .map(|n| NoteInfo {
                    repaired: n.repaired,
                    field: n.field.clone(),
                    message: n.message.clone(),
                })
                .collect(),
        }
    }
}

/// Every draw of `scene`, described.
fn draws(scene: &Scene) -> Vec<DrawInfo> {
    scene
        .draws
        .iter()
        .map(|d| {
            let p = scene.primitive(d);
            let node = &scene.nodes[d.node];
            let (weight_sets, max_influences) = p
                .skin_weights
                .as_ref()
                .map_or((0, 0), |w| (w.width / 4, w.max_influences()));
            DrawInfo {
                node: node.source_index,
                name: node.name.clone(),
                mesh: d.mesh,
                primitive: d.primitive,
                vertices: p.vertex_count(),
                indices: p.indices.len(),
                topology: p.topology.name(),
                skin: d.skin,
                weight_sets,
                max_influences,
                morph_targets: p.morph_targets.len(),
                normals: p.normals.is_some(),
                tangents: p.tangents.is_some(),
                uvs: p.uvs.is_some(),
                texture: p.base_color_texture,
            }
        })
        .collect()
}

/// Rigid draws' nodes (file indices) whose global transform has a negative determinant (glTF:
/// the triangle winding flips).
fn mirrored_nodes(scene: &Scene) -> Vec<usize> {
    let mut frame = FrameState::new(scene);
    if frame.evaluate(scene, None, 0.0).is_err() {
        return Vec::new();
    }
    scene
        .draws
        .iter()
        .filter(|d| d.skin.is_none() && frame.model_from_node[d.node].determinant() < 0.0)
        .map(|d| scene.nodes[d.node].source_index)
        .collect()
}

/// The description of a scene; its [`std::fmt::Display`] is the `info` report
/// ([`InfoReport`]'s).
pub struct ModelInfo<'a>(pub &'a Scene);

impl std::fmt::Display for ModelInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        InfoReport::of(self.0).fmt(f)
    }
}

impl std::fmt::Display for InfoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        InfoText {
            report: self,
            list_lines: None,
            cut_note: "",
        }
        .fmt(f)
    }
}

/// Lines `info` gives the joint list and the draw list each before it counts the rest in one
/// line: well above a game character's joints (Mixamo's rigs have 65; the shared models at most
/// 24), far below a scene of many skeletons (RecursiveSkeletons' 840 joints in 84 skins).
pub const LIST_LINES: usize = 200;

/// [`InfoReport`]'s text with the joint list and the draw list each cut to `list_lines` lines
/// (`None`: every line), the rest counted in one line that ends with `cut_note`.
pub struct InfoText<'a> {
    /// The report.
    pub report: &'a InfoReport,
    /// Lines each list may take; `None` for all.
    pub list_lines: Option<usize>,
    /// Ends the line that counts a cut list's rest: how to see every line.
    pub cut_note: &'a str,
}

impl std::fmt::Display for InfoText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "model: {}", self.report.model)?;
        writeln!(f, "nodes: {}", self.report.nodes)?;
        self.write_skins(f)?;
        self.write_draws(f)?;
        self.write_rest(f)
    }
}

impl InfoText<'_> {
    fn write_skins(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.report;
        writeln!(f, "skins: {}", r.skins.len())?;
        let mut left = self.list_lines.unwrap_or(usize::MAX);
        for (i, sk) in r.skins.iter().enumerate() {
            if left == 0 {
                let rest = &r.skins[i..];
                let joints = rest.iter().map(|s| s.joints.len()).sum();
                let more = count(rest.len(), "more skin", "more skins");
                let joints = count(joints, "joint", "joints");
                return writeln!(f, "  ... {more}, {joints} {}", self.cut_note);
            }
            left -= 1;
            writeln!(
                f,
                "  skin {i} {}: {}",
                quoted(sk.name.as_deref()),
                count(sk.joints.len(), "joint", "joints")
            )?;
            for (k, j) in sk.joints.iter().enumerate() {
                if left == 0 {
                    let rest = sk.joints.len() - k;
                    let more = count(rest, "more joint", "more joints");
                    writeln!(f, "    ... {more} {}", self.cut_note)?;
                    break;
                }
                left -= 1;
                writeln!(
                    f,
                    "    joint {}: node {} {}, parent {}",
                    j.index,
                    j.node,
                    if j.named {
                        format!("{:?}", j.label)
                    } else {
                        format!("(unnamed: {:?})", j.label)
                    },
                    j.parent.map_or("none".into(), |p| format!("node {p}"))
                )?;
            }
        }
        Ok(())
    }

    fn write_draws(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.report;
        writeln!(f, "draws (node, mesh, primitive): {}", r.draws.len())?;
        let shown = self.list_lines.unwrap_or(usize::MAX).min(r.draws.len());
        for d in &r.draws[..shown] {
            writeln!(
                f,
                "  node {} {} mesh {} prim {}: {} vertices, {} indices ({}), skin {}, weight sets \
                 {}, max influences {}, morph targets {}, normals {}, tangents {}, UVs {}, \
                 texture {}",
                d.node,
                quoted(d.name.as_deref()),
                d.mesh,
                d.primitive,
                d.vertices,
                d.indices,
                d.topology,
                d.skin.map_or("none".into(), |s| s.to_string()),
                d.weight_sets,
                d.max_influences,
                d.morph_targets,
                if d.normals { "yes" } else { "no" },
                if d.tangents { "yes" } else { "no" },
                if d.uvs { "yes" } else { "no" },
                d.texture.map_or("none".into(), |t| t.to_string()),
            )?;
        }
        if shown < r.draws.len() {
            let rest = r.draws.len() - shown;
            let more = count(rest, "more draw", "more draws");
            writeln!(f, "  ... {more} {}", self.cut_note)?;
        }
        Ok(())
    }

    fn write_rest(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.report;
        writeln!(
            f,
            "total: {} vertices drawn, {} joints, max influences {}",
            r.vertices, r.joints, r.max_influences
        )?;
        for n in &r.mirrored_nodes {
            writeln!(
                f,
                "  node {n}: negative determinant, triangle winding flipped"
            )?;
        }
        writeln!(f, "textures: {}", r.textures.len())?;
        for (i, t) in r.textures.iter().enumerate() {
            writeln!(
                f,
                "  texture {i} {}: {} x {} pixels",
                quoted(t.name.as_deref()),
                t.width,
                t.height
            )?;
        }
        writeln!(f, "animations: {}", r.animations.len())?;
        for (i, an) in r.animations.iter().enumerate() {
            writeln!(
                f,
                "  anim {i} {}: {:.3} s, {}, {}",
                quoted(an.name.as_deref()),
                an.duration_s,
                count(an.channels, "channel", "channels"),
                an.interpolations.join("/")
            )?;
        }
        writeln!(f, "repairs and warnings: {}", r.notes.len())?;
        for n in &r.notes {
            writeln!(
                f,
                "  {} {}: {}",
                if n.repaired { "repaired" } else { "warning" },
                n.field,
                n.message
            )?;
        }
        Ok(())
    }
}

/// A name from the file in quotes, or `(unnamed)`.
fn quoted(name: Option<&str>) -> String {
    match name.filter(|n| !n.is_empty()) {
        Some(n) => format!("{n:?}"),
        None => "(unnamed)".into(),
    }
}

/// `n` and a noun in the number `n` asks for: `1 channel`, `3 channels`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A transform taken apart for display: translation, rotation (a unit quaternion and Blender's
/// XYZ Euler angles in degrees: `R = Rz · Ry · Rx`) and scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransformParts {
    /// Translation (metres).
    pub translation: glam::Vec3,
    /// Rotation, unit quaternion (x, y, z, w).
    pub rotation: glam::Quat,
    /// The same rotation as Euler angles about X, Y and Z, applied X first (Blender's "XYZ").
    pub euler_deg: glam::Vec3,
    /// Scale (negative on one axis where the matrix mirrors).
    pub scale: glam::Vec3,
}

impl TransformParts {
    /// `m` taken apart (an affine matrix; shear is lost, as in every TRS display).
    pub fn of(m: &glam::Mat4) -> TransformParts {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        let rotation = rotation.normalize();
        TransformParts {
            translation,
            rotation,
            euler_deg: crate::math::euler_xyz_rad(rotation) * (180.0 / std::f32::consts::PI),
            scale,
        }
    }
}

/// What a bone does to the skin: over every deformed draw of every skin it belongs to, the
/// vertices it influences (a weight above zero), its largest weight, and its inverse bind
/// matrix in each skin. Set-up data: made when a bone is selected, not per frame.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneInfluence {
    /// The bone's node.
    pub node: usize,
    /// Vertices with a weight of this bone above zero (a vertex of two draws counts twice).
    pub vertices: usize,
    /// The largest weight it has on any vertex (0 when none).
    pub largest_weight: f32,
    /// Per skin that has it as a joint: the skin's index and the bone's inverse bind matrix
    /// there (`joint_from_bind`).
    pub inverse_binds: Vec<(usize, glam::Mat4)>,
    /// Per deformed draw (index into `Scene::draws`), its influenced vertex indices.
    pub draw_vertices: Vec<(usize, Vec<u32>)>,
}

impl BoneInfluence {
    /// The influence of `node` on `scene`'s skins. Cost: O(influences of the skins that have
    /// it).
    pub fn of(scene: &Scene, node: usize) -> BoneInfluence {
        let mut b = BoneInfluence {
            node,
            vertices: 0,
            largest_weight: 0.0,
            inverse_binds: Vec::new(),
            draw_vertices: Vec::new(),
        };
        for (s, skin) in scene.skins.iter().enumerate() {
            if let Some(j) = skin.joints.iter().position(|&n| n == node)
                && let Some(m) = skin.joint_from_bind.get(j)
            {
                b.inverse_binds.push((s, *m));
            }
        }
        for (d, draw) in scene.draws.iter().enumerate() {
            let Some(skin) = draw.skin.and_then(|s| scene.skins.get(s)) else {
                continue;
            };
            let Some(j) = skin.joints.iter().position(|&n| n == node) else {
                continue;
            };
            let Some(sw) = scene.primitive(draw).skin_weights.as_ref() else {
                continue;
            };
            let mut hit = Vec::new();
            for (v, (joints, weights)) in sw
                .joints
                .chunks_exact(sw.width.max(1))
                .zip(sw.weights.chunks_exact(sw.width.max(1)))
                .enumerate()
            {
                let w = joints
                    .iter()
                    .zip(weights)
                    .filter(|(jj, _)| **jj as usize == j)
                    .map(|(_, w)| *w)
                    .sum::<f32>();
                if w > 0.0 {
                    hit.push(v as u32);
                    b.largest_weight = b.largest_weight.max(w);
                }
            }
            b.vertices += hit.len();
            if !hit.is_empty() {
                b.draw_vertices.push((d, hit));
            }
        }
        b
    }
}
