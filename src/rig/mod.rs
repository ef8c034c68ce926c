//! Native rigs in Weber's convention (Weber, "Run-Time Skin Deformation", §Reference Bones to
//! §Motion Data) and their text format.
//!
//! A bone lies along its local +X axis with a `length_m`; its transform is stored relative to
//! the **tip** of its parent: `displacement_m` (zero in the common attached case) and a
//! quaternion `rotation`. Each bone also carries ZYX Euler joint limits relative to its
//! reference rotation, base/tip cross-section ellipses (for weight tools) and its bone-link
//! settings. Motions are named tracks per bone with their own irregular key times for
//! displacement (linear), rotation (shortest-path slerp) and scale (linear). Muscle bones
//! (Woodland's biceps) take weights on top of a vertex's ordinary weights, which sum to 1.
//!
//! The file is JSON (`*.rig.json`, read and written by `crate::io::rig_json`), versioned by
//! `"format": "skinview.rig", "version": 1`.
//! [`WeberRig::to_scene`] converts it to the internal skeleton: node local translation =
//! `(parent_length, 0, 0) + displacement`, rotation as given, scale 1; tracks become LINEAR
//! channels with the same keys; the mesh becomes one skinned primitive. [`WeberRig::from_scene`]
//! inverts it (bone metadata is kept per node in [`BoneMeta`]), so native → internal → native is
//! lossless up to f32 rounding of `parent_length + displacement` (exact when displacements are
//! zero, as in attached chains).

use glam::{Mat4, Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::anim::{Animation, Channel, Interpolation, Path as AnimPath, Sampler};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};

/// Value of a rig file's `format` field.
pub const FORMAT: &str = "skinview.rig";
/// The rig file version this build reads and writes.
pub const VERSION: u32 = 1;

/// Cross-section ellipse of the mesh around a bone end (Weber, "Run-Time Skin Deformation",
/// §Reference Bones), in the bone's YZ plane.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Semi-axes along the bone's local Y and Z.
    pub radii_m: [f32; 2],
    /// Centre offset in the bone's local Y and Z.
    #[serde(default)]
    pub offset_m: [f32; 2],
}

/// ZYX Euler limits relative to the reference rotation, in degrees, `[z, y, x]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitsDeg {
    /// Lower bounds `[z, y, x]`, degrees.
    pub min: [f32; 3],
    /// Upper bounds `[z, y, x]`, degrees.
    pub max: [f32; 3],
}

/// Bone links inserted at this bone's base joint (Weber, "Run-Time Skin Deformation", §Bone Links).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSettings {
    /// Number of links (1..=64).
    pub count: usize,
    /// Total link length; `None` = 0.3 × this bone's length + 1.5 × joint radius.
    #[serde(default)]
    pub length_m: Option<f32>,
    /// Normal-derived fade strength in `[0, 1]` (Weber, "Run-Time Skin Deformation", §Bone Links,
    /// armpits): the fraction `normal_fade · |x̂ · n̂|` of the weight bound for the links returns
    /// to the parent, `x̂` this bone's axis and `n̂` the vertex normal; 0 turns it off. `None` (or
    /// absent in the JSON) = [`crate::links::LinkSpec::DEFAULT_NORMAL_FADE`]; `None` is not
    /// written, so rigs without it read and write as before. Checked when the links are inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normal_fade: Option<f32>,
}

/// One bone of a native rig, lying along its local +X axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bone {
    /// Unique bone name (tracks refer to bones by name).
    pub name: String,
    /// Index of the parent bone (earlier in the list), or null for a root.
    pub parent: Option<usize>,
    /// Length along the bone's local +X (finite, ≥ 0).
    pub length_m: f32,
    /// Base position relative to the parent's tip, in the parent's frame.
    #[serde(default)]
    pub displacement_m: [f32; 3],
    /// Rotation relative to the parent, xyzw.
    #[serde(default = "identity_quat")]
    pub rotation: [f32; 4],
    /// Joint limits relative to the reference rotation, if any.
    #[serde(default)]
    pub limits_deg: Option<LimitsDeg>,
    /// Cross-section at the bone's base, if known.
    #[serde(default)]
    pub base_section: Option<Section>,
    /// Cross-section at the bone's tip, if known.
    #[serde(default)]
    pub tip_section: Option<Section>,
    /// Bone links at the joint with the parent, if any (not allowed on a root).
    #[serde(default)]
    pub links: Option<LinkSettings>,
    /// A muscle bone (Woodland, "Filling the Gaps", Advanced Topics): its vertex weights are
    /// extra, on top of the ordinary weights that sum to 1, and move a vertex by how far the
    /// muscle departs from following its parent (scale it to bulge the skin): see
    /// [`WeberRig::to_scene`]. Needs a parent that is not a muscle; no bone links. Absent
    /// (false) is not written, so rigs without muscles read and write as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub muscle: bool,
}

