//! Bone-set packing: the submesh-count half of the partitioner.
//!
//! Based on: the project's own method — greedy bin packing of bone sets (bins of at most `K`
//! bones, items that share bones), bin elimination, and an exact branch-and-bound search that
//! proves the count minimal where it finishes.
//!
//! Method: faces with the same bone set share a "combo" (real skins have tens to a few
//! thousand distinct combos however many faces). Combos are packed into bins of at most `K`
//! bones, greedily: a bin opens with the largest unpacked combo and repeatedly takes the combo
//! that adds the fewest new bones (then the one sharing the most, then the one with the most
//! faces); combos that add none are taken at once. Bins are then eliminated where possible:
//! the bin with the fewest faces is dissolved when every one of its combos fits into the
//! others. When more bins remain than the lower bound ⌈bones / K⌉, an exact branch-and-bound
//! search over the maximal combos (those in no other) looks for fewer, within a node budget;
//! when it finishes, the count is proved minimal. Faces start in their combo's bin;
//! [`super::refine`] then shortens the borders.
//!
//! Cost: O(Σ_bones (combos using it)²) to pack; O(S · C · K) to eliminate (S bins, C
//! combos); the search runs only for at most [`EXACT_MAX_COMBOS`] maximal combos over at most
//! 128 bones and stops after [`EXACT_BUDGET`] nodes, so it stays a small part of a split's
//! time (BENCHMARKS.md breaks the time down). Packing and elimination are skipped beyond
//! [`PACK_BUDGET`] and `ELIMINATE_BUDGET` (hostile inputs only).
//!
//! Limits: greedy beyond the search's reach.

use super::{Faces, Groups};

/// Bins being packed: `(bones ascending, combos)` per bin.
type Bins = Vec<(Vec<u32>, Vec<u32>)>;
use super::grow::union_len;

/// Largest number of maximal combos the exact search takes on (its depth).
pub const EXACT_MAX_COMBOS: usize = 256;

/// Search nodes before the exact search gives up (about 10 ms on one core).
pub const EXACT_BUDGET: usize = 200_000;

/// Work (Σ over bones of the combos using it, squared) beyond which packing is not tried:
/// about a second. Real skins stay far below (CesiumMan: 105 combos); a hostile mesh where tens
/// of thousands of distinct bone sets share one bone reaches it, and is left to region growing.
pub const PACK_BUDGET: usize = 200_000_000;

/// Work (bins × combos × `K`) beyond which bins are not eliminated (the packing is kept as
/// is): about a second.
const ELIMINATE_BUDGET: usize = 200_000_000;

/// Candidates a bin looks at when it searches for a combo sharing none of its bones (a cap:
/// packed and touching combos are skipped, and the scan must stay O(1) per step on meshes with
/// many combos).
const DISJOINT_SCAN: usize = 256;

/// What packing found: groups `(faces ascending, bones ascending)`, and whether their count is
/// proved minimal.
pub(super) struct Packed {
    pub groups: Groups,
    pub minimal: bool,
}

/// Pack the faces' combos into bins of at most `k` bones (module documentation); `None` when
/// the packing would cost more than [`PACK_BUDGET`].
pub(super) fn pack(faces: &Faces, joints: usize, k: usize, lower_bound: usize) -> Option<Packed> {
    let combos = faces.combo_count();
    let combo_bones = |c: usize| faces.combo_bones(c);
    let combo_faces = faces.combo_face_counts();
    // Taking a combo walks the combo lists of its bones: Σ over bones of (combos with it)².
    let mut with_bone = vec![0usize; joints];
    for c in 0..combos {
        for &b in combo_bones(c) {
            with_bone[b as usize] += 1;
        }
    }
    let work = with_bone
        .iter()
        .fold(0usize, |a, &n| a.saturating_add(n.saturating_mul(n)));
    if work > PACK_BUDGET {
        return None;
    }
    let bins = pack_combos(combos, &combo_bones, combo_faces, joints, k);
    let mut bins = if bins.len().saturating_mul(combos).saturating_mul(k) <= ELIMINATE_BUDGET {
        eliminate_bins(bins, &combo_bones, combo_faces, k)
    } else {
        bins
    };
    let mut minimal = bins.len() <= lower_bound;
    if !minimal {
        match exact(combos, &combo_bones, k, bins.len()) {
            Search::Better(sets, proved) => {
                // Each combo into the first set covering it (every combo is within a maximal one).
                let mut better: Bins = sets.into_iter().map(|b| (b, Vec::new())).collect();
                let mut complete = true;
                for c in 0..combos {
                    let cb = combo_bones(c);
                    match better
                        .iter_mut()
                        .find(|(b, _)| cb.iter().all(|x| b.binary_search(x).is_ok()))
                    {
                        Some((_, members)) => members.push(c as u32),
                        None => complete = false,
                    }
                }
                if complete {
                    bins = better;
                    minimal = proved;
                }
            }
            Search::Minimal => minimal = true,
            Search::GaveUp => {}
        }
    }
    // Faces into their combo's bin.
    let mut bin_of_combo = vec![0u32; combos];
    for (i, (_, members)) in bins.iter().enumerate() {
        for &c in members {
            bin_of_combo[c as usize] = i as u32;
        }
    }
    let mut groups: Groups = bins.into_iter().map(|(b, _)| (Vec::new(), b)).collect();
    for f in 0..faces.count() {
        groups[bin_of_combo[faces.combo_of(f)] as usize]
            .0
            .push(f as u32);
    }
    groups.retain(|(m, _)| !m.is_empty());
    Some(Packed { groups, minimal })
}

