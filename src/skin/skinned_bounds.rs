//! Bounds of a skinned character from its palette alone: what a crowd culls with, without
//! skinning a vertex.
//!
//! Based on: the per-bone boxes engines cull skinned meshes with (each joint's box in its own
//! space, moved by the joint every frame, as Unreal's physics-asset bounds and glTF viewers'
//! joint boxes do), made to hold every vertex: the convex-hull property of linear blend
//! skinning (Magnenat-Thalmann et al.; a blend of points with non-negative weights summing to
//! W lies in W times their convex hull), and for dual quaternion skinning a bound derived here
//! from Kavan, Collins, Žára, O'Sullivan, "Geometric Skinning with Approximate Dual
//! Quaternion Blending", ACM TOG 2008 (the blend's translation, and its coordinate invariance).
//!
//! Method, set-up: per palette entry, the box its weighted vertices fill in the joint's own
//! space (bind positions through `joint_from_bind`; a rigid draw's entry: its positions in the
//! node's space), kept as an oriented box in bind space, with per morph target the largest
//! offset of those vertices (the box grows by the current weights). For DQS, per draw and
//! pivot joint: the centre `c` and radius `ρ` of the bind positions of its vertices, the
//! joints they blend, and `κ = max over them of W / w_max` (weight sum over largest weight).
//!
//! Method, per frame (linear blend, stitching, and draws whose vertices have one joint each):
//! each entry's box moved by its palette matrix (`|P₃ H|` row sums around `P c`), grown by
//! `Σ |mₖ| rₖ |rows of P₃|`, their union scaled by the weight sums' range about the palette's
//! origin. Per frame (DQS): a vertex skins to `p' = R_b (S_b x) + t_b`; with `τᵢ = Tᵢ(c)` (the
//! rigid part of joint i applied to c), translating the blend's inputs shows
//! `p' − m = R_b (S_b x − c) + (R_b c + t_b − m)`, and since every joint's quaternion is
//! flipped into the largest weight's hemisphere, the blended real part has length ≥ w_max, so
//! `|R_b c + t_b − m| ≤ κ maxᵢ |τᵢ − m|`; `|S_b x − c| ≤ W maxᵢ (‖Aᵢ‖ ρ + ‖Sᵢ − I‖ |c|) +
//! |W − 1| |c|`, with `‖Aᵢ‖² ≤ ‖AᵢᵀAᵢ‖` and `‖Sᵢ − I‖ ≤ ‖AᵢᵀAᵢ − I‖` (mirrored joints:
//! `1 + ‖Aᵢ‖`), each symmetric norm bounded by its largest absolute row sum, and
//! `|τᵢ − Aᵢc − tᵢ| ≤ ‖Sᵢ − I‖ |c|`. The bound is the sphere about m, the centre of the `τᵢ`,
//! one per draw and pivot joint (the vertex's largest weight, whose hemisphere the blend
//! takes): `c`, `ρ`, κ and the joints over that pivot's vertices only.
//! Vertices with no weight skin to the origin, which is then included. Every bound grows by
//! [`ROUNDING_MARGIN`] of its size, for the f32 rounding of the skinning it bounds.
//!
//! Cost: set-up one pass over the vertices; per frame, per palette entry, one 3×3 product
//! (27 multiply-adds) and a point transform; DQS adds per draw and joint a `AᵀA`.
//!
//! Limits: the DQS sphere is loose (about the character's size plus κ times its spread);
//! non-finite palettes and negative weights give no bound (the caller draws the character).

use std::collections::HashMap;

use glam::{Mat3, Mat4, Vec3};

use crate::scene::{Scene, SkinWeights};
use crate::skin::{PaletteLayout, SkinMode};

/// Relative growth of every bound, for the f32 rounding of the skinning it holds (a skinned
/// position is a handful of rounded multiply-adds, each within 2⁻²⁴ of the magnitudes it
/// adds; 1e-5 is a hundred times that).
pub const ROUNDING_MARGIN: f32 = 1e-5;

/// A box `(min, max)`.
pub type Aabb = (Vec3, Vec3);

