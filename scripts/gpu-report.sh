#!/usr/bin/env bash
# The real-GPU report in one command: crowds timed by `skinview bench --gpu` on both
# skinning paths and both palettes, and `skinview compare` of every shared model through every
# path, merged by `skinview gpu-report` into OUTDIR/report.json (schema: docs/gpu-report.md)
# and OUTDIR/report.md. Made for a GPU machine lent for a few minutes, bare and offline:
#
#   SKINVIEW_BIN=path/to/release/skinview scripts/gpu-report.sh [options] OUTDIR
#
# Options:
#   --quick            small sizes (CI on lavapipe: two models, 1 and 4 instances, 2 frames)
#   --allow-software   accept a software adapter (lavapipe, llvmpipe, SwiftShader); refused
#                      otherwise, since its figures say nothing of a GPU
#   --deadline S       overall deadline in seconds (default 340 full, 1800 quick): steps that
#                      would start after it are logged as skipped; rows written so far stay
#   --copy-bandwidth T the GPU's copy bandwidth in TB/s for the floor (default: the figure
#                      measured on an H100, 3.0, or an H200, 4.3)
# Environment:
#   SKINVIEW_BIN     the binary (default: target/release/skinview, built with cargo if cargo
#                    is here; nothing is built when it is given)
#   SKINVIEW_MODELS  folders of .glb/.gltf models to compare, colon separated (default: models/
#                    and rigs/ of $SKINVIEW_SHARED, else ../shared beside the repository, else
#                    tests/data as scripts/setup.sh --tests makes it)
#   SKINVIEW_DEBS    folder of .deb files to unpack when the Vulkan loader is missing (default:
#                    .gpu-report/debs in the repository; see docs/gpu-report.md)
# Every step has its own time limit; a step that fails or times out is logged, the run goes on,
# and the script exits 1 at the end (2 for bad usage or a missing prerequisite).
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
quick=0
allow_software=0
deadline_s=""
bandwidth=()
out=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --allow-software) allow_software=1 ;;
    --deadline | --copy-bandwidth)
        [ $# -ge 2 ] || {
            echo "gpu-report: $1 takes a value (see --help)" >&2
            exit 2
        }
        case "$1" in
        --deadline) deadline_s="$2" ;;
        *)
            case "$2" in
            '' | *[!0-9.]* | *.*.* | .)
                echo "gpu-report: --copy-bandwidth takes TB/s, e.g. 3.0; got '$2'" >&2
                exit 2
                ;;
            esac
            bandwidth=(--copy-bandwidth "$2")
            ;;
        esac
        shift
        ;;
    -h | --help)
        sed -n '2,26p' "$0"
        exit 0
        ;;
    -*)
        echo "gpu-report: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    *)
        [ -z "$out" ] || {
            echo "gpu-report: one OUTDIR, got $out and $1" >&2
            exit 2
        }
        out="$1"
        ;;
    esac
    shift
done
[ -n "$out" ] || {
    echo "usage: scripts/gpu-report.sh [--quick] [--allow-software] [--deadline S] OUTDIR" >&2
    exit 2
}
if [ -z "$deadline_s" ]; then
    deadline_s=$([ "$quick" = 1 ] && echo 1800 || echo 340)
fi
case "$deadline_s" in
'' | *[!0-9]*)
    echo "gpu-report: --deadline takes whole seconds, got '$deadline_s'" >&2
    exit 2
    ;;
esac
start_s=$(date +%s)
end_s=$((start_s + deadline_s))

# The binary: given, or built here.
bin="${SKINVIEW_BIN:-}"
if [ -z "$bin" ]; then
    bin="$here/target/release/skinview"
    if command -v cargo >/dev/null; then
        echo "== building the release binary (cargo build --release)"
        (cd "$here" && cargo build --release --locked) || exit 2
    fi
fi
[ -x "$bin" ] || {
    echo "gpu-report: no skinview binary at $bin: build one (cargo build --release) and pass" \
        "SKINVIEW_BIN=path" >&2
    exit 2
}

