//! The glTF rules the importer claims (src/io/gltf_import.rs), one test each, against
//! hand-computed or analytic expectations. Test files are built in code (RawScene →
//! SceneBuilder → export_glb) and, for malformed files, edited at the JSON/BIN level.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::f32::consts::FRAC_PI_2;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;

use glam::{DVec3, Mat4, Quat, Vec3, Vec4};
use proptest::prelude::*;
use serde_json::{Value, json};
use skinview::anim::{Animation, Channel, Interpolation, Path as AnimPath, Sampler};
use skinview::frame::{CpuSkinner, FrameState};
use skinview::io::gltf_export::{ExportOptions, JointEncoding, WeightEncoding, export_glb};
use skinview::io::gltf_import::{import_file, import_slice};
use skinview::math::Trs;
use skinview::scene::{
    Draw, Mesh, MorphTarget, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights,
    Topology,
};
use skinview::skin::SkinnedVertices;

use common::glb;

const FILE: &str = "test.glb";
/// f32 arithmetic on values of magnitude ~10: a few ulps.
const EPS: f64 = 2e-5;

// ---------------------------------------------------------------------------------------
// Scene building

fn import(bytes: &[u8]) -> skinview::Result<Scene> {
    import_slice(bytes, Path::new(FILE))
}

fn trs(t: [f32; 3], r: Quat, s: [f32; 3]) -> Trs {
    Trs {
        translation: Vec3::from(t),
        rotation: r,
        scale: Vec3::from(s),
    }
}

fn at(x: f32, y: f32, z: f32) -> Trs {
    Trs {
        translation: Vec3::new(x, y, z),
        ..Trs::IDENTITY
    }
}

/// Append a node to `raw` and return its index.
fn add(raw: &mut RawScene, name: &str, parent: Option<usize>, rest: Trs) -> usize {
    let i = raw.nodes.len();
    raw.nodes.push(Node {
        name: Some(name.to_string()),
        source_index: i,
        parent,
        rest,
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    });
    i
}

/// A point-list primitive over `positions`.
fn points(positions: &[[f32; 3]]) -> Primitive {
    Primitive {
        positions: positions.iter().map(|&p| Vec3::from(p)).collect(),
        normals: None,
        tangents: None,
        indices: (0..positions.len() as u32).collect(),
        topology: Topology::Points,
        skin_weights: None,
        morph_targets: Vec::new(),
        base_color: [1.0; 4],
        ..Default::default()
    }
}

/// Skin weights of `width` per vertex from (joints, weights) rows, zero-padded.
fn weights(width: usize, rows: &[(&[u32], &[f32])]) -> SkinWeights {
    let mut w = SkinWeights {
        width,
        joints: vec![0; rows.len() * width],
        weights: vec![0.0; rows.len() * width],
    };
    for (v, (j, x)) in rows.iter().enumerate() {
        w.joints[v * width..v * width + j.len()].copy_from_slice(j);
        w.weights[v * width..v * width + x.len()].copy_from_slice(x);
    }
    w
}

fn mesh(primitives: Vec<Primitive>) -> Mesh {
    Mesh {
        name: None,
        primitives,
        default_morph_weights: Vec::new(),
    }
}

fn skin(joints: Vec<usize>, joint_from_bind: Vec<Mat4>) -> Skin {
    Skin {
        name: None,
        joints,
        joint_from_bind,
    }
}

fn sampler(
    interpolation: Interpolation,
    times_s: &[f32],
    values: &[f32],
    components: usize,
    is_rotation: bool,
) -> Sampler {
    Sampler {
        interpolation,
        times_s: times_s.to_vec(),
        values: values.to_vec(),
        components,
        is_rotation,
    }
}

/// SceneBuilder rule 5: two channels of one animation on the same node and property are
/// refused (whatever made the raw scene: glTF's validation names the file's field first),
/// while the same node's other properties, and the same target in another animation, are fine.
#[test]
fn two_channels_on_one_target_are_an_error() {
    let mut raw = RawScene::default();
    let root = add(&mut raw, "root", None, Trs::IDENTITY);
    let arm = add(&mut raw, "arm", Some(root), at(1.0, 0.0, 0.0));
    let move_x = || Channel {
        node: arm,
        path: AnimPath::Translation,
        sampler: sampler(Interpolation::Linear, &[0.0, 1.0], &[0.0; 6], 3, false),
    };
    let turn = Channel {
        node: arm,
        path: AnimPath::Rotation,
        sampler: sampler(
            Interpolation::Linear,
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            4,
            true,
        ),
    };
    let anim = |channels| Animation {
        name: Some("a".into()),
        channels,
    };
    raw.animations = vec![anim(vec![move_x(), turn.clone()]), anim(vec![move_x()])];
    SceneBuilder::build(raw.clone()).expect("one channel per target in each animation");
    raw.animations[0].channels.push(move_x());
    let err = SceneBuilder::build(raw)
        .expect_err("a second translation channel")
        .to_string();
    assert!(
        err.contains("animations[0].channels[2].target")
            && err.contains("translation")
            && err.contains("channels[0]"),
        "{err}"
    );
}

fn export(raw: RawScene, options: &ExportOptions) -> Vec<u8> {
    let scene = SceneBuilder::build(raw).expect("test scene is valid");
    export_glb(&scene, options).expect("export")
}

fn roundtrip(raw: RawScene, options: &ExportOptions) -> Scene {
    import(&export(raw, options)).expect("import")
}

fn node_index(scene: &Scene, name: &str) -> usize {
    scene
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// Index in `scene.draws` of primitive `primitive` of node `name`.
fn draw_of(scene: &Scene, name: &str, primitive: usize) -> usize {
    let n = node_index(scene, name);
    scene
        .draws
        .iter()
        .position(|d| d.node == n && d.primitive == primitive)
        .unwrap_or_else(|| panic!("no draw for {name}/{primitive}"))
}

fn frame_at(scene: &Scene, anim: Option<usize>, time_s: f32) -> FrameState {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, anim, time_s).expect("evaluate");
    frame
}

/// CPU-skinned output of every draw.
fn skinned(scene: &Scene, anim: Option<usize>, time_s: f32) -> Vec<SkinnedVertices> {
    let frame = frame_at(scene, anim, time_s);
    CpuSkinner::new(scene, None)
        .skin_all(scene, &frame)
        .expect("skin")
}

#[track_caller]
fn assert_near(actual: Vec3, expected: DVec3, tol: f64, what: &str) {
    let err = (actual.as_dvec3() - expected).length();
    assert!(
        err <= tol,
        "{what}: got {actual:?}, expected {expected:?} (error {err:.3e} > {tol:.1e})"
    );
}

