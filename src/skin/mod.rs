//! Skinning stages that run on the CPU: the gradient palette, influence reduction and the
//! vertex-weight array, morph targets, and linear blend skinning (f32 job + f64 reference).

pub mod cpu;
pub mod dqs;
pub mod errors;
pub mod modes;
pub mod morph;
pub mod palette;
#[cfg(target_arch = "x86_64")]
mod palette_wide;
pub mod reference64;
pub mod simd;
pub mod skinned_bounds;
pub mod weights;

pub use cpu::{RenormalizeJob, SkinnedVertices, SkinningJob, bounds, check_finite};
pub use dqs::{DqJoint, DqsSkinningJob};
pub use errors::{RunningError, VertexErrors, nan_as_infinite, position_error, vertex_distances};
pub use modes::{NormalMode, SkinMode, SkinOptions};
pub use morph::MorphJob;
pub use palette::{MatrixRows, PaletteJob, PaletteLayout};
pub use weights::{Influence, ReductionStats, VertexWeights};
