//! Binary glTF 2.0 (.glb) export of a [`Scene`]: everything the importer reads, so a scene
//! survives export → import (used for native rigs, and by the import tests to build files
//! from code; a glTF file is exported from its own document by `gltf_repack`). The document
//! is assembled, then parsed into gltf-json's typed `Root`, validated by the gltf crate and
//! written by its serialiser.
//!
//! Written: nodes (name, children, TRS or `matrix`, mesh, skin, `weights`) with scene node
//! indices as glTF node indices and every parentless node a root of the one scene; meshes
//! (POSITION with min/max, NORMAL, TANGENT, u32 indices, the mode of the topology, one
//! material per distinct base colour, `width / 4` JOINTS_n/WEIGHTS_n sets, morph targets with
//! POSITION/NORMAL/TANGENT deltas, `mesh.weights`); skins (joints, optional inverse bind
//! matrices); animations with one sampler per channel (times, values in the [`Sampler`]
//! layout, interpolation, target path). Joints are written as u8 or u16 and weights as float
//! or normalised u8/u16 ([`ExportOptions`]); normalised weights are quantised per vertex with
//! largest-remainder rounding so that each vertex's integers sum exactly to 255 / 65535.
//! Each accessor has its own buffer view, aligned to 4 bytes, in one buffer (the BIN chunk).
//!
//! Limits: no textures, cameras, lights, extensions or sparse accessors; `source_index` and
//! the imported file's choice of displayed scene are not kept (every parentless node becomes
//! a root); strips, fans and loops were converted to lists on import and stay lists. Data
//! glTF cannot hold is an error, not a silent change: empty attribute or index arrays (glTF
//! accessors need at least one element), non-finite node transforms or weights, joint
//! indices too large for the chosen type, negative weights in a normalised type, arrays
//! whose lengths disagree, primitives of one mesh with different morph target counts and
//! channels on `matrix` nodes. Float weights are written exactly as stored (not
//! renormalised). Two repairs, because glTF requires them (the Khronos glTF-Validator checks
//! both): an animation without channels is written with one channel holding the first
//! animatable node at its rest translation (one key at 0 s), so the clip, its name and the
//! animation indices are kept and nothing moves; normals and tangent directions are written
//! at unit length (tangent `w` as ±1), a zero or non-finite one, which no direction fits, as
//! +Z (tangent +X). And one arrangement: a skin whose joints lie in separate hierarchies
//! (glTF asks for a common root) gets one, a node named [`COMMON_ROOT_NAME`] with no
//! transform, added last (no index moves) above those hierarchies' roots.

use std::path::Path;

use glam::Vec3;
use serde_json::{Map, Value, json};

use crate::anim::{Interpolation, Path as AnimPath, Sampler};
use crate::error::{Error, Result};
use crate::scene::{Mesh, Node, Primitive, Scene, SkinWeights, Topology};
pub use crate::skin::weights::{JointEncoding, WeightEncoding};

/// How [`export_glb`] encodes skin data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// Component type of JOINTS_n.
    pub joints: JointEncoding,
    /// Component type of WEIGHTS_n.
    pub weights: WeightEncoding,
    /// `false` omits the accessor, which glTF defines as identity matrices (the scene's own
    /// inverse bind matrices are then not written).
    pub write_inverse_bind_matrices: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            joints: JointEncoding::U16,
            weights: WeightEncoding::F32,
            write_inverse_bind_matrices: true,
        }
    }
}

