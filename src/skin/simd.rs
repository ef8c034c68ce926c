//! The AVX2 + FMA kernels of [`super::SkinningJob`]: linear blend skinning, four-slot and any-count
//! weights.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §6 and §14 (the blend is the hot loop, and
//! layout decides its speed); the two-phase kernel below is the project's own method.
//!
//! Method: vertices go in blocks of 32, in two phases:
//!
//! 1. **Per vertex, array-of-structures**: the weights record ([`super::weights::Packed4`]:
//!    four joints as one 32- or 64-bit load, four weights broadcast from memory or decoded in
//!    one register; or the any-count layout's influences) selects the palette matrices; they
//!    are blended two columns at a time in 256-bit registers straight from the `Mat4` palette
//!    (`x|y` and `z|w`: two fused multiply-adds per influence, in slot order) or, on CPUs
//!    with AVX-512F ([`Kernel::Avx512Blend`], four-slot weights; [`Kernel::fastest`] says
//!    where it is chosen), whole in one 512-bit register (one load and one fused multiply-add
//!    per influence: the same lanes in the same order, so the same bits); the position is
//!    transformed (one permute, a multiply, a fused multiply-add, two adds) and written once
//!    ([`Kernel::Avx512Broadcast`] reads each vector's coordinates as three broadcast loads
//!    instead of spreading them across lanes with shuffles: the same arithmetic).
//!    Normals go through the blended 3×3 (blend3x3) or its cofactor with the determinant's
//!    sign (exact: the inverse-transpose up to scale; two cross products and a combination, in
//!    phase 2), tangents through the blended 3×3; where nothing more is asked (raw
//!    blended-3×3 normals, raw tangents) they are written here too, otherwise kept in a small
//!    scratch.
//! 2. **Eight vertices at a time, structure-of-arrays** (sixteen on the AVX-512 kernels:
//!    `x86/sixteen.rs`): the scratch is transposed (eight rows of four floats to four
//!    registers of eight lanes) and normals are renormalised, tangents (unless asked raw) made
//!    perpendicular to the unit normal and renormalised, with IEEE square roots and divisions
//!    on all lanes at once, then transposed back and written. Doing this per block rather than
//!    per vertex keeps the long normalisation chains out of the per-vertex dependency chain,
//!    which is what bounded a per-vertex kernel; blocks of 32 vertices measured faster than
//!    blocks of 8 (with sixteen lanes, blocks of 16 and of 64 measured up to 18 % and 12 %
//!    slower than 32).
//!
//! Determinism: only IEEE operations with one rounding each (fused multiply-add, square root,
//! division; no reciprocal estimates), so the results are the same bits on every x86-64 with
//! AVX2 and FMA, and each vertex goes through the same operations wherever it falls in a block
//! (padding lanes do not touch it): a submesh skins to the bits of the whole mesh. The portable
//! path (SSE2, no fused multiply-add, per-vertex normalisation) rounds differently; the two
//! agree within the bounds `tests/core/simd.rs` checks against an f64 computation, and the portable
//! path stays the reference on CPUs without AVX2 and FMA.
//!
//! In phase 1, every vertex but a range's last reads and writes its 12-byte vectors as 16 bytes
//! without a test (the extra lane lands on the next vertex, written after): a per-vertex branch
//! measured slower than the spare lane. Raw tangents of outputs past [`STREAM_MIN_BYTES`] are
//! written there with streaming stores. A palette that starts at 16 mod 32 bytes (at any other
//! offset than a cache line's start, for the 512-bit blend) is first copied to 64-byte lines
//! (up to 256 of them, on the stack) when the range has at least as many vertices as the
//! palette has matrices, so the copy is paid back: otherwise every second 32-byte load of a
//! matrix (every 64-byte load) straddles two cache lines, and the blend is bound by its loads.
//!
//! Cost per vertex: 8 matrix loads and 8 fused multiply-adds for the blend (4 influences; 4 and 4
//! with the 512-bit blend, chosen where 512-bit operations run at full width), ~8 operations for
//! the position; in phase 2 per eight vertices two transposes (~30 shuffles; ~50 per sixteen on
//! the AVX-512 kernels), 9 multiply-adds per transformed direction, 24 for the exact normal's
//! cofactor and determinant, and a square root and a division per renormalisation. A 3×4
//! palette (12 floats a joint instead of 16) measured slower in a prototype: it saves loads but
//! its transform needs shuffles on the same pipes as the blend. BENCHMARKS.md has the speeds.
//!
//! Limits: linear blending only (dual quaternions and stitching use the portable path); the
//! any-count layout blends in 256-bit registers on both AVX2 kernels; x86-64 with AVX2 and FMA
//! only.

// The crate denies unsafe code; this module is the one place that needs more than a call:
// the intrinsics are `unsafe` to call, and the kernel reads its arrays unchecked after
// checking each range once, which is where its speed comes from. (Local→model's AVX2 build,
// `src/skeleton.rs`, needs one `unsafe` call after the same feature check.)
#![allow(unsafe_code)]

use glam::{Mat4, Vec3, Vec4};

use super::weights::VertexWeights;
#[cfg(target_arch = "x86_64")]
use super::weights::WeightLayout;

/// Vertices per block: phase 1 runs over a block, phase 2 over its groups of eight. 32 hides
/// the normalisation latency behind the next block's blends (8: 127, 16: 158, 32 and up:
/// ~157 M vertices/s with tangents); the scratch is 1 KiB of stack.
#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 32;

/// Whether this CPU runs the AVX2 + FMA kernel (x86-64 with both; the answer is cached by the
/// standard library).
pub fn available() -> bool {
    crate::math::avx2_fma_available()
}

/// The CPU skinning kernels of [`super::SkinningJob`]'s linear blend. The two AVX2 kernels
/// give the same bits (the 512-bit blend is the same lane operations in the same order); the
/// portable path rounds differently, within the bounds `tests/core/simd.rs` checks. Dual
/// quaternions and stitching always run the portable path; the any-count weight layout blends
/// in 256-bit registers on both AVX2 kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel {
    /// SSE2, no fused multiply-add, per-vertex normalisation: every x86-64 and other CPUs.
    Portable,
    /// The AVX2 + FMA kernel, matrices blended two columns per 256-bit register.
    Avx2Fma,
    /// The same kernel with each four-slot vertex's matrices blended whole in one 512-bit
    /// register (AVX-512F): four loads and four fused multiply-adds a vertex instead of eight.
    Avx512Blend,
    /// [`Kernel::Avx512Blend`] with each input vector's coordinates broadcast from memory
    /// in phase 1 instead of spread across lanes by shuffles: the same operations in the same
    /// order, so the same bits, with three shuffles a vertex instead of five to eleven. For
    /// Intel cores, which run lane-crossing shuffles on one port only (port 5, which also
    /// takes half the 512-bit multiply-adds).
    Avx512Broadcast,
}

