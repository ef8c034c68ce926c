//! Labels and colour legends on the pictures the commands write (`render`, `render
//! --compare-with`, `diff --render`, `check`'s pictures). A legend has a strip of its own
//! under the picture, so it never covers the model: a command that keeps the size asked for
//! renders the picture [`picture_height`] tall and the strip makes up the rest; `check` adds
//! the strip to its pictures ([`grown_height`]). Swatches flow left to right across the strip,
//! as many rows as fit a quarter of the picture, the rest counted ("+N more").

use skinview::image::Rgba8;
use skinview::view::legend::{Legend, LegendKind, heat, linear_to_srgb8};

use super::chart::{Align, Canvas};

/// Labels' colour: light grey, legible on the dark background and on most models.
pub(super) const LABEL_INK: [u8; 3] = [205, 205, 212];
/// Labels' size in pixels.
pub(super) const LABEL_PX: f32 = 12.0;
/// One line of labels.
pub(super) const ROW_PX: i32 = 16;
/// Room above and below the legend's rows in its strip.
const STRIP_PAD_PX: i32 = 6;
/// The advance of one character of the labels' font (Hack, monospaced: 1233/2048 of an em),
/// so a strip is laid out before a canvas exists.
const CHAR_PX: f32 = LABEL_PX * 1233.0 / 2048.0;
/// A swatch: its square, the gap to its label, and the gap to the next swatch.
const SWATCH_PX: i32 = 10;
const SWATCH_LABEL_GAP_PX: i32 = 6;
const SWATCH_GAP_PX: i32 = 14;
/// The strip's separator from the picture above it.
const SEPARATOR: [u8; 3] = [70, 72, 80];

/// Where each swatch goes in a strip: `(x, row)` of the ones shown and how many are not.
struct SwatchLayout {
    placed: Vec<(i32, i32)>,
    hidden: usize,
    rows: i32,
}

fn text_px(s: &str) -> i32 {
    (s.chars().count() as f32 * CHAR_PX).ceil() as i32
}

/// Swatch rows under the title: entries flowed across `width`, at most as many rows as a
/// quarter of `total_h` holds (at least one), with room for "+N more" after the last.
fn swatch_layout(
    entries: &[([f32; 3], String)],
    more: usize,
    width: u32,
    total_h: u32,
) -> SwatchLayout {
    let max_rows = ((total_h as i32 / 4) / ROW_PX - 1).max(1);
    let usable = width as i32 - 16;
    let item = |label: &str| SWATCH_PX + SWATCH_LABEL_GAP_PX + text_px(label) + SWATCH_GAP_PX;
    let more_px = |n: usize| text_px(&format!("+{n} more"));
    let mut placed = Vec::with_capacity(entries.len());
    let (mut x, mut row) = (0, 0);
    for (i, (_, label)) in entries.iter().enumerate() {
        let w = item(label);
        if x > 0 && x + w > usable {
            x = 0;
            row += 1;
        }
        // On the last row, keep room for the count of what does not fit.
        let left_after = entries.len() - i - 1 + more;
        let reserve = if left_after > 0 && row == max_rows - 1 {
            more_px(left_after)
        } else {
            0
        };
        if row >= max_rows || (row == max_rows - 1 && x + w + reserve > usable && x > 0) {
            let hidden = entries.len() - i + more;
            return SwatchLayout {
                rows: max_rows,
                placed,
                hidden,
            };
        }
        placed.push((x, row));
        x += w;
    }
    let fits_count = more == 0 || x + more_px(more) <= usable;
    let rows = row + 1 + i32::from(!fits_count);
    SwatchLayout {
        placed,
        hidden: more,
        rows,
    }
}

/// Rows of `legend`'s strip across `width` under a picture `total_h` tall with it.
fn legend_rows(legend: &Legend, width: u32, total_h: u32) -> i32 {
    match &legend.kind {
        // Title, bar, tick labels.
        LegendKind::Ramp(_) => 3,
        LegendKind::Swatches { entries, more } => {
            1 + swatch_layout(entries, *more, width, total_h).rows
        }
    }
}

/// The height of `legend`'s strip across `width` when the picture and strip are `total_h`.
pub(super) fn strip_px(legend: &Legend, width: u32, total_h: u32) -> u32 {
    (legend_rows(legend, width, total_h) * ROW_PX + 2 * STRIP_PAD_PX) as u32
}

/// The picture's height when it and `legend`'s strip are `total_h` tall together (`total_h`
/// without a legend, or when the strip would take more than half of it: then the legend is
/// left out, see [`with_legend`]).
pub(super) fn picture_height(legend: Option<&Legend>, width: u32, total_h: u32) -> u32 {
    match legend {
        Some(l) if 2 * strip_px(l, width, total_h) <= total_h => {
            total_h - strip_px(l, width, total_h)
        }
        _ => total_h,
    }
}

/// The height of `image` with `legend`'s strip added under it.
pub(super) fn grown_height(legend: &Legend, image: &Rgba8) -> u32 {
    image.height + strip_px(legend, image.width, image.height)
}

