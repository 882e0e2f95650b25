/* bench_router.c: the router's two figures (spec section 8, issue 6). (1) Decision cost: p50/p99 of
 * single tdm_route calls timed one by one (clock overhead reported beside them) on the model path (a
 * stand-in GPU backend and a trusted model, so every decision does the full arithmetic and writes its
 * record) and on this machine's own backends; target <= 1 us p99. (2) Quality: over size sweeps, the
 * router's pick against measured truth; a pick is good when its measured time is <= 1.1x the faster
 * backend's (target: >= 95 % of the sweep). Sweeps: the sequence query (the CPU engine's time and, when a
 * CUDA backend exists, the device tier's), lattice BFS full sweeps (4D/6 .. 4D/32, 2D/100 .. 2D/1000,
 * 3D/100; the lattice's CSR resident on the device, as repeated calls find it) and f32 GEMM on host
 * operands (64^2 .. 2048^2), both timed through the library's entry points with the op forced to each
 * backend in turn (TANDEM_ROUTE_<OP>), then placed once by the router as an application's call would be.
 * Without a GPU only the CPU side is measured: every pick is the CPU (NO_GPU), which the summary says.
 *
 * usage: bench_router [--decisions N] [--max-patterns N] [--metric lcs|difflib] [--runs R]
 *                     [--sweeps seq,bfs,gemm] */
#define _POSIX_C_SOURCE 200809L
#define BENCH_NAME "bench_router"
#include "bench_common.h"

#include "core/internal.h"
#include "tandem/backend.h"
#include "tandem/lattice.h"

static int stand_in_supports(const tdm_backend *b, tdm_op op) { return op == TDM_OP_SEQ_LCS || op == TDM_OP_SEQ_DIFFLIB; }
static void stand_in_destroy(tdm_backend *b) { free(b); }

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Times n decisions one by one; prints p50, p99, max and the mean over the whole loop. */
static void time_decisions(const char *label, tdm_ctx *ctx, tdm_op op, size_t n) {
    double *t = xmalloc(n * sizeof *t), sink = 0;
    tdm_route_decision d;
    double all0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        tdm_route_req q = {.op = op, .work = (double)(1000 + (i * 7919) % 10000000), .resident = (int)(i & 1)};
        double t0 = now_ns();
        int rc = tdm_route(ctx, &q, &d);
        t[i] = now_ns() - t0;
        if (rc) die("tdm_route", rc);
        sink += d.t_cpu_us;
    }
    double mean = (now_ns() - all0) / (double)n;
    qsort(t, n, sizeof *t, cmp_double);
    printf("  %-34s p50 %6.0f ns  p99 %6.0f ns  max %8.0f ns  loop mean %6.0f ns  (last reason %s)%s\n", label,
           percentile(t, n, 50), percentile(t, n, 99), t[n - 1], mean, tdm_route_reason_name(d.reason),
           sink == -1.2345 ? "!" : "");
    free(t);
}

