//! Any bytes as a native `.rig.json`: a validated rig (which then converts to a scene and
//! back) or an error, never a panic. Seed: `skinview export builtin:humanoid --out
//! corpus/rig_json/humanoid.rig.json`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rig) = skinview::io::rig_json::parse(text, "fuzz.rig.json")
        && let Ok(rs) = rig.to_scene()
    {
        let _ = skinview::rig::WeberRig::from_scene(&rs, "fuzz");
    }
});
