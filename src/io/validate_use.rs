//! The glTF 2.0 rules on how objects are used, beyond [`super::validate`]'s document rules:
//! what an accessor may be given its use, where a buffer view's stride is allowed, and how a
//! skin's joints hang in the hierarchy. They are the Khronos glTF-Validator's (its codes are
//! named in each message so a user can look them up), checked before any buffer is read, the
//! first broken rule being the error:
//!
//! 11. Top-level arrays, when present, are not empty, and nor are an animation's `channels`
//!     and `samplers` (schema: `minItems: 1`; `EMPTY_ENTITY`).
//! 12. An accessor's `byteOffset` needs a `bufferView`; only (unsigned) bytes and shorts are
//!     `normalized`; its `byteOffset`, and its offset in the buffer, are multiples of its
//!     component size (of 4 for a matrix); the view's stride holds an element; its elements
//!     lie inside the view; `min` and `max` have one entry per component; a sparse accessor
//!     overrides at most `count` elements, from views without a stride (glTF 2.0 §3.6.2.4
//!     "Data Alignment", §3.6.2.3 "Sparse Accessors").
//! 13. A buffer view has a `byteLength` of at least 1 and a `byteStride` of at most its
//!     length, and only vertex data has a stride (an `ELEMENT_ARRAY_BUFFER` view has none)
//!     (§3.6.2.4, schema `bufferView`).
//! 14. An animation channel does not animate the TRS of a node with a `matrix`; a sampler's
//!     `input` is float SCALAR with `min` and `max`, at least 2 keys for CUBICSPLINE; its
//!     views have no stride; a channel's output has the format and count its path and
//!     interpolation ask (§3.11 "Animations").
//! 15. A skin's inverse bind matrices' view has no stride; its joints have a common root,
//!     which `skeleton`, when given, is; a node with a skin is in a scene that holds the
//!     skin's joints (§3.7.3 "Skins").
//!
//! Cost: one pass over the document's objects, O(nodes × depth + accessors + channels).

use gltf::json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::animation::{Interpolation, Property};
use json::validation::Checked;

use super::accessor::{component_size, components, element_size};
use crate::error::{Error, Result};

/// The error for `field` of `file`.
fn invalid(file: &str, field: String, message: String) -> Result<()> {
    Err(Error::invalid(file, field, message))
}

/// Check rules 12–15 on `root` (schema-validated; rule 11 is [`empty_arrays`], on the JSON).
pub fn validate_use(root: &json::Root, file: &str) -> Result<()> {
    check_accessors(root, file)?;
    check_buffer_views(root, file)?;
    check_animations(root, file)?;
    check_skins(root, file)
}

/// The type and component type of accessor `a`, when it exists and both are valid.
fn format_of(root: &json::Root, a: usize) -> Option<(Type, ComponentType)> {
    let acc = root.accessors.get(a)?;
    match (acc.type_, acc.component_type) {
        (Checked::Valid(t), Checked::Valid(GenericComponentType(c))) => Some((t, c)),
        _ => None,
    }
}

/// Which accessors a mesh, a skin or an animation uses (what an import reads).
pub fn used_accessors(root: &json::Root) -> Vec<bool> {
    let mut used = vec![false; root.accessors.len()];
    let mut mark = |i: usize| {
        if let Some(u) = used.get_mut(i) {
            *u = true;
        }
    };
    for mesh in &root.meshes {
        for p in &mesh.primitives {
            p.attributes.values().for_each(|a| mark(a.value()));
            if let Some(i) = p.indices {
                mark(i.value());
            }
            for t in p.targets.iter().flatten() {
                for a in [t.positions, t.normals, t.tangents].into_iter().flatten() {
                    mark(a.value());
                }
            }
        }
    }
    for skin in &root.skins {
        if let Some(m) = skin.inverse_bind_matrices {
            mark(m.value());
        }
    }
    for anim in &root.animations {
        for s in &anim.samplers {
            mark(s.input.value());
            mark(s.output.value());
        }
    }
    used
}

