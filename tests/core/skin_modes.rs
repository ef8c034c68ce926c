//! Skinning modes (LBS, DQS, stitching) and normal modes (exact, blend3x3, with and without
//! renormalisation): analytic cases (a single bone, the twisted tube of Weber's §"vertex
//! blending" where LBS collapses to the axis), the f64 reference, and the GPU readback of
//! every mode on every shared model and rig.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;
use crate::common::rng::XorShift64;

use glam::{DMat4, Mat4, Quat, Vec3};
use skinview::character::CharacterSetup;
use skinview::compare::{CompareOptions, compare};
use skinview::scene::SkinWeights;
use skinview::skin::dqs::{decompose, decompose_palette, pack, unpack};
use skinview::skin::reference64::skin_draw_f64_options;
use skinview::skin::{
    DqsSkinningJob, NormalMode, SkinMode, SkinOptions, SkinningJob, VertexWeights,
};

fn one_weights(n: usize, joints: &[(u32, f32)]) -> VertexWeights {
    let mut w = SkinWeights {
        width: 4,
        joints: vec![0; n * 4],
        weights: vec![0.0; n * 4],
    };
    for v in 0..n {
        for (k, &(j, wt)) in joints.iter().enumerate() {
            w.joints[v * 4 + k] = j;
            w.weights[v * 4 + k] = wt;
        }
    }
    VertexWeights::from_skin_weights(&w)
}

/// Skin `positions`/`normals` with one weight set for every vertex, LBS or DQS.
fn skin(
    palette: &[Mat4],
    weights: &[(u32, f32)],
    positions: &[Vec3],
    normals: &[Vec3],
    mode: SkinMode,
    normal_mode: NormalMode,
) -> (Vec<Vec3>, Vec<Vec3>) {
    let w = one_weights(positions.len(), weights);
    let mut out = vec![Vec3::ZERO; positions.len()];
    let mut out_n = vec![Vec3::ZERO; positions.len()];
    match mode {
        SkinMode::Dqs => {
            let mut dq = Vec::new();
            decompose_palette(palette, &mut dq);
            DqsSkinningJob {
                palette: &dq,
                weights: &w,
                positions,
                normals: Some(normals),
                tangents: None,
                out_positions: &mut out,
                out_normals: Some(&mut out_n),
                out_tangents: None,
                normal_mode,
                renormalize: true,
                orthonormalize_tangents: true,
            }
            .run()
            .unwrap();
        }
        _ => SkinningJob {
            palette,
            weights: &w,
            positions,
            normals: Some(normals),
            tangents: None,
            out_positions: &mut out,
            out_normals: Some(&mut out_n),
            out_tangents: None,
            renormalize: true,
            orthonormalize_tangents: true,
            normal_mode,
        }
        .run()
        .unwrap(),
    }
    (out, out_n)
}

/// One bone, any matrix (rotation, translation, non-uniform scale, shear, mirroring): DQS
/// is LBS, positions and normals, both normal modes — the polar decomposition loses nothing.
/// Also the packed form round-trips.
#[test]
fn dqs_of_a_single_bone_is_lbs() {
    let mut rng = XorShift64(0x5EED_D0A1);
    let positions: Vec<Vec3> = (0..64)
        .map(|_| rng.direction() * rng.range(0.1, 2.0))
        .collect();
    let normals: Vec<Vec3> = (0..64).map(|_| rng.direction()).collect();
    for case in 0..200 {
        let r = Quat::from_axis_angle(rng.direction(), rng.range(-3.1, 3.1));
        let t = rng.direction() * rng.range(0.0, 5.0);
        let mut m = Mat4::from_rotation_translation(r, t);
        if case % 2 == 1 {
            // Non-uniform scale and shear, mirrored every fourth case.
            let mut a = Mat4::from_scale(Vec3::new(
                rng.range(0.3, 2.0),
                rng.range(0.3, 2.0),
                rng.range(0.3, 2.0) * if case % 4 == 3 { -1.0 } else { 1.0 },
            ));
            a.y_axis.x = rng.range(-0.4, 0.4);
            m *= a;
        }
        let j = decompose(&m);
        assert_eq!(unpack(&pack(&j)), j);
        for nm in NormalMode::ALL {
            let (lp, ln) = skin(&[m], &[(0, 1.0)], &positions, &normals, SkinMode::Lbs, nm);
            let (dp, dn) = skin(&[m], &[(0, 1.0)], &positions, &normals, SkinMode::Dqs, nm);
            for v in 0..positions.len() {
                let scale = 1.0 + lp[v].length();
                assert!(
                    (lp[v] - dp[v]).length() < 2e-5 * scale,
                    "case {case} vertex {v}: LBS {} DQS {}",
                    lp[v],
                    dp[v]
                );
                assert!(
                    (ln[v] - dn[v]).length() < 2e-5,
                    "case {case} {nm:?} vertex {v}: normal LBS {} DQS {}",
                    ln[v],
                    dn[v]
                );
            }
        }
    }
}

