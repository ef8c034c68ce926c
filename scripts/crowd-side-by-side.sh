#!/usr/bin/env bash
# The crowd's CPU stage beside ozz-animation's crowd case, interleaved on one machine:
#   scripts/crowd-side-by-side.sh OZZ_BENCH SKINVIEW [ROUNDS] [CHARACTERS...]
# OZZ_BENCH is ../shared/peers/ozzbench's ozz_bench (built by its build.sh), SKINVIEW a release
# build of skinview. Each round runs, for each crowd size, `ozz_bench --only crowd` and
# `skinview bench --crowd N --workload ozz` (the order alternating between rounds), each on one
# thread and on every core (THREADS, default nproc). Prints a markdown table of the medians
# over rounds (min–max beside them), ns per character, and how much the other cores add.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 OZZ_BENCH SKINVIEW [ROUNDS] [CHARACTERS...]" >&2
    exit 2
fi
OZZ="$1"
SV="$2"
ROUNDS="${3:-5}"
shift $(($# < 3 ? $# : 3))
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1024 4096)
THREADS="${THREADS:-$(nproc)}"
for b in "$OZZ" "$SV"; do
    [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }
done
RAW="$(mktemp -d "${TMPDIR:-/tmp}/crowd-side-by-side.XXXXXX")"
TSV="$RAW/all.tsv" # who  characters  threads  ns_per_character
: >"$TSV"

run_ozz() { # characters
    "$OZZ" --only crowd --characters "$1" --threads "$THREADS" |
        sed -n 's/.*"ns_per_character":\([0-9.]*\).*"characters":\([0-9]*\),"threads":\([0-9]*\).*/ozz\t\2\t\3\t\1/p' >>"$TSV"
}
run_sv() { # characters
    local json="$RAW/sv.json"
    "$SV" bench --crowd "$1" --workload ozz --threads "$THREADS" --json "$json" >/dev/null
    python3 - "$json" >>"$TSV" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(f"skinview\t{r['characters']}\t{r['threads']}\t{r['ns_per_character']:.1f}")
EOF
}

for r in $(seq 1 "$ROUNDS"); do
    for n in "${SIZES[@]}"; do
        if [ $((r % 2)) -eq 1 ]; then run_ozz "$n"; run_sv "$n"; else run_sv "$n"; run_ozz "$n"; fi
    done
    echo "round $r/$ROUNDS done" >&2
done

python3 - "$TSV" "$ROUNDS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    who, n, t, ns = line.split("\t")
    rows.setdefault((int(n), int(t), who), []).append(float(ns))
def cell(v):
    return f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"
print(f"{sys.argv[2]} interleaved rounds; ns per character, median (min–max):\n")
print("| characters | threads | ozz-animation | skinview | skinview / ozz (time) |")
print("|---:|---:|---:|---:|---:|")
for (n, t) in sorted({(n, t) for (n, t, _) in rows}):
    o, s = rows.get((n, t, "ozz")), rows.get((n, t, "skinview"))
    if o and s:
        ratio = statistics.median(s) / statistics.median(o)
        print(f"| {n} | {t} | {cell(o)} | {cell(s)} | {ratio:.2f} |")
print("\nWhat the other cores add (one thread's time / all threads' time, medians):\n")
for n in sorted({n for (n, _, _) in rows}):
    for who in ("ozz", "skinview"):
        ts = sorted(t for (m, t, w) in rows if m == n and w == who)
        if len(ts) >= 2:
            one, all_ = statistics.median(rows[(n, ts[0], who)]), statistics.median(rows[(n, ts[-1], who)])
            print(f"- {who}, {n} characters, {ts[-1]} threads: {one / all_:.2f}×")
EOF
echo "raw figures: $RAW" >&2
