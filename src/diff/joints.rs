//! Which joints' weights or bind matrices differ between two files of one character, for
//! `diff`.
//!
//! Method: over every matched vertex pair, each joint that influences either side:
//! - weights: |w_A − w_B| (a joint missing on one side weighs 0 there);
//! - bind: each joint's skinning matrix (its inverse bind matrix composed with its world
//!   transform in the pose the vertices were paired in: the rest pose, or a clip's start
//!   where the files rest differently), M_A and M_B, judged where it acts, at A's bind-space position p_A:
//!   |M_B · D⁻¹ · p_A − M_A · p_A|. D is what the draw's joints share on B's side, the
//!   element-wise median over them of M_A⁻¹ · M_B: a quantisation folded into every inverse
//!   bind matrix (gltfpack stores integer positions and scales them back there, M_B = M_A ·
//!   D) is D and not a change, and B's rounded positions play no part; one joint whose bind
//!   matrix moved stands out from the median and moves its vertices by as much.
//!
//! Cost: O(pairs × influences + draws × joints) (palette slots looked up in per-draw maps). Limits: a draw with one or two joints in
//! both skins has nothing to take a median against (its bind changes read as D); a joint
//! that influences no matched vertex is judged by nothing.

use std::collections::HashMap;

use glam::Mat4;

use crate::frame::FrameState;
use crate::scene::Scene;
use crate::skin::RunningError;

use super::matching::VertexSet;
use super::names::MatchedBy;

/// One joint whose weights or bind matrix differ beyond the tolerances.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointChange {
    /// The joint's node in A.
    pub node: usize,
    /// The joint's name in A.
    pub name: String,
    /// Its name in B.
    pub b_name: String,
    /// How it was matched.
    pub matched_by: MatchedBy,
    /// Largest distance its bind matrix makes at a vertex, relative to the diagonal.
    pub bind_distance_rel: f64,
    /// Largest weight difference at a vertex.
    pub weight_max_difference: f32,
    /// Vertex pairs whose weight differs by more than the weight tolerance.
    pub vertices_weight_differs: usize,
    /// The vertex (draw, vertex of A) of the largest bind distance when that is over the
    /// tolerance, else of the largest weight difference.
    pub worst_vertex: (u32, u32),
}

/// The joints of both files and what differs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct JointReport {
    /// Joints (skin joints of A) with a match in B, by name.
    pub by_name: usize,
    /// ... by hierarchy.
    pub by_hierarchy: usize,
    /// Skin joints of A without a match in B.
    pub unmatched_a: Vec<String>,
    /// Skin joints of B that no joint of A matched.
    pub unmatched_b: Vec<String>,
    /// Joints whose weights or bind matrices differ, largest bind distance first.
    pub changed: Vec<JointChange>,
}

/// One file's side of the comparison: its scene, rest frame and vertices.
pub struct Side<'a> {
    /// The scene.
    pub scene: &'a Scene,
    /// Its rest pose, evaluated.
    pub rest: &'a FrameState,
    /// Its drawn vertices.
    pub set: &'a VertexSet,
}

/// A vertex's influences: (node, weight, palette slot of the draw).
fn influences(scene: &Scene, draw: usize, vertex: usize, out: &mut Vec<(usize, f32, usize)>) {
    out.clear();
    let d = &scene.draws[draw];
    let prim = scene.primitive(d);
    match (d.skin.and_then(|s| scene.skins.get(s)), &prim.skin_weights) {
        (Some(skin), Some(w)) => {
            let row = vertex * w.width..(vertex + 1) * w.width;
            let (joints, weights) = (
                w.joints.get(row.clone()).unwrap_or(&[]),
                w.weights.get(row).unwrap_or(&[]),
            );
            for (&j, &wt) in joints.iter().zip(weights) {
                if wt > 0.0
                    && let Some(&node) = skin.joints.get(j as usize)
                {
                    out.push((node, wt, j as usize));
                }
            }
        }
        _ => out.push((d.node, 1.0, 0)),
    }
}

