//! The deformation quality report on Woodland's arm: every variant is its rest shape at 0°;
//! under a 180° twist the smallest ring of the elbow's blend zone collapses towards its axis
//! as Weber predicts (|2w − 1|·r for a ring weighted w and 1 − w: the smallest over the
//! zone's rings, from the arm's own weights), n bone links keep cos(90°/(n + 1)) of it (the
//! worst ring sits half-way between two bones 180°/(n + 1) apart), DQS keeps its radius
//! within 2%.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use glam::Vec3;
use skinview::quality::{QualityRow, arm_quality, closed_volume};

fn row<'a>(
    rows: &'a [QualityRow],
    mode: &str,
    links: usize,
    motion: &str,
    angle: f32,
) -> &'a QualityRow {
    rows.iter()
        .find(|r| r.mode == mode && r.links == links && r.motion == motion && r.angle_deg == angle)
        .unwrap_or_else(|| panic!("no row {mode} {links} {motion} {angle}"))
}

#[test]
fn the_elbow_under_every_remedy() {
    let rows = arm_quality(&[0.0, 90.0, 180.0], |_, _| {}).unwrap();
    assert_eq!(rows.len(), 2 * 3 * 6);
    for r in rows.iter().filter(|r| r.angle_deg == 0.0) {
        assert!((r.radius_ratio - 1.0).abs() < 1e-5, "{r:?}");
        assert!((r.volume_ratio - 1.0).abs() < 1e-5, "{r:?}");
        assert!(r.normal_err_deg < 1.0, "{r:?}");
    }
    // The most even ring of the blend zone: its LBS weights give the collapse to expect.
    let arm = skinview::builtin::woodland_arm().unwrap();
    let prim = &arm.meshes[0].primitives[0];
    let w = prim.skin_weights.as_ref().unwrap();
    let elbow_x = skinview::builtin::ArmParams::default().upper_length_m;
    let half_width = skinview::quality::BLEND_HALF_WIDTH_M;
    let expected = prim
        .positions
        .iter()
        .enumerate()
        .filter(|(_, p)| (p.x - elbow_x).abs() <= half_width)
        .map(|(v, _)| (2.0 * w.weights[v * w.width] - 1.0).abs() as f64)
        .fold(f64::INFINITY, f64::min);
    let lbs = row(&rows, "lbs", 0, "twist", 180.0);
    assert!(
        (lbs.radius_ratio - expected).abs() < 1e-3,
        "{lbs:?} vs min |2w-1| = {expected}"
    );
    let dqs = row(&rows, "dqs", 0, "twist", 180.0);
    assert!((dqs.radius_ratio - 1.0).abs() < 0.02, "{dqs:?}");
    let mut previous = lbs.radius_ratio;
    for links in 1..=3 {
        let l = row(&rows, "lbs", links, "twist", 180.0);
        let expected = (90f64 / (links as f64 + 1.0)).to_radians().cos();
        assert!(
            (l.radius_ratio - expected).abs() < 0.01,
            "{links} links: {l:?} vs cos(90°/{}) = {expected}",
            links + 1
        );
        assert!(l.radius_ratio > previous, "more links keep more: {l:?}");
        assert!(l.normal_err_deg < lbs.normal_err_deg, "{l:?}");
        previous = l.radius_ratio;
    }
    // Bending folds the inside of the elbow: LBS loses radius, DQS keeps it.
    let (lb, db) = (
        row(&rows, "lbs", 0, "bend", 90.0),
        row(&rows, "dqs", 0, "bend", 90.0),
    );
    assert!(
        lb.radius_ratio < 0.9 && (db.radius_ratio - 1.0).abs() < 0.02,
        "{lb:?} {db:?}"
    );
}