/// One palette entry's box: an oriented box in bind space.
#[derive(Clone, Debug)]
struct EntryBox {
    entry: u32,
    center_bind: Vec3,
    /// Columns: the box's half axes in bind space.
    half_axes_bind: Mat3,
    /// `morph[range]`: (node, target, largest offset length) of the vertices it moves.
    morph: std::ops::Range<usize>,
}

/// The DQS sphere data of one draw's vertices that share a pivot joint.
#[derive(Clone, Debug)]
struct DrawSphere {
    center_bind: Vec3,
    radius_bind: f32,
    /// max over vertices of (weight sum / largest weight).
    kappa: f32,
    /// Palette entries the draw's vertices use (absolute indices).
    entries: Vec<u32>,
    morph: std::ops::Range<usize>,
}

/// Morph growth: the weight of `target` on `node` times `length`.
#[derive(Clone, Copy, Debug)]
struct MorphGrowth {
    node: usize,
    target: usize,
    length: f32,
}

/// The set-up of [`SkinnedBounds::bound`] for one scene and its draws' skinning modes.
#[derive(Clone, Debug)]
pub struct SkinnedBounds {
    entries_total: usize,
    boxes: Vec<EntryBox>,
    /// DQS: the draws bounded by spheres (the others' entries are in `boxes`).
    spheres: Vec<DrawSphere>,
    morph: Vec<MorphGrowth>,
    /// Range of per-vertex weight sums, 1 included (influence reduction renormalises).
    weight_sum: (f32, f32),
    /// Some vertex has no non-zero weight (it skins to the origin).
    weightless: bool,
    /// Some weight is negative or not finite: no bound.
    unbounded: bool,
}

/// Per palette entry, what set-up gathers from the vertices it moves.
#[derive(Clone, Default)]
struct Gather {
    joint_box: Option<Aabb>,
    bind_box: Option<Aabb>,
    /// Per (node, target): largest offset length.
    morph: Vec<MorphGrowth>,
}

impl Gather {
    fn add(&mut self, joint_point: Vec3, bind_point: Vec3) {
        if joint_point.is_finite() {
            self.joint_box = Some(grow(self.joint_box, joint_point));
        }
        if bind_point.is_finite() {
            self.bind_box = Some(grow(self.bind_box, bind_point));
        }
    }
}

fn grow(b: Option<Aabb>, p: Vec3) -> Aabb {
    union(b, (p, p))
}

/// The box around `b` (when there is one) and `x`.
fn union(b: Option<Aabb>, x: Aabb) -> Aabb {
    b.map_or(x, |(lo, hi)| (lo.min(x.0), hi.max(x.1)))
}

/// Add a growth that moves anything (a zero or non-finite length adds nothing: a
/// non-finite offset is skipped by the skinning's bounds too).
fn add_morph(list: &mut Vec<MorphGrowth>, node: usize, target: usize, length: f32) {
    if length > 0.0 && length.is_finite() {
        list.push(MorphGrowth {
            node,
            target,
            length,
        });
    }
}

/// Per skin, per joint: the box the joint's weighted vertices fill in its own space (bind
/// positions through the inverse bind matrix; morph offsets not included; non-finite points
/// left out), `None` for a joint that moves no vertex. `check` reports these.
pub fn joint_space_boxes(scene: &Scene) -> Vec<Vec<Option<Aabb>>> {
    let layout = PaletteLayout::new(scene);
    let gathered = gather(scene, &layout);
    scene
        .skins
        .iter()
        .enumerate()
        .map(|(s, skin)| {
            let base = layout.skin_base[s] as usize;
            (0..skin.joints.len())
                .map(|j| gathered.get(base + j).and_then(|g| g.joint_box))
                .collect()
        })
        .collect()
}

