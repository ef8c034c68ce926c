//! Bone links (Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex Blending to §Bone
//! Links): extra small bones inserted at a joint so that linear blend skinning only ever blends
//! between frames a fraction of the joint angle apart.
//!
//! # Why
//! Linear blend skinning averages the transformed positions of a vertex; across a joint rotated
//! by a large angle the average falls inside the surface: an elbow bent 120° flattens, and the
//! 50/50 ring of a joint twisted 180° about the bone collapses onto the axis (§7). Blending
//! works well up to 60–90°, so the joint is split into `N` links, each carrying an even share
//! of the child's rotation, and the joint's weights are reassigned over
//! `[parent, link1..linkN, child]` by position along the bone (§9). Two or three links are
//! "about as good as ten".
//!
//! # Method
//! * **Links are ordinary nodes.** For a [`LinkSpec`] `(parent P, child C, N)`,
//!   [`insert_links`] adds `N` nodes named `<child>_link<k>` as children of `P`, placed at the
//!   joint (the child's local translation). Link `k` (`f_k = k/(N+1)`) gets the local rotation
//!   `rest · slerp(identity, rest⁻¹ · child_local_rotation, f_k)` — `f_k` of the child's
//!   rotation away from its rest rotation, shortest arc, see [`link_rotation`] — and scale 1
//!   (the child's scale is *not* shared out). For a child whose rest rotation is the identity
//!   (a straight limb, Woodland's arm) this is `slerp(identity, child_local_rotation, f_k)`;
//!   measured from rest, a child that hangs 180° from its parent (a thigh under the pelvis)
//!   has no arc to choose at rest. At rest this is built into the node's
//!   rest transform; every frame [`LinkPoseJob`] rewrites it from the child's current local
//!   transform. The existing local→model pass and palette then handle links like any joint:
//!   `animation → IK → links (LinkPoseJob) → local→model → palette → skinning`.
//! * **Skins.** Links are appended to every skin that contains both `P` and `C`, so existing
//!   joint indices do not move. Their inverse bind matrix is derived from the skin's own bind
//!   pose: `bind_link = bind_P · T(t) · R(link_rotation(rest, r, f_k))` with `(t, r)` the
//!   child's bind pose
//!   relative to the parent (`joint_from_bind_P · inverse(joint_from_bind_C)`). When the skin
//!   is bound at the node rest pose (the usual case, and Woodland's arm) this is exactly
//!   `inverse(rest model matrix of the link)`, so the linked scene skins at rest to the same
//!   positions as the unlinked one.
//! * **Bone convention (Weber).** Bones point along their local **+X**: the zone below is
//!   measured along the child's bind-space X axis. Lengths are in mesh (bind space) units,
//!   metres for our rigs.
//! * **Weights (by relative X position, §9's preferred method).** The link zone is the slab
//!   `joint ± L/2` along the child's X axis, `L = total_length_m` or by default
//!   `0.3·child_length + 1.5·joint_radius` (§9). A vertex's
//!   `s = clamp((p − joint)·x̂_C / L + 1/2, 0, 1)` runs from 0 at the parent end to 1 at the
//!   child end. Stations `[P, link1..linkN, C]` sit at `s_k = k/(N+1)`; the amount
//!   `A = (share of P's weight attributable to C) + w_C` is split between the two stations
//!   around `s` by linear interpolation. Every vertex with a non-zero weight on `C` takes part
//!   (`w_P` may be zero, and outside the zone `s` clamps to 0 or 1, so there the joint's
//!   weight goes wholly to `P` or `C` — the X position replaces the authored proportions, as
//!   §9 recommends). So does every vertex **inside the zone** weighted to `P` and to none of
//!   `P`'s children: all of its `P` weight is attributable to this side (`A = w_P`, counted in
//!   [`LinkStats::parent_only_in_zone`]). Without that, a `P`-only vertex would keep `P` while
//!   its neighbour with a tiny `w_C = ε` moves wholly onto the link stations — a step at the
//!   edge of the authored blend whenever the zone is longer than the blend; with it, `A` and
//!   `s` are continuous there and the rings of a twisted joint follow the step-free blend
//!   profile. (`P`-only vertices outside the slab are not touched; at `s = 0` nothing moves.)
//! * **Forks (§9).** §9 splits `P`'s weight between `P`'s children by each child's original
//!   weight on the vertex. That alone is discontinuous on a connected skin: a vertex with a
//!   tiny weight `ε` on one child gives that child all of `P`, its `P`-only neighbour nothing.
//!   So at a fork (`P` has more than one child in the skin) each child gets a **pseudo-weight**
//!   `u_D = w_D + w_P · m_D(p)`: its own weight plus `P`'s weight times the vertex's
//!   membership of a linked child's radial zone (`m = 0` for unlinked children). `m` is 1
//!   within half the radial limit of the child's axis and falls linearly to 0 at the limit
//!   (`2 · joint_radius(C)` from [`BoneInfo`], or the zone length `L` when no joint radius is
//!   known), full from the slab's parent end on and fading to 0 one zone length further back
//!   into the parent. Then `share(C) = w_P · u_C / max(Σ_D u_D, w_P)`: where the
//!   pseudo-weights cover `P`'s weight, `P` is split in their proportion; where they do not
//!   (a vertex outside every zone whose children's weights are small), the rest stays on `P`.
//!   Outside every radial zone with children's weights summing to at least `w_P` this is §9's
//!   split exactly; a `P`-only vertex moves only inside a zone (counted in
//!   [`LinkStats::parent_only_in_zone`]; in a slab but beyond the radial limit it is counted
//!   in [`LinkStats::parent_only_skipped`]). Every term is continuous in the position and the
//!   weights, so the reassigned weights are too (tested across every zone edge). The sum runs
//!   over *every* child of `P` in the skin, linked or not, so the part of `P` attributable to
//!   an unlinked branch stays on `P`. A parent with a single child in the skin uses the plain
//!   slab. All specs with the same parent use the weights as they were before that parent
//!   was processed. Parents are processed deepest-index first (a chain's elbow before its
//!   shoulder); ancestors beyond the parent are not considered (§9 notes it gets
//!   complicated).
//! * **Normal-derived fade (§9, armpits).** A fraction `φ = normal_fade · |x̂_C · n̂|` of the
//!   weight that would go to the *link* stations returns to `P` instead. It is applied to the
//!   link-bound part only (not to the whole amount) so that vertices beyond the zone — e.g. an
//!   end cap whose normal runs along the bone — are never pulled back to the parent. Vertices
//!   whose normals are perpendicular to the bone (an elbow ring) are unaffected. No normals:
//!   no fade.
//! * **Sums and widths.** Redistribution preserves each vertex's total (computed in f64;
//!   weights below 1e-9 are dropped). [`LinkStats`] reports the largest `|Σw − 1|` before and
//!   after, and the new largest influence count: `SkinWeights::width` grows to the next
//!   multiple of 4 as needed. The GPU path supports up to 8 influences per vertex; a result
//!   above 8 ([`LinkStats::exceeds_gpu_limit`]) skins on the CPU only, or needs reducing to
//!   the 8 largest weights first (the GPU upload refuses weight sets wider than 8).
//!
//! # Cost
//! Insertion: one pass over the vertices of each affected primitive, `O(specs per parent)`
//! per vertex. Per frame: [`LinkPoseJob`] costs one quaternion power (atan2, sin, cos, as
//! polynomials) per linked child, four children at a time in the lanes of a 4-wide vector;
//! further links of a child take products of its share (the humanoid's 16 links: ~0.4 µs);
//! each link adds one node to local→model and one palette matrix per skin holding it.
//! Influences: per linked child a vertex ends on at most two adjacent stations, plus the
//! parent when the fade returns weight to it, so a plain two-bone joint stays at 2 influences
//! (3 with fade) whatever `N` is; a fork with `m` linked children can reach `1 + 2m` plus the
//! untouched influences (the fork test reaches 6). Widths grow to the next multiple of 4.
//!
//! # Limits
//! * Links take the child's full local translation (they sit at the joint) and scale 1: the
//!   child's scale is not shared out.
//! * Rotation shares use the shortest arc, so a child rotated past 180° from its rest flips
//!   its links to the other side.
//! * A mesh whose weights change must be drawn with a single skin (joint indices are per skin).
//! * Only the direct parent of the child is considered for forks.
//! * With a single child, `P`-only vertices beyond the child end of the slab (`s ≥ 1`) keep
//!   `P`: a rig whose parent-only region reaches past the zone along the child's axis still
//!   has a step there (at a fork, the radial zone continues past the slab: no step).

