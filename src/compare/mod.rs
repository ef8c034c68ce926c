//! The comparison stage: how far one skinning is from another, per draw (largest and mean
//! position error, the worst vertex and when, largest normal error), judged against a
//! tolerance relative to the model's size, with reports that print as text ([`Display`]) or
//! serialise as JSON (the CLI's compare report). [`run`] drives a [`crate::character::Character`]
//! through the frames of each animation and compares the GPU captures with the CPU reference.
//!
//! [`Display`]: std::fmt::Display

pub mod normals;
pub mod run;

use std::fmt;

use glam::Vec3;
use serde::Serialize;

pub use crate::skin::bounds;

use crate::anim::ClipName;
use crate::gpu::CapturePath;
use crate::scene::Scene;
use crate::skin::{RunningError, SkinnedVertices, nan_as_infinite, position_error};

pub use normals::SurfaceNormalErrors;
pub use run::{
    CompareOptions, Sampling, compare, sample_frames, sample_frames_each, sample_frames_with,
};

/// CPU vs GPU readback tolerance: 1e-5 of the model's bounding-box diagonal. Both sides
/// compute in f32 on the same inputs; the differences are FMA contraction and summation order
/// (measured ~2e-7 on lavapipe, see `tests/gpu/gpu_readback.rs`).
pub const CPU_GPU_TOLERANCE_REL: f64 = 1e-5;

/// CPU vs GPU tolerance on unit normals and tangents (absolute): both normalise the same
/// inverse-transpose in f32 (measured ≤ 2e-6 on lavapipe); a wrong normal is off by far more.
pub const NORMAL_TOLERANCE: f64 = 1e-4;

/// Errors of one draw between two skinnings, accumulated over frames.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DrawErrors {
    /// Index in the scene's draw list.
    pub draw: usize,
    /// glTF node index of the draw.
    pub node_index: usize,
    /// glTF mesh index.
    pub mesh_index: usize,
    /// Primitive index in the mesh.
    pub primitive_index: usize,
    /// Vertices of the draw.
    pub vertex_count: usize,
    /// Largest position distance (model units).
    pub max_error: f64,
    /// Mean position distance over every compared vertex and frame.
    pub mean_error: f64,
    /// The vertex with the largest error.
    pub worst_vertex: usize,
    /// When it had it.
    pub worst_time_s: f32,
    /// Whether both sides had normals (the draw has them).
    pub has_normals: bool,
    /// Largest distance between normals (0 without normals), relative to their length where
    /// that is above 1 (normals that are not renormalised).
    pub max_normal_error: f64,
    /// Whether both sides had tangents (the draw has them).
    pub has_tangents: bool,
    /// Largest distance between tangents (xyz; relative to their length where that is above
    /// 1, as for normals), 2 where the handedness `w` differs (0 without tangents).
    pub max_tangent_error: f64,
    /// The position errors (worst place: vertex and time), the fields above mirror it.
    #[serde(skip)]
    acc: RunningError<(usize, f32)>,
}

impl DrawErrors {
    /// No error yet for draw `draw` of `scene`.
    pub fn new(scene: &Scene, draw: usize) -> DrawErrors {
        let d = &scene.draws[draw];
        DrawErrors {
            draw,
            node_index: scene.nodes[d.node].source_index,
            mesh_index: d.mesh,
            primitive_index: d.primitive,
            vertex_count: scene.primitive(d).vertex_count(),
            ..Default::default()
        }
    }

    /// Add one frame: `b` against `a`. A length mismatch is an infinite error (a short
    /// readback must fail, not pass over the common prefix); NaN counts as infinite.
    pub fn add(&mut self, time_s: f32, a: &SkinnedVertices, b: &SkinnedVertices) {
        if a.positions.len() != b.positions.len() {
            self.unmeasured(Some(time_s));
            return;
        }
        for (v, (x, y)) in a.positions.iter().zip(&b.positions).enumerate() {
            self.acc.add(position_error(*x, *y), (v, time_s));
        }
        self.mirror();
        if let (Some(na), Some(nb)) = (&a.normals, &b.normals) {
            self.has_normals = true;
            let worst = normal_error(na, nb);
            self.max_normal_error = self.max_normal_error.max(worst);
        }
        if let (Some(ta), Some(tb)) = (&a.tangents, &b.tangents) {
            self.has_tangents = true;
            let worst = tangent_error(ta, tb);
            self.max_tangent_error = self.max_tangent_error.max(worst);
        }
    }

