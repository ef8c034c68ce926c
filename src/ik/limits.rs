//! Joint limits as ZYX Euler boxes relative to the bone's reference rotation.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Joint Constraints; the decomposition's
//! `atan2` and `asin` are Cephes polynomials (Stephen L. Moshier).
//!
//! Method: the rotation to limit is first made relative to the reference local rotation,
//! `q_rel = q_ref⁻¹ · q` (so `q = q_ref · q_rel`: the offset is applied in the bone's own
//! reference frame). `q_rel` is decomposed into intrinsic ZYX Euler angles,
//! `q_rel = Rz(z) · Ry(y) · Rx(x)` (glam's `EulerRot::ZYX`, angles stored `[z, y, x]`): Z and Y
//! are the bending angles, X the twist about the bone. Each angle is clamped to its range and
//! the clamped angles are recomposed in the same order, `q = q_ref · Rz(z') · Ry(y') · Rx(x')`.
//!
//! What "applied in the ZYX order" means here: the order lives in the decomposition and the
//! recomposition. Y is measured in the frame left by Z and X in the frame left by Z and Y, so
//! the three limits are not independent (clamping Z changes where the Y and X arcs sit, as in
//! Weber's figure 4). Clamping Z, then Y, then X on one decomposed triple is what a
//! sequential "clamp Z, remove it, decompose the rest, clamp Y, ..." gives too, because
//! re-decomposing `Rz(z')⁻¹ · q_rel` in the same convention returns the same Y and X.
//!
//! Details that keep the result defined:
//! - An Euler triple is not unique: `(z, y, x)` and `(z+π, π−y, x+π)` are the same rotation.
//!   Both are clamped and the one whose clamped rotation is closer to `q_rel` wins, so a box
//!   with `|y| > π/2` is honoured and a rotation already inside either triple is left alone
//!   (returned bit for bit).
//! - Angles are clamped on the circle: outside its range an angle goes to the bound that is
//!   nearer going round the circle (a range of 2π or more is free; a range may cross ±π).
//! - Gimbal lock: when `|sin y| > 1 − 1e-6` (y within ≈0.08° of ±90°), Z and X are coupled
//!   (only `x − z` or `x + z` is defined). The split is read from elements that stay
//!   well-conditioned there (no `atan2(0, 0)` noise, no NaN) and chosen deterministically: the
//!   twist X nearest 0 that keeps both X and Z in range, else the in-range X nearest 0 with Z
//!   clamped. Inputs are normalised first (a zero or non-finite quaternion reads as identity).
//!
//! Fast path ([`InsideTest`]): most IK steps leave a joint well inside its box, where the
//! clamp returns its input. The box's bounds are kept as sines and cosines once (per limits,
//! not per call) and a rotation is tested against them with products and two square roots:
//! `sin y` against the sines of the Y bounds, and the directions `(r00, r10)` and
//! `(r22, r21)` of the rotation matrix, whose angles are Z and X, against each arc's middle
//! direction and half-width cosine. Only a rotation inside by a margin passes; anything else
//! (near a bound, near gimbal lock, a Y range beyond ±π/2) takes the decomposition, so the
//! fast path returns exactly what the full clamp would.
//!
//! Cost: two ZYX decompositions, up to two recompositions (a few `atan2`/`sin_cos`; the
//! decomposition's `atan2` and `asin` are inline Cephes polynomials, and a recomposition that keeps
//! Y turns `q` by the moved outer axes only), no allocation; about twenty multiplies and two square
//! roots when the fast test passes.
//!
//! Limits: an Euler box is not a convex region of rotations; near gimbal lock the choice of split
//! decides which of several nearby in-box rotations is returned.

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec4};

use crate::math::{TAN_PI_8, atan_kernel};

/// Gimbal-lock threshold on `|sin y|` (see the module documentation).
const GIMBAL_SIN: f32 = 1.0 - 1e-6;

/// Euler-box limits of one joint, relative to its reference local rotation.
/// Angles in radians, ZYX order: index 0 is Z, 1 is Y, 2 is X (twist).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lower bound per axis `[z, y, x]`, radians.
    pub min_rad: [f32; 3],
    /// Upper bound per axis `[z, y, x]`, radians.
    pub max_rad: [f32; 3],
}

