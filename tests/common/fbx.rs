//! The FBX test data: shared models converted by Debian's Blender into tests/data/fbx by
//! `scripts/make-fbx-test-data.sh` (run by `scripts/setup.sh --tests`). A missing file is a
//! test failure that says what to run.

use std::path::{Path, PathBuf};

/// The FBX Blender made from the shared model or rig `stem`.
pub fn converted(stem: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fbx")
        .join(format!("{stem}.fbx"));
    assert!(
        path.is_file(),
        "{} is missing: run `scripts/setup.sh --tests` (it installs Blender and runs \
         scripts/make-fbx-test-data.sh)",
        path.display()
    );
    path
}

/// FBX's time unit: ticks a second.
pub const KTIME_PER_S: f64 = 46_186_158_000.0;

/// A two-bone arm as an ASCII FBX 7.4 file, written from this template (the project's own;
/// CC0) with the conventions Blender's exporter never writes: centimetres, Z up, a geometric
/// transform on the mesh, a bind pose other than the rest pose, and a joint that does not
/// inherit its parent's scale.
///
/// The arm: bone `Upper` at the origin, `Lower` 10 units along its X; a square tube from x = 0
/// to 20 (rings at x = 0, 5, 10, 15, 20, corners at y, z = ±1), each ring weighted to `Lower`
/// by clamp((x − 5) / 10, 0, 1) and the rest to `Upper`. Bound straight and unscaled (the
/// clusters' TransformLink); one clip, `Bend`: `Lower` turns about Z from 0° at 0 s to 90° at
/// 1 s. A cluster's `Transform` is the mesh in the bone's space at bind time
/// (TransformLink⁻¹ · the mesh node's bind world), as FBX stores it.
#[derive(Clone, Debug)]
pub struct AsciiArm {
    /// The file's unit in centimetres (FBX `UnitScaleFactor`: 1 = cm, 100 = m).
    pub unit_cm: f64,
    /// Z up (`UpAxis` 2, front −Y, as Blender and 3ds Max write) instead of Y up.
    pub z_up: bool,
    /// The mesh node's translation (units).
    pub mesh_translation: [f64; 3],
    /// The mesh's geometric translation (units): moves the geometry, not the node.
    pub geometric_translation: [f64; 3],
    /// The mesh's geometric rotation about X, degrees (after the geometric translation:
    /// geometry → node is T · R).
    pub geometric_rotation_x_deg: f64,
    /// `Upper`'s rest rotation about Y, degrees (the bind pose is 0: bind ≠ rest when not 0).
    pub upper_rest_y_deg: f64,
    /// `Upper`'s rest scale (uniform).
    pub upper_scale: f64,
    /// `Lower`'s `PreRotation` about Z, degrees (Maya's joint orient: applied before its
    /// animated rotation).
    pub lower_pre_rotation_z_deg: f64,
    /// `Lower`'s `InheritType` (1: normal; 2: ignores its parent's scale, Maya's
    /// segment-scale compensation).
    pub lower_inherit: i32,
    /// The clip's end, s.
    pub clip_end_s: f64,
    /// A blend shape channel `Bulge` (the tip ring moved by (1, 2, 0) at full weight) whose
    /// `DeformPercent` goes from 0 at 0 s to 100 at the clip's end.
    pub bulge: bool,
    /// Takes sharing the one timeline (name, `LocalStart` and `LocalStop` in s), each a stack
    /// whose layer plays the same curves; empty: the one stack `Bend` with a `LocalStop` at
    /// the clip's end alone.
    pub takes: Vec<(String, f64, f64)>,
    /// `Lower`'s Z rotation curve (degrees); empty: 0° at 0 s to 90° at the clip's end, linear.
    pub bend: Vec<Key>,
    /// `Upper`'s `Lcl Translation` curves, X, Y and Z (units); all empty: not animated.
    pub upper_translation: [Vec<Key>; 3],
}

/// A key of a curve the tests write: time (s), value, and how the curve leaves it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key {
    pub time_s: f64,
    pub value: f64,
    pub kind: KeyKind,
}