/// Outcome of the exact search.
enum Search {
    /// Fewer bins than the greedy count: their bone sets (ascending), and whether the search
    /// finished (the count is minimal).
    Better(Vec<Vec<u32>>, bool),
    /// The search finished without beating the greedy count: it is minimal.
    Minimal,
    /// Out of reach or out of budget.
    GaveUp,
}

/// Branch and bound over the maximal combos: each goes into an open bin it fits (fullest
/// union first) or opens one; a branch is cut when it cannot beat the best count.
fn exact<'a>(
    combos: usize,
    combo_bones: &dyn Fn(usize) -> &'a [u32],
    k: usize,
    greedy: usize,
) -> Search {
    // Maximal combos (ascending bone lists), largest first.
    let mut list: Vec<&[u32]> = (0..combos)
        .map(combo_bones)
        .filter(|b| !b.is_empty())
        .collect();
    list.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    list.dedup();
    let mut maximal: Vec<&[u32]> = Vec::new();
    for c in &list {
        // Larger combos come first, so any superset is already listed.
        if !maximal.iter().any(|m| union_len(m, c) == m.len()) {
            if maximal.len() == EXACT_MAX_COMBOS {
                return Search::GaveUp;
            }
            maximal.push(c);
        }
    }
    // Bones as bits.
    let mut bones: Vec<u32> = maximal.iter().flat_map(|m| m.iter().copied()).collect();
    bones.sort_unstable();
    bones.dedup();
    if bones.len() > 128 {
        return Search::GaveUp;
    }
    let bit = |b: &u32| 1u128 << bones.binary_search(b).unwrap_or(0);
    let sets: Vec<u128> = maximal
        .iter()
        .map(|m| m.iter().map(bit).fold(0, |a, x| a | x))
        .collect();
    let lower = bones.len().div_ceil(k);
    struct State<'s> {
        sets: &'s [u128],
        k: u32,
        lower: usize,
        best: usize,
        best_bins: Option<Vec<u128>>,
        nodes: usize,
        gave_up: bool,
    }
    fn search(st: &mut State, i: usize, bins: &mut Vec<u128>) {
        if st.gave_up || bins.len() >= st.best || st.best <= st.lower {
            return;
        }
        st.nodes += 1;
        if st.nodes > EXACT_BUDGET {
            st.gave_up = true;
            return;
        }
        let Some(&c) = st.sets.get(i) else {
            st.best = bins.len();
            st.best_bins = Some(bins.clone());
            return;
        };
        if bins.iter().any(|&b| b & c == c) {
            return search(st, i + 1, bins);
        }
        // Open bins it fits, the fullest result first.
        let mut fits: Vec<(u32, usize)> = bins
            .iter()
            .enumerate()
            .map(|(j, b)| ((*b | c).count_ones(), j))
            .filter(|(n, _)| *n <= st.k)
            .collect();
        fits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, j) in fits {
            let old = bins[j];
            bins[j] |= c;
            search(st, i + 1, bins);
            bins[j] = old;
        }
        bins.push(c);
        search(st, i + 1, bins);
        bins.pop();
    }
    let mut st = State {
        sets: &sets,
        k: k as u32,
        lower,
        best: greedy,
        best_bins: None,
        nodes: 0,
        gave_up: false,
    };
    search(&mut st, 0, &mut Vec::new());
    let finished = !st.gave_up || st.best <= st.lower;
    match (st.best_bins, finished) {
        (Some(bins), proved) => Search::Better(
            bins.iter()
                .map(|&b| {
                    bones
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| b & (1u128 << i) != 0)
                        .map(|(_, &x)| x)
                        .collect()
                })
                .collect(),
            proved,
        ),
        (None, true) => Search::Minimal,
        (None, false) => Search::GaveUp,
    }
}

