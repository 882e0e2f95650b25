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
# igraph, bench_lattice's peer, with the libraries it loads (BLAS/LAPACK come from OpenBLAS above).
IGRAPH="libigraph-dev libigraph3 libarpack2 libglpk40 libplfit0 libamd2 libcolamd2 libsuitesparseconfig5 libltdl7
  libxml2 libicu72"
PKGS="libcmocka0 libcmocka-dev libjansson4 libjansson-dev libxxhash-dev $BLAS $SSL $IGRAPH"
cd .deb
apt-get download $PKGS 2>/dev/null || { apt-get update -q >/dev/null && apt-get download $PKGS; }
ls -1 "$PWD"
