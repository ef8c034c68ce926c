//! `skinview`: inspect, render, compare, dump, export and benchmark skinned glTF models and
//! native rigs. The commands live in `src/cli/`, one file each.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program prints

mod cli;

fn main() -> std::process::ExitCode {
    // `check` writes to its worker processes' pipes: a worker that died must cost its model,
    // not end the run, so there SIGPIPE stays ignored (a write then fails with an error).
    if std::env::args_os().nth(1).is_none_or(|c| c != "check") {
        restore_sigpipe();
    }
    ensure_runtime_dir();
    cli::main()
}

/// A closed pipe (`skinview info MODEL | head`) ends the program quietly, as it ends other
/// command-line tools, instead of a panic in `println!`: SIGPIPE's default action, which
/// Rust's runtime replaces with "ignore" before `main`.
#[cfg(unix)]
fn restore_sigpipe() {
    // SAFETY: the first statement of `main`, before any thread exists; it only sets one
    // signal's disposition back to the system default.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_sigpipe() {}

/// Mesa's drivers (the software Vulkan driver lavapipe among them) print "error:
/// XDG_RUNTIME_DIR is invalid or not set in the environment." when that variable is unset, on
/// runs that succeed: a user sees an error that is none. Where it is unset or not a
/// directory, the process gets a private one (mode 0700 under the temporary directory, one per
/// user, made once), as a login session would give it. Nothing else reads it.
#[cfg(unix)]
fn ensure_runtime_dir() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let current = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from);
    if current.is_some_and(|d| d.is_dir()) {
        return;
    }
    // The user's id: the owner of this process's /proc entry (Linux), else a shared name.
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    let dir = std::env::temp_dir().join(format!("skinview-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    // Only a directory of ours that nobody else can enter.
    let private = std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0);
    if private {
        // SAFETY: the first statement of `main`, before any thread exists, so nothing reads
        // the environment concurrently.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("XDG_RUNTIME_DIR", &dir)
        };
    }
}

#[cfg(not(unix))]
fn ensure_runtime_dir() {}