/// Palette slot of every node in `draw` (its index in the draw's skin, the first when a node
/// is there twice; 0 for a rigid draw's own node).
fn slots(scene: &Scene, draw: usize) -> HashMap<usize, usize> {
    let d = &scene.draws[draw];
    match d.skin.and_then(|s| scene.skins.get(s)) {
        Some(skin) => {
            let mut map = HashMap::with_capacity(skin.joints.len());
            for (slot, &n) in skin.joints.iter().enumerate() {
                map.entry(n).or_insert(slot);
            }
            map
        }
        None => HashMap::from([(d.node, 0)]),
    }
}

/// Palette slot of `node` in `draw` ([`slots`], made once per draw into `cache`).
fn slot_of(
    cache: &mut HashMap<usize, HashMap<usize, usize>>,
    scene: &Scene,
    draw: usize,
    node: usize,
) -> Option<usize> {
    cache
        .entry(draw)
        .or_insert_with(|| slots(scene, draw))
        .get(&node)
        .copied()
}

/// D⁻¹ of the draw pair `(da, db)` (see the module header); identity when nothing can be
/// taken a median of or D is singular.
fn shared_inverse(
    a: &Side,
    b: &Side,
    (da, db): (usize, usize),
    nodes: &[Option<(usize, MatchedBy)>],
) -> Mat4 {
    let (pal_a, pal_b) = (
        a.rest.draw_palette(a.scene, da),
        b.rest.draw_palette(b.scene, db),
    );
    let joints_a: Vec<usize> = match a.scene.draws[da].skin.and_then(|s| a.scene.skins.get(s)) {
        Some(skin) => skin.joints.clone(),
        None => vec![a.scene.draws[da].node],
    };
    let slots_b = slots(b.scene, db);
    let mut xs = Vec::new();
    for (slot_a, &n) in joints_a.iter().enumerate() {
        let Some((nb, _)) = nodes.get(n).copied().flatten() else {
            continue;
        };
        let (Some(ma), Some(mb)) = (
            pal_a.get(slot_a),
            slots_b.get(&nb).and_then(|&s| pal_b.get(s)),
        ) else {
            continue;
        };
        let x = ma.inverse() * *mb;
        if x.is_finite() {
            xs.push(x);
        }
    }
    crate::math::elementwise_median(&xs)
        .map(|d| d.inverse())
        .filter(|d| d.is_finite())
        .unwrap_or(Mat4::IDENTITY)
}

#[derive(Clone, Copy, Default)]
struct Acc {
    /// The bind distance, and where it is largest.
    bind: RunningError<(u32, u32)>,
    weight: f32,
    weight_at: (u32, u32),
    weight_count: usize,
}

