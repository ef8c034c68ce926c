//! The checks `check_model` runs on an imported scene, one function each (see the module
//! documentation of `check` for the list).

use glam::{DMat3, Mat4, Vec3};

use super::{
    Check, CheckConfig, ClipBounds, Finding, FrameRef, JointBounds, Mark, ModelResult, Severity,
    Stage, UniformSplit,
};
use crate::compare::{CompareOptions, compare};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState, skin_pose};
use crate::gpu::{CapturePath, GpuContext, PaletteSource};
use crate::info::count;
use crate::math::bounds_diagonal;
use crate::quality::{JointZone, RingShape, joint_zones};
use crate::scene::{Scene, SkinWeights};
use crate::skin::SkinnedVertices;

/// A share of the diagonal in words (`3.2 %`).
fn percent(rel: f64) -> String {
    format!("{:.2} %", rel * 100.0)
}

/// Every check on `scene`, into `result` (the GPU readback on `gpu` unless skipped);
/// `stage` as each [`Stage`] from [`Stage::Frames`] begins.
pub(super) fn run(
    scene: &Scene,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    result: &mut ModelResult,
    stage: &mut dyn FnMut(Stage),
) {
    let out = &mut result.findings;
    imports(scene, out);
    let mut outcome = || -> Result<()> {
        stage(Stage::Frames);
        let rest = skin_pose(scene, None, 0.0, None)?;
        let (lo, hi) = bounds(&rest);
        let diagonal = f64::from(bounds_diagonal((lo, hi))).max(f64::MIN_POSITIVE);
        result.rest_bounds = Some((lo.to_array(), hi.to_array()));
        result.joint_bounds = joint_bounds(scene);
        // Every sampled frame skinned once, for the three checks that look at frames.
        let mut influences = InfluenceSurvey::new(scene, config, &rest);
        let mut clips = ClipSurvey::new(scene, (lo, hi));
        let mut shapes = ShapeSurvey::new(joint_zones(scene, &rest));
        let (mut frame, mut skinner) = (FrameState::new(scene), CpuSkinner::new(scene, None));
        for (anim, time_s) in sample_times(scene, config) {
            frame.evaluate(scene, anim, time_s)?;
            let posed = skinner.skin_all(scene, &frame)?;
            influences.observe(scene, anim, time_s, &posed)?;
            clips.observe(anim, time_s, &posed);
            shapes.observe(anim, time_s, &frame.model_from_node, &posed);
        }
        stage(Stage::Findings);
        influences.finish(scene, config, diagonal, out);
        unused_joints(scene, out);
        inverse_binds(scene, config, out);
        bind_rest_pose(scene, config, diagonal, out)?;
        joint_scale(scene, out);
        result.clip_bounds = clips.finish(scene, config, diagonal, out);
        shapes.finish(scene, config, out);
        if config.clip_reduction {
            clip_reduction(scene, config, diagonal, out)?;
        }
        stage(Stage::Split);
        result.uniform_split = uniform_split(scene, config, out);
        stage(Stage::GpuReadback);
        gpu_readback(scene, config, gpu, out);
        Ok(())
    };
    if let Err(e) = outcome() {
        out.add(
            Check::Import,
            Severity::Error,
            format!("imports, but cannot be skinned: {e}"),
        );
    }
    result.checks_run = Check::ALL.to_vec();
    if config.clip_reduction {
        result.checks_run.push(Check::ClipReduction);
    }
}

/// `anim.reducible`: each clip reduced within `clip_reduction_rel` of the diagonal as
/// `skinview optimize` reduces it; an info finding for each clip whose animation data
/// (as `optimize` writes it: key times shared where equal, codes as shorts) would shrink by a
/// tenth or more.
fn clip_reduction(
    scene: &Scene,
    config: &CheckConfig,
    diagonal: f64,
    out: &mut Vec<Finding>,
) -> Result<()> {
    let job = crate::optimize::OptimizeJob {
        scene,
        tolerance: (config.clip_reduction_rel * diagonal) as f32,
        exact: Vec::new(),
        caps: Vec::new(),
        rotation_codes: vec![crate::optimize::KeyCodes::SNORM16],
        vector_codes: Vec::new(),
        price: None,
    };
    let (clips, results) = job.run(|_, _| {})?;
    for ((original, reduced), r) in scene.animations.iter().zip(&clips).zip(&results) {
        let (before, after) = (
            crate::optimize::clip_bytes(original),
            crate::optimize::clip_bytes(reduced),
        );
        if after * 10 > before * 9 {
            continue;
        }
        let keys = |k: &[crate::optimize::KeyCounts]| -> (usize, usize) {
            k.iter()
                .fold((0, 0), |(b, a), x| (b + x.before, a + x.after))
        };
        let (kb, ka) = keys(&r.keys);
        let name = crate::anim::ClipName::new(r.clip, original.name.as_deref());
        out.add(
            Check::ClipReduction,
            Severity::Info,
            format!(
                "{} could be {:.1}× smaller within {:.1e} of the model's size ({} keys → {}, \
                 {before} → {after} bytes of floats; the worst skinned vertex moves {:.2e} of \
                 the size): `skinview optimize`",
                name.words(),
                before as f64 / after.max(1) as f64,
                config.clip_reduction_rel,
                kb,
                ka,
                f64::from(r.worst.distance) / diagonal
            ),
        );
    }
    Ok(())
}

