//! One ufbx mesh as our mesh: a primitive per material part (faces triangulated, a vertex
//! per distinct corner), its skin from the first skin deformer, its blend channels as morph
//! targets.

use std::collections::HashMap;

use glam::{Vec2, Vec3, Vec4};

use super::texture::BaseColorTextures;
use super::{MAX_INFLUENCES, MAX_MORPH_VALUES, element_label, mat4, vec3};
use crate::error::{Error, Result};
use crate::scene::{Mesh, MorphTarget, Primitive, Report, Skin, SkinWeights, Topology};

/// Where a mesh's morph targets came from, for the animation's weights channels.
pub(super) struct MorphLinks {
    /// The blend channel (element id) of each morph target, in target order.
    pub channels: Vec<u32>,
    /// Our nodes that draw the mesh.
    pub nodes: Vec<usize>,
    /// Default weight of each target.
    pub default_weights: Vec<f32>,
}

/// A converted mesh.
pub(super) struct Converted {
    pub mesh: Mesh,
    pub skin: Option<Skin>,
    /// Blend channel element id per morph target.
    pub channels: Vec<u32>,
}

/// Influences of each of a mesh's vertices (ufbx's vertex, before corners are split).
struct Influences {
    skin: Skin,
    width: usize,
    joints: Vec<u32>,
    weights: Vec<f32>,
}

/// Repairs of one deformer's weights.
#[derive(Default)]
struct RepairCounts {
    truncated: usize,
    renormalised: usize,
    unweighted: usize,
    worst: f64,
}

impl RepairCounts {
    fn report(&self, label: &str, n: usize, report: &mut Report) {
        if self.truncated > 0 {
            report.repair(
                label,
                format!(
                    "{} of {n} vertices have more than {MAX_INFLUENCES} influences; the \
                     lightest dropped and the rest renormalised",
                    self.truncated
                ),
            );
        }
        if self.renormalised > 0 {
            report.repair(
                label,
                format!(
                    "{} of {n} vertices had weights not summing to 1 (worst off by {:.3e}); \
                     renormalised",
                    self.renormalised, self.worst
                ),
            );
        }
        if self.unweighted > 0 {
            report.repair(
                label,
                format!(
                    "{} of {n} vertices have no weight; bound with weight 1 to the first joint",
                    self.unweighted
                ),
            );
        }
    }
}

/// Blend shapes as dense offsets per ufbx vertex.
struct Shapes {
    targets: Vec<(Vec<Vec3>, Option<Vec<Vec3>>)>,
    channels: Vec<u32>,
    weights: Vec<f32>,
}

/// Convert mesh `m`; `node_of` maps a ufbx node to ours, `textures` a material to its base
/// colour texture.
pub(super) fn convert(
    m: &ufbx::Mesh,
    node_of: &dyn Fn(&ufbx::Node) -> Option<usize>,
    textures: &BaseColorTextures,
    file: &str,
    report: &mut Report,
) -> Result<Converted> {
    let label = element_label("Geometry", &m.element);
    check_finite(m, file, &label)?;
    let influences = match m.skin_deformers.len() {
        0 => None,
        1 => Some(influences(m, &m.skin_deformers[0], node_of, file, report)?),
        n => {
            return Err(Error::invalid(
                file,
                label,
                format!("{n} skin deformers; skinview reads a mesh bound by one"),
            ));
        }
    };
    let shapes = shapes(m, file, &label, report)?;
    let mut primitives = Vec::new();
    let parts: Vec<(usize, Vec<u32>)> = if m.material_parts.is_empty() {
        vec![(0, (0..m.faces.len() as u32).collect())]
    } else {
        m.material_parts
            .iter()
            .map(|p| (p.index as usize, p.face_indices.to_vec()))
            .collect()
    };
    let mut skipped_faces = 0usize;
    let mut tri = vec![0u32; m.max_face_triangles.max(1) * 3];
    for (material, faces) in parts.into_iter().filter(|(_, f)| !f.is_empty()) {
        let (corners, skipped) = triangulate(m, &faces, &mut tri);
        let look = Look::of(m, material, textures, &label, report);
        let prim = primitive(m, &corners, influences.as_ref(), &shapes, &look);
        skipped_faces += skipped;
        if !prim.indices.is_empty() {
            primitives.push(prim);
        }
    }
    if skipped_faces > 0 {
        report.warn(
            &label,
            format!("{skipped_faces} faces with fewer than 3 corners (points, lines) not drawn"),
        );
    }
    let mesh = Mesh {
        name: Some(m.element.name.to_string()).filter(|n| !n.is_empty()),
        primitives,
        default_morph_weights: shapes.weights.clone(),
    };
    Ok(Converted {
        mesh,
        skin: influences.map(|i| i.skin),
        channels: shapes.channels,
    })
}