static void decision_cost(size_t n) {
    printf("decision cost (%zu decisions each, one clock pair around each):\n", n);
    double *t = xmalloc(n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        double t0 = now_ns();
        t[i] = now_ns() - t0;
    }
    qsort(t, n, sizeof *t, cmp_double);
    printf("  %-34s p50 %6.0f ns  p99 %6.0f ns\n", "clock pair alone", percentile(t, n, 50), percentile(t, n, 99));
    free(t);
    tdm_config c;
    tdm_config_init(&c);
    c.calibrate = TDM_CALIBRATE_OFF;
    c.costmodel_path = "";
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &c);
    if (rc) die("tdm_init", rc);
    time_decisions("this machine's backends", ctx, TDM_OP_SEQ_LCS, n);
    /* The model path: a stand-in GPU (never run) and a trusted model fitted from a line. */
    tdm_backend *b = calloc(1, sizeof *b);
    b->name = "stand-in-gpu";
    b->kind = TDM_BACKEND_CUDA;
    b->supports = stand_in_supports;
    b->destroy = stand_in_destroy;
    ctx->backends[ctx->nbackends++] = b;
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    for (int g = 0; g < 2; g++) {
        double w[10], l[10] = {0}, us[10];
        for (int i = 0; i < 10; i++) w[i] = 1024.0 * pow(4, i), us[i] = g ? 400 + w[i] * 5e-4 : 2 + w[i] * 0.02;
        if ((rc = tdm_costmodel_fit(&m.cls[TDM_OP_SEQ_LCS][g], w, l, us, 10, 100))) die("fit", rc);
    }
    m.link_trusted = 1;
    m.h2d = m.d2h = (tdm_cost_link){10, 5e-5};
    if ((rc = tdm_costmodel_set(ctx, &m))) die("tdm_costmodel_set", rc);
    time_decisions("model path (stand-in GPU)", ctx, TDM_OP_SEQ_LCS, n);
    tdm_destroy(ctx);
}

/* Maps generator ranks to vocabulary ids of s ("s<rank>"), as `tandem seq gen` names them. */
static uint32_t rank_to_id(tdm_seq_store *s, uint32_t **map, size_t *cap, uint32_t rank) {
    if (rank >= *cap) {
        size_t nc = (size_t)rank * 2 + 1024;
        *map = realloc(*map, nc * sizeof **map);
        for (size_t i = *cap; i < nc; i++) (*map)[i] = UINT32_MAX;
        *cap = nc;
    }
    if ((*map)[rank] == UINT32_MAX) {
        char name[16];
        size_t len = tdm_seq_gen_symbol_name(rank, name);
        int rc = tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, len, &(*map)[rank]);
        if (rc) die("intern", rc);
    }
    return (*map)[rank];
}

static double time_query(tdm_seq_engine *e, int on_engine, tdm_seq_stm *stms, size_t nstm, const tdm_seq_query_opts *o,
                         int runs, const char **ran_on) {
    double *t = xmalloc((size_t)runs * sizeof *t);
    for (int r = -2; r < runs; r++) {
        tdm_seq_result res;
        double t0 = now_s();
        int rc = on_engine ? tdm_seq_engine_query(e, &stms[(r + 2) % nstm], o, &res)
                           : tdm_seq_query(tdm_seq_engine_store(e), &stms[(r + 2) % nstm], o, &res);
        double dt = now_s() - t0;
        if (rc) die("query", rc);
        if (ran_on) *ran_on = res.stats.backend ? res.stats.backend : "cpu";
        tdm_seq_result_clear(&res);
        if (r >= 0) t[r] = dt * 1e6;
    }
    double m = median(t, (size_t)runs);
    free(t);
    return m;
}

/* A context whose op classes are trusted on every backend it has (calibrated now when they are not). */
static tdm_ctx *routed_ctx(tdm_op op) {
    tdm_config c;
    tdm_config_init(&c);
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &c);
    if (rc) die("tdm_init", rc);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    if (!m.cls[op][0].trusted || (gpu && !m.cls[op][1].trusted)) {
        double t0 = now_s();
        if ((rc = tdm_calibrate(ctx, 1u << op)) && rc != TDM_E_IO) die("tdm_calibrate", rc);
        tdm_costmodel_get(ctx, &m);
        printf("calibrated %s in %.2f s (model %s): cpu %s, gpu %s\n", tdm_op_name(op), now_s() - t0,
               tdm_costmodel_path(ctx)[0] ? tdm_costmodel_path(ctx) : "not persisted",
               m.cls[op][0].trusted ? "trusted" : "NOT trusted", gpu ? (m.cls[op][1].trusted ? "trusted" : "NOT trusted") : "none");
    } else {
        printf("model from %s (calibrated %s)\n", tdm_costmodel_path(ctx), m.date);
    }
    return ctx;
}

