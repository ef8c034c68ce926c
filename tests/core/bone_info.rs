//! A bone's transform taken apart for the inspector, against glam's own composition: the
//! translation, rotation and scale of a TRS matrix come back, and the Euler angles rebuild the
//! rotation as Blender's XYZ order does (`Rz · Ry · Rx`), over seeded random transforms.
#![allow(clippy::unwrap_used)] // test code: a panic is the report

use crate::common::rng::XorShift64;

use glam::{Mat4, Quat, Vec3};
use skinview::info::TransformParts;

#[test]
fn transform_parts_rebuild_the_matrix() {
    let mut rng = XorShift64(0xb0_4e5);
    let mut r = || rng.next_f32() * 2.0 - 1.0;
    for _ in 0..500 {
        let q = Quat::from_xyzw(r(), r(), r(), r()).normalize();
        let t = Vec3::new(r(), r(), r()) * 10.0;
        let s = Vec3::new(0.2 + r().abs(), 0.2 + r().abs(), 0.2 + r().abs());
        let p = TransformParts::of(&Mat4::from_scale_rotation_translation(s, q, t));
        assert!(p.translation.distance(t) < 1e-4, "{p:?}");
        assert!(p.scale.distance(s) < 1e-4, "{p:?} vs {s}");
        assert!(p.rotation.dot(q).abs() > 1.0 - 1e-5, "{p:?} vs {q}");
        let e = p.euler_deg * (std::f32::consts::PI / 180.0);
        let rebuilt =
            Quat::from_rotation_z(e.z) * Quat::from_rotation_y(e.y) * Quat::from_rotation_x(e.x);
        assert!(
            rebuilt.dot(q).abs() > 1.0 - 1e-5,
            "{:?} vs {q}",
            p.euler_deg
        );
    }
    // A quarter turn about X alone reads (90, 0, 0).
    let p = TransformParts::of(&Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2));
    assert!(
        p.euler_deg.distance(Vec3::new(90.0, 0.0, 0.0)) < 1e-3,
        "{:?}",
        p.euler_deg
    );
}