/// The twisted joint (Weber §"vertex blending", fig. 7): a ring of radius r at the joint,
/// weighted half to a bone at rest and half to one twisted by θ about the bone axis. LBS
/// shrinks it to r·|cos(θ/2)| — to the axis at 180° — and DQS keeps r (checked to 2% at
/// every angle, as required, and in fact to float precision); both against the
/// analytic values.
#[test]
fn twisted_ring_collapses_under_lbs_and_keeps_its_radius_under_dqs() {
    let radius = 0.25f32;
    let ring: Vec<Vec3> = (0..32)
        .map(|k| {
            let a = k as f32 / 32.0 * std::f32::consts::TAU;
            Vec3::new(0.0, a.cos(), a.sin()) * radius
        })
        .collect();
    let normals: Vec<Vec3> = ring.iter().map(|p| p.normalize()).collect();
    for deg in (0..=180).step_by(15) {
        let theta = (deg as f32).to_radians();
        let palette = [Mat4::IDENTITY, Mat4::from_rotation_x(theta)];
        let half = [(0, 0.5), (1, 0.5)];
        let mean_radius = |ps: &[Vec3]| {
            ps.iter()
                .map(|p| Vec3::new(0.0, p.y, p.z).length())
                .sum::<f32>()
                / ps.len() as f32
        };
        let (lbs, _) = skin(
            &palette,
            &half,
            &ring,
            &normals,
            SkinMode::Lbs,
            NormalMode::Exact,
        );
        let (dqs, dqn) = skin(
            &palette,
            &half,
            &ring,
            &normals,
            SkinMode::Dqs,
            NormalMode::Exact,
        );
        let expected_lbs = radius * (theta / 2.0).cos().abs();
        assert!(
            (mean_radius(&lbs) - expected_lbs).abs() < 1e-5,
            "{deg}°: LBS radius {} vs r·|cos(θ/2)| = {expected_lbs}",
            mean_radius(&lbs)
        );
        let r = mean_radius(&dqs);
        assert!(
            (r / radius - 1.0).abs() < 0.02,
            "{deg}°: DQS radius {r} vs {radius}"
        );
        assert!((r / radius - 1.0).abs() < 1e-5, "{deg}°: DQS radius {r}");
        // DQS normals stay radial (the ring rotated by θ/2; at 180° either way round is
        // the shortest, the sign of the twisted bone's quaternion decides).
        let q = Quat::from_rotation_x(theta / 2.0);
        let q = if deg == 180 && (dqn[0] - q * ring[0].normalize()).length() > 1e-3 {
            q.inverse()
        } else {
            q
        };
        for (n, p) in dqn.iter().zip(&ring) {
            assert!(
                (*n - q * p.normalize()).length() < 1e-5,
                "{deg}°: {n} vs {}",
                q * p.normalize()
            );
        }
    }
    // At 180° LBS puts the ring on the axis.
    let palette = [Mat4::IDENTITY, Mat4::from_rotation_x(std::f32::consts::PI)];
    let (lbs, _) = skin(
        &palette,
        &[(0, 0.5), (1, 0.5)],
        &ring,
        &normals,
        SkinMode::Lbs,
        NormalMode::Exact,
    );
    assert!(lbs.iter().all(|p| Vec3::new(0.0, p.y, p.z).length() < 1e-6));
}

