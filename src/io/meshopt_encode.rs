//! `EXT_meshopt_compression` written (`optimize`'s compression): a GLB's vertex, animation and
//! index views stored compressed by meshoptimizer's codecs, as gltfpack `-c` writes them.
//!
//! Based on: the extension's specification (Khronos glTF repository,
//! `extensions/2.0/Vendor/EXT_meshopt_compression`, by Arseny Kapoulkine) and meshoptimizer's
//! encoders (`meshopt_encodeVertexBuffer` at version 0, which the EXT extension names;
//! `meshopt_encodeIndexBuffer`), through the `meshopt` crate.
//!
//! Method: each view whose elements are one size (every accessor in it of that element size,
//! packed, or the view's byte stride) is compressed: `ATTRIBUTES` for elements of 4 to 40
//! bytes in multiples of 4, 48 or 64 (a MAT4 of floats), `TRIANGLES` for the 16- and 32-bit index lists of triangle
//! primitives. The compressed bytes go in buffer 0 (the GLB's BIN chunk) beside the views
//! left as they were (images, sparse parts, 1- and 2-byte elements); a second buffer without
//! data, marked `fallback`, takes the views' plain layout, which the decoder rebuilds. The
//! extension is used and required (the fallback buffer has no bytes to read without it). A
//! view is kept plain when compressing it would not save bytes.
//! The triangles and vertices are put in the codecs' order first (`gltf_reorder`).
//! Cost: one encode per view (meshoptimizer encodes at hundreds of MB/s).
//! Normals and tangents stored as normalised bytes (`optimize`'s mesh quantisation) go
//! through the octahedral filter at 8 bits (meshoptimizer's `meshopt_encodeFilterOct`): their
//! directions move by up to about a degree, which moves no vertex.
//! Rotation keys stored as normalised shorts go through the quaternion filter
//! (`meshopt_encodeFilterQuat`) at the fewest bits, 4 to 16, that give every key back bit for
//! bit; `optimize` rounds them to such keys beforehand ([`quaternion_filter_round`]), within
//! its tolerance, so the filter itself loses nothing. A view with a key no bit count gives
//! back is stored unfiltered.
//! Translation and scale keys (floats) go through the exponent filter
//! (`meshopt_encodeFilterExp`, one exponent a key) at the fewest mantissa bits, 1 to 24, that
//! give every key back bit for bit, as `optimize` rounds them ([`exponent_filter_round`]).
//! Limits: everything but normals and tangents is given back as written, so compression adds
//! nothing to `optimize`'s error.

use std::collections::BTreeMap;

use gltf::json;
use json::validation::{Checked, USize64};
use serde_json::json as value;

use crate::error::{Error, Result};

/// The extension's name (version 0 of the vertex codec).
const EXTENSION: &str = "EXT_meshopt_compression";

pub use super::gltf_repack::CompressStats;

/// How one view is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Vertex or animation elements of this many bytes.
    Attributes(usize),
    /// Normals or tangents as normalised bytes (4 a vertex: xyz and the tangent's sign),
    /// through the octahedral filter.
    Octahedral,
    /// Rotation keys as normalised shorts (8 bytes a key), through the quaternion filter
    /// where it gives them back.
    Quaternion,
    /// Translation or scale keys as floats (12 bytes a key), through the exponent filter where
    /// it gives them back.
    Exponential,
    /// A triangle list's indices of this many bytes each.
    Triangles(usize),
}

/// Quaternion filter bits tried, fewest first: the filter takes 4 to 16.
const QUATERNION_BITS: std::ops::RangeInclusive<i32> = 4..=16;

/// Exponent filter mantissa bits tried, fewest first: the filter takes 1 to 24.
const EXPONENT_BITS: std::ops::RangeInclusive<i32> = 1..=24;

/// Encode-and-decode rounds after the first that a key may take to settle on a filter's
/// values.
const SETTLE_ROUNDS: usize = 3;