/// How a curve leaves a key (FBX `KeyAttrFlags`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyKind {
    /// Linear to the next key.
    Linear,
    /// Cubic with auto tangents (ufbx solves them from the neighbouring keys).
    Auto,
    /// Cubic with user tangents, broken: the slope (per second) leaving this key and the one
    /// arriving at the next.
    User { right: f64, next_left: f64 },
    /// Cubic with user tangents whose weights (the handles' lengths as fractions of the
    /// interval; unweighted is a third) are given: written to FBX's four decimals.
    Weighted {
        right: f64,
        next_left: f64,
        right_weight: f64,
        next_left_weight: f64,
    },
}

impl Key {
    pub fn new(time_s: f64, value: f64, kind: KeyKind) -> Key {
        Key {
            time_s,
            value,
            kind,
        }
    }
}

/// An `AnimationCurve` object `id` with `keys`, one attribute record a key.
fn curve_object(id: u32, keys: &[Key]) -> String {
    let join = |v: Vec<String>| v.join(",");
    let times = join(
        keys.iter()
            .map(|k| ((k.time_s * KTIME_PER_S).round() as i64).to_string())
            .collect(),
    );
    let values = join(keys.iter().map(|k| format!("{}", k.value)).collect());
    // Flags: 0x4 linear; 0x8 cubic with 0x100 auto, or 0x400 user and 0x800 broken. The
    // attributes (right slope, next left slope, weights, velocities) are f32s written as
    // their bits, as an ASCII FBX 7.2+ file holds them.
    let flags = join(
        keys.iter()
            .map(|k| match k.kind {
                KeyKind::Linear => "24836".to_string(),
                KeyKind::Auto => "264".to_string(),
                KeyKind::User { .. } => "3080".to_string(),
                // User and broken, with 0x1000000 (right) and 0x2000000 (next left) weighted.
                KeyKind::Weighted { .. } => (3080 | 0x0100_0000 | 0x0200_0000).to_string(),
            })
            .collect(),
    );
    let attrs = join(
        keys.iter()
            .map(|k| match k.kind {
                KeyKind::User { right, next_left } => {
                    let bits = |x: f64| (x as f32).to_bits() as i32;
                    format!("{},{},0,0", bits(right), bits(next_left))
                }
                KeyKind::Weighted {
                    right,
                    next_left,
                    right_weight,
                    next_left_weight,
                } => {
                    let bits = |x: f64| (x as f32).to_bits() as i32;
                    // Two 0.4 decimal fixed-point weights packed in the third float's bits.
                    let fixed = |w: f64| (w * 10_000.0).round() as u32;
                    let packed = (fixed(right_weight) | (fixed(next_left_weight) << 16)) as i32;
                    format!("{},{},{packed},0", bits(right), bits(next_left))
                }
                _ => "0,0,0,0".to_string(),
            })
            .collect(),
    );
    let n = keys.len();
    let refs = vec!["1"; n].join(",");
    format!(
        "\tAnimationCurve: {id}, \"AnimCurve::\", \"\" {{\n\t\tDefault: 0\n\t\tKeyVer: 4009\n\
         \t\tKeyTime: *{n} {{\n\t\t\ta: {times}\n\t\t}}\n\
         \t\tKeyValueFloat: *{n} {{\n\t\t\ta: {values}\n\t\t}}\n\
         \t\tKeyAttrFlags: *{n} {{\n\t\t\ta: {flags}\n\t\t}}\n\
         \t\tKeyAttrDataFloat: *{} {{\n\t\t\ta: {attrs}\n\t\t}}\n\
         \t\tKeyAttrRefCount: *{n} {{\n\t\t\ta: {refs}\n\t\t}}\n\t}}\n",
        4 * n
    )
}

