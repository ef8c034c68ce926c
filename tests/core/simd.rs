//! The AVX2 + FMA skinning kernel and the portable path (`SkinningJob::run_portable`), both
//! against an f64 computation written here, within bounds that scale with the magnitude of
//! the terms summed: random palettes and weights (quantised as unorm8 and unorm16 weights and
//! u8 and u16 joints would be), every normal mode with and without renormalisation, tangents,
//! and vertex counts that leave tails and split across threads. The kernel also skins every
//! vertex to the same bits wherever it falls in a block or a job (what the partitioner's
//! bit-exact submeshes rely on), and its 256- and 512-bit blends give the same bits.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{DVec3, Mat4, Quat, Vec3, Vec4};
use skinview::scene::SkinWeights;
use skinview::skin::simd::{self, Kernel};
use skinview::skin::{NormalMode, SkinningJob, VertexWeights};

use crate::common::rng::XorShift64;

/// How the weights are stored before import: (largest joint index, weight quantum).
const ENCODINGS: [(&str, u32, Option<f32>); 4] = [
    ("u8 joints, unorm8 weights", 255, Some(255.0)),
    ("u16 joints, unorm16 weights", 300, Some(65535.0)),
    ("u8 joints, f32 weights", 40, None),
    ("u16 joints, f32 weights", 1000, None),
];

struct Case {
    palette: Vec<Mat4>,
    weights: VertexWeights,
    raw: SkinWeights,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
}

fn case(seed: u64, n: usize, joints: u32, quantum: Option<f32>) -> Case {
    let mut r = XorShift64(seed);
    let palette: Vec<Mat4> = (0..=joints)
        .map(|_| {
            let scale = Vec3::new(r.range(0.5, 2.0), r.range(0.5, 2.0), r.range(0.5, 2.0));
            Mat4::from_scale_rotation_translation(
                scale,
                Quat::from_axis_angle(r.direction(), r.range(-3.1, 3.1)),
                Vec3::new(r.range(-5.0, 5.0), r.range(-5.0, 5.0), r.range(-5.0, 5.0)),
            )
        })
        .collect();
    let mut js = Vec::with_capacity(n * 4);
    let mut ws = Vec::with_capacity(n * 4);
    for v in 0..n {
        // 1 to 4 used slots (unused: joint 0, weight 0), weights summing to 1 before
        // quantisation.
        let used = 1 + v % 4;
        let raw: Vec<f32> = (0..used).map(|_| r.range(0.05, 1.0)).collect();
        let sum: f32 = raw.iter().sum();
        for &x in &raw {
            js.push((r.next_f32() * (joints + 1) as f32) as u32 % (joints + 1));
            let w = x / sum;
            ws.push(quantum.map_or(w, |q| (w * q).round() / q));
        }
        for _ in used..4 {
            js.push(0);
            ws.push(0.0);
        }
    }
    let raw = SkinWeights {
        width: 4,
        joints: js,
        weights: ws,
    };
    let positions: Vec<Vec3> = (0..n)
        .map(|_| Vec3::new(r.range(-5.0, 5.0), r.range(-5.0, 5.0), r.range(-5.0, 5.0)))
        .collect();
    let normals: Vec<Vec3> = (0..n).map(|_| r.direction()).collect();
    let tangents = normals
        .iter()
        .map(|&nv| {
            let t = nv
                .cross(r.direction())
                .normalize_or(nv.any_orthonormal_vector());
            t.extend(if r.next_f32() < 0.5 { 1.0 } else { -1.0 })
        })
        .collect();
    Case {
        palette,
        weights: VertexWeights::from_skin_weights(&raw),
        raw,
        positions,
        normals,
        tangents,
    }
}

#[derive(Default)]
struct Out {
    p: Vec<Vec3>,
    n: Option<Vec<Vec3>>,
    t: Option<Vec<Vec4>>,
}

/// What a case asks for: normals, tangents, the normal mode, renormalised normals,
/// orthonormalised tangents.
#[derive(Clone, Copy)]
struct Asked {
    normals: bool,
    tangents: bool,
    mode: NormalMode,
    renormalize: bool,
    ortho: bool,
}

