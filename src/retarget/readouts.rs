//! How well a retargeted clip follows its source: the feet's sliding while planted and the
//! hands' and feet's distance from where the source puts them, scaled.
//!
//! Based on: foot-skate measures of the motion retargeting literature (Gleicher, "Retargetting
//! Motion to New Characters", SIGGRAPH 1998: footplants as the constraints a retarget must
//! keep) and the contact rule animation tools use: a foot is planted while it is near its
//! lowest height and barely moving.
//!
//! Method: both clips are played at [`READOUT_RATE_HZ`]; a foot (the profile's `leftFoot`,
//! `rightFoot`, falling back to toes) is **in contact** while within [`CONTACT_HEIGHT_M`] of its
//! lowest height over the clip and slower than [`CONTACT_SPEED_M_S`] (the source's thresholds
//! scaled by the height ratio); **sliding** is the horizontal distance it covers between two
//! samples both in contact, summed over the clip. The **reach** error of a hand or foot is its
//! distance from the source's, with the source's offset from its hips scaled by the height
//! ratio and put on the target's hips.
//! Cost: two evaluations and one retarget per sample. Limits: a skeleton without mapped hands
//! and feet has no readouts.

use glam::Vec3;

use super::job::RetargetSetup;
use super::map::humanoid_profile;
use super::player::RetargetPlayer;
use crate::error::Result;
use crate::scene::Scene;

/// Samples a second the readouts are measured at.
pub const READOUT_RATE_HZ: f32 = 60.0;
/// A foot this close to its lowest height may be planted (on the source; scaled on the target).
pub const CONTACT_HEIGHT_M: f32 = 0.02;
/// A foot slower than this may be planted (on the source; scaled on the target).
pub const CONTACT_SPEED_M_S: f32 = 0.1;

/// One end effector's readouts over a clip.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EffectorReadout {
    /// The profile bone (`leftHand`, `rightFoot`, ...).
    pub bone: &'static str,
    /// Target node.
    pub target_node: usize,
    /// Largest distance from the source's scaled place (m).
    pub max_reach_error_m: f32,
    /// Mean distance from the source's scaled place (m).
    pub mean_reach_error_m: f32,
    /// Feet: horizontal distance covered while in contact on the target (m).
    pub target_sliding_m: Option<f32>,
    /// Feet: the same on the source, scaled by the height ratio (m).
    pub source_sliding_m: Option<f32>,
    /// Feet: samples in contact on the target.
    pub contact_samples: Option<usize>,
}

/// The readouts of one clip.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ClipReadouts {
    /// Samples measured.
    pub samples: usize,
    /// Hands and feet.
    pub effectors: Vec<EffectorReadout>,
}

const ENDS: [(&str, &str); 4] = [
    ("leftHand", ""),
    ("rightHand", ""),
    ("leftFoot", "leftToes"),
    ("rightFoot", "rightToes"),
];

/// The readouts of `source`'s clip `clip` retargeted onto `target` (see the module
/// documentation).
pub fn clip_readouts(
    source: &Scene,
    target: &Scene,
    setup: &RetargetSetup,
    clip: usize,
) -> Result<ClipReadouts> {
    let profile = humanoid_profile(target);
    let find = |bone: &str| {
        (!bone.is_empty())
            .then(|| profile.iter().position(|b| *b == Some(bone)))
            .flatten()
    };
    let ends: Vec<(&'static str, usize, usize)> = ENDS
        .iter()
        .filter_map(|&(bone, fallback)| {
            let t = find(bone).or_else(|| find(fallback))?;
            Some((bone, t, setup.map.source_of[t]?))
        })
        .collect();
    let Some((hips_t, hips_s)) = setup.hips else {
        return Ok(ClipReadouts::default());
    };
    let duration = source.animations.get(clip).map_or(0.0, |a| a.duration_s());
    let n = ((duration * READOUT_RATE_HZ).ceil() as usize + 1).min(super::MAX_SAMPLES);
    let mut player = RetargetPlayer::new(source, target, setup, clip)?;
    // Per end over time: the target's place, the source's offset from its hips scaled and put
    // on the target's hips (reach), the source's place scaled (its own sliding).
    type Track = (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>);
    let mut tracks: Vec<Track> = ends.iter().map(|_| Track::default()).collect();
    let ratio = setup.height_ratio;
    for k in 0..n {
        let time_s = if n > 1 {
            duration * k as f32 / (n - 1) as f32
        } else {
            0.0
        };
        player.play(time_s)?;
        let (frame, model) = (&player.frame, &player.model);
        let place = |m: &glam::Mat4| m.w_axis.truncate();
        let hips_now_s = place(&frame.model_from_node[hips_s]);
        let hips_now_t = place(&model[hips_t]);
        for ((_, t, s), (tt, reach, own)) in ends.iter().zip(&mut tracks) {
            let source_now = place(&frame.model_from_node[*s]);
            tt.push(place(&model[*t]));
            reach.push(hips_now_t + ratio * (source_now - hips_now_s));
            own.push(ratio * source_now);
        }
    }
    let dt = if n > 1 {
        duration / (n - 1) as f32
    } else {
        0.0
    };
    let effectors = ends
        .iter()
        .zip(&tracks)
        .map(|(&(bone, t, _), (tt, reach, own))| {
            let errors: Vec<f32> = tt.iter().zip(reach).map(|(a, b)| a.distance(*b)).collect();
            let foot = bone.ends_with("Foot");
            let contacts = foot.then(|| contact(tt, dt, ratio));
            let source_contacts = foot.then(|| contact(own, dt, ratio));
            EffectorReadout {
                bone,
                target_node: t,
                max_reach_error_m: errors.iter().copied().fold(0.0, f32::max),
                mean_reach_error_m: errors.iter().sum::<f32>() / errors.len().max(1) as f32,
                target_sliding_m: contacts.as_ref().map(|c| sliding(tt, c)),
                source_sliding_m: source_contacts.as_ref().map(|c| sliding(own, c)),
                contact_samples: contacts.map(|c| c.iter().filter(|x| **x).count()),
            }
        })
        .collect();
    Ok(ClipReadouts {
        samples: n,
        effectors,
    })
}

/// Per sample, whether the foot at `track` is planted (thresholds scaled by `ratio`).
pub(super) fn contact(track: &[Vec3], dt: f32, ratio: f32) -> Vec<bool> {
    let lowest = track.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    (0..track.len())
        .map(|k| {
            let speed = match (k.checked_sub(1), track.get(k + 1)) {
                _ if dt <= 0.0 => 0.0,
                (Some(a), Some(b)) => b.distance(track[a]) / (2.0 * dt),
                (Some(a), None) => track[k].distance(track[a]) / dt,
                (None, Some(b)) => b.distance(track[k]) / dt,
                (None, None) => 0.0,
            };
            track[k].y - lowest <= CONTACT_HEIGHT_M * ratio && speed < CONTACT_SPEED_M_S * ratio
        })
        .collect()
}

/// Horizontal distance covered between consecutive samples both in contact.
fn sliding(track: &[Vec3], contact: &[bool]) -> f32 {
    track
        .windows(2)
        .zip(contact.windows(2))
        .filter(|(_, c)| c[0] && c[1])
        .map(|(p, _)| {
            let d = p[1] - p[0];
            Vec3::new(d.x, 0.0, d.z).length()
        })
        .fold(0.0, |a, b| a + b)
}
