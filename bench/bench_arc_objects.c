/* bench_arc_objects.c: batched objects() labels (tdm_arc_objects_labels) in grids per second, CPU (one
 * thread and every core) against the GPU in the same run, on the same grids: seeded 30 x 30 grids of 2 to 10
 * colours with runs (blob-like objects, as ARC grids have). The GPU figure is given end to end (copies of the
 * grids and labels included) and for the kernel alone (CUDA events); every GPU label is compared with the
 * CPU's. Issue 5's target: 10 million 30 x 30 grids per second on an H100. */
#define BENCH_NAME "bench_arc_objects"
#include "bench_common.h" /* die, now_s, bench_splitmix */
#include "tandem/arc.h"
#include "tandem/backend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CELLS (TDM_ARC_SLOT * TDM_ARC_SLOT)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { return bench_splitmix(&rng); }

int main(int argc, char **argv) {
    size_t n = 100000;
    int reps = 3, require_gpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--grids") && i + 1 < argc) n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--require-gpu")) require_gpu = 1;
        else {
            printf("usage: bench_arc_objects [--grids N] [--reps R] [--require-gpu]\n"
                   "Defaults: 100000 grids of 30x30, best of 3 repetitions per cell.\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (!n || reps < 1) return 2;
    uint8_t *cells = malloc(n * CELLS), *hw = malloc(2 * n);
    int16_t *cpu = malloc(n * CELLS * sizeof *cpu), *gpu = malloc(n * CELLS * sizeof *gpu);
    if (!cells || !hw || !cpu || !gpu) die("memory", TDM_E_NOMEM);
    for (size_t g = 0; g < n; g++) {
        int k = 2 + (int)(next() % 9), pal[10];
        for (int c = 0; c < k; c++) pal[c] = (int)(next() % 10);
        uint8_t *c = cells + g * CELLS;
        for (int i = 0; i < 30; i++)
            for (int j = 0; j < 30; j++) {
                int v = pal[next() % (uint64_t)k];
                if (j && next() % 3) v = c[i * 30 + j - 1];
                else if (i && next() % 2) v = c[(i - 1) * 30 + j];
                c[i * 30 + j] = (uint8_t)v;
            }
        hw[2 * g] = hw[2 * g + 1] = 30;
    }
    tdm_ctx *ctx;
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.strict = 0;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) die("tdm_init", rc);
    const tdm_backend *b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    int have_gpu = b && b->arc;
    printf("bench_arc_objects: %zu grids of 30x30, %d CPU threads, GPU: %s\n", n, tdm_ctx_threads(ctx),
           have_gpu ? b->description : "none");
    if (!have_gpu && require_gpu) {
        printf("FAILED: --require-gpu and no GPU with ARC kernels\n");
        return 1;
    }
    static const int combos[2][3] = {{1, 0, 1}, {0, 1, 1}}; /* objects(I, T, F, T) and objects(I, F, T, T) */
    int failed = 0;
    printf("%-22s %-8s %12s %12s %14s\n", "call", "backend", "best s", "grids/s", "kernel grids/s");
    for (int cb = 0; cb < 2; cb++) {
        const int *f = combos[cb];
        char name[32];
        snprintf(name, sizeof name, "objects(I,%c,%c,%c)", f[0] ? 'T' : 'F', f[1] ? 'T' : 'F', f[2] ? 'T' : 'F');
        int threads[2] = {1, tdm_ctx_threads(ctx)};
        for (int t = 0; t < 2; t++) {
            double best = 1e30;
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                if ((rc = tdm_arc_objects_labels(ctx, cells, hw, n, f[0], f[1], f[2], TDM_DEVICE_CPU, threads[t], cpu, NULL)))
                    die("cpu", rc);
                double s = now_s() - t0;
                best = s < best ? s : best;
            }
            char bk[16];
            snprintf(bk, sizeof bk, "cpu/%d", threads[t]);
            printf("%-22s %-8s %12.4f %12.0f %14s\n", name, bk, best, n / best, "-");
        }
        if (!have_gpu) continue;
        double best = 1e30, kbest = 1e30;
        for (int r = 0; r < reps + 1; r++) { /* the first run also pays the module's first launch */
            tdm_arc_objects_stats st;
            double t0 = now_s();
            if ((rc = tdm_arc_objects_labels(ctx, cells, hw, n, f[0], f[1], f[2], TDM_DEVICE_CUDA, 0, gpu, &st)))
                die("gpu", rc);
            double s = now_s() - t0;
            if (r) best = s < best ? s : best, kbest = st.kernel_ms / 1e3 < kbest ? st.kernel_ms / 1e3 : kbest;
        }
        printf("%-22s %-8s %12.4f %12.0f %14.0f\n", name, b->name, best, n / best, n / kbest);
        size_t bad = 0;
        for (size_t x = 0; x < n * CELLS; x++) bad += cpu[x] != gpu[x];
        printf("  cross-check: %zu of %zu labels differ between cpu and %s\n", bad, n * CELLS, b->name);
        failed |= bad != 0;
    }
    tdm_destroy(ctx);
    free(cells), free(hw), free(cpu), free(gpu);
    printf("%s\n", failed ? "FAILED" : "ok");
    return failed;
}
