#!/usr/bin/env bash
# ab-seq.sh: A/B of the CPU query paths between git revisions and this tree, on two cores, alternated
# (bench/ab_seq_query.c: 16 STMs over the benchmark's 1M-pattern store, best wall and CPU ms per query,
# and an answer digest every side must share). Used to judge a change of a few per cent where the
# development VM's speed drifts; the sixth and seventh sessions ran it on the GPU machine's host CPU.
#
#   bench/ab-seq.sh pack REV...   here: git archive of each REV into .ab/REV.tar (ignored); carry .ab
#                                 (and .deb from scripts/gpu-debs.sh) to another machine
#   bench/ab-seq.sh run [MODES]   build each .ab/*.tar and this tree (Release, library only), then run
#                                 every side 3 times, alternated, per mode, pinned to cores 0 and 1
#   MODES: comma-separated "s|b THRESHOLD lcs|difflib" (one at a time or one batch call), default
#          "s 0.1 lcs,b 0.1 lcs,s 0.1 difflib,b 0.1 difflib"; AB_REPS repetitions per run (default 6);
#          the driver reads AB_QUERIES (STMs, default 16) and AB_THREADS (query threads, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
shift || true
case "$cmd" in
pack)
    [ $# -gt 0 ] || { echo "ab-seq: pack needs revisions" >&2; exit 2; }
    mkdir -p .ab
    for rev in "$@"; do git archive "$rev" -o ".ab/$(git rev-parse --short "$rev").tar"; done
    ls -1 .ab
    ;;
run)
    # On a machine without our -dev packages (the GPU machine), the carried .deb files are unpacked under
    # /tmp/debs, never into /.
    prefix=()
    libdir=()
    if ls .deb/*.deb >/dev/null 2>&1; then
        D=/tmp/debs
        mkdir -p $D
        for f in .deb/*.deb; do dpkg -x "$f" $D; done
        export LD_LIBRARY_PATH="$D/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        prefix=(-DCMAKE_PREFIX_PATH=$D/usr -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON)
        libdir=(-I $D/usr/include -L $D/usr/lib/x86_64-linux-gnu)
    fi
    cm=(-DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=OFF -DTANDEM_SERVER=OFF -DTANDEM_TESTS=OFF -DTANDEM_BENCH=OFF
        -DTANDEM_TOOLS=OFF "${prefix[@]}")
    libs=(-fopenmp -lxxhash -lcrypto -ljansson -lm -ldl -lpthread)
    work=/tmp/tandem-ab
    mkdir -p $work
    sides=()
    for tar in .ab/*.tar; do
        [ -e "$tar" ] || continue
        name=$(basename "$tar" .tar)
        if [ ! -e $work/$name/b/libtandem.a ]; then
            rm -rf $work/$name && mkdir -p $work/$name && tar -xf "$tar" -C $work/$name
            cmake -S $work/$name -B $work/$name/b "${cm[@]}" >/dev/null
            cmake --build $work/$name/b -j "$(nproc)" --target tandem >/dev/null
        fi
        gcc -O2 -std=gnu11 -I $work/$name/include -I bench "${libdir[@]}" bench/ab_seq_query.c $work/$name/b/libtandem.a \
            "${libs[@]}" -o $work/q_$name
        sides+=("$name")
    done
    cmake -S . -B $work/tree "${cm[@]}" >/dev/null
    cmake --build $work/tree -j "$(nproc)" --target tandem >/dev/null
    gcc -O2 -std=gnu11 -I include -I bench "${libdir[@]}" bench/ab_seq_query.c $work/tree/libtandem.a "${libs[@]}" -o $work/q_tree
    sides+=(tree)
    echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); sides: ${sides[*]} (tree = this tree)"
    IFS=, read -ra modes <<<"${1:-s 0.1 lcs,b 0.1 lcs,s 0.1 difflib,b 0.1 difflib}"
    for mode in "${modes[@]}"; do
        for round in 1 2 3; do
            for side in "${sides[@]}"; do
                # shellcheck disable=SC2086
                echo "$mode  $side  $(taskset -c 0,1 $work/q_$side $(echo $mode | cut -d' ' -f1) "${AB_REPS:-6}" $(echo $mode | cut -d' ' -f2-3))"
            done
        done
    done
    ;;
*)
    echo "usage: bench/ab-seq.sh pack REV... | run [MODES]" >&2
    exit 2
    ;;
esac