/// The environment variable that picks a kernel by hand.
pub const KERNEL_ENV: &str = "SKINVIEW_SKIN_KERNEL";

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 4] = [
        Kernel::Portable,
        Kernel::Avx2Fma,
        Kernel::Avx512Blend,
        Kernel::Avx512Broadcast,
    ];

    /// Its name in [`KERNEL_ENV`] and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2Fma => "avx2",
            Kernel::Avx512Blend => "avx512",
            Kernel::Avx512Broadcast => "avx512-broadcast",
        }
    }

    /// The kernel called `name` ([`Kernel::name`]).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether this CPU can run it.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            Kernel::Avx2Fma => available(),
            Kernel::Avx512Blend | Kernel::Avx512Broadcast => available() && avx512f(),
        }
    }

    /// What [`KERNEL_ENV`] holds: `None` when unset or empty.
    fn requested() -> Option<String> {
        std::env::var_os(KERNEL_ENV)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string_lossy().into_owned())
    }

    /// The kernel [`super::SkinningJob::run`] uses on this CPU: the one [`KERNEL_ENV`] names
    /// (`portable`, `avx2`, `avx512` or `avx512-broadcast`) when this CPU runs it, else
    /// [`Kernel::fastest`]. Chosen once per process.
    pub fn chosen() -> Kernel {
        static CHOSEN: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| {
            match Kernel::requested().and_then(|name| Kernel::from_name(&name)) {
                Some(k) if k.is_available() => k,
                _ => Kernel::fastest(),
            }
        })
    }

    /// Why [`KERNEL_ENV`] was not followed, when it is set but names no kernel or one this
    /// CPU cannot run; `None` when it is unset, empty or followed. The library says nothing
    /// itself ([`Kernel::chosen`] picks as if the variable were unset): the `skinview` command
    /// prints this as a warning.
    pub fn env_warning() -> Option<String> {
        let asked = Kernel::requested()?;
        let chosen = Kernel::chosen();
        let names: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
        match Kernel::from_name(&asked) {
            Some(k) if k == chosen => None,
            Some(k) => Some(format!(
                "{KERNEL_ENV}={asked:?}: this CPU cannot run the {} kernel; using {}",
                k.name(),
                chosen.name()
            )),
            None => Some(format!(
                "{KERNEL_ENV}={asked:?} is not one of {}; using {}",
                names.join(", "),
                chosen.name()
            )),
        }
    }

    /// The kernel expected to be fastest on this CPU, ignoring the environment: on CPUs with
    /// AVX2, FMA and AVX-512F except AMD family 19h, `avx512-broadcast` on Intel's and
    /// `avx512` on the others; `avx2` on CPUs with AVX2 and FMA, `portable` otherwise.
    ///
    /// Measured: on AMD Zen 5 (family 1Ah, desktop/server cores with 512-bit pipes) the
    /// 512-bit blend took positions from 535 to 640 M vertices/s (BENCHMARKS.md). AMD family
    /// 19h (Zen 4) runs each 512-bit operation as two 256-bit halves, and an earlier AVX-512
    /// kernel measured slower than the AVX2 one there (324 against 390 M vertices/s), so it
    /// keeps `avx2`. On an Intel Xeon (family 6 model 207) the 512-bit blend beat the 256-bit
    /// one (positions 250–265 → 330 M vertices/s), and broadcasting the vectors' coordinates
    /// added about 5 % with normals or tangents (BENCHMARKS.md); on Zen 5 that form is not
    /// measured, so AMD keeps `avx512`. Not measured: Zen 5 mobile parts (which split 512-bit
    /// operations); [`KERNEL_ENV`] overrides the choice on any CPU.
    pub fn fastest() -> Kernel {
        if Kernel::Avx512Blend.is_available() && !amd_family_19h() {
            if intel() {
                Kernel::Avx512Broadcast
            } else {
                Kernel::Avx512Blend
            }
        } else if available() {
            Kernel::Avx2Fma
        } else {
            Kernel::Portable
        }
    }
}

/// Whether the CPU has AVX-512F (cached by the standard library).
pub(crate) fn avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this is an Intel CPU (CPUID vendor "GenuineIntel").
fn intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID leaf 0 (vendor) exists on every x86-64.
        let vendor = std::arch::x86_64::__cpuid(0);
        (vendor.ebx, vendor.edx, vendor.ecx) == (0x756e_6547, 0x4965_6e69, 0x6c65_746e)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this is an AMD family 19h CPU (Zen 3 has no AVX-512; Zen 4 runs it as two 256-bit
/// halves).
fn amd_family_19h() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID leaf 0 (vendor) and leaf 1 (family) exist on every x86-64.
        let vendor = std::arch::x86_64::__cpuid(0);
        let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        let eax = std::arch::x86_64::__cpuid(1).eax;
        let base = (eax >> 8) & 0xf;
        let family = if base == 0xf {
            base + ((eax >> 20) & 0xff)
        } else {
            base
        };
        amd && family == 0x19
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The kernel [`super::SkinningJob::run`] uses on this CPU, in words ([`Kernel::chosen`]'s
/// name and what it is).
pub fn kernel_name() -> &'static str {
    match Kernel::chosen() {
        Kernel::Portable => "portable (sse2)",
        Kernel::Avx2Fma => "avx2 (avx2+fma)",
        Kernel::Avx512Blend => "avx512 (avx2+fma, avx-512 blend)",
        Kernel::Avx512Broadcast => "avx512-broadcast (avx2+fma, avx-512 blend, vectors broadcast)",
    }
}

/// One range of vertices for the kernel: the inputs, and the outputs of the range starting at
/// vertex `start`. (Read by the x86-64 kernel only: elsewhere `skin` declines every range.)
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) struct Range<'a> {
    pub palette: &'a [Mat4],
    pub weights: &'a VertexWeights,
    pub positions: &'a [Vec3],
    pub normals: Option<&'a [Vec3]>,
    pub tangents: Option<&'a [Vec4]>,
    pub renormalize: bool,
    pub orthonormalize_tangents: bool,
    pub blend3x3: bool,
    /// The AVX2 kernel to run: four-slot matrices blended in 512-bit registers for the two
    /// AVX-512 kernels, each input vector's coordinates broadcast from memory for
    /// [`Kernel::Avx512Broadcast`]. [`Kernel::Portable`] declines every range.
    pub kernel: Kernel,
    /// Write raw tangents with streaming (non-temporal) stores: for outputs too large to stay
    /// in cache ([`STREAM_MIN_BYTES`]).
    pub stream_tangents: bool,
}

/// Outputs (all attributes of a job) from which raw tangents are written with streaming
/// stores, which do not read each cache line before writing it: a third less traffic for the
/// tangent stream. 16 MiB is past what one core's share of a 32 MiB L3 keeps, so such
/// outputs leave the cache before anything reads them; smaller outputs stay in cache for the
/// upload or comparison that follows, and keep ordinary stores. Measured on AMD Zen 5, one
/// thread, 1M vertices with raw normals and tangents (40 MB of outputs): 279–286 → 298–302 M
/// vertices/s. Positions and normals (12-byte records) cannot be written 16 bytes aligned per
/// vertex and keep ordinary stores.
pub const STREAM_MIN_BYTES: usize = 16 << 20;