fn v(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// Import in `catch_unwind`: must be an `Err` (no panic) whose message contains every needle.
#[track_caller]
fn expect_error(bytes: &[u8], needles: &[&str]) -> String {
    let msg = match catch_unwind(AssertUnwindSafe(|| import(bytes))) {
        Err(_) => panic!("importer panicked (expected an error naming {needles:?})"),
        Ok(Ok(_)) => panic!("import succeeded, expected an error naming {needles:?}"),
        Ok(Err(e)) => e.to_string(),
    };
    for n in needles {
        assert!(msg.contains(n), "error {msg:?} does not contain {n:?}");
    }
    msg
}

fn has_note(scene: &Scene, field_part: &str, message_part: &str) -> bool {
    scene
        .report
        .notes
        .iter()
        .any(|n| n.repaired && n.field.contains(field_part) && n.message.contains(message_part))
}

const F32_U8: ExportOptions = ExportOptions {
    joints: JointEncoding::U8,
    weights: WeightEncoding::F32,
    write_inverse_bind_matrices: true,
};

// ---------------------------------------------------------------------------------------
// Skins and hierarchy

/// Missing inverseBindMatrices = identity, and the skinned mesh node's own transform and its
/// parent's are ignored: vertices go through the joint matrices only.
#[test]
fn missing_inverse_bind_matrices_are_identity_and_mesh_node_transform_is_ignored() {
    let mut raw = RawScene::default();
    let group = add(
        &mut raw,
        "group",
        None,
        trs([0.0, 0.0, -7.0], Quat::from_rotation_x(0.7), [2.0; 3]),
    );
    let mesh_node = add(
        &mut raw,
        "skinned",
        Some(group),
        trs([100.0, 0.0, 0.0], Quat::from_rotation_y(1.0), [3.0; 3]),
    );
    let j0 = add(&mut raw, "j0", None, at(1.0, 2.0, 3.0));
    let j1 = add(
        &mut raw,
        "j1",
        Some(j0),
        trs([0.0, 1.0, 0.0], Quat::from_rotation_z(FRAC_PI_2), [1.0; 3]),
    );
    let mut prim = points(&[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]);
    prim.skin_weights = Some(weights(
        4,
        &[(&[0], &[1.0]), (&[1], &[1.0]), (&[0, 1], &[0.5, 0.5])],
    ));
    raw.meshes.push(mesh(vec![prim]));
    // The scene's own matrices are not written: the file has no inverseBindMatrices.
    raw.skins.push(skin(
        vec![j0, j1],
        vec![Mat4::from_translation(Vec3::splat(50.0)); 2],
    ));
    raw.nodes[mesh_node].mesh = Some(0);
    raw.nodes[mesh_node].skin = Some(0);
    let bytes = export(
        raw,
        &ExportOptions {
            write_inverse_bind_matrices: false,
            ..Default::default()
        },
    );
    assert!(
        glb::json_of(&bytes)["skins"][0]
            .get("inverseBindMatrices")
            .is_none()
    );

    let scene = import(&bytes).expect("import");
    assert!(
        scene.skins[0]
            .joint_from_bind
            .iter()
            .all(|m| *m == Mat4::IDENTITY)
    );
    let out = &skinned(&scene, None, 0.0)[draw_of(&scene, "skinned", 0)].positions;
    // j0 world = T(1,2,3); j1 world = T(1,2,3) T(0,1,0) Rz(90°), Rz(90°) (x,y,z) = (-y,x,z).
    assert_near(out[0], v(2.0, 2.0, 3.0), EPS, "vertex on j0");
    assert_near(out[1], v(1.0, 4.0, 3.0), EPS, "vertex on j1");
    // (0,0,2): j0 → (1,2,5), j1 → (1,3,5); half each.
    assert_near(out[2], v(1.0, 2.5, 5.0), EPS, "vertex on both");
}

/// Joints that are not scene roots: their world matrices include the parent's transform;
/// inverse bind matrices are applied after (vertex = joint world · IBM · position).
#[test]
fn joints_under_a_transformed_parent_include_its_transform() {
    let mut raw = RawScene::default();
    let armature = add(
        &mut raw,
        "armature",
        None,
        trs([0.0, 0.0, 5.0], Quat::from_rotation_z(FRAC_PI_2), [2.0; 3]),
    );
    let j0 = add(&mut raw, "j0", Some(armature), at(1.0, 0.0, 0.0));
    let j1 = add(&mut raw, "j1", Some(j0), at(0.0, 3.0, 0.0));
    let mut prim = points(&[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]);
    prim.skin_weights = Some(weights(4, &[(&[0], &[1.0]), (&[1], &[1.0])]));
    raw.meshes.push(mesh(vec![prim.clone()]));
    raw.meshes.push(mesh(vec![prim]));
    // Skin 0: identity IBMs. Skin 1: j0's inverse bind matrix = inverse(armature · T(1,0,0))
    // written out by hand, so a vertex bound to j0 stays at its bind position.
    let j0_from_bind = Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0))
        * Mat4::from_scale(Vec3::splat(0.5))
        * Mat4::from_rotation_z(-FRAC_PI_2)
        * Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0));
    raw.skins.push(skin(vec![j0, j1], vec![Mat4::IDENTITY; 2]));
    raw.skins
        .push(skin(vec![j0, j1], vec![j0_from_bind, Mat4::IDENTITY]));
    for (i, name) in ["identity_ibm", "bind_ibm"].into_iter().enumerate() {
        let n = add(&mut raw, name, None, Trs::IDENTITY);
        raw.nodes[n].mesh = Some(i);
        raw.nodes[n].skin = Some(i);
    }
    let scene = roundtrip(raw, &Default::default());
    let frame = frame_at(&scene, None, 0.0);
    // armature: S(2), then Rz(90°): (x,y,z) → (-2y, 2x, 2z), then + (0,0,5).
    let j0_origin = frame.model_from_node[node_index(&scene, "j0")].transform_point3(Vec3::ZERO);
    assert_near(j0_origin, v(0.0, 2.0, 5.0), EPS, "j0 world origin");
    let out = skinned(&scene, None, 0.0);
    let a = &out[draw_of(&scene, "identity_ibm", 0)].positions;
    // (0,1,0) in j0 space = (1,1,0) in armature space.
    assert_near(a[0], v(-2.0, 2.0, 5.0), EPS, "vertex on j0");
    // j1 origin = (1,3,0) in armature space.
    assert_near(a[1], v(-6.0, 2.0, 5.0), EPS, "vertex on j1");
    let b = &out[draw_of(&scene, "bind_ibm", 0)].positions;
    assert_near(
        b[0],
        v(0.0, 1.0, 0.0),
        EPS,
        "vertex with its bind matrix stays at its bind position",
    );
}

/// Several skins in one file and several nodes sharing a mesh: one draw per (node, primitive)
/// in node order, each with its node's skin.
#[test]
fn several_skins_and_shared_meshes_draw_per_node_in_order() {
    let mut raw = RawScene::default();
    let j0 = add(&mut raw, "j0", None, at(10.0, 0.0, 0.0));
    let j1 = add(&mut raw, "j1", None, at(0.0, 20.0, 0.0));
    let mut p0 = points(&[[1.0, 0.0, 0.0]]);
    p0.skin_weights = Some(weights(4, &[(&[0], &[1.0])]));
    let mut p1 = points(&[[0.0, 0.0, 1.0]]);
    p1.skin_weights = Some(weights(4, &[(&[0], &[1.0])]));
    raw.meshes.push(mesh(vec![p0, p1]));
    raw.meshes.push(mesh(vec![points(&[[0.0, 0.0, 0.0]])]));
    raw.skins.push(skin(vec![j0], vec![Mat4::IDENTITY]));
    raw.skins.push(skin(vec![j1], vec![Mat4::IDENTITY]));
    for (name, m, s, t) in [
        ("a_first", 0, Some(0), 0.0),
        ("rigid", 1, None, 30.0),
        ("a_second", 0, Some(1), 0.0),
    ] {
        let n = add(&mut raw, name, None, at(0.0, 0.0, t));
        raw.nodes[n].mesh = Some(m);
        raw.nodes[n].skin = s;
    }
    let scene = roundtrip(raw, &Default::default());
    let (a, r, b) = (
        node_index(&scene, "a_first"),
        node_index(&scene, "rigid"),
        node_index(&scene, "a_second"),
    );
    let expected = vec![
        Draw {
            node: a,
            mesh: 0,
            primitive: 0,
            skin: Some(0),
        },
        Draw {
            node: a,
            mesh: 0,
            primitive: 1,
            skin: Some(0),
        },
        Draw {
            node: r,
            mesh: 1,
            primitive: 0,
            skin: None,
        },
        Draw {
            node: b,
            mesh: 0,
            primitive: 0,
            skin: Some(1),
        },
        Draw {
            node: b,
            mesh: 0,
            primitive: 1,
            skin: Some(1),
        },
    ];
    assert_eq!(scene.draws, expected);
    let out = skinned(&scene, None, 0.0);
    let expect = [
        v(11.0, 0.0, 0.0),
        v(10.0, 0.0, 1.0),
        v(0.0, 0.0, 30.0),
        v(1.0, 20.0, 0.0),
        v(0.0, 20.0, 1.0),
    ];
    for (i, e) in expect.into_iter().enumerate() {
        assert_near(out[i].positions[0], e, EPS, &format!("draw {i}"));
    }
}

/// RecursiveSkeletons (Khronos sample): 84 nodes share one mesh, each with its own skin.
#[test]
fn recursive_skeletons_has_84_skinned_draws() {
    let scene = import_file(&common::model("RecursiveSkeletons")).expect("import");
    let skinned: Vec<&Draw> = scene.draws.iter().filter(|d| d.skin.is_some()).collect();
    assert_eq!(skinned.len(), 84);
    let mut skins: Vec<usize> = skinned.iter().filter_map(|d| d.skin).collect();
    skins.sort();
    skins.dedup();
    assert_eq!(skins.len(), 84, "each skinned draw has its own skin");
}

