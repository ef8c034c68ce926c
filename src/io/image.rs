//! PNG reading and writing for the core `Rgba8` image (renders, golden images).

use std::path::Path;

use crate::error::{Error, Result};

pub use crate::image::Rgba8;

// Inherent methods of the core image type, kept here because they do file I/O.
impl Rgba8 {
    pub fn write_png(&self, path: &Path) -> Result<()> {
        let err = |m: String| Error::Output {
            path: path.to_path_buf(),
            message: m,
        };
        let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| err(e.to_string()))?;
        w.write_image_data(&self.pixels)
            .map_err(|e| err(e.to_string()))?;
        w.finish().map_err(|e| err(e.to_string()))
    }

    pub fn read_png(path: &Path) -> Result<Rgba8> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |m: String| Error::invalid(&path.display().to_string(), "png", m);
        let mut dec = png::Decoder::new(std::io::BufReader::new(file));
        dec.set_transformations(png::Transformations::EXPAND);
        let mut reader = dec.read_info().map_err(|e| bad(e.to_string()))?;
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
            other => return Err(bad(format!("unsupported colour type {other:?}"))),
        };
        Ok(Rgba8 {
            width: info.width,
            height: info.height,
            pixels,
        })
    }
}
