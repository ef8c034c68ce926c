//! The glTF 2.0 specification's document rules, checked once when a file is imported so that
//! every command (and `export`) gives the same verdict, each message naming the file, the
//! field and the rule. The gltf crate's own schema validation (index ranges, enum values,
//! required properties) runs first; [`explain_schema_error`] turns its terse "Invalid value"
//! into the allowed values. The rules here are the ones beyond the schema:
//!
//! 1. `asset.version` is 2.x and `asset.minVersion`, when given, is at most 2.0
//!    (glTF 2.0 §3.2 "Asset").
//! 2. Every `extensionsRequired` entry is in `extensionsUsed`, and is supported: a file that
//!    needs an extension skinview does not implement is refused, except extensions that only
//!    change how a material or texture looks, which are drawn without (reported)
//!    (glTF 2.0 §3.12 "Specifying Extensions").
//! 3. A buffer has a `byteLength` of at least 1 (schema; the gltf crate reads a missing one as
//!    0); a buffer view lies inside its buffer: `byteOffset + byteLength <= buffer.byteLength`
//!    (glTF 2.0 §3.6.2 "Buffers and Buffer Views"), and its `byteStride` is a multiple of 4
//!    (schema `bufferView.byteStride`: 4 to 252, multiple of 4; the gltf crate checks the
//!    range only).
//! 4. A node has a `matrix` or TRS properties, not both (glTF 2.0 §3.5.3 "Transformations").
//! 5. A node with a `skin` has a `mesh` (glTF 2.0 §3.7.3 "Skins": "the node MUST define a
//!    mesh"); a skin's joints are distinct nodes (schema: `uniqueItems`).
//! 6. A mesh has at least one primitive (schema); `node.weights` and `mesh.weights` have one
//!    entry per morph target of the mesh (glTF 2.0 §3.7.2.2 "Morph Targets").
//! 7. Nodes listed by a scene are roots: no node is both a scene root and another node's
//!    child (glTF 2.0 §3.5.2 "Nodes and Hierarchy").
//! 8. Within one animation each target (node and path) is animated by at most one channel,
//!    and a `weights` channel targets a node whose mesh has morph targets
//!    (glTF 2.0 §3.11 "Animations").
//! 9. POSITION, NORMAL and TANGENT (and their morph target deltas) are float unless the file
//!    uses `KHR_mesh_quantization` (glTF 2.0 §3.7.2.1 "Overview", the attribute table).
//! 10. A camera has the object its `type` names, with a positive `yfov`, `znear` (and
//!     `zfar` beyond it, positive `aspectRatio`) for a perspective, non-zero finite
//!     `xmag`/`ymag` and `zfar` > `znear` ≥ 0 for an orthographic one (glTF 2.0 §3.10).
//!
//! Rules 11–15 (how objects are used) are in [`super::validate_use`], 16–20 (the data) in
//! [`super::validate_data`].
//!
//! Cost: one pass over the document's objects, O(nodes + accessors + channels).

use std::collections::{HashMap, HashSet};

use gltf::json;
use json::validation::Checked;

use crate::error::{Error, Result};
use crate::scene::Report;

/// Extensions skinview implements (a file may require them). The meshopt codecs are C++
/// (meshoptimizer), built for the desktop and into the web page, not into the lean wasm32
/// library build.
#[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
const SUPPORTED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "KHR_texture_transform",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
];
#[cfg(all(target_arch = "wasm32", not(feature = "web")))]
const SUPPORTED_EXTENSIONS: &[&str] = &["KHR_mesh_quantization", "KHR_texture_transform"];

/// Required extensions skinview refuses with advice: (name, what to do instead).
const REFUSED_WITH_ADVICE: &[(&str, &str)] = &[
    (
        "KHR_draco_mesh_compression",
        "Draco geometry is not decoded (no maintained Rust decoder); convert the file with \
         `gltf-transform meshopt IN OUT` or `gltfpack -i IN -o OUT -c`, which skinview reads",
    ),
    (
        "EXT_meshopt_compression",
        "meshopt-compressed files are read by the desktop build and the web page, not by the \
         lean library build; open it there, or write it uncompressed with its export command",
    ),
    (
        "KHR_meshopt_compression",
        "meshopt-compressed files are read by the desktop build and the web page, not by the \
         lean library build; open it there, or write it uncompressed with its export command",
    ),
];

