//! A model of the lossy steps gltfpack's default settings take on animation and skin
//! weights, written from its source (meshoptimizer 1.x, `gltf/animation.cpp`,
//! `gltf/stream.cpp`, `gltf/node.cpp`), so a test can tell what gltfpack changes from what
//! skinview's reader makes of it:
//!
//! - every clip resampled at 30 Hz from its first key (`frames = 1 + ⌊(last − first)·30 +
//!   0.8⌋`), LINEAR quaternions with zeux's approximating slerp ("Approximating slerp",
//!   2015) as gltfpack does it, vectors lerped, STEP held;
//! - a resampled track whose values stay within 0.1 mm (over the parent's world scale),
//!   0.1° or 0.1 % of its first key made constant, and dropped when that constant is the
//!   node's rest value in every clip;
//! - rotations stored as 16-bit snorm;
//! - 4 skin weights normalised, stored as 8-bit unorm, the largest one taking the rounding
//!   remainder.
//!
//! What it leaves out is vertex position quantisation (bounded by [`position_bound`]) and
//! f32 evaluation order.

use skinview::Scene;
use skinview::anim::{Channel, Interpolation, Path, Sampler};
use skinview::frame::FrameState;

/// gltfpack's default resampling rate (`-af 30`).
const FREQUENCY_HZ: i32 = 30;

/// gltfpack's default position bits (`-vp 14`).
pub const POSITION_BITS: u32 = 14;

/// `scene`, read from the glTF file `path`, with gltfpack's default animation resampling,
/// track collapsing, rotation quantisation and weight quantisation applied (see the module
/// documentation).
pub fn apply_lossy_steps(scene: &Scene, path: &std::path::Path) -> Scene {
    let mut out = scene.clone();
    restore_raw_rotation_keys(&mut out, path);
    let rest_world = {
        let mut rest = FrameState::new(scene);
        rest.evaluate(scene, None, 0.0).expect("rest pose");
        rest.model_from_node
    };
    // First pass: resample and classify every track (gltfpack's `processAnimation`).
    let tracks: Vec<Vec<Track>> = out
        .animations
        .iter()
        .map(|clip| resample_clip(scene, &rest_world, &clip.channels))
        .collect();
    // A node's path is written in every clip when any clip moves it off its rest value
    // (`markAnimated`: `animated_path_mask` over all clips).
    let moved: Vec<(usize, Path)> = tracks
        .iter()
        .flatten()
        .filter(|t| !t.dummy)
        .map(|t| (t.node, t.path))
        .collect();
    for (clip, tracks) in out.animations.iter_mut().zip(tracks) {
        clip.channels = tracks
            .into_iter()
            .filter(|t| moved.contains(&(t.node, t.path)))
            .map(Track::into_channel)
            .collect();
    }
    out.animations.retain(|clip| !clip.channels.is_empty());
    for mesh in &mut out.meshes {
        for primitive in &mut mesh.primitives {
            if let Some(skin) = &mut primitive.skin_weights {
                assert_eq!(skin.width, 4, "gltfpack's model covers 4 influences");
                for w in skin.weights.chunks_exact_mut(4) {
                    quantise_weights(w);
                }
            }
        }
    }
    out
}

/// Rotation keys as the file writes them (skinview's reader normalises them), matched by
/// clip, source node and key count.
fn restore_raw_rotation_keys(scene: &mut Scene, path: &std::path::Path) {
    let (document, buffers, _) = gltf::import(path).expect("the source reads with gltf");
    assert_eq!(
        document.animations().count(),
        scene.animations.len(),
        "clips"
    );
    for (clip, animation) in scene.animations.iter_mut().zip(document.animations()) {
        for channel in animation.channels() {
            let reader = channel.reader(|b| Some(&buffers[b.index()]));
            let Some(gltf::animation::util::ReadOutputs::Rotations(rotations)) =
                reader.read_outputs()
            else {
                continue;
            };
            let raw: Vec<f32> = rotations.into_f32().flatten().collect();
            let target = channel.target().node().index();
            let ours = clip.channels.iter_mut().find(|c| {
                c.path == Path::Rotation
                    && scene_source(&scene.nodes, c.node) == target
                    && c.sampler.values.len() == raw.len()
            });
            if let Some(ours) = ours {
                ours.sampler.values = raw;
            }
        }
    }
}

