//! Set-up: [`insert_links`] checks the specs, adds the link nodes, appends them to the skins
//! and has the weights reassigned ([`super::reassign`]); the method is in [`crate::links`].

use glam::{DMat4, DVec3, Vec3};

use super::reassign::{Group, SpecGeom, max_sum_deviation, reassign};
use super::{BoneInfo, Link, LinkRig, LinkSpec, LinkStats, link_rotation};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{Draw, Mesh, Node, RawScene, Scene, SceneBuilder, Skin};
use crate::skin::weights::GPU_MAX_INFLUENCES;

/// A node's local rest transform, decomposed from its matrix for a `matrix` node.
fn node_local_rest(node: &Node) -> Trs {
    match node.matrix {
        Some(m) => {
            let (scale, rotation, translation) = m.to_scale_rotation_translation();
            Trs {
                translation,
                rotation,
                scale,
            }
        }
        None => node.rest,
    }
}

/// The error of [`insert_links`]'s rule `n`.
fn rule(n: u32, msg: impl Into<String>) -> Error {
    Error::job("insert_links", n, msg)
}

/// Insert bone links for `specs` (see the [module documentation](crate::links)) and reassign the weights of
/// every primitive skinned with an affected skin. Returns the new scene, the per-frame rig and
/// what changed. `bones` is indexed by `scene` node; it gives the zone length of specs without
/// `total_length_m` and, where it has one, the child's joint radius for the radial limit of a
/// fork's zone (missing entries are fine for specs with a length).
///
/// Validation rules (`Error::Job` named `insert_links`):
/// 1. every spec's `parent` and `child` are in range and `child`'s parent is `parent`;
/// 2. `count` is at least 1 (and at most 64);
/// 3. the zone length (given, or from `bones` at `child`) is finite and positive;
/// 4. `normal_fade` is finite and in `[0, 1]`;
/// 5. no child appears in two specs;
/// 6. a mesh whose weights change is drawn with one skin only;
/// 7. its weights are not negative (a native rig's muscle bones give their parents negative
///    weights, which the links would split from the muscle's own).
pub fn insert_links(
    scene: &Scene,
    specs: &[LinkSpec],
    bones: &BoneInfo,
) -> Result<(Scene, LinkRig, LinkStats)> {
    let n_old = scene.nodes.len();
    let lengths = validate_specs(scene, specs, bones)?;
    let nodes = link_nodes(scene, specs);
    let mut stats = LinkStats {
        links_added: nodes.meta.len(),
        ..Default::default()
    };
    let setup = Setup {
        scene,
        specs,
        bones,
        lengths_m: &lengths,
        spec_links: &nodes.spec_links,
    };
    let (skins, skin_groups) = link_skins(&setup, &mut stats);
    let meshes = reassign_meshes(scene, &skin_groups, &mut stats)?;
    stats.exceeds_gpu_limit = stats.max_influences_after > GPU_MAX_INFLUENCES;
    let (built, raw_to_new) = build_linked_scene(scene, nodes.raw_nodes, meshes, skins)?;
    let rig = LinkRig {
        links: rig_links(scene, specs, &nodes.meta, &raw_to_new),
        node_count: built.nodes.len(),
        old_to_new: raw_to_new[..n_old].to_vec(),
        total_length_m: lengths,
    };
    Ok((built, rig, stats))
}

