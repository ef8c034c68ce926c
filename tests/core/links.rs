//! Bone links (Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex Blending to §Bone
//! Links): weight reassignment, rest equivalence, link poses and the joint cross-section on
//! Woodland's arm. Every expectation is independent of the code under test: hand-computed weights,
//! the unlinked scene, analytic rotations, the rest radius.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::collections::BTreeMap;
use std::f32::consts::PI;

use glam::{Mat4, Quat, Vec3};
use skinview::builtin::{self, ArmParams};
use skinview::error::Error;
use skinview::frame::{CpuSkinner, FrameState};
use skinview::links::{BoneInfo, LinkPoseJob, LinkRig, LinkSpec, LinkStats, insert_links};
use skinview::math::Trs;
use skinview::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};
use skinview::skeleton::LocalToModelJob;
use skinview::skin::{PaletteJob, SkinnedVertices};

/// Pose `scene` (rest, or animation `anim` at `time_s`), let `edit` change the locals, run the
/// links, local→model and the palette, and CPU-skin draw 0. Returns the skinned positions and
/// `model_from_node`.
fn skin_posed(
    scene: &Scene,
    rig: Option<&LinkRig>,
    anim: Option<usize>,
    time_s: f32,
    edit: &dyn Fn(&mut [Trs]),
) -> (Vec<Vec3>, Vec<Mat4>) {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, anim, time_s).unwrap();
    edit(&mut frame.pose.locals);
    if let Some(rig) = rig {
        LinkPoseJob {
            rig,
            locals: &mut frame.pose.locals,
        }
        .run()
        .unwrap();
    }
    LocalToModelJob {
        scene,
        pose: &frame.pose,
        model_from_node: &mut frame.model_from_node,
    }
    .run()
    .unwrap();
    PaletteJob {
        scene,
        layout: &frame.layout,
        model_from_node: &frame.model_from_node,
        palette: &mut frame.palette,
    }
    .run()
    .unwrap();
    let mut skinner = CpuSkinner::new(scene, None);
    let mut out = SkinnedVertices::default();
    skinner.skin_draw(scene, &frame, 0, &mut out).unwrap();
    (out.positions, frame.model_from_node.clone())
}

fn arm_bones() -> BoneInfo {
    // upper_arm, forearm, arm_skin (a mesh node).
    BoneInfo {
        length_m: vec![0.30, 0.28, 0.0],
        joint_radius_m: vec![0.045, 0.045, 0.0],
    }
}

fn link_arm(count: usize) -> (Scene, LinkRig, LinkStats) {
    let arm = builtin::woodland_arm().unwrap();
    let spec = LinkSpec {
        count,
        ..LinkSpec::new(0, 1)
    };
    insert_links(&arm, &[spec], &arm_bones()).unwrap()
}

/// Per vertex: joint node name → weight (zero weights left out).
fn named_weights(scene: &Scene, v: usize) -> BTreeMap<String, f32> {
    let d = scene.draws[0];
    let w = scene.primitive(&d).skin_weights.as_ref().unwrap();
    let skin = &scene.skins[d.skin.unwrap()];
    let mut m = BTreeMap::new();
    for k in 0..w.width {
        let x = w.weights[v * w.width + k];
        if x != 0.0 {
            let node = skin.joints[w.joints[v * w.width + k] as usize];
            *m.entry(scene.nodes[node].name.clone().unwrap())
                .or_insert(0.0) += x;
        }
    }
    m
}

fn assert_weights(scene: &Scene, v: usize, expected: &[(&str, f32)]) {
    let got = named_weights(scene, v);
    for (name, x) in expected {
        let g = got.get(*name).copied().unwrap_or(0.0);
        assert!(
            (g - x).abs() < 1e-5,
            "vertex {v}: {name} = {g}, expected {x} (all: {got:?})"
        );
    }
    for (name, g) in &got {
        if !expected.iter().any(|(n, _)| n == name) {
            assert!(
                g.abs() < 1e-5,
                "vertex {v}: unexpected {name} = {g} (all: {got:?})"
            );
        }
    }
}

fn max_sum_error(scene: &Scene) -> f32 {
    let mut worst = 0.0f32;
    for d in &scene.draws {
        let Some(w) = scene.primitive(d).skin_weights.as_ref() else {
            continue;
        };
        for ws in w.weights.chunks_exact(w.width) {
            let s: f64 = ws.iter().map(|&x| x as f64).sum();
            worst = worst.max((s - 1.0).abs() as f32);
        }
    }
    worst
}

fn max_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(p, q)| p.distance(*q))
        .fold(0.0, f32::max)
}

// ---------------------------------------------------------------------------------------
// A forked rig: hand with two linked children (a along +X, b along +Y) and one unlinked (c).

fn fork_rig() -> Scene {
    fork_rig_with(&[])
}

