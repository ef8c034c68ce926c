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
use super::sections::{BoneSection, SectionJob, SectionStats, dominant_bone};
use super::smooth::{SmoothJob, SmoothStats};
use super::{
    BoneAxis, Influences, WeightMesh, Work, bone_axes, fit_leaf_tips, influences_from,
    skin_weights_from, weight_of,
};
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
    /// Per bone: how far its weights moved, and the signs of worse weights
    /// ([`super::changes`]).
    pub bone_changes: Vec<super::changes::BoneChange>,
    /// The work every step took on this primitive: the bones and their leaf tips, the tools,
    /// the conversions and the comparison with the input.
    pub work: Work,
}

/// Apply `edit` to every skinned primitive of `scene` (each primitive once, with the skin of
/// the first node that draws it). `progress` is called with (units done, units in all) after
/// each step of each primitive: one unit for the new weights, one per smoothing sweep (up to
/// `max_iterations`), one for rogue removal. `file` names the scene in messages.
pub fn edit_scene(
    scene: &mut Scene,
    edit: &WeightEdit,
    file: &str,
    progress: impl FnMut(usize, usize),
) -> Result<Vec<PrimitiveReport>> {
    let todo = skinned_primitives(scene, file)?;
    let mut reports = Vec::with_capacity(todo.len());
    // Progress in work units: one for the new weights, one per smoothing sweep (the long
    // step; a smoothing that converges early jumps to its end), one for rogue removal.
    let sweeps = edit.smooth.map_or(0, |s| s.max_iterations);
    let units_each = 1 + sweeps + edit.rogue as usize;
    let mut progress = Progress {
        done: 0,
        total: units_each * todo.len(),
        report: progress,
    };
    for &(m, p, skin) in &todo {
        let field = format!("meshes[{m}].primitives[{p}]");
        let mut work = Work::default();
        let mut bones = bone_axes(scene, skin, &mut work);
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
        let pairs = prim.vertex_count() as u64 * bones.len() as u64;
        if pairs > super::WORK_BUDGET_PAIRS {
            return Err(Error::invalid(
                file,
                &field,
                format!(
                    "{} vertices × {} bones = {pairs} vertex–bone pairs a pass, past the weight \
                     tools' budget of {} (about a second a pass on 2 cores; regeneration makes \
                     up to 17): every tool compares each vertex with each bone; edit a rig with \
                     fewer bones, or fewer vertices, at a time",
                    prim.vertex_count(),
                    bones.len(),
                    super::WORK_BUDGET_PAIRS
                ),
            ));
        }
        let width = sw.width.max(4);
        let mesh = WeightMesh::from_primitive(prim);
        fit_leaf_tips(&mesh, &mut bones, &mut work);
        let input = influences_from(sw);
        // The weights read and written (vertices × width), the mesh taken in.
        work += Work::steps(2 * sw.joints.len() + mesh.positions.len() + mesh.triangles.len());
        let tools = Tools {
            edit,
            mesh: &mesh,
            bones: &bones,
            max_influences: edit.max_influences.min(width).clamp(1, 8),
            file,
            field: &field,
        };
        let (influences, mut report) = tools.run(&input, &mut progress)?;
        report.bone_changes =
            super::changes::bone_changes(&mesh, &bones, (&input, &influences), &mut work);
        report.work += work;
        scene.meshes[m].primitives[p].skin_weights = Some(skin_weights_from(&influences, width));
        reports.push(report);
    }
    Ok(reports)
}

/// Every (mesh, primitive, skin) drawn skinned, each primitive once with the skin of its first
/// draw; an error when there is none.
fn skinned_primitives(scene: &Scene, file: &str) -> Result<Vec<(usize, usize, usize)>> {
    let mut todo: Vec<(usize, usize, usize)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in &scene.draws {
        if let Some(skin) = d.skin
            && seen.insert((d.mesh, d.primitive))
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
    Ok(todo)
}

/// Progress in work units over all primitives, reported as (units done, units in all).
struct Progress<F> {
    /// Units done so far.
    done: usize,
    /// Units in all.
    total: usize,
    /// Called after each step.
    report: F,
}

impl<F: FnMut(usize, usize)> Progress<F> {
    /// `n` more units done.
    fn step(&mut self, n: usize) {
        self.done += n;
        (self.report)(self.done.min(self.total), self.total);
    }
}

/// The weight tools on one primitive.
struct Tools<'a> {
    /// What to do.
    edit: &'a WeightEdit,
    /// The primitive's surface in bind space.
    mesh: &'a WeightMesh,
    /// Its skin's bones (leaves fitted to the mesh).
    bones: &'a [BoneAxis],
    /// Influences kept per vertex.
    max_influences: usize,
    /// The scene, in messages.
    file: &'a str,
    /// `meshes[m].primitives[p]`, in messages.
    field: &'a str,
}

