#!/usr/bin/env bash
# `skinview optimize` beside gltfpack 1.3 (tools/gltfpack, installed by scripts/setup.sh
# --tests), on every shared model and rig with a skin and an animation, in one run:
#   scripts/optimize-side-by-side.sh SKINVIEW [SHARED]
# SKINVIEW is a (release) build of skinview, SHARED the test data (default ../shared). For each
# model: gltfpack -cc's output and the worst error `skinview diff` measures on it (relative to
# the diagonal; vertices paired by position, since gltfpack welds and reorders them), then
# `skinview optimize` at that error and at 1e-4, with its keys alone and with
# `--quantize-mesh --compress` (beside it, the ratio to gltfpack's bytes). Sizes are a file's bytes other than its images
# (the GLB minus the bytes of buffer views that images use). Prints a markdown table; the
# files stay in a scratch folder named on the last line.
# With LONG_CLIP=target/release/examples/long_clip (cargo build --release --example long_clip)
# it also times `optimize` on the long-clip character (the humanoid generator's skin
# subdivided, its walk looped and keyed at 30 Hz) at 8.5 s and 34 s, with peak memory.
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "usage: $0 SKINVIEW [SHARED]" >&2
    exit 2
fi
SV="$(realpath "$1")"
SHARED="$(realpath "${2:-$(dirname "$0")/../../shared}")"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PACK="$HERE/tools/gltfpack/node_modules/gltfpack/cli.js"
[ -x "$SV" ] || { echo "not an executable: $SV" >&2; exit 2; }
[ -f "$PACK" ] || { echo "missing $PACK: run scripts/setup.sh --tests" >&2; exit 2; }
command -v node >/dev/null || { echo "missing node: run scripts/setup.sh --tests" >&2; exit 2; }
RAW="$(mktemp -d "${TMPDIR:-/tmp}/optimize-side-by-side.XXXXXX")"

# Bytes of a .glb other than its images'.
non_image_bytes() {
    node -e '
const fs = require("fs");
const b = fs.readFileSync(process.argv[1]);
const len = b.readUInt32LE(12);
const doc = JSON.parse(b.subarray(20, 20 + len).toString("utf8"));
const views = new Set((doc.images || []).map((i) => i.bufferView).filter((v) => v !== undefined));
let images = 0;
for (const v of views) images += doc.bufferViews[v].byteLength;
console.log(b.length - images);' "$1"
}

# The worst relative distance over clips in a diff JSON report.
worst_rel() {
    node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(Math.max(0, ...d.clips.map((c) => c.max_rel)).toExponential(2));' "$1"
}

# Seconds a command takes.
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l | xargs printf "%.2f"
}

# A's bytes over B's, two decimals.
ratio() {
    echo "$1 / $2" | bc -l | xargs printf "%.2f"
}

echo "| model | source bytes | gltfpack -cc bytes | its error | skinview at that error: keys / all (× gltfpack) | skinview at 1e-4: keys / all (× gltfpack) | time at that error / 1e-4, all (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for model in "$SHARED"/models/*/*.glb "$SHARED"/rigs/*.glb; do
    # Skinned and animated only.
    info="$("$SV" info "$model" 2>/dev/null || true)"
    grep -q "skin 0" <<<"$info" || continue
    grep -q "^animations: [1-9]" <<<"$info" || continue
    name="$(basename "$model" .glb)"
    dir="$RAW/$name"
    mkdir -p "$dir"
    cp "$model" "$dir/in.glb"
    (cd "$dir" && node "$PACK" -i in.glb -o cc.glb -cc >/dev/null)
    "$SV" diff "$dir/in.glb" "$dir/cc.glb" --tolerance 1 --json "$dir/cc.json" >/dev/null
    err="$(worst_rel "$dir/cc.json")"
    all=(--quantize-mesh --compress)
    "$SV" optimize "$dir/in.glb" --out "$dir/at_err.glb" --tolerance "$err" >/dev/null
    "$SV" optimize "$dir/in.glb" --out "$dir/default.glb" >/dev/null
    t_err="$(timed "$SV" optimize "$dir/in.glb" --out "$dir/at_err_all.glb" --tolerance "$err" "${all[@]}")"
    t_default="$(timed "$SV" optimize "$dir/in.glb" --out "$dir/default_all.glb" "${all[@]}")"
    cc="$(non_image_bytes "$dir/cc.glb")"
    e_all="$(non_image_bytes "$dir/at_err_all.glb")"
    d_all="$(non_image_bytes "$dir/default_all.glb")"
    printf '| %s | %s | %s | %s | %s / %s (%s) | %s / %s (%s) | %s / %s |\n' "$name" \
        "$(non_image_bytes "$dir/in.glb")" "$cc" "$err" \
        "$(non_image_bytes "$dir/at_err.glb")" "$e_all" "$(ratio "$e_all" "$cc")" \
        "$(non_image_bytes "$dir/default.glb")" "$d_all" "$(ratio "$d_all" "$cc")" \
        "$t_err" "$t_default"
done
if [ -n "${LONG_CLIP:-}" ]; then
    echo
    echo "| long clip | vertices | seconds | optimize wall time (s) | peak memory (MB) |"
    echo "|---|---:|---:|---:|---:|"
    for vertices in 20000 34000; do
        for seconds in 8.5 34; do
            f="$RAW/long_${vertices}_$seconds.glb"
            made="$("$LONG_CLIP" "$f" "$seconds" "$vertices")"
            n="$(sed -n 's/.*: \([0-9]*\) vertices.*/\1/p' <<<"$made")"
            /usr/bin/time -f "%e %M" -o "$RAW/time" "$SV" optimize "$f" --out "${f%.glb}_o.glb" >/dev/null
            read -r wall kb <"$RAW/time"
            printf '| walk looped | %s | %s | %s | %.0f |\n' "$n" "$seconds" "$wall" "$(echo "$kb / 1024" | bc -l)"
        done
    done
fi
echo
echo "files: $RAW"