/// Findings as the checks add them.
trait Findings {
    /// A finding about the model as a whole.
    fn add(&mut self, check: Check, severity: Severity, message: String);
    /// A finding at one sampled frame, with where its picture marks the problem.
    fn add_at(&mut self, check: Check, severity: Severity, message: String, at: At);
}

/// A finding's frame and its mark.
type At = (FrameRef, Option<Mark>);

impl Findings for Vec<Finding> {
    fn add(&mut self, check: Check, severity: Severity, message: String) {
        self.push(Finding::new(check, severity, message));
    }
    fn add_at(&mut self, check: Check, severity: Severity, message: String, at: At) {
        self.push(Finding {
            frame: Some(at.0),
            mark: at.1,
            ..Finding::new(check, severity, message)
        });
    }
}

/// A sampled frame: its clip (None: the rest pose) and time.
fn frame_ref(scene: &Scene, anim: Option<usize>, time_s: f32) -> FrameRef {
    FrameRef {
        clip: anim.map(|a| scene.clip_name(a).label()),
        clip_index: anim,
        time_s,
    }
}

/// Where a frame is, in words: `clip "walk" at 1.200 s`, `animation 2 at 0.500 s` or `the
/// rest pose`.
pub(super) fn frame_words(scene: &Scene, anim: Option<usize>, time_s: f32) -> String {
    anim.map_or("the rest pose".into(), |a| {
        format!("{} at {time_s:.3} s", scene.clip_name(a).words())
    })
}

/// The bounds of every finite skinned vertex (a point at the origin without any).
fn bounds(out: &[SkinnedVertices]) -> (Vec3, Vec3) {
    crate::skin::bounds(out).unwrap_or((Vec3::ZERO, Vec3::ZERO))
}

/// The importer's repairs (warnings) and warnings (info); a file with no mesh (an error:
/// nothing to draw or skin).
fn imports(scene: &Scene, out: &mut Vec<Finding>) {
    if scene.draws.is_empty() {
        out.add(
            Check::Import,
            Severity::Error,
            "the file has no mesh: nothing to draw or skin".to_string(),
        );
    }
    let mut rest: Option<Vec<SkinnedVertices>> = None;
    for n in &scene.report.notes {
        let severity = if n.repaired {
            Severity::Warning
        } else {
            Severity::Info
        };
        let kind = if n.repaired { "repaired" } else { "warning" };
        let mut finding = Finding::new(
            Check::Import,
            severity,
            format!("{kind}: {}: {}", n.field, n.message),
        );
        if let Some(v) = n.vertex {
            // The rest pose as the picture draws it, skinned once for all such notes.
            if rest.is_none() {
                rest = Some(skin_pose(scene, None, 0.0, None).unwrap_or_default());
            }
            finding.mark = rest.as_deref().and_then(|r| vertex_mark(scene, r, v));
        }
        out.push(finding);
    }
}

/// The mark of an importer's note about a vertex: the vertex in `rest` (the skinned rest
/// pose, as the picture draws it), in the first draw of its primitive (None when no draw
/// shows it).
fn vertex_mark(
    scene: &Scene,
    rest: &[SkinnedVertices],
    at: crate::scene::NoteVertex,
) -> Option<Mark> {
    let draw = scene
        .draws
        .iter()
        .position(|d| d.mesh == at.mesh && d.primitive == at.primitive)?;
    let primitive = scene.meshes.get(at.mesh)?.primitives.get(at.primitive)?;
    let position = *rest.get(draw)?.positions.get(at.vertex)?;
    Some(Mark::Vertex {
        draw,
        vertex: at.vertex,
        position: position.to_array(),
        influences: primitive
            .skin_weights
            .as_ref()
            .map_or(0, |w| used_influences(w, at.vertex)),
    })
}

