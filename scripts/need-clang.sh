# Sourced by scripts/setup.sh and scripts/build-web.sh (each defines need_root): the web page
# carries ufbx (C) built for wasm32, with clang and LLVM's archiver (.cargo/config.toml names
# them). `need_clang WHO` installs them when missing, or says exactly what is missing.
need_clang() {
    if command -v clang >/dev/null && command -v llvm-ar >/dev/null; then
        return 0
    fi
    echo "$1: installing clang and llvm (the web page builds ufbx's C file for wasm32)" >&2
    if ! need_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
       ! need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang llvm; then
        echo "missing: clang and llvm-ar for the web page's FBX reader. Run as root:  apt-get install clang llvm" >&2
        exit 1
    fi
}
