//! Small math layer over glam: the TRS transform, the normal matrix and f64 mirrors used by
//! the reference path. Matrices follow the `a_from_b` naming: `model_from_joint` maps joint
//! space into model space (column vectors, `p_model = model_from_joint * p_joint`).

use glam::{DMat3, DMat4, DQuat, DVec3, Mat4, Quat, Vec3, Vec4};

/// Local transform of a node: translation, rotation, scale (applied scale first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    /// Translation in the parent's space (metres for our rigs).
    pub translation: Vec3,
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Scale per local axis.
    pub scale: Vec3,
}

impl Default for Trs {
    fn default() -> Self {
        Trs::IDENTITY
    }
}

/// Xorshift64 (Marsaglia, "Xorshift RNGs", 2003: shifts 13, 7, 17), floats from the top 24
/// bits: ozz_bench's generator, which the ozz workload draws from (`crowd::ozz`), and the unit
/// tests' seeded inputs. Not for anything that needs unpredictability.
#[derive(Clone, Copy, Debug)]
pub(crate) struct XorShift64(pub(crate) u64);

impl XorShift64 {
    /// The next float in [0, 1).
    pub(crate) fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// The next float in [lo, hi).
    pub(crate) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
}

/// Ask the CPU to bring every 64-byte line of `data` into its caches ahead of use
/// (`PREFETCHT0`, Intel's and AMD's optimisation manuals), without waiting for it: a hint that
/// changes no result. One instruction a line; nothing off x86-64.
#[inline]
pub fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = data.as_ptr().cast::<i8>();
        for offset in (0..std::mem::size_of_val(data)).step_by(64) {
            #[allow(unsafe_code)]
            // SAFETY: a prefetch reads nothing and cannot fault; the address lies in `data`.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Whether this CPU has AVX2 and FMA (x86-64 with both; the standard library caches the
/// answer): the fast kernels' and passes' runtime dispatch, so one portable binary uses them
/// where they exist.
pub fn avx2_fma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl Trs {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Trs = Trs {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// `parent_from_local` as a matrix: T * R * S.
    #[inline]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// The same matrix computed in f64 (rotation normalised in f64 first).
    pub fn to_dmat4(&self) -> DMat4 {
        let q = DQuat::from_xyzw(
            self.rotation.x as f64,
            self.rotation.y as f64,
            self.rotation.z as f64,
            self.rotation.w as f64,
        );
        let q = if q.length_squared() > 0.0 {
            q.normalize()
        } else {
            DQuat::IDENTITY
        };
        DMat4::from_scale_rotation_translation(
            self.scale.as_dvec3(),
            q,
            self.translation.as_dvec3(),
        )
    }
}

/// Matrix that maps normals under `m` (f64): the inverse-transpose of its upper 3x3, as
/// cofactor / determinant, so it is exact for non-uniform scale and keeps the sign for
/// mirrored matrices. `None` for singular input.
pub fn dnormal_matrix(m: &DMat3) -> Option<DMat3> {
    let det = m.determinant();
    if !det.is_finite() || det.abs() < f64::MIN_POSITIVE {
        return None;
    }
    let c0 = m.y_axis.cross(m.z_axis);
    let c1 = m.z_axis.cross(m.x_axis);
    let c2 = m.x_axis.cross(m.y_axis);
    Some(DMat3::from_cols(c0 / det, c1 / det, c2 / det))
}

/// Re-orthogonalise a skinned tangent against the skinned normal (Gram-Schmidt), unit length;
/// any perpendicular unit vector when the two are parallel.
pub fn dorthogonalize_tangent(t: DVec3, n: DVec3) -> DVec3 {
    let t = t - n * n.dot(t);
    let len = t.length();
    if len > 1e-300 {
        t / len
    } else {
        n.any_orthonormal_vector()
    }
}

/// Element-wise finite check for matrices coming from files.
pub fn mat4_is_finite(m: &Mat4) -> bool {
    m.to_cols_array().iter().all(|x| x.is_finite())
}

/// tan(π/8): Cephes' `atanf` reduces a ratio above it through `π/4 + atan((a − 1)/(a + 1))`.
pub(crate) const TAN_PI_8: f32 = 0.414_213_57;

/// Cephes' single-precision `atanf` kernel (S. L. Moshier, `atanf.c`): `atan(r)` for
/// `|r| ≤ tan(π/8)` as `r + r·z·p(z)`, `z = r²`, `p` of degree 3. Generic so that the scalar
/// decomposition (`ik::limits`) and the four-lane [`atan2_first_quadrant4`] share one
/// polynomial.
#[inline]
pub(crate) fn atan_kernel<T>(r: T) -> T
where
    T: Copy
        + std::ops::Mul<Output = T>
        + std::ops::Add<Output = T>
        + std::ops::Add<f32, Output = T>,
    f32: std::ops::Mul<T, Output = T>,
{
    let z = r * r;
    let p = ((8.053_744_6e-2 * z + -1.387_768_5e-1) * z + 1.997_771_1e-1) * z + -3.333_295e-1;
    p * z * r + r
}

/// `atan2(y, x)` in each of four lanes, for `y ≥ 0` and `x ≥ 0` not both zero (the half angle
/// of a quaternion from `|v|` and `w ≥ 0`): the ratio of the smaller to the larger, reduced
/// above tan(π/8), [`atan_kernel`], then `π/2 − t` where `y > x`. Branch-free on glam's
/// 4-wide `Vec4` (SSE2 on x86-64). Within 3e-7 rad of the f64 value (tested); lanes outside
/// the domain give unspecified values, which callers mask.
#[inline]
pub(crate) fn atan2_first_quadrant4(y: Vec4, x: Vec4) -> Vec4 {
    let swap = y.cmpgt(x);
    let a = y.min(x) / y.max(x);
    let big = a.cmpgt(Vec4::splat(TAN_PI_8));
    let r = Vec4::select(big, (a - 1.0) / (a + 1.0), a);
    let base = Vec4::select(big, Vec4::splat(std::f32::consts::FRAC_PI_4), Vec4::ZERO);
    let t = base + atan_kernel(r);
    Vec4::select(swap, std::f32::consts::FRAC_PI_2 - t, t)
}

/// π/2 in three parts whose sum carries ~72 bits (Cephes' `DP1..DP3` for π/4, doubled), so
/// `x − π/2` loses nothing in f32.
const FRAC_PI_2_PARTS: [f32; 3] = [1.570_312_5, 4.837_513e-4, 7.549_79e-8];

/// `(sin a, cos a)` in each of four lanes for `a` in `[0, π/2]`: Cephes' `sinf`/`cosf`
/// polynomials on `[0, π/4]`, and above it on `a − π/2` (in three parts, exact) with
/// `sin a = cos(a − π/2)`, `cos a = −sin(a − π/2)`. Branch-free; within 1.2e-7 of the f64
/// values (tested). Lanes outside `[0, π/2]` give unspecified values.
#[inline]
pub(crate) fn sin_cos_first_quadrant4(a: Vec4) -> (Vec4, Vec4) {
    let high = a.cmpgt(Vec4::splat(std::f32::consts::FRAC_PI_4));
    let [p0, p1, p2] = FRAC_PI_2_PARTS;
    let x = Vec4::select(high, ((a - p0) - p1) - p2, a);
    let z = x * x;
    let sin = ((-1.951_529_6e-4 * z + 8.332_161e-3) * z + -1.666_665_5e-1) * z * x + x;
    let cos = ((2.443_315_7e-5 * z + -1.388_731_6e-3) * z + 4.166_664_6e-2) * z * z - 0.5 * z + 1.0;
    (Vec4::select(high, cos, sin), Vec4::select(high, -sin, cos))
}

/// The median of `v` (the upper of the two middle values for an even count; 0 when empty),
/// sorting `v` in place: what the benchmarks report of their timed runs.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The element-wise median of `matrices` (None when empty): what a set of skinning matrices
/// shares when most agree and a few stand out (`diff`'s joint check, `check`'s bind pose).
pub fn elementwise_median(matrices: &[Mat4]) -> Option<Mat4> {
    if matrices.is_empty() {
        return None;
    }
    let mut cols = [0.0f32; 16];
    let mut column = Vec::with_capacity(matrices.len());
    for (k, out) in cols.iter_mut().enumerate() {
        column.clear();
        column.extend(matrices.iter().map(|m| m.to_cols_array()[k]));
        column.sort_unstable_by(f32::total_cmp);
        *out = column[column.len() / 2];
    }
    Some(Mat4::from_cols_array(&cols))
}

/// Blender's "XYZ" Euler angles of `q` in radians: about X, then Y, then Z (`R = Rz · Ry · Rx`).
/// The one home of the Euler convention the bone panel and the curves panel show.
pub fn euler_xyz_rad(q: Quat) -> Vec3 {
    let (z, y, x) = q.to_euler(glam::EulerRot::ZYX);
    Vec3::new(x, y, z)
}

/// The box around the finite points (NaN or infinite ones skipped), `None` when none is
/// finite. The one home of bounds: the skinned vertices' ([`crate::skin::bounds`]), the
/// camera's framing, `check`, `diff`, the dump's scale and the partition's all take theirs here.
pub fn finite_bounds(points: impl IntoIterator<Item = Vec3>) -> Option<(Vec3, Vec3)> {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    for p in points.into_iter().filter(|p| p.is_finite()) {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (lo.x <= hi.x).then_some((lo, hi))
}

/// The eight corners of the box `(lo, hi)`: corner `i` takes `hi`'s x, y or z where bit 0, 1
/// or 2 of `i` is set (so corners one bit apart share an edge).
pub fn box_corners((lo, hi): (Vec3, Vec3)) -> [Vec3; 8] {
    std::array::from_fn(|i| {
        Vec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    })
}

/// The length of a box's diagonal ([`finite_bounds`]), in f32: the one home of the model's
/// scale; [`bounds_diagonal_f64`] measures the same corners in f64.
pub fn bounds_diagonal((lo, hi): (Vec3, Vec3)) -> f32 {
    (hi - lo).length()
}

/// [`bounds_diagonal`] in f64 (the f32 corners' difference taken exactly).
pub fn bounds_diagonal_f64((lo, hi): (Vec3, Vec3)) -> f64 {
    (hi.as_dvec3() - lo.as_dvec3()).length()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Non-finite points are left out; none finite is no box.
    #[test]
    fn finite_bounds_skip_non_finite_points() {
        let b = finite_bounds([
            Vec3::new(1.0, -2.0, 0.5),
            Vec3::NAN,
            Vec3::new(-1.0, 2.0, f32::INFINITY),
        ]);
        assert_eq!(
            b,
            Some((Vec3::new(1.0, -2.0, 0.5), Vec3::new(1.0, -2.0, 0.5)))
        );
        assert_eq!(finite_bounds([Vec3::NAN]), None);
        let b = (Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0));
        assert_eq!((bounds_diagonal(b), bounds_diagonal_f64(b)), (5.0, 5.0));
    }

    /// Dense sweep of the first quadrant against f64 `atan2`, ratios from 0 to ∞ both ways.
    #[test]
    fn atan2_first_quadrant4_matches_f64() {
        let mut worst = 0.0f64;
        for i in 0..=20_000 {
            let angle = std::f64::consts::FRAC_PI_2 * i as f64 / 20_000.0;
            for scale in [1e-30f64, 1e-3, 1.0, 7.5, 1e30] {
                let (y, x) = ((angle.sin() * scale) as f32, (angle.cos() * scale) as f32);
                if y == 0.0 && x == 0.0 {
                    continue;
                }
                let got = atan2_first_quadrant4(Vec4::splat(y), Vec4::splat(x));
                let want = (y as f64).atan2(x as f64);
                for lane in got.to_array() {
                    worst = worst.max((lane as f64 - want).abs());
                }
            }
        }
        assert!(worst < 3e-7, "worst {worst:e} rad");
        // Lanes are independent: four different inputs give the four scalar answers.
        let got =
            atan2_first_quadrant4(Vec4::new(0.0, 1.0, 0.3, 5.0), Vec4::new(1.0, 0.0, 0.9, 0.2));
        for (g, (y, x)) in
            got.to_array()
                .into_iter()
                .zip([(0.0f64, 1.0f64), (1.0, 0.0), (0.3, 0.9), (5.0, 0.2)])
        {
            assert!(
                (g as f64 - y.atan2(x)).abs() < 3e-7,
                "{g} vs atan2({y}, {x})"
            );
        }
    }

    /// Dense sweep of `[0, π/2]` (and its ends) against f64 `sin` and `cos`.
    #[test]
    fn sin_cos_first_quadrant4_matches_f64() {
        let mut worst = 0.0f64;
        let n = 50_000;
        for i in 0..=n {
            let a = (std::f64::consts::FRAC_PI_2 * i as f64 / n as f64) as f32;
            let a = a.min(std::f32::consts::FRAC_PI_2);
            let (s, c) = sin_cos_first_quadrant4(Vec4::new(a, a, a, 0.0));
            let (ws, wc) = (a as f64).sin_cos();
            worst = worst
                .max((s.x as f64 - ws).abs())
                .max((c.x as f64 - wc).abs());
            assert_eq!((s.w, c.w), (0.0, 1.0));
        }
        assert!(worst < 1.2e-7, "worst {worst:e}");
        // Small angles keep their relative precision (sin a ≈ a).
        let (s, _) = sin_cos_first_quadrant4(Vec4::splat(1e-20));
        assert_eq!(s.x, 1e-20);
    }
}