/// Vertices with more influences than `config.max_influences`, and the largest distance
/// dropping the extra ones moves a vertex over every clip's sampled frames.
struct InfluenceSurvey {
    max: usize,
    /// Vertices over the limit, and the most influences of one.
    over: usize,
    most: usize,
    /// The largest distance so far, and its frame.
    cost: f64,
    at: (Option<usize>, f32),
    /// The vertex that moved that far there (draw, vertex, position); before one moves, the
    /// first with the most influences, at rest.
    worst: (usize, usize, Vec3),
}

/// The influences (nonzero weights) of vertex `v`.
fn used_influences(w: &SkinWeights, v: usize) -> usize {
    let slots = v * w.width..(v + 1) * w.width;
    w.weights
        .get(slots)
        .map_or(0, |s| s.iter().filter(|&&x| x != 0.0).count())
}

impl InfluenceSurvey {
    fn new(scene: &Scene, config: &CheckConfig, rest: &[SkinnedVertices]) -> InfluenceSurvey {
        let max = config.max_influences;
        let (mut over, mut most, mut worst) = (0usize, 0usize, (0, 0));
        for d in scene.deformed_draw_indices() {
            let Some(w) = &scene.primitive(&scene.draws[d]).skin_weights else {
                continue;
            };
            for v in 0..w.vertex_count() {
                let used = used_influences(w, v);
                over += usize::from(used > max);
                if used > most {
                    (most, worst) = (used, (d, v));
                }
            }
        }
        let at_rest = rest
            .get(worst.0)
            .and_then(|o| o.positions.get(worst.1))
            .copied()
            .unwrap_or(Vec3::ZERO);
        InfluenceSurvey {
            max,
            over,
            most,
            cost: 0.0,
            at: (None, 0.0),
            worst: (worst.0, worst.1, at_rest),
        }
    }

    /// The frame skinned with the heaviest `max` influences against `posed` (all of them);
    /// nothing to do when no vertex is over the limit.
    fn observe(
        &mut self,
        scene: &Scene,
        anim: Option<usize>,
        time_s: f32,
        posed: &[SkinnedVertices],
    ) -> Result<()> {
        if self.over == 0 {
            return Ok(());
        }
        let reduced = skin_pose(scene, anim, time_s, Some(self.max))?;
        for (d, (a, b)) in posed.iter().zip(&reduced).enumerate() {
            for (v, (p, q)) in a.positions.iter().zip(&b.positions).enumerate() {
                let moved = f64::from((*p - *q).length());
                if moved > self.cost {
                    (self.cost, self.at, self.worst) = (moved, (anim, time_s), (d, v, *p));
                }
            }
        }
        Ok(())
    }

