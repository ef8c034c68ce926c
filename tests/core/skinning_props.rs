//! Properties over random seeded inputs, before faster kernels replace the current ones:
//! - `SkinningJob` (both weight layouts: four fixed slots and CSR) agrees with the f64
//!   reference (`skin::reference64`, which shares no code with it) on random rigs: random
//!   hierarchies with non-uniform scales, random inverse bind matrices, 1–8 influences;
//! - `reduce_influences` keeps the K largest weights of each vertex, in a stable order
//!   (equal weights keep their file order), renormalised to sum 1, and touches nothing else;
//! - `sort_by_joint` keeps each vertex's (joint, weight) pairs, puts them in joint order and
//!   the unused slots last as (0, 0), and the f64 reference skins the same either way.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{Mat4, Quat, Vec3};
use proptest::prelude::*;
use skinview::anim::Pose;
use skinview::math::Trs;
use skinview::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};
use skinview::skeleton::LocalToModelJob;
use skinview::skin::reference64::skin_draw_f64;
use skinview::skin::weights::{reduce_influences, sort_by_joint};
use skinview::skin::{PaletteJob, PaletteLayout, SkinningJob, VertexWeights};

use crate::common::{f32s, f64s};

/// Positions agree to this fraction of the rig's extent (f32 against f64 through a few
/// matrix products: ~1e-6 measured; margin for deep hierarchies).
const POSITION_TOLERANCE_REL: f32 = 2e-5;
/// Unit normals agree to this wherever the blended matrix is well conditioned.
const NORMAL_TOLERANCE: f32 = 2e-4;

fn trs() -> impl Strategy<Value = Trs> {
    (
        prop::array::uniform3(f32s(-1.0..1.0)),
        prop::array::uniform4(f32s(-1.0..1.0)),
        prop::array::uniform3(f32s(0.6..1.5)),
        any::<bool>(),
    )
        .prop_map(|(t, q, s, uniform)| {
            let q = Quat::from_array(q);
            Trs {
                translation: Vec3::from_array(t),
                rotation: if q.length() > 1e-3 {
                    q.normalize()
                } else {
                    Quat::IDENTITY
                },
                scale: if uniform {
                    Vec3::splat(s[0])
                } else {
                    Vec3::from_array(s)
                },
            }
        })
}

/// A random rig: `joints` joints (each parented to an earlier one or a root), a mesh node with
/// a skin over all of them, random inverse bind matrices, `vertices` vertices with up to
/// `influences` weights each (normalised, some slots zero), random rest and posed locals.
#[derive(Debug, Clone)]
struct RandomRig {
    scene: Scene,
    pose: Pose,
}

fn random_rig() -> impl Strategy<Value = RandomRig> {
    (1usize..10, 1usize..48, 1usize..=8).prop_flat_map(|(joints, vertices, influences)| {
        (
            prop::collection::vec((trs(), trs(), f64s(0.0..1.0)), joints),
            prop::collection::vec(trs(), joints),
            prop::collection::vec(
                (
                    prop::array::uniform3(f32s(-1.0..1.0)),
                    prop::array::uniform3(f32s(-1.0..1.0)),
                    prop::collection::vec((0..joints as u32, f32s(0.0..1.0)), influences),
                ),
                vertices,
            ),
        )
            .prop_map(move |(nodes, binds, verts)| build(influences, &nodes, &binds, &verts))
    })
}

type Vertex = ([f32; 3], [f32; 3], Vec<(u32, f32)>);

