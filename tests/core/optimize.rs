//! `skinview optimize`'s library side: the evaluation times of a clip, each joint's reach on
//! the skin (a turn of θ at a joint moves no vertex further than θ × reach, and about one of
//! three axes nearly that far), the worst skinned-vertex error between two versions of a
//! character, the key reduction of one channel (lines collapse, needed keys stay, a zero
//! tolerance keeps every bit, random channels hold their tolerance measured again in f64) and
//! the job over whole characters (every skinned vertex within the tolerance).
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use glam::{Quat, Vec3};
use skinview::anim::{Animation, Channel, Interpolation, Path, Sampler};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::optimize::{
    ErrorMeasure, MIN_RATE_HZ, OptimizeJob, SAMPLES_PER_INTERVAL, evaluation_times, joint_reach,
    path_slot, reduce_channel, reduce_refit, reduce_together, worst_error,
};
use skinview::scene::Scene;

use crate::common::retarget::humanoid;
use crate::common::rng::XorShift64 as Rng;

fn clip(times: Vec<f32>) -> Animation {
    let n = times.len();
    Animation {
        name: Some("test".into()),
        channels: vec![Channel {
            node: 0,
            path: Path::Translation,
            sampler: Sampler {
                interpolation: Interpolation::Linear,
                times_s: times,
                values: vec![0.0; 3 * n],
                components: 3,
                is_rotation: false,
            },
        }],
    }
}

#[test]
fn evaluation_times_hold_every_key_samples_between_and_a_floor_rate() {
    let keys = vec![0.0, 0.01, 0.1, 1.0];
    let t = evaluation_times(&clip(keys.clone())).unwrap();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "ascending and distinct");
    assert_eq!((t[0], *t.last().unwrap()), (0.0, 1.0));
    for k in &keys {
        assert!(t.contains(k), "key {k}");
    }
    for w in keys.windows(2) {
        let inside = t.iter().filter(|x| **x > w[0] && **x < w[1]).count();
        assert!(inside >= SAMPLES_PER_INTERVAL, "{inside} samples in {w:?}");
    }
    let gap = t.windows(2).map(|w| w[1] - w[0]).fold(0.0, f32::max);
    assert!(gap <= 1.0 / MIN_RATE_HZ + 1e-6, "largest gap {gap}");
    // A clip too long to check is refused, naming it.
    let e = evaluation_times(&clip(vec![0.0, 1e9]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("test") && e.contains("evaluation times"), "{e}");
}

/// Every vertex of `scene` skinned at its rest pose with node `j` turned by `turn` (in its own
/// frame).
fn skinned_with_turn(scene: &Scene, j: usize, turn: Quat) -> Vec<Vec3> {
    let mut f = FrameState::new(scene);
    f.evaluate(scene, None, 0.0).unwrap();
    f.pose.locals[j].rotation = (f.pose.locals[j].rotation * turn).normalize();
    f.evaluate_current_pose(scene).unwrap();
    let mut skinner = CpuSkinner::new(scene, None);
    skinner
        .skin_all(scene, &f)
        .unwrap()
        .into_iter()
        .flat_map(|s| s.positions)
        .collect()
}

#[test]
fn a_turn_at_a_joint_moves_no_vertex_further_than_its_reach() {
    let cesium =
        skinview::io::gltf_import::import_file(&crate::common::model("CesiumMan")).unwrap();
    for scene in [humanoid(), cesium] {
        let reach = joint_reach(&scene);
        let joints: Vec<usize> = scene.skins[0].joints.clone();
        let theta = 1e-3f32;
        let rest = skinned_with_turn(&scene, joints[0], Quat::IDENTITY);
        let mut tightness = Vec::new();
        for &j in &joints {
            let moved = |axis: Vec3| {
                let after = skinned_with_turn(&scene, j, Quat::from_axis_angle(axis, theta));
                rest.iter()
                    .zip(&after)
                    .map(|(a, b)| a.distance(*b))
                    .fold(0.0, f32::max)
            };
            let most = [Vec3::X, Vec3::Y, Vec3::Z].map(moved);
            let bound = theta * reach[j];
            for m in most {
                assert!(
                    m <= bound * 1.001 + 1e-7,
                    "{} joint {j}: moved {m}, bound {bound}",
                    scene.name
                );
            }
            if bound > 0.0 {
                tightness.push(most.into_iter().fold(0.0, f32::max) / bound);
            }
        }
        // The bound is near what happens: about one of three axes a vertex moving with its
        // joint's whole weight moves at least √(2/3) of it; blended vertices move less, so on
        // the median joint, not every one.
        tightness.sort_by(f32::total_cmp);
        let median = tightness[tightness.len() / 2];
        println!("{}: move / (θ × reach) per joint {tightness:?}", scene.name);
        assert!(median >= 0.8, "{}: median {median}", scene.name);
    }
}

#[test]
fn the_worst_error_is_zero_against_itself_and_finds_a_moved_key() {
    let scene = humanoid();
    let walk = scene.find_animation("walk").unwrap();
    let times = evaluation_times(&scene.animations[walk]).unwrap();
    let same = worst_error((&scene, walk), (&scene, walk), &times).unwrap();
    assert_eq!(same.distance, 0.0);
    // One rotation key turned by 0.05 rad: the error appears at that key's time, and is at
    // most 0.05 × the joint's reach.
    let mut moved = scene.clone();
    let reach = joint_reach(&scene);
    let c = moved.animations[walk]
        .channels
        .iter()
        .position(|c| c.path == Path::Rotation && c.sampler.times_s.len() > 2)
        .unwrap();
    let channel = &mut moved.animations[walk].channels[c];
    let key_time = channel.sampler.times_s[1];
    let q = Quat::from_slice(&channel.sampler.values[4..8]);
    let turned = (q * Quat::from_rotation_z(0.05)).normalize();
    channel.sampler.values[4..8].copy_from_slice(&turned.to_array());
    let node = channel.node;
    let e = worst_error((&scene, walk), (&moved, walk), &times).unwrap();
    assert!(
        e.distance > 0.0 && (e.time_s - key_time).abs() < 1e-6,
        "{e:?} (key at {key_time})"
    );
    assert!(
        e.distance <= 0.05 * reach[node] * 1.001,
        "{e:?}, reach {}",
        reach[node]
    );
    // Another character is refused.
    let other = skinview::io::gltf_import::import_file(&crate::common::model("CesiumMan")).unwrap();
    assert!(worst_error((&scene, walk), (&other, 0), &times).is_err());
}

fn sampler(interpolation: Interpolation, times: Vec<f32>, values: Vec<f32>, c: usize) -> Sampler {
    Sampler {
        interpolation,
        times_s: times,
        values,
        components: c,
        is_rotation: c == 4,
    }
}

