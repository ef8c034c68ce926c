//! What a weight tool did to each bone: how far its weights moved from the input's (largest
//! and mean change), and the two signs that the new weights are worse than the input's — a
//! bone gaining weight far outside where it had any (a thigh taking the other leg), or losing
//! most of the vertices it led (two legs fused into one) — so `weights` warns instead of
//! handing over a worse rig unawares.
//!
//! Based on: the project's own measure; the failures are those automatic weighting shows
//! (Baran and Popović, "Automatic Rigging and Animation of 3D Characters", 2007, on distance
//! weights bleeding across parts; Weber, "Run-Time Skin Deformation", on regenerated
//! weights).
//!
//! Method: one pass over the vertices. A bone's input *region* is the vertices it weighs at
//! all; it *leads* the vertices where its input weight is the largest. It gains weight *far*
//! on a vertex where it had none and now has at least [`FAR_GAIN_WEIGHT`], more than its
//! bone's length (or, for a zero-length bone, a tenth of the mesh's diagonal) outside the box
//! around its input region. It *keeps* a led vertex while it still weighs it at all.
//!
//! Cost: O(V · influences + B), memory O(B). Limits: the box is a coarse stand-in for the
//! region (an L-shaped region's box covers its inside corner), so far gains are undercounted,
//! never invented; bones with no input region are not judged.

use glam::Vec3;

use super::{BoneAxis, Influences, WeightMesh, Work, weight_of};

/// A new weight at least this large counts as a gain (smaller ones are blending noise).
pub const FAR_GAIN_WEIGHT: f32 = 0.1;
/// A bone that led fewer vertices is not warned about losing them (a few vertices changing
/// hands is a regeneration's ordinary work).
pub const MIN_LED_VERTICES: usize = 10;

/// What happened to one bone's weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneChange {
    /// Index in the skin's joint list.
    pub bone: usize,
    /// Its name (or label).
    pub name: String,
    /// Largest |new − input| weight on any vertex.
    pub largest: f32,
    /// Mean |new − input| over the vertices either weighs.
    pub mean: f32,
    /// Vertices where it gained at least [`FAR_GAIN_WEIGHT`] more than a bone length outside
    /// its input region.
    pub gained_far: usize,
    /// Vertices it led in the input.
    pub led: usize,
    /// Of those, the ones it still weighs.
    pub kept: usize,
}

impl BoneChange {
    /// The warnings this change deserves, in words (empty when none).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.gained_far > 0 {
            w.push(format!(
                "bone {} gains weight on {} vertices more than a bone length from where it had \
                 any in the input",
                self.name, self.gained_far
            ));
        }
        if self.led >= MIN_LED_VERTICES && self.kept * 2 < self.led {
            w.push(format!(
                "bone {} keeps {} of the {} vertices it led in the input (less than half: a \
                 part taken by another bone?)",
                self.name, self.kept, self.led
            ));
        }
        w
    }
}

/// Per bone, what changed from `input` to `output` (see the module documentation).
pub fn bone_changes(
    mesh: &WeightMesh,
    bones: &[BoneAxis],
    (input, output): (&Influences, &Influences),
    work: &mut Work,
) -> Vec<BoneChange> {
    let n = bones.len();
    // The records and means (bones); two passes over the vertices, each over both lists of
    // influences (merged, each joint looked up in both).
    let lists = super::list_comparison_steps(input, output);
    *work += Work::steps(2 * n + 2 * mesh.positions.len() + 2 * lists);
    let mut c: Vec<BoneChange> = bones
        .iter()
        .enumerate()
        .map(|(bone, b)| BoneChange {
            bone,
            name: b.name.clone(),
            ..Default::default()
        })
        .collect();
    let (mut sum, mut count) = (vec![0.0f64; n], vec![0usize; n]);
    let mut lo = vec![Vec3::splat(f32::INFINITY); n];
    let mut hi = vec![Vec3::splat(f32::NEG_INFINITY); n];
    let empty = Vec::new();
    // Pass 1: changes, input regions (their boxes) and leads.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (v, p) in mesh.positions.iter().enumerate() {
        // A joint listed twice on a vertex (glTF allows it) counts once, its weights summed.
        merged(input.get(v).unwrap_or(&empty), &mut a);
        merged(output.get(v).unwrap_or(&empty), &mut b);
        let (a, b) = (&a, &b);
        let lead = a.iter().max_by(|x, y| x.1.total_cmp(&y.1)).map(|x| x.0);
        // Every joint of either list, once.
        let fresh = b
            .iter()
            .map(|x| x.0)
            .filter(|j| a.iter().all(|x| x.0 != *j));
        for j in a.iter().map(|x| x.0).chain(fresh) {
            let (old, new) = (weight_of(a, j), weight_of(b, j));
            let j = j as usize;
            let Some(ch) = c.get_mut(j) else { continue };
            let d = (new - old).abs();
            ch.largest = ch.largest.max(d);
            sum[j] += f64::from(d);
            count[j] += 1;
            if old > 0.0 {
                lo[j] = lo[j].min(*p);
                hi[j] = hi[j].max(*p);
            }
        }
        if let Some(j) = lead.map(|j| j as usize).filter(|&j| j < n) {
            c[j].led += 1;
            if weight_of(b, j as u32) > 0.0 {
                c[j].kept += 1;
            }
        }
    }
    // Pass 2: gains far from the input region.
    let diagonal = mesh.diagonal();
    for (v, p) in mesh.positions.iter().enumerate() {
        merged(input.get(v).unwrap_or(&empty), &mut a);
        merged(output.get(v).unwrap_or(&empty), &mut b);
        let a = &a;
        for &(j, w) in &b {
            let j = j as usize;
            if j >= n || w < FAR_GAIN_WEIGHT || weight_of(a, j as u32) > 0.0 || lo[j].x > hi[j].x {
                continue;
            }
            let outside = (lo[j] - *p).max(*p - hi[j]).max(Vec3::ZERO).length();
            let length = bones[j].length();
            let reach = if length > 0.0 { length } else { 0.1 * diagonal };
            if outside > reach {
                c[j].gained_far += 1;
            }
        }
    }
    for (ch, (s, k)) in c.iter_mut().zip(sum.iter().zip(&count)) {
        ch.mean = if *k > 0 { (*s / *k as f64) as f32 } else { 0.0 };
    }
    c
}

/// `list` with each joint once (weights of repeats summed), into `out`.
fn merged(list: &[(u32, f32)], out: &mut Vec<(u32, f32)>) {
    out.clear();
    for &(j, w) in list {
        match out.iter_mut().find(|x| x.0 == j) {
            Some(x) => x.1 += w,
            None => out.push((j, w)),
        }
    }
}
