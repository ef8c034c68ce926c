//! Export of a glTF file as binary glTF starting from its own document: everything the file
//! had — materials, textures, images, samplers, cameras, extras, extensions skinview does not
//! know — is written back through `gltf-json`'s typed document (the gltf crate's own
//! serialiser), and only what the user asked to change is re-encoded.
//!
//! Method: import the file once (the same verdict every command sees), then rewrite its
//! document: every buffer view's bytes are copied into one BIN chunk at an offset congruent
//! (mod 4) to the old one, so every accessor keeps its alignment; external buffers and
//! data: URI buffers are merged into that chunk, and external image files are embedded as
//! buffer views with their MIME type (data: URI images stay as they are). When a joint or
//! weight type is asked for, each JOINTS_n / WEIGHTS_n accessor of another type is replaced
//! in place (same index, so every primitive sharing it follows) by one holding the imported,
//! repaired values in the new type; normalised weights are quantised per vertex so each
//! vertex's integers sum exactly to 255 or 65535. A buffer view used only by a replaced
//! accessor takes the new bytes in its own slot, so no index changes and no dead bytes stay.
//! Before anything is written the result is imported again and compared with the input
//! scene (positions bit-exact, joints exact, weights within the new type's step): a file that
//! would read differently is never written. Every JSON property of the input that the output
//! lacks is listed in [`RepackReport::dropped`] (the gltf crate does not model extensions on
//! `asset` or on sparse accessor parts, for instance); none is dropped silently.
//!
//! Cost: one import, one copy of the buffers, one re-import (O(file size)).
//! Limits: meshopt-compressed views arrive decoded (the importer decodes them), so they are
//! written plain; where they are not decoded (the lean wasm32 library) they are refused, since they name
//! buffers and byte offsets inside their extension objects, which merging buffers would break.
//! Buffer names and extras of buffers after the first are not kept (reported as dropped).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use gltf::json;
use json::validation::{Checked, USize64};
use serde_json::Value;

use super::files::{Files, ImportOptions};
use super::gltf_export::{
    JointEncoding, WeightEncoding, joint_bytes, pack_glb, quantise, weight_bytes,
};
use super::gltf_import::{TEXTURE_TRANSFORM, TextureTransform};
use super::gltf_quantize::{MeshQuantization, Replacement};
use super::json_defaults::is_schema_default;
use super::texture::MAX_IMAGE_BYTES;
use crate::error::{Error, Result};
use crate::scene::{Scene, SkinWeights};

/// What [`repack_file`] changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RepackOptions {
    /// Re-encode JOINTS_n accessors of another type into this one (`None`: keep as written).
    pub joints: Option<JointEncoding>,
    /// Re-encode WEIGHTS_n accessors of another type into this one (`None`: keep as written).
    pub weights: Option<WeightEncoding>,
    /// Rewrite every JOINTS_n / WEIGHTS_n accessor from the (edited) scene, in the type asked
    /// for or else the type it had (a u8 JOINTS accessor becomes u16 when a joint index
    /// needs it).
    pub rewrite_skin: bool,
    /// Write every animation from the (edited) scene in place of the document's own (same
    /// order, names kept; `optimize`), and drop the accessors and buffer views only the old
    /// ones used. Refused when a document animation has channels the scene does not (an
    /// extension's), which rewriting would lose.
    pub rewrite_animations: bool,
    /// Store positions, normals, tangents and texture coordinates as integers
    /// (`KHR_mesh_quantization`, [`super::gltf_quantize`]). Positions then read back on their
    /// grid, not bit for bit: the caller measures what that moves (`optimize` does).
    pub quantize_mesh: Option<MeshQuantization>,
    /// Store the vertex, animation and index views compressed (`EXT_meshopt_compression`;
    /// lossless but for normals and tangents stored as bytes, which take the octahedral
    /// filter; desktop builds only). Vertices are welded and renumbered
    /// ([`RepackReport::vertex_orders`]).
    pub compress: bool,
}

/// What [`repack_file`] did, for the user.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepackReport {
    /// Input buffers merged into the one BIN chunk.
    pub buffers_merged: usize,
    /// External files embedded (`buffers[0].uri: "a.bin"`, `images[2].uri: "skin.png"`).
    pub embedded: Vec<String>,
    /// Accessors re-encoded (`accessors[7] (WEIGHTS_0): float -> unorm8`).
    pub reencoded: Vec<String>,
    /// Largest change of any skin weight, measured on the re-imported output.
    pub max_weight_change: f32,
    /// JSON paths of input properties the output does not have.
    pub dropped: Vec<String>,
    /// What was kept, counted (`materials 2, textures 1, ...`).
    pub kept: String,
    /// Size of the written file in bytes.
    pub bytes: usize,
    /// What the importer repaired or warned about in the input (`field: what`): export writes
    /// the input's data as it was, so these problems are in the output too.
    pub input_notes: Vec<String>,
    /// What the options asked for that was not done, and why (`meshes[2] is rigid: ...`).
    pub not_done: Vec<String>,
    /// The largest step of the position grids, when positions were quantised (in the units of
    /// the positions each covers: the skinned meshes' bind space, a rigid mesh's own).
    pub position_step: Option<f32>,
    /// Views compressed, and their bytes before and after (`compress`).
    pub compressed: Option<CompressStats>,
    /// Primitives whose vertices `compress` renumbered: (mesh, primitive, `new_from_old`).
    pub vertex_orders: Vec<(usize, usize, Vec<u32>)>,
}

/// What `EXT_meshopt_compression` did to a file's views.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompressStats {
    /// Views compressed.
    pub views: usize,
    /// Their bytes before.
    pub bytes_before: u64,
    /// Their bytes after.
    pub bytes_after: u64,
}

