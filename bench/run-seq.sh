#!/usr/bin/env bash
# run-seq.sh: the sequence-engine benchmark from a fresh clone, start to finish: a Python virtual
# environment with the peers (bench/.venv), a Release build, the shared data set (bench/data), bench_seq
# (tandem through its library API), then peers.py (CPython difflib and RapidFuzz on the same data), one
# after the other, never side by side (this machine has two cores, and every side uses both), then the
# comparison with the issue's targets, and last the threshold-0.1 targets again in interleaved rounds
# (`peers.py rounds`: tandem and the peers taking turns in the same minutes, verdicts on the median round,
# because this VM's speed drifts by 1.5-2x over the minutes between bench_seq and peers.py). Everything it
# prints is also kept in bench/data/seq-<stamp>/, which is what bench/RESULTS.md quotes (bench/README.md
# says how to read it).
#
# Environment:
#   TANDEM_BENCH_QUICK=1   smoke run: 2K and 20K patterns, 40 STMs, short budgets (well under a minute
#                          once built); its ratios are not the targets' (those are at 1M patterns)
#   TANDEM_BENCH_SEED=S    data seed (42)
#   TANDEM_BENCH_SIZES     bench_seq --sizes (10000,100000,1000000); the peers run at the largest
#   TANDEM_BENCH_ARGS      extra bench_seq options (e.g. "--budget 8")
#   TANDEM_BENCH_PEER_ARGS extra `peers.py run` options (e.g. "--kato-queries 4")
#   TANDEM_BENCH_ROUNDS=R  interleaved rounds of the thr 0.1 targets (5; 2 with TANDEM_BENCH_QUICK=1; 0 skips
#                          the step); about 20-30 s a round at 1M patterns, after 10-15 s of setup
#   TANDEM_BENCH_BUILD     build directory (build-bench)
#   PYTHON                 interpreter for the virtual environment (python3)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quick="${TANDEM_BENCH_QUICK:-0}"
seed="${TANDEM_BENCH_SEED:-42}"
build="${TANDEM_BENCH_BUILD:-build-bench}"
py="${PYTHON:-python3}"
venv="bench/.venv"
# The version KATO v3.10.1 pins (spec/kato.md); numpy for the peers' vectorized selection.
rapidfuzz_req="${TANDEM_BENCH_RAPIDFUZZ:-rapidfuzz==3.14.1}"

if [ "$quick" = 1 ]; then
    sizes="${TANDEM_BENCH_SIZES:-2000,20000}"
    bench_args=(--quick)
    peer_args=(--quick)
    rounds="${TANDEM_BENCH_ROUNDS:-2}"
else
    sizes="${TANDEM_BENCH_SIZES:-10000,100000,1000000}"
    bench_args=()
    peer_args=()
    rounds="${TANDEM_BENCH_ROUNDS:-5}"
fi
case "$rounds" in
    '' | *[!0-9]*) echo "run-seq.sh: TANDEM_BENCH_ROUNDS must be a whole number (0 skips the rounds), not '$rounds'" >&2; exit 2 ;;
esac
largest="${sizes##*,}"
smallest="${sizes%%,*}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="bench/data/seq-$stamp"
mkdir -p "$out"
log="$out/run.log"
exec > >(tee "$log") 2>&1

step() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
t_start=$(date +%s)

step "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "host: $(uname -srm); cores online: $(nproc)"
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0 for figures worth recording)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "command: TANDEM_BENCH_QUICK=$quick TANDEM_BENCH_SEED=$seed TANDEM_BENCH_SIZES=$sizes TANDEM_BENCH_ROUNDS=$rounds bench/run-seq.sh"

step "python peers: $venv"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$rapidfuzz_req" numpy
"$venv/bin/python" -c 'import sys, rapidfuzz, numpy; print("python", sys.version.split()[0], "rapidfuzz", rapidfuzz.__version__, "numpy", numpy.__version__)'

step "build (Release, -DTANDEM_NATIVE=OFF) in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTANDEM_NATIVE=OFF -DTANDEM_TESTS=OFF -DTANDEM_BENCH=ON >"$out/cmake.log"
cmake --build "$build" -j2 >>"$out/cmake.log"
tandem="$build/tandem"
bench="$build/bench/bench_seq"
bench_rounds="$build/bench/bench_seq_rounds"
echo "built $tandem, $bench and $bench_rounds"

step "data: $largest patterns, seed $seed"
# Written afresh each run (seconds), so it always comes from the generator that was just built.
data="bench/data/patterns-s$seed-n$largest.jsonl"
"$tandem" seq gen --patterns "$largest" --seed "$seed" --out "$data.tmp" --quiet
mv "$data.tmp" "$data"
echo "$data: $(wc -l <"$data") patterns, $(du -h "$data" | cut -f1)"
# End to end through the command line, for reference: JSON parsing, interning, indexes, save.
t0=$(date +%s.%N)
"$tandem" seq build --input "$data" --out "$out/store.tds" --json --quiet | tee "$out/seq-build.json"
echo "tandem seq build: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s wall (JSON parsing and saving included)"
rm -f "$out/store.tds"

step "bench_seq"
# shellcheck disable=SC2086
"$bench" --sizes "$sizes" --seed "$seed" --json "$out/tandem.json" --dump-dir "$out/dump" "${bench_args[@]}" \
    ${TANDEM_BENCH_ARGS:-} | tee "$out/bench_seq.txt"

step "peers (CPython difflib, RapidFuzz) on the $largest-pattern data"
peers_rc=0
# shellcheck disable=SC2086
"$venv/bin/python" bench/peers.py run --data "$data" --patterns "$largest" --dump "$out/dump" --json "$out/peers.json" \
    "${peer_args[@]}" ${TANDEM_BENCH_PEER_ARGS:-} || peers_rc=$?

step "comparison"
cmp_rc=0
"$venv/bin/python" bench/peers.py compare --tandem "$out/tandem.json" --peers "$out/peers.json" | tee "$out/compare.txt" || cmp_rc=$?

rounds_rc=0
rounds_files=""
if [ "$rounds" != 0 ]; then
    step "interleaved rounds: the thr 0.1 targets, tandem and the peers in the same minutes ($rounds rounds)"
    # bench_seq_rounds draws the same STMs (near ones from the smallest size, as bench_seq) and pair sample;
    # peers.py checks them against the dump, and every RapidFuzz answer against tandem's.
    "$venv/bin/python" bench/peers.py rounds --bin "$bench_rounds" --data "$data" --patterns "$largest" \
        --dump "$out/dump" --rounds "$rounds" --pool "$smallest" --seed "$seed" --json "$out/rounds.json" \
        "${peer_args[@]}" | tee "$out/rounds.txt" || rounds_rc=$?
    rounds_files=", rounds.json, rounds.txt"
fi
rm -rf "$out/dump"

t_end=$(date +%s)
echo
echo "results in $out (run.log, bench_seq.txt, tandem.json, peers.json, compare.txt$rounds_files); $((t_end - t_start)) s in all"
if [ "$peers_rc" != 0 ] || [ "$cmp_rc" != 0 ] || [ "$rounds_rc" != 0 ]; then
    echo "run-seq.sh: the peers and tandem disagree somewhere (see above): these figures must not be recorded"
    exit 1
fi
