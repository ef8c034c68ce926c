//! FBX importer (binary and ASCII, FBX 6.x to 7.x) through ufbx, into the same [`RawScene`]
//! the glTF importer makes, so every command, the viewer and `export` take `.fbx` files.
//!
//! Conventions, made explicit (each is checked in `tests/io/fbx.rs`):
//! - **Units and axes** become glTF's: metres, +Y up, +Z forward. ufbx converts the root
//!   nodes' transforms and scales the geometry (`SpaceConversion::ModifyGeometry`), so joints
//!   carry no 0.01 scale from a centimetre file.
//! - **Bind pose from the skin clusters**: a joint's inverse bind matrix is its cluster's
//!   `geometry_to_bone` (the mesh's geometry in the bone's space when the skin was bound),
//!   not the inverse of the node's rest transform, which exporters often leave elsewhere.
//! - **Geometric transforms** (offsets of a node's geometry that its children do not
//!   inherit) become a helper node between the node and its mesh, named `NODE (geometry)`,
//!   so vertices and blend shape offsets stay in the same space; the skin's bind matrices
//!   include the transform.
//! - **Inherit modes**: a joint that does not pass its scale to its children (Maya's
//!   segment-scale compensation) or scales them per component (3ds Max) gets a scale helper
//!   node between it and its children, named `JOINT (scale helper)`; the hierarchy then
//!   composes as glTF's does.
//! - **Blend shapes** become morph targets: every channel of every blend deformer of a mesh,
//!   in order, at its full-weight shape (in-between shapes are reported and dropped); a
//!   channel's weight (`DeformPercent` / 100) is the default morph weight, and its animation a
//!   weights channel.
//! - **Every animation stack is a clip**, its curves kept exactly where glTF can hold them:
//!   a translation or scale whose curves are linear or cubic with unweighted tangents (and
//!   whose node passes the rule of `curves.rs`: no animated pivot, no helper, one layer) is
//!   a CUBICSPLINE track keyed at its curves' key times (LINEAR when every segment is a
//!   line). Everything else (rotations, which FBX keys as Euler angles; weighted tangents;
//!   animated pivots) is sampled from ufbx's evaluation between its keys until it is within
//!   1e-6 of the model's rest diagonal, or 4 f32 ulps of the coordinate, at every checked
//!   time (`resample.rs`): LINEAR when the keys alone are, else CUBICSPLINE with ufbx's
//!   derivatives as tangents, each key interval halved at most down to
//!   [`MAX_SEGMENTS_PER_KEY`] pieces; a track the cap leaves outside the tolerance is a
//!   reported repair with the error reached. Blend-channel weights are sampled at the
//!   file's frame rate (LINEAR). A clip
//!   plays its take's range (`LocalStart`…`LocalStop`): keys outside it are dropped and the
//!   times move so the take starts at 0 s, as Unity's importer and three.js do (several takes
//!   often share one timeline); a stack without a range keeps the file's times.
//! - **Influences**: every influence of a vertex is kept (the weight sets are as wide as the
//!   most influenced vertex needs, in fours), up to [`MAX_INFLUENCES`].
//! - **Base colour textures** (`texture.rs`): a material's `DiffuseColor` (or PBR base colour)
//!   texture is read from the image its `Video` embeds, else from the file it names beside the
//!   model (its relative name, then its bare name, as three.js and Blender look), decoded as
//!   glTF's images (sRGB), and read with the UV set the texture names. The texture replaces
//!   the material's colour, as a connected FBX property does; `DiffuseFactor` scales it.
//!   One that cannot be found or decoded is a warning; the material draws untextured.
//!
//! Repairs, each reported in the scene's report: weights not summing to 1 are renormalised;
//! a vertex of a skinned mesh with no weight is bound to the skin's first joint; influences
//! past [`MAX_INFLUENCES`] are dropped (lightest first) and the rest renormalised.
//!
//! Limits, checked before the work: the file is read as the glTF path reads its model
//! ([`MAX_FILE_BYTES`](super::files::MAX_FILE_BYTES), regular files only); ufbx allocates at
//! most [`MAX_FBX_MEMORY_BYTES`] in at most [`MAX_FBX_ALLOCATIONS`] allocations; bad indices
//! stop the load (never clamped silently); the only external files opened are texture images,
//! by the rules of glTF's external images (inside the model's folder unless allowed, at most
//! [`MAX_IMAGE_BYTES`](super::texture::MAX_IMAGE_BYTES) each; an embedded image is held to
//! the same size); geometry caches are not read; sampling makes at most [`MAX_SEGMENTS_PER_KEY`] keys per source
//! key. NaN or infinite positions, normals, UVs, colours, offsets, transforms and bind
//! matrices are errors.
//! Errors name the file and the FBX element: `rig.fbx: Deformer "Skin" cluster 3: …`. Where
//! ufbx says no more than "Failed to load" (an ASCII file), [`structure`] finds the line; a
//! binary file is walked record by record first, so a file cut short names the record it was
//! cut in (or, cut between records, loads with a warning); a version past
//! [`MAX_FBX_VERSION`] is an error; ufbx's warnings become the scene's warnings.