static void sweep(uint32_t max_patterns, tdm_seq_metric metric, int runs) {
    tdm_op op = metric == TDM_SEQ_DIFFLIB ? TDM_OP_SEQ_DIFFLIB : TDM_OP_SEQ_LCS;
    tdm_ctx *ctx = routed_ctx(op);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    int rc;
    /* The GPU side is timed through an engine forced onto the device; the router is asked separately. */
    tdm_ctx *dctx = ctx;
    if (gpu) {
        tdm_config c;
        tdm_config_init(&c);
        c.seq_backend = TDM_DEVICE_CUDA;
        c.calibrate = TDM_CALIBRATE_OFF;
        if ((rc = tdm_init(&dctx, &c))) die("tdm_init (device)", rc);
    }
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    printf("\nsweep: %s threshold 0.1 queries, %d timed runs after 2 warm-ups, medians; GPU %s\n", tdm_op_name(op), runs,
           gpu ? gpu->description : "none (CPU side only)");
    printf("%9s %11s %11s %11s %11s %11s %-8s %-16s %s\n", "patterns", "symbols", "cpu us", "gpu us", "pred cpu", "pred gpu",
           "pick", "reason", "ok");
    patterns p;
    generate(42, max_patterns, &p);
    size_t *lens;
    uint32_t **raw = make_stms(42, 8, &p, 1000 < max_patterns ? 1000 : max_patterns, &lens);
    tdm_seq_store *s;
    if ((rc = tdm_seq_store_new(dctx, &s))) die("store", rc);
    tdm_seq_engine_opts eo;
    tdm_seq_engine_opts_init(dctx, &eo);
    eo.sync_interval_s = 0, eo.sync_threshold = 0, eo.gpu_min_patterns = 0;
    tdm_seq_engine *e;
    if ((rc = tdm_seq_engine_new(s, &eo, &e))) die("engine", rc);
    uint32_t *map = NULL, ids[64];
    size_t mapcap = 0;
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = metric;
    int good = 0, total = 0;
    double err_cpu = 0, err_gpu = 0;
    uint32_t have = 0;
    for (uint32_t n = 1000; n <= max_patterns; n *= 4) {
        for (; have < n; have++) {
            size_t len = p.off[have + 1] - p.off[have];
            for (size_t i = 0; i < len; i++) ids[i] = rank_to_id(s, &map, &mapcap, p.sym[p.off[have] + i]);
            if ((rc = tdm_seq_engine_learn(e, ids, len, NULL))) die("learn", rc);
        }
        if (gpu && (rc = tdm_seq_engine_sync(e))) die("sync", rc);
        tdm_seq_stm stms[8];
        for (int k = 0; k < 8; k++) {
            size_t L = lens[k] < 64 ? lens[k] : 64;
            for (size_t i = 0; i < L; i++) ids[i] = rank_to_id(s, &map, &mapcap, raw[k][i]);
            if ((rc = tdm_seq_stm_from_ids(tdm_seq_store_vocab(s), ids, L, &stms[k]))) die("stm", rc);
        }
        double cpu_us = time_query(e, 0, stms, 8, &o, runs, NULL), gpu_us = -1;
        const char *ran = "cpu";
        if (gpu) gpu_us = time_query(e, 1, stms, 8, &o, runs, &ran);
        uint64_t symbols = p.off[n] - p.off[0];
        tdm_route_req q = {.op = op, .work = (double)symbols, .resident = 1};
        tdm_route_decision d;
        if ((rc = tdm_route(ctx, &q, &d))) die("tdm_route", rc);
        int pick_gpu = d.backend->kind == TDM_BACKEND_CUDA;
        /* Without a GPU the router decides before predicting; the model's CPU figure is still shown. */
        if (d.t_cpu_us < 0) d.t_cpu_us = tdm_costmodel_predict(&m, op, 0, (double)symbols, 0);
        double best = gpu_us >= 0 && gpu_us < cpu_us ? gpu_us : cpu_us, chosen = pick_gpu ? gpu_us : cpu_us;
        int ok = chosen >= 0 && chosen <= 1.1 * best;
        good += ok, total++;
        if (d.t_cpu_us > 0) err_cpu += fabs(d.t_cpu_us - cpu_us) / cpu_us;
        if (d.t_gpu_us > 0 && gpu_us > 0) err_gpu += fabs(d.t_gpu_us - gpu_us) / gpu_us;
        printf("%9u %11llu %11.1f %11.1f %11.1f %11.1f %-8s %-16s %s%s\n", n, (unsigned long long)symbols, cpu_us, gpu_us,
               d.t_cpu_us, d.t_gpu_us, d.backend->name, tdm_route_reason_name(d.reason), ok ? "yes" : "NO",
               gpu && strcmp(ran, gpu->name) ? " (device query ran on the CPU)" : "");
        for (int k = 0; k < 8; k++) tdm_seq_stm_clear(&stms[k]);
    }
    printf("\npicks within 1.1x of the faster measured backend: %d of %d (%.0f %%)\n", good, total, 100.0 * good / total);
    printf("mean relative prediction error: cpu %.0f %%%s\n", 100.0 * err_cpu / total,
           gpu ? "" : " (gpu: no GPU on this machine)");
    if (gpu) printf("mean relative prediction error: gpu %.0f %%\n", 100.0 * err_gpu / total);
    tdm_seq_engine_free(e);
    for (int k = 0; k < 8; k++) free(raw[k]);
    free(raw), free(lens), free(map), free(p.sym), free(p.off);
    if (dctx != ctx) tdm_destroy(dctx);
    tdm_destroy(ctx);
}

