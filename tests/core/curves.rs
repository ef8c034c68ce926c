//! The curves panel's polylines (`anim::curves::CurveJob`) against independent curves: the
//! CUBICSPLINE Hermite evaluated here in f64 from the glTF formula, straight keys, held
//! steps, and rotations about one axis whose angle is known in closed form. The polyline
//! must pass through every key and stay within the tolerance of the curve everywhere.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use crate::common;
use crate::common::rng::XorShift64;
use glam::{Quat, Vec3};
use skinview::Error;
use skinview::anim::curves::{CurveJob, Curves, RotationForm};
use skinview::anim::{Interpolation, Path, Sampler};

const MAX_POINTS: usize = 1 << 20;

fn draw(s: &Sampler, path: Path, form: RotationForm, window_s: (f32, f32), tol: f64) -> Curves {
    let mut out = Curves::default();
    CurveJob {
        sampler: s,
        path,
        rotation: form,
        window_s,
        tolerance: tol,
        max_points: MAX_POINTS,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// Irregular key times from 0: steps of 0.05–0.6 s.
fn key_times(rng: &mut XorShift64, n: usize) -> Vec<f32> {
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            let now = t;
            t += rng.range(0.05, 0.6);
            now
        })
        .collect()
}

/// A random CUBICSPLINE translation: values in ±1 m, tangents in ±8 m/s.
fn random_cubic(rng: &mut XorShift64, keys: usize) -> Sampler {
    let times_s = key_times(rng, keys);
    let values = (0..keys * 9)
        .map(|i| {
            if (i / 3) % 3 == 1 {
                rng.range(-1.0, 1.0)
            } else {
                rng.range(-8.0, 8.0)
            }
        })
        .collect();
    Sampler {
        interpolation: Interpolation::CubicSpline,
        times_s,
        values,
        components: 3,
        is_rotation: false,
    }
}

/// glTF's cubic Hermite in f64, written from the specification (not from the sampler).
fn hermite_f64(s: &Sampler, t: f64, c: usize) -> f64 {
    let times: Vec<f64> = s.times_s.iter().map(|&x| f64::from(x)).collect();
    let el = |e: usize| f64::from(s.values[e * s.components + c]);
    let n = times.len();
    if t <= times[0] {
        return el(1);
    }
    if t >= times[n - 1] {
        return el(3 * (n - 1) + 1);
    }
    let k = times.partition_point(|&x| x <= t) - 1;
    let td = times[k + 1] - times[k];
    let u = (t - times[k]) / td;
    let (u2, u3) = (u * u, u * u * u);
    (2.0 * u3 - 3.0 * u2 + 1.0) * el(3 * k + 1)
        + td * (u3 - 2.0 * u2 + u) * el(3 * k + 2)
        + (-2.0 * u3 + 3.0 * u2) * el(3 * (k + 1) + 1)
        + td * (u3 - u2) * el(3 * (k + 1))
}

#[test]
fn cubic_polylines_pass_through_every_key_and_stay_within_the_tolerance() {
    let mut rng = XorShift64(0x5eed_c0de);
    for round in 0..20 {
        let s = random_cubic(&mut rng, 3 + round);
        let end = *s.times_s.last().unwrap();
        // The whole clip, and windows cut inside intervals (a zoomed panel).
        let windows = [
            (0.0, end),
            (-0.5, end + 0.5),
            (rng.range(0.0, end * 0.5), rng.range(end * 0.5, end)),
        ];
        for window in windows {
            // One pixel of a 200 px plot over ±1 m, then a hundred times finer.
            for tol in [0.01, 1e-4] {
                let out = draw(&s, Path::Translation, RotationForm::EulerXyz, window, tol);
                assert_eq!(out.lines.len(), 3);
                for (c, line) in out.lines.iter().enumerate() {
                    // Through every key inside the window, exactly as drawn.
                    for key in &out.keys {
                        let v = hermite_f64(&s, f64::from(key.time_s), c);
                        assert!((key.values[c] - v).abs() < 1e-6, "key {key:?}");
                        assert!(
                            line.iter()
                                .any(|p| p[0] == f64::from(key.time_s) && p[1] == key.values[c]),
                            "key {} of component {c} is not a vertex",
                            key.key
                        );
                    }
                    // Within the tolerance between keys (f32 sampling adds ~1e-6).
                    let (w0, w1) = (f64::from(window.0), f64::from(window.1));
                    for j in 0..=4000 {
                        let t = w0 + (w1 - w0) * f64::from(j) / 4000.0;
                        let err = (common::polyline_at(line, t) - hermite_f64(&s, t, c)).abs();
                        assert!(err <= tol + 1e-5, "round {round} t {t}: {err} > {tol}");
                    }
                }
                let inside = s
                    .times_s
                    .iter()
                    .filter(|&&t| t >= window.0 && t <= window.1)
                    .count();
                assert_eq!(out.keys.len(), inside);
                // Two handles a key, less the ends' outer ones.
                let ends = out.keys.iter().filter(|k| k.key == 0).count()
                    + out
                        .keys
                        .iter()
                        .filter(|k| k.key + 1 == s.times_s.len())
                        .count();
                assert_eq!(out.handles.len(), 3 * (2 * inside - ends));
            }
        }
    }
}

