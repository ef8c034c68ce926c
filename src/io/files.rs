//! Reading the files a model is made of — the model itself, its external buffers and images —
//! with every read bounded before it starts: regular files only (never `/dev/zero`, a FIFO or
//! a folder), at most a stated size, and for a buffer exactly its declared `byteLength`.
//! External URIs resolve inside the model's own folder (after canonicalisation, so symlinks
//! and `..` count), never to an absolute path or a hidden file or folder (`.ssh/id_rsa`),
//! unless the caller allows more ([`ImportOptions::allow_external_uris`]); external files
//! together are read up to [`MAX_EXTERNAL_BYTES`].
//! Every file read is recorded, so a command can refuse to write over any of them.
//! A model can also come from files held in memory ([`FileSet`]: the files dropped on the web
//! page together): the same rules, with the set in place of the folder.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// Largest model file, buffer or image read (bytes): 2 GiB, glTF's practical ceiling (a GLB's
/// lengths are 32-bit, and no real asset comes near it); a larger request is an error before
/// any allocation.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// Most bytes one import reads from external files together (buffers and images): the same
/// 2 GiB, so many buffers naming one large file cannot multiply it.
pub const MAX_EXTERNAL_BYTES: u64 = MAX_FILE_BYTES;

/// How an import may reach outside its own file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Follow buffer and image URIs that resolve outside the model's folder (absolute paths,
    /// `..`, symlinks out). Off by default: a downloaded model cannot make the program read
    /// `/etc/passwd` or a private key into a texture.
    pub allow_external_uris: bool,
}

/// Files held in memory by name — what a web page was given (dropped together, picked, or
/// fetched): a model and the buffers and images it names. Each file is at most
/// [`MAX_FILE_BYTES`], checked as it is added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSet {
    files: Vec<(String, Arc<[u8]>)>,
}

impl FileSet {
    /// An empty set.
    pub fn new() -> FileSet {
        FileSet::default()
    }

    /// Check a file of `len` bytes named `name` may be added, before its bytes are read.
    pub fn check_size(name: &str, len: u64) -> Result<()> {
        if len > MAX_FILE_BYTES {
            return Err(Error::invalid(
                name,
                "file size",
                too_large(len, MAX_FILE_BYTES),
            ));
        }
        Ok(())
    }

    /// The file named exactly `name`, or an error naming it.
    pub fn file(&self, name: &str) -> Result<&[u8]> {
        self.get(name)
            .ok_or_else(|| Error::invalid(name, "file", "not among the files given"))
    }

    /// Add `bytes` as `name` (a file name, or a path relative to the model, `/`-separated); a
    /// later file of the same name replaces the earlier.
    pub fn add(&mut self, name: &str, bytes: Vec<u8>) -> Result<()> {
        Self::check_size(name, bytes.len() as u64)?;
        self.files.retain(|(n, _)| n != name);
        self.files.push((name.to_string(), bytes.into()));
        Ok(())
    }

    /// The file names, in the order added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(n, _)| n.as_str())
    }

    /// The file named exactly `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| &b[..])
    }

    /// The file a relative URI path names: the same path, else (files dropped without their
    /// folders) the one file of the same name; otherwise the names that matched (none, or
    /// several).
    fn find(&self, relative: &str) -> std::result::Result<(&str, &[u8]), Vec<String>> {
        if let Some((n, b)) = self.files.iter().find(|(n, _)| n == relative) {
            return Ok((n.as_str(), &b[..]));
        }
        let base_name = relative.rsplit('/').next().unwrap_or(relative);
        let same: Vec<&(String, Arc<[u8]>)> = self
            .files
            .iter()
            .filter(|(n, _)| n.rsplit('/').next() == Some(base_name))
            .collect();
        match same.as_slice() {
            [(n, b)] => Ok((n.as_str(), &b[..])),
            several => Err(several.iter().map(|(n, _)| n.clone()).collect()),
        }
    }
}

/// The files one import reads, and the rules it reads them by.
#[derive(Clone, Debug)]
pub struct Files {
    /// The model file as named (messages use its file name).
    pub model: PathBuf,
    /// Its folder, canonical (external URIs resolve inside it); `None` for data in memory.
    base: Option<PathBuf>,
    /// The files in memory the model and its URIs come from, instead of a folder.
    memory: Option<Arc<FileSet>>,
    options: ImportOptions,
    /// Every file read so far, canonical, the model first.
    pub read: Vec<PathBuf>,
    /// Bytes read from external files so far (against [`MAX_EXTERNAL_BYTES`]).
    external_bytes: u64,
}

