#!/usr/bin/env bash
# FBX test data, made here and never downloaded: the shared glTF models and generated rigs
# converted to FBX by Debian's Blender (headless; tools/blender/gltf_to_fbx.py) into
# tests/data/fbx/. Run by scripts/setup.sh --tests; does nothing when the files were made
# from the same inputs by the same script (tests/data/fbx/.stamp).
#   scripts/make-fbx-test-data.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/tests/data/fbx}"
if [ -n "${SKINVIEW_SHARED:-}" ]; then shared="$SKINVIEW_SHARED"
elif [ -d "$here/../shared/models" ]; then shared="$here/../shared"
else shared="$here/tests/data"
fi
if ! command -v blender >/dev/null; then
    echo "missing: Blender for the FBX test data. Run as root:  apt-get install blender python3-numpy" >&2
    exit 1
fi
# The models the FBX tests compare with their sources (tests/io/fbx.rs lists why each is
# exact or loose).
sources=(
    models/CesiumMan/CesiumMan.glb
    models/Fox/Fox.glb
    models/RiggedFigure/RiggedFigure.glb
    models/RiggedSimple/RiggedSimple.glb
    models/SimpleSkin/SimpleSkin.glb
    rigs/rig_seed1.glb
    rigs/rig_seed4_8inf_morph_ubyte.glb
    rigs/rig_seed5_40j_6inf_ushort.glb
)
args=()
for s in "${sources[@]}"; do
    if [ ! -f "$shared/$s" ]; then
        echo "missing: $shared/$s (the test data; scripts/setup.sh --tests makes it)" >&2
        exit 1
    fi
    name="$(basename "$s" .glb)"
    args+=("$shared/$s" "$out/$name.fbx")
done
stamp="$( (blender --version 2>/dev/null | head -1; cat "$here/tools/blender/gltf_to_fbx.py";
           for s in "${sources[@]}"; do sha256sum < "$shared/$s"; done) | sha256sum | cut -d' ' -f1)"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
    exit 0
fi
mkdir -p "$out"
rm -f "$out/.stamp"
echo "setup: converting ${#sources[@]} models to FBX with Blender into $out" >&2
log="$out/blender.log"
if ! blender --background --factory-startup --python "$here/tools/blender/gltf_to_fbx.py" \
        -- "${args[@]}" > "$log" 2>&1; then
    tail -20 "$log" >&2
    echo "the FBX conversion failed (Blender's log: $log)" >&2
    exit 1
fi
for ((i = 1; i < ${#args[@]}; i += 2)); do
    if [ ! -s "${args[$i]}" ]; then
        tail -20 "$log" >&2
        echo "Blender did not write ${args[$i]} (log: $log)" >&2
        exit 1
    fi
done
echo "$stamp" > "$out/.stamp"
