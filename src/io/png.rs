//! Image files for the core [`Rgba8`] image (renders, screenshots, golden images): PNG
//! reading and writing, and JPEG writing, the format chosen by the file's extension. The one
//! place the project touches image files it writes.

use std::path::Path;

use crate::error::{Error, Result};
use crate::image::Rgba8;

/// Largest image read back from a PNG file (pixels): golden images and renders are a few
/// megapixels at most; a larger header is a broken or hostile file.
pub const MAX_READ_PIXELS: u64 = 64 << 20;

/// Encode `image` as an 8-bit RGBA PNG with `text` as tEXt chunks (keyword, text), e.g. the
/// adapter that rendered it.
pub fn encode(image: &Rgba8, text: &[(&str, &str)]) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, image.width, image.height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    for (keyword, value) in text {
        enc.add_text_chunk(keyword.to_string(), value.to_string())
            .map_err(|e| e.to_string())?;
    }
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(&image.pixels)
        .map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// The image formats written, by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// `.png`: lossless, 8-bit RGBA, with tEXt chunks.
    Png,
    /// `.jpg` / `.jpeg`: RGB (alpha dropped), quality [`JPEG_QUALITY`].
    Jpeg,
}

/// JPEG quality (1–100): high enough that skinning artefacts stay visible.
pub const JPEG_QUALITY: u8 = 92;

/// The extensions [`ImageFormat::of_path`] accepts, for messages.
pub const IMAGE_EXTENSIONS: &str = ".png, .jpg, .jpeg";

impl ImageFormat {
    /// The format `path`'s extension names (case-insensitive), or an error naming the
    /// supported extensions.
    pub fn of_path(path: &Path) -> Result<ImageFormat> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("png") => Ok(ImageFormat::Png),
            Some("jpg" | "jpeg") => Ok(ImageFormat::Jpeg),
            _ => Err(Error::Output {
                path: path.to_path_buf(),
                message: format!("the image format is chosen by the extension: {IMAGE_EXTENSIONS}"),
            }),
        }
    }
}

/// Write `image` to `path` (through a temporary file renamed into place) in the format its
/// extension names ([`ImageFormat::of_path`]).
pub fn write(image: &Rgba8, path: &Path) -> Result<()> {
    write_tagged(image, path, &[])
}

/// Encode `image` as a baseline JPEG of quality [`JPEG_QUALITY`] (alpha dropped).
pub fn encode_jpeg(image: &Rgba8) -> std::result::Result<Vec<u8>, String> {
    let rgb: Vec<u8> = image
        .pixels
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut bytes = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY)
        .encode(
            &rgb,
            image.width,
            image.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Write `image` in the format `path`'s extension names, PNG with tEXt chunks (see
/// [`encode`]; JPEG has none).
pub fn write_tagged(image: &Rgba8, path: &Path, text: &[(&str, &str)]) -> Result<()> {
    let encoded = match ImageFormat::of_path(path)? {
        ImageFormat::Png => encode(image, text),
        ImageFormat::Jpeg => encode_jpeg(image),
    };
    let bytes = encoded.map_err(|message| Error::Output {
        path: path.to_path_buf(),
        message,
    })?;
    super::output::write_file(path, &bytes)
}

/// The tEXt chunks of a PNG file (keyword, text).
pub fn read_text(path: &Path) -> Result<Vec<(String, String)>> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .map_err(|e| Error::invalid(&path.display().to_string(), "png", e.to_string()))?;
    Ok(reader
        .info()
        .uncompressed_latin1_text
        .iter()
        .map(|t| (t.keyword.clone(), t.text.clone()))
        .collect())
}

/// Read a PNG (RGBA or RGB, 8 bits; palettes and 16-bit are expanded) as RGBA8.
pub fn read(path: &Path) -> Result<Rgba8> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |m: String| Error::invalid(&path.display().to_string(), "png", m);
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(|e| bad(e.to_string()))?;
    let (w, h) = (reader.info().width, reader.info().height);
    if w as u64 * h as u64 > MAX_READ_PIXELS {
        return Err(bad(format!(
            "{w}x{h} pixels is more than the {MAX_READ_PIXELS} this reader accepts"
        )));
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad("image too large".into()))?;
    let mut buf = vec![0; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| bad(e.to_string()))?;
    buf.truncate(info.buffer_size());
    let pixels = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|c| [c[0], c[0], c[0], c[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        other => return Err(bad(format!("unsupported colour type {other:?}"))),
    };
    Ok(Rgba8 {
        width: info.width,
        height: info.height,
        pixels,
    })
}