/// Largest-remainder quantisation of each vertex's weights to integers summing exactly
/// to `total` (a vertex whose weights are all zero stays all zero).
pub(super) fn quantise(file: &str, field: &str, sw: &SkinWeights, total: u32) -> Result<Vec<u32>> {
    let width = sw.width;
    let mut out = vec![0u32; sw.weights.len()];
    let mut order: Vec<usize> = Vec::with_capacity(width);
    for (v, (ws, qs)) in sw
        .weights
        .chunks_exact(width)
        .zip(out.chunks_exact_mut(width))
        .enumerate()
    {
        if let Some(&bad) = ws.iter().find(|w| !w.is_finite() || **w < 0.0) {
            return Err(Error::invalid(
                file,
                format!("{field}.attributes.WEIGHTS_0"),
                format!("vertex {v} has weight {bad}, which a normalised type cannot hold"),
            ));
        }
        let sum: f64 = ws.iter().map(|&w| w as f64).sum();
        if sum == 0.0 {
            continue;
        }
        let scaled: Vec<f64> = ws.iter().map(|&w| w as f64 / sum * total as f64).collect();
        let mut assigned: i64 = 0;
        for (q, s) in qs.iter_mut().zip(&scaled) {
            *q = (s.floor() as u32).min(total);
            assigned += *q as i64;
        }
        // Hand the missing units to the largest fractional parts (non-zero weights only);
        // rounding error in `scaled` can leave the sum one unit over, taken from the smallest.
        order.clear();
        order.extend((0..width).filter(|&i| ws[i] > 0.0));
        order.sort_by(|&a, &b| {
            (scaled[b] - scaled[b].floor()).total_cmp(&(scaled[a] - scaled[a].floor()))
        });
        let mut missing = total as i64 - assigned;
        let mut k = 0;
        while missing > 0 && !order.is_empty() {
            qs[order[k % order.len()]] += 1;
            missing -= 1;
            k += 1;
        }
        for &i in order.iter().rev() {
            if missing >= 0 {
                break;
            }
            if qs[i] > 0 {
                qs[i] -= 1;
                missing += 1;
            }
        }
    }
    Ok(out)
}

/// glTF component type of joint indices of type `t`.
pub(super) fn joint_component(t: JointEncoding) -> u32 {
    match t {
        JointEncoding::U8 => UNSIGNED_BYTE,
        JointEncoding::U16 => UNSIGNED_SHORT,
    }
}

/// JOINTS_`set` of `sw` as little-endian bytes of type `t`; an index that does not fit is an
/// error naming `field` and the vertex.
pub(super) fn joint_bytes(
    file: &str,
    field: &str,
    sw: &SkinWeights,
    set: usize,
    t: JointEncoding,
) -> Result<Vec<u8>> {
    let width = sw.width;
    let limit = match t {
        JointEncoding::U8 => u8::MAX as u32,
        JointEncoding::U16 => u16::MAX as u32,
    };
    let mut out = Vec::with_capacity(sw.vertex_count() * 8);
    for (v, slots) in sw.joints.chunks_exact(width).enumerate() {
        for &j in &slots[set * 4..set * 4 + 4] {
            if j > limit {
                return Err(Error::invalid(
                    file,
                    field,
                    format!("vertex {v}: joint index {j} does not fit the chosen joint type"),
                ));
            }
            match t {
                JointEncoding::U8 => out.push(j as u8),
                JointEncoding::U16 => out.extend_from_slice(&(j as u16).to_le_bytes()),
            }
        }
    }
    Ok(out)
}

/// WEIGHTS_`set` of `sw` as little-endian bytes of type `t` and that type's glTF component
/// type: floats exactly as stored, or the integers of `quantised` ([`quantise`] over all
/// sets, required for the normalised types).
pub(super) fn weight_bytes(
    sw: &SkinWeights,
    set: usize,
    t: WeightEncoding,
    quantised: Option<&[u32]>,
) -> (Vec<u8>, u32) {
    let width = sw.width;
    let slots = |v: usize| v * width + set * 4..v * width + set * 4 + 4;
    let n = sw.vertex_count();
    match (t, quantised) {
        (WeightEncoding::Unorm8, Some(q)) => (
            (0..n)
                .flat_map(|v| q[slots(v)].iter().map(|&x| x as u8))
                .collect(),
            UNSIGNED_BYTE,
        ),
        (WeightEncoding::Unorm16, Some(q)) => (
            (0..n)
                .flat_map(|v| q[slots(v)].iter().flat_map(|&x| (x as u16).to_le_bytes()))
                .collect(),
            UNSIGNED_SHORT,
        ),
        _ => (
            f32_bytes((0..n).flat_map(|v| sw.weights[slots(v)].iter().copied())),
            FLOAT,
        ),
    }
}