/// The fork rig with `extra` vertices (position, weights to hand, a, b, c; normal +Z) after
/// its own.
fn fork_rig_with(extra: &[(Vec3, [f32; 4])]) -> Scene {
    let node = |name: &str, parent: Option<usize>, t: Vec3, r: Quat| Node {
        name: Some(name.into()),
        source_index: 0,
        parent,
        rest: Trs {
            translation: t,
            rotation: r,
            scale: Vec3::ONE,
        },
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    };
    let mut nodes = vec![
        node("hand", None, Vec3::ZERO, Quat::IDENTITY),
        node("a", Some(0), Vec3::new(0.1, 0.0, 0.0), Quat::IDENTITY),
        node(
            "b",
            Some(0),
            Vec3::new(0.08, 0.04, 0.0),
            Quat::from_rotation_z(PI / 2.0),
        ),
        node(
            "c",
            Some(0),
            Vec3::new(0.0, -0.05, 0.0),
            Quat::from_rotation_z(-PI / 2.0),
        ),
        node("mesh", None, Vec3::ZERO, Quat::IDENTITY),
    ];
    nodes[4].mesh = Some(0);
    nodes[4].skin = Some(0);
    for (i, n) in nodes.iter_mut().enumerate() {
        n.source_index = i;
    }
    let rest_model = [
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::new(0.1, 0.0, 0.0)),
        Mat4::from_rotation_translation(
            Quat::from_rotation_z(PI / 2.0),
            Vec3::new(0.08, 0.04, 0.0),
        ),
        Mat4::from_rotation_translation(
            Quat::from_rotation_z(-PI / 2.0),
            Vec3::new(0.0, -0.05, 0.0),
        ),
    ];
    // Weights (hand, a, b, c) and positions. Zones: a: x in 0.1 ± 0.02 (s = (x-0.1)/0.04+0.5),
    // b: y in 0.04 ± 0.02 (s = (y-0.04)/0.04+0.5).
    let mut positions = vec![
        Vec3::new(0.1, 0.03, 0.0),  // v0: s_a = 0.5, s_b = 0.25
        Vec3::new(0.13, 0.0, 0.0),  // v1: s_a = 1 (clamped), s_b = 0 (clamped)
        Vec3::new(0.1, -0.1, 0.0),  // v2: s_a = 0.5, normal along a's axis (fade)
        Vec3::new(0.13, -0.1, 0.0), // v3: s_a = 1, unlinked sibling c weighted
        Vec3::new(0.1, -0.1, 0.0),  // v4: hand only, in a's slab but 0.1 from a's axis
        Vec3::new(0.095, 0.0, 0.0), // v5: hand only, s_a = 0.375 on a's axis; outside b's slab
        Vec3::new(0.09, 0.03, 0.0), // v6: hand only, s_a = 0.25 (0.03 off a's axis), s_b = 0.25 (0.01 off b's)
    ];
    let mut normals = vec![Vec3::Z; 7];
    normals[2] = Vec3::X;
    let mut weights: Vec<[f32; 4]> = vec![
        [0.4, 0.36, 0.24, 0.0],
        [0.5, 0.1, 0.4, 0.0],
        [0.5, 0.5, 0.0, 0.0],
        [0.6, 0.2, 0.0, 0.2],
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    // Many vertices weighted to hand, a and b (and some to c) across both zones.
    for i in 0..400 {
        let f = i as f32;
        positions.push(Vec3::new(
            0.06 + 0.08 * ((f * 0.37).sin() * 0.5 + 0.5),
            0.08 * ((f * 0.73).cos() * 0.5 + 0.5),
            0.02 * (f * 0.11).sin(),
        ));
        normals.push(Vec3::new((f * 0.9).sin(), (f * 0.4).cos(), 0.5).normalize());
        let raw = [
            1.0 + (f * 0.3).sin(),
            1.0 + (f * 0.5).cos(),
            1.0 + (f * 0.7).sin(),
            if i % 3 == 0 { 0.3 } else { 0.0 },
        ];
        let s: f32 = raw.iter().sum();
        weights.push(raw.map(|x| x / s));
    }
    for &(p, w) in extra {
        positions.push(p);
        normals.push(Vec3::Z);
        weights.push(w);
    }
    let n = positions.len();
    let raw = RawScene {
        name: "fork".into(),
        nodes,
        meshes: vec![Mesh {
            name: None,
            primitives: vec![Primitive {
                positions,
                normals: Some(normals),
                tangents: None,
                indices: (0..n as u32).collect(),
                topology: Topology::Points,
                skin_weights: Some(SkinWeights {
                    width: 4,
                    joints: [0u32, 1, 2, 3].repeat(n),
                    weights: weights.concat(),
                }),
                morph_targets: Vec::new(),
                base_color: [1.0; 4],
                ..Default::default()
            }],
            default_morph_weights: Vec::new(),
        }],
        skins: vec![Skin {
            name: None,
            joints: vec![0, 1, 2, 3],
            joint_from_bind: rest_model.iter().map(|m| m.inverse()).collect(),
        }],
        animations: Vec::new(),
        roots: Vec::new(),
        report: Default::default(),
        textures: Vec::new(),
    };
    SceneBuilder::build(raw).unwrap()
}

fn fork_specs() -> Vec<LinkSpec> {
    vec![
        LinkSpec {
            parent: 0,
            child: 1,
            count: 2,
            total_length_m: Some(0.04),
            normal_fade: 0.5,
        },
        LinkSpec {
            parent: 0,
            child: 2,
            count: 3,
            total_length_m: Some(0.04),
            normal_fade: 0.5,
        },
    ]
}

