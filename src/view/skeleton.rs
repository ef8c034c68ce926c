//! The skeleton overlay: one bone per joint, drawn as Blender draws them (octahedral or stick)
//! or as Babylon's skeleton viewer does (joints as spheres), with joint axes (X red, Y green,
//! Z blue) and the selected bone highlighted; and the same bone list for picking.
//!
//! Based on: Blender's glTF importer (io_import_scene_gltf2, `blender/imp/gltf2_blender_vnode.py`:
//! a bone's tail at one child, the leaf's along its parent's direction) and three.js's
//! `SkeletonHelper`. Method: glTF joints are points, so where each bone ends is worked out
//! once per scene ([`SkeletonShape::new`], set-up): a joint with one child joint points at it;
//! with several, at the child whose subtree holds the most skinned weight (ties: the first),
//! the others joined by thin relationship lines; a leaf joint points along its parent's bone
//! direction with the parent's bone length, fixed in the leaf's own space at the rest pose, so
//! the leaf bone turns with its joint; a native rig's bone ends where the rig says (its +X by
//! its length), and a joint the rig gained (a bone link) spans to its parent's end, or as far
//! as the bone beside it at its own joint. End and control bones are kept short, since a
//! parent's length can dwarf the body (a robot's control bones, a head bone): a glTF leaf is as
//! long as the reach of the vertices it moves most (at least [`MARKER_SHARE`] of the model's
//! diagonal, at most its parent's length), a leaf that moves no vertex is a marker that long,
//! and no leaf or bone that moves no vertex is longer than [`END_BONE_MAX_SHARE`] of the
//! diagonal (a longer control bone points at its child and a relationship line goes on to it);
//! a native rig's bones, links included, keep the lengths the rig gives them. Bones that move
//! no vertex can be hidden ([`SkeletonShape::bones`]). Per frame the tails are carried by the
//! current `model_from_node`. Shapes are sized to the bone and never wider than
//! [`BONE_WIDTH_SHARE`] of the model's diagonal.
//! Cost: set-up O(nodes + skinned influences); per frame O(joints), into reused vectors.
//! Limits: a joint whose parent node is not a joint starts a new chain (no bone joins them).

use glam::{DMat4, DVec3, Mat4, Vec3};

use crate::anim::Pose;
use crate::gpu::OverlayGeometry;
use crate::scene::Scene;

/// One displayed bone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bone {
    /// The node the bone belongs to (its head joint; what clicking it selects).
    pub node: usize,
    /// Head position (world).
    pub head: Vec3,
    /// Tail position (world): the chosen child joint, or the leaf's tip.
    pub tail: Vec3,
}

/// How bones are drawn (Blender's armature display types; Babylon's "spheres and spurs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BoneStyle {
    /// Blender's default: an octahedron from head to tail, widest a tenth of the way along.
    #[default]
    Octahedral,
    /// A thin rod from head to tail.
    Stick,
    /// A sphere at each joint, a line to the tail, the joint's axes.
    Spheres,
}

impl BoneStyle {
    /// Every style, in the order the viewer lists them.
    pub const ALL: [BoneStyle; 3] = [BoneStyle::Octahedral, BoneStyle::Stick, BoneStyle::Spheres];

    /// The style's name (as the CLI spells it).
    pub fn name(self) -> &'static str {
        match self {
            BoneStyle::Octahedral => "octahedral",
            BoneStyle::Stick => "stick",
            BoneStyle::Spheres => "spheres",
        }
    }
}

impl crate::choice::Choice for BoneStyle {
    const ALL: &'static [BoneStyle] = &BoneStyle::ALL;

    fn name(self) -> &'static str {
        BoneStyle::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            BoneStyle::Octahedral => "Blender's octahedral bones",
            BoneStyle::Stick => "A thin rod from head to tail",
            BoneStyle::Spheres => "A sphere at each joint, a line to the tail, the joint's axes",
        }
    }
}

