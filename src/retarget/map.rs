//! The bone map: which source bone drives each target bone, made from the names, checked, and
//! kept in a small TOML file.
//!
//! Based on: Godot 4's `BoneMap` (a target skeleton's bones against a humanoid profile, with
//! its editor flagging missing and duplicated bones) and three.js's `SkeletonUtils.retarget`
//! names option (a target-to-source name table).
//!
//! Bones are the skins' joints (other nodes hold their rest pose). Method: first, bones whose names read the same once the exporters' prefixes and
//! separators are dropped (`mixamorig:LeftArm` and `LeftArm`, a rig onto itself) are paired,
//! when each name is unique in its skeleton; then every remaining bone read as a humanoid bone
//! ([`super::names::humanoid_bone`]) meets the other skeleton's bone read as the same one. The
//! bones between the hips and the neck take the spine, chest and upper chest by their order
//! (first, second, last), as each rig numbers its spine differently. The checks:
//! **unmapped** (a target joint that moves vertices, with no source: it holds its rest pose),
//! **duplicated** (a source bone driving two target bones), **parent mismatch** (the source of a
//! target bone's nearest mapped ancestor is not an ancestor of its own source).
//! Cost: O(nodes × name length) for the map, O(nodes × depth) for the checks. Limits: bones are
//! named in the file by name: an unnamed or twice-named bone cannot be written or read there.

use std::collections::BTreeMap;

use super::names::{NOISE, humanoid_bone, tokens};
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Largest bone map file read: a map names each bone of two skeletons once (a few KB for a
/// humanoid); a megabyte is far past any real one.
pub const MAX_MAP_BYTES: u64 = 1 << 20;

/// Which source node drives each target node.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneMap {
    /// Per target node: the source node driving it, if any.
    pub source_of: Vec<Option<usize>>,
}

/// What [`BoneMap::issues`] finds (target node indices).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapIssues {
    /// Target joints that move vertices and have no source (they hold their rest pose).
    pub unmapped: Vec<usize>,
    /// Source nodes driving more than one target node, with those target nodes.
    pub duplicated: Vec<(usize, Vec<usize>)>,
    /// Target nodes whose nearest mapped ancestor's source is not an ancestor of theirs.
    pub parent_mismatch: Vec<usize>,
}

impl MapIssues {
    /// Nothing found.
    pub fn is_empty(&self) -> bool {
        self.unmapped.is_empty() && self.duplicated.is_empty() && self.parent_mismatch.is_empty()
    }
}

/// A name with the exporters' prefixes, separators and case dropped (`mixamorig:LeftArm` →
/// `left_arm`).
pub fn canonical_name(name: &str) -> String {
    let tokens = tokens(name);
    let kept: Vec<&str> = tokens
        .iter()
        .map(String::as_str)
        .filter(|t| !NOISE.contains(t))
        .collect();
    kept.join("_")
}

/// Per node of `scene`, the humanoid profile bone it reads as (names, then the spine chain).
pub fn humanoid_profile(scene: &Scene) -> Vec<Option<&'static str>> {
    let joints = scene.joint_mask();
    let mut profile: Vec<Option<&'static str>> = scene
        .nodes
        .iter()
        .zip(&joints)
        .map(|(n, &j)| n.name.as_deref().filter(|_| j).and_then(humanoid_bone))
        .collect();
    // Each profile bone once: the node nearest the root keeps it.
    let depth = depths(scene);
    for i in 0..profile.len() {
        let Some(bone) = profile[i] else { continue };
        let first = (0..profile.len())
            .filter(|&j| profile[j] == Some(bone))
            .min_by_key(|&j| (depth[j], j));
        if first != Some(i) {
            profile[i] = None;
        }
    }
    spine_chain(scene, &mut profile);
    profile
}

