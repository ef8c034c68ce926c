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

const CORE: [&str; 20] = [
    "anim",
    "builtin",
    "camera",
    "character",
    "choice",
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

/// The files of module directory `m` (its `mod.rs` apart) and, for each, the sibling files it
/// names in code: `super::file`, `crate::m::file`, or an item `mod.rs` re-exports from a file
/// (`pub use file::{A, B}`, then `super::A`). Names `mod.rs` defines itself are the module's
/// root, which every file may use. Test modules (`#[cfg(test)]` to the end of a file) are left
/// out: their `super::` is the file itself.
fn sibling_imports(m: &str) -> Vec<(String, Vec<String>)> {
    let dir = src().join(m);
    let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().to_string();
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs") && stem(p) != "mod")
        .collect();
    let names: Vec<String> = files.iter().map(|p| stem(p)).collect();
    // Items re-exported by mod.rs: `pub use file::{A, B};` (one or more lines).
    let root = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    let mut reexported: Vec<(String, String)> = Vec::new();
    for stmt in root.split(';') {
        let s = stmt.trim();
        let Some(rest) = s.strip_prefix("pub use ") else {
            continue;
        };
        let Some((file, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !item.is_empty() && names.contains(&file.to_string()) {
                reexported.push((item.to_string(), file.to_string()));
            }
        }
    }
    let mut graph = Vec::new();
    for (f, name) in files.iter().zip(&names) {
        // The file's code up to its test module, comments dropped, as one text.
        let text: String = code(f)
            .into_iter()
            .map(|(_, l)| l)
            .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut ids: Vec<String> = Vec::new();
        for prefix in ["super::".to_string(), format!("crate::{m}::")] {
            let mut rest = text.as_str();
            while let Some(i) = rest.find(&prefix) {
                let before = rest[..i].chars().next_back();
                rest = &rest[i + prefix.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue; // `a::super::` is no path of ours
                }
                // `super::{a::X, B}`: every identifier of the group; `super::a::X`: `a`.
                let taken = if rest.starts_with('{') {
                    &rest[..rest.find('}').map_or(rest.len(), |e| e + 1)]
                } else {
                    let end = rest
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    &rest[..end]
                };
                ids.extend(
                    taken
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(str::to_string),
                );
            }
        }
        let mut deps: Vec<String> = Vec::new();
        for id in ids {
            let target = if names.contains(&id) {
                Some(id)
            } else {
                reexported
                    .iter()
                    .find(|(item, _)| *item == id)
                    .map(|(_, file)| file.clone())
            };
            if let Some(t) = target
                && t != *name
                && !deps.contains(&t)
            {
                deps.push(t);
            }
        }
        deps.sort();
        graph.push((name.clone(), deps));
    }
    graph.sort();
    graph
}

/// A cycle in `graph` (each file and the files it imports), as the files along it, if any.
fn find_cycle(graph: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    // Depth-first search with colours: 0 unvisited, 1 on the stack, 2 done.
    fn visit(
        n: usize,
        graph: &[(String, Vec<String>)],
        colour: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<String>> {
        colour[n] = 1;
        stack.push(n);
        for d in &graph[n].1 {
            let Some(k) = graph.iter().position(|(name, _)| name == d) else {
                continue;
            };
            if colour[k] == 1 {
                let from = stack.iter().position(|&s| s == k).unwrap();
                let mut cycle: Vec<String> =
                    stack[from..].iter().map(|&s| graph[s].0.clone()).collect();
                cycle.push(graph[k].0.clone());
                return Some(cycle);
            }
            if colour[k] == 0
                && let Some(c) = visit(k, graph, colour, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        colour[n] = 2;
        None
    }
    let mut colour = vec![0u8; graph.len()];
    for n in 0..graph.len() {
        if colour[n] == 0
            && let Some(c) = visit(n, graph, &mut colour, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The files of gpu/ and of cli/ import one another downwards only: no file reaches itself
/// through its imports, so each can be read (and changed) knowing only the files below it.
#[test]
fn gpu_and_cli_files_import_without_cycles() {
    for m in ["gpu", "cli"] {
        let graph = sibling_imports(m);
        assert!(graph.len() > 5, "{m}: {graph:?}");
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "src/{m}/ has an import cycle: {}\nimports: {graph:#?}",
                cycle.join(" → ")
            );
        }
    }
}

/// The cycle finder finds a planted cycle (and the import reader sees `super::file` and
/// re-exported names): the test above can fail.
#[test]
fn cycle_finder_finds_a_planted_cycle() {
    let g = |edges: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        edges
            .iter()
            .map(|(n, d)| (n.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    assert_eq!(
        find_cycle(&g(&[("a", &["b"]), ("b", &["c"]), ("c", &[])])),
        None
    );
    assert_eq!(
        find_cycle(&g(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"])])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    // gpu/: the pipelines sit above the scene, the scene above its buffers.
    let gpu = sibling_imports("gpu");
    let deps = |f: &str| gpu.iter().find(|(n, _)| n == f).unwrap().1.clone();
    assert!(deps("render").contains(&"scene".to_string()), "{gpu:?}");
    assert!(
        deps("scene").contains(&"compute_skin".to_string()),
        "{gpu:?}"
    );
    assert!(deps("shader_types").is_empty(), "{gpu:?}");
}

/// The command line keeps no copy of a library enum: a choice the library has is parsed by its
/// own names (`skinview::choice::Choice`, through `src/cli/choice.rs`). A `ValueEnum` in
/// `src/cli/` is allowed only for a choice that exists on the command line alone, each with its
/// reason.
#[test]
fn the_cli_mirrors_no_library_enum() {
    let allowed: [(&str, &str); 4] = [
        (
            "CaptureChoice",
            "compare's --capture names a set of readbacks (`both`), not one CapturePath",
        ),
        (
            "ColorArg",
            "render's picture: a colour mode or one of render's own pictures (diff, submesh)",
        ),
        (
            "JointsArg",
            "export's joint index type: left until the three weight-encoding pairs become one",
        ),
        (
            "WeightsArg",
            "export's weight type: left until the three weight-encoding pairs become one",
        ),
    ];
    let mut found = Vec::new();
    for f in rust_files(&src().join("cli")) {
        let lines = code(&f);
        for (k, (line, text)) in lines.iter().enumerate() {
            if !(text.contains("derive(") && text.contains("ValueEnum")) {
                continue;
            }
            // The enum the derive is on: the next line declaring one.
            let name = lines[k..]
                .iter()
                .find_map(|(_, t)| {
                    let t = t.trim_start().trim_start_matches("pub ");
                    t.strip_prefix("enum ")
                        .map(|r| r.split(|c: char| !c.is_alphanumeric()).next().unwrap_or(""))
                })
                .unwrap_or("?")
                .to_string();
            if !allowed.iter().any(|(n, _)| *n == name) {
                found.push(format!("{}:{line}: ValueEnum on {name}", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "ValueEnum in src/cli/ outside the allow-list (give the library enum a \
         skinview::choice::Choice instead):\n{}",
        found.join("\n")
    );
}