/// Each draw's joints and weights with the palette entry each slot reads and the matrix that
/// takes a bind position into that entry's own space.
fn slots<'a>(
    scene: &'a Scene,
    layout: &'a PaletteLayout,
    draw: usize,
) -> (Option<&'a SkinWeights>, u32, Option<&'a [Mat4]>) {
    let d = &scene.draws[draw];
    let base = layout.draw_base[draw];
    let inverse = d
        .skin
        .and_then(|s| scene.skins.get(s))
        .map(|s| s.joint_from_bind.as_slice());
    let weights = d.skin.and(scene.primitive(d).skin_weights.as_ref());
    (weights, base, inverse)
}

/// Per palette entry: its joint-space and bind-space boxes and morph growth.
fn gather(scene: &Scene, layout: &PaletteLayout) -> Vec<Gather> {
    let mut out = vec![Gather::default(); layout.len];
    // (entry, node, target) → the longest offset of the entry's vertices.
    let mut morph: HashMap<(usize, usize, usize), f32> = HashMap::new();
    for (i, d) in scene.draws.iter().enumerate() {
        let prim = scene.primitive(d);
        let (weights, base, inverse) = slots(scene, layout, i);
        for (v, &p) in prim.positions.iter().enumerate() {
            let mut each = |entry: usize, joint_from_bind: Mat4| {
                let Some(g) = out.get_mut(entry) else { return };
                g.add(joint_from_bind.transform_point3(p), p);
                for (k, t) in prim.morph_targets.iter().enumerate() {
                    if let Some(o) = t.positions.as_ref().and_then(|o| o.get(v)) {
                        let longest = morph.entry((entry, d.node, k)).or_insert(0.0);
                        *longest = longest.max(o.length());
                    }
                }
            };
            match (weights, inverse) {
                (Some(w), Some(inv)) => {
                    let slots = v * w.width..(v + 1) * w.width;
                    for (&j, &x) in w.joints[slots.clone()].iter().zip(&w.weights[slots]) {
                        if x == 0.0 {
                            continue;
                        }
                        if let Some(m) = inv.get(j as usize) {
                            each(base as usize + j as usize, *m);
                        }
                    }
                }
                _ => each(base as usize, Mat4::IDENTITY),
            }
        }
    }
    let mut morph: Vec<_> = morph.into_iter().collect();
    morph.sort_by_key(|(k, _)| *k);
    for ((entry, node, target), length) in morph {
        if let Some(g) = out.get_mut(entry) {
            add_morph(&mut g.morph, node, target, length);
        }
    }
    out
}

impl SkinnedBounds {
    /// Set up the bounds of `scene`'s draws, draw `i` skinned in `mode(i)`, with palettes
    /// laid out as `layout` says.
    pub fn new(
        scene: &Scene,
        layout: &PaletteLayout,
        mode: impl Fn(usize) -> SkinMode,
    ) -> SkinnedBounds {
        let mut out = SkinnedBounds {
            entries_total: layout.len,
            boxes: Vec::new(),
            spheres: Vec::new(),
            morph: Vec::new(),
            weight_sum: (1.0, 1.0),
            weightless: false,
            unbounded: false,
        };
        out.weigh(scene, &mode);
        let mut boxed = vec![false; layout.len];
        for i in 0..scene.draws.len() {
            let spheres = match mode(i) {
                SkinMode::Dqs => out.spheres(scene, layout, i),
                SkinMode::Lbs | SkinMode::Stitch => None,
            };
            match spheres {
                Some(s) => out.spheres.extend(s),
                None => {
                    let (weights, base, _) = slots(scene, layout, i);
                    mark_used(weights, base, &mut boxed);
                }
            }
        }
        for (entry, g) in gather(scene, layout).into_iter().enumerate() {
            if !boxed[entry] {
                continue;
            }
            let start = out.morph.len();
            out.morph.extend(g.morph.iter().copied());
            let morph = start..out.morph.len();
            if let Some(b) = oriented(&g, scene, layout, entry) {
                out.boxes.push(EntryBox {
                    entry: entry as u32,
                    center_bind: b.0,
                    half_axes_bind: b.1,
                    morph,
                });
            }
        }
        out
    }