/// The bin being filled by [`pack_combos`], and the per-combo counters it keeps up to date.
struct Filling<'a, 'b> {
    combo_bones: &'b dyn Fn(usize) -> &'a [u32],
    by_bone: &'b [Vec<u32>],
    id: u32,
    bones: Vec<u32>,
    members: Vec<u32>,
    /// Unpacked combos sharing a bone with the bin (`stamp == id`), with `missing` valid.
    touched: Vec<u32>,
    /// Combos whose bones the bin now covers.
    zero: Vec<u32>,
    packed: Vec<bool>,
    stamp: Vec<u32>,
    missing: Vec<u32>,
    in_bin: Vec<bool>,
}

impl Filling<'_, '_> {
    fn take(&mut self, c: u32) {
        self.packed[c as usize] = true;
        self.members.push(c);
        for &b in (self.combo_bones)(c as usize) {
            if self.in_bin[b as usize] {
                continue;
            }
            self.in_bin[b as usize] = true;
            self.bones.push(b);
            for &c2 in &self.by_bone[b as usize] {
                let i = c2 as usize;
                if self.packed[i] {
                    continue;
                }
                if self.stamp[i] != self.id {
                    self.stamp[i] = self.id;
                    self.missing[i] = (self.combo_bones)(i).len() as u32;
                    self.touched.push(c2);
                }
                self.missing[i] -= 1;
                if self.missing[i] == 0 {
                    self.zero.push(c2);
                }
            }
        }
    }
}

/// Greedy packing of combos into bins of at most `k` bones: `(bones ascending, combos)` per
/// bin.
fn pack_combos<'a>(
    combos: usize,
    combo_bones: &dyn Fn(usize) -> &'a [u32],
    combo_faces: &[usize],
    joints: usize,
    k: usize,
) -> Bins {
    // Combos containing each bone.
    let mut by_bone: Vec<Vec<u32>> = vec![Vec::new(); joints];
    for c in 0..combos {
        for &b in combo_bones(c) {
            by_bone[b as usize].push(c as u32);
        }
    }
    // Seeds: largest combo first, then the most faces, then first use.
    let mut order: Vec<u32> = (0..combos as u32).collect();
    order.sort_by_key(|&c| {
        let c = c as usize;
        (
            std::cmp::Reverse(combo_bones(c).len()),
            std::cmp::Reverse(combo_faces[c]),
            c,
        )
    });
    // Candidates sharing no bone with the bin: smallest first.
    let mut by_size: Vec<u32> = (0..combos as u32).collect();
    by_size.sort_by_key(|&c| (combo_bones(c as usize).len(), c));
    // Fewest new bones, then most shared, then most faces, then first use.
    let key = |c: u32, miss: u32| {
        let i = c as usize;
        (
            miss,
            std::cmp::Reverse(combo_bones(i).len()),
            std::cmp::Reverse(combo_faces[i]),
            c,
        )
    };
    let mut st = Filling {
        combo_bones,
        by_bone: &by_bone,
        id: 0,
        bones: Vec::new(),
        members: Vec::new(),
        touched: Vec::new(),
        zero: Vec::new(),
        packed: vec![false; combos],
        stamp: vec![u32::MAX; combos],
        missing: vec![0; combos],
        in_bin: vec![false; joints],
    };
    let mut bins: Bins = Vec::new();
    let mut disjoint_from = 0usize;
    for &seed in &order {
        if st.packed[seed as usize] {
            continue;
        }
        st.id = bins.len() as u32;
        st.touched.clear();
        st.zero.clear();
        st.take(seed);
        loop {
            while let Some(c) = st.zero.pop() {
                if !st.packed[c as usize] {
                    st.take(c);
                }
            }
            let room = k.saturating_sub(st.bones.len()) as u32;
            if room == 0 {
                break;
            }
            let mut best = None;
            {
                let Filling {
                    touched,
                    packed,
                    missing,
                    ..
                } = &mut st;
                touched.retain(|&c| !packed[c as usize]);
                for &c in touched.iter() {
                    let m = missing[c as usize];
                    if m <= room {
                        let kk = key(c, m);
                        if best.as_ref().is_none_or(|(bk, _)| kk < *bk) {
                            best = Some((kk, c));
                        }
                    }
                }
            }
            // The smallest combo sharing no bone, if it adds fewer bones.
            while disjoint_from < by_size.len() && st.packed[by_size[disjoint_from] as usize] {
                disjoint_from += 1;
            }
            for &c in by_size[disjoint_from..].iter().take(DISJOINT_SCAN) {
                let size = combo_bones(c as usize).len() as u32;
                if size > room || best.as_ref().is_some_and(|(bk, _)| size > bk.0) {
                    break;
                }
                if !st.packed[c as usize] && st.stamp[c as usize] != st.id {
                    let kk = key(c, size);
                    if best.as_ref().is_none_or(|(bk, _)| kk < *bk) {
                        best = Some((kk, c));
                    }
                    break;
                }
            }
            let Some((_, c)) = best else { break };
            st.take(c);
        }
        let mut bones = std::mem::take(&mut st.bones);
        for &b in &bones {
            st.in_bin[b as usize] = false;
        }
        bones.sort_unstable();
        bins.push((bones, std::mem::take(&mut st.members)));
    }
    bins
}

