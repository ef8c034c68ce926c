//! Triangles and vertices put in the order GPUs and meshoptimizer's codecs like best, in a
//! GLB's own bytes (`optimize`'s compression, before the views are compressed).
//!
//! Based on: meshoptimizer (Arseny Kapoulkine): `meshopt_optimizeVertexCache` (after Tom
//! Forsyth, "Linear-Speed Vertex Cache Optimisation") and `meshopt_optimizeVertexFetchRemap`,
//! through the `meshopt` crate, as gltfpack orders every mesh.
//!
//! Method: where a triangle primitive alone uses its index, attribute and morph target
//! accessors (none sparse), its vertices whose every attribute has the same bytes are welded
//! into one (after quantisation more of them are equal), its triangles are reordered for the
//! vertex cache, and its vertices renumbered in the order the triangles first use them
//! (vertices no triangle uses keep their order, after the rest): every attribute's elements
//! are moved in place, in their own bytes and stride, its count and view cut to the welded
//! vertices, and the indices follow. Other triangle lists are only reordered. The same
//! triangles and vertex data, so nothing moves; the caller learns each renumbering
//! (`new_from_old`, several old vertices to one new where welded) to pair vertices by index.
//! A triangle list without indices that owns its accessors is welded the same way and given
//! indices (16-bit where they fit), as gltfpack does. A primitive that owns its accessors and
//! has one set of influences (JOINTS_0 and WEIGHTS_0 alone) has each vertex's four slots put
//! largest weight first, as gltfpack writes them, where the vertex codec would store the two
//! accessors in fewer bytes so (an estimate: each encoded on its own, as the writer stores an
//! attribute alone in its view; smaller on CesiumMan, larger on rigs whose joints come in
//! ascending order): the same joints with the same weights, so nothing moves.
//! Cost: O(indices + vertices × attributes) per primitive.
//! Limits: a primitive sharing an accessor with another keeps its vertices as they are
//! (renumbering one would scramble the other); welding needs equal bytes (no tolerance).

use gltf::json;
use json::validation::{Checked, USize64};

use crate::error::{Error, Result};

/// Each renumbered primitive: (mesh, primitive, `new_from_old` vertex index).
pub type VertexOrders = Vec<(usize, usize, Vec<u32>)>;

/// Reorder the triangle lists of `root` whose bytes lie in `bin` (buffer 0), and weld and
/// renumber the vertices of primitives that own their accessors (module documentation); a
/// triangle list without indices that owns its accessors gets them (appended to `bin`).
pub fn reorder(root: &mut json::Root, bin: &mut Vec<u8>, file: &str) -> Result<VertexOrders> {
    let uses = accessor_uses(root);
    // (mesh, primitive, index accessor, its other accessors, vertex count).
    let mut lists = Vec::new();
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            if !matches!(prim.mode, Checked::Valid(json::mesh::Mode::Triangles)) {
                continue;
            }
            let Some(vertices) = prim
                .attributes
                .get(&Checked::Valid(json::mesh::Semantic::Positions))
                .and_then(|p| root.accessors.get(p.value()))
                .map(|p| p.count.0 as usize)
            else {
                continue;
            };
            let ia = prim.indices.map(|i| i.value());
            let mut others = primitive_accessors(prim);
            others.retain(|&a| Some(a) != ia);
            lists.push((mi, pi, ia, others, vertices));
        }
    }
    let mut orders = Vec::new();
    for (mi, pi, ia, others, vertices) in lists {
        let owned = ia.is_none_or(|a| uses.get(a) == Some(&1))
            && others
                .iter()
                .all(|&a| uses.get(a) == Some(&1) && slot(root, a).is_some());
        let (index_slot, mut indices) = match ia {
            Some(a) => {
                let Some(s) = slot(root, a) else {
                    continue;
                };
                let indices = read_indices(bin, &s, file, mi, pi)?;
                (Some(s), indices)
            }
            // A list without indices is drawn in vertex order.
            None if owned => (None, (0..vertices as u32).collect()),
            None => continue,
        };
        if indices.iter().any(|&i| i as usize >= vertices) || !indices.len().is_multiple_of(3) {
            continue;
        }
        if owned {
            let new_from_old = renumber(root, bin, &others, &mut indices, vertices, file)?;
            orders.push((mi, pi, new_from_old));
            order_influences(root, bin, mi, pi);
        } else {
            meshopt::optimize::optimize_vertex_cache_in_place(&mut indices, vertices);
        }
        let (Some(ia), Some(index_slot)) = (ia, index_slot) else {
            let a = append_indices(root, bin, &indices);
            root.meshes[mi].primitives[pi].indices = Some(a);
            continue;
        };
        write_indices(bin, &index_slot, &indices);
        // Bounds are optional on indices (glTF asks for them on positions and animation
        // inputs): the rewritten indices go without, as gltfpack writes them.
        let acc = &mut root.accessors[ia];
        (acc.min, acc.max) = (None, None);
    }
    Ok(orders)
}

