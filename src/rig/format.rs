//! The `*.rig.json` file format: its serde types and [`WeberRig::validate`]'s checks.

use std::collections::{HashMap, HashSet};

use glam::Quat;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::weights::Work;

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
    pub fn validate(&self, file: &str) -> Result<()> {
        self.validate_counted(file, &mut Work::default())
    }

    /// [`Self::validate`], its steps added to `work`: a bone, a vertex, an influence, a
    /// triangle, a track or a key visited (each hash lookup one step).
    pub fn validate_counted(&self, file: &str, work: &mut Work) -> Result<()> {
        self.validate_header(file)?;
        // Names seen so far: duplicate and track checks in O(1) each (rigs of 10⁵ bones).
        let mut names: HashSet<&str> = HashSet::with_capacity(self.bones.len());
        *work += Work::steps(self.bones.len());
        for (i, b) in self.bones.iter().enumerate() {
            self.validate_bone(i, b, &mut names, file)?;
        }
        if let Some(m) = &self.mesh {
            *work += Work::steps(mesh_steps(m));
            self.validate_mesh(m, file)?;
        }
        for (mi, m) in self.motions.iter().enumerate() {
            *work += Work::steps(motion_steps(m));
            validate_motion(mi, m, &names, file)?;
        }
        Ok(())
    }
}

/// Steps of one pass over a mesh: its vertices, their influences and its triangles.
pub(super) fn mesh_steps(m: &RigMesh) -> usize {
    m.positions.len() + m.weights.iter().map(Vec::len).sum::<usize>() + m.triangles.len()
}

/// Steps of one pass over a motion: its tracks and their keys.
pub(super) fn motion_steps(m: &Motion) -> usize {
    m.tracks
        .iter()
        .map(|t| 1 + t.displacement_keys.len() + t.rotation_keys.len() + t.scale_keys.len())
        .sum()
}

/// `bones[i] (name).what`: the field of bone `i` a message is about.
fn bone_field(i: usize, b: &Bone, what: &str) -> String {
    format!("bones[{i}] ({}).{what}", b.name)
}

impl WeberRig {
    /// The rig's `format` and `version`, and at least one bone.
    fn validate_header(&self, file: &str) -> Result<()> {
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
        Ok(())
    }

    /// Bone `i`: its parent before it, finite numbers, a unit rotation, a name not in `names`
    /// (added to it), sections, links, muscle and limits.
    fn validate_bone<'a>(
        &self,
        i: usize,
        b: &'a Bone,
        names: &mut HashSet<&'a str>,
        file: &str,
    ) -> Result<()> {
        let f = |s: &str| bone_field(i, b, s);
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
        validate_sections(i, b, file)?;
        validate_links(i, b, file)?;
        self.validate_muscle(i, b, file)?;
        validate_limits(i, b, file)
    }

    /// A muscle bone has a parent that is not a muscle, and no links.
    fn validate_muscle(&self, i: usize, b: &Bone, file: &str) -> Result<()> {
        if !b.muscle {
            return Ok(());
        }
        match b.parent {
            None => {
                return Err(Error::invalid(
                    file,
                    bone_field(i, b, "muscle"),
                    "a muscle bone needs a parent (its weights move the skin by how far \
                     it departs from following the parent)",
                ));
            }
            Some(p) if self.bones[p].muscle => {
                return Err(Error::invalid(
                    file,
                    bone_field(i, b, "muscle"),
                    format!("the parent {:?} is a muscle too", self.bones[p].name),
                ));
            }
            Some(_) => {}
        }
        if b.links.is_some() {
            return Err(Error::invalid(
                file,
                bone_field(i, b, "links"),
                "a muscle bone has no bone links",
            ));
        }
        Ok(())
    }

    /// The mesh: one normal and one weight list per position, triangle indices in range, and
    /// each vertex's weights.
    fn validate_mesh(&self, m: &RigMesh, file: &str) -> Result<()> {
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
            self.validate_vertex_weights(v, ws, file)?;
        }
        Ok(())
    }

    /// Vertex `v`'s weights: bones in range, weights not negative (nor NaN), a muscle's at
    /// most 1, the others summing to 1.
    // `!(a >= b)` below is deliberate: it also rejects NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn validate_vertex_weights(&self, v: usize, ws: &[(u32, f32)], file: &str) -> Result<()> {
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
        Ok(())
    }
}

/// Bone `i`'s sections, when given: radii finite and positive, offsets finite.
fn validate_sections(i: usize, b: &Bone, file: &str) -> Result<()> {
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
                bone_field(i, b, which),
                "radii must be finite and positive, offsets finite",
            ));
        }
    }
    Ok(())
}

/// Bone `i`'s links, when given: 1..=64 of them, a length finite and positive, not on a root.
fn validate_links(i: usize, b: &Bone, file: &str) -> Result<()> {
    let Some(l) = &b.links else {
        return Ok(());
    };
    if !(1..=64).contains(&l.count) {
        return Err(Error::invalid(
            file,
            bone_field(i, b, "links.count"),
            format!(
                "{} links; 1..=64 allowed (two or three are enough)",
                l.count
            ),
        ));
    }
    if l.length_m.is_some_and(|x| !(x.is_finite() && x > 0.0)) {
        return Err(Error::invalid(
            file,
            bone_field(i, b, "links.length_m"),
            "must be finite and positive (or null for the default)",
        ));
    }
    if b.parent.is_none() {
        return Err(Error::invalid(
            file,
            bone_field(i, b, "links"),
            "links sit at the joint with the parent; a root bone has none",
        ));
    }
    Ok(())
}

/// Bone `i`'s limits, when given: each min at most its max, both finite.
// `!(a <= b)` below is deliberate: it also rejects NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn validate_limits(i: usize, b: &Bone, file: &str) -> Result<()> {
    if let Some(l) = &b.limits_deg
        && (0..3).any(|k| !(l.min[k] <= l.max[k]) || !l.min[k].is_finite() || !l.max[k].is_finite())
    {
        return Err(Error::invalid(
            file,
            bone_field(i, b, "limits_deg"),
            "each min must be <= max and finite",
        ));
    }
    Ok(())
}

/// Motion `mi`: one track per bone, each naming a bone in `names`, with valid keys.
fn validate_motion(mi: usize, m: &Motion, names: &HashSet<&str>, file: &str) -> Result<()> {
    // One track per bone and motion: two would drive the same properties twice (as two glTF
    // channels on one target, which the format forbids).
    let mut tracked: HashMap<&str, usize> = HashMap::with_capacity(m.tracks.len());
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
        validate_keys(mi, ti, t, f, file)?;
    }
    Ok(())
}

/// Track `ti` of motion `mi` (`f` names it in messages): key times finite and strictly
/// increasing, values finite, rotations with a direction.
fn validate_keys(mi: usize, ti: usize, t: &Track, f: String, file: &str) -> Result<()> {
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
    Ok(())
}
