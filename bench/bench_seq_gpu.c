/* bench_seq_gpu.c: measures the dual-tier sequence engine (tdm_seq_engine) on the CUDA backend and on the
 * CPU through the library API, so that the GPU figures in bench/RESULTS.md have one source. For each store
 * size and backend it reports store and engine build time (the engine's build is the initial upload),
 * query latency p50/p99 with the mean hits and the engine's time split (filter, score, select, copy) for
 * lcs and difflib at thresholds 0.1/0.5/0.8 and top-100 (and the p50 again into one result kept from query
 * to query, tdm_seq_query_opts.reuse: "kept p50"), batched throughput, learn latency alone and until
 * the learned pattern is visible to a query, sync time per 1,000 patterns, and device bytes per pattern.
 *
 * Every backend is forced through the context (TANDEM_SEQ_BACKEND), and every answer is checked to come
 * from where it was asked to run (stats.backend): without a usable GPU the cuda rows say "unavailable"
 * instead of timing the CPU under the GPU's name. Where both backends run at a size, a few queries of
 * every cell are compared bit for bit (ids, order, similarity bits); the run fails on any mismatch.
 *
 * The data and the STMs are bench_seq.c's (bench/README.md): the shared generator's stream with the same
 * seed, ranks interned as "s<rank>" first (store id = rank), stores of different sizes prefixes of one
 * stream; near/fresh STMs alternating from their own stream (seed + 1): bench_common.h makes both. */
#include "tandem/backend.h"
#include "tandem/seq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench_seq_gpu"
#include "bench_common.h"      /* data, STMs, timing, errors (shared with bench_seq.c) */
#include "bench_seq_gpu_opts.h" /* options, --help */

#define NCELLS 8 /* 2 metrics x (3 thresholds + top-k) */

/* Latency summary: nearest-rank percentiles (p99 of fewer than 100 values is the maximum), as bench_seq. */
typedef struct {
    uint32_t n;
    double p50, p99, mean, min, max;
} lstat;

static void summarize(const double *v, uint32_t n, lstat *s) {
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n) return;
    double *t = xmalloc(n * sizeof *t), sum = 0;
    memcpy(t, v, n * sizeof *t);
    qsort(t, n, sizeof *t, cmp_double);
    for (uint32_t i = 0; i < n; i++) sum += t[i];
    s->p50 = percentile(t, n, 50), s->p99 = percentile(t, n, 99);
    s->mean = sum / n, s->min = t[0], s->max = t[n - 1];
    free(t);
}

/* ---- one backend at one size ----------------------------------------------------------------------- */

typedef struct {
    int metric;
    double threshold;
    uint32_t top_k;
    lstat lat;
    lstat kept; /* the same queries into one result kept from query to query (opts.reuse) */
    double *lat_ms;
    double hits, scored, filter_ms, score_ms, select_ms, copy_ms, device_patterns, recent_patterns; /* means */
    uint32_t elsewhere; /* answers not computed where this backend was forced (must stay 0) */
} cell;

typedef struct {
    int kind;
    int available;
    char reason[256];
    const char *device; /* the backend name answers must carry ("cuda:0", "cpu") */
    double store_build_s, engine_build_s, initial_sync_ms;
    uint64_t host_bytes, device_patterns, device_bytes, device_reserved_bytes;
    int device_full;
    cell cells[NCELLS];
    int ncells;
    double batch_qps;
    uint32_t batch_n;
    int batch_reps;
    uint32_t batch_elsewhere;
    lstat learn_ms, visible_ms, visible_learn_ms;
    uint32_t visible_missing;    /* learned patterns a following query did not return (must stay 0) */
    uint64_t learn_syncs;        /* syncs that ran during the learn loops (count trigger) */
    double sync_ms, sync_engine_ms; /* median wall time of tdm_seq_engine_sync, and its last_sync_ms */
    uint32_t sync_patterns;
    int sync_reps;
    tdm_seq_engine *engine;
    tdm_seq_stm *stms;
} brow;

typedef struct {
    uint32_t patterns;
    uint64_t symbols;
    brow rows[2];
    int nrows;
    uint32_t compared, mismatches; /* cross-backend checks at this size; compared = 0: not both ran */
} srow;

static tdm_ctx *make_ctx(int kind, int threads) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.seq_backend = kind == BK_CUDA ? TDM_DEVICE_CUDA : TDM_DEVICE_CPU;
    cfg.device = kind == BK_CUDA ? TDM_DEVICE_AUTO : TDM_DEVICE_CPU;
    cfg.strict = 0; /* a missing GPU is reported as such by this program, not by tdm_init */
    cfg.threads = threads;
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) die("tdm_init", rc);
    return ctx;
}

