//! The core: animation, skeleton, skinning, weights, links, the partitioner and the rigs,
//! checked on the CPU against hand-computed, f64 and independent-engine expectations. One test
//! binary (so the library is linked once); one module per subject, each the former
//! `tests/<subject>.rs` with its own documentation.

#[path = "../common/mod.rs"]
mod common;

mod analytic;
mod bone_info;
mod crowd;
mod curves;
mod generated_rigs;
mod interpolation;
mod job_rules;
mod links;
mod optimize;
mod oracle;
mod palette;
mod partition;
mod poses;
mod quality;
mod retarget;
mod rig;
mod simd;
mod skin_modes;
mod skinned_bounds;
mod skinning_props;
mod soa;
mod weights;
