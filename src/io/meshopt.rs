//! `EXT_meshopt_compression` and `KHR_meshopt_compression`: buffer views stored compressed
//! by meshoptimizer's codecs (what gltfpack `-c`/`-cc` and glTF-Transform's `meshopt` write).
//!
//! Based on: the extensions' specifications (Khronos glTF repository,
//! `extensions/2.0/Vendor/EXT_meshopt_compression` and `Khronos/KHR_meshopt_compression`, by
//! Arseny Kapoulkine) and meshoptimizer's decoders (`meshopt_decodeVertexBuffer`,
//! `meshopt_decodeIndexBuffer`, `meshopt_decodeIndexSequence`, the octahedral, quaternion,
//! exponential and colour filters), through the `meshopt` crate.
//!
//! Method: after the buffers load, every compressed view is decoded into one new buffer and
//! pointed at its slice; the extension leaves the view, `extensionsUsed` and
//! `extensionsRequired`; fallback buffers (no data of their own) that nothing points at any
//! more are dropped. The rest of the importer, and `export`, then see a plain file.
//! Cost: one decode of each view (meshoptimizer decodes at GB/s). Limits: every size is
//! checked against the view and [`MAX_FILE_BYTES`] before decoding; the decoders are safe on
//! untrusted input (meshoptimizer's promise) and the result goes through the importer's
//! accessor and index checks like any other bytes.

use gltf::json;
use serde_json::Value;

use super::files::MAX_FILE_BYTES;
use crate::error::{Error, Result};

/// The two names of the extension (the KHR one adds version 1 of the vertex codec and the
/// colour filter).
pub(crate) const EXTENSIONS: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// The extension object of a buffer or view (either name), with the name.
fn extension(others: &serde_json::Map<String, Value>) -> Option<(&'static str, &Value)> {
    EXTENSIONS
        .iter()
        .find_map(|name| others.get(*name).map(|v| (*name, v)))
}

/// Whether `buffer` is marked as a fallback buffer (`"fallback": true` in the extension): its
/// data, if any, only stands in for compressed views, so it is not read.
fn marked_fallback(buffer: &json::Buffer) -> bool {
    buffer
        .extensions
        .as_ref()
        .and_then(|e| extension(&e.others))
        .is_some_and(|(_, v)| v.get("fallback").and_then(Value::as_bool) == Some(true))
}

/// Which buffers hold no data to read: those marked `fallback`, and those without a URI (not
/// the GLB's binary chunk, buffer 0 of a `.glb`) that only compressed views point at (the
/// extension's unmarked placeholder). Checked: a view without the extension never points at
/// one, and no extension object takes its compressed bytes from one.
pub(crate) fn fallback_buffers(root: &json::Root, glb: bool, file: &str) -> Result<Vec<bool>> {
    let n = root.buffers.len();
    let (mut plain_use, mut compressed_use) = (vec![false; n], vec![false; n]);
    for v in &root.buffer_views {
        let slot = match v.extensions.as_ref().and_then(|e| extension(&e.others)) {
            Some(_) => compressed_use.get_mut(v.buffer.value()),
            None => plain_use.get_mut(v.buffer.value()),
        };
        if let Some(s) = slot {
            *s = true;
        }
    }
    let fallback: Vec<bool> = root
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            marked_fallback(b)
                || (b.uri.is_none() && !(glb && i == 0) && compressed_use[i] && !plain_use[i])
        })
        .collect();
    for (vi, v) in root.buffer_views.iter().enumerate() {
        let ext = v.extensions.as_ref().and_then(|e| extension(&e.others));
        let b = v.buffer.value();
        if ext.is_none() && fallback.get(b) == Some(&true) {
            return Err(Error::invalid(
                file,
                format!("bufferViews[{vi}].buffer"),
                format!(
                    "buffers[{b}] is a fallback buffer without data, and this view is not \
                     compressed (EXT_meshopt_compression: only compressed views may point at it)"
                ),
            ));
        }
        if let Some((name, e)) = ext
            && let Some(src) = e.get("buffer").and_then(Value::as_u64)
            && fallback.get(src as usize) == Some(&true)
        {
            return Err(Error::invalid(
                file,
                format!("bufferViews[{vi}].extensions.{name}.buffer"),
                format!(
                    "buffers[{src}] is a fallback buffer: compressed bytes must come from real data"
                ),
            ));
        }
    }
    Ok(fallback)
}

