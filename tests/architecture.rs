//! ARCHITECTURE.md's import rules, checked on the source: core modules never import
//! wgpu/winit/egui/gltf or the io/gpu/harness layers; io and gpu never import each other or
//! the harness.

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
    v
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

#[test]
fn layers_import_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let core = [
        "image.rs",
        "math.rs",
        "scene.rs",
        "anim",
        "skeleton.rs",
        "ik",
        "links.rs",
        "skin",
        "frame.rs",
        "character.rs",
        "rig",
        "builtin.rs",
        "rigs.rs",
        "error.rs",
    ];
    let rules: [(&[&str], &[&str]); 3] = [
        (
            &core,
            &[
                "wgpu",
                "winit",
                "egui",
                "gltf::",
                "use gltf",
                "crate::gpu",
                "crate::io",
                "crate::harness",
                "crate::viewer",
            ],
        ),
        (
            &["io"],
            &[
                "wgpu",
                "winit",
                "egui",
                "crate::gpu",
                "crate::harness",
                "crate::viewer",
            ],
        ),
        (
            &["gpu"],
            &[
                "winit",
                "egui",
                "gltf",
                "crate::io",
                "crate::harness",
                "crate::viewer",
            ],
        ),
    ];
    let mut violations = Vec::new();
    for (modules, forbidden) in rules {
        for m in modules {
            let p = src.join(m);
            let files = if p.is_dir() { rust_files(&p) } else { vec![p] };
            assert!(!files.is_empty(), "{m} not found");
            for f in files {
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
    }
    assert!(
        violations.is_empty(),
        "imports against ARCHITECTURE.md:\n{}",
        violations.join("\n")
    );
}
