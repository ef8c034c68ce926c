//! The native rig file, `*.rig.json` (format `"skinview.rig"`, version 1; the layout is in
//! docs/rig-format.md and the data model in `crate::rig`): parsing with errors that name the
//! file, line and field, validation, and compact writing.

use std::path::Path;

use crate::error::{Error, Result};
use crate::rig::WeberRig;

/// Largest `.rig.json` read (bytes). The built-in humanoid with its skin is ~0.5 MB; a rig
/// with a 100k-vertex skin stays well under this.
pub const MAX_RIG_JSON_BYTES: u64 = 256 << 20;

/// Parse and validate a `*.rig.json` text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<WeberRig> {
    // The failing value's path names the field (`bones[3].parent`), with line and column.
    let de = &mut serde_json::Deserializer::from_str(text);
    let rig: WeberRig = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = if path == "." || path.is_empty() {
            format!("line {} column {}", inner.line(), inner.column())
        } else {
            path
        };
        Error::invalid(file, field, inner.to_string())
    })?;
    rig.validate(file)?;
    Ok(rig)
}

/// Compact JSON (one line; pretty-print with any JSON tool to read it).
pub fn to_string(rig: &WeberRig) -> String {
    // Serialising plain data (no maps with non-string keys) cannot fail; an empty object
    // would fail validation on reading, never pass silently.
    serde_json::to_string(rig).unwrap_or_else(|_| "{}".into())
}

/// Read and validate a native rig file.
pub fn read(path: &Path) -> Result<WeberRig> {
    let file = super::file_label(path);
    // A regular file of at most MAX_RIG_JSON_BYTES, checked before reading.
    let bytes = super::files::read_regular(path, MAX_RIG_JSON_BYTES, Some((&file, "file size")))?;
    parse_bytes(&bytes, &file)
}

/// Parse and validate a native rig file's bytes (at most [`MAX_RIG_JSON_BYTES`], UTF-8);
/// `file` names it in errors.
pub fn parse_bytes(bytes: &[u8], file: &str) -> Result<WeberRig> {
    if bytes.len() as u64 > MAX_RIG_JSON_BYTES {
        return Err(Error::invalid(
            file,
            "file size",
            super::files::too_large(bytes.len() as u64, MAX_RIG_JSON_BYTES),
        ));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::invalid(file, "text", format!("not UTF-8: {e}")))?;
    parse(text, file)
}

/// Write `rig` to `path` (through a temporary file renamed into place).
pub fn write(rig: &WeberRig, path: &Path) -> Result<()> {
    super::output::write_file(path, to_string(rig).as_bytes())
}
