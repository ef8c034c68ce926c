#!/usr/bin/env bash
# Models per minute of `skinview check`, for BENCHMARKS.md: the shared models and rigs (every
# .glb and .gltf of ../shared/models and ../shared/rigs) copied 1, 5 and 10 times into a
# scratch folder, checked with the GPU checks (lavapipe here) and with --no-gpu, `--jobs 2`.
# Prints a Markdown table: files, mode, wall time, models per minute, and the peak resident
# memory of the largest process of the run (GNU time's %M: the parent or one of its worker
# processes), which stays flat in the number of files when the workers give memory back.
#
# Usage: scripts/bench-check.sh [COPIES...]   (default: 1 5 10)
# Env: SKINVIEW (the binary; default target/release/skinview, built first with
#      `cargo build --release`), SKINVIEW_SHARED (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SKINVIEW:-${CARGO_TARGET_DIR:-target}/release/skinview}
shared=${SKINVIEW_SHARED:-../shared}
copies=("$@")
[ ${#copies[@]} -eq 0 ] && copies=(1 5 10)
[ -x "$bin" ] || { echo "no $bin: run cargo build --release (or set SKINVIEW)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# One copy: every model file, each with the files beside it (a .gltf's .bin and textures).
mkdir -p "$scratch/one"
for f in "$shared"/models/*/*.glb "$shared"/models/*/*.gltf "$shared"/rigs/*.glb; do
  d="$scratch/one/$(basename "$(dirname "$f")")"
  mkdir -p "$d"
  cp -n "$(dirname "$f")"/* "$d"/ 2>/dev/null || true
done
echo "| files | mode | wall time | models / minute | peak memory (largest process) |"
echo "|---:|---|---:|---:|---:|"
for n in "${copies[@]}"; do
  dir="$scratch/x$n"
  for i in $(seq "$n"); do mkdir -p "$dir/$i" && cp -r "$scratch/one/." "$dir/$i/"; done
  for mode in gpu no-gpu; do
    flags=(--jobs 2 --json "$scratch/report.json")
    [ "$mode" = no-gpu ] && flags+=(--no-gpu)
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$bin" check "$dir" "${flags[@]}" \
      > "$scratch/out.txt" 2>&1 || [ $? -eq 1 ]
    read -r secs kb < "$scratch/time"
    models=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['models']))" "$scratch/report.json")
    awk -v n="$models" -v mode="$mode" -v s="$secs" -v kb="$kb" \
      'BEGIN { printf "| %d | %s | %.1f s | %.0f | %.0f MB |\n", n, mode, s, n / s * 60, kb / 1024 }'
  done
done
