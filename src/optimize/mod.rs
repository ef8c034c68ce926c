//! `skinview optimize`'s measures (issue 48, first slice): where a clip is checked, how far
//! each joint's turn reaches on the skin, and the worst skinned-vertex distance between two
//! versions of a character. The key reduction, the quantisation and the command build on them.

mod eval_times;
mod measure;
mod reach;

pub use eval_times::{MAX_EVALUATION_TIMES, MIN_RATE_HZ, SAMPLES_PER_INTERVAL, evaluation_times};
pub use measure::{WorstError, worst_error};
pub use reach::joint_reach;
