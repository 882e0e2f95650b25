#!/usr/bin/env bash
# gpu-check.sh: the one script run on the GPU machine (device tool): builds for sm_90 with the CUDA
# module, runs every test (the GPU ones included), the sanitizers and the GPU benchmarks, and writes logs
# under $OUT. Carry .deb/ (scripts/gpu-debs.sh downloads it here): the packages are unpacked under
# /tmp/debs, never into /. The HTTP service is not built there (-DTANDEM_SERVER=OFF): it has no GPU part,
# and CI runs its tests.
#
# Usage there: bash scripts/gpu-check.sh [PART]   (OUT defaults to /tmp/tandem-gpu-out)
#   build       configure and build only (17 s on the H100 machine's 16 cores; 10 minutes on a slower one
#               once: build first, then run the other parts on the same warm machine)
#   tests       configure, build, every test with TANDEM_TEST_REQUIRE_GPU=1, compute-sanitizer, many random
#               cases; on success it leaves a marker with the sources' checksum in build-gpu/
#   bench-seq   the sequence engine's GPU benchmark and the router's calibration and sweeps (seq, BFS, GEMM)
#   bench-router  only the router's calibration and sweeps (the second half of bench-seq)
#   bench-rest  KATO predictions, ARC objects(), lattice, batch executor, profiler overhead; the same in
#               three calls (each under the device's 10 minutes): bench-kato, bench-arc, bench-lattice
#   all         (default) everything in one call (longer than one device command may run)
# The bench parts run only when the tests part passed on the same sources (one device command is limited
# to 10 minutes, so the parts are separate calls on the same warm machine).
set -uo pipefail
cd "$(dirname "$0")/.."
PART=${1:-all}
case "$PART" in build|tests|bench-seq|bench-router|bench-rest|bench-kato|bench-arc|bench-lattice|all) ;; *) echo "gpu-check: unknown part '$PART'" >&2; exit 2 ;; esac
OUT=${OUT:-/tmp/tandem-gpu-out}
# The device tool brings back at most 8 files from $OUT: every log goes to $LOGS, and on exit the part's
# logs travel as one archive, $OUT/<part>-logs.tgz (summary lines also go to stdout).
LOGS=${GPU_CHECK_LOGS:-/tmp/tandem-gpu-logs}
mkdir -p "$OUT" "$LOGS"
pack() { tar -C "$LOGS" -czf "$OUT/$PART-logs.tgz" . 2>/dev/null; }
trap pack EXIT
status=0
step() { # name, command...: runs, logs to $LOGS/<name>.log, remembers failure
  local name=$1; shift
  echo "== $name ($(date +%T))"
  if "$@" >"$LOGS/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (see $name.log)"; tail -20 "$LOGS/$name.log"; status=1; fi
  pack # after every step too: a command stopped at the device's time limit still brings its logs back
}
want() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }

DEBS=/tmp/debs
mkdir -p "$DEBS"
for f in .deb/*.deb; do [ -e "$f" ] && dpkg -x "$f" "$DEBS"; done
# openblas-pthread/ holds the libblas.so.3 and liblapack.so.3 that igraph loads (Debian's alternatives
# would point there; dpkg -x sets up no alternatives).
export LD_LIBRARY_PATH="$DEBS/usr/lib/x86_64-linux-gnu:$DEBS/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{ nvidia-smi; nvcc --version; cmake --version | head -1; python3 --version; nproc; } >"$LOGS/machine.txt" 2>&1
# No pkg-config lookups there: its .pc files would point at /usr; plain searches under the prefix work.
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=ON -DTANDEM_SERVER=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$DEBS/usr" -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON
step build cmake --build build-gpu -j "$(nproc)"
sources=$(find CMakeLists.txt cmake include src tools tests bench -type f | sort | xargs cat | sha1sum | cut -c1-40)
marker=build-gpu/gpu-checks-passed

if want tests; then
  rm -f "$marker"
  # The CUDA backend must be found: strict mode turns a silent CPU fallback into a failure.
  step info env TANDEM_DEVICE=cuda TANDEM_STRICT=1 TANDEM_LOG_LEVEL=info build-gpu/tandem info
  cat "$LOGS/info.log"
  # Every test; the GPU ones must not skip here. The binaries run by hand below get ctest's environment
  # (tests/CMakeLists.txt): no saved cost model and no calibration, so routing follows the size rules the
  # tests assert, whatever an earlier step saved. Unset again after the tests, for the benchmarks.
  export TANDEM_TEST_REQUIRE_GPU=1 TANDEM_COSTMODEL_PATH= TANDEM_CALIBRATE=off
  # A per-test limit (the longest takes about 40 s there), so that a hang shows as one failed test with
  # its output instead of eating the device command's 10 minutes.
  step tests ctest --test-dir build-gpu --output-on-failure -j 8 --timeout 180
  grep -E "tests passed|tests failed|Skipped|Not Run|Failed|\*\*\*" "$LOGS/tests.log"
  if command -v compute-sanitizer >/dev/null; then
    # test_cuda_backend provokes an out-of-memory on purpose; API errors are checked by the test itself.
    step memcheck compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 build-gpu/tests/test_cuda_backend
    step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_cuda_backend
    # The kernels under the sanitizers, on fewer cases (they run slowly there); the engine's tier logic
    # is checked with ThreadSanitizer off the GPU (its unit tests use a host test double).
    step memcheck-seq env TANDEM_TEST_CASES=6 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_cuda_seq
    step racecheck-seq env TANDEM_TEST_CASES=6 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_cuda_seq
    step memcheck-cross compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/cross/test_seq_cross --cases 3
    step memcheck-arc env TANDEM_TEST_CASES=200 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_arc_objects_batch
    step racecheck-arc env TANDEM_TEST_CASES=100 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_arc_objects_batch
    # The batched executor's kernels and columns (arc_bops.cu): few lanes and grids under memcheck.
    step memcheck-arc-bops env TANDEM_TEST_CASES=200 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_arc_bops
    # The objects-based kernels label in shared memory (arc_bops_sets.cu).
    step racecheck-arc-bops env TANDEM_TEST_CASES=100 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/test_arc_bops
    step memcheck-arc-exec env TANDEM_TEST_CASES=4 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_arc_exec
    # Fewer random cases under the sanitizers (1D shapes are 60,000 one-level launches per path).
    step memcheck-lattice env TANDEM_TEST_CASES=6 TANDEM_TEST_BFS_PERSISTENT=1 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/cross/test_lattice_cross
    # Not the persistent kernel under racecheck: its grid-wide barrier did not finish there in 9 minutes.
    step racecheck-lattice env TANDEM_TEST_CASES=3 timeout 300 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/cross/test_lattice_cross
    step memcheck-memory compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 build-gpu/tests/test_cuda_memory
    # The profiler's device spans (event pool, anchor, pool attributes).
    step memcheck-prof compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/test_prof_cuda
  fi
  # More random cases than CI's machine can run.
  step cuda-seq-many env TANDEM_TEST_CASES=300 build-gpu/tests/test_cuda_seq
  step cross-many build-gpu/tests/cross/test_seq_cross --cases 48
  step arc-objects-many env TANDEM_TEST_CASES=20000 build-gpu/tests/test_arc_objects_batch
  step arc-bops-many env TANDEM_TEST_CASES=50000 build-gpu/tests/test_arc_bops
  step arc-exec-many env TANDEM_TEST_CASES=400 build-gpu/tests/test_arc_exec
  # The persistent (one cooperative launch) BFS kernel, still opt-in: all its cases, every kernel.
  step lattice-persistent env TANDEM_TEST_BFS_PERSISTENT=1 build-gpu/tests/cross/test_lattice_cross
  [ "$status" = 0 ] && echo "$sources" >"$marker"
  unset TANDEM_COSTMODEL_PATH TANDEM_CALIBRATE
fi

# Figures only from sources whose every check passed.
bench_ok() {
  [ "${GPU_CHECK_BENCH:-1}" = 1 ] || return 1
  if [ "$status" != 0 ] || [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$sources" ]; then
    echo "== benchmarks skipped: the tests part has not passed on these sources"
    return 1
  fi
}
threads=$(nproc)
if want bench-seq && bench_ok; then
  step bench-gpu build-gpu/bench/bench_seq_gpu --require-gpu --threads "$threads" --json "$LOGS/bench_seq_gpu.json"
  tail -60 "$LOGS/bench-gpu.log"
fi
if { want bench-seq || [ "$PART" = bench-router ]; } && bench_ok; then
  # The router (issue 6): calibrate this machine into $LOGS (every op family: seq, lattice, ARC), then
  # decision cost and picks vs measured truth over the seq query sweep for both metrics and over the
  # lattice BFS and GEMM sweeps (docs/runtime.md; bench/RESULTS.md says how to read them).
  # Nine op families and the link share the budget: 40 s keeps about 4 s for each (runners stop earlier
  # once a size's median passes 50 ms).
  export TANDEM_COSTMODEL_PATH="$LOGS/costmodel.json" TANDEM_CALIBRATION_BUDGET_MS=40000
  step calibrate build-gpu/tandem calibrate
  cat "$LOGS/calibrate.log"
  step bench-router build-gpu/bench/bench_router --max-patterns 4096000 --sweeps seq
  step bench-router-difflib build-gpu/bench/bench_router --max-patterns 4096000 --metric difflib --decisions 100000 --sweeps seq
  step bench-router-lattice build-gpu/bench/bench_router --decisions 100000 --sweeps bfs,gemm
  tail -n 30 "$LOGS/bench-router.log" "$LOGS/bench-router-difflib.log"
  tail -n 40 "$LOGS/bench-router-lattice.log"
fi
rest() { want bench-rest || [ "$PART" = "$1" ]; }
if rest bench-kato && bench_ok; then
  step bench-kato build-gpu/bench/bench_kato --require-gpu --threads "$threads" --sizes 10000,100000,1000000 --budget 4
  cat "$LOGS/bench-kato.log"
fi
if rest bench-arc && bench_ok; then
  step bench-arc build-gpu/bench/bench_arc_objects --grids 1000000 --require-gpu
  cat "$LOGS/bench-arc.log"
  # The ARC batched executor: grids/s for solver programs, interpreter vs executor on the CPU and the GPU.
  step bench-arc-batch build-gpu/bench/bench_arc_batch --grids 100000 --require-gpu
  cat "$LOGS/bench-arc-batch.log"
fi
if rest bench-lattice && bench_ok; then
  # igraph (carried .deb) runs beside the lattice engine on the same lattices when the build found it.
  step bench-lattice build-gpu/bench/bench_lattice
  tail -60 "$LOGS/bench-lattice.log"
  step bench-lattice-large build-gpu/bench/bench_lattice --large
  tail -40 "$LOGS/bench-lattice-large.log"
  # The batch executor: small XORs one call each vs device groups vs the router's choice (docs/runtime.md).
  step bench-batch build-gpu/bench/bench_batch --require-gpu
  cat "$LOGS/bench-batch.log"
  # The profiler's overhead (§6.5 budget, GPU record included).
  step bench-prof build-gpu/bench/bench_prof
  cat "$LOGS/bench-prof.log"
fi
exit $status