/// Refuse NaN or infinite positions, normals, UVs, colours and blend shape offsets (ufbx
/// passes them on as read).
fn check_finite(m: &ufbx::Mesh, file: &str, label: &str) -> Result<()> {
    let bad = |what: &str, i: usize| {
        Err(Error::invalid(
            file,
            label,
            format!("{what} {i} is not finite (NaN or infinite)"),
        ))
    };
    // Finite once made f32 (1e39 is a finite f64 and an infinite f32).
    let ok = |x: f64| x.is_finite() && x.abs() <= f32::MAX as f64;
    let finite3 = |v: &ufbx::Vec3| ok(v.x) && ok(v.y) && ok(v.z);
    if let Some(i) = m.vertices.iter().position(|v| !finite3(v)) {
        return bad("vertex position", i);
    }
    if let Some(i) = m.vertex_normal.values.iter().position(|v| !finite3(v)) {
        return bad("normal", i);
    }
    if let Some(i) = m
        .vertex_uv
        .values
        .iter()
        .position(|v| !(v.x.is_finite() && v.y.is_finite()))
    {
        return bad("UV", i);
    }
    // The other UV sets (a texture may read one).
    for set in m.uv_sets.iter().skip(1) {
        if let Some(i) = set
            .vertex_uv
            .values
            .iter()
            .position(|v| !(v.x.is_finite() && v.y.is_finite()))
        {
            return bad(&format!("UV set \"{}\" UV", set.name.as_ref() as &str), i);
        }
    }
    let finite4 = |v: &ufbx::Vec4| [v.x, v.y, v.z, v.w].into_iter().all(ok);
    if let Some(i) = m.vertex_color.values.iter().position(|v| !finite4(v)) {
        return bad("colour", i);
    }
    for d in m.blend_deformers.iter() {
        for c in d.channels.iter() {
            let Some(shape) = c.target_shape.as_ref() else {
                continue;
            };
            let offsets = shape
                .position_offsets
                .iter()
                .chain(shape.normal_offsets.iter());
            if let Some(i) = offsets.clone().position(|v| !finite3(v)) {
                return bad(
                    &format!(
                        "blend shape \"{}\" offset",
                        shape.element.name.as_ref() as &str
                    ),
                    i,
                );
            }
        }
    }
    Ok(())
}