fn build(
    influences: usize,
    nodes: &[(Trs, Trs, f64)],
    binds: &[Trs],
    verts: &[Vertex],
) -> RandomRig {
    let joints = nodes.len();
    let width = influences.div_ceil(4) * 4;
    let mut raw_nodes: Vec<Node> = nodes
        .iter()
        .enumerate()
        .map(|(i, (rest, _, p))| Node {
            name: Some(format!("j{i}")),
            source_index: i,
            parent: (i > 0)
                .then_some((*p * i as f64) as usize)
                .filter(|&q| q < i),
            rest: *rest,
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        })
        .collect();
    raw_nodes.push(Node {
        name: Some("mesh".into()),
        source_index: joints,
        parent: None,
        rest: Trs::IDENTITY,
        matrix: None,
        mesh: Some(0),
        skin: Some(0),
        morph_weights: None,
    });
    let mut w = SkinWeights {
        width,
        joints: vec![0; verts.len() * width],
        weights: vec![0.0; verts.len() * width],
    };
    for (v, (_, _, pairs)) in verts.iter().enumerate() {
        let sum: f32 = pairs.iter().map(|p| p.1).sum();
        for (k, &(j, wt)) in pairs.iter().enumerate() {
            w.joints[v * width + k] = j;
            // A vertex whose random weights are all ~0 is bound fully to its first joint.
            w.weights[v * width + k] = if sum > 1e-3 {
                wt / sum
            } else if k == 0 {
                1.0
            } else {
                0.0
            };
        }
    }
    let raw = RawScene {
        name: "random rig".into(),
        nodes: raw_nodes,
        meshes: vec![Mesh {
            name: None,
            primitives: vec![Primitive {
                positions: verts.iter().map(|v| Vec3::from_array(v.0)).collect(),
                normals: Some(
                    verts
                        .iter()
                        .map(|v| Vec3::from_array(v.1).try_normalize().unwrap_or(Vec3::Y))
                        .collect(),
                ),
                tangents: None,
                indices: (0..verts.len() as u32).collect(),
                topology: Topology::Points,
                skin_weights: Some(w),
                morph_targets: Vec::new(),
                base_color: [1.0; 4],
                ..Default::default()
            }],
            default_morph_weights: Vec::new(),
        }],
        skins: vec![Skin {
            name: None,
            joints: (0..joints).collect(),
            joint_from_bind: binds.iter().map(Trs::to_mat4).collect(),
        }],
        animations: Vec::new(),
        roots: Vec::new(),
        report: Default::default(),
        textures: Vec::new(),
    };
    let scene = SceneBuilder::build(raw).expect("random rig builds");
    let mut pose = Pose::rest(&scene);
    // Posed locals by source index (the builder reorders nodes depth-first).
    for (i, n) in scene.nodes.iter().enumerate() {
        if let Some((_, posed, _)) = nodes.get(n.source_index) {
            pose.locals[i] = *posed;
        }
    }
    RandomRig { scene, pose }
}

/// Skin draw 0 with the f32 job in `layout`, returning (positions, unnormalised normals,
/// unit normals).
fn skin_f32(rig: &RandomRig, weights: &VertexWeights) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
    let scene = &rig.scene;
    let mut model = Vec::new();
    LocalToModelJob {
        scene,
        pose: &rig.pose,
        model_from_node: &mut model,
    }
    .run()
    .unwrap();
    let layout = PaletteLayout::new(scene);
    let mut palette: Vec<Mat4> = Vec::new();
    PaletteJob {
        scene,
        layout: &layout,
        model_from_node: &model,
        palette: &mut palette,
    }
    .run()
    .unwrap();
    let prim = scene.primitive(&scene.draws[0]);
    let n = prim.vertex_count();
    let run = |renormalize: bool| {
        let mut p = vec![Vec3::ZERO; n];
        let mut nr = vec![Vec3::ZERO; n];
        SkinningJob {
            palette: &palette[..],
            weights,
            positions: &prim.positions,
            normals: prim.normals.as_deref(),
            tangents: None,
            out_positions: &mut p,
            out_normals: Some(&mut nr),
            out_tangents: None,
            renormalize,
            orthonormalize_tangents: true,
            normal_mode: skinview::skin::NormalMode::Exact,
        }
        .run()
        .unwrap();
        (p, nr)
    };
    let (p, raw) = run(false);
    let (_, unit) = run(true);
    (p, raw, unit)
}

