//! Animation data and sampling: keyframe samplers with irregular key times
//! (STEP / LINEAR with shortest-path SLERP / CUBICSPLINE), cached cursors, and the jobs that
//! turn (animation, time) into a pose: per channel ([`AnimateJob`]) or four tracks at a time
//! from a compiled clip ([`SoaAnimateJob`], what the frame drivers play).

mod animate;
pub mod curves;
pub mod layer;
mod sampler;
pub mod snorm;
pub mod soa;

pub use animate::{AnimateJob, Pose};
pub use layer::{BoneMask, CrossFade, Layer, LayerJob};
pub use sampler::{Cursor, Interpolation, Sampler};
pub use soa::{SoaAnimateJob, SoaClip, SoaState};

/// Which node property a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// The node's local translation.
    Translation,
    /// The node's local rotation (quaternion).
    Rotation,
    /// The node's local scale.
    Scale,
    /// Morph target weights of the node's mesh.
    Weights,
}

impl Path {
    /// The glTF name of the path (`"translation"`, `"rotation"`, `"scale"`, `"weights"`).
    pub fn name(self) -> &'static str {
        match self {
            Path::Translation => "translation",
            Path::Rotation => "rotation",
            Path::Scale => "scale",
            Path::Weights => "weights",
        }
    }
}

/// One animated property of one node.
#[derive(Clone, Debug)]
pub struct Channel {
    /// Target node (scene node index after building; source index in a raw scene).
    pub node: usize,
    /// Property the channel drives.
    pub path: Path,
    /// Keyframes of the property.
    pub sampler: Sampler,
}

/// What one more array of key times costs in a glTF file's JSON beside its 4 bytes a key: its
/// accessor with the bounds glTF requires (about 100 characters). `optimize` prices clips with
/// it, uncompressed and compressed alike.
pub const KEY_TIMES_JSON_BYTES: usize = 100;

/// Key times as their bits: two samplers have the same key times when these are equal (the
/// glTF writers then share one input accessor between them).
pub fn key_time_bits(times_s: &[f32]) -> Vec<u32> {
    times_s.iter().map(|t| t.to_bits()).collect()
}

/// The distinct key time arrays of `channels` (equal bit for bit counted once, as the glTF
/// writers share one input accessor between samplers with the same key times).
pub fn distinct_key_times<'c>(channels: impl Iterator<Item = &'c Channel>) -> Vec<&'c [f32]> {
    let mut times: Vec<&[f32]> = channels.map(|c| &c.sampler.times_s[..]).collect();
    times.sort_by_cached_key(|a| key_time_bits(a));
    times.dedup_by(|a, b| key_time_bits(a) == key_time_bits(b));
    times
}

/// An animation clip: a set of channels played on a common timeline (seconds).
#[derive(Clone, Debug)]
pub struct Animation {
    /// Clip name from the source file, if any.
    pub name: Option<String>,
    /// The clip's channels.
    pub channels: Vec<Channel>,
}

impl Animation {
    /// Last key time over all channels (the clip length; glTF clips start at their first key
    /// but play from 0).
    pub fn duration_s(&self) -> f32 {
        self.channels
            .iter()
            .filter_map(|c| c.sampler.times_s.last().copied())
            .fold(0.0, f32::max)
    }
    /// Interpolation modes used, for reports.
    pub fn interpolations(&self) -> Vec<Interpolation> {
        let mut v: Vec<Interpolation> = Vec::new();
        for c in &self.channels {
            if !v.contains(&c.sampler.interpolation) {
                v.push(c.sampler.interpolation);
            }
        }
        v
    }
}

/// A clip as a user reads it: the one home of a clip in words (`check`, `diff`, `compare` and
/// the CLI all name clips here). Made by [`crate::Scene::clip_name`], or from a report's index
/// and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClipName<'a> {
    /// Index in the scene's animations.
    pub index: usize,
    /// Its name; None when it has none or an empty one.
    pub name: Option<&'a str>,
}

impl<'a> ClipName<'a> {
    /// Clip `index` named `name` (an empty name is none).
    pub fn new(index: usize, name: Option<&'a str>) -> ClipName<'a> {
        ClipName {
            index,
            name: name.filter(|n| !n.is_empty()),
        }
    }

    /// `walk`, or `animation 2` when it has no name: what reports store.
    pub fn label(&self) -> String {
        match self.name {
            Some(n) => n.to_string(),
            None => format!("animation {}", self.index),
        }
    }

    /// `clip "walk"`, or `animation 2` when it has no name: in a sentence.
    pub fn words(&self) -> String {
        match self.name {
            Some(n) => format!("clip {n:?}"),
            None => format!("animation {}", self.index),
        }
    }

    /// `animation 2 "walk"`, or `animation 2` when it has no name: the index always.
    pub fn indexed(&self) -> String {
        match self.name {
            Some(n) => format!("animation {} {n:?}", self.index),
            None => format!("animation {}", self.index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clip's name in each form: reports, sentences, with its index.
    #[test]
    fn clip_names() {
        let walk = ClipName::new(2, Some("walk"));
        assert_eq!(
            [walk.label(), walk.words(), walk.indexed()],
            ["walk", "clip \"walk\"", "animation 2 \"walk\""]
        );
        let unnamed = ClipName::new(3, Some(""));
        assert_eq!(
            [unnamed.label(), unnamed.words(), unnamed.indexed()],
            ["animation 3", "animation 3", "animation 3"]
        );
    }
}