/// Extensions that name buffers by index and byte offset inside their own objects.
const BUFFER_LEVEL_EXTENSIONS: &[&str] = &["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// Import `path`, rewrite it as described in the module documentation and write the GLB to
/// `out` (through a temporary file; refused when `out` is any file the model was read from).
pub fn repack_file(
    path: &Path,
    import: ImportOptions,
    options: &RepackOptions,
    out: &Path,
) -> Result<RepackReport> {
    Ok(repack_file_edited(path, import, options, out, |_| Ok(()))?.0)
}

/// [`repack_file`] with `edit` applied to the imported scene before the skin accessors are
/// written (with [`RepackOptions::rewrite_skin`], the edited joints and weights are what the
/// file gets; the written file is checked against the edited scene).
pub fn repack_file_edited<T>(
    path: &Path,
    import: ImportOptions,
    options: &RepackOptions,
    out: &Path,
    edit: impl FnOnce(&mut Scene) -> Result<T>,
) -> Result<(RepackReport, T)> {
    let (glb, report, edited) = repack_bytes_edited(path, import, options, out, edit)?;
    super::output::write_file(out, &glb)?;
    Ok((report, edited))
}

/// [`repack_file_edited`] without the writing: the GLB bytes (checked as it checks them) for a
/// caller that measures them before writing them to `out` (refused, as there, when `out` is
/// a file the model was read from).
pub fn repack_bytes_edited<T>(
    path: &Path,
    import: ImportOptions,
    options: &RepackOptions,
    out: &Path,
    edit: impl FnOnce(&mut Scene) -> Result<T>,
) -> Result<(Vec<u8>, RepackReport, T)> {
    repack_checked(Files::new(path, import), options, out, edit)
}

/// [`repack_bytes_edited`] of a GLB held in memory (`name` labels it in messages), unedited:
/// what `optimize` does to the file it wrote from a native rig or an FBX scene.
pub fn repack_glb_in_memory(
    glb: Vec<u8>,
    name: &str,
    options: &RepackOptions,
    out: &Path,
) -> Result<(Vec<u8>, RepackReport)> {
    let mut set = super::files::FileSet::new();
    set.add(name, glb)?;
    let files = Files::in_memory(name, std::sync::Arc::new(set), ImportOptions::default());
    let (glb, report, ()) = repack_checked(files, options, out, |_| Ok(()))?;
    Ok((glb, report))
}

/// The repacked bytes of the model `files` reads, checked against it (see
/// [`repack_bytes_edited`]).
fn repack_checked<T>(
    mut files: Files,
    options: &RepackOptions,
    out: &Path,
    edit: impl FnOnce(&mut Scene) -> Result<T>,
) -> Result<(Vec<u8>, RepackReport, T)> {
    let path = files.model.clone();
    let bytes = files.read_model()?;
    // Refuse writing over an input before any work.
    super::output::refuse_inputs(out, std::slice::from_ref(&files.model))?;
    let (glb, mut report, input, edited) = repack(&bytes, &mut files, options, edit)?;
    super::output::refuse_inputs(out, &files.read)?;
    // The output must read back as the input did.
    let file = super::file_label(&path);
    let again = super::gltf_import::import_slice(&glb, out).map_err(|e| {
        Error::invalid(
            &file,
            "(export)",
            format!("the written file would not import ({e}); nothing written"),
        )
    })?;
    let exact_positions = options.quantize_mesh.is_none();
    report.max_weight_change = check_same(
        &file,
        &input,
        &again,
        exact_positions,
        &report.vertex_orders,
    )?;
    report.bytes = glb.len();
    Ok((glb, report, edited))
}

/// The GLB bytes of the repacked model in memory (`files` reads the model's external files).
fn repack<T>(
    bytes: &[u8],
    files: &mut Files,
    options: &RepackOptions,
    edit: impl FnOnce(&mut Scene) -> Result<T>,
) -> Result<(Vec<u8>, RepackReport, Scene, T)> {
    let file = super::file_label(&files.model);
    let mut imported = super::gltf_import::import_parts(bytes, files)?;
    if options.rewrite_animations {
        // Against the clips as imported: the edit may leave channels out on purpose.
        refuse_lost_channels(imported.document.as_json(), &imported.scene, &file)?;
    }
    let edited = edit(&mut imported.scene)?;
    let input_json = raw_json(bytes, &file)?;
    let mut root = imported.document.as_json().clone();
    refuse_buffer_level_extensions(&root, &file)?;
    let mut report = initial_report(&root, &imported.scene);

    if options.rewrite_animations {
        // Accessors then own their views, so a re-encoded one leaves no old bytes behind.
        split_shared_views(&mut root);
    }
    // Re-encode joints and weights first: it decides which views take new bytes.
    let mut edits = Edits {
        replaced_views: vec![None; root.buffer_views.len()],
        appended: Vec::new(),
        rewritten: Vec::new(),
        sets_dropped: false,
    };
    reencode(
        &file,
        &imported.scene,
        &mut root,
        options,
        &mut edits,
        &mut report,
    )?;
    if let Some(q) = options.quantize_mesh {
        let quantized =
            super::gltf_quantize::quantize(&file, &imported.document, &imported.buffers, q)?;
        apply_quantization(
            &file,
            &mut root,
            options,
            quantized,
            &mut edits,
            &mut report,
        );
    }
    let Edits {
        replaced_views,
        appended,
        rewritten,
        sets_dropped,
    } = edits;

    let mut bin = merge_views(&mut root, &imported.buffers, &replaced_views, &file)?;
    // New views (re-encoded accessors whose old view is shared), 4-aligned.
    for (data, stride) in appended {
        let target = Some(Checked::Valid(json::buffer::Target::ArrayBuffer));
        let view = append_view(&mut bin, &mut root.buffer_views, &data, target);
        root.buffer_views[view.value()].byte_stride = stride.map(json::buffer::Stride);
    }
    let mut old_animations = Vec::new();
    if options.rewrite_animations {
        old_animations = std::mem::take(&mut root.animations);
    }
    append_animations(&mut root, &mut bin, &imported.scene);
    // A rewritten animation keeps its object's own extensions and extras.
    for (new, old) in root.animations.iter_mut().zip(old_animations) {
        new.extensions = old.extensions;
        new.extras = old.extras;
    }
    if options.rewrite_animations || sets_dropped {
        bin = drop_unused(&mut root, &bin, &file, &mut report)?;
    }
    embed_images(&mut root, &mut bin, files, &file, &mut report)?;
    // The one buffer, keeping the first buffer's name, extensions and extras.
    let first = root.buffers.first().cloned();
    root.buffers.clear();
    if !bin.is_empty() {
        root.buffers.push(json::Buffer {
            byte_length: USize64(bin.len() as u64),
            name: first.as_ref().and_then(|b| b.name.clone()),
            uri: None,
            extensions: first.as_ref().and_then(|b| b.extensions.clone()),
            extras: first.and_then(|b| b.extras),
        });
    }

    if options.compress {
        bin = compress(&mut root, bin, &file, &mut report)?;
    }
    let json_bytes = super::json_defaults::document_bytes(&root, &file)?;
    let output_json: Value = serde_json::from_slice(&json_bytes)
        .map_err(|e| Error::invalid(&file, "(json)", format!("cannot re-read: {e}")))?;
    dropped_properties(&input_json, &output_json, "", &mut report.dropped);
    report
        .dropped
        .retain(|p| !rewritten.iter().any(|r| p.starts_with(&format!("{r}."))));
    if options.rewrite_animations || sets_dropped {
        // Accessors and views are renumbered on purpose: the input's paths name others.
        report
            .dropped
            .retain(|p| !p.starts_with("accessors[") && !p.starts_with("bufferViews["));
    }
    if options.rewrite_animations {
        // A rewritten sampler's interpolation is the clip's (LINEAR, the default, unwritten).
        report
            .dropped
            .retain(|p| !(p.starts_with("animations[") && p.ends_with(".interpolation")));
    }
    report.kept = kept_summary(&root);
    let glb = pack_glb(&json_bytes, &bin)
        .ok_or_else(|| Error::invalid(&file, "(glb)", "file would exceed the 4 GiB GLB limit"))?;
    Ok((glb, report, imported.scene, edited))
}

/// `bin` with the views compressed (buffer 0 resized to it), the stats in `report`.
#[cfg(not(target_arch = "wasm32"))]
fn compress(
    root: &mut json::Root,
    bin: Vec<u8>,
    file: &str,
    report: &mut RepackReport,
) -> Result<Vec<u8>> {
    let mut bin = bin;
    report.vertex_orders = super::gltf_reorder::reorder(root, &mut bin, file)?;
    let (bin, stats) = super::meshopt_encode::compress(root, &bin, file)?;
    if let Some(b) = root.buffers.first_mut() {
        b.byte_length = USize64(bin.len() as u64);
    }
    report.compressed = Some(stats);
    Ok(bin)
}

/// The web build has no meshoptimizer encoder.
#[cfg(target_arch = "wasm32")]
fn compress(_: &mut json::Root, _: Vec<u8>, file: &str, _: &mut RepackReport) -> Result<Vec<u8>> {
    Err(Error::invalid(
        file,
        "(compress)",
        "EXT_meshopt_compression is written by the desktop build only",
    ))
}

/// An error when the document uses an extension that names buffers by byte offset
/// ([`BUFFER_LEVEL_EXTENSIONS`]): merging buffers would break it.
fn refuse_buffer_level_extensions(root: &json::Root, file: &str) -> Result<()> {
    if let Some(ext) = root
        .extensions_used
        .iter()
        .find(|e| BUFFER_LEVEL_EXTENSIONS.contains(&e.as_str()))
    {
        return Err(Error::invalid(
            file,
            "extensionsUsed",
            format!(
                "{ext} names buffers by byte offset inside its extension objects, which export \
                 cannot rewrite; keep the original file"
            ),
        ));
    }
    Ok(())
}

/// The report as far as the input decides it: buffers merged, the importer's notes on
/// `scene`, and the external buffers embedded.
fn initial_report(root: &json::Root, scene: &Scene) -> RepackReport {
    let mut report = RepackReport {
        buffers_merged: root.buffers.len(),
        input_notes: scene
            .report
            .notes
            .iter()
            .map(|n| format!("{}: {}", n.field, n.message))
            .collect(),
        ..Default::default()
    };
    for (i, b) in root.buffers.iter().enumerate() {
        if let Some(uri) = b.uri.as_deref().filter(|u| !u.starts_with("data:")) {
            report.embedded.push(format!("buffers[{i}].uri \"{uri}\""));
        }
    }
    report
}

/// One BIN chunk: every view's bytes from `buffers` (or its replacement from
/// `replaced_views`), congruent mod 4 to the old offset so that accessor alignment is
/// unchanged; the views are pointed at it. An error for a view outside its buffer.
fn merge_views(
    root: &mut json::Root,
    buffers: &[gltf::buffer::Data],
    replaced_views: &[Option<Vec<u8>>],
    file: &str,
) -> Result<Vec<u8>> {
    let mut bin: Vec<u8> = Vec::new();
    for (vi, view) in root.buffer_views.iter_mut().enumerate() {
        let data: &[u8] = match &replaced_views[vi] {
            Some(d) => d,
            None => {
                let b = view.buffer.value();
                let start = view.byte_offset.map_or(0, |o| o.0);
                let end = start.saturating_add(view.byte_length.0);
                let buffer = buffers.get(b).ok_or_else(|| {
                    Error::invalid(
                        file,
                        format!("bufferViews[{vi}].buffer"),
                        format!("buffer {b} out of range"),
                    )
                })?;
                let declared = root.buffers.get(b).map_or(0, |x| x.byte_length.0);
                if end > declared || end > buffer.len() as u64 {
                    return Err(Error::invalid(
                        file,
                        format!("bufferViews[{vi}]"),
                        format!(
                            "bytes {start}..{end} lie outside buffers[{b}] of {declared} bytes \
                             (glTF 2.0 buffer views: byteOffset + byteLength MUST NOT exceed \
                             the buffer's byteLength)"
                        ),
                    ));
                }
                &buffer[start as usize..end as usize]
            }
        };
        let old_offset = if replaced_views[vi].is_some() {
            0
        } else {
            view.byte_offset.map_or(0, |o| o.0) as usize
        };
        while bin.len() % 4 != old_offset % 4 {
            bin.push(0);
        }
        view.buffer = json::Index::new(0);
        view.byte_offset = (!bin.is_empty()).then_some(USize64(bin.len() as u64));
        view.byte_length = USize64(data.len() as u64);
        bin.extend_from_slice(data);
    }
    Ok(bin)
}

/// External images become buffer views appended to `bin`, with their MIME type (given, or
/// known from their bytes); each is listed in `report`. data: URI images stay as they are.
fn embed_images(
    root: &mut json::Root,
    bin: &mut Vec<u8>,
    files: &mut Files,
    file: &str,
    report: &mut RepackReport,
) -> Result<()> {
    for (ii, image) in root.images.iter_mut().enumerate() {
        let Some(uri) = image.uri.clone().filter(|u| !u.starts_with("data:")) else {
            continue;
        };
        let field = format!("images[{ii}].uri");
        let data = files.read_whole(&uri, MAX_IMAGE_BYTES as u64, &field)?;
        let mime = image
            .mime_type
            .as_ref()
            .map(|m| m.0.clone())
            .or_else(|| mime_of(&data))
            .ok_or_else(|| {
                Error::invalid(
                    file,
                    &field,
                    format!(
                        "\"{uri}\" is not PNG, JPEG, WebP or KTX2 by its bytes and has no \
                         mimeType: cannot embed it (glTF 2.0 image: an image in a bufferView \
                         needs a mimeType)"
                    ),
                )
            })?;
        let view = append_view(bin, &mut root.buffer_views, &data, None);
        image.uri = None;
        image.mime_type = Some(json::image::MimeType(mime));
        image.buffer_view = Some(view);
        report.embedded.push(format!("{field} \"{uri}\""));
    }
    Ok(())
}

/// What the output keeps, counted (`nodes 3, meshes 1, ...`).
fn kept_summary(root: &json::Root) -> String {
    format!(
        "nodes {}, meshes {}, skins {}, animations {}, materials {}, textures {}, images {}, \
         samplers {}, cameras {}, extensions [{}]",
        root.nodes.len(),
        root.meshes.len(),
        root.skins.len(),
        root.animations.len(),
        root.materials.len(),
        root.textures.len(),
        root.images.len(),
        root.samplers.len(),
        root.cameras.len(),
        root.extensions_used.join(", ")
    )
}

/// Append `data` to the BIN chunk at a 4-aligned offset, with a new view of it.
fn append_view(
    bin: &mut Vec<u8>,
    views: &mut Vec<json::buffer::View>,
    data: &[u8],
    target: Option<Checked<json::buffer::Target>>,
) -> json::Index<json::buffer::View> {
    bin.resize(bin.len().div_ceil(4) * 4, 0);
    views.push(json::buffer::View {
        buffer: json::Index::new(0),
        byte_length: USize64(data.len() as u64),
        byte_offset: (!bin.is_empty()).then_some(USize64(bin.len() as u64)),
        byte_stride: None,
        name: None,
        target,
        extensions: None,
        extras: Default::default(),
    });
    bin.extend_from_slice(data);
    json::Index::new(views.len() as u32 - 1)
}

/// The edited scene's animations past the document's own (clips an edit added: `retarget`),
/// appended with one sampler per channel, float accessors, node indices as the file's.
fn append_animations(root: &mut json::Root, bin: &mut Vec<u8>, scene: &Scene) {
    use json::accessor::{ComponentType, GenericComponentType, Type};
    use json::animation::{Interpolation as Gi, Property};
    let mut pool = AnimationViews::default();
    let floats =
        |pool: &mut AnimationViews, root: &mut json::Root, v: &[f32], ty: Type, minmax: bool| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            let comps = match ty {
                Type::Scalar => 1,
                Type::Vec3 => 3,
                _ => 4,
            };
            // Key times' bounds (glTF requires them on animation inputs).
            let bound = |pick: fn(f32, f32) -> f32| {
                (minmax && !v.is_empty())
                    .then(|| super::accessor::json_floats(&[v.iter().copied().fold(v[0], pick)]))
            };
            let byte_offset = pool.add(root.accessors.len(), &bytes, 4 * comps);
            root.accessors.push(json::Accessor {
                buffer_view: None,
                byte_offset,
                count: USize64((v.len() / comps) as u64),
                component_type: Checked::Valid(GenericComponentType(ComponentType::F32)),
                extensions: None,
                extras: Default::default(),
                type_: Checked::Valid(ty),
                min: bound(f32::min),
                max: bound(f32::max),
                name: None,
                normalized: false,
                sparse: None,
            });
            json::Index::<json::Accessor>::new(root.accessors.len() as u32 - 1)
        };
    // Key time arrays already written, by their bits: samplers with the same times share one
    // input accessor (as exporters write them).
    let mut inputs: BTreeMap<Vec<u32>, json::Index<json::Accessor>> = BTreeMap::new();
    for anim in scene.animations.iter().skip(root.animations.len()) {
        let mut channels = Vec::with_capacity(anim.channels.len());
        let mut samplers = Vec::with_capacity(anim.channels.len());
        for c in &anim.channels {
            let (ty, path) = match c.path {
                crate::anim::Path::Rotation => (Type::Vec4, Property::Rotation),
                crate::anim::Path::Translation => (Type::Vec3, Property::Translation),
                crate::anim::Path::Scale => (Type::Vec3, Property::Scale),
                crate::anim::Path::Weights => (Type::Scalar, Property::MorphTargetWeights),
            };
            let bits: Vec<u32> = c.sampler.times_s.iter().map(|t| t.to_bits()).collect();
            let input = match inputs.get(&bits) {
                Some(&i) => i,
                None => {
                    let i = floats(&mut pool, root, &c.sampler.times_s, Type::Scalar, true);
                    inputs.insert(bits, i);
                    i
                }
            };
            // Outputs that are all exactly codes are stored as them.
            let values = &c.sampler.values;
            let output = crate::anim::snorm::OutputCodes::of(c.path, values)
                .map(|codes| code_accessor(&mut pool, root, &codes, ty));
            let output = output.unwrap_or_else(|| floats(&mut pool, root, values, ty, false));
            let interpolation = match c.sampler.interpolation {
                crate::anim::Interpolation::Step => Gi::Step,
                crate::anim::Interpolation::Linear => Gi::Linear,
                crate::anim::Interpolation::CubicSpline => Gi::CubicSpline,
            };
            samplers.push(json::animation::Sampler {
                extensions: None,
                extras: Default::default(),
                input,
                interpolation: Checked::Valid(interpolation),
                output,
            });
            let node = scene.nodes.get(c.node).map_or(0, |n| n.source_index);
            channels.push(json::animation::Channel {
                sampler: json::Index::new(samplers.len() as u32 - 1),
                target: json::animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: json::Index::new(node as u32),
                    path: Checked::Valid(path),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        root.animations.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels,
            name: anim.name.clone(),
            samplers,
        });
    }
    pool.append(root, bin);
}

/// New animation data gathered by element size, one buffer view each: fewer views (a smaller
/// JSON chunk), and each compresses as one stream.
#[derive(Default)]
struct AnimationViews {
    /// Element size → the bytes, and the accessors that point into them.
    parts: BTreeMap<usize, (Vec<u8>, Vec<usize>)>,
}

impl AnimationViews {
    /// Add accessor `accessor`'s `bytes` (elements of `element` bytes) to the view of that
    /// element size; its byte offset in that view (None for 0).
    fn add(&mut self, accessor: usize, bytes: &[u8], element: usize) -> Option<USize64> {
        let (data, users) = self.parts.entry(element).or_default();
        let offset = data.len();
        data.extend_from_slice(bytes);
        users.push(accessor);
        (offset > 0).then_some(USize64(offset as u64))
    }

    /// Append each view to `bin` and point its accessors at it.
    fn append(self, root: &mut json::Root, bin: &mut Vec<u8>) {
        for (data, users) in self.parts.into_values() {
            let view = append_view(bin, &mut root.buffer_views, &data, None);
            for a in users {
                root.accessors[a].buffer_view = Some(view);
            }
        }
    }
}

/// An accessor of normalised integer `codes` of type `ty`.
fn code_accessor(
    pool: &mut AnimationViews,
    root: &mut json::Root,
    codes: &crate::anim::snorm::OutputCodes,
    ty: json::accessor::Type,
) -> json::Index<json::Accessor> {
    use json::accessor::{ComponentType as C, GenericComponentType};
    let component = match codes {
        crate::anim::snorm::OutputCodes::Snorm16(_) => C::I16,
        crate::anim::snorm::OutputCodes::Unorm8(_) => C::U8,
        crate::anim::snorm::OutputCodes::Unorm16(_) => C::U16,
    };
    let bytes = codes.to_le_bytes();
    let element = ty.multiplicity() * super::accessor::component_size(component);
    let byte_offset = pool.add(root.accessors.len(), &bytes, element);
    root.accessors.push(json::Accessor {
        buffer_view: None,
        byte_offset,
        count: USize64((bytes.len() / element) as u64),
        component_type: Checked::Valid(GenericComponentType(component)),
        extensions: None,
        extras: Default::default(),
        type_: Checked::Valid(ty),
        min: None,
        max: None,
        name: None,
        normalized: true,
        sparse: None,
    });
    json::Index::new(root.accessors.len() as u32 - 1)
}

/// The input's JSON as written (the JSON chunk of a GLB).
fn raw_json(bytes: &[u8], file: &str) -> Result<Value> {
    let glb;
    let json: &[u8] = if bytes.starts_with(b"glTF") {
        glb = gltf::binary::Glb::from_slice(bytes)
            .map_err(|e| Error::invalid(file, "(glb)", e.to_string()))?;
        &glb.json
    } else {
        bytes
    };
    serde_json::from_slice(json).map_err(|e| Error::invalid(file, "(json)", e.to_string()))
}

fn type_name(component: json::accessor::ComponentType, normalized: bool) -> &'static str {
    use json::accessor::ComponentType as C;
    match (component, normalized) {
        (C::F32, _) => "float",
        (C::U8, true) => "unorm8",
        (C::U16, true) => "unorm16",
        (C::U8, false) => "u8",
        (C::U16, false) => "u16",
        _ => "other",
    }
}