/* Why a context cannot run the device tier ("" when it can). */
static const tdm_backend *cuda_backend(const tdm_ctx *ctx, char *why, size_t cap) {
    const tdm_backend *b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (!b) snprintf(why, cap, "no CUDA backend (no GPU, or libtandem_cuda.so did not load; TANDEM_LOG_LEVEL=info says why)");
    else if (!b->seq) snprintf(why, cap, "%s has no sequence entry points", b->name);
    else return b;
    return NULL;
}

static void query_opts(const options *o, int metric, double thr, uint32_t top_k, tdm_seq_query_opts *qo) {
    tdm_seq_query_opts_init(qo);
    qo->metric = (tdm_seq_metric)metric;
    qo->threshold = thr;
    qo->top_k = top_k;
    qo->threads = o->threads;
}

/* An answer ran where it was forced: on the device for cuda (whenever the device tier holds patterns), on
 * the CPU for cpu, never as a fallback after a device error. */
static int ran_where_asked(const brow *b, const tdm_seq_query_stats *st) {
    if (st->route_reason == TDM_ROUTE_DEVICE_ERROR || !st->backend) return 0;
    if (b->kind == BK_CUDA && b->device_patterns == 0) return 1;
    return !strcmp(st->backend, b->device);
}

/* Builds the store of the first n patterns and the engine over it. */
static void build_engine(const options *o, tdm_ctx *ctx, const patterns *p, uint32_t n, brow *b) {
    tdm_seq_store *s;
    uint64_t vocab_bytes;
    b->store_build_s = build_store(ctx, p, n, &s, &vocab_bytes); /* bench_common.h, as bench_seq's */
    b->host_bytes = tdm_seq_store_bytes(s);
    tdm_seq_engine_opts eo;
    tdm_seq_engine_opts_init(ctx, &eo);
    double t0 = now_s();
    int rc;
    if ((rc = tdm_seq_engine_new(s, &eo, &b->engine))) die("engine_new", rc);
    b->engine_build_s = now_s() - t0;
    tdm_seq_engine_stats es;
    tdm_seq_engine_stats_get(b->engine, &es);
    b->initial_sync_ms = es.last_sync_ms;
    b->device_patterns = es.device_patterns;
    b->device_bytes = es.device_bytes;
    b->device_reserved_bytes = es.device_reserved_bytes;
    b->device_full = es.device_full;
    if (b->kind == BK_CUDA && (!es.device || es.device_failed || (n && !es.device_patterns))) {
        b->available = 0;
        snprintf(b->reason, sizeof b->reason, "the engine made no device tier (device %s, failed %d, %llu of %u patterns "
                 "on it)", es.device ? es.device : "none", es.device_failed, (unsigned long long)es.device_patterns, n);
    }
    (void)o;
}

static void run_cell(const options *o, brow *b, cell *c) {
    tdm_seq_query_opts qo;
    query_opts(o, c->metric, c->threshold, c->top_k, &qo);
    tdm_seq_result r;
    int rc;
    for (uint32_t i = 0; i < 3 && i < o->queries; i++) { /* warm-up: caches, pools, thread teams */
        if ((rc = tdm_seq_engine_query(b->engine, &b->stms[i], &qo, &r))) die("query", rc);
        tdm_seq_result_clear(&r);
    }
    c->lat_ms = xmalloc(o->queries * sizeof *c->lat_ms);
    double sums[8] = {0}, start = now_s();
    uint32_t n = 0;
    while (n < o->queries) {
        double t0 = now_s();
        rc = tdm_seq_engine_query(b->engine, &b->stms[n], &qo, &r);
        double t1 = now_s();
        if (rc) die("query", rc);
        c->lat_ms[n] = (t1 - t0) * 1e3;
        const tdm_seq_query_stats *st = &r.stats;
        sums[0] += (double)r.n, sums[1] += (double)st->scored, sums[2] += st->filter_ms, sums[3] += st->score_ms;
        sums[4] += st->select_ms, sums[5] += st->copy_ms, sums[6] += (double)st->device_patterns;
        sums[7] += (double)st->recent_patterns;
        if (!ran_where_asked(b, st)) c->elsewhere++;
        tdm_seq_result_clear(&r);
        n++;
        if (n >= o->min_queries && t1 - start > o->budget_s) break;
    }
    summarize(c->lat_ms, n, &c->lat);
    /* The same queries again into one result the caller keeps (opts.reuse): no fresh answer memory. */
    qo.reuse = 1;
    tdm_seq_result kept = {0};
    double *kept_ms = xmalloc(n * sizeof *kept_ms);
    for (uint32_t i = 0; i < n + 3; i++) {
        double t0 = now_s();
        rc = tdm_seq_engine_query(b->engine, &b->stms[i < 3 ? i : i - 3], &qo, &kept);
        double t1 = now_s();
        if (rc) die("query", rc);
        if (i >= 3) kept_ms[i - 3] = (t1 - t0) * 1e3; /* the first three warm the kept array up */
    }
    summarize(kept_ms, n, &c->kept);
    free(kept_ms);
    tdm_seq_result_clear(&kept);
    c->hits = sums[0] / n, c->scored = sums[1] / n, c->filter_ms = sums[2] / n, c->score_ms = sums[3] / n;
    c->select_ms = sums[4] / n, c->copy_ms = sums[5] / n, c->device_patterns = sums[6] / n;
    c->recent_patterns = sums[7] / n;
}