/// The bones strictly between the hips and the neck (or the head when there is no neck) as
/// spine, chest and upper chest: the first, the second and the last.
fn spine_chain(scene: &Scene, profile: &mut [Option<&'static str>]) {
    let find = |bone: &str, p: &[Option<&str>]| p.iter().position(|b| *b == Some(bone));
    let (Some(hips), Some(top)) = (
        find("hips", profile),
        find("neck", profile).or_else(|| find("head", profile)),
    ) else {
        return;
    };
    // The path from the neck up to the hips, then in root-to-tip order.
    let mut between = Vec::new();
    let mut at = scene.nodes[top].parent;
    while let Some(n) = at {
        if n == hips {
            break;
        }
        between.push(n);
        at = scene.nodes[n].parent;
    }
    if at != Some(hips) {
        return;
    }
    between.reverse();
    let names: &[&'static str] = match between.len() {
        0 => &[],
        1 => &["spine"],
        2 => &["spine", "chest"],
        _ => &["spine", "chest", "upperChest"],
    };
    let count = between.len();
    for (k, &node) in between.iter().enumerate() {
        let slot = match (k, count) {
            (0, _) => Some(0),
            (1, _) => Some(1),
            (k, n) if k == n - 1 => Some(2),
            _ => None,
        };
        if let Some(name) = slot.and_then(|s| names.get(s)) {
            profile[node] = Some(name);
        }
    }
}

fn depths(scene: &Scene) -> Vec<usize> {
    let mut d = vec![0usize; scene.nodes.len()];
    for (i, n) in scene.nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            d[i] = d[p] + 1;
        }
    }
    d
}

/// Joint names that occur once in `scene`, canonical, with their node.
fn unique_names(scene: &Scene) -> BTreeMap<String, usize> {
    let mut seen: BTreeMap<String, Option<usize>> = BTreeMap::new();
    let joints = scene.joint_mask();
    for (i, n) in scene.nodes.iter().enumerate() {
        let Some(name) = n.name.as_deref().filter(|_| joints[i]) else {
            continue;
        };
        let key = canonical_name(name);
        if key.is_empty() {
            continue;
        }
        seen.entry(key).and_modify(|v| *v = None).or_insert(Some(i));
    }
    seen.into_iter()
        .filter_map(|(k, v)| v.map(|i| (k, i)))
        .collect()
}

impl BoneMap {
    /// The map made from the names (see the module documentation).
    pub fn auto(source: &Scene, target: &Scene) -> BoneMap {
        let mut source_of = vec![None; target.nodes.len()];
        let mut used = vec![false; source.nodes.len()];
        let source_names = unique_names(source);
        for (name, &t) in &unique_names(target) {
            if let Some(&s) = source_names.get(name) {
                source_of[t] = Some(s);
                used[s] = true;
            }
        }
        let (sp, tp) = (humanoid_profile(source), humanoid_profile(target));
        for t in 0..target.nodes.len() {
            let Some(bone) = tp[t].filter(|_| source_of[t].is_none()) else {
                continue;
            };
            if let Some(s) = sp
                .iter()
                .position(|b| *b == Some(bone))
                .filter(|&s| !used[s])
            {
                source_of[t] = Some(s);
                used[s] = true;
            }
        }
        BoneMap { source_of }
    }

    /// Every joint driven by itself (a scene onto itself).
    pub fn identity(scene: &Scene) -> BoneMap {
        let joints = scene.joint_mask();
        BoneMap {
            source_of: (0..scene.nodes.len())
                .map(|i| joints[i].then_some(i))
                .collect(),
        }
    }

