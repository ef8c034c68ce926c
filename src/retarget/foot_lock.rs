//! Feet held where they were planted, with the project's CCD IK.
//!
//! Based on: the footplant cleanup of the motion retargeting literature (Kovar, Schreiner and
//! Gleicher, "Footskate Cleanup for Motion Capture Editing", SCA 2002: find the plants, hold
//! each foot at one place through its plant, solve the legs to reach it) with Weber's CCD
//! ([`crate::ik::CcdJob`]) in place of the analytic leg solver.
//!
//! Method: the source's feet (the profile's `leftFoot` and `rightFoot`) are played over the
//! clip at [`super::READOUT_RATE_HZ`], scaled by the height ratio; a **plant** is a stretch of
//! two or more samples in contact (the readouts' rule: within 2 cm of the foot's lowest height,
//! slower than 0.1 m/s, scaled). Each plant holds the target's foot at the place the plain
//! retarget gives it at the plant's first sample. While a plant lasts, CCD turns the thigh and
//! shin (the foot and its two parents, in one solve for both feet) until the ankle is within
//! [`LOCK_TOLERANCE_M`] of its place, starting from the retargeted pose; the foot keeps its
//! retargeted orientation in the world. Cost: a pass over the clip to find the plants, then one
//! IK solve a frame while a foot is planted. Limits: a leg too short for its place is left
//! stretched toward it (CCD's nearest); the toes follow the foot.

use glam::{Mat4, Quat, Vec3};

use super::job::RetargetSetup;
use super::map::humanoid_profile;
use crate::anim::Pose;
use crate::error::Result;
use crate::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings};
use crate::math::Trs;
use crate::scene::Scene;

/// How close CCD brings a planted ankle to its place: a tenth of a millimetre.
pub const LOCK_TOLERANCE_M: f32 = 1e-4;
/// CCD sweeps a frame: a leg's two joints converge in a few; the cap bounds a foot out of reach.
const LOCK_ITERATIONS: u32 = 30;
/// The foot and the two joints above it (shin, thigh).
const LEG_CHAIN: usize = 3;

/// One foot's plants: (start s, end s, the ankle's place in model space).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FootPlants {
    /// The target foot node.
    pub foot: usize,
    /// Its plants.
    pub plants: Vec<(f32, f32, Vec3)>,
}

/// The target nodes foot locking turns: each locked foot and the two joints above it.
pub fn locked_nodes(target: &Scene, setup: &RetargetSetup) -> Vec<usize> {
    let mut out = Vec::new();
    for foot in feet(target, setup) {
        let mut at = Some(foot);
        for _ in 0..LEG_CHAIN {
            let Some(n) = at else { break };
            out.push(n);
            at = target.nodes[n].parent;
        }
    }
    out
}

/// The target's mapped feet (profile `leftFoot`, `rightFoot`).
pub fn feet(target: &Scene, setup: &RetargetSetup) -> Vec<usize> {
    let profile = humanoid_profile(target);
    ["leftFoot", "rightFoot"]
        .iter()
        .filter_map(|bone| profile.iter().position(|b| *b == Some(*bone)))
        .filter(|&t| setup.map.source_of.get(t).copied().flatten().is_some())
        .collect()
}

/// Each planted stretch of `source_track` (the source foot's scaled places at `dt_s` apart)
/// as (first, last) sample indices.
pub fn plants(source_track: &[Vec3], dt_s: f32, ratio: f32) -> Vec<(usize, usize)> {
    let contact = super::readouts::contact(source_track, dt_s, ratio);
    let mut out = Vec::new();
    let mut start = None;
    for (k, &c) in contact.iter().chain(std::iter::once(&false)).enumerate() {
        match (c, start) {
            (true, None) => start = Some(k),
            (false, Some(s)) => {
                if k - s >= 2 {
                    out.push((s, k - 1));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Reusable buffers of [`hold_feet`].
#[derive(Clone, Debug, Default)]
pub struct LockScratch {
    effectors: Vec<Effector>,
    solved: Vec<Trs>,
    result: IkResult,
    ik: IkScratch,
}

/// Hold each foot of `plants` planted at `time_s` at its place: CCD on its leg, from `pose`
/// (the retargeted pose, `model` its model matrices), the foot's world orientation kept.
/// Returns whether any foot was held (then `pose` changed and `model` is stale).
pub fn hold_feet(
    target: &Scene,
    plants: &[FootPlants],
    time_s: f32,
    (pose, model): (&mut Pose, &[Mat4]),
    scratch: &mut LockScratch,
) -> Result<bool> {
    scratch.effectors.clear();
    for p in plants {
        if let Some(&(_, _, place)) = p
            .plants
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&time_s))
        {
            scratch.effectors.push(Effector {
                end_node: p.foot,
                chain_length: LEG_CHAIN,
                tip_local: Vec3::ZERO,
                target_model: place,
                weight: 1.0,
            });
        }
    }
    if scratch.effectors.is_empty() {
        return Ok(false);
    }
    let world = super::job::rotation;
    let kept: Vec<(usize, Quat)> = scratch
        .effectors
        .iter()
        .map(|e| (e.end_node, world(&model[e.end_node])))
        .collect();
    CcdJob {
        scene: target,
        reference: &pose.locals,
        input: &pose.locals,
        previous: None,
        participation: &[],
        limits: &[],
        effectors: &scratch.effectors,
        settings: IkSettings {
            iterations: LOCK_ITERATIONS,
            tolerance_m: LOCK_TOLERANCE_M,
            mode: IkMode::Incremental,
            ..IkSettings::default()
        },
        output: &mut scratch.solved,
        result: &mut scratch.result,
        scratch: &mut scratch.ik,
    }
    .run()?;
    pose.locals.clone_from(&scratch.solved);
    // Each foot keeps its world orientation under its turned parents.
    let mut solved_model = Vec::with_capacity(model.len());
    crate::skeleton::LocalToModelJob {
        scene: target,
        pose,
        model_from_node: &mut solved_model,
    }
    .run()?;
    for (foot, q) in kept {
        if let Some(p) = target.nodes[foot].parent {
            let parent = world(&solved_model[p]);
            pose.locals[foot].rotation = (parent.inverse() * q).normalize();
        }
    }
    Ok(true)
}