/// `image` with `legend` in a strip under it, `total_h` tall in all (the picture made
/// [`picture_height`] tall, or [`grown_height`]); a picture too small to give the strip its
/// room keeps its size and gets no legend (the command says so).
pub(super) fn with_legend(image: Rgba8, legend: &Legend, total_h: u32) -> Result<Rgba8, String> {
    let strip = total_h.saturating_sub(image.height);
    if strip == 0 {
        eprintln!(
            "note: the picture ({}×{} px) is too small for its legend \"{}\"; none drawn",
            image.width, image.height, legend.title
        );
        return Ok(image);
    }
    let background = skinview::view::BACKGROUND.map(|c| linear_to_srgb8(c as f32));
    let top = image.height as i32;
    let mut c = Canvas::over(
        image.extended_down(strip, [background[0], background[1], background[2], 255]),
    )?;
    c.rect(0, top, c.image.width as i32, top + 1, SEPARATOR);
    paint(&mut c, legend, top + STRIP_PAD_PX, total_h);
    Ok(c.image)
}

/// The picture, `total_h` tall with its legend's strip, and for a split view each half's
/// label at its top left (as the viewer shows them).
pub(super) fn annotate(
    image: Rgba8,
    legend: Option<&Legend>,
    total_h: u32,
    split_gpu: Option<&str>,
) -> Result<Rgba8, String> {
    let mut c = Canvas::over(image)?;
    if let Some(gpu) = split_gpu {
        let half = c.image.width as f32 / 2.0;
        c.label("CPU reference", 8.0, 16.0, LABEL_PX, LABEL_INK);
        c.label(gpu, half + 8.0, 16.0, LABEL_PX, LABEL_INK);
    }
    match legend {
        Some(l) => with_legend(c.image, l, total_h),
        None => Ok(c.image),
    }
}

/// A side-by-side picture whose left half is `left_w` pixels wide: each half's name at its
/// top left, `caption` under the first, the legend's strip under both, `total_h` in all.
pub(super) fn annotate_pair(
    image: Rgba8,
    (left_w, total_h): (u32, u32),
    names: &[String; 2],
    caption: &str,
    legend: &Legend,
) -> Result<Rgba8, String> {
    let mut c = Canvas::over(image)?;
    c.label(&names[0], 8.0, 16.0, LABEL_PX, LABEL_INK);
    c.label(&names[1], left_w as f32 + 8.0, 16.0, LABEL_PX, LABEL_INK);
    c.label(caption, 8.0, 16.0 + ROW_PX as f32, LABEL_PX, LABEL_INK);
    with_legend(c.image, legend, total_h)
}

/// The picture with `captions` at its top left, one line each, and the legend's strip under
/// it (the picture grows by the strip: `check`'s pictures, `diff --render`'s when asked to).
pub(super) fn annotate_with(
    image: Rgba8,
    legend: &Legend,
    total_h: u32,
    captions: &[String],
) -> Result<Rgba8, String> {
    let mut c = Canvas::over(image)?;
    for (i, line) in captions.iter().enumerate() {
        let y = 16.0 + (i as i32 * ROW_PX) as f32;
        c.label(line, 8.0, y, LABEL_PX, LABEL_INK);
    }
    with_legend(c.image, legend, total_h)
}

/// The legend's title and its ramp or swatches, from `y0` down.
fn paint(c: &mut Canvas, legend: &Legend, y0: i32, total_h: u32) {
    let srgb = |c: [f32; 3]| c.map(linear_to_srgb8);
    let x0 = 8;
    c.text(
        &legend.title,
        x0 as f32,
        (y0 + 11) as f32,
        LABEL_PX,
        Align::Left,
        LABEL_INK,
    );
    let top = y0 + ROW_PX;
    match &legend.kind {
        LegendKind::Ramp(ticks) => {
            let bar_w = (c.image.width as i32 / 3).clamp(60, 220);
            // Room for the first tick's label, centred on the bar's start.
            let x0 = x0 + 12;
            for x in 0..bar_w {
                let rgb = srgb(heat((x as f32 + 0.5) / bar_w as f32));
                c.rect(x0 + x, top + 2, x0 + x + 1, top + 12, rgb);
            }
            for (t, label) in ticks {
                let x = x0 as f32 + t * (bar_w - 1) as f32;
                c.rect(x as i32, top + 12, x as i32 + 1, top + 15, LABEL_INK);
                let y = (top + ROW_PX + 11) as f32;
                c.text(label, x, y, LABEL_PX - 1.0, Align::Centre, LABEL_INK);
            }
        }
        LegendKind::Swatches { entries, more } => {
            let layout = swatch_layout(entries, *more, c.image.width, total_h);
            let mut end = (0, 0);
            for ((rgb, label), &(x, row)) in entries.iter().zip(&layout.placed) {
                let (x, y) = (x0 + x, top + row * ROW_PX);
                c.rect(x, y + 2, x + SWATCH_PX, y + 2 + SWATCH_PX, srgb(*rgb));
                let label_x = x + SWATCH_PX + SWATCH_LABEL_GAP_PX;
                c.text(
                    label,
                    label_x as f32,
                    (y + 11) as f32,
                    LABEL_PX,
                    Align::Left,
                    LABEL_INK,
                );
                end = (label_x + text_px(label) + SWATCH_GAP_PX, row);
            }
            if layout.hidden > 0 {
                let text = format!("+{} more", layout.hidden);
                let usable = c.image.width as i32 - 16;
                let (x, row) = match end {
                    (x, row) if x + text_px(&text) <= x0 + usable => (x, row),
                    (_, row) => (x0, row + 1),
                };
                c.text(
                    &text,
                    x as f32,
                    (top + row * ROW_PX + 11) as f32,
                    LABEL_PX,
                    Align::Left,
                    LABEL_INK,
                );
            }
        }
    }
}
