//! Bounds-checked glTF accessor reading (dense and sparse), so that a truncated buffer or an
//! accessor that runs past its buffer view gives an error naming the accessor, never a panic.

use gltf::accessor::{DataType, Dimensions};

use crate::error::{Error, Result};

/// Accessor contents as f64 (exact for every glTF component type), `components` per element.
pub struct AccessorData {
    /// Number of elements.
    pub count: usize,
    /// Components per element (1 for SCALAR, 3 for VEC3, 16 for MAT4, ...).
    pub components: usize,
    /// `count * components` values, element by element; normalised integers already mapped to
    /// `[0, 1]` or `[-1, 1]`.
    pub values: Vec<f64>,
    /// Component type in the file.
    pub data_type: DataType,
    /// Whether the accessor is `normalized` (its integers are already mapped in `values`).
    pub normalized: bool,
}

/// Floats as a JSON array of numbers with the fewest digits that read back as the same
/// `f32` (serde_json widens an `f32` to `f64` and prints every digit of that: an accessor
/// bound of 0.0416666195 would cost 19 characters instead of 12). Not a number or infinite:
/// null.
pub(crate) fn json_floats(values: &[f32]) -> serde_json::Value {
    values
        .iter()
        .map(|v| {
            let shortest = v.to_string().parse::<f64>().unwrap_or(f64::from(*v));
            serde_json::Value::from(shortest)
        })
        .collect()
}

/// Components per element of type `d` (MAT4: 16).
pub(crate) fn components(d: Dimensions) -> usize {
    match d {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 => 4,
        Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    }
}

/// Bytes of one component of type `t`.
pub(crate) fn component_size(t: DataType) -> usize {
    match t {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

/// Bytes one element of `d` and `t` takes in a buffer view, matrix column padding included
/// (glTF 2.0 §3.6.2.4: each column of a 1- or 2-byte matrix starts on a 4-byte boundary).
pub(crate) fn element_size(d: Dimensions, t: DataType) -> usize {
    let csize = component_size(t);
    let (cols, rows, col_stride) =
        column_layout(d, t).unwrap_or((1, components(d), components(d) * csize));
    cols * col_stride - (col_stride - rows * csize)
}

/// Where a document accessor's elements lie: its view's index, the element's size and the
/// stride between elements (the view's, else the element's). None for an accessor without a
/// view, of an invalid type, or naming a view that does not exist.
pub(crate) fn json_layout(
    root: &gltf::json::Root,
    a: &gltf::json::Accessor,
) -> Option<(usize, usize, usize)> {
    use gltf::json::validation::Checked;
    let (Some(v), Checked::Valid(t), Checked::Valid(ct)) =
        (a.buffer_view, &a.type_, &a.component_type)
    else {
        return None;
    };
    let view = root.buffer_views.get(v.value())?;
    let element = element_size(*t, ct.0);
    Some((
        v.value(),
        element,
        view.byte_stride.map_or(element, |s| s.0),
    ))
}

/// Column padding: glTF aligns each matrix column of 1- and 2-byte types to 4 bytes.
fn column_layout(d: Dimensions, t: DataType) -> Option<(usize, usize, usize)> {
    let size = component_size(t);
    match (d, size) {
        (Dimensions::Mat2, 1) => Some((2, 2, 4)),
        (Dimensions::Mat3, 1) => Some((3, 3, 4)),
        (Dimensions::Mat3, 2) => Some((3, 3, 8)),
        _ => None,
    }
}

pub(crate) fn read_component(bytes: &[u8], t: DataType, normalized: bool) -> f64 {
    let raw = match t {
        DataType::I8 => bytes[0] as i8 as f64,
        DataType::U8 => bytes[0] as f64,
        DataType::I16 => i16::from_le_bytes([bytes[0], bytes[1]]) as f64,
        DataType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as f64,
        DataType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
    };
    if !normalized {
        return raw;
    }
    // glTF 2.0 §3.11 "Animations"/KHR_mesh_quantization normalisation rules.
    match t {
        DataType::I8 => (raw / 127.0).max(-1.0),
        DataType::U8 => raw / 255.0,
        DataType::I16 => (raw / 32767.0).max(-1.0),
        DataType::U16 => raw / 65535.0,
        _ => raw,
    }
}

/// The bytes of a buffer view, checked against its buffer.
fn view_bytes<'b>(
    view: &gltf::buffer::View,
    buffers: &'b [gltf::buffer::Data],
    file: &str,
) -> Result<&'b [u8]> {
    let b = view.buffer().index();
    let data = buffers.get(b).ok_or_else(|| {
        Error::invalid(
            file,
            format!("bufferViews[{}].buffer", view.index()),
            format!("buffer {b} was not loaded"),
        )
    })?;
    let (start, len) = (view.offset(), view.length());
    let end = start.saturating_add(len);
    data.get(start..end).ok_or_else(|| {
        Error::invalid(
            file,
            format!("bufferViews[{}]", view.index()),
            format!(
                "byte range {start}..{end} is outside buffer {b} ({} bytes): truncated buffer?",
                data.len()
            ),
        )
    })
}