fn scene_source(nodes: &[skinview::scene::Node], node: usize) -> usize {
    nodes[node].source_index
}

/// One resampled track of a clip.
struct Track {
    node: usize,
    path: Path,
    interpolation: Interpolation,
    components: usize,
    times_s: Vec<f32>,
    values: Vec<[f32; 4]>,
    /// Written as its first key only.
    constant: bool,
    /// Constant and equal to the node's rest value: not written unless another clip moves it.
    dummy: bool,
}

impl Track {
    fn into_channel(self) -> Channel {
        let width = self.components * element_floats(self.path);
        let keys = if self.constant { 1 } else { self.times_s.len() };
        let mut values = Vec::with_capacity(keys * width);
        for element in self.values.iter().take(keys * self.components) {
            let element = if self.path == Path::Rotation {
                element.map(snorm16)
            } else {
                *element
            };
            values.extend_from_slice(&element[..element_floats(self.path)]);
        }
        Channel {
            node: self.node,
            path: self.path,
            sampler: Sampler {
                interpolation: self.interpolation,
                times_s: self.times_s[..keys].to_vec(),
                values,
                components: width,
                is_rotation: self.path == Path::Rotation,
            },
        }
    }
}

/// Floats in one element of a path (gltfpack's `Attr` holds 4, weights use one per target).
fn element_floats(path: Path) -> usize {
    match path {
        Path::Translation | Path::Scale => 3,
        Path::Rotation => 4,
        Path::Weights => 1,
    }
}

/// A quaternion component as gltfpack writes it (`meshopt_quantizeSnorm(v, 16)`) and a
/// reader decodes it (`c / 32767`).
fn snorm16(v: f32) -> f32 {
    let scale = 32767.0f32;
    let round = if v >= 0.0 { 0.5 } else { -0.5 };
    ((v.clamp(-1.0, 1.0) * scale + round) as i32) as f32 / scale
}

/// Four weights as gltfpack's `writeVertexStream` stores them, read back as `q / 255`.
fn quantise_weights(w: &mut [f32]) {
    let sum = w[0] + w[1] + w[2] + w[3];
    let inverse = if sum == 0.0 { 0.0 } else { 1.0 / sum };
    let mut q = [0i32; 4];
    for (q, w) in q.iter_mut().zip(w.iter()) {
        *q = ((w * inverse).clamp(0.0, 1.0) * 255.0 + 0.5) as i32;
    }
    if inverse != 0.0 {
        let total: i32 = q.iter().sum();
        let mut largest = 0;
        for k in 1..4 {
            if q[k] > q[largest] {
                largest = k;
            }
        }
        q[largest] += 255 - total;
    }
    for (w, q) in w.iter_mut().zip(q) {
        *w = q as f32 / 255.0;
    }
}

/// Every channel of a clip resampled on the clip's 30 Hz grid and classified.
fn resample_clip(scene: &Scene, rest_world: &[glam::Mat4], channels: &[Channel]) -> Vec<Track> {
    let first = channels
        .iter()
        .map(|c| c.sampler.times_s[0])
        .fold(f32::MAX, f32::min);
    let last = channels
        .iter()
        .map(|c| *c.sampler.times_s.last().expect("a key"))
        .fold(0.0, f32::max);
    let start = first.min(last);
    let frames = 1 + ((last - start) * FREQUENCY_HZ as f32 + 0.8) as i32;
    let period = 1.0 / FREQUENCY_HZ as f32;
    let times_s: Vec<f32> = (0..frames).map(|j| start + j as f32 * period).collect();
    channels
        .iter()
        .map(|channel| {
            let s = &channel.sampler;
            let components = s.components / element_floats(channel.path);
            let mut values = Vec::with_capacity(frames as usize * components);
            for i in 0..frames {
                let time_s = start + i as f32 / FREQUENCY_HZ as f32;
                values.extend(sample(s, channel.path, components, time_s));
            }
            let tolerance = tolerance(scene, rest_world, channel);
            let deviation = max_delta(&values, channel.path, &values[..components]);
            let constant = deviation <= tolerance;
            let rest = rest_value(scene, channel.node, channel.path, components);
            let dummy =
                constant && max_delta(&values[..components], channel.path, &rest) <= tolerance;
            Track {
                node: channel.node,
                path: channel.path,
                interpolation: match s.interpolation {
                    Interpolation::CubicSpline => Interpolation::Linear,
                    other => other,
                },
                components,
                times_s: times_s.clone(),
                values,
                constant,
                dummy,
            }
        })
        .collect()
}