#[test]
fn fork_split_follows_pseudo_weights() {
    let scene = fork_rig();
    let (linked, rig, stats) = insert_links(&scene, &fork_specs(), &BoneInfo::default()).unwrap();
    println!("fork stats: {stats:?}");
    assert_eq!(rig.links.len(), 5);
    // At a fork (hand has three children) hand's weight is split by pseudo-weights: each
    // child's weight plus hand's weight times the vertex's membership of the child's radial
    // zone. With no joint radius known (BoneInfo empty) the radial limit is the zone length,
    // 0.04: membership 1 within 0.02 of the child's axis, 0 beyond 0.04, linear between; full
    // from the slab's parent end on (s ≥ 0), fading to 0 at s = −1. What the pseudo-weights do
    // not cover (their sum below hand's weight) stays on hand.
    // v0: 0.03 from a's axis (m_a = 0.5), 0.02 from b's (m_b = 1): pseudo a = 0.36 + 0.2,
    //     b = 0.24 + 0.4, sum 1.2; share_a = 0.4·0.56/1.2, A_a = 0.546667 at s = 0.5 of 2
    //     links: halves; share_b = 0.4·0.64/1.2, A_b = 0.453333 at s = 0.25 of 3: b_link1.
    assert_weights(
        &linked,
        0,
        &[
            ("a_link1", 0.273333),
            ("a_link2", 0.273333),
            ("b_link1", 0.453333),
        ],
    );
    // v1: on a's axis past its zone (m_a = 1, s_a = 1), 0.05 from b's (m_b = 0): pseudo
    //     a = 0.1 + 0.5, b = 0.4, sum 1.0: share_a = 0.3 → A_a = 0.4 all to a; share_b = 0.2
    //     → A_b = 0.6 all to hand (s_b = 0): hand 0.5 − 0.5 + 0.6.
    assert_weights(&linked, 1, &[("hand", 0.6), ("a", 0.4)]);
    // v2: 0.1 from a's axis (m = 0): pseudo a = 0.5 = hand's weight: share_a = 0.5, A_a = 1.0
    //     at s = 0.5 → halves on the links; normal ∥ a's axis, fade 0.5 → half of the
    //     link-bound weight back to hand.
    assert_weights(
        &linked,
        2,
        &[("hand", 0.5), ("a_link1", 0.25), ("a_link2", 0.25)],
    );
    // v3: outside every radial zone, children's weights 0.4 below hand's 0.6: share_a =
    //     0.6·0.2/0.6 = 0.2 (the unlinked sibling c keeps its part on hand), A = 0.4 → a.
    assert_weights(&linked, 3, &[("hand", 0.4), ("a", 0.4), ("c", 0.2)]);
    // v4: hand only, in a's slab but 0.1 from a's axis: in no zone, untouched.
    assert_weights(&linked, 4, &[("hand", 1.0)]);
    // v5: hand only, on a's axis at s_a = 0.375 (m_a = 1); 0.015 from b's axis but half a zone
    //     behind b's slab (s_b = −0.5: m_b = 0.5): share_a = 2/3 → 0.875 / 0.125 of it on the
    //     links (segment 1.125); share_b = 1/3 at s = 0 → hand.
    assert_weights(
        &linked,
        5,
        &[
            ("hand", 0.333333),
            ("a_link1", 0.583333),
            ("a_link2", 0.083333),
        ],
    );
    // v6: hand only, m_a = 0.5 (0.03 off a's axis), m_b = 1 (0.01 off b's), both at s = 0.25:
    //     share_a = 1/3 at segment 0.75 of 2 links: hand 1/12, a_link1 1/4; share_b = 2/3 at
    //     segment 1 of 3 links: b_link1.
    assert_weights(
        &linked,
        6,
        &[("hand", 0.083333), ("a_link1", 0.25), ("b_link1", 0.666667)],
    );
    assert_eq!(stats.parent_only_in_zone, 2, "{stats:?}");
    assert_eq!(stats.parent_only_skipped, 1, "{stats:?}");
    assert!(stats.fork_vertices >= 2);
    assert!(stats.faded_vertices >= 1);

    let sum = max_sum_error(&linked);
    println!(
        "fork: max |sum-1| = {sum:e} (stats {:e})",
        stats.max_sum_deviation_after
    );
    assert!(sum <= 1e-6 && stats.max_sum_deviation_after <= 1e-6);
    let w = linked
        .primitive(&linked.draws[0])
        .skin_weights
        .as_ref()
        .unwrap();
    assert_eq!(w.width % 4, 0);
    assert_eq!(w.max_influences(), stats.max_influences_after);
    assert!(w.width >= stats.max_influences_after);
}