    /// The finding (a warning past `influence_cost_rel`, else info), when any vertex is over.
    fn finish(self, scene: &Scene, config: &CheckConfig, diagonal: f64, out: &mut Vec<Finding>) {
        if self.over == 0 {
            return;
        }
        let (max, rel, (anim, t)) = (self.max, self.cost / diagonal, self.at);
        let (draw, vertex, position) = self.worst;
        let mark = Mark::Vertex {
            draw,
            vertex,
            position: position.to_array(),
            influences: scene
                .draws
                .get(draw)
                .and_then(|d| scene.primitive(d).skin_weights.as_ref())
                .map_or(0, |w| used_influences(w, vertex)),
        };
        let severity = if rel > config.influence_cost_rel {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.add_at(
            Check::Influences,
            severity,
            format!(
                "{} vertices have more than {max} influences (up to {}); keeping the \
                 heaviest {max} moves a vertex by up to {} of the model's size ({})",
                self.over,
                self.most,
                percent(rel),
                frame_words(scene, anim, t)
            ),
            (frame_ref(scene, anim, t), Some(mark)),
        );
    }
}

/// The clip and time of every sampled frame (the rest pose when there is no clip).
fn sample_times(scene: &Scene, config: &CheckConfig) -> Vec<(Option<usize>, f32)> {
    if scene.animations.is_empty() {
        return vec![(None, 0.0)];
    }
    (0..scene.animations.len())
        .flat_map(|a| {
            crate::compare::run::frame_times(scene, Some(a), config.frames)
                .into_iter()
                .map(move |t| (Some(a), t))
        })
        .collect()
}

/// Skin joints no vertex of any draw of that skin is weighted to.
fn unused_joints(scene: &Scene, out: &mut Vec<Finding>) {
    for (s, skin) in scene.skins.iter().enumerate() {
        let mut used = vec![false; skin.joints.len()];
        for d in scene.deformed_draws().filter(|d| d.skin == Some(s)) {
            let Some(w) = &scene.primitive(d).skin_weights else {
                continue;
            };
            for (j, x) in w.joints.iter().zip(&w.weights) {
                if *x != 0.0
                    && let Some(u) = used.get_mut(*j as usize)
                {
                    *u = true;
                }
            }
        }
        let unused: Vec<String> = (0..used.len())
            .filter(|&j| !used[j])
            .map(|j| scene.node_label(skin.joints[j]))
            .collect();
        if !unused.is_empty() {
            out.add(
                Check::UnusedJoints,
                Severity::Info,
                format!(
                    "{} of skin {s}'s {} joints {} no vertex: {}",
                    unused.len(),
                    used.len(),
                    if unused.len() == 1 {
                        "influences"
                    } else {
                        "influence"
                    },
                    list(&unused)
                ),
            );
        }
    }
}

/// The first few of `names`, and how many more.
fn list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// The ratio of the largest to the smallest singular value of `m` (the 2-norm condition
/// number), from the eigenvalues of mᵀm (closed form for symmetric 3×3 matrices).
fn condition(m: DMat3) -> f64 {
    let a = m.transpose() * m;
    let e = symmetric_eigenvalues(a);
    let (lo, hi) = (e[0].max(0.0), e[2].max(0.0));
    if lo <= 0.0 {
        return f64::INFINITY;
    }
    (hi / lo).sqrt()
}

/// The eigenvalues of a symmetric 3×3 matrix, ascending (the trigonometric method: Smith,
/// "Eigenvalues of a symmetric 3 × 3 matrix", CACM 1961).
fn symmetric_eigenvalues(a: DMat3) -> [f64; 3] {
    let (a00, a11, a22) = (a.x_axis.x, a.y_axis.y, a.z_axis.z);
    let (a01, a02, a12) = (a.y_axis.x, a.z_axis.x, a.z_axis.y);
    let p1 = a01 * a01 + a02 * a02 + a12 * a12;
    if p1 == 0.0 {
        let mut d = [a00, a11, a22];
        d.sort_by(f64::total_cmp);
        return d;
    }
    let q = (a00 + a11 + a22) / 3.0;
    let p2 = (a00 - q).powi(2) + (a11 - q).powi(2) + (a22 - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    let b = (a - DMat3::IDENTITY * q) * (1.0 / p);
    let r = (b.determinant() / 2.0).clamp(-1.0, 1.0);
    let phi = r.acos() / 3.0;
    let e1 = q + 2.0 * p * phi.cos();
    let e3 = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    let e2 = 3.0 * q - e1 - e3;
    [e3, e2, e1]
}

/// Inverse bind matrices that are singular or ill-conditioned (their 3×3 part), or mirror.
fn inverse_binds(scene: &Scene, config: &CheckConfig, out: &mut Vec<Finding>) {
    let (mut singular, mut ill, mut mirrored) = (Vec::new(), Vec::new(), Vec::new());
    let mut worst_condition = 0f64;
    for skin in &scene.skins {
        for (j, m) in skin.joint_from_bind.iter().enumerate() {
            let name = scene.node_label(skin.joints[j]);
            let m3 = DMat3::from_mat4(m.as_dmat4());
            let c = condition(m3);
            if !c.is_finite() || m3.determinant().abs() < 1e-12 {
                singular.push(name);
            } else if c > config.max_condition {
                worst_condition = worst_condition.max(c);
                ill.push(name);
            } else if m3.determinant() < 0.0 {
                mirrored.push(name);
            }
        }
    }
    if !singular.is_empty() {
        out.add(
            Check::Invertible,
            Severity::Error,
            format!(
                "the inverse bind matrix of {} cannot be inverted (a zero scale): {}",
                count(singular.len(), "joint", "joints"),
                list(&singular)
            ),
        );
    }
    if !ill.is_empty() {
        out.add(
            Check::Invertible,
            Severity::Warning,
            format!(
                "the inverse bind matrix of {} is ill-conditioned (condition number up to \
                 {worst_condition:.1e}, over {:.0e}: f32 skinning loses precision): {}",
                count(ill.len(), "joint", "joints"),
                config.max_condition,
                list(&ill)
            ),
        );
    }
    if !mirrored.is_empty() {
        out.add(
            Check::Mirrored,
            Severity::Warning,
            format!(
                "the inverse bind matrix of {} mirrors (negative determinant): the skin turns \
                 inside out unless the joint's transform mirrors too: {}",
                count(mirrored.len(), "joint", "joints"),
                list(&mirrored)
            ),
        );
    }
}

/// Joints whose bind matrix does not match the hierarchy's rest pose: at rest each joint's
/// skinning matrix M_j (rest world × inverse bind) should be what every joint of the draw
/// shares (the element-wise median M̄: the mesh's own bind transform, or a quantisation
/// folded into every inverse bind); |M_j p − M̄ p| over the vertices j moves
/// ([`crate::poses::ReferencePoses::gap_m`], the viewer's marks too), worst joint named.
fn bind_rest_pose(
    scene: &Scene,
    config: &CheckConfig,
    diagonal: f64,
    out: &mut Vec<Finding>,
) -> Result<()> {
    let poses = crate::poses::ReferencePoses::new(scene)?;
    let mut moved: Vec<(f64, String)> = poses
        .gap_m
        .iter()
        .enumerate()
        .filter(|(_, e)| **e / diagonal > config.bind_rest_rel)
        .map(|(node, e)| (e / diagonal, scene.node_label(node)))
        .collect();
    moved.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((rel, name)) = moved.first() {
        let names: Vec<String> = moved.iter().map(|m| m.1.clone()).collect();
        out.add(
            Check::BindRestPose,
            Severity::Warning,
            format!(
                "bind pose ≠ rest pose: the bind matrices of {} disagree with the rest \
                 hierarchy (worst {name}: its vertices would move {} of the model's size in \
                 the rest pose): {}",
                count(moved.len(), "joint", "joints"),
                percent(*rel),
                list(&names)
            ),
        );
    }
    Ok(())
}

/// Joints with a non-uniform rest scale (normals then need the inverse-transpose path).
fn joint_scale(scene: &Scene, out: &mut Vec<Finding>) {
    let uneven: Vec<(f32, usize)> = scene
        .joint_nodes()
        .into_iter()
        .map(|j| {
            let s = scene.nodes[j].rest.scale.abs();
            (s.max_element() / s.min_element().max(f32::MIN_POSITIVE), j)
        })
        .filter(|(r, _)| *r > 1.0 + 1e-4)
        .collect();
    if let Some(&(_, j)) = uneven.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
        let s = scene.nodes[j].rest.scale;
        let names: Vec<String> = uneven.iter().map(|u| scene.node_label(u.1)).collect();
        out.add(
            Check::JointScale,
            Severity::Info,
            format!(
                "{} a non-uniform rest scale (worst {}: {} × {} × {}); normals need the \
                 inverse-transpose path: {}",
                if names.len() == 1 {
                    "1 joint has".to_string()
                } else {
                    format!("{} joints have", names.len())
                },
                scene.node_label(j),
                s.x,
                s.y,
                s.z,
                list(&names)
            ),
        );
    }
}

/// Each clip's skinned bounds over its sampled frames, and how far it goes past the rest
/// bounds (worst frame): past the rest box, and past the rest box's bounding sphere (centre
/// the box's, radius half its diagonal), the shape a renderer culls with when it culls a
/// skinned mesh by a sphere made once (three.js's `SkinnedMesh.boundingSphere`, computed at
/// its first frame).
struct ClipSurvey {
    rest: (Vec3, Vec3),
    clips: Vec<ClipExcursion>,
}

/// An excursion past the rest box under this share of the diagonal is f32 noise (a clip
/// that holds its rest pose), not a clip leaving its box: 1e-5, ten times the skinned
/// positions' rounding.
const BOX_NOISE_REL: f64 = 1e-5;

/// One clip's bounds and worst excursions.
#[derive(Clone, Copy)]
struct ClipExcursion {
    bounds: (Vec3, Vec3),
    past_box: Excursion,
    past_sphere: Excursion,
}

/// How far a clip's skinned vertices go past a rest bound at its worst frame: the time, and
/// that frame's box.
#[derive(Clone, Copy)]
struct Excursion {
    past: f32,
    time_s: f32,
    frame: (Vec3, Vec3),
}

impl Excursion {
    /// The finding's frame and its mark: the rest box and this frame's.
    fn at(&self, scene: &Scene, anim: usize, rest: (Vec3, Vec3)) -> At {
        let mark = Mark::Bounds {
            rest_min: rest.0.to_array(),
            rest_max: rest.1.to_array(),
            frame_min: self.frame.0.to_array(),
            frame_max: self.frame.1.to_array(),
        };
        (frame_ref(scene, Some(anim), self.time_s), Some(mark))
    }
}

impl ClipSurvey {
    fn new(scene: &Scene, rest: (Vec3, Vec3)) -> ClipSurvey {
        let none = Excursion {
            past: 0.0,
            time_s: 0.0,
            frame: rest,
        };
        let still = ClipExcursion {
            bounds: rest,
            past_box: none,
            past_sphere: none,
        };
        ClipSurvey {
            rest,
            clips: vec![still; scene.animations.len()],
        }
    }

