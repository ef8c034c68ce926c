//! The desktop viewer: its panels headless (egui_kittest), its window on the test machine and
//! the newcomer's first steps (Cargo.toml: needs the `viewer` feature). One test binary; one
//! module per subject.

#[path = "../common/mod.rs"]
mod common;

mod curves_panel;
mod ik_panel;
mod limits_overlay;
mod motion_panel;
mod newcomer;
mod page;
mod ui_image;
mod viewer_panels;
mod viewer_window;
