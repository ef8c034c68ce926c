//! skinview: GPU skinning renderer and CPU/GPU comparison harness.
//!
//! Stages (one way, every frame): animation sampling → pose → local→model →
//! gradient palette → skinning (GPU WGSL and CPU reference) → readback and comparison.
//! See ARCHITECTURE.md for the module layering.

pub mod anim;
pub mod builtin;
pub mod character;
pub mod error;
pub mod frame;
pub mod gpu;
pub mod harness;
pub mod ik;
pub mod image;
pub mod io;
pub mod links;
pub mod math;
pub mod rig;
pub mod rigs;
pub mod scene;
pub mod skeleton;
pub mod skin;

pub use error::{Error, Result};
pub use scene::Scene;