    fn observe(&mut self, anim: Option<usize>, time_s: f32, posed: &[SkinnedVertices]) {
        let Some(clip) = anim.and_then(|a| self.clips.get_mut(a)) else {
            return;
        };
        let (lo, hi) = self.rest;
        let (flo, fhi) = bounds(posed);
        let past = (lo - flo).max(fhi - hi).max_element();
        let frame = (flo, fhi);
        if past > clip.past_box.past {
            clip.past_box = Excursion {
                past,
                time_s,
                frame,
            };
        }
        let (centre, radius) = ((lo + hi) * 0.5, (hi - lo).length() * 0.5);
        let farthest = posed
            .iter()
            .flat_map(|o| o.positions.iter())
            .filter(|p| p.is_finite())
            .map(|p| p.distance(centre))
            .fold(0.0f32, f32::max);
        if farthest - radius > clip.past_sphere.past {
            clip.past_sphere = Excursion {
                past: farthest - radius,
                time_s,
                frame,
            };
        }
        clip.bounds = (clip.bounds.0.min(flo), clip.bounds.1.max(fhi));
    }

    /// The clips' bounds, and for each that leaves the rest bounds' sphere by more than the
    /// margin a warning; a clip that leaves the rest box within that (clips move out of their
    /// rest box: that alone is normal) an info finding.
    fn finish(
        self,
        scene: &Scene,
        config: &CheckConfig,
        diagonal: f64,
        out: &mut Vec<Finding>,
    ) -> Vec<ClipBounds> {
        let mut bounds = Vec::with_capacity(self.clips.len());
        for (a, clip) in self.clips.into_iter().enumerate() {
            let words = scene.clip_name(a).words();
            let (sphere, at) = (clip.past_sphere.past, clip.past_sphere.time_s);
            let sphere_rel = f64::from(sphere) / diagonal;
            if sphere_rel > config.bounds_margin_rel {
                out.add_at(
                    Check::ClipBounds,
                    Severity::Warning,
                    format!(
                        "{words} leaves the rest bounds' sphere by {} of the model's size (at \
                         {at:.3} s): culled with the rest bounds it disappears early; use the \
                         clip's bounds",
                        percent(sphere_rel)
                    ),
                    clip.past_sphere.at(scene, a, self.rest),
                );
            } else if f64::from(clip.past_box.past) / diagonal > BOX_NOISE_REL {
                let (past, at) = (clip.past_box.past, clip.past_box.time_s);
                out.add_at(
                    Check::ClipBounds,
                    Severity::Info,
                    format!(
                        "{words} leaves the rest box by {} of the model's size (at {at:.3} s), \
                         within its sphere (past it by at most {}, under the {} margin)",
                        percent(f64::from(past) / diagonal),
                        percent(sphere_rel.max(0.0)),
                        percent(config.bounds_margin_rel)
                    ),
                    clip.past_box.at(scene, a, self.rest),
                );
            }
            bounds.push(ClipBounds {
                clip: scene.clip_name(a).label(),
                min: clip.bounds.0.to_array(),
                max: clip.bounds.1.to_array(),
            });
        }
        bounds
    }
}

/// The worst shape of every joint's blend zone over the sampled frames.
struct ShapeSurvey {
    zones: Vec<JointZone>,
    /// Per zone: the smallest radius ratio and volume ratio, each at its frame.
    worst: Vec<[WorstShape; 2]>,
}

/// A zone's smallest ratio of one measure so far: its frame, and the zone's narrowest ring
/// there.
#[derive(Clone, Copy)]
struct WorstShape {
    ratio: f64,
    anim: Option<usize>,
    time_s: f32,
    ring: Option<RingAt>,
}

/// A zone's narrowest ring at a frame, with its joint's origin and bone direction there.
#[derive(Clone, Copy)]
struct RingAt {
    ring: RingShape,
    joint: Vec3,
    axis: Vec3,
}

impl RingAt {
    /// `zone`'s narrowest ring in `positions` (its draw skinned), its joint placed by
    /// `model_from_node` (the same frame).
    fn new(zone: &JointZone, positions: &[Vec3], model_from_node: &[Mat4]) -> Option<RingAt> {
        let origin = |n: usize| model_from_node.get(n).map(|m| m.w_axis.truncate());
        let (joint, parent) = (origin(zone.joint_node)?, origin(zone.parent_node)?);
        Some(RingAt {
            ring: zone.narrowest_ring(positions)?,
            joint,
            axis: (joint - parent).normalize_or(Vec3::Y),
        })
    }

