//! The weight tools run on every skinned primitive of a scene, in the order Weber gives them:
//! new weights (regeneration, §11, or distance weights), smoothing (§10), rogue removal
//! (§12). Each primitive is worked in its own bind space against its skin's joints
//! ([`super::bone_axes`], leaves fitted to the mesh by [`super::fit_leaf_tips`]); sections
//! are estimated from the mesh ([`super::sections`]) from the regenerated assignment, or from
//! each vertex's largest weight when the weights are kept. The result keeps the primitive's
//! influence width (a file with JOINTS_0 only keeps four influences), so the written file has
//! the same attributes.

use super::distance::{DistanceStats, DistanceWeightsJob};
use super::regenerate::{RegenerateJob, RegenerateStats};
use super::rogue::{RogueJob, RogueStats};
use super::sections::{SectionJob, SectionStats, dominant_bone};
use super::smooth::{SmoothJob, SmoothStats};
use super::{WeightMesh, bone_axes, fit_leaf_tips, influences_from, skin_weights_from, weight_of};
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Where new weights come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NewWeights {
    /// Keep the primitive's weights (smooth and/or repair them).
    Keep,
    /// Weber §11: one bone per vertex from pseudo-cylinders (smooth them after).
    Regenerate,
    /// Dunia: `k / d^n` to every bone segment.
    Distance {
        /// Scale.
        k: f32,
        /// Fall-off exponent.
        n: f32,
        /// Normalised weights below this are dropped.
        threshold: f32,
    },
}

/// Smoothing settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothSettings {
    /// Weight change allowed per section radius of surface distance.
    pub threshold: f32,
    /// Most sweeps.
    pub max_iterations: usize,
}

/// What to do to every skinned primitive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightEdit {
    /// New weights, or keep.
    pub new_weights: NewWeights,
    /// Smooth after (`None`: no smoothing).
    pub smooth: Option<SmoothSettings>,
    /// Remove rogue patches last.
    pub rogue: bool,
    /// Influences kept per vertex (also capped by each primitive's influence width).
    pub max_influences: usize,
}

/// What happened to one primitive.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrimitiveReport {
    /// `meshes[m].primitives[p]`.
    pub field: String,
    /// Vertices.
    pub vertices: usize,
    /// Joints of its skin.
    pub joints: usize,
    /// Regeneration, when run.
    pub regenerate: Option<RegenerateStats>,
    /// Distance weights, when run.
    pub distance: Option<DistanceStats>,
    /// Smoothing, when run.
    pub smooth: Option<SmoothStats>,
    /// Rogue removal, when run.
    pub rogue: Option<RogueStats>,
    /// The cross-sections estimated from the mesh, when any were (regeneration, smoothing and
    /// rogue removal use them): zero-length bones and bones without vertices of their own.
    pub sections: Option<SectionStats>,
    /// Vertices whose weights differ from the input's.
    pub vertices_changed: usize,
    /// Largest change of any weight.
    pub max_weight_change: f32,
}