/// What accessor `a` is used as, for messages: ` (used as skins[0].inverseBindMatrices)`, or
/// nothing when it is unused.
pub fn used_as(root: &json::Root, a: usize) -> String {
    let mut uses = Vec::new();
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, p) in mesh.primitives.iter().enumerate() {
            let prim = format!("meshes[{mi}].primitives[{pi}]");
            for (semantic, acc) in &p.attributes {
                if acc.value() == a {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "?".into(),
                    };
                    uses.push(format!("{prim}.attributes.{name}"));
                }
            }
            if p.indices.is_some_and(|i| i.value() == a) {
                uses.push(format!("{prim}.indices"));
            }
            for (ti, t) in p.targets.iter().flatten().enumerate() {
                for (key, acc) in [
                    ("POSITION", t.positions),
                    ("NORMAL", t.normals),
                    ("TANGENT", t.tangents),
                ] {
                    if acc.is_some_and(|x| x.value() == a) {
                        uses.push(format!("{prim}.targets[{ti}].{key}"));
                    }
                }
            }
        }
    }
    for (si, skin) in root.skins.iter().enumerate() {
        if skin.inverse_bind_matrices.is_some_and(|m| m.value() == a) {
            uses.push(format!("skins[{si}].inverseBindMatrices"));
        }
    }
    for (ai, anim) in root.animations.iter().enumerate() {
        for (si, s) in anim.samplers.iter().enumerate() {
            for (key, acc) in [("input", s.input), ("output", s.output)] {
                if acc.value() == a {
                    uses.push(format!("animations[{ai}].samplers[{si}].{key}"));
                }
            }
        }
    }
    match uses.len() {
        0 => String::new(),
        1..=3 => format!(" (used as {})", uses.join(", ")),
        n => format!(" (used as {} and {} more)", uses[..3].join(", "), n - 3),
    }
}

/// Rule 11 on the file's JSON: which top-level arrays are present but empty, and which
/// animations have empty `channels` or `samplers` (gltf-json reads `[]` as absent).
pub fn empty_arrays(json: &[u8], file: &str) -> Result<()> {
    use serde::Deserialize;
    use std::collections::BTreeMap;

    /// The length of an array, or None for any other value (read without keeping it).
    struct Len(Option<usize>);
    impl<'de> Deserialize<'de> for Len {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Len, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Len;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> std::result::Result<Len, A::Error> {
                    let mut n = 0;
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                        n += 1;
                    }
                    Ok(Len(Some(n)))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> std::result::Result<Len, A::Error> {
                    while map
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {}
                    Ok(Len(None))
                }
                fn visit_bool<E>(self, _: bool) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
                fn visit_i64<E>(self, _: i64) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
                fn visit_u64<E>(self, _: u64) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
                fn visit_f64<E>(self, _: f64) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
                fn visit_str<E>(self, _: &str) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
                fn visit_unit<E>(self) -> std::result::Result<Len, E> {
                    Ok(Len(None))
                }
            }
            d.deserialize_any(V)
        }
    }
    #[derive(Deserialize)]
    struct Animation {
        channels: Option<Len>,
        samplers: Option<Len>,
    }
    // Not a JSON object, or not glTF's shape: the full parse says what is wrong.
    let Ok(top) = serde_json::from_slice::<BTreeMap<String, Len>>(json) else {
        return Ok(());
    };
    for (key, len) in &top {
        if len.0 == Some(0) {
            return invalid(
                file,
                key.clone(),
                "an empty array (glTF 2.0 schema: when present it has at least one item; \
                 EMPTY_ENTITY)"
                    .into(),
            );
        }
    }
    #[derive(Deserialize)]
    struct Animations {
        #[serde(default)]
        animations: Vec<Option<Animation>>,
    }
    let Ok(Animations { animations }) = serde_json::from_slice::<Animations>(json) else {
        return Ok(());
    };
    for (ai, anim) in animations.iter().enumerate() {
        let Some(anim) = anim else { continue };
        for (key, len) in [("channels", &anim.channels), ("samplers", &anim.samplers)] {
            if len.as_ref().and_then(|l| l.0) == Some(0) {
                return invalid(
                    file,
                    format!("animations[{ai}].{key}"),
                    "an empty array (glTF 2.0 schema animation: at least one; EMPTY_ENTITY)".into(),
                );
            }
        }
    }
    Ok(())
}

