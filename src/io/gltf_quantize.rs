//! Vertex attributes stored as integers (`KHR_mesh_quantization`), for `optimize`'s mesh
//! quantisation: skinned positions on one grid for the whole file and each rigid mesh's on
//! one of its own, normals and tangents as normalised bytes, texture coordinates as
//! normalised shorts.
//!
//! Based on: the `KHR_mesh_quantization` specification (Khronos glTF repository,
//! `extensions/2.0/Khronos/KHR_mesh_quantization`) and gltfpack's quantisation (meshoptimizer,
//! Arseny Kapoulkine, `gltf/`): one position grid for the scene, its dequantisation folded
//! into the inverse bind matrices of skinned meshes (a skinned mesh's node transform is not
//! applied, so the skin is the one place it can go), and into the node transform of a rigid
//! mesh.
//!
//! Method: the grid is the smallest box holding every quantised position, with one step for
//! all three axes (`largest extent / (2^bits - 1)`), so the dequantisation `D` (translate to
//! the box's corner, scale by the step) is a uniform scale and normals keep their directions.
//! Positions become unsigned shorts `round((p - corner) / step)` (stride 8: glTF aligns vertex
//! attributes to 4 bytes); every inverse bind matrix `joint_from_bind` becomes
//! `joint_from_bind * D`, a rigid mesh's grid (its own box) goes into the transform of
//! each node drawing it (`node_from_mesh * D`: its matrix, or its translation and scale),
//! and morph position deltas become whole steps in shorts (stride 8;
//! the step-scaled floats when a delta spans more steps than a short holds). Normals become
//! `round(127 n)` bytes (stride 4), tangents likewise with their sign, and morph normal and
//! tangent deltas likewise where they lie in [-1, 1]. Texture
//! coordinates are stored over their own range in `uv_bits` bits (normalised shorts holding
//! the codes), the range composed into the `KHR_texture_transform` of every texture that
//! reads them, as gltfpack does, where each material using them reads that set from them
//! alone and has no extension of its own; elsewhere those in `[0, 1]` are `round(65535 uv)`
//! shorts.
//! Cost: one read and one write of each attribute (O(vertices)).
//! Limits: a rigid mesh keeps float positions when a node drawing it has children (they
//! would take the grid's scale), animated translation, rotation or scale, a camera or
//! extensions (a light, GPU instancing), or is a skin's joint, or when one of its position accessors holds another mesh's too (reported).
//! A mesh drawn both with and without a skin, or a position or delta accessor shared by
//! skinned and rigid meshes, keeps every skinned position as float (reported). Texture coordinates that cannot take a
//! range and lie outside `[0, 1]` stay float, as do morph normal and tangent deltas outside
//! [-1, 1]; sparse morph deltas of quantised meshes are written dense. The rounding's distance on the skinned
//! vertices is not bounded here: `optimize` measures it on the file read back.

use std::collections::BTreeSet;

use gltf::json;
use json::accessor::ComponentType;

use crate::error::{Error, Result};

/// Position grid resolutions `optimize` may ask for.
pub const POSITION_BITS: std::ops::RangeInclusive<u32> = 8..=16;

/// What `optimize`'s mesh quantisation stores as integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshQuantization {
    /// Bits of the position grid (in [`POSITION_BITS`]; stored in unsigned shorts whatever
    /// the count: fewer bits compress better, they do not make plain files smaller).
    pub position_bits: u32,
    /// Bits of texture coordinates quantised over their own range (in [`UV_BITS`]; stored in
    /// normalised shorts, the range in the textures' `KHR_texture_transform`).
    pub uv_bits: u32,
}

/// Texture coordinate resolutions over their range `optimize` may ask for.
pub const UV_BITS: std::ops::RangeInclusive<u32> = 8..=16;

/// One accessor's new bytes.
pub(crate) struct Replacement {
    /// The accessor (index into the document's accessors).
    pub accessor: usize,
    /// Its elements, tightly packed or padded to `stride`.
    pub bytes: Vec<u8>,
    /// Bytes between elements when the elements are padded (vertex attributes are 4-aligned).
    pub stride: Option<usize>,
    pub component: ComponentType,
    pub normalized: bool,
    /// `min` and `max` to write (POSITION must have them; the stored integers).
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// What it is, for the report (`meshes[0].primitives[0].attributes.POSITION`).
    pub what: String,
}

