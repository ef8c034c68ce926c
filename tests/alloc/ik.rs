//! CCD inverse kinematics (Weber, "Run-Time Skin Deformation", §Using Inverse Kinematics). Every
//! check compares with something the solver does not compute itself: an f64 forward-kinematics pass
//! written here, closed-form reach distances, glam's own ZYX Euler decomposition, geodesic
//! betweenness of quaternions.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use std::f32::consts::{FRAC_PI_2, PI as PI32};
use std::f64::consts::PI as PI64;

use glam::{DMat4, DQuat, DVec3, EulerRot, Quat, Vec3};
use proptest::prelude::*;
use skinview::error::Error;
use skinview::ik::{
    CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, InsideTest, JointLimits,
    from_euler_zyx,
};
use skinview::math::Trs;
use skinview::scene::{Node, RawScene, Scene, SceneBuilder};

// The counting global allocator (tests/alloc/main.rs).
use crate::common::f32s;
use crate::{allocations, set_counting};

// ---------------------------------------------------------------- scenes and f64 FK

fn node(parent: Option<usize>, src: usize, rest: Trs) -> Node {
    Node {
        name: Some(format!("j{src}")),
        source_index: src,
        parent,
        rest,
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    }
}

/// A chain of joints along +X: joint i+1 sits at `(lengths[i], 0, 0)` in joint i's frame.
/// `rots[i]` is joint i's rest rotation. The last bone's tip is `(lengths[last], 0, 0)` in the
/// last joint's frame (Weber bones). Node 0 is an unrotated "hip" above the chain when `hip`.
fn chain_scene(lengths: &[f32], rots: &[Quat], hip: bool) -> Scene {
    let mut nodes = Vec::new();
    let off = usize::from(hip);
    if hip {
        nodes.push(node(
            None,
            0,
            Trs {
                translation: Vec3::new(0.1, -0.2, 0.3),
                ..Trs::IDENTITY
            },
        ));
    }
    for i in 0..lengths.len() {
        let t = if i == 0 {
            Vec3::ZERO
        } else {
            Vec3::new(lengths[i - 1], 0.0, 0.0)
        };
        let parent = if i == 0 {
            hip.then_some(0)
        } else {
            Some(off + i - 1)
        };
        nodes.push(node(
            parent,
            off + i,
            Trs {
                translation: t,
                rotation: rots[i],
                scale: Vec3::ONE,
            },
        ));
    }
    SceneBuilder::build(RawScene {
        name: "chain".into(),
        nodes,
        ..Default::default()
    })
    .unwrap()
}

fn planar_chain(lengths: &[f32]) -> Scene {
    chain_scene(lengths, &vec![Quat::IDENTITY; lengths.len()], false)
}

fn rest_locals(scene: &Scene) -> Vec<Trs> {
    scene.nodes.iter().map(|n| n.rest).collect()
}

/// Independent f64 forward kinematics: model_from_node for every node.
fn fk64(scene: &Scene, locals: &[Trs]) -> Vec<DMat4> {
    let mut out: Vec<DMat4> = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        let t = &locals[i];
        let q = DQuat::from_xyzw(
            t.rotation.x as f64,
            t.rotation.y as f64,
            t.rotation.z as f64,
            t.rotation.w as f64,
        )
        .normalize();
        let local = DMat4::from_translation(t.translation.as_dvec3())
            * DMat4::from_quat(q)
            * DMat4::from_scale(t.scale.as_dvec3());
        out.push(match n.parent {
            Some(p) => out[p] * local,
            None => local,
        });
    }
    out
}

fn tip64(scene: &Scene, locals: &[Trs], e: &Effector) -> DVec3 {
    fk64(scene, locals)[e.end_node].transform_point3(e.tip_local.as_dvec3())
}

fn joint_pos64(scene: &Scene, locals: &[Trs], i: usize) -> DVec3 {
    fk64(scene, locals)[i].w_axis.truncate()
}

fn dq(q: Quat) -> DQuat {
    DQuat::from_xyzw(q.x as f64, q.y as f64, q.z as f64, q.w as f64)
}

/// Angle between two rotations, in f64: 2·acos|dot(a, b)|, evaluated as the equal
/// 2·atan2(|v|, |w|) of `a⁻¹·b` (acos loses precision next to identity).
fn angle64(a: Quat, b: Quat) -> f64 {
    let d = dq(a).normalize().conjugate() * dq(b).normalize();
    2.0 * d.xyz().length().atan2(d.w.abs())
}

fn settings(iterations: u32, tolerance_m: f32, mode: IkMode) -> IkSettings {
    IkSettings {
        iterations,
        tolerance_m,
        mode,
        max_angular_velocity_rad_s: None,
        dt_s: 1.0 / 60.0,
    }
}

/// A solver with its buffers, as an application would keep one.
#[derive(Default)]
struct Solver {
    output: Vec<Trs>,
    result: IkResult,
    scratch: IkScratch,
}

impl Solver {
    #[allow(clippy::too_many_arguments)]
    fn solve(
        &mut self,
        scene: &Scene,
        reference: &[Trs],
        input: &[Trs],
        previous: Option<&[Trs]>,
        participation: &[f32],
        limits: &[Option<JointLimits>],
        effectors: &[Effector],
        settings: IkSettings,
    ) -> Result<(), Error> {
        CcdJob {
            scene,
            reference,
            input,
            previous,
            participation,
            limits,
            effectors,
            settings,
            output: &mut self.output,
            result: &mut self.result,
            scratch: &mut self.scratch,
        }
        .run()
    }

    fn simple(&mut self, scene: &Scene, effectors: &[Effector], settings: IkSettings) {
        let rest = rest_locals(scene);
        self.solve(scene, &rest, &rest, None, &[], &[], effectors, settings)
            .unwrap();
    }
}

fn assert_finite(out: &[Trs]) {
    for (i, t) in out.iter().enumerate() {
        assert!(
            t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite(),
            "node {i}: {t:?}"
        );
    }
}

fn weber_effector(scene: &Scene, lengths: &[f32], target: Vec3) -> Effector {
    let end = scene.nodes.len() - 1;
    Effector {
        end_node: end,
        chain_length: lengths.len(),
        tip_local: Vec3::new(lengths[lengths.len() - 1], 0.0, 0.0),
        target_model: target,
        weight: 1.0,
    }
}

// ---------------------------------------------------------------- planar chains

