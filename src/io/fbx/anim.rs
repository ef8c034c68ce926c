//! Animation stacks as clips: each stack baked by ufbx (linear keys kept at their times,
//! other curves sampled at the file's frame rate), its node tracks and blend-channel weights
//! as LINEAR channels.

use super::mesh::MorphLinks;
use super::{
    MAX_MORPH_VALUES, MAX_SEGMENTS_PER_KEY, allocator, element_label, quat, ufbx_error, vec3,
};
use crate::anim::{Animation, Channel, Interpolation, Path, Sampler};
use crate::error::{Error, Result};
use crate::scene::{Node, Report};

/// Frame rate used when the file's is missing or unusable (ufbx's own default).
const FALLBACK_FPS: f64 = 30.0;

/// Every stack of `fbx` as a clip.
pub(super) fn clips(
    fbx: &ufbx::Scene,
    node_index: &[Option<usize>],
    morphs: &[MorphLinks],
    nodes: &[Node],
    file: &str,
    report: &mut Report,
) -> Result<Vec<Animation>> {
    let fps = fbx.settings.frames_per_second;
    let fps = if fps.is_finite() && (1.0..=1000.0).contains(&fps) {
        fps
    } else {
        FALLBACK_FPS
    };
    let mut clips = Vec::with_capacity(fbx.anim_stacks.len());
    for stack in fbx.anim_stacks.iter() {
        let label = element_label("AnimationStack", &stack.element);
        let opts = ufbx::BakeOpts {
            temp_allocator: allocator(),
            result_allocator: allocator(),
            resample_rate: fps,
            max_keyframe_segments: MAX_SEGMENTS_PER_KEY,
            ..Default::default()
        };
        let baked =
            ufbx::bake_anim(fbx, &stack.anim, opts).map_err(|e| ufbx_error(file, &label, &e))?;
        check_keys(fbx, &baked, file, &label)?;
        let mut channels = node_channels(&baked, node_index, nodes);
        channels.extend(weight_channels(&baked, morphs, file, &label)?);
        if channels.is_empty() {
            report.warn(&label, "animates nothing skinview draws: an empty clip");
        }
        clips.push(Animation {
            name: Some(stack.element.name.to_string()).filter(|n| !n.is_empty()),
            channels,
        });
    }
    Ok(clips)
}

/// Refuse a baked track with a NaN or infinite key, naming the node and time.
fn check_keys(fbx: &ufbx::Scene, baked: &ufbx::BakedAnim, file: &str, label: &str) -> Result<()> {
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    for b in baked.nodes.iter() {
        let bad = b
            .translation_keys
            .iter()
            .chain(b.scale_keys.iter())
            .find(|k| !finite(&[k.time, k.value.x, k.value.y, k.value.z]))
            .map(|k| k.time)
            .or_else(|| {
                b.rotation_keys
                    .iter()
                    .find(|k| !finite(&[k.time, k.value.x, k.value.y, k.value.z, k.value.w]))
                    .map(|k| k.time)
            });
        if let Some(time_s) = bad {
            let node = fbx
                .nodes
                .get(b.typed_id as usize)
                .map_or("?".to_string(), |n| n.element.name.to_string());
            return Err(Error::invalid(
                file,
                label,
                format!(
                    "Model \"{node}\" has a key at {time_s} s that is not finite (NaN or infinite)"
                ),
            ));
        }
    }
    Ok(())
}

/// Translation, rotation and scale channels of the baked nodes (a constant track equal to
/// the node's rest value is left out).
fn node_channels(
    baked: &ufbx::BakedAnim,
    node_index: &[Option<usize>],
    nodes: &[Node],
) -> Vec<Channel> {
    let mut channels = Vec::new();
    for b in baked.nodes.iter() {
        let Some(node) = node_index.get(b.typed_id as usize).copied().flatten() else {
            continue;
        };
        let rest = nodes[node].rest;
        let t: Vec<(f64, [f32; 4])> = b
            .translation_keys
            .iter()
            .map(|k| (k.time, vec4(vec3(k.value).to_array())))
            .collect();
        let r: Vec<(f64, [f32; 4])> = b
            .rotation_keys
            .iter()
            .map(|k| (k.time, quat(k.value).normalize().to_array()))
            .collect();
        let s: Vec<(f64, [f32; 4])> = b
            .scale_keys
            .iter()
            .map(|k| (k.time, vec4(vec3(k.value).to_array())))
            .collect();
        let at_rest = |keys: &[(f64, [f32; 4])], value: [f32; 4]| {
            keys.iter()
                .all(|(_, v)| v.iter().zip(value).all(|(a, b)| (a - b).abs() <= 1e-6))
        };
        let rest_t = vec4(rest.translation.to_array());
        let rest_s = vec4(rest.scale.to_array());
        let rest_r = rest.rotation.to_array();
        let rest_r_flipped = (-rest.rotation).to_array();
        if !(b.constant_translation && at_rest(&t, rest_t)) {
            channels.push(channel(node, Path::Translation, &t, 3));
        }
        if !(b.constant_rotation && (at_rest(&r, rest_r) || at_rest(&r, rest_r_flipped))) {
            channels.push(channel(node, Path::Rotation, &r, 4));
        }
        if !(b.constant_scale && at_rest(&s, rest_s)) {
            channels.push(channel(node, Path::Scale, &s, 3));
        }
    }
    channels
}

