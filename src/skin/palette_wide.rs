//! The gradient palette's products in 512-bit registers, one whole `Mat4` a register.
//!
//! Based on: the column form of a 4×4 product, `(A·B)[:, j] = Σₖ A[:, k] · B[k][j]`, as glam's
//! `Mat4 * Mat4` evaluates it on SSE2 (one column at a time, each coordinate spread with a
//! shuffle); here the four columns of the result are the four 128-bit lane groups of one
//! register.
//!
//! Method: per joint, `joint_from_bind` is loaded whole; for each k, one in-lane shuffle spreads
//! row k (lane group j gets `B[k][j]` four times), column k of `model_from_joint` is broadcast
//! from memory to the four groups, and the products are summed for k = 0 to 3, multiplies and
//! adds apart (never fused), in glam's order: the same bits as `Mat4 * Mat4`.
//!
//! Cost per joint: one 64-byte load, four 16-byte broadcast loads, four shuffles, four
//! multiplies, three adds and one 64-byte store (glam's SSE2 product: sixteen shuffles, sixteen
//! multiplies, twelve adds and four stores). Measured in BENCHMARKS.md (crowd section).
//!
//! Limits: x86-64 CPUs with AVX-512F only, chosen at run time (`palette::joint_products`);
//! elsewhere the portable product runs.

#![allow(unsafe_code)]

use glam::Mat4;

/// `out[i] = model_from_node[joints[i]] · joint_from_bind[i]` over the shortest of the three
/// (a joint past `model_from_node` reads as identity), each product as described above.
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn joint_products_avx512(
    joints: &[usize],
    joint_from_bind: &[Mat4],
    model_from_node: &[Mat4],
    out: &mut [Mat4],
) {
    use std::arch::x86_64::{
        _mm_loadu_ps, _mm512_add_ps, _mm512_broadcast_f32x4, _mm512_loadu_ps, _mm512_mul_ps,
        _mm512_permute_ps, _mm512_storeu_ps,
    };
    for ((slot, &node), b) in out.iter_mut().zip(joints).zip(joint_from_bind) {
        let a = super::palette::model_of(model_from_node, node);
        let a = std::ptr::from_ref(&a).cast::<f32>();
        // SAFETY: `a`, `b` and `slot` each point at a whole `Mat4` (16 `f32`s, columns back
        // to back); the loads and the store are unaligned.
        unsafe {
            let b = _mm512_loadu_ps(std::ptr::from_ref(b).cast::<f32>());
            let column = |k: usize| _mm512_broadcast_f32x4(_mm_loadu_ps(a.add(4 * k)));
            let mut sum = _mm512_mul_ps(column(0), _mm512_permute_ps::<0x00>(b));
            sum = _mm512_add_ps(sum, _mm512_mul_ps(column(1), _mm512_permute_ps::<0x55>(b)));
            sum = _mm512_add_ps(sum, _mm512_mul_ps(column(2), _mm512_permute_ps::<0xAA>(b)));
            sum = _mm512_add_ps(sum, _mm512_mul_ps(column(3), _mm512_permute_ps::<0xFF>(b)));
            _mm512_storeu_ps(std::ptr::from_mut(slot).cast::<f32>(), sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wide products give glam's `Mat4 * Mat4` bit for bit, on matrices with any last row
    /// and on zeros of either sign, infinities and NaN; a joint past the model matrices reads
    /// as identity, and the shortest of the three slices decides how many are written.
    #[test]
    fn wide_products_give_glams_bits() {
        if !crate::skin::simd::avx512f() {
            return; // nothing to compare on this CPU: the portable product is the only one
        }
        let mut rng = crate::math::XorShift64(0x9E37_79B9_7F4A_7C15);
        let mut r = move || {
            let x = rng.range(-4.0, 4.0);
            match rng.0 % 97 {
                0 => -0.0,
                1 => f32::INFINITY,
                2 => f32::NAN,
                _ => x,
            }
        };
        let mut random = || Mat4::from_cols_array(&std::array::from_fn(|_| r()));
        let models: Vec<Mat4> = (0..40).map(|_| random()).collect();
        let binds: Vec<Mat4> = (0..33).map(|_| random()).collect();
        let joints: Vec<usize> = (0..35).map(|j| (j * 7) % 45).collect();
        let mut out = vec![Mat4::ZERO; 34];
        // SAFETY: the CPU has AVX-512F (checked above).
        unsafe { joint_products_avx512(&joints, &binds, &models, &mut out) };
        let bits = |m: &Mat4| m.to_cols_array().map(f32::to_bits);
        for (i, got) in out.iter().enumerate() {
            let want = match (joints.get(i), binds.get(i)) {
                (Some(&j), Some(b)) => models.get(j).copied().unwrap_or(Mat4::IDENTITY) * *b,
                _ => Mat4::ZERO,
            };
            assert_eq!(bits(got), bits(&want), "entry {i}");
        }
    }
}