    /// A frame that could not be compared (at `time_s` when known): an infinite error; the
    /// worst vertex stays the one before.
    fn unmeasured(&mut self, time_s: Option<f32>) {
        let at = (self.worst_vertex, time_s.unwrap_or(self.worst_time_s));
        self.acc.add_infinite(at);
        self.mirror();
    }

    /// The public figures from the accumulator.
    fn mirror(&mut self) {
        self.max_error = self.acc.max;
        self.mean_error = self.acc.mean();
        if let Some((v, t)) = self.acc.worst {
            (self.worst_vertex, self.worst_time_s) = (v, t);
        }
    }

    /// The larger of two error records of the same draw (worst vertex from the larger).
    pub fn worst_of(&self, other: &DrawErrors) -> DrawErrors {
        let mut w = if other.max_error > self.max_error {
            other.clone()
        } else {
            self.clone()
        };
        w.mean_error = self.mean_error.max(other.mean_error);
        w.max_normal_error = self.max_normal_error.max(other.max_normal_error);
        w.max_tangent_error = self.max_tangent_error.max(other.max_tangent_error);
        w.has_normals = self.has_normals || other.has_normals;
        w.has_tangents = self.has_tangents || other.has_tangents;
        w
    }

    /// "normals max 1.2e-7, tangents max 3.0e-7", or "no normals" (the draw has none).
    pub fn describe_directions(&self) -> String {
        let mut s = if self.has_normals {
            format!("normals max {:.2e}", self.max_normal_error)
        } else {
            "no normals".to_string()
        };
        if self.has_tangents {
            s += &format!(", tangents max {:.2e}", self.max_tangent_error);
        }
        s
    }
}

/// Largest distance between corresponding normals, relative to their length where that is
/// above 1: normals that are not renormalised keep the joints' scale (a node scaled by 100
/// gives exact normals 10⁴ long), and f32 rounds them in proportion. Tangents likewise
/// ([`tangent_error`]).
fn normal_error(a: &[Vec3], b: &[Vec3]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let (x, y) = (x.as_dvec3(), y.as_dvec3());
            nan_as_infinite((x - y).length() / x.length().max(y.length()).max(1.0))
        })
        .fold(0.0, f64::max)
}

/// Largest distance between corresponding tangents' xyz, relative to their length where that
/// is above 1 (tangents that are not renormalised keep the joints' scale), or 2 where the
/// handedness `w` differs.
fn tangent_error(a: &[glam::Vec4], b: &[glam::Vec4]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if x.w.signum() != y.w.signum() {
                2.0
            } else {
                let (x, y) = (x.truncate().as_dvec3(), y.truncate().as_dvec3());
                nan_as_infinite((x - y).length() / x.length().max(y.length()).max(1.0))
            }
        })
        .fold(0.0, f64::max)
}

/// Accumulate `[time][k]` frames of `b` against `a` for `draws` (k indexes `draws`).
pub fn errors(
    scene: &Scene,
    draws: &[usize],
    times: &[f32],
    a: &[Vec<SkinnedVertices>],
    b: &[Vec<SkinnedVertices>],
) -> Vec<DrawErrors> {
    let mut out: Vec<DrawErrors> = draws.iter().map(|&d| DrawErrors::new(scene, d)).collect();
    for (ti, &t) in times.iter().enumerate() {
        for (k, e) in out.iter_mut().enumerate() {
            match (
                a.get(ti).and_then(|f| f.get(k)),
                b.get(ti).and_then(|f| f.get(k)),
            ) {
                (Some(x), Some(y)) => e.add(t, x, y),
                _ => e.unmeasured(None),
            }
        }
    }
    out
}

