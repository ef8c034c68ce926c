//! gltfpack (tools/gltfpack, meshoptimizer's packer as WebAssembly under Node.js), run at test
//! time on the shared models: quantised and meshopt-compressed copies, never checked in.
//! Missing Node.js or gltfpack is a test failure with what to run (`scripts/setup.sh
//! --tests` installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

/// gltfpack's command-line script.
fn cli() -> PathBuf {
    let cli =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gltfpack/node_modules/gltfpack/cli.js");
    assert!(
        cli.is_file(),
        "{} is missing: run `scripts/setup.sh --tests` (npm ci in tools/gltfpack)",
        cli.display()
    );
    cli
}

/// `model` packed with `flags` into `dir/name` (gltfpack's WebAssembly build reads and
/// writes inside its working directory only, so the model is copied into `dir` first).
pub fn pack(model: &Path, dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("make the scratch folder");
    let input = model.file_name().expect("a model file name");
    let local = dir.join(input);
    if !local.exists() {
        std::fs::copy(model, &local).expect("copy the model into the scratch folder");
    }
    let out = Command::new("node")
        .arg(cli())
        .arg("-i")
        .arg(input)
        .arg("-o")
        .arg(name)
        .args(flags)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (scripts/setup.sh --tests installs it): {e}"));
    assert!(
        out.status.success() && dir.join(name).is_file(),
        "gltfpack {flags:?} on {}: {}",
        model.display(),
        super::output_text(&out)
    );
    dir.join(name)
}
