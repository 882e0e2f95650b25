/* bench_arc.c: cost of the ARC DSL's objects() in microseconds per call on one thread, all 8 flag
 * combinations, four ways: as a caller gets it (lazy: the partition, no layout yet, spec §4.11); with the
 * object values made (the result hashed, no layout: what nearly every use of the result pays); with every
 * layout built (the outer set's and each object's, read through tdm_arc_val_items as an order-reading
 * primitive would); and by the eager replay of the reference's set operations (the path every call took
 * before the lazy one). Grids are random (10x10 and 30x30, few colours and blobs as ARC grids have) or,
 * with --grids, read from a file (the ARC tasks' own 30x30 grids). Figures go to bench/RESULTS.md with the
 * machine and the command. */
#define _POSIX_C_SOURCE 200809L
#define BENCH_NAME "bench_arc"
#include "bench_common.h" /* now_s, bench_splitmix */
#include "arc/arc_internal.h"
#include "tandem/arc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 12345;
static uint64_t rnd(void) { return bench_splitmix(&rng_state); }

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

static const char *flag_names[8] = {"F, F, F", "F, F, T", "F, T, F", "F, T, T", "T, F, F", "T, F, T", "T, T, F", "T, T, T"};

/* A set of grids of one label ("10x10", "arc 30x30"), all h x w, cells back to back. */
typedef struct {
    const char *label;
    int n, h, w;
    int *cells;
} grid_set;

/* Times objects() on every grid of gs in the 8 flag combinations and prints a row per combination. */
static int time_set(tdm_arc_rt *rt, const grid_set *gs) {
    int id;
    tdm_arc_prim_lookup("objects", &id);
    const tdm_arc_val *T, *F, **items = malloc(sizeof *items * 900), **cells = malloc(sizeof *cells * 900);
    int hw = gs->h * gs->w;
    for (int f = 0; f < 8; f++) {
        /* best of REPS passes over the grids (the first pass also warms the per-process order caches) */
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        long total = 0;
        for (int rep = 0; rep < REPS; rep++) {
            /* one way at a time over all grids, so that no way runs in caches another has just emptied */
            double t[4] = {0, 0, 0, 0};
            total = 0;
            for (int way = 0; way < 4; way++)
                for (int g = 0; g < gs->n; g++) {
                    tdm_arc_rt_reset(rt);
                    tdm_arc_name_value(rt, "T", &T), tdm_arc_name_value(rt, "F", &F);
                    tdm_arc_val *grid;
                    tdm_arc_grid_new(rt, gs->h, gs->w, gs->cells + (size_t)g * hw, &grid);
                    const tdm_arc_val *a[4] = {grid, f & 4 ? T : F, f & 2 ? T : F, f & 1 ? T : F}, *out;
                    double t0 = now_s();
                    if (way == 2) {
                        /* the eager replay, called directly (the primitive takes the lazy path) */
                        if (!arc_objects_eager(rt, (tdm_arc_val **)a)) return fprintf(stderr, "%s\n", tdm_arc_rt_error(rt)), 1;
                    } else {
                        if (tdm_arc_call(rt, tdm_arc_prim_value(id), 4, a, &out)) return fprintf(stderr, "%s\n", tdm_last_error()), 1;
                        if (way == 3) {
                            /* the objects made (hash of the result), no layout yet */
                            tdm_arc_val_hash(out);
                        } else if (way == 1) {
                            /* every layout, as order-reading primitives would ask for them */
                            size_t k = tdm_arc_val_items(out, items, 900);
                            for (size_t o = 0; o < k; o++) tdm_arc_val_items(items[o], cells, 900);
                            total += (long)k;
                        }
                    }
                    t[way] += now_s() - t0;
                }
            for (int w = 0; w < 4; w++)
                if (t[w] < best[w]) best[w] = t[w];
        }
        printf("%-10s %-22s %10.2f %10.2f %14.2f %10.2f %10.1f\n", gs->label, flag_names[f], best[0] / gs->n * 1e6,
               best[3] / gs->n * 1e6, best[1] / gs->n * 1e6, best[2] / gs->n * 1e6, (double)total / gs->n);
    }
    free(items), free(cells);
    return 0;
}

