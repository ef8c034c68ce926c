//! `skinview optimize`'s measures (issue 48, first slice): the evaluation times of a clip, each
//! joint's reach on the skin (a turn of θ at a joint moves no vertex further than θ × reach,
//! and about one of three axes nearly that far), and the worst skinned-vertex error between two
//! versions of a character.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use glam::{Quat, Vec3};
use skinview::anim::{Animation, Channel, Interpolation, Path, Sampler};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::optimize::{
    MIN_RATE_HZ, SAMPLES_PER_INTERVAL, evaluation_times, joint_reach, worst_error,
};
use skinview::scene::Scene;

use crate::common::retarget::humanoid;

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
