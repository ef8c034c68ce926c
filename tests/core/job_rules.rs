//! Every numbered `validate()` rule of every job, broken once: the job refuses with
//! `Error::Job { job, rule }` naming that rule (and `run()` refuses the same way before it
//! touches anything), while the unbroken inputs pass. Jobs: SkinningJob, PaletteJob,
//! MorphJob, LocalToModelJob, AnimateJob, LayerJob, CrowdSetup (CcdJob and LinkPoseJob have their own
//! rule tests in tests/alloc/ik.rs and tests/core/links.rs).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::{Mat4, Vec3, Vec4};
use skinview::Error;
use skinview::anim::{AnimateJob, Cursor, Layer, LayerJob, Pose};
use skinview::math::Trs;
use skinview::scene::{MorphTarget, Primitive, SkinWeights, Topology};
use skinview::skeleton::LocalToModelJob;
use skinview::skin::{MorphJob, PaletteJob, PaletteLayout, SkinningJob, VertexWeights};

/// The rule a result broke, or `None` when it passed.
fn rule(r: skinview::Result<()>, job: &str) -> Option<u32> {
    match r {
        Ok(()) => None,
        Err(Error::Job { job: j, rule, .. }) if j == job => Some(rule),
        Err(e) => panic!("{job}: expected a rule error, got {e}"),
    }
}

fn weights(n: usize, joint: u32) -> VertexWeights {
    let mut w = SkinWeights {
        width: 4,
        joints: vec![0; n * 4],
        weights: vec![0.0; n * 4],
    };
    for v in 0..n {
        w.joints[v * 4] = joint;
        w.weights[v * 4] = 1.0;
    }
    VertexWeights::from_skin_weights(&w)
}

#[test]
fn skinning_job_rules() {
    let n = 3;
    let palette = [Mat4::IDENTITY; 2];
    let positions = vec![Vec3::X; n];
    let normals = vec![Vec3::Y; n];
    let check = |w: &VertexWeights,
                 pos: &[Vec3],
                 nrm: Option<&[Vec3]>,
                 out_len: usize,
                 out_nrm: Option<usize>| {
        let mut out = vec![Vec3::ZERO; out_len];
        let mut out_n = out_nrm.map(|l| vec![Vec3::ZERO; l]);
        let mut job = SkinningJob {
            palette: &palette,
            weights: w,
            positions: pos,
            normals: nrm,
            tangents: None,
            out_positions: &mut out,
            out_normals: out_n.as_deref_mut(),
            out_tangents: None,
            renormalize: true,
            orthonormalize_tangents: true,
            normal_mode: skinview::skin::NormalMode::Exact,
        };
        let v = rule(job.validate(), "SkinningJob");
        assert_eq!(
            v,
            rule(job.run(), "SkinningJob"),
            "run() and validate() disagree"
        );
        v
    };
    let ok = weights(n, 1);
    assert_eq!(check(&ok, &positions, Some(&normals), n, Some(n)), None);
    // 1. weights for another vertex count.
    assert_eq!(
        check(&weights(n + 1, 1), &positions, None, n, None),
        Some(1)
    );
    // 2. a joint beyond the palette.
    assert_eq!(check(&weights(n, 2), &positions, None, n, None), Some(2));
    // 3. an output of the wrong length, an output without its input, an input without output.
    assert_eq!(check(&ok, &positions, None, n - 1, None), Some(3));
    assert_eq!(check(&ok, &positions, None, n, Some(n)), Some(3));
    assert_eq!(check(&ok, &positions, Some(&normals), n, None), Some(3));
    assert_eq!(
        check(&ok, &positions, Some(&normals[..2]), n, Some(2)),
        Some(3)
    );
    // The CSR layout obeys the same rules.
    let csr = |n, j| {
        let w = SkinWeights {
            width: 4,
            joints: vec![j; n * 4],
            weights: vec![0.25; n * 4],
        };
        VertexWeights::csr_from_skin_weights(&w)
    };
    assert_eq!(check(&csr(n, 1), &positions, None, n, None), None);
    assert_eq!(check(&csr(n + 2, 1), &positions, None, n, None), Some(1));
    assert_eq!(check(&csr(n, 5), &positions, None, n, None), Some(2));
}