/// Rule 12 on accessors, each against its buffer view.
fn check_accessors(root: &json::Root, file: &str) -> Result<()> {
    for (ai, acc) in root.accessors.iter().enumerate() {
        let field = format!("accessors[{ai}]");
        let Some((t, c)) = format_of(root, ai) else {
            continue; // schema validation reports it, or it is unused (a warning)
        };
        let csize = component_size(c);
        let offset = acc.byte_offset.map_or(0, |o| o.0 as usize);
        if acc.byte_offset.is_some() && acc.buffer_view.is_none() {
            return invalid(
                file,
                format!("{field}.byteOffset"),
                format!(
                    "given without a bufferView{} (glTF 2.0 schema accessor: byteOffset depends \
                     on bufferView; UNSATISFIED_DEPENDENCY)",
                    used_as(root, ai)
                ),
            );
        }
        if acc.normalized && !normalizable(c) {
            return invalid(
                file,
                format!("{field}.normalized"),
                format!(
                    "true on {} components{} (glTF 2.0 §3.6.2.2: only bytes and shorts are \
                     normalized; ACCESSOR_NORMALIZED_INVALID)",
                    component_name(c),
                    used_as(root, ai)
                ),
            );
        }
        let matrix = matches!(t, Type::Mat2 | Type::Mat3 | Type::Mat4);
        if !offset.is_multiple_of(csize) || (matrix && !offset.is_multiple_of(4)) {
            return invalid(
                file,
                format!("{field}.byteOffset"),
                format!(
                    "{offset} is not a multiple of {}{} (glTF 2.0 §3.6.2.4: an accessor's \
                     offset is a multiple of its component size, of 4 for a matrix; \
                     ACCESSOR_OFFSET_ALIGNMENT)",
                    if matrix { 4 } else { csize },
                    used_as(root, ai)
                ),
            );
        }
        for (key, bound) in [("min", &acc.min), ("max", &acc.max)] {
            let n = bound.as_ref().and_then(|v| v.as_array()).map(Vec::len);
            if bound.is_some() && n != Some(components(t)) {
                return invalid(
                    file,
                    format!("{field}.{key}"),
                    format!(
                        "{} for {} components (glTF 2.0 schema accessor.{key}: one per \
                         component)",
                        n.map_or("not an array".to_string(), |n| format!("{n} entries")),
                        components(t)
                    ),
                );
            }
        }
        if let Some(view_index) = acc.buffer_view {
            check_accessor_in_view(root, ai, view_index.value(), (t, c), file)?;
        }
        if let Some(sparse) = &acc.sparse {
            if sparse.count.0 > acc.count.0 {
                return invalid(
                    file,
                    format!("{field}.sparse.count"),
                    format!(
                        "{} overrides for {} elements (glTF 2.0 §3.6.2.3: at most the \
                         accessor's count; ACCESSOR_SPARSE_COUNT_OUT_OF_RANGE)",
                        sparse.count.0, acc.count.0
                    ),
                );
            }
            for (key, view) in [
                ("indices", sparse.indices.buffer_view),
                ("values", sparse.values.buffer_view),
            ] {
                if stride_of(root, view.value()).is_some() {
                    return invalid(
                        file,
                        format!("{field}.sparse.{key}.bufferView"),
                        format!(
                            "bufferViews[{}] has a byteStride (glTF 2.0 §3.6.2.4: only vertex \
                             attributes are strided; BUFFER_VIEW_INVALID_BYTE_STRIDE)",
                            view.value()
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Rule 12 for accessor `ai` of format `(t, c)` in buffer view `vi`: aligned in the buffer,
/// a stride that holds an element, and every element inside the view.
fn check_accessor_in_view(
    root: &json::Root,
    ai: usize,
    vi: usize,
    (t, c): (Type, ComponentType),
    file: &str,
) -> Result<()> {
    let Some(view) = root.buffer_views.get(vi) else {
        return Ok(()); // schema validation reports the index
    };
    let acc = &root.accessors[ai];
    let field = format!("accessors[{ai}]");
    let csize = component_size(c);
    let offset = acc.byte_offset.map_or(0, |o| o.0 as usize);
    let total = offset.saturating_add(view.byte_offset.map_or(0, |o| o.0 as usize));
    if !total.is_multiple_of(csize) {
        return invalid(
            file,
            field,
            format!(
                "starts at byte {total} of its buffer, not a multiple of its {csize}-byte \
                 component{} (glTF 2.0 §3.6.2.4; ACCESSOR_TOTAL_OFFSET_ALIGNMENT)",
                used_as(root, ai)
            ),
        );
    }
    let elem = element_size(t, c);
    let stride = view.byte_stride.map_or(elem, |s| s.0);
    if stride < elem {
        return invalid(
            file,
            field,
            format!(
                "bufferViews[{vi}].byteStride {stride} is less than its {elem}-byte \
                 element{} (glTF 2.0 §3.6.2.4; ACCESSOR_SMALL_BYTESTRIDE)",
                used_as(root, ai)
            ),
        );
    }
    let count = acc.count.0 as usize;
    let end = match count {
        0 => Some(offset),
        n => stride
            .checked_mul(n - 1)
            .and_then(|s| s.checked_add(elem))
            .and_then(|s| s.checked_add(offset)),
    };
    let view_len = view.byte_length.0 as usize;
    if end.is_none_or(|end| end > view_len) {
        let field = match acc.byte_offset {
            Some(o) if o.0 > 0 => format!("{field}.byteOffset"),
            _ => field,
        };
        return invalid(
            file,
            field,
            format!(
                "{count} elements from byte {offset} (stride {stride}) do not fit in \
                 bufferViews[{vi}] of {view_len} bytes{} (glTF 2.0 §3.6.2.4; ACCESSOR_TOO_LONG)",
                used_as(root, ai)
            ),
        );
    }
    Ok(())
}

/// Whether components of type `c` may be `normalized`: (unsigned) bytes and shorts.
fn normalizable(c: ComponentType) -> bool {
    matches!(
        c,
        ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16
    )
}

fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

fn component_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// The `byteStride` of buffer view `vi`, if it has one.
fn stride_of(root: &json::Root, vi: usize) -> Option<usize> {
    root.buffer_views.get(vi)?.byte_stride.map(|s| s.0)
}

/// The stride of accessor `a`'s buffer view, if it has a view with one.
fn accessor_stride(root: &json::Root, a: usize) -> Option<(usize, usize)> {
    let vi = root.accessors.get(a)?.buffer_view?.value();
    stride_of(root, vi).map(|s| (vi, s))
}

/// Rule 13 on buffer views.
fn check_buffer_views(root: &json::Root, file: &str) -> Result<()> {
    for (vi, view) in root.buffer_views.iter().enumerate() {
        let field = format!("bufferViews[{vi}]");
        let len = view.byte_length.0;
        if len == 0 {
            return invalid(
                file,
                format!("{field}.byteLength"),
                "0 (glTF 2.0 schema bufferView.byteLength: at least 1; VALUE_NOT_IN_RANGE)".into(),
            );
        }
        let Some(stride) = view.byte_stride.map(|s| s.0 as u64) else {
            continue;
        };
        if stride > len {
            return invalid(
                file,
                format!("{field}.byteStride"),
                format!(
                    "{stride} is more than the view's byteLength {len} (glTF 2.0 §3.6.2.4; \
                     BUFFER_VIEW_TOO_BIG_BYTE_STRIDE)"
                ),
            );
        }
        if view.target == Some(Checked::Valid(json::buffer::Target::ElementArrayBuffer)) {
            return invalid(
                file,
                format!("{field}.byteStride"),
                "given on an ELEMENT_ARRAY_BUFFER view (glTF 2.0 §3.6.2.4: only vertex \
                 attributes are strided; BUFFER_VIEW_INVALID_BYTE_STRIDE)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// Rule 14 on animations: targets, sampler inputs and each channel's output.
fn check_animations(root: &json::Root, file: &str) -> Result<()> {
    for (ai, anim) in root.animations.iter().enumerate() {
        for (si, s) in anim.samplers.iter().enumerate() {
            check_sampler(root, ai, si, s, file)?;
        }
        for (ci, ch) in anim.channels.iter().enumerate() {
            let field = format!("animations[{ai}].channels[{ci}]");
            let Checked::Valid(path) = ch.target.path else {
                continue; // schema validation reports it
            };
            let node = ch.target.node.value();
            if path != Property::MorphTargetWeights
                && root.nodes.get(node).is_some_and(|n| n.matrix.is_some())
            {
                return invalid(
                    file,
                    format!("{field}.target"),
                    format!(
                        "animates the TRS of node {node}, which has a matrix (glTF 2.0 §3.5.3: \
                         a node with a matrix is not animated; \
                         ANIMATION_CHANNEL_TARGET_NODE_MATRIX)"
                    ),
                );
            }
            if let Some(s) = anim.samplers.get(ch.sampler.value()) {
                check_output(root, node, path, s, format!("{field}.sampler"), file)?;
            }
        }
    }
    Ok(())
}

/// Rule 14 on sampler `si` of animation `ai`: its input's format, bounds and count, and no
/// strides.
fn check_sampler(
    root: &json::Root,
    ai: usize,
    si: usize,
    s: &json::animation::Sampler,
    file: &str,
) -> Result<()> {
    let field = format!("animations[{ai}].samplers[{si}]");
    let input = s.input.value();
    for (key, a) in [("input", input), ("output", s.output.value())] {
        if let Some((vi, _)) = accessor_stride(root, a) {
            return invalid(
                file,
                format!("{field}.{key}"),
                format!(
                    "accessors[{a}] lies in bufferViews[{vi}], which has a byteStride (glTF 2.0 \
                     §3.11: animation data are tightly packed; \
                     ANIMATION_SAMPLER_ACCESSOR_WITH_BYTESTRIDE)"
                ),
            );
        }
    }
    let Some(acc) = root.accessors.get(input) else {
        return Ok(()); // schema validation reports the index
    };
    if let Some(format) = format_of(root, input)
        && format != (Type::Scalar, ComponentType::F32)
    {
        return invalid(
            file,
            format!("{field}.input"),
            format!(
                "accessors[{input}] is {} {}, not SCALAR FLOAT (glTF 2.0 §3.11: key times \
                 are float seconds; ANIMATION_SAMPLER_INPUT_ACCESSOR_INVALID_FORMAT)",
                type_name(format.0),
                component_name(format.1)
            ),
        );
    }
    if acc.min.is_none() || acc.max.is_none() {
        return invalid(
            file,
            format!("{field}.input"),
            format!(
                "accessors[{input}] has no min and max (glTF 2.0 §3.11: an input accessor \
                 declares them; ANIMATION_SAMPLER_INPUT_ACCESSOR_WITHOUT_BOUNDS)"
            ),
        );
    }
    if s.interpolation == Checked::Valid(Interpolation::CubicSpline) && acc.count.0 < 2 {
        return invalid(
            file,
            format!("{field}.input"),
            format!(
                "{} key for CUBICSPLINE, which needs at least 2 (glTF 2.0 Appendix C; \
                 ANIMATION_SAMPLER_INPUT_ACCESSOR_TOO_FEW_ELEMENTS)",
                acc.count.0
            ),
        );
    }
    Ok(())
}

/// Rule 14 on a channel's output (named `field`, the channel's `sampler`): the format its
/// `path` takes, and one value (three for CUBICSPLINE; times the morph targets for weights)
/// per key.
fn check_output(
    root: &json::Root,
    node: usize,
    path: Property,
    s: &json::animation::Sampler,
    field: String,
    file: &str,
) -> Result<()> {
    let output = s.output.value();
    let (Some((t, c)), Some(input)) =
        (format_of(root, output), root.accessors.get(s.input.value()))
    else {
        return Ok(());
    };
    let normalized = root.accessors[output].normalized;
    // Rotations and weights may be normalised integers (glTF 2.0 §3.11's output table).
    let float_or_normalized = c == ComponentType::F32 || (normalized && normalizable(c));
    let ok = match path {
        Property::Translation | Property::Scale => (t, c) == (Type::Vec3, ComponentType::F32),
        Property::Rotation => t == Type::Vec4 && float_or_normalized,
        Property::MorphTargetWeights => t == Type::Scalar && float_or_normalized,
    };

    let path_name = match path {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    };
    if !ok {
        return invalid(
            file,
            field,
            format!(
                "its output accessors[{output}] is {} {}{}, which {path_name} cannot take \
                 (glTF 2.0 §3.11: VEC3 FLOAT for translation and scale, VEC4 FLOAT or \
                 normalized integers for rotation, SCALAR for weights; \
                 ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_FORMAT)",
                type_name(t),
                if normalized { "normalized " } else { "" },
                component_name(c)
            ),
        );
    }
    let per_key = if s.interpolation == Checked::Valid(Interpolation::CubicSpline) {
        3
    } else {
        1
    };
    let targets = match path {
        Property::MorphTargetWeights => root
            .nodes
            .get(node)
            .and_then(|n| n.mesh)
            .and_then(|m| root.meshes.get(m.value()))
            .and_then(|m| m.primitives.first())
            .and_then(|p| p.targets.as_ref())
            .map_or(1, |t| t.len().max(1)),
        _ => 1,
    };
    let want = input.count.0.saturating_mul(per_key * targets as u64);
    let have = root.accessors[output].count.0;
    if have != want {
        return invalid(
            file,
            field,
            format!(
                "its output accessors[{output}] has {have} elements; {} key{}{} need {want} \
                 (glTF 2.0 §3.11; ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_COUNT)",
                input.count.0,
                if input.count.0 == 1 { "" } else { "s" },
                match (per_key, targets) {
                    (1, 1) => String::new(),
                    (3, 1) => " of CUBICSPLINE (in-tangent, value, out-tangent)".into(),
                    (1, n) => format!(" of {n} morph weights"),
                    (_, n) => format!(" of CUBICSPLINE triples of {n} morph weights"),
                }
            ),
        );
    }
    Ok(())
}

/// Rule 15 on skins: packed matrices, a common root that `skeleton` names when given, and a
/// scene that holds the joints of every skinned node in it.
fn check_skins(root: &json::Root, file: &str) -> Result<()> {
    let parent = super::validate::parents(root);
    // The root above `n`, None in a cycle (the hierarchy rules report that).
    let top = |mut n: usize| {
        for _ in 0..=root.nodes.len() {
            match parent.get(n).copied().flatten() {
                Some(p) => n = p,
                None => return Some(n),
            }
        }
        None
    };
    let is_ancestor_or_self = |a: usize, mut n: usize| {
        for _ in 0..=root.nodes.len() {
            if n == a {
                return true;
            }
            match parent.get(n).copied().flatten() {
                Some(p) => n = p,
                None => return false,
            }
        }
        false
    };
    for (si, skin) in root.skins.iter().enumerate() {
        let field = format!("skins[{si}]");
        if let Some(m) = skin.inverse_bind_matrices
            && let Some((vi, _)) = accessor_stride(root, m.value())
        {
            return invalid(
                file,
                format!("{field}.inverseBindMatrices"),
                format!(
                    "accessors[{}] lies in bufferViews[{vi}], which has a byteStride (glTF 2.0 \
                     §3.7.3: the matrices are tightly packed; SKIN_IBM_ACCESSOR_WITH_BYTESTRIDE)",
                    m.value()
                ),
            );
        }
        let joints: Vec<usize> = skin.joints.iter().map(|j| j.value()).collect();
        let Some(&first) = joints.first() else {
            continue; // the document rules report an empty skin
        };
        if joints
            .iter()
            .any(|&j| j >= root.nodes.len() || top(j).is_none())
        {
            continue; // schema validation reports the index, the hierarchy rules a cycle
        }
        let root_of_first = top(first);
        if let Some(&j) = joints.iter().find(|&&j| top(j) != root_of_first) {
            return invalid(
                file,
                format!("{field}.joints"),
                format!(
                    "joints {first} and {j} are in different hierarchies (glTF 2.0 §3.7.3: the \
                     joints have a common root; SKIN_NO_COMMON_ROOT)"
                ),
            );
        }
        if let Some(s) = skin.skeleton {
            let s = s.value();
            if let Some(&j) = joints.iter().find(|&&j| !is_ancestor_or_self(s, j)) {
                return invalid(
                    file,
                    format!("{field}.skeleton"),
                    format!(
                        "node {s} is not an ancestor of joint {j} (glTF 2.0 §3.7.3: skeleton is \
                         the joints' common root; SKIN_SKELETON_INVALID)"
                    ),
                );
            }
        }
    }
    check_skinned_nodes_in_scenes(root, file, &top)
}

/// Rule 15's last part: a node with a skin is in a scene that also holds the skin's joints.
fn check_skinned_nodes_in_scenes(
    root: &json::Root,
    file: &str,
    top: &dyn Fn(usize) -> Option<usize>,
) -> Result<()> {
    for scene in &root.scenes {
        let roots: std::collections::HashSet<usize> =
            scene.nodes.iter().map(|n| n.value()).collect();
        for (ni, node) in root.nodes.iter().enumerate() {
            let Some(skin) = node.skin.and_then(|s| root.skins.get(s.value())) else {
                continue;
            };
            if !top(ni).is_some_and(|t| roots.contains(&t)) {
                continue;
            }
            let outside = skin
                .joints
                .iter()
                .map(|j| j.value())
                .find(|&j| j < root.nodes.len() && top(j).is_some_and(|t| !roots.contains(&t)));
            if let Some(j) = outside {
                return invalid(
                    file,
                    format!("nodes[{ni}]"),
                    format!(
                        "a skinned node in a scene that does not hold its joint {j} (glTF 2.0 \
                         §3.7.3: the joints are in the node's scene; NODE_SKIN_NO_SCENE)"
                    ),
                );
            }
        }
    }
    Ok(())
}
