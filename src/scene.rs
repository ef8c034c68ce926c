//! The core scene: a node hierarchy in depth-first order, meshes, skins and animations.
//!
//! Importers (glTF, the built-in rigs) produce a [`RawScene`] in their own node order;
//! [`SceneBuilder::build`] enforces the invariants once, so every later stage can rely on them:
//!
//! 1. every parent index is smaller than its child's index (depth-first order), so
//!    local→model is one linear pass;
//! 2. every index (parent, mesh, skin, joint, animation target) is in range;
//! 3. skin joint lists are non-empty, have one inverse bind matrix each, all finite;
//! 4. per-vertex attribute arrays of a primitive have the same length and every joint index a
//!    vertex uses is below its skin's joint count;
//! 5. animation channels have at least one key, strictly increasing finite times, and the
//!    value count their interpolation needs; no two channels of one animation drive the same
//!    node and property (glTF 2.0 §3.11; samplers would otherwise disagree on the last write).
//!
//! Repairs applied by importers are recorded in the scene's [`Report`].

use glam::{Mat4, Vec2, Vec3, Vec4};

use crate::anim::{Animation, ClipName};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::weights::Work;

/// One node of the hierarchy.
#[derive(Clone, Debug)]
pub struct Node {
    /// Node name from the source file, if any.
    pub name: Option<String>,
    /// Index of this node in the source file (glTF node index), kept for reports and dumps.
    pub source_index: usize,
    /// Parent in this scene's node array (always smaller than this node's index).
    pub parent: Option<usize>,
    /// Rest local transform (glTF TRS). Animated by channels.
    pub rest: Trs,
    /// A node given as a `matrix` in glTF: used as its local transform instead of `rest`
    /// (such nodes cannot be animated by the glTF rules).
    pub matrix: Option<Mat4>,
    /// Mesh drawn at this node (index into `scene.meshes`).
    pub mesh: Option<usize>,
    /// Skin deforming this node's mesh (index into `scene.skins`).
    pub skin: Option<usize>,
    /// `node.weights`, which override `mesh.weights` as default morph weights.
    pub morph_weights: Option<Vec<f32>>,
}

/// Per-vertex joint influences in fixed-width sets of four (glTF JOINTS_n / WEIGHTS_n).
/// `joints.len() == weights.len() == vertex_count * width`, `width` a multiple of 4.
/// Joint indices are indices into the skin's joint list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinWeights {
    /// Influence slots per vertex (a multiple of 4).
    pub width: usize,
    /// Joint index per slot, `vertex * width + slot`; indices into the skin's joint list.
    pub joints: Vec<u32>,
    /// Weight per slot, parallel to `joints` (0 for an unused slot).
    pub weights: Vec<f32>,
}

impl SkinWeights {
    /// Number of vertices (`weights.len() / width`, 0 when `width` is 0).
    pub fn vertex_count(&self) -> usize {
        self.weights.len().checked_div(self.width).unwrap_or(0)
    }
    /// Largest number of non-zero weights on any vertex.
    pub fn max_influences(&self) -> usize {
        if self.width == 0 {
            return 0;
        }
        self.weights
            .chunks_exact(self.width)
            .map(|w| w.iter().filter(|&&x| x != 0.0).count())
            .max()
            .unwrap_or(0)
    }
}

/// A morph target: per-vertex offsets added to the base attributes, scaled by a weight.
#[derive(Clone, Debug, Default)]
pub struct MorphTarget {
    /// Position offsets (mesh space), one per vertex.
    pub positions: Option<Vec<Vec3>>,
    /// Normal offsets, one per vertex.
    pub normals: Option<Vec<Vec3>>,
    /// Tangent xyz offsets, one per vertex (handedness is not morphed).
    pub tangents: Option<Vec<Vec3>>,
}

/// How a primitive's index list is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One point per index.
    Points,
    /// One line segment per pair of indices.
    Lines,
    /// One triangle per three indices.
    Triangles,
}

impl Topology {
    /// In words: `points`, `lines`, `triangles`.
    pub fn name(self) -> &'static str {
        match self {
            Topology::Points => "points",
            Topology::Lines => "lines",
            Topology::Triangles => "triangles",
        }
    }
}