/* lcs at 0.5, o->batch queries (the STM list repeated) per tdm_seq_engine_query_batch call. */
static void run_batch(const options *o, brow *b) {
    tdm_seq_query_opts qo;
    query_opts(o, TDM_SEQ_LCS, 0.5, 0, &qo);
    tdm_seq_stm *list = xmalloc(o->batch * sizeof *list);
    for (uint32_t i = 0; i < o->batch; i++) list[i] = b->stms[i % o->queries];
    tdm_seq_result *out = xmalloc(o->batch * sizeof *out);
    double reps[16], start = now_s();
    int nrep = 0, rc;
    while (nrep < o->batch_reps && nrep < 16) {
        double t0 = now_s();
        if ((rc = tdm_seq_engine_query_batch(b->engine, list, o->batch, &qo, out))) die("query_batch", rc);
        reps[nrep++] = now_s() - t0;
        for (uint32_t i = 0; i < o->batch; i++) {
            if (!ran_where_asked(b, &out[i].stats)) b->batch_elsewhere++;
            tdm_seq_result_clear(&out[i]);
        }
        if (now_s() - start > o->budget_s) break;
    }
    b->batch_n = o->batch, b->batch_reps = nrep;
    b->batch_qps = o->batch / median(reps, (size_t)nrep);
    free(out);
    free(list);
}

static int has_id(const tdm_seq_result *r, uint32_t id) {
    for (size_t i = 0; i < r->n; i++)
        if (r->hits[i].id == id) return 1;
    return 0;
}

/* Learn latency alone, then learn + a query that must return the new pattern (lcs at 0.8 with the
 * pattern itself as the STM), then sync time per o->sync_patterns patterns learned in training mode. The
 * fresh patterns come from their own stream (seed + 3), the same for every backend. */