/// `indices` appended to `bin` (16-bit when every one fits, else 32-bit) with a view and an
/// accessor of their own; the accessor.
fn append_indices(
    root: &mut json::Root,
    bin: &mut Vec<u8>,
    indices: &[u32],
) -> json::Index<json::Accessor> {
    use json::accessor::{ComponentType, GenericComponentType, Type};
    let short = indices.iter().all(|&i| i <= u32::from(u16::MAX));
    bin.resize(bin.len().div_ceil(4) * 4, 0);
    let start = bin.len();
    for &i in indices {
        match short {
            true => bin.extend_from_slice(&(i as u16).to_le_bytes()),
            false => bin.extend_from_slice(&i.to_le_bytes()),
        }
    }
    root.buffer_views.push(json::buffer::View {
        buffer: json::Index::new(0),
        byte_length: USize64((bin.len() - start) as u64),
        byte_offset: (start > 0).then_some(USize64(start as u64)),
        byte_stride: None,
        name: None,
        target: Some(Checked::Valid(json::buffer::Target::ElementArrayBuffer)),
        extensions: None,
        extras: Default::default(),
    });
    let component = match short {
        true => ComponentType::U16,
        false => ComponentType::U32,
    };
    root.accessors.push(json::Accessor {
        buffer_view: Some(json::Index::new(root.buffer_views.len() as u32 - 1)),
        byte_offset: None,
        count: USize64(indices.len() as u64),
        component_type: Checked::Valid(GenericComponentType(component)),
        extensions: None,
        extras: Default::default(),
        type_: Checked::Valid(Type::Scalar),
        min: None,
        max: None,
        name: None,
        normalized: false,
        sparse: None,
    });
    json::Index::new(root.accessors.len() as u32 - 1)
}

/// One primitive's vertices welded (those whose every attribute's bytes are equal become
/// one), its triangles put in vertex cache order and its vertices in fetch order: the
/// attributes (`accessors`) rewritten in place with their new counts, `indices` renumbered;
/// returns `new_from_old`.
fn renumber(
    root: &mut json::Root,
    bin: &mut [u8],
    accessors: &[usize],
    indices: &mut [u32],
    vertices: usize,
    file: &str,
) -> Result<Vec<u32>> {
    let slots: Vec<(usize, Slot)> = accessors
        .iter()
        .filter_map(|&a| slot(root, a).map(|s| (a, s)))
        .collect();
    if slots.iter().any(|(_, s)| s.count != vertices) {
        return Err(Error::invalid(
            file,
            "(reorder)",
            "a primitive's attributes differ in count from its POSITION",
        ));
    }
    let (welded, unique) = weld(bin, &slots, vertices);
    for i in indices.iter_mut() {
        *i = welded[*i as usize];
    }
    meshopt::optimize::optimize_vertex_cache_in_place(indices, unique);
    let fetch = fetch_order(indices, unique);
    for i in indices.iter_mut() {
        *i = fetch[*i as usize];
    }
    let new_from_old: Vec<u32> = welded.iter().map(|&w| fetch[w as usize]).collect();
    for (a, s) in &slots {
        permute(bin, s, &new_from_old, file, *a)?;
        shrink(root, *a, s, unique);
    }
    Ok(new_from_old)
}

