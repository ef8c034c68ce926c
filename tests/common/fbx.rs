//! The FBX test data: shared models converted by Debian's Blender into tests/data/fbx by
//! `scripts/make-fbx-test-data.sh` (run by `scripts/setup.sh --tests`). A missing file is a
//! test failure that says what to run.

use std::path::{Path, PathBuf};

/// The FBX Blender made from the shared model or rig `stem`.
pub fn converted(stem: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fbx")
        .join(format!("{stem}.fbx"));
    assert!(
        path.is_file(),
        "{} is missing: run `scripts/setup.sh --tests` (it installs Blender and runs \
         scripts/make-fbx-test-data.sh)",
        path.display()
    );
    path
}