use glam::{DMat4, DVec3, Quat, Vec3, Vec4};

use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{Draw, Node, RawScene, Scene, SceneBuilder, SkinWeights};
use crate::skin::weights::GPU_MAX_INFLUENCES;

/// One joint to link: `N` links between `parent` and its child `child`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Scene node index of the parent bone.
    pub parent: usize,
    /// Scene node index of the child bone; its parent must be `parent`.
    pub child: usize,
    /// Number of links (≥ 1; §9: two or three are about as good as ten).
    pub count: usize,
    /// Total length of the link zone along the child's +X; `None` =
    /// `0.3 · child_length + 1.5 · joint_radius` from [`BoneInfo`].
    pub total_length_m: Option<f32>,
    /// Normal-derived fade strength in `[0, 1]` (0 = off; default
    /// [`LinkSpec::DEFAULT_NORMAL_FADE`]).
    pub normal_fade: f32,
}

impl LinkSpec {
    /// Links per joint when not given.
    pub const DEFAULT_COUNT: usize = 2;
    /// Default normal-derived fade strength.
    pub const DEFAULT_NORMAL_FADE: f32 = 0.5;

    /// Two links, default length, default fade.
    pub fn new(parent: usize, child: usize) -> LinkSpec {
        LinkSpec {
            parent,
            child,
            count: Self::DEFAULT_COUNT,
            total_length_m: None,
            normal_fade: Self::DEFAULT_NORMAL_FADE,
        }
    }
}

/// Per-node bone dimensions (Weber rigs carry these), indexed by scene node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneInfo {
    /// Length of the bone along its local +X.
    pub length_m: Vec<f32>,
    /// Radius of the body around the node's origin (its joint with its parent).
    pub joint_radius_m: Vec<f32>,
}

impl BoneInfo {
    /// §9's default total link length for the joint at `child`:
    /// `0.3 · length(child) + 1.5 · joint_radius(child)`; `None` when `child` is out of range.
    pub fn default_total_length_m(&self, child: usize) -> Option<f32> {
        Some(0.3 * self.length_m.get(child)? + 1.5 * self.joint_radius_m.get(child)?)
    }
}

/// One inserted link node (indices into the linked scene).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The link's own node.
    pub node: usize,
    /// Parent bone `P`; the link node's parent.
    pub parent: usize,
    /// Child bone `C` whose local rotation the link shares.
    pub child: usize,
    /// `k / (N + 1)`: the share of the child's rotation this link carries.
    pub fraction: f32,
    /// Index of the [`LinkSpec`] it came from.
    pub spec: usize,
    /// The child's fixed local transform when the child is a `matrix` node (which animation
    /// cannot move); `None` = read the child's local from the pose.
    pub child_fixed: Option<Trs>,
    /// The child's rest local rotation: the link carries `fraction` of the child's rotation
    /// away from it ([`link_rotation`]).
    pub rest_rotation: Quat,
}

/// What [`LinkPoseJob`] needs every frame, plus the node index map of the new scene.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkRig {
    /// Every inserted link, in spec order, then in order of `k`.
    pub links: Vec<Link>,
    /// Node count of the linked scene.
    pub node_count: usize,
    /// Old scene node index → linked scene node index.
    pub old_to_new: Vec<usize>,
    /// Per spec: the zone length used.
    pub total_length_m: Vec<f32>,
}

