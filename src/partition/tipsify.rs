//! Triangle order for a FIFO post-transform vertex cache (Tipsify).
//!
//! Based on: Sander, Nehab and Barczak, "Fast Triangle Reordering for Vertex Locality and
//! Reduced Overdraw" (SIGGRAPH 2007), as meshoptimizer implements it (Arseny Kapoulkine,
//! `meshopt_optimizeVertexCacheFifo`, vcacheoptimizer.cpp): ported to Rust so the partitioner
//! builds without C++ on every target (the web among them); tests/core/partition.rs checks
//! that it orders every mesh exactly as meshoptimizer does.
//!
//! Method: fan out from a vertex: emit every triangle round it not yet emitted, pushing their
//! vertices on a dead-end stack; the next vertex is the one among those just pushed that
//! still has triangles and will still be in the cache after its fan (`2 × live triangles +
//! its age ≤ cache size`), the oldest such first; without one, the most recent vertex on the
//! dead-end stack with triangles left, else the next in input order.
//!
//! Cost: O(I) time and memory for I indices (each triangle emitted once, each vertex's
//! candidates scanned once per fan). Limits: a heuristic for one cache size; the caller keeps
//! whichever of this and the input order misses less ([`super::split`]).

/// What [`tipsify`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TipsifyStats {
    /// Fans emitted (vertices the order turned round).
    pub fans: usize,
    /// Restarts from the dead-end stack or the input order (no cached candidate left).
    pub dead_ends: usize,
}

/// `indices` (triangles, all below `vertex_count`) reordered for a FIFO cache of
/// `cache_size` (at least 3) vertices, and what it did; `None` for an index at or past
/// `vertex_count` or a count that is not whole triangles.
pub fn tipsify(
    indices: &[u32],
    vertex_count: usize,
    cache_size: u32,
) -> Option<(Vec<u32>, TipsifyStats)> {
    if !indices.len().is_multiple_of(3) || indices.iter().any(|&i| i as usize >= vertex_count) {
        return None;
    }
    let mut stats = TipsifyStats::default();
    if indices.is_empty() {
        return Some((Vec::new(), stats));
    }
    let cache_size = cache_size.max(3);
    let faces = indices.len() / 3;
    // Triangles round each vertex (counts, offsets, triangle indices).
    let mut counts = vec![0u32; vertex_count];
    for &i in indices {
        counts[i as usize] += 1;
    }
    let mut offsets = vec![0u32; vertex_count + 1];
    for v in 0..vertex_count {
        offsets[v + 1] = offsets[v] + counts[v];
    }
    let mut fill = offsets.clone();
    let mut around = vec![0u32; indices.len()];
    for (t, tri) in indices.chunks_exact(3).enumerate() {
        for &v in tri {
            around[fill[v as usize] as usize] = t as u32;
            fill[v as usize] += 1;
        }
    }
    let mut live = counts;
    let mut stamps = vec![0u32; vertex_count];
    let mut dead_end: Vec<u32> = Vec::with_capacity(indices.len());
    let mut emitted = vec![false; faces];
    let mut out = Vec::with_capacity(indices.len());
    // Timestamps and ages wrap as meshoptimizer's unsigned arithmetic does.
    let mut timestamp = cache_size + 1;
    let mut input_cursor = 1usize;
    let mut current = Some(0usize);
    while let Some(v) = current {
        stats.fans += 1;
        let candidates_from = dead_end.len();
        for &t in &around[offsets[v] as usize..offsets[v + 1] as usize] {
            if emitted[t as usize] {
                continue;
            }
            emitted[t as usize] = true;
            let tri = &indices[t as usize * 3..t as usize * 3 + 3];
            out.extend_from_slice(tri);
            dead_end.extend_from_slice(tri);
            for &x in tri {
                let x = x as usize;
                live[x] -= 1;
                if timestamp.wrapping_sub(stamps[x]) > cache_size {
                    stamps[x] = timestamp;
                    timestamp = timestamp.wrapping_add(1);
                }
            }
        }
        current = next_neighbour(
            &dead_end[candidates_from..],
            &live,
            &stamps,
            timestamp,
            cache_size,
        );
        if current.is_none() {
            current = next_dead_end(&mut dead_end, &mut input_cursor, &live);
            stats.dead_ends += usize::from(current.is_some());
        }
    }
    Some((out, stats))
}

/// The candidate with triangles left that stays cached through its fan, the oldest in the
/// cache first (the first such on ties); else any candidate with triangles left.
fn next_neighbour(
    candidates: &[u32],
    live: &[u32],
    stamps: &[u32],
    timestamp: u32,
    cache_size: u32,
) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for &c in candidates {
        let c = c as usize;
        if live[c] == 0 {
            continue;
        }
        let age = timestamp.wrapping_sub(stamps[c]);
        let fits = live[c].wrapping_mul(2).wrapping_add(age) <= cache_size;
        let priority = if fits { i64::from(age) } else { 0 };
        if best.is_none_or(|(_, p)| priority > p) {
            best = Some((c, priority));
        }
    }
    best.map(|(c, _)| c)
}

/// The most recent vertex on the dead-end stack with triangles left, else the next one in
/// input order from `input_cursor`; `None` when every triangle is out.
fn next_dead_end(dead_end: &mut Vec<u32>, input_cursor: &mut usize, live: &[u32]) -> Option<usize> {
    while let Some(v) = dead_end.pop() {
        if live[v as usize] > 0 {
            return Some(v as usize);
        }
    }
    while *input_cursor < live.len() {
        if live[*input_cursor] > 0 {
            return Some(*input_cursor);
        }
        *input_cursor += 1;
    }
    None
}