/// The skin and per-vertex influences of skin deformer `d` (see the module repairs).
fn influences(
    m: &ufbx::Mesh,
    d: &ufbx::SkinDeformer,
    node_of: &dyn Fn(&ufbx::Node) -> Option<usize>,
    file: &str,
    report: &mut Report,
) -> Result<Influences> {
    let label = element_label("Deformer", &d.element);
    let mut skin = Skin {
        name: Some(d.element.name.to_string()).filter(|n| !n.is_empty()),
        joints: Vec::with_capacity(d.clusters.len()),
        joint_from_bind: Vec::with_capacity(d.clusters.len()),
    };
    for (k, c) in d.clusters.iter().enumerate() {
        let node = c
            .bone_node
            .as_ref()
            .and_then(|n| node_of(n))
            .ok_or_else(|| {
                Error::invalid(
                    file,
                    format!("{label} cluster {k}"),
                    "is linked to no bone node",
                )
            })?;
        let joint_from_bind = mat4(&c.geometry_to_bone);
        if !joint_from_bind.is_finite() {
            return Err(Error::invalid(
                file,
                format!("{label} cluster {k}"),
                "bind matrix (Transform, TransformLink) is not finite",
            ));
        }
        skin.joints.push(node);
        skin.joint_from_bind.push(joint_from_bind);
        // ufbx drops a cluster's indices past the vertices it skins, with their weights.
        let past = c
            .vertices
            .iter()
            .filter(|&&v| v as usize >= d.vertices.len())
            .count();
        if past > 0 {
            report.warn(
                format!("{label} cluster {k}"),
                format!(
                    "{past} of its {} vertex indices are past the mesh's {} vertices: dropped, \
                     with their weights",
                    c.vertices.len(),
                    d.vertices.len()
                ),
            );
        }
    }
    if skin.joints.is_empty() {
        return Err(Error::invalid(file, label, "has no clusters (no joints)"));
    }
    let n = m.num_vertices;
    // A deformer shared by several meshes lists as many vertices as the largest has.
    let Some(vertices) = d.vertices.get(..n) else {
        return Err(Error::invalid(
            file,
            label,
            format!(
                "weights for {} vertices, the mesh has {n}",
                d.vertices.len()
            ),
        ));
    };
    let most = vertices
        .iter()
        .map(|v| v.num_weights as usize)
        .max()
        .unwrap_or(0);
    let width = most.clamp(1, MAX_INFLUENCES).next_multiple_of(4);
    let mut joints = vec![0u32; n * width];
    let mut weights = vec![0f32; n * width];
    let mut counts = RepairCounts::default();
    for (v, sv) in vertices.iter().enumerate() {
        let begin = sv.weight_begin as usize;
        let count = (sv.num_weights as usize).min(MAX_INFLUENCES);
        let field = || format!("{label} vertex {v}");
        // ufbx lists a vertex's weights heaviest first.
        let list = d
            .weights
            .get(begin..begin + count)
            .ok_or_else(|| Error::invalid(file, field(), "weights outside the deformer's list"))?;
        if let Some(w) = list
            .iter()
            .find(|w| !(w.weight.is_finite() && w.weight <= 1e6))
        {
            return Err(Error::invalid(
                file,
                field(),
                format!("weight {} is not a finite weight", w.weight),
            ));
        }
        let sum: f64 = list.iter().map(|w| w.weight).sum();
        let slots = v * width..(v + 1) * width;
        for (slot, w) in slots.clone().zip(list) {
            joints[slot] = w.cluster_index;
            weights[slot] = (w.weight / sum) as f32;
        }
        if sum <= 0.0 {
            weights[slots.start] = 1.0;
            joints[slots.start] = 0;
            counts.unweighted += 1;
        } else if sv.num_weights as usize > MAX_INFLUENCES {
            counts.truncated += 1;
        } else if (sum - 1.0).abs() > 1e-3 {
            counts.worst = counts.worst.max((sum - 1.0).abs());
            counts.renormalised += 1;
        }
    }
    counts.report(&label, n, report);
    Ok(Influences {
        skin,
        width,
        joints,
        weights,
    })
}