/// What [`insert_links`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    /// Link nodes inserted over all specs.
    pub links_added: usize,
    /// Skins that received links.
    pub skins_changed: usize,
    /// Primitives whose weights were reassigned.
    pub primitives_changed: usize,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Vertices where `P`'s weight was split between two or more children (by weight or by
    /// radial zone).
    pub fork_vertices: usize,
    /// Vertices where the normal-derived fade returned some weight to the parent.
    pub faded_vertices: usize,
    /// Vertices weighted to a linked parent and to none of its children that lie inside a
    /// link zone (the slab; at a fork, a child's radial zone): their parent weight was
    /// reassigned by position like the rest of the zone.
    pub parent_only_in_zone: usize,
    /// Vertices weighted to a linked parent and to none of its children that lie inside a
    /// fork child's slab but beyond its radial limit, and in no zone: left unchanged.
    pub parent_only_skipped: usize,
    /// Largest number of non-zero influences on a vertex of the affected primitives.
    pub max_influences_before: usize,
    /// Largest number of non-zero influences on a vertex after reassignment.
    pub max_influences_after: usize,
    /// Largest `SkinWeights::width` after reassignment.
    pub max_width_after: usize,
    /// Largest `|Σw − 1|` over the vertices of the affected primitives.
    pub max_sum_deviation_before: f32,
    /// Largest `|Σw − 1|` after reassignment.
    pub max_sum_deviation_after: f32,
    /// `max_influences_after > 8`: beyond what the GPU path supports.
    pub exceeds_gpu_limit: bool,
}

/// `q^f` on the shortest arc: the rotation about `q`'s axis by `f` times its angle, with `q`
/// and `−q` giving the same result (the angle taken in `[0, π]`). The half angle comes from
/// `atan2(|v|, w)`, which keeps its relative precision for small angles (where `acos(w)`
/// loses it), so tiny rotations scale to within an ulp or two; f32 throughout (an f64 version
/// cost twice as much in the per-frame link stage and still rounds its result to f32).
/// Zero or non-finite input gives identity.
pub fn rotation_fraction(q: Quat, f: f32) -> Quat {
    let len = q.length();
    if !(len.is_finite() && len > 0.0) {
        return Quat::IDENTITY;
    }
    let mut q = q / len;
    if q.w < 0.0 {
        q = -q;
    }
    let v = q.xyz();
    let s = v.length();
    if s < 1e-37 {
        return Quat::IDENTITY;
    }
    let (sin_h, cos_h) = (s.atan2(q.w) * f).sin_cos();
    let a = v * (sin_h / s);
    Quat::from_xyzw(a.x, a.y, a.z, cos_h)
}

/// A link's local rotation: the child's rest rotation `rest`, then `f` of the child's rotation
/// away from rest, `rest · rotation_fraction(rest⁻¹ · current, f)` (shortest arc). At rest the
/// link lies along the child, whatever angle the child makes with its parent (a thigh hangs
/// 180° from the pelvis it joins, where a share of the rotation from identity has no
/// preferred arc); for a child whose rest rotation is the identity (a straight limb) this is
/// `rotation_fraction(current, f)`.
pub fn link_rotation(rest: Quat, current: Quat, f: f32) -> Quat {
    let (rest, share) = link_share(rest, current, f);
    with_rest(rest, share)
}

/// The parts of [`link_rotation`]: the normalised rest rotation (`None` when it has no
/// direction) and `rotation_fraction(rest⁻¹ · current, f)`.
#[inline]
fn link_share(rest: Quat, current: Quat, f: f32) -> (Option<Quat>, Quat) {
    let rest = rest.normalize();
    if !rest.is_finite() {
        return (None, rotation_fraction(current, f));
    }
    (Some(rest), rotation_fraction(rest.inverse() * current, f))
}

/// `rest · share`, normalised (`share` alone without a rest rotation).
#[inline]
fn with_rest(rest: Option<Quat>, share: Quat) -> Quat {
    match rest {
        Some(r) => (r * share).normalize(),
        None => share,
    }
}

/// Most links a child carries for which [`LinkPoseJob`] multiplies the first link's share instead
/// of calling the trigonometry again (Weber, "Run-Time Skin Deformation", §Bone Links uses 2–3
/// links; a longer product would also gather rounding).
const MAX_SHARE_POWER: u32 = 8;