/// Primitive `pi` of mesh `mi` (owning its accessors) with one set of influences: each
/// vertex's four JOINTS_0 and WEIGHTS_0 slots put largest weight first (equal weights keep
/// their order) where the vertex codec stores the two in fewer bytes so (module
/// documentation); else as they are.
fn order_influences(root: &mut json::Root, bin: &mut [u8], mi: usize, pi: usize) {
    use super::accessor::{component_size, read_component};
    use super::meshopt_encode::attribute_bytes;
    use gltf::accessor::DataType as T;
    use json::mesh::Semantic;
    let Some(prim) = root.meshes.get(mi).and_then(|m| m.primitives.get(pi)) else {
        return;
    };
    let get = |s: Semantic| prim.attributes.get(&Checked::Valid(s)).map(|a| a.value());
    let (Some(ja), Some(wa)) = (get(Semantic::Joints(0)), get(Semantic::Weights(0))) else {
        return;
    };
    if get(Semantic::Joints(1)).is_some() || get(Semantic::Weights(1)).is_some() {
        return;
    }
    let (Some(js), Some(ws)) = (slot(root, ja), slot(root, wa)) else {
        return;
    };
    // Four unsigned bytes or shorts a vertex for the joints; four normalised bytes or shorts,
    // or floats, for the weights.
    let (Some(jt), Some(wt)) = (vec4_of(&root.accessors[ja]), vec4_of(&root.accessors[wa])) else {
        return;
    };
    let joints_ok = matches!(jt, (T::U8 | T::U16, false));
    let weights_ok = matches!(wt, (T::U8 | T::U16, true) | (T::F32, _));
    if !joints_ok || !weights_ok || js.count != ws.count {
        return;
    }
    let (jc, wc) = (component_size(jt.0), component_size(wt.0));
    if js.element != 4 * jc || ws.element != 4 * wc {
        return;
    }
    // Raw values order as the weights do (normalising is monotonic).
    let weight_of = |b: &[u8]| read_component(b, wt.0, false);
    let elements = |s: &Slot, bin: &[u8]| -> Option<Vec<u8>> {
        let end = s.start + s.stride * s.count.saturating_sub(1) + s.element;
        bin.get(s.start..end)?;
        Some(
            (0..s.count)
                .flat_map(|v| &bin[s.start + v * s.stride..][..s.element])
                .copied()
                .collect(),
        )
    };
    let (Some(joints), Some(weights)) = (elements(&js, bin), elements(&ws, bin)) else {
        return;
    };
    let (mut sorted_joints, mut sorted_weights) = (joints.clone(), weights.clone());
    for v in 0..js.count {
        let w = &weights[v * ws.element..][..ws.element];
        let mut order = [0usize, 1, 2, 3];
        order.sort_by(|&a, &b| {
            weight_of(&w[b * wc..][..wc]).total_cmp(&weight_of(&w[a * wc..][..wc]))
        });
        for (to, &from) in order.iter().enumerate() {
            sorted_joints[v * js.element + to * jc..][..jc]
                .copy_from_slice(&joints[v * js.element + from * jc..][..jc]);
            sorted_weights[v * ws.element + to * wc..][..wc]
                .copy_from_slice(&weights[v * ws.element + from * wc..][..wc]);
        }
    }
    let bytes =
        |j: &[u8], w: &[u8]| attribute_bytes(j, js.element) + attribute_bytes(w, ws.element);
    if bytes(&sorted_joints, &sorted_weights) >= bytes(&joints, &weights) {
        return;
    }
    for (a, s, data) in [(ja, &js, &sorted_joints), (wa, &ws, &sorted_weights)] {
        for (v, e) in data.chunks_exact(s.element).enumerate() {
            bin[s.start + v * s.stride..][..s.element].copy_from_slice(e);
        }
        refresh_bounds(&mut root.accessors[a], data, s.element);
    }
}

/// Accessor `acc`'s component type and whether it is normalised, when it is a VEC4.
fn vec4_of(acc: &json::Accessor) -> Option<(gltf::accessor::DataType, bool)> {
    match (&acc.type_, &acc.component_type) {
        (Checked::Valid(json::accessor::Type::Vec4), Checked::Valid(ct)) => {
            Some((ct.0, acc.normalized))
        }
        _ => None,
    }
}

