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
//! Limits: no quaternion or exponent filter: everything but those directions is lossless, so
//! compression adds nothing to `optimize`'s error; vertices are compressed in the order the file has them (no
//! fetch reordering, which would renumber the vertices `optimize` measures by index).

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
    /// A triangle list's indices of this many bytes each.
    Triangles(usize),
}

/// Compress the views of `root` whose bytes lie in `bin` (buffer 0): returns the new buffer 0
/// bytes; `root` gets the fallback buffer, the views' extension objects and the extension in
/// `extensionsUsed` and `extensionsRequired`. `file` names the model in errors.
pub fn compress(root: &mut json::Root, bin: &[u8], file: &str) -> Result<(Vec<u8>, CompressStats)> {
    let octahedral = octahedral_views(root);
    let modes: Vec<Option<Mode>> = view_modes(root)
        .into_iter()
        .zip(octahedral)
        .map(|(m, oct)| match (m, oct) {
            (Some(Mode::Attributes(4)), true) => Some(Mode::Octahedral),
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
