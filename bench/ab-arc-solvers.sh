#!/usr/bin/env bash
# ab-arc-solvers.sh: an A/B of tandem binaries on the ARC solver calls, for machines whose speed drifts
# (the shared 2-vCPU VM switches between two speeds within seconds, CPython's peer too). The binaries run
# `tandem arc run PROGRAMS --data DATA --quiet --repeat R --threads T` one after the other, PASSES times
# over, so each sees the same drift; prints per binary the best and the median pass (calls per second and
# µs per call), and every pass. With --icount, also the instructions per solver call under cachegrind
# (--repeat 40 minus --repeat 20, over 20 x the calls of one pass): a figure that does not drift.
#
# usage: bench/ab-arc-solvers.sh [--icount] T PASSES R BINARY...
#   PROGRAMS and DATA: $PROGRAMS (tests/arc/solvers/training.py), $DATA (../shared/data/arc/training)
set -euo pipefail
cd "$(dirname "$0")/.."
icount=0
if [ "${1:-}" = --icount ]; then icount=1; shift; fi
[ $# -ge 4 ] || { sed -n '9p' "$0" >&2; exit 2; }
T=$1 PASSES=$2 R=$3
shift 3
PROGRAMS=${PROGRAMS:-tests/arc/solvers/training.py}
DATA=${DATA:-../shared/data/arc/training}
run() { "$1" arc run "$PROGRAMS" --data "$DATA" --quiet --repeat "$2" --threads "$3" 2>&1 | grep "calls per second"; }
echo "# $(date -u +%FT%TZ) $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); T=$T passes=$PASSES R=$R"
declare -A all
for _ in $(seq "$PASSES"); do
  for b in "$@"; do
    all[$b]="${all[$b]:-} $(run "$b" "$R" "$T" | grep -o '[0-9]* calls per second' | cut -d' ' -f1)"
  done
done
for b in "$@"; do
  echo "$b: $(tr ' ' '\n' <<<"${all[$b]}" | grep . | sort -rn | awk '{a[NR] = $1} END {
    printf "best %d calls/s (%.3f us), median %d (%.3f us), %d passes", a[1], 1e6 / a[1], a[int((NR + 1) / 2)],
           1e6 / a[int((NR + 1) / 2)], NR}')"
  echo "  passes:${all[$b]}"
done
if [ "$icount" = 1 ]; then
  calls=$(( $(run "$1" 2 1 | grep -o '^[0-9]* solver calls' | cut -d' ' -f1) / 2 )) # of one pass
  for b in "$@"; do
    n=()
    for r in 20 40; do
      n+=("$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$b" arc run "$PROGRAMS" \
             --data "$DATA" --quiet --repeat $r --threads 1 2>&1 | grep -E 'I +refs' | grep -o '[0-9,]*$' | tr -d ,)")
    done
    echo "$b: $(( (n[1] - n[0]) / 20 / calls )) instructions per solver call"
  done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