/// Bone colours (linear RGBA) to choose from, saturated and apart from the selected orange:
/// blue (the default, apart from skin tones), magenta, green, cyan. [`bone_color`] picks the
/// one whose hue the model's materials use least; every bone is outlined in
/// near black too.
pub const BONE_COLORS: [[f32; 4]; 4] = [
    [0.12, 0.25, 0.75, 0.9],
    [0.7, 0.08, 0.55, 0.9],
    [0.1, 0.55, 0.15, 0.9],
    [0.05, 0.55, 0.65, 0.9],
];
/// The selected bone: orange, as in Blender.
pub const SELECTED_COLOR: [f32; 4] = [1.0, 0.55, 0.1, 0.95];
/// Bone edges and relationship lines: near black.
const OUTLINE_COLOR: [f32; 4] = [0.05, 0.05, 0.08, 0.9];
/// A bone shape is never wider than this share of the model's diagonal: on a model of many
/// small parts with long bones, Blender's tenth-of-the-length octahedra would reach far outside
/// the mesh.
pub const BONE_WIDTH_SHARE: f32 = 0.02;
/// Blender's octahedron: widest at this share of the length, this share of the length wide.
const OCTAHEDRON_WAIST: f32 = 0.1;
/// A stick's width, as a share of its length (and of the width cap).
const STICK_SHARE: f32 = 0.04;
/// Joint axes are this share of their bone long (at most 2.5 width caps).
const AXIS_SHARE: f32 = 0.25;
/// A leaf bone that moves no vertex is a marker this share of the model's diagonal long (and a
/// leaf that moves some is at least this long): short beside any limb, long enough to see and
/// pick at the default framing.
pub const MARKER_SHARE: f64 = 1.0 / 40.0;
/// No leaf bone, and no bone that moves no vertex, is longer than this share of the model's
/// diagonal. The inspector promises a tenth of the diagonal the viewer frames; a twelfth leaves
/// room for that framing (the clip's bounds) being smaller than the rest pose's.
pub const END_BONE_MAX_SHARE: f64 = 1.0 / 12.0;

/// Where a joint's bone ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tail {
    /// No bone (a lone joint, or a node that is no joint).
    None,
    /// At this child joint.
    Child(usize),
    /// At this point in the joint's own space.
    Local(Vec3),
}

/// Where every joint's bone ends, worked out once per scene; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct SkeletonShape {
    /// The bones' colour ([`bone_color`]).
    pub color: [f32; 4],
    tails: Vec<Tail>,
    /// Joint children that are not their parent's tail: `(parent, child)`, drawn as thin
    /// relationship lines.
    others: Vec<(usize, usize)>,
    /// Per node: some vertex has a weight on it.
    moves: Vec<bool>,
}