mod anim;
mod curves;
#[cfg(all(target_arch = "wasm32", feature = "web"))]
mod freestanding;
mod mesh;
mod resample;
pub mod structure;
mod texture;
mod track;

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3};

use super::files::{FileSet, Files, ImportOptions};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{Node, RawScene, Scene, SceneBuilder};

/// Most influences kept per vertex: 32, eight sets of four, past what any engine skins with
/// (4 or 8); a vertex with more keeps its heaviest 32 (a reported repair). Every vertex of a
/// mesh has as many slots as its most influenced vertex, so a mesh costs at most 32 slots a
/// vertex.
pub const MAX_INFLUENCES: usize = 32;

/// Most morph values an import makes for one mesh: blend channels × vertices (and, for an
/// animated mesh, channels × key times × the nodes drawing it): 64 M, a 100,000-vertex face
/// with 600 shapes; a file asking for more is an error before anything is allocated.
pub const MAX_MORPH_VALUES: u64 = 64 << 20;

/// Most memory ufbx may hold for one file's scene, and again for its temporary data while
/// parsing: 8 GiB, four times the largest file read (a binary FBX's compressed arrays
/// expand; an ASCII one shrinks).
pub const MAX_FBX_MEMORY_BYTES: u64 = 8 << 30;

/// Most allocations ufbx may make for one file: 64 M, far above a real scene's element
/// count, so a file of millions of tiny elements stops before the allocator is the limit.
pub const MAX_FBX_ALLOCATIONS: usize = 64 << 20;

/// Most pieces a key interval is cut into, by ufbx's bake (blend weights) or by the import's
/// sampling (node tracks): 32 (ufbx's default, stated): a curve from 0 to 1e8 s makes at most
/// 33 keys, not three billion. Tracks are thereby bounded by the keys in the file, and their
/// memory by the allocator limits.
pub const MAX_SEGMENTS_PER_KEY: usize = 32;

/// Import an `.fbx` file (and the texture files it names, beside it); also every file read
/// (canonical paths), so a command can refuse to write over it.
pub fn import_file_with(path: &Path, options: ImportOptions) -> Result<(Scene, Vec<PathBuf>)> {
    let mut files = Files::new(path, options);
    let bytes = files.read_model()?;
    let scene = import(&bytes, &super::file_label(path), Some(&mut files))?;
    Ok((scene, files.read))
}

/// Import the FBX `main` of the files in memory `set` (its texture files from the set); also
/// the names of the files read.
pub fn import_memory(
    main: &str,
    set: std::sync::Arc<FileSet>,
    options: ImportOptions,
) -> Result<(Scene, Vec<PathBuf>)> {
    let mut files = Files::in_memory(main, set, options);
    let bytes = files.read_model()?;
    let scene = import(&bytes, main, Some(&mut files))?;
    Ok((scene, files.read))
}