    /// The range of weight sums (stitched draws weigh 1), whether a vertex has no weight,
    /// and whether any weight is negative or not finite.
    fn weigh(&mut self, scene: &Scene, mode: &impl Fn(usize) -> SkinMode) {
        for (i, d) in scene.draws.iter().enumerate() {
            let Some(w) = d.skin.and(scene.primitive(d).skin_weights.as_ref()) else {
                continue;
            };
            let stitched = mode(i) == SkinMode::Stitch;
            for v in w.weights.chunks_exact(w.width.max(1)) {
                if v.iter().any(|x| !x.is_finite() || *x < 0.0) {
                    self.unbounded = true;
                }
                let sum: f32 = v.iter().sum();
                if sum == 0.0 {
                    self.weightless = true;
                } else if !stitched {
                    self.weight_sum = (self.weight_sum.0.min(sum), self.weight_sum.1.max(sum));
                }
            }
        }
    }

    /// Draw `i`'s DQS spheres, one per pivot (the palette entry of a vertex's largest
    /// weight, the first on ties, as the blend picks its hemisphere): the vertices that share
    /// a pivot lie near it and blend joints near it, so each sphere is about their size. None
    /// when every vertex follows one joint with weight 1 (then DQS is the joint's matrix and
    /// its entry's box bounds it).
    fn spheres(
        &mut self,
        scene: &Scene,
        layout: &PaletteLayout,
        i: usize,
    ) -> Option<Vec<DrawSphere>> {
        let d = &scene.draws[i];
        let (Some(w), base, _) = slots(scene, layout, i) else {
            return None;
        };
        let prim = scene.primitive(d);
        let width = w.width.max(1);
        let single = w.weights.chunks_exact(width).all(|v| {
            let nonzero: Vec<&f32> = v.iter().filter(|x| **x != 0.0).collect();
            nonzero.is_empty() || nonzero == [&1.0]
        });
        if single {
            return None;
        }
        let mut groups: HashMap<u32, Vec<usize>> = HashMap::new();
        for (v, slots) in w.weights.chunks_exact(width).enumerate() {
            let pivot =
                slots
                    .iter()
                    .enumerate()
                    .fold((0, f32::NEG_INFINITY), |(k, bw), (s, &x)| {
                        if x > bw { (s, x) } else { (k, bw) }
                    });
            if pivot.1 > 0.0 && prim.positions.get(v).is_some_and(|p| p.is_finite()) {
                let joint = w.joints.get(v * width + pivot.0).copied().unwrap_or(0);
                groups.entry(base + joint).or_default().push(v);
            }
        }
        let mut keys: Vec<u32> = groups.keys().copied().collect();
        keys.sort_unstable();
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(vertices) = groups.get(&key) else {
                continue;
            };
            out.push(self.pivot_sphere(d.node, prim, w, base, vertices));
        }
        Some(out)
    }

    /// The sphere of one pivot's `vertices` (module documentation).
    fn pivot_sphere(
        &mut self,
        node: usize,
        prim: &crate::scene::Primitive,
        w: &SkinWeights,
        base: u32,
        vertices: &[usize],
    ) -> DrawSphere {
        let width = w.width.max(1);
        let points = || {
            vertices
                .iter()
                .filter_map(|&v| prim.positions.get(v).copied())
        };
        let (lo, hi) = crate::math::finite_bounds(points()).unwrap_or((Vec3::ZERO, Vec3::ZERO));
        let center = (lo + hi) * 0.5;
        let radius = points().map(|p| p.distance(center)).fold(0.0f32, f32::max);
        let mut kappa = 1.0f32;
        let mut entries = Vec::new();
        for &v in vertices {
            let slots = v * width..(v + 1) * width;
            let (sum, max) = w.weights[slots.clone()]
                .iter()
                .fold((0.0f32, 0.0f32), |(s, m), &x| (s + x, m.max(x)));
            kappa = kappa.max(sum / max);
            for (&j, &x) in w.joints[slots.clone()].iter().zip(&w.weights[slots]) {
                if x != 0.0 {
                    entries.push(base + j);
                }
            }
        }
        entries.sort_unstable();
        entries.dedup();
        let start = self.morph.len();
        for (k, t) in prim.morph_targets.iter().enumerate() {
            let Some(offsets) = &t.positions else {
                continue;
            };
            let longest = vertices
                .iter()
                .filter_map(|&v| offsets.get(v))
                .map(|o| o.length())
                .fold(0.0f32, f32::max);
            add_morph(&mut self.morph, node, k, longest);
        }
        DrawSphere {
            center_bind: center,
            radius_bind: radius,
            kappa,
            entries,
            morph: start..self.morph.len(),
        }
    }

    /// The palette entries this set-up expects.
    pub fn entries(&self) -> usize {
        self.entries_total
    }

    /// The box that holds every skinned vertex of a character whose frame palette is
    /// `palette` (the layout given at set-up) and whose morph weights are
    /// `morph_weights[node]` (a missing weight counts as 0, as the GPU reads it), in the
    /// palette's space. None when the palette is the wrong length or not finite, or a weight
    /// is negative: the character cannot be bounded and must be drawn.
    pub fn bound(&self, palette: &[Mat4], morph_weights: &[Vec<f32>]) -> Option<Aabb> {
        if self.unbounded
            || palette.len() != self.entries_total
            || !palette.iter().all(|m| m.is_finite())
        {
            return None;
        }
        let mut b: Option<Aabb> = None;
        let mut add = |x: Aabb| b = Some(union(b, x));
        if let Some(boxes) = self.moved_boxes(palette, morph_weights) {
            let (w0, w1) = self.weight_sum;
            let (lo, hi) = boxes;
            add(((lo * w0).min(lo * w1), (hi * w0).max(hi * w1)));
        }
        for s in &self.spheres {
            add(self.dqs_sphere(s, palette, morph_weights)?);
        }
        if self.weightless {
            add((Vec3::ZERO, Vec3::ZERO));
        }
        let (lo, hi) = b?;
        if !(lo.is_finite() && hi.is_finite()) {
            return None;
        }
        let size = (hi - lo).max_element() + lo.abs().max(hi.abs()).max_element();
        let margin = Vec3::splat(size * ROUNDING_MARGIN + f32::MIN_POSITIVE);
        Some((lo - margin, hi + margin))
    }

    /// The union of every boxed entry's moved box.
    fn moved_boxes(&self, palette: &[Mat4], morph_weights: &[Vec<f32>]) -> Option<Aabb> {
        let mut b: Option<Aabb> = None;
        for e in &self.boxes {
            let p = palette[e.entry as usize];
            let linear = Mat3::from_mat4(p);
            let center = p.transform_point3(e.center_bind);
            let axes = linear * e.half_axes_bind;
            let mut extent = row_abs_sums(axes);
            let g = self.growth(e.morph.clone(), morph_weights);
            if g > 0.0 {
                extent += row_lengths(linear) * g;
            }
            let x = (center - extent, center + extent);
            b = Some(union(b, x));
        }
        b
    }

    /// `Σ |weight| × length` over a morph growth range.
    fn growth(&self, range: std::ops::Range<usize>, morph_weights: &[Vec<f32>]) -> f32 {
        self.morph[range]
            .iter()
            .map(|m| {
                let w = morph_weights
                    .get(m.node)
                    .and_then(|w| w.get(m.target))
                    .copied()
                    .unwrap_or(0.0);
                w.abs() * m.length
            })
            .sum()
    }

    /// The DQS sphere's box (module documentation), None when not finite.
    fn dqs_sphere(
        &self,
        s: &DrawSphere,
        palette: &[Mat4],
        morph_weights: &[Vec<f32>],
    ) -> Option<Aabb> {
        let c = s.center_bind;
        let c_len = c.length();
        let rho = s.radius_bind + self.growth(s.morph.clone(), morph_weights);
        let mut centers: Option<Aabb> = None;
        let mut stretch = 0.0f32;
        let mut unrigid = 0.0f32;
        for &e in &s.entries {
            let p = palette[e as usize];
            let a = Mat3::from_mat4(p);
            let gram = a.transpose() * a;
            let norm = gershgorin(gram).sqrt();
            // Below this determinant the polar decomposition keeps S = A (see
            // `dqs::polar_decompose`, 1e-30 in f64); 1e-25 leaves room for f32 rounding.
            let s_minus_i = if a.determinant() > 1e-25 {
                gershgorin(gram - Mat3::IDENTITY)
            } else {
                1.0 + norm
            };
            stretch = stretch.max(norm * rho + s_minus_i * c_len);
            unrigid = unrigid.max(s_minus_i * c_len);
            let q = p.transform_point3(c);
            centers = Some(grow(centers, q));
        }
        let (lo, hi) = centers?;
        let m = (lo + hi) * 0.5;
        let spread = s
            .entries
            .iter()
            .map(|&e| palette[e as usize].transform_point3(c).distance(m))
            .fold(0.0f32, f32::max)
            + unrigid;
        let (w0, w1) = self.weight_sum;
        let own = w1 * stretch + (w0 - 1.0).abs().max((w1 - 1.0).abs()) * c_len;
        let r = own + s.kappa * spread;
        r.is_finite()
            .then_some((m - Vec3::splat(r), m + Vec3::splat(r)))
    }
}