/// What [`quantize`] decided.
pub(crate) struct Quantized {
    /// Accessors to replace (each once, whoever shares it).
    pub replacements: Vec<Replacement>,
    /// Skins without inverse bind matrices that need them now (skin, `joint_from_bind * D` as
    /// column-major f32 bytes, joint count).
    pub new_inverse_binds: Vec<(usize, Vec<u8>, usize)>,
    /// Nodes drawing a rigid mesh whose positions are on a grid of their own, to take its
    /// dequantisation into their transforms.
    pub node_grids: Vec<NodeGrid>,
    /// What stays float and why.
    pub notes: Vec<String>,
    /// The largest step of the position grids, when positions were quantised (in the units of
    /// the positions each covers: the skinned meshes' bind space, a rigid mesh's own).
    pub position_step: Option<f32>,
    /// Texture coordinates quantised over their range: the materials whose textures read
    /// them, the set, and the `offset` and `scale` that give them back.
    pub uv_transforms: Vec<UvTransform>,
}

/// A node whose transform takes its rigid mesh's dequantisation: `node_from_mesh *
/// translate(corner) * scale(step)`.
pub(crate) struct NodeGrid {
    pub node: usize,
    pub corner: [f32; 3],
    pub step: f32,
}

/// A texture coordinate set stored over its own range: every texture of `materials` that
/// reads set `set` gets `offset` and `scale` composed into its `KHR_texture_transform`.
pub(crate) struct UvTransform {
    pub materials: BTreeSet<usize>,
    pub set: u32,
    pub offset: glam::Vec2,
    pub scale: glam::Vec2,
}

/// The document's attributes as [`MeshQuantization`] asks (see the module documentation).
pub(crate) fn quantize(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    q: MeshQuantization,
) -> Result<Quantized> {
    if !UV_BITS.contains(&q.uv_bits) {
        return Err(Error::invalid(
            file,
            "(quantize)",
            format!(
                "{} texture coordinate bits: give {} to {}",
                q.uv_bits,
                UV_BITS.start(),
                UV_BITS.end()
            ),
        ));
    }
    if !POSITION_BITS.contains(&q.position_bits) {
        return Err(Error::invalid(
            file,
            "(quantize)",
            format!(
                "{} position bits: give {} to {}",
                q.position_bits,
                POSITION_BITS.start(),
                POSITION_BITS.end()
            ),
        ));
    }
    let mut out = Quantized {
        replacements: Vec::new(),
        new_inverse_binds: Vec::new(),
        node_grids: Vec::new(),
        notes: Vec::new(),
        position_step: None,
        uv_transforms: Vec::new(),
    };
    let mut done = BTreeSet::new();
    if let Some(plan) = position_plan(doc, &mut out.notes) {
        quantize_positions(file, doc, buffers, &plan, q, &mut done, &mut out)?;
    }
    for rigid in rigid_plans(doc, &mut out.notes) {
        let (corner, step) = on_grid(file, (doc, buffers), &rigid.grid, q, &mut done, &mut out)?;
        for &node in &rigid.nodes {
            out.node_grids.push(NodeGrid { node, corner, step });
        }
        out.position_step = Some(out.position_step.map_or(step, |s| s.max(step)));
    }
    let ranged = uv_range_plan(doc);
    directions_and_uvs(
        file,
        doc,
        buffers,
        (&ranged, q.uv_bits),
        &mut done,
        &mut out,
    )?;
    Ok(out)
}

/// The accessors one position grid covers.
#[derive(Default)]
struct GridAccessors {
    /// POSITION accessors.
    positions: BTreeSet<usize>,
    /// Their primitives' morph POSITION delta accessors.
    deltas: BTreeSet<usize>,
}

/// Which accessors and skins the skinned meshes' position grid covers.
struct PositionPlan {
    grid: GridAccessors,
    /// Skins of the nodes drawing them.
    skins: BTreeSet<usize>,
}

/// A rigid mesh's own position grid and the nodes drawing it.
struct RigidPlan {
    grid: GridAccessors,
    nodes: Vec<usize>,
}