/// xyz keys (3 values each) rounded in place to what a reader gets back from them stored
/// through the exponent filter with `bits` bits of mantissa (2 to 24; with 1, a key grows on
/// each round trip) and one exponent a key,
/// as gltfpack stores translations and scales: each the fixed point of encoding and decoding,
/// as [`quaternion_filter_round`]. Each component moves by at most 2^(1 − bits) times the
/// key's largest component, or 3 times that when the largest rounds up to a power of two and
/// the key settles one exponent higher.
pub fn exponent_filter_round(bits: i32, values: &mut [f32]) {
    use meshopt::encoding::EncodeExpMode;
    let bits = bits.clamp(2, *EXPONENT_BITS.end());
    // On float bits, so that a key settles when its bits do.
    let round_trip = |v: [u32; 3]| -> [u32; 3] {
        let v = v.map(f32::from_bits);
        let mut codes =
            meshopt::encoding::encode_filter_exp(&[v], bits, EncodeExpMode::SharedVector);
        meshopt::decode_filter_exp(&mut codes);
        codes[0]
    };
    for key in values.chunks_exact_mut(3) {
        if !key.iter().all(|v| v.is_finite()) {
            continue;
        }
        let v = settle(
            round_trip([key[0], key[1], key[2]].map(f32::to_bits)),
            round_trip,
        );
        key.copy_from_slice(&v.map(f32::from_bits));
    }
}

/// `key` (a filter's output) through the filter's encode-and-decode `round_trip` again until
/// a round changes nothing (at most [`SETTLE_ROUNDS`] rounds; a key still moving keeps its
/// last values).
fn settle<K: PartialEq + Copy>(mut key: K, round_trip: impl Fn(K) -> K) -> K {
    for _ in 0..SETTLE_ROUNDS {
        let again = round_trip(key);
        if again == key {
            break;
        }
        key = again;
    }
    key
}

/// Unit quaternions (xyzw, 4 values each) rounded in place to what a reader gets back from
/// them stored through the quaternion filter at `bits` bits (4 to 16): 16-bit codes' values,
/// each the fixed point of encoding and decoding (so the writer's filter gives them back bit
/// for bit; a key still moving after a few rounds keeps its last codes, and its view is then
/// stored unfiltered). The turn moves by up to about 1.4 / (2^(bits−1) − 1) rad (the three
/// smallest components on a grid of 1/√2 over 2^(bits−1) − 1 steps), plus the 16-bit codes'
/// rounding.
pub fn quaternion_filter_round(bits: i32, values: &mut [f32]) {
    let bits = bits.clamp(*QUATERNION_BITS.start(), *QUATERNION_BITS.end());
    let value = crate::anim::snorm::snorm16_value;
    let round_trip = |q: [f32; 4]| -> [i16; 4] {
        let mut codes = meshopt::encoding::encode_filter_quat(&[q], bits);
        meshopt::decode_filter_quat(&mut codes);
        codes[0]
    };
    for key in values.chunks_exact_mut(4) {
        let first = round_trip([key[0], key[1], key[2], key[3]]);
        let codes = settle(first, |c: [i16; 4]| round_trip(c.map(value)));
        for (v, c) in key.iter_mut().zip(codes) {
            *v = value(c);
        }
    }
}

