//! Retargeting: one character's motion played on another skeleton.
//!
//! A [`BoneMap`] says which source bone drives each target bone (made from the names,
//! [`names`]; checked, [`MapIssues`]; kept as TOML); a [`RetargetSetup`] works out the two
//! skeletons' reference poses once; [`RetargetJob`] retargets one pose and
//! [`RetargetPlayer`] plays a clip through it frame by frame (the preview); [`retarget_clip`] writes a whole clip for the target (the `retarget` command).

mod bake;
pub mod foot_lock;
mod job;
pub mod map;
pub mod names;
mod player;
mod readouts;

pub use bake::{BAKE_RATE_HZ, MAX_SAMPLES, RetargetedClip, retarget_clip};
pub use job::{Reference, RetargetJob, RetargetOptions, RetargetSetup};
pub use map::{BoneMap, MapIssues};
pub use player::{RetargetPlayer, Travel};
pub use readouts::{
    CONTACT_HEIGHT_M, CONTACT_SPEED_M_S, ClipReadouts, EffectorReadout, READOUT_RATE_HZ,
    clip_readouts,
};
