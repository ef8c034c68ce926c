//! The crowd stage (`skinview::crowd`): every character's palette against an independent
//! evaluation (the per-channel sampler and f64 local→model), the same bits on 1, 2 and 7
//! threads and with or without shared evaluations, the sharing counted, and the set-up rules.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{DMat4, Mat4};
use skinview::anim::layer::{DEFAULT_THRESHOLD, Layer, LayerJob};
use skinview::anim::{AnimateJob, Cursor, Pose};
use skinview::crowd::{Crowd, CrowdLayer, CrowdSetup, Member, ozz};
use skinview::scene::Scene;
use skinview::skeleton::model_from_node_f64;

use crate::common;

fn load(stem: &str) -> Scene {
    skinview::io::load(&common::model(stem)).unwrap()
}

/// A mixed crowd of a model with several clips: each clip alone at many phases and speeds,
/// two clips blended, the rest pose, and repeats (characters that share).
fn mixed_members(scene: &Scene, n: usize) -> Vec<Member> {
    let clips = scene.animations.len();
    (0..n)
        .map(|c| match c % 5 {
            0 => Member::rest(),
            1 => Member {
                layers: [
                    Some(CrowdLayer {
                        clip: c % clips,
                        weight: 0.7,
                    }),
                    Some(CrowdLayer {
                        clip: (c + 1) % clips,
                        weight: 0.3,
                    }),
                ],
                phase_s: 0.1 * c as f32,
                speed: 1.5,
            },
            // Every fifth and the next: the same motion, evaluated once when sharing.
            2 | 3 => Member::clip(0, 0.25),
            _ => Member {
                speed: -0.75,
                ..Member::clip(c % clips, skinview::crowd::golden_phase(c))
            },
        })
        .collect()
}

/// Each character's palette, f64 from the per-channel sampler: the layers sampled by
/// `AnimateJob` at the character's looped time, blended by `LayerJob`, taken to model space
/// in f64 and multiplied by the inverse bind matrices.
fn expected_palette(scene: &Scene, m: &Member, time_s: f32) -> Vec<DMat4> {
    let local_s = m.phase_s + m.speed * time_s;
    let rest: Vec<_> = scene.nodes.iter().map(|n| n.rest).collect();
    let mut poses = Vec::new();
    for l in m.layers.iter().flatten() {
        let anim = &scene.animations[l.clip];
        let d = anim.duration_s();
        let mut pose = Pose::rest(scene);
        let mut cursors = vec![Cursor::default(); anim.channels.len()];
        AnimateJob {
            scene,
            animation: Some(anim),
            time_s: if d > 0.0 { local_s.rem_euclid(d) } else { 0.0 },
            cursors: &mut cursors,
            pose: &mut pose,
        }
        .run()
        .unwrap();
        poses.push((pose, l.weight));
    }
    let mut pose = Pose::rest(scene);
    let single_full = poses.len() == 1 && poses[0].1 == 1.0;
    if single_full {
        pose = poses.remove(0).0;
    } else {
        let layers: Vec<Layer> = poses
            .iter()
            .map(|(p, w)| Layer {
                pose: &p.locals,
                weight: *w,
                mask: None,
            })
            .collect();
        LayerJob {
            reference: &rest,
            layers: &layers,
            threshold: DEFAULT_THRESHOLD,
            output: &mut pose.locals,
        }
        .run()
        .unwrap();
    }
    let model = model_from_node_f64(scene, &pose);
    let mut out = Vec::new();
    for s in &scene.skins {
        for (&j, ibm) in s.joints.iter().zip(&s.joint_from_bind) {
            out.push(model[j] * ibm.as_dmat4());
        }
    }
    for d in scene.draws.iter().filter(|d| d.skin.is_none()) {
        out.push(model[d.node]);
    }
    out
}

fn max_abs_diff(a: &[Mat4], b: &[DMat4]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            let x = x.as_dmat4().to_cols_array();
            let y = y.to_cols_array();
            (0..16).map(move |i| (x[i] - y[i]).abs())
        })
        .fold(0.0, f64::max)
}