/// Rules 1–5, spec by spec; returns each spec's zone length (metres).
fn validate_specs(scene: &Scene, specs: &[LinkSpec], bones: &BoneInfo) -> Result<Vec<f32>> {
    let n_old = scene.nodes.len();
    let mut lengths = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        if s.parent >= n_old || s.child >= n_old || scene.nodes[s.child].parent != Some(s.parent) {
            return Err(rule(
                1,
                format!(
                    "specs[{i}]: node {} is not a child of node {} in a scene of {n_old} nodes",
                    s.child, s.parent
                ),
            ));
        }
        if s.count == 0 || s.count > 64 {
            return Err(rule(
                2,
                format!("specs[{i}]: link count {} is not in 1..=64", s.count),
            ));
        }
        let len = match s.total_length_m {
            Some(l) => l,
            None => bones
                .default_total_length_m(s.child)
                .ok_or_else(|| rule(3, format!("specs[{i}]: no bone length/joint radius for node {} (BoneInfo has {}/{} entries)", s.child, bones.length_m.len(), bones.joint_radius_m.len())))?,
        };
        if !(len.is_finite() && len > 0.0) {
            return Err(rule(
                3,
                format!("specs[{i}]: zone length {len} is not finite and positive"),
            ));
        }
        if !(s.normal_fade.is_finite() && (0.0..=1.0).contains(&s.normal_fade)) {
            return Err(rule(
                4,
                format!("specs[{i}]: normal_fade {} is not in [0, 1]", s.normal_fade),
            ));
        }
        if specs[..i].iter().any(|o| o.child == s.child) {
            return Err(rule(
                5,
                format!(
                    "specs[{i}]: node {} is already linked by an earlier spec",
                    s.child
                ),
            ));
        }
        lengths.push(len);
    }
    Ok(lengths)
}

/// The nodes of the linked scene before it is built, and where its links came from.
struct LinkNodes {
    /// The old nodes at their old indices (parents stay valid raw indices), then the links;
    /// `source_index` temporarily holds the raw index so the built order can be mapped.
    raw_nodes: Vec<Node>,
    /// Per spec: raw indices of its links.
    spec_links: Vec<Vec<usize>>,
    /// Per link, in raw order after the old nodes: (spec, fraction).
    meta: Vec<(usize, f32)>,
}

/// The old nodes, then per spec its `count` links: children of the parent at the joint,
/// carrying `k/(N+1)` of the child's rest rotation, scale 1.
fn link_nodes(scene: &Scene, specs: &[LinkSpec]) -> LinkNodes {
    let mut raw_nodes: Vec<Node> = scene.nodes.clone();
    for (i, node) in raw_nodes.iter_mut().enumerate() {
        node.source_index = i;
    }
    let mut spec_links: Vec<Vec<usize>> = Vec::with_capacity(specs.len());
    let mut meta: Vec<(usize, f32)> = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        let child = &scene.nodes[s.child];
        let child_local = node_local_rest(child);
        let base = child
            .name
            .clone()
            .unwrap_or_else(|| format!("node{}", s.child));
        let mut v = Vec::with_capacity(s.count);
        for k in 1..=s.count {
            let f = k as f32 / (s.count + 1) as f32;
            let raw = raw_nodes.len();
            raw_nodes.push(Node {
                name: Some(format!("{base}_link{k}")),
                source_index: raw,
                parent: Some(s.parent),
                rest: Trs {
                    translation: child_local.translation,
                    rotation: link_rotation(child_local.rotation, child_local.rotation, f),
                    scale: Vec3::ONE,
                },
                matrix: None,
                mesh: None,
                skin: None,
                morph_weights: None,
            });
            meta.push((si, f));
            v.push(raw);
        }
        spec_links.push(v);
    }
    LinkNodes {
        raw_nodes,
        spec_links,
        meta,
    }
}

/// What the skin step reads: the checked specs with their zone lengths and link nodes.
struct Setup<'a> {
    /// The scene without links.
    scene: &'a Scene,
    /// The specs (checked).
    specs: &'a [LinkSpec],
    /// Bone dimensions (joint radii for the forks' radial limits).
    bones: &'a BoneInfo,
    /// Per spec: its zone length.
    lengths_m: &'a [f32],
    /// Per spec: raw node indices of its links.
    spec_links: &'a [Vec<usize>],
}

/// The scene's skins with the links appended to every skin holding both ends of a spec, and
/// per skin its weight groups (counting the skins changed in `stats`).
fn link_skins(setup: &Setup, stats: &mut LinkStats) -> (Vec<Skin>, Vec<Vec<Group>>) {
    let scene = setup.scene;
    // Children lists of the old hierarchy.
    let mut children = vec![Vec::new(); scene.nodes.len()];
    for (i, node) in scene.nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            children[p].push(i);
        }
    }
    let mut skins = scene.skins.clone();
    let mut skin_groups: Vec<Vec<Group>> = Vec::with_capacity(skins.len());
    for skin in skins.iter_mut() {
        let joints_before = skin.joints.len();
        skin_groups.push(link_skin(setup, &children, skin));
        if skin.joints.len() > joints_before {
            stats.skins_changed += 1;
        }
    }
    (skins, skin_groups)
}

