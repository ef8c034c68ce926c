#!/usr/bin/env bash
# Build the viewer's web page into web/dist/ (a static site: index.html, skinview.js,
# skinview_bg.wasm; any static host serves it). Installs what it needs when missing: the
# wasm32-unknown-unknown target (rustup), clang and llvm (apt; ufbx's C file is built into the
# page), and wasm-bindgen-cli from crates.io at the version of
# wasm-bindgen in Cargo.lock (the two must match). binaryen's wasm-opt (Debian `binaryen`)
# shrinks the module where present. Prints the module's size, raw and gzipped.
#   scripts/build-web.sh            the `web` profile (Cargo.toml: release, optimised for size)
#   scripts/build-web.sh --dev      faster build, larger and slower module
# The build has its own target folder ($CARGO_TARGET_DIR or target, then /web), so it can run
# while another cargo command holds the main one (the web tests run it from `cargo test`).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
profile=web
for a in "$@"; do
    case "$a" in
        --dev) profile=dev ;;
        *) echo "usage: scripts/build-web.sh [--dev]" >&2; exit 2 ;;
    esac
done

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    echo "build-web: installing the wasm32-unknown-unknown target (rustup)" >&2
    if ! command -v rustup >/dev/null || ! rustup target add wasm32-unknown-unknown >&2; then
        echo "missing: the wasm32 target. Run:  rustup target add wasm32-unknown-unknown" >&2
        exit 1
    fi
fi

need_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
    else return 1
    fi
}

# The web page's FBX reader needs clang and llvm-ar (scripts/need-clang.sh).
. "$here/scripts/need-clang.sh"
need_clang build-web

want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$want" ]; then
    echo "build-web: Cargo.lock names no wasm-bindgen (wgpu's web backend brings it)" >&2
    exit 1
fi
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
    echo "build-web: installing wasm-bindgen-cli $want from crates.io (Cargo.lock's wasm-bindgen; have: ${have:-none})" >&2
    # Its own lock file first; without it when one of its pinned crates was yanked since.
    if ! cargo install --quiet --locked wasm-bindgen-cli --version "=$want" >&2 &&
       ! cargo install --quiet wasm-bindgen-cli --version "=$want" >&2; then
        echo "missing: wasm-bindgen-cli $want. Run:  cargo install wasm-bindgen-cli --version =$want" >&2
        exit 1
    fi
fi

target_dir="${CARGO_TARGET_DIR:-$here/target}/web"
echo "build-web: cargo build ($profile) for wasm32-unknown-unknown into $target_dir" >&2
CARGO_TARGET_DIR="$target_dir" cargo build --locked --profile "$profile" \
    --target wasm32-unknown-unknown --no-default-features --features web --bin skinview-web
out_profile=$([ "$profile" = dev ] && echo debug || echo "$profile")
wasm="$target_dir/wasm32-unknown-unknown/$out_profile/skinview-web.wasm"

dist="$here/web/dist"
tmp="$(mktemp -d "$here/web/.dist.XXXXXX")"
chmod 755 "$tmp"    # mktemp's 0700 would keep a web server running as another user out
# Interrupted between the two renames below: the old site is put back.
trap 'rm -rf "$tmp"; [ -d "$dist" ] || { [ -d "$dist.old" ] && mv "$dist.old" "$dist"; }' EXIT
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$tmp" --out-name skinview "$wasm"
# binaryen before version 116 rewrites the reference types rustc and wasm-bindgen use into a
# module browsers refuse (Debian 12's 108: "WebAssembly.Table.set(): Argument 1 is invalid").
opt_version=$(wasm-opt --version 2>/dev/null | awk '{ print $3 }' || true)
if [ "${opt_version:-0}" -ge 116 ] 2>/dev/null && [ "$profile" = web ]; then
    # The features rustc's wasm32 target uses by default (binaryen does not assume them).
    wasm-opt -O2 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$tmp/skinview_bg.wasm" -o "$tmp/skinview_bg.opt.wasm"
    mv "$tmp/skinview_bg.opt.wasm" "$tmp/skinview_bg.wasm"
    opt="wasm-opt -O2"
else
    opt="no wasm-opt"
    if [ "$profile" = web ]; then
        echo "build-web: note: no wasm-opt 116 or later (found: ${opt_version:-none}); the module is not shrunk further" >&2
    fi
fi
cp web/index.html "$tmp/"
# Replace the site whole (a server reading web/dist never sees half of it).
rm -rf "$dist.old"
[ -d "$dist" ] && mv "$dist" "$dist.old"
mv "$tmp" "$dist"
rm -rf "$dist.old"
trap - EXIT
raw=$(wc -c < "$dist/skinview_bg.wasm")
gz=$(gzip -9 -c "$dist/skinview_bg.wasm" | wc -c)
mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }
echo "build-web: web/dist/skinview_bg.wasm: $raw bytes ($(mib "$raw") MiB), gzip -9 $gz bytes ($(mib "$gz") MiB); $opt" >&2
