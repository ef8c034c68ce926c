//! The AVX2 skinning kernel against the portable path (`SkinningJob::run_portable`), bit for
//! bit, and both against an f64 computation written here: random palettes and weights
//! (quantised as unorm8 and unorm16 weights and u8 and u16 joints would be), every normal
//! mode with and without renormalisation, tangents, and vertex counts that leave tails and
//! split across threads.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{DVec3, Mat4, Quat, Vec3, Vec4};
use skinview::scene::SkinWeights;
use skinview::skin::{NormalMode, SkinningJob, VertexWeights, simd};

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);
impl Rng {
    fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f()
    }
    fn unit(&mut self) -> Vec3 {
        Vec3::new(self.f() - 0.5, self.f() - 0.5, self.f() - 0.5).normalize_or(Vec3::Z)
    }
}

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
    let mut r = Rng(seed);
    let palette: Vec<Mat4> = (0..=joints)
        .map(|_| {
            let scale = Vec3::new(r.range(0.5, 2.0), r.range(0.5, 2.0), r.range(0.5, 2.0));
            Mat4::from_scale_rotation_translation(
                scale,
                Quat::from_axis_angle(r.unit(), r.range(-3.1, 3.1)),
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
            js.push((r.f() * (joints + 1) as f32) as u32 % (joints + 1));
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
    let normals: Vec<Vec3> = (0..n).map(|_| r.unit()).collect();
    let tangents = normals
        .iter()
        .map(|&nv| {
            let t = nv.cross(r.unit()).normalize_or(nv.any_orthonormal_vector());
            t.extend(if r.f() < 0.5 { 1.0 } else { -1.0 })
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

fn run(
    c: &Case,
    normals: bool,
    tangents: bool,
    mode: NormalMode,
    normalize: bool,
    simd: bool,
) -> Out {
    let n = c.positions.len();
    let mut o = Out {
        p: vec![Vec3::splat(f32::NAN); n],
        n: normals.then(|| vec![Vec3::splat(f32::NAN); n]),
        t: tangents.then(|| vec![Vec4::splat(f32::NAN); n]),
    };
    let mut job = SkinningJob {
        palette: &c.palette,
        weights: &c.weights,
        positions: &c.positions,
        normals: normals.then_some(&c.normals[..]),
        tangents: tangents.then_some(&c.tangents[..]),
        out_positions: &mut o.p,
        out_normals: o.n.as_deref_mut(),
        out_tangents: o.t.as_deref_mut(),
        normalize_normals: normalize,
        normal_mode: mode,
    };
    if simd {
        job.run().unwrap();
    } else {
        job.run_portable().unwrap();
    }
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

/// Positions against f64: within 2e-6 of the magnitude of the terms summed (about 16 units
/// in the last place of the largest term; the f32 paths round ~10 times per coordinate).
const POSITION_REL: f64 = 2e-6;

#[test]
fn simd_kernel_matches_the_portable_path_and_f64() {
    println!("kernel on this CPU: {}", simd::kernel_name());
    let modes = [
        ("positions", false, false, NormalMode::Exact, true),
        (
            "exact normals, renormalised",
            true,
            false,
            NormalMode::Exact,
            true,
        ),
        ("exact normals, raw", true, false, NormalMode::Exact, false),
        (
            "blended 3x3 normals, renormalised",
            true,
            false,
            NormalMode::Blend3x3,
            true,
        ),
        (
            "blended 3x3 normals, raw",
            true,
            false,
            NormalMode::Blend3x3,
            false,
        ),
        (
            "exact normals + tangents",
            true,
            true,
            NormalMode::Exact,
            true,
        ),
        (
            "blended 3x3 normals + tangents",
            true,
            true,
            NormalMode::Blend3x3,
            false,
        ),
    ];
    let mut checked = 0usize;
    for (e, &(encoding, joints, quantum)) in ENCODINGS.iter().enumerate() {
        // Tails of every length, one vertex, and counts that split across threads.
        for (s, &n) in [1usize, 2, 3, 5, 6, 7, 9, 31, 8191, 20_003]
            .iter()
            .enumerate()
        {
            let c = case(0x5EED + (e * 100 + s) as u64, n, joints, quantum);
            for &(name, normals, tangents, mode, normalize) in &modes {
                let fast = run(&c, normals, tangents, mode, normalize, true);
                let slow = run(&c, normals, tangents, mode, normalize, false);
                for v in 0..n {
                    let (want, magnitude) = reference(&c, v);
                    let tol = POSITION_REL * (1.0 + magnitude);
                    for (what, got) in [("kernel", fast.p[v]), ("portable", slow.p[v])] {
                        let err = (got.as_dvec3() - want).length();
                        assert!(
                            err <= tol,
                            "{encoding}, {n} vertices, {name}: {what} vertex {v} off f64 by \
                             {err:e} (bound {tol:e})"
                        );
                    }
                    // The kernel sums in the portable path's order: the same bits.
                    let bits3 = |x: Vec3| x.to_array().map(f32::to_bits);
                    assert_eq!(
                        bits3(fast.p[v]),
                        bits3(slow.p[v]),
                        "{encoding}, {n}, {name}: position {v}"
                    );
                    if let (Some(a), Some(b)) = (&fast.n, &slow.n) {
                        assert_eq!(
                            bits3(a[v]),
                            bits3(b[v]),
                            "{encoding}, {n}, {name}: normal {v}"
                        );
                    }
                    if let (Some(a), Some(b)) = (&fast.t, &slow.t) {
                        assert_eq!(
                            a[v].to_array().map(f32::to_bits),
                            b[v].to_array().map(f32::to_bits),
                            "{encoding}, {n}, {name}: tangent {v}"
                        );
                    }
                    checked += 1;
                }
                // Every output written (no NaN left from the fill).
                assert!(fast.p.iter().all(|p| p.is_finite()), "{name}, {n}");
            }
        }
    }
    println!("{checked} vertex results checked");
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
        normalize_normals: true,
        normal_mode: NormalMode::Exact,
    }
    .run()
    .unwrap_err();
    assert!(err.to_string().contains("palette"), "{err}");
}