# The Vulkan loader, and libglvnd's dispatch library that NVIDIA's Vulkan driver
# (libGLX_nvidia.so.0) loads: installed, or unpacked from carried .deb files. (ldconfig's list
# is read whole: grep -q closing the pipe early would fail it under pipefail. ldconfig lives in
# sbin, which a user's PATH may lack.)
export PATH="$PATH:/usr/sbin:/sbin"
has_lib() {
    ldconfig -p 2>/dev/null | grep -c "$1" >/dev/null && return 0
    local f
    for f in /usr/lib/*/"$1" /usr/lib64/"$1" /usr/lib/"$1"; do
        [ -e "$f" ] && return 0
    done
    return 1
}
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if ! has_lib libvulkan.so.1 || { [ -f "$nv" ] && ! has_lib libGLdispatch.so.0; }; then
    debs="${SKINVIEW_DEBS:-$here/.gpu-report/debs}"
    if ls "$debs"/*.deb >/dev/null 2>&1; then
        echo "== unpacking the Vulkan loader and libglvnd from $debs"
        for f in "$debs"/*.deb; do dpkg -x "$f" / || exit 2; done
        ldconfig
    fi
fi
if ! has_lib libvulkan.so.1; then
    echo "gpu-report: the Vulkan loader (libvulkan.so.1) is missing: install Debian's libvulkan1" \
        "(and mesa-vulkan-drivers for a software adapter), or carry its .deb in" \
        "SKINVIEW_DEBS (apt-get download libvulkan1 libglvnd0)" >&2
    exit 2
fi
if [ -f "$nv" ] && ! has_lib libGLdispatch.so.0; then
    echo "gpu-report: NVIDIA's Vulkan driver needs libGLdispatch.so.0: install Debian's" \
        "libglvnd0, or carry its .deb in SKINVIEW_DEBS (apt-get download libvulkan1 libglvnd0)" >&2
    exit 2
fi
# NVIDIA machines whose driver lives outside the loader's search path.
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$nv" ]; then
    export VK_DRIVER_FILES="$nv"
fi

rows="$out/rows"
mkdir -p "$rows" || exit 2
: >"$rows/steps.tsv"
failed=0

# Rewrite the report from the rows so far (a run cut off keeps what it measured); a merge
# that fails is said, with its log.
merge() {
    if ! "$bin" gpu-report "$rows" --out "$out" "${bandwidth[@]}" >"$rows/merge.log" 2>&1; then
        echo "gpu-report: merging the rows failed (see $rows/merge.log):" >&2
        tail -n 3 "$rows/merge.log" >&2
        failed=1
    fi
}

# step NAME LIMIT_S COMMAND...: run with a time limit unless past the deadline; log the outcome.
step() {
    local name="$1" limit="$2"
    shift 2
    local now
    now=$(date +%s)
    if [ "$now" -ge "$end_s" ]; then
        printf '%s\tskipped (deadline)\t0\n' "$name" >>"$rows/steps.tsv"
        echo "-- $name: skipped (deadline)"
        failed=1
        return
    fi
    local left=$((end_s - now))
    [ "$limit" -le "$left" ] || limit="$left"
    local t0 status rc
    t0=$(date +%s%N)
    timeout --kill-after=5 "$limit" "$@" >"$rows/$name.log" 2>&1
    rc=$?
    case "$rc" in
    0) status=ok ;;
    124 | 137) status="timed out (${limit} s)" ;;
    *) status="failed (exit $rc)" ;;
    esac
    [ "$rc" = 0 ] || failed=1
    local ms dt
    ms=$((($(date +%s%N) - t0) / 1000000))
    dt=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
    printf '%s\t%s\t%s\n' "$name" "$status" "$dt" >>"$rows/steps.tsv"
    echo "-- $name: $status (${dt} s)"
    [ "$rc" = 0 ] || tail -n 5 "$rows/$name.log" | sed 's/^/   /'
    merge
}

# The adapter: printed, and refused when it is software unless allowed.
echo "== adapter"
if ! timeout --kill-after=5 120 "$bin" bench --gpu builtin:arm --crowd 1 --frames 1 \
    --size 64x64 --json "$rows/adapter.json" >"$rows/adapter.log" 2>&1; then
    cat "$rows/adapter.log" >&2
    echo "gpu-report: no GPU adapter (see above)" >&2
    exit 2
fi
adapter=$(sed -n 's/^ *"adapter": "\(.*\)",$/\1/p' "$rows/adapter.json" | head -n 1)
echo "adapter: $adapter"
if echo "$adapter" | grep -Eqi 'software renderer|llvmpipe|lavapipe|swiftshader|softpipe'; then
    if [ "$allow_software" != 1 ]; then
        echo "gpu-report: $adapter is a software adapter; its figures say nothing of a GPU" \
            "(pass --allow-software to run anyway)" >&2
        exit 2
    fi
fi

# Sizes.
if [ "$quick" = 1 ]; then
    models=(builtin:humanoid CesiumMan)
    counts=(1 4)
    frames=2
    size=160x120
    bench_limit=300
    compare_limit=300
    compare_frames=2
    # CesiumMan's copies (3273 vertices, 24 B each) split over buffers of two instances, so
    # CI runs the split dispatches too.
    split_model=CesiumMan
    split=(--max-buffer-bytes $((2 * 3273 * 24)))
else
    models=(builtin:humanoid CesiumMan builtin:dense-humanoid)
    counts=(1 16 256 4096)
    frames=20
    size=1280x720
    bench_limit=60
    compare_limit=30
    compare_frames=8
    split_model=none
    split=()
fi

# Model files, by name, from the model folders.
shared="${SKINVIEW_SHARED:-$here/../shared}"
[ -d "$shared/models" ] || shared="$here/tests/data"
model_dirs="${SKINVIEW_MODELS:-$shared/models:$shared/rigs}"
files=()
IFS=: read -r -a dirs <<<"$model_dirs"
for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    while IFS= read -r f; do files+=("$f"); done < <(find "$d" -name '*.glb' -o -name '*.gltf' | sort)
done
[ "${#files[@]}" -gt 0 ] || {
    echo "gpu-report: no .glb/.gltf models under $model_dirs (set SKINVIEW_MODELS)" >&2
    exit 2
}
model_path() {
    case "$1" in
    builtin:*) echo "$1" ;;
    *) printf '%s\n' "${files[@]}" | grep -E "/$1\.(glb|gltf)$" | head -n 1 ;;
    esac
}
slug() { echo "$1" | tr -c 'A-Za-z0-9\n' '-'; }

# Crowds: the storage palette (vertex-shader path, compute path in both dispatch orders, the
# same crowd unskinned), then the uniform palette at K = 64 (vertex-shader path).
for palette in storage uniform; do
    for m in "${models[@]}"; do
        path=$(model_path "$m")
        [ -n "$path" ] || {
            echo "gpu-report: model $m not found under $model_dirs" >&2
            failed=1
            continue
        }
        for n in "${counts[@]}"; do
            f=$frames
            # The largest crowds: fewer frames (a frame is up to 443 M vertices, and compute
            # GPUs such as the H100 rasterise on a few of their units).
            [ "$n" -ge 256 ] && [ "$quick" = 0 ] && f=4
            extra=()
            [ "$palette" = uniform ] && extra=(--palette uniform --max-bones 64)
            [ "$palette" = storage ] && [ "$m" = "$split_model" ] && extra=("${split[@]}")
            name="crowd-$palette-$(slug "$m")-$(printf '%05d' "$n")"
            step "$name" "$bench_limit" "$bin" bench --gpu "$path" --crowd "$n" \
                --frames "$f" --size "$size" "${extra[@]}" --json "$rows/$name.json"
        done
    done
done

# Correctness: every model through every path.
compare_models=("${files[@]}")
if [ "$quick" = 1 ]; then
    compare_models=()
    for m in CesiumMan rig_seed1; do
        p=$(model_path "$m")
        if [ -n "$p" ]; then
            compare_models+=("$p")
        else
            echo "gpu-report: model $m not found under $model_dirs" >&2
            failed=1
        fi
    done
fi
for p in "${compare_models[@]}"; do
    base=$(slug "$(basename "$p")")
    step "compare-$base-vertex" "$compare_limit" "$bin" compare "$p" --frames "$compare_frames" \
        --json "$rows/compare-$base-vertex.json"
    step "compare-$base-compute" "$compare_limit" "$bin" compare "$p" --frames "$compare_frames" \
        --skinning compute --json "$rows/compare-$base-compute.json"
    step "compare-$base-uniform" "$compare_limit" "$bin" compare "$p" --frames "$compare_frames" \
        --palette uniform --max-bones 64 --json "$rows/compare-$base-uniform.json"
done

echo "== report"
if ! "$bin" gpu-report "$rows" --out "$out" "${bandwidth[@]}" --strict; then
    failed=1
fi
echo "took $(($(date +%s) - start_s)) s; $out/report.md"
exit "$failed"