static void run_learns(const options *o, brow *b) {
    tdm_seq_gen_opts go;
    tdm_seq_gen_opts_init(&go);
    tdm_seq_gen *g = new_gen(o->seed + 3);
    uint32_t *pat = xmalloc(go.max_len * sizeof *pat);
    double *lat = xmalloc((size_t)o->learns * sizeof *lat), *lat2 = xmalloc((size_t)o->learns * sizeof *lat2);
    tdm_seq_engine_stats es0, es1;
    tdm_seq_engine_stats_get(b->engine, &es0);
    int rc;
    uint32_t n = 0;
    double start = now_s();
    while (n < o->learns) {
        size_t len;
        tdm_seq_gen_next(g, pat, &len);
        double t0 = now_s();
        if ((rc = tdm_seq_engine_learn(b->engine, pat, len, NULL))) die("learn", rc);
        double t1 = now_s();
        lat[n++] = (t1 - t0) * 1e3;
        if (n >= o->min_queries && t1 - start > o->budget_s) break;
    }
    summarize(lat, n, &b->learn_ms);
    /* The visible loop starts from an empty recent tier, as after any sync. */
    if ((rc = tdm_seq_engine_sync(b->engine))) die("sync", rc);
    tdm_seq_query_opts qo;
    query_opts(o, TDM_SEQ_LCS, 0.8, 0, &qo);
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(tdm_seq_engine_store(b->engine));
    n = 0;
    start = now_s();
    while (n < o->learns) {
        size_t len;
        tdm_seq_gen_next(g, pat, &len);
        tdm_seq_stm stm;
        /* The STM is the caller's to prepare before it learns (its ids are vocabulary ranks already). */
        if ((rc = tdm_seq_stm_from_ids(v, pat, len, &stm))) die("stm", rc);
        tdm_seq_result r;
        uint32_t id;
        double t0 = now_s();
        if ((rc = tdm_seq_engine_learn(b->engine, pat, len, &id))) die("learn", rc);
        double t1 = now_s();
        if ((rc = tdm_seq_engine_query(b->engine, &stm, &qo, &r))) die("visible query", rc);
        double t2 = now_s();
        lat[n] = (t2 - t0) * 1e3, lat2[n] = (t1 - t0) * 1e3;
        if (!has_id(&r, id)) b->visible_missing++;
        tdm_seq_result_clear(&r);
        tdm_seq_stm_clear(&stm);
        n++;
        if (n >= o->min_queries && t2 - start > o->budget_s) break;
    }
    summarize(lat, n, &b->visible_ms);
    summarize(lat2, n, &b->visible_learn_ms);
    tdm_seq_engine_stats_get(b->engine, &es1);
    for (int t = 0; t < TDM_SEQ_SYNC_TRIGGERS; t++)
        if (t != TDM_SEQ_SYNC_MANUAL) b->learn_syncs += es1.syncs[t] - es0.syncs[t];
    /* Sync: training mode holds the automatic triggers back while the batch is learned. */
    if ((rc = tdm_seq_engine_sync(b->engine))) die("sync", rc);
    double wall[16], eng[16];
    int reps = 0;
    while (reps < o->sync_reps && reps < 16) {
        if ((rc = tdm_seq_engine_training(b->engine, 1, 0))) die("training", rc);
        for (uint32_t k = 0; k < o->sync_patterns; k++) {
            size_t len;
            tdm_seq_gen_next(g, pat, &len);
            if ((rc = tdm_seq_engine_learn(b->engine, pat, len, NULL))) die("learn", rc);
        }
        double t0 = now_s();
        if ((rc = tdm_seq_engine_sync(b->engine))) die("sync", rc);
        wall[reps] = (now_s() - t0) * 1e3;
        tdm_seq_engine_stats_get(b->engine, &es1);
        eng[reps++] = es1.last_sync_ms;
        if ((rc = tdm_seq_engine_training(b->engine, 0, 0))) die("training", rc);
    }
    b->sync_reps = reps, b->sync_patterns = o->sync_patterns;
    b->sync_ms = median(wall, (size_t)reps), b->sync_engine_ms = median(eng, (size_t)reps);
    free(lat), free(lat2), free(pat);
    tdm_seq_gen_free(g);
}

/* The first o->verify queries of every cell on both engines, bit for bit. */
static void cross_check(const options *o, srow *sr, const brow *a, const brow *b) {
    for (int k = 0; k < a->ncells; k++) {
        const cell *c = &a->cells[k];
        tdm_seq_query_opts qo;
        query_opts(o, c->metric, c->threshold, c->top_k, &qo);
        for (uint32_t i = 0; i < o->verify && i < o->queries; i++) {
            tdm_seq_result ra, rb;
            int rc;
            if ((rc = tdm_seq_engine_query(a->engine, &a->stms[i], &qo, &ra))) die("verify query", rc);
            if ((rc = tdm_seq_engine_query(b->engine, &b->stms[i], &qo, &rb))) die("verify query", rc);
            sr->compared++;
            size_t bad = ra.n != rb.n ? 0 : SIZE_MAX;
            for (size_t h = 0; h < ra.n && bad == SIZE_MAX; h++)
                if (ra.hits[h].id != rb.hits[h].id || memcmp(&ra.hits[h].similarity, &rb.hits[h].similarity, sizeof(double)))
                    bad = h;
            if (bad != SIZE_MAX) {
                sr->mismatches++;
                fprintf(stderr, "bench_seq_gpu: MISMATCH at %u patterns, %s %s %g top %u, query %u: %s %zu hits, %s %zu",
                        sr->patterns, tdm_seq_metric_name(qo.metric), c->top_k ? "top_k" : "threshold", c->threshold,
                        c->top_k, i, BK_NAME[a->kind], ra.n, BK_NAME[b->kind], rb.n);
                if (bad < ra.n && bad < rb.n)
                    fprintf(stderr, "; row %zu: id %u %.17g vs id %u %.17g", bad, ra.hits[bad].id, ra.hits[bad].similarity,
                            rb.hits[bad].id, rb.hits[bad].similarity);
                fputc('\n', stderr);
            }
            tdm_seq_result_clear(&ra), tdm_seq_result_clear(&rb);
        }
    }
}

/* ---- output ---------------------------------------------------------------------------------------- */