/// Compare the joints of `a` and `b` over the vertex `pairs`; `nodes` is
/// [`super::names::match_nodes`]'s answer, `diagonal` scales the bind distances.
pub fn compare_joints(
    a: &Side,
    b: &Side,
    pairs: &[(u32, u32)],
    nodes: &[Option<(usize, MatchedBy)>],
    diagonal: f64,
    (bind_tolerance_rel, weight_tolerance): (f64, f32),
) -> JointReport {
    let mut a_of_b: HashMap<usize, usize> = HashMap::new();
    for (i, m) in nodes.iter().enumerate() {
        if let Some((j, _)) = m {
            a_of_b.insert(*j, i);
        }
    }
    let mut acc: HashMap<usize, Acc> = HashMap::new();
    let mut d_inv: HashMap<(usize, usize), Mat4> = HashMap::new();
    let (mut slots_a, mut slots_b) = (HashMap::new(), HashMap::new());
    let (mut inf_a, mut inf_b) = (Vec::new(), Vec::new());
    let mut joint_set: Vec<(usize, f32, f32)> = Vec::new();
    for &(ia, ib) in pairs {
        let (da, va) = (a.set.draw[ia as usize] as usize, a.set.vertex[ia as usize]);
        let (db, vb) = (b.set.draw[ib as usize] as usize, b.set.vertex[ib as usize]);
        influences(a.scene, da, va as usize, &mut inf_a);
        influences(b.scene, db, vb as usize, &mut inf_b);
        // (node of A, weight in A, weight in B) for every joint on either side.
        joint_set.clear();
        for &(n, w, _) in &inf_a {
            match joint_set.iter_mut().find(|e| e.0 == n) {
                Some(e) => e.1 += w,
                None => joint_set.push((n, w, 0.0)),
            }
        }
        for &(nb, w, _) in &inf_b {
            let Some(&n) = a_of_b.get(&nb) else { continue };
            match joint_set.iter_mut().find(|e| e.0 == n) {
                Some(e) => e.2 += w,
                None => joint_set.push((n, 0.0, w)),
            }
        }
        let pa = a.scene.primitive(&a.scene.draws[da]).positions[va as usize];
        let pb = d_inv
            .entry((da, db))
            .or_insert_with(|| shared_inverse(a, b, (da, db), nodes))
            .transform_point3(pa);
        let (pal_a, pal_b) = (
            a.rest.draw_palette(a.scene, da),
            b.rest.draw_palette(b.scene, db),
        );
        for &(n, wa, wb) in &joint_set {
            let e = acc.entry(n).or_default();
            let dw = (wa - wb).abs();
            if dw > e.weight {
                e.weight = dw;
                e.weight_at = (da as u32, va);
            }
            if dw > weight_tolerance {
                e.weight_count += 1;
            }
            let Some((nb, _)) = nodes.get(n).copied().flatten() else {
                continue;
            };
            let qa = slot_of(&mut slots_a, a.scene, da, n)
                .and_then(|s| pal_a.get(s))
                .map(|m| m.transform_point3(pa));
            let qb = slot_of(&mut slots_b, b.scene, db, nb)
                .and_then(|s| pal_b.get(s))
                .map(|m| m.transform_point3(pb));
            if let (Some(qa), Some(qb)) = (qa, qb) {
                e.bind
                    .add(qa.as_dvec3().distance(qb.as_dvec3()), (da as u32, va));
            }
        }
    }
    report(
        a.scene,
        b.scene,
        nodes,
        &acc,
        diagonal,
        (bind_tolerance_rel, weight_tolerance),
    )
}

fn report(
    a: &Scene,
    b: &Scene,
    nodes: &[Option<(usize, MatchedBy)>],
    acc: &HashMap<usize, Acc>,
    diagonal: f64,
    (bind_tolerance_rel, weight_tolerance): (f64, f32),
) -> JointReport {
    let mut r = JointReport::default();
    let mut b_matched = vec![false; b.nodes.len()];
    for n in a.joint_nodes() {
        match nodes.get(n).copied().flatten() {
            Some((j, by)) => {
                b_matched[j] = true;
                match by {
                    MatchedBy::Hierarchy => r.by_hierarchy += 1,
                    _ => r.by_name += 1,
                }
            }
            None => r.unmatched_a.push(a.node_label(n)),
        }
    }
    r.unmatched_b = b
        .joint_nodes()
        .into_iter()
        .filter(|&j| !b_matched[j])
        .map(|j| b.node_label(j))
        .collect();
    let scale = diagonal.max(f64::MIN_POSITIVE);
    for (&n, e) in acc {
        let bind_rel = e.bind.max / scale;
        if bind_rel <= bind_tolerance_rel && e.weight <= weight_tolerance {
            continue;
        }
        let (b_name, matched_by) = match nodes.get(n).copied().flatten() {
            Some((j, by)) => (b.node_label(j), by),
            None => continue,
        };
        r.changed.push(JointChange {
            node: n,
            name: a.node_label(n),
            b_name,
            matched_by,
            bind_distance_rel: bind_rel,
            weight_max_difference: e.weight,
            vertices_weight_differs: e.weight_count,
            worst_vertex: if bind_rel > bind_tolerance_rel {
                e.bind.worst.unwrap_or_default()
            } else {
                e.weight_at
            },
        });
    }
    r.changed.sort_by(|x, y| {
        y.bind_distance_rel
            .total_cmp(&x.bind_distance_rel)
            .then(y.weight_max_difference.total_cmp(&x.weight_max_difference))
            .then(x.node.cmp(&y.node))
    });
    r
}