/// Append the links of every spec whose parent and child `skin` holds, their inverse bind
/// matrices derived from the skin's own bind pose; returns the skin's weight groups, deepest
/// parent (highest node index) first. `children` lists each old node's children.
fn link_skin(setup: &Setup, children: &[Vec<usize>], skin: &mut Skin) -> Vec<Group> {
    let joint_of = |node: usize| {
        skin.joints
            .iter()
            .position(|&j| j == node)
            .map(|p| p as u32)
    };
    let mut groups: Vec<Group> = Vec::new();
    let mut new_joints = Vec::new();
    let mut new_joint_from_bind = Vec::new();
    let old_count = skin.joints.len();
    for (si, s) in setup.specs.iter().enumerate() {
        let (Some(jp), Some(jc)) = (joint_of(s.parent), joint_of(s.child)) else {
            continue;
        };
        let joint_from_bind_p = skin.joint_from_bind[jp as usize].as_dmat4();
        let bind_from_joint_p = joint_from_bind_p.inverse();
        let bind_from_joint_c = skin.joint_from_bind[jc as usize].as_dmat4().inverse();
        // The child's bind pose relative to the parent.
        let (_, r, t) = (joint_from_bind_p * bind_from_joint_c).to_scale_rotation_translation();
        let rest_c = node_local_rest(&setup.scene.nodes[s.child]).rotation;
        let mut link_joints = Vec::with_capacity(s.count);
        for k in 1..=s.count {
            let f = k as f32 / (s.count + 1) as f32;
            let rf = link_rotation(rest_c, r.as_quat(), f).as_dquat();
            let bind_from_link = bind_from_joint_p * DMat4::from_rotation_translation(rf, t);
            link_joints.push((old_count + new_joints.len()) as u32);
            new_joints.push(setup.spec_links[si][k - 1]);
            new_joint_from_bind.push(bind_from_link.inverse().as_mat4());
        }
        let length_m = setup.lengths_m[si] as f64;
        let geom = SpecGeom {
            child_joint: jc,
            link_joints,
            joint: bind_from_joint_c.transform_point3(DVec3::ZERO),
            axis: bind_from_joint_c
                .transform_vector3(DVec3::X)
                .normalize_or_zero(),
            length: length_m,
            fade: s.normal_fade as f64,
            radial_limit: match setup.bones.joint_radius_m.get(s.child) {
                Some(&r) if r.is_finite() && r > 0.0 => 2.0 * r as f64,
                _ => length_m,
            },
        };
        match groups.iter_mut().find(|g| g.parent_joint == jp) {
            Some(g) => g.specs.push(geom),
            None => groups.push(Group {
                parent_joint: jp,
                children: children[s.parent]
                    .iter()
                    .filter_map(|&c| joint_of(c))
                    .collect(),
                specs: vec![geom],
            }),
        }
    }
    // Deepest parent (highest node index) first.
    groups.sort_by_key(|g| std::cmp::Reverse(skin.joints[g.parent_joint as usize]));
    skin.joints.extend(new_joints);
    skin.joint_from_bind.extend(new_joint_from_bind);
    groups
}

