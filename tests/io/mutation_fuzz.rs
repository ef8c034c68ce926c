//! A mutation fuzzer on stable Rust: the shared models with bytes flipped, runs
//! overwritten with extreme values, cut short and spliced with each other, from a fixed seed,
//! imported in memory. Every mutant must give a scene or an error — never a panic — and each
//! scene it does give must run through the CPU frame (palette and skinning) without one.
//! Deterministic: a fixed number of mutants per model, not a time budget.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code

use crate::common;
use crate::common::rng::XorShift64;

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Once;

use skinview::character::CharacterSetup;
use skinview::io::gltf_import::import_slice;
use skinview::scene::Scene;

/// Mutants per model (well under a second of imports per model); `SKINVIEW_FUZZ_MUTANTS`
/// and `SKINVIEW_FUZZ_SEED` run longer or other campaigns locally; `SKINVIEW_FUZZ_DUMP=DIR`
/// keeps each crashing mutant there.
const MUTANTS: usize = 300;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Values that break naive readers: extremes of each width, NaN and infinities.
const NASTY: [&[u8]; 8] = [
    &[0xff, 0xff, 0xff, 0xff],
    &[0x00, 0x00, 0x00, 0x80],
    &[0x00, 0x00, 0xc0, 0x7f], // f32 NaN
    &[0x00, 0x00, 0x80, 0x7f], // f32 +inf
    &[0xff, 0xff, 0x7f, 0x7f], // f32 max
    &[0x00, 0x00, 0x00, 0x00],
    &[0xff, 0xff, 0xff, 0x7f],
    &[0x01, 0x00, 0x00, 0x00],
];

fn mutate(rng: &mut XorShift64, bytes: &[u8], other: &[u8]) -> Vec<u8> {
    let mut m = bytes.to_vec();
    match rng.below(5) {
        // A few bytes flipped.
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(m.len());
                m[i] ^= 1 << rng.below(8);
            }
        }
        // A nasty value written over an aligned word.
        1 => {
            let v = NASTY[rng.below(NASTY.len())];
            let i = rng.below(m.len() / 4) * 4;
            for (k, b) in v.iter().enumerate() {
                if let Some(x) = m.get_mut(i + k) {
                    *x = *b;
                }
            }
        }
        // Cut short.
        2 => m.truncate(rng.below(m.len())),
        // Spliced: a prefix of this model and a suffix of another.
        3 => {
            let cut = rng.below(m.len());
            let from = rng.below(other.len());
            m.truncate(cut);
            m.extend_from_slice(&other[from..]);
        }
        // A digit in the JSON changed (counts, offsets, indices).
        _ => {
            let digits: Vec<usize> = m
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            if !digits.is_empty() {
                let i = digits[rng.below(digits.len())];
                m[i] = b"0123456789"[rng.below(10)];
                if rng.below(3) == 0 {
                    m.insert(i, b"9"[0]);
                }
            }
        }
    }
    m
}