/// The newest FBX version ufbx 0.11 reads (7.7, FBX 2020): a file claiming a newer one is
/// refused rather than read as whatever its bytes happen to parse to.
pub const MAX_FBX_VERSION: u32 = 7700;

/// Import FBX bytes; `file` names the file in messages. Embedded textures are read; a texture
/// in a file of its own is not (a warning).
pub fn import_slice(bytes: &[u8], file: &str) -> Result<Scene> {
    import(bytes, file, None)
}

/// Import FBX bytes; `file` names the file in messages, `files` reads the texture files it
/// names (`None`: none is read).
fn import(bytes: &[u8], file: &str, files: Option<&mut Files>) -> Result<Scene> {
    let cut = match structure::binary(bytes) {
        structure::Structure::Broken(why) => return Err(Error::invalid(file, "FBX", why)),
        structure::Structure::EndMissing(why) => Some(why),
        structure::Structure::Whole => None,
    };
    let fbx = ufbx::load_memory(bytes, load_options()).map_err(|e| load_error(file, bytes, &e))?;
    if fbx.metadata.version > MAX_FBX_VERSION {
        return Err(Error::invalid(
            file,
            "FBX",
            format!(
                "FBX version {} is newer than the reader knows (7.0 to {}.{})",
                fbx.metadata.version,
                MAX_FBX_VERSION / 1000,
                MAX_FBX_VERSION % 1000 / 100
            ),
        ));
    }
    let mut raw = Importer::new(file, &fbx).run(files)?;
    if fbx.meshes.is_empty() {
        raw.report
            .warn("FBX", "the file has no mesh: nothing to draw or skin");
    }
    if let Some(why) = cut {
        raw.report.warn("FBX", why);
    }
    for w in fbx.metadata.warnings.iter() {
        let field = fbx.elements.get(w.element_id as usize).map_or_else(
            || "FBX".to_string(),
            |e| format!("{:?} \"{}\"", e.type_, e.name.as_ref() as &str),
        );
        let times = match w.count {
            0 | 1 => String::new(),
            n => format!(" ({n} times)"),
        };
        raw.report.warn(
            field,
            format!("ufbx: {}{times}", w.description.as_ref() as &str),
        );
    }
    SceneBuilder::build(raw)
}

/// A load error: ufbx's words, and where ufbx has none (an ASCII file it could not parse),
/// the line [`structure::ascii_problem`] finds.
fn load_error(file: &str, bytes: &[u8], e: &ufbx::Error) -> Error {
    let no_detail = e.type_ == ufbx::ErrorType::Unknown && e.info().is_empty();
    let ascii = structure::binary_version(bytes).is_none();
    if no_detail && ascii {
        let text = String::from_utf8_lossy(bytes);
        if let Some(problem) = structure::ascii_problem(&text) {
            return Error::invalid(file, "FBX", format!("not a readable ASCII FBX: {problem}"));
        }
    }
    ufbx_error(file, "FBX", e)
}

/// ufbx's allocator limits (see [`MAX_FBX_MEMORY_BYTES`]).
pub fn allocator() -> ufbx::AllocatorOpts {
    ufbx::AllocatorOpts {
        memory_limit: usize::try_from(MAX_FBX_MEMORY_BYTES).unwrap_or(usize::MAX),
        allocation_limit: MAX_FBX_ALLOCATIONS,
        ..Default::default()
    }
}

/// How ufbx reads a file: the conventions of the module documentation (public so a tool or
/// test can load a file as skinview does and compare with ufbx's own evaluation).
pub fn load_options() -> ufbx::LoadOpts<'static> {
    ufbx::LoadOpts {
        temp_allocator: allocator(),
        result_allocator: allocator(),
        file_format: ufbx::FileFormat::Fbx,
        ignore_embedded: false,
        load_external_files: false,
        clean_skin_weights: true,
        generate_missing_normals: true,
        index_error_handling: ufbx::IndexErrorHandling::AbortLoading,
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        geometry_transform_handling: ufbx::GeometryTransformHandling::HelperNodes,
        inherit_mode_handling: ufbx::InheritModeHandling::HelperNodes,
        ..Default::default()
    }
}