/// A compressed view's extension object, read.
struct Compressed {
    buffer: usize,
    offset: usize,
    length: usize,
    stride: usize,
    count: usize,
    mode: String,
    filter: String,
}

/// Read the extension object at `field` of `file`.
fn read(v: &Value, file: &str, field: &str) -> Result<Compressed> {
    let bad =
        |what: &str, why: &str| Error::invalid(file, format!("{field}.{what}"), why.to_string());
    let uint = |key: &str, default: Option<u64>| -> Result<usize> {
        match v.get(key) {
            Some(x) => x
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad(key, "not a whole number ≥ 0")),
            None => default
                .map(|d| d as usize)
                .ok_or_else(|| bad(key, "missing (required)")),
        }
    };
    let text = |key: &str, default: Option<&str>| -> Result<String> {
        match (v.get(key), default) {
            (Some(Value::String(s)), _) => Ok(s.clone()),
            (None, Some(d)) => Ok(d.to_string()),
            (Some(_), _) => Err(bad(key, "not a string")),
            (None, None) => Err(bad(key, "missing (required)")),
        }
    };
    Ok(Compressed {
        buffer: uint("buffer", None)?,
        offset: uint("byteOffset", Some(0))?,
        length: uint("byteLength", None)?,
        stride: uint("byteStride", None)?,
        count: uint("count", None)?,
        mode: text("mode", None)?,
        filter: text("filter", Some("NONE"))?,
    })
}

/// One element of `S` bytes (the codec's element size is its type's size).
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Element<const S: usize>([u8; S]);

impl<const S: usize> Default for Element<S> {
    fn default() -> Self {
        Element([0; S])
    }
}

/// Decode `n` elements of `S` bytes each with the vertex codec.
fn vertices<const S: usize>(data: &[u8], n: usize) -> meshopt::Result<Vec<u8>> {
    meshopt::decode_vertex_buffer::<Element<S>>(data, n)
        .map(|v| v.iter().flat_map(|e| e.0).collect())
}

/// The vertex codec for any stride of the extension (4 to 256, a multiple of 4).
fn decode_vertices(data: &[u8], count: usize, stride: usize) -> Option<meshopt::Result<Vec<u8>>> {
    macro_rules! strides {
        ($($s:literal)*) => {
            match stride {
                $($s => Some(vertices::<$s>(data, count)),)*
                _ => None,
            }
        };
    }
    strides!(4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64 68 72 76 80 84 88 92 96 100 104 108
        112 116 120 124 128 132 136 140 144 148 152 156 160 164 168 172 176 180 184 188 192 196
        200 204 208 212 216 220 224 228 232 236 240 244 248 252 256)
}

/// Apply `filter` in place to `bytes` of elements `stride` wide.
fn unfilter(
    bytes: &mut Vec<u8>,
    filter: &str,
    stride: usize,
    khr: bool,
) -> std::result::Result<(), String> {
    fn with<T: bytemuck::Pod>(bytes: &mut Vec<u8>, f: impl FnOnce(&mut [T])) {
        let mut typed: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
        f(&mut typed);
        *bytes = bytemuck::cast_slice(&typed).to_vec();
    }
    match (filter, stride) {
        ("NONE", _) => {}
        ("OCTAHEDRAL", 4) => with::<[i8; 4]>(bytes, meshopt::decode_filter_oct),
        ("OCTAHEDRAL", 8) => with::<[i16; 4]>(bytes, meshopt::decode_filter_oct),
        ("QUATERNION", 8) => with::<[i16; 4]>(bytes, meshopt::decode_filter_quat),
        // Each 32-bit component is decoded on its own.
        ("EXPONENTIAL", s) if s.is_multiple_of(4) => {
            with::<[u32; 1]>(bytes, meshopt::decode_filter_exp::<1>)
        }
        ("COLOR", 4) if khr => with::<[u8; 4]>(bytes, meshopt::decode_filter_color),
        ("COLOR", 8) if khr => with::<[u16; 4]>(bytes, meshopt::decode_filter_color),
        (f, s) => {
            return Err(format!(
                "filter {f:?} with byteStride {s} is not one the extension defines"
            ));
        }
    }
    Ok(())
}