static const char *mode_name(const cell *c, char *buf) {
    if (c->top_k) snprintf(buf, 32, "top-%u", c->top_k);
    else snprintf(buf, 32, "thr %.1f", c->threshold);
    return buf;
}

static const char *cell_header = "%-9s %-5s %-7s %-8s %5s %9s %9s %9s %10s %9s %9s %9s %9s %9s\n";

static void print_cell(uint32_t size, const brow *b, const cell *c) {
    char m[32];
    printf("%-9u %-5s %-7s %-8s %5u %9.3f %9.3f %9.3f %10.1f %9.3f %9.3f %9.3f %9.3f %9.3f%s\n", size, BK_NAME[b->kind],
           tdm_seq_metric_name((tdm_seq_metric)c->metric), mode_name(c, m), c->lat.n, c->lat.p50, c->lat.p99, c->lat.mean,
           c->hits, c->filter_ms, c->score_ms, c->select_ms, c->copy_ms, c->kept.p50, c->elsewhere ? "  WRONG BACKEND" : "");
}

static const char *sum_header = "%-9s %-5s %8s %9s %10s %9s %9s %9s %9s %10s %10s %11s\n";

static void print_summary(uint32_t size, const brow *b) {
    if (!b->available) {
        printf("%-9u %-5s unavailable: %s\n", size, BK_NAME[b->kind], b->reason);
        return;
    }
    printf("%-9u %-5s %8.3f %9.3f %10.1f %9.4f %9.4f %9.3f %9.3f %10.2f %10.1f %11.1f%s\n", size, BK_NAME[b->kind],
           b->store_build_s, b->engine_build_s, b->batch_qps, b->learn_ms.p50, b->learn_ms.p99, b->visible_ms.p50,
           b->visible_ms.p99, b->sync_patterns ? b->sync_ms * 1000.0 / b->sync_patterns : 0.0,
           b->device_patterns ? (double)b->device_bytes / (double)b->device_patterns : 0.0,
           (double)b->device_reserved_bytes / 1048576.0, b->visible_missing ? "  NOT VISIBLE" : "");
}

static void json_lstat(FILE *f, const char *name, const lstat *s) {
    fprintf(f, "\"%s\": {\"n\": %u, \"p50\": %.6f, \"p99\": %.6f, \"mean\": %.6f, \"min\": %.6f, \"max\": %.6f}", name, s->n,
            s->p50, s->p99, s->mean, s->min, s->max);
}