/// Compress the views of `root` whose bytes lie in `bin` (buffer 0): returns the new buffer 0
/// bytes; `root` gets the fallback buffer, the views' extension objects and the extension in
/// `extensionsUsed` and `extensionsRequired`. `file` names the model in errors.
pub fn compress(root: &mut json::Root, bin: &[u8], file: &str) -> Result<(Vec<u8>, CompressStats)> {
    let mut split = bin.to_vec();
    split_key_views(root, &mut split);
    let bin = &split[..];
    let octahedral = octahedral_views(root);
    let quaternions = key_views(root, KeyView::Rotations);
    let vectors = key_views(root, KeyView::Vectors);
    let modes: Vec<Option<Mode>> = (view_modes(root).into_iter().enumerate())
        .map(|(v, m)| match m {
            Some(Mode::Attributes(4)) if octahedral[v] => Some(Mode::Octahedral),
            Some(Mode::Attributes(8)) if quaternions[v] => Some(Mode::Quaternion),
            Some(Mode::Attributes(12)) if vectors[v] => Some(Mode::Exponential),
            m => m,
        })
        .collect();
    let mut out = Vec::with_capacity(bin.len() / 2);
    let mut fallback_len = 0u64;
    let mut stats = CompressStats::default();
    for (vi, view) in root.buffer_views.iter_mut().enumerate() {
        let start = view.byte_offset.map_or(0, |o| o.0) as usize;
        let len = view.byte_length.0 as usize;
        let data = bin.get(start..start + len).ok_or_else(|| {
            Error::invalid(file, format!("bufferViews[{vi}]"), "outside the BIN chunk")
        })?;
        let encoded = match modes[vi] {
            Some(mode) => encode(data, mode).map_err(|e| {
                Error::invalid(file, format!("bufferViews[{vi}]"), format!("meshopt: {e}"))
            })?,
            None => None,
        };
        out.resize(out.len().div_ceil(4) * 4, 0);
        let Some((bytes, stride, count, mode, filter)) = encoded.filter(|e| e.0.len() < len) else {
            view.byte_offset = (!out.is_empty()).then_some(USize64(out.len() as u64));
            out.extend_from_slice(data);
            continue;
        };
        stats.views += 1;
        stats.bytes_before += len as u64;
        stats.bytes_after += bytes.len() as u64;
        let mut others = view.extensions.take().map(|e| e.others).unwrap_or_default();
        let mut ext = value!({
            "buffer": 0,
            "byteOffset": out.len(),
            "byteLength": bytes.len(),
            "byteStride": stride,
            "count": count,
            "mode": mode,
        });
        if let Some(f) = filter {
            ext["filter"] = value!(f);
        }
        others.insert(EXTENSION.into(), ext);
        view.extensions = Some(json::extensions::buffer::View { others });
        out.extend_from_slice(&bytes);
        // The plain layout in the fallback buffer, 4-aligned like the views were.
        fallback_len = fallback_len.div_ceil(4) * 4;
        view.buffer = json::Index::new(1);
        view.byte_offset = (fallback_len > 0).then_some(USize64(fallback_len));
        fallback_len += len as u64;
    }
    if stats.views == 0 {
        return Ok((bin.to_vec(), stats));
    }
    let mut others = serde_json::Map::new();
    others.insert(EXTENSION.into(), value!({ "fallback": true }));
    root.buffers.truncate(1);
    root.buffers.push(json::Buffer {
        byte_length: USize64(fallback_len),
        name: None,
        uri: None,
        extensions: Some(json::extensions::buffer::Buffer { others }),
        extras: Default::default(),
    });
    super::gltf_repack::require_extension(root, EXTENSION);
    Ok((out, stats))
}

/// The bytes of `data` encoded as `mode` says, with the extension's byte stride, count, mode
/// and filter names; None when the bytes do not divide into whole elements.
type Encoded = (Vec<u8>, usize, usize, &'static str, Option<&'static str>);
fn encode(data: &[u8], mode: Mode) -> std::result::Result<Option<Encoded>, meshopt::Error> {
    Ok(match mode {
        Mode::Attributes(size) => {
            if data.is_empty() || !data.len().is_multiple_of(size) {
                return Ok(None);
            }
            let count = data.len() / size;
            encode_vertices(data, size)?.map(|bytes| (bytes, size, count, "ATTRIBUTES", None))
        }
        Mode::Octahedral => {
            if data.is_empty() || !data.len().is_multiple_of(4) {
                return Ok(None);
            }
            let unit = |b: u8| f32::from(b as i8) / 127.0;
            let vectors: Vec<[f32; 4]> = data
                .chunks_exact(4)
                .map(|c| [unit(c[0]), unit(c[1]), unit(c[2]), unit(c[3])])
                .collect();
            let filtered: Vec<u8> = meshopt::encoding::encode_filter_oct::<i8>(&vectors, 8)
                .iter()
                .flatten()
                .map(|&c| c as u8)
                .collect();
            let count = vectors.len();
            encode_vertices(&filtered, 4)?
                .map(|bytes| (bytes, 4, count, "ATTRIBUTES", Some("OCTAHEDRAL")))
        }
        Mode::Quaternion => filtered_keys(data, 8, "QUATERNION", |d| {
            let keys: Vec<[i16; 4]> = bytemuck::pod_collect_to_vec(d);
            quaternion_filtered(&keys).map(|(_, f)| bytemuck::cast_slice(&f).to_vec())
        })?,
        Mode::Exponential => filtered_keys(data, 12, "EXPONENTIAL", |d| {
            let keys: Vec<[u32; 3]> = bytemuck::pod_collect_to_vec(d);
            exponent_filtered(&keys).map(|f| bytemuck::cast_slice(&f).to_vec())
        })?,
        Mode::Triangles(size) => {
            if data.is_empty() || !data.len().is_multiple_of(size * 3) {
                return Ok(None);
            }
            let indices: Vec<u32> = match size {
                2 => data
                    .chunks_exact(2)
                    .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])))
                    .collect(),
                _ => data
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            };
            let vertices = indices.iter().max().map_or(0, |&m| m as usize + 1);
            let bytes = meshopt::encoding::encode_index_buffer(&indices, vertices)?;
            Some((bytes, size, indices.len(), "TRIANGLES", None))
        }
    })
}

