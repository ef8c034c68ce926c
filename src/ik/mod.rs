//! Inverse kinematics stage (Weber, "Run-Time Skin Deformation", §Using Inverse Kinematics),
//! between animation sampling and local→model:
//!
//! ```text
//! AnimateJob ──▶ pose.locals (FK) ──CcdJob──▶ solved locals ──LocalToModelJob──▶ …
//!                       previous frame's solved locals ──┘ (incremental start, velocity cap)
//! ```
//!
//! [`CcdJob`] rotates chains of joints so that points on their end nodes reach targets, by
//! Cyclic Coordinate Descent: several effectors may share joints and are blended by weight,
//! each joint has a participation weight, chains start from the reference pose every frame
//! (§5.1) or from last frame's solution (§5.2), the per-frame rotation change can be capped
//! by an angular velocity (§5.3), and joints can carry ZYX Euler limits relative to their
//! reference rotation, applied after every CCD step ([`JointLimits`], §5.4).
//!
//! Files: `ccd.rs` (the solver), `limits.rs` (Euler decomposition and clamping). Both are core
//! code: glam only, no allocation per frame once the [`IkScratch`] is warm.
//! Model space is the scene root, as for [`crate::skeleton::LocalToModelJob`]; the job only
//! needs locals and writes locals, so it slots in before the existing stages unchanged.

pub mod ccd;
pub mod limits;

pub use ccd::{
    CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, MIN_ARM_M, limit_rotation_change,
};
pub use limits::{InsideTest, JointLimits, from_euler_zyx, to_euler_zyx};
