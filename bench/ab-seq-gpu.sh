#!/usr/bin/env bash
# ab-seq-gpu.sh: A/B of bench_seq_gpu (the engine on the device and its CPU peer) between revisions and
# this tree, on the GPU machine, alternated so that both sides see the same machine state. Revisions are
# packed here with `bench/ab-seq.sh pack REV...` (into .ab/, ignored); carry .ab and .deb
# (scripts/gpu-debs.sh) to the GPU machine, then run there:
#
#   bash bench/ab-seq-gpu.sh [ROUNDS]     builds each .ab/*.tar and this tree (Release, CUDA for sm_90,
#                                         bench_seq_gpu and the CUDA module only), then runs every side
#                                         ROUNDS times (default 2), alternated; logs under $OUT (or /tmp)
#   AB_GPU_ARGS   bench_seq_gpu options (default "--sizes 10000000 --threads 16 --require-gpu")
#
# Why: a change to what the host does around the device (result arrays, copies) moves figures by a tenth,
# while two machines of the same kind, or one machine over minutes, differ by as much.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
args=${AB_GPU_ARGS:---sizes 10000000 --threads 16 --require-gpu}
OUT=${OUT:-/tmp/tandem-ab-gpu}
mkdir -p "$OUT"
D=/tmp/debs # the carried packages, unpacked under /tmp, never into /
mkdir -p $D
for f in .deb/*.deb; do [ -e "$f" ] && dpkg -x "$f" $D; done
export LD_LIBRARY_PATH="$D/usr/lib/x86_64-linux-gnu:$D/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cm=(-DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=ON -DTANDEM_SERVER=OFF -DTANDEM_TESTS=OFF -DTANDEM_BENCH=ON
    -DTANDEM_TOOLS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$D/usr -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON)
work=/tmp/tandem-ab-gpu-build
mkdir -p $work
sides=()
build() { # name, source dir
    cmake -S "$2" -B $work/$1 "${cm[@]}" >"$OUT/build-$1.log" 2>&1
    cmake --build $work/$1 -j "$(nproc)" --target bench_seq_gpu tandem_cuda >>"$OUT/build-$1.log" 2>&1
    sides+=("$1")
}
for tar in .ab/*.tar; do
    [ -e "$tar" ] || continue
    name=$(basename "$tar" .tar)
    rm -rf $work/src-$name && mkdir -p $work/src-$name && tar -xf "$tar" -C $work/src-$name
    build "$name" $work/src-$name
done
build tree .
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); sides: ${sides[*]} (tree = this tree); bench_seq_gpu $args"
for round in $(seq "$rounds"); do
    for side in "${sides[@]}"; do
        log="$OUT/$side-$round.log"
        # shellcheck disable=SC2086
        $work/$side/bench/bench_seq_gpu $args >"$log" 2>&1 || { echo "$side round $round failed:"; tail -5 "$log"; exit 1; }
        echo "## $side, round $round ($(date -u +%T))"
        grep -E '^[0-9]+ +(cuda|cpu) ' "$log" | awk '!seen[$0]++' | head -16
    done
done
