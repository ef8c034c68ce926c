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

/// Load a model by extension (`.gltf`, `.glb`).
pub fn load(path: &Path) -> Result<Scene> {
    gltf_import::import_file(path)
}
