//! The joint-limit and IK-chain overlay on the built-in humanoid (a native rig with limits):
//! the angles it shows are those of the pose (decomposed here with glam's own ZYX Euler, not
//! the solver's), inside each box; a target out of reach pins joints on their bounds, and
//! exactly those arcs turn red; each chain is drawn joint to joint to its tip.
#![allow(clippy::unwrap_used)] // test code

use glam::{EulerRot, Vec3};
use skinview::builtin::Builtin;
use skinview::gpu::OverlayGeometry;
use skinview::io::ModelSource;
use skinview::view::limits::{
    AT_BOUND_RAD, CHAIN_COLOR, CLAMPED_COLOR, draw_chains, draw_limits, limited_joints,
};
use skinview::viewer::state::ViewerState;

fn humanoid() -> ViewerState {
    ViewerState::new(
        ModelSource::Builtin(Builtin::Humanoid).load().unwrap(),
        true,
    )
    .unwrap()
}

/// Each joint's angles from the pose (glam's ZYX, stored `[z, y, x]`).
fn pose_angles(s: &ViewerState, node: usize) -> [f32; 3] {
    let c = &s.character;
    let q = c.reference_pose()[node].rotation.inverse() * c.frame.pose.locals[node].rotation;
    let (z, y, x) = q.normalize().to_euler(EulerRot::ZYX);
    [z, y, x]
}

#[test]
fn limit_arcs_show_the_pose_and_turn_red_on_a_bound() {
    let mut s = humanoid();
    s.playback.playing = false;
    s.tick(0.0).unwrap();
    let joints = limited_joints(&s.character, None, &|_| 0.1);
    assert!(
        !joints.is_empty(),
        "the humanoid's IK chains have limited joints"
    );
    for j in &joints {
        let expected = pose_angles(&s, j.node);
        for k in 0..3 {
            assert!(
                (j.angles_rad[k] - expected[k]).abs() < 1e-3,
                "node {}: {:?} vs {expected:?}",
                j.node,
                j.angles_rad
            );
        }
        assert!(j.limits.contains_euler(j.angles_rad, 1e-3), "{j:?}");
    }
    // A target on the chain's own root joint: the hand cannot fold back onto the shoulder, so
    // the joints stop on their bounds.
    let root = joints.iter().map(|j| j.node).min().unwrap();
    let shoulder = s.character.frame.model_from_node[root].w_axis.truncate();
    s.set_ik_target(shoulder + Vec3::new(0.0, -0.02, 0.02));
    for _ in 0..60 {
        s.tick(1.0 / 30.0).unwrap();
    }
    let joints = limited_joints(&s.character, None, &|_| 0.1);
    let pinned: usize = joints
        .iter()
        .flat_map(|j| j.at_bound)
        .filter(|b| *b)
        .count();
    assert!(pinned > 0, "no joint on a bound: {joints:?}");
    for j in &joints {
        let a = pose_angles(&s, j.node);
        for k in 0..3 {
            let (lo, hi) = (j.limits.min_rad[k], j.limits.max_rad[k]);
            let on = (a[k] - lo).abs() < AT_BOUND_RAD || (a[k] - hi).abs() < AT_BOUND_RAD;
            assert_eq!(
                j.at_bound[k], on,
                "node {} axis {k}: {a:?} in {lo}..{hi}",
                j.node
            );
        }
    }
    // Red arcs: three lines per arc segment run, one run per pinned axis.
    let mut g = OverlayGeometry::default();
    draw_limits(&joints, &mut g);
    let red = g
        .lines_front
        .chunks(2)
        .filter(|l| l[0].color == CLAMPED_COLOR)
        .count();
    assert!(
        red > 0 && red % pinned == 0,
        "{red} red lines for {pinned} pinned axes"
    );
    // The chains: one line per joint turned, from the tip up.
    let ik = s.character.ik.as_ref().unwrap();
    let mut g = OverlayGeometry::default();
    let tips = draw_chains(&s.character, &mut g);
    assert_eq!(tips.len(), ik.effectors.len());
    let expected: usize = ik.effectors.iter().map(|e| e.chain_length).sum();
    let chain = g
        .lines_front
        .iter()
        .filter(|v| v.color[..3] == CHAIN_COLOR)
        .count()
        / 2;
    assert_eq!(chain, expected);
    for (e, (tip, w)) in ik.effectors.iter().zip(&tips) {
        let m = s.character.frame.model_from_node[e.end_node];
        assert!(m.transform_point3(e.tip_local).distance(*tip) < 1e-6);
        assert_eq!(*w, e.weight);
    }
}