impl SkeletonShape {
    /// The shape of `scene`'s skeleton. `tips`: per node, where the rig says its bone ends in
    /// its own space (native rigs: `(length, 0, 0)`), or empty. Set-up time.
    pub fn new(scene: &Scene, tips: &[Option<Vec3>]) -> SkeletonShape {
        let n = scene.nodes.len();
        let is_joint = joint_flags(scene);
        let own = own_weights(scene);
        let weight = sum_subtrees(scene, own.clone());
        let mut tails = vec![Tail::None; n];
        let mut others = Vec::new();
        // Non-leaf joints: the heaviest child subtree (the first on ties).
        let mut best: Vec<Option<usize>> = vec![None; n];
        for (c, node) in scene.nodes.iter().enumerate() {
            if let Some(p) = node.parent.filter(|&p| is_joint[p] && is_joint[c]) {
                match best[p] {
                    Some(b) if weight[c] <= weight[b] => others.push((p, c)),
                    Some(b) => {
                        others.push((p, b));
                        best[p] = Some(c);
                    }
                    None => best[p] = Some(c),
                }
            }
        }
        for (t, b) in tails.iter_mut().zip(&best) {
            if let Some(c) = b {
                *t = Tail::Child(*c);
            }
        }
        // Leaves: the parent's bone carried into the leaf's own space.
        let rest = crate::skeleton::model_from_node_f64(scene, &Pose::rest(scene));
        for j in (0..n).filter(|&j| is_joint[j] && best[j].is_none()) {
            tails[j] = leaf_tail(scene, &tails, &rest, j);
        }
        // A native rig says where each bone ends (its +X by its length); a joint it added (a
        // bone link) spans to its parent's end when it sits along the parent, else as far as
        // the bone beside it at its own joint (a twist link at the elbow: the forearm's length
        // along its own +X, the axis it twists about).
        let tip = |j: usize| tips.get(j).copied().flatten();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); if tips.is_empty() { 0 } else { n }];
        for (c, node) in scene.nodes.iter().enumerate() {
            if let Some(list) = node.parent.and_then(|p| children.get_mut(p)) {
                list.push(c);
            }
        }
        for j in (0..n).filter(|&j| is_joint[j] && !tips.is_empty()) {
            if let Some(t) = tip(j) {
                // The child it pointed at keeps a relationship line.
                if let Tail::Child(c) = tails[j] {
                    others.push((j, c));
                }
                tails[j] = Tail::Local(t);
                continue;
            }
            let Some(p) = scene.nodes[j].parent else {
                continue;
            };
            let along =
                tip(p).and_then(|t| local_point(&rest[j], rest[p].transform_point3(t.as_dvec3())));
            let beside = || {
                let head = rest[j].w_axis.truncate();
                children[p]
                    .iter()
                    .filter(|&&k| k != j && rest[k].w_axis.truncate().distance(head) < 1e-9)
                    .find_map(|&k| tip(k))
            };
            if let Some(t) = along.or_else(beside) {
                tails[j] = Tail::Local(t);
            }
        }
        let moves: Vec<bool> = own.iter().map(|&w| w > 0.0).collect();
        // A native rig's own bone lengths stand as the rig says.
        if tips.is_empty() {
            let ends = EndBones {
                leaf: (0..n).map(|j| is_joint[j] && best[j].is_none()).collect(),
                moves: &moves,
                reach_m: dominated_reach_m(scene, &rest),
                diagonal_m: rest_diagonal_m(scene, &rest, &is_joint),
            };
            ends.shorten(&rest, &mut tails, &mut others);
        }
        SkeletonShape {
            color: bone_color(scene),
            tails,
            others,
            moves,
        }
    }

    /// The bones of the pose `model_from_node` into `out` (cleared): one per joint that has a
    /// tail, zero-length bones left out, and bones that move no vertex left out when
    /// `hide_unweighted`.
    pub fn bones(&self, model_from_node: &[Mat4], hide_unweighted: bool, out: &mut Vec<Bone>) {
        out.clear();
        let pos = |n: usize| model_from_node.get(n).map(|m| m.w_axis.truncate());
        for (j, tail) in self.tails.iter().enumerate() {
            let Some(head) = pos(j) else { break };
            if hide_unweighted && !self.moves_vertices(j) {
                continue;
            }
            let tail = match *tail {
                Tail::None => continue,
                Tail::Child(c) => pos(c),
                Tail::Local(v) => Some(model_from_node[j].transform_point3(v)),
            };
            if let Some(tail) = tail.filter(|t| t.distance(head) > 0.0) {
                out.push(Bone {
                    node: j,
                    head,
                    tail,
                });
            }
        }
    }

    /// True when some vertex has a weight on `node`.
    pub fn moves_vertices(&self, node: usize) -> bool {
        self.moves.get(node).copied().unwrap_or(false)
    }

    /// The relationship lines (parent head to each child joint that is not its tail) of the
    /// pose `model_from_node`; with `hide_unweighted`, none that starts or ends on a bone that
    /// moves no vertex.
    pub fn relations<'a>(
        &'a self,
        model_from_node: &'a [Mat4],
        hide_unweighted: bool,
    ) -> impl Iterator<Item = (Vec3, Vec3)> + 'a {
        let shown = move |n: usize| !hide_unweighted || self.moves_vertices(n);
        self.others.iter().filter_map(move |&(p, c)| {
            if !(shown(p) && shown(c)) {
                return None;
            }
            Some((
                model_from_node.get(p)?.w_axis.truncate(),
                model_from_node.get(c)?.w_axis.truncate(),
            ))
        })
    }
}

/// Bones over the weights and error heatmaps (blue through green and yellow to red): magenta,
/// the one hue the ramp never shows.
pub const HEATMAP_BONE_COLOR: [f32; 4] = BONE_COLORS[1];