impl Default for AsciiArm {
    fn default() -> Self {
        AsciiArm {
            unit_cm: 100.0,
            z_up: false,
            mesh_translation: [0.0; 3],
            geometric_translation: [0.0; 3],
            geometric_rotation_x_deg: 0.0,
            upper_rest_y_deg: 0.0,
            upper_scale: 1.0,
            lower_pre_rotation_z_deg: 0.0,
            lower_inherit: 1,
            takes: Vec::new(),
            clip_end_s: 1.0,
            bulge: false,
            bend: Vec::new(),
            upper_translation: Default::default(),
        }
    }
}

/// The arm's ring x positions (units).
pub const ARM_RINGS: [f64; 5] = [0.0, 5.0, 10.0, 15.0, 20.0];
/// `Lower`'s offset from `Upper` along X (units).
pub const ARM_LOWER_X: f64 = 10.0;

impl AsciiArm {
    /// Mesh vertex `v` in geometry space (units): ring v / 4, corner v % 4.
    pub fn vertex(v: usize) -> [f64; 3] {
        const CORNERS: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
        let c = CORNERS[v % 4];
        [ARM_RINGS[v / 4], c[0], c[1]]
    }

    /// The `Bulge` shape's offset of vertex `v` (units): the tip ring moved by (1, 2, 0),
    /// a direction no symmetry of the tube maps onto another.
    pub fn bulge_offset(v: usize) -> [f64; 3] {
        if v / 4 == ARM_RINGS.len() - 1 {
            [1.0, 2.0, 0.0]
        } else {
            [0.0; 3]
        }
    }

    /// `Lower`'s weight on vertex `v`.
    pub fn lower_weight(v: usize) -> f64 {
        ((ARM_RINGS[v / 4] - 5.0) / 10.0).clamp(0.0, 1.0)
    }