impl JointLimits {
    /// No restriction on any axis.
    pub const FREE: JointLimits = JointLimits {
        min_rad: [-PI; 3],
        max_rad: [PI; 3],
    };
    /// The joint may not move away from its reference rotation.
    pub const LOCKED: JointLimits = JointLimits {
        min_rad: [0.0; 3],
        max_rad: [0.0; 3],
    };

    /// Limits from per-axis bounds `[z, y, x]` in radians, taken as given (see
    /// [`JointLimits::is_valid`]).
    pub fn new(min_rad: [f32; 3], max_rad: [f32; 3]) -> JointLimits {
        JointLimits { min_rad, max_rad }
    }

    /// Symmetric limits `[-a, a]` per axis (`[z, y, x]`).
    pub fn symmetric(half_range_rad: [f32; 3]) -> JointLimits {
        JointLimits {
            min_rad: half_range_rad.map(|a| -a.abs()),
            max_rad: half_range_rad.map(f32::abs),
        }
    }

    /// Finite bounds with `min <= max` on every axis (what `CcdJob::validate` checks).
    pub fn is_valid(&self) -> bool {
        // Without branches (`CcdJob` checks its chain joints' limits every frame): `x · 0` is
        // 0 for finite `x` and NaN for infinite or NaN `x`.
        (0..3).fold(true, |ok, i| {
            let (lo, hi) = (self.min_rad[i], self.max_rad[i]);
            ok & (lo * 0.0 + hi * 0.0 == 0.0) & (lo <= hi)
        })
    }

    /// Whether ZYX angles `[z, y, x]` lie in the box (circularly, within `tol_rad`).
    pub fn contains_euler(&self, zyx: [f32; 3], tol_rad: f32) -> bool {
        (0..3).all(|i| circular_excess(zyx[i], self.min_rad[i], self.max_rad[i]) <= tol_rad)
    }

    /// Limit a rotation given relative to the reference (`q_rel = q_ref⁻¹ · q`).
    /// Returns `q_rel` itself when it already lies in the box.
    pub fn clamp_relative(&self, q_rel: Quat) -> Quat {
        let q = normalize_or_identity(q_rel);
        let a = to_euler_zyx_unit(q);
        // sin y (the same matrix element `to_euler_zyx` reads). Gimbal lock: pick the split
        // that keeps the twist in range.
        let sin_y = 2.0 * (q.w * q.y - q.x * q.z);
        let locked = sin_y.abs() > GIMBAL_SIN;
        let a = if locked { resplit_gimbal(a, self) } else { a };
        let ca = self.clamp_angles(a);
        if ca == a && !locked {
            return q_rel;
        }
        // Only when the first triple is outside: the other triple of the same rotation.
        let b = alternate_triple(a);
        let cb = self.clamp_angles(b);
        if cb == b && !locked {
            return q_rel;
        }
        let qa = recompose(q, sin_y, a, ca);
        let qb = recompose(q, sin_y, b, cb);
        if chord2(q, qb) < chord2(q, qa) {
            qb
        } else {
            qa
        }
    }

    /// Limit `q` (a local rotation) relative to the reference local rotation `q_ref`:
    /// `q_ref · clamp(q_ref⁻¹ · q)`. Returns `q` unchanged when it is already in the box.
    pub fn clamp(&self, q_ref: Quat, q: Quat) -> Quat {
        let r = normalize_or_identity(q_ref);
        let q_rel = r.conjugate() * normalize_or_identity(q);
        let c = self.clamp_relative(q_rel);
        if c == q_rel { q } else { (r * c).normalize() }
    }

    /// [`JointLimits::clamp`] with `test` (made by [`InsideTest::new`] from these limits)
    /// answering first: the same result, without the decomposition when `q` is clearly inside.
    pub fn clamp_tested(&self, test: &InsideTest, q_ref: Quat, q: Quat) -> Quat {
        self.clamp_unit_moved(test, normalize_or_identity(q_ref), normalize_or_identity(q))
            .unwrap_or(q)
    }

    /// [`JointLimits::clamp_tested`] for `r_unit` and `q_unit` already normalised (what
    /// `normalize_or_identity` returned): the same result without normalising them again,
    /// for a solver that normalises once per step.
    #[inline]
    pub(crate) fn clamp_tested_unit(&self, test: &InsideTest, r_unit: Quat, q_unit: Quat) -> Quat {
        self.clamp_unit_moved(test, r_unit, q_unit)
            .unwrap_or(q_unit)
    }