#[test]
fn palette_job_rules() {
    let arm = skinview::builtin::woodland_arm().unwrap();
    let other = skinview::builtin::humanoid().unwrap();
    let layout = PaletteLayout::new(&arm);
    let mut palette = Vec::new();
    let model = vec![Mat4::IDENTITY; arm.nodes.len()];
    let mut job = |model: &[Mat4], layout: &PaletteLayout| {
        let mut j = PaletteJob {
            scene: &arm,
            layout,
            model_from_node: model,
            palette: &mut palette,
        };
        let v = rule(j.validate(), "PaletteJob");
        assert_eq!(v, rule(j.run(), "PaletteJob"));
        v
    };
    assert_eq!(job(&model, &layout), None);
    // 1. model_from_node for another node count.
    assert_eq!(job(&model[1..], &layout), Some(1));
    // 2. a layout made for another scene.
    assert_eq!(job(&model, &PaletteLayout::new(&other)), Some(2));
}

#[test]
fn morph_job_rules() {
    let prim = Primitive {
        positions: vec![Vec3::ZERO; 2],
        normals: Some(vec![Vec3::Z; 2]),
        tangents: None,
        indices: vec![0, 1, 0],
        topology: Topology::Triangles,
        skin_weights: None,
        morph_targets: vec![MorphTarget {
            positions: Some(vec![Vec3::X; 2]),
            normals: None,
            tangents: None,
        }],
        base_color: [1.0; 4],
        ..Default::default()
    };
    let mut p = Vec::new();
    let mut nrm = Vec::new();
    let mut t: Vec<Vec4> = Vec::new();
    let mut job = |w: &[f32], with_normals: bool, with_tangents: bool| {
        let mut j = MorphJob {
            primitive: &prim,
            weights: w,
            out_positions: &mut p,
            out_normals: with_normals.then_some(&mut nrm),
            out_tangents: with_tangents.then_some(&mut t),
        };
        let v = rule(j.validate(), "MorphJob");
        assert_eq!(v, rule(j.run(), "MorphJob"));
        v
    };
    assert_eq!(job(&[0.5], true, false), None);
    // 1. a weight that is not finite.
    assert_eq!(job(&[f32::NAN], true, false), Some(1));
    assert_eq!(job(&[f32::INFINITY], true, false), Some(1));
    // 2. outputs that do not match the primitive's attributes.
    assert_eq!(job(&[0.5], false, false), Some(2));
    assert_eq!(job(&[0.5], true, true), Some(2));
}

#[test]
fn local_to_model_job_rules() {
    let arm = skinview::builtin::woodland_arm().unwrap();
    let other = skinview::builtin::humanoid().unwrap();
    let mut out = Vec::new();
    let mut job = |pose: &Pose| {
        let mut j = LocalToModelJob {
            scene: &arm,
            pose,
            model_from_node: &mut out,
        };
        let v = rule(j.validate(), "LocalToModelJob");
        assert_eq!(v, rule(j.run(), "LocalToModelJob"));
        v
    };
    assert_eq!(job(&Pose::rest(&arm)), None);
    // 1. a pose for another node count.
    assert_eq!(job(&Pose::rest(&other)), Some(1));
    // 2. a parent after its child (the scene's public fields edited out of builder order).
    let mut shuffled = arm.clone();
    let last = shuffled.nodes.len() - 1;
    shuffled.nodes[0].parent = Some(last);
    let mut stale = vec![Mat4::IDENTITY; 5];
    let mut j = LocalToModelJob {
        scene: &shuffled,
        pose: &Pose::rest(&shuffled),
        model_from_node: &mut stale,
    };
    assert_eq!(rule(j.validate(), "LocalToModelJob"), Some(2));
    assert_eq!(rule(j.run(), "LocalToModelJob"), Some(2));
    // `run` finds it on its one pass and leaves no partial output.
    assert!(stale.is_empty());
    // A late parent further down, after nodes already composed.
    let mut late = other.clone();
    let n = late.nodes.len();
    late.nodes[n / 2].parent = Some(n - 1);
    let mut out = Vec::new();
    let mut j = LocalToModelJob {
        scene: &late,
        pose: &Pose::rest(&late),
        model_from_node: &mut out,
    };
    let v = j.validate().unwrap_err().to_string();
    let r = j.run().unwrap_err().to_string();
    assert_eq!(v, r);
    assert!(out.is_empty());
}