/* ---- lattice sweeps ------------------------------------------------------------------------------------ */


/* Median microseconds of `runs` calls of fn(arg) after 2 warm-ups. */
static double time_calls(void (*fn)(void *), void *arg, int runs) {
    double *t = xmalloc((size_t)runs * sizeof *t);
    for (int r = -2; r < runs; r++) {
        double t0 = now_s();
        fn(arg);
        if (r >= 0) t[r] = (now_s() - t0) * 1e6;
    }
    double m = median(t, (size_t)runs);
    free(t);
    return m;
}

/* One sweep row: cpu/gpu measured by forcing the op (TANDEM_ROUTE_<OP> set in the context), then the pick of
 * one routed call (the newest decision record). Returns 1 when the pick is within 1.1x of the faster. */
typedef struct {
    int good, total;
    double err_cpu, err_gpu;
    int n_err_gpu;
} sweep_tally;

static int measure_row(tdm_ctx *ctx, tdm_op op, void (*fn)(void *), void *arg, int runs, const char *label, double work,
                       double levels, sweep_tally *tally) {
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    double gpu_us = -1.0;
    if (gpu && gpu->supports(gpu, op)) {
        ctx->cfg.route_op[op] = TDM_DEVICE_CUDA;
        gpu_us = time_calls(fn, arg, runs);
    }
    ctx->cfg.route_op[op] = TDM_DEVICE_CPU;
    double cpu_us = time_calls(fn, arg, runs);
    ctx->cfg.route_op[op] = TDM_CONFIG_UNSET_OP;
    fn(arg);
    tdm_route_record r;
    size_t n;
    tdm_route_log_read(ctx, &r, 1, &n);
    if (!n || r.op != op) die("no decision record (TANDEM_ROUTE_LOG=0?)", TDM_E_INVAL);
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    /* Without a GPU the router decides before predicting; the model's CPU figure is still shown. */
    if (r.t_cpu_us < 0) r.t_cpu_us = tdm_costmodel_predict(&m, op, 0, r.work, 0);
    double best = gpu_us >= 0 && gpu_us < cpu_us ? gpu_us : cpu_us, chosen = r.chosen_gpu ? gpu_us : cpu_us;
    int ok = chosen >= 0 && chosen <= 1.1 * best;
    tally->good += ok, tally->total++;
    if (r.t_cpu_us > 0) tally->err_cpu += fabs(r.t_cpu_us - cpu_us) / cpu_us;
    if (r.t_gpu_us > 0 && gpu_us > 0) tally->err_gpu += fabs(r.t_gpu_us - gpu_us) / gpu_us, tally->n_err_gpu++;
    printf("%-10s %11.0f %7.0f %11.1f %11.1f %11.1f %11.1f %-8s %-16s %s\n", label, work, levels, cpu_us, gpu_us, r.t_cpu_us,
           r.t_gpu_us, r.chosen_gpu ? gpu->name : "cpu", tdm_route_reason_name(r.reason), ok ? "yes" : "NO");
    return ok;
}