/// The fork's reassigned weights change continuously with position: across the edge of a
/// radial zone, across the child end of a slab, between two zones, and behind a slab; and a
/// hand-only vertex and one with a tiny weight on a child at the same place end up close.
#[test]
fn fork_weights_are_continuous_in_position() {
    const STEP_M: f32 = 1e-4;
    const STEPS: usize = 600;
    // Lines of hand-only vertices (start, direction): radially out of a's zone at s = 0.5
    // (away from b); along a's axis through the slab's child end; from a's zone into b's;
    // along b's axis through the part behind its slab.
    let lines = [
        (Vec3::new(0.1, 0.0, 0.0), Vec3::new(0.0, -1.0, 0.0)),
        (Vec3::new(0.1, 0.005, 0.0), Vec3::X),
        (Vec3::new(0.1, 0.0, 0.0), Vec3::new(-0.6, 0.8, 0.0)),
        (Vec3::new(0.075, 0.05, 0.0), Vec3::new(0.0, -1.0, 0.0)),
    ];
    let mut extra = Vec::new();
    for (start, dir) in lines {
        for i in 0..STEPS {
            extra.push((start + dir * (i as f32 * STEP_M), [1.0, 0.0, 0.0, 0.0]));
        }
    }
    // Pairs at the same place: hand only, and hand with ε on a (outside a's radial zone, where
    // splitting hand by the children's weights alone would give a all of hand's weight).
    const EPS: f32 = 1e-4;
    let pairs = [Vec3::new(0.1, -0.1, 0.0), Vec3::new(0.1, -0.035, 0.0)];
    for p in pairs {
        extra.push((p, [1.0, 0.0, 0.0, 0.0]));
        extra.push((p, [1.0 - EPS, EPS, 0.0, 0.0]));
    }
    let scene = fork_rig_with(&extra);
    let first = scene.primitive(&scene.draws[0]).positions.len() - extra.len();
    let (linked, _, _) = insert_links(&scene, &fork_specs(), &BoneInfo::default()).unwrap();
    let diff = |a: usize, b: usize| {
        let (wa, wb) = (named_weights(&linked, a), named_weights(&linked, b));
        wa.keys()
            .chain(wb.keys())
            .map(|k| (wa.get(k).unwrap_or(&0.0) - wb.get(k).unwrap_or(&0.0)).abs())
            .fold(0.0f32, f32::max)
    };
    // The steepest slope of the rule: membership changes by 1 over 0.02 m and a share moves
    // between stations 0.04 / 3 m apart, so one step of 1e-4 m changes a weight by at most
    // about 0.0075 + 0.005 + 0.0075; a step (what a hard zone edge gives) is ≥ 0.1.
    const MAX_JUMP: f32 = 0.03;
    for (l, _) in lines.iter().enumerate() {
        let base = first + l * STEPS;
        let (worst, at) = (1..STEPS)
            .map(|i| (diff(base + i - 1, base + i), i))
            .fold((0.0f32, 0), |m, x| if x.0 > m.0 { x } else { m });
        println!("line {l}: largest change between neighbours {worst:.5} at step {at}");
        assert!(worst < MAX_JUMP, "line {l}: jump {worst} at step {at}");
    }
    for (k, p) in pairs.iter().enumerate() {
        let a = first + lines.len() * STEPS + 2 * k;
        let d = diff(a, a + 1);
        println!("pair at {p}: largest difference {d:e}");
        assert!(d < 4.0 * EPS, "pair at {p}: {d}");
    }
}

/// Links at a joint whose child hangs 180° from its parent (the humanoid's hips): the rest pose
/// skins as without links, and each link carries its share of the child's rotation away from
/// rest.
#[test]
fn hip_links_share_the_rotation_away_from_rest() {
    use skinview::links::link_rotation;
    // Analytic: rest 180° about Z (a thigh under a pelvis), the child turned 90° about its own X
    // from rest: link k turns k/(N+1) of that.
    let rest = Quat::from_rotation_z(PI);
    for f in [1.0f32 / 3.0, 2.0 / 3.0] {
        let theta = 90f32.to_radians();
        let got = link_rotation(rest, rest * Quat::from_rotation_x(theta), f);
        let want = rest * Quat::from_rotation_x(f * theta);
        assert!(got.dot(want).abs() > 1.0 - 1e-6, "{got} vs {want}");
        // At rest the link lies along the child (no arc to choose at 180°).
        assert!(link_rotation(rest, rest, f).dot(rest).abs() > 1.0 - 1e-6);
    }
    // The built-in humanoid, linked at the hips (and shoulders, elbows, knees) and not.
    let rig = builtin::humanoid_rig().unwrap();
    assert!(
        rig.bones
            .iter()
            .filter(|b| b.name.ends_with("_thigh"))
            .all(|b| b.links.is_some())
    );
    let skinned = |links: bool, thigh_turn: Quat| {
        use skinview::character::{CharacterSetup, CharacterSpec, MotionRef};
        use skinview::rig::{Key, Motion, Track};
        let mut rig = rig.clone();
        let i = rig.bones.iter().position(|b| b.name == "l_thigh").unwrap();
        let rest = Quat::from_array(rig.bones[i].rotation).normalize();
        rig.motions = vec![Motion {
            name: "pose".into(),
            looping: false,
            tracks: vec![Track {
                scale_keys: Vec::new(),
                bone: "l_thigh".into(),
                displacement_keys: Vec::new(),
                rotation_keys: vec![Key {
                    time_s: 0.0,
                    value: (rest * thigh_turn).to_array(),
                }],
            }],
        }];
        let rs = rig.to_scene().unwrap();
        let spec = CharacterSpec {
            links,
            ..CharacterSpec::single(Some(MotionRef::Name("pose".into())))
        };
        let mut c = CharacterSetup::stage(spec.clone()).build_rig(&rs).unwrap();
        c.update(0.0, 0.0).unwrap();
        let prim = c.scene.primitive(&c.scene.draws[0]).clone();
        (prim, c.outputs[0].positions.clone())
    };
    let (prim, rest_plain) = skinned(false, Quat::IDENTITY);
    let (_, rest_linked) = skinned(true, Quat::IDENTITY);
    let d = max_distance(&rest_plain, &rest_linked);
    println!("humanoid rest, linked vs not: max distance {d:e} m");
    assert!(d < 1e-5, "{d}");
    // A leg lifted, spread and turned 90°: the surface stretches about as much as without
    // links (a weight step round the crotch would tear it: edges many times their length).
    let stretch = |p: &[Vec3]| {
        prim.indices
            .chunks_exact(3)
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .filter_map(|(a, b)| {
                let rest = (prim.positions[a as usize] - prim.positions[b as usize]).length();
                (rest > 1e-6).then(|| (p[a as usize] - p[b as usize]).length() / rest)
            })
            .fold(0.0f32, f32::max)
    };
    for (name, turn) in [
        ("lift", Quat::from_rotation_z(90f32.to_radians())),
        ("spread", Quat::from_rotation_y(90f32.to_radians())),
        ("turn", Quat::from_rotation_x(90f32.to_radians())),
    ] {
        let plain = stretch(&skinned(false, turn).1);
        let linked = stretch(&skinned(true, turn).1);
        println!("{name} 90°: largest edge stretch {plain:.2} plain, {linked:.2} linked");
        assert!(linked < 1.5 * plain, "{name}: {linked} vs {plain}");
    }
}