fn check_reachable(lengths: &[f32], target: Vec3) {
    let scene = planar_chain(lengths);
    let eff = weber_effector(&scene, lengths, target);
    let mut s = Solver::default();
    let tol = 1e-4;
    s.simple(&scene, &[eff], settings(500, tol, IkMode::ReferenceBased));
    assert_finite(&s.output);
    assert!(s.result.reached, "{lengths:?} → {target}: {:?}", s.result);
    let tip = tip64(&scene, &s.output, &eff);
    let err = tip.distance(target.as_dvec3());
    assert!(
        err <= tol as f64 + 1e-5,
        "f64 tip {tip} is {err} from {target}"
    );
    assert!(
        (err - s.result.residual_m[0] as f64).abs() < 1e-5,
        "reported {} vs f64 {err}",
        s.result.residual_m[0]
    );
    // A planar chain with a target in its plane stays planar (every arc is about ±Z).
    for i in 0..lengths.len() {
        assert!(joint_pos64(&scene, &s.output, i).z.abs() < 1e-5);
    }
    // Bone lengths are untouched: consecutive joints keep their distances.
    for i in 1..lengths.len() {
        let d = joint_pos64(&scene, &s.output, i).distance(joint_pos64(&scene, &s.output, i - 1));
        assert!((d - lengths[i - 1] as f64).abs() < 1e-5);
    }
}

#[test]
fn two_bone_reaches_reachable_target() {
    check_reachable(&[1.0, 0.8], Vec3::new(0.9, 0.9, 0.0));
    check_reachable(&[1.0, 0.8], Vec3::new(-0.5, 0.4, 0.0));
    check_reachable(&[1.0, 0.8], Vec3::new(1.2, -1.0, 0.0));
}

#[test]
fn six_bone_reaches_reachable_target() {
    let l = [0.5, 0.4, 0.4, 0.3, 0.3, 0.2];
    check_reachable(&l, Vec3::new(1.0, 1.0, 0.0));
    check_reachable(&l, Vec3::new(-0.8, 0.6, 0.0));
    check_reachable(&l, Vec3::new(0.3, -0.2, 0.0));
}

#[test]
fn gltf_style_joint_origin_tip_is_reached() {
    // Three joints plus an end joint whose origin is the tip (tip_local = 0).
    let lengths = [0.6, 0.5, 0.4, 0.0];
    let scene = planar_chain(&lengths);
    let target = Vec3::new(0.4, 0.7, 0.5);
    let eff = Effector {
        end_node: 3,
        chain_length: 4,
        tip_local: Vec3::ZERO,
        target_model: target,
        weight: 1.0,
    };
    let mut s = Solver::default();
    s.simple(&scene, &[eff], settings(500, 1e-4, IkMode::ReferenceBased));
    assert!(s.result.reached, "{:?}", s.result);
    assert!(joint_pos64(&scene, &s.output, 3).distance(target.as_dvec3()) < 1e-4 + 1e-5);
    // The end joint's own rotation cannot move its origin: it stays at its reference.
    assert_eq!(s.output[3].rotation, Quat::IDENTITY);
}

fn check_unreachable(lengths: &[f32], target: Vec3) {
    let scene = planar_chain(lengths);
    let eff = weber_effector(&scene, lengths, target);
    let mut s = Solver::default();
    s.simple(&scene, &[eff], settings(200, 1e-4, IkMode::ReferenceBased));
    assert_finite(&s.output);
    assert!(!s.result.reached);
    let total: f64 = lengths.iter().map(|&l| l as f64).sum();
    let expected = target.as_dvec3().length() - total;
    assert!(
        (s.result.residual_m[0] as f64 - expected).abs() < 1e-3,
        "residual {} vs analytic {expected}",
        s.result.residual_m[0]
    );
    let tip = tip64(&scene, &s.output, &eff);
    assert!((tip.distance(target.as_dvec3()) - expected).abs() < 1e-3);
    // Fully stretched towards the target: joint i at the cumulative length along root→target.
    let dir = target.as_dvec3().normalize();
    let mut along = 0.0;
    for (i, &l) in lengths.iter().enumerate() {
        let p = joint_pos64(&scene, &s.output, i);
        assert!(
            p.distance(dir * along) < 2e-3,
            "joint {i} at {p}, expected {}",
            dir * along
        );
        along += l as f64;
    }
    assert!(tip.distance(dir * total) < 2e-3);
}

#[test]
fn unreachable_target_stretches_the_chain() {
    check_unreachable(&[1.0, 0.8], Vec3::new(0.5, 3.0, 0.0));
    check_unreachable(&[1.0, 0.8], Vec3::new(-2.5, -1.0, 0.7));
    check_unreachable(&[0.5, 0.4, 0.4, 0.3, 0.3, 0.2], Vec3::new(-1.0, 2.5, 0.0));
    check_unreachable(&[0.5, 0.4, 0.4, 0.3, 0.3, 0.2], Vec3::new(0.2, 0.1, -3.0));
}

#[test]
fn non_uniform_scale_in_the_chain() {
    let lengths = [0.6, 0.5, 0.4];
    let scene = planar_chain(&lengths);
    let mut input = rest_locals(&scene);
    input[0].scale = Vec3::new(1.5, 0.5, 2.0);
    input[1].scale = Vec3::new(0.7, 1.3, 1.0);
    input[1].rotation = Quat::from_rotation_z(0.4);
    // Reach in model units: ask for a target known to be reachable (a posed tip).
    let mut posed = input.clone();
    posed[0].rotation = Quat::from_euler(EulerRot::ZYX, 0.7, -0.3, 0.2);
    posed[1].rotation = Quat::from_euler(EulerRot::ZYX, -0.5, 0.4, 0.0);
    posed[2].rotation = Quat::from_euler(EulerRot::ZYX, 0.3, 0.2, 0.1);
    let probe = Effector {
        end_node: 2,
        chain_length: 3,
        tip_local: Vec3::new(0.4, 0.0, 0.0),
        target_model: Vec3::ZERO,
        weight: 1.0,
    };
    let target = tip64(&scene, &posed, &probe).as_vec3();
    let eff = Effector {
        target_model: target,
        ..probe
    };
    let mut s = Solver::default();
    let rest = rest_locals(&scene);
    s.solve(
        &scene,
        &rest,
        &input,
        None,
        &[],
        &[],
        &[eff],
        settings(1000, 1e-4, IkMode::Incremental),
    )
    .unwrap();
    assert_finite(&s.output);
    assert!(s.result.reached, "{:?}", s.result);
    assert!(tip64(&scene, &s.output, &eff).distance(target.as_dvec3()) < 1e-4 + 1e-5);
    for (o, i) in s.output.iter().zip(&input) {
        assert_eq!(o.scale, i.scale);
        assert_eq!(o.translation, i.translation);
    }
}