/// Decode one view's bytes.
fn decode(c: &Compressed, data: &[u8], khr: bool) -> std::result::Result<Vec<u8>, String> {
    let codec = |e: meshopt::Error| format!("the data does not decode: {e}");
    match c.mode.as_str() {
        // EXT takes version 0 of the vertex codec only (header byte 0xa0); KHR adds version 1.
        "ATTRIBUTES" if !khr && data.first().is_some_and(|&h| h != 0xa0) => Err(format!(
            "vertex codec version {} (header byte {:#04x}): EXT_meshopt_compression takes \
             version 0 only (KHR_meshopt_compression reads version 1)",
            data.first().map_or(0, |h| h & 0x0f),
            data.first().copied().unwrap_or(0)
        )),
        "ATTRIBUTES" => {
            let mut bytes = decode_vertices(data, c.count, c.stride)
                .ok_or_else(|| {
                    format!(
                        "byteStride {} is not a multiple of 4 from 4 to 256",
                        c.stride
                    )
                })?
                .map_err(codec)?;
            unfilter(&mut bytes, &c.filter, c.stride, khr)?;
            Ok(bytes)
        }
        "TRIANGLES" | "INDICES" if c.filter != "NONE" => Err(format!(
            "filter {:?} on {} data (only ATTRIBUTES take filters)",
            c.filter, c.mode
        )),
        "TRIANGLES" if !c.count.is_multiple_of(3) => {
            Err(format!("count {} is not a multiple of 3", c.count))
        }
        "TRIANGLES" => match c.stride {
            2 => meshopt::decode_index_buffer::<u16>(data, c.count)
                .map(|v| bytemuck::cast_slice(&v).to_vec()),
            4 => meshopt::decode_index_buffer::<u32>(data, c.count)
                .map(|v| bytemuck::cast_slice(&v).to_vec()),
            s => return Err(format!("byteStride {s} for indices (2 or 4)")),
        }
        .map_err(codec),
        "INDICES" => match c.stride {
            2 => meshopt::decode_index_sequence::<u16>(data, c.count)
                .map(|v| bytemuck::cast_slice(&v).to_vec()),
            4 => meshopt::decode_index_sequence::<u32>(data, c.count)
                .map(|v| bytemuck::cast_slice(&v).to_vec()),
            s => return Err(format!("byteStride {s} for indices (2 or 4)")),
        }
        .map_err(codec),
        m => Err(format!("mode {m:?} (ATTRIBUTES, TRIANGLES or INDICES)")),
    }
}