    /// The mark of `zone`'s finding.
    fn mark(&self, scene: &Scene, zone: &JointZone) -> Mark {
        Mark::Ring {
            joint: scene.node_label(zone.joint_node),
            joint_node: zone.joint_node,
            joint_position: self.joint.to_array(),
            centre: self.ring.centre.to_array(),
            axis: self.axis.to_array(),
            radius: self.ring.radius as f32,
            rest_radius: self.ring.rest_radius as f32,
        }
    }
}

impl ShapeSurvey {
    fn new(zones: Vec<JointZone>) -> ShapeSurvey {
        let none = WorstShape {
            ratio: f64::INFINITY,
            anim: None,
            time_s: 0.0,
            ring: None,
        };
        let worst = vec![[none; 2]; zones.len()];
        ShapeSurvey { zones, worst }
    }

    fn observe(
        &mut self,
        anim: Option<usize>,
        time_s: f32,
        model_from_node: &[Mat4],
        posed: &[SkinnedVertices],
    ) {
        for (zone, worst) in self.zones.iter().zip(&mut self.worst) {
            let Some(draw) = posed.get(zone.draw) else {
                continue;
            };
            let shape = zone.measure(&draw.positions);
            for (k, ratio) in [Some(shape.radius_ratio), shape.volume_ratio]
                .into_iter()
                .enumerate()
            {
                if let Some(ratio) = ratio.filter(|r| *r < worst[k].ratio) {
                    worst[k] = WorstShape {
                        ratio,
                        anim,
                        time_s,
                        ring: RingAt::new(zone, &draw.positions, model_from_node),
                    };
                }
            }
        }
    }