    /// The clamped rotation `r · clamp(r⁻¹ · q)` of unit `r` and `q`, or `None` when `q` is
    /// in the box (the inside test first, the decomposition only when it cannot tell).
    #[inline]
    fn clamp_unit_moved(&self, test: &InsideTest, r: Quat, q: Quat) -> Option<Quat> {
        let q_rel = r.conjugate() * q;
        if test.contains_unit(q_rel) {
            return None;
        }
        let c = self.clamp_relative(q_rel);
        (c != q_rel).then(|| (r * c).normalize())
    }

    fn clamp_angles(&self, a: [f32; 3]) -> [f32; 3] {
        [
            clamp_angle(a[0], self.min_rad[0], self.max_rad[0]),
            clamp_angle(a[1], self.min_rad[1], self.max_rad[1]),
            clamp_angle(a[2], self.min_rad[2], self.max_rad[2]),
        ]
    }
}

/// How far inside a bound a rotation must be for [`InsideTest`] to pass, in units of the
/// tested cosines and sines (≈ radians near a bound): 1e-5 is a hundred times the rounding of
/// the test and of `atan2`/`asin` in the decomposition it stands in for, so whatever passes
/// would also have been found inside by the full clamp.
const INSIDE_MARGIN: f32 = 1e-5;

/// A circular range `[lo, hi]` as its middle direction and half-width cosine: the angle of a
/// direction `(c, s)` lies in it when `(c, s) · (cos mid, sin mid) ≥ cos(half) · |(c, s)|`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ArcTest {
    /// The range covers the whole circle.
    all: bool,
    cos_mid: f32,
    sin_mid: f32,
    /// `cos(half width) + INSIDE_MARGIN`.
    cos_half: f32,
}

impl ArcTest {
    fn new(lo: f32, hi: f32) -> ArcTest {
        let width = hi - lo;
        let (sin_mid, cos_mid) = (0.5 * (lo + hi)).sin_cos();
        // `clamp_angle` tries a and a ± 2π for a in (-π, π]: bounds beyond ±2π may hold
        // angles it does not find, so such a range never passes (2 > any cosine).
        let usable = lo >= -TAU && hi <= TAU;
        ArcTest {
            all: width >= TAU,
            cos_mid,
            sin_mid,
            cos_half: if usable {
                (0.5 * width).cos() + INSIDE_MARGIN
            } else {
                2.0
            },
        }
    }

    /// `dot ≥ cos_half · |(c, s)|`, squared (no square root): for a non-negative right side
    /// both sides must be non-negative, for a negative one a non-negative dot always passes.
    #[inline]
    fn contains(&self, c: f32, s: f32) -> bool {
        if self.all {
            return true;
        }
        let dot = c * self.cos_mid + s * self.sin_mid;
        let rhs2 = self.cos_half * self.cos_half * (c * c + s * s);
        if self.cos_half >= 0.0 {
            dot >= 0.0 && dot * dot >= rhs2
        } else {
            dot >= 0.0 || dot * dot <= rhs2
        }
    }
}

/// A joint's limits as sines and cosines: a trig-free test that a relative rotation lies
/// clearly inside the box (see the module documentation). Make it once per [`JointLimits`]
/// (six `sin_cos`), then use [`JointLimits::clamp_tested`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InsideTest {
    z: ArcTest,
    x: ArcTest,
    /// `sin y` bounds with the margin; empty (lo > hi) when Y's range misses [-π/2, π/2].
    sin_y: [f32; 2],
    /// The other triple `(z+π, π−y, x+π)`: its Y, `π − y ∈ [π/2, 3π/2]`, is in range when
    /// `sin y` lies in `[0]` (that Y within `[π/2, π]` of the range) or `[1]` (within
    /// `[−π, −π/2]` going round); empty intervals where the range does not reach there.
    alt_sin_y: [[f32; 2]; 2],
}

