//! Base colour textures of an FBX file: each material's base colour map (ufbx's
//! `pbr.base_color`, else the classic `DiffuseColor`) read from the image its `Video` embeds
//! (`Content`), else from the file it names, and decoded as glTF's images are
//! ([`crate::io::texture`]: PNG or JPEG, sRGB, the same size limits), with the UV set the
//! texture names.
//!
//! Where a file is looked for, as three.js and Blender look: the texture's relative file name
//! beside the FBX, then its bare file name beside the FBX (a model moved with its textures).
//! Each is read by the rules of glTF's external images ([`Files`]: inside the model's folder
//! unless allowed, regular files only, at most [`MAX_IMAGE_BYTES`], counted against the
//! model's external bytes); the absolute path a file also stores is never followed.
//!
//! Limits, checked before decoding: embedded content of at most [`MAX_IMAGE_BYTES`] (ufbx
//! has no option bounding it; it holds what the file holds, within the file's size and the
//! allocator limits), decoded to at most [`MAX_IMAGE_SIDE`](crate::io::texture::MAX_IMAGE_SIDE)
//! pixels a side and [`MAX_TEXTURE_BYTES`] for the model. A texture that cannot be found or
//! decoded is a warning naming the texture and its file; the material draws untextured.

use std::collections::HashMap;

use super::element_label;
use crate::error::Error;
use crate::image::Rgba8;
use crate::io::files::Files;
use crate::io::texture::{MAX_IMAGE_BYTES, MAX_TEXTURE_BYTES, decode};
use crate::scene::{Report, Texture, Wrap};

/// A material's base colour texture: its index in the scene's textures and the UV set it is
/// read with (empty: the mesh's first).
#[derive(Clone, Debug)]
pub(super) struct MaterialTexture {
    pub texture: usize,
    pub uv_set: String,
}

/// The scene's textures and which material reads which.
#[derive(Default)]
pub(super) struct BaseColorTextures {
    pub textures: Vec<Texture>,
    /// By material element id.
    by_material: HashMap<u32, MaterialTexture>,
}

impl BaseColorTextures {
    /// The base colour texture material `mat` draws with, if it has one that loaded.
    pub fn of(&self, mat: &ufbx::Material) -> Option<&MaterialTexture> {
        self.by_material.get(&mat.element.element_id)
    }
}

/// The base colour texture a material names (enabled), if any.
fn base_color_map(mat: &ufbx::Material) -> Option<&ufbx::Texture> {
    [&mat.pbr.base_color, &mat.fbx.diffuse_color]
        .into_iter()
        .filter(|m| m.texture_enabled)
        .find_map(|m| m.texture.as_deref())
}

/// Every material's base colour texture, each texture decoded once (and each image file or
/// embedded image once, however many textures share it); `files` reads external files (none
/// for an FBX given as bytes alone: a texture in a file is then a warning).
pub(super) fn load(
    fbx: &ufbx::Scene,
    mut files: Option<&mut Files>,
    report: &mut Report,
) -> BaseColorTextures {
    let mut out = BaseColorTextures::default();
    // Scene texture per ufbx texture (element id); `None`: reported and dropped.
    let mut made: HashMap<u32, Option<usize>> = HashMap::new();
    // Decoded image per ufbx texture file (`file_index`).
    let mut images: HashMap<u32, Option<Rgba8>> = HashMap::new();
    let mut total_bytes = 0usize;
    for mat in fbx.materials.iter() {
        let Some(t) = base_color_map(mat) else {
            continue;
        };
        let id = t.element.element_id;
        let index = match made.get(&id) {
            Some(&index) => index,
            None => {
                let image = image_of(t, &mut images, files.as_deref_mut(), report);
                let index = image.and_then(|image| {
                    total_bytes = total_bytes.saturating_add(image.pixels.len());
                    if total_bytes > MAX_TEXTURE_BYTES {
                        report.warn(
                            element_label("Texture", &t.element),
                            format!(
                                "the decoded textures pass {MAX_TEXTURE_BYTES} bytes; drawn \
                                 untextured"
                            ),
                        );
                        return None;
                    }
                    out.textures.push(texture(t, image));
                    Some(out.textures.len() - 1)
                });
                made.insert(id, index);
                index
            }
        };
        if let Some(texture) = index {
            out.by_material.insert(
                mat.element.element_id,
                MaterialTexture {
                    texture,
                    uv_set: t.uv_set.to_string(),
                },
            );
        }
    }
    out
}