/// Every character's palette is its own motion's (clip, blend, phase, speed, rest), within
/// f32 rounding of an f64 evaluation through the other sampler, at several crowd times.
#[test]
fn palettes_match_an_independent_evaluation() {
    for stem in ["Fox", "CesiumMan", "RiggedFigure"] {
        let scene = load(stem);
        let members = mixed_members(&scene, 23);
        let mut crowd = Crowd::new(scene.clone(), CrowdSetup::new(members.clone())).unwrap();
        // Translations are in model units: scale the tolerance by the model's extent.
        let extent = scene
            .nodes
            .iter()
            .map(|n| n.rest.translation.length())
            .fold(1.0f32, f32::max) as f64;
        for time_s in [0.0, 0.37, 1.9, 5.25] {
            crowd.update(time_s).unwrap();
            for (c, m) in members.iter().enumerate() {
                let want = expected_palette(&scene, m, time_s);
                let got = crowd.palette(c).unwrap();
                assert_eq!(got.len(), want.len());
                let err = max_abs_diff(got, &want);
                assert!(
                    err < 2e-4 * extent,
                    "{stem}: character {c} ({m:?}) at {time_s} s: off by {err:e} (extent {extent})"
                );
            }
        }
    }
}

/// The same bits on 1, 2 and 7 threads, and with sharing on or off, frame after frame.
#[test]
fn palettes_are_the_same_bits_on_any_thread_count() {
    let scene = load("Fox");
    let members = mixed_members(&scene, 101);
    let configs = [(1, true), (2, true), (7, true), (2, false), (7, false)];
    let mut crowds: Vec<Crowd> = configs
        .into_iter()
        .map(|(threads, share)| {
            let setup = CrowdSetup {
                threads,
                share,
                ..CrowdSetup::new(members.clone())
            };
            Crowd::new(scene.clone(), setup).unwrap()
        })
        .collect();
    for (c, (threads, _)) in crowds.iter().zip(configs) {
        assert_eq!(c.threads(), threads);
    }
    for frame in 0..40 {
        let t = frame as f32 / 60.0;
        for c in &mut crowds {
            c.update(t).unwrap();
        }
        let first: Vec<u32> = crowds[0]
            .palettes()
            .iter()
            .flat_map(|m| m.to_cols_array().map(f32::to_bits))
            .collect();
        for (i, c) in crowds.iter().enumerate().skip(1) {
            let bits: Vec<u32> = c
                .palettes()
                .iter()
                .flat_map(|m| m.to_cols_array().map(f32::to_bits))
                .collect();
            assert!(
                bits == first,
                "frame {frame}: crowd {i} differs from one thread"
            );
        }
    }
}

/// Characters with the same motion share one evaluation, counted in the stats; without
/// sharing every character is evaluated.
#[test]
fn shared_evaluations_are_counted() {
    let scene = load("CesiumMan");
    let n = 40;
    let members = mixed_members(&scene, n);
    let distinct = {
        let mut seen: Vec<Member> = Vec::new();
        for m in &members {
            if !seen.contains(m) {
                seen.push(*m);
            }
        }
        seen.len()
    };
    assert!(distinct < n, "the mixed crowd repeats motions");
    let mut shared = Crowd::new(scene.clone(), CrowdSetup::new(members.clone())).unwrap();
    let s = shared.update(0.5).unwrap();
    assert_eq!(
        (s.characters, s.evaluations, s.shared),
        (n, distinct, n - distinct)
    );
    let setup = CrowdSetup {
        share: false,
        ..CrowdSetup::new(members)
    };
    let mut alone = Crowd::new(scene, setup).unwrap();
    let s = alone.update(0.5).unwrap();
    assert_eq!((s.evaluations, s.shared), (n, 0));
}

/// Members changed after set-up play their new motion from the next frame.
#[test]
fn set_members_changes_what_plays() {
    let scene = load("Fox");
    let mut crowd = Crowd::new(scene.clone(), CrowdSetup::cycling(&scene, 6)).unwrap();
    crowd.update(1.0).unwrap();
    let new: Vec<Member> = (0..9).map(|c| Member::clip(2, 0.1 * c as f32)).collect();
    crowd.set_members(new.clone()).unwrap();
    crowd.update(1.0).unwrap();
    assert_eq!(crowd.len(), 9);
    for (c, m) in new.iter().enumerate() {
        let err = max_abs_diff(crowd.palette(c).unwrap(), &expected_palette(&scene, m, 1.0));
        assert!(err < 1e-2, "character {c}: {err:e}");
    }
}

