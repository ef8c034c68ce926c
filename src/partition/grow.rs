//! Region growing with a bone budget: the spatial half of the partitioner.
//!
//! Based on: the project's own method, after the greedy growth of meshoptimizer's meshlet
//! builder (Arseny Kapoulkine, `meshopt_buildMeshlets`: a meshlet grows through adjacent
//! triangles, those adding no new vertex first), with bones in place of vertices as the budget
//! and a merge of the groups afterwards.
//!
//! Method: a group starts at the first unassigned face and grows through shared vertices,
//! always taking the neighbouring face that adds the fewest new bones — faces adding none first,
//! breadth first — so groups stay compact and only their borders duplicate vertices. When no
//! neighbour fits, any unassigned face whose bones are all in the group is pulled in (found
//! through buckets keyed by each face's rarest bone, so a bone every face shares — a root, a
//! hip — never makes a bucket of everything) and growth continues from it. Groups are then
//! merged, largest bone sets first, each into the merged group among those sharing a bone with
//! it (at most [`MERGE_CANDIDATES`], the most recent first) or the newest few that shares the
//! most bones and still fits `K`, or into a new one.
//!
//! Cost: each vertex's faces are walked once per group, and vertices of more than
//! [`super::VALENCE_CAP`] faces (fan centres, poles) are not walked at all: O(F · cap) to
//! visit; O(K · frontier) per bone added to pick the next face; O(S · MERGE_CANDIDATES · K)
//! to merge S groups.
//!
//! Limits: greedy; each group starts from the first face left, so the count can exceed what
//! `pack` finds (the partitioner keeps the better of the two).

use std::collections::VecDeque;

use super::{Faces, Groups, VALENCE_CAP};

/// Merged groups a group is tried against: enough to find a partner sharing bones on real
/// skins (a bone is in a handful of groups), few enough that thousands of islands sharing one
/// root bone merge in linear time.
pub const MERGE_CANDIDATES: usize = 64;

/// The newest merged groups a group is also tried against, whatever their bones.
const RECENT_CANDIDATES: usize = 4;

/// A set of bones: membership flags over joint indices plus the list of members.
struct BoneSet {
    member: Vec<bool>,
    list: Vec<u32>,
}

impl BoneSet {
    fn clear(&mut self) {
        for &b in &self.list {
            self.member[b as usize] = false;
        }
        self.list.clear();
    }
    fn missing(&self, bones: &[u32]) -> usize {
        bones.iter().filter(|&&b| !self.member[b as usize]).count()
    }
    fn insert_all(&mut self, bones: &[u32]) {
        for &b in bones {
            if !self.member[b as usize] {
                self.member[b as usize] = true;
                self.list.push(b);
            }
        }
    }
}

const UNASSIGNED: u32 = u32::MAX;

/// The growing group and the queues it is grown from.
struct Growth<'a> {
    faces: &'a Faces<'a>,
    id: u32,
    set: BoneSet,
    owner: Vec<u32>,
    /// The group that queued the face last (a face is queued once per group).
    seen: Vec<u32>,
    /// The group that walked the vertex's faces last (a vertex is walked once per group).
    walked: Vec<u32>,
    zero: VecDeque<u32>,
    frontier: Vec<u32>,
    members: Vec<u32>,
    /// Per combo: `(group, bones in the set, missing)` when last counted. The set only grows,
    /// so a count is current while the group and the set's size are; faces share combos, so
    /// most counts are looked up, not made.
    missing_cache: Vec<(u32, u32, u32)>,
}