/// Extensions that only change how a material or texture looks: a file that requires one is
/// still drawn, without it, and the report says so.
const APPEARANCE_EXTENSIONS: &[&str] = &[
    "KHR_texture_basisu",
    "EXT_texture_webp",
    "EXT_texture_avif",
    "KHR_materials_unlit",
    "KHR_materials_pbrSpecularGlossiness",
    "KHR_materials_emissive_strength",
    "KHR_materials_ior",
    "KHR_materials_specular",
    "KHR_materials_transmission",
    "KHR_materials_volume",
    "KHR_materials_clearcoat",
    "KHR_materials_sheen",
    "KHR_materials_iridescence",
    "KHR_materials_anisotropy",
    "KHR_materials_dispersion",
    "KHR_materials_variants",
];

/// Check rules 1–10 on `root` (already schema-validated by the gltf crate); warnings go to
/// `report`. The first rule broken is the error.
pub fn validate_document(root: &json::Root, file: &str, report: &mut Report) -> Result<()> {
    check_asset(root, file)?;
    check_extensions(root, file, report)?;
    check_buffers(root, file)?;
    check_nodes(root, file)?;
    check_meshes(root, file)?;
    check_skins(root, file)?;
    check_float_attributes(root, file)?;
    check_cameras(root, file)?;
    check_scene_roots(root, file)?;
    check_animations(root, file)
}

/// The error for `field` of `file`, `message` naming the rule it breaks.
fn invalid(file: &str, field: String, message: String) -> Result<()> {
    Err(Error::invalid(file, field, message))
}

/// Morph targets of mesh `mesh` (its first primitive's; 0 for a mesh that does not exist).
fn targets_of(root: &json::Root, mesh: usize) -> usize {
    root.meshes
        .get(mesh)
        .and_then(|m| m.primitives.first())
        .and_then(|p| p.targets.as_ref())
        .map_or(0, Vec::len)
}

/// Rule 1: `asset.version` is 2.x and `asset.minVersion` at most 2.0 (glTF 2.0 §3.2).
fn check_asset(root: &json::Root, file: &str) -> Result<()> {
    let major = |v: &str| v.split('.').next().and_then(|m| m.parse::<u32>().ok());
    if major(&root.asset.version) != Some(2) {
        return invalid(
            file,
            "asset.version".into(),
            format!(
                "\"{}\": only glTF 2.x is read (glTF 2.0 §3.2 Asset)",
                root.asset.version
            ),
        );
    }
    if let Some(min) = &root.asset.min_version {
        let parts: Vec<u32> = min.split('.').filter_map(|p| p.parse().ok()).collect();
        if parts.len() != 2 || (parts[0], parts[1]) > (2, 0) {
            return invalid(
                file,
                "asset.minVersion".into(),
                format!("\"{min}\": the file needs a newer glTF than 2.0 (glTF 2.0 §3.2 Asset)"),
            );
        }
    }
    Ok(())
}

/// Rule 2: required extensions are used and supported; appearance-only ones are drawn
/// without, with a warning in `report` (glTF 2.0 §3.12).
fn check_extensions(root: &json::Root, file: &str, report: &mut Report) -> Result<()> {
    for (i, ext) in root.extensions_required.iter().enumerate() {
        let field = format!("extensionsRequired[{i}]");
        if !root.extensions_used.contains(ext) {
            return invalid(
                file,
                field,
                format!(
                    "\"{ext}\" is not listed in extensionsUsed (glTF 2.0 §3.12: every required \
                     extension MUST also be in extensionsUsed)"
                ),
            );
        }
        if SUPPORTED_EXTENSIONS.contains(&ext.as_str()) {
            continue;
        }
        if APPEARANCE_EXTENSIONS.contains(&ext.as_str()) {
            report.warn(
                field,
                format!("\"{ext}\" is required but not implemented: drawn without it"),
            );
            continue;
        }
        if let Some((_, advice)) = REFUSED_WITH_ADVICE.iter().find(|(name, _)| name == ext) {
            return invalid(
                file,
                field,
                format!("\"{ext}\" is required and not read here (glTF 2.0 §3.12): {advice}"),
            );
        }
        return invalid(
            file,
            field,
            format!(
                "\"{ext}\" is required and skinview does not implement it, so the file cannot \
                 be read correctly (glTF 2.0 §3.12: a loader MUST NOT load a file that requires \
                 an extension it does not support)"
            ),
        );
    }
    Ok(())
}