fn identity_quat() -> [f32; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

/// One key of a track.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Key<const N: usize> {
    /// Key time in seconds.
    pub time_s: f32,
    /// Displacement `[x, y, z]` in metres (`Key<3>`) or rotation quaternion `[x, y, z, w]`
    /// (`Key<4>`).
    #[serde(with = "serde_arrays")]
    pub value: [f32; N],
}

mod serde_arrays {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    pub fn serialize<S: Serializer, const N: usize>(v: &[f32; N], s: S) -> Result<S::Ok, S::Error> {
        v.as_slice().serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[f32; N], D::Error> {
        let v: Vec<f32> = Vec::deserialize(d)?;
        v.try_into().map_err(|v: Vec<f32>| {
            serde::de::Error::custom(format!("expected {N} numbers, got {}", v.len()))
        })
    }
}

/// Keys of one bone (Weber, "Run-Time Skin Deformation", §Motion Data): each list has its own
/// irregular times; keys that interpolate exactly may be omitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Track {
    /// Name of the bone the keys drive.
    pub bone: String,
    /// Displacement keys (relative to the parent's tip, like `Bone::displacement_m`),
    /// interpolated linearly.
    #[serde(default)]
    pub displacement_keys: Vec<Key<3>>,
    /// Rotation keys (relative to the parent, like `Bone::rotation`), interpolated by
    /// shortest-path slerp.
    #[serde(default)]
    pub rotation_keys: Vec<Key<4>>,
    /// Scale keys `[x, y, z]` along the bone's own axes (1 = rest), interpolated linearly: a
    /// muscle bone's flex. Absent (empty) is not written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scale_keys: Vec<Key<3>>,
}

/// A named motion of a native rig: one track per animated bone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Motion {
    /// Motion name.
    pub name: String,
    /// Whether the motion loops (kept in `RigScene::looping`).
    #[serde(default)]
    pub looping: bool,
    /// Keys per bone.
    pub tracks: Vec<Track>,
}

/// Skin of a native rig: triangles with per-vertex (bone, weight) lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RigMesh {
    /// Vertex positions at the rest pose, in model space (metres).
    pub positions: Vec<[f32; 3]>,
    /// Vertex normals, one per position.
    pub normals: Vec<[f32; 3]>,
    /// Triangles as triples of vertex indices.
    pub triangles: Vec<[u32; 3]>,
    /// Per vertex: (bone index, weight) pairs; the weights of ordinary bones sum to 1, those
    /// of muscle bones ([`Bone::muscle`]) come on top, each in `[0, 1]`.
    pub weights: Vec<Vec<(u32, f32)>>,
    /// Base colour, linear RGBA (light grey when absent).
    #[serde(default = "default_color")]
    pub color: [f32; 4],
}

fn default_color() -> [f32; 4] {
    [0.8, 0.8, 0.8, 1.0]
}

/// A native rig as stored in a `*.rig.json` file: bones, an optional skinned mesh and motions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeberRig {
    /// Must be [`FORMAT`].
    pub format: String,
    /// Must be [`VERSION`].
    pub version: u32,
    /// Rig name (also the scene's name).
    pub name: String,
    /// Bones, parents before children.
    pub bones: Vec<Bone>,
    /// The skinned mesh, if any.
    #[serde(default)]
    pub mesh: Option<RigMesh>,
    /// Motions (become the scene's animations, in order).
    #[serde(default)]
    pub motions: Vec<Motion>,
}

