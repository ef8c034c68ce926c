//! A source clip written as a target clip: key for key where the retarget is a fixed turn of
//! each key, sampled where it is not.
//!
//! Based on: the retargeting of [`super::job`], and the observation (Shoemake, "Animating
//! Rotation with Quaternion Curves", 1985) that slerp and normalised quaternion splines commute
//! with a fixed rotation on either side: `slerp(A q₀ B, A q₁ B, u) = A slerp(q₀, q₁, u) B`.
//!
//! Method: a target bone t driven by source bone s turns its local rotation by constant
//! quaternions, `local_t = A · local_s · B`, when its parent is driven by s's parent (then
//! `A = ref_t(parent)⁻¹ · ref_s(parent)`, `B = ref_s⁻¹ · ref_t`), or when both parents stand
//! still through the clip (no channel on any ancestor on either side; `A` is their model
//! rotations'). Then the target channel is the source channel with every key (and cubic
//! tangent) turned: same times, same interpolation, the same curve exactly. Translations follow
//! the same way (an affine map of each key; the hips only with root motion kept). Every other
//! channel is sampled through [`super::RetargetJob`] at the clip's key times, and at
//! [`BAKE_RATE_HZ`] between keys further apart, and written LINEAR.
//! Cost: per transferred channel, O(keys); per sampled clip, one source evaluation and one
//! retarget per sample. Limits: [`MAX_SAMPLES`] samples a clip.

use glam::{Mat4, Quat, Vec3};

use super::job::RetargetSetup;
use super::player::RetargetPlayer;
use crate::anim::{Animation, Channel, Interpolation, Path, Sampler};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;

/// Samples a second where a clip's keys are further apart than this, for channels that are
/// sampled: the frame rate clips are most often authored at.
pub const BAKE_RATE_HZ: f32 = 30.0;

/// Most samples one clip may be sampled at (about 9 hours at 30 Hz): checked before any work.
pub const MAX_SAMPLES: usize = 1 << 20;

/// What [`retarget_clip`] made.
#[derive(Clone, Debug)]
pub struct RetargetedClip {
    /// The target's clip.
    pub animation: Animation,
    /// Channels carried key for key.
    pub transferred: usize,
    /// Channels sampled.
    pub sampled: usize,
    /// Times the clip was sampled at (0 when nothing was sampled).
    pub samples: usize,
}

/// `source`'s clip `clip` as a clip of `target` named `name` (see the module documentation).
pub fn retarget_clip(
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    clip: usize,
    name: String,
) -> Result<RetargetedClip> {
    let anim = source
        .animations
        .get(clip)
        .ok_or_else(|| source.unknown_animation(&clip.to_string()))?;
    let animated = animated_nodes(source, anim);
    let rest_source = rest_model(source)?;
    let rest_target = rest_model(target)?;
    let mut channels = Vec::new();
    let mut to_sample: Vec<(usize, Path)> = Vec::new();
    let hips = setup.hips.map(|h| h.0);
    // Legs turned by the foot lock are sampled (their IK is per frame).
    let locked = match setup.options.foot_lock {
        true => super::foot_lock::locked_nodes(target, setup),
        false => Vec::new(),
    };
    for (t, s) in setup.map.pairs() {
        let still = still_parents(source, target, setup, (t, s), &animated);
        let parent_turn = parent_turn(setup, target, (t, s), still, (&rest_source, &rest_target));
        let source_channel = |path| anim.channels.iter().find(|c| c.node == s && c.path == path);
        match parent_turn.filter(|_| !locked.contains(&t)) {
            Some(a) => {
                let b = setup.turn(Some(t), Some(s));
                let rest = source.nodes[s].rest.rotation;
                let sampler = turned_rotations(source_channel(Path::Rotation), rest, a, b);
                channels.push(Channel {
                    node: t,
                    path: Path::Rotation,
                    sampler,
                });
            }
            None => to_sample.push((t, Path::Rotation)),
        }
        let translation = if Some(t) == hips {
            match (still && setup.options.root_motion, &setup.hips) {
                (true, Some(_)) => Some(hips_map(
                    source,
                    target,
                    setup,
                    (t, s),
                    (&rest_source, &rest_target),
                )),
                _ => None,
            }
            .map_or_else(
                || {
                    to_sample.push((t, Path::Translation));
                    None
                },
                Some,
            )
        } else if setup.options.translations {
            let (pt, ps) = (target.nodes[t].parent, source.nodes[s].parent);
            let turn = setup.turn(pt, ps).inverse();
            let (ratio, base, off) = (
                setup.height_ratio,
                setup.target_ref_local[t],
                setup.source_ref_local[s],
            );
            Some(Affine {
                point: Box::new(move |x| base + ratio * (turn * (x - off))),
                vector: Box::new(move |v| ratio * (turn * v)),
            })
        } else {
            None
        };
        if let Some(f) = translation {
            let rest = source.nodes[s].rest.translation;
            let sampler = mapped_translations(source_channel(Path::Translation), rest, &f);
            channels.push(Channel {
                node: t,
                path: Path::Translation,
                sampler,
            });
        }
    }
    let transferred = channels.len();
    let mut samples = 0;
    if !to_sample.is_empty() {
        let times = sample_times(anim)?;
        samples = times.len();
        channels.extend(sampled_channels(
            source, target, setup, clip, &times, &to_sample,
        )?);
    }
    let sampled = channels.len() - transferred;
    // Target order, rotation before translation: a stable file.
    channels.sort_by_key(|c| (c.node, c.path == Path::Translation));
    Ok(RetargetedClip {
        animation: Animation {
            name: Some(name),
            channels,
        },
        transferred,
        sampled,
        samples,
    })
}