impl InsideTest {
    /// The test for `limits` (any limits: boxes it cannot speed up always answer "no").
    pub fn new(limits: &JointLimits) -> InsideTest {
        let [zlo, ylo, xlo] = limits.min_rad;
        let [zhi, yhi, xhi] = limits.max_rad;
        // On [-π/2, π/2] (where the decomposition puts y) sin increases; the other triple's
        // Y lies in [π/2, π] or, one turn down, in [-π, -π/2], where sin decreases. Bounds
        // past ±π are not followed round (such a range only misses the fast path).
        let increasing = |lo: f32, hi: f32| {
            if lo <= hi {
                [lo.sin() + INSIDE_MARGIN, hi.sin() - INSIDE_MARGIN]
            } else {
                [1.0, -1.0]
            }
        };
        let decreasing = |lo: f32, hi: f32| {
            if lo <= hi {
                [hi.sin() + INSIDE_MARGIN, lo.sin() - INSIDE_MARGIN]
            } else {
                [1.0, -1.0]
            }
        };
        let sin_y = increasing(ylo.max(-PI / 2.0), yhi.min(PI / 2.0));
        let alt_sin_y = [
            decreasing(ylo.max(PI / 2.0), yhi.min(PI)),
            decreasing(ylo.max(-PI), yhi.min(-PI / 2.0)),
        ];
        InsideTest {
            z: ArcTest::new(zlo, zhi),
            x: ArcTest::new(xlo, xhi),
            sin_y,
            alt_sin_y,
        }
    }

    /// Whether `q_rel` (relative to the reference; any length) is inside the box by the
    /// margin, away from gimbal lock. `false` says nothing: the full clamp decides.
    pub fn clearly_contains(&self, q_rel: Quat) -> bool {
        self.contains_unit(normalize_or_identity(q_rel))
    }

    /// [`InsideTest::clearly_contains`] for a quaternion of unit length to within a few ulps
    /// (a product of unit quaternions; the margin covers that rounding).
    #[inline]
    fn contains_unit(&self, q: Quat) -> bool {
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        // The same matrix elements `to_euler_zyx` reads.
        let sy = -2.0 * (x * z - w * y);
        // NaN fails this too.
        let clear_of_gimbal_lock = sy.abs() < GIMBAL_SIN - INSIDE_MARGIN;
        if !clear_of_gimbal_lock {
            return false;
        }
        let r10 = 2.0 * (x * y + w * z);
        let r00 = 1.0 - 2.0 * (y * y + z * z);
        let r21 = 2.0 * (y * z + w * x);
        let r22 = 1.0 - 2.0 * (x * x + y * y);
        // The first triple (z, y, x); else the other one, whose Z and X directions are
        // the opposite vectors (angles + π).
        (sy >= self.sin_y[0]
            && sy <= self.sin_y[1]
            && self.z.contains(r00, r10)
            && self.x.contains(r22, r21))
            || (self.alt_sin_y.iter().any(|&[lo, hi]| sy >= lo && sy <= hi)
                && self.z.contains(-r00, -r10)
                && self.x.contains(-r22, -r21))
    }
}

/// Squared chordal distance between two rotations (sign-aligned): ≈ (angle/2)², and unlike
/// `1 − |dot|` it resolves angles far below the f32 resolution of a dot product near 1.
fn chord2(a: Quat, b: Quat) -> f32 {
    (Vec4::from(a) - Vec4::from(b))
        .length_squared()
        .min((Vec4::from(a) + Vec4::from(b)).length_squared())
}

/// Unit quaternion, or identity for a zero / non-finite one.
#[inline]
pub(crate) fn normalize_or_identity(q: Quat) -> Quat {
    let l2 = q.length_squared();
    if l2.is_finite() && l2 > 1e-30 {
        q * l2.sqrt().recip()
    } else {
        Quat::IDENTITY
    }
}

/// `Rz(a[0]) · Ry(a[1]) · Rx(a[2])` (the same rotation as glam's `EulerRot::ZYX`).
pub fn from_euler_zyx(a: [f32; 3]) -> Quat {
    (Quat::from_rotation_z(a[0]) * Quat::from_rotation_y(a[1]) * Quat::from_rotation_x(a[2]))
        .normalize()
}

/// Decompose a rotation into intrinsic ZYX angles `[z, y, x]` with `q = Rz(z)·Ry(y)·Rx(x)`,
/// `y ∈ [-π/2, π/2]`, `z, x ∈ (-π, π]`. At gimbal lock (`|sin y| > 1 − 1e-6`) X is set to 0
/// and Z carries the coupled angle. Never NaN for finite input (zero input reads as identity).
pub fn to_euler_zyx(q: Quat) -> [f32; 3] {
    to_euler_zyx_unit(normalize_or_identity(q))
}

