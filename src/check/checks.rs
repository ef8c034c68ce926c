//! The checks `check_model` runs on an imported scene, one function each (see the module
//! documentation of `check` for the list).

use glam::{DMat3, Vec3};

use super::{Check, CheckConfig, ClipBounds, Finding, ModelResult, Severity};
use crate::compare::{CompareOptions, compare};
use crate::error::{Error, Result};
use crate::frame::{FrameState, skin_pose};
use crate::gpu::GpuContext;
use crate::scene::Scene;
use crate::skin::SkinnedVertices;

/// A share of the diagonal in words (`3.2 %`).
fn percent(rel: f64) -> String {
    format!("{:.2} %", rel * 100.0)
}

/// A clip's name in words.
fn clip_name(scene: &Scene, a: usize) -> String {
    match scene.animations.get(a).and_then(|c| c.name.as_deref()) {
        Some(n) if !n.is_empty() => format!("\"{n}\""),
        _ => format!("animation {a}"),
    }
}

/// Every check on `scene`, into `result` (the GPU readback on `gpu` unless skipped).
pub(super) fn run(
    scene: &Scene,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    result: &mut ModelResult,
) {
    let mut add = |check: Check, severity: Severity, message: String| {
        result.findings.push(Finding {
            check,
            severity,
            message,
        })
    };
    imports(scene, &mut add);
    let outcome = (|| -> Result<()> {
        let rest = skin_pose(scene, None, 0.0, None)?;
        let (lo, hi) = bounds(&rest);
        let diagonal = f64::from((hi - lo).length()).max(f64::MIN_POSITIVE);
        result.rest_bounds = Some((lo.to_array(), hi.to_array()));
        influences(scene, config, diagonal, &mut add)?;
        unused_joints(scene, &mut add);
        inverse_binds(scene, config, &mut add);
        bind_rest_pose(scene, config, diagonal, &mut add)?;
        joint_scale(scene, &mut add);
        result.clip_bounds = clip_bounds(scene, config, (lo, hi), diagonal, &mut add)?;
        gpu_readback(scene, config, gpu, &mut add);
        Ok(())
    })();
    if let Err(e) = outcome {
        result.findings.push(Finding {
            check: Check::Import,
            severity: Severity::Error,
            message: format!("imports, but cannot be skinned: {e}"),
        });
    }
    result.checks_run = Check::ALL.to_vec();
}

