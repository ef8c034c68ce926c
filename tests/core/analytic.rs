//! Analytic skinning cases: each expectation is computed by hand (or in f64 from first
//! principles), never taken from our own output.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use glam::{DVec3, Mat4, Quat, Vec3, Vec4};
use skinview::anim::{Animation, Channel, Interpolation, Path, Sampler};
use skinview::compare::run::Source;
use skinview::compare::sample_frames;
use skinview::frame::{CpuSkinner, FrameState};
use skinview::gpu::CapturePath;
use skinview::math::Trs;
use skinview::scene::{
    Mesh, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};
use skinview::skin::SkinnedVertices;

fn node(name: &str, parent: Option<usize>, rest: Trs) -> Node {
    Node {
        name: Some(name.into()),
        source_index: 0,
        parent,
        rest,
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    }
}

/// Two bones along +X (parent at origin, child at `(l1,0,0)`), a mesh node with a skin over
/// both, the given vertices/normals/weights (joint 0 = parent, 1 = child).
fn two_bone_scene(
    l1: f32,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    weights: Vec<[f32; 2]>,
    child_rotation: Quat,
) -> Scene {
    let n = positions.len();
    let mut nodes = vec![
        node("parent", None, Trs::IDENTITY),
        node(
            "child",
            Some(0),
            Trs {
                translation: Vec3::new(l1, 0.0, 0.0),
                ..Trs::IDENTITY
            },
        ),
    ];
    let mut mesh_node = node("mesh", None, Trs::IDENTITY);
    mesh_node.mesh = Some(0);
    mesh_node.skin = Some(0);
    nodes.push(mesh_node);
    for (i, n) in nodes.iter_mut().enumerate() {
        n.source_index = i;
    }
    let mut joints = Vec::new();
    let mut w = Vec::new();
    for ws in &weights {
        joints.extend_from_slice(&[0, 1, 0, 0]);
        w.extend_from_slice(&[ws[0], ws[1], 0.0, 0.0]);
    }
    let anim = Animation {
        name: Some("pose".into()),
        channels: vec![Channel {
            node: 1,
            path: Path::Rotation,
            sampler: Sampler {
                interpolation: Interpolation::Step,
                times_s: vec![0.0],
                values: child_rotation.to_array().to_vec(),
                components: 4,
                is_rotation: true,
            },
        }],
    };
    let raw = RawScene {
        name: "two_bone".into(),
        nodes,
        meshes: vec![Mesh {
            name: None,
            primitives: vec![Primitive {
                indices: (0..n as u32).collect(),
                positions,
                normals: Some(normals),
                tangents: None,
                topology: Topology::Points,
                skin_weights: Some(SkinWeights {
                    width: 4,
                    joints,
                    weights: w,
                }),
                morph_targets: vec![],
                base_color: [1.0; 4],
                ..Default::default()
            }],
            default_morph_weights: vec![],
        }],
        skins: vec![Skin {
            name: None,
            joints: vec![0, 1],
            joint_from_bind: vec![
                Mat4::IDENTITY,
                Mat4::from_translation(Vec3::new(-l1, 0.0, 0.0)),
            ],
        }],
        animations: vec![anim],
        roots: vec![],
        report: Default::default(),
        textures: Vec::new(),
    };
    SceneBuilder::build(raw).expect("valid scene")
}

fn cpu_skin(scene: &Scene, anim: Option<usize>, t: f32) -> SkinnedVertices {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, anim, t).unwrap();
    let mut s = CpuSkinner::new(scene, None);
    let mut out = SkinnedVertices::default();
    s.skin_draw(scene, &frame, 0, &mut out).unwrap();
    out
}

/// GPU skinning of draw 0 through the capture shader, after checking that the draw's own
/// vertex stage (draw-path capture) agrees with it.
fn gpu_skin(scene: &Scene, anim: Option<usize>, t: f32) -> Option<SkinnedVertices> {
    let ctx = common::gpu()?;
    let read = |path| {
        sample_frames(Some(ctx), scene, anim, &[t], &[0], Source::gpu(path), None)
            .unwrap()
            .remove(0)
            .remove(0)
    };
    let (compute, draw) = (read(CapturePath::CaptureShader), read(CapturePath::Draw));
    for (a, b) in compute.positions.iter().zip(&draw.positions) {
        assert!((*a - *b).length() < 1e-5, "draw path {b} vs compute {a}");
    }
    assert_eq!(compute.positions.len(), draw.positions.len());
    Some(compute)
}