const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Export `scene` as a binary glTF file in memory.
pub fn export_glb(scene: &Scene, options: &ExportOptions) -> Result<Vec<u8>> {
    let mut w = Writer {
        file: &scene.name,
        options,
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
        materials: Vec::new(),
        children: {
            let mut c = vec![Vec::new(); scene.nodes.len()];
            for (i, n) in scene.nodes.iter().enumerate() {
                if let Some(p) = n.parent.and_then(|p| c.get_mut(p)) {
                    p.push(i);
                }
            }
            c
        },
    };
    let nodes = scene
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| w.node(i, n))
        .collect::<Result<Vec<_>>>()?;
    let mut nodes = nodes;
    let mut roots: Vec<usize> = scene
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.parent.is_none())
        .map(|(i, _)| i)
        .collect();
    let split = split_skin_roots(scene);
    if !split.is_empty() {
        // A common root, last so no index moves, holding the skins' separate hierarchies.
        roots.retain(|r| !split.contains(r));
        roots.push(nodes.len());
        nodes.push(json!({ "name": COMMON_ROOT_NAME, "children": split }));
    }
    let meshes = scene
        .meshes
        .iter()
        .enumerate()
        .map(|(i, m)| w.mesh(i, m))
        .collect::<Result<Vec<_>>>()?;
    let skins = (0..scene.skins.len())
        .map(|i| w.skin(scene, i))
        .collect::<Result<Vec<_>>>()?;
    let animations = (0..scene.animations.len())
        .map(|i| w.animation(scene, i))
        .collect::<Result<Vec<_>>>()?;

    let mut scene_json = Map::new();
    scene_json.insert("name".into(), json!(scene.name));
    if !roots.is_empty() {
        scene_json.insert("nodes".into(), json!(roots));
    }
    let mut root = Map::new();
    root.insert(
        "asset".into(),
        json!({ "version": "2.0", "generator": concat!("skinview ", env!("CARGO_PKG_VERSION")) }),
    );
    root.insert("scene".into(), json!(0));
    root.insert("scenes".into(), json!([Value::Object(scene_json)]));
    let mut put = |key: &str, v: Vec<Value>| {
        if !v.is_empty() {
            root.insert(key.into(), Value::Array(v));
        }
    };
    put("nodes", nodes);
    put("meshes", meshes);
    put("skins", skins);
    put("animations", animations);
    put(
        "materials",
        w.materials
            .iter()
            .map(|c| json!({ "pbrMetallicRoughness": { "baseColorFactor": c } }))
            .collect(),
    );
    put("accessors", std::mem::take(&mut w.accessors));
    put("bufferViews", std::mem::take(&mut w.views));
    if !w.bin.is_empty() {
        root.insert("buffers".into(), json!([{ "byteLength": w.bin.len() }]));
    }
    // Through gltf-json's typed document: the gltf crate's schema validation checks what this
    // writer built, and its serialiser writes it.
    let typed: gltf::json::Root = serde_json::from_value(Value::Object(root))
        .map_err(|e| Error::invalid(&scene.name, "(json)", format!("not a glTF document: {e}")))?;
    let typed = gltf::Document::from_json(typed)
        .map_err(|e| Error::invalid(&scene.name, "(json)", format!("not valid glTF: {e}")))?
        .into_json();
    let json = super::json_defaults::document_bytes(&typed, &scene.name)?;
    pack_glb(&json, &w.bin).ok_or_else(|| {
        Error::invalid(
            &scene.name,
            "(glb)",
            "file would exceed the 4 GiB GLB limit",
        )
    })
}

/// The name of the node the writer adds above skin joints that have no common root.
pub const COMMON_ROOT_NAME: &str = "skinview common root";

/// The roots of the hierarchies a skin's joints are spread over, for skins whose joints have
/// no common root (glTF 2.0 §3.7.3 asks for one; the Khronos glTF-Validator's
/// SKIN_NO_COMMON_ROOT): sorted, empty when every skin has one.
fn split_skin_roots(scene: &Scene) -> Vec<usize> {
    let top = |mut n: usize| {
        // Nodes come parents first (the scene builder's order), so this ends.
        while let Some(p) = scene.nodes.get(n).and_then(|node| node.parent) {
            n = p;
        }
        n
    };
    let mut split = std::collections::BTreeSet::new();
    for skin in &scene.skins {
        let tops: std::collections::BTreeSet<usize> = skin.joints.iter().map(|&j| top(j)).collect();
        if tops.len() > 1 {
            split.extend(tops);
        }
    }
    split.into_iter().collect()
}

