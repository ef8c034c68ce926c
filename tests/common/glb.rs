//! Binary glTF surgery for tests: split a .glb into its JSON and BIN chunks, edit them and
//! pack them again (written from the GLB chapter of the glTF 2.0 spec, independently of the
//! crate's exporter), and locate accessor elements in the BIN chunk to overwrite them.

use serde_json::Value;

/// The JSON chunk (parsed) and the BIN chunk (empty when absent) of a .glb.
pub fn split(glb: &[u8]) -> (Value, Vec<u8>) {
    let u32_at =
        |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().expect("4 bytes")) as usize;
    assert_eq!(&glb[0..4], b"glTF", "not a GLB");
    assert_eq!(u32_at(4), 2, "GLB version");
    assert_eq!(u32_at(8), glb.len(), "GLB header length");
    let json_len = u32_at(12);
    assert_eq!(&glb[16..20], b"JSON");
    let json = serde_json::from_slice(&glb[20..20 + json_len]).expect("JSON chunk");
    let rest = 20 + json_len;
    let bin = if rest < glb.len() {
        let bin_len = u32_at(rest);
        assert_eq!(&glb[rest + 4..rest + 8], b"BIN\0");
        glb[rest + 8..rest + 8 + bin_len].to_vec()
    } else {
        Vec::new()
    };
    (json, bin)
}

