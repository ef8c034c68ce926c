//! Set-up, weights: the joint's weights reassigned over `[parent, link1..linkN, child]` by
//! position along the child's axis, with fork pseudo-weights and the normal-derived fade.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Bone Links (weights by relative X position,
//! the fade); the fork pseudo-weights are the project's own. Method: the stations, amounts and
//! fade of [`crate::links`], per vertex in f64, each vertex's total kept. Cost: one pass over
//! the vertices of each affected primitive, `O(specs per parent)` a vertex. Limits: only the
//! child's direct parent is considered at a fork (the others are in [`crate::links`]).

use glam::{DVec3, Vec3};

use super::LinkStats;
use crate::scene::SkinWeights;

/// Geometry of one spec within one skin.
pub(super) struct SpecGeom {
    pub(super) child_joint: u32,
    /// Skin joint indices of the links, in order.
    pub(super) link_joints: Vec<u32>,
    pub(super) joint: DVec3,
    pub(super) axis: DVec3,
    pub(super) length: f64,
    pub(super) fade: f64,
    /// Distance from the child's axis at which a vertex stops belonging to this zone (forks
    /// only; full membership within half of it): twice the child's joint radius, or the zone
    /// length when the joint radius is unknown.
    pub(super) radial_limit: f64,
}

/// All specs of one parent within one skin.
pub(super) struct Group {
    pub(super) parent_joint: u32,
    /// Every child of the parent (old hierarchy) that is in the skin.
    pub(super) children: Vec<u32>,
    pub(super) specs: Vec<SpecGeom>,
}

/// How much a vertex `r` from a fork child's axis belongs to the child's radial zone: 1 within
/// half the radial limit (the joint radius, when known), falling linearly to 0 at the limit, so
/// that weights change continuously across the zone's edge.
fn radial_membership(r: f64, radial_limit: f64) -> f64 {
    let inner = 0.5 * radial_limit;
    ((radial_limit - r) / (radial_limit - inner)).clamp(0.0, 1.0)
}

/// Largest `|Σw − 1|` over the vertices of `w`.
pub(super) fn max_sum_deviation(w: &SkinWeights) -> f32 {
    if w.width == 0 {
        return 0.0;
    }
    w.weights
        .chunks_exact(w.width)
        .map(|ws| (ws.iter().map(|&x| x as f64).sum::<f64>() - 1.0).abs())
        .fold(0.0f64, f64::max) as f32
}

/// The weight of joint `j` in `entries` (0 when absent).
fn get(entries: &[(u32, f64)], j: u32) -> f64 {
    entries.iter().find(|e| e.0 == j).map_or(0.0, |e| e.1)
}

/// Add `dw` to joint `j`'s weight in `entries` (a new entry when absent).
fn add(entries: &mut Vec<(u32, f64)>, j: u32, dw: f64) {
    match entries.iter_mut().find(|e| e.0 == j) {
        Some(e) => e.1 += dw,
        None => entries.push((j, dw)),
    }
}

/// Buffers of [`reassign`], reused from vertex to vertex.
#[derive(Default)]
struct Scratch {
    /// The vertex's (joint, weight) entries.
    entries: Vec<(u32, f64)>,
    /// The weight changes of the current group.
    deltas: Vec<(u32, f64)>,
    /// Per station `[P, link1..linkN, C]` of the current spec: its part of the amount.
    dist: Vec<f64>,
    /// Per spec of the current group: `s` before clamping and the radial-zone membership.
    zone_s: Vec<(f64, f64)>,
}

/// What happened at one vertex (counted in [`LinkStats`]).
#[derive(Default)]
struct VertexFlags {
    /// Some weight changed.
    changed: bool,
    /// `P`'s weight was split between two or more children.
    fork: bool,
    /// The normal-derived fade returned weight to the parent.
    faded: bool,
    /// A parent-only vertex inside a zone was reassigned.
    parent_only_in_zone: bool,
    /// A parent-only vertex in a fork child's slab but beyond its radial limit.
    parent_only_skipped: bool,
}

/// The vertex's weights at one parent, shared by the parent's specs.
struct ParentWeights {
    /// `w_P`.
    wp: f64,
    /// Sum of the children's (non-negative) weights.
    denom: f64,
    /// `w_P` plus the sum of the children's pseudo-weights (forks), at least `denom`.
    pseudo_sum: f64,
    /// Weighted to `P` and to none of `P`'s children.
    parent_only: bool,
    /// `P` has more than one child in the skin.
    fork_parent: bool,
}

/// One spec's part at one vertex: what moves onto its stations.
#[derive(Clone, Copy)]
struct SpecPart {
    /// The part of `P`'s weight attributable to this side of the joint.
    share: f64,
    /// The child's own weight.
    wc: f64,
    /// Position along the child's axis in zone lengths, 0 at the parent end (unclamped).
    s_raw: f64,
}

