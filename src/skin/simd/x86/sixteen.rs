//! Phase 2 of the kernel on sixteen lanes, for the two AVX-512 kernels: the same operations
//! on each lane as the eight-lane phase 2 (`blocks`), so the same bits, with half the
//! instructions per vertex.
//!
//! Method: phase 1 keeps each vertex's three blended columns in three arrays of 16-byte rows
//! (one per column) instead of one 32-byte and one 16-byte row; phase 2 then loads four
//! consecutive rows per 512-bit register and transposes the four 4×4 blocks inside their
//! 128-bit lanes (four unpacks and three or four shuffles per column), with no lane-crossing
//! step. Lane `4q + j` of the result holds vertex `4j + q` of the group ([`lane_vertex`]):
//! every lane-wise operation is indifferent to the order, and the normals' 12-byte records
//! are gathered into and scattered from that order with two permutes per register
//! ([`aos3_gather`], [`aos3_scatter`]).
//!
//! Cost per sixteen vertices: 21 shuffles for the columns (the eight-lane form spends ~27
//! per eight, its 256-bit transposes crossing lanes), 6 permutes each way for the normals,
//! 8 shuffles each way for the tangents. The square root and the division run at half the
//! rate on 512-bit registers, so they cost what they did. Measured: BENCHMARKS.md.
//!
//! The helpers hold no closures: a closure does not take the target features of the function
//! it is inlined into, and an AVX-512 intrinsic in one becomes a call (measured 2× slower).
//!
//! Limits: four-slot weights only (the any-count layout runs the 256-bit loops); AVX-512F.

use std::arch::x86_64::*;

use super::{BLOCK, Inputs, Source, columns, each_vertex, load3, point, store3};
use crate::skin::simd::Range;

/// The group's vertex in lane `l`: lane `4q + j` holds vertex `4j + q` (the order the in-lane
/// transposes give). The map is its own inverse.
const fn lane_vertex(l: usize) -> usize {
    4 * (l % 4) + l / 4
}

/// Indices and mask that gather coordinate `c` of sixteen 12-byte records (three registers
/// `o0 o1 o2`) into lane order: `permutex2var(o0, idx, o1)` takes the lanes whose float lies
/// in the first 32, `mask_permutexvar(.., mask, idx, o2)` the rest (its index is `idx` mod
/// 16, the float's place in `o2`).
const fn aos3_gather(c: usize) -> ([i32; 16], u16) {
    let mut idx = [0; 16];
    let mut mask = 0;
    let mut l = 0;
    while l < 16 {
        let f = 3 * lane_vertex(l) + c;
        idx[l] = f as i32;
        if f >= 32 {
            mask |= 1 << l;
        }
        l += 1;
    }
    (idx, mask)
}

/// Indices and mask that build output register `r` of sixteen 12-byte records from the
/// coordinates `x y z` in lane order: `permutex2var(x, idx, y)` for x and y floats,
/// `mask_permutexvar(.., mask, idx, z)` for z floats (index mod 16: the vertex's lane).
const fn aos3_scatter(r: usize) -> ([i32; 16], u16) {
    let mut idx = [0; 16];
    let mut mask = 0;
    let mut e = 0;
    while e < 16 {
        let f = 16 * r + e;
        let l = lane_vertex(f / 3) as i32;
        idx[e] = match f % 3 {
            1 => l + 16,
            _ => l,
        };
        if f % 3 == 2 {
            mask |= 1 << e;
        }
        e += 1;
    }
    (idx, mask)
}

static GATHER: [([i32; 16], u16); 3] = [aos3_gather(0), aos3_gather(1), aos3_gather(2)];
static SCATTER: [([i32; 16], u16); 3] = [aos3_scatter(0), aos3_scatter(1), aos3_scatter(2)];

/// Sixteen rows of four floats at `p` (64 floats) to four registers (x, y, z, w) in lane
/// order.
#[inline(always)]
unsafe fn soa16(p: *const f32) -> [__m512; 4] {
    // SAFETY: the caller's contract: 64 floats at `p`; the caller runs with AVX-512F.
    unsafe {
        let r0 = _mm512_loadu_ps(p);
        let r1 = _mm512_loadu_ps(p.add(16));
        let r2 = _mm512_loadu_ps(p.add(32));
        let r3 = _mm512_loadu_ps(p.add(48));
        let t0 = _mm512_unpacklo_ps(r0, r1);
        let t1 = _mm512_unpackhi_ps(r0, r1);
        let t2 = _mm512_unpacklo_ps(r2, r3);
        let t3 = _mm512_unpackhi_ps(r2, r3);
        [
            _mm512_shuffle_ps::<0x44>(t0, t2),
            _mm512_shuffle_ps::<0xEE>(t0, t2),
            _mm512_shuffle_ps::<0x44>(t1, t3),
            _mm512_shuffle_ps::<0xEE>(t1, t3),
        ]
    }
}

