//! Writing output files: never a half-written file under the user's name.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Write `bytes` to `path` through a temporary file beside it, renamed into place once
/// complete (a crash or a full disk leaves the old file, or none, never a truncated one).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file_with(path, |f| f.write_all(bytes))
}

/// [`write_file`] with the contents written by `fill` (buffered), for outputs too large to
/// hold in memory: the same temporary file, checks and rename.
pub fn write_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let err = |e: std::io::Error| Error::Output {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let name = path.file_name().ok_or_else(|| Error::Output {
        path: path.to_path_buf(),
        message: "not a file name".into(),
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // An existing output must be a regular file: a device (`/dev/null`), a pipe or a folder
    // named as output would be replaced by the rename, not written to.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(Error::Output {
            path: path.to_path_buf(),
            message: "not a regular file (a device, a pipe or a folder): not replaced; name a \
                      file"
                .into(),
        });
    }
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    // A new file (never through a link planted under the temporary name: a stale entry is
    // removed — a link itself, not its target — and the file is created exclusively).
    let _ = std::fs::remove_file(&tmp);
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            fill(&mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// An error, before any work, when the outputs a command was given cannot all be written:
/// two of them name one file (compared as [`refuse_inputs`] compares, and by spelling for
/// files not there yet: the last written would replace the others), or one's folder does not
/// exist.
pub fn check_outputs(outputs: &[&Path]) -> Result<()> {
    for (i, out) in outputs.iter().enumerate() {
        let dir = folder_of(out);
        if !dir.is_dir() {
            return Err(Error::Output {
                path: out.to_path_buf(),
                message: format!("its folder {} does not exist", dir.display()),
            });
        }
        for other in &outputs[..i] {
            let same =
                same_place(out, other) || refuse_inputs(out, &[other.to_path_buf()]).is_err();
            if same {
                return Err(Error::Output {
                    path: out.to_path_buf(),
                    message: format!(
                        "named as two outputs (also as {}): each needs a file of its own",
                        other.display()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one place: the same file name in the same folder (folders
/// compared canonically, so `o.glb` and `./o.glb` are one even before either exists).
fn same_place(a: &Path, b: &Path) -> bool {
    let folder = |p: &Path| folder_of(p).canonicalize().ok();
    a == b || (a.file_name() == b.file_name() && folder(a).is_some() && folder(a) == folder(b))
}

/// The folder a file `path` goes in (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// An error when `output` names one of `inputs` (compared by canonical path, and on Unix by
/// device and inode, so a hard link or another spelling is caught too). An output that does
/// not exist yet is never an input.
pub fn refuse_inputs(output: &Path, inputs: &[std::path::PathBuf]) -> Result<()> {
    let Ok(out) = output.canonicalize() else {
        return Ok(());
    };
    let same = |input: &std::path::PathBuf| {
        if *input == out {
            return true;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(&out)) {
                return a.dev() == b.dev() && a.ino() == b.ino();
            }
        }
        false
    };
    match inputs.iter().find(|i| same(i)) {
        Some(input) => Err(Error::Output {
            path: output.to_path_buf(),
            message: format!(
                "it is the input file {}, which is never overwritten: write somewhere else",
                input.display()
            ),
        }),
        None => Ok(()),
    }
}
