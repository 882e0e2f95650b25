#!/usr/bin/env bash
# gpu-check.sh: the one script run on the GPU machine (device tool): builds for sm_90 with the CUDA
# module, runs every test (the GPU ones included) and the GPU checks and benchmarks, and writes logs under
# $OUT. Carry .deb/ (see scripts/gpu-debs.sh): the packages are unpacked under /tmp/debs, never into /.
# Usage there: bash scripts/gpu-check.sh            (OUT defaults to /tmp/tandem-gpu-out)
#              GPU_CHECK_BENCH=0 bash scripts/gpu-check.sh   (tests and sanitizers only)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tandem-gpu-out}
mkdir -p "$OUT"
status=0
step() { # name, command...: runs, logs to $OUT/<name>.log, remembers failure
  local name=$1; shift
  echo "== $name"
  if "$@" >"$OUT/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (see $name.log)"; tail -20 "$OUT/$name.log"; status=1; fi
}

DEBS=/tmp/debs
mkdir -p "$DEBS"
for f in .deb/*.deb; do [ -e "$f" ] && dpkg -x "$f" "$DEBS"; done
export LD_LIBRARY_PATH="$DEBS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{ nvidia-smi; nvcc --version; cmake --version | head -1; python3 --version; nproc; } >"$OUT/machine.txt" 2>&1
# No pkg-config lookups there: its .pc files would point at /usr; plain searches under the prefix work.
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$DEBS/usr" -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON
step build cmake --build build-gpu -j "$(nproc)"
# The CUDA backend must be found: strict mode turns a silent CPU fallback into a failure.
step info env TANDEM_DEVICE=cuda TANDEM_STRICT=1 TANDEM_LOG_LEVEL=info build-gpu/tandem info
cat "$OUT/info.log"
# Every test; the GPU ones must not skip here.
export TANDEM_TEST_REQUIRE_GPU=1
step tests ctest --test-dir build-gpu --output-on-failure -j 8
grep -E "tests passed|tests failed|Skipped|Not Run" "$OUT/tests.log"
if command -v compute-sanitizer >/dev/null; then
  # test_cuda_backend provokes an out-of-memory on purpose; API errors are checked by the test itself.
  step memcheck compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 build-gpu/tests/test_cuda_backend
  step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_cuda_backend
  # The sequence kernels under the sanitizers, on fewer cases (they run slowly there); the engine's tier
  # logic is checked with ThreadSanitizer off the GPU (its unit tests use a host test double).
  step memcheck-seq env TANDEM_TEST_CASES=6 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_cuda_seq
  step racecheck-seq env TANDEM_TEST_CASES=6 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_cuda_seq
  step memcheck-cross compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/cross/test_seq_cross --cases 3
  # The profiler's device spans (event pool, anchor, pool attributes).
  step memcheck-prof compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_prof_cuda
fi
# More random cases than CI's machine can run.
step cuda-seq-many env TANDEM_TEST_CASES=300 build-gpu/tests/test_cuda_seq
step cross-many build-gpu/tests/cross/test_seq_cross --cases 96
# Figures only from a build whose every check passed.
if [ "$status" != 0 ]; then
  echo "== bench-gpu skipped: a check failed"
elif [ "${GPU_CHECK_BENCH:-1}" = 1 ] && [ -x build-gpu/bench/bench_seq_gpu ]; then
  step bench-gpu build-gpu/bench/bench_seq_gpu --require-gpu --threads "$(nproc)" --json "$OUT/bench_seq_gpu.json"
  tail -60 "$OUT/bench-gpu.log"
fi
# The router (issue 6): calibrate this machine into $OUT, then decision cost and picks vs measured truth
# over the seq query sweep for both metrics (docs/runtime.md; bench/RESULTS.md says how to read them).
if [ "$status" = 0 ] && [ "${GPU_CHECK_BENCH:-1}" = 1 ] && [ -x build-gpu/bench/bench_router ]; then
  export TANDEM_COSTMODEL_PATH="$OUT/costmodel.json" TANDEM_CALIBRATION_BUDGET_MS=20000
  step calibrate build-gpu/tandem calibrate
  cat "$OUT/calibrate.log"
  step bench-router build-gpu/bench/bench_router --max-patterns 4096000
  step bench-router-difflib build-gpu/bench/bench_router --max-patterns 4096000 --metric difflib --decisions 100000
  tail -30 "$OUT/bench-router.log" "$OUT/bench-router-difflib.log"
fi
# The profiler's overhead (§6.5 budget, GPU record included); cheap, so it runs whenever the checks passed.
if [ "$status" = 0 ] && [ "${GPU_CHECK_BENCH:-1}" = 1 ] && [ -x build-gpu/bench/bench_prof ]; then
  step bench-prof build-gpu/bench/bench_prof
  cat "$OUT/bench-prof.log"
fi
exit $status