/// Hue bins of [`bone_color`]: 30° each.
const HUE_BINS: usize = 12;
/// Texels read per texture by [`bone_color`] (evenly strided): enough for the hues in use.
const HUE_SAMPLES: usize = 4096;

/// Of [`BONE_COLORS`], the one whose hue (±45°) `scene`'s materials use least, weighting each
/// draw's saturated base colour, texture texels and vertex colours by its vertex count, so the
/// bones stand out from the model (the first on ties: blue).
pub fn bone_color(scene: &Scene) -> [f32; 4] {
    let mut used = [0.0f64; HUE_BINS];
    let mut add = |rgb: [f32; 3], weight: f64| {
        if let Some(h) = saturated_hue_bin(rgb) {
            used[h] += weight;
        }
    };
    for d in &scene.draws {
        let p = scene.primitive(d);
        let n = p.vertex_count() as f64;
        let base = [p.base_color[0], p.base_color[1], p.base_color[2]];
        let texture = p.base_color_texture.and_then(|t| scene.textures.get(t));
        if let Some(t) = texture {
            let texels = t.image.pixels.chunks_exact(4);
            let stride = (texels.len() / HUE_SAMPLES).max(1);
            let weight = n * stride as f64 / texels.len().max(1) as f64;
            for px in texels.step_by(stride) {
                let c = |i: usize| f32::from(px[i]) / 255.0 * base[i];
                add([c(0), c(1), c(2)], weight);
            }
        } else {
            add(base, n);
        }
        let colors = p.colors.iter().flatten();
        for c in colors.step_by((p.vertex_count() / HUE_SAMPLES).max(1)) {
            add([c.x * base[0], c.y * base[1], c.z * base[2]], 1.0);
        }
    }
    let cost = |c: &[f32; 4]| {
        saturated_hue_bin([c[0], c[1], c[2]]).map_or(0.0, |h| {
            (0..3)
                .map(|k| used[(h + HUE_BINS - 1 + k) % HUE_BINS])
                .sum::<f64>()
        })
    };
    BONE_COLORS
        .iter()
        .fold((f64::INFINITY, BONE_COLORS[0]), |best, c| {
            let x = cost(c);
            if x < best.0 { (x, *c) } else { best }
        })
        .1
}

/// The 30° hue bin of a colour saturated and bright enough to read as a hue (HSV saturation
/// above 0.25, value above 0.1), else None (greys, whites, blacks).
fn saturated_hue_bin([r, g, b]: [f32; 3]) -> Option<usize> {
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let chroma = max - min;
    if !(max > 0.1 && chroma > 0.25 * max) {
        return None;
    }
    let hue_sixths = if max == r {
        ((g - b) / chroma).rem_euclid(6.0)
    } else if max == g {
        (b - r) / chroma + 2.0
    } else {
        (r - g) / chroma + 4.0
    };
    Some(((hue_sixths * 2.0) as usize).min(HUE_BINS - 1))
}

/// Joints of every skin, as a per-node flag.
pub fn joint_flags(scene: &Scene) -> Vec<bool> {
    let mut is_joint = vec![false; scene.nodes.len()];
    for s in &scene.skins {
        for &j in &s.joints {
            if let Some(f) = is_joint.get_mut(j) {
                *f = true;
            }
        }
    }
    is_joint
}

/// Per node, the skinned weight of its subtree: the sum over every deformed draw's vertices of
/// the weights of the node and its descendants (what Blender's importer picks a tail by).
pub fn subtree_weights(scene: &Scene) -> Vec<f64> {
    sum_subtrees(scene, own_weights(scene))
}

/// Per node, the sum of `weight` over its subtree (`weight`: per node, its own).
fn sum_subtrees(scene: &Scene, mut weight: Vec<f64>) -> Vec<f64> {
    // Children after parents (depth-first order): one backward pass sums the subtrees.
    for c in (0..scene.nodes.len()).rev() {
        if let Some(p) = scene.nodes[c].parent.filter(|&p| p < c) {
            weight[p] += weight[c];
        }
    }
    weight
}