/// Animation keys of `size` bytes (`data`) encoded by the vertex codec: through the filter
/// named `filter` where `filtered` gives their filtered bytes (None: it would not give every
/// one back), else plain; None when the bytes do not divide into whole keys.
fn filtered_keys(
    data: &[u8],
    size: usize,
    filter: &'static str,
    filtered: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
) -> std::result::Result<Option<Encoded>, meshopt::Error> {
    if data.is_empty() || !data.len().is_multiple_of(size) {
        return Ok(None);
    }
    let count = data.len() / size;
    let (bytes, filter) = match filtered(data) {
        Some(f) => (f, Some(filter)),
        None => (data.to_vec(), None),
    };
    Ok(encode_vertices(&bytes, size)?.map(|e| (e, size, count, "ATTRIBUTES", filter)))
}

/// `keys` (normalised shorts, xyzw) through the quaternion filter at the fewest bits whose
/// decoding gives every one back bit for bit, and those bits; None when no bit count does.
fn quaternion_filtered(keys: &[[i16; 4]]) -> Option<(i32, Vec<[i16; 4]>)> {
    let value = crate::anim::snorm::snorm16_value;
    let unit: Vec<[f32; 4]> = keys.iter().map(|k| k.map(value)).collect();
    QUATERNION_BITS.into_iter().find_map(|bits| {
        let filtered = meshopt::encoding::encode_filter_quat(&unit, bits);
        let mut back = filtered.clone();
        meshopt::decode_filter_quat(&mut back);
        (back == keys).then_some((bits, filtered))
    })
}

/// `keys` (float bits, xyz) through the exponent filter (one exponent a key) at the fewest
/// mantissa bits whose decoding gives every one back bit for bit; None when no bit count
/// does.
fn exponent_filtered(keys: &[[u32; 3]]) -> Option<Vec<[u32; 3]>> {
    use meshopt::encoding::EncodeExpMode;
    let floats: Vec<[f32; 3]> = keys.iter().map(|k| k.map(f32::from_bits)).collect();
    if !floats.iter().flatten().all(|v| v.is_finite()) {
        return None;
    }
    EXPONENT_BITS.into_iter().find_map(|bits| {
        let filtered =
            meshopt::encoding::encode_filter_exp(&floats, bits, EncodeExpMode::SharedVector);
        let mut back = filtered.clone();
        meshopt::decode_filter_exp(&mut back);
        (back == keys).then_some(filtered)
    })
}

/// The fewest bits at which a filter gives back every one of a key accessor's `bytes` (None:
/// none does): the quaternion filter's for rotations, the exponent filter's for translations
/// and scales (whose values at fewer bits are also values at more, so only whether it takes
/// them matters: Some(0)).
fn filter_bits(bytes: &[u8], kind: KeyView) -> Option<i32> {
    match kind {
        KeyView::Rotations => {
            let keys: Vec<[i16; 4]> = bytemuck::pod_collect_to_vec(bytes);
            quaternion_filtered(&keys).map(|(bits, _)| bits)
        }
        KeyView::Vectors => {
            let keys: Vec<[u32; 3]> = bytemuck::pod_collect_to_vec(bytes);
            exponent_filtered(&keys).map(|_| 0)
        }
    }
}