/// Weber metadata kept per scene node so the conversion can be inverted and later stages
/// (IK limits, bone links, weight tools) find it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneMeta {
    /// The bone's length along its local +X (0 for non-bone nodes).
    pub length_m: f32,
    /// The bone's joint limits, degrees.
    pub limits_deg: Option<LimitsDeg>,
    /// The bone's base cross-section.
    pub base_section: Option<Section>,
    /// The bone's tip cross-section.
    pub tip_section: Option<Section>,
    /// The bone's link settings.
    pub links: Option<LinkSettings>,
    /// Whether the bone is a muscle ([`Bone::muscle`]).
    pub muscle: bool,
}

impl BoneMeta {
    /// Mean base cross-section radius (the "joint radius" of Weber, "Run-Time Skin Deformation",
    /// §Bone Links), 0 when unknown.
    pub fn joint_radius_m(&self) -> f32 {
        self.base_section
            .map_or(0.0, |s| 0.5 * (s.radii_m[0] + s.radii_m[1]))
    }
}

/// A native rig as the internal scene plus its per-node bone metadata (`bones[node]`; the mesh
/// node has a default entry).
#[derive(Clone, Debug)]
pub struct RigScene {
    /// The internal scene: one node per bone, plus a mesh node when the rig has a mesh.
    pub scene: Scene,
    /// Per scene node (index into `scene.nodes`): its bone metadata.
    pub bones: Vec<BoneMeta>,
    /// Scene node of each rig bone (rig bone order).
    pub node_of_bone: Vec<usize>,
    /// Per animation (= per motion): whether it loops.
    pub looping: Vec<bool>,
}

impl WeberRig {
    /// A rig with the current format and version, `bones` and no mesh or motions.
    pub fn new(name: impl Into<String>, bones: Vec<Bone>) -> WeberRig {
        WeberRig {
            format: FORMAT.into(),
            version: VERSION,
            name: name.into(),
            bones,
            mesh: None,
            motions: Vec::new(),
        }
    }