#[test]
fn cubic_handles_follow_the_files_tangents_a_third_of_the_interval_long() {
    let mut rng = XorShift64(77);
    let s = random_cubic(&mut rng, 5);
    let out = draw(&s, Path::Scale, RotationForm::EulerXyz, (0.0, 10.0), 1e-3);
    for h in &out.handles {
        let k = h.key;
        let t = f64::from(s.times_s[k]);
        let (dt, tangent) = if h.to[0] > t {
            (f64::from(s.times_s[k + 1]) - t, 3 * k + 2)
        } else {
            (t - f64::from(s.times_s[k - 1]), 3 * k)
        };
        assert!(((h.to[0] - h.from[0]).abs() - dt / 3.0).abs() < 1e-6);
        let slope = (h.to[1] - h.from[1]) / (h.to[0] - h.from[0]);
        let want = f64::from(s.values[tangent * 3 + h.component]);
        assert!((slope - want).abs() < 1e-4 * want.abs().max(1.0), "{h:?}");
    }
}

#[test]
fn linear_and_step_curves_are_their_keys() {
    let mut rng = XorShift64(9);
    let times_s = key_times(&mut rng, 6);
    let values: Vec<f32> = (0..18).map(|_| rng.range(-2.0, 2.0)).collect();
    let end = f64::from(*times_s.last().unwrap());
    let mut s = Sampler {
        interpolation: Interpolation::Linear,
        times_s: times_s.clone(),
        values: values.clone(),
        components: 3,
        is_rotation: false,
    };
    let out = draw(
        &s,
        Path::Translation,
        RotationForm::EulerXyz,
        (-1.0, 10.0),
        1e-3,
    );
    for (c, line) in out.lines.iter().enumerate() {
        // The window's start, the keys, the window's end: nothing else is needed.
        let mut want = vec![[-1.0, f64::from(values[c])]];
        want.extend(
            times_s
                .iter()
                .enumerate()
                .map(|(k, &t)| [f64::from(t), f64::from(values[3 * k + c])]),
        );
        want.push([10.0, f64::from(values[15 + c])]);
        assert_eq!(line, &want);
    }
    assert!(out.handles.is_empty());

    s.interpolation = Interpolation::Step;
    let out = draw(
        &s,
        Path::Translation,
        RotationForm::EulerXyz,
        (0.0, 10.0),
        1e-3,
    );
    for (c, line) in out.lines.iter().enumerate() {
        for (k, &t) in times_s.iter().enumerate().skip(1) {
            let (before, after) = (values[3 * (k - 1) + c], values[3 * k + c]);
            let at = |v: f32| line.iter().position(|p| *p == [f64::from(t), f64::from(v)]);
            let (a, b) = (at(before).unwrap(), at(after).unwrap());
            assert!(a < b, "the jump at key {k} goes up the time axis in order");
        }
        // Held between keys: every segment is flat or vertical.
        assert!(
            line.windows(2)
                .all(|w| w[0][1] == w[1][1] || w[0][0] == w[1][0])
        );
        assert_eq!(line.last().unwrap()[0], 10.0);
        assert!(common::polyline_at(line, end + 1.0) == f64::from(values[15 + c]));
    }
}

/// A LINEAR rotation about +Z turning `step_deg` a key, 7 keys 0.5 s apart.
fn turning(step_deg: f32, interpolation: Interpolation) -> Sampler {
    let keys = 7;
    let mut values = Vec::new();
    for k in 0..keys {
        let q = Quat::from_axis_angle(Vec3::Z, (step_deg * k as f32).to_radians());
        if interpolation == Interpolation::CubicSpline {
            values.extend([0.0; 4]);
        }
        values.extend(q.to_array());
        if interpolation == Interpolation::CubicSpline {
            values.extend([0.0; 4]);
        }
    }
    Sampler {
        interpolation,
        times_s: (0..keys).map(|k| k as f32 * 0.5).collect(),
        values,
        components: 4,
        is_rotation: true,
    }
}

#[test]
fn euler_curves_unwrap_past_a_half_turn_and_follow_the_angle() {
    // 100° a key: 600° in all. Slerp about one axis turns at a constant rate, so the Z angle
    // is 200°/s · t exactly, and X and Y stay 0.
    let s = turning(100.0, Interpolation::Linear);
    let tol = 0.05;
    let out = draw(&s, Path::Rotation, RotationForm::EulerXyz, (0.0, 3.0), tol);
    assert_eq!(out.lines.len(), 3);
    for j in 0..=3000 {
        let t = 3.0 * f64::from(j) / 3000.0;
        let z = common::polyline_at(&out.lines[2], t);
        assert!((z - 200.0 * t).abs() <= tol + 1e-3, "t {t}: Z {z}");
        assert!(common::polyline_at(&out.lines[0], t).abs() < 1e-3);
        assert!(common::polyline_at(&out.lines[1], t).abs() < 1e-3);
    }
    assert_eq!(out.keys.len(), 7);
    assert!((out.keys[6].values[2] - 600.0).abs() < 1e-3);
}