/// The check times of a one-channel clip of `s`.
fn times_of(s: &Sampler) -> Vec<f32> {
    let mut a = clip(s.times_s.clone());
    a.channels[0].sampler = s.clone();
    evaluation_times(&a).unwrap()
}

/// The largest error of `b` against `a` at `times`, computed in f64 by the test (the angle by
/// acos of the dot product in f64, the distance component by component).
fn largest_error_f64(a: &Sampler, b: &Sampler, times: &[f32]) -> f64 {
    let c = a.components;
    let (mut x, mut y) = (vec![0f32; c], vec![0f32; c]);
    let mut worst = 0f64;
    for &t in times {
        a.sample_binary_search(t, &mut x);
        b.sample_binary_search(t, &mut y);
        let e = if a.is_rotation {
            let dot: f64 = x
                .iter()
                .zip(&y)
                .map(|(p, q)| f64::from(*p) * f64::from(*q))
                .sum();
            let (nx, ny): (f64, f64) = (
                x.iter().map(|p| f64::from(*p).powi(2)).sum::<f64>().sqrt(),
                y.iter().map(|p| f64::from(*p).powi(2)).sum::<f64>().sqrt(),
            );
            2.0 * (dot.abs() / (nx * ny)).min(1.0).acos()
        } else {
            x.iter()
                .zip(&y)
                .map(|(p, q)| (f64::from(*p) - f64::from(*q)).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        worst = worst.max(e);
    }
    worst
}

#[test]
fn keys_on_a_line_collapse_to_two_and_needed_keys_stay() {
    // Irregular times, values on one line: the two ends reproduce it exactly.
    let times = vec![0.0, 0.05, 0.3, 0.31, 0.7, 1.3, 2.0];
    let line: Vec<f32> = times
        .iter()
        .flat_map(|t| [1.0 + 2.0 * t, -0.5 * t, 3.0])
        .collect();
    let s = sampler(Interpolation::Linear, times.clone(), line, 3);
    let (r, stats) = reduce_channel(&s, &times_of(&s), 1e-5, &ErrorMeasure::Distance);
    assert_eq!((stats.keys_before, stats.keys_after), (7, 2));
    assert_eq!(r.times_s, vec![0.0, 2.0]);
    assert!(largest_error_f64(&s, &r, &times_of(&s)) <= 1e-5);
    // A zigzag 1 unit high needs every key at a tolerance of 0.1.
    let zig: Vec<f32> = (0..times.len())
        .flat_map(|k| [(k % 2) as f32, 0.0, 0.0])
        .collect();
    let s = sampler(Interpolation::Linear, times.clone(), zig, 3);
    let (r, stats) = reduce_channel(&s, &times_of(&s), 0.1, &ErrorMeasure::Distance);
    assert_eq!(stats.keys_after, 7);
    assert_eq!(r.values, s.values);
    // STEP holding runs: only the changes stay.
    let held: Vec<f32> = [0.0, 0.0, 0.0, 5.0, 5.0, 1.0, 1.0].to_vec();
    let s = sampler(Interpolation::Step, times.clone(), held, 1);
    let (r, _) = reduce_channel(&s, &times_of(&s), 1e-3, &ErrorMeasure::Distance);
    assert_eq!(r.times_s, vec![0.0, 0.31, 1.3, 2.0]);
    assert_eq!(largest_error_f64(&s, &r, &times_of(&s)), 0.0);
}

#[test]
fn a_tolerance_of_zero_keeps_every_key_bit_for_bit() {
    let mut rng = Rng(7);
    let times: Vec<f32> = (0..20).map(|k| k as f32 / 30.0).collect();
    let values: Vec<f32> = (0..60).map(|_| rng.next_f32()).collect();
    let s = sampler(Interpolation::Linear, times, values, 3);
    for tol in [0.0, -1.0, f32::NAN] {
        let (r, stats) = reduce_channel(&s, &times_of(&s), tol, &ErrorMeasure::Distance);
        assert_eq!(stats.keys_after, 20);
        assert_eq!(r.times_s, s.times_s);
        assert!(
            r.values
                .iter()
                .zip(&s.values)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
}

/// Random seeded channels of every interpolation (rotations turning up to 1.5 rad between
/// keys, so slerping over dropped keys bulges): the reduced curve is within the tolerance at
/// every evaluation time, measured again in f64, and keeps fewer keys where it can.
#[test]
fn reduced_channels_hold_their_tolerance_at_every_evaluation_time() {
    let mut rng = Rng(0x5eed);
    let mut dropped = 0;
    for round in 0..60 {
        let interpolation = [
            Interpolation::Linear,
            Interpolation::Step,
            Interpolation::CubicSpline,
        ][round % 3];
        let rotation = round % 2 == 0;
        let c = if rotation { 4 } else { 3 };
        let n = 12 + round % 20;
        let mut t = 0.0;
        let times: Vec<f32> = (0..n)
            .map(|_| {
                t += 0.01 + 0.1 * rng.next_f32();
                t
            })
            .collect();
        // A smooth walk with some noise: reducible in places.
        let mut q = Quat::IDENTITY;
        let mut p = Vec3::ZERO;
        let mut key = |rng: &mut Rng| -> Vec<f32> {
            if rotation {
                let axis = Vec3::new(
                    rng.next_f32() - 0.5,
                    rng.next_f32() - 0.5,
                    rng.next_f32() - 0.5,
                )
                .normalize_or(Vec3::X);
                q = (Quat::from_axis_angle(axis, 0.3 * rng.next_f32().powi(3) * 5.0) * q)
                    .normalize();
                q.to_array().to_vec()
            } else {
                p += Vec3::new(0.1, 0.02 * rng.next_f32(), 0.01 * (rng.next_f32() - 0.5));
                p.to_array().to_vec()
            }
        };
        let mut values = Vec::new();
        for _ in 0..n {
            let v = key(&mut rng);
            if interpolation == Interpolation::CubicSpline {
                let tangent: Vec<f32> = (0..c).map(|_| 0.2 * (rng.next_f32() - 0.5)).collect();
                values.extend(&tangent);
                values.extend(&v);
                values.extend(&tangent);
            } else {
                values.extend(&v);
            }
        }
        let s = sampler(interpolation, times, values, c);
        let measure = if rotation {
            ErrorMeasure::Angle
        } else {
            ErrorMeasure::Distance
        };
        let tol = [1e-3, 1e-2, 5e-2][round % 3];
        let check = times_of(&s);
        let (r, stats) = reduce_channel(&s, &check, tol, &measure);
        let e = largest_error_f64(&s, &r, &check);
        // f32 rounding of the sampled values: 2e-6 (angles near tolerance in f32).
        assert!(
            e <= f64::from(tol) + 2e-6,
            "round {round} ({interpolation:?}, rotation {rotation}): {e} over {tol}"
        );
        assert!(r.times_s.first() == s.times_s.first() && r.times_s.last() == s.times_s.last());
        dropped += stats.keys_before - stats.keys_after;
    }
    assert!(
        dropped > 100,
        "only {dropped} keys dropped over 60 channels"
    );
}

/// Channels with the same key times reduced together share their kept times, and each stays
/// within its own tolerance at every evaluation time, measured again in f64 (random seeded
/// smooth walks with noise, rotations and translations). Two lines keep their ends; a line
/// beside a zigzag keeps every key of both; channels whose key times differ are refused.
#[test]
fn channels_reduced_together_share_their_times_and_each_holds() {
    let mut rng = Rng(0x70_6e7e);
    let times: Vec<f32> = {
        let mut t = 0.0;
        (0..40)
            .map(|_| {
                t += 0.01 + 0.05 * rng.next_f32();
                t
            })
            .collect()
    };
    let mut shared_fewer = 0;
    for round in 0..20 {
        let mut samplers = Vec::new();
        for c in 0..3 {
            let rotation = (round + c) % 2 == 0;
            let mut q = Quat::IDENTITY;
            let mut p = Vec3::ZERO;
            let mut values = Vec::new();
            for _ in &times {
                if rotation {
                    let axis = Vec3::new(1.0, 0.1 * rng.next_f32(), 0.3).normalize();
                    q = (Quat::from_axis_angle(axis, 0.05 + 0.01 * rng.next_f32()) * q).normalize();
                    values.extend(q.to_array());
                } else {
                    p += Vec3::new(0.05, 0.002 * rng.next_f32(), 0.004 * (rng.next_f32() - 0.5));
                    values.extend(p.to_array());
                }
            }
            let n = if rotation { 4 } else { 3 };
            samplers.push(sampler(Interpolation::Linear, times.clone(), values, n));
        }
        let measures: Vec<ErrorMeasure> = (samplers.iter())
            .map(|s| match s.is_rotation {
                true => ErrorMeasure::Angle,
                false => ErrorMeasure::Distance,
            })
            .collect();
        let tolerances = [5e-3f32, 1e-2, 2e-2];
        let inputs: Vec<_> = (0..3)
            .map(|k| (&samplers[k], tolerances[k], &measures[k]))
            .collect();
        let check = times_of(&samplers[0]);
        let (reduced, stats) = reduce_together(&inputs, &check).unwrap();
        for (k, r) in reduced.iter().enumerate() {
            assert_eq!(r.times_s, reduced[0].times_s, "round {round}: times differ");
            assert_eq!(r.times_s.len(), stats.keys_after);
            let e = largest_error_f64(&samplers[k], r, &check);
            assert!(
                e <= f64::from(tolerances[k]) + 2e-6,
                "round {round} channel {k}: {e} over {}",
                tolerances[k]
            );
            // No channel alone needs more keys than the group keeps.
            let alone = reduce_channel(&samplers[k], &check, tolerances[k], &measures[k]).1;
            assert!(
                alone.keys_after <= stats.keys_after,
                "round {round} channel {k}"
            );
        }
        shared_fewer += usize::from(stats.keys_after < stats.keys_before);
    }
    assert!(
        shared_fewer >= 15,
        "only {shared_fewer} of 20 groups dropped a key"
    );
    // Two lines keep their ends; a zigzag beside a line keeps every key of both.
    let line = |slope: f32| -> Sampler {
        let v = times.iter().flat_map(|t| [slope * t, 1.0, -t]).collect();
        sampler(Interpolation::Linear, times.clone(), v, 3)
    };
    let zig = {
        let v = (0..times.len())
            .flat_map(|k| [(k % 2) as f32, 0.0, 0.0])
            .collect();
        sampler(Interpolation::Linear, times.clone(), v, 3)
    };
    let d = ErrorMeasure::Distance;
    let check = times_of(&zig);
    let (r, _) =
        reduce_together(&[(&line(1.0), 1e-4, &d), (&line(-3.0), 1e-4, &d)], &check).unwrap();
    assert_eq!(r[0].times_s, vec![times[0], times[times.len() - 1]]);
    let (r, stats) = reduce_together(&[(&line(1.0), 1e-4, &d), (&zig, 0.1, &d)], &check).unwrap();
    assert_eq!(stats.keys_after, times.len());
    assert_eq!(r[0].values, line(1.0).values);
    // Different key times: not reduced together.
    let mut other = line(1.0);
    other.times_s[1] += 1e-3;
    assert!(reduce_together(&[(&line(1.0), 1e-4, &d), (&other, 1e-4, &d)], &check).is_none());
}

/// A translation channel (`vectors`, measured as distances) and a rotation channel
/// (`rotations`, measured as angles) on `times`, each with `tolerance`: the refit cases.
fn moving_and_turning(
    interpolation: Interpolation,
    times: &[f32],
    (vectors, rotations): (Vec<f32>, Vec<f32>),
    tolerance: f32,
) -> [(Sampler, ErrorMeasure, f32); 2] {
    [
        (
            sampler(interpolation, times.to_vec(), vectors, 3),
            ErrorMeasure::Distance,
            tolerance,
        ),
        (
            sampler(interpolation, times.to_vec(), rotations, 4),
            ErrorMeasure::Angle,
            tolerance,
        ),
    ]
}

/// `s` refitted within `tol` (no rounding): within the tolerance at every evaluation time,
/// measured again in f64, refitted, with fewer keys than the plain selection keeps; the
/// refitted channel.
fn assert_refits(s: &Sampler, measure: &ErrorMeasure, tol: f32) -> Sampler {
    let check = times_of(s);
    let plain = reduce_channel(s, &check, tol, measure).1.keys_after;
    let (r, stats) = reduce_refit(s, &check, tol, measure, None);
    let e = largest_error_f64(s, &r, &check);
    assert!(e <= f64::from(tol) + 2e-6, "{e} over {tol}");
    assert!(
        stats.looseness.is_some(),
        "not refitted: {stats:?}, {plain} plain"
    );
    assert!(stats.reduce.keys_after < plain, "{stats:?}, {plain} plain");
    assert_eq!(r.times_s.len(), stats.reduce.keys_after);
    r
}

/// Smooth LINEAR channels keyed at 60 Hz (a translation along a sine, a rotation turning on
/// a wobbling axis): refitted keys hold the tolerance at every evaluation time, measured again
/// in f64, with fewer keys than the channel's own values allow (a chord of a curve is off it at
/// its middle by all the error; the fitted line splits it), and the stats say which looseness
/// held. Rounded as a file stores them (1/256 steps here), the values are on that grid and
/// still hold. A zigzag that needs every key keeps its values.
#[test]
fn refitted_keys_hold_the_tolerance_with_fewer_keys() {
    let times: Vec<f32> = (0..121).map(|k| k as f32 / 60.0).collect();
    let sine: Vec<f32> = (times.iter())
        .flat_map(|t| [(3.0 * t).sin(), 0.5 * (5.0 * t).cos(), 0.2 * t])
        .collect();
    let turn: Vec<f32> = (times.iter())
        .flat_map(|t| {
            let axis = Vec3::new(1.0, (2.0 * t).sin(), 0.3).normalize();
            Quat::from_axis_angle(axis, 2.0 * t).to_array()
        })
        .collect();
    let grid = |v: &mut [f32]| v.iter_mut().for_each(|x| *x = (*x * 256.0).round() / 256.0);
    let cases = moving_and_turning(Interpolation::Linear, &times, (sine, turn), 1e-3);
    for (s, measure, tol) in &cases {
        let check = times_of(s);
        let r = assert_refits(s, measure, *tol);
        assert_eq!(r.interpolation, Interpolation::Linear);
        if !s.is_rotation {
            // Keys already on the grid (the job rounds them first) stay on it.
            let mut on_grid = s.clone();
            grid(&mut on_grid.values);
            let (r, stats) = reduce_refit(&on_grid, &check, 8e-3, measure, Some(&grid));
            assert!(
                stats.looseness.is_some(),
                "not refitted on the grid: {stats:?}"
            );
            assert!(
                r.values.iter().all(|v| (v * 256.0).fract() == 0.0),
                "{:?}",
                r.values
            );
            assert!(largest_error_f64(&on_grid, &r, &check) <= 8e-3 + 2e-6);
        }
    }
    // A zigzag needs every key: nothing to refit.
    let zig: Vec<f32> = (0..times.len()).map(|k| (k % 2) as f32).collect();
    let s = sampler(Interpolation::Linear, times.clone(), zig, 1);
    let (r, stats) = reduce_refit(&s, &times_of(&s), 0.1, &ErrorMeasure::Distance, None);
    assert_eq!((r.values, stats.looseness), (s.values.clone(), None));
}

/// CUBICSPLINE channels keyed at 30 Hz with their exact derivatives as tangents (a
/// translation along sines, a rotation turning about a wobbling axis): refitted values and
/// tangents (least squares over glTF's Hermite segments) hold the tolerance at every
/// evaluation time, measured again in f64, with fewer keys than the channel's own keys and
/// tangents allow, and stay CUBICSPLINE. A zigzag that needs every key keeps its own.
#[test]
fn cubic_keys_refit_with_fewer_keys() {
    let times: Vec<f32> = (0..61).map(|k| k as f32 / 30.0).collect();
    let position = |t: f32| [(3.0 * t).sin(), 0.5 * (5.0 * t).cos(), 0.2 * t * t];
    let velocity = |t: f32| [3.0 * (3.0 * t).cos(), -2.5 * (5.0 * t).sin(), 0.4 * t];
    let turn = |t: f32| {
        let axis = Vec3::new(1.0, (0.5 * t).sin(), 0.3).normalize();
        Quat::from_axis_angle(axis, 1.5 * t)
    };
    // The derivative of the turn's components, by a central difference in f64-sized steps.
    let spin = |t: f32| {
        let h = 1e-3;
        let (a, b) = (turn(t - h).to_array(), turn(t + h).to_array());
        [0, 1, 2, 3].map(|i| (b[i] - a[i]) / (2.0 * h))
    };
    let mut moving = Vec::new();
    let mut turning = Vec::new();
    for &t in &times {
        for x in [
            velocity(t).to_vec(),
            position(t).to_vec(),
            velocity(t).to_vec(),
        ] {
            moving.extend(x);
        }
        for x in [
            spin(t).to_vec(),
            turn(t).to_array().to_vec(),
            spin(t).to_vec(),
        ] {
            turning.extend(x);
        }
    }
    let cases = moving_and_turning(Interpolation::CubicSpline, &times, (moving, turning), 2e-4);
    for (s, measure, tol) in &cases {
        let r = assert_refits(s, measure, *tol);
        assert_eq!(r.interpolation, Interpolation::CubicSpline);
        assert_eq!(r.values.len(), 3 * s.components * r.times_s.len());
    }
    let zig: Vec<f32> = (0..times.len())
        .flat_map(|k| [0.0, (k % 2) as f32, 0.0])
        .collect();
    let s = sampler(Interpolation::CubicSpline, times.clone(), zig, 1);
    let (r, stats) = reduce_refit(&s, &times_of(&s), 0.1, &ErrorMeasure::Distance, None);
    assert_eq!((r.values, stats.looseness), (s.values.clone(), None));
}

/// STEP channels drifting slowly at 60 Hz (a translation, a turn): each kept key holds the
/// middle of the values it stands for, so the refit keeps fewer keys than the plain selection,
/// within the tolerance at every evaluation time measured again in f64; rounded to a 1/4096
/// grid the values stay on it. A staircase of exact changes keeps them, values its own.
#[test]
fn step_keys_refit_to_the_middle_of_what_they_hold() {
    let times: Vec<f32> = (0..241).map(|k| k as f32 / 60.0).collect();
    let drift: Vec<f32> = (times.iter())
        .flat_map(|t| [0.05 * (0.7 * t).sin(), 0.02 * t, 0.0])
        .collect();
    let turn: Vec<f32> = (times.iter())
        .flat_map(|t| {
            Quat::from_axis_angle(Vec3::new(0.2, 1.0, 0.1).normalize(), 0.05 * t).to_array()
        })
        .collect();
    let cases = [
        (
            sampler(Interpolation::Step, times.clone(), drift, 3),
            ErrorMeasure::Distance,
        ),
        (
            sampler(Interpolation::Step, times.clone(), turn, 4),
            ErrorMeasure::Angle,
        ),
    ];
    let grid = |v: &mut [f32]| {
        v.iter_mut()
            .for_each(|x| *x = (*x * 4096.0).round() / 4096.0)
    };
    for (s, measure) in &cases {
        let tol = 2e-3;
        let check = times_of(s);
        let plain = reduce_channel(s, &check, tol, measure).1.keys_after;
        for round in [None, Some(&grid as &dyn Fn(&mut [f32]))] {
            let (r, stats) = reduce_refit(s, &check, tol, measure, round);
            let e = largest_error_f64(s, &r, &check);
            assert!(e <= f64::from(tol) + 2e-6, "{e} over {tol}");
            assert!(stats.looseness.is_some(), "not refitted: {stats:?}");
            assert!(stats.reduce.keys_after < plain, "{stats:?}, {plain} plain");
            assert_eq!(r.interpolation, Interpolation::Step);
            if round.is_some() {
                assert!(r.values.iter().all(|v| (v * 4096.0).fract() == 0.0));
            }
        }
    }
    // Exact changes: the plain selection keeps them with their own values.
    let stairs: Vec<f32> = (0..times.len()).map(|k| (k / 30) as f32).collect();
    let s = sampler(Interpolation::Step, times.clone(), stairs, 1);
    let (r, stats) = reduce_refit(&s, &times_of(&s), 1e-3, &ErrorMeasure::Distance, None);
    assert_eq!(stats.looseness, None);
    assert_eq!(r.times_s.len(), 9, "the first key and the 8 changes");
    assert!(r.values.iter().all(|v| v.fract() == 0.0));
}

/// The job refits where that keeps fewer keys within the tolerance on the skin: the Fox's
/// Survey clip (24 Hz motion capture, smooth) at 1e-4 has refitted rotation channels, and the
/// clip, measured again here, holds the tolerance with the keys the report counts.
#[test]
fn the_job_refits_smooth_channels_within_the_tolerance() {
    let fox = skinview::io::load(&crate::common::shared_dir().join("models/Fox/Fox.glb")).unwrap();
    let (clips, results, diagonal) = reduce_at(&fox, 1e-4);
    let survey = results
        .iter()
        .find(|r| fox.animations[r.clip].name.as_deref() == Some("Survey"))
        .unwrap();
    let rotation = survey.keys[path_slot(Path::Rotation)];
    assert!(rotation.refitted > 0, "{rotation:?}");
    let mut reduced = fox.clone();
    reduced.animations = clips;
    let times = evaluation_times(&fox.animations[survey.clip]).unwrap();
    let w = worst_error((&fox, survey.clip), (&reduced, survey.clip), &times).unwrap();
    assert!(
        w.distance <= 1e-4 * diagonal,
        "{} over {}",
        w.distance,
        1e-4 * diagonal
    );
    let kept: usize = reduced.animations[survey.clip]
        .channels
        .iter()
        .filter(|c| c.path == Path::Rotation)
        .map(|c| c.sampler.times_s.len())
        .sum();
    assert_eq!(kept, rotation.after);
}

#[test]
fn the_job_keeps_every_skinned_vertex_within_the_tolerance() {
    // The humanoid's clips are sparse (11 keys a channel over a second of sines): little to
    // drop. CesiumMan's are exported at 30 Hz.
    let cesium =
        skinview::io::load(&crate::common::shared_dir().join("models/CesiumMan/CesiumMan.glb"))
            .unwrap();
    for (scene, dense) in [(humanoid(), false), (cesium, true)] {
        let diagonal = skinview::diff::rest_diagonal(&scene).unwrap() as f32;
        for rel in [0.0, 1e-4, 1e-3] {
            let (clips, results, _) = reduce_at(&scene, rel);
            let mut reduced = scene.clone();
            reduced.animations = clips;
            for r in &results {
                let times = evaluation_times(&scene.animations[r.clip]).unwrap();
                let w = worst_error((&scene, r.clip), (&reduced, r.clip), &times).unwrap();
                assert!(
                    w.distance <= rel * diagonal,
                    "{} clip {} at {rel}: {} over {}",
                    scene.name,
                    r.clip,
                    w.distance,
                    rel * diagonal
                );
                assert_eq!(w, r.worst, "the job reports what it measured");
                let (before, after): (usize, usize) = r
                    .keys
                    .iter()
                    .fold((0, 0), |(b, a), k| (b + k.before, a + k.after));
                let kept: usize = reduced.animations[r.clip]
                    .channels
                    .iter()
                    .map(|c| c.sampler.times_s.len())
                    .sum();
                assert_eq!(after, kept, "key counts");
                if rel == 0.0 {
                    assert_eq!(before, after);
                    for (a, b) in scene.animations[r.clip]
                        .channels
                        .iter()
                        .zip(&reduced.animations[r.clip].channels)
                    {
                        assert_eq!(a.sampler.times_s, b.sampler.times_s);
                        assert!(
                            a.sampler
                                .values
                                .iter()
                                .zip(&b.sampler.values)
                                .all(|(x, y)| x.to_bits() == y.to_bits())
                        );
                    }
                } else if rel == 1e-3 && dense {
                    assert!(after < before, "{}: nothing dropped at {rel}", scene.name);
                }
            }
        }
    }
    // Rule 1: a tolerance that is not a distance.
    let scene = humanoid();
    for bad in [-1.0, f32::NAN, f32::INFINITY] {
        let e = OptimizeJob {
            scene: &scene,
            tolerance: bad,
            exact: Vec::new(),
            caps: Vec::new(),
            rotation_codes: vec![skinview::optimize::KeyCodes::SNORM16],
            vector_codes: Vec::new(),
            price: None,
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("tolerance"), "{e}");
    }
}

/// The budget search loosens past budgets that hold in no fewer bytes (a compressed file
/// prices reductions that do not yet pay for key times of their own no lower than keeping
/// every key): CesiumMan at 3e-3 of its diagonal, its first three reductions priced the same.
/// The search goes on doubling, keeps a later one (priced by its keys), and the clip holds.
#[test]
fn the_budget_search_loosens_past_budgets_priced_the_same() {
    let scene = cesium_man();
    let calls = std::cell::Cell::new(0usize);
    let price = |a: &Animation| {
        calls.set(calls.get() + 1);
        match calls.get() <= 3 {
            true => usize::MAX / 2,
            false => key_count(a),
        }
    };
    let (clip, r) = cesium_man_at_3e3(&scene, Some(&price));
    assert_eq!(r.tightened, 0, "{r:?}");
    assert!(
        r.loosened >= 1,
        "stopped at the first budgets that saved nothing: {r:?}"
    );
    assert!(calls.get() > 4, "{} reductions priced", calls.get());
    assert!(key_count(&clip) < key_count(&scene.animations[0]));
}

fn cesium_man() -> Scene {
    skinview::io::load(&crate::common::shared_dir().join("models/CesiumMan/CesiumMan.glb")).unwrap()
}

fn key_count(a: &Animation) -> usize {
    a.channels.iter().map(|c| c.sampler.times_s.len()).sum()
}

/// `scene`'s (CesiumMan's) clip reduced within 3e-3 of its diagonal, rotations as 16-bit
/// codes, priced by `price`: the clip, checked to hold the tolerance at every evaluation time,
/// and what the job did.
fn cesium_man_at_3e3(
    scene: &Scene,
    price: Option<skinview::optimize::Price>,
) -> (Animation, skinview::optimize::ClipResult) {
    let diagonal = skinview::diff::rest_diagonal(scene).unwrap() as f32;
    let job = OptimizeJob {
        scene,
        tolerance: 3e-3 * diagonal,
        exact: Vec::new(),
        caps: Vec::new(),
        rotation_codes: vec![skinview::optimize::KeyCodes::SNORM16],
        vector_codes: Vec::new(),
        price,
    };
    let (clips, results) = job.run(|_, _| {}).unwrap();
    let mut reduced = scene.clone();
    reduced.animations = clips;
    let times = evaluation_times(&scene.animations[0]).unwrap();
    let w = worst_error((scene, 0), (&reduced, 0), &times).unwrap();
    assert!(w.distance <= 3e-3 * diagonal, "{} over", w.distance);
    let clip = reduced.animations.swap_remove(0);
    (clip, results.into_iter().next().unwrap())
}

/// Channels with the same key times go onto common times where the price says that is
/// cheaper: CesiumMan at 3e-3 of its diagonal (its channels share one array of key times in
/// the file), priced 10,000 bytes an array of key times, keeps one array for all its kept
/// channels and fewer keys than it had; priced as uncompressed bytes, its channels keep times
/// of their own. Both hold the tolerance.
#[test]
fn channels_share_their_times_where_the_price_says_so() {
    use skinview::anim::distinct_key_times;
    let scene = cesium_man();
    assert_eq!(
        distinct_key_times(scene.animations[0].channels.iter()).len(),
        1
    );
    let arrays_dear =
        |a: &Animation| 10_000 * distinct_key_times(a.channels.iter()).len() + key_count(a);
    let mut arrays = Vec::new();
    for price in [Some(&arrays_dear as skinview::optimize::Price), None] {
        let (clip, _) = cesium_man_at_3e3(&scene, price);
        assert!(key_count(&clip) < key_count(&scene.animations[0]));
        arrays.push(distinct_key_times(clip.channels.iter()).len());
    }
    assert_eq!(arrays[0], 1, "priced by arrays");
    assert!(arrays[1] > 1, "priced uncompressed: {}", arrays[1]);
}

/// A group of channels with the same key times splits where that is cheaper: three scale
/// channels of the humanoid on 21 common key times, one zigzagging (it needs every key), two
/// bent once each at different keys (3 keys each on their own, on different times). Priced
/// as stored uncompressed, the two bent ones share one array of the 4 times they need
/// together while the zigzag keeps the clip's own: two arrays, where on their own the three
/// would need three and all together 63 keys. The clip holds the tolerance.
#[test]
fn a_group_of_channels_splits_where_two_arrays_cost_less() {
    use skinview::anim::distinct_key_times;
    let mut scene = humanoid();
    let joints: Vec<usize> = scene.skins[0].joints[1..4].to_vec();
    let times: Vec<f32> = (0..21).map(|k| k as f32 * 0.05).collect();
    let factor = |shape: usize, k: usize| -> f32 {
        match shape {
            0 => 1.0 + 0.2 * (k % 2) as f32,
            1 => 1.0 + 0.01 * k.min(5) as f32,
            _ => 1.0 + 0.01 * k.saturating_sub(15) as f32,
        }
    };
    let mut clip = scene.animations[0].clone();
    clip.channels = (joints.iter().enumerate())
        .map(|(shape, &node)| {
            let s = scene.nodes[node].rest.scale;
            let values = (0..times.len())
                .flat_map(|k| (s * factor(shape, k)).to_array())
                .collect();
            Channel {
                node,
                path: Path::Scale,
                sampler: sampler(Interpolation::Linear, times.clone(), values, 3),
            }
        })
        .collect();
    scene.animations = vec![clip];
    let (clips, _, diagonal) = reduce_at(&scene, 1e-4);
    let keys = |node: usize| {
        let c = clips[0].channels.iter().find(|c| c.node == node).unwrap();
        c.sampler.times_s.clone()
    };
    assert_eq!(keys(joints[0]), times);
    assert_eq!(keys(joints[1]), vec![0.0, 0.25, 0.75, 1.0]);
    assert_eq!(keys(joints[1]), keys(joints[2]));
    assert_eq!(distinct_key_times(clips[0].channels.iter()).len(), 2);
    let mut reduced = scene.clone();
    reduced.animations = clips;
    let t = evaluation_times(&scene.animations[0]).unwrap();
    let w = worst_error((&scene, 0), (&reduced, 0), &t).unwrap();
    assert!(w.distance <= 1e-4 * diagonal, "{w:?}");
}

/// The job on `scene` at `rel` of its rest diagonal: the clips, the results, the diagonal.
fn reduce_at(
    scene: &Scene,
    rel: f32,
) -> (Vec<Animation>, Vec<skinview::optimize::ClipResult>, f32) {
    let diagonal = skinview::diff::rest_diagonal(scene).unwrap() as f32;
    let job = OptimizeJob {
        scene,
        tolerance: rel * diagonal,
        exact: Vec::new(),
        caps: Vec::new(),
        rotation_codes: vec![skinview::optimize::KeyCodes::SNORM16],
        vector_codes: Vec::new(),
        price: None,
    };
    let (clips, results) = job.run(|_, _| {}).unwrap();
    (clips, results, diagonal)
}

/// A LINEAR scale channel on `node` holding `factor` times its rest scale at every one of
/// `times`.
fn constant_scale(scene: &Scene, node: usize, times: Vec<f32>, factor: f32) -> Channel {
    let s = scene.nodes[node].rest.scale * factor;
    let values = times.iter().flat_map(|_| s.to_array()).collect();
    Channel {
        node,
        path: Path::Scale,
        sampler: sampler(Interpolation::Linear, times, values, 3),
    }
}

/// A channel its node's own value holds is left out (glTF plays an unanimated channel at the
/// node's value): a scale channel constant at the joint's rest scale goes, one constant at
/// 1.1 times it stays, and every skinned vertex stays within the tolerance.
#[test]
fn channels_the_rest_value_holds_are_left_out() {
    let mut scene = humanoid();
    let skin = &scene.skins[0];
    // Two joints that move vertices and have no scale channel.
    let unscaled: Vec<usize> = skin
        .joints
        .iter()
        .copied()
        .filter(|&j| {
            !scene.animations[0]
                .channels
                .iter()
                .any(|c| c.node == j && c.path == Path::Scale)
        })
        .take(2)
        .collect();
    let (held, kept) = (unscaled[0], unscaled[1]);
    let times = scene.animations[0].channels[0].sampler.times_s.clone();
    for (node, factor) in [(held, 1.0), (kept, 1.1)] {
        let channel = constant_scale(&scene, node, times.clone(), factor);
        scene.animations[0].channels.push(channel);
    }
    let (clips, results, diagonal) = reduce_at(&scene, 1e-4);
    let scales = |node: usize| {
        clips[0]
            .channels
            .iter()
            .filter(|c| c.node == node && c.path == Path::Scale)
            .count()
    };
    assert_eq!(scales(held), 0, "the rest-valued channel stays");
    assert_eq!(scales(kept), 1, "the scaled channel went");
    assert!(results[0].keys[path_slot(Path::Scale)].dropped >= 1);
    let mut reduced = scene.clone();
    reduced.animations = clips;
    let t = evaluation_times(&scene.animations[0]).unwrap();
    let w = worst_error((&scene, 0), (&reduced, 0), &t).unwrap();
    assert!(w.distance <= 1e-4 * diagonal, "{w:?}");
}

/// A clip whose every channel its nodes' own values hold keeps one, as one key of that value
/// (a glTF animation must have a channel): the clip still plays the rest pose.
#[test]
fn a_clip_the_rest_pose_holds_keeps_one_key() {
    let mut scene = humanoid();
    let joint = scene.skins[0].joints[1];
    let times = vec![0.0, 0.5, 1.0];
    let s = scene.nodes[joint].rest.scale;
    let mut still = scene.animations[0].clone();
    still.channels = vec![constant_scale(&scene, joint, times, 1.0)];
    scene.animations = vec![still];
    let (clips, results, _) = reduce_at(&scene, 1e-4);
    let kept = &clips[0].channels;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].sampler.times_s.len(), 1);
    assert_eq!(kept[0].sampler.values, s.to_array().to_vec());
    let k = results[0].keys[path_slot(Path::Scale)];
    assert_eq!((k.before, k.after, k.dropped), (3, 1, 0));
}

/// An exact node keeps its channels bit for bit, and so does a node capped at 0; the rest of
/// the clip is still reduced, within the tolerance.
#[test]
fn exact_and_capped_joints_keep_their_keys() {
    // CesiumMan's clip is keyed at 30 Hz: much to drop elsewhere.
    let scene =
        skinview::io::load(&crate::common::shared_dir().join("models/CesiumMan/CesiumMan.glb"))
            .unwrap();
    let animated: Vec<usize> = scene.animations[0]
        .channels
        .iter()
        .map(|c| c.node)
        .collect();
    let (exact, capped) = (
        animated[0],
        *animated.iter().find(|&&n| n != animated[0]).unwrap(),
    );
    let diagonal = skinview::diff::rest_diagonal(&scene).unwrap() as f32;
    let job = OptimizeJob {
        scene: &scene,
        tolerance: 1e-3 * diagonal,
        exact: vec![exact],
        caps: vec![(capped, 0.0)],
        rotation_codes: vec![skinview::optimize::KeyCodes::SNORM16],
        vector_codes: Vec::new(),
        price: None,
    };
    let (clips, results) = job.run(|_, _| {}).unwrap();
    for (a, b) in [(exact, "exact"), (capped, "capped at 0")] {
        let before: Vec<&Channel> = scene.animations[0]
            .channels
            .iter()
            .filter(|c| c.node == a)
            .collect();
        let after: Vec<&Channel> = clips[0].channels.iter().filter(|c| c.node == a).collect();
        assert_eq!(before.len(), after.len(), "{b}");
        for (x, y) in before.iter().zip(&after) {
            assert_eq!(x.sampler.times_s, y.sampler.times_s, "{b}");
            assert_eq!(x.sampler.values, y.sampler.values, "{b}");
        }
    }
    let (before, after) = results[0]
        .keys
        .iter()
        .fold((0, 0), |(b, a), k| (b + k.before, a + k.after));
    assert!(
        after < before,
        "nothing else was reduced: {before} -> {after}"
    );
    let t = evaluation_times(&scene.animations[0]).unwrap();
    let mut reduced = scene.clone();
    reduced.animations = clips;
    let w = worst_error((&scene, 0), (&reduced, 0), &t).unwrap();
    assert!(w.distance <= 1e-3 * diagonal);
    // A node the scene lacks is refused.
    let bad = OptimizeJob {
        scene: &scene,
        tolerance: 0.0,
        exact: vec![scene.nodes.len()],
        caps: Vec::new(),
        rotation_codes: vec![skinview::optimize::KeyCodes::SNORM16],
        vector_codes: Vec::new(),
        price: None,
    };
    assert!(bad.validate().is_err());
}

/// Every LINEAR rotation of `anim` rounded by `round` (as the job rounds them).
fn rotations_rounded(anim: &Animation, round: &dyn Fn(&mut [f32])) -> Animation {
    let mut out = anim.clone();
    for c in &mut out.channels {
        if c.path == Path::Rotation && c.sampler.interpolation == Interpolation::Linear {
            round(&mut c.sampler.values);
        }
    }
    out
}

/// Rotations take the coarsest codes offered whose rounding, measured on the skin, takes at
/// most half the tolerance: a coarse 10-bit rounding (each component to k/511) at 1e-2 of the
/// diagonal, not at 1e-4, where an independent measure of its rounding is over half (plain
/// 16-bit codes are taken there, on some rotation channels at least); the
/// rounding's error the job reports is that measure; every result holds the tolerance; with
/// no codes offered, rotations stay floats.
#[test]
fn rotations_take_the_coarsest_codes_whose_rounding_fits() {
    use skinview::anim::snorm::{snorm16_codes, snorm16_round};
    use skinview::optimize::{CODES_SHARE, KeyCodes};
    let scene =
        skinview::io::load(&crate::common::shared_dir().join("models/CesiumMan/CesiumMan.glb"))
            .unwrap();
    let coarse_round = |v: &mut [f32]| {
        v.iter_mut()
            .for_each(|x| *x = snorm16_round((*x * 511.0).round() / 511.0));
    };
    let coarse = KeyCodes {
        name: "coarse",
        round: &coarse_round,
    };
    let diagonal = skinview::diff::rest_diagonal(&scene).unwrap() as f32;
    let times = evaluation_times(&scene.animations[0]).unwrap();
    let mut rounded = scene.clone();
    rounded.animations[0] = rotations_rounded(&scene.animations[0], &coarse_round);
    let coarse_error = worst_error((&scene, 0), (&rounded, 0), &times)
        .unwrap()
        .distance;
    for (rel, offered, expect) in [
        (1e-2, vec![coarse, KeyCodes::SNORM16], Some("coarse")),
        (1e-4, vec![coarse, KeyCodes::SNORM16], Some("16-bit codes")),
        (1e-2, Vec::new(), None),
    ] {
        let tolerance = rel * diagonal;
        let job = OptimizeJob {
            scene: &scene,
            tolerance,
            exact: Vec::new(),
            caps: Vec::new(),
            rotation_codes: offered,
            vector_codes: Vec::new(),
            price: None,
        };
        let (clips, results) = job.run(|_, _| {}).unwrap();
        let r = &results[0];
        assert_eq!(r.rotation_codes.as_deref(), expect, "at {rel}");
        let mut reduced = scene.clone();
        reduced.animations = clips;
        let w = worst_error((&scene, 0), (&reduced, 0), &times).unwrap();
        assert!(
            w.distance <= tolerance,
            "at {rel}: {} over {tolerance}",
            w.distance
        );
        let rotations = reduced.animations[0]
            .channels
            .iter()
            .filter(|c| c.path == Path::Rotation);
        let mut stored = 0;
        for c in rotations {
            let v = &c.sampler.values;
            if expect == Some("coarse") {
                let on_lattice = |&x: &f32| snorm16_round((x * 511.0).round() / 511.0) == x;
                assert!(v.iter().all(on_lattice));
            }
            stored += usize::from(snorm16_codes(v).is_some());
        }
        assert_eq!(
            r.keys[path_slot(Path::Rotation)].quantised,
            stored,
            "at {rel}"
        );
        match expect {
            Some("coarse") => {
                assert_eq!(
                    r.codes_error, coarse_error,
                    "the job's measure of its rounding"
                );
                assert!(coarse_error <= CODES_SHARE * tolerance);
            }
            Some(_) => {
                // Plain codes on every rotation channel or, bisected, on those nearest the
                // skin's ends.
                assert!(stored > 0, "at {rel}");
                assert!(coarse_error > CODES_SHARE * tolerance, "{coarse_error}");
            }
            None => assert_eq!(stored, 0, "floats when no codes are offered"),
        }
    }
}

/// Translations and scales take the coarsest rounding offered whose error, measured on the
/// skin, takes at most half the tolerance: a rounding to 1/64 of a unit, measured
/// independently (E), is taken at a tolerance of 4 E and reported as E, refused at 1.5 E;
/// every result holds the tolerance and counts the channels it rounded. The job is priced so
/// that it keeps its reduction at the equal shares (a later one, with fewer keys, costs more),
/// where translation channels are kept to carry the rounding.
#[test]
fn translations_and_scales_take_a_rounding_that_fits() {
    use skinview::optimize::KeyCodes;
    let scene =
        skinview::io::load(&crate::common::shared_dir().join("models/CesiumMan/CesiumMan.glb"))
            .unwrap();
    let round = |v: &mut [f32]| v.iter_mut().for_each(|x| *x = (*x * 64.0).round() / 64.0);
    let times = evaluation_times(&scene.animations[0]).unwrap();
    let mut rounded = scene.clone();
    for c in &mut rounded.animations[0].channels {
        if matches!(c.path, Path::Translation | Path::Scale) {
            round(&mut c.sampler.values);
        }
    }
    let e = worst_error((&scene, 0), (&rounded, 0), &times)
        .unwrap()
        .distance;
    assert!(e > 0.0, "the rounding moves nothing");
    let more_keys_cheaper = |a: &Animation| {
        usize::MAX / 2
            - a.channels
                .iter()
                .map(|c| c.sampler.times_s.len())
                .sum::<usize>()
    };
    for (tolerance, taken) in [(4.0 * e, true), (1.5 * e, false)] {
        let job = OptimizeJob {
            scene: &scene,
            tolerance,
            exact: Vec::new(),
            caps: Vec::new(),
            rotation_codes: Vec::new(),
            vector_codes: vec![KeyCodes {
                name: "sixty-fourths",
                round: &round,
            }],
            price: Some(&more_keys_cheaper),
        };
        let (clips, results) = job.run(|_, _| {}).unwrap();
        let r = &results[0];
        assert_eq!(r.vector_codes.is_some(), taken, "at {tolerance}");
        let mut reduced = scene.clone();
        reduced.animations = clips;
        let w = worst_error((&scene, 0), (&reduced, 0), &times).unwrap();
        assert!(w.distance <= tolerance, "{} over {tolerance}", w.distance);
        let on_grid = |c: &&Channel| {
            matches!(c.path, Path::Translation | Path::Scale)
                && c.sampler
                    .values
                    .iter()
                    .all(|x| (x * 64.0).round() / 64.0 == *x)
        };
        let kept = reduced.animations[0]
            .channels
            .iter()
            .filter(on_grid)
            .count();
        let counted = r.keys[path_slot(Path::Translation)].quantised
            + r.keys[path_slot(Path::Scale)].quantised;
        if taken {
            assert_eq!(r.codes_error, e, "the job's measure of its rounding");
            assert_eq!(counted, kept, "channels counted as rounded");
            assert!(kept > 0);
        } else {
            assert_eq!(counted, 0);
        }
    }
}

/// CUBICSPLINE channels are made LINEAR where that takes fewer bytes within the tolerance:
/// the FBX CesiumMan's cubic rotations (keyed densely) become LINEAR keys at 1e-3 of the
/// diagonal, each counted, its keys before still the original's, and every skinned vertex
/// within the tolerance at every evaluation time; at a tolerance of 0 every channel keeps its
/// interpolation and keys bit for bit.
#[test]
fn cubic_channels_become_linear_where_that_saves_bytes() {
    let fbx = crate::common::fbx::converted("CesiumMan");
    let scene = skinview::io::load(&fbx).unwrap();
    let original = &scene.animations[0];
    let cubic = |c: &Channel| c.sampler.interpolation == Interpolation::CubicSpline;
    assert!(
        original.channels.iter().any(cubic),
        "the FBX clip has cubic channels"
    );
    let diagonal = skinview::diff::rest_diagonal(&scene).unwrap() as f32;
    let times = evaluation_times(original).unwrap();
    for rel in [1e-3, 0.0] {
        let (clips, results, _) = reduce_at(&scene, rel);
        let r = &results[0];
        let linearised: usize = r.keys.iter().map(|k| k.linearised).sum();
        // Channels the output has as LINEAR that were cubic (same node and kind).
        let made = clips[0]
            .channels
            .iter()
            .filter(|c| c.sampler.interpolation == Interpolation::Linear)
            .filter(|c| {
                (original.channels.iter()).any(|o| o.node == c.node && o.path == c.path && cubic(o))
            })
            .count();
        assert_eq!(linearised, made, "at {rel}");
        for (k, slot) in r.keys.iter().zip(0..) {
            let before: usize = (original.channels.iter())
                .filter(|c| path_slot(c.path) == slot)
                .map(|c| c.sampler.times_s.len())
                .sum();
            assert_eq!(k.before, before, "at {rel}: the original's keys");
        }
        let mut reduced = scene.clone();
        reduced.animations = clips;
        let w = worst_error((&scene, 0), (&reduced, 0), &times).unwrap();
        assert!(w.distance <= rel * diagonal, "at {rel}: {}", w.distance);
        if rel > 0.0 {
            assert!(
                r.keys[path_slot(Path::Rotation)].linearised > 0,
                "{:?}",
                r.keys
            );
        } else {
            assert_eq!(linearised, 0);
            for (a, b) in original
                .channels
                .iter()
                .zip(&reduced.animations[0].channels)
            {
                assert_eq!(a.sampler.interpolation, b.sampler.interpolation);
                assert_eq!(a.sampler.values, b.sampler.values);
            }
        }
    }
}