/// One drawable part of a mesh: per-vertex attributes, indices and optional skin weights.
#[derive(Clone, Debug)]
pub struct Primitive {
    /// Bind-pose vertex positions (mesh space).
    pub positions: Vec<Vec3>,
    /// Bind-pose vertex normals, one per position.
    pub normals: Option<Vec<Vec3>>,
    /// xyz tangent, w handedness (±1).
    pub tangents: Option<Vec<Vec4>>,
    /// Index list of the topology below (generated 0..n when the file has none; strips and
    /// fans are converted to lists on import).
    pub indices: Vec<u32>,
    /// How `indices` is read.
    pub topology: Topology,
    /// Joint influences per vertex (present on every skinned draw's primitive).
    pub skin_weights: Option<SkinWeights>,
    /// Morph targets, blended with the node's or mesh's morph weights.
    pub morph_targets: Vec<MorphTarget>,
    /// Material base colour factor (linear RGBA) for renders.
    pub base_color: [f32; 4],
    /// Base colour texture: an index into [`Scene::textures`], read with [`Primitive::uvs`].
    pub base_color_texture: Option<usize>,
    /// TEXCOORD_0, one per position (what the base colour texture is read with).
    pub uvs: Option<Vec<Vec2>>,
    /// COLOR_0 as linear RGBA, one per position (multiplies the base colour).
    pub colors: Option<Vec<Vec4>>,
}

impl Default for Primitive {
    /// An empty triangle list, white, untextured, unskinned.
    fn default() -> Self {
        Primitive {
            positions: Vec::new(),
            normals: None,
            tangents: None,
            indices: Vec::new(),
            topology: Topology::Triangles,
            skin_weights: None,
            morph_targets: Vec::new(),
            base_color: [1.0; 4],
            base_color_texture: None,
            uvs: None,
            colors: None,
        }
    }
}

/// How a texture coordinate outside [0, 1] is read (glTF sampler wrap modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wrap {
    /// Tile (glTF's default).
    #[default]
    Repeat,
    /// Hold the edge texel.
    ClampToEdge,
    /// Tile, mirroring every other copy.
    MirroredRepeat,
}

/// A decoded image with the sampler a material reads it through.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    /// Image name (or URI) from the source file, if any.
    pub name: Option<String>,
    /// Pixels, sRGB-encoded RGBA8 (base colour textures are sRGB in glTF).
    pub image: crate::image::Rgba8,
    /// Linear (true) or nearest magnification.
    pub mag_linear: bool,
    /// Linear (true) or nearest minification (no mipmaps are made).
    pub min_linear: bool,
    /// Wrap along U and V.
    pub wrap: [Wrap; 2],
}

impl Primitive {
    /// Number of vertices (`positions.len()`).
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// A mesh: a list of primitives sharing morph weights.
#[derive(Clone, Debug)]
pub struct Mesh {
    /// Mesh name from the source file, if any.
    pub name: Option<String>,
    /// The mesh's primitives.
    pub primitives: Vec<Primitive>,
    /// `mesh.weights`: default morph weights (zeros when absent).
    pub default_morph_weights: Vec<f32>,
}

impl Mesh {
    /// Largest morph target count over the primitives.
    pub fn morph_target_count(&self) -> usize {
        self.primitives
            .iter()
            .map(|p| p.morph_targets.len())
            .max()
            .unwrap_or(0)
    }
}

/// A skin: the joints that deform a mesh and their inverse bind matrices.
#[derive(Clone, Debug)]
pub struct Skin {
    /// Skin name from the source file, if any.
    pub name: Option<String>,
    /// Scene node index of each joint.
    pub joints: Vec<usize>,
    /// `joint_from_bind[j]`: inverse bind matrix (identity when the file has none).
    pub joint_from_bind: Vec<Mat4>,
}

/// Kinds of repair/warning an importer reports. Nothing is repaired silently.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Field at fault, e.g. `meshes[0].primitives[1].attributes.WEIGHTS_0`.
    pub field: String,
    /// What was found and, for a repair, what was done.
    pub message: String,
    /// True when data was changed (a repair), false for a plain warning.
    pub repaired: bool,
    /// The vertex it is about (the first or worst of those it counts), when it is about
    /// vertices: what `check`'s picture marks.
    pub vertex: Option<NoteVertex>,
}

/// A vertex of a mesh's primitive, as the importer numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoteVertex {
    /// The mesh (index into `scene.meshes`).
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// The vertex within the primitive.
    pub vertex: usize,
}

/// Repairs and warnings collected while importing a scene.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Notes in the order they were reported.
    pub notes: Vec<Note>,
}

