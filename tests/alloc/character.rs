//! The whole CPU animation stage on one character: no allocation once warm, every stage runs
//! with sane results. (`skinview bench`'s JSON is checked in tests/cli/cli.rs.)
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::Vec3;
use skinview::character::{Character, CharacterSetup};

use crate::common;
use crate::{allocations, reset_allocations, set_counting};

/// Sample → layer → IK → links → palette → skin → normals allocates nothing once warm (Weber,
/// "Run-Time Skin Deformation", §Caching and Performance: the run-time budget; ozz-animation's jobs
/// make the same promise).
#[test]
fn a_warm_frame_allocates_nothing() {
    let mut models: Vec<Character> = vec![Character::humanoid_demo().unwrap()];
    let fox = common::model("Fox");
    models.push(
        CharacterSetup {
            looping: true,
            ..CharacterSetup::clip(Some(1))
        }
        .build(&skinview::io::load(&fox).unwrap())
        .unwrap(),
    );
    let morph = common::model("AnimatedMorphSphere");
    models.push(
        CharacterSetup {
            looping: true,
            ..CharacterSetup::clip(Some(0))
        }
        .build(&skinview::io::load(&morph).unwrap())
        .unwrap(),
    );
    for c in &mut models {
        let dt = 1.0 / 60.0;
        for i in 0..30 {
            c.update(i as f32 * dt, dt).unwrap();
        }
        reset_allocations();
        set_counting(true);
        for i in 30..90 {
            c.update(i as f32 * dt, dt).unwrap();
        }
        set_counting(false);
        let n = allocations();
        assert_eq!(n, 0, "{}: {n} allocations in 60 warm frames", c.scene.name);
    }
}

/// The demo uses every stage, and its result is sane: IK reaches its (reachable) target, the
/// links follow, the skin stays finite with unit normals.
#[test]
fn humanoid_demo_runs_every_stage() {
    let mut c = Character::humanoid_demo().unwrap();
    assert_eq!(c.layers().len(), 3);
    assert!(
        c.links.as_ref().is_some_and(|l| l.links.len() == 16),
        "2 links at each shoulder, elbow, hip and knee"
    );
    let dt = 1.0 / 60.0;
    let mut reached = 0;
    let mut worst: f32 = 0.0;
    for i in 0..240 {
        c.update(i as f32 * dt, dt).unwrap();
        reached += c.ik_result.reached as usize;
        if i >= 30 {
            worst = worst.max(c.ik_result.residual_m[0]);
        }
        // The solved arm stays inside its ZYX limits (relative to the reference rotation); 1° of
        // slack for f32 rounding through the velocity limiter and the re-clamp after it.
        let ik = c.ik.as_ref().unwrap();
        for name in ["l_upper_arm", "l_forearm", "l_hand"] {
            let n = c.scene.find_node(name).unwrap();
            let lim = ik.limits[n].unwrap();
            let q_ref = c.scene.nodes[n].rest.rotation;
            // A rotation inside the limits is a fixed point of the clamp (this also holds at
            // the ZYX singularity, where raw Euler angles are not unique).
            let q_rel = q_ref.inverse() * c.frame.pose.locals[n].rotation;
            let clamped = lim.clamp_relative(q_rel);
            let off = q_rel.angle_between(clamped);
            assert!(
                off < 1f32.to_radians(),
                "frame {i}: {name} is {off} rad outside its limits"
            );
        }
        for out in &c.outputs {
            assert!(out.positions.iter().all(|p| p.is_finite()));
            for n in out.normals.as_ref().unwrap() {
                assert!((n.length() - 1.0).abs() < 1e-4 || *n == glam::Vec3::ZERO);
            }
        }
    }
    // During the throw's wind-up (chest twisted ~34°) the orbit leaves the region the arm's
    // joint limits allow, so some frames legitimately end unreached with a residual.
    assert!(
        reached > 180,
        "IK reached its orbiting target in only {reached}/240 frames"
    );
    assert!(
        worst.is_finite() && worst < 0.15,
        "IK residual reached {worst} m"
    );
}

