#!/usr/bin/env bash
# run-seq-gpu.sh: the GPU benchmark of the sequence engine, start to finish, as the GPU machine runs it:
# unpacks the carried Debian packages (.deb/, from scripts/gpu-debs.sh) under /tmp/debs, builds build-gpu/
# (Release, CUDA module for sm_90), runs the cross-backend check first, then bench_seq_gpu (the dual-tier
# engine on cuda and on the CPU's cores, bench/README.md). A run whose cross check fails stops there: its
# figures must not be recorded. Everything printed is kept in $OUT (the device tool's folder that comes
# back), or bench/data/seq-gpu-<UTC stamp>/ when OUT is unset: machine.txt, cmake.log, cross.txt,
# bench_seq_gpu.txt, tandem-gpu.json, run.log.
#
# Environment:
#   TANDEM_BENCH_QUICK=1        smoke run: 1K and 10K patterns, 8 cross cases; runs without a GPU too (the
#                               cuda rows then say "unavailable" and the run still passes)
#   TANDEM_BENCH_REQUIRE_GPU=0|1  fail when the cuda backend cannot run (default 1, 0 in quick runs)
#   TANDEM_BENCH_SEED=S         data seed (42)
#   TANDEM_BENCH_SIZES          bench_seq_gpu --sizes (1000,10000,100000,1000000,10000000)
#   TANDEM_BENCH_ARGS           extra bench_seq_gpu options (e.g. "--budget 4 --queries 400")
#   TANDEM_TEST_CASES           test_seq_cross --cases (96; quick 8)
#   TANDEM_BENCH_BUILD          build directory (build-gpu)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quick="${TANDEM_BENCH_QUICK:-0}"
seed="${TANDEM_BENCH_SEED:-42}"
build="${TANDEM_BENCH_BUILD:-build-gpu}"
if [ "$quick" = 1 ]; then
    require="${TANDEM_BENCH_REQUIRE_GPU:-0}"
    sizes="${TANDEM_BENCH_SIZES:-1000,10000}"
    cases="${TANDEM_TEST_CASES:-8}"
    bench_args=(--quick)
else
    require="${TANDEM_BENCH_REQUIRE_GPU:-1}"
    sizes="${TANDEM_BENCH_SIZES:-1000,10000,100000,1000000,10000000}"
    cases="${TANDEM_TEST_CASES:-96}"
    bench_args=()
fi
[ "$require" = 1 ] && bench_args+=(--require-gpu)
extra_args="${TANDEM_BENCH_ARGS:-}"
# The library warns about TANDEM_* names it does not know: the script's own knobs stop here.
unset TANDEM_BENCH_SEED TANDEM_BENCH_SIZES TANDEM_BENCH_ARGS TANDEM_BENCH_BUILD TANDEM_BENCH_REQUIRE_GPU
out="${OUT:-bench/data/seq-gpu-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1

step() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
t_start=$(date +%s)

step "machine"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm); cores online: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
    echo "command: TANDEM_BENCH_QUICK=$quick TANDEM_BENCH_SEED=$seed TANDEM_BENCH_SIZES=$sizes TANDEM_TEST_CASES=$cases bench/run-seq-gpu.sh"
    nvidia-smi 2>&1 || echo "nvidia-smi: not available"
    nvcc --version 2>&1 | tail -2 || echo "nvcc: not available"
} | tee "$out/machine.txt"

# The GPU machine has none of our -dev packages and no network: they come unpacked from .deb/, never into /.
cmake_deps=()
if compgen -G ".deb/*.deb" >/dev/null; then
    debs=/tmp/debs
    mkdir -p "$debs"
    for f in .deb/*.deb; do dpkg -x "$f" "$debs"; done
    export LD_LIBRARY_PATH="$debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cmake_deps=(-DCMAKE_PREFIX_PATH="$debs/usr" -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON)
fi

step "build (Release, CUDA module for sm_90) in $build"
cuda=AUTO
[ "$require" = 1 ] && cuda=ON
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA="$cuda" -DCMAKE_CUDA_ARCHITECTURES=90 -DTANDEM_TESTS=ON \
    -DTANDEM_BENCH=ON "${cmake_deps[@]}" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
targets=(bench_seq_gpu test_seq_cross)
# (grep without -q: it reads the whole list, so cmake gets no SIGPIPE that pipefail would report)
if cmake --build "$build" --target help 2>/dev/null | grep tandem_cuda >/dev/null; then targets+=(tandem_cuda); fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >>"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
echo "built ${targets[*]}"

step "cross-backend check: test_seq_cross --cases $cases"
cross_rc=0
TANDEM_TEST_REQUIRE_GPU="$require" "$build/tests/cross/test_seq_cross" --cases "$cases" | tee "$out/cross.txt" || cross_rc=$?
if [ "$cross_rc" != 0 ]; then
    echo "run-seq-gpu.sh: the cross-backend check failed: no benchmark from this build (see $out/cross.txt)"
    exit 1
fi

step "bench_seq_gpu"
bench_rc=0
# shellcheck disable=SC2086
"$build/bench/bench_seq_gpu" --sizes "$sizes" --seed "$seed" --json "$out/tandem-gpu.json" "${bench_args[@]}" \
    $extra_args | tee "$out/bench_seq_gpu.txt" || bench_rc=$?

t_end=$(date +%s)
echo
echo "results in $out (run.log, machine.txt, cross.txt, bench_seq_gpu.txt, tandem-gpu.json); $((t_end - t_start)) s in all"
if [ "$bench_rc" != 0 ]; then
    echo "run-seq-gpu.sh: bench_seq_gpu failed (a mismatch, a wrong backend, or no GPU): these figures must not be recorded"
    exit 1
fi
