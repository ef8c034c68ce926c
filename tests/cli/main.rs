//! The `skinview` binary end to end, and `scripts/gpu-report.sh` with it (Cargo.toml: needs
//! the `cli` feature, which builds the binary). One test binary; one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod check;
mod cli;
mod diff;
mod gpu_report;
mod optimize;
mod retarget;
mod validator_suite;
