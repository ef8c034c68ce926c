//! ozz-animation's benchmark workload, built exactly as `../shared/peers/ozzbench/ozz_bench.cc`
//! builds it, so skinview's figures stand beside ozz's in one run: a 64-joint random tree, a
//! 1 s clip with 30 linear keys on every translation, rotation and scale track, and for the
//! crowd case a skin of every joint whose inverse bind matrices invert the rest pose (ozz's
//! `inverse_bind`). Character c of a crowd starts at phase frac(c × 0.6180339887) of the clip
//! ([`super::golden_phase`]) and plays at 60 Hz.
//!
//! The same xorshift64 stream (Marsaglia 13/7/17, starting state 0xD1B54A32D192ED03, floats
//! from the top 24 bits) and the same draw order as ozz_bench, so the trees and keys match.

use glam::{Mat4, Vec3};

use super::{CrowdSetup, Member, golden_phase};
use crate::anim::{Animation, Channel, Interpolation, Path, Sampler};
use crate::error::Result;
use crate::math::Trs;
use crate::math::XorShift64;
use crate::scene::{Node, RawScene, Scene, SceneBuilder, Skin};

/// Joints of the rig (ozz_bench's `kJoints`).
pub const JOINTS: usize = 64;

/// Keys per track over the 1 s clip (ozz_bench's `kKeys`).
pub const KEYS: usize = 30;

/// The frame rate the clip plays at (ozz_bench's 60 frames a second).
pub const FRAME_HZ: f32 = 60.0;

/// The rig and its clip (`with_skin`: and a skin of every joint, for palettes).
pub fn scene(with_skin: bool) -> Result<Scene> {
    let mut r = XorShift64(0xD1B5_4A32_D192_ED03);
    let mut parent = vec![None; JOINTS];
    for (i, p) in parent.iter_mut().enumerate().skip(1) {
        *p = Some(((r.next_f32() * i as f32) as usize).min(i - 1));
    }
    // ozz fills joint transforms depth-first from the root, children in index order.
    let mut children = vec![Vec::new(); JOINTS];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(c);
        }
    }
    let mut order = Vec::with_capacity(JOINTS);
    let mut stack = vec![0usize];
    while let Some(j) = stack.pop() {
        order.push(j);
        stack.extend(children[j].iter().rev());
    }
    let mut translation = vec![Vec3::ZERO; JOINTS];
    for &j in &order {
        translation[j] = Vec3::new(0.1 + 0.1 * r.next_f32(), 0.1 * r.next_f32(), 0.0);
    }
    let nodes: Vec<Node> = (0..JOINTS)
        .map(|i| Node {
            name: Some(format!("j{i}")),
            source_index: i,
            parent: parent[i],
            rest: Trs {
                translation: translation[i],
                ..Trs::IDENTITY
            },
            matrix: None,
            mesh: None,
            skin: None,
            morph_weights: None,
        })
        .collect();
    let channels = tracks(&order, &mut r);
    let skins = match with_skin {
        true => vec![rest_skin(&nodes)],
        false => Vec::new(),
    };
    SceneBuilder::build(RawScene {
        name: "ozz_workload_64".into(),
        nodes,
        skins,
        animations: vec![Animation {
            name: Some("clip".into()),
            channels,
        }],
        ..Default::default()
    })
}

/// Tracks in ozz's joint order (depth-first), 30 keys of T, R, S each.
fn tracks(order: &[usize], r: &mut XorShift64) -> Vec<Channel> {
    let times_s: Vec<f32> = (0..KEYS).map(|k| k as f32 / (KEYS - 1) as f32).collect();
    let mut channels = Vec::with_capacity(3 * JOINTS);
    for &j in order {
        let (mut t, mut q, mut sc) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..KEYS {
            t.extend([r.range(-0.2, 0.2), r.range(-0.2, 0.2), r.range(-0.2, 0.2)]);
            let (ax, ay, az, aw) = (
                r.range(-1.0, 1.0),
                r.range(-1.0, 1.0),
                r.range(-1.0, 1.0),
                r.range(0.5, 1.0),
            );
            let inv = 1.0 / (ax * ax + ay * ay + az * az + aw * aw).sqrt();
            q.extend([ax * inv, ay * inv, az * inv, aw * inv]);
            sc.extend([r.range(0.9, 1.1), r.range(0.9, 1.1), r.range(0.9, 1.1)]);
        }
        for (path, values, components) in [
            (Path::Translation, t, 3),
            (Path::Rotation, q, 4),
            (Path::Scale, sc, 3),
        ] {
            channels.push(Channel {
                node: j,
                path,
                sampler: Sampler {
                    interpolation: Interpolation::Linear,
                    times_s: times_s.clone(),
                    values,
                    components,
                    is_rotation: path == Path::Rotation,
                },
            });
        }
    }
    channels
}

/// A skin of every joint, its inverse bind matrices the inverse of the rest pose in model
/// space (parents come before children, so one pass composes it).
fn rest_skin(nodes: &[Node]) -> Skin {
    let mut model = Vec::with_capacity(nodes.len());
    for n in nodes {
        let parent = n.parent.and_then(|p| model.get(p)).copied();
        model.push(parent.unwrap_or(Mat4::IDENTITY) * n.rest.to_mat4());
    }
    Skin {
        name: Some("ozz_workload".into()),
        joints: (0..nodes.len()).collect(),
        joint_from_bind: model.iter().map(Mat4::inverse).collect(),
    }
}

/// ozz_bench's crowd: `n` characters on the clip, character c at phase frac(c × 0.618…),
/// no sharing (ozz evaluates every character), on `threads` threads (0: every core).
pub fn crowd_setup(n: usize, threads: usize) -> CrowdSetup {
    CrowdSetup {
        members: (0..n).map(|c| Member::clip(0, golden_phase(c))).collect(),
        threads,
        share: false,
        on_worker_start: None,
    }
}
