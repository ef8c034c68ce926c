//! Characters for the retargeting tests, made from the built-in humanoid: its arms turned
//! in the rest pose, re-bound there (mesh and inverse bind matrices), renamed the Mixamo way
//! and scaled.
#![allow(clippy::unwrap_used)] // test code: a panic is its report

use std::path::Path;

use glam::{Mat4, Quat, Vec3};
use skinview::frame::{FrameState, skin_pose};
use skinview::io::ModelSource;
use skinview::scene::Scene;

pub fn humanoid() -> Scene {
    ModelSource::from_arg(Some(Path::new("builtin:humanoid")))
        .unwrap()
        .load()
        .unwrap()
        .scene
}

pub fn node(scene: &Scene, name: &str) -> usize {
    scene
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// `scene` with `bones` turned by `angle_rad` about the horizontal axis across each bone, in
/// the rest pose (each bone's world turn; children follow): arms lowered for negative angles.
pub fn turn_rest(mut scene: Scene, bones: &[&str], angle_rad: f32) -> Scene {
    for name in bones {
        let b = node(&scene, name);
        let mut frame = FrameState::new(&scene);
        frame.evaluate(&scene, None, 0.0).unwrap();
        let m = &frame.model_from_node;
        let child = (0..scene.nodes.len())
            .find(|&c| scene.nodes[c].parent == Some(b))
            .unwrap();
        let along = (m[child].w_axis - m[b].w_axis).truncate().normalize();
        let axis = along.cross(Vec3::Y).normalize();
        let turn = Quat::from_axis_angle(axis, angle_rad);
        let parent = scene.nodes[b]
            .parent
            .map_or(Quat::IDENTITY, |p| m[p].to_scale_rotation_translation().1);
        let local = &mut scene.nodes[b].rest.rotation;
        *local = (parent.inverse() * turn * parent * *local).normalize();
    }
    scene
}

/// `scene` re-bound in its rest pose: the mesh skinned into it and the inverse bind matrices
/// made from it, so the rest pose is the bind pose.
pub fn rebind(mut scene: Scene) -> Scene {
    let posed = skin_pose(&scene, None, 0.0, None).unwrap();
    let mut frame = FrameState::new(&scene);
    frame.evaluate(&scene, None, 0.0).unwrap();
    for (d, out) in scene.draws.clone().iter().zip(posed) {
        let p = &mut scene.meshes[d.mesh].primitives[d.primitive];
        p.positions = out.positions;
        p.normals = out.normals;
        p.tangents = None;
    }
    for skin in &mut scene.skins {
        for (j, &n) in skin.joints.iter().enumerate() {
            skin.joint_from_bind[j] = frame.model_from_node[n].inverse();
        }
    }
    scene
}

/// The humanoid's bone names as Mixamo writes them.
pub const MIXAMO: [(&str, &str); 18] = [
    ("pelvis", "mixamorig:Hips"),
    ("spine", "mixamorig:Spine"),
    ("chest", "mixamorig:Spine1"),
    ("head", "mixamorig:Head"),
    ("l_clavicle", "mixamorig:LeftShoulder"),
    ("l_upper_arm", "mixamorig:LeftArm"),
    ("l_forearm", "mixamorig:LeftForeArm"),
    ("l_hand", "mixamorig:LeftHand"),
    ("r_clavicle", "mixamorig:RightShoulder"),
    ("r_upper_arm", "mixamorig:RightArm"),
    ("r_forearm", "mixamorig:RightForeArm"),
    ("r_hand", "mixamorig:RightHand"),
    ("l_thigh", "mixamorig:LeftUpLeg"),
    ("l_shin", "mixamorig:LeftLeg"),
    ("l_foot", "mixamorig:LeftFoot"),
    ("r_thigh", "mixamorig:RightUpLeg"),
    ("r_shin", "mixamorig:RightLeg"),
    ("r_foot", "mixamorig:RightFoot"),
];

/// `scene` renamed the Mixamo way, scaled by `k` (translations, mesh, bind matrices) and
/// without clips.
pub fn mixamo(mut scene: Scene, k: f32) -> Scene {
    for (from, to) in MIXAMO {
        let n = node(&scene, from);
        scene.nodes[n].name = Some(to.to_string());
    }
    for n in &mut scene.nodes {
        n.rest.translation *= k;
    }
    for m in &mut scene.meshes {
        for p in &mut m.primitives {
            p.positions.iter_mut().for_each(|x| *x *= k);
        }
    }
    let scale = Mat4::from_scale(Vec3::splat(k));
    for s in &mut scene.skins {
        for ibm in &mut s.joint_from_bind {
            *ibm = scale * *ibm * scale.inverse();
        }
    }
    scene.animations.clear();
    scene.name = "mixamo-humanoid".into();
    scene
}

pub const ARMS: [&str; 2] = ["l_upper_arm", "r_upper_arm"];
pub const A_POSE_RAD: f32 = -std::f32::consts::FRAC_PI_4;
