//! Sampler interpolation against f64 evaluations written from the glTF spec, and the cached
//! cursor against a plain binary-search sampler over random seeks.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{DQuat, Quat};
use proptest::prelude::*;
use skinview::anim::{Cursor, Interpolation, Sampler};

use crate::common::f32s;

fn sampler(
    interpolation: Interpolation,
    times_s: Vec<f32>,
    values: Vec<f32>,
    components: usize,
    is_rotation: bool,
) -> Sampler {
    let s = Sampler {
        interpolation,
        times_s,
        values,
        components,
        is_rotation,
    };
    s.validate().expect("valid sampler");
    s
}

fn sample(s: &Sampler, t: f32) -> Vec<f32> {
    let mut out = vec![0.0; s.components];
    s.sample(t, &mut Cursor::default(), &mut out);
    out
}

/// Irregular key times.
const TIMES: [f32; 5] = [0.0, 0.13, 0.5, 0.51, 2.0];

#[test]
fn linear_vectors_between_and_at_irregular_keys() {
    let values: Vec<f32> = (0..15).map(|i| ((i * 7) % 11) as f32 - 3.0).collect();
    let s = sampler(
        Interpolation::Linear,
        TIMES.to_vec(),
        values.clone(),
        3,
        false,
    );
    for (k, &t) in TIMES.iter().enumerate() {
        assert_eq!(
            sample(&s, t),
            values[k * 3..k * 3 + 3].to_vec(),
            "at key {k}"
        );
    }
    for t in [0.05f64, 0.2, 0.505, 1.7] {
        let k = TIMES.iter().rposition(|&x| (x as f64) <= t).unwrap();
        let u = (t - TIMES[k] as f64) / (TIMES[k + 1] as f64 - TIMES[k] as f64);
        let got = sample(&s, t as f32);
        for c in 0..3 {
            let e = values[k * 3 + c] as f64 * (1.0 - u) + values[(k + 1) * 3 + c] as f64 * u;
            assert!(
                (got[c] as f64 - e).abs() < 1e-5,
                "t={t} c={c}: {} vs {e}",
                got[c]
            );
        }
    }
    // Clamping outside the key range.
    assert_eq!(sample(&s, -1.0), values[0..3].to_vec());
    assert_eq!(sample(&s, 9.0), values[12..15].to_vec());
}

#[test]
fn step_holds_the_previous_key() {
    let values: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0, 5.0];
    let s = sampler(
        Interpolation::Step,
        TIMES.to_vec(),
        values.clone(),
        1,
        false,
    );
    assert_eq!(sample(&s, 0.129)[0], 1.0);
    assert_eq!(sample(&s, 0.13)[0], 2.0);
    assert_eq!(sample(&s, 0.509)[0], 3.0);
    assert_eq!(sample(&s, 1.99)[0], 4.0);
    assert_eq!(sample(&s, 5.0)[0], 5.0);
}

#[test]
fn linear_rotation_is_shortest_path_slerp() {
    let a = Quat::from_rotation_y(0.3);
    let b = Quat::from_rotation_y(2.9);
    // Second key stored with its sign flipped: same rotation, the long way round in 4D.
    let bf = -b;
    let s = sampler(
        Interpolation::Linear,
        vec![0.0, 1.0],
        [a.to_array(), bf.to_array()].concat(),
        4,
        true,
    );
    for u in [0.25f64, 0.5, 0.8] {
        let got = sample(&s, u as f32);
        let q = DQuat::from_xyzw(got[0] as f64, got[1] as f64, got[2] as f64, got[3] as f64);
        let expected = DQuat::from_rotation_y(0.3 + (2.9 - 0.3) * u);
        // Component distance up to sign (acos-based angles are ill-conditioned near 0).
        let err = (q - expected).length().min((q + expected).length());
        assert!(err < 2e-6, "u={u}: off by {err}");
        assert!((q.length() - 1.0).abs() < 1e-6);
    }
}

#[test]
fn cubic_spline_matches_hermite_with_tangents_scaled_by_the_interval() {
    // Two components, three keys at irregular times; in/out tangents differ.
    let times = vec![0.0f32, 0.4, 1.5];
    #[rustfmt::skip]
    let values: Vec<f32> = vec![
        // key 0: in, value, out
        9.0, 9.0,   1.0, -2.0,   0.5, 3.0,
        // key 1
        -1.0, 2.0,  4.0, 0.0,    2.0, -1.0,
        // key 2
        1.5, 0.5,   -3.0, 1.0,   7.0, 7.0,
    ];
    let s = sampler(
        Interpolation::CubicSpline,
        times.clone(),
        values.clone(),
        2,
        false,
    );
    let v = |k: usize, c: usize| values[(3 * k + 1) * 2 + c] as f64;
    let a = |k: usize, c: usize| values[(3 * k) * 2 + c] as f64;
    let b = |k: usize, c: usize| values[(3 * k + 2) * 2 + c] as f64;
    for t in [0.1f64, 0.3, 0.4, 0.77, 1.2] {
        let k = times.iter().rposition(|&x| (x as f64) <= t).unwrap().min(1);
        let (t0, t1) = (times[k] as f64, times[k + 1] as f64);
        let dt = t1 - t0;
        let u = (t - t0) / dt;
        let got = sample(&s, t as f32);
        for (c, &g) in got.iter().enumerate().take(2) {
            let e = (2.0 * u.powi(3) - 3.0 * u * u + 1.0) * v(k, c)
                + (u.powi(3) - 2.0 * u * u + u) * dt * b(k, c)
                + (-2.0 * u.powi(3) + 3.0 * u * u) * v(k + 1, c)
                + (u.powi(3) - u * u) * dt * a(k + 1, c);
            assert!((g as f64 - e).abs() < 1e-5, "t={t} c={c}: {g} vs {e}");
        }
    }
    // Clamped to the first/last value (not a tangent).
    assert_eq!(sample(&s, -0.5), vec![1.0, -2.0]);
    assert_eq!(sample(&s, 3.0), vec![-3.0, 1.0]);
}