impl Report {
    /// Record a repair (data was changed) of `field`.
    pub fn repair(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.notes.push(Note {
            field: field.into(),
            message: message.into(),
            repaired: true,
            vertex: None,
        });
    }
    /// Record a repair of `field` that changed `vertex` (the first or worst of several).
    pub fn repair_vertex(
        &mut self,
        field: impl Into<String>,
        message: impl Into<String>,
        vertex: NoteVertex,
    ) {
        self.repair(field, message);
        if let Some(note) = self.notes.last_mut() {
            note.vertex = Some(vertex);
        }
    }
    /// Record a warning about `field` (no data changed).
    pub fn warn(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.notes.push(Note {
            field: field.into(),
            message: message.into(),
            repaired: false,
            vertex: None,
        });
    }
}

/// Scene as an importer produces it: nodes in any order (parents given by source index).
#[derive(Clone, Debug, Default)]
pub struct RawScene {
    /// Model name used in messages (the file name for imported files).
    pub name: String,
    /// Nodes in importer order; `parent`, `mesh` and `skin` index this scene's arrays.
    pub nodes: Vec<Node>,
    /// Meshes, indexed by `Node::mesh`.
    pub meshes: Vec<Mesh>,
    /// Skins, indexed by `Node::skin`; joints index `nodes`.
    pub skins: Vec<Skin>,
    /// Animations; channel targets index `nodes`.
    pub animations: Vec<Animation>,
    /// Nodes of the displayed scene (indices into `nodes`); empty = every node.
    pub roots: Vec<usize>,
    /// Repairs and warnings made while importing.
    pub report: Report,
    /// Decoded textures, indexed by `Primitive::base_color_texture`.
    pub textures: Vec<Texture>,
}

/// One drawn (node, primitive) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    /// Node drawn (index into `scene.nodes`).
    pub node: usize,
    /// Mesh of that node (index into `scene.meshes`).
    pub mesh: usize,
    /// Primitive within the mesh (index into `mesh.primitives`).
    pub primitive: usize,
    /// Skin of that node (index into `scene.skins`), if skinned.
    pub skin: Option<usize>,
}

/// A validated scene (see the module documentation for its invariants).
#[derive(Clone, Debug)]
pub struct Scene {
    /// Model name used in messages (the file name for imported files).
    pub name: String,
    /// Nodes in depth-first order: every parent index is below its child's.
    pub nodes: Vec<Node>,
    /// Meshes, indexed by `Node::mesh` and `Draw::mesh`.
    pub meshes: Vec<Mesh>,
    /// Skins, indexed by `Node::skin`; joints are indices into `nodes`.
    pub skins: Vec<Skin>,
    /// Animations; channel targets are indices into `nodes`.
    pub animations: Vec<Animation>,
    /// All (node, primitive) pairs with a mesh, in source node then primitive order.
    pub draws: Vec<Draw>,
    /// Repairs and warnings made while importing.
    pub report: Report,
    /// Decoded textures, indexed by `Primitive::base_color_texture`.
    pub textures: Vec<Texture>,
}

impl Scene {
    /// Refuse a scene that draws nothing (a file with no mesh: an animation-only file, an
    /// FBX with its header alone): every command that draws or skins calls it first.
    pub fn require_draws(&self) -> Result<()> {
        match self.draws.is_empty() {
            true => Err(Error::NothingToRender {
                model: self.name.clone(),
            }),
            false => Ok(()),
        }
    }

    /// Draws that are deformed: skinned, or whose mesh has morph targets (the `dump` set).
    pub fn deformed_draws(&self) -> impl Iterator<Item = &Draw> {
        self.draws.iter().filter(|d| {
            d.skin.is_some()
                || !self.meshes[d.mesh].primitives[d.primitive]
                    .morph_targets
                    .is_empty()
        })
    }
    /// Indices (in `draws`) of the deformed draws, the `dump` set.
    pub fn deformed_draw_indices(&self) -> Vec<usize> {
        (0..self.draws.len())
            .filter(|&i| {
                let d = &self.draws[i];
                d.skin.is_some() || !self.primitive(d).morph_targets.is_empty()
            })
            .collect()
    }

    /// The primitive a draw draws.
    pub fn primitive(&self, d: &Draw) -> &Primitive {
        &self.meshes[d.mesh].primitives[d.primitive]
    }