#[test]
fn weights_sum_to_one_on_woodlands_arm() {
    for count in [1, 2, 3] {
        let (linked, rig, stats) = link_arm(count);
        println!("arm, {count} links: {stats:?}");
        assert_eq!(rig.links.len(), count);
        assert_eq!(
            linked.nodes[rig.links[0].node].name.as_deref(),
            Some("forearm_link1")
        );
        assert_eq!(linked.nodes.len(), 3 + count);
        let sum = max_sum_error(&linked);
        assert!(sum <= 1e-6, "{count} links: max |sum-1| = {sum}");
        assert!(stats.vertices_changed > 0 && stats.max_influences_after <= 4);
        // Links get fresh source indices after the old ones.
        let mut src: Vec<usize> = linked.nodes.iter().map(|n| n.source_index).collect();
        src.sort_unstable();
        assert_eq!(src, (0..3 + count).collect::<Vec<_>>());
    }
}

#[test]
fn rest_pose_skins_as_before() {
    let arm = builtin::woodland_arm().unwrap();
    let (base, _) = skin_posed(&arm, None, None, 0.0, &|_| {});
    for count in [2, 3] {
        let (linked, rig, _) = link_arm(count);
        let (p, _) = skin_posed(&linked, Some(&rig), None, 0.0, &|_| {});
        let d = max_distance(&base, &p);
        println!("arm rest, {count} links: max distance {d:e}");
        assert!(d <= 1e-6);
    }
    let fork = fork_rig();
    let (base, _) = skin_posed(&fork, None, None, 0.0, &|_| {});
    let (linked, rig, _) = insert_links(&fork, &fork_specs(), &BoneInfo::default()).unwrap();
    let (p, _) = skin_posed(&linked, Some(&rig), None, 0.0, &|_| {});
    let d = max_distance(&base, &p);
    println!("fork rest: max distance {d:e}");
    assert!(d <= 1e-6);
}

#[test]
fn links_carry_even_shares_of_the_child_rotation() {
    for count in [2, 3] {
        let (linked, rig, _) = link_arm(count);
        let fore = rig.old_to_new[1];
        for deg in [30.0f32, 120.0, 170.0] {
            let theta = deg.to_radians();
            let (_, model) = skin_posed(&linked, Some(&rig), None, 0.0, &|l| {
                l[fore].rotation = Quat::from_rotation_z(theta)
            });
            for (k, link) in rig.links.iter().enumerate() {
                let f = (k + 1) as f32 / (count + 1) as f32;
                let expected = Mat4::from_rotation_translation(
                    Quat::from_rotation_z(f * theta),
                    Vec3::new(0.30, 0.0, 0.0),
                );
                let err = (model[link.node] - expected)
                    .to_cols_array()
                    .iter()
                    .fold(0.0f32, |m, x| m.max(x.abs()));
                assert!(
                    err < 1e-6,
                    "{count} links, θ = {deg}°, link {}: error {err}",
                    k + 1
                );
            }
        }
    }
}

/// Seeded random rotations (xorshift32): a random axis, an angle up to the given bound.
fn seeded_rotations(seed: u32) -> impl FnMut(f32) -> Quat {
    let mut next = common::rng::xorshift32(seed);
    move |max_rad: f32| {
        let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
        Quat::from_axis_angle(axis, max_rad * next())
    }
}

/// `LinkPoseJob` takes link k as the k-th power of the first link's share (one `atan2` per
/// child); each link must still be what `link_rotation` gives on its own, for any rest and
/// child rotation (seeded random, up to 179°, 2–6 links).
#[test]
fn link_pose_job_matches_link_rotation_per_link() {
    use skinview::links::link_rotation;
    let mut random_rotation = seeded_rotations(0x9e37_79b9);
    let mut worst = 0.0f32;
    for count in 2..=6 {
        let (linked, mut rig, _) = link_arm(count);
        let fore = rig.old_to_new[1];
        for _ in 0..200 {
            let rest = random_rotation(PI);
            for l in &mut rig.links {
                l.rest_rotation = rest;
            }
            let mut locals: Vec<Trs> = linked.nodes.iter().map(|n| n.rest).collect();
            locals[fore].rotation = rest * random_rotation(179f32.to_radians());
            LinkPoseJob {
                rig: &rig,
                locals: &mut locals,
            }
            .run()
            .unwrap();
            for l in &rig.links {
                let expected = link_rotation(rest, locals[fore].rotation, l.fraction);
                let got = locals[l.node].rotation;
                let d = got.conjugate() * expected;
                let angle = 2.0 * d.xyz().length().atan2(d.w.abs());
                worst = worst.max(angle);
                assert!(
                    angle < 2e-6 && (got.length() - 1.0).abs() < 1e-6,
                    "{count} links, fraction {}: {angle} rad from link_rotation",
                    l.fraction
                );
            }
        }
    }
    println!("worst angle from link_rotation: {worst:e} rad");
}