/// Every blend channel of every blend deformer of `m`, in order, as dense offsets.
fn shapes(m: &ufbx::Mesh, file: &str, label: &str, report: &mut Report) -> Result<Shapes> {
    let n = m.num_vertices;
    let channels: usize = m.blend_deformers.iter().map(|d| d.channels.len()).sum();
    // Dense per-vertex offsets, then one target per primitive vertex: bounded before any is
    // made (a corner can become a vertex, so corners bound the primitives' vertices).
    let values = channels as u64 * n.max(m.num_indices) as u64;
    if values > MAX_MORPH_VALUES {
        return Err(Error::invalid(
            file,
            label,
            format!(
                "{channels} blend channels over {} vertices: more than the {MAX_MORPH_VALUES} \
                 morph offsets an import holds",
                n.max(m.num_indices)
            ),
        ));
    }
    let mut out = Shapes {
        targets: Vec::new(),
        channels: Vec::new(),
        weights: Vec::new(),
    };
    for d in m.blend_deformers.iter() {
        for c in d.channels.iter() {
            if c.keyframes.len() > 1 {
                report.warn(
                    label,
                    format!(
                        "blend channel \"{}\" has {} in-between shapes; only its full-weight \
                         shape is kept (glTF morph targets have none)",
                        c.element.name.as_ref() as &str,
                        c.keyframes.len() - 1
                    ),
                );
            }
            let target = match c.target_shape.as_ref() {
                Some(shape) => {
                    // The full shape is reached at the last keyframe's weight (FullWeights).
                    let full = c.keyframes.last().map_or(1.0, |k| k.target_weight);
                    let scale = if full > 0.0 && full.is_finite() {
                        1.0 / full
                    } else {
                        1.0
                    };
                    dense_offsets(shape, n, scale, file, label)?
                }
                None => (vec![Vec3::ZERO; n], None),
            };
            out.targets.push(target);
            out.channels.push(c.element.element_id);
            out.weights.push(c.weight as f32);
        }
    }
    Ok(out)
}

/// A blend shape's offsets for every mesh vertex (zero where it has none), each scaled by its
/// per-vertex weight (Blender's vertex-group shapes) and by `scale`; normal offsets when it
/// has one per offset.
fn dense_offsets(
    shape: &ufbx::BlendShape,
    n: usize,
    scale: f64,
    file: &str,
    label: &str,
) -> Result<(Vec<Vec3>, Option<Vec<Vec3>>)> {
    let count = shape.offset_vertices.len();
    let has_normals = count > 0 && shape.normal_offsets.len() == count;
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = vec![Vec3::ZERO; if has_normals { n } else { 0 }];
    for (i, &v) in shape.offset_vertices.iter().enumerate() {
        let Some(p) = positions.get_mut(v as usize) else {
            return Err(Error::invalid(
                file,
                label,
                format!(
                    "blend shape \"{}\" moves vertex {v}; the mesh has {n}",
                    shape.element.name.as_ref() as &str
                ),
            ));
        };
        let w = shape.offset_weights.get(i).copied().unwrap_or(1.0) * scale;
        let o = shape.position_offsets.get(i).copied().unwrap_or_default();
        *p = vec3(o) * w as f32;
        if let (Some(p), Some(o)) = (normals.get_mut(v as usize), shape.normal_offsets.get(i)) {
            *p = vec3(*o) * w as f32;
        }
    }
    Ok((positions, has_normals.then_some(normals)))
}

/// One material part's triangle corners as a triangle list: a vertex per distinct (position,
/// normal, UV, colour) corner, its UVs from the set its material's texture reads.
fn primitive(
    m: &ufbx::Mesh,
    corners: &[u32],
    influences: Option<&Influences>,
    shapes: &Shapes,
    look: &Look,
) -> Primitive {
    let (sources, indices) = merge_corners(m, look.uv, corners);
    let vertex_of = |c: usize| m.vertex_indices.get(c).map_or(0, |&v| v as usize);
    let normals = m.vertex_normal.exists.then(|| {
        sources
            .iter()
            .map(|&c| normal(m, c).map_or(Vec3::ZERO, |n| vec3(*n)))
            .collect()
    });
    // FBX's V runs up the image, glTF's down.
    let uvs = look.uv.exists.then(|| {
        sources
            .iter()
            .map(|&c| {
                uv(look.uv, c).map_or(Vec2::ZERO, |t| Vec2::new(t.x as f32, 1.0 - t.y as f32))
            })
            .collect()
    });
    let colors = m.vertex_color.exists.then(|| {
        sources
            .iter()
            .map(|&c| {
                color(m, c).map_or(Vec4::ONE, |v| {
                    Vec4::new(v.x as f32, v.y as f32, v.z as f32, v.w as f32)
                })
            })
            .collect()
    });
    Primitive {
        positions: sources
            .iter()
            .map(|&c| position(m, c).map_or(Vec3::ZERO, |p| vec3(*p)))
            .collect(),
        normals,
        tangents: None,
        indices,
        topology: Topology::Triangles,
        skin_weights: influences.map(|inf| inf.of_vertices(sources.iter().map(|&c| vertex_of(c)))),
        morph_targets: shapes
            .of_vertices(&sources.iter().map(|&c| vertex_of(c)).collect::<Vec<_>>()),
        base_color: look.base_color,
        base_color_texture: look.texture,
        uvs,
        colors,
    }
}