/// [`to_euler_zyx`] of a quaternion already normalised.
#[inline]
fn to_euler_zyx_unit(q: Quat) -> [f32; 3] {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    // Rotation matrix elements r[row][col] of the unit quaternion.
    let r20 = 2.0 * (x * z - w * y);
    let sy = (-r20).clamp(-1.0, 1.0);
    if sy.abs() > GIMBAL_SIN {
        let r01 = 2.0 * (x * y - w * z);
        let r11 = 1.0 - 2.0 * (x * x + z * z);
        // y = +π/2: R = Rz(z)Ry(π/2)Rx(x) depends on x − z = atan2(r01, r11);
        // y = −π/2: depends on x + z = atan2(−r01, r11). Take x = 0.
        if sy > 0.0 {
            [wrap(-(r01.atan2(r11))), PI / 2.0, 0.0]
        } else {
            [wrap((-r01).atan2(r11)), -PI / 2.0, 0.0]
        }
    } else {
        let r21 = 2.0 * (y * z + w * x);
        let r22 = 1.0 - 2.0 * (x * x + y * y);
        let r10 = 2.0 * (x * y + w * z);
        let r00 = 1.0 - 2.0 * (y * y + z * z);
        [
            wrap(atan2_poly(r10, r00)),
            asin_poly(sy),
            wrap(atan2_poly(r21, r22)),
        ]
    }
}

/// Above this `|sin y|` [`recompose`] builds the rotation from its angles: the decomposition's
/// rounding grows as `1 / cos y` (here at most 7×, a few 1e-7 rad), which the shortcut would
/// carry into the result.
const RECOMPOSE_SIN_MAX: f32 = 0.99;

/// The rotation with ZYX angles `to`, for a unit `q` whose angles are `from` and whose
/// `sin y` is `sin_y`. When Y is unchanged and `q` is clear of gimbal lock, only the moved
/// outer axes are applied to `q` itself, `Rz(Δz) · q · Rx(Δx)` (the same rotation:
/// `Rz(Δz)·Rz(z)·Ry(y)·Rx(x)·Rx(Δx)`; one `sin_cos` per moved axis instead of three and two
/// products); otherwise [`from_euler_zyx`].
#[inline]
fn recompose(q: Quat, sin_y: f32, from: [f32; 3], to: [f32; 3]) -> Quat {
    if to[1] != from[1] || sin_y.is_nan() || sin_y.abs() > RECOMPOSE_SIN_MAX {
        return from_euler_zyx(to);
    }
    let mut r = q;
    if to[0] != from[0] {
        r = Quat::from_rotation_z(wrap(to[0] - from[0])) * r;
    }
    if to[2] != from[2] {
        r *= Quat::from_rotation_x(wrap(to[2] - from[2]));
    }
    r
}

/// `atan2(y, x)` in [−π, π] for the decomposition: Cephes' single-precision kernel (S. L.
/// Moshier, `atanf.c`: the ratio of the smaller to the larger magnitude, reduced above
/// tan(π/8), a degree-9 odd polynomial: [`atan_kernel`]) with the octant put back. Within
/// 3e-7 rad of the f64 value (1.1 ulps of π; tested), inline and about half the cost of
/// libm's `atan2f` here.
/// Zero, infinite or NaN input goes to `f32::atan2`.
#[inline]
fn atan2_poly(y: f32, x: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    let (lo, hi) = if ay > ax { (ax, ay) } else { (ay, ax) };
    if !(hi > 0.0 && ax + ay < f32::INFINITY) {
        return y.atan2(x);
    }
    let a = lo / hi;
    let (base, r) = if a > TAN_PI_8 {
        (PI / 4.0, (a - 1.0) / (a + 1.0))
    } else {
        (0.0, a)
    };
    let mut t = base + atan_kernel(r);
    if ay > ax {
        t = PI / 2.0 - t;
    }
    if x.is_sign_negative() {
        t = PI - t;
    }
    if y.is_sign_negative() { -t } else { t }
}

/// `asin(x)` for `x` in [−1, 1] (Cephes `asinf.c`: `x + x³·p(x²)` on [0, ½], above it
/// `π/2 − 2·asin(√((1 − x)/2))`). Within 2.5e-7 rad of the f64 value (tested); NaN outside.
#[inline]
fn asin_poly(x: f32) -> f32 {
    let a = x.abs();
    if a.is_nan() || a > 1.0 {
        return f32::NAN;
    }
    let (s, z, big) = if a > 0.5 {
        let z = 0.5 * (1.0 - a);
        (z.sqrt(), z, true)
    } else {
        (a, a * a, false)
    };
    let p = ((((4.216_32e-2 * z + 2.418_131e-2) * z + 4.547_002_6e-2) * z + 7.495_300_3e-2) * z
        + 1.666_675_2e-1)
        * z
        * s
        + s;
    let r = if big { PI / 2.0 - (p + p) } else { p };
    if x.is_sign_negative() { -r } else { r }
}

