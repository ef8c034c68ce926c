//! ARCHITECTURE.md's rules, checked on the source and the dependency tree:
//! - each layer imports only the layers below it (core → nothing of ours above; io and gpu →
//!   core only; compare and view → gpu and core; check → everything but the front ends; only
//!   the viewer and the CLI see winit, egui or clap);
//! - `src/cli/` is the only place that names a command-line flag;
//! - without default features the library's dependency tree has no winit, egui or clap (the
//!   core builds and tests without them: CI runs `cargo test --no-default-features --lib --test
//!   architecture`; the flags add only the viewer module to the library, so the rest of the
//!   suite would test the same code again).
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            v.push(p);
        }
    }
    v.sort();
    v
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Files of a module given as `name.rs` or a directory `name/`.
fn module_files(m: &str) -> Vec<PathBuf> {
    let p = src().join(m);
    let files = if p.is_dir() {
        rust_files(&p)
    } else {
        vec![p.with_extension("rs")]
    };
    assert!(files.iter().all(|f| f.exists()), "module {m} not found");
    files
}

/// Code lines (doc and line comments dropped) of `path`.
fn code(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

const CORE: [&str; 19] = [
    "anim",
    "builtin",
    "camera",
    "character",
    "diff",
    "error",
    "frame",
    "ik",
    "image",
    "info",
    "links",
    "math",
    "partition",
    "quality",
    "rig",
    "scene",
    "skeleton",
    "skin",
    "weights",
];
const FRONT_ENDS: [&str; 5] = ["winit", "egui", "clap", "crate::viewer", "crate::cli"];

#[test]
fn layers_import_only_downwards() {
    // Every module of the library is in exactly one rule (a new module must be placed).
    let mut placed: Vec<&str> = CORE.to_vec();
    placed.extend(["io", "gpu", "compare", "view", "check", "viewer", "lib"]);
    for e in std::fs::read_dir(src()).unwrap().flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // The binaries (the command line and the web page's program) and the CLI see all.
        if !["main", "web_main", "cli"].contains(&name.as_str()) {
            assert!(
                placed.contains(&name.as_str()),
                "src/{name} is in no layer of this test"
            );
        }
    }
    let above_core = ["crate::gpu", "crate::io", "crate::compare", "crate::view"];
    let toolkits = ["wgpu", "gltf::", "use gltf"];
    let mut rules: Vec<(&str, Vec<&str>)> = Vec::new();
    for m in CORE {
        rules.push((
            m,
            [&above_core[..], &toolkits[..], &FRONT_ENDS[..]].concat(),
        ));
    }
    rules.push((
        "io",
        [
            &["wgpu", "crate::gpu", "crate::compare", "crate::view"][..],
            &FRONT_ENDS[..],
        ]
        .concat(),
    ));
    rules.push((
        "gpu",
        [
            &["gltf", "crate::io", "crate::compare", "crate::view"][..],
            &FRONT_ENDS[..],
        ]
        .concat(),
    ));
    rules.push((
        "compare",
        [&["gltf", "crate::io", "crate::view"][..], &FRONT_ENDS[..]].concat(),
    ));
    rules.push((
        "view",
        [
            &["gltf", "crate::io", "crate::compare"][..],
            &FRONT_ENDS[..],
        ]
        .concat(),
    ));
    // The asset checks run on everything below (files, the CPU and GPU paths), never a front
    // end.
    rules.push((
        "check",
        [&["gltf::", "use gltf"][..], &FRONT_ENDS[..]].concat(),
    ));
    let mut violations = Vec::new();
    for (m, forbidden) in &rules {
        for f in module_files(m) {
            for (line, text) in code(&f) {
                for bad in forbidden {
                    if text.contains(bad) {
                        violations.push(format!(
                            "{}:{line}: `{bad}` in {}",
                            f.display(),
                            text.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against ARCHITECTURE.md:\n{}",
        violations.join("\n")
    );
}

/// No `--flag` outside `src/cli/` (code, strings and comments alike): the library speaks in
/// domain terms and the CLI translates.
#[test]
fn only_the_cli_names_flags() {
    let mut found = Vec::new();
    for f in rust_files(&src()) {
        if f.starts_with(src().join("cli")) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let b = line.as_bytes();
            for k in 0..b.len().saturating_sub(2) {
                let before_ok = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'-');
                if before_ok && b[k] == b'-' && b[k + 1] == b'-' && b[k + 2].is_ascii_lowercase() {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                    break;
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "flag names outside src/cli/:\n{}",
        found.join("\n")
    );
}

/// The library without default features pulls in no front-end crate.
#[test]
fn no_default_features_means_no_front_end_crates() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "--no-default-features",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--package",
            "skinview",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && tree.contains("wgpu"),
        "cargo tree failed:\n{tree}"
    );
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for bad in [
        "winit",
        "egui",
        "egui-wgpu",
        "egui-winit",
        "clap",
        "indicatif",
    ] {
        assert!(
            !crates.contains(&bad),
            "{bad} is in the no-default-features tree"
        );
    }
    // The command-line-only build (README: `--no-default-features --features cli`) has clap
    // but no window or UI crates.
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "--no-default-features"])
        .args(["--features", "cli", "--edges", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "--package", "skinview"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    let cli: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(cli.contains(&"clap"), "cargo tree --features cli:\n{tree}");
    for bad in ["winit", "egui", "egui-wgpu", "egui-winit", "egui_plot"] {
        assert!(!cli.contains(&bad), "{bad} is in the --features cli tree");
    }
    // And with the defaults they are there (the check above can fail).
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "--edges",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "--package", "skinview"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    for needed in ["winit", "egui", "clap"] {
        assert!(
            tree.lines()
                .any(|l| l.split_whitespace().next() == Some(needed)),
            "{needed} missing from the default tree"
        );
    }
}