/// Inverse of [`soa16`]: sixteen rows of four floats at `p`.
#[inline(always)]
unsafe fn rows16(v: [__m512; 4], p: *mut f32) {
    // SAFETY: the caller's contract: 64 floats at `p`; the caller runs with AVX-512F.
    unsafe {
        let t0 = _mm512_unpacklo_ps(v[0], v[1]);
        let t1 = _mm512_unpackhi_ps(v[0], v[1]);
        let t2 = _mm512_unpacklo_ps(v[2], v[3]);
        let t3 = _mm512_unpackhi_ps(v[2], v[3]);
        _mm512_storeu_ps(p, _mm512_shuffle_ps::<0x44>(t0, t2));
        _mm512_storeu_ps(p.add(16), _mm512_shuffle_ps::<0xEE>(t0, t2));
        _mm512_storeu_ps(p.add(32), _mm512_shuffle_ps::<0x44>(t1, t3));
        _mm512_storeu_ps(p.add(48), _mm512_shuffle_ps::<0xEE>(t1, t3));
    }
}

/// Sixteen rows of four floats (x, y, z, w ignored) to three registers in lane order.
#[inline(always)]
unsafe fn soa16_xyz(p: *const f32) -> [__m512; 3] {
    // SAFETY: the caller's contract, as for `soa16`.
    unsafe {
        let [x, y, z, _] = soa16(p);
        [x, y, z]
    }
}

/// Sixteen (x, y, z) records at `p` (48 floats) to three registers in lane order.
#[inline(always)]
unsafe fn load_aos3_16(p: *const f32) -> [__m512; 3] {
    // SAFETY: the caller's contract: 48 floats at `p`; the caller runs with AVX-512F.
    unsafe {
        let o0 = _mm512_loadu_ps(p);
        let o1 = _mm512_loadu_ps(p.add(16));
        let o2 = _mm512_loadu_ps(p.add(32));
        let mut v = [o0; 3];
        for (v, (idx, mask)) in v.iter_mut().zip(&GATHER) {
            let idx = _mm512_loadu_si512(idx.as_ptr().cast());
            let low = _mm512_permutex2var_ps(o0, idx, o1);
            *v = _mm512_mask_permutexvar_ps(low, *mask, idx, o2);
        }
        v
    }
}

/// Inverse of [`load_aos3_16`]: sixteen (x, y, z) records at `p`.
#[inline(always)]
unsafe fn store_aos3_16(v: [__m512; 3], p: *mut f32) {
    // SAFETY: the caller's contract: 48 floats at `p`; the caller runs with AVX-512F.
    unsafe {
        for (r, (idx, mask)) in SCATTER.iter().enumerate() {
            let idx = _mm512_loadu_si512(idx.as_ptr().cast());
            let xy = _mm512_permutex2var_ps(v[0], idx, v[1]);
            _mm512_storeu_ps(
                p.add(16 * r),
                _mm512_mask_permutexvar_ps(xy, *mask, idx, v[2]),
            );
        }
    }
}

/// `(c0·x + c1·y) + c2·z` on sixteen lanes: `apply8`'s operations.
#[inline(always)]
unsafe fn apply16(c: [[__m512; 3]; 3], d: [__m512; 3]) -> [__m512; 3] {
    // SAFETY: register operations only; the caller runs with AVX-512F.
    unsafe {
        let mut r = d;
        for (e, r) in r.iter_mut().enumerate() {
            *r = _mm512_fmadd_ps(
                c[2][e],
                d[2],
                _mm512_fmadd_ps(c[1][e], d[1], _mm512_mul_ps(c[0][e], d[0])),
            );
        }
        r
    }
}

/// `a × b` on sixteen lanes: `cross8`'s operations.
#[inline(always)]
unsafe fn cross16(a: [__m512; 3], b: [__m512; 3]) -> [__m512; 3] {
    // SAFETY: register operations only; the caller runs with AVX-512F.
    unsafe {
        [
            _mm512_fmsub_ps(a[1], b[2], _mm512_mul_ps(a[2], b[1])),
            _mm512_fmsub_ps(a[2], b[0], _mm512_mul_ps(a[0], b[2])),
            _mm512_fmsub_ps(a[0], b[1], _mm512_mul_ps(a[1], b[0])),
        ]
    }
}