/// One capture path's errors against the CPU reference.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureErrors {
    /// The GPU code read back.
    pub capture: CapturePath,
    /// Per draw.
    pub draws: Vec<DrawErrors>,
}

/// The comparison of one animation.
#[derive(Clone, Debug, Serialize)]
pub struct AnimComparison {
    /// Animation index (`None`: rest pose).
    pub anim: Option<usize>,
    /// Its name.
    pub name: Option<String>,
    /// Compared times.
    pub times: Vec<f32>,
    /// GPU against the CPU reference (same influence count), per draw: the worse of the
    /// capture paths that ran.
    pub draws: Vec<DrawErrors>,
    /// Each capture path against the CPU reference.
    pub captures: Vec<CaptureErrors>,
    /// When both paths ran: the draw capture against the capture shader.
    pub draw_vs_compute: Option<Vec<DrawErrors>>,
    /// With an influence limit: the CPU path reduced against the CPU path with every weight.
    pub reduction_cost: Option<Vec<DrawErrors>>,
    /// The CPU reference's normals against its own skinned surface, per draw with normals and
    /// triangles (the chosen normal mode's error; [`normals`]).
    pub surface_normals: Vec<SurfaceNormalErrors>,
}

/// The partition a uniform-palette comparison drew.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PaletteSplit {
    /// Bones per submesh at most.
    pub k: usize,
    /// Submesh draws.
    pub submeshes: usize,
    /// Influences dropped to fit faces into K bones (the reference skins without them too).
    pub dropped_influences: usize,
}

/// A whole comparison: every animation, the scale errors are judged against, the verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Model name.
    pub model: String,
    /// The adapter that ran the GPU side.
    pub adapter: String,
    /// Bounding-box diagonal of the skinned model (errors are judged relative to it).
    pub diagonal: f64,
    /// Largest allowed GPU−CPU position error, relative to the diagonal.
    pub tolerance_rel: f64,
    /// Largest allowed distance between unit normals.
    pub normal_tolerance: f64,
    /// The influence limit both paths were reduced to (`None`: every weight).
    pub max_influences: Option<usize>,
    /// Vertices whose weights the reduction changed, over all draws (on the uniform path:
    /// influences the partitioner's fitting dropped).
    pub vertices_reduced: usize,
    /// Where the GPU read its palette from (`storage buffer`, `uniform array of K matrices`).
    pub palette: String,
    /// How both paths skinned (`lbs`, `dqs, blend3x3 normals`, ...).
    pub skinning: String,
    /// On the uniform palette path: the split the GPU drew.
    pub split: Option<PaletteSplit>,
    /// Capture paths compared.
    pub captures: Vec<CapturePath>,
    /// Per animation.
    pub anims: Vec<AnimComparison>,
    /// Every GPU error (and the draw-vs-compute difference) within tolerance.
    pub passed: bool,
}

impl Comparison {
    /// The largest allowed error in model units.
    pub fn limit(&self) -> f64 {
        self.tolerance_rel * self.diagonal.max(f64::MIN_POSITIVE)
    }

    /// `e` as a fraction of the diagonal.
    pub fn relative(&self, e: f64) -> f64 {
        e / self.diagonal.max(f64::MIN_POSITIVE)
    }