/// `LinkPoseJob` computes the first links of up to four children at once; whatever the batching,
/// every link must be what posing the links one at a time with `link_rotation` gives: several
/// batches, 1–3 links per child, a rest rotation without direction, a child at its rest
/// rotation (no arc), an unnormalised child rotation, a fixed child, and a link whose child is
/// a link node written earlier in the same batch (it must see the new value).
#[test]
fn link_pose_job_equals_one_link_at_a_time() {
    use skinview::links::{Link, link_rotation};
    let mut rotation = seeded_rotations(0x2545_f491);
    let nodes = 24;
    let mut locals: Vec<Trs> = (0..nodes)
        .map(|i| Trs {
            translation: Vec3::new(i as f32, 0.5, -0.25 * i as f32),
            rotation: rotation(3.0),
            scale: Vec3::splat(1.5),
        })
        .collect();
    locals[5].rotation = Quat::from_rotation_y(0.3); // its links' rest below: no arc
    locals[6].rotation *= 3.0; // unnormalised
    let fixed = Trs {
        translation: Vec3::new(0.0, 2.0, 0.0),
        rotation: rotation(2.0),
        scale: Vec3::ONE,
    };
    let link = |node, child, fraction, spec, rest_rotation, child_fixed| Link {
        node,
        parent: 0,
        child,
        fraction,
        spec,
        child_fixed,
        rest_rotation,
    };
    let rest = [rotation(3.0), rotation(3.0), rotation(3.0)];
    let links = vec![
        link(10, 1, 1.0 / 3.0, 0, rest[0], None),
        link(11, 1, 2.0 / 3.0, 0, rest[0], None),
        // Its child is link node 10, written just before in the same batch.
        link(12, 10, 0.5, 1, Quat::IDENTITY, None),
        link(13, 2, 0.5, 2, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), None),
        link(14, 3, 0.25, 3, rest[1], None),
        link(15, 3, 0.5, 3, rest[1], None),
        link(16, 3, 0.75, 3, rest[1], None),
        link(17, 4, 0.3, 4, rest[2], Some(fixed)),
        link(18, 5, 0.5, 5, Quat::from_rotation_y(0.3), None),
        link(19, 6, 0.4, 6, rest[2], None),
        link(20, 7, 0.2, 7, rest[0], None),
        link(21, 7, 0.4, 7, rest[0], None),
        link(22, 7, 0.6, 7, rest[0], None),
        link(23, 7, 0.8, 7, rest[0], None),
    ];
    let mut expected = locals.clone();
    for l in &links {
        let c = l.child_fixed.unwrap_or(expected[l.child]);
        expected[l.node] = Trs {
            translation: c.translation,
            rotation: link_rotation(l.rest_rotation, c.rotation, l.fraction),
            scale: Vec3::ONE,
        };
    }
    let rig = LinkRig {
        links,
        node_count: nodes,
        old_to_new: (0..10).collect(),
        total_length_m: vec![0.1; 8],
    };
    LinkPoseJob {
        rig: &rig,
        locals: &mut locals,
    }
    .run()
    .unwrap();
    for (i, (got, want)) in locals.iter().zip(&expected).enumerate() {
        let d = got.rotation.conjugate() * want.rotation;
        let angle = 2.0 * d.xyz().length().atan2(d.w.abs());
        assert!(
            angle < 2e-6
                && (i < 10 || (got.rotation.length() - 1.0).abs() < 1e-6)
                && got.translation == want.translation
                && got.scale == want.scale,
            "node {i}: {got:?}, one at a time {want:?} ({angle} rad apart)"
        );
    }
}

/// Mean distance of the skinned ring vertices from their centroid, for the tube ring whose
/// rest x is nearest the elbow; and the smallest such value over every ring.
fn cross_section(positions: &[Vec3], p: &ArmParams) -> (f32, f32, f32) {
    let rv = p.ring_vertices;
    let ring_radius = |r: usize| {
        let ring = &positions[r * rv..(r + 1) * rv];
        let c = ring.iter().copied().sum::<Vec3>() / rv as f32;
        ring.iter().map(|v| v.distance(c)).sum::<f32>() / rv as f32
    };
    let total = p.upper_length_m + p.fore_length_m;
    let elbow = (0..p.rings).min_by(|&a, &b| {
        let xa = (total * a as f32 / (p.rings - 1) as f32 - p.upper_length_m).abs();
        let xb = (total * b as f32 / (p.rings - 1) as f32 - p.upper_length_m).abs();
        xa.total_cmp(&xb)
    });
    let elbow = elbow.unwrap();
    let min = (0..p.rings).map(ring_radius).fold(f32::INFINITY, f32::min);
    (
        total * elbow as f32 / (p.rings - 1) as f32,
        ring_radius(elbow),
        min,
    )
}

