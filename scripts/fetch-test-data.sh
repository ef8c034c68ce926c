#!/usr/bin/env bash
# Test data for a clone without ../shared: downloads the Khronos glTF sample models the tests
# use (pinned snapshot, SHA-256 checked) into tests/data/models, then makes the rest with the
# project's own tools: generated rigs (tests/common/rigs.rs) and the independent engine's
# reference outputs (three.js, tools/oracle) — see examples/make_test_data.rs.
#
# Source: a snapshot of KhronosGroup/glTF-Sample-Assets (github.com/DRx3D/glTF-Sample-Assets-OLD
# at commit 02d48689ce60c8799207f180ae324997e974c956, 2023-05-23), the files ../shared holds,
# byte for byte. SKINVIEW_SAMPLES_URL replaces the base URL (a mirror, or file:///path).
# Licences: CC0-1.0 or CC-BY-4.0 per model (docs/testing.md, "Test data").
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
data="$here/tests/data"
base="${SKINVIEW_SAMPLES_URL:-https://raw.githubusercontent.com/DRx3D/glTF-Sample-Assets-OLD/02d48689ce60c8799207f180ae324997e974c956/Models}"

# name  variant  file  sha256
models="\
AnimatedMorphCube glTF-Binary AnimatedMorphCube.glb 214ee56160a50dbf22543a1d66dbf860986e87f0efac3d89feac1359d0e6aeab
AnimatedMorphSphere glTF-Binary AnimatedMorphSphere.glb eda89538fdada0ff1edd813428c8728d351d6b136ebfcbc664abb9cf3431c213
CesiumMan glTF-Binary CesiumMan.glb 659349b0a374b73d5362a61070039bc8601401bbdeacbece4f3680fb4bfd41b0
Fox glTF-Binary Fox.glb d97044e701822bac5a62696459b27d7b375aada5de8574ed4362edbba94771f7
MorphPrimitivesTest glTF-Binary MorphPrimitivesTest.glb 2a5ed6470aca41edc813ef5b7eecf2af53264d8e0ab9e6f32156d54245ca18cf
MorphStressTest glTF-Binary MorphStressTest.glb 005f1d9dd938c553a506d6bf3d21830fc3f2ec3a199d9332e9a625baf7342bef
RecursiveSkeletons glTF-Binary RecursiveSkeletons.glb 15fb11ee4d3b31735efe7dc776a31e8fa67568ea148a3315442970303675b641
RiggedFigure glTF-Binary RiggedFigure.glb d6be85417d3e256861ee733eea6916093a7af7c79c16366181fd8abcaeb38cf5
RiggedSimple glTF-Binary RiggedSimple.glb 3a79dabb67bb0cd598a18d08b954d9d357c27c30672f82ef5d3f4e7fe6ca3401
SimpleMorph glTF-Embedded SimpleMorph.gltf 0ff029b843d95d3f162a67c84e2d04c7fc76218e53a0cc8c85ca2323d5f82758
SimpleSkin glTF-Embedded SimpleSkin.gltf 7d0c3f48d0510d101269cb4fdd3ee035eaada0e04809a0899e0b4cfe8c38e68f"

if ! command -v curl >/dev/null; then
    echo "missing: curl, to download the test models. Run as root:  apt-get install curl" >&2
    echo "         (or put the shared test data in ../shared, or set SKINVIEW_SHARED=/path)" >&2
    exit 1
fi
mkdir -p "$data/models"
while read -r name variant file sum; do
    dest="$data/models/$name/$file"
    if [ -f "$dest" ] && echo "$sum  $dest" | sha256sum --check --status; then
        continue
    fi
    mkdir -p "$data/models/$name"
    url="$base/$name/$variant/$file"
    echo "fetch-test-data: $url" >&2
    if ! curl -fsSL --retry 2 --max-time 120 --max-filesize 20000000 -o "$dest.part" "$url"; then
        rm -f "$dest.part"
        echo "missing: test data. Could not download $url" >&2
        echo "  Either allow network access (raw.githubusercontent.com), put the shared test data" >&2
        echo "  in ../shared beside this checkout, or set SKINVIEW_SHARED=/path/to/shared." >&2
        exit 1
    fi
    if ! echo "$sum  $dest.part" | sha256sum --check --status; then
        rm -f "$dest.part"
        echo "error: $url does not have the pinned SHA-256 $sum; not using it" >&2
        exit 1
    fi
    mv "$dest.part" "$dest"
done <<< "$models"
echo "fetch-test-data: generating rigs and reference outputs (examples/make_test_data.rs)" >&2
cargo run --locked --quiet --example make_test_data -- "$data"
touch "$data/.complete"
echo "fetch-test-data: test data ready in $data" >&2