fn vec4(v: [f32; 3]) -> [f32; 4] {
    [v[0], v[1], v[2], 0.0]
}

/// A key's time in f32 after `last`: `t`, or the next f32 after `last` when `t` rounds onto
/// it (keys closer than an f32 step, such as the two sides of a baked step late in a long
/// clip), so both keys are kept in order.
fn key_time(last: Option<f32>, t: f64) -> f32 {
    let t = t as f32;
    match last {
        Some(last) if t <= last => last.next_up(),
        _ => t,
    }
}

/// A LINEAR channel from keys (seconds, value).
fn channel(node: usize, path: Path, keys: &[(f64, [f32; 4])], components: usize) -> Channel {
    let mut times_s: Vec<f32> = Vec::with_capacity(keys.len());
    let mut values: Vec<f32> = Vec::with_capacity(keys.len() * components);
    for (t, v) in keys {
        times_s.push(key_time(times_s.last().copied(), *t));
        values.extend_from_slice(&v[..components]);
    }
    Channel {
        node,
        path,
        sampler: Sampler {
            interpolation: Interpolation::Linear,
            times_s,
            values,
            components,
            is_rotation: path == Path::Rotation,
        },
    }
}

/// Morph weights channels: for each mesh with an animated blend channel, one channel per node
/// that draws it, keyed at every time any of its channels has a key.
fn weight_channels(
    baked: &ufbx::BakedAnim,
    morphs: &[MorphLinks],
    file: &str,
    label: &str,
) -> Result<Vec<Channel>> {
    let mut channels = Vec::new();
    for m in morphs {
        let tracks: Vec<Option<&[ufbx::BakedVec3]>> = m
            .channels
            .iter()
            .map(|&id| {
                // ufbx lists baked elements by element id.
                baked
                    .elements
                    .binary_search_by_key(&id, |e| e.element_id)
                    .ok()
                    .and_then(|i| baked.elements.get(i))
                    .and_then(|e| {
                        e.props
                            .iter()
                            .find(|p| p.name.as_ref() as &str == "DeformPercent")
                    })
                    .map(|p| p.keys.as_ref())
            })
            .collect();
        if tracks.iter().all(Option::is_none) {
            continue;
        }
        let mut times: Vec<f64> = tracks
            .iter()
            .flatten()
            .flat_map(|k| k.iter().map(|k| k.time))
            .collect();
        times.sort_by(f64::total_cmp);
        times.dedup();
        let n = m.channels.len();
        let values_made = (times.len() as u64)
            .saturating_mul(n as u64)
            .saturating_mul(m.nodes.len().max(1) as u64);
        if values_made > MAX_MORPH_VALUES {
            return Err(Error::invalid(
                file,
                label,
                format!(
                    "{n} animated blend channels over {} key times: more than the \
                     {MAX_MORPH_VALUES} morph weights an import holds",
                    times.len()
                ),
            ));
        }
        let mut keys_times: Vec<f32> = Vec::with_capacity(times.len());
        let mut values: Vec<f32> = Vec::with_capacity(times.len() * n);
        for &t in &times {
            keys_times.push(key_time(keys_times.last().copied(), t));
            for (k, track) in tracks.iter().enumerate() {
                values.push(match track {
                    Some(keys) => (sample(keys, t) / 100.0) as f32,
                    None => m.default_weights.get(k).copied().unwrap_or(0.0),
                });
            }
        }
        for &node in &m.nodes {
            channels.push(Channel {
                node,
                path: Path::Weights,
                sampler: Sampler {
                    interpolation: Interpolation::Linear,
                    times_s: keys_times.clone(),
                    values: values.clone(),
                    components: n,
                    is_rotation: false,
                },
            });
        }
    }
    Ok(channels)
}

/// A baked track's x at `t` (linear between keys, held past the ends).
fn sample(keys: &[ufbx::BakedVec3], t: f64) -> f64 {
    let after = keys.partition_point(|k| k.time <= t);
    match (
        after.checked_sub(1).and_then(|i| keys.get(i)),
        keys.get(after),
    ) {
        (Some(a), Some(b)) if b.time > a.time => {
            let u = (t - a.time) / (b.time - a.time);
            a.value.x + (b.value.x - a.value.x) * u
        }
        (Some(a), _) => a.value.x,
        (None, Some(b)) => b.value.x,
        (None, None) => 0.0,
    }
}
