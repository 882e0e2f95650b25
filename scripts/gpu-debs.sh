#!/usr/bin/env bash
# gpu-debs.sh: run HERE (not on the GPU machine) before a device run: downloads the Debian packages the
# GPU check needs into .deb/ (git-ignored), to be carried to the GPU machine, which has no network and none
# of our -dev packages. gpu-check.sh unpacks them under /tmp/debs there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb
# OpenBLAS (the lattice engine's CBLAS) with its run-time dependencies.
BLAS="libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0"
# OpenSSL's libcrypto (KATO pattern names). The service (LMDB, libmicrohttpd) is not built there
# (gpu-check.sh passes -DTANDEM_SERVER=OFF): it has no GPU part, and CI runs its tests.
SSL="libssl-dev libssl3"
cd .deb
apt-get download libcmocka0 libcmocka-dev libjansson4 libjansson-dev libxxhash-dev $BLAS $SSL 2>/dev/null \
  || { apt-get update -q >/dev/null && apt-get download libcmocka0 libcmocka-dev libjansson4 libjansson-dev libxxhash-dev $BLAS $SSL; }
ls -1 "$PWD"