/// Mark the palette entries a draw's non-zero weights use (a rigid draw: its one entry).
fn mark_used(weights: Option<&SkinWeights>, base: u32, used: &mut [bool]) {
    let Some(w) = weights else {
        if let Some(u) = used.get_mut(base as usize) {
            *u = true;
        }
        return;
    };
    for (&j, &x) in w.joints.iter().zip(&w.weights) {
        if x != 0.0
            && let Some(u) = used.get_mut(base as usize + j as usize)
        {
            *u = true;
        }
    }
}

/// The entry's box as (centre, half axes) in bind space: its joint-space box taken back to
/// bind space, or its bind-space box where the inverse bind matrix cannot be inverted.
fn oriented(
    g: &Gather,
    scene: &Scene,
    layout: &PaletteLayout,
    entry: usize,
) -> Option<(Vec3, Mat3)> {
    let joint_from_bind = joint_from_bind_of(scene, layout, entry);
    if let (Some((lo, hi)), Some(m)) = (g.joint_box, joint_from_bind) {
        let bind_from_joint = m.inverse();
        if m.determinant().abs() > 1e-12 && bind_from_joint.is_finite() {
            let center = bind_from_joint.transform_point3((lo + hi) * 0.5);
            let axes = Mat3::from_mat4(bind_from_joint) * Mat3::from_diagonal((hi - lo) * 0.5);
            return Some((center, axes));
        }
    }
    let (lo, hi) = g.bind_box?;
    Some(((lo + hi) * 0.5, Mat3::from_diagonal((hi - lo) * 0.5)))
}

