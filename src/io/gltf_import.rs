//! glTF 2.0 importer: skins, node hierarchy, meshes (with JOINTS_n/WEIGHTS_n sets and morph
//! targets) and animations, into a [`RawScene`] that [`SceneBuilder`] validates.
//!
//! glTF rules followed (each has a test in `tests/io/import.rs`):
//! - missing inverse bind matrices mean identity; the skinned mesh node's own transform (and
//!   its parents') is ignored: skinned vertices go through the joint matrices only;
//! - joints need not be scene roots; several skins per file; several nodes sharing a mesh;
//! - every JOINTS_n/WEIGHTS_n pair is read (u8/u16 joints; float, unorm8, unorm16 weights);
//! - node `matrix` or TRS; a node's global transform with a negative determinant flips the
//!   triangle winding (reported per draw, handled by the renderer and the normal matrix);
//! - morph targets (POSITION/NORMAL/TANGENT deltas), `node.weights` over `mesh.weights`;
//! - samplers STEP / LINEAR / CUBICSPLINE; rotation outputs may be normalised integers.
//!
//! Documented repairs (all reported in the scene's report, never silent):
//! - vertex weights whose sum is off 1 by more than the precision of their type
//!   (1e-3 for float, half a step per weight for unorm) are renormalised;
//! - vertices whose weights are all zero are bound with weight 1 to their first listed joint;
//! - joint indices out of range on a zero weight are reset to 0;
//! - non-unit rotation quaternions (node rotations; LINEAR/STEP keys within the Khronos
//!   glTF-Validator's 0.00769) are normalised;
//! - channels without a target node, or whose sampler has no data, are skipped.
//!   Errors (no repair): NaN/infinite data, negative weights, joint index ≥ joint count with a
//!   non-zero weight, accessors outside their buffers, missing POSITION.

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};
use gltf::accessor::DataType;
use gltf::mesh::Mode;

use super::accessor::{self, AccessorData};
use super::files::{Files, ImportOptions, MAX_FILE_BYTES};
use crate::anim::{Animation, Channel, Interpolation, Path as AnimPath, Sampler};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{
    Mesh, MorphTarget, Node, NoteVertex, Primitive, RawScene, Report, Scene, SceneBuilder, Skin,
    SkinWeights, Topology,
};

/// Quaternions whose length is off 1 by more than this are reported as repaired
/// (float32 keys written by exporters are within ~1e-7; below this we still normalise but
/// the change is below float precision of a rotation matrix).
const QUAT_REPORT_TOLERANCE: f32 = 1e-6;

/// Import a `.gltf` or `.glb` file (external URIs only inside its folder).
pub fn import_file(path: &Path) -> Result<Scene> {
    Ok(import_file_with(path, ImportOptions::default())?.0)
}

/// Import a `.gltf` or `.glb` file under `options`; also every file read (canonical paths,
/// the model first), so a command can refuse to write over any of them.
pub fn import_file_with(path: &Path, options: ImportOptions) -> Result<(Scene, Vec<PathBuf>)> {
    let mut files = Files::new(path, options);
    let bytes = files.read_model()?;
    let scene = import(&bytes, &mut files)?;
    Ok((scene, files.read))
}

/// Import the model `main` of files held in memory (the web page's): its external buffers
/// and images come from the same set, under the same limits; also the names read.
pub fn import_memory(
    main: &str,
    set: std::sync::Arc<super::files::FileSet>,
    options: ImportOptions,
) -> Result<(Scene, Vec<PathBuf>)> {
    let mut files = Files::in_memory(main, set, options);
    let bytes = files.read_model()?;
    let scene = import(&bytes, &mut files)?;
    Ok((scene, files.read))
}

/// Import from memory; `path` names the file in messages and resolves external buffers
/// (inside its folder).
pub fn import_slice(bytes: &[u8], path: &Path) -> Result<Scene> {
    import(bytes, &mut Files::new(path, ImportOptions::default()))
}

fn import(bytes: &[u8], files: &mut Files) -> Result<Scene> {
    Ok(import_parts(bytes, files)?.scene)
}

/// What one import of a glTF file holds: the scene every command uses, and the document and
/// buffer bytes it came from (what `export` starts from, so nothing the scene does not model
/// is lost).
pub(crate) struct Imported {
    /// The validated scene.
    pub scene: Scene,
    /// The parsed and validated document.
    pub document: gltf::Document,
    /// Each buffer's bytes (padded to a multiple of 4).
    pub buffers: Vec<gltf::buffer::Data>,
}

/// The extension a base colour texture's coordinates are transformed by.
pub(crate) const TEXTURE_TRANSFORM: &str = "KHR_texture_transform";

/// A `KHR_texture_transform` object: `uv' = offset + rotation * (scale * uv)`, read from
/// texture set `tex_coord` when given (the extension's specification).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TextureTransform {
    pub offset: Vec2,
    pub rotation: f32,
    pub scale: Vec2,
    pub tex_coord: Option<u32>,
}

impl TextureTransform {
    /// The object `t`, its properties defaulted (offset 0, rotation 0, scale 1); `Err` names a
    /// property that is not what the extension allows.
    pub(crate) fn read(t: &serde_json::Value) -> std::result::Result<Self, &'static str> {
        let pair = |key: &'static str, default: [f32; 2]| match t.get(key) {
            None => Ok::<Vec2, &'static str>(Vec2::from(default)),
            Some(v) => {
                let a = v.as_array().filter(|a| a.len() == 2).ok_or(key)?;
                let c = |i: usize| a[i].as_f64().filter(|x| x.is_finite()).ok_or(key);
                Ok(Vec2::new(c(0)? as f32, c(1)? as f32))
            }
        };
        let rotation = match t.get("rotation") {
            None => 0.0,
            Some(r) => r.as_f64().filter(|r| r.is_finite()).ok_or("rotation")? as f32,
        };
        let tex_coord = match t.get("texCoord") {
            None => None,
            Some(c) => Some(
                c.as_u64()
                    .and_then(|c| u32::try_from(c).ok())
                    .ok_or("texCoord")?,
            ),
        };
        Ok(TextureTransform {
            offset: pair("offset", [0.0, 0.0])?,
            rotation,
            scale: pair("scale", [1.0, 1.0])?,
            tex_coord,
        })
    }

    /// `translation * rotation * scale`, the rotation's columns (cos, sin) and (-sin, cos) as
    /// the specification's GLSL mat3 lists them.
    pub(crate) fn matrix(&self) -> glam::Affine2 {
        let (sin, cos) = self.rotation.sin_cos();
        let rotate = glam::Mat2::from_cols(Vec2::new(cos, sin), Vec2::new(-sin, cos));
        glam::Affine2::from_mat2_translation(
            rotate * glam::Mat2::from_diagonal(self.scale),
            self.offset,
        )
    }
}

