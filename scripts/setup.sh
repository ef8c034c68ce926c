#!/usr/bin/env bash
# Make a fresh Debian/Ubuntu machine ready to build and run skinview headless:
# Rust toolchain (checked), a Vulkan driver (Mesa lavapipe, installed when missing).
# With --tests also what the tests need: Node.js + three.js for the independent-engine tests,
# Blender for the FBX test data (scripts/make-fbx-test-data.sh),
# and the test data (../shared or $SKINVIEW_SHARED when present, otherwise the sample models
# downloaded and the reference outputs made into tests/data by scripts/fetch-test-data.sh).
# Prints exactly what is missing when it cannot install it itself.
set -euo pipefail
tests=0
for a in "$@"; do
    case "$a" in
        --tests) tests=1 ;;
        *) echo "usage: scripts/setup.sh [--tests]" >&2; exit 2 ;;
    esac
done

need_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
    else return 1
    fi
}

if ! command -v cargo >/dev/null; then
    echo "missing: Rust toolchain (cargo). Install it with:" >&2
    echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y && . \"\$HOME/.cargo/env\"" >&2
    exit 1
fi

# Any Vulkan ICD (lavapipe or a real driver) will do.
have_icd() {
    local f
    for f in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; do
        [ -e "$f" ] && return 0
    done
    return 1
}
if ! have_icd; then
    echo "setup: no Vulkan driver found; installing Mesa's software driver (mesa-vulkan-drivers, lavapipe)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers; then
        echo "missing: a Vulkan driver. Run as root:  apt-get install mesa-vulkan-drivers" >&2
        exit 1
    fi
fi

# The viewer's window (winit on X11 loads these at run time).
missing_libs=""
for lib in libxkbcommon-x11.so.0:libxkbcommon-x11-0 libXcursor.so.1:libxcursor1 \
           libXrandr.so.2:libxrandr2 libXi.so.6:libxi6 libX11-xcb.so.1:libx11-xcb1; do
    ldconfig -p 2>/dev/null | grep -q "${lib%%:*}" || missing_libs="$missing_libs ${lib##*:}"
done
if [ -n "$missing_libs" ]; then
    echo "setup: installing the window's X11 libraries:$missing_libs" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing_libs; then
        echo "missing: X11 libraries for the viewer window. Run as root:  apt-get install$missing_libs" >&2
        echo "  (headless commands such as render and compare work without them)" >&2
    fi
fi

here="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$tests" = 0 ]; then
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "setup: note: no display here; run the viewer under Xvfb (scripts/setup.sh --tests installs it):" >&2
        echo "  xvfb-run -a cargo run -- view --frames 600 --screenshot view.png" >&2
    fi
    echo "setup: ok ($(cargo --version))" >&2
    exit 0
fi

# The GL backend tests (WGPU_BACKEND=gl: the uniform palette path as GL ES / WebGL2 devices run
# it) need EGL and Mesa's llvmpipe GL driver.
if ! ldconfig -p 2>/dev/null | grep -q "libEGL_mesa.so.0" ||
   ! ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1; then
    echo "setup: installing EGL and Mesa's software GL driver for the GL tests (libegl1, libegl-mesa0, libgl1-mesa-dri)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libegl1 libegl-mesa0 libgl1-mesa-dri; then
        echo "missing: EGL / Mesa GL for the GL tests. Run as root:  apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri" >&2
        exit 1
    fi
fi

# The window tests run the viewer under a virtual X server.
if ! command -v xvfb-run >/dev/null; then
    echo "setup: installing Xvfb for the window tests (xvfb, xauth)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb xauth; then
        echo "missing: Xvfb for the window tests. Run as root:  apt-get install xvfb xauth" >&2
        exit 1
    fi
fi

# The independent engine used by the tests (three.js under Node, tools/oracle).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "setup: installing Node.js for the independent-engine tests (nodejs, npm)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; then
        echo "missing: Node.js. Run as root:  apt-get install nodejs npm" >&2
        exit 1
    fi
fi
# npm_ci FOLDER PACKAGE WHAT: the locked npm packages of FOLDER, unless PACKAGE is there.
npm_ci() {
    [ -f "$here/$1/node_modules/$2/package.json" ] && return 0
    echo "setup: installing $2 for $1 (npm ci)" >&2
    if ! npm ci --prefix "$here/$1" --no-audit --no-fund --loglevel=error >&2; then
        echo "missing: $2 for $3 (npm ci in $1 failed: it needs the npm registry)." >&2
        echo "  Allow network access and run scripts/setup.sh --tests again." >&2
        exit 1
    fi
}
npm_ci tools/oracle three "the independent-engine tests"
npm_ci tools/gltfpack gltfpack "the compressed-glTF and diff tests"
npm_ci tools/gltf-validator gltf-validator "the tests that validate every file skinview writes"

# The library's web build (.ci/run checks `--no-default-features --lib` for
# wasm32-unknown-unknown): the target's standard library, from rustup.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    echo "setup: installing the wasm32-unknown-unknown target for the library's web build" >&2
    if ! command -v rustup >/dev/null || ! rustup target add wasm32-unknown-unknown >&2; then
        echo "missing: the wasm32 target. Run:  rustup target add wasm32-unknown-unknown" >&2
        exit 1
    fi
fi

# The web page's FBX reader needs clang and llvm-ar (scripts/need-clang.sh).
. "$here/scripts/need-clang.sh"
need_clang setup

# The web page's tests (tests/web): Debian's Chromium, driven by playwright-core from npm (no
# browser download), under Xvfb. scripts/build-web.sh installs wasm-bindgen-cli itself.
if [ ! -x /usr/bin/chromium ]; then
    echo "setup: installing Chromium for the web page's tests (chromium)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; then
        echo "missing: Chromium for the web tests. Run as root:  apt-get install chromium" >&2
        exit 1
    fi
fi
npm_ci tests/web playwright-core "the web page's tests"

# Test data: $SKINVIEW_SHARED or ../shared when present, else tests/data made here.
if [ -n "${SKINVIEW_SHARED:-}" ]; then
    if [ ! -d "$SKINVIEW_SHARED/models" ]; then
        echo "missing: test data. SKINVIEW_SHARED=$SKINVIEW_SHARED has no models/ folder" >&2
        exit 1
    fi
elif [ -d "$here/../shared/models" ]; then
    :
elif [ ! -f "$here/tests/data/.complete" ]; then
    echo "setup: no ../shared test data beside this checkout; making tests/data" >&2
    "$here/scripts/fetch-test-data.sh"
fi

# The FBX tests' data: the shared models converted by Debian's Blender (headless), made here.
# Blender's glTF importer needs numpy, which --no-install-recommends leaves out.
# (Debian's numpy package is what Blender's Python sees, whatever python3 is first on PATH.)
have_numpy() { dpkg-query -W -f='${Status}' python3-numpy 2>/dev/null | grep -q "ok installed"; }
if ! command -v blender >/dev/null || ! have_numpy; then
    echo "setup: installing Blender for the FBX test data (blender, python3-numpy)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends blender python3-numpy; then
        echo "missing: Blender for the FBX tests. Run as root:  apt-get install blender python3-numpy" >&2
        exit 1
    fi
fi
"$here/scripts/make-fbx-test-data.sh"

# lavapipe complains without a private runtime directory.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
    echo "setup: note: XDG_RUNTIME_DIR is unset; lavapipe warns without one (.ci/run sets a private one)" >&2
fi
echo "setup: ok ($(cargo --version))" >&2