/// The case on the kernel `SkinningJob::run` picks (`simd`) or on the portable path.
fn run(c: &Case, a: Asked, simd: bool) -> Out {
    let kernel = if simd {
        Kernel::chosen()
    } else {
        Kernel::Portable
    };
    run_on(c, &c.palette, a, kernel)
}

/// Every output's bits, positions then normals then tangents.
fn out_bits(o: &Out) -> Vec<u32> {
    let mut bits: Vec<u32> =
        o.p.iter()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits)
            .collect();
    bits.extend(
        o.n.iter()
            .flatten()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits),
    );
    bits.extend(
        o.t.iter()
            .flatten()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits),
    );
    bits
}

/// The case on `kernel` with `palette` (the same matrices as `c.palette`, wherever they lie in
/// memory).
fn run_on(c: &Case, palette: &[Mat4], a: Asked, kernel: Kernel) -> Out {
    let Asked {
        normals,
        tangents,
        mode,
        renormalize,
        ortho,
    } = a;
    let n = c.positions.len();
    let mut o = Out {
        p: vec![Vec3::splat(f32::NAN); n],
        n: normals.then(|| vec![Vec3::splat(f32::NAN); n]),
        t: tangents.then(|| vec![Vec4::splat(f32::NAN); n]),
    };
    let mut job = SkinningJob {
        palette,
        weights: &c.weights,
        positions: &c.positions,
        normals: normals.then_some(&c.normals[..]),
        tangents: tangents.then_some(&c.tangents[..]),
        out_positions: &mut o.p,
        out_normals: o.n.as_deref_mut(),
        out_tangents: o.t.as_deref_mut(),
        renormalize,
        orthonormalize_tangents: ortho,
        normal_mode: mode,
    };
    job.run_kernel(kernel).unwrap();
    o
}

/// `Σ w_k M_k p` in f64, and the magnitude `Σ |w_k| (‖M_k‖·|p| + |t_k|)` the rounding scales
/// with.
fn reference(c: &Case, v: usize) -> (DVec3, f64) {
    let p = c.positions[v].as_dvec3();
    let mut out = DVec3::ZERO;
    let mut magnitude = 0.0;
    for k in 0..4 {
        let w = c.raw.weights[v * 4 + k] as f64;
        let m = c.palette[c.raw.joints[v * 4 + k] as usize].as_dmat4();
        out += m.transform_point3(p) * w;
        let norm = m.x_axis.length() + m.y_axis.length() + m.z_axis.length();
        magnitude += w.abs() * (norm * p.length() + m.w_axis.truncate().length());
    }
    (out, magnitude)
}

/// Vertex `v`'s blended 3×3 in f64 (columns), and per column the magnitude `Σ |w_k| ‖c_k‖`
/// its f32 rounding scales with.
fn blended(c: &Case, v: usize) -> ([DVec3; 3], [f64; 3]) {
    let mut cols = [DVec3::ZERO; 3];
    let mut mags = [0.0; 3];
    for k in 0..4 {
        let w = c.raw.weights[v * 4 + k] as f64;
        let m = c.palette[c.raw.joints[v * 4 + k] as usize].as_dmat4();
        for (i, col) in [m.x_axis, m.y_axis, m.z_axis].iter().enumerate() {
            cols[i] += col.truncate() * w;
            mags[i] += w.abs() * col.truncate().length();
        }
    }
    (cols, mags)
}

/// The f64 normal of vertex `v` (raw: `sign(det)·cof(A)·n` or `A·n`) and the magnitude its
/// rounding scales with; `None` where the sign of a near-zero determinant decides it.
fn reference_normal(c: &Case, v: usize, mode: NormalMode) -> Option<(DVec3, f64)> {
    let n = c.normals[v].as_dvec3();
    let ([x, y, z], [mx, my, mz]) = blended(c, v);
    match mode {
        NormalMode::Blend3x3 => Some((x * n.x + y * n.y + z * n.z, (mx + my + mz) * n.length())),
        NormalMode::Exact => {
            let c0 = y.cross(z);
            let det = x.dot(c0);
            let mag = (my * mz + mz * mx + mx * my) * n.length();
            if det.abs() < 1e-4 * mx * my * mz {
                return None;
            }
            let r = c0 * n.x + z.cross(x) * n.y + x.cross(y) * n.z;
            Some((if det < 0.0 { -r } else { r }, mag))
        }
    }
}

