//! Region growing with a bone budget: the spatial half of the partitioner.
//!
//! Method. A group starts at the first unassigned face and grows through shared vertices,
//! always taking the neighbouring face that adds the fewest new bones — faces adding none first,
//! breadth first — so groups stay compact and only their borders duplicate vertices. When no
//! neighbour fits, any unassigned face whose bones are all in the group is pulled in (found
//! through per-bone buckets) and growth continues from it. Groups whose bone sets fit in `K`
//! together are then merged, the pair sharing the most bones first.
//!
//! Cost: O(F · valence) to visit, O(K · frontier) per added face to pick the next, O(S² · K)
//! per merge (S groups). Limits: greedy; the first face seeds each group, so the count can
//! exceed what [`super::pack`] finds (the partitioner keeps the better of the two).

use std::collections::VecDeque;

use super::{Faces, Groups};

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
            for &g in faces.faces_of_vertex(v as usize) {
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
    // Faces bucketed by their smallest bone (the "already covered" search).
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); joints];
    for f in 0..n {
        if let Some(&b) = faces.bones_of(f).first() {
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
    merge(groups, bone_sets, k)
}

/// Merge groups into as few as fit in `k` bones: largest bone sets first, each into the
/// merged group sharing the most bones with it (then the smallest union, then the first), or a
/// new one. O(S · M · K) for S groups and M results. Deterministic.
fn merge(groups: Vec<Vec<u32>>, bone_sets: Vec<Vec<u32>>, k: usize) -> Groups {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(bone_sets[i].len()), i));
    let mut groups: Vec<Option<Vec<u32>>> = groups.into_iter().map(Some).collect();
    let mut out: Groups = Vec::new();
    for i in order {
        let bones = &bone_sets[i];
        let mut best: Option<(usize, usize, usize)> = None; // (shared, union, index)
        for (j, (_, b)) in out.iter().enumerate() {
            let u = union_len(b, bones);
            if u > k {
                continue;
            }
            let shared = b.len() + bones.len() - u;
            if best.is_none_or(|(s, bu, _)| shared > s || (shared == s && u < bu)) {
                best = Some((shared, u, j));
            }
        }
        let members = groups[i].take().unwrap_or_default();
        match best {
            Some((_, _, j)) => {
                let (m, b) = &mut out[j];
                m.extend(members);
                b.extend_from_slice(bones);
                b.sort_unstable();
                b.dedup();
            }
            None => out.push((members, bones.clone())),
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