/// The bounds of every finite skinned vertex.
fn bounds(out: &[SkinnedVertices]) -> (Vec3, Vec3) {
    let mut lo = Vec3::splat(f32::MAX);
    let mut hi = Vec3::splat(f32::MIN);
    for p in out
        .iter()
        .flat_map(|o| &o.positions)
        .filter(|p| p.is_finite())
    {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    if lo.x > hi.x {
        return (Vec3::ZERO, Vec3::ZERO);
    }
    (lo, hi)
}

/// The importer's repairs (warnings) and warnings (info).
fn imports(scene: &Scene, add: &mut impl FnMut(Check, Severity, String)) {
    for n in &scene.report.notes {
        let severity = if n.repaired {
            Severity::Warning
        } else {
            Severity::Info
        };
        let kind = if n.repaired { "repaired" } else { "warning" };
        add(
            Check::Import,
            severity,
            format!("{kind}: {}: {}", n.field, n.message),
        );
    }
}

/// Vertices with more influences than `config.max_influences`, and the largest distance
/// dropping the extra ones moves a vertex over every clip's sampled frames.
fn influences(
    scene: &Scene,
    config: &CheckConfig,
    diagonal: f64,
    add: &mut impl FnMut(Check, Severity, String),
) -> Result<()> {
    let max = config.max_influences;
    let (mut over, mut most) = (0usize, 0usize);
    for d in scene.deformed_draws() {
        let Some(w) = &scene.primitive(d).skin_weights else {
            continue;
        };
        for v in w.weights.chunks_exact(w.width.max(1)) {
            let used = v.iter().filter(|&&x| x != 0.0).count();
            over += usize::from(used > max);
            most = most.max(used);
        }
    }
    if over == 0 {
        return Ok(());
    }
    let (mut cost, mut at) = (0f64, String::new());
    for (anim, t) in sample_times(scene, config) {
        let full = skin_pose(scene, anim, t, None)?;
        let reduced = skin_pose(scene, anim, t, Some(max))?;
        let worst = full
            .iter()
            .zip(&reduced)
            .flat_map(|(a, b)| a.positions.iter().zip(&b.positions))
            .map(|(p, q)| f64::from((*p - *q).length()))
            .fold(0.0, f64::max);
        if worst > cost {
            cost = worst;
            at = anim.map_or("the rest pose".into(), |a| {
                format!("{} at {t:.3} s", clip_name(scene, a))
            });
        }
    }
    let rel = cost / diagonal;
    let severity = if rel > config.influence_cost_rel {
        Severity::Warning
    } else {
        Severity::Info
    };
    add(
        Check::Influences,
        severity,
        format!(
            "{over} vertices have more than {max} influences (up to {most}); keeping the \
             heaviest {max} moves a vertex by up to {} of the model's size ({at})",
            percent(rel)
        ),
    );
    Ok(())
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
fn unused_joints(scene: &Scene, add: &mut impl FnMut(Check, Severity, String)) {
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
            add(
                Check::UnusedJoints,
                Severity::Info,
                format!(
                    "{} of skin {s}'s {} joints influence no vertex: {}",
                    unused.len(),
                    used.len(),
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
fn inverse_binds(
    scene: &Scene,
    config: &CheckConfig,
    add: &mut impl FnMut(Check, Severity, String),
) {
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
        add(
            Check::Invertible,
            Severity::Error,
            format!(
                "the inverse bind matrix of {} cannot be inverted (a zero scale): {}",
                plural(singular.len(), "joint"),
                list(&singular)
            ),
        );
    }
    if !ill.is_empty() {
        add(
            Check::Invertible,
            Severity::Warning,
            format!(
                "the inverse bind matrix of {} is ill-conditioned (condition number up to \
                 {worst_condition:.1e}, over {:.0e}: f32 skinning loses precision): {}",
                plural(ill.len(), "joint"),
                config.max_condition,
                list(&ill)
            ),
        );
    }
    if !mirrored.is_empty() {
        add(
            Check::Mirrored,
            Severity::Warning,
            format!(
                "the inverse bind matrix of {} mirrors (negative determinant): the skin turns \
                 inside out unless the joint's transform mirrors too: {}",
                plural(mirrored.len(), "joint"),
                list(&mirrored)
            ),
        );
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Joints whose bind matrix does not match the hierarchy's rest pose: at rest each joint's
/// skinning matrix M_j (rest world × inverse bind) should be what every joint of the draw
/// shares (the element-wise median M̄: the mesh's own bind transform, or a quantisation
/// folded into every inverse bind); |M_j p − M̄ p| over the vertices j moves, worst joint
/// named.
fn bind_rest_pose(
    scene: &Scene,
    config: &CheckConfig,
    diagonal: f64,
    add: &mut impl FnMut(Check, Severity, String),
) -> Result<()> {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, None, 0.0)?;
    let mut moved: Vec<(f64, String)> = Vec::new();
    for (di, d) in scene.draws.iter().enumerate() {
        let (Some(skin), Some(w)) = (d.skin, &scene.primitive(d).skin_weights) else {
            continue;
        };
        let palette = frame.draw_palette(scene, di);
        let Some(shared) = crate::math::elementwise_median(palette) else {
            continue;
        };
        let mut worst = vec![0f64; palette.len()];
        for (v, p) in scene.primitive(d).positions.iter().enumerate() {
            let slots = v * w.width..(v + 1) * w.width;
            for (j, x) in w.joints[slots.clone()].iter().zip(&w.weights[slots]) {
                let Some(m) = palette.get(*j as usize).filter(|_| *x != 0.0) else {
                    continue;
                };
                let e = f64::from((m.transform_point3(*p) - shared.transform_point3(*p)).length());
                worst[*j as usize] = worst[*j as usize].max(e);
            }
        }
        for (j, e) in worst.into_iter().enumerate() {
            if e / diagonal > config.bind_rest_rel {
                moved.push((e / diagonal, scene.node_label(scene.skins[skin].joints[j])));
            }
        }
    }
    moved.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((rel, name)) = moved.first() {
        let names: Vec<String> = moved.iter().map(|m| m.1.clone()).collect();
        add(
            Check::BindRestPose,
            Severity::Warning,
            format!(
                "bind pose ≠ rest pose: the bind matrices of {} disagree with the rest \
                 hierarchy (worst {name}: its vertices would move {} of the model's size in \
                 the rest pose): {}",
                plural(moved.len(), "joint"),
                percent(*rel),
                list(&names)
            ),
        );
    }
    Ok(())
}

/// Joints with a non-uniform rest scale (normals then need the inverse-transpose path).
fn joint_scale(scene: &Scene, add: &mut impl FnMut(Check, Severity, String)) {
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
        add(
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

/// Each clip's skinned bounds over its sampled frames, and a warning for each that leaves
/// the rest bounds by more than the margin.
fn clip_bounds(
    scene: &Scene,
    config: &CheckConfig,
    (lo, hi): (Vec3, Vec3),
    diagonal: f64,
    add: &mut impl FnMut(Check, Severity, String),
) -> Result<Vec<ClipBounds>> {
    let mut out = Vec::new();
    for a in 0..scene.animations.len() {
        let (mut clo, mut chi) = (lo, hi);
        let (mut worst, mut at) = (0f32, 0f32);
        for t in crate::compare::run::frame_times(scene, Some(a), config.frames) {
            let (flo, fhi) = bounds(&skin_pose(scene, Some(a), t, None)?);
            let past = (lo - flo).max(fhi - hi).max_element();
            if past > worst {
                (worst, at) = (past, t);
            }
            clo = clo.min(flo);
            chi = chi.max(fhi);
        }
        let rel = f64::from(worst) / diagonal;
        if rel > config.bounds_margin_rel {
            add(
                Check::ClipBounds,
                Severity::Warning,
                format!(
                    "clip {} leaves the rest bounds by {} of the model's size (at {at:.3} s): \
                     culled with the rest bounds it disappears early; use the clip's bounds",
                    clip_name(scene, a),
                    percent(rel)
                ),
            );
        }
        out.push(ClipBounds {
            clip: clip_name(scene, a).trim_matches('"').to_string(),
            min: clo.to_array(),
            max: chi.to_array(),
        });
    }
    Ok(out)
}

/// GPU readback against the CPU reference over every clip's sampled frames.
fn gpu_readback(
    scene: &Scene,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    add: &mut impl FnMut(Check, Severity, String),
) {
    let Some(ctx) = gpu.filter(|_| !config.no_gpu) else {
        add(
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
    let options = CompareOptions {
        frames: config.frames,
        ..Default::default()
    };
    match compare(ctx, scene, &anims, &options, |_, _| {}) {
        Ok(c) if c.passed => {}
        Ok(c) => {
            let worst = c
                .anims
                .iter()
                .flat_map(|a| &a.draws)
                .map(|d| d.max_error)
                .fold(0.0, f64::max);
            add(
                Check::GpuReadback,
                Severity::Error,
                format!(
                    "the GPU skins differently from the CPU reference: {:.2e} of the \
                     diagonal, over the tolerance {:.0e} ({})",
                    c.relative(worst),
                    c.tolerance_rel,
                    c.adapter
                ),
            );
        }
        Err(e @ Error::TooManyInfluences { .. }) => {
            add(Check::GpuReadback, Severity::Info, format!("not run: {e}"));
        }
        Err(e) => add(Check::GpuReadback, Severity::Error, e.to_string()),
    }
}