/// gltfpack's `resampleKeyframes` at one time: the key interval found by a forward search,
/// the blend factor clamped to [0, 1], past the last key the last value.
fn sample(s: &Sampler, path: Path, components: usize, time_s: f32) -> Vec<[f32; 4]> {
    let n = element_floats(path);
    let element = |key: usize, j: usize| {
        let base = (key * components + j) * n;
        let mut a = [0.0f32; 4];
        a[..n].copy_from_slice(&s.values[base..base + n]);
        a
    };
    let keys = &s.times_s;
    let mut cursor = 0;
    while cursor + 1 < keys.len() && keys[cursor + 1] <= time_s {
        cursor += 1;
    }
    assert!(
        s.interpolation != Interpolation::CubicSpline,
        "gltfpack's model covers LINEAR and STEP tracks"
    );
    if cursor + 1 >= keys.len() {
        return (0..components).map(|j| element(cursor, j)).collect();
    }
    let range = keys[cursor + 1] - keys[cursor];
    let inverse = if range == 0.0 { 0.0 } else { 1.0 / range };
    let t = ((time_s - keys[cursor]) * inverse).clamp(0.0, 1.0);
    (0..components)
        .map(|j| match s.interpolation {
            Interpolation::Step => element(cursor, j),
            _ => interpolate_linear(element(cursor, j), element(cursor + 1, j), t, path),
        })
        .collect()
}

/// gltfpack's `interpolateLinear`: zeux's approximating slerp for rotations, lerp otherwise.
fn interpolate_linear(l: [f32; 4], r: [f32; 4], t: f32, path: Path) -> [f32; 4] {
    if path != Path::Rotation {
        return std::array::from_fn(|k| l[k] * (1.0 - t) + r[k] * t);
    }
    let ca = l[0] * r[0] + l[1] * r[1] + l[2] * r[2] + l[3] * r[3];
    let d = ca.abs();
    let a = 1.0904 + d * (-3.2452 + d * (3.55645 - d * 1.43519));
    let b = 0.848013 + d * (-1.06021 + d * 0.215638);
    let k = a * (t - 0.5) * (t - 0.5) + b;
    let ot = t + t * (t - 0.5) * (t - 1.0) * k;
    let t0 = 1.0 - ot;
    let t1 = if ca > 0.0 { ot } else { -ot };
    let mut q: [f32; 4] = std::array::from_fn(|c| l[c] * t0 + r[c] * t1);
    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if len > 0.0 {
        q = q.map(|c| c / len);
    }
    q
}

/// gltfpack's `getDelta` between two elements.
fn delta(l: &[f32; 4], r: &[f32; 4], path: Path) -> f32 {
    let relative = |l: f32, r: f32| {
        let m = l.abs().max(r.abs());
        if m == 0.0 { 0.0 } else { (l - r).abs() / m }
    };
    match path {
        Path::Translation => (0..3).map(|k| (l[k] - r[k]).abs()).fold(0.0, f32::max),
        Path::Rotation => {
            let dot = l[0] * r[0] + l[1] * r[1] + l[2] * r[2] + l[3] * r[3];
            2.0 * dot.abs().min(1.0).acos()
        }
        Path::Scale => (0..3).map(|k| relative(l[k], r[k])).fold(0.0, f32::max),
        Path::Weights => (l[0] - r[0]).abs(),
    }
}