/// Reassign one primitive's weights; returns the new weights and the changed vertex count.
pub(super) fn reassign(
    w: &SkinWeights,
    positions: &[Vec3],
    normals: Option<&[Vec3]>,
    groups: &[Group],
    stats: &mut LinkStats,
) -> (SkinWeights, usize) {
    let n = w.vertex_count();
    let mut rows: Vec<Option<Vec<(u32, f32)>>> = vec![None; n];
    let mut scratch = Scratch::default();
    let mut changed = 0;
    for v in 0..n {
        let js = &w.joints[v * w.width..(v + 1) * w.width];
        let ws = &w.weights[v * w.width..(v + 1) * w.width];
        scratch.entries.clear();
        for (&j, &x) in js.iter().zip(ws) {
            if x != 0.0 {
                add(&mut scratch.entries, j, x as f64);
            }
        }
        let p = positions[v].as_dvec3();
        let normal = normals.map_or(DVec3::ZERO, |ns| ns[v].as_dvec3().normalize_or_zero());
        let mut flags = VertexFlags::default();
        for g in groups {
            reassign_group(&mut scratch, g, p, normal, &mut flags);
        }
        stats.fork_vertices += flags.fork as usize;
        stats.faded_vertices += flags.faded as usize;
        stats.parent_only_in_zone += flags.parent_only_in_zone as usize;
        stats.parent_only_skipped +=
            (flags.parent_only_skipped && !flags.parent_only_in_zone) as usize;
        if flags.changed {
            changed += 1;
            let mut row: Vec<(u32, f32)> = scratch
                .entries
                .iter()
                .filter(|e| e.1.abs() > 1e-9)
                .map(|e| (e.0, e.1 as f32))
                .collect();
            row.sort_by(|a, b| b.1.total_cmp(&a.1));
            rows[v] = Some(row);
        }
    }
    (pack_rows(w, &rows), changed)
}

/// Move the vertex's weight at the parent of group `g` (position `p`, unit normal or zero)
/// onto the group's link stations, in `s.entries`.
fn reassign_group(s: &mut Scratch, g: &Group, p: DVec3, normal: DVec3, flags: &mut VertexFlags) {
    let wp = get(&s.entries, g.parent_joint);
    let weighted_children = g
        .children
        .iter()
        .filter(|&&c| get(&s.entries, c) > 0.0)
        .count();
    let denom: f64 = g
        .children
        .iter()
        .map(|&c| get(&s.entries, c).max(0.0))
        .sum();
    let fork_parent = g.children.len() > 1;
    let pw = ParentWeights {
        wp,
        denom,
        pseudo_sum: zone_memberships(&mut s.zone_s, g, p, wp, denom, fork_parent),
        // Weighted to P and to none of P's children: P's weight belongs to the side(s) whose
        // zone holds the vertex. A parent with a single child (in the skin) has one side, its
        // zone is the slab. At a fork each linked child has a radial zone round its axis (full
        // membership within half `radial_limit`, none beyond it).
        parent_only: wp > 0.0 && denom <= 0.0,
        fork_parent,
    };
    let mut moved_parent_only = false;
    let mut pseudo_children = 0usize;
    s.deltas.clear();
    let mut any_spec = false;
    for (sg, &(s_raw, membership)) in g.specs.iter().zip(s.zone_s.iter()) {
        let wc = get(&s.entries, sg.child_joint);
        let Some(share) = parent_share(&pw, wc, s_raw, membership, &mut pseudo_children, flags)
        else {
            continue;
        };
        if wc <= 0.0 && share <= 0.0 {
            continue;
        }
        any_spec = true;
        if pw.parent_only && share > 0.0 && s_raw > 0.0 {
            moved_parent_only = true;
        }
        if share > 0.0 && (weighted_children > 1 || pseudo_children > 1) {
            flags.fork = true;
        }
        let part = SpecPart { share, wc, s_raw };
        if spec_deltas(&mut s.deltas, &mut s.dist, g.parent_joint, sg, part, normal) {
            flags.faded = true;
        }
    }
    if moved_parent_only {
        flags.parent_only_in_zone = true;
    }
    if !any_spec {
        return;
    }
    for &(j, dw) in &s.deltas {
        if dw != 0.0 {
            add(&mut s.entries, j, dw);
            flags.changed = true;
        }
    }
}

/// Per spec of `g`, into `zone_s`: `s` along the child's axis (unclamped) and, at a fork, the
/// vertex's radial-zone membership. Returns `max(denom, 0)` plus `P`'s weight times the
/// memberships: the sum the pseudo-weights split `P`'s weight by.
fn zone_memberships(
    zone_s: &mut Vec<(f64, f64)>,
    g: &Group,
    p: DVec3,
    wp: f64,
    denom: f64,
    fork_parent: bool,
) -> f64 {
    zone_s.clear();
    let mut pseudo_sum = denom.max(0.0);
    for sg in &g.specs {
        let d = p - sg.joint;
        let along = d.dot(sg.axis);
        let s_raw = along / sg.length + 0.5;
        let membership = if fork_parent {
            // Full from the zone's parent end on, fading to none one zone length
            // further back into the parent.
            radial_membership((d - sg.axis * along).length(), sg.radial_limit)
                * (1.0 + s_raw).clamp(0.0, 1.0)
        } else {
            0.0
        };
        pseudo_sum += wp * membership;
        zone_s.push((s_raw, membership));
    }
    pseudo_sum
}