/// `sign(det A) · cof(A) · n` on sixteen lanes: `cofactor_normal8`'s operations.
#[inline(always)]
unsafe fn cofactor_normal16(c: [[__m512; 3]; 3], n: [__m512; 3]) -> [__m512; 3] {
    // SAFETY: register operations only; the caller runs with AVX-512F.
    unsafe {
        let k0 = cross16(c[1], c[2]);
        let mut w = n;
        for (e, w) in w.iter_mut().enumerate() {
            *w = _mm512_fmsub_ps(c[1][e], n[2], _mm512_mul_ps(c[2][e], n[1]));
        }
        let mut r = n;
        for (e, r) in r.iter_mut().enumerate() {
            let (a, b) = ((e + 1) % 3, (e + 2) % 3);
            *r = _mm512_fmadd_ps(
                c[0][a],
                w[b],
                _mm512_fnmadd_ps(c[0][b], w[a], _mm512_mul_ps(n[0], k0[e])),
            );
        }
        let det = _mm512_fmadd_ps(
            c[0][2],
            k0[2],
            _mm512_fmadd_ps(c[0][1], k0[1], _mm512_mul_ps(c[0][0], k0[0])),
        );
        // The sign bit flipped where det < 0 (AVX-512F has no float xor: an integer one).
        let negative = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(det, _mm512_setzero_ps());
        let sign = _mm512_set1_epi32(i32::MIN);
        for r in &mut r {
            let x = _mm512_castps_si512(*r);
            *r = _mm512_castsi512_ps(_mm512_mask_xor_epi32(x, negative, x, sign));
        }
        r
    }
}

/// `v / |v|` on sixteen lanes, or zero where `|v|²` is zero or not finite: `unit8`'s
/// operations.
#[inline(always)]
unsafe fn unit16(x: __m512, y: __m512, z: __m512) -> [__m512; 3] {
    // SAFETY: register operations only; the caller runs with AVX-512F.
    unsafe {
        let len2 = _mm512_fmadd_ps(z, z, _mm512_fmadd_ps(y, y, _mm512_mul_ps(x, x)));
        let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(len2, _mm512_setzero_ps())
            & _mm512_cmp_ps_mask::<_CMP_LT_OQ>(len2, _mm512_set1_ps(f32::INFINITY));
        let r = _mm512_maskz_div_ps(ok, _mm512_set1_ps(1.0), _mm512_sqrt_ps(len2));
        [
            _mm512_mul_ps(x, r),
            _mm512_mul_ps(y, r),
            _mm512_mul_ps(z, r),
        ]
    }
}

/// Where a group's lanes lie in the range.
struct Group {
    /// Index in the range of lane order's vertex 0, and how many lanes are real.
    first: usize,
    lanes: usize,
    /// The range's length.
    n: usize,
}

/// Normals and tangents of a block (`blocks`, on sixteen lanes): phase 1 per vertex (blend,
/// position, the blended columns into three scratch arrays), phase 2 per group of sixteen.
/// A group at the end of the range reads its inputs and writes its results through a scratch
/// (zero padding lanes, whose results are never written).
///
/// # Safety
/// As for the kernel's `run`; the CPU has AVX-512F.
#[target_feature(enable = "avx2,fma,avx512f")]
pub(super) unsafe fn blocks16<S: Source, const BC: bool>(
    k: &Range<'_>,
    inp: &Inputs,
    start: usize,
    n: usize,
    op: *mut f32,
    on: Option<&mut [glam::Vec3]>,
    ot: Option<&mut [glam::Vec4]>,
) {
    // Per column, per vertex of the block: the blended column (4 floats).
    let mut sc = [[[0.0f32; 4]; BLOCK]; 3];
    let onp = on.map(|o| o.as_mut_ptr().cast::<f32>());
    let otp = ot.map(|o| o.as_mut_ptr().cast::<f32>());
    let mut i0 = 0;
    // SAFETY: the caller's contract: as for `run`; scratch indices stay below BLOCK.
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
                let c = columns(a, b);
                for (col, c) in sc.iter_mut().zip(c) {
                    _mm_storeu_ps(col[i].as_mut_ptr(), c);
                }
            };
            if i0 + m < n {
                (0..m).for_each(|i| phase1(i, true));
            } else {
                each_vertex(m, phase1);
            }
            for i in m..m.div_ceil(16) * 16 {
                for col in &mut sc {
                    col[i] = [0.0; 4];
                }
            }
            for g0 in (0..m).step_by(16) {
                let cols: [[__m512; 3]; 3] =
                    std::array::from_fn(|c| soa16_xyz(sc[c][g0..g0 + 16].as_ptr().cast()));
                let at = Group {
                    first: i0 + g0,
                    lanes: (m - g0).min(16),
                    n,
                };
                group16(k, inp, cols, &at, start, onp, otp);
            }
            i0 += m;
        }
    }
}

