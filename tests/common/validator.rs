//! The Khronos glTF-Validator (tools/gltf-validator: npm `gltf-validator`, pinned in its
//! package.json) run under Node.js on files the tests write. Missing Node.js or the validator
//! is a test failure with what to run (`scripts/setup.sh --tests` installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the validator found in one file.
#[derive(Debug, serde::Deserialize)]
pub struct Validation {
    /// The file.
    pub file: PathBuf,
    /// Errors (the validator's severity 0): a file with any is not valid glTF.
    pub errors: u32,
    /// Warnings.
    pub warnings: u32,
    /// The first errors: code, JSON pointer, text.
    pub messages: Vec<String>,
}

/// The validator's report on each of `files` (one Node.js run for all).
pub fn validate(files: &[PathBuf]) -> Vec<Validation> {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gltf-validator");
    assert!(
        tool.join("node_modules/gltf-validator/package.json")
            .is_file(),
        "{} is missing the validator: run `scripts/setup.sh --tests` (npm ci in \
         tools/gltf-validator)",
        tool.display()
    );
    let out = Command::new("node")
        .arg(tool.join("validate.mjs"))
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (scripts/setup.sh --tests installs it): {e}"));
    assert!(
        out.status.success(),
        "glTF-Validator: {}",
        super::output_text(&out)
    );
    let reports: Vec<Validation> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(reports.len(), files.len(), "one report a file");
    reports
}