/// [`link_share`] and [`with_rest`] for four links at once, one per lane of glam's 4-wide
/// `Vec4` (SSE2 on x86-64): the same steps with the `atan2` and `sin_cos` of
/// [`rotation_fraction`] as branch-free Cephes polynomials
/// ([`crate::math::atan2_first_quadrant4`], [`crate::math::sin_cos_first_quadrant4`]). The
/// four chains of square roots, divisions and polynomials run side by side instead of one
/// after another (the humanoid's eight linked joints: two calls instead of eight scalar chains).
/// Each lane is within a few 1e-7 rad of [`link_rotation`] (tested). Returns per lane the
/// normalised rest rotation, the share, the link's rotation, and that of a link with twice the
/// fraction (the second of a child's links, from the same share).
fn link_shares4(rest: [Quat; 4], current: [Quat; 4], f: Vec4) -> [Shares; 4] {
    use glam::Mat4;
    let lanes = |q: [Quat; 4]| {
        let m = Mat4::from_cols(q[0].into(), q[1].into(), q[2].into(), q[3].into()).transpose();
        [m.x_axis, m.y_axis, m.z_axis, m.w_axis]
    };
    let dot4 = |a: [Vec4; 4], b: [Vec4; 4]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    let scale = |a: [Vec4; 4], k: Vec4| [a[0] * k, a[1] * k, a[2] * k, a[3] * k];
    let select = |m: glam::BVec4A, a: [Vec4; 4], b: [Vec4; 4]| {
        [0, 1, 2, 3].map(|i| Vec4::select(m, a[i], b[i]))
    };
    // Hamilton product a·b, lane by lane (glam's `Quat * Quat`).
    let mul = |a: [Vec4; 4], b: [Vec4; 4]| {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    };
    let identity = [Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::ONE];
    // link_share: the rest rotation normalised; without a direction, no rest (identity).
    let r = lanes(rest);
    let r = scale(r, Vec4::ONE / dot4(r, r).sqrt());
    let rest_ok = r[0].is_finite_mask()
        & r[1].is_finite_mask()
        & r[2].is_finite_mask()
        & r[3].is_finite_mask();
    let r = select(rest_ok, r, identity);
    // rest⁻¹ · current (the conjugate: rest is unit).
    let q = mul([-r[0], -r[1], -r[2], r[3]], lanes(current));
    // rotation_fraction: unit, w ≥ 0, half angle atan2(|v|, w) scaled by f.
    let len = dot4(q, q).sqrt();
    let q = scale(q, Vec4::ONE / len);
    let q = scale(
        q,
        Vec4::select(q[3].cmplt(Vec4::ZERO), -Vec4::ONE, Vec4::ONE),
    );
    let s = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
    let ok = len.is_finite_mask() & len.cmpgt(Vec4::ZERO) & s.cmpge(Vec4::splat(1e-37));
    let (sin_h, cos_h) =
        crate::math::sin_cos_first_quadrant4(crate::math::atan2_first_quadrant4(s, q[3]) * f);
    let k = sin_h / s;
    let share = select(ok, [q[0] * k, q[1] * k, q[2] * k, cos_h], identity);
    // with_rest: rest · share, normalised (the share alone without a rest).
    let rotation = mul(r, share);
    let rotation = select(
        rest_ok,
        scale(rotation, Vec4::ONE / dot4(rotation, rotation).sqrt()),
        share,
    );
    // The second link of the same child: rest · share², normalised.
    let square = mul(share, share);
    let rotation2 = mul(r, square);
    let rotation2 = select(
        rest_ok,
        scale(rotation2, Vec4::ONE / dot4(rotation2, rotation2).sqrt()),
        square,
    );
    let back = |a: [Vec4; 4]| {
        let m = Mat4::from_cols(a[0], a[1], a[2], a[3]).transpose();
        [m.x_axis, m.y_axis, m.z_axis, m.w_axis].map(Quat::from_vec4)
    };
    let (r, share, rotation, rotation2) = (back(r), back(share), back(rotation), back(rotation2));
    let rest_ok = rest_ok.bitmask();
    [0, 1, 2, 3].map(|i| Shares {
        rest: ((rest_ok >> i) & 1 == 1).then_some(r[i]),
        share: share[i],
        rotation: rotation[i],
        rotation2: rotation2[i],
    })
}

/// One lane of [`link_shares4`].
#[derive(Clone, Copy)]
struct Shares {
    /// The normalised rest rotation (`None` when it has no direction).
    rest: Option<Quat>,
    /// `rotation_fraction(rest⁻¹ · current, f)`.
    share: Quat,
    /// The link's rotation: `rest · share`, normalised.
    rotation: Quat,
    /// The rotation of a link with twice the fraction: `rest · share²`, normalised.
    rotation2: Quat,
}

fn node_local_rest(node: &Node) -> Trs {
    match node.matrix {
        Some(m) => {
            let (scale, rotation, translation) = m.to_scale_rotation_translation();
            Trs {
                translation,
                rotation,
                scale,
            }
        }
        None => node.rest,
    }
}

fn rule(n: u32, msg: impl Into<String>) -> Error {
    Error::job("insert_links", n, msg)
}

/// Geometry of one spec within one skin.
struct SpecGeom {
    child_joint: u32,
    /// Skin joint indices of the links, in order.
    link_joints: Vec<u32>,
    joint: DVec3,
    axis: DVec3,
    length: f64,
    fade: f64,
    /// Distance from the child's axis at which a vertex stops belonging to this zone (forks
    /// only; full membership within half of it): twice the child's joint radius, or the zone
    /// length when the joint radius is unknown.
    radial_limit: f64,
}

/// All specs of one parent within one skin.
struct Group {
    parent_joint: u32,
    /// Every child of the parent (old hierarchy) that is in the skin.
    children: Vec<u32>,
    specs: Vec<SpecGeom>,
}

