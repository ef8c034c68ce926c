//! The common split, kept as the partitioner's floor: Assimp's `SplitByBoneCount` order.
//!
//! Based on: Assimp (the Open Asset Import Library), its `SplitByBoneCount` post-processing
//! step, whose grouping of faces this reproduces; running it on combos is the project's own.
//!
//! Method: a submesh takes, in file order, every face whose bones still fit in `K` together
//! with those it has; the next submesh starts over with the faces left. The partitioner runs it
//! only when the better candidates miss the lower bound and have not been proved minimal, and
//! keeps it when it has fewer submeshes, so the result never has more submeshes than this
//! split.
//!
//! It runs on combos (faces sharing a bone set), with the same result as face by face: within
//! a pass the submesh's bones only change at faces that add bones, and once a combo's bones
//! are all in, every later face of it is taken. So a pass finds, from its current position,
//! the earliest remaining face that adds bones and still fits (a binary search per combo),
//! takes it, and when none is left takes each covered combo's faces after the moment it was
//! covered. The faces a combo keeps are always a prefix of its faces in file order.
//!
//! Cost: O(S · K · C · log F) for S submeshes, C combos and F faces (against O(S · F) face by
//! face); faces are touched once when taken.
//!
//! Limits: file order decides, as in Assimp.

use super::{Faces, Groups};

/// Greedy split of `faces` in file order: `(faces ascending, bones ascending)` per group.
pub(super) fn greedy(faces: &Faces, joints: usize, k: usize) -> Groups {
    let combos = faces.combo_count();
    // Faces of each combo in file order (CSR), and how many of them are still unassigned:
    // always a prefix.
    let mut offsets = vec![0usize; combos + 1];
    for f in 0..faces.count() {
        offsets[faces.combo_of(f) + 1] += 1;
    }
    for c in 0..combos {
        offsets[c + 1] += offsets[c];
    }
    let mut of_combo = vec![0u32; faces.count()];
    let mut fill = offsets.clone();
    for f in 0..faces.count() {
        let c = faces.combo_of(f);
        of_combo[fill[c]] = f as u32;
        fill[c] += 1;
    }
    let mut left: Vec<usize> = (0..combos).map(|c| offsets[c + 1] - offsets[c]).collect();
    let mut alive: Vec<usize> = (0..combos).filter(|&c| left[c] > 0).collect();
    let mut member = vec![false; joints];
    let mut groups = Vec::new();
    // Per combo: the file position from which this pass takes its faces (u32::MAX: not covered).
    let mut covered_from = vec![u32::MAX; combos];
    while !alive.is_empty() {
        let mut bones: Vec<u32> = Vec::new();
        let mut position = 0u32; // faces before it have been passed in this pass
        loop {
            // Combos the bones now cover start taking faces from here.
            for &c in &alive {
                if covered_from[c] == u32::MAX
                    && faces.combo_bones(c).iter().all(|&b| member[b as usize])
                {
                    covered_from[c] = position;
                }
            }
            // The earliest remaining face at or after `position` that adds bones and fits.
            let mut next: Option<(u32, usize)> = None;
            for &c in &alive {
                if covered_from[c] != u32::MAX {
                    continue;
                }
                let cb = faces.combo_bones(c);
                let new = cb.iter().filter(|&&b| !member[b as usize]).count();
                if bones.len() + new > k {
                    continue;
                }
                let list = &of_combo[offsets[c]..offsets[c] + left[c]];
                let i = list.partition_point(|&f| f < position);
                if let Some(&f) = list.get(i)
                    && next.is_none_or(|(nf, _)| f < nf)
                {
                    next = Some((f, c));
                }
            }
            let Some((f, c)) = next else { break };
            for &b in faces.combo_bones(c) {
                if !member[b as usize] {
                    member[b as usize] = true;
                    bones.push(b);
                }
            }
            covered_from[c] = f;
            position = f + 1;
        }
        // Take every covered combo's faces from the moment it was covered.
        let mut group: Vec<u32> = Vec::new();
        for &c in &alive {
            let from = covered_from[c];
            if from == u32::MAX {
                continue;
            }
            covered_from[c] = u32::MAX;
            let list = &of_combo[offsets[c]..offsets[c] + left[c]];
            let i = list.partition_point(|&f| f < from);
            group.extend_from_slice(&list[i..]);
            left[c] = i;
        }
        if group.is_empty() {
            // Only a face with more than K bones fits nowhere; fitting rules that out, but a
            // loop must not depend on it: the first such face gets a group of its own.
            let Some(&c) = alive.iter().min_by_key(|&&c| of_combo[offsets[c]]) else {
                break;
            };
            left[c] -= 1;
            group.push(of_combo[offsets[c] + left[c]]);
            bones.extend_from_slice(faces.combo_bones(c));
        }
        for &b in &bones {
            member[b as usize] = false;
        }
        bones.sort_unstable();
        bones.dedup();
        group.sort_unstable();
        groups.push((group, bones));
        alive.retain(|&c| left[c] > 0);
    }
    groups
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::fit::Influences;
    use super::super::split::index_faces;
    use super::*;
    use crate::scene::SkinWeights;

    /// The same split face by face, as Assimp writes it.
    fn face_by_face(faces: &Faces, k: usize) -> Vec<Vec<u32>> {
        let mut done = vec![false; faces.count()];
        let mut groups = Vec::new();
        while done.iter().any(|d| !d) {
            let mut set: Vec<u32> = Vec::new();
            let mut group = Vec::new();
            for (f, done) in done.iter_mut().enumerate() {
                if *done {
                    continue;
                }
                let mut u = set.clone();
                u.extend_from_slice(faces.bones_of(f));
                u.sort_unstable();
                u.dedup();
                if u.len() <= k {
                    set = u;
                    *done = true;
                    group.push(f as u32);
                }
            }
            groups.push(group);
        }
        groups
    }

    /// The combo-level split takes exactly the faces the face-by-face one does, pass by pass,
    /// on random faces over few bones (so combos repeat and cover one another).
    #[test]
    fn combo_greedy_equals_face_by_face() {
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..200 {
            let vertices = 4 + next(40) as usize;
            let bones = 1 + next(20) as u32;
            let mut w = SkinWeights {
                width: 4,
                joints: vec![0; vertices * 4],
                weights: vec![0.0; vertices * 4],
            };
            for v in 0..vertices {
                let count = 1 + next(3) as usize;
                for i in 0..count {
                    w.joints[v * 4 + i] = next(bones as u64) as u32;
                    w.weights[v * 4 + i] = 1.0;
                }
            }
            let indices: Vec<u32> = (0..3 * (1 + next(60)))
                .map(|_| next(vertices as u64) as u32)
                .collect();
            let inf = Influences::of(&w);
            let faces = index_faces(&inf, &indices, 3, vertices);
            let k = 9 + next(4) as usize; // every face fits (at most 9 bones)
            let ours: Vec<Vec<u32>> = greedy(&faces, bones as usize, k)
                .into_iter()
                .map(|g| g.0)
                .collect();
            assert_eq!(ours, face_by_face(&faces, k));
        }
    }
}