impl Tools<'_> {
    /// A job's error as one about this primitive.
    fn job_error(&self, e: Error) -> Error {
        Error::invalid(self.file, self.field, e.to_string())
    }

    /// New weights, smoothing and rogue removal on `input` (the primitive's weights), in that
    /// order, then at most `max_influences` per vertex; the new weights and the report.
    fn run<F: FnMut(usize, usize)>(
        &self,
        input: &Influences,
        progress: &mut Progress<F>,
    ) -> Result<(Influences, PrimitiveReport)> {
        let mut report = PrimitiveReport {
            field: self.field.to_string(),
            vertices: self.mesh.positions.len(),
            joints: self.bones.len(),
            ..Default::default()
        };
        let (mut influences, sections) = self.new_weights(input, &mut report)?;
        progress.step(1);
        let sections = match sections {
            Some(s) => Some(s),
            None if self.edit.smooth.is_some() || self.edit.rogue => {
                Some(self.sections(&influences, &mut report)?)
            }
            None => None,
        };
        if let (Some(s), Some(sections)) = (self.edit.smooth, &sections) {
            let mut done = 0;
            let stats = SmoothJob {
                mesh: self.mesh,
                sections,
                threshold: s.threshold,
                max_iterations: s.max_iterations,
                max_influences: self.max_influences,
                influences: &mut influences,
            }
            .run_with_progress(|sweeps| {
                progress.step(sweeps - done);
                done = sweeps;
            })
            .map_err(|e| self.job_error(e))?;
            progress.step(s.max_iterations - done);
            report.work += stats.work;
            report.smooth = Some(stats);
        }
        if self.edit.rogue {
            let stats = RogueJob {
                mesh: self.mesh,
                sections: sections.as_deref(),
                bone_count: self.bones.len(),
                influences: &mut influences,
            }
            .run()
            .map_err(|e| self.job_error(e))?;
            report.work += stats.work;
            report.rogue = Some(stats);
            progress.step(1);
        }
        for w in influences.iter_mut() {
            if w.len() > self.max_influences {
                super::limit_and_normalise(w, self.max_influences);
            }
        }
        // The influence limit and the comparison with the input.
        let lists = super::list_comparison_steps(input, &influences);
        report.work += Work::steps(influences.len() + lists);
        compare(input, &influences, &mut report);
        Ok((influences, report))
    }

    /// The new weights as `edit.new_weights` asks (regenerated ones with the sections they
    /// were made from), their statistics in `report`.
    fn new_weights(
        &self,
        input: &Influences,
        report: &mut PrimitiveReport,
    ) -> Result<(Influences, Option<Vec<BoneSection>>)> {
        match self.edit.new_weights {
            NewWeights::Regenerate => {
                let r = RegenerateJob {
                    mesh: self.mesh,
                    bones: self.bones,
                    sections: None,
                }
                .run()
                .map_err(|e| self.job_error(e))?;
                let w = r.influences();
                report.work += r.stats.work;
                report.sections = Some(r.stats.sections.clone());
                report.regenerate = Some(r.stats);
                Ok((w, Some(r.sections)))
            }
            NewWeights::Distance { k, n, threshold } => {
                let (w, stats) = DistanceWeightsJob {
                    mesh: self.mesh,
                    bones: self.bones,
                    k,
                    n,
                    threshold,
                    max_influences: self.max_influences,
                }
                .run()
                .map_err(|e| self.job_error(e))?;
                report.work += stats.work;
                report.distance = Some(stats);
                Ok((w, None))
            }
            NewWeights::Keep => {
                if let Some(v) = input.iter().position(Vec::is_empty) {
                    return Err(Error::invalid(
                        self.file,
                        format!("{}.attributes.WEIGHTS_0", self.field),
                        format!(
                            "vertex {v} has no weights: smoothing and rogue removal work on \
                             existing weights; regenerate or compute distance weights instead"
                        ),
                    ));
                }
                Ok((input.clone(), None))
            }
        }
    }

    /// Sections estimated from the mesh, each vertex assigned to its largest weight in
    /// `influences`; their statistics in `report`.
    fn sections(
        &self,
        influences: &Influences,
        report: &mut PrimitiveReport,
    ) -> Result<Vec<BoneSection>> {
        let owner = dominant_bone(influences);
        let (sections, stats) = SectionJob {
            mesh: self.mesh,
            bones: self.bones,
            owner: &owner,
        }
        .run()
        .map_err(|e| self.job_error(e))?;
        report.work += stats.work + Work::steps(influences.len());
        report.sections = Some(stats);
        Ok(sections)
    }
}

/// The vertices whose weights differ between `input` and `output`, and the largest change of
/// any weight, into `report`.
fn compare(input: &Influences, output: &Influences, report: &mut PrimitiveReport) {
    for (a, b) in input.iter().zip(output) {
        if a != b {
            report.vertices_changed += 1;
            for &(j, _) in a.iter().chain(b) {
                let change = (weight_of(a, j) - weight_of(b, j)).abs();
                report.max_weight_change = report.max_weight_change.max(change);
            }
        }
    }
}