#[test]
fn quaternion_curves_keep_one_hemisphere_and_the_tolerance() {
    // The slerp's components about Z: (0, 0, sin(θ/2), cos(θ/2)) with θ = 200°/s · t; the
    // file's quaternions change sign past 180°, the drawing must not.
    let s = turning(100.0, Interpolation::Linear);
    let tol = 1e-3;
    let out = draw(
        &s,
        Path::Rotation,
        RotationForm::Quaternion,
        (0.0, 3.0),
        tol,
    );
    assert_eq!(out.lines.len(), 4);
    for j in 0..=3000 {
        let t = 3.0 * f64::from(j) / 3000.0;
        let half = (200.0 * t).to_radians() / 2.0;
        let (z, w) = (
            common::polyline_at(&out.lines[2], t),
            common::polyline_at(&out.lines[3], t),
        );
        assert!((z - half.sin()).abs() <= tol + 1e-5, "t {t}: z {z}");
        assert!((w - half.cos()).abs() <= tol + 1e-5, "t {t}: w {w}");
    }
}

#[test]
fn rotation_handles_are_the_curves_slopes() {
    // A CUBICSPLINE with zero tangents eases in and out of each key: the slope leaving a key
    // is zero; a LINEAR one has no handles.
    let s = turning(40.0, Interpolation::CubicSpline);
    let out = draw(&s, Path::Rotation, RotationForm::EulerXyz, (0.0, 3.0), 0.01);
    assert_eq!(out.handles.len(), 3 * 12);
    for h in &out.handles {
        let slope = (h.to[1] - h.from[1]) / (h.to[0] - h.from[0]);
        assert!(slope.abs() < 1.0, "{h:?}: {slope} °/s");
    }
    // And between keys the curve is the splined, normalised rotation the player samples.
    let mut raw = [0.0f32; 4];
    for j in 0..=600 {
        let t = 3.0 * j as f32 / 600.0;
        s.sample_binary_search(t, &mut raw);
        let e = skinview::math::euler_xyz_rad(Quat::from_array(raw));
        let z = common::polyline_at(&out.lines[2], f64::from(t));
        let d = z - f64::from(e.z).to_degrees();
        // The drawing is unwrapped (past 180° it climbs on), the sample is not.
        let d = d - 360.0 * (d / 360.0).round();
        assert!(
            d.abs() < 0.01 + 1e-3,
            "t {t}: {z} against {}",
            e.z.to_degrees()
        );
    }
    let linear = turning(40.0, Interpolation::Linear);
    let out = draw(
        &linear,
        Path::Rotation,
        RotationForm::EulerXyz,
        (0.0, 3.0),
        0.01,
    );
    assert!(out.handles.is_empty());
}

#[test]
fn curve_job_rules() {
    let rule = |r: skinview::Result<skinview::anim::curves::CurveStats>| match r {
        Err(Error::Job {
            job: "CurveJob",
            rule,
            ..
        }) => Some(rule),
        Err(e) => panic!("not a rule: {e}"),
        Ok(_) => None,
    };
    let good = turning(30.0, Interpolation::Linear);
    let mut out = Curves::default();
    let mut run = |s: &Sampler, path, window_s, tolerance, max_points| {
        rule(
            CurveJob {
                sampler: s,
                path,
                rotation: RotationForm::EulerXyz,
                window_s,
                tolerance,
                max_points,
                output: &mut out,
            }
            .run(),
        )
    };
    assert_eq!(run(&good, Path::Rotation, (0.0, 3.0), 0.1, 1000), None);
    let mut bad = good.clone();
    bad.times_s[2] = bad.times_s[1];
    assert_eq!(run(&bad, Path::Rotation, (0.0, 3.0), 0.1, 1000), Some(1));
    assert_eq!(run(&good, Path::Rotation, (1.0, 1.0), 0.1, 1000), Some(2));
    assert_eq!(
        run(&good, Path::Rotation, (0.0, f32::NAN), 0.1, 1000),
        Some(2)
    );
    assert_eq!(run(&good, Path::Rotation, (0.0, 3.0), 0.0, 1000), Some(3));
    assert_eq!(
        run(&good, Path::Rotation, (0.0, 3.0), f64::NAN, 1000),
        Some(3)
    );
    let mut three = good.clone();
    three.components = 3;
    three.values.truncate(7 * 3);
    three.is_rotation = false;
    assert_eq!(run(&three, Path::Rotation, (0.0, 3.0), 0.1, 1000), Some(4));
    assert_eq!(run(&good, Path::Rotation, (0.0, 3.0), 1e-9, 50), Some(5));
    let cubic = random_cubic(&mut XorShift64(3), 4);
    assert_eq!(
        run(&cubic, Path::Translation, (0.0, 9.0), 1e-12, 50),
        Some(5)
    );
}