/// A spec on Woodland's arm: IK bends the elbow so the forearm's tip reaches a reachable
/// point (checked on the skinned model-space tip position, independently of the solver's
/// residual), within the elbow's limits; unknown bones and motions are errors.
#[test]
fn specs_drive_any_native_rig() {
    use skinview::character::{CharacterSetup, CharacterSpec, IkGoal, MotionRef};
    let rig = skinview::builtin::woodland_arm_rig()
        .unwrap()
        .to_scene()
        .unwrap();
    let mut spec = CharacterSpec::single(Some(MotionRef::Name("bend".into())));
    spec.layers.clear();
    // Shoulder at the origin, upper arm 0.30 along X, forearm 0.28: (0.3 + 0.28 cos 60°, 0.28 sin
    // 60°).
    let target = glam::Vec3::new(0.30 + 0.14, 0.28 * 0.866_025_4, 0.0);
    spec.ik = vec![IkGoal {
        end_bone: "forearm".into(),
        chain_length: 1,
        target_m: target,
        weight: 1.0,
    }];
    let mut c = CharacterSetup::stage(spec.clone()).build_rig(&rig).unwrap();
    let dt = 1.0 / 60.0;
    for i in 0..60 {
        c.update(i as f32 * dt, dt).unwrap();
    }
    let fore = c.scene.find_node("forearm").unwrap();
    let tip = c.frame.model_from_node[fore].transform_point3(glam::Vec3::new(0.28, 0.0, 0.0));
    assert!(
        (tip - target).length() < 2e-3,
        "forearm tip at {tip}, target {target}"
    );
    assert!(c.ik_result.reached);
    spec.ik[0].end_bone = "wing".into();
    assert!(CharacterSetup::stage(spec.clone()).build_rig(&rig).is_err());
    let bad = CharacterSpec::single(Some(MotionRef::Name("dance".into())));
    assert!(
        CharacterSetup::stage(bad.clone())
            .build_rig(&rig)
            .err()
            .is_some_and(|e| e.to_string().contains("dance"))
    );
}

/// A bone driven by hand takes exactly the given transform (overriding its motion), its
/// children follow it, and handing it back restores the motion.
#[test]
fn bones_can_be_driven_by_hand() {
    use skinview::character::{CharacterSetup, CharacterSpec, MotionRef};
    let rig = skinview::builtin::woodland_arm_rig()
        .unwrap()
        .to_scene()
        .unwrap();
    let mut c = CharacterSetup::stage(CharacterSpec::single(Some(MotionRef::Name("bend".into()))))
        .build_rig(&rig)
        .unwrap();
    let fore = c.scene.find_node("forearm").unwrap();
    let by_hand = skinview::math::Trs {
        translation: glam::Vec3::new(0.3, 0.0, 0.0),
        rotation: glam::Quat::from_rotation_y(0.5),
        scale: glam::Vec3::ONE,
    };
    c.set_override(fore, Some(by_hand)).unwrap();
    c.update(1.0, 1.0 / 60.0).unwrap();
    assert_eq!(c.frame.pose.locals[fore].rotation, by_hand.rotation);
    // The forearm's tip in model space: 0.3 along X, then 0.28 along the Y-rotated X axis.
    let tip = c.frame.model_from_node[fore].transform_point3(glam::Vec3::new(0.28, 0.0, 0.0));
    let expected = glam::Vec3::new(0.3 + 0.28 * 0.5f32.cos(), 0.0, -0.28 * 0.5f32.sin());
    assert!((tip - expected).length() < 1e-5, "{tip} vs {expected}");
    c.set_override(fore, None).unwrap();
    c.update(1.0, 1.0 / 60.0).unwrap();
    // Back on the bend motion: 60° about Z at t = 1 s.
    let (axis, angle) = c.frame.pose.locals[fore].rotation.to_axis_angle();
    assert!(
        (angle - 60f32.to_radians()).abs() < 1e-4 && axis.z > 0.999,
        "{axis} {angle}"
    );
    assert!(c.set_override(999, None).is_err());
    assert!(
        c.set_override(
            fore,
            Some(skinview::math::Trs {
                rotation: glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                ..by_hand
            })
        )
        .is_err()
    );
}