/// The inverse bind matrix of a skin's palette entry (the identity for a rigid draw's).
fn joint_from_bind_of(scene: &Scene, layout: &PaletteLayout, entry: usize) -> Option<Mat4> {
    for (s, skin) in scene.skins.iter().enumerate() {
        let base = layout.skin_base[s] as usize;
        if (base..base + skin.joints.len()).contains(&entry) {
            return skin.joint_from_bind.get(entry - base).copied();
        }
    }
    Some(Mat4::IDENTITY)
}

/// Per row of `m`, the sum of its entries' magnitudes: the half extents of the box with half
/// axes `m`'s columns.
fn row_abs_sums(m: Mat3) -> Vec3 {
    m.x_axis.abs() + m.y_axis.abs() + m.z_axis.abs()
}

/// Per row of `m`, its length: how far an offset of length 1 moves along each axis.
fn row_lengths(m: Mat3) -> Vec3 {
    let t = m.transpose();
    Vec3::new(t.x_axis.length(), t.y_axis.length(), t.z_axis.length())
}

/// A bound on the spectral norm of a symmetric matrix: its largest absolute row sum (every
/// eigenvalue lies in a Gershgorin disc). Exact for a diagonal matrix, 1 for `RᵀR`.
fn gershgorin(m: Mat3) -> f32 {
    row_abs_sums(m).max_element()
}
