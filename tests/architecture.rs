//! ARCHITECTURE.md's rules, checked on the source and the dependency tree:
//! - each layer imports only the layers below it (core → nothing of ours above; io and gpu →
//!   core only; compare and view → gpu and core; check → everything but the front ends; only
//!   the viewer and the CLI see winit, egui or clap);
//! - `src/cli/` is the only place that names a command-line flag;
//! - without default features the library's dependency tree has no winit, egui or clap (the
//!   core builds and tests without them: CI runs `cargo test --no-default-features --lib --test
//!   architecture`; the flags add only the viewer module to the library, so the rest of the
//!   suite would test the same code again);
//! - no function in `src/` is over 150 lines, counting every line from `fn` to its closing
//!   brace;
//! - no Markdown page has a prose line over 200 characters or a table row over 400;
//! - the files of gpu/ and cli/ import one another without a cycle, and the CLI keeps no
//!   copy of a library enum (`ValueEnum` only on an allow-list of CLI-only choices).
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

const CORE: [&str; 24] = [
    "anim",
    "builtin",
    "camera",
    "character",
    "choice",
    "crowd",
    "diff",
    "error",
    "frame",
    "ik",
    "image",
    "info",
    "links",
    "math",
    "optimize",
    "partition",
    "poses",
    "quality",
    "retarget",
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
    let allowed: [(&str, &str); 2] = [
        (
            "CaptureChoice",
            "compare's --capture names a set of readbacks (`both`), not one CapturePath",
        ),
        (
            "ColorArg",
            "render's picture: a colour mode or one of render's own pictures (diff, submesh)",
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

/// Longest function allowed in `src/`, in lines from its `fn` to its closing brace (comments
/// and blank lines count: a reader reads them too). clippy's `too_many_lines` (clippy.toml)
/// counts code lines only; this bound holds the whole text.
const MAX_FUNCTION_LINES: usize = 150;

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with the contents of comments, strings and character literals blanked (newlines
/// kept), so that the braces and `fn`s left are the code's own.
fn code_only(text: &str) -> Vec<char> {
    let c: Vec<char> = text.chars().collect();
    let n = c.len();
    let mut out = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for x in &mut out[from..to.min(n)] {
            if *x != '\n' {
                *x = ' ';
            }
        }
    };
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, x)| c.get(i + k) == Some(&x));
    let mut i = 0;
    while i < n {
        let end = if at(i, "//") {
            (i..n).find(|&j| c[j] == '\n').unwrap_or(n)
        } else if at(i, "/*") {
            // Block comments nest.
            let (mut depth, mut j) = (0, i);
            while j < n {
                if at(j, "/*") {
                    depth += 1;
                    j += 2;
                } else if at(j, "*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if let Some(end) = raw_string_end(&c, i) {
            end
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < n && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            j + 1
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            // An escaped character literal: '\n', '\'', '\u{1F600}'.
            (i + 3..n).find(|&j| c[j] == '\'').map_or(n, |j| j + 1)
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i + 3
        } else {
            // A lifetime or label's `'` stays, as does all other code.
            i += 1;
            continue;
        };
        blank(&mut out, i, end);
        i = end;
    }
    out
}

/// Where the raw string literal starting at `i` (`r"…"`, `r#"…"#`, `br#"…"#`) ends, if one
/// starts there.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let starts_word = |k: usize| k == 0 || !is_ident(c[k - 1]);
    let prefixed = i >= 1 && matches!(c[i - 1], 'b' | 'c') && starts_word(i - 1);
    if c[i] != 'r' || !(starts_word(i) || prefixed) {
        return None;
    }
    let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
    if c.get(i + 1 + hashes) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    let from = i + 2 + hashes;
    Some(
        (from..c.len())
            .find(|&j| c[j..].starts_with(&close))
            .map_or(c.len(), |j| j + close.len()),
    )
}

/// Every function with a body in `text`: its name, the line of its `fn` and its length in
/// lines up to the line of its closing brace.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let c = code_only(text);
    let n = c.len();
    let mut line_of = Vec::with_capacity(n);
    let mut line = 1;
    for &x in &c {
        line_of.push(line);
        if x == '\n' {
            line += 1;
        }
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < n {
        let keyword = c[i] == 'f'
            && c[i + 1] == 'n'
            && c[i + 2].is_whitespace()
            && (i == 0 || !is_ident(c[i - 1]));
        if !keyword {
            i += 1;
            continue;
        }
        let start = (i + 2..n).find(|&j| !c[j].is_whitespace()).unwrap_or(n);
        let end = (start..n).find(|&j| !is_ident(c[j])).unwrap_or(n);
        let name: String = c[start..end].iter().collect();
        // `fn(…)` pointer types and macro patterns (`fn $name`) have no name here.
        if name.is_empty() || name.starts_with(|x: char| x.is_ascii_digit()) {
            i += 2;
            continue;
        }
        // The body's `{` (or a declaration's `;`) outside the signature's parentheses and
        // brackets (`-> [f32; 4]`).
        let mut depth = 0i32;
        let mut open = None;
        for (j, &x) in c.iter().enumerate().skip(end) {
            match x {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth == 0 => {
                    open = Some(j);
                    break;
                }
                ';' if depth == 0 => break,
                _ => {}
            }
        }
        if let Some(open) = open {
            let mut braces = 0;
            let close = (open..n)
                .find(|&j| {
                    match c[j] {
                        '{' => braces += 1,
                        '}' => braces -= 1,
                        _ => {}
                    }
                    braces == 0
                })
                .unwrap_or(n - 1);
            found.push((name, line_of[i], line_of[close] - line_of[i] + 1));
        }
        i = end;
    }
    found
}

/// The scanner itself, on the cases that could fool it: braces in strings, raw strings,
/// character literals and comments, lifetimes, `;` in a return type, declarations without a
/// body, function pointer types and nested functions.
#[test]
fn function_lengths_count_from_fn_to_its_closing_brace() {
    let text = r##"
trait T {
    fn declared(&self) -> u32;
}
fn outer<'a>(x: &'a str) -> [u8; 4] {
    let s = "{ not a brace";
    let r = r#"} "neither" {"#;
    let c = '{';
    let e = '\'';
    // }
    /* } /* nested } */ } */
    fn inner(f: fn(u8) -> u8) -> u8 {
        f(1)
    }
    [0; 4]
}
"##;
    let found = function_lengths(text);
    assert_eq!(
        found,
        vec![("outer".to_string(), 5, 12), ("inner".to_string(), 12, 3)]
    );
}