/// The decoded image of file texture `t` (from `images` when its file was decoded before), or
/// `None` with a warning.
fn image_of(
    t: &ufbx::Texture,
    images: &mut HashMap<u32, Option<Rgba8>>,
    files: Option<&mut Files>,
    report: &mut Report,
) -> Option<Rgba8> {
    let label = element_label("Texture", &t.element);
    if t.type_ != ufbx::TextureType::File {
        let kind = format!("{:?}", t.type_).to_lowercase();
        report.warn(
            label,
            format!("a {kind} texture, not an image file: drawn untextured"),
        );
        return None;
    }
    let key = t.has_file.then_some(t.file_index);
    if let Some(image) = key.and_then(|k| images.get(&k)) {
        return image.clone();
    }
    let decoded = encoded_bytes(t, files)
        .and_then(|(from, bytes)| decode(&bytes).map_err(|e| format!("{from}: {e}")));
    let image = match decoded {
        Ok(image) => Some(image),
        Err(e) => {
            report.warn(label, format!("{e}; drawn untextured"));
            None
        }
    };
    if let Some(k) = key {
        images.insert(k, image.clone());
    }
    image
}

/// The encoded image of file texture `t` and where it came from (in words), or why there is
/// none.
fn encoded_bytes(
    t: &ufbx::Texture,
    files: Option<&mut Files>,
) -> Result<(String, Vec<u8>), String> {
    let name = file_name(t);
    if !t.content.is_empty() {
        let from = format!("the image embedded as \"{name}\"");
        if t.content.len() > MAX_IMAGE_BYTES {
            return Err(format!(
                "{from}: {} bytes, more than the {MAX_IMAGE_BYTES} read at most",
                t.content.len()
            ));
        }
        return Ok((from, t.content.to_vec()));
    }
    let candidates = candidates(t);
    if candidates.is_empty() {
        return Err("no embedded image and no file name".into());
    }
    let Some(files) = files else {
        return Err(format!(
            "the image is the file \"{name}\", not read: the FBX was not read from a file"
        ));
    };
    let mut tried = Vec::new();
    for c in &candidates {
        match files.read_whole(&as_uri(c), MAX_IMAGE_BYTES as u64, "texture file") {
            Ok(bytes) => return Ok((format!("the file \"{c}\""), bytes)),
            Err(e) => tried.push(why(e)),
        }
    }
    Err(format!(
        "no embedded image, and its file \"{name}\" cannot be read beside the model: {}",
        tried.join("; ")
    ))
}

/// What went wrong in a read, without the model's name and field the warning already gives.
fn why(e: Error) -> String {
    match e {
        Error::Invalid { message, .. } => message,
        e => e.to_string(),
    }
}

/// The texture's file name as the file gives it (relative, else absolute), for messages.
fn file_name(t: &ufbx::Texture) -> &str {
    [&t.relative_filename, &t.absolute_filename, &t.filename]
        .into_iter()
        .map(|s| s.as_ref() as &str)
        .find(|s| !s.is_empty())
        .unwrap_or_default()
}

/// Where a texture's file is looked for, beside the model: its relative file name, then the
/// bare file name of its relative or absolute one (each once).
fn candidates(t: &ufbx::Texture) -> Vec<String> {
    let relative = (t.relative_filename.as_ref() as &str).replace('\\', "/");
    let absolute = (t.absolute_filename.as_ref() as &str).replace('\\', "/");
    let bare = |p: &str| p.rsplit('/').next().unwrap_or_default().to_string();
    let mut out: Vec<String> = Vec::new();
    for c in [relative.clone(), bare(&relative), bare(&absolute)] {
        // `.` and `..` name folders (Blender writes `.` for an image it embeds nowhere).
        if !matches!(c.as_str(), "" | "." | "..") && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// A file path as the relative URI [`Files`] reads (its `%` kept: FBX names are not
/// percent-encoded).
fn as_uri(path: &str) -> String {
    path.replace('%', "%25")
}

/// Scene texture of file texture `t`: its image, named as its `Video` (the FBX's image) or
/// else itself, its wrap modes and linear filtering (FBX names no filter).
fn texture(t: &ufbx::Texture, image: Rgba8) -> Texture {
    let wrap = |w: ufbx::WrapMode| match w {
        ufbx::WrapMode::Clamp => Wrap::ClampToEdge,
        _ => Wrap::Repeat,
    };
    let video = t.video.as_ref().map(|v| v.element.name.to_string());
    let name = video
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| t.element.name.to_string());
    Texture {
        name: Some(name).filter(|n| !n.is_empty()),
        image,
        mag_linear: true,
        min_linear: true,
        wrap: [wrap(t.wrap_u), wrap(t.wrap_v)],
    }
}
