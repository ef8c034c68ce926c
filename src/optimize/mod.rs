//! `skinview optimize`'s library side (issue 48): where a clip is checked, how far each joint's
//! turn reaches on the skin, the worst skinned-vertex distance between two versions of a
//! character, the key reduction of one channel (and its refit), and the job that reduces every clip within a
//! distance on the skin.

mod eval_times;
mod job;
mod measure;
mod reach;
mod reduce;
mod refit;

pub use eval_times::{MAX_EVALUATION_TIMES, MIN_RATE_HZ, SAMPLES_PER_INTERVAL, evaluation_times};
pub use job::{
    CODES_SHARE, ClipResult, KeyCodes, KeyCounts, MAX_ROUNDS, OptimizeJob, Price, clip_bytes,
    path_slot,
};
pub use measure::{WorstError, worst_error, worst_error_renumbered};
pub use reach::joint_reach;
pub use reduce::{ErrorMeasure, ReduceStats, quaternion_angle, reduce_channel, reduce_together};
pub use refit::{LOOSENESS, RefitStats, Rounding, reduce_refit};
