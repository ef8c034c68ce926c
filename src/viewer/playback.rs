//! The viewer's clock: which clip plays, where on its timeline, how fast, how a frame, a scrub
//! or a step moves it, and the timeline of what the character plays (its end, its key times).
//! The state runs it ([`super::state::ViewerState::tick`], `scrub`, `step`).

use crate::character::{Character, CharacterSpec};

/// Longest frame step the playback takes (s). Playback follows the wall clock (a model drawn
/// at 2.5 fps still plays at real time); only a longer stall (a file dialog, a debugger)
/// resumes instead of jumping, and the status bar then says how far behind real time it is.
pub const MAX_STEP_S: f32 = 0.5;

/// One frame step of the timeline keys (s): 1/30 s, the frame of most authored clips.
pub const STEP_S: f32 = 1.0 / 30.0;

/// Share of real time below which the status bar says playback is behind.
pub const BEHIND_REAL_TIME: f32 = 0.95;

/// Clip playback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    /// The clip (glTF) or, for native rigs, the clip of the first layer; `None`: rest pose.
    pub anim: Option<usize>,
    /// Current time.
    pub time_s: f32,
    /// Advancing with the clock.
    pub playing: bool,
    /// Time scale (1 = real time).
    pub speed: f32,
    /// Wrap at the clip's end (else stop there).
    pub looping: bool,
}

/// What one frame's [`Playback::advance`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Advance {
    /// The frame's step (s): its wall-clock time, at most [`MAX_STEP_S`].
    pub dt_s: f32,
    /// The wall-clock time it covered (s; 0 for one that is not finite).
    pub wall_s: f32,
    /// The clock moved (it was playing).
    pub played: bool,
    /// It went past the end of a looping timeline and back to its start.
    pub wrapped: bool,
}

impl Playback {
    /// Clip `anim` from its start, playing, looping, at real time.
    pub fn new(anim: Option<usize>) -> Playback {
        Playback {
            anim,
            time_s: 0.0,
            playing: true,
            speed: 1.0,
            looping: true,
        }
    }

    /// Play clip `anim` from its start; false when it already plays.
    pub fn select(&mut self, anim: Option<usize>) -> bool {
        if self.anim == anim {
            return false;
        }
        self.anim = anim;
        self.time_s = 0.0;
        true
    }

    /// Play or pause.
    pub fn toggle(&mut self) {
        self.playing = !self.playing;
    }

    /// One frame of `wall_s` wall clock on a timeline `duration_s` long (0: no end): when
    /// playing, the time moves by the step times the speed, wrapping at the end when looping,
    /// else stopping there.
    pub fn advance(&mut self, wall_s: f32, duration_s: f32) -> Advance {
        let wall_s = if wall_s.is_finite() {
            wall_s.max(0.0)
        } else {
            0.0
        };
        let dt_s = wall_s.min(MAX_STEP_S);
        let mut advance = Advance {
            dt_s,
            wall_s,
            played: self.playing,
            wrapped: false,
        };
        if self.playing {
            self.time_s = (self.time_s + dt_s * self.speed).max(0.0);
            if duration_s > 0.0 && self.time_s > duration_s {
                if self.looping {
                    self.time_s = self.time_s.rem_euclid(duration_s);
                    advance.wrapped = true;
                } else {
                    self.time_s = duration_s;
                    self.playing = false;
                }
            }
        }
        advance
    }

    /// Jump to `time_s`: not before 0, nor past `end_s` when given (a glTF clip's end; a
    /// native rig's stage plays on past its clips).
    pub fn scrub(&mut self, time_s: f32, end_s: Option<f32>) {
        let t = if time_s.is_finite() {
            time_s.max(0.0)
        } else {
            0.0
        };
        self.time_s = match end_s {
            Some(end) => t.min(end.max(0.0)),
            None => t,
        };
    }

    /// Pause (as Blender does on a step) and say where `frames` steps go: frames of
    /// [`STEP_S`] forward (negative: back), or with `keys` (sorted) to the next (previous)
    /// key time, strictly after (before) now by more than rounding. The caller scrubs there.
    pub fn step_to(&mut self, frames: i32, keys: Option<&[f32]>) -> f32 {
        self.playing = false;
        let t = self.time_s;
        let Some(keys) = keys else {
            return t + frames as f32 * STEP_S;
        };
        let eps = 1e-5;
        let mut t2 = t;
        for _ in 0..frames.unsigned_abs() {
            t2 = if frames > 0 {
                keys.iter().copied().find(|&k| k > t2 + eps)
            } else {
                keys.iter().rev().copied().find(|&k| k < t2 - eps)
            }
            .unwrap_or(t2);
        }
        t2
    }

    /// Where the timeline ends (s; 0 for the rest pose): the clip's end, or for a native rig's
    /// `stage` the longest layer clip of `character`, or the cross-fade's end if later.
    pub fn duration_s(&self, character: &Character, stage: Option<&CharacterSpec>) -> f32 {
        let scene = &character.scene;
        match stage {
            Some(stage) => {
                let clip_s = character
                    .layers()
                    .iter()
                    .filter_map(|l| scene.animations.get(l.anim))
                    .map(|a| a.duration_s())
                    .fold(0.0, f32::max);
                let fade_end = stage
                    .fade
                    .map_or(0.0, |f| f.fade.start_s + f.fade.duration_s);
                clip_s.max(fade_end)
            }
            None => self
                .anim
                .and_then(|a| scene.animations.get(a))
                .map_or(0.0, |a| a.duration_s()),
        }
    }

    /// The clips playing: the chosen one, or a native rig's `stage`: every layer's.
    pub fn clips(&self, character: &Character, stage: Option<&CharacterSpec>) -> Vec<usize> {
        match stage {
            Some(_) => character.layers().iter().map(|l| l.anim).collect(),
            None => self.anim.into_iter().collect(),
        }
    }

    /// The key times (sorted, each once) of the clips playing ([`Playback::clips`]): of every
    /// channel, or of the channels that drive `node` only.
    pub fn key_times(
        &self,
        character: &Character,
        stage: Option<&CharacterSpec>,
        node: Option<usize>,
    ) -> Vec<f32> {
        let scene = &character.scene;
        let mut times = Vec::new();
        for anim in self
            .clips(character, stage)
            .iter()
            .filter_map(|&a| scene.animations.get(a))
        {
            for ch in anim
                .channels
                .iter()
                .filter(|c| node.is_none_or(|n| c.node == n))
            {
                times.extend_from_slice(&ch.sampler.times_s);
            }
        }
        times.sort_by(f32::total_cmp);
        times.dedup();
        times
    }
}