impl Growth<'_> {
    /// Bones of face `f` not yet in the group's set.
    fn missing(&mut self, f: usize) -> usize {
        let c = self.faces.combo_of(f);
        let key = (self.id, self.set.list.len() as u32);
        let e = &mut self.missing_cache[c];
        if (e.0, e.1) != key {
            *e = (
                key.0,
                key.1,
                self.set.missing(self.faces.bones_of(f)) as u32,
            );
        }
        e.2 as usize
    }

    fn add(&mut self, f: u32) {
        let faces = self.faces;
        self.owner[f as usize] = self.id;
        self.members.push(f);
        self.set.insert_all(faces.bones_of(f as usize));
        for &v in faces.vertices_of(f as usize) {
            let around = faces.faces_of_vertex(v as usize);
            if self.walked[v as usize] == self.id || around.len() > VALENCE_CAP {
                continue;
            }
            self.walked[v as usize] = self.id;
            for &g in around {
                let gi = g as usize;
                if self.owner[gi] == UNASSIGNED && self.seen[gi] != self.id {
                    self.seen[gi] = self.id;
                    if self.missing(gi) == 0 {
                        self.zero.push_back(g);
                    } else {
                        self.frontier.push(g);
                    }
                }
            }
        }
    }
}

/// Grow groups of at most `k` bones over `faces`, then merge: `(faces, bones ascending)` per
/// group.
pub(super) fn grow(faces: &Faces, joints: usize, k: usize) -> Groups {
    let n = faces.count();
    // Faces bucketed by their rarest bone (the "already covered" search): a face can only be
    // covered by a set holding that bone, and the bone shared by everything keeps only the
    // faces that have nothing else.
    let mut uses = vec![0u32; joints];
    for &b in &faces.bones {
        uses[b as usize] += 1;
    }
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); joints];
    for f in 0..n {
        if let Some(&b) = faces
            .bones_of(f)
            .iter()
            .min_by_key(|&&b| (uses[b as usize], b))
        {
            buckets[b as usize].push(f as u32);
        }
    }
    let mut g = Growth {
        faces,
        id: 0,
        set: BoneSet {
            member: vec![false; joints],
            list: Vec::new(),
        },
        owner: vec![UNASSIGNED; n],
        seen: vec![UNASSIGNED; n],
        walked: vec![UNASSIGNED; faces.vertex_count()],
        zero: VecDeque::new(),
        frontier: Vec::new(),
        members: Vec::new(),
        missing_cache: vec![(UNASSIGNED, 0, 0); faces.combo_count()],
    };
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let mut next_seed = 0usize;
    loop {
        while next_seed < n && g.owner[next_seed] != UNASSIGNED {
            next_seed += 1;
        }
        if next_seed >= n {
            break;
        }
        g.id = groups.len() as u32;
        g.set.clear();
        g.zero.clear();
        g.frontier.clear();
        g.add(next_seed as u32);
        let mut pulled_at = usize::MAX;
        loop {
            // Neighbours that add no bone, breadth first.
            while let Some(f) = g.zero.pop_front() {
                if g.owner[f as usize] == UNASSIGNED {
                    g.add(f);
                }
            }
            // The neighbour adding the fewest bones that still fits.
            let mut frontier = std::mem::take(&mut g.frontier);
            frontier.retain(|&f| g.owner[f as usize] == UNASSIGNED);
            let room = k.saturating_sub(g.set.list.len());
            let mut best: Option<(usize, u32)> = None;
            for &f in frontier.iter() {
                let m = g.missing(f as usize);
                if m <= room && best.is_none_or(|b| (m, f) < b) {
                    best = Some((m, f));
                }
            }
            g.frontier = frontier;
            if let Some((_, f)) = best {
                g.add(f);
                // Faces the new bones cover move to the zero queue.
                let mut frontier = std::mem::take(&mut g.frontier);
                frontier.retain(|&h| {
                    let covered = g.owner[h as usize] == UNASSIGNED && g.missing(h as usize) == 0;
                    if covered {
                        g.zero.push_back(h);
                    }
                    !covered
                });
                g.frontier = frontier;
                continue;
            }
            // Closed: pull in faces anywhere whose bones are all in the set — once per set:
            // with the same bones, the last pull already took every face they cover.
            if pulled_at == g.set.list.len() {
                break;
            }
            pulled_at = g.set.list.len();
            let mut pulled = 0usize;
            for bi in 0..g.set.list.len() {
                let b = g.set.list[bi] as usize;
                let bucket = std::mem::take(&mut buckets[b]);
                let mut keep = Vec::with_capacity(bucket.len());
                for f in bucket {
                    if g.owner[f as usize] != UNASSIGNED {
                        continue; // assigned: out of the bucket for good
                    }
                    if g.missing(f as usize) == 0 {
                        g.zero.push_back(f);
                        pulled += 1;
                    } else {
                        keep.push(f);
                    }
                }
                buckets[b] = keep;
            }
            if pulled == 0 {
                break;
            }
        }
        groups.push(std::mem::take(&mut g.members));
    }
    let bone_sets: Vec<Vec<u32>> = groups
        .iter()
        .map(|grp| {
            let mut b: Vec<u32> = grp
                .iter()
                .flat_map(|&f| faces.bones_of(f as usize))
                .copied()
                .collect();
            b.sort_unstable();
            b.dedup();
            b
        })
        .collect();
    merge(groups, bone_sets, k, joints)
}