// ---------------------------------------------------------------- random chains

fn unit_quat(axis: [f32; 3], angle: f32) -> Quat {
    let a = Vec3::from(axis);
    let a = if a.length() > 1e-3 {
        a.normalize()
    } else {
        Vec3::Z
    };
    Quat::from_axis_angle(a, angle)
}

/// Circular distance (radians) of angle `a` outside `[lo, hi]`.
fn excess(a: f64, lo: f64, hi: f64) -> f64 {
    let wrap = |x: f64| (x + PI64).rem_euclid(2.0 * PI64) - PI64;
    if [a, a + 2.0 * PI64, a - 2.0 * PI64]
        .iter()
        .any(|&c| c >= lo && c <= hi)
    {
        0.0
    } else {
        wrap(a - lo).abs().min(wrap(a - hi).abs())
    }
}

#[derive(Debug, Clone)]
struct Case {
    lengths: Vec<f32>,
    rest: Vec<([f32; 3], f32)>,
    perturb: Vec<([f32; 3], f32)>,
    limits: Vec<Option<([f32; 3], [f32; 3])>>,
    participation: Vec<f32>,
    target: [f32; 3],
    target2: [f32; 3],
    iterations: u32,
    incremental: bool,
    velocity: Option<f32>,
}

fn axis() -> impl Strategy<Value = [f32; 3]> {
    [f32s(-1.0..1.0), f32s(-1.0..1.0), f32s(-1.0..1.0)]
}

fn limits_strategy() -> impl Strategy<Value = Option<([f32; 3], [f32; 3])>> {
    // Z and X within [-3, 3], Y within [-1.4, 1.4] (away from gimbal lock, so glam's
    // decomposition in the check is well conditioned); widths from 0 (locked) to wide.
    let axis_range = |m: f32| {
        (
            -m..m,
            prop_oneof![Just(0.0f32), f32s(0.0..0.05), f32s(0.0..2.0 * m)],
        )
            .prop_map(move |(lo, w)| (lo, (lo + w).min(m)))
    };
    prop_oneof![
        1 => Just(None),
        3 => (axis_range(3.0), axis_range(1.4), axis_range(3.0)).prop_map(|(z, y, x)| Some(([z.0, y.0, x.0], [z.1, y.1, x.1]))),
    ]
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (2usize..=8).prop_flat_map(|n| {
        (
            prop::collection::vec(f32s(0.05..1.0), n),
            prop::collection::vec((axis(), f32s(-3.1..3.1)), n),
            prop::collection::vec((axis(), f32s(-1.0..1.0)), n),
            prop::collection::vec(limits_strategy(), n),
            prop::collection::vec(
                prop_oneof![2 => Just(1.0f32), 1 => Just(0.0f32), 1 => f32s(0.0..1.0)],
                n,
            ),
            [f32s(-3.0..3.0), f32s(-3.0..3.0), f32s(-3.0..3.0)],
            [f32s(-3.0..3.0), f32s(-3.0..3.0), f32s(-3.0..3.0)],
            1u32..20,
            any::<bool>(),
            prop_oneof![Just(None), (f32s(0.5..20.0)).prop_map(Some)],
        )
            .prop_map(
                |(
                    lengths,
                    rest,
                    perturb,
                    limits,
                    participation,
                    target,
                    target2,
                    iterations,
                    incremental,
                    velocity,
                )| Case {
                    lengths,
                    rest,
                    perturb,
                    limits,
                    participation,
                    target,
                    target2,
                    iterations,
                    incremental,
                    velocity,
                },
            )
    })
}