/// Pack raw JSON text and BIN bytes into a .glb (each chunk padded to 4 bytes: JSON with
/// spaces, BIN with zeros; no BIN chunk when `bin` is empty).
pub fn pack_raw(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let pad = |n: usize| n.div_ceil(4) * 4;
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // total length, set below
    out.extend_from_slice(&(pad(json.len()) as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.resize(20 + pad(json.len()), b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(pad(bin.len()) as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
        out.resize(out.len() + pad(bin.len()) - bin.len(), 0);
    }
    let total = out.len() as u32;
    out[8..12].copy_from_slice(&total.to_le_bytes());
    out
}

pub fn pack(json: &Value, bin: &[u8]) -> Vec<u8> {
    pack_raw(&serde_json::to_vec(json).expect("serialise"), bin)
}

/// The parsed JSON chunk of a .glb.
pub fn json_of(glb: &[u8]) -> Value {
    split(glb).0
}

/// The `EXT_meshopt_compression` filters a glTF document's buffer views name, in view order.
pub fn meshopt_filters(doc: &Value) -> Vec<&str> {
    (doc["bufferViews"].as_array().into_iter().flatten())
        .filter_map(|v| v["extensions"]["EXT_meshopt_compression"]["filter"].as_str())
        .collect()
}

/// Copy of `glb` with its JSON edited by `edit`.
pub fn edit_json(glb: &[u8], edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let (mut json, bin) = split(glb);
    edit(&mut json);
    pack(&json, &bin)
}

fn component_size(component_type: u64) -> usize {
    match component_type {
        5120 | 5121 => 1,
        5122 | 5123 => 2,
        5125 | 5126 => 4,
        t => panic!("component type {t}"),
    }
}

fn components(ty: &str) -> usize {
    match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" | "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        t => panic!("accessor type {t}"),
    }
}

/// Byte offset in the BIN chunk of component `component` of element `element` of accessor
/// `accessor`, and the component size (matrices of 1-/2-byte types are not handled).
pub fn element_offset(
    json: &Value,
    accessor: usize,
    element: usize,
    component: usize,
) -> (usize, usize) {
    let acc = &json["accessors"][accessor];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().expect("bufferView") as usize];
    let size = component_size(acc["componentType"].as_u64().expect("componentType"));
    let comps = components(acc["type"].as_str().expect("type"));
    assert!(component < comps && element < acc["count"].as_u64().expect("count") as usize);
    let stride = view["byteStride"]
        .as_u64()
        .map_or(comps * size, |s| s as usize);
    let base = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    (base + element * stride + component * size, size)
}

/// Copy of `glb` with one accessor component overwritten by `bytes` (little-endian, the
/// component's size).
pub fn patch(
    glb: &[u8],
    accessor: usize,
    element: usize,
    component: usize,
    bytes: &[u8],
) -> Vec<u8> {
    let (mut json, mut bin) = split(glb);
    let (at, size) = element_offset(&json, accessor, element, component);
    assert_eq!(bytes.len(), size, "patch size");
    bin[at..at + size].copy_from_slice(bytes);
    refresh_bounds(&mut json, &bin, accessor);
    pack(&json, &bin)
}

/// The accessor's declared `min` and `max` (when it has them) set to its data's, so a patch
/// tests what it plants and not a stale bound (glTF 2.0 §3.6.2.5). Bounds are left as they
/// were when the data hold a NaN or an infinity, which the patch is then about.
fn refresh_bounds(json: &mut Value, bin: &[u8], accessor: usize) {
    let acc = &json["accessors"][accessor];
    if acc.get("min").is_none() && acc.get("max").is_none() {
        return;
    }
    let comps = components(acc["type"].as_str().expect("type"));
    let count = acc["count"].as_u64().expect("count") as usize;
    let float = acc["componentType"].as_u64() == Some(5126);
    let signed = acc["componentType"].as_u64();
    let mut lo = vec![f64::INFINITY; comps];
    let mut hi = vec![f64::NEG_INFINITY; comps];
    for e in 0..count {
        for c in 0..comps {
            let (at, size) = element_offset(json, accessor, e, c);
            let b = &bin[at..at + size];
            let v = match signed {
                Some(5120) => b[0] as i8 as f64,
                Some(5121) => b[0] as f64,
                Some(5122) => i16::from_le_bytes([b[0], b[1]]) as f64,
                Some(5123) => u16::from_le_bytes([b[0], b[1]]) as f64,
                Some(5125) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                _ => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            };
            if !v.is_finite() {
                return;
            }
            lo[c] = lo[c].min(v);
            hi[c] = hi[c].max(v);
        }
    }
    let to_json = |v: &[f64]| -> Value {
        v.iter()
            .map(|&x| {
                if float {
                    serde_json::json!(x)
                } else {
                    serde_json::json!(x as i64)
                }
            })
            .collect()
    };
    let acc = json["accessors"][accessor]
        .as_object_mut()
        .expect("an accessor object");
    if acc.contains_key("min") {
        acc.insert("min".into(), to_json(&lo));
    }
    if acc.contains_key("max") {
        acc.insert("max".into(), to_json(&hi));
    }
}

/// Read one accessor component as f64 (unnormalised integers as their value).
pub fn read_component(glb: &[u8], accessor: usize, element: usize, component: usize) -> f64 {
    let (json, bin) = split(glb);
    let (at, size) = element_offset(&json, accessor, element, component);
    let b = &bin[at..at + size];
    match json["accessors"][accessor]["componentType"].as_u64() {
        Some(5121) => b[0] as f64,
        Some(5123) => u16::from_le_bytes([b[0], b[1]]) as f64,
        Some(5125) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        Some(5126) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        t => panic!("component type {t:?}"),
    }
}

/// Index of an accessor named by a JSON pointer (e.g. `/skins/0/inverseBindMatrices`).
pub fn accessor_at(json: &Value, pointer: &str) -> usize {
    json.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no accessor at {pointer}")) as usize
}

/// A copy of `model` (a GLB) in `dir` whose skin-0 joint `joint` has its inverse bind matrix's
/// x translation moved by `metres`; the path, and the joint's node index in skinview's scene.
pub fn planted_bind_move(
    model: &std::path::Path,
    joint: usize,
    metres: f32,
    dir: &std::path::Path,
) -> (std::path::PathBuf, usize) {
    let bytes = std::fs::read(model).expect("read the model");
    let json = json_of(&bytes);
    let ibm = accessor_at(&json, "/skins/0/inverseBindMatrices");
    let x = read_component(&bytes, ibm, joint, 12) as f32;
    let moved = patch(&bytes, ibm, joint, 12, &(x + metres).to_le_bytes());
    std::fs::create_dir_all(dir).expect("make the folder");
    let path = dir.join("planted.glb");
    std::fs::write(&path, moved).expect("write the planted copy");
    let scene = skinview::io::load(model).expect("load the model");
    (path, scene.skins[0].joints[joint])
}
