/* bench_batch.c: many small XOR masks one call at a time (tdm_lattice_xor per item, the peer) against the
 * batch executor (tdm_lattice_xor_batch), same items, same run, outputs compared byte for byte. CPU always
 * (a CPU-only context); with a GPU also the device: one call per item (a round trip each) against
 * device groups (one staged launch per group, forced with TDM_DEVICE_CUDA), and the batch left to the
 * router (auto). Median of reps runs after one warm-up; items/s = items / median. One line per
 * measurement, JSON with --json. TANDEM_BENCH_QUICK=1 (or --quick) is a smoke run. */
#define BENCH_NAME "bench_batch"
#include "bench_common.h" /* die, xmalloc, now_s, median */

#include "tandem/backend.h"
#include "tandem/lattice.h"

static int json, reps = 9;

static void report(const char *method, size_t bytes, const char *backend, size_t items, double *t, int n,
                   const tdm_batch_stats *st) {
    double med = median(t, (size_t)n);
    double rate = (double)items / med;
    if (json)
        printf("{\"op\": \"xor\", \"item_bytes\": %zu, \"items\": %zu, \"method\": \"%s\", \"backend\": \"%s\", "
               "\"median_ms\": %.4f, \"items_per_s\": %.0f, \"groups\": %zu, \"device_groups\": %zu, \"runs\": %d}\n",
               bytes, items, method, backend, med * 1e3, rate, st ? st->groups : 0, st ? st->device_groups : 0, n);
    else
        printf("xor %6zu B x %7zu  %-12s %-8s %10.3f ms  %12.0f items/s  groups %zu (device %zu)  median of %d\n", bytes,
               items, method, backend, med * 1e3, rate, st ? st->groups : 0, st ? st->device_groups : 0, n);
    fflush(stdout);
}

typedef struct {
    uint8_t *in, *out;
    tdm_lattice_xor_item *items;
    int *status;
    size_t n, bytes;
} workload;

static void make(workload *w, size_t n, size_t bytes, const uint8_t *key, size_t klen) {
    w->n = n, w->bytes = bytes;
    w->in = xmalloc(n * bytes);
    w->out = xmalloc(n * bytes);
    w->items = xmalloc(n * sizeof *w->items);
    w->status = xmalloc(n * sizeof *w->status);
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < n * bytes; i++) w->in[i] = (uint8_t)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    for (size_t i = 0; i < n; i++)
        w->items[i] = (tdm_lattice_xor_item){w->in + i * bytes, w->out + i * bytes, bytes, {key, klen, (uint64_t)i * 7}, 0};
}

static void unmake(workload *w) {
    free(w->in), free(w->out), free(w->items), free(w->status);
}

static void one_by_one(tdm_ctx *ctx, workload *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const tdm_lattice_xor_item *it = &w->items[i];
        int rc = tdm_lattice_xor(ctx, it->in, it->out, it->n, &it->key, it->flags);
        if (rc) die("tdm_lattice_xor", rc);
    }
}

static void batched(tdm_ctx *ctx, workload *w, size_t n, int pref, tdm_batch_stats *st) {
    int rc = tdm_lattice_xor_batch(ctx, w->items, n, pref, w->status, st);
    if (rc) die("tdm_lattice_xor_batch", rc);
    for (size_t i = 0; i < n; i++)
        if (w->status[i]) die("tdm_lattice_xor_batch item", w->status[i]);
}

#define TIME(t, stmt)                                                                                       \
    do {                                                                                                    \
        stmt;                                                                                               \
        for (int r_ = 0; r_ < reps; r_++) {                                                                 \
            double t0_ = now_s();                                                                           \
            stmt;                                                                                           \
            t[r_] = now_s() - t0_;                                                                          \
        }                                                                                                   \
    } while (0)

/* The outputs of one method, kept to compare the next against. */
static void check_same(const uint8_t *want, const workload *w, size_t n, const char *what) {
    if (memcmp(want, w->out, n * w->bytes)) {
        fprintf(stderr, BENCH_NAME ": %s: outputs differ from one call per item\n", what);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int quick = getenv("TANDEM_BENCH_QUICK") && !strcmp(getenv("TANDEM_BENCH_QUICK"), "1");
    size_t items = 100000, gpu_single = 5000;
    double sizes[8] = {16, 256, 4096};
    int nsizes = 3, require_gpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--require-gpu")) require_gpu = 1;
        else if (!strcmp(argv[i], "--items") && i + 1 < argc) items = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes = parse_list(argv[++i], sizes, 8);
        else {
            fprintf(stderr, "usage: bench_batch [--json] [--quick] [--require-gpu] [--items N] [--sizes B,B,...]\n");
            return 2;
        }
    }
    if (quick) reps = 3, items = items > 10000 ? 10000 : items, gpu_single = 1000;
    if (!items || nsizes <= 0) {
        fprintf(stderr, BENCH_NAME ": --items must be > 0 and --sizes a list of byte counts\n");
        return 2;
    }
    tdm_config cfg;
    tdm_config_init(&cfg);
    tdm_ctx *ctx, *cpu;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) die("tdm_init", rc);
    tdm_config cc = cfg;
    cc.device = TDM_DEVICE_CPU;
    if ((rc = tdm_init(&cpu, &cc))) die("tdm_init", rc);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (require_gpu && !gpu) {
        fprintf(stderr, BENCH_NAME ": --require-gpu: no CUDA backend\n");
        return 1;
    }
    if (!json) printf("# %d threads, %s\n", tdm_ctx_threads(cpu), gpu ? gpu->description : "no GPU");
    uint8_t key[37];
    for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)(i * 29 + 3);
    double t[64];
    for (int s = 0; s < nsizes; s++) {
        size_t bytes = (size_t)sizes[s];
        workload w;
        make(&w, items, bytes, key, sizeof key);
        uint8_t *want = xmalloc(items * bytes);
        tdm_batch_stats st;
        TIME(t, one_by_one(cpu, &w, items));
        report("one-by-one", bytes, "cpu", items, t, reps, NULL);
        memcpy(want, w.out, items * bytes);
        memset(w.out, 0, items * bytes);
        TIME(t, batched(cpu, &w, items, TDM_DEVICE_AUTO, &st));
        report("batch", bytes, "cpu", items, t, reps, &st);
        check_same(want, &w, items, "batch cpu");
        if (gpu) {
            /* One round trip per item: a smaller count, reported per item. */
            size_t n1 = gpu_single < items ? gpu_single : items;
            memset(w.out, 0, items * bytes);
            TIME(t, one_by_one(ctx, &w, n1));
            report("one-by-one", bytes, gpu->name, n1, t, reps, NULL);
            check_same(want, &w, n1, "one-by-one gpu");
            memset(w.out, 0, items * bytes);
            TIME(t, batched(ctx, &w, items, TDM_DEVICE_CUDA, &st));
            report("batch", bytes, gpu->name, items, t, reps, &st);
            check_same(want, &w, items, "batch gpu");
            memset(w.out, 0, items * bytes);
            TIME(t, batched(ctx, &w, items, TDM_DEVICE_AUTO, &st));
            report("batch-auto", bytes, "router", items, t, reps, &st);
            check_same(want, &w, items, "batch auto");
        }
        free(want);
        unmake(&w);
    }
    tdm_destroy(cpu);
    tdm_destroy(ctx);
    return 0;
}