/// Seed 000 §7: a vertex weighted 50/50 at (0,1,0) relative to the child under a 180° twist
/// of the child about its X axis lands on the bone axis (Y = Z = 0): the "paper towel tube".
#[test]
fn fifty_fifty_vertex_under_180_twist_collapses_onto_the_bone_axis() {
    let l1 = 1.5;
    let p = vec![
        Vec3::new(l1, 1.0, 0.0),
        Vec3::new(l1, 0.0, 1.0),
        Vec3::new(l1 + 0.5, 0.0, -1.0),
    ];
    let n = vec![Vec3::Y, Vec3::Z, -Vec3::Z];
    let scene = two_bone_scene(
        l1,
        p.clone(),
        n,
        vec![[0.5, 0.5]; 3],
        Quat::from_rotation_x(std::f32::consts::PI),
    );
    for (label, out) in [
        ("cpu", Some(cpu_skin(&scene, Some(0), 0.0))),
        ("gpu", gpu_skin(&scene, Some(0), 0.0)),
    ] {
        let Some(out) = out else { continue };
        for (v, q) in out.positions.iter().enumerate() {
            assert!((q.x - p[v].x).abs() < 1e-6, "{label}: x moved: {q}");
            assert!(
                q.y.abs() < 1e-6 && q.z.abs() < 1e-6,
                "{label}: vertex {v} at {q}, expected on the X axis"
            );
        }
        // The blended matrix is singular in Y/Z: the normal degenerates rather than turning NaN.
        for nrm in out.normals.as_ref().unwrap() {
            assert!(nrm.is_finite(), "{label}: NaN normal");
        }
    }
}

/// With a weight of 1 on one bone, skinning is that bone's rigid motion: positions move by
/// `model_from_joint * joint_from_bind`, normals by its rotation (checked in f64).
#[test]
fn one_bone_is_rigid_motion() {
    let l1 = 2.0;
    let p: Vec<Vec3> = (0..20)
        .map(|i| {
            Vec3::new(
                l1 + 0.1 * i as f32,
                (i as f32 * 0.7).sin(),
                (i as f32 * 1.3).cos(),
            )
        })
        .collect();
    let n: Vec<Vec3> = p
        .iter()
        .map(|q| Vec3::new(0.0, q.y, q.z).normalize())
        .collect();
    let rot = Quat::from_euler(glam::EulerRot::ZYX, 0.7, -0.4, 1.1);
    let scene = two_bone_scene(l1, p.clone(), n.clone(), vec![[0.0, 1.0]; 20], rot);
    let drot = rot.as_dquat();
    for (label, out) in [
        ("cpu", Some(cpu_skin(&scene, Some(0), 0.0))),
        ("gpu", gpu_skin(&scene, Some(0), 0.0)),
    ] {
        let Some(out) = out else { continue };
        for v in 0..p.len() {
            // Child frame: translate by l1 after rotating the bind-relative offset.
            let expected = DVec3::new(l1 as f64, 0.0, 0.0)
                + drot * (p[v].as_dvec3() - DVec3::new(l1 as f64, 0.0, 0.0));
            let got = out.positions[v].as_dvec3();
            assert!(
                (got - expected).length() < 2e-6,
                "{label} vertex {v}: {got} vs {expected}"
            );
            let en = drot * n[v].as_dvec3();
            let gn = out.normals.as_ref().unwrap()[v].as_dvec3();
            assert!(
                (gn - en).length() < 2e-6,
                "{label} normal {v}: {gn} vs {en}"
            );
            // Rigid motion preserves distances to the joint.
            let d0 = (p[v].as_dvec3() - DVec3::new(l1 as f64, 0.0, 0.0)).length();
            let d1 = (got - DVec3::new(l1 as f64, 0.0, 0.0)).length();
            assert!((d0 - d1).abs() < 2e-6);
        }
    }
}

/// The bind pose reproduces the mesh: with the animation's rest values the palette is
/// identity-like and every vertex stays put (built-in arm), and on the generated rigs the
/// skinned rest equals the mesh node's rest world matrix times POSITION (rigs README: the
/// IBMs were built that way).
#[test]
fn bind_pose_reproduces_the_mesh() {
    let arm = skinview::builtin::woodland_arm().unwrap();
    let out = cpu_skin(&arm, None, 0.0);
    let prim = arm.primitive(&arm.draws[0]);
    for (a, b) in out.positions.iter().zip(&prim.positions) {
        assert!((*a - *b).length() < 1e-6, "{a} vs {b}");
    }
    for (a, b) in out
        .normals
        .as_ref()
        .unwrap()
        .iter()
        .zip(prim.normals.as_ref().unwrap())
    {
        assert!((*a - b.normalize()).length() < 1e-6);
    }
    for stem in [
        "rig_seed1",
        "rig_seed2",
        "rig_seed3",
        "rig_seed4_8inf_morph_ubyte",
        "rig_seed5_40j_6inf_ushort",
    ] {
        let scene = skinview::io::load(&common::model(stem)).unwrap();
        let mut frame = FrameState::new(&scene);
        frame.evaluate(&scene, None, 0.0).unwrap();
        let mut sk = CpuSkinner::new(&scene, None);
        for (i, d) in scene.draws.iter().enumerate() {
            let mut out = SkinnedVertices::default();
            sk.skin_draw(&scene, &frame, i, &mut out).unwrap();
            let world = frame.model_from_node[d.node].as_dmat4();
            let prim = scene.primitive(d);
            let (mut lo, mut hi) = (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN));
            let mut worst = 0.0f64;
            for (v, q) in out.positions.iter().enumerate() {
                // Morph targets are at weight 0 at rest in these rigs unless mesh.weights say otherwise.
                let mut base = prim.positions[v].as_dvec3();
                for (t, target) in prim.morph_targets.iter().enumerate() {
                    let w = frame.pose.morph_weights[d.node]
                        .get(t)
                        .copied()
                        .unwrap_or(0.0) as f64;
                    if let Some(dp) = &target.positions {
                        base += dp[v].as_dvec3() * w;
                    }
                }
                let e = world.transform_point3(base);
                worst = worst.max((q.as_dvec3() - e).length());
                lo = lo.min(e);
                hi = hi.max(e);
            }
            let diag = (hi - lo).length();
            assert!(
                worst < 1e-5 * diag,
                "{stem}: rest pose differs from B*POSITION by {worst:.3e} (diag {diag:.3})"
            );
        }
    }
}

