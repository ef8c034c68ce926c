//! A plain 8-bit RGBA image and image differences (core data; PNG files are read and
//! written by `io::image`).

/// Linear colour component to its sRGB-encoded value (IEC 61966-2-1: linear below 0.0031308,
/// a 2.4 power above). The one CPU copy of the encoding (the shaders' is `encode_srgb` in
/// shaders/view.wgsl): clear colours of targets that store encoded values, and legends painted
/// in the image's own colours.
pub fn linear_to_srgb(c: f64) -> f64 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// A qualitative palette: Kelly's colours of maximum contrast (K. L. Kelly, "Twenty-two
/// colors of maximum contrast", Color Engineering 3(6), 1965) in his order, so neighbours in
/// it differ in hue, less white, black, grey, olive and deep brown (background, unskinned
/// draws and shadow): linear RGB. Mirrored by `qualitative()` in shaders/render.wgsl: keep
/// the two the same.
pub const QUALITATIVE: [[f32; 3]; 17] = [
    [0.8963, 0.5457, 0.0000], // #F3C300
    [0.2423, 0.0931, 0.2874], // #875692
    [0.8963, 0.2307, 0.0000], // #F38400
    [0.3564, 0.5906, 0.8796], // #A1CAF1
    [0.5149, 0.0000, 0.0319], // #BE0032
    [0.5395, 0.4452, 0.2159], // #C2B280
    [0.0000, 0.2462, 0.0931], // #008856
    [0.7913, 0.2747, 0.4125], // #E68FAC
    [0.0000, 0.1356, 0.3763], // #0067A5
    [0.9473, 0.2918, 0.1912], // #F99379
    [0.1170, 0.0762, 0.3095], // #604E97
    [0.9216, 0.3813, 0.0000], // #F6A600
    [0.4508, 0.0578, 0.1500], // #B3446C
    [0.7157, 0.6514, 0.0000], // #DCD300
    [0.2462, 0.0262, 0.0086], // #882D17
    [0.2664, 0.4678, 0.0000], // #8DB600
    [0.7605, 0.0976, 0.0160], // #E25822
];

/// Colour `i` of [`QUALITATIVE`]; the palette repeats, every other round half-way to white
/// (so colour `i` and `i + 17` still differ).
pub fn qualitative(i: usize) -> [f32; 3] {
    let n = QUALITATIVE.len();
    let c = QUALITATIVE[i % n];
    match (i / n) % 2 {
        0 => c,
        _ => c.map(|v| v + (1.0 - v) * 0.5),
    }
}

/// An 8-bit RGBA image.
#[derive(Clone, Debug, PartialEq)]
pub struct Rgba8 {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes: RGBA per pixel, rows top to bottom, no row padding.
    pub pixels: Vec<u8>,
}

impl Rgba8 {
    /// `left` and `right` side by side (`None` when their heights differ).
    pub fn side_by_side(left: &Rgba8, right: &Rgba8) -> Option<Rgba8> {
        if left.height != right.height {
            return None;
        }
        let (l, r) = (left.width as usize * 4, right.width as usize * 4);
        let mut pixels = Vec::with_capacity(left.pixels.len() + right.pixels.len());
        for (a, b) in left
            .pixels
            .chunks_exact(l.max(1))
            .zip(right.pixels.chunks_exact(r.max(1)))
        {
            pixels.extend_from_slice(a);
            pixels.extend_from_slice(b);
        }
        Some(Rgba8 {
            width: left.width + right.width,
            height: left.height,
            pixels,
        })
    }

    /// This image with `rows` more rows of `rgba` under it.
    pub fn extended_down(mut self, rows: u32, rgba: [u8; 4]) -> Rgba8 {
        let added = rows as usize * self.width as usize;
        self.pixels.reserve(added * 4);
        for _ in 0..added {
            self.pixels.extend_from_slice(&rgba);
        }
        self.height += rows;
        self
    }

    /// Mean absolute channel difference (0–255 scale) and a difference image (|a-b| × 4).
    pub fn difference(&self, other: &Rgba8) -> Option<(f64, Rgba8)> {
        if (self.width, self.height) != (other.width, other.height) {
            return None;
        }
        let mut sum = 0u64;
        let mut pixels = Vec::with_capacity(self.pixels.len());
        for (a, b) in self
            .pixels
            .chunks_exact(4)
            .zip(other.pixels.chunks_exact(4))
        {
            for c in 0..3 {
                let d = (a[c] as i32 - b[c] as i32).unsigned_abs();
                sum += d as u64;
                pixels.push((d * 4).min(255) as u8);
            }
            pixels.push(255);
        }
        let mean = sum as f64 / (self.width as f64 * self.height as f64 * 3.0);
        Some((
            mean,
            Rgba8 {
                width: self.width,
                height: self.height,
                pixels,
            },
        ))
    }
}