/// At gimbal lock `to_euler_zyx` gives x = 0 and z = z0; the same rotation is
/// `(z0 + x, y, x)` for y = +π/2 (x − z fixed) and `(z0 − x, y, x)` for y = −π/2 (x + z fixed).
/// Choose the twist x nearest 0 that keeps both x and z in range when such an x exists,
/// otherwise the in-range twist nearest 0 (z is then clamped as usual).
fn resplit_gimbal(a: [f32; 3], l: &JointLimits) -> [f32; 3] {
    let (zlo, zhi, xlo, xhi) = (l.min_rad[0], l.max_rad[0], l.min_rad[2], l.max_rad[2]);
    let z0 = a[0];
    // Twists that put z in [zlo, zhi] (before wrapping z).
    let (lo, hi) = if a[1] > 0.0 {
        (zlo - z0, zhi - z0)
    } else {
        (z0 - zhi, z0 - zlo)
    };
    let mut x = clamp_angle(0.0, xlo, xhi);
    for shift in [0.0, TAU, -TAU] {
        let (ilo, ihi) = ((lo + shift).max(xlo), (hi + shift).min(xhi));
        if ilo <= ihi {
            x = 0.0f32.clamp(ilo, ihi);
            break;
        }
    }
    let z = if a[1] > 0.0 { z0 + x } else { z0 - x };
    [wrap(z), a[1], wrap(x)]
}

/// The other ZYX triple of the same rotation: `(z+π, π−y, x+π)`, wrapped to (-π, π].
fn alternate_triple(a: [f32; 3]) -> [f32; 3] {
    [wrap(a[0] + PI), wrap(PI - a[1]), wrap(a[2] + PI)]
}

/// Wrap an angle to (-π, π].
#[inline]
pub(crate) fn wrap(a: f32) -> f32 {
    if a > -PI && a <= PI {
        return a;
    }
    // One turn off (sums and differences of wrapped angles): no division.
    let r = if a > PI && a < 3.0 * PI {
        a - TAU
    } else if a <= -PI && a > -3.0 * PI {
        a + TAU
    } else {
        (a + PI).rem_euclid(TAU) - PI
    };
    if r <= -PI { r + TAU } else { r }
}

/// How far (radians, ≥ 0) the angle `a` lies outside `[lo, hi]` going round the circle.
pub(crate) fn circular_excess(a: f32, lo: f32, hi: f32) -> f32 {
    if hi - lo >= TAU {
        return 0.0;
    }
    for c in [a, a + TAU, a - TAU] {
        if c >= lo && c <= hi {
            return 0.0;
        }
    }
    wrap(a - lo).abs().min(wrap(a - hi).abs())
}