/// blend3x3 normals are wrong under non-uniform scale, exact ones are not: a sphere's
/// normals under a (2, 1, 1) scale against the true normals of the ellipsoid.
#[test]
fn exact_normals_follow_non_uniform_scale_and_blend3x3_does_not() {
    let mut rng = XorShift64(0xE11_1950);
    let ps: Vec<Vec3> = (0..200).map(|_| rng.direction()).collect();
    let m = Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0));
    let truth = |p: Vec3| Vec3::new(p.x / 2.0, p.y, p.z).normalize(); // gradient of x²/4+y²+z²
    for mode in [SkinMode::Lbs, SkinMode::Dqs] {
        let (out, exact) = skin(&[m], &[(0, 1.0)], &ps, &ps, mode, NormalMode::Exact);
        let (_, b3) = skin(&[m], &[(0, 1.0)], &ps, &ps, mode, NormalMode::Blend3x3);
        let mut worst_b3 = 0.0f32;
        for v in 0..ps.len() {
            let t = truth(Vec3::new(out[v].x / 2.0, out[v].y, out[v].z));
            assert!(exact[v].angle_between(t) < 1e-3, "{mode:?} exact normal");
            worst_b3 = worst_b3.max(b3[v].angle_between(t));
        }
        assert!(
            worst_b3.to_degrees() > 15.0,
            "{mode:?}: blend3x3 {worst_b3}"
        );
    }
}

/// No shared skinned model has tangents: give every primitive with normals some
/// (perpendicular to each normal, handedness alternating), so every mode skins tangents.
fn with_tangents(scene: &mut skinview::scene::Scene) {
    for mesh in &mut scene.meshes {
        for prim in &mut mesh.primitives {
            if let Some(n) = &prim.normals {
                let t = n
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let w = if i % 2 == 0 { 1.0 } else { -1.0 };
                        n.any_orthonormal_vector().extend(w)
                    })
                    .collect();
                prim.tangents = Some(t);
            }
        }
    }
}