/// Each key view (rotations or translations and scales, packed) whose accessors the filters
/// take at different bits, or not at all, split into one view per group, so one accessor
/// the filter cannot give back leaves the others filtered (and rotations at different bits,
/// whose values differ, are each filtered): the first group's bytes move to the front of the
/// view, the others go to new views at the end of `bin`.
fn split_key_views(root: &mut json::Root, bin: &mut Vec<u8>) {
    for kind in [KeyView::Rotations, KeyView::Vectors] {
        let views = key_views(root, kind);
        for (v, _) in views.iter().enumerate().filter(|(_, k)| **k) {
            let view = &root.buffer_views[v];
            if view.byte_stride.is_some() || view.buffer.value() != 0 {
                continue;
            }
            let start = view.byte_offset.map_or(0, |o| o.0) as usize;
            // Per group (the bits), its accessors and their bytes.
            let mut groups: std::collections::BTreeMap<Option<i32>, Vec<(usize, Vec<u8>)>> =
                Default::default();
            for (ai, a) in root.accessors.iter().enumerate() {
                let Some((av, element, _)) = super::accessor::json_layout(root, a) else {
                    continue;
                };
                if av != v {
                    continue;
                }
                let from = start.checked_add(a.byte_offset.map_or(0, |o| o.0) as usize);
                let len = element.checked_mul(a.count.0 as usize);
                let range = from.zip(len).and_then(|(f, n)| Some(f..f.checked_add(n)?));
                let Some(bytes) = range.and_then(|r| bin.get(r)) else {
                    // Bytes outside the BIN chunk: left for `compress` to name.
                    return;
                };
                groups
                    .entry(filter_bits(bytes, kind))
                    .or_default()
                    .push((ai, bytes.to_vec()));
            }
            if groups.len() < 2 {
                continue;
            }
            for (g, (_, members)) in groups.into_iter().enumerate() {
                let data: Vec<u8> = members.iter().flat_map(|m| m.1.iter().copied()).collect();
                let at = match g {
                    0 => {
                        bin[start..start + data.len()].copy_from_slice(&data);
                        root.buffer_views[v].byte_length = USize64(data.len() as u64);
                        v
                    }
                    _ => {
                        bin.resize(bin.len().div_ceil(4) * 4, 0);
                        let mut view = root.buffer_views[v].clone();
                        view.byte_offset = Some(USize64(bin.len() as u64));
                        view.byte_length = USize64(data.len() as u64);
                        bin.extend_from_slice(&data);
                        root.buffer_views.push(view);
                        root.buffer_views.len() - 1
                    }
                };
                let mut offset = 0;
                for (ai, bytes) in members {
                    let a = &mut root.accessors[ai];
                    a.buffer_view = Some(json::Index::new(at as u32));
                    a.byte_offset = (offset > 0).then_some(USize64(offset as u64));
                    offset += bytes.len();
                }
            }
        }
    }
}

/// Element sizes the vertex codec is asked to take (the crate's encoder is generic over the
/// element type, so each size is a type here): every vertex attribute, key and matrix glTF
/// stores, padded to 4 bytes, up to a MAT4 of floats.
const ELEMENT_SIZES: [usize; 12] = [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64];

/// The elements of `data` (`size` bytes each, `size` in [`ELEMENT_SIZES`]) encoded by the
/// vertex codec, version 0 (what `EXT_meshopt_compression` decoders read); None for another
/// size.
fn encode_vertices(
    data: &[u8],
    size: usize,
) -> std::result::Result<Option<Vec<u8>>, meshopt::Error> {
    fn sized<const N: usize>(data: &[u8]) -> std::result::Result<Vec<u8>, meshopt::Error> {
        /// meshoptimizer's default level (version 0 has no other).
        const LEVEL: i32 = 2;
        let elements: Vec<[u8; N]> = data
            .chunks_exact(N)
            .map(|c| std::array::from_fn(|k| c[k]))
            .collect();
        meshopt::encoding::encode_vertex_buffer_level(&elements, LEVEL, Some(0))
    }
    macro_rules! by_size {
        ($($n:literal)*) => {
            match size {
                $($n => sized::<$n>(data).map(Some),)*
                _ => Ok(None),
            }
        };
    }
    by_size!(4 8 12 16 20 24 28 32 36 40 48 64)
}

/// Per view, whether it holds only normals or tangents as normalised bytes, 4 a vertex: what
/// the octahedral filter takes (their rounding moves no vertex).
fn octahedral_views(root: &json::Root) -> Vec<bool> {
    use json::accessor::ComponentType as C;
    use json::mesh::Semantic as S;
    let mut directions = std::collections::HashSet::new();
    for p in root.meshes.iter().flat_map(|m| &m.primitives) {
        for (sem, a) in &p.attributes {
            if matches!(sem, Checked::Valid(S::Normals | S::Tangents)) {
                directions.insert(a.value());
            }
        }
    }
    let mut fit = vec![None; root.buffer_views.len()];
    for (ai, a) in root.accessors.iter().enumerate() {
        let Some((v, _, stride)) = super::accessor::json_layout(root, a) else {
            continue;
        };
        let bytes = matches!(&a.component_type, Checked::Valid(t) if t.0 == C::I8);
        let ok = directions.contains(&ai) && bytes && a.normalized && stride == 4;
        fit[v] = Some(fit[v].unwrap_or(true) && ok);
    }
    fit.into_iter().map(|f| f == Some(true)).collect()
}