/// New bytes decided by re-encoding.
struct Edits {
    /// New bytes for a view, in its own slot.
    replaced_views: Vec<Option<Vec<u8>>>,
    /// New views to append, with their stride when their elements are padded.
    appended: Vec<(Vec<u8>, Option<usize>)>,
    /// Objects re-encoded on purpose (their old properties are not "dropped").
    rewritten: Vec<String>,
    /// Whether influence sets were taken off primitives (their accessors then go unused).
    sets_dropped: bool,
}

/// Replace the JOINTS_n / WEIGHTS_n accessors whose type differs from the requested one.
fn reencode(
    file: &str,
    scene: &Scene,
    root: &mut json::Root,
    options: &RepackOptions,
    edits: &mut Edits,
    report: &mut RepackReport,
) -> Result<()> {
    if options.joints.is_none() && options.weights.is_none() && !options.rewrite_skin {
        return Ok(());
    }
    let mut out = Reencoder::new(file, options, root, edits, report);
    for (mi, mesh) in scene.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let Some(sw) = &prim.skin_weights else {
                continue;
            };
            let skin = SkinAttributes {
                field: format!("meshes[{mi}].primitives[{pi}]"),
                attributes: root.meshes[mi].primitives[pi].attributes.clone(),
                weights: sw,
            };
            out.joints(root, &skin)?;
            out.weights(root, &skin)?;
            if options.rewrite_skin {
                out.drop_sets(root, (mi, pi), sw.width / 4);
            }
        }
    }
    Ok(())
}

