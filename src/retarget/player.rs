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
    /// Each locked foot's plants (none unless the options lock the feet).
    plants: Vec<super::foot_lock::FootPlants>,
    lock: super::foot_lock::LockScratch,
    /// The source at the time played.
    pub frame: FrameState,
    /// The target's retargeted pose.
    pub pose: Pose,
    /// The target's model matrices of that pose.
    pub model: Vec<Mat4>,
}

impl<'a> RetargetPlayer<'a> {
    /// A player of `source`'s clip `clip` on `target` through `setup` (its feet locked where
    /// the options say so: [`super::foot_lock`]).
    pub fn new(
        source: &'a Scene,
        target: &'a Scene,
        setup: &'a RetargetSetup,
        clip: usize,
    ) -> Result<RetargetPlayer<'a>> {
        let mut player = RetargetPlayer::unlocked(source, target, setup, clip)?;
        if setup.options.foot_lock {
            player.plants = player.find_plants()?;
        }
        Ok(player)
    }

    fn unlocked(
        source: &'a Scene,
        target: &'a Scene,
        setup: &'a RetargetSetup,
        clip: usize,
    ) -> Result<RetargetPlayer<'a>> {
        Ok(RetargetPlayer {
            travel: Travel::of(source, setup, clip)?,
            plants: Vec::new(),
            lock: super::foot_lock::LockScratch::default(),
            frame: FrameState::new(source),
            pose: Pose::rest(target),
            model: Vec::with_capacity(target.nodes.len()),
            source,
            target,
            setup,
            clip,
        })
    }

    /// The plants of each mapped foot over the clip, each held where the plain retarget puts
    /// the foot at its start.
    fn find_plants(&mut self) -> Result<Vec<super::foot_lock::FootPlants>> {
        use super::foot_lock::{FootPlants, feet, plants};
        let feet = feet(self.target, self.setup);
        let duration = self
            .source
            .animations
            .get(self.clip)
            .map_or(0.0, Animation::duration_s);
        let n = ((duration * super::READOUT_RATE_HZ).ceil() as usize + 1).min(super::MAX_SAMPLES);
        let at = |k: usize| {
            if n > 1 {
                duration * k as f32 / (n - 1) as f32
            } else {
                0.0
            }
        };
        let ratio = self.setup.height_ratio;
        let mut tracks: Vec<Vec<Vec3>> = feet.iter().map(|_| Vec::with_capacity(n)).collect();
        for k in 0..n {
            self.frame.evaluate(self.source, Some(self.clip), at(k))?;
            for (&t, track) in feet.iter().zip(&mut tracks) {
                let s = self.setup.map.source_of[t].unwrap_or(t);
                track.push(ratio * self.frame.model_from_node[s].w_axis.truncate());
            }
        }
        let dt = if n > 1 {
            duration / (n - 1) as f32
        } else {
            0.0
        };
        let mut out = Vec::with_capacity(feet.len());
        for (&foot, track) in feet.iter().zip(&tracks) {
            let mut held = FootPlants {
                foot,
                plants: Vec::new(),
            };
            for (a, b) in plants(track, dt, ratio) {
                self.play(at(a))?;
                held.plants
                    .push((at(a), at(b), self.model[foot].w_axis.truncate()));
            }
            out.push(held);
        }
        Ok(out)
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
        .run()?;
        let held = super::foot_lock::hold_feet(
            self.target,
            &self.plants,
            time_s,
            (&mut self.pose, &self.model),
            &mut self.lock,
        )?;
        if held {
            crate::skeleton::LocalToModelJob {
                scene: self.target,
                pose: &self.pose,
                model_from_node: &mut self.model,
            }
            .run()?;
        }
        Ok(())
    }
}
