//! Any bytes as a `.glb` / `.gltf` (the importer picks by content): a scene or an error, never
//! a panic; what imports also animates and skins one frame. Seed the corpus with the shared
//! models: `cp ../../shared/models/*/*.glb corpus/import_gltf/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skinview::character::CharacterSetup;

fuzz_target!(|data: &[u8]| {
    // A name with no folder: external URIs cannot resolve, so only the bytes are read.
    if let Ok(scene) =
        skinview::io::gltf_import::import_slice(data, std::path::Path::new("fuzz.glb"))
    {
        let anim = (!scene.animations.is_empty()).then_some(0);
        if let Ok(mut c) = CharacterSetup::clip(anim).build(&scene) {
            let _ = c.update(0.5, 0.0);
        }
    }
});