/// Positions against f64: within 2e-6 of the magnitude of the terms summed (about 16 units
/// in the last place of the largest term; the f32 paths round ~10 times per coordinate).
const POSITION_REL: f64 = 2e-6;

/// Normals and tangents against f64, relative to the magnitude of the terms (cross products
/// of blended columns round each column first, then multiply: a few tens of ulps).
const DIRECTION_REL: f64 = 2e-5;

/// Unit vectors are only checked where the raw vector is at least this fraction of its
/// magnitude: a blend that nearly cancels has no well-defined direction in f32.
const CONDITIONED: f64 = 1e-3;

/// `got` (unit when `unit`) against the f64 `want` of magnitude `mag`; `Err` describes the miss.
fn check_direction(got: Vec3, want: DVec3, mag: f64, unit: bool) -> Result<(), String> {
    let got = got.as_dvec3();
    if unit {
        let len = want.length();
        if len < CONDITIONED * mag {
            return Ok(());
        }
        let err = (got - want / len).length();
        let tol = DIRECTION_REL * mag / len;
        (err <= tol)
            .then_some(())
            .ok_or(format!("unit {got} vs {} ({err:e} > {tol:e})", want / len))
    } else {
        let err = (got - want).length();
        let tol = DIRECTION_REL * mag;
        (err <= tol)
            .then_some(())
            .ok_or(format!("raw {got} vs {want} ({err:e} > {tol:e})"))
    }
}

/// Skin vertices `range` of `c` as a job of their own (its own weights array, built from the
/// slice of the raw weights: a submesh, as the partitioner makes them).
fn run_range(c: &Case, range: std::ops::Range<usize>, a: Asked) -> Out {
    run(&sub_case(c, range, false), a, true)
}

/// Vertices `range` of `c` as a case of their own, with four-slot weights or (`any_count`) the
/// any-count layout.
fn sub_case(c: &Case, range: std::ops::Range<usize>, any_count: bool) -> Case {
    let raw = SkinWeights {
        width: 4,
        joints: c.raw.joints[range.start * 4..range.end * 4].to_vec(),
        weights: c.raw.weights[range.start * 4..range.end * 4].to_vec(),
    };
    Case {
        palette: c.palette.clone(),
        weights: if any_count {
            VertexWeights::csr_from_skin_weights(&raw)
        } else {
            VertexWeights::from_skin_weights(&raw)
        },
        raw: c.raw.clone(),
        positions: c.positions[range.clone()].to_vec(),
        normals: c.normals[range.clone()].to_vec(),
        tangents: c.tangents[range].to_vec(),
    }
}

/// Every combination of outputs and normal modes a case is run in, by name.
fn asked_modes() -> Vec<(&'static str, Asked)> {
    let asked = |normals, tangents, mode, renormalize, ortho| Asked {
        normals,
        tangents,
        mode,
        renormalize,
        ortho,
    };
    use NormalMode::{Blend3x3, Exact};
    vec![
        ("positions", asked(false, false, Exact, true, true)),
        (
            "exact normals, renormalised",
            asked(true, false, Exact, true, true),
        ),
        ("exact normals, raw", asked(true, false, Exact, false, true)),
        (
            "blended 3x3 normals, renormalised",
            asked(true, false, Blend3x3, true, true),
        ),
        (
            "blended 3x3 normals, raw",
            asked(true, false, Blend3x3, false, true),
        ),
        (
            "exact normals + tangents",
            asked(true, true, Exact, true, true),
        ),
        (
            "blended 3x3 normals, raw + orthonormalised tangents",
            asked(true, true, Blend3x3, false, true),
        ),
        // Raw tangents: in phase 1 beside raw blended normals (ozz's output), and in the
        // blocks beside exact renormalised normals.
        (
            "blended 3x3 normals, raw + raw tangents",
            asked(true, true, Blend3x3, false, false),
        ),
        (
            "exact normals, renormalised + raw tangents",
            asked(true, true, Exact, true, false),
        ),
        // Tangents without normals, raw (phase 1) and unit (the blocks).
        ("raw tangents alone", asked(false, true, Exact, true, false)),
        ("unit tangents alone", asked(false, true, Exact, true, true)),
    ]
}

