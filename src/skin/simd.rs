//! The AVX2 kernel of [`super::SkinningJob`] for four-slot weights (linear blend).
//!
//! Method (seed 000 §6 and §14: the blend is the hot loop, layout decides its speed): per
//! vertex the four palette matrices are blended two columns at a time in 256-bit registers
//! straight from the `Mat4` palette (columns `x|y` and `z|w`: two loads, two multiplies and
//! two adds per influence, no shuffles), the position is transformed with one multiply, the
//! sum of the halves and two more operations, and written once (a 16-byte store whose fourth
//! lane the next vertex overwrites; the last vertex of a range writes 12 bytes). Normals by
//! the blended 3×3 take three more operations; exact normals (the cofactor of the blended
//! 3×3) run four vertices at a time in SoA form, as the portable path does; tangents are
//! re-orthogonalised against the unit normal. The CPU is asked once whether it has AVX2
//! ([`available`]); without it (or on another architecture) the portable SSE2 path runs: one
//! binary, no `target-cpu` flag.
//!
//! Every sum is taken in the portable path's order with each product rounded (no fused
//! multiply-add), so the two paths give the same bits: the portable path stays the oracle
//! with a difference bound of zero (`tests/simd.rs`), the partitioner's submeshes skin to the
//! bits of the whole mesh whichever layout each gets, and golden images do not depend on the
//! CPU. Fusing would save about a fifth of the arithmetic and give up all three.
//!
//! Cost: per vertex 8 loads, 8 multiplies and 6 adds for the blend, 4 operations for the
//! position. Limits: four-slot weights and linear blending only (the any-count layout, dual
//! quaternions and stitching use the portable path).

// The crate denies unsafe code; this module is the one place that needs it: the AVX2
// intrinsics are `unsafe` to call, and the kernel reads its arrays unchecked after checking
// each range once (and clamping joint indices), which is where its speed comes from.
#![allow(unsafe_code)]

use glam::{Mat4, Vec3, Vec4};

use super::weights::Influences4;

/// Whether this CPU runs the AVX2 kernel (x86-64 with AVX2; the answer is cached by the
/// standard library).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The kernel [`super::SkinningJob::run`] uses for four-slot weights on this CPU, in words.
pub fn kernel_name() -> &'static str {
    if available() {
        "avx2"
    } else {
        "sse2 (portable)"
    }
}

/// One range of vertices for the AVX2 kernel: the inputs, and the outputs of the range
/// starting at vertex `start`.
pub(super) struct Range<'a> {
    pub palette: &'a [Mat4],
    pub weights: &'a [Influences4],
    pub positions: &'a [Vec3],
    pub normals: Option<&'a [Vec3]>,
    pub tangents: Option<&'a [Vec4]>,
    pub normalize: bool,
    pub blend3x3: bool,
}