fn check_case(c: &Case) -> Result<(), TestCaseError> {
    let n = c.lengths.len();
    let rots: Vec<Quat> = c.rest.iter().map(|&(a, t)| unit_quat(a, t)).collect();
    // With a hip node above the chain (not part of it).
    let scene = chain_scene(&c.lengths, &rots, true);
    let reference = rest_locals(&scene);
    let mut input = reference.clone();
    for i in 0..n {
        let (a, t) = c.perturb[i];
        input[i + 1].rotation = (reference[i + 1].rotation * unit_quat(a, t)).normalize();
    }
    input[0].rotation = Quat::from_rotation_y(0.3);
    let mut participation = vec![1.0; n + 1];
    participation[1..].copy_from_slice(&c.participation);
    let mut limits: Vec<Option<JointLimits>> = vec![None; n + 1];
    for i in 0..n {
        limits[i + 1] = c.limits[i].map(|(lo, hi)| JointLimits::new(lo, hi));
    }
    let eff = Effector {
        end_node: n,
        chain_length: n,
        tip_local: Vec3::new(c.lengths[n - 1], 0.0, 0.0),
        target_model: Vec3::from(c.target),
        weight: 1.0,
    };
    let mode = if c.incremental {
        IkMode::Incremental
    } else {
        IkMode::ReferenceBased
    };
    let st = IkSettings {
        iterations: c.iterations,
        tolerance_m: 1e-4,
        mode,
        max_angular_velocity_rad_s: c.velocity,
        dt_s: 1.0 / 30.0,
    };

    // Frame 1, then frame 2 with a moved target, `previous` = frame 1 (incremental start and
    // velocity cap in play).
    let mut s = Solver::default();
    s.solve(
        &scene,
        &reference,
        &input,
        None,
        &participation,
        &limits,
        &[eff],
        st,
    )
    .unwrap();
    let frame1 = s.output.clone();
    let eff2 = Effector {
        target_model: Vec3::from(c.target2),
        ..eff
    };
    s.solve(
        &scene,
        &reference,
        &input,
        Some(&frame1),
        &participation,
        &limits,
        &[eff2],
        st,
    )
    .unwrap();
    for (out, e, prev) in [(&frame1, &eff, None), (&s.output, &eff2, Some(&frame1))] {
        for (i, t) in out.iter().enumerate() {
            prop_assert!(
                t.rotation.is_finite() && t.translation.is_finite() && t.scale.is_finite(),
                "node {i} {t:?}"
            );
            prop_assert_eq!(t.translation, input[i].translation);
            prop_assert_eq!(t.scale, input[i].scale);
        }
        // The hip is not in the chain.
        prop_assert_eq!(out[0], input[0]);
        for i in 1..=n {
            let q = out[i].rotation;
            if participation[i] == 0.0 {
                prop_assert_eq!(q, input[i].rotation, "joint {} has participation 0", i);
                continue;
            }
            prop_assert!((q.length() - 1.0).abs() < 1e-5);
            if let Some(l) = limits[i] {
                let rel = (reference[i].rotation.normalize().conjugate() * q).normalize();
                let (z, y, x) = rel.to_euler(EulerRot::ZYX);
                for (k, a) in [z, y, x].into_iter().enumerate() {
                    let ex = excess(a as f64, l.min_rad[k] as f64, l.max_rad[k] as f64);
                    prop_assert!(
                        ex <= 1e-4,
                        "joint {} axis {} angle {} outside [{}, {}] by {}",
                        i,
                        k,
                        a,
                        l.min_rad[k],
                        l.max_rad[k],
                        ex
                    );
                }
            }
            if let (Some(p), Some(v), None) = (prev, c.velocity, limits[i]) {
                let step = angle64(p[i].rotation, q);
                prop_assert!(
                    step <= (v * st.dt_s) as f64 + 1e-5,
                    "joint {} turned {} > {}",
                    i,
                    step,
                    v * st.dt_s
                );
            }
        }
        let r = s.result.residual_m[0];
        prop_assert!(r.is_finite());
        if prev.is_some() {
            let tip = tip64(&scene, out, e);
            prop_assert!(
                (tip.distance(e.target_model.as_dvec3()) - r as f64).abs() < 1e-4,
                "reported {} vs f64 {}",
                r,
                tip.distance(e.target_model.as_dvec3())
            );
            prop_assert_eq!(s.result.reached, r <= 1e-4);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_chains_respect_limits_and_participation(c in case_strategy()) {
        check_case(&c)?;
    }
}

// ---------------------------------------------------------------- velocity limiting

#[test]
fn velocity_limit_caps_per_frame_rotation() {
    let lengths = [0.5, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let targets = [
        Vec3::new(0.2, 0.9, 0.3),
        Vec3::new(-0.6, -0.5, 0.2),
        Vec3::new(0.9, 0.1, -0.4),
        Vec3::new(-0.1, 0.3, 0.8),
    ];
    let max = 6.0; // rad/s
    let dt = 1.0 / 60.0;
    for mode in [IkMode::ReferenceBased, IkMode::Incremental] {
        let st = IkSettings {
            iterations: 30,
            tolerance_m: 1e-4,
            mode,
            max_angular_velocity_rad_s: Some(max),
            dt_s: dt,
        };
        let mut s = Solver::default();
        let mut previous = rest.clone();
        let mut capped = 0;
        let mut reached_at_end = 0;
        for frame in 0..160 {
            let target = targets[(frame / 40) % targets.len()];
            let eff = weber_effector(&scene, &lengths, target);
            s.solve(&scene, &rest, &rest, Some(&previous), &[], &[], &[eff], st)
                .unwrap();
            assert_finite(&s.output);
            for (j, (p, o)) in previous.iter().zip(&s.output).enumerate() {
                let step = angle64(p.rotation, o.rotation);
                assert!(
                    step <= (max * dt) as f64 + 1e-5,
                    "{mode:?} frame {frame} joint {j}: {step} rad > {}",
                    max * dt
                );
                if step > (max * dt) as f64 - 1e-4 {
                    capped += 1;
                }
            }
            if frame % 40 == 39 && s.result.reached {
                reached_at_end += 1;
            }
            previous.clone_from(&s.output);
        }
        assert!(capped > 10, "{mode:?}: the cap never bit");
        // Each jump is spread over frames, but the targets are still reached.
        assert_eq!(reached_at_end, 4, "{mode:?}");
    }
}

// ---------------------------------------------------------------- several effectors

/// Two chains with a node between them that neither solves: A turns upper and lower, B turns
/// the finger below the wrist, which hangs under A's lower bone. When A's joints turn, the
/// wrist and so the finger move: the residuals (and B's next arc) must see that, checked
/// against an independent f64 forward kinematics of the returned pose.
#[test]
fn chains_joined_through_an_unsolved_node_stay_current() {
    // root (0) → upper (1) → lower (2) → wrist (3) → finger (4), 0.3 m bones along +X.
    let lengths = [0.3f32; 5];
    let scene = planar_chain(&lengths);
    let tip = Vec3::new(0.3, 0.0, 0.0);
    let effectors = [
        Effector {
            end_node: 2,
            chain_length: 2,
            tip_local: tip,
            target_model: Vec3::new(0.5, 0.4, 0.1),
            weight: 1.0,
        },
        Effector {
            end_node: 4,
            chain_length: 1,
            tip_local: tip,
            target_model: Vec3::new(0.2, 0.9, -0.2),
            weight: 1.0,
        },
    ];
    for iterations in [1, 2, 10] {
        let mut s = Solver::default();
        s.simple(
            &scene,
            &effectors,
            settings(iterations, 1e-4, IkMode::ReferenceBased),
        );
        assert_finite(&s.output);
        let mut all = true;
        for (k, e) in effectors.iter().enumerate() {
            let true_residual = tip64(&scene, &s.output, e).distance(e.target_model.as_dvec3());
            assert!(
                (s.result.residual_m[k] as f64 - true_residual).abs() < 1e-5,
                "{iterations} sweeps, effector {k}: reported {} but the pose gives {true_residual}",
                s.result.residual_m[k]
            );
            all &= true_residual <= 1e-4 + 1e-6;
        }
        assert_eq!(s.result.reached, all, "{iterations} sweeps");
    }
}

/// Effector weights are relative: scaling them all by any positive factor, tiny or huge,
/// gives the same pose, bit for bit.
#[test]
fn effector_weights_count_only_by_their_ratios() {
    let scene = planar_chain(&[0.4, 0.3, 0.2]);
    let solve = |wa: f32, wb: f32| {
        let effectors = [
            Effector {
                end_node: 2,
                chain_length: 3,
                tip_local: Vec3::new(0.2, 0.0, 0.0),
                target_model: Vec3::new(0.3, 0.5, 0.2),
                weight: wa,
            },
            Effector {
                end_node: 2,
                chain_length: 3,
                tip_local: Vec3::new(0.2, 0.05, 0.0),
                target_model: Vec3::new(0.6, 0.1, -0.3),
                weight: wb,
            },
        ];
        let mut s = Solver::default();
        s.simple(
            &scene,
            &effectors,
            settings(6, 1e-5, IkMode::ReferenceBased),
        );
        s.output
    };
    let unit = solve(1.0, 3.0);
    let rest = rest_locals(&scene);
    assert!(
        unit.iter()
            .zip(&rest)
            .any(|(a, b)| a.rotation != b.rotation),
        "it turned"
    );
    for scale in [1e-13f32, 1e-3, 7.0, 1e20] {
        assert_eq!(solve(scale, 3.0 * scale), unit, "weights scaled by {scale}");
    }
}

#[test]
fn two_effectors_blend_shared_joint_between_single_solutions() {
    // Torso (0) with two arms (1, 2); both chains contain the torso.
    let nodes = vec![
        node(None, 0, Trs::IDENTITY),
        node(
            Some(0),
            1,
            Trs {
                translation: Vec3::new(0.3, 1.0, 0.0),
                rotation: Quat::from_rotation_z(0.2),
                ..Trs::IDENTITY
            },
        ),
        node(
            Some(0),
            2,
            Trs {
                translation: Vec3::new(-0.3, 1.0, 0.0),
                rotation: Quat::from_rotation_z(-0.1),
                ..Trs::IDENTITY
            },
        ),
    ];
    let scene = SceneBuilder::build(RawScene {
        name: "torso".into(),
        nodes,
        ..Default::default()
    })
    .unwrap();
    let rest = rest_locals(&scene);
    let arm = |end: usize, tip: Vec3, target: Vec3, weight: f32| Effector {
        end_node: end,
        chain_length: 2,
        tip_local: tip,
        target_model: target,
        weight,
    };
    let solve = |wa: f32| {
        let effs = [
            arm(1, Vec3::new(0.8, 0.0, 0.0), Vec3::new(1.2, 0.2, 0.6), wa),
            arm(
                2,
                Vec3::new(-0.8, 0.0, 0.0),
                Vec3::new(-0.4, 1.6, -0.5),
                1.0 - wa,
            ),
        ];
        let mut s = Solver::default();
        s.solve(
            &scene,
            &rest,
            &rest,
            None,
            &[],
            &[],
            &effs,
            settings(1, 0.0, IkMode::ReferenceBased),
        )
        .unwrap();
        s.output
    };
    let only_b = solve(0.0);
    let only_a = solve(1.0);
    let (qa, qb) = (only_a[0].rotation, only_b[0].rotation);
    let ab = angle64(qa, qb);
    assert!(
        ab > 0.2,
        "the two single-effector solutions should differ ({ab})"
    );
    let mut last = f64::INFINITY;
    for k in 0..=10 {
        let w = k as f32 / 10.0;
        let out = solve(w);
        let q = out[0].rotation;
        let (da, db) = (angle64(q, qa), angle64(q, qb));
        assert!((da + db - ab).abs() < 1e-4, "w {w}: {da} + {db} != {ab}");
        assert!(
            da < last || k == 0,
            "not monotone at w {w}: {da} after {last}"
        );
        last = da;
        // Each arm's own joint (only in its chain) turns as in its single solve, when weighted.
        if w > 0.0 {
            assert!(angle64(out[1].rotation, only_a[1].rotation) < 1e-6);
        }
        if w < 1.0 {
            assert!(angle64(out[2].rotation, only_b[2].rotation) < 1e-6);
        }
    }
    assert!(last < 1e-6);
}

// ---------------------------------------------------------------- incremental vs reference

#[test]
fn incremental_follows_a_moving_target_smoothly_and_converges() {
    let lengths = [0.5, 0.4, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let st = settings(1, 1e-3, IkMode::Incremental);
    let mut s = Solver::default();
    let mut previous = rest.clone();
    let target_at = |f: usize| {
        let t = (f.min(100)) as f32 / 100.0;
        Vec3::new(1.0 - 0.4 * t, 0.3 + 0.8 * t, 0.2 * (t * 3.0).sin())
    };
    let mut residuals = Vec::new();
    for frame in 0..400 {
        let eff = weber_effector(&scene, &lengths, target_at(frame));
        s.solve(&scene, &rest, &rest, Some(&previous), &[], &[], &[eff], st)
            .unwrap();
        assert_finite(&s.output);
        assert!(s.result.iterations_used <= 1);
        if frame > 0 {
            for (j, (p, o)) in previous.iter().zip(&s.output).enumerate() {
                let step = angle64(p.rotation, o.rotation);
                assert!(
                    step < 10f64.to_radians(),
                    "frame {frame} joint {j} jumped {step} rad"
                );
            }
        }
        residuals.push(s.result.residual_m[0]);
        previous.clone_from(&s.output);
    }
    // Static target from frame 100 on: one iteration per frame converges over frames.
    assert!(s.result.reached, "final residual {}", residuals[399]);
    assert!(residuals[399] < residuals[100]);
    let tip = tip64(
        &scene,
        &s.output,
        &weber_effector(&scene, &lengths, target_at(400)),
    );
    assert!(tip.distance(target_at(400).as_dvec3()) < 1e-3 + 1e-5);
}

/// Largest circular distance (radians) of `q`'s ZYX angles relative to `reference` outside
/// `limits` (glam's decomposition, f64 distances).
fn limit_excess(reference: Quat, q: Quat, l: &JointLimits) -> f64 {
    let rel = (reference.normalize().conjugate() * q).normalize();
    let (z, y, x) = rel.to_euler(EulerRot::ZYX);
    [z, y, x]
        .into_iter()
        .enumerate()
        .map(|(k, a)| excess(a as f64, l.min_rad[k] as f64, l.max_rad[k] as f64))
        .fold(0.0, f64::max)
}

/// An incremental start equal to what the solver returned last frame is taken as it is (it
/// was clamped then); any change to the limits, the reference or the start itself clamps it
/// again. Every frame after the first has a tolerance past the chain's reach (no sweep runs),
/// so the output is the start rotations exactly as the set-up left them.
#[test]
fn incremental_start_is_clamped_again_unless_it_is_the_last_result() {
    let lengths = [0.5, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let n = lengths.len();
    let wide = JointLimits::symmetric([1.2, 0.3, 0.3]);
    let limits_wide = vec![Some(wide); n];
    // Frame 0: a target that bends every joint against its Z bound.
    let eff0 = weber_effector(&scene, &lengths, Vec3::new(-0.2, 0.3, 0.0));
    let mut s = Solver::default();
    let st = settings(20, 1e-4, IkMode::Incremental);
    s.solve(
        &scene,
        &rest,
        &rest,
        Some(&rest),
        &[],
        &limits_wide,
        &[eff0],
        st,
    )
    .unwrap();
    let frame0 = s.output.clone();
    for (i, t) in frame0.iter().enumerate() {
        assert!(
            limit_excess(rest[i].rotation, t.rotation, &wide) <= 1e-5,
            "joint {i}"
        );
    }
    let bent = (0..n)
        .filter(|&i| angle64(frame0[i].rotation, rest[i].rotation) > 0.5)
        .count();
    assert!(bent >= 2, "frame 0 should bend the chain: {frame0:?}");
    let relaxed = settings(20, 10.0, IkMode::Incremental);
    // One frame with the tolerance past reach: its output and sweeps.
    let mut frame = |reference: &[Trs], previous: &[Trs], limits: &[Option<JointLimits>]| {
        s.solve(
            &scene,
            reference,
            &rest,
            Some(previous),
            &[],
            limits,
            &[eff0],
            relaxed,
        )
        .unwrap();
        assert_eq!(s.result.iterations_used, 0);
        s.output.clone()
    };
    let worst = |reference: &[Trs], out: &[Trs], l: &JointLimits| {
        (0..n)
            .map(|i| limit_excess(reference[i].rotation, out[i].rotation, l))
            .fold(0.0, f64::max)
    };
    // 1. Nothing changed: the last result comes back bit for bit.
    assert_eq!(frame(&rest, &frame0, &limits_wide), frame0);
    // 2. Tighter limits: the same start is clamped into them.
    let tight = JointLimits::symmetric([0.4, 0.3, 0.3]);
    let limits_tight = vec![Some(tight); n];
    let frame2 = frame(&rest, &frame0, &limits_tight);
    assert!(worst(&rest, &frame2, &tight) <= 1e-5, "{frame2:?}");
    assert_ne!(frame2, frame0);
    // 3. A new reference (limits are relative to it): clamped about the new reference.
    let mut turned = rest.clone();
    for t in &mut turned {
        t.rotation = Quat::from_rotation_z(-0.6) * t.rotation;
    }
    let mut moved = frame(&turned, &frame2, &limits_tight);
    assert!(worst(&turned, &moved, &tight) <= 1e-5, "{moved:?}");
    // 4. A start that is not the last result (the caller changed it): clamped.
    moved[1].rotation = Quat::from_rotation_z(1.5);
    let frame4 = frame(&turned, &moved, &limits_tight);
    assert!(worst(&turned, &frame4, &tight) <= 1e-5, "{frame4:?}");
    // 5. Limits taken away (the start stays outside the box), then given back: the unlimited
    // result is clamped again.
    let frame5 = frame(&turned, &moved, &vec![None; n]);
    assert!(worst(&turned, &frame5, &tight) > 0.1, "{frame5:?}");
    let frame6 = frame(&turned, &frame5, &limits_tight);
    assert!(worst(&turned, &frame6, &tight) <= 1e-5, "{frame6:?}");
}

#[test]
fn reference_based_is_identical_every_frame_for_a_static_target() {
    let lengths = [0.5, 0.4, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let eff = weber_effector(&scene, &lengths, Vec3::new(0.3, 0.8, 0.4));
    let mut s = Solver::default();
    let mut first: Option<Vec<Trs>> = None;
    let mut previous = rest.clone();
    for _ in 0..20 {
        s.solve(
            &scene,
            &rest,
            &rest,
            Some(&previous),
            &[],
            &[],
            &[eff],
            settings(3, 1e-4, IkMode::ReferenceBased),
        )
        .unwrap();
        match &first {
            None => first = Some(s.output.clone()),
            Some(f) => assert_eq!(f, &s.output),
        }
        previous.clone_from(&s.output);
    }
    // Whereas incremental keeps improving on the previous frame.
    let mut inc = Solver::default();
    let mut previous = rest.clone();
    let mut r = Vec::new();
    for _ in 0..3 {
        inc.solve(
            &scene,
            &rest,
            &rest,
            Some(&previous),
            &[],
            &[],
            &[eff],
            settings(3, 1e-4, IkMode::Incremental),
        )
        .unwrap();
        r.push(inc.result.residual_m[0]);
        previous.clone_from(&inc.output);
    }
    assert!(r[1] < r[0] || inc.result.reached);
}

// ---------------------------------------------------------------- degenerate inputs

#[test]
fn target_at_the_chain_root() {
    for lengths in [
        vec![1.0, 0.8],
        vec![0.5, 0.5],
        vec![0.5, 0.4, 0.4, 0.3, 0.3, 0.2],
    ] {
        let scene = planar_chain(&lengths);
        let eff = weber_effector(&scene, &lengths, Vec3::ZERO);
        let mut s = Solver::default();
        s.simple(&scene, &[eff], settings(50, 1e-4, IkMode::ReferenceBased));
        assert_finite(&s.output);
        let err = tip64(&scene, &s.output, &eff).length();
        assert!((err - s.result.residual_m[0] as f64).abs() < 1e-5);
        // The closest a chain can fold its tip to its root: the longest bone minus the rest.
        let longest = lengths.iter().cloned().fold(0.0f32, f32::max) as f64;
        let others: f64 = lengths.iter().map(|&l| l as f64).sum::<f64>() - longest;
        assert!(err >= (longest - others).max(0.0) - 1e-5);
    }
}

#[test]
fn zero_length_bones() {
    // Joint 1 sits on joint 0 (zero-length bone) and the last bone has zero length too.
    let lengths = [0.0, 0.6, 0.5, 0.0];
    let scene = planar_chain(&lengths);
    let target = Vec3::new(0.3, 0.6, 0.2);
    let eff = weber_effector(&scene, &lengths, target);
    let mut s = Solver::default();
    s.simple(&scene, &[eff], settings(300, 1e-4, IkMode::ReferenceBased));
    assert_finite(&s.output);
    assert!(s.result.reached, "{:?}", s.result);
    assert!(tip64(&scene, &s.output, &eff).distance(target.as_dvec3()) < 1e-4 + 1e-5);
    // Every bone zero-length: nothing can move, nothing becomes NaN.
    let scene = planar_chain(&[0.0, 0.0, 0.0]);
    let eff = weber_effector(&scene, &[0.0, 0.0, 0.0], target);
    s.simple(&scene, &[eff], settings(10, 1e-4, IkMode::ReferenceBased));
    assert_finite(&s.output);
    assert!(!s.result.reached);
    assert!((s.result.residual_m[0] - target.length()).abs() < 1e-6);
}

#[test]
fn zero_scale_parent_does_not_nan() {
    let lengths = [0.5, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let mut input = rest.clone();
    input[1].scale = Vec3::ZERO;
    let eff = weber_effector(&scene, &lengths, Vec3::new(0.2, 0.5, 0.1));
    let mut s = Solver::default();
    s.solve(
        &scene,
        &rest,
        &input,
        None,
        &[],
        &[],
        &[eff],
        settings(20, 1e-4, IkMode::ReferenceBased),
    )
    .unwrap();
    assert_finite(&s.output);
    assert!(s.result.residual_m[0].is_finite());
}

fn rule_of(e: Error) -> u32 {
    match e {
        Error::Job {
            job: "CcdJob",
            rule,
            ..
        } => rule,
        other => panic!("unexpected error {other}"),
    }
}

#[test]
fn invalid_inputs_are_validate_errors() {
    let lengths = [0.5, 0.4, 0.3];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let good = weber_effector(&scene, &lengths, Vec3::new(0.2, 0.5, 0.1));
    let st = settings(10, 1e-4, IkMode::ReferenceBased);
    let mut s = Solver::default();
    let mut run = |effs: &[Effector],
                   st: IkSettings,
                   input: &[Trs],
                   part: &[f32],
                   lim: &[Option<JointLimits>]| {
        s.solve(&scene, &rest, input, None, part, lim, effs, st)
    };

    let nan_target = Effector {
        target_model: Vec3::new(f32::NAN, 0.0, 0.0),
        ..good
    };
    assert_eq!(
        rule_of(run(&[nan_target], st, &rest, &[], &[]).unwrap_err()),
        8
    );
    let inf_weight = Effector {
        weight: f32::INFINITY,
        ..good
    };
    assert_eq!(
        rule_of(run(&[inf_weight], st, &rest, &[], &[]).unwrap_err()),
        8
    );
    let too_long = Effector {
        chain_length: 4,
        ..good
    };
    assert_eq!(
        rule_of(run(&[too_long], st, &rest, &[], &[]).unwrap_err()),
        6
    );
    let empty = Effector {
        chain_length: 0,
        ..good
    };
    assert_eq!(rule_of(run(&[empty], st, &rest, &[], &[]).unwrap_err()), 6);
    let out_of_range = Effector {
        end_node: 9,
        ..good
    };
    assert_eq!(
        rule_of(run(&[out_of_range], st, &rest, &[], &[]).unwrap_err()),
        5
    );
    assert_eq!(
        rule_of(
            run(
                &[good],
                settings(0, 1e-4, IkMode::ReferenceBased),
                &rest,
                &[],
                &[]
            )
            .unwrap_err()
        ),
        9
    );
    assert_eq!(
        rule_of(run(&[good], IkSettings { dt_s: 0.0, ..st }, &rest, &[], &[]).unwrap_err()),
        9
    );
    assert_eq!(
        rule_of(run(&[good], st, &rest[..2], &[], &[]).unwrap_err()),
        1
    );
    assert_eq!(
        rule_of(run(&[good], st, &rest, &[1.0, 2.0, 1.0], &[]).unwrap_err()),
        3
    );
    let bad_limits = [
        None,
        Some(JointLimits::new([0.1, 0.0, 0.0], [-0.1, 0.0, 0.0])),
        None,
    ];
    assert_eq!(
        rule_of(run(&[good], st, &rest, &[], &bad_limits).unwrap_err()),
        4
    );
    // Only the chains' weights and limits are read, so only theirs are checked: a chain of
    // the last two joints ignores the first joint's, and still refuses its own.
    let short = Effector {
        chain_length: 2,
        ..good
    };
    let bad_first = [bad_limits[1], None, None];
    assert!(run(&[short], st, &rest, &[2.0, 1.0, 1.0], &bad_first).is_ok());
    assert_eq!(
        rule_of(run(&[short], st, &rest, &[1.0, 1.0, 2.0], &[]).unwrap_err()),
        3
    );
    let bad_last = [None, None, bad_limits[1]];
    assert_eq!(
        rule_of(run(&[short], st, &rest, &[], &bad_last).unwrap_err()),
        4
    );
    let mut nan_input = rest.clone();
    nan_input[0].rotation = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
    assert_eq!(
        rule_of(run(&[good], st, &nan_input, &[], &[]).unwrap_err()),
        10
    );

    // A matrix node cannot rotate.
    let mut raw_nodes = scene.nodes.clone();
    raw_nodes[1].matrix = Some(glam::Mat4::from_translation(Vec3::new(0.5, 0.0, 0.0)));
    let mscene = SceneBuilder::build(RawScene {
        name: "m".into(),
        nodes: raw_nodes,
        ..Default::default()
    })
    .unwrap();
    let mut s2 = Solver::default();
    let e = s2
        .solve(&mscene, &rest, &rest, None, &[], &[], &[good], st)
        .unwrap_err();
    assert_eq!(rule_of(e), 7);
    // …but a chain that stops below it is fine.
    s2.solve(
        &mscene,
        &rest,
        &rest,
        None,
        &[],
        &[],
        &[Effector {
            chain_length: 1,
            ..good
        }],
        st,
    )
    .unwrap();
}

#[test]
fn no_effectors_copies_the_input() {
    let scene = planar_chain(&[0.5, 0.4]);
    let mut s = Solver::default();
    let mut input = rest_locals(&scene);
    input[1].rotation = Quat::from_rotation_x(0.3);
    let rest = rest_locals(&scene);
    s.solve(
        &scene,
        &rest,
        &input,
        None,
        &[],
        &[],
        &[],
        settings(5, 1e-4, IkMode::ReferenceBased),
    )
    .unwrap();
    assert_eq!(s.output, input);
    assert!(s.result.reached && s.result.residual_m.is_empty() && s.result.iterations_used == 0);
    // A weight-0 effector is switched off: input kept, residual still reported.
    let off = Effector {
        end_node: 1,
        chain_length: 2,
        tip_local: Vec3::new(0.4, 0.0, 0.0),
        target_model: Vec3::new(0.0, 3.0, 0.0),
        weight: 0.0,
    };
    s.solve(
        &scene,
        &rest,
        &input,
        None,
        &[],
        &[],
        &[off],
        settings(5, 1e-4, IkMode::ReferenceBased),
    )
    .unwrap();
    assert_eq!(s.output, input);
    assert!(s.result.reached);
    let expected = tip64(&scene, &input, &off).distance(off.target_model.as_dvec3());
    assert!((s.result.residual_m[0] as f64 - expected).abs() < 1e-5);
}

#[test]
fn warm_solver_does_not_allocate() {
    let lengths = [0.5, 0.4, 0.4, 0.3, 0.3, 0.2];
    let scene = planar_chain(&lengths);
    let rest = rest_locals(&scene);
    let limits = vec![Some(JointLimits::symmetric([1.0, 0.8, 0.2])); lengths.len()];
    let participation = vec![0.8; lengths.len()];
    let st = IkSettings {
        iterations: 10,
        tolerance_m: 1e-4,
        mode: IkMode::Incremental,
        max_angular_velocity_rad_s: Some(4.0),
        dt_s: 1.0 / 60.0,
    };
    let mut s = Solver::default();
    let mut previous = rest.clone();
    for frame in 0..50 {
        let t = frame as f32 * 0.1;
        let effs = [weber_effector(
            &scene,
            &lengths,
            Vec3::new(0.8 + 0.3 * t.cos(), 0.8 + 0.3 * t.sin(), 0.2),
        )];
        let before = allocations();
        set_counting(frame > 0);
        s.solve(
            &scene,
            &rest,
            &rest,
            Some(&previous),
            &participation,
            &limits,
            &effs,
            st,
        )
        .unwrap();
        set_counting(false);
        assert_eq!(allocations(), before, "frame {frame} allocated");
        previous.copy_from_slice(&s.output);
    }
}

// ---------------------------------------------------------------- joint limits alone

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any rotation (gimbal-locked ones included) clamps to a finite rotation whose ZYX angles,
    /// decomposed by glam, lie in the box; clamping again changes nothing (a projection).
    #[test]
    fn clamp_lands_in_box_and_is_idempotent(
        euler in [-PI32..PI32, -FRAC_PI_2..FRAC_PI_2, -PI32..PI32],
        gimbal in prop_oneof![3 => Just(0.0f32), 1 => Just(1.0f32), 1 => Just(-1.0f32)],
        lim in limits_strategy(),
    ) {
        let y0 = if gimbal == 0.0 { euler[1] } else { gimbal * FRAC_PI_2 };
        let q = from_euler_zyx([euler[0], y0, euler[2]]);
        let Some((lo, hi)) = lim else { return Ok(()) };
        let l = JointLimits::new(lo, hi);
        let c = l.clamp_relative(q);
        prop_assert!(c.is_finite() && (c.length() - 1.0).abs() < 1e-5);
        let (z, y, x) = c.to_euler(EulerRot::ZYX);
        for (k, a) in [z, y, x].into_iter().enumerate() {
            let ex = excess(a as f64, lo[k] as f64, hi[k] as f64);
            prop_assert!(ex <= 1e-4, "axis {} angle {} outside [{}, {}] by {}", k, a, lo[k], hi[k], ex);
        }
        let cc = l.clamp_relative(c);
        prop_assert!(angle64(c, cc) < 1e-4, "clamp moved an in-box rotation by {}", angle64(c, cc));
        // Inside the box already: untouched.
        if l.contains_euler([euler[0], y0, euler[2]], 0.0) && gimbal == 0.0 {
            prop_assert_eq!(l.clamp_relative(q), q);
        }
    }
}

// ---------------------------------------------------------------- the clamp's inside test

/// Limits for the inside test: bounds anywhere in ±(2π + 0.5) (beyond what the test may use),
/// Y ranges past ±π/2 (the other Euler triple), widths from 0 to past a full turn.
fn wide_limits_strategy() -> impl Strategy<Value = JointLimits> {
    let axis = (
        -2.0 * PI32 - 0.5..2.0 * PI32 + 0.5,
        prop_oneof![Just(0.0f32), f32s(0.0..0.05), f32s(0.0..7.0)],
    )
        .prop_map(|(lo, w)| (lo, lo + w));
    (axis.clone(), axis.clone(), axis)
        .prop_map(|(z, y, x)| JointLimits::new([z.0, y.0, x.0], [z.1, y.1, x.1]))
}

/// A rotation near the box: each angle at a bound, inside or outside by up to `eps`, or
/// anywhere; sometimes at gimbal lock.
fn near_box_rotation(l: &JointLimits, pick: [u8; 3], t: [f32; 3], eps: f32) -> Quat {
    let a: [f32; 3] = std::array::from_fn(|k| match pick[k] % 4 {
        0 => l.min_rad[k] + eps * (2.0 * t[k] - 1.0),
        1 => l.max_rad[k] + eps * (2.0 * t[k] - 1.0),
        2 => l.min_rad[k] + t[k] * (l.max_rad[k] - l.min_rad[k]),
        _ => (2.0 * t[k] - 1.0) * PI32,
    });
    from_euler_zyx(a)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Sound: whatever the trig-free test passes, the full clamp returns unchanged (bit for
    /// bit), and `clamp_tested` equals `clamp` for any rotation and reference.
    #[test]
    fn inside_test_passes_only_what_the_clamp_keeps(
        l in wide_limits_strategy(),
        pick in [any::<u8>(), any::<u8>(), any::<u8>()],
        t in [f32s(0.0..1.0), f32s(0.0..1.0), f32s(0.0..1.0)],
        eps in prop_oneof![Just(0.0f32), f32s(1e-7..1e-4), f32s(1e-4..0.1)],
        reference in [-PI32..PI32, -FRAC_PI_2..FRAC_PI_2, -PI32..PI32],
    ) {
        let test = InsideTest::new(&l);
        let q = near_box_rotation(&l, pick, t, eps);
        if test.clearly_contains(q) {
            prop_assert_eq!(l.clamp_relative(q), q, "passed but clamped: {:?}", l);
        }
        let q_ref = from_euler_zyx(reference);
        let q_local = q_ref * q;
        prop_assert_eq!(l.clamp_tested(&test, q_ref, q_local), l.clamp(q_ref, q_local));
    }

    /// Useful: a rotation inside the box by 0.01 rad on every axis, away from gimbal lock,
    /// passes, whether the decomposition finds it in its first triple or only in the other
    /// one (a Y range past ±π/2, as at an elbow).
    #[test]
    fn inside_test_passes_rotations_well_inside(
        lo in [f32s(-3.0..3.0), f32s(-3.0..3.0), f32s(-3.0..3.0)],
        w in [f32s(0.05..3.0), f32s(0.05..3.0), f32s(0.05..3.0)],
        t in [f32s(0.0..1.0), f32s(0.0..1.0), f32s(0.0..1.0)],
    ) {
        const IN: f32 = 0.01;
        let hi: [f32; 3] = std::array::from_fn(|k| (lo[k] + w[k]).min(PI32));
        let lo: [f32; 3] = std::array::from_fn(|k| lo[k].max(-PI32));
        prop_assume!((0..3).all(|k| hi[k] - lo[k] > 3.0 * IN));
        let l = JointLimits::new(lo, hi);
        let a: [f32; 3] = std::array::from_fn(|k| lo[k] + IN + t[k] * (hi[k] - lo[k] - 2.0 * IN));
        // Away from gimbal lock (y = ±π/2 and its other-triple twin).
        prop_assume!((a[1].abs() - FRAC_PI_2).abs() > IN);
        let q = from_euler_zyx(a);
        prop_assert!(InsideTest::new(&l).clearly_contains(q), "{:?} at {:?}", l, a);
    }
}
