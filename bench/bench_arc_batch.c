/* bench_arc_batch.c: the batched executor (tdm_arc_batch_exec) in grids per second, the interpreter's
 * runner (tdm_arc_batch_run), the executor with the CPU forms, and the executor on the GPU in the same run,
 * on the same grids: a few solver programs of tests/arc/solvers/training.py (chosen because most of their
 * lines have batched forms: grid programs, then objects-based ones) on seeded random grids of 3..30 x 3..30. Every executor result is compared with
 * the interpreter's (the run fails on a difference). Usage: bench_arc_batch [--grids N] [--programs FILE]
 * [--tasks ID,ID,...] [--require-gpu] [--threads T]. */
#define BENCH_NAME "bench_arc_batch"
#include "bench_common.h" /* die, bench_splitmix */
#include "tandem/arc.h"
#include "tandem/backend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { return bench_splitmix(&rng); }

static int same(const tdm_arc_result *a, const tdm_arc_result *b) {
    if (a->status != b->status || a->h != b->h || a->w != b->w || !a->cells != !b->cells || !a->repr != !b->repr) return 0;
    if (a->cells && memcmp(a->cells, b->cells, (size_t)a->h * (size_t)a->w * sizeof *a->cells)) return 0;
    if (a->repr && strcmp(a->repr, b->repr)) return 0;
    return !a->error == !b->error && (!a->error || !strcmp(a->error, b->error));
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* each row out as it is done, also into a file: a crash keeps the rows before it */
    size_t n = 100000;
    int require_gpu = 0, threads = 0;
    const char *file = "tests/arc/solvers/training.py";
    /* grid programs, then objects-based ones (objects, partition, palette and what follows them) */
    char tasks[1024] = "67a3c6ac,68b16354,74dd1130,9dfd6313,a416b8f3,c8f0f002,d511f180,b1948b0a,"
                       "6e82a1ae,42a50994,be94b721,a61f2674,f76d97a5";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--grids") && i + 1 < argc) n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--programs") && i + 1 < argc) file = argv[++i];
        else if (!strcmp(argv[i], "--tasks") && i + 1 < argc) snprintf(tasks, sizeof tasks, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--require-gpu")) require_gpu = 1;
        else return fprintf(stderr, "usage: bench_arc_batch [--grids N] [--programs FILE] [--tasks ID,...] [--require-gpu] [--threads T]\n"), 2;
    }
    FILE *f = fopen(file, "r");
    if (!f) return fprintf(stderr, "bench_arc_batch: cannot open %s (run from the repository root or pass --programs)\n", file), 1;
    static char src[1 << 20];
    size_t len = fread(src, 1, sizeof src, f);
    fclose(f);
    tdm_arc_programs *p;
    int rc = tdm_arc_programs_parse(src, len, file, &p);
    if (rc) die("parsing", rc);
    tdm_ctx *ctx;
    if ((rc = tdm_init(&ctx, NULL))) die("tdm_init", rc);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    int have_gpu = gpu && gpu->arc;
    if (require_gpu && !have_gpu) return fprintf(stderr, "bench_arc_batch: --require-gpu but no GPU with the ARC kernels\n"), 1;
    int *cells = malloc(n * 900 * sizeof *cells);
    tdm_arc_call_ref *calls = malloc(n * sizeof *calls);
    for (size_t g = 0; g < n; g++) {
        int h = 3 + (int)(next() % 28), w = 3 + (int)(next() % 28), k = 2 + (int)(next() % 8);
        int *c = cells + g * 900;
        for (int s = 0; s < h * w; s++) c[s] = (s % w && next() % 2) ? c[s - 1] : (int)(next() % (uint64_t)k);
        calls[g].grid.h = h, calls[g].grid.w = w, calls[g].grid.cells = c;
    }
    printf("bench_arc_batch: %zu random grids (3..30 x 3..30) per program, %s, GPU: %s\n", n, file,
           have_gpu ? gpu->name : "none");
    printf("%-10s %14s %14s %14s %9s %9s\n", "task", "interp g/s", "exec-cpu g/s", "exec-gpu g/s", "batched", "gpu/cpu");
    for (char *t = strtok(tasks, ","); t; t = strtok(NULL, ",")) {
        size_t k;
        if (tdm_arc_programs_find(p, t, &k)) {
            printf("%-10s not in %s\n", t, file);
            continue;
        }
        for (size_t g = 0; g < n; g++) calls[g].prog = k;
        tdm_arc_batch *ref, *cpu, *dev = NULL;
        if ((rc = tdm_arc_batch_run(p, calls, n, threads, 0, &ref))) die("tdm_arc_batch_run", rc);
        if ((rc = tdm_arc_batch_exec(ctx, p, calls, n, TDM_DEVICE_CPU, threads, &cpu))) die("exec cpu", rc);
        if (have_gpu && (rc = tdm_arc_batch_exec(ctx, p, calls, n, TDM_DEVICE_CUDA, threads, &dev))) die("exec gpu", rc);
        uint64_t batched = 0, all = 0;
        for (int id = 0; id < tdm_arc_prim_count(); id++) {
            tdm_arc_exec_stats s = tdm_arc_batch_exec_stats(dev ? dev : cpu, id);
            batched += s.batched, all += s.batched + s.fallback;
        }
        for (size_t g = 0; g < n; g++)
            if (!same(tdm_arc_batch_result(ref, g), tdm_arc_batch_result(cpu, g)) ||
                (dev && !same(tdm_arc_batch_result(ref, g), tdm_arc_batch_result(dev, g))))
                return fprintf(stderr, "bench_arc_batch: %s grid %zu: the executor differs from the interpreter\n", t, g), 1;
        double si = tdm_arc_batch_seconds(ref), sc = tdm_arc_batch_seconds(cpu), sg = dev ? tdm_arc_batch_seconds(dev) : 0;
        printf("%-10s %14.0f %14.0f %14.0f %8.1f%% %9.2f\n", t, n / si, n / sc, dev ? n / sg : 0.0,
               all ? 100.0 * (double)batched / (double)all : 0.0, dev ? sc / sg : 0.0);
        tdm_arc_batch_free(ref), tdm_arc_batch_free(cpu), tdm_arc_batch_free(dev);
    }
    free(cells), free(calls);
    tdm_arc_programs_free(p);
    tdm_destroy(ctx);
    return 0;
}
