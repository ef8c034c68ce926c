//! PNG reading and writing for the core [`Rgba8`] image (renders, golden images): the one
//! place the project touches PNG files.

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

/// Write `image` to `path` (through a temporary file renamed into place).
pub fn write(image: &Rgba8, path: &Path) -> Result<()> {
    write_tagged(image, path, &[])
}

/// Write `image` with tEXt chunks (see [`encode`]).
pub fn write_tagged(image: &Rgba8, path: &Path, text: &[(&str, &str)]) -> Result<()> {
    let bytes = encode(image, text).map_err(|message| Error::Output {
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