    /// Joint nodes over all skins, each once (skins that share joints, as a split model's
    /// submesh skins do, count them once).
    pub fn joint_count(&self) -> usize {
        self.joint_nodes().len()
    }

    /// The nodes any skin uses as a joint, each once, in node order.
    pub fn joint_nodes(&self) -> Vec<usize> {
        let joint = self.joint_mask();
        (0..joint.len()).filter(|&j| joint[j]).collect()
    }

    /// Per node: whether any skin uses it as a joint.
    pub fn joint_mask(&self) -> Vec<bool> {
        let mut joint = vec![false; self.nodes.len()];
        for &j in self.skins.iter().flat_map(|s| &s.joints) {
            if let Some(seen) = joint.get_mut(j) {
                *seen = true;
            }
        }
        joint
    }

    /// Largest number of non-zero weights of any vertex of a skinned draw (0 without skins).
    pub fn max_influences(&self) -> usize {
        self.draws
            .iter()
            .filter(|d| d.skin.is_some())
            .filter_map(|d| self.primitive(d).skin_weights.as_ref())
            .map(|w| w.max_influences())
            .max()
            .unwrap_or(0)
    }

    /// Vertices over all draws.
    pub fn vertex_count(&self) -> usize {
        self.draws
            .iter()
            .map(|d| self.primitive(d).vertex_count())
            .sum()
    }

    /// An animation by index (`"2"`) or by name (`"walk"`); an index wins over a name that
    /// is also a number.
    pub fn find_animation(&self, index_or_name: &str) -> Result<usize> {
        let found = match index_or_name.parse::<usize>() {
            Ok(i) => (i < self.animations.len()).then_some(i),
            Err(_) => self
                .animations
                .iter()
                .position(|a| a.name.as_deref() == Some(index_or_name)),
        };
        found.ok_or_else(|| self.unknown_animation(index_or_name))
    }

    /// The error for an animation this scene does not have, asked for by `requested` (an
    /// index or a name): with the clip names nearest a name, for the message.
    pub fn unknown_animation(&self, requested: &str) -> Error {
        let closest = match requested.parse::<usize>() {
            Ok(_) => Vec::new(),
            Err(_) => crate::error::closest_names(
                requested,
                self.animations.iter().filter_map(|a| a.name.as_deref()),
            ),
        };
        Error::UnknownAnimation {
            model: self.name.clone(),
            requested: requested.to_string(),
            count: self.animations.len(),
            closest,
        }
    }

    /// How many ancestors `node` has (0 for a root or an unknown node).
    pub fn depth(&self, node: usize) -> usize {
        let mut depth = 0;
        let mut n = self.nodes.get(node).and_then(|n| n.parent);
        while let Some(p) = n {
            depth += 1;
            n = self.nodes.get(p).and_then(|n| n.parent);
        }
        depth
    }

    /// [`Scene::depth`] of every node, in one pass (parents come before their children).
    pub fn depths(&self) -> Vec<usize> {
        let mut depth = vec![0usize; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent.filter(|&p| p < i) {
                depth[i] = depth[p] + 1;
            }
        }
        depth
    }

    /// A node as a user names it: its name (the first node of that name, in depth-first
    /// order), else its label as the viewer and `info` show it — `node N`, `nodes[N]` or `N`,
    /// N the node's index in the file — so joints without names can be named too.
    pub fn find_node(&self, name: &str) -> Result<usize> {
        let by_name = self
            .nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name));
        by_name
            .or_else(|| {
                let t = name.trim();
                let index = t
                    .strip_prefix("nodes[")
                    .and_then(|r| r.strip_suffix(']'))
                    .or_else(|| t.strip_prefix("node "))
                    .unwrap_or(t);
                let index: usize = index.trim().parse().ok()?;
                self.nodes.iter().position(|n| n.source_index == index)
            })
            .ok_or_else(|| Error::UnknownBone {
                model: self.name.clone(),
                bone: name.to_string(),
                closest: crate::error::closest_names(
                    name,
                    self.nodes.iter().filter_map(|n| n.name.as_deref()),
                ),
            })
    }

    /// How a node is shown to a user: its name, or `node N` (N its index in the file) when it
    /// has none; [`Scene::find_node`] takes either back.
    pub fn node_label(&self, node: usize) -> String {
        match self.nodes.get(node) {
            Some(n) => match n.name.as_deref().filter(|s| !s.is_empty()) {
                Some(name) => name.to_string(),
                None => format!("node {}", n.source_index),
            },
            None => format!("node {node}"),
        }
    }

    /// Clip `anim` in words ([`ClipName`]: `walk` or `animation 2`, in a sentence `clip
    /// "walk"`); an index past the clips is named by its index.
    pub fn clip_name(&self, anim: usize) -> ClipName<'_> {
        let name = self.animations.get(anim).and_then(|a| a.name.as_deref());
        ClipName::new(anim, name)
    }
}

