//! Base colour textures of a glTF file: images from buffer views, `data:` URIs or files beside
//! the model, decoded (PNG, JPEG) to sRGB RGBA8 with the sampler that reads them.
//!
//! Limits, checked before decoding: an image file or view of at most [`MAX_IMAGE_BYTES`],
//! decoded to at most [`MAX_IMAGE_SIDE`] pixels a side. A texture that cannot be read or
//! decoded is a documented repair: the importer reports it and the material draws with its
//! base colour factor alone (inspecting a rig should not fail on a broken picture).

use super::files::Files;
use crate::image::Rgba8;
use crate::scene::{Report, Texture, Wrap};

/// Largest encoded image read (bytes).
pub const MAX_IMAGE_BYTES: usize = 64 << 20;
/// Largest decoded side (pixels): 8192 is the common GPU texture limit.
pub const MAX_IMAGE_SIDE: u32 = 8192;
/// Most decoded texture bytes per model (1 GiB: four 8192² textures; real characters use a few
/// 2048² or 4096² ones).
pub const MAX_TEXTURE_BYTES: usize = 1 << 30;

/// The scene textures of `doc`, and for each glTF texture its index in them (`None` when
/// dropped, with a note in `report`).
pub fn load(
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    files: &mut Files,
    report: &mut Report,
) -> (Vec<Texture>, Vec<Option<usize>>) {
    // Decode each image a texture uses, once, even when several textures share it.
    let used: Vec<bool> = {
        let mut used = vec![false; doc.images().len()];
        for t in doc.textures() {
            if let Some(u) = used.get_mut(t.source().index()) {
                *u = true;
            }
        }
        used
    };
    let mut images: Vec<Option<Rgba8>> = Vec::with_capacity(doc.images().len());
    for image in doc.images() {
        let field = format!("images[{}]", image.index());
        if !used[image.index()] {
            images.push(None);
            continue;
        }
        match encoded_bytes(&image, buffers, files, &field).and_then(|b| decode(&b)) {
            Ok(rgba) => images.push(Some(rgba)),
            Err(e) => {
                report.repair(
                    field,
                    format!("{e}; materials using it are drawn untextured"),
                );
                images.push(None);
            }
        }
    }
    let mut textures = Vec::new();
    let mut map = Vec::with_capacity(doc.textures().len());
    // Each texture holds its pixels: many textures of one large image must not multiply it
    // without bound.
    let mut total_bytes = 0usize;
    for t in doc.textures() {
        let Some(Some(image)) = images.get(t.source().index()) else {
            map.push(None);
            continue;
        };
        total_bytes = total_bytes.saturating_add(image.pixels.len());
        if total_bytes > MAX_TEXTURE_BYTES {
            report.repair(
                format!("textures[{}]", t.index()),
                format!(
                    "the decoded textures pass {MAX_TEXTURE_BYTES} bytes; materials using it are \
                     drawn untextured"
                ),
            );
            map.push(None);
            continue;
        }
        let s = t.sampler();
        use gltf::texture::{MagFilter, MinFilter, WrappingMode};
        let wrap = |w: WrappingMode| match w {
            WrappingMode::ClampToEdge => Wrap::ClampToEdge,
            WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
            WrappingMode::Repeat => Wrap::Repeat,
        };
        map.push(Some(textures.len()));
        textures.push(Texture {
            name: t.source().name().or(t.name()).map(str::to_string),
            image: image.clone(),
            mag_linear: s.mag_filter() != Some(MagFilter::Nearest),
            min_linear: !matches!(
                s.min_filter(),
                Some(MinFilter::Nearest | MinFilter::NearestMipmapNearest)
            ),
            wrap: [wrap(s.wrap_s()), wrap(s.wrap_t())],
        });
    }
    (textures, map)
}

fn encoded_bytes(
    image: &gltf::Image,
    buffers: &[gltf::buffer::Data],
    files: &mut Files,
    field: &str,
) -> Result<Vec<u8>, String> {
    match image.source() {
        gltf::image::Source::View { view, .. } => {
            let buffer = buffers
                .get(view.buffer().index())
                .ok_or("its buffer view's buffer is missing")?;
            let (start, len) = (view.offset(), view.length());
            if len > MAX_IMAGE_BYTES {
                return Err(format!("{len} bytes, more than {MAX_IMAGE_BYTES}"));
            }
            start
                .checked_add(len)
                .and_then(|end| buffer.get(start..end))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| "its buffer view lies outside its buffer".to_string())
        }
        gltf::image::Source::Uri { uri, .. } => {
            if let Some(rest) = uri.strip_prefix("data:") {
                let (_, data) = rest
                    .split_once(";base64,")
                    .ok_or("a data: URI that is not base64")?;
                if data.len() / 4 * 3 > MAX_IMAGE_BYTES {
                    return Err(format!("a data: URI of more than {MAX_IMAGE_BYTES} bytes"));
                }
                base64::decode(data).map_err(|e| format!("bad base64: {e}"))
            } else {
                // Inside the model's folder (unless allowed), a regular file, bounded.
                files
                    .read_whole(uri, MAX_IMAGE_BYTES as u64, &format!("{field}.uri"))
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// Decode a PNG or JPEG image to RGBA8, within [`MAX_IMAGE_SIDE`] a side (also FBX's textures).
pub(super) fn decode(bytes: &[u8]) -> Result<Rgba8, String> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(4 * MAX_IMAGE_SIDE as u64 * MAX_IMAGE_SIDE as u64);
    reader.limits(limits);
    let rgba = reader
        .decode()
        .map_err(|e| format!("cannot decode: {e}"))?
        .to_rgba8();
    Ok(Rgba8 {
        width: rgba.width(),
        height: rgba.height(),
        pixels: rgba.into_raw(),
    })
}