/// [`super::gltf_quantize`]'s decisions written into `root`: each accessor re-encoded in
/// place, new inverse bind matrices for skins without them, the extension used and required.
fn apply_quantization(
    file: &str,
    root: &mut json::Root,
    options: &RepackOptions,
    quantized: super::gltf_quantize::Quantized,
    edits: &mut Edits,
    report: &mut RepackReport,
) {
    use json::accessor::{ComponentType, GenericComponentType, Type};
    let mut out = Reencoder::new(file, options, root, edits, report);
    let any = !quantized.replacements.is_empty() || !quantized.new_inverse_binds.is_empty();
    for g in &quantized.node_grids {
        if let Some(node) = root.nodes.get_mut(g.node) {
            fold_grid_into_node(node, g);
            out.report.reencoded.push(format!(
                "nodes[{}]: its mesh's position grid folded into its transform",
                g.node
            ));
        }
    }
    for t in &quantized.uv_transforms {
        for &m in &t.materials {
            if let Some(material) = root.materials.get_mut(m) {
                compose_uv_transform(material, t.set, t.offset, t.scale);
            }
        }
    }
    if !quantized.uv_transforms.is_empty() {
        require_extension(root, TEXTURE_TRANSFORM);
    }
    for r in quantized.replacements {
        out.quantized(root, r);
    }
    for (skin, bytes, joints) in quantized.new_inverse_binds {
        let a = root.accessors.len();
        root.accessors.push(json::Accessor {
            buffer_view: None,
            byte_offset: None,
            count: USize64(joints as u64),
            component_type: Checked::Valid(GenericComponentType(ComponentType::F32)),
            extensions: None,
            extras: Default::default(),
            type_: Checked::Valid(Type::Mat4),
            min: None,
            max: None,
            name: None,
            normalized: false,
            sparse: None,
        });
        root.skins[skin].inverse_bind_matrices = Some(json::Index::new(a as u32));
        out.place(root, a, bytes, None);
        out.report.reencoded.push(format!(
            "skins[{skin}].inverseBindMatrices: new, with the position grid folded in"
        ));
    }
    out.report.not_done.extend(quantized.notes);
    out.report.position_step = quantized.position_step;
    if any {
        require_extension(root, "KHR_mesh_quantization");
    }
}

/// `node`'s transform made `node_from_mesh * translate(corner) * scale(step)`: its matrix
/// multiplied, or its translation moved by the corner through its rotation and scale and
/// its scale multiplied by the step (the grid's scale is uniform, so the product stays a
/// translation, rotation and scale).
fn fold_grid_into_node(node: &mut json::Node, g: &super::gltf_quantize::NodeGrid) {
    let corner = glam::Vec3::from(g.corner);
    match node.matrix {
        Some(m) => {
            let mesh_from_grid = glam::Mat4::from_scale_rotation_translation(
                glam::Vec3::splat(g.step),
                glam::Quat::IDENTITY,
                corner,
            );
            node.matrix = Some((glam::Mat4::from_cols_array(&m) * mesh_from_grid).to_cols_array());
        }
        None => {
            let t = glam::Vec3::from(node.translation.unwrap_or([0.0; 3]));
            let r = glam::Quat::from_array(node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |q| q.0));
            let s = glam::Vec3::from(node.scale.unwrap_or([1.0; 3]));
            node.translation = Some((t + r * (s * corner)).to_array());
            node.scale = Some((s * g.step).to_array());
        }
    }
}