impl Range<'_> {
    /// Skin vertices `start..start + out_p.len()` and say so; `false` (nothing written) when
    /// this CPU lacks the features or the arrays do not cover the range, for the caller to run
    /// the portable path. No read leaves its array: a four-slot array's joints are below the
    /// palette's length (checked here once: [`super::weights::Packed4`] is immutable and knows
    /// its largest), the any-count array's offsets of the range are checked to be ordered and
    /// within it, and its joint indices are clamped to the palette.
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
            let weights_ok = match &self.weights.layout {
                WeightLayout::Fixed4(w) => {
                    (w.max_joint() as usize) < self.palette.len() && covered(w.len())
                }
                WeightLayout::Csr {
                    offsets,
                    influences,
                } => {
                    start.checked_add(n).is_some_and(|end| end < offsets.len())
                        && offsets[start..=start + n].windows(2).all(|w| w[0] <= w[1])
                        && offsets[start + n] as usize <= influences.len()
                }
            };
            let ok = self.kernel != Kernel::Portable
                && self.kernel.is_available()
                && !self.palette.is_empty()
                && weights_ok
                && covered(self.positions.len())
                && self.normals.is_none_or(|v| covered(v.len()))
                && self.tangents.is_none_or(|v| covered(v.len()))
                && out_n.as_ref().is_none_or(|v| v.len() == n)
                && out_t.as_ref().is_none_or(|v| v.len() == n)
                && out_n.is_some() == self.normals.is_some()
                && out_t.is_some() == self.tangents.is_some();
            if ok {
                // SAFETY: the CPU runs the kernel (AVX2 and FMA, and AVX-512F for the 512-bit
                // ones: `is_available`), every range lies in its array and every joint index
                // within the palette (all checked above).
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
    use std::mem::MaybeUninit;

    use glam::{Vec3, Vec4};

    use super::{BLOCK, Kernel, Range};
    use crate::skin::weights::{Influence, JointEncoding, WeightEncoding, WeightLayout};

    mod sixteen;
    use sixteen::blocks16;

    /// The register width weights are broadcast to: [`L256`] (two matrix columns) or [`L512`]
    /// (a whole `Mat4`, with AVX-512F).
    trait Lanes {
        type V: Copy;

        /// Four f32 weights at `p`, each broadcast from memory (loads, no shuffles: the shuffle
        /// ports are busy with the transform).
        ///
        /// # Safety
        /// 16 bytes at `p`; the caller runs with the width's features.
        unsafe fn f32x4(p: *const u8) -> [Self::V; 4];

        /// Each lane of `w` broadcast to every lane.
        ///
        /// # Safety
        /// The caller runs with the width's features.
        unsafe fn spread(w: __m128) -> [Self::V; 4];
    }

    /// Eight lanes (AVX2).
    struct L256;
    /// Sixteen lanes (AVX-512F).
    struct L512;

    impl Lanes for L256 {
        type V = __m256;

        #[inline(always)]
        unsafe fn f32x4(p: *const u8) -> [__m256; 4] {
            // SAFETY: the caller's contract (this function's safety requirements).
            unsafe {
                let w = p.cast::<f32>();
                [
                    _mm256_broadcast_ss(&*w),
                    _mm256_broadcast_ss(&*w.add(1)),
                    _mm256_broadcast_ss(&*w.add(2)),
                    _mm256_broadcast_ss(&*w.add(3)),
                ]
            }
        }

        #[inline(always)]
        unsafe fn spread(w: __m128) -> [__m256; 4] {
            // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
            // only on CPUs that have them).
            unsafe {
                let w = _mm256_castps128_ps256(w);
                let lane = |k: i32| _mm256_permutevar8x32_ps(w, _mm256_set1_epi32(k));
                [lane(0), lane(1), lane(2), lane(3)]
            }
        }
    }

    impl Lanes for L512 {
        type V = __m512;

        #[inline(always)]
        unsafe fn f32x4(p: *const u8) -> [__m512; 4] {
            // SAFETY: the caller's contract (this function's safety requirements).
            unsafe {
                let w = p.cast::<f32>();
                [
                    _mm512_set1_ps(*w),
                    _mm512_set1_ps(*w.add(1)),
                    _mm512_set1_ps(*w.add(2)),
                    _mm512_set1_ps(*w.add(3)),
                ]
            }
        }

        #[inline(always)]
        unsafe fn spread(w: __m128) -> [__m512; 4] {
            // SAFETY: register operations only; callers run with AVX-512F (the kernel is chosen
            // only on CPUs that have them).
            unsafe {
                let w = _mm512_castps128_ps512(w);
                let lane = |k: i32| _mm512_permutexvar_ps(_mm512_set1_epi32(k), w);
                [lane(0), lane(1), lane(2), lane(3)]
            }
        }
    }

    /// Reads one vertex's joint indices and weights from its [`crate::skin::weights::Packed4`]
    /// record (weights first, then joints).
    trait Slots {
        /// The four joints and each weight broadcast to every lane of width `L`.
        ///
        /// # Safety
        /// `rec` points at a whole record of this encoding; the caller runs with `L`'s
        /// features.
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]);
    }

    /// Four u8 joints at `p`.
    #[inline(always)]
    unsafe fn joints_u8(p: *const u8) -> [usize; 4] {
        // SAFETY: the caller's contract: four bytes at `p`.
        let j = unsafe { p.cast::<u32>().read_unaligned() };
        [
            (j & 0xff) as usize,
            ((j >> 8) & 0xff) as usize,
            ((j >> 16) & 0xff) as usize,
            (j >> 24) as usize,
        ]
    }

    /// Four little-endian u16 joints at `p`.
    #[inline(always)]
    unsafe fn joints_u16(p: *const u8) -> [usize; 4] {
        // SAFETY: the caller's contract: eight bytes at `p`.
        let j = unsafe { p.cast::<u64>().read_unaligned() };
        [
            (j & 0xffff) as usize,
            ((j >> 16) & 0xffff) as usize,
            ((j >> 32) & 0xffff) as usize,
            (j >> 48) as usize,
        ]
    }

    /// Four unorm16 weights at `p`, `k as f32 / 65535.0` exactly (an IEEE division, as the
    /// importer decodes them).
    #[inline(always)]
    unsafe fn unorm16(p: *const u8) -> __m128 {
        // SAFETY: the caller's contract: eight bytes at `p`.
        unsafe {
            let k = _mm_cvtepu16_epi32(_mm_loadl_epi64(p.cast::<__m128i>()));
            _mm_div_ps(_mm_cvtepi32_ps(k), _mm_set1_ps(65535.0))
        }
    }

    /// Four unorm8 weights at `p`, `k as f32 / 255.0` exactly.
    #[inline(always)]
    unsafe fn unorm8(p: *const u8) -> __m128 {
        // SAFETY: the caller's contract: four bytes at `p`.
        unsafe {
            let k = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(p.cast::<i32>().read_unaligned()));
            _mm_div_ps(_mm_cvtepi32_ps(k), _mm_set1_ps(255.0))
        }
    }

    struct F32U8;
    struct F32U16;
    struct Unorm16U8;
    struct Unorm16U16;
    struct Unorm8U8;
    struct Unorm8U16;

    impl Slots for F32U8 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 20 bytes.
            unsafe { (joints_u8(rec.add(16)), L::f32x4(rec)) }
        }
    }
    impl Slots for F32U16 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 24 bytes.
            unsafe { (joints_u16(rec.add(16)), L::f32x4(rec)) }
        }
    }
    impl Slots for Unorm16U8 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 12 bytes.
            unsafe { (joints_u8(rec.add(8)), L::spread(unorm16(rec))) }
        }
    }
    impl Slots for Unorm16U16 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 16 bytes.
            unsafe { (joints_u16(rec.add(8)), L::spread(unorm16(rec))) }
        }
    }
    impl Slots for Unorm8U8 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 8 bytes.
            unsafe { (joints_u8(rec.add(4)), L::spread(unorm8(rec))) }
        }
    }
    impl Slots for Unorm8U16 {
        #[inline(always)]
        unsafe fn load<L: Lanes>(rec: *const u8) -> ([usize; 4], [L::V; 4]) {
            // SAFETY: the caller's contract: 12 bytes.
            unsafe { (joints_u16(rec.add(4)), L::spread(unorm8(rec))) }
        }
    }

    /// One palette matrix on a 64-byte cache line of its own.
    #[repr(C, align(64))]
    struct CacheLine([f32; 16]);

    /// Largest palette copied to cache lines: 16 KiB of stack (a frame allocates nothing). u8
    /// joints address at most 256 matrices; longer palettes are read where they are.
    const ALIGNED_PALETTE_MAX: usize = 256;

    /// The inputs as raw pointers, checked by `Range::skin`.
    struct Inputs {
        palette: *const f32,
        /// Index of the palette's last matrix (the any-count layout's joints are clamped).
        last_joint: usize,
        /// Four-slot records and their size.
        records: *const u8,
        stride: usize,
        /// The any-count layout's offsets and influences.
        offsets: *const u32,
        influences: *const Influence,
        positions: *const f32,
        normals: *const f32,
        normals_len: usize,
        tangents: *const f32,
    }

    /// Where a vertex's blended matrix comes from.
    trait Source {
        /// Columns `x|y` and `z|w` of vertex `v`'s blended matrix: `w0·M0`, then each
        /// further influence fused in, in slot order, so a four-slot vertex and the same
        /// influences in the any-count layout blend to the same bits (a zero weight leaves
        /// the sum as it is).
        ///
        /// # Safety
        /// Vertex `v` is in the inputs; its joints are within the palette (four-slot) or are
        /// clamped (any-count).
        unsafe fn blend(inp: &Inputs, v: usize) -> (__m256, __m256);
    }

    /// Four slots in encoding `S`.
    struct Four<S>(std::marker::PhantomData<S>);

    impl<S: Slots> Source for Four<S> {
        #[inline(always)]
        unsafe fn blend(inp: &Inputs, v: usize) -> (__m256, __m256) {
            // SAFETY: the caller's contract (this function's safety requirements).
            unsafe {
                let (j, [w0, w1, w2, w3]) = S::load::<L256>(inp.records.add(v * inp.stride));
                let m = |k: usize| inp.palette.add(j[k] * 16);
                let (m0, m1, m2, m3) = (m(0), m(1), m(2), m(3));
                let mut a = _mm256_mul_ps(w0, _mm256_loadu_ps(m0));
                let mut b = _mm256_mul_ps(w0, _mm256_loadu_ps(m0.add(8)));
                a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(m1), a);
                b = _mm256_fmadd_ps(w1, _mm256_loadu_ps(m1.add(8)), b);
                a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(m2), a);
                b = _mm256_fmadd_ps(w2, _mm256_loadu_ps(m2.add(8)), b);
                a = _mm256_fmadd_ps(w3, _mm256_loadu_ps(m3), a);
                b = _mm256_fmadd_ps(w3, _mm256_loadu_ps(m3.add(8)), b);
                (a, b)
            }
        }
    }

    /// Four slots in encoding `S`, each matrix blended whole in one 512-bit register (four
    /// loads and four fused multiply-adds instead of eight of each). The lanes are the same
    /// operations in the same order as [`Four`]'s two halves: the same bits.
    struct Four512<S>(std::marker::PhantomData<S>);

    impl<S: Slots> Source for Four512<S> {
        #[inline(always)]
        unsafe fn blend(inp: &Inputs, v: usize) -> (__m256, __m256) {
            // SAFETY: the caller's contract, and the caller runs with AVX-512F.
            unsafe {
                let (j, [w0, w1, w2, w3]) = S::load::<L512>(inp.records.add(v * inp.stride));
                let m = |k: usize| _mm512_loadu_ps(inp.palette.add(j[k] * 16));
                let mut c = _mm512_mul_ps(w0, m(0));
                c = _mm512_fmadd_ps(w1, m(1), c);
                c = _mm512_fmadd_ps(w2, m(2), c);
                c = _mm512_fmadd_ps(w3, m(3), c);
                (
                    _mm512_castps512_ps256(c),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(c))),
                )
            }
        }
    }

    /// Any number of influences per vertex (a vertex without any blends to zero).
    struct AnyCount;

    impl Source for AnyCount {
        #[inline(always)]
        unsafe fn blend(inp: &Inputs, v: usize) -> (__m256, __m256) {
            // SAFETY: the caller's contract: offsets v and v + 1 exist and bound a slice of
            // influences.
            unsafe {
                let (from, to) = (
                    *inp.offsets.add(v) as usize,
                    *inp.offsets.add(v + 1) as usize,
                );
                let mut a = _mm256_setzero_ps();
                let mut b = _mm256_setzero_ps();
                for i in from..to {
                    let inf = *inp.influences.add(i);
                    let m = inp
                        .palette
                        .add((inf.joint as usize).min(inp.last_joint) * 16);
                    let w = _mm256_set1_ps(inf.weight);
                    if i == from {
                        a = _mm256_mul_ps(w, _mm256_loadu_ps(m));
                        b = _mm256_mul_ps(w, _mm256_loadu_ps(m.add(8)));
                    } else {
                        a = _mm256_fmadd_ps(w, _mm256_loadu_ps(m), a);
                        b = _mm256_fmadd_ps(w, _mm256_loadu_ps(m.add(8)), b);
                    }
                }
                (a, b)
            }
        }
    }

    /// Vector `i` of a `Vec3` array at `base` into lanes 0..3. Lane 3 is the next vector's x
    /// when `room` (16 bytes read), else 0 (12 bytes read, so nothing past the array is
    /// touched).
    #[inline(always)]
    unsafe fn load3(base: *const f32, i: usize, room: bool) -> __m128 {
        // SAFETY: the caller's contract: `base` has vector `i`, and vector `i + 1` too when `room`.
        unsafe {
            let p = base.add(3 * i);
            if room {
                _mm_loadu_ps(p)
            } else {
                let xy = _mm_castpd_ps(_mm_load_sd(p.cast::<f64>()));
                _mm_movelh_ps(xy, _mm_load_ss(p.add(2)))
            }
        }
    }

    /// `f(i, room)` for `i` in `0..n`, `room` false only for the last: every vertex but the
    /// last reads and writes its 12-byte vectors as 16 bytes without a test (the extra lane
    /// lands on the next vertex, which is written after).
    #[inline(always)]
    fn each_vertex(n: usize, mut f: impl FnMut(usize, bool)) {
        if let Some(last) = n.checked_sub(1) {
            for i in 0..last {
                f(i, true);
            }
            f(last, false);
        }
    }

    /// Store lanes 0..3 at `dst`: 16 bytes when `room` (the fourth lane lands on the next
    /// vertex, written after), else 12.
    #[inline(always)]
    unsafe fn store3(dst: *mut f32, r: __m128, room: bool) {
        // SAFETY: the caller's contract: `dst` has 3 floats, 4 when `room`.
        unsafe {
            if room {
                _mm_storeu_ps(dst, r);
            } else {
                _mm_store_sd(dst.cast::<f64>(), _mm_castps_pd(r));
                *dst.add(2) = _mm_cvtss_f32(_mm_movehl_ps(r, r));
            }
        }
    }

    /// `(x·c0 + y·c1) + z·c2` for the blended columns, the `w` lane of `d` ignored.
    #[inline(always)]
    unsafe fn rotate(a: __m256, b: __m256, d: __m128) -> __m128 {
        // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
        // only on CPUs that have them).
        unsafe {
            let xy = _mm256_permutevar8x32_ps(
                _mm256_castps128_ps256(d),
                _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1),
            );
            let r = _mm256_mul_ps(a, xy);
            let sum = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r));
            _mm_fmadd_ps(_mm256_castps256_ps128(b), _mm_permute_ps::<0xAA>(d), sum)
        }
    }

    /// Columns `c0..c3` of the blended matrix from its `x|y` and `z|w` halves.
    #[inline(always)]
    unsafe fn columns(a: __m256, b: __m256) -> [__m128; 4] {
        // SAFETY: register operations only; callers run with AVX2 and FMA.
        unsafe {
            [
                _mm256_castps256_ps128(a),
                _mm256_extractf128_ps::<1>(a),
                _mm256_castps256_ps128(b),
                _mm256_extractf128_ps::<1>(b),
            ]
        }
    }

    /// [`rotate`] of the vector at `d` (3 floats), its coordinates broadcast from memory
    /// (loads) rather than spread across lanes (shuffles): `(c0·x + c1·y) + c2·z`, the same
    /// operations in the same order, so the same bits.
    #[inline(always)]
    unsafe fn rotate_at(c: &[__m128; 4], d: *const f32) -> __m128 {
        // SAFETY: the caller's contract: three floats at `d`.
        unsafe {
            let sum = _mm_add_ps(
                _mm_mul_ps(c[0], _mm_broadcast_ss(&*d)),
                _mm_mul_ps(c[1], _mm_broadcast_ss(&*d.add(1))),
            );
            _mm_fmadd_ps(c[2], _mm_broadcast_ss(&*d.add(2)), sum)
        }
    }

    /// Vector `v` of the `Vec3` array at `base` through the blended 3×3: [`rotate`] of the
    /// loaded vector, or with `BC` [`rotate_at`] (the same bits).
    #[inline(always)]
    unsafe fn direction<const BC: bool>(
        a: __m256,
        b: __m256,
        base: *const f32,
        v: usize,
        room: bool,
    ) -> __m128 {
        // SAFETY: the caller's contract: as for `load3`.
        unsafe {
            if BC {
                rotate_at(&columns(a, b), base.add(3 * v))
            } else {
                rotate(a, b, load3(base, v, room))
            }
        }
    }

    /// Point `v` of the `Vec3` array at `base` through the blended matrix: [`direction`] plus
    /// the fourth column.
    #[inline(always)]
    unsafe fn point<const BC: bool>(
        a: __m256,
        b: __m256,
        base: *const f32,
        v: usize,
        room: bool,
    ) -> __m128 {
        // SAFETY: the caller's contract: as for `load3`.
        unsafe {
            _mm_add_ps(
                direction::<BC>(a, b, base, v, room),
                _mm256_extractf128_ps::<1>(b),
            )
        }
    }

    /// Eight rows of four floats at `p` (stride 16 bytes) to four registers of eight lanes
    /// (x, y, z, w).
    #[inline(always)]
    unsafe fn soa4(p: *const f32) -> [__m256; 4] {
        // SAFETY: the caller's contract: 32 floats at `p`.
        unsafe {
            let row = |i: usize| p.add(4 * i);
            let r0 = _mm256_loadu2_m128(row(4), row(0));
            let r1 = _mm256_loadu2_m128(row(5), row(1));
            let r2 = _mm256_loadu2_m128(row(6), row(2));
            let r3 = _mm256_loadu2_m128(row(7), row(3));
            let t0 = _mm256_unpacklo_ps(r0, r1);
            let t1 = _mm256_unpackhi_ps(r0, r1);
            let t2 = _mm256_unpacklo_ps(r2, r3);
            let t3 = _mm256_unpackhi_ps(r2, r3);
            [
                _mm256_shuffle_ps::<0x44>(t0, t2),
                _mm256_shuffle_ps::<0xEE>(t0, t2),
                _mm256_shuffle_ps::<0x44>(t1, t3),
                _mm256_shuffle_ps::<0xEE>(t1, t3),
            ]
        }
    }

    /// Inverse of [`soa4`]: eight rows of four floats at `p`.
    #[inline(always)]
    unsafe fn rows4(v: [__m256; 4], p: *mut f32) {
        // SAFETY: the caller's contract: 32 floats at `p`.
        unsafe {
            let t0 = _mm256_unpacklo_ps(v[0], v[1]);
            let t1 = _mm256_unpackhi_ps(v[0], v[1]);
            let t2 = _mm256_unpacklo_ps(v[2], v[3]);
            let t3 = _mm256_unpackhi_ps(v[2], v[3]);
            let row = |i: usize| p.add(4 * i);
            _mm256_storeu2_m128(row(4), row(0), _mm256_shuffle_ps::<0x44>(t0, t2));
            _mm256_storeu2_m128(row(5), row(1), _mm256_shuffle_ps::<0xEE>(t0, t2));
            _mm256_storeu2_m128(row(6), row(2), _mm256_shuffle_ps::<0x44>(t1, t3));
            _mm256_storeu2_m128(row(7), row(3), _mm256_shuffle_ps::<0xEE>(t1, t3));
        }
    }

    /// `v / |v|` on eight lanes, or zero where `|v|²` is zero or not finite (the portable
    /// path's `unit_or_zero`): `v · (1 / sqrt(|v|²))`.
    #[inline(always)]
    unsafe fn unit8(x: __m256, y: __m256, z: __m256) -> [__m256; 3] {
        // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
        // only on CPUs that have them).
        unsafe {
            let len2 = _mm256_fmadd_ps(z, z, _mm256_fmadd_ps(y, y, _mm256_mul_ps(x, x)));
            let ok = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GT_OQ>(len2, _mm256_setzero_ps()),
                _mm256_cmp_ps::<_CMP_LT_OQ>(len2, _mm256_set1_ps(f32::INFINITY)),
            );
            let r = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(len2)), ok);
            [
                _mm256_mul_ps(x, r),
                _mm256_mul_ps(y, r),
                _mm256_mul_ps(z, r),
            ]
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn skin(
        k: &Range<'_>,
        start: usize,
        out_p: &mut [Vec3],
        out_n: Option<&mut [Vec3]>,
        out_t: Option<&mut [Vec4]>,
    ) {
        let (records, stride, offsets, influences) = match &k.weights.layout {
            WeightLayout::Fixed4(w) => (
                w.bytes().as_ptr(),
                w.stride(),
                std::ptr::null(),
                std::ptr::null(),
            ),
            WeightLayout::Csr {
                offsets,
                influences,
            } => (std::ptr::null(), 0, offsets.as_ptr(), influences.as_ptr()),
        };
        // A `Mat4` array is 16-byte aligned. At 16 mod 32, every second 32-byte load of a
        // matrix straddles two cache lines, which costs a second load slot: copy the palette to
        // 64-byte lines on the stack first when it fits and the range is long enough to pay
        // for it (one matrix copied per vertex at most). Measured: positions 326 → 356 M
        // vertices/s. The values, and so the results, are unchanged.
        let wide = matches!(k.kernel, Kernel::Avx512Blend | Kernel::Avx512Broadcast)
            && matches!(k.weights.layout, WeightLayout::Fixed4(_));
        // A 512-bit load of a matrix straddles two lines unless the matrix starts one.
        let align = if wide { 64 } else { 32 };
        let mut lines = [const { MaybeUninit::<CacheLine>::uninit() }; ALIGNED_PALETTE_MAX];
        let mut palette = k.palette.as_ptr().cast::<f32>();
        if !(palette as usize).is_multiple_of(align)
            && k.palette.len() <= ALIGNED_PALETTE_MAX
            && k.palette.len() <= out_p.len()
        {
            for (line, m) in lines.iter_mut().zip(k.palette) {
                line.write(CacheLine(m.to_cols_array()));
            }
            // The first `k.palette.len()` lines are written, and only they are read.
            palette = lines.as_ptr().cast::<f32>();
        }
        let inp = Inputs {
            palette,
            last_joint: k.palette.len() - 1,
            records,
            stride,
            offsets,
            influences,
            positions: k.positions.as_ptr().cast::<f32>(),
            normals: k
                .normals
                .map_or(std::ptr::null(), |n| n.as_ptr().cast::<f32>()),
            normals_len: k.normals.map_or(0, <[Vec3]>::len),
            tangents: k
                .tangents
                .map_or(std::ptr::null(), |t| t.as_ptr().cast::<f32>()),
        };
        // SAFETY: the caller's contract: as for `run`; the 512-bit loops only for the kernels
        // the caller found available.
        unsafe {
            let WeightLayout::Fixed4(w) = &k.weights.layout else {
                return run::<AnyCount, false>(k, &inp, start, out_p, out_n, out_t);
            };
            // One monomorphised loop per encoding and blend width.
            macro_rules! per_encoding {
                ($run:ident, $four:ident, $bc:literal) => {
                    match w.encoding() {
                        (JointEncoding::U8, WeightEncoding::F32) => {
                            $run::<$four<F32U8>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                        (JointEncoding::U16, WeightEncoding::F32) => {
                            $run::<$four<F32U16>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                        (JointEncoding::U8, WeightEncoding::Unorm16) => {
                            $run::<$four<Unorm16U8>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                        (JointEncoding::U16, WeightEncoding::Unorm16) => {
                            $run::<$four<Unorm16U16>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                        (JointEncoding::U8, WeightEncoding::Unorm8) => {
                            $run::<$four<Unorm8U8>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                        (JointEncoding::U16, WeightEncoding::Unorm8) => {
                            $run::<$four<Unorm8U16>, $bc>(k, &inp, start, out_p, out_n, out_t)
                        }
                    }
                };
            }
            if wide {
                #[cfg(test)]
                super::tests::WIDE_RANGES.with(|c| c.set(c.get() + 1));
                if k.kernel == Kernel::Avx512Broadcast {
                    #[cfg(test)]
                    super::tests::BROADCAST_RANGES.with(|c| c.set(c.get() + 1));
                    per_encoding!(run512, Four512, true)
                } else {
                    per_encoding!(run512, Four512, false)
                }
            } else {
                per_encoding!(run, Four, false)
            }
        }
    }

    /// The kernel's per-vertex loop, built once per instruction set: `run` for AVX2 + FMA,
    /// with phase 2 on eight lanes (`blocks`); `run512` with AVX-512F too (for [`Four512`]),
    /// with phase 2 on sixteen (`sixteen::blocks16`); the lanes go through the same
    /// operations, so the same bits. A macro rather than `#[inline(always)]` bodies: closures
    /// take the target features of the function they are written in.
    macro_rules! kernel {
        ($run:ident, $phase2:ident, $features:literal) => {
            /// One loop per attribute combination, so the hot ones carry no per-vertex branches.
            #[target_feature(enable = $features)]
            unsafe fn $run<S: Source, const BC: bool>(
                k: &Range<'_>,
                inp: &Inputs,
                start: usize,
                out_p: &mut [Vec3],
                out_n: Option<&mut [Vec3]>,
                out_t: Option<&mut [Vec4]>,
            ) {
                let n = out_p.len();
                let op = out_p.as_mut_ptr().cast::<f32>();
                // SAFETY: the caller's contract: vertices start..start + n have inputs; outputs
                // have n entries. A 16-byte read or write of vertex `start + i` (`room`, i < n -
                // 1) reaches into vertex `start + i + 1`'s input and output entry `i + 1`, both in
                // the range.
                unsafe {
                    match (out_n, out_t) {
                        (None, None) => each_vertex(n, |i, room| {
                            let v = start + i;
                            let (a, b) = S::blend(inp, v);
                            store3(
                                op.add(3 * i),
                                point::<BC>(a, b, inp.positions, v, room),
                                room,
                            );
                        }),
                        (Some(on), None) if !k.renormalize && k.blend3x3 => {
                            // Raw blended-3×3 normals: written in phase 1, no second phase.
                            let onp = on.as_mut_ptr().cast::<f32>();
                            each_vertex(n, |i, room| {
                                let v = start + i;
                                let (a, b) = S::blend(inp, v);
                                store3(
                                    op.add(3 * i),
                                    point::<BC>(a, b, inp.positions, v, room),
                                    room,
                                );
                                let nv = direction::<BC>(a, b, inp.normals, v, room);
                                store3(onp.add(3 * i), nv, room);
                            });
                        }
                        (on, Some(ot))
                            if !k.orthonormalize_tangents
                                && (on.is_none() || (!k.renormalize && k.blend3x3)) =>
                        {
                            // Raw tangents (and raw blended-3×3 normals, if any): written in phase
                            // 1.
                            let onp = on.map(|o| o.as_mut_ptr().cast::<f32>());
                            let otp = ot.as_mut_ptr().cast::<f32>();
                            // `Vec4` arrays are 16-byte aligned, as streaming stores need.
                            let stream = k.stream_tangents && (otp as usize).is_multiple_of(16);
                            each_vertex(n, |i, room| {
                                let v = start + i;
                                let (a, b) = S::blend(inp, v);
                                store3(
                                    op.add(3 * i),
                                    point::<BC>(a, b, inp.positions, v, room),
                                    room,
                                );
                                if let Some(onp) = onp {
                                    let nv = direction::<BC>(a, b, inp.normals, v, room);
                                    store3(onp.add(3 * i), nv, room);
                                }
                                let t = _mm_loadu_ps(inp.tangents.add(4 * v));
                                let rt = if BC {
                                    rotate_at(&columns(a, b), inp.tangents.add(4 * v))
                                } else {
                                    rotate(a, b, t)
                                };
                                // xyz through the blended 3×3, w (handedness) as given.
                                let r = _mm_blend_ps::<0b1000>(rt, t);
                                if stream {
                                    _mm_stream_ps(otp.add(4 * i), r);
                                } else {
                                    _mm_storeu_ps(otp.add(4 * i), r);
                                }
                            });
                            if stream {
                                // Streaming stores are weakly ordered: make them visible
                                // before the range is reported done.
                                _mm_sfence();
                                #[cfg(test)]
                                super::tests::STREAMED_RANGES
                                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                        (on, ot) => $phase2::<S, BC>(k, inp, start, n, op, on, ot),
                    }
                }
            }
        };
    }

    kernel!(run, blocks, "avx2,fma");
    kernel!(run512, blocks16, "avx2,fma,avx512f");

    /// Normals other than raw blend3x3 ones, and tangents, on the AVX2 kernel: phase 1 per
    /// vertex (blend, position, the blended columns into a scratch), phase 2 on eight lanes
    /// (module documentation). Whole groups of eight read their normals and tangents and write
    /// their results straight from and to the arrays; a group at the end of the range goes
    /// through the scratch (zero padding lanes, whose results are never written).
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blocks<S: Source, const BC: bool>(
        k: &Range<'_>,
        inp: &Inputs,
        start: usize,
        n: usize,
        op: *mut f32,
        on: Option<&mut [Vec3]>,
        ot: Option<&mut [Vec4]>,
    ) {
        // Per vertex of the block: blended columns c0|c1 (8 floats) and c2 (4); for a
        // partial group, the input normals and tangents and the results (4 floats each).
        let mut sa = [[0.0f32; 8]; BLOCK];
        let mut sb = [[0.0f32; 4]; BLOCK];
        let mut sn = [[0.0f32; 4]; 8];
        let mut st = [[0.0f32; 4]; 8];
        let onp = on.map(|o| o.as_mut_ptr().cast::<f32>());
        let otp = ot.map(|o| o.as_mut_ptr().cast::<f32>());
        let normals = !inp.normals.is_null();
        let tangents = !inp.tangents.is_null();
        let mut i0 = 0;
        // SAFETY: the caller's contract: as for `run`; scratch indices stay below BLOCK; a whole
        // group's eight vertices lie in the range, so its direct reads and writes stay in the
        // arrays.
        unsafe {
            while i0 < n {
                let m = (n - i0).min(BLOCK);
                let mut phase1 = |i: usize, room: bool| {
                    let (g, v) = (i0 + i, start + i0 + i);
                    let (a, b) = S::blend(inp, v);
                    store3(
                        op.add(3 * g),
                        point::<BC>(a, b, inp.positions, v, room),
                        room,
                    );
                    _mm256_storeu_ps(sa[i].as_mut_ptr(), a);
                    _mm_storeu_ps(sb[i].as_mut_ptr(), _mm256_castps256_ps128(b));
                };
                if i0 + m < n {
                    (0..m).for_each(|i| phase1(i, true));
                } else {
                    each_vertex(m, phase1);
                }
                for i in m..m.div_ceil(8) * 8 {
                    sa[i] = [0.0; 8];
                    sb[i] = [0.0; 4];
                }
                for g0 in (0..m).step_by(8) {
                    let lanes = (m - g0).min(8);
                    let whole = lanes == 8;
                    let first = i0 + g0; // index in the range of lane 0
                    let v0 = start + first; // vertex of lane 0
                    if !whole {
                        for j in 0..8 {
                            let v = v0 + j;
                            let (nv, tv) = if j < lanes {
                                (
                                    if normals {
                                        load3(inp.normals, v, v + 1 < inp.normals_len)
                                    } else {
                                        _mm_setzero_ps()
                                    },
                                    if tangents {
                                        _mm_loadu_ps(inp.tangents.add(4 * v))
                                    } else {
                                        _mm_setzero_ps()
                                    },
                                )
                            } else {
                                (_mm_setzero_ps(), _mm_setzero_ps())
                            };
                            _mm_storeu_ps(sn[j].as_mut_ptr(), nv);
                            _mm_storeu_ps(st[j].as_mut_ptr(), tv);
                        }
                    }
                    let [c0x, c0y, c0z, _, c1x, c1y, c1z, _] = transpose8(&sa[g0..g0 + 8]);
                    let [c2x, c2y, c2z, _] = soa4(sb[g0..g0 + 8].as_ptr().cast::<f32>());
                    let cols = [[c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z]];
                    let mut unit = [_mm256_setzero_ps(); 3];
                    if normals {
                        let nin = if whole {
                            load_aos3(inp.normals.add(3 * v0))
                        } else {
                            let [x, y, z, _] = soa4(sn.as_ptr().cast::<f32>());
                            [x, y, z]
                        };
                        let raw = if k.blend3x3 {
                            apply8(cols, nin)
                        } else {
                            cofactor_normal8(cols, nin)
                        };
                        if k.renormalize || (tangents && k.orthonormalize_tangents) {
                            unit = unit8(raw[0], raw[1], raw[2]);
                        }
                        if let Some(onp) = onp {
                            let out = if k.renormalize { unit } else { raw };
                            if whole {
                                store_aos3(out, onp.add(3 * first));
                            } else {
                                rows4([out[0], out[1], out[2], out[2]], sn.as_mut_ptr().cast());
                                for (j, row) in sn.iter().enumerate().take(lanes) {
                                    let g = first + j;
                                    store3(onp.add(3 * g), _mm_loadu_ps(row.as_ptr()), g + 1 < n);
                                }
                            }
                        }
                    }
                    if let (true, Some(otp)) = (tangents, otp) {
                        let [tx, ty, tz, tw] = if whole {
                            soa4(inp.tangents.add(4 * v0))
                        } else {
                            soa4(st.as_ptr().cast::<f32>())
                        };
                        let [rx, ry, rz] = apply8(cols, [tx, ty, tz]);
                        let [x, y, z] = if k.orthonormalize_tangents {
                            let [ux, uy, uz] = unit;
                            let d = _mm256_fmadd_ps(
                                uz,
                                rz,
                                _mm256_fmadd_ps(uy, ry, _mm256_mul_ps(ux, rx)),
                            );
                            unit8(
                                _mm256_fnmadd_ps(ux, d, rx),
                                _mm256_fnmadd_ps(uy, d, ry),
                                _mm256_fnmadd_ps(uz, d, rz),
                            )
                        } else {
                            [rx, ry, rz]
                        };
                        if whole {
                            rows4([x, y, z, tw], otp.add(4 * first));
                        } else {
                            rows4([x, y, z, tw], st.as_mut_ptr().cast());
                            for (j, row) in st.iter().enumerate().take(lanes) {
                                _mm_storeu_ps(otp.add(4 * (first + j)), _mm_loadu_ps(row.as_ptr()));
                            }
                        }
                    }
                }
                i0 += m;
            }
        }
    }

    /// Eight (x, y, z) triples at `p` (24 floats) to three registers of eight lanes.
    #[inline(always)]
    unsafe fn load_aos3(p: *const f32) -> [__m256; 3] {
        // SAFETY: the caller's contract: 24 floats at `p`.
        unsafe {
            let o0 = _mm256_loadu_ps(p);
            let o1 = _mm256_loadu_ps(p.add(8));
            let o2 = _mm256_loadu_ps(p.add(16));
            // Undo `store_aos3`: o0 holds x at lanes 0 3 6, y at 1 4 7, z at 2 5; o1 z, x, y;
            // o2 y, z, x. Gather each coordinate's lanes, then put them in order.
            let xv = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(o0, o1), o2);
            let yv = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(o2, o0), o1);
            let zv = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(o1, o2), o0);
            [
                _mm256_permutevar8x32_ps(xv, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5)),
                _mm256_permutevar8x32_ps(yv, _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6)),
                _mm256_permutevar8x32_ps(zv, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7)),
            ]
        }
    }

    /// Three registers of eight lanes to eight (x, y, z) triples at `p` (24 floats).
    #[inline(always)]
    unsafe fn store_aos3(v: [__m256; 3], p: *mut f32) {
        // SAFETY: the caller's contract: 24 floats at `p`.
        unsafe {
            // x_k, y_k, z_k moved to the lanes their output slots have mod 3.
            let xv = _mm256_permutevar8x32_ps(v[0], _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
            let yv = _mm256_permutevar8x32_ps(v[1], _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2));
            let zv = _mm256_permutevar8x32_ps(v[2], _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
            // o0: x at lanes 0 3 6, y at 1 4 7, z at 2 5; o1: z, x, y; o2: y, z, x.
            let o0 = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(xv, yv), zv);
            let o1 = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(zv, xv), yv);
            let o2 = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(yv, zv), xv);
            _mm256_storeu_ps(p, o0);
            _mm256_storeu_ps(p.add(8), o1);
            _mm256_storeu_ps(p.add(16), o2);
        }
    }

    /// Eight rows of eight floats transposed: register `e` holds element `e` of every row.
    #[inline(always)]
    unsafe fn transpose8(rows: &[[f32; 8]]) -> [__m256; 8] {
        // SAFETY: the caller's contract: eight rows.
        unsafe {
            let r = |i: usize| _mm256_loadu_ps(rows.as_ptr().add(i).cast::<f32>());
            let t0 = _mm256_unpacklo_ps(r(0), r(1));
            let t1 = _mm256_unpackhi_ps(r(0), r(1));
            let t2 = _mm256_unpacklo_ps(r(2), r(3));
            let t3 = _mm256_unpackhi_ps(r(2), r(3));
            let t4 = _mm256_unpacklo_ps(r(4), r(5));
            let t5 = _mm256_unpackhi_ps(r(4), r(5));
            let t6 = _mm256_unpacklo_ps(r(6), r(7));
            let t7 = _mm256_unpackhi_ps(r(6), r(7));
            let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            [
                _mm256_permute2f128_ps::<0x20>(u0, u4),
                _mm256_permute2f128_ps::<0x20>(u1, u5),
                _mm256_permute2f128_ps::<0x20>(u2, u6),
                _mm256_permute2f128_ps::<0x20>(u3, u7),
                _mm256_permute2f128_ps::<0x31>(u0, u4),
                _mm256_permute2f128_ps::<0x31>(u1, u5),
                _mm256_permute2f128_ps::<0x31>(u2, u6),
                _mm256_permute2f128_ps::<0x31>(u3, u7),
            ]
        }
    }

    /// `(c0·x + c1·y) + c2·z` on eight lanes (columns of the blended 3×3).
    #[inline(always)]
    unsafe fn apply8(c: [[__m256; 3]; 3], d: [__m256; 3]) -> [__m256; 3] {
        // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
        // only on CPUs that have them).
        unsafe {
            std::array::from_fn(|e| {
                _mm256_fmadd_ps(
                    c[2][e],
                    d[2],
                    _mm256_fmadd_ps(c[1][e], d[1], _mm256_mul_ps(c[0][e], d[0])),
                )
            })
        }
    }

    /// `a × b` on eight lanes.
    #[inline(always)]
    unsafe fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
        // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
        // only on CPUs that have them).
        unsafe {
            [
                _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
                _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
                _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
            ]
        }
    }

    /// `sign(det A) · cof(A) · n` on eight lanes: `(c1×c2) nx + (c2×c0) ny + (c0×c1) nz`,
    /// computed as `(c1×c2) nx + c0 × (c1 nz − c2 ny)` (two cross products instead of three:
    /// 21 operations instead of 27), negated where `det A = c0 · (c1×c2)` is negative.
    #[inline(always)]
    unsafe fn cofactor_normal8(c: [[__m256; 3]; 3], n: [__m256; 3]) -> [__m256; 3] {
        // SAFETY: register operations only; callers run with AVX2 and FMA (the kernel is chosen
        // only on CPUs that have them).
        unsafe {
            let k0 = cross8(c[1], c[2]);
            let w: [__m256; 3] = std::array::from_fn(|e| {
                _mm256_fmsub_ps(c[1][e], n[2], _mm256_mul_ps(c[2][e], n[1]))
            });
            // c0 × w + nx k0, component e: c0[e+1] w[e+2] − c0[e+2] w[e+1] + nx k0[e].
            let r: [__m256; 3] = std::array::from_fn(|e| {
                let (a, b) = ((e + 1) % 3, (e + 2) % 3);
                _mm256_fmadd_ps(
                    c[0][a],
                    w[b],
                    _mm256_fnmadd_ps(c[0][b], w[a], _mm256_mul_ps(n[0], k0[e])),
                )
            });
            let det = _mm256_fmadd_ps(
                c[0][2],
                k0[2],
                _mm256_fmadd_ps(c[0][1], k0[1], _mm256_mul_ps(c[0][0], k0[0])),
            );
            let flip = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps()),
                _mm256_set1_ps(-0.0),
            );
            r.map(|x| _mm256_xor_ps(x, flip))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use glam::{Mat4, Quat, Vec3};

    use super::{Kernel, Range};
    use crate::scene::SkinWeights;
    use crate::skin::VertexWeights;

    /// Ranges whose raw tangents were streamed, on any thread (only the test below makes
    /// outputs large enough).
    pub(super) static STREAMED_RANGES: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    thread_local! {
        /// Ranges this thread ran through the 512-bit loops (the two blends give the same bits,
        /// so only this tells which ran).
        pub(super) static WIDE_RANGES: Cell<usize> = const { Cell::new(0) };
        /// Ranges run with the vectors broadcast ([`Kernel::Avx512Broadcast`]).
        pub(super) static BROADCAST_RANGES: Cell<usize> = const { Cell::new(0) };
    }

    /// A range of four-slot weights on an AVX-512 kernel runs the 512-bit loops; a range on
    /// the 256-bit kernel, or whose weights are in the any-count layout, runs the 256-bit ones.
    #[test]
    fn wide_ranges_take_the_512_bit_loops() {
        if !Kernel::Avx512Blend.is_available() {
            eprintln!("no AVX-512F on this CPU: the 512-bit loops cannot run here");
            return;
        }
        let palette: Vec<Mat4> = (0..5)
            .map(|k| Mat4::from_rotation_translation(Quat::from_rotation_y(k as f32), Vec3::X))
            .collect();
        let n = 40;
        let raw = SkinWeights {
            width: 4,
            joints: (0..4 * n as u32).map(|i| i % 5).collect(),
            weights: vec![0.25; 4 * n],
        };
        let positions = vec![Vec3::new(1.0, 2.0, 3.0); n];
        let mut out = vec![Vec3::ZERO; n];
        let four = VertexWeights::from_skin_weights(&raw);
        let any = VertexWeights::csr_from_skin_weights(&raw);
        for (weights, kernel, expected) in [
            (&four, Kernel::Avx512Blend, 1),
            (&four, Kernel::Avx2Fma, 0),
            (&any, Kernel::Avx512Blend, 0),
        ] {
            let range = Range {
                palette: &palette,
                weights,
                positions: &positions,
                normals: None,
                tangents: None,
                renormalize: true,
                orthonormalize_tangents: true,
                blend3x3: false,
                kernel,
                stream_tangents: false,
            };
            let before = WIDE_RANGES.with(Cell::get);
            assert!(range.skin(0, &mut out, None, None));
            assert_eq!(WIDE_RANGES.with(Cell::get) - before, expected, "{kernel:?}");
        }
        // `SkinningJob::run_kernel` asks for the 512-bit loops exactly for the two 512-bit
        // kernels, and for broadcast vectors for `Avx512Broadcast` only (a mesh this small is
        // skinned on the calling thread).
        for (kernel, expected, broadcast) in [
            (Kernel::Avx512Blend, 1, 0),
            (Kernel::Avx512Broadcast, 1, 1),
            (Kernel::Avx2Fma, 0, 0),
        ] {
            let before = WIDE_RANGES.with(Cell::get);
            let broadcast_before = BROADCAST_RANGES.with(Cell::get);
            crate::skin::SkinningJob {
                palette: &palette,
                weights: &four,
                positions: &positions,
                normals: None,
                tangents: None,
                out_positions: &mut out,
                out_normals: None,
                out_tangents: None,
                renormalize: true,
                orthonormalize_tangents: true,
                normal_mode: crate::skin::NormalMode::Exact,
            }
            .run_kernel(kernel)
            .expect("a valid job");
            assert_eq!(WIDE_RANGES.with(Cell::get) - before, expected, "{kernel:?}");
            assert_eq!(
                BROADCAST_RANGES.with(Cell::get) - broadcast_before,
                broadcast,
                "{kernel:?}: vectors broadcast"
            );
        }
    }

    /// A job whose outputs pass [`super::STREAM_MIN_BYTES`] writes its raw tangents with
    /// streaming stores, to the same bits as smaller jobs over the same vertices (which do
    /// not stream).
    #[test]
    fn large_outputs_stream_raw_tangents_to_the_same_bits() {
        use glam::Vec4;

        use crate::skin::{NormalMode, SkinningJob};

        if !super::available() {
            eprintln!("no AVX2 + FMA on this CPU: nothing streams");
            return;
        }
        // 40 bytes of outputs a vertex: just past the threshold.
        let n = super::STREAM_MIN_BYTES / 40 + 1000;
        let mut rng = crate::math::XorShift64(0x2545_f491_4f6c_dd1d);
        let mut f = move || rng.range(-0.5, 0.5);
        let palette: Vec<Mat4> = (0..64)
            .map(|_| {
                let axis = Vec3::new(f(), f(), f()).normalize_or(Vec3::Y);
                Mat4::from_rotation_translation(
                    Quat::from_axis_angle(axis, 6.0 * f()),
                    Vec3::X * f(),
                )
            })
            .collect();
        let raw = SkinWeights {
            width: 4,
            joints: (0..4 * n).map(|_| ((f() + 0.5) * 63.99) as u32).collect(),
            weights: (0..4 * n).map(|_| 0.25).collect(),
        };
        let weights = VertexWeights::from_skin_weights(&raw);
        let positions: Vec<Vec3> = (0..n).map(|_| Vec3::new(f(), f(), f())).collect();
        let normals: Vec<Vec3> = (0..n).map(|_| Vec3::new(f(), f(), f())).collect();
        let tangents: Vec<Vec4> = (0..n).map(|_| Vec4::new(f(), f(), f(), 1.0)).collect();
        let skin = |range: std::ops::Range<usize>, kernel: Kernel| {
            let sub = VertexWeights::from_skin_weights(&SkinWeights {
                width: 4,
                joints: raw.joints[4 * range.start..4 * range.end].to_vec(),
                weights: raw.weights[4 * range.start..4 * range.end].to_vec(),
            });
            let whole = range.len() == n;
            let m = range.len();
            let (mut p, mut nn, mut t) = (
                vec![Vec3::ZERO; m],
                vec![Vec3::ZERO; m],
                vec![Vec4::ZERO; m],
            );
            SkinningJob {
                palette: &palette,
                weights: if whole { &weights } else { &sub },
                positions: &positions[range.clone()],
                normals: Some(&normals[range.clone()]),
                tangents: Some(&tangents[range]),
                out_positions: &mut p,
                out_normals: Some(&mut nn),
                out_tangents: Some(&mut t),
                renormalize: false,
                orthonormalize_tangents: false,
                normal_mode: NormalMode::Blend3x3,
            }
            .run_kernel(kernel)
            .expect("a valid job");
            t.iter()
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect::<Vec<u32>>()
        };
        for kernel in [
            Kernel::Avx2Fma,
            Kernel::Avx512Blend,
            Kernel::Avx512Broadcast,
        ] {
            if !kernel.is_available() {
                continue;
            }
            let before = STREAMED_RANGES.load(std::sync::atomic::Ordering::Relaxed);
            let whole = skin(0..n, kernel);
            let streamed = STREAMED_RANGES.load(std::sync::atomic::Ordering::Relaxed) - before;
            assert!(streamed > 0, "{kernel:?}: the large job streamed");
            // Windows of 100 000 vertices (4 MB of outputs) do not stream.
            for from in (0..n).step_by(100_000) {
                let to = (from + 100_000).min(n);
                assert!(
                    skin(from..to, kernel) == whole[4 * from..4 * to],
                    "{kernel:?}: vertices {from}..{to}"
                );
            }
            let after = STREAMED_RANGES.load(std::sync::atomic::Ordering::Relaxed) - before;
            assert_eq!(
                after, streamed,
                "{kernel:?}: the smaller jobs did not stream"
            );
        }
    }
}