/// Insert bone links for `specs` (see the module documentation) and reassign the weights of
/// every primitive skinned with an affected skin. Returns the new scene, the per-frame rig and
/// what changed. `bones` is indexed by `scene` node; it gives the zone length of specs without
/// `total_length_m` and, where it has one, the child's joint radius for the radial limit of a
/// fork's zone (missing entries are fine for specs with a length).
///
/// Validation rules (`Error::Job` named `insert_links`):
/// 1. every spec's `parent` and `child` are in range and `child`'s parent is `parent`;
/// 2. `count` is at least 1 (and at most 64);
/// 3. the zone length (given, or from `bones` at `child`) is finite and positive;
/// 4. `normal_fade` is finite and in `[0, 1]`;
/// 5. no child appears in two specs;
/// 6. a mesh whose weights change is drawn with one skin only;
/// 7. its weights are not negative (a native rig's muscle bones give their parents negative
///    weights, which the links would split from the muscle's own).
pub fn insert_links(
    scene: &Scene,
    specs: &[LinkSpec],
    bones: &BoneInfo,
) -> Result<(Scene, LinkRig, LinkStats)> {
    let n_old = scene.nodes.len();
    let mut lengths = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        if s.parent >= n_old || s.child >= n_old || scene.nodes[s.child].parent != Some(s.parent) {
            return Err(rule(
                1,
                format!(
                    "specs[{i}]: node {} is not a child of node {} in a scene of {n_old} nodes",
                    s.child, s.parent
                ),
            ));
        }
        if s.count == 0 || s.count > 64 {
            return Err(rule(
                2,
                format!("specs[{i}]: link count {} is not in 1..=64", s.count),
            ));
        }
        let len = match s.total_length_m {
            Some(l) => l,
            None => bones
                .default_total_length_m(s.child)
                .ok_or_else(|| rule(3, format!("specs[{i}]: no bone length/joint radius for node {} (BoneInfo has {}/{} entries)", s.child, bones.length_m.len(), bones.joint_radius_m.len())))?,
        };
        if !(len.is_finite() && len > 0.0) {
            return Err(rule(
                3,
                format!("specs[{i}]: zone length {len} is not finite and positive"),
            ));
        }
        if !(s.normal_fade.is_finite() && (0.0..=1.0).contains(&s.normal_fade)) {
            return Err(rule(
                4,
                format!("specs[{i}]: normal_fade {} is not in [0, 1]", s.normal_fade),
            ));
        }
        if specs[..i].iter().any(|o| o.child == s.child) {
            return Err(rule(
                5,
                format!(
                    "specs[{i}]: node {} is already linked by an earlier spec",
                    s.child
                ),
            ));
        }
        lengths.push(len);
    }

    // Raw nodes: the old nodes at their old indices (parents stay valid raw indices), then the
    // links. source_index temporarily holds the raw index so the built order can be mapped.
    let mut raw_nodes: Vec<Node> = scene.nodes.clone();
    for (i, node) in raw_nodes.iter_mut().enumerate() {
        node.source_index = i;
    }
    // Per spec: raw indices of its links.
    let mut spec_links: Vec<Vec<usize>> = Vec::with_capacity(specs.len());
    let mut link_meta: Vec<(usize, f32)> = Vec::new(); // (spec, fraction) per raw link
    for (si, s) in specs.iter().enumerate() {
        let child = &scene.nodes[s.child];
        let child_local = node_local_rest(child);
        let base = child
            .name
            .clone()
            .unwrap_or_else(|| format!("node{}", s.child));
        let mut v = Vec::with_capacity(s.count);
        for k in 1..=s.count {
            let f = k as f32 / (s.count + 1) as f32;
            let raw = raw_nodes.len();
            raw_nodes.push(Node {
                name: Some(format!("{base}_link{k}")),
                source_index: raw,
                parent: Some(s.parent),
                rest: Trs {
                    translation: child_local.translation,
                    rotation: link_rotation(child_local.rotation, child_local.rotation, f),
                    scale: Vec3::ONE,
                },
                matrix: None,
                mesh: None,
                skin: None,
                morph_weights: None,
            });
            link_meta.push((si, f));
            v.push(raw);
        }
        spec_links.push(v);
    }

    // Children lists of the old hierarchy.
    let mut children = vec![Vec::new(); n_old];
    for (i, node) in scene.nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            children[p].push(i);
        }
    }

    // Skins: append links, and collect per skin the weight groups.
    let mut skins = scene.skins.clone();
    let mut skin_groups: Vec<Vec<Group>> = Vec::with_capacity(skins.len());
    let mut stats = LinkStats {
        links_added: link_meta.len(),
        ..Default::default()
    };
    for skin in skins.iter_mut() {
        let joint_of = |node: usize| {
            skin.joints
                .iter()
                .position(|&j| j == node)
                .map(|p| p as u32)
        };
        let mut groups: Vec<Group> = Vec::new();
        let mut new_joints = Vec::new();
        let mut new_jfb = Vec::new();
        let old_count = skin.joints.len();
        for (si, s) in specs.iter().enumerate() {
            let (Some(jp), Some(jc)) = (joint_of(s.parent), joint_of(s.child)) else {
                continue;
            };
            let jfb_p = skin.joint_from_bind[jp as usize].as_dmat4();
            let bind_p = jfb_p.inverse();
            let bind_c = skin.joint_from_bind[jc as usize].as_dmat4().inverse();
            let (_, r, t) = (jfb_p * bind_c).to_scale_rotation_translation();
            let rest_c = node_local_rest(&scene.nodes[s.child]).rotation;
            let mut link_joints = Vec::with_capacity(s.count);
            for k in 1..=s.count {
                let f = k as f32 / (s.count + 1) as f32;
                let rf = link_rotation(rest_c, r.as_quat(), f).as_dquat();
                let bind_link = bind_p * DMat4::from_rotation_translation(rf, t);
                link_joints.push((old_count + new_joints.len()) as u32);
                new_joints.push(spec_links[si][k - 1]);
                new_jfb.push(bind_link.inverse().as_mat4());
            }
            let geom = SpecGeom {
                child_joint: jc,
                link_joints,
                joint: bind_c.transform_point3(DVec3::ZERO),
                axis: bind_c.transform_vector3(DVec3::X).normalize_or_zero(),
                length: lengths[si] as f64,
                fade: s.normal_fade as f64,
                radial_limit: match bones.joint_radius_m.get(s.child) {
                    Some(&r) if r.is_finite() && r > 0.0 => 2.0 * r as f64,
                    _ => lengths[si] as f64,
                },
            };
            match groups.iter_mut().find(|g| g.parent_joint == jp) {
                Some(g) => g.specs.push(geom),
                None => groups.push(Group {
                    parent_joint: jp,
                    children: children[s.parent]
                        .iter()
                        .filter_map(|&c| joint_of(c))
                        .collect(),
                    specs: vec![geom],
                }),
            }
        }
        // Deepest parent (highest node index) first.
        groups.sort_by_key(|g| std::cmp::Reverse(skin.joints[g.parent_joint as usize]));
        if !new_joints.is_empty() {
            stats.skins_changed += 1;
        }
        skin.joints.extend(new_joints);
        skin.joint_from_bind.extend(new_jfb);
        skin_groups.push(groups);
    }

    // Weights: each mesh drawn with an affected skin.
    let mut meshes = scene.meshes.clone();
    for (mi, mesh) in meshes.iter_mut().enumerate() {
        let mut used: Vec<usize> = scene
            .draws
            .iter()
            .filter(|d| d.mesh == mi)
            .filter_map(|d| d.skin)
            .collect();
        used.sort_unstable();
        used.dedup();
        let affected: Vec<usize> = used
            .iter()
            .copied()
            .filter(|&s| !skin_groups[s].is_empty())
            .collect();
        if affected.is_empty() {
            continue;
        }
        if used.len() > 1 {
            return Err(rule(
                6,
                format!(
                    "meshes[{mi}] is drawn with skins {used:?}; bone links need one skin per mesh"
                ),
            ));
        }
        let groups = &skin_groups[affected[0]];
        for (pi, prim) in mesh.primitives.iter_mut().enumerate() {
            let Some(w) = prim.skin_weights.as_ref() else {
                continue;
            };
            if let Some(k) = w.weights.iter().position(|&x| x < 0.0) {
                return Err(rule(
                    7,
                    format!(
                        "meshes[{mi}].primitives[{pi}]: vertex {} has a negative weight (a \
                         muscle bone's parent); bone links need weights of 0 or more",
                        k / w.width.max(1)
                    ),
                ));
            }
            let (new_w, changed) = reassign(
                w,
                &prim.positions,
                prim.normals.as_deref(),
                groups,
                &mut stats,
            );
            stats.max_influences_before = stats.max_influences_before.max(w.max_influences());
            stats.max_sum_deviation_before =
                stats.max_sum_deviation_before.max(max_sum_deviation(w));
            stats.max_influences_after = stats.max_influences_after.max(new_w.max_influences());
            stats.max_sum_deviation_after =
                stats.max_sum_deviation_after.max(max_sum_deviation(&new_w));
            stats.max_width_after = stats.max_width_after.max(new_w.width);
            if changed > 0 {
                stats.primitives_changed += 1;
                stats.vertices_changed += changed;
            }
            prim.skin_weights = Some(new_w);
        }
    }
    stats.exceeds_gpu_limit = stats.max_influences_after > GPU_MAX_INFLUENCES;

    // Nodes shown: exactly the old draws (their nodes as roots), so validation covers what it
    // covered before; the draw list itself is carried over unchanged below.
    let mut roots: Vec<usize> = scene.draws.iter().map(|d| d.node).collect();
    roots.sort_unstable();
    roots.dedup();
    if roots.is_empty() && n_old < raw_nodes.len() {
        roots.push(n_old); // a link: shows nothing with a mesh
    }
    let raw = RawScene {
        name: scene.name.clone(),
        nodes: raw_nodes,
        meshes,
        skins,
        animations: scene.animations.clone(),
        roots,
        report: scene.report.clone(),
        textures: scene.textures.clone(),
    };
    let mut built = SceneBuilder::build(raw)?;
    let total = built.nodes.len();
    let mut raw_to_new = vec![0usize; total];
    for (i, node) in built.nodes.iter().enumerate() {
        raw_to_new[node.source_index] = i;
    }
    let next_source = scene
        .nodes
        .iter()
        .map(|n| n.source_index + 1)
        .max()
        .unwrap_or(0);
    for node in built.nodes.iter_mut() {
        let r = node.source_index;
        node.source_index = if r < n_old {
            scene.nodes[r].source_index
        } else {
            next_source + (r - n_old)
        };
    }
    built.draws = scene
        .draws
        .iter()
        .map(|d| Draw {
            node: raw_to_new[d.node],
            ..*d
        })
        .collect();

    let links = link_meta
        .iter()
        .enumerate()
        .map(|(i, &(si, fraction))| {
            let child = &scene.nodes[specs[si].child];
            Link {
                node: raw_to_new[n_old + i],
                parent: raw_to_new[specs[si].parent],
                child: raw_to_new[specs[si].child],
                fraction,
                spec: si,
                child_fixed: child.matrix.map(|_| node_local_rest(child)),
                rest_rotation: node_local_rest(child).rotation,
            }
        })
        .collect();
    let rig = LinkRig {
        links,
        node_count: total,
        old_to_new: raw_to_new[..n_old].to_vec(),
        total_length_m: lengths,
    };
    Ok((built, rig, stats))
}