/// Export `scene` and write it to `path`.
pub fn write_glb(scene: &Scene, options: &ExportOptions, path: &Path) -> Result<()> {
    let bytes = export_glb(scene, options)?;
    super::output::write_file(path, &bytes)
}

/// GLB container: 12-byte header, JSON chunk padded with spaces, BIN chunk (when non-empty)
/// padded with zeros, every chunk a multiple of 4 bytes. `None` past the u32 size limit.
pub(super) fn pack_glb(json: &[u8], bin: &[u8]) -> Option<Vec<u8>> {
    let pad = |n: usize| n.div_ceil(4) * 4;
    let (json_len, bin_len) = (pad(json.len()), pad(bin.len()));
    let total = 12 + 8 + json_len + if bin.is_empty() { 0 } else { 8 + bin_len };
    let total_u32 = u32::try_from(total).ok()?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total_u32.to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.resize(20 + json_len, b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    Some(out)
}

struct Writer<'a> {
    file: &'a str,
    options: &'a ExportOptions,
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    /// Distinct base colours; a primitive's material is its colour's index.
    materials: Vec<[f32; 4]>,
    /// Each node's children, in node order (made once: a scan per node was quadratic, 79 %
    /// of `weights` on a 100,000-bone chain).
    children: Vec<Vec<usize>>,
}

/// One accessor to add: little-endian element bytes and its description.
struct Acc<'b> {
    bytes: Vec<u8>,
    count: usize,
    component_type: u32,
    ty: &'b str,
    normalized: bool,
    min_max: Option<(Vec<f32>, Vec<f32>)>,
    target: Option<u32>,
}