impl Files {
    /// Rules for a model at `model` (its folder is where its URIs resolve).
    pub fn new(model: &Path, options: ImportOptions) -> Files {
        // The folder the model is named in (a symlinked model resolves beside the link, as
        // the file's author sees it), canonical.
        let base = match model.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.canonicalize().ok(),
            Some(_) if model.exists() => std::env::current_dir().ok(),
            _ => None,
        };
        Files {
            model: model.to_path_buf(),
            base,
            memory: None,
            options,
            read: Vec::new(),
            external_bytes: 0,
        }
    }

    /// Rules for the model `model` in `set`: its URIs resolve to other files of the set.
    pub fn in_memory(model: &str, set: Arc<FileSet>, options: ImportOptions) -> Files {
        Files {
            model: PathBuf::from(model),
            base: None,
            memory: Some(set),
            options,
            read: Vec::new(),
            external_bytes: 0,
        }
    }

    /// Count `n` more external bytes against [`MAX_EXTERNAL_BYTES`].
    fn spend(&mut self, n: u64, field: &str) -> Result<()> {
        self.external_bytes = self.external_bytes.saturating_add(n);
        if self.external_bytes > MAX_EXTERNAL_BYTES {
            return Err(Error::invalid(
                &super::file_label(&self.model),
                field,
                format!(
                    "the model's external files pass {MAX_EXTERNAL_BYTES} bytes together: not \
                     read"
                ),
            ));
        }
        Ok(())
    }

    /// Read the model file itself (at most [`MAX_FILE_BYTES`]).
    pub fn read_model(&mut self) -> Result<Vec<u8>> {
        if let Some(set) = &self.memory {
            let bytes = set.file(&self.model.to_string_lossy())?;
            self.read.push(self.model.clone());
            return Ok(bytes.to_vec());
        }
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
        // `..` may stay inside the folder: judged after canonicalisation below.
        let decoded = relative_uri(uri, self.options.allow_external_uris, true).map_err(bad)?;
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
        let file = super::file_label(&self.model);
        if len > MAX_FILE_BYTES {
            return Err(Error::invalid(
                &file,
                field,
                format!("{len} bytes declared; buffers are read up to {MAX_FILE_BYTES}"),
            ));
        }
        if let Some(bytes) = self.read_memory(uri, field, Want::Exactly(len))? {
            return Ok(bytes);
        }
        let path = self.resolve(uri, field)?;
        let meta = regular_meta(&path, Some((&file, field)))?;
        if meta.len() < len {
            return Err(truncated(&file, field, uri, meta.len(), len));
        }
        self.spend(len, field)?;
        let bytes = read_limited(&path, len)?;
        self.read.push(path);
        Ok(bytes)
    }

    /// Read a whole external file `uri` names, of at most `limit` bytes (images).
    pub fn read_whole(&mut self, uri: &str, limit: u64, field: &str) -> Result<Vec<u8>> {
        let file = super::file_label(&self.model);
        if let Some(bytes) = self.read_memory(uri, field, Want::AtMost(limit))? {
            return Ok(bytes);
        }
        let path = self.resolve(uri, field)?;
        let size = regular_meta(&path, Some((&file, field)))?.len();
        self.spend(size.min(limit), field)?;
        let bytes = read_regular(&path, limit, Some((&file, field)))?;
        self.read.push(path);
        Ok(bytes)
    }
}

/// How much of a file in memory a read takes.
#[derive(Clone, Copy)]
enum Want {
    /// Exactly this many bytes from its start (a buffer's `byteLength`; shorter is an error).
    Exactly(u64),
    /// The whole file, of at most this many bytes (an image).
    AtMost(u64),
}