/// No function in `src/` is longer than [`MAX_FUNCTION_LINES`], counting every line from
/// `fn` to its closing brace: functions hold one idea each.
#[test]
fn no_function_in_src_is_over_150_lines() {
    let mut long = Vec::new();
    for f in rust_files(&src()) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (name, line, lines) in function_lengths(&text) {
            if lines > MAX_FUNCTION_LINES {
                long.push(format!("{}:{line}: {name}: {lines} lines", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them, one idea each):\n{}",
        long.join("\n")
    );
}

/// Longest prose line in a Markdown page, in characters: a longer one is a paragraph that was
/// never wrapped, unreadable in a terminal or a diff.
const MAX_PROSE_CHARS: usize = 200;
/// Longest table row (a line starting with `|`): rows hold figures; a table whose cells hold
/// paragraphs is a list.
const MAX_TABLE_ROW_CHARS: usize = 200;

/// The repository's Markdown pages: every `*.md` outside build output, installed packages,
/// downloaded or generated test data and other ignored output folders (hidden folders such as
/// `.git` and `.gpu-report`, `web/dist`).
fn markdown_pages(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    const SKIPPED: [&str; 5] = [
        "target",
        "node_modules",
        "tests/data",
        "tests/hostile/corpus",
        "web/dist",
    ];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            let skipped = name.starts_with('.')
                || SKIPPED
                    .iter()
                    .any(|s| rel == *s || name == *s || rel.starts_with(&format!("{s}.")));
            if !skipped {
                markdown_pages(&p, root, out);
            }
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// No Markdown page has a prose line over [`MAX_PROSE_CHARS`] characters or a table row over
/// [`MAX_TABLE_ROW_CHARS`]. Lines in code blocks are held to the prose bound too: none needs
/// more (a long command is broken with `\`).
#[test]
fn no_markdown_line_is_too_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = Vec::new();
    markdown_pages(root, root, &mut pages);
    pages.sort();
    assert!(
        pages.iter().any(|p| p.ends_with("README.md")),
        "no README.md found under {}",
        root.display()
    );
    let mut long = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (i, line) in text.lines().enumerate() {
            let chars = line.chars().count();
            let (limit, what) = if line.starts_with('|') {
                (MAX_TABLE_ROW_CHARS, "table row")
            } else {
                (MAX_PROSE_CHARS, "line")
            };
            if chars > limit {
                let rel = page.strip_prefix(root).unwrap_or(page);
                long.push(format!(
                    "{}:{}: {what} of {chars} characters",
                    rel.display(),
                    i + 1
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "Markdown lines over {MAX_PROSE_CHARS} characters (table rows over \
         {MAX_TABLE_ROW_CHARS}):\n{}",
        long.join("\n")
    );
}