/// Which animation keys a view may hold for a filter to take it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyView {
    /// Rotation outputs as normalised shorts (VEC4 of SHORT, 8 bytes apart): the quaternion
    /// filter's.
    Rotations,
    /// Translation and scale outputs as floats (VEC3 of FLOAT, 12 bytes apart): the exponent
    /// filter's.
    Vectors,
}

/// Per view, whether it holds only the keys `kind` names.
fn key_views(root: &json::Root, kind: KeyView) -> Vec<bool> {
    use json::accessor::{ComponentType as C, Type as T};
    use json::animation::Property as P;
    let mut outputs = std::collections::HashSet::new();
    for anim in &root.animations {
        for ch in &anim.channels {
            let wanted = matches!(
                (&ch.target.path, kind),
                (Checked::Valid(P::Rotation), KeyView::Rotations)
                    | (Checked::Valid(P::Translation | P::Scale), KeyView::Vectors)
            );
            if let (true, Some(s)) = (wanted, anim.samplers.get(ch.sampler.value())) {
                outputs.insert(s.output.value());
            }
        }
    }
    let (component, ty, size, normalized) = match kind {
        KeyView::Rotations => (C::I16, T::Vec4, 8, true),
        KeyView::Vectors => (C::F32, T::Vec3, 12, false),
    };
    let mut fit = vec![None; root.buffer_views.len()];
    for (ai, a) in root.accessors.iter().enumerate() {
        let Some((v, _, stride)) = super::accessor::json_layout(root, a) else {
            continue;
        };
        let typed = matches!(&a.component_type, Checked::Valid(t) if t.0 == component)
            && a.type_ == Checked::Valid(ty);
        let ok = outputs.contains(&ai) && typed && a.normalized == normalized && stride == size;
        fit[v] = Some(fit[v].unwrap_or(true) && ok);
    }
    fit.into_iter().map(|f| f == Some(true)).collect()
}

/// Per view, how it can be compressed: every accessor in it of one element size, packed
/// (or at the view's stride), no image or sparse part in it; index views of triangle lists as
/// `TRIANGLES`.
fn view_modes(root: &json::Root) -> Vec<Option<Mode>> {
    use json::mesh::Mode as M;
    let n = root.buffer_views.len();
    // Per view: the element size its accessors agree on (None: no accessor yet), or a clash.
    let mut size: Vec<Option<Option<usize>>> = vec![Some(None); n];
    let clash = |v: usize, s: usize, size: &mut Vec<Option<Option<usize>>>| {
        size[v] = match size[v] {
            Some(None) => Some(Some(s)),
            Some(Some(t)) if t == s => Some(Some(t)),
            _ => None,
        };
    };
    for a in &root.accessors {
        let Some((v, _, stride)) = super::accessor::json_layout(root, a) else {
            continue;
        };
        clash(v, stride, &mut size);
        if let Some(sp) = &a.sparse {
            for w in [
                sp.indices.buffer_view.value(),
                sp.values.buffer_view.value(),
            ] {
                if w < n {
                    size[w] = None;
                }
            }
        }
    }
    for i in &root.images {
        if let Some(v) = i.buffer_view.filter(|v| v.value() < n) {
            size[v.value()] = None;
        }
    }
    // Per view: holds triangle list indices, other indices, anything that is not indices.
    let (mut triangles, mut other_index, mut not_index) =
        (vec![false; n], vec![false; n], vec![false; n]);

    let mut index_accessors = std::collections::HashSet::new();
    for p in root.meshes.iter().flat_map(|m| &m.primitives) {
        let Some(i) = p.indices else {
            continue;
        };
        index_accessors.insert(i.value());
        let Some(v) = root
            .accessors
            .get(i.value())
            .and_then(|a| a.buffer_view)
            .filter(|v| v.value() < n)
        else {
            continue;
        };
        match p.mode {
            Checked::Valid(M::Triangles) => triangles[v.value()] = true,
            _ => other_index[v.value()] = true,
        }
    }
    for (ai, a) in root.accessors.iter().enumerate() {
        if let Some(v) = a.buffer_view.filter(|v| v.value() < n)
            && !index_accessors.contains(&ai)
        {
            not_index[v.value()] = true;
        }
    }
    (0..n)
        .map(|v| {
            let s = size[v]??;
            match (triangles[v], other_index[v], not_index[v]) {
                (true, false, false) if s == 2 || s == 4 => Some(Mode::Triangles(s)),
                (false, false, _) if ELEMENT_SIZES.contains(&s) => Some(Mode::Attributes(s)),
                _ => None,
            }
        })
        .collect()
}