impl Files {
    /// For a model in memory: the file of the set `uri` names (checked as [`Files::resolve`]
    /// checks it; never a file outside the set), its size checked against `want` and counted
    /// before a byte is copied, recorded as read. `None` for a model on disk.
    fn read_memory(&mut self, uri: &str, field: &str, want: Want) -> Result<Option<Vec<u8>>> {
        let Some(set) = self.memory.clone() else {
            return Ok(None);
        };
        let file = super::file_label(&self.model);
        let bad = |message: String| Error::invalid(&file, field, message);
        let decoded = relative_uri(uri, self.options.allow_external_uris, false).map_err(bad)?;
        let relative = decoded.trim_start_matches("./");
        let (name, bytes) = set.find(relative).map_err(|found| {
            let given: Vec<&str> = set.names().collect();
            bad(match found.as_slice() {
                [] => format!(
                    "\"{}\" was not given with the model (given: {}); drop or pick the \
                     model's buffers and images together with it",
                    shorten(uri),
                    given.join(", ")
                ),
                several => format!(
                    "\"{}\" could be any of {}: give the files in their folders, or one of \
                     that name",
                    shorten(uri),
                    several.join(", ")
                ),
            })
        })?;
        let have = bytes.len() as u64;
        let take = match want {
            Want::Exactly(len) if have < len => {
                return Err(truncated(&file, field, uri, have, len));
            }
            Want::Exactly(len) => len,
            Want::AtMost(limit) if have > limit => {
                return Err(bad(too_large(have, limit)));
            }
            Want::AtMost(_) => have,
        };
        self.spend(take, field)?;
        let mut copy = Vec::new();
        copy.try_reserve_exact(take as usize + 4)
            .map_err(|_| bad(format!("not enough memory to read {take} bytes")))?;
        copy.extend_from_slice(&bytes[..take as usize]);
        self.read.push(PathBuf::from(name));
        Ok(Some(copy))
    }
}

/// The relative path an external `uri` (not a `data:` URI) names, percent-decoded, or what is
/// wrong with it: a scheme (`http:`, `file:`; not a Windows drive letter) is not a relative
/// path; unless `allow_external`, neither are an absolute path (or a Windows drive or network
/// path), a hidden file or folder (`.ssh/…`), nor — where nothing is judged after it
/// (`parent_dirs` false: files in memory, the web page's fetches) — a `..` component.
pub fn relative_uri(
    uri: &str,
    allow_external: bool,
    parent_dirs: bool,
) -> std::result::Result<String, String> {
    if let Some((scheme, _)) = uri.split_once(':')
        && scheme.len() > 1
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err(format!(
            "\"{}\": only relative file paths and data: URIs are read",
            shorten(uri)
        ));
    }
    let decoded = percent_decode(uri);
    let rel = Path::new(&decoded);
    let hidden = rel.components().any(|c| match c {
        std::path::Component::Normal(n) => n.to_string_lossy().starts_with('.'),
        _ => false,
    });
    if !allow_external && (rel.has_root() || rel.is_absolute() || hidden) {
        return Err(format!(
            "\"{}\" is an absolute path or names a hidden file: external URIs are not \
             followed unless allowed",
            shorten(uri)
        ));
    }
    let parent = rel
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    if !allow_external && !parent_dirs && parent {
        return Err(format!(
            "\"{}\" leaves the model's folder (`..`): external URIs are not followed unless \
             allowed",
            shorten(uri)
        ));
    }
    Ok(decoded)
}

/// What is wrong with a file of `len` bytes read up to `limit`.
pub fn too_large(len: u64, limit: u64) -> String {
    format!("{len} bytes, more than the {limit} read at most")
}

/// A buffer file `uri` of `have` bytes, shorter than the `len` its buffer declares.
fn truncated(file: &str, field: &str, uri: &str, have: u64, len: u64) -> Error {
    Error::invalid(
        file,
        field,
        format!(
            "\"{}\" has {have} bytes but the buffer declares {len}: truncated buffer",
            shorten(uri)
        ),
    )
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
        let message = too_large(meta.len(), limit);
        return Err(match field {
            Some((file, field)) => Error::invalid(file, field, message),
            None => Error::invalid(&super::file_label(path), "file size", message),
        });
    }
    let bytes = read_limited(path, limit.saturating_add(1))?;
    if bytes.len() as u64 > limit {
        let message = format!(
            "{} grew past {limit} bytes while being read",
            path.display()
        );
        return Err(match field {
            Some((file, field)) => Error::invalid(file, field, message),
            None => Error::invalid(&super::file_label(path), "file size", message),
        });
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
    // Sized once (no doubling growth past the file), plus room for the 4-byte padding.
    let size = f.metadata().map_or(0, |m| m.len()).min(limit);
    // Reserved fallibly: a large file on a machine (or under a `ulimit -v`) without that much
    // memory is an error, not an abort.
    let want = usize::try_from(size)
        .unwrap_or(usize::MAX)
        .saturating_add(4);
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(want).map_err(|_| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("not enough memory to read {size} bytes"),
        ),
    })?;
    f.take(limit).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// `%XX` escapes decoded (URIs in glTF are percent-encoded); a `%` not followed by two hex