/// Import `bytes` (the model file `files` reads from), keeping the document and buffers.
pub(crate) fn import_parts(bytes: &[u8], files: &mut Files) -> Result<Imported> {
    let path = files.model.clone();
    let path = path.as_path();
    let file = super::file_label(path);
    let gltf_err = |e: gltf::Error| Error::Gltf {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    // A GLB's header states the file's total length: it must be the file's (gltf 1.4 also
    // subtracts the 12-byte header from it unchecked, an overflow panic in debug builds).
    if let Some(h) = bytes.get(..12).filter(|h| h.starts_with(b"glTF")) {
        let declared = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as u64;
        if declared != bytes.len() as u64 {
            return Err(Error::invalid(
                &file,
                "GLB header length",
                format!(
                    "declares a total length of {declared} bytes, the file has {} (truncated \
                     or padded file)",
                    bytes.len()
                ),
            ));
        }
    }
    check_glb_chunks(bytes, &file)?;
    let (json_bytes, blob) = split_glb(bytes, &file)?;
    super::validate_use::empty_arrays(&json_bytes, &file)?;
    let mut report = Report::default();
    let json_bytes = drop_node_less_channels(json_bytes, &mut report);
    let json: gltf::json::Root = serde_json::from_slice(&json_bytes).map_err(|e| {
        json_error_with_path(&json_bytes, &file)
            .unwrap_or_else(|| gltf_err(gltf::Error::Deserialize(e)))
    })?;
    check_unvalidated_indices(&json, &file)?;
    let used = super::validate_use::used_accessors(&json);
    check_schema(&json, &used, &file, &mut report)?;
    let document = gltf::Document::from_json_without_validation(json);
    super::validate::validate_document(document.as_json(), &file, &mut report)?;
    #[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
    let fallback =
        super::meshopt::fallback_buffers(document.as_json(), bytes.starts_with(b"glTF"), &file)?;
    #[cfg(all(target_arch = "wasm32", not(feature = "web")))]
    let fallback: Vec<bool> = Vec::new();
    let glb = bytes.starts_with(b"glTF");
    let (buffers, absent) = load_buffers(&document, blob, glb, &fallback, files, &file)?;
    #[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
    let (document, buffers) = {
        let mut json = document.into_json();
        let buffers = super::meshopt::decompress(&mut json, buffers, &fallback, &file)?;
        let document = gltf::Document::from_json_without_validation(json);
        // The decoded views against the same rules (their new buffer and ranges).
        super::validate::validate_document(document.as_json(), &file, &mut Report::default())?;
        (document, buffers)
    };
    // After decoding: a compressed view's own rules (its extension's) are named first.
    super::validate_use::validate_use(document.as_json(), &file)?;
    check_used_buffers_carried(document.as_json(), &used, &absent, &file)?;
    super::validate_data::validate_data(&document, &buffers, &absent, &file)?;
    let raw = Importer {
        file: file.clone(),
        buffers: &buffers,
        files,
        report,
        texture_of: Vec::new(),
    }
    .run(&document)?;
    Ok(Imported {
        scene: SceneBuilder::build(raw)?,
        document,
        buffers,
    })
}

/// The JSON of a `.gltf` (the whole file) or a GLB (its JSON chunk), and a GLB's binary chunk.
type GltfParts<'b> = (std::borrow::Cow<'b, [u8]>, Option<Vec<u8>>);

/// [`GltfParts`] of `bytes`.
fn split_glb<'b>(bytes: &'b [u8], file: &str) -> Result<GltfParts<'b>> {
    if !bytes.starts_with(b"glTF") {
        return Ok((std::borrow::Cow::Borrowed(bytes), None));
    }
    // The container around the JSON and BIN chunks.
    let glb = gltf::binary::Glb::from_slice(bytes).map_err(|e| {
        Error::invalid(
            file,
            "GLB chunks",
            format!("{e} (glTF 2.0 GLB file format)"),
        )
    })?;
    Ok((glb.json, glb.bin.map(std::borrow::Cow::into_owned)))
}

/// Animation channels whose target has no `node` (glTF 2.0 §3.11: "when undefined, the
/// animated object MAY be defined by an extension", as `KHR_animation_pointer` does) are
/// dropped, each with a warning: skinview animates nodes only. The JSON comes back rewritten
/// only when there were some.
fn drop_node_less_channels<'b>(
    json: std::borrow::Cow<'b, [u8]>,
    report: &mut Report,
) -> std::borrow::Cow<'b, [u8]> {
    use serde::Deserialize;
    #[derive(Deserialize)]
    struct Target {
        node: Option<serde::de::IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Channel {
        target: Option<Target>,
    }
    #[derive(Deserialize)]
    struct Animation {
        #[serde(default)]
        channels: Vec<Channel>,
    }
    #[derive(Deserialize)]
    struct Shape {
        #[serde(default)]
        animations: Vec<Animation>,
    }
    // A file of another shape: the full parse says what is wrong.
    let Ok(shape) = serde_json::from_slice::<Shape>(&json) else {
        return json;
    };
    let node_less = |c: &Channel| c.target.as_ref().is_some_and(|t| t.node.is_none());
    if !shape
        .animations
        .iter()
        .any(|a| a.channels.iter().any(node_less))
    {
        return json;
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&json) else {
        return json;
    };
    let Some(animations) = value.get_mut("animations").and_then(|a| a.as_array_mut()) else {
        return json;
    };
    for (ai, (anim, shape)) in animations.iter_mut().zip(&shape.animations).enumerate() {
        let Some(channels) = anim.get_mut("channels").and_then(|c| c.as_array_mut()) else {
            continue;
        };
        let mut ci = 0;
        channels.retain(|_| {
            let keep = !shape.channels.get(ci).is_some_and(node_less);
            if !keep {
                report.warn(
                    format!("animations[{ai}].channels[{ci}].target"),
                    "has no node (its target is an extension's, such as \
                     KHR_animation_pointer's): skinview animates nodes only, so the channel is \
                     skipped and this animation's later channels are numbered without it",
                );
            }
            ci += 1;
            keep
        });
    }
    match serde_json::to_vec(&value) {
        Ok(rewritten) => std::borrow::Cow::Owned(rewritten),
        Err(_) => json,
    }
}