static void write_json(const options *o, const srow *sr, int nsr, const char *cuda_desc, const char *cuda_why, int cores,
                       double mean_stm_len, const tdm_seq_engine_opts *eo) {
    FILE *f = fopen(o->json, "w");
    if (!f) {
        perror(o->json);
        exit(1);
    }
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fprintf(f, "{\n  \"tool\": \"bench_seq_gpu\", \"tandem_version\": \"%s\", \"date\": \"%s\", \"online_cores\": %d, "
               "\"threads\": %d,\n",
            tdm_version(), date, cores, o->threads);
    fprintf(f, "  \"seed\": %llu, \"quick\": %s, \"budget_s\": %g, \"min_queries\": %u, \"batch\": %u, \"batch_reps\": %d, "
               "\"learns\": %u, \"sync_patterns\": %u, \"sync_reps\": %d, \"verify\": %u, \"top_k\": %u,\n",
            (unsigned long long)o->seed, o->quick ? "true" : "false", o->budget_s, o->min_queries, o->batch, o->batch_reps,
            o->learns, o->sync_patterns, o->sync_reps, o->verify, o->top_k);
    fprintf(f, "  \"engine_opts\": {\"sync_threshold\": %u, \"sync_interval_s\": %g},\n", eo->sync_threshold,
            eo->sync_interval_s);
    fprintf(f, "  \"cuda\": {\"available\": %s, \"description\": \"%s\", \"reason\": \"%s\"},\n", cuda_why[0] ? "false" : "true",
            cuda_desc, cuda_why);
    fprintf(f, "  \"stms\": {\"count\": %u, \"near\": %u, \"fresh\": %u, \"mean_length\": %.3f},\n", o->queries,
            (o->queries + 1) / 2, o->queries / 2, mean_stm_len);
    uint32_t mism = 0, compared = 0;
    fputs("  \"sizes\": [\n", f);
    for (int s = 0; s < nsr; s++) {
        mism += sr[s].mismatches, compared += sr[s].compared;
        fprintf(f, "    {\"patterns\": %u, \"symbols\": %llu, \"compared\": %u, \"mismatches\": %u, \"backends\": [\n",
                sr[s].patterns, (unsigned long long)sr[s].symbols, sr[s].compared, sr[s].mismatches);
        for (int k = 0; k < sr[s].nrows; k++) {
            const brow *b = &sr[s].rows[k];
            fprintf(f, "      {\"backend\": \"%s\", \"available\": %s, \"reason\": \"%s\"", BK_NAME[b->kind],
                    b->available ? "true" : "false", b->reason);
            if (b->available) {
                fprintf(f, ", \"device\": \"%s\", \"store_build_s\": %.6f, \"engine_build_s\": %.6f, \"initial_sync_ms\": %.4f, "
                           "\"host_bytes\": %llu, \"device_patterns\": %llu, \"device_bytes\": %llu, "
                           "\"device_reserved_bytes\": %llu, \"device_bytes_per_pattern\": %.3f, \"device_full\": %d,\n",
                        b->device, b->store_build_s, b->engine_build_s, b->initial_sync_ms,
                        (unsigned long long)b->host_bytes, (unsigned long long)b->device_patterns,
                        (unsigned long long)b->device_bytes, (unsigned long long)b->device_reserved_bytes,
                        b->device_patterns ? (double)b->device_bytes / (double)b->device_patterns : 0.0, b->device_full);
                fprintf(f, "       \"batch\": {\"metric\": \"lcs\", \"threshold\": 0.5, \"queries_per_call\": %u, \"reps\": %d, "
                           "\"qps\": %.3f, \"wrong_backend\": %u},\n       ",
                        b->batch_n, b->batch_reps, b->batch_qps, b->batch_elsewhere);
                json_lstat(f, "learn_ms", &b->learn_ms);
                fputs(", ", f);
                json_lstat(f, "learn_visible_ms", &b->visible_ms);
                fputs(",\n       ", f);
                json_lstat(f, "learn_in_visible_loop_ms", &b->visible_learn_ms);
                fprintf(f, ", \"visible_missing\": %u, \"syncs_during_learns\": %llu,\n", b->visible_missing,
                        (unsigned long long)b->learn_syncs);
                fprintf(f, "       \"sync\": {\"patterns\": %u, \"reps\": %d, \"wall_ms\": %.4f, \"engine_last_sync_ms\": %.4f, "
                           "\"ms_per_1000_patterns\": %.4f},\n       \"queries\": [\n",
                        b->sync_patterns, b->sync_reps, b->sync_ms, b->sync_engine_ms,
                        b->sync_patterns ? b->sync_ms * 1000.0 / b->sync_patterns : 0.0);
                for (int c = 0; c < b->ncells; c++) {
                    const cell *x = &b->cells[c];
                    fprintf(f, "        {\"metric\": \"%s\", \"mode\": \"%s\", \"threshold\": %g, \"top_k\": %u, "
                               "\"n\": %u, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"mean_ms\": %.4f, \"min_ms\": %.4f, "
                               "\"max_ms\": %.4f, \"hits\": %.2f, \"scored\": %.1f, \"filter_ms\": %.4f, \"score_ms\": %.4f, "
                               "\"select_ms\": %.4f, \"copy_ms\": %.4f, \"device_patterns\": %.1f, \"recent_patterns\": %.1f, "
                               "\"kept_p50_ms\": %.4f, \"kept_p99_ms\": %.4f, \"wrong_backend\": %u, \"lat_ms\": [",
                            tdm_seq_metric_name((tdm_seq_metric)x->metric), x->top_k ? "top_k" : "threshold",
                            x->top_k ? 0.0 : x->threshold, x->top_k, x->lat.n, x->lat.p50, x->lat.p99, x->lat.mean,
                            x->lat.min, x->lat.max, x->hits, x->scored, x->filter_ms, x->score_ms, x->select_ms,
                            x->copy_ms, x->device_patterns, x->recent_patterns, x->kept.p50, x->kept.p99, x->elsewhere);
                    for (uint32_t i = 0; i < x->lat.n; i++) fprintf(f, i ? ", %.4f" : "%.4f", x->lat_ms[i]);
                    fprintf(f, "]}%s\n", c + 1 < b->ncells ? "," : "");
                }
                fputs("       ]", f);
            }
            fprintf(f, "}%s\n", k + 1 < sr[s].nrows ? "," : "");
        }
        fprintf(f, "    ]}%s\n", s + 1 < nsr ? "," : "");
    }
    fprintf(f, "  ],\n  \"compared\": %u, \"mismatches\": %u\n}\n", compared, mism);
    if (fclose(f)) {
        perror(o->json);
        exit(1);
    }
}

