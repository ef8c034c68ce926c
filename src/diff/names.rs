//! Which node and which clip of one file is which of the other's, for `diff`.
//!
//! Method: nodes by name where the name is unique in both files, then by hierarchy (a node
//! whose parent is matched takes the parent's match's child at its own place among the
//! children, when that child is free; roots likewise). Clips by name where unique in both,
//! then by the action's name inside an exporter's clip name (Blender writes `Object|Action`
//! and names actions it imports `Action_Object`, so glTF's `Run` comes back as
//! `root|Run_root`), then those left on each side in order (converters rename clips).
//! Cost: O(nodes + clips). Limits: renamed nodes under
//! reordered children are not found; converters that insert or drop intermediate nodes
//! leave the nodes below them to names alone.

use std::collections::HashMap;

use crate::scene::Scene;

/// How a node or clip was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The same name.
    Name,
    /// The same place under matched parents.
    Hierarchy,
    /// The same action name inside an exporter's clip name (clips).
    ActionName,
    /// The same index (clips).
    Index,
}

/// The action a clip name holds: `Run` for Blender's `root|Run_root` (object `root`, action
/// `Run_root` imported as `Run` on `root`), `Walk` for `Armature|Walk`; the name otherwise.
pub fn action_name(name: &str) -> &str {
    let Some((object, action)) = name.split_once('|') else {
        return name;
    };
    action
        .strip_suffix(object)
        .and_then(|a| a.strip_suffix('_'))
        .filter(|a| !a.is_empty())
        .unwrap_or(action)
}

/// Names that occur once among `names`, with their index.
fn unique_names<'a>(names: impl Iterator<Item = Option<&'a str>>) -> HashMap<&'a str, usize> {
    let mut seen: HashMap<&str, Option<usize>> = HashMap::new();
    for (i, name) in names.enumerate() {
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            seen.entry(n)
                .and_modify(|slot| *slot = None)
                .or_insert(Some(i));
        }
    }
    seen.into_iter()
        .filter_map(|(n, i)| i.map(|i| (n, i)))
        .collect()
}

/// The children of every node, in index order, and the roots.
fn children(scene: &Scene) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut kids = vec![Vec::new(); scene.nodes.len()];
    let mut roots = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        match n.parent {
            Some(p) if p < kids.len() => kids[p].push(i),
            _ => roots.push(i),
        }
    }
    (kids, roots)
}

/// For every node of `a`, its node in `b` and how it was found.
pub fn match_nodes(a: &Scene, b: &Scene) -> Vec<Option<(usize, MatchedBy)>> {
    let names_a = unique_names(a.nodes.iter().map(|n| n.name.as_deref()));
    let names_b = unique_names(b.nodes.iter().map(|n| n.name.as_deref()));
    let mut matched: Vec<Option<(usize, MatchedBy)>> = vec![None; a.nodes.len()];
    let mut taken = vec![false; b.nodes.len()];
    for (name, &i) in &names_a {
        if let Some(&j) = names_b.get(name) {
            matched[i] = Some((j, MatchedBy::Name));
            taken[j] = true;
        }
    }
    let (kids_a, roots_a) = children(a);
    let (kids_b, roots_b) = children(b);
    // Nodes are in depth-first order, so a parent is decided before its children.
    for i in 0..a.nodes.len() {
        if matched[i].is_some() {
            continue;
        }
        let (siblings_a, siblings_b) = match a.nodes[i].parent {
            Some(p) => match matched.get(p).copied().flatten() {
                Some((pb, _)) => (&kids_a[p], &kids_b[pb]),
                None => continue,
            },
            None => (&roots_a, &roots_b),
        };
        let place = siblings_a.iter().position(|&s| s == i);
        if let Some(&j) = place.and_then(|k| siblings_b.get(k))
            && !taken[j]
        {
            matched[i] = Some((j, MatchedBy::Hierarchy));
            taken[j] = true;
        }
    }
    matched
}

/// Pair the clips of `a` and `b` left unpaired whose names are one and unique among those
/// left once `key` is applied.
fn pair_left_by_name(
    a: &Scene,
    b: &Scene,
    of_a: &mut [Option<(usize, MatchedBy)>],
    taken: &mut [bool],
    key: fn(&str) -> &str,
    by: MatchedBy,
) {
    let left_a = a
        .animations
        .iter()
        .enumerate()
        .map(|(i, c)| c.name.as_deref().filter(|_| of_a[i].is_none()).map(key));
    let names_a = unique_names(left_a);
    let left_b = b
        .animations
        .iter()
        .enumerate()
        .map(|(j, c)| c.name.as_deref().filter(|_| !taken[j]).map(key));
    let names_b = unique_names(left_b);
    for (name, &i) in &names_a {
        if let Some(&j) = names_b.get(name) {
            of_a[i] = Some((j, by));
            taken[j] = true;
        }
    }
}

/// A clip of `a` and its clip in `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClipPair {
    /// Clip index in `a`.
    pub a: usize,
    /// Clip index in `b`.
    pub b: usize,
    /// How it was found.
    pub by: MatchedBy,
}

/// The clips of `a` with their clip in `b` (in `a`'s order), and the clips of each left
/// without one.
pub fn match_clips(a: &Scene, b: &Scene) -> (Vec<ClipPair>, Vec<usize>, Vec<usize>) {
    let names_a = unique_names(a.animations.iter().map(|c| c.name.as_deref()));
    let names_b = unique_names(b.animations.iter().map(|c| c.name.as_deref()));
    let mut of_a: Vec<Option<(usize, MatchedBy)>> = vec![None; a.animations.len()];
    let mut taken = vec![false; b.animations.len()];
    for (name, &i) in &names_a {
        if let Some(&j) = names_b.get(name) {
            of_a[i] = Some((j, MatchedBy::Name));
            taken[j] = true;
        }
    }
    pair_left_by_name(
        a,
        b,
        &mut of_a,
        &mut taken,
        action_name,
        MatchedBy::ActionName,
    );
    // The clips left on each side, paired in order (converters rename clips: "Take 001",
    // "Armature|walk"); the report shows both names.
    let left_b: Vec<usize> = (0..b.animations.len()).filter(|&j| !taken[j]).collect();
    let left_a = (0..a.animations.len()).filter(|&i| of_a[i].is_none());
    for (i, j) in left_a.collect::<Vec<_>>().into_iter().zip(left_b) {
        of_a[i] = Some((j, MatchedBy::Index));
        taken[j] = true;
    }
    let pairs = of_a
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|(j, by)| ClipPair { a: i, b: j, by }))
        .collect();
    let lone_a = (0..a.animations.len())
        .filter(|&i| of_a[i].is_none())
        .collect();
    let lone_b = (0..b.animations.len()).filter(|&j| !taken[j]).collect();
    (pairs, lone_a, lone_b)
}