/// The corners (indices into the mesh's index space) of `faces` triangulated; also how many
/// faces have fewer than 3 corners (points and lines, not drawn). `tri` holds the mesh's
/// largest face's triangles (3 × `max_face_triangles`).
fn triangulate(m: &ufbx::Mesh, faces: &[u32], tri: &mut [u32]) -> (Vec<u32>, usize) {
    let mut corners: Vec<u32> = Vec::new();
    let mut skipped = 0;
    for face in faces.iter().filter_map(|&f| m.faces.get(f as usize)) {
        if face.num_indices < 3 {
            skipped += 1;
            continue;
        }
        let count = ufbx::triangulate_face(tri, m, *face) as usize;
        corners.extend_from_slice(&tri[..count * 3]);
    }
    (corners, skipped)
}

/// A vertex per distinct corner: the corner each new vertex is read from, and the index list.
/// Corners are merged by value (the vertex and the bits of its normal, UV and colour):
/// exporters write a normal and UV per corner, most of them equal around a vertex.
fn merge_corners(
    m: &ufbx::Mesh,
    uvs: &ufbx::VertexVec2,
    corners: &[u32],
) -> (Vec<usize>, Vec<u32>) {
    let bits = |v: Option<[f64; 4]>| v.map_or([u32::MAX; 4], |v| v.map(|x| (x as f32).to_bits()));
    let mut first: HashMap<[u32; 13], u32> = HashMap::new();
    let mut sources: Vec<usize> = Vec::new();
    let mut indices = Vec::with_capacity(corners.len());
    for &c in corners {
        let c = c as usize;
        let mut key = [u32::MAX; 13];
        key[0] = m.vertex_indices.get(c).copied().unwrap_or(u32::MAX);
        key[1..5].copy_from_slice(&bits(normal(m, c).map(|n| [n.x, n.y, n.z, 0.0])));
        key[5..9].copy_from_slice(&bits(uv(uvs, c).map(|t| [t.x, t.y, 0.0, 0.0])));
        key[9..13].copy_from_slice(&bits(color(m, c).map(|v| [v.x, v.y, v.z, v.w])));
        let next = sources.len() as u32;
        let index = *first.entry(key).or_insert_with(|| {
            sources.push(c);
            next
        });
        indices.push(index);
    }
    (sources, indices)
}

/// A per-corner attribute's value at corner `c` (None when the mesh has none).
fn at<'a, T>(exists: bool, indices: &[u32], values: &'a [T], c: usize) -> Option<&'a T> {
    exists
        .then(|| indices.get(c))
        .flatten()
        .and_then(|&i| values.get(i as usize))
}

fn position(m: &ufbx::Mesh, c: usize) -> Option<&ufbx::Vec3> {
    let a = &m.vertex_position;
    at(a.exists, &a.indices, &a.values, c)
}

fn normal(m: &ufbx::Mesh, c: usize) -> Option<&ufbx::Vec3> {
    let a = &m.vertex_normal;
    at(a.exists, &a.indices, &a.values, c)
}

fn uv(a: &ufbx::VertexVec2, c: usize) -> Option<&ufbx::Vec2> {
    at(a.exists, &a.indices, &a.values, c)
}

fn color(m: &ufbx::Mesh, c: usize) -> Option<&ufbx::Vec4> {
    let a = &m.vertex_color;
    at(a.exists, &a.indices, &a.values, c)
}

