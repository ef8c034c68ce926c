//! Animation stacks as clips: node tracks exact where the curves allow (`curves`), else
//! sampled to the tolerance from ufbx's evaluation (`resample`), on the knots of ufbx's bake
//! (the curves' keys and the sides of each step); blend-channel weights baked by ufbx at the
//! file's frame rate (LINEAR); every channel cut to the stack's take range and moved to start
//! at 0 s ([`TakeRange`]).

use super::mesh::MorphLinks;
use super::resample::{self, Base};
use super::track::{self, Property, TOLERANCE_REL, Target, Track};
use super::{MAX_MORPH_VALUES, MAX_SEGMENTS_PER_KEY, allocator, curves, element_label, ufbx_error};
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
    let diagonal = track::rest_diagonal(fbx);
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
        let tracks = NodeTracks {
            fbx,
            stack,
            label: &label,
            node_index,
            nodes,
            range,
            diagonal,
        };
        let mut channels = tracks.channels(&baked, report);
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

/// What the node tracks of one stack are made from.
struct NodeTracks<'a> {
    fbx: &'a ufbx::Scene,
    stack: &'a ufbx::AnimStack,
    label: &'a str,
    node_index: &'a [Option<usize>],
    nodes: &'a [Node],
    range: Option<TakeRange>,
    /// The model's rest diagonal ([`track::rest_diagonal`]).
    diagonal: f64,
}

impl NodeTracks<'_> {
    /// Translation, rotation and scale channels of the baked nodes, within `range`: exact
    /// (`curves`) where the curves allow, else sampled to the tolerance (`resample`), each
    /// stopped short by the cap reported; a constant track equal to the node's rest value
    /// is left out.
    fn channels(&self, baked: &ufbx::BakedAnim, report: &mut Report) -> Vec<Channel> {
        let mut channels = Vec::new();
        for b in baked.nodes.iter() {
            let (Some(node), Some(fbx_node)) = (
                self.node_index.get(b.typed_id as usize).copied().flatten(),
                self.fbx.nodes.get(b.typed_id as usize),
            ) else {
                continue;
            };
            let target = Target {
                anim: &self.stack.anim,
                node: fbx_node,
                translation_tolerance: TOLERANCE_REL * self.diagonal
                    / track::parent_scale(fbx_node),
            };
            let rest = self.nodes[node].rest;
            let flags = |k: &[(f64, ufbx::BakedKeyFlags)]| self.base(k);
            let t: Vec<_> = b
                .translation_keys
                .iter()
                .map(|k| (k.time, k.flags))
                .collect();
            let r: Vec<_> = b.rotation_keys.iter().map(|k| (k.time, k.flags)).collect();
            let s: Vec<_> = b.scale_keys.iter().map(|k| (k.time, k.flags)).collect();
            let rest_t = vec4(rest.translation.to_array());
            let rest_s = vec4(rest.scale.to_array());
            let rest_r = rest.rotation.to_array();
            let rest_r_flipped = (-rest.rotation).to_array();
            for (property, base, constant, rests) in [
                (
                    Property::Translation,
                    flags(&t),
                    b.constant_translation,
                    vec![rest_t],
                ),
                (
                    Property::Rotation,
                    flags(&r),
                    b.constant_rotation,
                    vec![rest_r, rest_r_flipped],
                ),
                (Property::Scale, flags(&s), b.constant_scale, vec![rest_s]),
            ] {
                if base.is_empty() {
                    continue;
                }
                let track = self.track(&target, property, &base, report);
                let at_rest = |value: [f32; 4]| {
                    track.knots.iter().all(|k| {
                        k.value
                            .iter()
                            .zip(value)
                            .all(|(a, b)| (*a as f32 - b).abs() <= 1e-6)
                    })
                };
                if constant && rests.iter().any(|&v| at_rest(v)) {
                    continue;
                }
                let begin = self.range.map_or(0.0, |r| r.begin_s);
                channels.push(channel(node, property, &track, begin));
            }
        }
        channels
    }

    /// `property`'s track: exact when [`curves::exact`] allows, else sampled, reporting a
    /// track the cap left outside the tolerance.
    fn track(
        &self,
        target: &Target,
        property: Property,
        base: &[Base],
        report: &mut Report,
    ) -> Track {
        let range = self.range.map(|r| (r.begin_s, r.end_s));
        if let Some(track) = curves::exact(target, property, range) {
            return track;
        }
        let sampled = resample::sample(target, property, base);
        if sampled.worst > 1.0 {
            report.repair(
                self.label,
                format!(
                    "Model \"{}\": {} sampled to within {:.1e} of the model's diagonal, not \
                     {TOLERANCE_REL:.0e} ({MAX_SEGMENTS_PER_KEY} segments per key, the most made)",
                    target.node.element.name.as_ref() as &str,
                    property.name(),
                    sampled.worst * TOLERANCE_REL,
                ),
            );
        }
        sampled.track
    }

    /// The bake's keys of a property (time, flags) as knot times: the curves' keys and the
    /// sides of each step (not the frame-rate samples), the first and last, cut to the range.
    fn base(&self, keys: &[(f64, ufbx::BakedKeyFlags)]) -> Vec<Base> {
        use ufbx::BakedKeyFlags as F;
        let kept = F::KEYFRAME | F::STEP_LEFT | F::STEP_RIGHT | F::STEP_KEY;
        let last = keys.len().saturating_sub(1);
        let mut picked: Vec<(f64, ufbx::BakedKeyFlags)> = keys
            .iter()
            .enumerate()
            .filter(|&(i, k)| i == 0 || i == last || k.1.has_any(kept))
            .map(|(_, &k)| k)
            .collect();
        if let Some(range) = self.range
            && !picked.is_empty()
        {
            picked.retain(|k| k.0 > range.begin_s && k.0 < range.end_s);
            picked.insert(0, (range.begin_s, F::NONE));
            picked.push((range.end_s, F::NONE));
        }
        (0..picked.len())
            .map(|i| Base {
                time: picked[i].0,
                step_after: picked[i].1.has_any(F::STEP_LEFT)
                    || picked
                        .get(i + 1)
                        .is_some_and(|n| n.1.has_any(F::STEP_RIGHT)),
            })
            .collect()
    }
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

/// The channel of `track` (LINEAR or CUBICSPLINE), its times moved back by `begin_s`.
fn channel(node: usize, property: Property, track: &Track, begin_s: f64) -> Channel {
    let components = property.components();
    let per_key = if track.cubic { 3 } else { 1 };
    let mut times_s: Vec<f32> = Vec::with_capacity(track.knots.len());
    let mut values: Vec<f32> = Vec::with_capacity(track.knots.len() * components * per_key);
    for k in &track.knots {
        times_s.push(key_time(times_s.last().copied(), k.time - begin_s));
        let parts = if track.cubic {
            vec![k.in_tangent, k.value, k.out_tangent]
        } else {
            vec![k.value]
        };
        for p in parts {
            values.extend(p[..components].iter().map(|&x| x as f32));
        }
    }
    let path = match property {
        Property::Translation => Path::Translation,
        Property::Rotation => Path::Rotation,
        Property::Scale => Path::Scale,
    };
    Channel {
        node,
        path,
        sampler: Sampler {
            interpolation: if track.cubic {
                Interpolation::CubicSpline
            } else {
                Interpolation::Linear
            },
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
