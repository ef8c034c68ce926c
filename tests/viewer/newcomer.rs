//! What a new user meets first: every command succeeds without printing an error when
//! `XDG_RUNTIME_DIR` is unset (Mesa complains about it otherwise), the help texts, the
//! README and `docs/` speak the user's language (no internal references, no Rust debug forms),
//! `--out` writes the format its extension names, and times outside a clip behave as
//! docs/commands.md says.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skinview-newcomer-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Run the binary as a user's shell would: `XDG_RUNTIME_DIR` unset.
fn run_bare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skinview"))
        .args(args)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every command, once, with `XDG_RUNTIME_DIR` unset: it succeeds and no line of its error
/// stream says "error" (the viewer too, under Xvfb where there is one).
#[test]
fn successful_commands_print_no_error() {
    let _gpu = common::gpu(); // in CI a missing adapter fails here, not as a vague failure below
    let png = tmp("bare.png");
    let glb = tmp("bare.glb");
    let weights = tmp("bare_weights.glb");
    let dump = tmp("bare_dump.json");
    let quality = tmp("bare_quality");
    let runs: Vec<Vec<&str>> = vec![
        vec!["info"],
        vec!["render", "--out", png.to_str().unwrap()],
        vec!["compare", "--frames", "2"],
        vec!["dump", "--time", "0.5", "--out", dump.to_str().unwrap()],
        vec![
            "dump",
            "--time",
            "0.5",
            "--path",
            "gpu",
            "--out",
            dump.to_str().unwrap(),
        ],
        vec!["export", "--out", glb.to_str().unwrap()],
        vec!["partition", "--max-bones", "4"],
        vec!["bench", "builtin:arm", "--frames", "5"],
        vec!["weights", "--smooth", "--out", weights.to_str().unwrap()],
        vec![
            "quality",
            "--step",
            "90",
            "--out",
            quality.to_str().unwrap(),
        ],
    ];
    for args in &runs {
        let o = run_bare(args);
        let t = text(&o);
        assert!(o.status.success(), "{args:?} failed:\n{t}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let bad: Vec<&str> = stderr
            .lines()
            .filter(|l| l.to_ascii_lowercase().contains("error"))
            .collect();
        assert!(bad.is_empty(), "{args:?} printed {bad:?} on success:\n{t}");
    }
    let xvfb = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success());
    if xvfb {
        let shot = tmp("bare_view.png");
        let o = Command::new("xvfb-run")
            .args([
                "-a",
                env!("CARGO_BIN_EXE_skinview"),
                "view",
                "--frames",
                "3",
            ])
            .args(["--size", "320x200", "--screenshot", shot.to_str().unwrap()])
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "view failed:\n{t}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !stderr
                .lines()
                .any(|l| l.to_ascii_lowercase().contains("error")),
            "view printed an error on success:\n{t}"
        );
    }
}

/// Words a user cannot follow: references to the project's own documents and tracker, and
/// Rust's debug forms of optional values.
const INTERNAL: [&str; 5] = ["seed 0", "issue ", "Some(", "None", "seeds/"];

fn internal_references(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| INTERNAL.iter().any(|w| l.contains(w)))
        .map(str::to_string)
        .collect()
}

/// `--help` of every command, the README and the reference pages in `docs/` name published
/// sources and plain words, never the project's internal documents or debug forms.
#[test]
fn help_and_readme_speak_the_users_language() {
    let top = run_bare(&["--help"]);
    assert!(top.status.success());
    let listed: Vec<String> = text(&top)
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A command's row; deeper-indented lines continue its description.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(listed.len() >= 10, "{listed:?}");
    let mut hits = internal_references(&text(&top));
    for c in &listed {
        let o = run_bare(&[c, "--help"]);
        assert!(o.status.success(), "{c} --help");
        hits.extend(
            internal_references(&text(&o))
                .into_iter()
                .map(|l| format!("{c} --help: {l}")),
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
    assert!(pages.len() > 1, "no docs/*.md beside the README");
    for page in &pages {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        hits.extend(
            internal_references(&text)
                .into_iter()
                .map(|l| format!("{}: {l}", page.display())),
        );
    }
    assert!(hits.is_empty(), "internal references:\n{}", hits.join("\n"));
}

/// Rustdoc and comments cite published works by author, title and section, as the README does,
/// never the project's internal seed documents: every source and shader file, read as text.
#[test]
fn sources_cite_published_works() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut hits = Vec::new();
    let mut dirs = vec![root.join("src"), root.join("shaders")];
    let mut files = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "wgsl") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if ["seed 0", "seeds/", "shared/notes"]
                        .iter()
                        .any(|w| line.contains(w))
                    {
                        hits.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(files > 100, "{files} source files read");
    assert!(hits.is_empty(), "internal references:\n{}", hits.join("\n"));
}

/// `--out x.jpg` writes JPEG (its magic bytes), `.png` PNG, and anything else is refused with
/// exit 2 naming the supported extensions, before any work and without writing.
#[test]
fn out_extension_picks_the_image_format() {
    let _gpu = common::gpu();
    for (name, magic) in [
        ("fmt.jpg", &[0xFF, 0xD8, 0xFF][..]),
        ("fmt.JPEG", &[0xFF, 0xD8, 0xFF][..]),
        ("fmt.png", &[0x89, b'P', b'N', b'G'][..]),
    ] {
        let out = tmp(name);
        let o = run_bare(&["render", "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(magic), "{name}: {:02x?}", &bytes[..4]);
    }
    for name in ["fmt.bmp", "fmt"] {
        let out = tmp(name);
        let o = run_bare(&["render", "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(".png, .jpg, .jpeg"), "{}", text(&o));
        assert!(!out.exists());
    }
    let o = run_bare(&["view", "--frames", "1", "--screenshot", "x.tga"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".png, .jpg, .jpeg"), "{}", text(&o));
}

/// As docs/commands.md says: a time before 0 or past a clip's end shows the clip's first or last
/// pose (glTF holds values outside the key range), and the command notes it.
#[test]
fn times_outside_a_clip_hold_its_ends_with_a_note() {
    let dump = |t: &str, name: &str| {
        let out = tmp(name);
        let o = run_bare(&["dump", "--time", t, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        (text(&o), v["meshes"][0]["positions_by_time"][0].clone())
    };
    // The built-in arm's "bend" clip lasts 2 s.
    let (note, past) = dump("99", "t99.json");
    assert!(
        note.contains("past the end of animation 0 \"bend\"") && note.contains("last pose"),
        "{note}"
    );
    let (quiet, end) = dump("2", "t2.json");
    assert!(!quiet.contains("note:"), "{quiet}");
    assert_eq!(past, end, "t = 99 s is not the clip's last pose");
    let (note, before) = dump("-1", "tm1.json");
    // The clip's span, so "(2.000 s)" is not read as where it starts.
    assert!(
        note.contains("before the start of animation 0 \"bend\" (0 to 2.000 s)")
            && note.contains("first pose"),
        "{note}"
    );
    let (_, start) = dump("0", "t0.json");
    assert_eq!(before, start, "t = -1 s is not the clip's first pose");
    let _gpu = common::gpu();
    let out = tmp("late.png");
    let o = run_bare(&["render", "--time", "1e3", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("past the end"), "{}", text(&o));
}