    /// Largest GPU−CPU position error over every animation and draw.
    pub fn worst_error(&self) -> f64 {
        self.anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_error)
            .fold(0.0, f64::max)
    }

    /// Largest distance the influence reduction (or the partitioner's fitting) moves a vertex,
    /// over every animation and draw (0 when there was none).
    pub fn worst_reduction_cost(&self) -> f64 {
        self.anims
            .iter()
            .flat_map(|a| a.reduction_cost.iter().flatten())
            .map(|d| d.max_error)
            .fold(0.0, f64::max)
    }

    /// Largest tangent error over every animation and draw.
    pub fn worst_tangent_error(&self) -> f64 {
        self.anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_tangent_error)
            .fold(0.0, f64::max)
    }

    /// Largest normal error over every animation and draw.
    pub fn worst_normal_error(&self) -> f64 {
        self.anims
            .iter()
            .flat_map(|a| &a.draws)
            .map(|d| d.max_normal_error)
            .fold(0.0, f64::max)
    }

    /// The verdict from the errors and the tolerances (positions and normals).
    pub fn judge(&mut self) {
        let (limit, normal_limit) = (self.limit(), self.normal_tolerance);
        let ok = |v: &[DrawErrors]| {
            v.iter().all(|d| {
                d.max_error <= limit
                    && d.max_normal_error <= normal_limit
                    && d.max_tangent_error <= normal_limit
            })
        };
        self.passed = self
            .anims
            .iter()
            .all(|a| ok(&a.draws) && a.draw_vs_compute.as_deref().is_none_or(ok));
    }
}

/// The worst error of a comparison over every draw and frame: where it is and when.
#[derive(Clone, Debug)]
pub struct WorstError {
    /// The animation it happened in (index into the comparison's animations).
    pub anim: usize,
    /// The draw's record (position error, worst vertex and time).
    pub draw: DrawErrors,
    /// The largest normal error over every draw and frame.
    pub max_normal_error: f64,
}

impl Comparison {
    /// The largest position error over every animation, draw and frame (every capture path),
    /// and the largest normal error; `None` when nothing was compared.
    pub fn worst(&self) -> Option<WorstError> {
        let mut worst: Option<WorstError> = None;
        let mut normals: f64 = 0.0;
        for (i, an) in self.anims.iter().enumerate() {
            for d in &an.draws {
                normals = normals.max(d.max_normal_error);
                if worst
                    .as_ref()
                    .is_none_or(|w| d.max_error > w.draw.max_error)
                {
                    worst = Some(WorstError {
                        anim: i,
                        draw: d.clone(),
                        max_normal_error: 0.0,
                    });
                }
            }
        }
        worst.map(|w| WorstError {
            max_normal_error: normals,
            ..w
        })
    }
}

