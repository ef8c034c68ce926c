//! The rest and bind poses and their gap, against what an inverse bind matrix moved by a known
//! offset must do (computed here from the rest pose alone): only that joint differs, its bind
//! place moves by the offset through its rest rotation, and its gap is the offset's length.
#![allow(clippy::unwrap_used)] // test code

use glam::{Mat4, Vec3};
use skinview::poses::{BIND_REST_REL, ReferencePoses};

use crate::common;

#[test]
fn a_moved_bind_matrix_moves_only_its_joint() {
    let mut scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let diagonal = {
        let p = ReferencePoses::new(&scene).unwrap();
        // A consistent rig: every joint's bind place is its rest place, nothing differs.
        for n in (0..scene.nodes.len()).filter(|&n| p.bound[n]) {
            let (r, b) = (p.rest[n].w_axis.truncate(), p.bind[n].w_axis.truncate());
            assert!(
                r.distance(b) < 1e-4,
                "{}: rest {r} bind {b}",
                scene.node_label(n)
            );
        }
        assert!(p.gap_m.iter().all(|g| *g < 1e-5), "{:?}", p.gap_m);
        // The joints' extent: a lower bound of the model's diagonal (a stricter threshold).
        let b = skinview::math::finite_bounds(p.rest.iter().map(|m| m.w_axis.truncate()));
        skinview::math::bounds_diagonal_f64(b.unwrap())
    };
    let joint = 3;
    let node = scene.skins[0].joints[joint];
    let offset = Vec3::new(0.01, 0.0, 0.0);
    let ibm = scene.skins[0].joint_from_bind[joint];
    scene.skins[0].joint_from_bind[joint] = Mat4::from_translation(offset) * ibm;
    let p = ReferencePoses::new(&scene).unwrap();
    let rest = p.rest[node];
    // The vertices it moves go by rest · offset; its bind place by rest · (−offset).
    let expected_gap = f64::from(rest.transform_vector3(offset).length());
    assert!(
        (p.gap_m[node] / expected_gap - 1.0).abs() < 1e-3,
        "gap {} vs {expected_gap}",
        p.gap_m[node]
    );
    let moved = p.bind[node].w_axis.truncate() - rest.w_axis.truncate();
    assert!(
        moved.distance(rest.transform_vector3(-offset)) < 1e-5,
        "bind moved by {moved}"
    );
    assert!(p.differs(node, diagonal));
    assert!(expected_gap > BIND_REST_REL * diagonal);
    for n in (0..scene.nodes.len()).filter(|&n| n != node) {
        assert!(
            !p.differs(n, diagonal),
            "{} differs too",
            scene.node_label(n)
        );
    }
    // Its children that are not joints follow its bind place (none here are), and its joint
    // children keep their own bind matrices: still on their rest places.
    for n in (0..scene.nodes.len()).filter(|&n| scene.nodes[n].parent == Some(node)) {
        let (r, b) = (p.rest[n].w_axis.truncate(), p.bind[n].w_axis.truncate());
        assert_eq!(p.bound[n], r.distance(b) < 1e-4, "{}", scene.node_label(n));
    }
}