/// Turns a [`RawScene`] into a validated [`Scene`].
pub struct SceneBuilder;

impl SceneBuilder {
    /// Reorder nodes depth-first (parents before children), remap every index and check
    /// the invariants listed in the module documentation.
    pub fn build(raw: RawScene) -> Result<Scene> {
        Self::build_counted(raw, &mut Work::default())
    }

    /// [`Self::build`], its steps added to `work`: each loop's trips (a node, joint, channel,
    /// key, vertex, index or influence slot visited; a hash lookup is one step).
    pub fn build_counted(raw: RawScene, work: &mut Work) -> Result<Scene> {
        let file = raw.name.clone();
        // Children lists, the walk, the reordering and the draw list (its sort by source index
        // counted as one pass): four passes over the nodes.
        *work += Work::steps(4 * raw.nodes.len() + raw.roots.len());
        *work += Work::steps(raw.skins.iter().map(|s| 2 * s.joints.len()).sum());
        *work += Work::steps(
            raw.animations
                .iter()
                .flat_map(|a| &a.channels)
                .map(|c| 2 + c.sampler.times_s.len())
                .sum(),
        );
        let (order, new_index) = Self::depth_first_order(&raw, &file)?;
        let nodes = Self::reorder_nodes(&raw, &order, &new_index, &file)?;
        let skins = Self::remap_skins(raw.skins, &new_index, &file)?;
        let animations = Self::remap_animations(raw.animations, &nodes, &new_index, &file)?;
        let draws = Self::shown_draws(&raw.roots, &raw.meshes, &nodes, &new_index);
        // Rule 4: attribute lengths and joint ranges.
        for d in &draws {
            let prim = &raw.meshes[d.mesh].primitives[d.primitive];
            *work += Work::steps(
                1 + prim.positions.len() * (1 + prim.morph_targets.len())
                    + prim.indices.len()
                    + prim.skin_weights.as_ref().map_or(0, |w| w.joints.len()),
            );
            let field = format!("meshes[{}].primitives[{}]", d.mesh, d.primitive);
            Self::check_attributes(prim, raw.textures.len(), &field, &file)?;
            Self::check_skin_weights(prim, d.skin, &skins, &field, &file)?;
        }
        Ok(Scene {
            name: raw.name,
            nodes,
            meshes: raw.meshes,
            skins,
            animations,
            draws,
            report: raw.report,
            textures: raw.textures,
        })
    }

    /// The depth-first order of `raw`'s nodes from the roots (children in source order), and
    /// each raw node's index in it; an error for a bad parent, a node with two parents or a
    /// cycle (a node never reached).
    fn depth_first_order(raw: &RawScene, file: &str) -> Result<(Vec<usize>, Vec<usize>)> {
        let n = raw.nodes.len();
        // Children lists in source order.
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, node) in raw.nodes.iter().enumerate() {
            match node.parent {
                Some(p) if p < n && p != i => children[p].push(i),
                Some(p) => {
                    return Err(Error::invalid(
                        file,
                        format!("nodes[{i}]"),
                        format!("parent {p} is out of range or itself"),
                    ));
                }
                None => roots.push(i),
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut new_index = vec![usize::MAX; n];
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            if new_index[i] != usize::MAX {
                return Err(Error::invalid(
                    file,
                    format!("nodes[{}]", raw.nodes[i].source_index),
                    "node has two parents",
                ));
            }
            new_index[i] = order.len();
            order.push(i);
            for &c in children[i].iter().rev() {
                stack.push(c);
            }
        }
        if order.len() != n {
            let bad = (0..n).find(|&i| new_index[i] == usize::MAX).unwrap_or(0);
            return Err(Error::invalid(
                file,
                format!("nodes[{}]", raw.nodes[bad].source_index),
                "node hierarchy has a cycle",
            ));
        }
        Ok((order, new_index))
    }

