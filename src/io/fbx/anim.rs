//! Animation stacks as clips: each stack baked by ufbx (linear keys kept at their times,
//! other curves sampled at the file's frame rate), its node tracks and blend-channel weights
//! as LINEAR channels, cut to the stack's take range and moved to start at 0 s
//! ([`TakeRange`]).

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
        let range = TakeRange::of(stack);
        let mut channels = node_channels(&baked, node_index, nodes, range);
        channels.extend(weight_channels(&baked, morphs, range, file, &label)?);
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

/// The part of the file's timeline a stack's take plays, in the file's seconds: its
/// `LocalStart`…`LocalStop` (`ReferenceStart`…`ReferenceStop` without them; a FBX 6 take's
/// `LocalTime`), as ufbx reads them. Several takes often share one timeline, each its own
/// range of it: a clip is the keys inside its range, moved so the take starts at 0 s, with a
/// key at each end holding the value there (Unity's importer and three.js's
/// `AnimationUtils.subclip` cut takes so). A stack with no usable range (none, or an empty
/// or reversed one) keeps every key at the file's times.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TakeRange {
    begin_s: f64,
    end_s: f64,
}

impl TakeRange {
    /// `stack`'s range, when it has a usable one.
    fn of(stack: &ufbx::AnimStack) -> Option<TakeRange> {
        let (begin_s, end_s) = (stack.time_begin, stack.time_end);
        (begin_s.is_finite() && end_s.is_finite() && begin_s < end_s)
            .then_some(TakeRange { begin_s, end_s })
    }

    /// `keys` (in time order) cut to the range and moved to start at 0, a key at each end
    /// valued as `mix` interpolates between the keys around it (held past the first and last).
    fn cut<T: Copy>(self, keys: &[(f64, T)], mix: impl Fn(T, T, f32) -> T) -> Vec<(f64, T)> {
        let at = |t: f64| {
            let after = keys.partition_point(|k| k.0 <= t);
            match (
                after.checked_sub(1).and_then(|i| keys.get(i)),
                keys.get(after),
            ) {
                (Some(a), Some(b)) if b.0 > a.0 => {
                    Some(mix(a.1, b.1, ((t - a.0) / (b.0 - a.0)) as f32))
                }
                (Some(a), _) => Some(a.1),
                (None, Some(b)) => Some(b.1),
                (None, None) => None,
            }
        };
        let inside = keys
            .iter()
            .filter(|k| k.0 > self.begin_s && k.0 < self.end_s)
            .map(|&(t, v)| (t - self.begin_s, v));
        let first = at(self.begin_s).map(|v| (0.0, v));
        let last = at(self.end_s).map(|v| (self.end_s - self.begin_s, v));
        first.into_iter().chain(inside).chain(last).collect()
    }

    /// Key times (in order) cut to the range, with its ends, still in the file's seconds.
    fn cut_times(self, times: &[f64]) -> Vec<f64> {
        let inside = times
            .iter()
            .copied()
            .filter(|&t| t > self.begin_s && t < self.end_s);
        std::iter::once(self.begin_s)
            .chain(inside)
            .chain(std::iter::once(self.end_s))
            .collect()
    }
}

/// Linear interpolation of the first three components (translation, scale).
fn lerp4(a: [f32; 4], b: [f32; 4], u: f32) -> [f32; 4] {
    std::array::from_fn(|i| a[i] + (b[i] - a[i]) * u)
}

/// Spherical interpolation of two rotations (x, y, z, w), as a LINEAR rotation track plays.
fn slerp4(a: [f32; 4], b: [f32; 4], u: f32) -> [f32; 4] {
    glam::Quat::from_array(a)
        .slerp(glam::Quat::from_array(b), u)
        .to_array()
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

/// Translation, rotation and scale channels of the baked nodes, cut to `range` (a constant
/// track equal to the node's rest value is left out).
fn node_channels(
    baked: &ufbx::BakedAnim,
    node_index: &[Option<usize>],
    nodes: &[Node],
    range: Option<TakeRange>,
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
        let (t, r, s) = match range {
            Some(range) => (
                range.cut(&t, lerp4),
                range.cut(&r, slerp4),
                range.cut(&s, lerp4),
            ),
            None => (t, r, s),
        };
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
    range: Option<TakeRange>,
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
        if let Some(range) = range {
            times = range.cut_times(&times);
        }
        let begin_s = range.map_or(0.0, |r| r.begin_s);
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
            keys_times.push(key_time(keys_times.last().copied(), t - begin_s));
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