static void tally_print(const tdm_ctx *ctx, const sweep_tally *t) {
    const int gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA) != NULL;
    printf("\npicks within 1.1x of the faster measured backend: %d of %d (%.0f %%)%s\n", t->good, t->total,
           100.0 * t->good / (t->total ? t->total : 1), gpu ? "" : " -- no GPU on this machine: every pick is the CPU (NO_GPU)");
    printf("mean relative prediction error: cpu %.0f %%", 100.0 * t->err_cpu / (t->total ? t->total : 1));
    if (t->n_err_gpu) printf(", gpu %.0f %%", 100.0 * t->err_gpu / t->n_err_gpu);
    printf("\n");
}

typedef struct {
    tdm_ctx *ctx;
    tdm_lattice_csr g;
    int32_t *dist;
} bfs_arg;

static void bfs_call(void *p) {
    bfs_arg *a = p;
    int64_t s = 0;
    int rc = tdm_lattice_bfs_multi(a->ctx, &a->g, &s, 1, a->dist, NULL);
    if (rc) die("sweep", rc);
}

static void sweep_bfs(int runs, int quick) {
    static const int shapes[][2] = {{4, 6}, {4, 8},   {4, 10},  {4, 14},  {4, 18},  {4, 24},   {4, 32},
                                    {2, 100}, {2, 200}, {2, 400}, {2, 700}, {2, 1000}, {3, 100}};
    tdm_ctx *ctx = routed_ctx(TDM_OP_LATTICE_BFS);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    printf("\nsweep: lattice.bfs full sweeps from vertex 0 (CSR resident on the device after its first call), %d timed runs "
           "after 2 warm-ups, medians; GPU %s\n",
           runs, gpu ? gpu->description : "none (CPU side only)");
    printf("%-10s %11s %7s %11s %11s %11s %11s %-8s %-16s %s\n", "lattice", "arcs", "levels", "cpu us", "gpu us", "pred cpu",
           "pred gpu", "pick", "reason", "ok");
    sweep_tally t = {0};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const int d = shapes[i][0];
        const int64_t L = shapes[i][1];
        if (quick && ((d == 4 && L > 18) || (d == 2 && L > 400))) continue;
        tdm_lattice *lat;
        int rc = tdm_lattice_new(ctx, d, L, 0, &lat);
        if (rc) die("lattice", rc);
        bfs_arg a = {.ctx = ctx};
        tdm_lattice_get_csr(lat, &a.g);
        a.dist = xmalloc((size_t)a.g.nvertices * sizeof *a.dist);
        char label[32];
        snprintf(label, sizeof label, "%dD/%lld", d, (long long)L);
        measure_row(ctx, TDM_OP_LATTICE_BFS, bfs_call, &a, runs, label, (double)a.g.row_ptr[a.g.nvertices],
                    (double)d * (double)(L - 1), &t);
        free(a.dist);
        tdm_lattice_free(lat);
    }
    tally_print(ctx, &t);
    tdm_destroy(ctx);
}

typedef struct {
    tdm_ctx *ctx;
    int64_t n;
    float *A, *B, *C;
} gemm_arg;