/// Per node, the sum of its own weights over every deformed draw's vertices.
pub fn own_weights(scene: &Scene) -> Vec<f64> {
    let mut weight = vec![0.0f64; scene.nodes.len()];
    for d in scene.deformed_draws() {
        let (Some(skin), Some(sw)) = (
            d.skin.and_then(|s| scene.skins.get(s)),
            scene.primitive(d).skin_weights.as_ref(),
        ) else {
            continue;
        };
        for (&j, &w) in sw.joints.iter().zip(&sw.weights) {
            if let Some(slot) = skin.joints.get(j as usize).and_then(|&n| weight.get_mut(n))
                && w.is_finite()
            {
                *slot += f64::from(w);
            }
        }
    }
    weight
}

/// What [`SkeletonShape::new`] shortens a glTF skeleton's end and control bones by (see the
/// module documentation). Per node: `leaf`, a joint with no joint below it (its tail borrowed
/// from its parent); `moves`, some vertex has a weight on it; `reach_m`, how far the vertices
/// it moves most reach from it (0: none). `diagonal_m`: the model's size at rest.
struct EndBones<'a> {
    leaf: Vec<bool>,
    moves: &'a [bool],
    reach_m: Vec<f64>,
    diagonal_m: f64,
}

impl EndBones<'_> {
    /// Shorten every end bone's tail in `tails` to its length (at the rest pose `rest`); a
    /// bone that pointed at a child joint and is cut short keeps a relationship line to it.
    fn shorten(&self, rest: &[DMat4], tails: &mut [Tail], others: &mut Vec<(usize, usize)>) {
        let marker = self.diagonal_m * MARKER_SHARE;
        let cap = self.diagonal_m * END_BONE_MAX_SHARE;
        // End bones: leaves, and bones that move no vertex.
        for j in (0..tails.len()).filter(|&j| self.leaf[j] || !self.moves[j]) {
            let head = rest[j].w_axis.truncate();
            let tip = match tails[j] {
                Tail::None => continue,
                Tail::Child(c) => rest[c].w_axis.truncate(),
                Tail::Local(v) => rest[j].transform_point3(v.as_dvec3()),
            };
            let len = tip.distance(head);
            let mut want = len.min(cap);
            if self.leaf[j] {
                let reach = self.reach_m.get(j).copied().unwrap_or(0.0);
                want = want.min(if reach > 0.0 {
                    reach.max(marker)
                } else {
                    marker
                });
            }
            if !(len.is_finite() && want < len) {
                continue;
            }
            let short = head + (tip - head) * (want / len);
            if let Some(t) = local_point(&rest[j], short) {
                if let Tail::Child(c) = tails[j] {
                    others.push((j, c));
                }
                tails[j] = Tail::Local(t);
            }
        }
    }
}

/// Every skinned vertex of the deformed draws at the rest pose `rest`, carried rigidly by the
/// joint its largest weight is on (`rest × joint_from_bind`): `f(node, model_point)`. Vertices
/// with no positive finite weight, or on a joint out of range, are skipped.
fn each_dominated_vertex(scene: &Scene, rest: &[DMat4], mut f: impl FnMut(usize, DVec3)) {
    // Per skin, each joint's node and model_from_bind at rest.
    let carried: Vec<Vec<Option<(usize, DMat4)>>> = scene
        .skins
        .iter()
        .map(|skin| {
            skin.joints
                .iter()
                .zip(&skin.joint_from_bind)
                .map(|(&node, m)| Some((node, *rest.get(node)? * m.as_dmat4())))
                .collect()
        })
        .collect();
    for d in scene.deformed_draws() {
        let p = scene.primitive(d);
        let (Some(carried), Some(sw)) = (d.skin.and_then(|s| carried.get(s)), &p.skin_weights)
        else {
            continue;
        };
        if sw.width == 0 {
            continue;
        }
        let rows = sw
            .joints
            .chunks_exact(sw.width)
            .zip(sw.weights.chunks_exact(sw.width));
        for ((joints, weights), v) in rows.zip(&p.positions) {
            let Some((k, _)) = weights
                .iter()
                .enumerate()
                .filter(|(_, w)| w.is_finite() && **w > 0.0)
                .max_by(|a, b| a.1.total_cmp(b.1))
            else {
                continue;
            };
            if let Some(&Some((node, m))) = carried.get(joints[k] as usize) {
                f(node, m.transform_point3(v.as_dvec3()));
            }
        }
    }
}