/// The volume measure on a closed box and an open tube (capped by the measure): analytic.
#[test]
fn closed_volume_of_known_shapes() {
    // Unit cube, 12 outward triangles.
    let p: Vec<Vec3> = (0..8)
        .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32))
        .collect();
    let faces: [[u32; 4]; 6] = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let idx: Vec<u32> = faces
        .iter()
        .flat_map(|f| [f[0], f[1], f[2], f[0], f[2], f[3]])
        .collect();
    assert!((closed_volume(&p, &idx) - 1.0).abs() < 1e-9);
    // The same cube without its top and bottom faces: the measure caps both openings.
    let open: Vec<u32> = faces[2..]
        .iter()
        .flat_map(|f| [f[0], f[1], f[2], f[0], f[2], f[3]])
        .collect();
    assert!(
        (closed_volume(&p, &open) - 1.0).abs() < 1e-9,
        "{}",
        closed_volume(&p, &open)
    );
}

/// `skinview quality --out DIR` prints the table and writes `quality.json` with the keys the
/// report promises, one row per (rig, motion, angle, variant), and the chart.
#[cfg(feature = "cli")]
#[test]
fn quality_command_writes_the_table_and_json() {
    let dir = std::env::temp_dir().join(format!("skinview-quality-{}", std::process::id()));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(["quality", "--step", "60", "--out", dir.to_str().unwrap()])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("lbs+3link") && text.contains("twist    180"),
        "{text}"
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(dir.join("quality.json")).unwrap()).unwrap();
    // Two rigs, two motions, four angles, six variants.
    assert_eq!(rows.len(), 2 * 2 * 4 * 6);
    assert!(rows.iter().any(|r| r["rig"] == "humanoid"));
    // The chart: every variant's line in its legend colour (lbs red, dqs blue, stitch purple).
    let img = skinview::io::png::read(&dir.join("quality.png")).unwrap();
    for rgb in [[214u8, 39, 40], [31, 119, 180], [148, 103, 189]] {
        let n = img.pixels.chunks_exact(4).filter(|p| p[..3] == rgb).count();
        assert!(n > 50, "{rgb:?}: {n} pixels");
    }
    for key in [
        "rig",
        "mode",
        "links",
        "motion",
        "angle_deg",
        "volume_ratio",
        "radius_ratio",
        "normal_err_deg",
    ] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "{key}");
    }
}

/// The humanoid's elbow on its connected skin: rest is rest, LBS collapses under a twist
/// (less than on the arm: its weights blend over a wider zone, so the nearest ring is not
/// 50/50), DQS keeps the ring, links keep most of it.
#[test]
fn the_humanoid_elbow_under_every_remedy() {
    let rows: Vec<QualityRow> = skinview::quality::quality(&[0.0, 180.0], |_, _| {})
        .unwrap()
        .into_iter()
        .filter(|r| r.rig == "humanoid")
        .collect();
    assert_eq!(rows.len(), 2 * 2 * 6);
    for r in rows.iter().filter(|r| r.angle_deg == 0.0) {
        assert!((r.radius_ratio - 1.0).abs() < 1e-5, "{r:?}");
        assert!((r.volume_ratio - 1.0).abs() < 1e-5, "{r:?}");
        // Surface-nets normals (the field's gradient) against the mesh's own: a few degrees.
        assert!(r.normal_err_deg < 5.0, "{r:?}");
    }
    let lbs = row(&rows, "lbs", 0, "twist", 180.0);
    let dqs = row(&rows, "dqs", 0, "twist", 180.0);
    assert!(lbs.radius_ratio < 0.5 && lbs.volume_ratio < 0.7, "{lbs:?}");
    assert!((dqs.radius_ratio - 1.0).abs() < 0.02, "{dqs:?}");
    let mut previous = lbs.radius_ratio;
    for links in 1..=3 {
        let l = row(&rows, "lbs", links, "twist", 180.0);
        assert!(
            l.radius_ratio > previous + 0.05,
            "more links keep more: {l:?}"
        );
        previous = l.radius_ratio;
    }
}