/// Rule 3: buffers have a `byteLength`, buffer views lie inside their buffer with a stride
/// that is a multiple of 4 (glTF 2.0 §3.6.2).
fn check_buffers(root: &json::Root, file: &str) -> Result<()> {
    for (bi, buffer) in root.buffers.iter().enumerate() {
        // gltf-json reads a missing byteLength as 0; the schema requires one of at least 1.
        if buffer.byte_length.0 == 0 {
            return invalid(
                file,
                format!("buffers[{bi}].byteLength"),
                "missing or 0 (glTF 2.0 schema buffer.byteLength: required, minimum 1)".into(),
            );
        }
    }
    for (vi, view) in root.buffer_views.iter().enumerate() {
        if let Some(stride) = view.byte_stride
            && !stride.0.is_multiple_of(4)
        {
            return invalid(
                file,
                format!("bufferViews[{vi}].byteStride"),
                format!(
                    "{}: must be 4 to 252, a multiple of 4 (glTF 2.0 schema bufferView.byteStride: \
                     vertex elements are 4-byte aligned)",
                    stride.0
                ),
            );
        }
        let b = view.buffer.value();
        let Some(buffer) = root.buffers.get(b) else {
            continue; // schema validation reports the index
        };
        let start = view.byte_offset.map_or(0, |o| o.0);
        let end = start.saturating_add(view.byte_length.0);
        if end > buffer.byte_length.0 {
            let key = if start > buffer.byte_length.0 {
                "byteOffset"
            } else {
                "byteLength"
            };
            return invalid(
                file,
                format!("bufferViews[{vi}].{key}"),
                format!(
                    "bytes {start}..{end} lie outside buffers[{b}] of {} bytes (glTF 2.0 §3.6.2: \
                     byteOffset + byteLength MUST NOT exceed the buffer's byteLength)",
                    buffer.byte_length.0
                ),
            );
        }
    }
    Ok(())
}