/// Vertex `v` of `out` (the kernel's or the portable path's) against the f64 computation
/// (`want`: the position and the magnitude of its terms): the position, the normal and the
/// tangent where asked. `at` names the vertex in a failure.
fn check_vertex(
    c: &Case,
    out: &Out,
    v: usize,
    a: Asked,
    want: (DVec3, f64),
    at: impl Fn() -> String,
) {
    let (want, magnitude) = want;
    let tol = POSITION_REL * (1.0 + magnitude);
    let err = (out.p[v].as_dvec3() - want).length();
    assert!(err <= tol, "{}: off f64 by {err:e} (bound {tol:e})", at());
    let normal = reference_normal(c, v, a.mode).filter(|_| a.normals);
    if let Some((rn, mag)) = normal {
        let got_n = out.n.as_ref().unwrap()[v];
        if let Err(e) = check_direction(got_n, rn, mag, a.renormalize) {
            panic!("{}: normal {e}", at());
        }
    }
    if a.tangents {
        check_tangent(c, out, v, normal, a.ortho, at);
    }
}

/// The tangent of vertex `v`: A·t made perpendicular to the unit normal (without normals: A·t
/// alone), unit length (`ortho`); or A·t as it is. The handedness is kept. Ill-conditioned
/// directions are skipped.
fn check_tangent(
    c: &Case,
    out: &Out,
    v: usize,
    normal: Option<(DVec3, f64)>,
    ortho: bool,
    at: impl Fn() -> String,
) {
    let ([x, y, z], [mx, my, mz]) = blended(c, v);
    let t = c.tangents[v];
    let tv = t.truncate().as_dvec3();
    let raw = x * tv.x + y * tv.y + z * tv.z;
    let got_t = out.t.as_ref().unwrap()[v];
    assert_eq!(got_t.w, t.w, "{}: handedness", at());
    let tmag = (mx + my + mz) * tv.length();
    let (want_t, tmag) = match normal {
        _ if !ortho => (raw, tmag),
        None => {
            if raw.length() < CONDITIONED * tmag {
                return;
            }
            (raw, tmag)
        }
        Some((rn, mag)) => {
            let len = rn.length();
            if len < CONDITIONED * mag {
                return;
            }
            let u = rn / len;
            (raw - u * u.dot(raw), tmag + raw.length() * mag / len)
        }
    };
    if let Err(e) = check_direction(got_t.truncate(), want_t, tmag, ortho) {
        panic!("{}: tangent {e}", at());
    }
}

/// Each component's bits, to compare outputs exactly.
fn bits3(x: &[Vec3]) -> Vec<[u32; 3]> {
    x.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
}

/// Each component's bits, to compare outputs exactly.
fn bits4(x: &[Vec4]) -> Vec<[u32; 4]> {
    x.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
}

/// The AVX2 kernels (the 256-bit blend, the 512-bit one, and the 512-bit one with its vectors
/// broadcast) give the same bits; false (nothing compared) where the CPU lacks AVX-512F.
fn avx2_kernels_agree(c: &Case, a: Asked, label: &str) -> bool {
    if !Kernel::Avx512Blend.is_available() {
        return false;
    }
    let narrow = out_bits(&run_on(c, &c.palette, a, Kernel::Avx2Fma));
    for kernel in [Kernel::Avx512Blend, Kernel::Avx512Broadcast] {
        let wide = run_on(c, &c.palette, a, kernel);
        assert!(
            out_bits(&wide) == narrow,
            "{label}: the avx2 and {} kernels differ",
            kernel.name()
        );
    }
    true
}

/// The any-count layout blends the same influences to the same bits as the kernel's `fast`.
fn any_count_layout_agrees(c: &Case, a: Asked, fast: &Out, label: &str) {
    let csr = Case {
        palette: c.palette.clone(),
        weights: VertexWeights::csr_from_skin_weights(&c.raw),
        raw: c.raw.clone(),
        positions: c.positions.clone(),
        normals: c.normals.clone(),
        tangents: c.tangents.clone(),
    };
    let any = run(&csr, a, true);
    assert_eq!(bits3(&any.p), bits3(&fast.p), "{label}: any-count");
    if let (Some(a), Some(b)) = (&any.n, &fast.n) {
        assert_eq!(bits3(a), bits3(b), "{label}: any-count normals");
    }
    if let (Some(a), Some(b)) = (&any.t, &fast.t) {
        assert!(
            a.iter()
                .zip(b)
                .all(|(x, y)| x.to_array().map(f32::to_bits) == y.to_array().map(f32::to_bits)),
            "{label}: any-count tangents"
        );
    }
}