/// Per node, how far from the joint (at the rest pose `rest`) reach the vertices whose largest
/// weight is on it, each carried by that joint alone (0 for a node that leads no vertex).
fn dominated_reach_m(scene: &Scene, rest: &[DMat4]) -> Vec<f64> {
    let mut reach = vec![0.0f64; scene.nodes.len()];
    each_dominated_vertex(scene, rest, |node, p| {
        let r = p.distance(rest[node].w_axis.truncate());
        if r.is_finite() {
            reach[node] = reach[node].max(r);
        }
    });
    reach
}

/// The diagonal of the model at rest: the box of its joints (`is_joint`, per node) at the rest
/// pose `rest` and its skinned vertices, each carried by the joint it leans on most.
fn rest_diagonal_m(scene: &Scene, rest: &[DMat4], is_joint: &[bool]) -> f64 {
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let mut add = |p: DVec3| {
        if p.is_finite() {
            lo = lo.min(p);
            hi = hi.max(p);
        }
    };
    each_dominated_vertex(scene, rest, |_, p| add(p));
    for (m, _) in rest.iter().zip(is_joint).filter(|(_, j)| **j) {
        add(m.w_axis.truncate());
    }
    if lo.cmple(hi).all() {
        (hi - lo).length()
    } else {
        0.0
    }
}

/// A leaf joint's tail: its nearest ancestor joint's bone (direction and length at the rest
/// pose `rest`) moved to the leaf, in the leaf's own space. None for a lone joint, when every
/// ancestor bone has zero length, or when the leaf's rest matrix cannot be inverted.
fn leaf_tail(scene: &Scene, tails: &[Tail], rest: &[DMat4], leaf: usize) -> Tail {
    let pos = |n: usize| rest[n].w_axis.truncate();
    let mut up = scene.nodes[leaf].parent;
    while let Some(p) = up {
        let tail = match tails[p] {
            Tail::Child(c) => Some(pos(c)),
            Tail::Local(v) => Some(rest[p].transform_point3(v.as_dvec3())),
            Tail::None => None,
        };
        let Some(bone) = tail.map(|t| t - pos(p)) else {
            return Tail::None;
        };
        if bone.length() > 0.0 && bone.is_finite() {
            let tip: DVec3 = pos(leaf) + bone;
            return local_point(&rest[leaf], tip).map_or(Tail::None, Tail::Local);
        }
        up = scene.nodes[p].parent;
    }
    Tail::None
}

/// `model_point` in the space of a node whose model matrix is `model_from_node`; None when
/// the matrix cannot be inverted or the point is not finite (or sits on the node's origin).
fn local_point(model_from_node: &DMat4, model_point: DVec3) -> Option<Vec3> {
    let det = model_from_node.determinant();
    if !(det.is_finite() && det.abs() > 1e-300) {
        return None;
    }
    let local = model_from_node
        .inverse()
        .transform_point3(model_point)
        .as_vec3();
    (local.is_finite() && local.length() > 0.0).then_some(local)
}

/// How [`draw`] draws: the style, the colour, the selected bone, the key light, the model's
/// diagonal (which caps the shapes' width).
#[derive(Clone, Copy, Debug)]
pub struct BoneDraw {
    /// Octahedral, stick or spheres.
    pub style: BoneStyle,
    /// Linear RGBA: the shape's [`SkeletonShape::color`] over materials,
    /// [`HEATMAP_BONE_COLOR`] over a heatmap.
    pub color: [f32; 4],
    /// The selected bone's node (drawn orange).
    pub selected: Option<usize>,
    /// Unit direction towards the key light (faceted shading).
    pub light: Vec3,
    /// The model's bounding-box diagonal (metres).
    pub diagonal_m: f32,
    /// Leave out the bones that move no vertex (and their relationship lines).
    pub hide_unweighted: bool,
}