/// An affine map of translations: of points (key values) and of vectors (cubic tangents).
struct Affine {
    point: Box<dyn Fn(Vec3) -> Vec3>,
    vector: Box<dyn Fn(Vec3) -> Vec3>,
}

/// Per node of `source`, whether `anim` has a channel on it or on an ancestor.
fn animated_nodes(source: &Scene, anim: &Animation) -> Vec<bool> {
    let mut own = vec![false; source.nodes.len()];
    for c in &anim.channels {
        if c.path != Path::Weights
            && let Some(x) = own.get_mut(c.node)
        {
            *x = true;
        }
    }
    let mut moved = own.clone();
    for (i, n) in source.nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            moved[i] |= moved[p];
        }
    }
    moved
}

/// Model matrices of `scene`'s rest pose.
fn rest_model(scene: &Scene) -> Result<Vec<Mat4>> {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, None, 0.0)?;
    Ok(frame.model_from_node)
}

/// Whether the parents of target `t` and source `s` both stand still through the clip: no
/// channel on any source ancestor of `s`, and no mapped target ancestor of `t`.
fn still_parents(
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    (t, s): (usize, usize),
    animated: &[bool],
) -> bool {
    let source_still = source.nodes[s].parent.is_none_or(|p| !animated[p]);
    let mut at = target.nodes[t].parent;
    while let Some(p) = at {
        if setup.map.source_of[p].is_some() {
            return false;
        }
        at = target.nodes[p].parent;
    }
    source_still
}

/// The fixed turn `A` on the parent side of `local_t = A · local_s · B`, when there is one.
fn parent_turn(
    setup: &RetargetSetup,
    target: &Scene,
    (t, s): (usize, usize),
    still: bool,
    (rest_source, rest_target): (&[Mat4], &[Mat4]),
) -> Option<Quat> {
    let rot = super::job::rotation;
    let pt = target.nodes[t].parent;
    let ps =
        |scene_parent: Option<usize>| scene_parent.map_or(Quat::IDENTITY, |p| rot(&rest_source[p]));
    if still {
        let source_parent = setup.source_parent(s);
        let target_parent = pt.map_or(Quat::IDENTITY, |p| rot(&rest_target[p]));
        return Some(target_parent.inverse() * ps(source_parent));
    }
    let pt = pt?;
    let mapped = setup.map.source_of[pt]?;
    (setup.source_parent(s) == Some(mapped)).then(|| setup.turn(Some(pt), Some(mapped)).inverse())
}

/// The hips' translation map with both parents still: the source's local place to the
/// target's, through model space and the height ratio.
fn hips_map(
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    (t, s): (usize, usize),
    (rest_source, rest_target): (&[Mat4], &[Mat4]),
) -> Affine {
    let gs = source.nodes[s]
        .parent
        .map_or(Mat4::IDENTITY, |p| rest_source[p]);
    let gt_inv = target.nodes[t]
        .parent
        .map_or(Mat4::IDENTITY, |p| rest_target[p])
        .inverse();
    let (ratio, (ref_t, ref_s)) = (setup.height_ratio, setup.hips_ref);
    Affine {
        point: Box::new(move |x| {
            gt_inv.transform_point3(ref_t + ratio * (gs.transform_point3(x) - ref_s))
        }),
        vector: Box::new(move |v| gt_inv.transform_vector3(ratio * gs.transform_vector3(v))),
    }
}

/// `sampler` with each key value through `value` and each cubic tangent through `tangent`
/// (`components` floats an element).
fn map_keys(
    sampler: &Sampler,
    value: impl Fn(&[f32]) -> Vec<f32>,
    tangent: impl Fn(&[f32]) -> Vec<f32>,
) -> Sampler {
    let cubic = sampler.interpolation == Interpolation::CubicSpline;
    let values = sampler
        .values
        .chunks_exact(sampler.components.max(1))
        .enumerate()
        // Cubic keys are in-tangent, value, out-tangent.
        .flat_map(|(k, v)| match cubic && k % 3 != 1 {
            true => tangent(v),
            false => value(v),
        })
        .collect();
    Sampler {
        values,
        ..sampler.clone()
    }
}

