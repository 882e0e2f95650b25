#!/usr/bin/env bash
# gpu-debs.sh: run HERE (not on the GPU machine) before a device run: downloads the Debian packages the
# GPU check needs into .deb/ (git-ignored), to be carried to the GPU machine, which has no network and none
# of our -dev packages. gpu-check.sh unpacks them under /tmp/debs there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb
# OpenBLAS (the lattice engine's CBLAS) with its run-time dependencies.
BLAS="libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0"
cd .deb
apt-get download libcmocka0 libcmocka-dev libjansson4 libjansson-dev libxxhash-dev $BLAS 2>/dev/null \
  || { apt-get update -q >/dev/null && apt-get download libcmocka0 libcmocka-dev libjansson4 libjansson-dev libxxhash-dev $BLAS; }
ls -1 "$PWD"
