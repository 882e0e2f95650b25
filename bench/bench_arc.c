/* bench_arc.c: cost of the ARC DSL's objects() on random grids (10x10 and 30x30, all 8 flag combinations,
 * grids with few colours and blobs as ARC grids have), in microseconds per call on one thread. Figures go
 * to bench/RESULTS.md with the machine and the command. */
#define _POSIX_C_SOURCE 200809L
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
    printf("objects() on %d random grids per size, one thread, microseconds per call\n", ngrids);
    printf("%-8s %-22s %10s %10s\n", "size", "univalued,diag,no_bg", "us/call", "objects");
    for (int s = 0; s < 2; s++) {
        int n = sizes[s], *cells = malloc(sizeof(int) * n * n * ngrids);
        for (int g = 0; g < ngrids; g++) {
            random_grid(n, n, cells + g * n * n);
            for (int i = 0; dump && i < n; i++)
                for (int j = 0; j < n; j++)
                    fprintf(dump, "%s%d%s", j ? ", " : i ? "[" : "[[", cells[g * n * n + i * n + j], j < n - 1 ? "" : i < n - 1 ? "], " : "]]\n");
        }
        for (int f = 0; f < 8; f++) {
            const tdm_arc_val *a[4] = {NULL, f & 4 ? T : F, f & 2 ? T : F, f & 1 ? T : F};
            double t = 0;
            long total = 0;
            for (int g = 0; g < ngrids; g++) {
                tdm_arc_rt_reset(rt);
                tdm_arc_name_value(rt, "T", &T), tdm_arc_name_value(rt, "F", &F);
                a[1] = f & 4 ? T : F, a[2] = f & 2 ? T : F, a[3] = f & 1 ? T : F;
                tdm_arc_val *grid;
                tdm_arc_grid_new(rt, n, n, cells + g * n * n, &grid);
                a[0] = grid;
                const tdm_arc_val *out;
                double t0 = now_s();
                if (tdm_arc_call(rt, tdm_arc_prim_value(id), 4, a, &out)) return fprintf(stderr, "%s\n", tdm_last_error()), 1;
                t += now_s() - t0;
                total += (long)tdm_arc_val_len(out);
            }
            printf("%-8s %-22s %10.2f %10.1f\n", n == 10 ? "10x10" : "30x30", flags[f], t / ngrids * 1e6, (double)total / ngrids);
        }
        free(cells);
    }
    tdm_arc_rt_free(rt);
    if (dump) fclose(dump);
    return 0;
}
