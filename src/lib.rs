//! skinview: GPU skinning renderer and CPU/GPU comparison harness.
//!
//! Stages (one way, every frame): animation sampling → layering → IK → bone links →
//! local→model → gradient palette → skinning (GPU WGSL and CPU reference) → readback and
//! comparison. See ARCHITECTURE.md for the module layering: core modules (math through
//! `character`) never import wgpu, winit, egui or gltf; `io` and `gpu` import only the core;
//! `compare` and `view` sit on `gpu`; the `viewer` (feature `viewer`) on everything.

// Core: plain data and CPU stages.
pub mod anim;
pub mod builtin;
pub mod camera;
pub mod character;
pub mod choice;
pub mod crowd;
pub mod diff;
pub mod error;
pub mod frame;
pub mod ik;
pub mod image;
pub mod info;
pub mod links;
pub mod math;
pub mod optimize;
pub mod partition;
pub mod poses;
pub mod quality;
pub mod retarget;
pub mod rig;
pub mod scene;
pub mod skeleton;
pub mod skin;
pub mod weights;

// Files, GPU, and the stages built on them.
pub mod check;
pub mod compare;
pub mod gpu;
pub mod io;
pub mod view;
#[cfg(feature = "viewer")]
pub mod viewer;

pub use error::{Error, Result};
pub use scene::Scene;
