//! Border refinement: fewer duplicated vertices for the same submeshes.
//!
//! Based on: label propagation (Raghavan, Albert and Kumara, "Near linear time algorithm to
//! detect community structures in large-scale networks", 2007), made deterministic (face order,
//! strict majority) and restricted to the submeshes whose bones cover a face.
//!
//! Method: each face may sit in any submesh whose bones cover its own; in face order, a face
//! moves to the covering submesh that most of its neighbours (faces sharing a vertex) are in,
//! when that is strictly more than its current one's. Bone sets never grow, so every submesh
//! stays within `K`; a submesh left without faces disappears.
//!
//! Cost: O(Σ|combo| · groups holding its rarest bone) to find each combo's covering
//! submeshes (at most [`COVER_CAP`] kept), O(F · valence) for the first pass with vertices of
//! more than [`super::VALENCE_CAP`] faces not walked, O(moved · valence) for the later ones.
//!
//! Limits: local moves only; a few passes (each only moves faces to a better-connected
//! submesh, so it cannot cycle within a pass).

use super::{Faces, Groups, VALENCE_CAP};

/// Covering submeshes kept per combo: a face moves to one of these (more are rare and would
/// cost memory on hostile inputs where one bone set is covered by thousands of submeshes).
pub const COVER_CAP: usize = 16;

/// Passes of label propagation: the first visits every face that has a choice, each later
/// one the neighbours of faces that moved (on the shared models the second moves under 1 % of
/// what the first does; more change nothing measurable).
const PASSES: usize = 3;

/// Move faces between `groups` (`(faces, bones ascending)`) to shorten the borders; returns
/// the groups with faces ascending and bones trimmed to those their faces use.
pub(super) fn refine(faces: &Faces, joints: usize, mut groups: Groups) -> Groups {
    let n = faces.count();
    let mut bin_of = vec![u32::MAX; n];
    for (i, (members, _)) in groups.iter().enumerate() {
        for &f in members {
            if let Some(b) = bin_of.get_mut(f as usize) {
                *b = i as u32;
            }
        }
    }
    // Every candidate split places every face; should one not, its faces get a group of
    // their own rather than a wrong one (the caller checks the bone budget).
    let lost: Vec<u32> = (0..n as u32)
        .filter(|&f| bin_of[f as usize] == u32::MAX)
        .collect();
    if !lost.is_empty() {
        for &f in &lost {
            bin_of[f as usize] = groups.len() as u32;
        }
        groups.push((lost, Vec::new()));
    }
    let s = groups.len();
    // Groups covering each bone (ascending), then each combo's covering groups, found from
    // its bone held by the fewest groups.
    let mut groups_of_bone: Vec<Vec<u32>> = vec![Vec::new(); joints];
    for (i, (_, bones)) in groups.iter().enumerate() {
        for &b in bones {
            groups_of_bone[b as usize].push(i as u32);
        }
    }
    let combos = faces.combo_count();
    let mut cover_offsets = Vec::with_capacity(combos + 1);
    let mut cover: Vec<u32> = Vec::new();
    cover_offsets.push(0usize);
    for c in 0..combos {
        let bones = faces.combo_bones(c);
        // A face without bones fits every group: it is left to its neighbours (below).
        if let Some(&rarest) = bones
            .iter()
            .min_by_key(|&&b| (groups_of_bone[b as usize].len(), b))
        {
            for &g in &groups_of_bone[rarest as usize] {
                if bones
                    .iter()
                    .all(|&b| groups_of_bone[b as usize].binary_search(&g).is_ok())
                {
                    cover.push(g);
                    if cover.len() - cover_offsets[c] == COVER_CAP {
                        break;
                    }
                }
            }
        }
        cover_offsets.push(cover.len());
    }
    let mut votes = vec![0u32; s];
    let mut touched: Vec<u32> = Vec::new();
    let any = |c: usize| faces.combo_bones(c).is_empty();
    let movable = |f: usize| {
        let c = faces.combo_of(f);
        any(c) || cover_offsets[c + 1] - cover_offsets[c] >= 2
    };
    // Faces around a vertex, unless it is a fan centre or pole.
    let around = |v: u32| {
        let a = faces.faces_of_vertex(v as usize);
        if a.len() > VALENCE_CAP { &a[..0] } else { a }
    };
    // First pass: every face that could move; later passes: neighbours of moved faces.
    let mut work: Vec<u32> = (0..n as u32).filter(|&f| movable(f as usize)).collect();
    let mut queued = vec![u32::MAX; n];
    for pass in 0..PASSES as u32 {
        let mut next: Vec<u32> = Vec::new();
        for &f in &work {
            let f = f as usize;
            let c = faces.combo_of(f);
            let candidates = &cover[cover_offsets[c]..cover_offsets[c + 1]];
            for &v in faces.vertices_of(f) {
                for &g in around(v) {
                    if g as usize != f {
                        let b = bin_of[g as usize];
                        if votes[b as usize] == 0 {
                            touched.push(b);
                        }
                        votes[b as usize] += 1;
                    }
                }
            }
            let current = bin_of[f];
            let mut best = (votes[current as usize], current);
            for &b in &touched {
                // Ties go to the lower index (never away from the current group).
                let v = votes[b as usize];
                let better = v > best.0 || (v == best.0 && best.1 != current && b < best.1);
                if better && (any(c) || candidates.contains(&b)) {
                    best = (v, b);
                }
            }
            for &b in &touched {
                votes[b as usize] = 0;
            }
            touched.clear();
            if best.1 != current {
                bin_of[f] = best.1;
                for &v in faces.vertices_of(f) {
                    for &g in around(v) {
                        if g as usize != f && queued[g as usize] != pass && movable(g as usize) {
                            queued[g as usize] = pass;
                            next.push(g);
                        }
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        next.sort_unstable();
        work = next;
    }
    let mut out: Groups = vec![(Vec::new(), Vec::new()); s];
    for (f, &b) in bin_of.iter().enumerate() {
        out[b as usize].0.push(f as u32);
    }
    out.retain(|(m, _)| !m.is_empty());
    let mut mark = vec![false; joints];
    for (members, bones) in &mut out {
        for &f in members.iter() {
            for &b in faces.bones_of(f as usize) {
                if !mark[b as usize] {
                    mark[b as usize] = true;
                    bones.push(b);
                }
            }
        }
        bones.sort_unstable();
        for &b in bones.iter() {
            mark[b as usize] = false;
        }
    }
    out
}