fn check_against_f64(rig: &RandomRig, weights: &VertexWeights, layout: &str) {
    let reference = skin_draw_f64(&rig.scene, &rig.pose, 0, None);
    let (p, raw, unit) = skin_f32(rig, weights);
    let extent = reference
        .positions
        .iter()
        .map(|q| q.length() as f32)
        .fold(1.0, f32::max);
    for (v, (a, b)) in p.iter().zip(&reference.positions).enumerate() {
        let e = (a.as_dvec3() - *b).length() as f32;
        assert!(
            e <= POSITION_TOLERANCE_REL * extent,
            "{layout}: vertex {v} at {a}, f64 reference {b} ({e:e} > {} of {extent})",
            POSITION_TOLERANCE_REL
        );
    }
    let reference_normals = reference.normals.expect("normals");
    for (v, ((u, r), b)) in unit.iter().zip(&raw).zip(&reference_normals).enumerate() {
        // Normals through a nearly singular blend (opposed joints averaged) are ill
        // conditioned in any precision: compare where the cofactor normal is not tiny.
        if r.length() < 0.05 {
            continue;
        }
        let e = (u.as_dvec3() - *b).length() as f32;
        assert!(
            e <= NORMAL_TOLERANCE,
            "{layout}: vertex {v} normal {u}, f64 reference {b} ({e:e})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn skinning_job_matches_the_f64_reference_in_both_layouts(rig in random_rig()) {
        let prim = rig.scene.primitive(&rig.scene.draws[0]);
        let sets = prim.skin_weights.as_ref().unwrap();
        // The four-slot layout whenever the vertices fit it, CSR always.
        let fixed = VertexWeights::from_skin_weights(sets);
        check_against_f64(&rig, &fixed, if sets.max_influences() <= 4 { "4-slot" } else { "CSR (auto)" });
        check_against_f64(&rig, &VertexWeights::csr_from_skin_weights(sets), "CSR");
    }

    #[test]
    fn reduction_keeps_the_k_largest_in_stable_order_summing_to_one(
        width_sets in 1usize..=3,
        k in 1usize..=12,
        rows in prop::collection::vec(prop::collection::vec((0u32..64, 0u8..5), 12), 1..40),
    ) {
        let width = width_sets * 4;
        // Weights from a few levels so ties are common; some slots zero.
        let mut w = SkinWeights { width, joints: vec![0; rows.len() * width], weights: vec![0.0; rows.len() * width] };
        for (v, row) in rows.iter().enumerate() {
            let sum: f32 = row[..width].iter().map(|p| p.1 as f32).sum();
            for (i, &(j, level)) in row[..width].iter().enumerate() {
                w.joints[v * width + i] = j;
                w.weights[v * width + i] = if sum > 0.0 { level as f32 / sum } else if i == 0 { 1.0 } else { 0.0 };
            }
        }
        let (r, stats) = reduce_influences(&w, k);
        prop_assert_eq!(r.vertex_count(), w.vertex_count());
        prop_assert_eq!(r.width, (k.div_ceil(4) * 4).min(w.width.max(4)));
        let mut reduced = 0;
        for v in 0..w.vertex_count() {
            let input: Vec<(u32, f32)> = (0..width)
                .map(|i| (w.joints[v * width + i], w.weights[v * width + i]))
                .filter(|p| p.1 != 0.0)
                .collect();
            let output: Vec<(u32, f32)> = (0..r.width)
                .map(|i| (r.joints[v * r.width + i], r.weights[v * r.width + i]))
                .filter(|p| p.1 != 0.0)
                .collect();
            prop_assert_eq!(output.len(), input.len().min(k), "vertex {}: kept count", v);
            let sum: f32 = output.iter().map(|p| p.1).sum();
            prop_assert!((sum - 1.0).abs() < 1e-5, "vertex {}: sums to {}", v, sum);
            if input.len() <= k {
                // Untouched: same pairs, same order.
                prop_assert_eq!(&output, &input, "vertex {} changed", v);
                continue;
            }
            reduced += 1;
            // The K largest, ties broken by file order: a stable sort of the input by weight.
            let mut expected = input.clone();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1));
            expected.truncate(k);
            let kept: f32 = expected.iter().map(|p| p.1).sum();
            for ((oj, ow), (ej, ew)) in output.iter().zip(&expected) {
                prop_assert_eq!(oj, ej, "vertex {}: joint order", v);
                prop_assert!((ow - ew / kept).abs() < 1e-6, "vertex {}: weight {} vs {}", v, ow, ew / kept);
            }
            // Nothing kept is smaller than anything dropped.
            let smallest_kept = expected.iter().map(|p| p.1).fold(f32::INFINITY, f32::min);
            let dropped: Vec<f32> = {
                let mut all = input.clone();
                all.sort_by(|a, b| b.1.total_cmp(&a.1));
                all[k..].iter().map(|p| p.1).collect()
            };
            prop_assert!(dropped.iter().all(|&d| d <= smallest_kept));
        }
        prop_assert_eq!(stats.vertices_reduced, reduced);
    }

    #[test]
    fn sorting_by_joint_keeps_every_influence_and_the_skin(rig in random_rig()) {
        let before = rig.scene.primitive(&rig.scene.draws[0]).skin_weights.clone().unwrap();
        let mut after = before.clone();
        sort_by_joint(&mut after);
        prop_assert_eq!(after.width, before.width);
        let pairs = |s: &SkinWeights, v: usize| -> Vec<(u32, f32)> {
            (0..s.width).map(|i| (s.joints[v * s.width + i], s.weights[v * s.width + i])).collect()
        };
        for v in 0..before.vertex_count() {
            let mut expected: Vec<(u32, f32)> = pairs(&before, v).into_iter().filter(|p| p.1 != 0.0).collect();
            expected.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            let got = pairs(&after, v);
            let (used, unused) = got.split_at(expected.len());
            prop_assert!(used.windows(2).all(|p| p[0].0 <= p[1].0), "vertex {}: {:?}", v, got);
            let mut used_sorted = used.to_vec();
            used_sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            prop_assert_eq!(&used_sorted, &expected, "vertex {}", v);
            prop_assert!(unused.iter().all(|&p| p == (0, 0.0)), "vertex {}: {:?}", v, got);
        }
        // The same skin, to the order of a float sum, on the f64 reference.
        let a = skin_draw_f64(&rig.scene, &rig.pose, 0, Some(&before));
        let b = skin_draw_f64(&rig.scene, &rig.pose, 0, Some(&after));
        for (x, y) in a.positions.iter().zip(&b.positions) {
            prop_assert!((*x - *y).length() <= 1e-9 * (1.0 + x.length()), "{} vs {}", x, y);
        }
    }
}