/// Every joint's zone, as `check` finds it on an imported rig, on Woodland's arm: one zone
/// (the elbow: the forearm and its parent), with the arm's rings; its shape at the twist
/// clip's 90° and 180° and the bend clip's 120° is what the remedies study measures for LBS:
/// on this arm the vertices weighted between the elbow's two bones are the study's ±5 cm
/// slab, so both find the same rings and the same piece of skin.
#[test]
fn joint_zones_of_an_imported_arm_agree_with_the_study() {
    let scene = skinview::builtin::Builtin::Arm.scene().unwrap();
    let rest = skinview::frame::skin_pose(&scene, None, 0.0, None).unwrap();
    let zones = skinview::quality::joint_zones(&scene, &rest);
    assert_eq!(zones.len(), 1, "{zones:?}");
    let zone = &zones[0];
    assert_eq!(scene.node_label(zone.joint_node), "forearm");
    assert!(zone.ring_count() >= 6, "{zone:?}");
    let rows = arm_quality(&[90.0, 120.0, 180.0], |_, _| {}).unwrap();
    let clip = |name: &str| {
        scene
            .animations
            .iter()
            .position(|a| a.name.as_deref() == Some(name))
            .unwrap()
    };
    let duration = |a: usize| scene.animations[a].duration_s();
    let twist = clip("twist");
    let bend = clip("bend");
    for (anim, time_s, motion, angle) in [
        (twist, duration(twist) / 2.0, "twist", 90.0),
        (twist, duration(twist), "twist", 180.0),
        (bend, duration(bend), "bend", 120.0),
    ] {
        let posed = skinview::frame::skin_pose(&scene, Some(anim), time_s, None).unwrap();
        let shape = zone.measure(&posed[zone.draw].positions);
        let study = row(&rows, "lbs", 0, motion, angle);
        println!("{motion} {angle}°: {shape:?}, the study {study:?}");
        assert!(
            (shape.radius_ratio - study.radius_ratio).abs() < 1e-4,
            "{motion} {angle}°: radius {} against the study's {}",
            shape.radius_ratio,
            study.radius_ratio
        );
        let volume = shape.volume_ratio.unwrap();
        assert!(
            (volume - study.volume_ratio).abs() < 1e-5,
            "{motion} {angle}°: volume {volume} against the study's {}",
            study.volume_ratio
        );
    }
}

/// On the sample characters every joint zone found measures 1 at rest (the rest pose is the
/// reference), and the limbs have zones where they are tubes round their bones.
#[test]
fn joint_zones_of_the_sample_characters() {
    for stem in ["CesiumMan", "Fox", "RiggedFigure"] {
        let scene = skinview::io::load(&crate::common::model(stem)).unwrap();
        let rest = skinview::frame::skin_pose(&scene, None, 0.0, None).unwrap();
        let zones = skinview::quality::joint_zones(&scene, &rest);
        let with_volume = zones
            .iter()
            .filter(|z| z.measure(&rest[z.draw].positions).volume_ratio.is_some())
            .count();
        let names: Vec<String> = zones
            .iter()
            .map(|z| scene.node_label(z.joint_node))
            .collect();
        println!(
            "{stem}: {} zones ({with_volume} with a volume): {names:?}",
            zones.len()
        );
        for z in &zones {
            let shape = z.measure(&rest[z.draw].positions);
            assert!((shape.radius_ratio - 1.0).abs() < 1e-9, "{stem}: {shape:?}");
            if let Some(v) = shape.volume_ratio {
                assert!((v - 1.0).abs() < 1e-9, "{stem}: {shape:?}");
            }
        }
        // Where the bones run through the limbs (CesiumMan, RiggedFigure) most joints with a
        // parent joint have rings; Fox's leg bones lie off its legs' axes, so only its feet
        // (measured: 18, 7 and 2 zones).
        let least = match stem {
            "CesiumMan" => 12,
            "RiggedFigure" => 5,
            _ => 1,
        };
        assert!(zones.len() >= least, "{stem}: {names:?}");
        if stem == "CesiumMan" {
            // Its limbs are closed tubes: most zones enclose a volume to watch.
            assert!(
                with_volume >= 8,
                "{stem}: {with_volume} zones with a volume"
            );
        }
    }
}