// ---------------------------------------------------------------------------------------
// Joint/weight sets and encodings

/// Eight joints at these offsets from the origin; a vertex at the origin moves by the
/// weighted sum of the offsets.
const OFFSETS8: [[f32; 3]; 8] = [
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 1.0, 0.0],
    [0.0, 0.0, 10.0],
    [0.0, 10.0, 0.0],
    [10.0, 0.0, 0.0],
    [10.0, 10.0, 10.0],
];

fn translated_joints(raw: &mut RawScene, offsets: &[[f32; 3]]) -> Vec<usize> {
    offsets
        .iter()
        .enumerate()
        .map(|(k, o)| add(raw, &format!("joint{k}"), None, at(o[0], o[1], o[2])))
        .collect()
}

/// A skinned mesh node over `prim`, skin 0 over `joints` (identity IBMs).
fn skinned_mesh_node(raw: &mut RawScene, prim: Primitive, joints: Vec<usize>) {
    let n = joints.len();
    raw.meshes.push(mesh(vec![prim]));
    raw.skins.push(skin(joints, vec![Mat4::IDENTITY; n]));
    let m = add(raw, "skinned", None, Trs::IDENTITY);
    raw.nodes[m].mesh = Some(raw.meshes.len() - 1);
    raw.nodes[m].skin = Some(raw.skins.len() - 1);
}

/// JOINTS_1/WEIGHTS_1 are read and all eight weights are used.
#[test]
fn eight_influences_use_joints_1_and_weights_1() {
    let ws = [0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05];
    // Σ w_k · offset_k by hand: x = .3+.1+.5+.5, y = .2+.1+1+.5, z = .1+1+.5.
    let expected = v(1.4, 1.8, 1.6);
    let unorm16 = ExportOptions {
        joints: JointEncoding::U16,
        weights: WeightEncoding::Unorm16,
        write_inverse_bind_matrices: true,
    };
    // Unorm16: each weight off by < 1/65535, offsets at most |(10,10,10)| < 17.33 long.
    for (options, tol) in [(F32_U8, EPS), (unorm16, 8.0 / 65535.0 * 17.33 + EPS)] {
        let mut raw = RawScene::default();
        let joints = translated_joints(&mut raw, &OFFSETS8);
        let mut prim = points(&[[0.0, 0.0, 0.0]]);
        prim.skin_weights = Some(weights(8, &[(&[0, 1, 2, 3, 4, 5, 6, 7], &ws)]));
        skinned_mesh_node(&mut raw, prim, joints);
        let bytes = export(raw, &options);
        let attrs = &glb::json_of(&bytes)["meshes"][0]["primitives"][0]["attributes"];
        assert!(
            attrs.get("JOINTS_1").is_some() && attrs.get("WEIGHTS_1").is_some(),
            "file has a second set"
        );
        let scene = import(&bytes).expect("import");
        let sw = scene.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .expect("weights");
        assert_eq!((sw.width, sw.max_influences()), (8, 8));
        let out = skinned(&scene, None, 0.0);
        assert_near(out[0].positions[0], expected, tol, &format!("{options:?}"));
        assert!(
            scene.report.notes.is_empty(),
            "no repair expected: {:?}",
            scene.report.notes
        );
    }
}

/// u8 and u16 joints; float, unorm8 and unorm16 weights decode to the same skinned positions,
/// within the quantisation error: with integer weights summing exactly to T, each weight is
/// off by less than 1/T, so a position is off by less than Σ_k (1/T)·|offset_k|.
#[test]
fn joint_and_weight_encodings_decode_to_the_same_positions() {
    let offsets = [
        [1.0, 0.0, 0.0],
        [0.0, 2.0, 0.0],
        [0.0, 0.0, 3.0],
        [-4.0, 0.0, 0.0],
    ];
    let third = 1.0 / 3.0;
    let rows: [[f64; 4]; 4] = [
        [third, third, third, 0.0],
        [0.1, 0.2, 0.3, 0.4],
        [1.0 / 7.0, 2.0 / 7.0, 4.0 / 7.0, 0.0],
        [0.999, 0.001, 0.0, 0.0],
    ];
    let expected: Vec<DVec3> = rows
        .iter()
        .map(|w| {
            (0..4)
                .map(|k| DVec3::from_array(offsets[k].map(f64::from)) * w[k])
                .sum()
        })
        .collect();
    let bound = |t: f64| (1.0 + 2.0 + 3.0 + 4.0) / t + EPS;
    for (joints, jct) in [(JointEncoding::U8, 5121), (JointEncoding::U16, 5123)] {
        for (wt, wct, normalized, tol) in [
            (WeightEncoding::F32, 5126, false, EPS),
            (WeightEncoding::Unorm8, 5121, true, bound(255.0)),
            (WeightEncoding::Unorm16, 5123, true, bound(65535.0)),
        ] {
            let options = ExportOptions {
                joints,
                weights: wt,
                write_inverse_bind_matrices: true,
            };
            let mut raw = RawScene::default();
            let js = translated_joints(&mut raw, &offsets);
            let mut prim = points(&[[0.0; 3]; 4]);
            let w32: Vec<[f32; 4]> = rows.iter().map(|r| r.map(|x| x as f32)).collect();
            let rows_ref: Vec<(&[u32], &[f32])> =
                w32.iter().map(|w| (&[0u32, 1, 2, 3][..], &w[..])).collect();
            prim.skin_weights = Some(weights(4, &rows_ref));
            skinned_mesh_node(&mut raw, prim, js);
            let bytes = export(raw, &options);
            let json = glb::json_of(&bytes);
            let acc = |name: &str| {
                &json["accessors"]
                    [glb::accessor_at(&json, &format!("/meshes/0/primitives/0/attributes/{name}"))]
            };
            assert_eq!(acc("JOINTS_0")["componentType"], json!(jct));
            assert_eq!(acc("WEIGHTS_0")["componentType"], json!(wct));
            assert_eq!(
                acc("WEIGHTS_0")
                    .get("normalized")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                normalized
            );

            let scene = import(&bytes).expect("import");
            assert!(
                scene.report.notes.is_empty(),
                "{options:?}: exact sums need no repair: {:?}",
                scene.report.notes
            );
            let out = skinned(&scene, None, 0.0);
            for (i, e) in expected.iter().enumerate() {
                assert_near(
                    out[0].positions[i],
                    *e,
                    tol,
                    &format!("{options:?} vertex {i}"),
                );
            }
        }
    }
}

/// u16 joint indices above 255 select the right joint.
#[test]
fn u16_joint_indices_above_255() {
    let mut raw = RawScene::default();
    let offsets: Vec<[f32; 3]> = (0..300).map(|k| [k as f32, 0.0, 0.0]).collect();
    let js = translated_joints(&mut raw, &offsets);
    let mut prim = points(&[[0.0, 1.0, 0.0]]);
    prim.skin_weights = Some(weights(4, &[(&[299, 256], &[0.75, 0.25])]));
    skinned_mesh_node(&mut raw, prim, js);
    let scene = SceneBuilder::build(raw).expect("valid");
    assert!(
        export_glb(&scene, &F32_U8).is_err(),
        "u8 cannot hold joint 299"
    );
    let scene =
        import(&export_glb(&scene, &ExportOptions::default()).expect("export")).expect("import");
    let out = skinned(&scene, None, 0.0);
    assert_near(
        out[0].positions[0],
        v(0.75 * 299.0 + 0.25 * 256.0, 1.0, 0.0),
        1e-4,
        "vertex",
    );
}