/// Accessor `acc`'s `min` and `max`, where it declares them, made again from its elements
/// `data` (`element` bytes each) after their components moved between slots: the values as
/// stored (glTF: `normalized` has no effect on them), floats in their shortest form. Bytes,
/// shorts and floats (every value exact as a float); other types are left as they are.
fn refresh_bounds(acc: &mut json::Accessor, data: &[u8], element: usize) {
    use super::accessor::{component_size, json_floats, read_component};
    use gltf::accessor::DataType;
    let (Some(_), Some(_), Checked::Valid(ct)) = (&acc.min, &acc.max, &acc.component_type) else {
        return;
    };
    let t = ct.0;
    let size = component_size(t);
    if t == DataType::U32 || data.is_empty() || element == 0 || !element.is_multiple_of(size) {
        return;
    }
    let values: Vec<f32> = (data.chunks_exact(size))
        .map(|bytes| read_component(bytes, t, false) as f32)
        .collect();
    let (lo, hi) = super::gltf_export::min_max(&values, element / size);
    let bounds = |v: Vec<f32>| match t {
        DataType::F32 => json_floats(&v),
        _ => v
            .into_iter()
            .map(|x| serde_json::Value::from(x as i64))
            .collect(),
    };
    (acc.min, acc.max) = (Some(bounds(lo)), Some(bounds(hi)));
}

/// Per vertex, the index of the first vertex whose every attribute's bytes equal its own,
/// counted among such first vertices; and how many there are.
fn weld(bin: &[u8], slots: &[(usize, Slot)], vertices: usize) -> (Vec<u32>, usize) {
    let mut seen: rustc_hash::FxHashMap<Vec<u8>, u32> = rustc_hash::FxHashMap::default();
    let mut welded = Vec::with_capacity(vertices);
    for v in 0..vertices {
        let key: Vec<u8> = slots
            .iter()
            .flat_map(|(_, s)| {
                let at = s.start + v * s.stride;
                bin[at..at + s.element].iter().copied()
            })
            .collect();
        let next = seen.len() as u32;
        welded.push(*seen.entry(key).or_insert(next));
    }
    (welded, seen.len())
}

/// Accessor `a` (at `s`) holds `count` elements now; a view it alone uses, from its start,
/// is cut to them.
fn shrink(root: &mut json::Root, a: usize, s: &Slot, count: usize) {
    let acc = &mut root.accessors[a];
    acc.count = USize64(count as u64);
    let (Some(v), 0) = (acc.buffer_view, acc.byte_offset.map_or(0, |o| o.0)) else {
        return;
    };
    let alone = root
        .accessors
        .iter()
        .filter(|x| x.buffer_view == Some(v))
        .count()
        == 1;
    if alone && count > 0 {
        let length = match root.buffer_views[v.value()].byte_stride {
            Some(_) => s.stride * count,
            None => s.stride * (count - 1) + s.element,
        };
        root.buffer_views[v.value()].byte_length = USize64(length as u64);
    }
}

/// Where an accessor's elements lie in buffer 0: first byte, element size, stride, count.
struct Slot {
    start: usize,
    element: usize,
    stride: usize,
    count: usize,
}

/// Accessor `a`'s [`Slot`], when it is dense, in buffer 0 and of a known type.
fn slot(root: &json::Root, a: usize) -> Option<Slot> {
    let acc = root.accessors.get(a)?;
    if acc.sparse.is_some() {
        return None;
    }
    let (v, element, stride) = super::accessor::json_layout(root, acc)?;
    let view = &root.buffer_views[v];
    if view.buffer.value() != 0 {
        return None;
    }
    Some(Slot {
        start: (view.byte_offset.map_or(0, |o| o.0) + acc.byte_offset.map_or(0, |o| o.0)) as usize,
        element,
        stride,
        count: acc.count.0 as usize,
    })
}