/// The skinned meshes' positions, deltas and skins, or None (with a note) when a mesh is
/// drawn both with and without a skin or an accessor is shared with a rigid mesh.
fn position_plan(doc: &gltf::Document, notes: &mut Vec<String>) -> Option<PositionPlan> {
    // Per mesh: drawn with a skin, without one.
    let mut drawn = vec![(false, false); doc.meshes().len()];
    let mut skins = BTreeSet::new();
    for node in doc.nodes() {
        if let Some(m) = node.mesh() {
            let d = &mut drawn[m.index()];
            match node.skin() {
                Some(s) => {
                    d.0 = true;
                    skins.insert(s.index());
                }
                None => d.1 = true,
            }
        }
    }
    let mut plan = PositionPlan {
        grid: GridAccessors::default(),
        skins,
    };
    let mut rigid = BTreeSet::new();
    for mesh in doc.meshes() {
        let (skinned, unskinned) = drawn[mesh.index()];
        if skinned && unskinned {
            notes.push(format!(
                "meshes[{}] is drawn with and without a skin: positions stay float",
                mesh.index()
            ));
            return None;
        }
        for prim in mesh.primitives() {
            let set = match skinned {
                true => &mut plan.grid.positions,
                false => &mut rigid,
            };
            if let Some(a) = prim.get(&gltf::Semantic::Positions) {
                set.insert(a.index());
            }
            for t in prim.morph_targets() {
                let set = match skinned {
                    true => &mut plan.grid.deltas,
                    false => &mut rigid,
                };
                if let Some(a) = t.positions() {
                    set.insert(a.index());
                }
            }
        }
    }
    if let Some(a) = plan
        .grid
        .positions
        .iter()
        .chain(&plan.grid.deltas)
        .find(|a| rigid.contains(*a))
    {
        notes.push(format!(
            "accessors[{a}] holds positions of skinned and rigid meshes: positions stay float"
        ));
        return None;
    }
    (!plan.grid.positions.is_empty()).then_some(plan)
}

/// One grid per rigid mesh (drawn only without a skin) whose nodes can each take its
/// dequantisation: a node with no children (they would be scaled with it), no animated
/// translation, rotation or scale (keys would need it too), not a skin's joint (its matrix
/// moves a skin), no camera and no extensions (a light would move with the grid, instances
/// would be scaled about it). Other rigid meshes, and those sharing a position or delta
/// accessor with another mesh, keep float positions (noted).
fn rigid_plans(doc: &gltf::Document, notes: &mut Vec<String>) -> Vec<RigidPlan> {
    let mut nodes_of: Vec<Vec<gltf::Node>> = vec![Vec::new(); doc.meshes().len()];
    let mut skinned = vec![false; doc.meshes().len()];
    for node in doc.nodes() {
        if let Some(m) = node.mesh() {
            skinned[m.index()] |= node.skin().is_some();
            nodes_of[m.index()].push(node);
        }
    }
    let joints: BTreeSet<usize> = doc
        .skins()
        .flat_map(|s| s.joints().map(|j| j.index()).collect::<Vec<_>>())
        .collect();
    let animated: BTreeSet<usize> = (doc.animations())
        .flat_map(|a| a.channels().collect::<Vec<_>>())
        .filter(|c| c.target().property() != gltf::animation::Property::MorphTargetWeights)
        .map(|c| c.target().node().index())
        .collect();
    // Which meshes each position or delta accessor holds data of.
    let mut owners: std::collections::BTreeMap<usize, BTreeSet<usize>> = Default::default();
    let mut grids: Vec<GridAccessors> = Vec::new();
    for mesh in doc.meshes() {
        let mut grid = GridAccessors::default();
        for prim in mesh.primitives() {
            grid.positions
                .extend(prim.get(&gltf::Semantic::Positions).map(|a| a.index()));
            grid.deltas.extend(
                prim.morph_targets()
                    .filter_map(|t| t.positions())
                    .map(|a| a.index()),
            );
        }
        for &a in grid.positions.iter().chain(&grid.deltas) {
            owners.entry(a).or_default().insert(mesh.index());
        }
        grids.push(grid);
    }
    let mut plans = Vec::new();
    for (m, grid) in grids.into_iter().enumerate() {
        if skinned[m] || nodes_of[m].is_empty() || grid.positions.is_empty() {
            continue;
        }
        let why = |n: &gltf::Node| {
            let i = n.index();
            if n.children().len() > 0 {
                Some(format!("nodes[{i}] drawing it has children"))
            } else if animated.contains(&i) {
                Some(format!("nodes[{i}] drawing it is animated"))
            } else if joints.contains(&i) {
                Some(format!("nodes[{i}] drawing it is a skin's joint"))
            } else if n.camera().is_some() {
                Some(format!("nodes[{i}] drawing it has a camera"))
            } else if n.extensions().is_some_and(|e| !e.is_empty()) {
                // A light would move with the grid, GPU instances would scale about it.
                Some(format!("nodes[{i}] drawing it has extensions"))
            } else {
                None
            }
        };
        let shared = (grid.positions.iter().chain(&grid.deltas))
            .find(|a| owners.get(a).is_some_and(|o| o.len() > 1))
            .map(|a| format!("accessors[{a}] holds positions of another mesh too"));
        match nodes_of[m].iter().find_map(why).or(shared) {
            Some(reason) => notes.push(format!(
                "meshes[{m}] is rigid and {reason}: its positions stay float (its grid's \
                 dequantisation goes into its node)"
            )),
            None => plans.push(RigidPlan {
                grid,
                nodes: nodes_of[m].iter().map(|n| n.index()).collect(),
            }),
        }
    }
    plans
}