static void gemm_call(void *p) {
    gemm_arg *a = p;
    int rc = tdm_lattice_gemm(a->ctx, TDM_LATTICE_F32, TDM_LATTICE_NOTRANS, TDM_LATTICE_NOTRANS, a->n, a->n, a->n, 1.0, a->A,
                              a->n, a->B, a->n, 0.0, a->C, a->n);
    if (rc) die("gemm", rc);
}

static void sweep_gemm(int runs, int quick) {
    static const int64_t sides[] = {64, 128, 256, 512, 1024, 2048};
    tdm_ctx *ctx = routed_ctx(TDM_OP_LATTICE_GEMM);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    printf("\nsweep: lattice.gemm f32 n x n x n on host operands (copies included), %d timed runs after 2 warm-ups, "
           "medians; GPU %s\n",
           runs, gpu ? gpu->description : "none (CPU side only)");
    printf("%-10s %11s %7s %11s %11s %11s %11s %-8s %-16s %s\n", "n", "m*n*k", "", "cpu us", "gpu us", "pred cpu", "pred gpu",
           "pick", "reason", "ok");
    sweep_tally t = {0};
    for (size_t i = 0; i < sizeof sides / sizeof *sides; i++) {
        const int64_t n = sides[i];
        if (quick && n > 512) continue;
        gemm_arg a = {.ctx = ctx, .n = n};
        a.A = xmalloc((size_t)(n * n) * 4), a.B = xmalloc((size_t)(n * n) * 4), a.C = xmalloc((size_t)(n * n) * 4);
        for (int64_t k = 0; k < n * n; k++) a.A[k] = (float)(k % 17) * 0.25f, a.B[k] = (float)(k % 13) * 0.5f;
        char label[32];
        snprintf(label, sizeof label, "%lld^2", (long long)n);
        /* 2048^3 takes seconds on a small CPU: fewer runs there. */
        measure_row(ctx, TDM_OP_LATTICE_GEMM, gemm_call, &a, n >= 1024 && runs > 3 ? 3 : runs, label, (double)(n * n * n), 0, &t);
        free(a.A), free(a.B), free(a.C);
    }
    tally_print(ctx, &t);
    tdm_destroy(ctx);
}

int main(int argc, char **argv) {
    size_t decisions = 1000000;
    unsigned long long maxp = 256000;
    int runs = 10;
    tdm_seq_metric metric = TDM_SEQ_LCS;
    const char *sweeps = "seq,bfs,gemm";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--decisions") && i + 1 < argc) decisions = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--max-patterns") && i + 1 < argc) maxp = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sweeps") && i + 1 < argc) sweeps = argv[++i];
        else if (!strcmp(argv[i], "--metric") && i + 1 < argc) {
            if (tdm_seq_metric_parse(argv[++i], &metric) || metric == TDM_SEQ_CHAR) {
                fprintf(stderr, BENCH_NAME ": --metric lcs|difflib\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_router [--decisions N] [--max-patterns N] [--metric lcs|difflib] [--runs R] "
                            "[--sweeps seq,bfs,gemm]\n");
            return 2;
        }
    }
    if (!decisions || maxp < 1000 || maxp > 100000000 || runs < 1) {
        fprintf(stderr, BENCH_NAME ": bad arguments\n");
        return 2;
    }
    const int quick = getenv("TANDEM_BENCH_QUICK") != NULL;
    if (quick) decisions = decisions < 100000 ? decisions : 100000, maxp = maxp < 64000 ? maxp : 64000;
    (void)parse_list; /* bench_common.h helper this program does not need */
    decision_cost(decisions);
    if (strstr(sweeps, "seq")) {
        printf("\n");
        sweep((uint32_t)maxp, metric, runs);
    }
    if (strstr(sweeps, "bfs")) sweep_bfs(runs, quick);
    if (strstr(sweeps, "gemm")) sweep_gemm(runs, quick);
    return 0;
}