/// Read elements `count` of `elem` bytes with `stride` starting at `offset` in `bytes`.
#[allow(clippy::too_many_arguments)]
fn read_elements(
    bytes: &[u8],
    offset: usize,
    stride: usize,
    count: usize,
    d: Dimensions,
    t: DataType,
    normalized: bool,
    out: &mut Vec<f64>,
) -> std::result::Result<(), String> {
    let comps = components(d);
    let csize = component_size(t);
    let (cols, rows, col_stride) = column_layout(d, t).unwrap_or((1, comps, comps * csize));
    let elem = cols * col_stride - (col_stride - rows * csize);
    if stride < elem {
        return Err(format!(
            "byteStride {stride} is smaller than the element size {elem}"
        ));
    }
    if count > 0 {
        let end = offset
            .checked_add(stride.checked_mul(count - 1).ok_or("size overflow")?)
            .and_then(|x| x.checked_add(elem))
            .ok_or("size overflow")?;
        if end > bytes.len() {
            return Err(format!(
                "needs bytes {offset}..{end} but its buffer view has {} bytes",
                bytes.len()
            ));
        }
    }
    out.reserve(count * comps);
    for i in 0..count {
        let base = offset + i * stride;
        for c in 0..cols {
            for r in 0..rows {
                let at = base + c * col_stride + r * csize;
                out.push(read_component(&bytes[at..at + csize], t, normalized));
            }
        }
    }
    Ok(())
}

/// Read a whole accessor, applying sparse substitution. `field` names it in errors.
pub fn read(
    acc: &gltf::Accessor,
    buffers: &[gltf::buffer::Data],
    file: &str,
    field: &str,
) -> Result<AccessorData> {
    read_as(acc, buffers, file, field, acc.normalized())
}

/// [`read`], with normalised integers left as the integers stored (what `accessor.min` and
/// `max` describe).
pub fn read_stored(
    acc: &gltf::Accessor,
    buffers: &[gltf::buffer::Data],
    file: &str,
    field: &str,
) -> Result<AccessorData> {
    read_as(acc, buffers, file, field, false)
}

fn read_as(
    acc: &gltf::Accessor,
    buffers: &[gltf::buffer::Data],
    file: &str,
    field: &str,
    normalized: bool,
) -> Result<AccessorData> {
    let fld = || format!("{field} (accessors[{}])", acc.index());
    let count = acc.count();
    let d = acc.dimensions();
    let t = acc.data_type();
    let comps = components(d);
    if count == 0 {
        return Err(Error::invalid(file, fld(), "accessor count is 0"));
    }
    let mut values = match acc.view() {
        Some(view) => read_view(acc, &view, buffers, file, &fld, normalized)?,
        None => zeros(count, comps, file, &fld)?,
    };
    if let Some(sparse) = acc.sparse() {
        apply_sparse(acc, &sparse, buffers, file, &fld, normalized, &mut values)?;
    }
    Ok(AccessorData {
        count,
        components: comps,
        values,
        data_type: t,
        normalized,
    })
}

/// The elements of `acc` from its buffer `view`, after checking the view's stride and the
/// accessor's offset against glTF's alignment rule (`fld` names the accessor in errors).
fn read_view(
    acc: &gltf::Accessor,
    view: &gltf::buffer::View,
    buffers: &[gltf::buffer::Data],
    file: &str,
    fld: &dyn Fn() -> String,
    normalized: bool,
) -> Result<Vec<f64>> {
    let (d, t) = (acc.dimensions(), acc.data_type());
    let comps = components(d);
    let bytes = view_bytes(view, buffers, file)?;
    let (cols, rows, col_stride) =
        column_layout(d, t).unwrap_or((1, comps, comps * component_size(t)));
    let elem = cols * col_stride - (col_stride - rows * component_size(t));
    let stride = view.stride().unwrap_or(elem);
    // glTF 2.0 accessor data alignment: "the accessor's byteOffset and the buffer
    // view's byteStride MUST be multiples of the size of the accessor's component type".
    let csize = component_size(t);
    if !stride.is_multiple_of(csize) {
        return Err(Error::invalid(
            file,
            format!("bufferViews[{}].byteStride", view.index()),
            format!(
                "{stride} is not a multiple of the {csize}-byte component size of {} \
                 (glTF 2.0 accessor data alignment)",
                fld()
            ),
        ));
    }
    if !(acc.offset().saturating_add(view.offset())).is_multiple_of(csize) {
        return Err(Error::invalid(
            file,
            format!("accessors[{}].byteOffset", acc.index()),
            format!(
                "accessor byteOffset {} + bufferView byteOffset {} is not a multiple of \
                 the {csize}-byte component size (glTF 2.0 accessor data alignment)",
                acc.offset(),
                view.offset()
            ),
        ));
    }
    let mut values = Vec::new();
    read_elements(
        bytes,
        acc.offset(),
        stride,
        acc.count(),
        d,
        t,
        normalized,
        &mut values,
    )
    .map_err(|m| Error::invalid(file, fld(), format!("accessor out of range: {m}")))?;
    Ok(values)
}

