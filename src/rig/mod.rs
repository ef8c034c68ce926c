//! Native rigs in Weber's convention (Weber, "Run-Time Skin Deformation", §Reference Bones to
//! §Motion Data) and their text format.
//!
//! A bone lies along its local +X axis with a `length_m`; its transform is stored relative to
//! the **tip** of its parent: `displacement_m` (zero in the common attached case) and a
//! quaternion `rotation`. Each bone also carries ZYX Euler joint limits relative to its
//! reference rotation, base/tip cross-section ellipses (for weight tools) and its bone-link
//! settings. Motions are named tracks per bone with their own irregular key times for
//! displacement (linear), rotation (shortest-path slerp) and scale (linear). Muscle bones
//! (Woodland's biceps) take weights on top of a vertex's ordinary weights, which sum to 1.
//!
//! The file is JSON (`*.rig.json`, read and written by `crate::io::rig_json`), versioned by
//! `"format": "skinview.rig", "version": 1`.
//! [`WeberRig::to_scene`] converts it to the internal skeleton: node local translation =
//! `(parent_length, 0, 0) + displacement`, rotation as given, scale 1; tracks become LINEAR
//! channels with the same keys; the mesh becomes one skinned primitive. [`WeberRig::from_scene`]
//! inverts it (bone metadata is kept per node in [`BoneMeta`]), so native → internal → native is
//! lossless up to f32 rounding of `parent_length + displacement` (exact when displacements are
//! zero, as in attached chains).

mod convert;
mod format;

pub use convert::{BoneMeta, RigScene};
pub use format::{
    Bone, FORMAT, Key, LimitsDeg, LinkSettings, Motion, RigMesh, Section, Track, VERSION, WeberRig,
};