/// Read accessor `index` as f64 values (normalised integers mapped), `what` naming it.
fn read(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    index: usize,
    what: &str,
) -> Result<super::accessor::AccessorData> {
    let acc = doc
        .accessors()
        .nth(index)
        .ok_or_else(|| Error::invalid(file, what, format!("accessors[{index}] is missing")))?;
    super::accessor::read(&acc, buffers, file, what)
}

/// The grid over the skinned positions, the positions on it, their deltas scaled to it and
/// the skins' inverse bind matrices with its dequantisation folded in.
fn quantize_positions(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    plan: &PositionPlan,
    q: MeshQuantization,
    done: &mut BTreeSet<usize>,
    out: &mut Quantized,
) -> Result<()> {
    let (corner, step) = on_grid(file, (doc, buffers), &plan.grid, q, done, out)?;
    let bind_from_grid = glam::Mat4::from_scale_rotation_translation(
        glam::Vec3::splat(step),
        glam::Quat::IDENTITY,
        glam::Vec3::from(corner),
    );
    fold_into_inverse_binds(file, doc, buffers, plan, bind_from_grid, done, out)?;
    out.position_step = Some(step);
    Ok(())
}

/// `grid`'s positions on one grid of `q.position_bits` over their box, and its deltas scaled
/// to it (replacements in `out`); the grid's corner and step as the file stores them.
fn on_grid(
    file: &str,
    (doc, buffers): (&gltf::Document, &[gltf::buffer::Data]),
    grid: &GridAccessors,
    q: MeshQuantization,
    done: &mut BTreeSet<usize>,
    out: &mut Quantized,
) -> Result<([f32; 3], f32)> {
    let mut read_all = Vec::new();
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for &a in &grid.positions {
        let what = format!("accessors[{a}] (POSITION)");
        let data = read(file, doc, buffers, a, &what)?;
        data.expect_components(3, file, &what)?;
        data.expect_finite(file, &what)?;
        for p in data.values.chunks_exact(3) {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        read_all.push((a, data, what));
    }
    if read_all.iter().all(|(_, d, _)| d.count == 0) {
        (lo, hi) = ([0.0; 3], [0.0; 3]);
    }
    let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    let levels = f64::from((1u32 << q.position_bits) - 1);
    // A flat or single-point mesh: any step stores it exactly.
    let step = if extent > 0.0 { extent / levels } else { 1.0 };
    // The corner and step as the file stores them (f32): the integers are rounded against
    // these, so the rounding is all the error.
    let corner = [lo[0] as f32, lo[1] as f32, lo[2] as f32];
    let step32 = step as f32;
    for (a, data, what) in read_all {
        let mut bytes = Vec::with_capacity(data.count * 8);
        let (mut qmin, mut qmax) = (vec![f64::MAX; 3], vec![0.0f64; 3]);
        for p in data.values.chunks_exact(3) {
            for k in 0..3 {
                let v = ((p[k] as f32 - corner[k]) / step32)
                    .round()
                    .clamp(0.0, levels as f32);
                qmin[k] = qmin[k].min(f64::from(v));
                qmax[k] = qmax[k].max(f64::from(v));
                bytes.extend_from_slice(&(v as u16).to_le_bytes());
            }
            bytes.extend_from_slice(&[0, 0]);
        }
        done.insert(a);
        out.replacements.push(Replacement {
            accessor: a,
            bytes,
            stride: Some(8),
            component: ComponentType::U16,
            normalized: false,
            bounds: Some((qmin, qmax)),
            what,
        });
    }
    for &a in &grid.deltas {
        let what = format!("accessors[{a}] (morph POSITION delta)");
        let data = read(file, doc, buffers, a, &what)?;
        data.expect_components(3, file, &what)?;
        data.expect_finite(file, &what)?;
        let scaled: Vec<f32> = data.values.iter().map(|&d| d as f32 / step32).collect();
        done.insert(a);
        out.replacements.push(grid_deltas(a, scaled, what));
    }
    Ok((corner, step32))
}

/// Morph position deltas in grid steps (`scaled`) as whole steps in shorts (stride 8, vertex
/// attributes being 4-aligned), as gltfpack stores them; as the scaled floats when a delta
/// spans more steps than a short holds.
fn grid_deltas(a: usize, scaled: Vec<f32>, what: String) -> Replacement {
    let steps: Vec<f32> = scaled.iter().map(|d| d.round()).collect();
    if steps.iter().any(|s| s.abs() > f32::from(i16::MAX)) {
        return Replacement {
            accessor: a,
            bytes: scaled.iter().flat_map(|d| d.to_le_bytes()).collect(),
            stride: None,
            component: ComponentType::F32,
            normalized: false,
            bounds: Some(float_bounds(&scaled, 3)),
            what,
        };
    }
    let mut bytes = Vec::with_capacity(steps.len() / 3 * 8);
    for d in steps.chunks_exact(3) {
        for &c in d {
            bytes.extend_from_slice(&(c as i16).to_le_bytes());
        }
        bytes.extend_from_slice(&[0, 0]);
    }
    Replacement {
        accessor: a,
        bytes,
        stride: Some(8),
        component: ComponentType::I16,
        normalized: false,
        bounds: Some(float_bounds(&steps, 3)),
        what,
    }
}

/// Each skin's `joint_from_bind * bind_from_grid`: its inverse bind accessor replaced (once
/// when shared), or new matrices for a skin without one.
fn fold_into_inverse_binds(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    plan: &PositionPlan,
    bind_from_grid: glam::Mat4,
    done: &mut BTreeSet<usize>,
    out: &mut Quantized,
) -> Result<()> {
    for skin in doc.skins().filter(|s| plan.skins.contains(&s.index())) {
        let joints = skin.joints().count();
        let (matrices, accessor) = match skin.inverse_bind_matrices() {
            Some(acc) if done.contains(&acc.index()) => continue,
            Some(acc) => {
                let what = format!("skins[{}].inverseBindMatrices", skin.index());
                let data = read(file, doc, buffers, acc.index(), &what)?;
                data.expect_components(16, file, &what)?;
                let m: Vec<glam::Mat4> = data
                    .values
                    .chunks_exact(16)
                    .map(|c| glam::Mat4::from_cols_array(&std::array::from_fn(|k| c[k] as f32)))
                    .collect();
                (m, Some((acc.index(), what)))
            }
            None => (vec![glam::Mat4::IDENTITY; joints], None),
        };
        let bytes: Vec<u8> = matrices
            .iter()
            .flat_map(|m| (*m * bind_from_grid).to_cols_array())
            .flat_map(f32::to_le_bytes)
            .collect();
        match accessor {
            Some((a, what)) => {
                done.insert(a);
                out.replacements.push(Replacement {
                    accessor: a,
                    bytes,
                    stride: None,
                    component: ComponentType::F32,
                    normalized: false,
                    bounds: None,
                    what,
                });
            }
            None => out.new_inverse_binds.push((skin.index(), bytes, joints)),
        }
    }
    Ok(())
}

/// Normals and tangents as normalised bytes and texture coordinates in `[0, 1]` as
/// normalised shorts, for every mesh (float accessors only; each once).
fn directions_and_uvs(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    (ranged, uv_bits): (&UvPlan, u32),
    done: &mut BTreeSet<usize>,
    out: &mut Quantized,
) -> Result<()> {
    use gltf::Semantic as S;
    for mesh in doc.meshes() {
        for prim in mesh.primitives() {
            for (semantic, acc) in prim.attributes() {
                let a = acc.index();
                let float = acc.data_type() == gltf::accessor::DataType::F32;
                if !float || done.contains(&a) {
                    continue;
                }
                let field = format!(
                    "meshes[{}].primitives[{}].attributes.{}",
                    mesh.index(),
                    prim.index(),
                    semantic.to_string()
                );
                let replacement = match semantic {
                    S::Normals => Some(directions(file, doc, buffers, a, 3, field)?),
                    S::Tangents => Some(directions(file, doc, buffers, a, 4, field)?),
                    S::TexCoords(_) => match ranged.get(&a) {
                        Some((set, materials)) => {
                            let data = read(file, doc, buffers, a, &field)?;
                            let (r, offset, scale) = ranged_uvs(file, data, a, uv_bits, field)?;
                            out.uv_transforms.push(UvTransform {
                                materials: materials.clone(),
                                set: *set,
                                offset,
                                scale,
                            });
                            Some(r)
                        }
                        None => uvs(file, doc, buffers, a, field, &mut out.notes)?,
                    },
                    _ => None,
                };
                if let Some(r) = replacement {
                    done.insert(a);
                    out.replacements.push(r);
                }
            }
            for (t, target) in prim.morph_targets().enumerate() {
                let deltas = [("NORMAL", target.normals()), ("TANGENT", target.tangents())];
                for (name, acc) in deltas {
                    let Some(acc) = acc else { continue };
                    let a = acc.index();
                    if acc.data_type() != gltf::accessor::DataType::F32 || done.contains(&a) {
                        continue;
                    }
                    let field = format!(
                        "meshes[{}].primitives[{}].targets[{t}].{name}",
                        mesh.index(),
                        prim.index()
                    );
                    if let Some(r) = direction_deltas(file, doc, buffers, a, field, &mut out.notes)?
                    {
                        done.insert(a);
                        out.replacements.push(r);
                    }
                }
            }
        }
    }
    Ok(())
}

/// A morph NORMAL or TANGENT delta accessor (VEC3) as normalised bytes padded to 4, as
/// gltfpack stores them, when every component is within [-1, 1] (None, with a note, when one
/// is not: a byte would clip it).
fn direction_deltas(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    a: usize,
    what: String,
    notes: &mut Vec<String>,
) -> Result<Option<Replacement>> {
    let data = read(file, doc, buffers, a, &what)?;
    data.expect_components(3, file, &what)?;
    data.expect_finite(file, &what)?;
    if !data.values.iter().all(|c| (-1.0..=1.0).contains(c)) {
        notes.push(format!(
            "{what}: deltas outside [-1, 1] stay float (a normalised byte holds [-1, 1])"
        ));
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(data.count * 4);
    for v in data.values.chunks_exact(3) {
        for &c in v {
            bytes.push(((c * 127.0).round() as i8) as u8);
        }
        bytes.push(0);
    }
    Ok(Some(Replacement {
        accessor: a,
        bytes,
        stride: Some(4),
        component: ComponentType::I8,
        normalized: true,
        bounds: None,
        what,
    }))
}

/// A NORMAL (`n` = 3) or TANGENT (`n` = 4) accessor as normalised bytes, padded to 4.
fn directions(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    a: usize,
    n: usize,
    what: String,
) -> Result<Replacement> {
    let data = read(file, doc, buffers, a, &what)?;
    data.expect_components(n, file, &what)?;
    data.expect_finite(file, &what)?;
    let mut bytes = Vec::with_capacity(data.count * 4);
    for v in data.values.chunks_exact(n) {
        for &c in v {
            bytes.push(((c.clamp(-1.0, 1.0) * 127.0).round() as i8) as u8);
        }
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
    }
    Ok(Replacement {
        accessor: a,
        bytes,
        stride: (n == 3).then_some(4),
        component: ComponentType::I8,
        normalized: true,
        bounds: None,
        what,
    })
}

/// Per TEXCOORD accessor that can be stored over its own range: its set and the materials
/// whose textures read it. An accessor qualifies when every primitive uses it as the same
/// set, and each of those primitives' materials reads that set from this accessor alone and
/// has no extension of its own (an extension's textures could read it unseen).
type UvPlan = std::collections::HashMap<usize, (u32, BTreeSet<usize>)>;

fn uv_range_plan(doc: &gltf::Document) -> UvPlan {
    use std::collections::HashMap;
    // Accessor → (set, material) of each use; (material, set) → accessors it reads.
    let mut uses: HashMap<usize, Vec<(u32, Option<usize>)>> = HashMap::new();
    let mut reads: HashMap<(usize, u32), BTreeSet<usize>> = HashMap::new();
    for prim in doc.meshes().flat_map(|m| m.primitives()) {
        let material = prim.material().index();
        for (semantic, acc) in prim.attributes() {
            if let gltf::Semantic::TexCoords(set) = semantic {
                uses.entry(acc.index()).or_default().push((set, material));
                if let Some(m) = material {
                    reads.entry((m, set)).or_default().insert(acc.index());
                }
            }
        }
    }
    let plain = |m: usize| {
        doc.materials()
            .nth(m)
            .is_some_and(|mat| mat.extensions().is_none_or(|e| e.is_empty()))
    };
    uses.into_iter()
        .filter_map(|(a, list)| {
            let set = list.first()?.0;
            let materials: BTreeSet<usize> = list.iter().filter_map(|u| u.1).collect();
            let fits = list.iter().all(|u| u.0 == set)
                && materials
                    .iter()
                    .all(|&m| plain(m) && reads.get(&(m, set)).is_some_and(|r| r.len() == 1));
            fits.then_some((a, (set, materials)))
        })
        .collect()
}

/// A TEXCOORD accessor (`data`) stored over its own range in `bits` bits (normalised shorts
/// holding codes up to `2^bits - 1`), with the `offset` and `scale` that give it back.
fn ranged_uvs(
    file: &str,
    data: super::accessor::AccessorData,
    a: usize,
    bits: u32,
    what: String,
) -> Result<(Replacement, glam::Vec2, glam::Vec2)> {
    data.expect_components(2, file, &what)?;
    data.expect_finite(file, &what)?;
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for uv in data.values.chunks_exact(2) {
        for k in 0..2 {
            lo[k] = lo[k].min(uv[k]);
            hi[k] = hi[k].max(uv[k]);
        }
    }
    let levels = f64::from((1u32 << bits) - 1);
    // A coordinate that does not vary keeps any range: 1 stores it exactly.
    let range = [0, 1].map(|k| if hi[k] > lo[k] { hi[k] - lo[k] } else { 1.0 });
    let bytes = data
        .values
        .chunks_exact(2)
        .flat_map(|uv| {
            [0, 1].map(|k| {
                (((uv[k] - lo[k]) / range[k] * levels)
                    .round()
                    .clamp(0.0, levels)) as u16
            })
        })
        .flat_map(u16::to_le_bytes)
        .collect();
    // Stored code c reads as c / 65535; the texture's transform scales that back.
    let scale = [0, 1].map(|k| (range[k] * 65535.0 / levels) as f32);
    Ok((
        short_uvs(a, bytes, what),
        glam::Vec2::new(lo[0] as f32, lo[1] as f32),
        glam::Vec2::from(scale),
    ))
}

/// A TEXCOORD accessor as normalised unsigned shorts when every value is in `[0, 1]` (None,
/// with a note, when one is not).
fn uvs(
    file: &str,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    a: usize,
    what: String,
    notes: &mut Vec<String>,
) -> Result<Option<Replacement>> {
    let data = read(file, doc, buffers, a, &what)?;
    data.expect_components(2, file, &what)?;
    if !data.values.iter().all(|v| (0.0..=1.0).contains(v)) {
        notes.push(format!(
            "{what}: coordinates outside [0, 1] whose materials cannot take a range stay float"
        ));
        return Ok(None);
    }
    let bytes = data
        .values
        .iter()
        .flat_map(|&v| ((v * 65535.0).round() as u16).to_le_bytes())
        .collect();
    Ok(Some(short_uvs(a, bytes, what)))
}

/// Accessor `a` as texture coordinates in normalised unsigned shorts (`bytes`).
fn short_uvs(a: usize, bytes: Vec<u8>, what: String) -> Replacement {
    Replacement {
        accessor: a,
        bytes,
        stride: None,
        component: ComponentType::U16,
        normalized: true,
        bounds: None,
        what,
    }
}

/// Per component, the smallest and largest of `values` (`n` per element), as written in
/// `min` and `max` ([`super::gltf_export::min_max`] widened).
fn float_bounds(values: &[f32], n: usize) -> (Vec<f64>, Vec<f64>) {
    let (lo, hi) = super::gltf_export::min_max(values, n);
    let wide = |v: Vec<f32>| v.into_iter().map(f64::from).collect();
    (wide(lo), wide(hi))
}