/// Add the bones (in front of the mesh), the relationship lines and the joint axes to `g`.
pub fn draw(
    shape: &SkeletonShape,
    bones: &[Bone],
    model_from_node: &[Mat4],
    how: &BoneDraw,
    g: &mut OverlayGeometry,
) {
    let cap = how.diagonal_m.max(0.0) * BONE_WIDTH_SHARE;
    for b in bones {
        let axis = b.tail - b.head;
        let len = axis.length();
        if !(len.is_finite() && len > 0.0) {
            continue;
        }
        let color = if Some(b.node) == how.selected {
            SELECTED_COLOR
        } else {
            how.color
        };
        let d = axis / len;
        let shade = |n: Vec3| {
            // Faceted shading from the key light, either side.
            let s = 0.55 + 0.45 * n.normalize_or_zero().dot(how.light).abs();
            [color[0] * s, color[1] * s, color[2] * s, color[3]]
        };
        match how.style {
            BoneStyle::Octahedral => {
                let w = (OCTAHEDRON_WAIST * len).min(cap);
                octahedron(b, d, w, OCTAHEDRON_WAIST * len, &shade, g);
            }
            BoneStyle::Stick => stick(b, d, (STICK_SHARE * len).min(cap * 0.5), &shade, g),
            BoneStyle::Spheres => {
                sphere(b.head, (OCTAHEDRON_WAIST * len).min(cap), &shade, g);
                g.line(b.head, b.tail, color, true);
            }
        }
    }
    for (a, b) in shape.relations(model_from_node, how.hide_unweighted) {
        g.line(a, b, OUTLINE_COLOR, true);
    }
    // Joint axes at every bone head.
    for b in bones {
        let len = ((b.tail - b.head).length() * AXIS_SHARE).min(cap * 2.5);
        let Some(m) = model_from_node.get(b.node) else {
            continue;
        };
        for (axis, color) in [
            (m.x_axis.truncate(), [0.95, 0.2, 0.2, 1.0]),
            (m.y_axis.truncate(), [0.2, 0.9, 0.25, 1.0]),
            (m.z_axis.truncate(), [0.25, 0.45, 1.0, 1.0]),
        ] {
            g.line(b.head, b.head + axis.normalize_or_zero() * len, color, true);
        }
    }
}

/// Blender's octahedral bone: a square waist `width` wide at `waist_m` from the head, every
/// edge outlined.
fn octahedron(
    b: &Bone,
    d: Vec3,
    width: f32,
    waist_m: f32,
    shade: &dyn Fn(Vec3) -> [f32; 4],
    g: &mut OverlayGeometry,
) {
    let u = d.any_orthonormal_vector();
    let v = d.cross(u);
    let mid = b.head + d * waist_m;
    let ring = [
        mid + u * width,
        mid + v * width,
        mid - u * width,
        mid - v * width,
    ];
    for k in 0..4 {
        let (r0, r1) = (ring[k], ring[(k + 1) % 4]);
        for apex in [b.head, b.tail] {
            g.triangle([apex, r0, r1], shade((r0 - apex).cross(r1 - apex)), true);
            g.line(apex, r0, OUTLINE_COLOR, true);
        }
        g.line(r0, r1, OUTLINE_COLOR, true);
    }
}

/// A square rod `width` wide from head to tail, its edges outlined.
fn stick(b: &Bone, d: Vec3, width: f32, shade: &dyn Fn(Vec3) -> [f32; 4], g: &mut OverlayGeometry) {
    let u = d.any_orthonormal_vector() * (width * 0.5);
    let v = d.cross(u);
    let corners = [u + v, u - v, -u - v, -u + v];
    for k in 0..4 {
        let (c0, c1) = (corners[k], corners[(k + 1) % 4]);
        let quad = [b.head + c0, b.head + c1, b.tail + c1, b.tail + c0];
        let c = shade(c0 + c1);
        g.triangle([quad[0], quad[1], quad[2]], c, true);
        g.triangle([quad[0], quad[2], quad[3]], c, true);
        g.line(quad[0], quad[3], OUTLINE_COLOR, true);
    }
}

/// Sphere rings and segments: a 40-facet ball, round enough at joint size.
const SPHERE_RINGS: usize = 4;
const SPHERE_SEGMENTS: usize = 8;

