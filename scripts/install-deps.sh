#!/usr/bin/env bash
# install-deps.sh: installs the Debian packages tandem's build and tests need, and nothing when they are
# all present (quiet then). Needs root (or sudo) only when something is missing. CUDA is optional: nvcc is
# used when found, never installed here.
set -euo pipefail

packages=(
  build-essential  # gcc, make
  cmake
  pkg-config
  python3          # oracle tests (standard library only)
  libcmocka-dev    # unit tests
  libjansson-dev   # JSON for the command line and the service
  libxxhash-dev    # hash tables and store checksums
  libssl-dev       # libcrypto: SHA-1 of KATO pattern names
  liblmdb-dev      # the service's durable store
  libmicrohttpd-dev # the HTTP service
  libopenblas-dev  # CBLAS for the lattice engine's matrix operations
  libigraph-dev    # bench_lattice's peer (igraph 0.10); optional to the build: bench/CMakeLists.txt
)
# Optional, not installed here (large): `chromium` lets tests/prof/test_prof_render.py render the profiler's
# HTML report headless; without it that test is reported as skipped.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh them when an install fails for want of them.
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/tandem-apt.log 2>&1; then
  $SUDO apt-get update -q >/tmp/tandem-apt-update.log 2>&1 || { cat /tmp/tandem-apt-update.log >&2; exit 1; }
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/tandem-apt.log 2>&1 \
    || { cat /tmp/tandem-apt.log >&2; exit 1; }
fi
