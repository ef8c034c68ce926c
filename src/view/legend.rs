//! Colour legends: what a colour means in each colour mode, as a ramp with its scale (the
//! weights, the |GPU − CPU| and mode-against-mode error heatmaps) or as swatches (bone
//! colours, submeshes). The viewer paints them with egui and `render` into its images, from
//! this one description, so the two cannot drift.

use crate::character::Character;
use crate::gpu::{CPU_GPU_ERROR_LOG10_MIN, ColorMode, MODE_ERROR_LOG10_MIN};
use crate::scene::Scene;

use super::ViewOptions;

/// Decades the error heatmap spans (blue to red), as `shaders/render.wgsl` maps them.
pub const ERROR_DECADES: f32 = 4.0;
/// At most this many swatches; the rest are counted ("+N more").
pub const MAX_SWATCHES: usize = 12;
/// At most this many bone names on one swatch (bones sharing its colour); the rest counted.
pub const NAMES_PER_SWATCH: usize = 3;

/// A legend: a title and a ramp or swatches.
#[derive(Clone, Debug, PartialEq)]
pub struct Legend {
    /// What the colours measure (e.g. "weight of l_forearm").
    pub title: String,
    /// How the colours map.
    pub kind: LegendKind,
}

/// How a legend's colours map.
#[derive(Clone, Debug, PartialEq)]
pub enum LegendKind {
    /// [`heat`] from 0 to 1, with labelled ticks at positions in [0, 1].
    Ramp(Vec<(f32, String)>),
    /// Colours (linear RGB) and what each stands for; `more` not shown.
    Swatches {
        /// The swatches shown.
        entries: Vec<([f32; 3], String)>,
        /// How many more there are.
        more: usize,
    },
}

/// Blender's weight ramp, `t` in [0, 1]: blue 0, cyan 0.25, green 0.5, yellow 0.75, red 1
/// (linear RGB). Mirrors `heat()` in shaders/render.wgsl: keep the two the same.
pub fn heat(t: f32) -> [f32; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [0.0, 0.0, 1.0],
        [0.0, 1.0, 1.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
        [1.0, 0.0, 0.0],
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0) * 4.0
    } else {
        0.0
    };
    let i = (t as usize).min(3);
    let f = t - i as f32;
    std::array::from_fn(|k| STOPS[i][k] + (STOPS[i + 1][k] - STOPS[i][k]) * f)
}

/// A bone's colour in the bone-colour mode (linear RGB): its node's colour in the qualitative
/// palette ([`crate::image::qualitative`]). Mirrors `bone_color()` in shaders/render.wgsl.
pub fn bone_color(node: u32) -> [f32; 3] {
    crate::image::qualitative(node as usize)
}

/// The legend of what `options` show on `character`, None in the material colours (and for
/// the weights with no bone selected). `submeshes`: the draws carry the partitioner's
/// colours ([`crate::partition::PartitionedScene::color_submeshes`]); each distinct base
/// colour of a skinned draw is then one submesh.
pub fn legend(character: &Character, options: &ViewOptions, submeshes: bool) -> Option<Legend> {
    let scene = &character.scene;
    match options.color_mode {
        ColorMode::Weights => {
            let node = options.selected_node?;
            Some(Legend {
                title: format!("weight of {}", scene.node_label(node)),
                kind: LegendKind::Ramp(
                    [0.0, 0.25, 0.5, 0.75, 1.0]
                        .iter()
                        .map(|&t| (t, format!("{t}")))
                        .collect(),
                ),
            })
        }
        ColorMode::Errors => {
            let (min, title) = match options.error_against {
                Some(o) => (
                    MODE_ERROR_LOG10_MIN,
                    format!(
                        "|{} − {}| / diagonal",
                        character.skin_options(0).mode.name(),
                        o.mode.name()
                    ),
                ),
                None => (
                    CPU_GPU_ERROR_LOG10_MIN,
                    "|GPU − CPU| / diagonal".to_string(),
                ),
            };
            Some(Legend {
                title,
                kind: LegendKind::Ramp(error_ticks(min)),
            })
        }
        ColorMode::Bones => Some(bone_swatches(scene)),
        ColorMode::Material if submeshes => Some(submesh_swatches(scene)),
        ColorMode::Material => None,
    }
}