    /// `raw`'s nodes in `order`, parents remapped through `new_index`; an error for a mesh
    /// or skin index out of range.
    fn reorder_nodes(
        raw: &RawScene,
        order: &[usize],
        new_index: &[usize],
        file: &str,
    ) -> Result<Vec<Node>> {
        let mut nodes = Vec::with_capacity(order.len());
        for &old in order {
            let mut node = raw.nodes[old].clone();
            node.parent = node.parent.map(|p| new_index[p]);
            if let Some(m) = node.mesh
                && m >= raw.meshes.len()
            {
                return Err(Error::invalid(
                    file,
                    format!("nodes[{}].mesh", node.source_index),
                    format!("mesh {m} out of range"),
                ));
            }
            if let Some(s) = node.skin
                && s >= raw.skins.len()
            {
                return Err(Error::invalid(
                    file,
                    format!("nodes[{}].skin", node.source_index),
                    format!("skin {s} out of range"),
                ));
            }
            nodes.push(node);
        }
        Ok(nodes)
    }

    /// `skins` with joints remapped through `new_index`; an error for a skin without joints,
    /// a joint out of range, or inverse bind matrices that do not match them or are not
    /// finite.
    fn remap_skins(mut skins: Vec<Skin>, new_index: &[usize], file: &str) -> Result<Vec<Skin>> {
        let n = new_index.len();
        for (si, skin) in skins.iter_mut().enumerate() {
            if skin.joints.is_empty() {
                return Err(Error::invalid(
                    file,
                    format!("skins[{si}].joints"),
                    "skin has no joints",
                ));
            }
            if skin.joint_from_bind.len() != skin.joints.len() {
                return Err(Error::invalid(
                    file,
                    format!("skins[{si}].inverseBindMatrices"),
                    format!(
                        "{} matrices for {} joints",
                        skin.joint_from_bind.len(),
                        skin.joints.len()
                    ),
                ));
            }
            for (j, joint) in skin.joints.iter_mut().enumerate() {
                if *joint >= n {
                    return Err(Error::invalid(
                        file,
                        format!("skins[{si}].joints[{j}]"),
                        format!("node {} out of range", joint),
                    ));
                }
                *joint = new_index[*joint];
            }
            for (j, m) in skin.joint_from_bind.iter().enumerate() {
                if !crate::math::mat4_is_finite(m) {
                    return Err(Error::invalid(
                        file,
                        format!("skins[{si}].inverseBindMatrices[{j}]"),
                        "matrix has a NaN or infinite element",
                    ));
                }
            }
        }
        Ok(skins)
    }

    /// `animations` with channel targets remapped through `new_index`; an error for a target
    /// out of range, an invalid sampler, or two channels driving one node's property
    /// (`nodes`, reordered, name it in the message).
    fn remap_animations(
        mut animations: Vec<Animation>,
        nodes: &[Node],
        new_index: &[usize],
        file: &str,
    ) -> Result<Vec<Animation>> {
        let n = new_index.len();
        for (ai, anim) in animations.iter_mut().enumerate() {
            for (ci, ch) in anim.channels.iter_mut().enumerate() {
                if ch.node >= n {
                    return Err(Error::invalid(
                        file,
                        format!("animations[{ai}].channels[{ci}].target.node"),
                        format!("node {} out of range", ch.node),
                    ));
                }
                ch.node = new_index[ch.node];
                ch.sampler.validate().map_err(|m| {
                    Error::invalid(file, format!("animations[{ai}].channels[{ci}].sampler"), m)
                })?;
            }
            let mut targets = std::collections::HashMap::with_capacity(anim.channels.len());
            for (ci, ch) in anim.channels.iter().enumerate() {
                if let Some(first) = targets.insert((ch.node, ch.path), ci) {
                    return Err(Error::invalid(
                        file,
                        format!("animations[{ai}].channels[{ci}].target"),
                        format!(
                            "node {}'s {} is driven by channels[{first}] too (one channel per \
                             node and property in an animation, glTF 2.0 §3.11)",
                            nodes[ch.node].source_index,
                            ch.path.name()
                        ),
                    ));
                }
            }
        }
        Ok(animations)
    }