#[test]
fn links_keep_the_elbow_cross_section() {
    let p = ArmParams::default();
    let r = p.radius_m;
    let arm = builtin::woodland_arm().unwrap();
    let twist = |l: &mut [Trs]| l[1].rotation = Quat::from_rotation_x(PI);
    let bend = |l: &mut [Trs]| l[1].rotation = Quat::from_rotation_z(120f32.to_radians());

    // Rest: every ring has the rest radius.
    let (rest, _) = skin_posed(&arm, None, None, 0.0, &|_| {});
    let (x_ring, rest_elbow, rest_min) = cross_section(&rest, &p);
    println!(
        "elbow ring at rest x = {x_ring:.4} m: rest radius {rest_elbow:.5} (min over rings {rest_min:.5}), r = {r}"
    );
    assert!((rest_elbow - r).abs() < 1e-5 && (rest_min - r).abs() < 1e-5);

    // Without links. The 'bend' clip at t = 2 s is the 120° bend: same result as posing by hand.
    let (bent_anim, _) = skin_posed(&arm, None, Some(0), 2.0, &|_| {});
    let (bent, _) = skin_posed(&arm, None, None, 0.0, &bend);
    assert!(max_distance(&bent_anim, &bent) < 1e-5);
    let (twisted, _) = skin_posed(&arm, None, None, 0.0, &twist);
    let (_, bend0, bend0_min) = cross_section(&bent, &p);
    let (_, twist0, twist0_min) = cross_section(&twisted, &p);
    println!(
        "no links:  bend 120° elbow {:.4} r (min {:.4} r); twist 180° elbow {:.4} r (min {:.4} r)",
        bend0 / r,
        bend0_min / r,
        twist0 / r,
        twist0_min / r
    );
    assert!(twist0 < 0.6 * r, "twist without links: {}", twist0 / r);
    assert!(bend0 < 0.85 * r, "bend without links: {}", bend0 / r);

    for count in [2usize, 3] {
        let (linked, rig, _) = link_arm(count);
        let fore = rig.old_to_new[1];
        assert_eq!(fore, 1);
        let (bent_anim, _) = skin_posed(&linked, Some(&rig), Some(0), 2.0, &|_| {});
        let (bent, _) = skin_posed(&linked, Some(&rig), None, 0.0, &bend);
        assert!(max_distance(&bent_anim, &bent) < 1e-5);
        let (twisted, _) = skin_posed(&linked, Some(&rig), None, 0.0, &twist);
        let (_, b, b_min) = cross_section(&bent, &p);
        let (_, t, t_min) = cross_section(&twisted, &p);
        println!(
            "{count} links:   bend 120° elbow {:.4} r (min {:.4} r); twist 180° elbow {:.4} r (min {:.4} r)",
            b / r,
            b_min / r,
            t / r,
            t_min / r
        );
        assert!(t > 0.85 * r, "{count} links, twist: {}", t / r);
        assert!(b > 0.93 * r, "{count} links, bend: {}", b / r);
        assert!(t > 4.0 * twist0 && b > bend0);
    }
}