/// Dissolve bins whose combos all fit elsewhere, smallest bins (fewest faces) first.
fn eliminate_bins<'a>(
    mut bins: Bins,
    combo_bones: &dyn Fn(usize) -> &'a [u32],
    combo_faces: &[usize],
    k: usize,
) -> Bins {
    let faces_in =
        |b: &(Vec<u32>, Vec<u32>)| -> usize { b.1.iter().map(|&c| combo_faces[c as usize]).sum() };
    let mut order: Vec<usize> = (0..bins.len()).collect();
    order.sort_by_key(|&i| (faces_in(&bins[i]), i));
    let mut alive = vec![true; bins.len()];
    for &victim in &order {
        // Try to place every combo of the victim (largest first) into the other live bins.
        let mut trial: Vec<(usize, Vec<u32>)> = Vec::new(); // bins changed: (index, new bones)
        let mut combos = bins[victim].1.clone();
        combos.sort_by_key(|&c| (std::cmp::Reverse(combo_bones(c as usize).len()), c));
        let mut placed: Vec<(usize, u32)> = Vec::new();
        let mut ok = true;
        for &c in &combos {
            let cb = combo_bones(c as usize);
            let mut best: Option<(usize, usize)> = None; // (new bones, bin)
            for (i, bin) in bins.iter().enumerate() {
                if i == victim || !alive[i] {
                    continue;
                }
                let bones = trial
                    .iter()
                    .find(|(t, _)| *t == i)
                    .map_or(&bin.0, |(_, b)| b);
                let new = cb
                    .iter()
                    .filter(|b| bones.binary_search(b).is_err())
                    .count();
                if bones.len() + new <= k && best.is_none_or(|(bn, _)| new < bn) {
                    best = Some((new, i));
                }
            }
            let Some((_, i)) = best else {
                ok = false;
                break;
            };
            let pos = match trial.iter().position(|(t, _)| *t == i) {
                Some(p) => p,
                None => {
                    trial.push((i, bins[i].0.clone()));
                    trial.len() - 1
                }
            };
            let bones = &mut trial[pos].1;
            bones.extend_from_slice(cb);
            bones.sort_unstable();
            bones.dedup();
            placed.push((i, c));
        }
        if ok {
            for (i, bones) in trial {
                bins[i].0 = bones;
            }
            for (i, c) in placed {
                bins[i].1.push(c);
            }
            bins[victim].1.clear();
            alive[victim] = false;
        }
    }
    bins.into_iter()
        .zip(alive)
        .filter_map(|(b, a)| a.then_some(b))
        .collect()
}