/* Reads JSON-lines grids ([[1, 2], [3, 4]] per line) of one shape h x w (lines of another shape are
 * skipped). Returns the number read. */
static int read_grids(const char *path, int h, int w, int **out) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int cap = 64, n = 0, *cells = malloc(sizeof(int) * (size_t)cap * h * w);
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        int vals[900], k = 0, rows = 0, depth = 0, ok = 1;
        for (char *p = line; *p && ok; p++) {
            if (*p == '[') depth++;
            else if (*p == ']') rows += --depth == 1;
            else if (*p >= '0' && *p <= '9') {
                if (k == 900) ok = 0;
                else vals[k++] = (int)strtol(p, &p, 10), p--;
            }
        }
        if (!ok || rows != h || k != h * w) continue;
        if (n == cap) cells = realloc(cells, sizeof(int) * (size_t)(cap *= 2) * h * w);
        memcpy(cells + (size_t)n * h * w, vals, sizeof(int) * (size_t)h * w);
        n++;
    }
    fclose(f);
    *out = cells;
    return n;
}

/* usage() below: random grids (DUMP writes them for the Python peer, so both time the same inputs), or the
 * 30x30 grids of a file. */
static int usage(FILE *f) {
    fprintf(f, "usage: bench_arc [NGRIDS [DUMP]]  NGRIDS random grids per size (10x10, 30x30; default 200); DUMP\n"
               "                                   receives them as JSON lines for bench/arc_peer.py\n"
               "       bench_arc --grids FILE      the 30x30 grids of a JSON-lines file (e.g. the ARC tasks' own)\n");
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout);
    int from_file = argc > 1 && !strcmp(argv[1], "--grids");
    if (from_file && argc != 3) return usage(stderr);
    long ngrids = 200;
    if (!from_file && argc > 1) {
        char *end;
        ngrids = strtol(argv[1], &end, 10);
        if (*end || ngrids < 1 || ngrids > 1000000) {
            fprintf(stderr, "bench_arc: NGRIDS must be a whole number from 1 to 1000000, not '%s'\n", argv[1]);
            return usage(stderr);
        }
    }
    FILE *dump = !from_file && argc > 2 ? fopen(argv[2], "w") : NULL;
    if (!from_file && argc > 2 && !dump) return fprintf(stderr, "bench_arc: cannot write %s\n", argv[2]), 1;
    tdm_arc_rt *rt;
    if (tdm_arc_rt_new(&rt)) return 1;
    printf("objects() on one thread, microseconds per call (best of %d passes): as returned (lazy), with the\n"
           "object values made (+objects: the result hashed, no layout), with every layout built (+layout), and\n"
           "by the eager replay of the reference's set operations (eager)\n", REPS);
    printf("%-10s %-22s %10s %10s %14s %10s %10s\n", "grids", "univalued,diag,no_bg", "lazy", "+objects", "+layout", "eager",
           "objects");
    if (from_file) {
        grid_set gs = {"arc 30x30", 0, 30, 30, NULL};
        gs.n = read_grids(argv[2], 30, 30, &gs.cells);
        if (gs.n <= 0) return fprintf(stderr, "bench_arc: no 30x30 grids in %s\n", argv[2]), 1;
        printf("(%d grids from %s)\n", gs.n, argv[2]);
        int rc = time_set(rt, &gs);
        free(gs.cells), tdm_arc_rt_free(rt);
        return rc;
    }
    printf("(%ld random grids per size)\n", ngrids);
    int sizes[2] = {10, 30};
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        grid_set gs = {n == 10 ? "10x10" : "30x30", (int)ngrids, n, n, malloc(sizeof(int) * n * n * (size_t)ngrids)};
        for (int g = 0; g < ngrids; g++) {
            random_grid(n, n, gs.cells + g * n * n);
            for (int i = 0; dump && i < n; i++)
                for (int j = 0; j < n; j++)
                    fprintf(dump, "%s%d%s", j ? ", " : i ? "[" : "[[", gs.cells[g * n * n + i * n + j], j < n - 1 ? "" : i < n - 1 ? "], " : "]]\n");
        }
        if (time_set(rt, &gs)) return 1;
        free(gs.cells);
    }
    tdm_arc_rt_free(rt);
    if (dump) fclose(dump);
    return 0;
}
