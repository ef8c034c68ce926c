//! The source played and retargeted frame by frame: what the clip writer, the readouts and a
//! preview step through (set-up once, then one call a frame), and the travel a clip played in
//! place takes away.

use glam::{Mat4, Vec3};

use super::job::{RetargetJob, RetargetSetup};
use crate::anim::{Animation, Pose};
use crate::error::Result;
use crate::frame::FrameState;
use crate::scene::Scene;

/// The hips' travel a clip played in place takes away: the straight line, on the ground,
/// from where the source hips are at the clip's start to where they are at its end, scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Travel {
    /// Horizontal (x, z) move over the clip, scaled to the target.
    pub over_clip: Vec3,
    /// The clip's length in seconds.
    pub duration_s: f32,
}

impl Travel {
    /// No travel taken away (root motion kept).
    pub const NONE: Travel = Travel {
        over_clip: Vec3::ZERO,
        duration_s: 0.0,
    };

    /// The travel of `source`'s clip `clip` through `setup` (none with root motion kept).
    pub fn of(source: &Scene, setup: &RetargetSetup, clip: usize) -> Result<Travel> {
        let (Some((_, s)), false) = (setup.hips, setup.options.root_motion) else {
            return Ok(Travel::NONE);
        };
        let duration_s = source
            .animations
            .get(clip)
            .map_or(0.0, Animation::duration_s);
        let mut frame = FrameState::new(source);
        let mut at = |t: f32| -> Result<Vec3> {
            frame.evaluate(source, Some(clip), t)?;
            Ok(frame.model_from_node[s].w_axis.truncate())
        };
        let moved = at(duration_s)? - at(0.0)?;
        Ok(Travel {
            over_clip: setup.height_ratio * Vec3::new(moved.x, 0.0, moved.z),
            duration_s,
        })
    }

    /// The travel taken away at `time_s`.
    pub fn at(&self, time_s: f32) -> Vec3 {
        match self.duration_s > 0.0 {
            true => self.over_clip * (time_s / self.duration_s).clamp(0.0, 1.0),
            false => Vec3::ZERO,
        }
    }
}

/// A source clip played on the target: after [`RetargetPlayer::play`], the source's frame, the
/// target's pose and its model matrices at that time.
pub struct RetargetPlayer<'a> {
    source: &'a Scene,
    target: &'a Scene,
    setup: &'a RetargetSetup,
    clip: usize,
    travel: Travel,
    /// The source at the time played.
    pub frame: FrameState,
    /// The target's retargeted pose.
    pub pose: Pose,
    /// The target's model matrices of that pose.
    pub model: Vec<Mat4>,
}

impl<'a> RetargetPlayer<'a> {
    /// A player of `source`'s clip `clip` on `target` through `setup`.
    pub fn new(
        source: &'a Scene,
        target: &'a Scene,
        setup: &'a RetargetSetup,
        clip: usize,
    ) -> Result<RetargetPlayer<'a>> {
        Ok(RetargetPlayer {
            travel: Travel::of(source, setup, clip)?,
            frame: FrameState::new(source),
            pose: Pose::rest(target),
            model: Vec::with_capacity(target.nodes.len()),
            source,
            target,
            setup,
            clip,
        })
    }

    /// Play the source at `time_s` and retarget it.
    pub fn play(&mut self, time_s: f32) -> Result<()> {
        self.frame.evaluate(self.source, Some(self.clip), time_s)?;
        self.pose.reset(self.target);
        RetargetJob {
            setup: self.setup,
            target: self.target,
            source_model: &self.frame.model_from_node,
            source_pose: &self.frame.pose,
            travel: self.travel.at(time_s),
            target_pose: &mut self.pose,
            target_model: &mut self.model,
        }
        .run()
    }
}