thread_local! {
    /// Whether a panic on this thread is a mutant's, collected rather than printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (which catches its own panics) with this thread's panics kept quiet: the mutants'
/// panics are collected, not printed one by one. The hook is per thread, not the process's
/// silenced, so the other tests of this binary, running in parallel, still print theirs.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let print = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.try_with(Cell::get).unwrap_or(false) {
                print(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let r = f();
    QUIET.with(|q| q.set(false));
    r
}

#[test]
fn mutated_models_import_or_fail_cleanly() {
    let models: Vec<(String, Vec<u8>)> = common::all_models()
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    assert!(models.len() >= 10, "shared models missing");
    fuzz(&models, &gltf);
}

/// The same on meshopt-compressed copies (gltfpack `-c`, `-cc`, and `-c -ce khr` of CesiumMan
/// and Fox, made at test time): the mutants hit the compressed views, their extension objects
/// and the fallback buffer, and go through meshoptimizer's decoders.
#[test]
fn mutated_compressed_models_import_or_fail_cleanly() {
    let dir = std::env::temp_dir().join("skinview-fuzz-compressed");
    let _ = std::fs::remove_dir_all(&dir);
    let mut models = Vec::new();
    for stem in ["CesiumMan", "Fox"] {
        let model = common::model(stem);
        for (name, flags) in [
            ("c", &["-c"][..]),
            ("cc", &["-cc"][..]),
            ("khr", &["-c", "-ce", "khr"][..]),
        ] {
            let file = format!("{stem}-{name}.glb");
            let path = common::gltfpack::pack(&model, &dir, &file, flags);
            models.push((file, std::fs::read(&path).unwrap()));
        }
    }
    fuzz(&models, &gltf);
}

/// The glTF importer, as the fuzzer calls importers.
fn gltf(bytes: &[u8], name: &str) -> skinview::Result<Scene> {
    import_slice(bytes, Path::new(name))
}

/// The same on FBX files Blender wrote from the shared models (scripts/make-fbx-test-data.sh):
/// the mutants go through ufbx's binary FBX reader (node records, compressed arrays) and the
/// importer's conversion.
#[test]
fn mutated_fbx_files_import_or_fail_cleanly() {
    let models: Vec<(String, Vec<u8>)> =
        ["RiggedSimple", "SimpleSkin", "rig_seed4_8inf_morph_ubyte"]
            .into_iter()
            .map(|stem| {
                let path = common::fbx::converted(stem);
                (format!("{stem}.fbx"), std::fs::read(&path).unwrap())
            })
            .collect();
    fuzz(&models, &skinview::io::fbx::import_slice);
}

/// [`MUTANTS`] mutants of each of `models` (name, bytes), read by `import`: each imports and
/// skins, or fails with an error naming the file and a field; no panic.
fn fuzz(models: &[(String, Vec<u8>)], import: &dyn Fn(&[u8], &str) -> skinview::Result<Scene>) {
    let mutants = env_or("SKINVIEW_FUZZ_MUTANTS", MUTANTS as u64) as usize;
    let mut rng = XorShift64(env_or("SKINVIEW_FUZZ_SEED", 0x5EED_1234_ABCD_0001) | 1);
    let (mut panics, mut ok, mut errors) = (Vec::new(), 0usize, 0usize);
    for (mi, (name, bytes)) in models.iter().enumerate() {
        let other = &models[(mi + 1) % models.len()].1;
        for n in 0..mutants {
            let m = mutate(&mut rng, bytes, other);
            let result = quietly(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    let scene = import(&m, name)?;
                    // What imports must also animate and skin.
                    let anim = (!scene.animations.is_empty()).then_some(0);
                    let mut c = CharacterSetup::clip(anim).build(&scene)?;
                    c.update(0.5, 0.0)?;
                    skinview::Result::Ok(())
                }))
            });
            match result {
                Ok(Ok(())) => ok += 1,
                Ok(Err(e)) => {
                    errors += 1;
                    let text = e.to_string();
                    // "FILE: FIELD: what is wrong", the field a JSON path or a named part
                    // of the container (`GLB header length`), never the parser's bare verdict.
                    let field = text
                        .strip_prefix(&format!("{name}: "))
                        .and_then(|rest| rest.split_once(": "))
                        .map(|(field, _)| field);
                    assert!(
                        field.is_some_and(|f| !f.is_empty() && f != "not a valid glTF file"),
                        "{name} mutant {n}: the error does not name the file and a field: {text}"
                    );
                    if let Some(f) = std::env::var_os("SKINVIEW_FUZZ_ERRORS") {
                        use std::io::Write;
                        let mut f = std::fs::OpenOptions::new()
                            .append(true)
                            .create(true)
                            .open(f)
                            .unwrap();
                        let _ = writeln!(f, "{text}");
                    }
                }
                Err(p) => {
                    // Keep the crash for a corpus case.
                    if let Some(dir) = std::env::var_os("SKINVIEW_FUZZ_DUMP") {
                        let path = Path::new(&dir).join(format!("{name}-mutant{n}.glb"));
                        let _ = std::fs::write(path, &m);
                    }
                    let what = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    panics.push(format!("{name} mutant {n}: {what}"));
                }
            }
        }
    }
    println!(
        "{} mutants: {ok} imported and ran, {errors} errors, {} panics",
        models.len() * mutants,
        panics.len()
    );
    assert!(panics.is_empty(), "panics:\n{}", panics.join("\n"));
}
