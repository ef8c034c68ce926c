//! The glTF JSON the writers emit, without the properties that only restate the schema's
//! defaults (an animation sampler's `"interpolation": "LINEAR"`, a material's
//! `"alphaMode": "OPAQUE"`, a sampler's `"wrapS": 10497`, ...): gltf-json writes them whenever
//! the document had them or its types default to them, and a clip of 60 channels pays 1.4 KB for
//! `interpolation` alone. A reader takes the absent property as the default, so the document
//! reads back the same. Whole floats are written as integers (`0`, not `0.0`).
//!
//! Based on: the glTF 2.0 JSON schema's `default` values (Khronos, `specification/2.0/schema`).
//! Only properties of core objects are listed, by where they sit: an extension's property of
//! the same name may mean something else (`KHR_texture_transform.texCoord` overrides the
//! texture's, so a 0 there is not a default).
//! Cost: one pass over the JSON tree.

use serde_json::Value;

use crate::error::{Error, Result};

/// (where, property, default): `where` is the JSON path of the object with array indices
/// left out (`materials.pbrMetallicRoughness` for `materials[3].pbrMetallicRoughness`).
const DEFAULTS: &[(&str, &str, Default)] = &[
    ("accessors", "byteOffset", Default::Number(0.0)),
    ("accessors", "normalized", Default::Bool(false)),
    (
        "animations.samplers",
        "interpolation",
        Default::Str("LINEAR"),
    ),
    ("bufferViews", "byteOffset", Default::Number(0.0)),
    ("materials", "alphaMode", Default::Str("OPAQUE")),
    ("materials", "alphaCutoff", Default::Number(0.5)),
    ("materials", "doubleSided", Default::Bool(false)),
    (
        "materials",
        "emissiveFactor",
        Default::Numbers(&[0.0, 0.0, 0.0]),
    ),
    (
        "materials.emissiveTexture",
        "texCoord",
        Default::Number(0.0),
    ),
    ("materials.normalTexture", "texCoord", Default::Number(0.0)),
    ("materials.normalTexture", "scale", Default::Number(1.0)),
    (
        "materials.occlusionTexture",
        "texCoord",
        Default::Number(0.0),
    ),
    (
        "materials.occlusionTexture",
        "strength",
        Default::Number(1.0),
    ),
    (
        "materials.pbrMetallicRoughness",
        "baseColorFactor",
        Default::Numbers(&[1.0, 1.0, 1.0, 1.0]),
    ),
    (
        "materials.pbrMetallicRoughness",
        "metallicFactor",
        Default::Number(1.0),
    ),
    (
        "materials.pbrMetallicRoughness",
        "roughnessFactor",
        Default::Number(1.0),
    ),
    (
        "materials.pbrMetallicRoughness.baseColorTexture",
        "texCoord",
        Default::Number(0.0),
    ),
    (
        "materials.pbrMetallicRoughness.metallicRoughnessTexture",
        "texCoord",
        Default::Number(0.0),
    ),
    ("meshes.primitives", "mode", Default::Number(4.0)),
    ("nodes", "rotation", Default::Numbers(&[0.0, 0.0, 0.0, 1.0])),
    ("nodes", "scale", Default::Numbers(&[1.0, 1.0, 1.0])),
    ("nodes", "translation", Default::Numbers(&[0.0, 0.0, 0.0])),
    ("samplers", "wrapS", Default::Number(10497.0)),
    ("samplers", "wrapT", Default::Number(10497.0)),
];

/// A schema default value.
enum Default {
    Number(f64),
    Numbers(&'static [f64]),
    Bool(bool),
    Str(&'static str),
}

impl Default {
    fn matches(&self, v: &Value) -> bool {
        match (self, v) {
            (Default::Number(d), Value::Number(n)) => n.as_f64() == Some(*d),
            (Default::Numbers(d), Value::Array(a)) => {
                a.len() == d.len() && a.iter().zip(d.iter()).all(|(x, d)| x.as_f64() == Some(*d))
            }
            (Default::Bool(d), Value::Bool(b)) => b == d,
            (Default::Str(d), Value::String(s)) => s == d,
            _ => false,
        }
    }
}

/// Whether `key: v` of the object at `path` (a JSON path as `dropped_properties` writes it,
/// indices and all: `materials[0].pbrMetallicRoughness`) restates the schema's default.
pub(crate) fn is_schema_default(path: &str, key: &str, v: &Value) -> bool {
    let mut place = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => in_index = true,
            ']' => in_index = false,
            c if !in_index => place.push(c),
            _ => {}
        }
    }
    DEFAULTS
        .iter()
        .any(|(at, k, d)| *at == place && *k == key && d.matches(v))
}

/// `root` serialised without the properties that restate the schema's defaults (`file`
/// names it in an error).
pub(crate) fn document_bytes(root: &gltf::json::Root, file: &str) -> Result<Vec<u8>> {
    let cannot =
        |e: serde_json::Error| Error::invalid(file, "(json)", format!("cannot serialise: {e}"));
    // Through the text, not `to_value`: gltf-json's f32s print as the shortest decimal that
    // reads back as the same f32, and a `Value` would widen them to f64 and print every digit.
    let text = serde_json::to_vec(root).map_err(cannot)?;
    let mut doc: Value = serde_json::from_slice(&text).map_err(cannot)?;
    strip(&mut doc, "");
    serde_json::to_vec(&doc).map_err(cannot)
}

/// Remove the defaults from `v`, the value at `place` (indices left out).
fn strip(v: &mut Value, place: &str) {
    match v {
        Value::Object(o) => {
            o.retain(|k, x| {
                !DEFAULTS
                    .iter()
                    .any(|(at, key, d)| *at == place && key == k && d.matches(x))
            });
            for (k, x) in o.iter_mut() {
                let inner = match place.is_empty() {
                    true => k.clone(),
                    false => format!("{place}.{k}"),
                };
                strip(x, &inner);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, place)),
        Value::Number(n) => {
            // A whole float as an integer: `0` reads back as the same number as `0.0`. Not -0.0
            // (its sign would go) nor past 2^53 (not every integer there is a float).
            if let Some(x) = n.as_f64().filter(|x| n.is_f64() && x.fract() == 0.0)
                && x.abs() < 9.0e15
                && !(x == 0.0 && x.is_sign_negative())
            {
                *v = Value::from(x as i64);
            }
        }
        _ => {}
    }
}
