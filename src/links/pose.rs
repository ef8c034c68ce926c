//! Per frame: [`LinkPoseJob`] poses every link from its child's current local transform.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Bone Links (each link an even share of the
//! child's rotation); Cephes polynomials (Stephen L. Moshier) for the lanes' `atan2` and
//! `sin_cos`. Method: link `k` of `N` takes `k/(N+1)` of the child's rotation away from its
//! rest, along the shortest arc, the first links of four children at a time in the lanes of a
//! 4-wide vector and a child's further links from products of that share (see
//! [`crate::links`]). Cost: one quaternion power per linked child, one product per further
//! link. Limits: the child's scale is not shared out, and a child rotated past 180° from its
//! rest flips its links to the other side.

use glam::{Quat, Vec3, Vec4};

use super::{Link, LinkRig, with_rest};
use crate::error::{Error, Result};
use crate::math::Trs;

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
///
/// [`link_share`]: super::link_share
/// [`rotation_fraction`]: super::rotation_fraction
/// [`link_rotation`]: super::link_rotation
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
///
/// [`link_rotation`]: super::link_rotation
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
    ///
    /// [`rotation_fraction`]: super::rotation_fraction
    /// [`link_rotation`]: super::link_rotation
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