impl Comparison {
    /// The summary line: the worst error over every draw and frame, where and when.
    fn write_worst(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(w) = self.worst() else {
            return Ok(());
        };
        let d = &w.draw;
        writeln!(
            f,
            "worst over every draw and frame: GPU-CPU {:.3e} ({:.2e} of the diagonal) at node {} \
             mesh {} prim {} vertex {}, {} t = {:.3} s; normals max {:.2e}",
            d.max_error,
            self.relative(d.max_error),
            d.node_index,
            d.mesh_index,
            d.primitive_index,
            d.worst_vertex,
            match self.anims[w.anim].anim {
                Some(a) => format!("animation {a}"),
                None => "rest pose".into(),
            },
            d.worst_time_s,
            w.max_normal_error
        )
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.captures.iter().map(|c| c.name()).collect();
        writeln!(f, "model {}  adapter {}", self.model, self.adapter)?;
        writeln!(f, "skinning: {}", self.skinning)?;
        write!(f, "palette: {}", self.palette)?;
        match &self.split {
            Some(s) => writeln!(
                f,
                " ({} submesh draws of at most {} bones, {} influences dropped to fit)",
                s.submeshes, s.k, s.dropped_influences
            )?,
            None => writeln!(f)?,
        }
        writeln!(
            f,
            "bounding-box diagonal {:.6} model units (metres in glTF); tolerance {:.1e} of it = \
             {:.3e}; unit normals and tangents within {:.0e}; captures: {}",
            self.diagonal,
            self.tolerance_rel,
            self.limit(),
            self.normal_tolerance,
            names.join(", ")
        )?;
        self.write_worst(f)?;
        for an in &self.anims {
            let what = an.anim.map_or("rest pose".into(), |i| {
                ClipName::new(i, an.name.as_deref()).indexed()
            });
            writeln!(f, "{what}: {} frames", an.times.len())?;
            for c in &an.captures {
                for d in &c.draws {
                    writeln!(
                        f,
                        "  {:<7} node {} mesh {} prim {} ({} verts): GPU-CPU max {:.3e} ({:.2e} of \
                         the diagonal) mean {:.3e}, worst vertex {} at t = {:.3} s; {}",
                        c.capture.name(),
                        d.node_index,
                        d.mesh_index,
                        d.primitive_index,
                        d.vertex_count,
                        d.max_error,
                        self.relative(d.max_error),
                        d.mean_error,
                        d.worst_vertex,
                        d.worst_time_s,
                        d.describe_directions()
                    )?;
                }
            }
            for d in an.draw_vs_compute.iter().flatten() {
                if d.max_error == 0.0 && d.max_normal_error == 0.0 && d.max_tangent_error == 0.0 {
                    writeln!(
                        f,
                        "  draw vs capture shader, node {} mesh {} prim {}: identical",
                        d.node_index, d.mesh_index, d.primitive_index
                    )?;
                    continue;
                }
                writeln!(
                    f,
                    "  draw vs capture shader, node {} mesh {} prim {}: max {:.3e} ({:.2e} of the \
                     diagonal), worst vertex {}; {}",
                    d.node_index,
                    d.mesh_index,
                    d.primitive_index,
                    d.max_error,
                    self.relative(d.max_error),
                    d.worst_vertex,
                    d.describe_directions()
                )?;
            }
            for n in &an.surface_normals {
                let at = an.draws.iter().find(|d| d.draw == n.draw).map_or_else(
                    || format!("draw {}", n.draw),
                    |d| {
                        format!(
                            "node {} mesh {} prim {}",
                            d.node_index, d.mesh_index, d.primitive_index
                        )
                    },
                );
                writeln!(
                    f,
                    "  {at}: CPU normals against the skinned triangles' own normals (how good the \
                     normal mode is; not part of the verdict): mean {:.2} deg, max {:.1} deg (at \
                     bind: mean {:.2} deg, max {:.1} deg)",
                    n.mean_deg, n.max_deg, n.bind_mean_deg, n.bind_max_deg
                )?;
            }
            let what = match (self.max_influences, &self.split) {
                (Some(k), _) => format!("reducing to {k} influences"),
                (None, Some(s)) => format!("fitting faces into {} bones", s.k),
                (None, None) => "reducing".into(),
            };
            for d in an.reduction_cost.iter().flatten() {
                writeln!(
                    f,
                    "  node {} mesh {} prim {}: {what} costs max {:.3e} \
                     ({:.2e} of the diagonal) mean {:.3e} (worst vertex {})",
                    d.node_index,
                    d.mesh_index,
                    d.primitive_index,
                    d.max_error,
                    self.relative(d.max_error),
                    d.mean_error,
                    d.worst_vertex
                )?;
            }
        }
        if let (None, Some(s)) = (self.max_influences, &self.split)
            && s.dropped_influences > 0
        {
            let worst = self.worst_reduction_cost();
            writeln!(
                f,
                "fitted into {} bones: {} influences dropped; that moves vertices by up to \
                 {worst:.3e} ({:.2e} of the diagonal), outside the GPU comparison",
                s.k,
                s.dropped_influences,
                self.relative(worst)
            )?;
        }
        if let Some(k) = self.max_influences {
            let worst = self.worst_reduction_cost();
            writeln!(
                f,
                "reduced to {k} influences: {} vertices lost weight; over the model the reduction \
                 moves vertices by up to {worst:.3e} ({:.2e} of the diagonal)",
                self.vertices_reduced,
                self.relative(worst)
            )?;
        }
        write!(
            f,
            "{}",
            if self.passed {
                "PASS"
            } else {
                "FAIL: GPU differs from the CPU reference above tolerance"
            }
        )
    }
}
