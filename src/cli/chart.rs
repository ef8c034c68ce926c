//! Line charts as PNG for the command line's reports (`skinview quality`): panels of series
//! over a shared x range, axis ticks and a legend, text in the Hack font egui ships (drawn by
//! ab_glyph), lines anti-aliased by supersampling their distance field. Small on purpose: a
//! grid of panels, one y range each, lines and labels.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use skinview::image::Rgba8;

/// One line of a panel.
pub struct Series {
    /// Legend entry (index into [`Chart::legend`]).
    pub legend: usize,
    /// (x, y) points in data units, drawn in order.
    pub points: Vec<(f64, f64)>,
}

/// One panel: a title, a y range and its series.
pub struct Panel {
    /// Above the panel.
    pub title: String,
    /// y axis range (bottom, top).
    pub y_range: (f64, f64),
    /// The lines.
    pub series: Vec<Series>,
}

/// A grid of panels sharing an x range.
pub struct Chart {
    /// Above everything.
    pub title: String,
    /// Under the bottom row.
    pub x_label: String,
    /// x range.
    pub x_range: (f64, f64),
    /// x tick values.
    pub x_ticks: Vec<f64>,
    /// Legend: (name, RGB).
    pub legend: Vec<(String, [u8; 3])>,
    /// Panels in rows of `columns`.
    pub panels: Vec<Panel>,
    /// Panels per row.
    pub columns: usize,
}

const PANEL_W: i32 = 300;
const PANEL_H: i32 = 200;
const LEFT: i32 = 56;
const GAP_X: i32 = 56;
const TOP: i32 = 78;
const GAP_Y: i32 = 46;
const BOTTOM: i32 = 44;
const BACKGROUND: [u8; 3] = [255, 255, 255];
const INK: [u8; 3] = [40, 40, 48];
const GRID: [u8; 3] = [225, 225, 232];

/// An image to draw on, with the font.
pub(super) struct Canvas {
    pub(super) image: Rgba8,
    font: FontRef<'static>,
}

impl Canvas {
    /// Draw over `image` (legends and labels over renders).
    pub(super) fn over(image: Rgba8) -> Result<Canvas, String> {
        let font = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
            .map_err(|e| format!("the chart font does not load: {e}"))?;
        Ok(Canvas { image, font })
    }

    pub(super) fn blend(&mut self, x: i32, y: i32, rgb: [u8; 3], alpha: f32) {
        if x < 0 || y < 0 || x >= self.image.width as i32 || y >= self.image.height as i32 {
            return;
        }
        let i = (y as usize * self.image.width as usize + x as usize) * 4;
        let a = alpha.clamp(0.0, 1.0);
        for (dst, &src) in self.image.pixels[i..i + 3].iter_mut().zip(&rgb) {
            let old = *dst as f32;
            *dst = (old + (src as f32 - old) * a).round() as u8;
        }
    }

    pub(super) fn rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, rgb: [u8; 3]) {
        for y in y0..y1 {
            for x in x0..x1 {
                self.blend(x, y, rgb, 1.0);
            }
        }
    }

    /// An anti-aliased line `width` pixels wide (coverage from the distance to the segment,
    /// 4×4 samples per pixel).
    fn line(&mut self, a: (f32, f32), b: (f32, f32), width: f32, rgb: [u8; 3]) {
        let half = width * 0.5;
        let (x0, x1) = (a.0.min(b.0) - half - 1.0, a.0.max(b.0) + half + 1.0);
        let (y0, y1) = (a.1.min(b.1) - half - 1.0, a.1.max(b.1) + half + 1.0);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len2 = (dx * dx + dy * dy).max(1e-12);
        for py in y0.floor() as i32..=y1.ceil() as i32 {
            for px in x0.floor() as i32..=x1.ceil() as i32 {
                let mut covered = 0;
                for sy in 0..4 {
                    for sx in 0..4 {
                        let (qx, qy) = (
                            px as f32 + (sx as f32 + 0.5) / 4.0,
                            py as f32 + (sy as f32 + 0.5) / 4.0,
                        );
                        let t = (((qx - a.0) * dx + (qy - a.1) * dy) / len2).clamp(0.0, 1.0);
                        let (cx, cy) = (a.0 + dx * t - qx, a.1 + dy * t - qy);
                        if cx * cx + cy * cy <= half * half {
                            covered += 1;
                        }
                    }
                }
                if covered > 0 {
                    self.blend(px, py, rgb, covered as f32 / 16.0);
                }
            }
        }
    }

    /// The width of `s` at `size` px, in pixels.
    pub(super) fn text_width(&self, s: &str, size: f32) -> f32 {
        let scaled = self.font.as_scaled(PxScale::from(size));
        s.chars()
            .map(|c| scaled.h_advance(scaled.glyph_id(c)))
            .sum()
    }

    /// Left-aligned text at `(x, y)` (its baseline) on a darkened box, so it reads over a
    /// model of any colour.
    pub(super) fn label(&mut self, s: &str, x: f32, y: f32, size: f32, rgb: [u8; 3]) {
        let width = self.text_width(s, size);
        let (x0, x1) = (x as i32 - 4, (x + width) as i32 + 4);
        for py in (y - size) as i32 - 1..y as i32 + 5 {
            for px in x0..x1 {
                self.blend(px, py, [0, 0, 0], 0.45);
            }
        }
        self.text(s, x, y, size, Align::Left, rgb);
    }

    /// Text with its left end at `x` (or centred on it, or right-aligned) and its baseline
    /// at `y`.
    pub(super) fn text(&mut self, s: &str, x: f32, y: f32, size: f32, align: Align, rgb: [u8; 3]) {
        let font = self.font.clone();
        let scaled = font.as_scaled(PxScale::from(size));
        let width = self.text_width(s, size);
        let mut pen = match align {
            Align::Left => x,
            Align::Centre => x - width * 0.5,
            Align::Right => x - width,
        };
        for c in s.chars() {
            let glyph = scaled
                .glyph_id(c)
                .with_scale_and_position(size, ab_glyph::point(pen, y));
            pen += scaled.h_advance(scaled.glyph_id(c));
            if let Some(outline) = font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                outline.draw(|gx, gy, coverage| {
                    self.blend(
                        bounds.min.x as i32 + gx as i32,
                        bounds.min.y as i32 + gy as i32,
                        rgb,
                        coverage,
                    );
                });
            }
        }
    }
}

