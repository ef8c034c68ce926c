//! Rogue removal: weights on patches detached from their bone's main patch move to the bone
//! of the nearest valid vertex along the surface.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §12 (the duck beak of fig. 14), for what a
//! rogue weight is and where it goes; Dijkstra, "A note on two problems in connexion with
//! graphs", 1959, for the nearest valid vertex (one search from all of them at once).
//!
//! Method: each bone picks the vertex least likely to be wrongly attached to it — the best
//! (lowest) score against its pseudo-cylinder ([`super::regenerate::cost`]) among the vertices
//! it influences, or its largest weight when no sections are given. The vertices it influences
//! that are connected to that vertex through vertices it also influences are valid for the
//! bone; any other vertex's weight to the bone is rogue. Every vertex with a rogue weight is
//! then matched with its nearest fully valid vertex along the surface (Dijkstra over edge
//! lengths from all fully valid vertices at once), and the rogue weight moves to that
//! vertex's dominant bone. Weight sums are unchanged; vertices without rogue weights are
//! returned bit for bit.
//!
//! Each connected component of the mesh is its own surface: a bone's best vertex is chosen
//! per component, so a model made of separate parts (eyes, teeth, armour plates) keeps their
//! weights.
//!
//! Cost: O(B·V) for the floods plus O(E log V) for the search; memory O(V + rogue pairs).
//!
//! Limits: a rogue weight with no valid vertex reachable, or whose nearest valid vertex's
//! dominant bone is the rogue bone itself, stays as it is and is counted as unresolved;
//! distances run along mesh edges, not across the surface's faces.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::regenerate::cost;
use super::sections::BoneSection;
use super::{
    Adjacency, Influences, WeightMesh, Work, check_joints, check_lists, rule, sort_influences,
};
use crate::error::Result;

/// What [`RogueJob::run`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RogueStats {
    /// Connected components of the mesh.
    pub components: usize,
    /// (vertex, bone) weights found rogue.
    pub rogue_weights: usize,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Total weight moved.
    pub weight_moved: f32,
    /// Rogue weights left as they were (see the module documentation).
    pub unresolved: usize,
    /// Per bone: rogue weights it lost.
    pub lost_per_bone: Vec<usize>,
    /// The work it took.
    pub work: Work,
}

/// Find and move rogue weights in place.
pub struct RogueJob<'a> {
    /// The mesh.
    pub mesh: &'a WeightMesh,
    /// Pseudo-cylinders to choose each bone's best vertex by (`None`: its largest weight).
    pub sections: Option<&'a [BoneSection]>,
    /// Bones the influences may name.
    pub bone_count: usize,
    /// The weights, repaired in place.
    pub influences: &'a mut Influences,
}

