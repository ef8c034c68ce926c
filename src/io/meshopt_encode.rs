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
//! Limits: no exponent filter (translations and scales stay floats, compressed losslessly);
//! everything but normals and tangents is given back as written, so compression adds nothing
//! to `optimize`'s error.

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
    /// A triangle list's indices of this many bytes each.
    Triangles(usize),
}

/// Quaternion filter bits tried, fewest first: the filter takes 4 to 16.
const QUATERNION_BITS: std::ops::RangeInclusive<i32> = 4..=16;

/// Unit quaternions (xyzw, 4 values each) rounded in place to what a reader gets back from
/// them stored through the quaternion filter at `bits` bits (4 to 16): 16-bit codes' values,
/// each the fixed point of encoding and decoding (so the writer's filter gives them back bit
/// for bit; a key still moving after a few rounds keeps its last codes, and its view is then
/// stored unfiltered). The turn moves by up to about 1.4 / (2^(bits−1) − 1) rad (the three
/// smallest components on a grid of 1/√2 over 2^(bits−1) − 1 steps), plus the 16-bit codes'
/// rounding.
pub fn quaternion_filter_round(bits: i32, values: &mut [f32]) {
    /// Encode-and-decode rounds after the first that a key may take to settle.
    const SETTLE_ROUNDS: usize = 3;
    let bits = bits.clamp(*QUATERNION_BITS.start(), *QUATERNION_BITS.end());
    let round_trip = |q: [f32; 4]| -> [i16; 4] {
        let mut codes = meshopt::encoding::encode_filter_quat(&[q], bits);
        meshopt::decode_filter_quat(&mut codes);
        codes[0]
    };
    let value = crate::anim::snorm::snorm16_value;
    for key in values.chunks_exact_mut(4) {
        let mut codes = round_trip([key[0], key[1], key[2], key[3]]);
        for _ in 0..SETTLE_ROUNDS {
            let again = round_trip(codes.map(value));
            if again == codes {
                break;
            }
            codes = again;
        }
        for (v, c) in key.iter_mut().zip(codes) {
            *v = value(c);
        }
    }
}

/// Compress the views of `root` whose bytes lie in `bin` (buffer 0): returns the new buffer 0
/// bytes; `root` gets the fallback buffer, the views' extension objects and the extension in
/// `extensionsUsed` and `extensionsRequired`. `file` names the model in errors.
pub fn compress(root: &mut json::Root, bin: &[u8], file: &str) -> Result<(Vec<u8>, CompressStats)> {
    let octahedral = octahedral_views(root);
    let quaternions = quaternion_views(root);
    let modes: Vec<Option<Mode>> = view_modes(root)
        .into_iter()
        .zip(octahedral.into_iter().zip(quaternions))
        .map(|(m, kind)| match (m, kind) {
            (Some(Mode::Attributes(4)), (true, _)) => Some(Mode::Octahedral),
            (Some(Mode::Attributes(8)), (_, true)) => Some(Mode::Quaternion),
            (m, _) => m,
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
        Mode::Quaternion => {
            if data.is_empty() || !data.len().is_multiple_of(8) {
                return Ok(None);
            }
            let keys: Vec<[i16; 4]> = bytemuck::pod_collect_to_vec(data);
            let count = keys.len();
            let Some(filtered) = quaternion_filtered(&keys) else {
                return encode_vertices(data, 8)
                    .map(|e| e.map(|bytes| (bytes, 8, count, "ATTRIBUTES", None)));
            };
            encode_vertices(bytemuck::cast_slice(&filtered), 8)?
                .map(|bytes| (bytes, 8, count, "ATTRIBUTES", Some("QUATERNION")))
        }
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

/// `keys` (normalised shorts, xyzw) through the quaternion filter at the fewest bits whose
/// decoding gives every one back bit for bit; None when no bit count does.
fn quaternion_filtered(keys: &[[i16; 4]]) -> Option<Vec<[i16; 4]>> {
    let value = crate::anim::snorm::snorm16_value;
    let unit: Vec<[f32; 4]> = keys.iter().map(|k| k.map(value)).collect();
    QUATERNION_BITS.into_iter().find_map(|bits| {
        let filtered = meshopt::encoding::encode_filter_quat(&unit, bits);
        let mut back = filtered.clone();
        meshopt::decode_filter_quat(&mut back);
        (back == keys).then_some(filtered)
    })
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

/// Per view, whether it holds only rotation keys as normalised shorts (animation sampler
/// outputs of rotation channels, VEC4 of SHORT, 8 bytes apart): what the quaternion filter
/// takes.
fn quaternion_views(root: &json::Root) -> Vec<bool> {
    use json::accessor::{ComponentType as C, Type as T};
    use json::animation::Property as P;
    let mut rotations = std::collections::HashSet::new();
    for anim in &root.animations {
        for ch in &anim.channels {
            if matches!(ch.target.path, Checked::Valid(P::Rotation))
                && let Some(s) = anim.samplers.get(ch.sampler.value())
            {
                rotations.insert(s.output.value());
            }
        }
    }
    let mut fit = vec![None; root.buffer_views.len()];
    for (ai, a) in root.accessors.iter().enumerate() {
        let Some((v, _, stride)) = super::accessor::json_layout(root, a) else {
            continue;
        };
        let shorts = matches!(&a.component_type, Checked::Valid(t) if t.0 == C::I16);
        let vec4 = matches!(a.type_, Checked::Valid(T::Vec4));
        let ok = rotations.contains(&ai) && shorts && vec4 && a.normalized && stride == 8;
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