#[test]
fn animate_job_rules() {
    let arm = skinview::builtin::woodland_arm().unwrap();
    let other = skinview::builtin::humanoid().unwrap();
    let anim = &arm.animations[0];
    let check = |cursors: usize, pose: &mut Pose, time_s: f32| {
        let mut c = vec![Cursor::default(); cursors];
        let mut j = AnimateJob {
            scene: &arm,
            animation: Some(anim),
            time_s,
            cursors: &mut c,
            pose,
        };
        let v = rule(j.validate(), "AnimateJob");
        assert_eq!(v, rule(j.run(), "AnimateJob"));
        v
    };
    let channels = anim.channels.len();
    assert_eq!(check(channels, &mut Pose::rest(&arm), 0.5), None);
    // 1. a cursor count other than the channel count.
    assert_eq!(check(channels + 1, &mut Pose::rest(&arm), 0.5), Some(1));
    // 2. a pose for another scene.
    assert_eq!(check(channels, &mut Pose::rest(&other), 0.5), Some(2));
    // 3. a time that is not finite.
    assert_eq!(check(channels, &mut Pose::rest(&arm), f32::NAN), Some(3));
    assert_eq!(
        check(channels, &mut Pose::rest(&arm), f32::INFINITY),
        Some(3)
    );
}

#[test]
fn layer_job_rules() {
    let n = 3;
    let reference = vec![Trs::IDENTITY; n];
    let pose = vec![Trs::IDENTITY; n];
    let short = vec![Trs::IDENTITY; n - 1];
    let mask = vec![1.0; n];
    let short_mask = vec![1.0; n - 1];
    let negative_mask = vec![1.0, -0.5, 1.0];
    let nan_mask = vec![1.0, 1.0, f32::NAN];
    let infinite_mask = vec![f32::INFINITY, 1.0, 1.0];
    let mut out = vec![Trs::IDENTITY; n];
    let mut check = |layers: &[Layer], threshold: f32| {
        let mut j = LayerJob {
            reference: &reference,
            layers,
            threshold,
            output: &mut out,
        };
        let v = rule(j.validate(), "LayerJob");
        assert_eq!(v, rule(j.run(), "LayerJob"));
        v
    };
    let layer = |pose, weight, mask| Layer { pose, weight, mask };
    assert_eq!(check(&[layer(&pose, 1.0, Some(&mask))], 0.1), None);
    // 1. a layer pose with another bone count.
    assert_eq!(check(&[layer(&short, 1.0, None)], 0.1), Some(1));
    // 2. a mask with another bone count.
    assert_eq!(check(&[layer(&pose, 1.0, Some(&short_mask))], 0.1), Some(2));
    // 3. a negative, NaN or infinite weight, a negative, NaN or infinite mask weight, a zero
    // or NaN threshold.
    assert_eq!(check(&[layer(&pose, -1.0, None)], 0.1), Some(3));
    assert_eq!(check(&[layer(&pose, f32::NAN, None)], 0.1), Some(3));
    for bad in [f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(check(&[layer(&pose, bad, None)], 0.1), Some(3));
    }
    for bad in [&negative_mask, &nan_mask, &infinite_mask] {
        assert_eq!(check(&[layer(&pose, 1.0, Some(bad))], 0.1), Some(3));
    }
    // The edges of "finite and non-negative" pass: -0, the smallest subnormal, f32::MAX.
    let edge_mask = vec![-0.0, f32::from_bits(1), f32::MAX];
    for good in [-0.0, f32::from_bits(1), f32::MAX] {
        assert_eq!(check(&[layer(&pose, good, Some(&edge_mask))], 0.1), None);
    }
    assert_eq!(check(&[layer(&pose, 1.0, None)], 0.0), Some(3));
    assert_eq!(check(&[layer(&pose, 1.0, None)], f32::NAN), Some(3));
}