/// Apply `edit` to every skinned primitive of `scene` (each primitive once, with the skin of
/// the first node that draws it). `progress` is called with (units done, units in all) after
/// each step of each primitive: one unit for the new weights, one per smoothing sweep (up to
/// `max_iterations`), one for rogue removal. `file` names the scene in messages.
pub fn edit_scene(
    scene: &mut Scene,
    edit: &WeightEdit,
    file: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<PrimitiveReport>> {
    let mut todo: Vec<(usize, usize, usize)> = Vec::new();
    for d in &scene.draws {
        if let Some(skin) = d.skin
            && !todo.iter().any(|t| t.0 == d.mesh && t.1 == d.primitive)
        {
            todo.push((d.mesh, d.primitive, skin));
        }
    }
    if todo.is_empty() {
        return Err(Error::invalid(
            file,
            "skins",
            "no skinned mesh: the weight tools need a skin's joints to weight vertices to",
        ));
    }
    let mut reports = Vec::with_capacity(todo.len());
    // Progress in work units: one for the new weights, one per smoothing sweep (the long
    // step; a smoothing that converges early jumps to its end), one for rogue removal.
    let sweeps = edit.smooth.map_or(0, |s| s.max_iterations);
    let units_each = 1 + sweeps + edit.rogue as usize;
    let total_units = units_each * todo.len();
    let mut units = 0;
    let mut step = |progress: &mut dyn FnMut(usize, usize), n: usize| {
        units += n;
        progress(units.min(total_units), total_units);
    };
    for &(m, p, skin) in &todo {
        let field = format!("meshes[{m}].primitives[{p}]");
        let mut bones = bone_axes(scene, skin);
        let prim = &scene.meshes[m].primitives[p];
        let Some(sw) = prim.skin_weights.as_ref() else {
            continue;
        };
        if let Some(k) = sw.weights.iter().position(|&w| w < 0.0) {
            return Err(Error::invalid(
                file,
                format!("{field}.attributes.WEIGHTS_0"),
                format!(
                    "vertex {} has a negative weight (a native rig's muscle bone gives its \
                     parent one); the weight tools work on weights of 0 or more",
                    k / sw.width.max(1)
                ),
            ));
        }
        let width = sw.width.max(4);
        let max_influences = edit.max_influences.min(width).clamp(1, 8);
        let mesh = WeightMesh::from_primitive(prim);
        fit_leaf_tips(&mesh, &mut bones);
        let input = influences_from(sw);
        let job_error = |e: Error| Error::invalid(file, &field, e.to_string());
        let mut report = PrimitiveReport {
            field: field.clone(),
            vertices: mesh.positions.len(),
            joints: bones.len(),
            ..Default::default()
        };
        let (mut influences, sections) = match edit.new_weights {
            NewWeights::Regenerate => {
                let r = RegenerateJob {
                    mesh: &mesh,
                    bones: &bones,
                    sections: None,
                }
                .run()
                .map_err(job_error)?;
                let w = r.influences();
                report.sections = Some(r.stats.sections.clone());
                report.regenerate = Some(r.stats);
                (w, Some(r.sections))
            }
            NewWeights::Distance { k, n, threshold } => {
                let (w, stats) = DistanceWeightsJob {
                    mesh: &mesh,
                    bones: &bones,
                    k,
                    n,
                    threshold,
                    max_influences,
                }
                .run()
                .map_err(job_error)?;
                report.distance = Some(stats);
                (w, None)
            }
            NewWeights::Keep => {
                if let Some(v) = input.iter().position(Vec::is_empty) {
                    return Err(Error::invalid(
                        file,
                        format!("{field}.attributes.WEIGHTS_0"),
                        format!(
                            "vertex {v} has no weights: smoothing and rogue removal work on \
                             existing weights; regenerate or compute distance weights instead"
                        ),
                    ));
                }
                (input.clone(), None)
            }
        };
        step(&mut progress, 1);
        let needs_sections = edit.smooth.is_some() || edit.rogue;
        let sections = match sections {
            Some(s) => Some(s),
            None if needs_sections => {
                let owner = dominant_bone(&influences);
                let (sections, stats) = SectionJob {
                    mesh: &mesh,
                    bones: &bones,
                    owner: &owner,
                }
                .run()
                .map_err(job_error)?;
                report.sections = Some(stats);
                Some(sections)
            }
            None => None,
        };
        if let (Some(s), Some(sections)) = (edit.smooth, &sections) {
            let mut done = 0;
            let stats = SmoothJob {
                mesh: &mesh,
                sections,
                threshold: s.threshold,
                max_iterations: s.max_iterations,
                max_influences,
                influences: &mut influences,
            }
            .run_with_progress(|sweeps| {
                step(&mut progress, sweeps - done);
                done = sweeps;
            })
            .map_err(job_error)?;
            step(&mut progress, s.max_iterations - done);
            report.smooth = Some(stats);
        }
        if edit.rogue {
            report.rogue = Some(
                RogueJob {
                    mesh: &mesh,
                    sections: sections.as_deref(),
                    bone_count: bones.len(),
                    influences: &mut influences,
                }
                .run()
                .map_err(job_error)?,
            );
            step(&mut progress, 1);
        }
        for w in influences.iter_mut() {
            if w.len() > max_influences {
                super::limit_and_normalise(w, max_influences);
            }
        }
        for (a, b) in input.iter().zip(&influences) {
            if a != b {
                report.vertices_changed += 1;
                for &(j, _) in a.iter().chain(b) {
                    let change = (weight_of(a, j) - weight_of(b, j)).abs();
                    report.max_weight_change = report.max_weight_change.max(change);
                }
            }
        }
        scene.meshes[m].primitives[p].skin_weights = Some(skin_weights_from(&influences, width));
        reports.push(report);
    }
    Ok(reports)
}