    /// The draw list: every primitive of every node of the displayed scene (descendants of
    /// the raw `roots`, all nodes when none are given), in source node then primitive order.
    fn shown_draws(
        roots: &[usize],
        meshes: &[Mesh],
        nodes: &[Node],
        new_index: &[usize],
    ) -> Vec<Draw> {
        let n = nodes.len();
        let mut shown = vec![roots.is_empty(); n];
        for &r in roots {
            if r < n {
                shown[new_index[r]] = true;
            }
        }
        for i in 0..n {
            if let Some(p) = nodes[i].parent {
                shown[i] |= shown[p];
            }
        }
        let mut draws = Vec::new();
        let mut by_source: Vec<usize> = (0..n).collect();
        by_source.sort_by_key(|&i| nodes[i].source_index);
        for &i in &by_source {
            let node = &nodes[i];
            if !shown[i] {
                continue;
            }
            if let Some(m) = node.mesh {
                for p in 0..meshes[m].primitives.len() {
                    draws.push(Draw {
                        node: i,
                        mesh: m,
                        primitive: p,
                        skin: node.skin,
                    });
                }
            }
        }
        draws
    }

    /// Rule 4 on a drawn primitive (`field` names it): attribute and morph target counts
    /// match POSITION, the base colour texture is one of `texture_count` and has UVs, and
    /// indices are in range.
    fn check_attributes(
        prim: &Primitive,
        texture_count: usize,
        field: &str,
        file: &str,
    ) -> Result<()> {
        let nv = prim.positions.len();
        if prim.normals.as_ref().is_some_and(|v| v.len() != nv)
            || prim.tangents.as_ref().is_some_and(|v| v.len() != nv)
            || prim.uvs.as_ref().is_some_and(|v| v.len() != nv)
            || prim.colors.as_ref().is_some_and(|v| v.len() != nv)
        {
            return Err(Error::invalid(
                file,
                field,
                "NORMAL/TANGENT/TEXCOORD_0/COLOR_0 count differs from POSITION count",
            ));
        }
        if let Some(t) = prim.base_color_texture
            && (t >= texture_count || prim.uvs.is_none())
        {
            return Err(Error::invalid(
                file,
                format!("{field}.material.baseColorTexture"),
                format!(
                    "texture {t} of {} ({})",
                    texture_count,
                    if prim.uvs.is_none() {
                        "no TEXCOORD_0"
                    } else {
                        "out of range"
                    }
                ),
            ));
        }
        if let Some(&bad) = prim.indices.iter().find(|&&i| i as usize >= nv) {
            return Err(Error::invalid(
                file,
                format!("{field}.indices"),
                format!("index {bad} >= vertex count {nv}"),
            ));
        }
        for (ti, t) in prim.morph_targets.iter().enumerate() {
            let bad = [
                t.positions.as_ref().map(|v| v.len()),
                t.normals.as_ref().map(|v| v.len()),
                t.tangents.as_ref().map(|v| v.len()),
            ]
            .into_iter()
            .flatten()
            .any(|len| len != nv);
            if bad {
                return Err(Error::invalid(
                    file,
                    format!("{field}.targets[{ti}]"),
                    "morph target count differs from POSITION count",
                ));
            }
        }
        Ok(())
    }

    /// Rule 4 on a drawn primitive's skin (`field` names it): a skinned draw has weights, one
    /// set per vertex, and every weighted joint is one of its skin's (of `skins`).
    fn check_skin_weights(
        prim: &Primitive,
        skin: Option<usize>,
        skins: &[Skin],
        field: &str,
        file: &str,
    ) -> Result<()> {
        if skin.is_some() && prim.skin_weights.is_none() {
            return Err(Error::invalid(
                file,
                format!("{field}.attributes"),
                "node has a skin but the primitive has no JOINTS_0/WEIGHTS_0",
            ));
        }
        let (Some(s), Some(w)) = (skin, prim.skin_weights.as_ref()) else {
            return Ok(());
        };
        let nv = prim.positions.len();
        if w.vertex_count() != nv {
            return Err(Error::invalid(
                file,
                format!("{field}.attributes.JOINTS_0"),
                "JOINTS/WEIGHTS count differs from POSITION count",
            ));
        }
        let jc = skins[s].joints.len() as u32;
        for (k, (&j, &wt)) in w.joints.iter().zip(&w.weights).enumerate() {
            if wt != 0.0 && j >= jc {
                return Err(Error::invalid(
                    file,
                    format!("{field}.attributes.JOINTS_{}", (k % w.width) / 4),
                    format!(
                        "vertex {} uses joint {j} but skin {s} has {jc} joints",
                        k / w.width
                    ),
                ));
            }
        }
        Ok(())
    }
}