    /// Check the rig: format/version, parents before children, finite numbers, unit-ish
    /// rotations, limits ordered, mesh indices and weights, tracks naming existing bones with
    /// increasing key times.
    // `!(a <= b)` forms below are deliberate: they also reject NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self, file: &str) -> Result<()> {
        if self.format != FORMAT {
            return Err(Error::invalid(
                file,
                "format",
                format!("expected \"{FORMAT}\", found {:?}", self.format),
            ));
        }
        if self.version != VERSION {
            return Err(Error::invalid(
                file,
                "version",
                format!(
                    "version {} is not supported (this build reads {VERSION})",
                    self.version
                ),
            ));
        }
        if self.bones.is_empty() {
            return Err(Error::invalid(file, "bones", "no bones"));
        }
        // Names seen so far: duplicate and track checks in O(1) each (rigs of 10⁵ bones).
        let mut names: std::collections::HashSet<&str> =
            std::collections::HashSet::with_capacity(self.bones.len());
        for (i, b) in self.bones.iter().enumerate() {
            let f = |s: &str| format!("bones[{i}] ({}).{s}", b.name);
            if let Some(p) = b.parent
                && p >= i
            {
                return Err(Error::invalid(
                    file,
                    f("parent"),
                    format!("parent {p} must come before the bone (index {i})"),
                ));
            }
            if !(b.length_m.is_finite() && b.length_m >= 0.0) {
                return Err(Error::invalid(
                    file,
                    f("length_m"),
                    format!("{} is not a finite non-negative length", b.length_m),
                ));
            }
            if b.displacement_m
                .iter()
                .chain(&b.rotation)
                .any(|v| !v.is_finite())
            {
                return Err(Error::invalid(
                    file,
                    f("displacement_m/rotation"),
                    "NaN or infinite value",
                ));
            }
            let len = Quat::from_array(b.rotation).length();
            if (len - 1.0).abs() > 1e-3 {
                return Err(Error::invalid(
                    file,
                    f("rotation"),
                    format!("quaternion length {len} is not 1"),
                ));
            }
            if !names.insert(b.name.as_str()) {
                return Err(Error::invalid(
                    file,
                    f("name"),
                    "duplicate bone name (tracks refer to bones by name)",
                ));
            }
            for (which, sec) in [
                ("base_section", &b.base_section),
                ("tip_section", &b.tip_section),
            ] {
                if let Some(sec) = sec
                    && (!sec.radii_m.iter().all(|r| r.is_finite() && *r > 0.0)
                        || !sec.offset_m.iter().all(|o| o.is_finite()))
                {
                    return Err(Error::invalid(
                        file,
                        f(which),
                        "radii must be finite and positive, offsets finite",
                    ));
                }
            }
            if let Some(l) = &b.links {
                if !(1..=64).contains(&l.count) {
                    return Err(Error::invalid(
                        file,
                        f("links.count"),
                        format!(
                            "{} links; 1..=64 allowed (two or three are enough)",
                            l.count
                        ),
                    ));
                }
                if l.length_m.is_some_and(|x| !(x.is_finite() && x > 0.0)) {
                    return Err(Error::invalid(
                        file,
                        f("links.length_m"),
                        "must be finite and positive (or null for the default)",
                    ));
                }
                if b.parent.is_none() {
                    return Err(Error::invalid(
                        file,
                        f("links"),
                        "links sit at the joint with the parent; a root bone has none",
                    ));
                }
            }
            if b.muscle {
                match b.parent {
                    None => {
                        return Err(Error::invalid(
                            file,
                            f("muscle"),
                            "a muscle bone needs a parent (its weights move the skin by how far \
                             it departs from following the parent)",
                        ));
                    }
                    Some(p) if self.bones[p].muscle => {
                        return Err(Error::invalid(
                            file,
                            f("muscle"),
                            format!("the parent {:?} is a muscle too", self.bones[p].name),
                        ));
                    }
                    Some(_) => {}
                }
                if b.links.is_some() {
                    return Err(Error::invalid(
                        file,
                        f("links"),
                        "a muscle bone has no bone links",
                    ));
                }
            }
            if let Some(l) = &b.limits_deg
                && (0..3).any(|k| {
                    !(l.min[k] <= l.max[k]) || !l.min[k].is_finite() || !l.max[k].is_finite()
                })
            {
                return Err(Error::invalid(
                    file,
                    f("limits_deg"),
                    "each min must be <= max and finite",
                ));
            }
        }
        if let Some(m) = &self.mesh {
            let n = m.positions.len();
            if m.normals.len() != n || m.weights.len() != n {
                return Err(Error::invalid(
                    file,
                    "mesh",
                    format!(
                        "{n} positions, {} normals, {} weight lists",
                        m.normals.len(),
                        m.weights.len()
                    ),
                ));
            }
            if let Some((t, _)) = m
                .triangles
                .iter()
                .enumerate()
                .find(|(_, t)| t.iter().any(|&i| i as usize >= n))
            {
                return Err(Error::invalid(
                    file,
                    format!("mesh.triangles[{t}]"),
                    format!("index >= vertex count {n}"),
                ));
            }
            for (v, ws) in m.weights.iter().enumerate() {
                if let Some(&(b, w)) = ws
                    .iter()
                    .find(|p| p.0 as usize >= self.bones.len() || !(p.1 >= 0.0))
                {
                    return Err(Error::invalid(
                        file,
                        format!("mesh.weights[{v}]"),
                        format!("bone {b} weight {w}: bone out of range or weight negative/NaN"),
                    ));
                }
                let muscle = |b: u32| self.bones[b as usize].muscle;
                if let Some(&(b, w)) = ws.iter().find(|p| muscle(p.0) && p.1 > 1.0) {
                    return Err(Error::invalid(
                        file,
                        format!("mesh.weights[{v}]"),
                        format!(
                            "muscle bone {:?} has weight {w}; a muscle's weight is at most 1",
                            self.bones[b as usize].name
                        ),
                    ));
                }
                let sum: f32 = ws.iter().filter(|p| !muscle(p.0)).map(|p| p.1).sum();
                if (sum - 1.0).abs() > 1e-3 {
                    let muscles = if ws.iter().any(|p| muscle(p.0)) {
                        " (muscle bones not counted)"
                    } else {
                        ""
                    };
                    return Err(Error::invalid(
                        file,
                        format!("mesh.weights[{v}]"),
                        format!("weights sum to {sum}{muscles}, not 1"),
                    ));
                }
            }
        }
        for (mi, m) in self.motions.iter().enumerate() {
            // One track per bone and motion: two would drive the same properties twice (as
            // two glTF channels on one target, which the format forbids).
            let mut tracked: std::collections::HashMap<&str, usize> =
                std::collections::HashMap::with_capacity(m.tracks.len());
            for (ti, t) in m.tracks.iter().enumerate() {
                let f = format!("motions[{mi}] ({}).tracks[{ti}]", m.name);
                if !names.contains(t.bone.as_str()) {
                    return Err(Error::invalid(
                        file,
                        format!("{f}.bone"),
                        format!("no bone named {:?}", t.bone),
                    ));
                }
                if let Some(first) = tracked.insert(t.bone.as_str(), ti) {
                    return Err(Error::invalid(
                        file,
                        format!("{f}.bone"),
                        format!(
                            "bone {:?} already has a track in this motion (tracks[{first}]); \
                             give each bone one track with all its keys",
                            t.bone
                        ),
                    ));
                }
                let times_ok = |ts: &mut dyn Iterator<Item = f32>| {
                    let v: Vec<f32> = ts.collect();
                    v.iter().all(|t| t.is_finite()) && v.windows(2).all(|w| w[1] > w[0])
                };
                if !times_ok(&mut t.displacement_keys.iter().map(|k| k.time_s))
                    || !times_ok(&mut t.rotation_keys.iter().map(|k| k.time_s))
                    || !times_ok(&mut t.scale_keys.iter().map(|k| k.time_s))
                {
                    return Err(Error::invalid(
                        file,
                        f,
                        "key times must be finite and strictly increasing",
                    ));
                }
                if t.displacement_keys
                    .iter()
                    .flat_map(|k| k.value)
                    .chain(t.rotation_keys.iter().flat_map(|k| k.value))
                    .chain(t.scale_keys.iter().flat_map(|k| k.value))
                    .any(|v| !v.is_finite())
                {
                    return Err(Error::invalid(
                        file,
                        format!("motions[{mi}].tracks[{ti}]"),
                        "NaN or infinite key value",
                    ));
                }
                if let Some(k) = t
                    .rotation_keys
                    .iter()
                    .position(|k| Quat::from_array(k.value).length() < 1e-6)
                {
                    return Err(Error::invalid(
                        file,
                        format!("motions[{mi}].tracks[{ti}].rotation_keys[{k}]"),
                        "zero-length quaternion",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Bone index by name, for every bone at once.
    fn bone_indices(&self) -> std::collections::HashMap<&str, usize> {
        self.bones
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.as_str(), i))
            .collect()
    }

    /// Parent-relative translation of bone `i`'s base: `(parent_length, 0, 0) + displacement`.
    pub fn local_translation(&self, i: usize, displacement: [f32; 3]) -> Vec3 {
        let parent_len = self.bones[i].parent.map_or(0.0, |p| self.bones[p].length_m);
        Vec3::new(
            parent_len + displacement[0],
            displacement[1],
            displacement[2],
        )
    }

    /// One vertex's weights as the skinning paths use them: a muscle bone `m` of weight `w` becomes
    /// `+w` on `m` and `−w` on its parent `p`, so the vertex moves by `w · (model_from_bind[m] −
    /// model_from_bind[p]) · v` on top of its ordinary blend: zero at rest and whenever the muscle
    /// only follows its parent (its local transform at rest), `w` times the muscle's own
    /// deformation (a scale about its joint: a bulge) otherwise. Linear blending applies the
    /// weights as given; dual quaternions see the same pair as an equal and opposite rigid part
    /// plus the muscle's scale, so they bulge alike; stitching follows the vertex's largest weight.
    /// Entries that cancel to exactly 0 are dropped. Order: the list's order, the parents of
    /// muscles merged where they already appear, otherwise appended.
    fn expand_muscles(&self, ws: &[(u32, f32)]) -> Vec<(u32, f32)> {
        let mut out: Vec<(u32, f32)> = ws.to_vec();
        for &(b, w) in ws {
            let bone = &self.bones[b as usize];
            if let (true, Some(p)) = (bone.muscle, bone.parent) {
                match out.iter_mut().find(|e| e.0 == p as u32) {
                    Some(e) => e.1 -= w,
                    None => out.push((p as u32, -w)),
                }
            }
        }
        out.retain(|e| e.1 != 0.0);
        out
    }

    /// Inverse of [`Self::expand_muscles`] (up to f32 rounding of the parents' weights).
    fn collapse_muscles(&self, mut ws: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
        let muscles: Vec<(u32, f32)> = ws
            .iter()
            .copied()
            .filter(|e| self.bones.get(e.0 as usize).is_some_and(|b| b.muscle))
            .collect();
        for (m, w) in muscles {
            if let Some(p) = self.bones[m as usize].parent {
                match ws.iter_mut().find(|e| e.0 == p as u32) {
                    Some(e) => e.1 += w,
                    None => ws.push((p as u32, w)),
                }
            }
        }
        ws.retain(|e| e.1 != 0.0);
        ws
    }

    /// Convert to the internal scene (see the module documentation).
    pub fn to_scene(&self) -> Result<RigScene> {
        self.validate(&self.name)?;
        let nb = self.bones.len();
        let mut nodes = Vec::with_capacity(nb + 1);
        let mut metas = Vec::with_capacity(nb + 1);
        for (i, b) in self.bones.iter().enumerate() {
            let q = Quat::from_array(b.rotation).normalize();
            nodes.push(Node {
                name: Some(b.name.clone()),
                source_index: i,
                parent: b.parent,
                rest: Trs {
                    translation: self.local_translation(i, b.displacement_m),
                    rotation: q,
                    scale: Vec3::ONE,
                },
                matrix: None,
                mesh: None,
                skin: None,
                morph_weights: None,
            });
            metas.push(BoneMeta {
                length_m: b.length_m,
                limits_deg: b.limits_deg,
                base_section: b.base_section,
                tip_section: b.tip_section,
                links: b.links,
                muscle: b.muscle,
            });
        }
        let mut raw = RawScene {
            name: self.name.clone(),
            ..Default::default()
        };
        if let Some(m) = &self.mesh {
            // Rest model matrices of the bones give the inverse bind matrices.
            let mut model = Vec::<Mat4>::with_capacity(nb);
            for n in nodes.iter() {
                let local = n.rest.to_mat4();
                model.push(match n.parent {
                    Some(p) => model[p] * local,
                    None => local,
                });
            }
            let lists: Vec<Vec<(u32, f32)>> =
                m.weights.iter().map(|ws| self.expand_muscles(ws)).collect();
            let max_inf = lists.iter().map(|w| w.len()).max().unwrap_or(1).max(1);
            let width = max_inf.div_ceil(4) * 4;
            let mut sw = SkinWeights {
                width,
                joints: vec![0; m.positions.len() * width],
                weights: vec![0.0; m.positions.len() * width],
            };
            for (v, ws) in lists.iter().enumerate() {
                for (k, &(b, w)) in ws.iter().enumerate() {
                    sw.joints[v * width + k] = b;
                    sw.weights[v * width + k] = w;
                }
            }
            raw.meshes.push(Mesh {
                name: Some(format!("{}_skin", self.name)),
                primitives: vec![Primitive {
                    positions: m.positions.iter().map(|p| Vec3::from(*p)).collect(),
                    normals: Some(m.normals.iter().map(|p| Vec3::from(*p)).collect()),
                    tangents: None,
                    indices: m.triangles.iter().flatten().copied().collect(),
                    topology: Topology::Triangles,
                    skin_weights: Some(sw),
                    morph_targets: Vec::new(),
                    base_color: m.color,
                    base_color_texture: None,
                    uvs: None,
                    colors: None,
                }],
                default_morph_weights: Vec::new(),
            });
            raw.skins.push(Skin {
                name: Some(self.name.clone()),
                joints: (0..nb).collect(),
                joint_from_bind: model.iter().map(|m| m.inverse()).collect(),
            });
            nodes.push(Node {
                name: Some(format!("{}_skin", self.name)),
                source_index: nb,
                parent: None,
                rest: Trs::IDENTITY,
                matrix: None,
                mesh: Some(0),
                skin: Some(0),
                morph_weights: None,
            });
            metas.push(BoneMeta::default());
        }
        let bone_index = self.bone_indices();
        for m in &self.motions {
            let mut channels = Vec::new();
            for t in &m.tracks {
                let Some(&i) = bone_index.get(t.bone.as_str()) else {
                    continue;
                };
                if !t.displacement_keys.is_empty() {
                    channels.push(Channel {
                        node: i,
                        path: AnimPath::Translation,
                        sampler: Sampler {
                            interpolation: Interpolation::Linear,
                            times_s: t.displacement_keys.iter().map(|k| k.time_s).collect(),
                            values: t
                                .displacement_keys
                                .iter()
                                .flat_map(|k| self.local_translation(i, k.value).to_array())
                                .collect(),
                            components: 3,
                            is_rotation: false,
                        },
                    });
                }
                if !t.scale_keys.is_empty() {
                    channels.push(Channel {
                        node: i,
                        path: AnimPath::Scale,
                        sampler: Sampler {
                            interpolation: Interpolation::Linear,
                            times_s: t.scale_keys.iter().map(|k| k.time_s).collect(),
                            values: t.scale_keys.iter().flat_map(|k| k.value).collect(),
                            components: 3,
                            is_rotation: false,
                        },
                    });
                }
                if !t.rotation_keys.is_empty() {
                    channels.push(Channel {
                        node: i,
                        path: AnimPath::Rotation,
                        sampler: Sampler {
                            interpolation: Interpolation::Linear,
                            times_s: t.rotation_keys.iter().map(|k| k.time_s).collect(),
                            values: t
                                .rotation_keys
                                .iter()
                                .flat_map(|k| Quat::from_array(k.value).normalize().to_array())
                                .collect(),
                            components: 4,
                            is_rotation: true,
                        },
                    });
                }
            }
            raw.animations.push(Animation {
                name: Some(m.name.clone()),
                channels,
            });
        }
        raw.nodes = nodes;
        let scene = SceneBuilder::build(raw)?;
        // The builder keeps bone order (parents come first already); map by source index.
        let mut bones = vec![BoneMeta::default(); scene.nodes.len()];
        let mut node_of_bone = vec![0; nb];
        for (ni, n) in scene.nodes.iter().enumerate() {
            if n.source_index < metas.len() {
                bones[ni] = metas[n.source_index].clone();
            }
            if n.source_index < nb {
                node_of_bone[n.source_index] = ni;
            }
        }
        Ok(RigScene {
            scene,
            bones,
            node_of_bone,
            looping: self.motions.iter().map(|m| m.looping).collect(),
        })
    }

    /// Inverse of [`WeberRig::to_scene`] for scenes it produced.
    pub fn from_scene(rs: &RigScene, name: &str) -> Result<WeberRig> {
        let scene = &rs.scene;
        let nb = rs.node_of_bone.len();
        // Node → bone, once (a search per lookup is quadratic in bones).
        let mut bone_by_node = vec![None; scene.nodes.len()];
        for (b, &n) in rs.node_of_bone.iter().enumerate() {
            match bone_by_node.get_mut(n) {
                Some(slot) if slot.is_none() => *slot = Some(b),
                Some(_) => {
                    return Err(Error::invalid(
                        name,
                        format!("node_of_bone[{b}]"),
                        format!("node {n} is already another bone's"),
                    ));
                }
                None => {
                    return Err(Error::invalid(
                        name,
                        format!("node_of_bone[{b}]"),
                        format!("node {n} out of range ({} nodes)", scene.nodes.len()),
                    ));
                }
            }
        }
        if rs.bones.len() < scene.nodes.len() {
            return Err(Error::invalid(
                name,
                "bones",
                format!(
                    "{} bone records for {} nodes",
                    rs.bones.len(),
                    scene.nodes.len()
                ),
            ));
        }
        let bone_of_node = |n: usize| bone_by_node.get(n).copied().flatten();
        let mut bones = Vec::with_capacity(nb);
        for (b, &n) in rs.node_of_bone.iter().enumerate() {
            let node = &scene.nodes[n];
            let parent = node.parent.and_then(bone_of_node);
            let parent_len = parent.map_or(0.0, |p| rs.bones[rs.node_of_bone[p]].length_m);
            let t = node.rest.translation;
            let meta = &rs.bones[n];
            bones.push(Bone {
                name: node.name.clone().unwrap_or_else(|| format!("bone{b}")),
                parent,
                length_m: meta.length_m,
                displacement_m: [t.x - parent_len, t.y, t.z],
                rotation: node.rest.rotation.to_array(),
                limits_deg: meta.limits_deg,
                base_section: meta.base_section,
                tip_section: meta.tip_section,
                links: meta.links,
                muscle: meta.muscle,
            });
        }
        let mut rig = WeberRig::new(name, bones);
        if let Some(d) = scene.draws.iter().find(|d| d.skin.is_some()) {
            let p = scene.primitive(d);
            let skin = &scene.skins[d.skin.unwrap_or(0)];
            let w = p
                .skin_weights
                .as_ref()
                .ok_or_else(|| Error::invalid(name, "mesh", "skinned draw without weights"))?;
            rig.mesh = Some(RigMesh {
                positions: p.positions.iter().map(|v| v.to_array()).collect(),
                normals: p
                    .normals
                    .as_ref()
                    .map(|n| n.iter().map(|v| v.to_array()).collect())
                    .unwrap_or_else(|| vec![[0.0, 1.0, 0.0]; p.positions.len()]),
                triangles: p
                    .indices
                    .chunks_exact(3)
                    .map(|t| [t[0], t[1], t[2]])
                    .collect(),
                weights: (0..p.vertex_count())
                    .map(|v| {
                        let list: Vec<(u32, f32)> = (0..w.width)
                            .filter(|&k| w.weights[v * w.width + k] != 0.0)
                            .filter_map(|k| {
                                bone_of_node(skin.joints[w.joints[v * w.width + k] as usize])
                                    .map(|b| (b as u32, w.weights[v * w.width + k]))
                            })
                            .collect();
                        rig.collapse_muscles(list)
                    })
                    .collect(),
                color: p.base_color,
            });
        }
        for (ai, a) in scene.animations.iter().enumerate() {
            let mut tracks: Vec<Track> = Vec::new();
            let mut track_of_bone: std::collections::HashMap<usize, usize> =
                std::collections::HashMap::new();
            for ch in &a.channels {
                let Some(b) = bone_of_node(ch.node) else {
                    continue;
                };
                let idx = *track_of_bone.entry(b).or_insert_with(|| {
                    tracks.push(Track {
                        bone: rig.bones[b].name.clone(),
                        displacement_keys: Vec::new(),
                        rotation_keys: Vec::new(),
                        scale_keys: Vec::new(),
                    });
                    tracks.len() - 1
                });
                let s = &ch.sampler;
                match ch.path {
                    AnimPath::Translation => {
                        let parent_len = rig.bones[b].parent.map_or(0.0, |p| rig.bones[p].length_m);
                        tracks[idx].displacement_keys = s
                            .times_s
                            .iter()
                            .zip(s.values.chunks_exact(3))
                            .map(|(&t, v)| Key {
                                time_s: t,
                                value: [v[0] - parent_len, v[1], v[2]],
                            })
                            .collect();
                    }
                    AnimPath::Scale => {
                        tracks[idx].scale_keys = s
                            .times_s
                            .iter()
                            .zip(s.values.chunks_exact(3))
                            .map(|(&t, v)| Key {
                                time_s: t,
                                value: [v[0], v[1], v[2]],
                            })
                            .collect();
                    }
                    AnimPath::Rotation => {
                        tracks[idx].rotation_keys = s
                            .times_s
                            .iter()
                            .zip(s.values.chunks_exact(4))
                            .map(|(&t, v)| Key {
                                time_s: t,
                                value: [v[0], v[1], v[2], v[3]],
                            })
                            .collect();
                    }
                    _ => {}
                }
            }
            rig.motions.push(Motion {
                name: a.name.clone().unwrap_or_else(|| format!("motion{ai}")),
                looping: rs.looping.get(ai).copied().unwrap_or(false),
                tracks,
            });
        }
        Ok(rig)
    }
}
