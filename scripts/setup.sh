#!/usr/bin/env bash
# Make a fresh Debian/Ubuntu machine ready to build and run skinview headless:
# Rust toolchain (checked), a Vulkan driver (Mesa lavapipe, installed when missing).
# Prints exactly what is missing when it cannot install it itself.
set -euo pipefail

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
if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
    echo "setup: no Vulkan driver found; installing Mesa's software driver (mesa-vulkan-drivers, lavapipe)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers; then
        echo "missing: a Vulkan driver. Run as root:  apt-get install mesa-vulkan-drivers" >&2
        exit 1
    fi
fi

# lavapipe complains without a private runtime directory.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
    echo "setup: note: XDG_RUNTIME_DIR is unset; skinview's tests create a private one" >&2
fi
echo "setup: ok ($(cargo --version))" >&2
