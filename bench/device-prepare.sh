#!/usr/bin/env bash
# Makes the folder that travels to a real-GPU machine for bench/device.sh (issue 43):
#   DIR/varidem   the release binary, stripped (about 11 MB; 88 MB with debug info);
#   DIR/cache/    the settled poured beds the benchmarks start from (10⁴ spheres, and
#                 500 for quick mode), as `varidem bench --workload poured-bed` caches
#                 them; larger beds are tiled from the 10⁴ one there (`--tile-from`);
#   DIR/gl/       the Vulkan loader's Debian packages (amd64), for a machine without
#                 one (bench/device.sh unpacks them only then).
# It checks that DIR with the tracked tree fits in the 64 MiB that travel.
#
# Usage: bench/device-prepare.sh DIR   (DIR inside the checkout and git-ignored, e.g.
# .device-bundle; then on the device: bench/device.sh OUT_DIR with DIR carried).
# VARIDEM_DEVICE_QUICK=1 prepares only what quick mode uses (the 500-sphere bed).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${1:?usage: bench/device-prepare.sh DIR}"
mkdir -p "$DIR/cache" "$DIR/gl"
LIMIT=$((64 * 1024 * 1024))

if ! git check-ignore -q "$DIR"; then
    echo "device-prepare: $DIR is not git-ignored: it would travel as part of the tree too (add it to .gitignore)" >&2
    exit 1
fi

echo "device-prepare: building the release binary"
cargo build --release --quiet --bin varidem
bin="${CARGO_TARGET_DIR:-target}/release/varidem"
cp "$bin" "$DIR/varidem"
strip "$DIR/varidem"

# The settled beds: from the local cache when they are there (the pour is
# deterministic: the cache key names every parameter), else poured now on the CPU
# (10⁴ spheres: about a minute on 2 cores).
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
local_cache="${VARIDEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/varidem}"
# Quick mode (VARIDEM_DEVICE_QUICK=1, as bench/device.sh) needs only the small bed.
beds=(500 10000)
[ "${VARIDEM_DEVICE_QUICK:-0}" = "1" ] && beds=(500)
for n in "${beds[@]}"; do
    name="poured-bed-n$n-seed27-ke1e-6-v1.ckpt"
    if [ -f "$DIR/cache/$name" ]; then
        continue
    fi
    if [ -f "$local_cache/$name" ]; then
        cp "$local_cache/$name" "$DIR/cache/"
    else
        echo "device-prepare: pouring the bed of $n spheres"
        RUST_LOG=warn VARIDEM_CACHE_DIR="$DIR/cache" "$DIR/varidem" bench --workload poured-bed --n "$n" \
            --steps 1 --warmup 0 --profile-steps 0 --backend cpu >/dev/null
    fi
done
ls "$DIR"/cache/*.ckpt >/dev/null || { echo "device-prepare: no settled beds in $DIR/cache" >&2; exit 1; }

# The Vulkan loader (and EGL/GL for rendering), amd64 packages of this machine's
# Debian, as the device tool's notes advise.
if ! ls "$DIR"/gl/libvulkan1_*.deb >/dev/null 2>&1; then
    if command -v apt-get >/dev/null; then
        lists="$(mktemp -d)"
        mkdir -p "$lists/partial"
        o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
        if apt-get "${o[@]}" update -qq >/dev/null 2>&1 &&
            (cd "$DIR/gl" && apt-get "${o[@]}" download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1); then
            echo "device-prepare: Vulkan loader packages: $(ls "$DIR/gl" | tr '\n' ' ')"
        else
            echo "device-prepare: warning: could not download the Vulkan loader packages; the device must have its own" >&2
        fi
        rm -rf "$lists"
    fi
fi

tree=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
bundle=$(du -sb "$DIR" | cut -f1)
total=$((tree + bundle))
awk -v t="$tree" -v b="$bundle" -v d="$DIR" 'BEGIN {
    printf "device-prepare: tree %.1f MiB + %s %.1f MiB = %.1f MiB of 64 MiB\n", t / 1048576, d, b / 1048576, (t + b) / 1048576 }'
if [ "$total" -gt "$LIMIT" ]; then
    echo "device-prepare: too large to travel" >&2
    exit 1
fi
echo "device-prepare: ready; on the device: bench/device.sh OUT_DIR (carry $DIR)"