/// How much a vertex `r` from a fork child's axis belongs to the child's radial zone: 1 within
/// half the radial limit (the joint radius, when known), falling linearly to 0 at the limit, so
/// that weights change continuously across the zone's edge.
fn radial_membership(r: f64, radial_limit: f64) -> f64 {
    let inner = 0.5 * radial_limit;
    ((radial_limit - r) / (radial_limit - inner)).clamp(0.0, 1.0)
}

fn max_sum_deviation(w: &SkinWeights) -> f32 {
    if w.width == 0 {
        return 0.0;
    }
    w.weights
        .chunks_exact(w.width)
        .map(|ws| (ws.iter().map(|&x| x as f64).sum::<f64>() - 1.0).abs())
        .fold(0.0f64, f64::max) as f32
}

fn get(entries: &[(u32, f64)], j: u32) -> f64 {
    entries.iter().find(|e| e.0 == j).map_or(0.0, |e| e.1)
}

fn add(entries: &mut Vec<(u32, f64)>, j: u32, dw: f64) {
    match entries.iter_mut().find(|e| e.0 == j) {
        Some(e) => e.1 += dw,
        None => entries.push((j, dw)),
    }
}

/// Reassign one primitive's weights; returns the new weights and the changed vertex count.
fn reassign(
    w: &SkinWeights,
    positions: &[Vec3],
    normals: Option<&[Vec3]>,
    groups: &[Group],
    stats: &mut LinkStats,
) -> (SkinWeights, usize) {
    let n = w.vertex_count();
    let mut rows: Vec<Option<Vec<(u32, f32)>>> = vec![None; n];
    let mut entries: Vec<(u32, f64)> = Vec::new();
    let mut deltas: Vec<(u32, f64)> = Vec::new();
    let mut dist: Vec<f64> = Vec::new();
    let mut zone_s: Vec<(f64, f64)> = Vec::new();
    let mut changed = 0;
    for v in 0..n {
        let js = &w.joints[v * w.width..(v + 1) * w.width];
        let ws = &w.weights[v * w.width..(v + 1) * w.width];
        entries.clear();
        for (&j, &x) in js.iter().zip(ws) {
            if x != 0.0 {
                add(&mut entries, j, x as f64);
            }
        }
        let p = positions[v].as_dvec3();
        let normal = normals.map_or(DVec3::ZERO, |ns| ns[v].as_dvec3().normalize_or_zero());
        let mut vertex_changed = false;
        let (mut fork, mut faded) = (false, false);
        let (mut parent_only_in_zone, mut parent_only_skipped) = (false, false);
        for g in groups {
            let wp = get(&entries, g.parent_joint);
            let weighted_children = g
                .children
                .iter()
                .filter(|&&c| get(&entries, c) > 0.0)
                .count();
            let denom: f64 = g.children.iter().map(|&c| get(&entries, c).max(0.0)).sum();
            // Weighted to P and to none of P's children: P's weight belongs to the side(s)
            // whose zone holds the vertex. A parent with a single child (in the skin) has one
            // side, its zone is the slab. At a fork each linked child has a radial zone round
            // its axis (full membership within half `radial_limit`, none beyond it).
            let parent_only = wp > 0.0 && denom <= 0.0;
            let fork_parent = g.children.len() > 1;
            // Per spec: s along the child's axis and (forks) the radial-zone membership.
            zone_s.clear();
            let mut pseudo_sum = denom.max(0.0);
            for sg in &g.specs {
                let d = p - sg.joint;
                let along = d.dot(sg.axis);
                let s_raw = along / sg.length + 0.5;
                let membership = if fork_parent {
                    // Full from the zone's parent end on, fading to none one zone length
                    // further back into the parent.
                    radial_membership((d - sg.axis * along).length(), sg.radial_limit)
                        * (1.0 + s_raw).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                pseudo_sum += wp * membership;
                zone_s.push((s_raw, membership));
            }
            let mut moved_parent_only = false;
            let mut pseudo_children = 0usize;
            deltas.clear();
            let mut any_spec = false;
            for (sg, &(s_raw, membership)) in g.specs.iter().zip(zone_s.iter()) {
                let wc = get(&entries, sg.child_joint);
                let in_slab = s_raw > 0.0 && s_raw < 1.0;
                // The part of P's weight attributable to this side of the joint.
                let share = if fork_parent {
                    // Pseudo-weights: the child's own weight plus P's weight times the
                    // vertex's membership of the child's radial zone; P is split in their
                    // proportion, and what they do not cover stays on P.
                    let pseudo = wc.max(0.0) + wp * membership;
                    if pseudo > 0.0 {
                        pseudo_children += 1;
                    }
                    if parent_only && in_slab && membership <= 0.0 {
                        parent_only_skipped = true;
                    }
                    if wp > 0.0 && pseudo > 0.0 {
                        wp * pseudo / pseudo_sum.max(wp)
                    } else {
                        0.0
                    }
                } else if wc > 0.0 {
                    if wp > 0.0 && denom > 0.0 {
                        wp * wc / denom
                    } else {
                        0.0
                    }
                } else if parent_only && in_slab {
                    // One child: a P-only vertex in the slab is wholly this side's.
                    wp
                } else {
                    continue;
                };
                if wc <= 0.0 && share <= 0.0 {
                    continue;
                }
                any_spec = true;
                if parent_only && share > 0.0 && s_raw > 0.0 {
                    moved_parent_only = true;
                }
                if share > 0.0 && (weighted_children > 1 || pseudo_children > 1) {
                    fork = true;
                }
                let amount = share + wc.max(0.0);
                let nl = sg.link_joints.len();
                let s = s_raw.clamp(0.0, 1.0);
                let seg = s * (nl + 1) as f64;
                let i = (seg.floor() as usize).min(nl);
                let t = seg - i as f64;
                dist.clear();
                dist.resize(nl + 2, 0.0);
                dist[i] += 1.0 - t;
                dist[i + 1] += t;
                let link_part: f64 = dist[1..=nl].iter().sum();
                let phi = sg.fade * sg.axis.dot(normal).abs();
                if phi > 0.0 && link_part > 0.0 {
                    faded = true;
                }
                deltas.push((
                    g.parent_joint,
                    -share + amount * (dist[0] + phi * link_part),
                ));
                deltas.push((sg.child_joint, -wc.max(0.0) + amount * dist[nl + 1]));
                for (k, &lj) in sg.link_joints.iter().enumerate() {
                    deltas.push((lj, amount * (1.0 - phi) * dist[k + 1]));
                }
            }
            if moved_parent_only {
                parent_only_in_zone = true;
            }
            if !any_spec {
                continue;
            }
            for &(j, dw) in &deltas {
                if dw != 0.0 {
                    add(&mut entries, j, dw);
                    vertex_changed = true;
                }
            }
        }
        stats.fork_vertices += fork as usize;
        stats.faded_vertices += faded as usize;
        stats.parent_only_in_zone += parent_only_in_zone as usize;
        stats.parent_only_skipped += (parent_only_skipped && !parent_only_in_zone) as usize;
        if vertex_changed {
            changed += 1;
            let mut row: Vec<(u32, f32)> = entries
                .iter()
                .filter(|e| e.1.abs() > 1e-9)
                .map(|e| (e.0, e.1 as f32))
                .collect();
            row.sort_by(|a, b| b.1.total_cmp(&a.1));
            rows[v] = Some(row);
        }
    }
    let max_row = rows.iter().flatten().map(|r| r.len()).max().unwrap_or(0);
    let width = w.width.max(max_row.div_ceil(4) * 4);
    let mut out = SkinWeights {
        width,
        joints: vec![0; n * width],
        weights: vec![0.0; n * width],
    };
    for (v, row) in rows.iter().enumerate() {
        let dst = v * width;
        match row {
            Some(row) => {
                for (k, &(j, x)) in row.iter().enumerate() {
                    out.joints[dst + k] = j;
                    out.weights[dst + k] = x;
                }
            }
            None => {
                out.joints[dst..dst + w.width]
                    .copy_from_slice(&w.joints[v * w.width..(v + 1) * w.width]);
                out.weights[dst..dst + w.width]
                    .copy_from_slice(&w.weights[v * w.width..(v + 1) * w.width]);
            }
        }
    }
    (out, changed)
}

/// Poses the links from their children's current local transforms: link `k` of a child gets
/// translation = the child's local translation (the joint point in the parent frame),
/// rotation = [`link_rotation`]`(child rest rotation, child rotation, k/(N+1))` (`k/(N+1)`
/// of the child's rotation away from its rest, shortest arc; link `k` of a child is computed
/// as the `k`-th power of its first link's share, within a few ulps), scale 1.
/// Runs on the pose locals after animation (and IK), before local→model.
///
/// Validation rules:
/// 1. `locals` has one entry per node of the linked scene (`rig.node_count`);
/// 2. every link's node and child index is in range, and they differ;
/// 3. every link's fraction is finite and in `(0, 1)`;
/// 4. every child's local rotation is finite.
pub struct LinkPoseJob<'a> {
    /// Links to pose.
    pub rig: &'a LinkRig,
    /// Local transforms of the linked scene's nodes (index = node); link entries are overwritten.
    pub locals: &'a mut [Trs],
}