/// A rotation channel's keys turned to `a · q · b` (one key of `rest` when there is none):
/// key values made unit length again (the turn's rounding taken out), tangents as turned.
fn turned_rotations(channel: Option<&Channel>, rest: Quat, a: Quat, b: Quat) -> Sampler {
    let turn = |v: &[f32]| a * Quat::from_xyzw(v[0], v[1], v[2], v[3]) * b;
    let unit = |v: &[f32]| turn(v).normalize().to_array().to_vec();
    match channel {
        Some(c) => map_keys(&c.sampler, unit, |v| turn(v).to_array().to_vec()),
        None => constant(&unit(&rest.to_array()), true),
    }
}

/// A translation channel's keys through `f` (tangents through its linear part; one key of
/// `rest` when there is none).
fn mapped_translations(channel: Option<&Channel>, rest: Vec3, f: &Affine) -> Sampler {
    let point = |v: &[f32]| (f.point)(Vec3::from_slice(v)).to_array().to_vec();
    let vector = |v: &[f32]| (f.vector)(Vec3::from_slice(v)).to_array().to_vec();
    match channel {
        Some(c) => map_keys(&c.sampler, point, vector),
        None => constant(&point(&rest.to_array()), false),
    }
}

/// One key at time 0.
fn constant(value: &[f32], is_rotation: bool) -> Sampler {
    Sampler {
        interpolation: Interpolation::Linear,
        times_s: vec![0.0],
        values: value.to_vec(),
        components: value.len(),
        is_rotation,
    }
}

/// The clip's key times, with samples at [`BAKE_RATE_HZ`] where keys are further apart.
fn sample_times(anim: &Animation) -> Result<Vec<f32>> {
    let duration = anim.duration_s();
    let keys: usize = anim.channels.iter().map(|c| c.sampler.times_s.len()).sum();
    let fill = (duration * BAKE_RATE_HZ).ceil() as usize + 1;
    if keys.saturating_add(fill) > MAX_SAMPLES || !duration.is_finite() {
        return Err(Error::invalid(
            anim.name.as_deref().unwrap_or("(clip)"),
            "animation",
            format!(
                "{keys} keys over {duration} s would take more than {MAX_SAMPLES} samples to \
                 retarget"
            ),
        ));
    }
    let mut times: Vec<f32> = anim
        .channels
        .iter()
        .flat_map(|c| c.sampler.times_s.iter().copied())
        .chain(std::iter::once(0.0))
        .filter(|t| t.is_finite() && *t >= 0.0)
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let step = 1.0 / BAKE_RATE_HZ;
    let mut out = Vec::with_capacity(times.len() + fill);
    for w in times.windows(2) {
        out.push(w[0]);
        let gaps = ((w[1] - w[0]) / step).ceil() as usize;
        out.extend((1..gaps).map(|k| w[0] + (w[1] - w[0]) * k as f32 / gaps as f32));
    }
    out.extend(times.last());
    Ok(out)
}

/// The channels `wanted` sampled through the per-frame job at `times`, LINEAR.
fn sampled_channels(
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    clip: usize,
    times: &[f32],
    wanted: &[(usize, Path)],
) -> Result<Vec<Channel>> {
    let mut player = RetargetPlayer::new(source, target, setup, clip)?;
    let mut values: Vec<Vec<f32>> = wanted
        .iter()
        .map(|_| Vec::with_capacity(times.len() * 4))
        .collect();
    for &time_s in times {
        player.play(time_s)?;
        let pose = &player.pose;
        for ((node, path), out) in wanted.iter().zip(&mut values) {
            let local = &pose.locals[*node];
            match path {
                Path::Rotation => {
                    // Each key on the previous key's side, so LINEAR takes the short way.
                    let mut q = local.rotation;
                    if let [.., x, y, z, w] = out.as_slice()
                        && Quat::from_xyzw(*x, *y, *z, *w).dot(q) < 0.0
                    {
                        q = -q;
                    }
                    out.extend(q.to_array());
                }
                _ => out.extend(local.translation.to_array()),
            }
        }
    }
    Ok(wanted
        .iter()
        .zip(values)
        .map(|(&(node, path), values)| Channel {
            node,
            path,
            sampler: Sampler {
                interpolation: Interpolation::Linear,
                times_s: times.to_vec(),
                components: if path == Path::Rotation { 4 } else { 3 },
                is_rotation: path == Path::Rotation,
                values,
            },
        })
        .collect())
}
