#!/usr/bin/env bash
# run-arc-solvers.sh: solver calls per second, the port against its Python peer in the same run. Every
# solver of PROGRAMS on every train and test pair of its task in DATA: `tandem arc run --quiet --repeat R`
# on 1 and 2 threads, and bench/arc_peer.py --solvers (the spec's Python model of the primitives under this
# CPython, outputs checked against the tasks), alternated ROUNDS times; each line is one pass's figure.
#
# usage: bench/run-arc-solvers.sh [BUILD_DIR] [PROGRAMS] [DATA] [R] [ROUNDS]
#   defaults: build tests/arc/solvers/training.py ../shared/data/arc/training 100 3
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PROGRAMS=${2:-tests/arc/solvers/training.py}
DATA=${3:-../shared/data/arc/training}
R=${4:-100}
ROUNDS=${5:-3}
[ -x "$BUILD/tandem" ] || { echo "run-arc-solvers: no $BUILD/tandem (build first: make build)" >&2; exit 2; }
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for t in 1 2; do
    out=$("$BUILD/tandem" arc run "$PROGRAMS" --data "$DATA" --quiet --repeat "$R" --threads "$t" 2>&1) \
      || { echo "$out"; exit 1; }
    echo "round $round port, $t thread(s): $(echo "$out" | grep -E "calls per second|made once" | tr "\n" " ")"
  done
  echo "round $round $(python3 bench/arc_peer.py --solvers "$PROGRAMS" --data "$DATA" --repeat 5 | tr '\n' ' ')"
done