    /// A warning per joint whose zone shrinks past the config's shares (worst first; the
    /// first [`MAX_JOINT_FINDINGS`] joints, then how many more).
    fn finish(self, scene: &Scene, config: &CheckConfig, out: &mut Vec<Finding>) {
        let limits = [config.min_ring_radius_ratio, config.min_volume_ratio];
        // (how far under its limit, zone, which measure)
        let mut under: Vec<(f64, usize, usize)> = Vec::new();
        for (z, worst) in self.worst.iter().enumerate() {
            for k in 0..2 {
                if worst[k].ratio < limits[k] {
                    under.push((worst[k].ratio / limits[k], z, k));
                }
            }
        }
        // Worst first; a joint on several draws counts once per measure, at its worst draw.
        under.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen: Vec<(usize, usize)> = Vec::new();
        under.retain(|&(_, z, k)| {
            let key = (self.zones[z].joint_node, k);
            let fresh = !seen.contains(&key);
            seen.push(key);
            fresh
        });
        for &(_, z, k) in under.iter().take(MAX_JOINT_FINDINGS) {
            let zone = &self.zones[z];
            let WorstShape {
                ratio,
                anim,
                time_s,
                ring,
            } = self.worst[z][k];
            let (joint, at) = (
                scene.node_label(zone.joint_node),
                frame_words(scene, anim, time_s),
            );
            let message = if k == 0 {
                format!(
                    "candy-wrapper at \"{joint}\" ({at}): a ring of its blend zone keeps {} of its \
                     rest radius (under {})",
                    percent(ratio),
                    percent(limits[0])
                )
            } else {
                format!(
                    "volume lost at \"{joint}\" ({at}): its blend zone keeps {} of its rest volume \
                     (under {})",
                    percent(ratio),
                    percent(limits[1])
                )
            };
            out.add_at(
                Check::Deformation,
                Severity::Warning,
                message,
                (
                    frame_ref(scene, anim, time_s),
                    ring.map(|r| r.mark(scene, zone)),
                ),
            );
        }
        if under.len() > MAX_JOINT_FINDINGS {
            out.add(
                Check::Deformation,
                Severity::Warning,
                format!(
                    "and {} more joint shapes (ring radius or volume) past the limits",
                    under.len() - MAX_JOINT_FINDINGS
                ),
            );
        }
    }
}

/// Joints named one finding each; past this, one line says how many more.
const MAX_JOINT_FINDINGS: usize = 10;

/// Per skin joint, the box its weighted vertices fill in the joint's own space
/// ([`crate::skin::skinned_bounds::joint_space_boxes`], what a crowd culls with): an engine
/// culls the skinned mesh with the box around these boxes moved by the joints each frame,
/// which holds every skinned vertex (a blend of points, each inside its joint's moved box,
/// lies in their convex hull). Non-finite corners (a degenerate inverse bind) are left out.
fn joint_bounds(scene: &Scene) -> Vec<JointBounds> {
    let boxes = crate::skin::skinned_bounds::joint_space_boxes(scene);
    let mut out = Vec::new();
    for (s, skin_boxes) in boxes.into_iter().enumerate() {
        for (j, b) in skin_boxes.into_iter().enumerate() {
            let Some((lo, hi)) = b else { continue };
            out.push(JointBounds {
                skin: s,
                joint: scene.node_label(scene.skins[s].joints[j]),
                min: lo.to_array(),
                max: hi.to_array(),
            });
        }
    }
    out
}

/// The split into submeshes of at most `config.uniform_bones` joints: an info finding with
/// its size (an error when it cannot be made).
fn uniform_split(
    scene: &Scene,
    config: &CheckConfig,
    out: &mut Vec<Finding>,
) -> Option<UniformSplit> {
    if !scene.draws.iter().any(|d| d.skin.is_some()) {
        return None;
    }
    let k = config.uniform_bones;
    let part = match crate::partition::PartitionedScene::new(scene, k) {
        Ok(p) => p,
        Err(e) => {
            out.add(
                Check::GpuReadback,
                Severity::Error,
                format!("uniform palette: {e}"),
            );
            return None;
        }
    };
    let stats = part.primitives.iter().map(|p| &p.partition.stats);
    let (vertices_in, vertices_out) = stats
        .clone()
        .fold((0, 0), |(i, o), s| (i + s.vertices_in, o + s.vertices_out));
    let split = UniformSplit {
        k,
        primitives: part.primitives.len(),
        submeshes: stats.clone().map(|s| s.submeshes).sum(),
        duplication_ratio: vertices_out as f64 / vertices_in.max(1) as f64,
        dropped_influences: stats.map(|s| s.dropped_influences).sum(),
    };
    out.add(
        Check::GpuReadback,
        Severity::Info,
        format!(
            "uniform palette of {k} joints: {} drawn as {}, vertices ×{:.3}, {} dropped to fit",
            count(split.primitives, "skinned primitive", "skinned primitives"),
            count(split.submeshes, "submesh", "submeshes"),
            split.duplication_ratio,
            count(split.dropped_influences, "influence", "influences")
        ),
    );
    Some(split)
}

/// GPU readback against the CPU reference over every clip's sampled frames, on the storage
/// palette and on the uniform palette at `config.uniform_bones`.
fn gpu_readback(
    scene: &Scene,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    out: &mut Vec<Finding>,
) {
    let Some(ctx) = gpu.filter(|_| !config.no_gpu) else {
        out.add(
            Check::GpuReadback,
            Severity::Info,
            "not run (CPU checks only)".into(),
        );
        return;
    };
    let anims: Vec<Option<usize>> = if scene.animations.is_empty() {
        vec![None]
    } else {
        (0..scene.animations.len()).map(Some).collect()
    };
    let storage = CompareOptions {
        frames: config.frames,
        palette: Some(PaletteSource::Storage),
        tolerance_rel: config.gpu_tolerance_rel,
        ..Default::default()
    };
    let uniform = CompareOptions {
        frames: config.frames,
        palette: Some(PaletteSource::Uniform {
            bones: config.uniform_bones as u32,
        }),
        captures: vec![CapturePath::Draw],
        tolerance_rel: config.gpu_tolerance_rel,
        ..Default::default()
    };
    for options in [storage, uniform] {
        let Some(source) = options.palette else {
            continue;
        };
        let palette = source.describe();
        if let Err(e) = crate::gpu::check_source(ctx, source) {
            out.add(
                Check::GpuReadback,
                Severity::Info,
                format!("not run on the {palette}: {e}"),
            );
            continue;
        }
        match compare(ctx, scene, &anims, &options, |_, _| {}) {
            Ok(c) if c.passed => {}
            Ok(c) => {
                let worst = c
                    .anims
                    .iter()
                    .flat_map(|a| &a.draws)
                    .map(|d| d.max_error)
                    .fold(0.0, f64::max);
                out.add(
                    Check::GpuReadback,
                    Severity::Error,
                    format!(
                        "the GPU skins differently from the CPU reference on the {palette}: \
                         {:.2e} of the diagonal, over the tolerance {:.0e} ({})",
                        c.relative(worst),
                        c.tolerance_rel,
                        c.adapter
                    ),
                );
            }
            Err(e @ Error::TooManyInfluences { .. }) => {
                out.add(
                    Check::GpuReadback,
                    Severity::Info,
                    format!("not run on the {palette}: {e}"),
                );
            }
            Err(e) => out.add(
                Check::GpuReadback,
                Severity::Error,
                format!("on the {palette}: {e}"),
            ),
        }
    }
}