/// The gltf crate's schema verdict (index ranges, enum values, required properties), the
/// first failing field an error with what it allows. Not errors: required extensions (rule 2
/// of `validate` judges them: the gltf crate refuses every one it does not parse itself); an
/// accessor without bufferView (glTF 2.0 §3.6.2.3: it is all zeros, which `accessor::read`
/// provides, bounded), which the gltf crate calls missing; and an unknown value in an
/// accessor that nothing uses, a warning (as the Khronos glTF-Validator's VALUE_NOT_IN_LIST:
/// a later version of glTF may allow it).
fn check_schema(
    json: &gltf::json::Root,
    used: &[bool],
    file: &str,
    report: &mut Report,
) -> Result<()> {
    use gltf::json::validation::{Error as E, Validate};
    let mut errors = Vec::new();
    json.validate(json, gltf::json::Path::new, &mut |path, error| {
        errors.push((path(), error))
    });
    let unused_accessor = |p: &str| {
        p.strip_prefix("accessors[")
            .and_then(|r| r.split(']').next())
            .and_then(|i| i.parse::<usize>().ok())
            .is_some_and(|i| used.get(i) == Some(&false))
    };
    let mut first = None;
    let mut more = 0usize;
    for (path, error) in errors {
        let p = path.as_str();
        let required_extension =
            matches!(error, E::Unsupported) && p.starts_with("extensionsRequired");
        let zeros = matches!(error, E::Missing)
            && p.starts_with("accessors[")
            && p.ends_with("].bufferView");
        if required_extension || zeros {
            continue;
        }
        if matches!(error, E::Invalid) && unused_accessor(p) {
            report.warn(
                p,
                format!(
                    "{}; the accessor is unused, so it is skipped",
                    super::validate::explain_schema_error(p, &error)
                ),
            );
            continue;
        }
        match first {
            None => first = Some((path, error)),
            Some(_) => more += 1,
        }
    }
    let Some((path, error)) = first else {
        return Ok(());
    };
    let more = match more {
        0 => String::new(),
        n => format!(" ({n} more schema errors)"),
    };
    Err(Error::invalid(
        file,
        path.as_str(),
        format!(
            "{}{more}",
            super::validate::explain_schema_error(path.as_str(), &error)
        ),
    ))
}

/// A buffer the file does not carry (no `uri` in a `.gltf`, a placeholder in a GLB, a URI
/// that is not a relative path) is an error only when something an import reads lies in it.
fn check_used_buffers_carried(
    json: &gltf::json::Root,
    used: &[bool],
    absent: &[Option<String>],
    file: &str,
) -> Result<()> {
    for (ai, acc) in json.accessors.iter().enumerate() {
        if used.get(ai) != Some(&true) {
            continue;
        }
        let mut views: Vec<usize> = acc.buffer_view.iter().map(|v| v.value()).collect();
        if let Some(s) = &acc.sparse {
            views.extend([s.indices.buffer_view.value(), s.values.buffer_view.value()]);
        }
        for v in views {
            let Some(b) = json.buffer_views.get(v).map(|v| v.buffer.value()) else {
                continue;
            };
            if let Some(Some(why)) = absent.get(b) {
                let uri = json.buffers.get(b).is_some_and(|b| b.uri.is_some());
                return Err(Error::invalid(
                    file,
                    format!("buffers[{b}]{}", if uri { ".uri" } else { "" }),
                    format!("not read ({why}), but accessors[{ai}] lies in it"),
                ));
            }
        }
    }
    Ok(())
}

/// A GLB's chunks after the JSON: at most one BIN chunk, and it comes first (glTF 2.0 GLB
/// file format: JSON, then an optional BIN chunk; chunks of other types are ignored, as the
/// format asks). The gltf crate reads the first BIN chunk and drops any other silently.
fn check_glb_chunks(bytes: &[u8], file: &str) -> Result<()> {
    if !bytes.starts_with(b"glTF") {
        return Ok(());
    }
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let mut at = 12usize;
    let mut index = 0usize;
    let mut bin_seen = false;
    // Length and type of each chunk; a truncated tail is the gltf crate's to report.
    while let (Some(len), Some(kind)) = (u32_at(at), bytes.get(at + 4..at + 8)) {
        if kind == b"BIN\0" {
            if bin_seen || index != 1 {
                return Err(Error::invalid(
                    file,
                    "GLB chunks",
                    format!(
                        "chunk {index} at byte {at} is {} BIN chunk (glTF 2.0 GLB file format: \
                         at most one, right after the JSON chunk)",
                        if bin_seen { "a second" } else { "a misplaced" }
                    ),
                ));
            }
            bin_seen = true;
        }
        at = at.saturating_add(8).saturating_add(len);
        index += 1;
    }
    Ok(())
}

/// When the JSON does not parse as a glTF document, the same parse again with the path of
/// the value that failed (`animations[0].channels[2]: missing field `target``), so the
/// message names the field and not only a line and column. `None` when the failure is not
/// in the JSON (a broken GLB container), left to the gltf crate's message.
fn json_error_with_path(json: &[u8], file: &str) -> Option<Error> {
    let de = &mut serde_json::Deserializer::from_slice(json);
    let e = serde_path_to_error::deserialize::<_, gltf::json::Root>(de).err()?;
    let path = e.path().to_string();
    let field = if path == "." || path.is_empty() {
        "(json)".to_string()
    } else {
        path
    };
    let kind = match e.inner().classify() {
        serde_json::error::Category::Data => "glTF 2.0 schema",
        _ => "not valid JSON",
    };
    Some(Error::invalid(
        file,
        field,
        format!("not a valid glTF file: {} ({kind})", e.inner()),
    ))
}

/// Every buffer's bytes: the GLB binary chunk, a `data:` URI, or a file beside the model
/// read up to exactly its declared `byteLength` ([`Files::read_exactly`]); padded to a
/// multiple of four as the gltf crate does. A buffer the file does not carry is empty, with
/// why beside it (the second list): no `uri` in a `.gltf` file, a GLB's buffer other than the
/// first without one (a placeholder, as the glTF-Validator allows), or a URI that is not a
/// relative path (skinview reads no network). A GLB's first buffer without a `uri` and no
/// binary chunk is an error (BUFFER_MISSING_GLB_DATA).
#[allow(clippy::type_complexity)]
fn load_buffers(
    document: &gltf::Document,
    mut blob: Option<Vec<u8>>,
    glb: bool,
    fallback: &[bool],
    files: &mut Files,
    file: &str,
) -> Result<(Vec<gltf::buffer::Data>, Vec<Option<String>>)> {
    let mut out = Vec::with_capacity(document.buffers().len());
    let mut absent = vec![None; document.buffers().len()];
    for buffer in document.buffers() {
        let field = format!("buffers[{}]", buffer.index());
        let len = buffer.length() as u64;
        if len > MAX_FILE_BYTES {
            return Err(Error::invalid(
                file,
                format!("{field}.byteLength"),
                format!("{len} bytes; buffers are read up to {MAX_FILE_BYTES}"),
            ));
        }
        if fallback.get(buffer.index()) == Some(&true) {
            // Not read: the compressed views it stands in for are decoded instead.
            out.push(gltf::buffer::Data(Vec::new()));
            continue;
        }
        let not_carried = match buffer.source() {
            gltf::buffer::Source::Bin if !glb => Some("it has no uri, in a .gltf file".into()),
            gltf::buffer::Source::Bin if buffer.index() > 0 => {
                Some("it has no uri, and only a GLB's first buffer is its binary chunk".into())
            }
            gltf::buffer::Source::Uri(uri) if has_scheme(uri) && !uri.starts_with("data:") => {
                Some(format!(
                    "{:?}: only relative file paths and data: URIs are read",
                    uri.chars().take(80).collect::<String>()
                ))
            }
            _ => None,
        };
        if let Some(why) = not_carried {
            absent[buffer.index()] = Some(why);
            out.push(gltf::buffer::Data(Vec::new()));
            continue;
        }
        let mut data = match buffer.source() {
            gltf::buffer::Source::Bin => blob.take().ok_or_else(|| {
                Error::invalid(
                    file,
                    &field,
                    "names the GLB binary chunk, but the file has none (glTF 2.0 GLB file \
                     format; BUFFER_MISSING_GLB_DATA)",
                )
            })?,
            gltf::buffer::Source::Uri(uri) => match super::files::data_uri(uri, MAX_FILE_BYTES) {
                Some(decoded) => {
                    let (media_type, data) =
                        decoded.map_err(|m| Error::invalid(file, format!("{field}.uri"), m))?;
                    let media_type = media_type.to_ascii_lowercase();
                    if !matches!(
                        media_type.as_str(),
                        "application/octet-stream" | "application/gltf-buffer"
                    ) {
                        return Err(Error::invalid(
                            file,
                            format!("{field}.uri"),
                            format!(
                                "a data: URI of media type {media_type:?} (glTF 2.0 §3.6.1: \
                                 application/octet-stream or application/gltf-buffer; \
                                 BUFFER_DATA_URI_MIME_TYPE_INVALID)"
                            ),
                        ));
                    }
                    data
                }
                None => files.read_exactly(uri, len, &format!("{field}.uri"))?,
            },
        };
        if (data.len() as u64) < len {
            return Err(Error::invalid(
                file,
                format!("{field}.byteLength"),
                format!(
                    "declares {len} bytes but only {} are present: truncated buffer",
                    data.len()
                ),
            ));
        }
        while data.len() % 4 != 0 {
            data.push(0);
        }
        out.push(gltf::buffer::Data(data));
    }
    Ok((out, absent))
}