impl RogueJob<'_> {
    /// Rules: 1. one influence list per vertex; 2. joints below `bone_count`; 3. sections,
    /// when given, one per bone.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "RogueJob";
        check_lists(JOB, 1, self.influences.len(), self.mesh.positions.len())?;
        check_joints(JOB, 2, self.influences, self.bone_count)?;
        if let Some(s) = self.sections
            && s.len() != self.bone_count
        {
            return Err(rule(
                JOB,
                3,
                format!("{} sections for {} bones", s.len(), self.bone_count),
            ));
        }
        Ok(())
    }

    /// Validate, then repair.
    pub fn run(&mut self) -> Result<RogueStats> {
        self.validate()?;
        let n = self.mesh.positions.len();
        let adj = Adjacency::new(self.mesh);
        let mut stats = RogueStats {
            components: adj.component_count,
            lost_per_bone: vec![0; self.bone_count],
            work: adj.work,
            ..Default::default()
        };
        // Steps across the surface and over influence lists, counted as they happen.
        let mut steps = 0usize;
        // Vertices per bone, and each bone's best vertex per component.
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); self.bone_count];
        for (v, inf) in self.influences.iter().enumerate() {
            steps += 1 + inf.len();
            for &(b, w) in inf {
                if w > 0.0 {
                    users[b as usize].push(v as u32);
                }
            }
        }
        let mut rogue: Vec<(u32, u32)> = Vec::new(); // (vertex, bone)
        let mut stamp = vec![u32::MAX; n];
        let mut queue: Vec<u32> = Vec::new();
        for (b, list) in users.iter().enumerate() {
            steps += 1;
            if list.is_empty() {
                continue;
            }
            let bu = b as u32;
            let score = |v: u32| -> f32 {
                match self.sections {
                    Some(s) => cost(&s[b], self.mesh.positions[v as usize]),
                    None => -super::weight_of(&self.influences[v as usize], bu),
                }
            };
            // Best vertex per component (lowest score, then lowest index).
            let mut best: std::collections::HashMap<u32, (f32, u32)> = Default::default();
            steps += 2 * list.len();
            for &v in list {
                let c = adj.component[v as usize];
                let s = score(v);
                let e = best.entry(c).or_insert((s, v));
                if s < e.0 {
                    *e = (s, v);
                }
            }
            // Flood from each best vertex through vertices the bone influences.
            for &(_, start) in best.values() {
                stamp[start as usize] = bu;
                queue.clear();
                queue.push(start);
                while let Some(v) = queue.pop() {
                    steps += 1 + adj.of(v as usize).len() * (1 + self.influences[v as usize].len());
                    for &u in adj.of(v as usize) {
                        if stamp[u as usize] != bu
                            && super::weight_of(&self.influences[u as usize], bu) > 0.0
                        {
                            stamp[u as usize] = bu;
                            queue.push(u);
                        }
                    }
                }
            }
            for &v in list {
                if stamp[v as usize] != bu {
                    rogue.push((v, bu));
                }
            }
            // Reset this bone's marks (stamps are per bone; the next bone has its own value).
        }
        stats.rogue_weights = rogue.len();
        if rogue.is_empty() {
            stats.work += Work::steps(steps);
            return Ok(stats);
        }
        // Nearest fully valid vertex along the surface, from all of them at once.
        let mut invalid = vec![false; n];
        for &(v, _) in &rogue {
            invalid[v as usize] = true;
        }
        let mut dist = vec![f32::INFINITY; n];
        let mut source = vec![u32::MAX; n];
        let mut heap = BinaryHeap::new();
        for v in 0..n {
            if !invalid[v] && !self.influences[v].is_empty() {
                dist[v] = 0.0;
                source[v] = v as u32;
                heap.push(Reverse((Dist(0.0), v as u32)));
            }
        }
        // Marks, starts, dominant bones and changes: passes over the vertices.
        steps += 4 * n + rogue.len();
        while let Some(Reverse((Dist(d), v))) = heap.pop() {
            steps += 1;
            if d > dist[v as usize] {
                continue;
            }
            steps += adj.of(v as usize).len();
            for &u in adj.of(v as usize) {
                let nd = d
                    + (self.mesh.positions[v as usize] - self.mesh.positions[u as usize]).length();
                if nd < dist[u as usize] {
                    dist[u as usize] = nd;
                    source[u as usize] = source[v as usize];
                    heap.push(Reverse((Dist(nd), u)));
                }
            }
        }
        let dominant: Vec<Option<u32>> = super::sections::dominant_bone(self.influences);
        let mut changed = vec![false; n];
        for &(v, b) in &rogue {
            let s = source[v as usize];
            let target = (s != u32::MAX)
                .then(|| dominant[s as usize])
                .flatten()
                .filter(|&t| t != b);
            let Some(t) = target else {
                stats.unresolved += 1;
                continue;
            };
            let inf = &mut self.influences[v as usize];
            let Some(pos) = inf.iter().position(|x| x.0 == b) else {
                continue;
            };
            let w = inf.remove(pos).1;
            match inf.iter_mut().find(|x| x.0 == t) {
                Some(x) => x.1 += w,
                None => inf.push((t, w)),
            }
            sort_influences(inf);
            stats.weight_moved += w;
            stats.lost_per_bone[b as usize] += 1;
            changed[v as usize] = true;
        }
        stats.vertices_changed = changed.iter().filter(|&&c| c).count();
        stats.work += Work::steps(steps);
        Ok(stats)
    }
}

/// A distance with a total order (distances here are finite and non-negative).
#[derive(Clone, Copy, PartialEq)]
struct Dist(f32);

impl Eq for Dist {}

impl PartialOrd for Dist {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Dist {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