/// Each vertex is skinned the same wherever it falls in a block or a range: a job over a
/// suffix of the `n` vertices (its own weights array) gives the kernel's `fast` bits.
fn suffix_job_agrees(c: &Case, a: Asked, fast: &Out, n: usize, label: &str) {
    let from = n / 3 + 1;
    let part = run_range(c, from..n, a);
    assert_eq!(
        bits3(&part.p),
        bits3(&fast.p[from..]),
        "{label}: positions of a suffix"
    );
    if let (Some(a), Some(b)) = (&part.n, &fast.n) {
        assert_eq!(bits3(a), bits3(&b[from..]), "{label}: normals of a suffix");
    }
    if let (Some(a), Some(b)) = (&part.t, &fast.t) {
        assert_eq!(bits4(a), bits4(&b[from..]), "{label}: tangents of a suffix");
    }
}

#[test]
fn simd_kernel_matches_f64_and_skins_every_vertex_alike() {
    println!("kernel on this CPU: {}", simd::kernel_name());
    let modes = asked_modes();
    let mut checked = 0usize;
    let mut kernels_compared = 0usize;
    let mut cases = 0usize;
    for (e, &(encoding, joints, quantum)) in ENCODINGS.iter().enumerate() {
        // Tails of every length, one vertex, blocks and counts that split across threads.
        for (s, &n) in [1usize, 2, 3, 5, 6, 7, 9, 31, 33, 8191, 20_003]
            .iter()
            .enumerate()
        {
            let c = case(0x5EED + (e * 100 + s) as u64, n, joints, quantum);
            for &(name, a) in &modes {
                cases += 1;
                let fast = run(&c, a, true);
                let slow = run(&c, a, false);
                for v in 0..n {
                    let want = reference(&c, v);
                    for (what, out) in [("kernel", &fast), ("portable", &slow)] {
                        check_vertex(&c, out, v, a, want, || {
                            format!("{encoding}, {n} vertices, {name}: {what} vertex {v}")
                        });
                    }
                    checked += 1;
                }
                // Every output written (no NaN left from the fill).
                assert!(fast.p.iter().all(|p| p.is_finite()), "{name}, {n}");
                let label = format!("{encoding}, {n}, {name}");
                if avx2_kernels_agree(&c, a, &label) {
                    kernels_compared += 1;
                }
                any_count_layout_agrees(&c, a, &fast, &label);
                if n > 3 {
                    suffix_job_agrees(&c, a, &fast, n, &label);
                }
            }
        }
    }
    println!("{checked} vertex results checked");
    // Where the CPU has both AVX2 kernels, they were compared on every case above.
    if Kernel::Avx512Blend.is_available() {
        assert_eq!(
            kernels_compared, cases,
            "the two AVX2 kernels were compared"
        );
    }
    println!("{kernels_compared} cases compared across AVX2 kernels");
}

/// The four-slot weights take the most compact encoding that holds them exactly, and decode
/// to the very weights they were made from.
#[test]
fn packed_weights_choose_the_smallest_exact_encoding() {
    use skinview::skin::weights::{JointEncoding, WeightEncoding, WeightLayout};
    for (e, &(encoding, joints, quantum)) in ENCODINGS.iter().enumerate() {
        let c = case(0xC0DE + e as u64, 500, joints, quantum);
        let WeightLayout::Fixed4(p) = &c.weights.layout else {
            panic!("{encoding}: not four-slot");
        };
        let want = (
            if joints <= 255 {
                JointEncoding::U8
            } else {
                JointEncoding::U16
            },
            match quantum {
                Some(255.0) => WeightEncoding::Unorm8,
                Some(_) => WeightEncoding::Unorm16,
                None => WeightEncoding::F32,
            },
        );
        assert_eq!(p.encoding(), want, "{encoding}");
        for v in 0..500 {
            let got = p.get(v);
            for k in 0..4 {
                let w = c.raw.weights[v * 4 + k];
                assert_eq!(
                    got.weights[k].to_bits(),
                    w.to_bits(),
                    "{encoding} vertex {v} slot {k}"
                );
                if w != 0.0 {
                    assert_eq!(got.joints[k] as u32, c.raw.joints[v * 4 + k]);
                }
            }
        }
    }
}