/// digits is kept as it is (as the gltf crate's decoder does), and bytes that do not decode
/// to UTF-8 leave the URI undecoded.
pub fn percent_decode(uri: &str) -> String {
    String::from_utf8(percent_decode_bytes(uri)).unwrap_or_else(|_| uri.to_string())
}

/// A URI cut for messages (data URIs and hostile strings can be megabytes).
fn shorten(uri: &str) -> String {
    const SHOWN: usize = 80;
    match uri.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &uri[..i]),
        None => uri.to_string(),
    }
}

/// The media type and bytes of a `data:` URI (RFC 2397: `data:[type][;name=value]*[;base64],
/// data`, the data base64 or percent-encoded), or why it is malformed; None when `uri` is not
/// a `data:` URI. Refused before decoding when the bytes would pass `limit`.
pub fn data_uri(uri: &str, limit: u64) -> Option<std::result::Result<(String, Vec<u8>), String>> {
    let rest = uri.strip_prefix("data:")?;
    Some((|| {
        let (header, data) = rest
            .split_once(',')
            .ok_or("a data: URI without the ',' before its data (RFC 2397)")?;
        let (header, is_base64) = match header.strip_suffix(";base64") {
            Some(h) => (h, true),
            None => (header, false),
        };
        let mut parts = header.split(';');
        let media_type = parts.next().unwrap_or_default().to_string();
        if let Some(p) = parts.find(|p| !p.contains('=')) {
            return Err(format!(
                "a data: URI whose parameter {:?} is not name=value (RFC 2397)",
                shorten(p)
            ));
        }
        let decoded_len = if is_base64 {
            data.len() / 4 * 3
        } else {
            data.len()
        };
        if decoded_len as u64 > limit {
            return Err(format!("a data: URI of more than {limit} bytes"));
        }
        let bytes = if is_base64 {
            base64::decode(data).map_err(|e| format!("bad base64: {e}"))?
        } else {
            percent_decode_bytes(data)
        };
        Ok((media_type, bytes))
    })())
}

/// `%XX` escapes decoded to bytes; a `%` not followed by two hex digits is kept.
fn percent_decode_bytes(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("plain.bin"), "plain.bin");
        assert_eq!(percent_decode("100%.bin"), "100%.bin");
        assert_eq!(percent_decode("bad%zz"), "bad%zz");
        assert_eq!(percent_decode("bad%ff"), "bad%ff");
    }

    #[test]
    fn data_uris_follow_rfc_2397() {
        let ok = |uri: &str| {
            data_uri(uri, 1 << 20)
                .expect("a data URI")
                .expect("well formed")
        };
        assert_eq!(
            ok("data:application/octet-stream;base64,AAEC"),
            ("application/octet-stream".to_string(), vec![0, 1, 2])
        );
        assert_eq!(
            ok("data:application/gltf-buffer,0%41"),
            ("application/gltf-buffer".to_string(), b"0A".to_vec())
        );
        assert_eq!(ok("data:;charset=x;base64,AA=="), (String::new(), vec![0]));
        let bad = |uri: &str| {
            data_uri(uri, 1 << 20)
                .expect("a data URI")
                .expect_err("malformed")
        };
        assert!(bad("data:").contains("','"));
        assert!(bad("data:application/octet-stream;;base64,AA==").contains("name=value"));
        assert!(bad("data:;base64,@@@@").contains("base64"));
        assert!(
            data_uri("data:;base64,AAAAAAAA", 5)
                .expect("a data URI")
                .is_err()
        );
        assert!(data_uri("buffer.bin", 5).is_none());
    }
}