impl Range<'_> {
    /// Skin vertices `start..start + out_p.len()` and say so; `false` (nothing written) when
    /// this CPU lacks the features or the arrays do not cover the range, for the caller to
    /// run the portable path. Joint indices are clamped to the palette (the job's validation
    /// has already refused any beyond it), so no input reads outside its array.
    pub(super) fn skin(
        &self,
        start: usize,
        out_p: &mut [Vec3],
        out_n: Option<&mut [Vec3]>,
        out_t: Option<&mut [Vec4]>,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let n = out_p.len();
            let covered = |len: usize| start.checked_add(n).is_some_and(|end| end <= len);
            let ok = available()
                && !self.palette.is_empty()
                && self.palette.len() <= u16::MAX as usize + 1
                && covered(self.weights.len())
                && covered(self.positions.len())
                && self.normals.is_none_or(|v| covered(v.len()))
                && self.tangents.is_none_or(|v| covered(v.len()))
                && out_n.as_ref().is_none_or(|v| v.len() == n)
                && out_t.as_ref().is_none_or(|v| v.len() == n)
                && out_n.is_some() == self.normals.is_some()
                && out_t.is_some() == self.tangents.is_some();
            if ok {
                // SAFETY: the CPU has AVX2, every range lies in its array (both
                // checked above), and joint indices are clamped below the palette's length.
                unsafe { x86::skin(self, start, out_p, out_n, out_t) };
                return true;
            }
        }
        let _ = (start, out_p, out_n, out_t);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use glam::{Mat4, Vec3, Vec3A, Vec4};

    use super::Range;
    use crate::skin::cpu::unit_or_zero;
    use crate::skin::weights::Influences4;

    /// Blended columns `x|y` and `z|w` of the vertex's four palette matrices (joint indices
    /// clamped to `last`, the palette's last index).
    #[inline(always)]
    unsafe fn blend(palette: *const f32, last: u16, inf: &Influences4) -> (__m256, __m256) {
        // SAFETY (caller): `palette` holds `last + 1` Mat4s of 16 floats each.
        unsafe {
            let m = |k: usize| palette.add(inf.joints[k].min(last) as usize * 16);
            let (m0, m1, m2, m3) = (m(0), m(1), m(2), m(3));
            let w0 = _mm256_set1_ps(inf.weights[0]);
            let w1 = _mm256_set1_ps(inf.weights[1]);
            let w2 = _mm256_set1_ps(inf.weights[2]);
            let w3 = _mm256_set1_ps(inf.weights[3]);
            // ((m0·w0 + m1·w1) + m2·w2) + m3·w3, each product rounded, as the portable path
            // sums (no fused multiply-add: the two paths give the same bits).
            let col = |m: *const f32, w: __m256| _mm256_mul_ps(w, _mm256_loadu_ps(m));
            let mut a = _mm256_add_ps(col(m0, w0), col(m1, w1));
            let mut b = _mm256_add_ps(col(m0.add(8), w0), col(m1.add(8), w1));
            a = _mm256_add_ps(a, col(m2, w2));
            b = _mm256_add_ps(b, col(m2.add(8), w2));
            a = _mm256_add_ps(a, col(m3, w3));
            b = _mm256_add_ps(b, col(m3.add(8), w3));
            (a, b)
        }
    }

    /// `((x·c0 + y·c1) + z·c2) + c3` (lanes 0..3; lane 3 is the weight sum), in the portable
    /// path's order.
    #[inline(always)]
    unsafe fn transform(a: __m256, b: __m256, p: Vec3) -> __m128 {
        unsafe {
            let r = rotate(a, b, p);
            _mm_add_ps(r, _mm256_extractf128_ps::<1>(b))
        }
    }

    /// `(x·c0 + y·c1) + z·c2`: a direction through the blended 3×3, in the portable path's
    /// order.
    #[inline(always)]
    unsafe fn rotate(a: __m256, b: __m256, d: Vec3) -> __m128 {
        unsafe {
            let xy = _mm256_set_m128(_mm_set1_ps(d.y), _mm_set1_ps(d.x));
            let r = _mm256_mul_ps(a, xy);
            let sum = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r));
            _mm_add_ps(sum, _mm_mul_ps(_mm256_castps256_ps128(b), _mm_set1_ps(d.z)))
        }
    }

    /// Lanes 0..3 of `r` as a `Vec3A` (lane 3 cleared).
    #[inline(always)]
    unsafe fn vec3a(r: __m128) -> Vec3A {
        let mut f = [0.0f32; 4];
        // SAFETY: `f` holds four floats.
        unsafe { _mm_storeu_ps(f.as_mut_ptr(), r) };
        Vec3A::new(f[0], f[1], f[2])
    }

    /// Store lanes 0..3 at `dst`: 16 bytes when `room` (the fourth lane lands on the next
    /// vertex, written after), else 12.
    #[inline(always)]
    unsafe fn store3(dst: *mut f32, r: __m128, room: bool) {
        // SAFETY (caller): `dst` has 3 floats, 4 when `room`.
        unsafe {
            if room {
                _mm_storeu_ps(dst, r);
            } else {
                _mm_store_sd(dst.cast::<f64>(), _mm_castps_pd(r));
                *dst.add(2) = _mm_cvtss_f32(_mm_movehl_ps(r, r));
            }
        }
    }

    /// The blended matrix as a `Mat4` (for the cofactor normals).
    #[inline(always)]
    unsafe fn to_mat4(a: __m256, b: __m256) -> Mat4 {
        let mut m = Mat4::ZERO;
        let p = (&mut m as *mut Mat4).cast::<f32>();
        // SAFETY: a Mat4 is 16 contiguous floats.
        unsafe {
            _mm256_storeu_ps(p, a);
            _mm256_storeu_ps(p.add(8), b);
        }
        m
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn skin(
        k: &Range<'_>,
        start: usize,
        out_p: &mut [Vec3],
        out_n: Option<&mut [Vec3]>,
        out_t: Option<&mut [Vec4]>,
    ) {
        let pal = k.palette.as_ptr().cast::<f32>();
        // Checked by `Range::skin`: 1 ≤ palette length ≤ 65536.
        let last = (k.palette.len() - 1) as u16;
        let n = out_p.len();
        let op = out_p.as_mut_ptr().cast::<f32>();
        // SAFETY (caller and `Range::skin`): CPU features present; `start..start + n` lies in
        // every input; joint indices are below the palette's length; outputs have n entries.
        unsafe {
            match (out_n, k.normals, out_t, k.tangents) {
                (None, _, None, _) => {
                    for i in 0..n {
                        let v = start + i;
                        let (a, b) = blend(pal, last, k.weights.get_unchecked(v));
                        let r = transform(a, b, *k.positions.get_unchecked(v));
                        store3(op.add(3 * i), r, i + 1 < n);
                    }
                }
                (Some(on), Some(ns), None, _) if k.blend3x3 => {
                    let onp = on.as_mut_ptr().cast::<f32>();
                    for i in 0..n {
                        let v = start + i;
                        let (a, b) = blend(pal, last, k.weights.get_unchecked(v));
                        let r = transform(a, b, *k.positions.get_unchecked(v));
                        store3(op.add(3 * i), r, i + 1 < n);
                        let nr = rotate(a, b, *ns.get_unchecked(v));
                        if k.normalize {
                            *on.get_unchecked_mut(i) = unit_or_zero(vec3a(nr)).into();
                        } else {
                            store3(onp.add(3 * i), nr, i + 1 < n);
                        }
                    }
                }
                (Some(on), Some(ns), None, _) => {
                    // Exact normals: four blended matrices, then their cofactor normals in SoA.
                    let whole = n / 4 * 4;
                    for i in (0..whole).step_by(4) {
                        let v = start + i;
                        let mut m = [Mat4::ZERO; 4];
                        for (j, mj) in m.iter_mut().enumerate() {
                            let (a, b) = blend(pal, last, k.weights.get_unchecked(v + j));
                            let r = transform(a, b, *k.positions.get_unchecked(v + j));
                            store3(op.add(3 * (i + j)), r, i + j + 1 < n);
                            *mj = to_mat4(a, b);
                        }
                        let ins = [
                            *ns.get_unchecked(v),
                            *ns.get_unchecked(v + 1),
                            *ns.get_unchecked(v + 2),
                            *ns.get_unchecked(v + 3),
                        ];
                        let r = crate::skin::cpu::skin_normals4(&m, ins, k.normalize);
                        on.get_unchecked_mut(i..i + 4).copy_from_slice(&r);
                    }
                    for i in whole..n {
                        let v = start + i;
                        let (a, b) = blend(pal, last, k.weights.get_unchecked(v));
                        let r = transform(a, b, *k.positions.get_unchecked(v));
                        store3(op.add(3 * i), r, i + 1 < n);
                        let raw = crate::skin::cpu::skin_normal_unnormalized(
                            &to_mat4(a, b),
                            *ns.get_unchecked(v),
                        );
                        *on.get_unchecked_mut(i) = if k.normalize {
                            unit_or_zero(raw).into()
                        } else {
                            raw.into()
                        };
                    }
                }
                (mut on, ns, mut ot, ts) => {
                    for i in 0..n {
                        let v = start + i;
                        let (a, b) = blend(pal, last, k.weights.get_unchecked(v));
                        let r = transform(a, b, *k.positions.get_unchecked(v));
                        store3(op.add(3 * i), r, i + 1 < n);
                        let mut unit_n = Vec3A::ZERO;
                        if let (Some(on), Some(ns)) = (on.as_deref_mut(), ns) {
                            let nv = *ns.get_unchecked(v);
                            let raw = if k.blend3x3 {
                                vec3a(rotate(a, b, nv))
                            } else {
                                crate::skin::cpu::skin_normal_unnormalized(&to_mat4(a, b), nv)
                            };
                            unit_n = unit_or_zero(raw);
                            *on.get_unchecked_mut(i) = if k.normalize {
                                unit_n.into()
                            } else {
                                raw.into()
                            };
                        }
                        if let (Some(ot), Some(ts)) = (ot.as_deref_mut(), ts) {
                            let t = *ts.get_unchecked(v);
                            let r = vec3a(rotate(a, b, t.truncate()));
                            let r = if unit_n != Vec3A::ZERO {
                                r - unit_n * unit_n.dot(r)
                            } else {
                                r
                            };
                            *ot.get_unchecked_mut(i) = r.normalize_or_zero().extend(t.w);
                        }
                    }
                }
            }
        }
    }
}