/// A joint index beyond the palette is refused by validation, on either path, before any
/// vertex is read.
#[test]
fn simd_kernel_refuses_joints_beyond_the_palette() {
    let mut c = case(7, 9, 10, None);
    c.palette.truncate(4);
    let mut out = vec![Vec3::ZERO; 9];
    let err = SkinningJob {
        palette: &c.palette,
        weights: &c.weights,
        positions: &c.positions,
        normals: None,
        tangents: None,
        out_positions: &mut out,
        out_normals: None,
        out_tangents: None,
        renormalize: true,
        orthonormalize_tangents: true,
        normal_mode: NormalMode::Exact,
    }
    .run()
    .unwrap_err();
    assert!(err.to_string().contains("palette"), "{err}");
}

/// The kernel copies a palette that does not start a cache line's half (256-bit blend) or a
/// cache line (512-bit blend) to 64-byte lines before a long enough range, so that no load of
/// a matrix straddles two cache lines. The same matrices at every 16-byte alignment mod 64,
/// and a range too short to copy for, skin to the same bits on every kernel this CPU has: the
/// portable path always (it copies nothing, and must not care either), the AVX2 kernels where
/// the CPU has them. The test says which kernels it ran; it never skips.
#[test]
fn simd_kernel_skins_alike_from_any_palette_alignment() {
    let kernels: Vec<Kernel> = Kernel::ALL
        .into_iter()
        .filter(|k| k.is_available())
        .collect();
    let names: Vec<&str> = kernels.iter().map(|k| k.name()).collect();
    println!("palette alignments checked on: {}", names.join(", "));
    if !simd::available() {
        println!("no AVX2 + FMA on this CPU: the palette copy itself is not exercised");
    }
    let c = case(11, 203, 40, None);
    let joints = c.palette.len();
    let cols: Vec<Vec4> = c
        .palette
        .iter()
        .flat_map(|m| m.to_cols_array_2d())
        .map(Vec4::from_array)
        .collect();
    // Four copies, each one Vec4 (16 bytes) further than a whole number of matrices (64
    // bytes) after the one before: their starts cover all four 16-byte offsets mod 64.
    let mut buffer = Vec::new();
    let mut starts = Vec::new();
    for _ in 0..4 {
        starts.push(buffer.len());
        buffer.extend_from_slice(&cols);
        buffer.push(Vec4::ZERO);
    }
    let all = Asked {
        normals: true,
        tangents: true,
        mode: NormalMode::Exact,
        renormalize: true,
        ortho: true,
    };
    let mut seen = [false; 4];
    // (kernel, range, any-count) → bits of the first alignment.
    let mut first: Vec<Vec<u32>> = Vec::new();
    for (copy, &s) in starts.iter().enumerate() {
        let palette: &[Mat4] = bytemuck::cast_slice(&buffer[s..s + 4 * joints]);
        assert!(palette == &c.palette[..]);
        seen[(palette.as_ptr() as usize % 64) / 16] = true;
        let mut at = 0;
        for &kernel in &kernels {
            for (range, asked) in [
                (0..c.positions.len(), all),
                (0..7, all),
                (
                    5..200,
                    Asked {
                        normals: false,
                        tangents: false,
                        ..all
                    },
                ),
            ] {
                // Four-slot records, and the any-count layout (the copy is made for both).
                for any_count in [false, true] {
                    let o = run_on(
                        &sub_case(&c, range.clone(), any_count),
                        palette,
                        asked,
                        kernel,
                    );
                    let bits = out_bits(&o);
                    if copy == 0 {
                        first.push(bits);
                    } else {
                        assert!(
                            first[at] == bits,
                            "{} kernel, range {range:?}, any-count {any_count}: the palette's \
                             alignment changed the results",
                            kernel.name()
                        );
                    }
                    at += 1;
                }
            }
        }
    }
    assert_eq!(seen, [true; 4], "every 16-byte alignment mod 64 was tried");
}