/// Phase 2 of one group: normals and tangents from the group's blended columns `cols`.
///
/// # Safety
/// As for [`blocks16`]; the group's real lanes lie in the range.
#[inline(always)]
unsafe fn group16(
    k: &Range<'_>,
    inp: &Inputs,
    cols: [[__m512; 3]; 3],
    at: &Group,
    start: usize,
    onp: Option<*mut f32>,
    otp: Option<*mut f32>,
) {
    let whole = at.lanes == 16;
    let v0 = start + at.first;
    // SAFETY: a whole group's sixteen vertices lie in the range, so its direct reads and writes
    // stay in the arrays; a partial group's real lanes are read and written one by one.
    unsafe {
        let mut unit = [_mm512_setzero_ps(); 3];
        if !inp.normals.is_null() {
            let nin = if whole {
                load_aos3_16(inp.normals.add(3 * v0))
            } else {
                let mut sn = [[0.0f32; 4]; 16];
                for (j, row) in sn.iter_mut().enumerate().take(at.lanes) {
                    let v = v0 + j;
                    _mm_storeu_ps(
                        row.as_mut_ptr(),
                        load3(inp.normals, v, v + 1 < inp.normals_len),
                    );
                }
                soa16_xyz(sn.as_ptr().cast())
            };
            let raw = if k.blend3x3 {
                apply16(cols, nin)
            } else {
                cofactor_normal16(cols, nin)
            };
            if k.renormalize || (!inp.tangents.is_null() && k.orthonormalize_tangents) {
                unit = unit16(raw[0], raw[1], raw[2]);
            }
            if let Some(onp) = onp {
                let out = if k.renormalize { unit } else { raw };
                if whole {
                    store_aos3_16(out, onp.add(3 * at.first));
                } else {
                    let mut sn = [[0.0f32; 4]; 16];
                    rows16([out[0], out[1], out[2], out[2]], sn.as_mut_ptr().cast());
                    for (j, row) in sn.iter().enumerate().take(at.lanes) {
                        let g = at.first + j;
                        store3(onp.add(3 * g), _mm_loadu_ps(row.as_ptr()), g + 1 < at.n);
                    }
                }
            }
        }
        let Some(otp) = otp.filter(|_| !inp.tangents.is_null()) else {
            return;
        };
        let [tx, ty, tz, tw] = if whole {
            soa16(inp.tangents.add(4 * v0))
        } else {
            let mut st = [[0.0f32; 4]; 16];
            for (j, row) in st.iter_mut().enumerate().take(at.lanes) {
                _mm_storeu_ps(
                    row.as_mut_ptr(),
                    _mm_loadu_ps(inp.tangents.add(4 * (v0 + j))),
                );
            }
            soa16(st.as_ptr().cast())
        };
        let [rx, ry, rz] = apply16(cols, [tx, ty, tz]);
        let [x, y, z] = if k.orthonormalize_tangents {
            let [ux, uy, uz] = unit;
            let d = _mm512_fmadd_ps(uz, rz, _mm512_fmadd_ps(uy, ry, _mm512_mul_ps(ux, rx)));
            unit16(
                _mm512_fnmadd_ps(ux, d, rx),
                _mm512_fnmadd_ps(uy, d, ry),
                _mm512_fnmadd_ps(uz, d, rz),
            )
        } else {
            [rx, ry, rz]
        };
        if whole {
            rows16([x, y, z, tw], otp.add(4 * at.first));
        } else {
            let mut st = [[0.0f32; 4]; 16];
            rows16([x, y, z, tw], st.as_mut_ptr().cast());
            for (j, row) in st.iter().enumerate().take(at.lanes) {
                _mm_storeu_ps(otp.add(4 * (at.first + j)), _mm_loadu_ps(row.as_ptr()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{aos3_gather, aos3_scatter, lane_vertex};

    /// The index tables against a plain model of the permutes: gathering coordinate `c` puts
    /// float `3v + c` in vertex `v`'s lane, and scattering puts every lane's coordinate back.
    #[test]
    fn gather_and_scatter_tables_invert_each_other() {
        let floats: Vec<usize> = (0..48).collect();
        let mut lanes = [[0usize; 16]; 3];
        for (c, lane) in lanes.iter_mut().enumerate() {
            let (idx, mask) = aos3_gather(c);
            for l in 0..16 {
                let i = idx[l] as usize;
                lane[l] = if mask & (1 << l) != 0 {
                    floats[32 + (i & 15)]
                } else {
                    floats[i & 31]
                };
                assert_eq!(lane[l], 3 * lane_vertex(l) + c, "coordinate {c}, lane {l}");
            }
        }
        for r in 0..3 {
            let (idx, mask) = aos3_scatter(r);
            for (e, &i) in idx.iter().enumerate() {
                let i = i as usize;
                let got = if mask & (1 << e) != 0 {
                    lanes[2][i & 15]
                } else if i & 16 != 0 {
                    lanes[1][i & 15]
                } else {
                    lanes[0][i & 15]
                };
                assert_eq!(got, 16 * r + e, "register {r}, element {e}");
            }
        }
        assert!((0..16).all(|l| lane_vertex(lane_vertex(l)) == l));
    }
}