/// Give every accessor of a view that several accessors share, one after another (not
/// interleaved, no sparse part, no image in it), a view of its own over the same bytes, so
/// each can take new bytes in its own slot.
fn split_shared_views(root: &mut json::Root) {
    let users = view_users(root);
    let mut by_view: BTreeMap<usize, Vec<(u64, u64, usize)>> = BTreeMap::new();
    for (ai, a) in root.accessors.iter().enumerate() {
        let Some((v, element, stride)) = super::accessor::json_layout(root, a) else {
            continue;
        };
        let (element, stride) = (element as u64, stride as u64);
        let start = a.byte_offset.map_or(0, |o| o.0);
        let len = stride.saturating_mul(a.count.0.saturating_sub(1)) + element;
        by_view
            .entry(v)
            .or_default()
            .push((start, start.saturating_add(len), ai));
    }
    for (v, mut ranges) in by_view {
        if ranges.len() < 2 || users[v] != ranges.len() {
            continue;
        }
        ranges.sort();
        let view = root.buffer_views[v].clone();
        let fits = ranges.windows(2).all(|w| w[0].1 <= w[1].0)
            && ranges.iter().all(|r| r.1 <= view.byte_length.0)
            && ranges.iter().all(|r| root.accessors[r.2].sparse.is_none());
        if !fits {
            continue;
        }
        let base = view.byte_offset.map_or(0, |o| o.0);
        let stride = view.byte_stride.map_or(0, |s| s.0 as u64);
        for (k, &(start, end, ai)) in ranges.iter().enumerate() {
            // A strided part spans whole strides where the bytes allow (the validator wants
            // a view at least one stride long).
            let next = ranges.get(k + 1).map_or(view.byte_length.0, |r| r.0);
            let whole = start + stride * root.accessors[ai].count.0;
            let mut part = view.clone();
            part.byte_offset = Some(USize64(base + start));
            part.byte_length = USize64(end.max(whole.min(next)) - start);
            let index = match k {
                0 => v,
                _ => root.buffer_views.len(),
            };
            match k {
                0 => root.buffer_views[v] = part,
                _ => root.buffer_views.push(part),
            }
            root.accessors[ai].buffer_view = Some(json::Index::new(index as u32));
            root.accessors[ai].byte_offset = None;
        }
    }
}

/// Every texture of `material` that reads texture coordinate set `set` gets `offset` and
/// `scale` (coordinates stored over their range: `uv = offset + scale * stored`) composed
/// into its `KHR_texture_transform`, after any it had (its offset then moves by its own
/// rotation and scale).
fn compose_uv_transform(
    material: &mut json::Material,
    set: u32,
    offset: glam::Vec2,
    scale: glam::Vec2,
) {
    let Ok(mut v) = serde_json::to_value(&*material) else {
        return;
    };
    let slots = [
        "/pbrMetallicRoughness/baseColorTexture",
        "/pbrMetallicRoughness/metallicRoughnessTexture",
        "/normalTexture",
        "/occlusionTexture",
        "/emissiveTexture",
    ];
    for slot in slots {
        let Some(info) = v.pointer_mut(slot).and_then(Value::as_object_mut) else {
            continue;
        };
        let own = info.get("texCoord").and_then(Value::as_u64).unwrap_or(0);
        let old = info
            .get("extensions")
            .and_then(|e| e.get(TEXTURE_TRANSFORM))
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        // The importer has read this file: a transform it holds is well formed.
        let Ok(t) = TextureTransform::read(&old) else {
            continue;
        };
        if t.tex_coord.map_or(own, u64::from) != u64::from(set) {
            continue;
        }
        // M (offset + scale * x) = M offset + R S scale x: the offset moves, the scales
        // multiply, the rotation stays.
        let moved = t.matrix().transform_point2(offset);
        let mut new = old;
        new["offset"] = serde_json::json!([moved.x, moved.y]);
        new["scale"] = serde_json::json!([t.scale.x * scale.x, t.scale.y * scale.y]);
        let extensions = info
            .entry("extensions")
            .or_insert_with(|| Value::Object(Default::default()));
        extensions[TEXTURE_TRANSFORM] = new;
    }
    if let Ok(m) = serde_json::from_value(v) {
        *material = m;
    }
}

/// `name` in the document's `extensionsUsed` and `extensionsRequired` (once each): a reader
/// without it would misread the file.
pub(crate) fn require_extension(root: &mut json::Root, name: &str) {
    for list in [&mut root.extensions_used, &mut root.extensions_required] {
        if !list.iter().any(|e| e == name) {
            list.push(name.to_string());
        }
    }
}

/// How many accessors and images use each view: a view only one replaced accessor uses can
/// take its new bytes in place.
fn view_users(root: &json::Root) -> Vec<usize> {
    let mut users = vec![0usize; root.buffer_views.len()];
    for a in &root.accessors {
        if let Some(v) = a.buffer_view
            && let Some(u) = users.get_mut(v.value())
        {
            *u += 1;
        }
        if let Some(s) = &a.sparse {
            for v in [s.indices.buffer_view.value(), s.values.buffer_view.value()] {
                if let Some(u) = users.get_mut(v) {
                    *u += 1;
                }
            }
        }
    }
    for i in &root.images {
        if let Some(v) = i.buffer_view
            && let Some(u) = users.get_mut(v.value())
        {
            *u += 1;
        }
    }
    users
}

/// An accessor's component type and whether it is normalised (an invalid type reads as float).
fn component_of(root: &json::Root, a: usize) -> (json::accessor::ComponentType, bool) {
    match root.accessors[a].component_type {
        Checked::Valid(t) => (t.0, root.accessors[a].normalized),
        Checked::Invalid => (json::accessor::ComponentType::F32, false),
    }
}

/// One skinned primitive as re-encoding sees it: `field` names it, `attributes` are its glTF
/// attributes, `weights` its imported (repaired) influences.
struct SkinAttributes<'a> {
    field: String,
    attributes: BTreeMap<Checked<json::mesh::Semantic>, json::Index<json::Accessor>>,
    weights: &'a SkinWeights,
}

impl SkinAttributes<'_> {
    /// The accessor of attribute `name`, if the primitive has it.
    fn accessor(&self, name: gltf::Semantic) -> Option<usize> {
        self.attributes
            .get(&Checked::Valid(name))
            .map(|i| i.value())
    }
}

/// The state of one re-encoding: which views may take new bytes in place (`users`), which
/// accessors are done (one shared by several primitives is re-encoded once), the new bytes
/// and the report.
struct Reencoder<'a> {
    file: &'a str,
    options: &'a RepackOptions,
    users: Vec<usize>,
    done: HashSet<usize>,
    edits: &'a mut Edits,
    report: &'a mut RepackReport,
}