/// gltfpack's `getMaxDelta`: the largest delta of any element from `value`'s.
fn max_delta(values: &[[f32; 4]], path: Path, value: &[[f32; 4]]) -> f32 {
    values
        .chunks_exact(value.len())
        .flat_map(|key| key.iter().zip(value).map(|(a, b)| delta(b, a, path)))
        .fold(0.0, f32::max)
}

/// gltfpack's `getDeltaTolerance`, translations over the parent's world scale.
fn tolerance(scene: &Scene, rest_world: &[glam::Mat4], channel: &Channel) -> f32 {
    match channel.path {
        Path::Translation => {
            let base = 0.0001; // gltfpack: "0.1mm linear"
            match scene.nodes[channel.node].parent {
                Some(parent) => {
                    let scale = rest_world[parent].determinant().abs().powf(1.0 / 3.0);
                    if scale == 0.0 { base } else { base / scale }
                }
                None => base,
            }
        }
        // gltfpack: "0.1 degrees", with its literal (one f32 step below π).
        #[allow(clippy::approx_constant)]
        Path::Rotation => 0.1 * (3.1415926 / 180.0),
        Path::Scale => 0.001,   // gltfpack: "0.1% ratio"
        Path::Weights => 0.001, // gltfpack: "0.1% linear"
    }
}

/// The node's rest value of a path, gltfpack's `getBaseTransform`.
fn rest_value(scene: &Scene, node: usize, path: Path, components: usize) -> Vec<[f32; 4]> {
    let n = &scene.nodes[node];
    match path {
        Path::Translation => vec![n.rest.translation.extend(0.0).to_array()],
        Path::Rotation => vec![n.rest.rotation.to_array()],
        Path::Scale => vec![n.rest.scale.extend(0.0).to_array()],
        Path::Weights => {
            let weights = n.morph_weights.clone().or_else(|| {
                n.mesh
                    .map(|m| scene.meshes[m].default_morph_weights.clone())
            });
            let weights = weights.unwrap_or_else(|| vec![0.0; components]);
            weights.into_iter().map(|w| [w, 0.0, 0.0, 0.0]).collect()
        }
    }
}

/// The largest skinned-vertex offset 14-bit positions can make: positions quantised over
/// the mesh's largest bind-space extent E move a vertex by at most √3/2 · E / (2^N − 1),
/// times the largest linear norm of a skinning matrix (its Frobenius norm bounds it), taken
/// over the rest pose and every key of every clip.
pub fn position_bound(scene: &Scene, bits: u32) -> f64 {
    let mut frame = FrameState::new(scene);
    let mut extent = 0.0f64;
    for draw in &scene.draws {
        let p = scene.primitive(draw);
        let (lo, hi) = p.positions.iter().fold(
            (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
            |(lo, hi), q| (lo.min(*q), hi.max(*q)),
        );
        extent = extent.max((hi - lo).max_element() as f64);
    }
    let mut poses: Vec<(Option<usize>, f32)> = vec![(None, 0.0)];
    for (a, clip) in scene.animations.iter().enumerate() {
        for channel in &clip.channels {
            poses.extend(channel.sampler.times_s.iter().map(|&t| (Some(a), t)));
        }
    }
    let mut scale = 0.0f64;
    for (anim, time_s) in poses {
        frame.evaluate(scene, anim, time_s).expect("evaluate");
        for d in 0..scene.draws.len() {
            for m in frame.draw_palette(scene, d) {
                let linear = glam::Mat3::from_mat4(*m);
                let frobenius = (linear.x_axis.length_squared()
                    + linear.y_axis.length_squared()
                    + linear.z_axis.length_squared())
                .sqrt() as f64;
                scale = scale.max(frobenius);
            }
        }
    }
    3f64.sqrt() / 2.0 * extent / ((1u64 << bits) - 1) as f64 * scale
}
