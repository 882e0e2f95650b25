/* bench_arc.c: cost of the ARC DSL's objects() on random grids (10x10 and 30x30, all 8 flag combinations,
 * grids with few colours and blobs as ARC grids have), in microseconds per call on one thread, three ways:
 * as a caller gets it (lazy: the partition, no layout yet, spec §4.11), with every layout built (the outer
 * set's and each object's, read through tdm_arc_val_items as an order-reading primitive would), and by the
 * eager replay of the reference's set operations (the path every call took before the lazy one). Figures
 * go to bench/RESULTS.md with the machine and the command. */
#define _POSIX_C_SOURCE 200809L
#include "arc/arc_internal.h"
#include "tandem/arc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 12345;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A background with a few solid rectangles and sprinkled cells of 2-4 other colours. */
static void random_grid(int h, int w, int *c) {
    int ncol = 2 + (int)(rnd() % 3);
    for (int k = 0; k < h * w; k++) c[k] = rnd() % 5 == 0 ? 1 + (int)(rnd() % (unsigned)ncol) : 0;
    for (int r = 0; r < 4; r++) {
        int i0 = (int)(rnd() % (unsigned)h), j0 = (int)(rnd() % (unsigned)w), col = 1 + (int)(rnd() % (unsigned)ncol);
        for (int i = i0; i < h && i < i0 + 1 + (int)(rnd() % 6); i++)
            for (int j = j0; j < w && j < j0 + 1 + (int)(rnd() % 6); j++) c[i * w + j] = col;
    }
}

#define REPS 5

/* usage: bench_arc [NGRIDS] [DUMP]: DUMP receives the grids as JSON lines for the Python peer
 * (bench/arc_peer.py), so both time the same inputs. */
int main(int argc, char **argv) {
    int ngrids = argc > 1 ? atoi(argv[1]) : 200;
    FILE *dump = argc > 2 ? fopen(argv[2], "w") : NULL;
    const char *flags[8] = {"F, F, F", "F, F, T", "F, T, F", "F, T, T", "T, F, F", "T, F, T", "T, T, F", "T, T, T"};
    tdm_arc_rt *rt;
    if (tdm_arc_rt_new(&rt)) return 1;
    int id;
    tdm_arc_prim_lookup("objects", &id);
    const tdm_arc_val *T, *F;
    tdm_arc_name_value(rt, "T", &T);
    tdm_arc_name_value(rt, "F", &F);
    int sizes[2] = {10, 30};
    const tdm_arc_val **items = malloc(sizeof *items * 900), **cells = malloc(sizeof *cells * 900);
    printf("objects() on %d random grids per size, one thread, microseconds per call (best of %d passes)\n", ngrids, REPS);
    printf("%-8s %-22s %10s %14s %10s %10s\n", "size", "univalued,diag,no_bg", "lazy", "lazy+layout", "eager",
           "objects");
    for (int s = 0; s < 2; s++) {
        int n = sizes[s], *cells_in = malloc(sizeof(int) * n * n * ngrids);
        for (int g = 0; g < ngrids; g++) {
            random_grid(n, n, cells_in + g * n * n);
            for (int i = 0; dump && i < n; i++)
                for (int j = 0; j < n; j++)
                    fprintf(dump, "%s%d%s", j ? ", " : i ? "[" : "[[", cells_in[g * n * n + i * n + j], j < n - 1 ? "" : i < n - 1 ? "], " : "]]\n");
        }
        for (int f = 0; f < 8; f++) {
            /* best of REPS passes over the grids (the first pass also warms the per-process order caches) */
            double b_lazy = 1e30, b_layout = 1e30, b_eager = 1e30;
            long total = 0;
            for (int rep = 0; rep < REPS; rep++) {
                /* one way at a time over all grids, so that no way runs in caches another has just emptied */
                double t[3] = {0, 0, 0};
                total = 0;
                for (int way = 0; way < 3; way++)
                    for (int g = 0; g < ngrids; g++) {
                        tdm_arc_rt_reset(rt);
                        tdm_arc_name_value(rt, "T", &T), tdm_arc_name_value(rt, "F", &F);
                        tdm_arc_val *grid;
                        tdm_arc_grid_new(rt, n, n, cells_in + g * n * n, &grid);
                        const tdm_arc_val *a[4] = {grid, f & 4 ? T : F, f & 2 ? T : F, f & 1 ? T : F}, *out;
                        double t0 = now_s();
                        if (way == 2) {
                            /* the eager replay, called directly (the primitive takes the lazy path) */
                            if (!arc_objects_eager(rt, (tdm_arc_val **)a))
                                return fprintf(stderr, "%s\n", tdm_arc_rt_error(rt)), 1;
                        } else {
                            if (tdm_arc_call(rt, tdm_arc_prim_value(id), 4, a, &out))
                                return fprintf(stderr, "%s\n", tdm_last_error()), 1;
                            if (way == 1) {
                                /* every layout, as order-reading primitives would ask for them */
                                size_t k = tdm_arc_val_items(out, items, 900);
                                for (size_t o = 0; o < k; o++) tdm_arc_val_items(items[o], cells, 900);
                                total += (long)k;
                            }
                        }
                        t[way] += now_s() - t0;
                    }
                if (t[0] < b_lazy) b_lazy = t[0];
                if (t[1] < b_layout) b_layout = t[1];
                if (t[2] < b_eager) b_eager = t[2];
            }
            printf("%-8s %-22s %10.2f %14.2f %10.2f %10.1f\n", n == 10 ? "10x10" : "30x30", flags[f], b_lazy / ngrids * 1e6,
                   b_layout / ngrids * 1e6, b_eager / ngrids * 1e6, (double)total / ngrids);
        }
        free(cells_in);
    }
    free(items), free(cells);
    tdm_arc_rt_free(rt);
    if (dump) fclose(dump);
    return 0;
}