/// Every mode and normal mode of the f32 CPU path, renormalised or not (raw normals and
/// tangents: compared relative to their length where it is above 1), against the f64
/// reference on every shared model and rig, at a few times of the first clip.
#[test]
fn every_mode_matches_the_f64_reference() {
    for path in common::all_models() {
        let mut scene = skinview::io::load(&path).unwrap();
        if scene.name.starts_with("CesiumMan") {
            with_tangents(&mut scene);
        }
        let anim = (!scene.animations.is_empty()).then_some(0);
        let duration = anim.map_or(0.0, |a| scene.animations[a].duration_s());
        for mode in SkinMode::ALL {
            for (normals, renormalize) in NormalMode::ALL
                .into_iter()
                .flat_map(|n| [(n, true), (n, false)])
            {
                let options = SkinOptions {
                    mode,
                    normals,
                    renormalize,
                };
                let mut c = CharacterSetup::clip(anim).build(&scene.clone()).unwrap();
                c.set_skin_options(options);
                for t in [0.0, duration * 0.4, duration] {
                    c.update(t, 0.0).unwrap();
                    let mfn: Vec<DMat4> =
                        skinview::skeleton::model_from_node_f64(&c.scene, &c.frame.pose);
                    let diag = skinview::skin::bounds(&c.outputs)
                        .map_or(1.0, |(lo, hi)| (hi - lo).length().max(1e-6));
                    for d in 0..c.scene.draws.len() {
                        let r =
                            skin_draw_f64_options(&c.scene, &c.frame.pose, &mfn, d, None, options);
                        for (v, (a, b)) in
                            c.outputs[d].positions.iter().zip(&r.positions).enumerate()
                        {
                            let e = (a.as_dvec3() - *b).length() / diag as f64;
                            assert!(
                                e < 1e-5,
                                "{} draw {d} vertex {v} {options:?} t={t}: {e:.2e} of diagonal",
                                scene.name
                            );
                        }
                        if let (Some(a), Some(b)) = (&c.outputs[d].normals, &r.normals) {
                            for (v, (x, y)) in a.iter().zip(b).enumerate() {
                                // Degenerate blends (zero normals) agree as zero.
                                let e = (x.as_dvec3() - *y).length() / y.length().max(1.0);
                                assert!(
                                    e < 1e-3,
                                    "{} draw {d} vertex {v} {options:?}: normal {x} vs {y}",
                                    scene.name
                                );
                            }
                        }
                        if let (Some(a), Some(b)) = (&c.outputs[d].tangents, &r.tangents) {
                            for (v, (x, y)) in a.iter().zip(b).enumerate() {
                                // A tangent parallel to its normal in the file (some faces of
                                // AnimatedMorphCube) has no direction left once made
                                // perpendicular: f32 gives zero, f64 a rounding direction.
                                if x.truncate() == Vec3::ZERO {
                                    continue;
                                }
                                let e = (x.as_dvec4() - *y).length() / y.length().max(1.0);
                                assert!(
                                    e < 1e-3,
                                    "{} draw {d} vertex {v} {options:?}: tangent {x} vs {y}",
                                    scene.name
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Stitching is one bone per vertex: each skinned vertex is exactly its largest-weight
/// joint's matrix applied to it.
#[test]
fn stitching_follows_the_largest_weight_alone() {
    let scene = skinview::io::load(&common::model("rig_seed5_40j_6inf_ushort")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.set_skin_options(SkinOptions {
        mode: SkinMode::Stitch,
        ..Default::default()
    });
    c.update(0.7, 0.0).unwrap();
    let d = 0;
    let prim = c.scene.primitive(&c.scene.draws[d]);
    let w = prim.skin_weights.as_ref().unwrap();
    let palette = c.frame.draw_palette(&c.scene, d);
    for v in 0..prim.vertex_count() {
        let row = &w.weights[v * w.width..(v + 1) * w.width];
        let best = (0..w.width).fold(0, |b, i| if row[i] > row[b] { i } else { b });
        let j = w.joints[v * w.width + best] as usize;
        let expect = palette[j].transform_point3(prim.positions[v]);
        assert!(
            (c.outputs[d].positions[v] - expect).length() < 1e-5,
            "vertex {v}"
        );
    }
}

/// The GPU readback of every skinning mode, normal mode and renormalisation matches its CPU
/// path on every shared model and rig, compute and draw capture, within the comparison's
/// tolerance (1e-5 of the model's diagonal; 1e-4 on unit normals and tangents), tangents
/// included where the model has them.
#[test]
fn gpu_readback_matches_the_cpu_in_every_mode() {
    let Some(ctx) = common::gpu() else {
        return; // no adapter here (in CI its absence fails tests/gpu/gpu_readback.rs)
    };
    let mut failures = Vec::new();
    let mut variants = vec![];
    for mode in SkinMode::ALL {
        for normals in [NormalMode::Exact, NormalMode::Blend3x3] {
            for renormalize in [true, false] {
                variants.push(SkinOptions {
                    mode,
                    normals,
                    renormalize,
                });
            }
        }
    }
    for path in common::all_models() {
        let mut scene = skinview::io::load(&path).unwrap();
        // CesiumMan gets tangents, so every mode's tangents are read back too.
        if scene.name.starts_with("CesiumMan") {
            with_tangents(&mut scene);
        }
        let tangents = scene
            .deformed_draws()
            .map(|d| scene.primitive(d))
            .any(|p| p.tangents.is_some() && p.normals.is_some());
        let anims: Vec<Option<usize>> = if scene.animations.is_empty() {
            vec![None]
        } else {
            vec![Some(0)]
        };
        for skin in &variants {
            // The vertex-shader path's two captures and the compute-skinning path.
            let options = CompareOptions {
                frames: 3,
                skin: *skin,
                captures: vec![
                    skinview::gpu::CapturePath::CaptureShader,
                    skinview::gpu::CapturePath::Draw,
                    skinview::gpu::CapturePath::ComputePass,
                ],
                ..Default::default()
            };
            let cmp = compare(ctx, &scene, &anims, &options, |_, _| {}).unwrap();
            assert_eq!(cmp.skinning, skin.describe());
            let read_tangents = cmp
                .anims
                .iter()
                .flat_map(|a| &a.draws)
                .any(|d| d.has_tangents);
            assert_eq!(read_tangents, tangents, "{}", scene.name);
            if !cmp.passed {
                failures.push(format!("{} {}: {cmp}", scene.name, skin.describe()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Weights that do not sum to 1 are used as given by LBS (Woodland's muscle bone: extra
/// weight on a bone scaled to bulge): a vertex with weight 1 on a bone at rest and 0.5 on a
/// bone scaled by s moves to p + 0.5·s·p. Native rigs reach this through muscle bones
/// (`tests/core/rig.rs`), and the GPU draws them as the CPU does (`tests/cli/cli.rs`,
/// `muscle_rig_compares_and_exports`).
#[test]
fn weights_that_do_not_sum_to_one_are_used_as_given() {
    let p = [Vec3::new(0.0, 0.3, 0.0)];
    let n = [Vec3::Y];
    let palette = [Mat4::IDENTITY, Mat4::from_scale(Vec3::splat(1.5))];
    let (out, _) = skin(
        &palette,
        &[(0, 1.0), (1, 0.5)],
        &p,
        &n,
        SkinMode::Lbs,
        NormalMode::Exact,
    );
    assert!(
        (out[0] - (p[0] + p[0] * 0.75)).length() < 1e-6,
        "{}",
        out[0]
    );
}

/// A twisted tube as a glTF file made here (not in the repository): three rings of 16
/// vertices at x = −0.5, 0, 0.5, bound to a root joint, half and half, and to a child joint
/// whose clip twists it from 0 to 180° about x over one second.
fn twisted_tube_glb(radius: f32) -> Vec<u8> {
    let mut positions = Vec::new();
    let mut joints: Vec<u16> = Vec::new();
    let mut weights: Vec<f32> = Vec::new();
    for (ring, x) in [-0.5f32, 0.0, 0.5].into_iter().enumerate() {
        for k in 0..16 {
            let a = k as f32 / 16.0 * std::f32::consts::TAU;
            positions.extend([x, radius * a.cos(), radius * a.sin()]);
            joints.extend([0, 1, 0, 0]);
            let w1 = ring as f32 * 0.5;
            weights.extend([1.0 - w1, w1, 0.0, 0.0]);
        }
    }
    let mut indices: Vec<u16> = Vec::new();
    for ring in 0..2u16 {
        for k in 0..16u16 {
            let (a, b) = (ring * 16 + k, ring * 16 + (k + 1) % 16);
            indices.extend([a, b, a + 16, b, b + 16, a + 16]);
        }
    }
    let times = [0.0f32, 1.0];
    let rotations = [0.0f32, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0];
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut push = |bytes: &[u8]| {
        views.push(
            serde_json::json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len() }),
        );
        bin.extend_from_slice(bytes);
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
    };
    push(bytemuck::cast_slice(&positions));
    push(bytemuck::cast_slice(&joints));
    push(bytemuck::cast_slice(&weights));
    push(bytemuck::cast_slice(&indices));
    push(bytemuck::cast_slice(&times));
    push(bytemuck::cast_slice(&rotations));
    let json = serde_json::json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0, 1] }],
        "nodes": [{ "mesh": 0, "skin": 0 }, { "name": "root", "children": [2] }, { "name": "twist" }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2 }, "indices": 3 }] }],
        "skins": [{ "joints": [1, 2] }],
        "animations": [{ "channels": [{ "sampler": 0, "target": { "node": 2, "path": "rotation" } }],
            "samplers": [{ "input": 4, "output": 5, "interpolation": "LINEAR" }] }],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 48, "type": "VEC3",
              "min": [-0.5, -radius, -radius], "max": [0.5, radius, radius] },
            { "bufferView": 1, "componentType": 5123, "count": 48, "type": "VEC4" },
            { "bufferView": 2, "componentType": 5126, "count": 48, "type": "VEC4" },
            { "bufferView": 3, "componentType": 5123, "count": indices.len(), "type": "SCALAR" },
            { "bufferView": 4, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0] },
            { "bufferView": 5, "componentType": 5126, "count": 2, "type": "VEC4" }
        ],
        "bufferViews": views,
        "buffers": [{ "byteLength": bin.len() }]
    });
    common::glb::pack(&json, &bin)
}

/// `skinview dump --blend lbs|dqs` on the CPU and GPU paths, on a twisted glTF tube: at 180°
/// the LBS middle ring lies on the axis (Weber's collapse), the DQS one keeps its radius
/// within 2%; at 90° LBS keeps cos 45° of it.
#[cfg(feature = "cli")]
#[test]
fn dump_modes_on_a_twisted_gltf_tube() {
    let dir = std::env::temp_dir().join(format!("skinview-modes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let radius = 0.2f32;
    let model = dir.join("twisted_tube.glb");
    std::fs::write(&model, twisted_tube_glb(radius)).unwrap();
    let paths: &[&str] = if common::gpu().is_some() {
        &["cpu", "gpu"]
    } else {
        &["cpu"]
    };
    for path in paths {
        for mode in ["lbs", "dqs"] {
            let out = dir.join(format!("{mode}-{path}.json"));
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
                .args([
                    "dump",
                    model.to_str().unwrap(),
                    "--time",
                    "0.5",
                    "--time",
                    "1",
                    "--blend",
                    mode,
                    "--path",
                    path,
                    "--out",
                    out.to_str().unwrap(),
                ])
                .env("XDG_RUNTIME_DIR", &dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", common::output_text(&o));
            let dump: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
            let ring_radius = |ti: usize| {
                let p = &dump["meshes"][0]["positions_by_time"][ti];
                (16..32)
                    .map(|v| {
                        let y = p[v * 3 + 1].as_f64().unwrap();
                        let z = p[v * 3 + 2].as_f64().unwrap();
                        (y * y + z * z).sqrt()
                    })
                    .sum::<f64>()
                    / 16.0
            };
            let (at90, at180) = (ring_radius(0) as f32, ring_radius(1) as f32);
            match mode {
                "lbs" => {
                    assert!(at180 < 1e-5, "{path} lbs 180°: {at180}");
                    let c45 = radius * std::f32::consts::FRAC_1_SQRT_2;
                    assert!((at90 - c45).abs() < 1e-4, "{path} lbs 90°: {at90}");
                }
                _ => {
                    assert!(
                        (at180 / radius - 1.0).abs() < 0.02,
                        "{path} dqs 180°: {at180}"
                    );
                    assert!((at90 / radius - 1.0).abs() < 0.02, "{path} dqs 90°: {at90}");
                }
            }
        }
    }
}

/// The storage palette's 3×4 form (`MatrixRows`) keeps every row a linear blend or stitching
/// reads: over random matrices, projective last rows included, the rows rebuild the matrix with
/// (0, 0, 0, 1) below, and a point, a normal's linear part and a direction transform exactly as
/// with the full matrix.
#[test]
fn matrix_rows_keep_what_linear_blending_reads() {
    use glam::Vec4;
    use skinview::skin::MatrixRows;
    let mut rng = XorShift64(0x3a4f);
    for _ in 0..200 {
        let cols: Vec<Vec4> = (0..4)
            .map(|_| {
                Vec4::new(
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-1.0, 1.0),
                )
            })
            .collect();
        let m = Mat4::from_cols(cols[0], cols[1], cols[2], cols[3]);
        let rows = MatrixRows::of(&m);
        for i in 0..3 {
            assert_eq!(rows.0[i], m.row(i));
        }
        let back = rows.to_mat4();
        assert_eq!(back.row(3), Vec4::W);
        let p = Vec3::new(
            rng.range(-2.0, 2.0),
            rng.range(-2.0, 2.0),
            rng.range(-2.0, 2.0),
        );
        assert_eq!(
            (back * p.extend(1.0)).truncate(),
            (m * p.extend(1.0)).truncate()
        );
        assert_eq!(back.transform_vector3(p), m.transform_vector3(p));
    }
}