/// A ufbx error as ours: what ufbx says, its details, and the innermost step it was in when
/// it says no more ("Failed to load" alone names nothing).
pub(super) fn ufbx_error(file: &str, field: &str, e: &ufbx::Error) -> Error {
    let mut message = e.description.to_string();
    let info = e.info();
    if !info.is_empty() {
        message = format!("{message}: {info}");
    }
    let frames = &e.stack[..(e.stack_size as usize).min(e.stack.len())];
    if let Some(f) = frames.first().filter(|f| !f.description.is_empty()) {
        message = format!("{message} ({})", f.description.as_ref() as &str);
    }
    if e.type_ == ufbx::ErrorType::Unknown && e.description.as_ref() as &str == "Failed to load" {
        message.push_str(
            " (ufbx gives no detail: a malformed record, an index out of range or a truncated \
             array)",
        );
    }
    if e.type_ == ufbx::ErrorType::BadIndex {
        message.push_str("; a vertex, UV or normal index is out of range");
    }
    Error::invalid(file, field, message)
}

/// How an FBX element is named in messages: `Deformer "Skin"` (its type and name).
pub(super) fn element_label(kind: &str, element: &ufbx::Element) -> String {
    format!("{kind} \"{}\"", element.name.as_ref() as &str)
}

pub(super) fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

pub(super) fn quat(q: ufbx::Quat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
}

/// A ufbx affine matrix (column-major 3×4) as a 4×4 matrix.
pub(super) fn mat4(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols_array(&[
        m.m00 as f32,
        m.m10 as f32,
        m.m20 as f32,
        0.0,
        m.m01 as f32,
        m.m11 as f32,
        m.m21 as f32,
        0.0,
        m.m02 as f32,
        m.m12 as f32,
        m.m22 as f32,
        0.0,
        m.m03 as f32,
        m.m13 as f32,
        m.m23 as f32,
        1.0,
    ])
}

/// One import: the ufbx scene and what has been made of it so far.
struct Importer<'a> {
    file: &'a str,
    fbx: &'a ufbx::Scene,
    raw: RawScene,
    /// Our node per ufbx node (by typed id); `None` for ufbx's root, which is not a node of
    /// the file.
    node_index: Vec<Option<usize>>,
}