/// The exporter's unorm weights: integers sum exactly to 255 / 65535 per vertex (what the
/// glTF validator requires) and each is within one unit of the exact weight.
#[test]
fn exported_unorm_weights_sum_exactly() {
    let rows: [[f32; 8]; 3] = [
        [0.125; 8],
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.01, 0.02, 0.03, 0.04, 0.2, 0.2, 0.25, 0.25],
    ];
    for (wt, total) in [
        (WeightEncoding::Unorm8, 255.0),
        (WeightEncoding::Unorm16, 65535.0),
    ] {
        let mut raw = RawScene::default();
        let js = translated_joints(&mut raw, &OFFSETS8);
        let mut prim = points(&[[0.0; 3]; 3]);
        let rows_ref: Vec<(&[u32], &[f32])> = rows
            .iter()
            .map(|w| (&[0u32, 1, 2, 3, 4, 5, 6, 7][..], &w[..]))
            .collect();
        prim.skin_weights = Some(weights(8, &rows_ref));
        skinned_mesh_node(&mut raw, prim, js);
        let bytes = export(
            raw,
            &ExportOptions {
                weights: wt,
                ..Default::default()
            },
        );
        let json = glb::json_of(&bytes);
        let sets = [0, 1].map(|s| {
            glb::accessor_at(
                &json,
                &format!("/meshes/0/primitives/0/attributes/WEIGHTS_{s}"),
            )
        });
        for (vtx, row) in rows.iter().enumerate() {
            let q: Vec<f64> = (0..8)
                .map(|k| glb::read_component(&bytes, sets[k / 4], vtx, k % 4))
                .collect();
            assert_eq!(q.iter().sum::<f64>(), total, "{wt:?} vertex {vtx}: {q:?}");
            for k in 0..8 {
                assert!(
                    (q[k] - row[k] as f64 * total).abs() < 1.0,
                    "{wt:?} vertex {vtx} weight {k}: {} for {}",
                    q[k],
                    row[k]
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Weight repairs

/// Two joints at (2,0,0) and (0,4,0); one vertex at the origin with `joints`/`ws`.
fn two_joint_scene(joints: &[u32], ws: &[f32]) -> Scene {
    let mut raw = RawScene::default();
    let js = translated_joints(&mut raw, &[[2.0, 0.0, 0.0], [0.0, 4.0, 0.0]]);
    let mut prim = points(&[[0.0, 0.0, 0.0]]);
    prim.skin_weights = Some(weights(4, &[(joints, ws)]));
    skinned_mesh_node(&mut raw, prim, js);
    roundtrip(raw, &F32_U8)
}

#[test]
fn float_weights_not_summing_to_one_are_renormalised_and_reported() {
    let scene = two_joint_scene(&[0, 1], &[0.25, 0.25]);
    assert!(
        has_note(&scene, "WEIGHTS_0", ""),
        "repair reported: {:?}",
        scene.report.notes
    );
    let w = &scene.meshes[0].primitives[0]
        .skin_weights
        .as_ref()
        .expect("weights")
        .weights;
    assert_eq!(&w[..2], &[0.5, 0.5]);
    // Renormalised to 1/2 each: (1, 2, 0), not the unnormalised (0.5, 1, 0).
    assert_near(
        skinned(&scene, None, 0.0)[0].positions[0],
        v(1.0, 2.0, 0.0),
        EPS,
        "vertex",
    );
}

#[test]
fn float_weights_within_tolerance_are_kept() {
    // Off 1 by 5e-4 < 1e-3: kept as written and not reported.
    let scene = two_joint_scene(&[0, 1], &[0.5, 0.4995]);
    assert!(scene.report.notes.is_empty(), "{:?}", scene.report.notes);
    assert_eq!(
        scene.meshes[0].primitives[0]
            .skin_weights
            .as_ref()
            .expect("weights")
            .weights[1],
        0.4995
    );
}

#[test]
fn all_zero_weights_are_bound_to_the_first_listed_joint_and_reported() {
    let scene = two_joint_scene(&[1, 0], &[0.0, 0.0]);
    assert!(
        has_note(&scene, "WEIGHTS_0", "all-zero"),
        "repair reported: {:?}",
        scene.report.notes
    );
    // First listed joint is joint 1, at (0,4,0).
    assert_near(
        skinned(&scene, None, 0.0)[0].positions[0],
        v(0.0, 4.0, 0.0),
        EPS,
        "vertex",
    );
}

#[test]
fn zero_weight_on_out_of_range_joint_is_reset_and_reported() {
    let scene = two_joint_scene(&[0, 9, 1], &[0.5, 0.0, 0.5]);
    assert!(
        has_note(&scene, "JOINTS_0", ""),
        "repair reported: {:?}",
        scene.report.notes
    );
    let sw = scene.meshes[0].primitives[0]
        .skin_weights
        .as_ref()
        .expect("weights");
    assert!(sw.joints.iter().all(|&j| j < 2), "joints {:?}", sw.joints);
    assert_near(
        skinned(&scene, None, 0.0)[0].positions[0],
        v(1.0, 2.0, 0.0),
        EPS,
        "vertex",
    );
}

// ---------------------------------------------------------------------------------------
// Node transforms and normals

/// A node `matrix` and the same transform as TRS give the same world transform.
#[test]
fn node_matrix_and_trs_give_the_same_world_transform() {
    let mut raw = RawScene::default();
    let m_parent = add(&mut raw, "m_parent", None, Trs::IDENTITY);
    // T(1,2,3) · Ry(90°) · S(2) by hand, column-major: Ry(90°) maps x→(0,0,-1), z→(1,0,0).
    raw.nodes[m_parent].matrix = Some(Mat4::from_cols_array(&[
        0.0, 0.0, -2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1.0,
    ]));
    let t_parent = add(
        &mut raw,
        "t_parent",
        None,
        trs([1.0, 2.0, 3.0], Quat::from_rotation_y(FRAC_PI_2), [2.0; 3]),
    );
    raw.meshes.push(mesh(vec![points(&[[1.0, 0.0, 0.0]])]));
    for (name, parent) in [("m_child", m_parent), ("t_child", t_parent)] {
        let c = add(&mut raw, name, Some(parent), at(0.0, 1.0, 0.0));
        raw.nodes[c].mesh = Some(0);
    }
    let bytes = export(raw, &Default::default());
    let json = glb::json_of(&bytes);
    assert!(
        json["nodes"][m_parent].get("matrix").is_some()
            && json["nodes"][m_parent].get("translation").is_none()
    );
    assert!(
        json["nodes"][t_parent].get("matrix").is_none()
            && json["nodes"][t_parent].get("translation").is_some()
    );
    let scene = import(&bytes).expect("import");
    assert!(scene.nodes[node_index(&scene, "m_parent")].matrix.is_some());
    let frame = frame_at(&scene, None, 0.0);
    let world = |name: &str| frame.model_from_node[node_index(&scene, name)];
    // (1,0,0) → S (2,0,0) → Ry (0,0,-2) → T (1,2,1).
    for parent in ["m_parent", "t_parent"] {
        assert_near(
            world(parent).transform_point3(Vec3::X),
            v(1.0, 2.0, 1.0),
            EPS,
            parent,
        );
    }
    assert!(
        world("m_child").abs_diff_eq(world("t_child"), 1e-6),
        "{} vs {}",
        world("m_child"),
        world("t_child")
    );
    // Child vertex (1,0,0) + (0,1,0) → S (2,2,0) → Ry (0,2,-2) → T (1,4,1).
    let out = skinned(&scene, None, 0.0);
    for name in ["m_child", "t_child"] {
        assert_near(
            out[draw_of(&scene, name, 0)].positions[0],
            v(1.0, 4.0, 1.0),
            EPS,
            name,
        );
    }
}

/// A mirrored (negative-determinant) transform keeps normals outward: normal matrix =
/// inverse-transpose with its sign. For diag(-2,1,1) that is diag(-1/2,1,1) (a plain cofactor
/// matrix, diag(1,-2,-2), would turn them inward).
#[test]
fn mirrored_transform_keeps_normals_outward() {
    let mut raw = RawScene::default();
    let s = 1.0 / 2f32.sqrt();
    let mut prim = points(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]);
    prim.normals = Some(vec![Vec3::X, Vec3::Y, Vec3::new(s, s, 0.0)]);
    let mut skinned_prim = prim.clone();
    let one: (&[u32], &[f32]) = (&[0], &[1.0]);
    skinned_prim.skin_weights = Some(weights(4, &[one; 3]));
    raw.meshes.push(mesh(vec![prim]));
    raw.meshes.push(mesh(vec![skinned_prim]));
    let mirror = trs([0.0; 3], Quat::IDENTITY, [-2.0, 1.0, 1.0]);
    let rigid = add(&mut raw, "rigid", None, mirror);
    raw.nodes[rigid].mesh = Some(0);
    let joint = add(&mut raw, "joint", None, mirror);
    raw.skins.push(skin(vec![joint], vec![Mat4::IDENTITY]));
    let sk = add(&mut raw, "skinned", None, Trs::IDENTITY);
    raw.nodes[sk].mesh = Some(1);
    raw.nodes[sk].skin = Some(0);
    let scene = roundtrip(raw, &Default::default());
    let frame = frame_at(&scene, None, 0.0);
    assert!(frame.model_from_node[node_index(&scene, "rigid")].determinant() < 0.0);
    let out = skinned(&scene, None, 0.0);
    let r5 = 1.0 / 5f64.sqrt();
    for name in ["rigid", "skinned"] {
        let o = &out[draw_of(&scene, name, 0)];
        let n = o.normals.as_ref().expect("normals");
        assert_near(o.positions[0], v(-2.0, 0.0, 0.0), EPS, name);
        assert_near(
            n[0],
            v(-1.0, 0.0, 0.0),
            EPS,
            &format!("{name}: mirrored x normal"),
        );
        assert_near(n[1], v(0.0, 1.0, 0.0), EPS, &format!("{name}: y normal"));
        // (1,1,0)/√2 → (-1/2, 1, 0) normalised = (-1, 2, 0)/√5.
        assert_near(
            n[2],
            v(-r5, 2.0 * r5, 0.0),
            EPS,
            &format!("{name}: diagonal normal"),
        );
        assert!(
            n[0].dot(o.positions[0]) > 0.0,
            "{name}: normal points away from the origin"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Morph targets

/// Morph deltas (positions, normals, tangents) are applied before skinning.
#[test]
fn morph_targets_are_applied_before_skinning() {
    let mut raw = RawScene::default();
    let j = add(
        &mut raw,
        "joint",
        None,
        trs([5.0, 0.0, 0.0], Quat::from_rotation_z(FRAC_PI_2), [1.0; 3]),
    );
    let mut prim = points(&[[1.0, 0.0, 0.0]]);
    prim.normals = Some(vec![Vec3::X]);
    prim.tangents = Some(vec![Vec4::new(0.0, 1.0, 0.0, -1.0)]);
    prim.skin_weights = Some(weights(4, &[(&[0], &[1.0])]));
    prim.morph_targets = vec![MorphTarget {
        positions: Some(vec![Vec3::new(0.0, 2.0, 0.0)]),
        normals: Some(vec![Vec3::new(-1.0, 1.0, 0.0)]),
        tangents: Some(vec![Vec3::Z]),
    }];
    raw.meshes.push(Mesh {
        name: None,
        primitives: vec![prim],
        default_morph_weights: vec![0.5],
    });
    raw.skins.push(skin(vec![j], vec![Mat4::IDENTITY]));
    let m = add(&mut raw, "skinned", None, Trs::IDENTITY);
    raw.nodes[m].mesh = Some(0);
    raw.nodes[m].skin = Some(0);
    let bytes = export(raw, &Default::default());
    let target = &glb::json_of(&bytes)["meshes"][0]["primitives"][0]["targets"][0];
    assert!(
        ["POSITION", "NORMAL", "TANGENT"]
            .iter()
            .all(|k| target.get(k).is_some())
    );
    let scene = import(&bytes).expect("import");
    let o = &skinned(&scene, None, 0.0)[0];
    // Morphed (1,1,0), then Rz(90°) → (-1,1,0), + (5,0,0). (Morphing after skinning: (5,2,0).)
    assert_near(o.positions[0], v(4.0, 1.0, 0.0), EPS, "position");
    // Normal (1,0,0) + ½(-1,1,0) = (½,½,0) → Rz → (-1,1,0)/√2.
    let s = 1.0 / 2f64.sqrt();
    assert_near(
        o.normals.as_ref().expect("normals")[0],
        v(-s, s, 0.0),
        EPS,
        "normal",
    );
    // Tangent (0,1,0) + ½(0,0,1) = (0,1,½) → Rz → (-1,0,½), minus its part along the normal
    // (1/√2 · n) = (-½,-½,½) → (-1,-1,1)/√3; handedness kept.
    let t = o.tangents.as_ref().expect("tangents")[0];
    let r3 = 1.0 / 3f64.sqrt();
    assert_near(t.truncate(), v(-r3, -r3, r3), EPS, "tangent");
    assert_eq!(t.w, -1.0);
}

/// `node.weights` override `mesh.weights` for that node only.
#[test]
fn node_weights_override_mesh_weights() {
    let mut raw = RawScene::default();
    let mut prim = points(&[[1.0, 0.0, 0.0]]);
    prim.morph_targets = vec![MorphTarget {
        positions: Some(vec![Vec3::new(0.0, 0.0, 4.0)]),
        normals: None,
        tangents: None,
    }];
    raw.meshes.push(Mesh {
        name: None,
        primitives: vec![prim],
        default_morph_weights: vec![0.25],
    });
    let a = add(&mut raw, "mesh_weights", None, Trs::IDENTITY);
    raw.nodes[a].mesh = Some(0);
    let b = add(&mut raw, "node_weights", None, at(10.0, 0.0, 0.0));
    raw.nodes[b].mesh = Some(0);
    raw.nodes[b].morph_weights = Some(vec![1.0]);
    let bytes = export(raw, &Default::default());
    let json = glb::json_of(&bytes);
    assert_eq!(json["meshes"][0]["weights"], json!([0.25]));
    assert_eq!(json["nodes"][b]["weights"][0].as_f64(), Some(1.0));
    assert_eq!(
        json["nodes"][b]["weights"].as_array().map(Vec::len),
        Some(1)
    );
    let scene = import(&bytes).expect("import");
    let out = skinned(&scene, None, 0.0);
    assert_near(
        out[draw_of(&scene, "mesh_weights", 0)].positions[0],
        v(1.0, 0.0, 1.0),
        EPS,
        "mesh weights 0.25",
    );
    assert_near(
        out[draw_of(&scene, "node_weights", 0)].positions[0],
        v(11.0, 0.0, 4.0),
        EPS,
        "node weights 1.0",
    );
}

/// An animated `weights` channel drives the morph weights (LINEAR, clamped outside its keys).
#[test]
fn animated_weights_channel_drives_morph_targets() {
    let mut raw = RawScene::default();
    let mut prim = points(&[[0.0, 0.0, 0.0]]);
    prim.morph_targets = vec![
        MorphTarget {
            positions: Some(vec![Vec3::X]),
            normals: None,
            tangents: None,
        },
        MorphTarget {
            positions: Some(vec![Vec3::Y]),
            normals: None,
            tangents: None,
        },
    ];
    raw.meshes.push(Mesh {
        name: None,
        primitives: vec![prim],
        default_morph_weights: vec![0.0, 0.0],
    });
    let n = add(&mut raw, "morphed", None, Trs::IDENTITY);
    raw.nodes[n].mesh = Some(0);
    // Key 0 (t=1): weights (0,1); key 1 (t=3): (1,0).
    let s = sampler(
        Interpolation::Linear,
        &[1.0, 3.0],
        &[0.0, 1.0, 1.0, 0.0],
        2,
        false,
    );
    raw.animations.push(Animation {
        name: Some("morph".into()),
        channels: vec![Channel {
            node: n,
            path: AnimPath::Weights,
            sampler: s,
        }],
    });
    let bytes = export(raw, &Default::default());
    assert_eq!(
        glb::json_of(&bytes)["animations"][0]["channels"][0]["target"]["path"],
        json!("weights")
    );
    let scene = import(&bytes).expect("import");
    for (t, e) in [
        (1.5, v(0.25, 0.75, 0.0)),
        (2.0, v(0.5, 0.5, 0.0)),
        (0.0, v(0.0, 1.0, 0.0)),
        (9.0, v(1.0, 0.0, 0.0)),
    ] {
        assert_near(
            skinned(&scene, Some(0), t)[0].positions[0],
            e,
            EPS,
            &format!("t = {t}"),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Animation samplers

/// One animation with one channel on a root node "animated"; returns the imported scene.
fn animated(path: AnimPath, s: Sampler) -> Scene {
    let mut raw = RawScene::default();
    let n = add(&mut raw, "animated", None, Trs::IDENTITY);
    raw.animations.push(Animation {
        name: None,
        channels: vec![Channel {
            node: n,
            path,
            sampler: s,
        }],
    });
    roundtrip(raw, &Default::default())
}

fn local_at(scene: &Scene, time_s: f32) -> Trs {
    frame_at(scene, Some(0), time_s).pose.locals[node_index(scene, "animated")]
}

#[test]
fn step_sampler_holds_the_previous_key() {
    let s = sampler(
        Interpolation::Step,
        &[0.0, 1.0, 3.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 5.0, 0.0, 0.0],
        3,
        false,
    );
    let scene = animated(AnimPath::Translation, s);
    assert_eq!(
        scene.animations[0].channels[0].sampler.interpolation,
        Interpolation::Step
    );
    for (t, x) in [
        (-1.0, 0.0),
        (0.5, 0.0),
        (0.999, 0.0),
        (1.0, 1.0),
        (2.9, 1.0),
        (3.0, 5.0),
        (10.0, 5.0),
    ] {
        assert_eq!(
            local_at(&scene, t).translation,
            Vec3::new(x, 0.0, 0.0),
            "t = {t}"
        );
    }
}

/// LINEAR rotation keys identity and −Rz(90°) (the same rotation with the opposite sign):
/// slerp must take the short arc, so at the midpoint the rotation is 45° about z (the long
/// 4D path would give 135°).
#[test]
fn linear_rotation_takes_the_short_path_across_a_sign_flip() {
    let (s45, c45) = (
        std::f32::consts::FRAC_1_SQRT_2,
        std::f32::consts::FRAC_1_SQRT_2,
    );
    let s = sampler(
        Interpolation::Linear,
        &[0.0, 2.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -s45, -c45],
        4,
        true,
    );
    let scene = animated(AnimPath::Rotation, s);
    for (t, deg) in [
        (1.0f32, 45.0f64),
        (0.5, 22.5),
        (1.5, 67.5),
        (0.0, 0.0),
        (2.0, 90.0),
        (5.0, 90.0),
    ] {
        let q = local_at(&scene, t).rotation;
        let a = deg.to_radians();
        assert_near(
            q * Vec3::X,
            v(a.cos(), a.sin(), 0.0),
            1e-5,
            &format!("x axis at t = {t}"),
        );
        let angle = 2.0 * (q.w.abs() as f64).min(1.0).acos();
        assert!(
            (angle - a).abs() < 1e-3,
            "t = {t}: rotation angle {} degrees, expected {deg}",
            angle.to_degrees()
        );
    }
}

/// Cubic Hermite in f64 with tangents scaled by the key interval (glTF 2.0 Appendix C).
fn hermite(v0: DVec3, b0: DVec3, v1: DVec3, a1: DVec3, dt: f64, u: f64) -> DVec3 {
    let (u2, u3) = (u * u, u * u * u);
    v0 * (2.0 * u3 - 3.0 * u2 + 1.0)
        + b0 * (dt * (u3 - 2.0 * u2 + u))
        + v1 * (-2.0 * u3 + 3.0 * u2)
        + a1 * (dt * (u3 - u2))
}

#[test]
fn cubicspline_uses_scaled_tangents_and_clamps() {
    // Keys at 0.5, 2.5, 3.0 (intervals 2 and 0.5); per key: in-tangent, value, out-tangent.
    let keys: [[[f64; 3]; 3]; 3] = [
        [[9.0, 9.0, 9.0], [0.0, 0.0, 0.0], [3.0, 0.0, 1.0]],
        [[0.0, -1.0, 2.0], [1.0, 2.0, 0.0], [7.0, -7.0, 7.0]],
        [[1.0, 1.0, 1.0], [0.0, 0.0, -1.0], [5.0, 5.0, 5.0]],
    ];
    let times = [0.5, 2.5, 3.0];
    let values: Vec<f32> = keys.iter().flatten().flatten().map(|&x| x as f32).collect();
    let scene = animated(
        AnimPath::Translation,
        sampler(
            Interpolation::CubicSpline,
            &times.map(|t| t as f32),
            &values,
            3,
            false,
        ),
    );
    let d = |k: usize, e: usize| DVec3::from_array(keys[k][e]);
    // Literal spot check at the middle of the first interval (u = ½, dt = 2):
    // h00 = ½, dt·h10 = ¼, h01 = ½, dt·h11 = −¼ → ¼(3,0,1) + ½(1,2,0) − ¼(0,−1,2).
    assert_near(
        local_at(&scene, 1.5).translation,
        v(1.25, 1.25, -0.25),
        1e-5,
        "t = 1.5",
    );
    for t in [0.6, 1.0, 2.0, 2.4, 2.6, 2.75, 2.9] {
        let k = if t < times[1] { 0 } else { 1 };
        let dt = times[k + 1] - times[k];
        let e = hermite(
            d(k, 1),
            d(k, 2),
            d(k + 1, 1),
            d(k + 1, 0),
            dt,
            (t - times[k]) / dt,
        );
        assert_near(
            local_at(&scene, t as f32).translation,
            e,
            1e-5,
            &format!("t = {t}"),
        );
    }
    // Clamping: before the first key the first value, after the last the last value.
    for (t, k) in [(0.0, 0), (0.5, 0), (3.0, 2), (10.0, 2)] {
        assert_near(
            local_at(&scene, t).translation,
            d(k, 1),
            0.0,
            &format!("t = {t}"),
        );
    }
}

/// Rotation keys off unit length by less than the Khronos glTF-Validator's tolerance
/// (0.00769) are normalised and reported; a key further off is an error naming the channel, as
/// the validator's ACCESSOR_ANIMATION_SAMPLER_OUTPUT_NON_NORMALIZED_QUATERNION. A node's
/// rotation of any non-zero length is normalised and reported.
#[test]
fn non_unit_rotations_are_normalised_and_reported() {
    let (sin45, cos45) = (
        std::f32::consts::FRAC_1_SQRT_2,
        std::f32::consts::FRAC_1_SQRT_2,
    );
    let mut raw = RawScene::default();
    let n = add(
        &mut raw,
        "animated",
        None,
        trs([0.0; 3], Quat::from_xyzw(0.0, 0.0, 0.0, 0.5), [1.0; 3]),
    );
    // Keys 1.005·identity and 0.995·Rz(90°).
    let keys = |long: f32, short: f32| {
        sampler(
            Interpolation::Linear,
            &[0.0, 2.0],
            &[0.0, 0.0, 0.0, long, 0.0, 0.0, short * sin45, short * cos45],
            4,
            true,
        )
    };
    let channel = |s| Animation {
        name: None,
        channels: vec![Channel {
            node: n,
            path: AnimPath::Rotation,
            sampler: s,
        }],
    };
    let mut far = raw.clone();
    raw.animations.push(channel(keys(1.005, 0.995)));
    far.animations.push(channel(keys(2.0, 1.0)));
    let e = import(&export(far, &Default::default()))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("animations[0].channels[0].sampler") && e.contains("length 2"),
        "{e}"
    );
    let scene = roundtrip(raw, &Default::default());
    assert!(
        has_note(&scene, "animations[0].samplers[0].output", ""),
        "key repair reported: {:?}",
        scene.report.notes
    );
    assert!(
        has_note(&scene, &format!("nodes[{n}].rotation"), ""),
        "node repair reported: {:?}",
        scene.report.notes
    );
    for q in scene.animations[0].channels[0]
        .sampler
        .values
        .chunks_exact(4)
    {
        let len = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-6, "key length {len}");
    }
    assert!(
        (scene.nodes[node_index(&scene, "animated")]
            .rest
            .rotation
            .length()
            - 1.0)
            .abs()
            < 1e-6
    );
    // Normalised keys: the midpoint is 45° about z.
    let a = std::f64::consts::FRAC_PI_4;
    assert_near(
        local_at(&scene, 1.0).rotation * Vec3::X,
        v(a.cos(), a.sin(), 0.0),
        1e-5,
        "midpoint",
    );
}

// ---------------------------------------------------------------------------------------
// Bad files

/// A valid skinned file to break: armature → j0 → j1, a skinned 3-vertex mesh with normals,
/// u8 joints, float weights, inverse bind matrices and a LINEAR translation channel on j1.
fn base_glb() -> &'static [u8] {
    static GLB: OnceLock<Vec<u8>> = OnceLock::new();
    GLB.get_or_init(|| {
        let mut raw = RawScene::default();
        let armature = add(&mut raw, "armature", None, at(0.0, 0.0, 1.0));
        let j0 = add(&mut raw, "j0", Some(armature), at(1.0, 0.0, 0.0));
        let j1 = add(&mut raw, "j1", Some(j0), at(0.0, 1.0, 0.0));
        let mut prim = points(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        prim.normals = Some(vec![Vec3::Z; 3]);
        prim.skin_weights = Some(weights(
            4,
            &[(&[0, 1], &[0.5, 0.5]), (&[0], &[1.0]), (&[1], &[1.0])],
        ));
        prim.indices = vec![0, 1, 2];
        prim.topology = Topology::Triangles;
        raw.meshes.push(mesh(vec![prim]));
        raw.skins.push(skin(
            vec![j0, j1],
            vec![
                Mat4::from_translation(Vec3::new(-1.0, 0.0, -1.0)),
                Mat4::from_translation(Vec3::new(-1.0, -1.0, -1.0)),
            ],
        ));
        let m = add(&mut raw, "skinned", None, Trs::IDENTITY);
        raw.nodes[m].mesh = Some(0);
        raw.nodes[m].skin = Some(0);
        let s = sampler(
            Interpolation::Linear,
            &[0.0, 0.5, 1.0],
            &[0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0, 0.0],
            3,
            false,
        );
        raw.animations.push(Animation {
            name: None,
            channels: vec![Channel {
                node: j1,
                path: AnimPath::Translation,
                sampler: s,
            }],
        });
        export(raw, &F32_U8)
    })
}

fn base_json() -> Value {
    glb::json_of(base_glb())
}

#[test]
fn base_file_is_valid() {
    // The bad-file tests below each change one thing in this file.
    let scene = import(base_glb()).expect("base file imports");
    assert!(scene.report.notes.is_empty(), "{:?}", scene.report.notes);
}

#[test]
fn truncated_bin_chunk_is_an_error() {
    let (json, bin) = glb::split(base_glb());
    expect_error(
        &glb::pack(&json, &bin[..bin.len() - 16]),
        &[FILE, "buffers[0]"],
    );
}

#[test]
fn accessor_past_its_buffer_view_is_an_error() {
    let pos = glb::accessor_at(&base_json(), "/meshes/0/primitives/0/attributes/POSITION");
    let needle = format!("accessors[{pos}]");
    let longer = glb::edit_json(base_glb(), |j| j["accessors"][pos]["count"] = json!(4));
    expect_error(&longer, &[FILE, &needle, "POSITION"]);
    let shifted = glb::edit_json(base_glb(), |j| j["accessors"][pos]["byteOffset"] = json!(4));
    expect_error(&shifted, &[FILE, &needle, "POSITION"]);
}

#[test]
fn joint_index_out_of_range_with_nonzero_weight_is_an_error() {
    let joints = glb::accessor_at(&base_json(), "/meshes/0/primitives/0/attributes/JOINTS_0");
    // Vertex 1 has weight 1 on its first joint; the skin has 2 joints.
    expect_error(
        &glb::patch(base_glb(), joints, 1, 0, &[5]),
        &[FILE, "JOINTS_0", "joint 5"],
    );
}

#[test]
fn nan_in_inverse_bind_matrix_is_an_error() {
    let ibm = glb::accessor_at(&base_json(), "/skins/0/inverseBindMatrices");
    expect_error(
        &glb::patch(base_glb(), ibm, 1, 5, &f32::NAN.to_le_bytes()),
        &[FILE, "inverseBindMatrices"],
    );
    expect_error(
        &glb::patch(base_glb(), ibm, 0, 12, &f32::INFINITY.to_le_bytes()),
        &[FILE, "inverseBindMatrices"],
    );
}

#[test]
fn non_finite_node_translation_is_an_error() {
    // JSON has no NaN literal: 1e39 overflows f32 to infinity; a literal `NaN` token is not
    // JSON at all. Both must be errors, not panics.
    let j1 = node_index(&import(base_glb()).expect("base"), "j1");
    let mut json = base_json();
    json["nodes"][j1]["translation"] = json!([12345.5, 0.0, 0.0]);
    let text = serde_json::to_string(&json).expect("json");
    assert_eq!(text.matches("12345.5").count(), 1, "{text}");
    let bin = glb::split(base_glb()).1;
    expect_error(
        &glb::pack_raw(text.replace("12345.5", "1e39").as_bytes(), &bin),
        &[FILE, &format!("nodes[{j1}]")],
    );
    expect_error(
        &glb::pack_raw(text.replace("12345.5", "NaN").as_bytes(), &bin),
        &[FILE],
    );
}

#[test]
fn negative_weight_is_an_error() {
    let w = glb::accessor_at(&base_json(), "/meshes/0/primitives/0/attributes/WEIGHTS_0");
    expect_error(
        &glb::patch(base_glb(), w, 0, 1, &(-0.25f32).to_le_bytes()),
        &[FILE, "WEIGHTS_0", "negative"],
    );
}

#[test]
fn missing_position_is_an_error() {
    let bytes = glb::edit_json(base_glb(), |j| {
        j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .expect("attributes")
            .remove("POSITION");
    });
    expect_error(&bytes, &[FILE, "meshes[0].primitives[0]", "POSITION"]);
}

/// Deterministic pseudo-random bytes (64-bit LCG, high bytes).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    common::rng::lcg64_bytes(len, seed)
}

#[test]
fn not_a_gltf_file_is_an_error() {
    expect_error(&[], &[FILE]);
    expect_error(&noise(4096, 1), &[FILE]);
    // GLB magic and version, then noise.
    let mut fake = b"glTF\x02\x00\x00\x00".to_vec();
    fake.extend_from_slice(&(1024u32 + 12).to_le_bytes());
    fake.extend(noise(1024, 2));
    expect_error(&fake, &[FILE]);
    // A GLB header whose total length is smaller than the header itself.
    for len in [0u32, 11] {
        let mut short = base_glb().to_vec();
        short[8..12].copy_from_slice(&len.to_le_bytes());
        expect_error(&short, &[FILE]);
    }
    // A truncated GLB (header says more than there is).
    expect_error(&base_glb()[..100], &[FILE]);
}

/// Indices the gltf crate (1.4) dereferences unchecked, found by the sweep below: the
/// importer checks them first and names the field.
#[test]
fn indices_the_gltf_crate_does_not_check_are_errors() {
    let bad_position = glb::edit_json(base_glb(), |j| {
        j["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99)
    });
    expect_error(
        &bad_position,
        &[
            FILE,
            "meshes[0].primitives[0].attributes.POSITION",
            "accessor 99",
        ],
    );
    let bad_node = glb::edit_json(base_glb(), |j| {
        j["animations"][0]["channels"][0]["target"]["node"] = json!(99)
    });
    expect_error(
        &bad_node,
        &[FILE, "animations[0].channels[0].target.node", "node 99"],
    );
    let bad_path = glb::edit_json(base_glb(), |j| {
        j["animations"][0]["channels"][0]["target"]["path"] = json!("position")
    });
    expect_error(&bad_path, &[FILE, "animations[0].channels[0].target.path"]);
}

#[test]
fn animation_input_not_increasing_is_an_error() {
    let json = base_json();
    let input = glb::accessor_at(&json, "/animations/0/samplers/0/input");
    for (t, what) in [(0.5f32, "repeated"), (0.25, "decreasing")] {
        let bytes = glb::patch(base_glb(), input, 2, 0, &t.to_le_bytes());
        let msg = expect_error(&bytes, &[FILE, "animations[0]", "increasing"]);
        assert!(msg.contains("key 2"), "{what}: {msg}");
    }
}

#[test]
fn node_that_is_its_own_ancestor_is_an_error() {
    let n = base_json()["nodes"].as_array().expect("nodes").len();
    // Two new nodes that are each other's child (neither in the scene).
    let pair = glb::edit_json(base_glb(), |j| {
        let nodes = j["nodes"].as_array_mut().expect("nodes");
        nodes.push(json!({ "name": "loop_a", "children": [n + 1] }));
        nodes.push(json!({ "name": "loop_b", "children": [n] }));
    });
    expect_error(&pair, &[FILE, "cycle"]);
    // A node that is its own child.
    let own = glb::edit_json(base_glb(), |j| {
        j["nodes"]
            .as_array_mut()
            .expect("nodes")
            .push(json!({ "name": "self", "children": [n] }));
    });
    expect_error(&own, &[FILE, &format!("nodes[{n}]")]);
    // A cycle hanging under a scene root: the re-entered node has two parents.
    let under_root = glb::edit_json(base_glb(), |j| {
        let nodes = j["nodes"].as_array_mut().expect("nodes");
        nodes.push(json!({ "name": "a", "children": [n + 1] }));
        nodes.push(json!({ "name": "b", "children": [n + 2] }));
        nodes.push(json!({ "name": "c", "children": [n + 1] }));
        j["scenes"][0]["nodes"]
            .as_array_mut()
            .expect("roots")
            .push(json!(n));
    });
    expect_error(&under_root, &[FILE, &format!("node {}", n + 1)]);
}

// ---------------------------------------------------------------------------------------
// Exporter round trip on the shared models

/// Every shared model and rig survives export → import: same draws, same CPU-skinned
/// positions at the start, middle and end of every animation.
#[test]
fn shared_models_survive_export_and_import() {
    for path in common::all_models() {
        let a = import_file(&path).expect("import");
        let bytes = export_glb(&a, &ExportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let b = import_slice(&bytes, &path)
            .unwrap_or_else(|e| panic!("{}: re-import: {e}", path.display()));
        let key = |s: &Scene| {
            let mut k: Vec<(usize, usize, usize, Option<usize>)> = s
                .draws
                .iter()
                .map(|d| (d.node, d.mesh, d.primitive, d.skin))
                .collect();
            k.sort();
            k
        };
        assert_eq!(key(&a), key(&b), "{}: draws", path.display());
        let anims: Vec<Option<usize>> = std::iter::once(None)
            .chain((0..a.animations.len()).map(Some))
            .collect();
        for anim in anims {
            for t in skinview::compare::run::frame_times(&a, anim, 3) {
                let (sa, sb) = (skinned(&a, anim, t), skinned(&b, anim, t));
                let (lo, hi) = skinview::skin::bounds(&sa).expect("finite vertices");
                let diag = (hi - lo).length();
                for (i, d) in a.draws.iter().enumerate() {
                    let j = b
                        .draws
                        .iter()
                        .position(|e| (e.node, e.primitive) == (d.node, d.primitive))
                        .expect("draw");
                    let worst = sa[i]
                        .positions
                        .iter()
                        .zip(&sb[j].positions)
                        .map(|(x, y)| (*x - *y).length())
                        .fold(0.0f32, f32::max);
                    // Re-normalising already normalised quaternions may move them by an ulp.
                    assert!(
                        sa[i].positions.len() == sb[j].positions.len() && worst <= 1e-6 * diag,
                        "{}: anim {anim:?} t {t} draw {i}: differs by {worst:e}",
                        path.display()
                    );
                }
            }
        }
    }
}

#[test]
fn exported_glb_layout_follows_the_spec() {
    let u32_at =
        |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    let mut scene = import(base_glb()).expect("base");
    let mut paddings = Vec::new();
    // Scene names of 1..4 characters give JSON chunks of every length modulo 4.
    for name_len in 1..=4 {
        scene.name = "x".repeat(name_len);
        let bytes = export_glb(&scene, &ExportOptions::default()).expect("export");
        assert_eq!(
            (&bytes[0..4], u32_at(&bytes, 4), u32_at(&bytes, 8)),
            (&b"glTF"[..], 2, bytes.len())
        );
        let json_len = u32_at(&bytes, 12);
        assert_eq!((json_len % 4, &bytes[16..20]), (0, &b"JSON"[..]));
        let text = &bytes[20..20 + json_len];
        let end = text.iter().rposition(|&c| c == b'}').expect("JSON object") + 1;
        assert!(
            text[end..].iter().all(|&c| c == b' '),
            "JSON padded with spaces"
        );
        paddings.push(json_len - end);
        let json: Value = serde_json::from_slice(&text[..end]).expect("JSON");
        let bin_at = 20 + json_len;
        let bin_len = u32_at(&bytes, bin_at);
        assert_eq!(
            (
                bin_len % 4,
                &bytes[bin_at + 4..bin_at + 8],
                bin_at + 8 + bin_len
            ),
            (0, &b"BIN\0"[..], bytes.len())
        );
        let byte_length = json["buffers"][0]["byteLength"]
            .as_u64()
            .expect("byteLength") as usize;
        assert!(
            byte_length <= bin_len && bin_len - byte_length < 4,
            "buffer {byte_length} bytes, BIN chunk {bin_len}"
        );
        assert!(
            bytes[bin_at + 8 + byte_length..].iter().all(|&b| b == 0),
            "BIN padded with zeros"
        );
        for view in json["bufferViews"].as_array().expect("views") {
            assert_eq!(view["byteOffset"].as_u64().unwrap_or(0) % 4, 0, "{view}");
        }
        let pos = &json["accessors"]
            [glb::accessor_at(&json, "/meshes/0/primitives/0/attributes/POSITION")];
        let floats = |v: &Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        assert_eq!(
            (floats(&pos["min"]), floats(&pos["max"])),
            (vec![0.0, 0.0, 0.0], vec![1.0, 1.0, 0.0])
        );
    }
    paddings.sort();
    assert_eq!(
        paddings,
        [0, 1, 2, 3],
        "every JSON padding length was exercised"
    );
}

// ---------------------------------------------------------------------------------------
// Fuzzing

/// Byte offsets of the ASCII digits in the JSON chunk of the base file (changing one keeps
/// the JSON valid but changes an index, count, offset or length).
fn json_digit_offsets() -> &'static [usize] {
    static D: OnceLock<Vec<usize>> = OnceLock::new();
    D.get_or_init(|| {
        let b = base_glb();
        let json_len = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
        (20..20 + json_len)
            .filter(|&i| b[i].is_ascii_digit())
            .collect()
    })
}

/// Every single-byte change of the base file (to 0x00, a space, 0xff and the next byte
/// value; every digit in place of a digit) is imported without a panic.
#[test]
fn every_single_byte_change_is_handled() {
    let base = base_glb();
    let mut panics = Vec::new();
    for at in 0..base.len() {
        let digits = if base[at].is_ascii_digit() {
            &b"0123456789"[..]
        } else {
            &[]
        };
        for &value in [0x00, b' ', 0xff, base[at].wrapping_add(1)]
            .iter()
            .chain(digits)
        {
            let mut data = base.to_vec();
            data[at] = value;
            if catch_unwind(AssertUnwindSafe(|| import(&data).map(|_| ()))).is_err() {
                panics.push((at, value));
            }
        }
    }
    assert!(
        panics.is_empty(),
        "importer panicked for (offset, byte) {panics:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random byte changes, digit changes in the JSON and truncations of a valid file:
    /// import gives Ok or Err, never a panic.
    #[test]
    fn mutated_glb_never_panics(
        bytes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        digits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..10), 0..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut data = base_glb().to_vec();
        for (i, d) in &digits {
            data[*i.get(json_digit_offsets())] = b'0' + d;
        }
        for (i, b) in &bytes {
            let at = i.index(data.len());
            data[at] = *b;
        }
        if let Some(c) = cut {
            data.truncate(c.index(data.len() + 1));
        }
        let result = catch_unwind(AssertUnwindSafe(|| import(&data).map(|_| ())));
        prop_assert!(result.is_ok(), "importer panicked on a mutated file");
    }
}

/// Bones without names: every node of every shared model is found again by the label the
/// viewer and `info` show, and an unnamed one by `node N`, `nodes[N]` and `N` alike (N: the
/// file's index).
#[test]
fn every_node_is_found_by_its_label() {
    let mut unnamed = 0;
    for path in common::all_models() {
        let scene = skinview::io::load(&path).unwrap();
        for n in 0..scene.nodes.len() {
            let label = scene.node_label(n);
            let found = scene.find_node(&label).unwrap();
            assert_eq!(scene.node_label(found), label, "{}", path.display());
            if scene.nodes[n].name.is_none() {
                unnamed += 1;
                let i = scene.nodes[n].source_index;
                for text in [format!("node {i}"), format!("nodes[{i}]"), i.to_string()] {
                    assert_eq!(scene.find_node(&text).unwrap(), n, "{text}");
                }
            }
        }
        assert!(scene.find_node("node 999999").is_err());
    }
    assert!(unnamed > 0, "no shared model has unnamed nodes");
}