#[test]
fn cubic_spline_rotations_are_normalised() {
    let a = Quat::from_rotation_z(0.0);
    let b = Quat::from_rotation_z(1.0);
    let z = [0.0f32; 4];
    let tan = [0.0, 0.0, 0.4, 0.0];
    let values = [z, a.to_array(), tan, tan, b.to_array(), z].concat();
    let s = sampler(Interpolation::CubicSpline, vec![0.0, 1.0], values, 4, true);
    for t in [0.2f32, 0.5, 0.9] {
        let q = sample(&s, t);
        let len = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-6, "t={t}: |q| = {len}");
    }
}

/// Reference sampler: binary search over all keys every time, no cursor.
fn sample_fresh(s: &Sampler, t: f32) -> Vec<f32> {
    let mut out = vec![0.0; s.components];
    s.sample_binary_search(t, &mut out);
    out
}

/// Looping playback: the cursor crosses the wrap (time jumps from the end back to the start)
/// every cycle and still equals the binary-search sampler; t and t + duration agree.
#[test]
fn looping_playback_across_the_wrap() {
    let times: Vec<f32> = vec![0.0, 0.05, 0.3, 0.31, 0.9, 1.0];
    let values: Vec<f32> = (0..times.len() * 3)
        .map(|i| (i as f32 * 0.37).sin())
        .collect();
    let s = sampler(Interpolation::Linear, times, values, 3, false);
    let duration = 1.0f32;
    let mut cursor = Cursor::default();
    let mut out = vec![0.0; 3];
    for frame in 0..600 {
        let t = (frame as f32 / 60.0 * 1.37).rem_euclid(duration);
        s.sample(t, &mut cursor, &mut out);
        assert_eq!(out, sample_fresh(&s, t), "frame {frame} t={t}");
        // One period later (f32 wrap rounding moves t by an ulp, hence the tolerance).
        let mut again = vec![0.0; 3];
        s.sample(
            (t + duration).rem_euclid(duration),
            &mut Cursor::default(),
            &mut again,
        );
        assert!(
            out.iter().zip(&again).all(|(a, b)| (a - b).abs() < 1e-5),
            "{out:?} vs {again:?}"
        );
    }
    // Reverse play over several loops.
    for frame in (0..600).rev() {
        let t = (frame as f32 / 60.0).rem_euclid(duration);
        s.sample(t, &mut cursor, &mut out);
        assert_eq!(out, sample_fresh(&s, t), "reverse frame {frame}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A cursor carried across random seeks (forward, backward, far jumps, out of range)
    /// gives bit-identical results to a fresh binary-search sample.
    #[test]
    fn cursor_equals_binary_search(
        gaps in prop::collection::vec(f32s(0.001..0.5), 2..60),
        seeks in prop::collection::vec(f32s(-1.0..40.0), 1..200),
        mode in 0usize..3,
    ) {
        let mut times = vec![0.0f32];
        for g in &gaps { let last = *times.last().unwrap(); times.push(last + g); }
        let interpolation = [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline][mode];
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let values: Vec<f32> = (0..times.len() * per_key * 3).map(|i| ((i * 37 % 101) as f32) * 0.1).collect();
        let s = Sampler { interpolation, times_s: times.clone(), values, components: 3, is_rotation: false };
        let end = *times.last().unwrap();
        let mut cursor = Cursor::default();
        let mut out = vec![0.0; 3];
        for seek in seeks {
            let t = seek * end / 30.0;
            s.sample(t, &mut cursor, &mut out);
            prop_assert_eq!(&out, &sample_fresh(&s, t));
        }
        // Forward playback and reverse playback in small steps.
        for i in 0..400 {
            let t = end * i as f32 / 399.0;
            s.sample(t, &mut cursor, &mut out);
            prop_assert_eq!(&out, &sample_fresh(&s, t));
        }
        for i in (0..400).rev() {
            let t = end * i as f32 / 399.0;
            s.sample(t, &mut cursor, &mut out);
            prop_assert_eq!(&out, &sample_fresh(&s, t));
        }
    }
}