impl Influences {
    /// The influences of the given mesh vertices, one per new vertex.
    fn of_vertices(&self, vertices: impl Iterator<Item = usize>) -> SkinWeights {
        let mut sw = SkinWeights {
            width: self.width,
            joints: Vec::new(),
            weights: Vec::new(),
        };
        for v in vertices {
            let slots = v * self.width..(v + 1) * self.width;
            sw.joints.extend_from_slice(&self.joints[slots.clone()]);
            sw.weights.extend_from_slice(&self.weights[slots]);
        }
        sw
    }
}

impl Shapes {
    /// Every target's offsets at the given mesh vertices.
    fn of_vertices(&self, vertices: &[usize]) -> Vec<MorphTarget> {
        let pick = |offsets: &[Vec3]| -> Vec<Vec3> {
            vertices
                .iter()
                .map(|&v| offsets.get(v).copied().unwrap_or_default())
                .collect()
        };
        self.targets
            .iter()
            .map(|(p, n)| MorphTarget {
                positions: Some(pick(p)),
                normals: n.as_deref().map(pick),
                tangents: None,
            })
            .collect()
    }
}

/// How a material part is drawn: its base colour, its base colour texture and the UVs that
/// read it.
struct Look<'m> {
    base_color: [f32; 4],
    texture: Option<usize>,
    uv: &'m ufbx::VertexVec2,
}

impl<'m> Look<'m> {
    /// Material `index` of `m`. A texture replaces the material's colour (FBX's rule for a
    /// connected property, which Blender's importer follows) and is scaled by its factor; it
    /// reads the UV set it names, or the mesh's first where the mesh has no set of that name
    /// (a warning when the mesh has several); a mesh without UVs draws it untextured (a
    /// warning).
    fn of(
        m: &'m ufbx::Mesh,
        index: usize,
        textures: &BaseColorTextures,
        label: &str,
        report: &mut Report,
    ) -> Look<'m> {
        let mat = m.materials.get(index);
        let untextured = Look {
            base_color: mat.map_or([1.0; 4], |mat| base_color(mat)),
            texture: None,
            uv: &m.vertex_uv,
        };
        let Some((mat, t)) = mat.and_then(|mat| textures.of(mat).map(|t| (mat, t))) else {
            return untextured;
        };
        let named = m
            .uv_sets
            .iter()
            .find(|s| s.name.as_ref() as &str == t.uv_set);
        if named.is_none() && m.uv_sets.len() > 1 {
            report.warn(
                label,
                format!(
                    "material \"{}\"'s texture reads UV set \"{}\", which the mesh does not \
                     have: read with its first, \"{}\"",
                    mat.element.name.as_ref() as &str,
                    t.uv_set,
                    m.uv_sets[0].name.as_ref() as &str
                ),
            );
        }
        let uv = named.map_or(&m.vertex_uv, |s| &s.vertex_uv);
        if !uv.exists {
            report.warn(
                label,
                format!(
                    "material \"{}\" has a texture but the mesh has no UVs to read it with: \
                     drawn untextured",
                    mat.element.name.as_ref() as &str
                ),
            );
            return untextured;
        }
        let factor = base_factor(mat) as f32;
        Look {
            base_color: [factor, factor, factor, 1.0],
            texture: Some(t.texture),
            uv,
        }
    }
}

/// The base colour of `mat` (white when it has none).
fn base_color(mat: &ufbx::Material) -> [f32; 4] {
    let c = &mat.pbr.base_color;
    if !c.has_value {
        return [1.0; 4];
    }
    let v = c.value_vec4;
    let factor = base_factor(mat);
    [
        (v.x * factor) as f32,
        (v.y * factor) as f32,
        (v.z * factor) as f32,
        1.0,
    ]
}

/// The factor that scales `mat`'s base colour (`DiffuseFactor`; 1 when it has none).
fn base_factor(mat: &ufbx::Material) -> f64 {
    if mat.pbr.base_factor.has_value {
        mat.pbr.base_factor.value_vec4.x
    } else {
        1.0
    }
}
