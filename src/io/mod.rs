//! Input and output: the glTF importer and exporter, native `.rig.json` files, model
//! resolution (`builtin:` names and files), textures, the `dump` exchange format, PNG files,
//! and safe
//! output writing. Depends on the core modules only.

pub mod accessor;
pub mod dump;
#[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
pub mod fbx;
pub mod files;
pub mod gltf_export;
pub mod gltf_import;
pub mod gltf_quantize;
#[cfg(not(target_arch = "wasm32"))]
pub mod gltf_reorder;
pub mod gltf_repack;
mod json_defaults;
#[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
mod meshopt;
#[cfg(not(target_arch = "wasm32"))]
pub mod meshopt_encode;
pub mod model;
pub mod output;
pub mod png;
pub mod rig_json;
pub mod texture;
pub mod validate;
pub mod validate_data;
pub mod validate_use;

use std::path::Path;

use crate::error::Result;
use crate::scene::Scene;

pub use files::{FileSet, ImportOptions};
pub use model::{Model, ModelSource, NativeRig};

/// Load a model file by extension: `.gltf` / `.glb`, `.fbx`, or a native Weber rig (`.json`,
/// e.g. `*.rig.json`).
pub fn load(path: &Path) -> Result<Scene> {
    Ok(ModelSource::File(path.to_path_buf()).load()?.scene)
}

/// The file name of `path` for messages (the whole path when it has none).
pub fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