/// `Character` (the frame driver: a clip on one full-body layer through `LayerJob`) gives
/// exactly what sampling the clip with `FrameState::evaluate` and skinning gives, on every
/// shared model and clip: tests that drive `FrameState` directly check the same frames the
/// CLI, the comparison and the viewer make.
#[test]
fn character_frames_equal_plain_sampling_bit_for_bit() {
    use skinview::frame::{CpuSkinner, FrameState};
    use skinview::skin::SkinnedVertices;
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        let anims: Vec<Option<usize>> = if scene.animations.is_empty() {
            vec![None]
        } else {
            (0..scene.animations.len()).map(Some).collect()
        };
        let mut c = CharacterSetup::clip(None).build(&scene.clone()).unwrap();
        let mut frame = FrameState::new(&scene);
        let mut skinner = CpuSkinner::new(&scene, None);
        for anim in anims {
            c.set_clip(anim, false).unwrap();
            for t in skinview::compare::run::frame_times(&scene, anim, 4) {
                c.update(t, 1.0 / 60.0).unwrap();
                frame.evaluate(&scene, anim, t).unwrap();
                assert_eq!(
                    c.frame.palette, frame.palette,
                    "{}: palette at {t}",
                    scene.name
                );
                for (i, out) in c.outputs.iter().enumerate() {
                    let mut v = SkinnedVertices::default();
                    skinner.skin_draw(&scene, &frame, i, &mut v).unwrap();
                    assert_eq!(out.positions, v.positions, "{} draw {i} at {t}", scene.name);
                    let unit = |n: &Option<Vec<glam::Vec3>>| {
                        n.as_ref()
                            .map(|n| n.iter().map(|x| x.normalize_or_zero()).collect::<Vec<_>>())
                    };
                    // The character renormalises in its own stage; same vectors up to rounding.
                    if let (Some(a), Some(b)) = (unit(&out.normals), unit(&v.normals)) {
                        for (x, y) in a.iter().zip(&b) {
                            assert!(
                                (*x - *y).length() < 1e-6,
                                "{}: normal {x} vs {y}",
                                scene.name
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The viewer's per-frame state work (clock, animation stage, CPU skinning for the CPU and
/// side-by-side views, the stage-time history) allocates nothing once warm.
#[cfg(feature = "viewer")]
#[test]
fn a_warm_viewer_frame_allocates_nothing() {
    use skinview::viewer::state::{ViewMode, ViewerState};
    let model = skinview::io::ModelSource::Builtin(skinview::builtin::Builtin::Humanoid)
        .load()
        .unwrap();
    let mut state = ViewerState::new(model, true).unwrap();
    state.mode = ViewMode::SideBySide;
    // Warm up: buffers grow, the history fills.
    for _ in 0..300 {
        state.tick(1.0 / 60.0).unwrap();
    }
    set_counting(true);
    reset_allocations();
    for _ in 0..60 {
        state.tick(1.0 / 60.0).unwrap();
    }
    set_counting(false);
    let n = allocations();
    assert_eq!(n, 0, "{n} allocations in 60 warm viewer frames");
}

/// The frame's morph weights follow the first layer's clip every frame, compared with
/// `AnimateJob` (the four-lane sampler hands morph-weight channels to the same per-channel
/// sampler, so this checks that the character copies them to the frame, not the sampling),
/// and a rig without morph targets keeps one empty list per node.
#[test]
fn frame_morph_weights_follow_the_clip() {
    use skinview::anim::{AnimateJob, Cursor, Pose};
    let scene = skinview::io::load(&common::model("AnimatedMorphSphere")).unwrap();
    let mut c = CharacterSetup {
        looping: true,
        ..CharacterSetup::clip(Some(0))
    }
    .build(&scene.clone())
    .unwrap();
    let anim = &scene.animations[0];
    let duration = anim.duration_s();
    let mut cursors = vec![Cursor::default(); anim.channels.len()];
    let mut pose = Pose::rest(&scene);
    let dt = 1.0 / 30.0;
    let mut moved = 0;
    let mut last: Vec<Vec<f32>> = Vec::new();
    for i in 0..90 {
        let t = i as f32 * dt;
        c.update(t, dt).unwrap();
        AnimateJob {
            scene: &scene,
            animation: Some(anim),
            time_s: t.rem_euclid(duration),
            cursors: &mut cursors,
            pose: &mut pose,
        }
        .run()
        .unwrap();
        let got = &c.frame.pose.morph_weights;
        assert_eq!(got.len(), scene.nodes.len());
        for (n, (g, want)) in got.iter().zip(&pose.morph_weights).enumerate() {
            assert_eq!(g.len(), want.len(), "frame {i}, node {n}");
            for (a, b) in g.iter().zip(want) {
                assert!(
                    (a - b).abs() <= 1e-6,
                    "frame {i}, node {n}: {a} against {b}"
                );
            }
        }
        moved += (i > 0 && *got != last) as usize;
        last.clone_from(got);
    }
    assert!(moved > 30, "the weights changed in only {moved} frames");
    let mut h = Character::humanoid_demo().unwrap();
    for i in 0..3 {
        h.update(i as f32 / 60.0, 1.0 / 60.0).unwrap();
        assert_eq!(h.frame.pose.morph_weights.len(), h.scene.nodes.len());
        assert!(h.frame.pose.morph_weights.iter().all(Vec::is_empty));
    }
}

/// A bone mask has one text form, read and written by the same code (the command line's
/// `--layer` and the viewer's mask field both parse it): `all` or nothing, `BONE`, `!BONE`,
/// spaces ignored, and every mask written back reads as itself; `!` with no bone is refused.
#[test]
fn bone_masks_read_and_write_one_syntax() {
    use skinview::character::MaskSpec;
    for (text, mask) in [
        ("", MaskSpec::All),
        ("all", MaskSpec::All),
        (" all ", MaskSpec::All),
        ("spine", MaskSpec::Subtree("spine".into())),
        ("!spine", MaskSpec::Except("spine".into())),
        (" ! l_arm ", MaskSpec::Except("l_arm".into())),
    ] {
        let parsed: MaskSpec = text.parse().unwrap();
        assert_eq!(parsed, mask, "{text:?}");
        assert_eq!(parsed.to_string().parse::<MaskSpec>().unwrap(), mask);
    }
    for bad in ["!", " ! "] {
        let e = bad.parse::<MaskSpec>().unwrap_err();
        assert!(e.contains("name a bone"), "{e}");
    }
}

/// The IK orbit and a layer's part in a cross-fade, as named values: the orbit's target lies on
/// its tilted circle (x² + z² = r² about the centre, y = z / 2, a full turn after 2π/ω), and
/// the two layers of a fade weigh 1 between them at every time.
#[test]
fn orbit_and_layer_fade_follow_their_formulas() {
    use skinview::anim::layer::CrossFade;
    use skinview::character::{LayerFade, Orbit};
    let orbit = Orbit {
        centre_m: Vec3::new(0.3, 1.3, 0.3),
        radius_m: 0.15,
        rate_rad_s: 2.0,
    };
    for i in 0..20 {
        let d = orbit.at(i as f32 * 0.17) - orbit.centre_m;
        let r = (d.x * d.x + d.z * d.z).sqrt();
        assert!(
            (r - orbit.radius_m).abs() < 1e-5 && (d.y - 0.5 * d.z).abs() < 1e-6,
            "{d}"
        );
    }
    let turn_s = std::f32::consts::TAU / orbit.rate_rad_s;
    assert!((orbit.at(turn_s) - orbit.at(0.0)).length() < 1e-5);
    let fade = CrossFade {
        start_s: 0.5,
        duration_s: 0.6,
    };
    let (out, into) = (
        LayerFade {
            fade,
            fade_in: false,
        },
        LayerFade {
            fade,
            fade_in: true,
        },
    );
    for i in 0..=20 {
        let t = i as f32 * 0.1;
        assert!((out.weight(t) + into.weight(t) - 1.0).abs() < 1e-6, "{t}");
    }
    assert_eq!((out.weight(0.0), into.weight(0.0)), (1.0, 0.0));
    assert_eq!((out.weight(2.0), into.weight(2.0)), (0.0, 1.0));
}

/// Every numbered rule of `CharacterSetup`, broken once: refused with that rule (or its own
/// error for rules 1 and 3), while the unbroken set-ups build. The split and the stage exclude
/// each other (rule 7); bone links need a native rig (rule 8).
#[test]
fn character_setup_rules() {
    use skinview::Error;
    use skinview::character::{
        CharacterSetup, CharacterSpec, FadeDesc, IkGoal, MotionRef, Orbit, SplitSpec,
    };
    let rig = skinview::builtin::humanoid_rig()
        .unwrap()
        .to_scene()
        .unwrap();
    let rule = |r: skinview::Result<()>| match r {
        Ok(()) => None,
        Err(Error::Job {
            job: "CharacterSetup",
            rule,
            ..
        }) => Some(rule),
        Err(Error::TooManyLayers { .. }) => Some(1),
        Err(Error::FadeLayers { .. }) => Some(3),
        Err(e) => panic!("expected a set-up rule, got {e}"),
    };
    let demo = CharacterSetup::humanoid_demo();
    assert_eq!(rule(demo.validate()), None);
    if let Err(e) = demo.build_rig(&rig) {
        panic!("the demo set-up failed to build: {e}");
    }
    let stage = |edit: &dyn Fn(&mut CharacterSpec)| {
        let mut s = demo.clone();
        edit(s.stage_spec_mut().unwrap());
        s
    };
    let walk = demo.stage_spec().unwrap().layers[0].clone();
    let cases: Vec<(u32, CharacterSetup)> = vec![
        (1, stage(&|s| s.layers = vec![walk.clone(); 9])),
        (2, stage(&|s| s.layers[1].weight = f32::NAN)),
        (2, stage(&|s| s.layers[1].weight = -1.0)),
        (
            3,
            stage(&|s| {
                s.fade = Some(FadeDesc {
                    from: 1,
                    to: 1,
                    fade: s.fade.unwrap().fade,
                })
            }),
        ),
        (3, stage(&|s| s.fade.as_mut().unwrap().to = 7)),
        (4, stage(&|s| s.ik[0].chain_length = 0)),
        (
            4,
            stage(&|s| s.ik[0].target_m = Vec3::new(f32::INFINITY, 0.0, 0.0)),
        ),
        (
            4,
            stage(&|s| {
                s.ik.push(IkGoal {
                    weight: -2.0,
                    ..s.ik[0].clone()
                })
            }),
        ),
        (
            5,
            stage(&|s| {
                s.orbit = Some(Orbit {
                    radius_m: -0.1,
                    ..s.orbit.unwrap()
                })
            }),
        ),
        (
            7,
            CharacterSetup {
                split: Some(SplitSpec {
                    max_bones: 16,
                    uniform_palette: true,
                    color_submeshes: false,
                }),
                ..demo.clone()
            },
        ),
        (
            6,
            CharacterSetup {
                split: Some(SplitSpec {
                    max_bones: 1,
                    uniform_palette: true,
                    color_submeshes: false,
                }),
                ..CharacterSetup::clip(Some(0))
            },
        ),
        (
            10,
            CharacterSetup {
                max_influences: Some(0),
                ..CharacterSetup::clip(Some(0))
            },
        ),
    ];
    for (want, setup) in &cases {
        assert_eq!(rule(setup.validate()), Some(*want), "{setup:?}");
        // Building checks the same rules first.
        let built = setup.build_rig(&rig).map(|_| ());
        assert_eq!(rule(built), Some(*want));
    }
    // Rule 8: bone links on a plain scene (the stage without them plays there); rule 9: a
    // clip the model does not have.
    assert_eq!(rule(demo.build(&rig.scene).map(|_| ())), Some(8));
    let unlinked = stage(&|s| s.links = false);
    assert_eq!(rule(unlinked.build(&rig.scene).map(|_| ())), None);
    let missing = CharacterSetup::clip(Some(rig.scene.animations.len()));
    assert!(matches!(
        missing.build(&rig.scene).map(|_| ()),
        Err(Error::UnknownAnimation { .. })
    ));
    // A motion by name or index is the same motion.
    let by_name = CharacterSpec::single(Some("walk".parse::<MotionRef>().unwrap()));
    let walk_index = rig.scene.find_animation("walk").unwrap();
    let by_index = CharacterSpec::single(Some(MotionRef::Index(walk_index)));
    let mut a = CharacterSetup::stage(by_name).build_rig(&rig).unwrap();
    let mut b = CharacterSetup::stage(by_index).build_rig(&rig).unwrap();
    a.update(0.4, 1.0 / 60.0).unwrap();
    b.update(0.4, 1.0 / 60.0).unwrap();
    assert_eq!(a.layers()[0].anim, walk_index);
    assert_eq!(a.outputs[0].positions, b.outputs[0].positions);
    assert_eq!("12".parse::<MotionRef>().unwrap(), MotionRef::Index(12));
    assert_eq!("12".parse::<MotionRef>().unwrap().to_string(), "12");
    assert!("".parse::<MotionRef>().is_err());
}

/// A morph weight held by hand replaces the clip's on the CPU path, to the vertex: the cube's
/// target 0 held at 1 and target 1 at 0 put every vertex at its base position plus target 0's
/// offset (in the node's space); handing them back restores the clip's weights; a target the
/// mesh does not have, or a weight that is not finite, is refused.
#[test]
fn morph_weights_held_by_hand_replace_the_clips() {
    use skinview::character::CharacterSetup;
    let scene = skinview::io::load(&crate::common::model("AnimatedMorphCube")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(1.0, 0.0).unwrap();
    let clip = c.frame.pose.morph_weights[0].clone();
    assert!(
        clip.iter().any(|&w| w > 0.05 && w < 0.95),
        "the clip mixes: {clip:?}"
    );
    c.set_morph_override(0, 0, Some(1.0)).unwrap();
    c.set_morph_override(0, 1, Some(0.0)).unwrap();
    c.update(1.0, 0.0).unwrap();
    assert_eq!(c.frame.pose.morph_weights[0], vec![1.0, 0.0]);
    let prim = &scene.meshes[0].primitives[0];
    let offsets = prim.morph_targets[0].positions.as_ref().unwrap();
    let m = c.frame.model_from_node[0];
    for (v, (p, d)) in prim.positions.iter().zip(offsets).enumerate() {
        let expected = m.transform_point3(*p + *d);
        let got = c.outputs[0].positions[v];
        assert!(
            got.distance(expected) < 1e-5,
            "vertex {v}: {got} vs {expected}"
        );
    }
    c.set_morph_override(0, 0, None).unwrap();
    c.set_morph_override(0, 1, None).unwrap();
    c.update(1.0, 0.0).unwrap();
    assert_eq!(c.frame.pose.morph_weights[0], clip);
    assert!(c.set_morph_override(0, 2, Some(0.5)).is_err());
    assert!(c.set_morph_override(0, 0, Some(f32::NAN)).is_err());
    assert!(c.set_morph_override(7, 0, Some(0.5)).is_err());
}

/// Playing to a time twice plays the same (the frame history is forgotten first): the
/// humanoid demo (incremental IK, velocity limits) at 1 s, again after playing to 1.5 s, has
/// the same pose to the bit (what `render --demo --frame-clip` relies on when it replays).
#[test]
fn playing_to_a_time_again_plays_the_same() {
    let mut c = skinview::character::Character::humanoid_demo().unwrap();
    c.play_to(1.0).unwrap();
    let first = c.frame.model_from_node.clone();
    c.play_to(1.5).unwrap();
    c.play_to(1.0).unwrap();
    assert_eq!(c.frame.model_from_node, first);
}

/// A faded-out first layer is still sampled when its clip drives morph weights (the frame's
/// weights come from the first layer): AnimatedMorphSphere's clip on two full-body layers, the
/// first faded out by 0.1 s; afterwards the frame's morph weights follow the clip, as the
/// per-channel sampler gives them afresh at each time.
#[test]
fn a_faded_out_first_layer_still_drives_morph_weights() {
    use skinview::anim::{AnimateJob, CrossFade, Pose};
    use skinview::character::{CharacterSpec, FadeDesc, LayerDesc, MaskSpec, MotionRef};
    let scene = skinview::io::load(&common::model("AnimatedMorphSphere")).unwrap();
    let layer = LayerDesc {
        motion: MotionRef::Index(0),
        mask: MaskSpec::All,
        weight: 1.0,
    };
    let spec = CharacterSpec {
        layers: vec![layer.clone(), layer],
        fade: Some(FadeDesc {
            from: 0,
            to: 1,
            fade: CrossFade {
                start_s: 0.0,
                duration_s: 0.1,
            },
        }),
        links: false,
        ..CharacterSpec::single(None)
    };
    let mut c = CharacterSetup::stage(spec).build(&scene).unwrap();
    let animation = &scene.animations[0];
    let dt = 1.0 / 60.0;
    let mut compared = 0;
    for i in 0..120 {
        let t = i as f32 * dt;
        c.update(t, dt).unwrap();
        if c.layers()[0].weight_at(t) > 0.0 || t > animation.duration_s() {
            continue;
        }
        let mut want = Pose::rest(&scene);
        AnimateJob {
            scene: &scene,
            animation: Some(animation),
            time_s: t,
            cursors: &mut vec![Default::default(); animation.channels.len()],
            pose: &mut want,
        }
        .run()
        .unwrap();
        for (node, (got, want)) in c
            .frame
            .pose
            .morph_weights
            .iter()
            .zip(&want.morph_weights)
            .enumerate()
        {
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() < 1e-6,
                    "node {node} at {t} s: {got:?} against {want:?}"
                );
            }
        }
        compared += 1;
    }
    assert!(compared > 30, "{compared} frames after the fade");
}