    /// Mapped (target, source) pairs, in target order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.source_of
            .iter()
            .enumerate()
            .filter_map(|(t, s)| s.map(|s| (t, s)))
    }

    /// The checks listed in the module documentation.
    pub fn issues(&self, source: &Scene, target: &Scene) -> MapIssues {
        let weighted = weighted_joints(target);
        let unmapped = (0..target.nodes.len())
            .filter(|&t| weighted[t] && self.source_of.get(t).copied().flatten().is_none())
            .collect();
        let mut by_source: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (t, s) in self.pairs() {
            by_source.entry(s).or_default().push(t);
        }
        let duplicated = by_source.into_iter().filter(|(_, t)| t.len() > 1).collect();
        let parent_mismatch = self
            .pairs()
            .filter(|&(t, s)| {
                let mut at = target.nodes[t].parent;
                while let Some(p) = at {
                    if let Some(ps) = self.source_of[p] {
                        return !is_ancestor(source, ps, s);
                    }
                    at = target.nodes[p].parent;
                }
                false
            })
            .map(|(t, _)| t)
            .collect();
        MapIssues {
            unmapped,
            duplicated,
            parent_mismatch,
        }
    }

    /// The map as a TOML file: each named target bone and the named source bone driving it.
    pub fn to_toml(&self, source: &Scene, target: &Scene) -> String {
        let mut out = String::from(
            "# skinview bone map: each target bone = the source bone that drives it.\n\
             # Target bones not listed hold their rest pose.\n",
        );
        out.push_str(&format!(
            "source = {}\ntarget = {}\n\n[bones]\n",
            quote(&source.name),
            quote(&target.name)
        ));
        for (t, s) in self.pairs() {
            if let (Some(tn), Some(sn)) = (&target.nodes[t].name, &source.nodes[s].name) {
                out.push_str(&format!("{} = {}\n", quote(tn), quote(sn)));
            }
        }
        out
    }

    /// [`BoneMap::from_toml`] of a file's bytes: at most [`MAX_MAP_BYTES`], UTF-8.
    pub fn from_toml_bytes(
        bytes: &[u8],
        file: &str,
        source: &Scene,
        target: &Scene,
    ) -> Result<BoneMap> {
        if bytes.len() as u64 > MAX_MAP_BYTES {
            return Err(Error::invalid(
                file,
                "file size",
                format!(
                    "{} bytes; a bone map is at most {MAX_MAP_BYTES}",
                    bytes.len()
                ),
            ));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::invalid(file, "(file)", "not UTF-8 text"))?;
        BoneMap::from_toml(text, file, source, target)
    }

    /// A map read from a TOML file `file` ([`BoneMap::to_toml`]'s layout), every name checked
    /// against the two skeletons.
    pub fn from_toml(text: &str, file: &str, source: &Scene, target: &Scene) -> Result<BoneMap> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct MapFile {
            #[allow(dead_code)] // informational: which files the map was made for
            source: Option<String>,
            #[allow(dead_code)]
            target: Option<String>,
            bones: BTreeMap<String, String>,
        }
        let parsed: MapFile = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let mut source_of = vec![None; target.nodes.len()];
        for (t_name, s_name) in &parsed.bones {
            let field = format!("bones.{}", quote(t_name));
            let t = named(target, t_name).map_err(|e| Error::invalid(file, &field, e))?;
            if target.nodes[t].matrix.is_some() {
                return Err(Error::invalid(
                    file,
                    &field,
                    format!(
                        "{} is given as a matrix in {}: glTF animates no such node",
                        quote(t_name),
                        target.name
                    ),
                ));
            }
            let s = named(source, s_name).map_err(|e| Error::invalid(file, &field, e))?;
            source_of[t] = Some(s);
        }
        Ok(BoneMap { source_of })
    }
}

/// The one node of `scene` named `name`.
fn named(scene: &Scene, name: &str) -> std::result::Result<usize, String> {
    let mut found = scene
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.name.as_deref() == Some(name));
    match (found.next(), found.next()) {
        (Some((i, _)), None) => Ok(i),
        (Some(_), Some(_)) => Err(format!(
            "{} has two or more nodes named {}: a map cannot tell them apart",
            scene.name,
            quote(name)
        )),
        (None, _) => Err(format!("{} has no node named {}", scene.name, quote(name))),
    }
}

/// Whether `a` is `b` or an ancestor of it.
fn is_ancestor(scene: &Scene, a: usize, b: usize) -> bool {
    let mut at = Some(b);
    while let Some(n) = at {
        if n == a {
            return true;
        }
        at = scene.nodes[n].parent;
    }
    false
}

/// Per node of `scene`: a joint of a skin with a non-zero weight on some vertex.
pub fn weighted_joints(scene: &Scene) -> Vec<bool> {
    let mut out = vec![false; scene.nodes.len()];
    for d in &scene.draws {
        let (Some(skin), Some(w)) = (d.skin, &scene.primitive(d).skin_weights) else {
            continue;
        };
        let joints = &scene.skins[skin].joints;
        for (&j, &x) in w.joints.iter().zip(&w.weights) {
            if x != 0.0
                && let Some(&node) = joints.get(j as usize)
                && let Some(slot) = out.get_mut(node)
            {
                *slot = true;
            }
        }
    }
    out
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => q.push_str(&format!("\\u{:04X}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
