//! The qualitative palette (submesh and bone colours, and their legends) tells neighbours
//! apart: measured here in CIE L*a*b* (D65, from the linear sRGB values the renderer uses),
//! not by the palette's own construction.
#![allow(clippy::unwrap_used)] // test code

use skinview::image::{QUALITATIVE, qualitative};

/// CIE 1976 L*a*b* of a linear sRGB colour (D65 white).
fn lab(c: [f32; 3]) -> [f64; 3] {
    let [r, g, b] = c.map(f64::from);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.950_47;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.088_83;
    let f = |t: f64| {
        if t > 216.0 / 24389.0 {
            t.cbrt()
        } else {
            t * 24389.0 / 27.0 / 116.0 + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// ΔE*76: the distance in L*a*b*; about 2.3 is a just-noticeable difference.
fn delta_e(a: [f32; 3], b: [f32; 3]) -> f64 {
    let (a, b) = (lab(a), lab(b));
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt()
}

/// Neighbours (submesh i and i + 1, bone node i and i + 1, over two rounds of the palette) differ
/// by ΔE ≥ 10, every pair of one round by ≥ 15, and a colour from its repeat a round later
/// (paler) by ≥ 15.
#[test]
fn neighbouring_palette_colours_are_far_apart() {
    let n = QUALITATIVE.len();
    for i in 0..2 * n {
        let d = delta_e(qualitative(i), qualitative(i + 1));
        assert!(d >= 10.0, "colours {i} and {} differ by ΔE {d:.1}", i + 1);
        let d = delta_e(qualitative(i), qualitative(i + n));
        assert!(d >= 15.0, "colour {i} and its repeat differ by ΔE {d:.1}");
    }
    for (i, &a) in QUALITATIVE.iter().enumerate() {
        for (j, &b) in QUALITATIVE.iter().enumerate().skip(i + 1) {
            let d = delta_e(a, b);
            assert!(d >= 15.0, "colours {i} and {j} differ by ΔE {d:.1}");
        }
    }
    assert!(
        QUALITATIVE
            .iter()
            .flatten()
            .all(|v| (0.0..=1.0).contains(v))
    );
}