impl<'a> Reencoder<'a> {
    /// A re-encoding of `root`'s accessors into `edits` and `report`.
    fn new(
        file: &'a str,
        options: &'a RepackOptions,
        root: &json::Root,
        edits: &'a mut Edits,
        report: &'a mut RepackReport,
    ) -> Reencoder<'a> {
        Reencoder {
            file,
            options,
            users: view_users(root),
            done: HashSet::new(),
            edits,
            report,
        }
    }

    /// Give accessor `acc` the new `bytes` (elements `stride` apart when padded): in its own
    /// view's slot when it alone uses that view, else in a new view; its offset, sparse part
    /// and bounds go.
    fn place(&mut self, root: &mut json::Root, acc: usize, bytes: Vec<u8>, stride: Option<usize>) {
        let Edits {
            replaced_views,
            appended,
            rewritten,
            ..
        } = &mut *self.edits;
        rewritten.push(format!("accessors[{acc}]"));
        let old = root.accessors[acc].buffer_view.map(|v| v.value());
        let view = match old {
            Some(v) if self.users.get(v) == Some(&1) && root.accessors[acc].sparse.is_none() => {
                root.buffer_views[v].byte_stride = stride.map(json::buffer::Stride);
                replaced_views[v] = Some(bytes);
                rewritten.push(format!("bufferViews[{v}]"));
                v
            }
            _ => {
                appended.push((bytes, stride));
                root.buffer_views.len() + appended.len() - 1
            }
        };
        let a = &mut root.accessors[acc];
        a.buffer_view = Some(json::Index::new(view as u32));
        a.byte_offset = None;
        a.sparse = None;
        a.min = None;
        a.max = None;
    }

    /// Accessor `acc` as `bytes` of component type `want` (normalised or not), placed and
    /// reported (`what` names the attribute).
    fn replace(
        &mut self,
        root: &mut json::Root,
        acc: usize,
        bytes: Vec<u8>,
        (want, normalized): (json::accessor::ComponentType, bool),
        what: &str,
    ) {
        let (ct, norm) = component_of(root, acc);
        root.accessors[acc].component_type =
            Checked::Valid(json::accessor::GenericComponentType(want));
        root.accessors[acc].normalized = normalized;
        self.place(root, acc, bytes, None);
        self.report.reencoded.push(format!(
            "accessors[{acc}] ({what}): {} -> {}",
            type_name(ct, norm),
            type_name(want, normalized)
        ));
    }

    /// Accessor `r.accessor` as [`Replacement`] says: its type, bytes, stride and bounds.
    fn quantized(&mut self, root: &mut json::Root, r: Replacement) {
        let (ct, norm) = component_of(root, r.accessor);
        let a = &mut root.accessors[r.accessor];
        a.component_type = Checked::Valid(json::accessor::GenericComponentType(r.component));
        a.normalized = r.normalized;
        self.place(root, r.accessor, r.bytes, r.stride);
        if let Some((lo, hi)) = r.bounds {
            root.accessors[r.accessor].min = Some(Value::from(lo));
            root.accessors[r.accessor].max = Some(Value::from(hi));
        }
        self.report.reencoded.push(format!(
            "{} ({}): {} -> {}",
            r.what,
            r.accessor,
            type_name(ct, norm),
            type_name(r.component, r.normalized)
        ));
    }

    /// The primitive's JOINTS_n accessors in the joint type asked for (or, rewriting, the type
    /// each had, widened to u16 when a joint index needs it).
    fn joints(&mut self, root: &mut json::Root, skin: &SkinAttributes) -> Result<()> {
        use json::accessor::ComponentType as C;
        let options = self.options;
        let sw = skin.weights;
        let widest_joint = sw.joints.iter().copied().max().unwrap_or(0);
        for set in 0..sw.width / 4 {
            let Some(a) = skin.accessor(gltf::Semantic::Joints(set as u32)) else {
                continue;
            };
            let (ct, _) = component_of(root, a);
            let jt = match options.joints {
                Some(jt) => jt,
                None if !options.rewrite_skin => continue,
                None if ct == C::U8 && widest_joint <= 255 => JointEncoding::U8,
                None => JointEncoding::U16,
            };
            let want = match jt {
                JointEncoding::U8 => C::U8,
                JointEncoding::U16 => C::U16,
            };
            if (ct == want && !options.rewrite_skin) || !self.done.insert(a) {
                continue;
            }
            let jf = format!("{}.attributes.JOINTS_{set}", skin.field);
            let bytes = joint_bytes(self.file, &jf, sw, set, jt)?;
            self.replace(root, a, bytes, (want, false), &jf);
        }
        Ok(())
    }

    /// The primitive's JOINTS_n and WEIGHTS_n attributes of sets `sets` and on gone (the
    /// scene's influences were limited to fewer sets); their accessors go when unused.
    fn drop_sets(&mut self, root: &mut json::Root, (mi, pi): (usize, usize), sets: usize) {
        let attributes = &mut root.meshes[mi].primitives[pi].attributes;
        let before = attributes.len();
        attributes.retain(|k, _| match k {
            Checked::Valid(gltf::Semantic::Joints(n) | gltf::Semantic::Weights(n)) => {
                (*n as usize) < sets
            }
            _ => true,
        });
        if attributes.len() < before {
            self.edits.sets_dropped = true;
            self.report.reencoded.push(format!(
                "meshes[{mi}].primitives[{pi}]: influences in {}, the others gone",
                crate::info::count(sets, "JOINTS/WEIGHTS set", "JOINTS/WEIGHTS sets")
            ));
            self.edits
                .rewritten
                .push(format!("meshes[{mi}].primitives[{pi}].attributes"));
        }
    }

    /// The primitive's WEIGHTS_n accessors in the weight type asked for (or, rewriting, the
    /// type of its first WEIGHTS accessor), quantised per vertex for the normalised types.
    fn weights(&mut self, root: &mut json::Root, skin: &SkinAttributes) -> Result<()> {
        use json::accessor::ComponentType as C;
        let options = self.options;
        let (sw, field) = (skin.weights, &skin.field);
        let weights_type = options.weights.or_else(|| {
            // Rewriting in place: the type of the first WEIGHTS accessor.
            let a = skin.accessor(gltf::Semantic::Weights(0))?;
            options.rewrite_skin.then(|| match component_of(root, a) {
                (C::U8, true) => WeightEncoding::Unorm8,
                (C::U16, true) => WeightEncoding::Unorm16,
                _ => WeightEncoding::F32,
            })
        });
        let Some(wt) = weights_type else {
            return Ok(());
        };
        let (want, want_norm) = match wt {
            WeightEncoding::F32 => (C::F32, false),
            WeightEncoding::Unorm8 => (C::U8, true),
            WeightEncoding::Unorm16 => (C::U16, true),
        };
        let targets: Vec<(usize, usize)> = (0..sw.width / 4)
            .filter_map(|set| {
                skin.accessor(gltf::Semantic::Weights(set as u32))
                    .map(|a| (set, a))
            })
            .filter(|&(_, a)| options.rewrite_skin || component_of(root, a) != (want, want_norm))
            .collect();
        if targets.is_empty() {
            return Ok(());
        }
        // Quantisation spreads rounding over all of a vertex's sets.
        let quantised = match wt {
            WeightEncoding::F32 => None,
            WeightEncoding::Unorm8 => Some(quantise(self.file, field, sw, 255)?),
            WeightEncoding::Unorm16 => Some(quantise(self.file, field, sw, 65535)?),
        };
        for (set, a) in targets {
            if !self.done.insert(a) {
                continue;
            }
            let (bytes, _) = weight_bytes(sw, set, wt, quantised.as_deref());
            let what = format!("{field}.attributes.WEIGHTS_{set}");
            self.replace(root, a, bytes, (want, want_norm), &what);
        }
        Ok(())
    }
}

/// PNG, JPEG, WebP or KTX2 by magic bytes (never by the file name alone: a mislabelled file
/// would be embedded under a type it is not).
fn mime_of(data: &[u8]) -> Option<String> {
    let by_magic = if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
        Some("image/webp")
    } else if data.starts_with(b"\xABKTX 20\xBB\r\n\x1a\n") {
        Some("image/ktx2")
    } else {
        None
    };
    by_magic.map(str::to_string)
}

