//! Any bytes as an `.fbx` (binary or ASCII, through ufbx and the importer's conversion): a
//! scene or an error, never a panic or a crash in the C reader; what imports also animates
//! and skins one frame. Seed the corpus with the FBX test data:
//! `cp ../tests/data/fbx/*.fbx corpus/import_fbx/` (made by scripts/make-fbx-test-data.sh).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skinview::character::CharacterSetup;

fuzz_target!(|data: &[u8]| {
    if let Ok(scene) = skinview::io::fbx::import_slice(data, "fuzz.fbx") {
        let anim = (!scene.animations.is_empty()).then_some(0);
        if let Ok(mut c) = CharacterSetup::clip(anim).build(&scene) {
            let _ = c.update(0.5, 0.0);
        }
    }
});