/// Decode every compressed view of `root` into one new buffer (see the module header);
/// `buffers` are the loaded buffers, empty where `fallback` ([`fallback_buffers`]) says.
/// Returns the new buffers.
pub(crate) fn decompress(
    root: &mut json::Root,
    mut buffers: Vec<gltf::buffer::Data>,
    fallback: &[bool],
    file: &str,
) -> Result<Vec<gltf::buffer::Data>> {
    let mut decoded: Vec<u8> = Vec::new();
    let new_index = buffers.len();
    let mut any = false;
    for (vi, view) in root.buffer_views.iter_mut().enumerate() {
        let Some((name, v)) = view.extensions.as_ref().and_then(|e| extension(&e.others)) else {
            continue;
        };
        let field = format!("bufferViews[{vi}].extensions.{name}");
        let c = read(v, file, &field)?;
        let decoded_len = c
            .count
            .checked_mul(c.stride)
            .filter(|&n| n as u64 <= MAX_FILE_BYTES);
        if decoded_len != Some(view.byte_length.0 as usize) {
            return Err(Error::invalid(
                file,
                format!("{field}.count"),
                format!(
                    "count {} × byteStride {} is not the view's byteLength {} (the extension: \
                     the decoded view fills the view)",
                    c.count, c.stride, view.byte_length.0
                ),
            ));
        }
        if c.mode == "ATTRIBUTES"
            && let Some(stride) = view.byte_stride
            && stride.0 != c.stride
        {
            return Err(Error::invalid(
                file,
                format!("{field}.byteStride"),
                format!(
                    "{} is not the view's byteStride {} (the decoded elements are read at the \
                     view's stride)",
                    c.stride, stride.0
                ),
            ));
        }
        if (decoded.len() + view.byte_length.0 as usize) as u64 > MAX_FILE_BYTES {
            return Err(Error::invalid(
                file,
                field,
                format!("decoded views pass {MAX_FILE_BYTES} bytes; files are read up to that"),
            ));
        }
        let source = buffers.get(c.buffer).ok_or_else(|| {
            Error::invalid(
                file,
                format!("{field}.buffer"),
                format!(
                    "buffers[{}] does not exist ({} buffers)",
                    c.buffer,
                    buffers.len()
                ),
            )
        })?;
        let data = source
            .0
            .get(c.offset..c.offset.saturating_add(c.length))
            .ok_or_else(|| {
                Error::invalid(
                    file,
                    format!("{field}.byteLength"),
                    format!(
                        "bytes {}..{} of buffers[{}]: outside the buffer (or it is a fallback \
                         buffer without data)",
                        c.offset,
                        c.offset.saturating_add(c.length),
                        c.buffer
                    ),
                )
            })?;
        let bytes = decode(&c, data, name.starts_with("KHR"))
            .map_err(|m| Error::invalid(file, &field, m))?;
        view.buffer = json::Index::new(new_index as u32);
        view.byte_offset = Some(json::validation::USize64(decoded.len() as u64));
        strip(&mut view.extensions, |e| &mut e.others);
        decoded.extend_from_slice(&bytes);
        while !decoded.len().is_multiple_of(4) {
            decoded.push(0);
        }
        any = true;
    }
    if !any {
        return Ok(buffers);
    }
    root.buffers.push(json::Buffer {
        byte_length: json::validation::USize64(decoded.len().max(4) as u64),
        name: Some("decoded meshopt views".into()),
        uri: None,
        extensions: None,
        extras: Default::default(),
    });
    decoded.resize(decoded.len().max(4), 0);
    buffers.push(gltf::buffer::Data(decoded));
    for b in &mut root.buffers {
        strip(&mut b.extensions, |e| &mut e.others);
    }
    root.extensions_used
        .retain(|e| !EXTENSIONS.contains(&e.as_str()));
    root.extensions_required
        .retain(|e| !EXTENSIONS.contains(&e.as_str()));
    Ok(drop_unused_fallbacks(root, buffers, fallback))
}

/// Remove both names of the extension from an object's extensions (and the extensions when
/// nothing is left).
fn strip<T>(
    extensions: &mut Option<T>,
    others: impl Fn(&mut T) -> &mut serde_json::Map<String, Value>,
) {
    if let Some(e) = extensions.as_mut() {
        let map = others(e);
        for name in EXTENSIONS {
            map.remove(name);
        }
        if map.is_empty() {
            *extensions = None;
        }
    }
}

/// Remove the fallback buffers (`fallback`, per buffer; the decoded buffer after them is
/// none) that no view points at any more, renumbering the views' buffers.
fn drop_unused_fallbacks(
    root: &mut json::Root,
    buffers: Vec<gltf::buffer::Data>,
    fallback: &[bool],
) -> Vec<gltf::buffer::Data> {
    let mut used = vec![false; root.buffers.len()];
    for v in &root.buffer_views {
        if let Some(u) = used.get_mut(v.buffer.value()) {
            *u = true;
        }
    }
    let keep: Vec<bool> = (0..root.buffers.len())
        .map(|b| used[b] || fallback.get(b) != Some(&true))
        .collect();
    let mut renumber = Vec::with_capacity(keep.len());
    let mut next = 0u32;
    for &k in &keep {
        renumber.push(next);
        next += u32::from(k);
    }
    for view in &mut root.buffer_views {
        let old = view.buffer.value();
        if let Some(&new) = renumber.get(old) {
            view.buffer = json::Index::new(new);
        }
    }
    let mut k = keep.iter();
    root.buffers.retain(|_| k.next().copied().unwrap_or(true));
    buffers
        .into_iter()
        .zip(&keep)
        .filter_map(|(b, &k)| k.then_some(b))
        .collect()
}
