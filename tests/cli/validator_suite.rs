//! The Khronos glTF-Validator's own test files for skins, animations, accessors, buffers and
//! buffer views (tests/gltf-validator-suite: copied with their licence and the validator's
//! published report for each). skinview agrees with the validator on every one: a file it
//! calls valid loads (`info` exits 0), and a file it rejects exits 2 with a message naming
//! one of the fields the validator names.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::{output_text, validator};

/// The suite's folder.
fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gltf-validator-suite/data")
}

/// Every `.gltf` and `.glb` of the suite, sorted.
fn suite_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(suite()).expect("the suite's folder") {
        let dir = dir.expect("a folder entry").path();
        for f in std::fs::read_dir(&dir).expect("a category folder") {
            let f = f.expect("a file entry").path();
            if matches!(f.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")) {
                files.push(f);
            }
        }
    }
    files.sort();
    files
}

/// The validator's published verdict on `file`: its error count and the JSON pointers of
/// its errors.
fn published(file: &Path) -> (u64, Vec<String>) {
    let mut report = file.as_os_str().to_owned();
    report.push(".report.json");
    let text = std::fs::read_to_string(&report).expect("each file has its report");
    let json: serde_json::Value = serde_json::from_str(&text).expect("a report is JSON");
    let issues = &json["issues"];
    let errors = issues["numErrors"].as_u64().expect("numErrors");
    let pointers = issues["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["severity"].as_u64() == Some(0))
        .filter_map(|m| m["pointer"].as_str().map(field_of_pointer))
        .collect();
    (errors, pointers)
}

/// A JSON pointer as skinview names the field: `/animations/0/channels/1/sampler` is
/// `animations[0].channels[1].sampler`.
fn field_of_pointer(pointer: &str) -> String {
    let mut field = String::new();
    for token in pointer.split('/').filter(|t| !t.is_empty()) {
        if token.bytes().all(|b| b.is_ascii_digit()) {
            field.push_str(&format!("[{token}]"));
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(token);
        }
    }
    field
}

/// The field skinview's error names: `skinview: error: FILE: FIELD: message`.
fn field_of_error(stderr: &str, file: &str) -> Option<String> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("skinview: error: "))?;
    let rest = line.strip_prefix("skinview: error: ")?.strip_prefix(file)?;
    let rest = rest.strip_prefix(": ")?;
    Some(rest.split(": ").next()?.to_string())
}

/// Whether skinview's `field` is one the validator names, or a part of one.
fn names_the_same_field(field: &str, pointers: &[String]) -> bool {
    pointers.iter().any(|p| {
        field == p || field.starts_with(&format!("{p}.")) || field.starts_with(&format!("{p}["))
    })
}

#[test]
fn field_names_convert_from_json_pointers() {
    assert_eq!(
        field_of_pointer("/animations/0/channels/12/target/path"),
        "animations[0].channels[12].target.path"
    );
    assert_eq!(field_of_pointer("/accessors"), "accessors");
    let pointers = vec!["buffers[1]".to_string(), "skins[0].joints".to_string()];
    assert!(names_the_same_field("buffers[1].byteLength", &pointers));
    assert!(names_the_same_field("skins[0].joints", &pointers));
    assert!(!names_the_same_field("buffers[10]", &pointers));
    assert!(!names_the_same_field("skins[0]", &pointers));
    assert_eq!(
        field_of_error(
            "skinview: error: a.gltf: skins[0].joints: joints 0 and 1 ...\n",
            "a.gltf"
        )
        .as_deref(),
        Some("skins[0].joints")
    );
}

#[test]
fn every_file_the_validator_accepts_loads_and_every_file_it_rejects_names_the_field() {
    let files = suite_files();
    assert!(files.len() >= 80, "the suite has {} files", files.len());
    let mut wrong = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    for file in &files {
        let (errors, pointers) = published(file);
        let o = Command::new(env!("CARGO_BIN_EXE_skinview"))
            .arg("info")
            .arg(file)
            .output()
            .expect("run skinview");
        let name = file.file_name().and_then(|n| n.to_str()).expect("a name");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let shown = file.strip_prefix(suite()).unwrap_or(file).display();
        if errors == 0 {
            valid += 1;
            if o.status.code() != Some(0) {
                wrong.push(format!(
                    "{shown}: valid, but exit {:?}: {stderr}",
                    o.status.code()
                ));
            }
            continue;
        }
        invalid += 1;
        if o.status.code() != Some(2) {
            wrong.push(format!(
                "{shown}: {errors} validator errors, but exit {:?}: {}",
                o.status.code(),
                output_text(&o)
            ));
            continue;
        }
        match field_of_error(&stderr, name) {
            Some(field) if names_the_same_field(&field, &pointers) => {}
            field => wrong.push(format!(
                "{shown}: names {field:?}, the validator {pointers:?}: {stderr}"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        valid >= 20 && invalid >= 60,
        "{valid} valid, {invalid} invalid"
    );
}

/// The published reports are what the validator pinned in tools/gltf-validator says today
/// (one Node.js run over the suite), so the expected results are the pinned version's.
#[test]
fn the_pinned_validator_gives_the_published_verdicts() {
    let files = suite_files();
    let mut differ = Vec::new();
    for report in validator::validate(&files) {
        let (errors, _) = published(&report.file);
        // The one file that differs: its buffer's uri is a web address, which the published
        // run did not fetch (a NON_RELATIVE_URI warning) and validate.mjs's file reader
        // cannot (an IO_ERROR). skinview follows the published verdict: the buffer is not
        // read, and nothing uses it.
        let fetched_from_the_web = report.file.ends_with("buffer/non_relative_uri.gltf")
            && report
                .messages
                .iter()
                .all(|m| m.starts_with("IO_ERROR /buffers/0/uri"));
        if (errors == 0) != (report.errors == 0) && !fetched_from_the_web {
            differ.push(format!(
                "{}: published {errors} errors, pinned validator {}: {:?}",
                report.file.display(),
                report.errors,
                report.messages
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