/// Merge groups into as few as fit in `k` bones: largest bone sets first, each into the
/// candidate sharing the most bones with it (then the smallest union, then the first), or a
/// new one. Candidates: merged groups holding one of its bones, rarest bone first, most recent
/// first, at most [`MERGE_CANDIDATES`], and the [`RECENT_CANDIDATES`] newest. Deterministic.
fn merge(groups: Vec<Vec<u32>>, bone_sets: Vec<Vec<u32>>, k: usize, joints: usize) -> Groups {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(bone_sets[i].len()), i));
    let mut groups: Vec<Option<Vec<u32>>> = groups.into_iter().map(Some).collect();
    let mut out: Groups = Vec::new();
    // Merged groups holding each bone, in order of creation.
    let mut holders: Vec<Vec<u32>> = vec![Vec::new(); joints];
    // The step that last made a merged group a candidate (each is tried once per group).
    let mut tried: Vec<u32> = Vec::new();
    for (step, i) in order.into_iter().enumerate() {
        let bones = &bone_sets[i];
        let mut by_rarity: Vec<u32> = bones.clone();
        by_rarity.sort_by_key(|&b| (holders[b as usize].len(), b));
        let mut candidates: Vec<u32> = Vec::new();
        'gather: for &b in &by_rarity {
            for &j in holders[b as usize].iter().rev() {
                if tried[j as usize] != step as u32 {
                    tried[j as usize] = step as u32;
                    candidates.push(j);
                    if candidates.len() == MERGE_CANDIDATES {
                        break 'gather;
                    }
                }
            }
        }
        // And the newest merged groups, sharing a bone or not (islands of disjoint bones fit
        // together too).
        for j in (0..out.len() as u32).rev().take(RECENT_CANDIDATES) {
            if tried[j as usize] != step as u32 {
                tried[j as usize] = step as u32;
                candidates.push(j);
            }
        }
        let mut best: Option<(usize, usize, u32)> = None; // (shared, union, index)
        for &j in &candidates {
            let b = &out[j as usize].1;
            let u = union_len(b, bones);
            if u > k {
                continue;
            }
            let shared = b.len() + bones.len() - u;
            // Most shared, then the smallest union, then the oldest.
            let key = (shared, std::cmp::Reverse(u), std::cmp::Reverse(j));
            if best
                .is_none_or(|(bs, bu, bj)| key > (bs, std::cmp::Reverse(bu), std::cmp::Reverse(bj)))
            {
                best = Some((shared, u, j));
            }
        }
        let members = groups[i].take().unwrap_or_default();
        let (j, new_bones): (u32, Vec<u32>) = match best {
            Some((_, _, j)) => {
                let (m, b) = &mut out[j as usize];
                let new: Vec<u32> = bones
                    .iter()
                    .copied()
                    .filter(|x| b.binary_search(x).is_err())
                    .collect();
                m.extend(members);
                b.extend_from_slice(&new);
                b.sort_unstable();
                (j, new)
            }
            None => {
                out.push((members, bones.clone()));
                tried.push(u32::MAX);
                ((out.len() - 1) as u32, bones.clone())
            }
        };
        for b in new_bones {
            holders[b as usize].push(j);
        }
    }
    out
}

/// Size of the union of two ascending lists.
pub(super) fn union_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
        n += 1;
    }
    n + (a.len() - i) + (b.len() - j)
}
