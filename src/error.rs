//! Errors for every stage. Input problems name the file and the field at fault.

use std::path::PathBuf;

/// Everything that can go wrong in skinview. Bad input never panics: it ends up here,
/// with the file and the glTF field (JSON-pointer-like path) that is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid glTF file: {message}")]
    Gltf { path: PathBuf, message: String },
    /// Structurally valid file whose content breaks a skinning rule.
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: String,
        field: String,
        message: String,
    },
    /// A `*Job::validate()` rule failed (rule number as in the job's documentation).
    #[error("{job} rule {rule}: {message}")]
    Job {
        job: &'static str,
        rule: u32,
        message: String,
    },
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error("GPU error: {0}")]
    Gpu(String),
    #[error("{0}")]
    Usage(String),
    #[error("{path}: cannot write output: {message}")]
    Output { path: PathBuf, message: String },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
    pub fn job(job: &'static str, rule: u32, message: impl Into<String>) -> Self {
        Error::Job {
            job,
            rule,
            message: message.into(),
        }
    }
}