/// A faceted sphere of `radius` at `centre`.
pub(crate) fn sphere(
    centre: Vec3,
    radius: f32,
    shade: &dyn Fn(Vec3) -> [f32; 4],
    g: &mut OverlayGeometry,
) {
    let point = |ring: usize, seg: usize| {
        let theta = std::f32::consts::PI * ring as f32 / SPHERE_RINGS as f32;
        let phi = std::f32::consts::TAU * seg as f32 / SPHERE_SEGMENTS as f32;
        centre
            + Vec3::new(
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin(),
            ) * radius
    };
    for ring in 0..SPHERE_RINGS {
        for seg in 0..SPHERE_SEGMENTS {
            let (a, b) = (point(ring, seg), point(ring, seg + 1));
            let (c, d) = (point(ring + 1, seg + 1), point(ring + 1, seg));
            let normal = (a + b + c + d) * 0.25 - centre;
            if ring > 0 {
                g.triangle([a, b, c], shade(normal), true);
            }
            if ring + 1 < SPHERE_RINGS {
                g.triangle([a, c, d], shade(normal), true);
            }
        }
    }
}

/// The rest pose's ghost colour (linear RGBA): pale cyan, apart from the bones' own colours.
pub const REST_GHOST_COLOR: [f32; 4] = [0.35, 0.85, 1.0, 0.9];
/// The bind pose's ghost colour: pale violet.
pub const BIND_GHOST_COLOR: [f32; 4] = [0.8, 0.5, 1.0, 0.9];
/// A joint whose bind and rest disagree: red, as `check` reports it.
pub const BIND_REST_MARK_COLOR: [f32; 4] = [1.0, 0.15, 0.1, 1.0];
/// A mark's radius, as a share of the model's diagonal: seen at any zoom that shows the model.
const MARK_SHARE: f32 = 0.008;

/// Which ghost skeletons [`draw_ghosts`] draws.
#[derive(Clone, Copy, Debug)]
pub struct Ghosts {
    /// The rest pose.
    pub rest: bool,
    /// The bind pose.
    pub bind: bool,
    /// Leave out the bones that move no vertex.
    pub hide_unweighted: bool,
    /// The model's bounding-box diagonal (metres): the marks' size and threshold.
    pub diagonal_m: f32,
}

/// Add the rest and bind poses as ghost skeletons to `g`: each bone a line from head to tail
/// in the pose's colour, each joint's local axes (X red, Y green, Z blue), and on each joint
/// whose bind and rest disagree ([`crate::poses::ReferencePoses::differs`]) a red ball, with a
/// red line from its rest place to its bind place when both are drawn.
pub fn draw_ghosts(
    shape: &SkeletonShape,
    poses: &crate::poses::ReferencePoses,
    how: &Ghosts,
    g: &mut OverlayGeometry,
) {
    let diagonal = f64::from(how.diagonal_m);
    let mark = how.diagonal_m * MARK_SHARE;
    let mut bones = Vec::new();
    for (on, pose, color) in [
        (how.rest, &poses.rest, REST_GHOST_COLOR),
        (how.bind, &poses.bind, BIND_GHOST_COLOR),
    ] {
        if !on {
            continue;
        }
        shape.bones(pose, how.hide_unweighted, &mut bones);
        for b in &bones {
            g.line(b.head, b.tail, color, true);
            let len = ((b.tail - b.head).length() * AXIS_SHARE).min(mark * 4.0);
            if let Some(m) = pose.get(b.node) {
                for (axis, c) in [
                    (m.x_axis.truncate(), [0.95, 0.2, 0.2, 1.0]),
                    (m.y_axis.truncate(), [0.2, 0.9, 0.25, 1.0]),
                    (m.z_axis.truncate(), [0.25, 0.45, 1.0, 1.0]),
                ] {
                    g.line(b.head, b.head + axis.normalize_or_zero() * len, c, true);
                }
            }
            if poses.differs(b.node, diagonal) {
                sphere(b.head, mark, &|_| BIND_REST_MARK_COLOR, g);
            }
        }
    }
    if how.rest && how.bind {
        for node in (0..poses.rest.len()).filter(|&n| poses.differs(n, diagonal)) {
            if let (Some(r), Some(b)) = (poses.rest.get(node), poses.bind.get(node)) {
                g.line(
                    r.w_axis.truncate(),
                    b.w_axis.truncate(),
                    BIND_REST_MARK_COLOR,
                    true,
                );
            }
        }
    }
}