fn f32_bytes(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// Component-wise min and max of `comps`-wide elements.
pub(super) fn min_max(values: &[f32], comps: usize) -> (Vec<f32>, Vec<f32>) {
    let mut lo = vec![f32::INFINITY; comps];
    let mut hi = vec![f32::NEG_INFINITY; comps];
    for e in values.chunks_exact(comps) {
        for (i, &x) in e.iter().enumerate() {
            lo[i] = lo[i].min(x);
            hi[i] = hi[i].max(x);
        }
    }
    (lo, hi)
}

fn vec3_floats(v: &[Vec3]) -> Vec<f32> {
    v.iter().flat_map(|p| p.to_array()).collect()
}

/// Directions at unit length, as glTF's NORMAL requires (a zero or non-finite one as `or`).
fn unit_vec3_floats(v: &[Vec3], or: Vec3) -> Vec<f32> {
    v.iter()
        .flat_map(|d| d.try_normalize().unwrap_or(or).to_array())
        .collect()
}

fn all_finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Writer<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::invalid(self.file, field, message)
    }

    /// Append an accessor with its own 4-byte-aligned buffer view; returns its index.
    fn push(&mut self, field: &str, a: Acc) -> Result<usize> {
        if a.count == 0 {
            return Err(self.err(field, "no elements (glTF accessors need at least one)"));
        }
        self.bin.resize(self.bin.len().div_ceil(4) * 4, 0);
        let mut view =
            json!({ "buffer": 0, "byteOffset": self.bin.len(), "byteLength": a.bytes.len() });
        if let Some(t) = a.target {
            view["target"] = json!(t);
        }
        self.bin.extend_from_slice(&a.bytes);
        self.views.push(view);
        let mut acc = json!({ "bufferView": self.views.len() - 1, "componentType": a.component_type, "count": a.count, "type": a.ty });
        if a.normalized {
            acc["normalized"] = json!(true);
        }
        if let Some((lo, hi)) = a.min_max {
            if !all_finite(&lo) || !all_finite(&hi) {
                return Err(self.err(field, "NaN or infinite value"));
            }
            acc["min"] = super::accessor::json_floats(&lo);
            acc["max"] = super::accessor::json_floats(&hi);
        }
        self.accessors.push(acc);
        Ok(self.accessors.len() - 1)
    }

    /// Float accessor of `comps`-wide elements (`ty` "SCALAR", "VEC3", ...).
    fn floats(
        &mut self,
        field: &str,
        values: &[f32],
        comps: usize,
        ty: &str,
        with_min_max: bool,
        target: Option<u32>,
    ) -> Result<usize> {
        if !all_finite(values) {
            return Err(self.err(field, "NaN or infinite value"));
        }
        if comps == 0 || !values.len().is_multiple_of(comps) {
            return Err(self.err(
                field,
                format!(
                    "{} floats is not a whole number of {comps}-component elements",
                    values.len()
                ),
            ));
        }
        let min_max = with_min_max.then(|| min_max(values, comps));
        self.push(
            field,
            Acc {
                bytes: f32_bytes(values.iter().copied()),
                count: values.len() / comps,
                component_type: FLOAT,
                ty,
                normalized: false,
                min_max,
                target,
            },
        )
    }

    fn node(&mut self, index: usize, node: &Node) -> Result<Value> {
        let field = format!("nodes[{index}]");
        let mut n = Map::new();
        if let Some(name) = &node.name {
            n.insert("name".into(), json!(name));
        }
        let children = self.children.get(index).map_or(&[][..], Vec::as_slice);
        if !children.is_empty() {
            n.insert("children".into(), json!(children));
        }
        match node.matrix {
            Some(m) => {
                let cols = m.to_cols_array();
                if !all_finite(&cols) {
                    return Err(self.err(format!("{field}.matrix"), "NaN or infinite element"));
                }
                n.insert("matrix".into(), json!(cols));
            }
            None => {
                let (t, r, s) = (
                    node.rest.translation.to_array(),
                    node.rest.rotation.to_array(),
                    node.rest.scale.to_array(),
                );
                if !all_finite(&t) || !all_finite(&r) || !all_finite(&s) {
                    return Err(self.err(&field, "NaN or infinite translation/rotation/scale"));
                }
                if t != [0.0; 3] {
                    n.insert("translation".into(), json!(t));
                }
                if r != [0.0, 0.0, 0.0, 1.0] {
                    n.insert("rotation".into(), json!(r));
                }
                if s != [1.0; 3] {
                    n.insert("scale".into(), json!(s));
                }
            }
        }
        if let Some(m) = node.mesh {
            n.insert("mesh".into(), json!(m));
        }
        if let Some(s) = node.skin {
            n.insert("skin".into(), json!(s));
        }
        if let Some(w) = &node.morph_weights {
            if !all_finite(w) {
                return Err(self.err(format!("{field}.weights"), "NaN or infinite weight"));
            }
            n.insert("weights".into(), json!(w));
        }
        Ok(Value::Object(n))
    }

    fn mesh(&mut self, index: usize, mesh: &Mesh) -> Result<Value> {
        let mut m = Map::new();
        if let Some(name) = &mesh.name {
            m.insert("name".into(), json!(name));
        }
        let targets = mesh.morph_target_count();
        if mesh
            .primitives
            .iter()
            .any(|p| p.morph_targets.len() != targets)
        {
            return Err(self.err(
                format!("meshes[{index}].primitives"),
                "primitives have different numbers of morph targets (glTF needs the same)",
            ));
        }
        if !mesh.default_morph_weights.is_empty() && mesh.default_morph_weights.len() != targets {
            return Err(self.err(
                format!("meshes[{index}].weights"),
                format!(
                    "{} weights for {targets} morph targets",
                    mesh.default_morph_weights.len()
                ),
            ));
        }
        let prims = mesh
            .primitives
            .iter()
            .enumerate()
            .map(|(pi, p)| self.primitive(&format!("meshes[{index}].primitives[{pi}]"), p))
            .collect::<Result<Vec<_>>>()?;
        m.insert("primitives".into(), Value::Array(prims));
        if !mesh.default_morph_weights.is_empty() {
            if !all_finite(&mesh.default_morph_weights) {
                return Err(self.err(format!("meshes[{index}].weights"), "NaN or infinite weight"));
            }
            m.insert("weights".into(), json!(mesh.default_morph_weights));
        }
        Ok(Value::Object(m))
    }

    fn primitive(&mut self, field: &str, p: &Primitive) -> Result<Value> {
        let n = p.vertex_count();
        let file = self.file;
        let check = |len: usize, name: &str| -> Result<()> {
            if len == n {
                Ok(())
            } else {
                Err(Error::invalid(
                    file,
                    format!("{field}.attributes.{name}"),
                    format!("{len} elements but POSITION has {n}"),
                ))
            }
        };
        let mut attrs = Map::new();
        let pos = self.floats(
            &format!("{field}.attributes.POSITION"),
            &vec3_floats(&p.positions),
            3,
            "VEC3",
            true,
            Some(ARRAY_BUFFER),
        )?;
        attrs.insert("POSITION".into(), json!(pos));
        if let Some(normals) = &p.normals {
            check(normals.len(), "NORMAL")?;
            let a = self.floats(
                &format!("{field}.attributes.NORMAL"),
                &unit_vec3_floats(normals, Vec3::Z),
                3,
                "VEC3",
                false,
                Some(ARRAY_BUFFER),
            )?;
            attrs.insert("NORMAL".into(), json!(a));
        }
        if let Some(tangents) = &p.tangents {
            check(tangents.len(), "TANGENT")?;
            // glTF's TANGENT: a unit direction, and w = ±1 (the bitangent's sign).
            let v: Vec<f32> = tangents
                .iter()
                .flat_map(|t| {
                    let d = t.truncate().try_normalize().unwrap_or(Vec3::X);
                    let w = if t.w < 0.0 { -1.0 } else { 1.0 };
                    d.extend(w).to_array()
                })
                .collect();
            let a = self.floats(
                &format!("{field}.attributes.TANGENT"),
                &v,
                4,
                "VEC4",
                false,
                Some(ARRAY_BUFFER),
            )?;
            attrs.insert("TANGENT".into(), json!(a));
        }
        if let Some(sw) = &p.skin_weights {
            self.skin_weights(field, n, sw, &mut attrs)?;
        }
        let mut targets = Vec::with_capacity(p.morph_targets.len());
        for (ti, t) in p.morph_targets.iter().enumerate() {
            let tf = format!("{field}.targets[{ti}]");
            let mut tj = Map::new();
            for (name, data, min_max) in [
                ("POSITION", &t.positions, true),
                ("NORMAL", &t.normals, false),
                ("TANGENT", &t.tangents, false),
            ] {
                if let Some(d) = data {
                    if d.len() != n {
                        return Err(self.err(
                            format!("{tf}.{name}"),
                            format!("{} elements but POSITION has {n}", d.len()),
                        ));
                    }
                    let a = self.floats(
                        &format!("{tf}.{name}"),
                        &vec3_floats(d),
                        3,
                        "VEC3",
                        min_max,
                        Some(ARRAY_BUFFER),
                    )?;
                    tj.insert(name.into(), json!(a));
                }
            }
            targets.push(Value::Object(tj));
        }
        if let Some(&bad) = p.indices.iter().find(|&&i| i as usize >= n) {
            return Err(self.err(
                format!("{field}.indices"),
                format!("index {bad} >= vertex count {n}"),
            ));
        }
        let ibytes: Vec<u8> = p.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let indices = self.push(
            &format!("{field}.indices"),
            Acc {
                bytes: ibytes,
                count: p.indices.len(),
                component_type: UNSIGNED_INT,
                ty: "SCALAR",
                normalized: false,
                min_max: None,
                target: Some(ELEMENT_ARRAY_BUFFER),
            },
        )?;
        let mode = match p.topology {
            Topology::Points => 0,
            Topology::Lines => 1,
            Topology::Triangles => 4,
        };
        if !all_finite(&p.base_color) {
            return Err(self.err(format!("{field}.material"), "NaN or infinite base colour"));
        }
        let material = match self
            .materials
            .iter()
            .position(|c| c.map(f32::to_bits) == p.base_color.map(f32::to_bits))
        {
            Some(i) => i,
            None => {
                self.materials.push(p.base_color);
                self.materials.len() - 1
            }
        };
        let mut pj =
            json!({ "attributes": attrs, "indices": indices, "mode": mode, "material": material });
        if !targets.is_empty() {
            pj["targets"] = Value::Array(targets);
        }
        Ok(pj)
    }

    /// JOINTS_n / WEIGHTS_n sets of a primitive.
    fn skin_weights(
        &mut self,
        field: &str,
        n: usize,
        sw: &SkinWeights,
        attrs: &mut Map<String, Value>,
    ) -> Result<()> {
        let width = sw.width;
        if width == 0
            || !width.is_multiple_of(4)
            || sw.joints.len() != n * width
            || sw.weights.len() != n * width
        {
            return Err(self.err(
                format!("{field}.attributes.JOINTS_0"),
                format!(
                    "skin weights of width {width} with {} joints and {} weights for {n} vertices",
                    sw.joints.len(),
                    sw.weights.len()
                ),
            ));
        }
        if let Some(k) = sw.weights.iter().position(|&w| w < 0.0) {
            return Err(self.err(
                format!("{field}.attributes.WEIGHTS_0"),
                format!(
                    "vertex {} has a negative weight: a native rig's muscle bones (extra weights \
                     on top of 1) have no glTF form (weights there are 0 or more and sum to 1); \
                     export the rig as .rig.json",
                    k / width
                ),
            ));
        }
        let quantised = match self.options.weights {
            WeightEncoding::F32 => None,
            WeightEncoding::Unorm8 => Some(quantise(self.file, field, sw, 255)?),
            WeightEncoding::Unorm16 => Some(quantise(self.file, field, sw, 65535)?),
        };
        for set in 0..width / 4 {
            let jf = format!("{field}.attributes.JOINTS_{set}");
            let jbytes = joint_bytes(self.file, &jf, sw, set, self.options.joints)?;
            let ja = self.push(
                &jf,
                Acc {
                    bytes: jbytes,
                    count: n,
                    component_type: joint_component(self.options.joints),
                    ty: "VEC4",
                    normalized: false,
                    min_max: None,
                    target: Some(ARRAY_BUFFER),
                },
            )?;
            let wf = format!("{field}.attributes.WEIGHTS_{set}");
            let (bytes, component_type) =
                weight_bytes(sw, set, self.options.weights, quantised.as_deref());
            let wa = self.push(
                &wf,
                Acc {
                    bytes,
                    count: n,
                    component_type,
                    ty: "VEC4",
                    normalized: self.options.weights != WeightEncoding::F32,
                    min_max: None,
                    target: Some(ARRAY_BUFFER),
                },
            )?;
            attrs.insert(format!("JOINTS_{set}"), json!(ja));
            attrs.insert(format!("WEIGHTS_{set}"), json!(wa));
        }
        Ok(())
    }

    fn skin(&mut self, scene: &Scene, index: usize) -> Result<Value> {
        let skin = &scene.skins[index];
        let field = format!("skins[{index}]");
        if skin.joints.is_empty() {
            return Err(self.err(format!("{field}.joints"), "skin has no joints"));
        }
        if let Some(&bad) = skin.joints.iter().find(|&&j| j >= scene.nodes.len()) {
            return Err(self.err(
                format!("{field}.joints"),
                format!("node {bad} out of range"),
            ));
        }
        let mut s = Map::new();
        if let Some(name) = &skin.name {
            s.insert("name".into(), json!(name));
        }
        s.insert("joints".into(), json!(skin.joints));
        if self.options.write_inverse_bind_matrices {
            let f = format!("{field}.inverseBindMatrices");
            if skin.joint_from_bind.len() != skin.joints.len() {
                return Err(self.err(
                    &f,
                    format!(
                        "{} matrices for {} joints",
                        skin.joint_from_bind.len(),
                        skin.joints.len()
                    ),
                ));
            }
            let v: Vec<f32> = skin
                .joint_from_bind
                .iter()
                .flat_map(|m| m.to_cols_array())
                .collect();
            let a = self.floats(&f, &v, 16, "MAT4", false, None)?;
            s.insert("inverseBindMatrices".into(), json!(a));
        }
        Ok(Value::Object(s))
    }

    /// For an animation without channels (`animations[index]`), which glTF forbids: one
    /// channel keeping the first node without a `matrix` at its rest translation, one key at
    /// 0 s, so nothing moves. Its channel and sampler (sampler 0).
    fn still_channel(&mut self, scene: &Scene, index: usize) -> Result<(Value, Value)> {
        let field = format!("animations[{index}]");
        let Some((node, n)) = scene
            .nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.matrix.is_none())
        else {
            return Err(self.err(
                field,
                "animates nothing, and no node without a matrix can hold the one channel glTF \
                 requires",
            ));
        };
        let sf = format!("{field}.samplers[0]");
        let input = self.floats(&format!("{sf}.input"), &[0.0], 1, "SCALAR", true, None)?;
        let rest = n.rest.translation.to_array();
        let output = self.floats(&format!("{sf}.output"), &rest, 3, "VEC3", false, None)?;
        Ok((
            json!({ "sampler": 0, "target": { "node": node, "path": "translation" } }),
            json!({ "input": input, "output": output, "interpolation": "LINEAR" }),
        ))
    }

    fn animation(&mut self, scene: &Scene, index: usize) -> Result<Value> {
        let anim = &scene.animations[index];
        let mut channels = Vec::with_capacity(anim.channels.len());
        let mut samplers = Vec::with_capacity(anim.channels.len());
        for (ci, ch) in anim.channels.iter().enumerate() {
            let sf = format!("animations[{index}].samplers[{ci}]");
            if ch.node >= scene.nodes.len() {
                return Err(self.err(
                    format!("animations[{index}].channels[{ci}].target.node"),
                    format!("node {} out of range", ch.node),
                ));
            }
            if scene.nodes[ch.node].matrix.is_some() {
                return Err(self.err(
                    format!("animations[{index}].channels[{ci}].target.node"),
                    format!(
                        "node {} has a matrix, which glTF does not allow to animate",
                        ch.node
                    ),
                ));
            }
            let s: &Sampler = &ch.sampler;
            let per_key = if s.interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if s.components == 0 || s.values.len() != s.times_s.len() * per_key * s.components {
                return Err(self.err(
                    format!("{sf}.output"),
                    format!(
                        "{} values for {} keys of {} with {} components",
                        s.values.len(),
                        s.times_s.len(),
                        s.interpolation.name(),
                        s.components
                    ),
                ));
            }
            let input = self.floats(&format!("{sf}.input"), &s.times_s, 1, "SCALAR", true, None)?;
            let (comps, ty) = match ch.path {
                AnimPath::Translation | AnimPath::Scale => (3, "VEC3"),
                AnimPath::Rotation => (4, "VEC4"),
                AnimPath::Weights => (1, "SCALAR"),
            };
            if comps != 1 && s.components != comps {
                return Err(self.err(
                    format!("{sf}.output"),
                    format!(
                        "{} components for a {} channel",
                        s.components,
                        ch.path.name()
                    ),
                ));
            }
            // Outputs that are all exactly codes are stored as them.
            let output = match crate::anim::snorm::OutputCodes::of(ch.path, &s.values) {
                Some(codes) => self.push(
                    &format!("{sf}.output"),
                    Acc {
                        count: s.values.len() / comps,
                        bytes: codes.to_le_bytes(),
                        component_type: codes.component_type(),
                        ty,
                        normalized: true,
                        min_max: None,
                        target: None,
                    },
                )?,
                None => self.floats(&format!("{sf}.output"), &s.values, comps, ty, false, None)?,
            };
            samplers.push(json!({ "input": input, "output": output, "interpolation": s.interpolation.name() }));
            channels.push(
                json!({ "sampler": ci, "target": { "node": ch.node, "path": ch.path.name() } }),
            );
        }
        if channels.is_empty() {
            let (channel, sampler) = self.still_channel(scene, index)?;
            channels.push(channel);
            samplers.push(sampler);
        }
        let mut a = Map::new();
        if let Some(name) = &anim.name {
            a.insert("name".into(), json!(name));
        }
        a.insert("channels".into(), Value::Array(channels));
        a.insert("samplers".into(), Value::Array(samplers));
        Ok(Value::Object(a))
    }
}
