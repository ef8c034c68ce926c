//! Golden images: compare a picture with a PNG that was looked at by eye when committed
//! (`tests/golden/`); on mismatch `<name>-actual.png` and `<name>-difference.png` are written
//! next to it, tagged (PNG tEXt "Adapter") with the adapter that made them.
//! `SKINVIEW_BLESS=1` rewrites the goldens.
//!
//! Threshold (mean absolute channel difference, 0–255) set on lavapipe (Mesa 22.3, llvmpipe
//! LLVM 15, 256-bit): identical renders there give 0; other rasterisers differ in MSAA
//! coverage and edge pixels by well under 2.
#![allow(clippy::unwrap_used)] // test support: a golden that cannot be read or written fails the test

use std::path::PathBuf;

use skinview::image::Rgba8;
use skinview::io::png;

/// Largest mean absolute channel difference (0–255) from a golden image (set on lavapipe).
pub const MEAN_DIFF_THRESHOLD: f64 = 2.0;

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub fn bless() -> bool {
    std::env::var("SKINVIEW_BLESS").is_ok_and(|v| v == "1")
}

/// Compare `image` with `dir/<name>.png`; on mismatch write the `-actual` and `-difference`
/// PNGs beside it, tagged with the adapter. `bless` rewrites the golden instead. Returns a
/// failure message.
pub fn check_golden(
    dir: &std::path::Path,
    name: &str,
    image: &Rgba8,
    adapter: &str,
    bless: bool,
) -> Option<String> {
    let golden = dir.join(format!("{name}.png"));
    let tag = [("Adapter", adapter)];
    if bless || !golden.exists() {
        png::write_tagged(image, &golden, &tag).unwrap();
        println!("wrote {}", golden.display());
        return (!bless).then(|| format!("{name}: no golden image yet; wrote one, look at it"));
    }
    let expected = png::read(&golden).unwrap();
    match image.difference(&expected) {
        Some((mean, diff)) => {
            println!("{name}: mean difference {mean:.3} (threshold {MEAN_DIFF_THRESHOLD})");
            (mean > MEAN_DIFF_THRESHOLD).then(|| {
                let actual = dir.join(format!("{name}-actual.png"));
                let difference = dir.join(format!("{name}-difference.png"));
                png::write_tagged(image, &actual, &tag).unwrap();
                png::write_tagged(&diff, &difference, &tag).unwrap();
                format!(
                    "{name}: mean difference {mean:.3} > {MEAN_DIFF_THRESHOLD} on {adapter}; see \
                     {} and {}",
                    actual.display(),
                    difference.display()
                )
            })
        }
        None => {
            let actual = dir.join(format!("{name}-actual.png"));
            png::write_tagged(image, &actual, &tag).unwrap();
            Some(format!(
                "{name}: golden image is {}×{}, this one {}×{}; see {}",
                expected.width,
                expected.height,
                image.width,
                image.height,
                actual.display()
            ))
        }
    }
}

/// [`check_golden`] of the PNG at `path` against `name` in [`golden_dir`], rewritten when
/// [`bless`] says.
pub fn check_golden_png(name: &str, path: &std::path::Path, adapter: &str) -> Option<String> {
    let image = png::read(path).unwrap();
    check_golden(&golden_dir(), name, &image, adapter, bless())
}