#[derive(Clone, Copy)]
pub(super) enum Align {
    Left,
    Centre,
    Right,
}

/// Draw `chart`.
pub fn render(chart: &Chart) -> Result<Rgba8, String> {
    let columns = chart.columns.max(1);
    let rows = chart.panels.len().div_ceil(columns).max(1);
    let width = LEFT + columns as i32 * (PANEL_W + GAP_X);
    let height = TOP + rows as i32 * (PANEL_H + GAP_Y) + BOTTOM;
    let font = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
        .map_err(|e| format!("the chart font does not load: {e}"))?;
    let mut c = Canvas {
        image: Rgba8 {
            width: width as u32,
            height: height as u32,
            pixels: [BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 255]
                .repeat((width * height) as usize),
        },
        font,
    };
    c.text(&chart.title, LEFT as f32, 22.0, 16.0, Align::Left, INK);
    // Legend: a swatch and a name per entry, in one row.
    let mut x = LEFT as f32;
    for (name, rgb) in &chart.legend {
        c.line((x, 45.0), (x + 22.0, 45.0), 3.0, *rgb);
        c.text(name, x + 28.0, 50.0, 13.0, Align::Left, INK);
        x += 40.0 + 8.0 * name.chars().count() as f32;
    }
    let (x_lo, x_hi) = chart.x_range;
    for (i, panel) in chart.panels.iter().enumerate() {
        let (col, row) = ((i % columns) as i32, (i / columns) as i32);
        let px0 = LEFT + col * (PANEL_W + GAP_X);
        let py0 = TOP + row * (PANEL_H + GAP_Y);
        let (y_lo, y_hi) = panel.y_range;
        let sx = |x: f64| px0 as f32 + ((x - x_lo) / (x_hi - x_lo)) as f32 * PANEL_W as f32;
        let sy =
            |y: f64| (py0 + PANEL_H) as f32 - ((y - y_lo) / (y_hi - y_lo)) as f32 * PANEL_H as f32;
        c.text(
            &panel.title,
            px0 as f32,
            py0 as f32 - 6.0,
            12.0,
            Align::Left,
            INK,
        );
        // Grid and ticks: x ticks as given, five y ticks.
        for &t in &chart.x_ticks {
            let x = sx(t).round() as i32;
            c.rect(x, py0, x + 1, py0 + PANEL_H, GRID);
            c.text(
                &tick_label(t),
                x as f32,
                (py0 + PANEL_H + 14) as f32,
                11.0,
                Align::Centre,
                INK,
            );
        }
        for k in 0..=4 {
            let v = y_lo + (y_hi - y_lo) * k as f64 / 4.0;
            let y = sy(v).round() as i32;
            c.rect(px0, y, px0 + PANEL_W, y + 1, GRID);
            let label = if (y_hi - y_lo) >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            };
            c.text(
                &label,
                px0 as f32 - 4.0,
                y as f32 + 4.0,
                11.0,
                Align::Right,
                INK,
            );
        }
        // Frame.
        c.rect(px0, py0, px0 + PANEL_W, py0 + 1, INK);
        c.rect(
            px0,
            py0 + PANEL_H,
            px0 + PANEL_W + 1,
            py0 + PANEL_H + 1,
            INK,
        );
        c.rect(px0, py0, px0 + 1, py0 + PANEL_H, INK);
        c.rect(px0 + PANEL_W, py0, px0 + PANEL_W + 1, py0 + PANEL_H, INK);
        for s in &panel.series {
            let rgb = chart.legend.get(s.legend).map_or(INK, |l| l.1);
            let clamp = |y: f64| y.clamp(y_lo, y_hi);
            for w in s.points.windows(2) {
                c.line(
                    (sx(w[0].0), sy(clamp(w[0].1))),
                    (sx(w[1].0), sy(clamp(w[1].1))),
                    2.0,
                    rgb,
                );
            }
        }
    }
    let bottom = TOP + rows as i32 * (PANEL_H + GAP_Y) + 20;
    c.text(
        &chart.x_label,
        (width / 2) as f32,
        bottom as f32,
        13.0,
        Align::Centre,
        INK,
    );
    Ok(c.image)
}

/// An x tick's label: whole numbers as such, others with as few decimals as they need (up to
/// three).
fn tick_label(t: f64) -> String {
    let text = format!("{t:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}
