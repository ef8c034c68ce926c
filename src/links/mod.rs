//! Bone links: extra small bones inserted at a joint so that linear blend skinning only ever
//! blends between frames a fraction of the joint angle apart.
//!
//! # Based on
//! Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex Blending to §Bone Links: why
//! blending fails at a wide joint, the links, their weights by relative X position, the split
//! at forks and the normal-derived fade. The fork pseudo-weights and the parent-only vertices
//! inside the zone, which make §9's split continuous, are the project's own; the per-frame
//! trigonometry uses Cephes polynomials (Stephen L. Moshier).
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
//! further links of a child take products of its share, so for the usual two or three links
//! the trigonometry runs once per linked child; each link adds one node to local→model and
//! one palette matrix per skin holding it.
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

mod insert;
mod pose;
mod reassign;

pub use insert::insert_links;
pub use pose::LinkPoseJob;

use glam::Quat;

use crate::math::Trs;

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