/// Clamp an angle to `[lo, hi]` on the circle: unchanged when some `a + 2πk` is inside,
/// otherwise the bound nearer going round.
pub(crate) fn clamp_angle(a: f32, lo: f32, hi: f32) -> f32 {
    if hi - lo >= TAU {
        return a;
    }
    for c in [a, a + TAU, a - TAU] {
        if c >= lo && c <= hi {
            return a;
        }
    }
    if wrap(a - lo).abs() <= wrap(a - hi).abs() {
        lo
    } else {
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{EulerRot, Vec3};

    /// Robust near 0 (acos of a dot product in f32 is not: ±3e-4 rad at identity).
    fn angle_between(a: Quat, b: Quat) -> f32 {
        let d = a.conjugate() * b;
        2.0 * d.xyz().length().atan2(d.w.abs())
    }

    /// SplitMix64 in [0, 1): seeded, reproducible inputs.
    fn unit_random(state: &mut u64) -> f32 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }

    #[test]
    fn polynomial_atan2_and_asin_match_f64() {
        let mut worst = [0.0f64; 2];
        let mut atan2_at = |y: f32, x: f32| {
            let (got, want) = (atan2_poly(y, x), (y as f64).atan2(x as f64));
            assert!(
                (got as f64 - want).abs() < 3e-7,
                "atan2({y}, {x}) = {got}, f64 {want}"
            );
            // Near 0 the error stays relative (two ulps of the result).
            assert!(
                (got as f64 - want).abs() <= 2.0 * f32::EPSILON as f64 * want.abs()
                    || want.abs() > 1e-3,
                "atan2({y}, {x}) = {got}, f64 {want}"
            );
            worst[0] = worst[0].max((got as f64 - want).abs());
        };
        // Every direction round the circle at several lengths, octant edges and their
        // neighbours, random pairs and tiny ratios.
        for i in 0..100_000 {
            let t = (i as f64 / 100_000.0) * std::f64::consts::TAU - std::f64::consts::PI;
            for len in [1e-20f64, 1.0, 3e7] {
                atan2_at((t.sin() * len) as f32, (t.cos() * len) as f32);
            }
        }
        let mut seed = 7;
        for _ in 0..100_000 {
            let y = unit_random(&mut seed) * 4.0 - 2.0;
            let x = unit_random(&mut seed) * 4.0 - 2.0;
            atan2_at(y, x);
            atan2_at(y * 1e-6, x);
        }
        for (y, x) in [
            (1.0f32, 1.0f32),
            (TAN_PI_8, 1.0),
            (1.0, TAN_PI_8),
            (1e-30, -1.0),
        ] {
            for s in [1.0f32, -1.0] {
                for yy in [y, y.next_up(), y.next_down()] {
                    atan2_at(yy * s, x);
                    atan2_at(x, yy * s);
                }
            }
        }
        for (y, x) in [
            (0.0f32, 0.0f32),
            (-0.0, -1.0),
            (1.0, 0.0),
            (f32::INFINITY, 1.0),
        ] {
            assert_eq!(
                atan2_poly(y, x).to_bits(),
                y.atan2(x).to_bits(),
                "({y}, {x})"
            );
        }
        assert!(atan2_poly(f32::NAN, 1.0).is_nan() && atan2_poly(1.0, f32::NAN).is_nan());
        let mut asin_at = |x: f32| {
            let (got, want) = (asin_poly(x), (x as f64).asin());
            let err = (got as f64 - want).abs();
            assert!(
                err < 2.5e-7
                    && (want.abs() > 1e-3 || err <= 2.0 * f32::EPSILON as f64 * want.abs()),
                "asin({x}) = {got}, f64 {want}"
            );
            worst[1] = worst[1].max((got as f64 - want).abs());
        };
        for i in 0..=200_000 {
            asin_at(i as f32 / 100_000.0 - 1.0);
        }
        for _ in 0..100_000 {
            asin_at(unit_random(&mut seed) * 2.0 - 1.0);
            asin_at((unit_random(&mut seed) - 0.5) * 1e-5);
        }
        for x in [0.5f32, -0.5, 1.0, -1.0, 0.0, 1e-30] {
            asin_at(x);
            asin_at(x.next_up().min(1.0));
            asin_at(x.next_down().max(-1.0));
        }
        assert!(asin_poly(1.0f32.next_up()).is_nan() && asin_poly(f32::NAN).is_nan());
        assert!(worst[0] < 3e-7 && worst[1] < 2.5e-7, "{worst:?}");
    }

    /// The shortcut recomposition equals the full one: random rotations clear of gimbal lock,
    /// the outer axes moved by anything up to a turn, Y unchanged.
    #[test]
    fn recompose_matches_from_euler() {
        let mut seed = 3;
        let mut r = |lo: f32, hi: f32| lo + (hi - lo) * unit_random(&mut seed);
        for _ in 0..20_000 {
            let a = [r(-PI, PI), r(-1.4, 1.4), r(-PI, PI)];
            let q = from_euler_zyx(a);
            let sin_y = 2.0 * (q.w * q.y - q.x * q.z);
            let (dz, dx) = (r(-PI, PI), r(-PI, PI));
            for to in [
                [a[0] + dz, a[1], a[2]],
                [a[0], a[1], a[2] + dx],
                [a[0] + dz, a[1], a[2] + dx],
            ] {
                let got = recompose(q, sin_y, a, to);
                let want = from_euler_zyx(to);
                assert!(angle_between(got, want) < 2e-6, "{a:?} -> {to:?}");
                assert!((got.length() - 1.0).abs() < 1e-6);
            }
            // Y moved, or gimbal lock near: the full recomposition itself.
            let to = [a[0], a[1] + 0.1, a[2]];
            assert_eq!(recompose(q, sin_y, a, to), from_euler_zyx(to));
            assert_eq!(
                recompose(q, 0.995, a, [a[0] + dz, a[1], a[2]]),
                from_euler_zyx([a[0] + dz, a[1], a[2]])
            );
        }
    }

    #[test]
    fn limits_are_valid_only_when_finite_and_ordered() {
        assert!(JointLimits::symmetric([0.1, 0.2, 0.3]).is_valid());
        assert!(JointLimits::LOCKED.is_valid() && JointLimits::FREE.is_valid());
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        for (lo, hi) in [
            (-inf, inf),
            (-inf, 0.0),
            (0.0, inf),
            (nan, 0.0),
            (0.0, nan),
            (0.2, 0.1),
        ] {
            for axis in 0..3 {
                let mut l = JointLimits::symmetric([0.5; 3]);
                l.min_rad[axis] = lo;
                l.max_rad[axis] = hi;
                assert!(!l.is_valid(), "axis {axis}: [{lo}, {hi}]");
            }
        }
    }

    #[test]
    fn euler_matches_glam_zyx() {
        let cases = [
            [0.3, -0.7, 1.2],
            [-2.9, 1.5, 0.1],
            [3.0, -0.2, -3.0],
            [0.0, 0.0, 0.0],
        ];
        for a in cases {
            let g = Quat::from_euler(EulerRot::ZYX, a[0], a[1], a[2]);
            let m = from_euler_zyx(a);
            assert!(angle_between(g, m) < 1e-5, "{a:?}");
            let back = to_euler_zyx(m);
            for i in 0..3 {
                assert!(wrap(back[i] - a[i]).abs() < 1e-4, "{a:?} -> {back:?}");
            }
        }
    }

    #[test]
    fn gimbal_lock_is_finite_and_exact() {
        for (z, x) in [(0.4f32, -0.3f32), (-2.0, 2.5), (0.0, 0.0)] {
            for y in [PI / 2.0, -PI / 2.0, PI / 2.0 - 1e-5] {
                let q = from_euler_zyx([z, y, x]);
                let a = to_euler_zyx(q);
                assert!(a.iter().all(|v| v.is_finite()));
                assert!(
                    angle_between(from_euler_zyx(a), q) < 2e-3,
                    "{z} {y} {x}: {a:?}"
                );
                let c = JointLimits::symmetric([0.2, 1.0, 0.1]).clamp_relative(q);
                assert!(c.is_finite());
            }
        }
    }

    #[test]
    fn inside_box_is_identity() {
        let l = JointLimits::symmetric([0.5, 0.5, 0.5]);
        let q = from_euler_zyx([0.2, -0.3, 0.4]);
        assert_eq!(l.clamp_relative(q), q);
        let r = Quat::from_rotation_y(1.0);
        let qq = r * q;
        assert_eq!(l.clamp(r, qq), qq);
    }

    #[test]
    fn clamps_each_axis() {
        let l = JointLimits::new([-0.1, -0.2, -0.3], [0.1, 0.2, 0.3]);
        let c = to_euler_zyx(l.clamp_relative(from_euler_zyx([1.0, -1.0, 0.25])));
        assert!(
            (c[0] - 0.1).abs() < 1e-5 && (c[1] + 0.2).abs() < 1e-5 && (c[2] - 0.25).abs() < 1e-5,
            "{c:?}"
        );
        // Locked: back to the reference.
        let r = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
        let c = JointLimits::LOCKED.clamp(r, Quat::from_rotation_x(2.0));
        assert!(angle_between(c, r) < 1e-5);
    }

    #[test]
    fn wide_y_range_uses_alternate_triple() {
        // y = 2.0 rad is outside the canonical [-π/2, π/2] but the box allows it.
        let l = JointLimits::new([-0.1, -2.5, -0.1], [0.1, 2.5, 0.1]);
        let q = from_euler_zyx([0.0, 2.0, 0.0]);
        assert_eq!(l.clamp_relative(q), q);
    }

    #[test]
    fn circular_clamp() {
        // Range crossing ±π.
        assert_eq!(clamp_angle(-3.0, 2.5, 3.5), -3.0);
        // Nearer bound going round: -3.0 is 0.78 from 2.5 but 2.0 from -1.0.
        assert_eq!(clamp_angle(-3.0, -1.0, 2.5), 2.5);
        assert_eq!(clamp_angle(0.5, -0.2, 0.2), 0.2);
        assert_eq!(wrap(3.0 * PI), PI);
        assert!((wrap(-PI - 0.1) - (PI - 0.1)).abs() < 1e-6);
    }
}