    /// The file's text.
    pub fn text(&self) -> String {
        let n = ARM_RINGS.len() * 4;
        let vertices: Vec<String> = (0..n)
            .flat_map(|v| Self::vertex(v).map(|x| format!("{x}")))
            .collect();
        let mut polygons = Vec::new();
        for r in 0..ARM_RINGS.len() - 1 {
            for c in 0..4 {
                let (a, b) = (r * 4 + c, r * 4 + (c + 1) % 4);
                let quad = [a, b, b + 4, a + 4];
                polygons.extend_from_slice(&[
                    quad[0] as i64,
                    quad[1] as i64,
                    quad[2] as i64,
                    -(quad[3] as i64) - 1,
                ]);
            }
        }
        let list = |v: &[String]| v.join(",");
        let ints = |v: &[i64]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let cluster = |id: u32, name: &str, weight: &dyn Fn(usize) -> f64, link_x: f64| {
            let (idx, w): (Vec<i64>, Vec<String>) = (0..n)
                .filter(|&v| weight(v) > 0.0)
                .map(|v| (v as i64, format!("{}", weight(v))))
                .unzip();
            let t = self.mesh_translation;
            format!(
                "\tDeformer: {id}, \"SubDeformer::{name}\", \"Cluster\" {{\n\t\tVersion: 100\n\
                 \t\tIndexes: *{} {{\n\t\t\ta: {}\n\t\t}}\n\t\tWeights: *{} {{\n\t\t\ta: {}\n\t\t}}\n\
                 \t\tTransform: *16 {{\n\t\t\ta: 1,0,0,0,0,1,0,0,0,0,1,0,{},{},{},1\n\t\t}}\n\
                 \t\tTransformLink: *16 {{\n\t\t\ta: 1,0,0,0,0,1,0,0,0,0,1,0,{link_x},0,0,1\n\t\t}}\n\t}}\n",
                idx.len(),
                ints(&idx),
                w.len(),
                list(&w),
                t[0] - link_x,
                t[1],
                t[2]
            )
        };
        let (up, front, front_sign) = if self.z_up { (2, 1, -1) } else { (1, 2, 1) };
        let stop = (self.clip_end_s * KTIME_PER_S).round() as i64;
        let [mx, my, mz] = self.mesh_translation;
        let [gx, gy, gz] = self.geometric_translation;
        format!(
            "; FBX 7.4.0 project file\n\
; A two-bone arm written by skinview's tests (CC0-1.0).\n\
FBXHeaderExtension:  {{\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n\tCreator: \"skinview tests\"\n}}\n\
GlobalSettings:  {{\n\tVersion: 1000\n\tProperties70:  {{\n\
\t\tP: \"UpAxis\", \"int\", \"Integer\", \"\",{up}\n\
\t\tP: \"UpAxisSign\", \"int\", \"Integer\", \"\",1\n\
\t\tP: \"FrontAxis\", \"int\", \"Integer\", \"\",{front}\n\
\t\tP: \"FrontAxisSign\", \"int\", \"Integer\", \"\",{front_sign}\n\
\t\tP: \"CoordAxis\", \"int\", \"Integer\", \"\",0\n\
\t\tP: \"CoordAxisSign\", \"int\", \"Integer\", \"\",1\n\
\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",{unit}\n\
\t\tP: \"TimeMode\", \"enum\", \"\", \"\",6\n\
\t}}\n}}\n\
Objects:  {{\n\
\tGeometry: 100, \"Geometry::Tube\", \"Mesh\" {{\n\
\t\tVertices: *{nv} {{\n\t\t\ta: {verts}\n\t\t}}\n\
\t\tPolygonVertexIndex: *{np} {{\n\t\t\ta: {polys}\n\t\t}}\n\
\t\tGeometryVersion: 124\n\t}}\n\
\tModel: 200, \"Model::Tube\", \"Mesh\" {{\n\t\tVersion: 232\n\t\tProperties70:  {{\n\
\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",{mx},{my},{mz}\n\
\t\t\tP: \"GeometricTranslation\", \"Vector3D\", \"Vector\", \"\",{gx},{gy},{gz}\n\
\t\t\tP: \"GeometricRotation\", \"Vector3D\", \"Vector\", \"\",{grx},0,0\n\
\t\t}}\n\t}}\n\
\tModel: 300, \"Model::Upper\", \"LimbNode\" {{\n\t\tVersion: 232\n\t\tProperties70:  {{\n\
\t\t\tP: \"Lcl Rotation\", \"Lcl Rotation\", \"\", \"A\",0,{ry},0\n\
\t\t\tP: \"Lcl Scaling\", \"Lcl Scaling\", \"\", \"A\",{s},{s},{s}\n\
\t\t}}\n\t}}\n\
\tModel: 301, \"Model::Lower\", \"LimbNode\" {{\n\t\tVersion: 232\n\t\tProperties70:  {{\n\
\t\t\tP: \"InheritType\", \"enum\", \"\", \"\",{inherit}\n\
\t\t\tP: \"RotationActive\", \"bool\", \"\", \"\",1\n\
\t\t\tP: \"PreRotation\", \"Vector3D\", \"Vector\", \"\",0,0,{pre}\n\
\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",{lx},0,0\n\
\t\t}}\n\t}}\n\
\tDeformer: 400, \"Deformer::Skin\", \"Skin\" {{\n\t\tVersion: 101\n\t}}\n\
{upper_cluster}{lower_cluster}{bulge_objects}\
{stacks}\
\tAnimationCurveNode: 502, \"AnimCurveNode::R\", \"\" {{\n\t\tProperties70:  {{\n\
\t\t\tP: \"d|X\", \"Number\", \"\", \"A\",0\n\
\t\t\tP: \"d|Y\", \"Number\", \"\", \"A\",0\n\
\t\t\tP: \"d|Z\", \"Number\", \"\", \"A\",0\n\
\t\t}}\n\t}}\n\
{bend_curve}{translation_objects}\
}}\n\
Connections:  {{\n\
\tC: \"OO\",200,0\n\tC: \"OO\",100,200\n\tC: \"OO\",300,0\n\tC: \"OO\",301,300\n\
\tC: \"OO\",400,100\n\tC: \"OO\",401,400\n\tC: \"OO\",402,400\n\
\tC: \"OO\",300,401\n\tC: \"OO\",301,402\n\
{stack_connections}\
\tC: \"OP\",502,301, \"Lcl Rotation\"\n\tC: \"OP\",503,502, \"d|Z\"\n\
{translation_connections}{bulge_connections}}}\n",
            unit = self.unit_cm,
            nv = vertices.len(),
            verts = list(&vertices),
            np = polygons.len(),
            polys = ints(&polygons),
            ry = self.upper_rest_y_deg,
            grx = self.geometric_rotation_x_deg,
            s = self.upper_scale,
            inherit = self.lower_inherit,
            pre = self.lower_pre_rotation_z_deg,
            lx = ARM_LOWER_X,
            upper_cluster = cluster(401, "Upper", &|v| 1.0 - Self::lower_weight(v), 0.0),
            lower_cluster = cluster(402, "Lower", &Self::lower_weight, ARM_LOWER_X),
            stacks = self.stacks(stop),
            stack_connections = self.stack_connections(),
            bend_curve = self.bend_curve(stop),
            translation_objects = self.translation_objects(),
            translation_connections = self.translation_connections(),
            bulge_objects = if self.bulge {
                self.bulge_objects(stop)
            } else {
                String::new()
            },
            bulge_connections = if self.bulge {
                "\tC: \"OO\",610,100\n\tC: \"OO\",611,610\n\tC: \"OO\",600,611\n\
                 \tC: \"OO\",620,501\n\tC: \"OP\",620,611, \"DeformPercent\"\n\
                 \tC: \"OP\",621,620, \"d|DeformPercent\"\n"
            } else {
                ""
            },
        )
    }

    /// The animation stacks and their layers: stack 500 with layer 501, then 700 + 2k with
    /// 701 + 2k for take k > 0.
    fn stacks(&self, stop: i64) -> String {
        let ktime = |s: f64| (s * KTIME_PER_S).round() as i64;
        if self.takes.is_empty() {
            return format!(
                "\tAnimationStack: 500, \"AnimStack::Bend\", \"\" {{\n\t\tProperties70:  {{\n\
                 \t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{stop}\n\
                 \t\t\tP: \"ReferenceStop\", \"KTime\", \"Time\", \"\",{stop}\n\
                 \t\t}}\n\t}}\n\
                 \tAnimationLayer: 501, \"AnimLayer::Base\", \"\" {{\n\t}}\n"
            );
        }
        let mut text = String::new();
        for (k, (name, start_s, stop_s)) in self.takes.iter().enumerate() {
            let (stack, layer) = Self::take_ids(k);
            let (a, b) = (ktime(*start_s), ktime(*stop_s));
            text += &format!(
                "\tAnimationStack: {stack}, \"AnimStack::{name}\", \"\" {{\n\t\tProperties70:  {{\n\
                 \t\t\tP: \"LocalStart\", \"KTime\", \"Time\", \"\",{a}\n\
                 \t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{b}\n\
                 \t\t\tP: \"ReferenceStart\", \"KTime\", \"Time\", \"\",{a}\n\
                 \t\t\tP: \"ReferenceStop\", \"KTime\", \"Time\", \"\",{b}\n\
                 \t\t}}\n\t}}\n\
                 \tAnimationLayer: {layer}, \"AnimLayer::Base\", \"\" {{\n\t}}\n"
            );
        }
        text
    }

    /// `Lower`'s Z rotation curve 503: [`AsciiArm::bend`], or 0° to 90° over the clip
    /// (written as it always was, so the hostile corpus's edits of it still apply).
    fn bend_curve(&self, stop: i64) -> String {
        if !self.bend.is_empty() {
            return curve_object(503, &self.bend);
        }
        format!(
            "\tAnimationCurve: 503, \"AnimCurve::\", \"\" {{\n\t\tDefault: 0\n\t\tKeyVer: 4009\n\
             \t\tKeyTime: *2 {{\n\t\t\ta: 0,{stop}\n\t\t}}\n\
             \t\tKeyValueFloat: *2 {{\n\t\t\ta: 0,90\n\t\t}}\n\
             \t\tKeyAttrFlags: *1 {{\n\t\t\ta: 24836\n\t\t}}\n\
             \t\tKeyAttrDataFloat: *4 {{\n\t\t\ta: 0,0,255790911,0\n\t\t}}\n\
             \t\tKeyAttrRefCount: *1 {{\n\t\t\ta: 2\n\t\t}}\n\t}}\n"
        )
    }

    /// `Upper`'s translation curve node 510 and its curves 511–513, when animated.
    fn translation_objects(&self) -> String {
        if self.upper_translation.iter().all(Vec::is_empty) {
            return String::new();
        }
        let mut text = "\tAnimationCurveNode: 510, \"AnimCurveNode::T\", \"\" {\n\
                        \t\tProperties70:  {\n\
                        \t\t\tP: \"d|X\", \"Number\", \"\", \"A\",0\n\
                        \t\t\tP: \"d|Y\", \"Number\", \"\", \"A\",0\n\
                        \t\t\tP: \"d|Z\", \"Number\", \"\", \"A\",0\n\t\t}\n\t}\n"
            .to_string();
        for (i, keys) in self.upper_translation.iter().enumerate() {
            if !keys.is_empty() {
                text += &curve_object(511 + i as u32, keys);
            }
        }
        text
    }

    /// The translation curves' connections (node 510 on `Upper` and in every layer).
    fn translation_connections(&self) -> String {
        if self.upper_translation.iter().all(Vec::is_empty) {
            return String::new();
        }
        let mut text = "\tC: \"OP\",510,300, \"Lcl Translation\"\n".to_string();
        for (i, axis) in ["X", "Y", "Z"].iter().enumerate() {
            if !self.upper_translation[i].is_empty() {
                text += &format!("\tC: \"OP\",{},510, \"d|{axis}\"\n", 511 + i);
            }
        }
        for k in 0..self.takes.len().max(1) {
            text += &format!("\tC: \"OO\",510,{}\n", Self::take_ids(k).1);
        }
        text
    }

    /// Take `k`'s stack and layer ids.
    fn take_ids(k: usize) -> (usize, usize) {
        match k {
            0 => (500, 501),
            k => (700 + 2 * k, 701 + 2 * k),
        }
    }

    /// Each layer in its stack, each playing the rotation curve node 502.
    fn stack_connections(&self) -> String {
        (0..self.takes.len().max(1))
            .map(|k| {
                let (stack, layer) = Self::take_ids(k);
                format!("\tC: \"OO\",{layer},{stack}\n\tC: \"OO\",502,{layer}\n")
            })
            .collect()
    }

    /// The `Bulge` shape, its blend shape deformer and channel, and the channel's curve.
    fn bulge_objects(&self, stop: i64) -> String {
        let n = ARM_RINGS.len() * 4;
        let moved: Vec<usize> = (0..n)
            .filter(|&v| Self::bulge_offset(v) != [0.0; 3])
            .collect();
        let indexes: Vec<String> = moved.iter().map(|v| v.to_string()).collect();
        let offsets: Vec<String> = moved
            .iter()
            .flat_map(|&v| Self::bulge_offset(v).map(|x| format!("{x}")))
            .collect();
        let zeros = vec!["0"; offsets.len()].join(",");
        format!(
            "\tGeometry: 600, \"Geometry::Bulge\", \"Shape\" {{\n\t\tVersion: 100\n\
             \t\tIndexes: *{ni} {{\n\t\t\ta: {indexes}\n\t\t}}\n\
             \t\tVertices: *{no} {{\n\t\t\ta: {offsets}\n\t\t}}\n\
             \t\tNormals: *{no} {{\n\t\t\ta: {zeros}\n\t\t}}\n\t}}\n\
             \tDeformer: 610, \"Deformer::Morph\", \"BlendShape\" {{\n\t\tVersion: 100\n\t}}\n\
             \tDeformer: 611, \"SubDeformer::Bulge\", \"BlendShapeChannel\" {{\n\t\tVersion: 100\n\
             \t\tDeformPercent: 0\n\t\tFullWeights: *1 {{\n\t\t\ta: 100\n\t\t}}\n\
             \t\tProperties70:  {{\n\t\t\tP: \"DeformPercent\", \"Number\", \"\", \"A\",0\n\t\t}}\n\t}}\n\
             \tAnimationCurveNode: 620, \"AnimCurveNode::DeformPercent\", \"\" {{\n\
             \t\tProperties70:  {{\n\t\t\tP: \"d|DeformPercent\", \"Number\", \"\", \"A\",0\n\t\t}}\n\t}}\n\
             \tAnimationCurve: 621, \"AnimCurve::\", \"\" {{\n\t\tDefault: 0\n\t\tKeyVer: 4009\n\
             \t\tKeyTime: *2 {{\n\t\t\ta: 0,{stop}\n\t\t}}\n\
             \t\tKeyValueFloat: *2 {{\n\t\t\ta: 0,100\n\t\t}}\n\
             \t\tKeyAttrFlags: *1 {{\n\t\t\ta: 24836\n\t\t}}\n\
             \t\tKeyAttrDataFloat: *4 {{\n\t\t\ta: 0,0,255790911,0\n\t\t}}\n\
             \t\tKeyAttrRefCount: *1 {{\n\t\t\ta: 2\n\t\t}}\n\t}}\n",
            ni = indexes.len(),
            indexes = indexes.join(","),
            no = offsets.len(),
            offsets = offsets.join(","),
        )
    }

    /// The same arm as an ASCII FBX 6.1 file (objects named, not numbered; properties in
    /// `Properties60`; the clip in `Takes`); Y up, in the arm's unit.
    pub fn text_v6(&self) -> String {
        let n = ARM_RINGS.len() * 4;
        let vertices: Vec<String> = (0..n)
            .flat_map(|v| Self::vertex(v).map(|x| format!("{x}")))
            .collect();
        let mut polygons: Vec<String> = Vec::new();
        for r in 0..ARM_RINGS.len() - 1 {
            for c in 0..4 {
                let (a, b) = (r * 4 + c, r * 4 + (c + 1) % 4);
                polygons.extend([a, b, b + 4].map(|i| i.to_string()));
                polygons.push((-((a + 4) as i64) - 1).to_string());
            }
        }
        let cluster = |name: &str, weight: &dyn Fn(usize) -> f64, link_x: f64| {
            let (idx, w): (Vec<String>, Vec<String>) = (0..n)
                .filter(|&v| weight(v) > 0.0)
                .map(|v| (v.to_string(), format!("{}", weight(v))))
                .unzip();
            format!(
                "\tDeformer: \"SubDeformer::Cluster {name}\", \"Cluster\" {{\n\t\tVersion: 100\n\
                 \t\tIndexes: {}\n\t\tWeights: {}\n\
                 \t\tTransform: 1,0,0,0,0,1,0,0,0,0,1,0,{},0,0,1\n\
                 \t\tTransformLink: 1,0,0,0,0,1,0,0,0,0,1,0,{link_x},0,0,1\n\t}}\n",
                idx.join(","),
                w.join(","),
                -link_x
            )
        };
        let stop = (self.clip_end_s * KTIME_PER_S).round() as i64;
        format!(
            "; FBX 6.1.0 project file\n\
; A two-bone arm written by skinview's tests (CC0-1.0).\n\
FBXHeaderExtension:  {{\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 6100\n}}\n\
GlobalSettings:  {{\n\tVersion: 1000\n\tProperties60:  {{\n\
\t\tProperty: \"UpAxis\", \"int\", \"\",1\n\t\tProperty: \"UpAxisSign\", \"int\", \"\",1\n\
\t\tProperty: \"FrontAxis\", \"int\", \"\",2\n\t\tProperty: \"FrontAxisSign\", \"int\", \"\",1\n\
\t\tProperty: \"CoordAxis\", \"int\", \"\",0\n\t\tProperty: \"CoordAxisSign\", \"int\", \"\",1\n\
\t\tProperty: \"UnitScaleFactor\", \"double\", \"\",{unit}\n\t}}\n}}\n\
Objects:  {{\n\
\tModel: \"Model::Tube\", \"Mesh\" {{\n\t\tVersion: 232\n\
\t\tVertices: {verts}\n\t\tPolygonVertexIndex: {polys}\n\t\tGeometryVersion: 124\n\t}}\n\
\tModel: \"Model::Upper\", \"Limb\" {{\n\t\tVersion: 232\n\t\tProperties60:  {{\n\
\t\t\tProperty: \"Lcl Translation\", \"Lcl Translation\", \"A+\",0,0,0\n\t\t}}\n\t}}\n\
\tModel: \"Model::Lower\", \"Limb\" {{\n\t\tVersion: 232\n\t\tProperties60:  {{\n\
\t\t\tProperty: \"Lcl Translation\", \"Lcl Translation\", \"A+\",{lx},0,0\n\t\t}}\n\t}}\n\
\tDeformer: \"Deformer::Skin Tube\", \"Skin\" {{\n\t\tVersion: 100\n\t}}\n\
{upper}{lower}}}\n\
Connections:  {{\n\
\tConnect: \"OO\", \"Model::Tube\", \"Model::Scene\"\n\
\tConnect: \"OO\", \"Model::Upper\", \"Model::Scene\"\n\
\tConnect: \"OO\", \"Model::Lower\", \"Model::Upper\"\n\
\tConnect: \"OO\", \"Deformer::Skin Tube\", \"Model::Tube\"\n\
\tConnect: \"OO\", \"SubDeformer::Cluster Upper\", \"Deformer::Skin Tube\"\n\
\tConnect: \"OO\", \"SubDeformer::Cluster Lower\", \"Deformer::Skin Tube\"\n\
\tConnect: \"OO\", \"Model::Upper\", \"SubDeformer::Cluster Upper\"\n\
\tConnect: \"OO\", \"Model::Lower\", \"SubDeformer::Cluster Lower\"\n\
}}\n\
Takes:  {{\n\tCurrent: \"Bend\"\n\tTake: \"Bend\" {{\n\
\t\tLocalTime: 0,{stop}\n\t\tReferenceTime: 0,{stop}\n\
\t\tModel: \"Model::Lower\" {{\n\t\t\tVersion: 1.1\n\
\t\t\tChannel: \"Transform\" {{\n\t\t\t\tChannel: \"R\" {{\n\
\t\t\t\t\tChannel: \"X\" {{\n\t\t\t\t\t\tDefault: 0\n\t\t\t\t\t\tKeyVer: 4005\n\t\t\t\t\t\tKeyCount: 1\n\t\t\t\t\t\tKey: 0,0,L\n\t\t\t\t\t}}\n\
\t\t\t\t\tChannel: \"Y\" {{\n\t\t\t\t\t\tDefault: 0\n\t\t\t\t\t\tKeyVer: 4005\n\t\t\t\t\t\tKeyCount: 1\n\t\t\t\t\t\tKey: 0,0,L\n\t\t\t\t\t}}\n\
\t\t\t\t\tChannel: \"Z\" {{\n\t\t\t\t\t\tDefault: 0\n\t\t\t\t\t\tKeyVer: 4005\n\t\t\t\t\t\tKeyCount: 2\n\t\t\t\t\t\tKey: 0,0,L,{stop},90,L\n\t\t\t\t\t}}\n\
\t\t\t\t}}\n\t\t\t}}\n\t\t}}\n\t}}\n}}\n",
            unit = self.unit_cm,
            verts = vertices.join(","),
            polys = polygons.join(","),
            lx = ARM_LOWER_X,
            upper = cluster("Upper", &|v| 1.0 - Self::lower_weight(v), 0.0),
            lower = cluster("Lower", &Self::lower_weight, ARM_LOWER_X),
        )
    }
}
