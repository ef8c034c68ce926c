//! The GPU side: shader struct layouts, readback against the CPU reference, the crowd and the
//! compute-skinning path, the uniform palette, textures and the golden renders (on Mesa
//! lavapipe in CI, where a missing adapter fails the tests). One test binary, one headless GPU
//! context for all of it (`common::gpu`); one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod crowd;
mod framing;
mod golden;
mod gpu_layout;
mod gpu_readback;
mod heatmap;
mod influence_packing;
mod palette_uniform;
mod skeleton;
mod textures;