/// The values of an accessor without a buffer view: `count` elements of `comps` zeros (sparse
/// values go on top). The size is bounded, since nothing in the file backs it: 2^24
/// components (128 MiB as f64; a 5.6M-vertex VEC3) is far beyond any real mesh's zero-filled
/// attribute.
fn zeros(count: usize, comps: usize, file: &str, fld: &dyn Fn() -> String) -> Result<Vec<f64>> {
    const MAX_VIEWLESS_COMPONENTS: usize = 1 << 24;
    if count.saturating_mul(comps) > MAX_VIEWLESS_COMPONENTS {
        return Err(Error::invalid(
            file,
            fld(),
            format!(
                "count {count} x {comps} components without a bufferView exceeds \
                 {MAX_VIEWLESS_COMPONENTS}"
            ),
        ));
    }
    Ok(vec![0.0; count * comps])
}

/// Substitute `sparse`'s values into `values` (the accessor's elements): its indices must
/// strictly increase and stay below the accessor's count (`fld` names it in errors).
fn apply_sparse(
    acc: &gltf::Accessor,
    sparse: &gltf::accessor::sparse::Sparse,
    buffers: &[gltf::buffer::Data],
    file: &str,
    fld: &dyn Fn() -> String,
    normalized: bool,
    values: &mut [f64],
) -> Result<()> {
    let (count, d, t) = (acc.count(), acc.dimensions(), acc.data_type());
    let comps = components(d);
    let n = sparse.count();
    let idx = sparse.indices();
    let ibytes = view_bytes(&idx.view(), buffers, file)?;
    let it = match idx.index_type() {
        gltf::accessor::sparse::IndexType::U8 => DataType::U8,
        gltf::accessor::sparse::IndexType::U16 => DataType::U16,
        gltf::accessor::sparse::IndexType::U32 => DataType::U32,
    };
    let mut indices = Vec::new();
    read_elements(
        ibytes,
        idx.offset(),
        component_size(it),
        n,
        Dimensions::Scalar,
        it,
        false,
        &mut indices,
    )
    .map_err(|m| Error::invalid(file, format!("{}.sparse.indices", fld()), m))?;
    let vals = sparse.values();
    let vbytes = view_bytes(&vals.view(), buffers, file)?;
    let mut svalues = Vec::new();
    read_elements(
        vbytes,
        vals.offset(),
        comps * component_size(t),
        n,
        d,
        t,
        normalized,
        &mut svalues,
    )
    .map_err(|m| Error::invalid(file, format!("{}.sparse.values", fld()), m))?;
    if n == 0 {
        return Err(Error::invalid(
            file,
            format!("{}.sparse.count", fld()),
            "0 (glTF 2.0 schema accessor.sparse.count: at least 1)",
        ));
    }
    if let Some(k) = indices.windows(2).position(|w| w[1] <= w[0]) {
        return Err(Error::invalid(
            file,
            format!("{}.sparse.indices[{}]", fld(), k + 1),
            format!(
                "{} after {}: sparse indices MUST strictly increase (glTF 2.0 §3.6.2.3)",
                indices[k + 1],
                indices[k]
            ),
        ));
    }
    for (k, &i) in indices.iter().enumerate() {
        let i = i as usize;
        if i >= count {
            return Err(Error::invalid(
                file,
                format!("{}.sparse.indices[{k}]", fld()),
                format!("index {i} >= accessor count {count}"),
            ));
        }
        values[i * comps..(i + 1) * comps].copy_from_slice(&svalues[k * comps..(k + 1) * comps]);
    }
    Ok(())
}

impl AccessorData {
    /// Check the element width, naming the accessor when it is wrong.
    pub fn expect_components(&self, n: usize, file: &str, field: &str) -> Result<()> {
        if self.components != n {
            return Err(Error::invalid(
                file,
                field,
                format!(
                    "expected {n} components per element, found {}",
                    self.components
                ),
            ));
        }
        Ok(())
    }
    /// Error on the first NaN/infinite value.
    pub fn expect_finite(&self, file: &str, field: &str) -> Result<()> {
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                file,
                field,
                format!(
                    "element {} has a NaN or infinite component",
                    i / self.components
                ),
            ));
        }
        Ok(())
    }
    /// All values as f32, in order.
    pub fn to_f32(&self) -> Vec<f32> {
        self.values.iter().map(|&v| v as f32).collect()
    }
    /// Values as `Vec3`s, three at a time (a trailing remainder is dropped).
    pub fn to_vec3(&self) -> Vec<glam::Vec3> {
        self.values
            .chunks_exact(3)
            .map(|c| glam::Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
            .collect()
    }
    /// Values as `Vec4`s, four at a time (a trailing remainder is dropped).
    pub fn to_vec4(&self) -> Vec<glam::Vec4> {
        self.values
            .chunks_exact(4)
            .map(|c| glam::Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32))
            .collect()
    }
}