/// The legend of [`super::render_distances`]: `title` over the error ramp from
/// [`MODE_ERROR_LOG10_MIN`] of the diagonal.
pub fn distance_legend(title: impl Into<String>) -> Legend {
    Legend {
        title: title.into(),
        kind: LegendKind::Ramp(error_ticks(MODE_ERROR_LOG10_MIN)),
    }
}

/// One tick a decade over the error ramp starting at `log10_min`.
fn error_ticks(log10_min: f32) -> Vec<(f32, String)> {
    (0..=ERROR_DECADES as i32)
        .map(|d| {
            (
                d as f32 / ERROR_DECADES,
                format!("1e{}", log10_min as i32 + d),
            )
        })
        .collect()
}

/// The bones with the most skinned weight, heaviest first, one swatch per colour: the palette
/// repeats every [`crate::image::QUALITATIVE`] length of nodes, so a swatch names every listed
/// bone drawn in it (at most [`NAMES_PER_SWATCH`], the rest counted).
fn bone_swatches(scene: &Scene) -> Legend {
    let own = super::skeleton::own_weights(scene);
    let mut joints: Vec<usize> = (0..scene.nodes.len()).filter(|&n| own[n] > 0.0).collect();
    joints.sort_by(|&a, &b| own[b].total_cmp(&own[a]));
    let mut rows: Vec<([f32; 3], Vec<usize>)> = Vec::new();
    let mut more = 0;
    for n in joints {
        let c = bone_color(n as u32);
        match rows.iter().position(|(rc, _)| *rc == c) {
            Some(i) => rows[i].1.push(n),
            None if rows.len() < MAX_SWATCHES => rows.push((c, vec![n])),
            None => more += 1,
        }
    }
    let label = |names: &[usize]| {
        let mut l: Vec<String> = names
            .iter()
            .take(NAMES_PER_SWATCH)
            .map(|&n| scene.node_label(n))
            .collect();
        if names.len() > NAMES_PER_SWATCH {
            l.push(format!("+{}", names.len() - NAMES_PER_SWATCH));
        }
        l.join(" · ")
    };
    Legend {
        title: "bone colours by weight, heaviest first".into(),
        kind: LegendKind::Swatches {
            entries: rows.iter().map(|(c, names)| (*c, label(names))).collect(),
            more,
        },
    }
}

/// One swatch per submesh colour (skinned draws, in draw order).
fn submesh_swatches(scene: &Scene) -> Legend {
    let mut colors: Vec<[f32; 3]> = Vec::new();
    for d in scene.draws.iter().filter(|d| d.skin.is_some()) {
        let c = scene.primitive(d).base_color;
        let c = [c[0], c[1], c[2]];
        if !colors.contains(&c) {
            colors.push(c);
        }
    }
    let more = colors.len().saturating_sub(MAX_SWATCHES);
    Legend {
        title: format!("{} submeshes, each its own colour", colors.len()),
        kind: LegendKind::Swatches {
            entries: colors
                .into_iter()
                .take(MAX_SWATCHES)
                .enumerate()
                .map(|(i, c)| (c, format!("submesh {i}")))
                .collect(),
            more,
        },
    }
}

/// Linear to sRGB-encoded 8-bit (what the view's sRGB target stores), for painting legends
/// in the image's own colours.
pub fn linear_to_srgb8(c: f32) -> u8 {
    let c = if c.is_finite() {
        c.clamp(0.0, 1.0)
    } else {
        0.0
    };
    (crate::image::linear_to_srgb(f64::from(c)) * 255.0).round() as u8
}