/// The bytes the vertex codec stores `data` in, as elements of `size` bytes (the data's own
/// length where that would not shrink it, or for a size the codec does not take): how
/// [`super::gltf_reorder`] compares two orders of a vertex's influences.
pub fn attribute_bytes(data: &[u8], size: usize) -> usize {
    encoded_len(data, Mode::Attributes(size))
}

/// The bytes `data` takes encoded as `mode` says, or its own length where that would not
/// shrink it or the encoder does not take it (the writer then stores the view plain).
fn encoded_len(data: &[u8], mode: Mode) -> usize {
    match encode(data, mode) {
        Ok(Some(e)) => e.0.len().min(data.len()),
        _ => data.len(),
    }
}

/// About how many bytes clip `anim`'s data takes once this module compresses it, for
/// `optimize`'s choice between reductions of a clip: its distinct key time arrays in one view
/// (and about 100 bytes of JSON each, as `optimize::clip_bytes` prices them), its rotation
/// codes in another through the quaternion filter, its translation and scale floats through
/// the exponent filter, each encoded by the vertex codec (a view that would not shrink
/// counted plain), in groups as the writer splits its views (rotations by the filter bits
/// that give them back, translations and scales by whether the filter gives them back);
/// morph weight codes and other values counted plain. An estimate: the writer's views are
/// laid out and split by its own rules.
pub fn clip_compressed_bytes(anim: &crate::anim::Animation) -> usize {
    use crate::anim::Path;
    use crate::anim::snorm::OutputCodes;
    let arrays = crate::anim::distinct_key_times(anim.channels.iter());
    let times: Vec<u8> = arrays
        .iter()
        .flat_map(|a| a.iter())
        .flat_map(|t| t.to_le_bytes())
        .collect();
    // Rotations grouped by the quaternion filter bits that give them back (None: unfiltered),
    // translations and scales by whether the exponent filter gives them back, as the writer
    // splits its views.
    let mut rotations: BTreeMap<Option<i32>, Vec<u8>> = BTreeMap::new();
    let mut vectors: BTreeMap<bool, Vec<u8>> = BTreeMap::new();
    let mut plain = 0usize;
    for c in &anim.channels {
        let values = &c.sampler.values;
        match (OutputCodes::of(c.path, values), c.path) {
            (Some(OutputCodes::Snorm16(codes)), _)
                if c.sampler.components == 4
                    && c.sampler.interpolation != crate::anim::Interpolation::CubicSpline =>
            {
                let keys: Vec<[i16; 4]> = codes
                    .chunks_exact(4)
                    .map(|k| [k[0], k[1], k[2], k[3]])
                    .collect();
                let bits = quaternion_filtered(&keys).map(|(bits, _)| bits);
                let group = rotations.entry(bits).or_default();
                group.extend(codes.iter().flat_map(|v| v.to_le_bytes()));
            }
            (Some(codes), _) => plain += codes.to_le_bytes().len(),
            (None, Path::Translation | Path::Scale) if c.sampler.components == 3 => {
                let keys: Vec<[u32; 3]> = values
                    .chunks_exact(3)
                    .map(|k| [k[0].to_bits(), k[1].to_bits(), k[2].to_bits()])
                    .collect();
                let group = vectors
                    .entry(exponent_filtered(&keys).is_some())
                    .or_default();
                group.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            }
            (None, _) => plain += 4 * values.len(),
        }
    }
    let rotation_bytes: usize = (rotations.iter())
        .map(|(bits, data)| match bits {
            Some(_) => encoded_len(data, Mode::Quaternion),
            None => encoded_len(data, Mode::Attributes(8)),
        })
        .sum();
    let vector_bytes: usize = (vectors.iter())
        .map(|(filtered, data)| match filtered {
            true => encoded_len(data, Mode::Exponential),
            false => encoded_len(data, Mode::Attributes(12)),
        })
        .sum();
    encoded_len(&times, Mode::Attributes(4))
        + crate::anim::KEY_TIMES_JSON_BYTES * arrays.len()
        + rotation_bytes
        + vector_bytes
        + plain
}