/// The part of `P`'s weight attributable to one spec's side of the joint (child weight `wc`,
/// position `s_raw`, radial `membership`), or `None` when the spec leaves the vertex alone.
/// Counts children with a pseudo-weight in `pseudo_children` and notes a skipped parent-only
/// vertex in `flags`.
fn parent_share(
    pw: &ParentWeights,
    wc: f64,
    s_raw: f64,
    membership: f64,
    pseudo_children: &mut usize,
    flags: &mut VertexFlags,
) -> Option<f64> {
    let wp = pw.wp;
    let in_slab = s_raw > 0.0 && s_raw < 1.0;
    let share = if pw.fork_parent {
        // Pseudo-weights: the child's own weight plus P's weight times the vertex's membership
        // of the child's radial zone; P is split in their proportion, and what they do not
        // cover stays on P.
        let pseudo = wc.max(0.0) + wp * membership;
        if pseudo > 0.0 {
            *pseudo_children += 1;
        }
        if pw.parent_only && in_slab && membership <= 0.0 {
            flags.parent_only_skipped = true;
        }
        if wp > 0.0 && pseudo > 0.0 {
            wp * pseudo / pw.pseudo_sum.max(wp)
        } else {
            0.0
        }
    } else if wc > 0.0 {
        if wp > 0.0 && pw.denom > 0.0 {
            wp * wc / pw.denom
        } else {
            0.0
        }
    } else if pw.parent_only && in_slab {
        // One child: a P-only vertex in the slab is wholly this side's.
        wp
    } else {
        return None;
    };
    Some(share)
}

/// Push into `deltas` the changes that move `part`'s amount (its share of `P` plus the
/// child's weight) onto the stations `[P, link1..linkN, C]` around its `s`, with the fade
/// (from the unit `normal`) returning some of the links' part to `P`; `dist` is scratch.
/// Returns whether the fade took any weight.
fn spec_deltas(
    deltas: &mut Vec<(u32, f64)>,
    dist: &mut Vec<f64>,
    parent_joint: u32,
    sg: &SpecGeom,
    part: SpecPart,
    normal: DVec3,
) -> bool {
    let SpecPart { share, wc, s_raw } = part;
    let amount = share + wc.max(0.0);
    let nl = sg.link_joints.len();
    let s = s_raw.clamp(0.0, 1.0);
    let seg = s * (nl + 1) as f64;
    let i = (seg.floor() as usize).min(nl);
    let t = seg - i as f64;
    dist.clear();
    dist.resize(nl + 2, 0.0);
    dist[i] += 1.0 - t;
    dist[i + 1] += t;
    let link_part: f64 = dist[1..=nl].iter().sum();
    let phi = sg.fade * sg.axis.dot(normal).abs();
    deltas.push((parent_joint, -share + amount * (dist[0] + phi * link_part)));
    deltas.push((sg.child_joint, -wc.max(0.0) + amount * dist[nl + 1]));
    for (k, &lj) in sg.link_joints.iter().enumerate() {
        deltas.push((lj, amount * (1.0 - phi) * dist[k + 1]));
    }
    phi > 0.0 && link_part > 0.0
}

/// The new weights: the changed rows (as many influences as the widest needs, the width
/// rounded up to a multiple of 4 and never below `w`'s), the other vertices copied from `w`.
fn pack_rows(w: &SkinWeights, rows: &[Option<Vec<(u32, f32)>>]) -> SkinWeights {
    let n = rows.len();
    let max_row = rows.iter().flatten().map(|r| r.len()).max().unwrap_or(0);
    let width = w.width.max(max_row.div_ceil(4) * 4);
    let mut out = SkinWeights {
        width,
        joints: vec![0; n * width],
        weights: vec![0.0; n * width],
    };
    for (v, row) in rows.iter().enumerate() {
        let dst = v * width;
        match row {
            Some(row) => {
                for (k, &(j, x)) in row.iter().enumerate() {
                    out.joints[dst + k] = j;
                    out.weights[dst + k] = x;
                }
            }
            None => {
                out.joints[dst..dst + w.width]
                    .copy_from_slice(&w.joints[v * w.width..(v + 1) * w.width]);
                out.weights[dst..dst + w.width]
                    .copy_from_slice(&w.weights[v * w.width..(v + 1) * w.width]);
            }
        }
    }
    out
}