/// Paths of properties in `input` that `output` lacks, skipping the ones export rewrites on
/// purpose (buffer URIs and lengths, external image URIs) and values the serialiser omits
/// because they are glTF's defaults.
fn dropped_properties(input: &Value, output: &Value, path: &str, out: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if path.is_empty() && k == "buffers" {
                    // Merged into one; reported as such.
                    if let (Some(Value::Array(ins)), Some(first)) =
                        (Some(v), b.get("buffers").and_then(|x| x.get(0)))
                        && let Some(i0) = ins.first()
                    {
                        let mut ignore = Vec::new();
                        dropped_properties(i0, first, "buffers[0]", &mut ignore);
                        out.extend(ignore.into_iter().filter(|p| p != "buffers[0].uri"));
                    }
                    if let Value::Array(ins) = v {
                        for (i, extra) in ins.iter().enumerate().skip(1) {
                            for key in ["name", "extras", "extensions"] {
                                if extra.get(key).is_some() {
                                    out.push(format!("buffers[{i}].{key}"));
                                }
                            }
                        }
                    }
                    continue;
                }
                match b.get(k) {
                    Some(w) => dropped_properties(v, w, &p, out),
                    None if is_default(v) || is_schema_default(path, k, v) => {}
                    // Rewritten on purpose: external images embedded, views re-laid out.
                    None if k == "uri" && path.starts_with("images[") => {}
                    None if k == "byteOffset" && path.starts_with("bufferViews[") => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                dropped_properties(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Values the gltf-json serialiser leaves out whatever the property: null, false, empty.
/// (The writers leave out the schema's own defaults: [`is_schema_default`].)
fn is_default(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) if a.is_empty() => true,
        Value::Object(o) if o.is_empty() => true,
        _ => false,
    }
}

/// Compare the re-imported output with the input scene: positions bit-exact, joints exact
/// where the weight is non-zero, the same nodes, skins and animations. Returns the largest
/// weight change.
/// Rotation keys are normalised on import, which moves an already unit f32 quaternion by an
/// ulp or so: they match within this; every other key exactly.
const ROTATION_KEY_ROUNDING: f32 = 1e-6;

/// Whether two samplers' keys read the same (see [`ROTATION_KEY_ROUNDING`]).
fn same_values(a: &crate::anim::Sampler, b: &crate::anim::Sampler) -> bool {
    match a.is_rotation {
        false => a.values == b.values,
        true => {
            a.values.len() == b.values.len()
                && a.values
                    .iter()
                    .zip(&b.values)
                    .all(|(x, y)| (x - y).abs() <= ROTATION_KEY_ROUNDING)
        }
    }
}

/// An error unless `output` reads as `input`: the same objects and keys, indices, joints,
/// weights within their new type's step (the largest change is returned), and positions bit
/// for bit when `exact_positions` (quantised positions are measured by the caller).
fn check_same(
    file: &str,
    input: &Scene,
    output: &Scene,
    exact_positions: bool,
    orders: &[(usize, usize, Vec<u32>)],
) -> Result<f32> {
    let internal = |what: String| {
        Error::invalid(
            file,
            "(export)",
            format!("the written file would not read back as the input ({what}); nothing written"),
        )
    };
    if input.nodes.len() != output.nodes.len()
        || input.skins.len() != output.skins.len()
        || input.animations.len() != output.animations.len()
        || input.meshes.len() != output.meshes.len()
    {
        return Err(internal("object counts differ".into()));
    }
    for (ai, (a, b)) in input.animations.iter().zip(&output.animations).enumerate() {
        if a.channels.len() != b.channels.len() {
            return Err(internal(format!("animations[{ai}] channel count")));
        }
        for (ci, (x, y)) in a.channels.iter().zip(&b.channels).enumerate() {
            let (u, v) = (&x.sampler, &y.sampler);
            let what = if (x.node, x.path) != (y.node, y.path) {
                "target"
            } else if u.interpolation != v.interpolation {
                "interpolation"
            } else if u.times_s != v.times_s {
                "key times"
            } else if !same_values(u, v) {
                "key values"
            } else {
                continue;
            };
            return Err(internal(format!("animations[{ai}].channels[{ci}] {what}")));
        }
    }
    let mut max_change = 0.0f32;
    for (mi, (a, b)) in input.meshes.iter().zip(&output.meshes).enumerate() {
        if a.primitives.len() != b.primitives.len() {
            return Err(internal(format!("meshes[{mi}] primitive count")));
        }
        for (pi, (p, q)) in a.primitives.iter().zip(&b.primitives).enumerate() {
            let f = format!("meshes[{mi}].primitives[{pi}]");
            let renumbered;
            let p = match orders.iter().find(|o| (o.0, o.1) == (mi, pi)) {
                Some((_, _, new_from_old)) => {
                    renumbered = renumber(p, new_from_old)
                        .ok_or_else(|| internal(format!("{f} vertex order")))?;
                    &renumbered
                }
                None => p,
            };
            let moved = exact_positions && p.positions != q.positions;
            let same_indices = p.indices == q.indices
                || (p.topology == crate::scene::Topology::Triangles
                    && same_triangles(&p.indices, &q.indices));
            if moved || p.positions.len() != q.positions.len() || !same_indices {
                return Err(internal(format!("{f} positions or indices")));
            }
            match (&p.skin_weights, &q.skin_weights) {
                (None, None) => {}
                (Some(x), Some(y)) if x.width == y.width => {
                    let change = influence_change(x, y)
                        .map_err(|v| internal(format!("{f} joints of vertex {v}")))?;
                    max_change = max_change.max(change);
                }
                _ => return Err(internal(format!("{f} skin weights"))),
            }
        }
    }
    Ok(max_change)
}

/// The largest change of a joint's weight on a vertex from `x` to `y` (the same width),
/// whichever slots hold it (compression may put a vertex's slots largest weight first);
/// `Err(vertex)` where a joint with weight in either has none in `x`.
fn influence_change(x: &SkinWeights, y: &SkinWeights) -> std::result::Result<f32, usize> {
    let w = x.width.max(1);
    // Joint `j`'s whole weight in a vertex's slots.
    let weight_of = |(joints, weights): (&[u32], &[f32]), j: u32| -> f32 {
        (joints.iter().zip(weights))
            .filter(|&(&k, &wt)| k == j && wt > 0.0)
            .map(|(_, &wt)| wt)
            .sum()
    };
    let xs = x.joints.chunks_exact(w).zip(x.weights.chunks_exact(w));
    let ys = y.joints.chunks_exact(w).zip(y.weights.chunks_exact(w));
    let mut largest = 0.0f32;
    for (v, (a, b)) in xs.zip(ys).enumerate() {
        // Every joint weighted on either side (the slots of both, in order).
        let slots = (a.0.iter().zip(a.1)).chain(b.0.iter().zip(b.1));
        for (&j, _) in slots.filter(|&(_, &wt)| wt > 0.0) {
            let (wx, wy) = (weight_of(a, j), weight_of(b, j));
            if wx == 0.0 {
                return Err(v);
            }
            largest = largest.max((wx - wy).abs());
        }
    }
    Ok(largest)
}

/// `p`'s positions, indices and skin weights with vertex `v` renumbered `new_from_old[v]`
/// (several to one where welded; None when the renumbering does not fit the primitive).
fn renumber(p: &crate::scene::Primitive, new_from_old: &[u32]) -> Option<crate::scene::Primitive> {
    if new_from_old.len() != p.positions.len() {
        return None;
    }
    let n = new_from_old.iter().max().map_or(0, |&m| m as usize + 1);
    let mut out = crate::scene::Primitive {
        positions: vec![glam::Vec3::ZERO; n],
        ..Default::default()
    };
    for (old, &new) in new_from_old.iter().enumerate() {
        *out.positions.get_mut(new as usize)? = p.positions[old];
    }
    out.indices = p
        .indices
        .iter()
        .map(|&i| new_from_old.get(i as usize).copied())
        .collect::<Option<_>>()?;
    out.topology = p.topology;
    if let Some(w) = &p.skin_weights {
        let mut moved = w.clone();
        moved.joints.truncate(n * w.width);
        moved.weights.truncate(n * w.width);
        for (old, &new) in new_from_old.iter().enumerate() {
            let (from, to) = (old * w.width, new as usize * w.width);
            moved.joints[to..to + w.width].copy_from_slice(&w.joints[from..from + w.width]);
            moved.weights[to..to + w.width].copy_from_slice(&w.weights[from..from + w.width]);
        }
        out.skin_weights = Some(moved);
    }
    Some(out)
}

/// Whether two triangle lists hold the same triangles, in any order, each perhaps rotated
/// (meshoptimizer's index codec rotates a triangle's corners, keeping its winding, and
/// compression reorders the triangles for the vertex cache). Each triangle is compared as the
/// least of its three rotations, so one with a repeated corner (welding can make them) reads
/// the same however it was rotated.
fn same_triangles(a: &[u32], b: &[u32]) -> bool {
    let normalised = |list: &[u32]| {
        let mut t: Vec<[u32; 3]> = list
            .chunks_exact(3)
            .map(|t| {
                let rotation = |k: usize| [t[k], t[(k + 1) % 3], t[(k + 2) % 3]];
                rotation(0).min(rotation(1)).min(rotation(2))
            })
            .collect();
        t.sort_unstable();
        t
    };
    a.len() == b.len() && a.len().is_multiple_of(3) && normalised(a) == normalised(b)
}

/// Extensions known not to name accessors or buffer views (so [`drop_unused`] can renumber
/// them); any other extension keeps the old animation data in the file.
const RENUMBER_SAFE_EXTENSIONS: &[&str] = &[
    "KHR_lights_punctual",
    "KHR_materials_",
    "KHR_mesh_quantization",
    "KHR_texture_basisu",
    "KHR_texture_transform",
    "EXT_texture_webp",
    "EXT_texture_avif",
];

/// An error when a document animation has channels its imported clip does not (an
/// extension's target, a node the importer left out): rewriting the animations from the
/// scene would lose them.
fn refuse_lost_channels(root: &json::Root, scene: &Scene, file: &str) -> Result<()> {
    for (ai, a) in root.animations.iter().enumerate() {
        let imported = scene.animations.get(ai).map_or(0, |x| x.channels.len());
        if a.channels.len() != imported {
            return Err(Error::invalid(
                file,
                format!("animations[{ai}]"),
                format!(
                    "{} channels, {imported} of which skinview reads: rewriting it would lose \
                     the others; nothing written",
                    a.channels.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Remove the accessors nothing uses any more and the buffer views no accessor or image uses,
/// renumbering every reference, and return the BIN chunk without their bytes (each kept view
/// congruent mod 4 to where it was, so accessor alignment holds). Skipped, with a note, when
/// the document uses an extension that might name accessors or views.
fn drop_unused(
    root: &mut json::Root,
    bin: &[u8],
    file: &str,
    report: &mut RepackReport,
) -> Result<Vec<u8>> {
    if let Some(ext) = root
        .extensions_used
        .iter()
        .find(|e| !RENUMBER_SAFE_EXTENSIONS.iter().any(|s| e.starts_with(s)))
    {
        report.input_notes.push(format!(
            "extensionsUsed: {ext} may name accessors, so the old animation data stays in the \
             file unused"
        ));
        return Ok(bin.to_vec());
    }
    // Accessors in use, and their new indices.
    let mut used = vec![false; root.accessors.len()];
    for_each_accessor_ref(root, |i| {
        if let Some(u) = used.get_mut(i.value()) {
            *u = true;
        }
    });
    let new_index = renumbering(&used);
    let mut k = 0;
    root.accessors.retain(|_| {
        k += 1;
        used[k - 1]
    });
    for_each_accessor_ref(root, |i| *i = json::Index::new(new_index[i.value()]));
    // Views in use.
    let mut used = vec![false; root.buffer_views.len()];
    for_each_view_ref(root, |v| {
        if let Some(u) = used.get_mut(v.value()) {
            *u = true;
        }
    });
    let new_index = renumbering(&used);
    let mut out = Vec::with_capacity(bin.len());
    let mut kept = Vec::with_capacity(root.buffer_views.len());
    for (vi, mut view) in root.buffer_views.drain(..).enumerate() {
        if !used[vi] {
            continue;
        }
        let start = view.byte_offset.map_or(0, |o| o.0) as usize;
        let end = start.saturating_add(view.byte_length.0 as usize);
        let data = bin.get(start..end).ok_or_else(|| {
            Error::invalid(
                file,
                format!("bufferViews[{vi}]"),
                "outside the merged buffer",
            )
        })?;
        while out.len() % 4 != start % 4 {
            out.push(0);
        }
        view.byte_offset = (!out.is_empty()).then_some(USize64(out.len() as u64));
        out.extend_from_slice(data);
        kept.push(view);
    }
    root.buffer_views = kept;
    for_each_view_ref(root, |v| *v = json::Index::new(new_index[v.value()]));
    Ok(out)
}

/// Old index → new index for the kept entries (`used`).
fn renumbering(used: &[bool]) -> Vec<u32> {
    let mut next = 0u32;
    used.iter()
        .map(|&u| {
            let i = next;
            next += u32::from(u);
            i
        })
        .collect()
}

/// Every accessor reference of the document (meshes, morph targets, skins, animations).
fn for_each_accessor_ref(
    root: &mut json::Root,
    mut f: impl FnMut(&mut json::Index<json::Accessor>),
) {
    for mesh in &mut root.meshes {
        for p in &mut mesh.primitives {
            p.attributes.values_mut().for_each(&mut f);
            p.indices.iter_mut().for_each(&mut f);
            for t in p.targets.iter_mut().flatten() {
                t.positions.iter_mut().for_each(&mut f);
                t.normals.iter_mut().for_each(&mut f);
                t.tangents.iter_mut().for_each(&mut f);
            }
        }
    }
    for skin in &mut root.skins {
        skin.inverse_bind_matrices.iter_mut().for_each(&mut f);
    }
    for a in &mut root.animations {
        for s in &mut a.samplers {
            f(&mut s.input);
            f(&mut s.output);
        }
    }
}

/// Every buffer view reference of the document (accessors, their sparse parts, images).
fn for_each_view_ref(
    root: &mut json::Root,
    mut f: impl FnMut(&mut json::Index<json::buffer::View>),
) {
    for a in &mut root.accessors {
        a.buffer_view.iter_mut().for_each(&mut f);
        if let Some(s) = &mut a.sparse {
            f(&mut s.indices.buffer_view);
            f(&mut s.values.buffer_view);
        }
    }
    for image in &mut root.images {
        image.buffer_view.iter_mut().for_each(&mut f);
    }
}

/// Bytes of each animation's data in a glTF or GLB file: the accessors its samplers read
/// (each counted once per animation), as stored (count × element size; a sparse accessor's
/// parts added).
pub fn animation_bytes(bytes: &[u8], file: &str) -> Result<Vec<u64>> {
    let value = raw_json(bytes, file)?;
    let root: json::Root =
        serde_json::from_value(value).map_err(|e| Error::invalid(file, "(json)", e.to_string()))?;
    let accessor_bytes = |i: json::Index<json::Accessor>| -> u64 {
        let Some(a) = root.accessors.get(i.value()) else {
            return 0;
        };
        let component = match &a.component_type {
            Checked::Valid(t) => t.0.size() as u64,
            Checked::Invalid => 0,
        };
        let width = match &a.type_ {
            Checked::Valid(t) => t.multiplicity() as u64,
            Checked::Invalid => 0,
        };
        let sparse = a.sparse.as_ref().map_or(0, |s| {
            let index = match &s.indices.component_type {
                Checked::Valid(t) => t.0.size() as u64,
                Checked::Invalid => 0,
            };
            s.count.0 * (index + component * width)
        });
        let dense = if a.buffer_view.is_some() {
            a.count.0 * component * width
        } else {
            0
        };
        dense + sparse
    };
    Ok(root
        .animations
        .iter()
        .map(|anim| {
            let mut seen: Vec<u32> = anim
                .samplers
                .iter()
                .flat_map(|s| [s.input.value() as u32, s.output.value() as u32])
                .collect();
            seen.sort_unstable();
            seen.dedup();
            seen.into_iter()
                .map(|i| accessor_bytes(json::Index::new(i)))
                .sum()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{influence_change, same_triangles};
    use crate::scene::SkinWeights;

    /// The same triangles in another order and each rotated read the same, those with a
    /// repeated corner too (welding makes them: [5, 5, 7] rotated is [5, 7, 5] or [7, 5, 5]);
    /// a flipped winding, another triangle or a missing one does not.
    #[test]
    fn triangles_compare_whatever_their_order_and_rotation() {
        let list = [0, 1, 2, 5, 5, 7, 3, 4, 3];
        for rotated in [[5, 7, 5, 1, 2, 0, 4, 3, 3], [7, 5, 5, 2, 0, 1, 3, 3, 4]] {
            assert!(same_triangles(&list, &rotated), "{rotated:?}");
        }
        assert!(
            !same_triangles(&list, &[0, 2, 1, 5, 5, 7, 3, 4, 3]),
            "winding"
        );
        assert!(
            !same_triangles(&list, &[0, 1, 2, 5, 7, 7, 3, 4, 3]),
            "corners"
        );
        assert!(!same_triangles(&list, &list[..6]), "count");
    }

    fn weights(joints: [u32; 4], weights: [f32; 4]) -> SkinWeights {
        SkinWeights {
            width: 4,
            joints: joints.to_vec(),
            weights: weights.to_vec(),
        }
    }

    /// Slots in another order read the same; a weight moved between joints is its change; a
    /// joint weighted in the output that the input does not weight is an error, naming the
    /// vertex.
    #[test]
    fn influences_compare_per_joint_whatever_the_slots() {
        let input = weights([1, 2, 3, 0], [0.25, 0.5, 0.25, 0.0]);
        let sorted = weights([2, 1, 3, 0], [0.5, 0.25, 0.25, 0.0]);
        assert_eq!(influence_change(&input, &sorted), Ok(0.0));
        let moved = weights([2, 1, 3, 0], [0.5, 0.2, 0.3, 0.0]);
        let change = influence_change(&input, &moved).map_or(f32::NAN, |c| c);
        assert!((change - 0.05).abs() < 1e-6, "{change}");
        let stranger = weights([2, 1, 7, 0], [0.5, 0.25, 0.25, 0.0]);
        assert_eq!(influence_change(&input, &stranger), Err(0));
        let dropped = weights([2, 1, 0, 0], [0.5, 0.25, 0.0, 0.0]);
        assert_eq!(influence_change(&input, &dropped), Ok(0.25));
    }
}
