#!/usr/bin/env bash
# One character's whole animation stage beside ozz-animation's sampling + local→model, interleaved
# on one machine (issue 45's target: the built-in humanoid within 4× of ozz for its joint count):
#   scripts/stage-side-by-side.sh OZZ_BENCH SKINVIEW [ROUNDS] [MODEL]
# OZZ_BENCH is ../shared/peers/ozzbench's ozz_bench (built by its build.sh), SKINVIEW a release
# build of skinview. Each round runs `ozz_bench --only anim` (a 64-joint rig, µs per frame, the
# median of 25 runs of 600 frames) and `skinview bench [MODEL]` (`stage_us`: the stage from
# sampling to the palette, timed the same way), the order alternating between rounds, both
# pinned to one core (CPU, default 1). ozz's figure is scaled to MODEL's joint count (joints /
# 64: its cost per joint). Prints a markdown table of the medians over rounds (min–max beside
# them).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 OZZ_BENCH SKINVIEW [ROUNDS] [MODEL]" >&2
    exit 2
fi
OZZ="$1"
SV="$2"
ROUNDS="${3:-5}"
MODEL=("${@:4}")
CPU="${CPU:-1}"
for b in "$OZZ" "$SV"; do
    [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }
done
RAW="$(mktemp -d "${TMPDIR:-/tmp}/stage-side-by-side.XXXXXX")"
TSV="$RAW/all.tsv" # who  joints  us_per_frame
: >"$TSV"

run_ozz() {
    taskset -c "$CPU" "$OZZ" --only anim |
        sed -n 's/.*"us_per_frame":\([0-9.]*\).*"joints":\([0-9]*\).*/ozz\t\2\t\1/p' >>"$TSV"
}
run_sv() {
    local json="$RAW/sv.json"
    taskset -c "$CPU" "$SV" bench "${MODEL[@]}" --frames 3000 --json "$json" >/dev/null
    python3 - "$json" >>"$TSV" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"skinview\t{r['joints']}\t{r['stage_us']}")
EOF
}

for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then run_ozz; run_sv; else run_sv; run_ozz; fi
    echo "round $r/$ROUNDS done" >&2
done

python3 - "$TSV" "$ROUNDS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    who, joints, us = line.split("\t")
    rows.setdefault(who, []).append((int(joints), float(us)))
if "ozz" not in rows or "skinview" not in rows:
    sys.exit("a benchmark printed nothing: see the raw figures")
ozz = [us for _, us in rows["ozz"]]
ozz_joints = rows["ozz"][0][0]
joints = rows["skinview"][0][0]
sv = [us for _, us in rows["skinview"]]
scaled = [us * joints / ozz_joints for us in ozz]
def cell(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})"
ratio = statistics.median(sv) / statistics.median(scaled)
print(f"{sys.argv[2]} interleaved rounds; µs per frame, median (min–max):\n")
print(f"| ozz-animation, {ozz_joints} joints | ozz scaled to {joints} joints | skinview stage, {joints} joints | skinview / ozz |")
print("|---:|---:|---:|---:|")
print(f"| {cell(ozz)} | {cell(scaled)} | {cell(sv)} | {ratio:.2f} |")
EOF
echo "raw figures: $RAW" >&2