/* ---- main ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (!o.threads) o.threads = cores > 0 ? cores : 1;
    tdm_ctx *ctx[2] = {NULL, NULL};
    for (int k = 0; k < o.nbackends; k++) ctx[o.backends[k]] = make_ctx(o.backends[k], o.threads);
    char cuda_why[256] = "", cuda_desc[160] = "";
    const tdm_backend *cb = NULL;
    if (ctx[BK_CUDA]) {
        cb = cuda_backend(ctx[BK_CUDA], cuda_why, sizeof cuda_why);
        if (cb) snprintf(cuda_desc, sizeof cuda_desc, "%s: %s", cb->name, cb->description);
    } else {
        snprintf(cuda_why, sizeof cuda_why, "not asked for (--backends)");
    }
    tdm_seq_engine_opts eo;
    tdm_seq_engine_opts_init(ctx[o.backends[0]], &eo);
    uint32_t maxn = o.sizes[o.nsizes - 1];
    printf("bench_seq_gpu: tandem %s, seed %llu, %u STMs, sizes", tdm_version(), (unsigned long long)o.seed, o.queries);
    for (int k = 0; k < o.nsizes; k++) printf(" %u", o.sizes[k]);
    printf(", backends");
    for (int k = 0; k < o.nbackends; k++) printf(" %s", BK_NAME[o.backends[k]]);
    printf(", %d online cores, %d CPU threads%s\n", cores, o.threads, o.quick ? " (quick)" : "");
    printf("cuda: %s\n", cb ? cuda_desc : cuda_why);
    printf("engine options: sync threshold %u, sync interval %g s (TANDEM_SEQ_SYNC_*)\n", eo.sync_threshold, eo.sync_interval_s);
    fflush(stdout);

    double t_start = now_s();
    patterns p;
    generate(o.seed, maxn, &p);
    printf("generated %u patterns (%llu symbols) in %.2f s\n", maxn, (unsigned long long)p.off[maxn], now_s() - t_start);
    size_t *stm_len;
    uint32_t **stm = make_stms(o.seed, o.queries, &p, o.sizes[0], &stm_len);
    double len_sum = 0;
    for (uint32_t i = 0; i < o.queries; i++) len_sum += (double)stm_len[i];

    static const double thr[] = {0.1, 0.5, 0.8, 0.0};
    srow *sr = calloc((size_t)o.nsizes, sizeof *sr);
    if (!sr) die("sizes", TDM_E_NOMEM);
    int failed = 0;
    for (int si = 0; si < o.nsizes; si++) {
        uint32_t n = o.sizes[si];
        srow *S = &sr[si];
        S->patterns = n, S->symbols = p.off[n];
        printf("\n== %u patterns\n", n);
        for (int k = 0; k < o.nbackends; k++) {
            brow *b = &S->rows[S->nrows++];
            b->kind = o.backends[k];
            b->available = b->kind == BK_CPU || cb;
            b->device = b->kind == BK_CPU ? "cpu" : cb ? cb->name : "";
            if (!b->available) {
                snprintf(b->reason, sizeof b->reason, "%s", cuda_why);
                printf("%s: unavailable (%s)\n", BK_NAME[b->kind], b->reason);
                continue;
            }
            build_engine(&o, ctx[b->kind], &p, n, b);
            if (!b->available) {
                printf("%s: unavailable (%s)\n", BK_NAME[b->kind], b->reason);
                tdm_seq_engine_free(b->engine);
                b->engine = NULL;
                continue;
            }
            printf("%s: store %.3f s, engine %.3f s (initial sync %.1f ms); %llu patterns on the device, %.1f device "
                   "bytes/pattern, %.1f MB reserved%s\n",
                   BK_NAME[b->kind], b->store_build_s, b->engine_build_s, b->initial_sync_ms,
                   (unsigned long long)b->device_patterns,
                   b->device_patterns ? (double)b->device_bytes / (double)b->device_patterns : 0.0,
                   (double)b->device_reserved_bytes / 1048576.0, b->device_full ? " (device full)" : "");
            const tdm_seq_vocab *v = tdm_seq_store_vocab_const(tdm_seq_engine_store(b->engine));
            b->stms = xmalloc(o.queries * sizeof *b->stms);
            int rc;
            for (uint32_t i = 0; i < o.queries; i++)
                if ((rc = tdm_seq_stm_from_ids(v, stm[i], stm_len[i], &b->stms[i]))) die("stm", rc);
            printf(cell_header, "patterns", "back", "metric", "mode", "n", "p50 ms", "p99 ms", "mean ms", "hits",
                   "filter", "score", "select", "copy", "kept p50");
            for (int mi = 0; mi < o.nmetrics; mi++)
                for (int ti = 0; ti < 4; ti++) {
                    cell *c = &b->cells[b->ncells++];
                    *c = (cell){.metric = o.metrics[mi], .threshold = thr[ti], .top_k = ti == 3 ? o.top_k : 0};
                    run_cell(&o, b, c);
                    print_cell(n, b, c);
                    fflush(stdout);
                    if (c->elsewhere) failed = 1;
                }
            run_batch(&o, b);
            printf("%s: batch of %u (lcs 0.5): %.1f queries/s (median of %d)\n", BK_NAME[b->kind], b->batch_n,
                   b->batch_qps, b->batch_reps);
            if (b->batch_elsewhere) failed = 1;
        }
        if (S->nrows == 2 && S->rows[0].available && S->rows[1].available && o.verify) {
            cross_check(&o, S, &S->rows[0], &S->rows[1]);
            printf("cross-check: %u queries compared, mismatches: %u\n", S->compared, S->mismatches);
            if (S->mismatches) failed = 1;
        }
        for (int k = 0; k < S->nrows; k++) {
            brow *b = &S->rows[k];
            if (!b->available) continue;
            run_learns(&o, b);
            printf("%s: learn p50 %.4f p99 %.4f ms; learn + visible p50 %.3f p99 %.3f ms (%u, %u not visible); sync of "
                   "%u patterns %.2f ms (engine %.2f ms)\n",
                   BK_NAME[b->kind], b->learn_ms.p50, b->learn_ms.p99, b->visible_ms.p50, b->visible_ms.p99,
                   b->visible_ms.n, b->visible_missing, b->sync_patterns, b->sync_ms, b->sync_engine_ms);
            if (b->visible_missing) failed = 1;
            for (uint32_t i = 0; i < o.queries; i++) tdm_seq_stm_clear(&b->stms[i]);
            free(b->stms);
            b->stms = NULL;
            tdm_seq_engine_free(b->engine);
            b->engine = NULL;
        }
        fflush(stdout);
    }

    /* The tables, once more, all sizes together. */
    printf("\nquery latency (one at a time), mean hits and the engine's time split (mean ms per query)\n");
    printf(cell_header, "patterns", "back", "metric", "mode", "n", "p50 ms", "p99 ms", "mean ms", "hits", "filter",
           "score", "select", "copy", "kept p50");
    for (int si = 0; si < o.nsizes; si++)
        for (int k = 0; k < sr[si].nrows; k++)
            for (int c = 0; c < sr[si].rows[k].ncells; c++) print_cell(sr[si].patterns, &sr[si].rows[k], &sr[si].rows[k].cells[c]);
    printf("\nbuild, batch, learn, sync and device memory\n");
    printf(sum_header, "patterns", "back", "store s", "engine s", "batch q/s", "learn p50", "p99 ms", "visible", "p99 ms",
           "sync/1000", "dev B/pat", "reserved MB");
    uint32_t compared = 0, mism = 0;
    int cuda_missing = 0;
    for (int si = 0; si < o.nsizes; si++) {
        for (int k = 0; k < sr[si].nrows; k++) {
            print_summary(sr[si].patterns, &sr[si].rows[k]);
            if (sr[si].rows[k].kind == BK_CUDA && !sr[si].rows[k].available) cuda_missing = 1;
        }
        compared += sr[si].compared, mism += sr[si].mismatches;
    }
    if (compared) printf("\nmismatches: %u (%u queries compared between cuda and cpu)\n", mism, compared);
    else printf("\nmismatches: not compared (cuda and cpu did not both run at any size)\n");
    if (o.json) write_json(&o, sr, o.nsizes, cuda_desc, cb ? "" : cuda_why, cores, len_sum / o.queries, &eo);
    printf("total %.1f s\n", now_s() - t_start);
    if (cuda_missing && o.require_gpu) {
        printf("bench_seq_gpu: the cuda backend did not run (--require-gpu)\n");
        failed = 1;
    }
    if (failed) printf("bench_seq_gpu: FAILED: see the lines marked above; these figures must not be recorded\n");

    for (int si = 0; si < o.nsizes; si++)
        for (int k = 0; k < sr[si].nrows; k++)
            for (int c = 0; c < sr[si].rows[k].ncells; c++) free(sr[si].rows[k].cells[c].lat_ms);
    free(sr);
    for (uint32_t i = 0; i < o.queries; i++) free(stm[i]);
    free(stm), free(stm_len), free(p.sym), free(p.off);
    for (int k = 0; k < 2; k++) tdm_destroy(ctx[k]);
    return failed ? 1 : 0;
}