/// How many times each accessor is named by a primitive (attribute, target or indices), with
/// every other use (skins, animations) counted twice so such an accessor is never "owned".
fn accessor_uses(root: &json::Root) -> Vec<usize> {
    let mut uses = vec![0usize; root.accessors.len()];
    let mut count = |a: usize, n: usize| {
        if let Some(u) = uses.get_mut(a) {
            *u += n;
        }
    };
    for prim in root.meshes.iter().flat_map(|m| &m.primitives) {
        for a in primitive_accessors(prim) {
            count(a, 1);
        }
    }
    for s in &root.skins {
        if let Some(a) = s.inverse_bind_matrices {
            count(a.value(), 2);
        }
    }
    for s in root.animations.iter().flat_map(|a| &a.samplers) {
        count(s.input.value(), 2);
        count(s.output.value(), 2);
    }
    uses
}

/// Every accessor a primitive names: indices, attributes, morph targets.
fn primitive_accessors(prim: &json::mesh::Primitive) -> Vec<usize> {
    let mut out: Vec<usize> = prim.attributes.values().map(|a| a.value()).collect();
    out.extend(prim.indices.map(|a| a.value()));
    for t in prim.targets.iter().flatten() {
        out.extend(
            [t.positions, t.normals, t.tangents]
                .into_iter()
                .flatten()
                .map(|a| a.value()),
        );
    }
    out
}

/// The triangle list at `s` (u8, u16 or u32 indices).
fn read_indices(bin: &[u8], s: &Slot, file: &str, mi: usize, pi: usize) -> Result<Vec<u32>> {
    let end = s.start + s.stride * s.count.saturating_sub(1) + s.element;
    let bytes = bin.get(s.start..end).ok_or_else(|| {
        Error::invalid(
            file,
            format!("meshes[{mi}].primitives[{pi}].indices"),
            "outside the buffer",
        )
    })?;
    Ok((0..s.count)
        .map(|k| {
            let e = &bytes[k * s.stride..k * s.stride + s.element];
            match s.element {
                1 => u32::from(e[0]),
                2 => u32::from(u16::from_le_bytes([e[0], e[1]])),
                _ => u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
            }
        })
        .collect())
}

/// Write `indices` back where [`read_indices`] read them (each fits: they are a permutation
/// of what was there, or renumbered below the same vertex count).
fn write_indices(bin: &mut [u8], s: &Slot, indices: &[u32]) {
    for (k, &i) in indices.iter().enumerate() {
        let at = s.start + k * s.stride;
        match s.element {
            1 => bin[at] = i as u8,
            2 => bin[at..at + 2].copy_from_slice(&(i as u16).to_le_bytes()),
            _ => bin[at..at + 4].copy_from_slice(&i.to_le_bytes()),
        }
    }
}

/// Vertex `old`'s new index: in the order the triangles first use the vertices, the unused
/// ones after them in their old order.
fn fetch_order(indices: &[u32], vertices: usize) -> Vec<u32> {
    let mut new_from_old = vec![u32::MAX; vertices];
    let mut next = 0u32;
    for &i in indices {
        let slot = &mut new_from_old[i as usize];
        if *slot == u32::MAX {
            *slot = next;
            next += 1;
        }
    }
    for slot in &mut new_from_old {
        if *slot == u32::MAX {
            *slot = next;
            next += 1;
        }
    }
    new_from_old
}

/// Move accessor `a`'s elements (at `s`) to their new places (welded vertices to one).
fn permute(bin: &mut [u8], s: &Slot, new_from_old: &[u32], file: &str, a: usize) -> Result<()> {
    let end = s.start + s.stride * s.count.saturating_sub(1) + s.element;
    if s.count != new_from_old.len() || end > bin.len() {
        return Err(Error::invalid(
            file,
            format!("accessors[{a}]"),
            "its count differs from POSITION's, or it lies outside the buffer",
        ));
    }
    let old: Vec<u8> = (0..s.count)
        .flat_map(|k| bin[s.start + k * s.stride..s.start + k * s.stride + s.element].to_vec())
        .collect();
    for (k, &n) in new_from_old.iter().enumerate() {
        let at = s.start + n as usize * s.stride;
        bin[at..at + s.element].copy_from_slice(&old[k * s.element..(k + 1) * s.element]);
    }
    Ok(())
}