#[test]
fn bad_specs_and_jobs_are_rejected() {
    let arm = builtin::woodland_arm().unwrap();
    let rule = |r: Result<(Scene, LinkRig, LinkStats), Error>| match r {
        Err(Error::Job { rule, .. }) => rule,
        other => panic!("expected a rule error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(
        rule(insert_links(&arm, &[LinkSpec::new(1, 0)], &arm_bones())),
        1
    );
    assert_eq!(
        rule(insert_links(
            &arm,
            &[LinkSpec {
                count: 0,
                ..LinkSpec::new(0, 1)
            }],
            &arm_bones()
        )),
        2
    );
    assert_eq!(
        rule(insert_links(
            &arm,
            &[LinkSpec::new(0, 1)],
            &BoneInfo::default()
        )),
        3
    );
    assert_eq!(
        rule(insert_links(
            &arm,
            &[LinkSpec {
                normal_fade: 1.5,
                ..LinkSpec::new(0, 1)
            }],
            &arm_bones()
        )),
        4
    );
    assert_eq!(
        rule(insert_links(
            &arm,
            &[LinkSpec::new(0, 1), LinkSpec::new(0, 1)],
            &arm_bones()
        )),
        5
    );

    let (linked, rig, _) = link_arm(2);
    let mut short = vec![Trs::IDENTITY; linked.nodes.len() - 1];
    match (LinkPoseJob {
        rig: &rig,
        locals: &mut short,
    })
    .run()
    {
        Err(Error::Job {
            job: "LinkPoseJob",
            rule: 1,
            ..
        }) => {}
        other => panic!("expected LinkPoseJob rule 1, got {other:?}"),
    }
}

/// Mean distance of each ring's skinned vertices from the ring's centroid, per ring.
fn ring_radii(positions: &[Vec3], p: &ArmParams) -> Vec<f32> {
    let rv = p.ring_vertices;
    (0..p.rings)
        .map(|r| {
            let ring = &positions[r * rv..(r + 1) * rv];
            let c = ring.iter().copied().sum::<Vec3>() / rv as f32;
            ring.iter().map(|v| v.distance(c)).sum::<f32>() / rv as f32
        })
        .collect()
}

/// Radius factor of a ring blended linearly between two frames rotated `phi` apart about the
/// ring's axis, with blend parameter `t`: `|(1 − t) + t·e^{iφ}|`.
fn blend_radius(t: f64, phi: f64) -> f64 {
    (1.0 - 2.0 * t * (1.0 - t) * (1.0 - phi.cos())).sqrt()
}

/// §9 with the weights reassigned by relative X position, a 180° twist with `N` links is a
/// chain of stations `[P, link1..linkN, C]` each `φ = 180°/(N+1)` apart about the bone axis,
/// and a ring at blend parameter `t` between two stations has radius `r·f(t)`,
/// `f(t)² = 1 − 2t(1 − t)(1 − cos φ)` ([`blend_radius`]; the arm's rings carry only upper-arm
/// and forearm weight, so each ring's amount is 1 and its `t` depends on its rest x alone).
/// `t` runs at `(N+1)/L` per metre along the bone, so consecutive rings `Δx` apart differ by
/// `Δt = (N+1)·Δx/L`. `|f'(t)| = |1 − 2t|(1 − cos φ)/f` is largest at a station (`t = 0` or
/// `1`, where `f` has its corner) and `f` is symmetric about each station, so on the step-free
/// profile two rings `Δx` apart never differ by more than `r·(1 − f(Δt))` (2 links:
/// `Δt = 0.244`, bound 0.097 r; 3 links: `Δt = 0.326`, bound 0.067 r). Reassigning only
/// vertices with a child weight left the rings weighted to the upper arm alone untouched
/// inside the zone, next to rings moved almost wholly onto `link1`: with 2 links a step of
/// 0.113 r between rings 20 and 21, which the bound catches. The ring radii must also follow
/// the ideal profile `r·f(t(x))` itself (the old code was 0.13 r off at ring 20 with 2 links
/// and 0.07 r with 3).
#[test]
fn twisted_arm_has_no_steps_along_the_link_zone() {
    let p = ArmParams::default();
    let r = p.radius_m as f64;
    for count in [2usize, 3] {
        let (linked, rig, stats) = link_arm(count);
        println!("arm, {count} links: {stats:?}");
        let twist = |l: &mut [Trs]| l[1].rotation = Quat::from_rotation_x(PI);
        let (twisted, _) = skin_posed(&linked, Some(&rig), None, 0.0, &twist);
        let radii = ring_radii(&twisted, &p);

        // Zone by hand: L = 0.3·0.28 + 1.5·0.045 (BoneInfo of arm_bones), joint at x = 0.30.
        let zone = 0.3 * 0.28 + 1.5 * 0.045;
        let total = (p.upper_length_m + p.fore_length_m) as f64;
        let dx = total / (p.rings - 1) as f64;
        let phi = std::f64::consts::PI / (count + 1) as f64;
        let dt = (count + 1) as f64 * dx / zone;
        let bound = r * (1.0 - blend_radius(dt, phi));
        let ideal = |x: f64| {
            let s = ((x - p.upper_length_m as f64) / zone + 0.5).clamp(0.0, 1.0);
            let seg = s * (count + 1) as f64;
            r * blend_radius(seg - seg.floor(), phi)
        };
        let mut worst_step = (0.0f64, 0usize);
        let mut worst_ideal = (0.0f64, 0usize);
        for k in 0..p.rings {
            let got = radii[k] as f64;
            let dev = (got - ideal(k as f64 * dx)).abs();
            if dev > worst_ideal.0 {
                worst_ideal = (dev, k);
            }
            if k > 0 {
                let step = (got - radii[k - 1] as f64).abs();
                if step > worst_step.0 {
                    worst_step = (step, k);
                }
            }
        }
        let profile: Vec<String> = (14..30)
            .map(|k| format!("{k}:{:.4}", radii[k] as f64 / r))
            .collect();
        println!(
            "twist 180°, {count} links: ring radius / r around the elbow: {}",
            profile.join(" ")
        );
        println!(
            "{count} links: largest change between consecutive rings {:.4} r (rings {}–{}), bound {:.4} r; largest deviation from the ideal profile {:.2e} r (ring {})",
            worst_step.0 / r,
            worst_step.1 - 1,
            worst_step.1,
            bound / r,
            worst_ideal.0 / r,
            worst_ideal.1
        );
        assert!(
            worst_step.0 <= bound * (1.0 + 1e-3),
            "{count} links: step {:.4} r between rings {} and {} exceeds {:.4} r",
            worst_step.0 / r,
            worst_step.1 - 1,
            worst_step.1,
            bound / r
        );
        assert!(
            worst_ideal.0 <= 1e-4 * r,
            "{count} links: ring {} is {:.4} r off the ideal profile",
            worst_ideal.1,
            worst_ideal.0 / r
        );
    }
}

/// `LinkSettings::normal_fade`: absent/null reads as `None` and is not written back (old rig
/// files read and write unchanged); a value round-trips, reaches the link specs (weights
/// change on the humanoid, whose tapered limbs have normals with an axial part inside the
/// knee and elbow zones) and is range-checked when the links are inserted.
#[test]
fn rig_link_settings_carry_the_normal_fade() {
    use skinview::character::with_links;
    use skinview::rig::LinkSettings;
    let old: LinkSettings = serde_json::from_str(r#"{"count":2,"length_m":null}"#).unwrap();
    assert_eq!(
        old,
        LinkSettings {
            count: 2,
            length_m: None,
            normal_fade: None
        }
    );
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        r#"{"count":2,"length_m":null}"#
    );
    let set: LinkSettings =
        serde_json::from_str(r#"{"count":3,"length_m":0.1,"normal_fade":0.25}"#).unwrap();
    assert_eq!(set.normal_fade, Some(0.25));
    assert_eq!(
        serde_json::from_str::<LinkSettings>(&serde_json::to_string(&set).unwrap()).unwrap(),
        set
    );

    let weights_with = |fade: Option<f32>| {
        let mut rig = skinview::builtin::humanoid_rig().unwrap();
        for b in rig.bones.iter_mut() {
            if let Some(l) = b.links.as_mut() {
                l.normal_fade = fade;
            }
        }
        let rs = rig.to_scene().unwrap();
        with_links(&rs).map(|(scene, _, _, _)| {
            let w = scene
                .primitive(&scene.draws[0])
                .skin_weights
                .clone()
                .unwrap();
            (w.joints, w.weights)
        })
    };
    let default = weights_with(None).unwrap();
    assert_eq!(
        default,
        weights_with(Some(LinkSpec::DEFAULT_NORMAL_FADE)).unwrap()
    );
    let off = weights_with(Some(0.0)).unwrap();
    assert_ne!(
        default, off,
        "normal_fade = 0 should change some weights on the humanoid"
    );
    match weights_with(Some(1.5)) {
        Err(Error::Job {
            job: "insert_links",
            rule: 4,
            ..
        }) => {}
        other => panic!("expected insert_links rule 4, got {:?}", other.map(|_| ())),
    }
}