/// Rules 4, 5 and 6 on nodes: a matrix or TRS, not both (§3.5.3); a skin only with a mesh
/// (§3.7.3); one `weights` entry per morph target of the mesh (§3.7.2.2).
fn check_nodes(root: &json::Root, file: &str) -> Result<()> {
    for (ni, node) in root.nodes.iter().enumerate() {
        let field = format!("nodes[{ni}]");
        if node.matrix.is_some()
            && (node.translation.is_some() || node.rotation.is_some() || node.scale.is_some())
        {
            return invalid(
                file,
                format!("{field}.matrix"),
                "given together with translation/rotation/scale (glTF 2.0 §3.5.3: a node has \
                 either a matrix or TRS properties; with both the pose is ambiguous)"
                    .into(),
            );
        }
        if node.skin.is_some() && node.mesh.is_none() {
            return invalid(
                file,
                format!("{field}.skin"),
                "a skin on a node without a mesh (glTF 2.0 §3.7.3: the node MUST define a mesh)"
                    .into(),
            );
        }
        if let (Some(w), Some(m)) = (&node.weights, node.mesh) {
            let n = targets_of(root, m.value());
            if w.len() != n {
                return invalid(
                    file,
                    format!("{field}.weights"),
                    format!(
                        "{} weights for the {n} morph targets of meshes[{}] (glTF 2.0 §3.7.2.2: \
                         one weight per morph target)",
                        w.len(),
                        m.value()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Rule 6 on meshes: at least one primitive (schema), one `weights` entry per morph target
/// (§3.7.2.2).
fn check_meshes(root: &json::Root, file: &str) -> Result<()> {
    for (mi, mesh) in root.meshes.iter().enumerate() {
        if mesh.primitives.is_empty() {
            return invalid(
                file,
                format!("meshes[{mi}].primitives"),
                "empty (glTF 2.0 schema mesh.primitives: at least one)".into(),
            );
        }
        if let Some(w) = &mesh.weights {
            let n = targets_of(root, mi);
            if w.len() != n {
                return invalid(
                    file,
                    format!("meshes[{mi}].weights"),
                    format!(
                        "{} weights for {n} morph targets (glTF 2.0 §3.7.2.2: one weight per \
                         morph target)",
                        w.len()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Rule 5 on skins: a skin's joints are distinct nodes (schema `skin.joints`: unique items).
fn check_skins(root: &json::Root, file: &str) -> Result<()> {
    for (si, skin) in root.skins.iter().enumerate() {
        let mut seen = HashSet::with_capacity(skin.joints.len());
        for (j, joint) in skin.joints.iter().enumerate() {
            if !seen.insert(joint.value()) {
                return invalid(
                    file,
                    format!("skins[{si}].joints[{j}]"),
                    format!(
                        "node {} is listed twice (glTF 2.0 skin.joints: unique items)",
                        joint.value()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Rule 9: POSITION, NORMAL and TANGENT and their morph deltas are float unless the file uses
/// `KHR_mesh_quantization` (§3.7.2.1).
fn check_float_attributes(root: &json::Root, file: &str) -> Result<()> {
    let quantized = root
        .extensions_used
        .iter()
        .any(|e| e == "KHR_mesh_quantization");
    if quantized {
        return Ok(());
    }
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let targets = prim
                .targets
                .iter()
                .flatten()
                .enumerate()
                .flat_map(|(ti, t)| {
                    [
                        (format!("targets[{ti}].POSITION"), t.positions),
                        (format!("targets[{ti}].NORMAL"), t.normals),
                        (format!("targets[{ti}].TANGENT"), t.tangents),
                    ]
                });
            let attrs = prim.attributes.iter().filter_map(|(sem, a)| match sem {
                Checked::Valid(
                    s @ (gltf::Semantic::Positions
                    | gltf::Semantic::Normals
                    | gltf::Semantic::Tangents),
                ) => Some((format!("attributes.{}", s.to_string()), Some(*a))),
                _ => None,
            });
            for (name, acc) in attrs.chain(targets) {
                let Some(acc) = acc.and_then(|a| root.accessors.get(a.value())) else {
                    continue;
                };
                if let Checked::Valid(t) = acc.component_type
                    && t.0 != json::accessor::ComponentType::F32
                {
                    return invalid(
                        file,
                        format!("meshes[{mi}].primitives[{pi}].{name}"),
                        format!(
                            "component type {} is not float, and the file does not use \
                             KHR_mesh_quantization (glTF 2.0 §3.7.2.1: POSITION, NORMAL and \
                             TANGENT are float)",
                            t.0.as_gl_enum()
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Rule 10: a camera has the object its `type` names, with sane projection values (§3.10).
fn check_cameras(root: &json::Root, file: &str) -> Result<()> {
    for (ci, cam) in root.cameras.iter().enumerate() {
        use json::camera::Type;
        let field = format!("cameras[{ci}]");
        let bad = |f: &str, what: String| {
            invalid(
                file,
                format!("{field}.{f}"),
                format!("{what} (glTF 2.0 §3.10 Cameras)"),
            )
        };
        match (&cam.type_, &cam.perspective, &cam.orthographic) {
            (Checked::Valid(Type::Perspective), Some(p), _) => {
                if !(p.yfov > 0.0 && p.yfov.is_finite()) {
                    return bad("perspective.yfov", format!("{}: must be above 0", p.yfov));
                }
                if !(p.znear > 0.0 && p.znear.is_finite()) {
                    return bad("perspective.znear", format!("{}: must be above 0", p.znear));
                }
                if let Some(zfar) = p.zfar
                    && zfar.partial_cmp(&p.znear) != Some(std::cmp::Ordering::Greater)
                {
                    return bad(
                        "perspective.zfar",
                        format!("{zfar}: must be beyond znear {}", p.znear),
                    );
                }
                if let Some(a) = p.aspect_ratio
                    && !(a > 0.0 && a.is_finite())
                {
                    return bad("perspective.aspectRatio", format!("{a}: must be above 0"));
                }
            }
            (Checked::Valid(Type::Orthographic), _, Some(o)) => {
                if o.xmag == 0.0 || o.ymag == 0.0 || !o.xmag.is_finite() || !o.ymag.is_finite() {
                    return bad(
                        "orthographic",
                        format!(
                            "xmag {} and ymag {}: must be finite and not 0",
                            o.xmag, o.ymag
                        ),
                    );
                }
                let ordered = o.znear >= 0.0
                    && o.zfar.partial_cmp(&o.znear) == Some(std::cmp::Ordering::Greater);
                if !ordered {
                    return bad(
                        "orthographic.zfar",
                        format!("{}: must be beyond znear {} (at least 0)", o.zfar, o.znear),
                    );
                }
            }
            (Checked::Valid(t), _, _) => {
                let name = match t {
                    Type::Perspective => "perspective",
                    Type::Orthographic => "orthographic",
                };
                return bad(
                    "type",
                    format!("\"{name}\" but the camera has no {name} object"),
                );
            }
            (Checked::Invalid, _, _) => {} // schema validation reports it
        }
    }
    Ok(())
}

/// Rule 7: the nodes a scene lists are roots, no other node's child (§3.5.2).
fn check_scene_roots(root: &json::Root, file: &str) -> Result<()> {
    let parent = parents(root);
    for (si, scene) in root.scenes.iter().enumerate() {
        for (k, n) in scene.nodes.iter().enumerate() {
            if parent.get(n.value()).is_some_and(Option::is_some) {
                return invalid(
                    file,
                    format!("scenes[{si}].nodes[{k}]"),
                    format!(
                        "node {} is another node's child (glTF 2.0 §3.5.2: the nodes a scene \
                         lists MUST be root nodes)",
                        n.value()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Rule 8: within an animation each target is animated by one channel, and `weights`
/// channels target a mesh with morph targets (§3.11).
fn check_animations(root: &json::Root, file: &str) -> Result<()> {
    for (ai, anim) in root.animations.iter().enumerate() {
        let mut first = HashMap::with_capacity(anim.channels.len());
        for (ci, ch) in anim.channels.iter().enumerate() {
            let Checked::Valid(path) = ch.target.path else {
                continue; // schema validation reports it
            };
            let node = ch.target.node.value();
            if let Some(earlier) = first.insert((node, property_name(path)), ci) {
                return invalid(
                    file,
                    format!("animations[{ai}].channels[{earlier}].target"),
                    format!(
                        "node {node} {} is animated by channel {ci} too (glTF 2.0 §3.11: each \
                         target MUST NOT be used more than once in an animation; \
                         ANIMATION_DUPLICATE_TARGETS)",
                        property_name(path)
                    ),
                );
            }
            if path == json::animation::Property::MorphTargetWeights {
                let mesh = root.nodes.get(node).and_then(|n| n.mesh);
                if mesh.is_none_or(|m| targets_of(root, m.value()) == 0) {
                    return invalid(
                        file,
                        format!("animations[{ai}].channels[{ci}].target.path"),
                        format!(
                            "weights on node {node}, which has no mesh with morph targets \
                             (glTF 2.0 §3.11: weights animate a mesh's morph targets)"
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

fn property_name(p: json::animation::Property) -> &'static str {
    use json::animation::Property as P;
    match p {
        P::Translation => "translation",
        P::Rotation => "rotation",
        P::Scale => "scale",
        P::MorphTargetWeights => "weights",
    }
}

/// The gltf crate's schema verdict on one field, in words: what the field allows, from the
/// glTF 2.0 schema (`bufferViews[0].byteStride: Invalid value` becomes "must be 4 to 252, a
/// multiple of 4").
pub fn explain_schema_error(path: &str, error: &json::validation::Error) -> String {
    use json::validation::Error as E;
    let key = path
        .rsplit(['.', '['])
        .next()
        .unwrap_or(path)
        .trim_end_matches(']');
    match error {
        E::IndexOutOfBounds => {
            "refers to an object that does not exist (glTF 2.0 §3.3: an index MUST be less \
             than the length of the array it indexes)"
                .into()
        }
        E::Missing => "required by the glTF 2.0 schema, but missing".into(),
        E::Unsupported => "a value skinview does not support".into(),
        E::Oversize => "a size or offset beyond what this machine can address".into(),
        E::Invalid => {
            let allowed = match key {
                "byteStride" => "4 to 252, a multiple of 4",
                "componentType" => {
                    "5120 (byte), 5121 (unsigned byte), 5122 (short), 5123 (unsigned short), \
                     5125 (unsigned int) or 5126 (float), as the accessor's use allows"
                }
                "type" => {
                    "SCALAR, VEC2, VEC3, VEC4, MAT2, MAT3 or MAT4 (cameras: perspective or \
                     orthographic)"
                }
                "magFilter" => "9728 (NEAREST) or 9729 (LINEAR)",
                "minFilter" => "9728, 9729, 9984, 9985, 9986 or 9987",
                "wrapS" | "wrapT" => {
                    "33071 (CLAMP_TO_EDGE), 33648 (MIRRORED_REPEAT) or 10497 (REPEAT)"
                }
                "mode" => "0 (POINTS) to 6 (TRIANGLE_FAN)",
                "target" => "34962 (ARRAY_BUFFER) or 34963 (ELEMENT_ARRAY_BUFFER)",
                "interpolation" => "LINEAR, STEP or CUBICSPLINE",
                "path" => "translation, rotation, scale or weights",
                "alphaMode" => "OPAQUE, MASK or BLEND",
                "mimeType" => "image/png or image/jpeg",
                "uri" => "a relative path or a data: URI",
                _ => "what the glTF 2.0 schema allows for it",
            };
            format!("invalid value: must be {allowed} (glTF 2.0 schema)")
        }
    }
}

/// Each node's parent (None for roots; a node listed by several parents gets the last).
pub(super) fn parents(root: &json::Root) -> Vec<Option<usize>> {
    let mut parent = vec![None; root.nodes.len()];
    for (ni, node) in root.nodes.iter().enumerate() {
        for c in node.children.iter().flatten() {
            if let Some(p) = parent.get_mut(c.value()) {
                *p = Some(ni);
            }
        }
    }
    parent
}
