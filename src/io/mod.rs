//! Input and output: the glTF importer and exporter, the `dump` exchange format and PNG writing.
//! Depends on the core modules only.

pub mod accessor;
pub mod dump;
pub mod gltf_export;
pub mod gltf_import;
pub mod image;

use std::path::Path;

use crate::error::Result;
use crate::scene::Scene;

/// Load a model by extension: `.gltf` / `.glb`, or a native Weber rig (`.json`, e.g.
/// `*.rig.json`, see `crate::rig`).
pub fn load(path: &Path) -> Result<Scene> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return Ok(load_rig(path)?.to_scene()?.scene);
    }
    gltf_import::import_file(path)
}

/// Read and validate a native rig file.
pub fn load_rig(path: &Path) -> Result<crate::rig::WeberRig> {
    let text = std::fs::read_to_string(path).map_err(|source| crate::error::Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    crate::rig::WeberRig::from_json(&text, &file)
}
