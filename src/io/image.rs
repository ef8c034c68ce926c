//! PNG reading/writing and image differences for golden renders.

use std::path::Path;

use crate::error::{Error, Result};

/// An 8-bit RGBA image.
#[derive(Clone, Debug, PartialEq)]
pub struct Rgba8 {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Rgba8 {
    pub fn write_png(&self, path: &Path) -> Result<()> {
        let err = |m: String| Error::Output { path: path.to_path_buf(), message: m };
        let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| err(e.to_string()))?;
        w.write_image_data(&self.pixels).map_err(|e| err(e.to_string()))?;
        w.finish().map_err(|e| err(e.to_string()))
    }

    pub fn read_png(path: &Path) -> Result<Rgba8> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let bad = |m: String| Error::invalid(&path.display().to_string(), "png", m);
        let mut dec = png::Decoder::new(std::io::BufReader::new(file));
        dec.set_transformations(png::Transformations::EXPAND);
        let mut reader = dec.read_info().map_err(|e| bad(e.to_string()))?;
        let size = reader.output_buffer_size().ok_or_else(|| bad("image too large".into()))?;
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).map_err(|e| bad(e.to_string()))?;
        buf.truncate(info.buffer_size());
        let pixels = match info.color_type {
            png::ColorType::Rgba => buf,
            png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|c| [c[0], c[1], c[2], 255]).collect(),
            other => return Err(bad(format!("unsupported colour type {other:?}"))),
        };
        Ok(Rgba8 { width: info.width, height: info.height, pixels })
    }

    /// Mean absolute channel difference (0–255 scale) and a difference image (|a-b| × 4).
    pub fn difference(&self, other: &Rgba8) -> Option<(f64, Rgba8)> {
        if (self.width, self.height) != (other.width, other.height) {
            return None;
        }
        let mut sum = 0u64;
        let mut pixels = Vec::with_capacity(self.pixels.len());
        for (a, b) in self.pixels.chunks_exact(4).zip(other.pixels.chunks_exact(4)) {
            for c in 0..3 {
                let d = (a[c] as i32 - b[c] as i32).unsigned_abs();
                sum += d as u64;
                pixels.push((d * 4).min(255) as u8);
            }
            pixels.push(255);
        }
        let mean = sum as f64 / (self.width as f64 * self.height as f64 * 3.0);
        Some((mean, Rgba8 { width: self.width, height: self.height, pixels }))
    }
}