/// Normals go through the inverse-transpose: under a scale of (2,1,1) a 45° normal in XY
/// becomes (1/2, 1, 0) normalised, not (2, 1, 0) normalised. Tangents through the matrix,
/// re-orthogonalised against the new normal, handedness kept.
#[test]
fn normals_use_the_inverse_transpose_and_tangents_stay_orthogonal() {
    let l1 = 1.0;
    let n0 = Vec3::new(1.0, 1.0, 0.0).normalize();
    let scene0 = two_bone_scene(
        l1,
        vec![Vec3::new(1.5, 0.0, 0.0)],
        vec![n0],
        vec![[0.0, 1.0]],
        Quat::IDENTITY,
    );
    // Scale the child by (2,1,1) with a STEP scale channel.
    let mut scene = scene0.clone();
    scene.animations[0].channels.push(Channel {
        node: 1,
        path: Path::Scale,
        sampler: Sampler {
            interpolation: Interpolation::Step,
            times_s: vec![0.0],
            values: vec![2.0, 1.0, 1.0],
            components: 3,
            is_rotation: false,
        },
    });
    let t0 = Vec4::new(1.0, -1.0, 0.0, -1.0);
    scene.meshes[0].primitives[0].tangents = Some(vec![
        Vec4::new(t0.x, t0.y, t0.z, 0.0).normalize().with_w(-1.0),
    ]);
    let expected = Vec3::new(0.5, 1.0, 0.0).normalize();
    for (label, out) in [
        ("cpu", Some(cpu_skin(&scene, Some(0), 0.0))),
        ("gpu", gpu_skin(&scene, Some(0), 0.0)),
    ] {
        let Some(out) = out else { continue };
        let n = out.normals.as_ref().unwrap()[0];
        assert!(
            (n - expected).length() < 1e-6,
            "{label}: normal {n}, expected {expected}"
        );
        let t = out.tangents.as_ref().unwrap()[0];
        assert!(
            t.truncate().dot(n).abs() < 1e-6,
            "{label}: tangent not orthogonal"
        );
        assert!((t.truncate().length() - 1.0).abs() < 1e-6);
        assert_eq!(t.w, -1.0, "{label}: handedness lost");
        // Position: child frame scales the offset from the joint along X by 2.
        assert!(
            (out.positions[0] - Vec3::new(2.0, 0.0, 0.0)).length() < 1e-6,
            "{label}: {}",
            out.positions[0]
        );
    }
}

/// A mirrored bone (scale x = -1, negative determinant) keeps normals pointing outward:
/// the inverse-transpose of diag(-1,1,1) maps (1,0,0) to (-1,0,0) and (0,1,0) to (0,1,0).
#[test]
fn mirrored_bones_keep_outward_normals() {
    let scene0 = two_bone_scene(
        1.0,
        vec![Vec3::new(1.5, 0.0, 0.0), Vec3::new(1.0, 0.5, 0.0)],
        vec![Vec3::X, Vec3::Y],
        vec![[0.0, 1.0]; 2],
        Quat::IDENTITY,
    );
    let mut scene = scene0.clone();
    scene.animations[0].channels.push(Channel {
        node: 1,
        path: Path::Scale,
        sampler: Sampler {
            interpolation: Interpolation::Step,
            times_s: vec![0.0],
            values: vec![-1.0, 1.0, 1.0],
            components: 3,
            is_rotation: false,
        },
    });
    for (label, out) in [
        ("cpu", Some(cpu_skin(&scene, Some(0), 0.0))),
        ("gpu", gpu_skin(&scene, Some(0), 0.0)),
    ] {
        let Some(out) = out else { continue };
        let n = out.normals.as_ref().unwrap();
        assert!((n[0] - -Vec3::X).length() < 1e-6, "{label}: {}", n[0]);
        assert!((n[1] - Vec3::Y).length() < 1e-6, "{label}: {}", n[1]);
        assert!(
            (out.positions[0] - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6,
            "{label}: {}",
            out.positions[0]
        );
    }
}