impl<'a> Importer<'a> {
    fn new(file: &'a str, fbx: &'a ufbx::Scene) -> Importer<'a> {
        let mut node_index = vec![None; fbx.nodes.len()];
        let mut next = 0;
        for n in fbx.nodes.iter() {
            if !n.is_root
                && let Some(slot) = node_index.get_mut(n.element.typed_id as usize)
            {
                *slot = Some(next);
                next += 1;
            }
        }
        Importer {
            file,
            fbx,
            raw: RawScene {
                name: file.to_string(),
                ..Default::default()
            },
            node_index,
        }
    }

    /// Our node index of a ufbx node (`None` for the root).
    fn node_of(&self, n: &ufbx::Node) -> Option<usize> {
        self.node_index
            .get(n.element.typed_id as usize)
            .copied()
            .flatten()
    }

    fn run(mut self, files: Option<&mut Files>) -> Result<RawScene> {
        self.nodes()?;
        let textures = texture::load(self.fbx, files, &mut self.raw.report);
        let morphs = self.meshes(&textures)?;
        self.raw.textures = textures.textures;
        self.raw.animations = anim::clips(
            self.fbx,
            &self.node_index,
            &morphs,
            &self.raw.nodes,
            self.file,
            &mut self.raw.report,
        )?;
        Ok(self.raw)
    }

    /// Every node but ufbx's root, with its rest transform (the root's children become
    /// roots).
    fn nodes(&mut self) -> Result<()> {
        let mut nodes = Vec::with_capacity(self.fbx.nodes.len());
        for n in self.fbx.nodes.iter().filter(|n| !n.is_root) {
            let t = &n.local_transform;
            let values = [
                t.translation.x,
                t.translation.y,
                t.translation.z,
                t.rotation.x,
            ]
            .into_iter()
            .chain([t.rotation.y, t.rotation.z, t.rotation.w])
            .chain([t.scale.x, t.scale.y, t.scale.z]);
            if values.clone().any(|x| !x.is_finite()) {
                return Err(Error::invalid(
                    self.file,
                    element_label("Model", &n.element),
                    "rest transform (Lcl Translation, Rotation, Scaling) is not finite",
                ));
            }
            nodes.push(Node {
                name: self.node_name(n),
                source_index: n.element.typed_id as usize,
                parent: n.parent.as_ref().and_then(|p| self.node_of(p)),
                rest: Trs {
                    translation: vec3(t.translation),
                    rotation: quat(t.rotation).normalize(),
                    scale: vec3(t.scale),
                },
                matrix: None,
                mesh: None,
                skin: None,
                morph_weights: None,
            });
        }
        self.raw.nodes = nodes;
        Ok(())
    }

    /// A node's name; ufbx's helper nodes are named after the node they serve.
    fn node_name(&self, n: &ufbx::Node) -> Option<String> {
        let parent = n
            .parent
            .as_ref()
            .map(|p| p.element.name.to_string())
            .unwrap_or_default();
        if n.is_scale_helper {
            return Some(format!("{parent} (scale helper)"));
        }
        if n.is_geometry_transform_helper {
            return Some(format!("{parent} (geometry)"));
        }
        let name = n.element.name.to_string();
        (!name.is_empty()).then_some(name)
    }

    /// The node that draws a mesh instanced at node `k`: `k`, or for a node with a second
    /// mesh a child of it with no transform of its own (a glTF node draws one mesh).
    fn drawing_node(&mut self, k: usize) -> usize {
        if self.raw.nodes[k].mesh.is_none() {
            return k;
        }
        let name = self.raw.nodes[k].name.clone().unwrap_or_default();
        self.raw.nodes.push(Node {
            name: Some(format!("{name} (mesh {})", self.raw.nodes.len())),
            source_index: self.raw.nodes[k].source_index,
            parent: Some(k),
            rest: Trs::IDENTITY,
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        });
        self.raw.nodes.len() - 1
    }

    /// Every mesh with its skin, and each node that draws one; returns where each mesh's
    /// blend channels went (for the animation's weights channels).
    fn meshes(&mut self, textures: &texture::BaseColorTextures) -> Result<Vec<mesh::MorphLinks>> {
        let mut links = Vec::new();
        for m in self.fbx.meshes.iter() {
            let node_index = &self.node_index;
            let node_of = |n: &ufbx::Node| {
                node_index
                    .get(n.element.typed_id as usize)
                    .copied()
                    .flatten()
            };
            let converted = mesh::convert(m, &node_of, textures, self.file, &mut self.raw.report)?;
            let mesh_index = self.raw.meshes.len();
            let skin_index = converted.skin.map(|s| {
                self.raw.skins.push(s);
                self.raw.skins.len() - 1
            });
            let mut nodes = Vec::new();
            for instance in m.element.instances.iter() {
                if let Some(k) = self.node_of(instance) {
                    let k = self.drawing_node(k);
                    self.raw.nodes[k].mesh = Some(mesh_index);
                    self.raw.nodes[k].skin = skin_index;
                    nodes.push(k);
                }
            }
            if nodes.is_empty() {
                self.raw.report.warn(
                    element_label("Geometry", &m.element),
                    "is in no node (no connection places it): not drawn",
                );
            }
            links.push(mesh::MorphLinks {
                channels: converted.channels,
                nodes,
                default_weights: converted.mesh.default_morph_weights.clone(),
            });
            self.raw.meshes.push(converted.mesh);
        }
        Ok(links)
    }
}