impl LinkPoseJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        let n = self.locals.len();
        if n != self.rig.node_count {
            return Err(Error::job(
                "LinkPoseJob",
                1,
                format!(
                    "{n} locals for a linked scene of {} nodes",
                    self.rig.node_count
                ),
            ));
        }
        for (i, l) in self.rig.links.iter().enumerate() {
            if l.node >= n || l.child >= n || l.node == l.child {
                return Err(Error::job(
                    "LinkPoseJob",
                    2,
                    format!(
                        "links[{i}]: node {} / child {} out of range or equal ({n} nodes)",
                        l.node, l.child
                    ),
                ));
            }
            if !(l.fraction.is_finite() && l.fraction > 0.0 && l.fraction < 1.0) {
                return Err(Error::job(
                    "LinkPoseJob",
                    3,
                    format!("links[{i}]: fraction {} is not in (0, 1)", l.fraction),
                ));
            }
            let q = l.child_fixed.unwrap_or(self.locals[l.child]).rotation;
            if !q.is_finite() {
                return Err(Error::job(
                    "LinkPoseJob",
                    4,
                    format!("links[{i}]: child {} has a non-finite rotation", l.child),
                ));
            }
        }
        Ok(())
    }

    /// Validate, then write every link's local transform from its child's.
    ///
    /// A child's links come in order `k = 1..N` with fractions `k/(N+1)`: the first pays for
    /// the trigonometry of [`rotation_fraction`], link `k` takes that share to the `k`-th power
    /// (quaternion products; within a few ulps of [`link_rotation`], tested). The first links
    /// of up to four children are computed together (four lanes of a vector); a link whose
    /// child is a link node still waiting to be written starts the next four, so results never
    /// depend on the batching.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let links = &self.rig.links;
        let child_of = |locals: &[Trs], l: &Link| l.child_fixed.unwrap_or(locals[l.child]);
        let mut next = 0;
        while next < links.len() {
            // Gather up to four runs: a link that needs the trigonometry, then the links that
            // take powers of its share.
            let batch = next;
            let mut runs = [(0usize, 0usize); 4];
            let mut rest = [Quat::IDENTITY; 4];
            let mut current = [Quat::IDENTITY; 4];
            let mut fraction = Vec4::splat(0.5);
            let mut count = 0;
            while count < 4 && next < links.len() {
                let pending =
                    |child: usize, end: usize| links[batch..end].iter().any(|p| p.node == child);
                let lead = &links[next];
                if pending(lead.child, next) {
                    break;
                }
                let c = child_of(self.locals, lead).rotation;
                let start = next;
                next += 1;
                while next < links.len() && !pending(links[next].child, next) {
                    let l = &links[next];
                    if share_power(lead, c, l, child_of(self.locals, l).rotation).is_none() {
                        break;
                    }
                    next += 1;
                }
                runs[count] = (start, next);
                rest[count] = lead.rest_rotation;
                current[count] = c;
                fraction[count] = lead.fraction;
                count += 1;
            }
            let shares = link_shares4(rest, current, fraction);
            for (&(start, end), shares) in runs[..count].iter().zip(&shares) {
                let lead = &links[start];
                for (i, l) in links[start..end].iter().enumerate() {
                    let c = child_of(self.locals, l);
                    // Links after the first passed `share_power` when gathered.
                    let rotation = match (i, share_ratio(lead, l)) {
                        (0, _) => shares.rotation,
                        (_, 2) => shares.rotation2,
                        (_, k) => {
                            let mut q = shares.share;
                            for _ in 1..k {
                                q *= shares.share;
                            }
                            with_rest(shares.rest, q)
                        }
                    };
                    self.locals[l.node] = Trs {
                        translation: c.translation,
                        rotation,
                        scale: Vec3::ONE,
                    };
                }
            }
        }
        Ok(())
    }
}

/// `Some(k)` when link `l` (its child's rotation `current`) is the `k`-th link of the same
/// child as `lead` (its child's rotation `lead_current`): same spec, child, rotations, and a
/// fraction `k` times the lead's, `2 ≤ k ≤ MAX_SHARE_POWER`.
fn share_power(lead: &Link, lead_current: Quat, l: &Link, current: Quat) -> Option<u32> {
    if !(lead.spec == l.spec
        && lead.child == l.child
        && lead_current == current
        && lead.rest_rotation == l.rest_rotation)
    {
        return None;
    }
    let k = share_ratio(lead, l);
    ((2..=MAX_SHARE_POWER).contains(&k) && (k as f32 * lead.fraction - l.fraction).abs() <= 1e-6)
        .then_some(k)
}

/// The whole number nearest `l.fraction / lead.fraction` (fractions are validated into
/// (0, 1); `as` truncates and saturates, and needs no libm `roundf` on the SSE2 baseline).
#[inline]
fn share_ratio(lead: &Link, l: &Link) -> u32 {
    (l.fraction / lead.fraction + 0.5) as u32
}