#[test]
fn dqs_skinning_job_rules() {
    use skinview::skin::{DqJoint, DqsSkinningJob, NormalMode};
    let n = 3;
    let palette = [DqJoint::IDENTITY; 2];
    let positions = vec![Vec3::X; n];
    let normals = vec![Vec3::Y; n];
    let check = |w: &VertexWeights,
                 pos: &[Vec3],
                 nrm: Option<&[Vec3]>,
                 out_len: usize,
                 out_nrm: Option<usize>| {
        let mut out = vec![Vec3::ZERO; out_len];
        let mut out_n = out_nrm.map(|l| vec![Vec3::ZERO; l]);
        let mut job = DqsSkinningJob {
            palette: &palette,
            weights: w,
            positions: pos,
            normals: nrm,
            tangents: None,
            out_positions: &mut out,
            out_normals: out_n.as_deref_mut(),
            out_tangents: None,
            normal_mode: NormalMode::Exact,
            renormalize: true,
            orthonormalize_tangents: true,
        };
        let v = rule(job.validate(), "DqsSkinningJob");
        assert_eq!(
            v,
            rule(job.run(), "DqsSkinningJob"),
            "run() must refuse as validate()"
        );
        v
    };
    let ok = weights(n, 1);
    assert_eq!(check(&ok, &positions, Some(&normals), n, Some(n)), None);
    assert_eq!(
        check(&weights(n + 1, 0), &positions, None, n, None),
        Some(1)
    );
    assert_eq!(check(&weights(n, 2), &positions, None, n, None), Some(2));
    assert_eq!(check(&ok, &positions, Some(&normals), n, None), Some(3));
    assert_eq!(check(&ok, &positions, None, n - 1, None), Some(3));
}

#[test]
fn crowd_setup_rules() {
    use skinview::crowd::{CrowdLayer, CrowdSetup, MAX_CHARACTERS, Member};
    let scene = skinview::crowd::ozz::scene(true).unwrap();
    let ok = CrowdSetup::new(vec![Member::clip(0, 0.5)]);
    assert_eq!(rule(ok.validate(&scene), "CrowdSetup"), None);
    let broken = |members: Vec<Member>| CrowdSetup::new(members).validate(&scene);
    assert_eq!(rule(broken(vec![]), "CrowdSetup"), Some(1));
    assert_eq!(
        rule(
            broken(vec![Member::rest(); MAX_CHARACTERS + 1]),
            "CrowdSetup"
        ),
        Some(1)
    );
    assert_eq!(
        rule(broken(vec![Member::clip(1, 0.0)]), "CrowdSetup"),
        Some(2)
    );
    let negative = Member {
        layers: [
            Some(CrowdLayer {
                clip: 0,
                weight: -1.0,
            }),
            None,
        ],
        ..Member::rest()
    };
    assert_eq!(rule(broken(vec![negative]), "CrowdSetup"), Some(2));
    let nan = Member {
        speed: f32::NAN,
        ..Member::clip(0, 0.0)
    };
    assert_eq!(rule(broken(vec![nan]), "CrowdSetup"), Some(3));
    // No palette: the rig without its skin.
    let bare = skinview::crowd::ozz::scene(false).unwrap();
    let r = CrowdSetup::new(vec![Member::rest()]).validate(&bare);
    assert_eq!(rule(r, "CrowdSetup"), Some(4));
    // And the crowd refuses what its set-up refuses.
    assert!(skinview::crowd::Crowd::new(bare, CrowdSetup::new(vec![Member::rest()])).is_err());
}