/// The scene's meshes with the weights of every mesh drawn with an affected skin reassigned
/// (rules 6 and 7), what changed added to `stats`.
fn reassign_meshes(
    scene: &Scene,
    skin_groups: &[Vec<Group>],
    stats: &mut LinkStats,
) -> Result<Vec<Mesh>> {
    let mut meshes = scene.meshes.clone();
    for (mi, mesh) in meshes.iter_mut().enumerate() {
        let mut used: Vec<usize> = scene
            .draws
            .iter()
            .filter(|d| d.mesh == mi)
            .filter_map(|d| d.skin)
            .collect();
        used.sort_unstable();
        used.dedup();
        let affected: Vec<usize> = used
            .iter()
            .copied()
            .filter(|&s| !skin_groups[s].is_empty())
            .collect();
        if affected.is_empty() {
            continue;
        }
        if used.len() > 1 {
            return Err(rule(
                6,
                format!(
                    "meshes[{mi}] is drawn with skins {used:?}; bone links need one skin per mesh"
                ),
            ));
        }
        let groups = &skin_groups[affected[0]];
        for (pi, prim) in mesh.primitives.iter_mut().enumerate() {
            let Some(w) = prim.skin_weights.as_ref() else {
                continue;
            };
            if let Some(k) = w.weights.iter().position(|&x| x < 0.0) {
                return Err(rule(
                    7,
                    format!(
                        "meshes[{mi}].primitives[{pi}]: vertex {} has a negative weight (a \
                         muscle bone's parent); bone links need weights of 0 or more",
                        k / w.width.max(1)
                    ),
                ));
            }
            let (new_w, changed) =
                reassign(w, &prim.positions, prim.normals.as_deref(), groups, stats);
            stats.max_influences_before = stats.max_influences_before.max(w.max_influences());
            stats.max_sum_deviation_before =
                stats.max_sum_deviation_before.max(max_sum_deviation(w));
            stats.max_influences_after = stats.max_influences_after.max(new_w.max_influences());
            stats.max_sum_deviation_after =
                stats.max_sum_deviation_after.max(max_sum_deviation(&new_w));
            stats.max_width_after = stats.max_width_after.max(new_w.width);
            if changed > 0 {
                stats.primitives_changed += 1;
                stats.vertices_changed += changed;
            }
            prim.skin_weights = Some(new_w);
        }
    }
    Ok(meshes)
}

/// Build the linked scene from the raw nodes (the old ones first, then the links), the
/// reassigned meshes and the linked skins; the old draws are carried over. Returns it with the
/// raw → built node index map. Source indices: the old nodes keep theirs, the links follow
/// the largest.
fn build_linked_scene(
    scene: &Scene,
    raw_nodes: Vec<Node>,
    meshes: Vec<Mesh>,
    skins: Vec<Skin>,
) -> Result<(Scene, Vec<usize>)> {
    let n_old = scene.nodes.len();
    // Nodes shown: exactly the old draws (their nodes as roots), so validation covers what it
    // covered before; the draw list itself is carried over unchanged below.
    let mut roots: Vec<usize> = scene.draws.iter().map(|d| d.node).collect();
    roots.sort_unstable();
    roots.dedup();
    if roots.is_empty() && n_old < raw_nodes.len() {
        roots.push(n_old); // a link: shows nothing with a mesh
    }
    let raw = RawScene {
        name: scene.name.clone(),
        nodes: raw_nodes,
        meshes,
        skins,
        animations: scene.animations.clone(),
        roots,
        report: scene.report.clone(),
        textures: scene.textures.clone(),
    };
    let mut built = SceneBuilder::build(raw)?;
    let mut raw_to_new = vec![0usize; built.nodes.len()];
    for (i, node) in built.nodes.iter().enumerate() {
        raw_to_new[node.source_index] = i;
    }
    let next_source = scene
        .nodes
        .iter()
        .map(|n| n.source_index + 1)
        .max()
        .unwrap_or(0);
    for node in built.nodes.iter_mut() {
        let r = node.source_index;
        node.source_index = if r < n_old {
            scene.nodes[r].source_index
        } else {
            next_source + (r - n_old)
        };
    }
    built.draws = scene
        .draws
        .iter()
        .map(|d| Draw {
            node: raw_to_new[d.node],
            ..*d
        })
        .collect();
    Ok((built, raw_to_new))
}

/// The per-frame records of the links (`meta`: per link, its spec and fraction), in the
/// built scene's node indices.
fn rig_links(
    scene: &Scene,
    specs: &[LinkSpec],
    meta: &[(usize, f32)],
    raw_to_new: &[usize],
) -> Vec<Link> {
    let n_old = scene.nodes.len();
    meta.iter()
        .enumerate()
        .map(|(i, &(si, fraction))| {
            let child = &scene.nodes[specs[si].child];
            Link {
                node: raw_to_new[n_old + i],
                parent: raw_to_new[specs[si].parent],
                child: raw_to_new[specs[si].child],
                fraction,
                spec: si,
                child_fixed: child.matrix.map(|_| node_local_rest(child)),
                rest_rotation: node_local_rest(child).rotation,
            }
        })
        .collect()
}
