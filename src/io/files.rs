//! Reading the files a model is made of — the model itself, its external buffers and images —
//! with every read bounded before it starts: regular files only (never `/dev/zero`, a FIFO or
//! a folder), at most a stated size, and for a buffer exactly its declared `byteLength`.
//! External URIs resolve inside the model's own folder (after canonicalisation, so symlinks
//! and `..` count) unless the caller allows more ([`ImportOptions::allow_external_uris`]).
//! Every file read is recorded, so a command can refuse to write over any of them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Largest model file, buffer or image read (bytes): 2 GiB, glTF's practical ceiling (a GLB's
/// lengths are 32-bit, and no real asset comes near it); a larger request is an error before
/// any allocation.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// How an import may reach outside its own file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Follow buffer and image URIs that resolve outside the model's folder (absolute paths,
    /// `..`, symlinks out). Off by default: a downloaded model cannot make the program read
    /// `/etc/passwd` or a private key into a texture.
    pub allow_external_uris: bool,
}

/// The files one import reads, and the rules it reads them by.
#[derive(Clone, Debug)]
pub struct Files {
    /// The model file as named (messages use its file name).
    pub model: PathBuf,
    /// Its folder, canonical (external URIs resolve inside it); `None` for data in memory.
    base: Option<PathBuf>,
    options: ImportOptions,
    /// Every file read so far, canonical, the model first.
    pub read: Vec<PathBuf>,
}

impl Files {
    /// Rules for a model at `model` (its folder is where its URIs resolve).
    pub fn new(model: &Path, options: ImportOptions) -> Files {
        let base = model
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        Files {
            model: model.to_path_buf(),
            base,
            options,
            read: Vec::new(),
        }
    }

    /// Read the model file itself (at most [`MAX_FILE_BYTES`]).
    pub fn read_model(&mut self) -> Result<Vec<u8>> {
        let path = self.model.clone();
        let bytes = read_regular(&path, MAX_FILE_BYTES, None)?;
        self.read.push(path.canonicalize().unwrap_or(path));
        Ok(bytes)
    }

    /// The local file an external `uri` (not a `data:` URI) names, checked: `field` is the
    /// glTF field it came from (`buffers[2].uri`).
    pub fn resolve(&self, uri: &str, field: &str) -> Result<PathBuf> {
        let file = super::file_label(&self.model);
        let bad = |message: String| Error::invalid(&file, field, message);
        // A scheme (`http:`, `file:`; not a Windows drive letter) is not a relative path.
        if let Some((scheme, _)) = uri.split_once(':')
            && scheme.len() > 1
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(bad(format!(
                "\"{}\": only relative file paths and data: URIs are read",
                shorten(uri)
            )));
        }
        let decoded = percent_decode(uri)
            .ok_or_else(|| bad(format!("\"{}\": bad percent-encoding", shorten(uri))))?;
        let base = self.base.as_deref().ok_or_else(|| {
            bad("an external file, but the model did not come from a file".into())
        })?;
        let candidate = base.join(&decoded);
        let canonical = candidate.canonicalize().map_err(|e| {
            bad(format!(
                "\"{}\" ({}): {e}",
                shorten(uri),
                candidate.display()
            ))
        })?;
        if !self.options.allow_external_uris && !canonical.starts_with(base) {
            return Err(bad(format!(
                "\"{}\" resolves to {}, outside the model's folder {}: external URIs are not \
                 followed unless allowed",
                shorten(uri),
                canonical.display(),
                base.display()
            )));
        }
        Ok(canonical)
    }

    /// Read exactly `len` bytes from the start of the file `uri` names (a buffer's declared
    /// `byteLength`): an error when the file is shorter, not a regular file, or `len` is over
    /// [`MAX_FILE_BYTES`].
    pub fn read_exactly(&mut self, uri: &str, len: u64, field: &str) -> Result<Vec<u8>> {
        let path = self.resolve(uri, field)?;
        let file = super::file_label(&self.model);
        if len > MAX_FILE_BYTES {
            return Err(Error::invalid(
                &file,
                field,
                format!("{len} bytes declared; buffers are read up to {MAX_FILE_BYTES}"),
            ));
        }
        let meta = regular_meta(&path, Some((&file, field)))?;
        if meta.len() < len {
            return Err(Error::invalid(
                &file,
                field,
                format!(
                    "\"{}\" has {} bytes but the buffer declares {len}: truncated buffer",
                    shorten(uri),
                    meta.len()
                ),
            ));
        }
        let bytes = read_limited(&path, len)?;
        self.read.push(path);
        Ok(bytes)
    }

    /// Read a whole external file `uri` names, of at most `limit` bytes (images).
    pub fn read_whole(&mut self, uri: &str, limit: u64, field: &str) -> Result<Vec<u8>> {
        let path = self.resolve(uri, field)?;
        let file = super::file_label(&self.model);
        let bytes = read_regular(&path, limit, Some((&file, field)))?;
        self.read.push(path);
        Ok(bytes)
    }
}

/// The metadata of `path` when it is a regular file (symlinks followed).
fn regular_meta(path: &Path, field: Option<(&str, &str)>) -> Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        let message = format!(
            "{} is not a regular file (a folder, a device or a pipe): not read",
            path.display()
        );
        return Err(match field {
            Some((file, field)) => Error::invalid(file, field, message),
            None => Error::invalid(&super::file_label(path), "file", message),
        });
    }
    Ok(meta)
}

/// Read a whole regular file of at most `limit` bytes (checked before reading, and while
/// reading in case it grows).
pub fn read_regular(path: &Path, limit: u64, field: Option<(&str, &str)>) -> Result<Vec<u8>> {
    let meta = regular_meta(path, field)?;
    if meta.len() > limit {
        let message = format!("{} bytes, more than the {limit} read at most", meta.len());
        return Err(match field {
            Some((file, field)) => Error::invalid(file, field, message),
            None => Error::invalid(&super::file_label(path), "file size", message),
        });
    }
    let bytes = read_limited(path, limit.saturating_add(1))?;
    if bytes.len() as u64 > limit {
        return Err(Error::invalid(
            &super::file_label(path),
            "file size",
            format!("grew past {limit} bytes while being read"),
        ));
    }
    Ok(bytes)
}

/// At most `limit` bytes from the start of `path`.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    f.take(limit).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// `%XX` escapes decoded (URIs in glTF are percent-encoded); `None` when malformed or not
/// UTF-8.
fn percent_decode(uri: &str) -> Option<String> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A URI cut for messages (data URIs and hostile strings can be megabytes).
fn shorten(uri: &str) -> String {
    const SHOWN: usize = 80;
    match uri.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &uri[..i]),
        None => uri.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b.bin").as_deref(), Some("a b.bin"));
        assert_eq!(percent_decode("plain.bin").as_deref(), Some("plain.bin"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
    }
}