/// Whether `uri` starts with a URI scheme (`http:`, `file:`, `data:`): RFC 3986's
/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Indices that gltf 1.4 dereferences without a range check: its validation indexes the
/// POSITION accessor before checking it, and it never validates animation channel targets
/// (the accessors `Target::node`/`Target::property` then panic), nor an image's source
/// (`Image::source` unwraps its uri, or its mimeType next to a bufferView). Checked here, before
/// `Document::from_json` validates the rest.
fn check_unvalidated_indices(json: &gltf::json::Root, file: &str) -> Result<()> {
    use gltf::json::validation::Checked;
    let (accessors, nodes) = (json.accessors.len(), json.nodes.len());
    for (mi, mesh) in json.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            if let Some(i) = prim
                .attributes
                .get(&Checked::Valid(gltf::Semantic::Positions))
                && i.value() >= accessors
            {
                return Err(Error::invalid(
                    file,
                    format!("meshes[{mi}].primitives[{pi}].attributes.POSITION"),
                    format!(
                        "accessor {} out of range ({accessors} accessors)",
                        i.value()
                    ),
                ));
            }
        }
    }
    for (ai, anim) in json.animations.iter().enumerate() {
        for (ci, ch) in anim.channels.iter().enumerate() {
            let field = format!("animations[{ai}].channels[{ci}].target");
            if ch.target.node.value() >= nodes {
                return Err(Error::invalid(
                    file,
                    format!("{field}.node"),
                    format!(
                        "node {} out of range ({nodes} nodes)",
                        ch.target.node.value()
                    ),
                ));
            }
            if matches!(ch.target.path, Checked::Invalid) {
                return Err(Error::invalid(
                    file,
                    format!("{field}.path"),
                    "not translation, rotation, scale or weights",
                ));
            }
        }
    }
    // gltf 1.4's `Image::source` unwraps both: an image has a uri or a bufferView, and a
    // bufferView image has a mimeType (glTF 2.0 image: "MUST" in both cases).
    for (ii, image) in json.images.iter().enumerate() {
        let field = format!("images[{ii}]");
        match (&image.buffer_view, &image.uri, &image.mime_type) {
            (None, None, _) => {
                return Err(Error::invalid(
                    file,
                    field,
                    "neither uri nor bufferView (glTF 2.0 image: one of them is required)",
                ));
            }
            (Some(_), _, None) => {
                return Err(Error::invalid(
                    file,
                    format!("{field}.mimeType"),
                    "missing for an image in a bufferView (glTF 2.0 image: required then)",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

struct Importer<'a> {
    file: String,
    buffers: &'a [gltf::buffer::Data],
    /// Where external images are read from, and by which rules.
    files: &'a mut Files,
    report: Report,
    /// Scene texture of each glTF texture (`None`: dropped, reported).
    texture_of: Vec<Option<usize>>,
}

impl Importer<'_> {
    fn read(&self, acc: &gltf::Accessor, field: &str) -> Result<AccessorData> {
        let data = accessor::read(acc, self.buffers, &self.file, field)?;
        Ok(data)
    }

    fn run(mut self, doc: &gltf::Document) -> Result<RawScene> {
        let mut raw = RawScene {
            name: self.file.clone(),
            ..Default::default()
        };
        // Nodes, with parents from children lists.
        let mut parent: Vec<Option<usize>> = vec![None; doc.nodes().len()];
        for node in doc.nodes() {
            for child in node.children() {
                if child.index() == node.index() {
                    return Err(Error::invalid(
                        &self.file,
                        format!("nodes[{}].children", node.index()),
                        "lists the node itself (glTF 2.0 §3.5.2: the hierarchy is a tree)",
                    ));
                }
                if let Some(p) = parent[child.index()] {
                    let why = if p == node.index() {
                        format!(
                            "node {} is listed twice (schema: unique items)",
                            child.index()
                        )
                    } else {
                        format!(
                            "node {} is already a child of node {p} (glTF 2.0 §3.5.2: a node has \
                             at most one parent)",
                            child.index()
                        )
                    };
                    return Err(Error::invalid(
                        &self.file,
                        format!("nodes[{}].children", node.index()),
                        why,
                    ));
                }
                parent[child.index()] = Some(node.index());
            }
        }
        for node in doc.nodes() {
            raw.nodes.push(self.node(&node, parent[node.index()])?);
        }
        if let Some(scene) = doc.default_scene().or_else(|| doc.scenes().next()) {
            raw.roots = scene.nodes().map(|n| n.index()).collect();
        }
        let (textures, texture_of) =
            super::texture::load(doc, self.buffers, self.files, &mut self.report);
        raw.textures = textures;
        self.texture_of = texture_of;
        for mesh in doc.meshes() {
            raw.meshes.push(self.mesh(&mesh)?);
        }
        for skin in doc.skins() {
            raw.skins.push(self.skin(&skin)?);
        }
        for anim in doc.animations() {
            raw.animations
                .push(self.animation(&anim, &raw.meshes, &raw.nodes)?);
        }
        self.fix_joint_weights(&mut raw, doc)?;
        raw.report = self.report;
        Ok(raw)
    }

    fn node(&mut self, node: &gltf::Node, parent: Option<usize>) -> Result<Node> {
        let field = format!("nodes[{}]", node.index());
        let (rest, matrix) = match node.transform() {
            gltf::scene::Transform::Matrix { matrix } => {
                let m = Mat4::from_cols_array_2d(&matrix);
                if !crate::math::mat4_is_finite(&m) {
                    return Err(Error::invalid(
                        &self.file,
                        format!("{field}.matrix"),
                        "NaN or infinite element",
                    ));
                }
                (Trs::IDENTITY, Some(m))
            }
            gltf::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => {
                if translation
                    .iter()
                    .chain(&rotation)
                    .chain(&scale)
                    .any(|v| !v.is_finite())
                {
                    return Err(Error::invalid(
                        &self.file,
                        &field,
                        "NaN or infinite translation/rotation/scale",
                    ));
                }
                let q = Quat::from_array(rotation);
                let len = q.length();
                if len == 0.0 {
                    return Err(Error::invalid(
                        &self.file,
                        format!("{field}.rotation"),
                        "zero quaternion",
                    ));
                }
                if (len - 1.0).abs() > QUAT_REPORT_TOLERANCE {
                    self.report.repair(
                        format!("{field}.rotation"),
                        format!("quaternion length {len} normalised"),
                    );
                }
                (
                    Trs {
                        translation: Vec3::from(translation),
                        rotation: q / len,
                        scale: Vec3::from(scale),
                    },
                    None,
                )
            }
        };
        Ok(Node {
            name: node.name().map(str::to_string),
            source_index: node.index(),
            parent,
            rest,
            matrix,
            mesh: node.mesh().map(|m| m.index()),
            skin: node.skin().map(|s| s.index()),
            morph_weights: node.weights().map(<[f32]>::to_vec),
        })
    }

    fn mesh(&mut self, mesh: &gltf::Mesh) -> Result<Mesh> {
        let mut primitives = Vec::new();
        for prim in mesh.primitives() {
            primitives.push(self.primitive(mesh.index(), &prim)?);
        }
        let targets = primitives
            .iter()
            .map(|p| p.morph_targets.len())
            .max()
            .unwrap_or(0);
        // glTF 2.0 mesh: "The number of array elements [targets] MUST match" across the
        // primitives of a mesh (they share the mesh's weights).
        if let Some((pi, p)) = primitives
            .iter()
            .enumerate()
            .find(|(_, p)| p.morph_targets.len() != targets)
        {
            return Err(Error::invalid(
                &self.file,
                format!("meshes[{}].primitives[{pi}].targets", mesh.index()),
                format!(
                    "{} morph targets where another primitive of the mesh has {targets} (glTF \
                     2.0: every primitive of a mesh has the same number of targets)",
                    p.morph_targets.len()
                ),
            ));
        }
        // Its length is checked by `validate` rule 6.
        let mut default_morph_weights = mesh.weights().map(<[f32]>::to_vec).unwrap_or_default();
        default_morph_weights.resize(targets, 0.0);
        Ok(Mesh {
            name: mesh.name().map(str::to_string),
            primitives,
            default_morph_weights,
        })
    }

    /// A POSITION accessor without a declared `min` or `max` (glTF 2.0 §3.7.2.1: they are
    /// required) is reported — skinview computes its own — not refused. Declared bounds that
    /// contradict the data were refused before (`validate_data`, rule 17).
    fn check_bounds(&mut self, acc: &gltf::Accessor) {
        let field = format!("accessors[{}]", acc.index());
        let declared = |v: Option<gltf::json::Value>| {
            v.as_ref()
                .and_then(|a| a.as_array())
                .is_some_and(|a| a.len() == 3 && a.iter().all(|x| x.as_f64().is_some()))
        };
        for (name, ok) in [("min", declared(acc.min())), ("max", declared(acc.max()))] {
            if !ok {
                self.report.warn(
                    format!("{field}.{name}"),
                    "missing or not 3 numbers (glTF 2.0 §3.7.2.1: POSITION accessors MUST \
                     declare min and max); computed from the data",
                );
            }
        }
    }

    fn vec3_attr(&self, acc: &gltf::Accessor, field: &str) -> Result<Vec<Vec3>> {
        let d = self.read(acc, field)?;
        d.expect_components(3, &self.file, field)?;
        d.expect_finite(&self.file, field)?;
        Ok(d.to_vec3())
    }

    /// A glTF primitive of mesh `mesh_index`, every attribute read, checked against the
    /// POSITION count and converted (indices to a triangle, line or point list).
    fn primitive(&mut self, mesh_index: usize, prim: &gltf::Primitive) -> Result<Primitive> {
        let field = format!("meshes[{mesh_index}].primitives[{}]", prim.index());
        let pos_acc = prim.get(&gltf::Semantic::Positions).ok_or_else(|| {
            Error::invalid(
                &self.file,
                format!("{field}.attributes"),
                "no POSITION attribute",
            )
        })?;
        let positions = self.vec3_attr(&pos_acc, &format!("{field}.attributes.POSITION"))?;
        self.check_bounds(&pos_acc);
        let n = positions.len();
        let normals = self.normals(prim, &field, n)?;
        let tangents = self.tangents(prim, &field, n)?;
        let sets = self.skin_weight_sets(prim, &field, n)?;
        let skin_weights = if sets.is_empty() {
            None
        } else {
            Some(self.weights(&field, (mesh_index, prim.index()), n, &sets)?)
        };
        let morph_targets = self.morph_targets(prim, &field, n)?;
        let raw_indices = self.raw_indices(prim, &field, n)?;
        let (topology, indices) = self.topology(prim.mode(), raw_indices, &field);
        let pbr = prim.material().pbr_metallic_roughness();
        let base_color = pbr.base_color_factor();
        // The base colour texture reads the texture coordinate set it names (usually 0),
        // through its KHR_texture_transform when it has one.
        let info = pbr.base_color_texture();
        let transform = match info
            .as_ref()
            .and_then(|i| i.extension_value(TEXTURE_TRANSFORM))
        {
            Some(t) => Some(self.texture_transform(t, &field)?),
            None => None,
        };
        let uv_set = transform
            .and_then(|t| t.tex_coord)
            .or(info.as_ref().map(|i| i.tex_coord()))
            .unwrap_or(0);
        let mut uvs = self.uvs(prim, &field, uv_set, n)?;
        if let (Some(t), Some(uvs)) = (transform, uvs.as_mut()) {
            let m = t.matrix();
            for uv in uvs.iter_mut() {
                *uv = m.transform_point2(*uv);
            }
        }
        let mut base_color_texture =
            info.and_then(|i| self.texture_of.get(i.texture().index()).copied().flatten());
        if base_color_texture.is_some() && uvs.is_none() {
            self.report.repair(
                format!("{field}.material.baseColorTexture"),
                format!("no TEXCOORD_{uv_set} to read the texture with; drawn untextured"),
            );
            base_color_texture = None;
        }
        let colors = self.colors(prim, &field, n)?;
        Ok(Primitive {
            positions,
            normals,
            tangents,
            indices,
            topology,
            skin_weights,
            morph_targets,
            base_color,
            base_color_texture,
            uvs,
            colors,
        })
    }

    /// An error at `field` unless an attribute's `len` elements match POSITION's `n`.
    fn check_count(&self, field: String, len: usize, n: usize) -> Result<()> {
        if len != n {
            return Err(Error::invalid(
                &self.file,
                field,
                format!("{len} elements but POSITION has {n}"),
            ));
        }
        Ok(())
    }

    /// The primitive's NORMAL attribute (`n` finite 3-vectors), if any.
    fn normals(&self, prim: &gltf::Primitive, field: &str, n: usize) -> Result<Option<Vec<Vec3>>> {
        let Some(a) = prim.get(&gltf::Semantic::Normals) else {
            return Ok(None);
        };
        let v = self.vec3_attr(&a, &format!("{field}.attributes.NORMAL"))?;
        self.check_count(format!("{field}.attributes.NORMAL"), v.len(), n)?;
        Ok(Some(v))
    }

    /// The primitive's TANGENT attribute (`n` finite 4-vectors), if any.
    fn tangents(&self, prim: &gltf::Primitive, field: &str, n: usize) -> Result<Option<Vec<Vec4>>> {
        let Some(a) = prim.get(&gltf::Semantic::Tangents) else {
            return Ok(None);
        };
        let f = format!("{field}.attributes.TANGENT");
        let d = self.read(&a, &f)?;
        d.expect_components(4, &self.file, &f)?;
        d.expect_finite(&self.file, &f)?;
        self.check_count(f, d.count, n)?;
        Ok(Some(d.to_vec4()))
    }

    /// The skin weight sets JOINTS_n / WEIGHTS_n, in pairs from set 0 until neither is
    /// given: `n` elements of 4 each, joints as unsigned integers, weights float or
    /// normalised.
    fn skin_weight_sets(
        &self,
        prim: &gltf::Primitive,
        field: &str,
        n: usize,
    ) -> Result<Vec<(AccessorData, AccessorData)>> {
        let mut sets: Vec<(AccessorData, AccessorData)> = Vec::new();
        for set in 0u32.. {
            let j = prim.get(&gltf::Semantic::Joints(set));
            let w = prim.get(&gltf::Semantic::Weights(set));
            let (j, w) = match (j, w) {
                (None, None) => break,
                (Some(j), Some(w)) => (j, w),
                _ => {
                    return Err(Error::invalid(
                        &self.file,
                        format!("{field}.attributes.JOINTS_{set}"),
                        format!("JOINTS_{set} and WEIGHTS_{set} must come together"),
                    ));
                }
            };
            let jf = format!("{field}.attributes.JOINTS_{set}");
            let wf = format!("{field}.attributes.WEIGHTS_{set}");
            let jd = self.read(&j, &jf)?;
            let wd = self.read(&w, &wf)?;
            jd.expect_components(4, &self.file, &jf)?;
            wd.expect_components(4, &self.file, &wf)?;
            self.check_count(jf.clone(), jd.count, n)?;
            self.check_count(wf.clone(), wd.count, n)?;
            if !matches!(jd.data_type, DataType::U8 | DataType::U16) || jd.normalized {
                return Err(Error::invalid(
                    &self.file,
                    jf,
                    "joint indices must be unsigned byte or unsigned short, not normalized",
                ));
            }
            match (wd.data_type, wd.normalized) {
                (DataType::F32, _) | (DataType::U8, true) | (DataType::U16, true) => {}
                _ => {
                    return Err(Error::invalid(
                        &self.file,
                        wf,
                        "weights must be float, normalized unsigned byte or normalized unsigned short",
                    ));
                }
            }
            wd.expect_finite(&self.file, &wf)?;
            sets.push((jd, wd));
        }
        Ok(sets)
    }

    /// The primitive's morph targets: POSITION, NORMAL and TANGENT deltas where given, `n`
    /// finite 3-vectors each.
    fn morph_targets(
        &self,
        prim: &gltf::Primitive,
        field: &str,
        n: usize,
    ) -> Result<Vec<MorphTarget>> {
        let mut morph_targets = Vec::new();
        for (ti, target) in prim.morph_targets().enumerate() {
            let tf = format!("{field}.targets[{ti}]");
            let read3 = |acc: Option<gltf::Accessor>, name: &str| -> Result<Option<Vec<Vec3>>> {
                match acc {
                    Some(a) => {
                        let v = self.vec3_attr(&a, &format!("{tf}.{name}"))?;
                        self.check_count(format!("{tf}.{name}"), v.len(), n)?;
                        Ok(Some(v))
                    }
                    None => Ok(None),
                }
            };
            morph_targets.push(MorphTarget {
                positions: read3(target.positions(), "POSITION")?,
                normals: read3(target.normals(), "NORMAL")?,
                tangents: read3(target.tangents(), "TANGENT")?,
            });
        }
        Ok(morph_targets)
    }

    /// The primitive's indices as given (unsigned integers below `n`), or 0..n without.
    fn raw_indices(&self, prim: &gltf::Primitive, field: &str, n: usize) -> Result<Vec<u32>> {
        let raw_indices: Vec<u32> = match prim.indices() {
            Some(a) => {
                let f = format!("{field}.indices");
                let d = self.read(&a, &f)?;
                if !matches!(d.data_type, DataType::U8 | DataType::U16 | DataType::U32) {
                    return Err(Error::invalid(
                        &self.file,
                        f,
                        "indices must be unsigned integers",
                    ));
                }
                d.values.iter().map(|&v| v as u32).collect()
            }
            None => (0..n as u32).collect(),
        };
        if let Some(&bad) = raw_indices.iter().find(|&&i| i as usize >= n) {
            return Err(Error::invalid(
                &self.file,
                format!("{field}.indices"),
                format!("index {bad} >= vertex count {n}"),
            ));
        }
        Ok(raw_indices)
    }

    /// `raw_indices` of a primitive drawn in `mode` as a point, line or triangle list:
    /// strips, loops and fans unrolled, a partial last triangle dropped (reported).
    fn topology(&mut self, mode: Mode, raw_indices: Vec<u32>, field: &str) -> (Topology, Vec<u32>) {
        match mode {
            Mode::Points => (Topology::Points, raw_indices),
            Mode::Lines => (Topology::Lines, raw_indices),
            Mode::LineLoop | Mode::LineStrip => {
                let mut v = Vec::new();
                for w in raw_indices.windows(2) {
                    v.extend_from_slice(w);
                }
                if mode == Mode::LineLoop && raw_indices.len() > 2 {
                    v.extend_from_slice(&[raw_indices[raw_indices.len() - 1], raw_indices[0]]);
                }
                (Topology::Lines, v)
            }
            Mode::Triangles => {
                let whole = raw_indices.len() / 3 * 3;
                if whole != raw_indices.len() {
                    self.report.warn(
                        format!("{field}.indices"),
                        format!(
                            "{} indices is not a multiple of 3; the last {} dropped",
                            raw_indices.len(),
                            raw_indices.len() - whole
                        ),
                    );
                }
                (Topology::Triangles, raw_indices[..whole].to_vec())
            }
            Mode::TriangleStrip => {
                let mut v = Vec::new();
                for i in 0..raw_indices.len().saturating_sub(2) {
                    let (a, b, c) = (raw_indices[i], raw_indices[i + 1], raw_indices[i + 2]);
                    if i % 2 == 0 {
                        v.extend_from_slice(&[a, b, c])
                    } else {
                        v.extend_from_slice(&[b, a, c])
                    }
                }
                (Topology::Triangles, v)
            }
            Mode::TriangleFan => {
                let mut v = Vec::new();
                for i in 1..raw_indices.len().saturating_sub(1) {
                    v.extend_from_slice(&[raw_indices[0], raw_indices[i], raw_indices[i + 1]]);
                }
                (Topology::Triangles, v)
            }
        }
    }

    /// A base colour texture's `KHR_texture_transform` object (at `field`'s material),
    /// read; an error names a property that is not what the extension says.
    fn texture_transform(&self, t: &serde_json::Value, field: &str) -> Result<TextureTransform> {
        TextureTransform::read(t).map_err(|key| {
            Error::invalid(
                &self.file,
                format!(
                    "{field}.material.pbrMetallicRoughness.baseColorTexture.extensions.\
                     {TEXTURE_TRANSFORM}.{key}"
                ),
                "not what KHR_texture_transform allows (offset and scale: two finite numbers; \
                 rotation: a finite number; texCoord: a whole number)",
            )
        })
    }

    /// The primitive's TEXCOORD_`uv_set` attribute (`n` finite 2-vectors), if any.
    fn uvs(
        &self,
        prim: &gltf::Primitive,
        field: &str,
        uv_set: u32,
        n: usize,
    ) -> Result<Option<Vec<Vec2>>> {
        let Some(a) = prim.get(&gltf::Semantic::TexCoords(uv_set)) else {
            return Ok(None);
        };
        let f = format!("{field}.attributes.TEXCOORD_{uv_set}");
        let d = self.read(&a, &f)?;
        d.expect_components(2, &self.file, &f)?;
        d.expect_finite(&self.file, &f)?;
        let v: Vec<Vec2> = d
            .values
            .chunks_exact(2)
            .map(|c| Vec2::new(c[0] as f32, c[1] as f32))
            .collect();
        self.check_count(f, v.len(), n)?;
        Ok(Some(v))
    }

    /// The primitive's COLOR_0 (`n` elements, RGB or RGBA, float or normalised integers,
    /// linear), RGB given an alpha of 1; `None` without.
    fn colors(&self, prim: &gltf::Primitive, field: &str, n: usize) -> Result<Option<Vec<Vec4>>> {
        let Some(a) = prim.get(&gltf::Semantic::Colors(0)) else {
            return Ok(None);
        };
        let f = format!("{field}.attributes.COLOR_0");
        let d = self.read(&a, &f)?;
        d.expect_finite(&self.file, &f)?;
        let v: Vec<Vec4> = match d.components {
            3 => d
                .values
                .chunks_exact(3)
                .map(|c| Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, 1.0))
                .collect(),
            4 => d.to_vec4(),
            found => {
                return Err(Error::invalid(
                    &self.file,
                    f,
                    format!("expected 3 or 4 components per element, found {found}"),
                ));
            }
        };
        self.check_count(f, v.len(), n)?;
        Ok(Some(v))
    }

    /// Merge weight sets into fixed-width arrays and apply the documented repairs.
    fn weights(
        &mut self,
        field: &str,
        (mesh, primitive): (usize, usize),
        n: usize,
        sets: &[(AccessorData, AccessorData)],
    ) -> Result<SkinWeights> {
        let width = sets.len() * 4;
        let mut joints = vec![0u32; n * width];
        let mut weights = vec![0f32; n * width];
        let mut tolerance = vec![0f32; n];
        for (s, (jd, wd)) in sets.iter().enumerate() {
            // Half a quantisation step per weight for unorm types (glTF: sum is 1 within the
            // precision of the type); float weights get 1e-3 as exporters write ~6 digits.
            let step = match wd.data_type {
                DataType::U8 => 0.5 / 255.0,
                DataType::U16 => 0.5 / 65535.0,
                _ => 0.0,
            };
            for v in 0..n {
                for k in 0..4 {
                    let w = wd.values[v * 4 + k] as f32;
                    if w < 0.0 {
                        return Err(Error::invalid(
                            &self.file,
                            format!("{field}.attributes.WEIGHTS_{s}"),
                            format!("vertex {v} has a negative weight {w}"),
                        ));
                    }
                    joints[v * width + s * 4 + k] = jd.values[v * 4 + k] as u32;
                    weights[v * width + s * 4 + k] = w;
                    if w != 0.0 {
                        tolerance[v] += step;
                    }
                }
            }
        }
        let (mut renormalised, mut zero, mut worst) = (0usize, 0usize, 0f32);
        let (mut first_zero, mut worst_vertex) = (None, 0usize);
        for v in 0..n {
            let ws = &mut weights[v * width..(v + 1) * width];
            let sum: f32 = ws.iter().sum();
            if sum == 0.0 {
                zero += 1;
                first_zero.get_or_insert(v);
                ws[0] = 1.0;
                continue;
            }
            let off = (sum - 1.0).abs();
            if off > tolerance[v].max(1e-3) {
                renormalised += 1;
                if off > worst {
                    worst = off;
                    worst_vertex = v;
                }
                for w in ws.iter_mut() {
                    *w /= sum;
                }
            }
        }
        let at = |vertex| NoteVertex {
            mesh,
            primitive,
            vertex,
        };
        if renormalised > 0 {
            self.report.repair_vertex(format!("{field}.attributes.WEIGHTS_0"), format!("{renormalised} of {n} vertices had weights not summing to 1 (worst off by {worst:.3e}: vertex {worst_vertex}); renormalised"), at(worst_vertex));
        }
        if let Some(first) = first_zero {
            self.report.repair_vertex(
                format!("{field}.attributes.WEIGHTS_0"),
                format!("{zero} of {n} vertices had all-zero weights (first: vertex {first}); bound with weight 1 to their first listed joint"),
                at(first),
            );
        }
        Ok(SkinWeights {
            width,
            joints,
            weights,
        })
    }

    fn skin(&mut self, skin: &gltf::Skin) -> Result<Skin> {
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let joint_from_bind = match skin.inverse_bind_matrices() {
            Some(acc) => {
                let f = format!("skins[{}].inverseBindMatrices", skin.index());
                let d = self.read(&acc, &f)?;
                d.expect_components(16, &self.file, &f)?;
                if d.count < joints.len() {
                    return Err(Error::invalid(
                        &self.file,
                        f,
                        format!(
                            "{} matrices for {} joints (glTF 2.0 §3.7.3 Skins: at least one \
                             per joint)",
                            d.count,
                            joints.len()
                        ),
                    ));
                }
                let m: Vec<Mat4> = d
                    .values
                    .chunks_exact(16)
                    .take(joints.len())
                    .map(|c| Mat4::from_cols_array(&std::array::from_fn(|i| c[i] as f32)))
                    .collect();
                if let Some(i) = m.iter().position(|m| !crate::math::mat4_is_finite(m)) {
                    return Err(Error::invalid(
                        &self.file,
                        format!("{f}[{i}]"),
                        "matrix has a NaN or infinite element",
                    ));
                }
                m
            }
            None => vec![Mat4::IDENTITY; joints.len()],
        };
        Ok(Skin {
            name: skin.name().map(str::to_string),
            joints,
            joint_from_bind,
        })
    }

    fn animation(
        &mut self,
        anim: &gltf::Animation,
        meshes: &[Mesh],
        nodes: &[Node],
    ) -> Result<Animation> {
        let mut channels = Vec::new();
        for (ci, ch) in anim.channels().enumerate() {
            let field = format!("animations[{}].channels[{ci}]", anim.index());
            let node = ch.target().node().index();
            let path = match ch.target().property() {
                gltf::animation::Property::Translation => AnimPath::Translation,
                gltf::animation::Property::Rotation => AnimPath::Rotation,
                gltf::animation::Property::Scale => AnimPath::Scale,
                gltf::animation::Property::MorphTargetWeights => AnimPath::Weights,
            };
            let s = ch.sampler();
            // An accessor with neither a bufferView nor sparse values is all zeros (glTF 2.0
            // §3.6.2.3): as key times they do not increase, so nothing can play.
            let no_data = |a: gltf::Accessor| a.view().is_none() && a.sparse().is_none();
            if let Some(key) = [("input", s.input()), ("output", s.output())]
                .into_iter()
                .find_map(|(key, a)| no_data(a).then_some(key))
            {
                self.report.warn(
                    format!("{field}.sampler"),
                    format!(
                        "samplers[{}].{key} has no data (no bufferView, no sparse values: all \
                         zeros); the channel is skipped",
                        s.index()
                    ),
                );
                continue;
            }
            let interpolation = match s.interpolation() {
                gltf::animation::Interpolation::Step => Interpolation::Step,
                gltf::animation::Interpolation::Linear => Interpolation::Linear,
                gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
            };
            let sf = format!("animations[{}].samplers[{}]", anim.index(), s.index());
            let input = self.read(&s.input(), &format!("{sf}.input"))?;
            input.expect_components(1, &self.file, &format!("{sf}.input"))?;
            input.expect_finite(&self.file, &format!("{sf}.input"))?;
            let output = self.read(&s.output(), &format!("{sf}.output"))?;
            output.expect_finite(&self.file, &format!("{sf}.output"))?;
            let components = match path {
                AnimPath::Translation | AnimPath::Scale => 3,
                AnimPath::Rotation => 4,
                AnimPath::Weights => {
                    let Some(m) = nodes[node].mesh else {
                        self.report.warn(
                            format!("{field}.target"),
                            format!("weights channel on node {node} without a mesh; ignored"),
                        );
                        continue;
                    };
                    let targets = meshes.get(m).map_or(0, |m| m.morph_target_count());
                    if targets == 0 {
                        self.report.warn(format!("{field}.target"), format!("weights channel on node {node} whose mesh has no morph targets; ignored"));
                        continue;
                    }
                    targets
                }
            };
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if path != AnimPath::Weights {
                output.expect_components(components, &self.file, &format!("{sf}.output"))?;
            }
            let mut values = output.to_f32();
            let need = input.count * per_key * components;
            if values.len() != need {
                return Err(Error::invalid(
                    &self.file,
                    format!("{sf}.output"),
                    format!(
                        "{} values, {} keys of {} {} need {need}",
                        values.len(),
                        input.count,
                        interpolation.name(),
                        path.name()
                    ),
                ));
            }
            if path == AnimPath::Rotation {
                normalise_rotation_keys(&mut values, per_key, &output, &self.file, &sf).map(
                    |worst| {
                        if worst > QUAT_REPORT_TOLERANCE {
                            self.report.repair(
                                format!("{sf}.output"),
                                format!(
                                    "rotation keys not unit length (worst |q|-1 = {worst:.2e}); \
                                     normalised"
                                ),
                            );
                        }
                    },
                )?;
            }
            channels.push(Channel {
                node,
                path,
                sampler: Sampler {
                    interpolation,
                    times_s: input.to_f32(),
                    values,
                    components,
                    is_rotation: path == AnimPath::Rotation,
                },
            });
        }
        Ok(Animation {
            name: anim.name().map(str::to_string),
            channels,
        })
    }

    /// Joint indices out of range on zero weights are reset to 0 (reported); a non-zero
    /// weight on one is an error raised by the scene builder with the vertex named.
    fn fix_joint_weights(&mut self, raw: &mut RawScene, doc: &gltf::Document) -> Result<()> {
        for node in doc.nodes() {
            let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) else {
                continue;
            };
            let jc = raw.skins[skin.index()].joints.len() as u32;
            for (pi, prim) in raw.meshes[mesh.index()].primitives.iter_mut().enumerate() {
                let Some(w) = prim.skin_weights.as_mut() else {
                    continue;
                };
                let mut reset = 0;
                for (j, wt) in w.joints.iter_mut().zip(&w.weights) {
                    if *j >= jc && *wt == 0.0 {
                        *j = 0;
                        reset += 1;
                    }
                }
                if reset > 0 {
                    self.report.repair(format!("meshes[{}].primitives[{pi}].attributes.JOINTS_0", mesh.index()), format!("{reset} joint indices >= joint count {jc} carried zero weight; reset to 0"));
                }
            }
        }
        Ok(())
    }
}

/// Normalise the rotation keys in `values` (`per_key` elements a key: tangents are left as
/// they are), returning the largest |q| − 1 among those normalised; an error for a zero
/// quaternion. A key already unit length within its storage's rounding keeps its bits: f32
/// keys within 4 ulps (dividing by a length that close to 1 would move them by ulps), keys
/// stored as normalised shorts or bytes within their codes' rounding
/// ([`crate::anim::snorm::SNORM16_LENGTH_ROUNDING`]). So a file written from an import, or
/// with rotation codes, reads back bit for bit.
fn normalise_rotation_keys(
    values: &mut [f32],
    per_key: usize,
    output: &super::accessor::AccessorData,
    file: &str,
    field: &str,
) -> Result<f32> {
    let rounding = match (output.normalized, output.data_type) {
        (true, gltf::accessor::DataType::I16) => crate::anim::snorm::SNORM16_LENGTH_ROUNDING,
        (true, gltf::accessor::DataType::I8) => 2.0 / 127.0,
        _ => 4.0 * f32::EPSILON,
    };
    let mut worst = 0f32;
    for (e, q) in values.chunks_exact_mut(4).enumerate() {
        if per_key == 3 && e % 3 != 1 {
            continue;
        }
        let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        if len == 0.0 {
            return Err(Error::invalid(
                file,
                format!("{field}.output"),
                format!("key {} is a zero quaternion", e / per_key),
            ));
        }
        if (len - 1.0).abs() > rounding {
            worst = worst.max((len - 1.0).abs());
            for x in q.iter_mut() {
                *x /= len;
            }
        }
    }
    Ok(worst)
}