/// ozz-animation's workload as ozz_bench builds it: 64 joints, one 1 s clip of 30 keys on
/// every track; at rest the palette is the identity (the skin inverts the rest pose).
#[test]
fn ozz_workload_matches_its_description() {
    let scene = ozz::scene(true).unwrap();
    assert_eq!(scene.nodes.len(), ozz::JOINTS);
    assert_eq!(scene.skins[0].joints.len(), ozz::JOINTS);
    let anim = &scene.animations[0];
    assert_eq!(anim.channels.len(), 3 * ozz::JOINTS);
    assert!(
        anim.channels
            .iter()
            .all(|c| c.sampler.times_s.len() == ozz::KEYS)
    );
    assert_eq!(anim.duration_s(), 1.0);
    let mut rest = Crowd::new(scene.clone(), CrowdSetup::new(vec![Member::rest()])).unwrap();
    rest.update(0.0).unwrap();
    for m in rest.palette(0).unwrap() {
        assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-4), "{m}");
    }
    let setup = ozz::crowd_setup(8, 2);
    let members = setup.members.clone();
    let mut crowd = Crowd::new(scene.clone(), setup).unwrap();
    let s = crowd.update(0.5).unwrap();
    assert_eq!((s.evaluations, s.threads), (8, 2));
    for (c, m) in members.iter().enumerate() {
        let err = max_abs_diff(crowd.palette(c).unwrap(), &expected_palette(&scene, m, 0.5));
        assert!(err < 1e-4, "character {c}: {err:e}");
    }
}

/// Left to itself the crowd runs on every core, but gives each thread at least
/// `MIN_CHARACTERS_PER_THREAD` characters; an explicit thread count is kept.
#[test]
fn small_crowds_run_on_fewer_threads() {
    use skinview::crowd::MIN_CHARACTERS_PER_THREAD;
    let scene = load("CesiumMan");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for n in [
        1,
        10,
        MIN_CHARACTERS_PER_THREAD,
        MIN_CHARACTERS_PER_THREAD + 1,
        1000,
    ] {
        let crowd = Crowd::new(scene.clone(), CrowdSetup::cycling(&scene, n)).unwrap();
        let want = cores.min(n.div_ceil(MIN_CHARACTERS_PER_THREAD));
        assert_eq!(crowd.threads(), want, "{n} characters on {cores} cores");
    }
    let setup = CrowdSetup {
        threads: 3,
        ..CrowdSetup::cycling(&scene, 10)
    };
    assert_eq!(Crowd::new(scene, setup).unwrap().threads(), 3);
}

/// The animation level of detail: `update_some` animates the picked characters to the same
/// bits as a full update, on any thread count and with shared evaluations (an evaluation is
/// animated when any of its characters is picked, and all of them take it); the others keep
/// the palette of the frame that last animated them; a list of the wrong length is refused.
#[test]
fn update_some_animates_the_picked_and_keeps_the_rest() {
    let scene = load("Fox");
    let n = 53;
    let members = mixed_members(&scene, n);
    let mut full = Crowd::new(scene.clone(), CrowdSetup::new(members.clone())).unwrap();
    let bits = |p: &[Mat4]| -> Vec<u32> {
        p.iter()
            .flat_map(|m| m.to_cols_array().map(f32::to_bits))
            .collect()
    };
    for (threads, share) in [(1, true), (2, true), (7, false)] {
        let setup = CrowdSetup {
            threads,
            share,
            ..CrowdSetup::new(members.clone())
        };
        let mut lod = Crowd::new(scene.clone(), setup).unwrap();
        lod.update(0.1).unwrap();
        let mut before = lod.palettes().to_vec();
        let mut rng = common::rng::XorShift64(0x10d + threads as u64);
        for frame in 1..6 {
            let t = 0.1 + frame as f32 * 0.37;
            let picked: Vec<bool> = (0..n).map(|_| rng.below(3) == 0).collect();
            let s = lod.update_some(t, &picked).unwrap();
            full.update(t).unwrap();
            // A character moves when it, or one it shares an evaluation with, is picked.
            let moves: Vec<bool> = (0..n)
                .map(|c| {
                    (0..n).any(|d| picked[d] && (d == c || (share && members[d] == members[c])))
                })
                .collect();
            for c in 0..n {
                let got = bits(lod.palette(c).unwrap());
                let want = match moves[c] {
                    true => bits(full.palette(c).unwrap()),
                    false => bits(&before[c * lod.entries()..(c + 1) * lod.entries()]),
                };
                assert!(
                    got == want,
                    "{threads} thread(s), frame {frame}, character {c}"
                );
            }
            let evaluations = match share {
                true => {
                    let mut seen: Vec<Member> = Vec::new();
                    for c in (0..n).filter(|&c| moves[c]) {
                        if !seen.contains(&members[c]) {
                            seen.push(members[c]);
                        }
                    }
                    seen.len()
                }
                false => picked.iter().filter(|&&p| p).count(),
            };
            assert_eq!(s.animated, evaluations, "frame {frame}");
            before = lod.palettes().to_vec();
        }
        let all = lod.update(3.0).unwrap();
        assert_eq!(all.animated, all.evaluations);
        let e = lod.update_some(3.1, &vec![true; n - 1]).unwrap_err();
        assert!(
            e.to_string().contains(&format!("{} flags for {n}", n - 1)),
            "{e}"
        );
    }
}
